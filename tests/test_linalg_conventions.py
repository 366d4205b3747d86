"""JAX's conventions in linear algebra: symmetric inputs and their symmetric derivatives,
SciPy's and JAX's broadcasting of right-hand sides, derivatives at singular points, every
function under jit and vmap, and the batched multivariate normal."""
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

import nx_rune as nx

L = nx.linalg
SL = nx.scipy.linalg
mvn = nx.scipy.stats.multivariate_normal
LinAlgError = np.linalg.LinAlgError


def t(x):
    return nx.asarray(np.asarray(x))


def close(got, want, rtol=1e-10, atol=1e-12):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def spd(rng, batch, n):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# -- symmetric inputs --------------------------------------------------------------------------

S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
W = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5], [-0.8, 0.9, 1.3]])
C = np.array([1.0, -2.0, 0.5])
X = np.array([[0.1, -0.3, 0.5], [1.2, 0.4, -0.7], [-0.6, 0.8, 0.2], [0.3, 0.3, 0.3]])
MU = np.array([0.2, -0.1, 0.05])
V = np.array([[0.5, -0.2, 0.1], [-0.2, 1.0, 0.3], [0.1, 0.3, -0.4]])   # a symmetric direction

SYMMETRIC = {
    "cholesky": lambda a: nx.sum(t(W) * L.cholesky(a)),
    "cholesky_upper": lambda a: nx.sum(t(W.T) * L.cholesky(a, upper=True)),
    "eigh": lambda a: (nx.sum(t(C) * L.eigh(a).eigenvalues)
                       + nx.sum(t(W) * L.eigh(a).eigenvectors ** 2)),
    "eigh_U": lambda a: (nx.sum(t(C) * L.eigh(a, UPLO="U").eigenvalues)
                         + nx.sum(t(W) * L.eigh(a, UPLO="U").eigenvectors ** 2)),
    "eigvalsh": lambda a: nx.sum(t(C) * L.eigvalsh(a) ** 3),
    "cho_factor": lambda a: nx.sum(t(W) * SL.cho_factor(a, lower=True)[0]),
    "cho_factor_upper": lambda a: nx.sum(t(W) * SL.cho_factor(a)[0]),
    "cho_solve": lambda a: nx.sum(t(W[:, :2]) * SL.cho_solve(SL.cho_factor(a), t(X[:3, :2]))),
    "mvn": lambda a: nx.sum(mvn.logpdf(t(X), t(MU), a)),
}

# from jax 0.10.2 (float64): jax.grad of the same functions at S (jnp.linalg.cholesky, eigh,
# eigvalsh, jax.scipy.linalg.cho_factor / cho_solve, jax.scipy.stats.multivariate_normal).
# JAX's cho_factor and cho_solve read one triangle and return a cotangent that is not
# symmetric; pinned here is its symmetric part (S + S^T) / 2, which has the same directional
# derivative along every symmetric direction (the JVPs below are JAX's own).
_CHOL_GRAD = [[0.061810892307784436, 0.21428493976809232, -0.3230570179984603],
              [0.21428493976809232, 0.1135513241909213, 0.25861783347341877],
              [-0.3230570179984603, 0.25861783347341877, 0.4672204770408454]]
_EIGH_GRAD = [[0.08601106241756712, 1.0147527095429532, 0.26566363456975495],
              [1.0147527095429532, -1.8687661399315894, -0.38559783861043917],
              [0.26566363456975495, -0.38559783861043917, 1.2827550775140226]]
