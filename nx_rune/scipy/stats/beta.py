"""The beta distribution (``nx.scipy.stats.beta``), as ``jax.scipy.stats.beta``: x with shapes
``a``, ``b`` (> 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its domain, logpdf
-inf outside [loc, loc + scale].  Broadcast, promoted float dtype; differentiable in x, a, b,
loc and scale.  (``cdf`` needs the regularized incomplete beta function and its derivatives
in a and b: not provided.)"""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """(a - 1) log(y) + (b - 1) log(1 - y) - betaln(a, b) - log(scale), y = (x - loc) / scale
    in [0, 1]; -inf outside."""
    x, a, b, loc, scale = _c.args("beta.logpdf", x=x, a=a, b=b, loc=loc, scale=scale)
    y = F.divide(F.subtract(x, loc), scale)
    inside = F.logical_and(F.greater_equal(y, 0), F.less_equal(y, 1))
    ys = _c.safe(inside, y, 0.5)
    out = F.add(special.xlogy(F.subtract(a, 1.0), ys),
                special.xlog1py(F.subtract(b, 1.0), F.negative(ys)))
    out = F.subtract(out, F.add(special.betaln(a, b), F.log(scale)))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), y)
    bad = F.logical_or(F.logical_or(F.less_equal(a, 0), F.less_equal(b, 0)),
                       F.less_equal(scale, 0))
    return _c.nan_where(bad, out)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, a, b, loc, scale))."""
    return F.exp(logpdf(x, a, b, loc, scale))
