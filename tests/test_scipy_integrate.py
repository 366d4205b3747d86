"""nx.scipy.integrate.odeint: values against scipy.integrate.odeint, derivatives in y0, t and
args against central differences of SciPy's solutions and to second order, bad input (JAX's
numbers, jit, vmap and the adjoint: tests/test_odeint.py)."""
import numpy as np
import pytest
import scipy.integrate as si

import nx_rune as nx
from nx_rune.scipy.integrate import odeint

RNG = np.random.default_rng(0)


def _lin(y, t, a, b):
    return -a * y + b * nx.sin(t)


def _lin_np(y, t, a, b):
    return -a * y + b * np.sin(t)


def _lotka(y, t, p):
    return nx.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def _lotka_np(y, t, p):
    return np.array([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def _ref(f, y0, t, *args):
    return si.odeint(f, y0, t, args=args, rtol=1e-12, atol=1e-12)


Y0 = np.array([1.0, 2.0, -0.5])
T = np.linspace(0.1, 2.0, 6)
A, B = np.array([0.5, 1.0, 2.0]), np.array([0.3, -1.0, 0.2])
P = np.array([1.1, 0.4, 0.4, 0.1])


def test_odeint_matches_scipy():
    got = odeint(_lin, Y0, T, A, B)
    assert got.shape == (6, 3) and got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), _ref(_lin_np, Y0, T, A, B), rtol=1e-7,
                               atol=1e-8)
    t = np.linspace(0.0, 15.0, 30)
    got = odeint(_lotka, np.array([10.0, 5.0]), t, P)
    np.testing.assert_allclose(np.asarray(got), _ref(_lotka_np, np.array([10.0, 5.0]), t, P),
                               rtol=1e-6, atol=1e-6)
    # tighter tolerances give tighter agreement; one time gives y0
    got = odeint(_lin, Y0, T, A, B, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(np.asarray(got), _ref(_lin_np, Y0, T, A, B), rtol=1e-10,
                               atol=1e-11)
    np.testing.assert_array_equal(np.asarray(odeint(_lin, Y0, T[:1], A, B)), Y0[None])
    assert odeint(_lin, Y0.astype(np.float32), T, A.astype(np.float32),
                  B.astype(np.float32)).dtype == np.float32


def test_odeint_derivatives_match_scipy_differences():
    eps = 1e-6

    def fd(make):
        return np.array([(make(eps * e) - make(-eps * e)) / (2 * eps) for e in np.eye(3)])
    g_y0, g_a = nx.grad(lambda y0, a: nx.sum(odeint(_lin, y0, T, a, B)[-1] ** 2),
                        argnums=(0, 1))(Y0, A)
    want_y0 = fd(lambda d: np.sum(_ref(_lin_np, Y0 + d, T, A, B)[-1] ** 2))
    want_a = fd(lambda d: np.sum(_ref(_lin_np, Y0, T, A + d, B)[-1] ** 2))
    # the adjoint's derivatives are those of the exact solution to the solver's tolerance
    # (1.4e-8), not the derivatives of the computed solution
    np.testing.assert_allclose(np.asarray(g_y0), want_y0, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(g_a), want_a, rtol=1e-6, atol=1e-8)
    g_t = nx.grad(lambda t: nx.sum(odeint(_lin, Y0, t, A, B)))(T)
    want_t = [(np.sum(_ref(_lin_np, Y0, T + eps * e, A, B)) -
               np.sum(_ref(_lin_np, Y0, T - eps * e, A, B))) / (2 * eps) for e in np.eye(6)]
    np.testing.assert_allclose(np.asarray(g_t), want_t, rtol=1e-6, atol=1e-8)


def test_odeint_second_order_and_forward_mode():
    y0 = np.array([10.0, 5.0])
    t = np.linspace(0.0, 1.0, 3)
    nx.check_grads(lambda y0, p: odeint(_lotka, y0, t, p), (y0, P), order=2, atol=1e-5,
                   rtol=1e-5)


def test_odeint_bad_input():
    with pytest.raises(ValueError, match="t:"):
        odeint(_lin, Y0, np.ones((2, 2)), A, B)
    with pytest.raises(ValueError, match="non-decreasing"):
        odeint(_lin, Y0, np.array([1.0, 0.5]), A, B)
    with pytest.raises(ValueError, match="func"):
        odeint(lambda y, t: nx.ones(2), Y0, T)
    # too few steps allowed: NaN from the first time not reached on (no exception, as under jit)
    out = np.asarray(odeint(_lin, Y0, np.array([0.0, 0.1, 1000.0]), A, B, mxstep=5))
    assert np.isfinite(out[:2]).all() and np.isnan(out[2]).all()
    with pytest.raises(ValueError, match="rtol"):
        odeint(_lin, Y0, T, A, B, rtol=0.0)
    with pytest.raises(TypeError, match="func"):
        odeint(None, Y0, T)
    with pytest.raises(TypeError, match="args"):
        odeint(_lin, Y0, T, "a", B)


# -- trapezoid, cumulative_trapezoid -------------------------------------------------------------

from nx_rune.scipy.integrate import cumulative_trapezoid, trapezoid  # noqa: E402

Y3 = RNG.standard_normal((3, 5, 4))
X1 = np.sort(RNG.standard_normal(5))
X3 = np.sort(RNG.standard_normal((3, 5, 4)), axis=1)


def _same(ours, ref, rtol=1e-13):
    ours = np.asarray(ours)
    assert ours.shape == np.shape(ref) and ours.dtype == np.asarray(ref).dtype
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=1e-14)


