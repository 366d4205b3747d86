"""NumPy's statistics beyond the standard's reductions: weighted ``average``, the nan-aware
reductions (``nansum nanprod nanmean nanvar nanstd nanmax nanmin``), ``ptp``,
and ``cov``/``corrcoef``.

Signatures are NumPy's (``out`` exists for positional compatibility and must be None: tensors
are immutable).  Everything is composed from front-end operations, so it is differentiable
wherever the math is: the nan-aware reductions mask nan entries (through ``where``, or the
fmax/fmin reduction primitives for nanmax/nanmin), so their derivative there is 0; ``average``
is differentiable in ``a`` and ``weights``; ``cov`` and ``corrcoef`` in their data and in
``aweights``.  Float dtypes follow ``mean``: ints and bools
compute in float32 (64-bit ints in float64).
"""
from __future__ import annotations

import numbers

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.frontend._core import (
    as_inexact,
    astype,
    broadcast_to,
    check_real,
    const,
    operand,
    promote,
    reduction_axes,
)
from nx_rune.frontend.creation import eye, zeros
from nx_rune.frontend.elementwise import (
    clip,
    divide,
    greater,
    isnan,
    multiply,
    sqrt,
    square,
    subtract,
    where,
)
from nx_rune.frontend.indexing import concrete_value
from nx_rune.frontend.movement import concatenate, reshape, squeeze, transpose
from nx_rune.frontend.products import matmul
from nx_rune.frontend.reductions import (
    _check_nonempty,
    accumulation_dtype,
    check_keepdims,
    degrees_of_freedom_correction,
    element_count,
    max,
    mean,
    min,
    prod,
    sum,
)
from nx_rune.primitives import bind
from nx_rune.typing import Array, ArrayLike, Axis, DTypeLike

__all__ = ["average", "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
           "ptp", "cov", "corrcoef"]


def _no_out(out, name):
    if out is not None:
        raise TypeError(f"{name}: out must be None (nx tensors are immutable; use the returned "
                        f"tensor)")


def _float_dtype(dtype, name):
    """``dtype`` checked to be a float or complex dtype (or None)."""
    if dtype is None:
        return None
    dt = accumulation_dtype(None, dtype, name)
    if not dtypes.is_inexact(dt):
        raise TypeError(f"{name}: dtype must be a float or complex dtype, got {dt}")
    return dt


# -- weighted average ----------------------------------------------------------------------------

def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None,
            returned: bool = False, keepdims: bool = False) -> Array | tuple[Array, Array]:
    """Weighted mean over ``axis``: sum(a * weights) / sum(weights) (plain ``mean`` without
    weights).

    ``weights``: a's shape, or (with an int or tuple ``axis``) the shape of a's ``axis`` sizes in
    that order, applying along them.  Shape as ``sum``; dtype: the promotion of a's and weights'
    float dtypes (ints give float32).  ``returned=True`` gives ``(average, sum of weights)``, the
    second broadcast to the first's shape.  Weights summing to 0 give nan (as JAX; NumPy
    raises).  Differentiable in ``a`` and ``weights``.
    """
    a = as_inexact(a)
    keepdims = check_keepdims(keepdims, "average")
    if not isinstance(returned, (bool, np.bool_)):
        raise TypeError(f"average: returned must be a bool, got {returned!r}")
    if weights is None:
        avg = mean(a, axis, keepdims)
        if not returned:
            return avg
        n = element_count(a, reduction_axes(a, axis))
        return avg, broadcast_to(const(n, avg.dtype), avg.shape)
    w = as_inexact(weights)
    a, w = promote(a, w)
    axes = reduction_axes(a, axis)
    if w.shape != a.shape:
        if axis is None:
            raise TypeError(f"average: axis must be given when weights (shape {w.shape}) and a "
                            f"(shape {a.shape}) differ in shape")
        order = list(axis) if isinstance(axis, (tuple, list)) else [axis]
        order = [o % a.ndim for o in order]  # reduction_axes checked them
        along = tuple(a.shape[o] for o in order)
        if w.shape != along:
            raise ValueError(f"average: weights of shape {w.shape} are neither a's shape "
                             f"{a.shape} nor its shape {along} along axis {axis}")
        w = transpose(w, tuple(int(i) for i in np.argsort(order)))
        w = reshape(w, tuple(d if i in axes else 1 for i, d in enumerate(a.shape)))
    scale = sum(w, axes, keepdims)
    avg = divide(sum(multiply(a, w), axes, keepdims), scale)
    if returned:
        return avg, broadcast_to(scale, avg.shape)
    return avg


