"""Neural-network functions: activations (relu, softplus, sigmoid), softmax and log_softmax,
and the sliding-window ops: ``unfold`` (im2col), ``fold`` (col2im) and ``conv2d``.

Layout (PyTorch's ``nn.functional.unfold``/``fold``): an image of shape (N, C, *spatial) and
columns of shape (N, C * prod(kernel_size), L).  Row ``c * K + k`` of the columns (K =
prod(kernel_size), kernel offsets k in C order) holds channel c under kernel offset k for each
of the L window positions (C order).  Along spatial axis d, window position o and kernel offset
j read the zero-padded image at ``o * stride[d] + j * dilation[d]``; there are
``(size[d] + 2 * padding[d] - dilation[d] * (kernel_size[d] - 1) - 1) // stride[d] + 1``
positions.  ``fold`` sums the columns back (the adjoint of ``unfold``, which is its VJP).
"""
from __future__ import annotations

import math
import operator
from typing import Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.frontend import reductions
from nx_rune.frontend._core import (
    as_inexact,
    astype,
    operand,
    promote,
    reduction_axes,
    zeros_like_t,
)
from nx_rune.frontend.elementwise import (
    add,
    divide,
    exp,
    greater,
    less_equal,
    log,
    log1p,
    negative,
    subtract,
    where,
)
from nx_rune.frontend.movement import reshape
from nx_rune.frontend.products import matmul
from nx_rune.primitives import bind
from nx_rune.typing import Array, ArrayLike, Axis

__all__ = ["relu", "softplus", "sigmoid", "softmax", "log_softmax", "unfold", "fold", "conv2d"]


