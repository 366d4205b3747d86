"""Rules of the LAPACK primitives: cholesky, triangular_solve, solve, inv, slogdet, eigh,
eigvalsh, svd, svdvals, qr, pinv and lstsq.

Also the small matrix helpers (``_mm``, ``_mT``, ``_tri``, ...) that ``linalg_fused`` shares.
Batching: the batch goes first (they map over leading axes); lstsq loops per example.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import functools

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defleading, defloop
from nx_rune.autodiff.rules._common import _neg, _register, _scal, _sub, _val
from nx_rune.frontend import linalg as la
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

# -- linear algebra: decompositions and solves --------------------------------------------------
# Rules of the LAPACK primitives, written with front-end ops so that they are differentiable in
# turn (hessians of slogdet, of a Gaussian log-likelihood through cholesky and triangular
# solves).  Packed results (slogdet, eigh, svd, qr, lstsq) are split with ``la.unpack`` and
# their tangents packed with ``_pack_la``.  Complex operands: the pairing is JAX's,
# dL = Re sum(ct * dx) (no conjugation), the VJPs the transposes of JAX's JVPs with conjugate
# transposes, so that grad of a real-valued function is JAX's (the conjugate Wirtinger
# gradient) and holomorphic functions (det, solves) differentiate with holomorphic=True.
# Derivations: Murray (2016), "Differentiation of the Cholesky decomposition", arXiv:1602.07527
# (cholesky); Giles (2008), "An extended collection of matrix derivative results for forward
# and reverse mode AD" (solve, inv, determinants, eigh); Townsend (2016), "Differentiating the
# singular value decomposition", and the JVP of JAX's svd (svd); Walter & Lehmann (2018) / Liao
# et al. (2019), "Differentiable programming tensor networks" (qr, and the wide case through
# A = [X | Y]); Golub & Pereyra (1973), "The differentiation of pseudo-inverses" (pinv, lstsq).
# Degenerate eigen/singular values as JAX: the 1/(w_j - w_i) terms of exactly equal values are
# inf (eigenvectors have no derivative there), and terms of an unused part of a packed result
# are dropped (JAX's symbolic zeros), so functions of the eigenvalues alone stay differentiable.

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
        raise NotImplementedError(f"{name}: derivatives with respect to complex matrices are "
                                  f"not implemented; only real inputs")


def _trs(a, b, lower, trans, unit=False, check=True):
    if check:
        return bind(P.triangular_solve_p, a, b, lower=lower, trans=trans, unit_diagonal=unit)
    return bind(P.triangular_solve_p, a, b, lower=lower, trans=trans, unit_diagonal=unit,
                check_singular=False)


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
    if (type(L) is Tensor and type(g) is Tensor and g.dtype == L.dtype
            and L.dtype.kind != "c"):
        # concrete values (nothing differentiates this cotangent): the blocked algorithm
        # (the cholesky_grad primitive; ~2x the forward's flops against ~9x
        # for the formula below, which traced values keep)
        return (bind(P.cholesky_grad_p, L, g),)
    # the transpose of _jvp_cholesky: S = L^-T Phi(L^T G) conj(L)^-1, then the (Hermitian)
    # matrix's cotangent folded onto the triangle it is read from
    phi = _half_diag_weights(L.shape[-1], True, L.dtype)
    z = _trs(L, _bmul(_mm(_mT(L), g), phi), True, 1)      # L^-T Phi(L^T Lbar)
    st = _trs(_cj(L), _mT(z), True, 1)                     # S^T = conj(L)^-T z^T
    if L.dtype.kind != "c":
        return (_tri_adjoint(st, True),)                  # symmetric in s and s^T
    return (_herm_adjoint(_mT(st), True),)


def _jvp_cholesky(tangents, ans, args, params):
    # dL = L Phi(L^-1 dA L^-H) (Murray 2016; JAX's rule with conjugate transposes), dA the
    # Hermitian matrix that the lower triangle stands for
    L = ans
    da = _herm_from(tangents[0], True)
    y = _trs(L, da, True, 0)                               # L^-1 dA
    x = _trs(_cj(L), _mT(y), True, 0)                      # (L^-1 dA L^-H)^T
    if L.dtype.kind == "c":
        x = _mT(x)                                         # Hermitian, not symmetric
    return _mm(L, _bmul(x, _half_diag_weights(L.shape[-1], True, L.dtype)))


_register(P.cholesky_p, _vjp_cholesky, _jvp_cholesky)


def _tri_read(x, lower, unit):
    """The part of x that a triangular solve reads (its triangle, strict with unit_diagonal)."""
    return _tri(x, lower, (-1 if lower else 1) if unit else 0)


def _trans_of(a, params):
    """(t, conj): op(a) = a (t 0) or a^T (t 1), conjugated with conj (trans=2 of a complex
    a, a^H; trans=2 of a real a is the transpose)."""
    t = params["trans"]
    if t == 2:
        return 1, a.dtype.kind == "c"
    return t, False


def _vjp_triangular_solve(g, ans, args, params, need):
    a, b = args
    lower, unit = params["lower"], params["unit_diagonal"]
    t, conj = _trans_of(a, params)
    check = params.get("check_singular", True)
    if conj:         # op(a)^-T g = conj(a)^-1 g for op(a) = a^H
        ct_b = _cj(_trs(a, _cj(g), lower, 0, unit, check))
    else:
        ct_b = _trs(a, g, lower, 1 - t, unit, check)       # op(a)^-T g
    ct_a = None
    if need[0] and type(ct_b) is Tensor and type(ans) is Tensor:
        # concrete values: the product and its triangle in one primitive (one pass, no copy)
        ct_a = bind(P.triangular_solve_grad_p, ct_b, ans, lower=lower, trans=t,
                    unit_diagonal=unit)
    elif need[0]:                                          # -ct_b x^T, transposed for t = 1
        neg_x = _neg(ans)
        ct_m = _mm(ct_b, _mT(neg_x)) if t == 0 else _mm(neg_x, _mT(ct_b))
        ct_a = _tri_read(ct_m, lower, unit)
    if conj and ct_a is not None:                          # a enters op(a) conjugated
        ct_a = _cj(ct_a)
    return (ct_a, ct_b if need[1] else None)


def _jvp_triangular_solve(tangents, ans, args, params):
    a = args[0]
    ta, tb = tangents
    lower, unit = params["lower"], params["unit_diagonal"]
    t, conj = _trans_of(a, params)
    rhs = tb
    if ta is not None:
        dt = _tri_read(ta, lower, unit)
        dm_x = _mm(dt if t == 0 else (_mH(dt) if conj else _mT(dt)), ans)
        rhs = _neg(dm_x) if rhs is None else _sub(rhs, dm_x)
    return _trs(a, rhs, lower, params["trans"] if conj else t, unit,
                params.get("check_singular", True))


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


# slogdet (JAX's rule): with t = tr(a^-1 da), d log|det a| = Re(t) and, for complex a,
# d sign = i Im(t) sign (the sign of a real matrix is piecewise constant).  Transposed under
# the pairing Re sum(ct * dx): a gets c inv(a)^T, c = Re(g_log) + i Im(g_sign sign).

def _vjp_slogdet(g, ans, args, params, need):
    a, lu = args
    g_sign, g_log = la.unpack(g, [(), ()])
    c = _re(g_log)
    if a.dtype.kind == "c":
        sign = la.unpack(ans, [(), ()])[0]
        w = ops.multiply(g_sign, sign)
        c = ops.add(c, _sub(w, _re(w)))
    ainv_t = _mT(bind(P.lu_inverse_p, a, lu))
    return (_bmul(ainv_t, ops.reshape(c, c.shape + (1, 1))), None)


def _jvp_slogdet(tangents, ans, args, params):
    a, lu = args
    if tangents[0] is None:
        return None
    t = ops.sum(ops.multiply(_mT(bind(P.lu_inverse_p, a, lu)), tangents[0]), (-2, -1))
    dlog = _re(t)
    if a.dtype.kind != "c":
        return ops.stack([ops.zeros_like_t(dlog), dlog], -1)
    sign = la.unpack(ans, [(), ()])[0]
    return ops.stack([ops.multiply(_sub(t, dlog), sign), dlog], -1)


_register(P.slogdet_p, _vjp_slogdet, _jvp_slogdet)


def _cj(x):
    """conj(x) (x itself for real x)."""
    return ops.conj(x) if x.dtype.kind == "c" else x


def _mH(x):
    """The conjugate transpose of each matrix (the transpose for real x)."""
    return _cj(_mT(x))


def _re(x):
    """Re(x) kept in x's dtype: a real quantity (eigen/singular values and their derivatives)
    carried in a complex packed result."""
    return ops.astype(ops.real(x), x.dtype) if x.dtype.kind == "c" else x


def _herm_from(x, lower):
    """The Hermitian matrix whose ``lower`` (else upper) triangle is x's, as LAPACK reads it:
    the strict triangle, its conjugate transpose, and the real part of the diagonal."""
    if x.dtype.kind != "c":
        return _sym_from(x, lower)
    strict = _tri(x, lower, -1 if lower else 1)
    diag = _re(_bmul(x, _eye(x.shape[-1], x.dtype)))
    return ops.add(ops.add(strict, _mH(strict)), diag)


def _herm_adjoint(s, lower):
    """The cotangent of x for ``_herm_from(x, lower)`` given the Hermitian matrix's cotangent
    s: the triangle of s + s^H (its diagonal Re(s_ii))."""
    return _bmul(bind(P.add_p, s, _mH(s)), _half_diag_weights(s.shape[-1], lower, s.dtype))


# Complex eigh and svd: the cotangent pairing is JAX's, dL = Re sum(ct * dx) (no conjugation),
# and the rules are the transposes of JAX's JVPs (eigenvectors and singular vectors are fixed
# up to a phase per column: JAX's gauge, where diag(V^H dV) is 0 for eigh and diag(V^H dV)
# is real for svd).  Real matrices take the same formulas with conj the identity.

def _eigh_parts(packed, n):
    return la.unpack(packed, [(n,), (n, n)])


def _vjp_eigh(g, ans, args, params, need):
    a = args[0]
    n = a.shape[-1]
    w, v = _eigh_parts(ans, n)
    gw, gv = _eigh_parts(g, n)
    k = _diag_mat(_re(gw))
    if not _known_zero(gv):
        k = ops.add(ops.multiply(_gap_inverse(w, False), _mm(_mT(v), gv)), k)
    return (_herm_adjoint(_mm(_mm(_cj(v), k), _mT(v)), params["lower"]),)


def _jvp_eigh(tangents, ans, args, params):
    a = args[0]
    n = a.shape[-1]
    w, v = _eigh_parts(ans, n)
    m = _mm(_mm(_mH(v), _herm_from(tangents[0], params["lower"])), v)
    dv = _mm(v, ops.multiply(_gap_inverse(w, False), m))
    return _pack_la([_re(_diag_of(m)), dv], a.shape[:-2])


_register(P.eigh_p, _vjp_eigh, _jvp_eigh)


def _eigenvectors(a, lower):
    return _eigh_parts(bind(P.eigh_p, a, lower=lower), a.shape[-1])[1]


def _vjp_eigvalsh(g, ans, args, params, need):
    a = args[0]
    v = _eigenvectors(a, params["lower"])
    s = _mm(ops.multiply(_cj(v), _row(ops.astype(g, v.dtype))), _mT(v))
    return (_herm_adjoint(s, params["lower"]),)


def _jvp_eigvalsh(tangents, ans, args, params):
    a = args[0]
    v = _eigenvectors(a, params["lower"])
    da = _herm_from(tangents[0], params["lower"])
    dw = ops.sum(ops.multiply(_cj(v), _mm(da, v)), -2)
    return ops.real(dw) if dw.dtype.kind == "c" else dw


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
    # the transpose of _jvp_svd: with dS = U^H dA V, dL = Re sum(core * dS), and
    # ct = conj(U) core V^T (plus the parts of gU, gV outside U's, V's column spaces)
    a = args[0]
    m, n = a.shape[-2:]
    cplx = a.dtype.kind == "c"
    u, s, vh = _svd_parts(a, ans, params["full_matrices"])
    gu, gs, gvh = _svd_parts(a, g, params["full_matrices"])
    if cplx:
        s = _re(s)
    v, gv = _mH(vh), _mH(gvh)
    s_row, s_col = _row(s), _col(s)
    core = _diag_mat(_re(gs))
    use_u, use_v = not _known_zero(gu), not _known_zero(gv)
    if use_u or use_v:
        f = _gap_inverse(s, True)
    if use_u:
        ju = _mm(_mT(u), gu)
        pu = ops.multiply(f, ju)
        core = ops.add(core, ops.multiply(ops.add(pu, _mH(pu)), s_row))
        if cplx:     # the phase of each column of U: i Im(diag(U^T gU)) / s
            core = ops.add(core, _diag_mat(ops.divide(_sub(_diag_of(ju), _re(_diag_of(ju))),
                                                      s)))
    if use_v:
        jv = _mm(_mT(v), gv)
        pv = ops.multiply(f, jv)
        core = ops.add(core, ops.multiply(s_col, ops.add(pv, _mH(pv))))
    ct = _mm(_mm(_cj(u), core), _cj(vh))
    if m > n and use_u:    # the part of gU outside U's column space
        s_inv = _row(bind(P.recip_p, s))
        ct = ops.add(ct, _mm(ops.multiply(_sub(gu, _mm(_cj(u), ju)), s_inv), _cj(vh)))
    elif n > m and use_v:
        s_inv = _col(bind(P.recip_p, s))
        x = ops.multiply(s_inv, _sub(_mT(gv), _mm(_mT(jv), vh)))
        ct = ops.add(ct, _cj(_mm(u, x)))
    return (ct,)


def _jvp_svd(tangents, ans, args, params):
    a = args[0]
    m, n = a.shape[-2:]
    cplx = a.dtype.kind == "c"
    da = tangents[0]
    u, s, vh = _svd_parts(a, ans, params["full_matrices"])
    if cplx:
        s = _re(s)
    v = _mH(vh)
    f = _gap_inverse(s, True)
    s_row, s_col = _row(s), _col(s)
    ds_mat = _mm(_mm(_mH(u), da), v)
    dss, sds = ops.multiply(ds_mat, s_row), ops.multiply(s_col, ds_mat)
    du_core = ops.multiply(f, ops.add(dss, _mH(dss)))
    if cplx:     # JAX's gauge: i Im(dS_jj) / s_j on U's side
        d = _diag_of(ds_mat)
        du_core = ops.add(du_core, _diag_mat(ops.divide(_sub(d, _re(d)), s)))
    du = _mm(u, du_core)
    dv = _mm(v, ops.multiply(f, ops.add(sds, _mH(sds))))
    if m > n:
        s_inv = _row(bind(P.recip_p, s))
        dav = _mm(da, v)
        du = ops.add(du, ops.multiply(_sub(dav, _mm(u, _mm(_mH(u), dav))), s_inv))
    elif n > m:
        s_inv = _row(bind(P.recip_p, s))
        dau = _mm(_mH(da), u)
        dv = ops.add(dv, ops.multiply(_sub(dau, _mm(v, _mm(vh, dau))), s_inv))
    return _pack_la([du, _re(_diag_of(ds_mat)), _mH(dv)], a.shape[:-2])


_register(P.svd_p, _vjp_svd, _jvp_svd)


def _singular_vectors(a):
    u, _, vt = _svd_parts(a, bind(P.svd_p, a, full_matrices=False), False)
    return u, vt


def _vjp_svdvals(g, ans, args, params, need):
    a = args[0]
    u, vh = _singular_vectors(a)
    return (_mm(ops.multiply(_cj(u), _row(ops.astype(g, u.dtype))), _cj(vh)),)


def _jvp_svdvals(tangents, ans, args, params):
    a = args[0]
    u, vh = _singular_vectors(a)
    ds = ops.sum(ops.multiply(_cj(u), _mm(tangents[0], _mH(vh))), -2)
    return ops.real(ds) if ds.dtype.kind == "c" else ds


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
    """(dQ, dR) of A = QR for m >= n (JAX's qr_jvp_rule): C = Q^H dA R^-1, Omega = tril(C, -1)
    minus its conjugate transpose plus i Im(diag C) (complex: R's diagonal stays real),
    dQ = Q (Omega - C) + dA R^-1, dR = (C - Omega) R."""
    da_rinv = _mT(_trs(r, _mT(da), False, 1))
    c = _mm(_mH(q), da_rinv)
    low = _tri(c, True, -1)
    om = _sub(low, _mH(low))
    if c.dtype.kind == "c":
        d = _diag_of(c)
        om = ops.add(om, _diag_mat(_sub(d, _re(d))))
    dq = ops.add(_mm(q, _sub(om, c)), da_rinv)
    return dq, _mm(_sub(c, om), r)


def _qr_vjp_square(q, r, gq, gr):
    """A's cotangent for m >= n, the transpose of _qr_jvp_square:
    (gQ + conj(Q) copyltu(M)) R^-T, M = gR R^T - Q^T gQ, copyltu(M) = M's strict upper
    triangle, its conjugate transpose below and Re(diag M) on the diagonal."""
    mm_ = _sub(_mm(gr, _mT(r)), _mm(_mT(q), gq))
    up = _tri(mm_, False, 1)
    if mm_.dtype.kind == "c":
        sym = ops.add(ops.add(up, _mH(up)), _re(_bmul(mm_, _eye(mm_.shape[-1], mm_.dtype))))
    else:
        sym = ops.add(_tri(mm_, False), _mT(up))
    b = ops.add(_mm(_cj(q), sym), gq)
    return _mT(_trs(r, _mT(b), False, 0))


def _vjp_qr(g, ans, args, params, need):
    a = args[0]
    m, n = a.shape[-2:]
    q, r = _qr_parts(a, ans, params["mode"])
    gq, gr = _qr_parts(a, g, params["mode"])
    if m >= n:
        return (_qr_vjp_square(q, r, gq, gr),)
    # A = [X | Y], X square: Q R_X = X, R_Y = Q^H Y
    rx, grx, gry, y = _cols(r, 0, m), _cols(gr, 0, m), _cols(gr, m, n), _cols(a, m, n)
    ctx = _qr_vjp_square(q, rx, ops.add(gq, _cj(_mm(y, _mT(gry)))), grx)
    return (ops.concatenate([ctx, _mm(_cj(q), gry)], axis=-1),)


def _jvp_qr(tangents, ans, args, params):
    a = args[0]
    m, n = a.shape[-2:]
    da = tangents[0]
    q, r = _qr_parts(a, ans, params["mode"])
    if m >= n:
        dq, dr = _qr_jvp_square(q, r, da)
    else:
        dq, drx = _qr_jvp_square(q, _cols(r, 0, m), _cols(da, 0, m))
        dry = ops.add(_mm(_mH(dq), _cols(a, m, n)), _mm(_mH(q), _cols(da, m, n)))
        dr = ops.concatenate([drx, dry], axis=-1)
    return _pack_la([dq, dr], a.shape[:-2])


_register(P.qr_p, _vjp_qr, _jvp_qr)


def _pinv_jvp(a, p, da):
    """d pinv(A) = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P (Golub & Pereyra;
    JAX's rule, conjugate transposes for complex A)."""
    dat = _mH(da)
    ph = _mH(p)
    t1 = _neg(_mm(_mm(p, da), p))
    x = _sub(dat, _mm(_mm(dat, a), p))
    t2 = _mm(p, _mm(ph, x))
    y = _mm(dat, _mm(ph, p))
    t3 = _sub(y, _mm(p, _mm(a, y)))
    return ops.add(ops.add(t1, t2), t3)


def _pinv_vjp(a, p, g):
    """-P^T G P^T + conj((I - A P) G^T P P^H + P^H P G^T (I - P A)): the transpose of
    _pinv_jvp under the pairing Re sum(ct * dx) (its dA^H terms are conjugate-linear)."""
    gt = _mT(g)
    ph = _mH(p)
    t1 = _neg(_mm(_mm(_mT(p), g), _mT(p)))
    z = _mm(gt, _mm(p, ph))
    t2 = _sub(z, _mm(a, _mm(p, z)))
    w = _mm(_mm(ph, p), gt)
    t3 = _sub(w, _mm(_mm(w, p), a))
    return ops.add(t1, _cj(ops.add(t2, t3)))


def _vjp_pinv(g, ans, args, params, need):
    return (_pinv_vjp(args[0], ans, g),)


def _jvp_pinv(tangents, ans, args, params):
    return _pinv_jvp(args[0], ans, tangents[0])


_register(P.pinv_p, _vjp_pinv, _jvp_pinv)


# lstsq's cotangent of pinv(a) is G = gx b^T (rank k, the right-hand sides): _pinv_vjp's terms
# regrouped around the (n, k) and (m, k) factors, with x = P b and the residual r = b - A x,
#   -P^T G P^T = -(P^T gx) x^T,  conj((I - A P) G^T P P^H) = conj(r (conj(P) P^T gx)^T),
#   conj(P^H P G^T (I - P A)) = conj((P^H x) (gx - A^T P^T gx)^T),
# costs O(m n k) instead of the n x n products' O(m n^2) (4x the forward at 64 x 64); the same
# for the tangent, _pinv_jvp(dA) b = -P dA x + P P^H dA^H r + w - P A w, w = dA^H P^H x
# (conj and ^H are the identity and ^T for real matrices).

def _lstsq_pinv_vjp(a, b, p, gx, pt_gx):
    """_pinv_vjp(a, p, gx b^T) from the factors (see above)."""
    x = _mm(p, b)
    r = _sub(b, _mm(a, x))
    t1 = _neg(_mm(pt_gx, _mT(x)))
    t2 = _mm(r, _mT(_mm(_cj(p), pt_gx)))
    t3 = _mm(_mm(_mH(p), x), _mT(_sub(gx, _mm(_mT(a), pt_gx))))
    return ops.add(t1, _cj(ops.add(t2, t3)))


def _lstsq_pinv_jvp_b(a, b, p, da):
    """_pinv_jvp(a, p, da) @ b from the factors (see above)."""
    x = _mm(p, b)
    r = _sub(b, _mm(a, x))
    dat, ph = _mH(da), _mH(p)
    t1 = _neg(_mm(p, _mm(da, x)))
    t2 = _mm(p, _mm(ph, _mm(dat, r)))
    w = _mm(dat, _mm(ph, x))
    return ops.add(ops.add(t1, t2), _sub(w, _mm(p, _mm(a, w))))


def _vjp_lstsq(g, ans, args, params, need):
    a, b = args
    m, n = a.shape
    gx, gs = la.unpack(g, [(n, b.shape[1]), (min(m, n),)])
    p = bind(P.pinv_p, a, rtol=params["rcond"])            # x = pinv(a) b
    pt_gx = _mm(_mT(p), gx)
    ct_b = pt_gx if need[1] else None
    ct_a = None
    if need[0]:
        ct_a = _lstsq_pinv_vjp(a, b, p, gx, pt_gx)
        if not _known_zero(gs):                            # the singular values' part
            u, vt = _singular_vectors(a)
            ct_a = ops.add(ct_a, _mm(ops.multiply(_cj(u), _row(_re(gs))), _cj(vt)))
    return (ct_a, ct_b)


def _jvp_lstsq(tangents, ans, args, params):
    a, b = args
    ta, tb = tangents
    p = bind(P.pinv_p, a, rtol=params["rcond"])
    k = min(a.shape)
    dx = None if tb is None else _mm(p, tb)
    if ta is None:
        ds = _scal(0, a.dtype, (k,))
    else:
        dpb = _lstsq_pinv_jvp_b(a, b, p, ta)
        dx = dpb if dx is None else ops.add(dx, dpb)
        u, vt = _singular_vectors(a)
        ds = _re(ops.sum(ops.multiply(_cj(u), _mm(ta, _mH(vt))), -2))
    if dx is None:
        dx = _scal(0, a.dtype, (a.shape[1], b.shape[1]))
    return _pack_la([dx, ds], ())


_register(P.lstsq_p, _vjp_lstsq, _jvp_lstsq)


# -- batching: the linear-algebra primitives act on trailing matrix axes and map over leading
# ones (lstsq takes one 2-d matrix: one solve per example) ---------------------------------------

for _p in (P.cholesky_p, P.triangular_solve_p, P.solve_p, P.inv_p, P.slogdet_p, P.eigh_p,
           P.eigvalsh_p, P.svd_p, P.svdvals_p, P.qr_p, P.pinv_p):
    defleading(_p)
defloop(P.lstsq_p)
