"""vmap(axis_name=...) and pmap with the collectives of nx.lax (psum, pmean, pmax, pmin,
all_gather, psum_scatter, ppermute, pshuffle, axis_index, axis_size): values against NumPy,
derivatives against JAX 0.10.2's numbers (pinned below: JAX's transposes, psum's is psum) and
float64 finite differences, every composition with jit / grad / jvp / nested vmaps / lax loops,
and the errors (JAX's NameError for an unbound axis name)."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import lax

X = np.array([[0.5, -1.0], [2.0, 0.25], [1.5, 3.0]])

# -- golden values: jax 0.10.2, jax_enable_x64, X above (tools: the expressions in each test
# with nx -> jax) ----------------------------------------------------------------------------------
GRAD_INSIDE = [[8.090504604321362, 6.342685987785169], [6.839917370579331, 9.523207734716609],
               [7.618445666941886, -12.679481602003019]]
GRAD_OUTSIDE = [[8.090504604321362, 6.342685987785169], [6.839917370579331, 9.523207734716609],
                [7.618445666941886, -12.679481602003019]]
JVP_PRIMAL = [[4.506488813322947, 7.245813927015617], [4.506488813322947, 7.245813927015617],
              [4.506488813322947, 7.245813927015617]]
JVP_TANGENT = [[-0.43700704682491537, -6.147218852593212],
               [-0.43700704682491537, -6.147218852593212],
               [-0.43700704682491537, -6.147218852593212]]
HESS_INSIDE = [[[216.0, 0.0], [0.0, 121.5]], [[216.0, 0.0], [0.0, 121.5]],
               [[216.0, 0.0], [0.0, 121.5]]]
GATHER_GRAD = [[3.0, -6.0], [24.0, 3.0], [27.0, 54.0]]
GATHER_TILED_GRAD = [[0.0, 1.6209069176044193], [-2.4968810192828546, 8.720211795395803],
                     [0.8488464200124348, -14.84988744900668]]
SCATTER_GRAD = [[38.88000000000001, 52.92, 69.12000000000002, 87.48000000000002, 108.0,
                 130.68000000000004],
                [38.88000000000001, 52.92, 69.12000000000002, 87.48000000000002, 108.0,
                 130.68000000000004],
                [38.88000000000001, 52.92, 69.12000000000002, 87.48000000000002, 108.0,
                 130.68000000000004]]
PPERMUTE_GRAD = [[1.0, -4.0], [4.0, 1.0], [3.0, 12.0]]
NESTED = [[40.5, 24.0], [42.0, 25.5], [43.0, 26.5]]
NESTED_GRAD = [[22.8125, 4.0625], [41.5625, 19.6875], [35.3125, 54.0625]]
JIT_GRAD_INSIDE = [[8.090504604321362, 6.342685987785169], [6.839917370579331, 9.523207734716609],
                   [7.618445666941886, -12.67948160200302]]
CUSTOM_VJP_GRAD = [[12.0, 6.75], [12.0, 6.75], [12.0, 6.75]]
SCAN_GRAD = [[11.25, 13.5], [11.25, 13.5], [11.25, 13.5]]
SCAN_VAL = [17.875, 17.875, 17.875]


@pytest.fixture(autouse=True)
def _x64():
    nx.config.update("jax_enable_x64", True)
    yield
    nx.config.update("jax_enable_x64", False)


def vm(f, name="i", **kw):
    return nx.vmap(f, axis_name=name, **kw)


def close(got, want, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# -- values ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, ref", [("psum", np.sum), ("pmax", np.max), ("pmin", np.min),
                                       ("pmean", np.mean)])
def test_reductions_match_numpy(name, ref):
    out = vm(lambda v: getattr(lax, name)(v, "i"))(X)
    close(out, np.broadcast_to(ref(X, axis=0), X.shape))


def test_psum_keeps_dtype_and_python_numbers_give_python_values():
    ints = np.arange(6, dtype=np.int32).reshape(3, 2)
    out = vm(lambda v: lax.psum(v, "i"))(ints)
    assert out.dtype == np.int32
    close(out, np.broadcast_to(ints.sum(0), (3, 2)))
    seen = []
    vm(lambda v: (seen.append(lax.psum(1, "i")), v)[1])(X)
    assert seen == [3] and type(seen[0]) is int           # JAX: the axis size, a Python int
    close(vm(lambda v: lax.pmean(nx.arange(2), "i"))(X), np.broadcast_to([0.0, 1.0], (3, 2)))


def test_psum_of_a_value_shared_by_the_examples_is_size_times_it():
    c = nx.array([1.0, 2.0])
    close(vm(lambda v: lax.psum(c, "i") + 0 * v)(X), np.broadcast_to([3.0, 6.0], (3, 2)))
    close(vm(lambda v: lax.pmax(c, "i") + 0 * v)(X), np.broadcast_to([1.0, 2.0], (3, 2)))


def test_normalize_by_psum():
    out = vm(lambda v: v / lax.psum(v.sum(), "i"))(X)
    close(out, X / X.sum())


@pytest.mark.parametrize("axis, tiled", [(0, False), (1, False), (-1, False), (0, True),
                                         (1, True)])
def test_all_gather_matches_numpy(axis, tiled):
    x3 = np.arange(24.0).reshape(3, 2, 4)
    out = vm(lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled))(x3)
    if tiled:
        want = np.concatenate(list(x3), axis=axis)
    else:
        want = np.stack(list(x3), axis=axis)
    close(out, np.broadcast_to(want, (3,) + want.shape))


@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter_matches_numpy(tiled):
    x3 = np.arange(3 * 6 * 3.0).reshape(3, 6, 3) if tiled else np.arange(27.0).reshape(3, 3, 3)
    out = vm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=0, tiled=tiled))(x3)
    total = x3.sum(0)
    want = np.stack(np.split(total, 3, axis=0)) if tiled else total
    close(out, want)
    # along another dimension
    out1 = vm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1))(np.arange(27.0)
                                                                        .reshape(3, 3, 3))
    close(out1, np.moveaxis(np.arange(27.0).reshape(3, 3, 3).sum(0), 1, 0))


def test_ppermute_and_pshuffle():
    out = vm(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]))(X)
    close(out, X[[2, 0, 1]])
    # a destination that receives nothing gets zeros (JAX's pmap semantics)
    out = vm(lambda v: lax.ppermute(v, "i", [(0, 2)]))(X)
    close(out, np.stack([np.zeros(2), np.zeros(2), X[0]]))
    out = vm(lambda v: lax.pshuffle(v, "i", [2, 0, 1]))(X)
    close(out, X[[2, 0, 1]])


def test_axis_index_and_axis_size():
    out = vm(lambda v: lax.axis_index("i"))(X)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [0, 1, 2])
    sizes = []
    vm(lambda v: (sizes.append(lax.axis_size("i")), v)[1])(X)
    assert sizes == [3]


def test_pytrees():
    out = vm(lambda v: lax.pmean({"a": v, "b": (v * 2, 3.0)}, "i"))(X)
    close(out["a"], np.broadcast_to(X.mean(0), X.shape))
    close(out["b"][0], np.broadcast_to(2 * X.mean(0), X.shape))
    close(out["b"][1], np.full(3, 3.0))
    g = vm(lambda v: lax.all_gather([v, v[0]], "i"))(X)
    close(g[1], np.broadcast_to(X[:, 0], (3, 3)))


def test_in_axes_and_positional_axis_name():
    close(vm(lambda v: lax.psum(v, "i"), in_axes=1)(X), np.broadcast_to(X.sum(1), (2, 3)))
    # JAX's positional order: vmap(fun, in_axes, out_axes, axis_name)
    close(nx.vmap(lambda v: lax.psum(v, "i"), 0, 0, "i")(X), np.broadcast_to(X.sum(0), X.shape))


def test_nested_vmaps_with_two_names():
    f = vm(vm(lambda v: lax.psum(v, "i") * 10 + lax.pmax(v, "j") + lax.axis_index("j"), "j"),
           "i")
    close(f(X), NESTED)
    both = vm(vm(lambda v: lax.psum(v, ("i", "j")), "j"), "i")(X)
    close(both, np.full(X.shape, X.sum()))
    idx = vm(vm(lambda v: lax.axis_index(("i", "j")), "j"), "i")(X)
    np.testing.assert_array_equal(np.asarray(idx), np.arange(6).reshape(3, 2))
    # an inner vmap without a name, a collective over the outer one
    inner = vm(nx.vmap(lambda s: lax.psum(s, "i")))(X)
    close(inner, np.broadcast_to(X.sum(0), X.shape))
    # the same name twice: the innermost binds it (JAX)
    close(vm(vm(lambda s: lax.psum(s, "i"), "i"), "i")(X),
          np.broadcast_to(X.sum(1, keepdims=True), X.shape))


# -- derivatives (JAX's numbers, and finite differences where the function is plain) -------------

def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_grad_inside_and_outside_the_vmap():
    inside = vm(lambda v: nx.grad(lambda y: (lax.psum(y ** 2, "i") * nx.sin(y)).sum())(v))(X)
    close(inside, GRAD_INSIDE)

    def total(x):
        return vm(lambda v: lax.psum(v ** 2, "i") * nx.sin(v))(x).sum()
    outside = nx.grad(total)(X)
    close(outside, GRAD_OUTSIDE)
    close(outside, fd_grad(lambda a: float(total(nx.asarray(a))), X), rtol=1e-7, atol=1e-7)


def test_jvp_and_hessian_inside():
    pr, tn = vm(lambda v: nx.jvp(lambda y: lax.pmean(nx.exp(y), "i"), (v,), (nx.cos(v),)))(X)
    close(pr, JVP_PRIMAL)
    close(tn, JVP_TANGENT)
    h = vm(lambda v: nx.hessian(lambda y: (lax.psum(y, "i") ** 3).sum())(v))(X)
    close(h, HESS_INSIDE)


def test_transposes_of_gather_scatter_ppermute():
    close(vm(lambda v: nx.grad(lambda y: (lax.all_gather(y, "i") ** 2
                                          * nx.arange(1.0, 4.0)[:, None]).sum())(v))(X),
          GATHER_GRAD)
    close(vm(lambda v: nx.grad(lambda y: (nx.sin(lax.all_gather(y, "i", tiled=True))
                                          * nx.arange(6.0)).sum())(v))(X), GATHER_TILED_GRAD)
    close(vm(lambda v: nx.grad(lambda y: (lax.psum_scatter(y, "i", tiled=True) ** 3).sum())(v))(
        np.arange(18.0).reshape(3, 6) / 5), SCATTER_GRAD)
    close(vm(lambda v: nx.grad(lambda y: (lax.ppermute(y, "i", [(0, 1), (1, 2), (2, 0)]) ** 2
                                          * nx.array([1.0, 2.0])).sum())(v))(X), PPERMUTE_GRAD)


def test_nested_grad_over_two_names():
    def total(x):
        return nx.sum(vm(vm(lambda v: lax.psum(v ** 2, ("i", "j")) * v, "j"), "i")(x))
    close(nx.grad(total)(X), NESTED_GRAD)
    close(nx.grad(total)(X), fd_grad(lambda a: float(total(nx.asarray(a))), X), rtol=1e-7,
          atol=1e-6)


def test_pmax_pmin_are_not_differentiable():
    for f in (lax.pmax, lax.pmin):
        with pytest.raises(NotImplementedError, match="Differentiation rule"):
            vm(lambda v: nx.grad(lambda y: f(y ** 2, "i").sum())(v))(X)


def test_custom_vjp_with_collectives_inside_a_named_vmap():
    @nx.custom_vjp
    def f(y):
        return y * lax.psum(y, "i")

    def fwd(y):
        return f(y), y

    def bwd(y, g):
        return (g * lax.psum(y, "i") * 3.0,)
    f.defvjp(fwd, bwd)
    close(vm(lambda v: nx.grad(lambda y: f(y).sum())(v))(X), CUSTOM_VJP_GRAD)


# -- jit and the lax loops -------------------------------------------------------------------------

def test_jit_around_and_inside():
    want = np.broadcast_to(X.sum(0), X.shape)
    close(nx.jit(vm(lambda v: lax.psum(v, "i")))(X), want)
    close(vm(nx.jit(lambda v: lax.psum(v, "i")))(X), want)
    close(vm(nx.jit(lambda v: nx.grad(lambda y: (lax.psum(y ** 2, "i") * nx.sin(y)).sum())(v)))
          (X), JIT_GRAD_INSIDE)
    close(vm(lambda v: nx.grad(nx.jit(lambda y: (lax.psum(y ** 2, "i") * nx.sin(y)).sum()))(v))
          (X), GRAD_INSIDE)
    text = str(nx.make_jaxpr(vm(lambda v: lax.psum(v, "i")))(X))
    assert "reduce_sum" in text


def test_jit_inside_retraces_per_axis_size():
    g = nx.jit(lambda v: lax.all_gather(v, "i"))
    assert vm(g)(X).shape == (3, 3, 2)
    assert vm(g)(np.ones((5, 2))).shape == (5, 5, 2)
    close(vm(g)(np.arange(8.0).reshape(4, 2))[2], np.arange(8.0).reshape(4, 2))


def test_jit_traced_inside_then_called_outside_raises():
    g = nx.jit(lambda v: lax.psum(v, "i"))
    vm(g)(X)
    with pytest.raises(NameError, match="'i'"):
        g(X[0])


def test_lax_loops_inside_a_named_vmap():
    def loss(v):
        def body(c, xi):
            return c * 0.5 + lax.psum(xi * c, "i"), c
        c, ys = lax.scan(body, 1.0, v)
        return c + ys.sum()
    close(vm(loss)(X), SCAN_VAL)
    close(nx.jit(vm(loss))(X), SCAN_VAL)
    close(vm(nx.grad(loss))(X), SCAN_GRAD)
    # cond with a batched predicate runs both branches: psum sees every example (JAX)
    out = vm(lambda v: lax.cond(v[0] > 1, lambda u: lax.psum(u, "i"), lambda u: u, v))(X)
    close(out, np.where(X[:, :1] > 1, X.sum(0), X))
    out = vm(lambda v: lax.fori_loop(0, 2, lambda k, c: c + lax.pmax(v, "i"), v))(X)
    close(out, X + 2 * X.max(0))
    out = vm(lambda v: lax.while_loop(lambda c: c[1] < 2, lambda c: (c[0] + lax.psum(v, "i"),
                                                                    c[1] + 1), (v, 0))[0])(X)
    close(out, X + 2 * X.sum(0))


# -- pmap ------------------------------------------------------------------------------------------

def test_pmap_is_a_vmap_with_a_name():
    assert nx.device_count() == 1 and nx.local_device_count() == 1
    close(nx.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(X),
          np.broadcast_to(X.sum(0), X.shape))          # any leading size, one device
    close(nx.pmap(lambda v, s: v * s, static_broadcasted_argnums=1)(X, 3), X * 3)
    close(nx.pmap(lambda v, w: v * w, in_axes=(0, None))(X, np.array([1.0, 2.0])),
          X * [1.0, 2.0])
    close(nx.pmap(lambda v: v.sum(), out_axes=0)(X), X.sum(1))
    # grad through a pmap, against finite differences
    def total(x):
        return nx.pmap(lambda v: lax.pmean(v ** 2, "d") * v, axis_name="d")(x).sum()
    close(nx.grad(total)(X), fd_grad(lambda a: float(total(nx.asarray(a))), X), rtol=1e-7,
          atol=1e-7)


# -- errors ----------------------------------------------------------------------------------------

def test_unbound_axis_name_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        vm(lambda v: lax.psum(v, "j"))(X)
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        lax.psum(nx.asarray(X), "i")
    with pytest.raises(NameError, match="unbound axis name"):
        nx.vmap(lambda v: lax.axis_index("i"))(X)        # a vmap without a name
    with pytest.raises(NameError):
        nx.jit(lambda v: lax.pmean(v, "i"))(X)


def test_bad_arguments():
    with pytest.raises(TypeError, match="axis_name must be hashable"):
        nx.vmap(lambda v: v, axis_name=["i"])
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        vm(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2]]))(X)
    with pytest.raises(ValueError, match="unique"):
        vm(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]))(X)
    with pytest.raises(ValueError, match="out of range"):
        vm(lambda v: lax.ppermute(v, "i", [(0, 3)]))(X)
    with pytest.raises(TypeError, match="pairs"):
        vm(lambda v: lax.ppermute(v, "i", [0, 1]))(X)
    with pytest.raises(ValueError, match="must equal the size 3"):
        vm(lambda v: lax.psum_scatter(v, "i"))(X)
    with pytest.raises(ValueError, match="multiple of"):
        vm(lambda v: lax.psum_scatter(v, "i", tiled=True))(X)
    with pytest.raises(ValueError, match="out of range"):
        vm(lambda v: lax.all_gather(v, "i", axis=3))(X)
    with pytest.raises(ValueError, match="permutation"):
        vm(lambda v: lax.pshuffle(v, "i", [0, 0, 1]))(X)
    with pytest.raises(TypeError, match="expected arrays or numbers"):
        vm(lambda v: lax.psum("a", "i"))(X)
    with pytest.raises(ValueError, match="in_axes has 1 entries"):
        nx.pmap(lambda a, b: a, in_axes=(0,))(X, X)


def test_collectives_inside_no_grad_and_stop_gradient():
    def f(v):
        with nx.no_grad():
            s = lax.psum(v, "i")
        return (s * v).sum()
    close(vm(f)(X), (X.sum(0) * X).sum(1))
    want = np.broadcast_to(X.sum(0), X.shape)     # the psum is a constant to grad
    close(vm(nx.grad(f))(X), want)
    close(vm(lambda v: nx.grad(lambda y: (nx.stop_gradient(lax.psum(y, "i")) * y).sum())(v))(X),
          want)


def test_jit_inside_on_values_the_named_vmap_does_not_batch():
    # the jitted program's collectives still see the axis: that vmap level runs it batched
    idx = vm(lambda v: nx.jit(lambda: lax.axis_index("i"))())(X)
    np.testing.assert_array_equal(np.asarray(idx), [0, 1, 2])
    close(vm(lambda v: v + nx.jit(lambda c: lax.axis_index("i") * c)(2.0))(X),
          X + 2.0 * np.arange(3)[:, None])
    close(vm(lambda v: nx.jit(lambda c: lax.psum(c, "i"))(nx.ones(2)))(X), np.full((3, 2), 3.0))
    c = nx.ones(2)
    perm = [(0, 1), (1, 2), (2, 0)]
    got = vm(lambda v: nx.grad(lambda y: (v * nx.jit(
        lambda z: lax.ppermute(z * lax.axis_index("i"), "i", perm))(y)).sum())(c))(X)
    # example j's cotangent comes from example j + 1, which received j's value times j
    close(got, np.stack([X[(j + 1) % 3] * j for j in range(3)]))


def test_all_to_all_and_pbroadcast():
    x3 = np.arange(3 * 3 * 2.0).reshape(3, 3, 2)
    out = vm(lambda v: lax.all_to_all(v, "i", 0, 1))(x3)
    close(out, x3.transpose(1, 2, 0))           # out[i][c, j] = x[j][i, c]
    y = np.arange(3 * 6 * 2.0).reshape(3, 6, 2)
    out = vm(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True))(y)
    close(out, np.stack([np.concatenate([y[j, 2 * i:2 * i + 2] for j in range(3)], axis=1)
                         for i in range(3)]))
    w = np.arange(6.0).reshape(2, 3)

    def total(x):
        return nx.sum(vm(lambda v: (lax.all_to_all(v, "i", 0, 1) ** 2 * w).sum())(x))
    inside = vm(lambda v: nx.grad(lambda u: (lax.all_to_all(u, "i", 0, 1) ** 2 * w).sum())(v))(
        x3)
    close(inside, fd_grad(lambda a: float(total(nx.asarray(a))), x3), rtol=1e-7, atol=1e-6)
    close(vm(lambda v: lax.pbroadcast(v, "i", 1))(X), np.broadcast_to(X[1], X.shape))
    g = vm(lambda v: nx.grad(lambda u: (lax.pbroadcast(u, "i", 1) ** 2).sum())(v))(X)
    close(g, np.stack([np.zeros(2), 6 * X[1], np.zeros(2)]))
    with pytest.raises(ValueError, match="split_axis 0 has size 2"):
        vm(lambda v: lax.all_to_all(v, "i", 0, 0))(np.ones((3, 2)))
    with pytest.raises(ValueError, match="source 3 is out of range"):
        vm(lambda v: lax.pbroadcast(v, "i", 3))(X)
