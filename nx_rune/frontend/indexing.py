"""Indexing: ``x[idx]``, ``x.at[idx]`` updates, take / take_along_axis / put_along_axis, nonzero.

Basic indices (ints, slices of any step, None, Ellipsis) give views.

``x[idx]`` with integer arrays (Tensors, ndarrays, lists) or bool masks follows NumPy's rules:

* every integer array (and every int, once some array is present) is an *advanced* index; they
  broadcast together to a shape S;
* a bool mask of k dims stands for the k integer arrays of its ``nonzero()`` (so it must be
  concrete), a bool scalar for a new axis of length 1 (True) or 0 (False);
* the basic indices (slices, None, ...) act as views first; then, if the advanced indices are
  adjacent in the index tuple, S replaces their axes in place, otherwise S comes first.

The advanced axes are merged into one (a reshape: a view when strides allow) and read with one
``gather`` (``np.take_along_axis`` semantics) along it; ``gather`` has a VJP (a scatter-add),
so indexing is differentiable in ``x``.  ``x.at[idx].set/add/...`` index an iota tensor the
same way to find the flat positions, and write them with one ``scatter``.

``x[idx] = v`` (``setitem``) and the in-place operators (``inplace_op``) write into a concrete
Tensor's memory in place (NumPy's indexing does the write, after our checks); on a tracer they
compute ``x.at[idx].set(v)`` (or ``x op y``) and rebind the tracer object to the result, so
later uses of that Python object see the new value and derivatives flow through x and v.

Out-of-range indices raise IndexError naming the axis, the index and the size; float indices
raise TypeError (an ``IndexError`` subclass too, as NumPy raises IndexError there).
"""
from __future__ import annotations

import builtins
import math
from typing import Any, Callable, Optional

import numpy as np

from nx_rune import backend, dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.frontend import elementwise as _elementwise
from nx_rune.frontend._core import astype, broadcast_shapes, broadcast_to, operand
from nx_rune.frontend.elementwise import add, divide, multiply, subtract
from nx_rune.frontend.index_modes import (
    _TAKE_MODES,
    _check_at_mode,
    _default_fill,
    _moded_index,
    _nonzero_sized,
    _redirect_out_of_bounds,
)
from nx_rune.frontend.movement import flip, moveaxis, pad, reshape
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.typing import Array, ArrayLike

__all__ = ["getitem", "IndexUpdateHelper", "take", "take_along_axis", "put_along_axis",
           "nonzero", "advanced_getitem", "index_update", "IndexTypeError", "concrete_value",
           "setitem", "inplace_op", "ValueOverflowError"]

SCATTER_MODES = ("set", "add", "mul", "max", "min")
_INT32_MAX = 2**31 - 1


class IndexTypeError(TypeError, IndexError):
    """An index of the wrong type (a float array, say): a TypeError (as JAX raises) that is also
    an IndexError (as NumPy raises)."""


class ValueOverflowError(OverflowError, ValueError):
    """A value that does not fit the target dtype (300 into int8): an OverflowError (as NumPy
    raises) that is also a ValueError."""


# -- index operands ---------------------------------------------------------------------------

def concrete_value(x):
    """The values of ``x`` as an ndarray, or None when they are not known (a traced value).

    Tensors and ndarrays are concrete; so are the eager tracers of nx_rune.autodiff (their
    ``_concrete_tensor()`` is the primal's Tensor); an abstractly traced value gives None.
    """
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, ArrayBase):
        t = x._concrete_tensor()
        return None if t is None else t._np()
    return np.asarray(x)


def _index_array(obj, name="index"):
    """``obj`` (Tensor, tracer, ndarray, list, tuple) as an integer or bool array operand."""
    if isinstance(obj, ArrayBase):
        dt = obj.dtype
    else:
        arr = np.asarray(obj)
        if arr.dtype == np.float64 and arr.size == 0:  # [] means an empty integer index
            arr = arr.astype(np.int32)
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise IndexTypeError(f"{name}: arrays used as indices must be of integer or bool "
                                 f"type, got {obj!r}")
        obj, dt = arr, arr.dtype
    if dt.kind not in "biu":
        raise IndexTypeError(f"{name}: arrays used as indices must be of integer or bool type, "
                             f"got dtype {dt}")
    return obj


def _as_index_tensor(idx):
    """An integer index operand as a Tensor (or tracer) of int32/int64 for the kernels."""
    if isinstance(idx, ArrayBase):
        if idx.dtype in (dtypes.int32, dtypes.int64):
            return idx
        v = concrete_value(idx)
        if v is None:
            return astype(idx, dtypes.int64)
        idx = v
    arr = np.asarray(idx)
    if arr.dtype not in (np.int32, np.int64):
        arr = _narrow_index(arr)
    return Tensor._wrap(np.asarray(arr, order="C"))   # (0-d stays 0-d)


def _narrow_index(arr):
    if arr.size == 0:
        return arr.astype(np.int32)
    lo, hi = int(arr.min()), int(arr.max())
    return arr.astype(np.int32 if -_INT32_MAX - 1 <= lo and hi <= _INT32_MAX else np.int64)


