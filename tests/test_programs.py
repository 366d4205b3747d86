"""The research programs of benchmarks/programs/ (timed in benchmarks/bench_programs.py): each
nx_rune port computes what its HIPS autograd original computes, to float64 round-off.

Every test checks the nx_rune version against golden values pinned once from the autograd
version (so nothing skips without autograd), and against the autograd version itself, on the
full arrays, when autograd is installed.  The goldens are probes of each array: its norm, its
dot product with cos(1 + arange(size)), its first and last elements.
"""
import importlib.util
import pathlib
import sys

import numpy as np

import nx_rune as nx

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.programs import char_rnn_nx, data, fluid_nx, gmm_nx, logistic_nx, svi_nx  # noqa: E402

HAVE_AUTOGRAD = importlib.util.find_spec("autograd") is not None
A = nx.asarray
RTOL = 1e-10   # float64 round-off, with room for different summation orders


def autograd_version(name):
    return importlib.import_module(f"benchmarks.programs.{name}_autograd")


def probe(a):
    a = np.asarray(a, dtype=np.float64).ravel()
    w = np.cos(1.0 + np.arange(a.size))
    return np.array([np.sqrt(a @ a), a @ w, a[0], a[-1]])


def check_probe(actual, golden, what):
    """``actual`` (an array) against pinned probes of the autograd result: each within
    RTOL times the array's norm."""
    p = probe(actual)
    assert np.all(np.abs(p - np.asarray(golden)) <= RTOL * max(golden[0], 1e-300)
                  * np.array([1.0, np.sqrt(p.size), 1.0, 1.0])), (what, p, golden)


def check_value(actual, golden, what):
    assert abs(float(actual) - golden) <= RTOL * abs(golden), (what, float(actual), golden)


def check_same(actual, expected, what):
    """Full arrays against the autograd result: round-off relative to the largest element."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == np.float64, what
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-12 * scale, err_msg=what)


GOLDEN = {
    "logistic": {"loss": 0.6936962507737658,
                 "grad": (0.03366200058437391, -0.03265714990018614, -0.002473630126704193,
                          -0.0013716700202091928),
                 "train": (0.2357999764516605, -0.03411527030775021, 0.003420477264453662,
                           0.011945880678235182)},
    "char_rnn": {"loss": 3.330952369391457,
                 "Why": (0.19007679325704338, 0.0008473223035826843, -0.002621375377105387,
                         -0.0020828119546949693),
                 "Wxh": (0.2769903725180381, -0.011371764492883199, -0.01865598365024237,
                         0.0009069209444616969),
                 "bh": (0.20239734774467877, -0.10677300877036326, 0.005716763507602609,
                        0.02174319721334369),
                 "by": (0.17829168182349608, -0.09771388025336965, -0.1511765371711513,
                        0.0220189276752316),
                 "h0": (0.016430365714264924, 0.021375364284502603, 0.0006367082123803021,
                        0.0005276769083835251)},
    "svi": {"loss": 96.95655145498785,
            "grad_mean": (42.93673471971775, -13.6569313100284, -8.598251704184857,
                          8.170601750070297),
            "grad_log_std": (8.073432580530723, -0.5629621233568187, 1.8501804064905665,
                             0.7253010053179918),
            # 5 steps of fit from nx.random.key(0): autograd's fit given the same draws
            "fit_mean": (1.4085151191623768, 0.22049706116521894, 0.358980334370524,
                         -0.10491004427742245),
            "fit_log_std": (4.772454476294878, -0.2592357643694533, -1.1349969007398488,
                            -1.0811037397566243)},
    "fluid": {"loss": 47.46799312175146,
              "grad_u": (0.22829102692448736, -0.0789059273524133, 0.0009863850459303784,
                         0.0013411427872192605),
              "grad_v": (0.20642376455923026, 0.010517473959477452, -0.0005739360339980411,
                         -0.0003698128799879671)},
    "gmm": {"loss": 1107.5581141573325,
            "grad": (73.30117072692458, -40.178438296898, -7.455980036692374,
                     9.430871076037732),
            "hvp": (424.5270468699789, 209.36552161660234, -0.7829070284623221,
                    -67.35874173743626),
            "eig": 121.05219342134845,
            "direction": (0.9999999999999999, 0.4971446450391125, 0.022510693317930756,
                          -0.1415889062098496)},
}


def test_logistic_regression():
    x, t, w = data.logistic()
    gold = GOLDEN["logistic"]
    loss = logistic_nx.loss(A(w), A(x), A(t))
    grad = logistic_nx.loss_grad(A(w), A(x), A(t))
    trained = logistic_nx.train(A(w), A(x), A(t))
    check_value(loss, gold["loss"], "loss")
    check_probe(grad, gold["grad"], "grad")
    check_probe(trained, gold["train"], "train")
    if HAVE_AUTOGRAD:
        ag = autograd_version("logistic")
        check_same(grad, ag.loss_grad(w, x, t), "grad")
        check_same(trained, ag.train(w, x, t), "train")


def test_char_rnn():
    inputs, targets, params = data.char_rnn()
    gold = GOLDEN["char_rnn"]
    nxp = {k: A(v) for k, v in params.items()}
    value, grads = char_rnn_nx.loss_and_grad(nxp, A(inputs), A(targets))
    check_value(value, gold["loss"], "loss")
    assert sorted(grads) == sorted(params)
    for k in params:
        check_probe(grads[k], gold[k], k)
    value2, stepped = char_rnn_nx.sgd_step(nxp, A(inputs), A(targets), lr=0.1)
    check_value(value2, gold["loss"], "sgd_step loss")
    for k in params:   # the step moves each parameter by -0.1 * its gradient
        check_same(stepped[k], params[k] - 0.1 * np.asarray(grads[k]), f"sgd_step {k}")
    if HAVE_AUTOGRAD:
        ag_value, ag_grads = autograd_version("char_rnn").loss_and_grad(params, inputs, targets)
        check_value(value, float(ag_value), "loss vs autograd")
        for k in params:
            check_same(grads[k], ag_grads[k], k)


class _Replay:
    """A stand-in for numpy's Generator that hands out given standard normal draws."""

    def __init__(self, draws):
        self.draws = list(draws)

    def standard_normal(self, shape):
        d = self.draws.pop(0)
        assert d.shape == shape
        return d


