"""JAX's ``jax.example_libraries.stax`` on nx_rune: a small neural-network library of layers
as ``(init_fun, apply_fun)`` pairs.

``init_fun(rng, input_shape) -> (output_shape, params)`` (a key from ``nx_rune.random.key``; a
shape may hold -1 for a size not yet known, such as the batch); ``apply_fun(params, inputs,
**kwargs) -> outputs`` (``rng=key`` for :func:`Dropout`).  Layers: :func:`Dense`,
:func:`GeneralConv` / :func:`Conv`, :func:`GeneralConvTranspose` / :func:`ConvTranspose` /
:func:`Conv1DTranspose`, :func:`BatchNorm`, the elementwise ``Tanh``, ``Relu``, ``Exp``,
``LogSoftmax``, ``Softmax``, ``Softplus``, ``Sigmoid``, ``Elu``, ``LeakyRelu``, ``Selu``,
``Gelu``, the pooling layers :func:`MaxPool`, :func:`SumPool`, :func:`AvgPool`, ``Flatten``,
``Identity``, :func:`Dropout`, and the combinators :func:`serial`, :func:`parallel`,
:func:`FanOut`, ``FanInSum``, :func:`FanInConcat`, :func:`shape_dependent`.

Initialization draws the keys and weights as JAX's stax does, so a model initialised with the
same key has JAX's parameters (see :mod:`nx_rune.nn.initializers` for how exactly).
Convolutions take JAX's dimension numbers (e.g. ``('NHWC', 'HWIO', 'NHWC')``) and padding
("SAME", "VALID", "SAME_LOWER" or explicit (low, high) pairs) and run as windows
(:func:`nx_rune.unfold`) times a matrix product; pooling reduces the same windows.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from nx_rune import frontend as F
from nx_rune import lax, random
from nx_rune.nn import functions as _nn
from nx_rune.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "Conv1DTranspose",
           "ConvTranspose", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax",
           "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "MaxPool",
           "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum", "FanInConcat",
           "Dropout", "serial", "parallel", "shape_dependent", "glorot", "randn", "logsoftmax",
           "relu", "log_softmax", "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "selu",
           "gelu", "standardize"]

relu, log_softmax, softmax, softplus, sigmoid = (_nn.relu, _nn.log_softmax, _nn.softmax,
                                                 _nn.softplus, _nn.sigmoid)
elu, leaky_relu, selu, gelu, standardize = (_nn.elu, _nn.leaky_relu, _nn.selu, _nn.gelu,
                                            _nn.standardize)
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


# -- windows: padding rules, convolution and pooling --------------------------------------------

def _padtype_to_pads(in_shape, window_shape, strides, padding):
    """(low, high) padding per axis for "VALID", "SAME" (an odd amount's extra at the end) or
    "SAME_LOWER" (at the start), or explicit pairs checked and returned (lax.padtype_to_pads)."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * len(in_shape)
        if mode not in ("SAME", "SAME_LOWER"):
            raise ValueError(f"padding: expected 'VALID', 'SAME', 'SAME_LOWER' or a sequence "
                             f"of (low, high) pairs, got {padding!r}")
        pads = []
        for n, w, s in zip(in_shape, window_shape, strides):
            out = -(-n // s)
            size = max((out - 1) * s + w - n, 0)
            pads.append((size // 2, size - size // 2) if mode == "SAME"
                        else (size - size // 2, size // 2))
        return pads
    try:
        pads = [(operator.index(lo), operator.index(hi)) for lo, hi in padding]
    except (TypeError, ValueError):
        raise TypeError(f"padding: expected a padding string or (low, high) pairs of ints, got "
                        f"{padding!r}") from None
    if len(pads) != len(in_shape):
        raise ValueError(f"padding: expected {len(in_shape)} (low, high) pairs, got {padding!r}")
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise ValueError(f"padding: negative padding is not supported, got {padding!r}")
    return pads


def _dilate(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def _conv_perms(dimension_numbers, ndim):
    """(lhs axes as N, C, *spatial), (rhs axes as O, I, *spatial), (out axes as N, C,
    *spatial) of string dimension numbers; spatial axes pair by their letter."""
    try:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(f"dimension_numbers: expected three strings such as ('NHWC', 'HWIO', "
                        f"'NHWC'), got {dimension_numbers!r}") from None
    for name, spec, needed in (("lhs", lhs_spec, "NC"), ("rhs", rhs_spec, "OI"),
                               ("out", out_spec, "NC")):
        if not isinstance(spec, str) or len(spec) != ndim or len(set(spec)) != ndim \
                or any(c not in spec for c in needed):
            raise ValueError(f"dimension_numbers: the {name} spec {spec!r} must name each of "
                             f"the {ndim} axes once, {needed[0]} and {needed[1]} among them")
    spatial = [c for c in rhs_spec if c not in "OI"]
    if sorted(spatial) != sorted(c for c in lhs_spec if c not in "NC") or \
            sorted(spatial) != sorted(c for c in out_spec if c not in "NC"):
        raise ValueError(f"dimension_numbers: the spatial letters of {dimension_numbers!r} "
                         f"differ between the specs")
    lhs = [lhs_spec.index("N"), lhs_spec.index("C")] + [lhs_spec.index(c) for c in spatial]
    rhs = [rhs_spec.index("O"), rhs_spec.index("I")] + [rhs_spec.index(c) for c in spatial]
    out = [out_spec.index("N"), out_spec.index("C")] + [out_spec.index(c) for c in spatial]
    return lhs, rhs, out


def _conv_out_shape(lhs_shape, rhs_shape, strides, padding, lhs_dilation, dimension_numbers):
    """The output shape of a convolution (in out_spec's layout), -1 sizes passed through."""
    lp, rp, op = _conv_perms(dimension_numbers, len(lhs_shape))
    n, spatial = lhs_shape[lp[0]], [lhs_shape[a] for a in lp[2:]]
    o, window = rhs_shape[rp[0]], [rhs_shape[a] for a in rp[2:]]
    dilated = [_dilate(s, d) for s, d in zip(spatial, lhs_dilation)]
    pads = padding if not isinstance(padding, str) else \
        _padtype_to_pads(dilated, window, strides, padding)
    sizes = [(d + lo + hi - w) // s + 1 for d, (lo, hi), w, s in zip(dilated, pads, window,
                                                                       strides)]
    out = [0] * len(lhs_shape)
    for axis, size in zip(op, [n, o] + sizes):
        out[axis] = size
    return tuple(out)


def _conv(lhs, rhs, strides, padding, lhs_dilation, dimension_numbers):
    """lax.conv_general_dilated(lhs, rhs, strides, padding, lhs_dilation,
    dimension_numbers=dimension_numbers), after the layer's own checks (the messages name
    the layer's terms: channels, the window)."""
    lhs, rhs = F.asarray(lhs), F.asarray(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 3:
        raise ValueError(f"conv: inputs and kernel must have the same rank >= 3, got shapes "
                         f"{lhs.shape} and {rhs.shape}")
    lp, rp, _ = _conv_perms(dimension_numbers, lhs.ndim)
    if lhs.shape[lp[1]] != rhs.shape[rp[1]]:
        raise ValueError(f"conv: the inputs have {lhs.shape[lp[1]]} channels, the kernel "
                         f"expects {rhs.shape[rp[1]]} (shapes {lhs.shape} and {rhs.shape})")
    spatial = [(lhs.shape[a] - 1) * d + 1 if lhs.shape[a] else 0
               for a, d in zip(lp[2:], lhs_dilation)]
    window = [rhs.shape[a] for a in rp[2:]]
    pads = _padtype_to_pads(spatial, window, strides, padding)
    if any(n + lo + hi < w for n, (lo, hi), w in zip(spatial, pads, window)):
        raise ValueError(f"conv: the kernel window {tuple(window)} does not fit the padded "
                         f"inputs {tuple(n + lo + hi for n, (lo, hi) in zip(spatial, pads))}")
    return lax.conv_general_dilated(lhs, rhs, tuple(strides), padding,
                                    lhs_dilation=tuple(lhs_dilation),
                                    dimension_numbers=tuple(dimension_numbers))


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:
        raise ValueError(f"padding: a transposed convolution takes 'SAME' or 'VALID', got "
                         f"{padding!r}")
    return pad_a, pad_len - pad_a


def _transpose_pads(rhs_shape, strides, padding, dimension_numbers):
    _, rp, _ = _conv_perms(dimension_numbers, len(rhs_shape))
    if isinstance(padding, str):
        return [_conv_transpose_padding(rhs_shape[a], s, padding.upper())
                for a, s in zip(rp[2:], strides)]
    return padding


def _windows(x, window_shape, strides, padding, fill, reduce):
    """lax.reduce_window of x (window_shape, strides: one per axis) with the reduction
    ``reduce`` ("max" or "sum"), x padded with ``fill``."""
    return lax.reduce_window(x, fill, lax.max if reduce == "max" else lax.add,
                             tuple(window_shape), tuple(strides), padding)


# -- layers ----------------------------------------------------------------------------------

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A dense (fully connected) layer: inputs (..., n) -> inputs @ W + b of shape (...,
    out_dim), W (n, out_dim) from ``W_init``, b (out_dim,) from ``b_init``."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return F.add(F.dot(inputs, W), b)
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding='VALID',
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer with ``out_chan`` output channels and a ``filter_shape`` window;
    ``dimension_numbers``: the (inputs, kernel, outputs) layouts, e.g. ('NHWC', 'HWIO',
    'NHWC'); strides (default 1) and padding ('VALID', 'SAME' or pairs) as lax's."""
    _conv_perms(dimension_numbers, len(filter_shape) + 2)     # checked before they are read
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index('I'), rhs_spec.index('O'))

    def init_fun(rng, input_shape):
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [out_chan if c == 'O' else
                        input_shape[lhs_spec.index('C')] if c == 'I' else
                        next(filter_shape_iter) for c in rhs_spec]
        output_shape = _conv_out_shape(input_shape, kernel_shape, strides, padding, one,
                                       dimension_numbers)
        bias_shape = [out_chan if c == 'C' else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return F.add(_conv(inputs, W, strides, padding, one, dimension_numbers), b)
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ('NHWC', 'HWIO', 'NHWC'))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding='VALID', W_init=None, b_init=normal(1e-6)):
    """A transposed-convolution layer (lax.conv_transpose, kernel not flipped): the inputs
    spread ``strides`` apart, then convolved; arguments as :func:`GeneralConv`, padding
    'SAME' or 'VALID' of the forward convolution."""
    _conv_perms(dimension_numbers, len(filter_shape) + 2)     # checked before they are read
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index('I'), rhs_spec.index('O'))

    def init_fun(rng, input_shape):
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [out_chan if c == 'O' else
                        input_shape[lhs_spec.index('C')] if c == 'I' else
                        next(filter_shape_iter) for c in rhs_spec]
        pads = _transpose_pads(kernel_shape, strides, padding, dimension_numbers)
        output_shape = _conv_out_shape(input_shape, kernel_shape, one, pads, strides,
                                       dimension_numbers)
        bias_shape = [out_chan if c == 'C' else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        pads = _transpose_pads(W.shape, strides, padding, dimension_numbers)
        return F.add(_conv(inputs, W, one, pads, strides, dimension_numbers), b)
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ('NHC', 'HIO', 'NHC'))
ConvTranspose = functools.partial(GeneralConvTranspose, ('NHWC', 'HWIO', 'NHWC'))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalization over ``axis``: inputs standardized along those axes, then times
    gamma and plus beta (per entry of the other axes; without them when ``scale`` or
    ``center`` is False).  No running averages, as JAX's stax."""
    _beta_init = lambda rng, shape: beta_init(rng, shape) if center else ()  # noqa: E731
    _gamma_init = lambda rng, shape: gamma_init(rng, shape) if scale else ()  # noqa: E731
    axis = (axis,) if np.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta, gamma = _beta_init(k1, shape), _gamma_init(k2, shape)
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(F.asarray(x).ndim))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return F.add(F.multiply(gamma[ed], z), beta[ed])
        if center:
            return F.add(z, beta[ed])
        if scale:
            return F.multiply(gamma[ed], z)
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``."""
    init_fun = lambda rng, input_shape: (input_shape, ())  # noqa: E731
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)  # noqa: E731
    return init_fun, apply_fun


Tanh = elementwise(F.tanh)
Relu = elementwise(relu)
Exp = elementwise(F.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reduce, fill, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding='VALID', spec=None):
        """A pooling layer: the reduction over each ``window_shape`` window of the spatial
        axes (strides default 1; padding 'VALID', 'SAME' or pairs); ``spec``: the inputs'
        layout (default batch first and channels last, e.g. 'NHWC')."""
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial_axes = 0, len(window_shape) + 1
        else:
            non_spatial_axes = spec.index('N'), spec.index('C')
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            pads = _padtype_to_pads(input_shape, window_shape, strides, padding)
            out_shape = tuple((n + lo + hi - w) // s + 1 for n, (lo, hi), w, s in
                              zip(input_shape, pads, window_shape, strides))
            return out_shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = _windows(inputs, window_shape, strides, padding, fill, reduce)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        if spec is None:
            non_spatial_axes = 0, inputs.ndim - 1
        else:
            non_spatial_axes = spec.index('N'), spec.index('C')
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial_axes)
        one = F.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = _windows(one, dims, strides, padding, 0., "sum")
        for i in sorted(non_spatial_axes):
            window_sizes = F.expand_dims(window_sizes, i)
        return F.divide(outputs, window_sizes)
    return rescale


MaxPool = _pooling_layer("max", -np.inf)
SumPool = _pooling_layer("sum", 0.)
AvgPool = _pooling_layer("sum", 0., _normalize_by_window_size)
MaxPool.__name__, SumPool.__name__, AvgPool.__name__ = "MaxPool", "SumPool", "AvgPool"
MaxPool.__doc__ = "Max pooling: " + MaxPool.__doc__
SumPool.__doc__ = "Sum pooling: " + SumPool.__doc__
AvgPool.__doc__ = ("Average pooling (a window's sum over its number of entries inside the "
                   "inputs): " + AvgPool.__doc__)


def _flatten():
    """Flatten all but the leading (batch) axis: (n, ...) -> (n, prod(...))."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return F.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    """The identity layer."""
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


Identity = _identity()


def FanOut(num):
    """A layer giving ``num`` copies of its inputs (a list), for :func:`parallel`."""
    init_fun = lambda rng, input_shape: ([input_shape] * num, ())  # noqa: E731
    apply_fun = lambda params, inputs, **kwargs: [inputs] * num  # noqa: E731
    return init_fun, apply_fun


def _fan_in_sum():
    """The sum of a list of inputs of one shape."""
    init_fun = lambda rng, input_shape: (input_shape[0], ())  # noqa: E731
    apply_fun = lambda params, inputs, **kwargs: sum(inputs)  # noqa: E731
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """The concatenation of a list of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = tuple(input_shape[0][:ax]) + (concat_size,) + tuple(input_shape[0][ax + 1:])
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return F.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode='train'):
    """Dropout: in mode 'train', each entry kept with probability ``rate`` (JAX's stax
    convention: ``rate`` is the keep rate) and divided by it, the others 0; the key comes as
    ``apply_fun(params, inputs, rng=key)``.  Any other mode: the identity."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get('rng', None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng=key)` where `key` is a "
                             "PRNG key (e.g. from `nx_rune.random.key`).")
        if mode == 'train':
            keep = random.bernoulli(rng, rate, inputs.shape)
            return F.where(keep, F.divide(inputs, rate), 0)
        return inputs
    return init_fun, apply_fun


def serial(*layers):
    """The layers one after the other: a layer whose params are the list of theirs (keys split
    as JAX's stax splits them)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop('rng', None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: a layer taking a sequence of inputs (one per layer) and giving
    the list of their outputs; used with :func:`FanOut` and ``FanInSum``."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop('rng', None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs,
                                                               rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer made by ``make_layer(input_shape) -> (init_fun, apply_fun)`` once the input
    shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
