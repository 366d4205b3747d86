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

cimport numpy as cnp
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t)
from libc.string cimport memcpy, memset

from nx_rune._kernels._types cimport index_t, item16_t, item_t, numeric_t, real_t
from nx_rune._kernels.pool cimport num_threads, pool_has_threads, run_spans

cnp.import_array()

_MODES = {"set": MODE_SET, "add": MODE_ADD, "mul": MODE_MUL, "max": MODE_MAX, "min": MODE_MIN}
_INT64_MAX = np.iinfo(np.int64).max


# ----------------------------------------------------------------------------------------
# nogil kernels
# ----------------------------------------------------------------------------------------

cdef struct Cursor:
    Py_ssize_t count[MAX_DIMS]
    Py_ssize_t off[3]


cdef inline void _advance(Cursor* c, const Walk* w) noexcept nogil:
    """Step the odometer over the outer dimensions (all but the last) by one row."""
    cdef int d = w.ndim - 2
    cdef int k
    while d >= 0:
        c.count[d] += 1
        for k in range(3):
            c.off[k] += w.strides[k][d]
        if c.count[d] < w.shape[d]:
            return
        for k in range(3):
            c.off[k] -= w.strides[k][d] * w.shape[d]
        c.count[d] = 0
        d -= 1


cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef inline bint _inner_contiguous(const Walk* w) noexcept nogil:
    cdef int last = w.ndim - 1
    return w.strides[OP_INDEX][last] == 1 and w.strides[OP_DENSE][last] == 1


