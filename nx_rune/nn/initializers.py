"""JAX's ``jax.nn.initializers`` on nx_rune: functions ``init(key, shape, dtype) -> array``
that make the initial weights of a layer, and the builders that return them.

The random ones draw with :mod:`nx_rune.random` exactly as JAX 0.10.2 draws with
``jax.random`` (same key use, same formula, same dtype at each step), so they give JAX's
values: bit for bit for the uniform ones (``uniform``, ``*_uniform``, ``variance_scaling(...,
"uniform")``), and to the last bit or two for those that go through ``normal`` or
``truncated_normal`` (see :mod:`nx_rune.random`); ``orthogonal`` goes through a QR
decomposition, so it agrees with JAX to rounding.

``key``: a key from :func:`nx_rune.random.key` (a uint32 array of shape (2,)); ``shape``: a
tuple of ints; ``dtype``: a float or complex dtype (default: the builder's ``dtype``, else the
default float dtype, float32 unless x64 is on).  ``out_sharding`` is accepted for JAX's
signature and must be None (nx_rune runs on one device).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from nx_rune import dtypes as _dtypes
from nx_rune import frontend as F
from nx_rune import random as _random
from nx_rune.frontend._core import normalize_shape
from nx_rune.frontend.linalg import qr as _qr
from nx_rune.typing import Array, ArrayLike, DTypeLike

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]


@runtime_checkable
class Initializer(Protocol):
    """What the builders return: ``init(key, shape, dtype=None, out_sharding=None) -> array``
    of ``shape`` and ``dtype``."""

    def __call__(self, key: Array, shape: Sequence[int], dtype: DTypeLike = None,
                 out_sharding: Any = None) -> Array:
        """The initial array of ``shape`` and ``dtype``, drawn with ``key``."""
        raise NotImplementedError


def _dtype(dtype, fname):
    dt = _dtypes.default_float() if dtype is None else _dtypes.check_dtype(dtype)
    if dt.kind not in "fc":
        raise TypeError(f"{fname}: dtype: expected a float or complex dtype, got {dt}")
    return dt


def _sharding(out_sharding, fname):
    if out_sharding is not None:
        raise NotImplementedError(f"{fname}: out_sharding: nx_rune runs on one device, so only "
                                  f"out_sharding=None is supported, got {out_sharding!r}")


def _real(value, name, fname):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray)) \
            and not hasattr(value, "shape"):
        raise TypeError(f"{fname}: {name}: expected a real number, got {type(value).__name__}")
    return value


def zeros(key: Array, shape: Sequence[int], dtype: DTypeLike = None,
          out_sharding: Any = None) -> Array:
    """An array of zeros of ``shape`` and ``dtype`` (default float); the key is not used."""
    _sharding(out_sharding, "zeros")
    return F.zeros(shape, _dtypes.default_float() if dtype is None else dtype)


def ones(key: Array, shape: Sequence[int], dtype: DTypeLike = None,
         out_sharding: Any = None) -> Array:
    """An array of ones of ``shape`` and ``dtype`` (default float); the key is not used."""
    _sharding(out_sharding, "ones")
    return F.ones(shape, _dtypes.default_float() if dtype is None else dtype)


def constant(value: ArrayLike, dtype: DTypeLike = None) -> Initializer:
    """An initializer giving arrays of ``shape`` filled with ``value`` (a scalar, or an array
    broadcasting to the shape); ``dtype``: its default dtype."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(out_sharding, "constant")
        return F.full(shape, value, _dtypes.default_float() if dtype is None else dtype)
    return init


def uniform(scale: ArrayLike = 1e-2, dtype: DTypeLike = None) -> Initializer:
    """An initializer drawing uniformly from [0, scale); ``dtype``: its default dtype."""
    _real(scale, "scale", "uniform")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(out_sharding, "uniform")
        dt = _dtype(dtype, "uniform")
        return F.multiply(_random.uniform(key, shape, dt), F.asarray(scale, dt))
    return init


def normal(stddev: ArrayLike = 1e-2, dtype: DTypeLike = None) -> Initializer:
    """An initializer drawing from the normal distribution of mean 0 and standard deviation
    ``stddev``; ``dtype``: its default dtype."""
    _real(stddev, "stddev", "normal")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(out_sharding, "normal")
        dt = _dtype(dtype, "normal")
        return F.multiply(_random.normal(key, shape, dt), F.asarray(stddev, dt))
    return init


def truncated_normal(stddev: ArrayLike = 1e-2, dtype: DTypeLike = None,
                     lower: ArrayLike = -2.0, upper: ArrayLike = 2.0) -> Initializer:
    """An initializer drawing stddev * z, z from the standard normal truncated to
    (lower, upper) (no variance correction for the truncation: as JAX)."""
    for name, v in (("stddev", stddev), ("lower", lower), ("upper", upper)):
        _real(v, name, "truncated_normal")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(out_sharding, "truncated_normal")
        dt = _dtype(dtype, "truncated_normal")
        return F.multiply(_random.truncated_normal(key, lower, upper, shape, dt),
                          F.asarray(stddev, dt))
    return init


