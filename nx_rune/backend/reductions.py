"""Reductions: reduce_sum, reduce_prod, reduce_max (NumPy's reductions in the operand's dtype)
and argmax (int32 indices).  The NaN-skipping reductions are in ``statistics``.

Parameters: reduce_sum/reduce_max/reduce_prod(x, axes, keepdims)  argmax(x, axis, keepdims)

May import: NumPy and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune.backend._core import _impl, _out


@_impl("reduce_sum")
def _reduce_sum(x, *, axes, keepdims):
    a = x._np()   # (np.add.reduce: what np.sum runs, without its Python wrapper)
    return _out(np.add.reduce(a, axis=tuple(axes), dtype=a.dtype, keepdims=keepdims))


@_impl("reduce_prod")
def _reduce_prod(x, *, axes, keepdims):
    a = x._np()
    return _out(np.multiply.reduce(a, axis=tuple(axes), dtype=a.dtype, keepdims=keepdims))


@_impl("reduce_max")
def _reduce_max(x, *, axes, keepdims):
    a = x._np()
    axes = tuple(axes)
    if a.size == 0 and (not axes or any(a.shape[i] == 0 for i in axes)):
        raise ValueError(f"max: reduction over an empty axis of shape {a.shape} has no identity")
    return _out(np.max(a, axis=axes, keepdims=keepdims))


@_impl("argmax")
def _argmax(x, *, axis, keepdims):
    a = x._np()
    # as NumPy: only an empty reduced axis has no argmax ((0, 3) along axis 1 gives shape (0,))
    if a.size == 0 and (axis is None or not -a.ndim <= axis < a.ndim or a.shape[axis] == 0):
        raise ValueError(f"argmax: attempt to get the argmax of an empty tensor of shape {a.shape}")
    out = np.argmax(a, axis=axis, keepdims=keepdims)
    return _out(np.asarray(out, dtype=np.int32))
