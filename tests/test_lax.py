"""nx.lax.cond / scan / fori_loop / while_loop: values against NumPy loops, one equation each
under jit, derivatives against finite differences in both modes, and bad input."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import lax
from nx_rune.errors import ConcretizationTypeError


def t(a, dtype=np.float64):
    return nx.asarray(np.asarray(a, dtype=dtype))


def close(a, b, rtol=1e-12, atol=1e-14):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(t(x + d))) - float(f(t(x - d)))) / (2 * eps)
    return g


def eqn_names(f, *args):
    return [e.prim.name for e in nx.make_jaxpr(f)(*args).program.eqns]


XS = np.linspace(-1.0, 1.0, 7)


# -- scan ----------------------------------------------------------------------------------------

def ema(c, x):
    c = 0.7 * c + nx.sin(x)
    return c, c * x


def np_ema(c, xs, reverse=False):
    ys = []
    for x in (xs[::-1] if reverse else xs):
        c = 0.7 * c + np.sin(x)
        ys.append(c * x)
    return c, np.array(ys[::-1] if reverse else ys)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_scan_values(mode, reverse):
    def f(xs):
        return lax.scan(ema, t(0.5), xs, reverse=reverse)
    g = nx.jit(f) if mode == "jit" else f
    c, ys = g(t(XS))
    wc, wys = np_ema(0.5, XS, reverse)
    close(c, wc)
    close(ys, wys)


def test_scan_is_one_equation_under_jit_with_the_body_traced_once():
    calls = []

    def body(c, x):
        calls.append(1)
        return ema(c, x)
    names = eqn_names(lambda xs: lax.scan(body, t(0.5), xs), t(XS))
    assert names == ["scan"] and len(calls) == 1
    text = str(nx.make_jaxpr(lambda xs: lax.scan(body, t(0.5), xs))(t(XS)))
    assert "length=7" in text and text.count(" sin ") == 1


def test_scan_pytree_carry_xs_none_and_length():
    def body(carry, _):
        a, (b, n) = carry
        return (a + b, (b * 2, n + 1)), a

    init = (t(1.0), (t(0.5), nx.asarray(np.int32(0))))
    for g in (lambda: lax.scan(body, init, None, length=4),
              nx.jit(lambda: lax.scan(body, init, None, length=4))):
        (a, (b, n)), ys = g()
        close(a, 8.5)
        close(b, 8.0)
        assert int(n) == 4
        close(ys, [1.0, 1.5, 2.5, 4.5])


def test_scan_closes_over_values_and_differentiates_them():
    w = t([0.5, -1.0, 2.0])

    def loss(w, xs):
        def body(c, x):
            return nx.tanh(c * w + x), nx.sum(c * c)
        c, ys = lax.scan(body, nx.zeros(3, nx.float64), xs)
        return nx.sum(c) + nx.sum(ys)

    xs = t(np.random.default_rng(0).normal(size=(5, 3)))
    want = fd_grad(lambda a: loss(a, xs), w)
    close(nx.grad(loss)(w, xs), want, rtol=1e-6, atol=1e-8)
    close(nx.jit(nx.grad(loss))(w, xs), want, rtol=1e-6, atol=1e-8)
    close(nx.grad(nx.jit(loss))(w, xs), want, rtol=1e-6, atol=1e-8)
    # the gradient program under jit is a forward scan and a reverse scan, not unrolled
    names = eqn_names(nx.grad(loss), w, xs)
    assert names.count("scan") == 2 and "tanh" not in names
    gx = fd_grad(lambda a: loss(w, a), xs)
    close(nx.jit(nx.grad(loss, argnums=1))(w, xs), gx, rtol=1e-6, atol=1e-8)


def test_scan_forward_mode_and_hessian():
    def f(x):
        c, ys = lax.scan(lambda c, xi: (c * xi + nx.sin(c), c * c), x[0], x)
        return c + nx.sum(ys)
    x = t([0.3, 0.9, -0.4, 0.2])
    v = t([1.0, -0.5, 0.25, 2.0])
    want = float(np.dot(fd_grad(f, x), np.asarray(v)))
    for jv in (nx.jvp(f, (x,), (v,))[1], nx.jit(lambda a: nx.jvp(f, (a,), (v,))[1])(x),
               nx.jvp(nx.jit(f), (x,), (v,))[1]):
        close(jv, want, rtol=1e-6)
    h = nx.hessian(f)(x)
    close(nx.jit(nx.hessian(f))(x), h, rtol=1e-9, atol=1e-12)
    fdh = np.stack([fd_grad(lambda a: nx.grad(f)(a)[i], x) for i in range(4)])
    close(h, fdh, rtol=1e-5, atol=1e-7)


def test_scan_errors():
    with pytest.raises(TypeError, match="callable"):
        lax.scan(3, t(0.0), t(XS))
    with pytest.raises(ValueError, match="share their leading axis"):
        lax.scan(lambda c, x: (c, x), t(0.0), (t(XS), t(XS[:3])))
    with pytest.raises(ValueError, match="length must be given"):
        lax.scan(lambda c, x: (c, x), t(0.0), None)
    with pytest.raises(ValueError, match="differs from the leading axis"):
        lax.scan(lambda c, x: (c, x), t(0.0), t(XS), length=3)
    with pytest.raises(ValueError, match="leading axis"):
        lax.scan(lambda c, x: (c, x), t(0.0), t(1.0))
    for mode in (lambda f: f, nx.jit):
        with pytest.raises(TypeError, match="identical shapes and dtypes"):
            mode(lambda xs: lax.scan(lambda c, x: (nx.stack([c, c]), x), t(0.0), xs))(t(XS))
        with pytest.raises(TypeError, match="same structure"):
            mode(lambda xs: lax.scan(lambda c, x: ((c, c), x), t(0.0), xs))(t(XS))
        with pytest.raises(TypeError, match="pair"):
            mode(lambda xs: lax.scan(lambda c, x: c, t(0.0), xs))(t(XS))


def test_scan_with_zero_length_gives_empty_ys():
    for g in (lambda xs: lax.scan(ema, t(0.5), xs), nx.jit(lambda xs: lax.scan(ema, t(0.5), xs))):
        c, ys = g(t(np.zeros(0)))
        close(c, 0.5)
        assert ys.shape == (0,)


# -- cond ----------------------------------------------------------------------------------------

def branches():
    return (lambda a, b: (a * b, nx.sin(a)), lambda a, b: (a - b, nx.cos(b)))


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("p", [True, False])
def test_cond_values(mode, p):
    tf, ff = branches()

    def f(pred, a, b):
        return lax.cond(pred, tf, ff, a, b)
    g = nx.jit(f) if mode == "jit" else f
    a, b = t([1.0, 2.0]), t([0.5, -1.0])
    got = g(nx.asarray(np.bool_(p)), a, b)
    want = tf(a, b) if p else ff(a, b)
    for x, y in zip(got, want):
        close(x, y)


def test_cond_one_equation_with_both_branches_and_numeric_pred():
    tf, ff = branches()
    names = eqn_names(lambda p, a, b: lax.cond(p, tf, ff, a, b),
                      nx.asarray(np.int32(3)), t([1.0]), t([2.0]))
    assert names.count("cond") == 1
    f = nx.jit(lambda p, a, b: lax.cond(p, tf, ff, a, b))
    close(f(nx.asarray(np.int32(0)), t([1.0]), t([2.0]))[0], [-1.0])
    close(f(nx.asarray(np.int32(5)), t([1.0]), t([2.0]))[0], [2.0])
    # a Python bool picks the branch at once, even under jit
    assert eqn_names(lambda a, b: lax.cond(True, tf, ff, a, b), t([1.0]), t([2.0])) == \
        ["mul", "sin"]


def test_cond_gradients_both_modes_and_closures():
    w = t(1.5)

    def loss(x, flag):
        out = lax.cond(flag, lambda v: nx.sum(nx.sin(v) * w), lambda v: nx.sum(v * v * w), x)
        return out * 2
    x = t([0.2, -0.7, 1.1])
    for flag in (True, False):
        p = nx.asarray(np.bool_(flag))
        want = fd_grad(lambda a: loss(a, p), x)
        close(nx.grad(loss)(x, p), want, rtol=1e-6, atol=1e-8)
        close(nx.jit(nx.grad(loss))(x, p), want, rtol=1e-6, atol=1e-8)
        close(nx.grad(nx.jit(loss))(x, p), want, rtol=1e-6, atol=1e-8)
        v = t([1.0, 0.0, -1.0])
        close(nx.jit(lambda a: nx.jvp(lambda z: loss(z, p), (a,), (v,))[1])(x),
              float(np.dot(want, np.asarray(v))), rtol=1e-6)
    gw = nx.jit(nx.grad(lambda w_: lax.cond(nx.asarray(True), lambda v: nx.sum(v * w_),
                                            lambda v: nx.sum(v), x)))(w)
    close(gw, float(np.sum(np.asarray(x))))


def test_cond_errors():
    tf, ff = branches()
    with pytest.raises(TypeError, match="scalar"):
        nx.jit(lambda p, a: lax.cond(p, lambda v: v, lambda v: v, a))(t([1.0, 0.0]), t(1.0))
    with pytest.raises(TypeError, match="callable"):
        lax.cond(nx.asarray(True), 1, ff, t(1.0))
    with pytest.raises(TypeError, match="identical shapes and dtypes"):
        nx.jit(lambda p, a: lax.cond(p, lambda v: v, lambda v: nx.stack([v, v]), a))(
            nx.asarray(True), t(1.0))
    with pytest.raises(TypeError, match="same structure"):
        nx.jit(lambda p, a: lax.cond(p, lambda v: (v, v), lambda v: v, a))(
            nx.asarray(True), t(1.0))
    with pytest.raises(TypeError, match="boolean or a number"):
        lax.cond(nx.asarray(np.complex64(1)), tf, ff, t(1.0), t(1.0))


# -- fori_loop and while_loop --------------------------------------------------------------------

def test_fori_loop_values_eager_and_jit():
    def f(x):
        return lax.fori_loop(1, 5, lambda i, v: v * 0.5 + i * x, x)
    x = t([1.0, -2.0])
    want = np.asarray(x)
    for i in range(1, 5):
        want = want * 0.5 + i * np.asarray(x)
    close(f(x), want)
    close(nx.jit(f)(x), want)
    assert eqn_names(f, x) == ["scan"]


def test_fori_loop_static_bounds_reverse_differentiable():
    def f(x):
        return nx.sum(lax.fori_loop(0, 4, lambda i, v: nx.sin(v) * x + i, x))
    x = t([0.3, -0.2])
    want = fd_grad(f, x)
    close(nx.grad(f)(x), want, rtol=1e-6, atol=1e-8)
    close(nx.jit(nx.grad(f))(x), want, rtol=1e-6, atol=1e-8)


def test_fori_loop_traced_bounds_is_a_while_loop():
    def f(n, x):
        return lax.fori_loop(0, n, lambda i, v: v + i, x)
    g = nx.jit(f)
    close(g(nx.asarray(np.int32(4)), t(0.0)), 6.0)
    close(g(nx.asarray(np.int32(2)), t(0.0)), 1.0)
    assert g.cache_info().misses == 1
    assert eqn_names(f, nx.asarray(np.int32(4)), t(0.0)).count("while") == 1


# The index of fori_loop is weakly typed (JAX's): it promotes as a Python int, so the carry
# keeps its dtype (NumPy's promotion of an int32 array would make float32 + i float64), and
# arithmetic on it with Python numbers stays weak.  Expected values and dtypes: jax 0.10.2.
WEAK_INDEX_CASES = [
    # (body, init, expected dtype, expected value)
    (lambda i, v: v + i, lambda: 0.0, np.float32, 10.0),
    (lambda i, v: v + i, lambda: nx.zeros(3, nx.float32), np.float32, [10.0] * 3),
    (lambda i, v: v * 0.5 + i * v, lambda: nx.ones(3, nx.float32), np.float32, [29.53125] * 3),
    (lambda i, v: v + i * 0.5 - 1 / (i + 1), lambda: nx.zeros((), nx.float16), np.float16,
     2.71875),
    (lambda i, v: v + i / 3, lambda: nx.zeros((), nx.float16), np.float16, 2.0),
    (lambda i, v: v + i * 2, lambda: nx.zeros((), nx.int8), np.int8, 20),
    (lambda i, v: v + i ** 2, lambda: nx.zeros((), nx.int16), np.int16, 14),
    (lambda i, v: v + abs(-i) + (-i) // 3 + i % 3, lambda: nx.zeros((), nx.int16), np.int16,
     6),
    (lambda i, c: c + i, lambda: nx.zeros((), nx.int32), np.int32, 10),
]


def _weak_index_params():
    for case, (_, init, dtype, _) in enumerate(WEAK_INDEX_CASES):
        modes = ["eager", "jit"]
        if not isinstance(init(), float):     # (a Python number has no axis to map)
            modes += ["vmap", "jit_vmap"]
            if np.dtype(dtype).kind == "f":
                modes += ["grad", "jit_grad"]
        for mode in modes:
            yield case, mode


@pytest.mark.parametrize("case,mode", list(_weak_index_params()))
def test_fori_loop_index_is_weakly_typed(case, mode):
    body, init, dtype, want = WEAK_INDEX_CASES[case]
    n = 4 if case in (4, 6, 7) else 5

    def f(x):
        return lax.fori_loop(0, n, body, x)
    x = init()
    if mode in ("vmap", "jit_vmap"):
        g = nx.vmap(f) if mode == "vmap" else nx.jit(nx.vmap(f))
        out = g(nx.stack([x, x]))
        want = np.stack([np.asarray(want, dtype)] * 2)
    elif mode in ("grad", "jit_grad"):
        # the loop runs with its carry traced by the reverse pass; the gradient keeps the dtype
        def h(x):
            return nx.sum(f(x))
        out = (nx.grad(h) if mode == "grad" else nx.jit(nx.grad(h)))(x)
        want = fd_grad(h, np.asarray(x, np.float64))
        np.testing.assert_allclose(np.asarray(out, np.float64), want,
                                   rtol=1e-3 if dtype == np.float16 else 1e-5)
        assert out.dtype == dtype
        return
    else:
        out = f(x) if mode == "eager" else nx.jit(f)(x)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), np.asarray(want, dtype))


def test_fori_loop_weak_index_values_under_grad_and_in_carries():
    # jax 0.10.2: grad = 1.0625 (float32); the index as a carry: (2 int32, 3.0 float32);
    # fold_in by the index: the key data [276444683, 838309524]
    f = lambda x: lax.fori_loop(0, 3, lambda i, v: v * v + i, x)
    for g in (nx.grad(f), nx.jit(nx.grad(f))):
        r = g(nx.float32(0.5))
        assert r.dtype == np.float32 and float(r) == 1.0625
    for run in (lambda h: h(), lambda h: nx.jit(h)()):
        i, c = run(lambda: lax.fori_loop(0, 3, lambda i, c: (i, c[1] + i), (0, 0.0)))
        assert (i.dtype, int(i), c.dtype, float(c)) == (np.int32, 2, np.float32, 3.0)
    k = lax.fori_loop(0, 3, lambda i, k: nx.random.fold_in(k, i), nx.random.PRNGKey(0))
    assert np.asarray(k).tolist() == [276444683, 838309524]
    # the index is an int32 array: dtype, indexing, a jitted function called on it
    seen = []
    lax.fori_loop(0, 2, lambda i, v: seen.append((i.dtype, i.shape, int(i))) or v, 0.0)
    assert seen == [(np.int32, (), 0), (np.int32, (), 1)]
    table = nx.arange(5.0, dtype=nx.float32)
    r = lax.fori_loop(0, 3, lambda i, v: nx.jit(lambda a, b: a + b)(v, table[i] + i), 0.0)
    assert r.dtype == np.float32 and float(r) == 6.0
    # traced bounds (a while loop): the index is weak there too
    r = nx.jit(lambda n, x: lax.fori_loop(0, n, lambda i, v: v + i * 2, x))(
        3, nx.zeros(3, nx.float16))
    assert r.dtype == np.float16 and np.asarray(r).tolist() == [6.0] * 3


def newton_sqrt(a):
    def body(s):
        x, k = s
        return (0.5 * (x + a / x), k + 1)
    x, k = lax.while_loop(lambda s: (s[1] < 30) & (nx.abs(s[0] * s[0] - a) > 1e-12), body,
                          (a, nx.asarray(np.int32(0))))
    return x, k


def test_while_loop_values_eager_and_jit():
    for g in (newton_sqrt, nx.jit(newton_sqrt)):
        x, k = g(t(2.0))
        close(x, np.sqrt(2.0))
        assert 0 < int(k) < 30
    assert eqn_names(newton_sqrt, t(2.0)) == ["while"]


def test_while_loop_forward_mode_and_reverse_error():
    v = t(1.0)
    for g in (lambda a: nx.jvp(lambda z: newton_sqrt(z)[0], (a,), (v,))[1],
              nx.jit(lambda a: nx.jvp(lambda z: newton_sqrt(z)[0], (a,), (v,))[1])):
        close(g(t(2.0)), 0.5 / np.sqrt(2.0), rtol=1e-9)
    close(nx.jacfwd(lambda z: newton_sqrt(z)[0])(t(4.0)), 0.25, rtol=1e-9)
    # eager while loops are Python loops: reverse mode works there
    close(nx.grad(lambda z: newton_sqrt(z)[0])(t(2.0)), 0.5 / np.sqrt(2.0), rtol=1e-9)
    with pytest.raises(TypeError, match="not reverse-mode differentiable"):
        nx.jit(nx.grad(lambda z: newton_sqrt(z)[0]))(t(2.0))


def test_while_loop_errors():
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda v: v, lambda v: v - 1, t(3.0))
    with pytest.raises(TypeError, match="boolean scalar"):
        nx.jit(lambda a: lax.while_loop(lambda v: v, lambda v: v - 1, a))(t(3.0))
    with pytest.raises(TypeError, match="identical shapes and dtypes"):
        nx.jit(lambda a: lax.while_loop(lambda v: nx.sum(v) < 3, lambda v: nx.stack([v]),
                                        a))(t(0.0))
    with pytest.raises(TypeError, match="callable"):
        lax.while_loop(None, lambda v: v, t(0.0))


def test_fori_loop_errors_and_python_branches_in_bodies():
    with pytest.raises(TypeError, match="integers"):
        lax.fori_loop(0.5, 3, lambda i, v: v, t(0.0))
    with pytest.raises(TypeError, match="integer scalars"):
        lax.fori_loop(t([0.0]), 3, lambda i, v: v, t(0.0))
    with pytest.raises(ConcretizationTypeError, match="lax"):
        nx.jit(lambda a: lax.fori_loop(0, 3, lambda i, v: v * 2 if v > 0 else v, a))(t(1.0))


def test_nested_loops_under_jit_and_grad():
    def f(x):
        def outer(c, xi):
            inner = lax.fori_loop(0, 3, lambda i, v: v * 0.5 + xi, c)
            return inner, lax.cond(xi > 0, lambda z: z * 2, lambda z: -z, inner)
        c, ys = lax.scan(outer, x[0], x)
        return c + nx.sum(ys)
    x = t([0.4, -0.3, 0.8])
    close(nx.jit(f)(x), f(x))
    want = fd_grad(f, x)
    close(nx.jit(nx.grad(f))(x), want, rtol=1e-6, atol=1e-8)
    close(nx.grad(nx.jit(f))(x), want, rtol=1e-6, atol=1e-8)


def test_lax_public_functions_have_docstrings():
    for name in lax.__all__:
        assert getattr(lax, name).__doc__


def test_eager_fori_loop_runs_the_body_once_a_step_with_a_weak_carry():
    # JAX's gotchas page: a body with a side effect (an iterator).  With a weakly typed carry
    # that keeps its dtype the body runs once a step (it ran once more before, a trace to find
    # the carry's dtype); where the carry must be promoted (0 with a float body) the first step
    # runs again on the promoted carry, as JAX traces twice then.
    calls = []

    def body(i, x):
        calls.append(int(i))
        return x + i

    assert int(lax.fori_loop(0, 4, body, 0)) == 6 and calls == [0, 1, 2, 3]
    calls.clear()

    def half(i, x):
        calls.append(int(i))
        return x + 0.5 * i

    out = lax.fori_loop(0, 4, half, 0)
    assert float(out) == 3.0 and out.dtype == np.float32 and calls == [0, 0, 1, 2, 3]
    # the values and dtypes JAX gives (jax 0.10.2): 3.0 float32; 2.5 float32
    assert float(lax.fori_loop(0, 3, lambda i, x: x + i, 0.0)) == 3.0
    r = lax.fori_loop(0, 3, lambda i, x: x // 2 + 1.5, 7)
    assert float(r) == 2.5 and r.dtype == np.float32
