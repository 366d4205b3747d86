"""The geometric distribution (``nx.scipy.stats.geom``), as ``jax.scipy.stats.geom``: the number
k (an integer >= 1 after subtracting ``loc``) of trials up to the first success, with
probability ``p`` in (0, 1] (nan otherwise).  logpmf is -inf for any other k.  Broadcast,
promoted float dtype; differentiable in p."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """(k - 1) log(1 - p) + log(p) (0 log 0 = 0) for integer k - loc >= 1, -inf elsewhere."""
    k, p, loc = _c.promoted("geom.logpmf", k=k, p=p, loc=loc)
    j = F.subtract(k, loc)
    inside = F.logical_and(F.greater_equal(j, 1), _c.is_integer(j))
    js = _c.safe(inside, j, 1.0)
    out = F.add(special.xlog1py(F.subtract(js, 1.0), F.negative(p)), F.log(p))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), j)
    return _c.nan_where(F.logical_or(F.less_equal(p, 0), F.greater(p, 1)), out)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """exp(logpmf(k, p, loc))."""
    return F.exp(logpmf(k, p, loc))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
