"""The binomial distribution (``nx.scipy.stats.binom``), as ``jax.scipy.stats.binom``: k (an
integer in [0, n] after subtracting ``loc``) successes of ``n`` trials (a non-negative integer;
nan otherwise) with probability ``p`` in [0, 1] (nan otherwise).  logpmf is -inf for any other
k.  Broadcast, promoted float dtype; differentiable in p."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log C(n, k) + k log(p) + (n - k) log(1 - p) (0 log 0 = 0) for integer k - loc in [0, n],
    -inf elsewhere; C(n, k) from gammaln."""
    k, n, p, loc = _c.promoted("binom.logpmf", k=k, n=n, p=p, loc=loc)
    j = F.subtract(k, loc)
    inside = F.logical_and(F.logical_and(F.greater_equal(j, 0), F.less_equal(j, n)),
                           _c.is_integer(j))
    js = _c.safe(inside, j, 0.0)
    rest = F.subtract(n, js)
    comb = F.subtract(special.gammaln(F.add(n, 1.0)),
                      F.add(special.gammaln(F.add(js, 1.0)), special.gammaln(F.add(rest, 1.0))))
    out = F.add(comb, F.add(special.xlogy(js, p), special.xlog1py(rest, F.negative(p))))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), j)
    bad = F.logical_or(F.logical_or(F.less(p, 0), F.greater(p, 1)),
                       F.logical_or(F.less(n, 0), F.logical_not(_c.is_integer(n))))
    return _c.nan_where(bad, out)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """exp(logpmf(k, n, p, loc))."""
    return F.exp(logpmf(k, n, p, loc))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
