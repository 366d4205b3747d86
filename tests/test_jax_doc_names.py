"""Names the JAX documentation's own examples use, found by running its tutorials' cells with
``jax`` renamed to ``nx_rune``: ``numpy.convolve``/``correlate``, ``tree_util.register_dataclass``,
``jax.test_util``, ``jax.typeof``/``ShapeDtypeStruct.like``, ``result_type`` of Python types.
JAX's values (jax 0.10.2) are pinned as literals; NumPy's are computed."""
import dataclasses
import functools

import numpy as np
import pytest

import nx_rune as nx
import nx_rune.numpy as jnp
from nx_rune.test_util import check_grads, check_jvp, check_vjp


def _vec(rng, n, dt):
    if np.dtype(dt).kind == "c":
        return rng.standard_normal(n) + 1j * rng.standard_normal(n)
    return (rng.standard_normal(n) * 5).astype(dt)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.complex128])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_are_numpys(name, dt, mode):
    rng = np.random.default_rng(0)
    for n, m in [(1, 1), (5, 3), (3, 5), (8, 8), (2, 9)]:
        a, v = _vec(rng, n, dt), _vec(rng, m, dt)
        got = getattr(jnp, name)(a, v, mode)
        want = getattr(np, name)(a, v, mode)
        assert got.shape == want.shape and got.dtype == want.dtype, (n, m)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_convolve_jax_doc_example_and_defaults():
    # jnp.convolve(jnp.array([1, 2, 1]), jnp.ones(10)) in jax 0.10.2 (the key-concepts page)
    got = jnp.convolve(jnp.array([1, 2, 1]), jnp.ones(10))
    np.testing.assert_array_equal(np.asarray(got), [1, 3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 1])
    # int32 with float32: float32, as JAX's
    assert got.dtype == np.float32
    assert jnp.correlate(np.arange(5.0), np.ones(2)).shape == (4,)          # valid by default
    assert jnp.convolve(np.arange(3.0), np.ones(2), preferred_element_type=np.float64).dtype \
        == np.float64


def test_convolve_derivatives_jit_and_vmap():
    rng = np.random.default_rng(1)
    a, v = rng.standard_normal(6), rng.standard_normal(3)
    for name in ("convolve", "correlate"):
        f = functools.partial(getattr(nx, name), mode="same")
        check_grads(f, (a, v), order=2)
        eager = np.asarray(f(a, v))
        np.testing.assert_allclose(np.asarray(nx.jit(f)(a, v)), eager, rtol=1e-12)
        batch = nx.vmap(f, in_axes=(0, None))(np.stack([a, 2 * a]), v)
        np.testing.assert_allclose(np.asarray(batch)[1], 2 * eager, rtol=1e-12)


@pytest.mark.parametrize("bad, match", [
    ((np.ones((2, 2)), np.ones(2)), "a: convolve takes 1-D arrays"),
    ((np.ones(2), np.ones(0)), "v: convolve of an empty array"),
])
def test_convolve_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        nx.convolve(*bad)
    with pytest.raises(ValueError, match="mode"):
        nx.convolve(np.ones(3), np.ones(2), mode="middle")


def test_register_dataclass_both_forms():
    @functools.partial(nx.tree_util.register_dataclass, data_fields=["a", "b"],
                       meta_fields=["name"])
    @dataclasses.dataclass
    class Pair:
        name: str
        a: object
        b: object

    @nx.tree_util.register_dataclass
    @dataclasses.dataclass
    class Scaled:
        x: object
        n: int = dataclasses.field(default=3, metadata=dict(static=True))

    p = Pair("p", jnp.ones(2), jnp.zeros(2))
    q = nx.tree.map(lambda x: x + 1, p)
    assert q.name == "p" and np.asarray(q.b).tolist() == [1.0, 1.0]
    assert float(nx.jit(lambda p: nx.sum(p.a + p.b))(p)) == 2.0
    g = nx.grad(lambda s: nx.sum(s.x ** 2) * s.n)(Scaled(jnp.ones(2), 4))
    assert g.n == 4 and np.asarray(g.x).tolist() == [8.0, 8.0]
    assert len(nx.tree_util.tree_leaves(Scaled(jnp.ones(2)))) == 1
    with pytest.raises(TypeError, match="not a dataclass"):
        nx.tree_util.register_dataclass(type("Plain", (), {}))
    with pytest.raises(TypeError, match="both data_fields and meta_fields"):
        nx.tree_util.register_dataclass(type("Plain2", (), {}), data_fields=["a"])


