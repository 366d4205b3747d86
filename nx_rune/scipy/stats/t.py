"""Student's t distribution (``nx.scipy.stats.t``), as ``jax.scipy.stats.t``: x with ``df``
(degrees of freedom > 0), ``loc`` and ``scale`` (> 0); nan for a parameter outside its domain;
df = inf is the normal distribution (as SciPy).  Broadcast, promoted float dtype;
differentiable in x, df, loc and scale (the distribution functions in df to first order
only: ``betainc``'s derivative in its parameters)."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


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
    x, df, loc, scale = _c.promoted("t.logpdf", x=x, df=df, loc=loc, scale=scale)
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


def _tails(name, x, df, loc, scale):
    """(P(X <= x), P(X > x), log P(X <= x), log P(X > x)) from one evaluation: the smaller
    tail 0.5 I_{df / (df + z^2)}(df / 2, 1/2) (Abramowitz & Stegun 26.7.1; SciPy's stdtr), the
    other 1 minus it; df = inf the normal distribution's."""
    x, df, loc, scale = _c.promoted(name, x=x, df=df, loc=loc, scale=scale)
    z = F.divide(F.subtract(x, loc), scale)
    finite = F.isfinite(df)
    nu = _c.safe(F.logical_and(finite, F.greater(df, 0)), df, 1.0)
    zero = F.equal(z, 0)
    # z = 0 exactly: I's derivative in its argument is infinite at 1, times the argument's
    # derivative 0 there; the linear term 0.5 + z pdf(0) gives the value and the derivatives
    # (the second, pdf'(0), is 0)
    zs = _c.safe(F.logical_not(zero), z, 1.0)
    half = F.multiply(nu, 0.5)
    z2 = F.multiply(zs, zs)
    # the tail beyond |z|, and the other side's probability: 1 minus it far out, but
    # 1/2 + I_{z^2 / (df + z^2)}(1/2, df / 2) / 2 where z^2 < df (the same value without the
    # error of the first form's parameter df / 2 when df is large: Boost's choice)
    small = F.multiply(special.betainc(half, 0.5, F.divide(nu, F.add(nu, z2))), 0.5)
    central = F.less(z2, nu)
    # (0.25 elsewhere: a point where I's derivative is finite, so the unused branch
    # contributes 0, not nan, to derivatives)
    y = _c.safe(central, F.divide(z2, F.add(nu, z2)), 0.25)
    iy = special.betainc(0.5, half, y)
    big = F.where(central, F.add(F.multiply(iy, 0.5), 0.5), F.subtract(1.0, small))
    # and the tail itself as (1 - I_y) / 2 where that loses at most three digits
    small = F.where(F.logical_and(central, F.less(iy, 0.999)),
                    F.multiply(F.subtract(1.0, iy), 0.5), small)
    log_big = F.where(central, F.log(big), F.log1p(F.negative(small)))
    pdf0 = F.exp(F.subtract(_log_gamma_ratio_half(half),
                            F.multiply(F.add(F.log(nu), _c.LOG_PI), 0.5)))
    at0 = F.add(F.multiply(z, pdf0), 0.5)
    pos = F.greater(zs, 0)
    lower = F.where(zero, at0, F.where(pos, big, small))
    upper = F.where(zero, F.subtract(1.0, at0), F.where(pos, small, big))
    log_lower = F.where(zero, F.log(at0), F.where(pos, log_big, F.log(small)))
    log_upper = F.where(zero, F.log1p(F.negative(at0)), F.where(pos, F.log(small), log_big))
    normal = (special.ndtr(z), special.ndtr(F.negative(z)), special.log_ndtr(z),
              special.log_ndtr(F.negative(z)))
    bad = F.logical_or(F.less_equal(df, 0), F.less_equal(scale, 0))
    return [_c.nan_where(bad, F.where(finite, o, n))
            for o, n in zip((lower, upper, log_lower, log_upper), normal)]


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X <= x): 1 - I/2 for z = (x - loc) / scale > 0 and I/2 otherwise, I the regularized
    incomplete beta function I_{df / (df + z^2)}(df / 2, 1/2) (SciPy's stdtr)."""
    return _tails("t.cdf", x, df, loc, scale)[0]


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """P(X > x) = cdf(-x) about loc, accurate far in the upper tail."""
    return _tails("t.sf", x, df, loc, scale)[1]


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X <= x), accurate in both tails (log1p of the small upper tail for z > 0)."""
    return _tails("t.logcdf", x, df, loc, scale)[2]


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log P(X > x), accurate in both tails."""
    return _tails("t.logsf", x, df, loc, scale)[3]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
