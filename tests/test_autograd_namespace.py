"""nx_rune.autograd: autograd's API on nx_rune.

Expected values come from float64 finite differences, NumPy/SciPy, or HIPS autograd 1.9.1's
numbers pinned as literals (computed once with autograd 1.9.1; this file never imports it).
"""
import numpy as onp
import pytest
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

import nx_rune as nx
import nx_rune.autograd.numpy as np
import nx_rune.autograd.numpy.random as npr
from nx_rune.autograd import (
    checkpoint,
    deriv,
    elementwise_grad,
    grad,
    grad_and_aux,
    grad_named,
    hessian,
    hessian_tensor_product,
    holomorphic_grad,
    jacobian,
    make_ggnvp,
    make_hvp,
    make_jvp,
    make_vjp,
    multigrad_dict,
    tensor_jacobian_product,
    value_and_grad,
)
from nx_rune.autograd.extend import defjvp, defvjp, primitive
from nx_rune.autograd.misc import flatten
from nx_rune.autograd.misc.optimizers import adam, rmsprop, sgd
from nx_rune.autograd.test_util import check_grads, combo_check


def fd_grad(f, x, eps=1e-6):
    x = onp.asarray(x, dtype=onp.float64)
    g = onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        e = onp.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def h(x):
    return np.tanh(x[0] * x[1]) + x[0] ** 3


X = onp.array([0.3, -0.7])


# -- float64 defaults, and plain nx_rune untouched -------------------------------------------

def test_float64_defaults():
    assert np.array([1.0, 2.0]).dtype == onp.float64
    assert np.ones(3).dtype == onp.float64
    assert np.zeros((2, 2)).dtype == onp.float64
    assert np.arange(3).dtype == onp.int64
    assert np.linspace(0, 1, 5).dtype == onp.float64
    assert np.sin(0.5).dtype == onp.float64
    assert np.mean(np.arange(4)).dtype == onp.float64
    assert np.argmax(np.array([1.0, 3.0, 2.0])).dtype == onp.int64
    assert np.array([1 + 2j]).dtype == onp.complex128
    assert npr.randn(3).dtype == onp.float64


def test_plain_nx_keeps_its_defaults():
    np.ones(3)        # the autograd namespace's x64 scope ends with each call
    grad(lambda x: x ** 2)(1.0)
    assert nx.ones(3).dtype == onp.float32
    assert nx.array([1.0, 2.0]).dtype == onp.float32
    assert nx.arange(3).dtype == onp.int32
    assert not nx.config.x64_enabled()


def test_numpy_random_matches_numpy_stream():
    npr.seed(3)
    a = npr.randn(4)
    onp.random.seed(3)
    onp.testing.assert_array_equal(onp.asarray(a), onp.random.randn(4))


def test_ndarray_isinstance_and_fallback():
    assert isinstance(np.ones(2), np.ndarray)
    assert isinstance(onp.ones(2), np.ndarray)
    assert not isinstance([1.0], np.ndarray)
    assert np.float64 is onp.float64
    assert onp.asarray(np.bincount(np.array([0, 1, 1]))).tolist() == [1, 2]
    with pytest.raises(NotImplementedError, match="polymul"):
        grad(lambda x: np.sum(np.polymul(x, x)))(onp.ones(2))
    # convolve is nx_rune's own now: differentiable (d/dx sum(x * x) over the full
    # convolution of [1, 1] with itself is 2 * sum(x) per element: [4, 4])
    assert onp.asarray(grad(lambda x: np.sum(np.convolve(x, x)))(onp.ones(2))).tolist() \
        == [4.0, 4.0]


# -- differential operators -------------------------------------------------------------------

