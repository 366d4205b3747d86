"""The Pareto distribution (``nx.scipy.stats.pareto``), as ``jax.scipy.stats.pareto``: x with
shape ``b`` (> 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its domain.  The
support is y = (x - loc) / scale >= 1 (logpdf -inf, cdf 0 below).  Broadcast, promoted float
dtype; differentiable in x, b, loc and scale."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _parts(name, x, b, loc, scale):
    """(y, log(y) on the support (0 off it: a safe value), inside, the parameters' nan mask,
    b and scale made safe)."""
    x, b, loc, scale = _c.promoted(name, x=x, b=b, loc=loc, scale=scale)
    bad = F.logical_or(F.less_equal(b, 0), F.less_equal(scale, 0))
    bs, ss = _c.safe(bad, 1.0, b), _c.safe(bad, 1.0, scale)
    y = F.divide(F.subtract(x, loc), ss)
    inside = F.greater_equal(y, 1.0)
    logy = F.log(_c.safe(inside, y, 2.0))
    return y, logy, inside, bad, bs, ss


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log(b) - (b + 1) log(y) - log(scale) for y = (x - loc) / scale >= 1, -inf below."""
    y, logy, inside, bad, b, scale = _parts("pareto.logpdf", x, b, loc, scale)
    out = F.subtract(F.subtract(F.log(b), F.multiply(F.add(b, 1.0), logy)), F.log(scale))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), y)
    return _c.nan_where(bad, out)


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, b, loc, scale))."""
    return F.exp(logpdf(x, b, loc, scale))


def _log_tails(name, x, b, loc, scale):
    """(log P(X <= x), log P(X > x)): log1mexp(-b log y) and -b log y on the support."""
    y, logy, inside, bad, b, _ = _parts(name, x, b, loc, scale)
    lsf = F.negative(F.multiply(b, logy))
    # y = 1 exactly: log cdf = log(0); a safe argument below, then -inf put back
    at1 = F.equal(y, 1.0)
    lcdf = F.where(at1, -float("inf"), _c.log1mexp(_c.safe(at1, -1.0, lsf)))
    outside = F.logical_not(inside)
    lcdf = _c.nan_where(bad, _c.outside(outside, lcdf, -float("inf"), y))
    lsf = _c.nan_where(bad, _c.outside(outside, lsf, 0.0, y))
    return lcdf, lsf


def cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X <= x) = 1 - y**-b (as -expm1(-b log y): accurate near y = 1), 0 below the support."""
    y, logy, inside, bad, b, _ = _parts("pareto.cdf", x, b, loc, scale)
    out = F.negative(F.expm1(F.negative(F.multiply(b, logy))))
    return _c.nan_where(bad, _c.outside(F.logical_not(inside), out, 0.0, y))


def logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X <= x) = log(1 - y**-b), without cancellation on either side."""
    return _log_tails("pareto.logcdf", x, b, loc, scale)[0]


def sf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = y**-b, 1 below the support."""
    return F.exp(_log_tails("pareto.sf", x, b, loc, scale)[1])


def logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X > x) = -b log(y), 0 below the support."""
    return _log_tails("pareto.logsf", x, b, loc, scale)[1]


def ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile loc + scale (1 - q)**(-1 / b) (loc + scale at q = 0, inf at 1, nan outside
    [0, 1])."""
    q, b, loc, scale = _c.promoted("pareto.ppf", q=q, b=b, loc=loc, scale=scale)
    bad = F.logical_or(F.less_equal(b, 0), F.less_equal(scale, 0))
    bad = F.logical_or(bad, F.logical_or(F.less(q, 0), F.greater(q, 1)))
    bs = _c.safe(bad, 1.0, b)
    out = F.add(loc, F.multiply(scale, F.exp(F.divide(F.negative(F.log1p(F.negative(q))), bs))))
    return _c.nan_where(bad, out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
