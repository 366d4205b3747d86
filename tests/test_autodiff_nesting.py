"""Nested transformations: second- and third-order derivatives, hessians, perturbation
confusion, every combination of grad / jvp / jacfwd / jacrev."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from autodiff_specs import SPECS, f64_tensor


@pytest.mark.parametrize("spec", [s for s in SPECS if s.second_order], ids=lambda s: s.name)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_second_order_matches_finite_differences(spec, seed, data):
    """The derivative functions (jvp along v, vjp with u) are themselves differentiated
    correctly by both modes: every rule is differentiable."""
    rng = np.random.default_rng(seed)
    fn, args = spec.make(rng, data.draw(st.sampled_from(spec.cases)))
    nx.check_grads(fn, [f64_tensor(a) for a in args], order=2, eps=max(spec.eps, 1e-5),
                   atol=max(spec.tol, 1e-5), rtol=max(spec.tol, 1e-5))


# -- grad of grad against analytic second derivatives -----------------------------------------

SECOND = [
    (nx.sin, lambda x: -np.sin(x)),
    (nx.exp, np.exp),
    (nx.sqrt, lambda x: -0.25 * x ** -1.5),
    (nx.tanh, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    (lambda x: x ** 3, lambda x: 6 * x),
    (nx.exp2, lambda x: np.log(2) ** 2 * 2 ** x),
    (nx.log2, lambda x: -1 / (x * x * np.log(2))),
    (nx.reciprocal, lambda x: 2 / x ** 3),
    (nx.log1p, lambda x: -1 / (1 + x) ** 2),
    (nx.expm1, np.exp),
    (nx.cos, lambda x: -np.cos(x)),
]


@pytest.mark.parametrize("f,d2", SECOND)
def test_grad_of_grad_analytic(f, d2):
    for x in (0.3, 1.7):
        np.testing.assert_allclose(float(nx.grad(nx.grad(f))(f64_tensor(x))), d2(x), rtol=1e-10)


def test_third_derivatives_of_sin_and_exp():
    d3 = nx.grad(nx.grad(nx.grad(nx.sin)))
    np.testing.assert_allclose(float(d3(f64_tensor(0.4))), -np.cos(0.4), rtol=1e-12)
    d3 = nx.grad(nx.grad(nx.grad(nx.exp)))
    np.testing.assert_allclose(float(d3(f64_tensor(0.4))), np.exp(0.4), rtol=1e-12)
    # the same through forward mode and mixed orders
    d = lambda f: lambda x: nx.jvp(f, (x,), (nx.ones_like(x),))[1]  # noqa: E731
    np.testing.assert_allclose(float(d(d(d(nx.sin)))(f64_tensor(0.4))), -np.cos(0.4), rtol=1e-12)
    np.testing.assert_allclose(float(d(nx.grad(d(nx.exp)))(f64_tensor(0.4))), np.exp(0.4),
                               rtol=1e-12)
    x = f64_tensor([0.1, 0.5])
    T = nx.jacfwd(nx.jacrev(nx.jacfwd(lambda x: nx.sum(nx.sin(x)))))(x)
    expect = np.zeros((2, 2, 2))
    expect[0, 0, 0], expect[1, 1, 1] = -np.cos(0.1), -np.cos(0.5)
    np.testing.assert_allclose(np.asarray(T), expect, atol=1e-12)


# -- hessians ---------------------------------------------------------------------------------

def _fd_hessian(f, x, eps=1e-4):
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    H = np.zeros((n, n))
    g = lambda z: np.asarray(nx.grad(f)(f64_tensor(z.reshape(x.shape)))).reshape(-1)  # noqa: E731
    for k in range(n):
        e = np.zeros(n)
        e[k] = eps
        H[:, k] = (g(x.reshape(-1) + e) - g(x.reshape(-1) - e)) / (2 * eps)
    return H


def test_hessian_of_sum_sin_x_squared_analytic():
    x = np.linspace(-1, 1, 5)
    H = nx.hessian(lambda x: nx.sum(nx.sin(x) * x ** 2))(f64_tensor(x))
    d2 = -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)
    np.testing.assert_allclose(np.asarray(H), np.diag(d2), atol=1e-12)


@pytest.mark.parametrize("name,f,x", [
    ("sin", lambda x: nx.sum(nx.sin(x) * x[::-1]), [0.2, 0.5, 0.9]),
    ("exp2", lambda x: nx.sum(nx.exp2(x * x[0])), [0.2, -0.5, 0.9]),
    ("sqrt", lambda x: nx.sum(nx.sqrt(x * x[1] + 1.0)), [0.2, 0.5, 0.9]),
    ("pow", lambda x: nx.sum(x ** x[::-1]), [0.7, 1.5, 0.9]),
    ("reduce_max", lambda x: nx.max(x * x) * nx.sum(x), [0.2, -1.5, 0.9]),
    ("prod", lambda x: nx.prod(x * x + 1.0) * x[0], [0.2, -0.5, 0.9]),
    ("prod_zero", lambda x: nx.prod(x), [0.0, -0.5, 0.9, 2.0]),
    ("logsumexp", lambda x: nx.logsumexp(x * 2.0), [0.2, -0.5, 0.9]),
    ("cumprod", lambda x: nx.sum(nx.cumprod(x)), [0.3, 0.0, 2.0, -1.0]),
    ("softmax", lambda x: nx.sum(nx.softmax(x) * nx.arange(3, dtype=nx.float64)), [0.1, 0.2, -1]),
])
def test_hessians_match_finite_differences(name, f, x):
    H = np.asarray(nx.hessian(f)(f64_tensor(x)))
    np.testing.assert_allclose(H, _fd_hessian(f, x), atol=1e-6, rtol=1e-6)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


def test_logsumexp_hessian_analytic():
    x = np.array([0.2, -0.5, 0.9])
    p = np.exp(x) / np.exp(x).sum()
    H = nx.hessian(lambda x: nx.logsumexp(x))(f64_tensor(x))
    np.testing.assert_allclose(np.asarray(H), np.diag(p) - np.outer(p, p), atol=1e-12)



@pytest.mark.parametrize("scale", [1e3, 1e9, 1e15])
def test_hvp_through_a_large_logsumexp_is_exact(scale):
    """L = sum(logsumexp(a)^2) over one-element rows a = scale * x is sum(a^2): its hvp is
    2 scale^2 t exactly.  With a constant shift the product rule's terms of the cotangent
    2 * lse cancel (relative error ~1e-8 at 1e9, as JAX's eager hvp); eagerly, under jit
    and by jacfwd alike the dominant element's x - max is now 0 with zero derivatives."""
    x, t = np.array([[0.39, 1.69], [-0.57, -0.94]]), np.array([[-0.93, 0.22], [0.36, 0.67]])
    want = np.zeros((2, 2))
    want[:, 0] = 2 * scale ** 2 * t[:, 0]

    def loss(z):
        return nx.sum(nx.logsumexp(z[:, :1] * scale, axis=-1, keepdims=True) ** 2)
    g = nx.grad(loss)

    def hvp(z):
        return nx.jvp(g, (z,), (f64_tensor(t),))[1]
    for h in (hvp, nx.jit(hvp)):
        np.testing.assert_allclose(np.asarray(h(f64_tensor(x))), want, rtol=1e-15, atol=0)


def test_hvp_of_log_softmax_rows_dominated_by_one_element():
    """The same cancellation through log_softmax and softmax: rows whose maximum dominates by
    1e9, under a cotangent of size 1e9; float64 central differences of the gradient agree."""
    x = np.array([[1e9, 0.0, -3.0], [2.0, 1e9 + 1.0, 0.5]])
    t = np.array([[0.3, -0.2, 0.7], [0.1, 0.4, -0.6]])

    def loss(z):
        return nx.sum(nx.log_softmax(z, axis=-1) * nx.softmax(z, axis=-1)
                      * nx.sum(z, axis=-1, keepdims=True))
    g = nx.grad(loss)
    got = np.asarray(nx.jvp(g, (f64_tensor(x),), (f64_tensor(t),))[1])
    jitted = np.asarray(nx.jit(lambda z: nx.jvp(g, (z,), (f64_tensor(t),))[1])(f64_tensor(x)))
    h = 1e-3
    fd = (np.asarray(g(f64_tensor(x + h * t))) - np.asarray(g(f64_tensor(x - h * t)))) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, jitted, rtol=1e-12, atol=1e-12)

