"""Rules of the fused linear-algebra primitives: the Euclidean norm (norm2), the LU
factorization reused by determinants and inverses (lu_factor, lu_inverse, lu_det), the
derivatives that run as one primitive on concrete values (cholesky_grad, det_grad, norm2_grad,
triangular_solve_grad, cho_solve_grad), cho_solve and matrix_power.

May import: the front end, primitives, tensor, this package's ``_common``/``_batch_common`` and
``linalg`` (its matrix helpers).
"""
import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import (
    BATCH_RULES,
    _norm,
    batch_at,
    defleading,
    defreduction,
)
from nx_rune.autodiff.rules._common import (
    _add,
    _c,
    _div,
    _mul,
    _neg,
    _register,
    _sub,
    _unreduce,
    defnondiff,
)
from nx_rune.autodiff.rules._control import cond
from nx_rune.autodiff.rules.linalg import (
    _bmul,
    _col,
    _diag_of,
    _eye,
    _half_diag_weights,
    _mm,
    _mT,
    _real_only,
    _tri,
    _tri_adjoint,
    _tri_read,
    _trs,
)
from nx_rune.frontend import linalg as la
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

# -- the fused Euclidean norm, the LU factorization reused by slogdet ---------------------------
# norm2 = sqrt(sum(x^2)) over ``axes``: its derivative x / norm2 is one product (the
# composition sqrt(x . x) costs three passes over x), 0 at the origin (a subgradient, where
# x / 0 would be NaN).  lu_factor is a residual: the factorization that slogdet and lu_inverse
# take as a second operand so as not to factor a again; their rules give the whole derivative
# with respect to a (lu_inverse's is inv's), so lu_factor's own derivative is not needed and is
# declared zero.  The blocked Cholesky derivative is with the Cholesky rules above.

def _norm2_scale(v, ans, shape, axes, keepdims):
    """v / ans (0 where ans is 0) spread back to ``shape``."""
    safe = bind(P.where_p, ops.equal(ans, 0), _c(1, ans), ans)
    return _unreduce(_div(v, safe), shape, axes, keepdims)


def _vjp_norm2(g, ans, args, params, need):
    x = args[0]
    if type(x) is Tensor and type(g) is Tensor:     # concrete: one pass (norm2_grad)
        return (bind(P.norm2_grad_p, x, ans, g, **params),)
    return (_mul(x, _norm2_scale(g, ans, x.shape, params["axes"], params["keepdims"])),)


def _jvp_norm2(tangents, ans, args, params):
    axes, keepdims = params["axes"], params["keepdims"]
    dot = bind(P.reduce_sum_p, _mul(args[0], tangents[0]), axes=axes, keepdims=keepdims)
    return _div(dot, bind(P.where_p, ops.equal(ans, 0), _c(1, ans), ans))


_register(P.norm2_p, _vjp_norm2, _jvp_norm2)
defnondiff(P.lu_factor_p)


def _vjp_lu_inverse(g, ans, args, params, need):
    it = _mT(ans)
    return (_mm(_mm(it, _neg(g)), it), None)


def _jvp_lu_inverse(tangents, ans, args, params):
    if tangents[0] is None:
        return None
    return _mm(_mm(ans, _neg(tangents[0])), ans)


_register(P.lu_inverse_p, _vjp_lu_inverse, _jvp_lu_inverse)


# -- cholesky_grad(L, G), the Cholesky VJP as one primitive -------------------------------------
# Its value is Psi(M), M = L^-T Phi(L^T G)^T L^-1, Psi(X) = (X + X^T) weighted 1 below / 1/2 on
# the diagonal, 0 above (the symbolic rule of cholesky above; L and G are read from their lower
# triangles).  Its derivatives differentiate that formula:
#   dM = -L^-T dL^T M + L^-T dP^T L^-1 - M dL L^-1,   dP = Phi(dL^T G + L^T dG);
# and, transposed, with Y = W C + (W C)^T (C the cotangent, W Psi's weights),
#   V = L^-1 Y L^-T,  U = Phi(V),  Lbar = -(M + M^T) Y L^-T + G U^T,  Gbar = L U,
# both restricted to the lower triangles.

