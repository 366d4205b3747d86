"""Decompositions and solves: cholesky, solve_triangular, solve, inv, slogdet, det, eigh,
eigvalsh, svd, svdvals, qr, pinv and lstsq, each a primitive computed by LAPACK."""
from __future__ import annotations

import builtins

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.backend import cho_factor_values, eigh_values, qr_values, svd_values
from nx_rune.frontend import creation, elementwise, products, reductions
from nx_rune.frontend._core import astype, broadcast_shapes, broadcast_to, promote
from nx_rune.frontend.elementwise import add, multiply, subtract
from nx_rune.frontend.linalg._common import (
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
    mT,
    real_dtype,
    unpack,
)
from nx_rune.frontend.movement import reshape, shrink
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor, wrap_result
from nx_rune.typing import Array, ArrayLike

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
    logabsdet is inv(x)^T (at a singular matrix adj(x)^T / +0: +-inf where the cofactor is
    not 0, NaN where it is, as JAX's); the sign's is 0 for real x.  Complex x (JAX's rule):
    with t = tr(inv(x) dx), d logabsdet = Re(t) and d sign = i Im(t) sign."""
    arr = _direct_square(x)
    if arr is not None:
        sign, logabs = _quiet(np.linalg.slogdet, arr)
        return SlogdetResult(wrap_result(sign), wrap_result(logabs))
    a = _matrix(x, "x", square=True)
    # the LU factorization is an operand, so that the derivative reuses it (lu_inverse)
    lu = bind(P.lu_factor_p, a)
    if not dtypes.is_complex(a.dtype):
        # one primitive per result, so that log|det|'s derivative is one rule
        return SlogdetResult(bind(P.lu_det_p, a, lu, part="sign"),
                             bind(P.lu_det_p, a, lu, part="logabsdet"))
    sign, logabs = unpack(bind(P.slogdet_p, a, lu), [(), ()])
    return SlogdetResult(sign, _real(logabs))


def det(x: ArrayLike, /) -> Array:
    """The determinant of each square matrix of x (..., n, n): shape x.shape[:-2], float dtype.
    Computed as NumPy does, sign * exp(logabsdet) from the LU factorization (the same values
    to an ulp or two: NumPy's scalar exp against the exp ufunc); its derivative is the
    cofactor matrix adj(x)^T (det * inv(x)^T), also at singular matrices, eagerly, under jit
    and vmap, and so are its higher derivatives (JAX's values).  For complex x det is
    holomorphic: the same derivative (``holomorphic=True`` in grad/jacfwd/jacrev), and the
    conjugate of the Wirtinger gradient for real-valued functions of it (JAX's convention)."""
    arr = _direct_square(x)
    if arr is not None:      # NumPy's det: the same LU, the product of the pivots
        return wrap_result(_quiet(np.linalg.det, arr))
    a = _matrix(x, "x", square=True)
    # sign * exp(logabsdet) as one primitive (complex too: its rules are holomorphic)
    return bind(P.lu_det_p, a, bind(P.lu_factor_p, a), part="det")


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
        w, v = eigh_values(arr, lower)
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
        u, s, vh = svd_values(arr, bool(full_matrices))
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
        q, r = qr_values(arr, mode)
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
    rank: Array
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
