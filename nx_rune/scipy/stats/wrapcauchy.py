"""The wrapped Cauchy distribution (``nx.scipy.stats.wrapcauchy``), as
``jax.scipy.stats.wrapcauchy``: an angle x in [0, 2 pi] (logpdf -inf outside, as SciPy's) with
shape ``c`` in (0, 1) (nan otherwise).  Broadcast, promoted float dtype; differentiable in x
and c."""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2.0 * math.pi)


def logpdf(x: ArrayLike, c: ArrayLike) -> Array:
    """log(1 - c**2) - log(2 pi) - log(1 + c**2 - 2 c cos(x)) on [0, 2 pi], the last as
    (1 - c)**2 + 4 c sin(x / 2)**2 (no cancellation for c near 1 and x near 0)."""
    x, c = _c.promoted("wrapcauchy.logpdf", x=x, c=c)
    bad = F.logical_not(F.logical_and(F.greater(c, 0), F.less(c, 1)))
    cs = _c.safe(bad, 0.5, c)
    inside = F.logical_and(F.greater_equal(x, 0), F.less_equal(x, 2.0 * math.pi))
    s = F.sin(F.multiply(_c.safe(inside, x, 1.0), 0.5))
    one_m = F.subtract(1.0, cs)
    den = F.add(F.multiply(one_m, one_m), F.multiply(F.multiply(cs, 4.0), F.multiply(s, s)))
    out = F.subtract(F.subtract(F.log1p(F.negative(F.multiply(cs, cs))), _LOG_2PI), F.log(den))
    out = _c.outside(F.logical_not(inside), out, -float("inf"), x)
    return _c.nan_where(bad, out)


def pdf(x: ArrayLike, c: ArrayLike) -> Array:
    """exp(logpdf(x, c))."""
    return F.exp(logpdf(x, c))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
