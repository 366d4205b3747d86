"""The multivariate normal distribution (``logpdf``, ``pdf``) with ``jax.scipy.stats``'s
argument names, meant to be ``nx.scipy.stats.multivariate_normal``.

The log-density goes through a Cholesky factor of ``cov`` and one triangular solve, so it is
differentiable to any order in x, mean and cov (cov's derivative is taken with respect to its
lower triangle, the one the Cholesky factorization reads: symmetric perturbations, as a
covariance has, get the right derivative).
"""
from __future__ import annotations

import math

from nx_rune import dtypes
from nx_rune.frontend import elementwise, reductions
from nx_rune.frontend import _core
from nx_rune.frontend import arrangement, movement
from nx_rune.frontend import linalg as _la
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def _operands(x, mean, cov):
    """x, mean and cov in one float dtype (Python scalars weakly typed)."""
    x, mean, cov = (_core.as_inexact(v) for v in _core.promote(x, mean, cov))
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"x, mean, cov: the multivariate normal takes real values, got {x.dtype}")
    return x, mean, cov


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: None = None) -> Array:
    """log N(x; mean, cov).  ``mean`` () with scalar ``cov``: the univariate normal of each
    element of x.  ``mean`` (..., n): x (..., n) with ``cov`` a scalar (cov * I) or (..., n, n)
    symmetric positive definite; leading axes broadcast.  Shape: the broadcast of the leading
    axes; promoted float dtype.  A cov that is not positive definite raises LinAlgError;
    ``allow_singular`` is not supported (NotImplementedError unless None, as JAX)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular: not supported (as in jax.scipy.stats)")
    x, mean, cov = _operands(x, mean, cov)
    if mean.ndim == 0:
        if cov.ndim != 0:
            raise ValueError(f"cov: a scalar mean needs a scalar cov, got shape {cov.shape}")
        d = elementwise.subtract(x, mean)
        return elementwise.subtract(
            elementwise.multiply(elementwise.divide(elementwise.multiply(d, d), cov), -0.5),
            elementwise.multiply(elementwise.add(elementwise.log(cov), _LOG_2PI), 0.5))
    n = mean.shape[-1]
    if x.ndim == 0 or x.shape[-1] != n:
        raise ValueError(f"x: the last axis must have the mean's length {n}, got shape {x.shape}")
    d = elementwise.subtract(x, mean)
    if cov.ndim == 0:
        quad = elementwise.divide(reductions.sum(elementwise.multiply(d, d), -1), cov)
        logdet = elementwise.multiply(elementwise.log(cov), n)
    else:
        if cov.ndim < 2 or cov.shape[-2:] != (n, n):
            raise ValueError(f"cov: expected shape (..., {n}, {n}) for a mean of length {n}, got "
                             f"{cov.shape}")
        lo = _la.cholesky(cov)
        # d as (..., n, 1) columns: the batch axes of d and cov broadcast
        y = _la.solve_triangular(lo, movement.reshape(d, d.shape + (1,)), lower=True,
                                 check_finite=False)
        quad = reductions.sum(elementwise.multiply(y, y), (-2, -1))
        logdet = elementwise.multiply(
            reductions.sum(elementwise.log(arrangement.diagonal(lo, 0, -2, -1)), -1), 2.0)
    return elementwise.multiply(
        elementwise.add(elementwise.add(quad, logdet), n * _LOG_2PI), -0.5)


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Array:
    """exp(logpdf(x, mean, cov)): the density, same shapes and dtype as ``logpdf``."""
    return elementwise.exp(logpdf(x, mean, cov))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
