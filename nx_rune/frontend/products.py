"""Matrix and vector products: matmul, dot, inner, outer."""
from __future__ import annotations

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.frontend import reductions
from nx_rune.frontend._core import astype, broadcast_shapes, operand, promote
from nx_rune.frontend.elementwise import multiply
from nx_rune.frontend.movement import moveaxis, reshape, swapaxes, transpose
from nx_rune.primitives import bind
from nx_rune.typing import Array, ArrayLike

__all__ = ["matmul", "dot", "outer", "inner"]


# -- linear algebra ------------------------------------------------------------------------------

def matmul(a: ArrayLike, b: ArrayLike) -> Array:
    """Matrix product with NumPy's rules: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes
    broadcast, 1-D operands promoted and their axis removed.  Promoted dtype (bool operands
    multiply as int32).  ValueError naming both shapes when k differs or batches mismatch."""
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {a.shape} and "
                         f"{b.shape}")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ValueError(f"matmul: contracted dimensions differ: shapes {a.shape} and {b.shape} "
                         f"({ka} != {kb})")
    try:
        broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} cannot be "
                         f"broadcast together") from None
    if dtypes.is_bool(a.dtype):
        a, b = astype(a, dtypes.int32), astype(b, dtypes.int32)
    return bind(P.matmul_p, a, b)


def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """NumPy's dot: products of scalars, inner product of vectors, matmul of matrices, and for
    N-d, a sum over the last axis of a and the second-to-last of b: shape a.shape[:-1] +
    b.shape[:-2] + b.shape[-1:].  Promoted dtype."""
    a, b = operand(a), operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b)
    bm = moveaxis(b, -2, 0)
    n = bm.shape[0]
    out = matmul(reshape(a, (-1, a.shape[-1])), reshape(bm, (n, -1)))
    return reshape(out, a.shape[:-1] + b.shape[:-2] + b.shape[-1:])


def outer(a: ArrayLike, b: ArrayLike) -> Array:
    """Outer product of the flattened a and b: shape (a.size, b.size); promoted dtype."""
    a, b = reshape(operand(a), (-1, 1)), reshape(operand(b), (1, -1))
    return multiply(a, b)


def inner(a: ArrayLike, b: ArrayLike) -> Array:
    """Sum over the last axes of a and b (equal sizes): shape a.shape[:-1] + b.shape[:-1];
    promoted dtype (products of scalars for 0-d operands)."""
    a, b = operand(a), operand(b)
    if not (a.ndim and b.ndim):
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: last dimensions differ: shapes {a.shape} and {b.shape}")
    if a.ndim == 1 or b.ndim == 1:
        return reductions.sum(multiply(a, b), -1) if a.ndim == b.ndim else matmul(a, b) if b.ndim == 1 \
            else matmul(a, swapaxes(b, -1, -2))
    # (..., k) x (..., k) -> a.shape[:-1] + b.shape[:-1]
    out = matmul(reshape(a, (-1, a.shape[-1])), transpose(reshape(b, (-1, b.shape[-1]))))
    return reshape(out, a.shape[:-1] + b.shape[:-1])

