"""The packed AVX-512 float32 and float64 products (nx_rune/_kernels/gemm_avx512.h and
gemm_avx512_f64.h via gemm.matmul_f32_packed / matmul_f64_packed, routed by
nx_rune/compiler/split_matmul.py and the eager matmul).

On a CPU without AVX-512 the kernel must decline every call without writing (asserted here
instead of the values): the compiled programs then use NumPy's call."""
import threading

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import gemm, pool
from nx_rune.compiler import split_matmul as S

HAS = gemm.avx512_available()


PACKED = {np.float32: gemm.matmul_f32_packed, np.float64: gemm.matmul_f64_packed}


def _operand(rng, rows, cols, layout, dtype=np.float32):
    """A (rows, cols) operand of ``dtype`` stored as ``layout``: C order, a transposed view,
    a transposed view of a wider array's first columns (unit row stride, a column stride
    longer than the rows), every other column of a wider array, or reversed rows (a negative
    stride)."""
    if layout == "c":
        return rng.standard_normal((rows, cols)).astype(dtype)
    if layout == "t":
        return rng.standard_normal((cols, rows)).astype(dtype).T
    if layout == "tcut":
        return rng.standard_normal((cols, rows + 5)).astype(dtype)[:, :rows].T
    if layout == "step":
        return rng.standard_normal((rows, 2 * cols)).astype(dtype)[:, ::2]
    return rng.standard_normal((rows, cols)).astype(dtype)[::-1]


def _check(a, b, out, threads):
    """out holds a @ b to the operands' rounding: the error of a dot product of length k is at
    most ~k * eps * sum |a_i b_i| (the reference in extended precision for float64)."""
    wide = np.longdouble if a.dtype == np.float64 else np.float64
    want = a.astype(wide) @ b.astype(wide)
    scale = np.abs(a).astype(wide) @ np.abs(b).astype(wide)
    k = a.shape[1]
    bound = 2 * k * np.finfo(a.dtype).eps * scale + 1e-30
    assert (np.abs(out.astype(wide) - want) <= bound).all(), (a.shape, b.shape, threads)


@pytest.mark.parametrize("m,k,n", [
    (1, 1, 1), (7, 3, 5), (8, 32, 32), (9, 300, 33), (16, 256, 64), (17, 257, 31),
    (128, 784, 256), (784, 128, 256), (13, 517, 47), (100, 1, 100), (3, 1000, 2),
    (128, 256, 10), (37, 300, 8), (40, 129, 20), (33, 64, 40), (70, 140, 16),
])
@pytest.mark.parametrize("a_layout,b_layout", [("c", "c"), ("t", "c"), ("c", "t"),
                                               ("step", "rev"), ("rev", "step"),
                                               ("tcut", "t"), ("c", "tcut")])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_packed_product_matches_float64(m, k, n, a_layout, b_layout, threads, dtype):
    """Every tile kind (full, edge, the narrow last panel), A read in place (contiguous rows)
    and packed (other layouts; a transposed A a K block at a time, a transposed B in blocks
    of k), K blocks that accumulate."""
    rng = np.random.default_rng(m * 1000 + k + n)
    a = _operand(rng, m, k, a_layout, dtype)
    b = _operand(rng, k, n, b_layout, dtype)
    out = np.full((m, n), np.nan, dtype)
    done = PACKED[dtype](a, b, out, threads)
    assert done is HAS
    if HAS:
        _check(a, b, out, threads)
    else:
        assert np.isnan(out).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threads_do_not_change_the_values(dtype):
    """Each element's sum runs in the same order whatever the threads: bit for bit equal."""
    rng = np.random.default_rng(1)
    a, b = _operand(rng, 300, 700, "c", dtype), _operand(rng, 700, 90, "t", dtype)
    outs = []
    for threads in (1, 2, 3, 5):
        out = np.empty((300, 90), dtype)
        assert PACKED[dtype](a, b, out, threads) is HAS
        outs.append(out)
    if HAS:
        for out in outs[1:]:
            np.testing.assert_array_equal(out, outs[0])



