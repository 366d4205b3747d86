"""``nx_rune.autograd.numpy.fft``: ``numpy.fft``'s names on ``nx_rune.fft`` (float64 defaults)."""
import numpy as _onp

import nx_rune.fft as _nxf
from nx_rune.autograd._namespace import populate as _populate

__all__ = _populate(globals(), _onp.fft, _nxf, "nx_rune.autograd.numpy.fft")
