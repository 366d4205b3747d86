"""Rules of ``matmul``: the VJP multiplies by the other operand's transpose (summed over
broadcast batch axes), the JVP is the product rule; the batching rule follows np.matmul's rules
for 1-d operands and folds a batch against one shared matrix into one product.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import BATCH_RULES, _ndim, moveaxis
from nx_rune.autodiff.rules._common import _add, _mul, _register, unbroadcast
from nx_rune.primitives import bind

# -- matmul ---------------------------------------------------------------------------------------

def _vjp_matmul(g, ans, args, params, need):
    a, b = args
    if a.ndim == 1 and b.ndim == 1:
        return (_mul(ops.broadcast_to(g, b.shape), b) if need[0] else None,
                _mul(ops.broadcast_to(g, a.shape), a) if need[1] else None)
    if a.ndim + b.ndim == 3:
        # matrix-vector products, the common case of small-function derivatives (hessians):
        # the outer product and one transposed product, without the general path's
        # reshapes and broadcast sums (each an op, and a step of every enclosing transformation)
        return _vjp_matvec(g, a, b, need)
    a2 = ops.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = ops.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = ops.expand_dims(g2, -2)
    if b.ndim == 1:
        g2 = ops.expand_dims(g2, -1)
    ga = gb = None
    if need[0]:
        ga = unbroadcast(ops.matmul(g2, ops.swapaxes(b2, -1, -2)), a2.shape)
        ga = ops.reshape(ga, a.shape)
    if need[1]:
        gb = unbroadcast(ops.matmul(ops.swapaxes(a2, -1, -2), g2), b2.shape)
        gb = ops.reshape(gb, b.shape)
    return (ga, gb)


def _vjp_matvec(g, a, b, need):
    """The VJP of (n, k) @ (k,) or (k,) @ (k, m), g of shape (n,) or (m,)."""
    ga = gb = None
    if a.ndim == 2:           # out = a @ b: ga = outer(g, b), gb = a.T @ g
        if need[0]:
            ga = bind(P.matmul_p, bind(P.reshape_p, g, shape=(g.shape[0], 1)),
                      bind(P.reshape_p, b, shape=(1, b.shape[0])))
        if need[1]:
            gb = bind(P.matmul_p, bind(P.permute_p, a, axes=(1, 0)), g)
    else:                     # out = a @ b: ga = b @ g, gb = outer(a, g)
        if need[0]:
            ga = bind(P.matmul_p, b, g)
        if need[1]:
            gb = bind(P.matmul_p, bind(P.reshape_p, a, shape=(a.shape[0], 1)),
                      bind(P.reshape_p, g, shape=(1, g.shape[0])))
    return (ga, gb)


def _jvp_matmul(tangents, ans, args, params):
    ta, tb = tangents
    a, b = args
    out = None if ta is None else bind(P.matmul_p, ta, b)
    if tb is not None:
        term = bind(P.matmul_p, a, tb)
        out = term if out is None else _add(out, term)
    return out


_register(P.matmul_p, _vjp_matmul, _jvp_matmul)


# -- batching ---------------------------------------------------------------------------------

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


BATCH_RULES[P.matmul_p] = _batch_matmul
