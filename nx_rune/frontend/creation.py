"""Making tensors: from data (``asarray``, ``array``, ``from_dlpack``), from shapes (``zeros``,
``full``, ``eye``, ...), ranges (``arange``, ``linspace``, ``meshgrid``, ``indices``), and the
triangle/diagonal builders (``tril``, ``triu``, ``diag``, ``diagflat``: differentiable).

Python data and the default dtypes follow JAX's: with x64 off (the default) floats become
float32, ints int32 (int64 when they do not fit), complex numbers complex64; in x64 mode
(``nx_rune.config``) float64, int64 and complex128.  NumPy arrays keep their dtype, and
``asarray`` of a C-contiguous ndarray shares its memory.  Every function takes ``device=``
(the Array API standard's keyword): None, the CPU device (``x.device``) or ``"cpu"``;
ValueError otherwise.
Shapes may be ints, NumPy integers or 0-d integer tensors, or sequences of them.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from nx_rune import dtypes
from nx_rune._kernels.buffer import Buffer, addressable, zeros_buffer
from nx_rune._kernels.view import View
from nx_rune.errors import ConcretizationTypeError
from nx_rune.frontend import _core
from nx_rune.frontend._core import (
    SCALARS,
    broadcast_shapes,
    broadcast_to,
    normalize_shape,
    operand,
    zeros_like_t,
)
from nx_rune.frontend.elementwise import floor, where
from nx_rune.frontend.movement import as_strided, pad, reshape, shrink
from nx_rune.frontend.movement import copy as copy_tensor
from nx_rune.tensor import ArrayBase, Tensor, check_device
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

__all__ = ["asarray", "array", "from_dlpack", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "arange", "linspace", "eye", "identity",
           "tri", "tril", "triu", "diag", "diagflat", "indices", "meshgrid"]


# -- from data ----------------------------------------------------------------------------

def asarray(obj: ArrayLike, dtype: DTypeLike = None, *, device: object = None,
            copy: bool | None = None) -> Array:
    """A tensor of ``obj``: a Tensor, ndarray, Python scalar, nested sequence (of scalars,
    tensors or arrays), or anything with ``__array__`` or the buffer protocol.

    ``dtype``: converts when given (else JAX's defaults for Python data, see the module
    docstring; arrays keep theirs).  ``copy``: None (default) shares memory when it can (an nx
    tensor of the same dtype is returned as it is; a C-contiguous ndarray of a supported dtype
    in native byte order, aligned for its dtype, is wrapped without a copy, so that writes
    into either reach the other) and copies otherwise (misaligned memory, such as
    ``np.frombuffer(b, np.float32, offset=2)``, is copied: the kernels cannot address it);
    True always copies; False never copies and raises ValueError when a copy would be needed
    (a dtype conversion, a non-contiguous or misaligned ndarray, Python data).
    ``device``: None or the CPU.
    """
    check_device(device)
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise TypeError(f"copy: expected True, False or None, got {copy!r}")
    t = _asarray(obj, dtype, copy)
    if t is not obj and type(t) is Tensor:
        # a 0-d tensor made here is an array, which x += 1 writes into (NumPy's 0-d arrays),
        # not a value that it rebinds (a reduction's result): see Tensor._array0d
        t._array0d = True
    return t


def _asarray(obj, dtype, copy):
    if copy is None:
        return _core.asarray(obj, dtype)
    if copy:
        t = _core.asarray(obj, dtype)
        if isinstance(obj, ArrayBase):
            return copy_tensor(t) if t is obj else t
        if _exposes_memory(obj) and isinstance(t, Tensor) and np.may_share_memory(
                t._np(), np.asarray(obj)):
            return Tensor._wrap(t._np().copy())
        return t
    # copy=False
    if isinstance(obj, ArrayBase):
        if dtype is not None and dtypes.check_dtype(dtype) != obj.dtype:
            raise ValueError(f"copy=False: converting a {obj.dtype} tensor to {np.dtype(dtype)} "
                             f"needs a copy; use copy=None")
        return obj
    try:
        arr = np.asarray(obj, copy=False)
    except (ValueError, TypeError):
        raise ValueError(f"copy=False: making a tensor of a {type(obj).__name__} needs a copy "
                         f"(only arrays and buffers can be shared); use copy=None") from None
    t = _core.asarray(arr, dtype)
    if not np.may_share_memory(t._np(), arr):
        raise ValueError(f"copy=False: this {type(obj).__name__} (dtype {arr.dtype}) cannot be "
                         f"shared as a tensor{'' if dtype is None else ' of ' + str(dtype)} "
                         f"(a dtype conversion, a non-contiguous layout or memory misaligned "
                         f"for its dtype needs a copy); use copy=None")
    return t


def _exposes_memory(obj):
    """Whether ``np.asarray(obj)`` may alias ``obj``'s memory (arrays, buffers)."""
    if isinstance(obj, (np.ndarray, bytes, bytearray, memoryview)):
        return True
    if isinstance(obj, (list, tuple) + SCALARS) or obj is None:
        return False
    if (hasattr(obj, "__array__") or hasattr(obj, "__array_interface__")
            or hasattr(obj, "__dlpack__")):
        return True
    try:
        memoryview(obj).release()   # the buffer protocol (array.array, mmap, ...)
    except TypeError:
        return False
    return True


