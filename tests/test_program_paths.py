"""Paths the ported research programs (benchmarks/programs) made faster: logsumexp and
softmax shift by their maximum as a constant (their values and derivatives do not depend on the
shift), nx.roll is one primitive.  Values against NumPy, derivatives against closed forms."""
import numpy as np
import pytest
import scipy.special

import nx_rune as nx


def _softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [0, 1, (0, 1)])
def test_logsumexp_gradient_is_softmax(axis):
    a = np.random.default_rng(0).normal(size=(3, 4)) * 30.0
    g = nx.grad(lambda x: nx.sum(nx.logsumexp(x, axis=axis)))(nx.asarray(a))
    np.testing.assert_allclose(np.asarray(g), _softmax(a, axis), rtol=1e-13, atol=1e-300)


def test_logsumexp_hessian_and_jvp():
    a = np.array([0.3, -1.2, 2.0, 0.7])
    p = _softmax(a, 0)
    h = nx.hessian(nx.logsumexp)(nx.asarray(a))
    np.testing.assert_allclose(np.asarray(h), np.diag(p) - np.outer(p, p), atol=1e-15)
    v = np.array([1.0, -2.0, 0.5, 3.0])
    val, tan = nx.jvp(nx.logsumexp, (nx.asarray(a),), (nx.asarray(v),))
    np.testing.assert_allclose(float(val), np.log(np.exp(a).sum()), rtol=1e-15)
    np.testing.assert_allclose(float(tan), p @ v, rtol=1e-14)


def test_logsumexp_under_vmap_of_grad_matches_rows():
    a = np.random.default_rng(1).normal(size=(5, 3))
    g = nx.vmap(nx.grad(nx.logsumexp))(nx.asarray(a))
    np.testing.assert_allclose(np.asarray(g), _softmax(a, 1), rtol=1e-14)
    out = nx.vmap(lambda r: nx.logsumexp(r, keepdims=True))(nx.asarray(a))
    np.testing.assert_allclose(np.asarray(out), np.log(np.exp(a).sum(1, keepdims=True)),
                               rtol=1e-15)


def test_logsumexp_non_finite_rows():
    a = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 0.0], [np.nan, 1.0]])
    out = np.asarray(nx.logsumexp(nx.asarray(a), axis=1))
    np.testing.assert_array_equal(out, [-np.inf, np.inf, 0.0, np.nan])
    g = np.asarray(nx.grad(lambda x: nx.logsumexp(x[2]))(nx.asarray(a)))
    np.testing.assert_array_equal(g[2], [0.0, 1.0])     # exp(-inf) weighs nothing


def test_logsumexp_of_complex_is_scipys():
    # complex max is NumPy's (lexicographic) now, so the shift works on complex data too;
    # SciPy and JAX give the same value
    x = np.array([1 + 1j, 2.0, -0.5 + 3j])
    np.testing.assert_allclose(np.asarray(nx.logsumexp(nx.asarray(x))),
                               scipy.special.logsumexp(x), rtol=1e-12)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_values_and_vjp(log):
    fn = (lambda x: nx.log_softmax(x, axis=1)) if log else (lambda x: nx.softmax(x, axis=1))
    if log:   # (x - max) - log(sum(exp(x - max))): log(softmax) would lose the small ones
        ref = lambda a: (a - a.max(1, keepdims=True)) - np.log(  # noqa: E731
            np.exp(a - a.max(1, keepdims=True)).sum(1, keepdims=True))
    else:
        ref = lambda a: _softmax(a, 1)  # noqa: E731
    a = np.random.default_rng(2).normal(size=(2, 5)) * 10.0
    np.testing.assert_allclose(np.asarray(fn(nx.asarray(a))), ref(a), rtol=1e-13)
    # d/dx sum(w * log_softmax(x)) = w - p * sum(w); of softmax: p * (w - sum(w * p))
    w = np.random.default_rng(3).normal(size=(2, 5))
    g = np.asarray(nx.grad(lambda x: nx.sum(nx.asarray(w) * fn(x)))(nx.asarray(a)))
    p = _softmax(a, 1)
    if log:
        want = w - p * w.sum(1, keepdims=True)
    else:
        want = p * (w - (w * p).sum(1, keepdims=True))
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-14)


