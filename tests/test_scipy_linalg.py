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


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_pivoting(mode):
    a = RNG.standard_normal((5, 3))
    got, want = L.qr(a, mode=mode, pivoting=True), sl.qr(a, mode=mode, pivoting=True)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(g, w)
    assert got[-1].dtype == np.int32


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
def test_funm_derivatives(func, ref):
    check_grad(lambda x: L.funm(x, func), ref, 0.3 * A)
    check_jvp(lambda x: L.funm(x, func), ref, 0.3 * A)
    # second order: the hessian-vector product against differences of the gradient
    g = nx.grad(lambda x: nx.sum(L.funm(x, func) * JW4))
    v = RNG.standard_normal((4, 4))
    _, hv = nx.jvp(g, (nx.asarray(0.3 * A),), (nx.asarray(v),))
    want = (np.asarray(g(nx.asarray(0.3 * A + 1e-5 * v))) -
            np.asarray(g(nx.asarray(0.3 * A - 1e-5 * v)))) / 2e-5
    close(hv, want, 1e-6)


JW4 = RNG.standard_normal((4, 4))


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


@pytest.mark.parametrize("fn,ref", [(L.sqrtm, sl.sqrtm), (L.logm, sl.logm)])
def test_matrix_function_gradient_of_complex_input_is_holomorphic(fn, ref):
    # d sum(W * f(A)) / dA for complex A, the transpose (JAX's) convention: sum(ct * dA)
    # equals the directional derivative along any complex dA
    a = SPD + 0.3j * RNG.standard_normal((4, 4))
    w = RNG.standard_normal((4, 4))
    ct = np.asarray(nx.vjp(fn, nx.asarray(a))[1](nx.asarray(w + 0j))[0])
    da = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    want = np.sum(w * (ref(a + 1e-6 * da) - ref(a - 1e-6 * da)) / 2e-6)
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
    "solve_sym": (lambda x: L.solve(x, x[0], assume_a="sym"), _gen),
    "solve_tridiagonal": (lambda x: L.solve(x, x[0], assume_a="tridiagonal"), _gen),
    "toeplitz": (lambda x: L.toeplitz(x[0], x[1]), _gen),
    "block_diag": (lambda x: L.block_diag(x, x[:2, :2]), _gen),
    "eigh_tridiagonal": (lambda x: L.eigh_tridiagonal(x[0], x[1, :2], eigvals_only=True), _gen),
    "eigh_generalized": (lambda x: L.eigh(x, x @ x + np.eye(3), eigvals_only=True), _spd),
    "eigvals": (lambda x: L.eigvals(x), _gen),
    "lu_factor": (lambda x: L.lu_factor(x)[0], _gen),
    "cholesky": (lambda x: L.cholesky(x), _spd),
    "funm_err": (lambda x: L.funm(x * 0.1, nx.exp, disp=False)[1], _gen),
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
    (L.hessenberg, "a"), (L.det, "a"), (L.inv, "a"),
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
        nx.jit(lambda a: L.qr(a, pivoting=True)[0])(nx.asarray(A))
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


# -- JAX's derivatives, pinned (jax 0.10.2, float64, jax_enable_x64) ------------------------

JA = np.array([[2.0, 0.5, -0.3], [0.4, 1.5, 0.2], [-0.1, 0.3, 1.8]])
JA2 = np.array([[0.3, 2.0, -0.5], [1.0, 0.2, 0.7], [0.6, -0.4, 0.9]])   # pivots rows
JW = np.array([[1.0, -2.0, 0.5], [0.3, 0.7, -1.1], [2.0, 0.1, 0.4]])
JS = JA @ JA.T + np.eye(3)
JB = np.array([[1.0, -1.0], [0.5, 2.0], [-0.3, 0.8]])


def test_lu_gradient_as_jax():
    # jax.grad(lambda a: sum(W * lu(a)[1]) + sum(W.T * lu(a)[2]))(A2), jax 0.10.2
    want = np.array([[0.004337336592624086, 0.7530555850781168, 0.20721649484536087],
                     [-0.009548623658199418, -0.04467956212137318, 1.6978350515463918],
                     [1.6804123711340206, 0.19793814432989693, 0.4]])
    got = nx.grad(lambda a: nx.sum(JW * L.lu(a)[1]) + nx.sum(JW.T * L.lu(a)[2]))(
        nx.asarray(JA2))
    close(got, want, 1e-12)


