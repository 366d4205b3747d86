"""nx.random under every transformation: traced keys and parameters under jit, vmap and grad,
and their compositions, give JAX's values and the eager values bit for bit.

Golden values below were produced by JAX 0.10.2 (``jax.jit`` / ``jax.vmap`` / ``jax.grad`` of
``jax.random`` samplers, default configuration, x32 mode), not by nx_rune.  Samplers whose JAX
values go through XLA's own log/erf (normal, gumbel, truncated_normal) agree to a few ulps, as
in tests/test_random.py; the others are equal.  The differential tests draw enough values to
reach every branch of the chains (erfinv's tail, the hard elements of the fused kernels) and
check that jit and vmap give the eager values bit for bit.
"""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import random as nxr
from nx_rune.config import enable_x64

K42 = nxr.PRNGKey(42)
K1 = nxr.PRNGKey(1)
LOGITS = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 1.5, -3.0, 0.25], [0.0, 0.0, 0.0, 0.0]],
                  np.float32)
P4 = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
# Names compared to within 4 ulps instead of bit for bit: none (float32 normal, gumbel and
# truncated_normal use XLA:CPU's own float32 log1p, log and erf, as JAX does).
CLOSE_NAMES: set[str] = set()

# Each sampler as a function of its key (as JAX's cases, in jaxgold order).
SAMPLERS = {
    "split3": lambda k: nxr.split(k, 3),
    "bits": lambda k: nxr.bits(k, (4,)),
    "bits_u8": lambda k: nxr.bits(k, (6,), np.uint8),
    "uniform_m2_3": lambda k: nxr.uniform(k, (6,), minval=-2.0, maxval=3.0),
    "normal": lambda k: nxr.normal(k, (4,)),
    "gumbel": lambda k: nxr.gumbel(k, (4,)),
    "truncnorm": lambda k: nxr.truncated_normal(k, -1.0, 2.0, (4,)),
    "randint": lambda k: nxr.randint(k, (8,), 0, 10),
    "randint_big": lambda k: nxr.randint(k, (4,), -5, 1000003),
    "bernoulli": lambda k: nxr.bernoulli(k, 0.3, (10,)),
    "perm10": lambda k: nxr.permutation(k, 10),
    "perm_rows": lambda k: nxr.permutation(k, nx.reshape(nx.arange(12.0), (3, 4)), axis=1),
    "choice": lambda k: nxr.choice(k, 10, (5,)),
    "choice_norep": lambda k: nxr.choice(k, 10, (5,), replace=False),
    "choice_p": lambda k: nxr.choice(k, 4, (8,), p=P4),
    "categorical": lambda k: nxr.categorical(k, LOGITS),
    "threefry": lambda k: nxr.threefry_2x32(k, np.arange(5, dtype=np.uint32)),
}

# jax.jit(f)(PRNGKey(42)) in JAX 0.10.2
JIT_GOLDEN = {
    'split3': ('uint32', (3, 2), [1832780943, 270669613, 64467757, 2916123636, 2465931498,
                                  255383827]),
    'bits': ('uint32', (4,), [2098992034, 2919706841, 2646866425, 2409546199]),
    'bits_u8': ('uint8', (6,), [162, 217, 249, 215, 21, 216]),
    'uniform_m2_3': ('float32', (6,), [0.4435478448867798, 1.3989858627319336,
                                       1.081357479095459, 0.8050804138183594,
                                       0.2532230615615845, 0.9293292760848999]),
    'normal': ('float32', (4,), [-0.02830461598932743, 0.4671318531036377, 0.2957029640674591,
                                 0.15354591608047485]),
    'gumbel': ('float32', (4,), [0.3340933918952942, 0.952019453048706, 0.7255305647850037,
                                 0.5481715202331543]),
    'truncnorm': ('float32', (4,), [0.14770005643367767, 0.5684449076652527,
                                    0.42102551460266113, 0.29997000098228455]),
    'randint': ('int32', (8,), [4, 4, 1, 9, 9, 9, 7, 7]),
    'randint_big': ('int32', (4,), [269271, 838293, 364882, 979396]),
    'bernoulli': ('bool', (10,), [False] * 6 + [True] + [False] * 3),
    'perm10': ('int32', (10,), [7, 4, 2, 5, 3, 6, 8, 9, 0, 1]),
    'perm_rows': ('float32', (3, 4), [2.0, 3.0, 0.0, 1.0, 6.0, 7.0, 4.0, 5.0, 10.0, 11.0, 8.0,
                                      9.0]),
    'choice': ('int32', (5,), [4, 4, 1, 9, 9]),
    'choice_norep': ('int32', (5,), [7, 4, 2, 5, 3]),
    'choice_p': ('int32', (8,), [2, 2, 2, 2, 2, 2, 3, 1]),
    'categorical': ('int32', (3,), [2, 1, 3]),
    'threefry': ('uint32', (5,), [3134548294, 3733159049, 843694964, 894150801, 801545058]),
}

