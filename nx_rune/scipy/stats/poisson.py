"""The Poisson distribution (``nx.scipy.stats.poisson``), as ``jax.scipy.stats.poisson``: k
(a non-negative integer after subtracting ``loc``) with mean ``mu`` >= 0 (nan otherwise).
logpmf is -inf for any other k.  Broadcast, promoted float dtype; differentiable in mu."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


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


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
