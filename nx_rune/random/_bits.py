"""Bits and the float samplers read from them: bits, uniform, normal, truncated_normal, gumbel."""
from __future__ import annotations

import numpy as np

from nx_rune.backend.random import _gumbel, _normal, _truncated_normal, _truncated_range, _uniform
from nx_rune.config import x64_enabled
from nx_rune.dtypes import default_float
from nx_rune.random._common import (
    _check_param_shape,
    _dtype,
    _key_arg,
    _out,
    _out_any,
    _shape,
    _traced,
    _val,
)
from nx_rune.random._traced import (
    _bind_sample,
    _cast,
    _static_params,
    _t_bits,
    _t_gumbel,
    _t_normal,
    _t_truncated_from_unit_range,
    _t_truncated_normal,
    _t_uniform,
)
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike


def bits(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Uniform random bits: Tensor of ``shape`` and unsigned ``dtype`` (uint8/16/32/64;
    default uint32, uint64 in x64 mode)."""
    k = _key_arg(key)
    dt = _dtype(dtype, np.uint64 if x64_enabled() else np.uint32, "u", "bits")
    return _out_any(_t_bits(k, dt.itemsize * 8, _shape(shape)))


def uniform(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None,
            minval: ArrayLike = 0.0, maxval: ArrayLike = 1.0) -> Array:
    """Uniform floats in [minval, maxval): Tensor of ``shape``, float ``dtype`` (16/32/64;
    default the default float dtype: float32, float64 in x64 mode).

    ``minval``/``maxval`` (scalars or arrays broadcasting to ``shape``) are cast to ``dtype``;
    the samples are differentiable in them (d/dminval = 1 - u, d/dmaxval = u for the unit
    uniform u, as JAX).
    """
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "uniform")
    shape = _shape(shape)
    lo, hi = _val(minval, "minval"), _val(maxval, "maxval")
    _check_param_shape("uniform", shape, tuple(lo.shape), tuple(hi.shape))
    if isinstance(k, tuple) and not (_traced(lo) or _traced(hi)):
        return _out(_uniform(k, shape, dt, lo, hi))
    return _t_uniform(k, shape, dt, lo, hi)


def normal(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard normal samples (inverse CDF): Tensor of ``shape``, float or complex ``dtype``
    (default float32, float64 in x64 mode).

    A complex sample has independent real and imaginary parts of variance 1/2 each.
    """
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "fc", "normal")
    shape = _shape(shape)
    if isinstance(k, tuple):
        return _out(_normal(k, shape, dt))
    return _t_normal(k, shape, dt)


def truncated_normal(key: ArrayLike, lower: ArrayLike, upper: ArrayLike, shape: ShapeLike = (),
                     dtype: DTypeLike = None) -> Array:
    """Standard normal samples truncated to (lower, upper): Tensor of ``shape``, float ``dtype``
    (default float32, float64 in x64 mode).

    ``lower``/``upper`` broadcast to ``shape``; ``shape=None`` means their broadcast shape.
    The samples are differentiable in ``lower`` and ``upper`` (through erf, the uniform and
    erfinv, as JAX's).
    """
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "truncated_normal")
    lo = _cast(_val(lower, "lower"), dt)
    hi = _cast(_val(upper, "upper"), dt)
    if shape is None:
        shape = np.broadcast_shapes(tuple(lo.shape), tuple(hi.shape))
    else:
        shape = _shape(shape)
        _check_param_shape("truncated_normal", shape, tuple(lo.shape), tuple(hi.shape))
    if _traced(lo) or _traced(hi):
        return _t_truncated_normal(k, shape, dt, lo, hi)
    if isinstance(k, tuple):
        return _out(_truncated_normal(k, shape, dt, lo, hi))
    prm = _static_params(lo, hi)
    if prm is not None:
        return _bind_sample(k, "truncated_normal", shape, dt, prm)
    a, b, clip_lo, clip_hi = _truncated_range(dt, lo, hi)
    return _t_truncated_from_unit_range(k, shape, dt, a, b, clip_lo, clip_hi)


def gumbel(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard Gumbel samples ``-log(-log(u))``: Tensor of ``shape``, float ``dtype`` (default
    float32, float64 in x64 mode)."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "gumbel")
    shape = _shape(shape)
    if isinstance(k, tuple):
        return _out(_gumbel(k, shape, dt))
    return _t_gumbel(k, shape, dt)
