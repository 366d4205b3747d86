"""``nx.scipy.linalg``: SciPy's ``solve_triangular``, ``cho_factor``, ``cho_solve`` and
``expm``, differentiable and batched over leading axes (see ``nx_rune.frontend.linalg``)."""
from nx_rune.frontend.linalg import cho_factor, cho_solve, expm, solve_triangular

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "expm"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
