"""Arranging elements: the Array API's manipulation functions (concat, permute_dims, tile,
repeat, roll, unstack, ...) and NumPy's arrangement names (atleast_*d, h/v/d/column_stack,
rot90, diagonal, trace, array_split, diff, select, interp ...).

Views where NumPy returns views (permute_dims, matrix_transpose, broadcast_arrays, unstack,
atleast_*d, rot90, fliplr/flipud, diagonal of a contiguous tensor, array_split); new tensors
where NumPy copies (concat and the stacks, tile, repeat, roll, diff, select, interp).  Every
function is a composition of movement primitives, ``cat``, ``gather`` and elementwise ops, so
it is differentiable wherever its values depend smoothly on its inputs.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.frontend import reductions
from nx_rune.frontend._core import (
    as_inexact,
    astype,
    broadcast_shapes,
    broadcast_to,
    normalize_shape,
    operand,
    promote,
)
from nx_rune.frontend.elementwise import (
    add,
    clip,
    divide,
    equal,
    greater,
    isnan,
    less,
    less_equal,
    logical_and,
    multiply,
    not_equal,
    subtract,
    where,
)
from nx_rune.frontend.indexing import concrete_value, take
from nx_rune.frontend.movement import (
    check_addressable,
    check_pieces,
    concatenate,
    copy,
    flip,
    index_bounds,
    reshape,
    sections_count,
    shares_memory,
    shrink,
    split_at,
    swapaxes,
    transpose,
)
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.typing import Array, ArrayLike, Axis, DTypeLike

__all__ = ["concat", "permute_dims", "matrix_transpose", "broadcast_arrays", "unstack", "tile",
           "repeat", "roll", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack",
           "dstack", "column_stack", "rot90", "fliplr", "flipud", "diagonal", "trace",
           "array_split", "diff", "ediff1d", "select", "interp"]


def _fresh(out, x):
    """``out`` as a tensor of its own: a copy when it is a view of concrete ``x``'s memory
    (a tracer's value is never written in place, so tracers pass as they are)."""
    if type(out) is Tensor and type(x) is Tensor and shares_memory(out, x):
        return copy(out)
    return out


def _int(value, name):
    """``value`` as an int (operator.index: 1.5 is a TypeError naming ``name``)."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected an int, got {value!r}") from None


def _ints(value, name):
    """An int or a sequence of ints as a tuple (operator.index: 1.5 is a TypeError)."""
    if isinstance(value, (np.ndarray, ArrayBase)) and value.ndim == 0:
        value = value.item() if isinstance(value, np.ndarray) else value
    try:
        if isinstance(value, (Sequence, np.ndarray, ArrayBase)):
            return tuple(operator.index(v) for v in value)
        return (operator.index(value),)
    except TypeError:
        raise TypeError(f"{name}: expected an int or a sequence of ints, got {value!r}") from None


# -- the Array API's names -------------------------------------------------------------------

def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Array:
    """Join ``arrays`` along an existing ``axis`` (None: flattened first).  Shapes must agree
    outside ``axis``; promoted dtype; always a new tensor."""
    return concatenate(arrays, axis)


def permute_dims(x: ArrayLike, /, axes: Sequence[int]) -> Array:
    """x with its axes permuted (result axis i is x's axis ``axes[i]``; ``axes`` a permutation
    of range(x.ndim), negative entries allowed); same dtype; a view."""
    return transpose(x, axes)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """The transpose of each matrix of a stack: (..., M, N) -> (..., N, M); same dtype; a view.
    ValueError for fewer than 2 dimensions."""
    x = operand(x)
    if x.ndim < 2:
        raise ValueError(f"x: matrix_transpose needs at least 2 dimensions, got shape {x.shape}")
    return swapaxes(x, -1, -2)


def broadcast_arrays(*arrays: ArrayLike) -> list[Array]:
    """The arrays broadcast against one another: a list of views of the common shape, each of
    its input's dtype.  ValueError naming the shapes when they do not broadcast."""
    xs = [operand(a) for a in arrays]
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of x along ``axis``: a tuple of x.shape[axis] views, each of x's shape without
    that axis and x's dtype.  IndexError for an axis out of range (0-d x included)."""
    x = operand(x)
    ax = normalize_axis(axis, x.ndim)
    rest = x.shape[:ax] + x.shape[ax + 1:]
    check_pieces(x.shape[ax], "axis")
    out = []
    for i in range(x.shape[ax]):
        lim = [(0, d) for d in x.shape]
        lim[ax] = (i, i + 1)
        out.append(reshape(shrink(x, lim), rest))
    return tuple(out)


def tile(x: ArrayLike, repetitions: int | Sequence[int] | None = None, /, *,
         reps: int | Sequence[int] | None = None) -> Array:
    """x repeated ``repetitions[i]`` times along axis i (an int or a tuple of non-negative
    ints; the shorter of x.shape and repetitions is padded with leading 1s).  Shape: the
    products of the padded sizes; x's dtype; always a new tensor.  ``reps=`` is NumPy's
    keyword for ``repetitions``.

    One strided copy: x viewed as (1, n0, 1, n1, ...) broadcast to (r0, n0, r1, n1, ...) and
    merged to (r0 * n0, r1 * n1, ...).
    """
    x = operand(x)
    if (repetitions is None) == (reps is None):
        raise TypeError("tile: give the repetitions once, positionally or as reps=")
    reps = _ints(repetitions if reps is None else reps, "repetitions")
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"repetitions: must be non-negative, got {reps}")
    nd = builtins.max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    normalize_shape(tuple(d for r, n in zip(reps, shape) for d in (r, n)), "repetitions")
    check_addressable(tuple(r * n for r, n in zip(reps, shape)), x.dtype, "repetitions")
    inner = reshape(x, tuple(d for n in shape for d in (1, n)))
    # the intermediate (r0, n0, r1, n1, ...) view may count more elements than an ndarray can
    # (an empty result with a huge repetition): the View algebra holds it, the result is checked
    wide = bind(P.expand_p, inner, shape=tuple(d for r, n in zip(reps, shape) for d in (r, n)))
    return _fresh(reshape(wide, tuple(r * n for r, n in zip(reps, shape))), x)


