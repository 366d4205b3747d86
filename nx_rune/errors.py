"""The exceptions nx_rune raises for misuse of transformations (``nx.errors``).

Every other bad input raises the built-in exception NumPy would (TypeError, ValueError,
IndexError) with a message naming the argument.
"""

__all__ = ["TracerArrayConversionError", "ConcretizationTypeError", "UnexpectedTracerError",
           "ModifiedInPlaceError"]


class TracerArrayConversionError(TypeError):
    """A value traced by a transformation was converted to a NumPy array (``np.asarray(x)``,
    ``np.sin(x)``, ``x.numpy()``, DLPack): the transformation would lose track of it, so a
    derivative through it would silently be zero.  Use nx operations instead, wrap NumPy code in
    ``nx.custom_vjp``/``nx.custom_jvp``, or apply ``nx.stop_gradient`` first."""


class ConcretizationTypeError(TypeError):
    """Python needed the concrete value of a value traced by ``jit`` (``if x > 0:``,
    ``float(x)``, a shape from a value): mark the argument static (``static_argnums``) or use
    ``nx.where`` / ``nx.lax.cond``."""


class UnexpectedTracerError(RuntimeError):
    """A tracer was used outside the transformation that made it (stored in a global, a closure
    or an aux output)."""


class ModifiedInPlaceError(RuntimeError):
    """A value that a recorded operation needs for its derivative was modified in place
    (``x[idx] = v``, ``x += y``, ``nx.assign``) after the operation was recorded: the backward
    pass would have been wrong, so it raises instead."""


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
