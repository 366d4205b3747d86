"""In-place writes into a transformed function's arguments reach the caller's arrays.

nx_rune arrays are mutable: eagerly ``f(x)`` with ``x += 1`` (or ``x[i] = v``, ``nx.assign``,
a write through a view of x) leaves x written.  Every transformation keeps that: the final
value is written back into the argument after the call (jit: also on a cache hit; nested
transformations compose).  Expected values come from the eager call on a fresh copy (NumPy
arithmetic on the same values), never from the transformed call.
"""
import numpy as np
import pytest

import nx_rune as nx

F32 = np.float32


# -- write kinds: each f writes its argument and returns a scalar depending on it ---------------

def w_iadd(x):
    x += 1
    return nx.sum(x * x)


def w_setitem(x):
    x[1] = 5.0
    return nx.sum(x * x)


MASK = np.array([False, True, False, True])


def w_mask(x):
    x[MASK] = 0.25
    return nx.sum(x * 3)


def w_assign(x):
    nx.assign(x, x * 2)
    return nx.sum(x)


def w_view(x):
    y = x[1:]
    y += 1
    return nx.sum(x * x)


def w_read_after(x):
    x *= 3
    r = nx.sum(x * x)
    return r


def w_twice(x):
    x += 1
    x[0] = x[1] * 2
    return nx.sum(x)


SCALAR_FNS = [w_iadd, w_setitem, w_mask, w_assign, w_view, w_read_after, w_twice]


def base_values():
    return np.array([0.25, 1.0, 2.0, 3.0], F32)


def layouts():
    """(name, make): make() -> (tensor argument, thing to read back as the caller sees it)."""
    def contiguous():
        t = nx.asarray(base_values().copy())
        return t, lambda: t.numpy().copy()

    def view_of_bigger():
        big = nx.asarray(np.concatenate([[9.0], base_values(), [9.0]]).astype(F32))
        t = big[1:5]
        return t, lambda: big.numpy().copy()      # the write must land in the base

    def from_numpy():
        arr = base_values().copy()
        t = nx.asarray(arr)
        return t, lambda: arr.copy()              # the NumPy array sees the write
    return [("contiguous", contiguous), ("view", view_of_bigger), ("numpy", from_numpy)]


LAYOUTS = layouts()


def eager(f, make):
    t, read = make()
    out = f(t)
    return np.asarray(out.numpy()), read()


@pytest.mark.parametrize("f", SCALAR_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda l: l[0])
def test_jit_writes_back(f, layout):
    want_out, want_arg = eager(f, layout[1])
    jf = nx.jit(f)
    for call in range(2):          # the second call hits the cache: it writes back too
        t, read = layout[1]()
        out = jf(t)
        np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-6)
        np.testing.assert_array_equal(read(), want_arg)
    assert jf.cache_info().hits == 1


@pytest.mark.parametrize("f,T", [(f, T) for f in SCALAR_FNS for T in (
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
    "checkpoint")],
    ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda l: l[0])
def test_autodiff_writes_back(f, layout, T):
    _, want_arg = eager(f, layout[1])
    t, read = layout[1]()
    if T == "grad":
        nx.grad(f)(t)
    elif T == "value_and_grad":
        nx.value_and_grad(f)(t)
    elif T == "vjp":
        out, pull = nx.vjp(f, t)
        pull(nx.asarray(F32(1)))       # the pullback still works after the write-back
    elif T == "jvp":
        nx.jvp(f, (t,), (nx.ones_like(t),))
    elif T == "linearize":
        _, fj = nx.linearize(f, t)
        fj(nx.ones_like(t))
    elif T == "jacrev":
        nx.jacrev(f)(t)
    elif T == "jacfwd":
        nx.jacfwd(f)(t)
    elif T == "hessian":
        nx.hessian(f)(t)
    elif T == "checkpoint":
        nx.grad(nx.checkpoint(f))(t)
    np.testing.assert_array_equal(read(), want_arg)


