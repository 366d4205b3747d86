"""The uniform distribution on [loc, loc + scale] (``nx.scipy.stats.uniform``), as
``jax.scipy.stats.uniform``: ``scale`` > 0 (nan otherwise).  Broadcast, promoted float dtype;
differentiable in x, loc and scale (piecewise: logpdf is -log(scale) inside the support)."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-log(scale) for loc <= x <= loc + scale, -inf outside."""
    x, loc, scale = _c.promoted("uniform.logpdf", x=x, loc=loc, scale=scale)
    inside = F.logical_and(F.greater_equal(x, loc), F.less_equal(x, F.add(loc, scale)))
    out = _c.outside(F.logical_not(inside), F.negative(F.log(scale)), -float("inf"), x)
    return _c.nan_where(F.less_equal(scale, 0), out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """(x - loc) / scale clipped to [0, 1]."""
    x, loc, scale = _c.promoted("uniform.cdf", x=x, loc=loc, scale=scale)
    y = F.divide(F.subtract(x, loc), scale)
    out = F.where(F.less(y, 0), 0.0, F.where(F.greater(y, 1), 1.0, y))
    return _c.nan_where(F.less_equal(scale, 0), out)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile loc + q scale (nan outside [0, 1])."""
    q, loc, scale = _c.promoted("uniform.ppf", q=q, loc=loc, scale=scale)
    bad = F.logical_or(F.less_equal(scale, 0), F.logical_or(F.less(q, 0), F.greater(q, 1)))
    return _c.nan_where(bad, F.add(loc, F.multiply(q, scale)))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