def repeat(x: ArrayLike, /, repeats: int | ArrayLike, axis: int | None = None) -> Array:
    """Each element of x repeated ``repeats`` times along ``axis`` (None: of the flattened x,
    giving a 1-D result).

    repeats: a non-negative int, or a concrete 1-D integer array of length 1 or x.shape[axis]
    (one count per element; a traced one is a TypeError: the result's shape depends on it).
    Shape: x's with that axis's size multiplied (or summed over the counts); x's dtype; a new
    tensor.  An int count is one strided copy of a broadcast view (for short rows, a few
    items repeated up to 4 times, r interleaved copies instead: the strided copy goes row by
    row), counts per element a gather.
    """
    x = operand(x)
    if axis is None:
        x, ax = reshape(x, (-1,)), 0
    else:
        ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    counts = _repeat_counts(repeats)
    if counts.ndim == 0 or counts.shape == (1,):
        r = int(counts.reshape(()))
        if r < 0:
            raise ValueError(f"repeats: must be non-negative, got {r}")
        normalize_shape(x.shape[:ax + 1] + (r,) + x.shape[ax + 1:], "repeats")
        check_addressable(x.shape[:ax] + (n * r,) + x.shape[ax + 1:], x.dtype, "repeats")
        return _repeat_one_count(x, r, ax)
    if counts.shape != (n,):
        raise ValueError(f"repeats: shape {counts.shape} does not fit axis {ax} of size {n} "
                         f"(expected (1,) or ({n},))")
    if (counts < 0).any():
        raise ValueError("repeats: counts must be non-negative")
    # the total in Python ints: NumPy's int64 sum would wrap around
    total = builtins.sum(int(c) for c in counts)
    normalize_shape(x.shape[:ax] + (total,) + x.shape[ax + 1:], "repeats")
    check_addressable(x.shape[:ax] + (total,) + x.shape[ax + 1:], x.dtype, "repeats")
    if total * 8 > 2**63 - 1:
        raise ValueError(f"repeats: {total} repetitions in all are too many to address")
    idx = np.repeat(np.arange(n, dtype=np.int64 if n > 2**31 - 1 else np.int32), counts)
    return take(x, Tensor._wrap(idx), axis=ax)


