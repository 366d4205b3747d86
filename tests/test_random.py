"""nx.random: JAX's streams bit for bit, shapes/dtypes, statistics, errors.

Golden values below were produced by JAX 0.10.2 (jax.random, default configuration; the x64
ones under ``jax.enable_x64(True)``), not by nx_rune, so they check bit-exactness without JAX.
The ``*_jax`` tests compare against an installed JAX and skip when it is absent.
"""
import hashlib
import math

import numpy as np
import pytest

import nx_rune  # noqa: F401  (registers the primitive implementations)
from nx_rune import random as nxr
from nx_rune.tensor import Tensor

K42 = nxr.PRNGKey(42)


def arr(t):
    assert isinstance(t, Tensor), f"expected a Tensor, got {type(t).__name__}"
    return t.numpy()


# --- golden values from JAX 0.10.2 -----------------------------------------------------------

LOGITS = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 1.5, -3.0, 0.25], [0.0, 0.0, 0.0, 0.0]],
                  np.float32)

EXACT = {
    "PRNGKey(42)": (lambda: nxr.PRNGKey(42), "uint32", (2,), [0, 42]),
    "key(42)": (lambda: nxr.key(42), "uint32", (2,), [0, 42]),
    "PRNGKey(-1)": (lambda: nxr.PRNGKey(-1), "uint32", (2,), [0, 4294967295]),
    "PRNGKey(2**40+5)": (lambda: nxr.PRNGKey(2**40 + 5), "uint32", (2,), [0, 5]),
    "bits(PRNGKey(0))": (lambda: nxr.bits(nxr.PRNGKey(0)), "uint32", (), [4070199207]),
    "split": (lambda: nxr.split(K42), "uint32", (2, 2),
              [1832780943, 270669613, 64467757, 2916123636]),
    "split3": (lambda: nxr.split(K42, 3), "uint32", (3, 2),
               [1832780943, 270669613, 64467757, 2916123636, 2465931498, 255383827]),
    "fold_in7": (lambda: nxr.fold_in(K42, 7), "uint32", (2,), [2547012911, 1371500959]),
    "bits4": (lambda: nxr.bits(K42, (4,)), "uint32", (4,),
              [2098992034, 2919706841, 2646866425, 2409546199]),
    "bits_u8": (lambda: nxr.bits(K42, (6,), np.uint8), "uint8", (6,),
                [162, 217, 249, 215, 21, 216]),
    "bits_u16": (lambda: nxr.bits(K42, (4,), np.uint16), "uint16", (4,),
                 [5026, 12505, 63993, 49623]),
    "bits_u64": (lambda: nxr.bits(K42, (3,), np.uint64), "uint64", (3,),
                 [7871734211187709741, 276886910877598708, 10591095138341673235]),
    "uniform4": (lambda: nxr.uniform(K42, (4,)), "float32", (4,),
                 [0.48870956897735596, 0.6797971725463867, 0.6162714958190918,
                  0.5610160827636719]),
    "uniform_m2_3": (lambda: nxr.uniform(K42, (6,), minval=-2.0, maxval=3.0), "float32", (6,),
                     [0.4435478448867798, 1.3989858627319336, 1.081357479095459,
                      0.8050804138183594, 0.2532230615615845, 0.9293292760848999]),
    "uniform_f64": (lambda: nxr.uniform(K42, (3,), np.float64), "float64", (3,),
                    [0.4267275666499091, 0.015010069515314584, 0.5741444178995352]),
    "uniform_f64_m2_3": (lambda: nxr.uniform(K42, (3,), np.float64, -2.0, 3.0), "float64", (3,),
                         [0.13363783324954537, -1.924949652423427, 0.8707220894976759]),
    "randint": (lambda: nxr.randint(K42, (8,), 0, 10), "int32", (8,), [4, 4, 1, 9, 9, 9, 7, 7]),
    "randint_big": (lambda: nxr.randint(K42, (4,), -5, 1000003), "int32", (4,),
                    [269271, 838293, 364882, 979396]),
    "randint_u8": (lambda: nxr.randint(K42, (6,), 0, 256, np.uint8), "uint8", (6,),
                   [196, 18, 183, 193, 141, 107]),
    "randint_i64": (lambda: nxr.randint(K42, (4,), -5, 10**12, np.int64), "int64", (4,),
                    [463982253477, 604929009943, 848939357151, 550033836784]),
    "bernoulli": (lambda: nxr.bernoulli(K42, 0.3, (10,)), "bool", (10,),
                  [False] * 6 + [True] + [False] * 3),
    "perm10": (lambda: nxr.permutation(K42, 10), "int32", (10,), [7, 4, 2, 5, 3, 6, 8, 9, 0, 1]),
    "perm2000_head": (lambda: nxr.permutation(K42, 2000)[:8], "int32", (8,),
                      [1474, 815, 539, 874, 1693, 84, 995, 1191]),
    "choice": (lambda: nxr.choice(K42, 10, (5,)), "int32", (5,), [4, 4, 1, 9, 9]),
    "choice_norep": (lambda: nxr.choice(K42, 10, (5,), replace=False), "int32", (5,),
                     [7, 4, 2, 5, 3]),
    "choice_p": (lambda: nxr.choice(K42, 4, (8,), p=np.array([0.1, 0.2, 0.3, 0.4], np.float32)),
                 "int32", (8,), [2, 2, 2, 2, 2, 2, 3, 1]),
    "categorical": (lambda: nxr.categorical(K42, LOGITS), "int32", (3,), [2, 1, 3]),
    "categorical_shape": (lambda: nxr.categorical(K42, LOGITS, shape=(2, 3)), "int32", (2, 3),
                          [2, 1, 3, 0, 0, 3]),
    "threefry_2x32": (lambda: nxr.threefry_2x32(K42, np.arange(5, dtype=np.uint32)), "uint32",
                      (5,), [3134548294, 3733159049, 843694964, 894150801, 801545058]),
}

# float64 normal goes through XLA's own float64 log1p and fused erfinv Horner steps in JAX,
# which nx_rune reproduces: bit-exact too.
EXACT["normal_f64"] = (lambda: nxr.normal(K42, (3,), np.float64), "float64", (3,),
                       [-0.18471174528191162, -2.169824560397754, 0.18693555179382582])

# float32 normal, truncated_normal and gumbel use XLA:CPU's own float32 log1p, log and erf, which
# nx_rune reproduces exactly: they are bit-exact.
EXACT.update({
    "normal4": (lambda: nxr.normal(K42, (4,)), "float32", (4,),
                [-0.02830461598932743, 0.4671318531036377, 0.2957029640674591,
                 0.15354591608047485]),
    "gumbel4": (lambda: nxr.gumbel(K42, (4,)), "float32", (4,),
                [0.3340933918952942, 0.952019453048706, 0.7255305647850037,
                 0.5481715202331543]),
    "truncnorm": (lambda: nxr.truncated_normal(K42, -1.0, 2.0, (4,)), "float32", (4,),
                  [0.14770005643367767, 0.5684449076652527, 0.42102551460266113,
                   0.29997000098228455]),
})

