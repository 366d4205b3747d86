"""Sorting, searching, set functions and order statistics.

``sort``/``argsort`` (the Array API's signatures; NumPy's ``axis=None`` and ``kind=`` too),
``searchsorted``, ``count_nonzero``, ``argwhere``, ``flatnonzero``, the set functions
``unique_values``/``unique_counts``/``unique_inverse``/``unique_all`` and NumPy's ``unique``, and
the order statistics ``median``, ``quantile``, ``percentile``, ``nanmedian``, ``nanquantile``,
``nanpercentile``.

Order (NumPy's): NaNs sort after every number (before them with ``descending=True``), -0.0
equals 0.0, complex numbers sort lexicographically (real part, then imaginary part), as NumPy
does (the Array API leaves complex order unspecified).  Sorts are stable: equal elements keep
their order, with ``descending=True`` too.

``sort`` is a primitive whose derivative is a gather through the sorting permutation (ties
take the order of the stable sort); ``median`` and the quantiles are compositions of ``sort``,
gathers and linear interpolation, so they are differentiable in ``a`` (and in ``q`` where the
method interpolates).  Indices and counts are int32 (int64 when they may exceed 2**31 - 1).
Functions whose result shape depends on the values (the set functions, ``argwhere``,
``flatnonzero``, the NaN-skipping statistics) need concrete input.
"""
from __future__ import annotations

import collections
import math

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.frontend._core import as_inexact, astype, check_real, operand, promote, reduction_axes
from nx_rune.frontend.elementwise import add, divide, isnan, multiply, not_equal, subtract, where
from nx_rune.frontend.index_modes import _nonzero_sized
from nx_rune.frontend.indexing import concrete_value, take, take_along_axis
from nx_rune.frontend.movement import concatenate, moveaxis, reshape, stack, transpose
from nx_rune.frontend.reductions import cumsum
from nx_rune.frontend.reductions import sum as _sum
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor
from nx_rune.typing import Array, ArrayLike, Axis

__all__ = ["sort", "argsort", "searchsorted", "count_nonzero", "argwhere", "flatnonzero",
           "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile"]

UniqueAllResult = collections.namedtuple("UniqueAllResult",
                                         ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult",
                                             ["values", "inverse_indices"])

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def index_dtype(n: int) -> np.dtype:
    """The dtype of indices and counts that may reach ``n``: the default int (int32), or int64
    when n does not fit in it."""
    dt = dtypes.DEFAULT_INT
    return dt if n <= np.iinfo(dt).max else dtypes.int64


def _wrap(arr, dtype=None):
    """A Tensor of a NumPy result (0-d stays 0-d)."""
    return Tensor._wrap(np.asarray(arr, dtype=dtype, order="C"))


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a bool, got {value!r}")


# -- sorting ----------------------------------------------------------------------------------

def _sort_operand(x, axis, descending, stable, kind):
    x = operand(x)
    _check_bool(descending, "descending")
    _check_bool(stable, "stable")
    if kind not in _KINDS:
        raise ValueError(f"kind: must be one of {_KINDS}, got {kind!r}")
    if axis is None:   # NumPy's: sort the flattened tensor
        return reshape(x, (-1,)), 0
    return x, normalize_axis(axis, x.ndim)


def sort(x: ArrayLike, /, axis: int | None = -1, *, descending: bool = False,
         stable: bool = True, kind: str | None = None) -> Array:
    """``x`` sorted along ``axis`` (None: the flattened x), x's shape and dtype.

    Ascending, or descending with ``descending=True``; always stable (equal elements keep
    their order, also descending), whatever ``stable``/``kind`` (NumPy's ``kind`` is accepted
    for porting).  NaNs go last (first when descending), -0.0 equals 0.0, complex numbers
    sort lexicographically.  Differentiable: the cotangent flows back through the sorting
    permutation.  IndexError (AxisError) for an axis out of range, including any axis of a
    0-d x.
    """
    x, axis = _sort_operand(x, axis, descending, stable, kind)
    return bind(P.sort_p, x, axis=axis, descending=bool(descending))


