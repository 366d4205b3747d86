"""Smoke tests: every example runs in seconds with a small step count and its loss falls.

The two longer examples are also checked for what they print: the progress bar advancing (tqdm's
output captured), the final lines, the plot, the claims of their docstrings, and the Gaussian
process against scikit-learn's GaussianProcessRegressor.
"""
import importlib.util
import pathlib
import re

import numpy as np
import pytest

import nx_rune as nx

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(autouse=True)
def one_blas_thread():
    """Run the examples on one BLAS thread.

    On a 2-core machine shared with other jobs, OpenBLAS's threads spend more time waiting than
    computing on 442 x 442 matrices: one value_and_grad of the Gaussian process's likelihood
    cost 0.12 s of CPU with two threads, 0.02 s with one.  Results do not depend on it.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bar_counts(stderr, total):
    """The counts "n/total" that tqdm drew, in order."""
    return [int(n) for n in re.findall(rf"(\d+)/{total} \[", stderr)]


def final_bar(stderr):
    """The bar as it stays on screen: the last redraw, ended by a newline (leave=True)."""
    last = stderr.split("\r")[-1]
    assert last.endswith("\n"), f"the bar was erased at the end: {stderr[-200:]!r}"
    return last


def read_png(path):
    import matplotlib.image

    return matplotlib.image.imread(path)


# -- train_mlp ----------------------------------------------------------------------------------

FINAL_MLP = re.compile(r"final training loss (\d+\.\d{4}); test accuracy (\d+\.\d) %")


def test_train_mlp_bar_advances_and_prints_accuracy(tmp_path, capsys):
    mod = load("train_mlp")
    plot = tmp_path / "loss.png"
    losses, acc = mod.main(["--epochs", "4", "--plot", str(plot)])
    out, err = capsys.readouterr()
    assert len(losses) == 4 and losses[-1] < 0.5 * losses[0]
    assert acc > 0.85
    # one bar over the run (4 epochs of 23 steps), redrawn at least at the end of every epoch
    counts = bar_counts(err, 92)
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] == 92
    assert {23, 46, 69, 92} <= set(counts)
    assert err.count("epoch_mean=") >= 4
    assert "92/92" in final_bar(err) and "epoch=4/4" in final_bar(err)
    match = FINAL_MLP.search(out)
    assert match, out
    assert float(match.group(1)) == pytest.approx(losses[-1], abs=5e-5)
    assert float(match.group(2)) == pytest.approx(acc * 100, abs=0.05)
    image = read_png(plot)
    assert image.shape[:2] == (420, 600)
    assert image[..., :3].std() > 0.05    # not a blank canvas


def test_train_mlp_docstring_claim_matches_the_default_run(capsys):
    mod = load("train_mlp")
    claimed = FINAL_MLP.search(mod.__doc__)
    assert claimed, "the docstring quotes the final line"
    losses, acc = mod.main(["--no-progress"])
    out, err = capsys.readouterr()
    assert err == ""
    printed = FINAL_MLP.search(out)
    # the same to within what another BLAS's float32 rounding could move over 690 steps
    assert abs(float(printed.group(2)) - float(claimed.group(2))) <= 1.0
    assert float(printed.group(1)) == pytest.approx(float(claimed.group(1)), rel=0.15)
    assert acc > 0.95


@pytest.mark.parametrize("argv, name", [(["--epochs", "0"], "--epochs"),
                                        (["--batch-size", "x"], "--batch-size")])
def test_train_mlp_bad_arguments(argv, name, capsys):
    mod = load("train_mlp")
    with pytest.raises(SystemExit) as info:
        mod.main(argv)
    assert info.value.code == 2
    assert name in capsys.readouterr().err


# -- gp_regression ------------------------------------------------------------------------------

def sklearn_gp(theta, x, y, noise_as_kernel):
    """scikit-learn's regressor with the same kernel at fixed hyperparameters exp(theta)."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    ls, sf2, sn2 = np.exp(theta)
    if noise_as_kernel:   # WhiteKernel: predict's std includes the noise (a new observation)
        kernel = ConstantKernel(sf2) * RBF(ls) + WhiteKernel(sn2)
        gp = GaussianProcessRegressor(kernel, alpha=0.0, optimizer=None)
    else:                 # alpha: noise on the training points only, std of the latent f
        kernel = ConstantKernel(sf2) * RBF(ls)
        gp = GaussianProcessRegressor(kernel, alpha=sn2, optimizer=None)
    return gp.fit(x[:, None], y)


