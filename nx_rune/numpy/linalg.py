"""``nx_rune.numpy.linalg``: ``nx_rune.linalg`` under JAX's module name (``jax.numpy.linalg``)."""
from nx_rune.linalg import *  # noqa: F401,F403
from nx_rune.linalg import __all__  # noqa: F401


def __dir__():
    """The public names only (``__all__``)."""
    return sorted(__all__)
