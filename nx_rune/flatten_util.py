"""``ravel_pytree``: a pytree of arrays as one flat vector, and the function that undoes it.

Useful for handing a model's parameters to code that wants a single vector (a line search, a
Hessian of all parameters, ``scipy.optimize``).  Both directions are built from front-end ops
(reshape, cast, concatenate, slicing), so they are differentiable under every transformation.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as ops
from nx_rune.frontend import asarray, zeros
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten
from nx_rune.typing import Array

__all__ = ["ravel_pytree"]

_WEAK = (bool, int, float, complex)        # Python scalars: weakly typed, as in JAX


def _rank(x):
    return 0 if isinstance(x, bool) else 1 if isinstance(x, int) else \
        2 if isinstance(x, float) else 3


def _promoted_dtype(leaves):
    """The dtype all ``leaves`` promote to: arrays by NumPy's promotion (nx's rule for two
    tensors), Python scalars weakly (they take the arrays' dtype when its kind suffices)."""
    arrays = [x for x in leaves if not isinstance(x, _WEAK)]
    scalars = [x for x in leaves if isinstance(x, _WEAK)]
    if arrays:
        dt = dtypes.result_type(*[x.dtype for x in arrays])
        for s in scalars:
            dt = dtypes.weak_result_type(dt, s)
        return dt
    top = max(scalars, key=_rank)         # only Python scalars: the default of the highest kind
    dt = dtypes.scalar_dtype(top)
    if dt.kind in "iu":
        dt = max((dtypes.scalar_dtype(s) for s in scalars), key=lambda d: d.itemsize)
    return dt


def _as_leaf(x):
    if isinstance(x, (ArrayBase,) + _WEAK):
        return x
    try:
        return asarray(x)
    except TypeError as e:
        raise TypeError(f"pytree: ravel_pytree needs arrays or numbers as leaves, got "
                        f"{type(x).__name__}: {e}") from None


def ravel_pytree(pytree: Any) -> tuple[Array, Callable[[Array], Any]]:
    """``(flat, unravel)``: ``flat`` is the 1-D concatenation of the leaves of ``pytree`` (each
    raveled in C order, in tree_flatten order), of the leaves' promoted dtype (Python scalars
    weakly typed; float32 and empty for a tree without leaves); ``unravel(flat)`` rebuilds the
    tree, each leaf with its original shape and dtype.

    When every leaf has the same dtype, ``unravel`` keeps the dtype of the vector it is given
    (as JAX: a float64 vector gives float64 leaves); otherwise it requires a vector of the
    promoted dtype (TypeError) and casts each piece back (a complex vector cast back to real
    leaves drops the imaginary parts, with NumPy's ComplexWarning).  ValueError for a vector of
    the wrong shape.
    """
    leaves, treedef = tree_flatten(pytree)
    leaves = [_as_leaf(x) for x in leaves]
    if not leaves:
        return zeros((0,), dtypes.float32), _Unravel(treedef, (), (), None, None)
    to_dtype = _promoted_dtype(leaves)
    # a Python scalar comes back as a 0-d array of the dtype it has standing alone (JAX's rule)
    from_dtypes = tuple(dtypes.scalar_dtype(x) if isinstance(x, _WEAK) else x.dtype
                        for x in leaves)
    arrays = [asarray(x, to_dtype) if isinstance(x, _WEAK) else x for x in leaves]
    shapes = tuple(a.shape for a in arrays)
    pieces = [ops.reshape(ops.astype(a, to_dtype), (-1,)) for a in arrays]
    flat = pieces[0] if len(pieces) == 1 else ops.concatenate(pieces)
    single = all(d == to_dtype for d in from_dtypes)
    return flat, _Unravel(treedef, shapes, from_dtypes, None if single else to_dtype, to_dtype)


class _Unravel:
    """``unravel(flat)``: the inverse of one ravel_pytree call."""
    __slots__ = ("treedef", "shapes", "from_dtypes", "required_dtype", "flat_dtype", "size")

    def __init__(self, treedef, shapes, from_dtypes, required_dtype, flat_dtype):
        self.treedef, self.shapes, self.from_dtypes = treedef, shapes, from_dtypes
        self.required_dtype, self.flat_dtype = required_dtype, flat_dtype
        self.size = sum(int(np.prod(s)) for s in shapes)

    def __call__(self, flat: Array) -> Any:
        if not isinstance(flat, ArrayBase):
            flat = asarray(flat)
        if flat.shape != (self.size,):
            raise ValueError(f"flat: unravel expects a vector of shape ({self.size},), got "
                             f"shape {flat.shape}")
        if self.required_dtype is not None and flat.dtype != self.required_dtype:
            raise TypeError(f"flat: unravel expects a vector of dtype {self.required_dtype} "
                            f"(the leaves have several dtypes), got {flat.dtype}")
        leaves, off = [], 0
        for shape, dt in zip(self.shapes, self.from_dtypes):
            n = int(np.prod(shape))
            piece = ops.reshape(ops.shrink(flat, [(off, off + n)]), shape)
            leaves.append(piece if self.required_dtype is None else ops.astype(piece, dt))
            off += n
        return tree_unflatten(self.treedef, leaves)

    def __repr__(self):
        return f"unravel({self.treedef}, shapes={list(self.shapes)}, dtype={self.flat_dtype})"


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
