"""``nx.scipy.special``: special functions with SciPy's values and JAX's signatures,
differentiable to any order.

Where NumPy has no loop, each function is one primitive computed by ``scipy.special``'s loop
(gammaln, digamma, polygamma, gamma, betaln, erf, erfc, erfinv, ndtr, ndtri, log_ndtr, expit,
logit, xlogy, xlog1py, i0, i0e, i1, i1e), with its derivative from the known formula
(``nx_rune.autodiff.rules``): gammaln' = digamma, digamma' = polygamma(1, .), polygamma(n, .)'
= polygamma(n + 1, .), erf' = 2/sqrt(pi) exp(-x**2), erfinv' = sqrt(pi)/2 exp(erfinv(x)**2),
i0' = i1, ...  The Bessel functions of every kind and order (j0, j1, jn/jv, y0, y1, yn, yv,
iv, ive, kv, kve), zeta, spence, exp1, expi, expn, beta, poch, rgamma, gammasgn, erfcinv,
hyp1f1, kl_div and rel_entr are one primitive per arity (special_unary / special_binary /
special_ternary) running the scipy.special loop named by a static parameter, their derivatives
from each family's recurrences.  The others (logsumexp, multigammaln, entr, softmax,
log_softmax, factorial, psi, bernoulli) are compositions.

Dtypes: real input only (TypeError naming the argument for complex; erf and erfc take complex
input too, as SciPy's); float32 stays float32
and float64 float64 (float16 is computed in float32 and rounded back); ints and bools become
float32 (64-bit ints float64); Python scalars are weakly typed.  Binary functions broadcast.
Values at poles and outside the domain are SciPy's (inf or nan: gammaln(0) = inf,
digamma(0) = -inf, erfinv(1) = inf, logit(2) = nan, ...).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from nx_rune import frontend as F
from nx_rune import primitives as P
from nx_rune.autodiff import stop_gradient as _stop_gradient
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.frontend._core import operand as _operand
from nx_rune.frontend._core import reduction_axes as _reduction_axes
from nx_rune.primitives import bind as _bind
from nx_rune.scipy._args import real_operand as _real
from nx_rune.scipy._args import real_operands as _reals
from nx_rune.typing import Array, ArrayLike, Axis

__all__ = ["gammaln", "digamma", "polygamma", "gamma", "betaln", "multigammaln", "erf", "erfc",
           "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit", "xlogy", "xlog1py", "entr",
           "logsumexp", "softmax", "log_softmax", "i0", "i0e", "i1", "i1e",
           "gammainc", "gammaincc", "betainc",
           "beta", "psi", "gammasgn", "rgamma", "erfcinv", "factorial", "poch", "j0", "j1", "jn",
           "jv", "y0", "y1", "yn", "yv", "iv", "ive", "kv", "kve", "spence", "zeta", "exp1",
           "expi", "expn", "hyp1f1", "kl_div", "rel_entr", "bernoulli"]


def _unary(prim, x, name, arg="x"):
    return _bind(prim, _real(x, arg, name))


def _binary(prim, name, **args):
    return _bind(prim, *_reals(name, **args))


def gammaln(x: ArrayLike) -> Array:
    """log|Gamma(x)|: same shape, float dtype.  inf at the poles (0, -1, -2, ...).
    Derivative: digamma(x)."""
    return _unary(P.lgamma_p, x, "gammaln")


def digamma(x: ArrayLike) -> Array:
    """The digamma function psi(x) = Gamma'(x) / Gamma(x): same shape, float dtype.  SciPy's
    values at the poles (-inf at 0, +inf at -0.0, nan at -1, -2, ...).  Derivative:
    polygamma(1, x)."""
    return _unary(P.digamma_p, x, "digamma")


def polygamma(n: ArrayLike, x: ArrayLike) -> Array:
    """The n-th derivative of digamma at x (polygamma(0, x) = digamma(x)).

    n: non-negative integers (an int, an integer tensor, or float values that are integers;
    ValueError otherwise), broadcast with x.  The result has x's float dtype (ints: float32);
    n is only an order.  Differentiable in x (the derivative is polygamma(n + 1, x)), to any
    order; not in n.
    """
    xv = _real(x, "x", "polygamma")
    nv = _real(n, "n", "polygamma")
    concrete = nv._concrete_tensor()
    if concrete is not None:
        vals = np.asarray(concrete)
        if not (np.all(vals >= 0) and np.all(np.floor(vals) == vals)):
            raise ValueError(f"n: polygamma's order must be non-negative integers, got "
                             f"{np.unique(vals)[:5]}")
    nv, xv = F.broadcast_arrays(F.astype(nv, xv.dtype), xv)
    return _bind(P.polygamma_p, nv, xv)


def gamma(x: ArrayLike) -> Array:
    """The gamma function: same shape, float dtype (inf at 0 with 0's sign, nan at the negative
    integers, inf on overflow).  Derivative: gamma(x) * digamma(x)."""
    return _unary(P.gamma_p, x, "gamma")


def betaln(a: ArrayLike, b: ArrayLike) -> Array:
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b), computed by SciPy without the
    cancellation for large arguments.  Broadcast shape, promoted float dtype.  Derivatives:
    digamma(a) - digamma(a + b) and digamma(b) - digamma(a + b)."""
    return _binary(P.betaln_p, "betaln", a=a, b=b)


