"""Indexing: gather(data, indices, axis) and scatter(template, indices, updates, axis, mode)
along an axis (take_along_axis semantics), by the typed kernels of ``nx_rune._kernels.gather``
(index bounds checked there, duplicate updates defined by ``mode``).

May import: ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
from nx_rune.backend._core import _impl, _out


@_impl("gather")
def _gather(data, indices, *, axis):
    from nx_rune._kernels import gather as K
    return _out(K.gather(data._np(), indices._np(), axis))


@_impl("scatter")
def _scatter(template, indices, updates, *, axis, mode):
    from nx_rune._kernels import gather as K
    return _out(K.scatter(template._np(), indices._np(), updates._np(), axis, mode))
