"""The chi-squared distribution (``nx.scipy.stats.chi2``), as ``jax.scipy.stats.chi2``: x with
``df`` (degrees of freedom > 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its
domain, logpdf -inf for x < loc.  The gamma distribution of shape df / 2 and scale 2 scale
(``gamma``'s formulas, so the same accuracy in the tails).  Broadcast, promoted float dtype;
differentiable in x, df, loc and scale (the distribution functions in df to first order)."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.scipy.stats import gamma as _gamma
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _as_gamma(name, x, df, loc, scale):
    x, df, loc, scale = _c.promoted(name, x=x, df=df, loc=loc, scale=scale)
    return x, F.multiply(df, 0.5), loc, F.multiply(scale, 2.0)


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """(df/2 - 1) log(y) - y/2 - (df/2) log 2 - gammaln(df/2) - log(scale), y = (x - loc) /
    scale >= 0 (at y = 0: inf for df < 2, -log(2 scale) for df = 2, -inf for df > 2); -inf
    for y < 0."""
    return _gamma.logpdf(*_as_gamma("chi2.logpdf", x, df, loc, scale))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, df, loc, scale))."""
    return F.exp(logpdf(x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X <= x) = gammainc(df / 2, y / 2), y = (x - loc) / scale (0 for y < 0)."""
    return _gamma.cdf(*_as_gamma("chi2.cdf", x, df, loc, scale))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X <= x), accurate in both tails (``gamma.logcdf``)."""
    return _gamma.logcdf(*_as_gamma("chi2.logcdf", x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = gammaincc(df / 2, y / 2) (no cancellation in the upper tail)."""
    return _gamma.sf(*_as_gamma("chi2.sf", x, df, loc, scale))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X > x), accurate in both tails (``gamma.logsf``)."""
    return _gamma.logsf(*_as_gamma("chi2.logsf", x, df, loc, scale))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
