"""The README: its quickstart runs and prints what the README shows (with the analytic values),
its commands are the ones CI runs, and its numbers match what they describe."""
import contextlib
import io
import pathlib
import re
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEST_COMMAND = 'python -m pip install -e ".[test]" && python -m pytest -q'
EXAMPLE_COMMAND = ('python -m pip install -e ".[examples]" && '
                   "python examples/train_mlp.py --plot loss.png")


def blocks(lang="python"):
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), re.S)


def run_quickstart():
    ns, out = {}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(blocks()[0], ns)
    return ns, out.getvalue()


def test_quickstart_values():
    ns, _ = run_quickstart()
    w = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(ns["g"].numpy(), np.cos(w) * w**2 + 2 * w * np.sin(w), rtol=1e-12)
    hess = -np.sin(w) * w**2 + 4 * w * np.cos(w) + 2 * np.sin(w)
    np.testing.assert_allclose(ns["H"].numpy(), np.diag(hess), atol=1e-12)
    np.testing.assert_allclose(float(ns["t"]), np.sum(np.cos(w) * w**2 + 2 * w * np.sin(w)),
                               rtol=1e-12)
    np.testing.assert_allclose(float(ns["d3"]), -np.cos(1.0), rtol=1e-6)
    assert ns["z"].shape == (2, 3) and ns["p"].shape == (5, 6) and ns["v"].shape == (4, 2)
    # jax 0.10.2: jax.random.normal(jax.random.split(jax.random.PRNGKey(0))[0], (2, 3))
    np.testing.assert_array_equal(ns["z"].numpy(), np.array(
        [[1.0040143, -0.9063372, -0.7481722], [-1.1713669, -0.8712328, 0.5888381]],
        np.float32))


def test_quickstart_prints_what_the_readme_shows():
    _, printed = run_quickstart()
    shown = blocks("text")[0]
    assert printed == shown, f"the quickstart now prints:\n{printed}"


def test_commands():
    text = README.read_text()
    assert f"    {TEST_COMMAND}\n" in text
    assert f"    {EXAMPLE_COMMAND}\n" in text
    ci = (ROOT / ".ci" / "run").read_text()
    first = [ln for ln in ci.splitlines()
             if ln.strip() and not ln.startswith(("#", "set ", "cd "))][0]
    assert first == TEST_COMMAND, "CI runs the README's test command first"


def test_front_page_is_short_and_links_exist():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)\)", text):
        assert (ROOT / target).exists(), target
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "nx_rune developers" in (ROOT / "LICENSE").read_text()


def test_the_build_count_is_the_number_of_extension_modules():
    text = README.read_text()
    words = {"thirteen": 13, "fourteen": 14, "fifteen": 15, "twelve": 12}
    m = re.search(r"builds (\w+) Cython extension modules", text)
    assert m and m.group(1) in words
    out = subprocess.run([sys.executable, "-c", "import setup; print(len(setup.extensions()))"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert int(out) == words[m.group(1)]


def test_test_extra_is_what_the_readme_says():
    py = (ROOT / "pyproject.toml").read_text()
    extra = re.search(r"^test = \[(.*)\]$", py, re.M).group(1)
    for name in ("pytest", "pytest-benchmark", "hypothesis", "Cython", "wheel", "scikit-learn",
                 "tqdm", "matplotlib"):
        assert f'"{name}' in extra, name
    assert "nx_rune[ray,dask,docs]" in extra
    text = README.read_text()
    for name in ("pytest-benchmark", "hypothesis", "scikit-learn", "Cython", "Ray", "Dask",
                 "Sphinx"):
        assert name in text
