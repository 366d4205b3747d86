"""The API reference covers the public API: every public name of every public module has a
docstring and an entry in docs/reference/*.rst, and dir() of a public module lists only its
public names (not the modules and typing names it imports).

The entries are read from the reference's sources (autosummary lists and ``.. data::``
directives), so this runs without building the site; tools/make_api_pages.py writes them.
"""
import importlib
import importlib.util
import inspect
import pathlib
import re
import types

import pytest

import nx_rune

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"

# The public modules.  The implementation's modules (nx_rune.backend, .frontend, .tensor,
# .compiler, ...) are importable but not part of the documented API.
PUBLIC_MODULES = [
    "nx_rune", "nx_rune.random", "nx_rune.lax", "nx_rune.linalg", "nx_rune.fft",
    "nx_rune.scipy", "nx_rune.scipy.integrate", "nx_rune.scipy.linalg", "nx_rune.scipy.signal",
    "nx_rune.scipy.special",
    "nx_rune.scipy.stats",
    *(f"nx_rune.scipy.stats.{d}" for d in nx_rune.scipy.stats.__all__
      if isinstance(getattr(nx_rune.scipy.stats, d), types.ModuleType)),
    "nx_rune.scipy.optimize", "nx_rune.scipy.sparse", "nx_rune.scipy.sparse.linalg",
    "nx_rune.scipy.ndimage", "nx_rune.scipy.fft", "nx_rune.scipy.interpolate",
    "nx_rune.scipy.cluster", "nx_rune.scipy.cluster.vq", "nx_rune.scipy.spatial",
    "nx_rune.scipy.spatial.transform",
    "nx_rune.tree_util", "nx_rune.flatten_util", "nx_rune.optimizers", "nx_rune.distributed",
    "nx_rune.errors", "nx_rune.config", "nx_rune.typing", "nx_rune.autodiff",
    "nx_rune.primitives", "nx_rune.debug", "nx_rune.nn", "nx_rune.nn.initializers",
    "nx_rune.image", "nx_rune.experimental", "nx_rune.experimental.ode", "nx_rune.ad_checkpoint",
    "nx_rune.experimental.checkify",
    "nx_rune.test_util", "nx_rune.sharding",
]
# Namespaces that mirror another library's API for zero-edit porting (documented by the porting
# guide, whose names are that library's): allowed as attributes, without a reference page each
COMPAT_MODULES = {"nx_rune.autograd", "nx_rune.numpy", "nx_rune.tree",
                  "nx_rune.example_libraries"}
# Objects of other libraries that a public module exports on purpose: NumPy's dtypes (nx.float32
# is np.dtype("float32")), NumPy's LinAlgError (nx.linalg.LinAlgError, NumPy's convention) and
# the type aliases of nx_rune.typing (PyTree is typing.Any).
FOREIGN_OK = {"nx_rune.linalg.LinAlgError",
              *(f"nx_rune.typing.{n}" for n in importlib.import_module("nx_rune.typing").__all__)}
# Names that give away an import rather than an API
IMPORT_NAMES = {"np", "numpy", "functools", "operator", "math", "os", "sys", "Any", "Callable",
                "Union", "Optional", "Sequence", "Iterable", "NamedTuple", "annotations",
                "collections", "contextlib", "contextvars", "threading", "asyncio", "inspect",
                "numbers", "dataclasses", "typing", "ops", "ForwardRef"}


