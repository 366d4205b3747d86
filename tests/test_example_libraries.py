"""nx_rune.example_libraries: JAX's optimizers (init, update, get_params) triples and stax layers.

Expected values are JAX's, computed with jax 0.10.2 (jaxlib 0.10.2, CPU) and pinned in
tests/data/jax_nn_golden.json: optimizer trajectories (eager with Python int steps, and
jax.jit(update)), stax parameters, outputs and parameter gradients, and an MLP trained with
adam as JAX's examples write it.
"""
import json
import pathlib

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.example_libraries import optimizers, stax

GOLDEN = json.loads((pathlib.Path(__file__).parent / "data" / "jax_nn_golden.json").read_text())


def flat(tree):
    return [np.asarray(x) for x in nx.tree.leaves(tree)]


def assert_tree_close(got, expected, rtol, atol, exact=False):
    got = flat(got)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e, np.float64).reshape(g.shape)
        assert g.dtype == np.float32
        if exact:
            np.testing.assert_array_equal(g, e.astype(np.float32))
        else:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


# -- optimizers --------------------------------------------------------------------------------

P0 = {"w": np.array(GOLDEN["opt_p0"]["w"], np.float32),
      "b": (np.array(GOLDEN["opt_p0"]["b"][0], np.float32),)}


def schedule(name):
    return {"exponential_decay": lambda: optimizers.exponential_decay(0.1, 3, 0.5),
            "inverse_time_decay": lambda: optimizers.inverse_time_decay(0.1, 2, 0.5),
            "inverse_time_decay_staircase":
                lambda: optimizers.inverse_time_decay(0.1, 2, 0.5, staircase=True),
            "polynomial_decay": lambda: optimizers.polynomial_decay(0.1, 4, 0.01, 2.0),
            "piecewise_constant":
                lambda: optimizers.piecewise_constant([1, 3], [0.1, 0.05, 0.01])}[name]()


OPT_CASES = []
for _entry in GOLDEN["opt"]:
    _name, _args, _jit = _entry.split("|")
    OPT_CASES.append((_name, eval(_args), _jit == "True"))


@pytest.mark.parametrize("name,args,jit", OPT_CASES)
def test_optimizer_trajectories_match_jax(name, args, jit):
    # six updates with the gradients g(x) = x**3 - 0.5 x + 0.1 of the current params; step i
    # a Python int (JAX's eager values), or traced under jit(update) (jax.jit(update)'s values)
    made = tuple(schedule(a) if isinstance(a, str) else a for a in args)
    init, update, get_params = getattr(optimizers, name)(*made)
    if jit:
        update = nx.jit(update)
    state = init(P0)
    expected = GOLDEN["opt"][f"{name}|{args}|{jit}"]
    for i in range(6):
        grads = nx.tree.map(lambda x: x * x * x - 0.5 * x + 0.1, get_params(state))
        state = update(i, grads, state)
        p = get_params(state)
        assert p["w"].dtype == np.float32 and p["b"][0].dtype == np.float32
        got = np.concatenate([np.asarray(p["b"][0]).ravel(), np.asarray(p["w"]).ravel()])
        np.testing.assert_allclose(got, expected[i], rtol=2e-6, atol=5e-7,
                                   err_msg=f"{name}{args} step {i}")


def test_optimizer_state_is_a_pytree_and_packs():
    init, update, get_params = optimizers.momentum(0.1, 0.9)
    state = init(P0)
    assert isinstance(state, optimizers.OptimizerState)
    assert len(nx.tree.leaves(state)) == 4          # (x, velocity) per params leaf
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    back = optimizers.pack_optimizer_state(marked)
    assert back.tree_def == state.tree_def and back.subtree_defs == state.subtree_defs
    for a, b in zip(nx.tree.leaves(back), nx.tree.leaves(state)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": 1.0})
    np.testing.assert_array_equal(get_params(init(P0))["w"], P0["w"])


def test_optimizer_bad_input():
    init, update, get_params = optimizers.adam(0.1)
    state = init(P0)
    with pytest.raises(TypeError, match="gradient tree"):
        update(0, {"w": P0["w"]}, state)
    with pytest.raises(TypeError):
        optimizers.sgd(np.ones(3))
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="sequences"):
        optimizers.piecewise_constant(1, [0.1, 0.2])