def _check_bounds(values, n, axis):
    """IndexError naming axis, index and size unless every entry lies in [-n, n)."""
    if values.size == 0:
        return
    lo, hi = int(values.min()), int(values.max())
    if lo < -n:
        raise IndexError(f"index {lo} is out of bounds for axis {axis} with size {n}")
    if hi >= n:
        raise IndexError(f"index {hi} is out of bounds for axis {axis} with size {n}")


def _normalized(values, n):
    """Concrete indices with negative entries wrapped (assumes bounds were checked)."""
    values = np.asarray(values)
    if values.dtype.kind == "u":
        return values.astype(np.int64)
    if values.size and values.min() < 0:
        values = np.where(values < 0, values.astype(np.int64) + n, values)
    return values


# -- x[idx] ------------------------------------------------------------------------------------

def _classify(item):
    """One entry of an index tuple as (kind, payload)."""
    if item is None:
        return ("none", None)
    if item is Ellipsis:
        return ("ellipsis", None)
    if isinstance(item, slice):
        return ("slice", item)
    if isinstance(item, (bool, np.bool_)):
        return ("bool0", bool(item))
    if isinstance(item, (ArrayBase, np.ndarray, list, tuple)):
        arr = _index_array(item)
        if dtypes.is_bool(arr.dtype):
            if arr.ndim == 0:
                v = concrete_value(arr)
                if v is None:
                    raise IndexError("index: a traced 0-d bool index is not supported")
                return ("bool0", bool(v))
            return ("mask", arr)
        return ("array", arr)
    if isinstance(item, (float, np.floating, complex)):
        raise IndexTypeError(f"index: {item!r} is not a valid index (float indices are not "
                             f"allowed; use ints, slices, None, ..., or integer/bool arrays)")
    try:
        return ("int", int(item.__index__()))
    except (AttributeError, TypeError):
        raise IndexError(f"index: {item!r} is not a valid index (use ints, slices, None, ..., "
                         f"or integer/bool arrays)") from None


def advanced_getitem(x, index):
    """``x[index]`` where ``index`` (a tuple) holds at least one integer array or bool mask."""
    x = operand(x)
    entries = [_classify(i) for i in index]
    if builtins.sum(1 for k, _ in entries if k == "ellipsis") > 1:
        raise IndexError("index: an index can only have a single ellipsis ('...')")
    consumed = builtins.sum(1 if k in ("slice", "int", "array") else
                            (p.ndim if k == "mask" else 0) for k, p in entries)
    if consumed > x.ndim:
        raise IndexError(f"index: too many indices for a tensor of {x.ndim} dimensions "
                         f"({consumed} given)")
    # NumPy's placement rule: the advanced entries (ints included) adjacent in the tuple?
    adv_pos = [i for i, (k, _) in enumerate(entries) if k in ("int", "array", "mask", "bool0")]
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1)) if adv_pos else True

    basic = []         # the index applied first, as views
    advanced = []      # (axis of the basic result, integer index operand, axis of x, size)
    x_axis = out_axis = 0
    for kind, p in entries:
        if kind == "ellipsis":
            k = x.ndim - consumed
            basic.extend([slice(None)] * k)
            x_axis += k
            out_axis += k
        elif kind == "none":
            basic.append(None)
            out_axis += 1
        elif kind == "slice":
            basic.append(p)
            x_axis += 1
            out_axis += 1
        elif kind == "int":
            basic.append(p)
            x_axis += 1
        elif kind == "array":
            basic.append(slice(None))
            advanced.append((out_axis, p, x_axis, x.shape[x_axis]))
            x_axis += 1
            out_axis += 1
        elif kind == "bool0":
            basic.append(None)
            idx = np.zeros(1 if p else 0, dtype=np.int32)
            advanced.append((out_axis, idx, None, 1))
            out_axis += 1
        else:  # mask: the k integer arrays of its nonzero(), on k consecutive axes
            mask = concrete_value(p)
            if mask is None:
                raise IndexError("index: a bool mask index must be concrete (its number of true "
                                 "entries fixes the result's shape); it is a traced value here")
            shape = x.shape[x_axis:x_axis + mask.ndim]
            for j, (m, n) in enumerate(zip(mask.shape, shape)):
                # NumPy (and the Array API suite) let a length-0 mask axis stand for any length:
                # it selects nothing either way
                if m != n and m != 0:
                    raise IndexError(f"index: bool mask of shape {mask.shape} does not match "
                                     f"axis {x_axis + j} of size {n} (tensor shape {x.shape})")
            for arr in np.nonzero(mask):
                basic.append(slice(None))
                advanced.append((out_axis, _narrow_index(arr), x_axis, x.shape[x_axis]))
                x_axis += 1
                out_axis += 1
    # bounds (with the user's axis numbers), then the views
    concrete = []
    for out_ax, idx, ax, n in advanced:
        v = concrete_value(idx)
        if v is not None and ax is not None:
            _check_bounds(v, n, ax)
        concrete.append(v)
    y = _basic_getitem(x, tuple(basic))
    axes = [a for a, _, _, _ in advanced]
    try:
        S = broadcast_shapes(*[np.shape(v) if v is not None else i.shape
                                   for v, (_, i, _, _) in zip(concrete, advanced)])
    except ValueError:
        shapes = " ".join(str(tuple(np.shape(v) if v is not None else i.shape))
                          for v, (_, i, _, _) in zip(concrete, advanced))
        raise IndexError(f"index: shape mismatch: indexing arrays could not be broadcast "
                         f"together with shapes {shapes}") from None
    k = len(advanced)
    p = axes[0] if adjacent else 0
    if not adjacent:
        y = moveaxis(y, axes, list(range(k)))
    sizes = [y.shape[a] for a in range(p, p + k)]
    flat = _flat_index(advanced, concrete, sizes, S)
    if k > 1:
        y = reshape(y, y.shape[:p] + (math.prod(sizes),) + y.shape[p + k:])
    rest = y.ndim - p - 1
    m = math.prod(S)
    out = bind(P.gather_p, y, reshape(flat, (1,) * p + (m,) + (1,) * rest), axis=p)
    return reshape(out, y.shape[:p] + S + y.shape[p + 1:])


