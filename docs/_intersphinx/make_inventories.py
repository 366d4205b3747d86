"""Write the offline intersphinx inventories (python.inv, numpy.inv, scipy.inv, jax.inv).

    python docs/_intersphinx/make_inventories.py

docs/conf.py reads each project's own objects.inv from its site and falls back to these files
when the site cannot be reached (no network in CI).  They list the objects these pages link to
-- NumPy's, SciPy's and JAX's functions of the names nx_rune implements, and a few Python
names -- at the addresses of each project's documentation layout.
"""
import importlib
import pathlib
import sys
import zlib

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

import nx_rune as nx  # noqa: E402


def write(name, project, version, entries):
    # "$" stands for the name (written out: Sphinx expands only a trailing one)
    lines = [f"{n} py:{role} 1 {uri.replace('$', n)} -" for n, role, uri in sorted(set(entries))]
    head = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
            "# The remainder of this file is compressed using zlib.\n").encode()
    (HERE / f"{name}.inv").write_bytes(head + zlib.compress(("\n".join(lines) + "\n").encode()))


def public(mod):
    return [n for n in dir(mod) if not n.startswith("_")]


def numpy_entries():
    import numpy as np

    out = [("numpy.ndarray", "class", "reference/generated/numpy.ndarray.html#$"),
           ("numpy.dtype", "class", "reference/generated/numpy.dtype.html#$"),
           ("numpy.generic", "class", "reference/arrays.scalars.html#$"),
           ("numpy.linalg.LinAlgError", "exception",
            "reference/generated/numpy.linalg.LinAlgError.html#$")]
    for prefix, ours, theirs in (("numpy", nx, np), ("numpy.linalg", nx.linalg, np.linalg),
                                 ("numpy.fft", nx.fft, np.fft)):
        for n in public(ours):
            obj = getattr(theirs, n, None)
            if callable(obj) and not isinstance(obj, type):
                out.append((f"{prefix}.{n}", "function",
                            f"reference/generated/{prefix}.{n}.html#$"))
    for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"):
        out.append((f"numpy.{t}", "attribute", f"reference/arrays.scalars.html#$"))
    return out


def scipy_entries():
    out = []
    for sub in ("linalg", "special"):
        theirs = importlib.import_module(f"scipy.{sub}")
        for n in public(getattr(nx.scipy, sub)):
            if callable(getattr(theirs, n, None)):
                out.append((f"scipy.{sub}.{n}", "function",
                            f"reference/generated/scipy.{sub}.{n}.html#$"))
    import scipy.stats

    for n in public(nx.scipy.stats):
        if hasattr(scipy.stats, n):
            out.append((f"scipy.stats.{n}", "data",
                        f"reference/generated/scipy.stats.{n}.html#$"))
    return out


def jax_entries():
    out = []
    for n in public(nx.autodiff) + ["jit", "make_jaxpr"]:
        out.append((f"jax.{n}", "function", "_autosummary/$.html#$"))
    for mod in ("random", "lax", "tree_util", "flatten_util", "numpy", "numpy.linalg",
                "numpy.fft", "scipy.linalg", "scipy.special"):
        ours = {"numpy": nx, "numpy.linalg": nx.linalg, "numpy.fft": nx.fft}.get(mod)
        ours = ours if ours is not None else \
            importlib.import_module(f"nx_rune.{mod}")
        for n in public(ours):
            if not isinstance(getattr(ours, n), type(nx)) and not n[0].isupper():
                out.append((f"jax.{mod}.{n}", "function", "_autosummary/$.html#$"))
    return out


def python_entries():
    out = [(f"math.{n}", "data", "library/math.html#$") for n in ("e", "inf", "nan", "pi")]
    out += [(n, "class", "library/functions.html#$") for n in ("int", "float", "complex",
                                                               "bool", "tuple", "list",
                                                               "dict")]
    out += [(n, "exception", "library/exceptions.html#$") for n in (
        "ValueError", "TypeError", "RuntimeError", "NotImplementedError", "ZeroDivisionError")]
    return out


if __name__ == "__main__":
    write("python", "Python", "3", python_entries())
    write("numpy", "NumPy", "2", numpy_entries())
    write("scipy", "SciPy", "1", scipy_entries())
    write("jax", "JAX", "0.10", jax_entries())
    print(sorted(p.name for p in HERE.glob("*.inv")))
