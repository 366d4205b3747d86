"""Sliding windows: unfold(x, kernel_size, stride, dilation, padding) (im2col) and its adjoint
fold(cols, output_size, kernel_size, stride, dilation, padding), by the typed kernels of
``nx_rune._kernels.fold``.

May import: ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
from nx_rune.backend._core import _impl, _out


@_impl("unfold")
def _unfold(x, *, kernel_size, stride, dilation, padding):
    from nx_rune._kernels import fold as K
    return _out(K.unfold(x._np(), kernel_size, stride, dilation, padding))


@_impl("fold")
def _fold(cols, *, output_size, kernel_size, stride, dilation, padding):
    from nx_rune._kernels import fold as K
    return _out(K.fold(cols._np(), output_size, kernel_size, stride, dilation, padding))
