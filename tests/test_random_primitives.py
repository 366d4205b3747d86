"""The primitives that draw nx.random samples of traced keys: ``threefry_bits`` and
``threefry_sample``.

Under jit (and vmap inside jit) a key is traced, and the samplers bind these primitives, whose
implementation is the eager samplers' own kernels: the draws must equal the eager ones bit for
bit (eager is pinned to JAX 0.10.2 by tests/test_random.py and tests/test_trust_random.py), for
one key and for a batch of keys, with no derivative in the key and the derivatives in the
parameters unchanged.
"""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune import random as nxr
from nx_rune.compiler.abstract import ABSTRACT_RULES
from nx_rune.compiler.ir import AbstractValue
from nx_rune.primitives import bind

# the eager references with overflowing or NaN bounds warn as NumPy does
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

K = nxr.key(7)
U32 = np.dtype(np.uint32)
BIG = 2**20 + 3          # odd, past the kernels' threading threshold and chunk sizes


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


# -- abstract evaluation ------------------------------------------------------------------------

@pytest.mark.parametrize("key_shape", [(2,), (5, 2), (3, 4, 2)])
def test_abstract_shapes(key_shape):
    key = AbstractValue(key_shape, U32)
    batch = key_shape[:-1]
    out = ABSTRACT_RULES[P.threefry_bits_p]([key], nbits=16, shape=(3, 0, 2))
    assert out.shape == batch + (3, 0, 2) and out.dtype == np.uint16
    out = ABSTRACT_RULES[P.threefry_sample_p]([key], dist="normal", shape=(4,),
                                              dtype=np.dtype(np.complex64), params=())
    assert out.shape == batch + (4,) and out.dtype == np.complex64


@pytest.mark.parametrize("dtype, shape", [(np.int32, (2,)), (U32, (3,)), (U32, ())])
def test_abstract_rejects_non_keys(dtype, shape):
    with pytest.raises(TypeError, match="key must be a uint32 array of shape"):
        ABSTRACT_RULES[P.threefry_bits_p]([AbstractValue(shape, dtype)], nbits=32, shape=(2,))


def test_jit_binds_one_equation_without_counter_constants():
    traced = nx.make_jaxpr(lambda k: nxr.normal(k, (BIG,)))(K)
    assert [e.prim for e in traced.eqns] == [P.threefry_sample_p]
    assert not traced.captured
    traced = nx.make_jaxpr(lambda k: nxr.bits(k, (BIG,)))(K)
    assert [e.prim for e in traced.eqns] == [P.threefry_bits_p]
    assert not traced.captured


# -- the implementations: errors and values --------------------------------------------------------

def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="nbits must be"):
        bind(P.threefry_bits_p, K, nbits=12, shape=(3,))
    with pytest.raises(ValueError, match="dist must be one of"):
        bind(P.threefry_sample_p, K, dist="beta", shape=(3,), dtype=np.dtype(np.float32),
             params=())
    with pytest.raises(ValueError, match="params of uniform"):
        bind(P.threefry_sample_p, K, dist="uniform", shape=(3,), dtype=np.dtype(np.float32),
             params=(0.0,))
    with pytest.raises(TypeError, match="key must be a uint32 array"):
        bind(P.threefry_bits_p, nx.asarray(np.array([1, 2], np.int32)), nbits=32, shape=(3,))
    with pytest.raises(TypeError, match="key must be a uint32 array"):
        bind(P.threefry_sample_p, nx.asarray(np.zeros((2, 3), np.uint32)), dist="normal",
             shape=(3,), dtype=np.dtype(np.float32), params=())


