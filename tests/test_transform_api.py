"""JAX's transform API on nx_rune: jit as a decorator factory, jacobian and has_aux, eval_shape
and ShapeDtypeStruct, devices and placement, nx.debug.print/callback under every
transformation, jit(f).lower(...)/.compile(), optimizer schedules under jit.

Expected values: closed forms, NumPy, or JAX 0.10.2's output pinned as literals (the debug
printing cases are the exact lines jax.debug.print wrote for the same program)."""
import functools
import inspect
import math
import sys

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import jit
from nx_rune.errors import DonatedArrayError

O = nx.optimizers


def out(capsys):
    return capsys.readouterr().out


# -- 1. jit as a decorator factory ----------------------------------------------------------------

def test_jit_decorator_factory_static_argnums():
    @jit(static_argnums=1)
    def f(x, n):
        return x ** n
    np.testing.assert_array_equal(f(nx.arange(3.0), 2), [0.0, 1.0, 4.0])
    np.testing.assert_array_equal(f(nx.arange(3.0), 3), [0.0, 1.0, 8.0])
    assert f.cache_info().misses == 2
    assert f.__name__ == "f"


def test_jit_decorator_factory_static_argnames_and_partial():
    @jit(static_argnames="axis")
    def total(x, axis):
        return x.sum(axis)
    x = nx.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(total(x, axis=1), [3.0, 12.0])

    @functools.partial(jit, static_argnums=(1,))
    def scale(x, k):
        return x * k if k > 0 else -x      # branches on the static value
    np.testing.assert_array_equal(scale(nx.ones(2), 3), [3.0, 3.0])
    np.testing.assert_array_equal(scale(nx.ones(2), -1), [-1.0, -1.0])
    # the plain form is unchanged
    g = jit(lambda x, n: x * n, static_argnums=1)
    np.testing.assert_array_equal(g(nx.ones(2), 4), [4.0, 4.0])


def test_jit_decorator_factory_donation():
    @jit(donate_argnums=0)
    def inc(x):
        return x + 1
    x = nx.asarray(np.arange(3.0))
    x = nx.array(x)         # memory of its own: donatable
    np.testing.assert_array_equal(inc(x), [1.0, 2.0, 3.0])
    with pytest.raises(DonatedArrayError):
        x.numpy()

    @jit(donate_argnames="y")
    def inc2(y):
        return y + 1
    y = nx.array(np.arange(3.0))
    np.testing.assert_array_equal(inc2(y), [1.0, 2.0, 3.0])
    with pytest.raises(DonatedArrayError):
        y.numpy()


def test_jit_accepts_jax_placement_options():
    f = jit(lambda x: x * 2, keep_unused=True, inline=True, device=nx.devices()[0],
            backend="cpu", in_shardings=None, out_shardings=None, compiler_options={})
    np.testing.assert_array_equal(f(nx.ones(2)), [2.0, 2.0])


def test_jit_bad_options_name_the_argument():
    with pytest.raises(TypeError, match="static_argnums"):
        jit(static_argnums="a")(lambda x, a: x)
    with pytest.raises(ValueError, match="backend"):
        jit(lambda x: x, backend="gpu")
    with pytest.raises(ValueError, match="donate_argnames 'z'"):
        jit(lambda x: x, donate_argnames="z")
    with pytest.raises(TypeError, match="donate_argnames"):
        jit(lambda x: x, donate_argnames=3)
    with pytest.raises(TypeError, match="fun must be callable"):
        jit(static_argnums=0)(3)


def test_jit_signature_matches_jax():
    # jax 0.10.2: jit(fun, /, *, in_shardings, out_shardings, static_argnums, static_argnames,
    # donate_argnums, donate_argnames, keep_unused, device, backend, inline, compiler_options)
    params = inspect.signature(nx.jit).parameters
    for name in ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames",
                 "keep_unused", "device", "backend", "inline", "in_shardings",
                 "out_shardings", "compiler_options"):
        assert name in params, name


# -- 2. jacobian, has_aux, argnums, allow_int, reduce_axes ----------------------------------------

def _f_aux(x, y):
    return nx.stack([x[0] * y, nx.sin(x[1]) * y ** 2]), {"s": x.sum()}


