"""Rules of the Schur-based primitives: schur, hessenberg, matfunc (sqrtm, logm) and sylvester.

- ``schur`` and ``hessenberg`` are residuals without a derivative (the factors are not unique:
  the front end refuses to differentiate them, see ``nx_rune.scipy.linalg``).
- ``matfunc``: the Frechet derivative of a primary matrix function f is the upper-right block
  of f([[A, E], [0, A]]) (Higham, "Functions of Matrices", 2008, Thm 3.6), exact; under the
  bilinear pairing sum(G * L(A, E)) its transpose is L(A^T, G) (the holomorphic convention of
  solve and inv for complex A; the real part for real A is automatic).  sqrtm's takes the
  cheaper Sylvester form: X dX + dX X = dA, so dX = sylvester(X, X, dA) and the cotangent
  sylvester(X^T, X^T, G).
- ``sylvester``: x = S(a, b, q) solves a x + x b = q; dx = S(a, b, dq - da x - x db); the
  cotangents are ct_q = S(a^T, b^T, g), ct_a = -ct_q x^T, ct_b = -x^T ct_q.

All written with primitives, so they differentiate in turn.  Batching: over leading axes.

May import: the front end, primitives, tensor and this package's modules.
"""
from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defleading
from nx_rune.autodiff.rules._common import _neg, _register, _sub, defnondiff
from nx_rune.autodiff.rules.linalg import _mm, _mT
from nx_rune.primitives import bind


def _sylv(a, b, q):
    return bind(P.sylvester_p, a, b, q)


def _block(a, e):
    """[[a, e], [0, a]] for each matrix (..., 2n, 2n)."""
    zeros = ops.zeros_like(a)
    top = bind(P.cat_p, a, e, axis=a.ndim - 1)
    bottom = bind(P.cat_p, zeros, a, axis=a.ndim - 1)
    return bind(P.cat_p, top, bottom, axis=a.ndim - 2)


def _upper_right(x, n):
    batch = x.shape[:-2]
    whole = tuple((0, d) for d in batch)
    return bind(P.shrink_p, x, limits=whole + ((0, n), (n, 2 * n)))


def _frechet(a, e, fn):
    """L_fn(a, e): the upper-right block of fn([[a, e], [0, a]])."""
    if e.dtype != a.dtype:
        a = ops.astype(a, e.dtype)
    return _upper_right(bind(P.matfunc_p, _block(a, e), fn=fn), a.shape[-1])


def _vjp_matfunc(g, ans, args, params, need):
    a = args[0]
    fn = params["fn"]
    if fn == "sqrtm":
        xt = _mT(ans)
        return (_sylv(xt, xt, g),)
    return (_frechet(_mT(a), g, fn),)


def _jvp_matfunc(tangents, ans, args, params):
    if params["fn"] == "sqrtm":
        return _sylv(ans, ans, tangents[0])
    return _frechet(args[0], tangents[0], params["fn"])


def _vjp_sylvester(g, ans, args, params, need):
    a, b, _ = args
    ct_q = _sylv(_mT(a), _mT(b), g)
    ct_a = _neg(_mm(ct_q, _mT(ans))) if need[0] else None
    ct_b = _neg(_mm(_mT(ans), ct_q)) if need[1] else None
    return (ct_a, ct_b, ct_q if need[2] else None)


def _jvp_sylvester(tangents, ans, args, params):
    a, b, _ = args
    ta, tb, tq = tangents
    rhs = tq
    for t, term in ((ta, lambda t: _mm(t, ans)), (tb, lambda t: _mm(ans, t))):
        if t is not None:
            d = term(t)
            rhs = _neg(d) if rhs is None else _sub(rhs, d)
    return _sylv(a, b, rhs)


defnondiff(P.schur_p)
defnondiff(P.hessenberg_p)
_register(P.matfunc_p, _vjp_matfunc, _jvp_matfunc)
_register(P.sylvester_p, _vjp_sylvester, _jvp_sylvester)
for _prim in (P.schur_p, P.hessenberg_p, P.matfunc_p, P.sylvester_p):
    defleading(_prim)
