"""Rules of the special functions (gamma family, error functions, Bessel functions, expit and
logit, betaln, xlogy/xlog1py, the regularized incomplete gamma and beta functions, and the
families by SciPy's name: special_unary / special_binary / special_ternary).

Derivatives are the known formulas written with primitives, so each is differentiable again;
all of them batch as elementwise primitives.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import functools
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
    _zeros,
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


# -- the families by name: special_unary(x), special_binary(a, x), special_ternary(a, b, x) ------
# Derivatives in x (the last operand) from the recurrences of each family, bound on the family
# itself so that they are differentiable again to any order: j0' = -j1, jv' = (j_{v-1} -
# j_{v+1}) / 2, iv' = (i_{v-1} + i_{v+1}) / 2, kv' = -(k_{v-1} + k_{v+1}) / 2 (the exponentially
# scaled ive, kve add the scale's derivative), expn' = -expn(n - 1, .), zeta(s, q) in q:
# -s zeta(s + 1, q), hyp1f1(a, b, x)' = a / b hyp1f1(a + 1, b + 1, x).  Orders (v, n) are not
# differentiable: their derivative raises NotImplementedError.  hyp1f1 in a and b: the partials
# hyp1f1_da, hyp1f1_db of the same family (series), first order.  zeta in s: the derivative of
# its Euler-Maclaurin sum (below), as JAX's.

def _fam1(fn, x):
    return bind(P.special_unary_p, x, fn=fn)


def _fam2(fn, a, x):
    return bind(P.special_binary_p, a, x, fn=fn)


def _half(x):
    return _mul(x, _c(0.5, x))


def _order_shift(fn, v, x, sign):
    """(f_{v-1}(x) + sign * f_{v+1}(x)) / 2 for the Bessel function ``fn``."""
    lo = _fam2(fn, _sub(v, _c(1, v)), x)
    hi = _fam2(fn, _add(v, _c(1, v)), x)
    return _half(_add(lo, hi) if sign > 0 else _sub(lo, hi))


def _no_order_derivative(fn, arg):
    def rule(*args, **params):
        raise NotImplementedError(
            f"the derivative of {fn} in {arg} is not implemented (only in x, to any order)")
    return rule


def _d_rgamma(x, ans):
    """-rgamma(x) digamma(x) for x >= 1/2; below, where gamma has its poles (rgamma 0 and
    digamma nan at x = -n), the derivative of the reflection formula rgamma(x) = sin(pi x)
    gamma(1 - x) / pi: gamma(1 - x) (cos(pi x) - sin(pi x) digamma(1 - x) / pi), smooth
    through the poles ((-1)^n n! there) to every order.  Below -150 (gamma(1 - x) near
    overflow) the first form again.  Each branch sees a harmless point where the other is
    taken, so that neither gives a nan derivative."""
    refl = ops.logical_and(ops.less(x, 0.5), ops.greater(x, -150.0))
    xr = bind(P.where_p, refl, x, _zeros(x))
    xg = bind(P.where_p, refl, _c(1, x), x)
    r = _sub(_c(1, x), xr)
    g = bind(P.gamma_p, r)
    px = _mul(xr, _c(math.pi, x))
    reflected = _mul(g, _sub(bind(P.cos_p, px), _mul(_mul(bind(P.sin_p, px), _c(1 / math.pi, x)),
                                                    bind(P.digamma_p, r))))
    general = _neg(_mul(_fam1("rgamma", xg), bind(P.digamma_p, xg)))
    return bind(P.where_p, refl, reflected, general)


# -log(x) / (x - 1) = -log1p(u) / u (u = x - 1) near 1: its Taylor series -sum (-u)^k / (k + 1)
# for |u| < 1/100 (10 terms: below 1e-21 there), a polynomial, so smooth through u = 0 for every
# order of derivative; beyond, the formula's own derivatives lose at most eps / |u|^k in the k-th
_SPENCE_NEAR = 0.01
_SPENCE_TERMS = 10


def _d_spence(x, ans):
    u = _sub(x, _c(1, x))
    if _known(x):     # concrete values: each branch only where it is needed
        near_v = np.abs(_val(x) - 1) < _SPENCE_NEAR
        if not near_v.any():
            return _div(_neg(bind(P.log_p, x)), u)
        near = _mask(near_v, x)
    else:
        near = ops.less(ops.abs(u), _SPENCE_NEAR)
    un = bind(P.where_p, near, u, _zeros(u))
    acc = _c(-1.0 / _SPENCE_TERMS * (-1) ** (_SPENCE_TERMS - 1), u)
    for k in range(_SPENCE_TERMS - 2, -1, -1):
        acc = _add(_mul(acc, un), _c(-((-1) ** k) / (k + 1), u))
    xf = bind(P.where_p, near, _c(2, x), x)
    far = _div(_neg(bind(P.log_p, xf)), _sub(xf, _c(1, xf)))
    return bind(P.where_p, near, acc, far)


_UNARY_FAMILY_D = {
    "gammasgn": lambda x, ans: _zeros(x),
    "rgamma": _d_rgamma,
    "j0": lambda x, ans: _neg(_fam1("j1", x)),
    "j1": lambda x, ans: _half(_sub(_fam1("j0", x), _fam2("jv", _c(2, x), x))),
    "y0": lambda x, ans: _neg(_fam1("y1", x)),
    "y1": lambda x, ans: _half(_sub(_fam1("y0", x), _fam2("yn", _c(2, x), x))),
    "spence": _d_spence,
    "erfcinv": lambda x, ans: _mul(_c(-_SQRT_PI / 2, x), _exp(_mul(ans, ans))),
    "exp1": lambda x, ans: _neg(_div(_exp(_neg(x)), x)),
    "expi": lambda x, ans: _div(_exp(x), x),
    "riemann_zeta": lambda x, ans: _riemann_zeta_ds(x),
}


def _unary_family_rule(v, ans, x, *, fn):
    if fn == "gammasgn":    # piecewise constant: 0, even for an infinite or nan cotangent
        return _zeros(v)
    return _mul(v, _UNARY_FAMILY_D[fn](x, ans))


defvjp(P.special_unary_p, lambda g, ans, x, fn: _unary_family_rule(g, ans, x, fn=fn))
defjvp(P.special_unary_p, lambda t, ans, x, fn: _unary_family_rule(t, ans, x, fn=fn))


def _d_expn(n, x, ans):
    """-expn(n - 1, x); for n = 0 (expn(0, x) = exp(-x) / x) that is -exp(-x) (1/x + 1/x^2),
    the general branch seeing n = 1 there (expn(-1, .) is nan)."""
    zero = ops.equal(n, 0)
    lower = _fam2("expn", bind(P.where_p, zero, _zeros(n), _sub(n, _c(1, n))), x)
    r = bind(P.recip_p, x)
    at_zero = _mul(_exp(_neg(x)), _add(r, _mul(r, r)))
    return _neg(bind(P.where_p, zero, at_zero, lower))


# Euler-Maclaurin: zeta(s, q) = sum_{k<N} (q+k)^-s + a^(1-s)/(s-1) + a^-s/2
#   + sum_{j=1..M} B_2j/(2j)! s(s+1)...(s+2j-2) a^(-s-2j+1),  a = q + N;
# its derivative in s, written with primitives (so differentiable again in s and q)
_ZETA_N = 10
_ZETA_B = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
           43867 / 798, -174611 / 330]


def _zeta_ds(s, q):
    log = functools.partial(bind, P.log_p)
    out = _zeros(s)
    for k in range(_ZETA_N):
        qk = _add(q, _c(k, q))
        lq = log(qk)
        out = _sub(out, _mul(lq, _exp(_neg(_mul(s, lq)))))
    a = _add(q, _c(_ZETA_N, q))
    la = log(a)
    sm1 = _sub(s, _c(1, s))
    pw = _exp(_mul(_neg(sm1), la))                       # a^(1-s)
    out = _sub(out, _mul(pw, _add(_div(la, sm1), bind(P.recip_p, _mul(sm1, sm1)))))
    pw = _div(pw, a)                                     # a^-s
    out = _sub(out, _half(_mul(la, pw)))
    poly, dpoly = s, _c(1, s)                            # s(s+1)...(s+2j-2) and its derivative
    pw = _div(pw, a)                                     # a^(-s-1)
    fact = 2.0
    for j, b in enumerate(_ZETA_B, start=1):
        if j > 1:
            for i in (2 * j - 3, 2 * j - 2):
                f = _add(s, _c(i, s))
                dpoly = _add(_mul(dpoly, f), poly)
                poly = _mul(poly, f)
            pw = _div(_div(pw, a), a)
            fact *= (2 * j - 1) * (2 * j)
        out = _add(out, _mul(_c(b / fact, s), _mul(pw, _sub(dpoly, _mul(la, poly)))))
    return out


def _riemann_zeta_ds(s):
    """zeta'(s) for Riemann's zeta: the Euler-Maclaurin derivative for s >= -1/2; below, where
    its first terms (k + 1)^-s grow and cancel (1e-5 relative error at s = -7.5), the derivative
    of the functional equation zeta(s) = chi(s) zeta(1 - s), chi(s) = 2^s pi^(s-1)
    sin(pi s / 2) gamma(1 - s): chi'(s) zeta(1 - s) - chi(s) zeta'(1 - s), with chi' =
    2^s pi^(s-1) gamma(1 - s) ((log(2 pi) - digamma(1 - s)) sin(pi s / 2) + pi/2 cos(pi s / 2))
    (no division, so finite at the trivial zeros).  Each branch sees a harmless point where
    the other is taken."""
    neg = ops.less(s, -0.5)
    direct = _zeta_ds(bind(P.where_p, neg, _c(2, s), s), _c(1, s))
    sn = bind(P.where_p, neg, s, _c(-1, s))
    r = _sub(_c(1, s), sn)                                       # 1 - s > 1
    half = _mul(sn, _c(math.pi / 2, s))
    sin, cos = bind(P.sin_p, half), bind(P.cos_p, half)
    scale = _mul(_exp(_add(_mul(sn, _c(math.log(2 * math.pi), s)), _c(-math.log(math.pi), s))),
                 bind(P.gamma_p, r))                             # 2^s pi^(s-1) gamma(1 - s)
    dchi = _mul(scale, _add(_mul(_sub(_c(math.log(2 * math.pi), s), bind(P.digamma_p, r)), sin),
                            _mul(_c(math.pi / 2, s), cos)))
    reflected = _sub(_mul(dchi, _fam1("riemann_zeta", r)),
                     _mul(_mul(scale, sin), _zeta_ds(r, _c(1, s))))
    return bind(P.where_p, neg, reflected, direct)


def _d_zeta_q(s, q):
    return _neg(_mul(s, _fam2("zeta", _add(s, _c(1, s)), q)))


def _d_poch_m(z, m, ans):
    return _mul(ans, bind(P.digamma_p, _add(z, m)))


def _d_poch_z(z, m, ans):
    return _mul(ans, _sub(bind(P.digamma_p, _add(z, m)), bind(P.digamma_p, z)))


def _d_beta(a, b, ans):
    return _mul(ans, _sub(bind(P.digamma_p, a), bind(P.digamma_p, _add(a, b))))


def _log_ratio(p, q):
    """(p, q > 0, p / q and log(p / q) computed on 1 / 1 where that does not hold)."""
    both = ops.logical_and(ops.greater(p, 0), ops.greater(q, 0))
    one = _c(1, p)
    ratio = _div(bind(P.where_p, both, p, one), bind(P.where_p, both, q, one))
    return both, ratio, bind(P.log_p, ratio)


def _d_entropy(kl, wrt_q):
    """The derivatives of rel_entr (kl_div: + q - p) where p, q > 0; elsewhere the function
    is a constant (0, q or inf), whose derivative JAX's composition gives: 0 (kl_div: -1 in p,
    1 in q)."""
    def d(p, q, ans):
        both, ratio, log = _log_ratio(p, q)
        if wrt_q:
            inner, outer = (_sub(_c(1, p), ratio), 1.0) if kl else (_neg(ratio), 0.0)
        else:
            inner, outer = (log, -1.0) if kl else (_add(log, _c(1, p)), 0.0)
        return bind(P.where_p, both, inner, _c(outer, p))
    return d


_BINARY_FAMILY_D = {   # fn: (derivative in the first operand or None, in the second)
    "jv": (None, lambda v, x, ans: _order_shift("jv", v, x, -1)),
    "yv": (None, lambda v, x, ans: _order_shift("yv", v, x, -1)),
    "yn": (None, lambda v, x, ans: _order_shift("yn", v, x, -1)),
    "iv": (None, lambda v, x, ans: _order_shift("iv", v, x, 1)),
    "ive": (None, lambda v, x, ans: _sub(_order_shift("ive", v, x, 1), _mul(ops.sign(x), ans))),
    "kv": (None, lambda v, x, ans: _neg(_order_shift("kv", v, x, 1))),
    "kve": (None, lambda v, x, ans: _sub(ans, _order_shift("kve", v, x, 1))),
    "expn": (None, _d_expn),
    "zeta": (lambda s, q, ans: _zeta_ds(s, q), lambda s, q, ans: _d_zeta_q(s, q)),
    "poch": (_d_poch_z, _d_poch_m),
    "beta": (_d_beta, lambda a, b, ans: _d_beta(b, a, ans)),
    "rel_entr": (_d_entropy(False, False), _d_entropy(False, True)),
    "kl_div": (_d_entropy(True, False), _d_entropy(True, True)),
}
_ORDER_NAMES = {"jv": "v", "yv": "v", "yn": "n", "iv": "v", "ive": "v", "kv": "v", "kve": "v",
                "expn": "n"}


def _binary_family_rule(i):
    def rule(v, ans, a, x, *, fn):
        d = _BINARY_FAMILY_D[fn][i]
        if d is None:
            _no_order_derivative(fn, _ORDER_NAMES.get(fn, "its first argument"))()
        return _mul(v, d(a, x, ans))
    return rule


defvjp(P.special_binary_p, _binary_family_rule(0), _binary_family_rule(1))
defjvp(P.special_binary_p, _binary_family_rule(0), _binary_family_rule(1))


def _fam3(fn, a, b, x):
    return bind(P.special_ternary_p, a, b, x, fn=fn)


def _d_hyp1f1_x(fn, a, b, x):
    """d/dx of hyp1f1 (a / b F(a + 1, b + 1, x)) and of its partials in a and b, the
    derivatives of that formula: F(a+1, b+1, x) / b + a / b F_a(a+1, b+1, x) and
    -a / b^2 F(a+1, b+1, x) + a / b F_b(a+1, b+1, x)."""
    a1, b1 = _add(a, _c(1, a)), _add(b, _c(1, b))
    ratio = _div(a, b)
    up = _fam3("hyp1f1", a1, b1, x)
    if fn == "hyp1f1":
        return _mul(ratio, up)
    if fn == "hyp1f1_da":
        return _add(_div(up, b), _mul(ratio, _fam3("hyp1f1_da", a1, b1, x)))
    return _sub(_mul(ratio, _fam3("hyp1f1_db", a1, b1, x)), _div(_mul(ratio, up), b))


def _ternary_family_rule(i):
    """hyp1f1 in a and b: its partials (the series, nx_rune.backend.special), first order
    only; in x, any order."""
    def rule(v, ans, a, b, x, *, fn):
        if i == 2:
            return _mul(v, _d_hyp1f1_x(fn, a, b, x))
        if fn != "hyp1f1":
            raise NotImplementedError(
                "the second derivative of hyp1f1 in a and b is not implemented (first "
                "derivatives in a and b, any order in x)")
        return _mul(v, _fam3("hyp1f1_da" if i == 0 else "hyp1f1_db", a, b, x))
    return rule


defvjp(P.special_ternary_p, *[_ternary_family_rule(i) for i in range(3)])
defjvp(P.special_ternary_p, *[_ternary_family_rule(i) for i in range(3)])


# -- batching ---------------------------------------------------------------------------------

for _p in (P.lgamma_p, P.digamma_p, P.polygamma_p, P.gamma_p, P.betaln_p, P.erf_p, P.erfc_p,
           P.erfinv_p, P.ndtr_p, P.ndtri_p, P.log_ndtr_p, P.expit_p, P.logit_p, P.xlogy_p,
           P.xlog1py_p, P.i0_p, P.i0e_p, P.i1_p, P.i1e_p):
    defbroadcast(_p)

for _p in (P.gammainc_p, P.gammaincc_p, P.gammainc_da_p, P.betainc_p, P.betainc_da_p,
           P.betainc_db_p):
    defbroadcast(_p)

for _p in (P.special_unary_p, P.special_binary_p, P.special_ternary_p):
    defbroadcast(_p)
