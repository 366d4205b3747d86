"""nx.scipy.special: values against SciPy's over dtypes and edge values (0, -0.0, negatives,
poles, inf, nan), derivatives against float64 finite differences and the known formulas,
second order, bad input."""
import warnings

import numpy as np
import pytest
import scipy.special as sc

import nx_rune as nx

S = nx.scipy.special
RNG = np.random.default_rng(0)

EDGES = [0.0, -0.0, 1.0, -1.0, -2.0, -2.5, 0.5, 1e-8, -1e-8, 3.7, 30.0, 200.0, -200.0,
         np.inf, -np.inf, np.nan]

UNARY = {  # our name: (SciPy's function, extra points of interest)
    "gammaln": (sc.gammaln, [172.5, -171.5, 1e300]),
    "digamma": (sc.psi, [-1e-300, 1e-300]),
    "gamma": (sc.gamma, [171.7, -170.5, 1e-310]),
    "erf": (sc.erf, [5.9, -5.9]),
    "erfc": (sc.erfc, [26.0, -6.0, 27.5]),
    "erfinv": (sc.erfinv, [0.999999, -0.3, 1.0 - 1e-12]),
    "ndtr": (sc.ndtr, [-38.0, 8.3]),
    "ndtri": (sc.ndtri, [1e-300, 0.975, 0.025]),
    "log_ndtr": (sc.log_ndtr, [-38.0, -1e5, 8.3]),
    "expit": (sc.expit, [-750.0, 40.0, -40.0]),
    "logit": (sc.logit, [0.25, 0.999, 1e-300]),
    "i0": (sc.i0, [700.0, 714.0]),
    "i0e": (sc.i0e, [700.0, 1e6]),
    "i1": (sc.i1, [700.0, -714.0]),
    "i1e": (sc.i1e, [700.0, -1e6]),
}


