"""The Bernoulli distribution (``nx.scipy.stats.bernoulli``), as ``jax.scipy.stats.bernoulli``:
k (0 or 1 after subtracting ``loc``) with success probability ``p`` in [0, 1] (nan otherwise).
logpmf is -inf for any other k (non-integers too, as SciPy).  Broadcast, promoted float dtype;
differentiable in p."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log(p) at k - loc == 1, log(1 - p) at k - loc == 0, -inf elsewhere."""
    k, p, loc = _c.promoted("bernoulli.logpmf", k=k, p=p, loc=loc)
    j = F.subtract(k, loc)
    inside = F.logical_or(F.equal(j, 0), F.equal(j, 1))
    js = _c.safe(inside, j, 0.0)
    out = F.add(special.xlogy(js, p), special.xlog1py(F.subtract(1.0, js), F.negative(p)))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), j)
    return _c.nan_where(F.logical_or(F.less(p, 0), F.greater(p, 1)), out)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """exp(logpmf(k, p, loc))."""
    return F.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike) -> Array:
    """P(K <= k): 0 for k < 0, 1 - p for 0 <= k < 1, 1 for k >= 1 (nan for p outside [0, 1])."""
    k, p = _c.promoted("bernoulli.cdf", k=k, p=p)
    out = F.where(F.less(k, 0), 0.0, F.where(F.less(k, 1), F.subtract(1.0, p), 1.0))
    bad = F.logical_or(F.logical_or(F.less(p, 0), F.greater(p, 1)), F.isnan(p))
    return _c.nan_where(F.logical_or(bad, F.isnan(k)), out)


def ppf(q: ArrayLike, p: ArrayLike) -> Array:
    """The smallest k with P(K <= k) >= q: -1 at q = 0 and 1 at q = 1 (SciPy's ends of the
    support), 0 for q <= 1 - p, 1 above (nan for q or p outside [0, 1])."""
    q, p = _c.promoted("bernoulli.ppf", q=q, p=p)
    out = F.where(F.equal(q, 0), -1.0,
                  F.where(F.logical_and(F.less_equal(q, F.subtract(1.0, p)), F.less(q, 1)),
                          0.0, 1.0))
    bad = F.logical_or(F.logical_or(F.less(p, 0), F.greater(p, 1)),
                       F.logical_or(F.less(q, 0), F.greater(q, 1)))
    return _c.nan_where(F.logical_or(bad, F.logical_or(F.isnan(q), F.isnan(p))), out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
