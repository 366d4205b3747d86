# The Python-level validation below indexes tuples and lists with computed integers; these
# directives keep that code safe.  The nogil kernels use raw pointers only, which no directive
# checks, so they run at full speed either way.
# cython: boundscheck=True, wraparound=True
"""Gather and scatter along an axis, with ``np.take_along_axis`` index semantics.

Inputs are NumPy arrays of any strides (negative and zero included), read in place; outputs
are new C-contiguous arrays.  Indices are int32 or int64 (used as they are) or another
integer dtype (cast).  Every index is checked: a bad one raises IndexError, never a stray
memory access.
"""
import operator

import numpy as np

from nx_rune._kernels.buffer import empty as _empty

cimport numpy as cnp
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t)
from libc.string cimport memcpy, memset

from nx_rune._kernels._types cimport index_t, item16_t, item_t, numeric_t, real_t
from nx_rune._kernels.pool cimport num_threads, pool_has_threads, run_spans

cnp.import_array()

_MODES = {"set": MODE_SET, "add": MODE_ADD, "mul": MODE_MUL, "max": MODE_MAX, "min": MODE_MIN}
_INT64_MAX = np.iinfo(np.int64).max


# The nogil walks, in files of their own compiled into this module (textual includes: the
# kernels stay inline in the dispatch below)
include "gather_walks.pxi"
include "scatter_walks.pxi"


# ----------------------------------------------------------------------------------------
# Type dispatch (nogil): raw pointers to the typed kernels
# ----------------------------------------------------------------------------------------

# Type codes of the work dtypes of the arithmetic modes, see _ACCUM_CODES and _ORDER_CODES.
cdef enum:
    T_U8, T_U16, T_U32, T_U64, T_I8, T_I16, T_I32, T_I64, T_F32, T_F64, T_C64, T_C128

_ACCUM_CODES = {"u1": T_U8, "u2": T_U16, "u4": T_U32, "u8": T_U64,
                "f4": T_F32, "f8": T_F64, "c8": T_C64, "c16": T_C128}
_ORDER_CODES = {"u1": T_U8, "u2": T_U16, "u4": T_U32, "u8": T_U64,
                "i1": T_I8, "i2": T_I16, "i4": T_I32, "i8": T_I64, "f4": T_F32, "f8": T_F64}


cdef int _gather_items(char* src, const index_t* idx, char* out, int itemsize,
                       const Walk* w, int64_t* bad) noexcept nogil:
    if itemsize == 1:
        return gather_walk(<uint8_t*>src, idx, <uint8_t*>out, w, bad)
    if itemsize == 2:
        return gather_walk(<uint16_t*>src, idx, <uint16_t*>out, w, bad)
    if itemsize == 4:
        return gather_walk(<uint32_t*>src, idx, <uint32_t*>out, w, bad)
    if itemsize == 8:
        return gather_walk(<uint64_t*>src, idx, <uint64_t*>out, w, bad)
    return gather_walk(<item16_t*>src, idx, <item16_t*>out, w, bad)


cdef int _set_items(char* out, const index_t* idx, char* upd, int itemsize,
                    const Walk* w, int64_t* bad) noexcept nogil:
    if itemsize == 1:
        return scatter_set_walk(<uint8_t*>out, idx, <uint8_t*>upd, w, bad)
    if itemsize == 2:
        return scatter_set_walk(<uint16_t*>out, idx, <uint16_t*>upd, w, bad)
    if itemsize == 4:
        return scatter_set_walk(<uint32_t*>out, idx, <uint32_t*>upd, w, bad)
    if itemsize == 8:
        return scatter_set_walk(<uint64_t*>out, idx, <uint64_t*>upd, w, bad)
    return scatter_set_walk(<item16_t*>out, idx, <item16_t*>upd, w, bad)