@pytest.mark.parametrize("J", [nx.jacfwd, nx.jacrev, nx.jacobian])
def test_jacobians_has_aux_argnums_tuple(J):
    x, y = nx.asarray([1.0, 2.0]), nx.asarray(3.0)
    (jx, jy), aux = J(_f_aux, argnums=(0, 1), has_aux=True)(x, y)
    # jax 0.10.2: [[3, 0], [0, -3.74532151222229]], [1, 5.455784320831299], {'s': 3.0};
    # closed form: d/dx1 sin(x1) y^2 = cos(2) * 9, d/dy = (x0, 2 y sin(x1))
    np.testing.assert_allclose(jx, [[3.0, 0.0], [0.0, 9 * math.cos(2.0)]], rtol=1e-6)
    np.testing.assert_allclose(jy, [1.0, 6 * math.sin(2.0)], rtol=1e-6)
    assert list(aux) == ["s"] and float(aux["s"]) == 3.0


def test_jacobian_is_jacrev_with_jax_signature():
    # jax 0.10.2 signatures
    assert list(inspect.signature(nx.jacobian).parameters) == [
        "f", "argnums", "has_aux", "holomorphic", "allow_int"]
    assert list(inspect.signature(nx.jacrev).parameters) == [
        "f", "argnums", "has_aux", "holomorphic", "allow_int"]
    assert list(inspect.signature(nx.jacfwd).parameters) == [
        "f", "argnums", "has_aux", "holomorphic"]
    assert list(inspect.signature(nx.hessian).parameters) == [
        "f", "argnums", "has_aux", "holomorphic"]
    assert list(inspect.signature(nx.grad).parameters) == [
        "f", "argnums", "has_aux", "holomorphic", "allow_int", "reduce_axes"]
    assert list(inspect.signature(nx.value_and_grad).parameters) == [
        "f", "argnums", "has_aux", "holomorphic", "allow_int", "reduce_axes"]
    assert "reduce_axes" in inspect.signature(nx.vjp).parameters
    assert "has_aux" in inspect.signature(nx.linearize).parameters
    f = lambda x: nx.sin(x)
    x = nx.asarray([0.5, 1.5])
    np.testing.assert_array_equal(nx.jacobian(f)(x), nx.jacrev(f)(x))


def test_hessian_has_aux():
    x = nx.asarray([1.0, 2.0])
    h, aux = nx.hessian(lambda x: ((x ** 3).sum() * x[0], x * 2), has_aux=True)(x)
    # jax 0.10.2: [[12, 12], [12, 12]], aux [2, 4]
    np.testing.assert_allclose(h, [[12.0, 12.0], [12.0, 12.0]])
    np.testing.assert_array_equal(aux, [2.0, 4.0])


def test_jacfwd_has_aux_computes_aux_once_and_kwargs_pass_through():
    calls = []

    def f(x, k=1.0):
        calls.append(1)
        return x ** 2 * k, x[0]
    jac, aux = nx.jacfwd(f, has_aux=True)(nx.asarray([1.0, 2.0]), k=3.0)
    np.testing.assert_allclose(jac, [[6.0, 0.0], [0.0, 12.0]])
    assert float(aux) == 1.0
    assert len(calls) == 1
    # jax 0.10.2 passes keyword arguments to f undifferentiated: [[2, 0], [0, 2]]
    np.testing.assert_allclose(nx.jacrev(lambda x, k=1.0: x * k)(nx.ones(2), k=2.0),
                               [[2.0, 0.0], [0.0, 2.0]])


def test_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match="pair"):
        nx.jacrev(lambda x: x, has_aux=True)(nx.ones(2))
    with pytest.raises(TypeError, match="has_aux"):
        nx.jacfwd(lambda x: x, has_aux="yes")


def test_grad_allow_int_gives_float0():
    gx, gn = nx.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    # jax 0.10.2: (3.0, array of dtype [('float0', 'V')] and shape ())
    assert float(gx) == 3.0
    assert gn.dtype == np.dtype([("float0", np.void, 0)]) and gn.shape == ()
    g = nx.grad(lambda x, n: (x * n).sum(), argnums=1, allow_int=True)(nx.ones(3),
                                                                       nx.arange(3))
    assert g.dtype == np.dtype([("float0", np.void, 0)]) and g.shape == (3,)
    with pytest.raises(TypeError, match="allow_int"):
        nx.grad(lambda x: x)(1)


