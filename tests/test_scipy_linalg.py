"""nx.scipy.linalg: JAX's jax.scipy.linalg surface with SciPy's signatures.  Values against
SciPy (float32/64, complex, batches), derivatives against float64 finite differences, jit and
vmap against the eager values, bad input."""
import numpy as np
import pytest
import scipy.linalg as sl

import nx_rune as nx
from nx_rune.scipy import linalg as L

RNG = np.random.default_rng(29)


def _gen(n, shift=3.0, batch=()):
    return RNG.standard_normal(batch + (n, n)) + shift * np.eye(n)


def _spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _pos_eig(n, batch=()):
    # non-symmetric, distinct positive real eigenvalues
    q = RNG.uniform(-1, 1, batch + (n, n)) + 2 * np.eye(n)
    d = 1.0 + np.arange(n) * 0.7
    return (q * d) @ np.linalg.inv(q)


A = _gen(4)
SPD = _spd(4)
B = RNG.standard_normal((4, 2))


def close(got, want, tol=1e-10):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def fd_grad(f, x, w, eps=1e-6):
    """The gradient of sum(f(x) * w) by central differences (float64)."""
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = np.sum((f(x + e) - f(x - e)) * w).real / (2 * eps)
    return g


def check_grad(f_nx, f_ref, x, tol=1e-6):
    w = RNG.standard_normal(np.shape(f_ref(x)))
    got = nx.grad(lambda x: nx.sum(nx.real(f_nx(x)) * w))(nx.asarray(x))
    close(got, fd_grad(lambda x: np.real(f_ref(x)), x, w), tol)


def check_jvp(f_nx, f_ref, x, tol=1e-6):
    t = RNG.standard_normal(x.shape)
    _, jv = nx.jvp(f_nx, (nx.asarray(x),), (nx.asarray(t),))
    close(jv, (f_ref(x + 1e-6 * t) - f_ref(x - 1e-6 * t)) / 2e-6, tol)


# -- the surface ----------------------------------------------------------------------------

JAX_NAMES = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh",
             "eigh_tridiagonal", "expm", "expm_frechet", "funm", "hessenberg", "hilbert", "inv",
             "lu", "lu_factor", "lu_solve", "polar", "qr", "rsf2csf", "schur", "solve",
             "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz"]


def test_jax_surface_is_there():
    # the functions of jax.scipy.linalg (jax 0.10.2) that take a matrix, plus SciPy's
    # eig/eigvals/logm, the Lyapunov solvers and solve_banded
    for name in JAX_NAMES + ["eig", "eigvals", "logm", "solve_continuous_lyapunov",
                             "solve_discrete_lyapunov", "solve_banded"]:
        assert name in L.__all__ and callable(getattr(L, name)), name
        assert getattr(L, name).__doc__, name


# -- forward values against SciPy -----------------------------------------------------------

@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_det_inv(lower):
    close(L.cholesky(SPD, lower=lower), sl.cholesky(SPD, lower=lower))
    close(L.det(A), sl.det(A))
    close(L.inv(A), sl.inv(A))


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos", "diagonal",
                                      "upper triangular", "lower triangular", "tridiagonal"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_assume_a(assume_a, lower):
    # a non-symmetric matrix for sym/her/pos: only the triangle ``lower`` names is read
    a = SPD + np.triu(A, 1) if assume_a in ("sym", "her", "pos") else A
    close(L.solve(a, B, lower=lower, assume_a=assume_a),
          sl.solve(a, B, lower=lower, assume_a=assume_a))
    close(L.solve(a, B[:, 0], lower=lower, assume_a=assume_a),
          sl.solve(a, B[:, 0], lower=lower, assume_a=assume_a))


def test_solve_transposed_and_float32():
    close(L.solve(A, B, transposed=True), sl.solve(A, B, transposed=True))
    x = L.solve(A.astype(np.float32), B.astype(np.float32))
    assert x.dtype == np.float32
    close(x, sl.solve(A, B), 1e-4)