def test_grad_and_hessian_pinned_autograd():
    # autograd 1.9.1: grad(h)(X), hessian(h)(X)
    onp.testing.assert_allclose(grad(h)(X), [-0.40001541, 0.28714946], rtol=1e-7)
    onp.testing.assert_allclose(hessian(h)(X), [[1.99413904, 0.87396242],
                                                [0.87396242, 0.03565819]], rtol=1e-7)
    onp.testing.assert_allclose(grad(h)(X), fd_grad(h, X), rtol=1e-7)
    assert grad(h)(X).dtype == onp.float64


def test_grad_of_python_floats_and_argnum():
    f = lambda x, y: x * np.sin(y)  # noqa: E731
    assert abs(float(grad(f)(0.7, 1.8)) - onp.sin(1.8)) < 1e-12
    assert abs(float(grad(f, 1)(0.7, 1.8)) - 0.7 * onp.cos(1.8)) < 1e-12
    gx, gy = grad(f, (0, 1))(0.7, 1.8)
    assert abs(float(gy) - 0.7 * onp.cos(1.8)) < 1e-12
    with pytest.raises(TypeError, match="scalar"):
        grad(lambda x: x * 2.0)(np.ones(2))


def test_elementwise_grad_jacobian_deriv():
    x = onp.array([0.1, 0.5, 1.3])
    onp.testing.assert_allclose(elementwise_grad(np.tanh)(x), 1 - onp.tanh(x) ** 2, rtol=1e-12)
    J = jacobian(lambda v: np.outer(v, v))(x)
    assert J.shape == (3, 3, 3)
    want = onp.einsum("ik,j->ijk", onp.eye(3), x) + onp.einsum("i,jk->ijk", x, onp.eye(3))
    onp.testing.assert_allclose(J, want, rtol=1e-12)
    assert abs(float(deriv(np.sin)(0.3)) - onp.cos(0.3)) < 1e-12


def test_vjp_jvp_value_and_aux():
    vjp, ans = make_vjp(np.sin)(X)
    onp.testing.assert_allclose(vjp(np.ones(2)), onp.cos(X), rtol=1e-12)
    ans, t = make_jvp(np.exp)(X)(np.array([1.0, 2.0]))
    onp.testing.assert_allclose(t, onp.exp(X) * [1, 2], rtol=1e-12)
    v, g = value_and_grad(h)(X)
    assert abs(float(v) - float(h(X))) < 1e-15
    g2, aux = grad_and_aux(lambda x: (np.sum(x ** 2), "aux"))(X)
    onp.testing.assert_allclose(g2, 2 * X)
    assert aux == "aux"


def test_hvp_products_ggnvp():
    H = onp.array([[1.99413904, 0.87396242], [0.87396242, 0.03565819]])
    v = onp.array([0.5, -1.5])
    hvp, _ = make_hvp(h)(X)
    onp.testing.assert_allclose(hvp(v), H @ v, rtol=1e-7)
    onp.testing.assert_allclose(hessian_tensor_product(h)(X, v), H @ v, rtol=1e-7)
    A = onp.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]])
    tjp = tensor_jacobian_product(lambda x: np.dot(A, x))(X, onp.array([1.0, 2.0, 3.0]))
    onp.testing.assert_allclose(tjp, onp.array([1.0, 2.0, 3.0]) @ A)
    # g(y) = |y|^2 / 2: GGN = J^T J
    ggnvp = make_ggnvp(lambda x: np.dot(A, x))(X)
    onp.testing.assert_allclose(ggnvp(v), A.T @ A @ v, rtol=1e-12)


def test_holomorphic_named_multigrad_checkpoint():
    z = 0.3 + 0.4j
    onp.testing.assert_allclose(holomorphic_grad(lambda z: z ** 3)(z), 3 * z ** 2)

    def f(a, b=2.0):
        return a * b ** 2
    assert abs(float(grad_named(f, "b")(3.0, 2.0)) - 12.0) < 1e-12
    d = multigrad_dict(f)(3.0, 2.0)
    assert list(d) == ["a", "b"] and abs(float(d["a"]) - 4.0) < 1e-12
    c = checkpoint(lambda x: np.sum(np.sin(x) ** 2))
    onp.testing.assert_allclose(grad(c)(X), onp.sin(2 * X), rtol=1e-12)


