"""nx.scipy.stats, the distributions added after the first set (chi2, truncnorm, pareto,
gumbel_r, gumbel_l, gennorm, vonmises, wrapcauchy, nbinom, betabinom, multinomial), the
functions JAX has that were missing (norm.isf, expon/cauchy/logistic tails and quantiles,
uniform.ppf, bernoulli cdf/ppf), multivariate_normal.entropy and rvs, dirichlet.rvs: values
against scipy.stats over dtypes, supports' edges, invalid parameters, inf and nan; far tails;
derivatives in every continuous argument against float64 finite differences; jit and vmap
equal to eager; bad input."""
import warnings

import numpy as np
import pytest
import scipy.special as sp_special
import scipy.stats as ss

import nx_rune as nx

ST = nx.scipy.stats
RNG = np.random.default_rng(7)

X = np.array([-40.0, -3.0, -1.0, -0.5, 0.0, 1e-9, 0.25, 0.5, 1.0, 1.5, 2.5, 2 * np.pi, 6.3, 7.0,
              40.0, 800.0, np.inf, -np.inf, np.nan])
Q = np.array([-0.1, 0.0, 1e-300, 1e-10, 0.3, 0.5, 0.7, 0.999999, 1.0, 1.1, np.nan])
K = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 10.0, 50.0, np.inf, -np.inf, np.nan])
LOC_SCALE = [(0.0, 1.0), (0.5, 2.0), (-1.0, 0.3), (0.0, 0.0), (0.0, -1.0), (np.nan, 1.0)]
TAILS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _ref(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(*args), dtype=np.float64)


def _check(ours, ref, rtol=1e-12, atol=0.0):
    np.testing.assert_allclose(np.asarray(ours), ref, rtol=rtol, atol=atol, equal_nan=True)


# (distribution, functions, parameter sets after x / q / k)
CONTINUOUS = [
    ("chi2", TAILS, [(d,) + ls for d in (0.5, 1.0, 2.0, 3.5, 0.0, -1.0)
                     for ls in LOC_SCALE[:3] + LOC_SCALE[4:]]),
    ("pareto", TAILS + ["ppf"], [(b,) + ls for b in (0.5, 1.0, 3.0, 0.0, -1.0)
                                 for ls in LOC_SCALE]),
    ("gumbel_r", TAILS + ["ppf"], LOC_SCALE),
    ("gumbel_l", TAILS + ["ppf"], LOC_SCALE),
    ("gennorm", ["logpdf", "pdf", "cdf"], [(b,) for b in (0.5, 1.0, 2.0, 3.5, 0.0, -1.0,
                                                          np.nan)]),
    ("truncnorm", TAILS, [(-1.0, 1.0), (0.0, np.inf), (-np.inf, 0.0), (-np.inf, np.inf),
                          (30.0, 31.0), (-31.0, -30.0), (-2.0, 5.0, 0.5, 2.0), (2.0, 8.0),
                          (-8.0, -2.0), (1.0, 1.0), (2.0, 1.0), (-1.0, 1.0, 0.0, 0.0),
                          (0.5, 0.50001), (-40.0, -30.0)]),
    ("vonmises", ["logpdf", "pdf"], [(k,) for k in (0.0, 1e-300, 0.5, 1.5, 30.0, -1.0,
                                                    np.inf, np.nan)]),
    ("wrapcauchy", ["logpdf", "pdf"], [(c,) for c in (0.0, 1e-300, 0.3, 0.5, 0.99, 1.0, -1.0,
                                                      np.nan)]),
    ("norm", ["isf"], LOC_SCALE),
    ("expon", ["sf", "logcdf", "logsf", "ppf"], LOC_SCALE),
    ("cauchy", ["sf", "logcdf", "logsf", "ppf", "isf"], LOC_SCALE),
    ("logistic", ["sf", "ppf", "isf"], LOC_SCALE),
    ("uniform", ["ppf"], LOC_SCALE + [(-0.5, 1.5)]),
]


@pytest.mark.parametrize("dist, fns, params", CONTINUOUS,
                         ids=[f"{c[0]}-{'-'.join(c[1])}" for c in CONTINUOUS])
def test_continuous_values_are_scipys(dist, fns, params):
    for fn in fns:
        arg = Q if fn in ("ppf", "isf") else X
        for p in params:
            ours = getattr(getattr(ST, dist), fn)(arg, *p)
            assert ours.dtype == np.float64
            _check(ours, _ref(getattr(getattr(ss, dist), fn), arg, *p), rtol=RTOL.get(dist, 1e-12))


# the mass of a narrow interval (truncnorm's [0.5, 0.50001]) is a difference of two ndtr
# values in both implementations: each is within 1e-11 of it
RTOL = {"truncnorm": 1e-10}


