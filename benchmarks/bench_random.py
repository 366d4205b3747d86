"""Random-bit and sampler throughput: nx.random vs NumPy's Philox vs jax.random under jit.

Run: ``python -m pytest benchmarks/bench_random.py --benchmark-group-by=group``.
Every case in a group makes the same number of values, so the group's table reads as ratios.
The jitted JAX functions are compiled once, outside the timing.  nx.random's uniform, normal,
truncated_normal and gumbel are one fused kernel pass (counter -> bits -> float -> transform),
threaded like the bits (``nx_rune._kernels.threefry.set_num_threads``).
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


def _jitted(sampler, dtype="float32"):
    jax = pytest.importorskip("jax")
    key = jax.random.PRNGKey(42)
    fn = jax.jit(lambda k: sampler(jax)(k, dtype))
    fn(key).block_until_ready()                          # compile outside the timing
    return lambda: fn(key).block_until_ready()


@pytest.fixture(scope="module")
def jax_uniform():
    return _jitted(lambda jax: lambda k, dt: jax.random.uniform(k, (N,)))


@pytest.fixture(scope="module")
def jax_normal():
    return _jitted(lambda jax: lambda k, dt: jax.random.normal(k, (N,)))


@pytest.fixture(scope="module")
def jax_gumbel():
    return _jitted(lambda jax: lambda k, dt: jax.random.gumbel(k, (N,)))


@pytest.fixture(scope="module")
def jax_truncated_normal():
    return _jitted(lambda jax: lambda k, dt: jax.random.truncated_normal(k, -1.0, 2.0, (N,)))


@pytest.fixture(scope="module")
def jax_normal_f64():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        key = jax.random.PRNGKey(42)
        fn = jax.jit(lambda k: jax.random.normal(k, (N,), jax.numpy.float64))
        fn(key).block_until_ready()

    def run():
        with jax.enable_x64(True):
            return fn(key).block_until_ready()
    return run


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


# --- 2**24 float32 normals (inverse CDF: JAX's erfinv polynomial) -------------------------------

@pytest.mark.benchmark(group="normal float32 x 2**24")
def test_normal_nx(benchmark):
    key = nxr.PRNGKey(42)
    out = benchmark(nxr.normal, key, (N,))
    assert out.dtype == np.float32


@pytest.mark.benchmark(group="normal float32 x 2**24")
def test_normal_numpy_philox(benchmark):
    # NumPy's ziggurat: another algorithm, for scale
    gen = np.random.Generator(np.random.Philox(42))
    out = benchmark(gen.standard_normal, N, np.float32)
    assert out.dtype == np.float32


@pytest.mark.benchmark(group="normal float32 x 2**24")
def test_normal_jax_jit(benchmark, jax_normal):
    benchmark(jax_normal)


@pytest.mark.benchmark(group="normal float64 x 2**24")
def test_normal_f64_nx(benchmark):
    key = nxr.PRNGKey(42)
    out = benchmark(nxr.normal, key, (N,), np.float64)
    assert out.dtype == np.float64


@pytest.mark.benchmark(group="normal float64 x 2**24")
def test_normal_f64_numpy_philox(benchmark):
    gen = np.random.Generator(np.random.Philox(42))
    benchmark(gen.standard_normal, N)


@pytest.mark.benchmark(group="normal float64 x 2**24")
def test_normal_f64_jax_jit(benchmark, jax_normal_f64):
    benchmark(jax_normal_f64)


# --- 2**24 float32 Gumbel and truncated normal samples ----------------------------------------

@pytest.mark.benchmark(group="gumbel float32 x 2**24")
def test_gumbel_nx(benchmark):
    key = nxr.PRNGKey(42)
    out = benchmark(nxr.gumbel, key, (N,))
    assert out.dtype == np.float32


@pytest.mark.benchmark(group="gumbel float32 x 2**24")
def test_gumbel_numpy_philox(benchmark):
    gen = np.random.Generator(np.random.Philox(42))
    benchmark(gen.gumbel, size=N)           # float64 only in NumPy


@pytest.mark.benchmark(group="gumbel float32 x 2**24")
def test_gumbel_jax_jit(benchmark, jax_gumbel):
    benchmark(jax_gumbel)


@pytest.mark.benchmark(group="truncated_normal(-1, 2) float32 x 2**24")
def test_truncated_normal_nx(benchmark):
    key = nxr.PRNGKey(42)
    out = benchmark(nxr.truncated_normal, key, -1.0, 2.0, (N,))
    assert out.dtype == np.float32


@pytest.mark.benchmark(group="truncated_normal(-1, 2) float32 x 2**24")
def test_truncated_normal_jax_jit(benchmark, jax_truncated_normal):
    benchmark(jax_truncated_normal)


# --- the samplers inside nx.jit (a traced key: the threefry_bits / threefry_sample primitives) ---

def _nx_jitted(draw):
    import nx_rune as nx
    fn = nx.jit(draw)
    key = nxr.PRNGKey(42)
    out = fn(key)                       # traced and compiled once, outside the timing
    np.testing.assert_array_equal(out.numpy(), draw(key).numpy())   # eager's values, bit for bit
    return fn, key


@pytest.mark.benchmark(group="uniform float32 x 2**24")
def test_uniform_nx_jit(benchmark):
    fn, key = _nx_jitted(lambda k: nxr.uniform(k, (N,)))
    benchmark(fn, key)


@pytest.mark.benchmark(group="normal float32 x 2**24")
def test_normal_nx_jit(benchmark):
    fn, key = _nx_jitted(lambda k: nxr.normal(k, (N,)))
    benchmark(fn, key)


@pytest.mark.benchmark(group="truncated_normal(-1, 2) float32 x 2**24")
def test_truncated_normal_nx_jit(benchmark):
    fn, key = _nx_jitted(lambda k: nxr.truncated_normal(k, -1.0, 2.0, (N,)))
    benchmark(fn, key)


# -- the rejection samplers (JAX's loops, element for element) against jax.jit of the same call

REJECTION = {
    "gamma": (lambda r, k: r.gamma(k, 1.3, (10_000,)), "jax"),
    "poisson": (lambda r, k: r.poisson(k, 30.0, (10_000,)), "jax"),
    "binomial": (lambda r, k: r.binomial(k, 100.0, 0.3, (10_000,)), "jax"),
}


@pytest.mark.parametrize("name", sorted(REJECTION))
def test_rejection_sampler_nx(benchmark, name):
    draw, _ = REJECTION[name]
    key = nxr.PRNGKey(0)
    benchmark.group = f"random_{name}_1e4"
    benchmark(lambda: np.asarray(draw(nxr, key)))


@pytest.mark.parametrize("name", sorted(REJECTION))
def test_rejection_sampler_jax_jit(benchmark, name):
    jax = pytest.importorskip("jax")
    draw, _ = REJECTION[name]
    f = jax.jit(lambda k: draw(jax.random, k))
    key = jax.random.PRNGKey(0)
    f(key).block_until_ready()
    benchmark.group = f"random_{name}_1e4"
    benchmark(lambda: f(key).block_until_ready())