def _chol_grad_parts(L, G):
    """(tril L, tril G, M) of the formula above."""
    n = L.shape[-1]
    lt, gt = _tri(L, True), _tri(G, True)
    p = _bmul(_mm(_mT(lt), gt), _half_diag_weights(n, True, L.dtype))
    return lt, gt, _trs(lt, _mT(_trs(lt, p, True, 1)), True, 1)


def _jvp_cholesky_grad(tangents, ans, args, params):
    dl, dg = tangents
    lt, gt, m = _chol_grad_parts(*args)
    n = lt.shape[-1]
    phi = _half_diag_weights(n, True, lt.dtype)
    dp = None
    dm = None
    if dl is not None:
        dlt = _tri(dl, True)
        dp = _mm(_mT(dlt), gt)
        dm = _neg(_add(_trs(lt, _mm(_mT(dlt), m), True, 1),
                       _mT(_trs(lt, _mT(_mm(m, dlt)), True, 1))))
    if dg is not None:
        term = _mm(_mT(lt), _tri(dg, True))
        dp = term if dp is None else _add(dp, term)
    dp = _bmul(dp, phi)
    mid = _trs(lt, _mT(_trs(lt, dp, True, 1)), True, 1)      # L^-T dP^T L^-1
    dm = mid if dm is None else _add(dm, mid)
    return _tri_adjoint(dm, True)


def _vjp_cholesky_grad(c, ans, args, params, need):
    lt, gt, m = _chol_grad_parts(*args)
    n = lt.shape[-1]
    wc = _bmul(c, _half_diag_weights(n, True, lt.dtype))
    y = _add(wc, _mT(wc))
    y_lt = _mT(_trs(lt, y, True, 0))                           # Y L^-T (Y symmetric)
    u = _bmul(_trs(lt, y_lt, True, 0), _half_diag_weights(n, True, lt.dtype))
    ct_l = ct_g = None
    if need[0]:
        ct_l = _tri(_sub(_mm(gt, _mT(u)), _mm(_add(m, _mT(m)), y_lt)), True)
    if need[1]:
        ct_g = _tri(_mm(lt, u), True)
    return (ct_l, ct_g)


_register(P.cholesky_grad_p, _vjp_cholesky_grad, _jvp_cholesky_grad)


# -- the determinant from the LU factorization, fused derivatives -------------------------------
# lu_det(a, lu, part): d det = tr(adj(a) da) (= det tr(a^-1 da) for invertible a), d log|det a|
# = tr(a^-1 da) (Giles 2008), the sign (real a) is piecewise constant.  The cotangent is the one
# primitive det_grad whatever the values (eager, traced, batched): s adj(a)^T for det
# (``adjugate``), s inv(a)^T for log|det| (getri on the saved factorization); its own rules
# below give the higher orders.
# det_grad(a, lu, s) = s B, B = inv(a)^T: dB = -B da^T B, so
#   d det_grad = ds B - s B da^T B;  VJP of C: a gets -B (s C)^T B, s gets sum(C * B);
# det_grad(a, lu, s, adjugate=True) = s adj(a)^T: see the cofactor's derivatives below.
# norm2_grad(x, ans, g) = x * S, S = g / ans spread over the reduced axes (ans taken as 1 where
# it is 0, where x is 0 too):  d = dx S + x (dg - g dans / ans) / ans (spread; the dans term is
# 0 where ans is 0, as the where in the composition makes it).
# triangular_solve_grad(u, v) = -tri(P Q^T), (P, Q) = (u, v) for trans 0, (v, u) for trans 1,
# tri the part of a the solve reads: bilinear, d = -tri(dP Q^T + P dQ^T); VJP of C (T = tri(C)):
# P gets -T Q, Q gets -T^T P.

def _zero_pivot(lu, n):
    """Whether some matrix's concrete packed LU factorization (``lu_factor``) has an exactly
    zero pivot: the matrix is singular and inv(a) does not exist."""
    packed = lu._np()
    return bool(n and (packed[..., :n * n:n + 1] == 0).any())


