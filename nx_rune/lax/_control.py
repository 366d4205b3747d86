"""``nx.lax``'s selections, ``switch``, ``map``, ``associative_scan``, sorting and the
cumulative reductions, composed from ``cond``/``scan`` and the front end.

``switch`` with a traced index is a balanced tree of ``cond`` (so under ``vmap`` with a
per-example index every branch runs and each example takes its own, as in JAX); ``map`` is a
``scan``; ``associative_scan`` is JAX's odd/even parallel prefix algorithm (log2(n) rounds of
``fn`` on strided slices), so any associative ``fn`` over pytrees works and differentiates.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from nx_rune import frontend as F
from nx_rune.autodiff.api import stop_gradient
from nx_rune.compiler.control import cond, scan
from nx_rune.frontend._core import operand as _arr
from nx_rune.frontend.indexing import concrete_value
from nx_rune.lax._structural import slice_in_dim
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten
from nx_rune.typing import Array, ArrayLike, PyTree

__all__ = ["associative_scan", "cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "map",
           "select", "select_n", "sort", "sort_key_val", "stop_gradient", "switch", "top_k"]


# -- selections -----------------------------------------------------------------------------------

def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """JAX's ``lax.select(pred, on_true, on_false)``: on_true where pred else on_false
    (pred boolean, a scalar or of the cases' shape; the cases of one shape and dtype)."""
    return select_n(pred, on_false, on_true)


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """JAX's ``lax.select_n(which, *cases)``: ``cases[which]`` elementwise.  which: bool (two
    cases at most: False picks cases[0]) or an integer in ``[0, len(cases))`` (out of range
    picks an end case), a scalar or of the cases' shape; the cases share shape and dtype."""
    if not cases:
        raise ValueError("cases: select_n needs at least one case")
    w = _arr(which)
    cs = [_arr(c) for c in cases]
    for k, c in enumerate(cs[1:], 1):
        if c.shape != cs[0].shape or c.dtype != cs[0].dtype:
            raise TypeError(f"cases: select_n needs cases of one shape and dtype, got "
                            f"{cs[0].shape} {cs[0].dtype} (case 0) and {c.shape} {c.dtype} "
                            f"(case {k})")
    if w.shape not in ((), cs[0].shape):
        raise TypeError(f"which: shape {w.shape} must be () or the cases' shape {cs[0].shape}")
    if w.dtype.kind == "b":
        if len(cs) > 2:
            raise TypeError(f"which: a boolean which selects between at most 2 cases, got "
                            f"{len(cs)}")
        return cs[0] if len(cs) == 1 else F.where(w, cs[1], cs[0])
    if w.dtype.kind not in "iu":
        raise TypeError(f"which: must be boolean or integer, got {w.dtype}")

    def pick(lo, hi):
        if hi - lo == 1:
            return cs[lo]
        mid = (lo + hi) // 2
        return F.where(F.less(w, mid), pick(lo, mid), pick(mid, hi))
    out = pick(0, len(cs))
    return F.broadcast_to(out, cs[0].shape) if out.shape != cs[0].shape else out


def switch(index: ArrayLike, branches: Sequence[Callable[..., Any]], *operands: Any,
            **kwargs: Any) -> Any:
    """JAX's ``lax.switch(index, branches, *operands)``: ``branches[index](*operands)``, index
    clamped to ``[0, len(branches) - 1]``.  A concrete index calls one branch; a traced one is
    a tree of ``lax.cond`` (each branch traced under jit; under vmap with a per-example index
    all branches run and each example takes its own).  Differentiable through the branch
    taken.  (JAX's deprecated ``operand=`` keyword is accepted too.)"""
    if "operand" in kwargs:
        if operands:
            raise TypeError("switch: pass either operands or operand=, not both")
        operands = (kwargs.pop("operand"),)
    if kwargs:
        raise TypeError(f"switch: unexpected keyword arguments {sorted(kwargs)}")
    branches = list(branches)
    if not branches:
        raise ValueError("branches: switch needs at least one branch")
    for b in branches:
        if not callable(b):
            raise TypeError(f"branches: every branch must be callable, got {b!r}")
    n = len(branches)
    if isinstance(index, (bool, np.bool_, float, complex)):
        raise TypeError(f"index: must be an integer scalar, got {index!r}")
    if isinstance(index, (int, np.integer)):
        return branches[min(max(int(index), 0), n - 1)](*operands)
    i = _arr(index)
    if i.shape != () or i.dtype.kind not in "iu":
        raise TypeError(f"index: must be an integer scalar, got dtype {i.dtype} of shape "
                        f"{i.shape}")
    c = concrete_value(i)
    if c is not None:
        return branches[min(max(int(c), 0), n - 1)](*operands)
    if n == 1:
        return branches[0](*operands)
    i = F.clip(F.astype(i, np.int32), 0, n - 1)

    def tree(lo, hi, ops):
        if hi - lo == 1:
            return branches[lo](*ops)
        mid = (lo + hi) // 2
        return cond(F.less(i, mid), lambda *o: tree(lo, mid, o), lambda *o: tree(mid, hi, o),
                    *ops)
    return tree(0, n, operands)


# -- map and associative_scan ---------------------------------------------------------------------

def map(f: Callable[..., Any], xs: PyTree, *, batch_size: int | None = None) -> PyTree:
    """JAX's ``lax.map(f, xs, batch_size=None)``: ``f`` over the leading axis of the pytree xs,
    the results stacked (a ``scan``).  ``batch_size``: ``vmap(f)`` over chunks of that many
    (the remainder in one last chunk)."""
    if not callable(f):
        raise TypeError(f"f: must be callable, got {type(f).__name__}")
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"batch_size: must be a positive int, got {batch_size!r}")
    from nx_rune.autodiff.api import vmap
    leaves, tree = tree_flatten(xs)
    if not leaves:
        raise ValueError("xs: map needs at least one array to map over")
    leaves = [_arr(v) for v in leaves]
    n = leaves[0].shape[0]
    bs = int(batch_size)
    nb, rem = divmod(n, bs)
    outs = []
    if nb:
        main = [F.reshape(v[:nb * bs], (nb, bs) + v.shape[1:]) for v in leaves]
        ys = scan(lambda c, x: (c, vmap(f)(x)), (), tree_unflatten(tree, main))[1]
        y_leaves, y_tree = tree_flatten(ys)
        outs.append([F.reshape(y, (nb * bs,) + y.shape[2:]) for y in y_leaves])
    if rem:
        ys = vmap(f)(tree_unflatten(tree, [v[nb * bs:] for v in leaves]))
        y_leaves, y_tree = tree_flatten(ys)
        outs.append(y_leaves)
    if len(outs) == 1:
        return tree_unflatten(y_tree, outs[0])
    return tree_unflatten(y_tree, [F.concatenate([a, b], axis=0) for a, b in zip(*outs)])


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1], ... along ``axis`` (a one longer than b, or as long)."""
    na, nb = a.shape[axis], b.shape[axis]
    if na != nb:
        widths = [(0, 0)] * b.ndim
        widths[axis] = (0, na - nb)
        b = F.pad(b, widths)
    s = F.stack([a, b], axis=axis + 1)
    merged = F.reshape(s, a.shape[:axis] + (2 * na,) + a.shape[axis + 1:])
    if na != nb:
        merged = slice_in_dim(merged, 0, na + nb, 1, axis)
    return merged


def associative_scan(fn: Callable[..., Any], elems: PyTree, reverse: bool = False,
                      axis: int = 0) -> PyTree:
    """JAX's ``lax.associative_scan(fn, elems, reverse=False, axis=0)``: the inclusive prefix
    combination ``fn(...fn(fn(e0, e1), e2)..., ek)`` at every position k along ``axis`` for an
    associative ``fn`` over pytrees of arrays (elementwise in their leading shape).  Computed
    as JAX does (parallel prefix: O(log n) rounds of ``fn``), so rounding matches JAX's order.
    ``reverse``: the combination runs from the end."""
    if not callable(fn):
        raise TypeError(f"fn: must be callable, got {type(fn).__name__}")
    leaves, tree = tree_flatten(elems)
    if not leaves:
        raise ValueError("elems: associative_scan needs at least one array")
    leaves = [_arr(v) for v in leaves]
    if leaves[0].ndim == 0:
        raise ValueError("elems: arrays must have at least one axis")
    axis = operator.index(axis)
    axis = axis % leaves[0].ndim if -leaves[0].ndim <= axis < leaves[0].ndim else axis
    if not 0 <= axis < leaves[0].ndim:
        raise ValueError(f"axis: {axis} is out of range for elems of shape {leaves[0].shape}")
    n = leaves[0].shape[axis]
    for v in leaves:
        if v.ndim <= axis or v.shape[axis] != n:
            raise ValueError(f"elems: every array must have length {n} along axis {axis}, got "
                             f"shape {v.shape}")
    if reverse:
        leaves = [F.flip(v, axis) for v in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"fn: must return the structure of elems ({tree}), got {out_tree}")
        return [_arr(v) for v in out_leaves]

    def sl(v, start, stop, step=1):
        m = v.shape[axis]
        return slice_in_dim(v, start, m + stop if stop is not None and stop < 0 else stop,
                            step, axis)

    def run(es):
        m = es[0].shape[axis]
        if m < 2:
            return es
        reduced = combine([sl(e, 0, -1, 2) for e in es], [sl(e, 1, None, 2) for e in es])
        odd = run(reduced)
        if m % 2 == 0:
            even = combine([sl(e, 0, -1) for e in odd], [sl(e, 2, None, 2) for e in es])
        else:
            even = combine(odd, [sl(e, 2, None, 2) for e in es])
        even = [F.concatenate([sl(e, 0, 1), r], axis=axis) for e, r in zip(es, even)]
        return [_interleave(a, b, axis) for a, b in zip(even, odd)]

    out = run(leaves)
    if reverse:
        out = [F.flip(v, axis) for v in out]
    return tree_unflatten(tree, out)


# -- sorting --------------------------------------------------------------------------------------

def sort(operand: ArrayLike, dimension: int = -1, is_stable: bool = True,
          num_keys: int = 1) -> Array | tuple[Array, ...]:
    """JAX's ``lax.sort(operand, dimension=-1, is_stable=True, num_keys=1)``: one array sorted
    along ``dimension``, or a sequence of arrays of one shape all permuted by the
    lexicographic order of the first ``num_keys`` of them (a tuple back).  Ascending, NaNs
    last, equal keys in their original order (always stable); -0.0 equals 0.0.
    Differentiable through the permutation."""
    single = isinstance(operand, (ArrayBase, np.ndarray)) or np.isscalar(operand)
    ops = [_arr(operand)] if single else [_arr(v) for v in operand]
    if not ops:
        raise ValueError("operand: sort needs at least one array")
    nk = operator.index(num_keys)
    if not 1 <= nk <= len(ops):
        raise ValueError(f"num_keys: must be in [1, {len(ops)}], got {num_keys}")
    shape = ops[0].shape
    for v in ops[1:]:
        if v.shape != shape:
            raise ValueError(f"operand: arrays must share one shape, got {shape} and {v.shape}")
    if not shape:
        raise ValueError("operand: sort needs at least one axis, got shape ()")
    d = operator.index(dimension)
    if not -len(shape) <= d < len(shape):
        raise ValueError(f"dimension: {d} is out of range for shape {shape}")
    d %= len(shape)
    if single:
        return F.sort(ops[0], axis=d)
    # least significant key first: each stable sort keeps the order of the keys after it
    perm = None
    for k in reversed(ops[:nk]):
        key = k if perm is None else F.take_along_axis(k, perm, axis=d)
        p = F.argsort(key, axis=d, stable=True)
        perm = p if perm is None else F.take_along_axis(perm, p, axis=d)
    return tuple(F.take_along_axis(v, perm, axis=d) for v in ops)


def sort_key_val(keys: ArrayLike, values: ArrayLike, dimension: int = -1,
                  is_stable: bool = True) -> tuple[Array, Array]:
    """JAX's ``lax.sort_key_val(keys, values, dimension=-1)``: (sorted keys, values permuted
    alike)."""
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand: ArrayLike, k: int, *, axis: int = -1) -> tuple[Array, Array]:
    """JAX's ``lax.top_k(operand, k, axis=-1)``: the k largest entries along ``axis``, largest
    first (NaN counts as largest; ties in index order), and their int32 indices.
    Differentiable in the values."""
    x = _arr(operand)
    if x.ndim == 0:
        raise ValueError("operand: top_k needs at least one axis, got shape ()")
    a = operator.index(axis)
    if not -x.ndim <= a < x.ndim:
        raise ValueError(f"axis: {a} is out of range for shape {x.shape}")
    a %= x.ndim
    k = operator.index(k)
    if not 0 <= k <= x.shape[a]:
        raise ValueError(f"k: must be in [0, {x.shape[a]}] (operand shape {x.shape}), got {k}")
    idx = F.argsort(x, axis=a, descending=True, stable=True)
    idx = slice_in_dim(idx, 0, k, 1, a)
    return F.take_along_axis(x, idx, axis=a), F.astype(idx, np.int32)


# -- cumulative reductions ------------------------------------------------------------------------

def _cumulative(name, fn):
    def op(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
        x = _arr(operand)
        if x.ndim == 0:
            raise ValueError(f"operand: lax.{name} needs at least one axis, got shape ()")
        a = operator.index(axis)
        if not -x.ndim <= a < x.ndim:
            raise ValueError(f"axis: {a} is out of range for shape {x.shape}")
        a %= x.ndim
        if reverse:
            return F.flip(fn(F.flip(x, a), a), a)
        return fn(x, a)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"JAX's ``lax.{name}(operand, axis=0, reverse=False)``: the running "
                  f"reduction along ``axis`` (from the end with ``reverse``), operand's dtype.")
    return op


def _logaddexp_scan(x, a):
    if x.dtype.kind not in "fc":
        raise TypeError(f"operand: lax.cumlogsumexp needs a floating dtype, got {x.dtype}")
    return associative_scan(F.logaddexp, x, axis=a)


cumsum = _cumulative("cumsum", lambda x, a: F.cumsum(x, axis=a, dtype=x.dtype))
cumprod = _cumulative("cumprod", lambda x, a: F.cumprod(x, axis=a, dtype=x.dtype))
cummax = _cumulative("cummax", lambda x, a: F.cummax(x, axis=a))
cummin = _cumulative("cummin", lambda x, a: F.cummin(x, axis=a))
cumlogsumexp = _cumulative("cumlogsumexp", _logaddexp_scan)
