"""``nx_rune.autograd.scipy.special``: ``scipy.special``'s names on ``nx_rune.scipy.special``.

nx_rune's functions where it has them; autograd's other differentiable special functions (beta,
psi, rgamma, gammasgn, the Bessel functions j0, j1, jn, y0, y1, yn, i0, i1, iv, ive, erfcinv)
as primitives over SciPy with autograd's derivative rules; the rest SciPy's on concrete values.
"""
import scipy.special as _sps

import nx_rune.scipy.special as _nxs
from nx_rune.autograd import numpy as _np
from nx_rune.autograd._namespace import populate as _populate
from nx_rune.autograd.extend import defvjp as _defvjp
from nx_rune.autograd.scipy._util import scipy_primitive as _prim

__all__ = _populate(globals(), _sps, _nxs, "nx_rune.autograd.scipy.special")

beta = _prim(_sps.beta)
psi = _prim(_sps.psi)
rgamma = _prim(_sps.rgamma)
gammasgn = _prim(_sps.gammasgn)
j0, j1, jn = _prim(_sps.j0), _prim(_sps.j1), _prim(_sps.jn)
y0, y1, yn = _prim(_sps.y0), _prim(_sps.y1), _prim(_sps.yn)
iv, ive = _prim(_sps.iv), _prim(_sps.ive)
erfcinv = _prim(_sps.erfcinv)

# d/da B(a, b) = B(a, b) (psi(a) - psi(a + b)), and symmetrically in b
_defvjp(beta, lambda ans, a, b: lambda g: g * ans * (psi(a) - psi(a + b)),
        lambda ans, a, b: lambda g: g * ans * (psi(b) - psi(a + b)))
# (polygamma and gamma are among the names _populate put in this module's globals)
_defvjp(psi, lambda ans, x: lambda g: g * polygamma(1, x))  # noqa: F821
_defvjp(rgamma, lambda ans, x: lambda g: g * psi(x) / -gamma(x))  # noqa: F821
_defvjp(gammasgn, None)
_defvjp(j0, lambda ans, x: lambda g: -g * j1(x))
_defvjp(y0, lambda ans, x: lambda g: -g * y1(x))
_defvjp(j1, lambda ans, x: lambda g: g * (j0(x) - jn(2, x)) / 2.0)
_defvjp(y1, lambda ans, x: lambda g: g * (y0(x) - yn(2, x)) / 2.0)
_defvjp(jn, None, lambda ans, n, x: lambda g: g * (jn(n - 1, x) - jn(n + 1, x)) / 2.0)
_defvjp(yn, None, lambda ans, n, x: lambda g: g * (yn(n - 1, x) - yn(n + 1, x)) / 2.0)
_defvjp(iv, None, lambda ans, n, x: lambda g: g * (iv(n - 1, x) + iv(n + 1, x)) / 2.0)
_defvjp(ive, None, lambda ans, n, x: lambda g: g * (ans * (n / x - _np.sign(x)) + ive(n + 1, x)))
# erfcinv(y) = erfinv(1 - y): its derivative is -sqrt(pi)/2 exp(erfcinv(y)^2)
_defvjp(erfcinv, lambda ans, x: lambda g: -g * 0.886226925452758 * _np.exp(ans ** 2))

__all__ += ["beta", "psi", "rgamma", "gammasgn", "j0", "j1", "jn", "y0", "y1", "yn", "iv",
            "ive", "erfcinv"]
__all__ = sorted(set(__all__))
