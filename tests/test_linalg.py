"""nx.linalg, nx.scipy.linalg and the multivariate normal: values against NumPy/SciPy (float32,
float64, complex, batched (3, 4, n, n) stacks), derivatives against float64 central finite
differences (every function, batched inputs; second order for the decompositions), degenerate
cases (repeated eigen/singular values, rank-deficient pinv/lstsq) and bad input."""
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

import nx_rune as nx
from nx_rune.scipy import _mvn as mvn

L = nx.linalg
SL = nx.scipy.linalg
LinAlgError = np.linalg.LinAlgError
BATCH = (3, 4)


def rng_for(seed):
    return np.random.default_rng(seed)


def well(rng, batch, n, dtype=np.float64):
    """Matrices with singular values in [0.5, 2.5] (well conditioned, either sign of det)."""
    q1 = np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
    q2 = np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
    s = rng.uniform(0.5, 2.5, batch + (n,))
    return ((q1 * s[..., None, :]) @ q2).astype(dtype)


def spd(rng, batch, n, dtype=np.float64):
    """Symmetric positive-definite matrices with distinct eigenvalues in [0.5, 4.5]."""
    q = np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
    w = np.sort(rng.uniform(0.5, 3.0, batch + (n,)), -1) + np.arange(n) * 0.3
    return ((q * w[..., None, :]) @ np.swapaxes(q, -1, -2)).astype(dtype)


def rect(rng, batch, m, n, dtype=np.float64):
    """(m, n) matrices with distinct singular values in [0.5, 3.5]."""
    k = min(m, n)
    u = np.linalg.qr(rng.standard_normal(batch + (m, k)))[0]
    v = np.linalg.qr(rng.standard_normal(batch + (n, k)))[0]
    s = np.sort(rng.uniform(0.5, 2.5, batch + (k,)), -1)[..., ::-1] + np.arange(k)[::-1] * 0.3
    return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dtype)


def hermitian_pd(rng, batch, n, dtype=np.complex128):
    z = rng.standard_normal(batch + (n, n)) + 1j * rng.standard_normal(batch + (n, n))
    return (z @ np.conj(np.swapaxes(z, -1, -2)) + n * np.eye(n)).astype(dtype)


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-5) if np.dtype(dtype) in (np.float32, np.complex64) \
        else dict(rtol=1e-11, atol=1e-11)


def close(got, want, dtype=np.float64, **kw):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, **{**tol(dtype), **kw})


def t(a):
    return nx.asarray(np.asarray(a))


DTYPES = [np.float32, np.float64]


# -- values against NumPy / SciPy ------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_inv_det_slogdet_match_numpy(dtype):
    rng = rng_for(0)
    a, s = well(rng, BATCH, 5, dtype), spd(rng, BATCH, 5, dtype)
    lo = L.cholesky(t(s))
    assert lo.dtype == dtype
    close(lo, np.linalg.cholesky(s), dtype)
    close(L.cholesky(t(s), upper=True), np.linalg.cholesky(s, upper=True), dtype)
    close(L.inv(t(a)), np.linalg.inv(a), dtype)
    close(L.det(t(a)), np.linalg.det(a), dtype)
    sign, logabs = L.slogdet(t(a))
    want = np.linalg.slogdet(a)
    close(sign, want.sign, dtype)
    close(logabs, want.logabsdet, dtype)
    assert sign.dtype == logabs.dtype == dtype


def test_det_is_numpys_to_the_last_bits():
    # NumPy computes det as sign * exp(logabsdet) too (its scalar exp against the ufunc's SIMD
    # exp: at most an ulp or two apart)
    a = well(rng_for(1), BATCH, 6)
    np.testing.assert_allclose(np.asarray(L.det(t(a))), np.linalg.det(a), rtol=5e-16, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_matches_numpy(dtype):
    rng = rng_for(2)
    a = well(rng, BATCH, 5, dtype)
    b = rng.standard_normal(BATCH + (5, 2)).astype(dtype)
    close(L.solve(t(a), t(b)), np.linalg.solve(a, b), dtype)
    v = rng.standard_normal(5).astype(dtype)                  # a vector: result (3, 4, 5)
    close(L.solve(t(a), t(v)), np.linalg.solve(a, v), dtype)
    b2 = rng.standard_normal((4, 5, 3)).astype(dtype)         # batch axes broadcast
    a2 = a[:, :1]
    close(L.solve(t(a2), t(b2)), np.linalg.solve(a2, b2), dtype)


def _signed_as(v, want):
    """v's eigenvector columns, each with the sign of want's: an eigenvector's sign is free
    (float32 eigh is SciPy's ssyevd, as JAX's, whose signs may differ from NumPy's build)."""
    v = np.asarray(v)
    return v * np.where(np.sum(v * want, axis=-2, keepdims=True) < 0, -1, 1).astype(v.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_eigvalsh_match_numpy(dtype):
    s = spd(rng_for(3), BATCH, 5, dtype)
    for uplo in ("L", "U"):
        want_w, want_v = np.linalg.eigh(s, UPLO=uplo)
        w, v = L.eigh(t(s), UPLO=uplo)            # symmetric input: the same values
        close(w, want_w, dtype)
        close(_signed_as(v, want_v), want_v, dtype)
        close(L.eigvalsh(t(s), UPLO=uplo), np.linalg.eigvalsh(s, UPLO=uplo), dtype)
        # without symmetrize_input only that triangle is read (NumPy's reading)
        lower_only = np.tril(s) if uplo == "L" else np.triu(s)
        w, v = L.eigh(t(lower_only), UPLO=uplo, symmetrize_input=False)
        close(w, want_w, dtype)
        close(_signed_as(v, want_v), want_v, dtype)
        close(L.eigvalsh(t(lower_only), UPLO=uplo, symmetrize_input=False),
              np.linalg.eigvalsh(s, UPLO=uplo), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_svd_qr_pinv_match_numpy(dtype, shape):
    x = rng_for(4).standard_normal(BATCH + shape).astype(dtype)
    for full in (True, False):
        u, s, vh = L.svd(t(x), full_matrices=full)
        want = np.linalg.svd(x, full_matrices=full)
        close(u, want.U, dtype)
        close(s, want.S, dtype)
        close(vh, want.Vh, dtype)
    close(L.svd(t(x), compute_uv=False), np.linalg.svd(x, compute_uv=False), dtype)
    close(L.svdvals(t(x)), np.linalg.svdvals(x), dtype)
    for mode in ("reduced", "complete"):
        q, r = L.qr(t(x), mode=mode)
        want = np.linalg.qr(x, mode=mode)
        close(q, want.Q, dtype)
        close(r, want.R, dtype)
    close(L.pinv(t(x)), np.linalg.pinv(x, rtol=None), dtype)          # Array API default
    close(L.pinv(t(x), rtol=0.3), np.linalg.pinv(x, rtol=0.3), dtype)
    cut = rng_for(5).uniform(0.0, 0.5, BATCH)                      # one rtol per matrix
    close(L.pinv(t(x), rtol=cut), np.linalg.pinv(x, rtol=cut), dtype)


def test_matrix_rank_matches_numpy():
    rng = rng_for(6)
    x = rng.standard_normal(BATCH + (6, 2)) @ rng.standard_normal(BATCH + (2, 5))  # rank 2
    x[0, 0] = 0.0
    r = L.matrix_rank(t(x))
    assert r.dtype == np.int32 and r.shape == BATCH
    np.testing.assert_array_equal(np.asarray(r), np.linalg.matrix_rank(x))
    np.testing.assert_array_equal(np.asarray(L.matrix_rank(t(x), rtol=0.5)),
                                  np.linalg.matrix_rank(x, rtol=0.5))
    np.testing.assert_array_equal(np.asarray(L.matrix_rank(t(x), 1e3)),
                                  np.linalg.matrix_rank(x, 1e3))
    assert int(L.matrix_rank(t([0.0, 2.0]))) == np.linalg.matrix_rank(np.array([0.0, 2.0])) == 1


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 5, 8, 13])
def test_matrix_power_matches_numpy(n):
    a = well(rng_for(7), BATCH, 4) * 0.8
    close(L.matrix_power(t(a), n), np.linalg.matrix_power(a, n), rtol=1e-10)
    ints = rng_for(8).integers(-3, 4, (2, 3, 3))
    if n >= 0:
        got = L.matrix_power(t(ints.astype(np.int32)), n)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(got), np.linalg.matrix_power(ints, n))