JAX_GRADS = {
    "cholesky": _CHOL_GRAD,
    "cholesky_upper": _CHOL_GRAD,          # sum(W^T * L^T) == sum(W * L)
    "eigh": _EIGH_GRAD,
    "eigh_U": _EIGH_GRAD,
    "eigvalsh": [[16.194045371735726, 28.433973474484517, -0.10870070293374401],
                 [28.433973474484517, -16.74228701251846, 8.96123753836572],
                 [-0.10870070293374401, 8.96123753836572, 10.079962496533039]],
    "cho_factor": _CHOL_GRAD,
    "cho_factor_upper": [[0.13302316536588163, -0.310828637765405, 0.1574719526037569],
                         [-0.310828637765405, 0.12506357552934502, -0.16349804893545034],
                         [0.1574719526037569, -0.16349804893545034, 0.4672204770408454]],
    "cho_solve": [[-0.07042045465325844, 0.05519762098961732, 0.13202898707398178],
                  [0.05519762098961732, -0.20663196136645284, 0.06762001446838611],
                  [0.13202898707398178, 0.06762001446838611, -0.3758307794506557]],
    "mvn": [[-0.4702818114207589, 0.1306030303304409, 0.034378632677946455],
            [0.1306030303304409, -0.6326060788842531, 0.026541038657153744],
            [0.034378632677946455, 0.026541038657153744, -0.8870590015842857]],
}
# from jax 0.10.2: jax.jvp of the same functions at S along V
JAX_JVPS = {"cholesky": -0.037586099894402425, "cholesky_upper": -0.037586099894402425,
            "eigh": -2.922989699797909, "eigh_U": -2.922989699797909,
            "eigvalsh": -18.695836332624935, "cho_factor": -0.037586099894402425,
            "cho_factor_upper": 0.062413983661590816, "cho_solve": -0.046611119212838684,
            "mvn": -0.542364246363213}
# from jax 0.10.2: jax.jvp(jax.grad(f), (S,), (V,)) (hessian-vector products)
JAX_HVPS = {
    "cholesky": [[0.00587880501838026, 0.014993528994178511, 0.048996989063745514],
                 [0.014993528994178511, -0.048706358390315715, -0.10562349195920427],
                 [0.048996989063745514, -0.10562349195920427, 0.05233112738810322]],
    "eigvalsh": [[-14.330846716446445, 25.396933622062072, 15.038242722107295],
                 [25.396933622062072, -17.40341852185095, -25.231453953122887],
                 [15.038242722107295, -25.231453953122887, 8.20122069055322]],
    "mvn": [[0.07265139435589058, -0.08593313756654598, 0.008019380989605642],
            [-0.08593313756654598, 0.2100508279359174, 0.07419567117041985],
            [0.008019380989605642, 0.07419567117041985, -0.1632836888877771]],
}


