"""The Array API's linalg versions of names the main namespace also has: cross, outer, trace and
diagonal (exported as ``nx.linalg.cross``, ...)."""
from __future__ import annotations

import builtins
import operator

from nx_rune.frontend import arrangement, products
from nx_rune.frontend._core import broadcast_shapes, broadcast_to, operand, promote
from nx_rune.frontend.elementwise import multiply
from nx_rune.frontend.movement import reshape
from nx_rune.typing import Array, ArrayLike, DTypeLike

# -- the Array API's versions of shared names -----------------------------------------------

def linalg_cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Cross products of the 3-vectors along ``axis`` (size 3 in both, ValueError otherwise;
    the other axes broadcast): the Array API's ``linalg.cross``."""
    a, b = promote(x1, x2)
    nd = builtins.max(a.ndim, b.ndim)
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis: expected an int, got {axis!r}") from None
    if not -builtins.min(a.ndim, b.ndim) <= ax < 0 and not (a.ndim == b.ndim and 0 <= ax < nd):
        raise IndexError(f"axis: {axis} is out of range for shapes {a.shape} and {b.shape}")
    if a.shape[ax] != 3 or b.shape[ax] != 3:
        raise ValueError(f"x1, x2: cross products need size 3 along axis {axis}, got shapes "
                         f"{a.shape} and {b.shape}")
    shape = broadcast_shapes(a.shape, b.shape)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    return products.cross(a, b, axis=ax)


def linalg_outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The outer product of two 1-D tensors (ValueError otherwise): (n, m), promoted dtype."""
    a, b = promote(x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"x1, x2: outer needs 1-D tensors, got shapes {a.shape} and {b.shape}")
    return multiply(reshape(a, (a.shape[0], 1)), reshape(b, (1, b.shape[0])))


def linalg_trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike = None) -> Array:
    """Sums along diagonal ``offset`` of each matrix of x (..., m, n): shape x.shape[:-2];
    ``sum``'s dtype, or ``dtype``."""
    x = operand(x)
    if x.ndim < 2:
        raise ValueError(f"x: trace needs at least 2 dimensions, got shape {x.shape}")
    return arrangement.trace(x, offset, -2, -1, dtype)


def linalg_diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """Diagonal ``offset`` of each matrix of x (..., m, n): (..., length), x's dtype."""
    x = operand(x)
    if x.ndim < 2:
        raise ValueError(f"x: diagonal needs at least 2 dimensions, got shape {x.shape}")
    return arrangement.diagonal(x, offset, -2, -1)