ORDS = [2, 1, math.inf, -math.inf, 0, 3, -1.5, 0.5]


@pytest.mark.parametrize("dtype", DTYPES + [np.complex128])
@pytest.mark.parametrize("ord", ORDS)
def test_vector_norm_matches_numpy(dtype, ord):
    x = rng_for(9).standard_normal((3, 4, 5))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng_for(10).standard_normal((3, 4, 5))
    x = x.astype(dtype)
    x[0, 0, 0] = 0.0
    for axis in (None, -1, (0, 2)):
        for keepdims in (False, True):
            got = L.vector_norm(t(x), axis=axis, keepdims=keepdims, ord=ord)
            with np.errstate(divide="ignore"):     # NumPy's 0 ** -1.5
                want = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
            assert got.dtype == want.dtype
            close(got, want, dtype, rtol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("dtype", DTYPES + [np.complex128])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm_and_norm_match_numpy(dtype, ord):
    x = rng_for(11).standard_normal((3, 4, 5))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng_for(12).standard_normal((3, 4, 5))
    x = x.astype(dtype)
    kw = dict(rtol=1e-4) if dtype == np.float32 else {}
    for keepdims in (False, True):
        got = L.matrix_norm(t(x), keepdims=keepdims, ord=ord)
        want = np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
        assert got.dtype == want.dtype
        close(got, want, dtype, **kw)
        for axis in ((1, 2), (2, 0)):
            close(L.norm(t(x), ord, axis, keepdims), np.linalg.norm(x, ord, axis, keepdims),
                  dtype, **kw)
    close(L.norm(t(x[0]), ord), np.linalg.norm(x[0], ord), dtype, **kw)


def test_norm_defaults_match_numpy():
    x = rng_for(13).standard_normal((3, 4, 5))
    close(L.norm(t(x)), np.linalg.norm(x))
    close(L.norm(t(x), keepdims=True), np.linalg.norm(x, keepdims=True))
    close(L.norm(t(x), axis=1), np.linalg.norm(x, axis=1))
    close(L.norm(t(x[0, 0]), 3), np.linalg.norm(x[0, 0], 3))
    close(L.norm(t(x), 1, axis=-1, keepdims=True), np.linalg.norm(x, 1, -1, True))


@pytest.mark.parametrize("shape,k", [((6, 3), 2), ((6, 3), None), ((3, 5), 2), ((4, 4), None)])
def test_lstsq_matches_numpy(shape, k):
    rng = rng_for(14)
    a = rng.standard_normal(shape)
    b = rng.standard_normal((shape[0],) if k is None else (shape[0], k))
    x, res, rank, s = L.lstsq(t(a), t(b))
    want = np.linalg.lstsq(a, b)
    close(x, want[0], rtol=1e-10, atol=1e-10)
    close(res, want[1], rtol=1e-9, atol=1e-10)
    assert int(rank) == want[2] and rank.dtype == np.int32
    close(s, want[3])


def test_lstsq_rank_deficient_matches_numpy():
    rng = rng_for(15)
    a = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))      # rank 2 of 4
    b = rng.standard_normal((6, 3))
    x, res, rank, s = L.lstsq(t(a), t(b))
    want = np.linalg.lstsq(a, b)
    close(x, want[0], rtol=1e-9, atol=1e-10)
    assert int(rank) == want[2] == 2 and res.shape == want[1].shape == (0,)
    close(x, np.linalg.pinv(a) @ b, rtol=1e-9, atol=1e-10)              # the minimum-norm one


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_triangular_matches_scipy(dtype):
    rng = rng_for(16)
    a = (rng.standard_normal(BATCH + (5, 5)) + 4 * np.eye(5)).astype(dtype)
    b = rng.standard_normal(BATCH + (5, 2)).astype(dtype)
    for lower in (True, False):
        for trans in (0, 1, 2, "T", "C"):
            for unit in (False, True):
                got = SL.solve_triangular(t(a), t(b), trans=trans, lower=lower,
                                          unit_diagonal=unit)
                want = scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower,
                                                     unit_diagonal=unit)
                assert got.dtype == dtype
                close(got, want, dtype, rtol=1e-4 if dtype == np.float32 else 1e-10)
    v = rng.standard_normal(BATCH + (5,)).astype(dtype)       # a stack of vectors
    close(SL.solve_triangular(t(a), t(v), lower=True),
          np.linalg.solve(np.tril(a), v[..., None])[..., 0], dtype,
          rtol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cho_factor_and_solve_match_scipy(dtype):
    rng = rng_for(17)
    a = spd(rng, (), 5, dtype)
    b = rng.standard_normal((5, 3)).astype(dtype)
    for lower in (True, False):
        c, low = SL.cho_factor(t(a), lower=lower)
        wc, wlow = scipy.linalg.cho_factor(a, lower=lower)
        assert low == wlow == lower
        tri = np.tril if lower else np.triu
        close(c, tri(wc), dtype)                 # SciPy leaves garbage in the other triangle
        close(SL.cho_solve((c, low), t(b)), scipy.linalg.cho_solve((wc, wlow), b), dtype,
              rtol=1e-4 if dtype == np.float32 else 1e-10)
    batch = spd(rng, BATCH, 4, dtype)
    bb = rng.standard_normal(BATCH + (4,)).astype(dtype)
    close(SL.cho_solve(SL.cho_factor(t(batch)), t(bb)),
          np.linalg.solve(batch, bb[..., None])[..., 0], dtype,
          rtol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("scale", [1e-3, 0.1, 0.5, 1.5, 3.0, 20.0, 150.0])
def test_expm_matches_scipy(scale):
    # scales that pick each Pade degree (3, 5, 7, 9, 13) and 13 with scaling and squaring
    a = rng_for(18).standard_normal((4, 4))
    a *= scale / np.abs(a).sum(0).max()
    want = scipy.linalg.expm(a)
    close(SL.expm(t(a)), want, rtol=1e-12 * max(1, scale), atol=1e-12 * np.abs(want).max())


def test_expm_batched_float32_and_special_values():
    a = rng_for(19).standard_normal(BATCH + (5, 5)) * 0.7
    close(SL.expm(t(a)), scipy.linalg.expm(a), rtol=1e-11, atol=1e-11)
    a32 = a.astype(np.float32)
    got = SL.expm(t(a32))
    assert got.dtype == np.float32
    close(got, scipy.linalg.expm(a), np.float32, rtol=1e-4, atol=1e-4)
    close(SL.expm(t(np.zeros((3, 3)))), np.eye(3))
    assert SL.expm(t(np.zeros((2, 0, 0)))).shape == (2, 0, 0)
    assert np.isnan(np.asarray(SL.expm(t([[np.nan, 0.0], [0.0, 1.0]])))).all()


def test_multivariate_normal_matches_scipy():
    rng = rng_for(20)
    cov = spd(rng, (), 4)
    mean = rng.standard_normal(4)
    x = rng.standard_normal((3, 5, 4))
    want = scipy.stats.multivariate_normal(mean, cov).logpdf(x)
    close(mvn.logpdf(t(x), t(mean), t(cov)), want, rtol=1e-12)
    close(mvn.pdf(t(x), t(mean), t(cov)), np.exp(want), rtol=1e-12)
    # batched covariances: one per leading index
    covs = spd(rng, (5,), 4)
    got = mvn.logpdf(t(x), t(mean), t(covs))
    want = np.stack([scipy.stats.multivariate_normal(mean, c).logpdf(x[:, i])
                     for i, c in enumerate(covs)], 1)
    close(got, want, rtol=1e-12)
    # scalar covariance (cov * I), scalar mean and covariance (univariate)
    close(mvn.logpdf(t(x), t(mean), 0.7),
          scipy.stats.multivariate_normal(mean, 0.7 * np.eye(4)).logpdf(x), rtol=1e-12)
    close(mvn.logpdf(t(x[..., 0]), 0.3, 1.7),
          scipy.stats.norm(0.3, np.sqrt(1.7)).logpdf(x[..., 0]), rtol=1e-12)
    got32 = mvn.logpdf(t(x.astype(np.float32)), t(mean.astype(np.float32)),
                       t(cov.astype(np.float32)))
    assert got32.dtype == np.float32


def test_array_api_shared_names_match_numpy():
    rng = rng_for(21)
    a, b = rng.standard_normal((4, 1, 3)), rng.standard_normal((5, 3))
    close(L.cross(t(a), t(b)), np.linalg.cross(a, b))
    a2, b2 = a.transpose(2, 0, 1), b.T[:, None, :]            # (3, 4, 1) and (3, 1, 5)
    close(L.cross(t(a2), t(b2), axis=0), np.linalg.cross(a2, b2, axis=0))
    u, v = rng.standard_normal(4), rng.standard_normal(3)
    np.testing.assert_array_equal(np.asarray(L.outer(t(u), t(v))), np.linalg.outer(u, v))
    x = rng.standard_normal((2, 3, 4, 5))
    for off in (-2, 0, 1, 7):
        close(L.trace(t(x), offset=off), np.linalg.trace(x, offset=off))
        close(L.diagonal(t(x), offset=off), np.linalg.diagonal(x, offset=off))
    assert L.trace(t(x.astype(np.int8))).dtype == np.int32
    assert L.trace(t(x), dtype=np.float32).dtype == np.float32
    assert L.matmul is nx.matmul and L.tensordot is nx.tensordot and L.vecdot is nx.vecdot
    close(L.matrix_transpose(t(x)), np.swapaxes(x, -1, -2))


def test_integer_inputs_compute_in_float():
    a = np.array([[2, 1], [1, 3]], dtype=np.int32)
    got = L.inv(t(a))
    assert got.dtype == np.float32
    close(got, np.linalg.inv(a), np.float32)
    assert L.det(t(a.astype(np.int64))).dtype == np.float64


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_inputs_forward(dtype):
    rng = rng_for(22)
    h = hermitian_pd(rng, (2,), 4, dtype)
    z = (rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))).astype(dtype)
    sq = (rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))).astype(dtype)
    kw = dict(rtol=1e-4, atol=1e-4) if dtype == np.complex64 else {}
    close(L.cholesky(t(h)), np.linalg.cholesky(h), dtype, **kw)
    close(L.cholesky(t(h), upper=True), np.linalg.cholesky(h, upper=True), dtype, **kw)
    close(L.inv(t(sq)), np.linalg.inv(sq), dtype, **kw)
    close(L.det(t(sq)), np.linalg.det(sq), dtype, **kw)
    sign, logabs = L.slogdet(t(sq))
    close(sign, np.linalg.slogdet(sq).sign, dtype, **kw)
    assert logabs.dtype == np.finfo(dtype).dtype
    close(logabs, np.linalg.slogdet(sq).logabsdet, dtype, **kw)
    close(L.solve(t(sq), t(z)), np.linalg.solve(sq, z), dtype, **kw)
    w, v = L.eigh(t(h))
    assert w.dtype == np.finfo(dtype).dtype and v.dtype == dtype
    close(w, np.linalg.eigh(h)[0], dtype, **kw)
    close(v, np.linalg.eigh(h)[1], dtype, **kw)
    close(L.eigvalsh(t(h)), np.linalg.eigvalsh(h), dtype, **kw)
    u, s, vh = L.svd(t(z), full_matrices=False)
    assert s.dtype == np.finfo(dtype).dtype
    close(s, np.linalg.svd(z)[1], dtype, **kw)
    close(u @ (s[..., None] * vh), z, dtype, **kw)
    q, r = L.qr(t(z))
    close(q, np.linalg.qr(z)[0], dtype, **kw)
    close(L.pinv(t(z)), np.linalg.pinv(z, rtol=None), dtype, **kw)
    close(L.matrix_norm(t(z), ord="nuc"), np.linalg.matrix_norm(z, ord="nuc"), dtype, **kw)
    c, low = SL.cho_factor(t(h))
    close(SL.cho_solve((c, low), t(z)), np.linalg.solve(h, z), dtype, **kw)
    tri = np.tril(sq) + 3 * np.eye(4)
    x = SL.solve_triangular(t(tri), t(z), trans="C", lower=True)
    close(x, np.linalg.solve(np.conj(np.swapaxes(tri, -1, -2)), z), dtype, **kw)
    close(SL.expm(t(sq * 0.5)), scipy.linalg.expm(sq * 0.5), dtype,
          **(kw or dict(rtol=1e-12, atol=1e-12)))
    close(L.matrix_power(t(sq), 5), np.linalg.matrix_power(sq, 5), dtype, **kw)
    got, want = L.lstsq(t(z[0]), t(z[1, :, :2])), np.linalg.lstsq(z[0], z[1, :, :2])
    for g, w in zip(got, want):
        close(g, w, dtype, **(kw or dict(rtol=1e-10, atol=1e-10)))
    assert got.residuals.dtype == got.s.dtype == np.finfo(dtype).dtype