def _mlp(params, x, y):
    h = nx.tanh(x @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    return -nx.mean(nx.sum(nx.log_softmax(logits) * y, axis=-1))


def _mlp_data(rng):
    params = {"W1": f64_tensor(rng.standard_normal((3, 4)) * 0.5),
              "b1": f64_tensor(rng.standard_normal(4) * 0.1),
              "W2": f64_tensor(rng.standard_normal((4, 2)) * 0.5), "b2": f64_tensor(np.zeros(2))}
    x = f64_tensor(rng.standard_normal((5, 3)))
    y = f64_tensor(np.eye(2)[rng.integers(0, 2, 5)])
    return params, x, y


def test_mlp_hessian_matches_finite_differences():
    rng = np.random.default_rng(0)
    params, x, y = _mlp_data(rng)
    w1 = params["W1"]
    f = lambda w: _mlp(dict(params, W1=w), x, y)  # noqa: E731
    H = np.asarray(nx.hessian(f)(w1)).reshape(12, 12)
    np.testing.assert_allclose(H, _fd_hessian(f, np.asarray(w1)), atol=1e-6)
    # the full hessian over a pytree of parameters: blocks in a nested dict
    Hp = nx.hessian(lambda p: _mlp(p, x, y))(params)
    np.testing.assert_allclose(np.asarray(Hp["W1"]["W1"]).reshape(12, 12), H, atol=1e-12)
    assert Hp["W2"]["b1"].shape == (4, 2, 4)
    np.testing.assert_allclose(np.asarray(Hp["W2"]["b1"]),
                               np.transpose(np.asarray(Hp["b1"]["W2"]), (1, 2, 0)), atol=1e-12)


def test_mlp_grad_of_grad_and_hvp():
    rng = np.random.default_rng(1)
    params, x, y = _mlp_data(rng)
    v = {k: f64_tensor(rng.standard_normal(p.shape)) for k, p in params.items()}
    loss = lambda p: _mlp(p, x, y)  # noqa: E731
    hv_fwd = nx.hvp(loss, (params,), (v,))[1]
    # reverse over reverse: grad of <grad(loss), v>
    hv_rev = nx.grad(lambda p: sum(nx.sum(g * v[k]) for k, g in nx.grad(loss)(p).items()))(params)
    # forward over forward: directional second derivative
    vv = nx.jvp(lambda p: nx.jvp(loss, (p,), (v,))[1], (params,), (v,))[1]
    for k in params:
        np.testing.assert_allclose(np.asarray(hv_fwd[k]), np.asarray(hv_rev[k]), atol=1e-12)
    quad = sum(float(nx.sum(hv_fwd[k] * v[k])) for k in params)
    np.testing.assert_allclose(float(vv), quad, rtol=1e-10)
    # and against finite differences of the gradient along v
    eps = 1e-5
    gp = nx.grad(loss)({k: params[k] + eps * v[k] for k in params})
    gm = nx.grad(loss)({k: params[k] - eps * v[k] for k in params})
    for k in params:
        np.testing.assert_allclose(np.asarray(hv_fwd[k]),
                                   (np.asarray(gp[k]) - np.asarray(gm[k])) / (2 * eps), atol=1e-7)


# -- perturbation confusion and combinations ----------------------------------------------------

@pytest.mark.parametrize("x", [0.0, 1.0, 3.5, -2.0])
def test_perturbation_confusion(x):
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1, whatever x is
    f = lambda x: x * nx.grad(lambda y: x + y)(f64_tensor(1.0))  # noqa: E731
    assert float(nx.grad(f)(f64_tensor(x))) == 1.0
    fj = lambda x: x * nx.jvp(lambda y: x + y, (f64_tensor(1.0),), (f64_tensor(1.0),))[1]  # noqa: E731
    assert float(nx.jvp(fj, (f64_tensor(x),), (f64_tensor(1.0),))[1]) == 1.0
    assert float(nx.grad(fj)(f64_tensor(x))) == 1.0
    assert float(nx.jvp(f, (f64_tensor(x),), (f64_tensor(1.0),))[1]) == 1.0


def test_perturbation_confusion_nonlinear():
    # d/dx [ x * d/dy (x * y) ] at y = 2 is d/dx [x * x] = 2 x
    f = lambda x: x * nx.grad(lambda y: x * y)(f64_tensor(2.0))  # noqa: E731
    assert float(nx.grad(f)(f64_tensor(3.0))) == 6.0
    g = lambda x: x * nx.jvp(lambda y: x * y, (f64_tensor(2.0),), (f64_tensor(1.0),))[1]  # noqa: E731
    assert float(nx.jvp(g, (f64_tensor(3.0),), (f64_tensor(1.0),))[1]) == 6.0


def test_all_combinations_of_two_transforms():
    f = lambda x: nx.sum(nx.exp(nx.sin(x)) * x)  # noqa: E731
    x = f64_tensor([0.3, -0.7])
    H = np.asarray(nx.hessian(f)(x))
    v = f64_tensor([1.0, 2.0])
    jvp = lambda g: lambda x: nx.jvp(g, (x,), (v,))[1]  # noqa: E731
    np.testing.assert_allclose(np.asarray(jvp(nx.grad(f))(x)), H @ [1, 2], atol=1e-12)
    np.testing.assert_allclose(np.asarray(nx.grad(jvp(f))(x)), H @ [1, 2], atol=1e-12)
    np.testing.assert_allclose(np.asarray(nx.jacrev(nx.grad(f))(x)), H, atol=1e-12)
    np.testing.assert_allclose(np.asarray(nx.jacfwd(nx.jacfwd(f))(x)), H, atol=1e-12)
    np.testing.assert_allclose(np.asarray(nx.jacrev(nx.jacfwd(f))(x)), H, atol=1e-12)
    np.testing.assert_allclose(float(jvp(jvp(f))(x)), np.array([1, 2]) @ H @ [1, 2], atol=1e-12)
    _, lin = nx.linearize(nx.grad(f), x)
    np.testing.assert_allclose(np.asarray(lin(v)), H @ [1, 2], atol=1e-12)
    g = nx.grad(lambda x: nx.linearize(f, x)[1](v))
    np.testing.assert_allclose(np.asarray(g(x)), H @ [1, 2], atol=1e-12)


def test_deep_nesting():
    f = nx.sin
    for _ in range(6):
        f = nx.grad(f)
    np.testing.assert_allclose(float(f(f64_tensor(0.3))), -np.sin(0.3), rtol=1e-12)


def test_second_derivatives_use_primal_output_rules():
    # exp2, sqrt and reduce_max rules use their primal output: outer levels must see it
    x = f64_tensor(0.7)
    np.testing.assert_allclose(float(nx.grad(nx.grad(nx.exp2))(x)), np.log(2) ** 2 * 2 ** 0.7)
    np.testing.assert_allclose(float(nx.grad(nx.grad(nx.sqrt))(x)), -0.25 * 0.7 ** -1.5)
    g = nx.grad(nx.grad(lambda x: nx.max(x * x)))
    np.testing.assert_allclose(float(g(x)), 2.0)


def test_mlp_second_derivative_analytic():
    # loss = 0.5 * sum((tanh(x W1) W2 - y)^2): its Hessian in W2 is kron(h^T h, I)
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    W1, W2 = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    h = np.tanh(x @ W1)
    loss = lambda w2: 0.5 * nx.sum(  # noqa: E731
        (nx.tanh(f64_tensor(x) @ f64_tensor(W1)) @ w2 - f64_tensor(y)) ** 2)
    H = np.asarray(nx.hessian(loss)(f64_tensor(W2))).reshape(8, 8)
    np.testing.assert_allclose(H, np.kron(h.T @ h, np.eye(2)), atol=1e-12)
    V = rng.standard_normal((4, 2))
    gg = nx.grad(lambda w: nx.sum(nx.grad(loss)(w) * f64_tensor(V)))(f64_tensor(W2))
    np.testing.assert_allclose(np.asarray(gg), h.T @ h @ V, atol=1e-12)
    # and in W1, against the analytic gradient differentiated by finite differences
    def analytic_grad_w1(w1):
        a = np.tanh(x @ w1)
        r = a @ W2 - y
        return x.T @ ((r @ W2.T) * (1 - a * a))
    g = nx.grad(lambda w1: 0.5 * nx.sum(
        (nx.tanh(f64_tensor(x) @ w1) @ f64_tensor(W2) - f64_tensor(y)) ** 2))
    np.testing.assert_allclose(np.asarray(g(f64_tensor(W1))), analytic_grad_w1(W1), atol=1e-12)
    H1 = np.asarray(nx.jacfwd(g)(f64_tensor(W1))).reshape(12, 12)
    eps, fd = 1e-6, np.zeros((12, 12))
    for k in range(12):
        e = np.zeros(12)
        e[k] = eps
        fd[:, k] = (analytic_grad_w1(W1 + e.reshape(3, 4))
                    - analytic_grad_w1(W1 - e.reshape(3, 4))).ravel() / (2 * eps)
    np.testing.assert_allclose(H1, fd, atol=1e-7)


# -- front-end functions are compositions of primitives: differentiable to second order ----------

def _front_end_cases():
    rng = np.random.default_rng(5)
    a = rng.uniform(0.1, 0.9, (3, 4))
    cases = [
        ("softplus", lambda a: nx.softplus(a * 4.0 - 2.0), (a,)),
        ("sigmoid", nx.sigmoid, (a,)),
        ("relu", lambda a: nx.relu(a - 0.5), (a,)),
        ("abs", lambda a: nx.abs(a - 0.5), (a,)),
        ("var_std", lambda a: nx.var(a, 1) + nx.std(a), (a,)),
        ("log_softmax", lambda a: nx.log_softmax(a, axis=0), (a,)),
        ("clip_minimum", lambda a: nx.clip(a, 0.3, 0.6) + nx.minimum(a, 0.5), (a,)),
        ("tan", nx.tan, (a,)),
        ("min_cummin", lambda a: nx.min(a, 0) + nx.sum(nx.cummin(a, 1), 1)[:, None][0], (a,)),
        ("getitem", lambda a: a[1:, ::-2][None] * a[0, 1], (a,)),
        ("stack_split", lambda a: nx.stack(nx.split(a, 2, axis=1), axis=0) ** 2, (a,)),
        ("outer_dot", lambda a: nx.outer(a[0], a[1]) + nx.dot(a, a.T)[0, 0], (a,)),
    ]
    if hasattr(nx, "conv2d"):
        cases.append(("conv2d", lambda x, w: nx.conv2d(x, w, padding=1),
                      (rng.standard_normal((2, 2, 4, 4)), rng.standard_normal((3, 2, 3, 3)))))
    if hasattr(nx, "einsum"):
        cases.append(("einsum", lambda a, b: nx.einsum("ij,jk->ik", a, b),
                      (a, rng.standard_normal((4, 2)))))
    if hasattr(nx, "take_along_axis"):
        idx = nx.asarray(np.array([[0, 2], [1, 1], [3, 0]]))
        cases.append(("take_along_axis", lambda a: nx.take_along_axis(a, idx, 1), (a,)))
        cases.append(("advanced_getitem", lambda a: a[nx.asarray(np.array([2, 0, 2]))], (a,)))
        cases.append(("at_add_set", lambda a, v: a.at[1:, 2].add(v).at[0, 1].set(v[0] * 2.0),
                      (a, rng.standard_normal(2))))
    return cases


@pytest.mark.parametrize("name,f,args", _front_end_cases(), ids=lambda c: c if isinstance(c, str)
                         else "")
def test_front_end_functions_second_order(name, f, args):
    nx.check_grads(f, tuple(f64_tensor(a) for a in args), order=2)
