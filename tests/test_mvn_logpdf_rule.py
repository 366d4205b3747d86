"""multivariate_normal.logpdf with one mean (n,) and one covariance (n, n): its own derivative
rule (nx_rune/scipy/_mvn.py, a custom_vjp on the residuals z = cov^-1 (x - mean) and cov^-1)
against SciPy's values, float64 central differences, and the composition's derivatives;
forward mode, second order, jit and vmap through it."""
import numpy as np
import pytest
import scipy.stats

import nx_rune as nx

mvn = nx.scipy.stats.multivariate_normal


def _data(n_points, d, seed=0, batch=None):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((d, d))
    cov = a @ a.T + d * np.eye(d)
    shape = (n_points, d) if batch is None else batch + (d,)
    return rng.standard_normal(shape), rng.standard_normal(d), cov


def _fd(f, x, h=1e-6):
    """Central differences of the scalar f at every entry of x."""
    g = np.empty_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("n_points,d,batch", [(300, 2, None), (40, 16, None), (1, 3, (2, 3, 4)),
                                              (1, 5, ())])
def test_values_match_scipy(n_points, d, batch):
    x, mean, cov = _data(n_points, d, batch=batch)
    got = np.asarray(mvn.logpdf(nx.asarray(x), nx.asarray(mean), nx.asarray(cov)))
    np.testing.assert_allclose(got, scipy.stats.multivariate_normal.logpdf(x, mean, cov),
                               rtol=1e-12, atol=1e-12)
    assert got.shape == x.shape[:-1]


@pytest.mark.parametrize("n_points,d,batch", [(30, 2, None), (12, 6, None), (1, 3, (2, 3))])
def test_gradients_match_central_differences(n_points, d, batch):
    x, mean, cov = _data(n_points, d, seed=1, batch=batch)
    w = np.random.default_rng(2).standard_normal(x.shape[:-1])

    def f(xv, mv, cv):
        return float(np.sum(w * scipy.stats.multivariate_normal.logpdf(xv, mv, (cv + cv.T) / 2)))

    def f_nx(a, b, c):
        return nx.sum(nx.asarray(w) * mvn.logpdf(a, b, c))

    gx, gm, gc = nx.grad(f_nx, argnums=(0, 1, 2))(nx.asarray(x), nx.asarray(mean),
                                                  nx.asarray(cov))
    np.testing.assert_allclose(np.asarray(gx), _fd(lambda v: f(v, mean, cov), x), rtol=1e-6,
                               atol=1e-7)
    np.testing.assert_allclose(np.asarray(gm), _fd(lambda v: f(x, v, cov), mean), rtol=1e-6,
                               atol=1e-7)
    gc = np.asarray(gc)
    # cov is taken as symmetric: the derivative is the symmetric one, exactly
    np.testing.assert_array_equal(gc, gc.T)
    np.testing.assert_allclose(gc, _fd(lambda v: f(x, mean, v), cov), rtol=1e-6, atol=1e-7)


def test_forward_mode_and_second_order():
    x, mean, cov = _data(20, 3, seed=3)
    tx, tm, tc = nx.asarray(x), nx.asarray(mean), nx.asarray(cov)
    rng = np.random.default_rng(4)
    vx, vm, vc = rng.standard_normal(x.shape), rng.standard_normal(3), rng.standard_normal((3, 3))
    vc = vc + vc.T

    def total(a, b, c):
        return nx.sum(mvn.logpdf(a, b, c))

    def f(a, b, c):
        return float(np.sum(scipy.stats.multivariate_normal.logpdf(a, b, (c + c.T) / 2)))

    h = 1e-6
    _, t = nx.jvp(total, (tx, tm, tc), (nx.asarray(vx), nx.asarray(vm), nx.asarray(vc)))
    want = (f(x + h * vx, mean + h * vm, cov + h * vc)
            - f(x - h * vx, mean - h * vm, cov - h * vc)) / (2 * h)
    np.testing.assert_allclose(float(t), want, rtol=1e-6)
    # Hessian-vector products in cov (forward over reverse) against differences of gradients
    grad_c = nx.grad(total, argnums=2)
    _, hv = nx.jvp(lambda c: grad_c(tx, tm, c), (tc,), (nx.asarray(vc),))
    fd = (np.asarray(grad_c(tx, tm, nx.asarray(cov + 1e-5 * vc)))
          - np.asarray(grad_c(tx, tm, nx.asarray(cov - 1e-5 * vc)))) / 2e-5
    np.testing.assert_allclose(np.asarray(hv), fd, rtol=1e-5, atol=1e-8)
    # reverse over reverse in mean
    hm = nx.hessian(total, argnums=1)(tx, tm, tc)
    np.testing.assert_allclose(np.asarray(hm), -20 * np.linalg.inv(cov), rtol=1e-10)


def test_jit_and_vmap_equal_eager():
    x, mean, cov = _data(25, 4, seed=5)
    tx, tm, tc = nx.asarray(x), nx.asarray(mean), nx.asarray(cov)
    g = nx.grad(lambda a, b, c: nx.sum(mvn.logpdf(a, b, c)), argnums=(0, 1, 2))
    eager = g(tx, tm, tc)
    for got in (nx.jit(g)(tx, tm, tc),):
        for e, j in zip(eager, got):
            np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-12, atol=1e-12)
    per_point = nx.vmap(lambda xi: mvn.logpdf(xi, tm, tc))(tx)
    np.testing.assert_allclose(np.asarray(per_point),
                               scipy.stats.multivariate_normal.logpdf(x, mean, cov), rtol=1e-12)
    covs = np.stack([cov, 2 * cov])
    per_cov = nx.vmap(lambda c: nx.sum(mvn.logpdf(tx, tm, c)))(nx.asarray(covs))
    np.testing.assert_allclose(
        np.asarray(per_cov),
        [scipy.stats.multivariate_normal.logpdf(x, mean, c).sum() for c in covs], rtol=1e-12)
    gv = nx.vmap(nx.grad(lambda c: nx.sum(mvn.logpdf(tx, tm, c))))(nx.asarray(covs))
    np.testing.assert_allclose(np.asarray(gv)[0], np.asarray(eager[2]), rtol=1e-10)


def test_not_positive_definite_raises():
    x, mean, _ = _data(5, 2)
    with pytest.raises(np.linalg.LinAlgError):
        nx.grad(lambda c: nx.sum(mvn.logpdf(nx.asarray(x), nx.asarray(mean), c)))(
            nx.asarray(-np.eye(2)))