@pytest.mark.parametrize("name", list(SYMMETRIC))
def test_symmetric_input_derivatives_match_jax(name):
    f = SYMMETRIC[name]
    g = np.asarray(nx.grad(f)(t(S)))
    close(g, JAX_GRADS[name], rtol=1e-9, atol=1e-12)
    assert np.array_equal(g, g.T)                 # exactly symmetric
    _, tan = nx.jvp(f, (t(S),), (t(V),))
    close(tan, JAX_JVPS[name], rtol=1e-9)
    # under jit (the traced rules) the same derivative
    close(nx.jit(nx.grad(f))(t(S)), JAX_GRADS[name], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", list(JAX_HVPS))
def test_symmetric_input_second_derivatives_match_jax(name):
    _, hv = nx.jvp(nx.grad(SYMMETRIC[name]), (t(S),), (t(V),))
    close(hv, JAX_HVPS[name], rtol=1e-8, atol=1e-12)


NUMPY_SYMMETRIC = {    # the same functions in NumPy/SciPy, for finite differences
    "cholesky": lambda a: np.sum(W * np.linalg.cholesky(a)),
    "cholesky_upper": lambda a: np.sum(W.T * np.linalg.cholesky(a).T),
    "eigh": lambda a: np.sum(C * np.linalg.eigh(a)[0]) + np.sum(W * np.linalg.eigh(a)[1] ** 2),
    "eigh_U": lambda a: (np.sum(C * np.linalg.eigh(a, "U")[0])
                         + np.sum(W * np.linalg.eigh(a, "U")[1] ** 2)),
    "eigvalsh": lambda a: np.sum(C * np.linalg.eigvalsh(a) ** 3),
    "cho_factor": lambda a: np.sum(W * np.tril(scipy.linalg.cho_factor(a, lower=True)[0])),
    "cho_factor_upper": lambda a: np.sum(W * np.triu(scipy.linalg.cho_factor(a)[0])),
    "cho_solve": lambda a: np.sum(W[:, :2] * scipy.linalg.cho_solve(scipy.linalg.cho_factor(a),
                                                                     X[:3, :2])),
    "mvn": lambda a: np.sum(scipy.stats.multivariate_normal.logpdf(X, MU, a)),
}


@pytest.mark.parametrize("name", list(SYMMETRIC))
def test_symmetric_derivatives_match_finite_differences_along_symmetric_directions(name):
    g = np.asarray(nx.grad(SYMMETRIC[name])(t(S)))
    ref = NUMPY_SYMMETRIC[name]
    for seed in range(3):
        v = np.random.default_rng(seed).standard_normal((3, 3))
        v = v + v.T
        h = 1e-6
        fd = (ref(S + h * v) - ref(S - h * v)) / (2 * h)
        np.testing.assert_allclose(np.sum(g * v), fd, rtol=1e-6, atol=1e-8)


def test_gradient_steps_on_a_covariance_stay_symmetric():
    # maximum likelihood of a covariance by gradient ascent: every iterate stays symmetric
    # (with a triangle's cotangent the first step would leave the symmetric set)
    rng = np.random.default_rng(1)
    data = rng.multivariate_normal(np.zeros(3), S, size=200)
    ll = lambda c: nx.mean(mvn.logpdf(t(data), t(np.zeros(3)), c))  # noqa: E731
    logdet = lambda c: nx.sum(nx.log(nx.diagonal(SL.cho_factor(c)[0])))  # noqa: E731
    for fn in (ll, lambda c: ll(c) + 0.1 * logdet(c) + 0.01 * nx.sum(L.eigvalsh(c) ** 2)):
        cov = t(np.eye(3) * 2.0)
        for _ in range(20):
            cov = cov + 0.2 * nx.grad(fn)(cov)
            cv = np.asarray(cov)
            assert np.array_equal(cv, cv.T)
        assert np.all(np.linalg.eigvalsh(cv) > 0)
    # and the iterates climb towards the maximum, the sample covariance
    start = np.eye(3) * 2.0
    cov = t(start)
    for _ in range(200):
        cov = cov + 0.5 * nx.grad(ll)(cov)
    sample = np.cov(data.T, bias=True)
    assert np.abs(np.asarray(cov) - sample).max() < 0.1 * np.abs(start - sample).max()
    assert float(ll(cov)) > float(ll(t(start)))


def test_symmetric_functions_agree_with_each_other():
    # cholesky, both cho_factor triangles and mvn's log-determinant have one derivative
    rng = np.random.default_rng(2)
    a = spd(rng, (2,), 4)
    logdet = [
        lambda x: 2 * nx.sum(nx.log(nx.diagonal(L.cholesky(x), axis1=-2, axis2=-1))),
        lambda x: 2 * nx.sum(nx.log(nx.diagonal(SL.cho_factor(x)[0], axis1=-2, axis2=-1))),
        lambda x: 2 * nx.sum(nx.log(nx.diagonal(SL.cho_factor(x, lower=True)[0], axis1=-2,
                                                axis2=-1))),
        lambda x: nx.sum(nx.log(L.eigvalsh(x))),
        lambda x: nx.sum(nx.log(L.eigh(x).eigenvalues)),
        lambda x: nx.sum(L.slogdet(x).logabsdet),
        lambda x: (-2 * nx.sum(mvn.logpdf(t(np.zeros((2, 4))), t(np.zeros(4)), x))
                   - 8 * math.log(2 * math.pi)),
    ]
    want = np.linalg.inv(a)                        # d log det / dA, symmetric
    for f in logdet:
        close(nx.grad(f)(t(a)), want, rtol=1e-10, atol=1e-12)


def test_symmetrize_input_values_match_jax():
    n = np.array([[4.0, 2.5, 0.5], [1.0, 3.0, 1.2], [-0.5, 0.2, 2.0]])   # not symmetric
    # from jax 0.10.2: jnp.linalg.cholesky and eigvalsh of n (of (n + n^T) / 2), and
    # jax.scipy.linalg.cho_factor(n, lower=True) (n's lower triangle, as SciPy's)
    close(L.cholesky(t(n)), [[2.0, 0.0, 0.0], [0.875, 1.4947825928876748, 0.0],
                             [0.0, 0.4682955256039708, 1.3344284546948557]])
    close(L.eigvalsh(t(n)), [1.2425123538785385, 2.383441886896054, 5.3740457592254085])
    close(L.eigh(t(n)).eigenvalues, [1.2425123538785385, 2.383441886896054, 5.3740457592254085])
    jax_cho = [[2.0, 0.0, 0.0], [0.5, 1.6583123951777, 0.0],
               [-0.25, 0.19598237397554635, 1.3780750738225074]]
    close(SL.cho_factor(t(n), lower=True)[0], jax_cho)
    close(SL.cho_factor(t(n), lower=True)[0], np.tril(scipy.linalg.cho_factor(n, lower=True)[0]))
    close(SL.cho_factor(t(n))[0], np.triu(scipy.linalg.cho_factor(n)[0]))
    # traced (the general path): the same values
    close(nx.jit(lambda x: SL.cho_factor(x, lower=True)[0])(t(n)), jax_cho)
    close(nx.jit(lambda x: SL.cho_factor(x)[0])(t(n)), np.triu(scipy.linalg.cho_factor(n)[0]))
    close(nx.jit(L.eigvalsh)(t(n)), np.linalg.eigvalsh((n + n.T) / 2))
    # NumPy's reading of one triangle stays available
    close(L.cholesky(t(n), symmetrize_input=False), np.linalg.cholesky(n))
    close(L.eigvalsh(t(n), UPLO="U", symmetrize_input=False), np.linalg.eigvalsh(n, "U"))
    close(L.eigh(t(n), symmetrize_input=False).eigenvalues, np.linalg.eigh(n).eigenvalues)


def test_complex_hermitian_input_is_symmetrized_with_the_conjugate():
    rng = np.random.default_rng(3)
    z = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    h = z @ z.conj().T + 3 * np.eye(3)
    close(L.cholesky(t(h)), np.linalg.cholesky(h))
    close(L.eigvalsh(t(h)), np.linalg.eigvalsh(h))
    skew = h + np.triu(z, 1)                  # not Hermitian: its Hermitian part is read
    close(L.eigvalsh(t(skew)), np.linalg.eigvalsh((skew + skew.conj().T) / 2))


# -- broadcasting of right-hand sides ----------------------------------------------------------

RHS_SHAPES = [(4,), (4, 3), (2, 4, 3), (1, 4, 3), (3, 2, 4, 3), (3, 1, 4, 3), (2, 4, 1), (4, 4)]


def _batched_problem():
    rng = np.random.default_rng(4)
    a = spd(rng, (2,), 4)
    return a, np.linalg.cholesky(a), rng


@pytest.mark.parametrize("bshape", RHS_SHAPES, ids=str)
def test_solves_broadcast_as_scipy(bshape):
    # SciPy 1.17's rule: a 1-D b is one vector, any other b a stack of (n, k) matrices whose
    # batch broadcasts with a's (JAX agrees on every one of these shapes)
    a, lo, rng = _batched_problem()
    b = rng.standard_normal(bshape)
    close(SL.solve_triangular(t(lo), t(b), lower=True),
          scipy.linalg.solve_triangular(lo, b, lower=True))
    close(SL.solve_triangular(t(lo), t(b), lower=True, trans="T"),
          scipy.linalg.solve_triangular(lo, b, lower=True, trans="T"))
    close(SL.cho_solve((t(lo), True), t(b)), scipy.linalg.cho_solve((lo, True), b))
    c, low = scipy.linalg.cho_factor(a)
    close(SL.cho_solve(SL.cho_factor(t(a)), t(b)), scipy.linalg.cho_solve((c, low), b))
    close(SL.cho_solve(SL.cho_factor(t(a)), b), scipy.linalg.cho_solve((c, low), b))
    close(L.solve(t(a), t(b)), scipy.linalg.solve(a, b))
    # the same under jit (the general path)
    close(nx.jit(lambda x, y: SL.solve_triangular(x, y, lower=True))(t(lo), t(b)),
          scipy.linalg.solve_triangular(lo, b, lower=True))
    close(nx.jit(lambda x, y: SL.cho_solve((x, True), y))(t(lo), t(b)),
          scipy.linalg.cho_solve((lo, True), b))


def test_broadcast_solves_differentiate():
    a, lo, rng = _batched_problem()
    b = rng.standard_normal((4, 3))
    kw = dict(order=2, eps=1e-6, atol=1e-6, rtol=1e-6)
    nx.check_grads(lambda x, y: SL.solve_triangular(x, y, lower=True), [t(lo), t(b)], **kw)
    nx.check_grads(lambda x, y: SL.cho_solve((x, True), y), [t(lo), t(b)], **kw)
    nx.check_grads(lambda x, y: L.solve(x, y), [t(a), t(rng.standard_normal((3, 1, 4, 2)))],
                   **kw)
    nx.check_grads(lambda x, y: SL.solve_triangular(x, y, lower=True),
                   [t(lo), t(rng.standard_normal(4))], **kw)
    # the cotangent of the shared b sums over a's batch
    g = np.asarray(nx.grad(lambda y: nx.sum(SL.solve_triangular(t(lo), y, lower=True)))(t(b)))
    want = sum(scipy.linalg.solve_triangular(lo[i], np.ones((4, 3)), lower=True, trans="T")
               for i in range(2))
    close(g, want)


def test_stacks_of_vectors_where_scipy_refuses_are_read_as_jax():
    # b (2, 4) with a (2, 4, 4): not (4, k) matrices; JAX reads two vectors (SciPy raises)
    a, lo, rng = _batched_problem()
    b = rng.standard_normal((2, 4))
    want = np.stack([scipy.linalg.solve_triangular(lo[i], b[i], lower=True) for i in range(2)])
    close(SL.solve_triangular(t(lo), t(b), lower=True), want)
    close(SL.cho_solve((t(lo), True), t(b)),
          np.stack([np.linalg.solve(a[i], b[i]) for i in range(2)]))
    with pytest.raises(ValueError, match="b"):
        SL.solve_triangular(t(lo), t(rng.standard_normal((5, 4))), lower=True)
    with pytest.raises(ValueError, match="b"):
        SL.cho_solve((t(lo), True), t(rng.standard_normal((3,))))


# -- singular points ---------------------------------------------------------------------------

A_SING = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
A_RANK2 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [7.0, 8.0, 10.0]])
T_DIR = np.array([[0.3, -0.1, 0.2], [0.5, 0.7, -0.4], [0.1, 0.2, 0.6]])