def test_grad_value_unchanged_by_write_back():
    # d/dx sum((x + 1)^2) = 2 (x + 1), at the argument's value before the call
    x = nx.asarray(base_values())
    g = nx.grad(w_iadd)(x)
    np.testing.assert_allclose(g.numpy(), 2 * (base_values() + 1), rtol=1e-6)
    np.testing.assert_array_equal(x.numpy(), base_values() + 1)


def test_vjp_pullback_uses_values_before_write():
    def f(x):
        y = x * x
        x += 1
        return nx.sum(y * x)
    x = nx.asarray(base_values())
    out, pull = nx.vjp(f, x)
    (g,) = pull(nx.asarray(F32(1)))
    v = base_values().astype(np.float64)
    # d/dx sum(x^2 (x + 1)) = 3 x^2 + 2 x
    np.testing.assert_allclose(g.numpy(), 3 * v * v + 2 * v, rtol=1e-5)
    np.testing.assert_array_equal(x.numpy(), base_values() + 1)


# -- outputs that are the argument itself or a view of it --------------------------------------

def r_self(x):
    x += 1
    return x


def r_view(x):
    x[0] = 7.0
    return x[1:]


def r_view_write(x):
    y = x[1:]
    y += 1
    return x


@pytest.mark.parametrize("f", [r_self, r_view, r_view_write], ids=lambda f: f.__name__)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda l: l[0])
def test_jit_returned_argument_aliases_it(f, layout):
    t0, read0 = layout[1]()
    want_out = f(t0).numpy().copy()
    want_arg = read0()
    jf = nx.jit(f)
    for call in range(2):
        t, read = layout[1]()
        out = jf(t)
        np.testing.assert_array_equal(out.numpy(), want_out)
        np.testing.assert_array_equal(read(), want_arg)
        if f is r_self or f is r_view_write:
            assert out is t
        # as eagerly, a write through the result reaches the argument
        out[...] = 42.0
        assert np.all(np.asarray(t.numpy())[-1] == 42.0)


# -- pytrees, donation, python numbers ---------------------------------------------------------

def test_jit_pytree_arguments():
    def f(d, xs):
        d["a"] += 1
        xs[1][0] = 9.0
        return nx.sum(d["a"]) + nx.sum(xs[0])
    mk = lambda: ({"a": nx.zeros(3), "b": nx.ones(2)}, [nx.ones(2), nx.zeros(2)])
    d0, xs0 = mk()
    want = f(d0, xs0).numpy()
    jf = nx.jit(f)
    for _ in range(2):
        d, xs = mk()
        np.testing.assert_allclose(jf(d, xs).numpy(), want)
        np.testing.assert_array_equal(d["a"].numpy(), [1, 1, 1])
        np.testing.assert_array_equal(d["b"].numpy(), [1, 1])
        np.testing.assert_array_equal(xs[1].numpy(), [9, 0])
        np.testing.assert_array_equal(xs[0].numpy(), [1, 1])


def test_jit_donated_written_argument_is_deleted():
    def f(x):
        x += 1
        return x * 2
    jf = nx.jit(f, donate_argnums=0)
    x = nx.zeros(3)
    out = jf(x)
    np.testing.assert_array_equal(out.numpy(), [2, 2, 2])
    with pytest.raises(nx.errors.DonatedArrayError):
        x.numpy()


def test_jit_python_number_argument():
    def f(x, s):
        s += 1
        x += s
        return x
    x = nx.zeros(2)
    out = nx.jit(f)(x, 1.0)
    np.testing.assert_array_equal(x.numpy(), [2, 2])
    assert out is x


def test_jit_read_only_argument_raises_as_eager():
    arr = np.zeros(3, F32)
    arr.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        w_iadd(nx.asarray(arr))
    with pytest.raises(ValueError, match="jit\\(w_iadd\\).*read-only"):
        nx.jit(w_iadd)(nx.asarray(arr))
    np.testing.assert_array_equal(arr, 0)


