"""Batching rules of every primitive: ``BATCH_RULES``, the table ``vmap`` reads.

A rule maps a primitive applied to batched operands to one application on the whole batch::

    BATCH_RULES[prim] = rule
    rule(axis_size, args, dims, **params) -> (out, out_dim)

``args`` are the operands as the level below vmap sees them (each batched operand with its
batch axis in it), ``dims[i]`` is operand i's batch axis (an int) or None for an operand that
is the same for every example; ``params`` are the primitive's.  The rule returns the output
and the axis of the output that is the batch (None when the output is the same for every
example).  Rules run with vmap's parent interpreter active and are written with ``bind`` (or
front-end ops), so the transformations around vmap see what they compute.

Helpers make most rules one line:

* ``defbroadcast(prim)``: elementwise primitives whose operands have one shape (unary, binary,
  ``where``, ``clip``): the batch axes are aligned, unbatched operands broadcast (stride 0).
* ``defreduction(prim)``: ``axes``/``keepdims`` reductions: the axes shift past the batch axis.
* ``defaxis(prim, "axis")``: one ``axis`` parameter (scans, sort, argsort);
  ``defaxes(prim, "axes")``: a tuple of axes, the output of the operand's rank (FFTs).
* ``defleading(prim)``: primitives acting on trailing axes and mapping over leading ones
  (linear algebra): the batch goes first.
* ``defloop(prim)``: the opt-in fallback for a primitive without a vectorized rule: it is
  applied once per example (the operands sliced, the results stacked): correct, as fast as a
  Python loop.  A user-defined primitive without a rule is never looped silently: vmap raises
  ``NotImplementedError`` naming it.
* ``defnoarrays(prim)``: primitives without array operands (constants), never batched.

Primitives taking a function (a call to a traced program, as a jit would add) are batched by
running the function under a new vmap level: ``nx_rune.autodiff.batching.call_rule``.
"""
import math

from nx_rune import primitives as P
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

__all__ = ["BATCH_RULES", "defbroadcast", "defreduction", "defaxis", "defaxes", "defleading",
           "defloop", "defnoarrays", "moveaxis", "batch_at", "loop_rule", "BroadcastRule"]

BATCH_RULES = {}
_scal = Tensor._broadcast_scalar


# -- helpers ------------------------------------------------------------------------------------

def moveaxis(x, src, dst):
    """``x`` with its axis ``src`` moved to position ``dst`` (a permute view)."""
    if src == dst:
        return x
    perm = list(range(x.ndim))
    perm.pop(src)
    perm.insert(dst, src)
    return bind(P.permute_p, x, axes=tuple(perm))


def batch_at(x, d, size, at):
    """``x`` (batch axis ``d``, or None: unbatched) with its batch axis at position ``at``: a
    moved view, or for an unbatched operand a broadcast view (stride 0) with the new axis."""
    if d is None:
        if at == 0:       # expand adds leading axes itself
            return bind(P.expand_p, x, shape=(size,) + x.shape)
        shape = x.shape[:at] + (1,) + x.shape[at:]
        x = bind(P.reshape_p, x, shape=shape)
        return bind(P.expand_p, x, shape=shape[:at] + (size,) + shape[at + 1:])
    return moveaxis(x, d, at)


def _front(x, d):
    """``x`` with its batch axis first (or unbatched x with a leading axis of size 1, which
    broadcasts against the batch)."""
    if d is None:
        return bind(P.reshape_p, x, shape=(1,) + x.shape)
    return moveaxis(x, d, 0)


def _ndim(x, d):
    """The per-example rank of operand ``x`` with batch axis ``d``."""
    return x.ndim - (d is not None)


def _full_axis(a, d):
    """Per-example axis ``a`` (non-negative) as an axis of the batched operand (axis ``d``)."""
    return a + (a >= d)


def _norm(a, nd):
    return a + nd if a < 0 else a


def _unbatch_one(x, d, i):
    """Example ``i`` of ``x`` (batch axis ``d``)."""
    lim = [(0, n) for n in x.shape]
    lim[d] = (i, i + 1)
    x = bind(P.shrink_p, x, limits=tuple(lim))
    return bind(P.reshape_p, x, shape=x.shape[:d] + x.shape[d + 1:])