def test_det_derivative_at_singular_matrices_is_the_adjugate():
    # from jax 0.10.2: jax.grad(jnp.linalg.det) and jax.jvp along T_DIR
    cases = [(A_SING, [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]], -10.8),
             (A_RANK2, [[-8.0, 22.0, -12.0], [4.0, -11.0, 6.0], [0.0, 0.0, 0.0]], -15.1),
             (np.zeros((3, 3)), np.zeros((3, 3)), 0.0)]
    for a, grad, jvp in cases:
        close(nx.grad(L.det)(t(a)), grad, atol=1e-12)
        close(nx.jvp(L.det, (t(a),), (t(T_DIR),))[1], jvp, atol=1e-12)
        # batched with an invertible matrix
        both = np.stack([a, S])
        close(nx.grad(lambda x: nx.sum(L.det(x)))(t(both)),
              np.stack([grad, np.linalg.det(S) * np.linalg.inv(S).T]), atol=1e-12)
    # from jax 0.10.2: jax.jvp(jax.grad(jnp.linalg.det), (A_RANK2,), (T_DIR,))
    _, hv = nx.jvp(nx.grad(L.det), (t(A_RANK2),), (t(T_DIR),))
    close(hv, [[11.4, -8.4, -0.9], [2.0, 1.9, -3.1], [-4.3, 0.5, 1.1]], rtol=1e-9, atol=1e-12)
    # the cofactor matrix, from its definition
    cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(A_RANK2, i, 0), j, 1))
                     for j in range(3)] for i in range(3)])
    close(nx.grad(L.det)(t(A_RANK2)), cof, atol=1e-12)