def test_make_schedule_l2_norm_clip_grads():
    assert optimizers.make_schedule(0.5)(7) == 0.5
    f = optimizers.exponential_decay(1.0, 1, 0.5)
    assert optimizers.make_schedule(f) is f
    g = {"a": np.array([3.0, 4.0], np.float32), "b": np.array([[12.0]], np.float32)}
    assert float(optimizers.l2_norm(g)) == 13.0
    clipped = optimizers.clip_grads(g, 6.5)
    np.testing.assert_allclose(clipped["a"], [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(clipped["b"], [[6.0]], rtol=1e-6)
    same = optimizers.clip_grads(g, 20.0)
    np.testing.assert_array_equal(same["a"], g["a"])


def test_schedules_accept_traced_steps():
    for s in ("exponential_decay", "inverse_time_decay", "inverse_time_decay_staircase",
              "polynomial_decay", "piecewise_constant"):
        f = schedule(s)
        for i in (0, 2, 5):
            eager = float(f(i))
            assert float(nx.jit(f)(i)) == pytest.approx(eager, rel=1e-6), (s, i)


def test_update_is_differentiable():
    # the update is written with nx's array functions: its derivative in the gradient is
    # -step_size for sgd
    init, update, get_params = optimizers.sgd(0.25)
    d = nx.grad(lambda g: get_params(update(0, g, init(np.float64(1.0)))))(np.float64(0.3))
    assert float(d) == -0.25


# -- stax --------------------------------------------------------------------------------------

def model(spec):
    return eval(spec, {"L": stax})


STAX_CASES = GOLDEN["stax"]


@pytest.mark.parametrize("case", STAX_CASES, ids=[c["spec"][:60] for c in STAX_CASES])
def test_stax_layers_match_jax(case):
    rs = np.random.RandomState(1)
    for c in STAX_CASES:                       # the inputs of the cases, drawn in order
        x = rs.randn(*c["x_shape"]).astype(np.float32)
        if c is case:
            break
    init, apply = model(case["spec"])
    out_shape, params = init(nx.random.key(3), tuple(case["input_shape"]))
    assert tuple(out_shape) == tuple(case["out_shape"])
    # same keys, same initializers: JAX's parameters (glorot_normal goes through the
    # truncated normal, equal to JAX's to an ulp or two)
    assert_tree_close(params, case["params"], rtol=1e-6, atol=1e-7)
    y = apply(params, x)
    np.testing.assert_allclose(y, np.asarray(case["y"]).reshape(y.shape), rtol=2e-5, atol=2e-6)
    grads = nx.grad(lambda p: (apply(p, x) ** 2).sum())(params)
    assert_tree_close(grads, case["grad"], rtol=1e-4, atol=1e-5)


def test_stax_under_jit_and_vmap():
    init, apply = stax.serial(stax.Conv(3, (2, 2), padding="SAME"), stax.Relu,
                              stax.MaxPool((2, 2)), stax.Flatten, stax.Dense(2))
    _, params = init(nx.random.key(0), (-1, 5, 4, 2))
    x = np.random.RandomState(3).randn(3, 5, 4, 2).astype(np.float32)
    eager = np.asarray(apply(params, x))
    np.testing.assert_allclose(nx.jit(apply)(params, x), eager, rtol=1e-6, atol=1e-7)
    per_example = nx.vmap(lambda xi: apply(params, xi[None])[0])(x)
    np.testing.assert_allclose(per_example, eager, rtol=1e-6, atol=1e-7)


def test_stax_conv_and_pool_derivatives_against_finite_differences():
    rs = np.random.RandomState(4)
    x = rs.randn(2, 5, 4, 2)
    w = rs.randn(3, 2, 2, 3) * 0.5
    _, conv = stax.Conv(3, (3, 2), (2, 1), "SAME")
    nx.check_grads(lambda x, w: conv((w, np.zeros(3)), x), (x, w), order=2)
    _, convt = stax.ConvTranspose(2, (2, 3), (2, 2), "SAME")
    nx.check_grads(lambda x, w: convt((w, np.zeros(2)), x), (x, rs.randn(2, 3, 2, 2)), order=1)
    _, pool = stax.AvgPool((2, 2), (1, 2), "SAME")
    nx.check_grads(lambda x: pool((), x), (x,), order=1)
    _, pool = stax.MaxPool((2, 2), (2, 1))
    nx.check_grads(lambda x: pool((), x), (x,), order=1)


def test_dropout_matches_jax():
    init, apply = stax.Dropout(0.7)
    assert init(None, (3, 4)) == ((3, 4), ())
    y = apply((), nx.ones((3, 4)), rng=nx.random.key(5))
    np.testing.assert_array_equal(y, np.asarray(GOLDEN["dropout"], np.float32).reshape(3, 4))
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), nx.ones((3, 4)))
    _, apply = stax.Dropout(0.7, mode="test")
    # (JAX's stax asks for the key in every mode)
    np.testing.assert_array_equal(apply((), nx.ones(2), rng=nx.random.key(0)), [1, 1])


