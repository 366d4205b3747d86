"""jit keeps eager semantics at its API: wrappers of jitted functions, cache keys and weak types,
captured arrays, donation, weakly typed loop carries (issue 26, "The compiler and its optimizing
passes").  Expected values come from NumPy or from jax 0.10.2 (pinned as literals)."""
import functools

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import optimizers as optim
from nx_rune.errors import DonatedArrayError


def t(a):
    return nx.asarray(np.asarray(a))


# -- 1. jit of a wrapper of a jitted function runs the wrapper ------------------------------------

def _loss(w):
    return nx.sum(w ** 2)


def _deco(g):
    @functools.wraps(g)
    def h(*a):
        return g(*a) + 1.0
    return h


def _custom_of(g):
    cf = nx.custom_vjp(g)
    cf.defvjp(lambda w: (g(w), w), lambda w, ct: (ct * 2 * w,))
    return cf


W = np.array([1.0, 2.0, 3.0], np.float32)
X = np.arange(6.0, dtype=np.float32).reshape(2, 3)

WRAPPERS = {
    "grad": (lambda jl: nx.grad(jl), W, 2 * W),
    "value_and_grad": (lambda jl: nx.value_and_grad(jl), W, (np.sum(W ** 2), 2 * W)),
    "functools.wraps": (lambda jl: _deco(jl), W, np.sum(W ** 2) + 1),
    "grad of functools.wraps": (lambda jl: nx.grad(_deco(jl)), W, 2 * W),
    "vmap": (lambda jl: nx.vmap(jl), X, np.sum(X ** 2, axis=1)),
    "custom_vjp": (lambda jl: _custom_of(jl), W, np.sum(W ** 2)),
    "grad of custom_vjp": (lambda jl: nx.grad(_custom_of(jl)), W, 2 * W),
    "wraps of custom_vjp": (lambda jl: _deco(_custom_of(jl)), W, np.sum(W ** 2) + 1),
    "checkpoint": (lambda jl: nx.grad(nx.checkpoint(jl)), W, 2 * W),
    "no_grad of functools.wraps": (lambda jl: nx.no_grad(_deco(jl)), W, np.sum(W ** 2) + 1),
}


@pytest.mark.parametrize("name", list(WRAPPERS))
def test_jit_of_a_wrapper_of_a_jitted_function_runs_the_wrapper(name):
    make, arg, want = WRAPPERS[name]
    jl = nx.jit(_loss)
    wrapped = make(jl)
    eager = wrapped(t(arg))
    jitted = nx.jit(wrapped)(t(arg))
    for got in (eager, jitted):
        leaves, wants = nx.tree_util.tree_leaves(got), nx.tree_util.tree_leaves(want)
        assert len(leaves) == len(wants)
        for g, w in zip(leaves, wants):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)


def test_wrapper_objects_carry_no_private_state():
    """functools.wraps copies __dict__: none of a JitFunction's, custom_vjp's or no_grad's own
    state may travel into (or out of) a wrapper."""
    def raw(w):
        return w * 3.0
    jl = nx.jit(raw)
    cv = nx.custom_vjp(raw)
    cv.defvjp(lambda w: (raw(w), None), lambda res, ct: (ct * 3.0,))
    ng = nx.no_grad(raw)
    for obj in (jl, cv, ng):
        h = _deco(obj)
        assert not {"_fun", "_cache", "_name", "fun", "fwd", "bwd", "_func"} & set(h.__dict__)
        assert nx.jit(h)._fun is h
        np.testing.assert_allclose(np.asarray(nx.jit(h)(t(W))), W * 3 + 1)
        # a no_grad / custom_vjp of a wrapper calls the wrapper too
        np.testing.assert_allclose(np.asarray(nx.no_grad(h)(t(W))), W * 3 + 1)
    inner = nx.no_grad(raw)
    outer = nx.no_grad(_deco(inner))
    np.testing.assert_allclose(np.asarray(outer(t(W))), W * 3 + 1)


