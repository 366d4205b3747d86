"""Multivariate samplers: multivariate_normal, orthogonal, dirichlet, ball (JAX's chains)."""
from __future__ import annotations

import math
import operator

import numpy as np

from nx_rune import frontend as _F
from nx_rune import primitives as _P
from nx_rune._kernels import threefry as _K
from nx_rune.dtypes import default_float
from nx_rune.frontend import linalg as _L
from nx_rune.random._bits import normal, uniform
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
from nx_rune.random._continuous import (
    _float_param,
    _key_pair,
    _reciprocal_param,
    _split_pair,
    exponential,
)
from nx_rune.random._traced import (
    _SQRT2,
    _normal_lo,
    _t_bits,
    _t_erfinv_value,
    _t_uniform_from_bits,
)
from nx_rune.random._xla_math import exp_f, fma, xla_pow
from nx_rune.random._ynn import K_CHUNK_TILES, dot_f64_unfused_tiles, dot_tile_k
from nx_rune.random._ynn_math import (
    flush_denormals,
    offloaded,
    ynn_exp,
    ynn_log1p,
    ynn_row_sum,
)
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


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
    raw_key = _key_arg(key)
    k = _key_pair(raw_key)
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
        # jaxlib's call, dpotrf's lower variant, on JAX's symmetrized cov (nx.linalg.cholesky
        # takes the faster upper variant for float64, which rounds otherwise from n = 32)
        sym = _F.multiply(_F.add(cov, _F.swapaxes(cov, -1, -2)), cov.dtype.type(0.5))
        factor = _P.bind(_P.cholesky_p, sym, jaxlib_call=True)
    factor = factor.astype(dt)
    shape = tuple(shape)
    fshape = tuple(factor.shape[:-2])
    m = math.prod(shape)
    if n == 1:
        return _one_by_one(raw_key, mean, factor, shape, dt,
                           folded=m > 1 and all(d == 1 for d in fshape))
    z = normal(k, shape + (n,), dt)
    # JAX's einsum drops the factor's unit batch axes (their draws become rows of its dots)
    if 1 in fshape:
        factor = _F.reshape(factor, tuple(d for d in fshape if d != 1) + (n, n))
    if factor.ndim == 2:
        return _xla_mean_plus_product(mean, factor, z, dt, m)
    return mean + _batched_product(factor, z, fshape, dt)


def _one_by_one(key, mean, factor, shape, dt, folded):
    """``mean + factor z`` for 1 x 1 factors as XLA:CPU computes it: the dot becomes a
    product, contracted with the add into one fused multiply-add, ``fma(factor, z, mean)``;
    several draws of one factor (``folded``) have XLA's simplifier move the normal's sqrt(2)
    onto the factor, ``fma(erfinv(u), factor sqrt(2), mean)`` for the uniforms u behind the
    normal."""
    out_shape = shape + (1,)
    if folded:
        bits = _t_bits(key, np.finfo(dt).bits, out_shape)
        u = _t_uniform_from_bits(bits, dt, np.asarray(_normal_lo(dt)), np.asarray(dt.type(1)))
        z = _t_erfinv_value(u)
        f = factor[..., 0] * dt.type(_SQRT2)
    else:
        z = normal(_key_pair(key), out_shape, dt)
        f = factor[..., 0]
    full = np.broadcast_shapes(out_shape, tuple(mean.shape), tuple(f.shape))
    return fma(_F.broadcast_to(f, full), _F.broadcast_to(z, full), _F.broadcast_to(mean, full))


def _batched_product(factor, z, fshape, dt):
    """``einsum('...ij,...j->...i', factor, z)`` for a batch of factors (``fshape``, before
    the unit axes were dropped) as XLA:CPU computes JAX's batched dot: the draws of each
    factor (z's other axes, in order) are the rows of one dot, summed as the dot of one
    factor (``_plan``)."""
    n = z.shape[-1]
    lead = z.ndim - 1 - len(fshape)
    axes = [lead + i for i, d in enumerate(fshape) if d != 1]
    free = [a for a in range(z.ndim - 1) if a not in axes]
    sizes = [z.shape[a] for a in axes + free]
    b, rows = math.prod(sizes[:len(axes)]), math.prod(sizes[len(axes):])
    zt = _F.reshape(_F.transpose(z, axes + free + [z.ndim - 1]), (b, rows, n))
    ft = _F.reshape(factor, (b, 1, n, n))
    out = _F.reshape(_product(ft, zt, _plan(dt, rows, n)), tuple(sizes) + (n,))
    return _F.transpose(out, [int(i) for i in np.argsort(axes + free)] + [z.ndim - 1])