def _repeat_one_count(x, r, ax):
    """repeat with one count r: x viewed as (..., n, 1, B), made (..., n, r, B) and merged to
    (..., n * r, B).  The strided copy of a broadcast view copies rows of B items, so for
    short rows and few repetitions r copies written side by side (a concatenation) are faster."""
    n = x.shape[ax]
    inner = reshape(x, x.shape[:ax + 1] + (1,) + x.shape[ax + 1:])
    wide_shape = x.shape[:ax + 1] + (r,) + x.shape[ax + 1:]
    if 1 < r <= 4 and math.prod(x.shape[ax + 1:]) < 8:
        wide = concatenate([inner] * r, ax + 1)
    else:
        wide = broadcast_to(inner, wide_shape)
    return _fresh(reshape(wide, x.shape[:ax] + (n * r,) + x.shape[ax + 1:]), x)


def _repeat_counts(repeats):
    if isinstance(repeats, ArrayBase):
        v = concrete_value(repeats)
        if v is None:
            raise TypeError("repeats: must be concrete (the result's shape depends on it); it "
                            "is a traced value here")
    else:
        v = np.asarray(repeats)
        if v.size == 0 and v.ndim == 1:   # [] counts nothing: an integer array
            v = v.astype(np.int64)
    if v.dtype.kind == "O" and all(isinstance(r, int) for r in np.ravel(v)):
        raise ValueError(f"repeats: {repeats!r} does not fit in a 64-bit integer")
    if v.dtype.kind not in "iu" or v.ndim > 1:
        if v.dtype.kind == "b" and v.ndim == 0:   # a Python bool counts as 0 or 1, as NumPy
            return v.astype(np.int64)
        raise TypeError(f"repeats: expected an int or a 1-D integer array, got {repeats!r}")
    return v


def roll(x: ArrayLike, /, shift: int | Sequence[int], axis: Axis = None) -> Array:
    """x with its elements shifted by ``shift`` places along ``axis`` (those pushed past the end
    come back at the start).  shift and axis: ints or sequences (an int is used for every axis;
    shifts of a repeated axis add up); axis None rolls the flattened x and restores its shape.
    Same shape and dtype; a new tensor (one roll primitive per rolled axis)."""
    x = operand(x)
    shifts = _ints(shift, "shift")
    if axis is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, builtins.sum(shifts), axis=0), x.shape)
    axes = tuple(normalize_axis(a, x.ndim) for a in _ints(axis, "axis"))
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"shift: {len(shifts)} shifts for {len(axes)} axes")
    total = {}
    for s, a in zip(shifts, axes):
        total[a] = total.get(a, 0) + s
    out = x
    for a, s in total.items():
        n = x.shape[a]
        s = s % n if n else 0
        if s:
            out = bind(P.roll_p, out, shift=s, axis=a)
    return out if out is not x else copy(x)


# -- NumPy's names -------------------------------------------------------------------------------

def _at_least(x, nd):
    x = operand(x)
    if x.ndim >= nd:
        return x
    if nd == 3 and x.ndim == 2:
        return reshape(x, x.shape + (1,))
    if nd == 3 and x.ndim == 1:
        return reshape(x, (1,) + x.shape + (1,))
    return reshape(x, (1,) * (nd - x.ndim) + x.shape)