@pytest.mark.parametrize("which", ["start", "other"])
def test_gp_matches_scikit_learn_at_fixed_hyperparameters(which):
    mod = load("gp_regression")
    x, y, _ = mod.load_data("s5")
    assert x.shape == y.shape == (442,) and abs(y.mean()) < 1e-9
    theta = mod.initial_theta(x, y) if which == "start" else np.log([0.4, 2500.0, 4500.0])
    grid = np.linspace(3.0, 6.5, 41)
    with_noise = sklearn_gp(theta, x, y, noise_as_kernel=True)
    latent = sklearn_gp(theta, x, y, noise_as_kernel=False)
    # scikit-learn's theta is (log sf2, log ls, log sn2); ours is (log ls, log sf2, log sn2)
    ref_lml, ref_grad = with_noise.log_marginal_likelihood(
        with_noise.kernel_.theta, eval_gradient=True)
    ref_mean, ref_pred_std = with_noise.predict(grid[:, None], return_std=True)
    _, ref_latent_std = latent.predict(grid[:, None], return_std=True)
    np.testing.assert_allclose(with_noise.kernel_.theta, theta[[1, 0, 2]], rtol=1e-12)
    with nx.enable_x64():
        t, xs, ys = nx.asarray(theta), nx.asarray(x), nx.asarray(y)
        lml, grad = nx.value_and_grad(mod.log_marginal_likelihood)(t, xs, ys)
        mean, latent_var, pred_var = mod.posterior(t, xs, ys, nx.asarray(grid))
    assert lml.dtype == grad.dtype == mean.dtype == nx.float64
    assert float(lml) == pytest.approx(latent.log_marginal_likelihood_value_, rel=1e-12)
    assert float(lml) == pytest.approx(ref_lml, rel=1e-12)
    np.testing.assert_allclose(grad.numpy(), ref_grad[[1, 0, 2]], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(mean.numpy(), ref_mean, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.sqrt(latent_var.numpy()), ref_latent_std, rtol=1e-7)
    np.testing.assert_allclose(np.sqrt(pred_var.numpy()), ref_pred_std, rtol=1e-9)


FINAL_LML = re.compile(r"log marginal likelihood (-?\d+\.\d{3})")
FINAL_HP = re.compile(r"length scale ([\d.]+), signal variance ([\d.]+), noise variance ([\d.]+)")


def test_gp_example_fits_prints_and_plots(tmp_path, capsys):
    mod = load("gp_regression")
    assert not nx.config.x64_enabled()
    plot = tmp_path / "gp.png"
    result = mod.main(["--steps", "30", "--plot", str(plot)])
    out, err = capsys.readouterr()
    assert not nx.config.x64_enabled()   # the float64 block did not leak
    counts = bar_counts(err, 30)
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] == 30
    assert {10, 20} <= set(counts)        # drawn while running, not only at start and end
    assert "30/30" in final_bar(err) and "lml=" in final_bar(err)
    history = result["history"]
    assert len(history) == 30 and history[-1] > history[0] + 10
    assert float(FINAL_LML.search(out).group(1)) == pytest.approx(result["lml"], abs=5e-4)
    assert result["lml"] > history[-1]    # the value after the last update
    printed = [float(v) for v in FINAL_HP.search(out).groups()]
    assert printed == pytest.approx([result["length_scale"], result["signal_variance"],
                                     result["noise_variance"]], rel=1e-3)
    assert np.exp(result["theta"]) == pytest.approx(
        [result["length_scale"], result["signal_variance"], result["noise_variance"]])
    image = read_png(plot)
    assert image.shape[:2] == (480, 720)
    assert image[..., :3].std() > 0.05