# -- nan-aware reductions ------------------------------------------------------------------------

def _nan_mask(x):
    """isnan(x), or None for dtypes that cannot hold nan."""
    return isnan(x) if dtypes.is_inexact(x.dtype) else None


def nansum(a: ArrayLike, axis: Axis = None, dtype: DTypeLike = None, out: None = None,
           keepdims: bool = False) -> Array:
    """Sum over ``axis`` treating nan as 0 (an all-nan or empty slice sums to 0).

    Shape and dtype as ``sum`` (``dtype`` when given).  The derivative at nan entries is 0.
    """
    _no_out(out, "nansum")
    keepdims = check_keepdims(keepdims, "nansum")
    x = operand(a)
    x = astype(x, accumulation_dtype(x, dtype, "nansum"))
    mask = _nan_mask(x)
    if mask is not None:
        x = where(mask, 0, x)
    return sum(x, axis, keepdims)


def nanprod(a: ArrayLike, axis: Axis = None, dtype: DTypeLike = None, out: None = None,
            keepdims: bool = False) -> Array:
    """Product over ``axis`` treating nan as 1: shape and dtype as ``prod``; derivative 0 at nan
    entries."""
    _no_out(out, "nanprod")
    keepdims = check_keepdims(keepdims, "nanprod")
    x = operand(a)
    x = astype(x, accumulation_dtype(x, dtype, "nanprod"))
    mask = _nan_mask(x)
    if mask is not None:
        x = where(mask, 1, x)
    return prod(x, axis, keepdims)


def _count(mask, axes, keepdims, n, dtype):
    """The number of non-nan entries over ``axes`` as a tensor of ``dtype``."""
    return subtract(n, astype(sum(mask, axes, keepdims), dtype))


def nanmean(a: ArrayLike, axis: Axis = None, dtype: DTypeLike = None, out: None = None,
            keepdims: bool = False) -> Array:
    """Mean of the non-nan entries over ``axis`` (nan for an all-nan or empty slice).

    Shape as ``sum``; dtype as ``mean`` (``dtype``, a float or complex dtype, when given).  The
    derivative is 1/count at the non-nan entries and 0 at nan entries.
    """
    _no_out(out, "nanmean")
    dt = _float_dtype(dtype, "nanmean")
    x = as_inexact(a if dt is None else astype(a, dt))
    if x.dtype == dtypes.float16:
        return astype(nanmean(astype(x, dtypes.float32), axis, None, None, keepdims),
                      dtypes.float16)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, "nanmean")
    mask = isnan(x)
    total = sum(where(mask, 0, x), axes, keepdims)
    real = dtypes.float64 if x.dtype in (dtypes.float64, dtypes.complex128) else dtypes.float32
    count = _count(mask, axes, keepdims, element_count(x, axes), real)
    return divide(total, count)


