"""Rules of the unary elementwise primitives (and ``cast`` and ``complex``).

Each VJP is one product with the derivative, so one ``defelementwise`` gives both directions;
the commonest are ``Steps`` that the tape's backward loop runs in C.  Complex parts follow the
transpose convention (pairing <ct, t> = Re(ct * t)).  Rounding and tests have zero derivative.
Batching: every one broadcasts (``defbroadcast``).

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defbroadcast
from nx_rune.autodiff.rules._common import (
    LN2,
    Steps,
    _add,
    _c,
    _const,
    _div,
    _fill,
    _known,
    _mul,
    _neg,
    _register,
    _safe_nonzero,
    _sqrt,
    _sub,
    _val,
    _zeros,
    defelementwise,
    deflinear,
    defnondiff,
)
from nx_rune.primitives import bind

# -- unary elementwise ---------------------------------------------------------------------

deflinear(P.neg_p, lambda g, ans, x: bind(P.neg_p, g))


# the commonest rules as Steps, which the tape's backward loop runs in C
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
    if t.dtype.kind == "c" and params["dtype"].kind != "c":  # the real part, as the VJP keeps
        t = bind(P.real_p, t)
    return bind(P.cast_p, t, dtype=params["dtype"])


_register(P.cast_p, _vjp_cast, _jvp_cast)


# -- trigonometric and hyperbolic functions, complex parts, rounding and tests -----------------

LN10 = math.log(10.0)


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
        if not _known(x):    # traced by jit: no values to look at
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


for _p in (P.floor_p, P.ceil_p, P.rint_p, P.trunc_p, P.sign_p, P.signbit_p, P.isnan_p,
           P.isinf_p, P.isfinite_p):
    defnondiff(_p)


# -- batching: every unary elementwise primitive broadcasts ---------------------------------

for _p in (P.neg_p, P.log2_p, P.exp2_p, P.sin_p, P.sqrt_p, P.recip_p, P.exp_p, P.log_p,
           P.cos_p, P.tanh_p, P.log1p_p, P.expm1_p, P.cast_p,
           P.tan_p, P.asin_p, P.acos_p, P.atan_p, P.sinh_p, P.cosh_p, P.asinh_p, P.acosh_p,
           P.atanh_p, P.log10_p, P.abs_p, P.real_p, P.imag_p, P.conj_p, P.complex_p,
           P.deg2rad_p, P.rad2deg_p, P.sinc_taylor_p, P.floor_p, P.ceil_p, P.rint_p, P.trunc_p,
           P.sign_p, P.signbit_p, P.isnan_p, P.isinf_p, P.isfinite_p):
    defbroadcast(_p)
