"""Derivative rules of every primitive: ``VJP_RULES`` and ``JVP_RULES``, side by side by family.

The public form of a rule (what you assign into the tables for a new primitive)::

    VJP_RULES[prim] = lambda ct, *primals, out, **params: (ct_0, ct_1, ...)
    JVP_RULES[prim] = lambda primals, tangents, out, **params: tangent_out

(in practice ``lambda ct, x, out, **params: ...`` for a unary primitive).  A VJP rule gets the
output cotangent, the primal operands, the primal output and the keyword parameters, and
returns one cotangent per operand, each of that operand's shape and dtype, or None for a zero
or non-differentiable one.  A JVP rule gets the primal operands, their tangents (zeros where an
operand carries no perturbation), the output and the parameters, and returns the output's
tangent.  Write rules with front-end ops (``nx.sin``, ``*``, ...) or ``bind``: the interpreters
then see what a rule computes, so rules are differentiable themselves (grad of grad, jvp of
grad, hessians of the new primitive work too).  Example::

    cube_p = Primitive("cube")
    cube_p.def_impl(lambda x: nx.asarray(x.numpy() ** 3))
    VJP_RULES[cube_p] = lambda ct, x, out, **params: (ct * 3 * x * x,)
    JVP_RULES[cube_p] = lambda primals, tangents, out, **params: 3 * primals[0] ** 2 * tangents[0]

The built-in rules are ``VJPRule``/``JVPRule`` objects: callable in the public form, and with
a faster form that the interpreters use (``fn(g, ans, args, params, need)`` where ``need[i]``
is truthy when operand i wants a cotangent, so that e.g. ``x * 2.0`` costs one product, and
``fn(tangents, ans, args, params)`` with None for zero tangents).  The helpers below make them:
``defelementwise(prim, apply)`` fills both tables of a unary elementwise primitive from
``apply(v, ans, x) = v * f'(x)``; ``defvjp``/``defjvp`` take one function per operand;
``deflinear`` a linear primitive's transpose; ``defnondiff`` a zero derivative.

Masks and indices that are piecewise constant in the inputs (comparisons, tie counts, which
scatter update wins) are computed with NumPy from the concrete values, as constants.

Conventions: ties of ``max`` (elementwise, reduce_max, cummax/cummin, scatter max/min) split
the derivative equally between the tied operands, as JAX's ``reduce_max``; ``pow``'s derivative
in the exponent is 0 at a base of 0 and nan for a negative base (real pow is not
differentiable there); ``mod`` has derivatives 1 and -floor(a / b); ``idiv``, comparisons, bit ops, argmax and
threefry have zero
derivatives; ``assign(dst, src)`` passes the cotangent to ``src`` only (dst's old values are
overwritten; mutating a value that recorded ops still need gives wrong derivatives, as in any
tape); complex values get the transpose (non-conjugated) convention.
"""
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

__all__ = ["VJP_RULES", "JVP_RULES", "NONDIFF", "VJPRule", "JVPRule", "defvjp", "defjvp",
           "defelementwise", "deflinear", "defnondiff", "unbroadcast"]

VJP_RULES = {}
JVP_RULES = {}
NONDIFF = set()
LN2 = math.log(2.0)

_scal = Tensor._broadcast_scalar


class VJPRule:
    """A rule in the fast form ``fn(g, ans, args, params, need)``; calling it uses the public
    form ``rule(ct, *primals, out, **params) -> tuple``."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, ct, *args, **params):
        *primals, out = args
        return tuple(self.fn(ct, out, primals, params, [1] * len(primals)))

    def __repr__(self):
        return f"<VJPRule {self.fn.__name__}>"


class JVPRule:
    """A rule in the fast form ``fn(tangents, ans, args, params)``; calling it uses the public
    form ``rule(primals, tangents, out, **params) -> tangent``."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, primals, tangents, out, **params):
        return self.fn(list(tangents), out, list(primals), params)

    def __repr__(self):
        return f"<JVPRule {self.fn.__name__}>"


def _register(prim, vjp, jvp):
    VJP_RULES[prim], JVP_RULES[prim] = VJPRule(vjp), JVPRule(jvp)


# -- helpers -------------------------------------------------------------------------------