# -- vmap ------------------------------------------------------------------------------------------

def test_vmap_writes_back_axis0_and_axis1():
    a = np.arange(6, dtype=F32).reshape(2, 3)
    x = nx.asarray(a.copy())
    nx.vmap(w_setitem)(x)           # row i gets x[i, 1] = 5
    want = a.copy()
    want[:, 1] = 5
    np.testing.assert_array_equal(x.numpy(), want)
    x = nx.asarray(a.copy())
    out = nx.vmap(w_iadd, in_axes=1)(x)
    np.testing.assert_array_equal(x.numpy(), a + 1)
    np.testing.assert_allclose(out.numpy(), ((a + 1) ** 2).sum(0))


def test_vmap_view_argument_writes_into_base():
    big = nx.asarray(np.zeros((3, 4), F32))
    x = big[1:, 1:3]
    nx.vmap(w_view)(x)
    want = np.zeros((3, 4), F32)
    want[1:, 2] = 1
    np.testing.assert_array_equal(big.numpy(), want)


def test_vmap_unbatched_argument_written_with_batched_values_raises():
    def f(x, y):
        x += y
        return x
    x = nx.zeros(3)
    with pytest.raises(TypeError, match="cannot hold a traced value"):
        nx.vmap(f, in_axes=(None, 0))(x, nx.ones((2, 3)))
    np.testing.assert_array_equal(x.numpy(), 0)


# -- nesting ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("nest", ["jit(grad)", "grad(jit)", "vmap(jit)", "jit(vmap)",
                                  "jit(jit)", "vmap(grad(jit))"])
def test_nested_compositions(nest):
    a = np.arange(6, dtype=F32).reshape(2, 3)
    f = w_iadd
    if nest == "jit(grad)":
        T, arg, want = nx.jit(nx.grad(f)), a[0].copy(), a[0] + 1
    elif nest == "grad(jit)":
        T, arg, want = nx.grad(nx.jit(f)), a[0].copy(), a[0] + 1
    elif nest == "vmap(jit)":
        T, arg, want = nx.vmap(nx.jit(f)), a.copy(), a + 1
    elif nest == "jit(vmap)":
        T, arg, want = nx.jit(nx.vmap(f)), a.copy(), a + 1
    elif nest == "jit(jit)":
        T, arg, want = nx.jit(nx.jit(f)), a[0].copy(), a[0] + 1
    else:
        T, arg, want = nx.vmap(nx.grad(nx.jit(f))), a.copy(), a + 1
    for _ in range(2):
        x = nx.asarray(arg.copy())
        T(x)
        np.testing.assert_array_equal(x.numpy(), want)


# -- outputs of vjp / jvp / linearize that are the written argument ----------------------------

@pytest.mark.parametrize("T", ["vjp", "jvp", "linearize"])
def test_autodiff_returned_argument_is_the_argument(T):
    x = nx.asarray(base_values())
    if T == "vjp":
        out, _ = nx.vjp(r_self, x)
    elif T == "jvp":
        out, _ = nx.jvp(r_self, (x,), (nx.ones_like(x),))
    else:
        out, _ = nx.linearize(r_self, x)
    assert out is x
    np.testing.assert_array_equal(x.numpy(), base_values() + 1)


# -- nx.assign on traced values --------------------------------------------------------------------

def test_assign_under_grad_differentiates_the_written_value():
    # f(x) = sum(2 x) after nx.assign(x, 2 x): the gradient is 2 (before the fix, assign wrote
    # the primal's memory and the tape never saw the write: gradient 1)
    x = nx.asarray(base_values())
    g = nx.grad(w_assign)(x)
    np.testing.assert_array_equal(g.numpy(), np.full(4, 2, F32))
    np.testing.assert_array_equal(x.numpy(), base_values() * 2)


