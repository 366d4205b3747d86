"""Multivariate samplers: multivariate_normal, orthogonal, dirichlet, ball (JAX's chains)."""
from __future__ import annotations

import math
import operator

import numpy as np

from nx_rune import frontend as _F
from nx_rune.dtypes import default_float
from nx_rune.frontend import linalg as _L
from nx_rune.random._bits import normal
from nx_rune.random._common import (
    _check_param_shape,
    _dtype,
    _dtype_of,
    _float_dtype_of,
    _key_arg,
    _shape,
    _traced,
    _val,
)
from nx_rune.random._continuous import _key_pair, _split_pair, exponential
from nx_rune.random._xla_math import exp_f, fma, xla_pow
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

_F64 = np.dtype(np.float64)


def _inexact(x, name):
    v = _val(x, name)
    v = v.astype(_float_dtype_of(v)) if not _traced(v) else v.astype(_float_dtype_of(v))
    return v if _traced(v) else _F.asarray(v)


def multivariate_normal(key: ArrayLike, mean: ArrayLike, cov: ArrayLike,
                        shape: ShapeLike | None = None, dtype: DTypeLike = None,
                        method: str = "cholesky") -> Array:
    """Samples of the normal distribution of ``mean`` (``(..., n)``) and covariance ``cov``
    (``(..., n, n)``): ``mean + factor @ z`` for standard normal z and ``factor`` from
    ``method`` ("cholesky", "eigh" or "svd"; the last two allow singular ``cov``).

    Returns a Tensor of ``shape + (n,)`` (default: the broadcast batch shape of mean and cov);
    ``dtype`` defaults to mean's (promoted to float).  Differentiable in ``mean`` and ``cov``.
    """
    k = _key_pair(_key_arg(key))
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(f"method must be one of 'svd', 'eigh' and 'cholesky', got {method!r}")
    mean, cov = _inexact(mean, "mean"), _inexact(cov, "cov")
    common = np.promote_types(_dtype_of(mean), _dtype_of(cov))
    mean, cov = mean.astype(common), cov.astype(common)
    dt = _dtype(dtype, common, "f", "multivariate_normal")
    if mean.ndim < 1:
        raise ValueError(f"mean: multivariate_normal requires mean.ndim >= 1, got "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"cov: multivariate_normal requires cov.ndim >= 2, got {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"cov: multivariate_normal requires cov.shape == (..., n, n) for "
                         f"n={n}, got {tuple(cov.shape)}")
    batch = (tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if shape is None:
        shape = np.broadcast_shapes(*batch)
    else:
        shape = _shape(shape)
        _check_param_shape("multivariate_normal", shape, *batch)
    if method == "svd":
        u, s, _ = _L.svd(cov)
        factor = u * _F.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = _L.eigh(cov)
        factor = v * _F.sqrt(w[..., None, :])
    else:
        factor = _L.cholesky(cov)
    z = normal(k, tuple(shape) + (n,), dt)
    # XLA:CPU's dot: float64 sums the products left to right with fused multiply-adds (as
    # its generated loop does, every n), and so does float32 for fewer than 8 draws of one
    # cov; more float32 draws go to its Eigen kernel: left to right unfused, which is its order
    # up to n = 3 (beyond, its blocking reorders the sum: an ulp apart in some elements)
    factor = factor.astype(dt)
    fused = dt == _F64 or (cov.ndim == 2 and math.prod(shape) < 8)
    fz = factor[..., :, 0] * z[..., None, 0]
    for j in range(1, n):
        if fused:
            fz = fma(factor[..., :, j], z[..., None, j], fz)
        else:
            fz = fz + factor[..., :, j] * z[..., None, j]
    return mean + fz


def orthogonal(key: ArrayLike, n: int, shape: ShapeLike = (), dtype: DTypeLike = None,
               m: int | None = None) -> Array:
    """Random matrices with orthonormal columns (or rows), Haar-distributed: Tensor of
    ``shape + (n, m)`` (``m`` defaults to ``n``), float ``dtype``.  The sign-corrected Q of a
    QR factorization of a standard normal matrix, as JAX."""
    k = _key_pair(_key_arg(key))
    shape = _shape(shape)
    dt = _dtype(dtype, default_float(), "f", "orthogonal")
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    if n < 0 or m < 0:
        raise ValueError(f"n and m must be non-negative, got n={n}, m={m}")
    z = normal(k, (*shape, max(n, m), min(n, m)), dt)
    q, r = _L.qr(z)
    d = _F.diagonal(r, axis1=-2, axis2=-1)
    x = q * _F.expand_dims(_F.sign(d), -2)
    return _F.swapaxes(x, -1, -2) if n < m else x


def dirichlet(key: ArrayLike, alpha: ArrayLike, shape: ShapeLike | None = None,
              dtype: DTypeLike = None) -> Array:
    """Dirichlet samples of concentration ``alpha`` (``(..., n)``): ``softmax`` of log-gamma
    samples, Tensor of ``shape + (n,)`` (default alpha's shape), float ``dtype``.
    Differentiable in ``alpha`` (the implicit reparameterisation gradient of the gamma
    draws)."""
    from nx_rune.random._gamma import _loggamma_of
    k = _key_pair(_key_arg(key))
    dt = _dtype(dtype, default_float(), "f", "dirichlet")
    a = _val(alpha, "alpha")
    if a.ndim < 1:
        raise ValueError(f"alpha: dirichlet requires alpha.ndim >= 1, got {a.ndim}")
    a = a.astype(dt) if _traced(a) else _F.asarray(np.asarray(a).astype(dt))
    if shape is None:
        shape = tuple(a.shape[:-1])
    else:
        shape = _shape(shape)
        _check_param_shape("dirichlet", shape, tuple(a.shape[:-1]))
    log_g = _loggamma_of(k, a, tuple(shape) + tuple(a.shape[-1:]), dt)
    # JAX's softmax, XLA's exp
    from nx_rune.autodiff.api import stop_gradient
    unnormalized = exp_f(log_g - stop_gradient(_F.max(log_g, axis=-1, keepdims=True)))
    # XLA:CPU sums a row of up to 8 elements left to right (longer rows in an order of its
    # vectorized reduction, which NumPy's pairwise sum does not reproduce), and x / sum(x)
    # over a broadcast sum is a product with the sum's reciprocal
    n = a.shape[-1]
    if n <= 8:
        total = unnormalized[..., 0:1]
        for i in range(1, n):
            total = total + unnormalized[..., i:i + 1]
    else:
        total = _F.sum(unnormalized, axis=-1, keepdims=True)
    return unnormalized * (dt.type(1) / total)


def ball(key: ArrayLike, d: int, p: float = 2, shape: ShapeLike = (),
         dtype: DTypeLike = None) -> Array:
    """Points uniformly distributed in the unit ``p``-norm ball of dimension ``d``: Tensor of
    ``shape + (d,)``, float ``dtype``."""
    from nx_rune.random._gamma import generalized_normal
    k = _key_arg(key)
    shape = _shape(shape)
    dt = _dtype(dtype, default_float(), "f", "ball")
    d = operator.index(d)
    if d < 0:
        raise ValueError(f"d must be non-negative, got {d}")
    k1, k2 = _split_pair(k)
    g = generalized_normal(k1, p, (*shape, d), dt)
    e = exponential(k2, shape, dt)
    pv = _F.asarray(np.asarray(p, dt))
    # p is traced in JAX's sampler, so XLA keeps its pows (the C library's; no rewrite into
    # sqrt/rsqrt at p = 2)
    a = xla_pow(_F.abs(g), pv)
    if d <= 8:
        # left to right, one add at a time (nx's jit fuses a sum over a short axis in another
        # order than its eager sum; XLA's own order is this one up to about a thousand rows)
        total = a[..., 0] if d else _F.zeros(shape, dt)
        for i in range(1, d):
            total = total + a[..., i]
    else:
        total = _F.sum(a, axis=-1)
    # g / (total + e) ** (1 / p): XLA rewrites a quotient by a power into a product with the
    # negated power, A * pow(X, -Y)
    r = xla_pow(total + e, -(dt.type(1) / pv))
    return g * r[..., None]
