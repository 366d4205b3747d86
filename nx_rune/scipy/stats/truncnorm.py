"""The truncated normal distribution (``nx.scipy.stats.truncnorm``), as
``jax.scipy.stats.truncnorm``: x with the truncation points ``a`` < ``b`` in standard units
(the support is loc + scale [a, b]; a = -inf or b = inf allowed), ``loc`` and ``scale`` (> 0);
nan for a parameter outside its domain.  logpdf -inf, cdf 0 / 1 outside the support.

The distribution functions are SciPy's log-space forms: the normal mass of an interval is
computed in whichever tail it lies (log_ndtr differences, log1mexp) or, for an interval around
0, as log1p(-ndtr(a) - ndtr(-b)), so cdf, sf and their logs stay accurate far in either tail
(a = 30, x = 31: no 0 / 0).  Broadcast, promoted float dtype; differentiable in x, a, b, loc
and scale."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _log_diff_left(lo, hi):
    """log(ndtr(hi) - ndtr(lo)) for lo <= hi <= 0: log_ndtr(hi) + log1mexp(log_ndtr(lo) -
    log_ndtr(hi)), -inf for lo = hi."""
    lhi = special.log_ndtr(hi)
    u = F.subtract(special.log_ndtr(lo), lhi)
    empty = F.greater_equal(u, 0)
    return F.where(empty, -float("inf"), F.add(lhi, _c.log1mexp(_c.safe(empty, -1.0, u))))


def _one_case(lo, hi):
    """"left" (hi <= 0) or "right" (lo > 0) when that case holds at every element and the
    values are known (not traced by jit, not batched by vmap), else None: the mass is then that
    case's formula alone (the same values) instead of all three computed and selected."""
    lo_t, hi_t = lo._concrete_tensor(), hi._concrete_tensor()
    if lo_t is None or hi_t is None:
        return None
    if (hi_t._np() <= 0).all():
        return "left"
    if (lo_t._np() > 0).all():
        return "right"
    return None


def _log_mass(lo, hi):
    """log(ndtr(hi) - ndtr(lo)), lo <= hi, SciPy's _log_gauss_mass: the left tail's form for
    hi <= 0, its mirror image for lo > 0, log1p(-ndtr(lo) - ndtr(-hi)) for an interval
    around 0.  Each case sees safe arguments where another is taken (finite derivatives)."""
    case = _one_case(lo, hi)
    if case == "left":   # (the value the selects below give, without the other two cases)
        return _log_diff_left(lo, hi)
    if case == "right":
        return _log_diff_left(F.negative(hi), F.negative(lo))
    left = F.less_equal(hi, 0)
    right = F.greater(lo, 0)
    central = F.logical_not(F.logical_or(left, right))
    out_left = _log_diff_left(_c.safe(left, lo, -2.0), _c.safe(left, hi, -1.0))
    out_right = _log_diff_left(F.negative(_c.safe(right, hi, 2.0)),
                               F.negative(_c.safe(right, lo, 1.0)))
    out_central = F.log1p(F.negative(F.add(special.ndtr(_c.safe(central, lo, -1.0)),
                                           special.ndtr(F.negative(_c.safe(central, hi, 1.0))))))
    return F.where(left, out_left, F.where(right, out_right, out_central))


