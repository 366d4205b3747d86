"""Values that leave a derivative silently (issue 26): Python numbers of differentiated values,
ranges with traced endpoints, lax.cond batched per example, rules kinked at ties or losing
digits in tails, 0-d results.

Expected values come from NumPy, analytic formulas, float64 finite differences, mpmath
(pinned literals) or JAX 0.10.2 (pinned literals, marked as such)."""
import math

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import lax
from nx_rune.errors import ConcretizationTypeError, DerivativeConversionError
from nx_rune.scipy import special as sp


def f64(x):
    return nx.asarray(np.asarray(x, dtype=np.float64))


def f32(x):
    return nx.asarray(np.asarray(x, dtype=np.float32))


def fd(f, x, h=1e-6):
    """Central finite difference of a float64 NumPy function."""
    return (f(x + h) - f(x - h)) / (2 * h)


# -- Python numbers of differentiated values -----------------------------------------------------

_LOSSY = {
    "float": lambda x: float(x) * x,
    "complex": lambda x: complex(x).real * x,
    "item": lambda x: x.item() * x,
    "tolist": lambda x: nx.asarray(x.tolist()) * x,
    "float of a result": lambda x: float(nx.sin(x)) * x,
}

_TRANSFORMS = {
    "grad": lambda f, x: nx.grad(f)(x),
    "jvp": lambda f, x: nx.jvp(f, (x,), (f64(1.0),)),
    "vjp": lambda f, x: nx.vjp(f, x),
    "hessian": lambda f, x: nx.hessian(f)(x),
    "jacfwd": lambda f, x: nx.jacfwd(f)(x),
    "jacrev": lambda f, x: nx.jacrev(f)(x),
    "value_and_grad": lambda f, x: nx.value_and_grad(f)(x),
}


@pytest.mark.parametrize("how", sorted(_LOSSY))
@pytest.mark.parametrize("transform", sorted(_TRANSFORMS))
def test_python_number_of_a_differentiated_value_raises(how, transform):
    # nx.grad(lambda x: float(x) * x)(2.0) gave 2.0 (the derivative through float(x) was
    # dropped); JAX and autograd raise
    with pytest.raises(DerivativeConversionError) as info:
        _TRANSFORMS[transform](_LOSSY[how], f64(2.0))
    assert isinstance(info.value, ConcretizationTypeError) and isinstance(info.value, TypeError)
    msg = str(info.value)
    assert "stop_gradient" in msg and ("grad" in msg or "jvp" in msg or "jac" in msg)


def test_the_error_names_the_transformation():
    with pytest.raises(DerivativeConversionError, match=r"float\(\) of a value differentiated "
                                                        r"by jvp"):
        nx.jvp(lambda x: float(x) * x, (f64(2.0),), (f64(1.0),))
    with pytest.raises(DerivativeConversionError, match=r"item\(\) of a value differentiated "
                                                        r"by grad"):
        nx.grad(lambda x: x.item() * x)(f64(2.0))


def test_float32_and_complex_values_raise_too():
    with pytest.raises(DerivativeConversionError):
        nx.grad(lambda x: float(x) * x)(f32(2.0))
    with pytest.raises(DerivativeConversionError):
        nx.grad(lambda z: complex(z).real * nx.real(z), holomorphic=False)(
            nx.asarray(np.complex128(1 + 2j)))


def test_an_outer_derivative_is_not_lost_either():
    # the inner grad is done (its value is a constant to it), the outer one still runs
    def inner(x):
        return nx.grad(lambda y: y * y)(x)
    with pytest.raises(DerivativeConversionError):
        nx.grad(lambda x: float(inner(x)) * x)(f64(2.0))


