"""Continuous samplers composed from uniform and normal draws, as JAX composes them.

exponential, laplace, logistic, cauchy, pareto, weibull_min, lognormal, rayleigh, wald,
triangular, maxwell and double_sided_maxwell: each is JAX 0.10.2's chain of operations on the
same uniform or normal draws.  The parameter-free ones whose functions only a kernel computes
as XLA:CPU does (exponential, laplace, logistic, cauchy and rayleigh's sqrt(-2 log u): XLA's
log1p, the C library's log and tan) draw through the ``threefry_sample`` primitive, a concrete
key eagerly and a traced one as a primitive, the same kernel; the rest is written with nx's
operations, so one code path serves concrete keys (eager), traced keys and parameters (jit,
vmap, grad); exp is XLA's own (``_xla_math.exp_f``) and weibull_min's pow the C library's as
XLA calls it (the primitive ``xla_pow``).  So all are bit-exact with JAX 0.10.2 on CPU in
float32 and float64, and in float16 as XLA:CPU computes it without float16 arithmetic (each
operation widened to float32 and rounded back, the functions as ``nx_rune.backend.random``'s
``_xla_math``).  Where XLA's simplifier rewrites JAX's chain (lognormal's broadcast sigma
folded into the normal's sqrt(2)) the chain here is the rewritten one, and where JAX computes
on a parameter before it meets the sample dtype (weibull_min's ``1 / concentration``, a Python
float being a weak float32 with x64 off) so does the chain here.
"""
from __future__ import annotations

import math

import numpy as np

from nx_rune import frontend as _F
from nx_rune.backend.random import _SQRT2, _sample
from nx_rune.config import x64_enabled
from nx_rune.dtypes import default_float
from nx_rune.random._bits import normal, uniform
from nx_rune.random._common import (
    _check_param_shape,
    _dtype,
    _float_dtype_of,
    _key_arg,
    _shape,
    _traced,
    _val,
)
from nx_rune.random._traced import _bind_sample, _cast, _t_split2
from nx_rune.random._xla_math import exp_f, fma, xla_pow
from nx_rune.random._ynn_math import offloaded
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

_F64 = np.dtype(np.float64)


def _key_pair(k):
    """A key of ``_key_arg`` (words or traced) as something the public samplers take."""
    return np.array(k, np.uint32) if isinstance(k, tuple) else k


def _split_pair(k):
    """Two keys of ``split(key)``, as the public samplers take them."""
    a, b = _t_split2(k)
    return _key_pair(a), _key_pair(b)


def _float_param(x, name, dt):
    """A parameter cast to ``dt``: a Tensor (concrete) or the traced value."""
    v = _cast(_val(x, name), dt)
    return v if _traced(v) else _F.asarray(v)


def _reciprocal_param(x, name, dt):
    """``1 / x`` cast to ``dt``, the quotient rounded in x's own precision first, as JAX's
    samplers compute ``1 / p`` before the parameter meets the sample dtype: float64 values
    count as float32 with x64 off (JAX's canonical dtypes: a Python float is a weak float32
    there), integers as the default float.  (1 / 0.7 rounded to float16 is not
    1 / float16(0.7).)"""
    v = _val(x, name)
    own = np.dtype(v.dtype) if _traced(v) else _float_dtype_of(v)
    if own.kind != "f":
        raise TypeError(f"{name} must be a real number or array, got {own}")
    if own == _F64 and not x64_enabled():
        own = np.dtype(np.float32)
    v = _cast(v, own)
    return _float_param(np.asarray(1, own) / v, name, dt)


def _shape_for(fn, shape, *params):
    """``shape`` (None: the parameters' broadcast shape), checked as JAX's
    ``_check_broadcast_shapes``."""
    shapes = [tuple(p.shape) for p in params]
    if shape is None:
        try:
            return np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"{fn}: parameter shapes {shapes} do not broadcast") from None
    shape = _shape(shape)
    _check_param_shape(fn, shape, *shapes)
    return shape


def _float_dtype(dtype, fn):
    return _dtype(dtype, default_float(), "f", fn)


def _draw(k, dist, shape, dt):
    """The parameter-free sampler ``dist`` of ``threefry_sample``: eagerly for a concrete key
    (its words), through the primitive for a traced one (the same kernel)."""
    if isinstance(k, tuple):
        return _F.asarray(_sample(k, dist, shape, dt, ()))
    return _bind_sample(k, dist, shape, dt)