# -- extend.primitive ---------------------------------------------------------------------------

@primitive
def logsumexp_np(x):
    """Computed by NumPy on concrete values: only the rules make it differentiable."""
    x = onp.asarray(x)
    m = x.max()
    return m + onp.log(onp.sum(onp.exp(x - m)))


defvjp(logsumexp_np, lambda ans, x: lambda g: g * np.exp(x - ans))


@primitive
def cube(x):
    return onp.asarray(x) ** 3


defjvp(cube, lambda g, ans, x: 3 * x ** 2 * g)


def test_primitive_defvjp_first_and_second_order():
    x = onp.array([0.1, -0.4, 1.2])
    sm = onp.exp(x) / onp.exp(x).sum()
    onp.testing.assert_allclose(grad(logsumexp_np)(x), sm, rtol=1e-12)
    # the rule is written with nx_rune.autograd.numpy: its derivative is the softmax Jacobian
    onp.testing.assert_allclose(hessian(logsumexp_np)(x), onp.diag(sm) - onp.outer(sm, sm),
                                rtol=1e-10, atol=1e-12)
    check_grads(logsumexp_np, modes=["rev"], order=2)(x)
    assert abs(float(logsumexp_np(x)) - scipy.special.logsumexp(x)) < 1e-12


def test_primitive_defjvp_both_modes():
    x = onp.array([0.5, -2.0])
    ans, t = make_jvp(cube)(x)(onp.ones(2))
    onp.testing.assert_allclose(t, 3 * x ** 2)
    onp.testing.assert_allclose(elementwise_grad(cube)(x), 3 * x ** 2)


def test_primitive_without_rule_raises():
    p = primitive(lambda x: onp.asarray(x) * 2)
    with pytest.raises(NotImplementedError, match="VJP"):
        grad(lambda x: np.sum(p(x)))(onp.ones(2))


# -- test_util ----------------------------------------------------------------------------------

def test_check_grads_catches_a_wrong_rule():
    bad = primitive(lambda x: onp.sin(onp.asarray(x)))
    defvjp(bad, lambda ans, x: lambda g: g * np.sin(x))    # wrong: should be cos
    with pytest.raises(AssertionError, match="VJP"):
        check_grads(bad, modes=["rev"], order=1)(onp.array([0.3, 0.9]))
    combo_check(np.sum, [0], modes=["fwd", "rev"])([onp.array([1.0, 2.0])], axis=[None, 0])


# -- misc ---------------------------------------------------------------------------------------

def quad(x):
    return np.sum((x - np.array([1.0, -2.0])) ** 2 * np.array([1.0, 3.0])) + np.sum(np.sin(x))


def test_optimizers_pinned_autograd():
    g = lambda x, i: grad(quad)(x)  # noqa: E731
    x0 = onp.array([0.5, 0.5])
    # autograd 1.9.1's numbers for the same calls
    onp.testing.assert_allclose(adam(g, x0, num_iters=50, step_size=0.1),
                                [0.57988357, -2.12427934], rtol=1e-7)
    onp.testing.assert_allclose(sgd(g, x0, num_iters=50, step_size=0.1),
                                [0.57926915, -1.78899825], rtol=1e-7)
    onp.testing.assert_allclose(rmsprop(g, x0, num_iters=50, step_size=0.1),
                                [0.58243794, -1.93985985], rtol=1e-7)
    out = adam(lambda p, i: grad(lambda p: np.sum(p["a"] ** 2) + np.sum((p["b"] - 1.0) ** 2))(p),
               {"a": onp.array([1.0, 2.0]), "b": 0.5}, num_iters=20, step_size=0.1)
    onp.testing.assert_allclose(out["a"], [-0.2711541, 0.22245243], rtol=1e-6)
    onp.testing.assert_allclose(out["b"], 0.94681234, rtol=1e-7)
    seen = []
    sgd(g, x0, callback=lambda x, i, gr: seen.append(i), num_iters=3)
    assert seen == [0, 1, 2]