def test_lu_solve_gradient_and_hessian_as_jax():
    # jax.grad(lambda a: sum(lu_solve(lu_factor(a), B, trans=1) * B))(A2), jax 0.10.2
    want = np.array([[-13.359506591861807, 6.0938437963045065, 8.487785109104495],
                     [25.286122262889272, -12.546048049036868, -15.414654069730627],
                     [-30.511233393700685, 14.796728764833272, 18.819676802472106]])
    got = nx.grad(lambda a: nx.sum(L.lu_solve(L.lu_factor(a), JB, trans=1) * JB))(
        nx.asarray(JA2))
    close(got, want, 1e-11)
    # jax.hessian(lambda a: sum(lu_solve(lu_factor(a), B[:, 0]) ** 2))(A2)[0, 0]
    want_h0 = np.array([[19.805588032231253, -6.009855534179035, -19.27989786988457],
                        [-56.39056808371702, 17.84802762367683, 55.05009805688632],
                        [62.21007199841929, -20.74073239005505, -60.95416020251407]])
    h = nx.hessian(lambda a: nx.sum(L.lu_solve(L.lu_factor(a), JB[:, 0]) ** 2))(
        nx.asarray(JA2))
    close(np.asarray(h)[0, 0], want_h0, 1e-10)


def test_solve_pos_and_det_gradients_as_jax():
    # jax.grad(lambda a: sum(solve(a, B, assume_a='pos') * B))(S): symmetric, as nx's
    want = np.array([[-0.18176706313546268, 0.28461030191991665, 0.00872119764435285],
                     [0.28461030191991665, -0.5741994389885049, 0.008345611129157805],
                     [0.00872119764435285, 0.008345611129157805, -0.004183718426193174]])
    got = nx.grad(lambda a: nx.sum(L.solve(a, JB, assume_a="pos") * JB))(nx.asarray(JS))
    close(got, want, 1e-12)
    # jax.grad(det)(A2)
    want = np.array([[0.46, -0.48, -0.52], [-1.6, 0.57, 1.32], [1.5, -0.71, -1.94]])
    close(nx.grad(L.det)(nx.asarray(JA2)), want, 1e-12)


def test_cholesky_derivative_along_symmetric_directions_as_jax():
    # jax.grad(lambda a: sum(W * cholesky(a)))(S), jax 0.10.2.  nx's cotangent is the
    # symmetric one (as cho_factor's); along any symmetric direction both give the same
    # directional derivative
    jax_ct = np.array([[0.3956192021558704, -0.9547470243390197, 0.412249195527179],
                       [-0.1590338204968522, 0.30768983168258707, -0.6623436478748068],
                       [0.019675581694817094, -0.030852978723345043, 0.10016384398735448]])
    got = np.asarray(nx.grad(lambda a: nx.sum(JW * L.cholesky(a)))(nx.asarray(JS)))
    np.testing.assert_allclose(got, got.T, atol=1e-14)
    e = RNG.standard_normal((3, 3))
    e = e + e.T
    np.testing.assert_allclose(np.sum(got * e), np.sum(jax_ct * e), rtol=1e-12)


def test_expm_frechet_gradient_as_jax():
    # jax.grad(lambda a: sum(W * expm_frechet(0.5 a, W.T, compute_expm=False)))(A)
    want = np.array([[0.7933114461759553, -3.387269599942717, 3.0355564816880745],
                     [-1.6063275810430349, -1.2078398467770142, -0.806120595861085],
                     [3.1375375430585706, -4.2115818511078205, 0.6663978449393366]])
    got = nx.grad(lambda a: nx.sum(JW * L.expm_frechet(a * 0.5, JW.T, compute_expm=False)))(
        nx.asarray(JA))
    close(got, want, 1e-11)


def test_polar_jvp_as_jax():
    # jax.jvp(lambda a: polar(a, method='svd')[i], (A2,), (W,))[1], jax 0.10.2 (JAX's polar
    # has no reverse mode; nx's has both)
    want_u = np.array([[0.3137779693970654, -0.005444087609515848, 0.13489166198052605],
                       [0.0735262977870914, -0.40221184944100086, -1.7137050699775433],
                       [1.724762640519626, -0.17872234900029227, 0.09373745840407958]])
    want_p = np.array([[1.4404020384603635, 0.5720487063008648, 0.3477558612918233],
                       [0.5720487063008647, -2.0358782000935567, 0.1166542952697848],
                       [0.34775586129182334, 0.1166542952697851, -0.8625920241245244]])
    for i, want in ((0, want_u), (1, want_p)):
        _, t = nx.jvp(lambda a: L.polar(a)[i], (nx.asarray(JA2),), (nx.asarray(JW),))
        close(t, want, 1e-11)