cdef int _accum_typed(char* out, const index_t* idx, char* upd, int code, int mode,
                      const Walk* w, int64_t* bad) noexcept nogil:
    if code == T_U8:
        return scatter_accum_walk(<uint8_t*>out, idx, <uint8_t*>upd, w, mode, bad)
    if code == T_U16:
        return scatter_accum_walk(<uint16_t*>out, idx, <uint16_t*>upd, w, mode, bad)
    if code == T_U32:
        return scatter_accum_walk(<uint32_t*>out, idx, <uint32_t*>upd, w, mode, bad)
    if code == T_U64:
        return scatter_accum_walk(<uint64_t*>out, idx, <uint64_t*>upd, w, mode, bad)
    if code == T_F32:
        return scatter_accum_walk(<float*>out, idx, <float*>upd, w, mode, bad)
    if code == T_F64:
        return scatter_accum_walk(<double*>out, idx, <double*>upd, w, mode, bad)
    if code == T_C64:
        return scatter_accum_walk(<float complex*>out, idx, <float complex*>upd, w, mode, bad)
    return scatter_accum_walk(<double complex*>out, idx, <double complex*>upd, w, mode, bad)


cdef int _order_typed(char* out, const index_t* idx, char* upd, int code, int mode,
                      const Walk* w, int64_t* bad) noexcept nogil:
    if code == T_U8:
        return scatter_order_walk(<uint8_t*>out, idx, <uint8_t*>upd, w, mode, bad)
    if code == T_U16:
        return scatter_order_walk(<uint16_t*>out, idx, <uint16_t*>upd, w, mode, bad)
    if code == T_U32:
        return scatter_order_walk(<uint32_t*>out, idx, <uint32_t*>upd, w, mode, bad)
    if code == T_U64:
        return scatter_order_walk(<uint64_t*>out, idx, <uint64_t*>upd, w, mode, bad)
    if code == T_I8:
        return scatter_order_walk(<int8_t*>out, idx, <int8_t*>upd, w, mode, bad)
    if code == T_I16:
        return scatter_order_walk(<int16_t*>out, idx, <int16_t*>upd, w, mode, bad)
    if code == T_I32:
        return scatter_order_walk(<int32_t*>out, idx, <int32_t*>upd, w, mode, bad)
    if code == T_I64:
        return scatter_order_walk(<int64_t*>out, idx, <int64_t*>upd, w, mode, bad)
    if code == T_F32:
        return scatter_order_walk(<float*>out, idx, <float*>upd, w, mode, bad)
    return scatter_order_walk(<double*>out, idx, <double*>upd, w, mode, bad)


cdef int _scatter_typed(char* out, const index_t* idx, char* upd, int itemsize, int code,
                        int mode, const Walk* w, int64_t* bad) noexcept nogil:
    if mode == MODE_SET:
        return _set_items(out, idx, upd, itemsize, w, bad)
    if mode == MODE_ADD or mode == MODE_MUL:
        return _accum_typed(out, idx, upd, code, mode, w, bad)
    return _order_typed(out, idx, upd, code, mode, w, bad)


# ----------------------------------------------------------------------------------------
# Threads: one walk cut into spans along one of its dimensions, each span a walk of its own
# ----------------------------------------------------------------------------------------
#
# A gather may cut any dimension.  A scatter cuts only a dimension along which the target
# moves (a nonzero OP_ALONG stride): every target element is then written by one span, in the
# C order of that span, so the result is the single-threaded one bit for bit.  A scatter with
# no such dimension (a 1-D target: every update may hit any element) in mode "add" cuts the
# updates into fixed chunks (up to SPANS_PER_THREAD a thread, as many as the target's size
# pays for: "few bins", a whole number a thread, rounded down), gives each chunk after the
# first a private zeroed copy of the target and adds the copies to the target in chunk order.
# The chunks are claimed dynamically like any spans (a thread the scheduler holds up delays
# the call by at most the chunk it holds, where one chunk a thread made the caller wait for
# the other thread's half), and each chunk's sums go to its own copy whichever thread runs
# it, so the result depends only on the chunks: that changes the order of floating-point sums
# against one thread (integers: the same result); for a given thread count it is the same on
# every run.
#
# A span that meets a bad index stops; the walk is then run again in one thread to find the
# first bad index in C order (the error path only: the output is thrown away).

cdef enum:
    MAX_SPANS = 256
    SPANS_PER_THREAD = 4         # see run_spans
    GATHER_OP = -1               # Job.op of a gather (scatter's are the ScatterMode values)