def _xla_mean_plus_product(mean, factor, z, dt, m):
    """``mean + einsum('ij,...j->...i', factor, z)`` summed as XLA:CPU sums it (``m`` draws of
    ``n`` values; see ``_plan``)."""
    return mean + _product(factor, z, _plan(dt, m, factor.shape[-1]))


def _plan(dt, m, n):
    """The order in which XLA:CPU sums the dot of ``m`` draws (m, n) with a factor's
    transpose, by the kernel it runs:

    - one draw: its row-major matrix-vector loop (``_gemv``: lanes of one vector register,
      8 float32 or 4 float64, in tiles of 8 rows);
    - float32, a dot YNNPACK takes: the order of its kernel (``_ynn.dot_tile_k``);
    - float64 with m or n at least 8: YNNPACK's float64 kernels, all of ``tile_k`` 1 (left to
      right, fused multiply-adds, in chunks of 512; a narrow last tile may run its AVX kernel,
      products rounded: ``_ynn.dot_f64_unfused_tiles``);
    - n <= 3: XLA's own loop (left to right, fused);
    - otherwise (m and n below 8) Eigen's contraction: float32 through XLA's custom kernel
      (left to right, fused), float64 Eigen's own kernel, built without fused multiply-adds
      (left to right, each product rounded, but for the last row of an odd n: see
      ``_ordered_product``).

    A batch of factors has each one's dot summed so (1 x 1 factors are ``_one_by_one``'s)."""
    if m == 1:
        return ("gemv", 8 if dt == _F32 else 4)
    if dt == _F32 and dot_tile_k(m, n, n):
        return ("ynn", dot_tile_k(m, n, n))
    if dt == _F64 and max(m, n) >= 8:
        return ("ynn64", m)
    if dt == _F32 or n <= 3 or max(m, n) >= 8:
        return ("loop", 1)
    return ("eigen", m)


class _NumPyOps:
    """The product's operations on concrete arrays: one kernel call per fused multiply-add."""

    @staticmethod
    def fma(a, b, c):
        a, b, c = np.broadcast_arrays(a, b, c)
        if a.dtype in (_F32, _F64):
            return _K.xla_fma(*(np.ascontiguousarray(v) for v in (a, b, c)))
        return a * b + c

    zeros, where, arange = staticmethod(np.zeros), staticmethod(np.where), \
        staticmethod(np.arange)


class _NxOps:
    """The same in nx operations (traced: jit, vmap, grad)."""
    fma = staticmethod(fma)
    zeros, where, arange = staticmethod(_F.zeros), staticmethod(_F.where), \
        staticmethod(_F.arange)


def _product(factor, z, plan):
    """``einsum('...ij,...j->...i', factor, z)`` in the order ``plan`` names (see
    ``_xla_mean_plus_product``): traced (jit, vmap, grad) in nx operations, whose fused
    multiply-adds have the exact product's derivative; concrete in NumPy with the fma kernel
    (the same values)."""
    if _traced(factor) or _traced(z):
        return _ordered_product(_NxOps, factor, z, plan)
    f, v = np.asarray(factor.numpy()), np.asarray(z.numpy())
    return _F.asarray(_ordered_product(_NumPyOps, f, v, plan))


def _ordered_product(ops, factor, z, plan):
    kind, arg = plan
    n = factor.shape[-1]
    if kind == "gemv":
        return _gemv(ops, factor, z, arg)
    if kind == "ynn64":
        total = _chunked(ops, factor, z, True)
        tiles = dot_f64_unfused_tiles(arg, n, n)
        if tiles:
            mask = np.zeros(tuple(z.shape), bool)
            for m0, m1, n0, n1 in tiles:
                mask.reshape(-1, arg, n)[:, m0:m1, n0:n1] = True
            total = ops.where(mask, _chunked(ops, factor, z, False), total)
        return total
    if kind == "ynn":
        # YNNPACK's chunks of K_CHUNK_TILES tiles of the sum, one kernel call each; a last
        # partial tile through a call of its own
        main = n - n % arg
        total = None
        for lo in range(0, main, K_CHUNK_TILES * arg):
            part = _tile_sum(ops, factor, z, range(lo, min(lo + K_CHUNK_TILES * arg, main)), arg)
            total = part if total is None else part + total
        if main < n:
            tail = _tile_sum(ops, factor, z, range(main, n), arg)
            total = tail if total is None else tail + total
        return total
    fused = kind == "loop" and arg
    fz = factor[..., :, 0] * z[..., None, 0]
    for j in range(1, n):
        if fused:
            fz = ops.fma(factor[..., :, j], z[..., None, j], fz)
        else:
            fz = fz + factor[..., :, j] * z[..., None, j]
    if kind == "eigen" and n % 2 and arg >= 4:
        # Eigen's kernel takes the factor's rows by 4 and 2 (its packets of doubles): an odd
        # n leaves the last row, which it sums over each panel of 4 draws (the first
        # m - m % 4) with 4 partial sums, ((p0 + p1) + (p2 + p3)) + p4 + ...
        p = [factor[..., -1, j] * z[..., j] for j in range(n)]
        last = (p[0] + p[1]) + (p[2] + p[3])
        for j in range(4, n):
            last = last + p[j]
        mask = np.zeros(tuple(z.shape), bool)
        mask.reshape(-1, arg, n)[:, :arg - arg % 4, -1] = True
        fz = ops.where(mask, last[..., None], fz)
    return fz