def argsort(x: ArrayLike, /, axis: int | None = -1, *, descending: bool = False,
            stable: bool = True, kind: str | None = None) -> Array:
    """The indices that sort ``x`` along ``axis`` (None: the flattened x): x's shape, int32
    (int64 for an axis longer than 2**31 - 1).

    Order as ``sort``.  With ``stable=True`` (default, or ``kind="stable"``/``"mergesort"``)
    equal elements keep their order, also with ``descending=True``; with ``stable=False`` the
    order of ties may differ (64-bit dtypes then use NumPy's faster unstable sort).  Not
    differentiable (integer output).
    """
    x, axis = _sort_operand(x, axis, descending, stable, kind)
    stable = bool(stable) or kind in ("stable", "mergesort")
    return bind(P.argsort_p, x, axis=axis, descending=bool(descending), stable=stable,
                dtype=index_dtype(x.shape[axis]))


def searchsorted(x1: ArrayLike, x2: ArrayLike, /, side: str = "left",
                 sorter: ArrayLike | None = None) -> Array:
    """Insertion indices of ``x2``'s values into the sorted 1-D ``x1``: x2's shape, int32
    (int64 when x1 is longer than 2**31 - 1).

    ``side="left"``: the first index i with ``v <= x1[i]``; ``"right"``: the first with
    ``v < x1[i]`` (len(x1) when none).  ``sorter``: integer indices that sort x1 (x1 itself
    is then unsorted).  x1 must be sorted in the order of ``sort`` (NaNs last); this is not
    checked.  The operands are compared in their promoted dtype (float64 when integers meet a
    float); x2 may be a Python scalar.
    """
    if side not in ("left", "right"):
        raise ValueError(f"side: must be 'left' or 'right', got {side!r}")
    x1 = operand(x1)
    if x1.ndim != 1:
        raise ValueError(f"x1: must be 1-D, got shape {x1.shape}")
    if sorter is not None:
        order = operand(sorter)
        if not dtypes.is_integer(order.dtype):
            raise TypeError(f"sorter: must hold integers, got dtype {order.dtype}")
        if order.shape != x1.shape:
            raise ValueError(f"sorter: shape {order.shape} differs from x1's {x1.shape}")
        x1 = take(x1, order)
    a, v = promote(x1, x2)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8 and x1.dtype.kind in "biu":
        # integers compared in float32 could round onto their neighbours: compare exactly
        a, v = promote(astype(x1, dtypes.float64), x2)
    return bind(P.searchsorted_p, a, v, side=side, dtype=index_dtype(a.shape[0]))


# -- searching ----------------------------------------------------------------------------------

def count_nonzero(x: ArrayLike, /, axis: Axis = None, *, keepdims: bool = False) -> Array:
    """The number of non-zero elements over ``axis`` (None: all; an int or a tuple), int32
    (int64 when the count may exceed 2**31 - 1).  Complex: non-zero when either part is; NaN
    counts as non-zero; bool: True counts.  Shape as ``sum`` (``keepdims`` keeps the axes)."""
    x = operand(x)
    axes = reduction_axes(x, axis)
    _check_bool(keepdims, "keepdims")
    dt = index_dtype(math.prod(x.shape[a] for a in axes))
    nz = x if dtypes.is_bool(x.dtype) else not_equal(x, 0)
    if dt != dtypes.int32:
        nz = astype(nz, dt)
    return astype(_sum(nz, axes, keepdims), dt)


def _concrete_operand(x, arg, fname):
    x = operand(x)
    v = concrete_value(x)
    if v is None:
        raise TypeError(f"{fname}: {arg} must be concrete (the shape of the result depends on "
                        f"its values); call {fname} outside the transformation")
    return x, v