# -- derivatives against float64 finite differences -----------------------------------------

def _signfixed_eigh(a):
    w, v = L.eigh(a)
    return w, v * nx.sign(v[..., :1, :])        # eigenvector signs fixed by their first row


def _signfixed_svd(a):
    u, s, vh = L.svd(a, full_matrices=False)
    sg = nx.sign(u[..., :1, :])
    return u * sg, s, vh * nx.matrix_transpose(sg)


def _gp_nll(theta, xs, y):
    """Negative log marginal likelihood of a Gaussian process with an RBF kernel."""
    amp, ell, noise = nx.exp(theta[0]), nx.exp(theta[1]), nx.exp(theta[2])
    d2 = (xs[:, None] - xs[None, :]) ** 2
    k = amp * nx.exp(-0.5 * d2 / ell ** 2) + noise * nx.eye(xs.shape[0], dtype=nx.float64)
    return -mvn.logpdf(y, nx.zeros_like(y), k)


R = rng_for(30)
A3 = well(R, (2,), 3)
S3 = spd(R, (2,), 3)
B32 = R.standard_normal((2, 3, 2))
TALL = rect(R, (2,), 4, 3)
WIDE = rect(R, (2,), 3, 4)
TRI = np.tril(R.uniform(-1, 1, (2, 3, 3))) + 3 * np.eye(3)
XS = np.linspace(-1.0, 1.0, 5)
YS = np.sin(3 * XS)

