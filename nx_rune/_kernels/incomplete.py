"""Derivatives of the regularized incomplete gamma and beta functions in their shape parameters,
in float64 NumPy (the derivative rules of gammainc and betainc call them).

    gammainc_da(a, x)        d/da P(a, x),   P(a, x) = gamma(a, x) / Gamma(a)  (lower)
    betainc_dab(a, b, x)     (d/da I_x(a, b), d/db I_x(a, b))

No closed form exists; the method is forward-mode differentiation of the series or continued
fraction that computes the function (as Moore 1982, "Algorithm AS 187: derivatives of the
incomplete gamma integral", and Boik & Robison-Cox 1998, "Derivatives of the incomplete beta
function", differentiate them): every quantity of the recurrence carries its derivative with
respect to the shape parameters, and the iteration stops when both the value and the
derivative have converged to float64 rounding.

- P(a, x) for x < a + 1: P = x^a e^-x / Gamma(a + 1) * sum_n t_n, t_0 = 1,
  t_n = t_{n-1} x / (a + n) (so dt_n = (dt_{n-1} - t_{n-1} / (a + n)) x / (a + n)).
- Q(a, x) = 1 - P for x >= a + 1: Legendre's continued fraction
  Q = x^a e^-x / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)),
  evaluated by the modified Lentz method.
- I_x(a, b) for x < (a + 1) / (a + b + 2): I = x^a (1 - x)^b / (a B(a, b)) * 1 / (1 + d_1 /
  (1 + d_2 / ...)), d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)),
  d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) (modified Lentz); otherwise the
  symmetry I_x(a, b) = 1 - I_{1-x}(b, a).

The iterations converge in O(sqrt(max(a, b))) steps; a point that has not converged after
``MAX_ITER`` steps gives nan (never a silently wrong value).  Outside the domain (a <= 0,
b <= 0, x < 0, x > 1 for the beta, nan anywhere) the derivatives are nan; at the ends of the
support (x = 0, x = inf, x = 1 for the beta) they are 0.
"""
import numpy as np
from scipy import special as _sp

__all__ = ["gammainc_da", "betainc_dab", "MAX_ITER"]

MAX_ITER = 100_000
_EPS = np.finfo(np.float64).eps
_TINY = 1e-300


def _converged(step, value):
    return np.abs(step) <= _EPS * np.abs(value)


def _gamma_series(a, x):
    """(S, dS/da) of P's series, for x < a + 1 (x > 0)."""
    s = np.ones_like(x)
    ds = np.zeros_like(x)
    t, dt = s.copy(), ds.copy()
    done = np.zeros(x.shape, bool)
    idx = np.arange(x.size)
    av, xv, tv, dtv = a, x, t, dt
    for n in range(1, MAX_ITER + 1):
        an = av + n
        r = xv / an
        dtv = (dtv - tv / an) * r
        tv = tv * r
        s[idx] += tv
        ds[idx] += dtv
        fin = _converged(tv, s[idx]) & _converged(dtv, ds[idx])
        if fin.any():
            done[idx[fin]] = True
            keep = ~fin
            idx, av, xv, tv, dtv = idx[keep], av[keep], xv[keep], tv[keep], dtv[keep]
            if not idx.size:
                break
    s[~done] = np.nan
    return s, ds


def _gamma_cf(a, x):
    """(h, dh/da) of Q's continued fraction, for x >= a + 1."""
    idx = np.arange(x.size)
    b = x + 1 - a
    db = -np.ones_like(x)
    c = np.full_like(x, 1 / _TINY)
    dc = np.zeros_like(x)
    d = 1 / b
    dd = -db / (b * b)
    h, dh = d.copy(), dd.copy()
    out_h, out_dh = np.full_like(x, np.nan), np.full_like(x, np.nan)
    av = a
    for i in range(1, MAX_ITER + 1):
        an = -i * (i - av)
        dan = float(i)
        b = b + 2
        u = an * d + b
        du = dan * d + an * dd + db
        u = np.where(np.abs(u) < _TINY, _TINY, u)
        cn = b + an / c
        dcn = db + dan / c - an * dc / (c * c)
        cn = np.where(np.abs(cn) < _TINY, _TINY, cn)
        d, dd = 1 / u, -du / (u * u)
        c, dc = cn, dcn
        delta = d * c
        ddelta = dd * c + d * dc
        dh_new = dh * delta + h * ddelta
        h_new = h * delta
        fin = (np.abs(delta - 1) <= _EPS) & _converged(dh_new - dh, dh_new)
        h, dh = h_new, dh_new
        if fin.any():
            out_h[idx[fin]] = h[fin]
            out_dh[idx[fin]] = dh[fin]
            keep = ~fin
            idx, av, b, db, c, dc, d, dd, h, dh = (v[keep] for v in
                                                   (idx, av, b, db, c, dc, d, dd, h, dh))
            if not idx.size:
                break
    return out_h, out_dh


