"""Splitting a batch over workers and combining their results: the parts of data parallelism
that need no engine (pure functions of their arguments, run in the calling process).

A batch is any pytree whose leaves are arrays (nx Tensors or NumPy ndarrays) sharing their
leading dimension N.  It is cut into ``min(k, N)`` contiguous shards along axis 0, of sizes
``N // k + 1`` for the first ``N % k`` shards and ``N // k`` for the rest (as
``np.array_split``).  Each worker returns the mean loss of its shard and its gradient; the
whole batch's mean loss and gradient are the sums of those weighted by ``n_i / N``, added in
shard order, so a call is deterministic for a given batch and number of workers.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from nx_rune import tree_util
from nx_rune.tensor import ArrayBase, Tensor

__all__ = ["shard_sizes", "split_batch", "combine", "check_concrete"]


def shard_sizes(n: int, num_shards: int) -> list[int]:
    """The sizes of the contiguous shards that ``n`` rows are cut into for ``num_shards``
    workers: ``min(num_shards, n)`` sizes (no empty shard), the larger ones first, summing to n.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected a positive number of rows, got {n!r}")
    if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
        raise ValueError(f"num_shards: expected a positive int, got {num_shards!r}")
    k = min(num_shards, n)
    q, r = divmod(n, k)
    return [q + 1] * r + [q] * (k - r)


def _leaf_rows(leaf: Any, index: int) -> int:
    """The leading dimension of one batch leaf; TypeError/ValueError naming ``batch``."""
    if isinstance(leaf, ArrayBase) and not isinstance(leaf, Tensor):
        raise TypeError(f"batch: leaf {index} is a value traced by a transformation; "
                        f"DataParallel.value_and_grad cannot run inside nx.grad/nx.jvp/nx.jit "
                        f"(its workers need concrete values)")
    if isinstance(leaf, (numbers.Number, np.generic)):
        raise ValueError(f"batch: leaf {index} is 0-d (a scalar); every leaf needs a leading "
                         f"batch axis to split along")
    if not isinstance(leaf, (Tensor, np.ndarray)):
        raise TypeError(f"batch: leaf {index} is a {type(leaf).__name__}; every leaf of the "
                        f"batch must be an nx Tensor or a NumPy ndarray with a leading batch axis")
    if leaf.ndim == 0:
        raise ValueError(f"batch: leaf {index} is 0-d (a scalar); every leaf needs a leading "
                         f"batch axis to split along")
    return int(leaf.shape[0])


def split_batch(batch: Any, num_shards: int) -> tuple[list[Any], list[int]]:
    """``(shards, sizes)``: ``batch`` (a pytree of arrays with a common leading dimension N)
    cut along axis 0 into ``len(sizes)`` pytrees of the same structure, shard i holding
    ``sizes[i]`` consecutive rows (see :func:`shard_sizes`).  Leaves keep their type (a Tensor
    shard is a view, an ndarray shard a NumPy view: no data is copied here)."""
    leaves, treedef = tree_util.tree_flatten(batch)
    if not leaves:
        raise ValueError("batch: has no array leaves to split")
    rows = [_leaf_rows(leaf, i) for i, leaf in enumerate(leaves)]
    if len(set(rows)) != 1:
        detail = ", ".join(f"leaf {i}: {r}" for i, r in enumerate(rows))
        raise ValueError(f"batch: every leaf must have the same leading dimension (the batch "
                         f"size), got {detail}")
    n = rows[0]
    if n == 0:
        raise ValueError("batch: is empty (leading dimension 0); the mean loss of no examples "
                         "is undefined")
    sizes = shard_sizes(n, num_shards)
    shards, start = [], 0
    for size in sizes:
        stop = start + size
        shards.append(tree_util.tree_unflatten(treedef, [leaf[start:stop] for leaf in leaves]))
        start = stop
    return shards, sizes


def combine(results: Sequence[tuple[Any, Any]], sizes: Sequence[int]) -> tuple[Tensor, Any]:
    """The whole batch's ``(loss, grads)`` from the shards' ``[(loss_i, grads_i)]`` (loss_i a
    0-d float Tensor, grads_i pytrees of one structure) and their sizes: each weighted by
    ``sizes[i] / sum(sizes)`` and added in shard order.  The dtypes are the shards' (a Python
    float weight is weakly typed, so float32 stays float32)."""
    if len(results) != len(sizes) or not results:
        raise ValueError(f"results: expected one (loss, grads) per shard ({len(sizes)}), got "
                         f"{len(results)}")
    total = sum(sizes)
    weights = [s / total for s in sizes]
    loss: Any = None
    grad_leaves: list[Any] = []
    treedef: Any = None
    for (shard_loss, shard_grads), w in zip(results, weights):
        leaves, td = tree_util.tree_flatten(shard_grads)
        if treedef is None:
            treedef = td
            loss = shard_loss * w
            grad_leaves = [g * w for g in leaves]
        else:
            if td != treedef:
                raise ValueError(f"results: gradient structures differ between shards: "
                                 f"{treedef} and {td}")
            loss = loss + shard_loss * w
            grad_leaves = [acc + g * w for acc, g in zip(grad_leaves, leaves)]
    return loss, tree_util.tree_unflatten(treedef, grad_leaves)


def check_concrete(tree: Any, name: str) -> None:
    """TypeError naming ``name`` when a leaf of ``tree`` is a traced value (a tracer cannot be
    sent to another process)."""
    for i, leaf in enumerate(tree_util.tree_leaves(tree)):
        if isinstance(leaf, ArrayBase) and not isinstance(leaf, Tensor):
            raise TypeError(f"{name}: leaf {i} is a value traced by a transformation; "
                            f"DataParallel.value_and_grad cannot run inside nx.grad/nx.jvp/"
                            f"nx.jit (its workers need concrete values)")
