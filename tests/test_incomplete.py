"""nx.scipy.special gammainc / gammaincc / betainc and nx.scipy.stats gamma / beta cdf, sf,
logcdf, logsf: values against SciPy's, derivatives in x against the densities and finite
differences, derivatives in the shape parameters against Richardson-extrapolated central
differences of SciPy's values (of the smaller of the two tails, so that the difference keeps
its relative precision) and against pinned values of mpmath's numerical derivatives
(mpmath.diff of mpmath.gammainc / betainc at 40 digits), bad input."""
import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as ss

import nx_rune as nx
from nx_rune._kernels.incomplete import betainc_dab, gammainc_da

S = nx.scipy.special
ST = nx.scipy.stats


def f64(v):
    return nx.asarray(np.asarray(v, dtype=np.float64))


def _fd(f, v, rel=1e-4):
    """df/dv by central differences, Richardson-extrapolated (steps h and h/2): error
    O(h^4) + O(eps / h)."""
    h = rel * np.maximum(np.abs(v), 1.0)
    d1 = (f(v + h) - f(v - h)) / (2 * h)
    d2 = (f(v + h / 2) - f(v - h / 2)) / h
    return (4 * d2 - d1) / 3


A_GRID = np.array([0.05, 0.3, 1.0, 2.5, 7.0, 30.0, 150.0])
X_FACTORS = np.array([0.02, 0.3, 0.8, 1.0, 1.3, 2.5, 6.0])


def _gamma_points():
    a = np.repeat(A_GRID, len(X_FACTORS))
    x = a * np.tile(X_FACTORS, len(A_GRID)) + np.tile([0.01, 0.1, 0.0, 0.0, 0.2, 0.0, 1.0],
                                                      len(A_GRID))
    return a, x


def _beta_points():
    rng = np.random.default_rng(3)
    a = np.concatenate([[0.1, 0.5, 1.0, 2.0, 5.0, 40.0, 0.3, 200.0], rng.uniform(0.2, 20, 24)])
    b = np.concatenate([[0.4, 0.5, 1.0, 3.0, 0.7, 60.0, 25.0, 150.0], rng.uniform(0.2, 20, 24)])
    x = np.concatenate([[0.2, 0.5, 0.7, 0.1, 0.95, 0.42, 0.01, 0.58],
                        rng.uniform(0.02, 0.98, 24)])
    return a, b, x


# -- values ----------------------------------------------------------------------------------