def test_lu_forms():
    p, l_, u = L.lu(A)
    for got, want in zip((p, l_, u), sl.lu(A)):
        close(got, want)
    close(L.lu(A, permute_l=True)[0], sl.lu(A, permute_l=True)[0])
    close(L.lu(A, p_indices=True)[0], sl.lu(A, p_indices=True)[0])
    lu_, piv = L.lu_factor(A)
    lu2, piv2 = sl.lu_factor(A)
    close(lu_, lu2)
    np.testing.assert_array_equal(np.asarray(piv), piv2)
    for t in (0, 1, 2):
        close(L.lu_solve((lu_, piv), B, trans=t), sl.lu_solve((lu2, piv2), B, trans=t))


def test_lu_complex_and_batched():
    a = _gen(3, batch=(2,)) + 1j * RNG.standard_normal((2, 3, 3))
    b = RNG.standard_normal((3, 2)) + 0j
    for k in range(2):
        for got, want in zip(L.lu(a)[1:], sl.lu(a[k])[1:]):
            close(np.asarray(got)[k], want)
    x = L.lu_solve(L.lu_factor(a), b, trans=2)
    for k in range(2):
        close(np.asarray(x)[k], sl.lu_solve(sl.lu_factor(a[k]), b, trans=2))


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_modes(mode):
    a = RNG.standard_normal((5, 3))
    got, want = L.qr(a, mode=mode), sl.qr(a, mode=mode)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(g, w)


def test_svd_eigh_eig():
    for g, w in zip(L.svd(A), sl.svd(A)):
        close(g, w)
    close(L.svd(A, compute_uv=False), sl.svd(A, compute_uv=False))
    for lower in (True, False):
        a = SPD + np.triu(A, 1)         # only one triangle is read
        w, v = L.eigh(a, lower=lower)
        w2, v2 = sl.eigh(a, lower=lower)
        close(w, w2)
        close(np.abs(np.asarray(v)), np.abs(v2))
    w, v = L.eigh(A + A.T, SPD)         # generalized, type 1
    w2, v2 = sl.eigh(A + A.T, SPD)
    close(w, w2)
    close(np.abs(np.asarray(v)), np.abs(v2), 1e-8)
    close(L.eigh(SPD, eigvals_only=True, subset_by_index=(1, 2)),
          sl.eigh(SPD, eigvals_only=True, subset_by_index=(1, 2)))
    w, vl, vr = L.eig(A, left=True)
    w2, vl2, vr2 = sl.eig(A, left=True)
    o, o2 = np.argsort(np.asarray(w)), np.argsort(w2)
    close(np.asarray(w)[o], w2[o2])
    close(np.abs(np.asarray(vl)[:, o]), np.abs(vl2[:, o2]))
    close(np.abs(np.asarray(vr)[:, o]), np.abs(vr2[:, o2]))
    close(np.sort_complex(np.asarray(L.eigvals(A))), np.sort_complex(sl.eigvals(A)))


def test_eigh_tridiagonal():
    d, e = RNG.standard_normal(5), RNG.standard_normal(4)
    w, v = L.eigh_tridiagonal(d, e)
    w2, v2 = sl.eigh_tridiagonal(d, e)
    close(w, w2)
    close(np.abs(np.asarray(v)), np.abs(v2))
    close(L.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
          sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)))


def test_special_matrices():
    close(L.block_diag(A, B, 3.0, [1, 2]), sl.block_diag(A, B, 3.0, [1, 2]))
    close(L.toeplitz([1, 2, 3.0], [1, 5, 6, 7.0]), sl.toeplitz([1, 2, 3.0], [1, 5, 6, 7.0]))
    close(L.toeplitz([1, 2 + 1j, 3.0]), sl.toeplitz([1, 2 + 1j, 3.0]))
    close(L.hilbert(4), sl.hilbert(4), 1e-6)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_hessenberg_rsf2csf(output):
    t, z = L.schur(A, output=output)
    t2, z2 = sl.schur(A, output=output)
    close(t, t2)
    close(z, z2)
    h, q = L.hessenberg(A, calc_q=True)
    h2, q2 = sl.hessenberg(A, calc_q=True)
    close(h, h2)
    close(q, q2)
    tr, zr = sl.schur(A)
    for g, w in zip(L.rsf2csf(tr, zr), sl.rsf2csf(tr, zr)):
        close(g, w)