def test_stax_bad_input():
    init, apply = stax.Conv(2, (3, 3))
    with pytest.raises(ValueError, match="padding"):
        stax.Conv(2, (3, 3), padding="FULL")[0](nx.random.key(0), (1, 5, 5, 1))
    _, params = init(nx.random.key(0), (1, 5, 5, 1))
    with pytest.raises(ValueError, match="channels"):
        apply(params, np.ones((1, 5, 5, 2), np.float32))
    with pytest.raises(ValueError, match="does not fit"):
        apply(params, np.ones((1, 2, 2, 1), np.float32))
    with pytest.raises(ValueError, match="dimension_numbers"):
        stax.GeneralConv(("NHWC", "HWIX", "NHWC"), 2, (3, 3))


# -- end to end: a stax MLP trained with adam ----------------------------------------------------

def _mlp_data():
    rs = np.random.RandomState(0)
    X = rs.randn(16, 5).astype(np.float32)
    Y = rs.randint(0, 4, 16)
    return X, Y


@pytest.mark.parametrize("jit", [False, True])
def test_mlp_training_reproduces_jax_losses(jit):
    # JAX's example, with only `jax` renamed to `nx_rune` (and jax.nn.one_hot to nx.nn.one_hot)
    X, Y = _mlp_data()
    init_random_params, predict = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(8),
                                              stax.Tanh, stax.Dense(4), stax.LogSoftmax)

    def loss(params, batch):
        inputs, targets = batch
        return -nx.numpy.mean(nx.numpy.sum(predict(params, inputs) * targets, axis=1))

    opt_init, opt_update, get_params = optimizers.adam(1e-2)

    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, nx.grad(loss)(params, batch), opt_state)
    if jit:
        update = nx.jit(update)
    _, init_params = init_random_params(nx.random.PRNGKey(0), (-1, 5))
    assert_tree_close(init_params, GOLDEN["mlp"]["init_params"], rtol=1e-6, atol=1e-7)
    opt_state = opt_init(init_params)
    batch = (X, nx.nn.one_hot(Y, 4))
    losses = []
    for i in range(10):
        losses.append(float(loss(get_params(opt_state), batch)))
        opt_state = update(i, opt_state, batch)
    losses.append(float(loss(get_params(opt_state), batch)))
    np.testing.assert_allclose(losses, GOLDEN["mlp"]["losses"], rtol=1e-5)
    assert losses[-1] < losses[0]
    assert_tree_close(get_params(opt_state), GOLDEN["mlp"]["final_params"], rtol=1e-4,
                      atol=1e-5)
