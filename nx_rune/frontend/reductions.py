"""Reductions (sum, prod, max, min, mean, var, std, all, any, argmax, argmin, logsumexp) and
scans (cumsum, cumprod, cummax, cummin, and the standard's cumulative_sum/cumulative_prod).

Signatures follow the Array API standard (``x`` positional-only; ``dtype=`` and ``correction=``
keyword-only) while keeping ``axis`` and ``keepdims`` (and var/std's ``ddof``) positional, as
NumPy's and the earlier nx calls ``sum(x, axis, keepdims)`` use them.  Axes: None (all), an int
or a tuple, negative counting from the end; ``keepdims`` keeps the reduced axes with size 1.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.frontend._core import (
    as_inexact,
    astype,
    broadcast_to,
    check_real,
    const,
    operand,
    reduction_axes,
    zeros_like_t,
)
from nx_rune.frontend.elementwise import (
    add,
    as_bool,
    bitwise_not,
    divide,
    equal,
    exp,
    imag,
    isfinite,
    isnan,
    log,
    logical_and,
    logical_not,
    logical_or,
    multiply,
    negative,
    real,
    sqrt,
    square,
    subtract,
    where,
)
from nx_rune.frontend.indexing import take_along_axis
from nx_rune.frontend.movement import pad, reshape
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor
from nx_rune.typing import Array, ArrayLike, Axis, DTypeLike

__all__ = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "argmax", "argmin",
           "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "amax", "amin",
           "cumulative_sum", "cumulative_prod"]


def _sum_dtype(dt):
    """The standard's accumulation dtype: ints narrower than the default int (and bool) widen to
    it, unsigned ones to the unsigned int of its width; every other dtype is kept."""
    if dt.kind in "fc":
        return dt
    default = dtypes.DEFAULT_INT
    if dtypes.is_bool(dt) or (dt.kind == "i" and dt.itemsize < default.itemsize):
        return default
    if dt.kind == "u" and dt.itemsize < default.itemsize:
        return np.dtype(f"u{default.itemsize}")
    return dt


def accumulation_dtype(x, dtype, name):
    """The dtype ``name`` (sum, prod, their scans) computes in: ``dtype`` when given (checked),
    else ``_sum_dtype`` of x's."""
    if dtype is None:
        return _sum_dtype(x.dtype)
    try:
        return dtypes.check_dtype(dtype, "dtype")
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def check_keepdims(keepdims, name):
    """``keepdims`` as a bool; TypeError for anything else (NumPy's positional order is
    ``(a, axis, dtype, ...)``: a dtype passed there must not silently mean True)."""
    if isinstance(keepdims, (bool, np.bool_)):
        return bool(keepdims)
    if isinstance(keepdims, (int, np.integer)) and keepdims in (0, 1):
        return bool(keepdims)
    hint = ""
    if isinstance(keepdims, (type, np.dtype, str)):
        hint = f" (a dtype goes by keyword: {name}(x, axis, dtype=...))"
    raise TypeError(f"{name}: keepdims must be a bool, got {keepdims!r}{hint}")


def sum(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False, *,
        dtype: DTypeLike = None) -> Array:
    """Sum over ``axis`` (int, tuple or None for all; negative axes count from the end).

    Shape: x's without the reduced axes (kept as 1 with ``keepdims``).  Dtype: ``dtype`` when
    given (x is cast to it first), else x's, except that bool and ints narrower than the default
    int (int32) sum in int32 (unsigned ones in uint32), as the Array API standard and JAX.  The
    sum of nothing is 0.
    """
    x = operand(x)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, "sum")
    x = astype(x, accumulation_dtype(x, dtype, "sum"))
    if not axes:
        return x
    return bind(P.reduce_sum_p, x, axes=axes, keepdims=keepdims)


def prod(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False, *,
         dtype: DTypeLike = None) -> Array:
    """Product over ``axis``: shape and dtype as ``sum``; the product of nothing is 1."""
    x = operand(x)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, "prod")
    x = astype(x, accumulation_dtype(x, dtype, "prod"))
    if not axes:
        return x
    return bind(P.reduce_prod_p, x, axes=axes, keepdims=keepdims)