def test_reduce_axes_is_refused_as_in_jax():
    with pytest.raises(NotImplementedError, match="reduce_axes"):
        nx.grad(lambda x: x, reduce_axes=("i",))
    with pytest.raises(NotImplementedError, match="reduce_axes"):
        nx.vjp(lambda x: x, nx.ones(2), reduce_axes=("i",))
    nx.grad(lambda x: x, reduce_axes=())(1.0)


def test_linearize_has_aux():
    x = nx.asarray([1.0, 2.0])
    y, f_jvp, aux = nx.linearize(lambda x: (nx.sin(x), x.sum()), x, has_aux=True)
    np.testing.assert_allclose(y, np.sin([1.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(f_jvp(nx.ones(2)), np.cos([1.0, 2.0]), rtol=1e-6)
    assert float(aux) == 3.0


# -- 3. eval_shape and ShapeDtypeStruct -----------------------------------------------------------

def S(shape, dtype, weak=False):
    return nx.ShapeDtypeStruct(shape, dtype, weak_type=weak)


def test_shape_dtype_struct():
    s = nx.ShapeDtypeStruct((3,), nx.float32)
    # jax 0.10.2's reprs
    assert repr(s) == "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    assert repr(S((), "float32", True)) == \
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    assert s.ndim == 1 and s.size == 3 and s == S([3], np.float32) and hash(s) == hash(S((3,),
                                                                                         "f4"))
    assert s != S((3,), nx.float64)
    with pytest.raises(TypeError, match="shape"):
        nx.ShapeDtypeStruct(3, nx.float32)
    with pytest.raises(ValueError, match="negative"):
        nx.ShapeDtypeStruct((-1,), nx.float32)
    with pytest.raises(TypeError, match="dtype"):
        nx.ShapeDtypeStruct((1,), "no such dtype")


def test_eval_shape_values_as_jax():
    got = nx.eval_shape(lambda x, y: {"a": x @ y, "b": (x.sum(), 1)},
                        S((2, 3), nx.float32), nx.ones((3, 4), nx.float32))
    # jax 0.10.2
    assert got == {"a": S((2, 4), nx.float32), "b": (S((), nx.float32), S((), nx.int32, True))}
    got = nx.eval_shape(lambda x: (x.astype(nx.int8), x > 0, x * 1j), S((5,), nx.float32))
    assert got == (S((5,), nx.int8), S((5,), nx.bool_), S((5,), nx.complex64))
    assert nx.eval_shape(lambda x: x * 2, 1.0) == S((), nx.float32, True)
    assert nx.eval_shape(lambda x: x.T, np.ones((2, 5))) == S((5, 2), nx.float64)


def test_eval_shape_does_not_compute():
    seen = []

    def f(x):
        nx.debug.callback(seen.append, x)      # would run if f were computed
        return nx.exp(x) @ x.T
    assert nx.eval_shape(f, S((1000, 3), nx.float32)) == S((1000, 1000), nx.float32)
    assert seen == []


def test_eval_shape_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="'x'"):
        nx.eval_shape(lambda x: x, "a")
    with pytest.raises(TypeError, match="callable"):
        nx.eval_shape(3, 1.0)
    with pytest.raises(TypeError, match="ShapeDtypeStruct"):
        jit(lambda x: x)(S((2,), nx.float32))


# -- 4. devices and placement ---------------------------------------------------------------------

def test_devices():
    # jax 0.10.2 on a CPU: [CpuDevice(id=0)], 'cpu', str 'cpu:0'
    assert repr(nx.devices()) == "[CpuDevice(id=0)]"
    assert repr(nx.local_devices()) == "[CpuDevice(id=0)]"
    assert nx.default_backend() == "cpu"
    d = nx.devices()[0]
    assert (d.id, d.platform, d.device_kind, d.process_index, str(d)) == (0, "cpu", "cpu", 0,
                                                                        "cpu:0")
    assert nx.device_count() == nx.local_device_count() == 1
    assert nx.process_index() == 0 and nx.process_count() == 1
    with pytest.raises(ValueError, match="backend"):
        nx.devices(backend="gpu")
    with pytest.raises(ValueError, match="process_index"):
        nx.local_devices(process_index=1)


