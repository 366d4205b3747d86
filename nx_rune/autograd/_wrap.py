"""How ``nx_rune.autograd``'s namespaces get NumPy's float64 defaults.

autograd programs are NumPy programs: ``np.array([1., 2.])``, ``np.ones(3)`` and ``np.sin(0.5)``
are float64, Python ints int64.  nx_rune's defaults are JAX's (float32 unless x64 mode is on), and
plain nx_rune code in the same process must keep them.  So every function of the autograd
namespaces runs in x64 mode, with NumPy's dtype promotion (int32 with float32 is float64), for
the duration of its call (``in_x64``): each mode is a ``contextvars.ContextVar`` of
``nx_rune.config``, set on entry and reset on exit, so nothing
outside the call, nor any other thread or task, sees it.  Calls whose positional arguments are
all float or complex arrays (and which take no keywords) cannot create a default dtype nor mix
integers with floats, and skip the scope: that keeps the common case (``np.sin(x)`` of a
float64 array) at the cost of one loop over the arguments.

NumPy functions nx_rune does not implement (``np.iscomplexobj``, ``np.bincount``, ...) are
called through ``numpy_fallback``: NumPy runs on the concrete values, as in autograd where such
functions are primitives without derivative rules; a traced value raises a clear error naming the
function instead of a wrong derivative.
"""
from __future__ import annotations

import functools

import numpy as _onp

from nx_rune.config import _SCOPED_NUMPY_PROMOTION, _SCOPED_X64
from nx_rune.tensor import ArrayBase, Tensor

__all__ = ["in_x64", "numpy_fallback", "to_nx", "is_traced"]

_INEXACT = ("f", "c")


# functions whose result can hold a default integer dtype even for float arguments (indices,
# counts): these always run in the x64 scope
_INDEX_RESULTS = frozenset({
    "argmax", "argmin", "argsort", "argwhere", "nonzero", "flatnonzero", "where", "searchsorted",
    "argpartition", "count_nonzero", "unique", "unique_values", "unique_counts",
    "unique_inverse", "unique_all", "digitize", "histogram", "indices", "lexsort", "nanargmax",
    "nanargmin", "matrix_rank", "shape", "size", "ndim", "around", "round", "floor_divide"})


def in_x64(f, name=None):
    """``f`` run in x64 mode for the duration of each call (see the module docstring)."""
    if getattr(f, "_nx_autograd_x64", False):
        return f
    fast = (name or getattr(f, "__name__", "")) not in _INDEX_RESULTS

    @functools.wraps(f)
    def run(*args, **kwargs):
        if fast and not kwargs and args:
            for a in args:
                if not (isinstance(a, ArrayBase) and a.dtype.kind in _INEXACT):
                    break
            else:
                return f(*args)
        token = _SCOPED_X64.set(True)
        ptoken = _SCOPED_NUMPY_PROMOTION.set(True)
        try:
            return f(*args, **kwargs)
        finally:
            _SCOPED_NUMPY_PROMOTION.reset(ptoken)
            _SCOPED_X64.reset(token)

    run._nx_autograd_x64 = True
    if name is not None:
        run.__name__ = name
    return run


def is_traced(tree) -> bool:
    """Whether ``tree`` (nested tuples, lists, dicts) holds a traced value (a tracer of grad,
    jvp, vmap or jit: an nx array that is not a concrete Tensor)."""
    if isinstance(tree, ArrayBase):
        return not isinstance(tree, Tensor)
    if isinstance(tree, (tuple, list)):
        return any(is_traced(t) for t in tree)
    if isinstance(tree, dict):
        return any(is_traced(t) for t in tree.values())
    return False


def _to_numpy(tree):
    if isinstance(tree, Tensor):
        return _onp.asarray(tree)
    if isinstance(tree, tuple):
        return type(tree)(*map(_to_numpy, tree)) if hasattr(tree, "_fields") else \
            tuple(map(_to_numpy, tree))
    if isinstance(tree, list):
        return [_to_numpy(t) for t in tree]
    if isinstance(tree, dict):
        return {k: _to_numpy(v) for k, v in tree.items()}
    return tree


def to_nx(out):
    """NumPy arrays and scalars in ``out`` (an array, or tuples/lists of them) as nx Tensors
    (zero-copy); everything else as it is."""
    if isinstance(out, _onp.generic) and out.dtype.kind in "biufc":
        from nx_rune.frontend import asarray
        return asarray(out)
    if isinstance(out, _onp.ndarray):
        if out.dtype.kind in "biufc":
            from nx_rune.frontend import asarray
            return asarray(out)
        return out
    if isinstance(out, tuple):
        if hasattr(out, "_fields"):
            return type(out)(*map(to_nx, out))
        return tuple(map(to_nx, out))
    if isinstance(out, list):
        return [to_nx(o) for o in out]
    return out


def numpy_fallback(f, qualname):
    """NumPy's ``f`` on concrete values, its array results as Tensors; NotImplementedError for
    traced arguments (no derivative rule: ``qualname`` names the function)."""

    @functools.wraps(f)
    def run(*args, **kwargs):
        if is_traced(args) or is_traced(kwargs):
            raise NotImplementedError(
                f"{qualname} is not differentiable (nor traceable) in nx_rune.autograd: NumPy "
                f"computes it on concrete values only; it was called with a traced argument")
        return to_nx(f(*_to_numpy(args), **_to_numpy(kwargs)))

    run._nx_autograd_x64 = True
    return run
