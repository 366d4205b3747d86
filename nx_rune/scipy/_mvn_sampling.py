"""``multivariate_normal.entropy`` and ``rvs``, and ``dirichlet.rvs``: the parts of
``nx.scipy.stats.multivariate_normal`` and ``dirichlet`` beyond the densities.

SciPy's ``rvs`` draws from a global or given NumPy generator; nx_rune has no global random
state, so ``random_state`` is an nx random key (``nx.random.key(seed)`` or ``PRNGKey``), and a
key draws exactly what ``nx.random.multivariate_normal`` / ``nx.random.dirichlet`` draw for it
(JAX's convention: ``jax.random.multivariate_normal`` gives the same numbers for the same key).
"""
from __future__ import annotations

import math

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as F
from nx_rune.frontend import linalg as _la
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.frontend._core import promote as _promote
from nx_rune.typing import Array, ArrayLike

__all__ = ["mvn_entropy", "mvn_rvs", "dirichlet_rvs"]

_LOG_2PI_E = math.log(2.0 * math.pi) + 1.0


def _key(random_state, name):
    if random_state is None:
        raise TypeError(f"random_state: {name} needs an nx random key (nx.random.key(seed)); "
                        f"there is no global random state")
    return random_state


def _size(size, name):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (int(size),)
    try:
        size = tuple(int(s) for s in size)
    except TypeError:
        raise TypeError(f"size: {name} takes an int or a tuple of ints, got {size!r}") from None
    if any(s < 0 for s in size):
        raise ValueError(f"size: must be non-negative, got {size}")
    return size


def _mean_cov(name: str, mean: ArrayLike | None, cov: ArrayLike) -> tuple[Array, Array]:
    """mean (n,) and cov (n, n) in one float dtype, from SciPy's forms: mean None (zeros) or a
    scalar, cov a scalar (cov I), a vector (its diagonal) or a matrix."""
    cov = F.asarray(cov)
    if mean is None:
        n = 1 if cov.ndim == 0 else cov.shape[0]
        mean = F.zeros((n,), F.asarray(1.0).dtype)
    mean, cov = (_as_inexact(v) for v in _promote(mean, cov))
    if dtypes.is_complex(mean.dtype):
        raise TypeError(f"mean, cov: {name} takes real values, got {mean.dtype}")
    if mean.ndim > 1:
        raise ValueError(f"mean: expected a scalar or a vector, got shape {mean.shape}")
    n = mean.shape[0] if mean.ndim else (1 if cov.ndim == 0 else cov.shape[0])
    mean = F.broadcast_to(mean, (n,))
    if cov.ndim == 0:
        cov = F.multiply(F.eye(n, dtype=cov.dtype), cov)
    elif cov.ndim == 1:
        if cov.shape[0] != n:
            raise ValueError(f"cov: a diagonal of length {cov.shape[0]} for a mean of length {n}")
        cov = F.multiply(F.eye(n, dtype=cov.dtype), cov)
    elif cov.shape != (n, n):
        raise ValueError(f"cov: expected shape ({n}, {n}) for a mean of length {n}, got "
                         f"{cov.shape}")
    return mean, cov


def mvn_entropy(mean: ArrayLike | None = None, cov: ArrayLike = 1,
                allow_singular: bool = False) -> Array:
    """The differential entropy of N(mean, cov), as ``scipy.stats.multivariate_normal.entropy``:
    (n log(2 pi e) + log det(cov)) / 2 for cov (n, n) symmetric positive definite (a scalar:
    cov I; a vector: the diagonal; mean only gives n).  ``allow_singular``: cov positive
    semi-definite, the entropy on the subspace of its non-negligible eigenvalues (SciPy's
    cutoff 1e6 eps max|w|): (rank log(2 pi e) + log pdet(cov)) / 2.  A scalar of the promoted
    float dtype; differentiable in cov (a symmetric derivative: cov is taken as symmetric)."""
    _, cov = _mean_cov("multivariate_normal.entropy", mean, cov)
    n = cov.shape[-1]
    sym = F.multiply(F.add(cov, _la.mT(cov)), 0.5)
    if not allow_singular:
        lo = _la.cholesky(sym)
        logdet = F.multiply(F.sum(F.log(F.diagonal(lo, 0, -2, -1)), -1), 2.0)
        return F.multiply(F.add(logdet, n * _LOG_2PI_E), 0.5)
    w = _la.eigvalsh(sym)
    cond = (1e3 if cov.dtype == np.float32 else 1e6) * float(np.finfo(cov.dtype).eps)
    keep = F.greater(w, F.multiply(F.max(F.abs(w), -1, keepdims=True), cond))
    log_pdet = F.sum(F.where(keep, F.log(F.where(keep, w, 1.0)), 0.0), -1)
    rank = F.sum(F.astype(keep, w.dtype), -1)
    return F.multiply(F.add(log_pdet, F.multiply(rank, _LOG_2PI_E)), 0.5)


def mvn_rvs(mean: ArrayLike | None = None, cov: ArrayLike = 1,
            size: int | tuple[int, ...] | None = 1,
            random_state: ArrayLike | None = None) -> Array:
    """Samples of N(mean, cov), as ``scipy.stats.multivariate_normal.rvs``: ``size`` draws
    (an int or a tuple), shape ``size + (n,)`` with SciPy's squeeze (axes of length 1 dropped:
    size 1 gives (n,)).  ``random_state``: an nx random key (required; see the module
    docstring): the draws are ``nx.random.multivariate_normal(random_state, mean, cov,
    size)``'s (JAX's numbers for the same key).  Differentiable in mean and cov."""
    from nx_rune import random as _random

    key = _key(random_state, "multivariate_normal.rvs")
    shape = _size(size, "multivariate_normal.rvs")
    mean, cov = _mean_cov("multivariate_normal.rvs", mean, cov)
    out = _random.multivariate_normal(key, mean, cov, shape)
    return F.squeeze(out) if 1 in out.shape else out


def dirichlet_rvs(alpha: ArrayLike, size: int | tuple[int, ...] | None = 1,
                  random_state: ArrayLike | None = None) -> Array:
    """Samples of Dirichlet(alpha), as ``scipy.stats.dirichlet.rvs``: ``alpha`` (k,)
    concentrations, ``size`` draws (an int or a tuple), shape ``size + (k,)`` (size 1:
    (1, k), as SciPy's).  ``random_state``: an nx random key (required; see the module
    docstring): the draws are ``nx.random.dirichlet(random_state, alpha, size)``'s.
    Differentiable in alpha (implicit reparameterisation)."""
    from nx_rune import random as _random

    key = _key(random_state, "dirichlet.rvs")
    shape = _size(size, "dirichlet.rvs")
    alpha = _as_inexact(F.asarray(alpha))
    if alpha.ndim != 1:
        raise ValueError(f"alpha: expected a 1-d vector of concentrations, got shape "
                         f"{alpha.shape}")
    return _random.dirichlet(key, alpha, shape)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