# (name, function, arguments, order): every public function, batched where it batches
DERIVATIVES = [
    ("cholesky", L.cholesky, [S3], 2),
    ("cholesky_upper", lambda a: L.cholesky(a, upper=True), [S3], 1),
    ("inv", L.inv, [A3], 2),
    ("det", L.det, [A3], 2),
    ("slogdet", lambda a: L.slogdet(a).logabsdet, [A3], 2),
    ("solve", L.solve, [A3[:, None], B32[None]], 2),           # batch axes broadcast
    ("solve_vector", L.solve, [A3, B32[0, :, 0]], 1),
    ("eigh", _signfixed_eigh, [S3], 2),
    ("eigh_upper", lambda a: L.eigh(a, UPLO="U").eigenvalues, [S3], 1),
    ("eigvalsh", L.eigvalsh, [S3], 2),
    ("svd_tall", _signfixed_svd, [TALL], 2),
    ("svd_wide", _signfixed_svd, [WIDE], 2),
    ("svd_square_full", lambda a: L.svd(a)[1], [A3], 1),
    ("svdvals", L.svdvals, [TALL], 2),
    ("qr_tall", L.qr, [TALL], 2),
    ("qr_wide", L.qr, [WIDE], 2),
    ("qr_square_complete", lambda a: L.qr(a, mode="complete"), [A3], 1),
    ("pinv", L.pinv, [TALL], 2),
    ("pinv_wide", L.pinv, [WIDE], 1),
    ("lstsq", lambda a, b: L.lstsq(a, b)[0], [TALL[0], B32[0, :, 0].repeat(2)[:4]], 2),
    ("lstsq_all", lambda a, b: L.lstsq(a, b)[:2] + (L.lstsq(a, b).s,),
     [TALL[0], R.standard_normal((4, 2))], 1),
    ("lstsq_wide", lambda a, b: L.lstsq(a, b)[0], [WIDE[0], R.standard_normal((3, 2))], 1),
    ("matrix_power_5", lambda a: L.matrix_power(a, 5), [A3 * 0.7], 2),
    ("matrix_power_-2", lambda a: L.matrix_power(a, -2), [A3], 1),
    ("vector_norm_2", lambda x: L.vector_norm(x, axis=-1), [B32], 2),
    ("vector_norm_all", L.vector_norm, [B32], 1),
    ("vector_norm_1", lambda x: L.vector_norm(x, ord=1, axis=(0, 2)), [B32], 1),
    ("vector_norm_3", lambda x: L.vector_norm(x, ord=3), [B32], 1),
    ("vector_norm_inf", lambda x: L.vector_norm(x, ord=math.inf, axis=1), [B32], 1),
    ("matrix_norm_fro", L.matrix_norm, [TALL], 2),
    ("matrix_norm_nuc", lambda x: L.matrix_norm(x, ord="nuc"), [TALL], 2),
    ("matrix_norm_2", lambda x: L.matrix_norm(x, ord=2), [TALL], 1),
    ("matrix_norm_-2", lambda x: L.matrix_norm(x, ord=-2), [TALL], 1),
    ("matrix_norm_1", lambda x: L.matrix_norm(x, ord=1, keepdims=True), [TALL], 1),
    ("matrix_norm_inf", lambda x: L.matrix_norm(x, ord=math.inf), [TALL], 1),
    ("norm", lambda x: L.norm(x, axis=(2, 0)), [B32], 1),
    ("solve_triangular", lambda a, b: SL.solve_triangular(a, b, lower=True), [TRI, B32], 2),
    ("solve_triangular_T", lambda a, b: SL.solve_triangular(a, b, trans="T", lower=True,
                                                            unit_diagonal=True), [TRI, B32], 1),
    ("solve_triangular_upper", lambda a, b: SL.solve_triangular(
        np.swapaxes(a, -1, -2) if isinstance(a, np.ndarray) else nx.matrix_transpose(a), b,
        trans=2), [TRI, B32], 1),
    # cho_factor reads one triangle and takes the derivative of the symmetric part: finite
    # differences see that derivative through a symmetric parametrization
    ("cho_factor", lambda a: SL.cho_factor(_sym(a))[0], [S3], 2),
    ("cho_solve", lambda a, b: SL.cho_solve(SL.cho_factor(_sym(a), lower=True), b), [S3, B32],
     2),
    ("expm_small", SL.expm, [A3 * 0.05], 2),
    ("expm_scaled", SL.expm, [A3 * 4.0], 2),
    ("mvn_logpdf", mvn.logpdf, [B32[..., 0], B32[0, :, 1], S3[0]], 2),
    ("mvn_pdf", mvn.pdf, [B32[..., 0], B32[0, :, 1], S3], 1),
    ("gp_nll", lambda th: _gp_nll(th, t(XS), t(YS)), [np.array([0.1, -0.5, -2.0])], 2),
    ("cross", L.cross, [B32[..., :1].repeat(3, -1), R.standard_normal((3, 3))], 1),
    ("outer", L.outer, [XS, YS[:3]], 1),
    ("trace", lambda x: L.trace(x, offset=1), [TALL], 1),
    ("diagonal", L.diagonal, [TALL], 1),
]


def _sym(a):
    return (a + nx.matrix_transpose(a)) * 0.5


@pytest.mark.parametrize("name,f,args,order", DERIVATIVES, ids=[d[0] for d in DERIVATIVES])
def test_derivatives_match_finite_differences(name, f, args, order):
    nx.check_grads(f, [t(a) for a in args], order=order, eps=1e-6, atol=1e-6, rtol=1e-6)


def test_hessian_of_slogdet_is_analytic():
    # d2 log|det A| / dA_ij dA_kl = -inv(A)_jk inv(A)_li
    a = well(rng_for(31), (), 3)
    ai = np.linalg.inv(a)
    want = -np.einsum("jk,li->ijkl", ai, ai)
    close(nx.hessian(lambda x: L.slogdet(x).logabsdet)(t(a)), want, rtol=1e-10, atol=1e-12)
    close(nx.jacfwd(nx.grad(lambda x: L.det(x)))(t(a)),
          np.linalg.det(a) * (np.einsum("ji,lk->ijkl", ai, ai) - np.einsum("jk,li->ijkl", ai, ai)),
          rtol=1e-10, atol=1e-12)


def test_gaussian_likelihood_hessian_matches_scipy_finite_differences():
    # the GP log-likelihood through cholesky and solve_triangular, differentiated twice, against
    # central differences of SciPy's multivariate normal (the peer library)
    def scipy_nll(th):
        amp, ell, noise = np.exp(th)
        k = amp * np.exp(-0.5 * (XS[:, None] - XS[None, :]) ** 2 / ell ** 2) + noise * np.eye(5)
        return -scipy.stats.multivariate_normal(np.zeros(5), k).logpdf(YS)

    th = np.array([0.1, -0.5, -2.0])
    h, eps = np.zeros((3, 3)), 1e-4
    for i in range(3):
        for j in range(3):
            e_i, e_j = np.eye(3)[i] * eps, np.eye(3)[j] * eps
            h[i, j] = (scipy_nll(th + e_i + e_j) - scipy_nll(th + e_i - e_j)
                       - scipy_nll(th - e_i + e_j) + scipy_nll(th - e_i - e_j)) / (4 * eps ** 2)
    f = lambda x: _gp_nll(x, t(XS), t(YS))  # noqa: E731
    close(f(t(th)), scipy_nll(th), rtol=1e-12)
    close(nx.hessian(f)(t(th)), h, rtol=1e-5, atol=1e-5)
    close(nx.jacrev(nx.grad(f))(t(th)), h, rtol=1e-5, atol=1e-5)


def test_cholesky_derivative_is_with_respect_to_the_lower_triangle():
    # without symmetrize_input, cholesky reads the lower triangle only (NumPy's reading):
    # perturbing the upper one changes nothing
    s = spd(rng_for(32), (), 3)
    g = np.asarray(nx.grad(lambda a: nx.sum(L.cholesky(a, symmetrize_input=False) ** 3))(t(s)))
    assert np.all(g[np.triu_indices(3, 1)] == 0) and np.any(g[np.tril_indices(3, -1)] != 0)
    # a symmetric parametrization gets the symmetric derivative
    p = rng_for(33).standard_normal((3, 3))
    f = lambda p: nx.sum(L.cholesky(p @ nx.matrix_transpose(p) + nx.eye(3, dtype=nx.float64)) ** 3)
    nx.check_grads(f, [t(p)], order=2, eps=1e-6, atol=1e-6, rtol=1e-6)


def test_float32_derivatives_stay_float32():
    s = spd(rng_for(34), (2,), 3, np.float32)
    g = nx.grad(lambda a: nx.sum(L.cholesky(a)) + L.slogdet(a).logabsdet.sum()
                + nx.sum(L.eigvalsh(a)) + nx.sum(L.svdvals(a)))(t(s))
    assert g.dtype == np.float32
    g64 = nx.grad(lambda a: nx.sum(L.cholesky(a)) + L.slogdet(a).logabsdet.sum()
                  + nx.sum(L.eigvalsh(a)) + nx.sum(L.svdvals(a)))(t(s.astype(np.float64)))
    close(g, g64, np.float32, rtol=1e-3, atol=1e-4)


