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
compute the cotangent with one fused primitive each (WP-linalg-vjp); traced values take the
formulas, which are differentiable again.

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
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
import warnings
from typing import NamedTuple

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.frontend import arrangement, creation, elementwise, products, reductions
from nx_rune.frontend._core import (as_inexact, astype, broadcast_shapes, broadcast_to,
                                    operand, promote, reduction_axes)
from nx_rune.frontend.elementwise import add, exp, multiply, sqrt, subtract, where
from nx_rune.frontend.movement import reshape, shrink, swapaxes
from nx_rune.primitives import bind
from nx_rune import tensor as _tensor_module
from nx_rune.backend import (cho_factor_values, cho_solve_values, norm2_values,
                             power_program)
from nx_rune.tensor import DISPATCH, ArrayBase, Tensor, wrap_result
from nx_rune.typing import Array, ArrayLike, Axis, DTypeLike

__all__ = ["LinAlgError", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
           "LstsqResult", "cholesky", "solve_triangular", "solve", "inv", "slogdet", "det",
           "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv", "lstsq", "matrix_power",
           "matrix_rank", "vector_norm", "matrix_norm", "norm", "expm", "cho_factor",
           "cho_solve", "linalg_cross", "linalg_outer", "linalg_trace", "linalg_diagonal"]

LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    """``eigh``'s result: eigenvalues (..., n), ascending, and eigenvectors (..., n, n), one per
    column."""
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """``qr``'s result: Q with orthonormal columns and upper-triangular R."""
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: the sign (x's dtype) and log|det| (real dtype)."""
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    """``svd``'s result: U, the singular values S (descending, real) and Vh."""
    U: Array
    S: Array
    Vh: Array


class LstsqResult(NamedTuple):
    """``lstsq``'s result, as NumPy's: the solution, the residual sums of squares, the rank of
    a and a's singular values."""
    x: Array
    residuals: Array
    rank: Array
    s: Array


# -- helpers ---------------------------------------------------------------------------------

def _inexact(x, name):
    """``x`` as a float or complex tensor that LAPACK takes (float16 refused)."""
    x = operand(x)
    if x.dtype == dtypes.float16:
        raise TypeError(f"{name}: float16 is not supported in linear algebra (LAPACK has no half "
                        f"precision); convert to float32")
    return as_inexact(x)


def _matrix(x, name, square=False):
    """``x`` as a float stack of matrices (at least 2-D; square when asked)."""
    x = _inexact(x, name)
    if x.ndim < 2:
        raise LinAlgError(f"{name}: expected a matrix or a stack of matrices (at least 2-D), "
                          f"got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError(f"{name}: the last two dimensions must be square, got shape {x.shape}")
    return x


def _matrices(a, b, name_a, name_b):
    """Two operands promoted to one float dtype (``a`` a square stack)."""
    a = _matrix(a, name_a, square=True)
    b = _inexact(b, name_b)
    if a.dtype != b.dtype:
        a, b = promote(a, b)
    return a, b


def real_dtype(dt):
    """The real dtype of the same precision (float32 for complex64)."""
    return {np.dtype(np.complex64): dtypes.float32,
            np.dtype(np.complex128): dtypes.float64}.get(np.dtype(dt), np.dtype(dt))


def _real(x):
    """The real part of ``x`` (x itself when real)."""
    if not dtypes.is_complex(x.dtype):
        return x
    fn = getattr(elementwise, "real", None)
    if fn is not None:
        return fn(x)
    with warnings.catch_warnings():  # the imaginary part is dropped on purpose
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return astype(x, real_dtype(x.dtype))


def _abs(x):
    """|x| (the modulus for complex x), in x's real dtype."""
    if not dtypes.is_complex(x.dtype):
        return elementwise.abs(x)
    fn = getattr(elementwise, "real", None)
    if fn is not None and getattr(elementwise, "imag", None) is not None:
        re, im = fn(x), elementwise.imag(x)
    else:
        re, im = _real(x), _real(multiply(x, -1j))   # Im(x) = Re(-i x)
    return sqrt(add(multiply(re, re), multiply(im, im)))


def mT(x):
    """The transpose of each matrix of a stack (a view)."""
    return swapaxes(x, -1, -2)


def unpack(packed, shapes):
    """Split a primitive's packed result (results flattened along its last axis) into views of
    the leading axes followed by each of ``shapes``."""
    batch = packed.shape[:-1]
    whole = tuple((0, d) for d in batch)
    out, start = [], 0
    for shp in shapes:
        size = math.prod(shp)
        part = bind(P.shrink_p, packed, limits=whole + ((start, start + size),))
        out.append(bind(P.reshape_p, part, shape=batch + tuple(shp)))
        start += size
    return out


@functools.lru_cache(maxsize=64)
def eye_like(n, dtype):
    """The (n, n) identity in ``dtype`` (a constant, shared: tensors are immutable)."""
    return Tensor._wrap(np.eye(n, dtype=dtype))


def _batch_broadcast(a, b, a_core, b_core, name_a, name_b):
    """``a`` and ``b`` broadcast to one batch shape (their axes before the last a_core and
    b_core ones)."""
    ba, bb = a.shape[:a.ndim - a_core], b.shape[:b.ndim - b_core]
    if ba == bb:
        return a, b
    try:
        batch = broadcast_shapes(ba, bb)
    except ValueError:
        raise ValueError(f"{name_a}, {name_b}: batch dimensions of shapes {a.shape} and "
                         f"{b.shape} cannot be broadcast together") from None
    return (broadcast_to(a, batch + a.shape[a.ndim - a_core:]),
            broadcast_to(b, batch + b.shape[b.ndim - b_core:]))


def _concrete(x):
    """x's values as an ndarray, or None when they are not known (abstract tracing)."""
    t = x._concrete_tensor()
    return None if t is None else t._np()


def _eps(dt):
    return float(np.finfo(real_dtype(dt)).eps)


# -- the direct path -------------------------------------------------------------------------
# With no transformation active, nothing records a call on concrete Tensors, so a function
# whose work is one NumPy/SciPy call (det, slogdet, qr, eigh, svd, norms, matrix_power, the
# Cholesky solves) may make that call on the values and wrap its results, skipping the front
# end's checks, the primitive's packing and the unpacking views: on (64, 64) matrices those
# cost as much as the LAPACK call.  The values are those of the primitives (the same LAPACK
# routine on the same data; det is NumPy's, equal to sign * exp(logabsdet) to an ulp or two).
# Anything else (a tracer, an ndarray or a list, float16, ints, a shape the call would reject)
# takes the general path, which checks and raises as documented.

_DIRECT_DTYPES = "fdFD"           # float32, float64, complex64, complex128
_QUIET_VAR, _QUIET = _tensor_module._np_errstate_var, _tensor_module._NP_QUIET


def _direct(x):
    """x's ndarray when x is a concrete Tensor of a LAPACK dtype and no transformation is
    active (the direct path), else None."""
    if type(x) is Tensor and DISPATCH.get() is None:
        arr = x._np()
        if arr.dtype.char in _DIRECT_DTYPES:
            return arr
    return None


def _direct_square(x):
    """``_direct(x)`` when it is a stack of square matrices, else None."""
    arr = _direct(x)
    if arr is not None and arr.ndim >= 2 and arr.shape[-1] == arr.shape[-2]:
        return arr
    return None


def _quiet(fn, *args):
    """fn(*args) with NumPy's floating-point warnings off (a NaN input gives NaN, silently, as
    in the backend), through NumPy's error-state ContextVar (cheaper than np.errstate)."""
    if _QUIET_VAR is None:    # pragma: no cover (another NumPy layout)
        with np.errstate(all="ignore"):
            return fn(*args)
    token = _QUIET_VAR.set(_QUIET)
    try:
        return fn(*args)
    finally:
        _QUIET_VAR.reset(token)


# -- decompositions and solves --------------------------------------------------------------

def _symmetrize(x):
    """(x + x^H) / 2: the symmetric (Hermitian) part of each matrix of x."""
    return multiply(add(x, mT(products.conjugated(x))), 0.5)


def _symmetrize_values(arr):
    """``_symmetrize`` on an ndarray (the direct path)."""
    return (arr + np.conj(np.swapaxes(arr, -1, -2))) * 0.5


def _read_symmetric(x, lower):
    """The symmetric (Hermitian) matrix whose ``lower`` (else upper) triangle is x's, with the
    derivative of x's symmetric part: the value reads one triangle (SciPy's and JAX's
    ``cho_factor``), while a cotangent comes back symmetric, (S + S^H) / 2, as for a function
    of the symmetric matrix (a triangle's cotangent would leave a gradient step off the
    symmetric set).  Where x is symmetric the value is x's symmetric part exactly
    ((x + x) / 2 == x), elsewhere that part plus the constant difference to the triangle's
    matrix."""
    s = _symmetrize(x)
    v = _concrete(x)
    if v is not None and np.array_equal(v, np.conj(np.swapaxes(v, -1, -2))):
        return s        # symmetric values: s is x, exactly ((x + x) / 2 == x)
    if lower:
        t = add(creation.tril(x), mT(products.conjugated(creation.tril(x, -1))))
    else:
        t = add(creation.triu(x), mT(products.conjugated(creation.triu(x, 1))))
    return add(s, bind(P.stop_gradient_p, subtract(t, s)))


def cholesky(x: ArrayLike, /, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor of each symmetric (Hermitian) positive-definite matrix of x (..., n,
    n): lower-triangular L with x = L L^H, or with ``upper`` upper-triangular U = L^H with
    x = U^H U.  Same shape, float dtype.

    As JAX's: with ``symmetrize_input`` (default) the factor is that of (x + x^H) / 2, so that
    the derivative is symmetric (a gradient step keeps a symmetric x symmetric); for a
    symmetric x this is NumPy's value.  ``symmetrize_input=False`` reads only x's lower
    triangle (NumPy's value for any x) and differentiates with respect to it (the derivative
    with respect to the upper triangle is 0).

    Raises LinAlgError when a matrix is not positive definite (NumPy's convention; JAX would
    return NaNs).  Derivative: Murray (2016).
    """
    arr = _direct_square(x)
    if arr is not None and arr.dtype.char in "fd":     # the primitive's routines straight away
        lo = cho_factor_values(_symmetrize_values(arr) if symmetrize_input else arr, True)
        return wrap_result(np.swapaxes(lo, -1, -2) if upper else lo)
    a = _matrix(x, "x", square=True)
    if symmetrize_input:
        a = _symmetrize(a)
    lo = bind(P.cholesky_p, a)
    return mT(products.conjugated(lo)) if upper else lo


_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2, "n": 0, "t": 1, "c": 2}


def _check_finite(x, name):
    v = _concrete(x)
    if v is not None and not np.isfinite(v).all():
        raise ValueError(f"{name}: array must not contain infs or NaNs (check_finite=True)")


def _broadcastable(s1, s2):
    try:
        broadcast_shapes(s1, s2)
    except ValueError:
        return False
    return True


def _rhs(a, b, name_a, name_b):
    """The right-hand side b as a stack of (n, k) matrices broadcast against a's batch, by
    SciPy's rule: a 1-D b is one vector, any other b a stack of (n, k) matrices whose batch
    axes broadcast with a's (a (2, n, n) with b (n, k) solves both matrices for the same k
    columns).  Where SciPy's reading fails and b.ndim == a.ndim - 1 with b.shape[-1] == n, b
    is a stack of vectors (JAX's reading of such a b, which SciPy refuses).  Returns (a, b
    matrices, whether b was vectors)."""
    n = a.shape[-1]
    if b.ndim == 0:
        raise ValueError(f"{name_b}: expected at least 1 dimension, got a 0-d tensor")
    vec = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape[-1] == n
                          and not (b.shape[-2] == n and _broadcastable(a.shape[:-2],
                                                                       b.shape[:-2])))
    if vec:
        if b.shape[-1] != n:
            raise ValueError(f"{name_b}: a vector of length {b.shape[-1]} does not match "
                             f"{name_a}'s shape {a.shape}")
        b = reshape(b, b.shape + (1,))
    elif b.shape[-2] != n:
        raise ValueError(f"{name_b}: {b.shape[-2]} rows (shape {b.shape}) do not match "
                         f"{name_a}'s shape {a.shape}")
    a, b = _batch_broadcast(a, b, 2, 2, name_a, name_b)
    return a, b, vec


def solve_triangular(a: ArrayLike, b: ArrayLike, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Array:
    """x solving ``op(a) x = b`` for triangular a (..., n, n), SciPy's argument order:
    ``trans`` 0/'N' (op(a) = a), 1/'T' (a^T) or 2/'C' (a^H); ``lower`` picks the triangle of a
    that is read (the other is ignored); ``unit_diagonal`` takes a's diagonal as ones.

    b: a vector (n,), else (..., n, k) matrices whose batch axes broadcast with a's
    (SciPy's rule); a b of shape (..., n) with b.ndim == a.ndim - 1 that has no n rows is a
    stack of vectors (JAX's reading).  Result: b's shape (broadcast), promoted float dtype.
    ``check_finite`` raises ValueError for infs/NaNs (as SciPy; False lets them propagate);
    ``overwrite_b`` is accepted and ignored (tensors are immutable).  A zero on the diagonal
    raises LinAlgError (singular matrix).
    """
    if trans not in _TRANS:
        raise ValueError(f"trans: must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    t = _TRANS[trans]
    a, b = _matrices(a, b, "a", "b")
    if check_finite:
        _check_finite(a, "a")
        _check_finite(b, "b")
    a2, b2, vec = _rhs(a, b, "a", "b")
    if t == 2 and not dtypes.is_complex(a2.dtype):
        t = 1
    x = bind(P.triangular_solve_p, a2, b2, lower=bool(lower), trans=t,
             unit_diagonal=bool(unit_diagonal))
    return reshape(x, x.shape[:-1]) if vec else x


def solve(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """x solving x1 x = x2 for square x1 (..., n, n).  x2: (n,) a vector (result (..., n)),
    otherwise (..., n, k) matrices (result (..., n, k)); batch axes broadcast (the Array API's
    rule, NumPy 2's).  Promoted float dtype.  A singular matrix raises LinAlgError."""
    a, b = _matrices(x1, x2, "x1", "x2")
    n = a.shape[-1]
    if b.ndim == 0:
        raise ValueError("x2: expected at least 1 dimension, got a 0-d tensor")
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ValueError(f"x2: a vector of length {b.shape[0]} does not match x1's shape "
                             f"{a.shape}")
        bm = broadcast_to(reshape(b, (n, 1)), a.shape[:-2] + (n, 1))
        x = bind(P.solve_p, a, bm)
        return reshape(x, x.shape[:-1])
    if b.shape[-2] != n:
        raise ValueError(f"x2: {b.shape[-2]} rows do not match x1's shape {a.shape}")
    a, b = _batch_broadcast(a, b, 2, 2, "x1", "x2")
    return bind(P.solve_p, a, b)


def inv(x: ArrayLike, /) -> Array:
    """The inverse of each square matrix of x (..., n, n); same shape, float dtype.  A
    singular matrix raises LinAlgError."""
    return bind(P.inv_p, _matrix(x, "x", square=True))


def slogdet(x: ArrayLike, /) -> SlogdetResult:
    """(sign, logabsdet) of the determinant of each square matrix of x (..., n, n): the sign
    (x's dtype; a unit complex number for complex x, 0 for a singular matrix) and log|det| (the
    real dtype; -inf for a singular matrix), both of shape x.shape[:-2].  The derivative of
    logabsdet is inv(x)^T (a singular matrix raises LinAlgError there); the sign's is 0."""
    arr = _direct_square(x)
    if arr is not None:
        sign, logabs = _quiet(np.linalg.slogdet, arr)
        return SlogdetResult(wrap_result(sign), wrap_result(logabs))
    a = _matrix(x, "x", square=True)
    # the LU factorization is an operand, so that the derivative reuses it (lu_inverse)
    lu = bind(P.lu_factor_p, a)
    if not dtypes.is_complex(a.dtype):
        # one primitive per result, so that log|det|'s derivative is one rule (WP-linalg-vjp)
        return SlogdetResult(bind(P.lu_det_p, a, lu, part="sign"),
                             bind(P.lu_det_p, a, lu, part="logabsdet"))
    sign, logabs = unpack(bind(P.slogdet_p, a, lu), [(), ()])
    return SlogdetResult(sign, _real(logabs))


def det(x: ArrayLike, /) -> Array:
    """The determinant of each square matrix of x (..., n, n): shape x.shape[:-2], float dtype.
    Computed as NumPy does, sign * exp(logabsdet) from the LU factorization (the same values
    to an ulp or two: NumPy's scalar exp against the exp ufunc); its derivative
    det * inv(x)^T needs an invertible real x (a singular one raises LinAlgError, a complex
    one NotImplementedError, through slogdet)."""
    arr = _direct_square(x)
    if arr is not None:      # NumPy's det: the same LU, the product of the pivots
        return wrap_result(_quiet(np.linalg.det, arr))
    a = _matrix(x, "x", square=True)
    if not dtypes.is_complex(a.dtype):      # sign * exp(logabsdet) as one primitive
        return bind(P.lu_det_p, a, bind(P.lu_factor_p, a), part="det")
    sign, logabs = slogdet(a)
    return multiply(sign, exp(logabs))


def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"UPLO: must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


def eigh(x: ArrayLike, /, UPLO: str = "L", *, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending, real dtype, (..., n)) and orthonormal eigenvectors (columns,
    x's dtype, (..., n, n)) of each symmetric (Hermitian) matrix of x.

    As JAX's: with ``symmetrize_input`` (default) those of (x + x^H) / 2, whose derivative
    is symmetric (a gradient step keeps a symmetric x symmetric); for a symmetric x these
    are NumPy's values.  ``symmetrize_input=False`` reads only the triangle ``UPLO`` names
    ('L' lower, NumPy's default; NumPy's values for any x) and differentiates with respect to
    it (0 for the other triangle).

    Derivatives follow Giles (2008).  At exactly repeated eigenvalues the eigenvectors are not
    unique and have no derivative: derivatives through them are inf/NaN there (as JAX's),
    while first derivatives of functions of the eigenvalues alone stay finite and right (the
    unused eigenvector part contributes nothing, as a symbolic zero in JAX).
    """
    lower = _uplo(UPLO)
    arr = _direct_square(x)
    if arr is not None:
        if symmetrize_input:
            arr = _symmetrize_values(arr)
        w, v = np.linalg.eigh(arr, UPLO=UPLO)
        return EighResult(wrap_result(w), wrap_result(v))
    a = _matrix(x, "x", square=True)
    if symmetrize_input:
        a = _symmetrize(a)
    n = a.shape[-1]
    w, v = unpack(bind(P.eigh_p, a, lower=lower), [(n,), (n, n)])
    return EighResult(_real(w), v)


def eigvalsh(x: ArrayLike, /, UPLO: str = "L", *, symmetrize_input: bool = True) -> Array:
    """The eigenvalues (ascending, real dtype, (..., n)) of each symmetric (Hermitian) matrix
    of x: those of (x + x^H) / 2 with ``symmetrize_input`` (default, JAX's; a symmetric
    derivative), else of the matrix read from the triangle ``UPLO`` names (as ``eigh``).
    Cheaper than ``eigh`` (no eigenvectors), except under a transformation, where it computes
    them once for the derivative."""
    lower = _uplo(UPLO)
    a = _matrix(x, "x", square=True)
    if symmetrize_input:
        a = _symmetrize(a)
    if type(a) is not Tensor:
        # traced: the eigenvectors that the derivative needs come with the eigenvalues
        return eigh(a, UPLO, symmetrize_input=False).eigenvalues
    return bind(P.eigvalsh_p, a, lower=lower)


def svd(x: ArrayLike, /, full_matrices: bool = True, compute_uv: bool = True) -> SVDResult | Array:
    """Singular value decomposition x = U diag(S) Vh of each (m, n) matrix of x (..., m, n),
    k = min(m, n): U (..., m, m) and Vh (..., n, n) with ``full_matrices``, else (..., m, k)
    and (..., k, n); S (..., k) descending, real dtype.  ``compute_uv=False`` returns S only.

    Derivatives need ``full_matrices=False`` unless m == n (the extra columns are not unique:
    NotImplementedError, as JAX).  As with ``eigh``, derivatives through U and Vh are inf/NaN
    at exactly repeated singular values (and, for U with m > n or Vh with n > m, at a zero
    one), while those of functions of S alone stay finite.
    """
    arr = _direct(x)
    if arr is not None and compute_uv and arr.ndim >= 2:
        u, s, vh = np.linalg.svd(arr, full_matrices=bool(full_matrices))
        return SVDResult(wrap_result(u), wrap_result(s), wrap_result(vh))
    a = _matrix(x, "x")
    if not compute_uv:
        return svdvals(a)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    full = bool(full_matrices)
    mu, nv = (m, n) if full else (k, k)
    u, s, vh = unpack(bind(P.svd_p, a, full_matrices=full), [(m, mu), (k,), (nv, n)])
    return SVDResult(u, _real(s), vh)


def svdvals(x: ArrayLike, /) -> Array:
    """The singular values (descending, real dtype, (..., min(m, n))) of each matrix of x.
    Under a transformation the singular vectors that the derivative needs are computed with
    them (``svd``), else not."""
    a = _matrix(x, "x")
    if type(a) is not Tensor:
        return svd(a, full_matrices=False).S
    return bind(P.svdvals_p, a)


def qr(x: ArrayLike, /, *, mode: str = "reduced") -> QRResult:
    """QR decomposition x = Q R of each (m, n) matrix of x, k = min(m, n): ``mode='reduced'``
    Q (..., m, k), R (..., k, n); ``'complete'`` Q (..., m, m), R (..., m, n).  x's dtype.

    Derivatives: any m, n with 'reduced' (R's leading k x k block must be invertible);
    'complete' with m > n raises NotImplementedError (Q's extra columns are not unique).
    """
    if mode not in ("reduced", "complete"):
        raise ValueError(f"mode: must be 'reduced' or 'complete', got {mode!r}")
    arr = _direct(x)
    if arr is not None and arr.ndim >= 2:
        q, r = np.linalg.qr(arr, mode=mode)
        return QRResult(wrap_result(q), wrap_result(r))
    a = _matrix(x, "x")
    m, n = a.shape[-2:]
    k = m if mode == "complete" else builtins.min(m, n)
    q, r = unpack(bind(P.qr_p, a, mode=mode), [(m, k), (k, n)])
    return QRResult(q, r)


def _rtol(rtol, a):
    if rtol is None:
        return builtins.max(a.shape[-2:]) * _eps(a.dtype)
    if isinstance(rtol, ArrayBase):
        v = _concrete(rtol)
        if v is None:
            raise TypeError("rtol: must have a known value (a constant), not an abstract tracer")
        rtol = v
    if isinstance(rtol, np.ndarray) and rtol.ndim == 0:
        rtol = rtol.item()
    if isinstance(rtol, (int, float, np.floating, np.integer)):
        return float(rtol)
    arr = np.asarray(rtol, dtype=np.float64)
    try:
        np.broadcast_shapes(arr.shape, a.shape[:-2])
    except ValueError:
        raise ValueError(f"rtol: shape {arr.shape} does not broadcast against the batch shape "
                         f"{a.shape[:-2]}") from None
    return arr


def pinv(x: ArrayLike, /, *, rtol: float | ArrayLike | None = None) -> Array:
    """The Moore-Penrose pseudo-inverse of each (m, n) matrix of x: (..., n, m), float dtype.
    Singular values <= rtol * (largest one) count as zero; ``rtol`` defaults to
    max(m, n) * eps (the Array API's default) and may be an array broadcast against the batch
    (a constant: no derivative flows to it).

    Derivative: Golub & Pereyra (1973), exact where the rank is locally constant (full-rank
    matrices; a rank-deficient one when rtol cuts the singular values that a perturbation
    creates); finite differences of pinv itself jump where the rank changes.
    """
    a = _matrix(x, "x")
    return bind(P.pinv_p, a, rtol=_rtol(rtol, a))


def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None) -> LstsqResult:
    """Least-squares solution of a x = b as NumPy's ``lstsq`` (LAPACK gelsd): a (m, n), b (m,)
    or (m, k).  Returns (x (n,) or (n, k), residuals, rank, s): the residual sums of squares
    per column ((k,) or (1,)) when rank == n < m, else an empty (0,) array; the rank (a 0-d
    int32 tensor) and a's singular values s (min(m, n),).  Singular values <= rcond * s[0]
    count as zero (rcond defaults to eps * max(m, n), NumPy's default).

    Differentiable in a and b (x as pinv(a) @ b, with pinv's derivative; s as svdvals').
    Under jit and vmap, where the rank is not known while tracing, a tall a (m > n) always
    gets its residuals (their shape cannot depend on the values; JAX's choice).
    """
    a = _matrix(a, "a")
    if a.ndim != 2:
        raise LinAlgError(f"a: lstsq needs a 2-D matrix, got shape {a.shape}")
    b = _inexact(b, "b")
    if a.dtype != b.dtype:
        a, b = promote(a, b)
    m, n = a.shape
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise ValueError(f"b: expected shape ({m},) or ({m}, k) to match a's {a.shape}, got "
                         f"{b.shape}")
    rc = builtins.max(m, n) * _eps(a.dtype) if rcond is None else float(rcond)
    b2 = reshape(b, (m, 1)) if b.ndim == 1 else b
    k = b2.shape[1]
    x, s = unpack(bind(P.lstsq_p, a, b2, rcond=rc), [(n, k), (builtins.min(m, n),)])
    s = _real(s)
    sv = _concrete(s)
    if sv is not None:      # an integer: no derivative, counted on the values
        rank = Tensor._wrap(np.asarray(np.count_nonzero(sv > rc * sv[0]) if sv.size else 0,
                                       np.int32))
    elif s.shape[0]:
        rank = reductions.sum(elementwise.greater(s, multiply(shrink(s, ((0, 1),)), rc)))
    else:
        rank = astype(0, dtypes.int32)
    rank_known = _concrete(rank)
    # NumPy returns residuals only for a full-rank tall a; where the rank is not known (jit,
    # vmap) their shape cannot depend on it, and they are returned whenever a is tall (JAX
    # returns them always, for the same reason)
    if m > n and (rank_known is None or int(rank_known) == n):
        r = subtract(b2, products.matmul(a, x))
        residuals = reductions.sum(multiply(_abs(r), _abs(r)), 0)
    else:
        residuals = Tensor._wrap(np.zeros((0,), real_dtype(a.dtype)))
    if b.ndim == 1:
        x = reshape(x, (n,))
    return LstsqResult(x, residuals, astype(rank, dtypes.int32), s)


# -- functions of matrices -------------------------------------------------------------------

def matrix_power(x: ArrayLike, n: int, /) -> Array:
    """x multiplied by itself n times, for each square matrix of x (..., m, m): n = 0 gives
    identities, n < 0 powers of inv(x) (LinAlgError when singular).  Binary powering (as
    NumPy's).  Same shape; x's dtype (float for n < 0)."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n: the exponent must be an integer, got {n!r}") from None
    arr = _direct_square(x)
    if arr is not None:      # the same binary powering (and inv for n < 0) as below
        return wrap_result(np.linalg.matrix_power(arr, n))
    a = operand(x)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"x: expected a stack of square matrices, got shape {a.shape}")
    if n == 0:
        return broadcast_to(eye_like(a.shape[-1], a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    if n == 1:
        return a
    if dtypes.is_inexact(a.dtype):
        # the products as one residual, so that the derivative is one rule (WP-linalg-vjp)
        parts = bind(P.matrix_power_parts_p, a, n=n)
        return bind(P.matrix_power_p, a, parts, n=n)
    if n == 2:
        return products.matmul(a, a)
    if n == 3:
        return products.matmul(products.matmul(a, a), a)
    result, z = None, None
    while n:
        z = a if z is None else products.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else products.matmul(result, z)
    return result


def matrix_rank(x: ArrayLike, /, tol: float | ArrayLike | None = None, *,
                rtol: float | ArrayLike | None = None) -> Array:
    """The number of singular values of each matrix of x (..., m, n) above the tolerance: tol
    (absolute) when given, else rtol * (largest singular value), rtol defaulting to
    max(m, n) * eps.  An int32 tensor of shape x.shape[:-2]; a 0-d or 1-D x gives 1 unless it
    is all zeros (as NumPy).  Not differentiable (an integer)."""
    a = _inexact(x, "x")
    if a.ndim < 2:
        return astype(reductions.any(elementwise.not_equal(a, 0)), dtypes.int32)
    s = svdvals(a)
    sv = _concrete(s)
    if sv is not None:      # an integer: no derivative, counted on the values
        if tol is None:
            r = _rtol(rtol, a)
            cut = (sv.max(-1, initial=0.0) * np.asarray(r))[..., None]
        else:
            cut = np.asarray(_concrete(operand(tol)))[..., None]
        return Tensor._wrap(np.asarray(np.count_nonzero(sv > cut, -1), np.int32, order="C"))
    if tol is None:
        r = _rtol(rtol, a)
        smax = reductions.max(s, -1, keepdims=True) if s.shape[-1] else s
        cut = multiply(smax, reshape(operand(r), np.shape(r) + (1,)) if np.ndim(r) else r)
    else:
        t = operand(tol)
        cut = reshape(t, t.shape + (1,))
    return astype(reductions.sum(elementwise.greater(s, cut), -1), dtypes.int32)


def _check_ord(ord, allowed, name):
    if ord not in allowed:
        raise ValueError(f"ord: invalid order {ord!r} for {name}; expected one of "
                         f"{sorted(allowed, key=str)}")


def _safe_sqrt(s):
    """sqrt(s) for sums of squares s >= 0 whose derivative at 0 is 0 (a subgradient of the
    2-norm at the origin) instead of inf * 0 = nan."""
    if type(s) is Tensor:
        return sqrt(s)
    v = _concrete(s)
    if v is None:
        # values unknown (jit, vmap): the same double where, on the traced comparison
        zero = elementwise.equal(s, 0)
    elif not (v == 0).any():
        return sqrt(s)
    else:
        zero = Tensor._wrap(np.asarray(v == 0, order="C"))   # (0-d stays 0-d)
    return where(zero, 0, sqrt(where(zero, 1, s)))


def _two_norm(x, axes, keepdims):
    """sqrt(sum |x|^2) over ``axes``: for real x the ``norm2`` primitive (BLAS dot products;
    its derivative x / norm is one product, 0 at the origin)."""
    if not dtypes.is_complex(x.dtype):
        return bind(P.norm2_p, x, axes=tuple(sorted(axes)), keepdims=keepdims)
    # |x|**2 as re**2 + im**2, not the square of |x|: |x|'s derivative at 0 is nan, which
    # the safe square root's 0 could not mask
    re, im = elementwise.real(x), elementwise.imag(x)
    return _safe_sqrt(reductions.sum(add(multiply(re, re), multiply(im, im)), axes, keepdims))


def _vector_norm_axes(x, axes, keepdims, ord):
    if ord == 2:
        return _two_norm(x, axes, keepdims)
    m = _abs(x)
    if ord == math.inf:
        return reductions.max(m, axes, keepdims)
    if ord == -math.inf:
        return reductions.min(m, axes, keepdims)
    if ord == 0:
        return astype(reductions.sum(elementwise.not_equal(m, 0), axes, keepdims), m.dtype)
    if ord == 1:
        return reductions.sum(m, axes, keepdims)
    p = float(ord)
    return elementwise.power(reductions.sum(elementwise.power(m, p), axes, keepdims), 1.0 / p)


def vector_norm(x: ArrayLike, /, *, axis: Axis = None, keepdims: bool = False,
                ord: int | float = 2) -> Array:
    """Vector norms over ``axis`` (None: all of x, flattened; an int or a tuple): ord 2
    (default, Euclidean), 1, inf (max ``|x|``), -inf (min ``|x|``), 0 (count of nonzeros), any other p
    (``(sum |x|^p)^(1/p)``).  Shape: x's without the reduced axes (kept as 1 with ``keepdims``);
    real float dtype.  The 2-norm's derivative at x = 0 is 0 (a subgradient) rather than NaN.
    """
    if axis is None and type(ord) in (int, float) and ord == 2:
        arr = _direct(x)
        if arr is not None and arr.dtype.char in "fd":
            return wrap_result(norm2_values(arr, tuple(range(arr.ndim)), bool(keepdims)))
    x = _inexact(x, "x")
    if isinstance(ord, (bool, str)) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise ValueError(f"ord: expected a number, got {ord!r}")
    axes = reduction_axes(x, axis)
    return _vector_norm_axes(x, axes, bool(keepdims), float(ord))


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False,
                ord: int | float | str = "fro") -> Array:
    """Matrix norms of each matrix of x (..., m, n): 'fro' (default, Frobenius), 'nuc' (sum of
    singular values), 2 / -2 (largest / smallest singular value), 1 / -1 (max / min column sum
    of |x|), inf / -inf (max / min row sum).  Shape x.shape[:-2] ((..., 1, 1) with
    ``keepdims``); real float dtype."""
    if ord == "fro":
        arr = _direct(x)
        if arr is not None and arr.dtype.char in "fd" and arr.ndim >= 2:
            nd = arr.ndim
            return wrap_result(norm2_values(arr, (nd - 2, nd - 1), bool(keepdims)))
    x = _matrix(x, "x")
    return _matrix_norm_axes(x, (x.ndim - 2, x.ndim - 1), bool(keepdims), ord)


_MATRIX_ORDS = {"fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf}


def _matrix_norm_axes(x, axes, keepdims, ord):
    """A matrix norm over the two ``axes`` (row axis, column axis) of x."""
    _check_ord(ord, _MATRIX_ORDS, "matrices")
    r, c = axes
    if ord == "fro":
        return _two_norm(x, tuple(sorted(axes)), keepdims)
    if ord in ("nuc", 2, -2):
        mat = arrangement.permute_dims(x, [i for i in range(x.ndim) if i not in axes] + [r, c])
        s = svdvals(mat)
        out = reductions.sum(s, -1) if ord == "nuc" else \
            reductions.max(s, -1) if ord == 2 else reductions.min(s, -1)
        if keepdims:
            for ax in sorted(axes):
                out = _expand_axis(out, ax)
        return out
    m = _abs(x)
    if ord in (1, -1):     # over columns: sums down each column (along the row axis)
        inner, outer = r, c
    else:
        inner, outer = c, r
    sums = reductions.sum(m, inner, keepdims=True)
    red = reductions.max if ord in (1, math.inf) else reductions.min
    out = red(sums, outer, keepdims=True)
    if not keepdims:
        out = reshape(out, tuple(d for i, d in enumerate(out.shape) if i not in axes))
    return out


def _expand_axis(x, axis):
    """x with a new axis of size 1 at ``axis``."""
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


def norm(x: ArrayLike, ord: int | float | str | None = None, axis: Axis = None,
         keepdims: bool = False) -> Array:
    """NumPy's ``linalg.norm``: with ``axis`` None, the 2-norm of the flattened x when ord is
    None, else the vector norm of a 1-D x or the matrix norm of a 2-D x; an int axis gives
    vector norms along it, a pair of axes matrix norms over them.  Orders as ``vector_norm``
    and ``matrix_norm`` (None is 2 for vectors, 'fro' for matrices).  Real float dtype."""
    if ord is None and axis is None:
        arr = _direct(x)
        if arr is not None and arr.dtype.char in "fd":
            if arr.dtype.char == "d" and not keepdims:
                # norm2_values' dot product with a scalar square root (WP-linalg-vjp: NumPy's
                # own norm is this call; the ufunc and the generic wrapping cost a third more)
                flat = arr.reshape(-1)
                return Tensor._wrap(np.asarray(math.sqrt(flat.dot(flat))))
            return wrap_result(norm2_values(arr, tuple(range(arr.ndim)), bool(keepdims)))
    x = _inexact(x, "x")
    if axis is None:
        if ord is None:
            axes = tuple(range(x.ndim))
            out = _two_norm(x, axes, keepdims)
            return out if not keepdims else reshape(out, (1,) * x.ndim)
        if x.ndim == 1:
            axes = (0,)
        elif x.ndim == 2:
            axes = (0, 1)
        else:
            raise ValueError(f"ord: needs axis for a {x.ndim}-D x (only 1-D and 2-D inputs have "
                             f"a default norm of order {ord!r})")
    elif isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, x.ndim, "axis") for a in axis)
    else:
        axes = (normalize_axis(axis, x.ndim, "axis"),)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"ord: invalid norm order {ord!r} for vectors")
        return _vector_norm_axes(x, axes, bool(keepdims), 2.0 if ord is None else float(ord))
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError(f"axis: duplicate axes given: {axis!r}")
        return _matrix_norm_axes(x, axes, bool(keepdims), "fro" if ord is None else ord)
    raise ValueError(f"axis: expected an int or a pair of ints, got {axis!r}")


# -- SciPy's functions ----------------------------------------------------------------------

def cho_factor(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    """(c, lower) for ``cho_solve``: c the Cholesky factor of each symmetric positive-definite
    matrix of a (..., n, n), lower-triangular (a = c c^H, read from a's lower triangle) with
    ``lower``, else upper-triangular (a = c^H c, read from a's upper triangle, SciPy's
    default).  The other triangle of c is zero (SciPy leaves the input's values there).
    LinAlgError when not positive definite; ``check_finite`` as in ``solve_triangular``.

    The derivative with respect to a is symmetric, that of the symmetric matrix the triangle
    stands for (as ``cholesky``'s with its default ``symmetrize_input``), so that a gradient
    step keeps a symmetric a symmetric."""
    arr = _direct_square(a)
    if arr is not None and arr.dtype.char in "fd":     # the primitive's routines straight away
        if check_finite and not np.isfinite(arr).all():
            _check_finite(a, "a")
        # (upper factors come Fortran-ordered, as SciPy's: wrapped as they are, no copy)
        return Tensor._wrap(cho_factor_values(arr, bool(lower))), bool(lower)
    x = _matrix(a, "a", square=True)
    if check_finite:
        _check_finite(x, "a")
    # the matrix read from the triangle, with a symmetric derivative (JAX's cotangents are
    # symmetric too along symmetric directions, which is all a symmetric matrix can move in)
    lo = bind(P.cholesky_p, _read_symmetric(x, bool(lower)))
    if lower:
        return lo, True
    return mT(products.conjugated(lo)), False


def cho_solve(c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """x solving a x = b from ``(c, lower) = cho_factor(a)`` (LAPACK potrs; two triangular
    solves for complex c), reading only c's triangle ``lower`` names.  b as in
    ``solve_triangular`` (a vector (n,), else (..., n, k) matrices, batches broadcast);
    result b's (broadcast) shape, promoted float dtype."""
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError("c_and_lower: expected a pair (c, lower) as cho_factor returns") from None
    x = _direct_cho_solve(c, b, bool(lower), check_finite)
    if x is not None:
        return x
    cm, bm = _matrices(c, b, "c", "b")
    if not dtypes.is_complex(cm.dtype):
        # one primitive (LAPACK potrs), whose derivative is one rule (WP-linalg-vjp)
        if check_finite:
            _check_finite(cm, "c")
            _check_finite(bm, "b")
        c2, b2, vec = _rhs(cm, bm, "c", "b")
        x = bind(P.cho_solve_p, c2, b2, lower=bool(lower))
        return reshape(x, x.shape[:-1]) if vec else x
    if lower:
        y = solve_triangular(c, b, 0, True, check_finite=check_finite)
        return solve_triangular(c, y, 2, True, check_finite=False)
    y = solve_triangular(c, b, 2, False, check_finite=check_finite)
    return solve_triangular(c, y, 0, False, check_finite=False)


def _direct_cho_solve(c, b, lower, check_finite):
    """cho_solve on the direct path (real c and b of one dtype and matching batch shapes),
    else None."""
    carr, barr = _direct_square(c), _direct(b)
    if carr is None or barr is None or carr.dtype != barr.dtype or carr.dtype.char not in "fd":
        return None
    n = carr.shape[-1]
    # (a b that ``_rhs`` could read either way takes the general path, which decides)
    vec = barr.ndim == 1 or (barr.ndim == carr.ndim - 1 and barr.shape[-2] != n)
    if vec:
        if barr.shape != carr.shape[:-1]:
            return None
        barr = barr[..., None]
    elif barr.ndim != carr.ndim or barr.shape[:-2] != carr.shape[:-2] or barr.shape[-2] != n:
        return None
    if check_finite and not (np.isfinite(carr).all() and np.isfinite(barr).all()):
        return None      # the general path raises, naming the argument
    x = cho_solve_values(carr, barr, lower)      # LAPACK potrs: both solves in one call
    return wrap_result(x[..., 0] if vec else x)


# Pade approximation of exp by scaling and squaring: Higham (2005), "The scaling and squaring
# method for the matrix exponential revisited", SIAM J. Matrix Anal. Appl. 26(4): the degree m
# in (3, 5, 7, 9, 13) is the smallest whose theta_m bounds ||A||_1 (double precision values,
# Table 2.3), else A is scaled by 2^-s to theta_13 and the result squared s times.
_THETA = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
          (9, 2.097847961257068e0), (13, 5.371920351148152e0))


@functools.lru_cache(maxsize=None)
def _pade_coefficients(m):
    """Coefficients c_j = (2m - j)! m! / ((2m)! j! (m - j)!) of the [m/m] Pade numerator."""
    f = math.factorial
    return tuple(f(2 * m - j) * f(m) / (f(2 * m) * f(j) * f(m - j)) for j in range(m + 1))


class _TensorOps:
    """The operations of ``_pade`` and ``_expm`` on tensors (differentiable)."""
    mm = staticmethod(products.matmul)
    add = staticmethod(add)
    sub = staticmethod(subtract)
    mul = staticmethod(multiply)
    solve = staticmethod(lambda a, b: solve(a, b))
    eye = staticmethod(eye_like)


class _ArrayOps:
    """The same operations on ndarrays, for the direct path: the same NumPy calls as the
    primitives make, in the same order, so the same values."""
    mm = staticmethod(np.matmul)
    add = staticmethod(np.add)
    sub = staticmethod(np.subtract)
    mul = staticmethod(np.multiply)
    solve = staticmethod(np.linalg.solve)
    eye = staticmethod(lambda n, dtype: np.eye(n, dtype=dtype))


def _pade(a, m, ops=_TensorOps):
    """(U, V): the odd and even parts of the degree-m Pade numerator at a, so that
    exp(a) ~ (V - U)^-1 (V + U)."""
    c = _pade_coefficients(m)
    ident = ops.eye(a.shape[-1], a.dtype)
    mm, add_, mul = ops.mm, ops.add, ops.mul
    a2 = mm(a, a)
    if m == 13:
        a4 = mm(a2, a2)
        a6 = mm(a4, a2)
        u_hi = add_(add_(mul(a6, c[13]), mul(a4, c[11])), mul(a2, c[9]))
        u = mm(a, add_(mm(a6, u_hi), add_(add_(add_(mul(a6, c[7]), mul(a4, c[5])),
                                                mul(a2, c[3])), mul(ident, c[1]))))
        v_hi = add_(add_(mul(a6, c[12]), mul(a4, c[10])), mul(a2, c[8]))
        v = add_(mm(a6, v_hi), add_(add_(add_(mul(a6, c[6]), mul(a4, c[4])),
                                         mul(a2, c[2])), mul(ident, c[0])))
        return u, v
    powers = [None, a2]                       # powers[i] = a^(2i)
    for _ in range(2, m // 2 + 1):
        powers.append(mm(powers[-1], a2))
    u_inner = mul(ident, c[1])
    v = mul(ident, c[0])
    for i in range(1, m // 2 + 1):
        u_inner = add_(u_inner, mul(powers[i], c[2 * i + 1]))
        v = add_(v, mul(powers[i], c[2 * i]))
    return mm(a, u_inner), v


def _expm(a, v, ops):
    """expm of a (tensor or ndarray, per ``ops``) whose values are the ndarray v."""
    norm1 = float(np.max(np.abs(v).sum(axis=-2))) if v.size else 0.0
    if not np.isfinite(norm1):
        return None
    for m, theta in _THETA[:-1]:
        if norm1 <= theta:
            u, w = _pade(a, m, ops)
            return ops.solve(ops.sub(w, u), ops.add(w, u))
    theta13 = _THETA[-1][1]
    s = builtins.max(0, math.ceil(math.log2(norm1 / theta13))) if norm1 > theta13 else 0
    u, w = _pade(ops.mul(a, 2.0 ** -s) if s else a, 13, ops)
    r = ops.solve(ops.sub(w, u), ops.add(w, u))
    for _ in range(s):
        r = ops.mm(r, r)
    return r


def _expm_traced(a, max_squarings):
    """expm of a whose values are not known (jit, vmap): the degree-13 approximant (accurate
    at every norm the other degrees cover) of each matrix scaled by its own 2^-s, then squared
    s times by ``max_squarings`` selects (JAX's scheme; a matrix that would need more
    squarings gives NaN, as JAX's)."""
    theta13 = _THETA[-1][1]
    norm1 = reductions.max(reductions.sum(_abs(a), -2), -1)
    tiny = float(np.finfo(real_dtype(a.dtype)).tiny)
    # the number of squarings, a constant of the derivative (an integer of the values)
    s = elementwise.maximum(elementwise.ceil(elementwise.log2(
        elementwise.divide(elementwise.maximum(norm1, tiny), theta13))), 0.0)
    s = bind(P.stop_gradient_p, s)
    s_mat = reshape(s, s.shape + (1, 1))
    u, w = _pade(multiply(a, astype(elementwise.exp2(elementwise.negative(s_mat)), a.dtype)),
                 13)
    r = solve(subtract(w, u), add(w, u))
    for i in range(max_squarings):
        r = where(elementwise.greater(s_mat, i), products.matmul(r, r), r)
    return where(elementwise.greater(s_mat, max_squarings), math.nan, r)


def expm(A: ArrayLike, *, max_squarings: int = 16) -> Array:
    """The matrix exponential of each square matrix of A (..., n, n): Pade approximation with
    scaling and squaring (Higham 2005), one degree and scaling for the whole batch (chosen for
    its largest 1-norm).  Same shape, float dtype.  Differentiable (the derivative of the
    approximant, accurate like the value).

    Under jit or vmap, where the values are not known while tracing, each matrix takes the
    degree-13 approximant and its own scaling, squared by ``max_squarings`` selects (JAX's
    scheme and default; a matrix whose 1-norm needs more squarings, above about 5.4 * 2^16,
    gives NaN there, as in JAX); known values ignore ``max_squarings``."""
    try:
        max_squarings = operator.index(max_squarings)
    except TypeError:
        raise TypeError(f"max_squarings: expected an int, got {max_squarings!r}") from None
    if max_squarings < 0:
        raise ValueError(f"max_squarings: must be >= 0, got {max_squarings}")
    arr = _direct_square(A)
    if arr is not None and arr.shape[-1]:
        r = _quiet(_expm, arr, arr, _ArrayOps)
        if r is not None:
            return wrap_result(r)
    a = _matrix(A, "A", square=True)
    if a.shape[-1] == 0:
        return a
    v = _concrete(a)
    if v is None:
        return _expm_traced(a, max_squarings)
    r = _expm(a, v, _TensorOps)
    if r is None:   # NaN/inf in, NaN out (SciPy's result too), same shape and dtype
        return add(a, math.nan)
    return r


# -- the Array API's versions of shared names -----------------------------------------------

def linalg_cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Cross products of the 3-vectors along ``axis`` (size 3 in both, ValueError otherwise;
    the other axes broadcast): the Array API's ``linalg.cross``."""
    a, b = promote(x1, x2)
    nd = builtins.max(a.ndim, b.ndim)
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis: expected an int, got {axis!r}") from None
    if not -builtins.min(a.ndim, b.ndim) <= ax < 0 and not (a.ndim == b.ndim and 0 <= ax < nd):
        raise IndexError(f"axis: {axis} is out of range for shapes {a.shape} and {b.shape}")
    if a.shape[ax] != 3 or b.shape[ax] != 3:
        raise ValueError(f"x1, x2: cross products need size 3 along axis {axis}, got shapes "
                         f"{a.shape} and {b.shape}")
    shape = broadcast_shapes(a.shape, b.shape)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    return products.cross(a, b, axis=ax)


def linalg_outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The outer product of two 1-D tensors (ValueError otherwise): (n, m), promoted dtype."""
    a, b = promote(x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"x1, x2: outer needs 1-D tensors, got shapes {a.shape} and {b.shape}")
    return multiply(reshape(a, (a.shape[0], 1)), reshape(b, (1, b.shape[0])))


def linalg_trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike = None) -> Array:
    """Sums along diagonal ``offset`` of each matrix of x (..., m, n): shape x.shape[:-2];
    ``sum``'s dtype, or ``dtype``."""
    x = operand(x)
    if x.ndim < 2:
        raise ValueError(f"x: trace needs at least 2 dimensions, got shape {x.shape}")
    return arrangement.trace(x, offset, -2, -1, dtype)


def linalg_diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """Diagonal ``offset`` of each matrix of x (..., m, n): (..., length), x's dtype."""
    x = operand(x)
    if x.ndim < 2:
        raise ValueError(f"x: diagonal needs at least 2 dimensions, got shape {x.shape}")
    return arrangement.diagonal(x, offset, -2, -1)
