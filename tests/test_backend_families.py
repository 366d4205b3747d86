"""The backend and the jit's abstract-evaluation rules are kept by family, one module per family
and layer under the same name (nx_rune/backend/<family>.py, nx_rune/compiler/abstract/<family>.py),
so that adding a primitive touches one place per layer; and nx_rune.backend keeps the names that
the rest of the package imports from it."""
import importlib
import pathlib

import pytest

import nx_rune  # noqa: F401  (registers every implementation and rule)
from nx_rune import backend
from nx_rune.backend import IMPLS
from nx_rune.compiler.abstract import ABSTRACT_RULES

ROOT = pathlib.Path(__file__).resolve().parent.parent / "nx_rune"


def _families(package_dir):
    return {p.stem for p in package_dir.glob("*.py") if not p.stem.startswith("_")}


def _family(fn):
    module = fn.__module__
    return module.rsplit(".", 1)[1]


def test_the_backend_and_the_abstract_rules_have_the_same_families():
    backend_families = _families(ROOT / "backend")
    assert "linalg" in backend_families and "views" in backend_families
    assert backend_families == _families(ROOT / "compiler" / "abstract")


def test_every_implementation_lives_in_a_family_module():
    for name, impl in IMPLS.items():
        assert impl.__module__.startswith("nx_rune.backend.") and \
            not _family(impl).startswith("_"), (
                f"primitive {name}: its implementation is registered from {impl.__module__}; "
                f"move it into nx_rune/backend/<family>.py, the module of its family")


def test_a_rule_written_in_a_family_module_sits_beside_its_implementation():
    checked = 0
    for prim, rule in ABSTRACT_RULES.items():
        impl = IMPLS.get(prim.name)
        if impl is None or _family(rule) == "_core":   # (rules made by the shared helpers)
            continue
        assert _family(rule) == _family(impl), (
            f"primitive {prim.name}: abstract rule in {rule.__module__}, implementation in "
            f"{impl.__module__}: the two belong to modules of the same family name")
        checked += 1
    assert checked > 40


@pytest.mark.parametrize("name", ["IMPLS", "check_writable", "ufunc_into", "assign_index",
                                  "triangular_solve_values", "lu_sign_logabs", "norm2_values",
                                  "lu_inverse_t_values", "cholesky_vjp_values",
                                  "cho_solve_values", "cho_factor_values", "tri_read_weights",
                                  "power_program"])
def test_names_imported_from_the_backend_stay(name):
    assert name in backend.__all__
    value = getattr(backend, name)
    if callable(value):   # the function itself, not a copy of it
        home = importlib.import_module(value.__module__)
        assert getattr(home, name) is value
