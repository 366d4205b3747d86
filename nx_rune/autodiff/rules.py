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
overwritten; overwriting a value that recorded ops still need makes the backward pass raise
``ModifiedInPlaceError``, see autodiff/core.py); complex values get the transpose
(non-conjugated) convention.
"""
import functools
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff import batched_values
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
    form ``rule(ct, *primals, out, **params) -> tuple``.  ``unary``: for a unary elementwise
    primitive, ``apply(g, ans, x)`` giving the one cotangent, which the tape's backward pass
    calls directly (one Python frame less per entry than ``fn``).  ``operands`` (WP-revmode):
    for a binary elementwise primitive, one ``Steps`` per operand (None: no cotangent), which
    the backward pass runs in C; ``fn`` then runs the same steps."""
    __slots__ = ("fn", "unary", "operands")

    def __init__(self, fn, unary=None):
        self.fn = fn
        self.unary = unary
        self.operands = None

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
    VJP_RULES[prim].unary = apply


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


# _mul(a, b), _add(a, b), _div(a, b): the binary primitives on operands of one shape and dtype
# (partials of bind, which runs in C: no Python frame of their own on the rules' hot path)
_mul = functools.partial(bind, P.mul_p)
_add = functools.partial(bind, P.add_p)
_div = functools.partial(bind, P.fdiv_p)


def _c(value, like):
    """The Python scalar ``value`` in ``like``'s dtype and shape (a stride-0 constant)."""
    return _scal(value, like.dtype, like.shape)


def _const(arr, like):
    """A constant Tensor from a NumPy array, in ``like``'s dtype (batched under vmap when
    ``arr`` has the leading batch axes of ``_val``)."""
    return batched_values.constant(_carr(arr, dtype=like.dtype), like.ndim)


def _mask(arr, like):
    """A constant from a NumPy array of any dtype with ``like``'s axes (see ``_const``)."""
    return batched_values.constant(_carr(arr), like.ndim)


def _val(x):
    """The concrete values of x (a Tensor or a tracer at any depth) as an ndarray.  Under
    ``vmap(grad(...))`` a primal is batched: then the array has one leading axis per active
    vmap level (size 1 where x is not batched; see autodiff/batched_values.py), and a rule
    that reduces over x's axes shifts them by ``arr.ndim - x.ndim``."""
    if isinstance(x, np.ndarray):
        return x
    t = x._concrete_tensor()
    if t is None:
        return batched_values.values(x)
    return t._np()


def _zeros(like):
    return _scal(0, like.dtype, like.shape)


def _known(*xs):
    """Whether the values of every x are known (False for a value traced by jit: the rules
    then compute their masks with operations instead of NumPy; a value batched by vmap over
    concrete values is known, see ``_val``)."""
    for x in xs:
        if isinstance(x, np.ndarray) or x._concrete_tensor() is not None:
            continue
        if batched_values.values(x) is None:
            return False
    return True


def _tmask(b, like):
    """A bool tensor ``b`` (traced) as 0/1 in ``like``'s dtype."""
    return ops.astype(b, like.dtype)


def _fill(ts, args):
    return [t if t is not None else _zeros(a) for t, a in zip(ts, args)]


def _keep_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _unreduce(g, shape, axes, keepdims):
    """A cotangent of a reduction over ``axes`` spread back to the input ``shape``."""
    if not keepdims and tuple(axes) != tuple(range(len(axes))):
        # (reduced leading axes come back by broadcasting alone: no reshape)
        g = ops.reshape(g, _keep_shape(shape, axes))
    # (g's shape broadcasts to shape by construction: the expand primitive at once, without the
    # front end's checks)
    shape = tuple(shape)
    return g if g.shape == shape else bind(P.expand_p, g, shape=shape)


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
    """x's concrete values as a Tensor (a constant at every level but vmap's)."""
    return _mask(_val(x), x)


def _eval(prim, *args, **params):
    """``prim`` applied to concrete Tensors, for constants (no transformation sees it; under
    vmap, constants batched by it are batched)."""
    for a in args:
        if not isinstance(a, Tensor):
            return bind(prim, *args, **params)
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


# WP-revmode: the commonest unary rules as Steps (data the tape's backward loop runs in C,
# without a Python frame per entry; still binds of primitives, so differentiable)
class Steps:
    """``apply(v, ans, x)`` of a unary elementwise rule (or one operand's cotangent of a binary
    one, see ``_register_steps``) as a sequence of primitive applications: each step is
    ``(prim, operand, ...)`` with operands ``"v"`` (the cotangent or tangent), ``"ans"`` (the
    primal output), ``"x"`` or ``"a"`` (the first primal operand), ``"b"`` (the second), an int
    k (the result of step k, k earlier) or a float (that constant in ans's dtype and shape);
    the result is the last step's (``v`` itself with no step).  Calling it binds the steps in
    order; the tape's backward pass runs the same steps in C (nx_rune/autodiff/_tape.pyx), one
    Python frame less per entry.  ``code``: the steps with the named operands as -1 (v), -2
    (ans), -3 (x, a), -4 (b): what the C loop reads."""
    __slots__ = ("steps", "code")

    _NAMES = {"v": -1, "ans": -2, "x": -3, "a": -3, "b": -4}

    def __init__(self, *steps):
        code = []
        for k, step in enumerate(steps):
            if not (isinstance(step, tuple) and 2 <= len(step) <= 3
                    and isinstance(step[0], P.Primitive)):
                raise TypeError(f"steps: step {k} must be (primitive, operand[, operand]), "
                                f"got {step!r}")
            ops_ = []
            for o in step[1:]:
                if type(o) is int:
                    if not 0 <= o < k:
                        raise ValueError(f"steps: step {k} refers to step {o}, which is not "
                                         f"an earlier one")
                    ops_.append(o)
                elif type(o) is float:
                    ops_.append(o)
                elif isinstance(o, str) and o in self._NAMES:
                    ops_.append(self._NAMES[o])
                else:
                    raise ValueError(f"steps: step {k} has an unknown operand {o!r}")
            code.append((step[0],) + tuple(ops_))
        self.steps, self.code = steps, tuple(code)

    def __call__(self, v, ans, *operands):
        named = (None, v, ans) + operands      # index -o for the named operands -1, -2, ...
        res = [v]
        for prim, *args in self.code:
            args = [res[o + 1] if type(o) is int and o >= 0 else
                    named[-o] if type(o) is int else _c(o, ans) for o in args]
            res.append(bind(prim, *args))
        return res[-1]

    def __repr__(self):
        return f"<Steps {self.steps!r}>"


def _register_steps(prim, operands, jvp):
    """Both rules of a binary elementwise ``prim``: the VJP from one ``Steps`` per operand
    (None: that operand gets no cotangent), run in C by the tape's backward pass."""
    def vjp(g, ans, args, params, need):
        return tuple(s(g, ans, *args) if n and s is not None else None
                     for s, n in zip(operands, need))
    vjp.__name__ = f"vjp_{prim.name}"
    _register(prim, vjp, jvp)
    VJP_RULES[prim].operands = tuple(operands)


defelementwise(P.sin_p, Steps((P.cos_p, "x"), (P.mul_p, "v", 0)))
defelementwise(P.cos_p, Steps((P.sin_p, "x"), (P.mul_p, "v", 0), (P.neg_p, 1)))
defelementwise(P.exp_p, Steps((P.mul_p, "v", "ans")))
defelementwise(P.exp2_p, Steps((P.mul_p, "ans", LN2), (P.mul_p, "v", 0)))
defelementwise(P.log_p, Steps((P.fdiv_p, "v", "x")))
defelementwise(P.log2_p, Steps((P.mul_p, "x", LN2), (P.fdiv_p, "v", 0)))
defelementwise(P.log1p_p, Steps((P.add_p, "x", 1.0), (P.fdiv_p, "v", 0)))
defelementwise(P.expm1_p, Steps((P.add_p, "ans", 1.0), (P.mul_p, "v", 0)))
defelementwise(P.sqrt_p, Steps((P.mul_p, "ans", 2.0), (P.fdiv_p, "v", 0)))
defelementwise(P.recip_p, Steps((P.mul_p, "v", "ans"), (P.mul_p, 0, "ans"), (P.neg_p, 1)))
defelementwise(P.tanh_p, Steps((P.mul_p, "ans", "ans"), (P.sub_p, 1.0, 0), (P.mul_p, "v", 1)))


# -- binary elementwise (operands of equal shape and dtype) -----------------------------------

def _jvp_add(tangents, ans, args, params):
    ta, tb = tangents
    if ta is None:
        return tb
    return ta if tb is None else _add(ta, tb)


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
    return _div(bind(P.neg_p, tb) if ta is None else _sub(ta, tb), b)


def _pow_dbase(ans, a, b):
    """d a**b / da = b * a**(b-1), with 0 (not 0 * inf) where a == b == 0."""
    if not _known(a, b):
        sing = ops.logical_and(ops.equal(a, 0), ops.equal(b, 0))
        a = bind(P.where_p, sing, _c(1, a), a)
        return _mul(b, bind(P.pow_p, a, _add(b, _c(-1, b))))
    av, bv = _val(a), _val(b)
    if bv.size and not any(bv.strides) and isinstance(b, Tensor):
        # one constant exponent (x ** 2 binds a stride-0 one): keep a**(b-1) on NumPy's fast
        # scalar-exponent loop (a full array of exponents takes libm's pow, ~50x slower), and
        # b = 2 or 1 need no power at all
        e = bv.flat[0].item()
        if e == 2:
            return _mul(b, a)
        if e == 1:
            return b
        if e != 0:
            return _mul(b, bind(P.pow_p, a, _c(e - 1, a)))
    sing = (av == 0) & (bv == 0)
    if sing.any():
        a = bind(P.where_p, _mask(sing, a), _c(1, a), a)
    return _mul(b, bind(P.pow_p, a, _add(b, _c(-1, b))))


def _pow_dexp(ans, a, b):
    """d a**b / db = a**b * log(a), with 0 where a == 0 (nan for a < 0: not differentiable)."""
    if not _known(a):
        return _mul(ans, bind(P.log_p, bind(P.where_p, ops.equal(a, 0), _c(1, a), a)))
    zero = _val(a) == 0
    if zero.any():
        a = bind(P.where_p, _mask(zero, a), _c(1, a), a)
    return _mul(ans, bind(P.log_p, a))


