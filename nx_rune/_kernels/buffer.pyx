"""Typed, 64-byte aligned memory for every nx_rune dtype, zero-copy with NumPy.

A Buffer is a flat run of ``size`` items of one dtype.  It either owns memory it allocated
(aligned to 64 bytes) or wraps the memory of a C-contiguous ndarray, which it keeps alive.
NumPy arrays made from a Buffer (``as_ndarray``) keep the Buffer alive in turn, through
``ndarray.base``.
"""
from cpython.buffer cimport PyBUF_WRITABLE
from cpython.mem cimport PyMem_RawCalloc, PyMem_RawFree, PyMem_RawMalloc
from libc.stdint cimport uintptr_t

cimport numpy as cnp
import os

import numpy as np

cnp.import_array()

DEF ALIGNMENT = 64
DEF HUGE_PAGE_HINT = 4194304   # 4 MiB: from this size on, ask for transparent huge pages

cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    #include <stdint.h>
    /* Ask the kernel to back a large allocation with transparent huge pages (as NumPy does):
       with THP in "madvise" mode, this turns the 16k page faults of the first touch of a
       64 MiB buffer into 32, which is most of the cost of a fresh copy.  A no-op elsewhere. */
    static void nx_advise_huge_pages(void *p, size_t n) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
        if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
    #else
        (void)p; (void)n;
    #endif
    }
    """
    void nx_advise_huge_pages(void* p, size_t n) nogil

SUPPORTED_DTYPES = tuple(np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))
_SUPPORTED = frozenset(SUPPORTED_DTYPES)


def check_dtype(dtype, name="dtype"):
    """Return ``numpy.dtype(dtype)`` if nx_rune supports it, else raise TypeError naming ``name``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}: {dtype!r} is not a dtype") from None
    if dt.byteorder == ">" or (dt.byteorder == "=" and not dt.isnative):
        dt = dt.newbyteorder("=")
    if dt not in _SUPPORTED:
        raise TypeError(f"{name}: dtype {dt} is not supported by nx_rune "
                        f"(supported: {', '.join(str(d) for d in SUPPORTED_DTYPES)})")
    return dt