def max(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False) -> Array:
    """Maximum over ``axis`` (nan propagates; ValueError on an empty axis).

    Shape as ``sum``; x's dtype.  Complex values are ordered as NumPy's and JAX's:
    lexicographically, by real part then imaginary part.  Its derivative splits the cotangent
    equally between tied maxima (as JAX).
    """
    x = operand(x)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, "max")
    if not axes:
        return x
    _check_nonempty(x, axes, "max")
    if dtypes.is_complex(x.dtype):
        return _complex_extreme(x, axes, keepdims, max)
    return bind(P.reduce_max_p, x, axes=axes, keepdims=keepdims)


def _complex_extreme(x, axes, keepdims, pick):
    """The lexicographic max (``pick`` = max) or min of complex x over ``axes``: the elements
    with the extreme real part, of those the extreme imaginary part (their mean, for the
    derivative to split between exact ties; nan where the real parts have a nan)."""
    re, im = real(x), imag(x)
    cand = equal(re, pick(re, axes, True))
    fill = float("-inf") if pick is max else float("inf")
    hit = logical_and(cand, equal(im, pick(where(cand, im, fill), axes, True)))
    count = sum(astype(hit, re.dtype), axes, keepdims)
    total = sum(where(hit, x, 0), axes, keepdims)
    # each part divided by the (real) count: a complex division would turn inf + 1j into
    # inf + nan j
    out = bind(P.complex_p, divide(real(total), count), divide(imag(total), count))
    # a nan in either part of any element makes the result nan, as NumPy's
    has_nan = any(logical_or(isnan(re), isnan(im)), axes, keepdims)
    return where(has_nan, astype(complex(float("nan"), float("nan")), x.dtype), out)


def _check_nonempty(x, axes, name):
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"{name}: zero-size reduction over axes {axes} of a tensor of shape "
                         f"{x.shape}; {name} has no identity")


def min(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False) -> Array:
    """Minimum over ``axis``: shape as ``sum``, x's dtype (see ``max``)."""
    x = operand(x)
    keepdims = check_keepdims(keepdims, "min")
    _check_nonempty(x, reduction_axes(x, axis), "min")
    if dtypes.is_complex(x.dtype):
        axes = reduction_axes(x, axis)
        return _complex_extreme(x, axes, keepdims, min) if axes else x
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


def mean(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False, *,
         dtype: DTypeLike = None) -> Array:
    """Arithmetic mean over ``axis``: shape as ``sum``.

    Dtype: ``dtype`` when given (a float or complex dtype; x is cast to it first), else x's when
    float or complex (ints and bools give float32, 64-bit ints float64).  nan for an empty axis
    (nan+nanj for complex).  float16 accumulates in float32 (as NumPy).
    """
    if dtype is not None:
        dt = accumulation_dtype(None, dtype, "mean")
        if not dtypes.is_inexact(dt):
            raise TypeError(f"mean: dtype must be a float or complex dtype, got {dt}")
        x = astype(x, dt)
    x = as_inexact(x)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, "mean")
    n = element_count(x, axes)
    if x.dtype == dtypes.float16:
        return astype(mean(astype(x, dtypes.float32), axes, keepdims), dtypes.float16)
    return divide(sum(x, axes, keepdims), float(n) if n else float("nan"))


def degrees_of_freedom_correction(ddof, correction, name):
    """The divisor correction of var/std: ``correction`` (the standard's name) or ``ddof``
    (NumPy's), a real number; giving both is a ValueError."""
    for arg, v in (("ddof", ddof), ("correction", correction)):
        if v is not None and (isinstance(v, (bool, np.bool_))
                              or not isinstance(v, numbers.Real)):
            raise TypeError(f"{name}: {arg} must be a real number, got {v!r}")
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name}: give ddof or correction, not both (got ddof={ddof!r}, "
                         f"correction={correction!r})")
    return correction


