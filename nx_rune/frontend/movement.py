"""Movement and memory: reshape, transpose, pad, shrink, flip, as_strided, concatenate, stack,
split (views wherever strides allow: no data moves), and copy, contiguous, assign.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.errors import ShapeError
from nx_rune.frontend._core import (  # noqa: F401 (re-exported)
    _holds_arrays,
    astype,
    broadcast_to,
    check_addressable,
    const,
    normalize_shape,
    operand,
    promote,
    reduction_axes,
)
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor, fast_reshape, fast_transpose
from nx_rune.typing import Array, ArrayLike, Axis, ShapeLike

__all__ = ["reshape", "ravel", "transpose", "permute", "moveaxis", "swapaxes", "expand_dims",
           "squeeze", "pad", "shrink", "flip", "as_strided", "concatenate", "stack", "split",
           "copy", "contiguous", "is_contiguous", "shares_memory", "assign", "size", "shape",
           "ndim"]


# -- movement ------------------------------------------------------------------------------------

def reshape(x: ArrayLike, shape: ShapeLike, *, copy: bool | None = None) -> Array:
    """``x`` with ``shape`` (one entry may be -1), same dtype; a view when strides allow, else a
    copy.  ``copy``: True always copies; False never does (ValueError when the strides need
    a copy; a traced value is never written in place, so it is not checked); None (default)
    copies only when needed.  ValueError naming both shapes when the element counts differ."""
    if copy is None:
        r = fast_reshape(x, shape)
        if r is not None:
            return r
    x = operand(x)
    shape = _resolve_shape(x, shape)
    if shape != x.shape:
        check_addressable(shape, x.dtype)
    if copy is None:
        return x if shape == x.shape else bind(P.reshape_p, x, shape=shape)
    # the parameter shadows the function copy(): bind copy_p directly
    needs_copy = shape != x.shape and isinstance(x, Tensor) and x.view.reshape(shape) is None
    if copy is False and needs_copy:
        raise ValueError(f"copy: False, but reshaping a tensor of shape {x.shape} and strides "
                         f"{x.strides} to {shape} needs a copy")
    out = x if shape == x.shape else bind(P.reshape_p, x, shape=shape)
    return bind(P.copy_p, out) if copy and not needs_copy else out


def _resolve_shape(x, shape):
    if type(shape) is tuple:   # the common case: non-negative Python ints of x's size
        for s in shape:
            if type(s) is not int or s < 0:
                break
        else:
            if math.prod(shape) == x.size:
                return shape
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"shape: expected an int or a sequence of ints, got {shape!r}")
    if isinstance(shape, (int, np.integer)) or getattr(shape, "ndim", None) == 0:
        shape = (shape,)
    try:
        # operator.index: 3.7 is a TypeError, never truncated to 3 (a 0-d int tensor is fine)
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape: expected an int or a sequence of ints, got {shape!r}") from None
    if shape.count(-1) > 1:
        raise ValueError(f"shape: only one -1 allowed, got {shape}")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or x.size % known:
            raise ShapeError(f"shape: cannot reshape a tensor of shape {x.shape} ({x.size} "
                             f"elements) into {shape}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"shape: negative dimension in {shape}")
    if math.prod(shape) != x.size:
        raise ShapeError(f"shape: cannot reshape a tensor of shape {x.shape} ({x.size} "
                         f"elements) into {shape}")
    return shape


def ravel(x: ArrayLike) -> Array:
    """``x`` flattened in C order: shape (x.size,), same dtype."""
    return reshape(x, (-1,))


def transpose(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Axes permuted: result axis i is x's axis ``axes[i]`` (reversed by default); same dtype; a
    view."""
    if axes is None:
        r = fast_transpose(x)
        if r is not None:
            return r
    x = operand(x)
    if axes is None:  # reversed: always a valid permutation
        nd = len(x.shape)
        if nd < 2:
            return x
        return bind(P.permute_p, x, axes=tuple(range(nd - 1, -1, -1)))
    axes = tuple(axes)
    if len(axes) != x.ndim:
        raise ValueError(f"axes: {axes} is not a permutation of the {x.ndim} axes of shape "
                         f"{x.shape}")
    axes = tuple(normalize_axis(a, x.ndim, "axes") for a in axes)
    if axes == tuple(range(x.ndim)):
        return x
    return bind(P.permute_p, x, axes=axes)