def test_values_that_lose_no_derivative_convert():
    # as in JAX: comparisons, bool(), int() (piecewise constant: derivative 0 wherever it
    # exists) and indexing read the concrete value under grad; so does float() of a value
    # no derivative flows through (stop_gradient, an integer or bool value, a constant)
    def f(x):
        y = x * 2.0 if x > 0 else -x
        if bool(x < 10) and int(x) == 2:
            y = y * 3.0
        y = y + float(x > 0) * x + float(nx.stop_gradient(x)) * x
        k = nx.asarray(1)
        return y + nx.arange(5.0)[k] * x + float(nx.sin(f64(1.0))) * x
    # 2 * 3 + 1 + 2 + 1 + sin(1)
    np.testing.assert_allclose(nx.grad(f)(f64(2.0)).numpy(), 10.0 + math.sin(1.0))
    np.testing.assert_allclose(nx.jvp(f, (f64(2.0),), (f64(1.0),))[1].numpy(),
                               10.0 + math.sin(1.0))


def test_formatting_and_printing_a_differentiated_value_works():
    seen = []

    def f(x):
        seen.append(f"{x:.3f}")
        seen.append(repr(x))
        return x * x
    nx.grad(f)(f64(2.0))
    assert seen[0] == "2.000" and "2." in seen[1]


def test_float_inside_no_grad_is_a_constant_by_request():
    def g(x):
        with nx.no_grad():
            s = float(x)        # as x * 1.0 there: a constant, no derivative tracked
        return x * s
    np.testing.assert_allclose(nx.grad(g)(f64(2.0)).numpy(), 2.0)


def test_float_in_a_thread_without_the_transformation_still_raises():
    import threading
    seen = []

    def f(x):
        def work():
            try:
                seen.append(float(x))
            except DerivativeConversionError as e:
                seen.append(e)
        th = threading.Thread(target=work)
        th.start()
        th.join()
        return x * x
    nx.grad(f)(f64(2.0))
    assert isinstance(seen[0], DerivativeConversionError)


def test_a_finished_transformation_value_converts():
    leak = []
    nx.grad(lambda x: (leak.append(x * 3.0), x * x)[1])(f64(2.0))
    assert float(leak[0]) == 6.0 and leak[0].item() == 6.0 and leak[0].tolist() == 6.0


def test_jit_and_vmap_still_raise_concretization_errors():
    with pytest.raises(ConcretizationTypeError):
        nx.jit(lambda x: float(x) * x)(f64(2.0))
    with pytest.raises(ConcretizationTypeError):
        nx.vmap(lambda x: float(x) * x)(f64([1.0, 2.0]))
    with pytest.raises(ConcretizationTypeError):
        nx.vmap(lambda x: x * 2 if x > 0 else x)(f64([1.0, 2.0]))


def test_numpy_conversion_still_raises():
    from nx_rune.errors import TracerArrayConversionError
    with pytest.raises(TracerArrayConversionError):
        nx.grad(lambda x: np.asarray(x) * x)(f64(2.0))


# -- ranges with traced endpoints ------------------------------------------------------------------

@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("which", ["start", "stop"])
def test_linspace_derivative_matches_finite_differences(which, endpoint):
    def np_f(v):
        a, b = (v, 3.0) if which == "start" else (0.5, v)
        return float(np.sum(np.linspace(a, b, 7, endpoint=endpoint) ** 2))

    def nx_f(v):
        a, b = (v, 3.0) if which == "start" else (0.5, v)
        return nx.sum(nx.linspace(a, b, 7, endpoint=endpoint, dtype=np.float64) ** 2)
    np.testing.assert_allclose(nx.grad(nx_f)(f64(1.7)).numpy(), fd(np_f, 1.7), rtol=1e-7)
    np.testing.assert_allclose(nx.jvp(nx_f, (f64(1.7),), (f64(1.0),))[1].numpy(),
                               fd(np_f, 1.7), rtol=1e-7)
    # linear in the endpoints: the second derivative of the sum of squares is 2 sum(w**2)
    k = np.arange(7) / (6 if endpoint else 7)
    w = (1 - k) if which == "start" else k
    np.testing.assert_allclose(nx.hessian(nx_f)(f64(1.7)).numpy(), 2 * np.sum(w * w),
                               rtol=1e-12)


def test_linspace_derivative_was_zero_before():
    # the repro: linspace read float(stop), so this was 0
    g = nx.grad(lambda s: nx.sum(nx.linspace(0.0, s, 5)))(f64(2.0))
    np.testing.assert_allclose(g.numpy(), 0.0 + 0.25 + 0.5 + 0.75 + 1.0, rtol=1e-6)


