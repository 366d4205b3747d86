"""nx.scipy.special's Bessel functions, zeta, spence, exponential integrals, beta, poch,
factorial, hyp1f1, kl_div/rel_entr, bernoulli: values against SciPy's over float32/float64 and
edge values, derivatives in x against float64 finite differences (first and second order) and
the known limits, the derivatives JAX gives pinned as golden values (jax 0.10.2, float64), jit
and vmap, bad input."""
import numpy as np
import pytest
import scipy.special as sc

import nx_rune as nx

S = nx.scipy.special
RNG = np.random.default_rng(29)

EDGES = [0.0, -0.0, 1.0, -1.0, -2.0, -2.5, 0.5, 1e-8, -1e-8, 3.7, 30.0, 200.0, -200.0,
         1e5, np.inf, -np.inf, np.nan]

# our name: SciPy's function
UNARY = {"gammasgn": sc.gammasgn, "rgamma": sc.rgamma, "j0": sc.j0, "j1": sc.j1, "y0": sc.y0,
         "y1": sc.y1, "spence": sc.spence, "exp1": sc.exp1, "expi": sc.expi, "psi": sc.psi,
         "zeta": sc.zeta, "erfcinv": sc.erfcinv}
BINARY = {"beta": sc.beta, "poch": sc.poch, "jv": sc.jv, "jn": sc.jn, "yv": sc.yv,
          "iv": sc.iv, "ive": sc.ive, "kv": sc.kv, "kve": sc.kve, "zeta": sc.zeta,
          "kl_div": sc.kl_div, "rel_entr": sc.rel_entr}
INTEGER_ORDER = {"yn": sc.yn, "expn": sc.expn}
ORDERS = [0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, 2.5, -1.5, 30.0]


def _same(ours, ref, dtype):
    ours = np.asarray(ours)
    assert ours.dtype == dtype, (ours.dtype, dtype)
    with np.errstate(over="ignore"):    # float64 references past float32's range: inf
        ref = np.asarray(ref).astype(dtype)
    np.testing.assert_array_equal(ours, ref)


def _xs(dtype):
    return np.array(EDGES + list(RNG.uniform(-5, 5, 12)) + list(RNG.uniform(0, 40, 8)),
                    dtype=dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_values_are_scipys(name, dtype):
    x = _xs(dtype)
    with np.errstate(all="ignore"):
        ref = UNARY[name](x)
    _same(getattr(S, name)(x), ref, dtype)


@pytest.mark.parametrize("name", sorted(BINARY) + sorted(INTEGER_ORDER))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_values_are_scipys(name, dtype):
    fn = BINARY.get(name) or INTEGER_ORDER[name]
    orders = [v for v in ORDERS if v == int(v)] if name in INTEGER_ORDER else ORDERS + EDGES
    a = np.array(orders, dtype)[:, None]
    x = _xs(dtype)[None, :]
    with np.errstate(all="ignore"):
        ref = fn(a.astype(int) if name in INTEGER_ORDER else a, x)
    _same(getattr(S, name)(a, x), ref, dtype)


def test_hyp1f1_values_and_large_arguments():
    a = np.array([1.5, -2.0, 0.5, 0.0, 3.0])[:, None]
    b = np.array([2.5, 2.5, -2.5, 1.5, 0.5])[:, None]
    x = np.array([0.0, 0.5, -1.5, 7.0, -30.0, 40.0, np.nan, -np.inf])[None, :]
    _same(S.hyp1f1(a, b, x), sc.hyp1f1(a, b, x), np.float64)
    # SciPy's loop never returns for x = +inf or x beyond ~1e12: the overflow is answered
    # directly, with the sign of Gamma(b) / Gamma(a) e^x x^(a - b) (mpmath: 1F1(0.5; -2.5;
    # 800) = -7.43e355, where SciPy's loop says +inf)
    big = np.array([1e13, 1e300, np.inf])
    np.testing.assert_array_equal(np.asarray(S.hyp1f1(1.5, 2.5, big)), np.inf)
    np.testing.assert_array_equal(np.asarray(S.hyp1f1(0.5, -2.5, big)), -np.inf)
    assert float(S.hyp1f1(0.5, -2.5, 800.0)) == -np.inf
    # a polynomial (a = -2): SciPy's value for finite x, +inf at inf, 1 for a = 0
    np.testing.assert_array_equal(np.asarray(S.hyp1f1(-2.0, 2.5, big[:2])),
                                  sc.hyp1f1(-2.0, 2.5, big[:2]))
    assert float(S.hyp1f1(-2.0, 2.5, np.inf)) == np.inf
    assert float(S.hyp1f1(-3.0, 2.5, np.inf)) == -np.inf
    assert float(S.hyp1f1(0.0, 2.5, np.inf)) == 1.0


def test_factorial_and_bernoulli():
    n = np.array([0.0, 1.0, 3.0, 10.0, 0.5, -1.0, -0.5, 170.0, 171.0, np.nan, np.inf])
    _same(S.factorial(n), sc.factorial(n), np.float64)
    assert S.factorial(np.array([3, 4], np.int32)).dtype == np.float32
    with pytest.raises(NotImplementedError, match="exact"):
        S.factorial(3, exact=True)
    for k in (0, 1, 2, 5, 20):
        b = S.bernoulli(k)
        assert b.shape == (k + 1,) and b.dtype == np.float32
        np.testing.assert_allclose(np.asarray(b), sc.bernoulli(k), rtol=1e-6)
    with pytest.raises(ValueError, match="n: "):
        S.bernoulli(-1)
    with pytest.raises(TypeError, match="n: "):
        S.bernoulli(2.5)


def test_dtypes_and_bad_input():
    x16 = np.array([0.25, 0.5, 0.75], np.float16)
    out = S.j0(x16)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(out), sc.j0(x16.astype(np.float32)).astype(np.float16))
    assert S.jv(2, np.ones(3, np.float32)).dtype == np.float32    # weak Python order
    assert S.kv(np.ones(3), np.ones(3, np.float32)).dtype == np.float64
    assert S.spence(np.array([1, 2], np.int32)).dtype == np.float32
    with pytest.raises(TypeError, match="x: .*real input"):
        S.j0(np.array([1 + 1j]))
    with pytest.raises(TypeError, match="q: .*real input"):
        S.zeta(2.0, np.array([1j]))
    with pytest.raises(ValueError, match="n: yn's order must be integers"):
        S.yn(1.5, 2.0)
    with pytest.raises(ValueError, match="n: expn's order must be integers"):
        S.expn(np.array([1.0, 0.5]), 2.0)
    np.testing.assert_array_equal(np.asarray(S.expn(np.array([-1.0, np.nan]), 2.0)),
                                  [np.nan, np.nan])


