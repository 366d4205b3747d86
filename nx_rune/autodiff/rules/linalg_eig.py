"""Rules of the ``eig`` primitive (general square matrices; packed complex (w, V)).

JVP (JAX's): with M = V^-1 dA V, dw = diag(M) and dV = V (F * M), F_ij = 1 / (w_j - w_i) off
the diagonal and 0 on it, minus V diag(Re(diag(V^H dV))) so that each column keeps its unit
length (eig's normalization; the phase left is the one with Re(v_j^H dv_j) = 0).  VJP: its
transpose under the pairing Re sum(ct * t): ct_A = V^-T (diag(gw) + F * (V^T gV')) V^T, gV' =
gV - conj(V) diag(Re(diag(V^T gV))); the real part for a real matrix.  Both are written with
front-end ops (solves, products), so they differentiate in turn.  Batching: over leading axes.

May import: the front end, primitives, tensor and this package's modules.
"""
from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defleading
from nx_rune.autodiff.rules._common import _register, _sub
from nx_rune.autodiff.rules.linalg import (
    _cj,
    _diag_mat,
    _diag_of,
    _gap_inverse,
    _known_zero,
    _mm,
    _mT,
    _pack_la,
    _re,
    _row,
)
from nx_rune.frontend.linalg.eig import unpack_eig
from nx_rune.primitives import bind


def _solve(a, b):
    return bind(P.solve_p, a, b)


def _keep_norm(v, dv):
    """dV minus V diag(Re(diag(V^H dV))): the tangent that keeps each column's length."""
    return _sub(dv, ops.multiply(v, _row(_re(ops.sum(ops.multiply(_cj(v), dv), -2)))))


def _jvp_eig(tangents, ans, args, params):
    a = args[0]
    n = a.shape[-1]
    w, v = unpack_eig(ans, n)
    da = tangents[0]
    if da.dtype != v.dtype:
        da = ops.astype(da, v.dtype)
    m = _solve(v, _mm(da, v))
    dv = _keep_norm(v, _mm(v, ops.multiply(_gap_inverse(w, False), m)))
    return _pack_la([_diag_of(m), dv], a.shape[:-2])


def _vjp_eig(g, ans, args, params, need):
    a = args[0]
    n = a.shape[-1]
    w, v = unpack_eig(ans, n)
    gw, gv = unpack_eig(g, n)
    core = _diag_mat(gw)
    if not _known_zero(gv):
        vt = _mT(v)
        d = _re(ops.sum(ops.multiply(v, gv), -2))         # Re(diag(V^T gV))
        gv = _sub(gv, ops.multiply(_cj(v), _row(d)))
        core = ops.add(core, ops.multiply(_gap_inverse(w, False), _mm(vt, gv)))
    vt = _mT(v)
    ct = _solve(vt, _mm(core, vt))
    if a.dtype.kind != "c":
        ct = ops.astype(ops.real(ct), a.dtype)
    return (ct,)


_register(P.eig_p, _vjp_eig, _jvp_eig)
defleading(P.eig_p)