def test_device_put_get_block_until_ready():
    a = np.arange(3.0)
    t = nx.device_put(a)
    a[0] = 99.0                          # a copy, as JAX's transfer
    np.testing.assert_array_equal(t, [0.0, 1.0, 2.0])
    x = nx.ones(2)
    assert nx.device_put(x) is x
    assert nx.device_put(x, nx.devices()[0]) is x
    tree = nx.device_put({"a": 1.0, "b": [np.int32(2)]})
    assert isinstance(tree["a"], nx.Tensor) and tree["b"][0].dtype == np.int32
    got = nx.device_get({"x": x, "n": 3})
    assert type(got["x"]) is np.ndarray and got["n"] == 3
    np.testing.assert_array_equal(got["x"], [1.0, 1.0])
    t = (x, 3)
    assert nx.block_until_ready(t) is t
    assert x.block_until_ready() is x
    with pytest.raises(TypeError, match="device"):
        nx.device_put(x, "gpu")
    with pytest.raises(TypeError, match="leaves"):
        nx.device_put(object())


def test_device_put_under_jit_and_grad():
    f = jit(lambda x: nx.device_put(x) * 2)
    np.testing.assert_array_equal(f(nx.ones(2)), [2.0, 2.0])
    assert float(nx.grad(lambda x: nx.device_put(x) ** 2)(3.0)) == 6.0
    assert nx.jit(lambda x: x.block_until_ready() + 1)(nx.ones(1))[0] == 2.0


def test_config_jax_spellings():
    nx.config.update("jax_platform_name", "cpu")
    nx.config.update("jax_enable_x64", True)
    try:
        assert nx.config.jax_enable_x64 is True
        assert nx.asarray(1.0).dtype == np.float64
    finally:
        nx.config.update("jax_enable_x64", False)
    assert nx.asarray(1.0).dtype == np.float32
    with pytest.raises(ValueError, match="cpu"):
        nx.config.update("jax_platforms", "tpu")


# -- 5. debug.print and debug.callback ------------------------------------------------------------

def test_debug_print_formats_as_jax(capsys):
    x = nx.arange(3.0)
    nx.debug.print("x={x}", x=x)
    nx.debug.print("{}", 1.5)
    nx.debug.print("hello")
    nx.debug.print("{} {y:.2f}", x, y=nx.asarray(2.0))
    nx.debug.print("{}", 1)
    nx.debug.print("{}", True)
    nx.debug.print("{}", 0.1)
    nx.debug.print("{x}", x=nx.asarray(1 / 3, dtype=nx.float32))
    nx.debug.print("{}", nx.arange(3))
    nx.debug.print("{}", "str")
    nx.debug.print("{}", None)
    nx.debug.print("abc", x, skip_format_check=True)
    nx.debug.print("{:>6}", nx.asarray(3))
    nx.debug.print("{0} {0}", x)
    nx.debug.print("{a[0]}", a=x)
    # jax 0.10.2's output for the same calls
    assert out(capsys) == (
        "x=[0. 1. 2.]\n1.5\nhello\n[0. 1. 2.] 2.00\n1\nTrue\n0.10000000149011612\n"
        "0.3333333432674408\n[0 1 2]\nstr\nNone\nabc [0. 1. 2.]\n     3\n"
        "[0. 1. 2.] [0. 1. 2.]\n0.0\n")


def test_debug_print_format_errors_as_jax():
    x = nx.arange(3.0)
    # jax 0.10.2: IndexError, ValueError (unused), KeyError, TypeError (a spec on an array)
    with pytest.raises(IndexError):
        nx.debug.print("{}")
    with pytest.raises(ValueError, match=r"Unused positional arguments.*\[2\]"):
        nx.debug.print("{}", 1, 2)
    with pytest.raises(KeyError):
        nx.debug.print("{x}", y=1)
    with pytest.raises(ValueError, match="f-string"):
        nx.debug.print("x", y=1)
    with pytest.raises(TypeError, match="fmt"):
        nx.debug.print(3)
    with pytest.raises(TypeError):
        nx.debug.print("{:.2f}", x)
    with pytest.raises(TypeError, match="two-call"):
        nx.debug.print(None, 1)
    with pytest.raises(TypeError, match="callable"):
        nx.debug.callback(3, x)


def test_debug_print_two_call_form(capsys):
    nx.debug.print(ordered=True)("{} {}", 1, nx.asarray(2.5))
    nx.debug.callback(ordered=True)(lambda v: sys.stdout.write(f"cb {v}\n"), nx.ones(2))
    assert out(capsys) == "1 2.5\ncb [1. 1.]\n"