# -- 2. cache keys: static types, x64 mode, weak Python scalars ------------------------------------

def test_static_arguments_of_equal_value_and_different_type_trace_apart():
    f = nx.jit(lambda s: nx.asarray(s), static_argnums=0)
    # jax 0.10.2: jit(lambda s: jnp.asarray(s), static_argnums=0)(1) / (1.0): int32 / float32
    assert f(1).dtype == np.int32
    assert f(1.0).dtype == np.float32
    assert f(True).dtype == np.bool_
    g = nx.jit(lambda x, s: x * nx.asarray(s[0]), static_argnums=1)
    x = t(np.ones(2, np.int32))
    assert g(x, (2,)).dtype == (x * nx.asarray(2)).dtype
    assert g(x, (2.0,)).dtype == (x * nx.asarray(2.0)).dtype
    assert g(x, (2,)).dtype != g(x, (2.0,)).dtype
    assert f.cache_info().misses == 3


def test_x64_mode_is_part_of_the_signature():
    f = nx.jit(lambda x: x * nx.asarray(0.5))
    x = t(np.ones(3, np.float32))
    assert f(x).dtype == (x * nx.asarray(0.5)).dtype == np.float32
    with nx.enable_x64():
        assert f(x).dtype == (x * nx.asarray(0.5)).dtype == np.float64
        assert nx.jit(lambda s: s * 2)(0.1).dtype == np.float64
    assert f(x).dtype == np.float32
    h = nx.jit(lambda s: s * 2)
    assert h(0.1).dtype == np.float32
    with nx.enable_x64():
        assert h(0.1).dtype == np.float64