defvjp(P.pow_p, lambda g, ans, a, b: _mul(g, _pow_dbase(ans, a, b)),
       lambda g, ans, a, b: _mul(g, _pow_dexp(ans, a, b)))
defjvp(P.pow_p, lambda t, ans, a, b: _mul(t, _pow_dbase(ans, a, b)),
       lambda t, ans, a, b: _mul(t, _pow_dexp(ans, a, b)))


def _max_weight(a, b):
    """Share of max(a, b)'s derivative that goes to a: 1 where a > b, 1/2 on ties, else 0."""
    if not _known(a, b):
        return _add(_tmask(ops.greater(a, b), a), _mul(_c(0.5, a), _tmask(ops.equal(a, b), a)))
    av, bv = _val(a), _val(b)
    w = (av > bv).astype(a.dtype)
    w += 0.5 * (av == bv)
    return _const(w, a)


def _vjp_max(g, ans, args, params, need):
    a, b = args
    w = _max_weight(a, b)
    ga = _mul(g, w)
    return (ga if need[0] else None, _sub(g, ga) if need[1] else None)


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
    return _add(tb, _mul(_sub(ta, tb), w))


# (WP-revmode: add, sub and mul as Steps per operand, run in C by the backward pass)
_register_steps(P.add_p, (Steps(), Steps()), _jvp_add)


def _jvp_sub(tangents, ans, args, params):
    ta, tb = tangents
    if tb is None:
        return ta
    return bind(P.neg_p, tb) if ta is None else bind(P.sub_p, ta, tb)


_register_steps(P.sub_p, (Steps(), Steps((P.neg_p, "v"))), _jvp_sub)
_register_steps(P.mul_p, (Steps((P.mul_p, "v", "b")), Steps((P.mul_p, "a", "v"))), _jvp_mul)
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
    if g.dtype.kind == "c" and x.dtype.kind != "c":
        # the transpose of real -> complex keeps the real part (explicitly: no ComplexWarning)
        g = bind(P.real_p, g)
    return (ops.astype(g, x.dtype),)


def _jvp_cast(tangents, ans, args, params):
    if not _inexact(params["dtype"]):
        return None
    t = tangents[0]
    if t.dtype.kind == "c" and params["dtype"].kind != "c":  # WP-x64: as the VJP
        t = bind(P.real_p, t)
    return bind(P.cast_p, t, dtype=params["dtype"])


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

# roll is a permutation: its transpose rolls the other way
deflinear(P.roll_p, lambda g, ans, x, shift, axis: bind(P.roll_p, g, shift=-shift, axis=axis))


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


    return _mul(_const(rec, g), _sub(r, tail))


def _scan_extremum_jvp(t, ans, x, axis):
    rec, inv, start, _ = _scan_extremum_plan(x, ans, axis)
    u = _mul(t, _share(rec, t))
    c = _scan(u, axis, "sum")
    before = _gather(_add(c, bind(P.neg_p, u)), start, axis)
    return _mul(_add(c, bind(P.neg_p, before)), _share(inv, t))


    before = _gather(_sub(c, u), start, axis)
    return _mul(_sub(c, before), _const(inv, t))


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


# -- windows (unfold and fold are each other's adjoint) ---------------------------------------------

deflinear(P.unfold_p, lambda g, ans, x, kernel_size, stride, dilation, padding: bind(
    P.fold_p, g, output_size=tuple(x.shape[2:]), kernel_size=kernel_size, stride=stride,
    dilation=dilation, padding=padding))
deflinear(P.fold_p, lambda g, ans, x, output_size, kernel_size, stride, dilation, padding: bind(
    P.unfold_p, g, kernel_size=kernel_size, stride=stride, dilation=dilation, padding=padding))

# -- random -----------------------------------------------------------------------------------------
defnondiff(P.threefry_p)
# the samples of a traced key: integer data, no derivative (the parameters' derivatives come
# from the nx operations that nx.random applies outside these primitives)
defnondiff(P.threefry_bits_p)
defnondiff(P.threefry_sample_p)

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
        v = _add(_tmask(ops.greater(x, lo), x), _mul(half, _tmask(ops.equal(x, lo), x)))
        y1 = ops.maximum(x, lo)
    else:
        v, y1 = one, x
    if upper:
        u = _add(_tmask(ops.less(y1, hi), x), _mul(half, _tmask(ops.equal(y1, hi), x)))
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


# -- WP-elementwise: trigonometric/hyperbolic, complex parts, rounding, tests, bit shifts -------

LN10 = math.log(10.0)


_neg = functools.partial(bind, P.neg_p)
_sub = functools.partial(bind, P.sub_p)   # (WP-dispatch: partials, see _mul)


def _sqrt(x):
    return bind(P.sqrt_p, x)


def _where_const(mask, a, b):
    """where(mask, a, b) with a NumPy bool mask (a constant)."""
    return bind(P.where_p, _mask(mask, a), a, b)


def _safe_nonzero(t):
    """t with its zeros replaced by 1 (for a denominator whose quotient is masked to 0)."""
    if not _known(t):    # traced by jit (WP-jit)
        return bind(P.where_p, ops.equal(t, 0), _c(1, t), t)
    zero = _val(t) == 0
    return _where_const(zero, _c(1, t), t) if zero.any() else t


defelementwise(P.tan_p, lambda v, ans, x: _mul(v, _add(_c(1, ans), _mul(ans, ans))))
defelementwise(P.asin_p, lambda v, ans, x: _div(v, _sqrt(_sub(_c(1, x), _mul(x, x)))))
defelementwise(P.acos_p, lambda v, ans, x: _neg(_div(v, _sqrt(_sub(_c(1, x), _mul(x, x))))))
defelementwise(P.atan_p, lambda v, ans, x: _div(v, _add(_c(1, x), _mul(x, x))))
defelementwise(P.sinh_p, lambda v, ans, x: _mul(v, bind(P.cosh_p, x)))
defelementwise(P.cosh_p, lambda v, ans, x: _mul(v, bind(P.sinh_p, x)))
defelementwise(P.asinh_p, lambda v, ans, x: _div(v, _sqrt(_add(_mul(x, x), _c(1, x)))))
# 1/sqrt(x^2 - 1) written as 1/(sqrt(x - 1) sqrt(x + 1)): equal for real x >= 1, and the form
# that is the derivative of the principal branch for complex x
defelementwise(P.acosh_p, lambda v, ans, x: _div(v, _mul(_sqrt(_sub(x, _c(1, x))),
                                                         _sqrt(_add(x, _c(1, x))))))
defelementwise(P.atanh_p, lambda v, ans, x: _div(v, _sub(_c(1, x), _mul(x, x))))
defelementwise(P.log10_p, lambda v, ans, x: _div(v, _mul(x, _c(LN10, x))))
deflinear(P.deg2rad_p, lambda g, ans, x: bind(P.deg2rad_p, g))
deflinear(P.rad2deg_p, lambda g, ans, x: bind(P.rad2deg_p, g))


def _abs_factor(x, ans):
    """d|x|/dx as the factor of the transpose convention: sign agreement (1 at 0, as JAX) for
    real x; conj(x)/|x| (0 at 0) for complex x, whose JVP is real(factor * t)."""
    if x.dtype.kind != "c":
        if not _known(x):    # traced by jit (WP-jit)
            return bind(P.where_p, ops.greater_equal(x, 0), _c(1, x), _c(-1, x))
        return _const(np.where(_val(x) >= 0, 1, -1), x)
    return _div(bind(P.conj_p, x), bind(P.cast_p, _safe_nonzero(ans), dtype=x.dtype))


def _vjp_abs(g, ans, args, params, need):
    x = args[0]
    f = _abs_factor(x, ans)
    return (_mul(bind(P.cast_p, g, dtype=x.dtype) if g.dtype != x.dtype else g, f),)


def _jvp_abs(tangents, ans, args, params):
    x = args[0]
    out = _mul(tangents[0], _abs_factor(x, ans))
    return bind(P.real_p, out) if x.dtype.kind == "c" else out


_register(P.abs_p, _vjp_abs, _jvp_abs)

# complex parts, with the transpose convention (pairing <ct, t> = Re(ct * t)): real's transpose
# is g + 0j, imag's is -g j, conj's is conj; complex(re, im)'s is (real(g), -imag(g))
deflinear(P.conj_p, lambda g, ans, x: bind(P.conj_p, g))
# (of a real operand: real is the identity, imag the zero map; a complex cotangent there would be
# cast back to real with a ComplexWarning)
deflinear(P.real_p, lambda g, ans, x: bind(P.complex_p, g, _zeros(g)) if x.dtype.kind == "c"
          else g)
deflinear(P.imag_p, lambda g, ans, x: bind(P.complex_p, _zeros(g), _neg(g))
          if x.dtype.kind == "c" else _zeros(g))


def _vjp_complex(g, ans, args, params, need):
    return (bind(P.real_p, g) if need[0] else None,
            _neg(bind(P.imag_p, g)) if need[1] else None)


def _jvp_complex(tangents, ans, args, params):
    return bind(P.complex_p, *_fill(tangents, args))


_register(P.complex_p, _vjp_complex, _jvp_complex)


def _vjp_sinc_taylor(g, ans, args, params, need):
    return (_mul(g, bind(P.sinc_taylor_p, args[0], k=params["k"] + 1)),)


def _jvp_sinc_taylor(tangents, ans, args, params):
    return _mul(tangents[0], bind(P.sinc_taylor_p, args[0], k=params["k"] + 1))


# sinc_taylor(x, k) stands for sinc's k-th derivative at x == 0 (where sinc's formula is masked
# out), so its derivative is the (k+1)-th: sinc is then exact at 0 to every order
_register(P.sinc_taylor_p, _vjp_sinc_taylor, _jvp_sinc_taylor)


def _atan2_r2(y, x):
    return _add(_mul(x, x), _mul(y, y))


defvjp(P.atan2_p, lambda g, ans, y, x: _div(_mul(g, x), _atan2_r2(y, x)),
       lambda g, ans, y, x: _neg(_div(_mul(g, y), _atan2_r2(y, x))))
defjvp(P.atan2_p, lambda t, ans, y, x: _div(_mul(t, x), _atan2_r2(y, x)),
       lambda t, ans, y, x: _neg(_div(_mul(t, y), _atan2_r2(y, x))))

