"""Rules of ``associative_scan`` (cumulative sum, product, max and min along one axis).

cumsum's transpose is the reversed cumsum; cumprod's derivative is exact with zeros (through
the matrix of partial products when a zero occurs); cummax/cummin split the derivative equally
between the positions that attain the running extremum.  Batching: the axis shifts.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defaxis
from nx_rune.autodiff.rules._common import (
    _add,
    _c,
    _carr,
    _div,
    _exclusive_cumprod,
    _gather,
    _known,
    _mask,
    _moveaxis_back,
    _moveaxis_last,
    _mul,
    _register,
    _revcumsum,
    _scan,
    _share,
    _tmask,
    _val,
    _zeros,
)
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

# -- scans ----------------------------------------------------------------------------------------

def _cumprod_matrix(x, axis):
    """For a scan with zeros: M[..., j, i] = prod_{j < k <= i} x_k for i >= j, else 0 (the axis
    moved last).  d cumprod(x)_i / d x_j = excl_prefix_j * M[j, i]."""
    xl = _moveaxis_last(x, axis)
    n = xl.shape[-1]
    rows = ops.broadcast_to(ops.expand_dims(xl, -2), xl.shape[:-1] + (n, n))
    j = np.arange(n)
    after = Tensor._wrap(_carr(np.broadcast_to(j[None, :] > j[:, None],
                                                              rows.shape)))
    m = _scan(bind(P.where_p, after, rows, _c(1, rows)), rows.ndim - 1, "prod")
    upper = Tensor._wrap(_carr(np.broadcast_to(j[None, :] >= j[:, None],
                                                              rows.shape)))
    return bind(P.where_p, upper, m, _zeros(m))


def _scan_prod_vjp(g, ans, x, axis):
    if _known(x) and (_val(x) != 0).all():
        return _div(_revcumsum(_mul(g, ans), axis), x)
    m = _cumprod_matrix(x, axis)                            # (..., j, i)
    gl = ops.expand_dims(_moveaxis_last(g, axis), -2)       # (..., 1, i)
    inner = bind(P.reduce_sum_p, _mul(m, ops.broadcast_to(gl, m.shape)),
                 axes=(m.ndim - 1,), keepdims=False)        # (..., j)
    return _mul(_exclusive_cumprod(x, axis), _moveaxis_back(inner, axis))


def _scan_prod_jvp(t, ans, x, axis):
    if _known(x) and (_val(x) != 0).all():
        return _mul(ans, _scan(_div(t, x), axis, "sum"))
    m = _cumprod_matrix(x, axis)
    u = _moveaxis_last(_mul(t, _exclusive_cumprod(x, axis)), axis)
    ul = ops.broadcast_to(ops.expand_dims(u, -1), m.shape)  # (..., j, 1) -> (..., j, i)
    out = bind(P.reduce_sum_p, _mul(m, ul), axes=(m.ndim - 2,), keepdims=False)
    return _moveaxis_back(out, axis)


def _scan_extremum_plan(x, ans, axis):
    """Constants of a cummax/cummin derivative.  The running extremum is piecewise constant:
    a plateau starts where it changes; on a plateau its derivative is split equally between
    the positions so far that attain it ('records').  Returns (record mask, 1/count, start of
    each position's plateau, start of the next plateau after each position) along axis: the
    first two ndarrays (traced tensors in x's dtype when the values are traced by jit), the
    positions int64 tensors."""
    if not _known(x, ans):
        return _scan_extremum_plan_traced(x, ans, axis)
    xv, yv = _val(x), _val(ans)
    xv = np.moveaxis(xv, axis + xv.ndim - x.ndim, -1)   # past vmap's batch axes (see _val)
    yv = np.moveaxis(yv, axis + yv.ndim - x.ndim, -1)
    n = xv.shape[-1]
    rec = xv == yv
    new = np.ones(yv.shape, dtype=bool)
    new[..., 1:] = yv[..., 1:] != yv[..., :-1]
    pos = np.broadcast_to(np.arange(n), yv.shape)
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    csum = np.cumsum(rec, axis=-1)
    count = (csum - np.take_along_axis(csum, start, -1)
             + np.take_along_axis(rec, start, -1))
    marks = np.where(new, pos, n)
    nxt = np.full(yv.shape, n, dtype=np.int64)
    nxt[..., :-1] = np.flip(np.minimum.accumulate(np.flip(marks[..., 1:], -1), axis=-1), -1)
    back = lambda a: _carr(np.moveaxis(a, -1, axis + a.ndim - x.ndim))  # noqa: E731
    return (back(rec), back(1.0 / np.maximum(count, 1)), _mask(back(start.astype(np.int64)), x),
            _mask(back(nxt), x))


def _scan_extremum_plan_traced(x, ans, axis):
    """``_scan_extremum_plan`` computed with operations (values traced by jit)."""
    xl, yl = _moveaxis_last(x, axis), _moveaxis_last(ans, axis)
    n = yl.shape[-1]
    last = yl.ndim - 1
    rec = ops.equal(xl, yl)
    lim = lambda a, b: [(0, d) for d in yl.shape[:-1]] + [(a, b)]  # noqa: E731
    changed = ops.not_equal(ops.shrink(yl, lim(1, n)), ops.shrink(yl, lim(0, n - 1)))
    first = ops.full(yl.shape[:-1] + (1,), True)
    new = ops.concatenate([first, changed], axis=-1) if n > 1 else ops.broadcast_to(first,
                                                                                      yl.shape)
    pos = ops.broadcast_to(Tensor._wrap(np.arange(n, dtype=np.int64)), yl.shape)
    start = _scan(ops.where(new, pos, 0), last, "max")
    reci = ops.astype(rec, np.int64)
    csum = _scan(reci, last, "sum")
    count = _add(_add(csum, bind(P.neg_p, _gather(csum, start, last))),
                 _gather(reci, start, last))
    marks = ops.where(new, pos, n)
    tail = ops.flip(_scan(ops.flip(ops.shrink(marks, lim(1, n)), last), last, "min"), last)
    nxt = ops.concatenate([tail, ops.full(yl.shape[:-1] + (1,), n, dtype=np.int64)],
                          axis=-1) if n > 1 else ops.full(yl.shape, n, dtype=np.int64)
    cnt = ops.astype(ops.maximum(count, 1), x.dtype)
    inv = _div(_c(1, cnt), cnt)
    return (_moveaxis_back(_tmask(rec, x), axis), _moveaxis_back(inv, axis),
            _moveaxis_back(start, axis), _moveaxis_back(nxt, axis))


def _scan_extremum_vjp(g, ans, x, axis):
    rec, inv, _, nxt = _scan_extremum_plan(x, ans, axis)
    r = _revcumsum(_mul(g, _share(inv, g)), axis)
    cfg = [(0, 0)] * g.ndim
    cfg[axis] = (0, 1)
    tail = _gather(ops.pad(r, cfg), nxt, axis)
    return _mul(_share(rec, g), _add(r, bind(P.neg_p, tail)))


def _scan_extremum_jvp(t, ans, x, axis):
    rec, inv, start, _ = _scan_extremum_plan(x, ans, axis)
    u = _mul(t, _share(rec, t))
    c = _scan(u, axis, "sum")
    before = _gather(_add(c, bind(P.neg_p, u)), start, axis)
    return _mul(_add(c, bind(P.neg_p, before)), _share(inv, t))


def _vjp_scan(g, ans, args, params, need):
    x = args[0]
    axis, op = params["axis"], params["op"]
    if op == "sum":
        return (_revcumsum(g, axis),)
    if op == "prod":
        return (_scan_prod_vjp(g, ans, x, axis),)
    return (_scan_extremum_vjp(g, ans, x, axis),)


def _jvp_scan(tangents, ans, args, params):
    t = tangents[0]
    axis, op = params["axis"], params["op"]
    if op == "sum":
        return _scan(t, axis, "sum")
    if op == "prod":
        return _scan_prod_jvp(t, ans, args[0], axis)
    return _scan_extremum_jvp(t, ans, args[0], axis)


_register(P.associative_scan_p, _vjp_scan, _jvp_scan)


# -- batching ---------------------------------------------------------------------------------

defaxis(P.associative_scan_p)