def _flat_index(advanced, concrete, sizes, S):
    """One integer index into the merged advanced axes (C order), broadcast to S, flattened."""
    total = math.prod(sizes)
    if builtins.all(v is not None for v in concrete):
        if len(advanced) == 1:
            flat = np.broadcast_to(np.asarray(concrete[0]), S).reshape(-1)
        else:
            flat = np.zeros(S, dtype=np.int64)
            for v, n in zip(concrete, sizes):
                flat = flat * n + _normalized(v, n)
            flat = flat.reshape(-1)
        if flat.dtype not in (np.int32, np.int64) or (flat.dtype == np.int64 and
                                                      total <= _INT32_MAX):
            flat = flat.astype(np.int32 if total <= _INT32_MAX else np.int64)
        return Tensor._wrap(np.ascontiguousarray(flat))
    # traced indices: the gather kernel checks the bounds; several arrays are normalized first
    # (a gather from arange(n) both checks and wraps them)
    if len(advanced) == 1:
        idx = _as_index_tensor(advanced[0][1] if concrete[0] is None else concrete[0])
        return reshape(broadcast_to(idx, S), (-1,))
    it = dtypes.int32 if total <= _INT32_MAX else dtypes.int64
    flat = None
    for (_, idx, _, n), v in zip(advanced, concrete):
        idx = _as_index_tensor(idx if v is None else v)
        iota = Tensor._wrap(np.arange(n, dtype=it))
        norm = reshape(bind(P.gather_p, iota, reshape(idx, (-1,)), axis=0), idx.shape)
        norm = broadcast_to(astype(norm, it), S)
        flat = norm if flat is None else add(multiply(flat, n), norm)
    return reshape(flat, (-1,))


# -- x.at[idx] -----------------------------------------------------------------------------------

def index_update(x, index, values, mode):
    """``x.at[index].set(values)`` (mode "set") and friends: a new tensor equal to ``x`` with the
    elements selected by ``index`` (anything ``x[index]`` accepts) combined with ``values``
    (broadcast to the shape of ``x[index]``, cast to x's dtype as JAX does).

    mode: "set" (duplicates: the last in C order wins), "add", "mul", "max", "min" (duplicates
    accumulate).  Shapes: x (...) -> x's shape; dtype: x's.
    """
    x = operand(x)
    if mode not in SCATTER_MODES:
        raise ValueError(f"mode: must be one of {SCATTER_MODES}, got {mode!r}")
    it = np.int32 if x.size <= _INT32_MAX else np.int64
    iota = Tensor._wrap(np.arange(x.size, dtype=it).reshape(x.shape))
    pos = getitem(iota, index)
    v = _drop_leading_ones(_cast_values(values, x.dtype), pos.shape)
    try:
        v = broadcast_to(v, pos.shape)
    except ValueError:
        raise ValueError(f"values: shape {v.shape} cannot be broadcast to the indexed shape "
                         f"{pos.shape} (x shape {x.shape})") from None
    out = bind(P.scatter_p, reshape(x, (-1,)), reshape(pos, (-1,)),
               reshape(v, (-1,)), axis=0, mode=mode)
    return reshape(out, x.shape)


def _cast_values(values, dtype, name="values"):
    """``values`` as an array operand of ``dtype``: arrays cast as NumPy's ``astype`` does;
    Python data (scalars, nested lists) converted as NumPy's setitem does (300 into int8
    raises).  TypeError for a complex value into a non-complex dtype (the imaginary part would
    be dropped silently)."""
    if isinstance(values, ArrayBase):
        _check_not_complex(values.dtype, dtype, name)
        return astype(values, dtype)
    if isinstance(values, np.ndarray) or _holds_arrays(values):
        v = operand(values)
        _check_not_complex(v.dtype, dtype, name)
        return astype(v, dtype)
    return Tensor._wrap(_python_values(values, dtype, name))


def _holds_arrays(values):
    """True for a (nested) list or tuple with an array among its leaves."""
    if isinstance(values, (list, tuple)):
        return builtins.any(isinstance(v, (ArrayBase, np.ndarray)) or _holds_arrays(v)
                            for v in values)
    return False


def _check_not_complex(src, dst, name, scalar=None):
    """TypeError when complex values (of dtype ``src``; ``scalar``: the one Python value)
    would lose their imaginary parts in a ``dst`` tensor."""
    if src.kind == "c" and dst.kind != "c":
        if scalar is not None:
            raise TypeError(f"{name}: complex {scalar!r} cannot be written into a {dst} tensor "
                            f"(its imaginary part would be lost); take nx.real of it first")
        raise TypeError(f"{name}: complex values ({src}) cannot be written into a {dst} tensor "
                        f"(their imaginary parts would be lost); take nx.real of them first")


