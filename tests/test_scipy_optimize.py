"""``nx.scipy.optimize.minimize`` against JAX's: the same iterates (BFGS and L-BFGS with the
strong-Wolfe zoom line search), eagerly, under ``jit`` and under ``vmap``.

The expected numbers are jax 0.10.2's (``jax.scipy.optimize.minimize``, x64 mode, CPU), pinned
here as literals; the tests never import jax.  JAX's BFGS stops on Rosenbrock's valley from
(-1.2, 1) with its zoom failed (status 3): that path is pinned too, it runs every branch of the
line search.
"""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune.scipy.optimize import OptimizeResults, minimize

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"

A = np.array([[3., 1., 0.2], [1., 2., 0.5], [0.2, 0.5, 1.5]])
B = np.array([1., -2., 0.5])


def rosen(x):
    return nx.sum(100. * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x, a, b):
    return 0.5 * x @ (a @ x) - b @ x


# jax 0.10.2, jax.scipy.optimize.minimize, x64
JAX = {
    "rosen2": dict(
        x=[-0.2778069614751315, 0.043338775200157394], success=False, status=3,
        fun=1.7472911993555371, jac=[-6.3157792231097165, -6.767586528777561],
        hess_inv=[[0.06769900933392967, -0.050390452734366785],
                  [-0.050390452734366764, 0.04021404667449725]], nfev=17, njev=17, nit=8),
    "rosen5": dict(
        x=[0.9967396880997339, 0.9945007484172954, 0.9885649736274327, 0.9754681770102098,
           0.9507830995860188], success=False, status=3, fun=0.0012757172677625042,
        jac=[-0.4094995230266976, 0.3768292605026298, 0.5925899298855737,
             -0.11295299724639647, -0.1510129547206476], nfev=25, njev=25, nit=19),
    "quad": dict(
        x=[0.8151382466339987, -1.5967976806839033, 0.7569142731008413], success=True,
        status=0, fun=-2.193595342066939,
        jac=[-8.616173902131763e-08, 2.1816612627567622e-08, 2.1863611010530803e-07],
        hess_inv=[[0.40108688692971445, -0.20475745483718905, 0.014476244571465376],
                  [-0.20475745483718907, 0.6503888422842221, -0.1891309729481458],
                  [0.01447624457146537, -0.18913097294814582, 0.7278100394752739]],
        nfev=10, njev=10, nit=8),
    "rosen2_maxiter5": dict(
        x=[-0.5093233117132628, 0.2428366863172165], success=False, status=1,
        fun=2.3055251137077875, jac=[-6.395164678309089, -3.3147099074698003],
        hess_inv=[[0.03978906066527686, -0.03661066896031376],
                  [-0.03661066896031376, 0.03798535220985277]], nfev=12, njev=12, nit=5),
    "lbfgs_rosen5": dict(
        x=[1.0000000074917565, 0.9999999721743824, 0.9999999956013813, 1.0000001401220642,
           1.000000266450366], success=False, status=4, fun=2.7031518405142446e-12,
        jac=[1.7138635937743052e-05, -2.911852309687484e-05, -4.932599444840772e-05,
             3.558161800448483e-05, -2.758756397749082e-06], nfev=42, njev=42, nit=27),
    "lbfgs_quad": dict(
        x=[0.8151380188513512, -1.5967959536580112, 0.7569150745445201], success=True,
        status=0, fun=-2.1935953420629035,
        jac=[1.1178049461602058e-06, 3.64880758896291e-06, 2.238758044836864e-06],
        nfev=8, njev=8, nit=7),
    "vmap": dict(
        x=[[-0.2778069614751315, 0.043338775200157394],
           [0.9999999946527616, 0.9999999891502032],
           [0.6288079404961225, 0.3878647867963095]],
        success=[False, True, False], status=[3, 0, 3],
        fun=[1.7472911993555371, 3.1005389304335506e-17, 0.14346062387838648],
        jac=[[-6.3157792231097165, -6.767586528777561],
             [5.143352588551144e-08, -3.106400153868266e-08],
             [1.152752272804815, -1.5069278469331415]],
        hess_inv=[[[0.06769900933392967, -0.050390452734366785],
                   [-0.050390452734366764, 0.04021404667449725]],
                  [[0.4998682201584099, 0.9997432796729108],
                   [0.9997432796729097, 2.004499736794352]],
                  [[0.2283312443626909, 0.2515266995788501],
                   [0.2515266995788494, 0.28003454915415454]]],
        nfev=[17, 37, 24], njev=[17, 37, 24], nit=[8, 24, 15]),
    # float32 (x0 float32): the same path, float32 rounding
    "rosen2_f32": dict(
        x=[-0.2778100073337555, 0.04334153234958649], success=False, status=3,
        fun=1.7472916841506958, jac=[-6.315708160400391, -6.767373561859131],
        nfev=17, njev=17, nit=8),
}


