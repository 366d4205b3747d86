"""``python -m benchmarks [files or pytest options ...]``: run pytest-benchmark and print one
table of every group's medians with the ratio of each implementation to NumPy's.

With no file given it runs every ``bench_*.py`` here; any other arguments go to
pytest as they are (``python -m benchmarks benchmarks/bench_gather_kernels.py -k gather``).
A ratio below 1 means nx_rune is faster than NumPy.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = sorted(glob.glob(os.path.join(HERE, "bench_*.py")))


def _fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:8.2f} {unit}"
    return f"{seconds / 1e-9:8.1f} ns"


def _impl(bench):
    params = bench.get("params") or {}
    if "impl" in params:
        return str(params["impl"])
    name = bench["name"]
    return "numpy" if "numpy" in name else name.split("[")[0]


def table(data):
    groups = {}
    for b in data["benchmarks"]:
        groups.setdefault(b.get("group") or b["name"], {})[_impl(b)] = b["stats"]["median"]
    rows = []
    for group, impls in groups.items():
        base = impls.get("numpy")
        for impl, med in sorted(impls.items(), key=lambda kv: kv[0] == "numpy"):
            if impl == "numpy" and len(impls) > 1:
                continue
            ratio = f"{med / base:6.2f}x" if base and impl != "numpy" else "      -"
            rows.append((group, impl, _fmt(med), _fmt(base) if base else "", ratio))
    head = ("group", "impl", "median", "numpy median", "ratio")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(5)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(head, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def main(argv):
    files = [a for a in argv if not a.startswith("-") and a.endswith(".py")]
    extra = [a for a in argv if a not in files]
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        cmd = [sys.executable, "-m", "pytest", *(files or DEFAULT), "--benchmark-only",
               f"--benchmark-json={path}", "-q", "-p", "no:cacheprovider", *extra]
        rc = subprocess.call(cmd, cwd=os.path.dirname(HERE))
        with open(path) as f:
            text = f.read()
        if not text.strip():
            return rc or 1
        print()
        print(table(json.loads(text)))
        return rc
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