def nanvar(a: ArrayLike, axis: Axis = None, dtype: DTypeLike = None, out: None = None,
           ddof: int | float = 0, keepdims: bool = False, *,
           correction: int | float | None = None) -> Array:
    """Variance of the non-nan entries over ``axis``: sum((x - nanmean)^2) / (count - c), c =
    ``ddof`` or ``correction``; nan where count - c <= 0 (all-nan slices included).

    Shape as ``sum``; dtype as ``var`` (real only).  Derivative 0 at nan entries.
    """
    _no_out(out, "nanvar")
    c = degrees_of_freedom_correction(ddof, correction, "nanvar")
    dt = _float_dtype(dtype, "nanvar")
    x = as_inexact(a if dt is None else astype(a, dt))
    check_real(x, "nanvar")
    keepdims = check_keepdims(keepdims, "nanvar")
    if x.dtype == dtypes.float16:
        return astype(nanvar(astype(x, dtypes.float32), axis, None, None, c, keepdims),
                      dtypes.float16)
    axes = reduction_axes(x, axis)
    mask = isnan(x)
    filled = where(mask, 0, x)
    count = _count(mask, axes, True, element_count(x, axes), x.dtype)
    # an all-nan slice has count 0: divide by 1 there (every entry is masked below anyway), so
    # that no 0/0 reaches the derivative
    centre = divide(sum(filled, axes, keepdims=True), where(greater(count, 0), count, 1))
    deviation = where(mask, 0, subtract(filled, centre))
    squares = sum(square(deviation), axes, keepdims)
    dof = subtract(count, float(c))
    if not keepdims:
        dof = reshape(dof, squares.shape)
    ok = greater(dof, 0)
    return where(ok, divide(squares, where(ok, dof, 1)), float("nan"))


def nanstd(a: ArrayLike, axis: Axis = None, dtype: DTypeLike = None, out: None = None,
           ddof: int | float = 0, keepdims: bool = False, *,
           correction: int | float | None = None) -> Array:
    """sqrt(nanvar): same arguments, shape and dtype as ``nanvar``."""
    _no_out(out, "nanstd")
    c = degrees_of_freedom_correction(ddof, correction, "nanstd")
    return sqrt(nanvar(a, axis, dtype, None, c, keepdims))


def _nan_extremum(a, axis, out, keepdims, name, prim, plain):
    _no_out(out, name)
    x = operand(a)
    check_real(x, name)
    if not dtypes.is_inexact(x.dtype):
        return plain(x, axis, keepdims)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, name)
    if not axes:
        return x
    _check_nonempty(x, axes, name)
    return bind(prim, x, axes=axes, keepdims=keepdims)