def array(obj: ArrayLike, dtype: DTypeLike = None, *, copy: bool | None = True,
          device: object = None) -> Array:
    """Like ``asarray`` but copying by default (``copy=True``; ``copy=None`` or False as in
    ``asarray``)."""
    return asarray(obj, dtype, device=device, copy=copy)


def from_dlpack(x: object, /, *, device: object = None, copy: bool | None = None) -> Array:
    """A tensor of the data of ``x``, an object with ``__dlpack__`` (a tensor of another
    library, an ndarray).  Shares memory unless ``copy=True``; ``copy=False`` raises (BufferError
    from the producer, or ValueError here) when a copy is needed (nx tensors are C-contiguous:
    a strided source is copied).  AttributeError when ``x`` has no ``__dlpack__``."""
    check_device(device)
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise TypeError(f"copy: expected True, False or None, got {copy!r}")
    arr = np.from_dlpack(x, copy=copy)
    dtypes.check_dtype(arr.dtype, "x")
    if not arr.flags.c_contiguous:
        if copy is False:
            raise ValueError(f"copy=False: the source is not C-contiguous (strides "
                             f"{arr.strides}); an nx tensor of it needs a copy")
        arr = np.ascontiguousarray(arr)
    if copy is False and not addressable(arr):
        raise ValueError(f"copy=False: the source's memory is misaligned for {arr.dtype} "
                         f"(a byte offset that is not a whole number of items); an nx tensor "
                         f"of it needs a copy")
    return _core.asarray(arr)


# -- from shapes --------------------------------------------------------------------------

