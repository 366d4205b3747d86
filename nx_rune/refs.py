"""JAX's mutable array references: ``nx.new_ref(x)``, ``ref[idx]``, ``ref[idx] = v``,
``nx.freeze(ref)`` (JAX's ``jax.new_ref``/``jax.freeze``, the "state" pages).

A :class:`Ref` holds an array and is read and written by indexing: ``ref[...]`` is its value
(a new array, not a view: a later write does not change it), ``ref[idx] = v`` and
``ref[idx] += v`` write into it.  nx_rune arrays are mutable, so a Ref is a thin holder: a
write is an in-place write of the held array (``x[idx] = v``), with nx_rune's meaning under
the transformations: a Ref passed as an argument of a ``jit``-ed or ``vmap``-ed function is a
pytree whose leaf is its array, written back into after the call as the eager call would
(``vmap``: each example writes its own row).  A Ref made inside a function being transformed
(``grad`` of a function using a Ref as scratch) takes the traced values written into it.
A Ref made outside a transformation and closed over by the transformed function cannot take
a traced value, nor be read inside ``jit`` (JAX's closed-over refs under ``jit``): pass it as
an argument instead; a TypeError says so.  Refs are not arrays: arithmetic on one raises
TypeError, as JAX's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from nx_rune import frontend
from nx_rune import primitives as P
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tree_util import register_pytree_node

__all__ = ["Ref", "new_ref", "freeze"]


class Ref:
    """A mutable array reference (JAX's ``jax.Ref``): ``ref[idx]`` reads, ``ref[idx] = v``
    writes; ``shape``, ``dtype``, ``ndim``, ``size`` are the held array's."""
    __slots__ = ("_value", "_level")

    def __init__(self, value: Any, level: Any = None):
        self._value = value
        # the transformation active where the Ref was made: traced values of that one (and
        # of none newer) may be written into a concrete Ref by rebinding it
        self._level = level

    shape = property(lambda self: self._value.shape, doc="The held array's shape.")
    dtype = property(lambda self: self._value.dtype, doc="The held array's dtype.")
    ndim = property(lambda self: self._value.ndim, doc="The held array's number of axes.")
    size = property(lambda self: self._value.size, doc="The held array's number of elements.")

    def __len__(self) -> int:
        return len(self._value)

    def __getitem__(self, idx: Any) -> Any:
        interp = P._interpreter.get()
        if type(self._value) is Tensor and interp is not self._level and \
                getattr(interp, "stages", False):
            # jit would bake the value read now into its program, stale after later writes
            raise TypeError(
                "Ref: a Ref made outside a jit-ed function and closed over by it cannot be read "
                "inside it (the compiled program would keep the value it held when traced): "
                "pass the Ref to the function as an argument")
        return frontend.copy(self._value[idx])

    def __setitem__(self, idx: Any, value: Any) -> None:
        cur = self._value
        if type(cur) is Tensor and isinstance(value, ArrayBase) and type(value) is not Tensor:
            if P._interpreter.get() is not self._level:
                raise TypeError(
                    "Ref: a traced value cannot be written into a Ref made outside the "
                    "transformation that traces it (a Ref closed over by a jit-ed, vmap-ed or "
                    "differentiated function): pass the Ref to the function as an argument")
            self._value = cur.at[idx].set(value)    # made here: it takes the traced value
            return
        cur[idx] = value

    def addupdate(self, x: Any, idx: Any = ...) -> None:
        """``ref[idx] += x`` (JAX's ``Ref.addupdate``)."""
        self[idx] = self._value[idx] + x

    def unsafe_buffer_pointer(self) -> int:
        """The address of the held array's memory (it stays the same across writes)."""
        c = self._value._concrete_tensor() if isinstance(self._value, ArrayBase) else None
        if c is None:
            raise TypeError("unsafe_buffer_pointer: the Ref holds a traced value")
        return int(np.asarray(c).ctypes.data)

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError("a Ref is not an array: read its value with ref[...]")

    def __repr__(self) -> str:
        r = repr(self._value)
        return "Ref" + r[r.index("("):] if "(" in r else f"Ref({r})"


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A new :class:`Ref` holding a copy of ``init_val`` (an array or a Python number, weakly
    typed as JAX's), as JAX's ``jax.new_ref``.  ``memory_space`` and ``kind`` must be None
    (one memory).

    Examples
    --------
    >>> import nx_rune as nx
    >>> r = nx.new_ref(nx.zeros(3))
    >>> r[0] = 1.0
    >>> print(nx.freeze(r))
    [1. 0. 0.]
    """
    if memory_space is not None or kind is not None:
        raise ValueError(f"new_ref: memory_space and kind must be None (nx_rune has one "
                         f"memory), got {memory_space!r}, {kind!r}")
    if isinstance(init_val, Ref):
        raise TypeError("new_ref: init_val is a Ref; pass its value (ref[...])")
    value = init_val if isinstance(init_val, ArrayBase) and type(init_val) is not Tensor \
        else frontend.array(init_val)
    return Ref(value, P._interpreter.get())


def freeze(ref: Ref) -> Any:
    """The value of ``ref`` as an array (JAX's ``jax.freeze``: the Ref is not to be used
    afterwards)."""
    if not isinstance(ref, Ref):
        raise TypeError(f"freeze: expected a Ref (nx.new_ref(x)), got {type(ref).__name__}")
    return ref._value


# a Ref is a pytree of its array: jit and vmap trace it as an argument and write back into it
def _unflatten(_: Any, children: Any) -> Ref:
    (value,) = children
    return Ref(value, P._interpreter.get())


register_pytree_node(Ref, lambda r: ((r._value,), None), _unflatten)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