def _stack0(outs):
    return bind(P.cat_p, *[bind(P.reshape_p, o, shape=(1,) + o.shape) for o in outs], axis=0)


def _loop(prim, size, args, dims, params):
    """``prim`` applied example by example, the results stacked along a new axis 0."""
    if size == 0:
        # no example to run: the output's shape and dtype from a probe on zeros
        probe = [a if d is None else _scal(0, a.dtype, a.shape[:d] + a.shape[d + 1:])
                 for a, d in zip(args, dims)]
        return _empty_batch(bind(prim, *probe, **params)), 0
    outs = []
    for i in range(size):
        outs.append(bind(prim, *[a if d is None else _unbatch_one(a, d, i)
                                 for a, d in zip(args, dims)], **params))
    return _stack0(outs), 0


def _empty_batch(out):
    """A batch of zero examples of ``out``'s shape and dtype."""
    return bind(P.shrink_p, bind(P.reshape_p, out, shape=(1,) + out.shape),
                limits=((0, 0),) + tuple((0, n) for n in out.shape))


# -- rule makers --------------------------------------------------------------------------------

class BroadcastRule:
    """The rule ``defbroadcast`` makes (a class, so that vmap's interpreter can run the common
    case, every operand batched along one axis, without calling it)."""
    __slots__ = ("prim", "__name__")

    def __init__(self, prim):
        self.prim = prim
        self.__name__ = f"batch_{prim.name}"

    def __call__(self, size, args, dims, **params):
        prim = self.prim
        d = dims[0]
        if len(dims) > 1:
            if d is None:
                for d in dims:
                    if d is not None:
                        break
            for k in dims:
                if k != d:
                    args = [a if k == d else batch_at(a, k, size, d) for a, k in zip(args, dims)]
                    break
        impl = prim.impl
        if P._interpreter.get() is None and impl is not None:   # the parent is no transformation
            return impl(*args, **params), d
        return bind(prim, *args, **params), d


def defbroadcast(prim):
    """The rule of an elementwise ``prim`` whose operands share one shape: batched operands
    keep the first batched operand's batch axis (others are moved there), unbatched ones are
    broadcast to the batch (a stride-0 view), and the primitive is bound once."""
    BATCH_RULES[prim] = rule = BroadcastRule(prim)
    return rule


def defreduction(prim):
    """The rule of a reduction with parameters ``axes`` (per-example axes) and ``keepdims``."""
    def rule(size, args, dims, *, axes, keepdims, **params):
        x, d = args[0], dims[0]
        nd = x.ndim - 1
        full = tuple(_full_axis(_norm(a, nd), d) for a in axes)
        out = bind(prim, x, axes=full, keepdims=keepdims, **params)
        return out, d if keepdims else d - sum(1 for a in full if a < d)
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def defaxis(prim, name="axis"):
    """The rule of a unary ``prim`` acting along the one axis given by parameter ``name``
    (the output keeps the operand's shape)."""
    def rule(size, args, dims, **params):
        x, d = args[0], dims[0]
        params[name] = _full_axis(_norm(params[name], x.ndim - 1), d)
        return bind(prim, x, **params), d
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def defaxes(prim, name="axes"):
    """The rule of a unary ``prim`` acting along the axes (a tuple) given by parameter
    ``name``, its output of the operand's rank (an FFT over some axes)."""
    def rule(size, args, dims, **params):
        x, d = args[0], dims[0]
        nd = x.ndim - 1
        params[name] = tuple(_full_axis(_norm(a, nd), d) for a in params[name])
        return bind(prim, x, **params), d
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def defleading(prim):
    """The rule of a ``prim`` that acts on its operands' trailing axes and maps over any leading
    axes (NumPy's linalg functions): batch axes go first, unbatched operands are broadcast to
    the batch (a stride-0 view); one output or a list of them, each batched along axis 0.  An
    operand whose rank selects a behaviour (a 1-d right-hand side) needs a rule of its own."""
    def rule(size, args, dims, **params):
        out = bind(prim, *[batch_at(a, d, size, 0) for a, d in zip(args, dims)], **params)
        if isinstance(out, (list, tuple)):
            return list(out), [0] * len(out)
        return out, 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def loop_rule(prim):
    """The loop fallback for ``prim`` as a rule (see ``defloop``)."""
    def rule(size, args, dims, **params):
        return _loop(prim, size, args, dims, params)
    rule.__name__ = f"batch_{prim.name}_loop"
    return rule


