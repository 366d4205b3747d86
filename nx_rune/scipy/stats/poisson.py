"""The Poisson distribution (``nx.scipy.stats.poisson``), as ``jax.scipy.stats.poisson``: k
(a non-negative integer after subtracting ``loc``) with mean ``mu`` >= 0 (nan otherwise).
logpmf is -inf for any other k.  Broadcast, promoted float dtype; differentiable in mu."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """k log(mu) - mu - gammaln(k + 1) for integer k - loc >= 0 (0 log 0 = 0), -inf elsewhere."""
    k, mu, loc = _c.args("poisson.logpmf", k=k, mu=mu, loc=loc)
    j = F.subtract(k, loc)
    # k = inf counts as inside, as SciPy's (the formula gives inf - inf = nan there, or -inf
    # for mu = 0)
    inside = F.logical_and(F.greater_equal(j, 0),
                           F.logical_or(_c.is_integer(j), F.equal(j, float("inf"))))
    js = _c.safe(inside, j, 0.0)
    out = F.subtract(F.subtract(special.xlogy(js, mu), mu), special.gammaln(F.add(js, 1.0)))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), j)
    return _c.nan_where(F.less(mu, 0), out)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """exp(logpmf(k, mu, loc))."""
    return F.exp(logpmf(k, mu, loc))


def _tails(name, k, mu, loc):
    """(P(K <= k), P(K > k)): Q(floor(k - loc) + 1, mu) and P(floor(k - loc) + 1, mu), the
    regularized incomplete gamma functions (SciPy's pdtr and pdtrc); 0 and 1 below the support,
    nan for mu < 0."""
    k, mu, loc = _c.args(name, k=k, mu=mu, loc=loc)
    j = F.subtract(k, loc)
    below = F.less(j, 0)
    a = F.add(F.floor(_c.safe(below, 0.0, j)), 1.0)
    lower = F.where(below, 0.0, special.gammaincc(a, mu))
    upper = F.where(below, 1.0, special.gammainc(a, mu))
    bad = F.less(mu, 0)
    lower, upper = _c.nan_where(bad, lower), _c.nan_where(bad, upper)
    # k = inf: the whole support below it (SciPy's 1 and 0)
    top = F.logical_and(F.equal(j, float("inf")), F.logical_not(bad))
    return F.where(top, 1.0, lower), F.where(top, 0.0, upper)


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """P(K <= k) = Q(floor(k - loc) + 1, mu) (the regularized upper incomplete gamma function;
    0 for k < loc); differentiable in mu: -pmf(floor(k - loc), mu)."""
    return _tails("poisson.cdf", k, mu, loc)[0]


def logcdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log P(K <= k)."""
    return F.log(_tails("poisson.logcdf", k, mu, loc)[0])


def sf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """P(K > k) = P(floor(k - loc) + 1, mu) (the regularized lower incomplete gamma function;
    1 for k < loc), without the cancellation of 1 - cdf."""
    return _tails("poisson.sf", k, mu, loc)[1]


def logsf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log P(K > k)."""
    return F.log(_tails("poisson.logsf", k, mu, loc)[1])


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
