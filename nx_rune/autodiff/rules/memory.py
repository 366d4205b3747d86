"""Rules of the memory primitives: constants, buffers, copies, ``assign`` and ``stop_gradient``.

Constants have no derivative; ``contiguous`` and ``copy`` are the identity (their transpose
passes the cotangent through); ``assign(dst, src)`` passes it to ``src`` only;
``stop_gradient`` is the identity with a zero derivative.  Batching: constants are never
batched, the others broadcast like elementwise primitives (``assign`` writes into a batched
destination only).

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import BATCH_RULES, batch_at, defbroadcast, defnoarrays
from nx_rune.autodiff.rules._common import _register, deflinear, defnondiff
from nx_rune.primitives import bind

# -- memory, constants, identities ---------------------------------------------------------

for _p in (P.buffer_p, P.const_scalar_p, P.const_array_p):
    defnondiff(_p)
    defnoarrays(_p)


deflinear(P.contiguous_p, lambda g, ans, x: g)
defbroadcast(P.contiguous_p)


deflinear(P.copy_p, lambda g, ans, x: g)
defbroadcast(P.copy_p)


def _vjp_assign(g, ans, args, params, need):
    # assign(dst, src) returns dst holding src's values: dst's old values get no cotangent
    return (None, g)


def _jvp_assign(tangents, ans, args, params):
    return tangents[1]


_register(P.assign_p, _vjp_assign, _jvp_assign)


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


# stop_gradient is the identity with a zero derivative
defnondiff(P.stop_gradient_p)
defbroadcast(P.stop_gradient_p)
