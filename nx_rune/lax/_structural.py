"""``nx.lax``'s shape and slicing names with JAX's signatures: static slices and pads (interior
and negative padding), broadcasts, reshapes, the reductions by axes, and the dynamic slices,
whose start indices may be traced (jit, vmap, grad).

Dynamic starts follow JAX (XLA): a negative start counts from the end (with
``allow_negative_indices``, the default), and then every start is clamped to
``[0, dim - size]`` so that the slice fits: out-of-range starts never raise, they move.
A concrete start slices a view; a traced one gathers (``take``), so the start may differ per
example under ``vmap`` and derivatives flow to the operand (and the update) through the gather.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend._core import operand as _arr
from nx_rune.frontend.indexing import concrete_value
from nx_rune.tensor import ArrayBase
from nx_rune.typing import Array, ArrayLike, DTypeLike, PyTree

__all__ = [
    "argmax", "argmin", "broadcast", "broadcast_in_dim", "collapse", "concatenate",
    "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_index_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "expand_dims", "index_in_dim", "pad",
    "reduce", "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod", "reduce_sum",
    "reshape",
    "rev", "slice", "slice_in_dim", "squeeze", "transpose",
]

_slice = slice  # the builtin, shadowed by lax.slice below


def _ints(values, name):
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{name}: expected a sequence of ints, got {values!r}") from None


def _axis(axis, ndim, name):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: {axis} is out of range for an operand of rank {ndim}")
    return axis % ndim


# -- static slices, pads and shapes ----------------------------------------------------------------

def slice(operand: ArrayLike, start_indices: Any, limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Array:
    """JAX's ``lax.slice(operand, start_indices, limit_indices, strides=None)``: the box
    ``start <= i < limit`` with the given steps (a view).  Each start and limit must lie in
    ``[0, dim]`` with start <= limit (ValueError naming them)."""
    x = _arr(operand)
    starts = _ints(start_indices, "start_indices")
    limits = _ints(limit_indices, "limit_indices")
    steps = (1,) * x.ndim if strides is None else _ints(strides, "strides")
    for name, v in (("start_indices", starts), ("limit_indices", limits), ("strides", steps)):
        if len(v) != x.ndim:
            raise ValueError(f"{name}: {v} has {len(v)} entries for an operand of shape "
                             f"{x.shape}")
    for d, (a, b, s, n) in enumerate(zip(starts, limits, steps, x.shape)):
        if not 0 <= a <= b <= n:
            raise ValueError(f"start_indices, limit_indices: ({a}, {b}) for axis {d} must satisfy "
                             f"0 <= start <= limit <= {n} (operand shape {x.shape})")
        if s < 1:
            raise ValueError(f"strides: entries must be >= 1, got {steps}")
    return x[tuple(_slice(a, b, s) for a, b, s in zip(starts, limits, steps))]


def slice_in_dim(operand: ArrayLike, start_index: ArrayLike, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Array:
    """JAX's ``lax.slice_in_dim``: ``slice`` along one axis (None: 0 / the axis' size;
    negative indices count from the end)."""
    x = _arr(operand)
    axis = _axis(axis, x.ndim, "axis")
    n = x.shape[axis]
    a = 0 if start_index is None else operator.index(start_index)
    b = n if limit_index is None else operator.index(limit_index)
    a, b = (a + n if a < 0 else a), (b + n if b < 0 else b)
    starts = [0] * x.ndim
    limits = list(x.shape)
    steps = [1] * x.ndim
    starts[axis], limits[axis], steps[axis] = a, b, operator.index(stride)
    return slice(x, starts, limits, steps)


def index_in_dim(operand: ArrayLike, index: ArrayLike, axis: int = 0,
                 keepdims: bool = True) -> Array:
    """JAX's ``lax.index_in_dim``: element ``index`` along ``axis`` (negative counts from the
    end; IndexError out of range), the axis kept with size 1 unless ``keepdims=False``."""
    x = _arr(operand)
    axis = _axis(axis, x.ndim, "axis")
    n = x.shape[axis]
    i = operator.index(index)
    if not -n <= i < n:
        raise IndexError(f"index: {i} is out of bounds for axis {axis} of size {n}")
    i %= n
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else F.squeeze(out, axis)


def pad(operand: ArrayLike, padding_value: ArrayLike,
        padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """JAX's ``lax.pad(operand, padding_value, padding_config)``: one ``(low, high, interior)``
    per axis: ``interior`` copies of the (scalar) padding_value between neighbouring elements,
    then ``low`` before and ``high`` after; a negative low or high removes elements from that
    end instead.  Each axis becomes ``low + high + n + max(n - 1, 0) * interior`` long.
    Differentiable in the operand and in padding_value.  A new array, as JAX's (never a view
    of operand, so a later in-place write to operand does not show in it, under jit or not)."""
    return F.copy(pad_view(operand, padding_value, padding_config))


def pad_view(operand: ArrayLike, padding_value: ArrayLike,
             padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """``pad`` as the front end's masked views (no copy where none is needed): for lax's own
    compositions, whose results are new arrays anyway."""
    x = _arr(operand)
    try:
        cfg = [tuple(operator.index(v) for v in c) for c in padding_config]
    except TypeError:
        raise TypeError(f"padding_config: expected (low, high, interior) int triples, got "
                        f"{padding_config!r}") from None
    if len(cfg) != x.ndim or any(len(c) != 3 for c in cfg):
        raise ValueError(f"padding_config: expected {x.ndim} (low, high, interior) triples for an "
                         f"operand of shape {x.shape}, got {padding_config!r}")
    fill = padding_value
    if isinstance(fill, (ArrayBase, np.ndarray)):
        fill = _arr(fill)
        if fill.shape != ():
            raise TypeError(f"padding_value: must be a scalar, got shape {fill.shape}")
        if fill.dtype != x.dtype:
            fill = F.astype(fill, x.dtype)
    for d, (lo, hi, interior) in enumerate(cfg):
        if interior < 0:
            raise ValueError(f"padding_config: interior padding must be >= 0, got {interior} for "
                             f"axis {d}")
        n = x.shape[d] if d < x.ndim else 0
        if lo + hi + n + max(n - 1, 0) * interior < 0:
            raise ValueError(f"padding_config: {cfg[d]} gives a negative size for axis {d} of "
                             f"size {n}")
    for d, (_, _, interior) in enumerate(cfg):
        n = x.shape[d]
        if interior and n > 1:
            # interleave: a new axis after d padded with `interior` fills, merged into d, the
            # fills after the last element cut off
            e = F.expand_dims(x, d + 1)
            widths = [(0, 0)] * e.ndim
            widths[d + 1] = (0, interior)
            e = F.pad(e, widths, constant_values=fill)
            merged = F.reshape(e, x.shape[:d] + (n * (interior + 1),) + x.shape[d + 1:])
            x = F.shrink(merged, [(0, m - interior) if k == d else (0, m)
                                  for k, m in enumerate(merged.shape)])
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi, _ in cfg]
    if any(w != (0, 0) for w in widths):
        x = F.pad(x, widths, constant_values=fill)
    if any(lo < 0 or hi < 0 for lo, hi, _ in cfg):
        x = F.shrink(x, [(-min(lo, 0), n + min(hi, 0)) for (lo, hi, _), n in zip(cfg, x.shape)])
    return x


def concatenate(operands: Any, dimension: int) -> Array:
    """JAX's ``lax.concatenate(operands, dimension)``: join along an existing axis."""
    if isinstance(operands, ArrayBase):
        operands = [operands[i] for i in range(operands.shape[0])]
    ops = list(operands)
    if not ops:
        raise ValueError("operands: concatenate needs at least one operand")
    return F.concatenate(ops, axis=operator.index(dimension))