def _one_or_tuple(out):
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: ArrayLike) -> Array | tuple[Array, ...]:
    """Each input with at least 1 dimension (a 0-d one becomes shape (1,)); views, same dtypes.
    One input gives a tensor, several a tuple."""
    return _one_or_tuple([_at_least(a, 1) for a in arys])


def atleast_2d(*arys: ArrayLike) -> Array | tuple[Array, ...]:
    """Each input with at least 2 dimensions: () -> (1, 1), (n,) -> (1, n); views, same dtypes.
    One input gives a tensor, several a tuple."""
    return _one_or_tuple([_at_least(a, 2) for a in arys])


def atleast_3d(*arys: ArrayLike) -> Array | tuple[Array, ...]:
    """Each input with at least 3 dimensions: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) ->
    (m, n, 1); views, same dtypes.  One input gives a tensor, several a tuple."""
    return _one_or_tuple([_at_least(a, 3) for a in arys])


def _rows(tup):
    """An array given where a sequence of arrays is expected, as NumPy reads it: the list of
    its sub-arrays along the first axis."""
    if isinstance(tup, (ArrayBase, np.ndarray)):
        x = operand(tup)
        if x.ndim == 0:
            raise TypeError("tup: expected a sequence of arrays, got a 0-d array")
        return [x[i] for i in range(x.shape[0])]
    return tup


def _stack_with(tup, nd, axis_of, dtype, name):
    tup = _rows(tup)
    if not isinstance(tup, Sequence):
        raise TypeError(f"tup: {name} takes a sequence of arrays (a list or tuple), got "
                        f"{type(tup).__name__}")
    xs = [_at_least(a, nd) for a in tup]
    if not xs:
        raise ValueError(f"tup: {name} needs at least one array")
    out = concatenate(xs, axis_of(xs[0]))
    return out if dtype is None else astype(out, dtype)


def hstack(tup: Sequence[ArrayLike], *, dtype: DTypeLike = None) -> Array:
    """Join along the second axis (the first for 1-D inputs; 0-d ones count as 1-D).  Shapes
    must agree elsewhere; promoted dtype (or ``dtype``); a new tensor."""
    return _stack_with(tup, 1, lambda x: 0 if x.ndim == 1 else 1, dtype, "hstack")


def vstack(tup: Sequence[ArrayLike], *, dtype: DTypeLike = None) -> Array:
    """Join along the first axis after making inputs at least 2-D ((n,) -> (1, n)); promoted
    dtype (or ``dtype``); a new tensor."""
    return _stack_with(tup, 2, lambda x: 0, dtype, "vstack")


def dstack(tup: Sequence[ArrayLike], *, dtype: DTypeLike = None) -> Array:
    """Join along the third axis after making inputs at least 3-D ((n,) -> (1, n, 1), (m, n) ->
    (m, n, 1)); promoted dtype (or ``dtype``); a new tensor."""
    return _stack_with(tup, 3, lambda x: 2, dtype, "dstack")


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """1-D inputs as columns ((n,) -> (n, 1); 0-d -> (1, 1)), joined along the second axis
    with the 2-D (or higher) ones; promoted dtype; a new tensor."""
    tup = _rows(tup)
    if not isinstance(tup, Sequence):
        raise TypeError(f"tup: column_stack takes a sequence of arrays (a list or tuple), got "
                        f"{type(tup).__name__}")
    xs = [operand(a) for a in tup]
    xs = [reshape(x, (-1, 1)) if x.ndim < 2 else x for x in xs]
    if not xs:
        raise ValueError("tup: column_stack needs at least one array")
    return concatenate(xs, 1)


def rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """m rotated by 90 degrees ``k`` times in the plane of ``axes`` (from the first axis
    towards the second; k may be negative).  m needs at least 2 dimensions; axes two distinct
    axes (ValueError otherwise).  Shape: the two axes swapped for odd k; same dtype; a view."""
    m = operand(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"axes: expected 2 axes, got {axes!r}")
    if m.ndim < 2:
        raise ValueError(f"m: rot90 needs at least 2 dimensions, got shape {m.shape}")
    a0, a1 = normalize_axis(axes[0], m.ndim, "axes"), normalize_axis(axes[1], m.ndim, "axes")
    if a0 == a1:
        raise ValueError(f"axes: must be different, got {axes!r}")
    k = _int(k, "k") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = a1, a0
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def fliplr(m: ArrayLike) -> Array:
    """m with the order along axis 1 reversed (m at least 2-D, ValueError otherwise); a view."""
    m = operand(m)
    if m.ndim < 2:
        raise ValueError(f"m: fliplr needs at least 2 dimensions, got shape {m.shape}")
    return flip(m, 1)


def flipud(m: ArrayLike) -> Array:
    """m with the order along axis 0 reversed (m at least 1-D, ValueError otherwise); a view."""
    m = operand(m)
    if m.ndim < 1:
        raise ValueError("m: flipud needs at least 1 dimension, got a 0-d tensor")
    return flip(m, 0)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The diagonal ``a[..., i, i + offset]`` of the planes of ``axis1`` and ``axis2`` (offset
    > 0 above the main diagonal, < 0 below).  Shape: a's other axes, then the diagonal's length
    (0 when the offset leaves the plane); a's dtype.  A view of a contiguous a (a strided view),
    of a copy of a otherwise.  ValueError for fewer than 2 dimensions or equal axes."""
    a = operand(a)
    if a.ndim < 2:
        raise ValueError(f"a: diagonal needs at least 2 dimensions, got shape {a.shape}")
    ax1, ax2 = normalize_axis(axis1, a.ndim, "axis1"), normalize_axis(axis2, a.ndim, "axis2")
    if ax1 == ax2:
        raise ValueError(f"axis1, axis2: must be different axes, got {axis1} and {axis2}")
    offset = _int(offset, "offset")
    n1, n2 = a.shape[ax1], a.shape[ax2]
    length = builtins.max(0, builtins.min(n1, n2 - offset) if offset >= 0
                          else builtins.min(n1 + offset, n2))
    cs = [math.prod(a.shape[i + 1:]) for i in range(a.ndim)]   # C-order strides of a
    rest = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    shape = tuple(a.shape[i] for i in rest) + (length,)
    start = offset * cs[ax2] if offset >= 0 else -offset * cs[ax1]
    strides = tuple(cs[i] for i in rest) + (cs[ax1] + cs[ax2],)
    return bind(P.as_strided_p, a, shape=shape, strides=strides, offset=start)


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1,
          dtype: DTypeLike = None) -> Array:
    """Sums along the diagonals of ``diagonal(a, offset, axis1, axis2)``.  Shape: a's axes
    other than axis1 and axis2; dtype: ``sum``'s of a's dtype (8/16-bit ints and bool sum in
    int32), or ``dtype`` when given (the elements are converted first)."""
    d = diagonal(a, offset, axis1, axis2)
    if dtype is not None:
        dt = dtypes.check_dtype(dtype)
        return astype(reductions.sum(astype(d, dt), -1), dt)
    return reductions.sum(d, -1)


def array_split(ary: ArrayLike, indices_or_sections: int | Sequence[int],
                axis: int = 0) -> list[Array]:
    """Split ``ary`` along ``axis`` into ``indices_or_sections`` pieces (an int N > 0: the
    first n % N pieces one longer than the rest, N need not divide n) or at the given indices
    (slice bounds, as ``split``).  A list of views of ary's dtype.  TypeError for a float N."""
    x = operand(ary)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    k = sections_count(indices_or_sections, "indices_or_sections")
    if k is None:
        return split_at(x, index_bounds(indices_or_sections, n, "indices_or_sections"), ax)
    if k <= 0:
        raise ValueError(f"indices_or_sections: the number of sections must be > 0, got {k}")
    check_pieces(k, "indices_or_sections")
    size, extra = divmod(n, k)
    bounds = [0]
    for i in range(k):
        bounds.append(bounds[-1] + size + (1 if i < extra else 0))
    return split_at(x, bounds, ax)


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:
    """The n-th forward difference ``out[i] = a[i + 1] - a[i]`` along ``axis``, applied n times
    (bool tensors: ``!=``), after joining ``prepend`` and ``append`` (0-d ones broadcast to a
    slice of a) to a along ``axis``.

    Shape: a's with that axis's size m + len(prepend) + len(append) - n (at least 0); dtype: a's
    (promoted with prepend/append).  n = 0 returns a; ValueError for n < 0 or a 0-d a.
    """
    x = operand(a)
    n = _int(n, "n")
    if n < 0:
        raise ValueError(f"n: order must be non-negative, got {n}")
    if x.ndim == 0:
        raise ValueError("a: diff needs at least 1 dimension, got a 0-d tensor")
    ax = normalize_axis(axis, x.ndim)
    if n == 0:
        return x
    parts = [x]
    for name, v in (("prepend", prepend), ("append", append)):
        if v is None:
            continue
        v, _ = promote(v, x)
        if v.ndim == 0:
            v = broadcast_to(v, x.shape[:ax] + (1,) + x.shape[ax + 1:])
        if name == "prepend":
            parts.insert(0, v)
        else:
            parts.append(v)
    if len(parts) > 1:
        x = concatenate(parts, ax)
    op = not_equal if dtypes.is_bool(x.dtype) else subtract
    for _ in range(n):
        m = x.shape[ax]
        if m == 0:
            break
        hi = [(0, d) for d in x.shape]
        lo = list(hi)
        hi[ax], lo[ax] = (1, m), (0, m - 1)
        x = op(shrink(x, hi), shrink(x, lo))
    return x


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
            to_begin: ArrayLike | None = None) -> Array:
    """Differences of consecutive elements of the flattened ``ary``, with ``to_begin`` and
    ``to_end`` (flattened) joined before and after.  Shape (max(size - 1, 0) + len(to_begin) +
    len(to_end),); ary's dtype: to_begin/to_end must cast to it under NumPy's "same_kind" rule
    (TypeError otherwise; Python numbers are weak).  TypeError for bool ary (NumPy subtracts)."""
    x = reshape(operand(ary), (-1,))
    if dtypes.is_bool(x.dtype):
        raise TypeError("ary: ediff1d subtracts, which is not defined for bool tensors")
    m = x.shape[0]
    parts = [subtract(shrink(x, ((1, m),)), shrink(x, ((0, m - 1),)))] if m else \
        [reshape(x, (0,))]
    for name, v in (("to_begin", to_begin), ("to_end", to_end)):
        if v is None:
            continue
        if isinstance(v, (bool, int, float, complex)):
            src = dtypes.weak_result_type(x.dtype, v)
        else:
            v = operand(v)
            src = v.dtype
        if not np.can_cast(src, x.dtype, "same_kind"):
            raise TypeError(f"{name}: its dtype ({src}) must cast to ary's ({x.dtype}) under "
                            f"the 'same_kind' rule")
        v = reshape(astype(v, x.dtype), (-1,))
        if name == "to_begin":
            parts.insert(0, v)
        else:
            parts.append(v)
    return concatenate(parts, 0) if len(parts) > 1 else parts[0]


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0) -> Array:
    """Elementwise, the entry of the first choice whose condition holds, else ``default``.

    condlist: bool arrays; choicelist: as many arrays; everything broadcasts together.  dtype:
    the choices and default promoted (Python scalars weak); a new tensor.  ValueError for
    empty or unequal lists, TypeError for a non-bool condition.  Differentiable in the choices
    and the default."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist, choicelist: must have the same length, got "
                         f"{len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise ValueError("condlist: select needs at least one condition")
    conds = [operand(c) for c in condlist]
    for i, c in enumerate(conds):
        if not dtypes.is_bool(c.dtype):
            raise TypeError(f"condlist: entry {i} must be a bool array, got dtype {c.dtype}")
    *choices, default = promote(*choicelist, default)
    shape = broadcast_shapes(*[t.shape for t in conds + choices + [default]])
    out = broadcast_to(default, shape)
    for c, v in zip(reversed(conds), reversed(choices)):
        out = where(c, v, out)
    return out


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | None = None,
           right: ArrayLike | None = None) -> Array:
    """The piecewise-linear interpolant through the points (xp, fp) at ``x``, as NumPy.

    xp: 1-D, increasing, real; fp: 1-D of the same length (real or complex); x: any shape.
    Below xp[0] gives ``left`` (default fp[0]), above xp[-1] ``right`` (default fp[-1]).
    Shape: x's; dtype: the promoted inexact dtype of x, xp, fp.  Differentiable in x, xp, fp,
    left and right (the segment of each x is found from the concrete values).  ValueError for
    empty or mismatched xp and fp.
    """
    x, xp = promote(x, xp)
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"x, xp: must be real, got dtype {x.dtype}")
    x, xp = as_inexact(x), as_inexact(xp)
    fp = operand(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError(f"xp, fp: must be 1-D, got shapes {xp.shape} and {fp.shape}")
    m = xp.shape[0]
    if fp.shape[0] != m:
        raise ValueError(f"xp, fp: must have the same length, got {m} and {fp.shape[0]}")
    if m == 0:
        raise ValueError("xp: the array of sample points is empty")
    dt = dtypes.result_type(x.dtype, fp.dtype)
    dt = dt if dtypes.is_inexact(dt) else as_inexact(fp).dtype
    fp = astype(fp, dt)
    first, last = (reshape(shrink(t, ((i, i + 1),)), ()) for t, i in ((xp, 0), (xp, m - 1)))
    f_first, f_last = reshape(shrink(fp, ((0, 1),)), ()), reshape(shrink(fp, ((m - 1, m),)), ())
    if m == 1:
        res = broadcast_to(f_first, x.shape)
    else:
        j = _segments(x, xp)
        x0, x1 = take(xp, j), take(xp, add(j, 1))
        y0, y1 = take(fp, j), take(fp, add(j, 1))
        dx = subtract(x1, x0)
        # where x lies in [x0, x1) the segment is not empty; elsewhere (x outside xp, the
        # clipped segments) dx may be 0: divide by 1 there, never produce nan derivatives
        dx = where(equal(dx, 0), 1, dx)
        slope = divide(subtract(y1, y0), dx)
        res = add(multiply(slope, subtract(x, x0)), y0)
        # NumPy's rules for infinite values: retry from the right end, then a flat segment
        retry = add(multiply(slope, subtract(x, x1)), y1)
        res = where(isnan(res), retry, res)
        res = where(logical_and(isnan(res), equal(y0, y1)), y0, res)
        res = where(equal(x, x0), y0, res)
    res = where(equal(x, last), f_last, res)
    res = where(less(x, first), f_first if left is None else left, res)
    res = where(greater(x, last), f_last if right is None else right, res)
    return astype(res, dt)


def _segments(x, xp):
    """For each x, the j in [0, len(xp) - 2] with xp[j] <= x < xp[j + 1] (clipped at the ends),
    as int32 indices of x's shape: a constant of the concrete values (piecewise constant in
    them: no derivative), or from comparisons when they are traced."""
    m = xp.shape[0]
    xv, xpv = concrete_value(x), concrete_value(xp)
    if xv is not None and xpv is not None:
        j = np.searchsorted(xpv, xv, side="right") - 1
        return Tensor._wrap(np.array(np.clip(j, 0, m - 2), dtype=np.int32))
    le = less_equal(reshape(xp, (1,) * x.ndim + (m,)), reshape(x, x.shape + (1,)))
    return clip(subtract(reductions.sum(le, -1), 1), 0, m - 2)