# jax.jit(jax.vmap(f))(jax.random.split(PRNGKey(3), 3)) in JAX 0.10.2
VMAP_KEYS_GOLDEN = {
    'normal': ('float32', (3, 4), [-2.3783397674560547, -1.7061667442321777,
                                   -0.4913964569568634, -0.9631258845329285,
                                   -1.9432215690612793, 0.10481610149145126,
                                   -0.04758956655859947, 0.30599313974380493,
                                   -0.5877813696861267, -2.455145835876465, 1.394334077835083,
                                   0.5302693247795105]),
    'uniform_m2_3': ('float32', (3, 6), [-1.9565231800079346, -1.780057668685913,
                                         -0.4421348571777344, -1.1612893342971802,
                                         0.8771424293518066, 2.336695671081543,
                                         -1.870026707649231, 0.7086955308914185,
                                         0.4051082134246826, 1.1009751558303833,
                                         -0.09916138648986816, -1.3009990453720093,
                                         -0.6083024740219116, -1.96479332447052,
                                         2.5919580459594727, 1.5101866722106934,
                                         2.4613142013549805, -1.3544363975524902]),
    'randint': ('int32', (3, 8), [2, 5, 0, 0, 6, 6, 9, 4, 1, 0, 6, 5, 1, 9, 1, 6, 6, 0, 3, 9,
                                  2, 6, 8, 5]),
    'perm10': ('int32', (3, 10), [6, 7, 2, 5, 3, 0, 1, 4, 9, 8, 6, 2, 4, 0, 7, 1, 8, 3, 9, 5,
                                  9, 5, 7, 4, 1, 2, 3, 6, 0, 8]),
    'choice_p': ('int32', (3, 8), [3, 3, 3, 3, 2, 1, 1, 3, 3, 2, 2, 2, 3, 3, 3, 3, 3, 3, 0, 1,
                                   1, 3, 2, 3]),
    'truncnorm': ('float32', (3, 4), [-0.971003532409668, -0.8608367443084717,
                                      -0.21801875531673431, -0.536032497882843,
                                      -0.9156151413917542, 0.2588381767272949,
                                      0.13177016377449036, 0.4298388361930847,
                                      -0.2884465754032135, -0.9764558672904968,
                                      1.3435044288635254, 0.622943639755249]),
    'gumbel': ('float32', (3, 4), [-1.557084083557129, -1.1390591859817505,
                                   -0.15368326008319855, -0.5796018242835999,
                                   -1.2946900129318237, 0.4894380271434784,
                                   0.3121892809867859, 0.7387278079986572,
                                   -0.24601097404956818, -1.6005903482437134,
                                   2.463559150695801, 1.0391120910644531]),
    'categorical': ('int32', (3, 3), [2, 1, 0, 2, 0, 0, 2, 0, 2]),
    'bits': ('uint32', (3, 4), [37346497, 188929330, 1338196208, 720447348, 111646283,
                                2326751859, 2065972637, 2663717546, 1195459093, 30242459,
                                3944462100, 3015227686]),
}

LO3 = np.array([-1.0, 0.5, 4.0], np.float32)
# jax.jit(jax.vmap(f))(data) with the unbatched key PRNGKey(42), in JAX 0.10.2
VMAP_DATA = {
    "uniform_lo": (lambda lo: nxr.uniform(K42, (2,), minval=lo, maxval=10.0), LO3),
    "truncnorm_lo": (lambda lo: nxr.truncated_normal(K42, lo, 5.0, (2,)), LO3),
    "bernoulli_p": (lambda p: nxr.bernoulli(K42, p, (4,)),
                    np.array([0.1, 0.5, 0.9], np.float32)),
    "randint_hi": (lambda hi: nxr.randint(K42, (3,), 0, hi), np.array([5, 100, 7], np.int32)),
    "categorical_lg": (lambda lg: nxr.categorical(K42, lg), LOGITS),
    "perm_x": (lambda x: nxr.permutation(K42, x), np.arange(12.0, dtype=np.float32).reshape(3, 4)),
}
VMAP_DATA_GOLDEN = {
    'uniform_lo': ('float32', (3, 2), [4.375805377960205, 6.477768898010254, 5.142740726470947,
                                       6.958073139190674, 6.932257652282715, 8.07878303527832]),
    # jax.vmap(f)(data) (the same as eager JAX): under jax.jit XLA constant-folds the bound
    # erf(5.0 / sqrt2) with a correctly rounded erf instead of its compiled float32 erf, an ulp
    # away, which moves the last row (4.154051780700684, 4.257386684417725 there)
    'truncnorm_lo': ('float32', (3, 2), [0.17593717575073242, 0.6146252155303955,
                                         1.0037381649017334, 1.2884494066238403,
                                         4.1544694900512695, 4.258031845092773]),
    'bernoulli_p': ('bool', (3, 4), [False, False, False, False, True, False, False, False,
                                     True, True, True, True]),
    'randint_hi': ('int32', (3, 3), [4, 4, 1, 44, 14, 71, 1, 5, 4]),
    'categorical_lg': ('int32', (3,), [2, 1, 1]),
    'perm_x': ('float32', (3, 4), [2.0, 3.0, 0.0, 1.0, 6.0, 7.0, 4.0, 5.0, 10.0, 11.0, 8.0,
                                   9.0]),
}