def test_linspace_of_traced_endpoints_keeps_numpys_values():
    for v in (0.1, 1 / 3, 2.7, -5.5, 1e6):
        for dt, conv in ((np.float32, f32), (np.float64, f64)):
            want = nx.linspace(0.1, float(dt(v)), 11, dtype=dt).numpy()
            got = nx.jvp(lambda s: nx.linspace(0.1, s, 11, dtype=dt), (conv(v),),
                         (conv(1.0),))[0].numpy()
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(nx.jit(lambda s: nx.linspace(0.1, s, 11, dtype=dt))(
                conv(v)).numpy(), want)


def test_linspace_traced_array_endpoints_num_one_and_vmap():
    a, b = np.array([0.0, 1.0]), np.array([2.0, -1.0])
    got = nx.jit(lambda a, b: nx.linspace(a, b, 4, dtype=np.float64))(f64(a), f64(b))
    np.testing.assert_array_equal(got.numpy(), np.linspace(a, b, 4))
    got = nx.vmap(lambda s: nx.linspace(0.0, s, 3, dtype=np.float64))(f64([1.0, 2.0]))
    np.testing.assert_array_equal(got.numpy(), np.stack([np.linspace(0, 1, 3),
                                                         np.linspace(0, 2, 3)]))
    g = nx.grad(lambda s: nx.sum(nx.linspace(s, 5.0, 1, dtype=np.float64)))(f64(2.0))
    assert float(g) == 1.0
    g = nx.grad(lambda s: nx.sum(nx.linspace(s, 5.0, 0, dtype=np.float64)))(f64(2.0))
    assert float(g) == 0.0


@pytest.mark.parametrize("which", ["start", "step"])
def test_arange_derivative_matches_finite_differences(which):
    def np_f(v):
        a, s = (v, 0.5) if which == "start" else (0.2, v)
        return float(np.sum(np.arange(a, 5.0, s) ** 2))

    def nx_f(v):
        a, s = (v, 0.5) if which == "start" else (0.2, v)
        return nx.sum(nx.arange(a, 5.0, s, dtype=np.float64) ** 2)
    x = 1.7 if which == "start" else 0.7
    np.testing.assert_allclose(nx.grad(nx_f)(f64(x)).numpy(), fd(np_f, x), rtol=1e-7)
    # the values are NumPy's
    a, s = (1.7, 0.5) if which == "start" else (0.2, 0.7)
    out = nx.jvp(lambda v: nx.arange(v, 5.0, s) if which == "start" else nx.arange(a, 5.0, v),
                 (f64(x),), (f64(1.0),))[0]
    np.testing.assert_array_equal(out.numpy(), nx.arange(a, 5.0, s).numpy())


def test_arange_of_a_traced_stop_has_zero_derivative_and_needs_a_value_under_jit():
    g = nx.grad(lambda s: nx.sum(nx.arange(0.0, s, 0.5)))(f64(2.2))
    assert float(g) == 0.0
    with pytest.raises(ConcretizationTypeError, match="arange: stop"):
        nx.jit(lambda s: nx.arange(0.0, s, 1.0))(f64(3.0))


# -- vmap of lax.cond with a per-example predicate, differentiated ------------------------------

def _cond_sqrt_log(x):
    return lax.cond(x > 0, lambda v: nx.sqrt(v) * nx.log(v), lambda v: v * v, x)


def _cond_log(x):
    return lax.cond(x > 0, lambda v: nx.log(v), lambda v: 3 * v, x)


def _cond_recip(x):
    return lax.cond(x < 0, lambda v: 1.0 / v + v, lambda v: nx.sqrt(v) * 2.0, x)