@pytest.mark.parametrize("dist, fns, params", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_float32_stays_float32(dist, fns, params):
    # a parameter set that float32 holds (1e-300 rounds to 0, outside some domains)
    p = params[{"truncnorm": 0, "vonmises": 2, "wrapcauchy": 2}.get(dist, 1)]
    for fn in fns:
        # (2 pi, wrapcauchy's upper end, rounds up in float32: inside there, as the end is)
        arg = (Q if fn in ("ppf", "isf") else X[X != 2 * np.pi])[:-1].astype(np.float32)
        ours = getattr(getattr(ST, dist), fn)(arg, *(np.float32(v) for v in p))
        assert ours.dtype == np.float32
        ref = _ref(getattr(getattr(ss, dist), fn), arg.astype(np.float64), *p)
        # a log tail beyond float32's smallest number (exp(-87)) is computed as the log of
        # that number: -inf in float32 (gamma's tails as well)
        keep = ~(ref < -80) if fn.startswith("log") else np.ones(ref.shape, bool)
        with np.errstate(over="ignore"):
            ref = ref.astype(np.float32)
        _check(np.asarray(ours)[keep], ref[keep], rtol=2e-5, atol=1e-6)


def test_far_tails_and_large_parameters():
    # truncnorm deep in a tail: SciPy's log-space values (a naive ratio is 0 / 0 there)
    x = np.array([30.0, 30.001, 30.5, 31.0])
    for fn in ("logcdf", "logsf", "cdf", "sf", "logpdf"):
        _check(getattr(ST.truncnorm, fn)(x, 30.0, 31.0), _ref(getattr(ss.truncnorm, fn), x,
                                                              30.0, 31.0), rtol=1e-11)
        _check(getattr(ST.truncnorm, fn)(-x, -31.0, -30.0),
               _ref(getattr(ss.truncnorm, fn), -x, -31.0, -30.0), rtol=1e-11)
    # wrapcauchy near c = 1 at x = 0: (1 + c) / (2 pi (1 - c)) exactly (SciPy's 1 + c^2 - 2c
    # cos x cancels there: 1.3e-4 off)
    c = 0.999999
    _check(ST.wrapcauchy.pdf(np.array(0.0), np.array(c)), (1 + c) / (2 * np.pi * (1 - c)),
           rtol=1e-9)
    # vonmises for large kappa: exp(kappa (cos x - 1)) / (2 pi i0e(kappa)) with cos x - 1 =
    # -2 sin(x/2)^2 exactly (SciPy's cos(x) - 1 cancels near 2 pi: 1e-11 off)
    kappa = np.array(1e5)
    want = np.exp(-2 * kappa * np.sin(6.3 / 2) ** 2) / (2 * np.pi * sp_special.i0e(kappa))
    _check(ST.vonmises.pdf(np.array(6.3), kappa), want, rtol=1e-12)
    _check(ST.vonmises.logpdf(np.array([0.5, 3.0]), kappa),
           _ref(ss.vonmises.logpdf, np.array([0.5, 3.0]), kappa), rtol=1e-10)
    # cauchy quantiles near 0 and 1: -1 / (pi q) (SciPy's)
    _check(ST.cauchy.ppf(np.array([1e-300, 1e-10, 1 - 1e-6])),
           _ref(ss.cauchy.ppf, np.array([1e-300, 1e-10, 1 - 1e-6])), rtol=1e-9)
    # chi2 and pareto in their far upper tails
    _check(ST.chi2.logsf(np.array([200.0, 2000.0]), 3.0),
           _ref(ss.chi2.logsf, np.array([200.0, 2000.0]), 3.0), rtol=1e-12)
    _check(ST.pareto.logcdf(np.array([1.0 + 1e-12, 1e300]), 2.0),
           _ref(ss.pareto.logcdf, np.array([1.0 + 1e-12, 1e300]), 2.0), rtol=1e-6)
    # gumbel's far log tails: log(1 - exp(-exp(-z))) = -z - exp(-z) / 2 + ... for large z
    z = np.array([40.0, 700.0])
    _check(ST.gumbel_r.logsf(z), -z - np.exp(-z) / 2, rtol=1e-15)
    _check(ST.gumbel_l.logcdf(-z), -z - np.exp(-z) / 2, rtol=1e-15)


DISCRETE = [
    ("nbinom", [(1.0, 0.5), (2.5, 0.3), (10.0, 1.0), (3.0, 0.0), (0.0, 0.5), (-1.0, 0.5),
                (2.0, 1.1), (2.0, 0.4, 1.0), (np.nan, 0.5)]),
    ("betabinom", [(5.0, 1.0, 1.0), (5.0, 0.5, 2.5), (10.0, 3.0, 0.2), (0.0, 1.0, 1.0),
                   (5.0, 0.0, 1.0), (5.0, 1.0, -1.0), (2.5, 1.0, 1.0), (-1.0, 1.0, 1.0),
                   (5.0, 2.0, 3.0, 1.0)]),
]


@pytest.mark.parametrize("dist, params", DISCRETE, ids=[d[0] for d in DISCRETE])
def test_discrete_values_are_scipys(dist, params):
    for fn in ("logpmf", "pmf"):
        for p in params:
            ours = getattr(getattr(ST, dist), fn)(K, *p)
            assert ours.dtype == np.float64
            _check(ours, _ref(getattr(getattr(ss, dist), fn), K, *p))


def test_bernoulli_cdf_and_ppf_are_scipys():
    k = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan])
    for p in (0.0, 0.3, 1.0, -0.1, 1.1, np.nan):
        _check(ST.bernoulli.cdf(k, p), _ref(ss.bernoulli.cdf, k, p))
        _check(ST.bernoulli.ppf(Q, p), _ref(ss.bernoulli.ppf, Q, p))


def test_multinomial_values_are_scipys():
    x = np.array([[1, 2, 3], [0, 0, 6], [6, 0, 0], [2, 2, 2], [1, 1, 3], [-1, 3, 4],
                  [1.5, 1.5, 3], [3, 3, 0]], dtype=np.float64)
    for n, p in [(6, [0.2, 0.3, 0.5]), (6, [0.0, 0.5, 0.5]), (6, [1.0, 0.0, 0.0]),
                 (6, [-0.1, 0.6, 0.5]), (-1, [0.2, 0.3, 0.5]),
                 (6, np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])[:, None, :])]:
        p = np.asarray(p, dtype=np.float64)
        for fn in ("logpmf", "pmf"):
            ours = getattr(ST.multinomial, fn)(x, np.float64(n), p)
            ref = _ref(getattr(ss.multinomial, fn), x, n, p)
            assert ours.shape == ref.shape
            _check(ours, ref)
    # integer counts (JAX's dtype) give the same
    _check(ST.multinomial.logpmf(x[:4].astype(np.int64), 6, np.array([0.2, 0.3, 0.5])),
           _ref(ss.multinomial.logpmf, x[:4], 6, np.array([0.2, 0.3, 0.5])))