# -- derivatives ----------------------------------------------------------------------------

def _fd(f, x, h=1e-6):
    x = np.asarray(x, np.float64)
    step = h * np.maximum(1.0, np.abs(x))
    return (f(x + step) - f(x - step)) / (2 * step)


def _grad_each(f, x):
    """d f(x_i) / d x_i at every point, by nx.vmap(nx.grad)."""
    return np.asarray(nx.vmap(nx.grad(f))(nx.asarray(np.asarray(x, np.float64))))


# (our function of x alone, SciPy's, points where it is smooth)
SMOOTH = {
    "rgamma": (S.rgamma, sc.rgamma, [-10.3, -2.5, -1.0, -0.5, 0.0, 0.3, 0.5, 1.7, 6.0]),
    "erfcinv": (S.erfcinv, sc.erfcinv, [0.01, 0.4, 1.0, 1.6, 1.95]),
    "j0": (S.j0, sc.j0, [-3.0, 0.0, 0.7, 2.4, 15.0]),
    "j1": (S.j1, sc.j1, [-3.0, 0.0, 0.7, 2.4, 15.0]),
    "y0": (S.y0, sc.y0, [0.3, 0.9, 2.4, 15.0]),
    "y1": (S.y1, sc.y1, [0.3, 0.9, 2.4, 15.0]),
    "spence": (S.spence, sc.spence, [0.05, 0.5, 0.93, 0.98, 0.995, 1.005, 1.07, 1.5, 10.0]),
    "exp1": (S.exp1, sc.exp1, [0.05, 0.7, 3.0, 20.0]),
    "expi": (S.expi, sc.expi, [-3.0, -0.7, 0.3, 2.0, 20.0]),
    "riemann_zeta": (S.zeta, sc.zeta, [-15.5, -7.5, -2.0, -0.7, -0.3, 0.5, 1.5, 2.0, 3.3, 8.0]),
    "factorial": (S.factorial, sc.factorial, [0.3, 2.0, 3.5, 10.0]),
    "jn_2": (lambda x: S.jn(2, x), lambda x: sc.jn(2, x), [-3.0, 0.5, 2.4, 15.0]),
    "jv_2.5": (lambda x: S.jv(2.5, x), lambda x: sc.jv(2.5, x), [0.5, 2.4, 15.0]),
    "yn_3": (lambda x: S.yn(3, x), lambda x: sc.yn(3, x), [0.5, 2.4, 15.0]),
    "yn_0": (lambda x: S.yn(0, x), lambda x: sc.yn(0, x), [0.5, 2.4, 15.0]),
    "yv_1.5": (lambda x: S.yv(1.5, x), lambda x: sc.yv(1.5, x), [0.5, 2.4, 15.0]),
    "iv_0": (lambda x: S.iv(0, x), lambda x: sc.iv(0, x), [-2.0, 0.0, 0.5, 5.0]),
    "iv_1.5": (lambda x: S.iv(1.5, x), lambda x: sc.iv(1.5, x), [0.5, 2.4, 15.0]),
    "ive_2": (lambda x: S.ive(2, x), lambda x: sc.ive(2, x), [-3.0, 0.5, 2.4, 15.0]),
    "kv_0": (lambda x: S.kv(0, x), lambda x: sc.kv(0, x), [0.1, 0.5, 2.4, 15.0]),
    "kv_2.5": (lambda x: S.kv(2.5, x), lambda x: sc.kv(2.5, x), [0.5, 2.4, 15.0]),
    "kve_1": (lambda x: S.kve(1, x), lambda x: sc.kve(1, x), [0.5, 2.4, 15.0]),
    "expn_0": (lambda x: S.expn(0, x), lambda x: sc.expn(0, x), [0.2, 1.0, 5.0]),
    "expn_1": (lambda x: S.expn(1, x), lambda x: sc.expn(1, x), [0.2, 1.0, 5.0]),
    "expn_4": (lambda x: S.expn(4, x), lambda x: sc.expn(4, x), [0.2, 1.0, 5.0]),
    "zeta_s": (lambda s: S.zeta(s, 0.7), lambda s: sc.zeta(s, 0.7), [1.5, 2.0, 3.3, 8.0]),
    "zeta_q": (lambda q: S.zeta(3.0, q), lambda q: sc.zeta(3.0, q), [0.3, 1.0, 4.5]),
    "poch_z": (lambda z: S.poch(z, 1.7), lambda z: sc.poch(z, 1.7), [0.4, 2.5, 6.0]),
    "poch_m": (lambda m: S.poch(2.5, m), lambda m: sc.poch(2.5, m), [-1.5, 0.4, 2.5]),
    "beta_a": (lambda a: S.beta(a, 2.5), lambda a: sc.beta(a, 2.5), [-0.5, 0.4, 3.0]),
    "beta_b": (lambda b: S.beta(0.7, b), lambda b: sc.beta(0.7, b), [0.4, 3.0]),
    "hyp1f1_x": (lambda x: S.hyp1f1(1.5, 2.5, x), lambda x: sc.hyp1f1(1.5, 2.5, x),
                 [-4.0, 0.0, 0.7, 6.0]),
    "kl_div_p": (lambda p: S.kl_div(p, 1.5), lambda p: sc.kl_div(p, 1.5), [0.1, 0.5, 3.0]),
    "kl_div_q": (lambda q: S.kl_div(0.5, q), lambda q: sc.kl_div(0.5, q), [0.1, 0.5, 3.0]),
    "rel_entr_p": (lambda p: S.rel_entr(p, 1.5), lambda p: sc.rel_entr(p, 1.5), [0.1, 3.0]),
    "rel_entr_q": (lambda q: S.rel_entr(0.5, q), lambda q: sc.rel_entr(0.5, q), [0.1, 3.0]),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_first_and_second_derivatives_match_finite_differences(name):
    ours, ref, pts = SMOOTH[name]
    x = np.array(pts)
    np.testing.assert_allclose(_grad_each(ours, x), _fd(ref, x), rtol=2e-7, atol=1e-9)
    # the second derivative: finite differences of SciPy's first differences are too noisy,
    # so of our first derivative (float64), which the first check pins to SciPy's function
    first = nx.grad(ours)
    np.testing.assert_allclose(_grad_each(first, x),
                               _fd(lambda t: _grad_each(ours, t), x, 1e-5),
                               rtol=2e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["j0", "spence", "iv_1.5", "zeta_s", "expn_1"])
def test_third_derivative(name):
    ours, _, pts = SMOOTH[name]
    x = np.array(pts)
    second = nx.grad(nx.grad(ours))
    np.testing.assert_allclose(_grad_each(second, x),
                               _fd(lambda t: _grad_each(nx.grad(ours), t), x, 1e-5),
                               rtol=2e-5, atol=1e-7)


def test_limits_at_singular_points_of_the_formulas():
    # spence'(x) = -log(x) / (x - 1): -1 at 1, and its derivative 1/2 there
    d = nx.grad(S.spence)
    assert float(d(1.0)) == -1.0
    np.testing.assert_allclose(float(nx.grad(d)(nx.asarray(1.0, dtype="float64"))), 0.5,
                               rtol=1e-15)
    np.testing.assert_allclose(float(nx.grad(nx.grad(d))(nx.asarray(1.0, dtype="float64"))),
                               -2.0 / 3.0, rtol=1e-15)
    # traced (jit) and concrete values take the same branches: the series near 1 only
    x = np.array([0.5, 0.95, 1.0, 1.05, 2.0])
    eager = _grad_each(nx.grad(S.spence), x)
    traced = np.asarray(nx.jit(nx.vmap(nx.grad(nx.grad(S.spence))))(x))
    np.testing.assert_allclose(traced, eager, rtol=1e-15)
    np.testing.assert_allclose(eager, _fd(lambda t: _grad_each(S.spence, t), x, 1e-5),
                               rtol=1e-7)
    # rgamma at the poles of gamma: (-1)^n n!
    poles = np.array([0.0, -1.0, -2.0, -3.0, -4.0])
    np.testing.assert_allclose(_grad_each(S.rgamma, poles), [1.0, -1.0, 2.0, -6.0, 24.0],
                               rtol=1e-15)
    # and through them at every order (1/gamma(x) = x + euler_gamma x^2 + ... at 0)
    np.testing.assert_allclose(_grad_each(nx.grad(S.rgamma), poles[:1]), [2 * np.euler_gamma],
                               rtol=1e-14)
    np.testing.assert_allclose(_grad_each(nx.grad(S.rgamma), poles),
                               _fd(lambda t: _grad_each(S.rgamma, t), poles, 1e-5), rtol=1e-7)
    # far below 0, where finite differences lose digits: both branches of the derivative
    # against mpmath's (40 digits) first and second derivatives of 1/gamma
    far = np.array([-150.2, -149.8, -60.5])
    np.testing.assert_allclose(_grad_each(S.rgamma, far), [2.7217161221987775e+263,
                               -2.700734702350734e+261, 8.486630439476073e+82], rtol=1e-12)
    np.testing.assert_allclose(_grad_each(nx.grad(S.rgamma), far), [-1.709581773961045e+264,
                               -1.101546276328723e+263, -1.4546306843996136e+83], rtol=1e-12)
    third = nx.grad(nx.grad(S.rgamma))
    np.testing.assert_allclose(_grad_each(third, poles),
                               _fd(lambda t: _grad_each(nx.grad(S.rgamma), t), poles, 1e-5),
                               rtol=1e-6)
    # expn(0, x) = exp(-x) / x: derivative -exp(-x) (1/x + 1/x^2) (expn(-1, .) is nan)
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(_grad_each(lambda t: S.expn(0, t), x),
                               -np.exp(-x) * (1 / x + 1 / x ** 2), rtol=1e-15)
    # derivatives at 0 of the exponentially scaled ive (a kink of exp(-|x|) for order 0)
    assert np.isfinite(_grad_each(lambda t: S.ive(1, t), np.array([0.0]))).all()
    np.testing.assert_allclose(_grad_each(S.j1, np.array([0.0])), [0.5])
    # gammasgn is piecewise constant: 0 whatever the cotangent (inf here)
    assert float(nx.grad(lambda t: S.gammasgn(t) * np.inf)(-1.5)) == 0.0


def test_derivatives_match_jax_golden_values():
    f64 = np.float64

    def g(fn, i, *args):
        return float(nx.grad(fn, argnums=i)(*[nx.asarray(f64(a)) for a in args]))

    def gg(fn, i, j, *args):
        return float(nx.grad(nx.grad(fn, argnums=i), argnums=j)(*[nx.asarray(f64(a))
                                                                  for a in args]))
    # golden values from jax 0.10.2 (jax.scipy.special, x64)
    cases = [
        (g(S.zeta, 0, 3.0, 1.5), -0.26644231829748455),
        (gg(S.zeta, 0, 0, 3.0, 1.5), 0.2575688595679264),
        (gg(S.zeta, 0, 1, 3.0, 1.5), 0.12717682726883098),
        (gg(S.zeta, 1, 1, 3.0, 1.5), 1.7371249133336129),
        (g(S.zeta, 0, 2.5, 0.3), 23.944238179029416),
        (g(lambda s: S.zeta(s, 1.0), 0, 2.0), -0.9375482543158438),
        (g(S.zeta, 0, 2.0, 1.0), -0.9375482543158438),
        # below s = 0 (the functional equation's branch): mpmath's zeta(s, derivative=1),
        # JAX's zeta being nan there
        (g(S.zeta, 0, -7.5), 0.004349787661844826824),
        (g(S.zeta, 0, -30.5), -474329500.790179074164),
        (g(S.zeta, 0, -2.0), -0.030448457058393270780),
        (g(S.poch, 0, 2.5, 1.5), 2.4957988158802955),
        (g(S.poch, 1, 2.5, 1.5), 5.669508033916131),
        (gg(S.poch, 1, 1, 2.5, 1.5), 8.402608854307024),
        (g(S.beta, 0, 1.5, 2.5), -0.23947333781305655),
        (g(S.beta, 1, 1.5, 2.5), -0.10857364391348184),
        (gg(S.beta, 0, 1, 1.5, 2.5), 0.07669091596309371),
        (g(S.kl_div, 0, 0.5, 1.5), -1.0986122886681096),
        (g(S.kl_div, 1, 0.5, 1.5), 0.6666666666666667),
        (g(S.kl_div, 0, 0.0, 1.5), -1.0),
        (g(S.kl_div, 1, 0.0, 1.5), 1.0),
        (g(S.rel_entr, 0, 0.5, 1.5), -0.09861228866810967),
        (g(S.rel_entr, 1, 0.5, 1.5), -0.3333333333333333),
        (g(S.rel_entr, 0, 0.0, 1.5), 0.0),
        (g(S.rel_entr, 1, 0.0, 1.5), 0.0),
        (g(S.exp1, 0, 0.7), -0.7094075768448708),
        (g(S.expi, 0, -0.7), -0.7094075768448708),
        (g(S.expi, 0, 2.0), 3.694528049465325),
        (g(lambda x: S.expn(3, x), 0, 0.7), -0.23494711352795306),
        (g(S.spence, 0, 0.5), -1.3862943611199001),
        (g(S.spence, 0, 2.5), -0.6108604879161039),
        (gg(S.spence, 0, 0, 2.5), 0.1405736586107373),
        (g(S.factorial, 0, 3.5), 16.15496939330308),
        (gg(S.factorial, 0, 0, 3.5), 25.33027015054471),
        (g(S.hyp1f1, 2, 1.5, 2.5, 0.7), 0.9998779815804099),
        (gg(S.hyp1f1, 2, 2, 1.5, 2.5, 0.7), 0.7441915817924137),
        (g(S.gammasgn, 0, -1.5), 0.0),
    ]
    ours = np.array([c[0] for c in cases])
    np.testing.assert_allclose(ours, [c[1] for c in cases], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("fn, arg", [(S.jv, "v"), (S.jn, "v"), (S.iv, "v"), (S.ive, "v"),
                                     (S.kv, "v"), (S.kve, "v"), (S.yv, "v"), (S.yn, "n"),
                                     (S.expn, "n")])
def test_order_derivatives_raise(fn, arg):
    x = nx.asarray(np.float64(1.3))
    with pytest.raises(NotImplementedError, match=f"in {arg} is not implemented"):
        nx.grad(lambda n: fn(n, x))(nx.asarray(np.float64(2.0)))
    with pytest.raises(NotImplementedError, match=f"in {arg} is not implemented"):
        nx.jvp(lambda n: fn(n, x), (nx.asarray(np.float64(2.0)),),
               (nx.asarray(np.float64(1.0)),))


def test_hyp1f1_shape_derivatives():
    f64 = np.float64
    a, b, x = f64(1.5), f64(2.5), f64(0.7)
    # jax 0.10.2's jax.grad(jax.scipy.special.hyp1f1, argnums=0 / 1)(1.5, 2.5, 0.7)
    np.testing.assert_allclose(float(nx.grad(S.hyp1f1, argnums=0)(a, b, x)),
                               0.42270307500572596, rtol=1e-14)
    np.testing.assert_allclose(float(nx.grad(S.hyp1f1, argnums=1)(a, b, x)),
                               -0.26072617563220124, rtol=1e-14)
    # float64 central differences of SciPy's function, x of both signs (x < 0: Kummer's
    # transformation), a polynomial (a = -2)
    pts = np.array([[1.5, 2.5, -0.7], [1.5, 2.5, -30.0], [0.5, 1.5, 20.0], [-2.0, 2.5, 3.0],
                    [2.0, 0.5, -5.0], [-2.5, 3.5, -4.0]])
    for i in (0, 1):
        got = np.asarray(nx.vmap(nx.grad(lambda p: S.hyp1f1(*p)))(pts))[:, i]

        def shifted(h):
            q = pts.copy()
            q[:, i] += h
            return sc.hyp1f1(*q.T)
        h = 1e-6 * np.maximum(1.0, np.abs(pts[:, i]))
        np.testing.assert_allclose(got, (shifted(h) - shifted(-h)) / (2 * h), rtol=1e-7)
    # their derivative in x: the derivative in a (b) of a / b F(a + 1, b + 1, x)
    for i in (0, 1):
        mixed = nx.grad(nx.grad(S.hyp1f1, argnums=i), argnums=2)(a, b, x)
        h = 1e-6

        def dx(t):
            args = [a, b, x]
            args[i] = t
            return float(nx.grad(S.hyp1f1, argnums=2)(*[f64(v) for v in args]))
        fd = (dx((a, b)[i] + h) - dx((a, b)[i] - h)) / (2 * h)
        np.testing.assert_allclose(float(mixed), fd, rtol=1e-7)
    with pytest.raises(NotImplementedError, match="second derivative of hyp1f1 in a and b"):
        nx.grad(nx.grad(S.hyp1f1, argnums=0), argnums=1)(a, b, x)
    with pytest.raises(NotImplementedError, match="second derivative of hyp1f1 in a and b"):
        nx.grad(nx.grad(S.hyp1f1, argnums=1), argnums=1)(a, b, x)


# -- jit and vmap ------------------------------------------------------------------------------

ALL = {
    "gammasgn": S.gammasgn, "rgamma": S.rgamma, "erfcinv": lambda x: S.erfcinv(x / 4),
    "j0": S.j0, "j1": S.j1, "y0": S.y0, "y1": S.y1, "spence": S.spence, "exp1": S.exp1,
    "expi": S.expi, "zeta": S.zeta, "psi": S.psi, "factorial": S.factorial,
    "jn": lambda x: S.jn(2, x), "yn": lambda x: S.yn(2, x), "iv": lambda x: S.iv(1.5, x),
    "ive": lambda x: S.ive(1.5, x), "kv": lambda x: S.kv(0.5, x),
    "kve": lambda x: S.kve(0.5, x), "zeta_q": lambda x: S.zeta(2.5, x),
    "expn": lambda x: S.expn(2, x), "poch": lambda x: S.poch(x, 1.5),
    "beta": lambda x: S.beta(x, 2.0), "hyp1f1": lambda x: S.hyp1f1(0.5, 1.5, x),
    "kl_div": lambda x: S.kl_div(x, 1.2), "rel_entr": lambda x: S.rel_entr(1.2, x),
}


@pytest.mark.parametrize("name", sorted(ALL))
def test_jit_and_vmap_match_eager(name):
    fn = ALL[name]
    x = np.array([[0.3, 1.7, 2.5], [3.1, 5.0, 7.5]])
    eager = np.asarray(fn(x))
    np.testing.assert_array_equal(np.asarray(nx.jit(fn)(x)), eager)
    np.testing.assert_array_equal(np.asarray(nx.vmap(fn)(x)), eager)
    d = np.asarray(nx.vmap(nx.vmap(nx.grad(fn)))(x))
    np.testing.assert_allclose(np.asarray(nx.jit(nx.vmap(nx.vmap(nx.grad(fn))))(x)), d,
                               rtol=1e-14)
    assert d.shape == x.shape


def test_vmap_over_the_order():
    n = np.array([0.0, 1.0, 2.0, 3.0])
    x = np.array([0.5, 1.5, 2.5])
    out = nx.vmap(lambda k: S.jv(k, x))(n)
    np.testing.assert_array_equal(np.asarray(out), sc.jv(n[:, None], x[None, :]))
    out = nx.vmap(lambda k: S.yn(k, x))(n)
    np.testing.assert_array_equal(np.asarray(out), sc.yn(n[:, None].astype(int), x[None, :]))
    # traced orders are not checked for integer values (their values are unknown)
    out = nx.jit(lambda k, t: S.expn(k, t))(n, 1.5)
    np.testing.assert_array_equal(np.asarray(out), sc.expn(n.astype(int), 1.5))
