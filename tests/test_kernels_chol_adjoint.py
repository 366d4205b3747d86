"""The kernel nx_rune._kernels.chol_adjoint (the adjoint of the Cholesky
factorization, per matrix in C with SciPy's BLAS) and backend.cholesky_vjp_values over it.

- Values against Murray's symbolic formula computed here in float64 with
  scipy.linalg.solve_triangular, across the recursion's split points (n = 0 ... 300), batched,
  float32 and float64, with l and lbar each C-ordered or the transposed view of C-ordered
  memory, or strided.
- Only lower triangles are read (junk above the diagonal changes no bit); the result's strict
  upper triangle is zero; its layout is lbar's.
- NaN in l or lbar gives NaN; bad input raises naming the argument; a threaded stack gives the
  same bits for every thread count.
- Gradients through nx.scipy.linalg.cho_factor (upper: the transposed cotangent) against
  central differences.
"""
import numpy as np
import pytest
import scipy.linalg

import nx_rune as nx
from nx_rune import backend as B
from nx_rune._kernels import chol_adjoint as CA

SIZES = [0, 1, 2, 63, 64, 65, 127, 128, 200, 300]
BATCHES = [(), (3,), (2, 3)]


def spd_factor(rng, batch, n):
    """A well-conditioned lower Cholesky factor (float64) of each matrix of the batch."""
    a = rng.standard_normal(batch + (n, n))
    return np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


def direct_adjoint(lmat, g):
    """Murray (2016)'s symbolic result in float64, per matrix: the lower triangle, weighted 1/2
    on the diagonal, of L^-T (P + P^T) L^-1 with P = Phi(L^T tril(g)) (Phi: the lower triangle
    with the diagonal halved)."""
    out = np.zeros(lmat.shape, np.float64)
    for idx in np.ndindex(lmat.shape[:-2]):
        lm = np.tril(lmat[idx]).astype(np.float64)
        p = np.tril(lm.T @ np.tril(g[idx]).astype(np.float64))
        p[np.diag_indices_from(p)] *= 0.5
        left = scipy.linalg.solve_triangular(lm, p + p.T, lower=True, trans=1)   # L^-T (P+P^T)
        s = scipy.linalg.solve_triangular(lm, left.T, lower=True, trans=1).T      # ... L^-1
        w = np.tril(s)
        w[np.diag_indices_from(w)] *= 0.5
        out[idx] = w
    return out


