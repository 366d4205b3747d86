"""nx.vmap: the API (in_axes/out_axes pytrees, negative axes, axis_size, keyword arguments),
errors naming the argument and both sizes, and compositions with every other transformation,
each against a Python loop over the examples (NumPy for the forward values)."""
import threading

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune.autodiff import BATCH_RULES
from nx_rune.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    UnexpectedTracerError,
)
from nx_rune.primitives import bind


def t(a):
    return nx.asarray(np.asarray(a, dtype=np.float64))


RNG = np.random.default_rng(0)
XS = RNG.standard_normal((4, 3))
YS = RNG.standard_normal((4, 3))


def stack(xs, axis=0):
    return np.stack([np.asarray(x) for x in xs], axis)


# -- the API -----------------------------------------------------------------------------------

def test_public_names():
    assert nx.vmap is nx.autodiff.vmap
    assert nx.autodiff.BATCH_RULES is BATCH_RULES
    assert "vmap" in nx.autodiff.__all__


def test_in_axes_int_none_and_negative():
    f = lambda x, y: nx.sin(x) * y  # noqa: E731
    np.testing.assert_allclose(np.asarray(nx.vmap(f)(t(XS), t(YS))), np.sin(XS) * YS)
    out = nx.vmap(f, in_axes=(0, None))(t(XS), t(YS[0]))
    np.testing.assert_allclose(np.asarray(out), np.sin(XS) * YS[0])
    out = nx.vmap(f, in_axes=(1, -1))(t(XS.T), t(YS.T))
    np.testing.assert_allclose(np.asarray(out), np.sin(XS) * YS)
    out = nx.vmap(f, in_axes=[-2, 0])(t(XS), t(YS))     # a list is taken as the tuple
    np.testing.assert_allclose(np.asarray(out), np.sin(XS) * YS)
    assert isinstance(out, nx.Tensor)


def test_in_axes_prefix_trees():
    def f(p, x):
        return p["w"] * x + p["b"][0] - p["b"][1]
    p = {"w": t(XS), "b": (t(YS[0]), t(YS))}
    out = nx.vmap(f, in_axes=({"w": 0, "b": (None, 0)}, 0))(p, t(YS))
    np.testing.assert_allclose(np.asarray(out), XS * YS + YS[0] - YS)
    out = nx.vmap(f, in_axes=({"w": 0, "b": None}, 1))(
        {"w": t(XS), "b": (t(YS[0]), t(YS[1]))}, t(YS.T))
    np.testing.assert_allclose(np.asarray(out), XS * YS + YS[0] - YS[1])
    # a non-array leaf that is not mapped passes through untouched
    out = nx.vmap(lambda x, n: x * n, in_axes=(0, None))(t(XS), 3)
    np.testing.assert_allclose(np.asarray(out), XS * 3)


def test_out_axes_and_output_pytrees():
    def f(x):
        return {"a": x * 2.0, "b": (nx.sum(x), x[None, :])}
    out = nx.vmap(f, out_axes={"a": 1, "b": (0, -1)})(t(XS))
    np.testing.assert_allclose(np.asarray(out["a"]), 2 * XS.T)
    np.testing.assert_allclose(np.asarray(out["b"][0]), XS.sum(1))
    assert out["b"][1].shape == (1, 3, 4)
    np.testing.assert_allclose(np.asarray(out["b"][1])[0], XS.T)
    out = nx.vmap(lambda x: x, out_axes=-1)(t(XS))      # negative: counts in the output rank
    np.testing.assert_allclose(np.asarray(out), XS.T)
    out = nx.vmap(lambda x: x, out_axes=-2)(t(XS))
    np.testing.assert_allclose(np.asarray(out), XS)


def test_unbatched_outputs_are_broadcast_or_kept():
    c = t([1.0, 2.0])
    out = nx.vmap(lambda x: (x, c))(t(XS))
    np.testing.assert_allclose(np.asarray(out[1]), np.broadcast_to([1.0, 2.0], (4, 2)))
    out = nx.vmap(lambda x: (x, c), out_axes=(0, None))(t(XS))
    assert out[1] is c
    out = nx.vmap(lambda x: 1.5)(t(XS))                  # a Python number: float32, broadcast
    assert out.shape == (4,) and out.dtype == np.float32


