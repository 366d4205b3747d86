"""Statistics through the front end: nx_rune against NumPy (pytest-benchmark).

Each group holds one case twice, ``nx_rune`` and ``numpy``; ``python -m benchmarks
benchmarks/bench_statistics.py`` prints the medians and their ratio.  The nan-aware reductions
on 1e6 float32 with 10 % nan (whole and along the rows of 1000x1000), ``average`` with and
without weights, ``var`` and ``clip`` on 1e6 float32, and ``cov`` of 100 variables x 10000
observations.
"""
import functools
import warnings

import numpy as np
import pytest

import nx_rune as nx

M = 10**6


@functools.cache
def _data():
    rng = np.random.default_rng(0)
    a = rng.random(M, dtype=np.float32)
    a[rng.random(M) < 0.1] = np.nan
    w = rng.random(M, dtype=np.float32)
    clean = rng.random(M, dtype=np.float32)
    return a, w, clean, nx.asarray(a), nx.asarray(w), nx.asarray(clean)


def _nan_case(name, axis):
    a, _, _, t, _, _ = _data()
    if axis is not None:
        a, t = a.reshape(1000, 1000), nx.reshape(t, (1000, 1000))
    return (lambda: getattr(nx, name)(t, axis)), (lambda: getattr(np, name)(a, axis))


def average_1e6():
    _, _, c, _, _, tc = _data()
    return lambda: nx.average(tc), lambda: np.average(c)


def average_weighted_1e6():
    _, w, c, _, tw, tc = _data()
    return lambda: nx.average(tc, weights=tw), lambda: np.average(c, weights=w)


def average_weighted_axis1_1000x1000():
    _, w, c, _, tw, tc = _data()
    c2, t2 = c.reshape(1000, 1000), nx.reshape(tc, (1000, 1000))
    w1, tw1 = w[:1000], nx.asarray(w[:1000])
    return (lambda: nx.average(t2, 1, tw1)), (lambda: np.average(c2, 1, w1))


def var_1e6():
    _, _, c, _, _, tc = _data()
    return lambda: nx.var(tc), lambda: np.var(c)


def clip_1e6():
    _, _, c, _, _, tc = _data()
    return lambda: nx.clip(tc, 0.25, 0.75), lambda: np.clip(c, np.float32(0.25), np.float32(0.75))


def cov_100x10000():
    x = np.random.default_rng(1).random((100, 10000), dtype=np.float32)
    t = nx.asarray(x)
    return lambda: nx.cov(t), lambda: np.cov(x, dtype=np.float32)


CASES = {f"{name}_{'1e6' if axis is None else 'axis1_1000x1000'}":
         functools.partial(_nan_case, name, axis)
         for name in ["nansum", "nanmean", "nanmax", "nanmin", "nanvar", "nanstd", "nanprod"]
         for axis in (None, 1)}
CASES.update({f.__name__: f for f in [average_1e6, average_weighted_1e6,
                                      average_weighted_axis1_1000x1000, var_1e6, clip_1e6,
                                      cov_100x10000]})


@functools.cache
def _case(name):
    ours, numpy_fn = CASES[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nanprod of 1e6 numbers in [0, 1) underflows to 0
        np.testing.assert_allclose(np.asarray(ours()), numpy_fn(), rtol=2e-3, atol=1e-5)
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
