"""nx.scipy.linalg's new functions against SciPy's own calls at n = 64 and 256, float64
(pytest-benchmark; ``python -m benchmarks benchmarks/bench_scipy_linalg.py`` prints the ratios).

Per group two implementations: ``numpy`` (the peer: SciPy's call, named numpy so that the table
divides by it) and ``nx_rune`` (the forward call); values are checked against SciPy once
before timing.  Run with ``OPENBLAS_NUM_THREADS=1`` on a shared machine.
"""
import functools

import numpy as np
import pytest
import scipy.linalg as sl

import nx_rune as nx

L = nx.scipy.linalg
SIZES = [64, 256]


@functools.cache
def _data(n):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)) + np.sqrt(n) * np.eye(n)
    spd = a @ a.T / n + np.eye(n)
    b = rng.standard_normal((n, n)) + np.sqrt(n) * np.eye(n)
    return a, spd, b


CASES = {
    "sqrtm": (lambda d: (d[1],), sl.sqrtm, L.sqrtm),
    "logm": (lambda d: (d[1],), sl.logm, L.logm),
    "funm_exp": (lambda d: (d[1] / 4,), lambda a: sl.funm(a, np.exp),
                 lambda a: L.funm(a, nx.exp)),
    "schur": (lambda d: (d[0],), lambda a: sl.schur(a)[0], lambda a: L.schur(a)[0]),
    "hessenberg": (lambda d: (d[0],), sl.hessenberg, L.hessenberg),
    "polar": (lambda d: (d[0],), lambda a: sl.polar(a)[0], lambda a: L.polar(a)[0]),
    "solve_sylvester": (lambda d: (d[0], d[2], d[1]), sl.solve_sylvester, L.solve_sylvester),
    "solve_continuous_lyapunov": (lambda d: (d[0], d[1]), sl.solve_continuous_lyapunov,
                                  L.solve_continuous_lyapunov),
    "solve_discrete_lyapunov": (lambda d: (d[0] / (2 * np.sqrt(len(d[0]))), d[1]),
                                sl.solve_discrete_lyapunov, L.solve_discrete_lyapunov),
    "expm_frechet": (lambda d: (d[0] / len(d[0]), d[1] / len(d[0])),
                     lambda a, e: sl.expm_frechet(a, e)[1], lambda a, e: L.expm_frechet(a, e)[1]),
    "lu": (lambda d: (d[0],), lambda a: sl.lu(a)[2], lambda a: L.lu(a)[2]),
    "lu_solve": (lambda d: (d[0], d[1]), lambda a, b: sl.lu_solve(sl.lu_factor(a), b),
                 lambda a, b: L.lu_solve(L.lu_factor(a), b)),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("impl", ["numpy", "nx_rune"])
def test_scipy_linalg(benchmark, name, n, impl):
    make, ref, fn = CASES[name]
    args = make(_data(n))
    benchmark.group = f"{name}-{n}"
    if impl == "numpy":
        benchmark(ref, *args)
        return
    nargs = [nx.asarray(x) for x in args]
    np.testing.assert_allclose(np.asarray(fn(*nargs)), ref(*args), rtol=1e-6, atol=1e-6)
    benchmark(fn, *nargs)
