# The eager fast path of the operators and methods (included by tensor.pyx).
#
# A textual include, not a module of its own: this code compiles into nx_rune.tensor, so its
# inline helpers stay inline in the operators and its calls cost no cross-module lookup.  It
# uses tensor.pyx's imports and cimports (all of them are there, where the layering test
# reads them).

# -- the eager fast path -------------------------------------------------------------------------
# With no transformation active, an operator on two concrete Tensors that wrap ndarrays of one
# dtype and shape (or on one such Tensor and a Python number its dtype keeps) is exactly what the
# front end does in that case: it binds the primitive straight away (binary_op's first test),
# whose implementation is one NumPy ufunc call.  So the operators call the ufunc here, skipping
# the front end and bind, and give the same values.  NumPy's floating-point warnings are off for
# the call, as the backend has them off (IEEE results, as JAX): small operands of one dtype, each
# C-contiguous or a broadcast constant, go straight to NumPy's inner loop (nx_rune._kernels.
# ufdirect: no dispatch, no FP-error check); the others call the ufunc from a frame of
# nx_rune._kernels.quiet, whose RuntimeWarnings are filtered out.  bind's call of a ufunc
# implementation (_ufunc_on_values) does the same.

# The innermost active transformation (None: none); nx_rune.primitives reads and sets it.
DISPATCH = contextvars.ContextVar("nx_rune_interpreter", default=None)

_np_add, _np_subtract, _np_multiply, _np_divide = np.add, np.subtract, np.multiply, np.divide
_np_less, _np_less_equal, _np_greater, _np_greater_equal = (np.less, np.less_equal, np.greater,
                                                            np.greater_equal)
_np_equal, _np_not_equal, _np_negative = np.equal, np.not_equal, np.negative
_NUMBER_KINDS = b"iufc"     # not bool (subtract and negative refuse it)
_INEXACT_KINDS = b"fc"      # true division of integers changes the dtype: the front end decides
_REAL_KINDS = b"biuf"       # ordering of complex numbers: the front end decides
_ALL_KINDS = b"biufc"
cdef const char* _WEAK_KINDS = b"fc"  # a Python float or int keeps these dtypes (NumPy, JAX)

# NumPy's errstate ContextVar and its quiet value (read by the front end's linalg module)
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _np_errstate_var
    with np.errstate(all="ignore"):
        _NP_QUIET = _np_errstate_var.get()
except (ImportError, AttributeError):   # pragma: no cover (another NumPy layout)
    _np_errstate_var = _NP_QUIET = None


cdef inline object _quiet_call(object ufunc, object a, object b):
    # through a Python frame of nx_rune._kernels.quiet, whose RuntimeWarnings a warnings filter
    # ignores: free when nothing warns (an errstate ContextVar set and reset per call cost about
    # 0.1 us, a third of a small add)
    return _call2(ufunc, a, b) if b is not None else _call1(ufunc, a)


cdef inline object _as_result(object r):
    if type(r) is not np.ndarray:             # a NumPy scalar from 0-d operands
        r = np.asarray(r)
    if not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>r):
        r = np.ascontiguousarray(r)
    return wrap(r)


def wrap_result(r):
    """A NumPy result (an ndarray, or a NumPy scalar from 0-d operands) as a Tensor over
    C-contiguous memory (a copy only when the ndarray is not C-contiguous)."""
    return _as_result(r)


def fast_unary(x, ufunc, kinds=b"fc"):
    """``ufunc(x)`` as a Tensor when ``x`` is a concrete Tensor wrapping an ndarray of one of
    ``kinds`` and no transformation is active (what the front end's one-primitive functions
    compute then, FP warnings off); None otherwise (the caller takes its general path)."""
    if type(x) is not Tensor:
        return None
    return _unary_fast(<Tensor>x, ufunc, kinds)


def fast_binary(a, b, ufunc, kinds=b"biufc"):
    """``ufunc(a, b)`` as a Tensor on the operators' fast path (see above), else None."""
    if type(a) is not Tensor:
        return None
    return _binary_fast(<Tensor>a, b, ufunc, kinds, False)


cdef inline bint _kind_in(char kind, const char* kinds):
    return strchr(kinds, kind) != NULL


cdef object _binary_fast(Tensor self, object o, object ufunc, const char* kinds, bint reflected):
    """``ufunc`` on the values when the fast path applies, else None (see above)."""
    cdef cnp.ndarray p, q
    cdef int k
    if _get_value(DISPATCH) is not None:
        return None
    arr = self._arr
    if arr is None:
        return None
    p = <cnp.ndarray>arr
    if not _kind_in(p.descr.kind, kinds):
        return None
    if type(o) is Tensor:
        other = (<Tensor>o)._arr
        if other is None:
            return None
        q = <cnp.ndarray>other
        if cnp.PyArray_DESCR(p) != cnp.PyArray_DESCR(q) or p.ndim != q.ndim:
            return None
        for k in range(p.ndim):
            if p.shape[k] != q.shape[k]:
                return None
        # (small operands: NumPy's inner loop called directly, see ufdirect)
        r = direct2(ufunc, q, p) if reflected else direct2(ufunc, p, q)
        if r is not None:
            return wrap(r)
    elif (type(o) is float or type(o) is int) and _kind_in(p.descr.kind, _WEAK_KINDS):
        other = o
        r = direct_scalar(ufunc, p, o, reflected)
        if r is not None:
            return wrap(r)
    else:
        return None
    return _as_result(_quiet_call(ufunc, other, arr) if reflected else
                      _quiet_call(ufunc, arr, other))