def _dtype_or(dtype, default, name="dtype"):
    if dtype is None:
        return default
    if isinstance(dtype, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a dtype, got {dtype!r} (a keyword such as endpoint=, "
                        f"k= or keepdims= passed by position?)")
    return dtypes.check_dtype(dtype, name)


def _count(n, name):
    """``n`` as a non-negative int (ints, NumPy integers, 0-d integer tensors)."""
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an int, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: expected an int, got {n!r}") from None
    if n < 0:
        raise ValueError(f"{name}: must be >= 0, got {n}")
    return n


def _offset(k, name="k"):
    if isinstance(k, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an int diagonal offset, got {k!r}")
    try:
        return operator.index(k)
    except TypeError:
        raise TypeError(f"{name}: expected an int diagonal offset, got {k!r}") from None


_MAX_BYTES = np.iinfo(np.intp).max


def _sized(shape, dt, name="shape"):
    """The element count of ``shape`` after checking that a tensor of it and ``dt`` can be
    addressed: the product of its nonzero dimensions, in bytes, fits in a signed machine word
    (NumPy's rule, also for empty shapes, whose values must stay readable as ndarrays);
    ValueError naming ``name``, not a C overflow.  Memory beyond what the machine has is a
    MemoryError when allocating."""
    n = nonzero = 1
    for d in shape:
        n *= d
        nonzero *= d or 1
    if nonzero * dt.itemsize > _MAX_BYTES:
        where = " ignoring the zero axes" if n == 0 else ""
        raise ValueError(f"{name}: {shape} of {dt} is too large to address "
                         f"({nonzero * dt.itemsize} bytes{where})")
    return n


def zeros(shape: ShapeLike, dtype: DTypeLike = None, *, device: object = None) -> Array:
    """Zeros of ``shape`` (an int or a sequence of ints), ``dtype`` the default float dtype
    (float32; float64 in x64 mode) unless given.  Zero pages from calloc: nothing is written
    until touched."""
    check_device(device)
    shape = normalize_shape(shape)
    dt = _dtype_or(dtype, dtypes.default_float())
    return Tensor(zeros_buffer(_sized(shape, dt), dt), View.contiguous(shape))


def empty(shape: ShapeLike, dtype: DTypeLike = None, *, device: object = None) -> Array:
    """Uninitialised memory of ``shape``, ``dtype`` the default float dtype (float32; float64
    in x64 mode) unless given (64-byte aligned)."""
    check_device(device)
    shape = normalize_shape(shape)
    dt = _dtype_or(dtype, dtypes.default_float())
    return Tensor(Buffer(_sized(shape, dt), dt), View.contiguous(shape))


def _fill_dtype(fill_value):
    if isinstance(fill_value, (ArrayBase, np.ndarray, np.generic)):
        return dtypes.check_dtype(fill_value.dtype, "fill_value")
    if isinstance(fill_value, SCALARS):
        return dtypes.scalar_dtype(fill_value)
    return _core.asarray(fill_value).dtype


def full(shape: ShapeLike, fill_value: ArrayLike, dtype: DTypeLike = None, *,
         device: object = None) -> Array:
    """``fill_value`` everywhere in ``shape``.  ``dtype`` defaults to the fill value's (a
    Python bool gives bool, an int, float or complex the default int, float or complex dtype
    (int32 (int64 when it does not fit), float32, complex64; in x64 mode int64, float64,
    complex128), an array its own); the fill is cast to ``dtype`` as NumPy casts.  An
    array fill broadcasts to ``shape``; a tensor fill is differentiable (the derivative is the
    sum over the broadcast)."""
    check_device(device)
    shape = normalize_shape(shape)
    dt = _fill_dtype(fill_value) if dtype is None else _dtype_or(dtype, None)
    _sized(shape, dt)
    if isinstance(fill_value, (list, tuple)) and _core._holds_arrays(fill_value):
        # a container of tensors or traced values: stacked by nx (NumPy would read the values
        # of traced elements, and their derivatives would be lost)
        fill_value = _core.asarray(fill_value)
    if isinstance(fill_value, ArrayBase):
        # a tensor or a traced value: broadcast it (differentiable in fill_value), then copy
        # so that the result owns its memory, as np.full's does; leading size-1 axes beyond
        # shape's go, as NumPy's copy into the result drops them
        while fill_value.ndim > len(shape) and fill_value.shape[0] == 1:
            fill_value = reshape(fill_value, fill_value.shape[1:])
        return copy_tensor(broadcast_to(_core.astype(fill_value, dt), shape))
    t = Tensor._wrap(np.full(shape, np.asarray(fill_value), dtype=dt))
    t._array0d = True   # (a 0-d one is an array: see Tensor._array0d)
    return t


def ones(shape: ShapeLike, dtype: DTypeLike = None, *, device: object = None) -> Array:
    """Ones of ``shape``, ``dtype`` the default float dtype (float32; float64 in x64 mode)
    unless given."""
    return full(shape, 1, _dtype_or(dtype, dtypes.default_float()), device=device)


def _like(x):
    """(shape, dtype) of an array-like."""
    if isinstance(x, ArrayBase):
        return x.shape, x.dtype
    t = _core.asarray(x)
    return t.shape, t.dtype


def zeros_like(x: ArrayLike, dtype: DTypeLike = None, *, device: object = None) -> Array:
    """Zeros with ``x``'s shape and (unless given) dtype; ``x`` may be any array-like."""
    shape, dt = _like(x)
    return zeros(shape, _dtype_or(dtype, dt), device=device)


def ones_like(x: ArrayLike, dtype: DTypeLike = None, *, device: object = None) -> Array:
    """Ones with ``x``'s shape and (unless given) dtype."""
    shape, dt = _like(x)
    return ones(shape, _dtype_or(dtype, dt), device=device)


def empty_like(x: ArrayLike, dtype: DTypeLike = None, *, device: object = None) -> Array:
    """Uninitialised memory with ``x``'s shape and (unless given) dtype."""
    shape, dt = _like(x)
    return empty(shape, _dtype_or(dtype, dt), device=device)


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike = None, *,
              device: object = None) -> Array:
    """``fill_value`` with ``x``'s shape and (unless given) dtype (the fill is cast to it)."""
    shape, dt = _like(x)
    return full(shape, fill_value, _dtype_or(dtype, dt), device=device)


# -- ranges ---------------------------------------------------------------------------------

def _real_scalar(v, name):
    if isinstance(v, (ArrayBase, np.ndarray)):
        if v.ndim != 0:
            raise TypeError(f"{name}: expected a number, got an array of shape {v.shape}")
        v = static_value(v, name, "arange").item() if isinstance(v, ArrayBase) else v.item()
    elif isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, complex) or not isinstance(v, (int, float)):
        raise TypeError(f"{name}: expected a real number, got {v!r}")
    return v


