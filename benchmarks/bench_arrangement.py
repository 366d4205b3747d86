"""tile, repeat, roll and tensordot: nx_rune against NumPy (pytest-benchmark).

Each group holds one case twice, ``nx_rune`` and ``numpy``; ``python -m benchmarks`` prints the
medians and their ratio.  Run alone with

    python -m pytest benchmarks/bench_arrangement.py --benchmark-only --benchmark-group-by=group

Sizes: 1e6 float32 elements in (a vector or 1000x1000), except tensordot (a 128x64x64 by
64x64x128 contraction, about 134 MFLOP, and an 8x8 one for the per-call overhead).
"""
import functools

import numpy as np
import pytest

import nx_rune as nx


@functools.cache
def _vec():
    a = np.random.default_rng(0).random(10**6, dtype=np.float32)
    return a, nx.asarray(a)


@functools.cache
def _mat():
    a = np.random.default_rng(1).random((1000, 1000), dtype=np.float32)
    return a, nx.asarray(a)


@functools.cache
def _blocks():
    rng = np.random.default_rng(2)
    a = rng.random((128, 64, 64), dtype=np.float32)
    b = rng.random((64, 64, 128), dtype=np.float32)
    return a, b, nx.asarray(a), nx.asarray(b)


def tile_1e6_x3():
    a, t = _vec()
    return lambda: nx.tile(t, 3), lambda: np.tile(a, 3)


def tile_1000x1000_2x2():
    a, t = _mat()
    return lambda: nx.tile(t, (2, 2)), lambda: np.tile(a, (2, 2))


def repeat_1e6_x2():
    a, t = _vec()
    return lambda: nx.repeat(t, 2), lambda: np.repeat(a, 2)


def repeat_1e6_x8():
    a, t = _vec()
    return lambda: nx.repeat(t, 8), lambda: np.repeat(a, 8)


def repeat_1000x1000_x2_axis0():
    a, t = _mat()
    return lambda: nx.repeat(t, 2, axis=0), lambda: np.repeat(a, 2, axis=0)


def repeat_1000x1000_counts_axis1():
    a, t = _mat()
    counts = np.random.default_rng(3).integers(0, 4, 1000)
    return lambda: nx.repeat(t, counts, axis=1), lambda: np.repeat(a, counts, axis=1)


def roll_1e6():
    a, t = _vec()
    return lambda: nx.roll(t, 12345), lambda: np.roll(a, 12345)


def roll_1000x1000_axis1():
    a, t = _mat()
    return lambda: nx.roll(t, 7, axis=1), lambda: np.roll(a, 7, axis=1)


def roll_1000x1000_two_axes():
    a, t = _mat()
    return lambda: nx.roll(t, (3, -5), axis=(0, 1)), lambda: np.roll(a, (3, -5), axis=(0, 1))


def tensordot_axes2():
    a, b, ta, tb = _blocks()
    return lambda: nx.tensordot(ta, tb), lambda: np.tensordot(a, b)


def tensordot_transposed_axes():
    a, b, ta, tb = _blocks()
    ax = ([0, 2], [2, 0])
    return lambda: nx.tensordot(ta, tb, axes=ax), lambda: np.tensordot(a, b, axes=ax)


def tensordot_8x8_overhead():
    rng = np.random.default_rng(4)
    a, b = rng.random((8, 8), dtype=np.float32), rng.random((8, 8), dtype=np.float32)
    ta, tb = nx.asarray(a), nx.asarray(b)
    return lambda: nx.tensordot(ta, tb, 1), lambda: np.tensordot(a, b, 1)


CASES = {f.__name__: f for f in [
    tile_1e6_x3, tile_1000x1000_2x2, repeat_1e6_x2, repeat_1e6_x8, repeat_1000x1000_x2_axis0,
    repeat_1000x1000_counts_axis1, roll_1e6, roll_1000x1000_axis1, roll_1000x1000_two_axes,
    tensordot_axes2, tensordot_transposed_axes, tensordot_8x8_overhead,
]}


@functools.cache
def _case(name):
    ours, numpy_fn = CASES[name]()
    np.testing.assert_allclose(np.asarray(ours()), numpy_fn(), rtol=1e-5)   # checked once
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