def _f_printing(x):
    nx.debug.print("in f: {}", x)
    y = x * 2
    nx.debug.print("y: {}", y)
    return y.sum()


def test_debug_print_under_jit_runs_every_call(capsys):
    f = jit(_f_printing)
    x = nx.arange(3.0)
    assert float(f(x)) == 6.0
    assert float(f(x + 1)) == 12.0
    # jax 0.10.2
    assert out(capsys) == ("in f: [0. 1. 2.]\ny: [0. 2. 4.]\n"
                           "in f: [1. 2. 3.]\ny: [2. 4. 6.]\n")
    assert f.cache_info().misses == 1


def test_debug_print_in_the_program_text():
    text = str(nx.make_jaxpr(_f_printing)(nx.arange(3.0)))
    assert "debug_print[fmt='in f: {}'] a" in text
    assert "debug_print[fmt='y: {}'] b" in text
    # (a function of our own: Ray's workers, started by other tests, replace builtins.print)
    def show(x):
        print(x)

    text = str(nx.make_jaxpr(lambda x: nx.debug.callback(show, x))(nx.arange(3.0)))
    assert "debug_callback[callback=test_debug_print_in_the_program_text.<locals>.show] a" \
        in text


def test_debug_print_is_never_dead_code(capsys):
    @jit
    def g(x):
        nx.debug.print("unused {}", x.sum())
        nx.lax.fori_loop(0, 2, lambda i, c: (nx.debug.print("i {}", i), c)[1], x)
        return x * 2
    np.testing.assert_array_equal(g(nx.arange(3.0)), [0.0, 2.0, 4.0])
    # jax 0.10.2 prints both
    assert out(capsys) == "unused 3.0\ni 0\ni 1\n"
    k = jit(lambda x: (nx.debug.print("hi"), x)[1])
    k(nx.ones(1))
    k(nx.ones(1))
    assert out(capsys) == "hi\nhi\n"


def test_debug_print_keeps_program_order_through_fusion(capsys):
    def f(x):
        y = nx.sin(x) * 2 + 1
        nx.debug.print("A {}", y.sum())
        nx.debug.print("B {}", x)
        z = nx.exp(y) * y
        nx.debug.print("C {}", z.sum() > 0)
        return z
    x = nx.arange(3.0)
    eager = f(x)
    expected = out(capsys)
    np.testing.assert_allclose(jit(f)(x), eager, rtol=1e-6)
    assert out(capsys) == expected
    assert [ln[0] for ln in expected.splitlines()] == ["A", "B", "C"]