# Large float32 draws of JAX 0.10.2: the sha256 of their little-endian bytes, and elements where
# a correctly rounded log1p/log/erf (nx_rune before) was an ulp away from JAX's.
GOLDEN_DRAWS = {
    "normal(42, (100000,))": (
        lambda: nxr.normal(K42, (100000,)), (100000,),
        "9f08dc3faf6cd365ab304aba9ffc46354fe4958d006b3492b0b52ad4bfda2476",
        {109: -1.0508149862289429, 129: -1.3707785606384277, 260: -1.027567982673645,
         291: -1.2649041414260864}),
    "normal(7, (3, 777))": (
        lambda: nxr.normal(nxr.PRNGKey(7), (3, 777)), (3, 777),
        "7a8b7f2d28c0d8d940a0417a1cc8f1d9680fb39f3987d1e01b2750f5f89c578b",
        {112: -0.7010853886604309, 180: 0.7654508948326111, 498: 0.6369810700416565,
         624: 1.1079188585281372}),
    "gumbel(42, (100000,))": (
        lambda: nxr.gumbel(K42, (100000,)), (100000,),
        "ad5d5be933bdc1317a8659762cbf18df040eacbd6491ae1127b2ce1208d48067",
        {1: 0.952019453048706, 4: 0.2268049567937851, 9: 1.6088451147079468,
         10: -0.04779018834233284}),
    "truncated_normal(42, -1.5, 2.0, (100000,))": (
        lambda: nxr.truncated_normal(K42, -1.5, 2.0, (100000,)), (100000,),
        "cd8023e29cc7f8b1b70d134a06eddbeb54456076588825e32efbed123a3da702",
        {1: 0.4837646782398224, 3: 0.1957068294286728, 4: -0.057450201362371445,
         8: 0.5335384011268616}),
    "exponential(42, (100000,))": (
        lambda: nxr.exponential(K42, (100000,)), (100000,),
        "4b6f54391ee01bba9b60874227cd74a0e1c851c5b0a10d2b859a2afca17688c3",
        {11: 2.0621519088745117, 12: 2.602088451385498, 15: 1.7063994407653809}),
    "laplace(42, (100000,))": (
        lambda: nxr.laplace(K42, (100000,)), (100000,),
        "f9eb2133aa84ee41c031679c7bf35dced38572ecc90dcd9f8de8c3e0e4b34b8e",
        {27: 0.5228817462921143, 32: 0.48539888858795166, 46: -0.4229480028152466}),
    "logistic(42, (100000,))": (
        lambda: nxr.logistic(K42, (100000,)), (100000,),
        "ab8128cc5d676e87ba7c3c78f39bde402169ffd793367e7beec909ba2be474ba",
        {11: 1.9261260032653809, 12: 2.5250792503356934, 15: 1.506095290184021}),
}

# XLA:CPU's float32 log1p and log: jax.jit(jnp.log1p) and jax.jit(jnp.log) of JAX 0.10.2 on
# these inputs (float32 bit patterns), padded with ones to 16 elements (XLA computes the last
# few elements of a short array whose length is not a multiple of 8 with the C library's logf
# instead; the samplers' fused loops never do, checked for sizes 1 to 40 and odd large ones):
# the first ones are an ulp from the correctly rounded value, then edge values (log1p: -1, -0,
# 0.5, 3, inf, -2, 1e-30; log: 1, 0, inf, -1, a denormal (flushed: -inf), sqrt(1/2), 2).
XLA_LOG1P = ([3204341083, 3202455595, 3201341354, 3196107558, 3201569239, 3201569214,
              3212836864, 2147483648, 1056964608, 1077936128, 2139095040, 3221225472, 228737632],
             [3207581897, 3205805796, 3204838286, 3197387990, 3205031674, 3205031654,
              4286578688, 2147483648, 1053792543, 1068593688, 2139095040, 4294967295, 228737632])
XLA_LOG = ([1042188137, 1074501273, 1060044705, 1071582251, 1060969848, 1076581845, 1065353216,
            0, 2139095040, 3212836864, 71362, 1060439283, 1073741824],
           [3220097494, 1061659110, 3200435137, 1057893304, 3197832046, 1065097184, 0,
            4286578688, 2139095040, 4294967295, 4286578688, 3199300121, 1060205080])


@pytest.mark.parametrize("name", sorted(EXACT))
def test_golden_exact(name):
    fn, dtype, shape, values = EXACT[name]
    out = arr(fn())
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    assert out.ravel().tolist() == np.array(values, dtype=dtype).tolist()


def _check_golden_draw(name):
    fn, shape, digest, elements = GOLDEN_DRAWS[name]
    out = arr(fn())
    assert out.dtype == np.float32 and out.shape == shape
    flat = out.ravel()
    for i, v in elements.items():
        assert flat[i] == np.float32(v), (name, i, flat[i], v)
    assert hashlib.sha256(out.astype("<f4").tobytes()).hexdigest() == digest, name


@pytest.mark.parametrize("name", sorted(GOLDEN_DRAWS))
def test_golden_float32_draws_bit_exact(name):
    _check_golden_draw(name)


@pytest.mark.parametrize("name", [n for n in sorted(GOLDEN_DRAWS)
                                  if n.startswith(("normal", "gumbel", "truncated"))])
def test_golden_float32_draws_bit_exact_by_the_reference(name, monkeypatch):
    # the NumPy reference (what the fused kernel falls back to) gives the same draws
    def none_listed(*args, **kwargs):
        out, _ = real(*args, **kwargs)
        return out * 0, None
    real = nxr._K.sample_f32
    monkeypatch.setattr(nxr._K, "sample_f32", none_listed)
    _check_golden_draw(name)