def permute(x: ArrayLike, axes: Sequence[int]) -> Array:
    """``transpose`` with explicit axes (a permutation of range(ndim)); a view."""
    return transpose(x, axes)


def moveaxis(x: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Move axes ``source`` to positions ``destination`` (ints or sequences of unique axes);
    same dtype; a view."""
    x = operand(x)
    src = [normalize_axis(a, x.ndim, "source") for a in np.atleast_1d(source).tolist()]
    dst = [normalize_axis(a, x.ndim, "destination") for a in np.atleast_1d(destination).tolist()]
    if len(src) != len(dst):
        raise ValueError("source, destination: must have the same number of axes")
    for name, axes in (("source", src), ("destination", dst)):
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in {axes}")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(x: ArrayLike, a: int | None = None, b: int | None = None, *,
             axis1: int | None = None, axis2: int | None = None) -> Array:
    """Exchange axes a and b (NumPy's keywords ``axis1``, ``axis2``); same dtype; a view."""
    x = operand(x)
    if (a is None) == (axis1 is None) or (b is None) == (axis2 is None):
        raise TypeError("swapaxes: give each axis once, positionally or as axis1=/axis2=")
    a = axis1 if a is None else a
    b = axis2 if b is None else b
    a, b = normalize_axis(a, x.ndim, "a"), normalize_axis(b, x.ndim, "b")
    order = list(range(x.ndim))
    order[a], order[b] = order[b], order[a]
    return transpose(x, order)


def expand_dims(x: ArrayLike, axis: int | Sequence[int] = 0) -> Array:
    """Insert size-1 axes at ``axis`` (int or tuple, positions in the result, in [-N-1, N] for
    one axis of an N-d x; IndexError outside); same dtype; a view."""
    x = operand(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    axes = sorted(normalize_axis(a, nd) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis: repeated axis in {axis}")
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, shape)


def squeeze(x: ArrayLike, axis: Axis = None) -> Array:
    """Remove size-1 axes (all of them, or those in ``axis``, which must have size 1); a view."""
    x = operand(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = [normalize_axis(a, x.ndim) for a in (axis if isinstance(axis, (tuple, list))
                                                     else (axis,))]
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis: repeated axis in {axis}")
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"axis: cannot squeeze axis {a} of size {x.shape[a]} "
                                 f"(shape {x.shape})")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


# NumPy's other pad modes, set by the numpy_names module (which imports this one)
_PAD_MODE: list = [None]


def pad(x: ArrayLike, pad_width: int | Sequence[int] | Sequence[Sequence[int]],
        constant_values: ArrayLike = 0, mode: str | None = None, *, end_values: Any = 0,
        reflect_type: str = "even", stat_length: Any = None) -> Array:
    """Pad with ``constant_values``: pad_width an int, a (before, after) pair or one pair per axis.

    Shape: each axis grows by before + after; same dtype (the fill is cast to it; one scalar
    fill for every axis).  The result is a masked view: no data moves until something reads it.

    ``mode`` (NumPy's, also accepted as the third positional argument, ``pad(x, 2, "edge")``):
    "constant" (the default), "edge", "reflect", "symmetric" (``reflect_type`` "even" or
    "odd"), "wrap", "linear_ramp" (``end_values``), "maximum", "minimum", "mean", "median"
    (``stat_length``: how many values of each side the statistic reads; integer arrays get the
    rounded mean and median, as NumPy), "empty" (zeros: NumPy leaves the values undefined).
    """
    x = operand(x)
    if isinstance(constant_values, str):
        if mode is not None:
            raise TypeError("pad: mode given twice (positionally and as mode=)")
        mode, constant_values = constant_values, 0
    cfg = _pad_config(pad_width, x.ndim)
    check_addressable(normalize_shape(tuple(n + b + a for n, (b, a) in zip(x.shape, cfg)),
                                      "pad_width"), x.dtype, "pad_width")
    if mode is not None and mode != "constant":
        return _PAD_MODE[0](x, cfg, mode, end_values=end_values, reflect_type=reflect_type,
                        stat_length=stat_length)
    if isinstance(constant_values, (list, tuple)) and _holds_arrays(constant_values):
        constant_values = operand(constant_values)    # stacked by nx: traced elements stay traced
    if constant_values is None or isinstance(constant_values, str):
        raise TypeError(f"constant_values: expected a number, got {constant_values!r}")
    if np.size(constant_values) != 1:
        raise ValueError(f"constant_values: must be a scalar (one fill value for every axis), "
                         f"got {constant_values!r}")
    if builtins.all(b == 0 and a == 0 for b, a in cfg):
        return x
    if isinstance(constant_values, ArrayBase) and not isinstance(constant_values, Tensor):
        # a traced fill: select it outside x through a constant mask, so derivatives reach it
        padded = bind(P.pad_p, x, config=cfg, fill=0)
        outside = bind(P.pad_p, broadcast_to(const(False, dtypes.bool_), x.shape), config=cfg,
                       fill=True)
        fill = broadcast_to(reshape(astype(constant_values, x.dtype), ()), padded.shape)
        return bind(P.where_p, outside, fill, padded)
    fill = np.asarray(constant_values).reshape(()).item()
    return bind(P.pad_p, x, config=cfg, fill=_fill_value(fill, x.dtype))


def _fill_value(fill, dtype):
    """``fill`` (a Python number) checked to be representable in ``dtype``: ValueError for an
    integer out of range or a non-finite value for an integer dtype, TypeError for a complex
    value for a real dtype (a float for an integer dtype truncates, as NumPy's cast)."""
    if isinstance(fill, complex) and dtype.kind != "c":
        if fill.imag:
            raise TypeError(f"constant_values: complex {fill!r} cannot fill a {dtype} tensor")
        fill = fill.real
    if dtype.kind in "iub":
        if isinstance(fill, float) and not math.isfinite(fill):
            raise ValueError(f"constant_values: {fill!r} cannot fill a {dtype} tensor")
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= int(fill) <= info.max:
                raise ValueError(f"constant_values: {fill!r} is out of range for {dtype} "
                                 f"[{info.min}, {info.max}]")
    return fill


def _pad_config(pad_width, nd):
    arr = np.asarray(pad_width)
    # (widths beyond 64 bits make an object array of Python ints: sizes checked below, with a
    # ValueError, rather than refused as non-integers)
    if arr.dtype.kind not in "iu" and not (
            arr.dtype.kind == "O" and arr.size and
            builtins.all(type(v) is int for v in arr.flat)):
        raise TypeError(f"pad_width: expected integers, got {pad_width!r}")
    try:
        arr = np.broadcast_to(arr, (nd, 2))
    except ValueError:
        raise ValueError(f"pad_width: {pad_width!r} does not fit a tensor of {nd} axes") from None
    cfg = tuple((int(b), int(a)) for b, a in arr)
    for i, (b, a) in enumerate(cfg):
        if b < 0 or a < 0:
            raise ValueError(f"pad_width: negative width ({b}, {a}) for axis {i}")
    return cfg


def shrink(x: ArrayLike, limits: Sequence[tuple[int, int]]) -> Array:
    """The sub-box ``start <= i < stop`` along each axis; ``limits`` one (start, stop) per axis.
    Shape (stop - start, ...); same dtype; a view (of a padded view: unpadded when it fits)."""
    x = operand(x)
    # operator.index: a float limit is a TypeError (as in NumPy slicing), not truncated
    limits = tuple((operator.index(a), operator.index(b)) for a, b in limits)
    if len(limits) != x.ndim:
        raise ValueError(f"limits: {len(limits)} pairs given for a tensor of shape {x.shape}")
    for i, ((a, b), n) in enumerate(zip(limits, x.shape)):
        if not 0 <= a <= b <= n:
            raise ValueError(f"limits: ({a}, {b}) for axis {i} must satisfy 0 <= start <= stop "
                             f"<= {n} (shape {x.shape})")
    if builtins.all(a == 0 and b == n for (a, b), n in zip(limits, x.shape)):
        return x
    return bind(P.shrink_p, x, limits=limits)


def flip(x: ArrayLike, axis: Axis = None) -> Array:
    """Reverse the order along ``axis`` (int, tuple, or None for all axes); same shape and dtype;
    a view (negative strides)."""
    if axis is None and type(x) is Tensor and P.current_interpreter() is None:
        arr = x._arr
        if arr is not None and arr.ndim:   # every axis reversed: NumPy's view of the values
            return Tensor._wrap(arr[_REVERSED[arr.ndim] if arr.ndim < 8 else
                                    (slice(None, None, -1),) * arr.ndim])
    x = operand(x)
    axes = reduction_axes(x, axis)
    if not axes:
        return x
    return bind(P.flip_p, x, axes=axes)


_REVERSED = [(slice(None, None, -1),) * n for n in range(8)]


def as_strided(x: ArrayLike, shape: ShapeLike, strides: Sequence[int], offset: int = 0) -> Array:
    """A view of ``x``'s elements in C order (for a contiguous tensor: its buffer) with the given
    ``shape``, ``strides`` and ``offset`` (in elements, from x's first element), x's dtype.
    Raises ValueError when any element would fall outside x (checked without overflow, huge
    strides and offsets included); never reads out of bounds.  A view when x is contiguous."""
    x = operand(x)
    shape = normalize_shape(shape)
    check_addressable(shape, x.dtype)
    strides = tuple(operator.index(s) for s in strides)   # 1.5 is a TypeError, not 1
    if len(strides) != len(shape):
        raise ValueError(f"strides: {strides} must have one entry per axis of shape {shape}")
    if isinstance(offset, (bool, np.bool_)):
        raise TypeError(f"offset: expected an int, got {offset!r}")
    return bind(P.as_strided_p, x, shape=shape, strides=strides, offset=operator.index(offset))


def concatenate(tensors: Sequence[ArrayLike], axis: int | None = 0) -> Array:
    """Join tensors along an existing ``axis`` (None: of the flattened tensors): shapes must
    agree elsewhere (ValueError naming both); the result's axis is the sum of theirs; promoted
    dtype; always a new tensor (one tensor is copied, as NumPy does)."""
    if len(tensors) > 1 and builtins.all(isinstance(t, ArrayBase) for t in tensors) and \
            builtins.all(t.dtype == tensors[0].dtype for t in tensors):
        xs = list(tensors)    # nothing to promote (the common case: skip promote's overhead)
    else:
        xs = promote(*tensors) if len(tensors) else []
    if not xs:
        raise ValueError("tensors: need at least one tensor to concatenate")
    if axis is None:
        xs, axis = [reshape(t, (-1,)) for t in xs], 0
    if xs[0].ndim == 0:
        raise ValueError("tensors: cannot concatenate 0-d tensors")
    ax = normalize_axis(axis, xs[0].ndim)
    for t in xs[1:]:
        if t.ndim != xs[0].ndim or builtins.any(
                a != b for i, (a, b) in enumerate(zip(t.shape, xs[0].shape)) if i != ax):
            raise ShapeError(f"tensors: shapes {xs[0].shape} and {t.shape} differ outside axis "
                             f"{ax}")
    if len(xs) == 1:
        return copy(xs[0])
    return bind(P.cat_p, *xs, axis=ax)


def stack(tensors: Sequence[ArrayLike], axis: int = 0) -> Array:
    """Join equal-shaped tensors along a new ``axis``: shape with len(tensors) inserted at axis;
    promoted dtype."""
    xs = [operand(t) for t in tensors]
    if not xs:
        raise ValueError("tensors: need at least one tensor to stack")
    for t in xs[1:]:
        if t.shape != xs[0].shape:
            raise ShapeError(f"tensors: all must have the same shape, got {xs[0].shape} and "
                             f"{t.shape}")
    ax = normalize_axis(axis, xs[0].ndim + 1)
    return concatenate([expand_dims(t, ax) for t in xs], ax)


def split(x: ArrayLike, sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """Split into equal ``sections`` (an int that divides the axis) or at the given indices (a
    sequence, as slice bounds: negative ones count from the end); a list of views, x's dtype.
    TypeError for a float ``sections``; ValueError when the int does not divide the axis."""
    x = operand(x)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    k = sections_count(sections, "sections")
    if k is None:
        return split_at(x, index_bounds(sections, n, "sections"), ax)
    if k <= 0 or n % k:
        raise ValueError(f"sections: {k} does not divide axis {ax} of size {n}")
    check_pieces(k, "sections")
    return split_at(x, [i * (n // k) for i in range(k + 1)], ax)


MAX_PIECES = 1 << 26


def check_pieces(k, name):
    """MemoryError naming ``name`` when a call would return ``k`` tensors, more than memory
    can hold (each one is an object: 2**26 of them take gigabytes), instead of building them
    for minutes before running out (split of an empty axis into 2**40 sections)."""
    if k > MAX_PIECES:
        raise MemoryError(f"{name}: {k} pieces are too many tensors to return (at most "
                          f"{MAX_PIECES})")


def sections_count(sections, name):
    """``sections`` as an int when it is one (a Python or NumPy int, or a 0-d integer array);
    None for a sequence of indices; TypeError for anything else (a float is not truncated)."""
    if isinstance(sections, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an int or a sequence of indices, got {sections!r}")
    if isinstance(sections, (np.ndarray, ArrayBase)) and sections.ndim == 0:
        if sections.dtype.kind not in "iu":
            raise TypeError(f"{name}: expected an int or a sequence of indices, got a 0-d "
                            f"{sections.dtype} array")
        return int(sections)
    if isinstance(sections, (Sequence, np.ndarray, ArrayBase)):
        return None
    try:
        return operator.index(sections)
    except TypeError:
        raise TypeError(f"{name}: expected an int or a sequence of indices, got "
                        f"{sections!r}") from None


def index_bounds(indices, n, name):
    """Split points ``[0, *indices, n]``: slice bounds (negative ones count from the end)
    clamped to [0, n]."""
    vals = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    if vals.ndim != 1 or (vals.size and vals.dtype.kind not in "iu"):
        raise TypeError(f"{name}: expected an int or a 1-D sequence of integer indices, got "
                        f"{indices!r}")
    return [0] + [builtins.min(builtins.max(i + n if i < 0 else i, 0), n)
                  for i in vals.tolist()] + [n]


def split_at(x, bounds, ax):
    """Views of ``x`` along ``ax`` between consecutive ``bounds`` (in [0, n]), as the slices
    ``x[a:b]`` (empty where b < a, as NumPy slices)."""
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        b = builtins.max(a, b)
        lim = [(0, d) for d in x.shape]
        lim[ax] = (a, b)
        out.append(shrink(x, lim))
    return out


def copy(x: ArrayLike) -> Array:
    """A new tensor with its own contiguous memory: same shape, dtype and values (a 0-d
    copy is an array, which ``+=`` writes into, as NumPy's ``np.copy`` gives)."""
    r = bind(P.copy_p, operand(x))
    if type(r) is Tensor:
        r._array0d = True
    return r


def contiguous(x: ArrayLike) -> Array:
    """``x`` if already C-contiguous (and unpadded), else a contiguous copy; same shape, dtype."""
    return bind(P.contiguous_p, operand(x))


def is_contiguous(x: ArrayLike) -> bool:
    """True when x's elements are C-contiguous in memory and unpadded (a Python bool)."""
    x = operand(x)
    return x.view.is_contiguous if isinstance(x, Tensor) else False


def shares_memory(a: ArrayLike, b: ArrayLike) -> bool:
    """True when some element of ``a`` and some element of ``b`` occupy overlapping bytes of
    memory (compared by their byte extents, as ``np.may_share_memory``): a Python bool."""
    a, b = operand(a), operand(b)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    ea, eb = a._memory_extent(), b._memory_extent()
    return ea is not None and eb is not None and ea[0] < eb[1] and eb[0] < ea[1]


def assign(dst: ArrayLike, src: ArrayLike) -> Array:
    """Write ``src`` (broadcast, cast to dst's dtype) into dst's memory in place; returns dst."""
    dst = operand(dst)
    src = broadcast_to(astype(operand(src), dst.dtype), dst.shape)
    rebind = getattr(dst, "_rebind", None)
    if rebind is not None:
        # a traced dst (jit, grad, vmap, ...) holds no memory: as ``dst[...] = src``, it stands
        # for the new value from now on (and writes through into what it views), so that the
        # transformation sees the write and writes it back into the caller's argument
        rebind(src, "nx.assign")
        return dst
    return bind(P.assign_p, dst, src)


def size(x: ArrayLike) -> int:
    """The number of elements of ``x`` (a Python int)."""
    return operand(x).size


def shape(x: ArrayLike) -> tuple[int, ...]:
    """The shape of ``x`` (a tuple of Python ints)."""
    return operand(x).shape


def ndim(x: ArrayLike) -> int:
    """The number of axes of ``x`` (a Python int)."""
    return operand(x).ndim

