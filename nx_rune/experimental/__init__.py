"""JAX's ``jax.experimental`` names that nx_rune has: ``io_callback``, the ``ode`` module
(``from nx_rune.experimental.ode import odeint``) and the ``checkify`` module
(``from nx_rune.experimental import checkify``)."""
from nx_rune.callbacks import io_callback
from nx_rune.experimental import checkify, ode

__all__ = ["io_callback", "ode", "checkify"]