def _same_floats(got, want_bits):
    got = np.asarray(got, np.float32)
    want = np.array(want_bits, np.uint32).view(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_xla_float32_log1p_and_log_as_jax():
    from nx_rune.backend import random as br
    from nx_rune.random import _xla_math as xm
    for (x, y), kernel, ref, ops in [
            (XLA_LOG1P, lambda a: KT.xla_log_f32(a, True), br._xla_log1p32, xm.xla_log1p32),
            (XLA_LOG, KT.xla_log_f32, br._xla_log32, xm.xla_log32)]:
        x = np.array(x, np.uint32).view(np.float32)
        with np.errstate(invalid="ignore", divide="ignore"):
            _same_floats(kernel(x), y)                          # the fused kernels' own
            _same_floats(ref(x), y)                             # the NumPy reference
            _same_floats(arr(ops(nx_rune.asarray(x))), y)       # the traced chains' ...
            _same_floats(arr(nx_rune.jit(ops)(nx_rune.asarray(x))), y)  # ... under jit
        _same_floats(kernel(x.reshape(13, 1)[::2]).ravel(), np.array(y)[::2])   # strided, 2-D
        assert kernel(np.array(x[0])).shape == ()


def test_xla_log_kernel_rejects_other_inputs():
    for bad in (np.ones(3), [1.0], np.float32(1)):
        with pytest.raises(TypeError, match="x must be a float32 NumPy array"):
            KT.xla_log_f32(bad)


# --- bit-exact comparisons with an installed JAX -------------------------------------------------

def _jax():
    jax = pytest.importorskip("jax")
    import jax.extend.random  # noqa: F401, F811
    return jax


SEEDS = [0, 1, 42, 2**31 - 1, 987654321]


def _jax_cases(jax):
    jr, jnp = jax.random, jax.numpy
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    lg = np.random.default_rng(7).normal(size=(5, 7)).astype(np.float32)
    return {
        "key": (lambda k, s: nxr.key(s), lambda k, s: jr.PRNGKey(s)),
        "split": (lambda k, s: nxr.split(k, 5), lambda k, s: jr.split(k, 5)),
        "split_tuple": (lambda k, s: nxr.split(k, (2, 3)), lambda k, s: jr.split(k, (2, 3))),
        "fold_in": (lambda k, s: nxr.fold_in(k, 12345), lambda k, s: jr.fold_in(k, 12345)),
        "fold_in_neg_np": (lambda k, s: nxr.fold_in(k, np.int64(-3)),
                           lambda k, s: jr.fold_in(k, np.int64(-3))),
        "bits32": (lambda k, s: nxr.bits(k, (3, 1001)), lambda k, s: jr.bits(k, (3, 1001))),
        "bits8": (lambda k, s: nxr.bits(k, (999,), np.uint8),
                  lambda k, s: jr.bits(k, (999,), jnp.uint8)),
        "bits16": (lambda k, s: nxr.bits(k, (999,), np.uint16),
                   lambda k, s: jr.bits(k, (999,), jnp.uint16)),
        "uniform": (lambda k, s: nxr.uniform(k, (10000,)), lambda k, s: jr.uniform(k, (10000,))),
        "uniform_range": (lambda k, s: nxr.uniform(k, (50000,), minval=-2.0, maxval=3.0),
                          lambda k, s: jr.uniform(k, (50000,), minval=-2.0, maxval=3.0)),
        "uniform_array_range": (
            lambda k, s: nxr.uniform(k, (3, 4), minval=np.arange(4, dtype=np.float32),
                                     maxval=10.0),
            lambda k, s: jr.uniform(k, (3, 4), minval=jnp.arange(4.0), maxval=10.0)),
        "uniform_f16": (lambda k, s: nxr.uniform(k, (5000,), np.float16, -2.0, 3.0),
                        lambda k, s: jr.uniform(k, (5000,), jnp.float16, -2.0, 3.0)),
        "randint": (lambda k, s: nxr.randint(k, (10000,), -5, 1000003),
                    lambda k, s: jr.randint(k, (10000,), -5, 1000003)),
        "randint_full": (lambda k, s: nxr.randint(k, (1000,), -2**31, 2**31 - 1),
                         lambda k, s: jr.randint(k, (1000,), -2**31, 2**31 - 1)),
        "randint_empty_range": (lambda k, s: nxr.randint(k, (10,), 5, 5),
                                lambda k, s: jr.randint(k, (10,), 5, 5)),
        "randint_int8": (lambda k, s: nxr.randint(k, (1000,), -200, 200, np.int8),
                         lambda k, s: jr.randint(k, (1000,), -200, 200, jnp.int8)),
        "randint_uint32": (
            lambda k, s: nxr.randint(k, (1000,), 0, np.uint32(2**32 - 1), np.uint32),
            lambda k, s: jr.randint(k, (1000,), 0, np.uint32(2**32 - 1), jnp.uint32)),
        "randint_array": (
            lambda k, s: nxr.randint(k, (2, 3), np.array([0, 10, 100], np.int32), 1000),
            lambda k, s: jr.randint(k, (2, 3), jnp.array([0, 10, 100]), 1000)),
        "bernoulli": (lambda k, s: nxr.bernoulli(k, 0.3, (1000,)),
                      lambda k, s: jr.bernoulli(k, 0.3, (1000,))),
        "bernoulli_array": (
            lambda k, s: nxr.bernoulli(k, np.linspace(0, 1, 50, dtype=np.float32)),
            lambda k, s: jr.bernoulli(k, jnp.linspace(0, 1, 50))),
        "permutation_1625": (lambda k, s: nxr.permutation(k, 1625),
                             lambda k, s: jr.permutation(k, 1625)),
        "permutation_1626": (lambda k, s: nxr.permutation(k, 1626),
                             lambda k, s: jr.permutation(k, 1626)),
        "permutation_rows": (lambda k, s: nxr.permutation(k, x),
                             lambda k, s: jr.permutation(k, x)),
        "permutation_axis1": (lambda k, s: nxr.permutation(k, x, 1),
                              lambda k, s: jr.permutation(k, x, 1)),
        "permutation_independent": (lambda k, s: nxr.permutation(k, x, 1, independent=True),
                                    lambda k, s: jr.permutation(k, x, 1, independent=True)),
        "choice_axis1": (lambda k, s: nxr.choice(k, x, (2, 2), axis=1),
                         lambda k, s: jr.choice(k, x, (2, 2), axis=1)),
        "choice_norep": (lambda k, s: nxr.choice(k, 10, (5,), replace=False),
                         lambda k, s: jr.choice(k, 10, (5,), replace=False)),
        "choice_p": (lambda k, s: nxr.choice(k, 4, (1000,), p=p),
                     lambda k, s: jr.choice(k, 4, (1000,), p=p)),
        "choice_p_norep": (lambda k, s: nxr.choice(k, 4, (3,), replace=False, p=p),
                           lambda k, s: jr.choice(k, 4, (3,), replace=False, p=p)),
        "categorical": (lambda k, s: nxr.categorical(k, lg), lambda k, s: jr.categorical(k, lg)),
        "categorical_axis0_shape": (
            lambda k, s: nxr.categorical(k, lg, axis=0, shape=(2, 7)),
            lambda k, s: jr.categorical(k, lg, axis=0, shape=(2, 7))),
        "threefry_2x32": (
            lambda k, s: nxr.threefry_2x32(k, np.arange(7, dtype=np.uint32) * 12345),
            lambda k, s: jax.extend.random.threefry_2x32(
                k, jnp.arange(7, dtype=jnp.uint32) * 12345)),
    }


def _assert_same(ours, theirs):
    ours, theirs = arr(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)


@pytest.mark.peers
@pytest.mark.parametrize("seed", SEEDS)
def test_bit_exact_with_jax(seed):
    jax = _jax()
    nk, jk = nxr.PRNGKey(seed), jax.random.PRNGKey(seed)
    for name, (ours, theirs) in _jax_cases(jax).items():
        try:
            _assert_same(ours(nk, seed), theirs(jk, seed))
        except AssertionError as e:
            raise AssertionError(f"{name} (seed {seed}) differs from JAX: {e}") from None


@pytest.mark.peers
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_bit_exact_with_jax_x64_dtypes(seed):
    jax = _jax()
    jr, jnp = jax.random, jax.numpy
    nk = nxr.PRNGKey(seed)
    with jax.enable_x64(True):
        jk = jr.PRNGKey(seed)
        pairs = [
            (nxr.bits(nk, (1001,), np.uint64), jr.bits(jk, (1001,), jnp.uint64)),
            (nxr.uniform(nk, (10000,), np.float64), jr.uniform(jk, (10000,), jnp.float64)),
            (nxr.uniform(nk, (50000,), np.float64, -2.0, 3.0),
             jr.uniform(jk, (50000,), jnp.float64, -2.0, 3.0)),
            (nxr.uniform(nk, (50000,), np.float64, 0.1, 0.7),
             jr.uniform(jk, (50000,), jnp.float64, 0.1, 0.7)),
            (nxr.randint(nk, (1000,), -5, 10**12, np.int64),
             jr.randint(jk, (1000,), -5, 10**12, jnp.int64)),
            (nxr.randint(nk, (1000,), -2**63, 2**63 - 1, np.int64),
             jr.randint(jk, (1000,), -2**63, 2**63 - 1, jnp.int64)),
            (nxr.bernoulli(nk, np.float64(0.3), (1000,)),
             jr.bernoulli(jk, np.float64(0.3), (1000,))),
        ]
        for ours, theirs in pairs:
            _assert_same(ours, theirs)


@pytest.mark.peers
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_float32_transcendental_samplers_bit_exact_with_jax(seed):
    # XLA:CPU's own float32 log1p, log and erf, as nx_rune computes them
    jax = _jax()
    jr, jnp = jax.random, jax.numpy
    nk, jk = nxr.PRNGKey(seed), jr.PRNGKey(seed)
    cases = [
        (nxr.normal(nk, (100000,)), jr.normal(jk, (100000,))),
        (nxr.normal(nk, (3, 777)), jr.normal(jk, (3, 777))),
        (nxr.normal(nk, (1000,), np.complex64), jr.normal(jk, (1000,), jnp.complex64)),
        (nxr.gumbel(nk, (100000,)), jr.gumbel(jk, (100000,))),
        (nxr.truncated_normal(nk, -1.0, 2.0, (10000,)),
         jr.truncated_normal(jk, -1.0, 2.0, (10000,))),
        (nxr.truncated_normal(nk, -1.5, 0.25, (10000,)),
         jr.truncated_normal(jk, -1.5, 0.25, (10000,))),
        (nxr.truncated_normal(nk, -np.inf, 0.5, (10000,)),
         jr.truncated_normal(jk, -np.inf, 0.5, (10000,))),
    ]
    for name in ("normal", "gumbel", "exponential", "laplace", "logistic"):
        for shape in [(7,), (13,), (1003,), (100000,)]:
            cases.append((getattr(nxr, name)(nk, shape), getattr(jr, name)(jk, shape)))
    with jax.enable_x64(True):                  # float32 draws under x64 too
        jk = jr.PRNGKey(seed)
        cases += [(nxr.normal(nk, (100000,), np.float32), jr.normal(jk, (100000,), jnp.float32)),
                  (nxr.gumbel(nk, (10000,), np.float32), jr.gumbel(jk, (10000,), jnp.float32))]
        for ours, theirs in cases:
            _assert_same(ours, theirs)


@pytest.mark.peers
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_float64_normal_bit_exact_with_jax(seed):
    jax = _jax()
    jr, jnp = jax.random, jax.numpy
    nk = nxr.PRNGKey(seed)
    with jax.enable_x64(True):
        jk = jr.PRNGKey(seed)
        _assert_same(nxr.normal(nk, (100000,), np.float64), jr.normal(jk, (100000,), jnp.float64))


def test_key_and_prngkey_are_uint32_pairs():
    for k in (nxr.key(7), nxr.PRNGKey(7)):
        assert isinstance(k, Tensor) and k.dtype == np.uint32 and k.shape == (2,)
        assert arr(k).tolist() == [0, 7]


@pytest.mark.parametrize("seed, want", [(np.int64(-1), [0, 0xFFFFFFFF]),
                                        (np.uint32(7), [0, 7]),
                                        (np.array(9, np.int32), [0, 9]),
                                        (2**31 + 99, [0, 2147483747])])
def test_seed_forms(seed, want):
    assert arr(nxr.PRNGKey(seed)).tolist() == want


def test_determinism():
    a = arr(nxr.normal(nxr.PRNGKey(3), (100,)))
    b = arr(nxr.normal(nxr.PRNGKey(3), (100,)))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, arr(nxr.normal(nxr.PRNGKey(4), (100,))))