def _invertible(a, lu):
    """Whether a and lu are concrete and every matrix of a is well conditioned enough for the
    closed forms through inv(a) (its pivots within sqrt(eps) of the largest: near a singular
    matrix their terms, ~1/pivot^2 times det, cancel to nothing); otherwise the SVD's forms,
    which hold at every rank."""
    if type(a) is not Tensor or type(lu) is not Tensor:
        return False
    n = a.shape[-1]
    if not n:
        return True
    piv = np.abs(lu._np()[..., :n * n:n + 1])
    tol = np.sqrt(np.finfo(piv.dtype).eps)
    return bool((piv.min(axis=-1) > tol * piv.max(axis=-1)).all())


def _others_products(s):
    """q (..., n, n), q_ij = the product of the s_l with l != i, j (q_ii: l != i), as
    products (no division: right where some s_l are 0)."""
    n = s.shape[-1]
    idx = np.arange(n)
    hit = (idx[:, None, None] == idx[None, None, :]) | (idx[None, :, None] == idx[None, None, :])
    ones = ops.asarray(hit.astype(np.dtype(s.dtype)))
    keep = ops.asarray((~hit).astype(np.dtype(s.dtype)))
    s3 = bind(P.expand_p, ops.reshape(s, s.shape[:-1] + (1, 1, n)), shape=s.shape + (n, n))
    return ops.prod(ops.add(ops.multiply(s3, keep), ones), -1)


def _svd_frame(a):
    """(u', q, vt', det(u) det(vt) as (..., 1, 1)) of a = u diag(s) vt, q = _others_products(s)
    in a's dtype, u' = conj(u) and vt' = conj(vt) (u and vt for real a: adj(a)^T =
    det(u) det(vt) u' adj(S)^T vt'), the singular values at rounding level (n eps s_max and
    below) taken as 0 (the SVD of a singular matrix returns them as ~1e-16), as the det_grad
    kernel does."""
    u, s, vt = la.svd(a)
    n = a.shape[-1]
    tol = ops.multiply(ops.max(s, -1, keepdims=True), float(n * np.finfo(np.dtype(s.dtype)).eps))
    s = bind(P.where_p, ops.less_equal(s, tol), _c(0, s), s)
    sign = ops.multiply(la.det(u), la.det(vt))
    q = _others_products(s)
    if a.dtype.kind == "c":
        u, vt, q = ops.conj(u), ops.conj(vt), ops.astype(q, a.dtype)
    return u, q, vt, ops.reshape(sign, sign.shape + (1, 1))


def _mv(m, v):
    """m (..., n, n) times each vector v (..., n): (..., n)."""
    return ops.reshape(_mm(m, _col(v)), v.shape)


def _s4(s):
    return ops.reshape(s, s.shape + (1, 1))


# -- the cofactor matrix C = adj(a)^T, det's derivative, and its derivatives --------------------
# det_grad(a, lu, s, adjugate=True) = s C on every matrix (the kernel: det inv(a)^T by getri,
# the SVD's cofactor where a pivot is 0).  dC at every rank: adj is equivariant (adj(x y) =
# adj(y) adj(x), adj(q) = det(q) q^T for orthogonal q), so with a = u S v^T and F = u^T E v,
# dC[E] = det(u) det(v) u G^T v^T, G = d adj(S)[F] at the diagonal S:
#   G_ij = -F_ij q_ij (i != j),  G_ii = sum_{k != i} q_ik F_kk,  q_ij = prod_{l != i, j} s_l,
# no division: exact at every rank (at rank n - 2, C is 0 but dC is not; at rank <= n - 3 both
# are).  Transposed, a cotangent W of C gives a the cotangent det(u) det(v) u H v^T,
# H = -Wt^T q0 + diag(q0 diag(Wt)) (Wt = u^T W v, q0 = q off the diagonal, products
# elementwise).  On concrete invertible a the closed forms with B = inv(a)^T, C = det B:
#   dC[E] = det (tr(B^T E) B - B E^T B),  a's cotangent det (<W, B> B - B W^T B).

