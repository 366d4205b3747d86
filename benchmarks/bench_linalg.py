"""Linear algebra: nx.linalg / nx.scipy.linalg against NumPy's and SciPy's own calls, and each
function's VJP against its forward (pytest-benchmark; ``python -m benchmarks
benchmarks/bench_linalg.py`` prints the ratios).

Each group is one function on one size, float64: (64, 64) and a batch (8, 256, 256) (lstsq,
which NumPy and SciPy do not batch, on (256, 256); the multivariate normal, whose SciPy version
takes one covariance, on (64, 64) only).  Four implementations per group: ``numpy`` (the peer:
NumPy's or SciPy's call with its default arguments, named numpy so that the table divides by
it), ``nx_rune`` (the forward call), ``nx_rune_vjp`` (the backward pass alone: the VJP function
of ``nx.vjp`` applied to a fixed random cotangent) and ``nx_rune_fwd_vjp`` (``nx.vjp`` and the
backward pass: what a gradient costs).  The goals: forward within 1.2x of the peer, VJP within
3x of the forward (the nx_rune_vjp row's ratio over the nx_rune row's).  Values are checked
against the peer once before timing.  Run it with ``OPENBLAS_NUM_THREADS=1`` and
``--benchmark-timer=time.process_time`` on a shared machine: CPU time of one thread is what
other processes disturb least.
"""
import functools

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

import nx_rune as nx
from nx_rune.scipy import _mvn

L, SL = nx.linalg, nx.scipy.linalg
SIZES = {"64": (), "8x256": (8,)}


def _n(size):
    return 64 if size == "64" else 256


@functools.cache
def _data(size):
    rng = np.random.default_rng(0)
    batch, n = SIZES[size], _n(size)
    a = rng.standard_normal(batch + (n, n))
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    tri = np.tril(a) + 2 * np.sqrt(n) * np.eye(n)
    b = rng.standard_normal(batch + (n, 8))
    return a, spd, tri, b


def _ops(size):
    """name -> (nx function of tensors, peer function of ndarrays, ndarray arguments)."""
    a, spd, tri, b = _data(size)
    n = _n(size)
    lo_spd = np.linalg.cholesky(spd)
    mean = np.zeros(n)
    x_mvn = np.random.default_rng(1).standard_normal((16, n))
    ops = {
        "cholesky": (L.cholesky, np.linalg.cholesky, [spd]),
        "solve_triangular": (lambda t, y: SL.solve_triangular(t, y, lower=True),
                             lambda t, y: scipy.linalg.solve_triangular(t, y, lower=True),
                             [tri, b]),
        "solve": (L.solve, np.linalg.solve, [a, b]),
        "inv": (L.inv, np.linalg.inv, [a]),
        "det": (L.det, np.linalg.det, [a]),
        "slogdet": (lambda x: L.slogdet(x).logabsdet, lambda x: np.linalg.slogdet(x).logabsdet,
                    [a]),
        "eigh": (L.eigh, np.linalg.eigh, [spd]),
        "eigvalsh": (L.eigvalsh, np.linalg.eigvalsh, [spd]),
        "svd": (lambda x: L.svd(x, full_matrices=False),
                lambda x: np.linalg.svd(x, full_matrices=False), [a]),
        "svdvals": (L.svdvals, np.linalg.svdvals, [a]),
        "qr": (L.qr, np.linalg.qr, [a]),
        "pinv": (L.pinv, lambda x: np.linalg.pinv(x, rtol=None), [a]),
        "matrix_power_7": (lambda x: L.matrix_power(x, 7), lambda x: np.linalg.matrix_power(x, 7),
                           [a / np.sqrt(n)]),
        "matrix_rank": (L.matrix_rank, np.linalg.matrix_rank, [a]),
        "vector_norm": (L.vector_norm, np.linalg.vector_norm, [a]),
        "matrix_norm_fro": (L.matrix_norm, np.linalg.matrix_norm, [a]),
        "matrix_norm_nuc": (lambda x: L.matrix_norm(x, ord="nuc"),
                            lambda x: np.linalg.matrix_norm(x, ord="nuc"), [a]),
        "norm": (L.norm, np.linalg.norm, [a]),
        "expm": (SL.expm, scipy.linalg.expm, [a / np.sqrt(n)]),
        "cho_factor": (lambda x: SL.cho_factor(x)[0], lambda x: scipy.linalg.cho_factor(x)[0],
                       [spd]),
        "cho_solve": (lambda c, y: SL.cho_solve((c, True), y),
                      lambda c, y: scipy.linalg.cho_solve((c, True), y), [lo_spd, b]),
    }
    if not SIZES[size]:   # SciPy's multivariate normal takes one covariance
        ops["mvn_logpdf"] = (lambda x, c: _mvn.logpdf(x, mean, c),
                             lambda x, c: scipy.stats.multivariate_normal.logpdf(x, mean, c),
                             [x_mvn, spd])
        ops["lstsq"] = (lambda x, y: L.lstsq(x, y)[0], lambda x, y: np.linalg.lstsq(x, y)[0],
                        [a, b])
    else:
        a2, b2 = a[0], b[0]
        ops["lstsq_256"] = (lambda x, y: L.lstsq(x, y)[0],
                            lambda x, y: np.linalg.lstsq(x, y)[0], [a2, b2])
    return ops


