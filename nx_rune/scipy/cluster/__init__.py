"""``nx.scipy.cluster``: ``nx.scipy.cluster.vq`` (vector quantization), as
``jax.scipy.cluster``."""
from nx_rune.scipy.cluster import vq

__all__ = ["vq"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