def test_matrix_functions_values():
    close(L.sqrtm(SPD), sl.sqrtm(SPD))
    pe = _pos_eig(3) + 0j
    close(L.sqrtm(pe), sl.sqrtm(pe))
    close(L.logm(SPD), sl.logm(SPD))
    a = _pos_eig(4)
    close(L.logm(a), sl.logm(a))
    close(L.funm(A, nx.exp), sl.funm(A, np.exp), 1e-8)
    close(L.funm(A, nx.sin), sl.funm(A, np.sin), 1e-8)
    for side, a in (("right", A[:, :3]), ("left", A[:3])):
        for g, w in zip(L.polar(a, side), sl.polar(a, side)):
            close(g, w)
    e = RNG.standard_normal((4, 4))
    for g, w in zip(L.expm_frechet(0.3 * A, e), sl.expm_frechet(0.3 * A, e)):
        close(g, w, 1e-9)


def test_matrix_functions_float32_and_batches():
    a = _spd(3, batch=(2,))
    x = L.sqrtm(a.astype(np.float32))
    assert x.dtype == np.float32
    close(x, np.stack([sl.sqrtm(m) for m in a]), 1e-4)
    close(L.logm(a), np.stack([sl.logm(m) for m in a]))
    close(L.funm(a, nx.exp), np.stack([sl.expm(m) for m in a]), 1e-8)


def test_real_sqrtm_and_logm_without_real_result_are_nan():
    # a negative eigenvalue: SciPy returns a complex root, nx keeps the dtype (NaN), as nx.sqrt
    a = np.array([[-4.0, 1.0], [0.5, 3.0]])
    assert np.isnan(np.asarray(L.sqrtm(a))).all()
    close(L.sqrtm(a + 0j), sl.sqrtm(a + 0j))
    assert np.isnan(np.asarray(L.logm(a))).all()


def test_sylvester_and_lyapunov():
    b = _gen(3, 2.0)
    q = RNG.standard_normal((4, 3))
    close(L.solve_sylvester(A, b, q), sl.solve_sylvester(A, b, q))
    ac = A + 1j * RNG.standard_normal((4, 4))
    x = np.asarray(L.solve_sylvester(ac, b, q))
    close(ac @ x + x @ b, q)
    close(L.solve_continuous_lyapunov(A, SPD), sl.solve_continuous_lyapunov(A, SPD))
    for method in ("direct", "bilinear"):
        close(L.solve_discrete_lyapunov(0.2 * A, SPD, method),
              sl.solve_discrete_lyapunov(0.2 * A, SPD, method))
    x = L.solve_sylvester(A.astype(np.float32), b.astype(np.float32), q.astype(np.float32))
    assert x.dtype == np.float32
    close(x, sl.solve_sylvester(A, b, q), 1e-4)


# -- broadcasting of the solves (SciPy 1.17's and JAX's rules) ----------------------------

BCAST = [((2, 4, 4), (4, 3)), ((2, 4, 4), (4,)), ((2, 4, 4), (2, 4, 3)), ((4, 4), (2, 4, 3)),
         ((2, 4, 4), (3, 2, 4, 1))]


@pytest.mark.parametrize("ashape,bshape", BCAST)
def test_solves_broadcast_as_scipy(ashape, bshape):
    a = _gen(4, batch=ashape[:-2])
    b = RNG.standard_normal(bshape)
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    close(L.solve(a, b), sl.solve(a, b))
    close(L.solve_triangular(a, b), sl.solve_triangular(a, b))
    c = np.linalg.cholesky(spd)
    close(L.cho_solve((c, True), b), sl.cho_solve((c, True), b))
    close(L.lu_solve(L.lu_factor(a), b), sl.lu_solve(sl.lu_factor(a), b))
    close(L.solve(spd, b, assume_a="pos"), sl.solve(spd, b, assume_a="pos"))