def var(x: ArrayLike, /, axis: Axis = None, ddof: int | float = 0, keepdims: bool = False, *,
        correction: int | float | None = None) -> Array:
    """Variance over ``axis``: sum((x - mean(x))^2) / (N - c), c = ``correction`` (the standard's
    name) or ``ddof`` (NumPy's; give one of them), N the number of reduced elements.

    Shape as ``sum``; float dtype (as ``mean``; for complex x the real dtype of its precision,
    the mean of |x - mean(x)|^2, as NumPy's; float16 accumulates in float32).  nan where
    N - c <= 0 (the standard's rule) and where x has a nan.
    """
    c = degrees_of_freedom_correction(ddof, correction, "var")
    x = as_inexact(x)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, "var")
    if x.dtype == dtypes.float16:
        return astype(var(astype(x, dtypes.float32), axes, c, keepdims), dtypes.float16)
    n = element_count(x, axes)
    centred = subtract(x, mean(x, axes, keepdims=True))
    if dtypes.is_complex(x.dtype):
        re, im = real(centred), imag(centred)
        sq = add(multiply(re, re), multiply(im, im))
    else:
        sq = square(centred)
    return divide(sum(sq, axes, keepdims), float(n - c) if n > c else float("nan"))


def std(x: ArrayLike, /, axis: Axis = None, ddof: int | float = 0, keepdims: bool = False, *,
        correction: int | float | None = None) -> Array:
    """Standard deviation, sqrt(var) (same ``ddof``/``correction`` rules): shape as ``sum``;
    float dtype; nan where N - correction <= 0."""
    c = degrees_of_freedom_correction(ddof, correction, "std")
    return sqrt(var(x, axis, c, keepdims))


def all(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False) -> Array:
    """True where every element over ``axis`` (int, tuple or None) is true (``!= 0``; nan is
    true); True for an empty axis.  Shape as ``sum``; bool."""
    keepdims = check_keepdims(keepdims, "all")
    return logical_not(any(logical_not(x), axis, keepdims))


def any(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False) -> Array:
    """True where some element over ``axis`` (int, tuple or None) is true; False for an empty
    axis.  Shape as ``sum``; bool."""
    x = as_bool(x)
    axes = reduction_axes(x, axis)
    keepdims = check_keepdims(keepdims, "any")
    if not axes:
        return x
    if element_count(x, axes) == 0:
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return broadcast_to(const(False, dtypes.bool_), out_shape)
    return bind(P.reduce_max_p, x, axes=axes, keepdims=keepdims)


def argmax(x: ArrayLike, /, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of the flattened tensor if None; nan counts as
    the maximum): shape without that axis (1 with keepdims; all ones for None), int32 (the
    default index dtype; int64 in x64 mode).  ValueError if the searched axis is empty."""
    x = operand(x)
    check_real(x, "argmax")
    keepdims = check_keepdims(keepdims, "argmax")
    if axis is None:
        out = bind(P.argmax_p, reshape(x, (-1,)), axis=0, keepdims=False)
        out = reshape(out, (1,) * x.ndim) if keepdims else out
    else:
        out = bind(P.argmax_p, x, axis=normalize_axis(axis, x.ndim), keepdims=keepdims)
    return astype(out, dtypes.DEFAULT_INT)  # int64 in x64 mode (a no-op otherwise)


def argmin(x: ArrayLike, /, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis``: shape as ``argmax``, int32."""
    x = operand(x)
    check_real(x, "argmin")
    keepdims = check_keepdims(keepdims, "argmin")
    if dtypes.is_inexact(x.dtype):
        return argmax(negative(x), axis, keepdims)
    if dtypes.is_bool(x.dtype):
        return argmax(logical_not(x), axis, keepdims)
    return argmax(bitwise_not(x), axis, keepdims)


def _nested(x):
    """Whether ``x`` is a transformation's value carried by another one (a derivative of a
    derivative): its primal has a primal."""
    if x.__class__ is Tensor:
        return False
    p = getattr(x, "primal", None)
    return p is not None and p.__class__ is not Tensor and getattr(p, "primal", None) is not None


