"""The view algebra: the movement primitives that are View metadata over the same Buffer (no
data moves): reshape, expand, permute, pad, shrink, flip, as_strided.

Parameters: reshape(x, shape)  expand(x, shape)  permute(x, axes)  pad(x, config, fill)
shrink(x, limits)  flip(x, axes)  as_strided(x, shape, strides, offset)

Also ``add_window``: a window's values added into an array of the full shape in place, the
adjoint of shrink without the padded array (the tape's backward pass, on concrete values).

May import: NumPy, ``nx_rune._kernels.view`` and ``.quiet``, ``nx_rune.tensor``,
``nx_rune.backend._core`` and ``nx_rune.backend.memory`` (the copy a view that strides cannot
express needs).
"""
import numpy as np

from nx_rune._kernels import quiet as _quiet
from nx_rune._kernels.view import View
from nx_rune.backend._core import _impl, _wrap
from nx_rune.backend.memory import _contiguous, _copy
from nx_rune.tensor import Tensor

# A Tensor over an unpadded view has an ndarray of its values (``_plain``): there the movement is
# NumPy's view of it (an ndarray slice, transpose or reshape costs well under a microsecond), the
# same elements and memory as the View algebra gives, without deriving the Buffer and View of a
# Tensor that wraps a NumPy result.  Padded views take the View algebra.


def _on_view(x, view):
    """A Tensor over x's buffer through ``view``."""
    return Tensor(x.buffer, view)


def _plain(x):
    """x's values as an ndarray when its view is not padded, else None."""
    arr = x._arr
    if arr is None and x._view.mask is None:
        try:
            arr = x._np()
        except ValueError:   # a view NumPy cannot express (beyond its size limit): the View
            return None      # algebra handles it, and its errors name the argument
    return arr


def _int_tuple(values):
    """True when ``values`` is a tuple of Python ints (what the front end binds)."""
    if type(values) is not tuple:
        return False
    for v in values:
        if type(v) is not int:
            return False
    return True


@_impl("reshape")
def _reshape(x, *, shape):
    arr = _plain(x)
    if arr is not None and _int_tuple(shape):
        try:
            r = arr.reshape(shape, copy=False)
        except ValueError:   # a copy is needed, or a bad shape: the View algebra decides
            pass
        else:
            if r.shape == shape:   # (NumPy would also resolve a -1, which is refused here)
                return _wrap(r)
    view = x.view.reshape(shape)
    if view is None:
        x = _copy(x)
        view = x.view.reshape(shape)
    return _on_view(x, view)


@_impl("expand")
def _expand(x, *, shape):
    arr = _plain(x)
    if arr is not None and arr.size and arr.flags.c_contiguous and _int_tuple(shape):
        lead = len(shape) - arr.ndim
        if lead >= 0 and (not shape or min(shape) >= 0):
            strides = [0] * lead
            shared = lead and max(shape[:lead]) > 1
            for n, s, new in zip(arr.shape, arr.strides, shape[lead:]):
                if new == n:
                    strides.append(s)
                elif n == 1:
                    strides.append(0)
                    shared = shared or new > 1
                else:   # not a broadcast: the View algebra raises
                    break
            else:
                try:
                    out = np.ndarray(shape, arr.dtype, buffer=arr, strides=tuple(strides))
                except ValueError:   # beyond NumPy's size limit: the View algebra decides
                    return _on_view(x, x.view.expand(shape))
                if shared and out.size:
                    out.flags.writeable = False   # elements share memory (NumPy's broadcast_to)
                return _wrap(out)
    return _on_view(x, x.view.expand(shape))


@_impl("permute")
def _permute(x, *, axes):
    arr = _plain(x)
    if arr is not None and _int_tuple(axes) and len(axes) == arr.ndim \
            and sorted(axes) == list(range(arr.ndim)):
        return _wrap(arr.transpose(axes))
    return _on_view(x, x.view.permute(axes))


@_impl("pad")
def _pad(x, *, config, fill):
    fill = np.array(fill, dtype=x.dtype).item()
    view = x.view.pad(config, fill)
    if view is None:
        x = _copy(x)
        view = x.view.pad(config, fill)
    return _on_view(x, view)


@_impl("shrink")
def _shrink(x, *, limits):
    arr = _plain(x)
    if arr is not None and type(limits) is tuple and len(limits) == arr.ndim:
        index = []
        for lim, n in zip(limits, arr.shape):
            if type(lim) is not tuple or len(lim) != 2:
                break
            a, b = lim
            if type(a) is not int or type(b) is not int or not 0 <= a <= b <= n:
                break
            index.append(slice(a, b))
        else:   # (the Ellipsis keeps a 0-d result an array, not a NumPy scalar)
            return _wrap(arr[tuple(index) + (Ellipsis,)])
    return _on_view(x, x.view.shrink(limits))