def transposed(x):
    """x's values as the transposed view of C-ordered memory."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


LAYOUTS = {
    "C": lambda x: x,
    "T": transposed,
    # every other row and column of a larger buffer: neither layout, read through a copy
    "strided": lambda x: np.repeat(np.repeat(x, 2, axis=-1), 2, axis=-2)[..., ::2, ::2],
}


def _close(got, want, dtype):
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    tol = 1e-13 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("n", SIZES)
def test_adjoint_is_the_direct_formula(n, batch, dtype):
    rng = np.random.default_rng(1000 + n + 7 * len(batch))
    lmat = spd_factor(rng, batch, n).astype(dtype)
    g = rng.standard_normal(batch + (n, n)).astype(dtype)
    want = direct_adjoint(lmat, g)
    for lname, lay_l in LAYOUTS.items():
        for gname, lay_g in LAYOUTS.items():
            got = CA.cholesky_adjoint(lay_l(lmat), lay_g(g))
            assert got.dtype == dtype and got.shape == lmat.shape, (lname, gname)
            _close(got, want, dtype)
            assert not np.triu(got, 1).any(), (lname, gname)


@pytest.mark.parametrize("n", [5, 64, 130])
def test_backend_values_are_the_kernels(n):
    rng = np.random.default_rng(n)
    lmat = spd_factor(rng, (2,), n)
    g = rng.standard_normal((2, n, n))
    np.testing.assert_array_equal(B.cholesky_vjp_values(lmat, g), CA.cholesky_adjoint(lmat, g))
    # a cotangent of another dtype is cast to l's
    got32 = B.cholesky_vjp_values(lmat.astype(np.float32), g)
    assert got32.dtype == np.float32
    _close(got32, direct_adjoint(lmat.astype(np.float32), g.astype(np.float32)), np.float32)


@pytest.mark.parametrize("layout", ["C", "T", "strided"])
def test_result_has_the_layout_of_lbar(layout):
    rng = np.random.default_rng(4)
    g = LAYOUTS[layout](rng.standard_normal((2, 70, 70)))
    for lmat in (spd_factor(rng, (2,), 70), transposed(spd_factor(rng, (2,), 70))):
        out = CA.cholesky_adjoint(lmat, g)
        if layout == "T":
            assert not out.flags.c_contiguous and np.swapaxes(out, -1, -2).flags.c_contiguous
        else:
            assert out.flags.c_contiguous


@pytest.mark.parametrize("n", [3, 64, 150])
@pytest.mark.parametrize("layout", ["C", "T"])
def test_only_lower_triangles_are_read(n, layout):
    rng = np.random.default_rng(5 + n)
    lmat = spd_factor(rng, (2,), n)
    g = np.tril(rng.standard_normal((2, n, n)))
    junk_l = lmat + np.triu(rng.standard_normal((2, n, n)) * 1e3, 1)
    junk_g = g + np.triu(np.full((2, n, n), np.nan), 1)
    lay = LAYOUTS[layout]
    want = CA.cholesky_adjoint(lay(lmat), lay(g))
    np.testing.assert_array_equal(CA.cholesky_adjoint(lay(junk_l), lay(junk_g)), want)


@pytest.mark.parametrize("n", [4, 40, 100])
@pytest.mark.parametrize("where", ["l", "lbar"])
def test_nan_gives_nan(n, where):
    rng = np.random.default_rng(6)
    lmat = spd_factor(rng, (2,), n)
    g = rng.standard_normal((2, n, n))
    if where == "l":
        lmat[0, n - 1, n // 2] = np.nan
    else:
        g[0, n - 1, n // 2] = np.nan
    out = CA.cholesky_adjoint(lmat, g)
    assert np.isnan(out[0]).any()
    # the other matrix of the stack is untouched by the first's NaN
    np.testing.assert_allclose(out[1], direct_adjoint(lmat[1:], g[1:])[0], rtol=0,
                               atol=1e-12 * max(1.0, np.abs(out[1]).max()))


def test_zero_on_the_diagonal_gives_non_finite_values_not_a_crash():
    rng = np.random.default_rng(7)
    lmat = spd_factor(rng, (), 50)
    lmat[20, 20] = 0.0
    out = CA.cholesky_adjoint(lmat, rng.standard_normal((50, 50)))
    assert out.shape == (50, 50) and not np.isfinite(out).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_values_do_not_depend_on_the_thread_count(dtype):
    rng = np.random.default_rng(8)
    lmat = spd_factor(rng, (6,), 200).astype(dtype)        # large enough to be threaded
    g = rng.standard_normal((6, 200, 200)).astype(dtype)
    one = CA.cholesky_adjoint(lmat, g, threads=1)
    for threads in (2, 3, 8):
        np.testing.assert_array_equal(CA.cholesky_adjoint(lmat, g, threads=threads), one)
        np.testing.assert_array_equal(
            CA.cholesky_adjoint(transposed(lmat), g, threads=threads),
            CA.cholesky_adjoint(transposed(lmat), g, threads=1))
    _close(one, direct_adjoint(lmat, g), dtype)


def test_bad_input_names_the_argument():
    lmat = np.eye(3)
    g = np.ones((3, 3))
    with pytest.raises(TypeError, match="l must be a numpy.ndarray"):
        CA.cholesky_adjoint([[1.0]], g)
    with pytest.raises(TypeError, match="lbar must be a numpy.ndarray"):
        CA.cholesky_adjoint(lmat, [[1.0]])
    with pytest.raises(TypeError, match="l must be float32 or float64"):
        CA.cholesky_adjoint(np.eye(3, dtype=np.int64), g)
    with pytest.raises(TypeError, match="l must be float32 or float64"):
        CA.cholesky_adjoint(np.eye(3, dtype=np.complex128), g.astype(np.complex128))
    with pytest.raises(TypeError, match="l must be float32 or float64"):
        CA.cholesky_adjoint(np.eye(3, dtype=">f8"), g.astype(">f8"))
    with pytest.raises(TypeError, match="lbar must have l's dtype"):
        CA.cholesky_adjoint(lmat, g.astype(np.float32))
    with pytest.raises(ValueError, match="l must be a stack of square matrices"):
        CA.cholesky_adjoint(np.ones((3, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="l must be a stack of square matrices"):
        CA.cholesky_adjoint(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="lbar must have l's shape"):
        CA.cholesky_adjoint(lmat, np.ones((2, 3, 3)))
    with pytest.raises(ValueError, match="threads must be at least 1"):
        CA.cholesky_adjoint(lmat, g, threads=0)
    with pytest.raises(TypeError, match="lmat must be a float32 or float64"):
        B.cholesky_vjp_values(np.eye(3, dtype=np.int32), g)
    with pytest.raises(TypeError, match="lmat must be a float32 or float64"):
        B.cholesky_vjp_values(np.eye(3, dtype=np.complex64), g)


@pytest.mark.parametrize("lower", [False, True])
def test_cho_factor_gradient_matches_finite_differences(lower):
    # SciPy's default upper factor sends a transposed cotangent to the kernel
    rng = np.random.default_rng(9)
    n = 70
    a = rng.standard_normal((n, n))
    a = a @ a.T + n * np.eye(n)
    w = rng.standard_normal((n, n))

    def f(x):
        return nx.sum(nx.multiply(nx.scipy.linalg.cho_factor(x, lower=lower)[0], nx.asarray(w)))

    grad = np.asarray(nx.grad(f)(nx.asarray(a)))

    def fn(x):
        return float(np.sum(np.triu(scipy.linalg.cho_factor(x, lower=lower)[0]) * w)
                     if not lower else
                     np.sum(np.tril(scipy.linalg.cho_factor(x, lower=lower)[0]) * w))

    for seed in range(3):
        v = np.random.default_rng(20 + seed).standard_normal((n, n))
        v = v + v.T                      # a symmetric direction: a stays symmetric
        h = 1e-5
        fd = (fn(a + h * v) - fn(a - h * v)) / (2 * h)
        # cho_factor's derivative is symmetric: the directional derivative is <grad, v>
        np.testing.assert_allclose(np.sum(grad * v), fd, rtol=1e-7)
