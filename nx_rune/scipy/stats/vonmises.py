"""The von Mises distribution (``nx.scipy.stats.vonmises``), as ``jax.scipy.stats.vonmises``:
an angle x (any real: the density is 2 pi periodic, as SciPy's) with concentration ``kappa``
(>= 0, kappa = 0 the uniform density 1 / (2 pi); nan for kappa < 0 or infinite).  Broadcast,
promoted float dtype; differentiable in x and kappa."""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2.0 * math.pi)


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """kappa (cos(x) - 1) - log(2 pi i0e(kappa)): cos(x) - 1 as -2 sin(x / 2)**2 (exact near
    x = 0) and the exponentially scaled Bessel function i0e (no overflow for large kappa)."""
    x, kappa = _c.args("vonmises.logpdf", x=x, kappa=kappa)
    bad = F.logical_not(F.logical_and(F.greater_equal(kappa, 0), F.isfinite(kappa)))
    k = _c.safe(bad, 1.0, kappa)
    s = F.sin(F.multiply(x, 0.5))
    cosm1 = F.multiply(F.multiply(s, s), -2.0)
    out = F.subtract(F.multiply(k, cosm1), F.add(F.log(special.i0e(k)), _LOG_2PI))
    return _c.nan_where(bad, out)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """exp(logpdf(x, kappa))."""
    return F.exp(logpdf(x, kappa))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