def test_complex_solve_and_inv_differentiate_holomorphically():
    # holomorphic: the JVP along a complex direction v equals (f(x + eps v) - f(x - eps v)) / 2eps
    rng = rng_for(35)
    a = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) + 3 * np.eye(3))
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    va = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    tri = lambda x, tr: SL.solve_triangular(x, t(b), trans=tr, lower=True)  # noqa: E731
    tri_ref = lambda x, tr: scipy.linalg.solve_triangular(x, b, trans=tr, lower=True)  # noqa
    for f, ref in ((lambda x: L.solve(x, t(b)), lambda x: np.linalg.solve(x, b)),
                   (L.inv, np.linalg.inv),
                   (lambda x: tri(x, 0), lambda x: tri_ref(x, 0)),
                   (lambda x: tri(x, 1), lambda x: tri_ref(x, 1))):
        _, tan = nx.jvp(f, (t(a),), (t(va),))
        eps = 1e-6
        close(tan, (ref(a + eps * va) - ref(a - eps * va)) / (2 * eps), rtol=1e-6, atol=1e-6)
        # the VJP is the JVP's transpose (no conjugation): <u, J v> == <J^T u, v>
        out, vjp_fn = nx.vjp(f, t(a))
        u = rng.standard_normal(out.shape) + 1j * rng.standard_normal(out.shape)
        (ct,) = vjp_fn(t(u))
        np.testing.assert_allclose(np.sum(u * np.asarray(tan)), np.sum(np.asarray(ct) * va),
                                   rtol=1e-10)


# -- degenerate cases ------------------------------------------------------------------------

def test_repeated_eigenvalues():
    q = np.linalg.qr(rng_for(36).standard_normal((3, 3)))[0]
    a = q @ np.diag([1.0, 1.0, 2.0]) @ q.T
    # functions of the eigenvalues alone: sum(w^2) = |A|_F^2 has gradient 2A (symmetric, the
    # input symmetrized), the same through eigh and eigvalsh, finite although w_0 == w_1 (JAX
    # 0.10.2: same)
    for f in (lambda x: nx.sum(L.eigh(x).eigenvalues ** 2), lambda x: nx.sum(L.eigvalsh(x) ** 2)):
        close(nx.grad(f)(t(a)), 2 * a, rtol=1e-10, atol=1e-12)
    _, tan = nx.jvp(lambda x: L.eigh(x).eigenvalues, (t(a),), (t(np.eye(3)),))
    close(tan, np.ones(3))
    # at exactly equal computed eigenvalues the eigenvectors have no derivative: inf/NaN (as
    # JAX), never a finite wrong value; second derivatives of eigenvalues pass through the
    # eigenvectors: NaN there too, as JAX's hessian
    d = np.diag([1.0, 1.0, 2.0])
    g = np.asarray(nx.grad(lambda x: nx.sum(L.eigh(x).eigenvectors[:, 0]))(t(d)))
    assert not np.isfinite(g).all()
    assert np.isnan(np.asarray(nx.hessian(lambda x: nx.sum(L.eigvalsh(x) ** 2))(t(d)))).any()


def test_repeated_and_zero_singular_values():
    q = np.linalg.qr(rng_for(37).standard_normal((4, 4)))[0]
    # an orthogonal matrix: all singular values 1; the nuclear norm's gradient U V^T = q
    for f in (lambda x: nx.sum(L.svd(x).S), lambda x: nx.sum(L.svdvals(x)),
              lambda x: L.matrix_norm(x, ord="nuc")):
        close(nx.grad(f)(t(q)), q, rtol=1e-10, atol=1e-12)
    # a rank-1 tall matrix: zero singular values; the largest singular value is smooth
    u, v = np.array([1.0, 2.0, 2.0]) / 3, np.array([0.6, 0.8])
    a = 5 * np.outer(u, v)
    close(nx.grad(lambda x: L.svd(x, full_matrices=False).S[0])(t(a)), np.outer(u, v),
          rtol=1e-10, atol=1e-12)
    close(nx.grad(lambda x: L.matrix_norm(x, ord=2))(t(a)), np.outer(u, v),
          rtol=1e-10, atol=1e-12)
    # U of a tall matrix at an exactly zero singular value has no derivative: inf/NaN
    z = np.array([[5.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    g = np.asarray(nx.grad(lambda x: nx.sum(L.svd(x, full_matrices=False).U ** 3))(t(z)))
    assert not np.isfinite(g).all()


def test_rank_deficient_pinv_and_lstsq():
    rng = rng_for(38)
    a = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))      # rank 2 of 4
    b = rng.standard_normal((5, 2))
    close(L.pinv(t(a)), np.linalg.pinv(a, rtol=None), rtol=1e-10, atol=1e-12)
    # with a cutoff above the singular values a perturbation creates, the rank stays 2 near a
    # and the Golub-Pereyra derivative matches finite differences of the truncated pinv
    nx.check_grads(lambda x: L.pinv(x, rtol=1e-3), [t(a)], order=2, eps=1e-6, atol=1e-6,
                   rtol=1e-6)
    nx.check_grads(lambda x, y: L.lstsq(x, y, rcond=1e-3).x, [t(a), t(b)], order=1, eps=1e-6,
                   atol=1e-6, rtol=1e-6)
    x, res, rank, s = L.lstsq(t(a), t(b), rcond=1e-3)
    assert int(rank) == 2 and res.shape == (0,)
    close(x, np.linalg.lstsq(a, b, rcond=1e-3)[0], rtol=1e-9, atol=1e-10)


def test_norm_gradient_at_zero_is_a_subgradient():
    z = t(np.zeros((2, 3)))
    for f in (L.vector_norm, lambda x: L.vector_norm(x, axis=1), L.matrix_norm, L.norm):
        g = np.asarray(nx.grad(lambda x: nx.sum(f(x)))(z))
        np.testing.assert_array_equal(g, 0.0)
    x = t(np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]]))
    close(nx.grad(lambda x: nx.sum(L.vector_norm(x, axis=1)))(x), [[0, 0, 0], [0.6, 0.8, 0]])


def test_singular_matrices():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(L.det(t(s))) == np.linalg.det(s) == 0.0
    sign, logabs = L.slogdet(t(s))
    assert float(sign) == 0.0 and float(logabs) == -np.inf
    for f in (L.inv, lambda x: L.solve(x, t([1.0, 2.0])), lambda x: L.matrix_power(x, -1)):
        with pytest.raises(LinAlgError, match="[Ss]ingular"):
            f(t(s))
    # the derivative of det is the cofactor matrix adj(s)^T, also where s is singular (JAX's)
    close(nx.grad(L.det)(t(s)), np.array([[4.0, -2.0], [-2.0, 1.0]]), atol=1e-12)
    # log|det|'s derivative there: adj(s)^T / det in IEEE arithmetic, +-inf (JAX 0.10.2 gives
    # [[inf, -inf], [-inf, inf]] and inf along the identity too)
    with np.errstate(divide="ignore"):
        g = np.asarray(nx.grad(lambda x: L.slogdet(x).logabsdet)(t(s)))
    np.testing.assert_array_equal(g, [[np.inf, -np.inf], [-np.inf, np.inf]])
    with pytest.raises(LinAlgError, match="singular"):
        SL.solve_triangular(t([[1.0, 2.0], [0.0, 0.0]]), t([1.0, 2.0]))
    nan = np.array([[np.nan, 1.0], [1.0, 2.0]])
    assert np.isnan(float(L.det(t(nan))))


# -- bad input ------------------------------------------------------------------------------

