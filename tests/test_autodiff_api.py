"""The transform API: pytrees, argnums, has_aux, errors, no_grad, stop_gradient, custom rules,
new primitives, check_grads, threads."""
import collections
import concurrent.futures

import numpy as np
import pytest

import nx_rune as nx
from autodiff_specs import f64_tensor
from nx_rune import primitives as P
from nx_rune.primitives import bind


def test_public_names():
    for name in ["grad", "value_and_grad", "grads", "value_and_grads", "vjp", "jvp", "jvp_aux",
                 "jvps", "linearize", "jacfwd", "jacrev", "hessian", "hvp", "stop_gradient",
                 "detach", "no_grad", "custom_vjp", "custom_jvp", "check_grads"]:
        assert getattr(nx, name) is getattr(nx.autodiff, name)
    assert isinstance(nx.autodiff.VJP_RULES, dict) and isinstance(nx.autodiff.JVP_RULES, dict)
    assert nx.primitives.sin_p in nx.autodiff.VJP_RULES


# -- inputs -------------------------------------------------------------------------------------

def test_numpy_and_python_inputs():
    g = nx.grad(lambda x: x * x)(3.0)
    assert g.dtype == np.float32 and float(g) == 6.0
    g = nx.grad(lambda x: nx.sum(x * x))(np.array([1.0, 2.0]))
    assert g.dtype == np.float64
    np.testing.assert_allclose(np.asarray(g), [2, 4])
    g = nx.grad(lambda x: nx.sum(x * x))(np.array([1.0, 2.0], dtype=np.float32))
    assert g.dtype == np.float32


def test_integer_input_raises():
    with pytest.raises(TypeError, match="int32"):
        nx.grad(lambda x: nx.sum(x * 1.0))(nx.asarray([1, 2]))
    with pytest.raises(TypeError, match="float"):
        nx.grad(lambda x: x * 1.0)(3)


def test_non_scalar_output_raises():
    with pytest.raises(TypeError, match=r"scalar output.*\(2,\)"):
        nx.grad(lambda x: x * 2.0)(f64_tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="float output"):
        nx.grad(lambda x: nx.argmax(x))(f64_tensor([1.0, 2.0]))


def test_argnums_and_pytrees():
    def f(a, params, c):
        return nx.sum(a * params["w"][0] + params["w"][1] * c + params["b"])
    a, c = f64_tensor([1.0, 2.0]), f64_tensor([3.0, 4.0])
    params = {"w": (f64_tensor([5.0, 6.0]), f64_tensor([7.0, 8.0])), "b": f64_tensor(1.0)}
    g = nx.grad(f, argnums=1)(a, params, c)
    assert set(g) == {"w", "b"} and isinstance(g["w"], tuple)
    np.testing.assert_allclose(np.asarray(g["w"][0]), [1, 2])
    np.testing.assert_allclose(np.asarray(g["w"][1]), [3, 4])
    assert float(g["b"]) == 2.0
    ga, gc = nx.grad(f, argnums=(0, 2))(a, params, c)
    np.testing.assert_allclose(np.asarray(ga), [5, 6])
    np.testing.assert_allclose(np.asarray(gc), [7, 8])
    g_last = nx.grad(f, argnums=-1)(a, params, c)
    np.testing.assert_allclose(np.asarray(g_last), [7, 8])
    with pytest.raises(ValueError, match="argnums"):
        nx.grad(f, argnums=3)(a, params, c)


def test_namedtuple_and_none_leaves():
    P2 = collections.namedtuple("P2", "w b")
    g = nx.grad(lambda p, n: nx.sum(p.w * p.b))(P2(f64_tensor([1.0]), f64_tensor([2.0])), None)
    assert isinstance(g, P2)
    np.testing.assert_allclose(np.asarray(g.w), [2.0])
    g = nx.grad(lambda p: nx.sum(p[0] * 2.0))([f64_tensor([1.0]), None])
    assert g[1] is None


