"""nx.checkpoint / nx.remat: the same values and derivatives (every order, every composition)
as the function itself, the inside recomputed on the backward pass, and the memory it saves
on a deep chain (tracemalloc)."""
import gc
import tracemalloc

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune.autodiff import BATCH_RULES
from nx_rune.errors import ModifiedInPlaceError
from nx_rune.primitives import bind


def t(a):
    return nx.asarray(np.asarray(a, dtype=np.float64))


X = t(np.linspace(-0.9, 1.1, 5))


def block(x, w):
    y = nx.sin(x * w) + nx.tanh(x)
    return nx.cumsum(y * nx.max(y)) / 3.0 + nx.sort(x) * 0.1


def f(x, w, remat):
    b = nx.checkpoint(block) if remat else block
    for _ in range(3):
        x = b(x, w)
    return nx.sum(x * x)


W = t(0.7)
ORDERS = {
    "grad": lambda h: nx.grad(h, argnums=(0, 1)),
    "grad_grad": lambda h: nx.grad(lambda x, w: nx.sum(nx.grad(h)(x, w) ** 2), argnums=(0, 1)),
    "hessian": lambda h: nx.hessian(h),
    "jacrev_jacfwd": lambda h: nx.jacrev(nx.jacfwd(h)),
    "third": lambda h: nx.grad(lambda x, w: nx.sum(nx.hessian(h)(x, w))),
    "jvp_grad": lambda h: lambda x, w: nx.jvp(lambda u: nx.grad(h)(u, w), (x,),
                                              (nx.ones_like(x),))[1],
    "linearize": lambda h: lambda x, w: nx.linearize(lambda u: h(u, w), x)[1](x),
    "vmap_grad": lambda h: lambda x, w: nx.vmap(nx.grad(h), in_axes=(0, None))(
        nx.stack([x, x * 0.5]), w),
    "grad_vmap": lambda h: lambda x, w: nx.grad(
        lambda u: nx.sum(nx.vmap(h, in_axes=(0, None))(u, w)))(nx.stack([x, -x])),
}


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_same_values_and_derivatives_as_the_function(order):
    want = ORDERS[order](lambda x, w: f(x, w, False))(X, W)
    got = ORDERS[order](lambda x, w: f(x, w, True))(X, W)
    for g, w in zip(nx.tree_util.tree_leaves(got), nx.tree_util.tree_leaves(want)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


def test_gradient_matches_finite_differences():
    g = nx.grad(lambda x: f(x, W, True))(X)
    x = np.asarray(X)
    eps = 1e-6
    fd = [(float(f(t(x + eps * e), W, False)) - float(f(t(x - eps * e), W, False))) / (2 * eps)
          for e in np.eye(5)]
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-7, atol=1e-8)


def test_outside_transformations_it_is_the_function():
    np.testing.assert_array_equal(np.asarray(f(X, W, True)), np.asarray(f(X, W, False)))
    out = nx.remat(lambda x, k=2: (x * k, {"n": 3, "v": None}))(X, k=3)
    np.testing.assert_array_equal(np.asarray(out[0]), np.asarray(X) * 3)
    assert out[1] == {"n": 3, "v": None}
    assert nx.remat is nx.checkpoint
    with pytest.raises(TypeError, match="checkpoint: expected a function"):
        nx.checkpoint(None)


def test_closures_pytrees_and_passthrough_outputs():
    def loss(p, x):
        def inner(h):                 # closes over p (traced by grad)
            return {"h": nx.tanh(h @ p["W"] + p["b"]), "x": h, "n": 2}
        out = nx.checkpoint(inner)(x)
        return nx.sum(out["h"] ** 2) * out["n"] + nx.sum(out["x"])
    rng = np.random.default_rng(0)
    p = {"W": t(rng.standard_normal((3, 3))), "b": t(rng.standard_normal(3))}
    x = t(rng.standard_normal((2, 3)))
    plain = lambda p, x: nx.sum(nx.tanh(x @ p["W"] + p["b"]) ** 2) * 2 + nx.sum(x)  # noqa
    got = nx.grad(loss, argnums=(0, 1))(p, x)
    want = nx.grad(plain, argnums=(0, 1))(p, x)
    for g, w in zip(nx.tree_util.tree_leaves(got), nx.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13)


