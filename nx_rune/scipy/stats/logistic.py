"""The logistic distribution (``nx.scipy.stats.logistic``), as ``jax.scipy.stats.logistic``: x
with ``loc`` and ``scale`` (> 0; nan otherwise).  Broadcast, promoted float dtype;
differentiable in x, loc and scale."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def _y(name, x, loc, scale):
    x, loc, scale = _c.promoted(name, x=x, loc=loc, scale=scale)
    return F.divide(F.subtract(x, loc), scale), scale


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-|y| - 2 log1p(exp(-|y|)) - log(scale), y = (x - loc) / scale (no overflow)."""
    y, scale = _y("logistic.logpdf", x, loc, scale)
    m = F.negative(F.abs(y))
    out = F.subtract(F.subtract(m, F.multiply(F.log1p(F.exp(m)), 2.0)), F.log(scale))
    return _c.nan_where(F.less_equal(scale, 0), out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """expit((x - loc) / scale)."""
    y, scale = _y("logistic.cdf", x, loc, scale)
    return _c.nan_where(F.less_equal(scale, 0), special.expit(y))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = expit(-(x - loc) / scale) (accurate in the upper tail)."""
    y, scale = _y("logistic.sf", x, loc, scale)
    return _c.nan_where(F.less_equal(scale, 0), special.expit(F.negative(y)))


def ppf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile loc + scale logit(x) of the probability x (JAX's argument name; -inf at
    0, inf at 1, nan outside [0, 1])."""
    x, loc, scale = _c.promoted("logistic.ppf", x=x, loc=loc, scale=scale)
    return _c.nan_where(F.less_equal(scale, 0), F.add(loc, F.multiply(scale, special.logit(x))))


def isf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The inverse survival function loc - scale logit(x)."""
    x, loc, scale = _c.promoted("logistic.isf", x=x, loc=loc, scale=scale)
    return _c.nan_where(F.less_equal(scale, 0),
                        F.subtract(loc, F.multiply(scale, special.logit(x))))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