# A walk is cut only when it has at least this many elements.  Measured on 2 cores (min of
# 300 calls, 1 -> 2 threads; gather rows of 256, 1-D add into size/64 bins): 2**16: gather
# 33.4 -> 33.8 us, add 35.3 -> 37.0 us; 2**17: 65.4 -> 59.6, 63.8 -> 65.4; 2**18: 132 -> 98,
# 129 -> 112 (benchmarks/bench_gather_kernels.py's *_small cases sit at the threshold).
# A Python global so that the tests can lower it to cover the threaded path on small inputs.
THREADED_SIZE = 1 << 17
# A 1-D add takes k - 1 private targets (k chunks, k <= SPANS_PER_THREAD * threads) only
# while (k - 1) * target size * this <= the updates (a private target costs a zeroing and
# an addition per element, against the updates' scattered additions).
HISTOGRAM_RATIO = 4

ctypedef struct Job:
    const Walk* w
    int split                     # the walk dimension the spans cut
    int op                        # GATHER_OP or a ScatterMode
    int itemsize                  # of the along / dense items
    int code                      # type code of the arithmetic modes
    bint idx64
    char* along                   # gather's source / scatter's target
    char* idx
    char* dense                   # gather's output / scatter's updates
    char* private_                # spans 1.. accumulate into private targets here, or NULL
    Py_ssize_t private_bytes      # bytes of one private target (= the target's)
    Py_ssize_t parts              # private targets
    Py_ssize_t step
    int err[MAX_SPANS]


cdef int _walk_items(char* along, char* idx, char* dense, const Job* j, const Walk* w,
                     int64_t* bad) noexcept nogil:
    """The single-threaded walk of a gather or scatter over w."""
    if j.op == GATHER_OP:
        if j.idx64:
            return _gather_items(along, <const int64_t*>idx, dense, j.itemsize, w, bad)
        return _gather_items(along, <const int32_t*>idx, dense, j.itemsize, w, bad)
    if j.idx64:
        return _scatter_typed(along, <const int64_t*>idx, dense, j.itemsize, j.code, j.op,
                              w, bad)
    return _scatter_typed(along, <const int32_t*>idx, dense, j.itemsize, j.code, j.op, w, bad)


cdef void _walk_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Job* j = <Job*>ctx
    cdef Walk sub = j.w[0]
    cdef int d = j.split, e
    cdef Py_ssize_t k = lo // j.step
    cdef int64_t bad = 0
    cdef char* along = j.along + lo * sub.strides[OP_ALONG][d] * j.itemsize
    cdef char* idx = j.idx + lo * sub.strides[OP_INDEX][d] * (8 if j.idx64 else 4)
    cdef char* dense = j.dense + lo * sub.strides[OP_DENSE][d] * j.itemsize
    cdef char* private_
    sub.shape[d] = hi - lo
    sub.rows = 1
    for e in range(sub.ndim - 1):
        sub.rows *= sub.shape[e]
    if j.private_ != NULL and k > 0:
        private_ = j.private_ + (k - 1) * j.private_bytes
        memset(private_, 0, j.private_bytes)
        along = private_ + (along - j.along)
    j.err[k] = _walk_items(along, idx, dense, j, &sub, &bad)