# hypot: a/h and b/h, 0 where h == 0 (as complex abs at 0)
defvjp(P.hypot_p, lambda g, ans, a, b: _mul(g, _div(a, _safe_nonzero(ans))),
       lambda g, ans, a, b: _mul(g, _div(b, _safe_nonzero(ans))))
defjvp(P.hypot_p, lambda t, ans, a, b: _mul(t, _div(a, _safe_nonzero(ans))),
       lambda t, ans, a, b: _mul(t, _div(b, _safe_nonzero(ans))))


def _copysign_factor(a, b):
    """d copysign(a, b)/da: 1 where a's and b's sign bits agree, else -1."""
    if not _known(a, b):    # traced by jit (WP-jit)
        same = ops.equal(bind(P.signbit_p, a), bind(P.signbit_p, b))
        return bind(P.where_p, same, _c(1, a), _c(-1, a))
    return _const(np.where(np.signbit(_val(a)) == np.signbit(_val(b)), 1, -1), a)


defvjp(P.copysign_p, lambda g, ans, a, b: _mul(g, _copysign_factor(a, b)), None)
defjvp(P.copysign_p, lambda t, ans, a, b: _mul(t, _copysign_factor(a, b)), None)


def _logaddexp_share(a, b, exp_prim):
    """d logaddexp(a, b)/da = 1 / (1 + exp(b - a)) = expit(a - b) (logaddexp2: expit of
    (a - b) ln 2, the same share), with a - b taken as 0 where a and b are the same infinity
    (where it is nan).  Only there: at finite ties a - b stays differentiable, so the second
    derivative at a == b is the share's own derivative (1/4; ln 2 / 4 for logaddexp2), not
    the 0 of a constant; and expit's derivative stays finite far from ties, where
    1 / (1 + exp(d)) would differentiate to inf / inf."""
    d = _sub(a, b)
    if not _known(a, b):    # traced by jit (WP-jit)
        same_inf = ops.logical_and(ops.equal(a, b), ops.logical_not(ops.isfinite(a)))
        d = bind(P.where_p, same_inf, _zeros(d), d)
    else:
        va = _val(a)
        same_inf = (va == _val(b)) & ~np.isfinite(va)
        if same_inf.any():
            d = _where_const(same_inf, _zeros(d), d)
    if exp_prim is P.exp2_p:
        d = _mul(d, _c(math.log(2.0), d))
    return bind(P.expit_p, d)


def _def_logaddexp(prim, exp_prim):
    share = lambda a, b: _logaddexp_share(a, b, exp_prim)  # noqa: E731
    defvjp(prim, lambda g, ans, a, b: _mul(g, share(a, b)),
           lambda g, ans, a, b: _mul(g, share(b, a)))
    defjvp(prim, lambda t, ans, a, b: _mul(t, share(a, b)),
           lambda t, ans, a, b: _mul(t, share(b, a)))


_def_logaddexp(P.logaddexp_p, P.exp_p)
_def_logaddexp(P.logaddexp2_p, P.exp2_p)

for _p in (P.floor_p, P.ceil_p, P.rint_p, P.trunc_p, P.sign_p, P.signbit_p, P.isnan_p,
           P.isinf_p, P.isfinite_p, P.nextafter_p, P.lshift_p, P.rshift_p):
    defnondiff(_p)


# -- FFTs and special functions (WP-fft-special) --------------------------------------------------
# FFTs are linear: each JVP applies the primitive to the tangent.  Their transposes, in the
# transpose (non-conjugated) convention of complex cotangents (a cotangent g of a complex value
# z stands for the real covector (Re g, -Im g) of (Re z, Im z), as JAX's):
# - fft: the DFT matrix (with any norm's scale) is symmetric, so the transpose is the same FFT.
# - rfft = keep bins [0, n//2] . fft . (real -> complex): the transpose zero-pads the cotangent
#   to n bins, applies the same FFT and keeps the real part.
# - irfft(x)_t = Re(sum_k w_k x_k e^{+2 pi i k t / n}) * scale, w_k = 1 for the zero and (even
#   n) Nyquist bins and 2 for the interior bins (each stands for itself and its mirrored
#   conjugate), so the transpose is w * conj(rfft(g)) with the dual norm (the scale moves from
#   the inverse to the forward transform).  Along the other axes of an n-d irfft the transform
#   is a complex inverse FFT, symmetric too, which the same formula covers.  This is not irfft's
#   inverse: without the weights the interior bins' derivatives would be halved.
from nx_rune.frontend import fft as _fft_fe  # noqa: E402
from nx_rune.frontend.products import conjugated as _conjugated  # noqa: E402

_DUAL_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}

deflinear(P.fft_p, lambda g, ans, x, axes, inverse, norm: bind(
    P.fft_p, g, axes=axes, inverse=inverse, norm=norm))


def _rfft_transpose(g, ans, x, axes, norm):
    last = axes[-1]
    n = x.shape[last]
    if g.shape[last] != n:
        cfg = [(0, 0)] * g.ndim
        cfg[last] = (0, n - g.shape[last])
        g = ops.pad(g, cfg)
    return _fft_fe.real_part(bind(P.fft_p, g, axes=axes, inverse=False, norm=norm))