def test_split_keys_differ_and_equal_fold_in():
    keys = arr(nxr.split(K42, 100))
    assert len({tuple(k) for k in keys.tolist()}) == 100
    assert tuple(arr(K42)) not in {tuple(k) for k in keys.tolist()}
    for i in (0, 1, 57):
        assert keys[i].tolist() == arr(nxr.fold_in(K42, i)).tolist()


def test_split_shapes():
    assert nxr.split(K42).shape == (2, 2)
    assert nxr.split(K42, 1).shape == (1, 2)
    assert nxr.split(K42, (2, 3)).shape == (2, 3, 2)
    assert nxr.split(K42, 0).shape == (0, 2)


def test_subkey_streams_differ():
    k1, k2 = nxr.split(K42)
    assert not np.array_equal(arr(nxr.bits(k1, (8,))), arr(nxr.bits(k2, (8,))))


def test_keys_may_be_numpy_arrays_or_tensors():
    np_key = np.array([0, 42], np.uint32)
    assert np.array_equal(arr(nxr.uniform(np_key, (5,))), arr(nxr.uniform(K42, (5,))))
    assert np.array_equal(arr(nxr.split(np_key)), arr(nxr.split(K42)))


# --- shapes and dtypes --------------------------------------------------------------------------

@pytest.mark.parametrize("fn, dtype", [
    (lambda s: nxr.bits(K42, s), np.uint32),
    (lambda s: nxr.bits(K42, s, np.uint8), np.uint8),
    (lambda s: nxr.bits(K42, s, np.uint64), np.uint64),
    (lambda s: nxr.uniform(K42, s), np.float32),
    (lambda s: nxr.uniform(K42, s, np.float64), np.float64),
    (lambda s: nxr.uniform(K42, s, np.float16), np.float16),
    (lambda s: nxr.normal(K42, s), np.float32),
    (lambda s: nxr.normal(K42, s, np.float64), np.float64),
    (lambda s: nxr.normal(K42, s, np.complex64), np.complex64),
    (lambda s: nxr.truncated_normal(K42, -1.0, 1.0, s), np.float32),
    (lambda s: nxr.randint(K42, s, 0, 5), np.int32),
    (lambda s: nxr.randint(K42, s, 0, 5, np.int64), np.int64),
    (lambda s: nxr.randint(K42, s, 0, 5, np.uint16), np.uint16),
    (lambda s: nxr.bernoulli(K42, 0.5, s), np.bool_),
    (lambda s: nxr.gumbel(K42, s), np.float32),
    (lambda s: nxr.gumbel(K42, s, np.float64), np.float64),
    (lambda s: nxr.choice(K42, 5, s), np.int32),
])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3, 4)])
def test_shape_and_dtype(fn, dtype, shape):
    out = fn(shape)
    assert isinstance(out, Tensor)
    assert out.shape == shape and out.dtype == np.dtype(dtype)


def test_int_shape_means_1d():
    assert nxr.uniform(K42, 5).shape == (5,)