def test_axis_size_and_keyword_arguments():
    out = nx.vmap(lambda: nx.ones(2), axis_size=3)()
    np.testing.assert_array_equal(np.asarray(out), np.ones((3, 2), np.float32))
    out = nx.vmap(lambda x, scale: x * scale)(t(XS), scale=t([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(np.asarray(out), XS * np.array([1, 2, 3, 4.0])[:, None])
    out = nx.vmap(lambda x: x + 1, axis_size=4)(t(XS))
    np.testing.assert_allclose(np.asarray(out), XS + 1)


def test_size_zero_batch():
    out = nx.vmap(lambda x: nx.sum(nx.sin(x) * 2, -1))(t(np.zeros((0, 3))))
    assert out.shape == (0,)


def test_shapes_and_dtypes_inside():
    seen = []

    def f(x, i):
        seen.append((x.shape, x.dtype, i.shape, i.dtype, x.ndim, x.size, len(x)))
        return x[i]
    out = nx.vmap(f)(t(XS), nx.asarray(np.array([0, 2, 1, 2], np.int32)))
    assert seen == [((3,), np.float64, (), np.int32, 1, 3, 3)]
    np.testing.assert_allclose(np.asarray(out), XS[np.arange(4), [0, 2, 1, 2]])


def test_nested_vmaps_match_loops():
    A = RNG.standard_normal((2, 3, 4))
    w = RNG.standard_normal((3, 4))

    def f(v, u):
        return nx.sum(v * u) * v + nx.max(u)
    out = nx.vmap(nx.vmap(f, in_axes=(0, None)), in_axes=(1, 0), out_axes=1)(t(A), t(w))
    want = np.empty((2, 3, 4))
    for j in range(3):
        for i in range(2):
            want[i, j] = np.sum(A[i, j] * w[j]) * A[i, j] + w[j].max()
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-13)
    # three levels, each with its own axis
    B = RNG.standard_normal((2, 3, 5))
    out = nx.vmap(nx.vmap(nx.vmap(lambda s: s * 2 + 1, in_axes=0), in_axes=1), in_axes=2)(t(B))
    np.testing.assert_allclose(np.asarray(out), np.transpose(B, (2, 1, 0)) * 2 + 1)


# -- errors ------------------------------------------------------------------------------------

def test_mismatched_sizes_name_the_arguments_and_both_sizes():
    with pytest.raises(ValueError, match=r"argument 1 has size 5 .* argument 0 has size 4"):
        nx.vmap(lambda x, y: x + y)(t(XS), t(np.zeros((5, 3))))
    with pytest.raises(ValueError, match=r"argument 0 has size 4 .*axis_size is 3"):
        nx.vmap(lambda x: x, axis_size=3)(t(XS))
    with pytest.raises(ValueError, match=r"keyword argument 'k' has size 2"):
        nx.vmap(lambda x, k: x)(t(XS), k=t([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"argument 0 \(leaf 1\) has size 3 .*leaf 0\) has size 4"):
        nx.vmap(lambda p: p)((t(XS), t(XS.T)))


def test_axes_out_of_range():
    with pytest.raises(ValueError,
                       match=r"in_axes 2 is out of range for argument 0 of shape \(4, 3\)"):
        nx.vmap(lambda x: x, in_axes=2)(t(XS))
    with pytest.raises(ValueError, match=r"in_axes -3 is out of range"):
        nx.vmap(lambda x: x, in_axes=-3)(t(XS))
    with pytest.raises(ValueError, match=r"argument 1 of shape \(\)"):
        nx.vmap(lambda x, y: x)(t(XS), t(1.0))
    with pytest.raises(ValueError, match=r"out_axes 2 does not fit the output of shape \(3,\)"):
        nx.vmap(lambda x: x, out_axes=2)(t(XS))
    with pytest.raises(ValueError, match=r"out_axes -3 does not fit"):
        nx.vmap(lambda x: x, out_axes=-3)(t(XS))
    with pytest.raises(ValueError, match="out_axes is None for output leaf 1"):
        nx.vmap(lambda x: (x, x), out_axes=(0, None))(t(XS))


def test_axes_trees_that_do_not_match():
    with pytest.raises(ValueError, match=r"in_axes has 1 entries .* called with 2"):
        nx.vmap(lambda x, y: x, in_axes=(0,))(t(XS), t(XS))
    with pytest.raises(ValueError, match=r"argument 0 does not match its axes spec"):
        nx.vmap(lambda p: p, in_axes=({"a": 0},))([t(XS)])
    with pytest.raises(ValueError, match=r"argument 1 does not match .*length 2, got length 3"):
        nx.vmap(lambda x, p: x, in_axes=(0, (0, None)))(t(XS), (t(XS), t(XS), t(XS)))
    with pytest.raises(ValueError, match="the output does not match its axes spec"):
        nx.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(t(XS))


def test_bad_arguments_raise_type_errors():
    with pytest.raises(TypeError, match="expected a function"):
        nx.vmap(3)
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        nx.vmap(lambda x: x, in_axes=1.5)
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        nx.vmap(lambda x: x, in_axes=(0, "a"))
    with pytest.raises(TypeError, match="out_axes must be an int, None"):
        nx.vmap(lambda x: x, out_axes=True)
    with pytest.raises(TypeError, match="axis_size must be an int"):
        nx.vmap(lambda x: x, axis_size=2.0)
    with pytest.raises(ValueError, match="axis_size must be >= 0"):
        nx.vmap(lambda x: x, axis_size=-1)
    with pytest.raises(ValueError, match="no argument is mapped"):
        nx.vmap(lambda x: x, in_axes=None)(t(XS))
    with pytest.raises(TypeError, match="argument 0 is mapped but is not an array"):
        nx.vmap(lambda s: s)("abc")
    with pytest.raises(TypeError, match="the output is a str"):
        nx.vmap(lambda x: "abc")(t(XS))


def test_python_values_of_batched_tracers_are_refused():
    with pytest.raises(ConcretizationTypeError, match="batched by vmap"):
        nx.vmap(lambda x: x if x[0] > 0 else -x)(t(XS))
    with pytest.raises(TypeError, match="batched by vmap"):
        nx.vmap(lambda x: float(nx.sum(x)))(t(XS))
    with pytest.raises(TracerArrayConversionError, match="batched by vmap"):
        nx.vmap(lambda x: np.asarray(x))(t(XS))
    # inside grad inside vmap too (the tape's tracer holds a batched value)
    with pytest.raises(ConcretizationTypeError):
        nx.vmap(nx.grad(lambda x: nx.sum(x) if float(x[0]) > 0 else 0.0))(t(XS))
    with pytest.raises(TracerArrayConversionError):
        nx.vmap(nx.grad(lambda x: nx.sum(np.sin(x))))(t(XS))


def test_leaked_batch_tracer_raises():
    box = []
    nx.vmap(lambda x: box.append(x) or x)(t(XS))
    with pytest.raises(UnexpectedTracerError, match="finished vmap"):
        box[0] + 1.0
    assert "finished" in repr(box[0]) and "axis_size=4" in repr(box[0])


def test_repr_shows_every_example():
    reprs = []
    nx.vmap(lambda x: reprs.append(repr(x)) or x)(t([[1.0, 2.0], [3.0, 4.0]]))
    assert reprs[0].startswith("BatchTracer(vmap, shape=(2,), dtype=float64, axis_size=2")
    assert "[[1. 2.]\n [3. 4.]]" in reprs[0]


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
        for table in (nx.autodiff.VJP_RULES, nx.autodiff.JVP_RULES, BATCH_RULES):
            table.pop(prim, None)


def test_user_primitive_without_a_rule_is_named(new_primitive):
    from nx_rune.autodiff.batch_rules import defbroadcast, defloop
    cube = new_primitive("test_cube")
    cube.def_impl(lambda x: nx.asarray(np.asarray(x) ** 3))
    with pytest.raises(NotImplementedError, match="no batching rule for primitive test_cube"):
        nx.vmap(lambda x: bind(cube, x))(t(XS))
    defloop(cube)           # opt-in: once per example
    np.testing.assert_allclose(np.asarray(nx.vmap(lambda x: bind(cube, x))(t(XS))), XS ** 3)
    BATCH_RULES.pop(cube)
    defbroadcast(cube)      # elementwise: one call on the batch
    calls = []
    cube.def_impl(lambda x: calls.append(x.shape) or nx.asarray(np.asarray(x) ** 3))
    np.testing.assert_allclose(np.asarray(nx.vmap(lambda x: bind(cube, x))(t(XS))), XS ** 3)
    assert calls == [(4, 3)]
    # with derivative rules too, it composes with grad
    nx.autodiff.defelementwise(cube, lambda v, ans, x: v * 3 * x * x)
    g = nx.vmap(nx.grad(lambda x: nx.sum(bind(cube, x))))(t(XS))
    np.testing.assert_allclose(np.asarray(g), 3 * XS ** 2)


def test_loop_fallback_on_zero_examples(new_primitive):
    from nx_rune.autodiff.batch_rules import defloop
    twice = new_primitive("test_twice")
    twice.def_impl(lambda x: nx.asarray(np.concatenate([np.asarray(x)] * 2)))
    defloop(twice)
    out = nx.vmap(lambda x: bind(twice, x))(t(np.zeros((0, 3))))
    assert out.shape == (0, 6)
    out = nx.vmap(lambda x: bind(twice, x))(t(XS))
    np.testing.assert_allclose(np.asarray(out), np.concatenate([XS, XS], 1))


def test_as_strided_checks_each_example():
    x = t(np.arange(12.0).reshape(3, 4))
    out = nx.vmap(lambda r: nx.as_strided(r, (2, 2), (1, 2)))(x)
    np.testing.assert_allclose(np.asarray(out), [[[0, 2], [1, 3]], [[4, 6], [5, 7]],
                                                 [[8, 10], [9, 11]]])
    # element 4 is in the next example's row: refused as for one row of 4 elements
    with pytest.raises(ValueError, match="outside the buffer of 4 elements"):
        nx.vmap(lambda r: nx.as_strided(r, (2,), (4,)))(x)
    with pytest.raises(ValueError, match="offset: 4 is outside the buffer of 4 elements"):
        nx.vmap(lambda r: nx.as_strided(r, (1,), (1,), 4))(x)


# -- compositions, each against the loop ------------------------------------------------------

def f_scalar(x):
    return nx.sum(nx.sin(x) * x ** 2) + nx.max(x) * nx.prod(x)


PIPELINES = {
    "grad": lambda f: nx.grad(f),
    "grad_grad_sum": lambda f: nx.grad(lambda x: nx.sum(nx.grad(f)(x) ** 2)),
    "jacfwd_grad": lambda f: nx.jacfwd(nx.grad(f)),
    "jacrev_grad": lambda f: nx.jacrev(nx.grad(f)),
    "hessian": lambda f: nx.hessian(f),
    "jvp_grad": lambda f: lambda x: nx.jvp(nx.grad(f), (x,), (nx.ones_like(x),))[1],
    "vjp": lambda f: lambda x: nx.vjp(lambda u: nx.sin(u) * f(u), x)[1](nx.cos(x))[0],
    "linearize": lambda f: lambda x: nx.linearize(f, x)[1](x * 0.5),
    "hvp": lambda f: lambda x: nx.hvp(f, (x,), (x,))[1],
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_vmap_of_transformations(name):
    g = PIPELINES[name](f_scalar)
    got = nx.vmap(g)(t(XS))
    want = stack([g(t(x)) for x in XS])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_transformations_of_vmap(name):
    # F(X) = sum_i f(X[i]) through vmap: its derivatives split by example, so the references
    # are the per-example results of the loop
    F = lambda X: nx.sum(nx.vmap(f_scalar)(X))  # noqa: E731
    got = np.asarray(PIPELINES[name](F)(t(XS)))
    per = PIPELINES[name](f_scalar)
    if name == "vjp":
        # d/dX <C, sin(X) F(X)> = C cos(X) F(X) + <C, sin(X)> grad F(X), with C = cos(X)
        Fx = sum(float(f_scalar(t(x))) for x in XS)
        gF = stack([nx.grad(f_scalar)(t(x)) for x in XS])
        C = np.cos(XS)
        want = C * np.cos(XS) * Fx + np.sum(C * np.sin(XS)) * gF
    elif name == "linearize":
        want = sum(np.asarray(per(t(x))) for x in XS)
    elif name in ("jacfwd_grad", "jacrev_grad", "hessian"):
        want = np.zeros((4, 3, 4, 3))      # block diagonal over the examples
        for i, x in enumerate(XS):
            want[i, :, i, :] = np.asarray(per(t(x)))
    else:
        want = stack([per(t(x)) for x in XS])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_per_example_gradients_of_an_mlp():
    rng = np.random.default_rng(1)
    params = {"W1": t(rng.standard_normal((5, 8)) / 3), "b1": t(np.zeros(8)),
              "W2": t(rng.standard_normal((8, 3)) / 3), "b2": t(np.zeros(3))}
    X, Y = t(rng.standard_normal((16, 5))), t(np.eye(3)[rng.integers(0, 3, 16)])

    def loss(p, x, y):
        h = nx.relu(x @ p["W1"] + p["b1"])
        logits = h @ p["W2"] + p["b2"]
        return -nx.sum(y * (logits - nx.logsumexp(logits)))
    got = nx.vmap(nx.grad(loss), in_axes=(None, 0, 0))(params, X, Y)
    for k in params:
        want = stack([nx.grad(loss)(params, X[i], Y[i])[k] for i in range(16)])
        assert got[k].shape == (16,) + params[k].shape
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-12, atol=1e-14)
    # the mean of the per-example gradients is the gradient of the mean loss
    g = nx.grad(lambda p: nx.mean(nx.vmap(loss, in_axes=(None, 0, 0))(p, X, Y)))(params)
    for k in params:
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(got[k]).mean(0), rtol=1e-12,
                                   atol=1e-14)


def test_vmap_of_grad_with_value_reading_rules():
    # max ties, sort permutations, cumulative max/prod with zeros, scatter: rules that compute
    # NumPy constants from the primal values, here per example
    X = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, -1.0, 2.0, 0.5], [0.0, 0.0, 4.0, 1.0]])

    def f(x):
        return (nx.max(x) + nx.sum(nx.sort(x) * nx.arange(4.0)) + nx.sum(nx.cumprod(x))
                + nx.sum(nx.maximum(x, 1.0)) + nx.sum(x.at[nx.asarray([0, 0, 2])].max(x[1:]))
                + nx.sum(nx.clip(x, 0.5, 2.0)) + nx.sum(nx.cummax(x)) + nx.prod(x))
    got = nx.vmap(nx.grad(f))(t(X))
    want = stack([nx.grad(f)(t(x)) for x in X])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    got = nx.vmap(nx.hessian(f))(t(X))
    want = stack([nx.hessian(f)(t(x)) for x in X])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13)