def defvjp(prim, *fns):
    """VJP of ``prim`` from one function per operand: ``fns[i](g, ans, *args, **params)``
    gives operand i's cotangent (None in ``fns``: operand i is not differentiable)."""
    def rule(g, ans, args, params, need):
        return [f(g, ans, *args, **params) if n and f is not None else None
                for f, n in zip(fns, need)]
    rule.__name__ = f"vjp_{prim.name}"
    VJP_RULES[prim] = VJPRule(rule)
    return VJP_RULES[prim]


def defjvp(prim, *fns):
    """JVP of ``prim`` as the sum of one term per operand: ``fns[i](t, ans, *args, **params)``
    (None in ``fns``: operand i is not differentiable)."""
    def rule(tangents, ans, args, params):
        out = None
        for f, t in zip(fns, tangents):
            if t is not None and f is not None:
                term = f(t, ans, *args, **params)
                if term is not None:
                    out = term if out is None else bind(P.add_p, out, term)
        return out
    rule.__name__ = f"jvp_{prim.name}"
    JVP_RULES[prim] = JVPRule(rule)
    return JVP_RULES[prim]


def defelementwise(prim, apply):
    """Both rules of a unary elementwise ``prim`` from ``apply(v, ans, x)`` = v * f'(x).

    An elementwise Jacobian is diagonal, so the same product serves cotangents and tangents.
    """
    def vjp(g, ans, args, params, need):
        return (apply(g, ans, args[0]),)

    def jvp(tangents, ans, args, params):
        return apply(tangents[0], ans, args[0])
    vjp.__name__, jvp.__name__ = f"vjp_{prim.name}", f"jvp_{prim.name}"
    _register(prim, vjp, jvp)


def deflinear(prim, transpose):
    """A unary ``prim`` linear in its operand: its JVP applies ``prim`` to the tangent; its VJP
    is ``transpose(g, ans, x, **params)``."""
    def vjp(g, ans, args, params, need):
        return (transpose(g, ans, args[0], **params),)

    def jvp(tangents, ans, args, params):
        return bind(prim, tangents[0], **params)
    vjp.__name__, jvp.__name__ = f"vjp_{prim.name}", f"jvp_{prim.name}"
    _register(prim, vjp, jvp)


def defnondiff(prim):
    """A ``prim`` whose derivative is zero (or whose output is not differentiable)."""
    def vjp(g, ans, args, params, need):
        return [None] * len(args)

    def jvp(tangents, ans, args, params):
        return None
    vjp.__name__, jvp.__name__ = f"vjp_{prim.name}", f"jvp_{prim.name}"
    _register(prim, vjp, jvp)
    NONDIFF.add(prim)


def _carr(arr, dtype=None):
    """A C-contiguous ndarray of arr (0-d stays 0-d, unlike np.ascontiguousarray)."""
    return np.asarray(arr, dtype=dtype, order="C")


def _mul(a, b):
    return bind(P.mul_p, a, b)


def _add(a, b):
    return bind(P.add_p, a, b)


def _div(a, b):
    return bind(P.fdiv_p, a, b)


def _c(value, like):
    """The Python scalar ``value`` in ``like``'s dtype and shape (a stride-0 constant)."""
    return _scal(value, like.dtype, like.shape)


def _const(arr, like):
    """A constant Tensor from a NumPy array, in ``like``'s dtype."""
    return Tensor._wrap(_carr(arr, dtype=like.dtype))


def _val(x):
    """The concrete values of x (a Tensor or a tracer at any depth) as an ndarray."""
    if isinstance(x, np.ndarray):
        return x
    return x._concrete_tensor()._np()


def _zeros(like):
    return _scal(0, like.dtype, like.shape)


def _known(*xs):
    """Whether the values of every x are known (False for a value traced by jit: the rules
    then compute their masks with operations instead of NumPy)."""
    return all(isinstance(x, np.ndarray) or x._concrete_tensor() is not None for x in xs)


def _mask(b, like):
    """A bool array ``b`` (traced) as 0/1 in ``like``'s dtype."""
    return ops.astype(b, like.dtype)


def _fill(ts, args):
    return [t if t is not None else _zeros(a) for t, a in zip(ts, args)]


def _keep_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _unreduce(g, shape, axes, keepdims):
    """A cotangent of a reduction over ``axes`` spread back to the input ``shape``."""
    if not keepdims:
        g = ops.reshape(g, _keep_shape(shape, axes))
    return ops.broadcast_to(g, shape)