def _python_values(values, dtype, name):
    """Python or NumPy scalars and nested lists of them as a C-contiguous ndarray of dtype,
    converted with NumPy's setitem rules."""
    try:
        probe = np.asarray(values)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{name}: cannot make an array of {type(values).__name__}: {e}") from None
    if probe.dtype == object or probe.dtype.kind not in "biufc":
        raise TypeError(f"{name}: expected numbers or arrays, got {type(values).__name__} "
                        f"({probe.dtype})")
    _check_not_complex(probe.dtype, dtype, name, values if probe.ndim == 0 else None)
    out = np.empty(probe.shape, dtype)
    try:
        out[...] = values
    except OverflowError as e:
        raise ValueOverflowError(f"{name}: {e} (the tensor's dtype is {dtype})") from None
    except ValueError as e:
        raise ValueError(f"{name}: {e} (the tensor's dtype is {dtype})") from None
    return out


# -- x[idx] = v and in-place operators ----------------------------------------------------------

def setitem(x: Array, index: Any, value: ArrayLike) -> None:
    """``x[index] = value``: ``index`` is anything ``x[index]`` accepts (ints, slices of any
    step, None, Ellipsis, integer arrays, bool masks); ``value`` broadcasts to the shape of
    ``x[index]`` (leading size-1 axes beyond it are dropped, as NumPy does) and is converted to
    x's dtype as NumPy's setitem does (floats into ints truncate; complex into non-complex
    raises TypeError).  With duplicate indices the last write in C order wins.

    On a Tensor the write happens in place: every view of its memory sees it.  ValueError when
    the memory cannot be written (a broadcast view, a padded view, read-only memory); TypeError
    for a traced value (inside a transformation use ``x = x.at[index].set(value)``).  On a
    tracer, the tracer is rebound to ``x.at[index].set(value)`` (differentiable in x and value).
    """
    if isinstance(x, Tensor):
        _setitem_tensor(x, index, value)
        return
    rebind = getattr(x, "_rebind", None)
    if rebind is None:
        raise TypeError(f"x: a {type(x).__name__} does not support item assignment; write "
                        f"x = x.at[idx].set(v)")
    rebind(index_update(x, index, _setitem_operand(value, x.dtype), "set"), "x[idx] = v")


def _setitem_operand(value, dtype):
    if isinstance(value, ArrayBase):
        _check_not_complex(value.dtype, dtype, "value")
        return value
    return _cast_values(value, dtype, "value")


def _traced(v):
    """True when v is (or a list holds) a value of a transformation (not a concrete Tensor)."""
    if isinstance(v, ArrayBase):
        return not isinstance(v, Tensor)
    if isinstance(v, (list, tuple)):
        return builtins.any(_traced(e) for e in v)
    return False


def _refuse_traced(what, fix):
    raise TypeError(f"{what}: x is a concrete tensor and the value is traced by a "
                    f"transformation; a concrete tensor cannot hold a traced value in place. "
                    f"Update functionally instead: {fix}")


def _setitem_tensor(x, index, value):
    if _traced(value):
        _refuse_traced("x[idx] = v", "x = x.at[idx].set(v)")
    backend.check_writable(x, "x")
    src = _setitem_values(value, x.dtype)
    idx = index if isinstance(index, tuple) else (index,)
    view = x.view.index_basic(idx)   # the written view, for ints/slices/None/Ellipsis only
    if view is not None:
        src = _fit(src, view.shape, x.shape)
        backend.assign_index(Tensor(x.buffer, view), Ellipsis, src, "x[idx] = v")
        return
    # NumPy's advanced indexing writes (it checks the whole index before writing anything);
    # a failure is explained with our rules and messages, those of x[idx]
    try:
        backend.assign_index(x, tuple(_numpy_entry(i) for i in idx), src, "x[idx] = v")
    except (IndexError, TypeError, ValueError):
        _fit(src, getitem(_probe(x), idx).shape, x.shape)
        raise


def _probe(x):
    """A bool tensor of x's shape over one element of memory: indexing it checks an index
    and gives the indexed shape without touching x."""
    base = np.zeros(1, dtype=np.bool_)
    return Tensor._wrap(np.ndarray(x.shape, np.bool_, buffer=base, strides=(0,) * x.ndim))


def _numpy_entry(item):
    """One entry of an index tuple as NumPy indexes with it (arrays concrete)."""
    if isinstance(item, ArrayBase):
        return concrete_value(item)
    return item


def _setitem_values(value, dtype):
    """``value`` (concrete) as an ndarray of ``dtype``, converted as NumPy's setitem does."""
    if isinstance(value, Tensor):
        _check_not_complex(value.dtype, dtype, "value")
        v = value._np()
        return v if v.dtype == dtype else v.astype(dtype)
    return concrete_value(_cast_values(value, dtype, "value"))


def _fit(v, shape, x_shape):
    """``v`` (an ndarray) ready to be written into ``shape``; ValueError naming value when it
    does not broadcast there."""
    v = _drop_leading_ones(v, shape)
    if not _broadcasts(v.shape, shape):
        raise ValueError(f"value: shape {v.shape} cannot be broadcast to the indexed shape "
                         f"{tuple(shape)} (x shape {tuple(x_shape)})")
    return v


