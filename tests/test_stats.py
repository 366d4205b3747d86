"""nx.scipy.stats: values against scipy.stats over dtypes, supports' edges, invalid parameters,
inf and nan; derivatives in every continuous parameter against float64 finite differences;
bad input."""
import warnings

import numpy as np
import pytest
import scipy.stats as ss

import nx_rune as nx

ST = nx.scipy.stats
RNG = np.random.default_rng(0)

X = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 7.0, 40.0,
              np.inf, -np.inf, np.nan])


def _ref(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(*args), dtype=np.float64)


def _check(ours, ref, rtol=1e-12, atol=1e-300):
    np.testing.assert_allclose(np.asarray(ours), ref, rtol=rtol, atol=atol, equal_nan=True)


# (our module, function, scipy's distribution, parameter sets (after x))
LOC_SCALE = [(0.0, 1.0), (0.5, 2.0), (-1.0, 0.3), (0.0, 0.0), (0.0, -1.0)]
CONTINUOUS = [
    ("norm", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], LOC_SCALE),
    ("t", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
     [(d, l, s) for d in (0.5, 1.0, 4.0, 1e6, np.inf, 0.0, -1.0)
      for l, s in LOC_SCALE[:3] + LOC_SCALE[4:]]),
    ("gamma", ["logpdf", "pdf"], [(a, l, s) for a in (0.5, 1.0, 2.5, 0.0, -1.0)
                                  for l, s in LOC_SCALE]),
    ("beta", ["logpdf", "pdf"], [(a, b, l, s) for a in (0.5, 1.0, 2.5, 0.0)
                                 for b in (0.7, 1.0, 3.0, -1.0)
                                 for l, s in [(0.0, 1.0), (-1.0, 3.0), (0.0, 0.0)]]),
    ("expon", ["logpdf", "pdf", "cdf"], LOC_SCALE),
    ("laplace", ["logpdf", "pdf", "cdf"], LOC_SCALE),
    ("cauchy", ["logpdf", "pdf", "cdf"], LOC_SCALE),
    ("logistic", ["logpdf", "pdf", "cdf"], LOC_SCALE),
    ("uniform", ["logpdf", "pdf", "cdf"], LOC_SCALE + [(-0.5, 1.5)]),
]


@pytest.mark.parametrize("dist, fns, params", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_values_are_scipys(dist, fns, params):
    for fn in fns:
        for p in params:
            ours = getattr(getattr(ST, dist), fn)(X, *p)
            assert ours.dtype == np.float64
            ref = _ref(getattr(getattr(ss, dist), fn), X, *p)
            # t's tails at df = 1e6 come from I_x(df / 2, 1/2), ~1e-11 relative there (as
            # SciPy's own betainc; its t.cdf uses another expansion)
            big_df = dist == "t" and fn in ("cdf", "logcdf", "sf", "logsf") and p[0] >= 1e6
            if big_df:    # SciPy's log tail underflows to -inf at x = 40 (ours: -804.6)
                under = np.isneginf(ref) & np.isfinite(X)
                assert np.all(np.asarray(ours)[under] < -700)
                ref = np.where(under, np.asarray(ours), ref)
            _check(ours, ref, rtol=1e-10 if big_df else 1e-12, atol=1e-14)


def test_norm_ppf_is_scipys():
    q = np.array([-0.1, 0.0, 1e-300, 0.025, 0.5, 0.975, 1.0, 1.5, np.nan])
    for loc, scale in LOC_SCALE:
        _check(ST.norm.ppf(q, loc, scale), _ref(ss.norm.ppf, q, loc, scale))


@pytest.mark.parametrize("dist, fns, params", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_float32_stays_float32(dist, fns, params):
    x = np.array([0.1, 0.3, 0.6, 0.9], np.float32)
    p = next(v for v in params if all(np.isfinite(v)) and v[-1] > 0 and v[-2] <= 0.1)
    for fn in fns:
        ours = getattr(getattr(ST, dist), fn)(x, *p)    # Python float parameters: weak
        assert ours.dtype == np.float32
        ref = _ref(getattr(getattr(ss, dist), fn), x.astype(np.float64), *p)
        _check(ours, ref, rtol=1e-5, atol=1e-6)


def test_parameters_broadcast_and_promote():
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    loc = np.array([0.0, 0.5, 1.0], np.float32)
    scale = np.array([[1.0], [2.0]], np.float32)
    out = ST.norm.logpdf(x.astype(np.float32), loc, scale)
    assert out.shape == (2, 3) and out.dtype == np.float32
    out = ST.norm.logpdf(x, loc, scale)
    assert out.shape == (2, 3) and out.dtype == np.float64
    _check(out, ss.norm.logpdf(x, loc.astype(np.float64), scale.astype(np.float64)))
    assert ST.norm.cdf(np.array([1, 2], np.int32)).dtype == np.float32


K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 2.5, 5.0, 10.0, np.inf, np.nan])
DISCRETE = [
    ("bernoulli", [(p,) for p in (0.0, 0.3, 1.0, 1.5, -0.1)] + [(0.4, 1.0), (0.4, -2.0)]),
    ("poisson", [(mu,) for mu in (0.0, 0.5, 4.0, -1.0)] + [(2.0, 1.0), (2.0, 0.5)]),
    ("binom", [(n, p) for n in (0.0, 1.0, 5.0, 12.0, 2.5, -1.0) for p in (0.0, 0.3, 1.0, 1.2)]
     + [(5.0, 0.3, 2.0)]),
    ("geom", [(p,) for p in (0.0, 0.3, 1.0, 1.5)] + [(0.3, 2.0), (0.3, -1.0)]),
]