def defloop(prim):
    """Batch ``prim`` by applying it once per example and stacking the results (opt-in: a
    Python loop over the batch, for primitives with no vectorized rule)."""
    BATCH_RULES[prim] = rule = loop_rule(prim)
    return rule


def defnoarrays(prim):
    """A primitive without array operands: its output never depends on a batched value."""
    def rule(size, args, dims, **params):
        return bind(prim, *args, **params), None
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


# -- memory and constants ------------------------------------------------------------------------

for _p in (P.buffer_p, P.const_scalar_p, P.const_array_p):
    defnoarrays(_p)
defbroadcast(P.contiguous_p)
defbroadcast(P.copy_p)


def _batch_assign(size, args, dims):
    dst, src = args
    dd, ds = dims
    if dd is None:
        raise ValueError(
            "assign: the destination (x in x[idx] = v, x += y or nx.assign(x, v)) holds one value "
            "for every example of the vmap but the value written differs between examples; "
            "write functionally instead (x = x.at[idx].set(v)), or pass x into the vmapped "
            "function batched")
    return bind(P.assign_p, dst, src if ds == dd else batch_at(src, ds, size, dd)), dd


BATCH_RULES[P.assign_p] = _batch_assign


# -- elementwise ----------------------------------------------------------------------------------

for _p in (P.neg_p, P.log2_p, P.exp2_p, P.sin_p, P.sqrt_p, P.recip_p, P.exp_p, P.log_p,
           P.cos_p, P.tanh_p, P.log1p_p, P.expm1_p,
           P.add_p, P.sub_p, P.mul_p, P.fdiv_p, P.pow_p, P.max_p, P.idiv_p, P.mod_p,
           P.cmplt_p, P.cmpne_p, P.xor_p, P.or_p, P.and_p, P.where_p, P.cast_p):
    defbroadcast(_p)


# -- movement -------------------------------------------------------------------------------------

def _batch_reshape(size, args, dims, *, shape):
    return bind(P.reshape_p, moveaxis(args[0], dims[0], 0), shape=(size,) + tuple(shape)), 0


def _batch_expand(size, args, dims, *, shape):
    x = moveaxis(args[0], dims[0], 0)
    shape = tuple(shape)
    lead = len(shape) - (x.ndim - 1)
    if lead:
        x = bind(P.reshape_p, x, shape=(size,) + (1,) * lead + x.shape[1:])
    return bind(P.expand_p, x, shape=(size,) + shape), 0


def _batch_permute(size, args, dims, *, axes):
    x, d = args[0], dims[0]
    nd = x.ndim - 1
    return bind(P.permute_p, x, axes=(d,) + tuple(_full_axis(_norm(a, nd), d) for a in axes)), 0


def _batch_pad(size, args, dims, *, config, fill):
    d = dims[0]
    config = list(config)
    config.insert(d, (0, 0))
    return bind(P.pad_p, args[0], config=tuple(config), fill=fill), d


def _batch_shrink(size, args, dims, *, limits):
    d = dims[0]
    limits = list(limits)
    limits.insert(d, (0, size))
    return bind(P.shrink_p, args[0], limits=tuple(limits)), d


def _batch_flip(size, args, dims, *, axes):
    x, d = args[0], dims[0]
    nd = x.ndim - 1
    return bind(P.flip_p, x, axes=tuple(_full_axis(_norm(a, nd), d) for a in axes)), d


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


def _batch_cat(size, args, dims, *, axis):
    nd = _ndim(args[0], dims[0])
    xs = [batch_at(a, d, size, 0) for a, d in zip(args, dims)]
    return bind(P.cat_p, *xs, axis=_norm(axis, nd) + 1), 0


BATCH_RULES[P.reshape_p] = _batch_reshape
BATCH_RULES[P.expand_p] = _batch_expand
BATCH_RULES[P.permute_p] = _batch_permute
BATCH_RULES[P.pad_p] = _batch_pad
BATCH_RULES[P.shrink_p] = _batch_shrink
BATCH_RULES[P.flip_p] = _batch_flip
BATCH_RULES[P.as_strided_p] = _batch_as_strided
BATCH_RULES[P.cat_p] = _batch_cat


