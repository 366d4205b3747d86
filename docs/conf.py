"""Sphinx configuration of nx_rune's documentation site (PyData conventions).

Build with ``python -m sphinx -W -b html docs docs/_build/html`` from the repository root.
"""
import os
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

import nx_rune  # noqa: E402

project = "nx_rune"
author = "nx_rune developers"
copyright = "2026, nx_rune developers"
version = release = nx_rune.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "_intersphinx", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.json", "sg_execution_times.rst"]
suppress_warnings = ["myst.header", "config.cache"]
smartquotes = False         # keep "--flag" and quotes as typed (command lines in the pages)

# -- API reference: autosummary writes one page per public name from its docstring -------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
napoleon_numpy_docstring = True
napoleon_google_docstring = True    # "Args:" sections
add_module_names = False

# -- Markdown guide pages ----------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3

# -- links to NumPy, SciPy, JAX and Python ------------------------------------------------------
# Each project's inventory is read from its site; the copies in _intersphinx/ (written by
# _intersphinx/make_inventories.py for the names these pages link to) serve when it cannot be
# reached, so an offline build resolves the same links.
_INV = ROOT / "docs" / "_intersphinx"
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", (None, str(_INV / "python.inv"))),
    "numpy": ("https://numpy.org/doc/stable/", (None, str(_INV / "numpy.inv"))),
    "scipy": ("https://docs.scipy.org/doc/scipy/", (None, str(_INV / "scipy.inv"))),
    "jax": ("https://docs.jax.dev/en/latest/", (None, str(_INV / "jax.inv"))),
}
intersphinx_timeout = 5
if os.environ.get("NX_RUNE_DOCS_OFFLINE", "") == "1":      # skip the network altogether
    intersphinx_mapping = {k: (url, str(_INV / f"{k}.inv"))
                           for k, (url, _) in intersphinx_mapping.items()}

# -- the performance page's plots, drawn from the saved benchmark results ----------------------
def _bench_plots():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_bench_plots", ROOT / "docs" / "_scripts" / "bench_plots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main([str(ROOT / "docs" / "_data" / "benchmarks.json"),
                 str(ROOT / "docs" / "_generated")])


_bench_plots()

# -- the example gallery: examples/*.py run, their printed output and plots in the page --------
_GALLERY_PLOTS = ROOT / "docs" / "_build" / "gallery_plots"


def _gallery_argv(gallery_conf, script_vars):
    """Command-line arguments of each example under the gallery: small runs, plots to a file."""
    name = pathlib.Path(script_vars["src_file"]).stem
    _GALLERY_PLOTS.mkdir(parents=True, exist_ok=True)
    plot = ["--plot", str(_GALLERY_PLOTS / f"{name}.png")]
    return {
        "train_mlp": ["--epochs", "5", "--no-progress"] + plot,
        "gp_regression": ["--steps", "150", "--no-progress"] + plot,
        "logistic_newton": ["--steps", "8"],
    }.get(name, [])


class _SavedPlotScraper:
    """Puts the png an example wrote with ``--plot`` into its gallery page."""

    def __repr__(self):          # sphinx-gallery keys its cache on the configuration's repr
        return "_SavedPlotScraper"

    def __call__(self, block, block_vars, gallery_conf):
        from sphinx_gallery.scrapers import figure_rst

        name = pathlib.Path(block_vars["src_file"]).stem
        src = _GALLERY_PLOTS / f"{name}.png"
        if not src.exists():
            return ""
        dest = next(block_vars["image_path_iterator"])
        shutil.move(str(src), dest)
        return figure_rst([dest], gallery_conf["src_dir"])


sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # every example runs but the distributed one, which starts Ray and Dask clusters: its page
    # shows the code (tests/test_distributed.py runs it)
    "filename_pattern": r"/(?!train_mlp_distributed)[^/]*\.py$",
    "ignore_pattern": r"__init__\.py",
    "reset_argv": _gallery_argv,
    "image_scrapers": ("matplotlib", _SavedPlotScraper()),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "min_reported_time": 1,
    "show_memory": False,
    "plot_gallery": "True",
}

# -- HTML ----------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "nx_rune"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "changelog": []}
html_show_sourcelink = False

# copy only the code of a ">>> " / "... " example, not its prompts or output
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True


# -- docstrings: nx_rune's are prose with math-like notation (|x|, *shape) that reStructuredText
# would read as substitutions and emphasis; outside ``literals`` those characters are escaped.
import re  # noqa: E402

_LITERAL = re.compile(r"(``.+?``|`[^`]+`_?)")


def _escape_markup(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if line.lstrip().startswith((">>>", "...")) or not any(c in line for c in "|*"):
            continue
        parts = _LITERAL.split(line)
        for j in range(0, len(parts), 2):          # the even parts are outside literals
            parts[j] = re.sub(r"(?<!\\)([|*])", r"\\\1", parts[j])
        lines[i] = "".join(parts)


def setup(app):
    # before napoleon (priority 500), which writes markup of its own
    app.connect("autodoc-process-docstring", _escape_markup, priority=400)
