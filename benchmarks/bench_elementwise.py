"""The Array API / NumPy elementwise functions: nx_rune against the NumPy ufunc (pytest-benchmark).

Each group holds one case twice, ``nx_rune`` and ``numpy``, on 1e6 contiguous elements (float32
in each function's domain; complex64 for the complex parts, int32 for the shifts); ``python -m
benchmarks benchmarks/bench_elementwise.py`` prints the medians and their ratio.  Each case first
checks that both give the same values.
"""
import functools

import numpy as np
import pytest

import nx_rune as nx

M = 10**6


@functools.cache
def _data(kind):
    rng = np.random.default_rng(sum(map(ord, kind)))
    if kind == "any":
        return rng.uniform(-3.0, 3.0, M).astype(np.float32)
    if kind == "unit":
        return rng.uniform(-0.99, 0.99, M).astype(np.float32)
    if kind == "above1":
        return rng.uniform(1.0, 4.0, M).astype(np.float32)
    if kind == "pos":
        return rng.uniform(0.01, 4.0, M).astype(np.float32)
    if kind == "special":   # finite values with nan and inf sprinkled in
        x = rng.uniform(-3.0, 3.0, M).astype(np.float32)
        x[rng.random(M) < 0.05] = np.nan
        x[rng.random(M) < 0.05] = np.inf
        return x
    if kind == "complex":
        return (rng.uniform(-3, 3, M) + 1j * rng.uniform(-3, 3, M)).astype(np.complex64)
    if kind == "int":
        return rng.integers(-2**30, 2**30, M, dtype=np.int32)
    if kind == "count":
        return rng.integers(0, 31, M, dtype=np.int32)
    raise KeyError(kind)


# name: (nx function, NumPy function, kinds of the operands)
FUNCS = {
    "tan": (nx.tan, np.tan, ["any"]),
    "arcsin": (nx.arcsin, np.arcsin, ["unit"]),
    "arccos": (nx.arccos, np.arccos, ["unit"]),
    "arctan": (nx.arctan, np.arctan, ["any"]),
    "sinh": (nx.sinh, np.sinh, ["any"]),
    "cosh": (nx.cosh, np.cosh, ["any"]),
    "arcsinh": (nx.arcsinh, np.arcsinh, ["any"]),
    "arccosh": (nx.arccosh, np.arccosh, ["above1"]),
    "arctanh": (nx.arctanh, np.arctanh, ["unit"]),
    "log10": (nx.log10, np.log10, ["pos"]),
    "abs": (nx.abs, np.abs, ["any"]),
    "sign": (nx.sign, np.sign, ["any"]),
    "floor": (nx.floor, np.floor, ["any"]),
    "ceil": (nx.ceil, np.ceil, ["any"]),
    "trunc": (nx.trunc, np.trunc, ["any"]),
    "rint": (nx.rint, np.rint, ["any"]),
    "round": (nx.round, np.round, ["any"]),
    "signbit": (nx.signbit, np.signbit, ["any"]),
    "isnan": (nx.isnan, np.isnan, ["special"]),
    "isinf": (nx.isinf, np.isinf, ["special"]),
    "isfinite": (nx.isfinite, np.isfinite, ["special"]),
    "deg2rad": (nx.deg2rad, np.deg2rad, ["any"]),
    "rad2deg": (nx.rad2deg, np.rad2deg, ["any"]),
    "real_complex64": (nx.real, np.real, ["complex"]),
    "imag_complex64": (nx.imag, np.imag, ["complex"]),
    "conj_complex64": (nx.conj, np.conj, ["complex"]),
    "abs_complex64": (nx.abs, np.abs, ["complex"]),
    "tan_complex64": (nx.tan, np.tan, ["complex"]),
    "atan2": (nx.atan2, np.arctan2, ["any", "any"]),
    "hypot": (nx.hypot, np.hypot, ["any", "any"]),
    "copysign": (nx.copysign, np.copysign, ["any", "any"]),
    "logaddexp": (nx.logaddexp, np.logaddexp, ["any", "any"]),
    "logaddexp2": (nx.logaddexp2, np.logaddexp2, ["any", "any"]),
    "nextafter": (nx.nextafter, np.nextafter, ["any", "any"]),
    "left_shift_int32": (nx.bitwise_left_shift, np.left_shift, ["int", "count"]),
    "right_shift_int32": (nx.bitwise_right_shift, np.right_shift, ["int", "count"]),
    "sinc": (nx.sinc, np.sinc, ["any"]),
}


@functools.cache
def _case(name):
    fn, ref, kinds = FUNCS[name]
    arrays = [_data(k) for k in kinds]
    tensors = [nx.asarray(a) for a in arrays]
    # np.real/np.imag return views: copy, as nx does, so that both sides write their output
    numpy_fn = (lambda: np.array(ref(*arrays))) if ref in (np.real, np.imag) else \
        (lambda: ref(*arrays))
    ours = lambda: fn(*tensors)   # noqa: E731
    np.testing.assert_array_equal(np.asarray(ours()), numpy_fn())
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(FUNCS))
def test_bench(benchmark, name, impl):
    benchmark.group = f"{name}_1e6"
    benchmark(_case(name)[impl])