def argwhere(a: ArrayLike, *, size: int | None = None,
             fill_value: ArrayLike | None = None) -> Array:
    """Indices of the non-zero elements of a concrete ``a``, one row per element in C order:
    shape (count, a.ndim), int32 (int64 for an axis longer than 2**31 - 1), as
    ``np.argwhere`` (a 0-d a gives shape (1, 0) or (0, 0)).  With ``size`` (JAX's keyword):
    exactly ``size`` rows, the first ones, padded with ``fill_value`` (0 by default, or one
    per axis); ``a`` may then be traced (under jit or vmap)."""
    if size is not None:
        a = operand(a)
        rows = stack(_nonzero_sized(reshape(a, (1,)) if a.ndim == 0 else a, size, fill_value,
                                    "argwhere", "a"), axis=1)
        return rows[:, :0] if a.ndim == 0 else rows
    a, v = _concrete_operand(a, "a", "argwhere")
    return _wrap(np.argwhere(v), index_dtype(max(v.shape, default=1)))


def flatnonzero(a: ArrayLike, *, size: int | None = None,
                fill_value: ArrayLike | None = None) -> Array:
    """Indices of the non-zero elements of the flattened, concrete ``a``: 1-D, int32 (int64
    when a has more than 2**31 - 1 elements).  With ``size`` (JAX's keyword): exactly ``size``
    indices, the first ones, padded with ``fill_value`` (0 by default); ``a`` may then be
    traced (under jit or vmap)."""
    if size is not None:
        return _nonzero_sized(reshape(operand(a), (-1,)), size, fill_value, "flatnonzero",
                              "a")[0]
    a, v = _concrete_operand(a, "a", "flatnonzero")
    return _wrap(np.flatnonzero(v), index_dtype(v.size))


# -- set functions ---------------------------------------------------------------------------------

def _unique_flat(v, equal_nan, need_order, need_counts):
    """np.unique of the flattened ndarray ``v`` from the stable ``sort``/``argsort``
    primitives (deterministic, and as fast as NumPy's unique or faster): (values, first,
    inverse, counts) as ndarrays, first/inverse None unless ``need_order``, counts None unless
    ``need_counts``.  Equal elements form one value, the first occurrence's (-0.0 or 0.0,
    whichever comes first); NaNs are one value with ``equal_nan``, else each its own, in
    their original order."""
    flat = Tensor._wrap(np.ascontiguousarray(v.reshape(-1)))
    n = flat.size
    order = None
    if need_order:
        order = bind(P.argsort_p, flat, axis=0, descending=False, stable=True,
                     dtype=dtypes.int64)._np()
        s = flat._np()[order]
    else:
        s = bind(P.sort_p, flat, axis=0, descending=False)._np()
    start = np.empty(n, dtype=bool)                 # where each run of equal values begins
    start[:1] = True
    if n > 1:
        np.not_equal(s[1:], s[:-1], out=start[1:])
        if equal_nan and s.dtype.kind in "fc":
            nan = np.isnan(s)
            start[1:] &= ~(nan[1:] & nan[:-1])
    values = s[start]
    counts = first = inverse = None
    if need_counts:
        pos = np.flatnonzero(start)
        counts = np.empty(pos.size, np.int64)
        np.subtract(pos[1:], pos[:-1], out=counts[:-1])
        counts[-1:] = n - pos[-1:]
    if order is not None:
        first = order[start]
        inverse = np.empty(n, np.int64)
        inverse[order] = np.cumsum(start) - 1
    return values, first, inverse, counts