def test_default_shapes():
    assert nxr.bernoulli(K42).shape == ()
    assert nxr.bernoulli(K42, np.full((2, 3), 0.5, np.float32)).shape == (2, 3)
    assert nxr.truncated_normal(K42, np.zeros(3), 1.0, None).shape == (3,)
    assert nxr.categorical(K42, LOGITS).shape == (3,)
    assert nxr.categorical(K42, LOGITS, axis=0).shape == (4,)
    assert nxr.categorical(K42, LOGITS, shape=(5, 3)).shape == (5, 3)


def test_permutation_and_choice_shapes():
    x = np.arange(12).reshape(3, 4)
    assert nxr.permutation(K42, x).shape == (3, 4)
    assert nxr.permutation(K42, x, axis=1).shape == (3, 4)
    assert nxr.choice(K42, x, (5,), axis=1).shape == (3, 5)
    assert nxr.choice(K42, 10, (0,)).shape == (0,)
    assert sorted(arr(nxr.permutation(K42, x, axis=1))[0].tolist()) == [0, 1, 2, 3]


def test_permutation_of_arrays_keeps_dtype_and_values():
    x = np.linspace(0, 1, 50, dtype=np.float64)
    out = arr(nxr.permutation(K42, x))
    assert out.dtype == np.float64 and np.array_equal(np.sort(out), x)
    assert arr(nxr.permutation(K42, 0)).shape == (0,)
    assert arr(nxr.permutation(K42, 1)).tolist() == [0]


def test_choice_without_replacement_is_distinct():
    out = arr(nxr.choice(K42, 100, (100,), replace=False))
    assert sorted(out.tolist()) == list(range(100))


def test_inputs_as_tensors():
    lo = nxr.uniform(K42, (4,))
    out = arr(nxr.uniform(K42, (4,), minval=lo, maxval=2.0))
    assert out.shape == (4,) and np.all(out >= arr(lo))
    assert nxr.bernoulli(K42, nxr.uniform(K42, (3,))).shape == (3,)


def test_threefry_2x32_runs_as_the_primitive():
    assert nx_rune.primitives.threefry_p.impl is not None
    count = np.arange(9, dtype=np.uint32).reshape(3, 3)
    out = nxr.threefry_2x32(K42, count)
    assert isinstance(out, Tensor) and out.shape == (3, 3) and out.dtype == np.uint32
    from nx_rune._kernels import threefry as K
    assert np.array_equal(arr(out), K.threefry_2x32(np.array([0, 42], np.uint32), count))


# --- statistics (limits at several standard errors; the streams are deterministic) ------------

N = 1_000_000


def test_uniform_moments():
    u = arr(nxr.uniform(nxr.PRNGKey(11), (N,))).astype(np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / N)


def test_uniform_range_moments():
    u = arr(nxr.uniform(nxr.PRNGKey(12), (N,), minval=-2.0, maxval=3.0)).astype(np.float64)
    assert u.min() >= -2 and u.max() < 3
    assert abs(u.mean() - 0.5) < 5 * 5 * math.sqrt(1 / 12 / N)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_moments(dtype):
    z = arr(nxr.normal(nxr.PRNGKey(13), (N,), dtype)).astype(np.float64)
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / N)
    assert abs(np.mean(z**3)) < 5 * math.sqrt(15 / N)           # symmetry
    assert np.all(np.isfinite(z))


def test_truncated_normal_bounds_and_mean():
    z = arr(nxr.truncated_normal(nxr.PRNGKey(14), -1.0, 2.0, (N,))).astype(np.float64)
    assert z.min() > -1 and z.max() < 2
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)   # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))          # noqa: E731
    mean = (pdf(-1) - pdf(2)) / (cdf(2) - cdf(-1))
    assert abs(z.mean() - mean) < 5 * z.std() / math.sqrt(N)


def test_gumbel_moments():
    g = arr(nxr.gumbel(nxr.PRNGKey(15), (N,))).astype(np.float64)
    assert abs(g.mean() - 0.5772156649) < 5 * math.sqrt(math.pi**2 / 6 / N)
    assert abs(g.var() - math.pi**2 / 6) < 0.02


def _chi_square(counts, expected):
    return float(np.sum((counts - expected) ** 2 / expected))


def _chi2_critical(df):
    try:
        from scipy import stats
    except ImportError:
        # Upper 1e-4 quantiles of chi-square, for the degrees of freedom used here.
        return {9: 33.720, 6: 27.856, 3: 21.108}[df]
    return float(stats.chi2.ppf(1 - 1e-4, df))


def test_randint_chi_square():
    x = arr(nxr.randint(nxr.PRNGKey(16), (N,), 3, 13))
    assert x.min() == 3 and x.max() == 12
    counts = np.bincount(x - 3, minlength=10)
    assert _chi_square(counts, N / 10) < _chi2_critical(9)


def test_bernoulli_and_categorical_frequencies():
    b = arr(nxr.bernoulli(nxr.PRNGKey(17), 0.3, (N,)))
    assert abs(b.mean() - 0.3) < 5 * math.sqrt(0.3 * 0.7 / N)
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4], np.float32))
    c = arr(nxr.categorical(nxr.PRNGKey(18), logits, shape=(200_000,)))
    counts = np.bincount(c, minlength=4)
    assert _chi_square(counts, 200_000 * np.array([0.1, 0.2, 0.3, 0.4])) < _chi2_critical(3)


def test_permutation_positions_are_uniform():
    # Position of element 0 over many keys: uniform over 7 places.
    keys = arr(nxr.split(nxr.PRNGKey(19), 7000))
    pos = [int(np.argmax(arr(nxr.permutation(k, 7)) == 0)) for k in keys]
    counts = np.bincount(pos, minlength=7)
    assert _chi_square(counts, 1000) < _chi2_critical(6)


# --- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad, err, msg", [
    (np.array([0, 1], np.int32), TypeError, "key must be a PRNG key.*dtype int32"),
    (np.zeros(3, np.uint32), TypeError, r"key must be a PRNG key.*shape \(3,\)"),
    (np.zeros((), np.uint32), TypeError, r"key must be a PRNG key.*shape \(\)"),
    (np.zeros((2, 2), np.uint32), ValueError, "key must be a single key"),
    ([0, 1], TypeError, "key must be a PRNG key.*dtype int32"),
])
@pytest.mark.parametrize("fn", [
    lambda k: nxr.bits(k), lambda k: nxr.uniform(k), lambda k: nxr.normal(k),
    lambda k: nxr.split(k), lambda k: nxr.fold_in(k, 1), lambda k: nxr.randint(k, (), 0, 2),
    lambda k: nxr.permutation(k, 3), lambda k: nxr.threefry_2x32(k, np.zeros(2, np.uint32)),
])
def test_bad_keys(fn, bad, err, msg):
    with pytest.raises(err, match=msg):
        fn(bad)


def test_bad_seeds():
    with pytest.raises(OverflowError, match="seed must fit in int64"):
        nxr.PRNGKey(2**63)
    with pytest.raises(TypeError, match="seed must be an integer"):
        nxr.PRNGKey(1.5)


