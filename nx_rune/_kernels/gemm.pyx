# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Matrix products cut into bands of output rows run on the kernels' pool (pool.pyx), each band
one call of the BLAS's gemm without the GIL.

The gemm is SciPy's (``scipy.linalg.cython_blas``'s C entry points, Fortran order): a row-major
``C = A @ B`` is the column-major ``C^T = B^T A^T``, so each band of rows ``[lo, hi)`` of C is one
call on the matching rows of A.  Every band reads all of B (the BLAS packs it once per call), so
there is one band per thread.  Values are the gemm's own for those rows: they equal a single
call's to rounding.
"""
import numpy as np

cimport numpy as cnp

from libc.stdlib cimport free

from nx_rune._kernels.pool cimport num_threads, run_spans, span_fn
from nx_rune._kernels.scipy_blas cimport blas_entry, gemm_d, gemm_s

cdef extern from "stdlib.h" nogil:
    void *aligned_alloc(size_t alignment, size_t size)

cdef extern from "gemm_avx512.h" nogil:
    enum:
        NX_SG_MR
        NX_SG_NR
        NX_SG_KC
        NX_SG_SIMD
    ctypedef struct nx_sgemm_job:
        const float *a
        Py_ssize_t a_rs, a_cs
        const float *b
        Py_ssize_t b_rs, b_cs
        float *c
        Py_ssize_t ldc, m, n, k, kc, nkb, npanels
        float *bpack
        int failed
    void nx_sgemm_pack_b(const nx_sgemm_job *j, Py_ssize_t lo, Py_ssize_t hi)
    void nx_sgemm_rows(nx_sgemm_job *j, Py_ssize_t lo, Py_ssize_t hi)
    void nx_sgemm_cols(nx_sgemm_job *j, Py_ssize_t lo, Py_ssize_t hi)
    int nx_sgemm512_supported()

cdef extern from "gemm_avx512_f64.h" nogil:
    enum:
        NX_DG_MR
        NX_DG_NR
        NX_DG_KC
        NX_DG_SIMD
    ctypedef struct nx_dgemm_job:
        const double *a
        Py_ssize_t a_rs, a_cs
        const double *b
        Py_ssize_t b_rs, b_cs
        double *c
        Py_ssize_t ldc, m, n, k, kc, nkb, npanels
        double *bpack
        int failed
    void nx_dgemm_pack_b(const nx_dgemm_job *j, Py_ssize_t lo, Py_ssize_t hi)
    void nx_dgemm_rows(nx_dgemm_job *j, Py_ssize_t lo, Py_ssize_t hi)
    void nx_dgemm_cols(nx_dgemm_job *j, Py_ssize_t lo, Py_ssize_t hi)

cnp.import_array()

ctypedef gemm_s sgemm_t
ctypedef gemm_d dgemm_t

cdef sgemm_t _sgemm = NULL
cdef dgemm_t _dgemm = NULL
cdef bint _loaded = False


def available():
    """Whether SciPy's gemm entry points were found (loaded on first use)."""
    global _sgemm, _dgemm, _loaded
    if not _loaded:
        _loaded = True
        try:
            from scipy.linalg import cython_blas
            capi = cython_blas.__pyx_capi__
            _sgemm = <sgemm_t> blas_entry(capi, "sgemm")
            _dgemm = <dgemm_t> blas_entry(capi, "dgemm")
        except (ImportError, AttributeError, ValueError):
            _sgemm = NULL
            _dgemm = NULL
    return _sgemm != NULL and _dgemm != NULL


cdef struct Job:
    int dbl                  # float64 (else float32)
    char ta, tb              # the ops of B^T's and A^T's storage (see _operand)
    int n, k, lda, ldb, ldc
    char *a
    char *b
    char *c
    Py_ssize_t a_row, c_row  # bytes from one row of A (of C) to the next


