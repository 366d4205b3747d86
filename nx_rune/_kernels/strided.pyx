"""Strided copy: the one kernel that moves data for every movement op.

``copy_strided`` copies an n-d strided block of items from one Buffer into another (any strides,
negative and zero included, in elements).  Axes are coalesced where both sides allow it;
a unit-stride inner axis becomes a memcpy per row, and when the destination's inner axis is the
source's long-stride axis (a transpose) the copy is done in square tiles that stay in cache.
The loops run without the GIL.  ``materialize`` builds a fresh contiguous Buffer from a View,
masks and fill included.  ``copy_strided`` checks every block against its buffer (O(ndim))
before copying, so a bad view raises ValueError instead of reading out of bounds.  Large
copies between distinct buffers run on the kernels' thread pool (pool.pyx), cut along one
axis into spans that the threads claim one at a time; every item is copied once, by one
span, so the result does not depend on the thread count.
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from nx_rune._kernels._types cimport item16_t
from nx_rune._kernels.buffer cimport Buffer
from nx_rune._kernels.pool cimport num_threads, pool_has_threads, run_spans

import numpy as np

DEF MAX_NDIM = 64
DEF TILE = 32


# Register-blocked transposes and the broadcast-row fill, in C for the SIMD intrinsics.
# A transpose moves square blocks through registers: each block is read as rows of the source
# (unit stride along a) and written as rows of the destination (unit stride along b), so every
# memory access is a full vector.  x86-64: 8x8 (4-byte) and 4x4 (8-byte) blocks with AVX when
# the CPU has it (checked once at run time), else 4x4 / 2x2 blocks with SSE2 (always there);
# elsewhere plain C.  Blocks go in strips of a whole cache line of the source (16 or 8 items
# along a), so each source line is used up while it is in cache.
cdef extern from *:
    """
    #include <string.h>
    #include <stdint.h>
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <immintrin.h>
    #define NX_ST_X86 1
    #else
    #define NX_ST_X86 0
    #endif

    /* d[a*da + b*isz] = s[a*isz + b*sb] for a < na, b < nb (byte strides), item by item. */
    static void nx_tr_scalar(const char *s, Py_ssize_t sb, char *d, Py_ssize_t da,
                             Py_ssize_t na, Py_ssize_t nb, Py_ssize_t isz) {
        Py_ssize_t a, b;
        if (isz == 4) {
            for (a = 0; a < na; a++)
                for (b = 0; b < nb; b++)
                    memcpy(d + a * da + b * 4, s + a * 4 + b * sb, 4);
        } else {
            for (a = 0; a < na; a++)
                for (b = 0; b < nb; b++)
                    memcpy(d + a * da + b * 8, s + a * 8 + b * sb, 8);
        }
    }

    #if NX_ST_X86
    __attribute__((target("avx")))
    static inline void nx_tr8x8_ps(const char *s, Py_ssize_t sb, char *d, Py_ssize_t da) {
        __m256 r0 = _mm256_loadu_ps((const float *)(s));
        __m256 r1 = _mm256_loadu_ps((const float *)(s + sb));
        __m256 r2 = _mm256_loadu_ps((const float *)(s + 2 * sb));
        __m256 r3 = _mm256_loadu_ps((const float *)(s + 3 * sb));
        __m256 r4 = _mm256_loadu_ps((const float *)(s + 4 * sb));
        __m256 r5 = _mm256_loadu_ps((const float *)(s + 5 * sb));
        __m256 r6 = _mm256_loadu_ps((const float *)(s + 6 * sb));
        __m256 r7 = _mm256_loadu_ps((const float *)(s + 7 * sb));
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
        __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
        __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
        _mm256_storeu_ps((float *)(d), _mm256_permute2f128_ps(u0, u4, 0x20));
        _mm256_storeu_ps((float *)(d + da), _mm256_permute2f128_ps(u1, u5, 0x20));
        _mm256_storeu_ps((float *)(d + 2 * da), _mm256_permute2f128_ps(u2, u6, 0x20));
        _mm256_storeu_ps((float *)(d + 3 * da), _mm256_permute2f128_ps(u3, u7, 0x20));
        _mm256_storeu_ps((float *)(d + 4 * da), _mm256_permute2f128_ps(u0, u4, 0x31));
        _mm256_storeu_ps((float *)(d + 5 * da), _mm256_permute2f128_ps(u1, u5, 0x31));
        _mm256_storeu_ps((float *)(d + 6 * da), _mm256_permute2f128_ps(u2, u6, 0x31));
        _mm256_storeu_ps((float *)(d + 7 * da), _mm256_permute2f128_ps(u3, u7, 0x31));
    }

    __attribute__((target("avx")))
    static inline void nx_tr4x4_pd(const char *s, Py_ssize_t sb, char *d, Py_ssize_t da) {
        __m256d r0 = _mm256_loadu_pd((const double *)(s));
        __m256d r1 = _mm256_loadu_pd((const double *)(s + sb));
        __m256d r2 = _mm256_loadu_pd((const double *)(s + 2 * sb));
        __m256d r3 = _mm256_loadu_pd((const double *)(s + 3 * sb));
        __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
        __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
        _mm256_storeu_pd((double *)(d), _mm256_permute2f128_pd(t0, t2, 0x20));
        _mm256_storeu_pd((double *)(d + da), _mm256_permute2f128_pd(t1, t3, 0x20));
        _mm256_storeu_pd((double *)(d + 2 * da), _mm256_permute2f128_pd(t0, t2, 0x31));
        _mm256_storeu_pd((double *)(d + 3 * da), _mm256_permute2f128_pd(t1, t3, 0x31));
    }

    static inline void nx_tr4x4_ps(const char *s, Py_ssize_t sb, char *d, Py_ssize_t da) {
        __m128 r0 = _mm_loadu_ps((const float *)(s));
        __m128 r1 = _mm_loadu_ps((const float *)(s + sb));
        __m128 r2 = _mm_loadu_ps((const float *)(s + 2 * sb));
        __m128 r3 = _mm_loadu_ps((const float *)(s + 3 * sb));
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps((float *)(d), r0);
        _mm_storeu_ps((float *)(d + da), r1);
        _mm_storeu_ps((float *)(d + 2 * da), r2);
        _mm_storeu_ps((float *)(d + 3 * da), r3);
    }

    static inline void nx_tr2x2_pd(const char *s, Py_ssize_t sb, char *d, Py_ssize_t da) {
        __m128d r0 = _mm_loadu_pd((const double *)(s));
        __m128d r1 = _mm_loadu_pd((const double *)(s + sb));
        _mm_storeu_pd((double *)(d), _mm_unpacklo_pd(r0, r1));
        _mm_storeu_pd((double *)(d + da), _mm_unpackhi_pd(r0, r1));
    }

    /* The transpose in tiles of TB items along b (so that the source rows a tile reads stay
       few, in the TLB as in the cache) by strips of SA items along a (a cache line of the
       source), each tile done in blocks of M x M (M | SA); ragged edges go item by item.  The
       block kernel is a macro argument so that each instantiation inlines its own. */
    #define NX_TR_TB 512
    #define NX_TR_TILED(NAME, ATTR, KERNEL, M, SA, ISZ)                                     \
    ATTR static void NAME(const char *s, Py_ssize_t sb, char *d, Py_ssize_t da,             \
                          Py_ssize_t na, Py_ssize_t nb) {                                   \
        Py_ssize_t a0, a, b0, b, be, bm = nb - nb % (M), am = na - na % (SA);              \
        for (b0 = 0; b0 < bm; b0 += NX_TR_TB) {                                            \
            be = b0 + NX_TR_TB < bm ? b0 + NX_TR_TB : bm;                                  \
            for (a0 = 0; a0 < am; a0 += (SA))                                              \
                for (b = b0; b < be; b += (M))                                             \
                    for (a = a0; a < a0 + (SA); a += (M))                                  \
                        KERNEL(s + a * (ISZ) + b * sb, sb, d + a * da + b * (ISZ), da);    \
        }                                                                                  \
        if (bm < nb)                                                                       \
            nx_tr_scalar(s + bm * sb, sb, d + bm * (ISZ), da, am, nb - bm, (ISZ));         \
        if (am < na)                                                                       \
            nx_tr_scalar(s + am * (ISZ), sb, d + am * da, da, na - am, nb, (ISZ));         \
    }

    NX_TR_TILED(nx_tr4_avx, __attribute__((target("avx"))), nx_tr8x8_ps, 8, 16, 4)
    NX_TR_TILED(nx_tr8_avx, __attribute__((target("avx"))), nx_tr4x4_pd, 4, 8, 8)
    NX_TR_TILED(nx_tr4_sse, , nx_tr4x4_ps, 4, 16, 4)
    NX_TR_TILED(nx_tr8_sse, , nx_tr2x2_pd, 2, 8, 8)

    static int nx_st_avx = -1;
    #endif

    /* The transpose d[a*da + b*isz] = s[a*isz + b*sb] of 4- or 8-byte items (isz). */
    static void nx_transpose(const char *s, Py_ssize_t sb, char *d, Py_ssize_t da,
                             Py_ssize_t na, Py_ssize_t nb, Py_ssize_t isz) {
    #if NX_ST_X86
        if (nx_st_avx < 0) {
            __builtin_cpu_init();
            nx_st_avx = __builtin_cpu_supports("avx") ? 1 : 0;
        }
        if (isz == 4)
            (nx_st_avx ? nx_tr4_avx : nx_tr4_sse)(s, sb, d, da, na, nb);
        else
            (nx_st_avx ? nx_tr8_avx : nx_tr8_sse)(s, sb, d, da, na, nb);
    #else
        nx_tr_scalar(s, sb, d, da, na, nb, isz);
    #endif
    }

    /* d[r*dr + j*isz] = s[r*sr] for r < rows, j < k: each source item written k times side by
       side (a broadcast inner axis: repeat, tile, broadcast_to).  A constant k lets the
       compiler turn a row into a few vector stores, so the common counts get their own loop. */
    #define NX_BCAST_LOOP(T, K)                                                             \
        for (r = 0; r < rows; r++) {                                                       \
            T v, *o = (T *)(d + r * dr);                                                   \
            memcpy(&v, s + r * sr, sizeof(T));                                             \
            for (j = 0; j < (K); j++)                                                      \
                o[j] = v;                                                                  \
        }
    #define NX_BCAST_TYPED(T)                                                               \
        switch (k) {                                                                       \
        case 2: NX_BCAST_LOOP(T, 2) break;                                                 \
        case 3: NX_BCAST_LOOP(T, 3) break;                                                 \
        case 4: NX_BCAST_LOOP(T, 4) break;                                                 \
        case 8: NX_BCAST_LOOP(T, 8) break;                                                 \
        case 16: NX_BCAST_LOOP(T, 16) break;                                               \
        default: NX_BCAST_LOOP(T, k) break;                                                \
        }
    static void nx_bcast_rows(const char *s, Py_ssize_t sr, char *d, Py_ssize_t dr,
                              Py_ssize_t rows, Py_ssize_t k, Py_ssize_t isz) {
        Py_ssize_t r, j;
        if (isz == 1) {
            for (r = 0; r < rows; r++)
                memset(d + r * dr, s[r * sr], (size_t)k);
        } else if (isz == 2) {
            NX_BCAST_TYPED(uint16_t)
        } else if (isz == 4) {
            NX_BCAST_TYPED(uint32_t)
        } else if (isz == 8) {
            NX_BCAST_TYPED(uint64_t)
        } else {
            for (r = 0; r < rows; r++)
                for (j = 0; j < k; j++)
                    memcpy(d + r * dr + j * isz, s + r * sr, (size_t)isz);
        }
    }
    """
    void nx_transpose(const char* s, Py_ssize_t sb, char* d, Py_ssize_t da, Py_ssize_t na,
                      Py_ssize_t nb, Py_ssize_t isz) noexcept nogil
    void nx_bcast_rows(const char* s, Py_ssize_t sr, char* d, Py_ssize_t dr, Py_ssize_t rows,
                       Py_ssize_t k, Py_ssize_t isz) noexcept nogil


cdef inline void _row_copy(const char* s, Py_ssize_t ss, char* d, Py_ssize_t ds,
                           Py_ssize_t n, Py_ssize_t isz) noexcept nogil:
    """Copy n items; strides in bytes.  Dispatches on the item size outside the loop
    (a memcpy of constant size compiles to one move, and is safe on unaligned memory)."""
    cdef Py_ssize_t i
    if ss == isz and ds == isz:
        memcpy(d, s, n * isz)
    elif ss == -isz and ds == isz and (isz == 4 or isz == 8):
        _reversed_row(s - (n - 1) * isz, d, n, isz)
    elif isz == 4:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, 4)
    elif isz == 8:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, 8)
    elif isz == 2:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, 2)
    elif isz == 1:
        for i in range(n):
            d[i * ds] = s[i * ss]
    else:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, isz)


cdef inline void _reversed_row(const char* s, char* d, Py_ssize_t n,
                               Py_ssize_t isz) noexcept nogil:
    """d[i] = s[n - 1 - i] with constant strides, which gcc vectorizes (a flip's inner axis)."""
    cdef Py_ssize_t i
    cdef uint32_t w4
    cdef uint64_t w8
    if isz == 4:
        for i in range(n):
            memcpy(&w4, s + (n - 1 - i) * 4, 4)
            memcpy(d + i * 4, &w4, 4)
    else:
        for i in range(n):
            memcpy(&w8, s + (n - 1 - i) * 8, 8)
            memcpy(d + i * 8, &w8, 8)


cdef void _tile_copy(const char* s, Py_ssize_t sa, Py_ssize_t sb,
                     char* d, Py_ssize_t da, Py_ssize_t db,
                     Py_ssize_t na, Py_ssize_t nb, Py_ssize_t isz) noexcept nogil:
    """2-d copy where s is unit-stride along a and d is unit-stride along b (a transpose)."""
    cdef Py_ssize_t a0, b0, a, b, ae, be
    if sa == isz and db == isz and (isz == 4 or isz == 8):
        nx_transpose(s, sb, d, da, na, nb, isz)
        return
    for a0 in range(0, na, TILE):
        ae = a0 + TILE if a0 + TILE < na else na
        for b0 in range(0, nb, TILE):
            be = b0 + TILE if b0 + TILE < nb else nb
            for a in range(a0, ae):
                _row_copy(s + a * sa + b0 * sb, sb, d + a * da + b0 * db, db, be - b0, isz)


cdef enum:
    INNER_ROW = 0       # the inner axis: one row copy
    INNER_TILED = 1     # a transpose: the inner axis and axis a_ax, in cache tiles
    INNER_BCAST = 2     # the inner axis broadcasts (source stride 0) into contiguous rows


cdef void _copy_nd(const char* src, char* dst, int nd, const Py_ssize_t* shape,
                   const Py_ssize_t* ss, const Py_ssize_t* ds, Py_ssize_t isz) noexcept nogil:
    """Odometer over all axes but the inner one (or two, for a tiled transpose or a broadcast
    inner axis, which one kernel call does as a block)."""
    cdef Py_ssize_t idx[MAX_NDIM]
    cdef int k, mode = INNER_ROW, a_ax = -1, outer
    cdef Py_ssize_t n_inner
    cdef const char* s
    cdef char* d
    if nd == 0:
        memcpy(dst, src, isz)
        return
    if ss[nd - 1] == 0 and ds[nd - 1] == isz:
        # each source item fills a contiguous destination row (the rows along axis nd - 2)
        mode = INNER_BCAST
        a_ax = nd - 2
    elif nd >= 2 and ss[nd - 1] != isz and shape[nd - 1] >= 8:
        # a transpose: the inner destination axis is strided in the source, and some other
        # axis is unit-stride in the source; tile those two axes.
        for k in range(nd - 1):
            if (ss[k] == isz or ss[k] == -isz) and shape[k] >= 8:
                a_ax = k
        if a_ax >= 0:
            mode = INNER_TILED
    outer = nd - 1
    for k in range(nd):
        idx[k] = 0
    n_inner = shape[nd - 1]
    while True:
        s = src
        d = dst
        for k in range(outer):
            if mode != INNER_ROW and k == a_ax:
                continue
            s += idx[k] * ss[k]
            d += idx[k] * ds[k]
        if mode == INNER_TILED:
            _tile_copy(s, ss[a_ax], ss[nd - 1], d, ds[a_ax], ds[nd - 1],
                       shape[a_ax], n_inner, isz)
        elif mode == INNER_BCAST:
            if a_ax >= 0:
                nx_bcast_rows(s, ss[a_ax], d, ds[a_ax], shape[a_ax], n_inner, isz)
            else:
                nx_bcast_rows(s, 0, d, 0, 1, n_inner, isz)
        else:
            _row_copy(s, ss[nd - 1], d, ds[nd - 1], n_inner, isz)
        # advance the odometer over the outer axes
        k = outer - 1
        while k >= 0:
            if mode != INNER_ROW and k == a_ax:
                k -= 1
                continue
            idx[k] += 1
            if idx[k] < shape[k]:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            return


cdef int _coalesce(int nd, Py_ssize_t* shape, Py_ssize_t* ss, Py_ssize_t* ds) noexcept nogil:
    """Drop size-1 axes and merge neighbours that are contiguous on both sides; new ndim."""
    cdef int i, m = 0
    for i in range(nd):
        if shape[i] == 1:
            continue
        if m > 0 and ss[m - 1] == ss[i] * shape[i] and ds[m - 1] == ds[i] * shape[i]:
            shape[m - 1] *= shape[i]
            ss[m - 1] = ss[i]
            ds[m - 1] = ds[i]
            continue
        shape[m] = shape[i]
        ss[m] = ss[i]
        ds[m] = ds[i]
        m += 1
    return m


cdef bint _within(Py_ssize_t off, int nd, const Py_ssize_t* shape, const Py_ssize_t* strides,
                  Py_ssize_t size) noexcept nogil:
    """True when every element ``off + sum(i[k] * strides[k])``, 0 <= i[k] < shape[k] (all
    shape[k] >= 1), lies in [0, size).  Exact: no intermediate value can overflow."""
    cdef Py_ssize_t lo = off, hi = off, n1, s
    cdef int k
    if off < 0 or off >= size:
        return False
    for k in range(nd):
        n1 = shape[k] - 1
        s = strides[k]
        if n1 == 0 or s == 0:
            continue
        if s > 0:
            if n1 > (size - 1 - hi) // s:
                return False
            hi += n1 * s
        else:
            if s < -size or n1 > lo // (-s):
                return False
            lo += n1 * s
    return True


def copy_strided(Buffer src, Py_ssize_t src_offset, shape, src_strides,
                 Buffer dst, Py_ssize_t dst_offset, dst_strides):
    """Copy ``shape`` items from ``src`` to ``dst`` (offsets and strides in elements).

    Item sizes must match.  Every address is checked against both buffers first (O(ndim)):
    ValueError, never an out-of-bounds access, when a block would leave its buffer.
    """
    cdef int nd = len(shape), k
    cdef Py_ssize_t c_shape[MAX_NDIM]
    cdef Py_ssize_t c_ss[MAX_NDIM]
    cdef Py_ssize_t c_ds[MAX_NDIM]
    cdef Py_ssize_t isz = src.itemsize
    if nd > MAX_NDIM:
        raise ValueError(f"shape: at most {MAX_NDIM} axes are supported, got {nd}")
    if dst.itemsize != isz:
        raise TypeError(f"dst: item size {dst.itemsize} differs from src's {isz}")
    if len(src_strides) != nd or len(dst_strides) != nd:
        raise ValueError("src_strides, dst_strides: need one stride per axis of shape")
    if dst.readonly:
        raise ValueError("dst: buffer is read-only")
    for k in range(nd):
        c_shape[k] = shape[k]
        if c_shape[k] < 0:
            raise ValueError(f"shape: negative dimension in {tuple(shape)}")
        c_ss[k] = src_strides[k]
        c_ds[k] = dst_strides[k]
    for k in range(nd):
        if c_shape[k] == 0:
            return
    if not _within(src_offset, nd, c_shape, c_ss, src.size):
        raise ValueError(f"src: shape {tuple(shape)} with strides {tuple(src_strides)} and offset "
                         f"{src_offset} reaches outside the buffer of {src.size} elements")
    if not _within(dst_offset, nd, c_shape, c_ds, dst.size):
        raise ValueError(f"dst: shape {tuple(shape)} with strides {tuple(dst_strides)} and offset "
                         f"{dst_offset} reaches outside the buffer of {dst.size} elements")
    for k in range(nd):   # in bytes (no overflow: each span fits in its buffer)
        if c_shape[k] == 1:   # any stride is valid on a size-1 axis; coalescing drops it
            c_ss[k] = 0
            c_ds[k] = 0
        c_ss[k] *= isz
        c_ds[k] *= isz
    cdef const char* s = src.data + src_offset * isz
    cdef char* d = dst.data + dst_offset * isz
    cdef Py_ssize_t total = 1
    with nogil:
        nd = _coalesce(nd, c_shape, c_ss, c_ds)
    for k in range(nd):
        total *= c_shape[k]
    if (total * isz >= THREADED_BYTES and num_threads() > 1 and pool_has_threads()
            and _disjoint(src, dst)):
        if _copy_threaded(s, d, nd, c_shape, c_ss, c_ds, isz):
            return
    with nogil:
        _copy_nd(s, d, nd, c_shape, c_ss, c_ds, isz)


# A copy of at least this many bytes runs on the pool.  Measured on 2 cores (4096 x 4096 f32
# transposed into a preallocated buffer, 1 -> 2 threads: see benchmarks/bench_threads.py);
# below ~1 MiB the source and destination stay in the caches and a wake-up costs about as
# much as the copy saves.  A Python global so that the tests can lower it.
THREADED_BYTES = 1 << 20

cdef enum:
    COPY_SPANS_PER_THREAD = 4     # several each: a core the scheduler holds up costs one span


ctypedef struct CopyJob:
    const char* s
    char* d
    int nd
    int split
    Py_ssize_t isz
    Py_ssize_t shape[MAX_NDIM]
    Py_ssize_t ss[MAX_NDIM]
    Py_ssize_t ds[MAX_NDIM]


cdef void _copy_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Items lo..hi-1 along the job's split axis (all of every other axis)."""
    cdef const CopyJob* j = <const CopyJob*>ctx
    cdef Py_ssize_t shape[MAX_NDIM]
    memcpy(shape, j.shape, j.nd * sizeof(Py_ssize_t))
    shape[j.split] = hi - lo
    _copy_nd(j.s + lo * j.ss[j.split], j.d + lo * j.ds[j.split], j.nd, shape, j.ss, j.ds,
             j.isz)


cdef bint _disjoint(Buffer a, Buffer b) noexcept:
    """Whether the two buffers' bytes do not overlap: only then may spans run in any order
    (an overlapping copy keeps the one-thread order it always had)."""
    cdef const char* a0 = a.data
    cdef const char* b0 = b.data
    return a0 + a.size * a.itemsize <= b0 or b0 + b.size * b.itemsize <= a0


cdef bint _copy_threaded(const char* s, char* d, int nd, const Py_ssize_t* shape,
                         const Py_ssize_t* ss, const Py_ssize_t* ds, Py_ssize_t isz) noexcept:
    """The copy cut along one axis on the pool; False (nothing copied) when no axis has an
    item for each thread.  The axis: the outermost with four items a span, so that each span
    is a few long runs of memory (a transpose's rows of the destination), else the longest."""
    cdef Py_ssize_t threads = num_threads(), spans, step, size
    cdef int k, split = -1
    cdef CopyJob job
    for k in range(nd):
        if shape[k] >= 4 * COPY_SPANS_PER_THREAD * threads:
            split = k
            break
    if split < 0:
        for k in range(nd):
            if shape[k] >= threads and (split < 0 or shape[k] > shape[split]):
                split = k
    if split < 0:
        return False
    size = shape[split]
    spans = min(threads * COPY_SPANS_PER_THREAD, size)
    step = (size + spans - 1) // spans
    if step > 16:
        step = (step + 15) // 16 * 16   # whole cache lines of a unit-stride side per span
    job.s = s
    job.d = d
    job.nd = nd
    job.split = split
    job.isz = isz
    for k in range(nd):
        job.shape[k] = shape[k]
        job.ss[k] = ss[k]
        job.ds[k] = ds[k]
    run_spans(_copy_span, &job, size, step, (size + step - 1) // step, threads)
    return True


def fill(Buffer dst, value):
    """Set every item of ``dst`` to ``value`` (converted to dst's dtype)."""
    cdef Py_ssize_t n = dst.size, isz = dst.itemsize, i
    if n == 0:
        return
    if dst.readonly:
        raise ValueError("dst: buffer is read-only")
    pattern = np.asarray(value).astype(dst.dtype).reshape(1).view(np.uint8).tobytes()
    cdef const unsigned char[:] pat = pattern
    cdef char* d = dst.data
    cdef uint32_t p4
    cdef uint64_t p8
    cdef uint16_t p2
    with nogil:
        if isz == 1:
            memset(d, pat[0], n)
        elif isz == 2:
            memcpy(&p2, &pat[0], 2)
            for i in range(n):
                (<uint16_t*>d)[i] = p2
        elif isz == 4:
            memcpy(&p4, &pat[0], 4)
            for i in range(n):
                (<uint32_t*>d)[i] = p4
        elif isz == 8:
            memcpy(&p8, &pat[0], 8)
            for i in range(n):
                (<uint64_t*>d)[i] = p8
        else:
            for i in range(n):
                memcpy(d + i * isz, &pat[0], isz)
