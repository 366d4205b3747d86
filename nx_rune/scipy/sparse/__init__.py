"""``nx.scipy.sparse``: ``nx.scipy.sparse.linalg``, the Krylov solvers ``cg``, ``gmres`` and
``bicgstab`` for linear operators given as matrices or functions (as ``jax.scipy.sparse``;
there is no sparse matrix type)."""
from nx_rune.scipy.sparse import linalg

__all__ = ["linalg"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