@pytest.mark.parametrize("dist, params", DISCRETE, ids=[d[0] for d in DISCRETE])
def test_discrete_values_are_scipys(dist, params):
    for p in params:
        fns = ("logpmf", "pmf") + (("cdf", "logcdf", "sf", "logsf") if dist == "poisson" else ())
        for fn in fns:
            ours = getattr(getattr(ST, dist), fn)(K, *p)
            assert ours.dtype == np.float64
            ref = _ref(getattr(getattr(ss, dist), fn), K, *p)
            if dist == "poisson" and fn == "logcdf" and p[0] < 0:
                ref[np.isinf(K)] = np.nan    # SciPy: cdf(inf, -1) is nan, its log 0
            _check(ours, ref, rtol=1e-11, atol=1e-15)
    k32 = np.array([0, 1, 2, 3], np.float32)
    p = params[1]
    out = getattr(ST, dist).pmf(k32, *p)
    assert out.dtype == np.float32
    _check(out, _ref(getattr(ss, dist).pmf, k32.astype(np.float64), *p), rtol=1e-5, atol=1e-7)


def test_dirichlet_values_are_scipys():
    alpha = np.array([0.5, 1.0, 2.5, 4.0])
    x = RNG.dirichlet(np.ones(4), size=5).T          # (4, 5): one point per column
    out = ST.dirichlet.logpdf(x, alpha)
    assert out.shape == (5,) and out.dtype == np.float64
    _check(out, [ss.dirichlet.logpdf(x[:, i], alpha) for i in range(5)], rtol=1e-12)
    _check(ST.dirichlet.pdf(x[:, 0], alpha), ss.dirichlet.pdf(x[:, 0], alpha), rtol=1e-12)
    # k - 1 components: the last is 1 - their sum (as SciPy)
    _check(ST.dirichlet.logpdf(x[:3], alpha), out, rtol=1e-12)
    _check(ST.dirichlet.logpdf(x[:3, 2], alpha), ss.dirichlet.logpdf(x[:3, 2], alpha),
           rtol=1e-12)
    # a zero component with alpha 1 contributes 0 (SciPy accepts it)
    y = np.array([0.3, 0.0, 0.7, 0.0])
    a2 = np.array([2.0, 1.0, 3.0, 1.0])
    _check(ST.dirichlet.logpdf(y, a2), ss.dirichlet.logpdf(y, a2), rtol=1e-12)
    out32 = ST.dirichlet.logpdf(x.astype(np.float32), alpha.astype(np.float32))
    assert out32.dtype == np.float32
    _check(out32, out, rtol=1e-5)