@pytest.fixture(autouse=True)
def x64():
    with nx.enable_x64():
        yield


def check(r, name, atol=1e-10, rtol=0.0):
    assert isinstance(r, OptimizeResults)
    for field, want in JAX[name].items():
        got = np.asarray(getattr(r, field))
        want = np.asarray(want)
        if want.dtype.kind in "bi":
            np.testing.assert_array_equal(got, want, err_msg=f"{name}.{field}")
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                       err_msg=f"{name}.{field}")


def run(name, wrap=lambda f: f):
    cases = {
        "rosen2": lambda: (rosen, [-1.2, 1.0], (), "BFGS", None),
        "rosen5": lambda: (rosen, [1.3, 0.7, 0.8, 1.9, 1.2], (), "BFGS", None),
        "quad": lambda: (quad, [0., 0., 0.], (nx.asarray(A), nx.asarray(B)), "BFGS", None),
        "rosen2_maxiter5": lambda: (rosen, [-1.2, 1.0], (), "BFGS", {"maxiter": 5}),
        "lbfgs_rosen5": lambda: (rosen, [1.3, 0.7, 0.8, 1.9, 1.2], (), LBFGS, None),
        "lbfgs_quad": lambda: (quad, [0., 0., 0.], (nx.asarray(A), nx.asarray(B)), LBFGS,
                               None),
    }
    fun, x0, args, method, options = cases[name]()
    solve = wrap(lambda x: minimize(fun, x, args, method=method, options=options))
    return solve(nx.asarray(np.array(x0)))


@pytest.mark.parametrize("name", ["rosen2", "rosen5", "quad", "rosen2_maxiter5",
                                  "lbfgs_rosen5", "lbfgs_quad"])
def test_minimize_matches_jax(name):
    check(run(name), name)


@pytest.mark.parametrize("name", ["rosen2", "quad", "lbfgs_quad"])
def test_minimize_under_jit_matches_jax(name):
    check(run(name, nx.jit), name)


def test_minimize_under_vmap_matches_jax():
    x0 = nx.asarray(np.array([[-1.2, 1.0], [2., 2.], [0.5, -0.5]]))
    check(nx.vmap(lambda x: minimize(rosen, x, method="BFGS"))(x0), "vmap")


def test_minimize_float32_matches_jax_to_float32_rounding():
    r = minimize(rosen, nx.asarray(np.array([-1.2, 1.0], np.float32)), method="BFGS")
    assert r.x.dtype == np.float32 and r.hess_inv.dtype == np.float32
    check(r, "rosen2_f32", atol=1e-5, rtol=1e-5)


def test_minimize_quadratic_solves_the_linear_system():
    r = minimize(quad, nx.zeros(3), args=(nx.asarray(A), nx.asarray(B)), method="bfgs",
                 options={"gtol": 1e-8})
    assert bool(r.success) and int(r.status) == 0
    np.testing.assert_allclose(np.asarray(r.x), np.linalg.solve(A, B), atol=1e-8)
    # the inverse Hessian estimate approaches A^-1
    np.testing.assert_allclose(np.asarray(r.hess_inv), np.linalg.inv(A), atol=2e-3)


def test_minimize_int_x0_is_taken_as_float():
    r = minimize(lambda x: nx.sum((x - 2.5) ** 2), nx.asarray([0, 1]), method="BFGS")
    assert r.x.dtype == np.float64
    np.testing.assert_allclose(np.asarray(r.x), [2.5, 2.5], atol=1e-8)


def test_minimize_bad_input():
    f = lambda x: nx.sum(x ** 2)  # noqa: E731
    with pytest.raises(TypeError, match="args .* must be a tuple"):
        minimize(f, nx.ones(2), args=45, method="BFGS")
    with pytest.raises(ValueError, match="method 'newton' not recognized"):
        minimize(f, nx.ones(2), method="newton")
    with pytest.raises(TypeError, match="method"):
        minimize(f, nx.ones(2))
    with pytest.raises(ValueError, match="x0 must be a 1-D array"):
        minimize(f, nx.ones((2, 2)), method="BFGS")
    with pytest.raises(TypeError, match=r"options \['maxfun'\]"):
        minimize(f, nx.ones(2), method="BFGS", options={"maxfun": 3})
    with pytest.raises(TypeError, match="fun must be callable"):
        minimize(3.0, nx.ones(2), method="BFGS")


def test_minimize_x64_off_dtypes_match_jax():
    # x64 off: Python floats give float32 and the counters int32, as JAX's (same numbers as
    # the float32 case above)
    with nx.enable_x64(False):
        r = minimize(rosen, nx.asarray([-1.2, 1.0]), method="BFGS")
    assert r.x.dtype == np.float32 and r.fun.dtype == np.float32
    for field in ["status", "nfev", "njev", "nit"]:
        assert getattr(r, field).dtype == np.int32, field
    check(r, "rosen2_f32", atol=1e-5, rtol=1e-5)
