"""The generalized normal distribution (``nx.scipy.stats.gennorm``), as
``jax.scipy.stats.gennorm``: x with shape ``beta`` (> 0; nan otherwise), density
beta / (2 Gamma(1 / beta)) exp(-|x|**beta) (beta = 1 Laplace, beta = 2 normal with variance
1/2).  Broadcast, promoted float dtype; differentiable in x (away from 0 for beta <= 1, where
the density has a cusp) and in beta (``cdf`` in beta to first order: ``gammaincc``'s
derivative in its parameter)."""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf"]


def _power(x, beta):
    """|x|**beta with 0 at x = 0 and finite derivatives there (the branch sees |x| = 1)."""
    zero = F.equal(x, 0)
    ax = _c.safe(zero, 1.0, F.abs(x))
    return F.where(zero, 0.0, F.power(ax, beta))


def logpdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """log(beta) - log 2 - gammaln(1 / beta) - |x|**beta."""
    x, beta = _c.promoted("gennorm.logpdf", x=x, beta=beta)
    bad = F.less_equal(beta, 0)
    b = _c.safe(bad, 1.0, beta)
    out = F.subtract(F.subtract(F.log(b), F.add(special.gammaln(F.reciprocal(b)), math.log(2.0))),
                     _power(x, b))
    return _c.nan_where(F.logical_or(bad, F.isnan(beta)), out)


def pdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """exp(logpdf(x, beta))."""
    return F.exp(logpdf(x, beta))


def cdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """1/2 + sign(x) (1/2 - gammaincc(1 / beta, |x|**beta) / 2) (SciPy's form: the lower tail
    as gammaincc / 2, no cancellation)."""
    x, beta = _c.promoted("gennorm.cdf", x=x, beta=beta)
    bad = F.less_equal(beta, 0)
    b = _c.safe(bad, 1.0, beta)
    finite = F.isfinite(x)
    p = _power(_c.safe(finite, x, 1.0), b)
    # gammaincc(1/beta, 0) = 1 at x = 0: the formula's 1/2 there (a safe point for the
    # derivative is p > 0)
    zero = F.equal(x, 0)
    q = special.gammaincc(F.reciprocal(b), _c.safe(zero, 1.0, p))
    half = F.multiply(q, 0.5)
    out = F.where(F.greater(x, 0), F.subtract(1.0, half), half)
    out = F.where(zero, 0.5, out)
    out = F.where(finite, out, F.where(F.greater(x, 0), 1.0, 0.0))
    out = F.where(F.isnan(x), float("nan"), out)
    return _c.nan_where(F.logical_or(bad, F.isnan(beta)), out)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