# -- derivatives ----------------------------------------------------------------------------------

def _pos(n=4):
    return RNG.uniform(0.5, 3.0, n)


def _unit(n=4):
    return RNG.uniform(0.1, 0.9, n)


def _any(n=4):
    return RNG.uniform(-2.0, 2.0, n)


_TN_A, _TN_B = np.array([-1.0, 0.0, 2.0, -3.0]), np.array([1.0, 3.0, 4.0, -1.0])

GRADS = {
    "chi2.logpdf": (ST.chi2.logpdf, lambda: (_pos() + 2.1, _pos(), _any(), _pos())),
    "chi2.cdf": (ST.chi2.cdf, lambda: (_pos() + 2.1, _pos(), _any(), _pos())),
    "chi2.logsf": (ST.chi2.logsf, lambda: (_pos() + 2.1, _pos(), _any(), _pos())),
    "pareto.logpdf": (ST.pareto.logpdf, lambda: (_pos() + 3.5, _pos(), _any(), _pos())),
    "pareto.logcdf": (ST.pareto.logcdf, lambda: (_pos() + 3.5, _pos(), _any(), _pos())),
    "pareto.sf": (ST.pareto.sf, lambda: (_pos() + 3.5, _pos(), _any(), _pos())),
    "pareto.ppf": (ST.pareto.ppf, lambda: (_unit(), _pos(), _any(), _pos())),
    "gumbel_r.logpdf": (ST.gumbel_r.logpdf, lambda: (_any() * 2, _any(), _pos())),
    "gumbel_r.logsf": (ST.gumbel_r.logsf, lambda: (_any() * 2, _any(), _pos())),
    "gumbel_r.ppf": (ST.gumbel_r.ppf, lambda: (_unit(), _any(), _pos())),
    "gumbel_l.logpdf": (ST.gumbel_l.logpdf, lambda: (_any() * 2, _any(), _pos())),
    "gumbel_l.logcdf": (ST.gumbel_l.logcdf, lambda: (_any() * 2, _any(), _pos())),
    "gumbel_l.ppf": (ST.gumbel_l.ppf, lambda: (_unit(), _any(), _pos())),
    "gennorm.logpdf": (ST.gennorm.logpdf, lambda: (_any() + np.array([3, -3, 3, -3]),
                                                   _pos())),
    "gennorm.cdf": (ST.gennorm.cdf, lambda: (_any() + np.array([3, -3, 3, -3]), _pos())),
    "truncnorm.logpdf": (lambda x, loc, s: ST.truncnorm.logpdf(x, _TN_A, _TN_B, loc, s),
                         lambda: (np.array([0.1, 1.0, 3.0, -2.0]), np.zeros(4) + 0.01,
                                  np.ones(4) * 1.02)),
    "truncnorm.logpdf_ab": (lambda a, b: ST.truncnorm.logpdf(np.array([0.1, 1.0, 3.0, -2.0]),
                                                             a, b),
                            lambda: (_TN_A - 0.1, _TN_B + 0.1)),
    "truncnorm.logcdf": (lambda x, a, b: ST.truncnorm.logcdf(x, a, b),
                         lambda: (np.array([0.1, 1.0, 3.0, -2.0]), _TN_A - 0.1, _TN_B + 0.1)),
    "truncnorm.logsf": (lambda x, a, b: ST.truncnorm.logsf(x, a, b),
                        lambda: (np.array([0.1, 1.0, 3.0, -2.0]), _TN_A - 0.1, _TN_B + 0.1)),
    "truncnorm.cdf_tail": (lambda x, loc: ST.truncnorm.cdf(x, 30.0, 31.0, loc),
                           lambda: (np.array([30.2, 30.5, 30.9, 30.01]), np.zeros(4))),
    "vonmises.logpdf": (ST.vonmises.logpdf, lambda: (_any() * 3, _pos())),
    "wrapcauchy.logpdf": (ST.wrapcauchy.logpdf, lambda: (_pos() * 2, _unit())),
    "nbinom.logpmf": (lambda n, p: ST.nbinom.logpmf(np.array([0.0, 1.0, 3.0, 7.0]), n, p),
                      lambda: (_pos(), _unit())),
    "betabinom.logpmf": (lambda a, b: ST.betabinom.logpmf(np.array([0.0, 1.0, 3.0, 7.0]),
                                                          np.array([4.0, 6.0, 7.0, 9.0]), a, b),
                         lambda: (_pos(), _pos())),
    "multinomial.logpmf": (lambda p: ST.multinomial.logpmf(np.array([1.0, 2.0, 3.0]), 6.0, p),
                           lambda: (_unit(3),)),
    "norm.isf": (ST.norm.isf, lambda: (_unit(), _any(), _pos())),
    "expon.logcdf": (ST.expon.logcdf, lambda: (_pos() + 2.1, _any(), _pos())),
    "expon.sf": (ST.expon.sf, lambda: (_pos() + 2.1, _any(), _pos())),
    "expon.ppf": (ST.expon.ppf, lambda: (_unit(), _any(), _pos())),
    "cauchy.logsf": (ST.cauchy.logsf, lambda: (_any(), _any(), _pos())),
    "cauchy.ppf": (ST.cauchy.ppf, lambda: (_unit(), _any(), _pos())),
    "cauchy.isf": (ST.cauchy.isf, lambda: (_unit(), _any(), _pos())),
    "logistic.sf": (ST.logistic.sf, lambda: (_any(), _any(), _pos())),
    "logistic.ppf": (ST.logistic.ppf, lambda: (_unit(), _any(), _pos())),
    "logistic.isf": (ST.logistic.isf, lambda: (_unit(), _any(), _pos())),
    "uniform.ppf": (ST.uniform.ppf, lambda: (_unit(), _any(), _pos())),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_derivatives_in_every_continuous_argument(name):
    fn, make = GRADS[name]
    nx.check_grads(fn, make(), order=1, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name", ["chi2.logpdf", "pareto.logpdf", "gumbel_r.logpdf",
                                  "gennorm.logpdf", "truncnorm.logpdf", "truncnorm.logcdf",
                                  "vonmises.logpdf", "wrapcauchy.logpdf", "nbinom.logpmf",
                                  "betabinom.logpmf"])