def test_test_util_checks_pass_and_fail():
    f = lambda x, y: jnp.sin(x) * y  # noqa: E731
    args = (jnp.ones(3), jnp.arange(3.0))
    check_grads(f, args, order=2)
    check_jvp(f, functools.partial(nx.jvp, f), args)
    check_vjp(f, functools.partial(nx.vjp, f), args)
    with pytest.raises(AssertionError):
        check_jvp(f, lambda p, t: (f(*p), f(*t)), args)
    with pytest.raises(AssertionError):
        check_vjp(f, lambda *a: (f(*a), lambda u: (u, u)), args)
    with pytest.raises(AssertionError, match="primal"):
        check_vjp(f, lambda *a: (f(*a) + 1, nx.vjp(f, *a)[1]), args)


def test_typeof_and_shape_dtype_struct_like():
    x = jnp.ones(3)
    assert str(nx.typeof(x)) == "float32[3]"          # jax.typeof(jnp.ones(3))
    assert repr(nx.typeof(x)) == "ShapedArray(float32[3])"
    assert repr(nx.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    seen = []
    nx.jit(lambda v: seen.append(str(nx.typeof(v))) or v)(jnp.ones((2, 3)))
    nx.vmap(lambda v: seen.append(str(nx.typeof(v))) or v)(jnp.ones((2, 3)))
    assert seen == ["float32[2,3]", "float32[3]"]
    s = nx.ShapeDtypeStruct.like(x)
    assert (s.shape, s.dtype, s.weak_type) == ((3,), np.float32, False)


def test_result_type_of_python_types_is_jaxs():
    # jax 0.10.2, x64 off: float32 int32 complex64 float16 float32 bool int8
    got = [jnp.result_type(float), jnp.result_type(int), jnp.result_type(complex, 1.0),
           jnp.result_type(float, jnp.float16), jnp.result_type(float, jnp.int32),
           jnp.result_type(bool), jnp.result_type(int, jnp.int8)]
    assert [str(d) for d in got] == ["float32", "int32", "complex64", "float16", "float32",
                                     "bool", "int8"]
    with nx.enable_x64():
        assert jnp.result_type(float) == np.float64 and jnp.result_type(int) == np.int64
    with pytest.raises(TypeError, match="needs at least one array or dtype"):
        jnp.result_type(1.0)


def test_custom_jvp_defjvps_as_jax():
    # the custom-derivative tutorial's examples; JAX 0.10.2 prints 1.0 for grad(log1pexp)(100.)
    @nx.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))
    log1pexp.defjvps(lambda t, ans, x: t * nx.nn.sigmoid(x))
    assert float(nx.grad(log1pexp)(100.0)) == 1.0
    np.testing.assert_allclose(float(nx.jit(nx.grad(log1pexp))(3.0)), 0.95257413, rtol=1e-6)

    @nx.custom_jvp
    def f(x, y):
        return x ** 2 * y
    f.defjvps(lambda x_dot, primal_out, x, y: 2 * x * y * x_dot,
              lambda y_dot, primal_out, x, y: x ** 2 * y_dot)
    assert float(nx.grad(f)(2.0, 3.0)) == 12.0 and float(nx.grad(f, 1)(2.0, 3.0)) == 4.0
    assert float(nx.grad(nx.grad(f))(2.0, 3.0)) == 6.0          # the rule differentiates again
    g = nx.custom_jvp(lambda x, y: x * y)
    g.defjvps(None, lambda t, ans, x, y: x * t)
    assert float(nx.jvp(g, (2.0, 3.0), (1.0, 0.0))[1]) == 0.0     # None: no dependence
    with pytest.raises(TypeError, match="defjvps got 1 functions for 2"):
        h = nx.custom_jvp(lambda x, y: x * y)
        h.defjvps(lambda t, ans, x, y: t)
        nx.grad(h)(1.0, 2.0)


