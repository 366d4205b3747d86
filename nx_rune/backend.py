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
  unary(x)  binary(a, b) (add sub mul fdiv ...)  where(cond, x, y)  cast(x, dtype)
  reshape(x, shape)  expand(x, shape)  permute(x, axes)  pad(x, config, fill)
  shrink(x, limits)  flip(x, axes)  as_strided(x, shape, strides, offset)  cat(*xs, axis)
  roll(x, shift, axis)
  reduce_sum/reduce_max/reduce_prod(x, axes, keepdims)  argmax(x, axis, keepdims)
  associative_scan(x, axis, op)  with op in {"sum", "prod", "max", "min"}
  gather(data, indices, axis)  scatter(template, indices, updates, axis, mode)
  matmul(a, b)  unfold(x, kernel_size, stride, dilation, padding)
  fold(cols, output_size, kernel_size, stride, dilation, padding)  threefry(key, counter)
"""
import warnings

import numpy as np

from nx_rune import writes
from nx_rune._kernels import quiet as _quiet
from nx_rune._kernels import gemm as _gemm
from nx_rune._kernels.buffer import Buffer
from nx_rune._kernels.view import View, copy_into, materialize
from nx_rune.tensor import RealUfunc, Tensor, wrap_result

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
# ... except ComplexWarning (a RuntimeWarning too): a cast that drops imaginary parts must show
warnings.filterwarnings("default", category=np.exceptions.ComplexWarning, module=r"nx_rune\.backend")


# a NumPy result (an ndarray or a NumPy scalar) as a C-contiguous Tensor
_out = wrap_result


def _on_view(x, view):
    return Tensor(x.buffer, view)


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
    if x._arr is not None and x._view is None and x._arr.flags.c_contiguous:
        return x
    if x.view.is_contiguous:
        return x
    return Tensor(materialize(x.buffer, x.view), View.contiguous(x.shape))


@_impl("copy")
def _copy(x):
    arr = x._arr
    if arr is not None and arr.size:
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


# -- elementwise -----------------------------------------------------------------------------

def _unary(name, ufunc):
    def impl(x):
        return _out(_quiet.call1(ufunc, x._np()))
    impl.__name__ = f"_{name}"
    impl.ufunc = ufunc   # (WP-dispatch: bind calls the ufunc itself on concrete operands)
    IMPLS[name] = impl


def _binary(name, ufunc):
    def impl(a, b):
        return _out(_quiet.call2(ufunc, a._np(), b._np()))
    impl.__name__ = f"_{name}"
    impl.ufunc = ufunc
    IMPLS[name] = impl


for _name, _ufunc in [("neg", np.negative), ("log2", np.log2), ("exp2", np.exp2),
                      ("sin", np.sin), ("sqrt", np.sqrt), ("recip", np.reciprocal),
                      ("exp", np.exp), ("log", np.log), ("cos", np.cos),
                      ("log1p", np.log1p), ("expm1", np.expm1)]:
    _unary(_name, _ufunc)


@_impl("tanh")
def _tanh(x):
    xn = x._np()
    out = np.tanh(xn)
    if out.dtype.kind == "c":
        # C99 (and NumPy) give tanh(±inf + iy) = ±1 + i·0·sin(2y); the Array API fixes the
        # zero's sign to y's: ±1 ± 0j
        big = np.isinf(xn.real) & np.isfinite(xn.imag)
        if big.any():
            out = np.array(out)     # a 0-d result is a NumPy scalar: make it writable
            out.real[big] = np.copysign(1.0, xn.real[big])
            out.imag[big] = np.copysign(0.0, xn.imag[big])
    return _out(out)


# real operands: bind calls np.tanh itself (the complex special case above is this function's)
_tanh.ufunc = RealUfunc(np.tanh)

for _name, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("fdiv", np.true_divide),
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
# A Tensor over an unpadded view has an ndarray of its values (``_plain``): there the movement is
# NumPy's view of it (an ndarray slice, transpose or reshape costs well under a microsecond), the
# same elements and memory as the View algebra gives, without deriving the Buffer and View of a
# Tensor that wraps a NumPy result.  Padded views take the View algebra.

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


@_impl("roll")
def _roll(x, *, shift, axis):
    """x's elements moved ``shift`` places along ``axis`` (an int of any sign, taken modulo the
    axis length; those pushed past the end come back at the start): a new C-ordered tensor."""
    a = x._np()
    n = a.shape[axis]
    s = shift % n if n else 0
    if not s:
        return _out(a.copy())
    head = [slice(None)] * a.ndim
    tail = list(head)
    head[axis], tail[axis] = slice(n - s, None), slice(0, n - s)
    return _out(np.concatenate((a[tuple(head)], a[tuple(tail)]), axis=axis))


@_impl("cat")
def _cat(*xs, axis):
    if xs:
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        _check_bytes(shape, xs[0].dtype, "arrays")
    return _out(np.concatenate([x._np() for x in xs], axis=axis))


# -- reductions and scans ----------------------------------------------------------------------

@_impl("reduce_sum")
def _reduce_sum(x, *, axes, keepdims):
    a = x._np()   # (np.add.reduce: what np.sum runs, without its Python wrapper)
    return _out(np.add.reduce(a, axis=tuple(axes), dtype=a.dtype, keepdims=keepdims))


@_impl("reduce_prod")
def _reduce_prod(x, *, axes, keepdims):
    a = x._np()
    return _out(np.multiply.reduce(a, axis=tuple(axes), dtype=a.dtype, keepdims=keepdims))


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
    """NumPy's matmul; 2-D float32 products by the kernels' packed AVX-512 product where the CPU
    has it and the product is large enough (_kernels/gemm.pyx: OpenBLAS runs its AVX2 kernels
    on CPUs it does not know, such as AMD's Zen 5); equal to NumPy's to float32 rounding."""
    x, y = a._np(), b._np()
    if x.dtype == np.float32 and y.dtype == np.float32 and x.ndim == 2 and y.ndim == 2:
        r = _gemm.matmul_f32(x, y)
        if r is not None:
            return _out(r)
    return _out(np.matmul(x, y))


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
    # a batch of keys (*batch, 2) hashes each its own block of the count (vmap over keys)
    fn = K.threefry_2x32 if key.ndim == 1 else K.threefry_2x32_keys
    return _out(fn(key._np(), counter._np()))


# -- sorting and searching (WP-sorting) ---------------------------------------------------------
# sort(x, axis, descending)  argsort(x, axis, descending, stable, dtype)
# searchsorted(x1, x2, side, dtype)
# Sorts are stable (equal elements keep their order, with descending=True too; argsort with
# stable=False may take NumPy's unstable order) and follow NumPy's order: NaNs after every
# number (first when descending), -0.0 equal to 0.0, complex numbers lexicographic (real part,
# then imaginary part).  searchsorted is np.searchsorted (x1 1-D, operands of one dtype).

def _last_axis(a, axis):
    return a if axis == a.ndim - 1 else np.moveaxis(a, axis, -1)


def _rows_hold_zero(s):
    """Whether some row of ``s`` (sorted ascending along its last axis, NaNs last) holds a
    zero: a branchless binary search of all rows at once for their first element >= 0,
    O(rows * log n), skipped when every row starts above 0."""
    n = s.shape[-1]
    if s.flags.c_contiguous:
        flat, offsets = s.reshape(-1), np.arange(0, s.size, n)
        at = lambda col: flat[offsets + col]  # noqa: E731
    else:
        at = lambda col: np.take_along_axis(s, col.reshape(s.shape[:-1] + (1,)), -1)  # noqa
    lowest = at(np.zeros(s.size // n, np.intp)).reshape(-1)
    if (lowest == 0).any():
        return True
    if not (lowest < 0).any():
        return False
    base = np.zeros(s.size // n, np.intp)
    left = n
    while left > 1:
        half = left // 2
        base += half * (at(base + half).reshape(-1) < 0)
        left -= half
    base += at(base).reshape(-1) < 0
    return bool((at(np.minimum(base, n - 1)) == 0).any())


def _class_members(a, cls, count):
    """The elements of float ``a`` in class ``cls`` (zeros or NaNs; ``count`` of them), in C
    order: one value (a scalar) when they all share one bit pattern (+0.0 or -0.0; the
    default NaN or its negative), checked in one pass, instead of a slow masked gather."""
    bits = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    if cls is np.isnan:
        for v in (np.array(np.nan, a.dtype), -np.array(np.nan, a.dtype)):
            if np.count_nonzero(bits == v.view(bits.dtype)) == count:
                return v
    else:
        plus = a.size - np.count_nonzero(bits)    # +0.0 is the one all-zero bit pattern
        if plus in (0, count):
            return np.array(0.0 if plus else -0.0, a.dtype)
    return a[cls(a)]


def _restore_equal_runs(s, a, descending):
    """Make the unstable ascending sort ``s`` of float ``a`` (both with the sorted axis last)
    bit-identical to the stable sort, reversed when descending (returns that view of s).

    Only elements that compare equal yet differ in bits can be out of order: zeros (-0.0 ==
    0.0) and NaNs (sorted last, any sign or payload).  NumPy's SIMD sorts may even rewrite them
    (zeros of both signs come out as -0.0, float16 NaN payloads change).  Each class forms one
    run per row, with as many elements per row in s as in a, so writing a's elements of the
    class in C order onto s's restores each run as the stable sort has it.  Finding the runs
    costs O(rows * log n); restoring a class that is present one or two passes over a (a
    masked gather when its members differ in bits)."""
    t = np.flip(s, -1) if descending else s
    n = s.shape[-1]
    is_zero = lambda v: v == 0  # noqa: E731
    row = s.reshape(n) if s.size == n else None
    if row is not None and np.may_share_memory(row, s):   # one row: the runs are slices
        nan, zero = row.dtype.type(np.nan), row.dtype.type(0)   # (a Python float would
        nan0 = int(np.searchsorted(row, nan))                      # make NumPy cast the row)
        runs = ((nan0, n, np.isnan), (int(np.searchsorted(row[:nan0], zero, side="left")),
                                      int(np.searchsorted(row[:nan0], zero, side="right")),
                                      is_zero))
        for lo, hi, cls in runs:
            if hi > lo:
                run = row[lo:hi]
                (run[::-1] if descending else run)[...] = _class_members(a, cls, hi - lo)
        return t
    has_nan = bool(np.isnan(s[..., -1]).any())
    for present, cls in ((has_nan, np.isnan), (_rows_hold_zero(s), is_zero)):
        if present:
            where = cls(t)
            t[where] = _class_members(a, cls, np.count_nonzero(where))
    return t


def _sorted_values(a, axis, descending):
    """``a`` sorted along ``axis`` (stable, NumPy's order; NaNs first when descending)."""
    if a.dtype.kind == "c":
        # complex ties with different bits (0j, -0j, ...) form many runs: sort stably
        if descending:
            return np.flip(np.sort(np.flip(a, axis), axis=axis, kind="stable"), axis)
        return np.sort(a, axis=axis, kind="stable")
    # NumPy's default kind (SIMD quicksort) is ~60x faster than its stable merge sort and gives
    # the same values; only the order of equal floats of different bits needs restoring.
    # float16 sorts as float32 (exact both ways): NumPy 2.4's float16 sort is slower and, on
    # some inputs of thousands of elements mixing -0.0, -inf and negatives, leaves them unsorted
    if a.dtype == np.float16:
        s = np.sort(a.astype(np.float32), axis=axis).astype(np.float16)
    else:
        s = np.sort(a, axis=axis)
    if a.dtype.kind == "f" and a.size:
        t = _restore_equal_runs(_last_axis(s, axis), _last_axis(a, axis), descending)
        return t if axis == a.ndim - 1 else np.moveaxis(t, -1, axis)
    return np.flip(s, axis) if descending else s


@_impl("sort")
def _sort(x, *, axis, descending):
    return _out(_sorted_values(x._np(), axis, descending))


def _order_key(a):
    """Unsigned keys (uint32 for <= 32-bit dtypes, else uint64) whose order is NumPy's sort
    order of real ``a``: -0.0 and 0.0 get one key, every NaN the largest."""
    wide = a.dtype.itemsize > 4
    u, i, f = (np.uint64, np.int64, np.float64) if wide else (np.uint32, np.int32, np.float32)
    sign = u(1) << u(8 * np.dtype(u).itemsize - 1)
    kind = a.dtype.kind
    if kind in "bu":
        return a.astype(u)
    if kind == "i":
        k = a.astype(i).view(u)
        k ^= sign
        return k
    x = np.add(a, 0, dtype=f)                    # float16 widens exactly; -0.0 + 0 is +0.0
    nan = np.isnan(x)
    bits = x.view(u)                             # x's memory becomes the keys from here on
    flip = x.view(i) >> (8 * np.dtype(i).itemsize - 1)   # all ones for negatives, else 0
    flip |= sign.view(i)
    bits ^= flip.view(u)                         # negatives: all bits flipped; others: sign set
    if nan.any():
        bits[nan] = np.iinfo(u).max
    return bits


def _packed_order(key):
    """Stable argsort (uint32, last axis, rows shorter than 2**32) of uint32 ``key``: one
    unstable sort of uint64 ``key << 32 | position``, which never tie."""
    packed = np.empty(key.shape, np.uint64)
    halves = packed.view(np.uint32).reshape(key.shape + (2,))
    hi, lo = (1, 0) if np.little_endian else (0, 1)
    halves[..., hi] = key
    halves[..., lo] = np.arange(key.shape[-1], dtype=np.uint32)
    packed.sort(axis=-1)
    return halves[..., lo]


def _stable_order_last(a, descending):
    """Stable argsort of real ``a`` along its last axis (shorter than 2**32) from NumPy's fast
    unstable sort of packed keys: ~10x faster than its stable argsort.  64-bit keys take two
    passes, least significant half first (an LSD radix sort with 32-bit digits)."""
    key = _order_key(a)
    if descending:
        np.invert(key, out=key)
    if key.dtype.itemsize == 4:
        return _packed_order(key)
    lo_key, hi_key = key.min(), key.max()
    if hi_key - lo_key < 2**32:                   # one 32-bit digit suffices (small ints)
        key -= lo_key
        return _packed_order(key.astype(np.uint32))
    low = _packed_order(key.astype(np.uint32))
    high = np.take_along_axis((key >> np.uint64(32)).astype(np.uint32), low, -1)
    return np.take_along_axis(low, _packed_order(high), -1)


def _sort_order(a, axis, descending, stable=True):
    """The permutation sorting ``a`` along ``axis`` (NumPy's order, see ``_sort``): stable,
    or when ``stable`` is False NumPy's faster unstable one for 64-bit reals."""
    n = a.shape[axis]
    if a.size == 0:
        return np.zeros(a.shape, np.int64)
    if not stable and a.dtype.itemsize == 8 and a.dtype.kind != "c":
        order = np.argsort(a, axis=axis)
        return np.flip(order, axis) if descending else order
    if a.dtype.kind == "c" or n >= 2**32:
        if not descending:
            return np.argsort(a, axis=axis, kind="stable")
        # stable descending: equal elements in original order (reversed twice)
        p = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
        return (n - 1) - np.flip(p, axis)
    order = _stable_order_last(_last_axis(a, axis), descending)
    return order if axis == a.ndim - 1 else np.moveaxis(order, -1, axis)


@_impl("argsort")
def _argsort(x, *, axis, descending, stable, dtype):
    return _out(_sort_order(x._np(), axis, descending, stable).astype(dtype, copy=False))


@_impl("searchsorted")
def _searchsorted(x1, x2, *, side, dtype):
    return _out(np.searchsorted(x1._np(), x2._np(), side=side).astype(dtype, copy=False))


# -- statistics family (WP-statistics) -----------------------------------------------------------
#   reduce_nanmax/reduce_nanmin(x, axes, keepdims): NumPy's fmax/fmin reductions (nan is skipped;
#   an all-nan group gives nan; an empty group raises).  clip(x, lo, hi, lower, upper): operands
#   of equal shape and dtype, min(max(x, lo), hi) with nan propagating; a bound the caller did
#   not give arrives as the dtype's extreme with ``lower``/``upper`` False (read by the rules).

def _nan_extremum(name, ufunc):
    def impl(x, *, axes, keepdims):
        a = x._np()
        axes = tuple(axes)
        if a.size == 0 and (not axes or any(a.shape[i] == 0 for i in axes)):
            raise ValueError(f"{name}: reduction over an empty axis of shape {a.shape} has no "
                             f"identity")
        return _out(ufunc.reduce(a, axis=axes, keepdims=keepdims))
    impl.__name__ = f"_reduce_{name}"
    IMPLS[f"reduce_{name}"] = impl


_nan_extremum("nanmax", np.fmax)
_nan_extremum("nanmin", np.fmin)


def _one_value(arr):
    """A broadcast bound holding one value (stride 0 everywhere) as that value: NumPy's clip
    takes its scalar loop then instead of reading a million copies."""
    return arr.flat[0] if arr.size and not any(arr.strides) else arr


@_impl("clip")
def _clip(x, lo, hi, *, lower, upper):
    xn = x._np()
    lo_n, hi_n = _one_value(lo._np()), _one_value(hi._np())
    if np.ndim(lo_n) == 0 and np.ndim(hi_n) == 0 and xn.shape != ():
        return _out(np.clip(xn, lo_n, hi_n))
    return _out(np.clip(xn, lo._np(), hi._np()))


# -- WP-elementwise: the Array API / NumPy elementwise functions (one NumPy loop each) --------

for _name, _ufunc in [("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                      ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                      ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                      ("log10", np.log10), ("abs", np.abs), ("conj", np.conjugate),
                      ("deg2rad", np.deg2rad), ("rad2deg", np.rad2deg),
                      ("floor", np.floor), ("ceil", np.ceil), ("rint", np.rint),
                      ("trunc", np.trunc), ("sign", np.sign), ("signbit", np.signbit),
                      ("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    _unary(_name, _ufunc)

for _name, _ufunc in [("atan2", np.arctan2), ("hypot", np.hypot), ("copysign", np.copysign),
                      ("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2),
                      ("nextafter", np.nextafter)]:
    _binary(_name, _ufunc)


@_impl("real")
def _real(x):
    return _out(np.array(x._np().real, order="C"))


@_impl("imag")
def _imag(x):
    return _out(np.array(x._np().imag, order="C"))


@_impl("complex")
def _complex(re, im):
    """re + im * 1j built exactly (no arithmetic: inf and -0.0 parts stay as they are)."""
    a = re._np()
    out = np.empty(a.shape, np.result_type(a.dtype, np.complex64))
    out.real = a
    out.imag = im._np()
    return _out(out)


def _check_shift(b, name):
    bn = b._np()
    if bn.dtype.kind != "i" or not bn.size:
        return bn
    # a broadcast count (x << 3) has one value: check it, not its million stride-0 copies
    smallest = bn.flat[0] if not any(bn.strides) else np.minimum.reduce(bn, axis=None)
    if smallest < 0:
        raise ValueError(f"{name}: x2 (the shift counts) must be >= 0")
    return bn


@_impl("lshift")
def _lshift(a, b):
    # NumPy gives 0 for counts >= the bit width (C would be undefined)
    return _out(np.left_shift(a._np(), _check_shift(b, "bitwise_left_shift")))


@_impl("rshift")
def _rshift(a, b):
    # arithmetic shift (floor division by 2**b): 0 or -1 for counts >= the bit width
    return _out(np.right_shift(a._np(), _check_shift(b, "bitwise_right_shift")))


@_impl("sinc_taylor")
def _sinc_taylor(x, *, k):
    """The k-th derivative of sinc (sin(pi x) / (pi x)) at 0, broadcast to x's shape: the value
    sinc and its derivatives take where x == 0 (their formulas divide by x)."""
    c = 0.0 if k % 2 else (-1.0) ** (k // 2) * np.pi ** k / (k + 1)
    return Tensor._broadcast_scalar(c, x.dtype, x.shape)


@_impl("expm1")
def _expm1(x):
    """NumPy's expm1; for complex x its non-finite and zero elements as exp(x) - 1, which
    follows C99's special cases (the standard's), where NumPy's complex expm1 gives nan parts
    (and -0.0 for expm1(-0 + 0j), where the standard has +0)."""
    a = x._np()
    out = np.asarray(np.expm1(a))
    if a.dtype.kind == "c":
        bad = ~np.isfinite(a) | (a == 0)
        if bad.any():
            out[bad] = np.exp(a[bad]) - 1
    return _out(out)


# -- FFTs and special functions (WP-fft-special) -------------------------------------------------
# fft(x, axes, inverse, norm)  rfft(x, axes, norm)  irfft(x, axes, n, norm)
# NumPy's pocketfft over ``axes`` (distinct non-negative axes, in order; the front end has
# already padded or trimmed every transformed axis to its length): fft takes and gives complex
# (inverse selects the +i exponent), rfft takes real float32/float64 and halves axes[-1] to
# length // 2 + 1, irfft takes complex with axes[-1] of length n // 2 + 1 and gives real with
# length n there.  norm is NumPy's: "backward", "ortho" or "forward".  float32 stays in single
# precision (complex64), as NumPy >= 2 computes it.
#
# Special functions: scipy.special's loops (unary: x; binary: a and b of one shape and dtype),
# in the operand's dtype (a loop that only exists in float64 is cast back).  polygamma(n, x)
# takes n as a float tensor of integer values (x's dtype).  SciPy is imported on first use:
# its import costs about half a second.

def _axes_fft(fn_1d, fn_nd, a, axes, **kw):
    if len(axes) == 1:
        return fn_1d(a, axis=axes[0], **kw)
    return fn_nd(a, axes=axes, **kw)


@_impl("fft")
def _fft(x, *, axes, inverse, norm):
    a = x._np()
    if not axes:
        return _out(a.copy())
    if inverse:
        return _out(_axes_fft(np.fft.ifft, np.fft.ifftn, a, axes, norm=norm))
    return _out(_axes_fft(np.fft.fft, np.fft.fftn, a, axes, norm=norm))


@_impl("rfft")
def _rfft(x, *, axes, norm):
    return _out(_axes_fft(np.fft.rfft, np.fft.rfftn, x._np(), axes, norm=norm))


@_impl("irfft")
def _irfft(x, *, axes, n, norm):
    a = x._np()
    if a.shape[axes[-1]] != n // 2 + 1:
        raise ValueError(f"x: irfft of length {n} takes {n // 2 + 1} bins along axis "
                         f"{axes[-1]}, got {a.shape[axes[-1]]}")
    if len(axes) == 1:
        return _out(np.fft.irfft(a, n=n, axis=axes[0], norm=norm))
    s = [a.shape[ax] for ax in axes[:-1]] + [n]
    return _out(np.fft.irfftn(a, s=s, axes=axes, norm=norm))


_SCIPY_SPECIAL = []


def _special():
    """scipy.special, imported on first use."""
    if not _SCIPY_SPECIAL:
        import scipy.special
        _SCIPY_SPECIAL.append(scipy.special)
    return _SCIPY_SPECIAL[0]


def _in_dtype(out, dtype):
    out = np.asarray(out)
    return out if out.dtype == dtype else out.astype(dtype)


def _special_unary(name, fname):
    def impl(x):
        a = x._np()
        return _out(_in_dtype(getattr(_special(), fname)(a), a.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


def _special_binary(name, fname):
    def impl(a, b):
        an = a._np()
        return _out(_in_dtype(getattr(_special(), fname)(an, b._np()), an.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


for _name, _fname in [("lgamma", "gammaln"), ("digamma", "psi"), ("gamma", "gamma"),
                      ("erf", "erf"), ("erfc", "erfc"), ("erfinv", "erfinv"), ("ndtr", "ndtr"),
                      ("ndtri", "ndtri"), ("log_ndtr", "log_ndtr"), ("expit", "expit"),
                      ("logit", "logit"), ("i0", "i0"), ("i0e", "i0e"), ("i1", "i1"),
                      ("i1e", "i1e")]:
    _special_unary(_name, _fname)

for _name, _fname in [("polygamma", "polygamma"), ("betaln", "betaln"), ("xlogy", "xlogy"),
                      ("xlog1py", "xlog1py")]:
    _special_binary(_name, _fname)


# -- linear algebra: decompositions and solves (WP-linalg) ---------------------------------------
# cholesky(a)  triangular_solve(a, b, lower, trans, unit_diagonal)  solve(a, b)  inv(a)
# slogdet(a)  eigh(a, lower)  eigvalsh(a, lower)  svd(a, full_matrices)  svdvals(a)
# qr(a, mode)  pinv(a, rtol)  lstsq(a, b, rcond)
# LAPACK through NumPy (SciPy for triangular solves) on zero-copy views, batched over the leading
# axes (operands arrive with equal batch shapes; b is always (..., n, k)).  Failures raise
# NumPy's LinAlgError (a ValueError): not positive definite, singular matrix.
# Decompositions with several results return them packed, each flattened, along one last axis
# (in this order): slogdet (sign, logabsdet), eigh (w, V), svd (U, S, Vh), qr (Q, R),
# lstsq (x, s); real parts (eigenvalues, singular values, logabsdet) take the operand's dtype.

def _packed(parts, batch):
    """``parts`` (ndarrays with the leading axes ``batch``) flattened and joined along a last
    axis, in the dtype of the first part."""
    dt = parts[0].dtype
    nb = len(batch)
    flat = [np.asarray(p, dtype=dt).reshape(batch + (int(np.prod(np.shape(p)[nb:])),))
            for p in parts]
    return _out(np.concatenate(flat, axis=-1))


_POTRF = {}


@_impl("cholesky")
def _cholesky(a):
    """NumPy's cholesky for small matrices; from n = 32 on, LAPACK potrf per matrix on a's
    C-ordered memory read as the Fortran matrix a^T, whose upper triangle is a's lower one: the
    factor U = L^T comes back in Fortran order, which is L in C order (no copy of a; about 3x
    faster than NumPy's cholesky at n = 256)."""
    an = a._np()
    n = an.shape[-1]
    if n < 32:
        return _out(np.linalg.cholesky(an))
    potrf = _POTRF.get(an.dtype)
    if potrf is None:
        from scipy.linalg.lapack import get_lapack_funcs
        potrf = _POTRF[an.dtype] = get_lapack_funcs("potrf", dtype=an.dtype)
    out = np.empty(an.shape, an.dtype)
    for idx in np.ndindex(an.shape[:-2]):
        c, info = potrf(an[idx].T, lower=0, clean=1)
        if info:
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        out[idx] = c.T
    return _out(out)


_TRSM = {}


def _trsm(dtype):
    fn = _TRSM.get(dtype)
    if fn is None:
        from scipy.linalg.blas import get_blas_funcs
        fn = _TRSM[dtype] = get_blas_funcs("trsm", dtype=dtype)
    return fn


@_impl("triangular_solve")
def _triangular_solve(a, b, *, lower, trans, unit_diagonal):
    """BLAS trsm per matrix, in place on a C-ordered copy of b: the C-ordered x is the
    Fortran-ordered x^T, which solves x^T op(a)^T = b^T from the right, with a's C-ordered
    memory read as the Fortran matrix a^T (no copy of a either).  A zero on the diagonal
    raises LinAlgError as SciPy's solve_triangular (trsm itself would divide by it)."""
    return _out(triangular_solve_values(a._np(), b._np(), lower, trans, unit_diagonal))


def triangular_solve_values(an, bn, lower, trans, unit_diagonal):
    """The ndarray computation of ``triangular_solve`` (an (..., n, n), bn (..., n, k) of one
    dtype and batch shape); also nx.scipy.linalg.cho_solve's direct path (WP-linalg-perf)."""
    out = np.array(bn, order="C", copy=True)
    n = an.shape[-1]
    if out.size == 0 or n == 0:
        return out
    if not unit_diagonal:
        zero = np.diagonal(an, axis1=-2, axis2=-1) == 0
        if zero.any():
            first = int(np.argmax(zero.reshape(-1, n).any(0)))
            raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal "
                                        f"{first}")
    trsm = _trsm(out.dtype)
    for idx in np.ndindex(out.shape[:-2]):
        xt = out[idx].T
        r = trsm(1.0, an[idx].T, xt, side=1, lower=not lower, trans_a=trans,
                 diag=bool(unit_diagonal), overwrite_b=1)
        if not np.may_share_memory(r, xt):
            xt[...] = r
    return out


@_impl("solve")
def _solve(a, b):
    return _out(np.linalg.solve(a._np(), b._np()))


@_impl("inv")
def _inv(a):
    return _out(np.linalg.inv(a._np()))


@_impl("slogdet")
def _slogdet(a, lu):
    """From a's packed LU factorization (``lu_factor``, WP-linalg-perf): the sign is the
    product of U's diagonal signs and the pivots' parity, log|det| the sum of log|U_ii| (as
    NumPy's slogdet, which factors the same column-major copy of a)."""
    packed = lu._np()
    return _packed(list(lu_sign_logabs(packed, a.shape[-1])), packed.shape[:-1])


def lu_sign_logabs(packed, n):
    """(sign in the packed factorization's dtype, log|det| in its real dtype) of each matrix
    from its ``lu_factor`` result (..., n * n + n)."""
    diag = packed[..., :n * n:n + 1]
    swaps = np.count_nonzero(packed[..., n * n:].real != np.arange(n), axis=-1)
    mag = np.abs(diag)
    unit = diag / np.where(mag == 0, 1, mag)          # sign(d), d / |d| for complex d
    sign = np.prod(unit, axis=-1) * np.where(swaps % 2, -1, 1)
    return np.asarray(sign, packed.dtype), np.sum(np.log(mag), axis=-1)


@_impl("eigh")
def _eigh(a, *, lower):
    an = a._np()
    w, v = np.linalg.eigh(an, UPLO="L" if lower else "U")
    return _packed([w.astype(v.dtype), v], an.shape[:-2])


@_impl("eigvalsh")
def _eigvalsh(a, *, lower):
    return _out(np.linalg.eigvalsh(a._np(), UPLO="L" if lower else "U"))


@_impl("svd")
def _svd(a, *, full_matrices):
    an = a._np()
    u, s, vh = np.linalg.svd(an, full_matrices=full_matrices)
    return _packed([u, s, vh], an.shape[:-2])


@_impl("svdvals")
def _svdvals(a):
    return _out(np.linalg.svd(a._np(), compute_uv=False))


@_impl("qr")
def _qr(a, *, mode):
    an = a._np()
    q, r = np.linalg.qr(an, mode=mode)
    return _packed([q, r], an.shape[:-2])


@_impl("pinv")
def _pinv(a, *, rtol):
    return _out(np.linalg.pinv(a._np(), rcond=rtol))


@_impl("lstsq")
def _lstsq(a, b, *, rcond):
    x, _, _, s = np.linalg.lstsq(a._np(), b._np(), rcond=rcond)
    return _packed([x, s], ())


# -- WP-jit ----------------------------------------------------------------------------------------
#   stop_gradient(x): the identity (its derivative rules are zero; jit's trace records it)

@_impl("stop_gradient")
def _stop_gradient(x):
    return x


# -- WP-linalg-perf: the Euclidean norm, the LU factorization reused by slogdet ----------------
# norm2(x, axes, keepdims)  lu_factor(a)  lu_inverse(a, lu)  (and slogdet(a, lu) above)
# lu_factor packs, per matrix, LAPACK getrf's result for a in column-major order (the n*n
# entries of the combined unit-lower L and upper U, column after column) followed by the n
# 0-based pivot rows as values of a's dtype; slogdet reads the determinant from it and
# lu_inverse the inverse (getri), so that slogdet's derivative costs one getri instead of a
# second factorization.  NumPy's slogdet and det factor the same column-major copy of a.

def norm2_values(arr, axes, keepdims):
    """sqrt(sum(arr ** 2)) over the sorted ``axes`` of a real float ndarray: one BLAS dot
    product when every axis is reduced, one per matrix (a batched matmul) when the reduced
    axes are the trailing ones, else the squares summed."""
    nd = arr.ndim
    k = len(axes)
    if k == nd:
        flat = arr.reshape(-1)
        out = np.sqrt(np.dot(flat, flat))
        return np.reshape(out, (1,) * nd) if keepdims else out
    if axes == tuple(range(nd - k, nd)):
        lead = arr.shape[:nd - k]
        rows = arr.reshape(lead + (1, -1))
        out = np.sqrt(np.matmul(rows, np.swapaxes(rows, -1, -2)))
        return out.reshape(lead + (1,) * k if keepdims else lead)
    return np.sqrt(np.add.reduce(arr * arr, axis=axes, keepdims=keepdims))


@_impl("norm2")
def _norm2(x, *, axes, keepdims):
    return _out(norm2_values(x._np(), axes, keepdims))


_ROUTINES = {}


def _scipy_routine(family, name, dtype):
    """SciPy's ``family`` ("blas" or "lapack") routine ``name`` for ``dtype`` (cached)."""
    key = (family, name, dtype)
    fn = _ROUTINES.get(key)
    if fn is None:
        if family == "blas":
            from scipy.linalg.blas import get_blas_funcs as get
        else:
            from scipy.linalg.lapack import get_lapack_funcs as get
        fn = _ROUTINES[key] = get(name, dtype=dtype)
    return fn


def _lapack(name, dtype):
    """SciPy's LAPACK routine ``name`` for ``dtype`` (cached)."""
    return _scipy_routine("lapack", name, dtype)


@_impl("lu_factor")
def _lu_factor(a):
    an = a._np()
    n = an.shape[-1]
    out = np.empty(an.shape[:-2] + (n * n + n,), an.dtype)
    if n == 0:
        return _out(out)
    getrf = _lapack("getrf", an.dtype)
    for idx in np.ndindex(an.shape[:-2]):
        row = out[idx]
        lu = row[:n * n].reshape(n, n).T      # column-major storage inside the packed row
        lu[...] = an[idx]
        _, piv, _ = getrf(lu, overwrite_a=1)  # in place (a zero pivot leaves U singular)
        row[n * n:] = piv
    return _out(out)


def _lu_parts(packed, n):
    """(column-major LU views (..., n, n) as NumPy sees their transposes, 0-based pivots)."""
    lu_t = packed[..., :n * n].reshape(packed.shape[:-1] + (n, n))
    return lu_t, packed[..., n * n:].real.astype(np.int32)


@_impl("lu_inverse")
def _lu_inverse(a, lu):
    """inv(a) from its packed factorization: getri per matrix, in place in the result's
    memory, which is column-major (the result is a transposed view; no copy)."""
    out_t = lu_inverse_t_values(lu._np(), a.shape[-1])
    return _wrap(np.swapaxes(out_t, -1, -2))


_GETRI_LWORK = {}     # (n, dtype) -> getri's work size


def lu_inverse_t_values(packed, n):
    """inv(a)^T, C-ordered (..., n, n), from a's packed factorization (getri per matrix, in
    place in the result's memory); LinAlgError for a singular matrix."""
    lu_t, piv = _lu_parts(packed, n)
    out_t = np.array(lu_t, order="C", copy=True)   # row-major inv(a)^T = column-major inv(a)
    if n:
        getri = _lapack("getri", out_t.dtype)
        lwork = _GETRI_LWORK.get((n, out_t.dtype))
        if lwork is None:
            lwork = int(_lapack("getri_lwork", out_t.dtype)(n)[0].real)
            _GETRI_LWORK[(n, out_t.dtype)] = lwork
        for idx in np.ndindex(out_t.shape[:-2]):
            w = out_t[idx].T
            r, info = getri(w, piv[idx], lwork=lwork, overwrite_lu=1)
            if info:
                raise np.linalg.LinAlgError("Singular matrix")
            if not np.may_share_memory(r, w):
                w[...] = r
    return out_t


# -- WP-linalg-perf: the regularized incomplete gamma and beta functions -------------------------
# gammainc(a, x)  gammaincc(a, x)  betainc(a, b, x): scipy.special's loops (operands of one shape
# and dtype), as the special functions above.  gammainc_da(a, x) = dP/da, betainc_da(a, b, x) and
# betainc_db(a, b, x) = dI/da, dI/db: forward-mode derivatives of the series / continued
# fractions (nx_rune._kernels.incomplete), in float64, cast back to the operands' dtype.

def _special_ternary(name, fname):
    def impl(a, b, x):
        an = a._np()
        return _out(_in_dtype(getattr(_special(), fname)(an, b._np(), x._np()), an.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


_special_binary("gammainc", "gammainc")
_special_binary("gammaincc", "gammaincc")
_special_ternary("betainc", "betainc")


@_impl("gammainc_da")
def _gammainc_da(a, x):
    from nx_rune._kernels.incomplete import gammainc_da
    an = a._np()
    return _out(_in_dtype(gammainc_da(an, x._np()), an.dtype))


def _betainc_part(which):
    def impl(a, b, x):
        from nx_rune._kernels.incomplete import betainc_dab
        an = a._np()
        return _out(_in_dtype(betainc_dab(an, b._np(), x._np())[which], an.dtype))
    return impl


IMPLS["betainc_da"], IMPLS["betainc_db"] = _betainc_part(0), _betainc_part(1)


# -- WP-linalg-perf: the Cholesky derivative, blocked (values only) ------------------------------
# cholesky_vjp_values(L, g): a's cotangent (lower triangular: the cotangent of the lower triangle
# that cholesky reads) for L = cholesky(a) and L's cotangent g, by reverse-mode differentiation
# of the Cholesky factorization (Murray (2016), "Differentiation of the Cholesky decomposition"),
# about twice the forward's flops, where the symbolic rule on the whole matrix costs a matmul and
# two full triangular solves (~9x the forward's flops).  WP-cholvjp: the kernel
# nx_rune._kernels.chol_adjoint runs it per matrix in C (the recursive factorization reversed,
# level-3 BLAS calls on L's memory in either layout), in place of the blocked NumPy version.
# The autodiff rule uses it only on concrete values (nothing differentiates the result); traced
# values take the symbolic rule, written with primitives.

from nx_rune._kernels.chol_adjoint import cholesky_adjoint as _cholesky_adjoint  # noqa: E402


def cholesky_vjp_values(lmat, g):
    """a's cotangent (..., n, n), lower triangular, for L = cholesky(a) (lmat, float32 or
    float64) and L's cotangent g (its shape; cast to lmat's dtype); only their lower triangles
    are read.  The result has g's layout: C-ordered matrices, or the transposed view of
    C-ordered memory when g is one (the cotangent of an upper factor: the transpose of the
    result, that factor's input's cotangent, is then C-contiguous)."""
    dt = getattr(lmat, "dtype", None)
    if dt is None or dt.char not in "fd":
        raise TypeError("cholesky_vjp_values: lmat must be a float32 or float64 ndarray, got "
                        f"{dt if dt is not None else type(lmat).__name__}")
    if not isinstance(g, np.ndarray) or g.dtype != dt:
        g = np.asarray(g, dtype=dt)
    return _cholesky_adjoint(lmat, g)


def _transposed_layout(x):
    """Whether the stack x is the transposed view of C-ordered memory (and not C-ordered)."""
    return (x.ndim >= 2 and not x.flags.c_contiguous
            and np.swapaxes(x, -1, -2).flags.c_contiguous)


@_impl("cholesky_grad")
def _cholesky_grad(lmat, g):
    """cholesky_vjp_values (which reads the lower triangles of lmat and g only); a result in
    the transposed layout (see there) is wrapped as it is."""
    out = cholesky_vjp_values(lmat._np(), g._np())
    return _wrap(out) if _transposed_layout(out) else _out(out)


def cho_solve_values(carr, barr, lower):
    """x solving (c c^T) x = b (``lower``) or (c^T c) x = b for real Cholesky factors carr
    (..., n, n) and barr (..., n, k) of one dtype and batch shape: LAPACK potrs per matrix (both
    triangular solves in one call, as SciPy's cho_solve), reading only c's triangle; c's
    C-ordered memory is the Fortran c^T, the factor of the other triangle.  A zero on the
    diagonal raises LinAlgError, as the two triangular solves do (WP-linalg-perf: the direct
    path of nx.scipy.linalg.cho_solve)."""
    n = carr.shape[-1]
    out = np.empty(barr.shape, barr.dtype)
    if out.size == 0 or n == 0:
        out[...] = barr
        return out
    zero = np.diagonal(carr, axis1=-2, axis2=-1) == 0
    if zero.any():
        first = int(np.argmax(zero.reshape(-1, n).any(0)))
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {first}")
    potrs = _lapack("potrs", carr.dtype)
    for idx in np.ndindex(carr.shape[:-2]):
        x, _ = potrs(carr[idx].T, barr[idx], lower=0 if lower else 1)
        out[idx] = x
    return out


def cho_factor_values(arr, lower):
    """The Cholesky factor of each real symmetric positive-definite matrix of arr (..., n, n):
    lower (arr = L L^T, from arr's lower triangle) or upper (arr = U^T U, from its upper one),
    the other triangle zero; the ``cholesky`` primitive's routines (NumPy below n = 32, else
    LAPACK potrf).  LinAlgError when not positive definite (WP-linalg-perf: the
    direct path of nx.scipy.linalg.cho_factor)."""
    n = arr.shape[-1]
    if n < 32:
        if lower:
            return np.linalg.cholesky(arr)
        return np.swapaxes(np.linalg.cholesky(np.swapaxes(arr, -1, -2)), -1, -2)
    # potrf's upper variant always (OpenBLAS's lower one is about 2x slower at n = 256): for L
    # on arr^T (arr's C-ordered memory as Fortran, its lower triangle as the upper one), whose
    # factor U' = L^T comes back Fortran-ordered, i.e. L C-ordered; for U on arr itself (a copy
    # into Fortran order), whose factor U is returned Fortran-ordered (a batch: as the
    # transposed view of C-ordered U^T, so that every copy is a plain one)
    potrf = _lapack("potrf", arr.dtype)
    out = None if arr.ndim == 2 else np.empty(arr.shape, arr.dtype)
    for idx in np.ndindex(arr.shape[:-2]):
        c, info = potrf(arr[idx].T if lower else arr[idx], lower=0, clean=1)
        if info:
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        if out is None:
            return c.T if lower else c
        out[idx] = c.T
    return out if lower else np.swapaxes(out, -1, -2)


# -- WP-linalg-vjp: the determinant from the LU factorization, fused derivatives ----------------
# lu_det(a, lu, part)  det_grad(a, lu, s)  norm2_grad(x, ans, g, axes, keepdims)
# triangular_solve_grad(ct_b, x, lower, trans, unit_diagonal)
# lu_det reads part "det" (sign * exp(log|det|), as NumPy's det), "logabsdet" (real dtype) or
# "sign" of each matrix from its packed factorization.  The others compute, in one NumPy/LAPACK
# pass, what a derivative rule would otherwise compose from several primitives (the rules use
# them on concrete values only; their values are those of the compositions, see
# nx_rune.autodiff.rules):
#   det_grad = s * inv(a)^T (getri on the saved factorization; s has a's batch shape),
#   norm2_grad = x * (g / ans) spread over the reduced ``axes`` (ans = 1 where it is 0),
#   triangular_solve_grad = -ct_b x^T (trans 0) or -x ct_b^T (trans 1) restricted to the part
#     of a that the solve reads (its triangle, strict with unit_diagonal; the rest times 0).

@_impl("lu_det")
def _lu_det(a, lu, *, part):
    sign, logabs = lu_sign_logabs(lu._np(), a.shape[-1])
    if part == "sign":
        return _out(sign)
    if part == "logabsdet":
        return _out(logabs)
    return _out(sign * np.exp(logabs))


@_impl("det_grad")
def _det_grad(a, lu, s):
    out = lu_inverse_t_values(lu._np(), a.shape[-1])
    out *= s._np()[..., None, None]
    return _out(out)


@_impl("norm2_grad")
def _norm2_grad(x, ans, g, *, axes, keepdims):
    an, xn = ans._np(), x._np()
    if an.ndim == 0 and xn.dtype.char == "d":
        # one norm of float64 values: the same IEEE division on Python floats, one product
        d = float(an)
        return _out(xn * (float(g._np()) / (d if d != 0 else 1.0)))
    scale = g._np() / np.where(an == 0, 1, an)
    if not keepdims:
        scale = np.expand_dims(scale, axes)
    return _out(xn * scale)


_TRI_READ = {}


def tri_read_weights(n, lower, unit_diagonal, dtype):
    """(n, n) weights: 1 on the part of a matrix that a triangular solve reads, 0 elsewhere."""
    key = (n, lower, unit_diagonal, np.dtype(dtype))
    w = _TRI_READ.get(key)
    if w is None:
        k = (-1 if lower else 1) if unit_diagonal else 0
        w = np.tri(n, n, k, dtype=dtype) if lower else 1 - np.tri(n, n, k - 1, dtype=dtype)
        w = _TRI_READ[key] = w
    return w


@_impl("triangular_solve_grad")
def _triangular_solve_grad(ct_b, x, *, lower, trans, unit_diagonal):
    u, v = ct_b._np(), x._np()
    if trans:
        u, v = v, u
    out = np.matmul(np.negative(u), np.swapaxes(v, -1, -2))
    out *= tri_read_weights(out.shape[-1], lower, unit_diagonal, out.dtype)
    return _out(out)


# cho_solve(c, b, lower)  cho_solve_grad(c, x, ct_b, lower)
# cho_solve: cho_solve_values on real operands of one dtype and batch shape (b: (..., n, k)).
# cho_solve_grad: the cotangent of c (its triangle ``lower`` names, the factor's) of x =
# cho_solve(c, b) given x and b's cotangent ct_b: with S = ct_b x^T + x ct_b^T (symmetric),
# -tril(S c) for lower c (a = c c^T), -triu(c S) for upper c (a = c^T c), computed as the
# rank-2k product [ct_b | x] [x^T c ; ct_b^T c] (BLAS: ~4 n^2 k flops where S c costs 2 n^3).
# Only c's triangle is read.

@_impl("cho_solve")
def _cho_solve(c, b, *, lower):
    return _out(cho_solve_values(c._np(), b._np(), lower))


@_impl("cho_solve_grad")
def _cho_solve_grad(c, x, ct_b, *, lower):
    cn, xn, gn = c._np(), x._np(), ct_b._np()
    n, k = xn.shape[-2], xn.shape[-1]
    tr = lambda m: np.swapaxes(m, -1, -2)                   # noqa: E731
    # lower: S c = [ct_b | x] R^T, R = c^T [x | ct_b];  upper: c S = R [x | ct_b]^T,
    # R = c [ct_b | x]; R by BLAS trmm per matrix (c's triangle only, half a product's flops),
    # in place in rt = R^T (C-ordered, i.e. the Fortran R)
    first, second = (xn, gn) if lower else (gn, xn)
    rt = np.concatenate([tr(first), tr(second)], axis=-2)     # (..., 2k, n)
    if n and k:
        trmm = _blas("trmm", rt.dtype)
        for idx in np.ndindex(rt.shape[:-2]):
            # cn[idx].T is the Fortran c (lower c: op = transpose for c^T; upper: none);
            # the C-ordered memory of c is the Fortran c^T, triangle flipped
            r = rt[idx].T
            res = trmm(1.0, cn[idx].T, r, side=0, lower=0 if lower else 1,
                       trans_a=0 if lower else 1, overwrite_b=1)
            if not np.may_share_memory(res, r):
                r[...] = res
    if lower:
        out = np.matmul(np.negative(np.concatenate([gn, xn], axis=-1)), rt)
    else:
        out = np.matmul(np.negative(tr(rt)), np.concatenate([tr(xn), tr(gn)], axis=-2))
    out *= tri_read_weights(n, lower, False, out.dtype)
    return _out(out)


def _blas(name, dtype):
    """SciPy's BLAS routine ``name`` for ``dtype`` (cached)."""
    return _scipy_routine("blas", name, dtype)


# matrix_power_parts(a, n)  matrix_power(a, parts, n)   (n >= 2)
# Binary powering as NumPy's matrix_power does it (n = 2: a a; n = 3: (a a) a; else squares
# z <- z z and, for each set bit of n, result <- result z), as a program of products over the
# values V = [a, products...]: ``power_program(n)`` = (steps (i, j): V.append(V[i] @ V[j]),
# index of a^n in V).  matrix_power_parts stacks the products (..., len(steps), m, m): the
# residual from which matrix_power reads a^n (a copy) and its derivative the intermediate
# products, where the composition of matmuls records one tape entry per product.

_POWER_PROGRAMS = {}


def power_program(n):
    """(steps, result index) of binary powering for the exponent n >= 2 (see above)."""
    prog = _POWER_PROGRAMS.get(n)
    if prog is not None:
        return prog
    if n == 2:
        prog = (((0, 0),), 1)
    elif n == 3:
        prog = (((0, 0), (1, 0)), 2)
    else:
        steps, z, result, k = [], None, None, n
        while k > 0:
            if z is None:
                z = 0
            else:
                steps.append((z, z))
                z = len(steps)
            k, bit = divmod(k, 2)
            if bit:
                if result is None:
                    result = z
                else:
                    steps.append((result, z))
                    result = len(steps)
        prog = (tuple(steps), result)
    _POWER_PROGRAMS[n] = prog
    return prog


@_impl("matrix_power_parts")
def _matrix_power_parts(a, *, n):
    an = a._np()
    steps, _ = power_program(n)
    m = an.shape[-1]
    out = np.empty(an.shape[:-2] + (len(steps), m, m), an.dtype)
    vals = [an]
    for k, (i, j) in enumerate(steps):
        vals.append(np.matmul(vals[i], vals[j], out=out[..., k, :, :]))
    return _out(out)


@_impl("matrix_power")
def _matrix_power(a, parts, *, n):
    _, res = power_program(n)
    return _out(np.array(parts._np()[..., res - 1, :, :]))