def test_assign_under_jit_returns_the_argument():
    def f(x):
        return nx.assign(x, x * 2)
    x = nx.asarray(base_values())
    out = nx.jit(f)(x)
    assert out is x
    np.testing.assert_array_equal(x.numpy(), base_values() * 2)


# -- checkpoint: a written argument read after the checkpointed call -------------------------------

def test_checkpoint_written_argument_used_afterwards():
    def w(x):
        x *= 3
        return nx.sum(x * x)

    def g(x):
        r = nx.checkpoint(w)(x)
        return r + nx.sum(x * x)
    v = base_values().astype(np.float64)
    for T in ("grad", "vjp", "linearize"):
        x = nx.asarray(base_values())
        if T == "grad":
            d = nx.grad(g)(x).numpy()
        elif T == "vjp":
            d = nx.vjp(g, x)[1](nx.asarray(F32(1)))[0].numpy()
        else:
            d = np.stack([nx.linearize(g, nx.asarray(base_values()))[1](
                nx.asarray(np.eye(4, dtype=F32)[k])).numpy() for k in range(4)])
            nx.linearize(g, x)
        # g(x) = 2 sum(9 x^2): dg/dx = 36 x
        np.testing.assert_allclose(d, 36 * v, rtol=1e-6)
        np.testing.assert_array_equal(x.numpy(), base_values() * 3)


# -- custom_vjp / custom_jvp functions that write their argument -----------------------------------

def _custom_writers():
    @nx.custom_vjp
    def cv(x):
        x += 1
        return nx.sum(x * x)

    def fwd(x):
        x += 1
        return nx.sum(x * x), x

    def bwd(r, g):
        return (2 * r * g,)
    cv.defvjp(fwd, bwd)

    @nx.custom_jvp
    def cj(x):
        x *= 2
        return nx.sum(x)
    cj.defjvp(lambda p, t: (nx.sum(p[0]) * 2, nx.sum(t[0]) * 2))
    return {"custom_vjp": (cv, lambda v: v + 1, lambda v: 2 * (v + 1)),
            "custom_jvp": (cj, lambda v: v * 2, lambda v: np.full_like(v, 2))}


CUSTOM = _custom_writers()
NESTS = {"jit": nx.jit, "grad": nx.grad, "jit(grad)": lambda f: nx.jit(nx.grad(f)),
         "grad(jit)": lambda f: nx.grad(nx.jit(f)), "jit(jit)": lambda f: nx.jit(nx.jit(f)),
         "grad(jit(jit))": lambda f: nx.grad(nx.jit(nx.jit(f)))}


@pytest.mark.parametrize("kind", sorted(CUSTOM))
@pytest.mark.parametrize("nest", sorted(NESTS))
def test_custom_functions_write_back(kind, nest):
    f, final, deriv = CUSTOM[kind]
    v = base_values()
    T = NESTS[nest](f)
    for _ in range(2):
        x = nx.asarray(v.copy())
        out = T(x)
        np.testing.assert_array_equal(x.numpy(), final(v))
        if "grad" in nest:
            np.testing.assert_allclose(out.numpy(), deriv(v), rtol=1e-6)


@pytest.mark.parametrize("nest", ["vmap", "vmap(grad)", "jit(vmap)", "vmap(jit)"])
def test_custom_vjp_under_vmap_writes_back(nest):
    f = CUSTOM["custom_vjp"][0]
    T = {"vmap": nx.vmap, "vmap(grad)": lambda f: nx.vmap(nx.grad(f)),
         "jit(vmap)": lambda f: nx.jit(nx.vmap(f)), "vmap(jit)": lambda f: nx.vmap(nx.jit(f))}
    a = np.arange(6, dtype=F32).reshape(2, 3)
    x = nx.asarray(a.copy())
    T[nest](f)(x)
    np.testing.assert_array_equal(x.numpy(), a + 1)