def broadcast(operand: ArrayLike, sizes: Sequence[int], *, out_sharding: Any = None) -> Array:
    """JAX's ``lax.broadcast(operand, sizes)``: new leading axes of ``sizes``."""
    x = _arr(operand)
    sizes = _ints(sizes, "sizes")
    return F.broadcast_to(x, sizes + x.shape)


def broadcast_in_dim(operand: ArrayLike, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                     *, out_sharding: Any = None) -> Array:
    """JAX's ``lax.broadcast_in_dim(operand, shape, broadcast_dimensions)``: operand's axis i
    becomes axis ``broadcast_dimensions[i]`` of ``shape`` (strictly increasing; each of
    operand's sizes 1 or equal to the target's)."""
    x = _arr(operand)
    shape = _ints(shape, "shape")
    dims = _ints(broadcast_dimensions, "broadcast_dimensions")
    if len(dims) != x.ndim:
        raise ValueError(f"broadcast_dimensions: {dims} must have one entry per operand axis "
                         f"(operand shape {x.shape})")
    if any(not 0 <= d < len(shape) for d in dims) or any(a >= b for a, b in zip(dims, dims[1:])):
        raise ValueError(f"broadcast_dimensions: {dims} must be strictly increasing axes of "
                         f"shape {shape}")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise ValueError(f"broadcast_dimensions: operand axis {i} of size {x.shape[i]} cannot "
                             f"broadcast to axis {d} of shape {shape}")
    full = [1] * len(shape)
    for i, d in enumerate(dims):
        full[d] = x.shape[i]
    return F.broadcast_to(F.reshape(x, tuple(full)), shape)