def _check(name, out, golden):
    dtype, shape, values = golden
    out = np.asarray(out)
    assert out.dtype == np.dtype(dtype) and out.shape == shape, (out.dtype, out.shape)
    expected = np.array(values, dtype=dtype).reshape(shape)
    if name in CLOSE_NAMES:
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(out, expected, rtol=4 * eps, atol=4 * eps)
    else:
        assert out.tolist() == expected.tolist()


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype == bool:
        assert (a == b).all()
    else:
        bad = np.flatnonzero(a.reshape(-1).view(np.uint8) != b.reshape(-1).view(np.uint8))
        assert bad.size == 0, f"{bad.size} bytes differ, first at byte {bad[:3]}"


# --- jit: a traced key -------------------------------------------------------------------------

def test_issue_repro_normal_under_jit():
    out = nx.jit(lambda k: nxr.normal(k, (2,)))(nxr.key(0))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(nxr.normal(nxr.key(0), (2,))))


@pytest.mark.parametrize("name", sorted(JIT_GOLDEN))
def test_jit_traced_key_matches_jax(name):
    f = SAMPLERS[name]
    out = nx.jit(f)(K42)
    _check(name, out, JIT_GOLDEN[name])
    _same_bits(out, f(K42))


def test_jit_key_from_traced_seed():
    # jax.jit(jax.random.PRNGKey)(np.int32(-7)) in JAX 0.10.2: [0, 4294967289]
    out = nx.jit(nxr.key)(nx.asarray(np.int32(-7)))
    assert np.asarray(out).dtype == np.uint32
    assert np.asarray(out).tolist() == [0, 4294967289]
    assert np.asarray(nx.jit(nxr.PRNGKey)(nx.asarray(np.int32(42)))).tolist() == [0, 42]


def test_jit_key_from_traced_seed_x64():
    with enable_x64():
        # jax.random.PRNGKey(-1) in x64 mode: [4294967295, 4294967295]
        for seed in (np.int64(-1), np.int32(-1)):
            assert np.asarray(nx.jit(nxr.key)(nx.asarray(seed))).tolist() == [2**32 - 1] * 2
        assert np.asarray(nx.jit(nxr.key)(nx.asarray(np.int64(2**40 + 5)))).tolist() == [256, 5]


def test_jit_fold_in_traced_data():
    # jax.jit(jax.random.fold_in)(PRNGKey(42), np.uint32(7)) in JAX 0.10.2
    out = nx.jit(nxr.fold_in)(K42, nx.asarray(np.uint32(7)))
    assert np.asarray(out).tolist() == [2547012911, 1371500959]
    out = nx.jit(nxr.fold_in)(K42, nx.asarray(np.int32(-3)))
    _same_bits(out, nxr.fold_in(K42, np.uint32(2**32 - 3)))


def test_jitted_step_with_split_and_dropout():
    """The pattern the issue names: a jitted step that splits its key and samples (dropout)."""
    def step(k, x):
        k, sub = nxr.split(k)
        keep = nxr.bernoulli(sub, 0.75, x.shape)
        return k, nx.where(keep, x / 0.75, 0.0)
    x = nx.asarray(np.arange(1.0, 9.0, dtype=np.float32))
    k_j, y_j = nx.jit(step)(K42, x)
    k_e, y_e = step(K42, x)
    _same_bits(k_j, k_e)
    _same_bits(y_j, y_e)
    # the split key of PRNGKey(42) is JAX's: jax.random.split(PRNGKey(42))[0]
    assert np.asarray(k_j).tolist() == [1832780943, 270669613]


