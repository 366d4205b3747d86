"""The von Mises distribution (``nx.scipy.stats.vonmises``), as ``jax.scipy.stats.vonmises``:
an angle x (any real: the density is 2 pi periodic, as SciPy's) with concentration ``kappa``
(>= 0, kappa = 0 the uniform density 1 / (2 pi); nan for kappa < 0 or infinite).  Broadcast,
promoted float dtype; differentiable in x and kappa.  ``cdf`` is SciPy's (its series and
normal approximation), beyond JAX's functions."""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf"]

_LOG_2PI = math.log(2.0 * math.pi)


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """kappa (cos(x) - 1) - log(2 pi i0e(kappa)): cos(x) - 1 as -2 sin(x / 2)**2 (exact near
    x = 0) and the exponentially scaled Bessel function i0e (no overflow for large kappa)."""
    x, kappa = _c.promoted("vonmises.logpdf", x=x, kappa=kappa)
    bad = F.logical_not(F.logical_and(F.greater_equal(kappa, 0), F.isfinite(kappa)))
    k = _c.safe(bad, 1.0, kappa)
    s = F.sin(F.multiply(x, 0.5))
    cosm1 = F.multiply(F.multiply(s, s), -2.0)
    out = F.subtract(F.multiply(k, cosm1), F.add(F.log(special.i0e(k)), _LOG_2PI))
    return _c.nan_where(bad, out)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """exp(logpdf(x, kappa))."""
    return F.exp(logpdf(x, kappa))



# SciPy's von_mises_cdf: below kappa = 50 the series of Hill (1977) summed backwards from
# n = _TERMS - 1 (SciPy takes 1 + 28 + kappa / 2 - 100 / (kappa + 5) terms, at most 53; more
# only adds terms below its 12 digits), above it the normal approximation ndtr(b sin(x / 2)),
# b = sqrt(2 / pi) / i0e(kappa); x is reduced to [-pi, pi] and each whole period adds 1
_TERMS = 54
_NORMAL_FROM = 50.0


def cdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """P(X <= x) on the real line as SciPy's: the distribution function on [-pi, pi] plus the
    number of whole periods 2 pi below x (so cdf(x + 2 pi) = cdf(x) + 1; 0 and 1 at x = -inf
    and inf); nan for kappa < 0, kappa = inf the point mass at 0.  Differentiable in x (the
    density) and kappa."""
    x, kappa = _c.promoted("vonmises.cdf", x=x, kappa=kappa)
    # kappa = inf is SciPy's limit, the point mass at 0 (through the normal approximation)
    bad = F.logical_not(F.greater_equal(kappa, 0))
    k = _c.safe(bad, 1.0, kappa)
    finite = F.isfinite(x)
    x_in = _c.safe(finite, x, 0.0)
    periods = F.round(F.divide(x_in, 2.0 * math.pi))
    y = F.subtract(x_in, F.multiply(periods, 2.0 * math.pi))
    series_k = _c.safe(F.less(k, _NORMAL_FROM), k, 1.0)
    s, c = F.sin(y), F.cos(y)
    sn, cn = F.sin(F.multiply(y, float(_TERMS))), F.cos(F.multiply(y, float(_TERMS)))
    # the first step (n = _TERMS - 1) from R = V = 0, then the recurrence
    n = _TERMS - 1
    sn, cn = F.subtract(F.multiply(sn, c), F.multiply(cn, s)), \
        F.add(F.multiply(cn, c), F.multiply(sn, s))
    r = F.divide(series_k, 2.0 * n)
    v = F.multiply(r, F.divide(sn, float(n)))
    for n in range(_TERMS - 2, 0, -1):
        sn, cn = F.subtract(F.multiply(sn, c), F.multiply(cn, s)), \
            F.add(F.multiply(cn, c), F.multiply(sn, s))
        r = F.divide(series_k, F.add(F.multiply(series_k, r), 2.0 * n))
        v = F.multiply(r, F.add(F.divide(sn, float(n)), v))
    series = F.add(F.add(F.divide(y, 2.0 * math.pi), 0.5), F.divide(v, math.pi))
    series = F.clip(series, 0.0, 1.0)
    normal_k = _c.safe(F.less(k, _NORMAL_FROM), _NORMAL_FROM, k)
    b = F.divide(math.sqrt(2.0 / math.pi), special.i0e(normal_k))
    normal = special.ndtr(F.multiply(b, F.sin(F.multiply(y, 0.5))))
    out = F.add(F.where(F.less(k, _NORMAL_FROM), series, normal), periods)
    # x = +-inf: SciPy's 1 and 0
    out = F.where(finite, out, F.where(F.greater(x, 0), 1.0, 0.0))
    return _c.nan_where(F.logical_or(bad, F.isnan(x)), out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
