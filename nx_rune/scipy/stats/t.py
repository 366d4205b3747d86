"""Student's t distribution (``nx.scipy.stats.t``), as ``jax.scipy.stats.t``: x with ``df``
(degrees of freedom > 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its domain;
df = inf is the normal distribution (as SciPy).  Broadcast, promoted float dtype;
differentiable in x, df, loc and scale."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """gammaln((df + 1) / 2) - gammaln(df / 2) - log(df pi) / 2 - log(scale)
    - (df + 1) / 2 * log1p(z**2 / df), z = (x - loc) / scale."""
    x, df, loc, scale = _c.args("t.logpdf", x=x, df=df, loc=loc, scale=scale)
    z = F.divide(F.subtract(x, loc), scale)
    finite = F.isfinite(df)
    nu = _c.safe(finite, df, 1.0)
    half = F.multiply(nu, 0.5)
    out = F.subtract(F.subtract(special.gammaln(F.add(half, 0.5)), special.gammaln(half)),
                     F.multiply(F.add(F.log(nu), _c.LOG_PI), 0.5))
    out = F.subtract(out, F.multiply(F.add(half, 0.5), F.log1p(F.divide(F.multiply(z, z), nu))))
    normal = F.subtract(F.multiply(F.multiply(z, z), -0.5), _c.LOG_SQRT_2PI)
    out = F.subtract(F.where(finite, out, normal), F.log(scale))
    return _c.nan_where(F.logical_or(F.less_equal(df, 0), F.less_equal(scale, 0)), out)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, df, loc, scale))."""
    return F.exp(logpdf(x, df, loc, scale))
