"""The exponential distribution (``nx.scipy.stats.expon``), as ``jax.scipy.stats.expon``: x with
``loc`` and ``scale`` (> 0; nan otherwise).  Broadcast, promoted float dtype; differentiable in
x, loc and scale."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf"]


def _y(name, x, loc, scale):
    x, loc, scale = _c.args(name, x=x, loc=loc, scale=scale)
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


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
