"""nx_rune.nn: JAX's jax.nn functions and initializers.

Expected values are JAX's, computed with jax 0.10.2 (jaxlib 0.10.2, CPU) and pinned in
tests/data/jax_nn_golden.json (float64 entries with jax_enable_x64); derivatives are also
checked against float64 central finite differences (nx.check_grads).
"""
import json
import pathlib

import numpy as np
import pytest

import nx_rune as nx
import nx_rune.nn as nn
from nx_rune.nn import initializers as ini

GOLDEN = json.loads((pathlib.Path(__file__).parent / "data" / "jax_nn_golden.json").read_text())
DTYPES = {"f32": np.float32, "f64": np.float64}

ACTS = ["relu", "relu6", "identity", "sigmoid", "log_sigmoid", "softplus", "sparse_plus",
        "sparse_sigmoid", "soft_sign", "silu", "mish", "elu", "selu", "celu", "leaky_relu",
        "hard_tanh", "hard_sigmoid", "hard_silu", "gelu", "gelu_exact", "squareplus", "log1mexp",
        "tanh"]
WITH_ARGS = {"elu_a": (nn.elu, 0.5), "celu_a": (nn.celu, 2.0), "leaky_relu_a": (nn.leaky_relu, 0.2),
             "squareplus_b": (nn.squareplus, 1.0)}


def act(name):
    if name == "gelu_exact":
        return lambda x: nn.gelu(x, approximate=False)
    if name in WITH_ARGS:
        f, a = WITH_ARGS[name]
        return lambda x: f(x, a)
    return getattr(nn, name)