def multigammaln(a: ArrayLike, d: int) -> Array:
    """The log of the multivariate gamma function of dimension d:
    d (d - 1) / 4 log(pi) + sum_{j=1..d} gammaln(a - (j - 1) / 2).

    a: any shape, float dtype; d: a positive int.  As SciPy, every a must exceed (d - 1) / 2
    (ValueError naming a otherwise, checked on concrete values).  Same shape as a.
    """
    if isinstance(d, (bool, np.bool_)):
        raise TypeError(f"d: expected a positive int, got {d!r}")
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"d: expected a positive int, got {d!r}") from None
    if d < 1:
        raise ValueError(f"d: expected a positive int, got {d}")
    a = _real(a, "a", "multigammaln")
    concrete = a._concrete_tensor()
    if concrete is not None and not np.all(np.asarray(concrete) > 0.5 * (d - 1)):
        raise ValueError(f"a: multigammaln of dimension d={d} needs a > {0.5 * (d - 1)} "
                         f"everywhere (SciPy's domain)")
    out = F.multiply(F.ones_like(a), d * (d - 1) / 4 * math.log(math.pi))
    for j in range(d):
        out = F.add(out, gammaln(F.subtract(a, j / 2)))
    return out


def erf(x: ArrayLike) -> Array:
    """The error function 2/sqrt(pi) int_0^x exp(-t**2) dt: same shape, float dtype; complex
    x gives SciPy's complex erf (entire, so its derivative is the complex derivative
    2/sqrt(pi) exp(-x**2))."""
    return _bind(P.erf_p, _inexact(x))


def erfc(x: ArrayLike) -> Array:
    """1 - erf(x), accurate where erf(x) is close to 1: same shape, float dtype (complex for
    complex x, as ``erf``)."""
    return _bind(P.erfc_p, _inexact(x))


def _inexact(x):
    # real or complex input: ints and bools as float (as the real-only functions)
    return F.asarray(x) if isinstance(x, complex) else _as_inexact(_operand(x))


def erfinv(x: ArrayLike) -> Array:
    """The inverse of erf on [-1, 1] (+-inf at +-1, nan outside): same shape, float dtype.
    Derivative: sqrt(pi)/2 exp(erfinv(x)**2)."""
    return _unary(P.erfinv_p, x, "erfinv")


def ndtr(x: ArrayLike) -> Array:
    """The standard normal CDF: same shape, float dtype."""
    return _unary(P.ndtr_p, x, "ndtr")


def ndtri(p: ArrayLike) -> Array:
    """The inverse of ndtr on [0, 1] (-inf at 0, inf at 1, nan outside): same shape, float
    dtype.  Derivative: sqrt(2 pi) exp(ndtri(p)**2 / 2)."""
    return _unary(P.ndtri_p, p, "ndtri", "p")


def log_ndtr(x: ArrayLike) -> Array:
    """log(ndtr(x)), accurate for very negative x (no underflow): same shape, float dtype.
    Derivative: exp(-x**2/2 - log(sqrt(2 pi)) - log_ndtr(x)), which does not underflow."""
    return _unary(P.log_ndtr_p, x, "log_ndtr")


def expit(x: ArrayLike) -> Array:
    """The logistic sigmoid 1 / (1 + exp(-x)): same shape, float dtype.  Derivative:
    expit(x) (1 - expit(x))."""
    return _unary(P.expit_p, x, "expit")


def logit(x: ArrayLike) -> Array:
    """log(x / (1 - x)), the inverse of expit (-inf at 0, inf at 1, nan outside [0, 1]): same
    shape, float dtype."""
    return _unary(P.logit_p, x, "logit")


