"""Collectives over named axes, JAX's ``jax.lax`` parallel operators: ``psum``, ``pmean``,
``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``, ``ppermute``, ``pshuffle``,
``all_to_all``, ``pbroadcast``, ``axis_index``, ``axis_size``.

They run inside ``nx.vmap(f, axis_name=...)`` or ``nx.pmap(f, axis_name=...)`` and combine
the examples of the named axis (``psum(x, 'i')`` is, in every example, the sum of ``x`` over
all of them).  They work on pytrees, over several names at once (``psum(x, ('i', 'j'))``),
under ``jit`` and nested vmaps, and differentiate with JAX's rules (``pmax``/``pmin`` have
none, as in JAX).  How they dispatch: ``nx_rune.compiler.collectives``.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from nx_rune.compiler import collectives as C
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_map

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "pshuffle", "all_to_all", "pbroadcast", "axis_index", "axis_size"]


def _names(axis_name, what):
    """``axis_name`` as a tuple of names, each checked to be bound; with their sizes."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        raise ValueError(f"{what}: axis_name must name at least one axis, got {axis_name!r}")
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(f"{what}: axis_name must be a hashable name or a tuple of them, "
                            f"got {axis_name!r}") from None
    sizes = tuple(C.axis_size_of(n, what) for n in names)
    return names, sizes


def _no_groups(groups, what):
    if groups is not None:
        raise NotImplementedError(f"{what}: axis_index_groups is not supported (as in JAX's "
                                  f"vmap, which rejects it too); leave it None")


def _bind1(op, params, x):
    from nx_rune.frontend import asarray
    if not isinstance(x, ArrayBase):
        x = asarray(x)
    return C.collective_bind(op, params, [x])[0]


def _single(axis_name, what):
    names, sizes = _names(axis_name, what)
    if len(names) != 1:
        raise NotImplementedError(f"{what}: one axis name is supported, got {axis_name!r}")
    return names, sizes