def test_vmap_of_grad_of_a_shared_argument():
    # d/dw of a per-example loss: not summed over the examples
    w = t([0.5, -1.0, 2.0])
    got = nx.vmap(nx.grad(lambda w, x: nx.sum(nx.tanh(w * x))), in_axes=(None, 0))(w, t(XS))
    want = stack([nx.grad(lambda w, x: nx.sum(nx.tanh(w * x)))(w, t(x)) for x in XS])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)


def test_nested_vmap_of_grad_with_levels_batching_different_values():
    # the max's tie masks combine a value batched by the outer vmap only with one batched by
    # the inner vmap only
    A = RNG.standard_normal((2, 3))
    Bv = RNG.standard_normal((4, 3))

    def f(a, b):
        return nx.sum(nx.maximum(a, b) * a)
    got = nx.vmap(nx.vmap(nx.grad(f, argnums=(0, 1)), in_axes=(None, 0)), in_axes=(0, None))(
        t(A), t(Bv))
    for i in range(2):
        for j in range(4):
            ga, gb = nx.grad(f, argnums=(0, 1))(t(A[i]), t(Bv[j]))
            np.testing.assert_allclose(np.asarray(got[0])[i, j], np.asarray(ga), rtol=1e-14)
            np.testing.assert_allclose(np.asarray(got[1])[i, j], np.asarray(gb), rtol=1e-14)


