"""``nx.scipy.spatial``: ``nx.scipy.spatial.transform`` (``Rotation``, ``Slerp``), as
``jax.scipy.spatial``."""
from nx_rune.scipy.spatial import transform

__all__ = ["transform"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