def test_unused_input_gets_zeros():
    g = nx.grad(lambda x, y: nx.sum(x * 2.0), argnums=(0, 1))(f64_tensor([1.0]),
                                                              f64_tensor([[1.0, 2.0]]))
    np.testing.assert_array_equal(np.asarray(g[1]), [[0.0, 0.0]])
    assert g[1].dtype == np.float64
    g = nx.grad(lambda x: f64_tensor(3.0))(f64_tensor([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0])


def test_has_aux_and_value_and_grad():
    def f(x):
        y = nx.sum(x * x)
        return y, {"y": y, "n": 3}
    (v, aux), g = nx.value_and_grad(f, has_aux=True)(f64_tensor([1.0, 2.0]))
    assert float(v) == 5.0 and float(aux["y"]) == 5.0 and aux["n"] == 3
    assert isinstance(aux["y"], nx.Tensor)  # aux leaves are values, not tracers
    np.testing.assert_allclose(np.asarray(g), [2, 4])
    g, aux = nx.grad(f, has_aux=True)(f64_tensor([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(g), [2, 4])
    with pytest.raises(TypeError, match="pair"):
        nx.grad(lambda x: nx.sum(x), has_aux=True)(f64_tensor([1.0]))


def test_grads_and_value_and_grads_take_a_list():
    xs = [f64_tensor([1.0, 2.0]), f64_tensor(3.0)]
    g = nx.grads(lambda xs: nx.sum(xs[0] * xs[1]))(xs)
    assert isinstance(g, list) and len(g) == 2
    np.testing.assert_allclose(np.asarray(g[0]), [3, 3])
    assert float(g[1]) == 3.0
    v, g = nx.value_and_grads(lambda xs: nx.sum(xs[0] * xs[1]))(xs)
    assert float(v) == 9.0 and isinstance(g, list)


def test_vjp_api():
    def f(x, y):
        return {"s": x * y, "t": (nx.sin(x),)}
    x, y = f64_tensor([1.0, 2.0]), f64_tensor([3.0, 4.0])
    out, vjp_fn = nx.vjp(f, x, y)
    np.testing.assert_allclose(np.asarray(out["s"]), [3, 8])
    gx, gy = vjp_fn({"s": f64_tensor([1.0, 1.0]), "t": (f64_tensor([0.0, 1.0]),)})
    np.testing.assert_allclose(np.asarray(gx), [3, 4 + np.cos(2.0)])
    np.testing.assert_allclose(np.asarray(gy), [1, 2])
    gx, gy = vjp_fn({"s": None, "t": (f64_tensor([1.0, 0.0]),)})  # None: a zero cotangent
    np.testing.assert_allclose(np.asarray(gx), [np.cos(1.0), 0])
    with pytest.raises(ValueError, match="structure"):
        vjp_fn(f64_tensor([1.0, 1.0]))
    with pytest.raises(ValueError, match="shape"):
        vjp_fn({"s": f64_tensor([1.0]), "t": (None,)})
    out, vjp_fn, aux = nx.vjp(lambda x: (x * 2.0, "hi"), x, has_aux=True)
    assert aux == "hi"
    # integer primals get a None cotangent
    idx = nx.asarray(np.array([1, 0]))
    out, vjp_fn = nx.vjp(lambda x, i: bind(P.gather_p, x, i, axis=0), x, idx)
    gx, gi = vjp_fn(f64_tensor([1.0, 5.0]))
    np.testing.assert_allclose(np.asarray(gx), [5, 1])
    assert gi is None


def test_jacobians_pytrees_and_argnums():
    def f(x, y):
        return {"a": x * y[0], "b": nx.sum(x) * y[1]}
    x, y = f64_tensor([1.0, 2.0]), (f64_tensor([3.0, 4.0]), f64_tensor(5.0))
    for jac in (nx.jacfwd, nx.jacrev):
        J = jac(f, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(np.asarray(J["a"][0]), np.diag([3.0, 4.0]))
        np.testing.assert_allclose(np.asarray(J["a"][1][0]), np.diag([1.0, 2.0]))
        assert J["a"][1][1].shape == (2,)
        np.testing.assert_allclose(np.asarray(J["b"][0]), [5, 5])
        assert float(J["b"][1][1]) == 3.0
        Jx = jac(f)(x, y)
        assert Jx["a"].shape == (2, 2) and Jx["b"].shape == (2,)


def test_jacobian_shapes():
    x = f64_tensor(np.arange(6.0).reshape(2, 3))
    f = lambda x: nx.sum(x * x, axis=1)  # noqa: E731
    for jac in (nx.jacfwd, nx.jacrev):
        J = jac(f)(x)
        assert J.shape == (2, 2, 3)
        expect = np.zeros((2, 2, 3))
        expect[0, 0], expect[1, 1] = 2 * np.asarray(x)[0], 2 * np.asarray(x)[1]
        np.testing.assert_allclose(np.asarray(J), expect)
    H = nx.hessian(lambda x: nx.sum(x ** 3))(x)
    assert H.shape == (2, 3, 2, 3)


def test_hessian_argnums_tuple():
    f = lambda x, y: nx.sum(x * x * y)  # noqa: E731
    H = nx.hessian(f, argnums=(0, 1))(f64_tensor([1.0, 2.0]), f64_tensor([3.0, 4.0]))
    np.testing.assert_allclose(np.asarray(H[0][0]), np.diag([6.0, 8.0]))
    np.testing.assert_allclose(np.asarray(H[0][1]), np.diag([2.0, 4.0]))
    np.testing.assert_allclose(np.asarray(H[1][1]), np.zeros((2, 2)))


def test_hvp():
    f = lambda x: nx.sum(x ** 3)  # noqa: E731
    g, hv = nx.hvp(f, (f64_tensor([1.0, 2.0]),), (f64_tensor([1.0, 1.0]),))
    np.testing.assert_allclose(np.asarray(g), [3, 12])
    np.testing.assert_allclose(np.asarray(hv), [6, 12])
    _, hv = nx.hvp(lambda x, y: nx.sum(x * y * y), (f64_tensor(1.0), f64_tensor(2.0)),
                   (f64_tensor(1.0), f64_tensor(0.0)))
    np.testing.assert_allclose([float(h) for h in hv], [0.0, 4.0])


def test_linearize_does_not_rerun_f():
    calls = []

    def f(x):
        calls.append(1)
        return nx.sin(x) * x
    x = f64_tensor([0.5, 1.0])
    y, f_jvp = nx.linearize(f, x)
    t1 = f_jvp(f64_tensor([1.0, 0.0]))
    t2 = f_jvp(f64_tensor([0.0, 1.0]))
    assert len(calls) == 1
    d = np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0])
    np.testing.assert_allclose(np.asarray(t1), [d[0], 0])
    np.testing.assert_allclose(np.asarray(t2), [0, d[1]])


# -- stop_gradient, no_grad, control flow, leaks --------------------------------------------------

def test_stop_gradient_and_detach():
    f = lambda x: nx.sum(x * nx.stop_gradient(x))  # noqa: E731
    np.testing.assert_allclose(np.asarray(nx.grad(f)(f64_tensor([1.0, 2.0]))), [1, 2])
    f = lambda x: nx.sum(x * nx.detach(x * x))  # noqa: E731
    np.testing.assert_allclose(np.asarray(nx.grad(f)(f64_tensor([2.0]))), [4.0])
    # all levels: the second derivative of x * stop_gradient(x) is 0
    g2 = nx.grad(nx.grad(lambda x: x * nx.stop_gradient(x)))
    assert float(g2(f64_tensor(3.0))) == 0.0
    tree = nx.stop_gradient({"a": f64_tensor(1.0), "b": [2, None]})
    assert tree["b"] == [2, None]


def test_no_grad_context_and_decorator():
    def f(x):
        with nx.no_grad():
            c = x * 3.0
        assert isinstance(c, nx.Tensor)
        return nx.sum(x * c)
    np.testing.assert_allclose(np.asarray(nx.grad(f)(f64_tensor([1.0, 2.0]))), [3, 6])

    @nx.no_grad
    def scaled(x):
        return x * 3.0

    @nx.no_grad()
    def scaled2(x):
        return x * 3.0
    for s in (scaled, scaled2):
        g = nx.grad(lambda x: nx.sum(x * s(x)))(f64_tensor([1.0, 2.0]))
        np.testing.assert_allclose(np.asarray(g), [3, 6])
    # a transformation started inside no_grad works
    with nx.no_grad():
        assert float(nx.grad(lambda x: x * x)(f64_tensor(3.0))) == 6.0
    assert nx.primitives.current_interpreter() is None


def test_python_control_flow_on_values():
    def f(x):
        # comparisons, bool() and int() read the value (float() and item() of a differentiated
        # value raise: see test_trust_values.py)
        if nx.sum(x) > 0 and bool(x[0] > 0):
            y = x * x
        else:
            y = -x
        for _ in range(int(x[1])):
            y = y * 2.0
        return nx.sum(y)
    np.testing.assert_allclose(np.asarray(nx.grad(f)(f64_tensor([1.0, 2.0]))), [8, 16])
    np.testing.assert_allclose(np.asarray(nx.grad(f)(f64_tensor([-3.0, 1.0]))), [-2, -2])


def test_tracer_repr():
    seen = {}

    def f(x):
        seen["repr"] = repr(x)
        return nx.sum(x)
    nx.grad(f)(f64_tensor([1.0, 2.0]))
    assert "grad" in seen["repr"] and "Tracer" in seen["repr"] and "[1. 2.]" in seen["repr"]
    y, t = nx.jvp(lambda x: (seen.__setitem__("r", repr(x)), x)[1], (f64_tensor(1.0),),
                  (f64_tensor(1.0),))
    assert "jvp" in seen["r"]


def test_leaked_tracer_raises():
    leak = []

    def f(x):
        leak.append(x * 2.0)
        return nx.sum(x)
    nx.grad(f)(f64_tensor([1.0]))
    with pytest.raises(nx.autodiff.UnexpectedTracerError, match="finished grad"):
        leak[0] + 1.0
    with pytest.raises(nx.autodiff.UnexpectedTracerError):
        nx.grad(lambda y: nx.sum(y * leak[0]))(f64_tensor([1.0]))
    np.testing.assert_allclose(np.asarray(leak[0]), [2.0])  # reading values is fine


def test_no_state_leaks_between_calls():
    assert nx.primitives.current_interpreter() is None
    with pytest.raises(ZeroDivisionError):
        nx.grad(lambda x: x * (1 // 0))(f64_tensor(1.0))
    assert nx.primitives.current_interpreter() is None
    g1 = nx.grad(lambda x: nx.sum(nx.sin(x)))(f64_tensor([0.5]))
    g2 = nx.grad(lambda x: nx.sum(nx.sin(x)))(f64_tensor([0.5]))
    np.testing.assert_array_equal(np.asarray(g1), np.asarray(g2))


def test_thread_pool_matches_serial():
    rng = np.random.default_rng(0)
    W = f64_tensor(rng.standard_normal((6, 4)))
    xs = [f64_tensor(rng.standard_normal((5, 6))) for _ in range(32)]

    def work(x):
        loss = lambda w: nx.sum(nx.tanh(x @ w) ** 2)  # noqa: E731
        g = nx.grad(loss)(W)
        h = nx.hvp(loss, (W,), (nx.ones_like(W),))[1]
        _, t = nx.jvp(loss, (W,), (W,))
        return np.asarray(g), np.asarray(h), float(t)
    serial = [work(x) for x in xs]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        parallel = list(pool.map(work, xs))
    for s, p in zip(serial, parallel):
        np.testing.assert_array_equal(s[0], p[0])
        np.testing.assert_array_equal(s[1], p[1])
        assert s[2] == p[2]


# -- custom rules ---------------------------------------------------------------------------------

def test_custom_vjp_is_used_and_nests():
    calls = []

    @nx.custom_vjp
    def f(x):
        return nx.sin(x)

    def fwd(x):
        return f(x), nx.cos(x)

    def bwd(cos_x, g):
        calls.append(1)
        return (g * cos_x * 10.0,)  # deliberately 10x the true derivative
    f.defvjp(fwd, bwd)
    x = f64_tensor(0.3)
    np.testing.assert_allclose(float(nx.grad(f)(x)), 10 * np.cos(0.3))
    assert calls
    np.testing.assert_allclose(float(f(x)), np.sin(0.3))
    # nests: the second derivative differentiates bwd (10 * cos x -> -10 sin x)
    np.testing.assert_allclose(float(nx.grad(nx.grad(f))(x)), -10 * np.sin(0.3))
    # forward mode uses the transpose of bwd
    np.testing.assert_allclose(float(nx.jvp(f, (x,), (f64_tensor(2.0),))[1]), 20 * np.cos(0.3))
    np.testing.assert_allclose(float(nx.jvp(nx.grad(f), (x,), (f64_tensor(1.0),))[1]),
                               -10 * np.sin(0.3))
    np.testing.assert_allclose(float(nx.grad(lambda x: nx.jvp(f, (x,), (f64_tensor(1.0),))[1])(x)),
                               -10 * np.sin(0.3))
    _, lin = nx.linearize(f, x)
    np.testing.assert_allclose(float(lin(f64_tensor(1.0))), 10 * np.cos(0.3))


def test_custom_vjp_pytrees_and_multiple_outputs():
    @nx.custom_vjp
    def f(p, scale):
        return {"u": p["a"] * scale, "v": p["b"] * 2.0}

    def fwd(p, scale):
        return f(p, scale), scale

    def bwd(scale, g):
        return ({"a": g["u"] * scale, "b": g["v"] * 2.0}, None)
    f.defvjp(fwd, bwd)
    p = {"a": f64_tensor([1.0, 2.0]), "b": f64_tensor(3.0)}
    g = nx.grad(lambda p: nx.sum(f(p, f64_tensor(4.0))["u"]) + f(p, f64_tensor(4.0))["v"])(p)
    np.testing.assert_allclose(np.asarray(g["a"]), [4, 4])
    assert float(g["b"]) == 2.0
    # the scale gets a zero cotangent (bwd returned None)
    gs = nx.grad(lambda s: nx.sum(f(p, s)["u"]))(f64_tensor(4.0))
    assert float(gs) == 0.0


def test_custom_vjp_clip_gradient():
    @nx.custom_vjp
    def clip_gradient(x):
        return x
    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (nx.clip(g, -1.0, 1.0),))
    g = nx.grad(lambda x: nx.sum(clip_gradient(x) * f64_tensor([5.0, 0.5, -3.0])))(
        f64_tensor([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(np.asarray(g), [1.0, 0.5, -1.0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_custom_jvp_is_used_and_nests():
    @nx.custom_jvp
    def log1pexp(x):
        return nx.log(1.0 + nx.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * nx.sigmoid(x)

    x = f64_tensor(1000.0)
    # the naive formula gives nan (inf / inf) in reverse mode; the rule gives 1
    assert np.isnan(float(nx.grad(lambda x: nx.log(1.0 + nx.exp(x)))(x)))
    np.testing.assert_allclose(float(nx.grad(log1pexp)(x)), 1.0)
    np.testing.assert_allclose(float(nx.jvp(log1pexp, (x,), (f64_tensor(2.0),))[1]), 2.0)
    y = f64_tensor(0.3)
    s = 1 / (1 + np.exp(-0.3))
    np.testing.assert_allclose(float(nx.grad(nx.grad(log1pexp))(y)), s * (1 - s))
    np.testing.assert_allclose(float(nx.jvp(nx.grad(log1pexp), (y,), (f64_tensor(1.0),))[1]),
                               s * (1 - s))
    np.testing.assert_allclose(np.asarray(nx.hessian(lambda v: nx.sum(log1pexp(v)))(
        f64_tensor([0.3, -1.0])))[0, 0], s * (1 - s))


def test_custom_jvp_rule_is_used():
    @nx.custom_jvp
    def f(x, y):
        return x * y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), tx * 100.0 + ty
    gx, gy = nx.grad(f, argnums=(0, 1))(f64_tensor(2.0), f64_tensor(3.0))
    assert float(gx) == 100.0 and float(gy) == 1.0
    assert float(nx.jvp(f, (f64_tensor(2.0), f64_tensor(3.0)),
                        (f64_tensor(1.0), f64_tensor(0.0)))[1]) == 100.0


def test_missing_custom_rules_raise():
    @nx.custom_vjp
    def f(x):
        return x

    @nx.custom_jvp
    def g(x):
        return x
    with pytest.raises(AttributeError, match="defvjp"):
        f(f64_tensor(1.0))
    with pytest.raises(AttributeError, match="defjvp"):
        g(f64_tensor(1.0))


@pytest.fixture
def new_primitive():
    """Make primitives for a test and remove them (and their rules) afterwards."""
    made = []

    def make(name):
        prim = P.Primitive(name)
        made.append(prim)
        return prim
    yield make
    for prim in made:
        del P.PRIMITIVES[prim.name]
        for table in (nx.autodiff.VJP_RULES, nx.autodiff.JVP_RULES):
            table.pop(prim, None)
        nx.autodiff.NONDIFF.discard(prim)


def test_register_rules_for_a_new_primitive(new_primitive):
    prim = new_primitive("test_softsign")
    prim.def_impl(lambda x: nx.asarray(np.asarray(x) / (1 + np.abs(np.asarray(x)))))
    nx.autodiff.defelementwise(prim, lambda v, ans, x: v / (1.0 + nx.abs(x)) ** 2)
    x = f64_tensor([0.5, -2.0])
    g = nx.grad(lambda x: nx.sum(bind(prim, x)))(x)
    np.testing.assert_allclose(np.asarray(g), 1 / (1 + np.abs([0.5, -2.0])) ** 2)
    nx.check_grads(lambda x: bind(prim, x), (x,), order=2)
    # per-operand helpers
    prim2 = new_primitive("test_scale")
    prim2.def_impl(lambda x, *, k: nx.asarray(np.asarray(x) * k))
    nx.autodiff.defvjp(prim2, lambda g, ans, x, k: g * k)
    nx.autodiff.defjvp(prim2, lambda t, ans, x, k: t * k)
    assert float(nx.grad(lambda x: bind(prim2, x, k=3.0))(f64_tensor(1.0))) == 3.0
    assert float(nx.jvp(lambda x: bind(prim2, x, k=3.0), (f64_tensor(1.0),),
                        (f64_tensor(2.0),))[1]) == 6.0
    prim3 = new_primitive("test_norules")
    prim3.def_impl(lambda x: x)
    with pytest.raises(NotImplementedError, match="no VJP rule"):
        nx.grad(lambda x: bind(prim3, x))(f64_tensor(1.0))
    with pytest.raises(NotImplementedError, match="no JVP rule"):
        nx.jvp(lambda x: bind(prim3, x), (f64_tensor(1.0),), (f64_tensor(1.0),))


# -- check_grads ------------------------------------------------------------------------------

def test_check_grads_passes_and_fails():
    nx.check_grads(lambda x, y: nx.sin(x) * y ** 2,
                   (f64_tensor([0.1, 0.2]), f64_tensor([1.0, 2.0])), order=2)
    nx.check_grads(lambda x: nx.exp(x), (np.array([0.3, 0.4], dtype=np.float32),), order=1)
    nx.check_grads(lambda p: {"a": p["x"] * 2.0}, ({"x": f64_tensor(1.0)},), modes=("rev",))

    @nx.custom_vjp
    def wrong(x):
        return nx.sin(x)
    wrong.defvjp(lambda x: (nx.sin(x), x), lambda x, g: (g * 2.0,))
    with pytest.raises(AssertionError, match="reverse-mode"):
        nx.check_grads(wrong, (f64_tensor([0.5]),), modes=("rev",))
    with pytest.raises(AssertionError, match="forward-mode"):
        nx.check_grads(wrong, (f64_tensor([0.5]),), modes=("fwd",))

    @nx.custom_jvp
    def wrong2(x):
        return x * x

    @wrong2.defjvp
    def _(p, t):
        return p[0] * p[0], t[0] * 2.0 * p[0] + t[0] * p[0] * p[0]  # wrong only off x = 0, 1
    nx.check_grads(lambda x: x * x, (f64_tensor([1.5]),), order=2)
    with pytest.raises(AssertionError):
        nx.check_grads(wrong2, (f64_tensor([1.5]),), order=1)


def test_complex_inputs():
    z = nx.asarray(np.array([1 + 2j, 3 - 1j], dtype=np.complex128))
    # complex inputs of a real function: JAX's convention (jax.grad gives 2 z here:
    # d Re(z^2)/dx - i d Re(z^2)/dy = 2x + 2iy)
    g = nx.grad(lambda z: nx.sum(nx.astype(z * z, nx.float64)))(z)
    np.testing.assert_allclose(np.asarray(g), [2 + 4j, 6 - 2j])
    # forward mode is exact for holomorphic maps: d(z^2) = 2 z dz
    y, t = nx.jvp(lambda z: z * z, (z,), (nx.ones_like(z),))
    np.testing.assert_allclose(np.asarray(t), 2 * np.asarray(z))


def test_layering_autodiff_knows_no_kernels():
    """autodiff is pure Python over front-end ops and bind: it imports neither the kernels nor
    the backend, and the kernels do not import autodiff."""
    import ast
    import pathlib
    root = pathlib.Path(nx.__file__).parent

    def imports(path):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                yield from (a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                yield node.module
    for path in (root / "autodiff").glob("*.py"):
        for mod in imports(path):
            assert not mod.startswith(("nx_rune._kernels", "nx_rune.backend")), (path, mod)
    for path in (root / "_kernels").glob("*.py*"):
        text = path.read_text()
        assert "autodiff" not in text, path


def test_rules_in_the_public_form(new_primitive):
    """The README's way: assign plain functions into the tables."""
    from nx_rune.autodiff import JVP_RULES, VJP_RULES
    cube_p = new_primitive("test_cube")
    cube_p.def_impl(lambda x: nx.asarray(x.numpy() ** 3))
    VJP_RULES[cube_p] = lambda ct, x, out, **params: (ct * 3 * x * x,)
    JVP_RULES[cube_p] = lambda primals, tangents, out, **params: 3 * primals[0] ** 2 * tangents[0]
    cube = lambda x: bind(cube_p, nx.asarray(x))  # noqa: E731
    x = f64_tensor(1.5)
    assert float(nx.grad(cube)(x)) == 3 * 1.5 ** 2
    np.testing.assert_allclose(float(nx.grad(nx.grad(cube))(x)), 6 * 1.5)
    np.testing.assert_allclose(float(nx.jvp(nx.grad(cube), (x,), (f64_tensor(1.0),))[1]), 6 * 1.5)
    nx.check_grads(cube, (f64_tensor([0.5, -1.0]),), order=2)
    # a binary primitive: the public JVP form gets zeros (not None) for unperturbed operands
    axpy_p = new_primitive("test_axpy")
    axpy_p.def_impl(lambda a, x, y: nx.asarray(a.numpy() * x.numpy() + y.numpy()))
    VJP_RULES[axpy_p] = lambda ct, a, x, y, out: (ct * x, ct * a, ct)
    JVP_RULES[axpy_p] = lambda p, t, out: t[0] * p[1] + p[0] * t[1] + t[2]
    f = lambda a, x, y: bind(axpy_p, a, x, y)  # noqa: E731
    args = (f64_tensor([2.0]), f64_tensor([3.0]), f64_tensor([4.0]))
    nx.check_grads(f, args, order=2)
    assert float(nx.jvp(lambda x: f(args[0], x, args[2]), (args[1],),
                        (f64_tensor([1.0]),))[1][0]) == 2.0
    # the built-in rules are callable in the same form
    s = VJP_RULES[P.sin_p](f64_tensor(2.0), f64_tensor(0.5), f64_tensor(np.sin(0.5)))[0]
    c = np.cos(0.5)
    np.testing.assert_allclose(float(s), 2 * c)
    t = JVP_RULES[P.mul_p]((f64_tensor(2.0), f64_tensor(3.0)), (f64_tensor(1.0), None),
                           f64_tensor(6.0))
    np.testing.assert_allclose(float(t), 3.0)
    VJP_RULES[cube_p] = lambda ct, x, out: ct * 3 * x * x  # not a tuple
    with pytest.raises(TypeError, match="tuple"):
        nx.grad(cube)(x)
