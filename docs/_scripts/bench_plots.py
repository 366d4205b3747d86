"""Plots of a benchmark run's saved results, for the performance page.

    python docs/_scripts/bench_plots.py RESULTS.json OUTDIR

RESULTS.json is either pytest-benchmark's own file (``python -m pytest benchmarks/
--benchmark-only --benchmark-json=RESULTS.json``) or the summary kept in
docs/_data/benchmarks.json (``{"rows": [{"group", "impl", "median_s", "numpy_median_s"}]}``).
Writes one png per figure of FIGURES into OUTDIR; the docs build runs it (docs/conf.py).
"""
import json
import pathlib
import sys

# figure name -> (title, groups shown)
FIGURES = {
    "autodiff": ("Gradients: time per call (lower is better)",
                 ["elementwise50", "mlp_grad", "hessian", "mlp_jvp"]),
    "programs": ("Research programs: one training step",
                 ["program_logistic", "program_char_rnn", "program_svi", "program_fluid",
                  "program_gmm"]),
    "jit": ("Compiled: nx.jit against jax.jit",
            ["jit_chain50_grad", "jit_hessian20", "jit_gelu", "jit_mlp_sgd_step",
             "jit_digits_epoch", "jit_vmap_per_example_grad", "jit_compile_mlp_sgd_step"]),
    "random": ("Random numbers, 2**24 draws",
               ["bits uint32 x 2**24", "uniform float32 x 2**24", "normal float32 x 2**24",
                "gumbel float32 x 2**24"]),
    "kernels": ("Gather, scatter and copies",
                ["gather_1d", "gather_2d_axis1", "gather_2d_axis0", "scatter_set_1d",
                 "scatter_add_1d_duplicates", "scatter_add_2d_axis1_duplicates",
                 "copy_transposed", "fold_2d_conv"]),
}
COLORS = {"nx_rune": "#1f77b4", "NumPy": "#7f7f7f", "PyTorch": "#d62728", "JAX": "#2ca02c",
          "autograd": "#ff7f0e"}


def library(impl):
    low = impl.lower()
    for key, name in (("jax", "JAX"), ("torch", "PyTorch"), ("autograd", "autograd"),
                      ("numpy", "NumPy")):
        if key in low:
            return name
    return "nx_rune"


def label(impl, group):
    """A short name for an implementation's bar: the test name without its group's stem."""
    tokens = (impl[5:] if impl.startswith("test_") else impl).split("_")
    stems = set(group.replace(" ", "_").split("_"))
    while len(tokens) > 1 and tokens[0] in stems:
        tokens = tokens[1:]
    return "_".join(tokens)


def load_rows(path):
    data = json.loads(pathlib.Path(path).read_text())
    if "rows" in data:
        return data["rows"], data.get("source", "")
    groups = {}                     # pytest-benchmark's file: one entry per benchmark
    for b in data["benchmarks"]:
        params = b.get("params") or {}
        impl = str(params["impl"]) if "impl" in params else \
            ("numpy" if "numpy" in b["name"] else b["name"].split("[")[0])
        groups.setdefault(b.get("group") or b["name"], {})[impl] = b["stats"]["median"]
    rows = []
    for group, impls in groups.items():
        base = impls.get("numpy")
        rows += [{"group": group, "impl": i, "median_s": m, "numpy_median_s": base}
                 for i, m in impls.items() if i != "numpy"]
    return rows, data.get("datetime", "")


def plot(rows, name, title, groups, outdir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = []                       # (y label, seconds, library), top to bottom
    for group in groups:
        members = [r for r in rows if r["group"] == group]
        if not members:
            continue
        base = members[0].get("numpy_median_s")
        if base:
            bars.append((f"{group}: NumPy", base, "NumPy"))
        for r in members:
            bars.append((f"{group}: {label(r['impl'], group)}", r["median_s"],
                         library(r["impl"])))
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(bars) + 1.2))
    ys = range(len(bars))[::-1]
    ax.barh(list(ys), [b[1] * 1e6 for b in bars], color=[COLORS[b[2]] for b in bars])
    ax.set_yticks(list(ys), [b[0] for b in bars], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("median time (us, log scale)")
    ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for lib, c in COLORS.items()
               if any(b[2] == lib for b in bars)]
    ax.legend(handles, [lib for lib in COLORS if any(b[2] == lib for b in bars)], fontsize=8,
              loc="best")
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    out = pathlib.Path(outdir) / f"bench_{name}.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv):
    results, outdir = argv
    pathlib.Path(outdir).mkdir(parents=True, exist_ok=True)
    rows, _ = load_rows(results)
    return [plot(rows, name, title, groups, outdir) for name, (title, groups) in FIGURES.items()]


if __name__ == "__main__":
    print("\n".join(str(p) for p in main(sys.argv[1:]) if p))