def unbroadcast(x, shape):
    """Sum ``x`` down to ``shape`` (the adjoint of broadcasting ``shape`` to x.shape)."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and x.shape[lead + i] != 1)
    if axes:
        x = bind(P.reduce_sum_p, x, axes=axes, keepdims=False)
    return ops.reshape(x, shape)


def _inverse_perm(axes):
    inv = [0] * len(axes)
    for i, a in enumerate(axes):
        inv[a] = i
    return tuple(inv)


def _moveaxis_last(x, axis):
    return x if axis == x.ndim - 1 else ops.moveaxis(x, axis, -1)


def _moveaxis_back(x, axis):
    return x if axis == x.ndim - 1 else ops.moveaxis(x, -1, axis)


def _scan(x, axis, op):
    return bind(P.associative_scan_p, x, axis=axis, op=op)


def _revcumsum(x, axis):
    return ops.flip(_scan(ops.flip(x, axis), axis, "sum"), axis)


def _exclusive_cumprod(x, axis, reverse=False):
    """Products of the elements strictly before (after, with reverse) each one along axis."""
    if reverse:
        return ops.flip(_exclusive_cumprod(ops.flip(x, axis), axis), axis)
    n = x.shape[axis]
    cfg = [(0, 0)] * x.ndim
    cfg[axis] = (1, 0)
    lim = [(0, d) for d in x.shape]
    lim[axis] = (0, n)
    return ops.shrink(_scan(ops.pad(x, cfg, constant_values=1), axis, "prod"), lim)


def _gather(data, indices, axis):
    return bind(P.gather_p, data, indices, axis=axis)


def _scatter(template, indices, updates, axis, mode):
    return bind(P.scatter_p, template, indices, updates, axis=axis, mode=mode)


def _cv(x):
    """x's concrete values as a Tensor (a constant at every level)."""
    return Tensor._wrap(_carr(_val(x)))


def _eval(prim, *args, **params):
    """``prim`` applied to concrete Tensors, for constants (no transformation sees it)."""
    return prim.impl(*args, **params)


# -- memory, constants, identities ---------------------------------------------------------

for _p in (P.buffer_p, P.const_scalar_p, P.const_array_p):
    defnondiff(_p)

deflinear(P.contiguous_p, lambda g, ans, x: g)
deflinear(P.copy_p, lambda g, ans, x: g)


def _vjp_assign(g, ans, args, params, need):
    # assign(dst, src) returns dst holding src's values: dst's old values get no cotangent
    return (None, g)


def _jvp_assign(tangents, ans, args, params):
    return tangents[1]


_register(P.assign_p, _vjp_assign, _jvp_assign)


# -- unary elementwise ---------------------------------------------------------------------

deflinear(P.neg_p, lambda g, ans, x: bind(P.neg_p, g))
defelementwise(P.sin_p, lambda v, ans, x: _mul(v, bind(P.cos_p, x)))
defelementwise(P.cos_p, lambda v, ans, x: bind(P.neg_p, _mul(v, bind(P.sin_p, x))))
defelementwise(P.exp_p, lambda v, ans, x: _mul(v, ans))
defelementwise(P.exp2_p, lambda v, ans, x: _mul(v, _mul(ans, _c(LN2, ans))))
defelementwise(P.log_p, lambda v, ans, x: _div(v, x))
defelementwise(P.log2_p, lambda v, ans, x: _div(v, _mul(x, _c(LN2, x))))
defelementwise(P.log1p_p, lambda v, ans, x: _div(v, _add(x, _c(1, x))))
defelementwise(P.expm1_p, lambda v, ans, x: _mul(v, _add(ans, _c(1, ans))))
defelementwise(P.sqrt_p, lambda v, ans, x: _div(v, _mul(ans, _c(2, ans))))
defelementwise(P.recip_p, lambda v, ans, x: bind(P.neg_p, _mul(_mul(v, ans), ans)))
defelementwise(P.tanh_p, lambda v, ans, x: _mul(v, _add(_c(1, ans),
                                                        bind(P.neg_p, _mul(ans, ans)))))


# -- binary elementwise (operands of equal shape and dtype) -----------------------------------