def _batch_roll(size, args, dims, *, shift, axis):
    x, d = args[0], dims[0]
    return bind(P.roll_p, x, shift=shift, axis=_full_axis(_norm(axis, x.ndim - 1), d)), d


BATCH_RULES[P.roll_p] = _batch_roll


# -- reductions and scans ---------------------------------------------------------------------------

for _p in (P.reduce_sum_p, P.reduce_max_p, P.reduce_prod_p):
    defreduction(_p)
defaxis(P.associative_scan_p)


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


# -- indexing, linear algebra, windows, random --------------------------------------------------------

def _batch_matmul(size, args, dims):
    """np.matmul's rules per example: 1-d operands become matrices (a row, a column) and are
    squeezed back; the batch axis goes first, in front of the operands' own batch axes.  A
    batch against one shared matrix is one matrix product (the batch folded into the rows);
    a contraction over one element is an outer product (a broadcast multiply)."""
    (a, b), (da, db) = args, dims
    ra, rb = _ndim(a, da), _ndim(b, db)
    if da is not None:
        a = moveaxis(a, da, 0)
    if db is not None:
        b = moveaxis(b, db, 0)
    if ra == 1 and rb == 2:
        if db is None:        # vectors against one matrix: (B, k) @ (k, m)
            return bind(P.matmul_p, a, b), 0
        if da is None:        # one vector against matrices: b's transposes times a column
            return bind(P.matmul_p, moveaxis(b, 1, 2), a), 0
    if ra == 2 and rb == 1 and da is None:   # one matrix against vectors: (B, k) @ a.T
        return bind(P.matmul_p, b, bind(P.permute_p, a, axes=(1, 0))), 0
    if ra == 1:
        a = bind(P.reshape_p, a, shape=a.shape[:-1] + (1, a.shape[-1]))
    if rb == 1:
        b = bind(P.reshape_p, b, shape=b.shape + (1,))
    r = max(ra, rb, 2)
    if da is not None and max(ra, 2) < r:
        a = bind(P.reshape_p, a, shape=(size,) + (1,) * (r - max(ra, 2)) + a.shape[1:])
    if db is not None and max(rb, 2) < r:
        b = bind(P.reshape_p, b, shape=(size,) + (1,) * (r - max(rb, 2)) + b.shape[1:])
    out = _matmul_batched(a, b)
    if ra == 1 or rb == 1:
        drop = {out.ndim - 2} if ra == 1 else set()
        if rb == 1:
            drop.add(out.ndim - 1)
        out = bind(P.reshape_p, out, shape=tuple(n for i, n in enumerate(out.shape)
                                                 if i not in drop))
    return out, 0


def _matmul_batched(a, b):
    """np.matmul of a (..., n, k) and b (..., k, m), at least one with the batch axis first."""
    k = a.shape[-1]
    if k == 1 and a.dtype == b.dtype:      # outer products: no sum to do
        lead = _broadcast_lead(a.shape[:-2], b.shape[:-2])
        n, m = a.shape[-2], b.shape[-1]
        return bind(P.mul_p, bind(P.expand_p, a, shape=lead + (n, m)),
                    bind(P.expand_p, b, shape=lead + (n, m)))
    if b.ndim == 2:                        # (B..., n, k) @ (k, m): one product
        rows = math.prod(a.shape[:-1])
        out = bind(P.matmul_p, bind(P.reshape_p, a, shape=(rows, k)), b)
        return bind(P.reshape_p, out, shape=a.shape[:-1] + (b.shape[-1],))
    if a.ndim == 2:                        # (n, k) @ (B..., k, m) = ((B..., m, k) @ a.T).T
        bt = moveaxis(b, b.ndim - 1, b.ndim - 2)
        rows = math.prod(bt.shape[:-1])
        out = bind(P.matmul_p, bind(P.reshape_p, bt, shape=(rows, k)),
                   bind(P.permute_p, a, axes=(1, 0)))
        out = bind(P.reshape_p, out, shape=bt.shape[:-1] + (a.shape[0],))
        return moveaxis(out, out.ndim - 1, out.ndim - 2)
    return bind(P.matmul_p, a, b)