def test_second_order(name):
    fn, make = GRADS[name]
    nx.check_grads(fn, make(), order=2, atol=1e-5, rtol=1e-5)


def test_derivative_values_against_scipy_differences():
    # d/dx of the log tails and of the quantiles against central differences of SciPy's own
    # functions (a different implementation)
    h = 1e-6
    for ours, theirs, x, args in [
            (ST.truncnorm.logsf, ss.truncnorm.logsf, 30.4, (30.0, 31.0)),
            (ST.truncnorm.logcdf, ss.truncnorm.logcdf, -0.3, (-1.0, 2.0, 0.2, 1.5)),
            (ST.chi2.logcdf, ss.chi2.logcdf, 0.7, (3.0,)),
            (ST.pareto.logcdf, ss.pareto.logcdf, 1.3, (2.5,)),
            (ST.gennorm.cdf, ss.gennorm.cdf, -0.8, (1.5,)),
            (ST.vonmises.logpdf, ss.vonmises.logpdf, 2.0, (4.0,)),
            (ST.cauchy.isf, ss.cauchy.isf, 0.05, ())]:
        g = nx.grad(ours)(np.array(x), *(np.array(a, dtype=np.float64) for a in args))
        want = (theirs(x + h, *args) - theirs(x - h, *args)) / (2 * h)
        np.testing.assert_allclose(float(g), want, rtol=1e-7)


def test_gradients_outside_the_support_are_zero_not_nan():
    f64 = np.float64
    g = nx.grad(lambda b, s: ST.pareto.logpdf(0.5, b, 0.0, s), argnums=(0, 1))(f64(2.0),
                                                                              f64(1.0))
    assert [float(v) for v in g] == [0.0, 0.0]
    g = nx.grad(lambda a, b: ST.truncnorm.logpdf(5.0, a, b), argnums=(0, 1))(f64(-1.0),
                                                                             f64(1.0))
    assert [float(v) for v in g] == [0.0, 0.0]
    g = nx.grad(lambda a: ST.truncnorm.logcdf(5.0, a, 1.0))(f64(-1.0))
    assert float(g) == 0.0
    g = nx.grad(lambda c: ST.wrapcauchy.logpdf(7.0, c))(f64(0.5))
    assert float(g) == 0.0
    g = nx.grad(lambda p: ST.nbinom.logpmf(2.5, 3.0, p))(f64(0.4))
    assert float(g) == 0.0
    g = nx.grad(lambda a: ST.betabinom.logpmf(7.0, 5.0, a, 2.0))(f64(1.5))
    assert float(g) == 0.0
    # gennorm at x = 0 (|x|**beta's cusp): finite derivative in beta (0)
    assert float(nx.grad(lambda b: ST.gennorm.logpdf(0.0, b))(f64(2.0))) == pytest.approx(
        (ss.gennorm.logpdf(0.0, 2.0 + 1e-6) - ss.gennorm.logpdf(0.0, 2.0 - 1e-6)) / 2e-6,
        rel=1e-7)


JIT_VMAP = [
    (ST.chi2.logcdf, (np.array([0.5, 2.0, 7.0]), np.array([1.0, 3.0, 5.0]))),
    (ST.truncnorm.logpdf, (np.array([0.5, 2.0, 30.5]), np.array([-1.0, 0.0, 30.0]),
                           np.array([1.0, 3.0, 31.0]))),
    (ST.truncnorm.logsf, (np.array([0.5, 2.0, 30.5]), np.array([-1.0, 0.0, 30.0]),
                          np.array([1.0, 3.0, 31.0]))),
    (ST.pareto.logsf, (np.array([0.5, 2.0, 7.0]), np.array([1.0, 3.0, 5.0]))),
    (ST.gumbel_r.cdf, (np.array([0.5, 2.0, 7.0]), np.array([1.0, 3.0, 5.0]))),
    (ST.gumbel_l.logsf, (np.array([0.5, 2.0, 7.0]), np.array([1.0, 3.0, 5.0]))),
    (ST.gennorm.cdf, (np.array([-0.5, 0.0, 2.0]), np.array([1.0, 3.0, 0.5]))),
    (ST.vonmises.pdf, (np.array([0.5, 2.0, 7.0]), np.array([1.0, 3.0, 5.0]))),
    (ST.wrapcauchy.logpdf, (np.array([0.5, 2.0, 7.0]), np.array([0.1, 0.3, 0.5]))),
    (ST.nbinom.logpmf, (np.array([0.0, 2.0, 7.0]), np.array([1.0, 3.0, 5.0]),
                        np.array([0.1, 0.3, 0.5]))),
    (ST.betabinom.pmf, (np.array([0.0, 2.0, 7.0]), np.array([1.0, 3.0, 7.0]),
                        np.array([0.1, 0.3, 0.5]), np.array([1.0, 3.0, 5.0]))),
    (ST.multinomial.logpmf, (np.array([[1.0, 2.0], [3.0, 0.0], [1.0, 1.0]]),
                             np.array([3.0, 3.0, 3.0]),
                             np.array([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]]))),
    (ST.cauchy.ppf, (np.array([0.1, 0.5, 0.9]), np.array([1.0, 3.0, 5.0]))),
    (ST.bernoulli.ppf, (np.array([0.1, 0.5, 0.9]), np.array([0.1, 0.3, 0.5]))),
]


