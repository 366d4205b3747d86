"""``nx.scipy.stats.gaussian_kde``: the Gaussian kernel density estimator, as
``jax.scipy.stats.gaussian_kde`` (SciPy's ``scipy.stats.gaussian_kde`` values).

The estimator is a pytree (its arrays are the leaves), so it passes through ``jit``, ``vmap``
and ``grad``: the density is differentiable in the evaluation points and in the dataset and
weights it was built from.
"""
from __future__ import annotations

import math
from typing import Any, Callable, cast

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as F
from nx_rune.frontend import linalg as _la
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.frontend._core import promote as _promote
from nx_rune.scipy import special
from nx_rune.tree_util import register_pytree_node_class
from nx_rune.typing import Array, ArrayLike

__all__ = ["gaussian_kde"]

_LOG_2PI = math.log(2.0 * math.pi)


def _real(x: ArrayLike, arg: str) -> Array:
    x = F.asarray(x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError(f"{arg}: gaussian_kde does not support complex values")
    return _as_inexact(x)


@register_pytree_node_class
class gaussian_kde:
    """Gaussian kernel density estimate of ``dataset`` ((n,) or (d, n): n points in d
    dimensions), as ``scipy.stats.gaussian_kde``: the mixture of normal kernels of covariance
    ``factor**2 * cov(dataset)`` centred on the points, with ``weights`` (n,) (normalised;
    default equal).  ``bw_method``: "scott" (default, neff**(-1 / (d + 4))), "silverman"
    ((neff (d + 2) / 4)**(-1 / (d + 4))), a scalar factor, or a callable taking the estimator
    (with ``d``, ``n``, ``neff`` set) and returning the factor; neff = 1 / sum(weights**2).

    Attributes (JAX's): ``dataset`` (d, n), ``weights`` (n,), ``neff``, ``covariance`` and
    ``inv_cov`` (d, d), ``d``, ``n``."""

    neff: Array
    dataset: Array
    weights: Array
    covariance: Array
    inv_cov: Array

    def __init__(self, dataset: ArrayLike, bw_method: str | float | Callable[..., Any] |
                 None = None, weights: ArrayLike | None = None) -> None:
        data = _real(dataset, "dataset")
        if data.ndim > 2:
            raise ValueError(f"dataset: expected shape (n,) or (d, n), got {data.shape}")
        data = F.reshape(data, (1, -1)) if data.ndim < 2 else data
        if data.size <= 1:
            raise ValueError("dataset: needs more than one element")
        d, n = data.shape
        if weights is None:
            w = F.full((n,), 1.0 / n, dtype=data.dtype)
        else:
            w = _real(weights, "weights")
            if w.ndim != 1 or w.shape[0] != n:
                raise ValueError(f"weights: expected shape ({n},) (one per point), got "
                                 f"{w.shape}")
            data, w = _promote(data, w)
            w = F.divide(w, F.sum(w))
        self.dataset, self.weights = data, w
        self.neff = F.reciprocal(F.sum(F.multiply(w, w)))
        method = "scott" if bw_method is None else bw_method
        if isinstance(method, str):
            if method == "scott":
                factor = F.power(self.neff, -1.0 / (d + 4))
            elif method == "silverman":
                factor = F.power(F.multiply(self.neff, (d + 2) / 4.0), -1.0 / (d + 4))
            else:
                raise ValueError(f"bw_method: 'scott', 'silverman', a scalar or a callable, "
                                 f"got {method!r}")
        elif callable(method):
            factor = self._factor(method(self))
        elif np.ndim(method) == 0:
            factor = self._factor(method)
        else:
            raise ValueError(f"bw_method: 'scott', 'silverman', a scalar or a callable, got "
                             f"{method!r}")
        cov = F.reshape(F.cov(data, rowvar=True, bias=False, aweights=w), (d, d))
        factor = F.astype(factor, data.dtype)
        self.covariance = F.multiply(cov, F.multiply(factor, factor))
        self.inv_cov = F.divide(_la.inv(cov), F.multiply(factor, factor))

    def _factor(self, v: Any) -> Array:
        """A bandwidth factor in the dataset's dtype (a Python float kept to its precision)."""
        if isinstance(v, (int, float, np.number)):
            return F.asarray(np.asarray(v, dtype=self.dataset.dtype))
        return F.asarray(v)

    # -- the pytree: the arrays are the leaves ----------------------------------------------
    def tree_flatten(self) -> tuple[tuple[Array, ...], None]:
        """(neff, dataset, weights, covariance, inv_cov), no auxiliary data."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> gaussian_kde:
        """The estimator of the leaves ``children`` (``tree_flatten``'s order)."""
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions."""
        return int(self.dataset.shape[0])

    @property
    def n(self) -> int:
        """The number of data points."""
        return int(self.dataset.shape[1])

    # -- the density ---------------------------------------------------------------------
    def _points(self, points: ArrayLike) -> Array:
        pts = _real(points, "points")
        pts = F.reshape(pts, (1, -1)) if pts.ndim < 2 else pts
        if pts.ndim != 2:
            raise ValueError(f"points: expected shape (d, m) or (m,), got {pts.shape}")
        if pts.shape[0] != self.d:
            if pts.shape[0] == 1 and pts.shape[1] == self.d:
                pts = F.reshape(pts, (self.d, 1))
            else:
                raise ValueError(f"points: have dimension {pts.shape[0]}, the dataset has "
                                 f"dimension {self.d}")
        return pts

    def _log_kernels(self, points: ArrayLike) -> Array:
        """log(w_i N(x_j; data_i, covariance)) for every point j (rows) and datum i
        (columns), through the whitening factor of inv_cov (squared distances of
        differences, no cancellation of large norms)."""
        pts = self._points(points)
        data, pts = _promote(self.dataset, pts)
        inv_cov = F.astype(self.inv_cov, data.dtype)
        white = _la.cholesky(inv_cov)                        # inv_cov = L L^T
        wd = F.matmul(F.transpose(data), white)              # (n, d)
        wp = F.matmul(F.transpose(pts), white)               # (m, d)
        diff = F.subtract(F.expand_dims(wp, 1), F.expand_dims(wd, 0))
        sq = F.sum(F.multiply(diff, diff), -1)               # (m, n)
        log_norm = F.subtract(F.sum(F.log(F.diagonal(white))), 0.5 * self.d * _LOG_2PI)
        logw = F.log(F.astype(self.weights, data.dtype))
        return F.add(F.subtract(log_norm, F.multiply(sq, 0.5)), logw)

    def logpdf(self, x: ArrayLike) -> Array:
        """The log-density at the points ``x`` ((d, m), or (m,) for d = 1, or one (d,)
        point): shape (m,), log-sum-exp over the kernels (finite far in the tails)."""
        return cast(Array, special.logsumexp(self._log_kernels(x), axis=1))

    def evaluate(self, points: ArrayLike) -> Array:
        """The density at ``points`` (see ``logpdf``): shape (m,)."""
        return F.sum(F.exp(self._log_kernels(points)), axis=1)

    def pdf(self, x: ArrayLike) -> Array:
        """The density at ``x``: ``evaluate(x)``."""
        return self.evaluate(x)

    def __call__(self, points: ArrayLike) -> Array:
        """The density at ``points``: ``evaluate(points)``."""
        return self.evaluate(points)

    # -- integrals -----------------------------------------------------------------------
    def _gaussian_overlap(self, data: Array, weights: Array, cov: Array, at: Array) -> Array:
        """sum_i w_i N(at_j; data_i, cov) for each column j of ``at`` (d, k): shape (k,)
        (the integral of a kernel mixture times a normal centred at at_j)."""
        lo = _la.cholesky(cov)
        k, m = at.shape[1], data.shape[1]
        diff = F.subtract(F.expand_dims(at, 2), F.expand_dims(data, 1))      # (d, k, m)
        y = _la.solve_triangular(lo, F.reshape(diff, (self.d, k * m)), lower=True)
        sq = F.reshape(F.sum(F.multiply(y, y), 0), (k, m))
        log_norm = F.add(F.sum(F.log(F.diagonal(lo))), 0.5 * self.d * _LOG_2PI)
        return F.sum(F.multiply(weights, F.exp(F.subtract(F.multiply(sq, -0.5), log_norm))), 1)

    def integrate_gaussian(self, mean: ArrayLike, cov: ArrayLike) -> Array:
        """The integral of the density times N(mean, cov): mean (d,), cov (d, d)."""
        mean = F.reshape(F.asarray(mean), (-1,))
        cov = F.asarray(cov)
        cov = F.reshape(cov, (1, 1)) if cov.ndim < 2 else cov
        if mean.shape != (self.d,):
            raise ValueError(f"mean: expected dimension {self.d}, got shape {mean.shape}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"cov: expected shape ({self.d}, {self.d}), got {cov.shape}")
        return F.reshape(self._gaussian_overlap(self.dataset, self.weights,
                                                F.add(self.covariance, cov),
                                                F.reshape(mean, (self.d, 1))), ())

    def integrate_box_1d(self, low: ArrayLike, high: ArrayLike) -> Array:
        """The probability of [low, high] (scalars) under a one-dimensional estimate."""
        if self.d != 1:
            raise ValueError("integrate_box_1d: only one-dimensional estimates")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("low and high: integrate_box_1d takes scalar limits")
        sigma = F.sqrt(F.reshape(self.covariance, ()))
        data = F.reshape(self.dataset, (-1,))
        lo = F.divide(F.subtract(low, data), sigma)
        hi = F.divide(F.subtract(high, data), sigma)
        return F.sum(F.multiply(self.weights, F.subtract(special.ndtr(hi), special.ndtr(lo))))

    def integrate_kde(self, other: gaussian_kde) -> Array:
        """The integral of the product of this density and ``other``'s (same dimension)."""
        if other.d != self.d:
            raise ValueError(f"other: a {other.d}-dimensional estimate, this one is "
                             f"{self.d}-dimensional")
        cov = F.add(self.covariance, other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = self._gaussian_overlap(large.dataset, large.weights, cov, small.dataset)
        return F.sum(F.multiply(small.weights, per_point))

    def integrate_box(self, low_bounds: ArrayLike, high_bounds: ArrayLike,
                      maxpts: int | None = None) -> Array:
        """Not implemented (as in JAX): use ``integrate_box_1d``."""
        raise NotImplementedError("integrate_box: only one-dimensional boxes are supported; "
                                  "use integrate_box_1d")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Not implemented (as in JAX): the estimator is immutable; build a new one."""
        raise NotImplementedError("set_bandwidth: the estimator is immutable; build a new one "
                                  "with the bw_method")

    # -- samples -------------------------------------------------------------------------
    def resample(self, key: ArrayLike, shape: tuple[int, ...] = ()) -> Array:
        """Samples of the density with the nx random key ``key``: shape ``(d,) + shape``
        (a datum drawn by weight, plus a normal kernel draw), as JAX's ``resample``."""
        from nx_rune import random as _random

        shape = tuple(shape)
        keys = _random.split(key)
        ind_key, eps_key = F.take(keys, 0, axis=0), F.take(keys, 1, axis=0)
        ind = _random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = _random.multivariate_normal(eps_key, F.zeros((self.d,), self.covariance.dtype),
                                          self.covariance, shape=shape,
                                          dtype=self.dataset.dtype)
        eps = F.moveaxis(eps, -1, 0)
        return F.add(F.take(self.dataset, ind, axis=1), eps)