@nx.custom_vjp
def clip_grad(x, w):
    return nx.sin(x) * w


def _clip_fwd(x, w):
    return nx.sin(x) * w, (nx.cos(x), x, w)


def _clip_bwd(res, g):
    c, x, w = res
    return nx.clip(g * c * w, -0.2, 0.2), g * nx.sin(x)


clip_grad.defvjp(_clip_fwd, _clip_bwd)


@nx.custom_jvp
def soft(x):
    return nx.log1p(nx.exp(x))


@soft.defjvp
def _soft_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    return soft(x), tx * nx.sigmoid(x) * 1.5     # deliberately not the true derivative


def test_custom_vjp_under_vmap():
    x, w = t(XS), t(YS[0])
    np.testing.assert_allclose(np.asarray(nx.vmap(clip_grad, in_axes=(0, None))(x, w)),
                               np.sin(XS) * YS[0])
    f = lambda x, w: nx.sum(clip_grad(x, w) * 3.0)  # noqa: E731
    got = nx.vmap(nx.grad(f, argnums=(0, 1)), in_axes=(0, None))(x, w)
    for i in range(4):
        ga, gw = nx.grad(f, argnums=(0, 1))(t(XS[i]), w)
        np.testing.assert_allclose(np.asarray(got[0])[i], np.asarray(ga), rtol=1e-14)
        np.testing.assert_allclose(np.asarray(got[1])[i], np.asarray(gw), rtol=1e-14)
    # grad of vmap: the shared w gets the sum of the examples' cotangents
    gx, gw = nx.grad(lambda x, w: nx.sum(nx.vmap(clip_grad, in_axes=(0, None))(x, w) * 3.0),
                     argnums=(0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), np.clip(3 * np.cos(XS) * YS[0], -0.2, 0.2))
    np.testing.assert_allclose(np.asarray(gw), (3 * np.sin(XS)).sum(0), rtol=1e-14)
    # forward mode through the custom rule (its transpose)
    tan = nx.jvp(lambda x: nx.vmap(clip_grad, in_axes=(0, None))(x, w), (x,),
                 (nx.ones_like(x) * 0.01,))[1]
    np.testing.assert_allclose(np.asarray(tan), np.clip(0.01 * np.cos(XS) * YS[0], -0.2, 0.2))


