"""nx.scipy.stats log-densities on 10**5 float64 points against scipy.stats, and
nx.scipy.signal's 2-D convolutions against scipy.signal (pytest-benchmark; ``python -m
benchmarks benchmarks/bench_stats.py`` prints the ratios; "numpy" names the SciPy baseline).

Each group holds one case twice, ``nx_rune`` and ``numpy``, computing the same values (checked
once before timing).
"""
import functools

import numpy as np
import pytest
import scipy.signal as sig
import scipy.stats as ss

import nx_rune as nx

ST = nx.scipy.stats
S = nx.scipy.signal
N = 10**5


@functools.cache
def _x():
    a = np.random.default_rng(0).uniform(0.05, 6.0, N)
    return a, nx.asarray(a)


def _logpdf(name, ours, theirs, *params):
    def case():
        a, t = _x()
        return lambda: ours(t, *params), lambda: theirs(a, *params)
    case.__name__ = f"{name}_1e5"
    return case


def _images(shape_a, shape_b):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    return a, b, nx.asarray(a), nx.asarray(b)


def convolve2d_256_5x5():
    a, b, ta, tb = _images((256, 256), (5, 5))
    return lambda: S.convolve2d(ta, tb, "same"), lambda: sig.convolve2d(a, b, "same")


def correlate2d_256_5x5_symm():
    a, b, ta, tb = _images((256, 256), (5, 5))
    return (lambda: S.correlate2d(ta, tb, "same", "symm"),
            lambda: sig.correlate2d(a, b, "same", "symm"))


def fftconvolve_512_31x31():
    a, b, ta, tb = _images((512, 512), (31, 31))
    return lambda: S.fftconvolve(ta, tb), lambda: sig.fftconvolve(a, b)


def fftconvolve_1d_1e5():
    a, b, ta, tb = _images((N,), (1001,))
    return lambda: S.fftconvolve(ta, tb, "same"), lambda: sig.fftconvolve(a, b, "same")


CASES = {f.__name__: f for f in [
    _logpdf("chi2_logpdf", ST.chi2.logpdf, ss.chi2.logpdf, 3.5),
    _logpdf("truncnorm_logpdf", ST.truncnorm.logpdf, ss.truncnorm.logpdf, 0.5, 4.0),
    _logpdf("truncnorm_logcdf", ST.truncnorm.logcdf, ss.truncnorm.logcdf, 0.5, 4.0),
    _logpdf("pareto_logpdf", ST.pareto.logpdf, ss.pareto.logpdf, 2.5, -1.0),
    _logpdf("gumbel_r_logpdf", ST.gumbel_r.logpdf, ss.gumbel_r.logpdf),
    _logpdf("gennorm_logpdf", ST.gennorm.logpdf, ss.gennorm.logpdf, 1.5),
    _logpdf("vonmises_logpdf", ST.vonmises.logpdf, ss.vonmises.logpdf, 2.0),
    _logpdf("wrapcauchy_logpdf", ST.wrapcauchy.logpdf, ss.wrapcauchy.logpdf, 0.4),
    convolve2d_256_5x5, correlate2d_256_5x5_symm, fftconvolve_512_31x31, fftconvolve_1d_1e5]}


@functools.cache
def _case(name):
    ours, ref_fn = CASES[name]()
    got, ref = np.asarray(ours()), np.asarray(ref_fn())
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)
    return {"nx_rune": ours, "numpy": ref_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
