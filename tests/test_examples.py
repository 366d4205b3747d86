"""Smoke tests: every example runs in seconds with a small step count and its loss falls."""
import importlib.util
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_mlp_loss_falls_and_learns(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    mod = load("train_mlp")
    plot = tmp_path / "loss.png"
    argv = ["--epochs", "4"]
    if importlib.util.find_spec("matplotlib") is not None:
        argv += ["--plot", str(plot)]
    losses, acc = mod.main(argv)
    assert losses[-1] < 0.5 * losses[0]
    assert acc > 0.85
    if "--plot" in argv:
        assert plot.stat().st_size > 1000


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
