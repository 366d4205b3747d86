"""The beta distribution (``nx.scipy.stats.beta``), as ``jax.scipy.stats.beta``: x with shapes
``a``, ``b`` (> 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its domain, logpdf
-inf outside [loc, loc + scale].  Broadcast, promoted float dtype; differentiable in x, a, b,
loc and scale.  ``cdf`` / ``sf`` (and their logs) are the regularized incomplete beta function
(``special.betainc``), differentiable in a and b to first order."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """(a - 1) log(y) + (b - 1) log(1 - y) - betaln(a, b) - log(scale), y = (x - loc) / scale
    in [0, 1]; -inf outside."""
    x, a, b, loc, scale = _c.promoted("beta.logpdf", x=x, a=a, b=b, loc=loc, scale=scale)
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


# -- the distribution function -------------------------------------------------------------------

def _cdf(name, x, a, b, loc, scale, upper):
    """I_y(a, b) (``upper``: I_{1-y}(b, a) = 1 - I_y(a, b) without the cancellation) at
    y = (x - loc) / scale clipped to the support; nan for a, b or scale <= 0.  The formula
    sees safe substitutes outside, so derivatives stay finite (0 outside the support)."""
    x, a, b, loc, scale = _c.promoted(name, x=x, a=a, b=b, loc=loc, scale=scale)
    bad = F.logical_or(F.logical_or(F.less_equal(a, 0), F.less_equal(b, 0)),
                       F.less_equal(scale, 0))
    y = F.divide(F.subtract(x, loc), _c.safe(bad, 1.0, scale))
    inside = F.logical_and(F.greater_equal(y, 0), F.less_equal(y, 1))
    ys = _c.safe(inside, y, 0.5)
    sa, sb = _c.safe(bad, 1.0, a), _c.safe(bad, 1.0, b)
    if upper:
        out = special.betainc(sb, sa, F.subtract(1.0, ys))
        below, above = 1.0, 0.0
    else:
        out = special.betainc(sa, sb, ys)
        below, above = 0.0, 1.0
    out = F.where(F.less(y, 0), below, F.where(F.greater(y, 1), above, out))
    return _c.nan_where(bad, F.where(F.isnan(y), float("nan"), out))


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    """P(X <= x) = betainc(a, b, y), y = (x - loc) / scale (0 below the support, 1 above);
    nan for a, b or scale <= 0.  Broadcast shape, promoted float dtype; differentiable in x,
    a, b, loc, scale (in a and b to first order)."""
    return _cdf("beta.cdf", x, a, b, loc, scale, False)


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
       scale: ArrayLike = 1) -> Array:
    """P(X > x) = betainc(b, a, 1 - y) (1 below the support, 0 above)."""
    return _cdf("beta.sf", x, a, b, loc, scale, True)


def _log_tail(near, far):
    """log(near) where near <= 1/2, else log1p(-far) (no cancellation as near -> 1); each
    branch sees a safe value where it is not taken (finite derivatives)."""
    small = F.less_equal(near, 0.5)
    return F.where(small, F.log(_c.safe(small, near, 0.5)),
                   F.log1p(F.negative(_c.safe(small, 0.5, far))))


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """log(cdf(...)): log(cdf) in the lower half, log1p(-sf) in the upper (SciPy's values
    near cdf = 1)."""
    return _log_tail(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
          scale: ArrayLike = 1) -> Array:
    """log(sf(...)): log(sf) in the upper half, log1p(-cdf) in the lower."""
    return _log_tail(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
