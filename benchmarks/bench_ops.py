"""Compute through the front end: nx_rune against NumPy (pytest-benchmark).

Each group holds one case twice, ``nx_rune`` and ``numpy``; ``python -m benchmarks`` prints the
medians and their ratio.  Elementwise ops on 1e6 contiguous float32, a sum, a 512x512 matmul,
cumsum, and unfold / fold (im2col / col2im) against NumPy formulations (fold: np.add.at).
"""
import functools
import math

import numpy as np
import pytest

import nx_rune as nx
from numpy_windows import numpy_fold, numpy_fold_plan, numpy_unfold, window_counts

M = 10**6
CONV = dict(shape=(8, 16, 32, 32), kernel=(3, 3), stride=(1, 1), dilation=(1, 1), padding=(1, 1))


def _rng(seed=0):
    return np.random.default_rng(seed)


@functools.cache
def _vectors():
    a = _rng(0).random(M, dtype=np.float32)
    b = _rng(1).random(M, dtype=np.float32)
    return a, b, nx.asarray(a), nx.asarray(b)


def add_1e6():
    a, b, t, u = _vectors()
    return lambda: nx.add(t, u), lambda: np.add(a, b)


def sub_1e6():
    # the sub primitive (a - b in one ufunc call, not add and neg)
    a, b, t, u = _vectors()
    return lambda: t - u, lambda: a - b


def mul_1e6():
    a, b, t, u = _vectors()
    return lambda: t * u, lambda: a * b


def mul_scalar_1e6():
    a, _, t, _ = _vectors()
    return lambda: t * 3.0, lambda: a * np.float32(3.0)


def exp_1e6():
    a, _, t, _ = _vectors()
    return lambda: nx.exp(t), lambda: np.exp(a)


def sum_1e6():
    a, _, t, _ = _vectors()
    return lambda: nx.sum(t), lambda: np.sum(a)


def sum_axis1_1000x1000():
    a, _, t, _ = _vectors()
    a2, t2 = a.reshape(1000, 1000), nx.reshape(t, (1000, 1000))
    return lambda: nx.sum(t2, axis=1), lambda: np.sum(a2, axis=1)


def cumsum_1e6():
    a, _, t, _ = _vectors()
    return lambda: nx.cumsum(t), lambda: np.cumsum(a)


def matmul_512():
    a = _rng(2).random((512, 512), dtype=np.float32)
    b = _rng(3).random((512, 512), dtype=np.float32)
    t, u = nx.asarray(a), nx.asarray(b)
    return lambda: t @ u, lambda: a @ b


def softmax_1000x1000():
    a, _, t, _ = _vectors()
    a2, t2 = a.reshape(1000, 1000), nx.reshape(t, (1000, 1000))

    def numpy_softmax():
        e = np.exp(a2 - a2.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return lambda: nx.softmax(t2), numpy_softmax


def unfold_conv3x3():
    x = _rng(4).random(CONV["shape"], dtype=np.float32)
    t = nx.asarray(x)
    args = CONV["kernel"], CONV["stride"], CONV["dilation"], CONV["padding"]
    return lambda: nx.unfold(t, *args), lambda: numpy_unfold(x, *args)


def fold_conv3x3():
    sizes = CONV["shape"][2:]
    args = CONV["kernel"], CONV["stride"], CONV["dilation"], CONV["padding"]
    L = math.prod(window_counts(sizes, *args))
    cols = _rng(5).random((CONV["shape"][0], CONV["shape"][1] * 9, L), dtype=np.float32)
    plan = numpy_fold_plan(cols.shape, sizes, *args)
    c = nx.asarray(cols)
    return lambda: nx.fold(c, sizes, *args), lambda: numpy_fold(cols, plan)


def conv2d_3x3():
    x = _rng(6).random(CONV["shape"], dtype=np.float32)
    w = _rng(7).random((32, 16, 3, 3), dtype=np.float32)
    t, v = nx.asarray(x), nx.asarray(w)
    w2 = w.reshape(32, -1)
    args = CONV["kernel"], CONV["stride"], CONV["dilation"], CONV["padding"]
    return (lambda: nx.conv2d(t, v, padding=1),
            lambda: np.matmul(w2, numpy_unfold(x, *args)).reshape(8, 32, 32, 32))


def jit_matmul_bands_128x784x256():
    """A jitted MLP's forward product (float32): on a CPU with AVX-512 the packed kernel on the
    kernels' threads; elsewhere one gemm band per kernel thread when NumPy's BLAS is pinned to
    one thread (nx_rune/compiler/split_matmul.py; run with OPENBLAS_NUM_THREADS=1, as the
    README's tables are), NumPy's one call otherwise."""
    a = _rng(4).random((128, 784), dtype=np.float32)
    b = _rng(5).random((784, 256), dtype=np.float32)
    f = nx.jit(lambda x, w: x @ w)
    t, u = nx.asarray(a), nx.asarray(b)
    return lambda: f(t, u), lambda: a @ b


def jit_matmul_one_thread_128x784x256():
    """The same product with the kernels' pool at one thread: the packed AVX-512 kernel (where
    the CPU has it) against the BLAS's own single-threaded gemm."""
    a = _rng(4).random((128, 784), dtype=np.float32)
    b = _rng(5).random((784, 256), dtype=np.float32)
    f = nx.jit(lambda x, w: x @ w)
    t, u = nx.asarray(a), nx.asarray(b)

    def ours():
        old = nx.get_num_threads()
        nx.set_num_threads(1)
        try:
            return f(t, u)
        finally:
            nx.set_num_threads(old)
    return ours, lambda: a @ b


CASES = {f.__name__: f for f in [
    add_1e6, sub_1e6, mul_1e6, mul_scalar_1e6, exp_1e6, sum_1e6, sum_axis1_1000x1000, cumsum_1e6,
    matmul_512, softmax_1000x1000, unfold_conv3x3, fold_conv3x3, conv2d_3x3,
    jit_matmul_bands_128x784x256, jit_matmul_one_thread_128x784x256,
]}


@functools.cache
def _case(name):
    ours, numpy_fn = CASES[name]()
    np.testing.assert_allclose(np.asarray(ours()), numpy_fn(), rtol=2e-4, atol=1e-5)
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