def _broadcast_lead(s1, s2):
    """NumPy's broadcast of two shapes (the batch axes of matmul's operands)."""
    nd = max(len(s1), len(s2))
    s1, s2 = (1,) * (nd - len(s1)) + tuple(s1), (1,) * (nd - len(s2)) + tuple(s2)
    return tuple(x if y == 1 else y for x, y in zip(s1, s2))


def _batch_gather(size, args, dims, *, axis):
    (data, idx), (dd, di) = args, dims
    if axis is None:      # flat data, 1-d indices
        data = _front(data, dd)
        data = bind(P.reshape_p, data, shape=(data.shape[0], math.prod(data.shape[1:])))
        return bind(P.gather_p, data, _front(idx, di), axis=1), 0
    nd = _ndim(data, dd)
    return bind(P.gather_p, _front(data, dd), _front(idx, di), axis=_norm(axis, nd) + 1), 0


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


def _defwindows(prim):
    """unfold/fold take (N, ...): the batch merges into N and splits off the result."""
    def rule(size, args, dims, **params):
        x = moveaxis(args[0], dims[0], 0)
        n = x.shape[1]
        out = bind(prim, bind(P.reshape_p, x, shape=(size * n,) + x.shape[2:]), **params)
        return bind(P.reshape_p, out, shape=(size, n) + out.shape[1:]), 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule


def _halves(c, h):
    return (bind(P.shrink_p, c, limits=((0, c.shape[0]), (0, h))),
            bind(P.shrink_p, c, limits=((0, c.shape[0]), (h, 2 * h))))


def _batch_threefry(size, args, dims):
    """threefry(key, count) hashes the pairs (flat[i], flat[i + h]) of the flattened count
    (padded with a zero to an even length 2h): with one key, every example's halves go into
    one call (all first halves, then all second halves) and its results are put back; with a
    key per example (or a batch of keys already), the keys go in as a batch (*batch, 2), each
    hashing its own example's count."""
    (key, ctr), (dk, dc) = args, dims
    if dk is not None or key.ndim > 1:
        return bind(P.threefry_p, batch_at(key, dk, size, 0), batch_at(ctr, dc, size, 0)), 0
    c = moveaxis(ctr, dc, 0)
    shape = c.shape[1:]
    n = math.prod(shape)
    h = (n + 1) // 2
    c = bind(P.reshape_p, c, shape=(size, n))
    if 2 * h != n:
        c = bind(P.pad_p, c, config=((0, 0), (0, 1)), fill=0)
    x0, x1 = _halves(c, h)
    flat = (size * h,)
    y = bind(P.threefry_p, key, bind(P.cat_p, bind(P.reshape_p, x0, shape=flat),
                                      bind(P.reshape_p, x1, shape=flat), axis=0))
    y0 = bind(P.reshape_p, bind(P.shrink_p, y, limits=((0, size * h),)), shape=(size, h))
    y1 = bind(P.reshape_p, bind(P.shrink_p, y, limits=((size * h, 2 * size * h),)),
              shape=(size, h))
    out = bind(P.shrink_p, bind(P.cat_p, y0, y1, axis=1), limits=((0, size), (0, n)))
    return bind(P.reshape_p, out, shape=(size,) + shape), 0


BATCH_RULES[P.matmul_p] = _batch_matmul
BATCH_RULES[P.gather_p] = _batch_gather
BATCH_RULES[P.scatter_p] = _batch_scatter
_defwindows(P.unfold_p)
_defwindows(P.fold_p)
BATCH_RULES[P.threefry_p] = _batch_threefry


def _batch_random(prim):
    """threefry_bits/threefry_sample of a batch of keys: the keys go in as one (*batch, 2) operand,
    each drawing its own sample (the batch axis first)."""
    def rule(size, args, dims, **params):
        return bind(prim, moveaxis(args[0], dims[0], 0), **params), 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule


_batch_random(P.threefry_bits_p)
_batch_random(P.threefry_sample_p)


# -- sorting and searching ----------------------------------------------------------------------------

defaxis(P.sort_p)
defaxis(P.argsort_p)


def _batch_searchsorted(size, args, dims, **params):
    (x1, x2), (d1, d2) = args, dims
    if d1 is None:        # one sorted sequence: the queries are independent
        return bind(P.searchsorted_p, x1, x2, **params), d2
    # one sorted sequence per example: searched example by example
    return _loop(P.searchsorted_p, size, args, dims, params)


