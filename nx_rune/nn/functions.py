"""JAX's ``jax.nn`` functions on nx_rune: activations, softmax and friends, ``one_hot``,
``standardize``.

Each follows ``jax.nn`` of JAX 0.10.2: the same signature, the same formula (so the same
values up to the last bits of the elementary functions), the same handling of inf and nan, and
JAX's derivatives where JAX defines its own (``relu`` and ``relu6`` have derivative 0 at their
kinks).  All are elementwise or reduce along ``axis`` only, so they work under ``jit``, ``vmap``
and every derivative transformation, to any order.

Functions whose JAX version returns floats turn integer and bool inputs into the default float
dtype first (JAX's rule); ``relu``, ``hard_tanh`` and ``identity`` keep an integer dtype.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from nx_rune import dtypes as _dtypes
from nx_rune import frontend as F
from nx_rune.autodiff.api import stop_gradient as _stop_gradient
from nx_rune.frontend import reductions as _reductions
from nx_rune.frontend._core import as_inexact, operand, reduction_axes
from nx_rune.scipy import special as _special
from nx_rune.typing import Array, ArrayLike, Axis, DTypeLike

__all__ = ["relu", "relu6", "identity", "sigmoid", "log_sigmoid", "softplus", "sparse_plus",
           "sparse_sigmoid", "soft_sign", "silu", "swish", "mish", "elu", "selu", "celu",
           "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish", "gelu",
           "squareplus", "glu", "log1mexp", "tanh", "softmax", "log_softmax", "logsumexp",
           "logmeanexp", "standardize", "one_hot", "dot_product_attention"]

tanh = F.tanh


def _mask(where, x, name):
    """The boolean mask ``where`` broadcast to x's shape."""
    m = operand(where)
    if m.dtype != np.bool_:
        raise TypeError(f"{name}: where: expected a boolean mask, got dtype {m.dtype}")
    try:
        return F.broadcast_to(m, x.shape)
    except ValueError:
        raise ValueError(f"{name}: where: shape {m.shape} does not broadcast to x's shape "
                         f"{x.shape}") from None


# -- activations -----------------------------------------------------------------------------

def identity(x: ArrayLike) -> Array:
    """x unchanged (as an array): same shape and dtype."""
    return operand(x)


def relu(x: ArrayLike) -> Array:
    """max(x, 0) elementwise: same shape and dtype (ints stay ints); nan stays nan.  Its
    derivative at 0 is 0, as JAX defines it."""
    return F.relu(x)


def relu6(x: ArrayLike) -> Array:
    """min(max(x, 0), 6) elementwise, float dtype, same shape; nan stays nan.  Its derivative is
    0 at the kinks 0 and 6, as JAX defines it."""
    x = as_inexact(x)
    z = F.zeros_like(x)
    return F.where(F.less_equal(x, 0), z, F.where(F.greater_equal(x, 6), F.full_like(x, 6), x))


def sigmoid(x: ArrayLike) -> Array:
    """1 / (1 + exp(-x)) elementwise, float dtype, same shape; no overflow for large |x|."""
    return F.sigmoid(x)


def log_sigmoid(x: ArrayLike) -> Array:
    """log(sigmoid(x)) = -softplus(-x) elementwise, float dtype, same shape."""
    return F.negative(F.softplus(F.negative(as_inexact(x))))


def softplus(x: ArrayLike) -> Array:
    """log(1 + exp(x)) elementwise (as JAX's ``logaddexp(x, 0)``), float dtype, same shape;
    softplus(inf) = inf, softplus(-inf) = 0.  Its derivative is sigmoid(x)."""
    return F.softplus(x)


def sparse_plus(x: ArrayLike) -> Array:
    """0 for x <= -1, (x + 1)**2 / 4 for -1 < x < 1, x for x >= 1; float dtype, same shape."""
    x = as_inexact(x)
    inner = F.divide(F.square(F.add(x, 1.0)), 4)
    return F.where(F.less_equal(x, -1.0), F.zeros_like(x),
                   F.where(F.greater_equal(x, 1.0), x, inner))


def sparse_sigmoid(x: ArrayLike) -> Array:
    """0.5 * clip(x + 1, 0, 2) (the derivative of ``sparse_plus``), float dtype, same shape."""
    x = as_inexact(x)
    return F.multiply(0.5, F.clip(F.add(x, 1.0), 0.0, 2.0))


def soft_sign(x: ArrayLike) -> Array:
    """x / (|x| + 1) elementwise, float dtype, same shape."""
    x = as_inexact(x)
    return F.divide(x, F.add(F.abs(x), 1))