# -- a written argument that shares memory with another argument ---------------------------------

def _write_both(a, b):
    a += 1
    b += 10
    return nx.sum(a * b)


@pytest.mark.parametrize("T", ["jit", "grad", "vjp", "vmap"])
@pytest.mark.parametrize("overlap", ["same", "overlapping views"])
def test_written_argument_aliasing_another_raises(T, overlap):
    # eagerly a's write shows through b: a transformation that gives each argument its own
    # value cannot reproduce that, so it raises, naming both, and writes nothing
    big = nx.zeros((2, 4))
    a, b = (big, big) if overlap == "same" else (big[:, :3], big[:, 1:])
    with pytest.raises(ValueError, match="argument.*shares memory with argument"):
        if T == "jit":
            nx.jit(_write_both)(a, b)
        elif T == "grad":
            nx.grad(_write_both, argnums=(0, 1))(a, b)
        elif T == "vjp":
            nx.vjp(_write_both, a, b)
        else:
            nx.vmap(_write_both)(a, b)
    np.testing.assert_array_equal(big.numpy(), 0)


def test_written_arguments_in_disjoint_parts_of_one_array():
    big = nx.zeros(4)
    eager = nx.zeros(4)
    want = _write_both(eager[:2], eager[2:]).numpy()
    out = nx.jit(_write_both)(big[:2], big[2:])
    np.testing.assert_allclose(out.numpy(), want)
    np.testing.assert_array_equal(big.numpy(), eager.numpy())


def test_jit_keyword_and_static_arguments_and_numpy_arrays():
    def f(x, n, y=None):
        x += n
        y[0] = 7.0
        return x
    jf = nx.jit(f, static_argnums=1)
    x, y = nx.zeros(2), nx.zeros(2)
    for k in (1, 2):
        out = jf(x, 2, y=y)
        assert out is x
        np.testing.assert_array_equal(x.numpy(), [2 * k, 2 * k])
        np.testing.assert_array_equal(y.numpy(), [7, 0])
    assert jf.cache_info().hits == 1
    a = np.zeros(2, F32)             # a NumPy array argument is written as eagerly (a += 1)
    nx.jit(lambda a: a.__iadd__(1))(a)
    np.testing.assert_array_equal(a, [1, 1])


# -- a result that is a view of an argument written through it (or through its base) -------------

def _r_expand(x):
    v = x[None]
    v *= 2
    return v


def _r_reversed_step(x):
    v = x[..., ::-2]
    v += v
    return v


def _r_reversed(x):
    v = x[::-1]
    v *= 2
    return (v,)


def _r_base_written(x):
    v = x[1:]
    x += 1
    return v


def _r_then_reshaped(x):
    v = x.reshape(2, 2)
    v[0, 1] = 7.0
    return v.T


@pytest.mark.parametrize("f", [_r_expand, _r_reversed_step, _r_reversed, _r_base_written,
                               _r_then_reshaped], ids=lambda f: f.__name__)
def test_jit_result_that_is_a_view_of_a_written_argument_stays_a_view(f):
    # eagerly the result is a view of x: a write through it reaches x.  jit made it new memory
    # (the values were right, the aliasing not): found by the program fuzzer
    def run(fn):
        x = nx.asarray(np.arange(1.0, 5.0))
        out = fn(x)
        out = out[0] if isinstance(out, tuple) else out
        return x, out
    for fn in (f, nx.jit(f), nx.jit(f)):   # eager, a trace, a cache hit
        x, out = run(fn)
        xe, oute = run(f)
        np.testing.assert_array_equal(out.numpy(), oute.numpy())
        np.testing.assert_array_equal(x.numpy(), xe.numpy())
        assert nx.shares_memory(out, x)
        out[...] = -1.0
        oute[...] = -1.0
        np.testing.assert_array_equal(x.numpy(), xe.numpy())