def _reduce(op, x, axis_name, what):
    names, sizes = _names(axis_name, what)
    total = int(np.prod(sizes))

    def one(leaf):
        if not isinstance(leaf, (ArrayBase, np.ndarray, np.generic)):
            # a Python number is the same in every example: computed now, as JAX does
            # (``psum(1, 'i')`` is the axis size, a Python int)
            if isinstance(leaf, (bool, int, float, complex)):
                return leaf * total if op is C.psum_op else leaf
            raise TypeError(f"{what}: expected arrays or numbers (in a pytree), got "
                            f"{type(leaf).__name__}")
        return _bind1(op, {"axes": names, "sizes": sizes}, leaf)
    return tree_map(one, x)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` over every example of the named axis (or axes), in each example.

    ``x``: an array or a pytree of arrays (each leaf summed on its own; a Python number gives
    ``number * axis size``, a Python value, as in JAX).  ``axis_name``: a name bound by an
    enclosing ``vmap``/``pmap``, or a tuple of names.  The result has ``x``'s shape and dtype.
    Its derivative is psum again (JAX's transpose).  NameError for a name no enclosing
    transformation binds.
    """
    _no_groups(axis_index_groups, "lax.psum")
    return _reduce(C.psum_op, x, axis_name, "lax.psum")


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` over the examples of the named axis (or axes): ``psum(x) / size``
    (an integer ``x`` gives floats, as in JAX)."""
    _no_groups(axis_index_groups, "lax.pmean")
    names, sizes = _names(axis_name, "lax.pmean")
    n = int(np.prod(sizes))
    return tree_map(lambda s: s / n, _reduce(C.psum_op, x, axis_name, "lax.pmean"))


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of ``x`` over the examples of the named axis (or axes), elementwise.
    Not differentiable (JAX's NotImplementedError)."""
    _no_groups(axis_index_groups, "lax.pmax")
    return _reduce(C.pmax_op, x, axis_name, "lax.pmax")


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of ``x`` over the examples of the named axis (or axes), elementwise.
    Not differentiable (JAX's NotImplementedError)."""
    _no_groups(axis_index_groups, "lax.pmin")
    return _reduce(C.pmin_op, x, axis_name, "lax.pmin")


def _axis_arg(axis, ndim, what, name, extra=0):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what}: {name} must be an int, got {axis!r}") from None
    n = ndim + extra
    if not -n <= axis < n:
        raise ValueError(f"{what}: {name} {axis} is out of range for an operand of rank "
                         f"{ndim}")
    return axis % n


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False, to: str = "varying") -> Any:
    """Every example's ``x``, gathered: in each example, the stack of all examples' values
    along a new axis ``axis`` (``tiled=True``: concatenated along the existing axis ``axis``).

    Shapes: ``x`` of shape ``S`` over an axis of ``n`` examples gives ``S`` with ``n``
    inserted at ``axis`` (tiled: ``S[axis] * n``).  Works on pytrees; its derivative is
    ``psum_scatter`` of the cotangent (JAX's transpose).  ``to`` is accepted for JAX's
    signature.
    """
    _no_groups(axis_index_groups, "lax.all_gather")
    names, sizes = _single(axis_name, "lax.all_gather")

    def one(leaf):
        from nx_rune.frontend import asarray
        leaf = leaf if isinstance(leaf, ArrayBase) else asarray(leaf)
        if tiled and leaf.ndim == 0:
            raise ValueError("lax.all_gather: tiled=True needs an operand of rank >= 1, got a "
                             "scalar")
        ax = _axis_arg(axis, leaf.ndim, "lax.all_gather", "axis", 0 if tiled else 1)
        return _bind1(C.all_gather_op, {"axes": names, "sizes": sizes, "axis": ax,
                                        "tiled": bool(tiled)}, leaf)
    return tree_map(one, x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """The psum of ``x``, scattered: example ``i`` gets block ``i`` of the sum along
    ``scatter_dimension`` (that axis must have the axis size, and is removed; ``tiled=True``:
    a multiple of it, and example ``i`` gets the ``i``-th of equal chunks).  Its derivative is
    ``all_gather`` (JAX's transpose).
    """
    _no_groups(axis_index_groups, "lax.psum_scatter")
    names, sizes = _single(axis_name, "lax.psum_scatter")
    n = sizes[0]

    def one(leaf):
        from nx_rune.frontend import asarray
        leaf = leaf if isinstance(leaf, ArrayBase) else asarray(leaf)
        if leaf.ndim == 0:
            raise ValueError("lax.psum_scatter: the operand must have rank >= 1, got a scalar")
        sd = _axis_arg(scatter_dimension, leaf.ndim, "lax.psum_scatter", "scatter_dimension")
        m = leaf.shape[sd]
        if (m % n if tiled else m != n):
            raise ValueError(f"lax.psum_scatter: the operand's scatter_dimension {sd} has size "
                             f"{m}, which must {'be a multiple of' if tiled else 'equal'} the "
                             f"size {n} of axis {names[0]!r} (shape {leaf.shape})")
        return _bind1(C.psum_scatter_op, {"axes": names, "sizes": sizes,
                                          "scatter_dimension": sd, "tiled": bool(tiled)}, leaf)
    return tree_map(one, x)


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Example ``dst`` receives example ``src``'s ``x`` for each pair ``(src, dst)`` of
    ``perm``; an example that receives nothing gets zeros (JAX's semantics).  ``perm`` must
    not repeat a source or a destination.  Its derivative is the inverse permutation."""
    names, sizes = _single(axis_name, "lax.ppermute")
    n = sizes[0]
    try:
        pairs = tuple((operator.index(a), operator.index(b)) for a, b in perm)
    except (TypeError, ValueError):
        raise TypeError(f"lax.ppermute: perm must be a sequence of (source, destination) "
                        f"int pairs, got {perm!r}") from None
    srcs, dsts = [a for a, _ in pairs], [b for _, b in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"lax.ppermute: perm sources and destinations must be unique, got "
                         f"{perm!r}")
    for a in srcs + dsts:
        if not 0 <= a < n:
            raise ValueError(f"lax.ppermute: perm entry {a} is out of range for axis "
                             f"{names[0]!r} of size {n}")
    params = {"axes": names, "sizes": sizes, "perm": pairs}
    return tree_map(lambda leaf: _bind1(C.ppermute_op, params, leaf), x)


def pshuffle(x: Any, axis_name: Any, perm: Any) -> Any:
    """Example ``i`` receives example ``perm[i]``'s ``x`` (``perm``: a permutation of
    ``range(axis size)``); JAX's ``pshuffle``, a ``ppermute``."""
    names, sizes = _single(axis_name, "lax.pshuffle")
    perm = list(perm)
    if sorted(perm) != list(range(sizes[0])):
        raise ValueError(f"lax.pshuffle: perm must be a permutation of range({sizes[0]}), "
                         f"got {perm!r}")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Each example splits ``x`` along ``split_axis`` into one block per example, sends block
    ``j`` to example ``j``, and concatenates the blocks it receives (in example order) along
    ``concat_axis``, JAX's ``all_to_all``.

    Without ``tiled``, ``x.shape[split_axis]`` must equal the axis size; that axis is removed
    and the received blocks are stacked along a new axis at ``concat_axis`` (of the result).
    With ``tiled=True`` it must be a multiple of the size, and the blocks are concatenated
    along the existing ``concat_axis``.  Written with ``all_gather`` and ``axis_index``, so it
    differentiates (its transpose is the all_to_all back) and batches like them.
    """
    _no_groups(axis_index_groups, "lax.all_to_all")
    names, sizes = _single(axis_name, "lax.all_to_all")
    n = sizes[0]

    def one(leaf):
        from nx_rune import frontend as F
        leaf = leaf if isinstance(leaf, ArrayBase) else F.asarray(leaf)
        nd = leaf.ndim
        if nd == 0:
            raise ValueError("lax.all_to_all: the operand must have rank >= 1, got a scalar")
        sa = _axis_arg(split_axis, nd, "lax.all_to_all", "split_axis")
        ca = _axis_arg(concat_axis, nd, "lax.all_to_all", "concat_axis")
        m = leaf.shape[sa]
        if (m % n if tiled else m != n):
            raise ValueError(f"lax.all_to_all: the operand's split_axis {sa} has size {m}, "
                             f"which must {'be a multiple of' if tiled else 'equal'} the size "
                             f"{n} of axis {names[0]!r} (shape {leaf.shape})")
        if tiled:
            leaf = F.reshape(leaf, leaf.shape[:sa] + (n, m // n) + leaf.shape[sa + 1:])
        # every example's x (axis 0: the sender j), then each example's own block i
        every = all_gather(leaf, axis_name)
        got = F.take(every, axis_index(axis_name), axis=sa + 1)
        if not tiled:
            return F.moveaxis(got, 0, ca)
        got = F.moveaxis(got, 0, ca)
        sh = got.shape
        return F.reshape(got, sh[:ca] + (sh[ca] * sh[ca + 1],) + sh[ca + 2:])
    return tree_map(one, x)


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Example ``source``'s ``x`` in every example of the named axis (JAX's
    ``pbroadcast``); its derivative sends the summed cotangent back to ``source``."""
    names, sizes = _single(axis_name, "lax.pbroadcast")
    try:
        source = operator.index(source)
    except TypeError:
        raise TypeError(f"lax.pbroadcast: source must be an int, got {source!r}") from None
    if not 0 <= source < sizes[0]:
        raise ValueError(f"lax.pbroadcast: source {source} is out of range for axis "
                         f"{names[0]!r} of size {sizes[0]}")

    def one(leaf):
        from nx_rune import frontend as F
        leaf = leaf if isinstance(leaf, ArrayBase) else F.asarray(leaf)
        mine = axis_index(axis_name) == source
        return psum(F.where(mine, leaf, F.zeros_like(leaf)), axis_name)
    return tree_map(one, x)


def axis_index(axis_name: Any) -> Any:
    """The index of the current example along the named axis (an int32 scalar per example,
    from 0 to the axis size minus 1).  With a tuple of names, the row-major index over them."""
    names, sizes = _names(axis_name, "lax.axis_index")
    out = None
    for nm, sz in zip(names, sizes):
        i = C.collective_bind(C.axis_index_op, {"axes": (nm,), "sizes": (sz,)}, [])[0]
        out = i if out is None else out * sz + i
    return out


def axis_size(axis_name: Any) -> int:
    """The number of examples of the named axis (or the product over a tuple of names), a
    Python int."""
    _, sizes = _names(axis_name, "lax.axis_size")
    return int(np.prod(sizes))
