"""``nx_rune.autograd.numpy.linalg``: ``numpy.linalg``'s names on ``nx_rune.linalg`` (float64
defaults; functions nx_rune lacks run in NumPy on concrete values)."""
import numpy as _onp

import nx_rune.linalg as _nxl
from nx_rune.autograd._namespace import populate as _populate

__all__ = _populate(globals(), _onp.linalg, _nxl, "nx_rune.autograd.numpy.linalg")
