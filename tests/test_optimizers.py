"""nx.optimizers: the updates step by step against optax's formulas written out in NumPy float64,
schedules against their closed forms, pytrees of parameters, and the error paths."""
import inspect
import math
import typing

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import optimizers as optim
from nx_rune import tree_util as tu

rng = np.random.default_rng(1)

# the problem: L(p) = 0.5 p.A p - c.p + sum(sin p) over the concatenation p of all leaves
N = 8
_M = rng.normal(size=(N, N))
A = _M @ _M.T / N + np.eye(N)
C = rng.normal(size=N)
SHAPES = {"b": (2,), "w": (3, 2)}     # dict leaves in sorted-key order: b, then w


def np_loss(p):
    return 0.5 * p @ A @ p - C @ p + np.sum(np.sin(p))


def np_grad(p):
    return A @ p - C + np.cos(p)


def to_tree(p, kind="dict", dtype=np.float64):
    b, w = p[:2].astype(dtype), p[2:].reshape(3, 2).astype(dtype)
    if kind == "dict":
        return {"w": nx.asarray(w), "b": nx.asarray(b)}
    if kind == "list":
        return [nx.asarray(b), nx.asarray(w)]
    return Layer(nx.asarray(b), nx.asarray(w))


def from_tree(tree):
    if isinstance(tree, dict):
        b, w = tree["b"], tree["w"]
    elif isinstance(tree, Layer):
        b, w = tree.b, tree.w
    else:
        b, w = tree
    return np.concatenate([np.asarray(b, np.float64).ravel(), np.asarray(w, np.float64).ravel()])


@tu.register_pytree_node_class
class Layer:
    def __init__(self, b, w):
        self.b, self.w = b, w

    def tree_flatten(self):
        return (self.b, self.w), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def nx_loss(tree):
    b, w = (tree["b"], tree["w"]) if isinstance(tree, dict) else \
        (tree.b, tree.w) if isinstance(tree, Layer) else tree
    p = nx.concatenate([b, nx.reshape(w, (-1,))])
    return 0.5 * nx.sum(p * (nx.asarray(A).astype(p.dtype) @ p)) - \
        nx.sum(nx.asarray(C).astype(p.dtype) * p) + nx.sum(nx.sin(p))


# -- the reference formulas (optax's, elementwise on the concatenated vector) -------------------

def ref_sgd(p, steps, lr, momentum=0.0, nesterov=False):
    t = np.zeros_like(p)
    out = []
    for k in range(steps):
        g = np_grad(p)
        t = g + momentum * t
        d = g + momentum * t if nesterov else t
        p = p - lr(k) * d
        out.append(p)
    return out


def ref_adam(p, steps, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=None):
    m, v = np.zeros_like(p), np.zeros_like(p)
    out = []
    for k in range(1, steps + 1):
        g = np_grad(p)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        u = (m / (1 - b1 ** k)) / (np.sqrt(v / (1 - b2 ** k)) + eps)
        if weight_decay is not None:
            u = u + weight_decay * p
        p = p - lr(k - 1) * u
        out.append(p)
    return out


def ref_rmsprop(p, steps, lr, decay=0.9, eps=1e-8):
    v = np.zeros_like(p)
    out = []
    for k in range(steps):
        g = np_grad(p)
        v = decay * v + (1 - decay) * g * g
        p = p - lr(k) * g / np.sqrt(v + eps)
        out.append(p)
    return out


def run(opt, p0, steps, kind="dict", dtype=np.float64, pass_params=True):
    params = to_tree(p0, kind, dtype)
    state = opt.init(params)
    out = []
    for _ in range(steps):
        grads = nx.grad(nx_loss)(params)
        updates, state = opt.update(grads, state, params if pass_params else None)
        params = optim.apply_updates(params, updates)
        out.append(params)
    return out, state


P0 = rng.normal(size=N)
const = lambda v: (lambda k: v)  # noqa: E731

