"""Run the Array API conformance suite (data-apis/array-api-tests) against a namespace and print
its pass rate, with the failures grouped by test file.

    python tools/array_api_conformance.py /path/to/array-api-tests [module] [-- pytest args]

The suite is not vendored: clone data-apis/array-api-tests (with its array-api submodule) and
pass its path.  ``module`` defaults to nx_rune (``numpy`` or ``array_api_strict`` to compare).
Settings: standard 2024.12, ``--max-examples=20``, JSON report in /tmp.  The pass rate counts
pytest's test items: passed / (passed + failed + errors); skipped items are listed apart.
"""
import collections
import json
import os
import subprocess
import sys


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    suite = os.path.abspath(argv[0])
    rest = argv[1:]
    extra = []
    if "--" in rest:
        k = rest.index("--")
        rest, extra = rest[:k], rest[k + 1:]
    module = rest[0] if rest else "nx_rune"
    report = f"/tmp/array_api_{module}.json"
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=module, ARRAY_API_TESTS_VERSION="2024.12",
               PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider",
           "--max-examples=20", "--disable-warnings", "--continue-on-collection-errors",
           "--json-report",
           f"--json-report-file={report}", "-o", "addopts="] + extra
    subprocess.run(cmd, cwd=suite, env=env, stdout=subprocess.DEVNULL)
    with open(report) as f:
        data = json.load(f)
    outcomes = collections.Counter()
    failed_by_file = collections.Counter()
    for t in data["tests"]:
        outcome = t["outcome"]
        outcomes[outcome] += 1
        if outcome in ("failed", "error"):
            failed_by_file[t["nodeid"].split("::")[0]] += 1
    errors = data.get("collectors", [])
    broken = [c["nodeid"] for c in errors if c.get("outcome") == "failed"]
    bad = outcomes["failed"] + outcomes["error"]
    ran = outcomes["passed"] + bad
    print(f"{module}: {outcomes['passed']} passed, {bad} failed or errors, "
          f"{outcomes['skipped']} skipped: pass rate {outcomes['passed'] / max(ran, 1):.1%}")
    for path in broken:
        print(f"  collection failed: {path} (its tests are not counted)")
    for path, n in failed_by_file.most_common():
        print(f"  {n:5d}  {path}")
    print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