cdef inline Py_ssize_t _wrap(Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """k + n for negative k.  The caller then checks 0 <= k < n with one unsigned comparison.
    Written as a select, which GCC makes a conditional move (lea, test, cmov): no branch for
    random signs to mispredict, and one operation shorter on the way to the address than the
    masked form k + (n & -(k < 0))."""
    return k + n if k < 0 else k


cdef enum:
    NEGATIVE_SWITCH = 32    # negative indices a row takes on the side branch, see _accum_row


cdef inline bint _any_bad4(Py_ssize_t k0, Py_ssize_t k1, Py_ssize_t k2, Py_ssize_t k3,
                           Py_ssize_t n) noexcept nogil:
    """Whether any of four wrapped indices is outside [0, n): one branch for four."""
    return ((<size_t>k0 >= <size_t>n) | (<size_t>k1 >= <size_t>n) | (<size_t>k2 >= <size_t>n)
            | (<size_t>k3 >= <size_t>n))


# Each row kernel is called by its walk with literal unit strides for the index and dense
# operands where they are contiguous (after inlining, the compiler drops the multiplications:
# the fast path for contiguous inner loops), and with the general strides otherwise.  gather
# and set also have the innermost case of all, the axis being the last and contiguous one.

cdef inline int _gather_row(const item_t* src, const index_t* idx, item_t* out, Py_ssize_t m,
                            Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si, Py_ssize_t sa,
                            Py_ssize_t sd, int64_t* bad) noexcept nogil:
    cdef Py_ssize_t j = 0, k, k0, k1, k2, k3
    # Four at a time with one check (the loop exits at a group with a bad index; the loop
    # after it reports the first bad one), then the rest one by one.  The first loop takes
    # non-negative indices as they are; from the first group with a negative one on, the
    # second wraps each (a conditional move on the way to every address: measured in a C
    # test of the two loops, 512 rows of 256 float64, 54-55 us wrapped, 39-41 us not).
    while j + 4 <= m:
        k0 = idx[j * si]
        k1 = idx[(j + 1) * si]
        k2 = idx[(j + 2) * si]
        k3 = idx[(j + 3) * si]
        if _any_bad4(k0, k1, k2, k3, n):
            break
        out[j * sd] = src[j * sa + k0 * ax]
        out[(j + 1) * sd] = src[(j + 1) * sa + k1 * ax]
        out[(j + 2) * sd] = src[(j + 2) * sa + k2 * ax]
        out[(j + 3) * sd] = src[(j + 3) * sa + k3 * ax]
        j += 4
    while j + 4 <= m:
        k0 = _wrap(idx[j * si], n)
        k1 = _wrap(idx[(j + 1) * si], n)
        k2 = _wrap(idx[(j + 2) * si], n)
        k3 = _wrap(idx[(j + 3) * si], n)
        if _any_bad4(k0, k1, k2, k3, n):
            break
        out[j * sd] = src[j * sa + k0 * ax]
        out[(j + 1) * sd] = src[(j + 1) * sa + k1 * ax]
        out[(j + 2) * sd] = src[(j + 2) * sa + k2 * ax]
        out[(j + 3) * sd] = src[(j + 3) * sa + k3 * ax]
        j += 4
    while j < m:
        k = _wrap(idx[j * si], n)
        if <size_t>k >= <size_t>n:
            bad[0] = idx[j * si]
            return 1
        out[j * sd] = src[j * sa + k * ax]
        j += 1
    return 0


cdef inline void _prefetch_span(const void* p, Py_ssize_t nbytes) noexcept nogil:
    cdef Py_ssize_t b
    for b in range(0, nbytes, 64):
        __builtin_prefetch(<const char*>p + b)


# AVX2 rows of gather (x86-64 with GCC or Clang; chosen at run time), for 4- and 8-byte items
# of a contiguous row (sa = 0: the axis is the contiguous one; sa = 1: the columns of the
# other axis).  Each group of indices is wrapped and checked in vector registers: a bad index
# is replaced by 0 for the hardware gather (no stray read), recorded, and the function returns
# 1, after which the scalar row reports the first bad index; so each index is checked once.
# The callers guarantee 1 <= n, 1 <= ax, n * ax + m <= 2**31 - 1 (32-bit products).
cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #include <immintrin.h>
    #define NX_GATHER_SIMD 1

    #define NX_GATHER_TARGET __attribute__((target("avx2")))

    /* 4 int64 indices: wrapped, bad lanes zeroed and or-ed into *bad, times ax plus j*sa */
    NX_GATHER_TARGET static inline __m256i nx_gather_lanes4(__m256i k, __m256i vn, __m256i vnm1,
                                                            __m256i vax, int unit_ax,
                                                            __m256i vjsa, __m256i *bad) {
        const __m256i zero = _mm256_setzero_si256();
        __m256i kb;
        k = _mm256_add_epi64(k, _mm256_and_si256(_mm256_cmpgt_epi64(zero, k), vn));
        kb = _mm256_or_si256(_mm256_cmpgt_epi64(k, vnm1), _mm256_cmpgt_epi64(zero, k));
        *bad = _mm256_or_si256(*bad, kb);
        k = _mm256_andnot_si256(kb, k);
        if (!unit_ax)
            k = _mm256_mul_epu32(k, vax);
        return _mm256_add_epi64(k, vjsa);
    }

    #define NX_GATHER_SETUP \
        const __m256i vn = _mm256_set1_epi64x(n), vnm1 = _mm256_set1_epi64x(n - 1); \
        const __m256i vax = _mm256_set1_epi64x(ax); \
        const __m256i vstep = _mm256_set1_epi64x(4 * sa); \
        __m256i vjsa = _mm256_setr_epi64x(0, sa, 2 * sa, 3 * sa); \
        __m256i bad = _mm256_setzero_si256(); \
        const int unit_ax = ax == 1; \
        Py_ssize_t j = 0;

    /* the scalar tail (and the result): 1 if any index was outside [-n, n) */
    #define NX_GATHER_TAIL \
        for (; j < m; j++) { \
            Py_ssize_t k = idx[j] < 0 ? idx[j] + n : idx[j]; \
            if ((size_t)k >= (size_t)n) \
                return 1; \
            out[j] = src[j * sa + k * ax]; \
        } \
        return !_mm256_testz_si256(bad, bad);

    NX_GATHER_TARGET static int nx_gather_q_q(const uint64_t *src, const int64_t *idx,
                                              uint64_t *out, Py_ssize_t m, Py_ssize_t n,
                                              Py_ssize_t ax, Py_ssize_t sa) {
        NX_GATHER_SETUP
        for (; j + 4 <= m; j += 4) {
            __m256i k = _mm256_loadu_si256((const __m256i *)(idx + j));
            k = nx_gather_lanes4(k, vn, vnm1, vax, unit_ax, vjsa, &bad);
            _mm256_storeu_si256((__m256i *)(out + j),
                                _mm256_i64gather_epi64((const long long *)src, k, 8));
            vjsa = _mm256_add_epi64(vjsa, vstep);
        }
        NX_GATHER_TAIL
    }

    NX_GATHER_TARGET static int nx_gather_q_d(const uint64_t *src, const int32_t *idx,
                                              uint64_t *out, Py_ssize_t m, Py_ssize_t n,
                                              Py_ssize_t ax, Py_ssize_t sa) {
        NX_GATHER_SETUP
        for (; j + 4 <= m; j += 4) {
            __m256i k = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(idx + j)));
            k = nx_gather_lanes4(k, vn, vnm1, vax, unit_ax, vjsa, &bad);
            _mm256_storeu_si256((__m256i *)(out + j),
                                _mm256_i64gather_epi64((const long long *)src, k, 8));
            vjsa = _mm256_add_epi64(vjsa, vstep);
        }
        NX_GATHER_TAIL
    }

    NX_GATHER_TARGET static int nx_gather_d_q(const uint32_t *src, const int64_t *idx,
                                              uint32_t *out, Py_ssize_t m, Py_ssize_t n,
                                              Py_ssize_t ax, Py_ssize_t sa) {
        NX_GATHER_SETUP
        for (; j + 4 <= m; j += 4) {
            __m256i k = _mm256_loadu_si256((const __m256i *)(idx + j));
            k = nx_gather_lanes4(k, vn, vnm1, vax, unit_ax, vjsa, &bad);
            _mm_storeu_si128((__m128i *)(out + j), _mm256_i64gather_epi32((const int *)src, k, 4));
            vjsa = _mm256_add_epi64(vjsa, vstep);
        }
        NX_GATHER_TAIL
    }

    NX_GATHER_TARGET static int nx_gather_d_d(const uint32_t *src, const int32_t *idx,
                                              uint32_t *out, Py_ssize_t m, Py_ssize_t n,
                                              Py_ssize_t ax, Py_ssize_t sa) {
        /* 8 lanes of 32 bits: every product fits (n * ax + m < 2**31) */
        const __m256i zero = _mm256_setzero_si256();
        const __m256i vn = _mm256_set1_epi32((int)n), vnm1 = _mm256_set1_epi32((int)(n - 1));
        const __m256i vax = _mm256_set1_epi32((int)ax), vstep = _mm256_set1_epi32((int)(8 * sa));
        __m256i vjsa = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                          _mm256_set1_epi32((int)sa));
        __m256i bad = zero, k, kb;
        const int unit_ax = ax == 1;
        Py_ssize_t j = 0;
        for (; j + 8 <= m; j += 8) {
            k = _mm256_loadu_si256((const __m256i *)(idx + j));
            k = _mm256_add_epi32(k, _mm256_and_si256(_mm256_cmpgt_epi32(zero, k), vn));
            kb = _mm256_or_si256(_mm256_cmpgt_epi32(k, vnm1), _mm256_cmpgt_epi32(zero, k));
            bad = _mm256_or_si256(bad, kb);
            k = _mm256_andnot_si256(kb, k);
            if (!unit_ax)
                k = _mm256_mullo_epi32(k, vax);
            k = _mm256_add_epi32(k, vjsa);
            _mm256_storeu_si256((__m256i *)(out + j),
                                _mm256_i32gather_epi32((const int *)src, k, 4));
            vjsa = _mm256_add_epi32(vjsa, vstep);
        }
        NX_GATHER_TAIL
    }

    static int nx_gather_simd_init(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    #else
    #define NX_GATHER_SIMD 0
    static int nx_gather_simd_init(void) { return 0; }
    #define NX_GATHER_STUB(name, item, index) \
        static int name(const item *src, const index *idx, item *out, Py_ssize_t m, \
                        Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa) { return -1; }
    NX_GATHER_STUB(nx_gather_q_q, uint64_t, int64_t)
    NX_GATHER_STUB(nx_gather_q_d, uint64_t, int32_t)
    NX_GATHER_STUB(nx_gather_d_q, uint32_t, int64_t)
    NX_GATHER_STUB(nx_gather_d_d, uint32_t, int32_t)
    #endif
    """
    int nx_gather_simd_init() noexcept
    int nx_gather_q_q(const uint64_t* src, const int64_t* idx, uint64_t* out, Py_ssize_t m,
                      Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa) noexcept nogil
    int nx_gather_q_d(const uint64_t* src, const int32_t* idx, uint64_t* out, Py_ssize_t m,
                      Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa) noexcept nogil
    int nx_gather_d_q(const uint32_t* src, const int64_t* idx, uint32_t* out, Py_ssize_t m,
                      Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa) noexcept nogil
    int nx_gather_d_d(const uint32_t* src, const int32_t* idx, uint32_t* out, Py_ssize_t m,
                      Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa) noexcept nogil


cdef bint _far_on = True


def _set_far(bint on):
    """For the tests: whether 1-D adds into large targets take _accum_far (the streams
    fetched ahead as non-temporal) or the plain row.  Returns the previous setting."""
    global _far_on
    old = _far_on
    _far_on = on
    return old


cdef bint _HAVE_SIMD = nx_gather_simd_init()
cdef bint _simd_on = _HAVE_SIMD


def _set_simd(bint on):
    """For the tests: use the AVX2 rows (where the CPU has them) or the scalar rows only.
    Returns the previous setting."""
    global _simd_on
    old = _simd_on
    _simd_on = on and _HAVE_SIMD
    return old


cdef inline int _gather_row_simd(const item_t* src, const index_t* idx, item_t* out,
                                 Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa,
                                 int64_t* bad) noexcept nogil:
    """A contiguous row (sa 0 or 1) by the AVX2 row where the caller allowed it (ax >= 1);
    a row with a bad index is gathered again by the scalar row, which names the first."""
    cdef int r = -1
    if item_t is uint64_t:
        if index_t is int64_t:
            r = nx_gather_q_q(src, idx, out, m, n, ax, sa)
        else:
            r = nx_gather_q_d(src, idx, out, m, n, ax, sa)
    elif item_t is uint32_t:
        if index_t is int64_t:
            r = nx_gather_d_q(src, idx, out, m, n, ax, sa)
        else:
            r = nx_gather_d_d(src, idx, out, m, n, ax, sa)
    if r == 0:
        return 0
    if sa == 0:
        return _gather_row(src, idx, out, m, n, ax, 1, 0, 1, bad)
    return _gather_row(src, idx, out, m, n, ax, 1, 1, 1, bad)


cdef int gather_walk(const item_t* src, const index_t* idx, item_t* out,
                     const Walk* w, int64_t* bad) noexcept nogil:
    cdef Cursor c, ahead
    cdef Py_ssize_t r
    cdef int last = w.ndim - 1
    cdef Py_ssize_t m = w.shape[last]
    cdef Py_ssize_t si = w.strides[OP_INDEX][last]
    cdef Py_ssize_t sa = w.strides[OP_ALONG][last]
    cdef Py_ssize_t sd = w.strides[OP_DENSE][last]
    cdef bint contiguous = _inner_contiguous(w)
    cdef int err
    # The AVX2 rows: 4- and 8-byte items, contiguous rows, products within 32 bits.
    cdef bint simd = (_simd_on and contiguous and (sa == 0 or sa == 1)
                      and (sizeof(item_t) == 4 or sizeof(item_t) == 8)
                      and 1 <= w.n and 1 <= w.axis_stride and m <= 0x3FFFFFFF
                      and w.n <= 0x3FFFFFFF // w.axis_stride)
    # Rows along a contiguous axis are read in random order: the hardware prefetchers cannot
    # follow that, so the next row is fetched (in the background) while this one is gathered.
    # (Measured with the AVX2 rows, 1000x1000 float64, one thread: 515-525 us; without the
    # prefetch 2330-2450 us; fetching two rows ahead 565-580 us.  These rows now take the
    # scalar row, see below.)
    cdef bint prefetch = (contiguous and sa == 0 and w.axis_stride == 1 and w.rows > 1
                          and w.n * <Py_ssize_t>sizeof(item_t) <= 65536)
    memset(&c, 0, sizeof(Cursor))
    ahead = c
    if prefetch:
        _advance(&ahead, w)
    for r in range(w.rows):
        if prefetch:
            if ahead.off[OP_ALONG] != c.off[OP_ALONG]:
                _prefetch_span(src + ahead.off[OP_ALONG], w.n * <Py_ssize_t>sizeof(item_t))
            _advance(&ahead, w)
            # the scalar row: on rows in the first-level cache its loads beat the AVX2
            # gather's (measured, one thread: rows of 256 float64, 131072 items, 70-97 us
            # with the AVX2 row, 48-61 us scalar; 1000x1000 float32 with int32 indices
            # 489-493 against 417-425 us; 1000x1000 float64 a tie, 522-908 against 545-762)
            err = _gather_row(src + c.off[OP_ALONG], idx + c.off[OP_INDEX],
                              out + c.off[OP_DENSE], m, w.n, 1, 1, 0, 1, bad)
        elif simd:
            err = _gather_row_simd(src + c.off[OP_ALONG], idx + c.off[OP_INDEX],
                                   out + c.off[OP_DENSE], m, w.n, w.axis_stride, sa, bad)
        elif contiguous and sa == 0 and w.axis_stride == 1:
            err = _gather_row(src + c.off[OP_ALONG], idx + c.off[OP_INDEX], out + c.off[OP_DENSE],
                              m, w.n, 1, 1, 0, 1, bad)
        elif contiguous and sa == 1:
            err = _gather_row(src + c.off[OP_ALONG], idx + c.off[OP_INDEX], out + c.off[OP_DENSE],
                              m, w.n, w.axis_stride, 1, 1, 1, bad)
        elif contiguous:
            err = _gather_row(src + c.off[OP_ALONG], idx + c.off[OP_INDEX], out + c.off[OP_DENSE],
                              m, w.n, w.axis_stride, 1, sa, 1, bad)
        else:
            err = _gather_row(src + c.off[OP_ALONG], idx + c.off[OP_INDEX], out + c.off[OP_DENSE],
                              m, w.n, w.axis_stride, si, sa, sd, bad)
        if err:
            return 1
        _advance(&c, w)
    return 0


cdef inline int _set_row(item_t* out, const index_t* idx, const item_t* upd, Py_ssize_t m,
                         Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si, Py_ssize_t sa,
                         Py_ssize_t sd, int64_t* bad) noexcept nogil:
    cdef Py_ssize_t j = 0, k, k0, k1, k2, k3
    # Four at a time with one check (the loop exits at a group with a bad index; the loop
    # after it reports the first bad one), then the rest one by one.  Every index wrapped
    # (unlike _gather_row's first loop: measured in a C test of both loops, a permutation of
    # 1e6 float64 stores 1.55-1.66 ms wrapped, 1.92-2.18 ms not; rows of 1000 a tie).
    while j + 4 <= m:
        k0 = _wrap(idx[j * si], n)
        k1 = _wrap(idx[(j + 1) * si], n)
        k2 = _wrap(idx[(j + 2) * si], n)
        k3 = _wrap(idx[(j + 3) * si], n)
        if _any_bad4(k0, k1, k2, k3, n):
            break
        out[j * sa + k0 * ax] = upd[j * sd]
        out[(j + 1) * sa + k1 * ax] = upd[(j + 1) * sd]
        out[(j + 2) * sa + k2 * ax] = upd[(j + 2) * sd]
        out[(j + 3) * sa + k3 * ax] = upd[(j + 3) * sd]
        j += 4
    while j < m:
        k = _wrap(idx[j * si], n)
        if <size_t>k >= <size_t>n:
            bad[0] = idx[j * si]
            return 1
        out[j * sa + k * ax] = upd[j * sd]
        j += 1
    return 0


cdef int scatter_set_walk(item_t* out, const index_t* idx, const item_t* upd,
                          const Walk* w, int64_t* bad) noexcept nogil:
    cdef Cursor c
    cdef Py_ssize_t r
    cdef int last = w.ndim - 1
    cdef Py_ssize_t m = w.shape[last]
    cdef Py_ssize_t si = w.strides[OP_INDEX][last]
    cdef Py_ssize_t sa = w.strides[OP_ALONG][last]
    cdef Py_ssize_t sd = w.strides[OP_DENSE][last]
    cdef bint contiguous = _inner_contiguous(w)
    cdef int err
    memset(&c, 0, sizeof(Cursor))
    for r in range(w.rows):
        if contiguous and sa == 0 and w.axis_stride == 1:
            err = _set_row(out + c.off[OP_ALONG], idx + c.off[OP_INDEX], upd + c.off[OP_DENSE],
                           m, w.n, 1, 1, 0, 1, bad)
        elif contiguous:
            err = _set_row(out + c.off[OP_ALONG], idx + c.off[OP_INDEX], upd + c.off[OP_DENSE],
                           m, w.n, w.axis_stride, 1, sa, 1, bad)
        else:
            err = _set_row(out + c.off[OP_ALONG], idx + c.off[OP_INDEX], upd + c.off[OP_DENSE],
                           m, w.n, w.axis_stride, si, sa, sd, bad)
        if err:
            return 1
        _advance(&c, w)
    return 0


cdef inline void _accum_one(numeric_t* p, numeric_t u, int mode) noexcept nogil:
    if mode == MODE_ADD:
        p[0] = p[0] + u
    else:
        p[0] = p[0] * u


cdef inline int _accum_row(numeric_t* out, const index_t* idx, const numeric_t* upd,
                           Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                           Py_ssize_t sa, Py_ssize_t sd, int mode, int64_t* bad) noexcept nogil:
    # One at a time: a read-modify-write may hit the element the one before it wrote, so
    # grouping them (as gather does) only delays the loads.  The first loop is for
    # non-negative indices (one comparison each); a negative one takes a side branch, and
    # after NEGATIVE_SWITCH of them the rest of the row goes to the loop that wraps every
    # index without a branch (random signs would mispredict the side branch half the time).
    cdef Py_ssize_t j = 0, k, negatives = 0
    while j < m:
        k = idx[j * si]
        if <size_t>k >= <size_t>n:
            if k >= 0 or k < -n:
                bad[0] = k
                return 1
            k += n
            negatives += 1
            if negatives > NEGATIVE_SWITCH:
                _accum_one(out + j * sa + k * ax, upd[j * sd], mode)
                j += 1
                break
        _accum_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    while j < m:
        k = _wrap(idx[j * si], n)
        if <size_t>k >= <size_t>n:
            bad[0] = idx[j * si]
            return 1
        _accum_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    return 0


cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define NX_GATHER_LE 1
    #else
    #define NX_GATHER_LE 0
    #endif
    """
    int NX_GATHER_LE     # 1 where the low half of an 8-byte word is the first int32


cdef bint _unroll_on = True


def _set_unroll(bint on):
    """For the tests: whether contiguous add / mul rows take _accum_row4 (else _accum_row).
    Returns the previous setting."""
    global _unroll_on
    old = _unroll_on
    _unroll_on = on
    return old


cdef inline Py_ssize_t _accum4(numeric_t* out, const index_t* idx, const numeric_t* upd,
                               Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa,
                               int mode) noexcept nogil:
    """Four contiguous updates in order, their indices loaded first (int32 ones as two
    8-byte words), each then checked: the count applied before the first index outside
    [0, n) (4: all; the caller wraps or reports that one)."""
    cdef Py_ssize_t k0, k1, k2, k3
    cdef uint64_t p0, p1
    if index_t is int32_t and NX_GATHER_LE:
        memcpy(&p0, idx, 8)
        memcpy(&p1, idx + 2, 8)
        k0 = <int32_t>(<uint32_t>p0)
        k1 = <int32_t>(<uint32_t>(p0 >> 32))
        k2 = <int32_t>(<uint32_t>p1)
        k3 = <int32_t>(<uint32_t>(p1 >> 32))
    else:
        k0 = idx[0]
        k1 = idx[1]
        k2 = idx[2]
        k3 = idx[3]
    if <size_t>k0 >= <size_t>n:
        return 0
    _accum_one(out + k0 * ax, upd[0], mode)
    if <size_t>k1 >= <size_t>n:
        return 1
    _accum_one(out + sa + k1 * ax, upd[1], mode)
    if <size_t>k2 >= <size_t>n:
        return 2
    _accum_one(out + 2 * sa + k2 * ax, upd[2], mode)
    if <size_t>k3 >= <size_t>n:
        return 3
    _accum_one(out + 3 * sa + k3 * ax, upd[3], mode)
    return 4


cdef inline int _accum_row4(numeric_t* out, const index_t* idx, const numeric_t* upd,
                            Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa,
                            int mode, int64_t* bad) noexcept nogil:
    """_accum_row for contiguous indices and updates, four at a time by _accum4 while the
    indices are non-negative; from the first negative or bad one the rest of the row goes
    to _accum_row, which wraps and names the first bad.  Same order, same result.
    (Measured, 1e6 float64 updates, one thread: into 1000 bins 522-534 us against 826-837
    us one at a time, into (1000, 100) along axis 1 493-607 against 610-901 us; the one at
    a time loop's time moves by 25% with where it lands in the code.)"""
    cdef Py_ssize_t j = 0, c
    while j + 4 <= m:
        c = _accum4(out + j * sa, idx + j, upd + j, n, ax, sa, mode)
        j += c
        if c < 4:
            break
    return _accum_row(out + j * sa, idx + j, upd + j, m - j, n, ax, 1, sa, 1, mode, bad)


cdef extern from *:
    """
    #define nx_gather_prefetch_nta(p) __builtin_prefetch((p), 0, 0)
    """
    void nx_gather_prefetch_nta(const void* p) noexcept nogil


# Measured (1e6 float64 updates into 1e5 bins, one thread, min of 60 calls, pairs run
# alternately in one process on the loaded 2-core machine): plain 1126-1362 us, with the
# non-temporal fetches 750-1068 us; into 4e5 bins no difference.  (A prefetch of the target
# element 24 updates ahead showed no gain, and was dropped.)
cdef enum:
    FAR_BYTES = 1 << 17     # 1-D targets larger than this stream their updates past the caches
    FAR_AHEAD = 512         # bytes ahead that the streams are fetched


cdef int _accum_far(numeric_t* out, const index_t* idx, const numeric_t* upd, Py_ssize_t m,
                    Py_ssize_t n, int mode, int64_t* bad) noexcept nogil:
    """_accum_row for a contiguous 1-D walk into a large target: the indices and updates,
    read once, are fetched ahead as non-temporal, so that they do not push the (randomly
    hit) target out of the caches.  Eight at a time by _accum4 (when _unroll_on), an index
    outside [0, n) then wrapped or reported on its own."""
    cdef Py_ssize_t j = 0, k, e, c
    cdef Py_ssize_t ia = FAR_AHEAD // sizeof(index_t), ua = FAR_AHEAD // sizeof(numeric_t)
    while j < m:
        e = j + 8 if j + 8 < m else m
        nx_gather_prefetch_nta(idx + j + ia)
        nx_gather_prefetch_nta(upd + j + ua)
        if sizeof(numeric_t) > 8:
            nx_gather_prefetch_nta(upd + j + ua + 4)
        if _unroll_on and e == j + 8:
            c = _accum4(out, idx + j, upd + j, n, 1, 0, mode)
            if c == 4:
                c += _accum4(out, idx + j + 4, upd + j + 4, n, 1, 0, mode)
            j += c
        while j < e:
            k = idx[j]
            if <size_t>k >= <size_t>n:
                if k >= 0 or k < -n:
                    bad[0] = k
                    return 1
                k += n
            _accum_one(out + k, upd[j], mode)
            j += 1
    return 0


cdef inline int _accum_row_dispatch(numeric_t* out, const index_t* idx, const numeric_t* upd,
                                    Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                                    Py_ssize_t sa, Py_ssize_t sd, bint contiguous, int mode,
                                    int64_t* bad) noexcept nogil:
    # Literal modes and strides so that each call site is compiled to its own tight loop.
    if contiguous and sa == 0 and ax == 1:
        if _far_on and n * <Py_ssize_t>sizeof(numeric_t) > FAR_BYTES:
            if mode == MODE_ADD:
                return _accum_far(out, idx, upd, m, n, MODE_ADD, bad)
            return _accum_far(out, idx, upd, m, n, MODE_MUL, bad)
        if _unroll_on:
            if mode == MODE_ADD:
                return _accum_row4(out, idx, upd, m, n, 1, 0, MODE_ADD, bad)
            return _accum_row4(out, idx, upd, m, n, 1, 0, MODE_MUL, bad)
        if mode == MODE_ADD:
            return _accum_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_ADD, bad)
        return _accum_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_MUL, bad)
    if contiguous and sa == 1:
        if mode == MODE_ADD:
            return _accum_row(out, idx, upd, m, n, ax, 1, 1, 1, MODE_ADD, bad)
        return _accum_row(out, idx, upd, m, n, ax, 1, 1, 1, MODE_MUL, bad)
    if contiguous:
        if mode == MODE_ADD:
            return _accum_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_ADD, bad)
        return _accum_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_MUL, bad)
    if mode == MODE_ADD:
        return _accum_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_ADD, bad)
    return _accum_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_MUL, bad)