def test_custom_rules_with_nondiff_argnums_as_jax():
    @functools.partial(nx.custom_vjp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    def app_fwd(f, x):
        return f(x), x

    def app_bwd(f, x, g):
        return (5 * g,)
    app.defvjp(app_fwd, app_bwd)
    assert float(app(lambda x: x ** 2, 4.0)) == 16.0
    assert float(nx.grad(app, 1)(lambda x: x ** 2, 4.0)) == 5.0       # JAX: 5.0
    assert float(nx.jit(nx.grad(app, 1), static_argnums=0)(lambda x: x ** 2, 4.0)) == 5.0

    @functools.partial(nx.custom_jvp, nondiff_argnums=(0, 2))
    def app2(f, x, g):
        return f(g(x))

    @app2.defjvp
    def app2_jvp(f, g, primals, tangents):
        x, = primals
        x_dot, = tangents
        return f(g(x)), 2.0 * x_dot
    # JAX 0.10.2: app2(lambda x: x ** 3, 3., lambda y: 5 * y) = 3375.0, its grad 2.0
    assert float(app2(lambda x: x ** 3, 3.0, lambda y: 5 * y)) == 3375.0
    assert float(nx.grad(app2, 1)(lambda x: x ** 3, 3.0, lambda y: 5 * y)) == 2.0
    out = nx.vmap(lambda x: app2(jnp.sin, x, jnp.cos))(jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.cos(np.arange(3.0))), rtol=1e-6)
    bad = nx.custom_vjp(lambda x: x, nondiff_argnums=(5,))
    bad.defvjp(lambda x: (x, None), lambda n, r, g: (g,))
    with pytest.raises(ValueError, match="nondiff_argnums position 5"):
        bad(1.0)


def test_pytree_with_unhashable_static_data_under_jit():
    """The JAX gotchas page: a class registered with a dict as its static data, its method
    jitted; changing the static value retraces (JAX 0.10.2 prints 6, 3)."""
    class Calc:
        def __init__(self, x, mul):
            self.x, self.mul = x, mul

        @nx.jit
        def calc(self, y):
            return self.x * y if self.mul else y

    nx.tree_util.register_pytree_node(Calc, lambda c: ((c.x,), {"mul": c.mul}),
                                      lambda aux, ch: Calc(*ch, **aux))
    c = Calc(2, True)
    assert int(c.calc(3)) == 6
    c.mul = False
    assert int(c.calc(3)) == 3
    c.mul = True
    assert int(c.calc(3)) == 6
    a, b = (nx.tree_util.tree_structure(Calc(1, m)) for m in (True, True))
    assert a == b and hash(a) == hash(b)


# -- print_saved_residuals (the gradient-checkpointing page) ------------------------------------

def _g(W, x):
    y = jnp.dot(W, x)
    return jnp.sin(y)


def _site(fn, line_offset, col):
    return f"{__file__}:{fn.__code__.co_firstlineno + line_offset}:{col} ({fn.__name__})"


def test_print_saved_residuals_of_checkpointed_layers_is_jaxs(capsys):
    from nx_rune.ad_checkpoint import print_saved_residuals

    def f2(W1, W2, W3, x):
        x = nx.checkpoint(_g)(W1, x)
        x = nx.checkpoint(_g)(W2, x)
        x = nx.checkpoint(_g)(W3, x)
        return x
    W1, W2, W3, x = jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6)), jnp.ones(4)
    print_saved_residuals(f2, W1, W2, W3, x)
    # jax 0.10.2 prints these lines for the page's f2 (its g at <cell 0>:6:9)
    site = _site(_g, 2, 11)
    assert capsys.readouterr().out.splitlines() == [
        "f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
        "f32[7,6] from the argument W3", "f32[4] from the argument x",
        f"f32[5] output of sin from {site}", f"f32[6] output of sin from {site}"]
    # a function without checkpoints inside, checkpointed whole: only the arguments (JAX's too)

    def f(W1, W2, W3, x):
        return _g(W3, _g(W2, _g(W1, x)))
    print_saved_residuals(nx.checkpoint(f), W1, W2, W3, x)
    assert capsys.readouterr().out.splitlines() == [
        "f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
        "f32[7,6] from the argument W3", "f32[4] from the argument x"]


