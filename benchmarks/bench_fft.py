"""nx.fft against NumPy's pocketfft (pytest-benchmark; ``python -m benchmarks
benchmarks/bench_fft.py`` prints the ratios).

Each group holds one case twice, ``nx_rune`` and ``numpy``, computing the same values (checked
once before timing): fft/ifft/rfft/irfft on 2**16 points and on (64, 1024) along the last axis,
float32/complex64 (NumPy >= 2 keeps single precision), plus a VJP of rfft against the same
cotangent by hand in NumPy.
"""
import functools

import numpy as np
import pytest

import nx_rune as nx


def _rng(seed=0):
    return np.random.default_rng(seed)


@functools.cache
def _real(shape):
    a = _rng(0).standard_normal(shape).astype(np.float32)
    return a, nx.asarray(a)


@functools.cache
def _complex(shape):
    r = _rng(1)
    a = (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(np.complex64)
    return a, nx.asarray(a)


SHAPES = {"2e16": (2**16,), "64x1024": (64, 1024)}


def _cases():
    cases = {}
    for tag, shape in SHAPES.items():
        def fft(shape=shape):
            a, t = _complex(shape)
            return lambda: nx.fft.fft(t), lambda: np.fft.fft(a)

        def ifft(shape=shape):
            a, t = _complex(shape)
            return lambda: nx.fft.ifft(t), lambda: np.fft.ifft(a)

        def fft_of_real(shape=shape):
            a, t = _real(shape)
            return lambda: nx.fft.fft(t), lambda: np.fft.fft(a)

        def rfft(shape=shape):
            a, t = _real(shape)
            return lambda: nx.fft.rfft(t), lambda: np.fft.rfft(a)

        def irfft(shape=shape):
            a, _ = _real(shape)
            s = np.fft.rfft(a)
            ts = nx.asarray(s)
            n = shape[-1]
            return lambda: nx.fft.irfft(ts, n=n), lambda: np.fft.irfft(s, n=n)

        def rfft_vjp(shape=shape):
            a, t = _real(shape)
            ct = np.fft.rfft(_real(shape)[0][::-1].copy())
            tct = nx.asarray(ct)
            n = shape[-1]
            _, f_vjp = nx.vjp(nx.fft.rfft, t)

            def numpy_vjp():   # the transpose by hand: zero-pad, full FFT, real part
                pad = np.zeros(shape, np.complex64)
                pad[..., : n // 2 + 1] = ct
                return np.fft.fft(pad).real
            return lambda: f_vjp(tct)[0], numpy_vjp

        for f in (fft, ifft, fft_of_real, rfft, irfft, rfft_vjp):
            cases[f"{f.__name__}_{tag}"] = f
    return cases


CASES = _cases()


@functools.cache
def _case(name):
    ours, numpy_fn = CASES[name]()
    got, ref = np.asarray(ours()), numpy_fn()
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3 * float(np.abs(ref).max()))
    return {"nx_rune": ours, "numpy": numpy_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