def test_dirichlet_off_the_simplex_and_bad_alpha():
    alpha = np.array([1.5, 2.0, 3.0])
    x = np.array([[0.2, 0.5, -0.1], [0.3, 0.2, 0.6], [0.4, 0.3, 0.5]])   # sums 0.9, 1, 1
    np.testing.assert_array_equal(np.asarray(ST.dirichlet.logpdf(x, alpha))[[0, 2]], -np.inf)
    assert np.isfinite(float(ST.dirichlet.logpdf(x[:, 1], alpha)))
    assert np.isnan(float(ST.dirichlet.logpdf(x[:, 1], np.array([1.0, 0.0, 2.0]))))
    assert np.isnan(float(ST.dirichlet.logpdf(np.array([0.2, 0.3, np.nan]), alpha)))


# -- derivatives ----------------------------------------------------------------------------------

def _pos(n=4):
    return RNG.uniform(0.5, 3.0, n)


def _unit(n=4):
    return RNG.uniform(0.1, 0.9, n)


def _any(n=4):
    return RNG.uniform(-2.0, 2.0, n)


GRADS = {
    "norm.logpdf": (ST.norm.logpdf, lambda: (_any(), _any(), _pos())),
    "norm.pdf": (ST.norm.pdf, lambda: (_any(), _any(), _pos())),
    "norm.cdf": (ST.norm.cdf, lambda: (_any(), _any(), _pos())),
    "norm.logcdf": (ST.norm.logcdf, lambda: (_any() * 4, _any(), _pos())),
    "norm.sf": (ST.norm.sf, lambda: (_any(), _any(), _pos())),
    "norm.logsf": (ST.norm.logsf, lambda: (_any() * 4, _any(), _pos())),
    "norm.ppf": (ST.norm.ppf, lambda: (_unit(), _any(), _pos())),
    "t.logpdf": (ST.t.logpdf, lambda: (_any(), _pos() + 0.5, _any(), _pos())),
    "t.logpdf_large_df": (ST.t.logpdf, lambda: (_any(), RNG.uniform(30, 3000, 4), _any(), _pos())),
    "t.pdf": (ST.t.pdf, lambda: (_any(), _pos(), _any(), _pos())),
    # the distribution functions in x, loc and scale (df: first order only, below)
    "t.cdf": (lambda x, loc, s: ST.t.cdf(x, np.array([0.7, 2.0, 5.0, 40.0]), loc, s),
              lambda: (_any(), _any(), _pos())),
    "t.logcdf": (lambda x, loc, s: ST.t.logcdf(x, np.array([0.7, 2.0, 5.0, 40.0]), loc, s),
                 lambda: (_any() * 4, _any(), _pos())),
    "t.sf": (lambda x, loc, s: ST.t.sf(x, np.array([0.7, 2.0, 5.0, 40.0]), loc, s),
             lambda: (_any(), _any(), _pos())),
    "t.logsf": (lambda x, loc, s: ST.t.logsf(x, np.array([0.7, 2.0, 5.0, 40.0]), loc, s),
                lambda: (_any() * 4, _any(), _pos())),
    "t.cdf_df": (lambda df: ST.t.cdf(np.array([-2.0, -0.3, 0.4, 3.0]), df),
                 lambda: (_pos() + 0.5,)),
    "gamma.logpdf": (ST.gamma.logpdf, lambda: (_pos() + 2.1, _pos(), _any(), _pos())),
    "gamma.pdf": (ST.gamma.pdf, lambda: (_pos() + 2.1, _pos(), _any(), _pos())),
    "beta.logpdf": (ST.beta.logpdf,
                    lambda: (_unit() * 0.5, _pos(), _pos(), _unit() * 0.1 - 0.1, _pos() + 1)),
    "beta.pdf": (ST.beta.pdf, lambda: (_unit(), _pos(), _pos(), np.zeros(4), np.ones(4))),
    "dirichlet.logpdf": (ST.dirichlet.logpdf, lambda: (_unit(3) / 3, _pos())),
    # k - 1 components (the last is 1 - their sum): perturbations stay on the simplex
    "dirichlet.pdf": (ST.dirichlet.pdf, lambda: (RNG.dirichlet(np.ones(3), 2).T[:2], _pos(3))),
    "expon.logpdf": (ST.expon.logpdf, lambda: (_pos() + 2.1, _any(), _pos())),
    "expon.cdf": (ST.expon.cdf, lambda: (_pos() + 2.1, _any(), _pos())),
    "laplace.logpdf": (ST.laplace.logpdf, lambda: (_any(), _any() + 5, _pos())),
    "laplace.cdf": (ST.laplace.cdf, lambda: (_any() * 3, _any(), _pos())),
    "cauchy.logpdf": (ST.cauchy.logpdf, lambda: (_any(), _any(), _pos())),
    "cauchy.cdf": (ST.cauchy.cdf, lambda: (_any(), _any(), _pos())),
    "logistic.logpdf": (ST.logistic.logpdf, lambda: (_any() * 5, _any(), _pos())),
    "logistic.cdf": (ST.logistic.cdf, lambda: (_any(), _any(), _pos())),
    "uniform.logpdf": (ST.uniform.logpdf, lambda: (_unit() + 0.2, _unit() * 0.1, _pos() + 1.2)),
    "uniform.cdf": (ST.uniform.cdf, lambda: (_unit() + 0.2, _unit() * 0.1, _pos() + 1.2)),
    "bernoulli.logpmf": (lambda p: ST.bernoulli.logpmf(np.array([0.0, 1.0, 1.0, 0.0]), p),
                         lambda: (_unit(),)),
    "poisson.logpmf": (lambda mu: ST.poisson.logpmf(np.array([0.0, 1.0, 4.0, 9.0]), mu),
                       lambda: (_pos(),)),
    "poisson.cdf": (lambda mu: ST.poisson.cdf(np.array([0.0, 1.0, 4.5, 9.0]), mu),
                    lambda: (_pos(),)),
    "poisson.logsf": (lambda mu: ST.poisson.logsf(np.array([0.0, 1.0, 4.5, 9.0]), mu),
                      lambda: (_pos(),)),
    # n is a count (non-integer n gives nan): differentiable in p only
    "binom.logpmf": (lambda p: ST.binom.logpmf(np.array([0.0, 1.0, 3.0, 7.0]),
                                               np.array([4.0, 6.0, 7.0, 9.0]), p),
                     lambda: (_unit(),)),
    "geom.pmf": (lambda p: ST.geom.pmf(np.array([1.0, 2.0, 3.0, 7.0]), p), lambda: (_unit(),)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_derivatives_in_every_continuous_argument(name):
    fn, make = GRADS[name]
    nx.check_grads(fn, make(), order=1, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name", ["norm.logpdf", "norm.logcdf", "t.logpdf", "t.logpdf_large_df",
                                  "t.cdf", "t.logcdf", "poisson.cdf",
                                  "gamma.logpdf",
                                  "beta.logpdf", "dirichlet.logpdf", "poisson.logpmf",
                                  "logistic.logpdf", "cauchy.cdf"])
def test_second_order(name):
    fn, make = GRADS[name]
    nx.check_grads(fn, make(), order=2, atol=1e-5, rtol=1e-5)


def test_gradients_outside_the_support_are_zero_not_nan():
    a, scale = nx.asarray(np.float64(2.5)), nx.asarray(np.float64(1.5))
    ga, gs = nx.grad(lambda a, s: ST.gamma.logpdf(-1.0, a, 0.0, s), argnums=(0, 1))(a, scale)
    assert float(ga) == 0.0 and float(gs) == 0.0
    g = nx.grad(lambda b: ST.beta.logpdf(1.5, 2.0, b))(nx.asarray(np.float64(3.0)))
    assert float(g) == 0.0
    g = nx.grad(lambda mu: ST.poisson.logpmf(2.5, mu))(nx.asarray(np.float64(0.0)))
    assert float(g) == 0.0
    g = nx.grad(lambda p: ST.bernoulli.logpmf(2.0, p))(nx.asarray(np.float64(0.0)))
    assert float(g) == 0.0
    g = nx.grad(lambda p: ST.geom.logpmf(0.0, p))(nx.asarray(np.float64(1.0)))
    assert float(g) == 0.0


def test_derivative_values():
    # d/dscale of norm.logpdf = (z**2 - 1) / scale; d/ddf of t.logpdf against SciPy by central
    # differences of its own logpdf (a different implementation)
    x, loc, scale = 1.3, 0.2, 0.7
    g = nx.grad(ST.norm.logpdf, argnums=2)(np.float64(x), np.float64(loc), np.float64(scale))
    z = (x - loc) / scale
    np.testing.assert_allclose(float(g), (z * z - 1) / scale, rtol=1e-14)
    df, h = 3.5, 1e-5
    want = (ss.t.logpdf(x, df + h, loc, scale) - ss.t.logpdf(x, df - h, loc, scale)) / (2 * h)
    g = nx.grad(ST.t.logpdf, argnums=1)(np.float64(x), np.float64(df), np.float64(loc),
                                        np.float64(scale))
    np.testing.assert_allclose(float(g), want, rtol=1e-8)


def test_t_cdf_at_its_center_and_under_jit_vmap():
    # z = 0 exactly: the value 1/2, the derivative pdf(0), the second derivative 0 (the
    # incomplete-beta form alone gives nan there)
    for df in (0.5, 3.0, 1e4):
        g = nx.grad(ST.t.cdf)(np.float64(0.0), np.float64(df))
        np.testing.assert_allclose(float(g), ss.t.pdf(0.0, df), rtol=1e-11)
        assert float(nx.grad(nx.grad(ST.t.cdf))(np.float64(0.0), np.float64(df))) == 0.0
    x = np.linspace(-4, 4, 9)
    df = np.array([0.8, 2.0, 7.0])
    got = nx.jit(nx.vmap(lambda d: ST.t.cdf(x, d)))(df)
    _check(got, ss.t.cdf(x[None, :], df[:, None]), rtol=1e-12, atol=1e-15)
    got = nx.vmap(nx.grad(lambda mu: ST.poisson.cdf(3.0, mu)))(np.array([0.5, 2.0, 6.0]))
    _check(got, -ss.poisson.pmf(3.0, np.array([0.5, 2.0, 6.0])), rtol=1e-12)


# -- bad input ----------------------------------------------------------------------------------

def test_bad_input_raises_naming_the_argument():
    with pytest.raises(TypeError, match="x: norm.logpdf is defined for real input"):
        ST.norm.logpdf(np.array([1j]))
    with pytest.raises(TypeError, match="scale: t.logpdf is defined for real input"):
        ST.t.logpdf(1.0, 2.0, 0.0, 1j)
    with pytest.raises(TypeError, match="p: binom.logpmf is defined for real input"):
        ST.binom.logpmf(1.0, 3.0, np.array([0.5j]))
    with pytest.raises(ValueError, match="shapes"):
        ST.gamma.logpdf(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="alpha: expected a 1-d vector"):
        ST.dirichlet.logpdf(np.ones(2) / 2, np.ones((2, 2)))
    with pytest.raises(ValueError, match="x: its first axis must hold 3"):
        ST.dirichlet.logpdf(np.ones(5) / 5, np.ones(3))
    with pytest.raises(ValueError, match="x: its first axis must hold 3"):
        ST.dirichlet.logpdf(np.float64(1.0), np.ones(3))
    with pytest.raises(TypeError, match="alpha: dirichlet.logpdf is defined for real input"):
        ST.dirichlet.logpdf(np.ones(2) / 2, np.ones(2) * 1j)