def _inv_t(a, lu):
    """inv(a)^T by the det_grad kernel (getri), which does not raise at a singular matrix
    (+-inf and NaN there): a branch of ``_by_conditioning`` that a batch may run on every
    example."""
    return bind(P.det_grad_p, a, lu, ops.ones_like(bind(P.lu_det_p, a, lu, part="det")))


def _well_conditioned(lu, n):
    """Whether every matrix's pivots lie within sqrt(eps) of its largest (see _invertible),
    as a traced boolean scalar."""
    piv = ops.abs(ops.diagonal(ops.reshape(lu[..., :n * n], lu.shape[:-1] + (n, n)), 0, -2, -1))
    tol = float(np.sqrt(np.finfo(np.dtype(piv.dtype)).eps))
    return ops.all(ops.greater(ops.min(piv, -1), ops.multiply(ops.max(piv, -1), tol)))


def _by_conditioning(a, lu, v, closed, general):
    """closed(a, lu, v) where the closed forms through inv(a) hold, else general(a, v): by the
    values on concrete a, by ``cond`` (lax.cond, see _control) on traced ones (a compiled
    program runs one branch; a batch of per-example predicates runs both and selects)."""
    if type(a) is Tensor and type(lu) is Tensor:
        return closed(a, lu, v) if _invertible(a, lu) else general(a, v)

    def closed_quiet(x, f, y):
        # a batch runs this branch on its singular examples too (infinities, discarded)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return closed(x, f, y)
    return cond(_well_conditioned(lu, a.shape[-1]), closed_quiet,
                lambda x, f, y: general(x, y), a, lu, v)


def _adj_tangent_closed(a, lu, e):
    det = _s4(bind(P.lu_det_p, a, lu, part="det"))
    b = _inv_t(a, lu)
    tr = ops.sum(ops.multiply(b, e), (-2, -1), keepdims=True)
    return ops.multiply(ops.subtract(ops.multiply(b, tr), _mm(_mm(b, _mT(e)), b)), det)


def _adj_tangent_svd(a, e):
    u, q, vt, sign = _svd_frame(a)
    n = a.shape[-1]
    eye = _eye(n, q.dtype)
    q0 = ops.multiply(q, ops.subtract(1, eye))
    f = _mm(_mm(_mT(u), e), _mT(vt))
    g = ops.add(ops.negative(ops.multiply(f, q0)),
                ops.multiply(eye, _col(_mv(q0, _diag_of(f)))))
    return ops.multiply(_mm(_mm(u, _mT(g)), vt), sign)


def _adj_cotangent_closed(a, lu, w):
    det = _s4(bind(P.lu_det_p, a, lu, part="det"))
    b = _inv_t(a, lu)
    wb = ops.sum(ops.multiply(w, b), (-2, -1), keepdims=True)
    return ops.multiply(ops.subtract(ops.multiply(b, wb), _mm(_mm(b, _mT(w)), b)), det)


def _adj_cotangent_svd(a, w):
    u, q, vt, sign = _svd_frame(a)
    n = a.shape[-1]
    eye = _eye(n, q.dtype)
    q0 = ops.multiply(q, ops.subtract(1, eye))
    wt = _mm(_mm(_mT(u), w), _mT(vt))
    h = ops.add(ops.negative(ops.multiply(_mT(wt), q0)),
                ops.multiply(eye, _col(_mv(q0, _diag_of(wt)))))
    return ops.multiply(_mm(_mm(u, h), vt), sign)


def _adj_tangent(a, lu, e):
    """dC[E] of the cofactor matrix C of a (see above)."""
    return _by_conditioning(a, lu, e, _adj_tangent_closed, _adj_tangent_svd)


def _adj_cotangent(a, lu, w):
    """a's cotangent from a cotangent W of the cofactor matrix C of a (see above)."""
    return _by_conditioning(a, lu, w, _adj_cotangent_closed, _adj_cotangent_svd)


