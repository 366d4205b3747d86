"""``nx_rune.autograd.scipy.special``: ``scipy.special``'s names on ``nx_rune.scipy.special``.

nx_rune's functions where it has them (every differentiable one autograd has: beta, psi, rgamma,
gammasgn, the Bessel functions j0, j1, jn, y0, y1, yn, i0, i1, iv, ive, erfcinv, ..., with
derivatives to any order); the rest SciPy's on concrete values.
"""
import scipy.special as _sps

import nx_rune.scipy.special as _nxs
from nx_rune.autograd._namespace import populate as _populate

__all__ = sorted(set(_populate(globals(), _sps, _nxs, "nx_rune.autograd.scipy.special")))