LSTSQ_A = np.random.default_rng(5).standard_normal((5, 3))
LSTSQ_B = np.random.default_rng(6).standard_normal((5, 2))


def test_lstsq_under_jit_and_vmap():
    x, res, rank, s = np.linalg.lstsq(LSTSQ_A, LSTSQ_B, rcond=None)
    out = nx.jit(L.lstsq)(t(LSTSQ_A), t(LSTSQ_B))
    close(out.x, x)
    close(out.residuals, res)
    assert int(out.rank) == rank
    close(out.s, s)
    batch_a = np.stack([LSTSQ_A, 2 * LSTSQ_A])
    out = nx.vmap(L.lstsq)(t(batch_a), t(np.stack([LSTSQ_B, LSTSQ_B])))
    close(out.x, np.stack([x, x / 2]))
    close(out.residuals, np.stack([res, res]))
    close(out.rank, [3, 3])
    g = nx.vmap(nx.grad(lambda a: nx.sum(L.lstsq(a, t(LSTSQ_B)).x)))(t(batch_a))
    for i in range(2):
        close(g[i], nx.grad(lambda a: nx.sum(L.lstsq(a, t(LSTSQ_B)).x))(t(batch_a[i])))
    # a wide a has no residuals, traced or not
    assert nx.jit(L.lstsq)(t(LSTSQ_A.T), t(LSTSQ_B[:3])).residuals.shape == (0,)


