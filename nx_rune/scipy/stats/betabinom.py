"""The beta-binomial distribution (``nx.scipy.stats.betabinom``), as
``jax.scipy.stats.betabinom``: k successes (an integer in [0, n] after subtracting ``loc``) of
``n`` trials (a non-negative integer) whose probability is Beta(``a``, ``b``) distributed
(a, b > 0); nan for a parameter outside its domain, logpmf -inf for any other k.  Broadcast,
promoted float dtype; differentiable in a and b."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Array:
    """-log(n + 1) - betaln(n - k + 1, k + 1) + betaln(k + a, n - k + b) - betaln(a, b)
    (SciPy's form) for integer k - loc in [0, n], -inf elsewhere."""
    k, n, a, b, loc = _c.promoted("betabinom.logpmf", k=k, n=n, a=a, b=b, loc=loc)
    good = F.logical_and(F.logical_and(F.greater_equal(n, 0), _c.is_integer(n)),
                         F.logical_and(F.greater(a, 0), F.greater(b, 0)))
    bad = F.logical_not(good)
    ns, as_, bs = _c.safe(bad, 1.0, n), _c.safe(bad, 1.0, a), _c.safe(bad, 1.0, b)
    j = F.subtract(k, loc)
    inside = F.logical_and(F.logical_and(F.greater_equal(j, 0), F.less_equal(j, ns)),
                           _c.is_integer(j))
    js = _c.safe(inside, j, 0.0)
    rest = F.subtract(ns, js)
    comb = F.negative(F.add(F.log1p(ns), special.betaln(F.add(rest, 1.0), F.add(js, 1.0))))
    out = F.add(comb, F.subtract(special.betaln(F.add(js, as_), F.add(rest, bs)),
                                 special.betaln(as_, bs)))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), j)
    return _c.nan_where(bad, out)


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Array:
    """exp(logpmf(k, n, a, b, loc))."""
    return F.exp(logpmf(k, n, a, b, loc))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