cdef void _band(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef const Job *j = <const Job *> ctx
    cdef int m = <int> (hi - lo)
    cdef int n = j.n, k = j.k, lda = j.lda, ldb = j.ldb, ldc = j.ldc
    cdef char ta = j.ta, tb = j.tb
    cdef float s1 = 1.0, s0 = 0.0
    cdef double d1 = 1.0, d0 = 0.0
    if m <= 0:
        return
    if j.dbl:
        _dgemm(&ta, &tb, &n, &m, &k, &d1, <double *> j.b, &ldb,
               <double *> (j.a + lo * j.a_row), &lda, &d0, <double *> (j.c + lo * j.c_row), &ldc)
    else:
        _sgemm(&ta, &tb, &n, &m, &k, &s1, <float *> j.b, &ldb,
               <float *> (j.a + lo * j.a_row), &lda, &s0, <float *> (j.c + lo * j.c_row), &ldc)


cdef bint _operand(cnp.ndarray x, Py_ssize_t rows, Py_ssize_t cols, char *op, int *ld):
    """The column-major view of row-major ``x`` (rows, cols) that gemm reads for x^T: its op
    ('N': the storage is x^T; 'T': it is x) and leading dimension; False if x has neither unit
    stride (or a dimension too large for the BLAS's int)."""
    cdef Py_ssize_t item = x.itemsize
    cdef Py_ssize_t s0 = x.strides[0], s1 = x.strides[1]
    if s1 == item and s0 % item == 0 and s0 // item >= max(1, cols) and s0 // item < 2 ** 31:
        op[0] = b'N'
        ld[0] = <int> (s0 // item)
        return True
    if s0 == item and s1 % item == 0 and s1 // item >= max(1, rows) and s1 // item < 2 ** 31:
        op[0] = b'T'
        ld[0] = <int> (s1 // item)
        return True
    return False


cdef int _avx512 = -1


def avx512_available():
    """Whether this CPU (and build) runs the packed AVX-512 float32 product (checked once)."""
    global _avx512
    if _avx512 < 0:
        _avx512 = 1 if NX_SG_SIMD and nx_sgemm512_supported() else 0
    return _avx512 == 1


cdef void _pack_b_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    nx_sgemm_pack_b(<const nx_sgemm_job *> ctx, lo, hi)


cdef void _rows_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    nx_sgemm_rows(<nx_sgemm_job *> ctx, lo, hi)


cdef void _cols_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    nx_sgemm_cols(<nx_sgemm_job *> ctx, lo, hi)


cdef void _cols_span_d(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    nx_dgemm_cols(<nx_dgemm_job *> ctx, lo, hi)


# How a threaded packed product is cut (0: by the rule in _cut_by_columns; 1: rows; 2:
# columns; a test hook sets it, see _set_cut)
cdef int _cut = 0


def _set_cut(int mode):
    """Test hook: cut threaded packed products by rule (0), by rows (1) or by columns (2);
    returns the previous mode."""
    global _cut
    if mode not in (0, 1, 2):
        raise ValueError(f"mode: must be 0, 1 or 2, got {mode}")
    previous = _cut
    _cut = mode
    return previous


cdef bint _cut_by_columns(Py_ssize_t npanels, Py_ssize_t threads) noexcept:
    """Whether a product on ``threads`` threads is cut by B's panels (each thread packs the
    panels it multiplies, which stay in its cache) rather than by C's rows (B packed by all
    threads, then read whole by each: half of it from the other core's cache).  By columns
    whenever each thread gets two spans of panels.  On the 2-core machine, best of 3 rounds
    in one run, rows -> columns: (128, 784) @ (784, 256) float32 125 -> 116 us (one thread
    218), (8, 784) @ (784, 256) 28 -> 21 (35), float64 234 -> 218 and 49 -> 38; 512^3 and
    the MLP's weight gradient 1-5 % faster.  Both cuts give the same bits."""
    if _cut:
        return _cut == 2
    return npanels >= 2 * threads


cdef void _pack_b_span_d(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    nx_dgemm_pack_b(<const nx_dgemm_job *> ctx, lo, hi)


cdef void _rows_span_d(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    nx_dgemm_rows(<nx_dgemm_job *> ctx, lo, hi)


cdef bint _element_strides(cnp.ndarray x, Py_ssize_t *rs, Py_ssize_t *cs):
    cdef Py_ssize_t item = x.itemsize
    if x.strides[0] % item or x.strides[1] % item:
        return False
    rs[0] = x.strides[0] // item
    cs[0] = x.strides[1] // item
    return True


cdef bint _packed_operands(cnp.ndarray a, cnp.ndarray b, cnp.ndarray out, int typenum):
    """Whether 2-D ``a`` (m, k), ``b`` (k, n) and ``out`` (m, n) suit the packed kernels: all of
    native dtype ``typenum``, nothing empty, ``out`` C-contiguous, writeable and apart from both
    operands, element strides everywhere."""
    cdef Py_ssize_t rs, cs
    if a.ndim != 2 or b.ndim != 2 or out.ndim != 2:
        return False
    if a.dtype.num != typenum or b.dtype.num != typenum or out.dtype.num != typenum:
        return False
    if not (a.dtype.isnative and b.dtype.isnative and out.dtype.isnative):
        return False
    m, k = a.shape[0], a.shape[1]
    n = b.shape[1]
    if b.shape[0] != k or out.shape[0] != m or out.shape[1] != n or m == 0 or n == 0 or k == 0:
        return False
    if not cnp.PyArray_IS_C_CONTIGUOUS(out) or not cnp.PyArray_ISWRITEABLE(out):
        return False
    if np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return False
    return _element_strides(a, &rs, &cs) and _element_strides(b, &rs, &cs)


cdef void _run_phases(void *job, Py_ssize_t npanels, Py_ssize_t nmp, Py_ssize_t threads,
                      span_fn cols, span_fn pack_b, span_fn rows) noexcept:
    """A packed product's work on ``threads`` threads of the pool (``npanels`` panels of B,
    ``nmp`` micro-panels of C's rows): cut by columns (``cols``: each span packs its panels
    and multiplies every row by them, see _cut_by_columns), or B packed (``pack_b``) then a
    few groups of rows a thread (``rows``), so that one the scheduler holds up is taken over."""
    cdef Py_ssize_t count, step
    threads = max(1, threads)
    if threads > 1 and _cut_by_columns(npanels, threads):
        count = min(npanels, 2 * threads)
        step = (npanels + count - 1) // count
        run_spans(cols, job, npanels, step, (npanels + step - 1) // step, threads)
        return
    count = min(threads, npanels)
    step = (npanels + count - 1) // count
    run_spans(pack_b, job, npanels, step, (npanels + step - 1) // step, threads)
    count = min(nmp, 2 * threads) if threads > 1 else 1
    step = (nmp + count - 1) // count
    run_spans(rows, job, nmp, step, (nmp + step - 1) // step, threads)


def matmul_f64_packed(cnp.ndarray a, cnp.ndarray b, cnp.ndarray out, Py_ssize_t threads):
    """``out[...] = a @ b`` for 2-D float64 operands, as ``matmul_f32_packed`` does it for
    float32 (gemm_avx512_f64.h: 8 x 16 tiles of doubles): False (nothing promised about
    ``out``) when the CPU lacks AVX-512, the operands do not suit or a buffer could not be
    allocated."""
    cdef nx_dgemm_job job
    cdef Py_ssize_t m, k, n, size
    if not avx512_available() or not NX_DG_SIMD:
        return False
    if not _packed_operands(a, b, out, cnp.NPY_FLOAT64):
        return False
    _element_strides(a, &job.a_rs, &job.a_cs)
    _element_strides(b, &job.b_rs, &job.b_cs)
    m, k = a.shape[0], a.shape[1]
    n = b.shape[1]
    job.a = <const double *> cnp.PyArray_DATA(a)
    job.b = <const double *> cnp.PyArray_DATA(b)
    job.c = <double *> cnp.PyArray_DATA(out)
    job.ldc, job.m, job.n, job.k = n, m, n, k
    job.nkb = (k + NX_DG_KC - 1) // NX_DG_KC
    job.kc = (k + job.nkb - 1) // job.nkb
    job.npanels = (n + NX_DG_NR - 1) // NX_DG_NR
    job.failed = 0
    size = job.nkb * job.kc * job.npanels * NX_DG_NR * sizeof(double)
    job.bpack = <double *> aligned_alloc(64, (size + 63) // 64 * 64)
    if job.bpack == NULL:
        return False
    try:
        _run_phases(&job, job.npanels, (m + NX_DG_MR - 1) // NX_DG_MR, threads,
                    _cols_span_d, _pack_b_span_d, _rows_span_d)
    finally:
        free(job.bpack)
    return not job.failed


def matmul_f32_packed(cnp.ndarray a, cnp.ndarray b, cnp.ndarray out, Py_ssize_t threads):
    """``out[...] = a @ b`` for 2-D float32 ``a`` (m, k), ``b`` (k, n) of any strides and a
    C-contiguous float32 ``out`` (m, n), by the packed AVX-512 kernel (gemm_avx512.h) on
    ``threads`` threads of the kernels' pool: B is packed once (its panels shared between the
    threads), then each thread takes groups of rows of C.  Returns False (nothing promised
    about ``out``) when the CPU lacks AVX-512, the operands do not suit (dtype, shapes,
    overlap with out) or a buffer could not be allocated: the caller then uses NumPy."""
    cdef nx_sgemm_job job
    cdef Py_ssize_t m, k, n, size
    if not avx512_available() or a.ndim != 2 or b.ndim != 2 or out.ndim != 2:
        return False
    f32 = cnp.NPY_FLOAT32
    if a.dtype.num != f32 or b.dtype.num != f32 or out.dtype.num != f32:
        return False
    if not (a.dtype.isnative and b.dtype.isnative and out.dtype.isnative):
        return False
    m, k = a.shape[0], a.shape[1]
    n = b.shape[1]
    if b.shape[0] != k or out.shape[0] != m or out.shape[1] != n or m == 0 or n == 0 or k == 0:
        return False
    if not cnp.PyArray_IS_C_CONTIGUOUS(out) or not cnp.PyArray_ISWRITEABLE(out):
        return False
    if np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return False
    if not _element_strides(a, &job.a_rs, &job.a_cs) or \
            not _element_strides(b, &job.b_rs, &job.b_cs):
        return False
    job.a = <const float *> cnp.PyArray_DATA(a)
    job.b = <const float *> cnp.PyArray_DATA(b)
    job.c = <float *> cnp.PyArray_DATA(out)
    job.ldc, job.m, job.n, job.k = n, m, n, k
    job.nkb = (k + NX_SG_KC - 1) // NX_SG_KC
    job.kc = (k + job.nkb - 1) // job.nkb            # even blocks: 784 is 4 x 196
    job.npanels = (n + NX_SG_NR - 1) // NX_SG_NR
    job.failed = 0
    size = job.nkb * job.kc * job.npanels * NX_SG_NR * sizeof(float)
    job.bpack = <float *> aligned_alloc(64, (size + 63) // 64 * 64)
    if job.bpack == NULL:
        return False
    try:
        _run_phases(&job, job.npanels, (m + NX_SG_MR - 1) // NX_SG_MR, threads,
                    _cols_span, _pack_b_span, _rows_span)
    finally:
        free(job.bpack)
    return not job.failed


# the packed kernel's routing (the jit's products and the eager matmul): from this many
# multiply-adds (below, NumPy's call costs less than the packing), on one thread below
# PACKED_THREADED_MACS, and only with at least PACKED_MIN_N columns (tiles are 32 wide, a last
# panel of at most 16 columns takes the narrow tile: with fewer than 10 columns OpenBLAS's
# call is faster)
PACKED_MIN_MACS = 1 << 16
PACKED_THREADED_MACS = 1 << 21
PACKED_MIN_N = 10


def packed_worth(Py_ssize_t m, Py_ssize_t k, Py_ssize_t n):
    """Whether a float32 product (m, k) @ (k, n) goes to the packed kernel (see above)."""
    return avx512_available() and n >= PACKED_MIN_N and m * k * n >= PACKED_MIN_MACS


def matmul_f32(cnp.ndarray a, cnp.ndarray b, out=None):
    """``a @ b`` for 2-D float32 ``a`` (m, k) and ``b`` (k, n) by the packed kernel on the
    pool's threads (one thread for small products) when ``packed_worth``, into ``out`` (a
    C-contiguous (m, n) float32 array) or a new array; None when not taken (the caller uses
    NumPy)."""
    cdef Py_ssize_t m, k, n
    if a.ndim != 2 or b.ndim != 2:
        return None
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    if not packed_worth(m, k, n):
        return None
    dst = np.empty((m, n), np.float32) if out is None else out
    threads = num_threads() if m * k * n >= PACKED_THREADED_MACS else 1
    return dst if matmul_f32_packed(a, b, dst, threads) else None


# the float64 kernel's routing (PACKED_MIN_MACS and PACKED_THREADED_MACS as for float32): its
# tiles are 16 wide and a last panel of at most 8 columns takes the narrow tile, so from 8
# columns on it beats OpenBLAS's AVX2 call (128 x 256 @ 256 x 10: about 2x on one thread)
PACKED_F64_MIN_N = 8


def packed_f64_worth(Py_ssize_t m, Py_ssize_t k, Py_ssize_t n):
    """Whether a float64 product (m, k) @ (k, n) goes to the packed kernel (see above)."""
    return avx512_available() and n >= PACKED_F64_MIN_N and m * k * n >= PACKED_MIN_MACS


def matmul_f64(cnp.ndarray a, cnp.ndarray b, out=None):
    """``a @ b`` for 2-D float64 ``a`` (m, k) and ``b`` (k, n) by the packed float64 kernel on
    the pool's threads (one thread for small products) when ``packed_f64_worth``, into ``out``
    (a C-contiguous (m, n) float64 array) or a new array; None when not taken (the caller uses
    NumPy)."""
    cdef Py_ssize_t m, k, n
    if a.ndim != 2 or b.ndim != 2:
        return None
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    if not packed_f64_worth(m, k, n):
        return None
    dst = np.empty((m, n), np.float64) if out is None else out
    threads = num_threads() if m * k * n >= PACKED_THREADED_MACS else 1
    return dst if matmul_f64_packed(a, b, dst, threads) else None


def matmul_bands(cnp.ndarray a, cnp.ndarray b, cnp.ndarray out, Py_ssize_t threads):
    """``out[...] = a @ b`` for 2-D float32/float64 ``a`` (m, k), ``b`` (k, n) and a C-contiguous
    ``out`` (m, n) of their dtype, in ``threads`` bands of rows run on the kernels' pool.
    Returns False (nothing written) when the operands do not suit gemm (dtype, layout,
    sizes, overlap with out, gemm not found): the caller then uses NumPy."""
    cdef Job job
    cdef Py_ssize_t m, k, n, step
    if not available() or a.ndim != 2 or b.ndim != 2 or out.ndim != 2:
        return False
    dt = a.dtype
    if b.dtype != dt or out.dtype != dt or dt.num not in (cnp.NPY_FLOAT32, cnp.NPY_FLOAT64):
        return False
    if not dt.isnative or not b.dtype.isnative or not out.dtype.isnative:
        return False
    m, k = a.shape[0], a.shape[1]
    n = b.shape[1]
    if b.shape[0] != k or out.shape[0] != m or out.shape[1] != n or m == 0 or n == 0 or k == 0:
        return False
    if max(m, n, k) >= 2 ** 31 or not cnp.PyArray_IS_C_CONTIGUOUS(out):
        return False
    if not cnp.PyArray_ISWRITEABLE(out) or np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return False
    if not _operand(b, k, n, &job.ta, &job.ldb) or not _operand(a, m, k, &job.tb, &job.lda):
        return False
    job.dbl = dt.num == cnp.NPY_FLOAT64
    job.n, job.k, job.ldc = <int> n, <int> k, <int> n
    job.a, job.b, job.c = <char *> cnp.PyArray_DATA(a), <char *> cnp.PyArray_DATA(b), \
        <char *> cnp.PyArray_DATA(out)
    job.a_row, job.c_row = a.strides[0], out.strides[0]
    threads = max(1, min(threads, m))
    step = (m + threads - 1) // threads
    run_spans(_band, &job, m, step, (m + step - 1) // step, threads)
    return True
