"""The Dirichlet distribution (``nx.scipy.stats.dirichlet``), as ``jax.scipy.stats.dirichlet``.

``alpha``: shape (k,), concentrations > 0 (nan otherwise).  ``x``: shape (k, ...) or
(k - 1, ...) (the last component is then 1 - the sum of the others), components along the first
axis as SciPy's.  logpdf is -inf off the simplex (a component < 0, or components that do not
sum to 1 within 1e-6 for float64, 1e-4 for float32; SciPy raises there).  Returns x's shape
without the first axis; the promoted float dtype; differentiable in x and alpha.
"""
from __future__ import annotations

from nx_rune import dtypes
from nx_rune import frontend as F
from nx_rune.scipy import special
from nx_rune.scipy._args import real_operand as _real_operand
from nx_rune.scipy._mvn_sampling import dirichlet_rvs as _dirichlet_rvs
from nx_rune.scipy.stats import _common as _c
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "rvs"]


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """sum_i (alpha_i - 1) log(x_i) - (sum_i gammaln(alpha_i) - gammaln(sum_i alpha_i)) on the
    simplex, -inf off it."""
    x = _real_operand(x, "x", "dirichlet.logpdf")
    alpha = _real_operand(alpha, "alpha", "dirichlet.logpdf")
    if alpha.ndim != 1:
        raise ValueError(f"alpha: expected a 1-d vector of concentrations, got shape "
                         f"{alpha.shape}")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(f"x: its first axis must hold {k} (or {k - 1}) components to match "
                         f"alpha's shape {alpha.shape}, got shape {x.shape}")
    dt = dtypes.result_type(x.dtype, alpha.dtype)
    x, alpha = F.astype(x, dt), F.astype(alpha, dt)
    if x.shape[0] == k - 1:
        x = F.concatenate([x, F.subtract(1.0, F.sum(x, 0, keepdims=True))], axis=0)
    tol = 1e-6 if dt == dtypes.float64 else 1e-4
    on = F.logical_and(F.all(F.greater_equal(x, 0), 0),
                       F.less(F.abs(F.subtract(F.sum(x, 0), 1.0)), tol))
    a = F.reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    xs = _c.safe(F.broadcast_to(on, x.shape[1:]), x, 1.0 / k)
    norm = F.subtract(F.sum(special.gammaln(alpha)), special.gammaln(F.sum(alpha)))
    out = F.subtract(F.sum(special.xlogy(F.subtract(a, 1.0), xs), 0), norm)
    out = _c.outside(F.logical_not(on), out, -float("inf"), F.sum(x, 0))
    return _c.nan_where(F.any(F.less_equal(alpha, 0)), out)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """exp(logpdf(x, alpha))."""
    return F.exp(logpdf(x, alpha))


def rvs(alpha: ArrayLike, size: int | tuple[int, ...] | None = 1,
        random_state: ArrayLike | None = None) -> Array:
    """Samples of Dirichlet(alpha), as ``scipy.stats.dirichlet.rvs``: shape ``size + (k,)``
    (size 1: (1, k)).  ``random_state`` is an nx random key (required: nx_rune has no global
    random state); the draws are ``nx.random.dirichlet(random_state, alpha, size)``'s.
    Differentiable in alpha."""
    return _dirichlet_rvs(alpha, size, random_state)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