def gammainc_da(a, x):
    """d/da of the regularized lower incomplete gamma function P(a, x), elementwise over the
    broadcast float64 arrays a (> 0) and x (>= 0); float64 ndarray of the broadcast shape."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.zeros(a.shape)
    bad = ~(a > 0) | ~(x >= 0) | np.isnan(a) | np.isnan(x)
    out[bad] = np.nan
    inner = ~bad & (x > 0) & np.isfinite(x) & np.isfinite(a)
    with np.errstate(all="ignore"):
        ser = inner & (x < a + 1)
        if ser.any():
            av, xv = a[ser], x[ser]
            s, ds = _gamma_series(av, xv)
            logx = np.log(xv)
            pref = np.exp(av * logx - xv - _sp.gammaln(av + 1))
            out[ser] = pref * (s * (logx - _sp.digamma(av + 1)) + ds)
        cf = inner & ~ser
        if cf.any():
            av, xv = a[cf], x[cf]
            h, dh = _gamma_cf(av, xv)
            logx = np.log(xv)
            pref = np.exp(av * logx - xv - _sp.gammaln(av))
            out[cf] = -pref * (h * (logx - _sp.digamma(av)) + dh)
    return out


def _beta_cf(p, q, y):
    """(h, dh/dp, dh/dq) of I_y(p, q)'s continued fraction (modified Lentz, with the
    derivatives carried along)."""
    n = y.size
    idx = np.arange(n)
    out = [np.full(n, np.nan) for _ in range(3)]
    c, cp, cq = np.ones(n), np.zeros(n), np.zeros(n)
    u = 1 - (p + q) * y / (p + 1)
    up = -y * (1 - q) / ((p + 1) ** 2)
    uq = -y / (p + 1)
    u = np.where(np.abs(u) < _TINY, _TINY, u)
    d, dp_, dq_ = 1 / u, -up / (u * u), -uq / (u * u)
    h, hp, hq = d.copy(), dp_.copy(), dq_.copy()

    def step(aa, aap, aaq, d, dp_, dq_, c, cp, cq):
        u = 1 + aa * d
        u = np.where(np.abs(u) < _TINY, _TINY, u)
        up, uq = aap * d + aa * dp_, aaq * d + aa * dq_
        cn = 1 + aa / c
        cnp = aap / c - aa * cp / (c * c)
        cnq = aaq / c - aa * cq / (c * c)
        cn = np.where(np.abs(cn) < _TINY, _TINY, cn)
        d, dp_, dq_ = 1 / u, -up / (u * u), -uq / (u * u)
        return d, dp_, dq_, cn, cnp, cnq

    for m in range(1, MAX_ITER + 1):
        m2 = 2 * m
        e1, e2 = p + m2 - 1, p + m2
        aa = m * (q - m) * y / (e1 * e2)
        aap, aaq = -aa * (1 / e1 + 1 / e2), m * y / (e1 * e2)
        d, dp_, dq_, c, cp, cq = step(aa, aap, aaq, d, dp_, dq_, c, cp, cq)
        dl = d * c
        dlp, dlq = dp_ * c + d * cp, dq_ * c + d * cq
        h, hp, hq = h * dl, hp * dl + h * dlp, hq * dl + h * dlq
        o1, o2, pm, pqm = p + m2, p + m2 + 1, p + m, p + q + m
        aa = -pm * pqm * y / (o1 * o2)
        aap = aa * (1 / pm + 1 / pqm - 1 / o1 - 1 / o2)
        aaq = aa / pqm
        d, dp_, dq_, c, cp, cq = step(aa, aap, aaq, d, dp_, dq_, c, cp, cq)
        dl = d * c
        dlp, dlq = dp_ * c + d * cp, dq_ * c + d * cq
        hp_new, hq_new = hp * dl + h * dlp, hq * dl + h * dlq
        fin = ((np.abs(dl - 1) <= _EPS) & _converged(hp_new - hp, hp_new)
               & _converged(hq_new - hq, hq_new))
        h, hp, hq = h * dl, hp_new, hq_new
        if fin.any():
            for o, v in zip(out, (h, hp, hq)):
                o[idx[fin]] = v[fin]
            keep = ~fin
            idx, p, q, y, d, dp_, dq_, c, cp, cq, h, hp, hq = (
                v[keep] for v in (idx, p, q, y, d, dp_, dq_, c, cp, cq, h, hp, hq))
            if not idx.size:
                break
    return out


def _beta_dpq(p, q, y, ym):
    """(d/dp, d/dq) of I_y(p, q) by its continued fraction; ym = 1 - y (passed exactly)."""
    h, hp, hq = _beta_cf(p, q, y)
    ly, lym, dpq = np.log(y), np.log(ym), _sp.digamma(p + q)
    pref = np.exp(p * ly + q * lym - np.log(p) - _sp.betaln(p, q))
    return (pref * (h * (ly - 1 / p - _sp.digamma(p) + dpq) + hp),
            pref * (h * (lym - _sp.digamma(q) + dpq) + hq))


def betainc_dab(a, b, x):
    """(d/da, d/db) of the regularized incomplete beta function I_x(a, b), elementwise over
    the broadcast float64 arrays a (> 0), b (> 0), x in [0, 1]; two float64 ndarrays of the
    broadcast shape."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    da, db = np.zeros(a.shape), np.zeros(a.shape)
    bad = ~(a > 0) | ~(b > 0) | ~(x >= 0) | ~(x <= 1)
    da[bad] = db[bad] = np.nan
    inner = ~bad & (x > 0) & (x < 1) & np.isfinite(a) & np.isfinite(b)
    with np.errstate(all="ignore"):
        direct = inner & (x < (a + 1) / (a + b + 2))
        if direct.any():
            xv = x[direct]
            da[direct], db[direct] = _beta_dpq(a[direct], b[direct], xv, 1 - xv)
        swap = inner & ~direct
        if swap.any():
            xv = x[swap]       # I_x(a, b) = 1 - I_{1-x}(b, a)
            d_b, d_a = _beta_dpq(b[swap], a[swap], 1 - xv, xv)
            da[swap], db[swap] = -d_a, -d_b
    return da, db