@pytest.mark.parametrize("fn, args", JIT_VMAP, ids=[f.__module__.split(".")[-1] + "." + f.__name__
                                                     for f, _ in JIT_VMAP])
def test_jit_and_vmap_equal_eager(fn, args):
    eager = np.asarray(fn(*args))
    np.testing.assert_array_equal(np.asarray(nx.jit(fn)(*args)), eager)
    np.testing.assert_allclose(np.asarray(nx.vmap(fn)(*args)), eager, rtol=1e-14, atol=0)
    np.testing.assert_allclose(np.asarray(nx.jit(nx.vmap(fn))(*args)), eager, rtol=1e-14,
                               atol=0)


# -- multivariate_normal.entropy, rvs; dirichlet.rvs ---------------------------------------------

_MEAN = np.array([1.0, 2.0, 3.0])
_COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]])


def test_mvn_entropy_is_scipys():
    mvn = ST.multivariate_normal
    _check(mvn.entropy(_MEAN, _COV), ss.multivariate_normal.entropy(_MEAN, _COV), rtol=1e-14)
    _check(mvn.entropy(_MEAN, np.array([1.0, 2.0, 3.0])),
           ss.multivariate_normal.entropy(_MEAN, np.array([1.0, 2.0, 3.0])), rtol=1e-14)
    _check(mvn.entropy(_MEAN, np.float64(2.0)), ss.multivariate_normal.entropy(_MEAN, 2.0),
           rtol=1e-14)
    singular = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    _check(mvn.entropy(_MEAN, singular, allow_singular=True),
           ss.multivariate_normal(_MEAN, singular, allow_singular=True).entropy(), rtol=1e-13)
    with pytest.raises(nx.linalg.LinAlgError):
        mvn.entropy(_MEAN, singular)
    # the derivative in cov is cov^-1 / 2, symmetric; batches under vmap, and jit
    g = nx.grad(lambda c: mvn.entropy(_MEAN, c))(_COV)
    _check(g, np.linalg.inv(_COV) / 2, rtol=1e-12, atol=1e-15)
    nx.check_grads(lambda c: mvn.entropy(_MEAN, c), (_COV,), order=2)
    covs = np.stack([_COV, 2 * _COV])
    _check(nx.vmap(lambda c: mvn.entropy(_MEAN, c))(covs),
           [ss.multivariate_normal.entropy(_MEAN, c) for c in covs], rtol=1e-14)
    _check(nx.jit(lambda c: mvn.entropy(_MEAN, c))(_COV),
           ss.multivariate_normal.entropy(_MEAN, _COV), rtol=1e-14)


def test_mvn_rvs_draws_what_nx_random_draws_for_the_key():
    mvn = ST.multivariate_normal
    key = nx.random.PRNGKey(3)
    mean, cov = np.array([1.0, 2.0]), np.array([[2.0, 0.5], [0.5, 1.0]])
    got = mvn.rvs(mean, cov, size=3, random_state=key)
    np.testing.assert_array_equal(np.asarray(got),
                                  np.asarray(nx.random.multivariate_normal(key, mean, cov, (3,))))
    # jax.random.multivariate_normal(jax.random.PRNGKey(3), mean, cov, (3,)) in jax 0.10.2
    # (float64)
    _check(got, np.array([[2.562527762675809, 2.2806558016756364],
                          [-0.0055260946159991775, 0.975423122720217],
                          [0.3281695848603625, 2.006033617709082]]), rtol=1e-12)
    # SciPy's shapes: size 1 squeezed to (n,), size-1 axes dropped
    assert mvn.rvs(mean, cov, random_state=key).shape == (2,)
    assert mvn.rvs(mean, cov, size=(4, 1), random_state=key).shape == (4, 2)
    assert mvn.rvs(None, 2.0, size=5, random_state=key).shape == (5,)
    with pytest.raises(TypeError, match="random_state"):
        mvn.rvs(mean, cov)
    with pytest.raises(ValueError, match="cov"):
        mvn.rvs(mean, np.eye(3), random_state=key)


def test_dirichlet_rvs_draws_what_nx_random_draws_for_the_key():
    key = nx.random.PRNGKey(5)
    alpha = np.array([0.5, 1.5, 3.0])
    got = ST.dirichlet.rvs(alpha, size=(2, 4), random_state=key)
    assert got.shape == (2, 4, 3) == ss.dirichlet.rvs(alpha, size=(2, 4)).shape
    np.testing.assert_array_equal(np.asarray(got),
                                  np.asarray(nx.random.dirichlet(key, alpha, (2, 4))))
    # rows sum to 1 to the draws' rounding (JAX's x * (1 / sum) normalisation)
    np.testing.assert_allclose(np.asarray(got).sum(-1), 1.0,
                               rtol=4 * np.finfo(np.asarray(got).dtype).eps)
    assert ST.dirichlet.rvs(alpha, random_state=key).shape == (1, 3)
    # jax.random.dirichlet(jax.random.PRNGKey(5), alpha (float32), (2, 4)) in jax 0.10.2 with
    # x64 off (float32): the same draws, to float32 rounding of the softmax
    got32 = ST.dirichlet.rvs(alpha.astype(np.float32), size=(2, 4), random_state=key)
    assert got32.dtype == np.float32
    want32 = np.array([
        [[0.2885764241218567, 0.17884333431720734, 0.5325802564620972],
         [0.5713250637054443, 0.09791488945484161, 0.33076009154319763],
         [2.9376685688475845e-06, 0.6686052680015564, 0.33139175176620483],
         [0.17554455995559692, 0.3337278664112091, 0.49072763323783875]],
        [[7.210728085738083e-07, 0.4775504171848297, 0.5224488973617554],
         [0.002145414939150214, 0.24266840517520905, 0.7551862001419067],
         [0.1017410084605217, 0.1956551969051361, 0.702603816986084],
         [0.06508281081914902, 0.3776605427265167, 0.5572566986083984]]])
    np.testing.assert_allclose(np.asarray(got32), want32, rtol=3e-7)
    with pytest.raises(TypeError, match="random_state"):
        ST.dirichlet.rvs(alpha)
    with pytest.raises(ValueError, match="alpha"):
        ST.dirichlet.rvs(np.ones((2, 2)), random_state=key)
    with pytest.raises(ValueError, match="size"):
        ST.dirichlet.rvs(alpha, size=-1, random_state=key)


