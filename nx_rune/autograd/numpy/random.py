"""``nx_rune.autograd.numpy.random``: NumPy's global random state, as ``autograd.numpy.random``.

The draws are NumPy's (``npr.seed(0); npr.randn(3)`` gives the numbers an autograd program
gets), returned as float64 nx_rune Tensors (scalars as NumPy returns them).  Random draws are
constants to differentiation, as in autograd.  ``RandomState`` and ``Generator`` are NumPy's
(their draws are NumPy arrays).
"""
import numpy as _onp

from nx_rune.autograd._namespace import populate as _populate

__all__ = _populate(globals(), _onp.random, None, "nx_rune.autograd.numpy.random")