cdef void _reduce_items(numeric_t* out, const numeric_t* private_, Py_ssize_t size,
                        Py_ssize_t parts, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """out[b] += private_[0][b], then += private_[1][b]...: the span order, per element."""
    cdef Py_ssize_t b, k
    cdef numeric_t acc
    for b in range(lo, hi):
        acc = out[b]
        for k in range(parts):
            acc = acc + private_[k * size + b]
        out[b] = acc


cdef void _reduce_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef const Job* j = <const Job*>ctx
    cdef Py_ssize_t size = j.private_bytes // j.itemsize, parts = j.parts
    if j.code == T_U8:
        _reduce_items(<uint8_t*>j.along, <const uint8_t*>j.private_, size, parts, lo, hi)
    elif j.code == T_U16:
        _reduce_items(<uint16_t*>j.along, <const uint16_t*>j.private_, size, parts, lo, hi)
    elif j.code == T_U32:
        _reduce_items(<uint32_t*>j.along, <const uint32_t*>j.private_, size, parts, lo, hi)
    elif j.code == T_U64:
        _reduce_items(<uint64_t*>j.along, <const uint64_t*>j.private_, size, parts, lo, hi)
    elif j.code == T_F32:
        _reduce_items(<float*>j.along, <const float*>j.private_, size, parts, lo, hi)
    elif j.code == T_F64:
        _reduce_items(<double*>j.along, <const double*>j.private_, size, parts, lo, hi)
    elif j.code == T_C64:
        _reduce_items(<float complex*>j.along, <const float complex*>j.private_, size, parts,
                      lo, hi)
    else:
        _reduce_items(<double complex*>j.along, <const double complex*>j.private_, size, parts,
                      lo, hi)


cdef int _choose_split(const Walk* w, int op, Py_ssize_t threads) noexcept:
    """The dimension to cut (-1: none): the outermost allowed one with at least two items a
    thread, else the longest allowed one with at least one a thread."""
    cdef int d, best = -1
    for d in range(w.ndim):
        if op != GATHER_OP and w.strides[OP_ALONG][d] == 0:
            continue
        if w.shape[d] >= 2 * threads:
            return d
        if best < 0 or w.shape[d] > w.shape[best]:
            best = d
    if best >= 0 and w.shape[best] >= threads:
        return best
    return -1


cdef int _longest(const Walk* w) noexcept:
    cdef int d, best = 0
    for d in range(1, w.ndim):
        if w.shape[d] > w.shape[best]:
            best = d
    return best


# The private targets' memory, kept from one threaded add to the next: a fresh allocation of
# that size is mapped anew by the C library each call, and its pages faulted in by two threads
# at once contend in the kernel (a 1-D add of 5e5 updates into 1e5 bins took 1 ms on two
# threads against 0.27 ms on one).  A call takes the buffer out of the list and puts it back
# when done (list operations hold the GIL), so concurrent calls never share one; the one kept
# is at most the largest private target made, a quarter of that call's updates
# (HISTOGRAM_RATIO), and at most _PRIVATE_KEEP_BYTES (past that the updates' own work dwarfs
# the page faults, and the memory is better returned).
_PRIVATE_CACHE = []
_PRIVATE_KEEP_BYTES = 16 << 20


cdef object _take_private(Py_ssize_t nbytes):
    """A C-contiguous byte buffer of at least ``nbytes`` (its contents undefined)."""
    try:
        buf = _PRIVATE_CACHE.pop()
    except IndexError:
        buf = None
    if buf is None or buf.nbytes < nbytes:
        buf = np.empty(max(nbytes, 64), np.uint8)
    return buf


cdef int _execute(Job* j, out, int64_t* bad) except -1:
    """Run the walk j.w (on the pool when it is large); 1 with bad[0] set on a bad index.
    out: scatter's target array (a C-contiguous ndarray), for the private targets."""
    cdef const Walk* w = j.w
    cdef Py_ssize_t threads = min(num_threads(), <Py_ssize_t>MAX_SPANS)
    cdef Py_ssize_t total = w.rows * w.shape[w.ndim - 1], size, count, k, step, spans
    cdef Py_ssize_t parts = 0
    cdef int err
    cdef bint histogram = False
    private = None
    j.split = -1
    j.private_ = NULL
    if threads > 1 and total >= THREADED_SIZE and pool_has_threads():
        j.split = _choose_split(w, j.op, threads)
        if j.split < 0 and j.op == MODE_ADD:
            # as many chunks (private targets and one) as the updates pay for
            # (HISTOGRAM_RATIO), up to SPANS_PER_THREAD a thread
            parts = min(threads * SPANS_PER_THREAD, <Py_ssize_t>MAX_SPANS,
                        1 + total // max(out.size * HISTOGRAM_RATIO, 1))
            if parts > threads:
                # a whole number of chunks a thread, rounded down: 3 chunks on 2 threads left
                # one thread adding the third alone (2/3 of the updates on the critical path,
                # not 1/2).  Not up: every chunk past the first costs a private target's
                # zeroing and addition whichever thread runs it, and when the other core is
                # busy the caller runs them all (1e6 updates into 1e5 bins on 2 threads, 2
                # chunks against 4: 308 against 346 us idle, 590 against 640 with one busy
                # process, one thread alone 540)
                parts -= parts % threads
            threads = min(threads, parts)
            j.split = _longest(w)
            histogram = parts > 1 and w.shape[j.split] >= parts
            if not histogram:
                j.split = -1
    if j.split < 0:
        with nogil:
            err = _walk_items(j.along, j.idx, j.dense, j, w, bad)
        return err
    size = w.shape[j.split]
    spans = parts if histogram else min(threads * SPANS_PER_THREAD, <Py_ssize_t>MAX_SPANS)
    j.step = (size + spans - 1) // spans
    if j.split == w.ndim - 1 and j.step > 16:
        j.step = (j.step + 15) // 16 * 16         # no cache line of output split between spans
    count = (size + j.step - 1) // j.step
    if histogram and count > 1:
        private = _take_private((count - 1) * out.nbytes)
        j.private_ = _ptr(private)
        j.private_bytes = out.nbytes
    for k in range(count):
        j.err[k] = 0
    run_spans(_walk_span, j, size, j.step, count, threads)
    for k in range(count):
        if j.err[k]:
            with nogil:
                err = _walk_items(j.along, j.idx, j.dense, j, w, bad)
            return 1
    if private is not None:
        # the private targets into the target, cut by element (each span adds in span order)
        j.parts = count - 1
        size = out.size
        step = max((size + threads - 1) // threads, <Py_ssize_t>4096)
        run_spans(_reduce_span, j, size, step, (size + step - 1) // step, threads)
        if private.nbytes <= _PRIVATE_KEEP_BYTES:
            _PRIVATE_CACHE.append(private)
    return 0


# ----------------------------------------------------------------------------------------
# Validation and planning (Python level)
# ----------------------------------------------------------------------------------------

# Items the kernels know: up to 16 bytes (long double and its complex are not nx dtypes; a
# 32-byte complex would be copied as half an item).
_KNOWN_ITEMS = frozenset(["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
                          "c8", "c16"])


def _numeric_array(x, name, fn):
    arr = np.asarray(x)
    if f"{arr.dtype.kind}{arr.dtype.itemsize}" not in _KNOWN_ITEMS:
        raise TypeError(f"{fn}: {name} must have a bool or numeric dtype of nx_rune, got "
                        f"{arr.dtype}")
    return arr


def _index_array(indices, fn):
    """indices as native int32 or int64 (int32/int64 arrays are returned as they are)."""
    arr = np.asarray(indices)
    dt = arr.dtype
    if dt.kind not in "iu":
        raise TypeError(f"{fn}: indices must have an integer dtype, got {dt}")
    if dt.kind == "i" and dt.itemsize in (4, 8):
        return arr if dt.isnative else arr.astype(dt.newbyteorder("="))
    if dt.itemsize < 4:
        return arr.astype(np.int32)
    return arr.astype(np.int64)


def _check_uint64_range(raw_indices, axis, n, fn):
    # A uint64 index above int64's range would wrap to a negative (valid-looking) int64.
    arr = np.asarray(raw_indices)
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size:
        top = int(arr.max())
        if top > _INT64_MAX:
            raise IndexError(f"{fn}: index {top} is out of bounds for axis {axis} with size {n}")


def _normalize_axis(axis, ndim, fn):
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fn}: axis must be an integer or None, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim, msg_prefix=fn)
    return a + ndim if a < 0 else a


def _check_rank(arr, indices, name, fn):
    if arr.ndim != indices.ndim:
        raise ValueError(f"{fn}: indices must have the same rank as {name}; got {name} shape "
                         f"{arr.shape} and indices shape {indices.shape}")


def _along_shape(shape, ishape, axis, name, fn):
    """The broadcast shape B: indices' length along axis, the broadcast of both elsewhere."""
    out = []
    for d in range(len(shape)):
        a, b = shape[d], ishape[d]
        if d == axis or a == 1:
            out.append(b)
        elif b == 1 or a == b:
            out.append(a)
        else:
            raise ValueError(f"{fn}: indices shape {ishape} does not broadcast against {name} "
                             f"shape {shape} outside axis {axis}")
    return tuple(out)


# The planning helpers below read the arrays' shapes and strides through the C API: as
# Python code (tuples, lists, generator expressions) they took about 1.5 us of a small
# gather's 3 us.

cdef object _kernel_ready(arr):
    """arr itself when its strides are whole, aligned items (every ndarray NumPy makes), else
    a contiguous copy (exotic views: fields of packed records, byte-offset as_strided)."""
    cdef cnp.ndarray a = arr
    cdef int d
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(a)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(a)
    cdef cnp.npy_intp* strides = cnp.PyArray_STRIDES(a)
    if cnp.PyArray_ISALIGNED(a):
        for d in range(cnp.PyArray_NDIM(a)):
            if dims[d] > 1 and strides[d] % item != 0:
                break
        else:
            return arr
    return np.ascontiguousarray(arr)


cdef inline Py_ssize_t _operand_stride(cnp.ndarray arr, int d, Py_ssize_t size,
                                       bint along_axis) noexcept:
    """Element stride of arr along dimension d of shape B (of length size): 0 where arr
    broadcasts (or on the axis of the along-axis operand, which the index supplies)."""
    if along_axis or cnp.PyArray_DIMS(arr)[d] != size:
        return 0
    return cnp.PyArray_STRIDES(arr)[d] // cnp.PyArray_ITEMSIZE(arr)


cdef int _plan_along(Walk* w, along, indices, dense, tuple shape, int axis) except -1:
    """Fill w for the three kernel-ready operands (each of shape's rank) over the broadcast
    shape ``shape``: size-1 dimensions dropped, neighbours that every operand walks as one
    merged (C order, hence which duplicate is written last, is kept)."""
    cdef cnp.ndarray a = along, ix = indices, dn = dense
    cdef int d, k, nd = len(shape), ndim = 0
    cdef Py_ssize_t size
    cdef Py_ssize_t s[3]
    for d in range(nd):
        size = shape[d]
        if size == 1:
            continue
        s[OP_INDEX] = _operand_stride(ix, d, size, False)
        s[OP_ALONG] = _operand_stride(a, d, size, d == axis)
        s[OP_DENSE] = _operand_stride(dn, d, size, False)
        if (ndim and w.strides[OP_INDEX][ndim - 1] == s[OP_INDEX] * size
                and w.strides[OP_ALONG][ndim - 1] == s[OP_ALONG] * size
                and w.strides[OP_DENSE][ndim - 1] == s[OP_DENSE] * size):
            w.shape[ndim - 1] *= size
        else:
            w.shape[ndim] = size
            ndim += 1
        for k in range(3):
            w.strides[k][ndim - 1] = s[k]
    if ndim == 0:
        w.shape[0] = 1
        for k in range(3):
            w.strides[k][0] = 0
        ndim = 1
    w.ndim = ndim
    w.rows = 1
    for d in range(ndim - 1):
        w.rows *= w.shape[d]
    w.n = cnp.PyArray_DIMS(a)[axis]
    w.axis_stride = cnp.PyArray_STRIDES(a)[axis] // cnp.PyArray_ITEMSIZE(a)
    return 0


cdef char* _ptr(arr):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>arr)


def _prepare(arr, name, raw_indices, axis, fn):
    """Common checks; returns (arr, indices, axis, B) with arr flattened for axis=None."""
    indices = _index_array(raw_indices, fn)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"{fn}: with axis=None indices must be 1-D, got shape {indices.shape}")
        arr = arr.reshape(-1)
        axis = 0
    _check_rank(arr, indices, name, fn)
    axis = _normalize_axis(axis, arr.ndim, fn)
    _check_uint64_range(raw_indices, axis, arr.shape[axis], fn)
    return arr, indices, axis, _along_shape(arr.shape, indices.shape, axis, name, fn)


