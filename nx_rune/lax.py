"""``nx.lax``: structured control flow with JAX's semantics (``cond``, ``scan``, ``fori_loop``,
``while_loop``).

In eager mode each is plain Python (the transformations see every step); under ``nx.jit`` (and
``nx.make_jaxpr``) each is one equation of the program, its bodies traced once.  See
``nx_rune.compiler.control`` for how they differentiate.
"""
from nx_rune.compiler.control import cond, fori_loop, scan, while_loop

__all__ = ["cond", "scan", "fori_loop", "while_loop"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