def _drop_leading_ones(v, shape):
    """v without the leading size-1 axes it has beyond ``shape``'s rank (NumPy's setitem
    accepts a (1, 3) value for a (3,) target)."""
    k = v.ndim - len(shape)
    if k > 0 and builtins.all(d == 1 for d in v.shape[:k]):
        return v.reshape(v.shape[k:]) if isinstance(v, np.ndarray) else reshape(v, v.shape[k:])
    return v


def _broadcasts(src, dst):
    try:
        return broadcast_shapes(src, dst) == tuple(dst)
    except ValueError:
        return False


def inplace_op(x: Array, other: ArrayLike, fn: Callable[..., Array], symbol: str) -> Array:
    """``x <symbol> other`` (``+=``, ``-=``, ... with ``fn`` the binary function): the result
    ``fn(x, other)`` must keep x's shape (ValueError otherwise) and cast to x's dtype with
    NumPy's same_kind rule (TypeError otherwise: ``int_x /= 2`` or ``float_x += 1j``).

    On a Tensor it is written into x's memory in place and x is returned (every view sees it;
    TypeError for a traced ``other``); on a tracer, the tracer is rebound to the result."""
    if isinstance(x, Tensor):
        if _traced(other):
            _refuse_traced(f"x {symbol} y", f"x = x {symbol[:-1]} y")
        backend.check_writable(x, "x")
        if _inplace_ufunc(x, other, fn, symbol):
            return x
        r = _inplace_result(x, fn(x, other), symbol)
        v = concrete_value(r)
        if v.dtype != x.dtype:
            v = v.astype(x.dtype)
        backend.assign_index(x, Ellipsis, v, f"x {symbol} y")
        return x
    rebind = getattr(x, "_rebind", None)
    if rebind is None:
        raise TypeError(f"x: a {type(x).__name__} cannot be updated in place; write "
                        f"x = x {symbol[:-1]} y")
    r = _inplace_result(x, fn(x, other), symbol)
    rebind(astype(r, x.dtype), f"x {symbol} y")
    return x


def _inplace_ufunc(x, other, fn, symbol):
    """The common case ``float_x op= y`` (op in + - * /, y a number or an array of x's dtype
    that broadcasts to x) straight into x's memory with NumPy's ufunc: the same values as
    ``fn`` gives (one IEEE operation in x's dtype), without a temporary.  False when it
    does not apply."""
    ufunc = _UFUNCS.get(fn)
    kind = x.dtype.kind
    if ufunc is None or kind not in "fc":
        return False
    if type(other) in (int, float) or (type(other) is complex and kind == "c"):
        y = other
    elif isinstance(other, (Tensor, np.ndarray)) and other.dtype == x.dtype and \
            _broadcasts(other.shape, x.shape):
        y = other._np() if isinstance(other, Tensor) else other
    else:
        return False
    backend.ufunc_into(x, ufunc, y, f"x {symbol} y")
    return True


def _inplace_result(x, r, symbol):
    if r.shape != x.shape:
        raise ValueError(f"x {symbol} y: the result has shape {r.shape}, not x's {x.shape} (y "
                         f"broadcasts x up); an in-place update keeps x's shape, so write "
                         f"x = x {symbol[:-1]} y for a new tensor")
    if r.dtype != x.dtype and not np.can_cast(r.dtype, x.dtype, "same_kind"):
        raise TypeError(f"x {symbol} y: the result's dtype {r.dtype} cannot be cast to x's "
                        f"dtype {x.dtype} with NumPy's same_kind rule; write x = x {symbol[:-1]} "
                        f"y for a new tensor of dtype {r.dtype}")
    return r


_UFUNCS = {add: np.add, subtract: np.subtract, multiply: np.multiply, divide: np.true_divide}


# -- take / take_along_axis / put_along_axis ------------------------------------------------------

def _indices_operand(indices):
    idx = _index_array(indices, "indices")
    if dtypes.is_bool(idx.dtype):
        raise IndexTypeError(f"indices: must have an integer dtype, got {idx.dtype}")
    return idx


def _along_checks(fn, arr, idx, axis):
    """Shared checks of take_along_axis/put_along_axis; returns (arr, axis, flattened?)."""
    flat = axis is None
    if flat:
        if idx.ndim != 1:
            raise ValueError(f"{fn}: with axis=None, indices must be 1-D, got shape {idx.shape}")
        arr, axis = reshape(arr, (-1,)), 0
    else:
        if arr.ndim == 0:
            raise ValueError(f"{fn}: arr must be at least 1-D, got shape {arr.shape}")
        axis = normalize_axis(axis, arr.ndim)
    if idx.ndim != arr.ndim:
        raise ValueError(f"{fn}: indices must have the same number of dimensions as arr; got "
                         f"arr shape {arr.shape} and indices shape {idx.shape}")
    for d, (a, b) in enumerate(zip(arr.shape, idx.shape)):
        if d != axis and a != b and a != 1 and b != 1:
            raise ValueError(f"{fn}: indices shape {idx.shape} does not broadcast against arr "
                             f"shape {arr.shape} outside axis {axis}")
    v = concrete_value(idx)
    if v is not None:
        _check_bounds(v, arr.shape[axis], axis)
    return arr, axis, flat