def test_custom_jvp_under_vmap():
    x = t(XS)
    np.testing.assert_allclose(np.asarray(nx.vmap(soft)(x)), np.log1p(np.exp(XS)))
    want = 1.5 / (1 + np.exp(-XS))
    np.testing.assert_allclose(np.asarray(nx.vmap(nx.grad(lambda u: nx.sum(soft(u))))(x)), want,
                               rtol=1e-14)
    np.testing.assert_allclose(np.asarray(nx.grad(lambda u: nx.sum(nx.vmap(soft)(u)))(x)), want,
                               rtol=1e-14)
    np.testing.assert_allclose(np.asarray(nx.jvp(nx.vmap(soft), (x,), (nx.ones_like(x),))[1]),
                               want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(nx.vmap(nx.vmap(soft))(x)), np.log1p(np.exp(XS)))


def test_no_grad_and_stop_gradient_keep_the_batch():
    def f(x):
        with nx.no_grad():
            c = nx.sum(x * x)          # batched, but a constant for grad
        return c * nx.sum(x) + nx.stop_gradient(nx.max(x)) * x[0]
    got = nx.vmap(nx.grad(f))(t(XS))
    want = np.sum(XS * XS, 1)[:, None] * np.ones(3) + np.eye(3)[0] * XS.max(1)[:, None]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    got = nx.grad(lambda X: nx.sum(nx.vmap(f)(X)))(t(XS))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)

    @nx.no_grad
    def g(x):
        return nx.vmap(lambda r: nx.sum(r * r))(x)
    np.testing.assert_allclose(np.asarray(g(t(XS))), np.sum(XS * XS, 1))