def test_errors_name_the_argument():
    sq, rc = t(np.eye(3)), t(np.ones((2, 3)))
    for f in (L.cholesky, L.inv, L.det, L.slogdet, L.eigh, L.eigvalsh, SL.expm,
              lambda x: L.solve(x, t(np.ones(2)))):
        with pytest.raises(LinAlgError, match="x1|x|A: the last two dimensions must be square"):
            f(rc)
    assert issubclass(LinAlgError, ValueError) and L.LinAlgError is LinAlgError
    with pytest.raises(LinAlgError, match="x: expected a matrix"):
        L.inv(t(np.ones(3)))
    with pytest.raises(LinAlgError, match="positive definite"):
        L.cholesky(t(-np.eye(2)))
    with pytest.raises(TypeError, match="x: float16"):
        L.inv(t(np.eye(2, dtype=np.float16)))
    with pytest.raises(ValueError, match="x2: 2 rows"):
        L.solve(sq, t(np.ones((2, 2))))
    with pytest.raises(ValueError, match="x2: a vector of length 2"):
        L.solve(sq, t(np.ones(2)))
    with pytest.raises(ValueError, match="x1, x2: batch dimensions"):
        L.solve(t(np.ones((2, 3, 3))), t(np.ones((4, 3, 1))))
    with pytest.raises(ValueError, match="mode"):
        L.qr(sq, mode="economic")
    with pytest.raises(ValueError, match="UPLO"):
        L.eigh(sq, UPLO="X")
    with pytest.raises(TypeError, match="n: the exponent"):
        L.matrix_power(sq, 1.5)
    with pytest.raises(LinAlgError, match="x: expected a stack of square"):
        L.matrix_power(rc, 2)
    with pytest.raises(ValueError, match="ord"):
        L.matrix_norm(sq, ord=3)
    with pytest.raises(ValueError, match="ord"):
        L.norm(t(np.ones(3)), "fro")
    with pytest.raises(ValueError, match="ord"):
        L.vector_norm(sq, ord="fro")
    with pytest.raises(ValueError, match="axis"):
        L.norm(sq, axis=(0, 0))
    with pytest.raises(ValueError, match="rtol"):
        L.pinv(t(np.ones((2, 3, 3))), rtol=np.ones(3))
    with pytest.raises(LinAlgError, match="a: lstsq needs a 2-D"):
        L.lstsq(t(np.ones((2, 3, 3))), t(np.ones(3)))
    with pytest.raises(ValueError, match="b: expected shape"):
        L.lstsq(rc, t(np.ones(3)))
    with pytest.raises(ValueError, match="trans"):
        SL.solve_triangular(sq, sq, trans=3)
    with pytest.raises(ValueError, match="b: 2 rows"):
        SL.solve_triangular(sq, t(np.ones((2, 2))))
    with pytest.raises(ValueError, match="b: array must not contain infs or NaNs"):
        SL.solve_triangular(sq, t([1.0, np.nan, 0.0]))
    x = SL.solve_triangular(sq, t([1.0, np.nan, 0.0]), check_finite=False)
    assert np.isnan(np.asarray(x)[1])
    with pytest.raises(TypeError, match="c_and_lower"):
        SL.cho_solve(sq, sq)
    with pytest.raises(ValueError, match="x1, x2: cross products need size 3"):
        L.cross(t(np.ones(2)), t(np.ones(2)))
    with pytest.raises(ValueError, match="x1, x2: outer needs 1-D"):
        L.outer(sq, t(np.ones(3)))
    with pytest.raises(ValueError, match="x: trace needs"):
        L.trace(t(np.ones(3)))
    with pytest.raises(ValueError, match="cov: expected shape"):
        mvn.logpdf(t(np.ones(3)), t(np.zeros(3)), t(np.eye(2)))
    with pytest.raises(ValueError, match="x: the last axis"):
        mvn.logpdf(t(np.ones(2)), t(np.zeros(3)), t(np.eye(3)))
    with pytest.raises(ValueError, match="semi-definite"):
        mvn.logpdf(t(np.ones(3)), t(np.zeros(3)), t(-np.eye(3)), allow_singular=True)
    with pytest.raises(LinAlgError):
        mvn.logpdf(t(np.ones(2)), t(np.zeros(2)), t(-np.eye(2)))


def test_unsupported_derivatives_raise():
    # (eigh, eigvalsh, svd and svdvals of complex matrices are differentiable: see
    # test_complex_eigh_svd_derivatives; det, slogdet, qr, cholesky, pinv and lstsq:
    # test_complex_linalg)
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        nx.grad(lambda x: nx.sum(L.svd(x).U))(t(np.ones((3, 2))))
    with pytest.raises(NotImplementedError, match="mode='reduced'"):
        nx.grad(lambda x: nx.sum(L.qr(x, mode="complete").Q))(t(np.ones((3, 2))))


def test_empty_matrices_and_batches_as_numpy():
    for shape in [(0, 2, 2), (2, 0, 0), (0, 0)]:
        x = np.zeros(shape)
        close(L.det(t(x)), np.linalg.det(x))
        w, v = L.eigh(t(x))
        assert w.shape == shape[:-1] and v.shape == shape
        assert L.slogdet(t(x)).logabsdet.shape == shape[:-2]
    x = np.zeros((3, 0, 2))
    u, s, vh = L.svd(t(x))
    want = np.linalg.svd(x)
    assert (u.shape, s.shape, vh.shape) == (want.U.shape, want.S.shape, want.Vh.shape)
    assert L.qr(t(x)).R.shape == np.linalg.qr(x).R.shape
    assert L.pinv(t(x)).shape == (3, 2, 0)


def test_results_are_named_tuples():
    a = spd(rng_for(39), (), 3)
    for res, fields in ((L.eigh(t(a)), ("eigenvalues", "eigenvectors")),
                        (L.qr(t(a)), ("Q", "R")), (L.slogdet(t(a)), ("sign", "logabsdet")),
                        (L.svd(t(a)), ("U", "S", "Vh")),
                        (L.lstsq(t(a), t(a)), ("x", "residuals", "rank", "s"))):
        assert type(res) is not tuple and res._fields == fields


def test_docs_example_runs_and_its_hessian_is_right():
    import pathlib
    import re
    guide = pathlib.Path(__file__).resolve().parent.parent / "docs" / "guide"
    text = (guide / "linalg.md").read_text()
    block = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "nx.linalg" in b][0]
    ns = {}
    exec(block, ns)
    nll, h = ns["nll"], np.asarray(ns["H"])
    eps, th = 1e-4, 0.3
    f = lambda v: float(nll(t(np.array([v]))))  # noqa: E731
    close(h, [[(f(th + eps) - 2 * f(th) + f(th - eps)) / eps ** 2]], rtol=1e-5, atol=1e-6)
    assert float(ns["logdet"]) == pytest.approx(3 * math.log(2.0)) and float(ns["sign"]) == 1.0


@pytest.mark.parametrize("dtype", DTYPES + [np.complex128])
def test_cholesky_of_large_matrices_matches_numpy(dtype):
    # from n = 32 on the factor comes from LAPACK's potrf directly, not through NumPy
    rng = rng_for(40)
    s = (hermitian_pd(rng, (2,), 40) if np.dtype(dtype).kind == "c"
         else spd(rng, (2,), 40)).astype(dtype)
    close(L.cholesky(t(s)), np.linalg.cholesky(s), dtype, rtol=1e-4 if dtype == np.float32
          else 1e-12, atol=1e-4 if dtype == np.float32 else 1e-12)
    bad = s.copy()
    bad[1, 5, 5] = -100.0
    with pytest.raises(LinAlgError, match="positive definite"):
        L.cholesky(t(bad))
    bad[1, 5, 5] = np.nan              # NaN propagates, as in NumPy
    np.testing.assert_array_equal(np.isnan(np.asarray(L.cholesky(t(bad)))),
                                  np.isnan(np.linalg.cholesky(bad)))


def _re_pair(xs, ys):
    """Re sum(x * y) over pairs of arrays: the pairing of cotangents and tangents."""
    return sum(float(np.real(np.sum(np.asarray(x) * np.asarray(y)))) for x, y in zip(xs, ys))