cdef int scatter_accum_walk(numeric_t* out, const index_t* idx, const numeric_t* upd,
                            const Walk* w, int mode, int64_t* bad) noexcept nogil:
    cdef Cursor c
    cdef Py_ssize_t r
    cdef int last = w.ndim - 1
    cdef bint contiguous = _inner_contiguous(w)
    memset(&c, 0, sizeof(Cursor))
    for r in range(w.rows):
        if _accum_row_dispatch(out + c.off[OP_ALONG], idx + c.off[OP_INDEX],
                               upd + c.off[OP_DENSE], w.shape[last], w.n, w.axis_stride,
                               w.strides[OP_INDEX][last], w.strides[OP_ALONG][last],
                               w.strides[OP_DENSE][last], contiguous, mode, bad):
            return 1
        _advance(&c, w)
    return 0


cdef inline void _order_one(real_t* p, real_t u, int mode) noexcept nogil:
    cdef real_t cur = p[0], r
    # np.maximum / np.minimum exactly: a NaN on either side wins, and ties keep the update.
    # Written as selects that GCC makes maxsd / minsd (whose NaN and tie rules are those of
    # `cur > u ? cur : u`) and conditional moves, the store always done: whether an update
    # wins is data, which a branch mispredicts often on random values.  (Measured, 1e6
    # float64 max updates into (1000, 100) along axis 1, one thread: 3.2-3.9 ms with the
    # branch, 0.63-0.67 ms without; torch's scatter_reduce_ 3.2 ms.)
    if mode == MODE_MAX:
        r = cur if cur > u else u
    else:
        r = cur if cur < u else u
    if real_t is float or real_t is double:
        r = cur if cur != cur else r
    p[0] = r