def test_flatten_roundtrip_and_order():
    value = {"b": [onp.ones((2, 2)), 3.0], "a": onp.arange(3.0)}
    flat, unflatten = flatten(value)
    assert flat.dtype == onp.float64
    onp.testing.assert_array_equal(flat, [0, 1, 2, 1, 1, 1, 1, 3])   # sorted keys
    back = unflatten(flat * 2)
    onp.testing.assert_array_equal(back["b"][0], 2 * onp.ones((2, 2)))
    assert float(back["b"][1]) == 6.0


# -- scipy ---------------------------------------------------------------------------------------

def test_scipy_namespaces():
    import nx_rune.autograd.scipy.special as sp
    import nx_rune.autograd.scipy.stats.multivariate_normal as mvn
    import nx_rune.autograd.scipy.stats.norm as norm
    x = onp.array([0.5, 1.5])
    onp.testing.assert_allclose(grad(lambda x: np.sum(sp.j0(x)))(x), -scipy.special.j1(x),
                                rtol=1e-12)
    onp.testing.assert_allclose(grad(lambda x: np.sum(sp.gammaln(x)))(x),
                                scipy.special.digamma(x), rtol=1e-12)
    onp.testing.assert_allclose(grad(lambda x: np.sum(norm.logpdf(x)))(x), -x, rtol=1e-12)
    cov = onp.array([[2.0, 0.3], [0.3, 1.0]])
    onp.testing.assert_allclose(grad(lambda m: mvn.logpdf(x, m, cov))(onp.zeros(2)),
                                onp.linalg.solve(cov, x), rtol=1e-12)
    assert abs(float(mvn.entropy(onp.zeros(2), cov))
               - scipy.stats.multivariate_normal(onp.zeros(2), cov).entropy()) < 1e-12


# -- autograd's own names and conventions --------------------------------------------------------

def test_abs_derivative_at_zero_is_autograds():
    # autograd: d|x|/dx = sign(x), 0 at 0 (nx_rune's own abs follows JAX: 1 at 0)
    for f in (np.abs, np.absolute, np.fabs):
        assert float(grad(lambda x: 3.0 * f(x))(0.0)) == 0.0
        assert float(grad(lambda x: 3.0 * f(x))(-1.1)) == -3.0
        assert float(grad(lambda x: 3.0 * f(x))(1.1)) == 3.0
        assert float(make_jvp(f)(0.0)(1.0)[1]) == 0.0
        assert float(grad(grad(lambda x: f(x) ** 3))(-2.0)) == 12.0      # 6 |x|
    assert float(nx.grad(nx.abs)(nx.asarray(0.0))) == 1.0
    assert float(f(-0.0)) == 0.0 and onp.signbit(float(np.abs(-0.0))) == False  # noqa: E712
    assert complex(np.abs(3 + 4j)) == 5.0


def test_where_of_python_values_returns_python_values():
    # autograd's custom_where: no array among the arguments -> a Python value
    assert np.where(True, 1, 2) == 1 and type(np.where(True, 1, 2)) is int
    assert type(np.where(False, 1, 2.0)) is float
    assert np.where(True, [1, 2], [3, 4]) == [1, 2]
    out = np.where(onp.array([True, False]), 1.0, 2.0)
    assert out.dtype == onp.float64 and list(onp.asarray(out)) == [1.0, 2.0]
    assert onp.array_equal(onp.asarray(np.where([True, False, True])[0]), [0, 2])
    with pytest.raises(ValueError, match="both or neither"):
        np.where(True, 1)


