"""Summary statistics of ``nx.scipy.stats`` beside the distributions: ``sem``, ``rankdata`` and
``mode``, as ``jax.scipy.stats``'s (SciPy's values)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.frontend.indexing import getitem as _getitem
from nx_rune.typing import Array, ArrayLike

__all__ = ["sem", "rankdata", "mode", "ModeResult"]


def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """The standard error of the mean, std(a, ddof) / sqrt(n), along ``axis`` (None: of the
    flattened array), as ``scipy.stats.sem``.  ``nan_policy``: "propagate" (nan where the
    slice holds one) or "omit" (the nans left out, n their count; "raise" is not supported,
    as in JAX: it would need the values).  The inexact dtype of a; differentiable in a."""
    if nan_policy not in ("propagate", "omit"):
        raise ValueError(f"nan_policy: must be 'propagate' or 'omit', got {nan_policy!r}")
    x = _as_inexact(F.asarray(a))
    if axis is None:
        x, axis = F.reshape(x, (-1,)), 0
    if nan_policy == "omit":
        n = F.sum(F.astype(F.logical_not(F.isnan(x)), x.dtype), axis=axis, keepdims=keepdims)
        sd = F.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims)
    else:
        n = x.shape[axis]
        sd = F.std(x, axis=axis, ddof=ddof, keepdims=keepdims)
    return F.divide(sd, F.sqrt(n) if not isinstance(n, int) else n ** 0.5)


def _axis(x: Array, axis: int | None, name: str) -> tuple[Array, int]:
    """x with ``axis`` moved last (None: x flattened), and the axis as a non-negative int."""
    if axis is None:
        return F.reshape(x, (-1,)), 0
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: {name} takes an int or None, got {axis!r}")
    if not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
        raise ValueError(f"axis: {axis} is out of range for an array of {x.ndim} axes")
    if x.ndim == 0:
        return F.reshape(x, (1,)), 0
    axis = int(axis) % x.ndim
    return F.moveaxis(x, axis, -1), axis


def _groups(x: Array) -> tuple[Array, Array, Array, Array]:
    """For x (..., n) sorted along the last axis (stable): the sorting indices, and for each
    sorted position the 1-based first and last positions of its run of equal values and its
    run's number (nans are equal to each other, as a value of their own)."""
    n = x.shape[-1]
    idx = F.argsort(x, axis=-1, stable=True)
    s = F.take_along_axis(x, idx, axis=-1)
    hi = _getitem(s, (Ellipsis, slice(1, None)))
    lo = _getitem(s, (Ellipsis, slice(None, -1)))
    differ = F.logical_and(F.not_equal(hi, lo),
                           F.logical_not(F.logical_and(F.isnan(hi), F.isnan(lo))))
    first = F.ones(s.shape[:-1] + (1,), dtype=bool)
    new = F.concatenate([first, differ], axis=-1)
    last = F.concatenate([differ, first], axis=-1)
    pos = F.arange(1, n + 1)
    start = F.cummax(F.where(new, pos, 0), axis=-1)
    end = F.flip(F.cummin(F.flip(F.where(last, pos, n + 1), -1), axis=-1), -1)
    run = F.cumsum(F.astype(new, pos.dtype), axis=-1)
    return idx, start, end, run


def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Array:
    """The ranks (1 to n) of the values of ``a`` (flattened, or along ``axis``), as
    ``scipy.stats.rankdata``: ties get the ``method`` "average" of their ranks, their "min",
    "max", consecutive "dense" ranks, or "ordinal" (first come first).  ``nan_policy``
    "propagate": a slice holding a nan ranks as all nan ("omit" and "raise" are not supported,
    as in JAX).  float64 (int64 for integer data and a method other than "average"), as
    SciPy's; a's shape (flattened for axis None)."""
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"method: must be 'average', 'min', 'max', 'dense' or 'ordinal', got "
                         f"{method!r}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"nan_policy: only 'propagate' is supported (JAX's), got "
                                  f"{nan_policy!r}")
    x, ax = _axis(F.asarray(a), axis, "rankdata")
    idx, start, end, run = _groups(x)
    sorted_rank = {"min": start, "max": end, "dense": run,
                   "ordinal": F.broadcast_to(F.arange(1, x.shape[-1] + 1), x.shape),
                   "average": None}[method]
    if sorted_rank is None:
        sorted_rank = F.multiply(F.add(F.astype(start, np.float64), F.astype(end, np.float64)),
                                 0.5)
    # back to the original order: the inverse permutation of the sort
    # SciPy's dtypes: float64, but int64 for integer data ranked by a method other than
    # "average" (no nan can occur there)
    integral = x.dtype.kind in "iub" and method != "average"
    out_dtype = np.int64 if integral else np.float64
    ranks = F.take_along_axis(F.astype(sorted_rank, out_dtype), F.argsort(idx, axis=-1),
                              axis=-1)
    if x.dtype.kind in "fc":
        ranks = F.where(F.any(F.isnan(x), axis=-1, keepdims=True), float("nan"), ranks)
    return ranks if axis is None else F.moveaxis(ranks, -1, ax)


class ModeResult(NamedTuple):
    """``mode``'s result: the modal values and their counts."""

    mode: Array
    count: Array  # type: ignore[assignment]  # (the field shadows tuple.count, as SciPy's)


def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (None: of the flattened array) and its count,
    as ``scipy.stats.mode``: the smallest of equally frequent values; nans count as one value
    (``nan_policy`` "propagate"; "omit" and "raise" are not supported, as in JAX).  A
    ``ModeResult(mode, count)``: mode in a's dtype, count in the default int dtype; the axis
    removed (kept with length 1 with ``keepdims``)."""
    if nan_policy != "propagate":
        raise NotImplementedError(f"nan_policy: only 'propagate' is supported (JAX's), got "
                                  f"{nan_policy!r}")
    x0 = F.asarray(a)
    if x0.size == 0:
        raise ValueError("a: mode of an empty array")
    x, ax = _axis(x0, axis, "mode")
    idx, start, end, _ = _groups(x)
    counts = F.add(F.subtract(end, start), 1)
    # the first run of the largest count in sorted order: the smallest such value
    best = F.argmax(counts, axis=-1, keepdims=True)
    s = F.take_along_axis(x, idx, axis=-1)
    value = F.take_along_axis(s, best, axis=-1)
    count = F.astype(F.take_along_axis(counts, best, axis=-1), F.asarray(0).dtype)
    if keepdims and axis is not None and x0.ndim:
        value, count = F.moveaxis(value, -1, ax), F.moveaxis(count, -1, ax)
    elif keepdims:
        shape = (1,) * max(x0.ndim, 1)
        value, count = F.reshape(value, shape), F.reshape(count, shape)
    else:
        value, count = F.squeeze(value, -1), F.squeeze(count, -1)
    return ModeResult(value, count)
