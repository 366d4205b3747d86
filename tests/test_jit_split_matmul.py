"""Large matmuls of compiled programs split into bands between the kernels' threads when
NumPy's BLAS is pinned to one thread (nx_rune/compiler/split_matmul.py)."""
import threading

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import gemm, pool
from nx_rune.compiler import split_matmul as S


@pytest.fixture
def pinned(monkeypatch):
    """As if NumPy's BLAS were pinned to one thread, with ``threads`` kernel threads."""
    monkeypatch.setattr(S, "BLAS_SINGLE_THREADED", True)
    old = pool.get_num_threads()

    def use(threads):
        pool.set_num_threads(threads)
    yield use
    pool.set_num_threads(old)


def _operands(rng, m, k, n, dtype, a_t=False, b_t=False):
    a = rng.standard_normal((k, m) if a_t else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if b_t else (k, n)).astype(dtype)
    return (a.T if a_t else a), (b.T if b_t else b)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("m,k,n,a_t,b_t", [
    (128, 784, 256, False, False),     # an MLP's forward product: bands of rows
    (784, 128, 256, True, False),      # its weight gradient, x.T @ dh: a transposed view
    (40, 512, 1031, False, True),      # wide: bands of columns, b transposed
    (1031, 97, 61, False, False),      # uneven bands
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_product_matches_numpy(pinned, threads, m, k, n, a_t, b_t, dtype):
    pinned(threads)
    a, b = _operands(np.random.default_rng(0), m, k, n, dtype, a_t, b_t)
    assert m * n * k >= S.MIN_MACS
    got = S.matmul(a, b)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=tol,
                               atol=tol * np.sqrt(k))
    out = np.full((m, n), np.nan, dtype)
    assert S.matmul(a, b, out=out) is out
    np.testing.assert_array_equal(out, got)


def test_small_or_unpinned_products_are_numpys_call(pinned, monkeypatch):
    rng = np.random.default_rng(1)
    pinned(2)
    a, b = _operands(rng, 8, 8, 8, np.float64)
    np.testing.assert_array_equal(S.matmul(a, b), np.matmul(a, b))
    monkeypatch.setattr(S, "BLAS_SINGLE_THREADED", False)
    # (the packed float64 kernel, where the CPU has AVX-512, takes this one first: leave it out)
    monkeypatch.setattr(gemm, "matmul_f64", lambda a, b, out=None: None)
    a, b = _operands(rng, 256, 256, 256, np.float64)
    np.testing.assert_array_equal(S.matmul(a, b), np.matmul(a, b))


def test_errors_of_a_band_reach_the_caller(pinned):
    pinned(2)
    a, b = _operands(np.random.default_rng(2), 256, 256, 256, np.float64)
    with pytest.raises(TypeError):
        S.matmul(a, b, out=np.empty((256, 256), np.int32))     # no float64 -> int32 cast
    # still works after (atol: the packed float64 kernel's sums are ordered differently)
    np.testing.assert_allclose(S.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_concurrent_products_from_several_threads(pinned):
    """One split product at a time; the others run unsplit in their own thread."""
    pinned(2)
    rng = np.random.default_rng(3)
    pairs = [_operands(rng, 160 + 8 * j, 300, 200, np.float64) for j in range(4)]
    want = [a @ b for a, b in pairs]
    bad = []

    def work(j):
        for _ in range(10):
            if not np.allclose(S.matmul(*pairs[j]), want[j], rtol=1e-12, atol=1e-12):
                bad.append(j)

    ts = [threading.Thread(target=work, args=(j,)) for j in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert bad == []


@pytest.mark.parametrize("env,expect", [
    ({}, False), ({"OPENBLAS_NUM_THREADS": "1"}, True), ({"OPENBLAS_NUM_THREADS": "4"}, False),
    ({"OMP_NUM_THREADS": "1"}, True), ({"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "1"},
                                      False),
    ({"MKL_NUM_THREADS": " 1 "}, True), ({"OPENBLAS_NUM_THREADS": ""}, False),
])
def test_pinned_blas_is_read_from_the_environment(env, expect):
    assert S._blas_single_threaded(env) is expect


def test_jitted_mlp_step_splits_its_large_products_and_equals_eager(pinned):
    pinned(2)
    rng = np.random.default_rng(4)
    w1 = nx.asarray((rng.standard_normal((784, 256)) / 28).astype(np.float32))
    w2 = nx.asarray((rng.standard_normal((256, 10)) / 16).astype(np.float32))
    x = nx.asarray(rng.standard_normal((128, 784)).astype(np.float32))

    def loss(w1, w2, x):
        return nx.sum(nx.tanh(x @ w1) @ w2) / 128

    step = nx.jit(nx.grad(loss, argnums=(0, 1)))
    calls = []
    real = S.matmul

    def spy(a, b, out=None):
        calls.append((a.shape, b.shape))
        return real(a, b, out)

    S_matmul = S.matmul
    try:
        S.matmul = spy
        got = step(w1, w2, x)
    finally:
        S.matmul = S_matmul
    want = nx.grad(loss, argnums=(0, 1))(w1, w2, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6)
    # the forward product and the weight gradient (784x128 @ 128x256); not the small ones
    want_calls = [((128, 784), (784, 256)), ((784, 128), (128, 256))]
    if gemm.avx512_available():     # float32 from 2**16 multiply-adds and 10 columns: also
        want_calls.append(((128, 10), (10, 256)))            # dh = g @ w2.T and h.T @ g
        want_calls.append(((256, 128), (128, 10)))
    assert sorted(calls) == sorted(want_calls)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_workers(pinned):
    """The parent's pool workers do not exist in a forked child: it starts new ones (and does
    not wait for bands nobody would take)."""
    import os
    pinned(2)
    a, b = _operands(np.random.default_rng(5), 256, 256, 256, np.float64)
    S.matmul(a, b)                      # the parent's workers exist now
    pid = os.fork()
    if pid == 0:                        # the child: exit code 0 when the product is right
        ok = np.allclose(S.matmul(a, b), a @ b, rtol=1e-12)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_bands_refuse_what_gemm_cannot_read(pinned):
    """Operands without a unit stride, an output that overlaps an operand or is not
    C-contiguous, mixed dtypes: the band kernel declines (writes nothing) and NumPy computes."""
    from nx_rune._kernels import gemm
    rng = np.random.default_rng(6)
    a = rng.standard_normal((256, 512))
    b = rng.standard_normal((512, 256))
    out = np.full((256, 256), 7.0)
    assert not gemm.matmul_bands(a[:, ::2], b[::2], out, 2)
    assert not gemm.matmul_bands(a, b, np.asfortranarray(out), 2)
    assert not gemm.matmul_bands(a[:, :256], b[:256], a[:, 256:], 2)    # out overlaps a
    assert not gemm.matmul_bands(a.astype(np.float32), b, out, 2)
    assert (out == 7.0).all()
    pinned(2)
    np.testing.assert_allclose(S.matmul(a[:, ::2], b[::2]), a[:, ::2] @ b[::2], rtol=1e-12,
                               atol=1e-12)
    assert gemm.matmul_bands(a, b, out, 3)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)