def test_in_place_updates_on_batched_tracers():
    def f(x, i, v):
        x = x * 1.0
        x[i] = v               # batched index and value
        x += 1.0
        x[0] *= 2.0
        return x
    idx = np.array([0, 2, 1, 2])
    vals = np.array([5.0, 6.0, 7.0, 8.0])
    got = nx.vmap(f)(t(XS), nx.asarray(idx.astype(np.int32)), t(vals))
    want = XS.copy()
    want[np.arange(4), idx] = vals
    want += 1.0
    want[:, 0] *= 2.0
    np.testing.assert_allclose(np.asarray(got), want)
    # gradients flow through the rebinding
    gx, gv = nx.vmap(nx.grad(lambda x, v: nx.sum(f(x, 1, v) ** 2), argnums=(0, 1)))(
        t(XS), t(vals))
    np.testing.assert_allclose(np.asarray(gv), 2 * (vals + 1))
    np.testing.assert_allclose(np.asarray(gx), np.stack(
        [8 * (XS[:, 0] + 1), np.zeros(4), 2 * (XS[:, 2] + 1)], 1))
    # a concrete tensor cannot hold a batched value in place
    buf = t(np.zeros(3))

    def h(x):
        buf[0] = x[0]
        return x
    with pytest.raises(TypeError, match="x = x.at"):
        nx.vmap(h)(t(XS))


def test_vmap_in_threads_matches_serial():
    f = nx.vmap(nx.grad(f_scalar))
    want = np.asarray(f(t(XS)))
    results = [None] * 4

    def work(k):
        results[k] = np.asarray(f(t(XS)))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_call_rule_batches_a_called_function(new_primitive):
    # the hook for call-like primitives (a jit's call of a traced program): the function is
    # run once under a new vmap level
    from nx_rune.autodiff.batching import call_rule
    call = new_primitive("test_call")
    call.def_impl(lambda *args, fn: fn(*args))
    BATCH_RULES[call] = call_rule(lambda *, fn: fn)
    prog = lambda a, b: nx.sin(a) * b + nx.sum(a)  # noqa: E731
    out = nx.vmap(lambda a, b: bind(call, a, b, fn=prog), in_axes=(0, None))(t(XS), t(YS[0]))
    np.testing.assert_allclose(np.asarray(out), np.sin(XS) * YS[0] + XS.sum(1, keepdims=True))
    two = lambda a: [a * 2.0, nx.sum(a)]  # noqa: E731
    outs = nx.vmap(lambda a: bind(call, a, fn=two))(t(XS))
    np.testing.assert_allclose(np.asarray(outs[0]), 2 * XS)
    np.testing.assert_allclose(np.asarray(outs[1]), XS.sum(1))