def static_value(x, name, fn):
    """The values of ``x`` (Tensor or tracer) as an ndarray, for a function that needs them
    to decide a shape or a count: the explicit internal accessor (``float(x)`` of a value
    that grad/jvp differentiates raises, as the derivative through it would be lost; the
    caller adds that derivative back with tensor ops).  A value traced by jit, or batched by
    vmap (one value per example), has no such value: ConcretizationTypeError naming ``fn``."""
    t = x._concrete_tensor()
    if t is None:
        raise ConcretizationTypeError(
            f"{fn}: {name} must have a known value (it decides the shape of the result), but "
            f"it is traced by jit or batched by vmap (shape {x.shape}, dtype {x.dtype}); pass "
            f"a Python number or mark the argument static")
    return t._np()


def _traced_inexact(v):
    """``v`` when it is a tracer (a value of a transformation) of a float or complex dtype,
    else None."""
    if isinstance(v, ArrayBase) and type(v) is not Tensor and dtypes.is_inexact(v.dtype):
        return v
    return None


def _int_dtype_for(lo, hi):
    for dt in (dtypes.default_int(), dtypes.int64, dtypes.uint64):
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return dt
    raise ValueError(f"arange: values from {lo} to {hi} do not fit any integer dtype")


def arange(start: int | float, stop: int | float | None = None, step: int | float = 1,
           dtype: DTypeLike = None, *, device: object = None) -> Array:
    """``[start, stop)`` by ``step`` (``arange(n)`` is ``[0, n)``), as ``numpy.arange``:
    shape (ceil((stop - start) / step),), empty when the signs disagree.

    With ``dtype=None``: the default integer dtype (int32; int64 in x64 mode) when start, stop
    and step are all integers (int64 if a value of the result does not fit in int32), else the
    default float dtype (float32, the values computed in float64 and then rounded; float64 in
    x64 mode).  ValueError for a zero, NaN or infinite argument.  Differentiable in start and
    step (the values are start + k * step; stop only sets the count).  The count is read from
    the values, so under jit or vmap they must be known (else ConcretizationTypeError).
    """
    check_device(device)
    if stop is None:
        start, stop = 0, start
    # the values depend on start and step (start + k * step): their derivatives are added
    # back below; the count depends on stop too, read once here (a static value)
    traced = (_traced_inexact(start), _traced_inexact(step))
    out = _arange(start, stop, step, dtype)
    if (traced[0] is None and traced[1] is None) or not dtypes.is_inexact(out.dtype):
        return out
    dt = out.dtype
    k = Tensor._wrap(np.arange(out.shape[0], dtype=dt))
    for t, scale, name in zip(traced, (None, k), ("start", "step")):
        if t is not None:
            # t - its value: exactly 0, with t's derivative (the primal stays NumPy's)
            d = _core.astype(t - Tensor._wrap(static_value(t, name, "arange")), dt)
            out = out + (d if scale is None else d * scale)
    return out