cdef class Buffer:
    """Flat typed memory: ``Buffer(size, dtype, zero=False)`` allocates ``size`` items."""

    def __cinit__(self, *args, **kwargs):
        self._raw = NULL
        self.data = NULL
        self.size = 0
        self.readonly = False
        self.owner = None

    def __init__(self, Py_ssize_t size, dtype, bint zero=False):
        dt = check_dtype(dtype)
        if size < 0:
            raise ValueError(f"size: must be >= 0, got {size}")
        if self._raw != NULL or self.owner is not None:
            raise RuntimeError("Buffer is already initialised")
        self.dtype = dt
        self.itemsize = dt.itemsize
        if size > (<Py_ssize_t>0x7FFFFFFFFFFFFFFF - ALIGNMENT) // self.itemsize:
            raise MemoryError(f"size: {size} items of {dt} do not fit in memory")
        cdef size_t nbytes = <size_t>(size * self.itemsize + ALIGNMENT)
        self._raw_bytes = nbytes
        if not zero:
            self._raw = _take_cached(&self._raw_bytes)
        if self._raw == NULL:
            if zero:
                self._raw = PyMem_RawCalloc(nbytes, 1)
            else:
                self._raw = PyMem_RawMalloc(nbytes)
            if self._raw == NULL:
                raise MemoryError(f"could not allocate {nbytes} bytes for {size} items of {dt}")
            if nbytes >= HUGE_PAGE_HINT:
                nx_advise_huge_pages(self._raw, nbytes)
        cdef uintptr_t p = <uintptr_t>self._raw
        self.data = <char*>((p + ALIGNMENT - 1) & ~(<uintptr_t>(ALIGNMENT - 1)))
        self.size = size

    def __dealloc__(self):
        if self._raw != NULL:
            _give_back(self._raw, self._raw_bytes)
            self._raw = NULL

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def address(self):
        """Address of the first byte (for tests of alignment and sharing)."""
        return <uintptr_t>self.data

    def __getbuffer__(self, Py_buffer* view, int flags):
        if self.readonly and (flags & PyBUF_WRITABLE):
            raise BufferError("this Buffer is read-only")
        view.buf = self.data
        view.obj = self
        view.len = self.size * self.itemsize
        view.readonly = self.readonly
        view.itemsize = 1
        view.format = "B"
        view.ndim = 1
        view.shape = &view.len
        view.strides = &view.itemsize
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __repr__(self):
        return f"Buffer(size={self.size}, dtype={self.dtype})"

    def as_ndarray(self, shape, strides, Py_ssize_t offset=0):
        """An ndarray over this memory: ``strides`` and ``offset`` in elements.

        The caller guarantees that every element lies inside the buffer (View checks it).
        """
        cdef Py_ssize_t isz = self.itemsize
        byte_strides = tuple([s * isz for s in strides])
        # an empty view touches no memory (its offset may even lie outside the buffer: an
        # empty shrink of a padded view), so it does not need the buffer
        if self.size == 0 or 0 in shape:
            if 0 not in shape:   # elements to read, but no memory: refuse (not _EMPTY's item)
                raise ValueError(f"shape: {tuple(shape)} has elements but the buffer is empty")
            return np.ndarray(shape, self.dtype, buffer=_EMPTY[self.dtype.kind, self.dtype.itemsize],
                              strides=byte_strides)
        # Checked here, exactly: NumPy's own check of a buffer's extent overflows for huge
        # strides (shape (1, 2**32 + 1), strides (1, 2**31) passes it).
        if not _within(self.size, shape, strides, offset):
            raise ValueError(f"shape {tuple(shape)} with strides {tuple(strides)} and offset "
                             f"{offset} reaches outside the buffer of {self.size} elements")
        arr = np.ndarray(shape, self.dtype, buffer=self, offset=offset * isz, strides=byte_strides)
        return arr


# ---------------------------------------------------------------------------------------------
# Large blocks are kept for reuse.  The first touch of fresh memory is a page fault per page
# (per 2 MiB huge page with the hint above) in which the kernel zeroes it: for a 64 MiB output
# that is ~3 ms on top of the ~3 ms its values take to write, and when two threads of the pool
# fault at once the time swings from run to run by several times.  A loop that makes an output
# of the same size on every step (a draw, a copy, an update) then frees the last one gets the
# last one's block back, already mapped.  Only blocks from CACHE_MIN_BYTES are kept, at most
# CACHE_SLOTS of them and _cache_limit bytes in all (env NX_RUNE_BUFFER_CACHE_MB, default 256;
# 0 turns it off); the oldest goes first.  Zeroed buffers (calloc's fresh pages are zero
# already) never take a cached block.  All of it runs under the GIL (Buffer's own methods).
# ---------------------------------------------------------------------------------------------

DEF CACHE_SLOTS = 4
DEF CACHE_MIN_BYTES = 4194304

cdef void* _cache_ptr[CACHE_SLOTS]
cdef size_t _cache_len[CACHE_SLOTS]
cdef unsigned long long _cache_age[CACHE_SLOTS]
cdef unsigned long long _cache_clock = 0
cdef size_t _cache_total = 0


def _default_cache_limit():
    env = os.environ.get("NX_RUNE_BUFFER_CACHE_MB")
    if env:
        try:
            mb = int(env)
        except ValueError:
            raise ValueError(f"NX_RUNE_BUFFER_CACHE_MB: expected a whole number of MiB, got "
                             f"{env!r}") from None
        return max(mb, 0) << 20
    return 256 << 20


cdef size_t _cache_limit = _default_cache_limit()
for _k in range(CACHE_SLOTS):
    _cache_ptr[_k] = NULL
    _cache_len[_k] = 0


