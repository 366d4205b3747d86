"""Rules of the reductions: reduce_sum, reduce_max, reduce_prod and argmax.

``_def_weighted_reduction`` makes the rules of a reduction whose derivative is an elementwise
weight (max: ties share equally, ``_max_share``; prod: the product of the other elements, exact
with zeros); the statistics family reuses both.  Batching: the axes shift past the batch axis.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import (
    BATCH_RULES,
    _full_axis,
    _norm,
    defreduction,
    moveaxis,
)
from nx_rune.autodiff.rules._common import (
    _const,
    _div,
    _exclusive_cumprod,
    _inverse_perm,
    _keep_shape,
    _known,
    _mul,
    _register,
    _tmask,
    _unreduce,
    _val,
    deflinear,
    defnondiff,
)
from nx_rune.primitives import bind

# -- reductions ----------------------------------------------------------------------------------

deflinear(P.reduce_sum_p, lambda g, ans, x, axes, keepdims: _unreduce(g, x.shape, axes, keepdims))


def _max_share(x, ans, axes, keepdims):
    """Each element's share of a max reduction's derivative: ties split equally."""
    if not _known(x, ans):
        a = ans if keepdims else ops.reshape(ans, _keep_shape(x.shape, axes))
        mask = _tmask(ops.equal(x, ops.broadcast_to(a, x.shape)), x)
        count = bind(P.reduce_sum_p, mask, axes=tuple(axes), keepdims=True)
        return _div(mask, ops.broadcast_to(ops.maximum(count, 1), x.shape))
    xv = _val(x)
    av = _val(ans)
    if not keepdims:
        av = av.reshape(av.shape[:av.ndim - ans.ndim] + _keep_shape(x.shape, axes))
    mask = (xv == av)
    nb = mask.ndim - x.ndim     # vmap's leading batch axes (see _val)
    count = mask.sum(axis=tuple(a + nb for a in axes), keepdims=True)
    return _const(mask / np.maximum(count, 1), x)


def _def_weighted_reduction(prim, weight):
    """Rules of a reduction whose derivative is an elementwise weight of x's shape
    (``weight(x, ans, axes, keepdims)``): VJP = broadcast(g) * w, JVP = reduce_sum(t * w)."""
    def vjp(g, ans, args, params, need):
        x, axes, keepdims = args[0], params["axes"], params["keepdims"]
        return (_mul(_unreduce(g, x.shape, axes, keepdims), weight(x, ans, axes, keepdims)),)

    def jvp(tangents, ans, args, params):
        x, axes, keepdims = args[0], params["axes"], params["keepdims"]
        return bind(P.reduce_sum_p, _mul(tangents[0], weight(x, ans, axes, keepdims)),
                    axes=axes, keepdims=keepdims)
    vjp.__name__, jvp.__name__ = f"vjp_{prim.name}", f"jvp_{prim.name}"
    _register(prim, vjp, jvp)


_def_weighted_reduction(P.reduce_max_p, _max_share)


def _prod_of_others(x, axes):
    """For each element, the product of the other elements of its reduction group (exact with
    zeros: exclusive products from both ends, no division)."""
    nd = x.ndim
    keep = [i for i in range(nd) if i not in axes]
    perm = keep + list(axes)
    xt = ops.transpose(x, perm)
    inner_shape = xt.shape
    xt = ops.reshape(xt, inner_shape[:len(keep)] + (-1,))
    others = _mul(_exclusive_cumprod(xt, xt.ndim - 1),
                  _exclusive_cumprod(xt, xt.ndim - 1, reverse=True))
    others = ops.reshape(others, inner_shape)
    return ops.transpose(others, _inverse_perm(perm))


def _prod_deriv(x, ans, axes, keepdims):
    """d prod / d x_i for every element (x's shape)."""
    if _known(x) and (_val(x) != 0).all():
        return _div(_unreduce(ans, x.shape, axes, keepdims), x)
    return _prod_of_others(x, axes)


_def_weighted_reduction(P.reduce_prod_p, _prod_deriv)
for _p in (P.reduce_sum_p, P.reduce_max_p, P.reduce_prod_p):
    defreduction(_p)


defnondiff(P.argmax_p)


def _batch_argmax(size, args, dims, *, axis, keepdims):
    x, d = args[0], dims[0]
    nd = x.ndim - 1
    if axis is None:
        x = moveaxis(x, d, 0)
        x = bind(P.reshape_p, x, shape=(size, math.prod(x.shape[1:])))
        out = bind(P.argmax_p, x, axis=1, keepdims=False)
        if keepdims:
            out = bind(P.reshape_p, out, shape=(size,) + (1,) * nd)
        return out, 0
    full = _full_axis(_norm(axis, nd), d)
    out = bind(P.argmax_p, x, axis=full, keepdims=keepdims)
    return out, d if keepdims else d - (full < d)


BATCH_RULES[P.argmax_p] = _batch_argmax