def _arange(start, stop, step, dtype):
    start = _real_scalar(start, "start")
    stop = _real_scalar(stop, "stop")
    step = _real_scalar(step, "step")
    if step == 0:
        raise ValueError("step: must not be zero")
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, float) and not np.isfinite(v):
            raise ValueError(f"{name}: must be finite, got {v}")
    all_int = builtins.all(isinstance(v, int) for v in (start, stop, step))
    # (range's length, not len(range): that is a C size, which a huge range overflows)
    count = builtins.max(0, -((start - stop) // step)) if all_int else \
        builtins.max(0, np.ceil((stop - start) / step))
    if count * 8 > _MAX_BYTES:
        raise ValueError(f"start, stop, step: the range ({start}, {stop}, {step}) has {count} "
                         f"values, more than can be addressed")
    if dtype is None:
        if all_int:
            n = count
            last = start + (n - 1) * step if n else start
            dt = _int_dtype_for(builtins.min(start, last), builtins.max(start, last))
            return Tensor._wrap(_int_range(start, step, n, dt))
        dt = dtypes.default_float()
    else:
        dt = _dtype_or(dtype, None)
    if dt.kind in "fc" and not all_int:
        # computed in double precision, then rounded: NumPy's arange in float32 accumulates
        # the rounded step
        return Tensor._wrap(np.arange(start, stop, step, dtype=np.float64).astype(dt))
    if dt.kind in "iub" and all_int:
        # NumPy wraps values that leave the dtype's range: refuse them instead
        n = len(range(start, stop, step))
        info = np.iinfo(dt) if dt.kind != "b" else None
        lo, hi = (0, 1) if info is None else (info.min, info.max)
        for name, v in (("start", start), ("stop", start + (n - 1) * step if n else start)):
            if not lo <= v <= hi:
                raise ValueError(f"{name}: the range ({start}, {stop}, {step}) has the value "
                                 f"{v}, which does not fit dtype {dt}")
        if dt.kind in "iu":
            return Tensor._wrap(_int_range(start, step, n, dt))
    try:
        return Tensor._wrap(np.arange(start, stop, step, dtype=dt))
    except OverflowError:
        raise ValueError(f"start, stop, step: ({start}, {stop}, {step}) do not fit dtype "
                         f"{dt}") from None


def _py_int_as_float(v, name):
    """A Python int as a float (the values are computed in floating point anyway; NumPy
    would make an object array of one beyond int64 and fail)."""
    if isinstance(v, int):
        try:
            return float(v)
        except OverflowError:
            raise ValueError(f"{name}: {v} is too large for a float") from None
    return v


def _int_range(start, step, n, dt):
    """``start + k * step`` for k in [0, n), in the integer dtype ``dt`` that holds them all.
    NumPy's arange computes its length in double precision (a value short or extra for spans
    near 2**63): here the count is exact, and the values are computed modulo 2**64 (exact,
    as each one fits dt)."""
    k = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        vals = k * np.uint64(step % 2**64) + np.uint64(start % 2**64)
    return vals if dt == np.uint64 else vals.view(np.int64).astype(dt)


def linspace(start: int | float | complex, stop: int | float | complex, num: int = 50,
             dtype: DTypeLike = None, *, device: object = None, endpoint: bool = True) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive unless
    ``endpoint=False``): shape (num,) (for array start/stop, ``(num, *their_shape)``, as NumPy).
    dtype the default float dtype, or the default complex dtype when start or stop is complex
    (float32, complex64; float64, complex128 in x64 mode), unless given; the values are
    computed in double precision, then rounded, so the first is ``start`` and the last
    ``stop``.  Differentiable in start and stop, which may be traced by jit or batched by
    vmap."""
    check_device(device)
    num = _count(num, "num")
    if not isinstance(endpoint, (bool, np.bool_)):
        raise TypeError(f"endpoint: expected True or False, got {endpoint!r}")
    if builtins.any(isinstance(v, ArrayBase) and type(v) is not Tensor for v in (start, stop)):
        # a traced start or stop (grad, jvp, vmap, jit): NumPy's formula in tensor ops, so
        # that derivatives flow and jit can trace it
        return _traced_linspace(start, stop, num, dtype, endpoint)
    start = start.item() if isinstance(start, ArrayBase) and start.ndim == 0 else start
    stop = stop.item() if isinstance(stop, ArrayBase) and stop.ndim == 0 else stop
    start, stop = _py_int_as_float(start, "start"), _py_int_as_float(stop, "stop")
    is_complex = np.iscomplexobj(start) or np.iscomplexobj(stop)
    if dtype is None:
        dt = dtypes.default_complex() if is_complex else dtypes.default_float()
    else:
        dt = _dtype_or(dtype, None)
    _sized((num,) + np.shape(start), np.dtype(np.complex128), "num")  # computed in 16 bytes
    if dt.kind in "fc":
        wide = np.complex128 if is_complex or dt.kind == "c" else np.float64
        out = np.linspace(start, stop, num, endpoint=endpoint, dtype=wide)
        if is_complex and dt.kind != "c":
            raise TypeError(f"dtype: complex start/stop need a complex dtype, got {dt}")
        return _core.asarray(out.astype(dt))
    return _core.asarray(np.linspace(start, stop, num, endpoint=endpoint, dtype=dt))


def _traced_linspace(start, stop, num, dtype, endpoint):
    """``linspace`` of traced endpoints: NumPy's ``start + k * ((stop - start) / div)`` (the
    last value ``stop`` when ``endpoint``), computed in double precision as the eager path
    computes it, then rounded to the dtype: the same values, and start/stop's derivatives."""
    is_complex = builtins.any(dtypes.is_complex(v.dtype) if isinstance(v, ArrayBase) else
                              np.iscomplexobj(v) for v in (start, stop))
    if dtype is None:
        dt = dtypes.default_complex() if is_complex else dtypes.default_float()
    else:
        dt = _dtype_or(dtype, None)
    if is_complex and dt.kind != "c":
        raise TypeError(f"dtype: complex start/stop need a complex dtype, got {dt}")
    wide = np.dtype(np.complex128 if is_complex or dt.kind == "c" else np.float64)
    # a Python number enters in double precision, as the eager path reads it (not as a weakly
    # typed float32 constant)
    start, stop = (_core.astype(v, wide) if isinstance(v, ArrayBase) else
                   Tensor._wrap(np.asarray(_py_int_as_float(v, name), dtype=wide))
                   for v, name in ((start, "start"), (stop, "stop")))
    shape = broadcast_shapes(start.shape, stop.shape)
    _sized((num,) + shape, np.dtype(np.complex128), "num")
    a = broadcast_to(start, shape)
    b = broadcast_to(stop, shape)
    div = (num - 1) if endpoint else num
    k = Tensor._wrap(np.arange(num, dtype=np.float64).reshape((num,) + (1,) * len(shape)))
    if div > 0:
        y = k * ((b - a) / float(div)) + a
    else:   # num 0 or 1: start alone
        y = k * (b - a) + a
    if endpoint and num > 1:
        last = Tensor._wrap(np.arange(num).reshape((num,) + (1,) * len(shape)) == num - 1)
        y = where(last, b, y)
    if dt.kind in "iu":
        y = floor(y)
    return _core.astype(y, dt)


