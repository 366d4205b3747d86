"""Derivatives of det and slogdet at singular matrices: det's gradient and JVP are the cofactor
matrix adj(a)^T at every rank, eagerly, under jit and under vmap, and its Hessian is the
derivative of the adjugate there too (checked against exact cofactors from minors and their
central differences, and against JAX 0.10.2's pinned values where JAX is right); log|det|'s
derivative at a singular matrix is adj(a)^T / +0 in IEEE arithmetic (JAX's infinities and
NaNs), the sign's is 0."""
import numpy as np
import pytest

import nx_rune as nx

L = nx.linalg


def cofactor(a):
    """adj(a)^T from the minors (float64, exact for these small integer matrices)."""
    n = a.shape[-1]
    c = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            m = np.delete(np.delete(a, i, 0), j, 1)
            c[i, j] = (-1) ** (i + j) * (np.linalg.det(m) if n > 1 else 1.0)
    return c


def cofactor_fd(a, h=1e-5):
    """d adj(a)^T / d a[k, l] by central differences of ``cofactor``: (n, n, n, n)."""
    n = a.shape[-1]
    out = np.empty((n, n, n, n))
    for k in range(n):
        for l in range(n):
            e = np.zeros_like(a)
            e[k, l] = h
            out[:, :, k, l] = (cofactor(a + e) - cofactor(a - e)) / (2 * h)
    return out


def _lowrank(n, r, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, r)) @ rng.standard_normal((r, n))


MATRICES = {
    "rank2of3": np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]]),          # the last pivot is 0
    "rank1of3": np.array([[1.0, 2, 3], [2, 4, 6], [3, 6, 9]]),          # rank n - 2
    "rank2of4": np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 0, 0, 0]]),
    "first_pivot_0": np.diag([0.0, 1.0, 2.0]),                            # the first pivot is 0
    "zeros": np.zeros((3, 3)),
    "random_rank3of4": _lowrank(4, 3, 0),                                 # no exact zero pivot
    "random_rank2of4": _lowrank(4, 2, 1),
    "invertible": np.random.default_rng(2).standard_normal((4, 4)),
}

MODES = {
    "eager": lambda f: f,
    "jit": nx.jit,
    "vmap": lambda f: (lambda x: nx.vmap(f)(x[None])[0]),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(MATRICES))
def test_det_gradient_and_jvp_are_the_cofactor_matrix(name, mode):
    a = MATRICES[name]
    want = cofactor(a)
    tol = 1e-12 * max(1.0, np.abs(a).max() ** (a.shape[0] - 1))
    got = MODES[mode](nx.grad(L.det))(nx.asarray(a))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=tol)
    v = np.arange(a.size, dtype=float).reshape(a.shape) / a.size - 0.3
    jvp = MODES[mode](lambda x: nx.jvp(L.det, (x,), (nx.asarray(v),))[1])
    np.testing.assert_allclose(float(jvp(nx.asarray(a))), np.sum(want * v), rtol=1e-10,
                               atol=tol)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(MATRICES))
def test_det_hessian_is_the_derivative_of_the_cofactor_matrix(name, mode):
    """At rank n - 1 and at rank n - 2 too, where adj is 0 but its derivative is not (JAX
    0.10.2 returns 0 for the 4 x 4 rank-2 matrix's Hessian: wrong, the central differences
    of the exact adjugate say otherwise)."""
    a = MATRICES[name]
    got = np.asarray(MODES[mode](nx.hessian(L.det))(nx.asarray(a)))
    np.testing.assert_allclose(got, cofactor_fd(a), rtol=1e-6, atol=1e-8)


def test_pinned_jax_values():
    # jax 0.10.2, float64: jax.grad(jnp.linalg.det) at rank2of3, jax.hessian(...)[0, 0] at
    # rank1of3 (rank n - 2), and jax.jvp along the identity at rank2of3
    a1, a2 = nx.asarray(MATRICES["rank2of3"]), nx.asarray(MATRICES["rank1of3"])
    np.testing.assert_allclose(np.asarray(nx.grad(L.det)(a1)),
                               [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]],
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(nx.hessian(L.det)(a2))[0, 0],
                               [[0.0, 0.0, 0.0], [0.0, 9.0, -6.0], [0.0, -6.0, 4.0]],
                               atol=1e-10)
    np.testing.assert_allclose(float(nx.jvp(L.det, (a1,), (nx.eye(3),))[1]), -18.0,
                               atol=1e-12)