def test_docs_vmap_block_runs():
    import pathlib
    import re
    readme = pathlib.Path(__file__).resolve().parent.parent / "docs" / "guide" / "vmap.md"
    block = [b for b in re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
             if "per_example = nx.vmap(nx.grad(loss)" in b]
    assert len(block) == 1
    ns = {}
    exec(block[0], ns)
    nxm, params, xs, ys = ns["nx"], ns["params"], ns["xs"], ns["ys"]
    w, b = ns["per_example"]
    assert w.shape == (8, 3, 2) and b.shape == (8, 2)
    for i in range(8):
        gw, gb = nxm.grad(ns["loss"])(params, xs[i], ys[i])
        np.testing.assert_allclose(np.asarray(w)[i], np.asarray(gw), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(b)[i], np.asarray(gb), rtol=1e-13)
    assert ns["noise"].shape == (8, 2)
    xv = np.asarray(xs)
    np.testing.assert_allclose(np.asarray(ns["deep"]), np.cos(xv) * xv + np.sin(xv), rtol=1e-13)


def test_rule_helpers_for_linalg_and_fft_like_primitives(new_primitive):
    from nx_rune.autodiff.batch_rules import defaxes, defleading
    inv = new_primitive("test_inv")
    inv.def_impl(lambda a: nx.asarray(np.linalg.inv(np.asarray(a))))
    defleading(inv)
    solve = new_primitive("test_solve")      # b of shape (n, k): no 1-d special case
    solve.def_impl(lambda a, b: nx.asarray(np.linalg.solve(np.asarray(a), np.asarray(b))))
    defleading(solve)
    fft = new_primitive("test_fftn")
    fft.def_impl(lambda x, *, axes: nx.asarray(np.fft.fftn(np.asarray(x), axes=axes)))
    defaxes(fft)
    rng = np.random.default_rng(5)
    A = rng.standard_normal((4, 3, 3)) + 3 * np.eye(3)
    Bm = rng.standard_normal((3, 2))
    got = nx.vmap(lambda a: bind(inv, a), in_axes=1)(t(np.moveaxis(A, 0, 1)))
    np.testing.assert_allclose(np.asarray(got), np.stack([np.linalg.inv(a) for a in A]),
                               rtol=1e-12)
    got = nx.vmap(lambda a, b: bind(solve, a, b), in_axes=(0, None))(t(A), t(Bm))
    np.testing.assert_allclose(np.asarray(got), np.stack([np.linalg.solve(a, Bm) for a in A]),
                               rtol=1e-12)
    got = nx.vmap(lambda b: bind(solve, t(A[0]), b), in_axes=2)(t(np.stack([Bm] * 5, 2)))
    np.testing.assert_allclose(np.asarray(got), np.stack([np.linalg.solve(A[0], Bm)] * 5),
                               rtol=1e-12)
    X3 = rng.standard_normal((2, 4, 5))
    got = nx.vmap(lambda x: bind(fft, x, axes=(-1,)), in_axes=1)(t(X3))
    np.testing.assert_allclose(np.asarray(got), np.stack([np.fft.fftn(X3[:, i], axes=(-1,))
                                                          for i in range(4)]), rtol=1e-12)


# -- front-end functions (compositions of primitives) under vmap and vmap(grad) ----------------

