"""Reductions (sum, prod, max, min, mean, var, std, all, any, argmax, argmin, logsumexp) and
scans (cumsum, cumprod, cummax, cummin).

Axes: None (all), an int or a tuple, negative counting from the end; ``keepdims`` keeps the
reduced axes with size 1.
"""
from __future__ import annotations

import builtins

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.frontend._core import (as_inexact, astype, broadcast_to, check_real, const, operand,
                                    reduction_axes, zeros_like_t)
from nx_rune.frontend.elementwise import (add, as_bool, bitwise_not, divide, exp, isfinite, log,
                                          logical_not, negative, sqrt, square, subtract, where)
from nx_rune.frontend.movement import reshape
from nx_rune.primitives import bind
from nx_rune.typing import Array, ArrayLike, Axis

__all__ = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "argmax", "argmin",
           "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "amax", "amin"]


def _sum_dtype(dt):
    if dtypes.is_bool(dt) or (dt.kind == "i" and dt.itemsize < 4):
        return dtypes.int32
    if dt.kind == "u" and dt.itemsize < 4:
        return dtypes.uint32
    return dt


def sum(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Sum over ``axis`` (int, tuple or None for all; negative axes count from the end).

    Shape: x's without the reduced axes (kept as 1 with ``keepdims``).  Dtype: x's, except that
    bool and 8/16-bit ints sum in int32 (uint8/16 in uint32), as JAX.  The sum of nothing is 0.
    """
    x = operand(x)
    axes = reduction_axes(x, axis)
    x = astype(x, _sum_dtype(x.dtype))
    if not axes:
        return x
    return bind(P.reduce_sum_p, x, axes=axes, keepdims=bool(keepdims))


def prod(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Product over ``axis``: shape and dtype as ``sum``; the product of nothing is 1."""
    x = operand(x)
    axes = reduction_axes(x, axis)
    x = astype(x, _sum_dtype(x.dtype))
    if not axes:
        return x
    return bind(P.reduce_prod_p, x, axes=axes, keepdims=bool(keepdims))


def max(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Maximum over ``axis`` (nan propagates; ValueError on an empty axis).

    Shape as ``sum``; x's dtype (real dtypes only).  Its derivative splits the cotangent equally between tied maxima (as JAX).
    """
    x = operand(x)
    check_real(x, "max")
    axes = reduction_axes(x, axis)
    if not axes:
        return x
    _check_nonempty(x, axes, "max")
    return bind(P.reduce_max_p, x, axes=axes, keepdims=bool(keepdims))


def _check_nonempty(x, axes, name):
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"{name}: zero-size reduction over axes {axes} of a tensor of shape "
                         f"{x.shape}; {name} has no identity")


def min(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Minimum over ``axis``: shape as ``sum``, x's dtype (see ``max``)."""
    x = operand(x)
    check_real(x, "min")
    _check_nonempty(x, reduction_axes(x, axis), "min")
    if dtypes.is_inexact(x.dtype):
        return negative(max(negative(x), axis, keepdims))
    if dtypes.is_bool(x.dtype):
        return all(x, axis, keepdims)
    return bitwise_not(max(bitwise_not(x), axis, keepdims))


amax, amin = max, min


def element_count(x, axes):
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def mean(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis``: shape as ``sum``; float dtype (ints give float32, 64-bit
    ints float64); nan for an empty axis.  float16 accumulates in float32 (as NumPy)."""
    x = as_inexact(x)
    axes = reduction_axes(x, axis)
    n = element_count(x, axes)
    if x.dtype == dtypes.float16:
        return astype(mean(astype(x, dtypes.float32), axes, keepdims), dtypes.float16)
    return divide(sum(x, axes, keepdims), float(n) if n else float("nan"))


def var(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Array:
    """Variance over ``axis``: sum((x - mean(x))^2) / (n - ddof).  Shape as ``sum``; float dtype
    (real only: TypeError for complex; float16 accumulates in float32)."""
    x = as_inexact(x)
    check_real(x, "var")
    axes = reduction_axes(x, axis)
    if x.dtype == dtypes.float16:
        return astype(var(astype(x, dtypes.float32), axes, ddof, keepdims), dtypes.float16)
    n = element_count(x, axes)
    centred = subtract(x, mean(x, axes, keepdims=True))
    return divide(sum(square(centred), axes, keepdims), float(n - ddof) if n > ddof else 0.0)


def std(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Array:
    """Standard deviation, sqrt(var): shape as ``sum``; float dtype."""
    return sqrt(var(x, axis, ddof, keepdims))


def all(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """True where every element over ``axis`` is true (``!= 0``); True for an empty axis.  Shape
    as ``sum``; bool."""
    return logical_not(any(logical_not(x), axis, keepdims))


def any(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """True where some element over ``axis`` is true; False for an empty axis.  Shape as ``sum``;
    bool."""
    x = as_bool(x)
    axes = reduction_axes(x, axis)
    if not axes:
        return x
    if element_count(x, axes) == 0:
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return broadcast_to(const(False, dtypes.bool_), out_shape)
    return bind(P.reduce_max_p, x, axes=axes, keepdims=bool(keepdims))


def argmax(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of the flattened tensor if None; nan counts as
    the maximum): shape without that axis (1 with keepdims), int32.  ValueError if empty."""
    x = operand(x)
    check_real(x, "argmax")
    if axis is None:
        out = bind(P.argmax_p, reshape(x, (-1,)), axis=0, keepdims=False)
        return reshape(out, (1,) * x.ndim) if keepdims else out
    return bind(P.argmax_p, x, axis=normalize_axis(axis, x.ndim), keepdims=bool(keepdims))


def argmin(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis``: shape as ``argmax``, int32."""
    x = operand(x)
    check_real(x, "argmin")
    if dtypes.is_inexact(x.dtype):
        return argmax(negative(x), axis, keepdims)
    if dtypes.is_bool(x.dtype):
        return argmax(logical_not(x), axis, keepdims)
    return argmax(bitwise_not(x), axis, keepdims)


def logsumexp(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """log(sum(exp(x))) over ``axis``, computed stably (shifted by the maximum; -inf for an empty
    axis, inf and nan propagate).  Shape as ``sum``; float dtype."""
    x = as_inexact(x)
    axes = reduction_axes(x, axis)
    if not axes:
        return x
    if element_count(x, axes) == 0:  # log of an empty sum
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return broadcast_to(const(-np.inf, x.dtype), out_shape)
    m = max(x, axes, keepdims=True)
    m = where(isfinite(m), m, zeros_like_t(m))
    out = add(log(sum(exp(subtract(x, m)), axes, keepdims=True)), m)
    if not keepdims:
        out = reshape(out, tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return out


# -- scans ---------------------------------------------------------------------------------------

def _scan(x, axis, op):
    x = operand(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return bind(P.associative_scan_p, x, axis=normalize_axis(axis, x.ndim), op=op)


def cumsum(x: ArrayLike, axis: int | None = None) -> Array:
    """Running sum along ``axis`` (of the flattened tensor if None): x's shape (1-D for None);
    dtype as ``sum``."""
    x = operand(x)
    return _scan(astype(x, _sum_dtype(x.dtype)), axis, "sum")


def cumprod(x: ArrayLike, axis: int | None = None) -> Array:
    """Running product along ``axis``: shape as ``cumsum``; dtype as ``sum``."""
    x = operand(x)
    return _scan(astype(x, _sum_dtype(x.dtype)), axis, "prod")


def cummax(x: ArrayLike, axis: int | None = None) -> Array:
    """Running maximum along ``axis`` (nan propagates): shape as ``cumsum``; x's dtype."""
    x = operand(x)
    check_real(x, "cummax")
    return _scan(x, axis, "max")


def cummin(x: ArrayLike, axis: int | None = None) -> Array:
    """Running minimum along ``axis``: shape as ``cumsum``; x's dtype."""
    x = operand(x)
    check_real(x, "cummin")
    return _scan(x, axis, "min")

