"""jacfwd, jacrev and hessian, rebuilt on vmap: one batched pass, the same results as the
per-element algorithm they replace (one jvp per input element, one vjp per output element,
written out below as the reference) and as float64 central finite differences."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune.autodiff import BATCH_RULES
from nx_rune.autodiff.batch_rules import defbroadcast
from nx_rune.primitives import bind


def t(a, dtype=np.float64):
    return nx.asarray(np.asarray(a, dtype=dtype))


# -- the per-element reference (the algorithm jacfwd/jacrev used before vmap) -------------------

def _unit(shape, k, dtype):
    e = np.zeros(int(np.prod(shape)), dtype)
    e[k] = 1
    return nx.asarray(e.reshape(shape))


def ref_jacfwd(f, x):
    """One jvp per input element: columns stacked on a new last axis."""
    cols = [np.asarray(nx.jvp(f, (x,), (_unit(x.shape, k, x.dtype),))[1]) for k in range(x.size)]
    out = np.asarray(f(x))
    return np.stack(cols, -1).reshape(out.shape + x.shape)


def ref_jacrev(f, x):
    """One vjp per output element: rows stacked on a new first axis."""
    out, vjp_fn = nx.vjp(f, x)
    rows = [np.asarray(vjp_fn(_unit(out.shape, k, out.dtype))[0]) for k in range(out.size)]
    return np.stack(rows, 0).reshape(out.shape + x.shape)


def fd_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    out = np.asarray(f(t(x)))
    J = np.zeros((out.size, x.size))
    for k in range(x.size):
        d = np.zeros(x.size)
        d[k] = eps
        J[:, k] = (np.asarray(f(t(x + d.reshape(x.shape)))) -
                   np.asarray(f(t(x - d.reshape(x.shape))))).reshape(-1) / (2 * eps)
    return J.reshape(out.shape + x.shape)


FUNCS = {
    "vector": (lambda x: nx.sin(x) * nx.flip(x, 0) + nx.cumsum(x) ** 2, (5,)),
    "matrix_out": (lambda x: nx.outer(nx.tanh(x), x) @ nx.ones((4, 2), nx.float64), (4,)),
    "matrix_in": (lambda x: nx.sum(nx.exp(x) * x.T[::-1].T, axis=1) + nx.max(x, axis=0)[0],
                  (3, 2)),
    "scalar": (lambda x: nx.sum(nx.sin(x) * x ** 2) + nx.prod(x), (6,)),
    "indexing": (lambda x: x[nx.asarray([2, 0, 2])] * nx.sort(x)[::-1][:3], (4,)),
}
RNG = np.random.default_rng(3)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jacobians_match_the_per_element_algorithm(name):
    f, shape = FUNCS[name]
    x = t(RNG.uniform(0.2, 1.5, shape))
    want_fwd, want_rev = ref_jacfwd(f, x), ref_jacrev(f, x)
    np.testing.assert_allclose(want_fwd, want_rev, rtol=1e-12, atol=1e-12)
    jf, jr = nx.jacfwd(f)(x), nx.jacrev(f)(x)
    assert jf.shape == jr.shape == want_fwd.shape
    np.testing.assert_allclose(np.asarray(jf), want_fwd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jr), want_rev, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jf), fd_jacobian(f, x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [20, 200])
def test_hessian_matches_the_per_element_algorithm(n):
    f = lambda x: nx.sum(nx.sin(x) * x ** 2)  # noqa: E731
    x = t(np.linspace(0.1, 1.0, n))
    H = nx.hessian(f)(x)
    want = ref_jacfwd(nx.grad(f), x)
    np.testing.assert_allclose(np.asarray(H), want, rtol=1e-12, atol=1e-12)
    xv = np.linspace(0.1, 1.0, n)
    analytic = np.diag(2 * np.sin(xv) + 4 * xv * np.cos(xv) - xv ** 2 * np.sin(xv))
    np.testing.assert_allclose(np.asarray(H), analytic, rtol=1e-12, atol=1e-12)


def test_hessian_of_an_mlp_matches_finite_differences():
    rng = np.random.default_rng(0)
    W = t(rng.standard_normal((3, 4)) / 2)
    X = t(rng.standard_normal((5, 3)))

    def loss(w):
        return nx.sum(nx.logsumexp(nx.tanh(X @ w), axis=1))
    H = np.asarray(nx.hessian(loss)(W))
    want = fd_jacobian(lambda w: nx.grad(loss)(w), W)
    assert H.shape == (3, 4, 3, 4)
    np.testing.assert_allclose(H, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(H.reshape(12, 12), H.reshape(12, 12).T, rtol=1e-12, atol=1e-14)


def test_jacobian_pytrees_argnums_and_several_outputs():
    def f(p, y):
        return {"u": nx.sin(p["a"]) * y, "v": (nx.sum(p["b"] ** 2 * y[0]),)}
    p = {"a": t([0.3, 0.7, 1.1]), "b": t([[1.0, 2.0]])}
    y = t([2.0, -1.0, 0.5])
    for jac in (nx.jacfwd, nx.jacrev):
        J = jac(f, argnums=(0, 1))(p, y)
        for k in ("a", "b"):
            want = ref_jacfwd(lambda v: f({**p, k: v}, y)["u"], p[k])
            np.testing.assert_allclose(np.asarray(J["u"][0][k]), want, rtol=1e-12, atol=1e-15)
            want = ref_jacfwd(lambda v: f({**p, k: v}, y)["v"][0], p[k])
            np.testing.assert_allclose(np.asarray(J["v"][0][0][k]), want, rtol=1e-12,
                                       atol=1e-15)
        np.testing.assert_allclose(np.asarray(J["u"][1]), ref_jacfwd(lambda v: f(p, v)["u"], y),
                                   rtol=1e-12)
        assert J["v"][0][1].shape == (3,)
        H = nx.hessian(lambda p: f(p, y)["v"][0])(p)
        assert H["b"]["b"].shape == (1, 2, 1, 2) and H["a"]["b"].shape == (3, 1, 2)
        np.testing.assert_allclose(np.asarray(H["b"]["b"]).reshape(2, 2), 2 * 2.0 * np.eye(2))


def test_jacobian_dtypes_and_empty_inputs():
    x = t([0.5, 1.5], np.float32)
    J = nx.jacfwd(lambda x: x * x)(x)
    assert J.dtype == np.float32
    np.testing.assert_allclose(np.asarray(J), np.diag([1.0, 3.0]))
    assert nx.jacrev(lambda x: x * x)(x).dtype == np.float32
    e = t(np.zeros((0,)))
    assert nx.jacfwd(lambda x: nx.sum(x) + nx.ones(2, nx.float64))(e).shape == (2, 0)
    assert nx.jacrev(lambda x: nx.sum(x) + nx.ones(2, nx.float64))(e).shape == (2, 0)
    assert nx.jacrev(lambda x: x[:0])(t([1.0, 2.0])).shape == (0, 2)
    # an output that does not depend on the input: zeros
    np.testing.assert_array_equal(np.asarray(nx.jacfwd(lambda x: nx.ones(3, nx.float64))(x)), 0)
    np.testing.assert_array_equal(np.asarray(nx.jacrev(lambda x: nx.ones(3, nx.float64))(x)), 0)
    # complex outputs: forward mode gives d out / d x
    Jc = nx.jacfwd(lambda x: nx.exp(1j * x))(t([0.3, 0.4]))
    np.testing.assert_allclose(np.asarray(Jc), np.diag(1j * np.exp(1j * np.array([0.3, 0.4]))))
    with pytest.raises(TypeError, match="jacrev requires float outputs"):
        nx.jacrev(lambda x: nx.argmax(x))(t([1.0, 2.0]))
    with pytest.raises(TypeError, match="jacfwd requires float inputs"):
        nx.jacfwd(lambda x: x)(nx.asarray([1, 2]))


@pytest.fixture
def counted_sin():
    """sin and cos primitives whose derivative rules call each other, counting the calls of
    their implementations: a derivative pass per element would call them once per element."""
    calls = []
    made = []
    for name, fn in (("test_csin", np.sin), ("test_ccos", np.cos)):
        prim = P.Primitive(name)
        prim.def_impl(lambda x, fn=fn: calls.append(x.shape) or nx.asarray(fn(np.asarray(x))))
        defbroadcast(prim)
        made.append(prim)
    csin, ccos = made
    nx.autodiff.defelementwise(csin, lambda v, ans, x: v * bind(ccos, x))
    nx.autodiff.defelementwise(ccos, lambda v, ans, x: -(v * bind(csin, x)))
    yield csin, calls
    for prim in made:
        del P.PRIMITIVES[prim.name]
        for table in (nx.autodiff.VJP_RULES, nx.autodiff.JVP_RULES, BATCH_RULES):
            table.pop(prim, None)


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "hessian"])
def test_one_batched_pass_whatever_the_size(counted_sin, jac):
    csin, calls = counted_sin
    f = lambda x: nx.sum(bind(csin, x) * x)  # noqa: E731
    g = (lambda x: bind(csin, x) * x) if jac != "hessian" else f
    counts = []
    for n in (3, 30):
        calls.clear()
        x = np.linspace(0.1, 1.0, n)
        J = getattr(nx, jac)(g)(t(x))
        want = np.diag(np.cos(x) * x + np.sin(x)) if jac != "hessian" else \
            np.diag(2 * np.cos(x) - x * np.sin(x))
        np.testing.assert_allclose(np.asarray(J), want, rtol=1e-13, atol=1e-15)
        counts.append(len(calls))
    assert counts[0] == counts[1], counts     # the number of calls does not grow with n
    assert counts[0] <= 4, counts


def test_vmap_of_jacobians_and_jacobians_of_vmap():
    f, _ = FUNCS["vector"]
    X = RNG.uniform(0.2, 1.5, (3, 5))
    got = nx.vmap(nx.jacrev(f))(t(X))
    np.testing.assert_allclose(np.asarray(got), np.stack([ref_jacrev(f, t(x)) for x in X]),
                               rtol=1e-12)
    got = nx.jacfwd(nx.vmap(f))(t(X))
    want = np.zeros((3, 5, 3, 5))
    for i, x in enumerate(X):
        want[i, :, i, :] = ref_jacfwd(f, t(x))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-15)


def test_hessian_through_matrix_vector_products():
    # matrix-vector products in both orientations (W @ x, x @ A, x @ v): their VJP's own path
    rng = np.random.default_rng(5)
    W, A, xv = rng.standard_normal((7, 4)), rng.standard_normal((4, 4)), rng.standard_normal(4)

    def f(x):
        return nx.sum(nx.tanh(t(W) @ x)) + x @ t(A) @ x
    th = np.tanh(W @ xv)
    want = W.T @ np.diag(-2 * th * (1 - th ** 2)) @ W + A + A.T
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        H = nx.hessian(f)(t(xv, dtype)) if dtype == np.float64 else nx.hessian(
            lambda x: nx.sum(nx.tanh(t(W, dtype) @ x)) + x @ t(A, dtype) @ x)(t(xv, dtype))
        assert H.dtype == dtype and H.shape == (4, 4)
        np.testing.assert_allclose(np.asarray(H), want, rtol=tol, atol=tol)
    # both operands' cotangents, each alone and together
    M, v = rng.standard_normal((3, 4)), rng.standard_normal(3)
    gW, gx = nx.grad(lambda W, x: nx.sum(nx.sin(W @ x)), argnums=(0, 1))(t(M), t(xv))
    c = np.cos(M @ xv)
    np.testing.assert_allclose(np.asarray(gW), np.outer(c, xv), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(gx), M.T @ c, rtol=1e-13)
    gv, gM = nx.grad(lambda v, M: nx.sum(nx.sin(v @ M)), argnums=(0, 1))(t(v), t(M))
    c = np.cos(v @ M)
    np.testing.assert_allclose(np.asarray(gv), M @ c, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(gM), np.outer(v, c), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(nx.grad(lambda x: nx.sum(t(M) @ x))(t(xv))),
                               M.sum(0), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(nx.grad(lambda v: nx.sum(v @ t(M)))(t(v))),
                               M.sum(1), rtol=1e-13)


def test_jacrev_of_a_scalar_function_runs_no_batching_level(monkeypatch):
    # one output entry: one VJP with the unit cotangent, not a vmap over a single direction
    from nx_rune.autodiff import batching
    sizes = []
    init = batching.BatchInterpreter.__init__

    def counting(self, axis_size, *a, **k):
        sizes.append(axis_size)
        init(self, axis_size, *a, **k)
    monkeypatch.setattr(batching.BatchInterpreter, "__init__", counting)
    xv = np.linspace(0.1, 1.0, 5)
    f = lambda x: nx.sum(nx.sin(x) * x ** 2)  # noqa: E731
    J = nx.jacrev(f)(t(xv))
    np.testing.assert_allclose(np.asarray(J), np.cos(xv) * xv ** 2 + 2 * xv * np.sin(xv),
                               rtol=1e-13)
    assert sizes == []
    H = nx.hessian(f)(t(xv))
    np.testing.assert_allclose(np.asarray(H), np.diag(2 * np.sin(xv) + 4 * xv * np.cos(xv)
                                                      - xv ** 2 * np.sin(xv)), rtol=1e-12)
    assert sizes == [5]          # jacfwd's one batched pass over the 5 input directions
    # pytree inputs, has_aux, an integer leaf with allow_int, a (1,)-shaped output
    p = {"a": t([0.5, 2.0]), "n": nx.asarray([3, 4])}
    J, aux = nx.jacrev(lambda p: (nx.sum(p["a"] ** 3) * 1.0, "aux"), has_aux=True,
                       allow_int=True)(p)
    assert aux == "aux" and J["n"].shape == (2,) and J["n"].dtype == p["n"].dtype
    np.testing.assert_array_equal(np.asarray(J["n"]), 0)
    np.testing.assert_allclose(np.asarray(J["a"]), [0.75, 12.0], rtol=1e-13)
    J1 = nx.jacrev(lambda x: nx.reshape(nx.sum(x * x), (1, 1)))(t([1.0, 3.0]))
    assert J1.shape == (1, 1, 2)
    np.testing.assert_allclose(np.asarray(J1), [[[2.0, 6.0]]])