def test_softmax_row_with_inf_is_nan_as_jax():
    out = np.asarray(nx.softmax(nx.asarray(np.array([[np.inf, 1.0], [1.0, 2.0]])), axis=1))
    assert np.isnan(out[0]).all() and np.isfinite(out[1]).all()


@pytest.mark.parametrize("shift, axis", [(3, 1), (-2, 0), ((1, 2), (0, 1)), (7, None)])
def test_roll_values_gradient_and_vmap(shift, axis):
    a = np.arange(20.0).reshape(4, 5) * 0.1
    w = np.random.default_rng(4).normal(size=(4, 5))
    np.testing.assert_array_equal(np.asarray(nx.roll(nx.asarray(a), shift, axis)),
                                  np.roll(a, shift, axis))
    # sum(w * roll(x)) = sum(roll(w, -shift) * x)
    g = nx.grad(lambda x: nx.sum(nx.asarray(w) * nx.roll(x, shift, axis)))(nx.asarray(a))
    neg = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    np.testing.assert_allclose(np.asarray(g), np.roll(w, neg, axis), rtol=1e-15)
    if axis is not None and not isinstance(axis, tuple):
        b = np.stack([a, 2 * a])
        out = nx.vmap(lambda x: nx.roll(x, shift, axis))(nx.asarray(b))
        np.testing.assert_array_equal(np.asarray(out), np.roll(b, shift, axis + 1))


@pytest.mark.parametrize("e", [2, 2.0, 1, 3, 0.5, -1.5, 0])
def test_power_by_a_constant_first_and_second_derivatives(e):
    a = np.array([0.5, 1.5, 2.0, 3.0])
    f = lambda x: nx.sum(x ** e)  # noqa: E731
    g = nx.grad(f)(nx.asarray(a))
    np.testing.assert_allclose(np.asarray(g), e * a ** (e - 1) if e else 0.0, rtol=1e-14)
    h = nx.hessian(f)(nx.asarray(a))
    np.testing.assert_allclose(np.asarray(h), np.diag(e * (e - 1) * a ** (e - 2.0)),
                               rtol=1e-13, atol=1e-300)
    _, t = nx.jvp(f, (nx.asarray(a),), (nx.asarray(np.ones(4)),))
    np.testing.assert_allclose(float(t), np.sum(e * a ** (e - 1)) if e else 0.0, rtol=1e-14)


def test_power_constant_exponent_at_zero_and_complex():
    g = nx.grad(lambda x: nx.sum(x ** 2 + x ** 1 + x ** 0))(nx.asarray(np.array([0.0, -1.0])))
    np.testing.assert_array_equal(np.asarray(g), [1.0, -1.0])
    z = np.array([1.0 + 2.0j, -0.5j])
    _, t = nx.jvp(lambda x: x ** 2, (nx.asarray(z),), (nx.asarray(np.ones(2, complex)),))
    np.testing.assert_allclose(np.asarray(t), 2 * z, rtol=1e-15)


def test_power_with_an_array_exponent_keeps_both_derivatives():
    a, b = np.array([0.5, 2.0]), np.array([2.0, 3.0])
    ga, gb = nx.grad(lambda x, y: nx.sum(x ** y), argnums=(0, 1))(nx.asarray(a), nx.asarray(b))
    np.testing.assert_allclose(np.asarray(ga), b * a ** (b - 1), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gb), a ** b * np.log(a), rtol=1e-14)