def _unique(x, fname, *, index, inverse, counts, equal_nan, axis=None):
    """The set functions' results for concrete ``x`` as Tensors: (values, index of the first
    occurrences, inverse (x's shape for axis=None), counts), None for what was not asked.
    Under a transformation the values are gathered from x (differentiable)."""
    x, v = _concrete_operand(x, "x" if fname != "unique" else "ar", fname)
    traced = not isinstance(x, Tensor)
    if axis is None:
        vals, first, inv, cnt = _unique_flat(v, equal_nan, index or inverse or traced, counts)
        n = v.size
        if inv is not None:
            inv = inv.reshape(v.shape)
    else:   # distinct slices along an axis: NumPy's
        if v.ndim == 0:
            raise ValueError(f"{fname}: axis={axis} needs a tensor of at least 1 dimension")
        axis = normalize_axis(axis, v.ndim)
        vals, first, inv, cnt = np.unique(v, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis, equal_nan=equal_nan)
        n = v.shape[axis]
    it = index_dtype(n)
    values = take(x, _wrap(first, it), axis=axis) if traced else _wrap(vals)
    return (values,
            _wrap(first, it) if index else None,
            _wrap(inv, index_dtype(len(vals))) if inverse else None,
            _wrap(cnt, it) if counts else None)


def unique_values(x: ArrayLike, /) -> Array:
    """The distinct elements of a concrete ``x`` (flattened), sorted: 1-D, x's dtype.  NaNs
    are all distinct (each appears); -0.0 and 0.0 are one element (of either sign)."""
    return _unique(x, "unique_values", index=False, inverse=False, counts=False,
                   equal_nan=False)[0]


def unique_counts(x: ArrayLike, /) -> tuple[Array, Array]:
    """``(values, counts)`` (a namedtuple): ``unique_values(x)`` and how often each occurs
    (1-D int32; each NaN counts 1)."""
    values, _, _, counts = _unique(x, "unique_counts", index=False, inverse=False,
                                   counts=True, equal_nan=False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: ArrayLike, /) -> tuple[Array, Array]:
    """``(values, inverse_indices)`` (a namedtuple): ``unique_values(x)`` and, for each
    element of x (x's shape, int32), the index in values of its value."""
    values, _, inverse, _ = _unique(x, "unique_inverse", index=False, inverse=True,
                                    counts=False, equal_nan=False)
    return UniqueInverseResult(values, inverse)


def unique_all(x: ArrayLike, /) -> tuple[Array, Array, Array, Array]:
    """``(values, indices, inverse_indices, counts)`` (a namedtuple): ``unique_values(x)``,
    the flat index of each value's first occurrence in x, ``unique_inverse``'s inverse indices
    (x's shape) and ``unique_counts``'s counts; indices and counts int32."""
    return UniqueAllResult(*_unique(x, "unique_all", index=True, inverse=True, counts=True,
                                    equal_nan=False))