# -- bad input ----------------------------------------------------------------------------------

def test_bad_input_raises_naming_the_argument():
    with pytest.raises(TypeError, match="x: chi2.logpdf is defined for real input"):
        ST.chi2.logpdf(np.array([1j]), 2.0)
    with pytest.raises(TypeError, match="b: truncnorm.cdf is defined for real input"):
        ST.truncnorm.cdf(0.0, -1.0, 1j)
    with pytest.raises(TypeError, match="kappa: vonmises.logpdf is defined for real input"):
        ST.vonmises.logpdf(0.0, np.array([1j]))
    with pytest.raises(TypeError, match="p: nbinom.logpmf is defined for real input"):
        ST.nbinom.logpmf(1.0, 2.0, 0.5j)
    with pytest.raises(ValueError, match="shapes"):
        ST.pareto.logpdf(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="p: its last axis must hold x's 3"):
        ST.multinomial.logpmf(np.array([1.0, 2.0, 3.0]), 6.0, np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="x: expected a vector"):
        ST.multinomial.logpmf(1.0, 1.0, np.array([1.0]))
    with pytest.raises(TypeError, match="p: multinomial.logpmf is defined for real input"):
        ST.multinomial.logpmf(np.array([1.0, 2.0]), 3.0, np.array([0.5j, 0.5]))


# -- gaussian_kde, sem ----------------------------------------------------------------------------

_KDE_1 = np.random.default_rng(10).standard_normal(50)
_KDE_2 = np.random.default_rng(11).standard_normal((2, 40))
_KDE_W = np.random.default_rng(12).uniform(0.1, 1.0, 40)


@pytest.mark.parametrize("kw", [{}, {"weights": _KDE_W}, {"bw_method": "silverman"},
                                {"bw_method": 0.3}, {"bw_method": lambda k: 0.5 * k.neff ** -0.2}],
                         ids=["scott", "weights", "silverman", "scalar", "callable"])
def test_gaussian_kde_is_scipys(kw):
    for data, pts in ((_KDE_1, np.linspace(-4.0, 4.0, 7)), (_KDE_2, RNG.standard_normal((2, 6)))):
        if "weights" in kw and data.ndim == 1:
            continue
        ours, ref = ST.gaussian_kde(data, **kw), ss.gaussian_kde(data, **kw)
        _check(ours.evaluate(pts), ref.evaluate(pts), rtol=1e-13)
        _check(ours(pts), ref(pts), rtol=1e-13)
        _check(ours.pdf(pts), ref.pdf(pts), rtol=1e-13)
        _check(ours.logpdf(pts), ref.logpdf(pts), rtol=1e-13)
        _check(ours.covariance, ref.covariance, rtol=1e-13)
        _check(ours.neff, ref.neff, rtol=1e-13)
        d = ours.d
        _check(ours.integrate_gaussian(np.ones(d), 2 * np.eye(d)),
               ref.integrate_gaussian(np.ones(d), 2 * np.eye(d)), rtol=1e-13)
        small = data[..., :10]
        _check(ours.integrate_kde(ST.gaussian_kde(small)),
               ref.integrate_kde(ss.gaussian_kde(small)), rtol=1e-13)
    one = ST.gaussian_kde(_KDE_1)
    _check(one.integrate_box_1d(-1.0, 0.5), ss.gaussian_kde(_KDE_1).integrate_box_1d(-1.0, 0.5),
           rtol=1e-13)
    # far in the tail the log-density stays finite (SciPy's logsumexp form)
    _check(one.logpdf(np.array([40.0])), ss.gaussian_kde(_KDE_1).logpdf(40.0), rtol=1e-13)


def test_gaussian_kde_transformations_and_resample():
    kde = ST.gaussian_kde(_KDE_2, weights=_KDE_W)
    pts = RNG.standard_normal((2, 5))
    want = np.asarray(kde.logpdf(pts))
    # a pytree: through jit and vmap, and differentiable in the points and the dataset
    np.testing.assert_allclose(np.asarray(nx.jit(lambda k, x: k.logpdf(x))(kde, pts)), want,
                               rtol=1e-13)
    got = nx.vmap(lambda x: kde.logpdf(x), in_axes=1)(pts)
    np.testing.assert_allclose(np.asarray(got).ravel(), want, rtol=1e-13)
    nx.check_grads(lambda x: ST.gaussian_kde(_KDE_2, weights=_KDE_W).logpdf(x), (pts,),
                   order=2)
    nx.check_grads(lambda data: ST.gaussian_kde(data).logpdf(pts), (_KDE_2,))
    # resample: jax.scipy.stats.gaussian_kde(_KDE_2, weights=_KDE_W).resample(
    # jax.random.PRNGKey(1), (4,)) in jax 0.10.2 (float64)
    got = kde.resample(nx.random.PRNGKey(1), (4,))
    _check(got, np.array([[0.9230579765303206, 0.14852753345494074, -0.6852793373093112,
                           0.9654469666684791],
                          [-1.6521223737729172, 0.4817788901684008, 0.6327175256483025,
                           -1.8700300628139266]]), rtol=1e-12)