def xlogy(x: ArrayLike, y: ArrayLike) -> Array:
    """x * log(y), 0 where x == 0 (unless y is nan): broadcast shape, promoted float dtype.
    Derivatives: log(y) in x; x / y in y (0 at x == y == 0)."""
    return _binary(P.xlogy_p, "xlogy", x=x, y=y)


def xlog1py(x: ArrayLike, y: ArrayLike) -> Array:
    """x * log1p(y), 0 where x == 0 (unless y is nan): broadcast shape, promoted float dtype.
    Derivatives: log1p(y) in x; x / (1 + y) in y (0 at x == 0, y == -1)."""
    return _binary(P.xlog1py_p, "xlog1py", x=x, y=y)


def entr(x: ArrayLike) -> Array:
    """The elementwise entropy -x log(x) for x > 0, 0 at 0, -inf for x < 0: same shape, float
    dtype.  Derivative -(log(x) + 1) (+inf at 0, as JAX's)."""
    x = _real(x, "x", "entr")
    neg_inf = F.full_like(x, -np.inf)
    return F.where(F.less(x, 0), neg_inf, F.negative(xlogy(x, x)))


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind, order 0: same shape, float dtype.
    Derivative: i1(x)."""
    return _unary(P.i0_p, x, "i0")


def i0e(x: ArrayLike) -> Array:
    """exp(-|x|) i0(x): same shape, float dtype.  Derivative: i1e(x) - sign(x) i0e(x)."""
    return _unary(P.i0e_p, x, "i0e")


def i1(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind, order 1: same shape, float dtype.
    Derivative: i0(x) - i1(x) / x (1/2 at 0)."""
    return _unary(P.i1_p, x, "i1")


def i1e(x: ArrayLike) -> Array:
    """exp(-|x|) i1(x): same shape, float dtype.  Derivative: i0e(x) - i1e(x) (sign(x) + 1/x)
    (1/2 at 0)."""
    return _unary(P.i1e_p, x, "i1e")


def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False) -> Array | tuple[Array, Array]:
    """log(sum(b * exp(a))) over ``axis`` (None: all axes), without overflow (the maximum is
    factored out, as a constant for the derivative).

    a: any shape, real; b: weights broadcastable with a (default 1).  As SciPy and JAX, terms
    whose weight is 0 are dropped (so their derivative in b is 0 too).  Returns a's broadcast
    shape without the reduced axes (kept as 1 with keepdims), float dtype.  With
    ``return_sign``: (log|sum|, sign(sum)) (sign 0 and -inf for a zero sum); otherwise a
    negative sum gives nan.  An empty reduction gives -inf.
    """
    if b is None:
        a = _real(a, "a", "logsumexp")
    else:
        a, b = _reals("logsumexp", a=a, b=b)
        a = F.where(F.equal(b, 0), F.full_like(a, -np.inf), a)
    axes = _reduction_axes(a, axis)
    if any(a.shape[i] == 0 for i in axes):
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape) if keepdims or
                      i not in axes)
        lse = F.full(shape, -np.inf, a.dtype)
        return (lse, F.zeros(shape, a.dtype)) if return_sign else lse
    m = _stop_gradient(F.max(a, axes, keepdims=True))
    m = F.where(F.isfinite(m), m, F.zeros_like(m))
    e = F.exp(F.subtract(a, m))
    if b is not None:
        e = F.multiply(e, b)
    s = F.sum(e, axes, keepdims=True)
    if return_sign:
        sign = F.sign(s)
        s = F.abs(s)
    out = F.add(F.log(s), m)
    if not keepdims:
        out = F.squeeze(out, axes)
    if return_sign:
        return out, (sign if keepdims else F.squeeze(sign, axes))
    return out


def softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """exp(x) / sum(exp(x)) over ``axis`` (SciPy's default None: all axes), without
    overflow: same shape, float dtype."""
    return F.softmax(_real(x, "x", "softmax"), axis)


def log_softmax(x: ArrayLike, axis: Axis = None) -> Array:
    """x - logsumexp(x) over ``axis`` (default None: all axes): same shape, float dtype."""
    return F.log_softmax(_real(x, "x", "log_softmax"), axis)


# -- the regularized incomplete gamma and beta functions ----------------------------------------