def expand_dims(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """JAX's ``lax.expand_dims(array, dimensions)``: size-1 axes inserted at ``dimensions``
    (positions in the result; negative count from its end)."""
    x = _arr(array)
    dims = _ints(dimensions, "dimensions")
    nd = x.ndim + len(dims)
    dims = sorted(_axis(d, nd, "dimensions") for d in dims)
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions: repeated axis in {dimensions!r}")
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return F.reshape(x, tuple(shape))


def squeeze(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """JAX's ``lax.squeeze(array, dimensions)``: remove the given size-1 axes (ValueError for
    an axis whose size is not 1)."""
    x = _arr(array)
    dims = sorted({_axis(d, x.ndim, "dimensions") for d in _ints(dimensions, "dimensions")})
    for d in dims:
        if x.shape[d] != 1:
            raise ValueError(f"dimensions: axis {d} of shape {x.shape} has size {x.shape[d]}, "
                             f"not 1")
    return F.reshape(x, tuple(n for k, n in enumerate(x.shape) if k not in dims))


def reshape(operand: ArrayLike, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None, *,
            out_sharding: Any = None) -> Array:
    """JAX's ``lax.reshape(operand, new_sizes, dimensions=None)``: ``dimensions`` permutes the
    axes first (row-major order of the permuted operand)."""
    x = _arr(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    return F.reshape(x, _ints(new_sizes, "new_sizes"))


def transpose(operand: ArrayLike, permutation: Sequence[int]) -> Array:
    """JAX's ``lax.transpose(operand, permutation)``."""
    x = _arr(operand)
    perm = _ints(permutation, "permutation")
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"permutation: {perm} is not a permutation of the axes of shape "
                         f"{x.shape}")
    return F.permute_dims(x, perm)


def rev(operand: ArrayLike, dimensions: Sequence[int]) -> Array:
    """JAX's ``lax.rev(operand, dimensions)``: reverse the order along ``dimensions``."""
    x = _arr(operand)
    dims = tuple(_axis(d, x.ndim, "dimensions") for d in _ints(dimensions, "dimensions"))
    return F.flip(x, dims) if dims else x


def collapse(operand: ArrayLike, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """JAX's ``lax.collapse``: merge axes ``start_dimension:stop_dimension`` into one."""
    x = _arr(operand)
    a = _axis(start_dimension, x.ndim, "start_dimension") if x.ndim else 0
    b = x.ndim if stop_dimension is None else operator.index(stop_dimension)
    b = b + x.ndim if b < 0 else b
    size = int(np.prod(x.shape[a:b], dtype=np.int64))
    return F.reshape(x, x.shape[:a] + (size,) + x.shape[b:])


def _axes(x, axes):
    return tuple(_axis(a, x.ndim, "axes") for a in _ints(axes, "axes"))


def reduce_sum(operand: ArrayLike, axes: Sequence[int], *, out_sharding: Any = None) -> Array:
    """JAX's ``lax.reduce_sum(operand, axes)``, operand's dtype."""
    x = _arr(operand)
    return F.sum(x, axis=_axes(x, axes), dtype=x.dtype)


def reduce_prod(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """JAX's ``lax.reduce_prod(operand, axes)``, operand's dtype."""
    x = _arr(operand)
    return F.prod(x, axis=_axes(x, axes), dtype=x.dtype)


def reduce_max(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """JAX's ``lax.reduce_max(operand, axes)``."""
    x = _arr(operand)
    return F.max(x, axis=_axes(x, axes))


def reduce_min(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """JAX's ``lax.reduce_min(operand, axes)``."""
    x = _arr(operand)
    return F.min(x, axis=_axes(x, axes))


def reduce_and(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """JAX's ``lax.reduce_and(operand, axes)`` (booleans: all)."""
    x = _arr(operand)
    return F.all(x, axis=_axes(x, axes))


def reduce_or(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """JAX's ``lax.reduce_or(operand, axes)`` (booleans: any)."""
    x = _arr(operand)
    return F.any(x, axis=_axes(x, axes))


def reduce(operands: Any, init_values: PyTree, computation: Callable[..., Any],
           dimensions: Sequence[int], *, out_sharding: Any = None) -> PyTree:
    """JAX's ``lax.reduce(operands, init_values, computation, dimensions)``: reduce the axes
    ``dimensions`` of an array (or of matching pytrees of arrays, ``computation`` then taking
    and returning such pytrees) with the associative ``computation`` whose identity is
    ``init_values``.  lax's / nx's add, mul, max, min run as the front end's reductions; any
    other computation combines halves of each axis pairwise (log2(n) rounds)."""
    from nx_rune.lax import _elementwise as E
    from nx_rune.tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(operands)
    inits, itree = tree_flatten(init_values)
    if tree != itree:
        raise ValueError(f"init_values: must have operands' tree structure ({tree}), got {itree}")
    if not leaves:
        raise ValueError("operands: reduce needs at least one operand")
    xs = [_arr(v) for v in leaves]
    dims = sorted({_axis(d, xs[0].ndim, "dimensions") for d in _ints(dimensions, "dimensions")})
    for v in xs[1:]:
        if v.shape != xs[0].shape:
            raise ValueError(f"operands: arrays must share one shape, got {xs[0].shape} and "
                             f"{v.shape}")
    table = {E.add: F.sum, F.add: F.sum, E.mul: F.prod, F.multiply: F.prod, E.max: F.max,
             F.maximum: F.max, E.min: F.min, F.minimum: F.min}
    try:
        fn = table.get(computation) if len(xs) == 1 else None
    except TypeError:
        fn = None
    if fn is not None:
        x = xs[0]
        if fn in (F.sum, F.prod):
            return tree_unflatten(tree, [fn(x, axis=tuple(dims), dtype=x.dtype)])
        if x.dtype.kind == "b":
            red = F.all if fn is F.min else F.any
            return tree_unflatten(tree, [red(x, axis=tuple(dims))])
        return tree_unflatten(tree, [fn(x, axis=tuple(dims))])
    if not callable(computation):
        raise TypeError(f"computation: must be callable, got {computation!r}")

    def combine(a, b):
        out = computation(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"computation: must return operands' structure ({tree}), got "
                            f"{out_tree}")
        return [_arr(v) for v in out_leaves]
    for d in reversed(dims):
        n = xs[0].shape[d]
        if n == 0:
            shape = xs[0].shape[:d] + xs[0].shape[d + 1:]
            xs = [F.full(shape, iv, dtype=x.dtype) for x, iv in zip(xs, inits)]
            continue
        while n > 1:
            h = n // 2
            a = [slice_in_dim(x, 0, h, 1, d) for x in xs]
            b = [slice_in_dim(x, h, 2 * h, 1, d) for x in xs]
            c = combine(a, b)
            if n % 2:
                c = [F.concatenate([v, slice_in_dim(x, 2 * h, n, 1, d)], axis=d)
                     for v, x in zip(c, xs)]
            xs, n = c, h + n % 2
        xs = [F.squeeze(x, d) for x in xs]
    return tree_unflatten(tree, [F.copy(x) for x in xs])


def argmax(operand: ArrayLike, axis: int, index_dtype: DTypeLike) -> Array:
    """JAX's ``lax.argmax(operand, axis, index_dtype)``: first maximum's index."""
    x = _arr(operand)
    return F.astype(F.argmax(x, axis=_axis(axis, x.ndim, "axis")), index_dtype)


def argmin(operand: ArrayLike, axis: int, index_dtype: DTypeLike) -> Array:
    """JAX's ``lax.argmin(operand, axis, index_dtype)``: first minimum's index."""
    x = _arr(operand)
    return F.astype(F.argmin(x, axis=_axis(axis, x.ndim, "axis")), index_dtype)


# -- dynamic slices -----------------------------------------------------------------------------

class _ArrayIndex(int):
    """A start index that came as a concrete array (clamped like a traced one), not as a
    Python int."""


def _start_list(x, start_indices, name):
    """The start indices as a list of one scalar per axis (Python ints or integer scalars)."""
    if isinstance(start_indices, (ArrayBase, np.ndarray)):
        s = _arr(start_indices)
        if s.ndim != 1:
            raise ValueError(f"{name}: must be a 1-D sequence of indices, got shape {s.shape}")
        starts = [s[i] for i in range(s.shape[0])]
    else:
        try:
            starts = list(start_indices)
        except TypeError:
            raise TypeError(f"{name}: expected a sequence of integer scalars, got "
                            f"{start_indices!r}") from None
    if len(starts) != x.ndim:
        raise ValueError(f"{name}: {len(starts)} indices given for an operand of shape "
                         f"{x.shape} (one per axis)")
    out = []
    for v in starts:
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name}: indices must be integers, got {v!r}")
        if isinstance(v, (int, np.integer)):
            out.append(v)
            continue
        v = _arr(v)
        if v.shape != () or v.dtype.kind not in "iu":
            raise TypeError(f"{name}: each index must be an integer scalar, got dtype {v.dtype} "
                            f"of shape {v.shape}")
        c = concrete_value(v)
        # a concrete array index behaves as a traced one (JAX refuses only a static negative
        # index that allow_negative_indices forbids); keep it as a NumPy integer
        out.append(_ArrayIndex(c) if c is not None else v)
    return out


def _negatives(allow, n, name):
    if isinstance(allow, (bool, np.bool_)):
        return [bool(allow)] * n
    allow = [bool(a) for a in allow]
    if len(allow) != n:
        raise ValueError(f"allow_negative_indices: {len(allow)} entries for {n} axes")
    return allow


def _clamped(start, n, size, allow_negative):
    """``start`` made to fit: + n when negative (if allowed), then clamped to [0, n - size].
    An int for an int; an int scalar array for a traced start."""
    if isinstance(start, (int, np.integer)):
        if start < 0:
            if allow_negative:
                start += n
            elif not isinstance(start, _ArrayIndex):
                raise ValueError(f"start_indices: index {start} is negative for an axis of "
                                 f"size {n} with allow_negative_indices=False")
        return int(min(max(start, 0), n - size))
    if allow_negative and start.dtype.kind == "i":
        start = F.where(F.less(start, 0), F.add(start, F.astype(n, start.dtype)), start)
    start = F.astype(start, np.int64 if n >= 2**31 else np.int32)
    return F.clip(start, 0, n - size)


def dynamic_slice(operand: ArrayLike, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """JAX's ``lax.dynamic_slice(operand, start_indices, slice_sizes)``: the box of
    ``slice_sizes`` starting at ``start_indices`` (one integer scalar per axis, a list or a
    1-D array; traced values allowed).  Starts are clamped so the box fits (see the module
    docstring); ``slice_sizes`` must be static and fit in operand's shape."""
    x = _arr(operand)
    sizes = _ints(slice_sizes, "slice_sizes")
    if len(sizes) != x.ndim:
        raise ValueError(f"slice_sizes: {sizes} has {len(sizes)} entries for an operand of shape "
                         f"{x.shape}")
    for d, (s, n) in enumerate(zip(sizes, x.shape)):
        if not 0 <= s <= n:
            raise TypeError(f"slice_sizes: {sizes} must lie within operand shape {x.shape} "
                            f"(axis {d})")
    starts = _start_list(x, start_indices, "start_indices")
    allow = _negatives(allow_negative_indices, x.ndim, "allow_negative_indices")
    starts = [_clamped(st, n, s, a) for st, n, s, a in zip(starts, x.shape, sizes, allow)]
    static = [st if isinstance(st, int) else None for st in starts]
    # a new array, as JAX's: a view for concrete starts would alias operand eagerly but not
    # under jit, where the same starts are traced and gathered
    x = F.shrink(x, [(v, v + s) if v is not None else (0, n)
                     for v, s, n in zip(static, sizes, x.shape)])
    gathered = False
    for d, (st, s, n) in enumerate(zip(starts, sizes, x.shape)):
        if isinstance(st, int) or s == n:
            continue       # a full axis: the clamped start is 0 whatever it was
        idx = F.add(st, F.arange(s, dtype=st.dtype))
        x = F.take(x, idx, axis=d)
        gathered = True
    return x if gathered else F.copy(x)


def dynamic_update_slice(operand: ArrayLike, update: ArrayLike, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """JAX's ``lax.dynamic_update_slice(operand, update, start_indices)``: a copy of operand
    with the box at ``start_indices`` replaced by ``update`` (same rank, sizes within operand's,
    same dtype).  Starts are clamped so the update fits.  Differentiable in operand (zero
    inside the box) and in update."""
    x = _arr(operand)
    u = _arr(update)
    if u.ndim != x.ndim:
        raise ValueError(f"update: rank {u.ndim} (shape {u.shape}) differs from operand's "
                         f"shape {x.shape}")
    for d, (s, n) in enumerate(zip(u.shape, x.shape)):
        if s > n:
            raise TypeError(f"update: shape {u.shape} does not fit in operand shape {x.shape} "
                            f"(axis {d})")
    if u.dtype != x.dtype:
        raise TypeError(f"update: dtype {u.dtype} differs from operand's {x.dtype}")
    starts = _start_list(x, start_indices, "start_indices")
    allow = _negatives(allow_negative_indices, x.ndim, "allow_negative_indices")
    starts = [_clamped(st, n, s, a) for st, n, s, a in zip(starts, x.shape, u.shape, allow)]
    if all(isinstance(st, int) for st in starts):
        return x.at[tuple(_slice(st, st + s) for st, s in zip(starts, u.shape))].set(u)
    # traced starts: one scatter of the update's elements at the (clamped, so in-bounds) box,
    # every axis indexed by an open mesh (start + arange(size)) so the box keeps its layout
    index = []
    for d, (st, size) in enumerate(zip(starts, u.shape)):
        dt = np.int64 if x.shape[d] >= 2**31 else np.int32
        r = F.arange(size, dtype=dt)
        r = F.add(r, st if isinstance(st, int) else F.astype(st, dt))
        index.append(F.reshape(r, tuple(size if k == d else 1 for k in range(x.ndim))))
    return x.at[tuple(index)].set(u)


def dynamic_slice_in_dim(operand: ArrayLike, start_index: ArrayLike, slice_size: int,
                         axis: int = 0, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """JAX's ``lax.dynamic_slice_in_dim``: ``dynamic_slice`` along one axis."""
    x = _arr(operand)
    axis = _axis(axis, x.ndim, "axis")
    starts = [0] * x.ndim
    sizes = list(x.shape)
    starts[axis], sizes[axis] = start_index, operator.index(slice_size)
    allow = [True] * x.ndim
    allow[axis] = bool(allow_negative_indices)
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand: ArrayLike, index: ArrayLike, axis: int = 0,
                         keepdims: bool = True, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """JAX's ``lax.dynamic_index_in_dim``: element ``index`` (traced allowed, clamped) along
    ``axis``, the axis kept with size 1 unless ``keepdims=False``."""
    x = _arr(operand)
    axis = _axis(axis, x.ndim, "axis")
    out = dynamic_slice_in_dim(x, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else F.squeeze(out, axis)


def dynamic_update_slice_in_dim(operand: ArrayLike, update: ArrayLike, start_index: ArrayLike,
                                axis: int, *,
                                 allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """JAX's ``lax.dynamic_update_slice_in_dim``: ``dynamic_update_slice`` along one axis."""
    x = _arr(operand)
    axis = _axis(axis, x.ndim, "axis")
    starts = [0] * x.ndim
    starts[axis] = start_index
    allow = [True] * x.ndim
    allow[axis] = bool(allow_negative_indices)
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand: ArrayLike, update: ArrayLike, index: ArrayLike, axis: int,
                                *, allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """JAX's ``lax.dynamic_update_index_in_dim``: write ``update`` (with or without the size-1
    axis) at ``index`` along ``axis``."""
    x = _arr(operand)
    axis = _axis(axis, x.ndim, "axis")
    u = _arr(update)
    if u.ndim == x.ndim - 1:
        u = F.expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis,
                                       allow_negative_indices=allow_negative_indices)
