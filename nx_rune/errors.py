"""The exceptions nx_rune raises for misuse of transformations (``nx.errors``).

Every other bad input raises the built-in exception NumPy would (TypeError, ValueError,
IndexError) with a message naming the argument; operands whose shapes do not fit together raise
``ShapeError``, a ValueError (NumPy's) that is also a TypeError (JAX's).
"""

__all__ = ["TracerArrayConversionError", "ConcretizationTypeError", "DerivativeConversionError",
           "UnexpectedTracerError", "ModifiedInPlaceError", "DonatedArrayError", "ShapeError"]


class TracerArrayConversionError(TypeError):
    """A value traced by a transformation was converted to a NumPy array (``np.asarray(x)``,
    ``np.sin(x)``, ``x.numpy()``, DLPack): the transformation would lose track of it, so a
    derivative through it would silently be zero.  Use nx operations instead, wrap NumPy code in
    ``nx.custom_vjp``/``nx.custom_jvp``, or apply ``nx.stop_gradient`` first."""


class ConcretizationTypeError(TypeError):
    """Python needed the concrete value of a value traced by ``jit`` or batched by ``vmap``
    (``if x > 0:``, ``float(x)``, a shape from a value): mark the argument static
    (``static_argnums``) or use ``nx.where`` / ``nx.lax.cond``."""


class DerivativeConversionError(ConcretizationTypeError):
    """A value that ``grad``/``jvp``/``vjp``/``hessian`` differentiates was converted to a
    Python number (``float(x)``, ``complex(x)``, ``x.item()``, ``x.tolist()`` of a float or
    complex value): the number carries no derivative, so the derivative through it would
    silently be lost.  Keep the value as a tensor, or apply ``nx.stop_gradient`` first.
    ``bool()``, ``int()`` and indexing read the value (as in JAX): they are piecewise constant,
    so Python control flow on a differentiated value works.  A ``ConcretizationTypeError``."""


class UnexpectedTracerError(RuntimeError):
    """A tracer was used outside the transformation that made it (stored in a global, a closure
    or an aux output)."""


class ModifiedInPlaceError(RuntimeError):
    """A value that a recorded operation needs for its derivative was modified in place
    (``x[idx] = v``, ``x += y``, ``nx.assign``) after the operation was recorded: the backward
    pass would have been wrong, so it raises instead."""


class DonatedArrayError(RuntimeError):
    """An array was used after it was donated to a jitted function (``jit(f,
    donate_argnums=...)``): the call took its memory (for the function's results where it
    could), so reading or writing it afterwards raises, as JAX does.  Use the function's
    results instead, or do not donate the argument."""


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)


class ShapeError(ValueError, TypeError):
    """Operand shapes that do not fit together: not broadcastable, contracted dimensions of a
    product that differ, a reshape to another number of elements, concatenated or stacked
    arrays of other shapes.  A ValueError, as NumPy raises, and a TypeError, as JAX raises, so
    that ``except ValueError`` (NumPy programs) and ``except TypeError`` (JAX programs: the
    JAX tutorials' ``except TypeError: print('Invalid shapes!')``) both catch it."""