BIG = 30000
DIFFERENTIAL = {
    "bits64": lambda k: nxr.bits(k, (BIG,), np.uint64),
    "bits16": lambda k: nxr.bits(k, (BIG,), np.uint16),
    "uniform": lambda k: nxr.uniform(k, (BIG,)),
    "uniform_range": lambda k: nxr.uniform(k, (BIG,), minval=-2.0, maxval=3.0),
    "uniform_f64_range": lambda k: nxr.uniform(k, (BIG,), np.float64, -2.5, 3.7),
    "uniform_f16_range": lambda k: nxr.uniform(k, (BIG,), np.float16, -2.5, 3.7),
    "uniform_array_bounds": lambda k: nxr.uniform(
        k, (3, 100), minval=np.array([[-1.0], [0.0], [2.0]], np.float32), maxval=5.0),
    "normal": lambda k: nxr.normal(k, (5 * BIG,)),
    "normal_f64": lambda k: nxr.normal(k, (5 * BIG,), np.float64),
    "normal_f16": lambda k: nxr.normal(k, (BIG,), np.float16),
    "normal_c64": lambda k: nxr.normal(k, (BIG,), np.complex64),
    "normal_c128": lambda k: nxr.normal(k, (BIG,), np.complex128),
    "gumbel": lambda k: nxr.gumbel(k, (BIG,)),
    "gumbel_f64": lambda k: nxr.gumbel(k, (BIG,), np.float64),
    "truncnorm": lambda k: nxr.truncated_normal(k, -1.0, 2.0, (BIG,)),
    "truncnorm_f64": lambda k: nxr.truncated_normal(k, -1.0, 2.0, (BIG,), np.float64),
    "truncnorm_tail": lambda k: nxr.truncated_normal(k, 3.0, 6.0, (BIG,)),
    "randint_u8": lambda k: nxr.randint(k, (BIG,), 0, 256, np.uint8),
    "randint_i64": lambda k: nxr.randint(k, (BIG,), -5, 10**12, np.int64),
    "randint_array_bounds": lambda k: nxr.randint(k, (3, 4), np.array([[0], [5], [-3]]), 10),
    "perm2000": lambda k: nxr.permutation(k, 2000),
    "perm_independent": lambda k: nxr.permutation(
        k, np.arange(24.0).reshape(4, 6), axis=1, independent=True),
    "choice_p_norep": lambda k: nxr.choice(k, 4, (3,), replace=False, p=P4),
    "choice_array": lambda k: nxr.choice(k, np.arange(12.0).reshape(3, 4), (2, 2), axis=1),
    "categorical_shape": lambda k: nxr.categorical(k, LOGITS, axis=0, shape=(5, 4)),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIAL))
def test_jit_bit_exact_with_eager(name):
    f = DIFFERENTIAL[name]
    _same_bits(nx.jit(f)(K42), f(K42))


def test_jit_bit_exact_with_eager_x64_defaults():
    with enable_x64():
        f = lambda k: (nxr.normal(k, (1000,)), nxr.uniform(k, (1000,), minval=-1.0),  # noqa
                       nxr.randint(k, (100,), 0, 10**12), nxr.bits(k, (5,)),
                       nxr.choice(k, 5, (3,)), nxr.gumbel(k, (100,)))
        for a, b in zip(nx.jit(f)(K42), f(K42)):
            _same_bits(a, b)


A34 = np.arange(12.0).reshape(3, 4)
# (sampler, its array arguments after the key): under jit every argument is traced
TRACED_PARAMS = {
    "choice_p": (lambda k, p: nxr.choice(k, 4, (500,), p=p), (P4,)),
    "choice_p_norep": (lambda k, p: nxr.choice(k, 4, (3,), replace=False, p=p), (P4,)),
    "choice_array": (lambda k, a: nxr.choice(k, a, (2, 2), axis=1), (A34,)),
    "choice_array_norep": (lambda k, a: nxr.choice(k, a, (3,), replace=False, axis=1), (A34,)),
    "permutation_array": (lambda k, x: nxr.permutation(k, x, axis=1), (A34,)),
    "categorical": (lambda k, lg: nxr.categorical(k, lg), (LOGITS,)),
    "randint": (lambda k, lo, hi: nxr.randint(k, (1000,), lo, hi), (np.int32(-7), np.int32(100))),
    "randint_u8": (lambda k, lo, hi: nxr.randint(k, (1000,), lo, hi, np.uint8),
                   (np.int32(3), np.int32(300))),
    "randint_array": (lambda k, hi: nxr.randint(k, (3, 5), 0, hi),
                      (np.array([[5], [100], [2**31 - 1]], np.int32),)),
    "bernoulli": (lambda k, p: nxr.bernoulli(k, p, (1000,)), (np.float32(0.3),)),
    "uniform": (lambda k, lo, hi: nxr.uniform(k, (1000,), minval=lo, maxval=hi),
                (np.float32(-2), np.float32(3))),
    "uniform_f64": (lambda k, lo, hi: nxr.uniform(k, (1000,), np.float64, lo, hi),
                    (np.float64(-2.5), np.float64(3.7))),
    "truncnorm": (lambda k, lo, hi: nxr.truncated_normal(k, lo, hi, (BIG,)),
                  (np.float32(-1), np.float32(2))),
    "truncnorm_f64": (lambda k, lo, hi: nxr.truncated_normal(k, lo, hi, (BIG,), np.float64),
                      (np.float64(-1.3), np.float64(2.1))),
    "truncnorm_array": (lambda k, lo: nxr.truncated_normal(k, lo, 4.0, (3, 1000)),
                        (np.array([[-3.0], [0.1], [2.0]], np.float32),)),
}