def _raise_bad_index(fn, int64_t bad, axis, n):
    raise IndexError(f"{fn}: index {bad} is out of bounds for axis {axis} with size {n}")


# ----------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------

def gather(data, indices, axis):
    """Take values along an axis: ``np.take_along_axis(data, indices, axis)``.

    data: ndarray of shape D (bool or any numeric dtype, any strides).
    indices: integer ndarray of the same rank as D; negative entries count from the end.
    axis: int, or None for the flattened data (then indices must be 1-D).
    Returns a new C-contiguous array of data's dtype and the broadcast shape B: B[axis] is
    indices.shape[axis]; elsewhere B is the broadcast of D and indices.shape.

    Raises TypeError (dtype of data or indices), ValueError (ranks or shapes), AxisError
    (axis) and IndexError (an index outside [-n, n), n = D[axis]).
    From THREADED_SIZE elements of B on, the work is shared by the kernels' threads
    (nx_rune._kernels.pool.set_num_threads); the result does not depend on their number.
    """
    cdef Walk w
    cdef Job j
    cdef int64_t bad = 0
    data = _numeric_array(data, "data", "gather")
    data, indices, axis, shape = _prepare(data, "data", indices, axis, "gather")
    out = _empty(shape, data.dtype)
    if out.size == 0:
        return out
    data, indices = _kernel_ready(data), _kernel_ready(indices)
    _plan_along(&w, data, indices, out, shape, axis)
    j.w, j.op, j.itemsize, j.code = &w, GATHER_OP, data.itemsize, 0
    j.idx64 = indices.itemsize == 8
    j.along, j.idx, j.dense = _ptr(data), _ptr(indices), _ptr(out)
    if _execute(&j, None, &bad):
        _raise_bad_index("gather", bad, axis, data.shape[axis])
    return out