def _complex_part(a, part):
    """Complex matrices take lu_det for det only (holomorphic: the same rules); their sign and
    log|det| come from slogdet_p, whose rules hold the complex convention."""
    if a.dtype.kind == "c" and part != "det":
        raise NotImplementedError(f"lu_det(part={part!r}): derivatives of complex matrices go "
                                  f"through slogdet_p (nx_rune.linalg.slogdet)")


def _vjp_lu_det(g, ans, args, params, need):
    a, lu = args
    part = params["part"]
    _complex_part(a, part)
    if part == "sign" or not need[0]:
        return (None, None)
    # one primitive whatever the values (eager, traced, batched): g adj(a)^T for det, g inv(a)^T
    # for log|det| (adj(a)^T / +0 at a singular matrix: +-inf and NaN, as JAX's)
    return (bind(P.det_grad_p, a, lu, g, adjugate=part == "det"), None)


def _jvp_lu_det(tangents, ans, args, params):
    a, lu = args
    part = params["part"]
    _complex_part(a, part)
    if tangents[0] is None or part == "sign":
        return None
    ones = ops.ones_like(ans)
    if part == "det":
        return ops.sum(ops.multiply(bind(P.det_grad_p, a, lu, ones, adjugate=True),
                                    tangents[0]), (-2, -1))
    if type(a) is Tensor and type(lu) is Tensor and _zero_pivot(lu, a.shape[-1]):
        # tr(adj(a) E) / +0 on concrete singular matrices: +-inf, NaN where it is 0 (JAX's)
        adj = bind(P.det_grad_p, a, lu, ones, adjugate=True)
        det = ops.add(bind(P.lu_det_p, a, lu, part="det"), 0.0)     # -0.0 -> +0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            return ops.divide(ops.sum(ops.multiply(adj, tangents[0]), (-2, -1)), det)
    if type(a) is Tensor and type(lu) is Tensor:
        return ops.sum(ops.multiply(bind(P.det_grad_p, a, lu, ones), tangents[0]), (-2, -1))
    # traced: the singular form where det is 0 (the same values as eagerly, where inv(a)^T's
    # infinities times the tangent's zeros would be NaN), chosen by lax.cond when no matrix is
    # singular (a compiled program then runs one getri)

    def plain(x, f, t):
        return ops.sum(ops.multiply(bind(P.det_grad_p, x, f, ops.ones_like(ans)), t), (-2, -1))

    def mixed(x, f, t):
        det = ops.add(bind(P.lu_det_p, x, f, part="det"), 0.0)
        adj = ops.sum(ops.multiply(bind(P.det_grad_p, x, f, ops.ones_like(ans), adjugate=True),
                                   t), (-2, -1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return bind(P.where_p, ops.equal(det, 0), ops.divide(adj, det), plain(x, f, t))
    any_singular = ops.any(ops.equal(bind(P.lu_det_p, a, lu, part="det"), 0))
    return cond(any_singular, mixed, plain, a, lu, tangents[0])


_register(P.lu_det_p, _vjp_lu_det, _jvp_lu_det)


def _vjp_det_grad(c, ans, args, params, need):
    a, lu, s = args
    ct_a = ct_s = None
    if params.get("adjugate"):
        if need[0]:
            ct_a = _adj_cotangent(a, lu, _bmul(c, _s4(s)))
        if need[2]:
            cof = bind(P.det_grad_p, a, lu, ops.ones_like(s), adjugate=True)
            ct_s = ops.sum(_mul(c, cof), (-2, -1))
        return (ct_a, None, ct_s)
    b = _mT(bind(P.lu_inverse_p, a, lu))
    if need[0]:
        sc = _bmul(c, _s4(s))
        ct_a = _neg(_mm(_mm(b, _mT(sc)), b))
    if need[2]:
        ct_s = ops.sum(_mul(c, b), (-2, -1))
    return (ct_a, None, ct_s)


def _jvp_det_grad(tangents, ans, args, params):
    a, lu, s = args
    da, _, ds = tangents
    out = None
    if params.get("adjugate"):
        if da is not None:
            out = _bmul(_adj_tangent(a, lu, da), _s4(s))
        if ds is not None:
            term = bind(P.det_grad_p, a, lu, ds, adjugate=True)
            out = term if out is None else _add(out, term)
        return out
    b = _mT(bind(P.lu_inverse_p, a, lu))
    if da is not None:
        out = _neg(_bmul(_mm(_mm(b, _mT(da)), b), _s4(s)))
    if ds is not None:
        term = _bmul(b, _s4(ds))
        out = term if out is None else _add(out, term)
    return out


_register(P.det_grad_p, _vjp_det_grad, _jvp_det_grad)


def _norm2_grad_safe(ans):
    return bind(P.where_p, ops.equal(ans, 0), _c(1, ans), ans)


def _vjp_norm2_grad(c, ans, args, params, need):
    x, norm, g = args
    axes, keepdims = params["axes"], params["keepdims"]
    safe = _norm2_grad_safe(norm)
    ct_x = ct_n = ct_g = None
    if need[0]:
        ct_x = _mul(c, _unreduce(_div(g, safe), x.shape, axes, keepdims))
    if need[1] or need[2]:
        q = _div(bind(P.reduce_sum_p, _mul(c, x), axes=axes, keepdims=keepdims), safe)
        if need[2]:
            ct_g = q
        if need[1]:
            zero = ops.equal(norm, 0)
            ct_n = bind(P.where_p, zero, _c(0, norm), _neg(_div(_mul(q, g), safe)))
    return (ct_x, ct_n, ct_g)


def _jvp_norm2_grad(tangents, ans, args, params):
    x, norm, g = args
    dx, dn, dg = tangents
    axes, keepdims = params["axes"], params["keepdims"]
    safe = _norm2_grad_safe(norm)
    out = None
    if dx is not None:
        out = _mul(dx, _unreduce(_div(g, safe), x.shape, axes, keepdims))
    inner = None
    if dg is not None:
        inner = dg
    if dn is not None:
        zero = ops.equal(norm, 0)
        term = bind(P.where_p, zero, _c(0, norm), _neg(_div(_mul(g, dn), safe)))
        inner = term if inner is None else _add(inner, term)
    if inner is not None:
        term = _mul(x, _unreduce(_div(inner, safe), x.shape, axes, keepdims))
        out = term if out is None else _add(out, term)
    return out


_register(P.norm2_grad_p, _vjp_norm2_grad, _jvp_norm2_grad)


def _tsg_pair(args, params):
    """(P, Q, whether they are swapped) of triangular_solve_grad's formula."""
    u, v = args
    return (v, u, True) if params["trans"] else (u, v, False)


def _vjp_triangular_solve_grad(c, ans, args, params, need):
    p, q, swapped = _tsg_pair(args, params)
    t = _tri_read(c, params["lower"], params["unit_diagonal"])
    ct_p = _neg(_mm(t, q))
    ct_q = _neg(_mm(_mT(t), p))
    return (ct_q, ct_p) if swapped else (ct_p, ct_q)


def _jvp_triangular_solve_grad(tangents, ans, args, params):
    p, q, swapped = _tsg_pair(args, params)
    dp, dq = (tangents[1], tangents[0]) if swapped else tuple(tangents)
    out = None
    if dp is not None:
        out = _mm(dp, _mT(q))
    if dq is not None:
        term = _mm(p, _mT(dq))
        out = term if out is None else _add(out, term)
    return _neg(_tri_read(out, params["lower"], params["unit_diagonal"]))


_register(P.triangular_solve_grad_p, _vjp_triangular_solve_grad, _jvp_triangular_solve_grad)


# cho_solve(c, b, lower): x = a^-1 b with a = c c^T (lower) or c^T c (upper), read from c's
# triangle.  dx = a^-1 (db - da x) with da = dc c^T + c dc^T (dc^T c + c^T dc); reversed, b
# gets ct_b = a^-1 g (a symmetric) and c the triangle of -S c (lower) or -c S (upper),
# S = ct_b x^T + x ct_b^T: on concrete values the fused cho_solve_grad, else the formula.
# cho_solve_grad(c, x, u) = -tri(S C) (lower) / -tri(C S) (upper), C = tri(c),
# S = u x^T + x u^T: trilinear; with K = tri(cotangent), the VJP gives C -S K (lower) / -K S
# (upper), u -(K C^T + C K^T) x (lower) / -(C^T K + K^T C) x (upper), x the same with u.

def _cho_solve_grad_formula(c, x, u, lower):
    tc = _tri(c, lower)
    if lower:
        s_c = _add(_mm(u, _mm(_mT(x), tc)), _mm(x, _mm(_mT(u), tc)))
    else:
        s_c = _add(_mm(_mm(tc, u), _mT(x)), _mm(_mm(tc, x), _mT(u)))
    return _neg(_tri(s_c, lower))


def _vjp_cho_solve(g, ans, args, params, need):
    c = args[0]
    _real_only("cho_solve", c)
    lower = params["lower"]
    ct_b = bind(P.cho_solve_p, c, g, lower=lower)
    ct_c = None
    if need[0]:
        if type(ct_b) is Tensor and type(ans) is Tensor and type(c) is Tensor:
            ct_c = bind(P.cho_solve_grad_p, c, ans, ct_b, lower=lower)
        else:
            ct_c = _cho_solve_grad_formula(c, ans, ct_b, lower)
    return (ct_c, ct_b if need[1] else None)


def _jvp_cho_solve(tangents, ans, args, params):
    c = args[0]
    _real_only("cho_solve", c)
    dc, db = tangents
    lower = params["lower"]
    rhs = db
    if dc is not None:
        tc, dct = _tri(c, lower), _tri(dc, lower)
        if lower:       # da x = dc (c^T x) + c (dc^T x)
            dax = _add(_mm(dct, _mm(_mT(tc), ans)), _mm(tc, _mm(_mT(dct), ans)))
        else:           # da x = dc^T (c x) + c^T (dc x)
            dax = _add(_mm(_mT(dct), _mm(tc, ans)), _mm(_mT(tc), _mm(dct, ans)))
        rhs = _neg(dax) if rhs is None else _sub(rhs, dax)
    return bind(P.cho_solve_p, c, rhs, lower=lower)


_register(P.cho_solve_p, _vjp_cho_solve, _jvp_cho_solve)


def _vjp_cho_solve_grad(k, ans, args, params, need):
    c, x, u = args
    lower = params["lower"]
    tc, kt = _tri(c, lower), _tri(k, lower)
    ct_c = ct_x = ct_u = None
    if need[0]:
        if lower:       # -S K
            full = _add(_mm(u, _mm(_mT(x), kt)), _mm(x, _mm(_mT(u), kt)))
        else:           # -K S
            full = _add(_mm(_mm(kt, u), _mT(x)), _mm(_mm(kt, x), _mT(u)))
        ct_c = _neg(_tri(full, lower))
    if need[1] or need[2]:
        m = _mm(kt, _mT(tc)) if lower else _mm(_mT(tc), kt)
        sym = _add(m, _mT(m))
        if need[1]:
            ct_x = _neg(_mm(sym, u))
        if need[2]:
            ct_u = _neg(_mm(sym, x))
    return (ct_c, ct_x, ct_u)


def _jvp_cho_solve_grad(tangents, ans, args, params):
    c, x, u = args
    dc, dx, du = tangents
    lower = params["lower"]
    tc = _tri(c, lower)
    out = None
    ds = None
    if du is not None:
        m = _mm(du, _mT(x))
        ds = _add(m, _mT(m))
    if dx is not None:
        m = _mm(u, _mT(dx))
        m = _add(m, _mT(m))
        ds = m if ds is None else _add(ds, m)
    if ds is not None:
        out = _mm(ds, tc) if lower else _mm(tc, ds)
    if dc is not None:
        m = _mm(u, _mT(x))
        s = _add(m, _mT(m))
        dct = _tri(dc, lower)
        term = _mm(s, dct) if lower else _mm(dct, s)
        out = term if out is None else _add(out, term)
    return _neg(_tri(out, lower))


_register(P.cho_solve_grad_p, _vjp_cho_solve_grad, _jvp_cho_solve_grad)


# matrix_power(a, parts, n): the product rule through binary powering (backend.power_program):
# for each product V_k = V_i V_j, dV_k = dV_i V_j + V_i dV_j, reversed ct_i += ct_k V_j^T,
# ct_j += V_i^T ct_k.  The intermediate products are read from the residual ``parts`` on
# concrete values (one rule instead of one tape entry per product); traced values recompute
# them from a, so that higher derivatives flow through them (parts has no derivative).

def _power_values(a, parts, steps, concrete):
    """[a, the products of binary powering] as tensors (on concrete values, views of ``parts``
    for the products that are operands of later ones, None for the others)."""
    vals = [a]
    if concrete:
        used = {i for step in steps for i in step}
        m = a.shape[-1]
        whole = tuple((0, d) for d in parts.shape[:-3])
        for k in range(len(steps)):
            if k + 1 not in used:
                vals.append(None)
                continue
            part = bind(P.shrink_p, parts, limits=whole + ((k, k + 1), (0, m), (0, m)))
            vals.append(bind(P.reshape_p, part, shape=a.shape))
    else:
        for i, j in steps:
            vals.append(_mm(vals[i], vals[j]))
    return vals


def _vjp_matrix_power(g, ans, args, params, need):
    a, parts = args
    steps, res = la.power_program(params["n"])
    concrete = type(a) is Tensor and type(parts) is Tensor and type(g) is Tensor
    vals = _power_values(a, parts, steps, concrete)
    trans = {}                     # each operand's transpose, once

    def t(i):
        v = trans.get(i)
        if v is None:
            v = trans[i] = _mT(vals[i])
        return v
    cts = [None] * len(vals)
    cts[res] = g
    for k in range(len(steps) - 1, -1, -1):
        c = cts[k + 1]
        if c is None:
            continue
        i, j = steps[k]
        for idx, term in ((i, _mm(c, t(j))), (j, _mm(t(i), c))):
            cts[idx] = term if cts[idx] is None else _add(cts[idx], term)
    return (cts[0], None)


def _jvp_matrix_power(tangents, ans, args, params):
    a, parts = args
    da = tangents[0]
    if da is None:
        return None
    steps, res = la.power_program(params["n"])
    vals = _power_values(a, parts, steps, type(a) is Tensor and type(parts) is Tensor)
    dvals = [da]
    for i, j in steps:
        dvals.append(_add(_mm(dvals[i], vals[j]), _mm(vals[i], dvals[j])))
    return dvals[res]


_register(P.matrix_power_p, _vjp_matrix_power, _jvp_matrix_power)
defnondiff(P.matrix_power_parts_p)


# -- batching: norm2 is a reduction; the others act on trailing matrices (the batch goes first),
# but for norm2_grad, whose operands x, ans, g keep their own shapes (ans and g reduced over
# ``axes``) ------------------------------------------------------------------------------------

defreduction(P.norm2_p)
for _p in (P.lu_factor_p, P.lu_inverse_p):
    defleading(_p)
defleading(P.cholesky_grad_p)
for _p in (P.lu_det_p, P.det_grad_p, P.triangular_solve_grad_p):
    defleading(_p)


def _batch_norm2_grad(size, args, dims, *, axes, keepdims):
    x, ans, g = args
    dx, da, dg = dims
    nd = x.ndim - (dx is not None)
    axes = tuple(_norm(a, nd) for a in axes)
    x, ans, g = batch_at(x, dx, size, 0), batch_at(ans, da, size, 0), batch_at(g, dg, size, 0)
    return bind(P.norm2_grad_p, x, ans, g, axes=tuple(a + 1 for a in axes),
                keepdims=keepdims), 0


BATCH_RULES[P.norm2_grad_p] = _batch_norm2_grad
for _p in (P.cho_solve_p, P.cho_solve_grad_p):
    defleading(_p)
for _p in (P.matrix_power_parts_p, P.matrix_power_p):
    defleading(_p)
