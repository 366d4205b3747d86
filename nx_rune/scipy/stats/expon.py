"""The exponential distribution (``nx.scipy.stats.expon``), as ``jax.scipy.stats.expon``: x with
``loc`` and ``scale`` (> 0; nan otherwise).  Broadcast, promoted float dtype; differentiable in
x, loc and scale."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf"]


def _y(name, x, loc, scale):
    x, loc, scale = _c.promoted(name, x=x, loc=loc, scale=scale)
    y = F.divide(F.subtract(x, loc), scale)
    inside = F.greater_equal(y, 0)
    return y, _c.safe(inside, y, 0.0), inside, scale


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-y - log(scale) for y = (x - loc) / scale >= 0, -inf below."""
    y, ys, inside, scale = _y("expon.logpdf", x, loc, scale)
    out = _c.outside(F.logical_not(inside), F.negative(F.add(ys, F.log(scale))), -float("inf"), y)
    return _c.nan_where(F.less_equal(scale, 0), out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """1 - exp(-y) (as -expm1(-y), accurate near 0) for y >= 0, 0 below."""
    y, ys, inside, scale = _y("expon.cdf", x, loc, scale)
    out = _c.outside(F.logical_not(inside), F.negative(F.expm1(F.negative(ys))), 0.0, y)
    return _c.nan_where(F.less_equal(scale, 0), out)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = exp(-y) for y >= 0, 1 below."""
    return F.exp(_logsf("expon.sf", x, loc, scale))


def _logsf(name, x, loc, scale):
    y, ys, inside, scale = _y(name, x, loc, scale)
    out = _c.outside(F.logical_not(inside), F.negative(ys), 0.0, y)
    return _c.nan_where(F.less_equal(scale, 0), out)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X > x) = -y for y >= 0, 0 below."""
    return _logsf("expon.logsf", x, loc, scale)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X <= x) = log(1 - exp(-y)) without cancellation (log1mexp) for y > 0, -inf at
    y = 0 and below."""
    y, ys, inside, scale = _y("expon.logcdf", x, loc, scale)
    pos = F.greater(ys, 0)
    out = F.where(pos, _c.log1mexp(F.negative(_c.safe(pos, ys, 1.0))), -float("inf"))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), y)
    return _c.nan_where(F.less_equal(scale, 0), out)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile loc - scale log1p(-q) (loc at 0, inf at 1, nan outside [0, 1])."""
    q, loc, scale = _c.promoted("expon.ppf", q=q, loc=loc, scale=scale)
    out = F.subtract(loc, F.multiply(scale, F.log1p(F.negative(q))))
    bad = F.logical_or(F.less_equal(scale, 0), F.logical_or(F.less(q, 0), F.greater(q, 1)))
    return _c.nan_where(bad, out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