def test_debug_print_under_grad_jvp_prints_primals(capsys):
    x = nx.arange(3.0)
    h = lambda x: (nx.debug.print("p {}", x), (x ** 2).sum())[1]
    np.testing.assert_array_equal(nx.grad(h)(x), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(jit(nx.grad(h))(x), [0.0, 2.0, 4.0])
    assert out(capsys) == "p [0. 1. 2.]\np [0. 1. 2.]\n"      # jax 0.10.2: once each
    np.testing.assert_array_equal(nx.grad(jit(_f_printing))(x), [2.0, 2.0, 2.0])
    assert out(capsys) == "in f: [0. 1. 2.]\ny: [0. 2. 4.]\n"  # once (not again in the VJP)
    nx.jvp(jit(_f_printing), (x,), (nx.ones(3),))
    assert out(capsys) == "in f: [0. 1. 2.]\ny: [0. 2. 4.]\n"
    nx.hessian(lambda x: (nx.debug.print("h {}", x), (x ** 3).sum())[1])(x)
    nx.jacrev(jit(lambda x: (nx.debug.print("j {}", x), x ** 2)[1]))(x)
    nx.jacfwd(lambda x: (nx.debug.print("f {}", x), x ** 2)[1])(x)
    y, fj = nx.linearize(jit(lambda x: (nx.debug.print("l {}", x), x ** 2)[1]), x)
    fj(nx.ones(3))
    # jax 0.10.2: each once, with the primal values
    assert out(capsys) == "h [0. 1. 2.]\nj [0. 1. 2.]\nf [0. 1. 2.]\nl [0. 1. 2.]\n"


def test_debug_print_under_vmap_prints_each_example(capsys):
    x = nx.arange(3.0)
    v = lambda x: (nx.debug.print("v {}", x), x * 2)[1]
    np.testing.assert_array_equal(nx.vmap(v)(x), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(jit(nx.vmap(v))(x), [0.0, 2.0, 4.0])
    expected = "v 0.0\nv 1.0\nv 2.0\n"      # jax 0.10.2
    assert out(capsys) == expected * 2
    np.testing.assert_array_equal(nx.vmap(jit(_f_printing))(nx.ones((2, 3))), [6.0, 6.0])
    assert out(capsys) == ("in f: [1. 1. 1.]\nin f: [1. 1. 1.]\n"
                           "y: [2. 2. 2.]\ny: [2. 2. 2.]\n")
    m = nx.arange(4.0).reshape(2, 2)
    nx.vmap(nx.vmap(lambda x: nx.debug.print("{}", x)))(m)
    jit(nx.vmap(nx.vmap(lambda x: nx.debug.print("{}", x))))(m)
    assert out(capsys) == "0.0\n2.0\n1.0\n3.0\n" * 2       # jax 0.10.2's order
    nx.vmap(lambda x, y: nx.debug.print("{} {}", x, y), in_axes=(0, None))(x, 5.0)
    assert out(capsys) == "0.0 5.0\n1.0 5.0\n2.0 5.0\n"


def test_debug_print_in_control_flow_under_jit(capsys):
    x = nx.arange(3.0)

    def body(c, x):
        nx.debug.print("c={c} x={x}", c=c, x=x)
        return c + x, c
    c, ys = jit(lambda xs: nx.lax.scan(body, 0.0, xs))(x)
    assert float(c) == 3.0
    np.testing.assert_array_equal(ys, [0.0, 0.0, 1.0])
    assert out(capsys) == "c=0.0 x=0.0\nc=0.0 x=1.0\nc=1.0 x=2.0\n"      # jax 0.10.2
    branches = (lambda x: (nx.debug.print("T {}", x), x)[1],
                lambda x: (nx.debug.print("F {}", x), -x)[1])
    jit(lambda p, x: nx.lax.cond(p, *branches, x))(True, x)
    jit(lambda p, x: nx.lax.cond(p, *branches, x))(False, x)
    assert out(capsys) == "T [0. 1. 2.]\nF [0. 1. 2.]\n"
    r = jit(lambda x: nx.lax.while_loop(lambda c: c < 3,
                                        lambda c: (nx.debug.print("w {}", c), c + 1)[1],
                                        x.sum() * 0))(x)
    assert float(r) == 3.0
    assert out(capsys) == "w 0.0\nw 1.0\nw 2.0\n"


def test_debug_callback(capsys):
    got = []

    def cb(a, b=None):
        got.append((type(a).__name__, np.asarray(a).tolist(), b))
    x = nx.arange(3.0)
    nx.debug.callback(cb, x, b=2)
    f = jit(lambda x: nx.debug.callback(cb, x * 2, b="s"))
    f(x)
    f(x + 1)
    nx.debug.callback(cb, 1.0)
    assert got == [("Tensor", [0.0, 1.0, 2.0], 2), ("Tensor", [0.0, 2.0, 4.0], "s"),
                   ("Tensor", [2.0, 4.0, 6.0], "s"), ("Tensor", 1.0, None)]


def test_debug_callback_under_jit_gets_its_own_copies():
    kept = []

    @jit
    def f(x):
        y = x + 1
        nx.debug.callback(kept.append, y)
        return nx.exp(y * 3) - 1         # may reuse y's memory after the callback
    x = nx.arange(4.0)
    r = f(x)
    np.testing.assert_allclose(r, np.expm1(3 * (np.arange(4.0) + 1)), rtol=1e-5)
    np.testing.assert_array_equal(kept[0], [1.0, 2.0, 3.0, 4.0])
    kept[0][0] = 100.0                   # the callback's array is its own
    np.testing.assert_array_equal(f(x), r)


# -- 6. lower / compile / trace -------------------------------------------------------------------

def test_lower_and_compile():
    f = jit(lambda x, n: nx.sin(x) * 2 + x ** n, static_argnums=1)
    x = nx.arange(3.0)
    low = f.lower(x, 2)
    assert low.as_text() == str(nx.make_jaxpr(lambda x: nx.sin(x) * 2 + x ** 2)(x))
    assert low.out_info == nx.ShapeDtypeStruct((3,), nx.float32)
    comp = low.compile()
    expected = np.sin(np.arange(3.0, dtype=np.float32)) * 2 + np.arange(3.0) ** 2
    np.testing.assert_allclose(comp(x), expected, rtol=1e-6)
    assert "fused" in comp.as_text()          # the optimized program
    with pytest.raises(TypeError, match="'x'.*f32\\[3\\].*f32\\[4\\]"):
        comp(nx.arange(4.0))
    with pytest.raises(TypeError, match="tree structure"):
        comp(x, 2)                             # static arguments were fixed by lower
    # a placeholder lowers too
    low2 = jit(lambda x: x.T).lower(nx.ShapeDtypeStruct((2, 3), nx.float32))
    assert "permute[axes=(1, 0)]" in low2.as_text()
    np.testing.assert_array_equal(low2.compile()(nx.ones((2, 3))), np.ones((3, 2)))


def test_trace_and_eval_shape_stages():
    f = jit(lambda x, n: x ** n, static_argnums=1)
    t = f.trace(nx.arange(3.0), 2)
    assert str(t.jaxpr) == str(nx.make_jaxpr(lambda x: x ** 2)(nx.arange(3.0)))
    assert t.out_info == nx.ShapeDtypeStruct((3,), nx.float32)
    np.testing.assert_array_equal(t.lower().compile()(nx.arange(3.0)), [0.0, 1.0, 4.0])
    assert f.eval_shape(nx.arange(3.0), 2) == nx.ShapeDtypeStruct((3,), nx.float32)


def test_compiled_runs_debug_effects(capsys):
    c = jit(_f_printing).lower(nx.ShapeDtypeStruct((3,), nx.float32)).compile()
    c(nx.arange(3.0))
    assert out(capsys) == "in f: [0. 1. 2.]\ny: [0. 2. 4.]\n"


# -- 7. optimizer schedules under jit -------------------------------------------------------------

SCHEDULES = {
    "constant": (1e-2, lambda k: 1e-2),
    "polynomial": (O.polynomial_schedule(1.0, 0.1, 2.0, 10, 2),
                   lambda k: 0.9 * (1 - min(max(k - 2, 0), 10) / 10) ** 2 + 0.1),
    "exponential_staircase": (O.exponential_decay(1.0, 3, 0.5, 1, staircase=True,
                                                  end_value=0.2),
                              lambda k: 1.0 if k <= 1 else max(0.5 ** ((k - 1) // 3), 0.2)),
    "exponential_growth": (O.exponential_decay(1.0, 3, 2.0, 1, end_value=3.0),
                           lambda k: 1.0 if k <= 1 else min(2.0 ** ((k - 1) / 3), 3.0)),
    "cosine": (O.cosine_decay_schedule(1.0, 5, 0.1),
               lambda k: 0.9 * 0.5 * (1 + math.cos(math.pi * min(k, 5) / 5)) + 0.1),
    "join": (O.join_schedules([O.constant_schedule(1.0), O.linear_schedule(1.0, 0.0, 4)], [3]),
             lambda k: 1.0 if k < 3 else 1.0 - min(k - 3, 4) / 4),
    "warmup_cosine": (O.warmup_cosine_decay_schedule(0.0, 1.0, 2, 8),
                      lambda k: k / 2 if k < 2 else
                      0.5 * (1 + math.cos(math.pi * min(k - 2, 6) / 6))),
    "piecewise": (O.piecewise_constant_schedule(1.0, {2: 0.5, 4: 0.1}),
                  lambda k: 1.0 * (0.5 if k >= 2 else 1) * (0.1 if k >= 4 else 1)),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_on_array_counts(name):
    sched, formula = SCHEDULES[name]
    if not callable(sched):
        return
    for k in range(13):
        want = formula(k)
        assert sched(k) == pytest.approx(want, rel=1e-12, abs=1e-15)
        got = sched(nx.asarray(k))
        assert isinstance(got, nx.Tensor) and got.shape == ()
        assert float(got) == pytest.approx(want, rel=2e-6, abs=1e-7)
        assert float(jit(sched)(k)) == pytest.approx(want, rel=2e-6, abs=1e-7)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
@pytest.mark.parametrize("make", [O.sgd, O.adam, O.adamw, O.rmsprop])
def test_jit_update_with_every_schedule(name, make):
    lr = SCHEDULES[name][0]
    opt = make(lr)
    params = {"w": nx.asarray([1.0, -2.0, 0.5])}
    grads = {"w": nx.asarray([0.5, 0.25, -1.0])}
    st_j = st_e = opt.init(params)
    update = jit(opt.update)
    for k in range(10):
        u_j, st_j = update(grads, st_j, params)
        u_e, st_e = opt.update(grads, st_e, params)
        np.testing.assert_allclose(u_j["w"], u_e["w"], rtol=2e-6, atol=1e-7,
                                   err_msg=f"step {k}")
    assert int(st_j.count) == 10
    assert update.cache_info().misses == 2      # a Python int count, then the array one


def test_adam_bias_correction_under_jit_is_accurate():
    # 1 - 0.999 ** 2 in float32 loses ~5 digits; the jitted update matches the float64 value
    opt = O.adam(1.0)
    params = {"w": nx.asarray([1.0])}
    g = {"w": nx.asarray([0.5])}
    st = opt.init(params)
    update = jit(opt.update)
    for _ in range(2):
        u, st = update(g, st, params)
    # closed form: constant gradient g: mu_hat = g, nu_hat = g^2, update = -g / (|g| + eps)
    assert float(u["w"][0]) == pytest.approx(-0.5 / (0.5 + 1e-8), rel=1e-6)


def test_schedule_bad_count():
    sched = O.cosine_decay_schedule(1.0, 5)
    with pytest.raises(ValueError, match="count"):
        sched(nx.ones(2))


def test_make_jaxpr_return_shape_and_placeholders():
    prog, shapes = nx.make_jaxpr(lambda x: (x.sum(), x * 2), return_shape=True)(nx.ones(3))
    # jax 0.10.2: (ShapeDtypeStruct(shape=(), dtype=float32),
    #              ShapeDtypeStruct(shape=(3,), dtype=float32))
    assert shapes == (nx.ShapeDtypeStruct((), nx.float32), nx.ShapeDtypeStruct((3,), nx.float32))
    assert "reduce_sum" in str(prog)
    text = str(nx.make_jaxpr(lambda x: x + 1)(nx.ShapeDtypeStruct((2,), nx.float32)))
    assert text.startswith("{ lambda ; a:f32[2]. let")
    with pytest.raises(ValueError, match="axis_env"):
        nx.make_jaxpr(lambda x: x, axis_env=[("i", 2)])


def test_jacrev_allow_int():
    jx, jn = nx.jacrev(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(nx.ones(2),
                                                                           nx.arange(2))
    # jax 0.10.2: [[0, 0], [0, 1]] and int32 zeros of shape (2, 2)
    np.testing.assert_array_equal(jx, [[0.0, 0.0], [0.0, 1.0]])
    assert jn.dtype == np.int32 and jn.shape == (2, 2) and not np.asarray(jn).any()
    j = nx.jacobian(lambda d: d["x"] * d["n"], allow_int=True)({"x": nx.ones(2),
                                                               "n": nx.arange(2)})
    np.testing.assert_array_equal(j["x"], [[0.0, 0.0], [0.0, 1.0]])
    assert j["n"].dtype == np.int32 and j["n"].shape == (2, 2)
    with pytest.raises(TypeError, match="allow_int"):
        nx.jacrev(lambda n: n * 2.0)(nx.arange(3))


def test_debug_print_in_scan_and_cond_prints_once_under_jit_of_grad(capsys):
    # the backward pass of a scan or cond under jit recomputes the body from its program: its
    # effects ran in the forward pass (jax 0.10.2 prints each line once, as here)
    def body(c, x):
        nx.debug.print("x={x}", x=x)
        return c + x * x, None

    def f(x):
        return nx.lax.scan(body, 0.0, x)[0]

    def g(x):
        return nx.lax.cond(x > 0, lambda x: (nx.debug.print("pos {}", x), x * x)[1],
                           lambda x: -x, x)

    nx.jit(nx.grad(f))(nx.arange(3.0))
    assert capsys.readouterr().out == "x=0.0\nx=1.0\nx=2.0\n"
    nx.jit(nx.grad(g))(nx.asarray(2.0))
    assert capsys.readouterr().out == "pos 2.0\n"
