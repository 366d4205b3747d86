"""Views and the strided copy: nx_rune against NumPy (pytest-benchmark).

Each group holds one case twice, ``nx_rune`` and ``numpy``; ``python -m benchmarks`` prints the
medians and their ratio.  Run alone with

    python -m pytest benchmarks/bench_views.py --benchmark-only --benchmark-group-by=group

Copies of a 4096x4096 float32 (64 MiB) tensor: contiguous, transposed (the cache-blocked
kernel), flipped, and a materialized pad; and the per-call overhead of small ops (µs).
"""
import functools

import numpy as np
import pytest

import nx_rune as nx

N = 4096


@functools.cache
def _big():
    a = np.random.default_rng(0).random((N, N), dtype=np.float32)
    return a, nx.asarray(a)


@functools.cache
def _small():
    a = np.random.default_rng(1).random((8, 8), dtype=np.float32)
    b = np.random.default_rng(2).random((8, 8), dtype=np.float32)
    return a, b, nx.asarray(a), nx.asarray(b)


def copy_contiguous():
    a, t = _big()
    return lambda: nx.copy(t), lambda: np.copy(a)


def copy_transposed():
    a, t = _big()
    return lambda: nx.contiguous(t.T), lambda: np.ascontiguousarray(a.T)


def copy_flipped():
    a, t = _big()
    return lambda: nx.copy(nx.flip(t)), lambda: np.ascontiguousarray(np.flip(a))


def copy_flipped_rows():
    a, t = _big()
    return lambda: nx.copy(nx.flip(t, 1)), lambda: np.ascontiguousarray(a[:, ::-1])


def pad_materialized():
    a, t = _big()
    return lambda: nx.copy(nx.pad(t, 3)), lambda: np.pad(a, 3)


def overhead_flip_8x8():
    a, _, t, _ = _small()
    return lambda: nx.flip(t), lambda: np.flip(a)


def overhead_slice_8x8():
    a, _, t, _ = _small()
    return lambda: t[1:5, ::-1], lambda: a[1:5, ::-1]


def overhead_transpose_8x8():
    a, _, t, _ = _small()
    return lambda: t.T, lambda: a.T


def overhead_add_8x8():
    a, b, t, u = _small()
    return lambda: t + u, lambda: a + b


def overhead_add_scalar_8x8():
    a, _, t, _ = _small()
    return lambda: t + 1.0, lambda: a + 1.0


CASES = {f.__name__: f for f in [
    copy_contiguous, copy_transposed, copy_flipped, copy_flipped_rows, pad_materialized,
    overhead_flip_8x8, overhead_slice_8x8, overhead_transpose_8x8, overhead_add_8x8,
    overhead_add_scalar_8x8,
]}


@functools.cache
def _case(name):
    ours, numpy_fn = CASES[name]()
    np.testing.assert_array_equal(np.asarray(ours()), numpy_fn())   # same result, checked once
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