@pytest.mark.parametrize("name", sorted(TRACED_PARAMS))
def test_jit_traced_parameters_bit_exact_with_eager(name):
    f, args = TRACED_PARAMS[name]
    _same_bits(nx.jit(f)(K42, *[nx.asarray(a) for a in args]), f(K42, *args))


# --- vmap: a batch of keys, a batch of data -------------------------------------------------------

def _vmaps(f):
    return {"vmap": nx.vmap(f), "jit(vmap)": nx.jit(nx.vmap(f)), "vmap(jit)": nx.vmap(nx.jit(f))}


@pytest.mark.parametrize("name", sorted(VMAP_KEYS_GOLDEN))
def test_vmap_of_keys_matches_jax(name):
    keys = nxr.split(nxr.PRNGKey(3), 3)
    for how, g in _vmaps(SAMPLERS[name]).items():
        _check(name, g(keys), VMAP_KEYS_GOLDEN[name])


@pytest.mark.parametrize("name", sorted(VMAP_DATA))
def test_vmap_of_data_unbatched_key_matches_jax(name):
    f, data = VMAP_DATA[name]
    for how, g in _vmaps(f).items():
        _check(name, g(nx.asarray(data)), VMAP_DATA_GOLDEN[name])


def test_vmap_keys_and_bounds_under_jit():
    # jax.jit(jax.vmap(...))(split(PRNGKey(3), 3), LO3) gives vmap_random's per-key values:
    # each example is eager uniform(key_i, minval=lo_i, maxval=lo_i + 2)
    keys = nxr.split(nxr.PRNGKey(3), 3)
    f = lambda k, lo: nxr.uniform(k, (2,), minval=lo, maxval=lo + 2.0)  # noqa: E731
    out = nx.jit(nx.vmap(f))(keys, nx.asarray(LO3))
    for i in range(3):
        _same_bits(out[i], nxr.uniform(keys[i], (2,), minval=LO3[i], maxval=LO3[i] + 2.0))


@pytest.mark.parametrize("name", ["normal", "uniform_m2_3", "randint", "perm10", "split3",
                                  "choice_p", "categorical", "bits", "truncnorm"])
def test_vmap_over_zero_keys_is_empty(name):
    """As jax.vmap over 0 keys: an empty batch of the sampler's shape and dtype."""
    f = SAMPLERS[name]
    one = np.asarray(f(K42))
    keys = nxr.split(K42, 0)
    for how, g in _vmaps(f).items():
        out = np.asarray(g(keys))
        assert out.shape == (0,) + one.shape and out.dtype == one.dtype, (how, out.shape)


def test_vmap_over_zero_data_is_empty():
    out = nx.vmap(lambda lo: nxr.uniform(K42, (2,), minval=lo))(nx.asarray(np.zeros(0, np.float32)))
    assert out.shape == (0, 2) and np.asarray(out).dtype == np.float32


# --- grad: reparameterised samples ---------------------------------------------------------------

def test_grad_reparameterised_normal():
    # jax.grad(lambda mu, s: mean(mu + s * normal(PRNGKey(1), (1000,))), (0, 1))(1., 2.)
    expected = [1.0000001192092896, -0.028158219531178474]

    def loss(mu, sigma, k):
        return nx.mean(mu + sigma * nxr.normal(k, (1000,)))
    for g in (nx.grad(loss, argnums=(0, 1)), nx.jit(nx.grad(loss, argnums=(0, 1))),
              nx.grad(nx.jit(loss), argnums=(0, 1))):
        np.testing.assert_allclose([float(v) for v in g(1.0, 2.0, K1)], expected, rtol=2e-7)