cdef object _transpose_fast(Tensor self):
    """NumPy's reversed-axes view of the values, wrapped (what the permute primitive gives
    eagerly), or None (a transformation is active, no ndarray, fewer than 2 axes)."""
    arr = self._arr
    if arr is not None and (<cnp.ndarray>arr).ndim >= 2 and _get_value(DISPATCH) is None:
        return wrap(cnp.PyArray_Transpose(<cnp.ndarray>arr, NULL))
    return None


DEF _MAX_FAST_NDIM = 32


cdef object _reshape_fast(Tensor self, object shape):
    """The values reshaped by NumPy (a view when the strides allow, else a C-ordered copy, as
    the reshape primitive), wrapped; ``self`` when the shape is its own; None when the fast path
    does not apply (a transformation is active, no ndarray, ``shape`` not a tuple of ints, or
    one NumPy refuses: the front end then says what is wrong, in its words)."""
    cdef cnp.npy_intp dims_buf[_MAX_FAST_NDIM]
    cdef cnp.PyArray_Dims dims
    cdef Py_ssize_t k, n
    arr = self._arr
    if arr is None or type(shape) is not tuple or _get_value(DISPATCH) is not None:
        return None
    n = len(<tuple>shape)
    if n > _MAX_FAST_NDIM:
        return None
    for k in range(n):
        v = (<tuple>shape)[k]
        if type(v) is not int or v < -1:   # (NumPy reads any negative size as -1)
            return None
        try:
            dims_buf[k] = v
        except OverflowError:
            return None
    dims.ptr = dims_buf
    dims.len = <int>n
    try:
        r = cnp.PyArray_Newshape(<cnp.ndarray>arr, &dims, cnp.NPY_CORDER)
    except ValueError:
        return None
    if _same_shape(<cnp.ndarray>r, <cnp.ndarray>arr):
        return self
    cdef Tensor t = wrap(r)
    if cnp.PyArray_NDIM(<cnp.ndarray>r) == 0:
        t._array0d = True     # a view (x.reshape(()) of a 1-element x): NumPy's 0-d array
    return t


def fast_transpose(x):
    """``x`` with its axes reversed on the eager fast path (a concrete Tensor wrapping an ndarray
    of 2 or more axes, no transformation active), else None: the caller takes its general
    path."""
    if type(x) is not Tensor:
        return None
    return _transpose_fast(<Tensor>x)


def fast_reshape(x, shape):
    """``x`` reshaped to the tuple of ints ``shape`` on the eager fast path (see
    ``_reshape_fast``), else None: the caller takes its general path."""
    if type(x) is not Tensor:
        return None
    return _reshape_fast(<Tensor>x, shape)


cdef bint _same_shape(cnp.ndarray a, cnp.ndarray b):
    cdef int k
    if a.ndim != b.ndim:
        return False
    for k in range(a.ndim):
        if a.shape[k] != b.shape[k]:
            return False
    return True


cdef bint _all_ints(tuple items):
    for v in items:
        if type(v) is not int:
            return False
    return True


cdef object _basic_key(object index, Py_ssize_t ndim):
    """``index`` as a tuple NumPy reads as a view when every entry is an int (not a bool), a
    slice, None or Ellipsis (an Ellipsis is appended when absent, so that ints alone give a 0-d
    view, not a NumPy scalar); None for anything else (the front end handles it)."""
    cdef bint ints_only = True
    if type(index) is slice:   # x[a:b]: NumPy's quickest index, as it is
        return index
    if type(index) is not tuple:
        index = (index,)
    for item in <tuple>index:
        if type(item) is int:
            continue
        if type(item) is slice or item is None or item is Ellipsis:
            ints_only = False
        else:
            return None
    # a slice, None or Ellipsis, or fewer ints than axes, already gives an ndarray (and NumPy
    # parses an index without an Ellipsis faster); only an int per axis needs one
    return index + (Ellipsis,) if ints_only and len(<tuple>index) >= ndim else index


cdef object _unary_fast(Tensor self, object ufunc, const char* kinds):
    if _get_value(DISPATCH) is not None:
        return None
    arr = self._arr
    if arr is None or not _kind_in((<cnp.ndarray>arr).descr.kind, kinds):
        return None
    r = direct1(ufunc, <cnp.ndarray>arr)
    if r is not None:
        return wrap(r)
    return _as_result(_quiet_call(ufunc, arr, None))


_SCALAR_TENSORS = {}


cdef object _scalar_tensor(object value, object dtype, object shape):
    """Tensor._broadcast_scalar (a cached stride-0 constant), callable from C."""
    key = (type(value), value, dtype, shape)
    if not value:
        key = (type(value), repr(value), dtype, shape)
    t = _SCALAR_TENSORS.get(key)
    if t is not None:
        return t
    with np.errstate(over="ignore"):   # a float beyond a narrow float's range: inf, silently
        base = np.full(1, value, dtype=dtype)
    base.flags.writeable = False
    t = wrap(np.ndarray(shape, dtype, buffer=base, strides=(0,) * len(shape)))
    if len(_SCALAR_TENSORS) >= 4096:
        _SCALAR_TENSORS.clear()
    _SCALAR_TENSORS[key] = t
    return t
