"""Smoke tests: every example runs in seconds with a small step count and its loss falls.

train_mlp is also checked for what it prints: the progress bar advancing (tqdm's output
captured), the final line, the plot and the claim of its docstring.
"""
import importlib.util
import pathlib
import re

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


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