def _sum_uniform(lo, hi, k):
    return nx.sum(nxr.uniform(k, (5,), minval=lo, maxval=hi))


def _sum_truncnorm(lo, hi, k):
    return nx.sum(nxr.truncated_normal(k, lo, hi, (5,)))


@pytest.mark.parametrize("fn, expected", [
    # jax.grad of sum(uniform(PRNGKey(1), (5,), minval=lo, maxval=hi)) at (-1, 2)
    (_sum_uniform, [2.2459371089935303, 2.7540628910064697]),
    # jax.grad of sum(truncated_normal(PRNGKey(1), lo, hi, (5,))) at (-1, 2)
    (_sum_truncnorm, [1.4445754289627075, 0.5168943405151367]),
])
def test_grad_through_bounds_matches_jax(fn, expected):
    for how, g in {"grad": nx.grad(fn, argnums=(0, 1)),
                   "jit(grad)": nx.jit(nx.grad(fn, argnums=(0, 1))),
                   "grad(jit)": nx.grad(nx.jit(fn), argnums=(0, 1))}.items():
        np.testing.assert_allclose([float(v) for v in g(-1.0, 2.0, K1)], expected, rtol=1e-6,
                                   err_msg=how)


def test_jvp_and_second_derivative_through_bounds_match_jax():
    # jax.jvp(lambda lo: uniform(PRNGKey(1), (3,), minval=lo, maxval=2.), (-1.,), (1.,))[1]
    tangent = [0.5613675117492676, 0.4662470817565918, 0.5540816783905029]
    f = lambda lo: nxr.uniform(K1, (3,), minval=lo, maxval=2.0)  # noqa: E731
    np.testing.assert_allclose(np.asarray(nx.jvp(f, (-1.0,), (1.0,))[1]), tangent, rtol=1e-7)
    np.testing.assert_allclose(np.asarray(nx.jacfwd(f)(-1.0)), tangent, rtol=1e-7)
    # jax.hessian(lambda lo: sum(truncated_normal(PRNGKey(1), lo, 2., (3,))))(-1.)
    h = nx.hessian(lambda lo: nx.sum(nxr.truncated_normal(K1, lo, 2.0, (3,))))(-1.0)
    np.testing.assert_allclose(float(h), 1.0010809898376465, rtol=2e-6)


def test_grad_uniform_bounds_float64_finite_differences():
    """The float64 uniform (an emulated fused multiply-add) has the derivative of the exact
    value: central differences of the samples in the bounds."""
    with enable_x64():
        k = nxr.PRNGKey(5)
        w = np.linspace(0.5, 2.0, 7)

        def f(lo, hi):
            return nx.sum(nxr.uniform(k, (7,), np.float64, lo, hi) * w)
        g = nx.grad(f, argnums=(0, 1))(-1.25, 3.5)
        h = 1e-6
        fd = [(float(f(-1.25 + h, 3.5)) - float(f(-1.25 - h, 3.5))) / (2 * h),
              (float(f(-1.25, 3.5 + h)) - float(f(-1.25, 3.5 - h))) / (2 * h)]
        np.testing.assert_allclose([float(v) for v in g], fd, rtol=1e-7)


def test_grad_truncated_normal_bounds_float64_finite_differences():
    with enable_x64():
        k = nxr.PRNGKey(6)

        def f(lo, hi):
            return nx.sum(nxr.truncated_normal(k, lo, hi, (9,), np.float64))
        g = nx.grad(f, argnums=(0, 1))(-0.75, 1.5)
        h = 1e-6
        fd = [(float(f(-0.75 + h, 1.5)) - float(f(-0.75 - h, 1.5))) / (2 * h),
              (float(f(-0.75, 1.5 + h)) - float(f(-0.75, 1.5 - h))) / (2 * h)]
        np.testing.assert_allclose([float(v) for v in g], fd, rtol=1e-6)


def test_grad_through_permutation():
    # jax.grad(lambda x: sum(permutation(PRNGKey(1), x) * arange(4.)))(arange(4.) + 1)
    f = lambda x: nx.sum(nxr.permutation(K1, x) * nx.arange(4.0))  # noqa: E731
    x = nx.arange(4.0) + 1.0
    assert np.asarray(nx.grad(f)(x)).tolist() == [2.0, 3.0, 1.0, 0.0]
    assert np.asarray(nx.jit(nx.grad(f))(x)).tolist() == [2.0, 3.0, 1.0, 0.0]


