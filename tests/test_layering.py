"""The package's import graph: layers import only downward, and no module cycle exists.

Layers, bottom to top: kernels <- backend (with the Tensor, dtypes and typing it uses) <-
primitives <- front end <- autodiff <- api (the package namespace and everything built on the
transformations).  Every import statement counts, also one inside a function: an import moved
into a function body still makes a cycle, only a later one.
"""
import ast
import pathlib

import pytest

# the source tree, read as text: the test works even when a bad import breaks the package
ROOT = pathlib.Path(__file__).resolve().parent.parent / "nx_rune"

# module name prefix -> layer (the longest matching prefix wins)
LAYERS = {
    "nx_rune._kernels": 0,
    "nx_rune.typing": 1, "nx_rune.errors": 1, "nx_rune.tree_util": 1, "nx_rune.dtypes": 1,
    "nx_rune.tensor": 1,
    "nx_rune.backend": 1,
    "nx_rune.writes": 1,   # write tracking (below tensor.py and the backend)
    "nx_rune.config": 1,   # run-time settings (x64 mode), read by dtypes and the front end
    "nx_rune.primitives": 2,
    "nx_rune.frontend": 3, "nx_rune.ops": 3,
    "nx_rune.autodiff": 4,
    # the compiler traces and differentiates programs (above autodiff), and the api
    # (nx.jit, nx.lax, the namespace) is built on it
    "nx_rune.compiler": 5,
}
API_LAYER = 6
LAYER_NAMES = ["kernels", "backend", "primitives", "front end", "autodiff", "compiler", "api"]


def _module_name(path):
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(mod):
    best = None
    for prefix, layer in LAYERS.items():
        if mod == prefix or mod.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    return API_LAYER if best is None else best[1]


def _resolve(mod, is_package, node):
    """The nx_rune modules named by one import statement of module ``mod``."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "nx_rune"]
    if node.level:
        base = mod.split(".")
        base = base[:len(base) - node.level + (1 if is_package else 0)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "nx_rune":
        return []
    out = []
    for a in node.names:  # "from pkg import submodule" names a module; otherwise the package
        sub = f"{target}.{a.name}"
        out.append(sub if sub in MODULES else target)
    return out


def _import_source(path):
    """The source to parse for imports: a .py file whole; of a Cython .pyx file, its import
    and cimport statements (with their parenthesized continuation lines), as Python."""
    text = path.read_text()
    if path.suffix == ".py":
        return text
    keep, depth = [], 0
    for line in text.splitlines():
        stripped = line.lstrip()
        if depth or stripped.startswith(("import ", "from ", "cimport ")):
            if not depth:
                line = stripped
            keep.append(line.replace(" cimport ", " import ").replace("cimport ", "import ", 1)
                        if not depth else line)
            depth += line.count("(") - line.count(")")
    return "\n".join(keep)


def _sources():
    return sorted(list(ROOT.rglob("*.py")) + list(ROOT.rglob("*.pyx")))


def _graph():
    graph = {}
    for path in _sources():
        mod = _module_name(path)
        tree = ast.parse(_import_source(path), str(path))
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps.update(d for d in _resolve(mod, path.name == "__init__.py", node) if d != mod)
        graph[mod] = deps
    return graph


MODULES = {_module_name(p) for p in _sources()}
GRAPH = _graph()


def test_cython_modules_are_read():
    assert "nx_rune.tensor" in GRAPH and "nx_rune._kernels.view" in GRAPH
    assert "nx_rune._kernels.view" in GRAPH["nx_rune.tensor"]


def test_graph_found_the_front_end():
    assert "nx_rune.frontend.elementwise" in GRAPH
    assert "nx_rune.frontend._core" in GRAPH["nx_rune.frontend.elementwise"]
    assert _layer("nx_rune.frontend.nn") == 3 and _layer("nx_rune.random") == API_LAYER


@pytest.mark.parametrize("mod", sorted(GRAPH))
def test_imports_point_down(mod):
    here = _layer(mod)
    up = [d for d in GRAPH[mod] if d != "nx_rune" and _layer(d) > here]
    if here < API_LAYER and "nx_rune" in GRAPH[mod]:
        up.append("nx_rune (the package namespace)")
    assert not up, (f"{mod} ({LAYER_NAMES[here]}) imports from a higher layer: "
                    + ", ".join(f"{d} ({LAYER_NAMES[_layer(d)]})" if d in GRAPH else d
                                for d in up))


def _find_cycle(graph):
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if d not in graph:
                continue
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_import_cycle():
    cycle = _find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_cycle():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


# -- the rule tables sit below the interpreters that read them ----------------------------------
# autodiff/rules/* (with batch_rules.py, its re-export) are written with the front end and the
# primitives; the interpreters (autodiff's core, api, batching, checkpoint, custom, the tape,
# the compiler) import the tables from there.  A rule module importing an interpreter, or
# anything that imports one, would tie the tables to the machinery that runs them: an import
# cycle in waiting, and rules that are no longer plain compositions of front-end ops.
AUTODIFF = LAYERS["nx_rune.autodiff"]
RULES = "nx_rune.autodiff.rules"
RULE_HELPERS = {"nx_rune.autodiff.batched_values"}   # concrete values of batched primals


def _is_rules(mod):
    return mod in (RULES, "nx_rune.autodiff.batch_rules") or mod.startswith(RULES + ".")


def _rules_may_import(dep):
    """What a rule module may import: anything below autodiff (front end, primitives, dtypes,
    tensor, ...), the rules package's own modules and the helpers in ``RULE_HELPERS``."""
    return dep != "nx_rune" and (_layer(dep) < AUTODIFF or _is_rules(dep) or dep in RULE_HELPERS)


def _path_to_forbidden(mod):
    """The import chain from ``mod`` to the first module a rule may not import, or None."""
    parent, todo = {mod: None}, [mod]
    while todo:
        m = todo.pop(0)
        for d in sorted(GRAPH.get(m, ())):
            if d in parent:
                continue
            parent[d] = m
            if not _rules_may_import(d):
                chain = [d]
                while parent[chain[-1]] is not None:
                    chain.append(parent[chain[-1]])
                return chain[::-1]
            todo.append(d)
    return None


RULE_MODULES = sorted(m for m in GRAPH if _is_rules(m))


def test_rule_modules_are_found():
    assert len(RULE_MODULES) >= 10
    assert {RULES, RULES + "._common", RULES + ".linalg",
            "nx_rune.autodiff.batch_rules"} <= set(RULE_MODULES)
    assert "nx_rune.autodiff.rules._common" in GRAPH[RULES + ".linalg"]


def test_rules_check_sees_interpreters():
    for mod in ("nx_rune.autodiff.core", "nx_rune.autodiff.api", "nx_rune.autodiff.batching",
                "nx_rune.autodiff._tape", "nx_rune.autodiff", "nx_rune.compiler.tracing",
                "nx_rune"):
        assert not _rules_may_import(mod), mod
    for mod in ("nx_rune.frontend.linalg", "nx_rune.primitives", "nx_rune.dtypes",
                RULES + "._common", "nx_rune.autodiff.batched_values"):
        assert _rules_may_import(mod), mod


@pytest.mark.parametrize("mod", RULE_MODULES)
def test_rules_import_no_interpreter(mod):
    chain = _path_to_forbidden(mod)
    assert chain is None, (f"{mod} reaches {chain[-1]}, which a rule module may not import "
                           f"(rules import the front end, primitives, dtypes and their own "
                           f"helpers; interpreters import the rules): " + " -> ".join(chain))