def test_solves_refuse_mismatched_rhs():
    a = _gen(4)
    for fn in (lambda b: L.solve(a, b), lambda b: L.lu_solve(L.lu_factor(a), b),
               lambda b: L.solve_triangular(a, b)):
        with pytest.raises(ValueError, match="b"):
            fn(np.ones((3, 2)))


# -- derivatives against finite differences ------------------------------------------------

DERIVS = {
    "sqrtm": (lambda x: L.sqrtm(x), sl.sqrtm, lambda: SPD),
    "sqrtm_nonsym": (lambda x: L.sqrtm(x), sl.sqrtm, lambda: _pos_eig(3)),
    "logm": (lambda x: L.logm(x), sl.logm, lambda: _pos_eig(3)),
    "polar_u": (lambda x: L.polar(x)[0], lambda x: sl.polar(x)[0], lambda: A),
    "polar_p_left": (lambda x: L.polar(x, "left")[1], lambda x: sl.polar(x, "left")[1],
                     lambda: A[:3]),
    "lu_l": (lambda x: L.lu(x)[1], lambda x: sl.lu(x)[1], lambda: A),
    "lu_u": (lambda x: L.lu(x)[2], lambda x: sl.lu(x)[2], lambda: A),
    "lu_factor": (lambda x: L.lu_factor(x)[0], lambda x: sl.lu_factor(x)[0], lambda: A),
    "lu_solve_t": (lambda x: L.lu_solve(L.lu_factor(x), B, trans=1),
                   lambda x: sl.lu_solve(sl.lu_factor(x), B, trans=1), lambda: A),
    "sylvester_a": (lambda x: L.solve_sylvester(x, A[:2, :2] + 3 * np.eye(2), B),
                    lambda x: sl.solve_sylvester(x, A[:2, :2] + 3 * np.eye(2), B), lambda: A),
    "sylvester_b": (lambda x: L.solve_sylvester(A, x, B), lambda x: sl.solve_sylvester(A, x, B),
                    lambda: _gen(2)),
    "sylvester_q": (lambda x: L.solve_sylvester(A, np.eye(2) * 2, x),
                    lambda x: sl.solve_sylvester(A, np.eye(2) * 2, x), lambda: B),
    "lyapunov": (lambda x: L.solve_continuous_lyapunov(x, SPD),
                 lambda x: sl.solve_continuous_lyapunov(x, SPD), lambda: A),
    "discrete_lyapunov": (lambda x: L.solve_discrete_lyapunov(0.2 * x, SPD),
                          lambda x: sl.solve_discrete_lyapunov(0.2 * x, SPD), lambda: A),
    "discrete_lyapunov_bilinear": (
        lambda x: L.solve_discrete_lyapunov(0.2 * x, SPD, "bilinear"),
        lambda x: sl.solve_discrete_lyapunov(0.2 * x, SPD, "bilinear"), lambda: A),
    "expm_frechet": (lambda x: L.expm_frechet(0.3 * x, SPD)[1],
                     lambda x: sl.expm_frechet(0.3 * x, SPD)[1], lambda: A),
    "eigh_generalized": (lambda x: L.eigh(SPD, x @ x.T + np.eye(4), eigvals_only=True),
                         lambda x: sl.eigh(SPD, x @ x.T + np.eye(4), eigvals_only=True),
                         lambda: A),
    "eigh_tridiagonal": (lambda x: L.eigh_tridiagonal(x, x[1:] * 0.5, eigvals_only=True),
                         lambda x: sl.eigh_tridiagonal(x, x[1:] * 0.5, eigvals_only=True),
                         lambda: np.array([0.5, -1.0, 2.0, 3.5])),
}


@pytest.mark.parametrize("name", sorted(DERIVS))
def test_derivatives_against_finite_differences(name):
    f_nx, f_ref, x = DERIVS[name]
    x0 = x()
    check_grad(f_nx, f_ref, x0)
    check_jvp(f_nx, f_ref, x0)


@pytest.mark.parametrize("func,ref", [(nx.exp, sl.expm), (nx.sin, sl.sinm)])
def test_funm_gradient(func, ref):
    check_grad(lambda x: L.funm(x, func), ref, 0.3 * A)


