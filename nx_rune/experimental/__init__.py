"""JAX's ``jax.experimental`` names that nx_rune has: ``io_callback`` and the ``ode`` module
(``from nx_rune.experimental.ode import odeint``)."""
from nx_rune.callbacks import io_callback
from nx_rune.experimental import ode

__all__ = ["io_callback", "ode"]