def test_bad_dtypes():
    with pytest.raises(ValueError, match="dtype of bits must be an unsigned integer dtype"):
        nxr.bits(K42, (2,), np.int32)
    with pytest.raises(ValueError, match="dtype of uniform must be a float dtype"):
        nxr.uniform(K42, (2,), np.int32)
    with pytest.raises(ValueError, match="dtype of normal must be a float or complex dtype"):
        nxr.normal(K42, (2,), np.int32)
    with pytest.raises(TypeError, match="dtype of randint must be an integer dtype"):
        nxr.randint(K42, (2,), 0, 3, np.float32)
    with pytest.raises(TypeError, match="p of bernoulli must have a floating dtype"):
        nxr.bernoulli(K42, 1)
    with pytest.raises(TypeError, match="logits must have a floating dtype"):
        nxr.categorical(K42, np.arange(3))


def test_bad_shapes():
    with pytest.raises(ValueError, match="shape must have non-negative sizes"):
        nxr.uniform(K42, (-1,))
    with pytest.raises(TypeError, match="shape must be a tuple of ints"):
        nxr.bits(K42, (2.5,))
    with pytest.raises(ValueError, match="uniform: parameter shapes"):
        nxr.uniform(K42, (2,), minval=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="randint: parameter shapes"):
        nxr.randint(K42, (2,), np.zeros((3, 2), np.int32), 5)
    with pytest.raises(ValueError, match="bernoulli: parameter shapes"):
        nxr.bernoulli(K42, np.full(4, 0.5, np.float32), (3,))
    with pytest.raises(ValueError, match="categorical: parameter shapes"):
        nxr.categorical(K42, LOGITS, shape=(4,))


def test_bad_fold_in_data():
    with pytest.raises(TypeError, match="data must be a scalar"):
        nxr.fold_in(K42, np.arange(3))
    with pytest.raises(OverflowError, match="data must be in"):
        nxr.fold_in(K42, -1)
    with pytest.raises(TypeError, match="data must be an integer"):
        nxr.fold_in(K42, 1.5)


def test_bad_choice_and_permutation():
    with pytest.raises(ValueError, match="cannot take a larger sample"):
        nxr.choice(K42, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="shape of choice must be a sequence"):
        nxr.choice(K42, 3, 4)
    with pytest.raises(ValueError, match="p must be None or a 1-D array"):
        nxr.choice(K42, 3, (2,), p=np.ones(4, np.float32) / 4)
    with pytest.raises(ValueError, match="a must be greater than 0"):
        nxr.choice(K42, 0, (2,))
    with pytest.raises(TypeError, match="x must be an integer or an array"):
        nxr.permutation(K42, 2.5)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        nxr.permutation(K42, np.zeros((2, 2)), axis=2)


def test_bad_threefry_count():
    with pytest.raises(TypeError, match="count must have dtype uint32, got int32"):
        nxr.threefry_2x32(K42, np.arange(3, dtype=np.int32))


# --- fused samplers: the values of the NumPy reference chain, bit for bit --------------------
#
# The model below is nx_rune.random's NumPy implementation as it was before the samplers were
# fused into one kernel pass, frozen here: every step rounds as NumPy does (float32 arithmetic
# in float32, XLA's fused multiply-adds as one rounding; float32 log, log1p and erf as XLA:CPU
# computes them, written out again below from XLA's definitions; float64 log1p XLA's own and log
# the C library's, as XLA's compiled code calls it).
# The fused kernels must give its values exactly, for every dtype, shape, key and thread count.

from fractions import Fraction  # noqa: E402

from nx_rune._kernels import threefry as KT  # noqa: E402

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
SQRT2 = math.sqrt(2.0)
ERFINV32 = [
    [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941],
    [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
     -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]]


def model_bits(key, n, dtype):
    k0, k1 = (int(w) for w in (arr(key) if isinstance(key, Tensor) else key))
    return KT.iota_bits64(k0, k1, n) if dtype == F64 else KT.iota_bits32(k0, k1, n)


def model_unit(bits, dtype):
    nbits, nmant = np.finfo(dtype).bits, np.finfo(dtype).nmant
    b = (bits >> (nbits - nmant)) | np.array(1.0, dtype).view(bits.dtype)
    return b.view(dtype) - dtype.type(1)


def model_fma(a, b, c, dtype):
    """a * b + c rounded once: exactly through float64 for float32, through Fractions for
    float64 (correctly rounded by float(Fraction))."""
    a, b, c = np.broadcast_arrays(a, b, c)
    if dtype == F32:
        return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(F32)
    def fma(x, y, z):
        x, y, z = float(x), float(y), float(z)
        if not all(map(math.isfinite, (x, y, z))):
            return x * y + z                 # NaN or inf either way
        return float(Fraction(x) * Fraction(y) + Fraction(z))
    out = [fma(x, y, z) for x, y, z in zip(a.ravel(), b.ravel(), c.ravel())]
    return np.array(out, F64).reshape(a.shape)


def model_uniform(bits, dtype, lo, hi):
    f = model_unit(bits, dtype)
    lo, hi = dtype.type(lo), dtype.type(hi)
    if lo == 0 and hi == 1 and not np.signbit(lo):
        return f
    return np.maximum(lo, model_fma(f, hi - lo, lo, dtype))


