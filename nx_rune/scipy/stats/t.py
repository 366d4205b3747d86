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


# Stirling's series: log Gamma(z) = (z - 1/2) log z - z + log(2 pi) / 2 + sum_k c_k / z**(2k-1)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)


def _log_gamma_ratio_half(a):
    """log(Gamma(a + 1/2) / Gamma(a)) for a > 0, to float64 rounding for every a: the
    difference of two gammalns for a < 20; for larger a, where that difference cancels (both
    terms grow like a log a), the difference of Stirling's series term by term,
    a log1p(1 / (2a)) - 1/2 + log(a) / 2 + sum_k c_k ((a + 1/2)**(1-2k) - a**(1-2k)), whose
    truncation error is below 1e-17 there."""
    big = F.greater_equal(a, 20.0)
    small_a = _c.safe(big, 1.0, a)
    direct = F.subtract(special.gammaln(F.add(small_a, 0.5)), special.gammaln(small_a))
    b = _c.safe(big, a, 20.0)
    out = F.add(F.subtract(F.multiply(b, F.log1p(F.divide(0.5, b))), 0.5),
                F.multiply(F.log(b), 0.5))
    inv_b, inv_h = F.reciprocal(b), F.reciprocal(F.add(b, 0.5))
    sq_b, sq_h = F.multiply(inv_b, inv_b), F.multiply(inv_h, inv_h)
    for c in _STIRLING:
        out = F.add(out, F.multiply(F.subtract(inv_h, inv_b), c))
        inv_b, inv_h = F.multiply(inv_b, sq_b), F.multiply(inv_h, sq_h)
    return F.where(big, out, direct)


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log(Gamma((df + 1) / 2) / Gamma(df / 2)) - log(df pi) / 2 - log(scale)
    - (df + 1) / 2 * log1p(z**2 / df), z = (x - loc) / scale; the ratio of gammas without
    cancellation for large df (as SciPy's, which uses poch)."""
    x, df, loc, scale = _c.args("t.logpdf", x=x, df=df, loc=loc, scale=scale)
    z = F.divide(F.subtract(x, loc), scale)
    finite = F.isfinite(df)
    nu = _c.safe(F.logical_and(finite, F.greater(df, 0)), df, 1.0)
    half = F.multiply(nu, 0.5)
    out = F.subtract(_log_gamma_ratio_half(half), F.multiply(F.add(F.log(nu), _c.LOG_PI), 0.5))
    out = F.subtract(out, F.multiply(F.add(half, 0.5), F.log1p(F.divide(F.multiply(z, z), nu))))
    normal = F.subtract(F.multiply(F.multiply(z, z), -0.5), _c.LOG_SQRT_2PI)
    out = F.subtract(F.where(finite, out, normal), F.log(scale))
    return _c.nan_where(F.logical_or(F.less_equal(df, 0), F.less_equal(scale, 0)), out)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, df, loc, scale))."""
    return F.exp(logpdf(x, df, loc, scale))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