def test_vmap_of_grad_and_grad_of_vmap():
    keys = nxr.split(nxr.PRNGKey(3), 3)
    # jax.vmap(jax.grad(lambda lo, k: sum(uniform(k, (3,), minval=lo, maxval=4.))))(LO3, keys)
    expected = [2.6357431411743164, 1.951244592666626, 2.39811372756958]
    g = nx.grad(lambda lo, k: nx.sum(nxr.uniform(k, (3,), minval=lo, maxval=4.0)))
    for how, h in {"vmap(grad)": nx.vmap(g), "jit(vmap(grad))": nx.jit(nx.vmap(g)),
                   "vmap(jit(grad))": nx.vmap(nx.jit(g))}.items():
        np.testing.assert_allclose(np.asarray(h(nx.asarray(LO3), keys)), expected, rtol=1e-6,
                                   err_msg=how)
    # jax.grad(lambda lo: sum(vmap(lambda k: truncated_normal(k, lo, 3., (2,)))(keys)))(-0.5)
    f = lambda lo: nx.sum(nx.vmap(lambda k: nxr.truncated_normal(k, lo, 3.0, (2,)))(keys))  # noqa
    for how, h in {"grad(vmap)": nx.grad(f), "jit(grad(vmap))": nx.jit(nx.grad(f))}.items():
        np.testing.assert_allclose(float(h(-0.5)), 4.929496765136719, rtol=1e-6, err_msg=how)


def test_vmap_of_grad_data_with_unbatched_key_keeps_the_derivative():
    """A vmapped grad through the bounds must not fall back to per-example concrete values
    (which would drop the derivative): every example gets its 1 - u."""
    u = np.asarray(nxr.uniform(K1, (4,)))
    g = nx.vmap(nx.grad(lambda lo: nx.sum(nxr.uniform(K1, (4,), minval=lo, maxval=9.0))))
    np.testing.assert_allclose(np.asarray(g(nx.asarray(LO3))), [float(np.sum(1 - u))] * 3,
                               rtol=1e-6)


# --- static sizes and bad keys under jit ----------------------------------------------------------

@pytest.mark.parametrize("fn, arg", [
    (lambda k, n: nxr.normal(k, (n,)), "shape"),
    (lambda k, n: nxr.uniform(k, n), "shape"),
    (lambda k, n: nxr.split(k, n), "num"),
    (lambda k, n: nxr.permutation(k, n), "x"),
    (lambda k, n: nxr.choice(k, n, (2,)), "a"),
])
def test_traced_size_is_a_clear_error(fn, arg):
    with pytest.raises(TypeError, match=f"^{arg}.*static"):
        nx.jit(fn)(K42, 3)
    # as a static argument it works, with the eager values
    _same_bits(nx.jit(fn, static_argnums=1)(K42, 3), fn(K42, 3))


def test_traced_bad_key_is_a_clear_error():
    with pytest.raises(TypeError, match="key must be a PRNG key.*int32"):
        nx.jit(lambda k: nxr.normal(k, (2,)))(nx.asarray(np.array([1, 2], np.int32)))
    with pytest.raises(ValueError, match="key must be a single key"):
        nx.jit(lambda k: nxr.uniform(k, (2,)))(nxr.split(K42, 2))
    with pytest.raises(TypeError, match="seed must be an integer scalar"):
        nx.jit(nxr.key)(nx.asarray(np.float32(1.0)))


# --- the threefry primitive on a batch of keys ----------------------------------------------------

def test_vmap_of_threefry_over_keys_matches_jax():
    keys = nxr.split(nxr.PRNGKey(3), 3)
    # jax.vmap(lambda k: threefry_2x32(k, arange(5, uint32)))(split(PRNGKey(3), 3))
    expected = [1151366793, 1161156951, 1962898398, 1850823165, 2872707266, 1216125341,
                1235256330, 4228807485, 3602481975, 609210065, 69488027, 3919163367,
                1849718426, 3080516797, 2323262387]
    f = lambda k: nxr.threefry_2x32(k, np.arange(5, dtype=np.uint32))  # noqa: E731
    for how, g in _vmaps(f).items():
        assert np.asarray(g(keys)).ravel().tolist() == expected, how
    # jax.vmap(threefry_2x32)(split(PRNGKey(3), 3), arange(12, uint32).reshape(3, 4) * 7)
    expected = [4203039823, 2671724350, 2278267082, 2586820300, 4199359338, 590294084,
                1213843278, 2736133188, 371561824, 3815235600, 2679381994, 4141615475]
    count = nx.asarray(np.arange(12, dtype=np.uint32).reshape(3, 4) * 7)
    for how, g in _vmaps(nxr.threefry_2x32).items():
        assert np.asarray(g(keys, count)).ravel().tolist() == expected, how