def silu(x: ArrayLike) -> Array:
    """x * sigmoid(x) (SiLU, also called swish) elementwise, float dtype, same shape."""
    x = as_inexact(x)
    return F.multiply(x, F.sigmoid(x))


swish = silu


def mish(x: ArrayLike) -> Array:
    """x * tanh(softplus(x)) elementwise, float dtype, same shape."""
    x = as_inexact(x)
    return F.multiply(x, F.tanh(F.softplus(x)))


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """x for x > 0, alpha * (exp(x) - 1) otherwise (alpha a scalar or an array broadcasting with
    x); float dtype, x's shape broadcast with alpha's."""
    x = as_inexact(x)
    pos = F.greater(x, 0)
    # expm1 of the non-positive part only, so that large x gives no inf (and no nan derivative)
    return F.where(pos, x, F.multiply(alpha, F.expm1(F.where(pos, F.zeros_like(x), x))))


def selu(x: ArrayLike) -> Array:
    """scale * elu(x, alpha) with JAX's constants scale = 1.0507009873554804934 and
    alpha = 1.6732632423543772848; float dtype, same shape."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return F.multiply(scale, elu(x, alpha))


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha) elementwise (continuously differentiable
    ELU); float dtype, x's shape broadcast with alpha's."""
    x = as_inexact(x)
    return F.add(F.maximum(x, 0.0), F.multiply(alpha, F.expm1(F.divide(F.minimum(x, 0.0),
                                                                         alpha))))


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 1e-2) -> Array:
    """x for x >= 0, negative_slope * x otherwise; float dtype, x's shape broadcast with
    negative_slope's."""
    x = as_inexact(x)
    return F.where(F.greater_equal(x, 0), x, F.multiply(negative_slope, x))


def hard_tanh(x: ArrayLike) -> Array:
    """-1 for x < -1, x for -1 <= x <= 1, 1 for x > 1; same shape and dtype."""
    x = operand(x)
    return F.where(F.greater(x, 1), F.ones_like(x),
                   F.where(F.less(x, -1), F.full_like(x, -1), x))


def hard_sigmoid(x: ArrayLike) -> Array:
    """relu6(x + 3) / 6 elementwise, float dtype, same shape."""
    return F.divide(relu6(F.add(as_inexact(x), 3.0)), 6.0)


def hard_silu(x: ArrayLike) -> Array:
    """x * hard_sigmoid(x) (also called hard_swish), float dtype, same shape."""
    x = as_inexact(x)
    return F.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """The Gaussian error linear unit, float dtype, same shape.

    approximate=True (JAX's default): x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)));
    approximate=False: x/2 * erfc(-x / sqrt(2)), the exact x * Phi(x).
    """
    if not isinstance(approximate, (bool, np.bool_)):
        raise TypeError(f"gelu: approximate: expected a bool, got {type(approximate).__name__}")
    x = as_inexact(x)
    if approximate:
        c = np.sqrt(2 / np.pi).astype(x.dtype)
        cube = F.multiply(F.multiply(x, x), x)
        inner = F.multiply(c, F.add(x, F.multiply(0.044715, cube)))
        cdf = F.multiply(0.5, F.add(1.0, F.tanh(inner)))
        return F.multiply(x, cdf)
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return F.multiply(F.multiply(0.5, x), _special.erfc(F.multiply(F.negative(x), sqrt_half)))


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Array:
    """(x + sqrt(x**2 + b)) / 2 elementwise (b >= 0 sets the smoothness), float dtype, x's
    shape broadcast with b's."""
    x = as_inexact(x)
    return F.divide(F.add(x, F.sqrt(F.add(F.square(x), b))), 2)


def glu(x: ArrayLike, axis: int = -1) -> Array:
    """The gated linear unit: x's two halves a, b along ``axis``, a * sigmoid(b).  x.shape[axis]
    must be even; the result has half of it there.  Float dtype."""
    x = as_inexact(x)
    ax = reduction_axes(x, operator.index(axis))[0]
    if x.shape[ax] % 2:
        raise ValueError(f"glu: axis {axis}: the size along it must be even (to split it in two "
                         f"halves), got shape {x.shape}")
    a, b = F.split(x, 2, ax)
    return F.multiply(a, F.sigmoid(b))


