"""The names of ``autograd.numpy`` whose behaviour is autograd's own rather than NumPy's.

- ``abs``/``absolute``/``fabs``: autograd's derivative of |x| at x = 0 is 0 (``sign(x)``), where
  nx_rune's (JAX's) is 1; the values are nx_rune's.
- ``where(condition, x, y)`` of Python values only (no array among them) returns a Python value,
  as autograd's ``custom_where`` (``np.where(True, 1, 2)`` is the int 1; lists come back as
  lists); with arrays it is nx_rune's ``where``.
- ``make_diagonal(D, offset, axis1, axis2)``: the complement of ``diagonal`` autograd adds: a
  new array whose diagonal (``offset``) in axes ``axis1``, ``axis2`` is ``D``'s last axis.
- ``std``: over a single element (N = 1) its derivative is 0, as autograd's, where nx_rune's
  (JAX's) is nan (the derivative of sqrt at 0).
- ``longdouble``/``clongdouble``: float64 and complex128 (nx_rune has no extended precision;
  NumPy's ``longdouble`` is float64 on some platforms too).
"""
from __future__ import annotations

import numpy as _onp

import nx_rune as _nx
from nx_rune.autograd._wrap import in_x64
from nx_rune.primitives import current_interpreter
from nx_rune.tensor import ArrayBase

__all__ = ["abs", "absolute", "fabs", "where", "make_diagonal", "std", "longdouble",
           "clongdouble"]

longdouble = _onp.float64
clongdouble = _onp.complex128


@_nx.custom_jvp
def _real_abs(x):
    return _nx.abs(x)


@_real_abs.defjvp
def _real_abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _nx.abs(x), t * _nx.sign(x)


@in_x64
def abs(x):
    """|x| (nx_rune's ``abs``); its derivative for real ``x`` is ``sign(x)``, 0 at 0 as in
    autograd (conj(x)/|x|, 0 at 0, for complex ``x``)."""
    x = _nx.asarray(x)
    if x.dtype.kind == "f" and current_interpreter() is not None:
        return _real_abs(x)
    return _nx.abs(x)     # no transformation active: the value alone (the fast path)


absolute = abs


@in_x64
def fabs(x):
    """|x| of real ``x`` as a float (NumPy's ``fabs``), derivative ``sign(x)``."""
    x = _nx.asarray(x)
    if x.dtype.kind == "f" and current_interpreter() is not None:
        return _real_abs(x)
    return _nx.fabs(x)


def _is_array(x) -> bool:
    if isinstance(x, (ArrayBase, _onp.ndarray, _onp.generic)):
        return True
    if isinstance(x, (list, tuple)):
        return any(_is_array(t) for t in x)
    return False


_nx_where = in_x64(_nx.where, "where")


def where(condition, *args, **kwargs):
    """NumPy's ``where``: ``where(condition)`` the indices of the true elements (a tuple of
    arrays), ``where(condition, x, y)`` x where condition else y (broadcast).  With Python values
    only (numbers, bools, lists of them) the result is a Python value, as in autograd."""
    if not args and not kwargs:
        return _nx_where(condition)
    if len(args) + len(kwargs) != 2:
        raise ValueError("either both or neither of x and y should be given")
    x = args[0] if len(args) > 0 else kwargs.get("x")
    y = args[1] if len(args) > 1 else kwargs.get("y")
    if _is_array(condition) or _is_array(x) or _is_array(y):
        return _nx_where(condition, x, y)
    res = _onp.where(condition, x, y)
    return res.tolist() if isinstance(res, _onp.ndarray) else res


@in_x64
def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """An array with ``D``'s last axis (length n) on its diagonal ``offset`` in axes ``axis1``
    and ``axis2`` and zeros elsewhere: shape ``D.shape[:-1]`` with two axes of length
    n + |offset| placed at ``axis1`` and ``axis2`` (of the result).  The inverse of
    ``diagonal(A, offset, axis1, axis2)``; linear in ``D`` (differentiable)."""
    D = _nx.asarray(D)
    if D.ndim < 1:
        raise ValueError(f"D: make_diagonal needs at least one axis, got shape {D.shape}")
    if not isinstance(offset, (int, _onp.integer)) or isinstance(offset, bool):
        raise TypeError(f"offset: must be an int, got {offset!r}")
    n = D.shape[-1]
    m = n + int(_onp.abs(offset))
    ndim = D.ndim + 1     # the result's
    a1, a2 = (_check_axis(a, ndim, name) for a, name in ((axis1, "axis1"), (axis2, "axis2")))
    if a1 == a2:
        raise ValueError(f"axis1 and axis2 cannot be the same axis ({axis1}, {axis2})")
    # the one-hot tensor placing D[..., i] at [i - min(offset, 0), i + max(offset, 0)]
    onehot = _onp.zeros((n, m, m), dtype=D.dtype)
    i = _onp.arange(n)
    onehot[i, i - min(offset, 0), i + max(offset, 0)] = 1
    out = _nx.einsum("...i,ijk->...jk", D, _nx.asarray(onehot))
    return _nx.moveaxis(out, (ndim - 2, ndim - 1), (a1, a2))


def _check_axis(axis, ndim, name):
    if not isinstance(axis, (int, _onp.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: {axis} is out of range for a result of {ndim} axes")
    return axis % ndim


@in_x64
def std(a, *args, **kwargs):
    """nx_rune's ``std`` (NumPy's argument order: ``axis``, then keywords); over a single
    element its derivative is 0 (as autograd's) instead of nan."""
    a = _nx.asarray(a)
    axis = args[0] if args else kwargs.get("axis")
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    if int(_onp.prod([a.shape[ax] for ax in axes])) <= 1:
        a = _nx.stop_gradient(a)
    return _nx.std(a, *args, **kwargs)