def test_special_matrix_gradients_as_jax():
    d = np.array([0.5, -1.0, 2.0, 3.5])
    # jax.grad(lambda c, r: sum(W * toeplitz(c, r)), argnums=(0, 1))(d[:3], d[1:])
    gc, gr = nx.grad(lambda c, r: nx.sum(JW * L.toeplitz(c, r)), argnums=(0, 1))(
        nx.asarray(d[:3]), nx.asarray(d[1:]))
    close(gc, [2.1, 0.4, 2.0], 1e-12)
    close(gr, [0.0, -3.1, 0.5], 1e-12)
    # jax.grad(lambda a: sum(arange(25).reshape(5, 5) * block_diag(a[:2, :2], a)))(A2)
    g = nx.grad(lambda a: nx.sum(np.arange(25.0).reshape(5, 5) * L.block_diag(a[:2, :2], a)))(
        nx.asarray(JA2))
    close(g, [[12.0, 14.0, 14.0], [22.0, 24.0, 19.0], [22.0, 23.0, 24.0]], 1e-12)


# -- rectangular LU, lu_solve at singular matrices ------------------------------------------

LU43 = np.array([[0.3, -1.2, 0.5], [2.0, 0.4, -0.7], [-0.6, 1.1, 0.9], [1.3, -0.2, 0.8]])
LUC34 = LU43.T + 1j * np.array([[0.2, -0.5, 0.1, 0.7], [-0.3, 0.6, 0.4, -0.2],
                                [0.5, 0.1, -0.8, 0.3]])


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (1, 3), (3, 1)])
def test_lu_rectangular_as_scipy(shape):
    a = RNG.standard_normal(shape)
    batch = RNG.standard_normal((2,) + shape)
    forms = [(lambda x: L.lu(x), lambda x: sl.lu(x)),
             (lambda x: L.lu(x, permute_l=True), lambda x: sl.lu(x, permute_l=True)),
             (lambda x: L.lu(x, p_indices=True), lambda x: sl.lu(x, p_indices=True)),
             (L.lu_factor, sl.lu_factor)]
    for ours, theirs in forms:
        want = theirs(a)
        for got in (ours(a), ours(nx.asarray(a)), nx.jit(ours)(a)):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                close(g, w)
        for k, got in enumerate(zip(*[np.asarray(g) for g in nx.vmap(ours)(batch)])):
            for g, w in zip(got, theirs(batch[k])):
                close(g, w)
        got_b = nx.jit(ours)(batch)           # batched leading axes
        for g, w in zip(got_b, theirs(batch[1])):
            close(np.asarray(g)[1], w)


def _f_lu(a):
    m, n = a.shape
    k = min(m, n)
    wl = np.arange(1.0, m * k + 1).reshape(m, k) / 7
    wu = np.cos(np.arange(k * n * 1.0)).reshape(k, n)
    _, l_, u_ = L.lu(a)
    return (nx.sum(nx.real(l_ * wl)) + nx.sum(nx.real(u_ * wu))
            + nx.sum(nx.imag(u_ * wu)) * 0.5)


# jax.grad(f)(a) of the same f (jax.scipy.linalg.lu), jax 0.10.2 (x64)
LU_RECT_JAX = {
    "tall": (LU43, [[0.17210998845051345, -1.8861276278912809, -1.4023709224057956],
                    [0.23630046330276458, 0.7645452590921875, -1.4495985191459104],
                    [0.36783856349113186, -1.4998677158995788, -1.2346713705393828],
                    [1.3049763191953814, -0.6019755750926602, 1.3437013996889577]]),
    "wide": (LU43.T.copy(), [[0.21219777000362045, 0.38822778164429733, 0.7470727554563464,
                              0.7550262411339207],
                             [0.4422254815298911, 0.8089121825137839, -0.5789917847982442,
                              -0.7993918954886107],
                             [-1.465977506330434, 0.4117270349629677, -0.8390715290764524,
                              0.004425697988050785]]),
    "wide complex": (LUC34, [[0.33878176447904407 + 0.15256925895563533j,
                              0.4951329464820146 - 0.1345999856531821j,
                              0.7407570599826137 - 0.16321594432242192j,
                              0.7550595533841671 - 0.37862245950495804j],
                             [0.09483756911456122 - 0.48438341354920555j,
                              0.8291924162616865 + 0.0005649259912526017j,
                              -0.7315026430886329 + 0.19476132526784634j,
                              -0.7427810999432928 + 0.4653030635712335j],
                             [-1.5283365266575282 + 0.7956646144431732j,
                              0.4428731619474213 + 0.2628863065085842j,
                              -0.8390715290764523 + 0.4195357645382262j,
                              0.004425697988050785 - 0.0022128489940253927j]]),
}


