"""SciPy's functions: cho_factor, cho_solve and expm (Pade approximation with scaling and
squaring)."""
from __future__ import annotations

import builtins
import functools
import math
import operator

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.backend import cho_factor_values, cho_solve_values
from nx_rune.frontend import elementwise, products, reductions
from nx_rune.frontend._core import astype
from nx_rune.frontend.elementwise import add, multiply, subtract, where
from nx_rune.frontend.linalg._common import (
    _abs,
    _concrete,
    _direct,
    _direct_square,
    _matrices,
    _matrix,
    _quiet,
    eye_like,
    mT,
    real_dtype,
)
from nx_rune.frontend.linalg.decompositions import (
    _check_finite,
    _read_symmetric,
    _rhs,
    solve,
    solve_triangular,
)
from nx_rune.frontend.movement import reshape
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor, wrap_result
from nx_rune.typing import Array, ArrayLike

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
        # one primitive (LAPACK potrs), whose derivative is one rule
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
