"""``nx.float32``, ``nx.int64``, ...: dtypes that are also callable, as NumPy's scalar types.

Each is usable wherever a dtype is (``nx.zeros(3, nx.float64)``, ``x.dtype == nx.float32``,
``np.dtype(nx.int64)``, dict keys and sets next to NumPy dtypes: equal and hashed as the dtype)
and, called, converts: ``nx.float64(3)`` is a 0-d float64 array, ``nx.int64(x)`` casts an array
(NumPy's truncation toward zero for floats), differentiably where the cast is (as
``jnp.float64(3)`` in JAX, which keeps the dtype only in x64 mode; nx keeps it always).
``isinstance(v, nx.float64)`` is NumPy's check (``isinstance(np.float64(1), nx.float64)``).
The repr is the dtype's (``dtype('float64')``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["ScalarType", "SCALAR_TYPES"]


class ScalarType:
    """A dtype that converts when called (see the module docstring)."""
    __slots__ = ("dtype", "type", "__name__")
    _nx_scalar_type = True

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.type = self.dtype.type
        self.__name__ = self.dtype.name if self.dtype.kind != "b" else "bool_"

    def __call__(self, x=0):
        """``x`` (a number, a sequence or an array) as an array of this dtype."""
        from nx_rune.frontend import asarray, astype
        from nx_rune.tensor import ArrayBase
        if isinstance(x, ArrayBase):
            return x if x.dtype == self.dtype else astype(x, self.dtype)
        if isinstance(x, str):
            x = self.type(x)
        return asarray(x, self.dtype)

    def __getattr__(self, name):
        return getattr(self.dtype, name)

    def __eq__(self, other):
        if isinstance(other, ScalarType):
            return self.dtype == other.dtype
        try:
            return self.dtype == other
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.dtype)

    def __instancecheck__(self, obj):
        return isinstance(obj, self.type)

    def __repr__(self):
        return repr(self.dtype)

    def __str__(self):
        return str(self.dtype)

    def __reduce__(self):
        return (ScalarType, (self.dtype,))


_NAMES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
SCALAR_TYPES = {name: ScalarType(getattr(np, name)) for name in _NAMES}