def model_fma32(a, b, c):
    """float32 a * b + c rounded once: the float64 sum rounded to odd (nudged off an even
    last bit toward the exact value when inexact), then to float32."""
    a, b, c = (np.asarray(v, F32).astype(np.float64) for v in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        p = a * b                                    # exact
        s = p + c
        t = s - p
        err = (p - (s - t)) + (c - t)                # s + err == p + c exactly (s finite)
        even = (s.view(np.uint64) & np.uint64(1)) == 0
        odd = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
        s = np.where((err != 0) & np.isfinite(err) & even, odd, s)
        return s.astype(F32)


def model_xla_log32(x):
    """XLA:CPU's float32 log (Cephes/Eigen logf, contracted multiply-adds), positive normal x."""
    x = np.asarray(x, F32)
    b = x.view(np.uint32)
    m = ((b & np.uint32(0x007FFFFF)) | np.uint32(0x3F000000)).view(F32)      # [0.5, 1)
    e = ((b >> np.uint32(23)).astype(np.int32) - 126).astype(F32)
    low = m < F32.type(0.707106781186547524)
    z = np.where(low, (m - F32.type(1)) + m, m - F32.type(1))
    e = np.where(low, e - F32.type(1), e)
    c = [F32.type(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                               -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                               2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
    z2 = z * z
    z3 = z2 * z
    y0 = model_fma32(model_fma32(z, c[0], c[1]), z, c[2])
    y1 = model_fma32(model_fma32(z, c[3], c[4]), z, c[5])
    y2 = model_fma32(model_fma32(z, c[6], c[7]), z, c[8])
    y = model_fma32(model_fma32(model_fma32(y0, z3, y1), z3, y2), z3,
                    F32.type(-2.12194440e-4) * e)
    r = model_fma32(F32.type(-0.5), z2, z) + y
    return model_fma32(F32.type(0.693359375), e, r)


def model_xla_log1p32(x):
    """XLA:CPU's float32 log1p for x in [-1, 0] (log1p(-1) = -inf)."""
    x = np.asarray(x, F32)
    num = [4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
           2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
           2.0039553499201281259648E1]
    den = [1.0, 1.5062909083469192043167E1, 8.3047565967967209469434E1,
           2.2176239823732856465394E2, 3.0909872225312059774938E2, 2.1642788614495947685003E2,
           6.0118660497603843919306E1]
    pn, pd = np.zeros_like(x), np.zeros_like(x)
    for cn, cd in zip(num, den):
        pn, pd = model_fma32(pn, x, F32.type(cn)), model_fma32(pd, x, F32.type(cd))
    x2 = x * x
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = x + model_fma32(F32.type(-0.5), x2, (x * x2) * (pn / pd))
        y = x + F32.type(1)
        big = np.where(y == 0, F32.type(-np.inf), model_xla_log32(np.where(y == 0, 1, y)))
    return np.where(np.abs(x) < F32.type(0.41421356237309504880), small, big)


def model_xla_erf32(x):
    """XLA:CPU's float32 erf."""
    x = np.asarray(x, F32)
    x2 = x * x
    p = np.full_like(x, F32.type(0.00022905065861350646))
    for c in (0.0034082910107109506, 0.050955695062380861, 0.18520832239976145,
              1.128379143519084):
        p = model_fma32(x2, p, F32.type(c))
    q = np.full_like(x, F32.type(-1.1791602954361697e-7))
    for c in (0.000023547966471313185, 0.0010179625278914885, 0.014070470171167667,
              0.11098505178285362, 0.49746925110067538, 1.0):
        q = model_fma32(x2, q, F32.type(c))
    with np.errstate(invalid="ignore"):
        r = (x * p) / q
        return np.where(np.abs(x) >= F32.type(3.832506856900711), np.copysign(F32.type(1), x),
                        r).astype(F32)


def model_erf_bound(v, dtype):
    """erf(v / sqrt 2) as JAX computes a truncated normal's bound: float32 as XLA compiles it
    (times the float32 reciprocal of sqrt 2, XLA's erf); float64 correctly rounded."""
    s2 = dtype.type(SQRT2)
    if dtype == F32:
        return model_xla_erf32(dtype.type(v) * (F32.type(1) / s2))
    return dtype.type(math.erf(float(dtype.type(v) / s2)))


def model_erfinv32(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -model_xla_log1p32(x * -x)
        large = w >= np.float32(5)
        t = np.where(large, np.sqrt(w) - np.float32(3), w - np.float32(2.5)).astype(np.float64)
        c = np.array(ERFINV32, F32).astype(np.float64)
        p = np.where(large, c[1, 0], c[0, 0])
        for i in range(1, 9):
            p = (p * t + np.where(large, c[1, i], c[0, i])).astype(F32).astype(np.float64)
        return np.where(np.abs(x) == 1, x * np.float32(np.inf), p.astype(F32) * x)


LOG1P_P = [4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
           6.5787325942061044846969E0, 2.9911919328553073277375E1, 6.0949667980987787057556E1,
           5.7112963590585538103336E1, 2.0039553499201281259648E1]
LOG1P_Q = [1.0, 1.5062909083469192043167E1, 8.3047565967967209469434E1,
           2.2176239823732856465394E2, 3.0909872225312059774938E2, 2.1642788614495947685003E2,
           6.0118660497603843919306E1]


def model_libm_log(x):
    """The C library's log (Python's math.log calls it), as XLA's float64 code does."""
    return np.array([math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)
                     for v in np.ravel(x)], F64).reshape(np.shape(x))


def model_numpy_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x)


def model_xla_log1p64(x, log=model_libm_log):
    """XLA:CPU's float64 log1p (jax.jit(jnp.log1p)'s compiled code): for |x| < sqrt(2) - 1,
    x + fma(x**2, -1/2, x**3 P(x) / Q(x)), the Horner steps of P and Q fused; else the C
    library's log(1 + x)."""
    x = np.asarray(x, F64)
    pn, pd = np.full(x.shape, LOG1P_P[0]), np.full(x.shape, LOG1P_Q[0])
    for cp, cq in zip(LOG1P_P[1:], LOG1P_Q[1:]):
        pn, pd = model_fma(pn, x, cp, F64), model_fma(pd, x, cq, F64)
    with np.errstate(divide="ignore", invalid="ignore"):
        x2 = x * x
        small = x + model_fma(x2, -0.5, (x * x2) * (pn / pd), F64)
        return np.where(np.abs(x) < 0.41421356237309504880, small, log(x + 1.0))


def model_erfinv64(x, log=model_libm_log):
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -model_xla_log1p64(x * -x, log)
        mid, high = w >= 6.25, w >= 16
        root = np.sqrt(w)
        t = np.where(high, root - 5.0, np.where(mid, root - 3.25, w - 3.125))
        rows = [np.array(r) for r in (nxr._ERFINV64)]     # the published coefficients
        table = np.array([[0.0] * (23 - len(r)) + list(r) for r in rows])
        p = np.where(high, table[2, 0], np.where(mid, table[1, 0], table[0, 0]))
        for i in range(1, 23):              # XLA fuses each step (fma(0, t, c) is c)
            p = model_fma(p, t, np.where(high, table[2, i], np.where(mid, table[1, i],
                                                                      table[0, i])), F64)
        return np.where(np.abs(x) == 1, x * np.inf, p * x)


def model_normal(bits, dtype):
    u = model_uniform(bits, dtype, np.nextafter(dtype.type(-1), dtype.type(0)), 1.0)
    e = model_erfinv32(u) if dtype == F32 else model_erfinv64(u)
    return (dtype.type(SQRT2) * e).astype(dtype)


def model_truncated_normal(bits, dtype, lower, upper):
    lo, hi = dtype.type(lower), dtype.type(upper)
    s2 = dtype.type(SQRT2)
    a, b = model_erf_bound(lo, dtype), model_erf_bound(hi, dtype)
    u = model_uniform(bits, dtype, a, b)
    # float64: NumPy's log beyond sqrt(2) - 1 in log1p, the one nx operations give under a
    # trace too (a truncated normal's erfinv runs traced with traced bounds)
    e = model_erfinv32(u) if dtype == F32 else model_erfinv64(u, model_numpy_log)
    out = (s2 * e).astype(dtype)
    return np.clip(out, np.nextafter(lo, dtype.type(np.inf)),
                   np.nextafter(hi, dtype.type(-np.inf))).astype(dtype)


def model_gumbel(bits, dtype):
    u = model_uniform(bits, dtype, np.finfo(dtype).tiny, 1.0)
    if dtype == F32:
        return -model_xla_log32(-model_xla_log32(u))
    return -model_libm_log(-model_libm_log(u))


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a.dtype == b.dtype and a.shape == b.shape
            and np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)))


FUSED_KEYS = [nxr.PRNGKey(0), nxr.PRNGKey(42), nxr.PRNGKey(2**31 - 1),
              np.array([0xDEADBEEF, 0xFFFFFFFF], np.uint32)]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("shape", [(), (1,), (5,), (1023,), (1025,), (3, 7, 11)])
