"""Concrete values of tracers batched by ``vmap``, for derivative rules that read values.

Some derivative rules compute constants from the primal values with NumPy (the masks of
``max``, the tie shares of reductions, sorting permutations: see ``rules._val``).  Under
``vmap(grad(f))`` those primals are batched: a value has one array per example, not one array
of its shape.  The convention here keeps such rules NumPy code:

* ``values(x)`` gives x's values with one *leading* axis per active vmap level (outermost
  first), of size 1 where x is not batched by that level, so that arrays of different values
  broadcast against each other example by example.  An unbatched value keeps its own shape
  (NumPy's broadcasting adds the leading axes).
* ``constant(arr, ndim)`` turns an array computed from such values back into a constant of
  the same levels: its last ``ndim`` axes are the value's, any leading axes (then exactly one
  per active level) become batch tracers of those levels.

A rule that reduces over a value's axes shifts them by ``arr.ndim - x.ndim``.  The module
knows the interpreters only by duck typing (an interpreter with an ``axis_size`` is a vmap
level, a tracer with ``_batched`` set is one of its tracers): it sits below them.
"""
import numpy as np

from nx_rune import primitives as P
from nx_rune.errors import UnexpectedTracerError
from nx_rune.tensor import ArrayBase, Tensor

__all__ = ["levels", "values", "constant"]


def levels():
    """The active vmap levels (interpreters), outermost first.  A no_grad block hides the
    interpreters below it from binding but not from this list (its ``below``)."""
    out = []
    interp = P.current_interpreter()
    while interp is not None:
        if getattr(interp, "axis_size", None) is not None:
            out.append(interp)
        parent = interp.parent
        interp = parent if parent is not None else getattr(interp, "below", None)
    out.reverse()
    return out


def values(x):
    """The values of ``x`` (a tracer with no single concrete Tensor) as an ndarray with one
    leading axis per active vmap level, then x's own axes; None when they are not known (a
    value traced abstractly)."""
    chain = []          # (level, batch axis), innermost first
    v = x
    while isinstance(v, ArrayBase) and not isinstance(v, Tensor):
        if getattr(v, "_batched", False):
            chain.append((v._interp, v.bdim))
        v = getattr(v, "primal", None)
    if not isinstance(v, Tensor):
        return None
    arr = v._np()
    chain.reverse()
    for k, (_, d) in enumerate(chain):
        arr = np.moveaxis(arr, k + d, k)
    active = levels()
    pos = {id(lv): i for i, lv in enumerate(active)}
    where = []
    for lv, _ in chain:
        i = pos.get(id(lv))
        if i is None or (where and i <= where[-1]):
            raise UnexpectedTracerError(
                f"a value batched by a {lv.name} transformation that is not active here (shape "
                f"{x.shape}, dtype {x.dtype}) reached a derivative rule: a tracer escaped its "
                f"vmap")
        where.append(i)
    shape = [1] * len(active)
    for i, n in zip(where, arr.shape[:len(chain)]):
        shape[i] = n
    return arr.reshape(tuple(shape) + arr.shape[len(chain):])


def constant(arr, ndim):
    """A constant from ``arr`` (C-contiguous) whose last ``ndim`` axes are the value's: a
    Tensor, or batch tracers of the active vmap levels when ``arr`` has their leading axes
    (the layout of ``values``; a level whose axis has size 1 leaves the constant unbatched)."""
    nb = arr.ndim - ndim
    if nb == 0:
        return Tensor._wrap(arr)
    active = levels()
    if nb != len(active):
        raise ValueError(f"a constant of shape {arr.shape} for a value of {ndim} dimensions "
                         f"does not have one leading axis per active vmap level "
                         f"({len(active)})")
    kept = [lv for lv, n in zip(active, arr.shape[:nb]) if n != 1]
    # (np.asarray keeps a 0-d value 0-d; np.ascontiguousarray would make it (1,))
    value = Tensor._wrap(np.asarray(arr.reshape(
        tuple(n for n in arr.shape[:nb] if n != 1) + arr.shape[nb:]), order="C"))
    for lv in kept:
        value = lv.new_tracer(value, 0)
    return value