def exponential(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard exponential samples ``-log1p(-u)``: Tensor of ``shape``, float ``dtype``
    (default float32, float64 in x64 mode)."""
    k = _key_arg(key)
    dt = _float_dtype(dtype, "exponential")
    return _draw(k, "exponential", _shape(shape), dt)


def laplace(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard Laplace samples ``sign(u) log1p(-|u|)``, u uniform on (-1, 1): Tensor of
    ``shape``, float ``dtype``."""
    k = _key_arg(key)
    dt = _float_dtype(dtype, "laplace")
    return _draw(k, "laplace", _shape(shape), dt)


def logistic(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard logistic samples ``log(u) - log1p(-u)``: Tensor of ``shape``, float ``dtype``."""
    k = _key_arg(key)
    dt = _float_dtype(dtype, "logistic")
    return _draw(k, "logistic", _shape(shape), dt)


def cauchy(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard Cauchy samples ``tan(pi (u - 1/2))``: Tensor of ``shape``, float ``dtype``."""
    k = _key_arg(key)
    dt = _float_dtype(dtype, "cauchy")
    return _draw(k, "cauchy", _shape(shape), dt)


def pareto(key: ArrayLike, b: ArrayLike, shape: ShapeLike | None = None,
           dtype: DTypeLike = None) -> Array:
    """Pareto samples of shape parameter ``b``, ``exp(e / b)`` for exponential e: Tensor of
    ``shape`` (default b's), float ``dtype``; differentiable in ``b``."""
    k = _key_pair(_key_arg(key))
    dt = _float_dtype(dtype, "pareto")
    b = _float_param(b, "b", dt)
    shape = _shape_for("pareto", shape, b)
    return exp_f(exponential(k, shape, dt) / b)


def weibull_min(key: ArrayLike, scale: ArrayLike, concentration: ArrayLike,
                shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Weibull samples ``(-log1p(-u)) ** (1 / concentration) * scale``: Tensor of ``shape``,
    float ``dtype``; differentiable in ``scale`` and ``concentration``."""
    k = _key_pair(_key_arg(key))
    dt = _float_dtype(dtype, "weibull_min")
    scale = _float_param(scale, "scale", dt)
    inv_conc = _reciprocal_param(concentration, "concentration", dt)
    e = exponential(k, _shape(shape), dt)            # JAX's -log1p(-u) of the same uniform
    return xla_pow(e, inv_conc) * scale


def lognormal(key: ArrayLike, sigma: ArrayLike = np.float32(1), shape: ShapeLike | None = None,
              dtype: DTypeLike = None) -> Array:
    """Log-normal samples ``exp(sigma * n)``: Tensor of ``shape`` (default sigma's), float
    ``dtype``; differentiable in ``sigma``."""
    k = _key_arg(key)
    dt = _float_dtype(dtype, "lognormal")
    sigma = _float_param(sigma, "sigma", dt)
    shape = _shape_for("lognormal", shape, sigma)
    if tuple(sigma.shape) != shape:
        # JAX's exp(normal * sigma) with normal = erf_inv(u) * sqrt(2): where sigma is
        # broadcast, XLA's simplifier folds the two broadcast factors into one,
        # erf_inv(u) * (sigma * sqrt(2)), each product rounded
        return exp_f(_draw(k, "erfinv", shape, dt) * (sigma * dt.type(_SQRT2)))
    return exp_f(normal(_key_pair(k), shape, dt) * sigma)


def rayleigh(key: ArrayLike, scale: ArrayLike, shape: ShapeLike | None = None,
             dtype: DTypeLike = None) -> Array:
    """Rayleigh samples ``scale * sqrt(-2 log u)``: Tensor of ``shape`` (default scale's),
    float ``dtype``; differentiable in ``scale``."""
    k = _key_arg(key)
    dt = _float_dtype(dtype, "rayleigh")
    scale = _float_param(scale, "scale", dt)
    shape = _shape_for("rayleigh", shape, scale)
    return scale * _draw(k, "rayleigh", shape, dt)


def wald(key: ArrayLike, mean: ArrayLike, shape: ShapeLike | None = None,
         dtype: DTypeLike = None) -> Array:
    """Wald (inverse Gaussian) samples of ``mean``: Tensor of ``shape`` (default mean's),
    float ``dtype``."""
    k = _key_arg(key)
    dt = _float_dtype(dtype, "wald")
    mean = _float_param(mean, "mean", dt)
    shape = _shape_for("wald", shape, mean)
    k1, k2 = _split_pair(k)
    mean = _F.broadcast_to(mean, shape)
    v = normal(k1, shape, dt)
    z = uniform(k2, shape, dt)
    y = v * v
    mean_sq = mean * mean
    # JAX's sqrt(4 mean y + mean**2 y**2) and mean + mean**2 y / 2 - mean / 2 sqrt_term as
    # XLA:CPU computes them: the divisions by 2 as products with 1/2, the multiply-adds fused
    sqrt_term = _F.sqrt(fma(dt.type(4) * mean, y, mean_sq * (y * y)))
    x = fma(-(mean * dt.type(0.5)), sqrt_term, fma(mean_sq * y, dt.type(0.5), mean))
    return _F.where(z <= mean / (mean + x), x, mean_sq / x)


def triangular(key: ArrayLike, left: ArrayLike, mode: ArrayLike, right: ArrayLike,
               shape: ShapeLike | None = None, dtype: DTypeLike = None) -> Array:
    """Triangular samples on [left, right] with peak ``mode`` (inverse CDF): Tensor of ``shape``
    (default the parameters' broadcast shape), float ``dtype``."""
    k = _key_pair(_key_arg(key))
    dt = _float_dtype(dtype, "triangular")
    left = _float_param(left, "left", dt)
    mode = _float_param(mode, "mode", dt)
    right = _float_param(right, "right", dt)
    shape = _shape_for("triangular", shape, left, mode, right)
    left, mode, right = (_F.broadcast_to(v, shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform(k, shape, dt)
    out1 = left + _F.sqrt(u * (right - left) * (mode - left))
    out2 = right - _F.sqrt((dt.type(1) - u) * (right - left) * (right - mode))
    return _F.where(u < fc, out1, out2)


def maxwell(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Maxwell samples: the 2-norm of three standard normals, Tensor of ``shape``, float
    ``dtype``."""
    k = _key_pair(_key_arg(key))
    dt = _float_dtype(dtype, "maxwell")
    shape = _shape(shape)
    n = normal(k, shape + (3,), dt)
    sq = n * n
    if dt == np.float16:
        # JAX sums float16 in float32 (jnp.sum's upcast) and rounds the sum once; the three
        # float16 squares add exactly in float32 but for far-apart magnitudes
        sq = sq.astype(np.float32)
        return _F.sqrt(((sq[..., 0] + sq[..., 1]) + sq[..., 2]).astype(dt))
    # JAX's norm(n, axis=-1) as XLA:CPU 0.10.2 compiles it: below 4096 normals (a vmap's
    # whole batch) the squares' reduction is one fused loop (its multiply-adds contracted:
    # float32 from the middle square, float64 left to right), from 4096 on YNNPACK's sum,
    # whose lanes add the first and the last square first
    if not offloaded(3 * math.prod(shape)):
        if dt == np.float32:
            return _F.sqrt(fma(n[..., 2], n[..., 2], fma(n[..., 0], n[..., 0], sq[..., 1])))
        if dt == _F64:
            return _F.sqrt(fma(n[..., 2], n[..., 2], fma(n[..., 1], n[..., 1], sq[..., 0])))
    return _F.sqrt((sq[..., 0] + sq[..., 2]) + sq[..., 1])


def double_sided_maxwell(key: ArrayLike, loc: ArrayLike, scale: ArrayLike,
                         shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Double-sided Maxwell samples ``sign * maxwell * scale + loc``: Tensor of
    ``shape + broadcast(loc, scale).shape`` (as JAX), float ``dtype``."""
    from nx_rune.random._discrete import rademacher
    k = _key_arg(key)
    dt = _float_dtype(dtype, "double_sided_maxwell")
    loc = _float_param(loc, "loc", dt)
    scale = _float_param(scale, "scale", dt)
    params = np.broadcast_shapes(tuple(loc.shape), tuple(scale.shape))
    shape = _shape(shape)
    shape = (shape or params) + params
    km, kr = _split_pair(k)
    return rademacher(kr, shape, dt) * maxwell(km, shape, dt) * scale + loc