def _nx_draws(steps=5, shape=(32, 20)):
    """The noise svi_nx.fit draws from nx.random.key(0), as ndarrays."""
    key, out = nx.random.key(0), []
    for _ in range(steps):
        key, sub = nx.random.split(key)
        out.append(np.asarray(nx.random.normal(sub, shape, dtype=nx.float64)))
    return out


def test_black_box_svi():
    x, y, mean, log_std, eps = data.svi()
    gold = GOLDEN["svi"]
    args = (A(x), A(y), A(eps))
    check_value(svi_nx.neg_elbo((A(mean), A(log_std)), *args), gold["loss"], "neg_elbo")
    g_mean, g_log_std = svi_nx.neg_elbo_grad((A(mean), A(log_std)), *args)
    check_probe(g_mean, gold["grad_mean"], "grad mean")
    check_probe(g_log_std, gold["grad_log_std"], "grad log_std")
    fit_mean, fit_log_std = svi_nx.fit((A(mean), A(log_std)), A(x), A(y), nx.random.key(0))
    check_probe(fit_mean, gold["fit_mean"], "fit mean")
    check_probe(fit_log_std, gold["fit_log_std"], "fit log_std")
    if HAVE_AUTOGRAD:
        ag = autograd_version("svi")
        ag_mean, ag_log_std = ag.neg_elbo_grad((mean, log_std), x, y, eps)
        check_same(g_mean, ag_mean, "grad mean")
        check_same(g_log_std, ag_log_std, "grad log_std")
        ag_fit = ag.fit((mean, log_std), x, y, _Replay(_nx_draws()))
        check_same(fit_mean, ag_fit[0], "fit mean")
        check_same(fit_log_std, ag_fit[1], "fit log_std")


def test_fluid_simulation():
    u, v, rho, target = data.fluid()
    gold = GOLDEN["fluid"]
    value, (gu, gv) = fluid_nx.loss_and_grad((A(u), A(v)), A(rho), A(target))
    check_value(value, gold["loss"], "loss")
    check_probe(gu, gold["grad_u"], "grad u")
    check_probe(gv, gold["grad_v"], "grad v")
    if HAVE_AUTOGRAD:
        ag_value, (ag_u, ag_v) = autograd_version("fluid").loss_and_grad((u, v), rho, target)
        check_value(value, float(ag_value), "loss vs autograd")
        check_same(gu, ag_u, "grad u")
        check_same(gv, ag_v, "grad v")


def test_gaussian_mixture_hvp():
    x, params, vec = data.gmm()
    gold = GOLDEN["gmm"]
    check_value(gmm_nx.neg_log_likelihood(A(params), A(x)), gold["loss"], "loss")
    hv = gmm_nx.nll_hvp(A(params), A(x), A(vec))
    check_probe(hv, gold["hvp"], "hvp")
    g, eig, direction = gmm_nx.curvature(A(params), A(x), A(vec))
    check_probe(g, gold["grad"], "grad")
    check_value(eig, gold["eig"], "top eigenvalue estimate")
    check_probe(direction, gold["direction"], "direction")
    if HAVE_AUTOGRAD:
        ag = autograd_version("gmm")
        check_same(hv, ag.nll_hvp(params, x, vec), "hvp")
        ag_g, ag_eig, ag_dir = ag.curvature(params, x, vec)
        check_same(g, ag_g, "grad")
        check_same(direction, ag_dir, "direction")