BATCH_RULES[P.searchsorted_p] = _batch_searchsorted


# -- statistics family: nan-reductions, fused clip ------------------------------------------------------

defreduction(P.reduce_nanmax_p)
defreduction(P.reduce_nanmin_p)
defbroadcast(P.clip_p)


# -- WP-elementwise family ---------------------------------------------------------------------------

for _p in (P.tan_p, P.asin_p, P.acos_p, P.atan_p, P.sinh_p, P.cosh_p, P.asinh_p, P.acosh_p,
           P.atanh_p, P.log10_p, P.abs_p, P.real_p, P.imag_p, P.conj_p, P.deg2rad_p,
           P.rad2deg_p, P.sinc_taylor_p, P.floor_p, P.ceil_p, P.rint_p, P.trunc_p, P.sign_p,
           P.signbit_p, P.isnan_p, P.isinf_p, P.isfinite_p, P.atan2_p, P.hypot_p,
           P.copysign_p, P.logaddexp_p, P.logaddexp2_p, P.nextafter_p, P.complex_p,
           P.lshift_p, P.rshift_p):
    defbroadcast(_p)


# -- FFTs, special functions, linear algebra ----------------------------------------------------
# FFTs act along their ``axes``; the special functions are elementwise; the linear-algebra
# primitives act on trailing matrix axes and map over leading ones (lstsq takes one 2-d matrix:
# one solve per example).
for _p in (P.fft_p, P.rfft_p, P.irfft_p):
    defaxes(_p)
for _p in (P.lgamma_p, P.digamma_p, P.polygamma_p, P.gamma_p, P.betaln_p, P.erf_p, P.erfc_p,
           P.erfinv_p, P.ndtr_p, P.ndtri_p, P.log_ndtr_p, P.expit_p, P.logit_p, P.xlogy_p,
           P.xlog1py_p, P.i0_p, P.i0e_p, P.i1_p, P.i1e_p):
    defbroadcast(_p)
for _p in (P.cholesky_p, P.triangular_solve_p, P.solve_p, P.inv_p, P.slogdet_p, P.eigh_p,
           P.eigvalsh_p, P.svd_p, P.svdvals_p, P.qr_p, P.pinv_p):
    defleading(_p)
defloop(P.lstsq_p)


# -- WP-jit: stop_gradient is the identity (elementwise) --------------------------------------
defbroadcast(P.stop_gradient_p)


# -- WP-linalg-perf: the fused Euclidean norm, the LU factorization reused by slogdet -----------
defreduction(P.norm2_p)
for _p in (P.lu_factor_p, P.lu_inverse_p):
    defleading(_p)


# -- WP-linalg-perf: the incomplete gamma and beta functions (elementwise) ----------------------
for _p in (P.gammainc_p, P.gammaincc_p, P.gammainc_da_p, P.betainc_p, P.betainc_da_p,
           P.betainc_db_p):
    defbroadcast(_p)
defleading(P.cholesky_grad_p)     # WP-linalg-perf: the Cholesky derivative (trailing matrices)


# -- WP-linalg-vjp: the determinant from the LU factorization and the fused derivatives (trailing
# matrices, or a reduction for norm2_grad: its operands x, ans, g keep their own shapes, ans
# and g being reduced over ``axes``)
for _p in (P.lu_det_p, P.det_grad_p, P.triangular_solve_grad_p):
    defleading(_p)


def _batch_norm2_grad(size, args, dims, *, axes, keepdims):
    x, ans, g = args
    dx, da, dg = dims
    nd = x.ndim - (dx is not None)
    axes = tuple(_norm(a, nd) for a in axes)
    x, ans, g = batch_at(x, dx, size, 0), batch_at(ans, da, size, 0), batch_at(g, dg, size, 0)
    return bind(P.norm2_grad_p, x, ans, g, axes=tuple(a + 1 for a in axes),
                keepdims=keepdims), 0


BATCH_RULES[P.norm2_grad_p] = _batch_norm2_grad
for _p in (P.cho_solve_p, P.cho_solve_grad_p):     # WP-linalg-vjp (trailing matrices)
    defleading(_p)
for _p in (P.matrix_power_parts_p, P.matrix_power_p):     # WP-linalg-vjp (trailing matrices)
    defleading(_p)
