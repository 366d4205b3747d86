"""Sorting, searching, set functions and order statistics: nx_rune against NumPy
(pytest-benchmark; ``python -m benchmarks benchmarks/bench_sorting.py`` prints the ratios).

Each group holds one case twice, ``nx_rune`` and ``numpy``, computing the same values (checked
once before timing).  nx.sort is stable and NumPy's default sort gives the same values, so
sort is timed against ``np.sort``; stable argsort against ``np.argsort(kind="stable")`` and
``stable=False`` against NumPy's default argsort.
"""
import functools

import numpy as np
import pytest

import nx_rune as nx

M = 10**6


def _rng(seed=0):
    return np.random.default_rng(seed)


@functools.cache
def _floats(dtype=np.float32):
    a = _rng(0).standard_normal(M).astype(dtype)
    return a, nx.asarray(a)


def sort_1e6():
    a, t = _floats()
    return lambda: nx.sort(t), lambda: np.sort(a)


def sort_descending_1e6():
    a, t = _floats()
    return lambda: nx.sort(t, descending=True), lambda: np.sort(a)[::-1].copy()


def sort_relu_1e6():
    # half zeros: NumPy's SIMD sort may rewrite their signs, which nx_rune restores
    a, _ = _floats()
    r = np.maximum(a, 0)
    t = nx.asarray(r)
    return lambda: nx.sort(t), lambda: np.sort(r)


def sort_rows_1000x1000():
    a, t = _floats()
    a2, t2 = a.reshape(1000, 1000), nx.reshape(t, (1000, 1000))
    return lambda: nx.sort(t2, axis=1), lambda: np.sort(a2, axis=1)


def sort_columns_1000x1000():
    a, t = _floats()
    a2, t2 = a.reshape(1000, 1000), nx.reshape(t, (1000, 1000))
    return lambda: nx.sort(t2, axis=0), lambda: np.sort(a2, axis=0)


def sort_float64_1e6():
    a, t = _floats(np.float64)
    return lambda: nx.sort(t), lambda: np.sort(a)


def argsort_1e6():
    a, t = _floats()
    return lambda: nx.argsort(t), lambda: np.argsort(a, kind="stable")


def argsort_unstable_1e6():
    a, t = _floats()
    return lambda: nx.argsort(t, stable=False), lambda: np.argsort(a)


def argsort_float64_1e6():
    a, t = _floats(np.float64)
    return lambda: nx.argsort(t), lambda: np.argsort(a, kind="stable")


def argsort_int64_ties_1e6():
    a = _rng(1).integers(0, 1000, M)
    t = nx.asarray(a)
    return lambda: nx.argsort(t), lambda: np.argsort(a, kind="stable")


def searchsorted_1e5_in_1e6():
    a, _ = _floats()
    s = np.sort(a)
    v = _rng(2).standard_normal(10**5).astype(np.float32)
    ts, tv = nx.asarray(s), nx.asarray(v)
    return lambda: nx.searchsorted(ts, tv), lambda: np.searchsorted(s, v)


@functools.cache
def _ints():
    a = _rng(3).integers(0, 10000, M).astype(np.int32)
    return a, nx.asarray(a)


def unique_values_1e6():
    a, t = _ints()
    return lambda: nx.unique_values(t), lambda: np.unique(a)


def unique_counts_1e6():
    a, t = _ints()
    return (lambda: tuple(nx.unique_counts(t)),
            lambda: np.unique(a, return_counts=True))


def unique_inverse_1e6():
    a, t = _ints()
    return (lambda: tuple(nx.unique_inverse(t)),
            lambda: np.unique(a, return_inverse=True))


def unique_float_1e6():
    a, t = _floats()
    return lambda: nx.unique_values(t), lambda: np.unique(a)


def median_1e6():
    a, t = _floats()
    return lambda: nx.median(t), lambda: np.median(a)


def quantiles_1000x1000():
    a, t = _floats()
    a2, t2 = a.reshape(1000, 1000), nx.reshape(t, (1000, 1000))
    q = [0.1, 0.5, 0.9]
    return lambda: nx.quantile(t2, q, axis=1), lambda: np.quantile(a2, q, axis=1)


def sort_vjp_1e6():
    a, t = _floats()
    w = _rng(4).standard_normal(M).astype(np.float32)
    tw = nx.asarray(w)
    grad = nx.grad(lambda x: nx.sum(nx.sort(x) * tw))

    def numpy_grad():   # the same cotangent by hand: w scattered through the permutation
        g = np.empty_like(a)
        g[np.argsort(a, kind="stable")] = w
        return g
    return lambda: grad(t), numpy_grad


CASES = {f.__name__: f for f in [
    sort_1e6, sort_descending_1e6, sort_relu_1e6, sort_rows_1000x1000, sort_columns_1000x1000,
    sort_float64_1e6, argsort_1e6, argsort_unstable_1e6, argsort_float64_1e6,
    argsort_int64_ties_1e6, searchsorted_1e5_in_1e6, unique_values_1e6, unique_counts_1e6,
    unique_inverse_1e6, unique_float_1e6, median_1e6, quantiles_1000x1000, sort_vjp_1e6,
]}


def _same(ours, ref, name):
    if isinstance(ref, tuple):
        for o, r in zip(ours, ref):
            _same(o, r, name)
        return
    ours = np.asarray(ours)
    if name == "argsort_unstable_1e6":   # ties may differ: compare the sorted values
        a, _ = _floats()
        ours, ref = a[ours], a[ref]
    if np.asarray(ref).dtype.kind == "f":
        np.testing.assert_allclose(ours, ref, rtol=1e-6)
    else:
        np.testing.assert_array_equal(ours, ref)


@functools.cache
def _case(name):
    ours, numpy_fn = CASES[name]()
    _same(ours(), numpy_fn(), name)
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
