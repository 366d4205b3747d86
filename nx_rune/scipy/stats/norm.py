"""The normal distribution (``nx.scipy.stats.norm``), as ``jax.scipy.stats.norm``: functions of
x (or q) with ``loc`` (mean) and ``scale`` (standard deviation > 0; nan otherwise), broadcast
together, in the promoted float dtype (ints: float32).  Differentiable in every argument."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _z(name, x, loc, scale):
    x, loc, scale = _c.promoted(name, x=x, loc=loc, scale=scale)
    return F.divide(F.subtract(x, loc), scale), scale


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log N(x; loc, scale**2) = -z**2 / 2 - log(scale) - log(sqrt(2 pi)), z = (x - loc) / scale.
    Broadcast shape of the arguments, float dtype."""
    z, scale = _z("norm.logpdf", x, loc, scale)
    out = F.subtract(F.multiply(F.multiply(z, z), -0.5), F.add(F.log(scale), _c.LOG_SQRT_2PI))
    return _c.nan_where(F.less_equal(scale, 0), out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X <= x) = ndtr((x - loc) / scale)."""
    z, scale = _z("norm.cdf", x, loc, scale)
    return _c.nan_where(F.less_equal(scale, 0), special.ndtr(z))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X <= x) = log_ndtr(z): accurate far in the lower tail."""
    z, scale = _z("norm.logcdf", x, loc, scale)
    return _c.nan_where(F.less_equal(scale, 0), special.log_ndtr(z))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = ndtr(-z): accurate far in the upper tail."""
    z, scale = _z("norm.sf", x, loc, scale)
    return _c.nan_where(F.less_equal(scale, 0), special.ndtr(F.negative(z)))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X > x) = log_ndtr(-z)."""
    z, scale = _z("norm.logsf", x, loc, scale)
    return _c.nan_where(F.less_equal(scale, 0), special.log_ndtr(F.negative(z)))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile function loc + scale * ndtri(q) (-inf at 0, inf at 1, nan outside [0, 1])."""
    q, loc, scale = _c.promoted("norm.ppf", q=q, loc=loc, scale=scale)
    out = F.add(loc, F.multiply(scale, special.ndtri(q)))
    return _c.nan_where(F.less_equal(scale, 0), out)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The inverse survival function loc - scale * ndtri(q) (inf at 0, -inf at 1, nan outside
    [0, 1]): accurate for small q, where ppf(1 - q) would lose it."""
    q, loc, scale = _c.promoted("norm.isf", q=q, loc=loc, scale=scale)
    out = F.subtract(loc, F.multiply(scale, special.ndtri(q)))
    return _c.nan_where(F.less_equal(scale, 0), out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
