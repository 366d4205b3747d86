"""The gamma distribution (``nx.scipy.stats.gamma``), as ``jax.scipy.stats.gamma``: x with shape
``a`` (> 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its domain, logpdf -inf
for x < loc.  Broadcast, promoted float dtype; differentiable in x, a, loc and scale.
``cdf`` / ``sf`` (and their logs) are the regularized incomplete gamma functions
(``special.gammainc`` / ``gammaincc``), differentiable in a to first order."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """(a - 1) log(y) - y - gammaln(a) - log(scale), y = (x - loc) / scale >= 0 (at y = 0:
    inf for a < 1, -log(scale) for a = 1, -inf for a > 1); -inf for y < 0."""
    x, a, loc, scale = _c.promoted("gamma.logpdf", x=x, a=a, loc=loc, scale=scale)
    y = F.divide(F.subtract(x, loc), scale)
    inside = F.greater_equal(y, 0)
    ys = _c.safe(inside, y, 1.0)
    out = F.subtract(F.subtract(special.xlogy(F.subtract(a, 1.0), ys), ys),
                     F.add(special.gammaln(a), F.log(scale)))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), y)
    return _c.nan_where(F.logical_or(F.less_equal(a, 0), F.less_equal(scale, 0)), out)


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, a, loc, scale))."""
    return F.exp(logpdf(x, a, loc, scale))


# -- the distribution function -------------------------------------------------------------------

def _tail(fn, name, x, a, loc, scale, below, above):
    """fn(a, y) (gammainc or gammaincc) at y = (x - loc) / scale, ``below`` for y < 0 and
    ``above`` at y = inf, nan for a <= 0 or scale <= 0; the formula sees safe substitutes
    elsewhere, so derivatives stay finite (0 outside the support)."""
    x, a, loc, scale = _c.promoted(name, x=x, a=a, loc=loc, scale=scale)
    bad = F.logical_or(F.less_equal(a, 0), F.less_equal(scale, 0))
    y = F.divide(F.subtract(x, loc), _c.safe(bad, 1.0, scale))
    inside = F.logical_and(F.greater_equal(y, 0), F.less(y, float("inf")))
    out = fn(_c.safe(bad, 1.0, a), _c.safe(inside, y, 1.0))
    out = F.where(F.less(y, 0), below, F.where(F.equal(y, float("inf")), above, out))
    return _c.nan_where(bad, F.where(F.isnan(y), float("nan"), out))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X <= x) = gammainc(a, y), y = (x - loc) / scale (0 for y < 0); nan for a <= 0 or
    scale <= 0.  Broadcast shape, promoted float dtype; differentiable in x, a, loc, scale
    (in a to first order)."""
    return _tail(special.gammainc, "gamma.cdf", x, a, loc, scale, 0.0, 1.0)


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = gammaincc(a, y) (no cancellation in the upper tail), 1 for y < 0."""
    return _tail(special.gammaincc, "gamma.sf", x, a, loc, scale, 1.0, 0.0)


def _log_tail(near, far):
    """log(near) where near <= 1/2, else log1p(-far) (no cancellation as near -> 1); each
    branch sees a safe value where it is not taken (finite derivatives)."""
    small = F.less_equal(near, 0.5)
    return F.where(small, F.log(_c.safe(small, near, 0.5)),
                   F.log1p(F.negative(_c.safe(small, 0.5, far))))


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log(cdf(...)): log(cdf) in the lower half, log1p(-sf) in the upper (SciPy's values
    near cdf = 1)."""
    return _log_tail(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log(sf(...)): log(sf) in the upper half, log1p(-cdf) in the lower."""
    return _log_tail(sf(x, a, loc, scale), cdf(x, a, loc, scale))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
