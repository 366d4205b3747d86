"""Type aliases for annotating code that uses nx_rune (``from nx_rune.typing import ArrayLike``).

``Array`` is what the functions return: a Tensor, or a tracer under a transformation (both are
``nx_rune.tensor.ArrayBase``).  At runtime it is a forward reference bound to
``nx_rune.tensor`` (so importing this module never imports the array machinery and cannot cycle);
``typing.get_type_hints`` resolves it to ``ArrayBase``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ForwardRef, Sequence, Union

import numpy as np

__all__ = ["Array", "ArrayLike", "DTypeLike", "ShapeLike", "Axis", "PyTree"]

if TYPE_CHECKING:
    from nx_rune.tensor import ArrayBase

    Array = ArrayBase
else:
    Array = ForwardRef("ArrayBase", module="nx_rune.tensor")

# Anything the functions accept as an array operand (converted with ``nx.asarray``).
ArrayLike = Union[Array, np.ndarray, np.generic, int, float, complex, bool, Sequence[Any]]
# A dtype: a NumPy dtype, a scalar type (np.float32, float, ...), its name, or None (default).
DTypeLike = Union[np.dtype, type, str, None]
ShapeLike = Union[int, Sequence[int]]
Axis = Union[None, int, Sequence[int]]
# A nested structure of tuples, lists, dicts and None with arrays at the leaves.
PyTree = Any


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