def _crandn(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


_GAUGE_FREE = {
    # functions of complex matrices that do not depend on the phase of the eigen/singular
    # vectors (|U|, |V|), so that central differences check them
    "svd": lambda a: [nx.abs(p) if p.dtype.kind == "c" else p
                      for p in L.svd(a, full_matrices=False)],
    "svdvals": lambda a: [L.svdvals(a)],
    "nuclear": lambda a: [L.norm(a, "nuc", axis=(-2, -1))],
    "eigh_L": lambda a: [L.eigh(a, UPLO="L").eigenvalues, nx.abs(L.eigh(a, UPLO="L")[1])],
    "eigh_U": lambda a: [L.eigh(a, UPLO="U").eigenvalues, nx.abs(L.eigh(a, UPLO="U")[1])],
    "eigvalsh": lambda a: [L.eigvalsh(a, UPLO="U")],
}


@pytest.mark.parametrize("shape", [(3, 5), (4, 4), (5, 3), (2, 4, 3), (2, 3, 3)])
@pytest.mark.parametrize("name", sorted(_GAUGE_FREE))
def test_complex_eigh_svd_derivatives(name, shape):
    # complex (non-Hermitian: eigh reads one triangle) matrices: forward mode against central
    # differences along a complex direction, reverse mode as its transpose (the pairing
    # Re sum(ct * t)), and both through jit and vmap
    if name.startswith("eig") and shape[-1] != shape[-2]:
        return
    f = _GAUGE_FREE[name]
    rng = np.random.default_rng(sum(shape) + len(name))
    a, da = _crandn(rng, shape), _crandn(rng, shape)
    at, dat = t(a), t(da)
    outs, tans = nx.jvp(f, (at,), (dat,))
    eps = 1e-6
    plus, minus = f(t(a + eps * da)), f(t(a - eps * da))
    for tan, p, m in zip(tans, plus, minus):
        fd = (np.asarray(p) - np.asarray(m)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(tan), fd, rtol=1e-5, atol=1e-6)
    cts = [t(rng.standard_normal(o.shape)) for o in outs]
    _, vjp = nx.vjp(f, at)
    (ct_a,) = vjp(cts)
    assert ct_a.dtype == np.complex128
    assert math.isclose(_re_pair([ct_a], [da]), _re_pair(cts, tans), rel_tol=1e-9,
                        abs_tol=1e-9)
    # the same derivatives under jit, and per matrix under vmap
    (ct_jit,) = nx.jit(lambda a, c: nx.vjp(f, a)[1](c))(at, cts)
    np.testing.assert_allclose(np.asarray(ct_jit), np.asarray(ct_a), rtol=1e-9, atol=1e-12)
    if len(shape) == 3:
        ct_map = nx.vmap(lambda a, *c: nx.vjp(f, a)[1](list(c))[0])(at, *cts)
        np.testing.assert_allclose(np.asarray(ct_map), np.asarray(ct_a), rtol=1e-9,
                                   atol=1e-12)


def test_complex_svd_eigh_derivatives_of_phases():
    # outputs that depend on the phases (U itself, V itself): the JVP and the VJP are each
    # other's transposes, and the phase is JAX's gauge (diag(V^H dV) real for svd, zero for
    # eigh)
    rng = np.random.default_rng(7)
    for shape in [(3, 5), (4, 4), (5, 3)]:
        a, da = _crandn(rng, shape), _crandn(rng, shape)
        f = lambda a: tuple(L.svd(a, full_matrices=False))
        outs, tans = nx.jvp(f, (t(a),), (t(da),))
        u, s, vh = (np.asarray(o) for o in outs)
        du, ds, dvh = (np.asarray(o) for o in tans)
        # dV = dVh^H: V^H dV has a real diagonal (JAX's gauge)
        vhdv = vh @ dvh.conj().T
        np.testing.assert_allclose(np.diag(vhdv).imag, 0, atol=1e-10)
        # U^H dU is anti-Hermitian (U stays orthonormal)
        uhdu = u.conj().T @ du
        np.testing.assert_allclose(uhdu + uhdu.conj().T, 0, atol=1e-10)
        cts = [t(_crandn(rng, u.shape)), t(rng.standard_normal(s.shape)),
               t(_crandn(rng, vh.shape))]
        (ct,) = nx.vjp(f, t(a))[1](tuple(cts))
        assert math.isclose(_re_pair([ct], [da]), _re_pair(cts, tans), rel_tol=1e-9)
        a = _crandn(rng, (4, 4))
        f = lambda a: tuple(L.eigh(a))
        outs, tans = nx.jvp(f, (t(a),), (t(_crandn(rng, (4, 4))),))
        v, dv = np.asarray(outs[1]), np.asarray(tans[1])
        np.testing.assert_allclose(np.diag(v.conj().T @ dv), 0, atol=1e-10)


# -- eig (general square matrices) --------------------------------------------------------------

def test_eig_matches_numpy():
    rng = np.random.default_rng(11)
    for a in (rng.standard_normal((4, 4)), _crandn(rng, (2, 3, 3)),
              rng.standard_normal((3, 2, 2)).astype(np.float32), np.array([[2.0]])):
        w, v = L.eig(t(a))
        wn, vn = np.linalg.eig(a)
        want = np.complex64 if a.dtype == np.float32 else np.complex128
        assert w.dtype == want and v.dtype == want      # complex always, as JAX's
        tol = 1e-5 if a.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(np.asarray(w), wn, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(v), vn, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(L.eigvals(t(a))), wn, rtol=tol, atol=tol)
    w, v = L.eig(t(np.arange(4).reshape(2, 2)))        # ints as float64
    assert w.dtype == np.complex128
    w, v = L.eig(t(np.zeros((0, 3, 3))))
    assert w.shape == (0, 3) and v.shape == (0, 3, 3)
    with pytest.raises(LinAlgError, match="square"):
        L.eig(t(np.ones((2, 3))))
    with pytest.raises(LinAlgError, match="square"):
        L.eig(t(np.ones(3)))


@pytest.mark.parametrize("shape, cplx", [((4, 4), False), ((5, 5), True), ((2, 3, 3), True)])
def test_eig_derivatives(shape, cplx):
    # eigenvalues and |eigenvectors| (unit columns; free of the phase) against central
    # differences; the VJP as the JVP's transpose (for U itself too); jit and vmap agree
    rng = np.random.default_rng(sum(shape))
    a = _crandn(rng, shape) if cplx else rng.standard_normal(shape)
    da = _crandn(rng, shape) if cplx else rng.standard_normal(shape)

    def gauge_free(a):
        w, v = L.eig(a)
        return [w, nx.abs(v)]
    _, tans = nx.jvp(gauge_free, (t(a),), (t(da),))
    eps = 1e-6
    for tan, p, m in zip(tans, gauge_free(t(a + eps * da)), gauge_free(t(a - eps * da))):
        np.testing.assert_allclose(np.asarray(tan), (np.asarray(p) - np.asarray(m)) / (2 * eps),
                                   rtol=1e-5, atol=1e-6)
    f = lambda a: tuple(L.eig(a))
    outs, tans = nx.jvp(f, (t(a),), (t(da),))
    # the eigenvectors' tangent keeps their unit length: Re(v_j^H dv_j) = 0
    v, dv = np.asarray(outs[1]), np.asarray(tans[1])
    np.testing.assert_allclose(np.real(np.sum(v.conj() * dv, -2)), 0, atol=1e-10)
    cts = [t(_crandn(rng, o.shape)) for o in outs]
    (ct,) = nx.vjp(f, t(a))[1](tuple(cts))
    assert ct.dtype == a.dtype                         # real cotangent for a real matrix
    assert math.isclose(_re_pair([ct], [da]), _re_pair(cts, tans), rel_tol=1e-9, abs_tol=1e-10)
    (ct_jit,) = nx.jit(lambda a, c: nx.vjp(f, a)[1](c))(t(a), tuple(cts))
    np.testing.assert_allclose(np.asarray(ct_jit), np.asarray(ct), rtol=1e-9, atol=1e-12)
    if len(shape) == 3:
        ct_map = nx.vmap(lambda a, c0, c1: nx.vjp(f, a)[1]((c0, c1))[0])(t(a), *cts)
        np.testing.assert_allclose(np.asarray(ct_map), np.asarray(ct), rtol=1e-9, atol=1e-12)
    # second order: the gradient of a gauge-free scalar against differences of the gradient
    h = lambda a: nx.sum(nx.abs(L.eigvals(a)) ** 2) + nx.sum(nx.abs(L.eig(a)[1]) ** 3)
    hg = nx.grad(h)
    _, hvp = nx.jvp(hg, (t(a),), (t(da),))
    fd = (np.asarray(hg(t(a + eps * da))) - np.asarray(hg(t(a - eps * da)))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(hvp), fd, rtol=1e-5, atol=1e-5)


# -- solve_banded ----------------------------------------------------------------------------

def test_solve_banded_matches_scipy_and_differentiates():
    rng = np.random.default_rng(5)
    for (lo, up), n in [((1, 1), 5), ((0, 2), 4), ((2, 0), 6), ((0, 0), 3), ((2, 1), 1)]:
        ab = rng.standard_normal((lo + up + 1, n))
        ab[up] += 4.0
        for b in (rng.standard_normal(n), rng.standard_normal((n, 2))):
            got = nx.scipy.linalg.solve_banded((lo, up), ab, b)
            assert got.shape == b.shape and got.dtype == np.float64
            np.testing.assert_allclose(np.asarray(got), scipy.linalg.solve_banded((lo, up), ab, b),
                                       rtol=1e-12, atol=1e-13)
        nx.check_grads(lambda ab, b: nx.scipy.linalg.solve_banded((lo, up), ab, b),
                       (ab, rng.standard_normal(n)), order=2)
    # the unused corners of the band storage get no cotangent (SciPy never reads them)
    ab = rng.standard_normal((3, 4))
    ab[1] += 4.0
    g = nx.grad(lambda ab: nx.sum(nx.scipy.linalg.solve_banded((1, 1), ab, np.ones(4))))(ab)
    assert float(np.asarray(g)[0, 0]) == 0.0 and float(np.asarray(g)[2, -1]) == 0.0
    got = nx.jit(lambda ab, b: nx.scipy.linalg.solve_banded((1, 1), ab, b))(ab, np.ones(4))
    np.testing.assert_allclose(np.asarray(got), scipy.linalg.solve_banded((1, 1), ab, np.ones(4)),
                               rtol=1e-12)
    bs = rng.standard_normal((3, 4))
    got = nx.vmap(lambda b: nx.scipy.linalg.solve_banded((1, 1), ab, b))(bs)
    np.testing.assert_allclose(np.asarray(got), scipy.linalg.solve_banded((1, 1), ab, bs.T).T,
                               rtol=1e-12)
    with pytest.raises(ValueError, match="ab: expected shape"):
        nx.scipy.linalg.solve_banded((1, 1), np.ones((2, 4)), np.ones(4))
    with pytest.raises(ValueError, match="b: expected"):
        nx.scipy.linalg.solve_banded((1, 1), ab, np.ones(3))
    with pytest.raises(ValueError, match="l_and_u"):
        nx.scipy.linalg.solve_banded((-1, 1), ab, np.ones(4))
    with pytest.raises(TypeError, match="l_and_u"):
        nx.scipy.linalg.solve_banded((1.5, 1), ab, np.ones(4))


def test_multivariate_normal_allow_singular_matches_scipy():
    # a rank-2 covariance in 4 dimensions: SciPy's density on its support, -inf off it; the
    # same as the positive definite density for a definite cov; derivatives in x and mean
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 2))
    cov = a @ a.T
    on = rng.standard_normal((5, 2)) @ a.T               # points in the span of a
    mean = a @ rng.standard_normal(2)
    got = mvn.logpdf(t(on), t(mean), t(cov), allow_singular=True)
    want = scipy.stats.multivariate_normal.logpdf(on, mean, cov, allow_singular=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(mvn.pdf(t(on), t(mean), t(cov), allow_singular=True)),
                               np.exp(want), rtol=1e-10)
    off = on[0] + np.linalg.svd(a)[0][:, 3]               # a null-space direction added
    assert float(mvn.logpdf(t(off), t(mean), t(cov), allow_singular=True)) == -np.inf
    spd = cov + np.eye(4)
    np.testing.assert_allclose(float(mvn.logpdf(t(on[0]), t(mean), t(spd), allow_singular=True)),
                               scipy.stats.multivariate_normal.logpdf(on[0], mean, spd),
                               rtol=1e-12)
    # derivatives along the support (x and mean moved within the span of a)
    basis = a / np.linalg.norm(a, axis=0)

    def f(cx, cm):
        return mvn.logpdf(t(on[1]) + nx.matmul(t(basis), cx), t(mean) + nx.matmul(t(basis), cm),
                          t(cov), allow_singular=True)
    nx.check_grads(f, (np.array([0.3, -0.2]), np.array([0.1, 0.4])), order=2)
    got = nx.jit(lambda x: mvn.logpdf(x, t(mean), t(cov), allow_singular=True))(t(on))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10)


