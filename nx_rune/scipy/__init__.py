"""``nx.scipy``: differentiable versions of SciPy functions (``nx.scipy.linalg``, ...)."""
from nx_rune.scipy import linalg

__all__ = ["linalg"]
