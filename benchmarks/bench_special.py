"""nx.scipy.special on 10**6 float32 values (the families by name: 10**5 float64 values) against
scipy.special's own calls (pytest-benchmark;
``python -m benchmarks benchmarks/bench_special.py`` prints the ratios; "numpy" names the
SciPy/NumPy baseline in the table).

Each group holds one case twice, ``nx_rune`` and ``numpy``, computing the same values (checked
once before timing), plus the gradient of sum(gammaln(x)) and of logsumexp against the
hand-written NumPy formula.
"""
import functools

import numpy as np
import pytest
import scipy.special as sc

import nx_rune as nx

S = nx.scipy.special
M = 10**6


@functools.cache
def _pos():
    a = np.random.default_rng(0).uniform(0.1, 10.0, M).astype(np.float32)
    return a, nx.asarray(a)


@functools.cache
def _any():
    a = np.random.default_rng(1).standard_normal(M).astype(np.float32)
    return a, nx.asarray(a)


@functools.cache
def _prob():
    a = np.random.default_rng(3).uniform(0.01, 0.99, M).astype(np.float32)
    return a, nx.asarray(a)


@functools.cache
def _unit():
    a = np.random.default_rng(2).uniform(-0.99, 0.99, M).astype(np.float32)
    return a, nx.asarray(a)


def _unary(ours, theirs, data):
    def case():
        a, t = data()
        return lambda: ours(t), lambda: theirs(a)
    case.__name__ = ours.__name__
    return case


def _binary(name, ours, theirs):
    def case():
        a, t = _pos()
        b, u = _unit()
        return lambda: ours(u, t), lambda: theirs(b, a)
    case.__name__ = name
    return case


def polygamma1_1e6():
    a, t = _pos()
    return lambda: S.polygamma(1, t), lambda: sc.polygamma(np.float32(1), a)


def betaln_1e6():
    a, t = _pos()
    return lambda: S.betaln(t, t), lambda: sc.betaln(a, a)


def gammaln_grad():
    a, t = _pos()
    g = nx.grad(lambda x: nx.sum(S.gammaln(x)))

    def numpy_grad():    # what the gradient costs by hand: the value (forward pass) and psi
        sc.gammaln(a).sum()
        return sc.psi(a)
    return lambda: g(t), numpy_grad


def logsumexp_1e6():
    a, t = _any()
    return lambda: S.logsumexp(t), lambda: sc.logsumexp(a)


def logsumexp_rows_1000x1000():
    a, t = _any()
    a2, t2 = a.reshape(1000, 1000), nx.reshape(t, (1000, 1000))
    return lambda: S.logsumexp(t2, axis=1), lambda: sc.logsumexp(a2, axis=1)


def logsumexp_grad_1e6():
    a, t = _any()
    g = nx.grad(lambda x: S.logsumexp(x))

    def numpy_grad():
        e = np.exp(a - a.max())
        return e / e.sum()
    return lambda: g(t), numpy_grad


CASES = {f"{f.__name__}_1e6" if not f.__name__.endswith(("grad", "1e6", "1000")) else
         f.__name__: f for f in [
             _unary(S.gammaln, sc.gammaln, _pos), _unary(S.digamma, sc.psi, _pos),
             _unary(S.erf, sc.erf, _any), _unary(S.erfinv, sc.erfinv, _unit),
             _unary(S.ndtr, sc.ndtr, _any), _unary(S.log_ndtr, sc.log_ndtr, _any),
             _unary(S.expit, sc.expit, _any), _unary(S.i0e, sc.i0e, _any),
             _unary(S.erfc, sc.erfc, _any), _unary(S.ndtri, sc.ndtri, _prob),
             _unary(S.logit, sc.logit, _prob), _unary(S.gamma, sc.gamma, _pos),
             _unary(S.i0, sc.i0, _any), _unary(S.i1, sc.i1, _any), _unary(S.i1e, sc.i1e, _any),
             polygamma1_1e6, betaln_1e6, _binary("xlogy_1e6", S.xlogy, sc.xlogy),
             _binary("xlog1py_1e6", S.xlog1py, sc.xlog1py),
             gammaln_grad, logsumexp_1e6, logsumexp_rows_1000x1000, logsumexp_grad_1e6]}



# -- the incomplete gamma and beta functions, the derivative in a ------------------------------

def gammainc_1e6():
    a, t = _pos()
    x, u = _prob()
    return lambda: S.gammainc(t, u), lambda: sc.gammainc(a, x)


def betainc_1e6():
    a, t = _pos()
    x, u = _prob()
    return lambda: S.betainc(t, t, u), lambda: sc.betainc(a, a, x)