def nanmax(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Maximum over ``axis`` ignoring nan (nan for an all-nan slice; ValueError for an empty
    one).  Shape as ``sum``; a's dtype (real only).  Derivative: as ``max`` among the non-nan
    entries (ties split equally), 0 at nan entries."""
    return _nan_extremum(a, axis, out, keepdims, "nanmax", P.reduce_nanmax_p, max)


def nanmin(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Minimum over ``axis`` ignoring nan: as ``nanmax``."""
    return _nan_extremum(a, axis, out, keepdims, "nanmin", P.reduce_nanmin_p, min)


# -- ranges and counts -----------------------------------------------------------------------

def ptp(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Range max - min over ``axis`` ("peak to peak"; nan propagates; ValueError for an empty
    axis).  Shape as ``sum``; a's dtype (integers wrap as NumPy's; bool is a TypeError)."""
    _no_out(out, "ptp")
    x = operand(a)
    if dtypes.is_bool(x.dtype):
        raise TypeError("ptp: not defined for bool tensors (max - min needs subtraction)")
    check_real(x, "ptp")
    return subtract(max(x, axis, keepdims), min(x, axis, keepdims))


# -- covariance and correlation ------------------------------------------------------------------

def _check_weights(weights, n, name, argname, integer):
    w = operand(weights)
    if w.ndim != 1:
        raise ValueError(f"{name}: {argname} must be 1-D, got shape {w.shape}")
    if w.shape[0] != n:
        raise ValueError(f"{name}: {argname} has {w.shape[0]} entries for {n} observations")
    if dtypes.is_complex(w.dtype):
        raise TypeError(f"{name}: {argname} must be real, got {w.dtype}")
    v = concrete_value(w)
    if v is not None:
        if integer and not np.all(v == np.round(v)):
            raise TypeError(f"{name}: {argname} must be integer (frequencies)")
        if np.any(v < 0):
            raise ValueError(f"{name}: {argname} cannot be negative")
    return w


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: ArrayLike | None = None,
        aweights: ArrayLike | None = None, *, dtype: DTypeLike = None) -> Array:
    """Covariance matrix of the variables in ``m`` (and ``y``), NumPy's ``cov``.

    ``m``: 1-D (one variable) or 2-D, a variable per row (per column with ``rowvar=False``);
    ``y`` adds variables the same way.  Normalised by N - ddof, ddof 1 by default (0 with
    ``bias``); ``fweights`` (integer frequencies) and ``aweights`` (observation weights), 1-D of
    length N, weight the observations as NumPy does.  Shape (V, V) for V variables, squeezed
    (0-d for one variable); float dtype (``dtype`` when given; real input only).  N - ddof <= 0
    divides by 0 (inf/nan, as NumPy).  Differentiable in m, y and aweights.
    """
    if ddof is not None and (isinstance(ddof, (bool, np.bool_))
                             or not isinstance(ddof, numbers.Real) or ddof != int(ddof)):
        raise ValueError(f"cov: ddof must be an integer, got {ddof!r}")
    dt = _float_dtype(dtype, "cov")
    m = operand(m)
    xs = [m] if y is None else [m, operand(y)]
    for v, argname in zip(xs, ("m", "y")):
        if dtypes.is_complex(v.dtype) or (dt is not None and dtypes.is_complex(dt)):
            raise TypeError(f"cov: complex {argname} is not supported (real input only)")
        if v.ndim > 2:
            raise ValueError(f"cov: {argname} has more than 2 dimensions (shape {v.shape})")
    xs = [as_inexact(v if dt is None else astype(v, dt)) for v in xs]
    if len(xs) == 2:
        xs = promote(*xs)
    X = reshape(xs[0], (1, -1)) if xs[0].ndim < 2 else xs[0]
    if not rowvar and xs[0].ndim == 2:
        X = transpose(X)
    if X.shape[0] == 0:
        return zeros((0, 0), X.dtype)
    if len(xs) == 2:
        Y = reshape(xs[1], (1, -1)) if xs[1].ndim < 2 else xs[1]
        if not rowvar and Y.shape[0] != 1:
            Y = transpose(Y)
        if Y.shape[1] != X.shape[1]:
            raise ValueError(f"cov: m and y have different numbers of observations "
                             f"({X.shape[1]} and {Y.shape[1]})")
        X = concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    ddof = int(ddof)
    n = X.shape[1]
    fw = aw = w = None
    if fweights is not None:
        fw = astype(_check_weights(fweights, n, "cov", "fweights", True), X.dtype)
        w = fw
    if aweights is not None:
        aw = astype(_check_weights(aweights, n, "cov", "aweights", False), X.dtype)
        w = aw if w is None else multiply(w, aw)
    if w is None:
        centred = subtract(X, mean(X, 1, keepdims=True))
        fact = float(n - ddof) if n > ddof else 0.0
        return squeeze(divide(matmul(centred, transpose(centred)), fact))
    w_sum = sum(w)
    centred = subtract(X, divide(sum(multiply(X, w), 1, keepdims=True), w_sum))
    if ddof == 0:
        fact = w_sum
    elif aw is None:
        fact = subtract(w_sum, float(ddof))
    else:
        fact = subtract(w_sum, divide(multiply(float(ddof), sum(multiply(w, aw))), w_sum))
    fact = where(greater(fact, 0), fact, 0)
    return squeeze(divide(matmul(centred, transpose(multiply(centred, w))), fact))


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, *,
             dtype: DTypeLike = None) -> Array:
    """Pearson correlation coefficients, cov(x, y) / sqrt(var_i var_j), NumPy's ``corrcoef``.

    Arguments and shape as ``cov`` (a single variable gives c / c: 1, or nan for a constant
    variable); float dtype; values clipped to [-1, 1].  Differentiable in x and y.
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return divide(c, c)
    d = sum(multiply(c, eye(c.shape[0], dtype=c.dtype)), 1)
    s = sqrt(d)
    c = divide(divide(c, reshape(s, (-1, 1))), reshape(s, (1, -1)))
    return clip(c, -1, 1)