cdef inline int _order_row(real_t* out, const index_t* idx, const real_t* upd,
                           Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                           Py_ssize_t sa, Py_ssize_t sd, int mode, int64_t* bad) noexcept nogil:
    # One at a time: a read-modify-write may hit the element the one before it wrote, so
    # grouping them (as gather does) only delays the loads.  The first loop is for
    # non-negative indices (one comparison each); a negative one takes a side branch, and
    # after NEGATIVE_SWITCH of them the rest of the row goes to the loop that wraps every
    # index without a branch (random signs would mispredict the side branch half the time).
    cdef Py_ssize_t j = 0, k, negatives = 0
    while j < m:
        k = idx[j * si]
        if <size_t>k >= <size_t>n:
            if k >= 0 or k < -n:
                bad[0] = k
                return 1
            k += n
            negatives += 1
            if negatives > NEGATIVE_SWITCH:
                _order_one(out + j * sa + k * ax, upd[j * sd], mode)
                j += 1
                break
        _order_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    while j < m:
        k = _wrap(idx[j * si], n)
        if <size_t>k >= <size_t>n:
            bad[0] = idx[j * si]
            return 1
        _order_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    return 0


cdef inline int _order_row_dispatch(real_t* out, const index_t* idx, const real_t* upd,
                                    Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                                    Py_ssize_t sa, Py_ssize_t sd, bint contiguous, int mode,
                                    int64_t* bad) noexcept nogil:
    if contiguous and sa == 0 and ax == 1:
        if mode == MODE_MAX:
            return _order_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_MAX, bad)
        return _order_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_MIN, bad)
    if contiguous:
        if mode == MODE_MAX:
            return _order_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_MAX, bad)
        return _order_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_MIN, bad)
    if mode == MODE_MAX:
        return _order_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_MAX, bad)
    return _order_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_MIN, bad)