def assert_close_to_jax(got, expected, dtype, scale=None, ulps=16):
    """got matches JAX's values: the same dtype, nan and inf where JAX has them, and the finite
    entries within ``ulps`` units of roundoff of max(1, |scale|) (the elementary functions of
    XLA and NumPy differ in their last bits)."""
    got = np.asarray(got)
    expected = np.asarray(expected, dtype=np.float64).reshape(got.shape)
    assert got.dtype == dtype, (got.dtype, dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    inf = np.isinf(expected)
    np.testing.assert_array_equal(got[inf], expected[inf])
    fin = np.isfinite(expected)
    scale = np.ones_like(expected) if scale is None else \
        np.maximum(1.0, np.abs(np.broadcast_to(np.asarray(scale, np.float64), expected.shape)))
    scale = np.where(np.isfinite(scale), scale, 1.0)     # (an infinite input: a finite bound)
    tol = ulps * np.finfo(dtype).eps * np.maximum(scale, np.abs(expected))
    err = np.abs(got[fin].astype(np.float64) - expected[fin])
    assert np.all(err <= tol[fin]), (got[fin], expected[fin], err.max())


# -- activations -----------------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(DTYPES))
@pytest.mark.parametrize("name", ACTS + sorted(WITH_ARGS))
def test_activation_values_match_jax(name, key):
    dt = DTYPES[key]
    x = np.asarray(GOLDEN["act_x"], dt)
    assert_close_to_jax(act(name)(x), GOLDEN[f"act_{key}"][name], dt, scale=x)


def test_activation_edges():
    # spot checks in words: the kinks, the limits, nan
    x = np.array([-np.inf, -1.0, 0.0, 6.0, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(nn.relu(x), [0, 0, 0, 6, np.inf, np.nan])
    np.testing.assert_array_equal(nn.relu6(x), [0, 0, 0, 6, 6, np.nan])
    np.testing.assert_array_equal(nn.softplus(x)[[0, 4]], [0, np.inf])
    np.testing.assert_array_equal(nn.sigmoid(x)[[0, 2, 4]], [0, 0.5, 1])
    np.testing.assert_array_equal(nn.hard_tanh(x), [-1, -1, 0, 1, 1, np.nan])
    assert np.isnan(nn.log1mexp(np.float32(-1.0)))      # log(1 - e) of a negative: undefined
    assert nn.log1mexp(np.float32(0.0)) == -np.inf


@pytest.mark.parametrize("name,dtype", [
    ("relu", np.int32), ("hard_tanh", np.int32), ("identity", np.int32),
    ("relu6", np.float32), ("leaky_relu", np.float32), ("elu", np.float32),
    ("softplus", np.float32), ("sparse_plus", np.float32), ("gelu", np.float32),
    ("sigmoid", np.float32)])
def test_integer_inputs_keep_or_leave_the_integer_dtype_as_jax(name, dtype):
    x = np.array([-3, 0, 2, 7], np.int32)
    out = act(name)(x)
    assert out.dtype == dtype
    np.testing.assert_allclose(np.asarray(out, np.float64),
                               np.asarray(act(name)(x.astype(np.float32)), np.float64),
                               rtol=1e-6)


def test_aliases():
    assert nn.swish is nn.silu and nn.hard_swish is nn.hard_silu and nn.tanh is nx.tanh
    assert nx.nn is nn


# -- derivatives ---------------------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(DTYPES))
@pytest.mark.parametrize("name", [a for a in ACTS if a != "identity"])
def test_activation_derivatives_match_jax(name, key):
    # at the kinks (0 for relu and elu, 0 and 6 for relu6, -1 and 1 for hard_tanh) as JAX's
    # derivative rules say: relu'(0) = 0, relu6'(0) = relu6'(6) = 0
    dt = DTYPES[key]
    x = np.asarray(GOLDEN["grad_x"], dt)
    assert_close_to_jax(nx.vmap(nx.grad(act(name)))(x), GOLDEN[f"grad_{key}"][name], dt,
                        scale=x, ulps=64)


def test_relu_derivative_at_the_kinks():
    g = nx.vmap(nx.grad(nn.relu))(np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(g, [0, 0, 1])
    g = nx.vmap(nx.grad(nn.relu6))(np.array([0.0, 3.0, 6.0, 7.0]))
    np.testing.assert_array_equal(g, [0, 1, 0, 0])
    g = nx.vmap(nx.grad(nn.log1mexp))(np.array([0.0, 1.0]))
    assert g[0] == np.inf and np.isfinite(g[1])


# points away from the kinks, so that finite differences apply
SMOOTH = np.array([-2.7, -0.6, 0.3, 1.7, 4.1])


@pytest.mark.parametrize("name", ["sigmoid", "log_sigmoid", "softplus", "soft_sign", "silu",
                                  "mish", "elu", "selu", "celu", "leaky_relu", "gelu",
                                  "gelu_exact", "squareplus", "hard_sigmoid", "hard_silu",
                                  "sparse_plus", "relu", "relu6", "hard_tanh", "tanh"])
def test_activation_derivatives_against_finite_differences(name):
    nx.check_grads(act(name), (SMOOTH,), order=2)


def test_log1mexp_derivatives_against_finite_differences():
    nx.check_grads(nn.log1mexp, (np.array([0.05, 0.5, 2.0, 9.0]),), order=2)


def test_parameter_derivatives_against_finite_differences():
    nx.check_grads(lambda a: nn.elu(SMOOTH, a), (np.float64(0.7),), order=2)
    nx.check_grads(lambda a: nn.celu(SMOOTH, a), (np.float64(1.3),), order=2)
    nx.check_grads(lambda s: nn.leaky_relu(SMOOTH, s), (np.float64(0.1),), order=1)
    nx.check_grads(lambda b: nn.squareplus(SMOOTH, b), (np.float64(2.0),), order=2)


# -- softmax, logsumexp, standardize, glu ----------------------------------------------------------

def _mat(key):
    return np.asarray(GOLDEN["mat"], DTYPES[key])


def _mat_inf(key):
    m = _mat(key).copy()
    m[0, 1] = np.inf
    m[1, :] = -np.inf
    m[2, 2] = np.nan
    return m


MASK = np.array(GOLDEN["mask"])
AXES = [-1, 0, None, (0, 1)]


def _axis_tag(ax, w):
    return f"{ax}|{w is not None}"


@pytest.mark.parametrize("key", sorted(DTYPES))
@pytest.mark.parametrize("ax", AXES)
@pytest.mark.parametrize("masked", [False, True])
def test_softmax_family_matches_jax(key, ax, masked):
    dt, w = DTYPES[key], (MASK if masked else None)
    red = GOLDEN[f"red_{key}"]
    t = _axis_tag(ax, w)
    m, m2 = _mat(key), _mat_inf(key)
    for f in ("softmax", "log_softmax"):
        assert_close_to_jax(getattr(nn, f)(m, axis=ax, where=w), red[f"{f}|{t}"], dt, scale=10)
        assert_close_to_jax(getattr(nn, f)(m2, axis=ax, where=w), red[f"{f}_inf|{t}"], dt,
                            scale=10)
    assert_close_to_jax(nn.logsumexp(m, axis=ax, where=w), red[f"logsumexp|{t}"], dt, scale=10)
    assert_close_to_jax(nn.logsumexp(m, axis=ax, where=w, keepdims=True),
                        red[f"logsumexp_kd|{t}"], dt, scale=10)
    b = np.asarray(GOLDEN["b"], dt)
    r, s = nn.logsumexp(m, axis=ax, b=b, return_sign=True, where=w)
    assert_close_to_jax(r, red[f"logsumexp_b|{t}"], dt, scale=10)
    assert_close_to_jax(s, red[f"logsumexp_sign|{t}"], dt)
    assert_close_to_jax(nn.logmeanexp(m, axis=ax, where=w), red[f"logmeanexp|{t}"], dt, scale=10)
    for alg in ("fast", "stable"):
        # the one-pass variance E[x^2] - E[x]^2 cancels: roundoff of either side is amplified
        # where few entries take part
        ulps = 2**24 if (alg == "fast" and dt == np.float64) else 64
        assert_close_to_jax(nn.standardize(m, axis=ax, where=w, algorithm=alg),
                            red[f"standardize_{alg}|{t}"], dt, scale=10, ulps=ulps)


@pytest.mark.parametrize("key", sorted(DTYPES))
def test_standardize_given_moments_and_glu_match_jax(key):
    dt, red, m = DTYPES[key], GOLDEN[f"red_{key}"], _mat(key)
    assert_close_to_jax(nn.standardize(m, 0, mean=1., variance=2., epsilon=0.1),
                        red["standardize_given"], dt, scale=10)
    assert_close_to_jax(nn.glu(m[:, :4]), red["glu"], dt, scale=10)
    assert_close_to_jax(nn.glu(m[:2], 0), red["glu0"], dt, scale=10)
    assert nn.glu(m[:, :4]).shape == (3, 2) and nn.glu(m[:2], 0).shape == (1, 5)


@pytest.mark.parametrize("key", sorted(DTYPES))
@pytest.mark.parametrize("f", ["softmax", "log_softmax"])
@pytest.mark.parametrize("masked", [False, True])
def test_softmax_gradient_with_infinities_matches_jax(key, f, masked):
    # rows holding +inf, only -inf, and nan: JAX's gradient (its stable rule) entry for entry
    dt, m2 = DTYPES[key], _mat_inf(key)
    wt = nx.arange(5.0, dtype=dt)
    if masked:
        g = nx.grad(lambda t: nx.where(MASK, getattr(nn, f)(t, axis=1, where=MASK) * wt,
                                       0).sum())(m2)
    else:
        g = nx.grad(lambda t: (getattr(nn, f)(t, axis=1) * wt).sum())(m2)
    assert_close_to_jax(g, GOLDEN[f"red_{key}"][f"grad_{f}|{masked}"], dt, scale=10, ulps=64)


@pytest.mark.parametrize("f", ["softmax", "log_softmax"])
def test_softmax_derivatives_against_finite_differences(f):
    x = np.asarray(GOLDEN["mat"])
    nx.check_grads(lambda t: getattr(nn, f)(t, axis=1), (x,), order=2)
    # (the masked-out entries are constants, -inf for log_softmax: left out of the check)
    nx.check_grads(lambda t: nx.where(MASK, getattr(nn, f)(t, axis=(0, 1), where=MASK), 0),
                   (x,), order=2)
    nx.check_grads(lambda t: nn.logsumexp(t, axis=0, where=MASK | np.eye(3, 5, 2, dtype=bool)),
                   (x,), order=2)
    nx.check_grads(lambda t: nn.standardize(t, axis=1), (x,), order=2)
    nx.check_grads(lambda t: nn.standardize(t, axis=1, where=MASK | np.eye(3, 5, dtype=bool),
                                            algorithm="stable"), (x,), order=2)


def test_softmax_masked_entries():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    w = np.array([True, False, True])
    s = nn.softmax(x, where=w)
    np.testing.assert_array_equal(np.asarray(s)[:, 1], [0, 0])
    np.testing.assert_allclose(np.asarray(s).sum(axis=1), [1, 1], rtol=1e-6)
    ls = nn.log_softmax(x, where=w)
    np.testing.assert_array_equal(np.asarray(ls)[:, 1], [-np.inf, -np.inf])


# -- one_hot ---------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0, 1, 2, -3])
def test_one_hot_against_numpy(axis):
    x = np.array([[0, 2, -1], [3, 1, 1]], np.int32)
    expected = np.moveaxis((x[..., None] == np.arange(3)).astype(np.float32), -1, axis)
    out = nn.one_hot(x, 3, axis=axis)
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_one_hot_dtype_and_errors():
    out = nn.one_hot([0, 2], 4, dtype=np.int8)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, [[1, 0, 0, 0], [0, 0, 1, 0]])
    with pytest.raises(TypeError, match="num_classes"):
        nn.one_hot([0, 1], 2.5)
    with pytest.raises(ValueError, match="num_classes"):
        nn.one_hot([0, 1], -1)
    with pytest.raises(TypeError, match="axis"):
        nn.one_hot([0, 1], 2, axis="batch")
    with pytest.raises(ValueError, match="axis"):
        nn.one_hot([0, 1], 2, axis=2)


# -- under jit and vmap -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["relu", "relu6", "gelu", "gelu_exact", "elu", "selu", "mish",
                                  "softplus", "log_sigmoid", "hard_silu", "log1mexp"])
def test_activations_under_jit_and_vmap(name):
    x = np.asarray(GOLDEN["act_x"], np.float32).reshape(3, 7)
    eager = np.asarray(act(name)(x))
    np.testing.assert_allclose(nx.jit(act(name))(x), eager, rtol=2e-6, atol=1e-30)
    np.testing.assert_allclose(nx.vmap(act(name))(x), eager, rtol=2e-6, atol=1e-30)


def test_reductions_under_jit_and_vmap():
    x = np.asarray(GOLDEN["mat"], np.float32)
    for f in (lambda t: nn.softmax(t, where=MASK[0]), lambda t: nn.log_softmax(t),
              lambda t: nn.logsumexp(t), lambda t: nn.standardize(t),
              lambda t: nn.one_hot(nx.argmax(t), 5), lambda t: nn.glu(t[:4])):
        rows = np.stack([np.asarray(f(r)) for r in x])
        np.testing.assert_allclose(nx.vmap(f)(x), rows, rtol=2e-6, atol=1e-7)
        np.testing.assert_allclose(nx.jit(nx.vmap(f))(x), rows, rtol=2e-6, atol=1e-7)
    g = nx.jit(nx.grad(lambda t: nn.logsumexp(t, where=MASK)))(x)
    np.testing.assert_allclose(g, nx.grad(lambda t: nn.logsumexp(t, where=MASK))(x), rtol=1e-6)


# -- bad input -------------------------------------------------------------------------------

def test_bad_input_raises_clear_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match="approximate"):
        nn.gelu(x, approximate="tanh")
    with pytest.raises(ValueError, match="glu.*even"):
        nn.glu(x)
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(x, algorithm="two-pass")
    with pytest.raises(TypeError, match="where"):
        nn.softmax(x, where=np.ones((2, 3)))
    with pytest.raises(ValueError, match="where"):
        nn.log_softmax(x, where=np.ones((4,), bool))
    with pytest.raises(ValueError):
        nn.softmax(x, axis=2)