def _vjp_add(g, ans, args, params, need):
    return (g, g)


def _jvp_add(tangents, ans, args, params):
    ta, tb = tangents
    if ta is None:
        return tb
    return ta if tb is None else _add(ta, tb)


def _vjp_mul(g, ans, args, params, need):
    a, b = args
    return (_mul(g, b) if need[0] else None, _mul(a, g) if need[1] else None)


def _jvp_mul(tangents, ans, args, params):
    ta, tb = tangents
    a, b = args
    if ta is None:
        return _mul(a, tb)
    if tb is None:
        return _mul(ta, b)
    return _add(_mul(ta, b), _mul(a, tb))


def _vjp_fdiv(g, ans, args, params, need):
    q = _div(g, args[1])
    return (q, bind(P.neg_p, _mul(q, ans)) if need[1] else None)


def _jvp_fdiv(tangents, ans, args, params):
    ta, tb = tangents
    b = args[1]
    if tb is None:
        return _div(ta, b)
    tb = _mul(tb, ans)
    return _div(bind(P.neg_p, tb) if ta is None else _add(ta, bind(P.neg_p, tb)), b)


def _pow_dbase(ans, a, b):
    """d a**b / da = b * a**(b-1), with 0 (not 0 * inf) where a == b == 0."""
    if not _known(a, b):
        sing = ops.logical_and(ops.equal(a, 0), ops.equal(b, 0))
        a = bind(P.where_p, sing, _c(1, a), a)
        return _mul(b, bind(P.pow_p, a, _add(b, _c(-1, b))))
    av, bv = _val(a), _val(b)
    sing = (av == 0) & (bv == 0)
    if sing.any():
        a = bind(P.where_p, Tensor._wrap(_carr(sing)), _c(1, a), a)
    return _mul(b, bind(P.pow_p, a, _add(b, _c(-1, b))))


def _pow_dexp(ans, a, b):
    """d a**b / db = a**b * log(a), with 0 where a == 0 (nan for a < 0: not differentiable)."""
    if not _known(a):
        return _mul(ans, bind(P.log_p, bind(P.where_p, ops.equal(a, 0), _c(1, a), a)))
    zero = _val(a) == 0
    if zero.any():
        a = bind(P.where_p, Tensor._wrap(_carr(zero)), _c(1, a), a)
    return _mul(ans, bind(P.log_p, a))


defvjp(P.pow_p, lambda g, ans, a, b: _mul(g, _pow_dbase(ans, a, b)),
       lambda g, ans, a, b: _mul(g, _pow_dexp(ans, a, b)))
defjvp(P.pow_p, lambda t, ans, a, b: _mul(t, _pow_dbase(ans, a, b)),
       lambda t, ans, a, b: _mul(t, _pow_dexp(ans, a, b)))


def _max_weight(a, b):
    """Share of max(a, b)'s derivative that goes to a: 1 where a > b, 1/2 on ties, else 0."""
    if not _known(a, b):
        return _add(_mask(ops.greater(a, b), a), _mul(_c(0.5, a), _mask(ops.equal(a, b), a)))
    av, bv = _val(a), _val(b)
    w = (av > bv).astype(a.dtype)
    w += 0.5 * (av == bv)
    return _const(w, a)


def _vjp_max(g, ans, args, params, need):
    a, b = args
    w = _max_weight(a, b)
    ga = _mul(g, w)
    return (ga if need[0] else None, _add(g, bind(P.neg_p, ga)) if need[1] else None)


def _jvp_max(tangents, ans, args, params):
    a, b = args
    w = _max_weight(a, b)
    ta, tb = tangents
    if ta is None:
        if not _known(w):
            return _mul(tb, _add(_c(1, w), bind(P.neg_p, w)))
        return _mul(tb, _const(1 - _val(w), w))
    if tb is None:
        return _mul(ta, w)
    # ta * w + tb * (1 - w) = tb + (ta - tb) * w
    return _add(tb, _mul(_add(ta, bind(P.neg_p, tb)), w))


_register(P.add_p, _vjp_add, _jvp_add)
_register(P.mul_p, _vjp_mul, _jvp_mul)
_register(P.fdiv_p, _vjp_fdiv, _jvp_fdiv)
_register(P.max_p, _vjp_max, _jvp_max)