def test_make_diagonal_and_its_derivative():
    d = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    a = np.make_diagonal(d, axis1=-1, axis2=-2)
    assert a.shape == (2, 3, 3)
    onp.testing.assert_array_equal(onp.asarray(a)[1], onp.diag(d[1]))
    a = np.make_diagonal(d[0], offset=1, axis1=0, axis2=1)
    onp.testing.assert_array_equal(onp.asarray(a), onp.diag(d[0], 1))
    a = np.make_diagonal(d[0], offset=-2)
    onp.testing.assert_array_equal(onp.asarray(a), onp.diag(d[0], -2))
    check_grads(lambda d: np.make_diagonal(d, axis1=-1, axis2=-2))(d)
    with pytest.raises(ValueError, match="axis1 and axis2"):
        np.make_diagonal(d, axis1=0, axis2=0)
    with pytest.raises(TypeError, match="offset"):
        np.make_diagonal(d, offset=1.5)


def test_std_of_one_element_has_zero_derivative():
    assert float(grad(np.std)(3.5)) == 0.0
    g = grad(lambda x: np.sum(np.std(x, axis=0)))(onp.array([[1.0, 2.0, 3.0]]))
    onp.testing.assert_array_equal(onp.asarray(g), 0.0)
    x = onp.array([1.0, 2.0, 4.0])
    onp.testing.assert_allclose(onp.asarray(grad(np.std)(x)), fd_grad(onp.std, x), rtol=1e-6)
    assert float(nx.std(nx.asarray(3.5))) == 0.0


def test_namespace_constants_and_helpers():
    assert np.__version__ == onp.__version__
    assert np.longdouble is onp.float64 and np.clongdouble is onp.complex128
    y = np.ones((2, 2)).astype(np.longdouble)
    assert grad(lambda x: np.sum(x ** 2))(y).dtype == onp.float64
    a = onp.arange(6.0).reshape(2, 3)
    onp.testing.assert_array_equal(onp.asarray(np.linalg.T(a)), a.T)
    onp.testing.assert_array_equal(onp.asarray(np.linalg._dot(a, a.T)), a @ a.T)
    assert grad.__doc__.startswith("\n    Returns a function which")
    assert grad(lambda x, y: x, 1).__doc__.startswith("    grad of function")


def test_grad_of_int_or_bool_output_raises():
    with pytest.raises(TypeError, match="float output"):
        grad(lambda x: np.allclose(x, x * 3.0 / 3.0))(onp.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="float output"):
        grad(lambda x: np.sum(x > 0))(onp.array([1.0, 2.0]))


def test_deprecated_wrappers():
    import warnings

    from nx_rune.autograd.core import primitive as core_primitive
    from nx_rune.autograd.util import quick_grad_check

    @core_primitive
    def mul(x, y):
        return x * y
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mul.defgrad(lambda ans, x, y: lambda g: y * g)
        mul.defgrad(lambda ans, x, y: lambda g: x * g, argnum=1)
    assert any("deprecated" in str(m.message) for m in w)
    gx, gy = grad(lambda x, y: np.sum(mul(x, y)), (0, 1))(onp.ones(2) * 2.0, onp.ones(2) * 3.0)
    onp.testing.assert_array_equal(onp.asarray(gx), 3.0)
    onp.testing.assert_array_equal(onp.asarray(gy), 2.0)

    @core_primitive
    def mul2(x, y):
        return x * y
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        mul2.defvjp(lambda g, ans, vs, gvs, x, y: y * g)
        mul2.defvjp(lambda g, ans, vs, gvs, x, y: x * g, argnum=1)
    assert float(grad(mul2)(2.0, 5.0)) == 5.0
    assert float(grad(mul2, 1)(2.0, 5.0)) == 2.0

    @core_primitive
    def zero(x, y):
        return 0 * x * y
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        zero.defvjp_is_zero([0, 1])
    assert float(grad(zero, 1)(2.0, 5.0)) == 0.0
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        quick_grad_check(lambda x, y: x ** 2 + y, 1.0, (2.0,))