_R = np.random.default_rng(7)
FX = _R.standard_normal((3, 4, 5))
FV = _R.standard_normal((3, 5))
FI = _R.integers(0, 4, (3, 2)).astype(np.int32)
FRONT_END = {
    "softmax": (lambda x: nx.softmax(x, axis=-1), [FX]),
    "log_softmax": (lambda x: nx.log_softmax(x, axis=0), [FX]),
    "logsumexp": (lambda x: nx.logsumexp(x, axis=1), [FX]),
    "var_std_mean": (lambda x: nx.var(x, axis=0) + nx.std(x) + nx.mean(x, axis=1)[:, None].sum(),
                     [FX]),
    "einsum": (lambda x, v: nx.einsum("ij,j->i", x, v), [FX, FV]),
    "tensordot": (lambda x, v: nx.tensordot(x, v, axes=1), [FX, FV]),
    "matmul_transpose": (lambda x: x @ x.T, [FX]),
    "take": (lambda x, i: nx.take(x, i, axis=0), [FX, FI]),
    "take_along_axis": (lambda x: nx.take_along_axis(x, nx.argsort(x, axis=1), axis=1), [FX]),
    "advanced_index": (lambda x, i: x[i, 1:3], [FX, FI]),
    "basic_index": (lambda x: x[::-1, None, 2], [FX]),
    "at_add": (lambda x, i: x.at[i].add(1.0), [FX, FI]),
    "sort": (lambda x: nx.sort(x, axis=0), [FX]),
    "cumsum_cumprod": (lambda x: nx.cumsum(x, axis=1) + nx.cumprod(x, axis=0), [FX]),
    "clip_where": (lambda x: nx.where(x > 0, nx.clip(x, -0.5, 0.5), x * 0.1), [FX]),
    "concat_stack": (lambda x, v: nx.concatenate([x, v[None]], axis=0)
                     + nx.stack([v] * 5, 0).sum(), [FX, FV]),
    "pad_tile_repeat": (lambda x: nx.pad(x, ((1, 0), (0, 2)))[:, :2].sum()
                        + nx.tile(x, (2, 1)).sum() + nx.repeat(x, 2, axis=1), [FX]),
    "roll_flip_diff": (lambda x: nx.diff(nx.roll(x, 2, axis=1) * nx.flip(x, 0), axis=1), [FX]),
    "outer_kron_cross": (lambda v: nx.outer(v, v) + nx.kron(v[:2], v[:2]).sum()
                         + nx.cross(v[:3], v[2:]).sum(), [FV]),
    "max_argmax": (lambda x: nx.max(x, axis=1) + nx.astype(nx.argmax(x, axis=0), x.dtype).sum(),
                   [FX]),
    "conv2d": (lambda x: nx.conv2d(x[None, None], nx.ones((1, 1, 2, 2), nx.float64)), [FX]),
    "trace_diagonal": (lambda x: nx.trace(x[:, :4]) + nx.diagonal(x).sum(), [FX]),
    "interp": (lambda v: nx.interp(v, nx.linspace(-3, 3, 7), nx.sin(nx.linspace(-3, 3, 7))),
               [FV]),
    "sinc_hypot": (lambda x: nx.sinc(x) + nx.hypot(x, 1.0), [FX]),
    "median_quantile": (lambda x: nx.median(x, axis=0) + nx.quantile(x, 0.3, axis=1)[:, None],
                        [FX]),
    "nanmax": (lambda x: nx.nanmax(x, axis=0), [FX]),
    "polyval_average": (lambda v: nx.polyval(v, 0.5) + nx.average(v, weights=nx.arange(1.0, 6.0)),
                        [FV]),
}


@pytest.mark.parametrize("name", sorted(FRONT_END))
def test_front_end_functions_under_vmap(name):
    f, args = FRONT_END[name]
    got = nx.vmap(f)(*[nx.asarray(a) for a in args])
    want = stack([f(*[nx.asarray(a[i]) for a in args]) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    g = nx.grad(lambda *a: nx.sum(f(*a)))
    got = nx.vmap(g)(*[nx.asarray(a) for a in args])
    want = stack([g(*[nx.asarray(a[i]) for a in args]) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_deep_compositions_match_loops():
    A = np.random.default_rng(4).standard_normal((2, 3, 4))
    f = lambda x: nx.sum(nx.sin(x) * nx.max(x) * x)  # noqa: E731
    got = nx.vmap(nx.vmap(nx.hessian(f)))(t(A))
    want = np.stack([stack([nx.hessian(f)(t(A[i, j])) for j in range(3)]) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13)

    def inner(x):                      # per-example gradients inside a jvp inside a vmap
        return nx.sum(nx.vmap(nx.grad(f))(x) ** 2)

    def one(b):
        return nx.jvp(inner, (b,), (nx.ones_like(b),))[1]
    got = nx.grad(lambda B: nx.sum(nx.vmap(one)(B)))(t(A))
    want = stack([nx.grad(one)(t(A[i])) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)

    g = lambda v: nx.tanh(v) * v[0]  # noqa: E731
    got = nx.jacrev(lambda B: nx.vmap(nx.jacfwd(g))(B))(t(A[0]))
    want = np.zeros((3, 4, 4, 3, 4))
    for i in range(3):
        want[i, :, :, i, :] = np.asarray(nx.jacrev(nx.jacfwd(g))(t(A[0, i])))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-15)

    # no_grad and custom rules at the bottom of two vmaps and a grad
    def k(x):
        with nx.no_grad():
            s = nx.sum(x)
        return nx.sum(soft(x) * s)
    got = nx.vmap(nx.vmap(nx.grad(k)))(t(A))
    want = 1.5 / (1 + np.exp(-A)) * A.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
