"""``nx.experimental.ode``: JAX's ``jax.experimental.ode``, ``odeint`` (adaptive Dormand-Prince,
differentiable by the adjoint method; the same function as ``nx.scipy.integrate.odeint``)."""
from nx_rune.scipy._odeint import odeint

__all__ = ["odeint"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
