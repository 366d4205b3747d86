"""The multivariate normal's log-density against SciPy's, and a Gaussian mixture's gradient
(autograd's examples/gmm.py program: mvn.logpdf of every point under each component inside a
logsumexp) against HIPS autograd, interleaved round by round in one run:

    python benchmarks/bench_mvn.py          # the table: min/median/max and peer/nx
    python benchmarks/bench_mvn.py --busy   # the same next to one busy process
    python -m pytest benchmarks/bench_mvn.py --benchmark-only

logpdf cases: x (300, 2) and (3000, 2) with a 2 x 2 covariance, and 256 points in d = 16 and
d = 64 (float64, eager; ``scipy.stats.multivariate_normal.logpdf`` as the peer).  The GMM: 10
components in 2-d, 300 points (the pinwheel data's size), parameters as autograd's example
packs them (log-proportions, means, covariance square roots, cov = S^T S), ``grad`` of the
log marginal likelihood.  ``peer/nx`` above 1: nx_rune is faster.  Autograd and SciPy are
benchmark peers only (the tests never import them).
"""
import os
import sys

import numpy as np
import pytest
import scipy.stats

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]        # bench_peer_ratios, and nx_rune as a script
import nx_rune as nx  # noqa: E402
from bench_peer_ratios import _record, interleaved, main_with_busy  # noqa: E402

CASES = {"300x2": (300, 2), "3000x2": (3000, 2), "256x16": (256, 16), "256x64": (256, 64)}


def _mvn_data(n_points, d):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((d, d))
    cov = a @ a.T + d * np.eye(d)
    return rng.standard_normal((n_points, d)), rng.standard_normal(d), cov


@pytest.mark.parametrize("case", list(CASES))
def test_mvn_logpdf_interleaved_scipy(benchmark, case):
    benchmark.group = f"mvn logpdf {case}"
    x, mean, cov = _mvn_data(*CASES[case])
    tx, tm, tc = nx.asarray(x), nx.asarray(mean), nx.asarray(cov)
    mine = lambda: nx.scipy.stats.multivariate_normal.logpdf(tx, tm, tc)  # noqa: E731
    peer = lambda: scipy.stats.multivariate_normal.logpdf(x, mean, cov)    # noqa: E731
    np.testing.assert_allclose(np.asarray(mine()), peer(), rtol=1e-10)
    _record(benchmark, interleaved(mine, peer))
    benchmark(mine)


# -- the Gaussian mixture (autograd's examples/gmm.py) --------------------------------------------

K, D, N = 10, 2, 300


def _gmm_data():
    rng = np.random.default_rng(1)
    params = np.concatenate([rng.standard_normal(K) * 0.1, rng.standard_normal(K * D),
                             (np.eye(D)[None] + 0.1 * rng.standard_normal((K, D, D))).ravel()])
    x = rng.standard_normal((N, D)) * 2
    return params, x


def _gmm_program(lib, mvn_logpdf, logsumexp):
    def unpack(params):
        return (params[:K], lib.reshape(params[K:K + K * D], (K, D)),
                lib.reshape(params[K + K * D:], (K, D, D)))

    def log_marginal_likelihood(params, data):
        log_prop, means, sqrts = unpack(params)
        log_prop = log_prop - logsumexp(log_prop)
        cluster_lls = []
        for k in range(K):
            cov = lib.dot(sqrts[k].T, sqrts[k])
            cluster_lls.append(log_prop[k] + mvn_logpdf(data, means[k], cov))
        return lib.sum(logsumexp(lib.vstack(cluster_lls), axis=0))
    return log_marginal_likelihood


def test_gmm_grad_interleaved_autograd(benchmark):
    ag = pytest.importorskip("autograd")
    import autograd.numpy as anp
    import autograd.scipy.special as asp
    import autograd.scipy.stats.multivariate_normal as amvn
    benchmark.group = "gmm grad (10 components, 300 x 2)"
    params, x = _gmm_data()
    f_nx = nx.grad(_gmm_program(nx, nx.scipy.stats.multivariate_normal.logpdf, nx.logsumexp))
    f_ag = ag.grad(_gmm_program(anp, amvn.logpdf, asp.logsumexp))
    tp, tx = nx.asarray(params), nx.asarray(x)
    np.testing.assert_allclose(np.asarray(f_nx(tp, tx)), f_ag(params, x), rtol=1e-8,
                               atol=1e-10)
    _record(benchmark, interleaved(lambda: f_nx(tp, tx), lambda: f_ag(params, x)))
    benchmark(lambda: f_nx(tp, tx))


if __name__ == "__main__":
    main_with_busy(__file__, sys.argv[1:])