@pytest.mark.parametrize("cut", [1, 2])                 # by C's rows, by B's panels
@pytest.mark.parametrize("m, k, n, a_layout, b_layout", [
    (128, 784, 256, "c", "c"), (8, 784, 256, "c", "c"), (784, 128, 256, "t", "c"),
    (37, 300, 100, "c", "t"), (70, 140, 16, "step", "rev"), (300, 700, 90, "tcut", "t")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_either_cut_gives_the_one_thread_bits(dtype, m, k, n, a_layout, b_layout, cut):
    """A threaded product cut by rows or by columns (each thread packing its own panels of B)
    computes every tile as one thread does: the same bits, both within the float64 bound."""
    rng = np.random.default_rng(m + k + n)
    a, b = _operand(rng, m, k, a_layout, dtype), _operand(rng, k, n, b_layout, dtype)
    one = np.empty((m, n), dtype)
    assert PACKED[dtype](a, b, one, 1) is HAS
    previous = gemm._set_cut(cut)
    try:
        for threads in (2, 3):
            out = np.full((m, n), np.nan, dtype)
            assert PACKED[dtype](a, b, out, threads) is HAS
            if HAS:
                np.testing.assert_array_equal(out, one)
                _check(a, b, out, threads)
    finally:
        gemm._set_cut(previous)
    with pytest.raises(ValueError, match="mode"):
        gemm._set_cut(3)

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [70, 10])
def test_nan_and_inf_reach_exactly_the_elements_they_touch(dtype, n):
    rng = np.random.default_rng(2)
    a, b = _operand(rng, 40, 300, "c", dtype), _operand(rng, 300, n, "c", dtype)
    a[3, 7] = np.nan
    a[20, 0] = np.inf
    b[5, n - 4] = -np.inf
    out = np.zeros((40, n), dtype)
    if not PACKED[dtype](a, b, out, 2):
        assert not HAS
        return
    with np.errstate(invalid="ignore"):                 # inf * 0 and nan in the reference
        want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(out), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(out), np.isneginf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(out[fin], want[fin], rtol=1e-4, atol=1e-3)


def test_what_the_kernel_declines_is_left_unwritten():
    """Another dtype, mismatched shapes, an empty product, an output that is not C-contiguous,
    read-only or overlapping an operand: False and ``out`` untouched."""
    rng = np.random.default_rng(3)
    a, b = _operand(rng, 64, 96, "c"), _operand(rng, 96, 48, "c")
    out = np.full((64, 48), 7.0, np.float32)
    assert not gemm.matmul_f32_packed(a.astype(np.float64), b, out, 2)
    assert not gemm.matmul_f32_packed(a, b.astype(np.float16), out, 2)
    assert not gemm.matmul_f32_packed(a, b[:95], out, 2)
    assert not gemm.matmul_f32_packed(a[:, :0], b[:0], out, 2)
    assert not gemm.matmul_f32_packed(a, b, out.astype(np.float64), 2)
    assert not gemm.matmul_f32_packed(a, b, np.asfortranarray(out), 2)
    assert not gemm.matmul_f32_packed(a, b, np.full((64, 48), 7.0, ">f4"), 2)
    a64, b64, out64 = a.astype(np.float64), b.astype(np.float64), out.astype(np.float64)
    assert not gemm.matmul_f64_packed(a, b64, out64, 2)
    assert not gemm.matmul_f64_packed(a64, b64[:95], out64, 2)
    assert not gemm.matmul_f64_packed(a64, b64, out, 2)
    assert not gemm.matmul_f64_packed(a64, b64, np.asfortranarray(out64), 2)
    assert not gemm.matmul_f64_packed(a64.astype(">f8"), b64, out64, 2)
    assert (out64 == 7.0).all()
    frozen = out.copy()
    frozen.flags.writeable = False
    assert not gemm.matmul_f32_packed(a, b, frozen, 2)
    both = np.zeros((64, 144), np.float32)
    assert not gemm.matmul_f32_packed(both[:, :96], b, both[:, 96:], 2)
    assert (out == 7.0).all() and (frozen == 7.0).all() and (both == 0).all()
    # the router then gives NumPy's values
    np.testing.assert_allclose(S.matmul(both[:, :96], b), both[:, :96] @ b)


def test_router_uses_the_packed_kernel_for_float32_and_numpy_otherwise(monkeypatch):
    rng = np.random.default_rng(4)
    a, b = _operand(rng, 128, 300, "c"), _operand(rng, 300, 64, "c")
    calls = []
    real = gemm.matmul_f32_packed

    def spy(*args):
        calls.append(args[0].shape)
        return real(*args)
    monkeypatch.setattr(gemm, "matmul_f32_packed", spy)
    monkeypatch.setattr(S, "BLAS_SINGLE_THREADED", False)
    got = S.matmul(a, b)
    _check(a, b, got, 0)
    assert calls == ([(128, 300)] if HAS else [])
    assert calls == ([(128, 300)] if HAS else [])
    d64 = []
    real64 = gemm.matmul_f64_packed

    def spy64(*args):
        d64.append(args[0].shape)
        return real64(*args)
    monkeypatch.setattr(gemm, "matmul_f64_packed", spy64)
    d = S.matmul(a.astype(np.float64), b.astype(np.float64))
    _check(a.astype(np.float64), b.astype(np.float64), d, 0)
    assert len(calls) == (1 if HAS else 0)
    assert d64 == ([(128, 300)] if HAS else [])
    assert S.worth_routing(128, 784, 256, np.float32)
    assert S.worth_routing(128, 256, 10, np.float32) is HAS
    assert S.worth_routing(128, 256, 10, np.float64) is HAS
    assert S.worth_routing(128, 784, 8, np.float32) is (not HAS and 128 * 784 * 8 >= S.MIN_MACS)
    assert not S.worth_routing(8, 8, 8, np.float32)
    assert not S.worth_routing(8, 8, 8, np.float64)


def test_concurrent_packed_products():
    """Several Python threads calling at once: one owns the pool, the others run alone."""
    rng = np.random.default_rng(5)
    pairs = [(_operand(rng, 200, 300, "c"), _operand(rng, 300, 100, "c")) for _ in range(4)]
    results = [None] * 4

    def work(i):
        a, b = pairs[i]
        outs = []
        for _ in range(5):
            out = np.empty((200, 100), np.float32)
            outs.append((gemm.matmul_f32_packed(a, b, out, 2), out))
        results[i] = outs
    old = pool.get_num_threads()
    pool.set_num_threads(2)
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        pool.set_num_threads(old)
    for (a, b), outs in zip(pairs, results):
        for done, out in outs:
            assert done is HAS
            if HAS:
                _check(a, b, out, 2)


def test_jitted_float32_products_equal_eager():
    """A compiled program whose products take the packed kernel (where the CPU has it) gives
    the eager values to float32 rounding, forward and gradient."""
    rng = np.random.default_rng(6)
    w = nx.asarray((rng.standard_normal((300, 64)) / 17).astype(np.float32))
    x = nx.asarray(rng.standard_normal((96, 300)).astype(np.float32))

    def loss(w, x):
        return nx.sum(nx.tanh(x @ w) ** 2)

    for f in (loss, nx.grad(loss)):
        np.testing.assert_allclose(np.asarray(nx.jit(f)(w, x)), np.asarray(f(w, x)),
                                   rtol=2e-4, atol=2e-5)


def test_eager_float32_matmul_takes_the_packed_kernel_and_equals_numpy(monkeypatch):
    """Eager 2-D float32 products (and their gradients' products) go to the packed kernel where
    the CPU has it; stacks, float64 and small products stay NumPy's call."""
    rng = np.random.default_rng(7)
    a, b = _operand(rng, 96, 300, "c"), _operand(rng, 300, 64, "c")
    calls = []
    real = gemm.matmul_f32_packed

    def spy(*args):
        calls.append((args[0].shape, args[1].shape))
        return real(*args)
    monkeypatch.setattr(gemm, "matmul_f32_packed", spy)
    got = np.asarray(nx.asarray(a) @ nx.asarray(b))
    _check(a, b, got, 0)
    assert calls == ([((96, 300), (300, 64))] if HAS else [])
    calls.clear()
    ga, gb = nx.grad(lambda p, q: nx.sum(p @ q), argnums=(0, 1))(nx.asarray(a), nx.asarray(b))
    ones = np.ones((96, 64), np.float32)
    _check(ones, b.T, np.asarray(ga), 0)
    _check(a.T, ones, np.asarray(gb), 0)
    assert len(calls) == (3 if HAS else 0)      # the forward and both cotangent products
    calls.clear()
    np.testing.assert_array_equal(np.asarray(nx.asarray(a[None]) @ nx.asarray(b[None])),
                                  np.matmul(a[None], b[None]))
    np.testing.assert_array_equal(np.asarray(nx.asarray(a[:8, :8]) @ nx.asarray(b[:8, :8])),
                                  a[:8, :8] @ b[:8, :8])
    assert calls == []


def test_eager_float64_matmul_takes_the_packed_kernel(monkeypatch):
    """Eager 2-D float64 products go to the packed float64 kernel where the CPU has it (values
    to float64 rounding); stacks and small products stay NumPy's call."""
    rng = np.random.default_rng(8)
    a, b = _operand(rng, 128, 256, "c", np.float64), _operand(rng, 256, 10, "t", np.float64)
    calls = []
    real = gemm.matmul_f64_packed

    def spy(*args):
        calls.append((args[0].shape, args[1].shape))
        return real(*args)
    monkeypatch.setattr(gemm, "matmul_f64_packed", spy)
    _check(a, b, np.asarray(nx.asarray(a) @ nx.asarray(b)), 0)
    assert calls == ([((128, 256), (256, 10))] if HAS else [])
    calls.clear()
    np.testing.assert_array_equal(np.asarray(nx.asarray(a[None]) @ nx.asarray(b[None])),
                                  np.matmul(a[None], b[None]))
    np.testing.assert_array_equal(np.asarray(nx.asarray(a[:8, :8]) @ nx.asarray(b[:8, :8])),
                                  a[:8, :8] @ b[:8, :8])
    assert calls == []
