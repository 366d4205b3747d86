"""Linear algebra: the Array API linalg extension, NumPy's ``norm`` and ``lstsq``, and SciPy's
``solve_triangular``, ``cho_factor``, ``cho_solve`` and ``expm`` (``nx.linalg``,
``nx.scipy.linalg``).

Decompositions and solves are primitives computed by LAPACK through NumPy/SciPy (``cholesky``,
``triangular_solve``, ``solve``, ``inv``, ``slogdet``, ``eigh``, ``eigvalsh``, ``svd``,
``svdvals``, ``qr``, ``pinv``, ``lstsq``), batched over leading axes; their derivative rules
(``nx_rune.autodiff.rules``) are written with front-end ops, so every function here is
differentiable to any order.  A primitive with several results returns them packed along one
last axis (see ``nx_rune.backend``); the functions here split that into views.  Real
determinants (``det``: sign * exp(logabsdet), as NumPy computes it; slogdet's two results) are
read from the LU factorization by one primitive per result (``lu_det``), and real ``cho_solve``
is one primitive (LAPACK potrs), so that each derivative is one rule; the 2-norms are the
``norm2`` primitive; ``matrix_power`` of a float or complex matrix is binary powering as one
primitive over a residual of its products (``matrix_power_parts``), which its derivative reuses.
The rest are compositions: ``matrix_power`` of integers repeated squaring, ``expm``
Pade approximation with scaling and squaring, complex ``det`` and ``cho_solve`` through slogdet
and two triangular solves, the other norms reductions or singular values.  On concrete values
the derivative rules of cholesky, solve_triangular, cho_solve, det/slogdet and the 2-norms
compute the cotangent with one fused primitive each (one call instead of a chain of ops);
traced values take the formulas, which are differentiable again.

Conventions:
- Matrices are the last two axes; leading (batch) axes broadcast between operands.
- Ints and bools compute in float (float32; float64 for 64-bit ints); float16 raises TypeError
  (LAPACK has no half precision).
- Failures raise NumPy's ``LinAlgError`` (``nx.linalg.LinAlgError``, a ValueError): a matrix
  that is not square, not positive definite (cholesky), singular (inv, solve,
  solve_triangular; det and slogdet return 0 and (0, -inf) as NumPy).  NaN inputs propagate.
- Symmetric inputs, as JAX: cholesky, eigh and eigvalsh factor (x + x^H) / 2 (their
  ``symmetrize_input``, default True), so that their derivatives are symmetric matrices and a
  gradient step keeps a symmetric input symmetric; for a symmetric x the values are NumPy's.
  ``cho_factor`` reads one triangle (SciPy's and JAX's values for any input) and returns the
  symmetric derivative too (that of the matrix the triangle stands for; JAX's cotangent has
  the same directional derivative along symmetric directions), and so does everything built
  on them (cho_solve of a cho_factor, ``multivariate_normal``).  With
  ``symmetrize_input=False`` cholesky, eigh and eigvalsh read one triangle (the lower one;
  the one ``UPLO`` names) and differentiate with respect to it (0 for the other triangle), as
  finite differences of that function see it; solve_triangular always does so for the
  triangle ``lower`` names.
- Right-hand sides (solve_triangular, cho_solve) follow SciPy: a 1-D b is one vector, any
  other b a stack of (n, k) matrices whose batch broadcasts with a's; a b that SciPy refuses
  but that is a stack of vectors (b.ndim == a.ndim - 1, b.shape[-1] == n) is read as JAX
  reads it.  ``solve`` follows NumPy 2 and the Array API (the same rule without the JAX
  reading).
- Every function works under jit and vmap (lstsq then returns the residuals of a tall a
  whatever its rank, as JAX; expm takes the degree-13 approximant with each matrix's own
  scaling).  det's derivative is the cofactor matrix, also at singular matrices (JAX's
  adjugate) when their values are known; under jit or vmap an exactly singular matrix
  still raises LinAlgError in det's derivative.
- Derivatives are implemented for real inputs.  Complex inputs work forward; differentiating
  cholesky, eigh, eigvalsh, svd, svdvals, qr, pinv, lstsq or slogdet of a complex matrix raises
  NotImplementedError (solve, inv and solve_triangular without conjugation are holomorphic
  and differentiate with the transpose convention).

The package, one module per family: ``_common`` (result types, checks, packed results, the
direct path), ``decompositions`` (decompositions and solves), ``matrix_functions``
(matrix_power, matrix_rank, the norms), ``scipy_linalg`` (cho_factor, cho_solve, expm) and
``array_api`` (the Array API's cross, outer, trace, diagonal).  Their names are imported here:
this package is the namespace the rest of nx_rune imports from.
"""
from __future__ import annotations

# the autodiff rules of matrix_power read the products' program from here
from nx_rune.backend import power_program
from nx_rune.frontend.linalg._common import (  # noqa: F401
    _DIRECT_DTYPES,
    _QUIET,
    _QUIET_VAR,
    EighResult,
    LinAlgError,
    LstsqResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    _abs,
    _batch_broadcast,
    _concrete,
    _direct,
    _direct_square,
    _eps,
    _inexact,
    _matrices,
    _matrix,
    _quiet,
    _real,
    eye_like,
    mT,
    real_dtype,
    unpack,
)
from nx_rune.frontend.linalg.array_api import (  # noqa: F401
    linalg_cross,
    linalg_diagonal,
    linalg_outer,
    linalg_trace,
)
from nx_rune.frontend.linalg.decompositions import (  # noqa: F401
    _TRANS,
    _broadcastable,
    _check_finite,
    _read_symmetric,
    _rhs,
    _rtol,
    _symmetrize,
    _symmetrize_values,
    _uplo,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
)
from nx_rune.frontend.linalg.matrix_functions import (  # noqa: F401
    _MATRIX_ORDS,
    _check_ord,
    _expand_axis,
    _matrix_norm_axes,
    _safe_sqrt,
    _two_norm,
    _vector_norm_axes,
    matrix_norm,
    matrix_power,
    matrix_rank,
    norm,
    vector_norm,
)
from nx_rune.frontend.linalg.scipy_linalg import (  # noqa: F401
    _THETA,
    _ArrayOps,
    _direct_cho_solve,
    _expm,
    _expm_traced,
    _pade,
    _pade_coefficients,
    _TensorOps,
    cho_factor,
    cho_solve,
    expm,
)

__all__ = ["LinAlgError", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
           "LstsqResult", "cholesky", "solve_triangular", "solve", "inv", "slogdet", "det",
           "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv", "lstsq", "matrix_power",
           "matrix_rank", "vector_norm", "matrix_norm", "norm", "expm", "cho_factor",
           "cho_solve", "linalg_cross", "linalg_outer", "linalg_trace", "linalg_diagonal"]