def _mode_code(mode):
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"scatter: mode must be one of {sorted(_MODES)}, got {mode!r}")
    return _MODES[mode]


_PLANS = {}


def _scatter_plan(dtype, int op):
    """(native dtype, work dtype, mode run, kernel type code) for template's dtype and the
    mode, cached by the pair (a third of a microsecond a call otherwise)."""
    key = (dtype, op)
    plan = _PLANS.get(key)
    if plan is None:
        work, run = _work_dtype(dtype, op)
        code = 0
        if run != MODE_SET:
            codes = _ACCUM_CODES if run in (MODE_ADD, MODE_MUL) else _ORDER_CODES
            code = codes[f"{work.kind}{work.itemsize}"]
        plan = _PLANS[key] = (dtype.newbyteorder("="), work, run, code)
    return plan


def _work_dtype(dtype, mode):
    """(dtype the kernel computes in, mode it runs) for template's dtype and the mode.

    Bool arithmetic is logical on uint8 0/1 (add = or = max, mul = and = min), signed integer
    add/mul run on the unsigned type (the same two's-complement wrap, with no signed-overflow
    undefined behaviour in C), float16 arithmetic is widened to float32.
    """
    dt = dtype.newbyteorder("=")
    if mode == MODE_SET:
        return dt, mode
    if dt.kind == "c" and mode in (MODE_MAX, MODE_MIN):
        name = "max" if mode == MODE_MAX else "min"
        raise TypeError(f"scatter: mode {name!r} is not defined for complex template dtype {dt}")
    if dt.kind == "b":
        return np.dtype(np.uint8), MODE_MAX if mode in (MODE_ADD, MODE_MAX) else MODE_MIN
    if dt.kind == "f" and dt.itemsize == 2:
        return np.dtype(np.float32), mode
    if dt.kind == "i" and mode in (MODE_ADD, MODE_MUL):
        return np.dtype(f"u{dt.itemsize}"), mode
    return dt, mode


