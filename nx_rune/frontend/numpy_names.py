"""NumPy names beyond the Array API: ``append``, ``r_``, ``c_``, ``iscomplexobj``, ``isrealobj``,
``iscomplex``, ``real_if_close``, ``fabs``, ``fmax``, ``fmin``, ``partition``, ``argpartition``,
``rollaxis``, ``gradient``, ``vsplit``, ``hsplit``, ``dsplit``, ``row_stack``, and ``pad``'s
NumPy modes (``pad_mode``).

Each is a composition of front-end functions, so it is differentiable, jittable and batchable
wherever those are.  Shapes and index maps are computed from shapes only (never from traced
values); ``real_if_close`` is the exception NumPy makes it (its result dtype depends on the
values): it reads the concrete values and raises under jit.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from nx_rune.frontend import _core
from nx_rune.frontend import movement as _movement
from nx_rune.frontend._core import astype, normalize_axis, operand
from nx_rune.frontend.arrangement import vstack
from nx_rune.frontend.creation import arange, linspace, zeros
from nx_rune.frontend.elementwise import (
    abs,
    floor,
    imag,
    isnan,
    maximum,
    minimum,
    not_equal,
    real,
    where,
)
from nx_rune.frontend.elementwise import round as _round
from nx_rune.frontend.indexing import take
from nx_rune.frontend.movement import broadcast_to, concatenate, moveaxis, reshape, split, transpose
from nx_rune.frontend.products import tensordot
from nx_rune.frontend.reductions import max as _max
from nx_rune.frontend.reductions import mean as _mean
from nx_rune.frontend.reductions import min as _min
from nx_rune.frontend.sorting import argsort, sort
from nx_rune.frontend.sorting import median as _median
from nx_rune.tensor import ArrayBase
from nx_rune.typing import Array, ArrayLike

__all__ = ["append", "r_", "c_", "iscomplexobj", "isrealobj", "iscomplex", "real_if_close",
           "fabs", "fmax", "fmin", "partition", "argpartition", "rollaxis", "gradient",
           "vsplit", "hsplit", "dsplit", "row_stack"]



# -- joining -----------------------------------------------------------------------------------

def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """``values`` appended to ``arr``: both flattened when ``axis`` is None, else joined along
    ``axis`` (shapes must agree elsewhere); promoted dtype; a new array."""
    arr, values = operand(arr), operand(values)
    if axis is None:
        return concatenate([reshape(arr, (-1,)), reshape(values, (-1,))], 0)
    return concatenate([arr, values], axis)


def row_stack(tup: ArrayLike | Sequence[ArrayLike]) -> Array:
    """``vstack`` (NumPy's older name)."""
    return vstack(tup)


class _AxisConcatenator:
    """NumPy's ``r_``/``c_``: ``r_[a, b, 0:3, 2.0]`` joins arrays, scalars and slices (``a:b:c``
    an arange, ``a:b:nj`` a linspace of n points) along an axis; a leading string ``"axis"``,
    ``"axis,ndmin"`` or ``"axis,ndmin,trans1d"`` sets how.  Matrix directives ("r", "c") are
    not supported (ValueError)."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs = []
        for k, item in enumerate(key):
            if isinstance(item, slice):
                obj = self._slice(item)
                if ndmin > 1:
                    obj = self._upgrade(obj, ndmin, trans1d)
            elif isinstance(item, str):
                if k != 0:
                    raise ValueError(f"{self.name}: a string directive must come first, got "
                                     f"{item!r}")
                if item in ("r", "c"):
                    raise ValueError(f"{self.name}: matrix directives ('r', 'c') are not "
                                     f"supported")
                try:
                    vals = [int(v) for v in item.split(",")]
                except ValueError:
                    raise ValueError(f"{self.name}: unknown directive {item!r}") from None
                axis = vals[0]
                if len(vals) > 1:
                    ndmin = vals[1]
                if len(vals) > 2:
                    trans1d = vals[2]
                continue
            else:
                obj = operand(item)
                obj = self._upgrade(obj, builtins.max(ndmin, 1), trans1d)
            objs.append(obj)
        if not objs:
            return zeros((0,))
        return concatenate(objs, axis)

    @staticmethod
    def _slice(s):
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        if isinstance(step, complex):
            return linspace(start, s.stop, int(abs(step)))
        return arange(start, s.stop, step)

    @staticmethod
    def _upgrade(obj, ndmin, trans1d):
        nd = obj.ndim
        if nd >= ndmin:
            return obj
        obj = reshape(obj, (1,) * (ndmin - nd) + obj.shape)
        if trans1d != -1 and nd > 0:
            # NumPy moves the original axes to position trans1d of the upgraded shape
            k2 = ndmin - nd
            k1 = trans1d if trans1d >= 0 else trans1d + k2 + 1
            defaxes = list(range(ndmin))
            obj = transpose(obj, defaxes[:k1] + defaxes[k2:] + defaxes[k1:k2])
        return obj

    def __len__(self):
        return 0


r_ = _AxisConcatenator(0, 1, -1, "r_")
c_ = _AxisConcatenator(-1, 2, 0, "c_")


# -- dtype predicates and complex helpers ------------------------------------------------------

def _dtype_of(x):
    if isinstance(x, (ArrayBase, np.ndarray, np.generic)):
        return x.dtype
    return np.asarray(x).dtype


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (whatever its values)."""
    return _dtype_of(x).kind == "c"


def isrealobj(x: Any) -> bool:
    """Whether ``x`` has a non-complex dtype (whatever its values)."""
    return not iscomplexobj(x)


def iscomplex(x: ArrayLike) -> Array:
    """Elementwise: whether the imaginary part is nonzero (all False for real dtypes)."""
    x = operand(x)
    if x.dtype.kind != "c":
        return broadcast_to(operand(False), x.shape)
    return not_equal(imag(x), 0)


def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """``real(a)`` when ``a`` is complex with every imaginary part below ``tol`` machine epsilons
    (``tol`` > 1) or ``tol`` absolutely (``tol`` <= 1); else ``a``.  The result's dtype depends
    on the values: they are read concretely (TypeError under jit)."""
    a = operand(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = float(np.finfo(a.dtype).eps) * tol
    values = a._concrete_tensor()
    if values is None:
        raise TypeError("real_if_close: the result's dtype depends on the values, which are "
                        "traced here (under jit or vmap); use nx.real where the values are "
                        "known to be real")
    if bool(np.all(np.abs(np.asarray(values).imag) < tol)):
        return real(a)
    return a


def fabs(x: ArrayLike) -> Array:
    """Absolute value of real ``x`` (TypeError for complex input, as NumPy's ``fabs``)."""
    x = operand(x)
    if x.dtype.kind == "c":
        raise TypeError("x: fabs is not defined for complex input (use nx.abs)")
    if x.dtype.kind in "iub":
        x = astype(x, np.result_type(x.dtype, np.float16) if x.dtype.itemsize < 2 else
                   np.float64 if x.dtype.itemsize > 2 else np.float32)
    return abs(x)


def fmax(a: ArrayLike, b: ArrayLike) -> Array:
    """Elementwise maximum ignoring NaN: the other value where one is NaN (NaN only where both
    are)."""
    a, b = _core.promote(a, b)
    m = maximum(a, b)
    if a.dtype.kind not in "fc":
        return m
    return where(isnan(b), a, where(isnan(a), b, m))


def fmin(a: ArrayLike, b: ArrayLike) -> Array:
    """Elementwise minimum ignoring NaN: the other value where one is NaN."""
    a, b = _core.promote(a, b)
    m = minimum(a, b)
    if a.dtype.kind not in "fc":
        return m
    return where(isnan(b), a, where(isnan(a), b, m))


# -- partial sorts -----------------------------------------------------------------------------

def _check_kth(kth, n, axis):
    ks = np.atleast_1d(np.asarray(kth))
    if ks.dtype.kind not in "iu":
        raise TypeError(f"kth: expected integers, got {kth!r}")
    for k in ks.tolist():
        if not -n <= k < n:
            raise ValueError(f"kth: {k} is out of bounds for axis {axis} of size {n}")


def partition(a: ArrayLike, kth: int | Sequence[int], axis: int | None = -1) -> Array:
    """An arrangement with the element at each ``kth`` position where a sort puts it, smaller
    ones before and larger ones after (NumPy's contract).  nx returns the full sort, which
    meets it; NumPy's order within the two sides is unspecified and differs."""
    a = operand(a)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    ax = normalize_axis(axis, a.ndim)
    _check_kth(kth, a.shape[ax], ax)
    return sort(a, axis=ax)


def argpartition(a: ArrayLike, kth: int | Sequence[int], axis: int | None = -1) -> Array:
    """Indices that partition ``a`` (see ``partition``): the indices of a stable sort."""
    a = operand(a)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    ax = normalize_axis(axis, a.ndim)
    _check_kth(kth, a.shape[ax], ax)
    return argsort(a, axis=ax)


# -- axes --------------------------------------------------------------------------------------

def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Axis ``axis`` moved to lie before position ``start`` (NumPy's ``rollaxis``; prefer
    ``moveaxis``); a view."""
    a = operand(a)
    n = a.ndim
    axis = normalize_axis(axis, n)
    try:
        start = operator.index(start)
    except TypeError:
        raise TypeError(f"start: expected an int, got {start!r}") from None
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise ValueError(f"start: {start} is not in range [-{n}, {n}] for an array of "
                         f"{n} dimensions")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    return moveaxis(a, axis, start)


def _split_check(a, nd, name):
    a = operand(a)
    if a.ndim < nd:
        raise ValueError(f"ary: {name} only works on arrays of {nd} or more dimensions, got "
                         f"{a.ndim}")
    return a


def vsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along the first axis (arrays of 2 or more dimensions)."""
    return split(_split_check(ary, 2, "vsplit"), indices_or_sections, 0)


def hsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along the second axis (the first for 1-D arrays)."""
    a = _split_check(ary, 1, "hsplit")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def dsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along the third axis (arrays of 3 or more dimensions)."""
    return split(_split_check(ary, 3, "dsplit"), indices_or_sections, 2)


# -- gradient ----------------------------------------------------------------------------------

def _slice_along(x, ax, start, stop):
    idx = [builtins.slice(None)] * x.ndim
    idx[ax] = builtins.slice(start, stop)
    return x[tuple(idx)]


def _expand_along(v, ax, nd):
    shape = [1] * nd
    shape[ax] = -1
    return reshape(v, tuple(shape))


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int = 1) -> Array | list[Array]:
    """The gradient of sampled ``f`` by second-order central differences inside and first- or
    second-order (``edge_order``) one-sided differences at the edges, as NumPy's.  ``varargs``:
    the spacing, one scalar for all axes, one per axis, or per axis the sample coordinates (a
    1-D array of that axis's length).  Returns one array (a single axis) or a list (one per
    axis).  Integer ``f`` gives float64, as NumPy."""
    f = operand(f)
    nd = f.ndim
    if axis is None:
        axes = list(range(nd))
    else:
        axes = [normalize_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list))
                                                else (axis,))]
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis: repeated axis in {axis!r}")
    if edge_order not in (1, 2):
        raise ValueError(f"edge_order: must be 1 or 2, got {edge_order!r}")
    n = len(varargs)
    if n == 0:
        spacing = [1.0] * len(axes)
    elif n == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif n == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"varargs: expected 0, 1 or {len(axes)} spacings, got {n}")
    if f.dtype.kind in "iub":
        f = astype(f, np.float64)
    outs = []
    for ax, dx in zip(axes, spacing):
        size = f.shape[ax]
        if size < edge_order + 1:
            raise ValueError(f"f: gradient needs at least {edge_order + 1} samples along axis "
                             f"{ax}, got {size}")
        outs.append(_gradient_axis(f, ax, dx, edge_order))
    return outs[0] if len(outs) == 1 else outs