def log1mexp(x: ArrayLike) -> Array:
    """log(1 - exp(-x)) elementwise, accurate for small and large x (defined for x >= 0); float
    dtype, same shape."""
    x = as_inexact(x)
    small = F.less(x, math.log(2.0))
    # each branch sees only the arguments it is chosen for (1.0 elsewhere), so that the branch
    # not taken gives no inf * 0 = nan in the derivative (at 0 it is inf, as JAX's)
    one = F.ones_like(x)
    near = F.where(small, x, one)
    far = F.where(small, one, x)
    return F.where(small, F.log(F.negative(F.expm1(F.negative(near)))),
                   F.log1p(F.negative(F.exp(F.negative(far)))))


# -- softmax and log-sum-exp -----------------------------------------------------------------

def softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """exp(x) / sum(exp(x)) along ``axis`` (an int, a tuple of ints or None for all axes),
    computed from x - max(x): no overflow.  Same shape as x, float dtype.

    ``where``: a boolean mask broadcasting to x's shape; only the entries where it is True take
    part, and the others are 0 in the result.  As in JAX, a slice holding +inf (or only -inf)
    gives nan.  The derivative is the stable y * (dx - sum(y * dx)).
    """
    if where is None:
        return F.softmax(x, axis)
    x = as_inexact(x)
    mask = _mask(where, x, "softmax")
    axes = reduction_axes(x, axis)
    safe = F.where(mask, x, F.full_like(x, -np.inf))
    e = F.exp(F.subtract(safe, _reductions.shift_max(safe, axes)))
    total = F.sum(F.where(mask, e, F.zeros_like(e)), axes, keepdims=True)
    return F.where(mask, F.divide(e, total), F.zeros_like(e))


def log_softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """x - logsumexp(x) along ``axis`` (int, tuple or None), computed from x - max(x) so that
    large entries keep their precision.  Same shape as x, float dtype.  ``where``: a boolean
    mask (broadcasting to x's shape) of the entries that take part; the others are -inf."""
    if where is None:
        return F.log_softmax(x, axis)
    x = as_inexact(x)
    mask = _mask(where, x, "log_softmax")
    axes = reduction_axes(x, axis)
    safe = F.where(mask, x, F.full_like(x, -np.inf))
    shifted = F.subtract(safe, _reductions.shift_max(safe, axes))
    e = F.where(mask, F.exp(shifted), F.zeros_like(shifted))
    result = F.subtract(shifted, F.log(F.sum(e, axes, keepdims=True)))
    return F.where(mask, result, F.full_like(result, -np.inf))