def _window_arg(value, s, name, minimum):
    """``value`` (an int or one int per spatial axis) as a tuple of ``s`` ints >= minimum."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an int or a tuple of ints, got {value!r}")
    try:
        if isinstance(value, (int, np.integer)):
            values = (operator.index(value),) * s
        else:
            values = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"{name}: expected an int or a tuple of ints, got {value!r}") from None
    if len(values) != s:
        raise ValueError(f"{name}: expected an int or {s} ints (one per spatial axis), got "
                         f"{value!r}")
    for v in values:
        if v < minimum:
            raise ValueError(f"{name}: entries must be >= {minimum}, got {value!r}")
    return values


def _params(s, kernel_size, stride, dilation, padding):
    return (_window_arg(kernel_size, s, "kernel_size", 1), _window_arg(stride, s, "stride", 1),
            _window_arg(dilation, s, "dilation", 1), _window_arg(padding, s, "padding", 0))


def _counts(sizes, kernel, stride, dilation, padding, what):
    counts = []
    for d, n in enumerate(sizes):
        span = dilation[d] * (kernel[d] - 1) + 1
        room = n + 2 * padding[d]
        if span > room:
            raise ValueError(f"kernel_size: {kernel} with dilation {dilation} spans {span} along "
                             f"spatial axis {d}, more than {what} {tuple(sizes)} with padding "
                             f"{padding} allows ({room})")
        counts.append((room - span) // stride[d] + 1)
    return counts


def unfold(x: ArrayLike, kernel_size: int | Sequence[int], stride: int | Sequence[int] = 1,
           dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 0) -> Array:
    """Sliding windows as columns (im2col), as PyTorch's ``nn.functional.unfold``.

    x: ``(N, C, *spatial)`` with s >= 1 spatial axes, any dtype.  kernel_size, stride, dilation
    (>= 1) and padding (>= 0, zeros): an int or s ints.  Returns x's dtype and shape
    (N, C * prod(kernel_size), L), L = prod of the window counts per spatial axis.
    """
    x = operand(x)
    if x.ndim < 3:
        raise ValueError(f"x: expected shape (N, C, *spatial) with at least one spatial axis, "
                         f"got shape {x.shape}")
    s = x.ndim - 2
    ks, st, dl, pd = _params(s, kernel_size, stride, dilation, padding)
    _counts(x.shape[2:], ks, st, dl, pd, "x's spatial shape")
    return bind(P.unfold_p, x, kernel_size=ks, stride=st, dilation=dl, padding=pd)


def fold(cols: ArrayLike, output_size: int | Sequence[int], kernel_size: int | Sequence[int],
         stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
         padding: int | Sequence[int] = 0) -> Array:
    """Sum columns back into an image (col2im), as PyTorch's ``nn.functional.fold``.

    cols: (N, C * prod(kernel_size), L), numeric (not bool).  output_size: the spatial shape
    (an int or s ints; a bare int with every other argument an int means 2 spatial axes).
    kernel_size, stride, dilation, padding as in ``unfold``; L must equal the number of window
    positions that ``unfold`` gives for output_size.  Returns cols' dtype and shape
    ``(N, C, *output_size)``: each window summed into the positions it covers, padding dropped.
    """
    cols = operand(cols)
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        s = next((len(v) for v in (kernel_size, stride, dilation, padding)
                  if not isinstance(v, (int, np.integer))), 2)
    else:
        try:
            s = len(output_size)
        except TypeError:
            raise TypeError(f"output_size: expected an int or a tuple of ints, got "
                            f"{output_size!r}") from None
        if s == 0:
            raise ValueError("output_size: needs at least one spatial size, got ()")
    sizes = _window_arg(output_size, s, "output_size", 1)
    ks, st, dl, pd = _params(s, kernel_size, stride, dilation, padding)
    L = math.prod(_counts(sizes, ks, st, dl, pd, "output_size"))
    K = math.prod(ks)
    if cols.ndim != 3:
        raise ValueError(f"cols: expected shape (N, C * prod(kernel_size), L), got shape "
                         f"{cols.shape}")
    if cols.shape[1] % K:
        raise ValueError(f"cols: shape {cols.shape}: axis 1 ({cols.shape[1]}) is not a multiple "
                         f"of prod(kernel_size) = {K} (kernel_size {ks})")
    if cols.shape[2] != L:
        raise ValueError(f"cols: shape {cols.shape} has L = {cols.shape[2]} window positions, "
                         f"but output_size {sizes} with kernel_size {ks}, stride {st}, dilation "
                         f"{dl}, padding {pd} gives {L}")
    if dtypes.is_bool(cols.dtype):
        raise TypeError("cols: fold sums windows, so it needs a numeric dtype, got bool")
    return bind(P.fold_p, cols, output_size=sizes, kernel_size=ks, stride=st, dilation=dl,
                padding=pd)


def conv2d(x: ArrayLike, w: ArrayLike, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1) -> Array:
    """2-D cross-correlation (deep learning's "convolution"), via unfold + matmul.

    x: (N, C, H, W); w: (O, C, kh, kw); stride, padding (zeros), dilation: an int or a pair.
    Returns (N, O, H', W') with H' = (H + 2 * padding - dilation * (kh - 1) - 1) // stride + 1
    (W' likewise), in the promoted dtype of x and w:
    ``out[n, o, i, j] = sum_{c, p, q} x_pad[n, c, i*stride + p*dilation, j*stride + q*dilation]
    * w[o, c, p, q]``.
    """
    x, w = promote(x, w)
    if x.ndim != 4:
        raise ValueError(f"x: expected shape (N, C, H, W), got shape {x.shape}")
    if w.ndim != 4:
        raise ValueError(f"w: expected shape (O, C, kh, kw), got shape {w.shape}")
    if x.shape[1] != w.shape[1]:
        raise ValueError(f"x, w: channels differ: x shape {x.shape} has C = {x.shape[1]}, w shape "
                         f"{w.shape} has C = {w.shape[1]}")
    if dtypes.is_bool(x.dtype):
        x, w = astype(x, dtypes.int32), astype(w, dtypes.int32)
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    if kh == 0 or kw == 0:
        raise ValueError(f"w: kernel sizes must be >= 1, got shape {w.shape}")
    st, pd, dl = (_window_arg(v, 2, n, m) for v, n, m in
                  ((stride, "stride", 1), (padding, "padding", 0), (dilation, "dilation", 1)))
    ho, wo = _counts((H, W), (kh, kw), st, dl, pd, "x's spatial shape")
    cols = unfold(x, (kh, kw), st, dl, pd)                     # (N, C*kh*kw, L)
    out = matmul(reshape(w, (O, C * kh * kw)), cols)    # (N, O, L)
    return reshape(out, (N, O, ho, wo))


def relu(x: ArrayLike) -> Array:
    """max(x, 0), same shape and dtype; nan stays nan; its derivative at 0 is 0 (as in JAX and
    PyTorch)."""
    x = operand(x)
    if dtypes.is_inexact(x.dtype):
        return where(less_equal(x, 0), zeros_like_t(x), x)
    return where(greater(x, 0), x, zeros_like_t(x))


def softplus(x: ArrayLike) -> Array:
    """log(1 + exp(x)), stable for large |x| (softplus(inf) = inf); same shape, float dtype.  Its
    derivative is sigmoid(x) everywhere."""
    x = as_inexact(x)
    m = greater(x, 0)
    pos = where(m, x, zeros_like_t(x))
    # |x| selected by the same mask as pos, so the kinks of the two terms cancel at 0 (the
    # derivative there is sigmoid(0) = 0.5) and softplus(inf) = inf
    abs_x = where(m, x, negative(x))
    return add(log1p(exp(negative(abs_x))), pos)


def sigmoid(x: ArrayLike) -> Array:
    """1 / (1 + exp(-x)), as exp(-softplus(-x)): no overflow, finite derivatives; same shape,
    float dtype."""
    x = as_inexact(x)
    return exp(negative(softplus(negative(x))))


def _shifted(x, axes):
    """x - max(x) over ``axes``.  As JAX, a non-finite max is not replaced: a row holding +inf,
    or only -inf, gives nan throughout (inf - inf)."""
    return subtract(x, reductions.shift_max(x, axes))


def softmax(x: ArrayLike, axis: Axis = -1) -> Array:
    """exp(x) / sum(exp(x)) along ``axis`` (int or tuple), computed as e / sum(e) with
    e = exp(x - max(x)): no overflow, and as accurate as the exp.  Same shape as x; float dtype
    (ints and bools give float32).  A row holding +inf, or only -inf, gives nan, as in JAX."""
    x = as_inexact(x)
    axes = reduction_axes(x, axis)
    if not axes or reductions.element_count(x, axes) == 0:
        return exp(subtract(x, x))  # each element alone (or nothing at all)
    e = exp(_shifted(x, axes))
    return divide(e, reductions.sum(e, axes, keepdims=True))


def log_softmax(x: ArrayLike, axis: Axis = -1) -> Array:
    """x - logsumexp(x) along ``axis``, computed as (x - max) - log(sum(exp(x - max))) so that
    large inputs keep their precision.  Same shape as x; float dtype."""
    x = as_inexact(x)
    axes = reduction_axes(x, axis)
    if not axes or reductions.element_count(x, axes) == 0:
        return subtract(x, x)
    s = _shifted(x, axes)
    return subtract(s, log(reductions.sum(exp(s), axes, keepdims=True)))