# -- initializers ----------------------------------------------------------------------------

KEY = nx.random.key(42)
# uniform draws are bit-exact with JAX, and so are float32 normal and truncated normal draws
# (XLA's own float32 log1p and erf); float64 ones agree with JAX's to an ulp or two (XLA's
# float64 log1p), orthogonal goes through a QR decomposition
EXACT = ("uniform", "glorot_uniform", "lecun_uniform", "he_uniform", "constant", "zeros",
         "ones")
EXACT_F32 = ("normal", "truncated_normal", "glorot_normal", "lecun_normal", "he_normal")


def _init_cases(key):
    for entry in GOLDEN[f"init_{key}"]:
        if entry.startswith(("vs|", "vsc|", "delta")):
            continue
        name, args, shape = entry.split("|")
        yield key, name, eval(args), eval(shape)


INIT_CASES = [c for k in sorted(DTYPES) for c in _init_cases(k)]


def _compare_init(got, expected, dt, exact, rtol=None):
    got = np.asarray(got)
    assert got.dtype == dt
    expected = np.asarray(expected, np.float64).reshape(got.shape)
    if exact:
        np.testing.assert_array_equal(got, expected.astype(dt))
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol or 8 * np.finfo(dt).eps,
                                   atol=(rtol or 8 * np.finfo(dt).eps) * np.abs(expected).max())