def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False,
              where: ArrayLike | None = None) -> Array | tuple[Array, Array]:
    """log(sum(b * exp(a))) over ``axis`` (None: all axes), computed without overflow.

    a: any shape; b: weights broadcasting with a (entries with weight 0 are left out);
    where: a boolean mask of the entries that take part.  Returns a's shape without the reduced
    axes (size 1 with keepdims), float dtype; with ``return_sign`` the pair (log|sum|,
    sign(sum)), otherwise a negative sum gives nan.  (``jax.nn.logsumexp``, which is
    ``jax.scipy.special.logsumexp``.)
    """
    if where is not None:
        a = as_inexact(a)
        if b is not None:
            a = F.broadcast_to(a, F.broadcast_shapes(a.shape, operand(b).shape))
        a = F.where(_mask(where, a, "logsumexp"), a, F.full_like(a, -np.inf))
    return _special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def logmeanexp(x: ArrayLike, axis: Axis = None, where: ArrayLike | None = None,
               keepdims: bool = False) -> Array:
    """log(mean(exp(x))) over ``axis`` = logsumexp(x) - log(n), n the number of entries that
    take part (those where ``where`` is True).  Shape as ``logsumexp``, float dtype."""
    x = as_inexact(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    axes = reduction_axes(x, axis)
    if where is None:
        n = _reductions.element_count(x, axes)
        return F.subtract(lse, np.log(np.asarray(n, dtype=lse.dtype)))
    mask = _mask(where, x, "logmeanexp")
    n = F.sum(F.astype(mask, lse.dtype), axes, keepdims=keepdims)
    return F.subtract(lse, F.log(n))


def _masked_mean(x, axes, mask):
    if mask is None:
        return F.mean(x, axes, keepdims=True)
    total = F.sum(F.where(mask, x, F.zeros_like(x)), axes, keepdims=True)
    return F.divide(total, F.sum(F.astype(mask, x.dtype), axes, keepdims=True))


def standardize(x: ArrayLike, axis: Axis = -1, mean: ArrayLike | None = None,
                variance: ArrayLike | None = None, epsilon: ArrayLike = 1e-5,
                where: ArrayLike | None = None, *, algorithm: str = "fast") -> Array:
    """(x - mean) / sqrt(variance + epsilon) along ``axis`` (int, tuple or None).

    mean, variance: given (broadcasting with x), or computed over ``axis`` (only where ``where``
    is True); algorithm "fast" (JAX's default) takes the variance as mean(x**2) - mean(x)**2
    clipped at 0, "stable" as mean((x - mean)**2).  Same shape as x, float dtype.
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: algorithm: expected 'fast' or 'stable', got "
                         f"{algorithm!r}")
    x = as_inexact(x)
    # Python numbers take x's dtype (as JAX's weak types), not a float32 of their own
    mean, variance, epsilon = (F.asarray(v, x.dtype) if isinstance(v, (int, float)) else v
                               for v in (mean, variance, epsilon))
    axes = reduction_axes(x, axis)
    mask = None if where is None else _mask(where, x, "standardize")
    if mean is None:
        mean = _masked_mean(x, axes, mask)
    if variance is None:
        if algorithm == "stable":
            variance = _masked_mean(F.square(F.subtract(x, mean)), axes, mask)
        else:
            variance = F.subtract(_masked_mean(F.square(x), axes, mask), F.square(mean))
            # the one-pass variance can come out slightly negative: clipped, as JAX does
            variance = F.maximum(variance, 0)
    return F.divide(F.subtract(x, mean), F.sqrt(F.add(variance, epsilon)))


def one_hot(x: Any, num_classes: int, *, dtype: DTypeLike = None, axis: int = -1) -> Array:
    """One-hot encoding: a new axis of length ``num_classes`` at ``axis`` (of the result), 1
    where its index equals x's entry and 0 elsewhere (so indices outside [0, num_classes) give
    all zeros).  x: integer indices, any shape; dtype: the result's (default: the default
    float dtype).  Shape: x's with num_classes inserted at ``axis``."""
    if isinstance(num_classes, (bool, np.bool_)):
        raise TypeError("one_hot: num_classes: expected an int, got bool")
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"one_hot: num_classes: expected a concrete int, got "
                        f"{type(num_classes).__name__}") from None
    if num_classes < 0:
        raise ValueError(f"one_hot: num_classes: must be >= 0, got {num_classes}")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"one_hot: axis: expected an int, got {axis!r} (named axes are not "
                        f"supported)")
    x = operand(x)
    ndim = x.ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for a result of {ndim} "
                         f"dimensions")
    axis = int(axis) % ndim
    dtype = _dtypes.default_float() if dtype is None else _dtypes.check_dtype(dtype)
    shape = [1] * ndim
    shape[axis] = num_classes
    classes = F.reshape(F.arange(num_classes, dtype=x.dtype), tuple(shape))
    return F.astype(F.equal(F.expand_dims(x, axis), classes), dtype)


# -- attention -------------------------------------------------------------------------------

def _check_attention_arg(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"dot_product_attention: {name} ndim should be {len(shape)}, but got "
                         f"{t.ndim} (shape {t.shape})")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"dot_product_attention: {name} dtype should be {dtype}, but got "
                         f"{t.dtype}")
    for want, got in zip(shape, t.shape):
        if want != -1 and got != want:
            raise ValueError(f"dot_product_attention: {name} shape should be {tuple(shape)} "
                             f"(-1: any), but got {t.shape}")


