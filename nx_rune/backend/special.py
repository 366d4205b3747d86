"""Special functions: scipy.special's loops in the operand's dtype (gamma and error functions,
Bessel functions, the logistic functions, the regularized incomplete gamma and beta functions)
and the derivatives of the incomplete functions in their shape parameters
(``nx_rune._kernels.incomplete``).

scipy.special's loops (unary: x; binary: a and b, ternary: a, b and x of one shape and dtype)
run in the operand's dtype (a loop that only exists in float64 is cast back).  polygamma(n, x)
takes n as a float tensor of integer values (x's dtype).  gammainc_da(a, x) = dP/da,
betainc_da(a, b, x) and betainc_db(a, b, x) = dI/da, dI/db: forward-mode derivatives of the
series / continued fractions, in float64, cast back to the operands' dtype.  The families
special_unary / special_binary / special_ternary run the loop named by their parameter ``fn``
(Bessel functions, zeta, spence, exponential integrals, beta, poch, hyp1f1 and its partials in
a and b, ...), in the last operand's dtype.  SciPy is imported on first use: its import costs
about half a second.

May import: NumPy, SciPy (on first use), ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
from collections.abc import Callable

import numpy as np

from nx_rune.backend._core import IMPLS, _impl, _out

_SCIPY_SPECIAL = []


def _special():
    """scipy.special, imported on first use."""
    if not _SCIPY_SPECIAL:
        import scipy.special
        _SCIPY_SPECIAL.append(scipy.special)
    return _SCIPY_SPECIAL[0]


def _in_dtype(out, dtype):
    """``out`` as an ndarray of ``dtype`` (cast back when SciPy's loop ran in another)."""
    out = np.asarray(out)
    return out if out.dtype == dtype else out.astype(dtype)


def _special_unary(name, fname):
    def impl(x):
        a = x._np()
        return _out(_in_dtype(getattr(_special(), fname)(a), a.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


def _special_binary(name, fname):
    def impl(a, b):
        an = a._np()
        return _out(_in_dtype(getattr(_special(), fname)(an, b._np()), an.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


def _special_ternary(name, fname):
    def impl(a, b, x):
        an = a._np()
        return _out(_in_dtype(getattr(_special(), fname)(an, b._np(), x._np()), an.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


# -- scipy.special's loops -----------------------------------------------------------------------

for _name, _fname in [("lgamma", "gammaln"), ("digamma", "psi"), ("gamma", "gamma"),
                      ("erf", "erf"), ("erfc", "erfc"), ("erfinv", "erfinv"), ("ndtr", "ndtr"),
                      ("ndtri", "ndtri"), ("log_ndtr", "log_ndtr"), ("expit", "expit"),
                      ("logit", "logit"), ("i0", "i0"), ("i0e", "i0e"), ("i1", "i1"),
                      ("i1e", "i1e")]:
    _special_unary(_name, _fname)

for _name, _fname in [("polygamma", "polygamma"), ("betaln", "betaln"), ("xlogy", "xlogy"),
                      ("xlog1py", "xlog1py")]:
    _special_binary(_name, _fname)

# the regularized incomplete gamma and beta functions
_special_binary("gammainc", "gammainc")
_special_binary("gammaincc", "gammaincc")
_special_ternary("betainc", "betainc")


# -- derivatives of the incomplete functions in their shape parameters --------------------------

@_impl("gammainc_da")
def _gammainc_da(a, x):
    from nx_rune._kernels.incomplete import gammainc_da
    an = a._np()
    return _out(_in_dtype(gammainc_da(an, x._np()), an.dtype))


def _betainc_part(which):
    def impl(a, b, x):
        from nx_rune._kernels.incomplete import betainc_dab
        an = a._np()
        return _out(_in_dtype(betainc_dab(an, b._np(), x._np())[which], an.dtype))
    return impl


IMPLS["betainc_da"], IMPLS["betainc_db"] = _betainc_part(0), _betainc_part(1)


# -- the families of functions of one, two or three operands, by SciPy's name ----------------
# special_unary(x, fn), special_binary(a, x, fn), special_ternary(a, b, x, fn): scipy.special's
# loop named by the static parameter ``fn`` (one primitive per arity for the whole family, so
# that each new function is a row of these tables and of the rules' tables, not eight new
# places).  The integer-order loops (yn, expn) take their order as a float of integer value:
# SciPy's float loop truncates it with a warning, which the front end has already checked.

def _riemann_zeta(x):
    return _special().zeta(x)


def _integer_order(fname):
    def loop(n, x):
        if n.size and not any(n.strides):
            n = n.reshape(-1)[0]     # one order broadcast (a stride-0 view): SciPy broadcasts it
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(n)
            order = np.where(ok, n, 0).astype(np.int64)
        out = getattr(_special(), fname)(order, x)
        out = np.asarray(out, dtype=np.result_type(x, np.float32))
        return out if ok.all() else np.where(ok, out, np.nan)
    return loop


# fn: its loop (None: scipy.special's function of that name)
UNARY_FAMILY: dict[str, Callable | None] = {
    name: None for name in ("gammasgn", "rgamma", "j0", "j1", "y0", "y1", "spence", "exp1",
                            "expi", "erfcinv")}
UNARY_FAMILY["riemann_zeta"] = _riemann_zeta
BINARY_FAMILY: dict[str, Callable | None] = {
    name: None for name in ("beta", "jv", "yv", "iv", "ive", "kv", "kve", "zeta", "poch",
                            "kl_div", "rel_entr")}
BINARY_FAMILY["yn"] = _integer_order("yn")
BINARY_FAMILY["expn"] = _integer_order("expn")


def _hyp1f1(a, b, x):
    """scipy.special.hyp1f1, except where SciPy's loop does not return (x = +inf, and x from
    about 1e12 on: its asymptotic series never stops) and the value is known to overflow:
    1F1(a; b; x) ~ Gamma(b) / Gamma(a) e^x x^(a - b) for large x, +-inf once its log passes
    710 (a = 0, -1, -2, ...: a polynomial of degree -a, which SciPy sums at once for finite x;
    at x = +inf, +-inf with its leading coefficient's sign, 1 for a = 0).  (SciPy's own loop
    answers +inf there even where the sign is negative: 1F1(0.5; -2.5; 800) = -7.4e355.)"""
    sc = _special()
    with np.errstate(all="ignore"):
        if not (x > 50).any():      # (nan compares False) SciPy's loop returns for all of them
            return sc.hyp1f1(a, b, x)
        a, b, x = (np.asarray(v, dtype=np.float64) for v in (a, b, x))
        poly = (a <= 0) & (np.floor(a) == a)
        log_mag = x + (a - b) * np.log(np.maximum(x, 1.0)) + sc.gammaln(b) - sc.gammaln(a)
        huge = (x > 50 + 4 * (np.abs(a) + np.abs(b))) & ~poly & (log_mag > 710)
        huge |= (x == np.inf) & ~poly
        poly_inf = (x == np.inf) & poly
        direct = ~(huge | poly_inf)
        if direct.all():
            return sc.hyp1f1(a, b, x)
        out = np.full(x.shape, np.nan)
        out[direct] = sc.hyp1f1(a[direct], b[direct], x[direct])
        out[huge] = np.inf * sc.gammasgn(a[huge]) * sc.gammasgn(b[huge])
        # the leading coefficient of the polynomial: (a)_n / ((b)_n n!), n = -a
        n = -a[poly_inf]
        lead = np.sign(sc.poch(a[poly_inf], n)) * np.sign(sc.poch(b[poly_inf], n))
        out[poly_inf] = np.where(n == 0, 1.0, np.inf * lead)
    return out


_SERIES_TERMS = 20000


def _kummer_series_partials(a, b, x):
    """(dF/da, dF/db) of F = 1F1(a; b; x) for x >= 0 by its series sum_k t_k, t_k = (a)_k /
    (b)_k x^k / k!: dF/da = sum_k t_k sum_{i<k} 1/(a+i), dF/db = -sum_k t_k sum_{i<k}
    1/(b+i), carried as u_k, w_k (the products, so that a = 0, -1, ... divides by nothing).
    Each element stops once its terms fall below 1e-17 of its sums for good (the work shrinks
    to the elements still summing); nan where that has not happened after 20000 terms (x
    beyond about 1e4), inf where the sum overflows."""
    shape = x.shape
    a, b, x = a.ravel(), b.ravel(), x.ravel()
    da_out, db_out = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    idx = np.arange(x.size)
    t = np.ones_like(x)
    f, u, w = t.copy(), np.zeros_like(x), np.zeros_like(x)
    da, db = u.copy(), w.copy()
    for k in range(_SERIES_TERMS):
        if idx.size == 0:
            break
        ak, bk = a + k, b + k
        step = x / ((k + 1) * bk)
        u = step * (ak * u + t)
        w = step * ak * (w + t / bk)
        t = step * ak * t
        f, da, db = f + t, da + u, db - w
        small = ((np.abs(t) <= 1e-17 * np.abs(f)) & (np.abs(u) <= 1e-17 * np.abs(da))
                 & (np.abs(w) <= 1e-17 * np.abs(db)))
        # the terms decrease for good once k + 1 > |x (a + k) / (b + k)|
        done = (small & (k + 1 > np.abs(x * ak / bk))) | ~np.isfinite(f)
        if done.any():
            da_out[idx[done]], db_out[idx[done]] = da[done], db[done]
            keep = ~done
            idx, a, b, x, t, f, u, w, da, db = (v[keep] for v in (idx, a, b, x, t, f, u, w,
                                                                   da, db))
    return da_out.reshape(shape), db_out.reshape(shape)


def _hyp1f1_partials(a, b, x):
    """dF/da, dF/db of 1F1(a; b; x): the series for x >= 0; for x < 0 (alternating terms
    that cancel) through Kummer's transformation F(a; b; x) = e^x F(b - a; b; -x), whose
    series has positive terms there: dF/da = -e^x G_1, dF/db = e^x (G_1 + G_2), G_1, G_2 the
    partials of F(b - a; b; -x)."""
    with np.errstate(all="ignore"):
        a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
        neg = x < 0
        c = np.where(neg, b - a, a)
        y = np.abs(x)
        g1, g2 = _kummer_series_partials(c, b, y)
        ex = np.exp(np.where(neg, x, 0.0))
        da = np.where(neg, -ex * g1, g1)
        db = np.where(neg, ex * (g1 + g2), g2)
        bad = np.isnan(a) | np.isnan(b) | np.isnan(x)
        return np.where(bad, np.nan, da), np.where(bad, np.nan, db)


TERNARY_FAMILY: dict[str, Callable | None] = {
    "hyp1f1": _hyp1f1,
    "hyp1f1_da": lambda a, b, x: _hyp1f1_partials(a, b, x)[0],
    "hyp1f1_db": lambda a, b, x: _hyp1f1_partials(a, b, x)[1]}


def _family_loop(table, fn):
    loop = table.get(fn, KeyError)
    if loop is KeyError:
        raise ValueError(f"fn: no special function named {fn!r} in this family "
                         f"(known: {sorted(table)})")
    return loop if loop is not None else getattr(_special(), fn)


@_impl("special_unary")
def _special_unary_family(x, *, fn):
    a = x._np()
    return _out(_in_dtype(_family_loop(UNARY_FAMILY, fn)(a), a.dtype))


@_impl("special_binary")
def _special_binary_family(a, x, *, fn):
    xn = x._np()
    return _out(_in_dtype(_family_loop(BINARY_FAMILY, fn)(a._np(), xn), xn.dtype))


@_impl("special_ternary")
def _special_ternary_family(a, b, x, *, fn):
    xn = x._np()
    return _out(_in_dtype(_family_loop(TERNARY_FAMILY, fn)(a._np(), b._np(), xn), xn.dtype))
