"""Matrix and vector products: matmul, dot, inner, outer, tensordot, vecdot, vdot, kron,
cross, and polyval (Horner's products).

All are compositions of views, elementwise products, sums and ``matmul``: differentiable in
every operand.  Complex operands are conjugated only where the function's definition says so
(vecdot, vdot).
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.errors import ShapeError
from nx_rune.frontend import elementwise, reductions
from nx_rune.frontend._core import (
    astype,
    broadcast_all,
    broadcast_shapes,
    operand,
    promote,
    zeros_like_t,
)
from nx_rune.frontend.elementwise import add, multiply, negative, subtract
from nx_rune.frontend.movement import moveaxis, reshape, shrink, stack, swapaxes, transpose
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase
from nx_rune.typing import Array, ArrayLike, DTypeLike

__all__ = ["matmul", "dot", "outer", "inner", "tensordot", "vecdot", "vdot", "kron", "cross",
           "polyval"]


# -- linear algebra ------------------------------------------------------------------------------

def matmul(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
           preferred_element_type: DTypeLike = None) -> Array:
    """Matrix product with NumPy's rules: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes
    broadcast, 1-D operands promoted and their axis removed.  Promoted dtype (bool operands
    multiply as int32).  ValueError naming both shapes when k differs or batches mismatch.
    ``precision`` (JAX's keyword) is accepted and ignored; ``preferred_element_type``: the
    operands are converted to it first (the result's dtype)."""
    if preferred_element_type is not None:
        a, b = _preferred(a, b, preferred_element_type)
    if not (isinstance(a, ArrayBase) and isinstance(b, ArrayBase) and a.dtype == b.dtype):
        a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {a.shape} and "
                         f"{b.shape}")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ShapeError(f"matmul: contracted dimensions differ: shapes {a.shape} and {b.shape} "
                         f"({ka} != {kb})")
    try:
        broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} cannot be "
                         f"broadcast together") from None
    if dtypes.is_bool(a.dtype):
        a, b = astype(a, dtypes.int32), astype(b, dtypes.int32)
    return bind(P.matmul_p, a, b)


def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
        preferred_element_type: DTypeLike = None) -> Array:
    """NumPy's dot: products of scalars, inner product of vectors, matmul of matrices, and for
    N-d, a sum over the last axis of a and the second-to-last of b: shape a.shape[:-1] +
    b.shape[:-2] + b.shape[-1:].  Promoted dtype.  ``precision`` (JAX's keyword) is accepted
    and ignored; ``preferred_element_type``: the operands are converted to it first."""
    if preferred_element_type is not None:
        a, b = _preferred(a, b, preferred_element_type)
    a, b = operand(a), operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b)
    bm = moveaxis(b, -2, 0)
    n = bm.shape[0]
    out = matmul(reshape(a, (-1, a.shape[-1])), reshape(bm, (n, -1)))
    return reshape(out, a.shape[:-1] + b.shape[:-2] + b.shape[-1:])


def _preferred(a, b, dtype):
    """a and b converted to JAX's ``preferred_element_type`` (the product's dtype)."""
    dt = dtypes.check_dtype(dtype)
    return astype(operand(a), dt), astype(operand(b), dt)


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
        raise ShapeError(f"inner: last dimensions differ: shapes {a.shape} and {b.shape}")
    if a.ndim == 1 or b.ndim == 1:
        return reductions.sum(multiply(a, b), -1) if a.ndim == b.ndim \
            else matmul(a, b) if b.ndim == 1 \
            else matmul(a, swapaxes(b, -1, -2))
    # (..., k) x (..., k) -> a.shape[:-1] + b.shape[:-1]
    out = matmul(reshape(a, (-1, a.shape[-1])), transpose(reshape(b, (-1, b.shape[-1]))))
    return reshape(out, a.shape[:-1] + b.shape[:-1])