@pytest.mark.parametrize("key,name,args,shape", INIT_CASES)
def test_initializers_match_jax(key, name, args, shape):
    dt = DTYPES[key]
    init = getattr(ini, name) if args is None else getattr(ini, name)(*args)
    got = init(KEY, shape, dt)
    exact = name in EXACT or (dt == np.float32 and name in EXACT_F32)
    _compare_init(got, GOLDEN[f"init_{key}"][f"{name}|{args}|{shape}"], dt, exact,
                  rtol=1e-5 if (name == "orthogonal" and dt == np.float32) else None)


@pytest.mark.parametrize("shape", [(3, 3, 4), (3, 2, 2, 3), (2, 2, 2, 3, 3)])
@pytest.mark.parametrize("key", sorted(DTYPES))
def test_delta_orthogonal_matches_jax(key, shape):
    dt = DTYPES[key]
    got = ini.delta_orthogonal()(KEY, shape, dt)
    _compare_init(got, GOLDEN[f"init_{key}"][f"delta_orthogonal|()|{shape}"], dt, False,
                  rtol=1e-5 if dt == np.float32 else None)


VS_KW = [{}, {"in_axis": 0, "out_axis": 1, "batch_axis": (2,)},
         {"in_axis": (0, 1), "out_axis": -1}]


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
@pytest.mark.parametrize("dist", ["truncated_normal", "normal", "uniform"])
@pytest.mark.parametrize("i", range(3))
def test_variance_scaling_matches_jax(mode, dist, i):
    for key, dt in DTYPES.items():
        got = ini.variance_scaling(0.7, mode, dist, **VS_KW[i])(KEY, (2, 3, 2, 2), dt)
        _compare_init(got, GOLDEN[f"init_{key}"][f"vs|{mode}|{dist}|{i}"], dt,
                      dist == "uniform" or dt == np.float32)
    # complex64: a disk (uniform) or a modulus-truncated complex normal
    got = np.asarray(ini.variance_scaling(0.7, mode, dist, **VS_KW[i])(KEY, (2, 3, 2, 2),
                                                                        np.complex64))
    re, im = GOLDEN["init_f32"][f"vsc|{mode}|{dist}|{i}"]
    assert got.dtype == np.complex64
    # the modulus-truncated complex normal goes through other transcendentals: close
    _compare_init(got.real, re, np.float32, dist != "truncated_normal")
    _compare_init(got.imag, im, np.float32, dist != "truncated_normal")