def test_second_derivatives_of_sqrtm_and_sylvester():
    # hessian-vector products against differences of the (exact, tested) first derivative
    b2 = _gen(2)
    for f in (lambda x: nx.sum(L.sqrtm(x) ** 2), lambda x: nx.sum(L.logm(x) ** 2),
              lambda x: nx.sum(L.solve_sylvester(x, b2, B) ** 2)):
        x0 = SPD
        v = RNG.standard_normal(x0.shape)
        g = nx.grad(f)
        _, hv = nx.jvp(g, (nx.asarray(x0),), (nx.asarray(v),))
        want = (np.asarray(g(nx.asarray(x0 + 1e-5 * v))) -
                np.asarray(g(nx.asarray(x0 - 1e-5 * v)))) / 2e-5
        close(hv, want, 1e-5)


def test_sqrtm_gradient_of_complex_input_is_holomorphic():
    # d sum(W * sqrtm(A)) / dA for complex A, the transpose (JAX's) convention: sum(ct * dA)
    # equals the directional derivative along any complex dA
    a = SPD + 0.3j * RNG.standard_normal((4, 4))
    w = RNG.standard_normal((4, 4))
    ct = np.asarray(nx.vjp(lambda x: L.sqrtm(x), nx.asarray(a))[1](nx.asarray(w + 0j))[0])
    da = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    want = np.sum(w * (sl.sqrtm(a + 1e-6 * da) - sl.sqrtm(a - 1e-6 * da)) / 2e-6)
    np.testing.assert_allclose(np.sum(ct * da), want, rtol=1e-6)


def test_schur_and_hessenberg_refuse_derivatives():
    for f in (lambda x: nx.sum(L.schur(x)[0]), lambda x: nx.sum(L.hessenberg(x))):
        with pytest.raises(NotImplementedError, match="schur|hessenberg"):
            nx.grad(f)(nx.asarray(A))


# -- jit and vmap ---------------------------------------------------------------------------

