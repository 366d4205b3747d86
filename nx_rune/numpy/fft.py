"""``nx_rune.numpy.fft``: ``nx_rune.fft`` under JAX's module name (``jax.numpy.fft``)."""
from nx_rune.fft import *  # noqa: F401,F403
from nx_rune.fft import __all__  # noqa: F401


def __dir__():
    """The public names only (``__all__``)."""
    return sorted(__all__)
