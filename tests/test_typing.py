"""The public API is fully annotated, and the annotations resolve at runtime."""
import importlib
import inspect
import subprocess
import sys
import types
import typing

import pytest

import nx_rune
import nx_rune.config
import nx_rune.lax
import nx_rune.linalg
import nx_rune.random
import nx_rune.scipy._mvn
import nx_rune.scipy.linalg
from nx_rune.tensor import ArrayBase

# Public functions allowed to go without a full set of annotations (none at present).
EXCEPTIONS: set = set()


# the namespaces of nx.fft, nx.scipy.special and nx.scipy.stats
import nx_rune.fft  # noqa: E402
import nx_rune.scipy.special  # noqa: E402
import nx_rune.scipy.stats  # noqa: E402

EXTRA_MODULES = (nx_rune.fft, nx_rune.scipy.special,
                 *(getattr(nx_rune.scipy.stats, n) for n in nx_rune.scipy.stats.__all__
                   if isinstance(getattr(nx_rune.scipy.stats, n), types.ModuleType)),
                 nx_rune.scipy.stats)


def _public_functions():
    out = {}
    for mod in (nx_rune, nx_rune.random, nx_rune.config, nx_rune.linalg, nx_rune.scipy.linalg,
                nx_rune.scipy._mvn, nx_rune.lax) + EXTRA_MODULES:
        for name in dir(mod):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if isinstance(obj, types.FunctionType) and obj.__module__.startswith("nx_rune"):
                out[f"{mod.__name__}.{name}"] = obj
    return out


PUBLIC = _public_functions()


def test_found_the_api():
    assert len(PUBLIC) > 100
    for name in ("nx_rune.sum", "nx_rune.grad", "nx_rune.asarray", "nx_rune.einsum",
                 "nx_rune.conv2d", "nx_rune.check_grads", "nx_rune.random.uniform"):
        assert name in PUBLIC


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_fully_annotated(qualname):
    if qualname in EXCEPTIONS:
        pytest.skip("listed exception")
    fn = PUBLIC[qualname]
    sig = inspect.signature(fn)
    assert sig.return_annotation is not inspect.Signature.empty, f"{qualname}: no return type"
    for p in sig.parameters.values():
        assert p.annotation is not inspect.Parameter.empty, f"{qualname}: {p.name} unannotated"


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_hints_resolve(qualname):
    hints = typing.get_type_hints(PUBLIC[qualname])
    assert "return" in hints


def test_sample_hints():
    h = typing.get_type_hints(nx_rune.sum)
    assert h["return"] is ArrayBase
    assert ArrayBase in typing.get_args(h["x"])
    assert h["keepdims"] is bool
    assert typing.get_type_hints(nx_rune.shape)["return"] == tuple[int, ...]
    assert typing.get_type_hints(nx_rune.random.normal)["return"] is ArrayBase


def test_alias_module_imports_no_array_machinery():
    # nx_rune.typing must be importable on its own without pulling in nx_rune.tensor
    # (beyond the package __init__) and without an import cycle, in a fresh interpreter.
    # Run the file standalone (without the package __init__, which imports everything).
    code = ("import runpy, sys\n"
            f"ns = runpy.run_path({inspect.getfile(importlib.import_module('nx_rune.typing'))!r})\n"
            "assert not any(m.startswith('nx_rune') for m in sys.modules), 'imported nx_rune'\n"
            "assert ns['Array'].__forward_module__ == 'nx_rune.tensor'\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    for order in ("import nx_rune.typing; import nx_rune", "import nx_rune.ops",
                  "import nx_rune.random", "import nx_rune.tensor", "import nx_rune.autodiff"):
        r = subprocess.run([sys.executable, "-c", order + "; import nx_rune as nx; nx.sum(1)"],
                           capture_output=True, text=True,
                           cwd=str(importlib.import_module("pathlib").Path(nx_rune.__file__)
                                   .parent.parent))
        assert r.returncode == 0, (order, r.stderr)


def test_annotations_are_not_evaluated_at_runtime():
    frontend = [f"nx_rune.frontend.{m}" for m in ("_core", "creation", "elementwise", "movement",
                                                  "reductions", "products", "indexing",
                                                  "contraction", "nn")]
    for modname in frontend + ["nx_rune.random", "nx_rune.autodiff.api", "nx_rune.autodiff.check"]:
        mod = importlib.import_module(modname)
        assert mod.annotations.compiler_flag  # from __future__ import annotations
        for v in vars(mod).values():
            if isinstance(v, types.FunctionType) and v.__module__ == modname:
                assert all(isinstance(a, str) for a in v.__annotations__.values())
