"""The static-shape and out-of-bounds forms of indexing that JAX programs use: ``nonzero``
with ``size=`` (a stable argsort puts the non-zero positions first), and the index rewriting
behind ``take(mode=)`` and ``x.at[i].get/set(mode=)`` ("clip": clamped; "fill"/"drop": sent to a
slot one past the end, which the caller pads on).  Composed of front-end ops, so that they run
under jit, vmap and grad on traced indices.
"""
from __future__ import annotations

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.frontend import elementwise as _elementwise
from nx_rune.frontend._core import astype, operand
from nx_rune.frontend.movement import concatenate, reshape
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor


def _nonzero_sized(x, size, fill_value, fname, arg="x"):
    """JAX's ``nonzero(x, size=, fill_value=)``: the indices of the first ``size`` non-zero
    entries of ``x`` (C order), one int array per axis, each of length ``size``, the missing
    ones ``fill_value`` (0 by default; a scalar, or one per axis).  Composed of front-end ops
    (a stable argsort puts the non-zero positions first, in order), so its shape is static and
    it runs under jit and vmap on traced values."""
    x = operand(x)
    if x.ndim == 0:
        raise ValueError(f"{fname}: {arg} must be at least 1-D")
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"{fname}: size must be an int, got {type(size).__name__}")
    size = int(size)
    if size < 0:
        raise ValueError(f"{fname}: size must be >= 0, got {size}")
    if fill_value is None:
        fills = [0] * x.ndim
    elif isinstance(fill_value, (tuple, list)):
        if len(fill_value) != x.ndim:
            raise ValueError(f"{fname}: fill_value has {len(fill_value)} entries, {arg} has "
                             f"{x.ndim} axes (give one per axis, or a scalar)")
        fills = list(fill_value)
    else:
        fills = [fill_value] * x.ndim
    flat = reshape(_elementwise.not_equal(x, 0) if x.dtype.kind != "b" else x, (-1,))
    n = flat.shape[0]
    dt = _index_dtype(max(x.shape))
    cdt = _index_dtype(n)
    # (the argsort primitive: the sorting module imports this one; True first, in order)
    order = bind(P.argsort_p, _elementwise.logical_not(flat), axis=0, descending=False,
                 stable=True, dtype=cdt)
    if size <= n:
        first = order[:size]
    else:
        first = concatenate([order, Tensor._wrap(np.zeros(size - n, cdt))])
    count = bind(P.reduce_sum_p, astype(flat, cdt), axes=(0,), keepdims=False)
    valid = Tensor._wrap(np.arange(size, dtype=cdt)) < count
    out = []
    stride = 1
    for axis in range(x.ndim - 1, -1, -1):
        coord = (first // stride) % x.shape[axis] if x.shape[axis] else first * 0
        out.append(astype(_elementwise.where(valid, coord, astype(operand(fills[axis]), cdt)),
                          dt))
        stride *= x.shape[axis]
    return tuple(out[::-1])


def _index_dtype(n):
    """The default int, or int64 when ``n`` does not fit in it (sorting.index_dtype)."""
    dt = dtypes.DEFAULT_INT
    return dt if n <= np.iinfo(dt).max else dtypes.int64


_TAKE_MODES = (None, "raise", "clip", "wrap", "fill", "promise_in_bounds")


def _default_fill(dtype, fill_value):
    """JAX's fill value of out-of-bounds reads (``mode="fill"``) in ``dtype``."""
    if fill_value is not None:
        return fill_value
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


def _redirect_out_of_bounds(idx, n):
    """Integer indices ``idx`` into an axis of length ``n``: negative ones in [-n, 0) counted
    from the end, the ones out of bounds sent to ``n`` (a slot that the caller pads on)."""
    idx = operand(idx)
    norm = _elementwise.where(idx < 0, idx + n, idx)
    valid = _elementwise.logical_and(norm >= 0, norm < n)
    return _elementwise.where(valid, norm, n)


# -- out-of-bounds modes of x.at[index] (JAX's "clip", "fill"/"drop", "promise_in_bounds") -----

_AT_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")


def _int_entry(e):
    """Whether index entry ``e`` is an integer or an integer array (what a mode changes)."""
    if isinstance(e, (bool, np.bool_)):
        return False
    if isinstance(e, (int, np.integer)):
        return True
    if isinstance(e, (ArrayBase, np.ndarray)):
        return e.dtype.kind in "iu"
    if isinstance(e, (list, tuple)):
        return np.asarray(e).dtype.kind in "iu"
    return False


def _moded_index(shape, index, mode):
    """``(index', padded)``: ``index`` with its integer entries made in bounds for ``mode``
    ("clip": clamped after counting negatives from the end; "fill"/"drop": sent to a slot one
    past the end, on the axes listed in ``padded``, which the caller pads by one)."""
    if not isinstance(index, tuple):
        index = (index,)
    used = 0
    for e in index:
        if e is None or e is Ellipsis:
            continue
        if isinstance(e, (ArrayBase, np.ndarray)) and e.dtype.kind == "b":
            used += e.ndim
        else:
            used += 1
    out, padded, axis = [], [], 0
    for e in index:
        if e is Ellipsis:
            out.append(e)
            axis += len(shape) - used
            continue
        if e is None:
            out.append(e)
            continue
        if isinstance(e, (ArrayBase, np.ndarray)) and e.dtype.kind == "b":
            out.append(e)
            axis += e.ndim
            continue
        if axis < len(shape) and _int_entry(e):
            n = shape[axis]
            if isinstance(e, (int, np.integer)):
                k = int(e) + n if int(e) < 0 else int(e)
                if not 0 <= k < n:
                    if mode == "clip" and n > 0:
                        k = min(max(k, 0), n - 1)
                    else:
                        padded.append(axis)
                        k = n
                out.append(k)
            elif mode == "clip" and n > 0:
                ix = operand(e)
                out.append(_elementwise.clip(_elementwise.where(ix < 0, ix + n, ix), 0, n - 1))
            else:
                out.append(_redirect_out_of_bounds(e, n))
                padded.append(axis)
        else:
            out.append(e)
        axis += 1
    return tuple(out), sorted(set(padded))


def _check_at_mode(mode):
    if mode not in _AT_MODES:
        raise ValueError(f"mode: must be one of {_AT_MODES}, got {mode!r}")
    return None if mode == "promise_in_bounds" else mode
