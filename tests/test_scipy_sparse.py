"""``nx.scipy.sparse.linalg``: cg, bicgstab and gmres against NumPy's dense solve, JAX's
iterates (pinned literals from jax 0.10.2, x64, CPU: the tests never import jax), their
implicit derivatives against float64 finite differences, and jit / vmap against eager."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune.scipy.sparse.linalg import bicgstab, cg, gmres

N_ = 6
_rng = np.random.RandomState(0)
_Q = _rng.randn(N_, N_)
SPD = _Q @ _Q.T + N_ * np.eye(N_)           # symmetric positive definite
B = _rng.randn(N_)
NONSYM = _rng.randn(N_, N_) + N_ * np.eye(N_)

# jax 0.10.2, jax.scipy.sparse.linalg, x64: the iterates after a few steps (the matrices above;
# the calls in test_iterates_match_jax)
JAX = {
    "cg3":
        [0.064298856580313, 0.17286863732298327, -0.07353076298923138, -0.007835740256355916,
         -0.10357071417973428, -0.10489879895064336],
    "cg3M":
        [0.06397433434773028, 0.17845770444130957, -0.07320349969476563, -0.005005091210161847,
         -0.10416120155946594, -0.10074328286624379],
    "cg3x0":
        [0.05421643954877655, 0.24590483321706802, -0.06165414303064958, -0.022600180120548742,
         -0.12108617685485822, -0.10568966907870372],
    "bicg2":
        [0.19144078948144344, 0.18105530396423383, -0.10455531767031424, -0.060128989405185934,
         -0.13150224335025573, -0.27671691055574166],
    "bicg2M":
        [0.19505952209623914, 0.18339604493514466, -0.10427036872145161, -0.06367007577564059,
         -0.1290669786602644, -0.27953259757485993],
    "gmres_batched":
        [0.19739990405033245, 0.18186535264977177, -0.10180765691298516, -0.06533958332234682,
         -0.12918650750847213, -0.2833583731786602],
    "gmresM_batched":
        [0.19652650500240426, 0.1859671444535981, -0.10615891078203889, -0.06226998200577507,
         -0.1296160088528528, -0.277399089536719],
    "gmres_incremental":
        [0.19739990405033245, 0.18186535264977177, -0.10180765691298516, -0.06533958332234682,
         -0.12918650750847213, -0.2833583731786602],
    "gmresM_incremental":
        [0.19652650500240426, 0.18596714445359813, -0.10615891078203887, -0.06226998200577507,
         -0.12961600885285282, -0.277399089536719],
    "tree_a":
        [0.06234080182788678, 0.14352466194150745],
    "tree_b":
        [[-0.06932077697527123, -0.020608867748283636],
         [-0.1151781351511868, -0.10958605006706423]],
}


@pytest.fixture(autouse=True)
def x64():
    with nx.enable_x64():
        yield


def _tree_A(t):
    v = nx.concatenate([t["a"], t["b"].ravel()])
    w = nx.asarray(SPD) @ v
    return {"a": w[:2], "b": w[2:].reshape(2, 2)}


def _calls():
    A, N, b = nx.asarray(SPD), nx.asarray(NONSYM), nx.asarray(B)
    d = nx.asarray(np.diag(SPD).copy())
    out = {
        "cg3": lambda: cg(A, b, maxiter=3)[0],
        "cg3M": lambda: cg(A, b, maxiter=3, M=lambda r: r / d)[0],
        "cg3x0": lambda: cg(A, b, x0=nx.ones(N_), maxiter=3)[0],
        "bicg2": lambda: bicgstab(N, b, maxiter=2)[0],
        "bicg2M": lambda: bicgstab(N, b, maxiter=2,
                                   M=nx.asarray(np.diag(1 / np.diag(NONSYM))))[0],
    }
    for m in ["batched", "incremental"]:
        out["gmres_" + m] = (lambda m=m: gmres(N, b, restart=2, maxiter=2, solve_method=m)[0])
        out["gmresM_" + m] = (lambda m=m: gmres(
            N, b, restart=3, maxiter=1, M=lambda r: r / nx.asarray(np.diag(NONSYM).copy()),
            solve_method=m)[0])
    bt = {"a": b[:2], "b": b[2:].reshape(2, 2)}
    out["tree_a"] = lambda: cg(_tree_A, bt, maxiter=2)[0]["a"]
    out["tree_b"] = lambda: cg(_tree_A, bt, maxiter=2)[0]["b"]
    return out


@pytest.mark.parametrize("name", sorted(JAX))
def test_iterates_match_jax(name):
    np.testing.assert_allclose(np.asarray(_calls()[name]()), JAX[name], rtol=0, atol=1e-12)


SOLVERS = [
    ("cg", SPD, lambda A, b, **k: cg(A, b, **k)),
    ("bicgstab", NONSYM, lambda A, b, **k: bicgstab(A, b, **k)),
    ("gmres_batched", NONSYM, lambda A, b, **k: gmres(A, b, solve_method="batched", **k)),
    ("gmres_incremental", NONSYM,
     lambda A, b, **k: gmres(A, b, solve_method="incremental", **k)),
]


@pytest.mark.parametrize("name,mat,solve", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_solution_matches_dense_solve(name, mat, solve):
    want = np.linalg.solve(mat, B)
    for A in (nx.asarray(mat), mat, lambda v: nx.asarray(mat) @ v):
        x, info = solve(A, nx.asarray(B), tol=1e-12)
        assert x.dtype == np.float64 and x.shape == (N_,)
        np.testing.assert_allclose(np.asarray(x), want, rtol=1e-9, atol=1e-10)
        if name.startswith("gmres"):
            assert int(info) == 0
        else:
            assert info is None


@pytest.mark.parametrize("name,mat,solve", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_float32_solution(name, mat, solve):
    x, _ = solve(nx.asarray(mat.astype(np.float32)), nx.asarray(B.astype(np.float32)),
                 tol=1e-6)
    assert x.dtype == np.float32
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(mat, B), rtol=1e-4, atol=1e-5)


def test_cg_complex_hermitian():
    rng = np.random.RandomState(3)
    Z = rng.randn(4, 4) + 1j * rng.randn(4, 4)
    H = Z @ Z.conj().T + 4 * np.eye(4)
    b = rng.randn(4) + 1j * rng.randn(4)
    x, _ = cg(nx.asarray(H), nx.asarray(b), tol=1e-12)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(H, b), atol=1e-10)


def test_pytree_right_hand_side():
    b = {"a": nx.asarray(B[:2]), "b": nx.asarray(B[2:].reshape(2, 2))}
    want = np.linalg.solve(SPD, B)
    for solver in (cg, bicgstab, gmres):
        x, _ = solver(_tree_A, b, tol=1e-12)
        np.testing.assert_allclose(np.asarray(x["a"]), want[:2], atol=1e-10)
        np.testing.assert_allclose(np.asarray(x["b"]), want[2:].reshape(2, 2), atol=1e-10)


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("name,mat,solve", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_grad_in_matrix_and_rhs_matches_finite_differences(name, mat, solve):
    w = np.linspace(-1.0, 1.0, N_)

    def loss(A, b):
        x, _ = solve(A, b, tol=1e-13)
        return nx.sum(nx.sin(x) * nx.asarray(w))

    gA, gb = nx.grad(loss, argnums=(0, 1))(nx.asarray(mat), nx.asarray(B))
    f_np = lambda A, b: float(np.sum(np.sin(np.linalg.solve(A, b)) * w))  # noqa: E731
    np.testing.assert_allclose(np.asarray(gb), _fd(lambda b: f_np(mat, b), B), atol=1e-7)
    # cg's operator is symmetric: only its symmetric part is seen, compare symmetrized
    fdA = _fd(lambda A: f_np(A, B), mat)
    gA = np.asarray(gA)
    if name == "cg":
        gA, fdA = (gA + gA.T) / 2, (fdA + fdA.T) / 2
    np.testing.assert_allclose(gA, fdA, atol=1e-7)


def test_derivatives_in_closed_over_parameters():
    # A as a function closing over p: d/dp through the implicit rule, both modes, and twice
    def loss(p):
        x, _ = gmres(lambda v: p * v + nx.asarray(NONSYM) @ v, nx.asarray(B), tol=1e-13)
        return nx.sum(x ** 2)

    def f_np(p):
        return float(np.sum(np.linalg.solve(p * np.eye(N_) + NONSYM, B) ** 2))

    p0 = 0.7
    fd = (f_np(p0 + 1e-6) - f_np(p0 - 1e-6)) / 2e-6
    fd2 = (f_np(p0 + 1e-4) - 2 * f_np(p0) + f_np(p0 - 1e-4)) / 1e-8
    np.testing.assert_allclose(float(nx.grad(loss)(p0)), fd, rtol=1e-7)
    np.testing.assert_allclose(float(nx.jvp(loss, (p0,), (1.0,))[1]), fd, rtol=1e-7)
    np.testing.assert_allclose(float(nx.grad(nx.grad(loss))(p0)), fd2, rtol=1e-5)


def test_jvp_in_matrix_matches_finite_differences():
    dA = np.outer(np.arange(N_), np.ones(N_)) / 10.0
    _, t = nx.jvp(lambda A: cg(A, nx.asarray(B), tol=1e-13)[0], (nx.asarray(SPD),),
                  (nx.asarray(dA + dA.T),))
    eps = 1e-6
    fd = (np.linalg.solve(SPD + eps * (dA + dA.T), B)
          - np.linalg.solve(SPD - eps * (dA + dA.T), B)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t), fd, atol=1e-8)


@pytest.mark.parametrize("name,mat,solve", SOLVERS, ids=[s[0] for s in SOLVERS])
def test_jit_and_vmap_equal_eager(name, mat, solve):
    A = nx.asarray(mat)
    bs = np.random.RandomState(1).randn(3, N_)
    eager = np.stack([np.asarray(solve(A, nx.asarray(b), maxiter=2)[0]) for b in bs])
    jitted = np.stack([np.asarray(nx.jit(lambda A, b: solve(A, b, maxiter=2)[0])(
        A, nx.asarray(b))) for b in bs])
    batched = np.asarray(nx.vmap(lambda b: solve(A, b, maxiter=2)[0])(nx.asarray(bs)))
    np.testing.assert_allclose(jitted, eager, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(batched, eager, rtol=1e-13, atol=1e-14)


def test_grad_under_jit():
    f = lambda b: nx.sum(cg(nx.asarray(SPD), b, tol=1e-13)[0] ** 2)  # noqa: E731
    want = 2 * np.linalg.solve(SPD, np.linalg.solve(SPD, B))
    np.testing.assert_allclose(np.asarray(nx.jit(nx.grad(f))(nx.asarray(B))), want, atol=1e-10)


def test_bad_input():
    b = nx.asarray(B)
    with pytest.raises(ValueError, match="A: the linear operator must be a square matrix"):
        cg(nx.ones((3, 4)), nx.ones(3))
    with pytest.raises(TypeError, match="A: the linear operator must be a function"):
        cg("matrix", b)
    with pytest.raises(ValueError, match="M: the linear operator must be a square matrix"):
        bicgstab(nx.asarray(NONSYM), b, M=nx.ones(3))
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
        cg(nx.asarray(SPD), b, x0=(b,))
    with pytest.raises(ValueError, match="arrays in x0 and b must have matching shapes"):
        gmres(nx.asarray(NONSYM), b, x0=nx.zeros(3))
    with pytest.raises(ValueError, match="invalid solve_method 'qr'"):
        gmres(nx.asarray(NONSYM), b, solve_method="qr")
    with pytest.raises(ValueError, match="restart must be a positive integer"):
        gmres(nx.asarray(NONSYM), b, restart=0)
    with pytest.raises(TypeError, match="maxiter must be an integer"):
        cg(nx.asarray(SPD), b, maxiter=2.5)
    with pytest.raises(ValueError, match="must return arrays of b's structure"):
        nx.grad(lambda b: nx.sum(cg(lambda v: v[:3], b)[0]))(b)


def test_batched_operator_and_second_derivatives():
    # vmap over the matrix (the operator closes over a batched value), the gradient under vmap,
    # and a Hessian (reverse of forward through the two solves)
    rng = np.random.RandomState(2)
    mats = np.stack([(lambda q: q @ q.T + 4 * np.eye(4))(rng.randn(4, 4)) for _ in range(3)])
    b = rng.randn(4)
    x = nx.vmap(lambda A: cg(A, nx.asarray(b), tol=1e-12)[0])(nx.asarray(mats))
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(mats, b), atol=1e-12)
    g = nx.vmap(nx.grad(lambda A: nx.sum(gmres(A, nx.asarray(b), tol=1e-12)[0])))(
        nx.asarray(mats))
    want = np.stack([-np.outer(np.linalg.solve(A.T, np.ones(4)), np.linalg.solve(A, b))
                     for A in mats])
    np.testing.assert_allclose(np.asarray(g), want, atol=1e-12)
    h = nx.hessian(lambda b: nx.sum(bicgstab(nx.asarray(NONSYM), b, tol=1e-13)[0] ** 2))(
        nx.asarray(B))
    inv = np.linalg.inv(NONSYM)
    np.testing.assert_allclose(np.asarray(h), 2 * inv.T @ inv, atol=1e-10)


def test_dtypes_are_promoted():
    # b (and x0) take a matrix A's dtype; integers the default float dtype
    A = nx.asarray(SPD)
    for solver in (cg, bicgstab, gmres):
        x, _ = solver(A, nx.asarray(B.astype(np.float32)), tol=1e-12)
        assert x.dtype == np.float64
        np.testing.assert_allclose(np.asarray(x), np.linalg.solve(SPD, B.astype(np.float32)),
                                   atol=1e-10)
        x, _ = solver(lambda v: 2 * v, nx.asarray([1, 2, 3]))
        assert x.dtype == np.float64
        np.testing.assert_allclose(np.asarray(x), [0.5, 1.0, 1.5])
    with nx.enable_x64(False):
        x, _ = cg(lambda v: 2 * v, nx.asarray([1, 2, 3]))
        assert x.dtype == np.float32