def _axes_arg(axes, name):
    if isinstance(axes, (bool, np.bool_)):
        raise TypeError(f"variance_scaling: {name}: expected an int or a sequence of ints, got "
                        f"{axes!r}")
    if isinstance(axes, (int, np.integer)):
        return int(axes)
    try:
        return tuple(int(a) for a in axes if not isinstance(a, (bool, np.bool_)))
    except TypeError:
        raise TypeError(f"variance_scaling: {name}: expected an int or a sequence of ints, got "
                        f"{axes!r}") from None


def _size(shape, axes, name):
    try:
        if isinstance(axes, int):
            return shape[axes]
        return math.prod(shape[i] for i in axes)
    except IndexError:
        raise ValueError(f"variance_scaling: {name}={axes!r} is out of range for shape "
                         f"{shape}") from None


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weights shape: the sizes of the input and output axes, each times
    the receptive field (the product of the axes that are neither input, output nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"variance_scaling: cannot compute the input and output sizes of a "
                         f"{len(shape)}-dimensional weights shape {shape} with the default "
                         f"in_axis: it must be at least 2-D, or give in_axis explicitly")
    in_size = _size(shape, in_axis, "in_axis")
    out_size = _size(shape, out_axis, "out_axis")
    batch_size = _size(shape, batch_axis, "batch_axis")
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_uniform(key, shape, dtype):
    # points of the unit-variance disk: radius sqrt(2 u), angle 2 pi u'
    key_r, key_theta = _random.split(key)
    real = np.array(0, dtype).real.dtype
    r = F.astype(F.sqrt(F.multiply(2, _random.uniform(key_r, shape, real))), dtype)
    theta = F.multiply(2 * np.pi, F.astype(_random.uniform(key_theta, shape, real), dtype))
    return F.multiply(r, F.exp(F.multiply(1j, theta)))


def _complex_truncated_normal(key, upper, shape, dtype):
    # a complex normal of unit variance with its modulus truncated to ``upper``
    key_r, key_theta = _random.split(key)
    real = np.array(0, dtype).real.dtype
    t = F.multiply(F.subtract(1, F.exp(F.asarray(-(upper ** 2), dtype))),
                   F.astype(_random.uniform(key_r, shape, real), dtype))
    r = F.sqrt(F.negative(F.log(F.subtract(1, t))))
    theta = F.multiply(2 * np.pi, F.astype(_random.uniform(key_theta, shape, real), dtype))
    return F.multiply(r, F.exp(F.multiply(1j, theta)))


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale: ArrayLike, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: DTypeLike = None
                     ) -> Initializer:
    """An initializer whose samples have mean 0 and variance scale / n, n from the weights
    shape by ``mode``: "fan_in" (the input size), "fan_out" (the output size), "fan_avg"
    (their mean) or "fan_geo_avg" (their geometric mean).

    distribution: "truncated_normal" (a normal truncated at two standard deviations, rescaled
    to the variance), "normal", or "uniform" (an interval; for a complex dtype a disk).
    in_axis, out_axis, batch_axis: the axes (an int or a sequence) of the input and output
    sizes and of batch axes that do not count; the remaining axes are the receptive field
    (a convolution's kernel window), which multiplies both sizes.
    """
    if mode not in _MODES:
        raise ValueError(f"variance_scaling: invalid mode {mode!r}: expected one of {_MODES}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"variance_scaling: invalid distribution {distribution!r}: expected "
                         f"one of {_DISTRIBUTIONS}")
    _real(scale, "scale", "variance_scaling")
    in_axis = _axes_arg(in_axis, "in_axis")
    out_axis = _axes_arg(out_axis, "out_axis")
    batch_axis = _axes_arg(batch_axis, "batch_axis")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(out_sharding, "variance_scaling")
        shape = normalize_shape(shape)
        dt = _dtype(dtype, "variance_scaling")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = F.asarray(scale / denominator, dt)
        if distribution == "truncated_normal":
            if dt.kind == "f":
                # .8796... is the standard deviation of a standard normal truncated to (-2, 2)
                stddev = F.divide(F.sqrt(variance), F.asarray(.87962566103423978, dt))
                return F.multiply(_random.truncated_normal(key, -2, 2, shape, dt), stddev)
            stddev = F.divide(F.sqrt(variance), F.asarray(.95311164380491208, dt))
            return F.multiply(_complex_truncated_normal(key, 2, shape, dt), stddev)
        if distribution == "normal":
            return F.multiply(_random.normal(key, shape, dt), F.sqrt(variance))
        if dt.kind == "f":
            return F.multiply(_random.uniform(key, shape, dt, -1),
                              F.sqrt(F.multiply(3, variance)))
        return F.multiply(_complex_uniform(key, shape, dt), F.sqrt(variance))
    return init


