"""Reverse mode: every VJP rule against finite differences, the seeds' examples, edge cases."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from autodiff_specs import NONDIFF_PRIMS, SPECS, evaluate, f64_tensor, fd_jacobians
from nx_rune import primitives as P
from nx_rune.autodiff import JVP_RULES, VJP_RULES
from nx_rune.primitives import bind

SETTINGS = settings(max_examples=25, deadline=None, derandomize=False)




@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_vjp_matches_finite_differences(spec, seed, data):
    rng = np.random.default_rng(seed)
    case = data.draw(st.sampled_from(spec.cases))
    fn, args = spec.make(rng, case)
    out, jacs = fd_jacobians(fn, args, spec.eps)
    u = rng.standard_normal(out.shape)
    y, vjp_fn = nx.vjp(fn, *[f64_tensor(a) for a in args])
    np.testing.assert_allclose(np.asarray(y, dtype=np.float64), out, rtol=1e-12, atol=1e-12)
    cts = vjp_fn(nx.asarray(u.astype(np.asarray(y).dtype)))
    assert len(cts) == len(args)
    for ct, a, J in zip(cts, args, jacs):
        assert ct.shape == np.shape(a) and ct.dtype == np.float64
        np.testing.assert_allclose(np.asarray(ct).reshape(-1), J.T @ u.reshape(-1),
                                   rtol=spec.tol, atol=spec.tol)


def test_every_primitive_has_rules_and_a_spec():
    covered = {s.prim for s in SPECS} | set(NONDIFF_PRIMS)
    for name, prim in P.PRIMITIVES.items():
        assert prim in VJP_RULES, f"primitive {name} has no VJP rule"
        assert prim in JVP_RULES, f"primitive {name} has no JVP rule"
        assert prim in covered, f"primitive {name} has no autodiff test spec"


@pytest.mark.parametrize("prim", NONDIFF_PRIMS, ids=lambda p: p.name)
def test_nondifferentiable_rules_are_zero(prim):
    assert prim in nx.autodiff.NONDIFF
    x = f64_tensor([1.0, 2.0])
    assert all(c is None for c in VJP_RULES[prim](x, x, x, x))   # (ct, *primals, out)
    assert JVP_RULES[prim]((x, x), (x, x), x) is None           # (primals, tangents, out)


def test_float_nondiff_ops_have_zero_gradient():
    x = f64_tensor([0.7, 2.5, -1.2])

    def f(x):
        return nx.sum(x // 0.5 + nx.astype(x < 1.0, nx.float64)
                      + nx.astype(nx.argmax(x), nx.float64))
    np.testing.assert_array_equal(np.asarray(nx.grad(f)(x)), 0.0)


def test_mod_derivatives_as_jax():
    # d(a % b)/da = 1, d(a % b)/db = -floor(a / b): JAX 0.10.2 gives 1.0 and -2.0 at (5.5, 2.0),
    # and 1.0 and 3.0 at (-5.5, 2.0)
    for a, b, want_b in ((5.5, 2.0, -2.0), (-5.5, 2.0, 3.0)):
        ga, gb = nx.grad(lambda a, b: nx.mod(a, b), argnums=(0, 1))(f64_tensor(a), f64_tensor(b))
        assert float(ga) == 1.0 and float(gb) == want_b


# -- the seeds' examples, with analytic values --------------------------------------------------

def test_grad_of_sum_of_squares():
    x = f64_tensor([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(nx.grad(lambda x: nx.sum(x * x))(x)), [2, 4, 6])


def test_grad_of_matmul():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4) / 10
    ga, gb = nx.grad(lambda a, b: nx.sum(nx.matmul(a, b)), argnums=(0, 1))(f64_tensor(a),
                                                                          f64_tensor(b))
    np.testing.assert_allclose(np.asarray(ga), np.ones((2, 4)) @ b.T)
    np.testing.assert_allclose(np.asarray(gb), a.T @ np.ones((2, 4)))


@pytest.mark.parametrize("sa,sb", [((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                                   ((5, 1, 2, 3), (4, 3, 2)), ((2, 3), (6, 3, 1))])
def test_matmul_gradients_broadcast_and_1d(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    w = rng.standard_normal(np.matmul(a, b).shape)
    ga, gb = nx.grad(lambda a, b: nx.sum(nx.matmul(a, b) * w), argnums=(0, 1))(f64_tensor(a),
                                                                              f64_tensor(b))
    _, jacs = fd_jacobians(lambda a, b: nx.sum(nx.matmul(a, b) * w), [a, b], 1e-6)
    np.testing.assert_allclose(np.asarray(ga).ravel(), jacs[0].ravel(), atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb).ravel(), jacs[1].ravel(), atol=1e-6)
    assert ga.shape == sa and gb.shape == sb


def test_grad_of_where():
    x = f64_tensor([-1.0, 2.0, -3.0, 4.0])
    g = nx.grad(lambda x: nx.sum(nx.where(x > 0, x * x, -x)))(x)
    np.testing.assert_allclose(np.asarray(g), [-1, 4, -1, 8])


def test_grad_of_gather():
    data = f64_tensor(np.arange(10.0).reshape(2, 5))
    idx = nx.asarray(np.array([[0, 0, 4], [1, 3, 3]], dtype=np.int64))
    g = nx.grad(lambda d: nx.sum(bind(P.gather_p, d, idx, axis=1)))(data)
    np.testing.assert_allclose(np.asarray(g), [[2, 0, 0, 0, 1], [0, 1, 0, 2, 0]])


def test_grad_of_scatter_set_duplicates_last_wins():
    t = f64_tensor(np.zeros((1, 4)))
    idx = nx.asarray(np.array([[1, 1, 3]], dtype=np.int64))
    u = f64_tensor([[10.0, 20.0, 30.0]])
    gt, gu = nx.grad(lambda t, u: nx.sum(bind(P.scatter_p, t, idx, u, axis=1, mode="set")
                                          * f64_tensor([[1.0, 2.0, 3.0, 4.0]])),
                     argnums=(0, 1))(t, u)
    np.testing.assert_allclose(np.asarray(gt), [[1, 0, 3, 0]])
    np.testing.assert_allclose(np.asarray(gu), [[0, 2, 4]])


def test_grad_of_exp_log_tanh_chain():
    x = 0.3
    g = nx.grad(lambda x: nx.tanh(nx.log(nx.exp(x) + 1.0)))(f64_tensor(x))
    s = np.log(np.exp(x) + 1)
    np.testing.assert_allclose(float(g), (1 - np.tanh(s) ** 2) * np.exp(x) / (np.exp(x) + 1))


def test_expand_gradient_sums_broadcast_axes():
    b = f64_tensor([1.0, 2.0, 3.0])
    g = nx.grad(lambda b: nx.sum(f64_tensor(np.ones((4, 3))) + b))(b)
    np.testing.assert_allclose(np.asarray(g), [4, 4, 4])


# -- edge cases ---------------------------------------------------------------------------------

def test_pow_at_zero_base():
    x = f64_tensor([0.0])
    for k, d in [(0.0, 0.0), (1.0, 1.0), (2.0, 0.0), (3.0, 0.0)]:
        g = nx.grad(lambda x: nx.sum(x ** k))(x)
        np.testing.assert_array_equal(np.asarray(g), [d])
    # exponent derivative at a zero base: 0 ** y is 0 for y > 0
    gy = nx.grad(lambda y: nx.sum(f64_tensor([0.0]) ** y))(f64_tensor([2.0]))
    np.testing.assert_array_equal(np.asarray(gy), [0.0])
    # second derivatives at 0
    np.testing.assert_allclose(float(nx.grad(nx.grad(lambda x: x ** 3.0))(f64_tensor(0.0))), 0.0)
    np.testing.assert_allclose(float(nx.grad(nx.grad(lambda x: x ** 2.0))(f64_tensor(0.0))), 2.0)


def test_pow_negative_base_integer_exponent():
    for dt in (np.float32, np.float64):
        x = nx.asarray(np.array([-2.0, -0.5], dtype=dt))
        g = nx.grad(lambda x: nx.sum(x ** 3.0))(x)
        assert g.dtype == dt
        np.testing.assert_allclose(np.asarray(g), 3 * np.array([-2.0, -0.5]) ** 2, rtol=1e-6)
        h = nx.grad(nx.grad(lambda x: x ** 3.0))(nx.asarray(np.array(-2.0, dtype=dt)))
        np.testing.assert_allclose(float(h), -12.0, rtol=1e-6)
        g2 = nx.grad(lambda x: nx.sum(x ** 2.0))(x)
        np.testing.assert_allclose(np.asarray(g2), 2 * np.array([-2.0, -0.5]), rtol=1e-6)


def test_pow_exponent_gradient_keeps_dtype():
    for dt in (np.float32, np.float64):
        y = nx.asarray(np.array([0.5, 2.0], dtype=dt))
        g = nx.grad(lambda y: nx.sum(nx.asarray(np.array([3.0, 3.0], dtype=dt)) ** y))(y)
        assert g.dtype == dt
        np.testing.assert_allclose(np.asarray(g), 3.0 ** np.array([0.5, 2.0]) * np.log(3.0),
                                   rtol=1e-6)


def test_max_ties_split_equally():
    x = f64_tensor([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(np.asarray(nx.grad(lambda x: nx.max(x))(x)), [0, 0.5, 0.5, 0])
    x = f64_tensor([[1.0, 1.0, 1.0], [0.0, 2.0, 1.0]])
    g = nx.grad(lambda x: nx.sum(nx.max(x, axis=1) * f64_tensor([1.0, 2.0])))(x)
    np.testing.assert_allclose(np.asarray(g), [[1 / 3] * 3, [0, 2, 0]])
    ga, gb = nx.grad(lambda a, b: nx.sum(nx.maximum(a, b)), argnums=(0, 1))(f64_tensor([1.0, 2.0]),
                                                                             f64_tensor([1.0, 0.0]))
    np.testing.assert_allclose(np.asarray(ga), [0.5, 1])
    np.testing.assert_allclose(np.asarray(gb), [0.5, 0])


def test_reduce_prod_with_zeros():
    x = f64_tensor([2.0, 0.0, 3.0, 4.0])
    np.testing.assert_allclose(np.asarray(nx.grad(lambda x: nx.prod(x))(x)), [0, 24, 0, 0])
    x = f64_tensor([0.0, 0.0, 3.0])
    np.testing.assert_allclose(np.asarray(nx.grad(lambda x: nx.prod(x))(x)), [0, 0, 0])
    x = f64_tensor([[0.0, 2.0], [3.0, 5.0]])
    g = nx.grad(lambda x: nx.sum(nx.prod(x, axis=0)))(x)
    np.testing.assert_allclose(np.asarray(g), [[3, 5], [0, 2]])
    # second derivative through a zero: d2/dx0 dx1 of x0 * x1 * x2 at x0 = 0 is x2
    H = nx.hessian(lambda x: nx.prod(x))(f64_tensor([0.0, 2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(H), [[0, 3, 2], [3, 0, 0], [2, 0, 0]])
    assert not np.isnan(np.asarray(H)).any()


def test_cumprod_with_zeros():
    x = f64_tensor([2.0, 0.0, 3.0, 0.0, 5.0])
    _, jacs = fd_jacobians(lambda x: nx.cumprod(x), [np.asarray(x)], 1e-6)
    J = nx.jacrev(lambda x: nx.cumprod(x))(x)
    np.testing.assert_allclose(np.asarray(J), jacs[0], atol=1e-8)
    assert not np.isnan(np.asarray(J)).any()


def test_cummax_cummin_ties_split():
    x = f64_tensor([1.0, 3.0, 3.0, 2.0])
    J = np.asarray(nx.jacrev(lambda x: nx.cummax(x))(x))
    np.testing.assert_allclose(J, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0.5, 0.5, 0],
                                   [0, 0.5, 0.5, 0]])
    J = np.asarray(nx.jacrev(lambda x: nx.cummin(x))(f64_tensor([2.0, 1.0, 1.0])))
    np.testing.assert_allclose(J, [[1, 0, 0], [0, 1, 0], [0, 0.5, 0.5]])


def test_as_strided_scatter_adds_overlaps():
    x = f64_tensor(np.arange(5.0))
    g = nx.grad(lambda x: nx.sum(nx.as_strided(x, (3, 3), (1, 1))))(x)
    np.testing.assert_allclose(np.asarray(g), [1, 2, 3, 2, 1])
    # relative to the C order of a non-contiguous input
    y = f64_tensor(np.arange(6.0).reshape(2, 3))
    w = f64_tensor([1.0, 10.0, 100.0])
    g = nx.grad(lambda y: nx.sum(nx.as_strided(nx.transpose(y), (3,), (1,), 1) * w))(y)
    # transpose(y).ravel() = [y00, y10, y01, y11, y02, y12]; elements 1..3 are y10, y01, y11
    np.testing.assert_allclose(np.asarray(g), [[0, 10, 0], [1, 100, 0]])


def test_pad_gradient_ignores_fill():
    x = f64_tensor([1.0, 2.0])
    g = nx.grad(lambda x: nx.sum(nx.pad(x, (2, 1), constant_values=7.0) ** 2))(x)
    np.testing.assert_allclose(np.asarray(g), [2, 4])


def test_cast_cotangent_has_primal_dtype():
    x = nx.asarray(np.array([1.0, 2.0], dtype=np.float32))
    g = nx.grad(lambda x: nx.sum(nx.astype(x, nx.float64) ** 2))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(np.asarray(g), [2, 4])
    g = nx.grad(lambda x: nx.sum(nx.astype(x, nx.float32) * 3))(f64_tensor([1.0]))
    assert g.dtype == np.float64


def test_integer_paths_get_no_cotangent():
    x = f64_tensor([1.5, 2.5])
    g = nx.grad(lambda x: nx.sum(x * nx.astype(nx.astype(x, nx.int32), nx.float64)))(x)
    np.testing.assert_allclose(np.asarray(g), [1, 2])


def test_unfold_fold_adjoint_examples():
    x = f64_tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    g = nx.grad(lambda x: nx.sum(bind(P.unfold_p, x, kernel_size=(2, 2), stride=(1, 1),
                                      dilation=(1, 1), padding=(0, 0))))(x)
    counts = np.array([[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]], dtype=float)
    np.testing.assert_allclose(np.asarray(g)[0, 0], counts)


def test_gradients_have_input_dtype_float32():
    x = nx.asarray(np.array([0.5, 1.5], dtype=np.float32))
    for f in (lambda x: nx.sum(nx.exp2(x)), lambda x: nx.sum(nx.sqrt(x)),
              lambda x: nx.max(x), lambda x: nx.prod(x), lambda x: nx.sum(nx.cumsum(x))):
        g = nx.grad(f)(x)
        assert g.dtype == np.float32 and g.shape == (2,)


def test_vjp_evaluates_against_seed_value():
    fn = lambda x: nx.sin(x) * 2.0  # noqa: E731
    x = f64_tensor([0.1, 0.2])
    y, vjp_fn = nx.vjp(fn, x)
    np.testing.assert_allclose(np.asarray(y), evaluate(fn, [np.asarray(x)]))
    (g,) = vjp_fn(f64_tensor([1.0, 1.0]))
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos([0.1, 0.2]))
    (g2,) = vjp_fn(f64_tensor([2.0, 0.0]))  # vjp_fn may be called again
    np.testing.assert_allclose(np.asarray(g2), [4 * np.cos(0.1), 0])