for _p in (P.idiv_p, P.cmplt_p, P.cmpne_p, P.xor_p, P.or_p, P.and_p):
    defnondiff(_p)

# a mod b = a - floor(a / b) * b: derivative 1 in a and -floor(a / b) in b (as JAX), where the
# floor is piecewise constant (floor division is its own primitive, with zero derivative)
defvjp(P.mod_p, lambda g, ans, a, b: g,
       lambda g, ans, a, b: _mul(bind(P.neg_p, g), bind(P.idiv_p, a, b)))
defjvp(P.mod_p, lambda t, ans, a, b: t,
       lambda t, ans, a, b: _mul(bind(P.neg_p, t), bind(P.idiv_p, a, b)))


def _vjp_where(g, ans, args, params, need):
    c = args[0]
    z = _zeros(g)
    return (None, bind(P.where_p, c, g, z) if need[1] else None,
            bind(P.where_p, c, z, g) if need[2] else None)


def _jvp_where(tangents, ans, args, params):
    _, tx, ty = tangents
    if tx is None and ty is None:
        return None
    tx = _zeros(ans) if tx is None else tx
    ty = _zeros(ans) if ty is None else ty
    return bind(P.where_p, args[0], tx, ty)


_register(P.where_p, _vjp_where, _jvp_where)


def _inexact(dt):
    return dt.kind in "fc"


def _vjp_cast(g, ans, args, params, need):
    x = args[0]
    if not _inexact(x.dtype):
        return (None,)
    return (ops.astype(g, x.dtype),)


def _jvp_cast(tangents, ans, args, params):
    if not _inexact(params["dtype"]):
        return None
    return bind(P.cast_p, tangents[0], dtype=params["dtype"])


_register(P.cast_p, _vjp_cast, _jvp_cast)


# -- movement: the VJP is the inverse movement ----------------------------------------------------

deflinear(P.reshape_p, lambda g, ans, x, shape: ops.reshape(g, x.shape))
deflinear(P.expand_p, lambda g, ans, x, shape: unbroadcast(g, x.shape))
deflinear(P.permute_p, lambda g, ans, x, axes: ops.transpose(g, _inverse_perm(axes)))
deflinear(P.shrink_p, lambda g, ans, x, limits: ops.pad(
    g, [(a, n - b) for (a, b), n in zip(limits, x.shape)]))
deflinear(P.flip_p, lambda g, ans, x, axes: ops.flip(g, axes))


def _vjp_pad(g, ans, args, params, need):
    x = args[0]
    return (ops.shrink(g, [(b, b + n) for (b, _), n in zip(params["config"], x.shape)]),)


def _jvp_pad(tangents, ans, args, params):
    # pad is affine: the padding is a constant, so the tangent is padded with 0
    return bind(P.pad_p, tangents[0], config=params["config"], fill=0)


_register(P.pad_p, _vjp_pad, _jvp_pad)


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


# -- reductions ----------------------------------------------------------------------------------

deflinear(P.reduce_sum_p, lambda g, ans, x, axes, keepdims: _unreduce(g, x.shape, axes, keepdims))


def _max_share(x, ans, axes, keepdims):
    """Each element's share of a max reduction's derivative: ties split equally."""
    if not _known(x, ans):
        a = ans if keepdims else ops.reshape(ans, _keep_shape(x.shape, axes))
        mask = _mask(ops.equal(x, ops.broadcast_to(a, x.shape)), x)
        count = bind(P.reduce_sum_p, mask, axes=tuple(axes), keepdims=True)
        return _div(mask, ops.broadcast_to(ops.maximum(count, 1), x.shape))
    xv = _val(x)
    av = _val(ans)
    if not keepdims:
        av = av.reshape(_keep_shape(x.shape, axes))
    mask = (xv == av)
    count = mask.sum(axis=axes, keepdims=True)
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
defnondiff(P.argmax_p)