def test_initializer_defaults_and_builders():
    assert ini.glorot_uniform()(KEY, (3, 4)).dtype == np.float32
    assert ini.xavier_uniform is ini.glorot_uniform and ini.kaiming_normal is ini.he_normal
    assert ini.xavier_normal is ini.glorot_normal and ini.kaiming_uniform is ini.he_uniform
    np.testing.assert_array_equal(ini.zeros(KEY, (2, 2)), np.zeros((2, 2), np.float32))
    np.testing.assert_array_equal(ini.constant(3, np.int32)(KEY, (2,)), [3, 3])
    assert isinstance(ini.glorot_normal(), ini.Initializer)
    # the builder's dtype is the default of the initializer it returns
    assert ini.normal(dtype=np.float64)(KEY, (2,)).dtype == np.float64
    # an orthogonal draw is orthogonal: columns orthonormal when the shape is tall, rows when
    # it is wide; a zero-size shape gives zeros
    q = np.asarray(ini.orthogonal()(KEY, (5, 3), np.float64))
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)
    q = np.asarray(ini.orthogonal(scale=2.0)(KEY, (3, 5), np.float64))
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-12)
    assert ini.orthogonal()(KEY, (0, 3)).shape == (0, 3)


def test_initializers_under_jit_give_the_eager_values():
    for init in (ini.glorot_uniform(), ini.he_normal(), ini.normal(0.5)):
        eager = np.asarray(init(KEY, (4, 3)))
        np.testing.assert_array_equal(nx.jit(lambda k: init(k, (4, 3)))(KEY), eager)


def test_initializer_bad_input():
    with pytest.raises(ValueError, match="mode"):
        ini.variance_scaling(1.0, "fan_max", "normal")
    with pytest.raises(ValueError, match="distribution"):
        ini.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="at least 2-D"):
        ini.glorot_normal()(KEY, (5,))
    with pytest.raises(ValueError, match="in_axis"):
        ini.variance_scaling(1.0, "fan_in", "normal", in_axis=4)(KEY, (2, 3))
    with pytest.raises(TypeError, match="dtype"):
        ini.he_uniform()(KEY, (2, 3), np.int32)
    with pytest.raises(ValueError, match="2-D"):
        ini.orthogonal()(KEY, (4,))
    with pytest.raises(ValueError, match="3-D, 4-D or 5-D"):
        ini.delta_orthogonal()(KEY, (3, 3))
    with pytest.raises(ValueError, match="fan_in"):
        ini.delta_orthogonal()(KEY, (3, 4, 2))
    with pytest.raises(NotImplementedError, match="out_sharding"):
        ini.normal()(KEY, (2,), out_sharding="x")
    with pytest.raises(TypeError, match="stddev"):
        ini.normal("big")