_X = np.array([-1.0, 0.0, 2.0, 4.0])
_XR = np.array([-2.0, -0.5, 0.25, 4.0])
# golden values: jax 0.10.2, jax.vmap(jax.grad(f)) and jax.vmap(jax.grad(jax.grad(f)))
_CASES = {
    "sqrt_log": (_cond_sqrt_log, _X, [-2.0, 0.0, 0.9521713170536843, 0.8465735902799727],
                 [2.0, 2.0, -0.061266133966784236, -0.04332169878499658]),
    "log": (_cond_log, _X, [3.0, 3.0, 0.5, 0.25], [0.0, 0.0, -0.25, -0.0625]),
    # analytic: 1 - 1/x**2 and 2/x**3 for x < 0, 1/sqrt(x) and -x**-1.5/2 otherwise
    "recip": (_cond_recip, _XR, np.where(_XR < 0, 1 - 1 / _XR ** 2, 1 / np.sqrt(np.abs(_XR))),
              np.where(_XR < 0, 2 / _XR ** 3, -0.5 * np.abs(_XR) ** -1.5)),
}


def _sum_of(fn):
    return lambda x: nx.sum(fn(x))


_ORDERS = {
    "vmap(grad(jit))": lambda f: nx.vmap(nx.grad(nx.jit(f))),
    "vmap(jit(grad))": lambda f: nx.vmap(nx.jit(nx.grad(f))),
    "jit(vmap(grad))": lambda f: nx.jit(nx.vmap(nx.grad(f))),
    "grad(vmap(jit))": lambda f: nx.grad(_sum_of(nx.vmap(nx.jit(f)))),
    "grad(jit(vmap))": lambda f: nx.grad(_sum_of(nx.jit(nx.vmap(f)))),
    "jit(grad(vmap))": lambda f: nx.jit(nx.grad(_sum_of(nx.vmap(f)))),
    "vmap(grad)": lambda f: nx.vmap(nx.grad(f)),
    "grad(vmap)": lambda f: nx.grad(_sum_of(nx.vmap(f))),
}


