"""JAX's ``jax.experimental`` names that nx_rune has: ``io_callback``."""
from nx_rune.callbacks import io_callback

__all__ = ["io_callback"]
