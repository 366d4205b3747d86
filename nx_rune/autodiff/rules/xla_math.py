"""Rules of XLA's elementwise math (xla_math(x, op) for exp, log, log1p, tan, rsqrt, erf,
YNNPACK's ynn_exp, ynn_log and ynn_log1p, and xla_pow(x, y)): the derivatives of the exact
functions, written with the primitives themselves and front-end ops so that they differentiate
again; batching elementwise.

May import: the front end, primitives and this package's ``_common``/``_batch_common``.
"""
import math

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defbroadcast
from nx_rune.autodiff.rules._common import _add, _c, _div, _mul, defjvp, defvjp
from nx_rune.primitives import bind


def _math(x, op):
    return bind(P.xla_math_p, x, op=op)


# d op(x) / dx from x and ans = op(x)
_D = {
    "exp": lambda x, ans: ans,
    "ynn_exp": lambda x, ans: ans,
    "log": lambda x, ans: _div(_c(1, x), x),
    "ynn_log": lambda x, ans: _div(_c(1, x), x),
    "log1p": lambda x, ans: _div(_c(1, x), _add(_c(1, x), x)),
    "ynn_log1p": lambda x, ans: _div(_c(1, x), _add(_c(1, x), x)),
    "tan": lambda x, ans: _add(_c(1, ans), _mul(ans, ans)),
    "rsqrt": lambda x, ans: _div(_mul(_c(-0.5, ans), ans), x),
    "erf": lambda x, ans: _mul(_c(2 / math.sqrt(math.pi), x), _math(ops.negative(_mul(x, x)),
                                                                    "exp")),
}


def _math_rule(v, ans, x, *, op):
    if op in ("exp", "ynn_exp"):
        return _mul(v, ans)
    return _mul(v, _D[op](x, ans))


defvjp(P.xla_math_p, _math_rule)
defjvp(P.xla_math_p, _math_rule)


def _pow_dbase(ans, x, y):
    """y * x**(y - 1), with 0 (not 0 * inf) where x == y == 0, as pow's rule."""
    sing = ops.logical_and(ops.equal(x, 0), ops.equal(y, 0))
    x = bind(P.where_p, sing, _c(1, x), x)
    return _mul(y, bind(P.xla_pow_p, x, _add(y, _c(-1, y))))


def _pow_dexp(ans, x, y):
    """x**y * log(x), with 0 where x == 0 (nan for x < 0), as pow's rule."""
    return _mul(ans, _math(bind(P.where_p, ops.equal(x, 0), _c(1, x), x), "log"))


defvjp(P.xla_pow_p, lambda g, ans, x, y: _mul(g, _pow_dbase(ans, x, y)),
       lambda g, ans, x, y: _mul(g, _pow_dexp(ans, x, y)))
defjvp(P.xla_pow_p, lambda t, ans, x, y: _mul(t, _pow_dbase(ans, x, y)),
       lambda t, ans, x, y: _mul(t, _pow_dexp(ans, x, y)))

defbroadcast(P.xla_math_p)
defbroadcast(P.xla_pow_p)
