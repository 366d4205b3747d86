"""The cost of the x64 setting on the hot paths: nx_rune with x64 off (``nx_rune``) and on
(``nx_rune_x64``) against NumPy, on small operands where per-call overhead dominates.

Binary ops on two tensors never read the setting (their fast path is unchanged); creation
calls and promotions that need a default dtype read one ContextVar.  ``python -m benchmarks
benchmarks/bench_x64.py`` prints the medians and their ratios.  Each case first checks that
nx_rune and NumPy give the same values (in float32 with x64 off, float64 with it on).
"""
import functools

import numpy as np
import pytest

import nx_rune as nx


@functools.cache
def _small(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 8)).astype(dtype)
    b = rng.standard_normal((8, 8)).astype(dtype)
    return a, b, nx.asarray(a), nx.asarray(b)


def add_tensor_tensor_8x8(dt):
    a, b, t, u = _small(dt)
    return lambda: t + u, lambda: a + b


def mul_tensor_float_8x8(dt):
    a, _, t, _ = _small(dt)
    return lambda: t * 1.5, lambda: a * dt(1.5)


def add_int_float_8x8(dt):
    i = np.arange(64, dtype=np.int32).reshape(8, 8)
    ti = nx.asarray(i)
    return lambda: ti + 1.5, lambda: i.astype(dt) + dt(1.5)


def zeros_64(dt):
    return lambda: nx.zeros(64), lambda: np.zeros(64, dt)


def asarray_list_8(dt):
    data = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
    return lambda: nx.asarray(data), lambda: np.asarray(data, dt)


def linspace_64(dt):
    return lambda: nx.linspace(0.0, 1.0, 64), lambda: np.linspace(0.0, 1.0, 64).astype(dt)


CASES = {f.__name__: f for f in [add_tensor_tensor_8x8, mul_tensor_float_8x8, add_int_float_8x8,
                                 zeros_64, asarray_list_8, linspace_64]}
IMPLS = {"nx_rune": False, "nx_rune_x64": True, "numpy": False}


@functools.cache
def _case(name, impl):
    x64 = IMPLS[impl]
    dt = np.float64 if x64 else np.float32
    with nx.enable_x64(x64):
        ours, numpy_fn = CASES[name](dt)
        got = ours()
    assert got.dtype == dt
    np.testing.assert_array_equal(np.asarray(got), numpy_fn())   # same result, checked once
    return ours if impl != "numpy" else numpy_fn


@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = f"x64 {name}"
    fn = _case(name, impl)
    with nx.enable_x64(IMPLS[impl]):
        benchmark(fn)
