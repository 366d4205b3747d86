"""The README's code blocks run, and the quickstart's derivatives have their analytic values."""
import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_quickstart_values():
    ns = {}
    exec(blocks()[0], ns)
    w = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(ns["g"].numpy(), np.cos(w) * w**2 + 2 * w * np.sin(w), rtol=1e-12)
    hess = -np.sin(w) * w**2 + 4 * w * np.cos(w) + 2 * np.sin(w)
    np.testing.assert_allclose(ns["H"].numpy(), np.diag(hess), atol=1e-12)
    np.testing.assert_allclose(float(ns["d3"]), -np.cos(1.0), rtol=1e-6)
    assert ns["z"].shape == (2, 3) and ns["p"].shape == (5, 6)


def test_new_primitive_recipe():
    """The README's text itself (tests/test_autodiff_api.py covers the same form in depth)."""
    ns = {}
    exec(blocks()[1], ns)
    nx = ns["nx"]
    try:
        _check_cube(nx, ns["cube"])
    finally:  # leave the global primitive registry as it was
        del nx.primitives.PRIMITIVES["cube"]
        for table in (nx.autodiff.VJP_RULES, nx.autodiff.JVP_RULES):
            table.pop(ns["cube_p"], None)


def _check_cube(nx, cube):
    x = nx.asarray(np.array([0.5, -2.0]))
    np.testing.assert_allclose(nx.grad(lambda v: nx.sum(cube(v)))(x).numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(nx.jvp(cube, (x,), (nx.ones_like(x),))[1].numpy(),
                               3 * x.numpy() ** 2)