CASES = [(name, size) for size in SIZES for name in _ops(size)]


def _leaves(out):
    return list(out) if isinstance(out, tuple) else [out]


def _check(name, ours, ref):
    for o, r in zip(_leaves(ours), _leaves(ref)):
        o, r = np.asarray(o), np.asarray(r)
        if name in ("eigh", "svd", "qr"):    # vectors: the same LAPACK call, signs included
            np.testing.assert_allclose(np.abs(o), np.abs(r), rtol=1e-7, atol=1e-9)
        elif name == "cho_factor":           # SciPy leaves a's values below the diagonal
            np.testing.assert_allclose(o, np.triu(r), rtol=1e-7, atol=1e-9)
        else:
            np.testing.assert_allclose(o, r, rtol=1e-7, atol=1e-9 * max(1.0, np.abs(r).max()))


@functools.cache
def _case(name, size):
    fn, peer, args = _ops(size)[name]
    targs = [nx.asarray(x) for x in args]
    ours = lambda: fn(*targs)  # noqa: E731
    ref = lambda: peer(*args)  # noqa: E731
    _check(name, ours(), ref())
    impls = {"nx_rune": ours, "numpy": ref}
    if name != "matrix_rank":         # an integer: no derivative
        out, vjp_fn = nx.vjp(fn, *targs)
        rng = np.random.default_rng(2)
        ct = nx.tree_util.tree_map(
            lambda o: nx.asarray(rng.standard_normal(o.shape).astype(o.dtype)), out)
        impls["nx_rune_vjp"] = lambda: vjp_fn(ct)
        impls["nx_rune_fwd_vjp"] = lambda: nx.vjp(fn, *targs)[1](ct)
    return impls


RUNS = [(name, size, impl) for name, size in CASES
        for impl in ("nx_rune", "nx_rune_vjp", "nx_rune_fwd_vjp", "numpy")
        if not (impl.startswith("nx_rune_") and name == "matrix_rank")]   # an integer


@pytest.mark.parametrize("name,size,impl", RUNS, ids=["-".join(r) for r in RUNS])
def test_bench(benchmark, name, size, impl):
    benchmark.group = f"{name} {size}"
    benchmark(_case(name, size)[impl])


# -- eig (general square matrices) against NumPy's, forward and with its derivative ------------

@pytest.mark.parametrize("n", [16, 64])
def test_eig_nx(benchmark, n):
    import nx_rune as nx
    a = nx.asarray(np.random.default_rng(0).standard_normal((n, n)))
    benchmark.group = f"eig_{n}"
    benchmark(lambda: np.asarray(nx.linalg.eig(a).eigenvalues))


@pytest.mark.parametrize("n", [16, 64])
def test_eig_numpy(benchmark, n):
    a = np.random.default_rng(0).standard_normal((n, n))
    benchmark.group = f"eig_{n}"
    benchmark(lambda: np.linalg.eig(a))


@pytest.mark.parametrize("n", [16, 64])
def test_eig_grad_nx(benchmark, n):
    import nx_rune as nx
    a = nx.asarray(np.random.default_rng(0).standard_normal((n, n)))
    g = nx.grad(lambda m: nx.sum(nx.real(nx.linalg.eig(m).eigenvalues) ** 2))
    benchmark.group = f"eig_grad_{n}"
    benchmark(lambda: np.asarray(g(a)))


def _stack32(batch, n):
    x = np.random.default_rng(3).standard_normal((batch, n, n)).astype(np.float32)
    return x, x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=np.float32)


# stacks of small float32 factorizations: nx_rune's one C loop over SciPy's LAPACK
# (_kernels/lapack_loops, JAX's factors) against NumPy's batched gufuncs
@pytest.mark.parametrize("kind", ["qr", "cholesky", "eigh", "svd"])
@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
def test_stacked_float32_factorizations(benchmark, kind, impl):
    import nx_rune as nx
    x, spd = _stack32(100, 8)
    arg = spd if kind in ("cholesky", "eigh") else x
    fn = getattr(nx.linalg if impl == "nx_rune" else np.linalg, kind)
    a = nx.asarray(arg) if impl == "nx_rune" else arg
    benchmark.group = f"stacked 100 x 8x8 float32 {kind}"
    benchmark(fn, a)