_REVERSED = slice(None, None, -1)
_ALL = slice(None)


@_impl("flip")
def _flip(x, *, axes):
    arr = _plain(x)
    if arr is not None and _int_tuple(axes) and all(0 <= a < arr.ndim for a in axes):
        nd = arr.ndim
        return _wrap(arr[tuple(_REVERSED if i in axes else _ALL for i in range(nd)) + (Ellipsis,)])
    return _on_view(x, x.view.flip(axes))


@_impl("as_strided")
def _as_strided(x, *, shape, strides, offset):
    """A view of x's elements in C order (x made contiguous first: a copy only when it is not),
    ``strides``/``offset`` in elements from x's first element, checked against x's size: a view
    of a slice never reaches the rest of the buffer it shares."""
    x = _contiguous(x)
    v = View.as_strided(shape, strides, offset, x.size)
    return _on_view(x, View(v.shape, v.strides, v.offset + x.view.offset))


def chained_view(shape, chain, strides=None):
    """The View that movements give, applied in order to a C-contiguous value of ``shape``
    (or one laid out with element ``strides``) as the implementations above apply them, or
    None where one of them copies (the result is then new memory, no longer a view of that
    value).  ``chain``: ``(name, params)`` pairs, name a movement primitive's, or
    ``"getitem"`` with the index (LookupError where the index or the view is beyond what one
    basic step decides).  For the tracers of a transformation, which must know whether a
    reshape is a view eagerly (a write through one shows in the other) without any memory."""
    if strides is None:
        v = View.contiguous(shape)
    else:
        # the first element at the lowest address: negative strides start further on
        v = View(tuple(shape), tuple(strides),
                 sum(-(n - 1) * s for n, s in zip(shape, strides) if s < 0 and n > 0))
    for name, p in chain:
        if name == "reshape":
            v = v.reshape(p["shape"])
        elif name == "expand":
            v = v.expand(p["shape"])
        elif name == "permute":
            v = v.permute(p["axes"])
        elif name == "pad":
            v = v.pad(p["config"], p["fill"])
        elif name == "shrink":
            v = v.shrink(p["limits"])
        elif name == "flip":
            v = v.flip(p["axes"])
        elif name == "getitem":     # the front end's basic getitem, in one step
            index = p if isinstance(p, tuple) else (p,)
            w = v.index_basic(index) if v.mask is None else None
            if w is None:
                raise LookupError("getitem: not a basic index of an unpadded view")
            v = w
        elif name == "as_strided":
            if not v.is_contiguous:
                return None
            a = View.as_strided(p["shape"], p["strides"], p["offset"], v.size)
            v = View(a.shape, a.strides, a.offset + v.offset)
        else:
            return None
        if v is None:
            return None
    return v


# -- a window's cotangent added in place (the backward pass with no transformation active) ------

def add_window(dst, owned, x, limits, shape):
    """The sum of ``dst`` and of ``x`` placed at the window ``limits`` ((start, stop) per axis)
    of an array of ``shape``, zero elsewhere: what padding ``x`` to ``shape`` and adding it
    gives, without making the padded array.  ``dst``: None (zeros), or a concrete Tensor of
    ``shape`` and x's dtype; ``owned``: dst is memory that nothing else reads (made here), so
    the window is added into it in place and dst is returned; otherwise the result is new
    memory (zeros and one strided write, or a copy of dst).  None where an operand is not
    such a concrete Tensor (the caller then pads and adds)."""
    if type(x) is not Tensor or len(limits) != len(shape):
        return None
    xv = x._np()
    region, window = [], []
    for (a, b), n in zip(limits, shape):
        if not 0 <= a <= b <= n:
            return None
        region.append(slice(a, b))
        window.append(b - a)
    if xv.shape != tuple(window):
        return None
    region = tuple(region)
    if dst is None:
        out = np.zeros(shape, xv.dtype)
        out[region] = xv
        return _wrap(out)
    if type(dst) is not Tensor:
        return None
    dv = dst._np()
    if dv.shape != shape or dv.dtype != xv.dtype:
        return None
    if not owned:
        dv = dv.copy(order="C")
        dst = _wrap(dv)
    # (the sum made first, then written: a call that NumPy's error settings make raise leaves
    # dv as it was, and _quiet reruns it with warnings off)
    dv[region] = _quiet.call2(np.add, dv[region], xv)
    return dst