def gammainc_grad_a():
    """The derivative in a (series / continued fraction with the derivative carried) against
    the cheapest NumPy estimate: a central difference of two SciPy calls in float64."""
    a, t = _pos()
    x, u = _prob()
    g = nx.grad(lambda s: nx.sum(S.gammainc(s, u)))
    a64, x64 = a.astype(np.float64), x.astype(np.float64)

    def numpy_fd():
        h = 1e-6 * np.maximum(a64, 1.0)
        return ((sc.gammainc(a64 + h, x64) - sc.gammainc(a64 - h, x64)) / (2 * h)).astype(
            np.float32)
    return lambda: g(t), numpy_fd


CASES.update({f.__name__: f for f in [gammainc_1e6, betainc_1e6, gammainc_grad_a]})


# -- scipy.special's families by name, at 10**5 float64 values ----------------------------------

N5 = 10**5


@functools.cache
def _pos5():
    a = np.random.default_rng(5).uniform(0.1, 10.0, N5)
    return a, nx.asarray(a)


@functools.cache
def _unit5():
    a = np.random.default_rng(6).uniform(0.01, 1.99, N5)
    return a, nx.asarray(a)


def _family1(name, ours, theirs, data=_pos5):
    def case():
        a, t = data()
        return lambda: ours(t), lambda: theirs(a)
    case.__name__ = name
    return case


def _family2(name, ours, theirs, first):
    """first: the first operand (a Python scalar order, or None: the data again)."""
    def case():
        a, t = _pos5()
        if first is None:
            return lambda: ours(t, t), lambda: theirs(a, a)
        return lambda: ours(first, t), lambda: theirs(first, a)
    case.__name__ = name
    return case


def j0_grad_1e5():
    """The derivative of sum(j0(x)) against SciPy's -j1(x)."""
    a, t = _pos5()
    g = nx.grad(lambda x: nx.sum(S.j0(x)))
    return lambda: g(t), lambda: -sc.j1(a)


def spence_grad_1e5():
    """The derivative of sum(spence(x)) against NumPy's -log(x) / (x - 1)."""
    a, t = _pos5()
    g = nx.grad(lambda x: nx.sum(S.spence(x)))
    return lambda: g(t), lambda: -np.log(a) / (a - 1)


FAMILY_CASES = [
    _family1("gammasgn_1e5", S.gammasgn, sc.gammasgn),
    _family1("rgamma_1e5", S.rgamma, sc.rgamma),
    _family1("erfcinv_1e5", S.erfcinv, sc.erfcinv, _unit5),
    _family1("j0_1e5", S.j0, sc.j0), _family1("j1_1e5", S.j1, sc.j1),
    _family1("y0_1e5", S.y0, sc.y0), _family1("y1_1e5", S.y1, sc.y1),
    _family1("spence_1e5", S.spence, sc.spence), _family1("exp1_1e5", S.exp1, sc.exp1),
    _family1("expi_1e5", S.expi, sc.expi), _family1("zeta_riemann_1e5", S.zeta, sc.zeta),
    _family1("factorial_1e5", S.factorial, sc.factorial),
    _family2("jn_1e5", S.jn, sc.jn, 2), _family2("yn_1e5", S.yn, sc.yn, 2),
    _family2("iv_1e5", S.iv, sc.iv, 1.5), _family2("ive_1e5", S.ive, sc.ive, 1.5),
    _family2("kv_1e5", S.kv, sc.kv, 1.5), _family2("kve_1e5", S.kve, sc.kve, 1.5),
    _family2("expn_1e5", S.expn, sc.expn, 2), _family2("zeta_1e5", S.zeta, sc.zeta, None),
    _family2("beta_1e5", S.beta, sc.beta, None), _family2("poch_1e5", S.poch, sc.poch, None),
    _family2("kl_div_1e5", S.kl_div, sc.kl_div, None),
    _family2("rel_entr_1e5", S.rel_entr, sc.rel_entr, None),
    _family2("hyp1f1_1e5", lambda a, x: S.hyp1f1(a, 2.5, x),
             lambda a, x: sc.hyp1f1(a, 2.5, x), 1.5),
    j0_grad_1e5, spence_grad_1e5]
CASES.update({f.__name__: f for f in FAMILY_CASES})


@functools.cache
def _case(name):
    ours, ref_fn = CASES[name]()
    got, ref = np.asarray(ours()), np.asarray(ref_fn())
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=1e-6)
    return {"nx_rune": ours, "numpy": ref_fn}


@pytest.mark.parametrize("impl", ["nx_rune", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_bench(benchmark, name, impl):
    benchmark.group = name
    benchmark(_case(name)[impl])