def _gradient_axis(f, ax, dx, edge_order):
    nd = f.ndim
    S = lambda a, b: _slice_along(f, ax, a, b)  # noqa: E731
    uniform = np.ndim(dx) == 0
    if not uniform:
        x = operand(dx)
        if x.ndim != 1 or x.shape[0] != f.shape[ax]:
            raise ValueError(f"varargs: coordinates for axis {ax} must be 1-D of length "
                             f"{f.shape[ax]}, got shape {x.shape}")
        if x.dtype.kind in "iub":
            x = astype(x, np.float64)
        d = x[1:] - x[:-1]
    if uniform:
        interior = (S(2, None) - S(None, -2)) / (2.0 * dx)
        if edge_order == 1:
            first = (S(1, 2) - S(0, 1)) / dx
            last = (S(-1, None) - S(-2, -1)) / dx
        else:
            first = (-1.5 * S(0, 1) + 2.0 * S(1, 2) - 0.5 * S(2, 3)) / dx
            last = (0.5 * S(-3, -2) - 2.0 * S(-2, -1) + 1.5 * S(-1, None)) / dx
    else:
        dx1 = _expand_along(d[:-1], ax, nd)
        dx2 = _expand_along(d[1:], ax, nd)
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        interior = a * S(None, -2) + b * S(1, -1) + c * S(2, None)
        if edge_order == 1:
            first = (S(1, 2) - S(0, 1)) / _expand_along(d[0:1], ax, nd)
            last = (S(-1, None) - S(-2, -1)) / _expand_along(d[-1:], ax, nd)
        else:
            d1, d2 = d[0:1], d[1:2]
            a0 = -(2.0 * d1 + d2) / (d1 * (d1 + d2))
            b0 = (d1 + d2) / (d1 * d2)
            c0 = -d1 / (d2 * (d1 + d2))
            first = (_expand_along(a0, ax, nd) * S(0, 1) + _expand_along(b0, ax, nd) * S(1, 2)
                     + _expand_along(c0, ax, nd) * S(2, 3))
            d1, d2 = d[-2:-1], d[-1:]
            a1 = d2 / (d1 * (d1 + d2))
            b1 = -(d2 + d1) / (d1 * d2)
            c1 = (2.0 * d2 + d1) / (d2 * (d1 + d2))
            last = (_expand_along(a1, ax, nd) * S(-3, -2) + _expand_along(b1, ax, nd) *
                    S(-2, -1) + _expand_along(c1, ax, nd) * S(-1, None))
    return concatenate([first, interior, last], ax)


