"""Discrete samplers: randint, bernoulli, categorical, permutation, choice."""
from __future__ import annotations

import numpy as np

from nx_rune import frontend as _F
from nx_rune.backend.random import _gumbel, _permutation, _randint, _shuffle, _uniform
from nx_rune.dtypes import default_float, default_int
from nx_rune.random._bits import uniform as _uniform_public
from nx_rune.random._common import (
    _axis,
    _check_param_shape,
    _dtype_of,
    _float_dtype_of,
    _int_param,
    _key_arg,
    _out,
    _out_any,
    _shape,
    _size,
    _static_int,
    _traced,
    _val,
)
from nx_rune.random._traced import (
    _t_choice_index,
    _t_gumbel,
    _t_permutation,
    _t_randint,
    _t_shuffle,
    _t_uniform,
)
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike


def randint(key: ArrayLike, shape: ShapeLike, minval: ArrayLike, maxval: ArrayLike,
            dtype: DTypeLike = None) -> Array:
    """Uniform integers in [minval, maxval): Tensor of ``shape``, integer ``dtype`` (default
    int32, int64 in x64 mode).

    ``minval``/``maxval`` broadcast to ``shape`` and are clipped to ``dtype``'s range
    (``maxval`` one past it is allowed: ``randint(k, s, 0, 256, uint8)`` covers all bytes).
    """
    k = _key_arg(key)
    dt = np.dtype(default_int() if dtype is None else dtype)
    if dt.kind not in "iu":
        raise TypeError(f"dtype of randint must be an integer dtype, got {dt}")
    shape = _shape(shape)
    lo, hi = _int_param(minval, "minval"), _int_param(maxval, "maxval")
    _check_param_shape("randint", shape, tuple(lo.shape), tuple(hi.shape))
    traced = not isinstance(k, tuple) or _traced(lo) or _traced(hi)
    sample = _t_randint if traced else _randint
    wrap = _out_any if traced else _out
    if dt.itemsize < 4:
        # JAX samples 8- and 16-bit integers as int32 and casts.
        info = np.iinfo(dt)
        clip = _F.clip if traced else np.clip
        lo = clip(lo.astype(np.int32), np.int32(info.min), np.int32(info.max))
        hi = clip(hi.astype(np.int32), np.int32(info.min), np.int32(info.max + 1))
        return wrap(sample(k, shape, lo, hi, np.dtype(np.int32)).astype(dt))
    return wrap(sample(k, shape, lo, hi, dt))


def bernoulli(key: ArrayLike, p: ArrayLike = 0.5, shape: ShapeLike | None = None) -> Array:
    """Booleans that are True with probability ``p``: bool Tensor of ``shape`` (default p's).

    ``p`` must be floating; a Python float is of the default float dtype (float32; float64 in
    x64 mode).
    """
    k = _key_arg(key)
    parr = _val(p, "p")
    if type(p) is float:                # weakly typed (np.float64 is a float too)
        parr = parr.astype(default_float())
    if _dtype_of(parr).kind != "f":
        raise TypeError(f"p of bernoulli must have a floating dtype, got {parr.dtype}")
    if shape is None:
        shape = tuple(parr.shape)
    else:
        shape = _shape(shape)
        _check_param_shape("bernoulli", shape, tuple(parr.shape))
    if isinstance(k, tuple) and not _traced(parr):
        return _out(_uniform(k, shape, parr.dtype) < parr)
    return _t_uniform(k, shape, _dtype_of(parr)) < parr


def categorical(key: ArrayLike, logits: ArrayLike, axis: int = -1,
                shape: ShapeLike | None = None) -> Array:
    """Samples of the categories of ``softmax(logits, axis)`` (Gumbel-max): Tensor of the
    default int dtype (int32; int64 in x64 mode).

    The result has ``shape`` (default: ``logits.shape`` without ``axis``); extra leading
    dimensions in ``shape`` draw that many independent samples per distribution.
    """
    k = _key_arg(key)
    arr = _val(logits, "logits")
    lshape = tuple(arr.shape)
    if _dtype_of(arr).kind != "f":
        raise TypeError(f"logits must have a floating dtype, got {arr.dtype}")
    if not lshape:
        raise ValueError("logits must have at least one dimension")
    ax = _axis(axis, len(lshape))
    batch = lshape[:ax] + lshape[ax + 1:]
    if shape is None:
        shape = batch
    else:
        shape = _shape(shape)
        _check_param_shape("categorical", shape, batch)
    prefix = shape[:len(shape) - len(batch)]
    noise_shape = list(shape[len(prefix):])
    noise_shape.insert(ax, lshape[ax])
    if isinstance(k, tuple) and not _traced(arr):
        scores = _gumbel(k, (*prefix, *noise_shape), arr.dtype) + arr
        return _out(np.argmax(scores, axis=ax - arr.ndim).astype(default_int()))
    scores = _t_gumbel(k, (*prefix, *noise_shape), _dtype_of(arr)) + arr
    return _F.argmax(scores, axis=ax - len(lshape)).astype(default_int())


def permutation(key: ArrayLike, x: int | ArrayLike, axis: int = 0,
                independent: bool = False) -> Array:
    """A random permutation of ``arange(x)`` (int x) or of ``x`` along ``axis``: Tensor.

    With ``independent=True`` every 1-D slice along ``axis`` is shuffled on its own.  The
    result is differentiable in ``x`` (a gather of its entries).
    """
    k = _key_arg(key)
    if _traced(x) and x.ndim == 0:
        _static_int(x, "x")
    arr = _val(x, "x")
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"x must be an integer or an array, got {arr.dtype}")
        ints = np.arange(int(arr), dtype=default_int())
        if isinstance(k, tuple):
            return _out(_shuffle(k, ints, 0))
        return _t_shuffle(k, ints, 0)
    ax = _axis(axis, arr.ndim)
    if isinstance(k, tuple) and not _traced(arr):
        return _out(_permutation(k, arr, ax, independent))
    return _t_permutation(k, arr, ax, independent)