def test_batches_mixing_singular_and_invertible_matrices():
    a = np.stack([MATRICES["rank2of3"], MATRICES["invertible"][:3, :3], MATRICES["zeros"],
                  MATRICES["rank1of3"]])
    want = np.stack([cofactor(m) for m in a])
    for f in (nx.grad(lambda x: nx.sum(L.det(x))), nx.jit(nx.grad(lambda x: nx.sum(L.det(x)))),
              nx.vmap(nx.grad(L.det))):
        np.testing.assert_allclose(np.asarray(f(nx.asarray(a))), want, rtol=1e-10, atol=1e-12)


def test_slogdet_derivatives_at_singular_matrices():
    """log|det|: adj(a)^T / +0, so +-inf where the cofactor is not 0 (JAX 0.10.2:
    [[inf, -inf], [-inf, inf]] at [[1, 2], [2, 4]], inf along the identity) and NaN where it is
    (JAX: NaN everywhere at rank <= n - 2); the sign's derivative is 0 (JAX's too)."""
    logabs = lambda x: L.slogdet(x).logabsdet       # noqa: E731
    sign = lambda x: L.slogdet(x).sign               # noqa: E731
    s = nx.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(nx.grad(logabs)(s)),
                                      [[np.inf, -np.inf], [-np.inf, np.inf]])
        assert float(nx.jvp(logabs, (s,), (nx.eye(2),))[1]) == np.inf
        for name in ("rank1of3", "rank2of4", "zeros"):
            a = nx.asarray(MATRICES[name])
            assert np.isnan(np.asarray(nx.grad(logabs)(a))).all(), name
            assert np.isnan(float(nx.jvp(logabs, (a,), (nx.eye(a.shape[0]),))[1])), name
        g = np.asarray(nx.grad(logabs)(nx.asarray(MATRICES["rank2of3"])))
        want = cofactor(MATRICES["rank2of3"])
        np.testing.assert_array_equal(g, np.where(want > 0, np.inf, -np.inf))
    for name in ("rank2of3", "rank1of3"):
        np.testing.assert_array_equal(np.asarray(nx.grad(sign)(nx.asarray(MATRICES[name]))),
                                      np.zeros((3, 3)))


@pytest.mark.parametrize("mode", ["jit", "vmap"])
def test_slogdet_derivatives_at_singular_matrices_traced(mode):
    """The same values under jit and vmap as eagerly (the kernel's adj / +0; the tangent's
    form chosen where det is 0)."""
    logabs = lambda x: L.slogdet(x).logabsdet       # noqa: E731
    wrap = MODES[mode]
    s = nx.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    np.testing.assert_array_equal(np.asarray(wrap(nx.grad(logabs))(s)),
                                  [[np.inf, -np.inf], [-np.inf, np.inf]])
    jvp = wrap(lambda x: nx.jvp(logabs, (x,), (nx.eye(x.shape[-1]),))[1])
    assert float(jvp(s)) == np.inf
    a = nx.asarray(MATRICES["rank1of3"])
    assert np.isnan(np.asarray(wrap(nx.grad(logabs))(a))).all()
    assert np.isnan(float(jvp(a)))
    b = MATRICES["invertible"]
    np.testing.assert_allclose(float(jvp(nx.asarray(b))), np.trace(np.linalg.inv(b)),
                               rtol=1e-12)


def test_invertible_matrices_keep_the_inverse_formula():
    """Away from singular matrices the derivatives are det inv(a)^T and inv(a)^T, as before
    (against NumPy's inverse)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 5, 5)) + 5 * np.eye(5)
    inv_t = np.swapaxes(np.linalg.inv(a), -1, -2)
    det = np.linalg.det(a)[:, None, None]
    np.testing.assert_allclose(np.asarray(nx.grad(lambda x: nx.sum(L.det(x)))(nx.asarray(a))),
                               det * inv_t, rtol=1e-10)
    np.testing.assert_allclose(
        np.asarray(nx.grad(lambda x: nx.sum(L.slogdet(x).logabsdet))(nx.asarray(a))), inv_t,
        rtol=1e-10)