def test_trapezoid_matches_scipy_and_numpy():
    for axis in (0, 1, -1, 2):
        _same(trapezoid(Y3, axis=axis), si.trapezoid(Y3, axis=axis))
        _same(trapezoid(Y3, dx=0.3, axis=axis), si.trapezoid(Y3, dx=0.3, axis=axis))
        for initial in (None, 0):
            _same(cumulative_trapezoid(Y3, dx=0.3, axis=axis, initial=initial),
                  si.cumulative_trapezoid(Y3, dx=0.3, axis=axis, initial=initial))
    _same(trapezoid(Y3, X1, axis=1), si.trapezoid(Y3, X1, axis=1))
    _same(trapezoid(Y3, X3, axis=1), si.trapezoid(Y3, X3, axis=1))
    _same(cumulative_trapezoid(Y3, X1, axis=1, initial=0),
          si.cumulative_trapezoid(Y3, X1, axis=1, initial=0))
    _same(cumulative_trapezoid(Y3, X3, axis=1), si.cumulative_trapezoid(Y3, X3, axis=1))
    # an array dx broadcasts as NumPy's; one sample integrates to 0; complex y
    dx = np.arange(1.0, 4.0)
    _same(trapezoid(Y3, dx=dx), si.trapezoid(Y3, dx=dx))
    _same(trapezoid(np.ones(1)), si.trapezoid(np.ones(1)))
    _same(cumulative_trapezoid(np.ones(1), initial=0), si.cumulative_trapezoid(np.ones(1),
                                                                               initial=0))
    _same(trapezoid(Y3 + 1j * Y3[::-1], X1, axis=1), si.trapezoid(Y3 + 1j * Y3[::-1], X1, axis=1))
    # dtypes: float32 stays float32; 64-bit ints integrate in float64 (NumPy's)
    assert trapezoid(Y3.astype(np.float32)).dtype == np.float32
    _same(trapezoid(np.arange(6, dtype=np.int64)), np.trapezoid(np.arange(6, dtype=np.int64)))
    # nx.trapezoid and nx.numpy.trapezoid are the same function
    _same(nx.trapezoid(Y3, X1, axis=1), np.trapezoid(Y3, X1, axis=1))
    _same(nx.numpy.trapezoid(Y3, dx=2.0), np.trapezoid(Y3, dx=2.0))


def test_trapezoid_derivatives_jit_and_vmap():
    nx.check_grads(lambda y, x: trapezoid(y, x, axis=1), (Y3, X1), order=2)
    nx.check_grads(lambda y, x: cumulative_trapezoid(y, x, axis=1, initial=0), (Y3, X3),
                   order=2)
    nx.check_grads(lambda d: trapezoid(Y3, dx=d), (np.array(0.7),))
    want = si.cumulative_trapezoid(Y3, X1, axis=1)
    got = nx.jit(lambda y, x: cumulative_trapezoid(y, x, axis=1))(Y3, X1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    got = nx.vmap(lambda y: cumulative_trapezoid(y, X1, axis=0))(Y3)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    got = nx.vmap(lambda y, x: trapezoid(y, x, axis=0), in_axes=(0, 0))(Y3, X3)
    np.testing.assert_allclose(np.asarray(got), si.trapezoid(Y3, X3, axis=1), rtol=1e-13)


def test_trapezoid_bad_input():
    with pytest.raises(ValueError, match="x: its length 4 must be y's length 5"):
        trapezoid(Y3, np.arange(4.0), axis=1)
    with pytest.raises(ValueError, match="x: must be 1-D or have y's number of axes"):
        trapezoid(Y3, np.ones((5, 4)), axis=1)
    with pytest.raises(ValueError, match="axis"):
        trapezoid(Y3, axis=3)
    with pytest.raises(TypeError, match="axis"):
        trapezoid(Y3, axis=1.0)
    with pytest.raises(ValueError, match="initial"):
        cumulative_trapezoid(Y3, initial=1.0)
    with pytest.raises(ValueError, match="y: trapezoid needs at least one axis"):
        trapezoid(np.float64(1.0))