def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: Optional[int] = -1) -> Array:
    """``np.take_along_axis``: ``out[..., i, ...] = arr[..., indices[..., i, ...], ...]``.

    arr: (..., n, ...); indices: integers of arr's rank (negative count from the end), which
    broadcast against arr outside ``axis``; axis: int (default -1, the Array API's default) or
    None (arr flattened, indices 1-D).
    Returns arr's dtype and the broadcast shape with ``indices.shape[axis]`` along ``axis``.
    IndexError for an index outside [-n, n); TypeError for non-integer indices.
    """
    arr = operand(arr)
    idx = _indices_operand(indices)
    arr, axis, _ = _along_checks("take_along_axis", arr, idx, axis)
    return bind(P.gather_p, arr, _as_index_tensor(idx), axis=axis)


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int,
                   mode: str = "set") -> Array:
    """A new tensor: ``arr`` with ``values`` written at ``indices`` along ``axis``.

    arr: (...); indices as in ``take_along_axis`` (shape B after broadcasting); values: anything
    broadcastable to B, cast to arr's dtype; axis: int or None (arr flattened, indices 1-D; the
    result keeps arr's shape).  mode: "set" (duplicates: last in C order wins), "add", "mul",
    "max", "min" (duplicates accumulate, like ``np.add.at``).  Returns arr's shape and dtype.
    """
    arr = operand(arr)
    if mode not in SCATTER_MODES:
        raise ValueError(f"mode: must be one of {SCATTER_MODES}, got {mode!r}")
    idx = _indices_operand(indices)
    shape = arr.shape
    arr2, axis, _ = _along_checks("put_along_axis", arr, idx, axis)
    B = tuple(b if d == axis or a == 1 else a for d, (a, b) in enumerate(zip(arr2.shape,
                                                                               idx.shape)))
    v = _cast_values(values, arr.dtype)
    try:
        v = broadcast_to(v, B)
    except ValueError:
        raise ValueError(f"values: shape {v.shape} cannot be broadcast to the indexed shape {B} "
                         f"(arr shape {arr2.shape}, indices shape {idx.shape})") from None
    out = bind(P.scatter_p, arr2, _as_index_tensor(idx), v, axis=axis, mode=mode)
    return reshape(out, shape) if out.shape != shape else out


def take(arr: ArrayLike, indices: ArrayLike, axis: int | None = None, out: None = None,
         mode: str | None = None, *, fill_value: ArrayLike | None = None) -> Array:
    """``np.take``: elements of ``arr`` at ``indices`` along ``axis`` (of the flattened arr if
    None).  indices: integers of any shape I (negative count from the end).  Returns
    ``arr.shape[:axis] + I + arr.shape[axis + 1:]`` (I for axis=None), arr's dtype.

    ``mode`` for indices out of bounds: None or ``"raise"`` (IndexError, NumPy's default),
    ``"clip"`` (clamped to [0, n - 1], negative ones to 0, as NumPy and JAX), ``"wrap"``
    (modulo n), ``"fill"`` (JAX's: negative ones in [-n, 0) count from the end, the others
    give ``fill_value``: by default NaN for inexact dtypes, the smallest value of a signed
    dtype, the largest of an unsigned one, True for bool), ``"promise_in_bounds"`` (JAX's:
    as "raise" here).  JAX's own default is "fill": write ``mode="fill"`` to keep it.
    """
    if out is not None:
        raise TypeError("take: out= is not supported (nx_rune's arrays are returned, as JAX's)")
    if mode not in _TAKE_MODES:
        raise ValueError(f"take: mode must be one of {_TAKE_MODES}, got {mode!r}")
    if fill_value is not None and mode != "fill":
        raise ValueError("take: fill_value applies with mode='fill' only")
    arr = operand(arr)
    idx = _indices_operand(indices)
    if axis is None:
        arr, axis = reshape(arr, (-1,)), 0
    else:
        if arr.ndim == 0:
            raise ValueError(f"take: arr must be at least 1-D for axis={axis}, got shape ()")
        axis = normalize_axis(axis, arr.ndim)
    if mode in ("clip", "wrap", "fill"):
        n = arr.shape[axis]
        if n == 0:
            raise IndexError(f"take: cannot take from an empty axis {axis} with mode={mode!r}")
        if mode == "clip":
            idx = _elementwise.clip(idx, 0, n - 1)
        elif mode == "wrap":
            idx = _elementwise.remainder(idx, n)
        else:
            idx = _redirect_out_of_bounds(idx, n)
            widths = [(0, 1) if a == axis else (0, 0) for a in range(arr.ndim)]
            arr = pad(arr, widths, constant_values=_default_fill(arr.dtype, fill_value))
    v = concrete_value(idx)
    if v is not None:
        _check_bounds(v, arr.shape[axis], axis)
    m = math.prod(idx.shape)
    flat = reshape(_as_index_tensor(idx if v is None else v), (-1,))
    flat = reshape(flat, (1,) * axis + (m,) + (1,) * (arr.ndim - axis - 1))
    got = bind(P.gather_p, arr, flat, axis=axis)
    return reshape(got, arr.shape[:axis] + tuple(idx.shape) + arr.shape[axis + 1:])


