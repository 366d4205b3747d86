"""Implementations of the primitives on concrete Tensors (the NumPy + Cython backend).

Movement ops are View metadata over the same Buffer (no data moves); elementwise math,
reductions and matmul run NumPy's loops and BLAS on zero-copy ndarray views of our buffers;
gather/scatter, fold/unfold and threefry run the typed kernels of ``nx_rune._kernels``.
Operands arrive already checked and promoted by the front end (``nx_rune.frontend``): binary
primitives get equal shapes and dtypes.  ``IMPLS`` maps each primitive's name to its
implementation; ``nx_rune.primitives`` (the layer above) attaches them to the primitives.

Parameters of each primitive (positional operands; keyword parameters):
  buffer(shape, dtype)  const_scalar(value, dtype)  const_array(array)
  contiguous(x)  copy(x)  assign(dst, src)
  unary(x)  binary(a, b)  where(cond, x, y)  cast(x, dtype)
  reshape(x, shape)  expand(x, shape)  permute(x, axes)  pad(x, config, fill)
  shrink(x, limits)  flip(x, axes)  as_strided(x, shape, strides, offset)  cat(*xs, axis)
  reduce_sum/reduce_max/reduce_prod(x, axes, keepdims)  argmax(x, axis, keepdims)
  associative_scan(x, axis, op)  with op in {"sum", "prod", "max", "min"}
  gather(data, indices, axis)  scatter(template, indices, updates, axis, mode)
  matmul(a, b)  unfold(x, kernel_size, stride, dilation, padding)
  fold(cols, output_size, kernel_size, stride, dilation, padding)  threefry(key, counter)
"""
import warnings

import numpy as np

from nx_rune import writes
from nx_rune._kernels.buffer import Buffer
from nx_rune._kernels.view import View, copy_into, materialize
from nx_rune.tensor import Tensor

_wrap = Tensor._wrap
IMPLS = {}


def _impl(name):
    """Register the decorated function as the implementation of primitive ``name``."""
    def register(fn):
        IMPLS[name] = fn
        return fn
    return register
# NumPy's floating-point warnings (overflow to inf, log of 0, ...) are attributed to the frame
# that called the ufunc, i.e. this module: silence them here only (results are IEEE, as in JAX)
# without paying for an np.errstate on every call.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"nx_rune\.backend")


def _out(arr):
    """Wrap a NumPy result (always C-contiguous and fresh from a ufunc) as a Tensor."""
    if not isinstance(arr, np.ndarray):
        arr = np.asarray(arr)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    return _wrap(arr)


def _on_view(x, view):
    return Tensor(x.buffer, view)


def _dense(x):
    """``x`` with an unmasked view (materialized when padded)."""
    if x.view.mask is None:
        return x
    return Tensor(materialize(x.buffer, x.view), View.contiguous(x.shape))


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
    if x._arr is not None and x._view is None:
        return x
    if x.view.is_contiguous:
        return x
    return Tensor(materialize(x.buffer, x.view), View.contiguous(x.shape))


@_impl("copy")
def _copy(x):
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


def check_writable(dst, name="x"):
    """ValueError naming ``name`` unless dst's elements can be written in place: not a padded
    view (its border is not in memory), not a broadcast view (elements sharing memory), not
    read-only memory."""
    view = dst.view
    if view.mask is not None:
        raise ValueError(f"{name}: cannot write into a padded view (shape {view.shape}, from "
                         f"nx.pad or a strided slice): its border is not stored in memory; write "
                         f"into a copy (nx.copy) or update functionally with .at[idx].set(v)")
    if any(s == 0 and n > 1 for n, s in zip(view.shape, view.strides)):
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


# -- elementwise -----------------------------------------------------------------------------

def _unary(name, ufunc):
    def impl(x):
        return _out(ufunc(x._np()))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


def _binary(name, ufunc):
    def impl(a, b):
        return _out(ufunc(a._np(), b._np()))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


for _name, _ufunc in [("neg", np.negative), ("log2", np.log2), ("exp2", np.exp2),
                      ("sin", np.sin), ("sqrt", np.sqrt), ("recip", np.reciprocal),
                      ("exp", np.exp), ("log", np.log), ("cos", np.cos),
                      ("tanh", np.tanh), ("log1p", np.log1p), ("expm1", np.expm1)]:
    _unary(_name, _ufunc)

for _name, _ufunc in [("add", np.add), ("mul", np.multiply), ("fdiv", np.true_divide),
                      ("max", np.maximum), ("cmplt", np.less), ("cmpne", np.not_equal),
                      ("xor", np.bitwise_xor), ("or", np.bitwise_or),
                      ("and", np.bitwise_and)]:
    _binary(_name, _ufunc)


@_impl("pow")
def _pow(a, b):
    an, bn = a._np(), b._np()
    if an.dtype.kind in "iu" and bn.dtype.kind == "i" and (bn < 0).any():
        raise ValueError("power: integers to negative integer powers are not allowed")
    return _out(np.power(an, bn))


def _check_int_divisor(b, name):
    bn = b._np()
    if bn.dtype.kind in "iub" and not bn.all():
        raise ZeroDivisionError(f"{name}: integer division by zero")