@pytest.mark.parametrize("case", sorted(LU_RECT_JAX))
def test_lu_rectangular_gradient_as_jax(case):
    a, want = LU_RECT_JAX[case]
    want = np.asarray(want)
    close(nx.grad(_f_lu)(a), want, 1e-12)
    close(nx.jit(nx.grad(_f_lu))(a), want, 1e-12)
    close(nx.vmap(nx.grad(_f_lu))(np.stack([a, a]))[1], want, 1e-12)
    # float64 central differences (the pivots do not change nearby)
    h = 1e-6
    fd = np.zeros(a.shape, complex)
    for idx in np.ndindex(a.shape):
        e = np.zeros(a.shape)
        e[idx] = h
        fd[idx] = (float(_f_lu(a + e)) - float(_f_lu(a - e))) / (2 * h)
        if np.iscomplexobj(a):
            fd[idx] -= 1j * (float(_f_lu(a + 1j * e)) - float(_f_lu(a - 1j * e))) / (2 * h)
    close(fd if np.iscomplexobj(a) else fd.real, want, 1e-7)


def test_lu_refuses_non_matrices_naming_the_argument():
    # (rectangular matrices are LU-factored as SciPy's; lu_solve still needs a square lu)
    for fn in (L.lu, L.lu_factor):
        with pytest.raises((ValueError, np.linalg.LinAlgError), match="a"):
            fn(np.ones(3))
    lu_, piv = L.lu_factor(LU43)
    with pytest.raises((ValueError, np.linalg.LinAlgError), match="lu"):
        L.lu_solve((nx.asarray(lu_) * 1, piv), np.ones(4))


def test_lu_factor_rectangular_jvp():
    # lu_factor's combined factors move as l's and u's (SciPy's layout, tall and wide)
    for a in (LU43, LU43.T.copy()):
        e = np.cos(np.arange(a.size)).reshape(a.shape)
        dlu = nx.jvp(lambda x: L.lu_factor(x)[0], (a,), (e,))[1]
        h = 1e-6
        close(dlu, (sl.lu_factor(a + h * e)[0] - sl.lu_factor(a - h * e)[0]) / (2 * h), 1e-7)


SINGULAR = [np.array([[1.0, 1.0], [0.0, 0.0]]),          # U_11 = 0: +-inf
            np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]),   # NaN
            np.array([[2.0, 1 + 1j, 0], [0, 0, 1j], [1, 0.5 + 0.5j, 0]])]


@pytest.mark.parametrize("k", range(len(SINGULAR)))
def test_lu_solve_singular_gives_scipys_inf_nan(k):
    a = SINGULAR[k]
    n = len(a)
    with np.errstate(all="ignore"), pytest.warns(sl.LinAlgWarning):
        lu_, piv = sl.lu_factor(a)
    b = np.arange(1.0, 2 * n + 1).reshape(n, 2)
    for t in (0, 1, 2):
        with np.errstate(all="ignore"):
            want = sl.lu_solve((lu_, piv), b, trans=t)
        assert not np.isfinite(want).all()
        eager = L.lu_solve((nx.asarray(lu_), nx.asarray(piv)), nx.asarray(b), trans=t)
        jitted = nx.jit(lambda x, p, y, t=t: L.lu_solve((x, p), y, trans=t))(lu_, piv, b)
        mapped = nx.vmap(lambda x, y, t=t: L.lu_solve((x, piv), y, trans=t))(
            lu_[None], b[None])[0]
        traced = nx.jvp(lambda y, t=t: L.lu_solve((lu_, piv), y, trans=t), (b,), (b,))[0]
        for got in (eager, jitted, mapped, traced):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)
    if k == 0:
        assert np.isinf(want).any()


def test_lu_factor_solve_keep_lapack_layout():
    # the direct path hands getrf's Fortran-ordered factors to getrs and back as they are;
    # the values do not depend on the layout
    a = _gen(6)
    b = RNG.standard_normal((6, 3))
    lu_, piv = L.lu_factor(a)
    x = L.lu_solve((lu_, piv), b)
    close(x, sl.lu_solve(sl.lu_factor(a), b))
    close(nx.add(lu_, 0.0), sl.lu_factor(a)[0])
    close(nx.matmul(nx.asarray(a), x), b)
    close(nx.jit(lambda l, p, y: L.lu_solve((l, p), y))(lu_, piv, b), np.asarray(x))
