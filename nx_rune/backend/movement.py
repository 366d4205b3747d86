"""The movement primitives that need new memory: roll and cat (the others are views:
``nx_rune.backend.views``).

Parameters: roll(x, shift, axis)  cat(*xs, axis)

May import: NumPy, ``nx_rune.backend._core`` and ``nx_rune.backend.memory``.
"""
import numpy as np

from nx_rune.backend._core import _impl, _out
from nx_rune.backend.memory import _check_bytes


@_impl("roll")
def _roll(x, *, shift, axis):
    """x's elements moved ``shift`` places along ``axis`` (an int of any sign, taken modulo the
    axis length; those pushed past the end come back at the start): a new C-ordered tensor."""
    a = x._np()
    n = a.shape[axis]
    s = shift % n if n else 0
    if not s:
        return _out(a.copy())
    head = [slice(None)] * a.ndim
    tail = list(head)
    head[axis], tail[axis] = slice(n - s, None), slice(0, n - s)
    return _out(np.concatenate((a[tuple(head)], a[tuple(tail)]), axis=axis))


@_impl("cat")
def _cat(*xs, axis):
    if xs:
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        _check_bytes(shape, xs[0].dtype, "arrays")
    return _out(np.concatenate([x._np() for x in xs], axis=axis))