def test_custom_rules_nested_checkpoints_and_constants_inside():
    @nx.custom_vjp
    def clipped(x):
        return x * 1.0

    clipped.defvjp(lambda x: (x * 1.0, None), lambda r, g: (nx.clip(g, -0.5, 0.5),))

    def inner(x):
        mask = nx.astype(x > 0, x.dtype)          # recorded nowhere: kept as a constant
        return clipped(nx.sin(x)) * mask + nx.checkpoint(lambda u: nx.exp(u) * 2)(x)

    def outer(x):
        return nx.sum(nx.checkpoint(inner)(x * 3.0) ** 2)

    def plain(x):
        u = x * 3.0
        return nx.sum((clipped(nx.sin(u)) * nx.astype(u > 0, u.dtype) + nx.exp(u) * 2) ** 2)
    for order in ("grad", "grad_grad", "hessian"):
        got = ORDERS[order](lambda x, w: outer(x))(X, W)
        want = ORDERS[order](lambda x, w: plain(x))(X, W)
        for g, w in zip(nx.tree_util.tree_leaves(got), nx.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


def test_in_place_writes_are_still_caught():
    def inside_write(x):
        c = nx.copy(x * 1.0)
        y = nx.sin(c)
        c_t = nx.stop_gradient(c)
        buf = nx.asarray(np.asarray(c_t).copy())
        z = x * buf                    # mul saves buf for its derivative ...
        buf[0] = 100.0                 # ... which is overwritten inside the checkpoint
        return nx.sum(y + z)
    with pytest.raises(ModifiedInPlaceError, match="checkpoint|mul"):
        nx.grad(lambda x: nx.checkpoint(inside_write)(x))(X)

    buf = nx.asarray(np.ones(5))

    def reads_buf(x):
        return nx.sum(nx.sin(x) * buf)

    def later_write(x):
        y = nx.checkpoint(reads_buf)(x)
        buf[1] = 7.0                   # written after the checkpointed call recorded it
        return y
    with pytest.raises(ModifiedInPlaceError, match=r"checkpoint\(reads_buf\)"):
        nx.grad(later_write)(X)


@pytest.fixture
def counted_sin():
    prim = P.Primitive("test_ck_sin")
    calls = []
    prim.def_impl(lambda x: calls.append(1) or nx.asarray(np.sin(np.asarray(x))))
    nx.autodiff.defelementwise(prim, lambda v, ans, x: v * nx.cos(x))
    yield prim, calls
    del P.PRIMITIVES[prim.name]
    for table in (nx.autodiff.VJP_RULES, nx.autodiff.JVP_RULES, BATCH_RULES):
        table.pop(prim, None)


def test_the_inside_is_recomputed_once_per_backward_pass(counted_sin):
    prim, calls = counted_sin
    g = lambda x: nx.sum(bind(prim, bind(prim, x)))  # noqa: E731
    nx.grad(g)(X)
    assert len(calls) == 2
    calls.clear()
    _, vjp_fn = nx.vjp(nx.checkpoint(g), X)
    assert len(calls) == 2
    vjp_fn(t(1.0))
    assert len(calls) == 4            # recomputed for the backward pass
    vjp_fn(t(2.0))
    assert len(calls) == 6            # and again for another one
    np.testing.assert_allclose(np.asarray(vjp_fn(t(1.0))[0]),
                               np.cos(np.sin(np.asarray(X))) * np.cos(np.asarray(X)))


def _peak(fn, *args):
    gc.collect()
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_saved_on_a_deep_chain():
    # 40 blocks of 10 elementwise ops on 20000 float64 (160 kB each): the tape keeps ~400
    # intermediates (~64 MB); with checkpointed blocks it keeps the 40 block outputs and
    # recomputes one block at a time on the backward pass
    def blk(x):
        for _ in range(5):
            x = nx.sin(x) * 1.01 + nx.tanh(x)
        return x

    def chain(x, b):
        for _ in range(40):
            x = b(x)
        return nx.sum(x * x)
    x = t(np.linspace(-1.0, 1.0, 20000))
    plain = nx.grad(lambda x: chain(x, blk))
    ck = nx.grad(lambda x: chain(x, nx.checkpoint(blk)))
    np.testing.assert_allclose(np.asarray(ck(x)), np.asarray(plain(x)), rtol=1e-12)
    p_plain, p_ck = _peak(plain, x), _peak(ck, x)
    assert p_plain > 40e6
    assert p_ck * 4 < p_plain, (p_plain, p_ck)     # measured: about 10x less


def test_a_value_escaping_the_checkpoint_is_refused_not_lost():
    kept = []

    def inner(x):
        y = nx.sin(x)
        kept.append(y)               # escapes other than as an output
        return y * 2.0

    def loss(x):
        out = nx.checkpoint(inner)(x)
        return nx.sum(out) + nx.sum(kept[-1] ** 2)
    with pytest.raises(nx.errors.UnexpectedTracerError, match=r"checkpoint\(inner\)"):
        nx.grad(loss)(X)
    # unused, the escaped value costs nothing; nested checkpoints work as outputs
    g = nx.grad(lambda x: nx.sum(nx.checkpoint(inner)(x)))(X)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(np.asarray(X)), rtol=1e-14)
    g = nx.grad(lambda x: nx.sum(nx.checkpoint(lambda u: nx.checkpoint(inner)(u) * u)(x)))(X)
    xv = np.asarray(X)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(xv) * xv + 2 * np.sin(xv), rtol=1e-14)
