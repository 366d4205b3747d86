"""Functions of matrices: matrix_power, matrix_rank and the norms (vector_norm, matrix_norm,
NumPy's norm)."""
from __future__ import annotations

import math
import operator

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.backend import norm2_values
from nx_rune.frontend import arrangement, elementwise, products, reductions
from nx_rune.frontend._core import astype, broadcast_to, operand, reduction_axes
from nx_rune.frontend.elementwise import add, multiply, sqrt, where
from nx_rune.frontend.linalg._common import (
    LinAlgError,
    _abs,
    _concrete,
    _direct,
    _direct_square,
    _inexact,
    _matrix,
    eye_like,
)
from nx_rune.frontend.linalg.decompositions import _rtol, inv, svdvals
from nx_rune.frontend.movement import reshape
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor, wrap_result
from nx_rune.typing import Array, ArrayLike, Axis

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
        # the products as one residual, so that the derivative is one rule
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
    assert result is not None      # n >= 4 has a set bit
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
    (default, Euclidean), 1, inf (max ``|x|``), -inf (min ``|x|``), 0 (count of nonzeros), any
    other p (``(sum |x|^p)^(1/p)``).  Shape: x's without the reduced axes (kept as 1 with
    ``keepdims``); real float dtype.  The 2-norm's derivative at x = 0 is 0 (a subgradient)
    rather than NaN.
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
                # norm2_values' dot product with a scalar square root (NumPy's
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