def _unique_sized(ar, size, fill_value, equal_nan):
    """JAX's ``unique(ar, size=, fill_value=)`` (axis None): (values, index, inverse, counts)
    with exactly ``size`` values, the smallest distinct ones, padded with ``fill_value`` (the
    smallest value by default; index: the first occurrence of the smallest, counts: 0).
    Composed of front-end ops (a stable argsort), so that ``ar`` may be traced."""
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"unique: size must be an int, got {type(size).__name__}")
    size = int(size)
    if size < 0:
        raise ValueError(f"unique: size must be >= 0, got {size}")
    ar = operand(ar)
    flat = reshape(ar, (-1,))
    n = flat.shape[0]
    if n == 0:
        raise ValueError("unique: size= needs a non-empty ar (its fill value defaults to the "
                         "smallest element)")
    cdt = index_dtype(n + 1)
    order = astype(argsort(flat, stable=True), cdt)
    s = take(flat, order)
    differs = not_equal(s[1:], s[:-1])
    if equal_nan and s.dtype.kind in "fc":
        differs = differs & ~(isnan(s[1:]) & isnan(s[:-1]))
    is_first = concatenate([Tensor._wrap(np.ones(1, bool)), differs])
    starts = _nonzero_sized(is_first, size + 1, n, "unique", "ar")[0]
    starts = astype(starts, cdt)
    valid = Tensor._wrap(np.arange(size, dtype=cdt)) < _sum(astype(is_first, cdt))
    fill = s[0] if fill_value is None else astype(operand(fill_value), s.dtype)
    pos = where(valid, starts[:size], 0)
    values = where(valid, take(s, pos), fill)
    index = astype(where(valid, take(order, pos), order[0]), dtypes.DEFAULT_INT)
    counts = astype(where(valid, starts[1:] - starts[:size], 0), dtypes.DEFAULT_INT)
    rank = astype(cumsum(astype(is_first, cdt)) - 1, dtypes.DEFAULT_INT)
    inverse = reshape(Tensor._wrap(np.zeros(n, dtypes.DEFAULT_INT)).at[order].set(rank),
                      ar.shape)
    return values, index, inverse, counts


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *,
           equal_nan: bool = True, size: int | None = None,
           fill_value: ArrayLike | None = None) -> Array | tuple[Array, ...]:
    """NumPy's ``unique`` of a concrete ``ar``: the sorted distinct elements (of the flattened
    ar, or the distinct slices along ``axis``), followed, as asked, by the indices of their
    first occurrences, the inverse indices (ar's shape for axis=None, else 1-D) and the
    counts, all int32.  ``equal_nan=True`` (NumPy's default) makes all NaNs one element.
    Returns a Tensor alone when nothing else is asked, else a tuple.

    ``size`` (JAX's keyword, axis None only): exactly ``size`` values, the smallest distinct
    ones, the rest ``fill_value`` (default: the smallest element; their indices: the smallest
    element's first occurrence, their counts 0); ``ar`` may then be traced (jit, vmap)."""
    for name, flag in (("return_index", return_index), ("return_inverse", return_inverse),
                       ("return_counts", return_counts), ("equal_nan", equal_nan)):
        _check_bool(flag, name)
    if size is not None:
        if axis is not None:
            raise ValueError("unique: size= is supported with axis=None only")
        values, index, inverse, counts = _unique_sized(ar, size, fill_value, equal_nan)
    elif fill_value is not None:
        raise ValueError("unique: fill_value applies with size= only")
    else:
        values, index, inverse, counts = _unique(
            ar, "unique", index=return_index, inverse=return_inverse, counts=return_counts,
            equal_nan=equal_nan, axis=axis)
    extra = tuple(t for t, asked in ((index, return_index), (inverse, return_inverse),
                                     (counts, return_counts)) if asked)
    return (values,) + extra if extra else values


# -- order statistics ----------------------------------------------------------------------------

