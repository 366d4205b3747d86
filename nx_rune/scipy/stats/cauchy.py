"""The Cauchy distribution (``nx.scipy.stats.cauchy``), as ``jax.scipy.stats.cauchy``: x with
``loc`` and ``scale`` (> 0; nan otherwise).  Broadcast, promoted float dtype; differentiable in
x, loc and scale."""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _y(name, x, loc, scale):
    x, loc, scale = _c.promoted(name, x=x, loc=loc, scale=scale)
    return F.divide(F.subtract(x, loc), scale), scale


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-log(pi) - log(scale) - log1p(y**2), y = (x - loc) / scale."""
    y, scale = _y("cauchy.logpdf", x, loc, scale)
    out = F.negative(F.add(F.add(F.log(scale), _c.LOG_PI), F.log1p(F.multiply(y, y))))
    return _c.nan_where(F.less_equal(scale, 0), out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """1/2 + arctan(y) / pi (SciPy's formula)."""
    return _cdf("cauchy.cdf", x, loc, scale, 1.0)


def _cdf(name, x, loc, scale, sign):
    """P(X <= x) (sign 1) or P(X > x) (sign -1, the cdf at the mirror image about loc)."""
    y, scale = _y(name, x, loc, scale)
    y = F.multiply(y, sign)
    finite = F.isfinite(y)
    out = F.add(F.multiply(F.arctan(F.where(finite, y, 0.0)), 1.0 / math.pi), 0.5)
    out = F.where(finite, out, F.where(F.greater(y, 0), 1.0, F.where(F.less(y, 0), 0.0, y)))
    return _c.nan_where(F.less_equal(scale, 0), out)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = 1/2 - arctan(y) / pi (the cdf at -y: the distribution is symmetric)."""
    return _cdf("cauchy.sf", x, loc, scale, -1.0)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X <= x)."""
    return F.log(_cdf("cauchy.logcdf", x, loc, scale, 1.0))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X > x)."""
    return F.log(_cdf("cauchy.logsf", x, loc, scale, -1.0))


def _quantile(name, q, loc, scale, sign):
    q, loc, scale = _c.promoted(name, q=q, loc=loc, scale=scale)
    bad = F.logical_or(F.less_equal(scale, 0), F.logical_or(F.less(q, 0), F.greater(q, 1)))
    # tan(pi (q - 1/2)) = -1 / tan(pi q), written on the nearer end of [0, 1] (pi q and
    # pi (1 - q) are accurate there, pi q - pi / 2 is not: SciPy's values at q = 1e-10)
    low = F.less_equal(q, 0.5)
    t = F.tan(F.multiply(F.where(low, q, F.subtract(1.0, q)), math.pi))
    ends = F.logical_or(F.equal(q, 0), F.equal(q, 1))
    z = F.divide(F.where(low, -1.0, 1.0), _c.safe(ends, 1.0, t))
    z = F.where(ends, F.where(F.equal(q, 0), -float("inf"), float("inf")),
                F.where(F.equal(q, 0.5), 0.0, z))
    return _c.nan_where(bad, F.add(loc, F.multiply(scale, F.multiply(z, sign))))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile loc + scale tan(pi (q - 1/2)) (-inf at 0, inf at 1, nan outside [0, 1])."""
    return _quantile("cauchy.ppf", q, loc, scale, 1.0)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The inverse survival function loc + scale tan(pi (1/2 - q))."""
    return _quantile("cauchy.isf", q, loc, scale, -1.0)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
