"""Implementations of the primitives on concrete Tensors (the NumPy + Cython backend).

Movement ops are View metadata over the same Buffer (no data moves); elementwise math,
reductions and matmul run NumPy's loops and BLAS on zero-copy ndarray views of our buffers;
gather/scatter, fold/unfold and threefry run the typed kernels of ``nx_rune._kernels``.
Operands arrive already checked and promoted by the front end (``nx_rune.frontend``): binary
primitives get equal shapes and dtypes.  ``IMPLS`` maps each primitive's name to its
implementation; ``nx_rune.primitives`` (the layer above) attaches them to the primitives.

One module per family, each registering its implementations into ``IMPLS`` when imported (the
parameters of each primitive are listed in its module's docstring):

  _core        IMPLS, the ``_impl`` decorator, the result wrappers, the warning filters
  memory       buffer handling: buffer, const_scalar, const_array, contiguous, copy, assign,
               and the checked in-place writes (check_writable, ufunc_into, assign_index)
  views        the view algebra: reshape, expand, permute, pad, shrink, flip, as_strided;
               add_window (shrink's adjoint added in place, for the backward pass)
  movement     roll, cat (the movements that need new memory)
  elementwise  unary ufuncs, tanh, expm1, real, imag, cast, sinc_taylor, stop_gradient
  binary       binary ufuncs, pow, idiv, mod, where, complex, the bit shifts
  reductions   reduce_sum, reduce_prod, reduce_max, argmax
  scans        associative_scan
  statistics   reduce_nanmax, reduce_nanmin, clip
  indexing     gather, scatter
  windows      unfold, fold
  random       threefry, threefry_bits, threefry_sample (nx.random's bits and samplers)
  random_rejection  random_gamma, random_poisson, random_binomial (JAX's rejection loops)
  sorting      sort, argsort, searchsorted
  fft          fft, rfft, irfft
  special      scipy.special's functions, the incomplete gamma and beta functions
  linalg       matmul, decompositions, solves, norms, LU, fused derivatives, matrix powers
  xla_math     xla_math, xla_pow (XLA:CPU's own exp, log, log1p, tan, rsqrt and pow, as JAX's)

Adding a primitive: its implementation goes into the module of its family (``@_impl(name)``),
its abstract-evaluation rule into the same-named module of ``nx_rune.compiler.abstract``.

This package is the backend layer: its modules may import NumPy, SciPy, ``nx_rune._kernels``,
``nx_rune.tensor``, ``nx_rune.writes`` and each other, never ``nx_rune.primitives`` or anything
above it (tests/test_layering.py).
"""
from nx_rune.backend import (  # noqa: F401
                             binary,
                             elementwise,
                             fft,
                             indexing,
                             linalg,
                             linalg_schur,
                             memory,
                             movement,
                             random,
                             random_rejection,
                             reductions,
                             scans,
                             sorting,
                             special,
                             statistics,
                             views,
                             windows,
                             xla_math,
)
from nx_rune.backend._core import IMPLS
from nx_rune.backend.linalg import (
                             cho_factor_values,
                             cho_solve_values,
                             cholesky_vjp_values,
                             eigh_values,
                             lu_inverse_t_values,
                             lu_sign_logabs,
                             norm2_values,
                             power_program,
                             qr_values,
                             svd_values,
                             tri_read_weights,
                             triangular_solve_values,
)
from nx_rune.backend.memory import assign_index, check_writable, ufunc_into

__all__ = ["IMPLS", "check_writable", "ufunc_into", "assign_index", "triangular_solve_values",
           "lu_sign_logabs", "norm2_values", "lu_inverse_t_values", "cholesky_vjp_values",
           "cho_solve_values", "cho_factor_values", "tri_read_weights", "power_program",
           "qr_values", "eigh_values", "svd_values"]