cdef int scatter_order_walk(real_t* out, const index_t* idx, const real_t* upd,
                            const Walk* w, int mode, int64_t* bad) noexcept nogil:
    cdef Cursor c
    cdef Py_ssize_t r
    cdef int last = w.ndim - 1
    cdef bint contiguous = _inner_contiguous(w)
    memset(&c, 0, sizeof(Cursor))
    for r in range(w.rows):
        if _order_row_dispatch(out + c.off[OP_ALONG], idx + c.off[OP_INDEX],
                               upd + c.off[OP_DENSE], w.shape[last], w.n, w.axis_stride,
                               w.strides[OP_INDEX][last], w.strides[OP_ALONG][last],
                               w.strides[OP_DENSE][last], contiguous, mode, bad):
            return 1
        _advance(&c, w)
    return 0


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
# moves (a nonzero OP_ALONG stride): every target element is then written by one span, in
# the C order of that span, so the result is the single-threaded one bit for bit.  A scatter
# with no such dimension (a 1-D target: every update may hit any element) in mode "add"
# gives each span after the first a private zeroed copy of the target (when the target is
# small against the updates: "few bins") and adds the copies to the target in span order.
# That changes the order of floating-point sums against one thread (integers: the same
# result); for a given thread count it is the same on every run.
#
# A span that meets a bad index stops; the walk is then run again in one thread to find the
# first bad index in C order (the error path only: the output is thrown away).