def _same(ours, ref):
    """Equal values (nan where the reference has nan), dtype included."""
    ours = np.asarray(ours)
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_values_are_scipys(name, dtype):
    fn, extra = UNARY[name]
    with np.errstate(all="ignore"):     # 1e300 overflows to inf in float32, on purpose
        x = np.array(EDGES + extra + list(RNG.uniform(-5, 5, 20)), dtype=dtype)
        ref = np.asarray(fn(x)).astype(dtype)
    _same(getattr(S, name)(x), ref)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_dtypes(name):
    fn = UNARY[name][0]
    x16 = np.array([0.25, 0.5, 0.75], np.float16)
    out = getattr(S, name)(x16)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(out), fn(x16.astype(np.float32)).astype(np.float16))
    assert getattr(S, name)(np.array([1, 2], np.int32)).dtype == np.float32
    assert getattr(S, name)(np.array([1, 2], np.int64)).dtype == np.float64
    assert getattr(S, name)(0.5).dtype == np.float32     # a Python float: float32
    if name in ("erf", "erfc"):    # complex too: test_complex_erf_erfc_match_scipy_...
        return
    with pytest.raises(TypeError, match=r"(x|p): .*real input"):
        getattr(S, name)(np.array([1 + 1j]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_values_are_scipys(dtype):
    a = np.array(EDGES, dtype=dtype)[:, None]
    b = np.array(EDGES, dtype=dtype)[None, :]
    with np.errstate(all="ignore"):
        for name, fn in (("betaln", sc.betaln), ("xlogy", sc.xlogy), ("xlog1py", sc.xlog1py)):
            _same(getattr(S, name)(a, b), fn(a, b).astype(dtype))
    # weak Python scalars keep the tensor's dtype
    assert S.xlogy(2, np.float32(3.0) * np.ones(2, np.float32)).dtype == np.float32
    assert S.betaln(np.ones(3, np.float64), 2.0).dtype == np.float64


def test_xlogy_zero_cases_are_scipys():
    x = np.array([0.0, 0.0, 0.0, 0.0, 1.0])
    y = np.array([0.0, -1.0, np.nan, np.inf, 0.0])
    _same(S.xlogy(x, y), sc.xlogy(x, y))
    _same(S.xlog1py(x, y - 1.0), sc.xlog1py(x, y - 1.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_polygamma_values_are_scipys(dtype):
    n = np.array([0, 1, 2, 3, 4])[:, None]
    x = np.array([0.0, 0.3, 1.0, 2.5, 10.0, -1.5, np.inf, np.nan], dtype=dtype)[None, :]
    with np.errstate(all="ignore"):
        ref = sc.polygamma(n.astype(dtype), x).astype(dtype)
    out = S.polygamma(n, x)
    assert out.dtype == dtype
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-6 if dtype == np.float32 else 1e-14)
    np.testing.assert_array_equal(np.asarray(S.polygamma(0, x)), np.asarray(S.digamma(x)))


def test_multigammaln_values_and_domain():
    for d in (1, 2, 5):
        a = np.array([d / 2 + 0.1, 3.0, 7.25])
        np.testing.assert_allclose(np.asarray(S.multigammaln(a, d)),
                                   [sc.multigammaln(v, d) for v in a], rtol=1e-13)
    assert S.multigammaln(np.float32(3.0), 3).dtype == np.float32
    with pytest.raises(ValueError, match="a: multigammaln of dimension d=3 needs a > 1.0"):
        S.multigammaln(np.array([2.0, 0.9]), 3)
    with pytest.raises(ValueError, match="d: expected a positive int"):
        S.multigammaln(3.0, 0)
    with pytest.raises(TypeError, match="d: expected a positive int"):
        S.multigammaln(3.0, 2.0)
    with pytest.raises(TypeError, match="d: expected a positive int"):
        S.multigammaln(3.0, True)


def test_entr_values_are_scipys():
    x = np.array(EDGES + [0.3, 1e-300])
    _same(S.entr(x), sc.entr(x))
    x32 = x.astype(np.float32)
    out = S.entr(x32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), sc.entr(x32), rtol=2e-6)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_is_scipys(axis, keepdims):
    a = RNG.standard_normal((3, 4)) * 10
    b = RNG.uniform(-1, 2, (3, 4))
    b[0, 1] = 0.0
    np.testing.assert_allclose(np.asarray(S.logsumexp(a, axis, keepdims=keepdims)),
                               sc.logsumexp(a, axis, keepdims=keepdims), rtol=1e-14)
    lse, sign = S.logsumexp(a, axis, b=b, keepdims=keepdims, return_sign=True)
    rlse, rsign = sc.logsumexp(a, axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(np.asarray(lse), rlse, rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(sign), rsign)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = sc.logsumexp(a, axis, b=b, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(S.logsumexp(a, axis, b=b, keepdims=keepdims)), ref,
                               rtol=1e-13)    # nan where the weighted sum is negative


def test_logsumexp_special_values_are_scipys():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for a in ([-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0], [1000.0, 1000.0],
                  [-1000.0, -1001.0], [np.inf, -np.inf]):
            a = np.array(a)
            np.testing.assert_array_equal(np.asarray(S.logsumexp(a)), sc.logsumexp(a))
        a, b = np.array([np.inf, 1.0]), np.array([0.0, 2.0])   # a zero weight drops its term
        np.testing.assert_allclose(np.asarray(S.logsumexp(a, b=b)), sc.logsumexp(a, b=b))
        a, b = np.array([1.0, 1.0]), np.array([1.0, -1.0])      # a zero sum
        lse, sign = S.logsumexp(a, b=b, return_sign=True)
        rlse, rsign = sc.logsumexp(a, b=b, return_sign=True)
        assert float(lse) == rlse == -np.inf and float(sign) == rsign == 0.0
    empty = S.logsumexp(np.zeros((0, 3)), axis=0)
    np.testing.assert_array_equal(np.asarray(empty), sc.logsumexp(np.zeros((0, 3)), axis=0))
    assert S.logsumexp(np.zeros((2, 0)), axis=1, keepdims=True).shape == (2, 1)
    assert S.logsumexp(np.ones(3, np.float32)).dtype == np.float32
    assert S.logsumexp(np.ones(3, np.int32)).dtype == np.float32


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_softmax_log_softmax_are_scipys(axis):
    x = RNG.standard_normal((3, 4)) * 5
    np.testing.assert_allclose(np.asarray(S.softmax(x, axis)), sc.softmax(x, axis), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(S.log_softmax(x, axis=axis)), sc.log_softmax(x, axis),
                               rtol=1e-13, atol=1e-13)
    assert S.softmax(x.astype(np.float32)).dtype == np.float32


# -- derivatives ----------------------------------------------------------------------------------

def _pos(n=5):
    return RNG.uniform(0.3, 4.0, n)


def _any(n=5):
    return RNG.uniform(-3.0, 3.0, n)


def _unit(n=5):
    return RNG.uniform(0.05, 0.95, n)


GRADS = {
    "gammaln": (S.gammaln, lambda: (_pos(),)),
    "gammaln_negative": (S.gammaln, lambda: (-_pos() - 0.2 + np.array([0, 0.5, 0, 0.5, 0]),)),
    "digamma": (S.digamma, lambda: (_pos(),)),
    "polygamma": (lambda x: S.polygamma(np.array([0, 1, 2, 3, 1]), x), lambda: (_pos(),)),
    "gamma": (S.gamma, lambda: (_pos(),)),
    "betaln": (S.betaln, lambda: (_pos(), _pos())),
    "multigammaln": (lambda a: S.multigammaln(a, 4), lambda: (_pos() + 1.6,)),
    "erf": (S.erf, lambda: (_any(),)),
    "erfc": (S.erfc, lambda: (_any(),)),
    "erfinv": (S.erfinv, lambda: (_unit() * 1.8 - 0.9,)),
    "ndtr": (S.ndtr, lambda: (_any(),)),
    "ndtri": (S.ndtri, lambda: (_unit(),)),
    "log_ndtr": (S.log_ndtr, lambda: (_any() * 8,)),
    "expit": (S.expit, lambda: (_any(),)),
    "logit": (S.logit, lambda: (_unit(),)),
    "xlogy": (S.xlogy, lambda: (_any(), _pos())),
    "xlog1py": (S.xlog1py, lambda: (_any(), _unit() - 0.5)),
    "entr": (S.entr, lambda: (_pos(),)),
    "i0": (S.i0, lambda: (_any(),)),
    "i0e": (S.i0e, lambda: (_any(),)),
    "i1": (S.i1, lambda: (_any(),)),
    "i1e": (S.i1e, lambda: (_any(),)),
    "logsumexp": (lambda a: S.logsumexp(a.reshape(5, 1) * np.ones((5, 3)), axis=0),
                  lambda: (_any(),)),
    "logsumexp_b": (lambda a, b: S.logsumexp(a, b=b, return_sign=True)[0],
                    lambda: (_any(), _any())),
    "logsumexp_keepdims": (lambda a: S.logsumexp(a.reshape(1, 5), axis=1, keepdims=True),
                           lambda: (_any(),)),
    "softmax": (S.softmax, lambda: (_any(),)),
    "log_softmax": (S.log_softmax, lambda: (_any(),)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_derivatives_match_finite_differences(name):
    fn, make = GRADS[name]
    nx.check_grads(fn, make(), order=1, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name", ["gammaln", "digamma", "polygamma", "erf", "erfinv", "ndtri",
                                  "log_ndtr", "i0e", "i1", "i1e", "xlogy", "betaln",
                                  "logsumexp_b", "expit", "logit", "gamma"])
def test_second_order(name):
    fn, make = GRADS[name]
    nx.check_grads(fn, make(), order=2, atol=1e-5, rtol=1e-5)


def test_derivatives_are_the_known_formulas():
    x = np.array([0.3, 1.0, 2.5, 7.0])
    grad_t = lambda f, t: nx.grad(lambda u: nx.sum(f(u)))(t)  # noqa: E731
    # elementwise functions: the gradient of the sum holds each element's derivative
    grad = lambda f, v: np.asarray(nx.grad(lambda t: nx.sum(f(t)))(nx.asarray(v)))  # noqa
    np.testing.assert_allclose(grad(S.gammaln, x), sc.psi(x), rtol=1e-14)
    np.testing.assert_allclose(grad(S.digamma, x), sc.polygamma(1, x), rtol=1e-14)
    np.testing.assert_allclose(grad(lambda t: grad_t(S.digamma, t), x), sc.polygamma(2, x),
                               rtol=1e-13)
    np.testing.assert_allclose(grad(lambda v: S.polygamma(3, v), x), sc.polygamma(4, x),
                               rtol=1e-13)
    np.testing.assert_allclose(grad(S.gamma, x), sc.gamma(x) * sc.psi(x), rtol=1e-13)
    np.testing.assert_allclose(grad(S.erf, x), 2 / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-14)
    u = x / 8
    np.testing.assert_allclose(grad(S.erfinv, u),
                               np.sqrt(np.pi) / 2 * np.exp(sc.erfinv(u) ** 2), rtol=1e-14)
    np.testing.assert_allclose(grad(S.i0, x), sc.i1(x), rtol=1e-14)
    np.testing.assert_allclose(grad(S.i1, x), (sc.i0(x) + sc.iv(2, x)) / 2, rtol=1e-12)
    # i1e(y) = exp(y) i1(y) for y < 0, i1' even: i1'(|y|) exp(y) + i1e(y)
    np.testing.assert_allclose(grad(S.i1e, -x),
                               (sc.i0(x) + sc.iv(2, x)) / 2 * np.exp(-x) + sc.i1e(-x),
                               rtol=1e-12)


def test_derivatives_at_special_points():
    g = lambda f, v: float(nx.grad(f)(nx.asarray(np.float64(v))))  # noqa: E731
    assert g(S.i1, 0.0) == 0.5 and g(S.i1e, 0.0) == 0.5 and g(S.i0, 0.0) == 0.0
    assert g(S.i0e, 0.0) == 0.0     # the kink of exp(-|x|): sign(0) = 0, as JAX's
    assert g(S.entr, 0.0) == np.inf and g(S.entr, 1.0) == -1.0
    # d log_ndtr / dx ~ -x far in the lower tail (no 0/0 from an underflowed pdf and cdf)
    np.testing.assert_allclose(g(S.log_ndtr, -40.0), 40.02498, rtol=1e-6)
    assert np.isfinite(g(S.log_ndtr, -1e4))
    # xlogy(0, y) = 0 for every y: 0 in y at x = 0, log(y) in x (-inf at y = 0, as JAX's)
    f64 = lambda v: nx.asarray(np.float64(v))  # noqa: E731
    gx, gy = nx.grad(S.xlogy, argnums=(0, 1))(f64(0.0), f64(2.0))
    assert float(gx) == np.log(2.0) and float(gy) == 0.0
    gx, gy = nx.grad(S.xlogy, argnums=(0, 1))(f64(0.0), f64(0.0))
    assert float(gx) == -np.inf and float(gy) == 0.0
    gx, gy = nx.grad(S.xlog1py, argnums=(0, 1))(f64(0.0), f64(-1.0))
    assert float(gx) == -np.inf and float(gy) == 0.0
    # d/dy of x log(y) at x = 0, differentiated in x: 1 / y (the singular point is only 0, 0)
    h = nx.grad(lambda x: nx.grad(S.xlogy, argnums=1)(x, f64(4.0)))(f64(0.0))
    assert float(h) == 0.25
    # a zero weight of logsumexp drops its term: its derivative in b is 0, as JAX's
    gb = nx.grad(lambda b: S.logsumexp(np.array([1.0, 2.0]), b=b))(np.array([0.0, 1.0]))
    np.testing.assert_array_equal(np.asarray(gb), [0.0, 1.0])


def test_float32_derivatives_stay_float32():
    x = nx.asarray(np.array([0.5, 1.5], np.float32))
    for name in ("gammaln", "digamma", "erf", "erfinv", "log_ndtr", "i1e", "expit"):
        g = nx.grad(lambda v: nx.sum(getattr(S, name)(v * 0.5)))(x)
        assert g.dtype == np.float32, name
    assert nx.grad(lambda v: nx.sum(S.polygamma(1, v)))(x).dtype == np.float32


# -- bad input ----------------------------------------------------------------------------------

def test_bad_input_raises_naming_the_argument():
    z = np.array([1 + 2j])
    with pytest.raises(TypeError, match="x: xlogy is defined for real input"):
        S.xlogy(z, 1.0)
    with pytest.raises(TypeError, match="y: xlog1py is defined for real input"):
        S.xlog1py(1.0, z)
    with pytest.raises(TypeError, match="b: betaln is defined for real input"):
        S.betaln(1.0, 2j)
    with pytest.raises(TypeError, match="a: logsumexp is defined for real input"):
        S.logsumexp(z)
    with pytest.raises(TypeError, match="b: logsumexp is defined for real input"):
        S.logsumexp(np.ones(1), b=z)
    with pytest.raises(TypeError, match="x: softmax is defined for real input"):
        S.softmax(z)
    with pytest.raises(TypeError, match="x: entr is defined for real input"):
        S.entr(z)
    with pytest.raises(ValueError, match="n: polygamma's order must be non-negative integers"):
        S.polygamma(-1, 2.0)
    with pytest.raises(ValueError, match="n: polygamma's order"):
        S.polygamma(np.array([1.0, 0.5]), 2.0)
    with pytest.raises(TypeError, match="n: polygamma is defined for real input"):
        S.polygamma(1j, 2.0)
    with pytest.raises(TypeError, match="x: polygamma is defined for real input"):
        S.polygamma(1, 2j)
    with pytest.raises(ValueError, match="shapes"):
        S.betaln(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="axis: repeated axis"):
        S.logsumexp(np.ones((2, 2)), axis=(0, 0))
    with pytest.raises(IndexError):
        S.logsumexp(np.ones((2, 2)), axis=2)


def test_complex_erf_erfc_match_scipy_and_differentiate():
    z = np.array([0.3 + 0.4j, -1 + 2j, 2.5 - 0.1j, 0j, -0.7 - 3j])
    for name in ("erf", "erfc"):
        f = getattr(S, name)
        got = f(z)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(got), getattr(sc, name)(z),
                                   rtol=1e-14, atol=1e-15)
        assert f(z.astype(np.complex64)).dtype == np.complex64
        # entire functions: the derivative along any complex direction d is f'(z) d, with
        # f' = +-2/sqrt(pi) exp(-z^2)
        d = np.array([1.0, 1j, 0.5 - 0.5j, 2.0, -1j])
        _, tan = nx.jvp(f, (z,), (d,))
        sign = 1 if name == "erf" else -1
        np.testing.assert_allclose(np.asarray(tan), sign * 2 / np.sqrt(np.pi) *
                                   np.exp(-z ** 2) * d, rtol=1e-13)
        eps = 1e-6
        fd = (getattr(sc, name)(z + eps * d) -
              getattr(sc, name)(z - eps * d)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(tan), fd, rtol=1e-7)
        # reverse mode: Re sum(ct * tangent) = Re sum(vjp(ct) * d)
        ct = np.array([1 - 1j, 0.5j, 2.0, 1.0, -1 + 0.3j])
        (g,) = nx.vjp(f, z)[1](ct)
        np.testing.assert_allclose(np.real(np.sum(np.asarray(g) * d)),
                                   np.real(np.sum(ct * np.asarray(tan))), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(nx.jit(nx.vmap(f))(z)), np.asarray(got),
                                   rtol=1e-15)