# float32 eigh and svd as jax 0.10.2 computes them on CPU (jaxlib calls SciPy's ssyevd, jobz
# "V", and sgesdd): the bits of jnp.linalg.eigh(A32) and jnp.linalg.svd(B32) (full, and
# reduced of B32^T), pinned; NumPy's LAPACK build rounds otherwise (and may flip a sign)
A32 = np.array([[4, 1, -2, 0.5], [1, 3, 0.25, -1], [-2, 0.25, 5, 1.5], [0.5, -1, 1.5, 2]],
               np.float32)
B32 = np.array([[1, 2, -1], [0.5, -3, 2], [4, 1, 0.25], [-2, 0.75, 1]], np.float32)
JAX_EIGH32 = ([1044007744, 1079247842, 1080794874, 1088052279],
              [3201667904, 3203988946, 3204722221, 3205593179, 1054573724, 1057852193,
               3207764878, 3189615444, 3201421588, 3178386872, 3203463947, 1061647584,
               1060129610, 3207367758, 3189917064, 1046247160])
JAX_SVD32 = ([3201975446, 1051151510, 3179281515, 1062688713, 1050839295, 3209668924,
              3190082289, 1055757494, 3209196908, 3200595284, 3201164175, 3196968826,
              1051025776, 1050076900, 3211145061, 3163562032],
             [1083861134, 1082257369, 1069132273],
             [3210126580, 3203983152, 1048327608, 3205186681, 1060652848, 3202137819,
              1023692294, 3204296730, 3210622542])
JAX_SVD32_T = ([1062642933, 1057703034, 3171175950, 1056499506, 3208136498, 1056813082,
                3195811256, 1054654174, 1063138896],
               [1083861135, 1082257370, 1069132273],
               [1054491798, 3198322944, 1061713262, 3198509426, 3198635158, 1062185275,
                1053111640, 3197560548, 1031797870, 1042598639, 1053680525, 1063661412])


def _bits(x):
    return np.asarray(x).view(np.uint32).ravel().tolist()


@pytest.mark.parametrize("how", ["eager", "jit", "vmap"])
def test_float32_eigh_svd_are_jaxs_bits(how):
    def run(f, x):
        if how == "jit":
            return nx.jit(f)(t(x))
        if how == "vmap":
            return [r[1] for r in nx.vmap(f)(t(np.stack([x, x])))]
        return f(t(x))
    assert [_bits(p) for p in run(lambda m: tuple(L.eigh(m)), A32)] == list(JAX_EIGH32)
    assert [_bits(p) for p in run(lambda m: tuple(L.svd(m)), B32)] == list(JAX_SVD32)
    assert [_bits(p) for p in run(lambda m: tuple(L.svd(m, full_matrices=False)),
                                  np.ascontiguousarray(B32.T))] == list(JAX_SVD32_T)
