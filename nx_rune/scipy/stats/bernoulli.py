"""The Bernoulli distribution (``nx.scipy.stats.bernoulli``), as ``jax.scipy.stats.bernoulli``:
k (0 or 1 after subtracting ``loc``) with success probability ``p`` in [0, 1] (nan otherwise).
logpmf is -inf for any other k (non-integers too, as SciPy).  Broadcast, promoted float dtype;
differentiable in p."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log(p) at k - loc == 1, log(1 - p) at k - loc == 0, -inf elsewhere."""
    k, p, loc = _c.args("bernoulli.logpmf", k=k, p=p, loc=loc)
    j = F.subtract(k, loc)
    inside = F.logical_or(F.equal(j, 0), F.equal(j, 1))
    js = _c.safe(inside, j, 0.0)
    out = F.add(special.xlogy(js, p), special.xlog1py(F.subtract(1.0, js), F.negative(p)))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), j)
    return _c.nan_where(F.logical_or(F.less(p, 0), F.greater(p, 1)), out)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """exp(logpmf(k, p, loc))."""
    return F.exp(logpmf(k, p, loc))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