def test_gaussian_kde_bad_input():
    with pytest.raises(ValueError, match="dataset: needs more than one element"):
        ST.gaussian_kde(np.array([1.0]))
    with pytest.raises(ValueError, match="weights: expected shape"):
        ST.gaussian_kde(_KDE_2, weights=np.ones(3))
    with pytest.raises(ValueError, match="bw_method"):
        ST.gaussian_kde(_KDE_1, bw_method="wide")
    with pytest.raises(ValueError, match="points: have dimension 3"):
        ST.gaussian_kde(_KDE_2).evaluate(np.ones((3, 2)))
    with pytest.raises(NotImplementedError, match="complex"):
        ST.gaussian_kde(_KDE_1 + 1j)
    with pytest.raises(ValueError, match="integrate_box_1d"):
        ST.gaussian_kde(_KDE_2).integrate_box_1d(0.0, 1.0)
    with pytest.raises(NotImplementedError):
        ST.gaussian_kde(_KDE_2).integrate_box(np.zeros(2), np.ones(2))


def test_sem_is_scipys():
    x = RNG.standard_normal((5, 7))
    x[1, 2] = np.nan
    for axis in (0, 1, None):
        for policy in ("propagate", "omit"):
            for ddof in (0, 1):
                _check(ST.sem(x, axis=axis, ddof=ddof, nan_policy=policy),
                       ss.sem(x, axis=axis, ddof=ddof, nan_policy=policy), rtol=1e-14)
    assert ST.sem(x, keepdims=True).shape == ss.sem(x, keepdims=True).shape == (1, 7)
    y = RNG.standard_normal((4, 6))
    nx.check_grads(lambda v: ST.sem(v, axis=1), (y,), order=2)
    _check(nx.jit(lambda v: ST.sem(v, nan_policy="omit"))(x), ss.sem(x, nan_policy="omit"),
           rtol=1e-14)
    with pytest.raises(ValueError, match="nan_policy"):
        ST.sem(x, nan_policy="raise")


def test_poisson_entropy():
    mu = np.array([0.0, 0.1, 1.0, 2.5, 10.0, 60.0, 100.0, np.nan, -1.0])
    _check(ST.poisson.entropy(mu), _ref(ss.poisson.entropy, mu), rtol=1e-13)
    # against 40-digit sums (mpmath): tiny mu, both sides of the switch to the asymptotic
    # series at 150, and large mu where SciPy's own sum drifts (6.02159 at 1e4)
    mu = np.array([1e-10, 149.5, 150.0, 700.0, 1e4])
    want = np.array([2.4025850929975114199e-9, 3.9220274357344075456, 3.9236987569806772785,
                     4.6943595679189721776, 6.0241003854427113208])
    _check(ST.poisson.entropy(mu), want, rtol=5e-14)
    # loc leaves it unchanged; derivative in mu against SciPy's differences; jit, vmap
    _check(ST.poisson.entropy(np.array(3.0), np.array(2.0)), ss.poisson.entropy(3.0),
           rtol=1e-14)
    h = 1e-6
    for m in (0.3, 3.0, 12.0):
        g = nx.grad(ST.poisson.entropy)(np.array(m))
        fd = (ss.poisson.entropy(m + h) - ss.poisson.entropy(m - h)) / (2 * h)
        np.testing.assert_allclose(float(g), fd, rtol=1e-7)
    nx.check_grads(ST.poisson.entropy, (np.array([0.5, 7.0, 90.0, 400.0]),), order=2)
    mu = np.array([0.0, 0.5, 7.0, 400.0])
    eager = np.asarray(ST.poisson.entropy(mu))
    np.testing.assert_allclose(np.asarray(nx.jit(ST.poisson.entropy)(mu)), eager, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(nx.vmap(ST.poisson.entropy)(mu)), eager, rtol=1e-15)
    assert float(nx.grad(ST.poisson.entropy)(np.array(0.0))) == 0.0


def test_vonmises_cdf():
    x = np.array([-40.0, -7.0, -3.2, -3.0, -1.0, -0.5, 0.0, 1e-9, 0.25, 0.5, 1.0, 1.5, 2.5, 3.1,
                  3.2, 2 * np.pi, 6.3, 7.0, 40.0, np.inf, -np.inf, np.nan])
    # SciPy's series and normal approximation: 12 digits, absolute (both sides of kappa = 50,
    # kappa = inf the point mass at 0)
    for kappa in (0.0, 1e-300, 0.5, 1.5, 10.0, 30.0, 49.9, 50.0, 80.0, 1e5, -1.0, np.inf,
                  np.nan):
        _check(ST.vonmises.cdf(x, np.array(kappa)), _ref(ss.vonmises.cdf, x, kappa),
               rtol=1e-12, atol=1e-13)
    # against mpmath quadratures of the density (30 digits): within 1e-14 absolute (the
    # series sums terms of size 1/2 to a small probability); SciPy's own values are 5e-14 off
    _check(ST.vonmises.cdf(np.array([-1.0, -1.0, -0.5]), np.array([30.0, 49.9, 49.9])),
           np.array([8.63576157994314e-8, 7.19935818702458e-12, 0.000244966912420187]),
           rtol=0, atol=1.5e-14)
    # the derivatives: the density in x, finite differences in kappa; jit and vmap
    g = nx.grad(ST.vonmises.cdf)(np.array(0.7), np.array(3.0))
    np.testing.assert_allclose(float(g), ss.vonmises.pdf(0.7, 3.0), rtol=1e-12)
    nx.check_grads(ST.vonmises.cdf, (np.array([-2.0, 0.3, 2.5, 1.0]),
                                     np.array([0.5, 3.0, 20.0, 70.0])), order=2)
    xs, ks = np.array([-2.0, 0.3, 2.5]), np.array([0.5, 3.0, 70.0])
    eager = np.asarray(ST.vonmises.cdf(xs, ks))
    np.testing.assert_array_equal(np.asarray(nx.jit(ST.vonmises.cdf)(xs, ks)), eager)
    np.testing.assert_allclose(np.asarray(nx.vmap(ST.vonmises.cdf)(xs, ks)), eager, rtol=1e-15)