CASES = {
    "sgd": (lambda lr: optim.sgd(lr), lambda p, n, lr: ref_sgd(p, n, lr)),
    "sgd_momentum": (lambda lr: optim.sgd(lr, momentum=0.9),
                     lambda p, n, lr: ref_sgd(p, n, lr, 0.9)),
    "sgd_nesterov": (lambda lr: optim.sgd(lr, momentum=0.8, nesterov=True),
                     lambda p, n, lr: ref_sgd(p, n, lr, 0.8, True)),
    "adam": (lambda lr: optim.adam(lr), lambda p, n, lr: ref_adam(p, n, lr)),
    "adam_args": (lambda lr: optim.adam(lr, b1=0.5, b2=0.9, eps=1e-3),
                  lambda p, n, lr: ref_adam(p, n, lr, 0.5, 0.9, 1e-3)),
    "adamw": (lambda lr: optim.adamw(lr, weight_decay=0.1),
              lambda p, n, lr: ref_adam(p, n, lr, weight_decay=0.1)),
    "adamw_default": (lambda lr: optim.adamw(lr),
                      lambda p, n, lr: ref_adam(p, n, lr, weight_decay=1e-4)),
    "rmsprop": (lambda lr: optim.rmsprop(lr), lambda p, n, lr: ref_rmsprop(p, n, lr)),
    "rmsprop_args": (lambda lr: optim.rmsprop(lr, decay=0.5, eps=1e-2),
                     lambda p, n, lr: ref_rmsprop(p, n, lr, 0.5, 1e-2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_steps_match_the_formulas(name):
    make, ref = CASES[name]
    got, state = run(make(0.05), P0, 6)
    want = ref(P0, 6, const(0.05))
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(from_tree(g), w, rtol=1e-12, atol=1e-13,
                                   err_msg=f"{name} step {k + 1}")
    assert state.count == 6
    # and the optimizer does optimize: the loss went down
    assert np_loss(want[-1]) < np_loss(P0)


@pytest.mark.parametrize("name", ["sgd_momentum", "adam", "adamw", "rmsprop"])
def test_steps_with_a_schedule(name):
    make, ref = CASES[name]
    sched = optim.exponential_decay(0.1, transition_steps=2, decay_rate=0.5)
    got, _ = run(make(sched), P0, 5)
    want = ref(P0, 5, lambda k: 0.1 * 0.5 ** (k / 2))   # step k (0-based) uses schedule(k)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(from_tree(g), w, rtol=1e-12, atol=1e-13,
                                   err_msg=f"{name} step {k + 1}")
    # a plain function of the step works as a schedule too
    got, _ = run(make(lambda k: 0.02 * (k + 1)), P0, 3)
    want = ref(P0, 3, lambda k: 0.02 * (k + 1))
    np.testing.assert_allclose(from_tree(got[-1]), want[-1], rtol=1e-12)


@pytest.mark.parametrize("kind", ["list", "layer"])
@pytest.mark.parametrize("name", ["sgd_nesterov", "adamw", "rmsprop"])
def test_pytrees_of_params(kind, name):
    make, ref = CASES[name]
    got, state = run(make(0.05), P0, 4, kind=kind)
    assert all(isinstance(g, list if kind == "list" else Layer) for g in got)
    np.testing.assert_allclose(from_tree(got[-1]), ref(P0, 4, const(0.05))[-1], rtol=1e-12)
    for leaf in tu.tree_leaves(state)[1:]:
        assert isinstance(leaf, nx.Tensor)


def test_float32_params_keep_their_dtype():
    for make, ref in (CASES["adamw"], CASES["sgd_momentum"], CASES["rmsprop"]):
        got, state = run(make(0.05), P0, 3, dtype=np.float32)
        leaves = tu.tree_leaves(got[-1])
        assert [x.dtype for x in leaves] == [np.float32, np.float32]
        assert all(x.dtype == np.float32 for x in tu.tree_leaves(state) if hasattr(x, "dtype"))
        np.testing.assert_allclose(from_tree(got[-1]), ref(P0, 3, const(0.05))[-1], rtol=2e-4,
                                   atol=2e-5)


def test_state_is_a_pytree():
    opt = optim.adam(0.1)
    params = to_tree(P0)
    state = opt.init(params)
    assert isinstance(state, optim.AdamState) and state.count == 0
    np.testing.assert_array_equal(np.asarray(state.mu["w"]), np.zeros((3, 2)))
    # round trip through NumPy (e.g. a checkpoint) and carry on
    _, state = opt.update(nx.grad(nx_loss)(params), state, params)
    saved = tu.tree_map(lambda x: np.asarray(x) if isinstance(x, nx.Tensor) else x, state)
    restored = tu.tree_map(lambda x: nx.asarray(x) if isinstance(x, np.ndarray) else x, saved)
    assert tu.tree_structure(restored) == tu.tree_structure(state) and restored.count == 1
    u1, _ = opt.update(nx.grad(nx_loss)(params), restored, params)
    u2, _ = opt.update(nx.grad(nx_loss)(params), state, params)
    np.testing.assert_array_equal(np.asarray(u1["w"]), np.asarray(u2["w"]))


def test_an_update_is_differentiable():
    # d/dp0 of the loss after two Adam steps from p0 (the state after one step held fixed)
    opt = optim.adam(0.05)
    params = to_tree(P0)
    state = opt.init(params)
    _, state = opt.update(nx.grad(nx_loss)(params), state, params)

    def after_step(params):
        updates, _ = opt.update(nx.grad(nx_loss)(params), state, params)
        return nx_loss(optim.apply_updates(params, updates))

    m1 = 0.1 * np_grad(P0)              # the state the reference holds fixed
    v1 = 0.001 * np_grad(P0) ** 2

    def np_after_step(p):
        g = np_grad(p)
        m, v = 0.9 * m1 + 0.1 * g, 0.999 * v1 + 0.001 * g * g
        u = (m / (1 - 0.9 ** 2)) / (np.sqrt(v / (1 - 0.999 ** 2)) + 1e-8)
        return np_loss(p - 0.05 * u)
    g = from_tree(nx.grad(after_step)(params))
    eps = 1e-6
    fd = np.array([(np_after_step(P0 + eps * e) - np_after_step(P0 - eps * e)) / (2 * eps)
                   for e in np.eye(N)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


def test_adam_fits_a_least_squares_problem():
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.5, -2.0, 0.5]) + 0.3
    Xt, yt = nx.asarray(X), nx.asarray(y)
    params = {"w": nx.asarray(np.zeros(3)), "c": nx.asarray(np.zeros(()))}
    opt = optim.adam(optim.cosine_decay_schedule(0.1, 400, alpha=0.01))
    state = opt.init(params)
    loss = lambda p: nx.mean((Xt @ p["w"] + p["c"] - yt) ** 2)  # noqa: E731
    for _ in range(400):
        updates, state = opt.update(nx.grad(loss)(params), state)
        params = optim.apply_updates(params, updates)
    np.testing.assert_allclose(np.asarray(params["w"]), [1.5, -2.0, 0.5], atol=1e-3)
    np.testing.assert_allclose(float(params["c"]), 0.3, atol=1e-3)


# -- schedules (closed forms worked out by hand) ------------------------------------------------

def test_constant_and_linear_schedules():
    assert [optim.constant_schedule(0.3)(k) for k in (0, 5, 10 ** 6)] == [0.3, 0.3, 0.3]
    s = optim.linear_schedule(1.0, 0.0, transition_steps=4, transition_begin=2)
    assert [s(k) for k in (0, 2, 3, 4, 6, 9)] == [1.0, 1.0, 0.75, 0.5, 0.0, 0.0]
    s = optim.polynomial_schedule(1.0, 0.2, power=2, transition_steps=4)
    assert math.isclose(s(2), 0.8 * 0.25 + 0.2)
    assert optim.polynomial_schedule(0.7, 0.1, 1, transition_steps=0)(100) == 0.7


def test_exponential_decay():
    s = optim.exponential_decay(1.0, transition_steps=2, decay_rate=0.5)
    assert math.isclose(s(1), 0.5 ** 0.5) and math.isclose(s(4), 0.25) and s(0) == 1.0
    s = optim.exponential_decay(1.0, 2, 0.5, staircase=True)
    assert s(1) == 1.0 and s(3) == 0.5 and s(4) == 0.25
    s = optim.exponential_decay(1.0, 2, 0.5, transition_begin=2)
    assert s(1) == 1.0 and s(2) == 1.0 and math.isclose(s(4), 0.5)
    s = optim.exponential_decay(1.0, 2, 0.5, end_value=0.3)
    assert s(10) == 0.3 and math.isclose(s(2), 0.5)
    s = optim.exponential_decay(1.0, 1, 2.0, end_value=3.0)      # growth: end is an upper bound
    assert s(1) == 2.0 and s(5) == 3.0
    assert optim.exponential_decay(0.4, 0, 0.5)(50) == 0.4


def test_cosine_schedules():
    s = optim.cosine_decay_schedule(2.0, decay_steps=4, alpha=0.1)
    assert s(0) == 2.0 and math.isclose(s(2), 2.0 * (0.9 * 0.5 + 0.1))
    assert math.isclose(s(4), 0.2) and math.isclose(s(9), 0.2)
    s = optim.cosine_decay_schedule(2.0, 4, alpha=0.1, exponent=2.0)
    assert math.isclose(s(1), 2.0 * (0.9 * (0.5 * (1 + math.cos(math.pi / 4))) ** 2 + 0.1))
    s = optim.warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=4, decay_steps=10,
                                           end_value=0.1)
    got = [s(k) for k in (0, 2, 4, 7, 10, 20)]
    np.testing.assert_allclose(got, [0.0, 0.5, 1.0, 0.55, 0.1, 0.1], rtol=1e-12)


def test_piecewise_constant_and_join():
    s = optim.piecewise_constant_schedule(1.0, {6: 0.1, 3: 0.5})
    assert [s(k) for k in (0, 2, 3, 5, 6, 100)] == [1.0, 1.0, 0.5, 0.5, 0.05, 0.05]
    assert optim.piecewise_constant_schedule(0.2)(9) == 0.2
    j = optim.join_schedules([optim.constant_schedule(1.0), lambda k: 10.0 + k,
                              lambda k: 100.0 + k], [3, 5])
    assert [j(k) for k in (0, 2, 3, 4, 5, 7)] == [1.0, 1.0, 10.0, 11.0, 100.0, 102.0]


# -- errors -------------------------------------------------------------------------------------

def test_adamw_without_params_raises():
    opt = optim.adamw(0.1)
    params = to_tree(P0)
    state = opt.init(params)
    with pytest.raises(ValueError, match=r"params: adamw.*weight decay"):
        opt.update(nx.grad(nx_loss)(params), state)
    with pytest.raises(ValueError, match=r"params: adamw got a tree of structure"):
        opt.update(nx.grad(nx_loss)(params), state, [params["b"], params["w"]])


def test_update_errors():
    params = to_tree(P0)
    grads = nx.grad(nx_loss)(params)
    adam = optim.adam(0.1)
    with pytest.raises(TypeError, match=r"state: adam.update expects the AdamState.*SgdState"):
        adam.update(grads, optim.sgd(0.1, momentum=0.5).init(params))
    with pytest.raises(ValueError, match=r"grads: adam got a tree of structure PyTreeDef\(\[\*, "
                                         r"\*\]\).*params' structure PyTreeDef\(\{'b'"):
        adam.update([grads["b"], grads["w"]], adam.init(params))
    with pytest.raises(ValueError, match="updates: apply_updates"):
        optim.apply_updates(params, {"w": grads["w"]})
    bad = optim.sgd(lambda k: "fast")
    with pytest.raises(TypeError, match="learning_rate: the schedule returned str"):
        bad.update(grads, bad.init(params))
    with pytest.raises(TypeError, match="params: sgd needs arrays of a real float dtype"):
        optim.sgd(0.1).init({"n": nx.asarray([1, 2])})


def test_hyperparameter_errors():
    with pytest.raises(TypeError, match="learning_rate"):
        optim.adam("0.1")
    with pytest.raises(ValueError, match="b1"):
        optim.adam(0.1, b1=1.5)
    with pytest.raises(ValueError, match="b2"):
        optim.adamw(0.1, b2=-0.1)
    with pytest.raises(ValueError, match="eps"):
        optim.rmsprop(0.1, eps=-1.0)
    with pytest.raises(ValueError, match="momentum"):
        optim.sgd(0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="decay"):
        optim.rmsprop(0.1, decay=2.0)
    with pytest.raises(TypeError, match="weight_decay"):
        optim.adamw(0.1, weight_decay=None)
    with pytest.raises(ValueError, match="decay_steps"):
        optim.cosine_decay_schedule(1.0, 0)
    with pytest.raises(ValueError, match="boundaries_and_scales"):
        optim.piecewise_constant_schedule(1.0, {5: -0.5})
    with pytest.raises(ValueError, match="boundaries"):
        optim.join_schedules([optim.constant_schedule(1.0)], [3])
    with pytest.raises(ValueError, match="decay_rate"):
        optim.exponential_decay(1.0, 2, -0.5)


def test_public_surface_annotated_and_documented():
    assert nx.optimizers is optim
    for name in optim.__all__:
        obj = getattr(optim, name)
        assert obj.__doc__, name
        if inspect.isfunction(obj):
            hints = typing.get_type_hints(obj)
            assert "return" in hints and set(inspect.signature(obj).parameters) <= set(hints)
    assert set(optim.GradientTransformation._fields) == {"init", "update"}
    assert list(inspect.signature(optim.adam(0.1).update).parameters) == \
        ["grads", "state", "params"]
    # the signatures of API.md, defaults included
    def spec(f):
        return [(n, p.default) for n, p in inspect.signature(f).parameters.items()]
    empty = inspect.Parameter.empty
    assert spec(optim.sgd) == [("learning_rate", empty), ("momentum", 0.0), ("nesterov", False)]
    assert spec(optim.adam) == [("learning_rate", empty), ("b1", 0.9), ("b2", 0.999),
                                ("eps", 1e-8)]
    assert spec(optim.adamw) == [("learning_rate", empty), ("b1", 0.9), ("b2", 0.999),
                                 ("eps", 1e-8), ("weight_decay", 1e-4)]
    assert spec(optim.rmsprop) == [("learning_rate", empty), ("decay", 0.9), ("eps", 1e-8)]
