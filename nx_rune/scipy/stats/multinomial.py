"""The multinomial distribution (``nx.scipy.stats.multinomial``), as
``jax.scipy.stats.multinomial``: counts ``x`` (..., k) of ``n`` trials over k categories of
probabilities ``p`` (..., k); leading axes broadcast.  logpmf is -inf where x is not a vector of
non-negative integers summing to n; nan for n not a non-negative integer or a p outside [0, 1].
``p`` is used as given (JAX's convention; SciPy replaces its last entry by 1 - the sum of the
others when the entries do not sum to 1), so the derivative in each p_i is x_i / p_i.
Returns the broadcast leading shape, promoted float dtype; differentiable in p."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.frontend._core import promote as _promote
from nx_rune.scipy import special
from nx_rune.scipy._args import real_operand as _real_operand
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """gammaln(n + 1) + sum_i (x_i log(p_i) - gammaln(x_i + 1)) (0 log 0 = 0) where x holds
    non-negative integers summing to n, -inf elsewhere."""
    x = _real_operand(x, "x", "multinomial.logpmf")
    n = _real_operand(n, "n", "multinomial.logpmf")
    p = _real_operand(p, "p", "multinomial.logpmf")
    if x.ndim == 0:
        raise ValueError("x: expected a vector of counts (..., k), got a scalar")
    if p.ndim == 0 or p.shape[-1] != x.shape[-1]:
        raise ValueError(f"p: its last axis must hold x's {x.shape[-1]} categories, got shape "
                         f"{p.shape}")
    x, n, p = _promote(x, n, p)
    counts = F.logical_and(F.greater_equal(x, 0), _c.is_integer(x))
    total = F.sum(_c.safe(counts, x, 0.0), -1)
    inside = F.logical_and(F.all(counts, -1), F.equal(total, n))
    xs = _c.safe(F.expand_dims(inside, -1), x, 0.0)
    bad_p = F.any(F.logical_or(F.less(p, 0), F.greater(p, 1)), -1)
    bad_n = F.logical_or(F.less(n, 0), F.logical_not(_c.is_integer(n)))
    ns = _c.safe(F.logical_or(bad_n, F.logical_not(inside)), 1.0, n)
    terms = F.subtract(special.xlogy(xs, p), special.gammaln(F.add(xs, 1.0)))
    out = F.add(special.gammaln(F.add(ns, 1.0)), F.sum(terms, -1))
    out = F.where(F.logical_or(F.any(F.isnan(x), -1), F.isnan(n)), float("nan"),
                  F.where(inside, out, -float("inf")))
    return _c.nan_where(F.logical_or(bad_p, bad_n), out)


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """exp(logpmf(x, n, p))."""
    return F.exp(logpmf(x, n, p))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