EDGE_A = [0.0, -1.0, 0.5, 1.0, 3.0, np.inf, np.nan]
EDGE_X = [0.0, -0.5, 0.3, 2.0, 50.0, np.inf, np.nan]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_gamma_values_are_scipys(name, dtype):
    a, x = np.meshgrid(np.array(EDGE_A, dtype), np.array(EDGE_X, dtype))
    ours = np.asarray(getattr(S, name)(nx.asarray(a), nx.asarray(x)))
    ref = getattr(sc, name)(a, x)
    assert ours.dtype == dtype
    np.testing.assert_allclose(ours, ref, rtol=2e-6 if dtype == np.float32 else 1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_betainc_values_are_scipys(dtype):
    a, b, x = np.meshgrid(np.array([0.0, -1.0, 0.5, 2.0, 30.0, np.nan], dtype),
                          np.array([0.0, 0.5, 1.0, 4.0, np.inf], dtype),
                          np.array([-0.1, 0.0, 0.25, 0.9, 1.0, 1.5, np.nan], dtype))
    ours = np.asarray(S.betainc(nx.asarray(a), nx.asarray(b), nx.asarray(x)))
    assert ours.dtype == dtype
    np.testing.assert_allclose(ours, sc.betainc(a, b, x),
                               rtol=2e-6 if dtype == np.float32 else 1e-15)


def test_broadcasting_and_promotion():
    out = S.gammainc(f64([[1.0], [2.0]]), nx.asarray(np.array([0.5, 1.0, 3.0], np.float32)))
    assert out.shape == (2, 3) and out.dtype == nx.float64
    out = S.betainc(2.0, f64([1.0, 3.0]), 0.5)
    np.testing.assert_allclose(np.asarray(out), sc.betainc(2.0, [1.0, 3.0], 0.5), rtol=1e-15)


# -- derivatives in the shape parameters -------------------------------------------------------

def test_gammainc_da_matches_finite_differences():
    a, x = _gamma_points()
    p = sc.gammainc(a, x)
    # the smaller tail's difference keeps its relative precision (dP/da = -dQ/da)
    ref = np.where(p < 0.5, _fd(lambda t: sc.gammainc(t, x), a),
                   -_fd(lambda t: sc.gammaincc(t, x), a))
    # SciPy's P(150, 3.01) ~ 1e-192 and Q(150, 901) ~ 1e-215 wobble by ~1e-8 relative in a
    # (their derivatives are pinned below instead)
    ok = np.minimum(p, sc.gammaincc(a, x)) > 1e-150
    assert ok.sum() == len(a) - 2
    np.testing.assert_allclose(gammainc_da(a, x)[ok], ref[ok], rtol=1e-8)


def test_betainc_dab_match_finite_differences():
    a, b, x = _beta_points()
    small = sc.betainc(a, b, x) < 0.5
    ref_a = np.where(small, _fd(lambda t: sc.betainc(t, b, x), a),
                     -_fd(lambda t: sc.betaincc(t, b, x), a))
    ref_b = np.where(small, _fd(lambda t: sc.betainc(a, t, x), b),
                     -_fd(lambda t: sc.betaincc(a, t, x), b))
    da, db = betainc_dab(a, b, x)
    np.testing.assert_allclose(da, ref_a, rtol=1e-8)
    np.testing.assert_allclose(db, ref_b, rtol=1e-8)


# mpmath.diff(lambda t: mpmath.gammainc(t, 0, x, regularized=True), a) at mp.dps = 40 (of
# -gammainc(t, x, inf) for the last): large shapes and far tails, where finite differences of
# float64 values lose their digits
GAMMA_GOLDEN = [(1e4, 1e4 + 50, -0.00351336826252345), (50.0, 1.0, -4.839241544364022e-65),
                (3.0, 40.0, -9.974330300089282e-15), (100.0, 130.0, -0.00081013002856229),
                (150.0, 3.01, -2.099009889475227e-192),
                (150.0, 901.0, -5.0925300677100255e-212)]


def test_gammainc_da_pinned_values():
    a, x, ref = (np.array(v) for v in zip(*GAMMA_GOLDEN))
    np.testing.assert_allclose(gammainc_da(a, x), ref, rtol=1e-10)


def test_betainc_dab_pinned_values():
    # mpmath.diff of mpmath.betainc(a, b, 0, x, regularized=True) in a and in b (mp.dps = 40)
    a, b, x = np.array([1000.0, 100.0]), np.array([1000.0, 50.0]), np.array([0.51, 0.66])
    da, db = betainc_dab(a, b, x)
    ref_da = np.array([-0.005921424296401346, -0.022850773372638317])
    ref_db = np.array([0.006041047012045337, 0.04509977511972891])
    np.testing.assert_allclose(da, ref_da, rtol=1e-10)
    np.testing.assert_allclose(db, ref_db, rtol=1e-10)


def test_shape_derivatives_at_the_edges():
    a = np.array([2.0, 2.0, 0.0, -1.0, np.nan, 2.0, 2.0])
    x = np.array([0.0, np.inf, 1.0, 1.0, 1.0, -1.0, np.nan])
    np.testing.assert_array_equal(gammainc_da(a, x), [0, 0, np.nan, np.nan, np.nan, np.nan,
                                                      np.nan])
    da, db = betainc_dab(np.array([2.0, 2.0, 0.0, 2.0, 2.0]), np.array([3.0, 3.0, 1.0, -1.0, 3.0]),
                         np.array([0.0, 1.0, 0.5, 0.5, 1.5]))
    np.testing.assert_array_equal(da, [0, 0, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(db, [0, 0, np.nan, np.nan, np.nan])


def test_grad_in_shape_parameters_through_the_front_end():
    a, x = _gamma_points()
    ga = nx.grad(lambda t: nx.sum(S.gammainc(t, f64(x))))(f64(a))
    np.testing.assert_allclose(np.asarray(ga), gammainc_da(a, x), rtol=1e-14, atol=1e-300)
    gc = nx.grad(lambda t: nx.sum(S.gammaincc(t, f64(x))))(f64(a))
    np.testing.assert_allclose(np.asarray(gc), -gammainc_da(a, x), rtol=1e-14, atol=1e-300)
    a, b, x = _beta_points()
    ga, gb = nx.grad(lambda s, t: nx.sum(S.betainc(s, t, f64(x))), argnums=(0, 1))(f64(a),
                                                                                   f64(b))
    da, db = betainc_dab(a, b, x)
    np.testing.assert_allclose(np.asarray(ga), da, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gb), db, rtol=1e-14)
    # forward mode gives the same
    _, ta = nx.jvp(lambda s: S.betainc(s, f64(b), f64(x)), (f64(a),), (f64(np.ones_like(a)),))
    np.testing.assert_allclose(np.asarray(ta), da, rtol=1e-14)


# -- derivatives in x --------------------------------------------------------------------------

def test_derivatives_in_x_are_the_densities():
    a, x = _gamma_points()
    gx = nx.grad(lambda t: nx.sum(S.gammainc(f64(a), t)))(f64(x))
    np.testing.assert_allclose(np.asarray(gx), ss.gamma.pdf(x, a), rtol=1e-12, atol=1e-300)
    a, b, x = _beta_points()
    gx = nx.grad(lambda t: nx.sum(S.betainc(f64(a), f64(b), t)))(f64(x))
    np.testing.assert_allclose(np.asarray(gx), ss.beta.pdf(x, a, b), rtol=1e-12)


def test_density_limits_at_zero():
    # a = 1: P(1, x) = 1 - exp(-x), derivative 1 at 0 (not 0 * log 0 = nan)
    g = nx.grad(lambda t: S.gammainc(1.0, t))(f64(0.0))
    assert float(g) == 1.0
    g = nx.grad(lambda t: S.betainc(1.0, 2.0, t))(f64(0.0))
    assert float(g) == 2.0


def test_second_order_in_x_and_mixed():
    nx.check_grads(lambda x: S.gammainc(2.5, x), (f64([0.4, 1.7, 6.0]),), order=2,
                   atol=1e-6, rtol=1e-6)
    nx.check_grads(lambda x: S.betainc(2.5, 1.5, x), (f64([0.2, 0.5, 0.9]),), order=2,
                   atol=1e-6, rtol=1e-6)
    # d/dx d/da P = d/da density; against central differences of SciPy's density in a
    a, x = np.array([0.7, 2.5, 9.0]), np.array([0.4, 3.0, 7.0])
    mixed = nx.grad(lambda t: nx.sum(nx.grad(lambda s: nx.sum(S.gammainc(s, t)))(f64(a))))(
        f64(x))
    ref = _fd(lambda s: ss.gamma.pdf(x, s), a)
    np.testing.assert_allclose(np.asarray(mixed), ref, rtol=1e-8)
    b = np.array([1.3, 0.6, 4.0])
    y = np.array([0.3, 0.6, 0.8])
    for argnum, ref in ((0, _fd(lambda s: ss.beta.pdf(y, s, b), a)),
                        (1, _fd(lambda s: ss.beta.pdf(y, a, s), b))):
        def inner(t, argnum=argnum):
            return nx.sum(nx.grad(lambda s, r: nx.sum(S.betainc(s, r, t)),
                                  argnums=argnum)(f64(a), f64(b)))
        np.testing.assert_allclose(np.asarray(nx.grad(inner)(f64(y))), ref, rtol=1e-8)


def test_second_derivative_in_a_raises():
    with pytest.raises(NotImplementedError, match="second derivative of gammainc"):
        nx.grad(nx.grad(lambda a: S.gammainc(a, 1.5)))(f64(2.0))
    with pytest.raises(NotImplementedError, match="second derivative of betainc"):
        nx.grad(nx.grad(lambda b: S.betainc(2.0, b, 0.3)))(f64(2.0))
    with pytest.raises(NotImplementedError, match="second derivative of gammainc"):
        nx.jacfwd(nx.grad(lambda a: S.gammaincc(a, 1.5)))(f64(2.0))


def test_vmap_of_the_gradient_matches_the_loop():
    a, x = _gamma_points()
    g = nx.vmap(nx.grad(lambda s, t: S.gammainc(s, t)))(f64(a), f64(x))
    np.testing.assert_allclose(np.asarray(g), gammainc_da(a, x), rtol=1e-14, atol=1e-300)


def test_bad_input_raises_naming_the_argument():
    with pytest.raises(TypeError, match="x: gammainc"):
        S.gammainc(1.0, nx.asarray(np.array([1 + 1j])))
    with pytest.raises(TypeError, match="a: gammaincc"):
        S.gammaincc(1j, 1.0)
    with pytest.raises(TypeError, match="b: betainc"):
        S.betainc(1.0, nx.asarray(np.array([1j])), 0.5)
    with pytest.raises(ValueError):
        S.betainc(f64([1.0, 2.0]), f64([1.0, 2.0, 3.0]), 0.5)


# -- the distributions -------------------------------------------------------------------------

X_GAMMA = np.array([-1.0, 0.1, 0.1000001, 0.5, 2.0, 10.0, 60.0, np.inf, np.nan])


@pytest.mark.parametrize("fn", ["cdf", "sf", "logcdf", "logsf"])
def test_gamma_distribution_is_scipys(fn):
    for a, loc, scale in [(2.5, 0.1, 1.5), (0.4, 0.0, 1.0), (30.0, -2.0, 0.5)]:
        ours = np.asarray(getattr(ST.gamma, fn)(f64(X_GAMMA), a, loc, scale))
        np.testing.assert_allclose(ours, getattr(ss.gamma, fn)(X_GAMMA, a, loc, scale),
                                   rtol=1e-13)
    bad = np.asarray(getattr(ST.gamma, fn)(f64([1.0, 1.0]), f64([-1.0, 2.0]), 0.0,
                                           f64([1.0, 0.0])))
    assert np.isnan(bad).all()


X_BETA = np.array([-0.5, 0.0, 0.2, 0.5, 0.99, 1.0, 1.7, np.nan])


@pytest.mark.parametrize("fn", ["cdf", "sf", "logcdf", "logsf"])
def test_beta_distribution_is_scipys(fn):
    for a, b, loc, scale in [(2.5, 0.7, 0.0, 1.0), (0.5, 4.0, -0.1, 1.2), (40.0, 30.0, 0.0, 1.0)]:
        ours = np.asarray(getattr(ST.beta, fn)(f64(X_BETA), a, b, loc, scale))
        np.testing.assert_allclose(ours, getattr(ss.beta, fn)(X_BETA, a, b, loc, scale),
                                   rtol=1e-12)
    bad = np.asarray(getattr(ST.beta, fn)(f64([0.5] * 3), f64([-1.0, 2.0, 2.0]),
                                          f64([1.0, 0.0, 1.0]), 0.0, f64([1.0, 1.0, -1.0])))
    assert np.isnan(bad).all()


def test_gamma_cdf_derivatives_match_finite_differences():
    x, a, loc, scale = 2.3, 1.7, 0.2, 1.4
    args = [f64(v) for v in (x, a, loc, scale)]
    grads = nx.grad(lambda *v: ST.gamma.cdf(*v), argnums=(0, 1, 2, 3))(*args)
    vals = [x, a, loc, scale]
    for i, g in enumerate(grads):
        def f(t, i=i):
            w = list(vals)
            w[i] = t
            return ss.gamma.cdf(*w)
        np.testing.assert_allclose(float(g), _fd(f, np.float64(vals[i])), rtol=1e-8)
    gsf = nx.grad(lambda *v: ST.gamma.logsf(*v), argnums=1)(*args)
    np.testing.assert_allclose(float(gsf), _fd(lambda t: ss.gamma.logsf(x, t, loc, scale),
                                               np.float64(a)), rtol=1e-8)


def test_beta_cdf_derivatives_match_finite_differences():
    vals = [0.45, 2.2, 3.1, -0.1, 1.3]
    grads = nx.grad(lambda *v: ST.beta.cdf(*v), argnums=(0, 1, 2, 3, 4))(*map(f64, vals))
    for i, g in enumerate(grads):
        def f(t, i=i):
            w = list(vals)
            w[i] = t
            return ss.beta.cdf(*w)
        np.testing.assert_allclose(float(g), _fd(f, np.float64(vals[i])), rtol=1e-8)
    gsf = nx.grad(lambda *v: ST.beta.logsf(*v), argnums=(1, 2))(*map(f64, vals))
    for i, g in zip((1, 2), gsf):
        def f(t, i=i):
            w = list(vals)
            w[i] = t
            return ss.beta.logsf(*w)
        np.testing.assert_allclose(float(g), _fd(f, np.float64(vals[i])), rtol=1e-8)


def test_cdf_derivatives_are_zero_outside_the_support():
    g = nx.grad(lambda x, a: ST.gamma.cdf(x, a), argnums=(0, 1))(f64(-1.0), f64(2.0))
    assert [float(v) for v in g] == [0.0, 0.0]
    g = nx.grad(lambda x, a, b: ST.beta.cdf(x, a, b), argnums=(0, 1, 2))(f64(1.5), f64(2.0),
                                                                         f64(3.0))
    assert [float(v) for v in g] == [0.0, 0.0, 0.0]


def test_cdf_bad_input_raises_naming_the_argument():
    with pytest.raises(TypeError, match="scale: gamma.cdf"):
        ST.gamma.cdf(1.0, 2.0, 0.0, 1j)
    with pytest.raises(TypeError, match="b: beta.sf"):
        ST.beta.sf(0.5, 2.0, nx.asarray(np.array([1j])))