def _chunked(ops, factor, z, fused):
    """``factor @ z`` in YNNPACK's chunks of ``K_CHUNK_TILES`` products: each chunk's products
    summed left to right from zero (with fused multiply-adds, or each product rounded), the
    chunks' sums added in order."""
    n = factor.shape[-1]
    total = None
    for lo in range(0, n, K_CHUNK_TILES):
        part = factor[..., :, lo] * z[..., None, lo]
        for j in range(lo + 1, min(lo + K_CHUNK_TILES, n)):
            if fused:
                part = ops.fma(factor[..., :, j], z[..., None, j], part)
            else:
                part = part + factor[..., :, j] * z[..., None, j]
        total = part if total is None else total + part
    return total


def _gemv(ops, factor, z, lanes):
    """``factor @ z`` for one draw as XLA:CPU's row-major matrix-vector loop sums it: ``lanes``
    lanes (one vector register: 8 float32, 4 float64), lane l the fused multiply-adds of the
    columns j = l (mod lanes) below n - n % lanes; each row's lanes summed as a tree, in tiles
    of 8 rows: pairwise, ((l0 + l1) + (l2 + l3)) + ..., in a tile of as many rows as lanes,
    else by halves, (l0 + l4) + ... for 8 lanes and (l0 + l2) + (l1 + l3) for 4; the
    remaining columns' fused multiply-adds (from zero) added last."""
    n, rows = factor.shape[-1], factor.shape[-2]
    main = n - n % lanes
    zero = ops.zeros(tuple(z.shape[:-1]) + (rows,), factor.dtype)
    a = [zero] * lanes
    for j in range(main):
        a[j % lanes] = ops.fma(factor[..., :, j], z[..., None, j], a[j % lanes])
    full = _tree(a, 8 == lanes)
    last = rows - rows % 8
    if last < rows and (rows - last == lanes) != (8 == lanes):
        full = ops.where(ops.arange(rows) < last, full, _tree(a, rows - last == lanes))
    tail = zero
    for j in range(main, n):
        tail = ops.fma(factor[..., :, j], z[..., None, j], tail)
    return full + tail


def _tree(a, pairwise):
    """The sum of the lanes ``a`` as XLA's horizontal sums add them: neighbours first
    (``pairwise``), else the upper half onto the lower one, halving again."""
    a = list(a)
    while len(a) > 1:
        h = len(a) // 2
        a = [a[2 * i] + a[2 * i + 1] for i in range(h)] if pairwise else \
            [a[i] + a[i + h] for i in range(h)]
    return a[0]