def choice(key: ArrayLike, a: int | ArrayLike, shape: ShapeLike = (), replace: bool = True,
           p: ArrayLike | None = None, axis: int = 0) -> Array:
    """Random draws from ``a`` (an array, or an int n for ``arange(n)``) along ``axis``.

    Returns a Tensor of ``shape`` (for an array: ``a.shape`` with ``axis`` replaced by
    ``shape``). ``p``: optional probabilities of the entries (1-D, length ``a.shape[axis]``).
    """
    k = _key_arg(key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape of choice must be a sequence, got {shape!r}")
    shape = _shape(shape)
    if _traced(a) and a.ndim == 0:
        _static_int(a, "a")
    arr = _val(a, "a")
    it = default_int()
    if isinstance(a, int):
        info = np.iinfo(it)
        if not info.min <= a <= info.max:  # JAX refuses it too; a wrap would sample a % 2**32
            raise ValueError(f"a: {a} does not fit in {it}, the default integer dtype (x64 "
                             f"mode: int64); pass a smaller population or an array")
        arr = arr.astype(it)
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"a must be an integer or an array, got {arr.dtype}")
        n_inputs = int(arr)
    else:
        axis = _axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = _size(shape)
    if n_draws == 0:
        return _out(np.zeros(shape, dtype=arr.dtype))
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"cannot take a larger sample (size {n_draws}) than the population "
                         f"(size {n_inputs}) when replace=False")
    pv = None if p is None else _val(p, "p")
    traced = not isinstance(k, tuple) or _traced(arr) or _traced(pv)
    if not traced:
        take, perm, randint_, index = np.take, _permutation, _randint, _choice_index
    else:
        take, perm, randint_, index = _F.take, _t_permutation, _t_randint, _t_choice_index
    if pv is not None:
        ind = index(k, pv, n_inputs, shape, n_draws, replace)
        result = ind if arr.ndim == 0 else take(arr, ind, axis=axis)
    elif replace:
        ind = randint_(k, shape, np.asarray(0, it), np.asarray(n_inputs, it), it)
        result = ind if arr.ndim == 0 else take(arr, ind, axis=axis)
    else:
        pool, ax = (arr, axis) if arr.ndim else (np.arange(n_inputs, dtype=it), 0)
        result = take(perm(k, pool, ax, False), np.arange(n_draws), axis=ax)
    if arr.ndim == 0:
        out_shape = shape
    else:
        out_shape = tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:])
    if traced:
        return _F.reshape(result, out_shape)
    return _out(result.reshape(out_shape))


def _choice_index(k, p, n_inputs, shape, n_draws, replace):
    p = p.astype(_float_dtype_of(p))
    if p.shape != (n_inputs,):
        raise ValueError(f"p must be None or a 1-D array of the same size as a.shape[axis] "
                         f"({n_inputs}), got shape {p.shape}")
    if replace:
        cdf = np.cumsum(p, dtype=p.dtype)
        r = cdf[-1] * (p.dtype.type(1) - _uniform(k, shape, p.dtype))
        return np.searchsorted(cdf, r).astype(default_int())
    with np.errstate(divide="ignore"):
        g = _gumbel(k, (n_inputs,), p.dtype) + np.log(p)
    # lax.top_k: largest first, ties to the lower index.
    return np.argsort(-g, kind="stable")[:n_draws].astype(default_int())


def rademacher(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Random signs -1 or +1 with equal probability (``2 * bernoulli(key, 0.5) - 1``): Tensor
    of ``shape`` and ``dtype`` (default int32, int64 in x64 mode)."""
    dt = np.dtype(default_int() if dtype is None else dtype)
    b = bernoulli(key, 0.5, _shape(shape))
    return (b.astype(dt) * dt.type(2) - dt.type(1)).astype(dt)


def geometric(key: ArrayLike, p: ArrayLike, shape: ShapeLike | None = None,
              dtype: DTypeLike = None) -> Array:
    """Geometric samples (trials to the first success, >= 1) of success probability ``p``:
    Tensor of ``shape`` (default p's) and integer ``dtype`` (default int32, int64 in x64
    mode)."""
    k = _key_arg(key)
    dt = np.dtype(default_int() if dtype is None else dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to geometric must be an int dtype, got {dt}")
    pv = _val(p, "p")
    if type(p) is float:
        pv = pv.astype(default_float())
    pv = pv.astype(_float_dtype_of(pv))
    if not _traced(pv):
        pv = _F.asarray(pv)
    if shape is None:
        shape = tuple(pv.shape)
    else:
        shape = _shape(shape)
        _check_param_shape("geometric", shape, tuple(pv.shape))
    fdt = _dtype_of(pv)
    u = _uniform_public(np.array(k, np.uint32) if isinstance(k, tuple) else k, shape, fdt)
    u = _F.where(u == 0, fdt.type(1), u)
    log_u = _F.log(u.astype(np.float64)).astype(fdt)
    log_q = _F.log1p((-pv).astype(np.float64)).astype(fdt)
    return (_F.floor(log_u / _F.broadcast_to(log_q, shape)) + fdt.type(1)).astype(dt)