def test_saved_residuals_names_and_sources_as_jax(capsys):
    from nx_rune.ad_checkpoint import print_saved_residuals, saved_residuals

    def f(p, x, *rest, k):
        return jnp.sum(p['a'] * x) + jnp.sum(p['b'][0] * rest[0]) + jnp.sum(k * k)
    print_saved_residuals(f, {'a': jnp.ones((2, 3)), 'b': [jnp.ones(3)]}, jnp.ones(3),
                          jnp.ones(3), k=jnp.ones(2))
    # jax 0.10.2: the four argument lines, then a broadcast of x (nx_rune: its expand)
    assert capsys.readouterr().out.splitlines() == [
        "f32[2,3] from the argument p['a']", "f32[3] from the argument p['b'][0]",
        "f32[3] from the argument rest[0]", "f32[2] from the argument k",
        f"f32[2,3] output of expand from {_site(f, 1, 23)}"]  # col: the page's 19 + 4
    c = jnp.arange(3.0)
    res = saved_residuals(lambda x: jnp.sum(x * c), jnp.ones(3))
    assert [(r.shape, str(r.dtype), d) for r, d in res] == [((3,), "float32", "from a constant")]
    assert saved_residuals(lambda x: x.sum(), jnp.ones(3)) == []            # JAX: none
    assert [d for _, d in saved_residuals(lambda x: (x * 3.0).sum(), jnp.ones(3))] == \
        ["from a literal"]                                                  # JAX: f32[] literal
    # one array passed twice is listed under each argument (JAX: each its own input)
    W = jnp.ones((2, 2))
    assert [d for _, d in saved_residuals(lambda a, b: jnp.sum(a @ b), W, W)] == \
        ["from the argument a", "from the argument b"]
    with pytest.raises(TypeError, match="f must be callable"):
        saved_residuals(3, jnp.ones(2))


def test_saved_residuals_through_jit_and_custom_vjp():
    from nx_rune.ad_checkpoint import saved_residuals

    @nx.custom_vjp
    def cf(x):
        return jnp.sin(x)
    cf.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, g: (g * r,))
    got = [d for _, d in saved_residuals(lambda x: cf(x) * 2.0, jnp.ones(3))]
    assert got == ["from a literal", "residual of custom_vjp function 'cf'"]
    # a jitted call recomputes inside its compiled backward pass: it keeps its operands
    got = [d for _, d in saved_residuals(nx.jit(lambda W, x: jnp.sin(W @ x)),
                                         jnp.ones((3, 3)), jnp.ones(3))]
    assert got == ["from the argument W", "from the argument x"]
    # the residuals are what the backward pass reads: their count matches the values the
    # gradient needs (sin(sin(Wx)): W, x and the two sines' operands, as JAX's 4 residuals)
    res = saved_residuals(lambda W, x: jnp.sin(jnp.sin(W @ x)), jnp.ones((3, 3)), jnp.ones(3))
    assert len(res) == 4 and [r.shape for r, _ in res] == [(3, 3), (3,), (3,), (3,)]


# -- placement attributes of arrays (JAX's Array API on one CPU device) -------------------------

def test_array_devices_sharding_and_shards_as_jax():
    import pickle
    x = jnp.arange(6.0).reshape(2, 3)
    d = nx.devices()[0]
    # jax 0.10.2 on a CPU: platform 'cpu', id 0, device_kind 'cpu', x.devices()
    # {CpuDevice(id=0)}, repr of x.sharding as below, shard_shape the shape
    assert (d.platform, d.id, d.device_kind, d.process_index) == ("cpu", 0, "cpu", 0)
    assert (x.device.platform, x.device.id, x.device.device_kind) == ("cpu", 0, "cpu")
    assert x.device == d and d == x.device and len({x.device, d}) == 1
    assert repr(x.devices()) == "{CpuDevice(id=0)}"
    s = x.sharding
    assert repr(s) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert s == nx.sharding.SingleDeviceSharding(d) and hash(s) == hash(pickle.loads(
        pickle.dumps(s)))
    assert (s.device_set, s.memory_kind, s.num_devices) == ({d}, "device", 1)
    assert s.is_fully_addressable and s.is_fully_replicated and x.is_fully_addressable
    assert x.is_fully_replicated and s.shard_shape((2, 3)) == (2, 3)
    assert s.devices_indices_map((2, 3)) == {d: (slice(None), slice(None))}
    (shard,) = x.addressable_shards
    assert shard.device == d and shard.index == (slice(None), slice(None))
    assert shard.replica_id == 0 and shard.data is x and x.addressable_data(0) is x
    assert repr(shard) == ("Shard(device=CpuDevice(id=0), index=(slice(None, None, None), "
                           "slice(None, None, None)), replica_id=0, data=[[0. 1. 2.]\n"
                           " [3. 4. 5.]])")
    assert isinstance(shard, nx.Shard) and len(x.global_shards) == 1
    # the device and the sharding are accepted wherever JAX takes them
    assert nx.device_put(x, s) is x and nx.device_put(x, x.device) is x
    assert jnp.zeros(2, device=d).shape == (2,) and jnp.zeros(2, device=s).shape == (2,)
    seen = []
    nx.jit(lambda v: seen.append((v.sharding, v.devices())) or v)(x)
    assert seen == [(s, {d})]
    with pytest.raises(IndexError, match="one shard"):
        x.addressable_data(1)
    with pytest.raises(ValueError, match="memory_kind"):
        s.with_memory_kind("pinned_host")
    with pytest.raises(TypeError, match="device must be a device"):
        nx.sharding.SingleDeviceSharding("gpu")


