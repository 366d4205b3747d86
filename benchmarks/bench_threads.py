"""The big threaded kernels and their spread, idle and next to one busy process (pytest-benchmark).

The kernels' pool (nx_rune/_kernels/pool.pyx) lets every thread claim spans until none is
left, so a core the scheduler gives to another process costs at most the span it holds.  Each
group is one case, timed as 9 rounds after 2 warm-up rounds: read min, median and max (the
spread) and the ratio of the medians against the peers in the same run:

    python -m benchmarks benchmarks/bench_threads.py
    python -m pytest benchmarks/bench_threads.py --benchmark-only --benchmark-group-by=group

Cases: a 2**24 float32 normal draw (``jax.jit`` of ``jax.random.normal``; NumPy's ziggurat, a
different algorithm, for scale), a transposed copy of a 4096 x 4096 float32 array
(``np.ascontiguousarray(a.T)``, ``jax.jit`` of the same), ``take_along_axis`` on 1000 x 1000
float64 along axis 1, and a scatter-add of 1e6 float64 updates into 1e5 bins (``np.add.at``;
JAX: ``x.at[i].add(u)`` under jit).  ``nx_rune_1t`` is nx_rune on one thread.  The ``busy``
groups run the same with one other process spinning (``python -c "while True: pass"``,
stopped after the group).  The ``copy floor`` group is the floor of an allocating copy: a
memcpy of the same 64 MiB into a preallocated array (``np.copyto``), the same into a fresh one
(``np.copy``: the difference is the first touch of 16384 new pages), and nx_rune's transposed
copy into a preallocated buffer.
"""
import functools
import subprocess
import sys

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import pool
from nx_rune._kernels import strided as _strided
from nx_rune._kernels.buffer import Buffer, buffer_from_ndarray
from nx_rune._kernels.gather import gather, scatter

try:
    import jax
    import jax.numpy as jnp
except ImportError:                 # the jax columns need it; the others do not
    jax = None

ROUNDS, WARMUP = 9, 2
N_DRAW, N_COPY = 2**24, 4096


def _rng():
    return np.random.default_rng(0)


def _jit(fn, *args):
    f = jax.jit(fn)
    f(*args).block_until_ready()                        # compile outside the timing
    return lambda: f(*args).block_until_ready()


@functools.cache
def _normal():
    key = nx.random.PRNGKey(0)
    gen = np.random.Generator(np.random.Philox(0))
    impls = {"nx_rune": lambda: nx.random.normal(key, (N_DRAW,), dtype=nx.float32),
             "numpy": lambda: gen.standard_normal(N_DRAW, np.float32)}
    if jax is not None:
        impls["jax_jit"] = _jit(lambda k: jax.random.normal(k, (N_DRAW,)), jax.random.PRNGKey(0))
    return impls


@functools.cache
def _transpose():
    a = _rng().random((N_COPY, N_COPY), dtype=np.float32)
    t = nx.asarray(a)
    impls = {"nx_rune": lambda: nx.contiguous(t.T), "numpy": lambda: np.ascontiguousarray(a.T)}
    if jax is not None:
        ja = jnp.asarray(a)
        impls["jax_jit"] = _jit(lambda x: x.T.copy(), ja)
    return impls


@functools.cache
def _gather():
    x, i = _rng().random((1000, 1000)), _rng().integers(0, 1000, (1000, 1000))
    impls = {"nx_rune": lambda: gather(x, i, 1), "numpy": lambda: np.take_along_axis(x, i, 1)}
    if jax is not None:
        jx, ji = jnp.asarray(x), jnp.asarray(i)
        impls["jax_jit"] = _jit(lambda a, b: jnp.take_along_axis(a, b, 1), jx, ji)
    return impls


@functools.cache
def _scatter():
    rng = _rng()
    t, u, i = np.zeros(10**5), rng.random(10**6), rng.integers(0, 10**5, 10**6)

    def add_at():
        out = t.copy()
        np.add.at(out, i, u)
        return out
    impls = {"nx_rune": lambda: scatter(t, i, u, 0, "add"), "numpy": add_at}
    if jax is not None:
        jt, ju, ji = jnp.asarray(t), jnp.asarray(u), jnp.asarray(i)
        impls["jax_jit"] = _jit(lambda a, b, c: a.at[b].add(c), jt, ji, ju)
    return impls


@functools.cache
def _floor():
    a = _rng().random((N_COPY, N_COPY), dtype=np.float32)
    out = np.empty_like(a)
    src, dst = buffer_from_ndarray(a.reshape(-1)), Buffer(a.size, np.float32)

    def transposed_into():
        _strided.copy_strided(src, 0, (N_COPY, N_COPY), (1, N_COPY), dst, 0, (N_COPY, 1))
    return {"numpy": lambda: np.copyto(out, a),            # memcpy, pages already touched
            "numpy_fresh": lambda: np.copy(a),             # memcpy + first touch
            "nx_rune_fresh": lambda: nx.copy(nx.asarray(a)),
            "nx_rune_transposed_into": transposed_into}


CASES = {"normal f32 2**24": _normal, "transposed copy 4096^2 f32": _transpose,
         "take_along_axis 1000^2 axis 1": _gather, "scatter-add 1e6 into 1e5": _scatter}
IMPLS = ("nx_rune", "nx_rune_1t", "numpy", "jax_jit")


@pytest.fixture(scope="module")
def busy():
    """One other process spinning on a core while the group runs (stopped afterwards)."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _run(benchmark, group, fn, threads=None):
    benchmark.group = group
    saved = pool.get_num_threads()
    if threads is not None:
        pool.set_num_threads(threads)
    try:
        benchmark.pedantic(fn, rounds=ROUNDS, warmup_rounds=WARMUP, iterations=1)
    finally:
        pool.set_num_threads(saved)


def _impl(name, impl):
    impls = CASES[name]()
    key = "nx_rune" if impl == "nx_rune_1t" else impl
    if key not in impls:
        pytest.skip(f"{impl} is not installed")
    return impls[key], (1 if impl == "nx_rune_1t" else None)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", list(CASES))
def test_idle(benchmark, name, impl):
    fn, threads = _impl(name, impl)
    _run(benchmark, name, fn, threads)


@pytest.mark.parametrize("impl", ["numpy", "numpy_fresh", "nx_rune_fresh",
                                  "nx_rune_transposed_into"])
def test_copy_floor(benchmark, impl):
    _run(benchmark, "copy floor 64 MiB", _floor()[impl])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", list(CASES))
def test_busy(benchmark, busy, name, impl):
    fn, threads = _impl(name, impl)
    _run(benchmark, name + " (one busy process)", fn, threads)
