"""Buffer handling: the memory primitives (buffer, const_scalar, const_array, contiguous, copy,
assign) and the in-place writes the front end makes without a primitive (``x += y``,
``x[idx] = v``), with the checks that a write lands in memory that is really there.

Parameters: buffer(shape, dtype)  const_scalar(value, dtype)  const_array(array)
contiguous(x)  copy(x)  assign(dst, src)

May import: NumPy, ``nx_rune.writes``, ``nx_rune._kernels`` and ``nx_rune.tensor``, and
``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune import writes
from nx_rune._kernels.buffer import Buffer
from nx_rune._kernels.view import View, copy_into, materialize
from nx_rune.backend._core import _impl, _wrap
from nx_rune.tensor import Tensor

_MAX_BYTES = np.iinfo(np.intp).max


def _check_bytes(shape, dtype, name="shape"):
    """ValueError naming ``name`` unless the nonzero sizes of ``shape`` times the item size
    fit in a signed machine word: NumPy's rule for every array, empty ones included (the view
    algebra counts elements and knows no item size), checked before NumPy meets it."""
    n = 1
    for d in shape:
        if d > 1:
            n *= d
    if n * dtype.itemsize > _MAX_BYTES:
        raise ValueError(f"{name}: {tuple(shape)} of {dtype} is too large to address "
                         f"({n * dtype.itemsize} bytes ignoring the zero axes)")


# -- memory and constants ------------------------------------------------------------------

@_impl("buffer")
def _buffer(*, shape, dtype):
    shape = tuple(shape)
    n = 1
    for s in shape:
        n *= s
    return Tensor(Buffer(n, dtype), View.contiguous(shape))


@_impl("const_scalar")
def _const_scalar(*, value, dtype):
    return _wrap(np.array(value, dtype=dtype))


@_impl("const_array")
def _const_array(*, array):
    return _wrap(np.array(array, order="C", copy=True))


@_impl("contiguous")
def _contiguous(x):
    if x._arr is not None and x._view is None and x._arr.flags.c_contiguous:
        return x
    if x.view.is_contiguous:
        return x
    return _fresh_copy(x)


@_impl("copy")
def _copy(x):
    return _fresh_copy(x)


def _transposes(arr):
    """True when the axis of ``arr`` with the smallest stride is not its last one (a transpose
    or an axis permutation), where NumPy's element-order copy walks memory across cache lines."""
    strides = [abs(s) for s, n in zip(arr.strides, arr.shape) if n > 1]
    return len(strides) > 1 and min(strides) != strides[-1]


def _fresh_copy(x):
    """x's values in new C-contiguous memory of our own.  NumPy copies rows of a strided view
    fastest; the blocked, threaded kernel (``materialize``) copies transposes 5-10x faster than
    NumPy's loop (4096^2 float32: 17 ms against 160 ms) and is the path for padded views."""
    arr = x._arr
    if arr is not None and arr.size and not _transposes(arr):
        # NumPy copies the values into a Buffer of our own (aligned; the copy's views see it),
        # without deriving the Buffer and View of the ndarray x holds first
        view = View.contiguous(arr.shape)
        buf = Buffer(arr.size, arr.dtype)
        np.copyto(buf.as_ndarray(view.shape, view.strides, 0), arr)
        return Tensor(buf, view)
    return Tensor(materialize(x.buffer, x.view), View.contiguous(x.shape))


@_impl("assign")
def _assign(dst, src):
    check_writable(dst, "dst")
    if src.dtype != dst.dtype:   # the kernel copies bits: a cast belongs to the front end
        raise TypeError(f"src: dtype {src.dtype} differs from dst's {dst.dtype} (cast first)")
    view = dst.view
    sb, db = src.buffer, dst.buffer
    if sb.nbytes and db.nbytes and sb.address < db.address + db.nbytes \
            and db.address < sb.address + sb.nbytes:
        # src and dst share memory (x[::-1] into x, x.T into x): read all of src before
        # writing, as NumPy does, instead of overwriting elements not yet read
        src = _copy(src)
    copy_into(src.buffer, src.view, db, view)
    writes.record_write(dst, "nx.assign")
    return dst


# -- in-place writes -------------------------------------------------------------------------------

def check_writable(dst, name="x"):
    """ValueError naming ``name`` unless dst's elements can be written in place: not a padded
    view (its border is not in memory), not a broadcast view (elements sharing memory), not
    read-only memory."""
    view = dst.view
    if view.mask is not None:
        raise ValueError(f"{name}: cannot write into a padded view (shape {view.shape}, from "
                         f"nx.pad or a strided slice): its border is not stored in memory; write "
                         f"into a copy (nx.copy) or update functionally with .at[idx].set(v)")
    if 0 not in view.shape and any(s == 0 and n > 1 for n, s in zip(view.shape, view.strides)):
        raise ValueError(f"{name}: cannot write into a broadcast view (shape {view.shape}, "
                         f"strides {view.strides}): its elements share memory; write into a copy "
                         f"(nx.copy) or update functionally with .at[idx].set(v)")
    if dst.buffer.readonly:
        raise ValueError(f"{name}: the tensor's memory is read-only (it wraps a read-only "
                         f"array or constant); write into a copy (nx.copy) or update "
                         f"functionally with .at[idx].set(v)")


def ufunc_into(dst, ufunc, y, what):
    """``dst = ufunc(dst, y)`` in dst's memory (``x += y``): y a number or an array of dst's
    dtype broadcasting to dst's shape (the front end checks).  Returns dst."""
    check_writable(dst, "x")
    view = dst.view
    out = dst.buffer.as_ndarray(view.shape, view.strides, view.offset)
    ufunc(out, y, out=out)
    writes.record_write(dst, what)
    return dst


def assign_index(dst, index, src, what="x[idx] = v"):
    """Write ``src`` (an ndarray of dst's dtype with the shape of ``dst[index]``) into the
    elements of dst that the NumPy index ``index`` (already checked by the front end) selects,
    in place; duplicates: the last in C order wins.  Returns dst."""
    check_writable(dst, "x")
    view = dst.view
    arr = dst.buffer.as_ndarray(view.shape, view.strides, view.offset)
    if np.may_share_memory(arr, src):
        src = src.copy()
    arr[index] = src
    writes.record_write(dst, what, index)
    return dst