# -- dot_product_attention -------------------------------------------------------------------

def _attention_inputs():
    rs = np.random.RandomState(7)
    B, T, S, N, K, H = 2, 4, 5, 6, 3, 8
    q = rs.randn(B, T, N, H).astype(np.float32)
    k = rs.randn(B, S, K, H).astype(np.float32)
    v = rs.randn(B, S, K, H).astype(np.float32)
    bias = rs.randn(1, N, T, S).astype(np.float32)
    mask = rs.rand(B, 1, T, S) > 0.3
    return q, k, v, bias, mask


def _attention_cases(bias, mask):
    return {"plain": {}, "bias": {"bias": bias}, "mask": {"mask": mask},
            "causal": {"is_causal": True},
            "scale_bias_mask": {"scale": 0.3, "bias": bias, "mask": mask},
            "seq_lengths": {"query_seq_lengths": np.array([2, 4], np.int32),
                            "key_value_seq_lengths": np.array([5, 3], np.int32)},
            "window": {"local_window_size": (1, 2)},
            "window_causal": {"local_window_size": 1, "is_causal": True}}


@pytest.mark.parametrize("case", sorted(_attention_cases(None, None)))
def test_dot_product_attention_matches_jax(case):
    # grouped-query attention: 6 query heads over 3 key/value heads
    q, k, v, bias, mask = _attention_inputs()
    out = nn.dot_product_attention(q, k, v, **_attention_cases(bias, mask)[case])
    assert out.shape == q.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, np.reshape(GOLDEN["attention"][case], q.shape), rtol=1e-5,
                               atol=1e-6)


def test_dot_product_attention_residual_unbatched_and_gradient_match_jax():
    q, k, v, bias, mask = _attention_inputs()
    att = GOLDEN["attention"]
    out, lse = nn.dot_product_attention(q, k, v, mask=mask, return_residual=True)
    assert lse.shape == q.shape[:-1]
    np.testing.assert_allclose(out, np.reshape(att["residual"][0], q.shape), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(lse, np.reshape(att["residual"][1], lse.shape), rtol=1e-5,
                               atol=1e-6)
    out = nn.dot_product_attention(q[0], k[0], v[0])
    np.testing.assert_allclose(out, np.reshape(att["unbatched"], q[0].shape), rtol=1e-5,
                               atol=1e-6)
    grads = nx.grad(lambda q, k, v: (nn.dot_product_attention(q, k, v, bias=bias, mask=mask)
                                     ** 2).sum(), (0, 1, 2))(q, k, v)
    for g, e, x in zip(grads, att["grad"], (q, k, v)):
        np.testing.assert_allclose(g, np.reshape(e, x.shape), rtol=1e-4, atol=1e-5)


def test_dot_product_attention_derivatives_jit_and_errors():
    q, k, v, bias, mask = _attention_inputs()
    q64, k64, v64 = (a[:1, :3, :2].astype(np.float64) for a in (q, k, v))
    # (float64 inputs: logits in float64, the softmax in float32 as JAX; so a loose check)
    nx.check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True),
                   (q64, k64[:, :, :1], v64[:, :, :1]), order=1, atol=1e-3, rtol=1e-3, eps=1e-3)
    eager = np.asarray(nn.dot_product_attention(q, k, v, mask=mask, is_causal=True))
    np.testing.assert_allclose(
        nx.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, mask=mask, is_causal=True))(
            q, k, v), eager, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="multiple"):
        nn.dot_product_attention(q[:, :, :4], k, v)
    with pytest.raises(ValueError, match="value"):
        nn.dot_product_attention(q, k, v[:, :4])
    with pytest.raises(ValueError, match="mask dtype"):
        nn.dot_product_attention(q, k, v, mask=mask.astype(np.float32))
    with pytest.raises(ValueError, match="query_seq_lengths"):
        nn.dot_product_attention(q, k, v, query_seq_lengths=np.array([1, 2, 3], np.int32))
    with pytest.raises(NotImplementedError, match="cudnn"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