@_impl("idiv")
def _idiv(a, b):
    """Floor division (NumPy's ``//``): rounds toward minus infinity."""
    _check_int_divisor(b, "floor_divide")
    return _out(np.floor_divide(a._np(), b._np()))


@_impl("mod")
def _mod(a, b):
    """Floored modulo (NumPy's ``%``): the result has the sign of the divisor."""
    _check_int_divisor(b, "mod")
    return _out(np.remainder(a._np(), b._np()))


@_impl("where")
def _where(cond, x, y):
    return _out(np.where(cond._np(), x._np(), y._np()))


@_impl("cast")
def _cast(x, *, dtype):
    return _out(x._np().astype(dtype))


# -- movement (metadata only) ----------------------------------------------------------------

@_impl("reshape")
def _reshape(x, *, shape):
    view = x.view.reshape(shape)
    if view is None:
        x = _copy(x)
        view = x.view.reshape(shape)
    return _on_view(x, view)


@_impl("expand")
def _expand(x, *, shape):
    return _on_view(x, x.view.expand(shape))


@_impl("permute")
def _permute(x, *, axes):
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
    return _on_view(x, x.view.shrink(limits))


@_impl("flip")
def _flip(x, *, axes):
    return _on_view(x, x.view.flip(axes))


@_impl("as_strided")
def _as_strided(x, *, shape, strides, offset):
    """A view of x's elements in C order (x made contiguous first: a copy only when it is not),
    ``strides``/``offset`` in elements from x's first element, checked against x's size: a view
    of a slice never reaches the rest of the buffer it shares."""
    x = _contiguous(x)
    v = View.as_strided(shape, strides, offset, x.size)
    return _on_view(x, View(v.shape, v.strides, v.offset + x.view.offset))


@_impl("cat")
def _cat(*xs, axis):
    return _out(np.concatenate([x._np() for x in xs], axis=axis))


# -- reductions and scans ----------------------------------------------------------------------

@_impl("reduce_sum")
def _reduce_sum(x, *, axes, keepdims):
    a = x._np()
    return _out(np.sum(a, axis=tuple(axes), keepdims=keepdims, dtype=a.dtype))


@_impl("reduce_prod")
def _reduce_prod(x, *, axes, keepdims):
    a = x._np()
    return _out(np.prod(a, axis=tuple(axes), keepdims=keepdims, dtype=a.dtype))


@_impl("reduce_max")
def _reduce_max(x, *, axes, keepdims):
    a = x._np()
    axes = tuple(axes)
    if a.size == 0 and (not axes or any(a.shape[i] == 0 for i in axes)):
        raise ValueError(f"max: reduction over an empty axis of shape {a.shape} has no identity")
    return _out(np.max(a, axis=axes, keepdims=keepdims))


@_impl("argmax")
def _argmax(x, *, axis, keepdims):
    a = x._np()
    # as NumPy: only an empty reduced axis has no argmax ((0, 3) along axis 1 gives shape (0,))
    if a.size == 0 and (axis is None or not -a.ndim <= axis < a.ndim or a.shape[axis] == 0):
        raise ValueError(f"argmax: attempt to get the argmax of an empty tensor of shape {a.shape}")
    out = np.argmax(a, axis=axis, keepdims=keepdims)
    return _out(np.asarray(out, dtype=np.int32))


_SCANS = {"sum": np.cumsum, "prod": np.cumprod,
          "max": np.maximum.accumulate, "min": np.minimum.accumulate}


@_impl("associative_scan")
def _associative_scan(x, *, axis, op):
    if op not in _SCANS:
        raise ValueError(f"op: must be one of {sorted(_SCANS)}, got {op!r}")
    a = x._np()
    if op in ("sum", "prod"):
        return _out(_SCANS[op](a, axis=axis, dtype=a.dtype))
    return _out(_SCANS[op](a, axis=axis))


# -- linear algebra ---------------------------------------------------------------------------

@_impl("matmul")
def _matmul(a, b):
    return _out(np.matmul(a._np(), b._np()))


# -- typed kernels: gather/scatter, windows, threefry ---------------------------------------------

@_impl("gather")
def _gather(data, indices, *, axis):
    from nx_rune._kernels import gather as K
    return _out(K.gather(data._np(), indices._np(), axis))


@_impl("scatter")
def _scatter(template, indices, updates, *, axis, mode):
    from nx_rune._kernels import gather as K
    return _out(K.scatter(template._np(), indices._np(), updates._np(), axis, mode))


@_impl("unfold")
def _unfold(x, *, kernel_size, stride, dilation, padding):
    from nx_rune._kernels import fold as K
    return _out(K.unfold(x._np(), kernel_size, stride, dilation, padding))


@_impl("fold")
def _fold(cols, *, output_size, kernel_size, stride, dilation, padding):
    from nx_rune._kernels import fold as K
    return _out(K.fold(cols._np(), output_size, kernel_size, stride, dilation, padding))


@_impl("threefry")
def _threefry(key, counter):
    from nx_rune._kernels import threefry as K
    return _out(K.threefry_2x32(key._np(), counter._np()))