def _irfft_transpose(g, ans, x, axes, n, norm):
    m = x.shape[axes[-1]]
    w = np.ones(m)
    w[1:(n + 1) // 2] = 2.0
    shape = [1] * x.ndim
    shape[axes[-1]] = m
    spec = bind(P.rfft_p, g, axes=axes, norm=_DUAL_NORM[norm])
    return ops.multiply(_conjugated(spec), Tensor._wrap(_carr(w.reshape(shape), g.dtype)))


deflinear(P.rfft_p, _rfft_transpose)
deflinear(P.irfft_p, _irfft_transpose)

# Special functions: derivatives from the known formulas, written with primitives (each
# derivative is differentiable again: lgamma -> digamma -> polygamma(1) -> polygamma(2) ...).
# polygamma(n, x) is differentiable in x only (n takes integer values).  xlogy/xlog1py: the
# derivative in y is x / y (x / (1 + y)) with 0 at the one point x == 0 == y (y == -1), where
# the function is 0 along x == 0; the derivative in x is log(y) (log1p(y)) everywhere, as
# JAX's.  i1 and i1e: the derivative formulas divide by x; 1/2 (the limit) for |x| <= eps.
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _exp(x):
    return bind(P.exp_p, x)


def _gauss(x, scale):
    """scale * exp(-x**2 / 2)."""
    return _mul(_c(scale, x), _exp(_mul(_mul(x, x), _c(-0.5, x))))


# below this x, d log_ndtr = pdf/ndtr comes from the continued fraction (see _d_log_ndtr)
_LOG_NDTR_TAIL = -5.0
_MILLS_TERMS = 24
_LOG_NDTR_AT_TAIL = math.log(0.5 * math.erfc(-_LOG_NDTR_TAIL / math.sqrt(2.0)))


def _d_log_ndtr(x, ans):
    """d log(ndtr(x))/dx = pdf(x) / ndtr(x).

    Above x = -5: exp(-x**2/2 - log(sqrt(2 pi)) - log_ndtr(x)) (no underflow of pdf and
    ndtr).  In the lower tail that exponent is the difference of two numbers near -x**2/2, so
    it loses digits, and the second derivative -r (x + r) (r this ratio, x + r ~ -1/x) loses
    them all (-6367 instead of -1 at x = -1e5).  There the ratio is Laplace's continued
    fraction t + 1/(t + 2/(t + 3/(t + ...))) with t = -x (24 terms: below 1e-16 relative error
    for t >= 5): each step is well conditioned, and so are its derivatives.  The two branches
    see only their own inputs (the other's replaced by -5), so neither gives a NaN derivative
    where it is not used."""
    lim = _c(_LOG_NDTR_TAIL, x)
    if _known(x):
        vx = _val(x)
        if not (vx < _LOG_NDTR_TAIL).any():
            return _exp(_sub(_mul(_mul(x, x), _c(-0.5, x)), _add(ans, _c(_LOG_SQRT_2PI, x))))
        tail = _mask(vx < _LOG_NDTR_TAIL, x)
    else:
        tail = ops.less(x, lim)
    x_hi = bind(P.where_p, tail, lim, x)
    ans_hi = bind(P.where_p, tail, _c(_LOG_NDTR_AT_TAIL, ans), ans)
    upper = _exp(_sub(_mul(_mul(x_hi, x_hi), _c(-0.5, x)), _add(ans_hi, _c(_LOG_SQRT_2PI, x))))
    t = ops.negative(bind(P.where_p, tail, x, lim))
    acc = t
    for k in range(_MILLS_TERMS, 0, -1):
        acc = _add(t, _div(_c(float(k), t), acc))
    return bind(P.where_p, tail, acc, upper)


def _polygamma_next(n, x):
    return bind(P.polygamma_p, _add(n, _c(1, n)), x)


def _tiny_limit(x, formula, limit):
    """formula(safe_x) where |x| > eps, else ``limit`` (safe_x: eps there, so nothing
    divides by zero in either branch)."""
    eps = float(np.finfo(x.dtype).eps)
    big = ops.greater(ops.abs(x), eps)
    safe = bind(P.where_p, big, x, _c(eps, x))
    return bind(P.where_p, big, formula(safe), _c(limit, x))


def _d_i1(x, ans):
    return _tiny_limit(x, lambda s: _sub(bind(P.i0_p, s), _div(bind(P.i1_p, s), s)), 0.5)


def _d_i1e(x, ans):
    def formula(s):
        return _sub(bind(P.i0e_p, s), _mul(bind(P.i1e_p, s),
                                          _add(ops.sign(s), bind(P.recip_p, s))))
    return _tiny_limit(x, formula, 0.5)


defelementwise(P.lgamma_p, lambda v, ans, x: _mul(v, bind(P.digamma_p, x)))
defelementwise(P.digamma_p, lambda v, ans, x: _mul(v, bind(P.polygamma_p, _c(1, x), x)))
defelementwise(P.gamma_p, lambda v, ans, x: _mul(v, _mul(ans, bind(P.digamma_p, x))))
defelementwise(P.erf_p, lambda v, ans, x: _mul(v, _gauss(_mul(x, _c(math.sqrt(2.0), x)),
                                                         2.0 / _SQRT_PI)))
defelementwise(P.erfc_p, lambda v, ans, x: _mul(v, _gauss(_mul(x, _c(math.sqrt(2.0), x)),
                                                          -2.0 / _SQRT_PI)))
defelementwise(P.erfinv_p, lambda v, ans, x: _mul(v, _mul(_c(_SQRT_PI / 2, x),
                                                          _exp(_mul(ans, ans)))))
defelementwise(P.ndtr_p, lambda v, ans, x: _mul(v, _gauss(x, 1.0 / _SQRT_2PI)))
defelementwise(P.ndtri_p, lambda v, ans, x: _mul(v, _mul(
    _c(_SQRT_2PI, x), _exp(_mul(_mul(ans, ans), _c(0.5, x))))))
defelementwise(P.log_ndtr_p, lambda v, ans, x: _mul(v, _d_log_ndtr(x, ans)))
# expit(x) expit(-x) rather than ans (1 - ans): 1 - ans keeps no digits where ans rounds near 1
# (x = 30: 1e-3 relative error in float64, 0 in float32)
defelementwise(P.expit_p, lambda v, ans, x: _mul(v, _mul(ans, bind(P.expit_p, ops.negative(x)))))
defelementwise(P.logit_p, lambda v, ans, x: _div(v, _mul(x, _sub(_c(1, x), x))))
defelementwise(P.i0_p, lambda v, ans, x: _mul(v, bind(P.i1_p, x)))
defelementwise(P.i0e_p, lambda v, ans, x: _mul(v, _sub(bind(P.i1e_p, x),
                                                       _mul(ops.sign(x), ans))))
defelementwise(P.i1_p, lambda v, ans, x: _mul(v, _d_i1(x, ans)))
defelementwise(P.i1e_p, lambda v, ans, x: _mul(v, _d_i1e(x, ans)))

defvjp(P.polygamma_p, None, lambda g, ans, n, x: _mul(g, _polygamma_next(n, x)))
defjvp(P.polygamma_p, None, lambda t, ans, n, x: _mul(t, _polygamma_next(n, x)))


def _d_betaln(u, a, b):
    return _sub(bind(P.digamma_p, u), bind(P.digamma_p, _add(a, b)))


defvjp(P.betaln_p, lambda g, ans, a, b: _mul(g, _d_betaln(a, a, b)),
       lambda g, ans, a, b: _mul(g, _d_betaln(b, a, b)))
defjvp(P.betaln_p, lambda t, ans, a, b: _mul(t, _d_betaln(a, a, b)),
       lambda t, ans, a, b: _mul(t, _d_betaln(b, a, b)))


def _x_over(x, den, at):
    """x / den, with den replaced by 1 where x == 0 and den == ``at`` (the singular point)."""
    sing = ops.logical_and(ops.equal(x, 0), ops.equal(den, at))
    return _div(x, bind(P.where_p, sing, _c(1, den), den))


def _d_xlogy_y(x, y):
    return _x_over(x, y, 0)


def _d_xlog1py_y(x, y):
    return _x_over(x, _add(y, _c(1, y)), 0)


defvjp(P.xlogy_p, lambda g, ans, x, y: _mul(g, bind(P.log_p, y)),
       lambda g, ans, x, y: _mul(g, _d_xlogy_y(x, y)))
defjvp(P.xlogy_p, lambda t, ans, x, y: _mul(t, bind(P.log_p, y)),
       lambda t, ans, x, y: _mul(t, _d_xlogy_y(x, y)))
defvjp(P.xlog1py_p, lambda g, ans, x, y: _mul(g, bind(P.log1p_p, y)),
       lambda g, ans, x, y: _mul(g, _d_xlog1py_y(x, y)))
defjvp(P.xlog1py_p, lambda t, ans, x, y: _mul(t, bind(P.log1p_p, y)),
       lambda t, ans, x, y: _mul(t, _d_xlog1py_y(x, y)))


# -- linear algebra: decompositions and solves (WP-linalg) ---------------------------------------
# Rules of the LAPACK primitives, written with front-end ops so that they are differentiable in
# turn (hessians of slogdet, of a Gaussian log-likelihood through cholesky and triangular
# solves).  Packed results (slogdet, eigh, svd, qr, lstsq) are split with ``la.unpack`` and
# their tangents packed with ``_pack_la``.  Non-holomorphic functions (all but solve, inv and
# triangular_solve without conjugation) are differentiated for real operands only.
# Derivations: Murray (2016), "Differentiation of the Cholesky decomposition", arXiv:1602.07527
# (cholesky); Giles (2008), "An extended collection of matrix derivative results for forward
# and reverse mode AD" (solve, inv, determinants, eigh); Townsend (2016), "Differentiating the
# singular value decomposition", and the JVP of JAX's svd (svd); Walter & Lehmann (2018) / Liao
# et al. (2019), "Differentiable programming tensor networks" (qr, and the wide case through
# A = [X | Y]); Golub & Pereyra (1973), "The differentiation of pseudo-inverses" (pinv, lstsq).
# Degenerate eigen/singular values as JAX: the 1/(w_j - w_i) terms of exactly equal values are
# inf (eigenvectors have no derivative there), and terms of an unused part of a packed result
# are dropped (JAX's symbolic zeros), so functions of the eigenvalues alone stay differentiable.
import functools  # noqa: E402

from nx_rune.frontend import linalg as la  # noqa: E402

def _mm(a, b):
    return bind(P.matmul_p, a, b)


def _mT(x):
    """The transpose of each matrix (a view)."""
    nd = x.ndim
    return bind(P.permute_p, x, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _row(v):
    """v (..., n) as (..., 1, n) (a view)."""
    return bind(P.reshape_p, v, shape=v.shape[:-1] + (1, v.shape[-1]))


def _col(v):
    """v (..., n) as (..., n, 1) (a view)."""
    return bind(P.reshape_p, v, shape=v.shape + (1,))


def _bmul(x, w):
    """x times the constant or smaller w broadcast to x's shape."""
    if w.shape != x.shape:
        w = bind(P.expand_p, w, shape=x.shape)
    return bind(P.mul_p, x, w)


def _real_only(name, x):
    if x.dtype.kind == "c":
        raise NotImplementedError(f"{name}: derivatives of complex matrices are not implemented "
                                  f"(the function is not holomorphic); only real inputs")


def _trs(a, b, lower, trans, unit=False):
    return bind(P.triangular_solve_p, a, b, lower=lower, trans=trans, unit_diagonal=unit)


@functools.lru_cache(maxsize=256)
def _tri_weights(n, m, k, lower, dtype):
    """(n, m) constant: 1 on the lower (upper) triangle from diagonal k, 0 elsewhere."""
    w = np.tri(n, m, k, dtype=dtype) if lower else 1 - np.tri(n, m, k - 1, dtype=dtype)
    return Tensor._wrap(w)


def _tri(x, lower, k=0):
    """x's lower (upper) triangle from diagonal k: the other entries times 0 (rules only: a
    cotangent or tangent with infs there gives NaN instead of 0)."""
    return _bmul(x, _tri_weights(x.shape[-2], x.shape[-1], k, lower, x.dtype))


@functools.lru_cache(maxsize=64)
def _half_diag_weights(n, lower, dtype):
    """Murray's Phi as weights: 1 below (above) the diagonal, 1/2 on it, 0 elsewhere."""
    w = np.tri(n, dtype=dtype) if lower else np.tri(n, dtype=dtype).T.copy()
    np.fill_diagonal(w, 0.5)
    return Tensor._wrap(w)


def _sym_from(x, lower):
    """The symmetric matrix whose ``lower`` (else upper) triangle is x's."""
    t = _tri(x, lower)
    return bind(P.add_p, t, _mT(_tri(x, lower, -1 if lower else 1)))


def _tri_adjoint(s, lower):
    """The cotangent of x for ``_sym_from(x, lower)`` given the symmetric matrix's cotangent s:
    the triangle of s + s^T with s's own diagonal."""
    return _bmul(bind(P.add_p, s, _mT(s)), _half_diag_weights(s.shape[-1], lower, s.dtype))


def _eye(n, dtype):
    return la.eye_like(n, dtype)


def _diag_of(x):
    return bind(P.reduce_sum_p, _bmul(x, _eye(x.shape[-1], x.dtype)), axes=(x.ndim - 1,),
                keepdims=False)


def _diag_mat(v):
    shape = v.shape + (v.shape[-1],)
    return bind(P.mul_p, bind(P.expand_p, _row(v), shape=shape),
                bind(P.expand_p, _eye(v.shape[-1], v.dtype), shape=shape))


def _pack_la(parts, batch):
    return bind(P.cat_p, *[bind(P.reshape_p, p, shape=batch + (p.size // max(1, _prod(batch)),))
                           for p in parts], axis=len(batch))


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _gap_inverse(v, square):
    """F[..., i, j] = 1 / (v_j - v_i) (of v**2 with ``square``) off the diagonal, 0 on it.
    Exactly repeated values give inf there, as in JAX: derivatives through eigen/singular
    vectors do not exist at such points."""
    n = v.shape[-1]
    shape = v.shape + (n,)
    row = bind(P.expand_p, _row(v), shape=shape)
    col = bind(P.expand_p, _col(v), shape=shape)
    diff = _sub(row, col)
    if square:
        diff = bind(P.mul_p, diff, bind(P.add_p, row, col))
    eye = bind(P.expand_p, _eye(n, v.dtype), shape=shape)
    return _sub(bind(P.recip_p, bind(P.add_p, diff, eye)), eye)


def _known_zero(x):
    """Whether the cotangent x is a constant (no enclosing transformation differentiates it)
    that is exactly zero: the part of a packed result that the function did not use.  Its
    terms are dropped, as JAX drops symbolic zeros, so that e.g. eigenvalues alone stay
    differentiable at repeated eigenvalues (inf * 0 would give NaN)."""
    return type(x) is Tensor and not _val(x).any()


def _vjp_cholesky(g, ans, args, params, need):
    L = ans
    _real_only("cholesky", L)
    if type(L) is Tensor and type(g) is Tensor and g.dtype == L.dtype:
        # concrete values (nothing differentiates this cotangent): the blocked algorithm
        # (WP-linalg-perf, the cholesky_grad primitive; ~2x the forward's flops against ~9x
        # for the formula below, which traced values keep)
        return (bind(P.cholesky_grad_p, L, g),)
    phi = _half_diag_weights(L.shape[-1], True, L.dtype)
    z = _trs(L, _bmul(_mm(_mT(L), g), phi), True, 1)      # L^-T Phi(L^T Lbar)
    st = _trs(L, _mT(z), True, 1)                          # (... L^-1)^T
    return (_tri_adjoint(st, True),)                      # symmetric in s and s^T


def _jvp_cholesky(tangents, ans, args, params):
    L = ans
    _real_only("cholesky", L)
    da = _sym_from(tangents[0], True)
    x = _trs(L, _mT(_trs(L, da, True, 0)), True, 0)         # L^-1 dA L^-T
    return _mm(L, _bmul(x, _half_diag_weights(L.shape[-1], True, L.dtype)))


_register(P.cholesky_p, _vjp_cholesky, _jvp_cholesky)


def _tri_read(x, lower, unit):
    """The part of x that a triangular solve reads (its triangle, strict with unit_diagonal)."""
    return _tri(x, lower, (-1 if lower else 1) if unit else 0)


def _trans_of(a, params, name):
    t = params["trans"]
    if t == 2:
        if a.dtype.kind == "c":
            raise NotImplementedError(f"{name}: derivatives with trans=2 (conjugate transpose) "
                                      f"of complex matrices are not implemented")
        t = 1
    return t


def _vjp_triangular_solve(g, ans, args, params, need):
    a, b = args
    lower, unit = params["lower"], params["unit_diagonal"]
    t = _trans_of(a, params, "solve_triangular")
    ct_b = _trs(a, g, lower, 1 - t, unit)                  # op(a)^-T g
    ct_a = None
    if need[0] and type(ct_b) is Tensor and type(ans) is Tensor:
        # concrete values: the product and its triangle in one primitive (WP-linalg-vjp)
        ct_a = bind(P.triangular_solve_grad_p, ct_b, ans, lower=lower, trans=t,
                    unit_diagonal=unit)
    elif need[0]:                                          # -ct_b x^T, transposed for t = 1
        neg_x = _neg(ans)
        ct_m = _mm(ct_b, _mT(neg_x)) if t == 0 else _mm(neg_x, _mT(ct_b))
        ct_a = _tri_read(ct_m, lower, unit)
    return (ct_a, ct_b if need[1] else None)


def _jvp_triangular_solve(tangents, ans, args, params):
    a = args[0]
    ta, tb = tangents
    lower, unit = params["lower"], params["unit_diagonal"]
    t = _trans_of(a, params, "solve_triangular")
    rhs = tb
    if ta is not None:
        dt = _tri_read(ta, lower, unit)
        dm_x = _mm(dt if t == 0 else _mT(dt), ans)
        rhs = _neg(dm_x) if rhs is None else _sub(rhs, dm_x)
    return _trs(a, rhs, lower, t, unit)


_register(P.triangular_solve_p, _vjp_triangular_solve, _jvp_triangular_solve)


def _vjp_solve(g, ans, args, params, need):
    a = args[0]
    ct_b = bind(P.solve_p, _mT(a), g)
    ct_a = _mm(ct_b, _mT(_neg(ans))) if need[0] else None
    return (ct_a, ct_b if need[1] else None)


def _jvp_solve(tangents, ans, args, params):
    ta, tb = tangents
    rhs = tb
    if ta is not None:
        dax = _mm(ta, ans)
        rhs = _neg(dax) if rhs is None else _sub(rhs, dax)
    return bind(P.solve_p, args[0], rhs)


_register(P.solve_p, _vjp_solve, _jvp_solve)


def _vjp_inv(g, ans, args, params, need):
    it = _mT(ans)
    return (_mm(_mm(it, _neg(g)), it),)


def _jvp_inv(tangents, ans, args, params):
    return _mm(_mm(ans, _neg(tangents[0])), ans)


_register(P.inv_p, _vjp_inv, _jvp_inv)


def _vjp_slogdet(g, ans, args, params, need):
    a, lu = args
    _real_only("slogdet", a)
    g_log = la.unpack(g, [(), ()])[1]
    ainv_t = _mT(bind(P.lu_inverse_p, a, lu))              # d log|det a| = tr(a^-1 da)
    return (_bmul(ainv_t, ops.reshape(g_log, g_log.shape + (1, 1))), None)


def _jvp_slogdet(tangents, ans, args, params):
    a, lu = args
    _real_only("slogdet", a)
    if tangents[0] is None:
        return None
    dlog = ops.sum(ops.multiply(_mT(bind(P.lu_inverse_p, a, lu)), tangents[0]), (-2, -1))
    return ops.stack([ops.zeros_like_t(dlog), dlog], -1)


_register(P.slogdet_p, _vjp_slogdet, _jvp_slogdet)


def _eigh_parts(packed, n):
    return la.unpack(packed, [(n,), (n, n)])


def _vjp_eigh(g, ans, args, params, need):
    a = args[0]
    _real_only("eigh", a)
    n = a.shape[-1]
    w, v = _eigh_parts(ans, n)
    gw, gv = _eigh_parts(g, n)
    k = _diag_mat(gw)
    if not _known_zero(gv):
        k = ops.add(ops.multiply(_gap_inverse(w, False), _mm(_mT(v), gv)), k)
    return (_tri_adjoint(_mm(_mm(v, k), _mT(v)), params["lower"]),)


def _jvp_eigh(tangents, ans, args, params):
    a = args[0]
    _real_only("eigh", a)
    n = a.shape[-1]
    w, v = _eigh_parts(ans, n)
    m = _mm(_mm(_mT(v), _sym_from(tangents[0], params["lower"])), v)
    dv = _mm(v, ops.multiply(_gap_inverse(w, False), m))
    return _pack_la([_diag_of(m), dv], a.shape[:-2])


_register(P.eigh_p, _vjp_eigh, _jvp_eigh)


def _eigenvectors(a, lower):
    return _eigh_parts(bind(P.eigh_p, a, lower=lower), a.shape[-1])[1]


def _vjp_eigvalsh(g, ans, args, params, need):
    a = args[0]
    _real_only("eigvalsh", a)
    v = _eigenvectors(a, params["lower"])
    s = _mm(ops.multiply(v, _row(g)), _mT(v))
    return (_tri_adjoint(s, params["lower"]),)


def _jvp_eigvalsh(tangents, ans, args, params):
    a = args[0]
    _real_only("eigvalsh", a)
    v = _eigenvectors(a, params["lower"])
    da = _sym_from(tangents[0], params["lower"])
    return ops.sum(ops.multiply(v, _mm(da, v)), -2)


_register(P.eigvalsh_p, _vjp_eigvalsh, _jvp_eigvalsh)


def _svd_parts(a, packed, full):
    m, n = a.shape[-2:]
    if full and m != n:
        raise NotImplementedError("svd: derivatives with full_matrices=True of non-square "
                                  "matrices are not implemented (the extra singular vectors "
                                  "are not unique); use full_matrices=False")
    k = min(m, n)
    return la.unpack(packed, [(m, k), (k,), (k, n)])


def _vjp_svd(g, ans, args, params, need):
    a = args[0]
    _real_only("svd", a)
    m, n = a.shape[-2:]
    u, s, vt = _svd_parts(a, ans, params["full_matrices"])
    gu, gs, gvt = _svd_parts(a, g, params["full_matrices"])
    v, gv = _mT(vt), _mT(gvt)
    s_row, s_col = _row(s), _col(s)
    core = _diag_mat(gs)
    use_u, use_v = not _known_zero(gu), not _known_zero(gv)
    if use_u or use_v:
        f = _gap_inverse(s, True)
    if use_u:
        ju = _mm(_mT(u), gu)
        pu = ops.multiply(f, ju)
        core = ops.add(core, ops.multiply(ops.add(pu, _mT(pu)), s_row))
    if use_v:
        jv = _mm(_mT(v), gv)
        pv = ops.multiply(f, jv)
        core = ops.add(core, ops.multiply(s_col, ops.add(pv, _mT(pv))))
    ct = _mm(_mm(u, core), vt)
    if m > n and use_u:    # the part of gU outside U's column space
        s_inv = _row(bind(P.recip_p, s))
        ct = ops.add(ct, _mm(ops.multiply(_sub(gu, _mm(u, ju)), s_inv), vt))
    elif n > m and use_v:
        s_inv = _row(bind(P.recip_p, s))
        ct = ops.add(ct, _mm(u, _mT(ops.multiply(_sub(gv, _mm(v, jv)), s_inv))))
    return (ct,)


def _jvp_svd(tangents, ans, args, params):
    a = args[0]
    _real_only("svd", a)
    m, n = a.shape[-2:]
    da = tangents[0]
    u, s, vt = _svd_parts(a, ans, params["full_matrices"])
    v = _mT(vt)
    f = _gap_inverse(s, True)
    s_row, s_col = _row(s), _col(s)
    ds_mat = _mm(_mm(_mT(u), da), v)
    dss, sds = ops.multiply(ds_mat, s_row), ops.multiply(s_col, ds_mat)
    du = _mm(u, ops.multiply(f, ops.add(dss, _mT(dss))))
    dv = _mm(v, ops.multiply(f, ops.add(sds, _mT(sds))))
    if m > n:
        s_inv = _row(bind(P.recip_p, s))
        dav = _mm(da, v)
        du = ops.add(du, ops.multiply(_sub(dav, _mm(u, _mm(_mT(u), dav))), s_inv))
    elif n > m:
        s_inv = _row(bind(P.recip_p, s))
        dau = _mm(_mT(da), u)
        dv = ops.add(dv, ops.multiply(_sub(dau, _mm(v, _mm(vt, dau))), s_inv))
    return _pack_la([du, _diag_of(ds_mat), _mT(dv)], a.shape[:-2])


_register(P.svd_p, _vjp_svd, _jvp_svd)


def _singular_vectors(a):
    u, _, vt = _svd_parts(a, bind(P.svd_p, a, full_matrices=False), False)
    return u, vt


def _vjp_svdvals(g, ans, args, params, need):
    a = args[0]
    _real_only("svdvals", a)
    u, vt = _singular_vectors(a)
    return (_mm(ops.multiply(u, _row(g)), vt),)


def _jvp_svdvals(tangents, ans, args, params):
    a = args[0]
    _real_only("svdvals", a)
    u, vt = _singular_vectors(a)
    return ops.sum(ops.multiply(u, _mm(tangents[0], _mT(vt))), -2)


_register(P.svdvals_p, _vjp_svdvals, _jvp_svdvals)


def _cols(x, lo, hi):
    return ops.shrink(x, [(0, d) for d in x.shape[:-1]] + [(lo, hi)])


def _qr_parts(a, packed, mode):
    m, n = a.shape[-2:]
    if mode == "complete" and m > n:
        raise NotImplementedError("qr: derivatives with mode='complete' of tall matrices are not "
                                  "implemented (Q's extra columns are not unique); use "
                                  "mode='reduced'")
    k = min(m, n)
    return la.unpack(packed, [(m, k), (k, n)])


def _qr_jvp_square(q, r, da):
    """(dQ, dR) of A = QR for m >= n: C = Q^T dA R^-1, Omega = tril(C, -1) - its transpose,
    dQ = Q (Omega - C) + dA R^-1, dR = (C - Omega) R."""
    da_rinv = _mT(_trs(r, _mT(da), False, 1))
    c = _mm(_mT(q), da_rinv)
    low = _tri(c, True, -1)
    om = _sub(low, _mT(low))
    dq = ops.add(_mm(q, _sub(om, c)), da_rinv)
    return dq, _mm(_sub(c, om), r)


def _qr_vjp_square(q, r, gq, gr):
    """A's cotangent for m >= n: (gQ + Q copyltu(M)) R^-T, M = gR R^T - Q^T gQ."""
    mm_ = _sub(_mm(gr, _mT(r)), _mm(_mT(q), gq))
    sym = ops.add(_tri(mm_, False), _mT(_tri(mm_, False, 1)))
    b = ops.add(_mm(q, sym), gq)
    return _mT(_trs(r, _mT(b), False, 0))


def _vjp_qr(g, ans, args, params, need):
    a = args[0]
    _real_only("qr", a)
    m, n = a.shape[-2:]
    q, r = _qr_parts(a, ans, params["mode"])
    gq, gr = _qr_parts(a, g, params["mode"])
    if m >= n:
        return (_qr_vjp_square(q, r, gq, gr),)
    # A = [X | Y], X square: Q R_X = X, R_Y = Q^T Y
    rx, grx, gry, y = _cols(r, 0, m), _cols(gr, 0, m), _cols(gr, m, n), _cols(a, m, n)
    ctx = _qr_vjp_square(q, rx, ops.add(gq, _mm(y, _mT(gry))), grx)
    return (ops.concatenate([ctx, _mm(q, gry)], axis=-1),)


def _jvp_qr(tangents, ans, args, params):
    a = args[0]
    _real_only("qr", a)
    m, n = a.shape[-2:]
    da = tangents[0]
    q, r = _qr_parts(a, ans, params["mode"])
    if m >= n:
        dq, dr = _qr_jvp_square(q, r, da)
    else:
        dq, drx = _qr_jvp_square(q, _cols(r, 0, m), _cols(da, 0, m))
        dry = ops.add(_mm(_mT(dq), _cols(a, m, n)), _mm(_mT(q), _cols(da, m, n)))
        dr = ops.concatenate([drx, dry], axis=-1)
    return _pack_la([dq, dr], a.shape[:-2])


_register(P.qr_p, _vjp_qr, _jvp_qr)


def _pinv_jvp(a, p, da):
    """d pinv(A) = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P (Golub & Pereyra)."""
    dat = _mT(da)
    t1 = _neg(_mm(_mm(p, da), p))
    x = _sub(dat, _mm(_mm(dat, a), p))
    t2 = _mm(p, _mm(_mT(p), x))
    y = _mm(dat, _mm(_mT(p), p))
    t3 = _sub(y, _mm(p, _mm(a, y)))
    return ops.add(ops.add(t1, t2), t3)


def _pinv_vjp(a, p, g):
    """-P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A): the transpose of _pinv_jvp."""
    gt = _mT(g)
    t1 = _neg(_mm(_mm(_mT(p), g), _mT(p)))
    z = _mm(gt, _mm(p, _mT(p)))
    t2 = _sub(z, _mm(a, _mm(p, z)))
    w = _mm(_mm(_mT(p), p), gt)
    t3 = _sub(w, _mm(_mm(w, p), a))
    return ops.add(ops.add(t1, t2), t3)


def _vjp_pinv(g, ans, args, params, need):
    _real_only("pinv", args[0])
    return (_pinv_vjp(args[0], ans, g),)


def _jvp_pinv(tangents, ans, args, params):
    _real_only("pinv", args[0])
    return _pinv_jvp(args[0], ans, tangents[0])


_register(P.pinv_p, _vjp_pinv, _jvp_pinv)


def _vjp_lstsq(g, ans, args, params, need):
    a, b = args
    _real_only("lstsq", a)
    m, n = a.shape
    gx, gs = la.unpack(g, [(n, b.shape[1]), (min(m, n),)])
    p = bind(P.pinv_p, a, rtol=params["rcond"])            # x = pinv(a) b
    ct_b = _mm(_mT(p), gx) if need[1] else None
    ct_a = None
    if need[0]:
        ct_a = _pinv_vjp(a, p, _mm(gx, _mT(b)))
        if not _known_zero(gs):                            # the singular values' part
            u, vt = _singular_vectors(a)
            ct_a = ops.add(ct_a, _mm(ops.multiply(u, _row(gs)), vt))
    return (ct_a, ct_b)


def _jvp_lstsq(tangents, ans, args, params):
    a, b = args
    _real_only("lstsq", a)
    ta, tb = tangents
    p = bind(P.pinv_p, a, rtol=params["rcond"])
    k = min(a.shape)
    dx = None if tb is None else _mm(p, tb)
    if ta is None:
        ds = _scal(0, a.dtype, (k,))
    else:
        dpb = _mm(_pinv_jvp(a, p, ta), b)
        dx = dpb if dx is None else ops.add(dx, dpb)
        u, vt = _singular_vectors(a)
        ds = ops.sum(ops.multiply(u, _mm(ta, _mT(vt))), -2)
    if dx is None:
        dx = _scal(0, a.dtype, (a.shape[1], b.shape[1]))
    return _pack_la([dx, ds], ())


_register(P.lstsq_p, _vjp_lstsq, _jvp_lstsq)


# -- WP-jit: stop_gradient is the identity with a zero derivative ----------------------------------
defnondiff(P.stop_gradient_p)


# -- WP-linalg-perf: the fused Euclidean norm, the LU factorization reused by slogdet -------------
# norm2 = sqrt(sum(x^2)) over ``axes``: its derivative x / norm2 is one product (the
# composition sqrt(x . x) costs three passes over x), 0 at the origin (a subgradient, where
# x / 0 would be NaN).  lu_factor is a residual: the factorization that slogdet and lu_inverse
# take as a second operand so as not to factor a again; their rules give the whole derivative
# with respect to a (lu_inverse's is inv's), so lu_factor's own derivative is not needed and is
# declared zero.  The blocked Cholesky derivative is with the Cholesky rules above.

def _norm2_scale(v, ans, shape, axes, keepdims):
    """v / ans (0 where ans is 0) spread back to ``shape``."""
    safe = bind(P.where_p, ops.equal(ans, 0), _c(1, ans), ans)
    return _unreduce(_div(v, safe), shape, axes, keepdims)


def _vjp_norm2(g, ans, args, params, need):
    x = args[0]
    if type(x) is Tensor and type(g) is Tensor:     # concrete: one pass (WP-linalg-vjp)
        return (bind(P.norm2_grad_p, x, ans, g, **params),)
    return (_mul(x, _norm2_scale(g, ans, x.shape, params["axes"], params["keepdims"])),)


def _jvp_norm2(tangents, ans, args, params):
    axes, keepdims = params["axes"], params["keepdims"]
    dot = bind(P.reduce_sum_p, _mul(args[0], tangents[0]), axes=axes, keepdims=keepdims)
    return _div(dot, bind(P.where_p, ops.equal(ans, 0), _c(1, ans), ans))


_register(P.norm2_p, _vjp_norm2, _jvp_norm2)
defnondiff(P.lu_factor_p)


def _vjp_lu_inverse(g, ans, args, params, need):
    it = _mT(ans)
    return (_mm(_mm(it, _neg(g)), it), None)


def _jvp_lu_inverse(tangents, ans, args, params):
    if tangents[0] is None:
        return None
    return _mm(_mm(ans, _neg(tangents[0])), ans)


_register(P.lu_inverse_p, _vjp_lu_inverse, _jvp_lu_inverse)


# -- WP-linalg-perf: the regularized incomplete gamma and beta functions ------------------------
# In x, the derivatives are the densities: P(a, x)' = x^(a-1) e^-x / Gamma(a) (Q's is its
# negative), I_x(a, b)' = x^(a-1) (1-x)^(b-1) / B(a, b), in logs through xlogy / xlog1py (so
# that a = 1 or b = 1 at the ends of the support gives the finite limit, not 0 * -inf).  In the
# shape parameters they are the primitives gammainc_da, betainc_da, betainc_db, whose own
# derivatives in x are those of the densities in a (b): density * (log x - digamma(a)) for the
# gamma, density * (log x - digamma(a) + digamma(a + b)) (log1p(-x) - digamma(b) + ... for b)
# for the beta; their derivatives in the shape parameters (second derivatives of P and I in a,
# b) are not implemented and raise.

def _gamma_density(a, x):
    log_d = _sub(_sub(bind(P.xlogy_p, _sub(a, _c(1, a)), x), x), bind(P.lgamma_p, a))
    return _exp(log_d)


def _beta_density(a, b, x):
    log_d = _add(bind(P.xlogy_p, _sub(a, _c(1, a)), x),
                 bind(P.xlog1py_p, _sub(b, _c(1, b)), _neg(x)))
    return _exp(_sub(log_d, bind(P.betaln_p, a, b)))


def _no_second_shape_derivative(name):
    def rule(*args, **params):
        raise NotImplementedError(
            f"the second derivative of {name} in its shape parameters is not implemented "
            "(only first derivatives in a and b, and any order in x)")
    return rule


defvjp(P.gammainc_p, lambda g, ans, a, x: _mul(g, bind(P.gammainc_da_p, a, x)),
       lambda g, ans, a, x: _mul(g, _gamma_density(a, x)))
defjvp(P.gammainc_p, lambda t, ans, a, x: _mul(t, bind(P.gammainc_da_p, a, x)),
       lambda t, ans, a, x: _mul(t, _gamma_density(a, x)))
defvjp(P.gammaincc_p, lambda g, ans, a, x: _neg(_mul(g, bind(P.gammainc_da_p, a, x))),
       lambda g, ans, a, x: _neg(_mul(g, _gamma_density(a, x))))
defjvp(P.gammaincc_p, lambda t, ans, a, x: _neg(_mul(t, bind(P.gammainc_da_p, a, x))),
       lambda t, ans, a, x: _neg(_mul(t, _gamma_density(a, x))))


def _d_gammainc_da_x(a, x):
    return _mul(_gamma_density(a, x), _sub(bind(P.log_p, x), bind(P.digamma_p, a)))


_no_gamma2 = _no_second_shape_derivative("gammainc")
defvjp(P.gammainc_da_p, _no_gamma2, lambda g, ans, a, x: _mul(g, _d_gammainc_da_x(a, x)))
defjvp(P.gammainc_da_p, _no_gamma2, lambda t, ans, a, x: _mul(t, _d_gammainc_da_x(a, x)))


def _d_betainc_shape_x(a, b, x, wrt_b):
    log_term = bind(P.log1p_p, _neg(x)) if wrt_b else bind(P.log_p, x)
    psi = bind(P.digamma_p, b if wrt_b else a)
    return _mul(_beta_density(a, b, x),
                _add(_sub(log_term, psi), bind(P.digamma_p, _add(a, b))))


defvjp(P.betainc_p, lambda g, ans, a, b, x: _mul(g, bind(P.betainc_da_p, a, b, x)),
       lambda g, ans, a, b, x: _mul(g, bind(P.betainc_db_p, a, b, x)),
       lambda g, ans, a, b, x: _mul(g, _beta_density(a, b, x)))
defjvp(P.betainc_p, lambda t, ans, a, b, x: _mul(t, bind(P.betainc_da_p, a, b, x)),
       lambda t, ans, a, b, x: _mul(t, bind(P.betainc_db_p, a, b, x)),
       lambda t, ans, a, b, x: _mul(t, _beta_density(a, b, x)))
_no_beta2 = _no_second_shape_derivative("betainc")
for _p, _wrt_b in ((P.betainc_da_p, False), (P.betainc_db_p, True)):
    defvjp(_p, _no_beta2, _no_beta2,
           lambda g, ans, a, b, x, _w=_wrt_b: _mul(g, _d_betainc_shape_x(a, b, x, _w)))
    defjvp(_p, _no_beta2, _no_beta2,
           lambda t, ans, a, b, x, _w=_wrt_b: _mul(t, _d_betainc_shape_x(a, b, x, _w)))



# -- WP-linalg-perf: cholesky_grad(L, G), the Cholesky VJP as one primitive -----------------------
# Its value is Psi(M), M = L^-T Phi(L^T G)^T L^-1, Psi(X) = (X + X^T) weighted 1 below / 1/2 on
# the diagonal, 0 above (the symbolic rule of cholesky above; L and G are read from their lower
# triangles).  Its derivatives differentiate that formula:
#   dM = -L^-T dL^T M + L^-T dP^T L^-1 - M dL L^-1,   dP = Phi(dL^T G + L^T dG);
# and, transposed, with Y = W C + (W C)^T (C the cotangent, W Psi's weights),
#   V = L^-1 Y L^-T,  U = Phi(V),  Lbar = -(M + M^T) Y L^-T + G U^T,  Gbar = L U,
# both restricted to the lower triangles.

def _chol_grad_parts(L, G):
    """(tril L, tril G, M) of the formula above."""
    n = L.shape[-1]
    lt, gt = _tri(L, True), _tri(G, True)
    p = _bmul(_mm(_mT(lt), gt), _half_diag_weights(n, True, L.dtype))
    return lt, gt, _trs(lt, _mT(_trs(lt, p, True, 1)), True, 1)


def _jvp_cholesky_grad(tangents, ans, args, params):
    dl, dg = tangents
    lt, gt, m = _chol_grad_parts(*args)
    n = lt.shape[-1]
    phi = _half_diag_weights(n, True, lt.dtype)
    dp = None
    dm = None
    if dl is not None:
        dlt = _tri(dl, True)
        dp = _mm(_mT(dlt), gt)
        dm = _neg(_add(_trs(lt, _mm(_mT(dlt), m), True, 1),
                       _mT(_trs(lt, _mT(_mm(m, dlt)), True, 1))))
    if dg is not None:
        term = _mm(_mT(lt), _tri(dg, True))
        dp = term if dp is None else _add(dp, term)
    dp = _bmul(dp, phi)
    mid = _trs(lt, _mT(_trs(lt, dp, True, 1)), True, 1)      # L^-T dP^T L^-1
    dm = mid if dm is None else _add(dm, mid)
    return _tri_adjoint(dm, True)


def _vjp_cholesky_grad(c, ans, args, params, need):
    lt, gt, m = _chol_grad_parts(*args)
    n = lt.shape[-1]
    wc = _bmul(c, _half_diag_weights(n, True, lt.dtype))
    y = _add(wc, _mT(wc))
    y_lt = _mT(_trs(lt, y, True, 0))                           # Y L^-T (Y symmetric)
    u = _bmul(_trs(lt, y_lt, True, 0), _half_diag_weights(n, True, lt.dtype))
    ct_l = ct_g = None
    if need[0]:
        ct_l = _tri(_sub(_mm(gt, _mT(u)), _mm(_add(m, _mT(m)), y_lt)), True)
    if need[1]:
        ct_g = _tri(_mm(lt, u), True)
    return (ct_l, ct_g)


_register(P.cholesky_grad_p, _vjp_cholesky_grad, _jvp_cholesky_grad)


# -- WP-linalg-vjp: the determinant from the LU factorization, fused derivatives ----------------
# lu_det(a, lu, part): d det = det tr(a^-1 da), d log|det a| = tr(a^-1 da) (Giles 2008), the
# sign (real a) is piecewise constant.  On concrete values (nothing differentiates the rule) the
# cotangent s * inv(a)^T is the one primitive det_grad (getri on the saved factorization);
# traced values take the composition through lu_inverse, so that higher orders work.
# det_grad(a, lu, s) = s B, B = inv(a)^T: dB = -B da^T B, so
#   d det_grad = ds B - s B da^T B;  VJP of C: a gets -B (s C)^T B, s gets sum(C * B).
# norm2_grad(x, ans, g) = x * S, S = g / ans spread over the reduced axes (ans taken as 1 where
# it is 0, where x is 0 too):  d = dx S + x (dg - g dans / ans) / ans (spread; the dans term is
# 0 where ans is 0, as the where in the composition makes it).
# triangular_solve_grad(u, v) = -tri(P Q^T), (P, Q) = (u, v) for trans 0, (v, u) for trans 1,
# tri the part of a the solve reads: bilinear, d = -tri(dP Q^T + P dQ^T); VJP of C (T = tri(C)):
# P gets -T Q, Q gets -T^T P.

def _lu_det_scale(g, ans, part):
    """The factor s of inv(a)^T in a's cotangent: g det for det, g for log|det|."""
    if part == "det":
        return _mul(g, ans)
    return g


def _cofactor(a):
    """The cofactor matrix adj(a)^T of each square matrix of a, the derivative of det, also at
    singular matrices (where det * inv(a)^T does not exist): from a = U diag(s) V^T,
    adj(a)^T = det(U) det(V) U diag(c) V^T with c_i the product of the s_j, j != i (JAX
    returns the same adjugate there).  Differentiable where the SVD is."""
    u, s, vt = la.svd(a)
    n = a.shape[-1]
    eye = _eye(n, s.dtype)
    shape = s.shape + (n,)
    others = ops.add(ops.multiply(bind(P.expand_p, _row(s), shape=shape), ops.subtract(1, eye)),
                     eye)                                  # s_j off the diagonal, 1 on it
    c = ops.prod(others, -1)
    sign = ops.multiply(la.det(u), la.det(vt))
    return ops.multiply(_mm(ops.multiply(u, _row(c)), vt), ops.reshape(sign, sign.shape + (1, 1)))


def _known_singular(a):
    """Whether a's values are known and some matrix of it is exactly singular (its LU
    factorization has a zero pivot: inv, and so the det * inv^T form, fail there)."""
    v = la._concrete(a)
    if v is None:
        return False
    try:
        np.linalg.inv(v)
    except np.linalg.LinAlgError:
        return True
    return False


def _vjp_lu_det(g, ans, args, params, need):
    a, lu = args
    _real_only("det and slogdet", a)
    part = params["part"]
    if part == "sign" or not need[0]:
        return (None, None)
    s = _lu_det_scale(g, ans, part)
    if part == "det" and _known_singular(a):
        return (_bmul(_cofactor(a), ops.reshape(g, g.shape + (1, 1))), None)
    if type(s) is Tensor and type(a) is Tensor and type(lu) is Tensor:
        return (bind(P.det_grad_p, a, lu, s), None)
    ainv_t = _mT(bind(P.lu_inverse_p, a, lu))
    return (_bmul(ainv_t, ops.reshape(s, s.shape + (1, 1))), None)


def _jvp_lu_det(tangents, ans, args, params):
    a, lu = args
    _real_only("det and slogdet", a)
    part = params["part"]
    if tangents[0] is None or part == "sign":
        return None
    if part == "det" and _known_singular(a):
        return ops.sum(ops.multiply(_cofactor(a), tangents[0]), (-2, -1))
    dlog = ops.sum(ops.multiply(_mT(bind(P.lu_inverse_p, a, lu)), tangents[0]), (-2, -1))
    return _mul(dlog, ans) if part == "det" else dlog


_register(P.lu_det_p, _vjp_lu_det, _jvp_lu_det)


def _vjp_det_grad(c, ans, args, params, need):
    a, lu, s = args
    b = _mT(bind(P.lu_inverse_p, a, lu))
    ct_a = ct_s = None
    if need[0]:
        sc = _bmul(c, ops.reshape(s, s.shape + (1, 1)))
        ct_a = _neg(_mm(_mm(b, _mT(sc)), b))
    if need[2]:
        ct_s = ops.sum(_mul(c, b), (-2, -1))
    return (ct_a, None, ct_s)


def _jvp_det_grad(tangents, ans, args, params):
    a, lu, s = args
    da, _, ds = tangents
    b = _mT(bind(P.lu_inverse_p, a, lu))
    out = None
    if da is not None:
        out = _neg(_bmul(_mm(_mm(b, _mT(da)), b), ops.reshape(s, s.shape + (1, 1))))
    if ds is not None:
        term = _bmul(b, ops.reshape(ds, ds.shape + (1, 1)))
        out = term if out is None else _add(out, term)
    return out


_register(P.det_grad_p, _vjp_det_grad, _jvp_det_grad)


def _norm2_grad_safe(ans):
    return bind(P.where_p, ops.equal(ans, 0), _c(1, ans), ans)


def _vjp_norm2_grad(c, ans, args, params, need):
    x, norm, g = args
    axes, keepdims = params["axes"], params["keepdims"]
    safe = _norm2_grad_safe(norm)
    ct_x = ct_n = ct_g = None
    if need[0]:
        ct_x = _mul(c, _unreduce(_div(g, safe), x.shape, axes, keepdims))
    if need[1] or need[2]:
        q = _div(bind(P.reduce_sum_p, _mul(c, x), axes=axes, keepdims=keepdims), safe)
        if need[2]:
            ct_g = q
        if need[1]:
            zero = ops.equal(norm, 0)
            ct_n = bind(P.where_p, zero, _c(0, norm), _neg(_div(_mul(q, g), safe)))
    return (ct_x, ct_n, ct_g)


def _jvp_norm2_grad(tangents, ans, args, params):
    x, norm, g = args
    dx, dn, dg = tangents
    axes, keepdims = params["axes"], params["keepdims"]
    safe = _norm2_grad_safe(norm)
    out = None
    if dx is not None:
        out = _mul(dx, _unreduce(_div(g, safe), x.shape, axes, keepdims))
    inner = None
    if dg is not None:
        inner = dg
    if dn is not None:
        zero = ops.equal(norm, 0)
        term = bind(P.where_p, zero, _c(0, norm), _neg(_div(_mul(g, dn), safe)))
        inner = term if inner is None else _add(inner, term)
    if inner is not None:
        term = _mul(x, _unreduce(_div(inner, safe), x.shape, axes, keepdims))
        out = term if out is None else _add(out, term)
    return out


_register(P.norm2_grad_p, _vjp_norm2_grad, _jvp_norm2_grad)


def _tsg_pair(args, params):
    """(P, Q, whether they are swapped) of triangular_solve_grad's formula."""
    u, v = args
    return (v, u, True) if params["trans"] else (u, v, False)


def _vjp_triangular_solve_grad(c, ans, args, params, need):
    p, q, swapped = _tsg_pair(args, params)
    t = _tri_read(c, params["lower"], params["unit_diagonal"])
    ct_p = _neg(_mm(t, q))
    ct_q = _neg(_mm(_mT(t), p))
    return (ct_q, ct_p) if swapped else (ct_p, ct_q)


def _jvp_triangular_solve_grad(tangents, ans, args, params):
    p, q, swapped = _tsg_pair(args, params)
    dp, dq = (tangents[1], tangents[0]) if swapped else tuple(tangents)
    out = None
    if dp is not None:
        out = _mm(dp, _mT(q))
    if dq is not None:
        term = _mm(p, _mT(dq))
        out = term if out is None else _add(out, term)
    return _neg(_tri_read(out, params["lower"], params["unit_diagonal"]))


_register(P.triangular_solve_grad_p, _vjp_triangular_solve_grad, _jvp_triangular_solve_grad)


# cho_solve(c, b, lower): x = a^-1 b with a = c c^T (lower) or c^T c (upper), read from c's
# triangle.  dx = a^-1 (db - da x) with da = dc c^T + c dc^T (dc^T c + c^T dc); reversed, b
# gets ct_b = a^-1 g (a symmetric) and c the triangle of -S c (lower) or -c S (upper),
# S = ct_b x^T + x ct_b^T: on concrete values the fused cho_solve_grad, else the formula.
# cho_solve_grad(c, x, u) = -tri(S C) (lower) / -tri(C S) (upper), C = tri(c),
# S = u x^T + x u^T: trilinear; with K = tri(cotangent), the VJP gives C -S K (lower) / -K S
# (upper), u -(K C^T + C K^T) x (lower) / -(C^T K + K^T C) x (upper), x the same with u.

def _cho_solve_grad_formula(c, x, u, lower):
    tc = _tri(c, lower)
    if lower:
        s_c = _add(_mm(u, _mm(_mT(x), tc)), _mm(x, _mm(_mT(u), tc)))
    else:
        s_c = _add(_mm(_mm(tc, u), _mT(x)), _mm(_mm(tc, x), _mT(u)))
    return _neg(_tri(s_c, lower))


def _vjp_cho_solve(g, ans, args, params, need):
    c = args[0]
    _real_only("cho_solve", c)
    lower = params["lower"]
    ct_b = bind(P.cho_solve_p, c, g, lower=lower)
    ct_c = None
    if need[0]:
        if type(ct_b) is Tensor and type(ans) is Tensor and type(c) is Tensor:
            ct_c = bind(P.cho_solve_grad_p, c, ans, ct_b, lower=lower)
        else:
            ct_c = _cho_solve_grad_formula(c, ans, ct_b, lower)
    return (ct_c, ct_b if need[1] else None)


def _jvp_cho_solve(tangents, ans, args, params):
    c = args[0]
    _real_only("cho_solve", c)
    dc, db = tangents
    lower = params["lower"]
    rhs = db
    if dc is not None:
        tc, dct = _tri(c, lower), _tri(dc, lower)
        if lower:       # da x = dc (c^T x) + c (dc^T x)
            dax = _add(_mm(dct, _mm(_mT(tc), ans)), _mm(tc, _mm(_mT(dct), ans)))
        else:           # da x = dc^T (c x) + c^T (dc x)
            dax = _add(_mm(_mT(dct), _mm(tc, ans)), _mm(_mT(tc), _mm(dct, ans)))
        rhs = _neg(dax) if rhs is None else _sub(rhs, dax)
    return bind(P.cho_solve_p, c, rhs, lower=lower)


_register(P.cho_solve_p, _vjp_cho_solve, _jvp_cho_solve)


def _vjp_cho_solve_grad(k, ans, args, params, need):
    c, x, u = args
    lower = params["lower"]
    tc, kt = _tri(c, lower), _tri(k, lower)
    ct_c = ct_x = ct_u = None
    if need[0]:
        if lower:       # -S K
            full = _add(_mm(u, _mm(_mT(x), kt)), _mm(x, _mm(_mT(u), kt)))
        else:           # -K S
            full = _add(_mm(_mm(kt, u), _mT(x)), _mm(_mm(kt, x), _mT(u)))
        ct_c = _neg(_tri(full, lower))
    if need[1] or need[2]:
        m = _mm(kt, _mT(tc)) if lower else _mm(_mT(tc), kt)
        sym = _add(m, _mT(m))
        if need[1]:
            ct_x = _neg(_mm(sym, u))
        if need[2]:
            ct_u = _neg(_mm(sym, x))
    return (ct_c, ct_x, ct_u)


def _jvp_cho_solve_grad(tangents, ans, args, params):
    c, x, u = args
    dc, dx, du = tangents
    lower = params["lower"]
    tc = _tri(c, lower)
    out = None
    ds = None
    if du is not None:
        m = _mm(du, _mT(x))
        ds = _add(m, _mT(m))
    if dx is not None:
        m = _mm(u, _mT(dx))
        m = _add(m, _mT(m))
        ds = m if ds is None else _add(ds, m)
    if ds is not None:
        out = _mm(ds, tc) if lower else _mm(tc, ds)
    if dc is not None:
        m = _mm(u, _mT(x))
        s = _add(m, _mT(m))
        dct = _tri(dc, lower)
        term = _mm(s, dct) if lower else _mm(dct, s)
        out = term if out is None else _add(out, term)
    return _neg(_tri(out, lower))


_register(P.cho_solve_grad_p, _vjp_cho_solve_grad, _jvp_cho_solve_grad)


# matrix_power(a, parts, n): the product rule through binary powering (backend.power_program):
# for each product V_k = V_i V_j, dV_k = dV_i V_j + V_i dV_j, reversed ct_i += ct_k V_j^T,
# ct_j += V_i^T ct_k.  The intermediate products are read from the residual ``parts`` on
# concrete values (one rule instead of one tape entry per product); traced values recompute
# them from a, so that higher derivatives flow through them (parts has no derivative).

def _power_values(a, parts, steps, concrete):
    """[a, the products of binary powering] as tensors (on concrete values, views of ``parts``
    for the products that are operands of later ones, None for the others)."""
    vals = [a]
    if concrete:
        used = {i for step in steps for i in step}
        m = a.shape[-1]
        whole = tuple((0, d) for d in parts.shape[:-3])
        for k in range(len(steps)):
            if k + 1 not in used:
                vals.append(None)
                continue
            part = bind(P.shrink_p, parts, limits=whole + ((k, k + 1), (0, m), (0, m)))
            vals.append(bind(P.reshape_p, part, shape=a.shape))
    else:
        for i, j in steps:
            vals.append(_mm(vals[i], vals[j]))
    return vals


def _vjp_matrix_power(g, ans, args, params, need):
    a, parts = args
    steps, res = la.power_program(params["n"])
    concrete = type(a) is Tensor and type(parts) is Tensor and type(g) is Tensor
    vals = _power_values(a, parts, steps, concrete)
    trans = {}                     # each operand's transpose, once

    def t(i):
        v = trans.get(i)
        if v is None:
            v = trans[i] = _mT(vals[i])
        return v
    cts = [None] * len(vals)
    cts[res] = g
    for k in range(len(steps) - 1, -1, -1):
        c = cts[k + 1]
        if c is None:
            continue
        i, j = steps[k]
        for idx, term in ((i, _mm(c, t(j))), (j, _mm(t(i), c))):
            cts[idx] = term if cts[idx] is None else _add(cts[idx], term)
    return (cts[0], None)


def _jvp_matrix_power(tangents, ans, args, params):
    a, parts = args
    da = tangents[0]
    if da is None:
        return None
    steps, res = la.power_program(params["n"])
    vals = _power_values(a, parts, steps, type(a) is Tensor and type(parts) is Tensor)
    dvals = [da]
    for i, j in steps:
        dvals.append(_add(_mm(dvals[i], vals[j]), _mm(vals[i], dvals[j])))
    return dvals[res]


_register(P.matrix_power_p, _vjp_matrix_power, _jvp_matrix_power)
defnondiff(P.matrix_power_parts_p)