def _standard(name, x, a, b, loc, scale):
    """(z, a point inside [a, b] for the branches not taken, a, b and scale made safe,
    inside, the nan mask)."""
    # not broadcast: the parameters' terms (the mass of [a, b], the safe points) are computed
    # at their own shape, usually a scalar's
    x, a, b, loc, scale = _c.promoted(name, x=x, a=a, b=b, loc=loc, scale=scale)
    bad = F.logical_not(F.logical_and(F.less(a, b), F.greater(scale, 0)))
    a, b, scale = _c.safe(bad, -1.0, a), _c.safe(bad, 1.0, b), _c.safe(bad, 1.0, scale)
    z = F.divide(F.subtract(x, loc), scale)
    inside = F.logical_and(F.greater_equal(z, a), F.less_equal(z, b))
    # a point inside the support for the branch not taken: the midpoint, or one unit in
    # from the finite end of a half-infinite interval (0 for the whole line)
    fa, fb = F.isfinite(a), F.isfinite(b)
    mid = F.where(F.logical_and(fa, fb), F.multiply(F.add(_c.safe(fa, a, 0.0),
                                                          _c.safe(fb, b, 0.0)), 0.5),
                  F.where(fa, F.add(_c.safe(fa, a, 0.0), 1.0),
                          F.where(fb, F.subtract(_c.safe(fb, b, 0.0), 1.0), 0.0)))
    return z, mid, a, b, scale, inside, bad


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """-z**2 / 2 - log(sqrt(2 pi)) - log(ndtr(b) - ndtr(a)) - log(scale) for z = (x - loc) /
    scale in [a, b], -inf outside."""
    z, mid, a, b, scale, inside, bad = _standard("truncnorm.logpdf", x, a, b, loc, scale)
    # the square only needs a safe point for an infinite z outside [a, b] (at a finite one the
    # result is replaced by -inf and the cotangent is 0): a mask that is almost always true,
    # where "inside" alone is as random as the points, which makes the select several times
    # as slow
    zs = _c.safe(F.logical_or(F.isfinite(z), inside), z, mid)
    out = F.subtract(F.multiply(F.multiply(zs, zs), -0.5),
                     F.add(F.add(_log_mass(a, b), _c.LOG_SQRT_2PI), F.log(scale)))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), z)
    return _c.nan_where(bad, out)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, a, b, loc, scale))."""
    return F.exp(logpdf(x, a, b, loc, scale))


def _log_tails(name, x, a, b, loc, scale):
    """(log P(X <= x), log P(X > x)): the masses of [a, z] and [z, b] over that of [a, b],
    the larger one (above exp(-0.1)) as log1p(-exp(the other)) (SciPy's switch)."""
    z, mid, a, b, _, inside, bad = _standard(name, x, a, b, loc, scale)
    zs = _c.safe(inside, z, mid)
    # the ends themselves (and z = +-inf on an infinite end) take the outside values exactly
    below = F.less_equal(z, a)
    inside = F.logical_and(F.logical_not(below), F.less(z, b))
    total = _log_mass(a, b)
    raw_cdf = F.subtract(_log_mass(a, zs), total)
    raw_sf = F.subtract(_log_mass(zs, b), total)
    big_cdf, big_sf = F.greater(raw_cdf, -0.1), F.greater(raw_sf, -0.1)
    # log1p(-exp(u)) for the small side u: u = -inf (at an end of the support) gives 0
    lcdf = F.where(big_cdf, F.log1p(F.negative(F.exp(_c.safe(big_cdf, raw_sf, -1.0)))),
                   raw_cdf)
    lsf = F.where(big_sf, F.log1p(F.negative(F.exp(_c.safe(big_sf, raw_cdf, -1.0)))), raw_sf)
    lcdf = F.where(inside, lcdf, F.where(below, -float("inf"), 0.0))
    lsf = F.where(inside, lsf, F.where(below, 0.0, -float("inf")))
    nan = F.logical_or(bad, F.isnan(z))
    return _c.nan_where(nan, lcdf), _c.nan_where(nan, lsf)


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """log P(X <= x), accurate in both tails (see the module docstring); -inf below the
    support, 0 above."""
    return _log_tails("truncnorm.logcdf", x, a, b, loc, scale)[0]


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
          scale: ArrayLike = 1) -> Array:
    """log P(X > x), accurate in both tails; 0 below the support, -inf above."""
    return _log_tails("truncnorm.logsf", x, a, b, loc, scale)[1]


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    """P(X <= x) = exp(logcdf(...))."""
    return F.exp(_log_tails("truncnorm.cdf", x, a, b, loc, scale)[0])


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
       scale: ArrayLike = 1) -> Array:
    """P(X > x) = exp(logsf(...))."""
    return F.exp(_log_tails("truncnorm.sf", x, a, b, loc, scale)[1])


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
