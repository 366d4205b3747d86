"""``nx.scipy``: SciPy-style namespaces built on nx_rune, differentiable like the rest:
``nx.scipy.special`` (special functions) and ``nx.scipy.stats`` (distributions).

SciPy is a dependency: its ``scipy.special`` loops compute the special functions (imported on
first use, not when nx_rune is imported).
"""
from nx_rune.scipy import special, stats

__all__ = ["special", "stats"]
