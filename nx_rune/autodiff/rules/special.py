"""Rules of the special functions (gamma family, error functions, Bessel functions, expit and
logit, betaln, xlogy/xlog1py, the regularized incomplete gamma and beta functions).

Derivatives are the known formulas written with primitives, so each is differentiable again;
all of them batch as elementwise primitives.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import math

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defbroadcast
from nx_rune.autodiff.rules._common import (
    _add,
    _c,
    _div,
    _exp,
    _known,
    _mask,
    _mul,
    _neg,
    _sub,
    _val,
    defelementwise,
    defjvp,
    defvjp,
)
from nx_rune.primitives import bind

# -- gamma family, error functions, Bessel functions, expit/logit, betaln, xlogy ----------------
# Special functions: derivatives from the known formulas, written with primitives (each
# derivative is differentiable again: lgamma -> digamma -> polygamma(1) -> polygamma(2) ...).
# polygamma(n, x) is differentiable in x only (n takes integer values).  xlogy/xlog1py: the
# derivative in y is x / y (x / (1 + y)) with 0 at the one point x == 0 == y (y == -1), where
# the function is 0 along x == 0; the derivative in x is log(y) (log1p(y)) everywhere, as
# JAX's.  i1 and i1e: the derivative formulas divide by x; 1/2 (the limit) for |x| <= eps.
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


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


# -- the regularized incomplete gamma and beta functions ----------------------------------------
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


# -- batching ---------------------------------------------------------------------------------

for _p in (P.lgamma_p, P.digamma_p, P.polygamma_p, P.gamma_p, P.betaln_p, P.erf_p, P.erfc_p,
           P.erfinv_p, P.ndtr_p, P.ndtri_p, P.log_ndtr_p, P.expit_p, P.logit_p, P.xlogy_p,
           P.xlog1py_p, P.i0_p, P.i0e_p, P.i1_p, P.i1e_p):
    defbroadcast(_p)

for _p in (P.gammainc_p, P.gammaincc_p, P.gammainc_da_p, P.betainc_p, P.betainc_da_p,
           P.betainc_db_p):
    defbroadcast(_p)