# -- debug.breakpoint, linear_transpose, effects_barrier, JAX's logging options -----------------

def test_debug_breakpoint_opens_on_the_run_time_values(monkeypatch, capsys):
    typed = iter(["p z", "pp {'x': x}", "z.sum()", "w", "1/0", "c"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(typed))

    def f(x):
        z = x * 2
        nx.debug.breakpoint()
        return z
    nx.jit(f)(jnp.arange(3.0))
    out = capsys.readouterr().out
    assert "Entering jdb:" in out and "(f)" not in out and "f()" in out
    assert "Tensor([0., 2., 4.], dtype=float32)" in out          # p z: the call's value
    assert "{'x': Tensor([0., 1., 2.], dtype=float32)}" in out
    assert "Tensor(6., dtype=float32)" in out and "ZeroDivisionError" in out

    # in a branch not taken, nothing opens (the debugging page's breakpoint_if_nonfinite;
    # JAX 0.10.2: f(2., 1.) gives Array(2.) without a breakpoint)
    def check(x):
        def false_fn(x):
            nx.debug.breakpoint()
        nx.lax.cond(jnp.isfinite(x).all(), lambda x: None, false_fn, x)
        return x
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail("opened"))
    assert float(nx.jit(lambda x, y: check(x / y))(2.0, 1.0)) == 2.0
    typed = iter(["c"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(typed))
    nx.jit(lambda x, y: check(x / y))(2.0, 0.0)
    assert "Entering jdb:" in capsys.readouterr().out
    with pytest.raises(ValueError, match="backend"):
        nx.debug.breakpoint(backend="gpu")


def test_linear_transpose_as_jax():
    W = jnp.arange(6.0).reshape(2, 3)
    t = nx.linear_transpose(lambda x: W @ x, jnp.ones(3))
    (got,) = t(jnp.array([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(got), np.arange(6.0).reshape(2, 3).T @ [1, 2])
    # the cookbook page: the transpose of the JVP is the VJP (JAX 0.10.2 prints True)
    f = lambda W: jnp.tanh(W @ jnp.ones(3))  # noqa: E731
    f_jvp = lambda v: nx.jvp(f, (W,), (v,))[1]  # noqa: E731
    y, f_vjp_ref = nx.vjp(f, W)
    np.testing.assert_allclose(np.asarray(nx.linear_transpose(f_jvp, W)(jnp.ones_like(y))[0]),
                               np.asarray(f_vjp_ref(jnp.ones_like(y))[0]), rtol=1e-6)
    # pytrees in and out, ShapeDtypeStruct primals
    g = lambda a, b: {"s": a["u"] * 2.0 + b, "t": -b}  # noqa: E731
    ta, tb = nx.linear_transpose(g, {"u": nx.ShapeDtypeStruct((2,), np.float32)},
                                 jnp.zeros(2))({"s": jnp.ones(2), "t": jnp.ones(2)})
    assert np.asarray(ta["u"]).tolist() == [2.0, 2.0] and np.asarray(tb).tolist() == [0.0, 0.0]
    with pytest.raises(TypeError, match="cotangent leaf 0 has shape"):
        t(jnp.ones(3))
    with pytest.raises(TypeError, match="structure"):
        t((jnp.ones(2), jnp.ones(2)))
    with pytest.raises(TypeError, match="only floating and complex inputs"):
        nx.linear_transpose(lambda x: x, jnp.arange(3))
    with pytest.raises(TypeError, match="fun must be callable"):
        nx.linear_transpose(3, jnp.ones(2))


def test_effects_barrier_and_logging_options():
    assert nx.effects_barrier() is None
    for name, value in [("jax_explain_cache_misses", True), ("jax_log_compiles", True),
                        ("jax_remat3", True), ("jax_traceback_filtering", "off")]:
        default = nx.config.read(name)
        try:
            nx.config.update(name, value)
            assert nx.config.read(name) == value and getattr(nx.config, name) == value
        finally:
            nx.config.update(name, default)
    assert (nx.config.jax_remat3, nx.config.jax_traceback_filtering) == (False, "auto")
    with pytest.raises(TypeError, match="expected True or False"):
        nx.config.update("jax_log_compiles", "yes")
    with pytest.raises(ValueError, match="unknown config option 'jax_no_such_option'"):
        nx.config.update("jax_no_such_option", True)


# -- mutable array references (the "state" pages) -----------------------------------------------

def test_refs_as_jax_state_page():
    # jax 0.10.2's outputs of the page's cells
    def g(x):
        x_ref = nx.new_ref(0.)
        x_ref[...] = jnp.sin(x)
        return x_ref[...]
    np.testing.assert_allclose(float(nx.grad(g)(1.0)), 0.5403023, rtol=1e-6)
    x_ref = nx.new_ref(jnp.arange(12.).reshape(3, 4))
    row = x_ref[0]
    x_ref[1] = row
    x_ref[2, 3] = x_ref[1, 2]
    x_ref[0, :3] = x_ref[:, 1]
    vals = x_ref[jnp.array([0, 0, 1]), jnp.array([1, 2, 3])]
    x_ref[jnp.array([1, 2, 1]), jnp.array([0, 0, 1])] = vals
    assert np.asarray(row).tolist() == [0, 1, 2, 3]          # a value, not a view of the Ref
    assert np.asarray(nx.freeze(x_ref)).tolist() == [[1, 1, 9, 3], [1, 3, 2, 3], [9, 9, 10, 2]]

    def scale_into(x, out_ref):     # vmap: each example writes its own entry
        out_ref[...] = 2.0 * x
    out_ref = nx.new_ref(jnp.zeros(3))
    nx.vmap(scale_into)(jnp.arange(3.0), out_ref)
    assert np.asarray(out_ref[...]).tolist() == [0.0, 2.0, 4.0]

    @nx.jit
    def sin_inplace(x_ref):
        x_ref[...] = jnp.sin(x_ref[...])
    x_ref = nx.new_ref(jnp.arange(3.0))
    p0 = x_ref.unsafe_buffer_pointer()
    assert repr(x_ref) == "Ref([0., 1., 2.], dtype=float32)"
    sin_inplace(x_ref)
    assert x_ref.unsafe_buffer_pointer() == p0
    np.testing.assert_allclose(np.asarray(x_ref[...]), np.sin(np.arange(3.0)), rtol=1e-6)
    r = nx.new_ref(jnp.zeros(2))
    r[0] += 5
    r.addupdate(1.0, 1)
    assert repr(r) == "Ref([5., 1.], dtype=float32)" and (r.shape, r.dtype) == ((2,), np.float32)


def test_refs_refuse_as_jax():
    r = nx.new_ref(1.0)
    with pytest.raises(TypeError):
        jnp.sin(r)                           # JAX: TypeError, a Ref is not an array
    with pytest.raises(TypeError):
        r + 1
    shared = nx.new_ref(0.0)
    with pytest.raises(TypeError, match="pass the Ref to the function as an argument"):
        nx.vmap(lambda x: shared.__setitem__(Ellipsis, x))(jnp.arange(3.0))

    @nx.jit
    def f():
        shared[...] += 1.0
    with pytest.raises(TypeError, match="pass the Ref to the function as an argument"):
        f()
    with pytest.raises(TypeError, match="closed over by it cannot be read"):
        nx.jit(lambda: shared[...] * 2)()
    two = nx.new_ref(2.0)
    assert float(nx.grad(lambda x: x * two[...])(3.0)) == 2.0     # eagerly: read at once
    with pytest.raises(TypeError, match="expected a Ref"):
        nx.freeze(jnp.ones(2))
    with pytest.raises(ValueError, match="memory_space"):
        nx.new_ref(1.0, memory_space="host")


def test_fwd_and_bwd_as_jax():
    # the VJP-objects page: jax 0.10.2 prints (3, 3) (2, 3) for the shapes
    def layer(W, x):
        return jnp.tanh(x @ W)
    rng = np.random.default_rng(3)
    W, x = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    d = 1 - np.tanh(x @ W) ** 2                          # the cotangent ones through tanh
    for jitted in (True, False):
        fwd, bwd = nx.fwd_and_bwd(layer, argnums=(0, 1), jitted=jitted)
        y, res = fwd(W, x)
        np.testing.assert_allclose(np.asarray(y), np.tanh(x @ W), rtol=1e-12)
        dW, dx = bwd(res, jnp.ones_like(y))
        np.testing.assert_allclose(np.asarray(dW), x.T @ d, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(dx), d @ W.T, rtol=1e-12)
    fwd, bwd = nx.fwd_and_bwd(lambda W, x: (layer(W, x), x.sum()), argnums=1, has_aux=True)
    y, res, aux = fwd(W, x)
    assert float(aux) == float(x.sum())
    np.testing.assert_allclose(np.asarray(bwd(res, jnp.ones_like(y))), d @ W.T, rtol=1e-12)
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        nx.fwd_and_bwd(layer, 2)[0](W, x)
    with pytest.raises(TypeError, match="argnums must be"):
        nx.fwd_and_bwd(layer, ())


def test_jit_tracer_prints_as_jaxs():
    # jax 0.10.2 (the key-concepts, debugging and sharp-bits pages): JitTracer(int32[5]),
    # JitTracer(~float32[]) for a Python float, JitTracer(~int32[]) for x + 1 of a Python int
    seen = []
    nx.jit(lambda x: seen.append(repr(x)))(jnp.arange(5))
    nx.jit(lambda x: seen.append(str(x)))(2.0)
    nx.jit(lambda x: seen.append("{}".format(x + 1)))(2)
    nx.jit(lambda x: seen.append(repr(x)))(jnp.ones((2, 3)))
    assert seen == ["JitTracer(int32[5])", "JitTracer(~float32[])", "JitTracer(~int32[])",
                    "JitTracer(float32[2,3])"]


@pytest.mark.parametrize("make", [
    lambda: jnp.dot(jnp.ones((5, 4)), jnp.ones(3)),
    lambda: jnp.matmul(jnp.ones((5, 4)), jnp.ones((3, 2))),
    lambda: jnp.ones((5, 4)) @ jnp.ones(3),
    lambda: jnp.ones(3) + jnp.ones(4),
    lambda: jnp.vdot(jnp.ones(3), jnp.ones(4)),
    lambda: jnp.inner(jnp.ones(3), jnp.ones(4)),
    lambda: jnp.tensordot(jnp.ones((2, 3)), jnp.ones((4, 2)), 1),
    lambda: jnp.ones(6).reshape(4, 2),
    lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))]),
    lambda: nx.jit(lambda a, b: a * b)(jnp.ones(3), jnp.ones(4)),
    lambda: nx.vmap(jnp.dot)(jnp.ones((2, 5, 4)), jnp.ones((2, 3))),
])
def test_shape_mismatch_is_numpys_value_error_and_jaxs_type_error(make):
    # jax 0.10.2 raises TypeError for each of these (NumPy: ValueError); the neural-network
    # tutorial catches it: ``except TypeError: print('Invalid shapes!')``
    with pytest.raises(nx.errors.ShapeError) as info:
        make()
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_neural_network_tutorial_batch_error_is_caught_as_jax():
    params = [(jnp.ones((512, 784)), jnp.ones(512)), (jnp.ones((10, 512)), jnp.ones(10))]

    def predict(params, image):
        activations = image
        for w, b in params[:-1]:
            activations = jnp.maximum(0, jnp.dot(w, activations) + b)
        final_w, final_b = params[-1]
        return jnp.dot(final_w, activations) + final_b
    assert predict(params, jnp.ones(784)).shape == (10,)
    try:
        predict(params, jnp.ones((10, 784)))
        caught = False
    except TypeError:
        caught = True          # JAX 0.10.2 prints 'Invalid shapes!' here
    assert caught
