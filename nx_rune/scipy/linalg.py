"""``nx.scipy.linalg``: SciPy's ``solve_triangular``, ``cho_factor``, ``cho_solve`` and
``expm``, differentiable and batched over leading axes (see ``nx_rune.frontend.linalg``), and
``solve_banded`` (differentiable)."""
from nx_rune.frontend.linalg import cho_factor, cho_solve, expm, solve_triangular
from nx_rune.scipy._banded import solve_banded

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "expm", "solve_banded"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