def test_subtract_is_one_primitive_with_numpys_values():
    a = np.array([3, 1], np.uint8)
    np.testing.assert_array_equal(np.asarray(nx.subtract(nx.asarray(a), 2)), a - np.uint8(2))
    with pytest.raises(TypeError, match="subtract"):
        nx.subtract(nx.asarray(np.array([True])), nx.asarray(np.array([False])))
    x = np.array([[1.0, -2.0], [0.5, 4.0]])
    y = np.array([0.25, 3.0])
    gx, gy = nx.grad(lambda a, b: nx.sum((a - b) ** 2) + nx.sum(1.0 - a),
                     argnums=(0, 1))(nx.asarray(x), nx.asarray(y))
    np.testing.assert_allclose(np.asarray(gx), 2 * (x - y) - 1.0, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(gy), -2 * (x - y).sum(0), rtol=1e-15)
    _, t = nx.jvp(lambda a, b: a - b, (nx.asarray(x), nx.asarray(x)),
                  (nx.asarray(np.ones((2, 2))), nx.asarray(3 * np.ones((2, 2)))))
    np.testing.assert_array_equal(np.asarray(t), -2.0)


def test_binary_ops_broadcast_zero_d_constants_and_traced_scalars():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    c = nx.asarray(np.float64(4.0))          # a concrete 0-d tensor: a constant operand
    f = lambda a, s: nx.sum(nx.logaddexp(0.0, a / 4.0) * s + a / c - s)  # noqa: E731
    ga, gs = nx.grad(f, argnums=(0, 1))(nx.asarray(x), nx.asarray(np.float64(2.0)))
    sig = 1.0 / (1.0 + np.exp(-x / 4.0))
    np.testing.assert_allclose(np.asarray(ga), sig / 4.0 * 2.0 + 0.25, rtol=1e-14)
    np.testing.assert_allclose(float(gs), np.sum(np.logaddexp(0.0, x / 4.0)) - 6.0, rtol=1e-14)
    out = nx.vmap(lambda r: r / c - 1.0)(nx.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x / 4.0 - 1.0)
    assert (nx.asarray(np.float32(2.0)) * nx.ones((2, 2), dtype=nx.float32)).dtype == np.float32


@pytest.mark.parametrize("fn, ref", [(nx.divide, np.divide), (nx.logaddexp, np.logaddexp)])
def test_float_binaries_keep_dtypes_without_promotion_and_promote_otherwise(fn, ref):
    f32 = np.array([1.0, 2.5], np.float32)
    for a, b in [(f32, 2), (f32, 0.5), (3, f32), (f32, f32)]:
        args = [nx.asarray(v) if isinstance(v, np.ndarray) else v for v in (a, b)]
        out = fn(*args)
        assert out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), ref(a, b).astype(np.float32), rtol=1e-6)
    ints = nx.asarray(np.array([1, 2], np.int32))
    assert fn(ints, 2).dtype == np.float32 and fn(ints, f32[0]).dtype != np.int32
    if fn is nx.divide:
        z = nx.asarray(np.array([1 + 1j]))
        np.testing.assert_array_equal(np.asarray(z / 2), [0.5 + 0.5j])


def test_ops_on_constants_under_transformations_compute_constants():
    from nx_rune.tensor import Tensor
    c = nx.asarray(np.arange(6.0).reshape(2, 3))
    kinds = []

    def f(x):
        k = c[1] * 2.0 + nx.roll(c, 1, axis=1)[0]      # constants only: [8, 8, 11]
        kinds.append(type(k))
        return nx.sum(x * k) + nx.sum(x * x)
    x = np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(np.asarray(nx.grad(f)(nx.asarray(x))), [8 + 2, 8 - 2, 11 + 1])
    _, t = nx.jvp(f, (nx.asarray(x),), (nx.asarray(np.ones(3)),))
    np.testing.assert_allclose(float(t), 27.0 + 2 * x.sum())
    np.testing.assert_allclose(np.asarray(nx.hessian(f)(nx.asarray(x))), 2 * np.eye(3))
    assert kinds and all(k is Tensor for k in kinds)
    out = nx.vmap(lambda r: r * (c[0] + 1.0))(nx.asarray(np.ones((4, 3))))
    np.testing.assert_array_equal(np.asarray(out), np.tile([1.0, 2.0, 3.0], (4, 1)))
    with nx.no_grad():
        assert type(c[0] + c[1]) is Tensor
