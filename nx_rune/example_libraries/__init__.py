"""``nx_rune.example_libraries``: JAX's ``jax.example_libraries`` on nx_rune:
:mod:`~nx_rune.example_libraries.optimizers` (optimizers as ``(init_fun, update_fun,
get_params)`` triples, and schedules) and :mod:`~nx_rune.example_libraries.stax` (layers as
``(init_fun, apply_fun)`` pairs)."""
from nx_rune.example_libraries import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]


def __dir__():
    """The public names only (``__all__``)."""
    return sorted(__all__)
