"""The left-skewed Gumbel distribution (``nx.scipy.stats.gumbel_l``), as
``jax.scipy.stats.gumbel_l``: x with ``loc`` and ``scale`` (> 0; nan otherwise), the mirror
image of ``gumbel_r``: sf exp(-exp(z)), z = (x - loc) / scale.  Broadcast, promoted float
dtype; differentiable in x, loc and scale."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(name, x, loc, scale):
    x, loc, scale = _c.promoted(name, x=x, loc=loc, scale=scale)
    bad = F.less_equal(scale, 0)
    ss = _c.safe(bad, 1.0, scale)
    return F.divide(F.subtract(x, loc), ss), ss, bad


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """z - exp(z) - log(scale)."""
    z, scale, bad = _z("gumbel_l.logpdf", x, loc, scale)
    out = F.subtract(F.subtract(z, F.exp(z)), F.log(scale))
    return _c.nan_where(bad, out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def _logsf(name, x, loc, scale):
    z, _, bad = _z(name, x, loc, scale)
    return _c.nan_where(bad, F.negative(F.exp(z)))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X > x) = -exp(z)."""
    return _logsf("gumbel_l.logsf", x, loc, scale)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = exp(-exp(z))."""
    return F.exp(_logsf("gumbel_l.sf", x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X <= x) = log(1 - exp(-exp(z))), without cancellation in either tail."""
    z, _, bad = _z("gumbel_l.logcdf", x, loc, scale)
    u = F.negative(F.exp(z))
    zero = F.equal(u, 0)
    out = F.where(zero, -float("inf"), _c.log1mexp(_c.safe(zero, -1.0, u)))
    return _c.nan_where(bad, out)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X <= x) = -expm1(-exp(z)) (accurate in the lower tail)."""
    z, _, bad = _z("gumbel_l.cdf", x, loc, scale)
    return _c.nan_where(bad, F.negative(F.expm1(F.negative(F.exp(z)))))


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile loc + scale log(-log1p(-p)) (-inf at 0, inf at 1, nan outside [0, 1])."""
    p, loc, scale = _c.promoted("gumbel_l.ppf", p=p, loc=loc, scale=scale)
    bad = F.logical_or(F.less_equal(scale, 0), F.logical_or(F.less(p, 0), F.greater(p, 1)))
    out = F.add(loc, F.multiply(scale, F.log(F.negative(F.log1p(F.negative(p))))))
    return _c.nan_where(bad, out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