# -- scans ------------------------------------------------------------------------------------------

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
    each position's plateau, start of the next plateau after each position) along axis, as
    tensors: the first two in ``x``'s dtype, the positions int64."""
    if not _known(x, ans):
        return _scan_extremum_plan_traced(x, ans, axis)
    xv = np.moveaxis(_val(x), axis, -1)
    yv = np.moveaxis(_val(ans), axis, -1)
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
    back = lambda a: _carr(np.moveaxis(a, -1, axis))  # noqa: E731
    return (_const(back(rec), x), _const(back(1.0 / np.maximum(count, 1)), x),
            Tensor._wrap(back(start.astype(np.int64))), Tensor._wrap(back(nxt)))


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
    return (_moveaxis_back(_mask(rec, x), axis), _moveaxis_back(inv, axis),
            _moveaxis_back(start, axis), _moveaxis_back(nxt, axis))


def _scan_extremum_vjp(g, ans, x, axis):
    rec, inv, _, nxt = _scan_extremum_plan(x, ans, axis)
    r = _revcumsum(_mul(g, inv), axis)
    cfg = [(0, 0)] * g.ndim
    cfg[axis] = (0, 1)
    tail = _gather(ops.pad(r, cfg), nxt, axis)
    return _mul(rec, _add(r, bind(P.neg_p, tail)))


def _scan_extremum_jvp(t, ans, x, axis):
    rec, inv, start, _ = _scan_extremum_plan(x, ans, axis)
    u = _mul(t, rec)
    c = _scan(u, axis, "sum")
    before = _gather(_add(c, bind(P.neg_p, u)), start, axis)
    return _mul(_add(c, bind(P.neg_p, before)), inv)


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


# -- linear algebra -------------------------------------------------------------------------------

def _vjp_matmul(g, ans, args, params, need):
    a, b = args
    if a.ndim == 1 and b.ndim == 1:
        return (_mul(ops.broadcast_to(g, b.shape), b) if need[0] else None,
                _mul(ops.broadcast_to(g, a.shape), a) if need[1] else None)
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


def _jvp_matmul(tangents, ans, args, params):
    ta, tb = tangents
    a, b = args
    out = None if ta is None else bind(P.matmul_p, ta, b)
    if tb is not None:
        term = bind(P.matmul_p, a, tb)
        out = term if out is None else _add(out, term)
    return out


_register(P.matmul_p, _vjp_matmul, _jvp_matmul)


# -- gather / scatter ---------------------------------------------------------------------------------

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
        safe = bind(P.where_p, Tensor._wrap(_carr(zero)), _c(1, ub), ub)
        zt = Tensor._wrap(_carr(zero, dtype=np.int64))
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
    cnt = _val(_eval(P.scatter_p, Tensor._wrap((tv == av).astype(np.int64)), idx,
                     Tensor._wrap(hit_u.astype(np.int64)), axis=axis, mode="add"))
    cnt = np.maximum(cnt, 1)
    cnt_u = _val(_eval(P.gather_p, Tensor._wrap(cnt), idx, axis=axis))
    return _const((tv == av) / cnt, template), _const(hit_u / cnt_u, template)


def _scatter_derivs_traced(template, indices, updates, ans, axis, mode, B):
    """``_scatter_derivs`` computed with operations (values traced by jit)."""
    i64 = np.dtype(np.int64)
    if mode == "set":
        n = int(np.prod(B))
        ids = Tensor._wrap(np.arange(n, dtype=np.int64).reshape(B))
        win = _scatter(_scal(-1, i64, template.shape), indices, ids, axis, "set")
        mine = ops.equal(_gather(win, indices, axis), ids)
        return _mask(ops.less(win, 0), template), _mask(mine, template)
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
        return full, _mul(du, _mask(alone, du))
    # max / min: ties between the template and the updates split equally
    at = _gather(ans, indices, axis)
    hit_t = ops.equal(template, ans)
    hit_u = ops.equal(ub, at)
    cnt = _scatter(ops.astype(hit_t, i64), indices, ops.astype(hit_u, i64), axis, "add")
    cnt = ops.astype(ops.maximum(cnt, 1), template.dtype)
    cnt_u = _gather(cnt, indices, axis)
    return _div(_mask(hit_t, template), cnt), _div(_mask(hit_u, cnt_u), cnt_u)


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


# -- windows (unfold and fold are each other's adjoint) ---------------------------------------------

deflinear(P.unfold_p, lambda g, ans, x, kernel_size, stride, dilation, padding: bind(
    P.fold_p, g, output_size=tuple(x.shape[2:]), kernel_size=kernel_size, stride=stride,
    dilation=dilation, padding=padding))