@pytest.mark.parametrize("order", sorted(_ORDERS))
@pytest.mark.parametrize("case", sorted(_CASES))
def test_vmapped_cond_branch_not_taken_contributes_zero(order, case):
    fn, x, want, _ = _CASES[case]
    got = _ORDERS[order](fn)(f64(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("case", sorted(_CASES))
def test_vmapped_cond_second_derivative_and_forward_mode(case):
    fn, x, want1, want2 = _CASES[case]
    np.testing.assert_allclose(nx.vmap(nx.grad(nx.grad(fn)))(f64(x)).numpy(), want2,
                               rtol=1e-12)
    np.testing.assert_allclose(nx.grad(_sum_of(nx.vmap(nx.grad(fn))))(f64(x)).numpy(), want2,
                               rtol=1e-12)
    t = nx.jvp(nx.vmap(fn), (f64(x),), (f64(np.ones_like(x)),))[1]
    np.testing.assert_allclose(t.numpy(), want1, rtol=1e-12)
    t = nx.jit(lambda x: nx.jvp(nx.vmap(fn), (x,), (nx.ones_like(x),))[1])(f64(x))
    np.testing.assert_allclose(t.numpy(), want1, rtol=1e-12)


def test_vmapped_cond_gradient_through_several_operands_and_a_pytree():
    def f(x, y):
        return lax.cond(x > y, lambda a: nx.log(a[0] - a[1]), lambda a: a[0] * a[1], (x, y))
    x, y = np.array([3.0, 1.0]), np.array([1.0, 2.0])
    gx, gy = nx.vmap(nx.grad(f, argnums=(0, 1)))(f64(x), f64(y))
    np.testing.assert_allclose(gx.numpy(), [0.5, 2.0])
    np.testing.assert_allclose(gy.numpy(), [-0.5, 1.0])
    gx, gy = nx.grad(lambda x, y: nx.sum(nx.vmap(f)(x, y)), argnums=(0, 1))(f64(x), f64(y))
    np.testing.assert_allclose(gx.numpy(), [0.5, 2.0])
    np.testing.assert_allclose(gy.numpy(), [-0.5, 1.0])


# -- rules kinked at ties and tails ----------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_logaddexp_second_derivative_at_ties(dt):
    x = nx.asarray(dt(1.0))
    h = nx.grad(nx.grad(lambda a: nx.logaddexp(a, 1.0)))(x)
    np.testing.assert_allclose(h.numpy(), 0.25, rtol=1e-6)
    h = nx.grad(nx.grad(lambda a: nx.logaddexp2(a, 1.0)))(x)
    np.testing.assert_allclose(h.numpy(), math.log(2) / 4, rtol=1e-6)
    h = nx.jit(nx.grad(nx.grad(lambda a: nx.logaddexp(a, 1.0))))(x)
    np.testing.assert_allclose(h.numpy(), 0.25, rtol=1e-6)
    h = nx.jvp(nx.grad(lambda a: nx.logaddexp2(1.0, a)), (x,), (nx.asarray(dt(1.0)),))[1]
    np.testing.assert_allclose(h.numpy(), math.log(2) / 4, rtol=1e-6)
    # the mixed derivative at the tie: -1/4
    h = nx.grad(lambda b: nx.grad(lambda a: nx.logaddexp(a, b))(x))(nx.asarray(dt(1.0)))
    np.testing.assert_allclose(h.numpy(), -0.25, rtol=1e-6)


def test_logaddexp_derivatives_far_from_ties_and_at_infinities():
    # second derivative s (1 - s), s = expit(a - b): exact analytic values, no inf / inf
    for a, b in ((0.0, 1000.0), (30.0, 1.0), (-745.0, 0.0)):
        s = 1 / (1 + math.exp(b - a)) if b - a < 700 else 0.0
        want = s * (1 / (1 + math.exp(a - b)) if a - b < 700 else 0.0)
        got = nx.grad(nx.grad(lambda v: nx.logaddexp(v, b)))(f64(a)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(nx.grad(lambda a: nx.logaddexp(a, a))(f64(np.inf)).numpy(), 1.0)
    np.testing.assert_allclose(nx.grad(lambda a: nx.logaddexp(a, np.inf))(f64(np.inf)).numpy(),
                               0.5)
    np.testing.assert_allclose(
        nx.jit(nx.grad(lambda a: nx.logaddexp(a, -np.inf)))(f64(-np.inf)).numpy(), 0.5)


def test_expit_derivative_keeps_its_digits_in_the_tail():
    # expit'(30) = e**-30 / (1 + e**-30)**2; ans (1 - ans) was 1e-3 off in float64, 0 in float32
    want = math.exp(-30) / (1 + math.exp(-30)) ** 2
    np.testing.assert_allclose(nx.grad(sp.expit)(f64(30.0)).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(nx.grad(sp.expit)(f32(30.0)).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(nx.grad(lambda a: nx.logaddexp(1.0, a))(f32(-29.0)).numpy(),
                               math.exp(-30) / (1 + math.exp(-30)), rtol=1e-5)


# log_ndtr: x -> (d/dx, d2/dx2), from mpmath at 60 digits (r = pdf/cdf, r' = -r (x + r))
_LOG_NDTR = {
    -1e5: (100000.00001, -0.9999999999),
    -1e3: (1000.000999998, -0.99999900000599995),
    -50.0: (50.01998403190564, -0.9996009568131961),
    -20.0: (20.049753068527851, -0.99753673838494784),
    -6.0: (6.1584826045445989, -0.97601236321083323),
    -5.0: (5.1865039671258421, -0.96730356538288777),
    -4.5: (4.7043198448277324, -0.96118590071522447),
    -3.0: (3.2830986549304365, -0.92944081321473188),
    0.0: (0.79788456080286536, -0.63661977236758134),
    3.0: (0.0044378390421256638, -0.013333211541740806),
    8.0: (5.0522710835368954e-15, -4.0418168668295189e-14),
}


@pytest.mark.parametrize("x", sorted(_LOG_NDTR))
def test_log_ndtr_first_and_second_derivatives(x):
    d1, d2 = _LOG_NDTR[x]
    np.testing.assert_allclose(nx.grad(sp.log_ndtr)(f64(x)).numpy(), d1, rtol=1e-12)
    np.testing.assert_allclose(nx.grad(nx.grad(sp.log_ndtr))(f64(x)).numpy(), d2, rtol=1e-11)
    np.testing.assert_allclose(nx.grad(nx.grad(sp.log_ndtr))(f32(x)).numpy(), d2, rtol=2e-5)


def test_log_ndtr_derivatives_batched_and_jitted():
    xs = sorted(_LOG_NDTR)
    want = [_LOG_NDTR[x][1] for x in xs]
    h = nx.grad(nx.grad(sp.log_ndtr))
    np.testing.assert_allclose(nx.vmap(h)(f64(xs)).numpy(), want, rtol=1e-11)
    np.testing.assert_allclose(nx.jit(nx.vmap(h))(f64(xs)).numpy(), want, rtol=1e-11)
    t = nx.jvp(nx.grad(lambda x: nx.sum(sp.log_ndtr(x))), (f64(xs),),
               (f64(np.ones(len(xs))),))[1]
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-11)
    # a third derivative stays finite in the far tail (r'' = -r' (x + r) - r (1 + r'))
    assert np.isfinite(nx.grad(nx.grad(nx.grad(sp.log_ndtr)))(f64(-1e5)).numpy())


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_functions_written_with_max_or_where_at_ties(dt):
    # second derivatives at ties of functions whose primal takes a max / where: the kinks
    # of the pieces cancel, so they are the smooth function's values
    x = nx.asarray(dt(1.0))
    z = nx.asarray(dt(0.0))
    g2 = lambda f: nx.grad(nx.grad(f))   # noqa: E731
    tol = dict(rtol=1e-6)
    np.testing.assert_allclose(g2(nx.softplus)(z).numpy(), 0.25, **tol)
    np.testing.assert_allclose(g2(nx.sigmoid)(z).numpy(), 0.0, atol=1e-7)
    pair = lambda a: nx.stack([a, nx.ones_like(a)])   # noqa: E731
    np.testing.assert_allclose(g2(lambda a: nx.logsumexp(pair(a)))(x).numpy(), 0.25, **tol)
    np.testing.assert_allclose(g2(lambda a: sp.logsumexp(pair(a)))(x).numpy(), 0.25, **tol)
    np.testing.assert_allclose(g2(lambda a: nx.log_softmax(pair(a))[0])(x).numpy(), -0.25,
                               **tol)
    np.testing.assert_allclose(g2(lambda a: nx.softmax(pair(a))[0])(x).numpy(), 0.0,
                               atol=1e-7)
    np.testing.assert_allclose(g2(lambda a: nx.logaddexp(a, a))(x).numpy(), 0.0, atol=1e-7)
    np.testing.assert_allclose(g2(lambda a: nx.logaddexp2(a, 1.0))(x).numpy(),
                               math.log(2) / 4, **tol)


# -- 0-d results -----------------------------------------------------------------------------------

def test_matrix_rank_is_0d_like_numpy():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    for m in (a, np.zeros((3, 3)), np.eye(3)):
        want = np.linalg.matrix_rank(m)
        for got in (nx.linalg.matrix_rank(f64(m)), nx.jit(nx.linalg.matrix_rank)(f64(m)),
                    nx.jvp(lambda x: nx.linalg.matrix_rank(x), (f64(m),),
                           (f64(np.ones_like(m)),))[0]):
            assert got.shape == () and int(got) == want
    got = nx.vmap(nx.linalg.matrix_rank)(f64(np.stack([a, np.eye(2)])))
    assert got.shape == (2,) and got.numpy().tolist() == [1, 2]


@pytest.mark.parametrize("fn", [nx.linalg.norm, nx.linalg.vector_norm,
                                lambda z: nx.linalg.norm(nx.reshape(z, (2, 2)))])
def test_norm_of_a_zero_complex_vector_is_0d_under_transformations(fn):
    z = nx.asarray(np.zeros(4, np.complex128))
    shapes = []

    def f(x):
        out = fn(x)
        shapes.append(out.shape)
        return out
    g = nx.grad(f)(z)
    np.testing.assert_array_equal(g.numpy(), np.zeros(4))
    y, t = nx.jvp(f, (z,), (nx.asarray(np.ones(4, np.complex128)),))
    assert y.shape == () and t.shape == ()
    assert shapes == [(), ()]
    assert nx.jit(fn)(z).shape == () and fn(z).shape == ()



@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complex_norm_derivative_at_zero_is_zero_under_jit_and_vmap(dtype):
    # the safe square root took its zero mask from concrete values only: under jit and vmap
    # (values unknown) the derivative at the origin was nan (eager: 0, JAX: 0)
    f = lambda x: nx.linalg.norm(x * (1 + 2j))  # noqa: E731
    zero = nx.asarray(np.zeros(3, dtype))
    y = nx.asarray(np.array([1.0, 2.0, -0.5], dtype))
    want_y = np.sqrt(5.0) * np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    tol = 1e-6 if dtype == np.float32 else 1e-12
    for g in (nx.grad(f), nx.jit(nx.grad(f))):
        np.testing.assert_array_equal(g(zero).numpy(), np.zeros(3))
        np.testing.assert_allclose(g(y).numpy(), want_y, rtol=tol)
    batched = nx.vmap(nx.grad(f))(nx.stack([y, zero]))
    np.testing.assert_allclose(batched.numpy()[0], want_y, rtol=tol)
    np.testing.assert_array_equal(batched.numpy()[1], np.zeros(3))
    assert float(nx.jit(f)(y)) == pytest.approx(np.linalg.norm(np.array([1, 2, -0.5]) * (1 + 2j)),
                                                rel=tol)

def test_vmap_of_a_batch_of_one_keeps_rule_constants_0d():
    # a rule's NumPy constant (a tie mask) for a batch of one was made (1,) per example
    g = nx.vmap(nx.grad(lambda a: nx.maximum(a, 1.0)))(f64([1.0]))
    assert g.shape == (1,) and float(g[0]) == 0.5
    g = nx.vmap(nx.grad(lambda a: nx.logaddexp(a, a)))(f64([np.inf]))
    assert g.shape == (1,) and float(g[0]) == 1.0


_SCALAR_FUNCTIONS = {
    "det": (nx.linalg.det, np.linalg.det),
    "slogdet": (lambda x: nx.linalg.slogdet(x)[1], lambda x: np.linalg.slogdet(x)[1]),
    "norm": (nx.linalg.norm, np.linalg.norm),
    "norm_nuc": (lambda x: nx.linalg.norm(x, "nuc"), lambda x: np.linalg.norm(x, "nuc")),
    "norm_2": (lambda x: nx.linalg.norm(x, 2), lambda x: np.linalg.norm(x, 2)),
    "trace": (nx.trace, np.trace),
    "sum": (nx.sum, np.sum),
    "prod": (nx.prod, np.prod),
    "mean": (nx.mean, np.mean),
    "var": (nx.var, np.var),
    "std": (nx.std, np.std),
    "max": (nx.max, np.max),
    "median": (nx.median, np.median),
    "quantile": (lambda x: nx.quantile(x, 0.3), lambda x: np.quantile(x, 0.3)),
    "logsumexp": (nx.logsumexp, lambda x: np.log(np.sum(np.exp(x)))),
    "vdot": (lambda x: nx.vdot(x, x), lambda x: np.vdot(x, x)),
    "einsum": (lambda x: nx.einsum("ij,ij->", x, x), lambda x: np.einsum("ij,ij->", x, x)),
}


@pytest.mark.parametrize("name", sorted(_SCALAR_FUNCTIONS))
def test_scalar_returning_functions_are_0d_in_every_mode(name):
    f, npf = _SCALAR_FUNCTIONS[name]
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    assert np.shape(npf(a)) == ()
    x = f64(a)
    assert f(x).shape == ()
    assert nx.jit(f)(x).shape == ()
    assert nx.jvp(f, (x,), (nx.ones_like(x),))[0].shape == ()
    assert nx.jvp(f, (x,), (nx.ones_like(x),))[1].shape == ()
    assert nx.vmap(f)(nx.stack([x, x])).shape == (2,)
    assert nx.vmap(f)(nx.stack([x])).shape == (1,)
    assert nx.grad(f)(x).shape == (2, 2)
    assert nx.vmap(nx.grad(f))(nx.stack([x])).shape == (1, 2, 2)
