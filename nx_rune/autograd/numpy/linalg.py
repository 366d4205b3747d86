"""``nx_rune.autograd.numpy.linalg``: ``numpy.linalg``'s names on ``nx_rune.linalg`` (float64
defaults; functions nx_rune lacks run in NumPy on concrete values)."""
import numpy as _onp

import nx_rune as _nx
import nx_rune.linalg as _nxl
from nx_rune.autograd._namespace import populate as _populate

__all__ = _populate(globals(), _onp.linalg, _nxl, "nx_rune.autograd.numpy.linalg")


def T(x):
    """``x`` with its last two axes swapped (autograd's helper of the same name)."""
    return _nx.swapaxes(x, -1, -2)


def _dot(a, b):
    # autograd's batched matrix product helper (its tests call it)
    return _nx.einsum("...ij,...jk->...ik", a, b)


__all__ += ["T"]