# -- pad's NumPy modes -------------------------------------------------------------------------

_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")
_STAT_MODES = {"maximum": _max, "minimum": _min, "mean": _mean, "median": _median}
PAD_MODES = ("constant", "empty", "linear_ramp") + _INDEX_MODES + tuple(_STAT_MODES)


def _pairs(value, nd, name, cast=int):
    arr = np.broadcast_to(np.asarray(value, dtype=object), (nd, 2))
    try:
        return [(cast(b), cast(a)) for b, a in arr.tolist()]
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected numbers, got {value!r}") from None


def pad_mode(x, cfg, mode, *, end_values=0, reflect_type="even", stat_length=None):
    """``x`` padded by ``cfg`` (one (before, after) per axis) in NumPy mode ``mode`` (any of
    ``PAD_MODES`` except "constant"), axis after axis as NumPy does (later axes see the earlier
    ones' padding)."""
    nd = x.ndim
    if mode not in PAD_MODES:
        raise ValueError(f"mode: {mode!r} is not one of {PAD_MODES}")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"reflect_type: must be 'even' or 'odd', got {reflect_type!r}")
    ends = _pairs(end_values, nd, "end_values", cast=lambda v: v)
    stats = None if stat_length is None else _pairs(stat_length, nd, "stat_length")
    for ax, (b, a) in enumerate(cfg):
        if b == 0 and a == 0:
            continue
        n = x.shape[ax]
        if mode == "empty":
            x = concatenate([zeros(_with(x.shape, ax, b), x.dtype), x,
                             zeros(_with(x.shape, ax, a), x.dtype)], ax)
        elif mode in _INDEX_MODES:
            if n == 0:
                raise ValueError(f"x: can't extend the empty axis {ax} in mode {mode!r}")
            if mode in ("reflect", "symmetric") and reflect_type == "odd":
                # odd reflection is affine in x: out = W @ x along the axis, W from NumPy's own
                # padding of the identity (exact small integer coefficients)
                w = np.pad(np.eye(n), ((b, a), (0, 0)), mode=mode, reflect_type="odd")
                wt = operand(w.astype(x.dtype if x.dtype.kind in "fc" else np.float64))
                y = moveaxis(tensordot(wt, moveaxis(x, ax, 0), axes=([1], [0])), 0, ax)
                x = y if x.dtype.kind in "fc" else astype(y, x.dtype)
            else:
                idx = np.pad(np.arange(n), (b, a), mode=mode)
                x = take(x, operand(idx.astype(np.int64)), axis=ax)
        elif mode == "linear_ramp":
            if n == 0:
                raise ValueError(f"x: can't extend the empty axis {ax} in mode 'linear_ramp'")
            eb, ea = ends[ax]
            x = concatenate([_ramp(_slice_along(x, ax, 0, 1), eb, b, ax, False), x,
                             _ramp(_slice_along(x, ax, n - 1, n), ea, a, ax, True)], ax)
        else:
            if n == 0:
                raise ValueError(f"x: can't extend the empty axis {ax} in mode {mode!r}")
            lb, la = (n, n) if stats is None else stats[ax]
            if lb < 0 or la < 0:
                raise ValueError(f"stat_length: must be non-negative, got {stat_length!r}")
            lb, la = builtins.max(builtins.min(lb, n), 1), builtins.max(builtins.min(la, n), 1)
            before = _stat(_STAT_MODES[mode], _slice_along(x, ax, 0, lb), ax, x.dtype)
            after = _stat(_STAT_MODES[mode], _slice_along(x, ax, n - la, n), ax, x.dtype)
            x = concatenate([broadcast_to(before, _with(x.shape, ax, b)), x,
                             broadcast_to(after, _with(x.shape, ax, a))], ax)
    return x


def _with(shape, ax, size):
    return shape[:ax] + (size,) + shape[ax + 1:]


def _stat(fn, part, ax, dtype):
    v = fn(part, axis=ax, keepdims=True)
    if dtype.kind in "iub" and v.dtype != dtype:
        v = astype(_round(v), dtype)     # NumPy rounds mean and median for integer arrays
    return astype(v, dtype) if v.dtype != dtype else v


def _ramp(edge, end, width, ax, reverse):
    """``width`` values from ``end`` towards ``edge`` (excluded), along ``ax``: NumPy's
    ``linspace(end, edge, width, endpoint=False)``, reversed after the array."""
    shape = _with(edge.shape, ax, width)
    if width == 0:
        return zeros(shape, edge.dtype)
    t = _expand_along(operand(np.arange(width, dtype=np.float64) / width), ax, edge.ndim)
    e = edge if edge.dtype.kind in "fc" else astype(edge, np.float64)
    vals = end + (e - end) * t
    if reverse:
        vals = take(vals, operand(np.arange(width - 1, -1, -1)), axis=ax)
    if edge.dtype.kind in "iu":
        vals = floor(vals)
    return astype(broadcast_to(vals, shape), edge.dtype)


_movement._PAD_MODE[0] = pad_mode