def module(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:     # a module object bound under another name
        parent, _, last = name.rpartition(".")
        return getattr(importlib.import_module(parent), last)


def public_names(mod):
    return [n for n in dir(mod) if not n.startswith("_")]


def reference_entries():
    """{full name: (file, has a description)} of every entry in docs/reference/*.rst."""
    entries = {}
    for path in sorted(REFERENCE.glob("*.rst")):
        current = None
        lines = path.read_text().split("\n")
        in_summary = False
        for i, line in enumerate(lines):
            m = re.match(r"\.\. (?:currentmodule|module|automodule):: (\S+)", line)
            if m:
                current = m.group(1)
                in_summary = False
                continue
            if line.startswith(".. autosummary::"):
                in_summary = True
                continue
            m = re.match(r"\.\. auto(?:function|class):: (\S+)", line)
            if m:
                in_summary = False
                entries[m.group(1)] = (path.name, True)
                continue
            m = re.match(r"\.\. (?:py:)?data:: (\S+)", line)
            if m:
                in_summary = False
                body = next((ln for ln in lines[i + 1:] if ln.strip()), "")
                entries[f"{current}.{m.group(1)}"] = (path.name, body.startswith("   "))
                continue
            if in_summary:
                m = re.match(r"   ([A-Za-z_][\w.]*)$", line)
                if m:
                    entries[f"{current}.{m.group(1)}"] = (path.name, True)
                elif line.strip() and not line.startswith("   :"):
                    in_summary = False
    return entries


ENTRIES = reference_entries()


def test_found_the_reference():
    assert len(ENTRIES) > 450
    assert "nx_rune.grad" in ENTRIES and "nx_rune.random.normal" in ENTRIES
    assert "nx_rune.scipy.stats.multivariate_normal.logpdf" in ENTRIES


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_dir_lists_only_public_names(modname):
    mod = module(modname)
    bad = []
    for name in dir(mod):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        if isinstance(obj, types.ModuleType):
            if obj.__name__ not in PUBLIC_MODULES and obj.__name__ not in COMPAT_MODULES \
                    and f"{modname}.{name}" not in PUBLIC_MODULES:
                bad.append(name)
        elif f"{modname}.{name}" in FOREIGN_OK:
            continue
        elif name in IMPORT_NAMES:
            bad.append(name)
        elif (inspect.isclass(obj) or inspect.isfunction(obj)) and \
                not obj.__module__.startswith("nx_rune"):
            bad.append(name)
    assert not bad, f"dir({modname}) lists names that are not its API: {bad}"


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_every_public_name_has_a_reference_entry(modname):
    mod = module(modname)
    documented_objects = {id(_resolve(full)) for full in ENTRIES}
    missing = []
    for name in public_names(mod):
        obj = getattr(mod, name)
        if isinstance(obj, types.ModuleType):
            continue                 # its own section documents it
        full = f"{modname}.{name}"
        if full in ENTRIES:
            continue
        # the same function or class documented under another public name (nx.linalg.matmul is
        # nx.matmul): one page, linked from both
        if (callable(obj) and not isinstance(obj, (int, float))) and id(obj) in documented_objects:
            continue
        missing.append(name)
    assert not missing, (f"{modname}: no entry in docs/reference for {missing} "
                         "(run tools/make_api_pages.py and put them in their group)")


def test_no_ungrouped_names():
    text = (REFERENCE / "namespace.rst").read_text()
    assert "Not yet grouped" not in text, "tools/make_api_pages.py: give the new names a group"


def test_entries_name_existing_objects():
    stale = [full for full in ENTRIES if _resolve(full) is _MISSING]
    assert not stale, f"docs/reference lists names that do not exist: {stale}"


def test_data_entries_are_described():
    bare = [full for full, (_, described) in ENTRIES.items() if not described]
    assert not bare, f"'.. data::' entries without a description: {bare}"


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_every_public_function_and_class_has_a_docstring(modname):
    mod = module(modname)
    assert (mod.__doc__ or "").strip(), f"{modname} has no module docstring"
    missing = []
    for name in public_names(mod):
        obj = getattr(mod, name)
        if isinstance(obj, types.ModuleType) or not (inspect.isclass(obj) or callable(obj)):
            continue
        if getattr(obj, "__module__", "").startswith("nx_rune") or inspect.isfunction(obj):
            doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
            if not (doc or "").strip():
                missing.append(name)
    assert not missing, f"{modname}: no docstring for {missing}"


_MISSING = object()


def _resolve(full):
    """The object a dotted name names, or _MISSING."""
    parts = full.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
        except AttributeError:
            return _MISSING
        return obj
    return _MISSING


def test_reference_pages_are_what_the_tool_writes():
    """docs/reference/*.rst are tools/make_api_pages.py's output (rerun it after an API change)."""
    spec = importlib.util.spec_from_file_location("make_api_pages",
                                                  ROOT / "tools" / "make_api_pages.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for fname, text in tool.pages().items():
        assert (REFERENCE / f"{fname}.rst").read_text() == text, \
            f"docs/reference/{fname}.rst is out of date: run python tools/make_api_pages.py"
