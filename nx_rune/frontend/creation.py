"""Making tensors: from Python/NumPy data (``asarray``, ``array``) and from shapes (``zeros``...).

Python data follows JAX's x32 defaults: floats become float32, ints int32 (int64 when they do
not fit), complex numbers complex64.  NumPy arrays keep their dtype, and ``asarray`` of a
C-contiguous ndarray shares its memory.
"""
from __future__ import annotations

import builtins

import numpy as np

from nx_rune import dtypes
from nx_rune._kernels.buffer import Buffer, zeros_buffer
from nx_rune._kernels.view import View
from nx_rune.frontend._core import asarray, astype, broadcast_to, normalize_shape
from nx_rune.frontend.movement import copy
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

__all__ = ["asarray", "array", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
           "full_like", "arange", "linspace", "eye"]


def array(obj: ArrayLike, dtype: DTypeLike = None) -> Array:
    """Like ``asarray`` but always copies."""
    if isinstance(obj, ArrayBase):
        return copy(asarray(obj, dtype))
    t = asarray(obj, dtype)
    if isinstance(obj, np.ndarray) and np.shares_memory(t._np(), obj):
        return Tensor._wrap(np.array(t._np(), copy=True))
    return t


def _dtype_or(dtype, default):
    return default if dtype is None else dtypes.check_dtype(dtype)


def zeros(shape: ShapeLike, dtype: DTypeLike = dtypes.float32) -> Array:
    """Zeros of ``shape`` (an int or a tuple), ``dtype`` float32 by default (zero pages from
    calloc: nothing is written until touched)."""
    shape = normalize_shape(shape)
    dt = _dtype_or(dtype, dtypes.float32)
    n = 1
    for s in shape:
        n *= s
    return Tensor(zeros_buffer(n, dt), View.contiguous(shape))


def empty(shape: ShapeLike, dtype: DTypeLike = dtypes.float32) -> Array:
    """Uninitialised memory of ``shape``, ``dtype`` float32 by default (64-byte aligned)."""
    shape = normalize_shape(shape)
    dt = _dtype_or(dtype, dtypes.float32)
    n = 1
    for s in shape:
        n *= s
    return Tensor(Buffer(n, dt), View.contiguous(shape))


def full(shape: ShapeLike, fill_value: ArrayLike, dtype: DTypeLike = None) -> Array:
    """``fill_value`` everywhere in ``shape``; dtype defaults to the fill value's (a Python
    float gives float32, an int int32, a bool bool, an array its own).  A traced fill value
    (inside a transformation) is broadcast, so derivatives flow through it."""
    shape = normalize_shape(shape)
    if isinstance(fill_value, ArrayBase) and not isinstance(fill_value, Tensor):
        fill = fill_value if dtype is None else astype(fill_value, dtype)
        return broadcast_to(fill, shape)
    if dtype is None:
        dt = (dtypes.check_dtype(np.asarray(fill_value).dtype)
              if isinstance(fill_value, (np.ndarray, ArrayBase))
              else dtypes.scalar_dtype(fill_value) if np.ndim(fill_value) == 0
              else asarray(fill_value).dtype)
    else:
        dt = dtypes.check_dtype(dtype)
    return Tensor._wrap(np.full(shape, np.asarray(fill_value), dtype=dt))


def ones(shape: ShapeLike, dtype: DTypeLike = dtypes.float32) -> Array:
    """Ones of ``shape``, ``dtype`` float32 by default."""
    return full(shape, 1, _dtype_or(dtype, dtypes.float32))


def zeros_like(x: ArrayLike, dtype: DTypeLike = None) -> Array:
    """Zeros with ``x``'s shape and (by default) dtype; ``x`` may be any array-like."""
    return zeros(np.shape(x) if not isinstance(x, ArrayBase) else x.shape,
                 _dtype_or(dtype, _dtype_of(x)))


def ones_like(x: ArrayLike, dtype: DTypeLike = None) -> Array:
    """Ones with ``x``'s shape and (by default) dtype."""
    return ones(x.shape if isinstance(x, ArrayBase) else np.shape(x), _dtype_or(dtype, _dtype_of(x)))


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike = None) -> Array:
    """``fill_value`` with ``x``'s shape and (by default) dtype."""
    return full(x.shape if isinstance(x, ArrayBase) else np.shape(x), fill_value,
                _dtype_or(dtype, _dtype_of(x)))


def _dtype_of(x):
    return x.dtype if isinstance(x, ArrayBase) else asarray(x).dtype


def arange(start: int | float, stop: int | float | None = None, step: int | float = 1,
           dtype: DTypeLike = None) -> Array:
    """``[start, stop)`` by ``step`` as ``numpy.arange``: shape (ceil((stop - start) / step),).

    With ``dtype=None``: int32 when start, stop and step are all integers (int64 if a value
    does not fit in int32), else float32 (the values are computed in float64, then rounded).
    """
    if stop is None:
        start, stop = 0, start
    start, stop, step = (v.item() if isinstance(v, ArrayBase) else v for v in (start, stop, step))
    if step == 0:
        raise ValueError("step: must not be zero")
    if dtype is not None:
        return Tensor._wrap(np.arange(start, stop, step, dtype=dtypes.check_dtype(dtype)))
    if builtins.all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        start, stop, step = int(start), int(stop), int(step)
        last = start + (len(range(start, stop, step)) - 1) * step
        fits = -2**31 <= builtins.min(start, last) and builtins.max(start, last) < 2**31
        return Tensor._wrap(np.arange(start, stop, step, dtype=np.int32 if fits else np.int64))
    return Tensor._wrap(np.arange(start, stop, step, dtype=np.float64).astype(np.float32))


def linspace(start: int | float, stop: int | float, num: int = 50,
             dtype: DTypeLike = None) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive: shape (num,), dtype
    float32 unless given."""
    if num < 0:
        raise ValueError(f"num: must be >= 0, got {num}")
    return Tensor._wrap(np.linspace(start, stop, num, dtype=_dtype_or(dtype, dtypes.float32)))


def eye(n: int, m: int | None = None, dtype: DTypeLike = dtypes.float32) -> Array:
    """The (n, m) identity matrix (m defaults to n; ones on the diagonal), float32 by default."""
    if n < 0 or (m is not None and m < 0):
        raise ValueError(f"n, m: must be >= 0, got n={n}, m={m}")
    return Tensor._wrap(np.eye(n, m, dtype=_dtype_or(dtype, dtypes.float32)))