def _tile_sum(ops, factor, z, cols, tile_k):
    """One YNNPACK kernel call over the columns ``cols`` (zero-padded to a multiple of
    ``tile_k``): ``tile_k`` accumulators from zero, the j-th column fused into accumulator
    ``j % tile_k``, then summed as the kernel's lanes are."""
    zero = ops.zeros(tuple(z.shape[:-1]) + (factor.shape[-2],), factor.dtype)
    acc = [zero] * tile_k
    for i, j in enumerate(cols):
        acc[i % tile_k] = ops.fma(factor[..., :, j], z[..., None, j], acc[i % tile_k])
    if tile_k == 1:
        return acc[0]
    if tile_k == 2:
        return acc[0] + acc[1]
    if tile_k == 4:
        return (acc[0] + acc[1]) + (acc[2] + acc[3])
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))


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
    n, rows = a.shape[-1], math.prod(shape)
    # from 4,096 values (a vmap's whole batch) XLA:CPU hands the softmax's max, its exp and
    # the log-gamma draws' last logs to YNNPACK: YNNPACK's log and exp
    ynn = n > 1 and dt in (_F32, _F64) and offloaded(rows * n)
    log_g = _loggamma_of(k, a, tuple(shape) + (n,), dt, ynn=ynn)
    # JAX's softmax, XLA's exp
    from nx_rune.autodiff.api import stop_gradient
    shifted = log_g - stop_gradient(_F.max(log_g, axis=-1, keepdims=True))
    unnormalized = ynn_exp(shifted) if ynn else exp_f(shifted)
    # x / sum(x) over a broadcast sum is a product with the sum's reciprocal
    total = _xla_row_sum(unnormalized, n, rows)
    return flush_denormals(unnormalized * (dt.type(1) / total))


def _xla_row_sum(x, n, rows):
    """``sum(x, axis=-1, keepdims=True)`` of ``rows`` rows of ``n`` as XLA:CPU sums them: below
    4,096 elements (a vmap's whole batch) in its own loops, left to right up to 32 elements,
    longer rows as its tree reduction splits them (windows of 32 over the row padded with
    zeros, p // 2 of the p pads in front; each window, then the windows' sums, left to right);
    from 4,096 elements YNNPACK's sum (``_ynn_math.ynn_row_sum``)."""
    if n > 1 and np.dtype(x.dtype) in (_F32, _F64) and offloaded(rows * n):
        return ynn_row_sum(x)[..., None]
    if np.dtype(x.dtype) == np.float16:
        # JAX sums float16 in float32 (jnp.sum's upcast) and rounds the sum once
        return _row_sum(x.astype(_F32), n, rows).astype(np.float16)
    return _row_sum(x, n, rows)


def _row_sum(x, n, rows):
    """``_xla_row_sum``'s ordered sums: traced (jit, vmap, grad) in nx operations, a concrete
    x in NumPy (the same values)."""
    if _traced(x):
        return _ordered_row_sum(x, n, rows)
    return _F.asarray(_ordered_row_sum(np.asarray(x.numpy()), n, rows))


def _ordered_row_sum(x, n, rows):
    def run(lo, hi):
        if isinstance(x, np.ndarray):       # accumulate adds strictly left to right
            return np.add.accumulate(x[..., lo:hi], axis=-1)[..., -1:]
        t = x[..., lo:lo + 1]
        for i in range(lo + 1, hi):
            t = t + x[..., i:i + 1]
        return t
    if n <= 32:
        return run(0, n)
    windows = -(-n // 32)
    front = (windows * 32 - n) // 2
    total = None
    for w in range(windows):
        lo, hi = max(0, 32 * w - front), min(n, 32 * (w + 1) - front)
        part = run(lo, hi)
        total = part if total is None else total + part
    return total


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
    rows = math.prod(shape)
    if d > 1 and dt in (_F32, _F64) and offloaded(rows * d) and offloaded(rows):
        # from 4,096 points (a vmap's whole batch) XLA's YNNPACK fusion of the row sums takes
        # their consumers too, the exponential's -log1p(-u) among them: YNNPACK's log1p
        e = -ynn_log1p(-uniform(k2, shape, dt))
    else:
        e = exponential(k2, shape, dt)
    pv = _float_param(p, "p", dt)     # traced p: differentiable, as JAX's
    inv_p = _reciprocal_param(p, "p", dt)
    # p is traced in JAX's sampler, so XLA keeps its pows (the C library's; no rewrite into
    # sqrt/rsqrt at p = 2; from 4,096 values XLA hands them to YNNPACK with the row sums,
    # whose pow is the C library's too)
    a = xla_pow(_F.abs(g), pv)
    # the row sums as XLA sums them (its loops, or YNNPACK's order from 4,096 values)
    if d == 0:
        total = _F.zeros(shape, dt)
    else:
        total = _xla_row_sum(a, d, math.prod(shape))[..., 0]
    if d == 1:
        # (a sum of one: no reduction) g / (total + e) ** (1 / p), the quotient kept
        return flush_denormals(g / xla_pow(total + e, inv_p)[..., None])
    # g / (total + e) ** (1 / p): XLA rewrites a quotient by a broadcast power into a product
    # with the negated power, A * pow(X, -Y)
    r = xla_pow(total + e, -inv_p)
    return flush_denormals(g * r[..., None])
