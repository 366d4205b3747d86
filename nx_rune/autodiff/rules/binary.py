"""Rules of the binary elementwise primitives (operands of one shape and dtype) and ``where``.

Broadcasting is undone once, in ``expand``'s rule (movement), so no rule here unbroadcasts.
``max`` splits the derivative equally between tied operands; ``pow``'s derivative in the
exponent is 0 at a base of 0; integer division, comparisons and bit operations have zero
derivative.  Batching: every one broadcasts (``defbroadcast``).

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defbroadcast
from nx_rune.autodiff.rules._common import (
    Steps,
    _add,
    _c,
    _const,
    _div,
    _known,
    _mask,
    _mul,
    _neg,
    _register,
    _register_steps,
    _safe_nonzero,
    _sub,
    _tmask,
    _val,
    _where_const,
    _zeros,
    defjvp,
    defnondiff,
    defvjp,
)
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

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
    # the comparison written straight in the weight's dtype (no boolean temporary to cast)
    w = np.empty(np.broadcast_shapes(np.shape(av), np.shape(bv)), a.dtype)
    np.greater(av, bv, out=w)
    tie = np.equal(av, bv)
    if tie.any():    # rare outside relu at exact zeros: no float64 temporaries otherwise
        w[np.broadcast_to(tie, w.shape)] = 0.5
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


# add, sub and mul: Steps per operand, which the tape's backward pass runs in C (the commonest
# rules, so no Python frame per entry)
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
    if not _known(a, b):    # traced by jit: no values to look at
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
    if not _known(a, b):    # traced by jit: no values to look at
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

for _p in (P.nextafter_p, P.lshift_p, P.rshift_p):
    defnondiff(_p)


# -- batching: every binary primitive broadcasts ---------------------------------------------

for _p in (P.add_p, P.sub_p, P.mul_p, P.fdiv_p, P.pow_p, P.max_p, P.idiv_p, P.mod_p,
           P.cmplt_p, P.cmpne_p, P.xor_p, P.or_p, P.and_p, P.where_p,
           P.atan2_p, P.hypot_p, P.copysign_p, P.logaddexp_p, P.logaddexp2_p, P.nextafter_p,
           P.lshift_p, P.rshift_p):
    defbroadcast(_p)
