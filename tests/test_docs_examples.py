"""Doctests: every example in the docstrings and in the documentation's pages runs, and what
it prints is what the page shows.

Docstring examples (``>>>`` in any nx_rune module) run here; each documentation page runs in a
fresh interpreter through tests/docs_doctest.py (pages register primitives and change
settings that must not leak into other tests).
"""
import doctest
import importlib
import pathlib
import pkgutil
import subprocess
import sys

import pytest

import nx_rune

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
# pages whose ```python blocks are fragments (another page or module defines their names, or
# they need a cluster): only their ``>>>`` examples run
FRAGMENTS = {"distributed.md"}


def modules():
    names = ["nx_rune"] + [m.name for m in pkgutil.walk_packages(nx_rune.__path__, "nx_rune.")
                           if m.name != "nx_rune.__main__"
                           and not m.name.startswith("nx_rune.distributed._")]
    return [importlib.import_module(n) for n in names]


def docstring_tests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = []
    for mod in modules():
        for test in finder.find(mod, mod.__name__):
            # a function re-exported by another module is found there too: run it once
            if test.examples and test.name not in {t.name for t in tests}:
                tests.append(test)
    return tests


DOCSTRING_TESTS = docstring_tests()


def test_found_docstring_examples():
    names = {t.name for t in DOCSTRING_TESTS}
    for fn in ("nx_rune.autodiff.api.grad", "nx_rune.autodiff.batching.vmap",
               "nx_rune.compiler.api.jit", "nx_rune.random.split"):
        assert fn in names, fn


@pytest.mark.parametrize("test", DOCSTRING_TESTS, ids=lambda t: t.name)
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)


def test_found_the_pages():
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"index.md", "guide/getting_started.md", "guide/jit.md", "guide/extending.md",
            "distributed.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_examples(page):
    cmd = [sys.executable, str(ROOT / "tests" / "docs_doctest.py"), str(page)]
    if page.name in FRAGMENTS:
        cmd.append("--pycon-only")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