_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _updates_array(updates, dtype, shape):
    """updates cast to dtype (same_kind; a Python scalar may take any dtype of its kind or a
    higher one, as in NumPy 2), of shape's rank, each dimension shape's or 1 (broadcast by
    the walk)."""
    kind = _SCALAR_KIND.get(type(updates))
    if kind is not None:
        if _KIND_RANK[kind] > _KIND_RANK[dtype.kind]:
            raise TypeError(f"scatter: cannot cast updates {updates!r} to template dtype {dtype}")
        arr = np.asarray(updates, dtype=dtype)
    else:
        arr = _numeric_array(updates, "updates", "scatter")
        if arr.dtype != dtype and not np.can_cast(arr.dtype, dtype, casting="same_kind"):
            raise TypeError(f"scatter: cannot cast updates of dtype {arr.dtype} to template "
                            f"dtype {dtype} (same_kind casting)")
        arr = arr.astype(dtype, copy=False)
    # Not np.broadcast_to (about 2 us, a third of a small scatter's time): the size-1
    # dimensions left in place are walked with stride 0 (see _operand_stride).
    if arr.shape == shape:
        return arr
    lead = len(shape) - arr.ndim
    if lead < 0 or any(a != 1 and a != b for a, b in zip(arr.shape, shape[lead:])):
        raise ValueError(f"scatter: updates shape {arr.shape} does not broadcast to the indexed "
                         f"shape {shape}")
    return arr.reshape((1,) * lead + arr.shape)


