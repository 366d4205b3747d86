"""Shared pieces of the derivative rules: the tables, the rule objects and the rule makers.

Holds ``VJP_RULES``, ``JVP_RULES`` and ``NONDIFF`` (filled by the family modules of this
package), the rule objects ``VJPRule``/``JVPRule``, ``Steps`` (an elementwise rule as data that
the tape's backward loop runs in C), the makers ``defvjp``, ``defjvp``, ``defelementwise``,
``deflinear``, ``defnondiff`` and the small value helpers every family uses (``unbroadcast``,
``_val``/``_known`` for the concrete values of a primal, ``_const``/``_mask`` for constants made
from them, partials of ``bind`` for the binary primitives, ...).

May import: the front end, primitives, tensor and ``autodiff.batched_values``; never an
interpreter (``autodiff.core``, ``api``, ``batching``, the compiler), which import this.
"""
import functools
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff import batched_values
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

VJP_RULES = {}
JVP_RULES = {}
NONDIFF = set()
LN2 = math.log(2.0)

_scal = Tensor._broadcast_scalar


class VJPRule:
    """A rule in the fast form ``fn(g, ans, args, params, need)``; calling it uses the public
    form ``rule(ct, *primals, out, **params) -> tuple``.  ``unary``: for a unary elementwise
    primitive, ``apply(g, ans, x)`` giving the one cotangent, which the tape's backward pass
    calls directly (one Python frame less per entry than ``fn``).  ``operands``: for a binary
    elementwise primitive, one ``Steps`` per operand (None: no cotangent), which the backward
    pass runs in C; ``fn`` then runs the same steps.  ``window``: for a primitive whose output
    is a window of its one operand (shrink), ``window(params)`` gives the window's (start, stop)
    per axis; with no transformation active the backward pass then adds the cotangent straight
    into that window of the operand's accumulated cotangent (``fn`` would pad it to the
    operand's full size, and every such cotangent of one operand would be summed at full
    size)."""
    __slots__ = ("fn", "unary", "operands", "window")

    def __init__(self, fn, unary=None):
        self.fn = fn
        self.unary = unary
        self.operands = None
        self.window = None

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


# The commonest elementwise rules are written as Steps: data the tape's backward loop runs in
# C, without a Python frame per entry (still binds of primitives, so still differentiable).
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


# -- small builders the rule modules share ------------------------------------------------

_neg = functools.partial(bind, P.neg_p)
_sub = functools.partial(bind, P.sub_p)   # (partials of bind, as _mul: no frame of their own)


def _sqrt(x):
    return bind(P.sqrt_p, x)


def _where_const(mask, a, b):
    """where(mask, a, b) with a NumPy bool mask (a constant)."""
    return bind(P.where_p, _mask(mask, a), a, b)


def _safe_nonzero(t):
    """t with its zeros replaced by 1 (for a denominator whose quotient is masked to 0)."""
    if not _known(t):    # traced by jit: no values to look at
        return bind(P.where_p, ops.equal(t, 0), _c(1, t), t)
    zero = _val(t) == 0
    return _where_const(zero, _c(1, t), t) if zero.any() else t


def _share(w, like):
    return _const(w, like) if isinstance(w, (np.ndarray, np.generic)) else w


def _exp(x):
    return bind(P.exp_p, x)