cdef void* _take_cached(size_t* length) noexcept:
    """A kept block of at least ``length[0]`` bytes and at most an eighth more (its length
    then in ``length[0]``), or NULL."""
    global _cache_total
    cdef int k, best = -1
    cdef size_t nbytes = length[0]
    if nbytes < CACHE_MIN_BYTES:
        return NULL
    for k in range(CACHE_SLOTS):
        if (_cache_ptr[k] != NULL and nbytes <= _cache_len[k] <= nbytes + nbytes // 8
                and (best < 0 or _cache_len[k] < _cache_len[best])):
            best = k
    if best < 0:
        return NULL
    cdef void* p = _cache_ptr[best]
    _cache_ptr[best] = NULL
    _cache_total -= _cache_len[best]
    length[0] = _cache_len[best]
    return p


cdef void _give_back(void* raw, size_t nbytes) noexcept:
    """Keep ``raw`` (``nbytes`` long) for reuse, or free it."""
    global _cache_total, _cache_clock
    cdef int k, slot
    if nbytes < CACHE_MIN_BYTES or nbytes > _cache_limit:
        PyMem_RawFree(raw)
        return
    while True:                   # make room: the oldest blocks go first
        slot = -1
        for k in range(CACHE_SLOTS):
            if _cache_ptr[k] == NULL:
                slot = k
                break
        if slot >= 0 and _cache_total + nbytes <= _cache_limit:
            break
        _free_oldest()
    _cache_clock += 1
    _cache_ptr[slot] = raw
    _cache_len[slot] = nbytes
    _cache_age[slot] = _cache_clock
    _cache_total += nbytes


def cached_bytes():
    """Bytes of freed large buffers kept for reuse (see ``set_cache_limit``)."""
    return _cache_total


def set_cache_limit(Py_ssize_t nbytes):
    """Keep at most ``nbytes`` of freed large buffers (4 MiB and more) for reuse; 0 keeps none
    and frees what is kept (env ``NX_RUNE_BUFFER_CACHE_MB`` sets the start value, in MiB).
    Returns the previous limit."""
    global _cache_limit
    if nbytes < 0:
        raise ValueError(f"nbytes: must be >= 0, got {nbytes}")
    previous = _cache_limit
    _cache_limit = <size_t>nbytes
    _trim()
    return previous


def clear_cache():
    """Free every kept buffer block (the memory goes back to the allocator)."""
    cdef size_t saved = _cache_limit
    set_cache_limit(0)
    set_cache_limit(saved)