def _to_work(arr, work):
    """arr reinterpreted (same item size) or converted (float16 -> float32) to work."""
    if arr.dtype == work:
        return arr
    if arr.dtype.itemsize == work.itemsize:
        return arr.view(work)
    return arr.astype(work)


def scatter(template, indices, updates, axis, mode="set"):
    """A new array equal to template with updates written along axis at indices.

    template: ndarray of shape T (bool or any numeric dtype, any strides); never modified.
    indices: integer ndarray of T's rank, np.take_along_axis semantics (negative entries
    count from the end; other axes broadcast against T's), giving the indexed shape B.
    updates: array (or Python scalar) broadcastable to B, cast to template's dtype with
    same_kind casting.
    axis: int, or None for the flattened template (then indices must be 1-D).
    mode: "set": write; with duplicate indices the last update in C order of B wins.
          "add" / "mul": duplicates accumulate, like np.add.at / np.multiply.at (integers
          wrap; on bool, add is logical or and mul logical and).
          "max" / "min": like np.maximum.at / np.minimum.at (NaN propagates; on bool, or /
          and); TypeError on complex.
    Returns a new C-contiguous array of shape T and template's dtype (in native byte order).
    float16 add/mul accumulate in float32 and round once at the end, so with duplicates they
    can differ from NumPy's per-step float16 rounding in the last place; float16 max/min
    also run in float32, where a tie takes the update (as NumPy's float32 rule), so 0.0
    against -0.0 can give the other zero than NumPy's float16 rule (which keeps the first).
    From THREADED_SIZE elements of B on, the work is shared by the kernels' threads
    (nx_rune._kernels.pool.set_num_threads), with the one-thread result bit for bit, except
    for "add" into a target that every update may hit (a 1-D template): then each thread
    the updates are cut into fixed chunks (more chunks than threads, claimed dynamically),
    each chunk after the first sums into its own copy and the copies are added in chunk
    order, so float sums may differ from one thread's (and NumPy's) in the last places
    (integers: the same); for a given thread count they are the same on every run.
    """
    cdef Walk w
    cdef Job j
    cdef int64_t bad = 0
    cdef int code = 0, op
    template = _numeric_array(template, "template", "scatter")
    op = _mode_code(mode)
    out_shape = template.shape
    dtype, work, op, code = _scatter_plan(template.dtype, op)
    template, indices, axis, shape = _prepare(template, "template", indices, axis, "scatter")
    upd = _kernel_ready(_to_work(_updates_array(updates, dtype, shape), work))
    out = _to_work(np.array(template, dtype=dtype, order="C", copy=True), work)
    if 0 not in shape:
        indices = _kernel_ready(indices)
        _plan_along(&w, out, indices, upd, shape, axis)
        j.w, j.op, j.itemsize, j.code = &w, op, work.itemsize, code
        j.idx64 = indices.itemsize == 8
        j.along, j.idx, j.dense = _ptr(out), _ptr(indices), _ptr(upd)
        if _execute(&j, out, &bad):
            _raise_bad_index("scatter", bad, axis, template.shape[axis])
    out = _to_work(out, dtype)
    return out if out.shape == out_shape else out.reshape(out_shape)
