"""The gamma distribution (``nx.scipy.stats.gamma``), as ``jax.scipy.stats.gamma``: x with shape
``a`` (> 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its domain, logpdf -inf
for x < loc.  Broadcast, promoted float dtype; differentiable in x, a, loc and scale.
(``cdf`` needs the regularized incomplete gamma function and its derivative in a: not
provided.)"""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """(a - 1) log(y) - y - gammaln(a) - log(scale), y = (x - loc) / scale >= 0 (at y = 0:
    inf for a < 1, -log(scale) for a = 1, -inf for a > 1); -inf for y < 0."""
    x, a, loc, scale = _c.args("gamma.logpdf", x=x, a=a, loc=loc, scale=scale)
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
