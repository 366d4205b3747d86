"""Random-bit throughput: nx.random vs NumPy's Philox vs jax.random under jit.

Run: ``python -m pytest benchmarks/bench_random.py --benchmark-group-by=group``.
Every case in a group makes the same number of values, so the group's table reads as ratios.
"""
import numpy as np
import pytest

from nx_rune import random as nxr

N = 2**24


@pytest.fixture(scope="module")
def jax_bits():
    jax = pytest.importorskip("jax")
    key = jax.random.PRNGKey(42)
    fn = jax.jit(lambda k: jax.random.bits(k, (N,)))
    fn(key).block_until_ready()                          # compile outside the timing
    return lambda: fn(key).block_until_ready()


@pytest.fixture(scope="module")
def jax_uniform():
    jax = pytest.importorskip("jax")
    key = jax.random.PRNGKey(42)
    fn = jax.jit(lambda k: jax.random.uniform(k, (N,)))
    fn(key).block_until_ready()
    return lambda: fn(key).block_until_ready()


# --- 2**24 uint32 random words ------------------------------------------------------------

@pytest.mark.benchmark(group="bits uint32 x 2**24")
def test_bits_nx(benchmark):
    key = nxr.PRNGKey(42)
    out = benchmark(nxr.bits, key, (N,))
    assert out.shape == (N,) and out.dtype == np.uint32


@pytest.mark.benchmark(group="bits uint32 x 2**24")
def test_bits_numpy_philox_random_raw_2_24(benchmark):
    # As asked: 2**24 raw Philox outputs (each a uint64, so twice the bits of the others).
    bitgen = np.random.Generator(np.random.Philox(42)).bit_generator
    out = benchmark(bitgen.random_raw, N)
    assert out.shape == (N,)


@pytest.mark.benchmark(group="bits uint32 x 2**24")
def test_bits_numpy_philox_same_bits(benchmark):
    # The same number of bits as 2**24 uint32: 2**23 raw uint64 Philox outputs.
    bitgen = np.random.Generator(np.random.Philox(42)).bit_generator
    out = benchmark(bitgen.random_raw, N // 2)
    assert out.nbytes == 4 * N


@pytest.mark.benchmark(group="bits uint32 x 2**24")
def test_bits_jax_jit(benchmark, jax_bits):
    benchmark(jax_bits)


# --- 2**24 float32 uniforms ---------------------------------------------------------------

@pytest.mark.benchmark(group="uniform float32 x 2**24")
def test_uniform_nx(benchmark):
    key = nxr.PRNGKey(42)
    out = benchmark(nxr.uniform, key, (N,))
    assert out.dtype == np.float32


@pytest.mark.benchmark(group="uniform float32 x 2**24")
def test_uniform_numpy_philox(benchmark):
    gen = np.random.Generator(np.random.Philox(42))
    out = benchmark(gen.random, N, np.float32)
    assert out.dtype == np.float32


@pytest.mark.benchmark(group="uniform float32 x 2**24")
def test_uniform_jax_jit(benchmark, jax_uniform):
    benchmark(jax_uniform)