def eye(n: int, m: int | None = None, dtype: DTypeLike = None, *, k: int = 0,
        device: object = None) -> Array:
    """The (n, m) matrix with ones on the ``k``-th diagonal (0: main, > 0 above, < 0 below)
    and zeros elsewhere; m defaults to n; the default float dtype (float32; float64 in x64
    mode) unless ``dtype`` is given.  (The Array API's ``eye(n_rows, n_cols, *, k, dtype,
    device)`` by position.)"""
    check_device(device)
    n = _count(n, "n")
    m = n if m is None else _count(m, "m")
    k = _offset(k)
    dt = _dtype_or(dtype, dtypes.default_float())
    _sized((n, m), dt, "n, m")
    if not -n < k < m:
        return zeros((n, m), dt)
    return Tensor._wrap(np.eye(n, m, k=k, dtype=dt))


def identity(n: int, dtype: DTypeLike = None, *, device: object = None) -> Array:
    """The (n, n) identity matrix, the default float dtype (float32; float64 in x64 mode)
    unless ``dtype`` is given."""
    return eye(n, dtype=dtype, device=device)


def tri(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike = None, *,
        device: object = None) -> Array:
    """The (N, M) matrix with ones at and below the ``k``-th diagonal (``j <= i + k``), zeros
    above; M defaults to N; the default float dtype (float32; float64 in x64 mode, where
    JAX's ``tri`` keeps float32) unless ``dtype`` is given."""
    check_device(device)
    n = _count(N, "N")
    m = n if M is None else _count(M, "M")
    k = builtins.max(builtins.min(_offset(k), m), -n - 1)
    dt = _dtype_or(dtype, dtypes.default_float())
    _sized((n, m), dt, "N, M")
    return Tensor._wrap(np.tri(n, m, k, dtype=dt))