@pytest.mark.parametrize("scale", [0.0, 1e-3, 0.5, 3.0, 20.0, 150.0])
def test_expm_under_jit_and_vmap(scale):
    a = np.random.default_rng(18).standard_normal((4, 4)) * scale
    want = scipy.linalg.expm(a)
    close(nx.jit(SL.expm)(t(a)), want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    both = np.stack([a, a * 0.1])
    got = nx.vmap(SL.expm)(t(both))
    close(got[0], want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    close(got[1], scipy.linalg.expm(a * 0.1), rtol=1e-12, atol=1e-14)
    w = np.arange(16.0).reshape(4, 4)
    f = lambda x: nx.sum(SL.expm(x) * t(w))  # noqa: E731
    close(nx.jit(nx.grad(f))(t(a)), nx.grad(f)(t(a)), rtol=1e-11, atol=1e-12)
    if scale <= 3.0:
        nx.check_grads(nx.jit(f), [t(a)], order=1, eps=1e-6, atol=1e-6, rtol=1e-6)


def test_expm_beyond_max_squarings_is_nan_under_jit():
    a = np.random.default_rng(18).standard_normal((3, 3)) * 1e6
    assert np.isnan(np.asarray(nx.jit(SL.expm)(t(a)))).all()
    small = np.eye(3) * 0.1
    close(nx.jit(lambda x: SL.expm(x, max_squarings=0))(t(small)), scipy.linalg.expm(small))
    with pytest.raises(TypeError, match="max_squarings"):
        SL.expm(t(small), max_squarings=1.5)


def _every_function():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 3))
    s = spd(rng, (2,), 3)
    b = rng.standard_normal((2, 3, 2))
    lo = np.linalg.cholesky(s)
    tall = rng.standard_normal((2, 4, 3))
    return {
        "cholesky": (L.cholesky, (s,)),
        "solve": (L.solve, (a, b)),
        "inv": (L.inv, (a,)),
        "det": (L.det, (a,)),
        "slogdet": (lambda x: L.slogdet(x).logabsdet, (a,)),
        "eigh": (lambda x: L.eigh(x).eigenvalues, (s,)),
        "eigvalsh": (L.eigvalsh, (s,)),
        "svd": (lambda x: L.svd(x).S, (a,)),
        "svdvals": (L.svdvals, (a,)),
        "qr": (lambda x: L.qr(x).R, (a,)),
        "pinv": (L.pinv, (tall,)),
        "lstsq": (lambda x, y: L.lstsq(x, y).x, (tall, tall[..., :2])),
        "lstsq_residuals": (lambda x, y: L.lstsq(x, y).residuals, (tall, tall[..., :2] + 1)),
        "matrix_power": (lambda x: L.matrix_power(x, 3), (a,)),
        "matrix_rank": (L.matrix_rank, (a,)),
        "norm": (L.norm, (a,)),
        "matrix_norm_2": (lambda x: L.matrix_norm(x, ord=2), (a,)),
        "vector_norm_3": (lambda x: L.vector_norm(x, ord=3), (a,)),
        "solve_triangular": (lambda x, y: SL.solve_triangular(x, y, lower=True), (lo, b)),
        "cho_factor": (lambda x: SL.cho_factor(x)[0], (s,)),
        "cho_solve": (lambda x, y: SL.cho_solve((x, True), y), (lo, b)),
        "expm": (SL.expm, (a,)),
        "mvn_logpdf": (lambda x, c: mvn.logpdf(x, nx.zeros(3, dtype=nx.float64), c),
                       (a[:, 0], s)),
    }


