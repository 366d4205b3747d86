"""The Cauchy distribution (``nx.scipy.stats.cauchy``), as ``jax.scipy.stats.cauchy``: x with
``loc`` and ``scale`` (> 0; nan otherwise).  Broadcast, promoted float dtype; differentiable in
x, loc and scale."""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf"]


def _y(name, x, loc, scale):
    x, loc, scale = _c.args(name, x=x, loc=loc, scale=scale)
    return F.divide(F.subtract(x, loc), scale), scale


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-log(pi) - log(scale) - log1p(y**2), y = (x - loc) / scale."""
    y, scale = _y("cauchy.logpdf", x, loc, scale)
    out = F.negative(F.add(F.add(F.log(scale), _c.LOG_PI), F.log1p(F.multiply(y, y))))
    return _c.nan_where(F.less_equal(scale, 0), out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """1/2 + arctan(y) / pi (SciPy's formula)."""
    y, scale = _y("cauchy.cdf", x, loc, scale)
    finite = F.isfinite(y)
    out = F.add(F.multiply(F.arctan(F.where(finite, y, 0.0)), 1.0 / math.pi), 0.5)
    out = F.where(finite, out, F.where(F.greater(y, 0), 1.0, F.where(F.less(y, 0), 0.0, y)))
    return _c.nan_where(F.less_equal(scale, 0), out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
