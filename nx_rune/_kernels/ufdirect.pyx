# cython: boundscheck=False, wraparound=False
"""NumPy ufunc inner loops called directly on small arrays, for the Tensor's eager fast path
and bind's no-transformation path (nx_rune/tensor.pyx).

A ufunc call on a small array costs mostly NumPy's dispatch: argument parsing, type resolution,
the iterator's setup and the floating-point error check around the loop (~0.2 us of a 0.25 us
``np.add`` on 10 elements).  Where that dispatch has nothing to decide, this module skips it:
for operands of one native-byte-order builtin dtype and one shape (or a Python scalar the
array's float dtype keeps), each C-contiguous or every stride 0 (a broadcast constant), of at
most ``MAX_SIZE`` elements, it allocates a C-contiguous result and calls the loop NumPy itself
would run (the first entry of the ufunc's type table whose inputs are exactly that dtype:
NumPy's own selection), once over all elements with the strides NumPy's iterator would pass
(the whole array is one coalesced dimension).  The values are bit for bit NumPy's, since it is
the same machine code on the same memory.

What is skipped besides the dispatch: the check of the FPU's exception flags after the loop,
so an IEEE special value (1 / 0, inf - inf) produces no RuntimeWarning and no
FloatingPointError, whatever ``np.errstate`` and the warnings filters say: the behaviour the
callers want (nx_rune returns IEEE results silently, as JAX).  An error that a loop raises
itself (none of the ufuncs here do for these dtypes) propagates.

Only the ufuncs of ``UFUNCS`` take this path (ones whose loops for these dtypes are plain
elementwise functions, checked against the ufunc call in tests/test_ufdirect.py); any other
callable gives None.
"""
import numpy as np

cimport numpy as cnp
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.ref cimport PyObject, Py_INCREF
from libc.float cimport FLT_MAX
from libc.math cimport fabs, isinf

cnp.import_array()
cnp.import_ufunc()

ctypedef cnp.npy_intp intp

from nx_rune._kernels.ufunc_object cimport PyUFuncGenericFunction, PyUFuncObject

cdef extern from *:
    """
    static int nxr_ufdirect_check(void) { return PyErr_Occurred() ? -1 : 0; }
    """
    int nxr_ufdirect_check() except -1

__all__ = ["UFUNCS", "MAX_SIZE", "call"]

# dtypes by NumPy type number: bool (0) to complex long double (16), and float16 (23); the
# others (object, strings, void, datetimes) never take this path
DEF NTYPES = 24
DEF SLOTS = 64           # a power of 2 above the number of ufuncs
# at most this many elements (NumPy's buffer size: below it NumPy surely calls the loop once)
DEF MAX_ELEMENTS = 8192
MAX_SIZE = MAX_ELEMENTS

cdef struct Loop:
    PyUFuncGenericFunction fn      # NULL: no loop for this dtype
    void *data
    int out_type

cdef struct Entry:
    PyObject *uf                   # NULL: a free slot
    int nin
    Loop loops[NTYPES]

cdef Entry TABLE[SLOTS]

UFUNCS = (np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.reciprocal,
          np.sqrt, np.exp, np.exp2, np.log, np.log2, np.log1p, np.expm1, np.sin, np.cos,
          np.tan, np.tanh, np.maximum, np.minimum, np.less, np.less_equal, np.greater,
          np.greater_equal, np.equal, np.not_equal, np.bitwise_and, np.bitwise_or,
          np.bitwise_xor)


cdef inline Entry* _find(PyObject* uf) noexcept:
    cdef size_t h = (<size_t>uf) >> 4
    cdef Entry* e
    cdef int k
    for k in range(SLOTS):
        e = &TABLE[(h + k) & (SLOTS - 1)]
        if e.uf == uf or e.uf == NULL:
            return e
    return NULL


cdef inline bint _builtin_number(int t) noexcept:
    return 0 <= t <= 16 or t == 23   # (NPY_CLONGDOUBLE, NPY_HALF)


cdef void _register(object uf) except *:
    cdef PyUFuncObject* u = <PyUFuncObject*><PyObject*>uf
    cdef Entry* e = _find(<PyObject*>uf)
    cdef int t, i, j
    if e == NULL or e.uf != NULL or u.nout != 1 or not (1 <= u.nin <= 2):
        raise ValueError(f"ufdirect: cannot register {uf!r}")
    Py_INCREF(uf)   # (kept for good: the table holds its address)
    e.uf = <PyObject*>uf
    e.nin = u.nin
    for t in range(NTYPES):
        e.loops[t].fn = NULL
        if not _builtin_number(t):
            continue
        # the first loop whose inputs are all t: the one NumPy's legacy loop selector takes
        for i in range(u.ntypes):
            for j in range(u.nin):
                if u.types[i * u.nargs + j] != t:
                    break
            else:
                if _builtin_number(u.types[i * u.nargs + u.nin]):
                    e.loops[t].fn = u.functions[i]
                    e.loops[t].data = u.data[i]
                    e.loops[t].out_type = u.types[i * u.nargs + u.nin]
                break


for _uf in UFUNCS:
    _register(_uf)


cdef inline Loop* _loop(object ufunc, int nin, cnp.ndarray a) noexcept:
    """The loop of ``ufunc`` (taking ``nin`` inputs) for a's dtype, or NULL."""
    cdef Entry* e = _find(<PyObject*>ufunc)
    if e == NULL or e.uf == NULL or e.nin != nin or not cnp.PyArray_CheckExact(a):
        return NULL
    cdef int t = cnp.PyArray_TYPE(a)
    if t < 0 or t >= NTYPES or not cnp.PyArray_ISNOTSWAPPED(a) or \
            cnp.PyArray_SIZE(a) > MAX_ELEMENTS:
        return NULL
    cdef Loop* lp = &e.loops[t]
    return lp if lp.fn != NULL else NULL