def _grouped(t, N, K, G):
    """A (B|1, N|1, T, S) bias or mask as (B|1, K|1, G|1, T, S): head n = k * G + g."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return F.reshape(t, (tb, 1, 1, tt, ts))
    if tn != N:
        raise ValueError(f"dot_product_attention: bias and mask need 1 or N = {N} heads on "
                         f"axis 1, got shape {t.shape}")
    return F.reshape(t, (tb, K, G, tt, ts))


def dot_product_attention(query: ArrayLike, key: ArrayLike, value: ArrayLike,
                          bias: ArrayLike | None = None, mask: ArrayLike | None = None, *,
                          scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: ArrayLike | None = None,
                          key_value_seq_lengths: ArrayLike | None = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Array | tuple[Array, Array]:
    """softmax(Q K^T * scale + bias) V, JAX's XLA implementation (grouped-query attention).

    query: (B, T, N, H); key, value: (B, S, K, H) with N a multiple of K (a head n attends with
    key/value head n // (N / K)); the batch axis may be left out of all three.  bias (added to
    the logits) and mask (boolean, False leaves a key out): broadcasting to (B, N, T, S), given
    with 4 axes or fewer.  scale: default 1 / sqrt(H); is_causal: query t sees keys s <= t;
    query_seq_lengths, key_value_seq_lengths: (B,) int32 valid lengths (padding beyond);
    local_window_size: (left, right) or one int, keys within that window of t.  Logits are
    computed in at least float32 and the softmax in float32, as JAX does.  Returns query's
    shape and dtype; with return_residual also the logsumexp of the logits, shape (B, T, N).
    implementation: None or "xla" ("cudnn" needs a GPU: NotImplementedError).
    """
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError("dot_product_attention: implementation='cudnn' needs "
                                      "cuDNN; nx_rune has the 'xla' implementation only")
        raise ValueError(f"dot_product_attention: unsupported implementation option: "
                         f"{implementation!r}")
    out_shape = operand(query).shape

    def four_d(t):
        t = operand(t)
        return F.reshape(t, (1,) * (4 - t.ndim) + t.shape) if t.ndim < 4 else t
    q, k, v = four_d(query), four_d(key), four_d(value)
    bias = None if bias is None else four_d(bias)
    mask = None if mask is None else four_d(mask)
    q_len = None if query_seq_lengths is None else operand(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else operand(key_value_seq_lengths)
    if isinstance(local_window_size, (int, np.integer)):
        local_window_size = (int(local_window_size), int(local_window_size))
    B, S, K, H = k.shape
    _check_attention_arg(v, [B, S, K, H], k.dtype, "value")
    _check_attention_arg(q, [B, -1, -1, H], k.dtype, "query")
    _check_attention_arg(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_attention_arg(bias, [-1] * 4, None, "bias")
    _check_attention_arg(q_len, [B], np.dtype(np.int32), "query_seq_lengths")
    _check_attention_arg(kv_len, [B], np.dtype(np.int32), "key_value_seq_lengths")
    T, N = q.shape[1], q.shape[2]
    if N % K:
        raise ValueError(f"dot_product_attention: the number of query heads must be a "
                         f"multiple of key/value heads, but got {N} vs {K}")
    G = N // K
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    logits_dtype = np.promote_types(q.dtype, np.float32)
    qg = F.astype(F.reshape(q, (B, T, K, G, H)), logits_dtype)
    logits = F.einsum("btkgh,bskh->bkgts", qg, F.astype(k, logits_dtype))
    logits = F.multiply(logits, F.asarray(scale, logits_dtype))
    if bias is not None:
        logits = F.astype(F.add(logits, _grouped(bias, N, K, G)), logits_dtype)
    keep = None
    if mask is not None:
        keep = _grouped(mask, N, K, G)
    tq = F.reshape(F.arange(T), (T, 1))
    sk = F.reshape(F.arange(S), (1, S))
    extra = []
    if is_causal:
        extra.append(F.greater_equal(tq, sk))
    if local_window_size is not None:
        left, right = local_window_size
        extra.append(F.logical_and(F.less_equal(tq, F.add(sk, left)),
                                   F.greater_equal(tq, F.subtract(sk, right))))
    if q_len is not None or kv_len is not None:
        pad = F.ones((B, T, S), dtype=np.bool_)
        if q_len is not None:
            pad = F.logical_and(pad, F.less(F.reshape(F.arange(T), (1, T, 1)),
                                            F.reshape(q_len, (B, 1, 1))))
        if kv_len is not None:
            pad = F.logical_and(pad, F.less(F.reshape(F.arange(S), (1, 1, S)),
                                            F.reshape(kv_len, (B, 1, 1))))
        extra.append(F.reshape(pad, (B, 1, 1, T, S)))
    for m in extra:
        keep = m if keep is None else F.logical_and(keep, m)
    if keep is not None:
        # a large negative number, not -inf: a row with every key left out stays finite
        big = -0.7 * min(float(np.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = F.where(keep, logits, F.full_like(logits, big))
    logits = F.astype(logits, np.float32)
    probs = F.astype(F.softmax(logits, -1), k.dtype)
    encoded = F.einsum("bkgts,bskh->btkgh", probs, v)
    encoded = F.reshape(encoded, (B, T, N, H))
    if q_len is not None:
        valid = F.less(F.reshape(F.arange(T), (1, T)), F.reshape(q_len, (B, 1)))
        encoded = F.multiply(encoded, F.astype(F.reshape(valid, (B, T, 1, 1)), encoded.dtype))
    encoded = F.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    lse = F.astype(_special.logsumexp(logits, axis=-1), k.dtype)          # (B, K, G, T)
    lse = F.reshape(F.permute_dims(lse, (0, 3, 1, 2)), (B, T, N))
    return encoded, F.reshape(_stop_gradient(lse), out_shape[:-1])


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