def gammainc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized lower incomplete gamma function P(a, x) = int_0^x t^(a-1) e^-t dt /
    Gamma(a) (the gamma distribution's cdf), SciPy's values: a > 0, x >= 0 (nan outside).
    Broadcast shape, promoted float dtype.  Derivatives: x^(a-1) e^-x / Gamma(a) in x (any
    order); in a, the forward-mode derivative of the series / continued fraction that computes
    P (``nx_rune._kernels.incomplete``, ~1e-12 relative in float64; first order only: a second
    derivative in a raises NotImplementedError)."""
    return _binary(P.gammainc_p, "gammainc", a=a, x=x)


def gammaincc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), computed without
    the cancellation (SciPy's values): a > 0, x >= 0.  Broadcast shape, promoted float dtype.
    Derivatives: those of ``gammainc``, negated."""
    return _binary(P.gammaincc_p, "gammaincc", a=a, x=x)


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The regularized incomplete beta function I_x(a, b) = int_0^x t^(a-1) (1-t)^(b-1) dt /
    B(a, b) (the beta distribution's cdf), SciPy's values: a > 0, b > 0, 0 <= x <= 1 (nan
    outside).  Broadcast shape, promoted float dtype.  Derivatives: x^(a-1) (1-x)^(b-1) /
    B(a, b) in x (any order); in a and b, forward-mode derivatives of the continued fraction
    (``nx_rune._kernels.incomplete``, ~1e-12 relative in float64; first order only: a second
    derivative in a or b raises NotImplementedError)."""
    return _binary(P.betainc_p, "betainc", a=a, b=b, x=x)


# -- functions by SciPy's name: the families special_unary / special_binary / special_ternary --
# One primitive per arity computes each of these by scipy.special's loop named by a static
# parameter; their derivatives in x are the recurrences of each family (see
# ``nx_rune.autodiff.rules.special``), so any order is available.  Orders (v, n) are not
# differentiable (NotImplementedError); hyp1f1's a and b to first order.

def _family1(fn, x, name, arg="x"):
    return _bind(P.special_unary_p, _real(x, arg, name), fn=fn)


def _family2(fn, name, **args):
    a, x = _reals(name, **args)
    return _bind(P.special_binary_p, a, x, fn=fn)


def _integer_order(name, arg, **args):
    """The operands of an integer-order function (``arg`` its order: integer values, checked on
    concrete values; nan allowed, giving nan as SciPy's), promoted and broadcast."""
    a, x = _reals(name, **args)
    concrete = a._concrete_tensor()
    if concrete is not None:
        vals = np.asarray(concrete)
        with np.errstate(invalid="ignore"):
            bad = ~(np.isnan(vals) | (np.floor(vals) == vals))
        if bad.any():
            raise ValueError(f"{arg}: {name}'s order must be integers, got {vals[bad][:5]}")
    return a, x


def beta(a: ArrayLike, b: ArrayLike) -> Array:
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), SciPy's values (no
    overflow where the gammas overflow; inf at the poles).  Broadcast shape, promoted float
    dtype.  Derivatives: B(a, b) (digamma(a) - digamma(a + b)) in a, symmetric in b."""
    return _family2("beta", "beta", a=a, b=b)


def psi(x: ArrayLike) -> Array:
    """SciPy's name for ``digamma``: the same function, values and derivatives."""
    return _unary(P.digamma_p, x, "psi")


def gammasgn(x: ArrayLike) -> Array:
    """The sign of the gamma function: +-1 (nan at the poles -1, -2, ... and for nan;
    gammasgn(+-0.0) = +-1, as SciPy's).  Same shape, float dtype.  Derivative 0."""
    return _family1("gammasgn", x, "gammasgn")


def rgamma(x: ArrayLike) -> Array:
    """1 / gamma(x), SciPy's values (0 at the poles 0, -1, -2, ..., no overflow of gamma for
    large x).  Same shape, float dtype.  Derivative -rgamma(x) digamma(x), with its limit
    (-1)^n n! at x = -n."""
    return _family1("rgamma", x, "rgamma")


def erfcinv(y: ArrayLike) -> Array:
    """The inverse of erfc on [0, 2] (inf at 0, -inf at 2, nan outside), SciPy's values.
    Same shape, float dtype.  Derivative -sqrt(pi)/2 exp(erfcinv(y)**2)."""
    return _family1("erfcinv", y, "erfcinv", "y")


def factorial(n: ArrayLike, exact: bool = False) -> Array:
    """n! = gamma(n + 1) for n >= 0 (any real n, as SciPy's ``exact=False``), 0 for n < 0, nan
    for nan.  Same shape, float dtype.  Derivative gamma(n + 1) digamma(n + 1) (0 for n < 0).
    ``exact=True`` (Python integers) is not supported: NotImplementedError, as JAX's."""
    if exact:
        raise NotImplementedError("exact: factorial supports exact=False only (as JAX's)")
    n = _real(n, "n", "factorial")
    neg = F.less(n, 0)
    safe = F.where(neg, F.zeros_like(n), n)
    return F.where(neg, F.zeros_like(n), gamma(F.add(safe, 1)))


def poch(z: ArrayLike, m: ArrayLike) -> Array:
    """The Pochhammer symbol (rising factorial) (z)_m = gamma(z + m) / gamma(z), SciPy's
    values.  Broadcast shape, promoted float dtype.  Derivatives: (z)_m (digamma(z + m) -
    digamma(z)) in z, (z)_m digamma(z + m) in m."""
    return _family2("poch", "poch", z=z, m=m)


def j0(x: ArrayLike) -> Array:
    """The Bessel function of the first kind of order 0: same shape, float dtype.
    Derivative: -j1(x)."""
    return _family1("j0", x, "j0")


def j1(x: ArrayLike) -> Array:
    """The Bessel function of the first kind of order 1: same shape, float dtype.
    Derivative: (j0(x) - jv(2, x)) / 2."""
    return _family1("j1", x, "j1")


def jv(v: ArrayLike, x: ArrayLike) -> Array:
    """The Bessel function of the first kind of real order v (nan for x < 0 and non-integer
    v, as SciPy's): broadcast shape, promoted float dtype.  Derivative in x: (jv(v - 1, x) -
    jv(v + 1, x)) / 2, any order; not in v (NotImplementedError)."""
    return _family2("jv", "jv", v=v, x=x)


def jn(n: ArrayLike, x: ArrayLike) -> Array:
    """SciPy's ``jn``: the Bessel function of the first kind of order n, which SciPy computes
    for real n as ``jv``; the same values and derivatives as ``jv``."""
    return _family2("jv", "jn", n=n, x=x)


def y0(x: ArrayLike) -> Array:
    """The Bessel function of the second kind of order 0 (-inf at 0, nan for x < 0): same
    shape, float dtype.  Derivative: -y1(x)."""
    return _family1("y0", x, "y0")


def y1(x: ArrayLike) -> Array:
    """The Bessel function of the second kind of order 1 (-inf at 0, nan for x < 0): same
    shape, float dtype.  Derivative: (y0(x) - yn(2, x)) / 2."""
    return _family1("y1", x, "y1")


def yn(n: ArrayLike, x: ArrayLike) -> Array:
    """The Bessel function of the second kind of integer order n (ValueError naming n for
    concrete non-integer values): broadcast shape, promoted float dtype.  Derivative in x:
    (yn(n - 1, x) - yn(n + 1, x)) / 2, any order; not in n (NotImplementedError)."""
    n, x = _integer_order("yn", "n", n=n, x=x)
    return _bind(P.special_binary_p, n, x, fn="yn")


def yv(v: ArrayLike, x: ArrayLike) -> Array:
    """The Bessel function of the second kind of real order v: broadcast shape, promoted
    float dtype.  Derivative in x: (yv(v - 1, x) - yv(v + 1, x)) / 2; not in v."""
    return _family2("yv", "yv", v=v, x=x)


def iv(v: ArrayLike, x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of real order v: broadcast shape,
    promoted float dtype.  Derivative in x: (iv(v - 1, x) + iv(v + 1, x)) / 2, any order; not
    in v (NotImplementedError)."""
    return _family2("iv", "iv", v=v, x=x)


def ive(v: ArrayLike, x: ArrayLike) -> Array:
    """exp(-|x|) iv(v, x), finite where iv overflows: broadcast shape, promoted float dtype.
    Derivative in x: (ive(v - 1, x) + ive(v + 1, x)) / 2 - sign(x) ive(v, x); not in v."""
    return _family2("ive", "ive", v=v, x=x)


def kv(v: ArrayLike, x: ArrayLike) -> Array:
    """The modified Bessel function of the second kind of real order v (inf at 0, nan for
    x < 0): broadcast shape, promoted float dtype.  Derivative in x: -(kv(v - 1, x) +
    kv(v + 1, x)) / 2, any order; not in v (NotImplementedError)."""
    return _family2("kv", "kv", v=v, x=x)


def kve(v: ArrayLike, x: ArrayLike) -> Array:
    """exp(x) kv(v, x), finite where kv underflows: broadcast shape, promoted float dtype.
    Derivative in x: kve(v, x) - (kve(v - 1, x) + kve(v + 1, x)) / 2; not in v."""
    return _family2("kve", "kve", v=v, x=x)


def spence(x: ArrayLike) -> Array:
    """Spence's function (dilogarithm) int_1^x log(t) / (1 - t) dt for x >= 0 (nan for x < 0),
    SciPy's values.  Same shape, float dtype.  Derivative -log(x) / (x - 1), through its limit
    -1 at x = 1 (a Taylor polynomial near 1, so every order is smooth there)."""
    return _family1("spence", x, "spence")


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Array:
    """The Hurwitz zeta function sum_k (k + q)^-x, or Riemann's (q None: SciPy's values for
    every x, by its functional equation below 1).  Broadcast shape, promoted float dtype.
    Derivatives: -x zeta(x + 1, q) in q; in x, the derivative of the Euler-Maclaurin sum
    (-sum_k log(k + q) (k + q)^-x, about 1e-15 relative for q > 0), as JAX's."""
    if q is None:
        return _family1("riemann_zeta", x, "zeta")
    return _family2("zeta", "zeta", x=x, q=q)


def exp1(x: ArrayLike) -> Array:
    """The exponential integral E1(x) = int_x^inf exp(-t) / t dt (inf at 0, nan for x < 0),
    SciPy's values.  Same shape, float dtype.  Derivative: -exp(-x) / x."""
    return _family1("exp1", x, "exp1")


def expi(x: ArrayLike) -> Array:
    """The exponential integral ``Ei(x) = -PV int_{-x}^inf exp(-t) / t dt`` (-inf at 0),
    SciPy's values.  Same shape, float dtype.  Derivative: exp(x) / x."""
    return _family1("expi", x, "expi")


def expn(n: ArrayLike, x: ArrayLike) -> Array:
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt for integer
    n >= 0 (ValueError naming n for concrete non-integer values; nan for n < 0, as SciPy's).
    Broadcast shape, promoted float dtype.  Derivative in x: -expn(n - 1, x) (for n = 0:
    -exp(-x) (1/x + 1/x^2)), any order; not in n (NotImplementedError)."""
    n, x = _integer_order("expn", "n", n=n, x=x)
    return _bind(P.special_binary_p, n, x, fn="expn")


def hyp1f1(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """Kummer's confluent hypergeometric function 1F1(a; b; x), SciPy's values (where SciPy's
    loop would not return, x = +inf and x past about 1e12, the overflow to +-inf that its
    asymptotic form gives).  Broadcast shape, promoted float dtype.  Derivatives: in x, a / b
    hyp1f1(a + 1, b + 1, x), any order; in a and b, the series of the partials (summed in
    float64 to 1e-17 of the sum, through Kummer's transformation for x < 0), first order only
    (a second derivative in a or b raises NotImplementedError)."""
    a, b, x = _reals("hyp1f1", a=a, b=b, x=x)
    return _bind(P.special_ternary_p, a, b, x, fn="hyp1f1")


def rel_entr(p: ArrayLike, q: ArrayLike) -> Array:
    """The elementwise relative entropy p log(p / q) for p, q > 0, 0 for p == 0 <= q, inf
    otherwise (nan for nan), SciPy's values.  Broadcast shape, promoted float dtype.
    Derivatives: log(p / q) + 1 in p, -p / q in q (0 where p, q > 0 does not hold, as JAX's)."""
    return _family2("rel_entr", "rel_entr", p=p, q=q)


def kl_div(p: ArrayLike, q: ArrayLike) -> Array:
    """The elementwise Kullback-Leibler term p log(p / q) - p + q for p, q > 0, q for
    p == 0 <= q, inf otherwise (nan for nan), SciPy's values.  Broadcast shape, promoted float
    dtype.  Derivatives: log(p / q) in p, 1 - p / q in q (-1 and 1 where p, q > 0 does not
    hold, as JAX's)."""
    return _family2("kl_div", "kl_div", p=p, q=q)


def bernoulli(n: int) -> Array:
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2, as SciPy's and JAX's): shape (n + 1,),
    float32 (float64 where 64-bit floats are the default).  n: a non-negative int."""
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"n: expected a non-negative int, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n: expected a non-negative int, got {n!r}") from None
    if n < 0:
        raise ValueError(f"n: expected a non-negative int, got {n}")
    import scipy.special
    return F.asarray(scipy.special.bernoulli(n), dtype=F.asarray(0.0).dtype)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