cdef inline intp _step(cnp.ndarray a) noexcept:
    """The loop's step over ``a``: its item size when it is C-contiguous, 0 when every stride
    is 0, -1 otherwise (or when it is not aligned: NumPy would buffer it)."""
    cdef int flags = cnp.PyArray_FLAGS(a)
    cdef int k
    if not (flags & cnp.NPY_ARRAY_ALIGNED):
        return -1
    if flags & cnp.NPY_ARRAY_C_CONTIGUOUS:
        return cnp.PyArray_ITEMSIZE(a)
    for k in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_STRIDE(a, k) != 0:
            return -1
    return 0


cdef inline object _run(Loop* lp, cnp.ndarray shape_of, char* a, intp sa, char* b, intp sb):
    """A new C-contiguous array of ``shape_of``'s shape and the loop's output dtype, computed
    by the loop over inputs a (and b when not NULL) read with steps sa (and sb)."""
    cdef cnp.ndarray out = cnp.PyArray_SimpleNew(cnp.PyArray_NDIM(shape_of),
                                                 cnp.PyArray_DIMS(shape_of), lp.out_type)
    cdef intp n = cnp.PyArray_SIZE(out)
    cdef char* args[3]
    cdef intp steps[3]
    if n == 0:
        return out
    args[0] = a
    steps[0] = sa
    if b == NULL:
        args[1] = cnp.PyArray_BYTES(out)
        steps[1] = cnp.PyArray_ITEMSIZE(out)
    else:
        args[1] = b
        steps[1] = sb
        args[2] = cnp.PyArray_BYTES(out)
        steps[2] = cnp.PyArray_ITEMSIZE(out)
    lp.fn(args, &n, steps, lp.data)
    nxr_ufdirect_check()
    return out


cdef object direct1(object ufunc, cnp.ndarray a):
    cdef Loop* lp = _loop(ufunc, 1, a)
    if lp == NULL:
        return None
    cdef intp s = _step(a)
    if s < 0:
        return None
    return _run(lp, a, cnp.PyArray_BYTES(a), s, NULL, 0)


cdef object direct2(object ufunc, cnp.ndarray a, cnp.ndarray b):
    cdef Loop* lp = _loop(ufunc, 2, a)
    cdef int k
    if lp == NULL or not cnp.PyArray_CheckExact(b):
        return None
    if cnp.PyArray_TYPE(b) != cnp.PyArray_TYPE(a) or \
            not cnp.PyArray_ISNOTSWAPPED(b) or cnp.PyArray_NDIM(a) != cnp.PyArray_NDIM(b):
        return None
    for k in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_DIM(a, k) != cnp.PyArray_DIM(b, k):
            return None
    cdef intp sa = _step(a), sb = _step(b)
    if sa < 0 or sb < 0:
        return None
    return _run(lp, a, cnp.PyArray_BYTES(a), sa, cnp.PyArray_BYTES(b), sb)


cdef union Scalar:
    double d[2]
    float f[2]


cdef object direct_scalar(object ufunc, cnp.ndarray a, object s, bint reflected):
    cdef Loop* lp = _loop(ufunc, 2, a)
    cdef double v
    cdef long long iv
    cdef int overflow = 0
    cdef Scalar c
    if lp == NULL:
        return None
    if type(s) is float:
        v = PyFloat_AS_DOUBLE(s)
    elif type(s) is int:
        # exactly a double (NumPy's conversion of a larger int may round twice)
        iv = PyLong_AsLongLongAndOverflow(s, &overflow)
        if overflow or iv > 9007199254740992 or iv < -9007199254740992:
            return None
        v = <double>iv
    else:
        return None
    cdef int t = cnp.PyArray_TYPE(a)
    if t == cnp.NPY_DOUBLE or t == cnp.NPY_CDOUBLE:
        c.d[0] = v
        c.d[1] = 0.0
    elif t == cnp.NPY_FLOAT or t == cnp.NPY_CFLOAT:
        if fabs(v) > FLT_MAX and not isinf(v):
            return None   # finite but beyond float32: NumPy's cast may warn (its path decides)
        c.f[0] = <float>v
        c.f[1] = 0.0
    else:
        return None
    cdef intp sa = _step(a)
    if sa < 0:
        return None
    if reflected:
        return _run(lp, a, <char*>&c, 0, cnp.PyArray_BYTES(a), sa)
    return _run(lp, a, cnp.PyArray_BYTES(a), sa, <char*>&c, 0)


def call(ufunc, a, b=None, *, scalar=None, reflected=False):
    """``ufunc(a)``, ``ufunc(a, b)`` (ndarrays) or ``ufunc(a, scalar)`` (``ufunc(scalar, a)``
    when ``reflected``; scalar a Python float or int) through the direct loop, or None where
    the direct path does not apply.  For tests and benchmarks; C callers use direct1, direct2
    and direct_scalar."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"a: expected an ndarray, got {type(a).__name__}")
    if scalar is not None:
        return direct_scalar(ufunc, a, scalar, reflected)
    if b is None:
        return direct1(ufunc, a)
    if not isinstance(b, np.ndarray):
        raise TypeError(f"b: expected an ndarray, got {type(b).__name__}")
    return direct2(ufunc, a, b)