def test_jit_of_vmap_over_keys_hashes_in_one_call():
    """A batch of keys is one threefry equation under jit, not one per key."""
    keys = nxr.split(K42, 64)
    jaxpr = str(nx.make_jaxpr(nx.vmap(lambda k: nxr.normal(k, (3,))))(keys))
    assert jaxpr.count("threefry") == 1, jaxpr
    jaxpr = str(nx.make_jaxpr(nx.vmap(nx.vmap(lambda k: nxr.bits(k, (3,)))))(
        nx.reshape(keys, (8, 8, 2))))
    assert jaxpr.count("threefry") == 1, jaxpr


@pytest.mark.parametrize("batch, rest", [((3,), (5,)), ((3,), (4,)), ((2, 3), (2, 3)),
                                         ((4,), (1,)), ((4,), (0,)), ((0,), (6,)), ((3,), ())])
def test_threefry_kernel_batch_of_keys_is_row_by_row(batch, rest):
    from nx_rune._kernels import threefry as K
    rng = np.random.default_rng(len(batch) * 10 + len(rest))
    keys = rng.integers(0, 2**32, size=batch + (2,), dtype=np.uint32)
    count = rng.integers(0, 2**32, size=batch + rest, dtype=np.uint32)
    out = K.threefry_2x32_keys(keys, count)
    assert out.shape == count.shape and out.dtype == np.uint32
    b = int(np.prod(batch))
    flat_k, flat_c, flat_o = keys.reshape(b, 2), count.reshape((b,) + rest), \
        out.reshape((b,) + rest)
    for i in range(b):
        np.testing.assert_array_equal(flat_o[i], K.threefry_2x32(flat_k[i], np.asarray(flat_c[i])))


def test_threefry_kernel_batch_of_keys_rejects_bad_shapes():
    from nx_rune._kernels import threefry as K
    with pytest.raises(ValueError, match=r"key must have shape \(\*batch, 2\)"):
        K.threefry_2x32_keys(np.zeros((3, 3), np.uint32), np.zeros((3, 4), np.uint32))
    with pytest.raises(ValueError, match="count must start with the key's batch shape"):
        K.threefry_2x32_keys(np.zeros((3, 2), np.uint32), np.zeros((2, 4), np.uint32))
    with pytest.raises(TypeError, match="count must have dtype uint32"):
        K.threefry_2x32_keys(np.zeros((3, 2), np.uint32), np.zeros((3, 4), np.int32))


def test_jit_of_vmap_cases_of_test_vmap_random():
    """tests/test_vmap_random.py's JAX 0.10.2 golden values (jax.vmap of the samplers), now
    with jit around the vmap: keys, data, nested vmaps and in_axes=1 traced."""
    u32 = lambda *v: nx.asarray(np.array(v, np.uint32))  # noqa: E731
    out = nx.jit(nx.vmap(nxr.fold_in, in_axes=(None, 0)))(nxr.key(9), u32(0, 1, 2, 3))
    assert np.asarray(out).ravel().tolist() == [2822284597, 2722679661, 143080583, 4281670255,
                                                2676565412, 4109519897, 1877436067, 1979300842]
    out = nx.jit(nx.vmap(nxr.key))(nx.asarray(np.array([0, 1, 42], np.int32)))
    assert np.asarray(out).ravel().tolist() == [0, 0, 0, 1, 0, 42]
    out = nx.jit(nx.vmap(nx.vmap(lambda k: nxr.bits(k, (2,)))))(nxr.split(nxr.key(2), (2, 3)))
    assert np.asarray(out).ravel().tolist() == [
        2732858102, 2760943434, 4276425807, 2184892028, 2627571465, 271346348, 1266029147,
        1414847477, 36226637, 2270642596, 2734336992, 1246013995]
    out = nx.jit(nx.vmap(lambda k: nxr.uniform(k, (2,)), in_axes=1))(
        nx.transpose(nxr.split(nxr.key(8), 3)))
    assert np.asarray(out).ravel().tolist() == np.array(
        [0.9317672252655029, 0.534011960029602, 0.9837933778762817, 0.6027227640151978,
         0.06641614437103271, 0.9543479681015015], np.float32).tolist()
    out = nx.jit(nx.vmap(lambda k: nxr.choice(k, 10, (3,), replace=False)))(
        nxr.split(nxr.key(1), 3))
    assert np.asarray(out).ravel().tolist() == [6, 1, 2, 3, 2, 0, 7, 1, 2]