def indices(dimensions: ShapeLike, dtype: DTypeLike = None, sparse: bool = False) -> Array:
    """The index grids of a tensor of shape ``dimensions``: shape ``(len(dimensions),
    *dimensions)``, ``out[i][idx] == idx[i]``; the default int dtype (int32; int64 in x64
    mode) unless ``dtype`` is given.  With
    ``sparse=True``, a tuple of tensors of shape (1, ..., d_i, ..., 1), as NumPy."""
    dims = normalize_shape(dimensions, "dimensions")
    dt = _dtype_or(dtype, dtypes.default_int())
    _sized((len(dims),) + dims, dt, "dimensions")
    if sparse:
        return tuple(_core.asarray(a) for a in np.indices(dims, dtype=dt, sparse=True))
    return _core.asarray(np.indices(dims, dtype=dt))


def meshgrid(*arrays: ArrayLike, indexing: str = "xy", sparse: bool = False) -> list[Array]:
    """Coordinate grids of 1-d ``arrays`` (n-d ones are flattened, as NumPy): a list of n
    tensors of one shape, (len(a1), len(a0), len(a2), ...) with ``indexing='xy'`` (Cartesian,
    the default) or (len(a0), len(a1), ...) with ``'ij'`` (matrix); each keeps its input's
    dtype.  With ``sparse=True`` each keeps size 1 on the other axes (broadcastable, not
    expanded).  Differentiable (a reshape and a broadcast of each input)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing: must be 'xy' or 'ij', got {indexing!r}")
    xs = [operand(a) for a in arrays]
    nd = len(xs)
    out = []
    for i, x in enumerate(xs):
        axis = i
        if indexing == "xy" and nd > 1 and i < 2:
            axis = 1 - i
        shape = [1] * nd
        shape[axis] = -1
        out.append(reshape(x, tuple(shape)))
    if sparse or nd == 0:
        return out
    shape = broadcast_shapes(*[o.shape for o in out])
    # a copy each, as NumPy: writing into one grid must not change the others
    return [copy_tensor(broadcast_to(o, shape)) for o in out]


# -- triangles and diagonals -----------------------------------------------------------------

def _matrix_mask(x, k, lower, name):
    if x.ndim < 2:
        raise ValueError(f"x: {name} needs a tensor of at least 2 dimensions, got shape "
                         f"{x.shape}")
    n, m = x.shape[-2:]
    k = builtins.max(builtins.min(k, m + 1), -n - 1)
    mask = np.tri(n, m, k if lower else k - 1, dtype=bool)
    return _core.asarray(mask if lower else ~mask)


def tril(x: ArrayLike, k: int = 0) -> Array:
    """The lower triangle of the matrices in ``x`` (..., n, m): elements with ``j <= i + k``
    kept, the others zero.  Same shape and dtype; differentiable (a select)."""
    x = operand(x)
    return where(_matrix_mask(x, _offset(k), True, "tril"), x, zeros_like_t(x))


def triu(x: ArrayLike, k: int = 0) -> Array:
    """The upper triangle of the matrices in ``x`` (..., n, m): elements with ``j >= i + k``
    kept, the others zero.  Same shape and dtype; differentiable (a select)."""
    x = operand(x)
    return where(_matrix_mask(x, _offset(k), False, "triu"), x, zeros_like_t(x))


def diag(v: ArrayLike, k: int = 0) -> Array:
    """As ``numpy.diag``: for a 1-d ``v`` of length L, the (L + |k|, L + |k|) matrix with v on
    its ``k``-th diagonal and zeros elsewhere; for a 2-d ``v``, its ``k``-th diagonal (1-d).
    Same dtype; differentiable (a select of a broadcast, or a strided view)."""
    v = operand(v)
    k = _offset(k)
    if v.ndim == 1:
        size = v.shape[0] + builtins.abs(k)
        _sized((size, size), v.dtype, "k")
        padded = pad(v, (0, builtins.abs(k)))
        grid = broadcast_to(reshape(padded, (size, 1) if k >= 0 else (1, size)), (size, size))
        mask = _core.asarray(np.eye(size, k=k, dtype=bool))
        return where(mask, grid, zeros_like_t(grid))
    if v.ndim == 2:
        n, m = v.shape
        length = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
        if length == 0:
            return shrink(reshape(v, (-1,)), [(0, 0)])
        offset = k if k >= 0 else -k * m
        return as_strided(v, (length,), (m + 1,), offset)
    raise ValueError(f"v: diag needs a 1-d or 2-d tensor, got shape {v.shape}")


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """The square matrix with the flattened ``v`` on its ``k``-th diagonal (as
    ``numpy.diagflat``); differentiable."""
    return diag(reshape(operand(v), (-1,)), k)