# Hyndman & Fan's continuous estimators: the virtual (0-based) index of quantile q among n
# sorted values is n*q + alpha + q*(1 - alpha - beta) - 1 (NumPy's parametrisation).
_ALPHA_BETA = {"linear": (1.0, 1.0), "weibull": (0.0, 0.0), "hazen": (0.5, 0.5),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = ("lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
             "closest_observation")
QUANTILE_METHODS = tuple(_ALPHA_BETA) + _DISCRETE


def _rows_last(a, axis, fname):
    """``a`` as a real float tensor with the reduced axes moved last and merged into one of
    length n: returns (b of shape rest + (n,), n, rest, keepdims shape)."""
    a = as_inexact(operand(a))
    check_real(a, fname)
    axes = reduction_axes(a, axis)
    rest_axes = [i for i in range(a.ndim) if i not in axes]
    rest = tuple(a.shape[i] for i in rest_axes)
    keep = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    n = math.prod(a.shape[i] for i in axes)
    if rest_axes + list(axes) != list(range(a.ndim)):
        a = transpose(a, rest_axes + list(axes))
    return reshape(a, rest + (n,)), n, rest, keep


def _nans(shape, dtype):
    return _wrap(np.full(shape, np.nan, dtype=dtype))


def _const(arr, dtype):
    return _wrap(arr, dtype)


def _mean2(u, v):
    """(u + v) / 2 as NumPy's mean of two values (float16 summed in float32)."""
    if u.dtype == dtypes.float16:
        return astype(_mean2(astype(u, dtypes.float32), astype(v, dtypes.float32)),
                      dtypes.float16)
    return divide(add(u, v), 2.0)


def _median_of_sorted(s, counts):
    """Median of the first ``counts`` (ndarray, rest shape; None: all n) values of each row
    of ``s`` (sorted along its last axis), shape rest: the middle value, or the mean of the two
    middle values for an even count."""
    n = s.shape[-1]
    if counts is None:
        lo, hi = (n - 1) // 2, n // 2
        m = s[..., lo]
        return m if lo == hi else _mean2(m, s[..., hi])
    lo = np.maximum((counts - 1) // 2, 0)
    hi = np.maximum(counts // 2, 0)
    pair = take_along_axis(s, _const(np.stack([lo, hi], -1), index_dtype(n)), -1)
    m_lo, m_hi = pair[..., 0], pair[..., 1]
    return where(_const(lo == hi, dtypes.bool_), m_lo, _mean2(m_lo, m_hi))


def _require_concrete(a, fname):
    """``a`` as an operand, TypeError unless its values are known (NaN-skipping statistics:
    which values are NaN decides which order statistics are taken)."""
    a = operand(a)
    if concrete_value(a) is None:
        raise TypeError(f"{fname}: a must be concrete (which of its values are NaN decides "
                        f"which order statistics are taken)")
    return a


def _nan_counts(s):
    """The number of non-NaN values in each row of sorted ``s`` (concrete; NaNs are last)."""
    return np.count_nonzero(~np.isnan(concrete_value(s)), axis=-1)


def _finish(r, out_shape):
    return reshape(r, out_shape) if r.shape != out_shape else r


def median(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """The median over ``axis`` (None: all; an int or a tuple, whose axes are merged): the
    middle value of the sorted values, or the mean of the two middle ones for an even count.

    Shape as ``sum`` (``keepdims`` keeps the axes as 1); float dtype (ints and bools give
    float32, 64-bit ints float64; real only: TypeError for complex).  NaN where the values
    hold a NaN, and for an empty axis.  Differentiable (through ``sort``; ties split as the
    stable sort orders them).
    """
    _check_bool(keepdims, "keepdims")
    b, n, rest, keep = _rows_last(a, axis, "median")
    out_shape = keep if keepdims else rest
    if n == 0:
        return _nans(out_shape, b.dtype)
    s = sort(b, axis=-1)
    m = where(isnan(s[..., -1]), float("nan"), _median_of_sorted(s, None))
    return _finish(m, out_shape)


def nanmedian(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """The median over ``axis`` ignoring NaNs (as ``median`` of the non-NaN values of each
    slice; NaN for a slice of NaNs only).  ``a`` must be concrete; shapes, dtypes and
    derivatives as ``median``."""
    _check_bool(keepdims, "keepdims")
    b, n, rest, keep = _rows_last(_require_concrete(a, "nanmedian"), axis, "nanmedian")
    out_shape = keep if keepdims else rest
    if n == 0:
        return _nans(out_shape, b.dtype)
    s = sort(b, axis=-1)
    counts = _nan_counts(s)
    m = where(_const(counts == 0, dtypes.bool_), float("nan"), _median_of_sorted(s, counts))
    return _finish(m, out_shape)


def _plan(method, n, q):
    """The order statistics quantile ``q`` (float64, any shape) interpolates among ``n``
    sorted values (n broadcasts with q): (prev, next, gamma, slope), where the result is
    ``lerp(sorted[prev], sorted[next], gamma)`` (prev == next where no interpolation happens),
    and slope = d(virtual index)/dq for the continuous methods (None for the others, whose
    gamma is piecewise constant in q).  Indices are clipped to [0, n - 1]."""
    n = np.asarray(n, dtype=np.float64)
    slope = None
    if method in _ALPHA_BETA:
        if method == "linear":
            vi, slope = (n - 1) * q, n - 1
        else:
            al, be = _ALPHA_BETA[method]
            vi, slope = n * q + (al + q * (1 - al - be)) - 1, n + 1 - al - be
        gamma = vi - np.floor(vi)
    elif method == "midpoint":
        vi = 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
        gamma = np.where(vi % 1 == 0, 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        vi = n * q - 1
        gamma = np.where(vi - np.floor(vi) == 0, 0.5, 1.0)
    else:   # the methods that pick one order statistic
        if method == "lower":
            idx = np.floor((n - 1) * q)
        elif method == "higher":
            idx = np.ceil((n - 1) * q)
        elif method == "nearest":
            idx = np.around((n - 1) * q)            # halves to even, as NumPy
        else:
            shift = 1.0 if method == "inverted_cdf" else 1.5
            g = n * q - shift
            low = np.floor(g)
            take_low = g == low
            if method == "closest_observation":
                take_low &= low % 2 == 1            # the even 1-based order statistic at a tie
            idx = np.where(take_low, low, low + 1)
        idx = np.clip(idx, 0, n - 1).astype(np.int64)
        return idx, idx, np.zeros(idx.shape), None
    prev = np.floor(vi)
    nxt = prev + 1
    clip_hi, clip_lo = vi >= n - 1, vi < 0      # beyond the ends: the extreme value itself
    prev = np.where(clip_hi, n - 1, np.where(clip_lo, 0, prev)).astype(np.int64)
    nxt = np.where(clip_hi, n - 1, np.where(clip_lo, 0, nxt)).astype(np.int64)
    return prev, nxt, gamma, slope


def _lerp(lo, hi, gamma, one_minus, ge_half):
    """NumPy's interpolation: lo + (hi - lo) * gamma, or hi - (hi - lo) * (1 - gamma) where
    gamma >= 1/2 (exact at both ends)."""
    diff = subtract(hi, lo)
    return where(ge_half, subtract(hi, multiply(diff, one_minus)), add(lo, multiply(diff, gamma)))


def _python_numbers(q):
    """True for a Python int/float or a (nested) list/tuple of them."""
    if type(q) in (int, float):
        return True
    return isinstance(q, (list, tuple)) and all(_python_numbers(e) for e in q)


def _quantiles(a, q, axis, method, keepdims, fname, scale, skip_nan):
    """The shared body of quantile/percentile/nanquantile/nanpercentile (q in [0, scale])."""
    if method not in QUANTILE_METHODS:
        raise ValueError(f"method: must be one of {QUANTILE_METHODS}, got {method!r}")
    _check_bool(keepdims, "keepdims")
    weak = _python_numbers(q)     # q in float64, as NumPy; the result in a's dtype
    qt = None if weak else operand(q)
    if qt is not None and not (dtypes.is_integer(qt.dtype) or dtypes.is_float(qt.dtype)):
        raise TypeError(f"q: must be real numbers, got dtype {qt.dtype}")
    qv = q if weak else concrete_value(qt)
    if qv is None:
        raise TypeError(f"{fname}: q must be concrete (it decides which order statistics are "
                        f"taken)")
    qv = np.asarray(qv, dtype=np.float64)
    if not (np.all(qv >= 0) and np.all(qv <= scale)):
        what = "quantiles" if scale == 1 else "percentiles"
        raise ValueError(f"q: {what} must be in the range [0, {scale}], got {q!r}")
    b, n, rest, keep = _rows_last(_require_concrete(a, fname) if skip_nan else a, axis, fname)
    dt = b.dtype if weak else dtypes.result_type(b.dtype, as_inexact(qt).dtype)
    b = astype(b, dt)
    q_shape = qv.shape
    out_shape = q_shape + (keep if keepdims else rest)
    if n == 0:
        return _nans(out_shape, dt)
    qf = (qv / scale).reshape(-1)                          # (k,)
    k = qf.size
    s = sort(b, axis=-1)
    if skip_nan:
        counts = _nan_counts(s)
        prev, nxt, gamma, slope = _plan(method, counts[..., None], qf)   # (rest..., k)
    else:
        prev, nxt, gamma, slope = _plan(method, n, qf)                   # (k,)
    prev = np.broadcast_to(prev, rest + (k,))
    nxt = np.broadcast_to(nxt, rest + (k,))
    it = index_dtype(n)
    if (prev == nxt).all():
        r = take_along_axis(s, _const(prev, it), -1)
    else:
        both = take_along_axis(s, _const(np.concatenate([prev, nxt], -1), it), -1)
        lo, hi = both[..., :k], both[..., k:]
        g, g1 = _const(gamma, dt), _const(1 - gamma, dt)
        if slope is not None and qt is not None and not isinstance(qt, Tensor):
            # q is traced: gamma moves with it (d gamma / dq = slope / scale); its value here
            # is the concrete one, so the result equals the untraced computation
            dq = multiply(reshape(subtract(astype(qt, dt), _const(qv, dt)), (k,)),
                          _const(slope / scale, dt))
            g, g1 = add(g, dq), subtract(g1, dq)
        r = _lerp(lo, hi, g, g1, _const(gamma >= 0.5, dtypes.bool_))
    if skip_nan:
        empty = _const(np.broadcast_to(counts[..., None] == 0, rest + (k,)), dtypes.bool_)
        r = where(empty, float("nan"), r)
    else:
        r = where(isnan(s[..., -1:]), float("nan"), r)
    return _finish(moveaxis(r, -1, 0), out_shape)


def quantile(a: ArrayLike, q: ArrayLike, axis: Axis = None, method: str = "linear",
             keepdims: bool = False) -> Array:
    """Quantiles ``q`` (in [0, 1]; a scalar or a tensor of any shape, concrete) of ``a`` over
    ``axis`` (None: all; an int or a tuple, whose axes are merged), as NumPy's ``quantile``.

    ``method``: "linear" (default: interpolation between the order statistics at (n - 1) q),
    the other Hyndman & Fan estimators "weibull", "hazen", "median_unbiased",
    "normal_unbiased", "interpolated_inverted_cdf", "inverted_cdf", "averaged_inverted_cdf",
    "closest_observation", or "lower", "higher", "nearest", "midpoint".  Shape: q's shape
    followed by a's reduced shape (``keepdims`` keeps the axes as 1).  Dtype: a's float dtype
    (ints give float32, 64-bit ints float64), promoted with q's when q is an array (Python
    numbers and lists of them are taken in float64 and do not promote).  NaN where
    the values hold a NaN and for an empty axis.  Differentiable in ``a`` (through ``sort``)
    and, for the interpolating methods, in ``q``.  ValueError for q outside [0, 1] or an
    unknown method; TypeError for complex a.
    """
    return _quantiles(a, q, axis, method, keepdims, "quantile", 1, False)


def percentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, method: str = "linear",
               keepdims: bool = False) -> Array:
    """``quantile(a, q / 100, ...)``: percentiles ``q`` in [0, 100]; see ``quantile``."""
    return _quantiles(a, q, axis, method, keepdims, "percentile", 100, False)


def nanquantile(a: ArrayLike, q: ArrayLike, axis: Axis = None, method: str = "linear",
                keepdims: bool = False) -> Array:
    """``quantile`` ignoring NaNs: the quantiles of each slice's non-NaN values (NaN for a
    slice of NaNs only).  ``a`` must be concrete; see ``quantile``."""
    return _quantiles(a, q, axis, method, keepdims, "nanquantile", 1, True)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, method: str = "linear",
                  keepdims: bool = False) -> Array:
    """``nanquantile(a, q / 100, ...)``: percentiles ``q`` in [0, 100] ignoring NaNs."""
    return _quantiles(a, q, axis, method, keepdims, "nanpercentile", 100, True)