def tensordot(x1: ArrayLike, x2: ArrayLike, /,
              axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Contract x1 and x2 over ``axes``: an int N (x1's last N axes with x2's first N, in
    order; 0 gives the outer product) or a pair (x1_axes, x2_axes) of equal-length sequences
    (or ints) of unique axes, negative ones counting from the end.

    Contracted sizes must be equal (no broadcasting: ValueError naming both shapes).  Shape: x1's
    free axes then x2's, in order; promoted dtype (bool: whether any product is true).
    One transpose of each operand (a copy only when its axes must move) and one matmul.
    """
    if isinstance(x1, ArrayBase) and isinstance(x2, ArrayBase) and x1.dtype == x2.dtype:
        a, b = x1, x2    # nothing to promote (the common case: skip promote's overhead)
    else:
        a, b = promote(x1, x2)
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ValueError(f"axes: expected an int or a pair of axis sequences, got {axes!r}")
        ca = _axis_list(axes[0], a.ndim, "axes[0]")
        cb = _axis_list(axes[1], b.ndim, "axes[1]")
        if len(ca) != len(cb):
            raise ValueError(f"axes: the two sequences differ in length ({axes!r})")
    else:
        try:
            n = operator.index(axes)
        except TypeError:
            raise TypeError(f"axes: expected an int or a pair of axis sequences, got "
                            f"{axes!r}") from None
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"axes: {n} must be in [0, min(x1.ndim, x2.ndim)] for shapes "
                             f"{a.shape} and {b.shape}")
        ca, cb = list(range(a.ndim - n, a.ndim)), list(range(n))
    for i, j in zip(ca, cb):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"axes: contracted axis {i} of x1 (shape {a.shape}) and axis {j} of "
                             f"x2 (shape {b.shape}) differ in size")
    fa = [i for i in range(a.ndim) if i not in ca]
    fb = [j for j in range(b.ndim) if j not in cb]
    k = math.prod(a.shape[i] for i in ca)
    out_shape = tuple(a.shape[i] for i in fa) + tuple(b.shape[j] for j in fb)
    dt = a.dtype
    if dtypes.is_bool(dt):   # products of bools: counted in int32, then "any" as NumPy's dot
        a, b = astype(a, dtypes.int32), astype(b, dtypes.int32)
    am = _as_matrix(a, fa + ca, (math.prod(a.shape[i] for i in fa), k))
    bm = _as_matrix(b, cb + fb, (k, math.prod(b.shape[j] for j in fb)))
    # the operands are promoted 2-D matrices with equal inner sizes: the primitive directly
    out = astype(bind(P.matmul_p, am, bm), dt)
    return out if out.shape == out_shape else reshape(out, out_shape)


def _as_matrix(x, order, shape):
    """x with its axes in ``order``, merged to the 2-D ``shape`` (views where strides allow)."""
    if order != list(range(x.ndim)):
        x = transpose(x, order)
    return x if x.shape == shape else reshape(x, shape)


def _axis_list(axes, ndim, name):
    axes = [axes] if not isinstance(axes, (Sequence, np.ndarray)) else list(axes)
    out = [normalize_axis(a, ndim, name) for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {axes!r}")
    return out


def conjugated(x):
    """The complex conjugate of a complex ``x`` (``x`` itself when real)."""
    return elementwise.conj(x) if dtypes.is_complex(x.dtype) else x


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Dot products sum(conj(x1) * x2) along ``axis`` (x1 conjugated when complex).

    ``axis`` counts from the end (in [-N, -1], N = min(x1.ndim, x2.ndim); a non-negative axis
    only when the ranks are equal); its size must be the same in both (no broadcasting along
    it: ValueError).  The other axes broadcast.  Shape: the broadcast shape without ``axis``;
    promoted dtype.
    """
    a, b = promote(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"vecdot: operands must be at least 1-D, got shapes {a.shape} and "
                         f"{b.shape}")
    n = builtins.min(a.ndim, b.ndim)
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis: expected an int, got {axis!r}") from None
    if ax >= 0:
        if a.ndim != b.ndim:
            raise IndexError(f"axis: {axis} must be negative (counting from the end) for "
                             f"operands of different ranks ({a.shape} and {b.shape})")
        ax -= a.ndim
    normalize_axis(ax, n, "axis")
    if a.shape[ax] != b.shape[ax]:
        raise ValueError(f"axis: sizes along axis {axis} differ: shapes {a.shape} and {b.shape}")
    a, b = moveaxis(a, ax, -1), moveaxis(b, ax, -1)
    # sum accumulates small ints in 32 bits; the standard's result keeps the promoted dtype
    # (the same values modulo 2**bits as a wrapping accumulation; bool: any product true)
    return astype(reductions.sum(multiply(conjugated(a), b), -1), a.dtype)


def vdot(a: ArrayLike, b: ArrayLike) -> Array:
    """sum(conj(a) * b) over the flattened a and b (equal sizes, ValueError otherwise; a
    conjugated when complex): a 0-d tensor of the promoted dtype."""
    a, b = promote(a, b)
    if a.size != b.size:
        raise ShapeError(f"vdot: a and b must have the same number of elements, got shapes "
                         f"{a.shape} and {b.shape}")
    a, b = reshape(a, (-1,)), reshape(b, (-1,))
    if dtypes.is_complex(a.dtype):
        a = conjugated(a)
    if dtypes.is_bool(a.dtype):
        return reductions.any(multiply(a, b))
    return matmul(a, b)


def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """Kronecker product: blocks ``a[i, j, ...] * b``.  The rank is max(a.ndim, b.ndim) (the
    shorter shape gets leading 1s); shape a.shape[k] * b.shape[k] per axis; promoted dtype."""
    a, b = promote(a, b)
    nd = builtins.max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    # (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...) broadcast, then merged pairwise
    a2 = reshape(a, tuple(d for n in sa for d in (n, 1)))
    b2 = reshape(b, tuple(d for n in sb for d in (1, n)))
    return reshape(multiply(a2, b2), tuple(m * n for m, n in zip(sa, sb)))


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Array:
    """Cross products of the 2- or 3-vectors along ``axisa`` of a and ``axisb`` of b (``axis``
    sets all three), other axes broadcast.

    Two 3-vectors (or a 2-vector taken with z = 0 and a 3-vector) give 3-vectors, placed along
    ``axisc`` of the result; two 2-vectors give the z component only (no vector axis), as
    NumPy.  Promoted dtype; ValueError for vectors of another length.
    """
    a, b = promote(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, normalize_axis(axisa, a.ndim, "axisa"), -1)
    b = moveaxis(b, normalize_axis(axisb, b.ndim, "axisb"), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product: vectors of length "
                         f"{na} and {nb} (must be 2 or 3)")
    if dtypes.is_bool(a.dtype):
        raise TypeError("cross: not defined for bool tensors (it subtracts)")
    broadcast_shapes(a.shape[:-1], b.shape[:-1])   # ValueError naming both when incompatible
    a0, a1, b0, b1 = _comp(a, 0), _comp(a, 1), _comp(b, 0), _comp(b, 1)
    z = subtract(multiply(a0, b1), multiply(a1, b0))
    if na == 2 and nb == 2:
        return z
    if na == 3 and nb == 3:
        a2, b2 = _comp(a, 2), _comp(b, 2)
        x = subtract(multiply(a1, b2), multiply(a2, b1))
        y = subtract(multiply(a2, b0), multiply(a0, b2))
    elif na == 3:   # b's z is 0
        a2 = _comp(a, 2)
        x, y = negative(multiply(a2, b1)), multiply(a2, b0)
    else:           # a's z is 0
        b2 = _comp(b, 2)
        x, y = multiply(a1, b2), negative(multiply(a0, b2))
    x, y, z = broadcast_all(x, y, z)
    c = stack([x, y, z], -1)
    return moveaxis(c, -1, normalize_axis(axisc, c.ndim, "axisc"))


def _comp(v, i):
    """Component i of the vectors along v's last axis: a view of shape v.shape[:-1]."""
    lim = [(0, d) for d in v.shape[:-1]] + [(i, i + 1)]
    return reshape(shrink(v, lim), v.shape[:-1])


def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """The polynomial with coefficients ``p`` (1-D, highest power first) at ``x``, by Horner's
    rule from 0 as NumPy: ``((0 * x + p[0]) * x + p[1]) * x + ...``.

    Shape: x's; dtype: p and x promoted (Python scalars weak).  Differentiable in both.  An
    empty p gives zeros.  ValueError unless p is 1-D.
    """
    p, x = promote(p, x)
    if p.ndim != 1:
        raise ValueError(f"p: coefficients must be a 1-D sequence, got shape {p.shape}")
    y = zeros_like_t(x)
    for i in range(p.shape[0]):
        y = add(multiply(y, x), reshape(shrink(p, ((i, i + 1),)), ()))
    return y