cdef enum:
    MAX_SPANS = 256
    SPANS_PER_THREAD = 4         # (not with private targets: one each) see run_spans
    GATHER_OP = -1               # Job.op of a gather (scatter's are the ScatterMode values)

# A walk is cut only when it has at least this many elements.  Measured on 2 cores (min of
# 300 calls, 1 -> 2 threads; gather rows of 256, 1-D add into size/64 bins): 2**16: gather
# 33.4 -> 33.8 us, add 35.3 -> 37.0 us; 2**17: 65.4 -> 59.6, 63.8 -> 65.4; 2**18: 132 -> 98,
# 129 -> 112 (benchmarks/bench_gather_kernels.py's *_small cases sit at the threshold).
# A Python global so that the tests can lower it to cover the threaded path on small inputs.
THREADED_SIZE = 1 << 17
# A 1-D add takes k - 1 private targets (k spans, k <= threads) only while
# (k - 1) * target size * this <= the updates.
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


cdef int _execute(Job* j, out, int64_t* bad) except -1:
    """Run the walk j.w (on the pool when it is large); 1 with bad[0] set on a bad index.
    out: scatter's target array (a C-contiguous ndarray), for the private targets."""
    cdef const Walk* w = j.w
    cdef Py_ssize_t threads = min(num_threads(), <Py_ssize_t>MAX_SPANS)
    cdef Py_ssize_t total = w.rows * w.shape[w.ndim - 1], size, count, k, step, spans
    cdef int err
    cdef bint histogram = False
    private = None
    j.split = -1
    j.private_ = NULL
    if threads > 1 and total >= THREADED_SIZE and pool_has_threads():
        j.split = _choose_split(w, j.op, threads)
        if j.split < 0 and j.op == MODE_ADD:
            # as many private targets as the updates pay for (HISTOGRAM_RATIO), up to threads
            threads = min(threads, 1 + total // max(out.size * HISTOGRAM_RATIO, 1))
            j.split = _longest(w)
            histogram = threads > 1 and w.shape[j.split] >= threads
            if not histogram:
                j.split = -1
    if j.split < 0:
        with nogil:
            err = _walk_items(j.along, j.idx, j.dense, j, w, bad)
        return err
    size = w.shape[j.split]
    spans = threads if histogram else min(threads * SPANS_PER_THREAD, <Py_ssize_t>MAX_SPANS)
    j.step = (size + spans - 1) // spans
    if j.split == w.ndim - 1 and j.step > 16:
        j.step = (j.step + 15) // 16 * 16         # no cache line of output split between spans
    count = (size + j.step - 1) // j.step
    if histogram and count > 1:
        private = np.empty((count - 1, out.size), dtype=out.dtype)
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
    out = np.empty(shape, dtype=data.dtype)
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
    sums into its own copy and the copies are added in a fixed order, so float sums may
    differ from one thread's (and NumPy's) in the last places (integers: the same).
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
