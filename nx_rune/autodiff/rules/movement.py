"""Rules of the movement primitives: reshape, expand, permute, shrink, flip, pad, as_strided,
cat and roll.

The VJP of a movement is the inverse movement (pad <-> shrink, flip <-> flip, permute <->
inverse permutation, expand -> sum over the expanded axes); pad is affine, so its tangent is
padded with 0.  Each batching rule moves or adds the batch axis and binds the movement once.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import (
    BATCH_RULES,
    _full_axis,
    _ndim,
    _norm,
    batch_at,
    moveaxis,
)
from nx_rune.autodiff.rules._common import (
    VJP_RULES,
    _fill,
    _inverse_perm,
    _register,
    _scal,
    _scatter,
    deflinear,
    unbroadcast,
)
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

# -- movement: the VJP is the inverse movement ----------------------------------------------------

deflinear(P.reshape_p, lambda g, ans, x, shape: ops.reshape(g, x.shape))


def _batch_reshape(size, args, dims, *, shape):
    return bind(P.reshape_p, moveaxis(args[0], dims[0], 0), shape=(size,) + tuple(shape)), 0


BATCH_RULES[P.reshape_p] = _batch_reshape


deflinear(P.expand_p, lambda g, ans, x, shape: unbroadcast(g, x.shape))


def _batch_expand(size, args, dims, *, shape):
    x = moveaxis(args[0], dims[0], 0)
    shape = tuple(shape)
    lead = len(shape) - (x.ndim - 1)
    if lead:
        x = bind(P.reshape_p, x, shape=(size,) + (1,) * lead + x.shape[1:])
    return bind(P.expand_p, x, shape=(size,) + shape), 0


BATCH_RULES[P.expand_p] = _batch_expand


deflinear(P.permute_p, lambda g, ans, x, axes: ops.transpose(g, _inverse_perm(axes)))


def _batch_permute(size, args, dims, *, axes):
    x, d = args[0], dims[0]
    nd = x.ndim - 1
    return bind(P.permute_p, x, axes=(d,) + tuple(_full_axis(_norm(a, nd), d) for a in axes)), 0


BATCH_RULES[P.permute_p] = _batch_permute


# (the primitive itself: the widths are valid by construction, and the public pad's checks cost
# more than the masked view it makes, on every getitem's cotangent)
deflinear(P.shrink_p, lambda g, ans, x, limits: bind(
    P.pad_p, g, config=tuple((a, n - b) for (a, b), n in zip(limits, x.shape)), fill=0))
# (with no transformation active, the backward pass adds g into this window of x's cotangent)
VJP_RULES[P.shrink_p].window = lambda params: params["limits"]


def _batch_shrink(size, args, dims, *, limits):
    d = dims[0]
    limits = list(limits)
    limits.insert(d, (0, size))
    return bind(P.shrink_p, args[0], limits=tuple(limits)), d


BATCH_RULES[P.shrink_p] = _batch_shrink


deflinear(P.flip_p, lambda g, ans, x, axes: ops.flip(g, axes))


def _batch_flip(size, args, dims, *, axes):
    x, d = args[0], dims[0]
    nd = x.ndim - 1
    return bind(P.flip_p, x, axes=tuple(_full_axis(_norm(a, nd), d) for a in axes)), d


BATCH_RULES[P.flip_p] = _batch_flip


def _vjp_pad(g, ans, args, params, need):
    x = args[0]
    return (ops.shrink(g, [(b, b + n) for (b, _), n in zip(params["config"], x.shape)]),)


def _jvp_pad(tangents, ans, args, params):
    # pad is affine: the padding is a constant, so the tangent is padded with 0
    return bind(P.pad_p, tangents[0], config=params["config"], fill=0)


_register(P.pad_p, _vjp_pad, _jvp_pad)


def _batch_pad(size, args, dims, *, config, fill):
    d = dims[0]
    config = list(config)
    config.insert(d, (0, 0))
    return bind(P.pad_p, args[0], config=tuple(config), fill=fill), d


BATCH_RULES[P.pad_p] = _batch_pad


def _strided_indices(shape, strides, offset):
    """Flat indices into x.ravel() of every element of an as_strided view (C order)."""
    idx = np.full(shape, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        view = [1] * len(shape)
        view[k] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(view)
    return idx.reshape(-1)


def _vjp_as_strided(g, ans, args, params, need):
    # element (i) of the view is x.ravel()[offset + sum(i * strides)]: scatter-add g there
    x = args[0]
    idx = _strided_indices(params["shape"], params["strides"], params["offset"])
    flat = _scatter(_scal(0, g.dtype, (x.size,)), Tensor._wrap(idx), ops.reshape(g, (-1,)),
                    0, "add")
    return (ops.reshape(flat, x.shape),)


def _jvp_as_strided(tangents, ans, args, params):
    return bind(P.as_strided_p, tangents[0], **params)


_register(P.as_strided_p, _vjp_as_strided, _jvp_as_strided)


def _check_strided(shape, strides, offset, n):
    """as_strided's bounds check for one example of ``n`` elements (the batched call checks
    against the whole batch, which would let one example read the next one)."""
    shape, strides = tuple(shape), tuple(strides)
    if math.prod(shape) == 0:
        return
    if offset < 0 or offset >= n:
        raise ValueError(f"offset: {offset} is outside the buffer of {n} elements")
    lo = hi = offset
    for k, s in zip(shape, strides):
        if k > 1:
            lo += min(0, (k - 1) * s)
            hi += max(0, (k - 1) * s)
    if lo < 0 or hi >= n:
        raise ValueError(f"strides: shape {shape} with strides {strides} and offset {offset} "
                         f"would address elements {lo}..{hi}, outside the buffer of {n} "
                         f"elements")


def _batch_as_strided(size, args, dims, *, shape, strides, offset):
    x = moveaxis(args[0], dims[0], 0)
    n = math.prod(x.shape[1:])
    if len(tuple(shape)) == len(tuple(strides)):
        _check_strided(shape, strides, offset, n)
    return bind(P.as_strided_p, x, shape=(size,) + tuple(shape),
                strides=(n,) + tuple(strides), offset=offset), 0


BATCH_RULES[P.as_strided_p] = _batch_as_strided


def _vjp_cat(g, ans, args, params, need):
    axis = params["axis"]
    out, start = [], 0
    lim = [(0, d) for d in g.shape]
    for x, n in zip(args, need):
        stop = start + x.shape[axis]
        if n:
            lim[axis] = (start, stop)
            out.append(ops.shrink(g, lim))
        else:
            out.append(None)
        start = stop
    return out


def _jvp_cat(tangents, ans, args, params):
    return bind(P.cat_p, *_fill(tangents, args), axis=params["axis"])


_register(P.cat_p, _vjp_cat, _jvp_cat)


def _batch_cat(size, args, dims, *, axis):
    nd = _ndim(args[0], dims[0])
    xs = [batch_at(a, d, size, 0) for a, d in zip(args, dims)]
    return bind(P.cat_p, *xs, axis=_norm(axis, nd) + 1), 0


BATCH_RULES[P.cat_p] = _batch_cat


# roll is a permutation: its transpose rolls the other way
deflinear(P.roll_p, lambda g, ans, x, shift, axis: bind(P.roll_p, g, shift=-shift, axis=axis))


def _batch_roll(size, args, dims, *, shift, axis):
    x, d = args[0], dims[0]
    return bind(P.roll_p, x, shift=shift, axis=_full_axis(_norm(axis, x.ndim - 1), d)), d


BATCH_RULES[P.roll_p] = _batch_roll