def test_fused_samplers_match_the_reference(dtype, shape):
    n = math.prod(shape)
    for key in FUSED_KEYS:
        bits = model_bits(key, n, dtype)
        cases = {
            "normal": (nxr.normal(key, shape, dtype), model_normal(bits, dtype)),
            "gumbel": (nxr.gumbel(key, shape, dtype), model_gumbel(bits, dtype)),
            "uniform": (nxr.uniform(key, shape, dtype), model_uniform(bits, dtype, 0.0, 1.0)),
            "uniform(-2, 3)": (nxr.uniform(key, shape, dtype, -2.0, 3.0),
                               model_uniform(bits, dtype, -2.0, 3.0)),
            "uniform(5, -1)": (nxr.uniform(key, shape, dtype, 5.0, -1.0),
                               model_uniform(bits, dtype, 5.0, -1.0)),
            "uniform(1e-3, 2e30)": (nxr.uniform(key, shape, dtype, 1e-3, 2e30),
                                    model_uniform(bits, dtype, 1e-3, 2e30)),
            "truncated_normal(-1, 2)": (nxr.truncated_normal(key, -1.0, 2.0, shape, dtype),
                                        model_truncated_normal(bits, dtype, -1.0, 2.0)),
            "truncated_normal(-inf, -3)": (
                nxr.truncated_normal(key, -np.inf, -3.0, shape, dtype),
                model_truncated_normal(bits, dtype, -np.inf, -3.0)),
        }
        for name, (ours, want) in cases.items():
            assert same_bits(arr(ours), np.asarray(want).reshape(shape)), f"{name}, key {key}"


@pytest.mark.parametrize("lo, hi", [(-0.0, 1.0), (np.inf, 1.0), (0.0, np.nan), (-3e38, 3e38),
                                    (2.0, 2.0)])
def test_uniform_parameters_left_to_the_reference(lo, hi):
    # -0.0, non-finite bounds or spans: the NumPy reference computes these (same values)
    bits = model_bits(K42, 999, F32)
    with np.errstate(invalid="ignore", over="ignore"):
        want = model_uniform(bits, F32, lo, hi)
        assert same_bits(arr(nxr.uniform(K42, (999,), np.float32, lo, hi)), want)


@pytest.mark.parametrize("lower, upper", [(-0.0, 1.0), (-1e-45, 1.0), (np.nan, 1.0),
                                          (3.0, -1.0), (2.0, 2.0), (-10.0, -9.0)])
def test_truncated_normal_edge_bounds(lower, upper):
    for dtype in (F32, F64):
        bits = model_bits(K42, 513, dtype)
        with np.errstate(invalid="ignore"):
            want = model_truncated_normal(bits, dtype, lower, upper)
            ours = arr(nxr.truncated_normal(K42, lower, upper, (513,), dtype))
        assert same_bits(ours, want), (lower, upper, dtype)


def test_fused_float32_every_mantissa():
    # float32 uniforms have 2**23 values: the whole domain of normal, gumbel and uniform
    bits = np.arange(2**23, dtype=np.uint32) << np.uint32(9)
    lo = float(np.nextafter(np.float32(-1), np.float32(0)))
    tiny = float(np.finfo(np.float32).tiny)
    for op, kw, want in [
            ("normal", dict(lo=lo, span=2.0), model_normal(bits, F32)),
            ("gumbel", dict(lo=tiny, span=1.0), model_gumbel(bits, F32)),
            ("uniform", dict(lo=-2.0, span=5.0), model_uniform(bits, F32, -2.0, 3.0)),
            ("unit", {}, model_unit(bits, F32))]:
        out, hard = KT.transform_f32(bits, op, **kw)
        assert hard is not None and hard.size == 0, op     # XLA's float32 logs: none in doubt
        assert same_bits(out, want), op


def test_fused_truncated_normal_mantissas():
    bits = (np.arange(0, 2**23, 7, dtype=np.uint32) << np.uint32(9)) | np.uint32(0x1ab)
    for lower, upper in [(-1.0, 2.0), (-np.inf, 0.5), (-8.0, 8.0)]:
        want = model_truncated_normal(bits, F32, lower, upper)
        a, b = model_erf_bound(lower, F32), model_erf_bound(upper, F32)
        out, hard = KT.transform_f32(
            bits, "truncated_normal", lo=float(a), span=float(b - a),
            clip_lo=float(np.nextafter(np.float32(lower), np.float32(np.inf))),
            clip_hi=float(np.nextafter(np.float32(upper), np.float32(-np.inf))))
        assert hard.size == 0
        assert same_bits(out, want), (lower, upper)


def test_hard_elements_are_recomputed_by_the_reference(monkeypatch):
    # Elements the kernel reports (float64 log within a few ulps of a float32 tie) must come
    # from the NumPy chain: simulate reports, with garbage in those places.
    real = KT.sample_f32
    reported = np.array([0, 5, 1000], np.int64)

    def fake(*args, **kwargs):
        out, _ = real(*args, **kwargs)
        out[reported] = np.float32(123.0)
        return out, reported
    monkeypatch.setattr(nxr._K, "sample_f32", fake)
    bits = model_bits(K42, 2000, F32)
    assert same_bits(arr(nxr.normal(K42, (2000,))), model_normal(bits, F32))
    assert same_bits(arr(nxr.gumbel(K42, (40, 50))), model_gumbel(bits, F32).reshape(40, 50))
    assert same_bits(arr(nxr.truncated_normal(K42, -1.0, 2.0, (2000,))),
                     model_truncated_normal(bits, F32, -1.0, 2.0))

    def too_many(*args, **kwargs):
        out, _ = real(*args, **kwargs)
        return out * 0, None             # more than the kernel can list: all redone
    monkeypatch.setattr(nxr._K, "sample_f32", too_many)
    assert same_bits(arr(nxr.normal(K42, (2000,))), model_normal(bits, F32))


def test_fused_samplers_do_not_depend_on_threads():
    shape = ((1 << 18) + 12345,)            # several spans, ragged end
    old = KT.get_num_threads()
    draws = []
    try:
        for threads in (1, 3):
            KT.set_num_threads(threads)
            draws.append([arr(nxr.normal(K42, shape)), arr(nxr.normal(K42, shape, F64)),
                          arr(nxr.gumbel(K42, shape)), arr(nxr.uniform(K42, shape, F64, -2, 3)),
                          arr(nxr.truncated_normal(K42, -1.0, 2.0, shape))])
    finally:
        KT.set_num_threads(old)
    assert all(same_bits(a, b) for a, b in zip(*draws))
    bits = model_bits(K42, shape[0], F32)
    assert same_bits(draws[0][0], model_normal(bits, F32))


def test_key_accepts_jax_s_impl_keyword():
    for make in (nxr.key, nxr.PRNGKey):
        want = np.asarray(make(7))
        for impl in (None, "threefry2x32"):
            np.testing.assert_array_equal(np.asarray(make(7, impl=impl)), want)
        with pytest.raises(ValueError, match="impl='rbg' is not available"):
            make(7, impl="rbg")
