"""Rules of ``gather`` and ``scatter`` (take_along_axis semantics, scatter modes set, add, mul,
max, min).

gather's transpose scatter-adds; scatter's derivatives are the masks of which value wins (set),
the products of the other factors (mul) or the tie shares (max, min), computed from concrete
values with NumPy, or with operations when jit traces them.  Batching: the batch goes first.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import (
    BATCH_RULES,
    _front,
    _ndim,
    _norm,
    batch_at,
    moveaxis,
)
from nx_rune.autodiff.rules._common import (
    _add,
    _c,
    _const,
    _cv,
    _div,
    _eval,
    _gather,
    _known,
    _mask,
    _mul,
    _register,
    _scal,
    _scatter,
    _tmask,
    _val,
    _zeros,
    unbroadcast,
)
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

# -- gather / scatter -----------------------------------------------------------------------------

def _flat_axis(x, axis):
    return (ops.reshape(x, (-1,)), 0) if axis is None else (x, axis)


def _vjp_gather(g, ans, args, params, need):
    data, indices = args
    d, axis = _flat_axis(data, params["axis"])
    # scatter-add into a zero template; where data broadcasts (size 1), updates accumulate
    ct = _scatter(_zeros(d), indices, g, axis, "add")
    return (ops.reshape(ct, data.shape), None)


def _jvp_gather(tangents, ans, args, params):
    t, axis = _flat_axis(tangents[0], params["axis"])
    return _gather(t, args[1], axis)


_register(P.gather_p, _vjp_gather, _jvp_gather)


def _batch_gather(size, args, dims, *, axis):
    (data, idx), (dd, di) = args, dims
    if axis is None:      # flat data, 1-d indices
        data = _front(data, dd)
        data = bind(P.reshape_p, data, shape=(data.shape[0], math.prod(data.shape[1:])))
        return bind(P.gather_p, data, _front(idx, di), axis=1), 0
    nd = _ndim(data, dd)
    return bind(P.gather_p, _front(data, dd), _front(idx, di), axis=_norm(axis, nd) + 1), 0


BATCH_RULES[P.gather_p] = _batch_gather


def _indexed_shape(shape, ishape, axis):
    return tuple(b if (d == axis or a == 1) else a
                 for d, (a, b) in enumerate(zip(shape, ishape)))


def _scatter_derivs(template, indices, updates, ans, axis, mode):
    """(dT, du): the derivative of scatter's output w.r.t. the template (T's shape) and each
    update (the indexed shape B); None for 1.  Both are exact and piecewise constant except for
    mode "mul", where they are products of the other factors (differentiable)."""
    B = _indexed_shape(template.shape, indices.shape, axis)
    if mode == "add":
        return None, None
    if not _known(template, indices, updates, ans):
        return _scatter_derivs_traced(template, indices, updates, ans, axis, mode, B)
    if mode == "set":
        n = int(np.prod(B))
        ids = Tensor._wrap(np.arange(n, dtype=np.int64).reshape(B))
        idx = _cv(indices)
        win = _eval(P.scatter_p, Tensor._wrap(np.full(template.shape, -1, np.int64)), idx,
                    ids, axis=axis, mode="set")
        mine = _val(_eval(P.gather_p, win, idx, axis=axis)) == _val(ids)
        return (_const(_val(win) < 0, template), _const(mine, template))
    ub = ops.broadcast_to(updates, B)
    if mode == "mul":
        uv = _val(ub)
        zero = uv == 0
        if not zero.any():
            full = _scatter(_scal(1, template.dtype, template.shape), indices, ub, axis, "mul")
            return full, _div(_gather(ans, indices, axis), ub)
        safe = bind(P.where_p, _mask(zero, ub), _c(1, ub), ub)
        zt = _mask(zero.astype(np.int64), ub)
        idx = _cv(indices)
        zcount = _eval(P.scatter_p, Tensor._wrap(np.zeros(template.shape, np.int64)), idx,
                       zt, axis=axis, mode="add")
        alone = _val(_eval(P.gather_p, zcount, idx, axis=axis)) == zero
        full = _scatter(_scal(1, template.dtype, template.shape), indices, ub, axis, "mul")
        part = _scatter(_scal(1, template.dtype, template.shape), indices, safe, axis, "mul")
        du = _div(_gather(_mul(template, part), indices, axis), safe)
        return full, _mul(du, _const(alone, du))
    # max / min: ties between the template and the updates split equally
    idx = _cv(indices)
    tv, av, uv = _val(template), _val(ans), _val(ub)
    at = _val(_eval(P.gather_p, _cv(ans), idx, axis=axis))
    hit_u = uv == at
    cnt = _val(_eval(P.scatter_p, _mask((tv == av).astype(np.int64), template), idx,
                     _mask(hit_u.astype(np.int64), ub), axis=axis, mode="add"))
    cnt = np.maximum(cnt, 1)
    cnt_u = _val(_eval(P.gather_p, _mask(cnt, template), idx, axis=axis))
    return _const((tv == av) / cnt, template), _const(hit_u / cnt_u, template)


def _scatter_derivs_traced(template, indices, updates, ans, axis, mode, B):
    """``_scatter_derivs`` computed with operations (values traced by jit)."""
    i64 = np.dtype(np.int64)
    if mode == "set":
        n = int(np.prod(B))
        ids = Tensor._wrap(np.arange(n, dtype=np.int64).reshape(B))
        win = _scatter(_scal(-1, i64, template.shape), indices, ids, axis, "set")
        mine = ops.equal(_gather(win, indices, axis), ids)
        return _tmask(ops.less(win, 0), template), _tmask(mine, template)
    ub = ops.broadcast_to(updates, B)
    if mode == "mul":
        zero = ops.equal(ub, 0)
        safe = bind(P.where_p, zero, _c(1, ub), ub)
        zcount = _scatter(_scal(0, i64, template.shape), indices, ops.astype(zero, i64), axis,
                          "add")
        alone = ops.equal(_gather(zcount, indices, axis), ops.astype(zero, i64))
        one = _scal(1, template.dtype, template.shape)
        full = _scatter(one, indices, ub, axis, "mul")
        part = _scatter(one, indices, safe, axis, "mul")
        du = _div(_gather(_mul(template, part), indices, axis), safe)
        return full, _mul(du, _tmask(alone, du))
    # max / min: ties between the template and the updates split equally
    at = _gather(ans, indices, axis)
    hit_t = ops.equal(template, ans)
    hit_u = ops.equal(ub, at)
    cnt = _scatter(ops.astype(hit_t, i64), indices, ops.astype(hit_u, i64), axis, "add")
    cnt = ops.astype(ops.maximum(cnt, 1), template.dtype)
    cnt_u = _gather(cnt, indices, axis)
    return _div(_tmask(hit_t, template), cnt), _div(_tmask(hit_u, cnt_u), cnt_u)


def _vjp_scatter(g, ans, args, params, need):
    template, indices, updates = args
    axis, mode = params["axis"], params["mode"]
    t2, axis2 = _flat_axis(template, axis)
    g2 = _flat_axis(g, axis)[0]
    dT, du = _scatter_derivs(t2, indices, updates, _flat_axis(ans, axis)[0], axis2, mode)
    ct_t = ct_u = None
    if need[0]:
        ct_t = g2 if dT is None else _mul(g2, dT)
        ct_t = ops.reshape(ct_t, template.shape)
    if need[2]:
        gu = _gather(g2, indices, axis2)
        ct_u = unbroadcast(gu if du is None else _mul(gu, du), updates.shape)
    return (ct_t, None, ct_u)


def _jvp_scatter(tangents, ans, args, params):
    template, indices, updates = args
    tt, _, tu = tangents
    axis, mode = params["axis"], params["mode"]
    t2, axis2 = _flat_axis(template, axis)
    dT, du = _scatter_derivs(t2, indices, updates, _flat_axis(ans, axis)[0], axis2, mode)
    out = None
    if tt is not None:
        tt = _flat_axis(tt, axis)[0]
        out = tt if dT is None else _mul(tt, dT)
    if tu is not None:
        B = _indexed_shape(t2.shape, indices.shape, axis2)
        tu = ops.broadcast_to(tu, B)
        term = _scatter(_zeros(t2), indices, tu if du is None else _mul(tu, du), axis2, "add")
        out = term if out is None else _add(out, term)
    return ops.reshape(out, ans.shape)


_register(P.scatter_p, _vjp_scatter, _jvp_scatter)


def _updates_front(u, du, rank):
    """Scatter updates with their batch axis first and the per-example axes padded on the left
    to ``rank`` (they broadcast to the indexed shape); unbatched updates broadcast as they are."""
    if du is None:
        return u
    u = moveaxis(u, du, 0)
    lead = rank - (u.ndim - 1)
    if lead > 0:
        u = bind(P.reshape_p, u, shape=(u.shape[0],) + (1,) * lead + u.shape[1:])
    return u


def _batch_scatter(size, args, dims, *, axis, mode):
    (t, idx, u), (dt, di, du) = args, dims
    tshape = t.shape if dt is None else t.shape[:dt] + t.shape[dt + 1:]
    t = batch_at(t, dt, size, 0)
    if axis is None:      # flat template, 1-d indices
        t = bind(P.reshape_p, t, shape=(size, math.prod(tshape)))
        out = bind(P.scatter_p, t, _front(idx, di), _updates_front(u, du, 1), axis=1,
                   mode=mode)
        return bind(P.reshape_p, out, shape=(size,) + tshape), 0
    nd = len(tshape)
    return bind(P.scatter_p, t, _front(idx, di), _updates_front(u, du, nd),
                axis=_norm(axis, nd) + 1, mode=mode), 0


BATCH_RULES[P.scatter_p] = _batch_scatter