def test_rankdata_and_mode_are_scipys():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, (3, 7)).astype(np.float64)
    a[2, 3] = np.nan
    ai = rng.integers(0, 4, (3, 7))
    for arr in (a, ai, a.astype(np.float32)):
        for method in ("average", "min", "max", "dense", "ordinal"):
            for axis in (None, 0, 1, -1):
                ours = np.asarray(ST.rankdata(arr, method, axis=axis))
                ref = ss.rankdata(arr, method, axis=axis)
                assert ours.dtype == ref.dtype and ours.shape == ref.shape
                _check(ours, ref)
    for arr in (ai, a, np.array([1.0, np.nan, np.nan]), np.array(3.0),
                rng.integers(0, 3, (2, 3, 4))):
        for axis in (None, 0, -1):
            for keepdims in (False, True):
                ours, ref = ST.mode(arr, axis, keepdims=keepdims), ss.mode(arr, axis,
                                                                          keepdims=keepdims)
                assert ours.mode.shape == np.shape(ref.mode)
                assert ours.count.shape == np.shape(ref.count)
                _check(ours.mode, np.asarray(ref.mode, np.float64))
                _check(ours.count, np.asarray(ref.count, np.float64))
    # under jit and vmap
    _check(nx.jit(lambda x: ST.rankdata(x, "min", axis=1))(a), ss.rankdata(a, "min", axis=1))
    got = nx.vmap(lambda x: ST.mode(x))(ai)
    _check(got.mode, ss.mode(ai, axis=1).mode)
    with pytest.raises(ValueError, match="method"):
        ST.rankdata(a, "mean")
    with pytest.raises(NotImplementedError, match="nan_policy"):
        ST.rankdata(a, nan_policy="omit")
    with pytest.raises(NotImplementedError, match="nan_policy"):
        ST.mode(a, nan_policy="raise")
    with pytest.raises(ValueError, match="axis"):
        ST.mode(a, axis=3)


# -- parameters' terms at the parameters' shape ----------------------------------------------------

@pytest.mark.parametrize("dist, params, fn", [
    ("gamma", (2.5,), "gammaln"), ("chi2", (3.5,), "gammaln"), ("t", (3.5,), "gammaln"),
    ("beta", (2.0, 3.0), "betaln")])
def test_logpdf_computes_parameter_terms_once_not_per_point(monkeypatch, dist, params, fn):
    """A scalar parameter's normalising term (gammaln(a), betaln(a, b)) is computed at the
    parameter's shape, not broadcast to the 1000 points first; the values stay SciPy's."""
    sizes = []
    real = getattr(sp_special, fn)

    def spy(*args):
        sizes.append(max(np.size(a) for a in args))
        return real(*args)

    x = np.random.default_rng(0).uniform(0.05, 0.95, 1000)
    want = getattr(ss, dist).logpdf(x, *params)
    monkeypatch.setattr(sp_special, fn, spy)
    got = getattr(nx.scipy.stats, dist).logpdf(nx.asarray(x), *params)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    assert sizes and max(sizes) == 1


def test_unbroadcast_parameters_keep_the_broadcast_shape_and_gradients():
    """Parameters of shape (3, 1) against points of shape (4,): the (3, 4) result and the
    parameters' gradients (summed over the points) as SciPy's values and central differences."""
    x = np.array([0.3, 1.2, 2.5, 4.0])
    a = np.array([[0.7], [1.5], [3.0]])
    got = nx.scipy.stats.gamma.logpdf(nx.asarray(x), nx.asarray(a), 0.1, 1.3)
    np.testing.assert_allclose(np.asarray(got), ss.gamma.logpdf(x, a, 0.1, 1.3), rtol=1e-13)
    g = nx.grad(lambda aa: nx.sum(nx.scipy.stats.gamma.logpdf(nx.asarray(x), aa, 0.1, 1.3)))(
        nx.asarray(a))
    h = 1e-6
    fd = (ss.gamma.logpdf(x, a + h, 0.1, 1.3) - ss.gamma.logpdf(x, a - h, 0.1, 1.3)).sum(
        axis=1, keepdims=True) / (2 * h)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-7)


@pytest.mark.parametrize("a, b", [(0.5, 4.0), (-np.inf, 1.0), (-1.0, np.inf), (-2.0, -0.5),
                                  (0.3, 0.9), (-np.inf, np.inf)])
def test_truncnorm_logpdf_at_infinite_and_outside_points(a, b):
    """Infinite points on an infinite end are inside (SciPy's -inf there), others outside; the
    gradient is finite (0) at every point outside, +-inf included, and -z inside."""
    x = np.array([-np.inf, -3.0, -1.0, 0.0, 0.6, 2.0, 5.0, np.inf, np.nan])
    got = nx.scipy.stats.truncnorm.logpdf(nx.asarray(x), a, b)
    np.testing.assert_allclose(np.asarray(got), ss.truncnorm.logpdf(x, a, b), rtol=1e-13)
    g = np.asarray(nx.grad(lambda t: nx.sum(nx.scipy.stats.truncnorm.logpdf(t, a, b)))(
        nx.asarray(x[:-1])))
    inside = (x[:-1] >= a) & (x[:-1] <= b) & np.isfinite(x[:-1])
    np.testing.assert_array_equal(g[~inside & np.isfinite(x[:-1])], 0.0)
    np.testing.assert_array_equal(g[np.isinf(x[:-1]) & ~((x[:-1] >= a) & (x[:-1] <= b))], 0.0)
    np.testing.assert_allclose(g[inside], -x[:-1][inside], rtol=1e-13)
