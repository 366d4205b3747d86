"""The float32 factorization loops over stacks (nx_rune._kernels.lapack_loops): bit for bit
what SciPy's LAPACK wrappers give matrix by matrix (jaxlib's factors), and their checks."""
import numpy as np
import pytest
import scipy.linalg
import scipy.linalg.lapack as lapack

from nx_rune._kernels import lapack_loops


@pytest.mark.parametrize("shape", [(8, 8), (5, 3), (3, 5), (64, 64), (100, 30), (1, 1)])
@pytest.mark.parametrize("mode", ["economic", "full"])
def test_qr_stack_is_scipys_matrix_by_matrix(shape, mode):
    m, n = shape
    a = np.random.default_rng(0).standard_normal((3, m, n)).astype(np.float32)
    k = m if mode == "full" else min(m, n)
    q = np.empty((3, m, k), np.float32)
    r = np.empty((3, k, n), np.float32)
    assert lapack_loops.qr_f32(a, q, r) == 0
    for b in range(3):
        qs, rs = scipy.linalg.qr(a[b], mode=mode)
        np.testing.assert_array_equal(q[b], qs)
        np.testing.assert_array_equal(r[b], rs)


@pytest.mark.parametrize("n", [1, 3, 8, 33, 100])
def test_cholesky_stack_is_scipys_spotrf_lower(n):
    x = np.random.default_rng(1).standard_normal((4, n, n)).astype(np.float32)
    spd = x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=np.float32)
    out = np.empty_like(spd)
    assert lapack_loops.potrf_lower_f32(spd, out) == -1
    for b in range(4):
        want, info = lapack.spotrf(spd[b], lower=1, clean=1)
        assert info == 0
        np.testing.assert_array_equal(out[b], want)


def test_cholesky_stack_names_the_first_failure_and_checks_arguments():
    spd = np.stack([np.eye(3, dtype=np.float32), -np.eye(3, dtype=np.float32)])
    assert lapack_loops.potrf_lower_f32(spd, np.empty_like(spd)) == 1
    with pytest.raises(ValueError, match="C-contiguous float32"):
        lapack_loops.potrf_lower_f32(spd.astype(np.float64), np.empty_like(spd))
    with pytest.raises(ValueError, match="C-contiguous float32"):
        lapack_loops.potrf_lower_f32(spd, np.empty((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="q must be"):
        lapack_loops.qr_f32(np.ones((1, 3, 2), np.float32), np.empty((1, 3, 3), np.float32),
                            np.empty((1, 2, 2), np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 8), (5, 3), (3, 5), (40, 40), (1, 1)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_stack_is_scipys_gesdd_matrix_by_matrix(dtype, shape, full):
    m, n = shape
    k = min(m, n)
    a = np.random.default_rng(2).standard_normal((3, m, n)).astype(dtype)
    u = np.empty((3, m, m if full else k), dtype)
    s = np.empty((3, k), dtype)
    vt = np.empty((3, n if full else k, n), dtype)
    gesdd = lapack_loops.gesdd_f32 if dtype == np.float32 else lapack_loops.gesdd_f64
    assert gesdd(a, u, s, vt) == 0
    for b in range(3):
        us, ss, vs = scipy.linalg.svd(a[b], full_matrices=full, lapack_driver="gesdd")
        np.testing.assert_array_equal(u[b], us)
        np.testing.assert_array_equal(s[b], ss)
        np.testing.assert_array_equal(vt[b], vs)


@pytest.mark.parametrize("name, dtype", [("gesdd_f32", np.float64), ("gesdd_f64", np.float32)])
def test_svd_stack_rejects_the_other_dtype_and_bad_shapes(name, dtype):
    gesdd = getattr(lapack_loops, name)
    a = np.zeros((1, 3, 3), dtype)
    with pytest.raises(ValueError, match=f"{name}: a, u, s and vt must be C-contiguous"):
        gesdd(a, a.copy(), np.zeros((1, 3), dtype), a.copy())
    good = np.float32 if dtype == np.float64 else np.float64
    a = np.zeros((1, 3, 3), good)
    with pytest.raises(ValueError, match="u must be"):
        gesdd(a, np.zeros((1, 2, 2), good), np.zeros((1, 3), good), a.copy())


def test_factors_flush_subnormals_as_jaxlib_under_xla_but_not_a_tiny_matrix():
    # XLA runs jaxlib's LAPACK calls with flush-to-zero / denormals-are-zero on; the loops do
    # too (a covariance whose far entries are float32 subnormals: those read as zero, so the
    # factor is that of the matrix with them zeroed), except for a matrix whose subnormal entries
    # carry its significant bits, which keeps them (JAX would return zeros)
    n = 600       # (at 300 the subnormals happen not to change the factors)
    i = np.arange(n)
    cov = (np.exp(-np.abs(i[:, None] - i[None, :]) / 3.0) + 0.5 * np.eye(n)).astype(np.float32)
    assert ((cov != 0) & (np.abs(cov) < np.finfo(np.float32).tiny)).any()
    flushed = np.where(np.abs(cov) < np.finfo(np.float32).tiny, np.float32(0), cov)
    w1, v1 = np.empty((1, n), np.float32), np.empty((1, n, n), np.float32)
    w2, v2 = np.empty((1, n), np.float32), np.empty((1, n, n), np.float32)
    assert lapack_loops.syevd_f32(cov[None].copy(), w1, v1, True) == 0
    assert lapack_loops.syevd_f32(flushed[None].copy(), w2, v2, True) == 0
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(v1, v2)
    tiny = (np.diag([1.0, 2.0, 3.0]) * 1e-39).astype(np.float32)
    w, v = np.empty((1, 3), np.float32), np.empty((1, 3, 3), np.float32)
    assert lapack_loops.syevd_f32(tiny[None].copy(), w, v, True) == 0
    np.testing.assert_array_equal(w[0], np.diag(tiny))
    s = np.empty((1, 3), np.float32)
    u, vt = np.empty((1, 3, 3), np.float32), np.empty((1, 3, 3), np.float32)
    assert lapack_loops.gesdd_f32(tiny[None].copy(), u, s, vt) == 0
    np.testing.assert_array_equal(s[0], np.diag(tiny)[::-1])