def empty(shape, dtype):
    """``numpy.empty(shape, dtype)`` for a kernel's output (``shape`` an int or a tuple of ints): from
    CACHE_MIN_BYTES on, its memory is a Buffer's, so it can reuse a kept block (and goes back
    to the cache with the last array over it)."""
    dt = np.dtype(dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    cdef Py_ssize_t n = 1
    for d in shape:
        n *= <Py_ssize_t>d
    if n * dt.itemsize < CACHE_MIN_BYTES:
        return np.empty(shape, dt)
    return np.ndarray(shape, dt, buffer=Buffer(n, dt))


cdef void _trim() noexcept:
    while _cache_total > _cache_limit:
        _free_oldest()


cdef void _free_oldest() noexcept:
    """Free the block kept longest (there is one)."""
    global _cache_total
    cdef int k, oldest = -1
    for k in range(CACHE_SLOTS):
        if _cache_ptr[k] != NULL and (oldest < 0 or _cache_age[k] < _cache_age[oldest]):
            oldest = k
    PyMem_RawFree(_cache_ptr[oldest])
    _cache_total -= _cache_len[oldest]
    _cache_ptr[oldest] = NULL


# keyed by kind and size, not by dtype.char: NumPy has two chars for some dtypes (uint64 is
# 'L' and 'Q' on LP64: np.asarray([2**63]) makes a 'Q' one)
_EMPTY = {(dt.kind, dt.itemsize): np.empty(1, dt) for dt in SUPPORTED_DTYPES}


cdef bint _within(Py_ssize_t size, shape, strides, Py_ssize_t offset) except -1:
    """True when every element ``offset + sum(i[k] * strides[k])`` of a non-empty ``shape``
    lies in [0, size).  Exact: no intermediate value can overflow."""
    cdef Py_ssize_t lo = offset, hi = offset, n, s
    if offset < 0 or offset >= size or len(shape) != len(strides):
        return False
    for n_obj, s_obj in zip(shape, strides):
        n = n_obj
        if n <= 1:
            continue
        s = s_obj
        n -= 1
        if s > 0:
            if n > (size - 1 - hi) // s:
                return False
            hi += n * s
        elif s < 0:
            if s < -size or n > lo // (-s):
                return False
            lo += n * s
    return True


def addressable(arr):
    """Whether the ndarray ``arr`` can be seen as elements of a Buffer of its dtype without a
    copy: native byte order, its first byte aligned as its dtype needs (the kernels read items
    through typed pointers, which misaligned memory would fault or tear), and every stride of
    an axis longer than 1 a whole number of items (a View counts in items, not bytes).  An
    ndarray that ``np.frombuffer(b, offset=2)``, a field of a packed structured array or
    ``a.view(dtype)`` at an odd byte makes is not: it must be copied to become a tensor."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"arr: expected a numpy.ndarray, got {type(arr).__name__}")
    return _addressable(<cnp.ndarray>arr)


cdef bint _addressable(cnp.ndarray arr) except -1:
    cdef int k, nd = cnp.PyArray_NDIM(arr)
    cdef cnp.npy_intp* shape = cnp.PyArray_DIMS(arr)
    cdef cnp.npy_intp* strides = cnp.PyArray_STRIDES(arr)
    cdef cnp.dtype dt = <cnp.dtype>cnp.PyArray_DESCR(arr)
    cdef Py_ssize_t isz = dt.itemsize, align = dt.alignment
    if isz <= 0 or not cnp.PyArray_ISNOTSWAPPED(arr):
        return False
    if align > 1 and (<uintptr_t>cnp.PyArray_DATA(arr)) % <uintptr_t>align != 0:
        return False
    for k in range(nd):
        if shape[k] > 1 and strides[k] % isz != 0:
            return False
    return True


def buffer_from_ndarray(arr):
    """Wrap the memory of a C-contiguous ndarray (no copy); the Buffer keeps ``arr`` alive.

    A byte-swapped ``arr`` is converted (a copy); ValueError when its memory is misaligned for
    its dtype (see ``addressable``), which the kernels could not read safely."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"arr: expected a numpy.ndarray, got {type(arr).__name__}")
    if not arr.flags.c_contiguous:
        raise ValueError("arr: must be C-contiguous to be wrapped without a copy")
    dt = check_dtype(arr.dtype, "arr")
    if dt != arr.dtype:
        arr = arr.astype(dt)
    if not _addressable(<cnp.ndarray>arr):
        raise ValueError(f"arr: its memory (address {arr.__array_interface__['data'][0]:#x}) "
                         f"is not aligned for {arr.dtype} (its items could not be read "
                         f"safely); copy it first (np.array(arr))")
    cdef Buffer buf = Buffer.__new__(Buffer)
    buf.dtype = dt
    buf.itemsize = dt.itemsize
    buf.size = arr.size
    buf.owner = arr
    buf.readonly = not arr.flags.writeable
    buf.data = <char*>cnp.PyArray_DATA(arr)
    return buf


def empty_buffer(Py_ssize_t size, dtype):
    """A new, uninitialised Buffer of ``size`` items."""
    return Buffer(size, dtype)


def zeros_buffer(Py_ssize_t size, dtype):
    """A new Buffer of ``size`` zero items (calloc: the OS hands out zero pages lazily)."""
    return Buffer(size, dtype, True)