def test_scipy_names_through_the_namespace():
    import nx_rune.autograd.scipy.integrate as integrate
    import nx_rune.autograd.scipy.linalg as spla
    import nx_rune.autograd.scipy.signal as signal
    import nx_rune.autograd.scipy.stats as stats
    import nx_rune.autograd.scipy.stats.multivariate_normal as mvn
    rng = onp.random.default_rng(4)
    # autograd's convolve(A, B, axes, dot_axes, mode)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((3, 4))
    out = signal.convolve(a, b, axes=([1], [1]), dot_axes=([0], [0]), mode="valid")
    want = sum(scipy.signal.convolve(a[i], b[i], "valid") for i in range(3))
    onp.testing.assert_allclose(onp.asarray(out), want, rtol=1e-12)
    combo_check(signal.convolve, [0, 1], modes=["rev"])([rng.standard_normal(4)],
                                                         [rng.standard_normal(2)],
                                                         mode=["full", "same"])
    # odeint with SciPy's args tuple
    f = lambda y, t, k: -k * y
    y = integrate.odeint(f, onp.array([1.0, 2.0]), onp.linspace(0, 1, 3), (onp.array([1.0, 2.0]),))
    onp.testing.assert_allclose(onp.asarray(y)[-1], [onp.exp(-1.0), 2 * onp.exp(-2.0)],
                                rtol=1e-7)
    g = grad(lambda k: np.sum(integrate.odeint(f, onp.array([1.0, 2.0]), onp.linspace(0, 1, 3),
                                               (k,))[-1]))(onp.array([1.0, 2.0]))
    onp.testing.assert_allclose(onp.asarray(g), [-onp.exp(-1.0), -2 * onp.exp(-2.0)], rtol=1e-6)
    # solve_banded, t.cdf, poisson.cdf, mvn allow_singular, complex erf, eig
    ab = onp.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])
    onp.testing.assert_allclose(onp.asarray(spla.solve_banded((1, 1), ab, onp.ones(3))),
                                scipy.linalg.solve_banded((1, 1), ab, onp.ones(3)), rtol=1e-12)
    assert abs(float(stats.t.cdf(0.7, 3.0)) - scipy.stats.t.cdf(0.7, 3.0)) < 1e-13
    assert abs(float(grad(stats.t.cdf)(0.7, 3.0)) - scipy.stats.t.pdf(0.7, 3.0)) < 1e-12
    assert abs(float(grad(stats.poisson.cdf, 1)(2.0, 1.5)) +
               scipy.stats.poisson.pmf(2.0, 1.5)) < 1e-12
    cov = onp.diag([1.0, 1.0, 0.0])
    assert abs(float(mvn.logpdf(onp.array([0.1, 0.2, 0.0]), onp.zeros(3), cov,
                                allow_singular=True)) -
               scipy.stats.multivariate_normal.logpdf([0.1, 0.2, 0.0], onp.zeros(3), cov,
                                                      allow_singular=True)) < 1e-12
    import nx_rune.autograd.scipy.special as special
    assert abs(complex(special.erf(0.5 + 0.5j)) - scipy.special.erf(0.5 + 0.5j)) < 1e-14
    m = rng.standard_normal((4, 4))
    w, v = np.linalg.eig(m)
    onp.testing.assert_allclose(onp.sort_complex(onp.asarray(w)),
                                onp.sort_complex(onp.linalg.eigvals(m)), rtol=1e-12)
    check_grads(lambda x: np.abs(np.linalg.eig(x)[0]), modes=["rev"])(m)
    # complex max/min/var/std
    z = onp.array([1 + 2j, 3 - 1j, 3 + 0.5j])
    assert complex(np.max(z)) == 3 + 0.5j and complex(np.min(z)) == 1 + 2j
    assert abs(float(np.var(z)) - onp.var(z)) < 1e-14


