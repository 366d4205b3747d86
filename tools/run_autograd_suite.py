"""Run HIPS autograd's own test suite against ``nx_rune.autograd`` by the import rename alone.

Usage (from the repository root, by hand; the suite is not part of CI)::

    python tools/run_autograd_suite.py /path/to/autograd-1.9.1/tests [-- extra pytest args]

The tests directory is copied to a temporary directory (the original files are not modified)
with a ``conftest.py`` whose first lines map ``autograd`` and every ``autograd.<sub>`` module
name to the matching ``nx_rune.autograd`` module in ``sys.modules``: a name mapping only, no code
of its own.  The conftest asserts that the installed HIPS autograd package is not what gets
imported.  The suite's own ``conftest.py`` (its random-seed fixture) follows the mapping
unchanged.  Tests of autograd's internals are deselected (``EXCLUDED`` lists each with the
reason).  The script prints pytest's summary and the pass rate over the tests that ran.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# node id -> why it is excluded: tests of autograd's internals (how its graph replay calls
# primitives), which nx_rune.autograd does not have
EXCLUDED = {
    "test_misc.py::test_const_graph_args": "counts the calls autograd's graph replay makes to "
                                           "a primitive (nx_rune replays a compiled program)",
}

# tests that run and fail on purpose: nx_rune differs from autograd there by design (reported
# with the pass rate, not deselected)
KNOWN_DIFFERENCES = {
    "test_fft.py::test_rfftn_odd_not_implemented": "asserts autograd's NotImplementedError for "
        "rfftn of an odd last axis; nx_rune differentiates it (the derivative checks pass)",
    "test_graphs.py::test_assignment_raises_error": "asserts that A[i] = x on a traced array "
        "raises; nx_rune's arrays, traced ones included, take item assignment (differentiably)",
}

CONFTEST_HEAD = '''\
# -- added by nx_rune's tools/run_autograd_suite.py: the name mapping autograd -> nx_rune.autograd
import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys

import nx_rune.autograd as _nxag

assert "autograd" not in _sys.modules, "HIPS autograd was imported before the mapping"


def _map(pkg, name):
    _sys.modules[name] = pkg
    for info in _pkgutil.iter_modules(pkg.__path__ if hasattr(pkg, "__path__") else []):
        if info.name.startswith("_"):
            continue
        _map(_importlib.import_module(pkg.__name__ + "." + info.name), name + "." + info.name)


_map(_nxag, "autograd")
import autograd as _ag  # noqa: E402
assert _ag is _nxag and _ag.__name__ == "nx_rune.autograd", _ag
for _n, _m in list(_sys.modules.items()):
    if _n == "autograd" or _n.startswith("autograd."):
        assert _m.__name__.startswith("nx_rune.autograd"), (_n, _m)
# -- the suite's own conftest follows
'''


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    src = os.path.abspath(argv[0])
    extra = argv[1:]
    if extra and extra[0] == "--":
        extra = extra[1:]
    if not os.path.isfile(os.path.join(src, "test_core.py")):
        print(f"{src}: not autograd's tests/ directory (no test_core.py)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="nx_autograd_suite_") as tmp:
        dst = os.path.join(tmp, "tests")
        shutil.copytree(src, dst)
        own = os.path.join(dst, "conftest.py")
        tail = open(own).read() if os.path.exists(own) else ""
        with open(own, "w") as f:
            f.write(CONFTEST_HEAD + tail)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf",
               "--rootdir", dst, dst]
        for node in EXCLUDED:
            cmd += ["--deselect", node] if "::" in node else \
                ["--ignore", os.path.join(dst, node)]
        cmd += extra
        env = dict(os.environ)
        env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
        proc = subprocess.run(cmd, cwd=dst, env=env, capture_output=True, text=True)
        out = proc.stdout + proc.stderr
        print(out.replace(dst + os.sep, ""))
    counts = {k: 0 for k in ("passed", "failed", "error", "skipped", "xfailed", "deselected")}
    summary = [ln for ln in out.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    if summary:
        for n, k in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|deselected)",
                               summary[-1]):
            counts["error" if k.startswith("error") else k] += int(n)
    ran = counts["passed"] + counts["failed"] + counts["error"]
    print("excluded:")
    for node, why in EXCLUDED.items():
        print(f"  {node}: {why}")
    print("known differences (run, expected to fail):")
    for node, why in KNOWN_DIFFERENCES.items():
        print(f"  {node}: {why}")
    if ran:
        print(f"pass rate: {counts['passed']}/{ran} = {100.0 * counts['passed'] / ran:.1f} % "
              f"({counts['skipped']} skipped, {counts['deselected']} deselected)")
    return 0 if counts["failed"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
