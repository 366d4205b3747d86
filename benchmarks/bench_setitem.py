"""``x[idx] = v`` and in-place operators: nx_rune against NumPy (pytest-benchmark).

Each group holds one case twice, ``nx_rune`` and ``numpy``, each writing into its own
1000x1000 float64 array (8 MiB); ``python -m benchmarks benchmarks/bench_setitem.py`` prints
the medians and their ratio.  Small writes show the per-call overhead (our index checks, write
tracking), large ones the write itself (NumPy's indexing, or its ufunc into x's memory).
"""
import functools

import numpy as np
import pytest

import nx_rune as nx

N = 1000


@functools.cache
def _data():
    rng = np.random.default_rng(0)
    a = rng.random((N, N))
    idx = rng.integers(0, N, N)
    return a, idx, a > 0.5


def _pair():
    a, _, _ = _data()
    b = a.copy()
    return b, nx.asarray(a.copy())


def set_element():
    b, t = _pair()
    return lambda: t.__setitem__((5, 7), 1.0), lambda: b.__setitem__((5, 7), 1.0), b, t


def set_strided_columns():
    b, t = _pair()
    i = (slice(None), slice(None, None, 2))
    return lambda: t.__setitem__(i, 1.0), lambda: b.__setitem__(i, 1.0), b, t


def set_rows_by_index_array():
    b, t = _pair()
    _, idx, _ = _data()
    return lambda: t.__setitem__(idx, 1.0), lambda: b.__setitem__(idx, 1.0), b, t


def set_points_by_two_arrays():
    b, t = _pair()
    _, idx, _ = _data()
    i = (idx, idx[::-1])
    return lambda: t.__setitem__(i, 2.0), lambda: b.__setitem__(i, 2.0), b, t


def set_by_mask():
    b, t = _pair()
    _, _, m = _data()
    mt = nx.asarray(m)
    return lambda: t.__setitem__(mt, 0.0), lambda: b.__setitem__(m, 0.0), b, t


def iadd_scalar():
    b, t = _pair()
    return lambda: t.__iadd__(1.0), lambda: b.__iadd__(1.0), b, t


def imul_array():
    b, t = _pair()
    c = np.full((N, N), 1.0)
    ct = nx.asarray(c)
    return lambda: t.__imul__(ct), lambda: b.__imul__(c), b, t


def ifloordiv_scalar():       # no ufunc shortcut: computed, then written
    b, t = _pair()
    return lambda: t.__ifloordiv__(1.0), lambda: b.__ifloordiv__(1.0), b, t


CASES = {f.__name__: f for f in [
    set_element, set_strided_columns, set_rows_by_index_array, set_points_by_two_arrays,
    set_by_mask, iadd_scalar, imul_array, ifloordiv_scalar,
]}


@functools.cache
def _case(name):
    ours, numpy_fn, b, t = CASES[name]()
    ours()
    numpy_fn()
    np.testing.assert_array_equal(np.asarray(t), b)   # the same writes, checked once
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