deflinear(P.fold_p, lambda g, ans, x, output_size, kernel_size, stride, dilation, padding: bind(
    P.unfold_p, g, kernel_size=kernel_size, stride=stride, dilation=dilation, padding=padding))

# -- random -----------------------------------------------------------------------------------------
defnondiff(P.threefry_p)

# -- sorting and searching (WP-sorting) ----------------------------------------------------------
# sort(x) = gather(x, perm) with perm the stable sorting permutation (NumPy's order; ties keep
# the order NumPy's stable sort gives them), a constant computed only when a derivative is
# asked: the JVP gathers the tangent, the VJP scatter-adds the cotangent back (the transpose).


def _sort_perm(x, params):
    n = x.shape[params["axis"]]
    dt = np.dtype(np.int32 if n < 2**31 else np.int64)
    if not _known(x):
        return bind(P.argsort_p, x, axis=params["axis"], descending=params["descending"],
                    stable=True, dtype=dt)
    return _eval(P.argsort_p, _cv(x), axis=params["axis"], descending=params["descending"],
                 stable=True, dtype=dt)


def _vjp_sort(g, ans, args, params, need):
    x = args[0]
    return (_scatter(_zeros(x), _sort_perm(x, params), g, params["axis"], "add"),)


def _jvp_sort(tangents, ans, args, params):
    return _gather(tangents[0], _sort_perm(args[0], params), params["axis"])


_register(P.sort_p, _vjp_sort, _jvp_sort)
defnondiff(P.argsort_p)
defnondiff(P.searchsorted_p)


# -- statistics family (WP-statistics) -------------------------------------------------------------
# nanmax/nanmin: the share of max (ties split; a nan entry never equals the result, so it gets 0,
# and an all-nan group gives zeros everywhere)
_def_weighted_reduction(P.reduce_nanmax_p, _max_share)
_def_weighted_reduction(P.reduce_nanmin_p, _max_share)


def _clip_shares(x, lo, hi, lower, upper):
    """Shares of clip's derivative going to (x, lo, hi): those of max(x, lo) then min(., hi),
    ties split equally (as ``max``); a bound that was not given takes nothing.  Returns
    ndarrays, or traced tensors in x's dtype when the values are traced."""
    if not _known(x, lo, hi):
        return _clip_shares_traced(x, lo, hi, lower, upper)
    xv = _val(x)
    one = np.ones(xv.shape)
    if lower:
        lov = _val(lo)
        v = (xv > lov) + 0.5 * (xv == lov)
        y1 = np.maximum(xv, lov)
    else:
        v, y1 = one, xv
    if upper:
        hiv = _val(hi)
        u = (y1 < hiv) + 0.5 * (y1 == hiv)
    else:
        u = one
    return u * v, u * (1 - v), 1 - u


def _clip_shares_traced(x, lo, hi, lower, upper):
    one = _c(1, x)
    half = _c(0.5, x)
    if lower:
        v = _add(_mask(ops.greater(x, lo), x), _mul(half, _mask(ops.equal(x, lo), x)))
        y1 = ops.maximum(x, lo)
    else:
        v, y1 = one, x
    if upper:
        u = _add(_mask(ops.less(y1, hi), x), _mul(half, _mask(ops.equal(y1, hi), x)))
    else:
        u = one
    neg = lambda a: bind(P.neg_p, a)  # noqa: E731
    return _mul(u, v), _mul(u, _add(one, neg(v))), _add(one, neg(u))


def _share(w, like):
    return _const(w, like) if isinstance(w, (np.ndarray, np.generic)) else w


def _vjp_clip(g, ans, args, params, need):
    shares = _clip_shares(*args, params["lower"], params["upper"])
    return tuple(_mul(g, _share(w, g)) if n else None for w, n in zip(shares, need))


def _jvp_clip(tangents, ans, args, params):
    shares = _clip_shares(*args, params["lower"], params["upper"])
    out = None
    for t, w in zip(tangents, shares):
        if t is not None:
            term = _mul(t, _share(w, t))
            out = term if out is None else _add(out, term)
    return out


_register(P.clip_p, _vjp_clip, _jvp_clip)


# -- WP-jit: stop_gradient is the identity with a zero derivative ----------------------------------
defnondiff(P.stop_gradient_p)
