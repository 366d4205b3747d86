"""Write tests/data/jax_examples_golden.json: the programs of tests/test_jax_examples.py run
under JAX, with the rename undone (``nx_rune`` -> ``jax`` in their imports).

Run from the repository root with jax installed (the numbers pinned now: jax 0.10.2, jaxlib
0.10.2, CPU):  python tools/jax_examples_golden.py [name ...]
"""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST = ROOT / "tests" / "test_jax_examples.py"
OUT = ROOT / "tests" / "data" / "jax_examples_golden.json"

# rtol per program where 1e-5 is not enough (see the test module's docstring); none so far
RTOL: dict = {}


def main(names):
    import jax
    src = TEST.read_text().replace("nx_rune", "jax")
    ns = {"__name__": "jax_examples_under_jax", "__file__": str(TEST)}
    exec(compile(src, str(TEST) + " (under jax)", "exec"), ns)
    golden = json.loads(OUT.read_text()) if OUT.exists() else {}
    for name in names or list(ns["PROGRAMS"]):
        print("running", name, flush=True)
        golden[name] = ns["PROGRAMS"][name]()
    golden["_source"] = (f"jax {jax.__version__} (jaxlib {jax.lib.__version__}), CPU: the "
                         f"programs of tests/test_jax_examples.py with nx_rune renamed jax "
                         f"(tools/jax_examples_golden.py)")
    golden["_rtol"] = RTOL
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