def test_python_scalar_arguments_are_weak_and_exact():
    mul = nx.jit(lambda x, s: x * s)
    x64 = np.linspace(0, 1, 5)
    np.testing.assert_array_equal(np.asarray(mul(t(np.ones(3)), 1e300)), np.full(3, 1e300))
    got = mul(t(x64), 0.1)
    assert got.dtype == np.float64
    # jax 0.10.2, x64 mode: jit(lambda x, s: x * s)(linspace(0, 1, 5), 0.1)
    np.testing.assert_array_equal(np.asarray(got), [0.0, 0.025, 0.05, 0.07500000000000001, 0.1])
    np.testing.assert_array_equal(np.asarray(got), x64 * 0.1)
    # float32 arrays keep float32 (jax 0.10.2: float32, these values)
    got32 = mul(t(x64.astype(np.float32)), 0.1)
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got32), [0.0, 0.02500000037252903,
                                                      0.05000000074505806, 0.07500000298023224,
                                                      0.10000000149011612])
    # alone, a Python float is the default float, weakly typed (jax 0.10.2: float32, weak)
    r = nx.jit(lambda s: s * 2)(0.1)
    assert r.dtype == np.float32 and float(r) == np.float32(0.20000000298023224)
    r = nx.jit(lambda s: nx.sin(s))(0.1)
    assert r.dtype == np.float32 and float(r) == np.float32(0.0998334214091301)
    # arithmetic among weak arguments and Python numbers is Python's
    f = nx.jit(lambda x, s, n: x * (s * 3 - 1) / n + s ** 2 - (-s))
    np.testing.assert_array_equal(np.asarray(f(t(x64), 0.1, 7)),
                                  x64 * (0.1 * 3 - 1) / 7 + 0.1 ** 2 - (-0.1))
    np.testing.assert_array_equal(np.asarray(nx.jit(lambda x, n: x / n)(t(x64), 3)), x64 / 3)
    g = nx.jit(lambda x, s: x * abs(s) + x * (s % 0.3) + x * (s // 0.03))
    np.testing.assert_array_equal(np.asarray(g(t(x64), -0.7)),
                                  x64 * 0.7 + x64 * (-0.7 % 0.3) + x64 * (-0.7 // 0.03))
    # comparisons compare the Python numbers (float32 would make these two equal)
    assert bool(nx.jit(lambda s: s > 0.1)(0.1000000001))
    assert not bool(nx.jit(lambda s, r: s <= r)(0.1000000001, 0.1))
    # conversions of a weak argument convert the Python number
    np.testing.assert_array_equal(
        np.asarray(nx.jit(lambda s: nx.asarray(s, dtype=nx.float64))(0.1)), np.float64(0.1))
    # through a jitted function called inside another
    inner = nx.jit(lambda x, s: x * s)
    np.testing.assert_array_equal(np.asarray(nx.jit(lambda x, s: inner(x, s))(t(x64), 0.1)),
                                  x64 * 0.1)
    # read from a loop body or under grad inside the jitted function
    def loop(x, lr):
        return nx.lax.fori_loop(0, 3, lambda i, p: p - lr * p, x)
    np.testing.assert_array_equal(np.asarray(nx.jit(loop)(t(x64), 0.1)),
                                  x64 - 0.1 * x64 - 0.1 * (x64 - 0.1 * x64)
                                  - 0.1 * (x64 - 0.1 * x64 - 0.1 * (x64 - 0.1 * x64)))
    np.testing.assert_array_equal(
        np.asarray(nx.jit(lambda x, lr: nx.grad(lambda p: nx.sum(p * p * lr))(x))(t(x64), 0.1)),
        np.asarray(nx.grad(lambda p: nx.sum(p * p * 0.1))(t(x64))))
    # in-place arithmetic on a weak argument keeps it exact
    def acc(x, s):
        s += 0.2
        return x * s
    np.testing.assert_array_equal(np.asarray(nx.jit(acc)(t(x64), 0.1)), x64 * (0.1 + 0.2))


def test_jitted_adam_update_matches_eager_on_float64_parameters():
    opt = optim.adam(1e-3)
    rng = np.random.default_rng(0)
    params = {"w": t(rng.standard_normal(5)), "b": t(rng.standard_normal(2))}
    state = opt.init(params)
    update = nx.jit(opt.update)
    for _ in range(3):
        grads = {k: t(rng.standard_normal(v.shape)) for k, v in params.items()}
        uj, sj = update(grads, state)
        ue, state = opt.update(grads, state)
        for k in params:
            np.testing.assert_array_equal(np.asarray(uj[k]), np.asarray(ue[k]))
            np.testing.assert_array_equal(np.asarray(sj.mu[k]), np.asarray(state.mu[k]))
            np.testing.assert_array_equal(np.asarray(sj.nu[k]), np.asarray(state.nu[k]))


# -- 3. captured arrays: values at trace time ------------------------------------------------------

def test_captured_arrays_are_captured_by_value_at_trace_time():
    src = np.ones(3)
    c = nx.asarray(src)                    # zero-copy: src is its memory
    f = nx.jit(lambda x: (x * c + nx.sum(c), c * 2, c))
    x = t(np.ones(3))
    want = [np.full(3, 4.0), np.full(3, 2.0), np.ones(3)]

    def check():
        for g, w in zip(f(x), want):
            np.testing.assert_array_equal(np.asarray(g), w)
    check()
    c[:] = 5.0
    check()
    src[:] = 7.0
    check()
    out = f(x)[2]
    out += 1.0                             # a result is the caller's, not the constant
    check()
    # nothing folded or read live: a fresh jit sees the new value everywhere
    g = nx.jit(lambda x: (x * c + nx.sum(c), c * 2, c))
    for got, w in zip(g(x), [np.full(3, 28.0), np.full(3, 14.0), np.full(3, 7.0)]):
        np.testing.assert_array_equal(np.asarray(got), w)


def test_a_write_during_the_trace_reaches_later_uses_as_eagerly():
    def make():
        d = nx.asarray(np.ones(3))

        def f(x):
            y = x * d
            d[0] = 10.0
            return y + d
        return f
    x = t(np.ones(3))
    want = np.array([11.0, 2.0, 2.0])      # NumPy: y = x * d, then d[0] = 10; y + d
    np.testing.assert_array_equal(np.asarray(make()(x)), want)
    np.testing.assert_array_equal(np.asarray(nx.jit(make())(x)), want)


def test_jit_docstring_states_the_capture_semantics():
    doc = nx.jit.__doc__
    assert "captured by value" in doc and "donate" in doc


# -- 4. donation -----------------------------------------------------------------------------------

def _uses(x):
    return [lambda: x.numpy(), lambda: np.asarray(x), lambda: repr(x), lambda: x + 1,
            lambda: nx.sin(x), lambda: x.sum(), lambda: x[0], lambda: x.__setitem__(0, 3.0),
            lambda: x.__iadd__(1.0), lambda: x.tolist()]


def test_donated_arrays_are_deleted_and_raise_on_use():
    f = nx.jit(lambda x, y: nx.sin(x) * 2 + y, donate_argnums=0)
    xs = np.linspace(0, 1, 50)
    y = t(np.ones(50))
    x = nx.asarray(xs * 1.0) * 1.0         # memory of its own
    out = f(x, y)
    np.testing.assert_allclose(np.asarray(out), np.sin(xs) * 2 + 1, rtol=1e-15)
    assert x.shape == (50,) and x.dtype == np.float64
    assert issubclass(DonatedArrayError, RuntimeError)
    for use in _uses(x):
        with pytest.raises(DonatedArrayError, match=r"donated to jit\(<lambda>\)"):
            use()
    with pytest.raises(DonatedArrayError):
        f(x, y)
    np.testing.assert_allclose(np.asarray(out), np.sin(xs) * 2 + 1, rtol=1e-15)


@pytest.mark.parametrize("how", ["numpy source", "view of it", "numpy() given out",
                                 "slice of a tensor"])
def test_donation_never_writes_memory_others_can_read(how):
    f = nx.jit(lambda x: nx.exp(x) * 3 - 1, donate_argnums=0)
    base = np.linspace(0, 1, 64)
    want = np.exp(base) * 3 - 1
    src = base.copy()
    if how == "numpy source":
        x = nx.asarray(src)
        keep, keep_want = src, base
    elif how == "view of it":
        x = nx.asarray(src) * 1.0
        keep, keep_want = x[:10], base[:10]
    elif how == "numpy() given out":
        x = nx.asarray(src) * 1.0
        keep, keep_want = x.numpy(), base
    else:
        whole = nx.asarray(src) * 1.0
        x = whole[4:]
        keep, keep_want = whole, base
        want = want[4:]
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(keep), keep_want)
    with pytest.raises(DonatedArrayError):
        x.numpy()


def test_donated_memory_of_its_own_is_reused():
    f = nx.jit(lambda x: nx.exp(nx.sin(x)) * 3 - 1, donate_argnums=0)
    base = np.linspace(0, 1, 4096)
    x = nx.asarray(base) * 1.0
    address = x.numpy().__array_interface__["data"][0]
    # (x.numpy()'s ndarray is gone again: x owns its memory alone)
    out = f(x)
    np.testing.assert_allclose(np.asarray(out), np.exp(np.sin(base)) * 3 - 1, rtol=1e-15)
    assert out.numpy().__array_interface__["data"][0] == address


# -- 5. weakly typed loop carries promote as in JAX ------------------------------------------------

_F64_ONE = np.float64(1.0)

LOOPS = {
    # jax 0.10.2 (x64 mode): lax.fori_loop(0, 3, lambda i, c: c + float64(1), 0.0) -> 3.0 f64
    "fori_loop": (lambda: nx.lax.fori_loop(0, 3, lambda i, c: c + nx.asarray(_F64_ONE), 0.0),
                  3.0),
    # jax 0.10.2: lax.fori_loop(0, 3, lambda i, c: c + float64(0.1), 0) -> 0.30000000000000004
    "fori_loop int": (lambda: nx.lax.fori_loop(
        0, 3, lambda i, c: c + nx.asarray(np.float64(0.1)), 0), 0.30000000000000004),
    # jax 0.10.2: lax.scan(lambda c, x: (c + x, c), 0.0, arange(3.0)) -> 3.0, [0, 0, 1]
    "scan": (lambda: nx.lax.scan(lambda c, x: (c + x, c), 0.0, nx.asarray(np.arange(3.0))),
             (3.0, np.array([0.0, 0.0, 1.0]))),
    # jax 0.10.2: lax.while_loop(lambda c: c < 3, lambda c: c + float64(1), 0) -> 3.0 f64
    "while_loop": (lambda: nx.lax.while_loop(lambda c: c < 3,
                                             lambda c: c + nx.asarray(_F64_ONE), 0), 3.0),
}


# fori_loop with bounds traced by jit runs as a while loop
LOOPS["fori_loop, traced bounds"] = (
    lambda n: nx.lax.fori_loop(0, n, lambda i, c: c + nx.asarray(_F64_ONE), 0.0), 3.0)
LOOPS["fori_loop int, traced bounds"] = (
    lambda n: nx.lax.fori_loop(0, n, lambda i, c: c + nx.asarray(np.float64(0.1)), 0),
    0.30000000000000004)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", list(LOOPS))
def test_weak_initial_carries_take_the_body_dtype(name, mode):
    run, want = LOOPS[name]
    args = (3,) if "traced bounds" in name else ()
    got = run(*args) if mode == "eager" else nx.jit(run)(*args)
    leaves, wants = nx.tree_util.tree_leaves(got), nx.tree_util.tree_leaves(want)
    assert len(leaves) == len(wants)
    for g, w in zip(leaves, wants):
        assert g.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(g), w)


def test_weak_carry_of_a_weak_jit_argument_keeps_its_full_value():
    f = nx.jit(lambda s: nx.lax.fori_loop(0, 3, lambda i, c: c + nx.asarray(_F64_ONE), s))
    np.testing.assert_array_equal(np.asarray(f(0.1)), 0.1 + 1.0 + 1.0 + 1.0)


def test_a_weak_carry_whose_body_keeps_its_kind_stays_put():
    # jax 0.10.2: lax.fori_loop(0, 3, lambda i, c: c + float32(1), 0.5) -> 3.5 float32
    for run in (lambda: nx.lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.5),
                nx.jit(lambda: nx.lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.5))):
        got = run()
        assert got.dtype == np.float32 and float(got) == 3.5


@pytest.mark.parametrize("mode", ["eager", "jit", "jit, traced bounds"])
def test_loop_errors_name_the_function_called(mode):
    init = nx.asarray(np.float32(0.0))     # strongly typed: no promotion, as in JAX
    body = lambda i, c: c + nx.asarray(_F64_ONE)  # noqa: E731
    if mode == "eager":
        run = lambda: nx.lax.fori_loop(0, 3, body, init)  # noqa: E731
    elif mode == "jit":
        run = nx.jit(lambda: nx.lax.fori_loop(0, 3, body, init))
    else:
        run = lambda: nx.jit(lambda n: nx.lax.fori_loop(0, n, body, init))(3)  # noqa: E731
    with pytest.raises(TypeError, match=r"lax\.fori_loop: .*init_val") as info:
        run()
    assert "lax.scan" not in str(info.value) and "while_loop" not in str(info.value)
    with pytest.raises(TypeError, match=r"lax\.while_loop: .*init_val"):
        nx.jit(lambda: nx.lax.while_loop(lambda c: c < 3, lambda c: c + nx.asarray(_F64_ONE),
                                         init))()