def test_gp_docstring_claim_matches_the_default_run(capsys):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    mod = load("gp_regression")
    doc = " ".join(mod.__doc__.split())
    claimed_lml = float(FINAL_LML.search(doc).group(1))
    claimed = [float(v) for v in FINAL_HP.search(doc).groups()]
    result = mod.main(["--no-progress"])
    out, err = capsys.readouterr()
    assert err == ""
    assert float(FINAL_LML.search(out).group(1)) == pytest.approx(claimed_lml, abs=2e-3)
    printed = [float(v) for v in FINAL_HP.search(out).groups()]
    assert printed == pytest.approx(claimed, rel=1e-3)
    # and the docstring's scikit-learn figures: its fit from the same start
    x, y = result["x"], result["y"]
    ls, sf2, sn2 = np.exp(mod.initial_theta(x, y))
    kernel = ConstantKernel(sf2, (1e-5, 1e8)) * RBF(ls, (1e-5, 1e5)) + WhiteKernel(sn2, (1e-5, 1e8))
    ref = GaussianProcessRegressor(kernel).fit(x[:, None], y)
    assert ref.log_marginal_likelihood_value_ == pytest.approx(claimed_lml, abs=2e-3)
    np.testing.assert_allclose(result["theta"], ref.kernel_.theta[[1, 0, 2]], atol=1e-3)


@pytest.mark.parametrize("argv, name", [(["--steps", "0"], "--steps"),
                                        (["--feature", "sex"], "--feature")])
def test_gp_bad_arguments(argv, name, capsys):
    mod = load("gp_regression")
    with pytest.raises(SystemExit) as info:
        mod.main(argv)
    assert info.value.code == 2
    assert name in capsys.readouterr().err


def test_gp_load_data_names_a_bad_feature():
    mod = load("gp_regression")
    with pytest.raises(ValueError, match="feature.*'glucose'"):
        mod.load_data("glucose")


# -- the README ---------------------------------------------------------------------------------

def test_readme_commands_name_existing_examples_and_quote_the_docstring():
    readme = (EXAMPLES.parent / "README.md").read_text()
    commands = re.findall(r"python (examples/\w+\.py)", readme)
    assert {"examples/train_mlp.py", "examples/gp_regression.py"} <= set(commands)
    assert all((EXAMPLES.parent / c).is_file() for c in commands)
    quoted = re.search(r"then the test accuracy, (\d+\.\d) %", readme)
    assert quoted, "the README quotes the MLP's accuracy"
    assert quoted.group(1) == FINAL_MLP.search(load("train_mlp").__doc__).group(2)


# -- the short examples -------------------------------------------------------------------------

def test_logistic_newton_converges():
    mod = load("logistic_newton")
    losses = mod.main(["--steps", "6"])
    assert losses[1] < losses[0]
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:]))
    assert abs(losses[-1] - losses[-2]) < 1e-10


def test_jvp_demo_jacobians_agree():
    jf, jr = load("jvp_demo").main([])
    x0, x1, x2 = 0.5, -1.0, 2.0
    expected = np.array([[np.cos(x0) * x1, np.sin(x0), 0.0], [np.exp(x0), 0.0, 2 * x2]])
    np.testing.assert_allclose(jf, expected, rtol=1e-12)
    np.testing.assert_allclose(jr, expected, rtol=1e-12)


def test_random_demo_moments():
    u, z = load("random_demo").main([])
    assert abs(u.mean() - 0.5) < 0.01 and abs(z.mean()) < 0.02 and abs(z.var() - 1) < 0.02