def _at_get(x, index, mode, fill_value):
    mode = _check_at_mode(mode)
    if fill_value is not None and mode not in ("fill", "drop"):
        raise ValueError("get: fill_value applies with mode='fill' only")
    if mode is None:
        return getitem(x, index)
    x = operand(x)
    index, padded = _moded_index(x.shape, index, mode)
    if padded:
        widths = [(0, 1) if a in padded else (0, 0) for a in range(x.ndim)]
        x = pad(x, widths, constant_values=_default_fill(x.dtype, fill_value))
    return getitem(x, index)


def _at_update(x, index, values, op, mode):
    mode = _check_at_mode(mode)
    if mode is None:
        return index_update(x, index, values, op)
    x = operand(x)
    index, padded = _moded_index(x.shape, index, mode)
    if not padded:
        return index_update(x, index, values, op)
    # the writes out of bounds land on the padding, which is cut off again (JAX's "drop")
    widths = [(0, 1) if a in padded else (0, 0) for a in range(x.ndim)]
    out = index_update(pad(x, widths), index, values, op)
    return out[tuple(slice(0, n) for n in x.shape)]


def nonzero(x: ArrayLike, *, size: int | None = None,
            fill_value: ArrayLike | None = None) -> tuple[Array, ...]:
    """Indices of the non-zero (true) entries of a concrete ``x``: a tuple of ``x.ndim`` int32
    tensors (int64 when an axis is longer than 2**31 - 1, and in x64 mode), as ``np.nonzero``.

    ``size`` (JAX's keyword, for a shape known in advance): each index array has exactly
    ``size`` entries, the first non-zero ones, the rest ``fill_value`` (0 by default; a scalar
    or one per axis); ``x`` may then be traced (under jit or vmap).  Without ``size``,
    ``fill_value`` is ignored (as in JAX)."""
    if size is not None:
        return _nonzero_sized(x, size, fill_value, "nonzero")
    v = concrete_value(operand(x))
    if v is None:
        raise TypeError("nonzero: x must be concrete (the result's shape depends on its values)")
    if v.ndim == 0:
        raise ValueError("nonzero: x must be at least 1-D")
    if dtypes.DEFAULT_INT == dtypes.int64:  # WP-x64: x64 mode's default index dtype
        return tuple(Tensor._wrap(np.ascontiguousarray(a, np.int64)) for a in np.nonzero(v))
    return tuple(Tensor._wrap(np.ascontiguousarray(_narrow_index(a))) for a in np.nonzero(v))


# -- indexing (basic: views) -------------------------------------------------------------------

def getitem(x, index):
    """``x[index]`` with NumPy's rules, x's dtype.  Ints, slices (any step), None and Ellipsis
    give views; integer arrays and bool masks select through gather (see indexing.py: the
    broadcast index shape replaces the indexed axes, or comes first when the advanced indices
    are not adjacent).  IndexError names the axis, the index and the size."""
    if not isinstance(index, tuple):
        index = (index,)
    if type(x) is Tensor:
        if _VIEW_FAST_PATH and P.current_interpreter() is None:
            view = x.view.index_basic(index)  # None unless unmasked and only basic indices
            if view is not None:
                return Tensor(x.buffer, view)
    elif isinstance(x, ArrayBase):
        interp = P.current_interpreter()
        if interp is not None:
            r = _traced_block(interp, x, index)
            if r is not None:
                return r
    x = operand(x)
    if builtins.any(_is_advanced(i) for i in index):
        return advanced_getitem(x, index)
    r = _basic_getitem(x, index)
    if type(r) is not Tensor:
        note = getattr(r, "_note_index", None)  # a tracer: x[index] is a view on arrays
        if note is not None:
            note(x, index)
    return r


def _traced_block(interp, x, index):
    """``x[index]`` for a traced ``x`` and an index of ints, unit-step slices and None only (a
    row, a block, a new axis: the commonest indices), else None.  The same shrink and reshape
    as ``_basic_getitem``, handed to the active interpreter at once: without the general
    parsing, and without linking the intermediate shrink to x as a view (bind's alias hook):
    only the result is linked (``_note_index``), the shrink never leaves this function."""
    shape = x.shape
    limits, out_shape, window = [], [], []
    whole = True
    axis = 0
    for item in index:
        if item is None:
            out_shape.append(1)
            continue
        if axis == len(shape):
            return None         # (too many indices: the general path raises)
        n = shape[axis]
        axis += 1
        if type(item) is int:
            if not -n <= item < n:
                return None     # (the general path raises the IndexError)
            a = item + n if item < 0 else item
            b = a + 1
        elif type(item) is slice and item.step is None:
            a, b, _ = item.indices(n)
            if b <= a:
                a = b = 0
            out_shape.append(b - a)
        else:
            return None
        limits.append((a, b))
        window.append(b - a)
        whole = whole and a == 0 and b == n
    for n in shape[axis:]:
        limits.append((0, n))
        out_shape.append(n)
        window.append(n)
    y = x if whole else interp.process(P.shrink_p, (x,), {"limits": tuple(limits)})
    out_shape = tuple(out_shape)
    if out_shape != tuple(window):
        y = interp.process(P.reshape_p, (y,), {"shape": out_shape})
    if y is not x:
        note = getattr(y, "_note_index", None)
        if note is not None:
            note(x, index)
    return y