def _specialised(scale, mode, distribution, doc):
    def builder(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: int | Sequence[int] = (), dtype: DTypeLike = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    builder.__doc__ = doc + (" in_axis, out_axis, batch_axis and dtype as in "
                             ":func:`variance_scaling`.")
    return builder


glorot_uniform = _specialised(1.0, "fan_avg", "uniform",
                              "Glorot (Xavier) uniform: ``variance_scaling(1.0, 'fan_avg', "
                              "'uniform')``.")
glorot_uniform.__name__ = glorot_uniform.__qualname__ = "glorot_uniform"
glorot_normal = _specialised(1.0, "fan_avg", "truncated_normal",
                             "Glorot (Xavier) normal: ``variance_scaling(1.0, 'fan_avg', "
                             "'truncated_normal')``.")
glorot_normal.__name__ = glorot_normal.__qualname__ = "glorot_normal"
lecun_uniform = _specialised(1.0, "fan_in", "uniform",
                             "LeCun uniform: ``variance_scaling(1.0, 'fan_in', 'uniform')``.")
lecun_uniform.__name__ = lecun_uniform.__qualname__ = "lecun_uniform"
lecun_normal = _specialised(1.0, "fan_in", "truncated_normal",
                            "LeCun normal: ``variance_scaling(1.0, 'fan_in', "
                            "'truncated_normal')``.")
lecun_normal.__name__ = lecun_normal.__qualname__ = "lecun_normal"
he_uniform = _specialised(2.0, "fan_in", "uniform",
                          "He (Kaiming) uniform: ``variance_scaling(2.0, 'fan_in', "
                          "'uniform')``.")
he_uniform.__name__ = he_uniform.__qualname__ = "he_uniform"
he_normal = _specialised(2.0, "fan_in", "truncated_normal",
                         "He (Kaiming) normal: ``variance_scaling(2.0, 'fan_in', "
                         "'truncated_normal')``.")
he_normal.__name__ = he_normal.__qualname__ = "he_normal"
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def _orthogonal_matrix(key, n, m, dtype):
    # jax.random.orthogonal(key, n, (), dtype, m): Q of the QR decomposition of a normal
    # (max(n, m), min(n, m)) matrix, its columns' signs fixed by R's diagonal (Mezzadri 2007)
    z = _random.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = _qr(z)
    d = F.diagonal(r)
    x = F.multiply(q, F.expand_dims(F.sign(d), -2))
    return F.matrix_transpose(x) if n < m else x


def orthogonal(scale: ArrayLike = 1.0, column_axis: int = -1,
               dtype: DTypeLike = None) -> Initializer:
    """An initializer giving ``scale`` times a random orthogonal matrix (uniform over the
    orthogonal group): the shape, at least 2-D, is read as (rows, columns) with the columns
    along ``column_axis`` and the rows all other axes; when it is not square the rows or the
    columns (whichever are fewer) are orthonormal."""
    _real(scale, "scale", "orthogonal")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(out_sharding, "orthogonal")
        dt = _dtype(dtype, "orthogonal")
        shape = normalize_shape(shape)
        if len(shape) < 2:
            raise ValueError(f"orthogonal: the initializer needs at least a 2-D shape, got "
                             f"{shape}")
        if any(d == 0 for d in shape):
            return F.zeros(shape, dt)
        try:
            n_cols = shape[column_axis]
        except (IndexError, TypeError):
            raise ValueError(f"orthogonal: column_axis {column_axis!r} is out of range for "
                             f"shape {shape}") from None
        n_rows = math.prod(shape) // n_cols
        q = _orthogonal_matrix(key, n_rows, n_cols, dt)
        q = F.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = F.moveaxis(q, -1, column_axis)
        return F.multiply(F.asarray(scale, dt), q)
    return init


def delta_orthogonal(scale: ArrayLike = 1.0, column_axis: int = -1,
                     dtype: DTypeLike = None) -> Initializer:
    """An initializer for convolution kernels of shape (*window, in, out) with 1 to 3 window
    axes (3-D to 5-D shapes) and in <= out: zeros except at the window's centre, which holds
    an orthogonal (in, out) matrix (:func:`orthogonal` with ``scale`` and ``column_axis``)."""
    _real(scale, "scale", "delta_orthogonal")

    def init(key, shape, dtype=dtype, out_sharding=None):
        _sharding(out_sharding, "delta_orthogonal")
        dt = _dtype(dtype, "delta_orthogonal")
        shape = normalize_shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"delta_orthogonal: the initializer needs a 3-D, 4-D or 5-D "
                             f"shape, got {shape}")
        if shape[-1] < shape[-2]:
            raise ValueError(f"delta_orthogonal: fan_in (shape[-2] = {shape[-2]}) must be at "
                             f"most fan_out (shape[-1] = {shape[-1]}), got shape {shape}")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return F.zeros(shape, dt).at[centre].set(ortho)
    return init


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