TRANSFORMED = {
    "sqrtm": (lambda x: L.sqrtm(x), _spd),
    "logm": (lambda x: L.logm(x), _spd),
    "funm": (lambda x: L.funm(x, nx.exp), _spd),
    "schur": (lambda x: L.schur(x)[0], _gen),
    "schur_complex": (lambda x: L.schur(x, "complex")[1], _gen),
    "hessenberg": (lambda x: L.hessenberg(x), _gen),
    "polar": (lambda x: L.polar(x)[1], _gen),
    "lu": (lambda x: L.lu(x)[2], _gen),
    "lu_solve": (lambda x: L.lu_solve(L.lu_factor(x), B[:3]), _gen),
    "solve_sylvester": (lambda x: L.solve_sylvester(x, x.T + 1.0, x), _gen),
    "lyapunov": (lambda x: L.solve_continuous_lyapunov(x, x @ x.T), _gen),
    "discrete_lyapunov": (lambda x: L.solve_discrete_lyapunov(0.2 * x, x @ x.T), _gen),
    "expm_frechet": (lambda x: L.expm_frechet(x * 0.1, x)[1], _gen),
    "eigh": (lambda x: L.eigh(x)[0], _spd),
    "solve_pos": (lambda x: L.solve(x, B[:3], assume_a="pos"), _spd),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_jit_and_vmap_match_eager(name):
    f, make = TRANSFORMED[name]
    xs = make(3, batch=(2,)) if make is _spd else make(3, batch=(2,))
    eager = np.stack([np.asarray(f(nx.asarray(x))) for x in xs])
    close(nx.jit(f)(nx.asarray(xs[0])), eager[0], 1e-9)
    close(nx.vmap(f)(nx.asarray(xs)), eager, 1e-9)
    close(nx.jit(nx.vmap(f))(nx.asarray(xs)), eager, 1e-9)


def test_grad_under_jit_and_vmap():
    xs = _spd(3, batch=(2,))
    g = nx.grad(lambda x: nx.sum(L.sqrtm(x) * np.arange(9.0).reshape(3, 3)))
    eager = np.stack([np.asarray(g(nx.asarray(x))) for x in xs])
    close(nx.jit(g)(nx.asarray(xs[0])), eager[0], 1e-9)
    close(nx.vmap(g)(nx.asarray(xs)), eager, 1e-9)


def test_lu_forms_traced_match_scipy():
    # the traced path (the lu_factor primitive and the pivots read as a permutation), batched
    a = _gen(4, batch=(2,))
    for k in range(2):
        want_p, want_l, want_u = sl.lu(a[k])
        lu2, piv2 = sl.lu_factor(a[k])
        got = nx.vmap(lambda x: L.lu(x))(nx.asarray(a))
        for g, w in zip(got, (want_p, want_l, want_u)):
            close(np.asarray(g)[k], w)
        close(np.asarray(nx.jit(lambda x: L.lu(x, permute_l=True)[0])(nx.asarray(a[k]))),
              sl.lu(a[k], permute_l=True)[0])
        np.testing.assert_array_equal(
            np.asarray(nx.jit(lambda x: L.lu(x, p_indices=True)[0])(nx.asarray(a[k]))),
            sl.lu(a[k], p_indices=True)[0])
        lu_, piv = nx.jit(L.lu_factor)(nx.asarray(a[k]))
        close(lu_, lu2)
        np.testing.assert_array_equal(np.asarray(piv), piv2)
        for t in (0, 1, 2):
            close(nx.jit(lambda lu_, piv, b: L.lu_solve((lu_, piv), b, trans=t))(
                lu_, piv, nx.asarray(B)), sl.lu_solve((lu2, piv2), B, trans=t))


def test_rsf2csf_under_jit_raises_clearly():
    t, z = sl.schur(A)
    with pytest.raises(NotImplementedError, match="rsf2csf"):
        nx.jit(lambda t, z: L.rsf2csf(t, z)[0])(nx.asarray(t), nx.asarray(z))


# -- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,arg", [
    (L.sqrtm, "A"), (L.logm, "A"), (lambda a: L.funm(a, nx.exp), "A"), (L.schur, "a"),
    (L.hessenberg, "a"), (L.lu, "a"), (L.lu_factor, "a"), (L.det, "a"), (L.inv, "a"),
    (L.cholesky, "a"), (lambda a: L.solve_continuous_lyapunov(a, a), "a")])
def test_non_square_is_refused_naming_the_argument(fn, arg):
    with pytest.raises((ValueError, np.linalg.LinAlgError), match=arg):
        fn(np.ones((3, 2)))
    with pytest.raises((ValueError, np.linalg.LinAlgError), match=arg):
        fn(np.ones(3))


def test_bad_arguments():
    with pytest.raises(ValueError, match="q"):
        L.solve_sylvester(A, np.eye(2), np.ones((3, 2)))
    with pytest.raises(ValueError, match="assume_a"):
        L.solve(A, B, assume_a="nope")
    with pytest.raises(ValueError, match="mode"):
        L.qr(A, mode="raw")
    with pytest.raises(NotImplementedError, match="pivoting"):
        L.qr(A, pivoting=True)
    with pytest.raises(ValueError, match="output"):
        L.schur(A, output="x")
    with pytest.raises(ValueError, match="side"):
        L.polar(A, side="up")
    with pytest.raises(ValueError, match="piv"):
        L.lu_solve((A, np.zeros(3, np.int32)), B)
    with pytest.raises(TypeError, match="lu_and_piv"):
        L.lu_solve(A, B)
    with pytest.raises(TypeError, match="func"):
        L.funm(A, 3)
    with pytest.raises(ValueError, match="e"):
        L.eigh_tridiagonal(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="a: array must not contain infs"):
        L.solve(np.full((2, 2), np.nan), np.ones(2))


def test_nan_input_gives_nan_not_a_crash():
    a = np.full((3, 3), np.nan)
    for f in (L.sqrtm, L.logm, lambda a: L.schur(a)[0], L.hessenberg,
              lambda a: L.solve_sylvester(a, a, a)):
        assert np.isnan(np.asarray(nx.jit(f)(nx.asarray(a)))).all()
