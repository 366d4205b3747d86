"""The Laplace distribution (``nx.scipy.stats.laplace``), as ``jax.scipy.stats.laplace``: x with
``loc`` and ``scale`` (> 0; nan otherwise).  Broadcast, promoted float dtype; differentiable in
x, loc and scale (at x == loc, where |x - loc| has a kink, the derivative of logpdf is taken
from the side x > loc, as JAX's)."""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf"]


def _y(name, x, loc, scale):
    x, loc, scale = _c.promoted(name, x=x, loc=loc, scale=scale)
    return F.divide(F.subtract(x, loc), scale), scale


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-|y| - log(2 scale), y = (x - loc) / scale."""
    y, scale = _y("laplace.logpdf", x, loc, scale)
    out = F.negative(F.add(F.abs(y), F.add(F.log(scale), math.log(2.0))))
    return _c.nan_where(F.less_equal(scale, 0), out)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(logpdf(x, loc, scale))."""
    return F.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """exp(y) / 2 for y < 0, 1 - exp(-y) / 2 otherwise (smooth at 0)."""
    y, scale = _y("laplace.cdf", x, loc, scale)
    half = F.multiply(F.exp(F.negative(F.abs(y))), 0.5)
    out = F.where(F.less(y, 0), half, F.subtract(1.0, half))
    return _c.nan_where(F.less_equal(scale, 0), out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