def test_primitive_without_rules_is_traced_by_jit_and_vmap():
    # only differentiation needs a primitive's rules: const_graph (jit) and vmap trace its body
    from nx_rune.autograd.misc.tracers import const_graph
    calls = []

    @primitive
    def process(v, name):
        calls.append(name)
        return v * 2.0

    f = const_graph(lambda x, y: process(x, "x") + process(y, "y"), 1.0)
    assert float(f(2.0)) == 6.0 and float(f(3.0)) == 8.0
    assert calls == ["x", "y"]                       # traced once, replayed after
    out = nx.vmap(lambda v: process(v, "v"))(onp.arange(3.0))
    onp.testing.assert_array_equal(onp.asarray(out), [0.0, 2.0, 4.0])
    with pytest.raises(NotImplementedError, match="VJP of"):
        grad(lambda x: process(x, "g"))(1.0)


def test_primitive_with_rules_is_traced_by_jit_and_vmap_and_differentiated_inside():
    # a primitive with a VJP (or JVP) rule, under jit or vmap alone, traces its body; it used
    # to go through the rule's custom_vjp, whose primal called the primitive again at the same
    # level: RecursionError
    @primitive
    def cube(v):
        return v * v * v

    defvjp(cube, lambda ans, v: lambda g: g * 3.0 * v * v)
    defjvp(cube, lambda g, ans, v: g * 3.0 * v * v)
    x = onp.array([1.0, 2.0, -0.5])
    onp.testing.assert_array_equal(onp.asarray(nx.jit(cube)(x)), x ** 3)
    onp.testing.assert_array_equal(onp.asarray(nx.vmap(cube)(x)), x ** 3)
    for g in (nx.jit(nx.grad(lambda v: nx.sum(cube(v)))),
              nx.vmap(nx.grad(cube)), nx.jit(nx.vmap(nx.grad(cube)))):
        onp.testing.assert_allclose(onp.asarray(g(x)), 3.0 * x ** 2, rtol=1e-15)


def test_autograd_sqrtm_is_scipys_real_or_complex_and_differentiable():
    from nx_rune.autograd import grad as agrad
    from nx_rune.autograd.scipy import linalg as aspla
    spd = onp.array([[4.0, 1.0], [1.0, 3.0]])
    indefinite = onp.array([[1.0, 2.0], [2.0, -3.0]])      # an eigenvalue < 0: complex root
    for a in (spd, indefinite):
        got = onp.asarray(aspla.sqrtm(a))
        want = scipy.linalg.sqrtm(a)
        assert got.dtype == want.dtype
        onp.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    f = lambda a: aspla.sqrtm(a)[0, 1]  # noqa: E731
    e = onp.zeros((2, 2))
    e[1, 0] = 1e-6
    fd = (scipy.linalg.sqrtm(spd + e)[0, 1] - scipy.linalg.sqrtm(spd - e)[0, 1]) / 2e-6
    onp.testing.assert_allclose(onp.asarray(agrad(f)(spd))[1, 0], fd, rtol=1e-6)


def test_integer_types_cast_traced_arrays_as_autograds():
    # autograd's np.int64(W[:, -1]) under grad: an index array from the values (its own test)
    def fun(w):
        index = np.int64(w[:, -1])
        assert index.dtype == np.int64
        return np.sum(w[:, :-1][index] ** 2)

    w = onp.random.default_rng(0).standard_normal((5, 4))
    w[:, -1] = [2.0, 0.0, 4.0, 2.0, 1.7]
    want = onp.zeros_like(w)
    for i in (2, 0, 4, 2, 1):
        want[i, :-1] += 2 * w[i, :-1]
    onp.testing.assert_allclose(onp.asarray(grad(fun)(w)), want, rtol=1e-15)
    # NumPy's construction otherwise; dtypes and isinstance as autograd's subclasses give
    assert isinstance(np.int32(3), np.int32) and int(np.int32(3)) == 3
    assert np.dtype(np.int16) == onp.int16 and np.zeros(2, dtype=np.int8).dtype == onp.int8
    onp.testing.assert_array_equal(np.int64(onp.array([1.7, -2.2])), [1, -2])