SAMPLERS = {
    "bits8": lambda k, n: nxr.bits(k, (n,), np.uint8),
    "bits16": lambda k, n: nxr.bits(k, (n,), np.uint16),
    "bits32": lambda k, n: nxr.bits(k, (n,), np.uint32),
    "bits64": lambda k, n: nxr.bits(k, (n,), np.uint64),
    "uniform16": lambda k, n: nxr.uniform(k, (n,), np.float16, -2.0, 3.0),
    "uniform32": lambda k, n: nxr.uniform(k, (n,), np.float32),
    "uniform32_range": lambda k, n: nxr.uniform(k, (n,), np.float32, -2.5, 3.0),
    "uniform32_huge": lambda k, n: nxr.uniform(k, (n,), np.float32, -3e38, 3e38),
    "uniform32_negzero": lambda k, n: nxr.uniform(k, (n,), np.float32, -0.0, 1e-30),
    "uniform32_nan": lambda k, n: nxr.uniform(k, (n,), np.float32, 0.0, np.nan),
    "uniform64": lambda k, n: nxr.uniform(k, (n,), np.float64, 1.0, 1.5),
    "normal32": lambda k, n: nxr.normal(k, (n,), np.float32),
    "normal64": lambda k, n: nxr.normal(k, (n,), np.float64),
    "normal16": lambda k, n: nxr.normal(k, (n,), np.float16),
    "normal_c64": lambda k, n: nxr.normal(k, (n,), np.complex64),
    "truncated32": lambda k, n: nxr.truncated_normal(k, -1.0, 2.0, (n,), np.float32),
    "truncated32_tail": lambda k, n: nxr.truncated_normal(k, 3.0, 9.0, (n,), np.float32),
    "truncated32_inf": lambda k, n: nxr.truncated_normal(k, -np.inf, np.inf, (n,)),
    "truncated32_empty": lambda k, n: nxr.truncated_normal(k, 2.0, -1.0, (n,)),
    "uniform32_inf": lambda k, n: nxr.uniform(k, (n,), np.float32, 0.0, np.inf),
    "truncated64": lambda k, n: nxr.truncated_normal(k, -0.5, 0.25, (n,), np.float64),
    "gumbel32": lambda k, n: nxr.gumbel(k, (n,), np.float32),
    "gumbel64": lambda k, n: nxr.gumbel(k, (n,), np.float64),
    "bernoulli": lambda k, n: nxr.bernoulli(k, 0.3, (n,)),
    "randint": lambda k, n: nxr.randint(k, (n,), -7, 1000),
    # array parameters: the primitives draw the unit floats or bits, the rest in nx operations
    "bernoulli_array": lambda k, n: nxr.bernoulli(k, np.linspace(0, 1, n, dtype=np.float32)),
    "truncated_array": lambda k, n: nxr.truncated_normal(
        k, np.linspace(-2, 1, n, dtype=np.float32), 2.0, None),
    "uniform_array": lambda k, n: nxr.uniform(k, (n,), np.float64,
                                              np.linspace(-2, 1, n), 1.5),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_equals_eager_bit_for_bit_on_big_draws(name):
    f = SAMPLERS[name]
    _same_bits(nx.jit(lambda k: f(k, BIG))(K), f(K, BIG))


WRAPS = {"jit(vmap)": lambda g: nx.jit(nx.vmap(g)), "vmap": nx.vmap}


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("n", [1, 32, 37, 3000, 5000])
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_vmap_over_keys_equals_eager_key_by_key(name, n, wrap):
    # the streams of all keys from one kernel call (float32, bits), or of groups of keys
    # (float16; float64 up to 32 values per key: n = 1, 32), float64 past that (37) and complex
    # key by key; 3000 and 5000 values per key: groups of 2 and 1 keys for float16.  vmap
    # without jit: only the key batched, the batch goes to the primitives too
    f = SAMPLERS[name]
    keys = nxr.split(nxr.key(3), 6)
    want = np.stack([np.asarray(f(keys[i], n)) for i in range(6)])
    _same_bits(WRAPS[wrap](lambda k: f(k, n))(keys), want)


@pytest.mark.parametrize("wrap", [nx.jit, lambda g: g], ids=["jit", "eager"])
def test_nested_vmap_and_key_axis(wrap):
    keys = nx.reshape(nxr.split(K, 12), (3, 4, 2))
    f = SAMPLERS["normal32"]
    want = np.stack([np.stack([np.asarray(f(keys[i, j], 9)) for j in range(4)])
                     for i in range(3)])
    _same_bits(wrap(nx.vmap(nx.vmap(lambda k: f(k, 9))))(keys), want)
    # keys stacked along axis 1: in_axes=1
    _same_bits(wrap(nx.vmap(lambda k: f(k, 9), in_axes=1))(nx.moveaxis(keys[0], 0, 1)),
               want[0])
    # uniform with array bounds: the range applied outside the primitive, per example
    lo = np.linspace(-1, 0, 9).astype(np.float32)
    want = np.stack([np.asarray(nxr.uniform(keys[0, j], (9,), np.float32, lo, 2.0))
                     for j in range(4)])
    _same_bits(wrap(nx.vmap(lambda k: nxr.uniform(k, (9,), np.float32, lo, 2.0)))(keys[0]),
               want)
    # a primitive given a batch of keys directly
    got = bind(P.threefry_sample_p, keys, dist="gumbel", shape=(2, 5),
               dtype=np.dtype(np.float64), params=())
    assert got.shape == (3, 4, 2, 5)
    _same_bits(got[2, 1], nxr.gumbel(keys[2, 1], (2, 5), np.float64))


def test_empty_batch_and_empty_draws():
    keys = nx.asarray(np.zeros((0, 2), np.uint32))
    assert nx.jit(nx.vmap(lambda k: nxr.normal(k, (3,))))(keys).shape == (0, 3)
    assert nx.jit(nx.vmap(lambda k: nxr.bits(k, (0,))))(nxr.split(K, 4)).shape == (4, 0)


# -- derivatives: none in the key, the parameters' unchanged ---------------------------------------

def test_no_derivative_through_the_key_and_bounds_still_differentiable():
    # d/dlo of uniform(lo, hi) is 1 - u, d/dhi is u (u the unit uniform, as JAX)
    u = np.asarray(nxr.uniform(K, (1000,), np.float32)).astype(np.float64)

    def total(k, lo, hi):
        return nx.sum(nxr.uniform(k, (1000,), np.float32, lo, hi))
    glo, ghi = nx.jit(nx.grad(total, argnums=(1, 2)))(K, np.float32(-1.0), np.float32(2.0))
    np.testing.assert_allclose(np.asarray(glo), np.sum(1 - u), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ghi), np.sum(u), rtol=1e-5)
    # the sample is a constant of the traced key: a parameter outside it still has its
    # derivative (mu + sigma * z)
    z = np.asarray(nxr.normal(K, (100,), np.float32)).astype(np.float64)
    g = nx.jit(nx.grad(lambda s, k: nx.sum(s * nxr.normal(k, (100,), np.float32))))(
        np.float32(2.0), K)
    np.testing.assert_allclose(np.asarray(g), z.sum(), rtol=1e-5)


def test_x64_mode_defaults_under_jit_and_vmap():
    # x64 mode: 64-bit default dtypes (bits uint64, floats float64) through the primitives
    from nx_rune.config import enable_x64
    with enable_x64():
        k = nxr.key(11)
        keys = nxr.split(k, 5)
        for f in (lambda k: nxr.bits(k, (1000,)), lambda k: nxr.normal(k, (1000,)),
                  lambda k: nxr.uniform(k, (1000,), minval=-3.0, maxval=0.5),
                  lambda k: nxr.truncated_normal(k, -2.0, 1.0, (1000,))):
            want = f(k)
            assert np.asarray(want).itemsize == 8
            _same_bits(nx.jit(f)(k), want)
            _same_bits(nx.jit(nx.vmap(f))(keys), np.stack([np.asarray(f(keys[i]))
                                                            for i in range(5)]))
