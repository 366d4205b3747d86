"""The negative binomial distribution (``nx.scipy.stats.nbinom``), as
``jax.scipy.stats.nbinom``: k failures (an integer >= 0 after subtracting ``loc``) before the
``n``-th success (n > 0, not necessarily an integer, as SciPy's), success probability ``p`` in
(0, 1] (nan for n or p outside).  logpmf is -inf for any other k.  Broadcast, promoted float
dtype; differentiable in n and p."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """gammaln(n + k) - gammaln(k + 1) - gammaln(n) + n log(p) + k log1p(-p) (0 log 0 = 0)
    for integer k - loc >= 0 (nan at k = inf, as SciPy's), -inf elsewhere."""
    k, n, p, loc = _c.promoted("nbinom.logpmf", k=k, n=n, p=p, loc=loc)
    bad = F.logical_not(F.logical_and(F.greater(n, 0),
                                      F.logical_and(F.greater(p, 0), F.less_equal(p, 1))))
    ns, ps = _c.safe(bad, 1.0, n), _c.safe(bad, 0.5, p)
    j = F.subtract(k, loc)
    # k = inf counts as inside, where SciPy's formula gives inf - inf = nan
    top = F.equal(j, float("inf"))
    inside = F.logical_and(F.greater_equal(j, 0), F.logical_or(_c.is_integer(j), top))
    js = _c.safe(F.logical_and(inside, F.logical_not(top)), j, 0.0)
    coeff = F.subtract(special.gammaln(F.add(ns, js)),
                       F.add(special.gammaln(F.add(js, 1.0)), special.gammaln(ns)))
    out = F.add(coeff, F.add(F.multiply(ns, F.log(ps)), special.xlog1py(js, F.negative(ps))))
    out = _c.outside(F.logical_not(inside), F.where(top, float("nan"), out), -float("inf"), j)
    return _c.nan_where(F.logical_or(bad, F.logical_or(F.isnan(n), F.isnan(p))), out)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """exp(logpmf(k, n, p, loc))."""
    return F.exp(logpmf(k, n, p, loc))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