def _is_advanced(i):
    return isinstance(i, (ArrayBase, np.ndarray, list, tuple, bool, np.bool_))


def _expand_ellipsis(index, ndim):
    n_ell = builtins.sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("index: an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"index: too many indices for a tensor of {ndim} dimensions "
                         f"({used} given)")
    if n_ell:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (ndim - used) + index[k + 1:]
    else:
        index = index + (slice(None),) * (ndim - used)
    return index


def _basic_getitem(x, index):
    """Ints, slices (any step), None and Ellipsis as views: one flip (negative steps), one
    shrink, and for steps k > 1 a reshape that splits each such axis into (m, k) followed by a
    shrink to one column (a view whenever the m * k elements fit in the axis; a padded copy
    otherwise), then one reshape to the result's shape (ints dropped, None inserted)."""
    index = _expand_ellipsis(index, x.ndim)
    shape_in = x.shape
    limits, flips, out_shape = [], [], []
    split = []   # (axis, m, k, column) for steps k > 1
    pads = None
    axis = 0
    for item in index:
        if item is None:
            out_shape.append(1)
            continue
        n = shape_in[axis]
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            if step < 0:  # flipped coordinates: position p becomes n - 1 - p
                flips.append(axis)
                start, stop, step = n - 1 - start, n - 1 - stop, -step
            m = builtins.max(0, (stop - start + step - 1) // step)
            out_shape.append(m)
            if m <= 1 or step == 1:
                limits.append((start, start + m) if m else (0, 0))
            else:
                # a window [s0, s0 + m*step) containing the picks, at column start - s0
                s0 = builtins.min(start, n - m * step)
                if s0 >= 0 and start - s0 < step:
                    limits.append((s0, s0 + m * step))
                    split.append((axis, m, step, start - s0))
                else:  # the axis is shorter than m*step: pad its end (the result copies)
                    limits.append((start, n))
                    if pads is None:
                        pads = [(0, 0)] * x.ndim
                    pads[axis] = (0, start + m * step - n)
                    split.append((axis, m, step, 0))
        else:
            try:
                i = int(item.__index__())
            except (AttributeError, TypeError):
                err = IndexTypeError if isinstance(item, (float, complex, np.inexact)) \
                    else IndexError
                raise err(f"index: {item!r} is not a valid index (use ints, slices, None, ..., "
                          f"or integer/bool arrays)") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i = i + n if i < 0 else i
            limits.append((i, i + 1))
        axis += 1
    y = x
    if flips:
        y = flip(y, tuple(flips))
    if builtins.any(a != 0 or b != n for (a, b), n in zip(limits, shape_in)):
        y = bind(P.shrink_p, y, limits=tuple(limits))
    if split:
        if pads is not None:
            y = pad(y, pads)
        shape, lim, j = [], [], 0
        for ax, n in enumerate(y.shape):
            if j < len(split) and split[j][0] == ax:
                _, m, k, c = split[j]
                shape += [m, k]
                lim += [(0, m), (c, c + 1)]
                j += 1
            else:
                shape.append(n)
                lim.append((0, n))
        y = bind(P.shrink_p, bind(P.reshape_p, y, shape=tuple(shape)), limits=tuple(lim))
    return reshape(y, tuple(out_shape))


# the adjoint of a basic index added into the operand's cotangent in place, on concrete Tensors
# (no padding to full size, no sum of full-size arrays): the tape's backward pass calls it when
# no transformation is active (autodiff reaches the backend through the front end only)
add_window = backend.views.add_window


# Concrete unmasked tensors (no transformation active) get the result's View in one step
# (View.index_basic); under a transformation the composition of _basic_getitem runs, so that
# every step is a primitive.  The tests run both (they switch this off).
_VIEW_FAST_PATH = True


class IndexUpdateHelper:
    """``x.at[idx]`` -> an object with ``set/add/multiply/max/min/get`` (JAX style)."""
    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index):
        return _IndexUpdateRef(self._x, index)


class _IndexUpdateRef:
    __slots__ = ("_x", "_index")

    def __init__(self, x, index):
        self._x, self._index = x, index

    # mode (JAX's keyword) for indices out of bounds: None (IndexError, nx_rune's default),
    # "clip" (clamped, after counting negatives from the end), "fill" / "drop" (reads give
    # fill_value, by default NaN / the dtype's extreme / True; writes are dropped: JAX's
    # default for writes), "promise_in_bounds" (as None here).  JAX's default for reads is
    # "clip"-like and for writes "drop": write the mode to keep them.
    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False,
            unique_indices=False):
        return _at_get(self._x, self._index, mode, fill_value)

    def set(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _at_update(self._x, self._index, values, "set", mode)

    def add(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _at_update(self._x, self._index, values, "add", mode)

    def multiply(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _at_update(self._x, self._index, values, "mul", mode)

    mul = multiply

    def max(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _at_update(self._x, self._index, values, "max", mode)

    def min(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _at_update(self._x, self._index, values, "min", mode)


# gather/scatter front ends, einsum and windows live in their own modules (they import this one)


# one-argument nx.where is nonzero (the elementwise module cannot import this one)
_elementwise._NONZERO[0] = nonzero