def shift_max(x, axes, finite=False):
    """max(x) over ``axes`` (kept as size 1), as the shift of a stable logsumexp or softmax;
    with ``finite`` a non-finite maximum is replaced by 0.

    Those functions' values do not depend on the shift, nor do their exact derivatives, but
    their rounding does: with a constant shift (JAX's stop_gradient of the max) the dominant
    element's terms cancel.  For a concrete Tensor, or the values of a first-order eager
    derivative, the shift is NumPy's constant (no reduction on the tape; the cancellation
    costs there an absolute error of about one rounding of the tangent).  Under a derivative
    of a derivative, where a large cotangent multiplies that cancellation (an hvp through a
    logsumexp of 1e18 was 46 % off; JAX's eager hvp has the same error), it is the maximum
    element itself, picked by its concrete index from the level below x's: a constant for x's
    own tape, which it leaves alone, differentiable for the levels above, so that the dominant
    element's ``x - max`` is 0 with zero derivatives there (a tie takes the first, whose
    derivative cancels in the result).  Abstract or batched values (jit, vmap) take the
    front-end ops' max."""
    t = x._concrete_tensor() if x.dtype.kind != "c" else None   # (max raises for complex)
    if t is not None:
        v = t._np()
        m = np.max(v, axis=axes, keepdims=True)
        if finite:
            m = np.where(np.isfinite(m), m, m.dtype.type(0))
        if not _nested(x):
            return Tensor._wrap(np.asarray(m, dtype=v.dtype, order="C"))
        if not finite or np.isfinite(m).all():     # the values say no select is needed
            # the maximum element itself, taken from the value x's own level carries (the
            # level below): a constant for x's level, whose tape it leaves alone, and
            # differentiable for the levels above, where the cancellation was
            inner = x.primal
            if len(axes) == 1 and v.size:
                # picked by its (concrete) index: one gather, whose derivatives cost less
                # than max's (a tie takes the first: the shift's derivative cancels whichever
                # element it follows)
                idx = np.argmax(v, axis=axes[0], keepdims=True)
                return take_along_axis(inner, Tensor._wrap(idx), axes[0])
            return max(inner, axes, keepdims=True)
    m = max(x, axes, keepdims=True)
    return where(isfinite(m), m, zeros_like_t(m)) if finite else m


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
    m = shift_max(x, axes, finite=True)
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


def cumsum(x: ArrayLike, axis: int | None = None, dtype: DTypeLike = None) -> Array:
    """Running sum along ``axis`` (of the flattened tensor if None): x's shape (1-D for None);
    dtype as ``sum`` (``dtype`` when given)."""
    x = operand(x)
    return _scan(astype(x, accumulation_dtype(x, dtype, "cumsum")), axis, "sum")


def cumprod(x: ArrayLike, axis: int | None = None, dtype: DTypeLike = None) -> Array:
    """Running product along ``axis``: shape as ``cumsum``; dtype as ``sum``."""
    x = operand(x)
    return _scan(astype(x, accumulation_dtype(x, dtype, "cumprod")), axis, "prod")


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


def _cumulative(x, axis, dtype, include_initial, op, identity, name):
    x = operand(x)
    if x.ndim == 0:  # unspecified by the standard; NumPy treats it as a 1-element vector
        x = reshape(x, (1,))
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis is required for a tensor of {x.ndim} dimensions "
                             f"(shape {x.shape})")
        axis = 0
    axis = normalize_axis(axis, x.ndim)
    if not isinstance(include_initial, (bool, np.bool_)):
        raise TypeError(f"{name}: include_initial must be a bool, got {include_initial!r}")
    x = astype(x, accumulation_dtype(x, dtype, name))
    out = bind(P.associative_scan_p, x, axis=axis, op=op)
    if include_initial:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (1, 0)
        out = pad(out, widths, constant_values=identity)
    return out


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike = None,
                   include_initial: bool = False) -> Array:
    """Running sum along ``axis`` (the Array API standard's cumsum).

    ``axis`` may be omitted only for 1-D (and 0-d, read as 1-D) x: ValueError otherwise.  Shape:
    x's, with N+1 along ``axis`` when ``include_initial`` (a leading 0).  Dtype as ``sum``.
    """
    return _cumulative(x, axis, dtype, include_initial, "sum", 0, "cumulative_sum")


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike = None,
                    include_initial: bool = False) -> Array:
    """Running product along ``axis``: shape as ``cumulative_sum`` (a leading 1 with
    ``include_initial``); dtype as ``sum``."""
    return _cumulative(x, axis, dtype, include_initial, "prod", 1, "cumulative_prod")