@pytest.mark.parametrize("name", list(_every_function()))
def test_every_linalg_function_under_jit_and_vmap(name):
    f, args = _every_function()[name]
    want = np.stack([np.asarray(f(*[t(x[i]) for x in args])) for i in range(2)])
    targs = [t(x) for x in args]
    close(nx.vmap(f)(*targs), want, rtol=1e-9, atol=1e-12)
    close(nx.jit(nx.vmap(f))(*targs), want, rtol=1e-9, atol=1e-12)
    for i in range(2):
        close(nx.jit(f)(*[t(x[i]) for x in args]), want[i], rtol=1e-9, atol=1e-12)
    if name != "matrix_rank":      # an integer: no derivative
        g = lambda *xs: nx.sum(f(*xs) * 1.0)  # noqa: E731
        gv = nx.vmap(nx.grad(g))(*targs)
        for i in range(2):
            close(gv[i], nx.grad(g)(*[t(x[i]) for x in args]), rtol=1e-9, atol=1e-12)


# -- the batched multivariate normal -----------------------------------------------------------

@pytest.mark.parametrize("npoints", [1, 300, 3000])
def test_mvn_logpdf_of_many_points_matches_scipy(npoints):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((npoints, 2))
    mean, cov = np.array([0.1, -0.2]), np.array([[1.0, 0.3], [0.3, 0.5]])
    want = scipy.stats.multivariate_normal.logpdf(x, mean, cov)
    close(mvn.logpdf(t(x), t(mean), t(cov)), np.reshape(want, (npoints,)))
    # the general path (traced) computes the same values in one triangular solve
    close(nx.jit(mvn.logpdf)(t(x), t(mean), t(cov)), np.reshape(want, (npoints,)))
    close(mvn.pdf(t(x), t(mean), t(cov)), np.exp(np.reshape(want, (npoints,))), rtol=1e-9)


def test_mvn_logpdf_batches_and_derivatives():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 5, 3))
    mean = rng.standard_normal(3)
    cov = spd(rng, (), 3)
    want = scipy.stats.multivariate_normal.logpdf(x.reshape(-1, 3), mean, cov).reshape(4, 5)
    close(mvn.logpdf(t(x), t(mean), t(cov)), want)
    covs = spd(rng, (4, 1), 3)          # a covariance per leading index, broadcast over 5
    want = np.stack([scipy.stats.multivariate_normal.logpdf(x[i], mean, covs[i, 0])
                     for i in range(4)])
    close(mvn.logpdf(t(x), t(mean), t(covs)), want)
    close(mvn.logpdf(t(x[0, 0]), t(mean), t(cov)),
          scipy.stats.multivariate_normal.logpdf(x[0, 0], mean, cov))
    nx.check_grads(mvn.logpdf, [t(x[:, :2]), t(mean), t(cov)], order=2, eps=1e-6, atol=1e-6,
                   rtol=1e-6)
    # float32 keeps its dtype on the direct path
    out = mvn.logpdf(t(x.astype(np.float32)), t(mean.astype(np.float32)),
                     t(cov.astype(np.float32)))
    assert out.dtype == np.float32
    close(out, mvn.logpdf(t(x), t(mean), t(cov)), rtol=1e-5, atol=1e-5)
    with pytest.raises(LinAlgError):
        mvn.logpdf(t(x), t(mean), t(-cov))
