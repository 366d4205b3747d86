/* Strided inner loops with NumPy's ufunc loop signature, for the fused-kernel VM (fusion.pyx):
 * dtype casts and element selection (where).  NumPy's own ufunc loops cover the arithmetic.
 *
 * A loop gets args[] (operand pointers, outputs last), dims[0] (the element count), steps[]
 * (byte strides, 0 for a broadcast operand) and an opaque data pointer.
 */
#ifndef NX_RUNE_FUSION_LOOPS_H
#define NX_RUNE_FUSION_LOOPS_H

#include <stdint.h>
#include <string.h>
#include <numpy/npy_common.h>

/* the next chunk index of a kernel's work shared between threads (work sharing: a thread that
   the OS does not schedule leaves its chunks to the others instead of holding them up) */
#if defined(_MSC_VER)
#include <windows.h>
static __inline npy_intp nxr_next_chunk(npy_intp *counter) {
    return (npy_intp)InterlockedExchangeAdd64((volatile LONG64 *)counter, 1);
}
#else
static inline npy_intp nxr_next_chunk(npy_intp *counter) {
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}
#endif

typedef void (*nxr_loop)(char **args, const npy_intp *dims, const npy_intp *steps, void *data);

/* -- casts: C conversions, as NumPy's casts of these dtypes; to bool: x != 0 ---------------- */

#define NXR_CAST(NAME, S, D)                                                                   \
    static void NAME(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {  \
        npy_intp n = dims[0], is = steps[0], os = steps[1];                                  \
        char *ip = args[0], *op = args[1];                                                   \
        (void)data;                                                                          \
        if (is == (npy_intp)sizeof(S) && os == (npy_intp)sizeof(D)) {                        \
            const S *a = (const S *)ip; D *b = (D *)op;                                      \
            for (npy_intp i = 0; i < n; i++) b[i] = (D)a[i];                                 \
        } else {                                                                             \
            for (npy_intp i = 0; i < n; i++, ip += is, op += os) *(D *)op = (D)*(const S *)ip; \
        }                                                                                    \
    }

#define NXR_CAST_BOOL(NAME, S)                                                                 \
    static void NAME(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {  \
        npy_intp n = dims[0], is = steps[0], os = steps[1];                                  \
        char *ip = args[0], *op = args[1];                                                   \
        (void)data;                                                                          \
        for (npy_intp i = 0; i < n; i++, ip += is, op += os)                                 \
            *(npy_bool *)op = (*(const S *)ip != 0);                                         \
    }

#define NXR_CAST_COMPLEX(NAME, S, D)                                                           \
    static void NAME(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {  \
        npy_intp n = dims[0], is = steps[0], os = steps[1];                                  \
        char *ip = args[0], *op = args[1];                                                   \
        (void)data;                                                                          \
        for (npy_intp i = 0; i < n; i++, ip += is, op += os) {                               \
            ((D *)op)[0] = (D)*(const S *)ip; ((D *)op)[1] = 0;                              \
        }                                                                                    \
    }

#define NXR_CAST_C2C(NAME, S, D)                                                               \
    static void NAME(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {  \
        npy_intp n = dims[0], is = steps[0], os = steps[1];                                  \
        char *ip = args[0], *op = args[1];                                                   \
        (void)data;                                                                          \
        for (npy_intp i = 0; i < n; i++, ip += is, op += os) {                               \
            ((D *)op)[0] = (D)((const S *)ip)[0]; ((D *)op)[1] = (D)((const S *)ip)[1];      \
        }                                                                                    \
    }

/* source types (index order of nxr_cast_table's rows and columns):
 * 0 bool, 1 int8, 2 int16, 3 int32, 4 int64, 5 uint8, 6 uint16, 7 uint32, 8 uint64,
 * 9 float32, 10 float64; destinations add 11 complex64, 12 complex128 */
#define NXR_ROW(SN, S)                                                                         \
    NXR_CAST_BOOL(nxr_cast_##SN##_b, S)                                                        \
    NXR_CAST(nxr_cast_##SN##_i1, S, int8_t)                                                    \
    NXR_CAST(nxr_cast_##SN##_i2, S, int16_t)                                                   \
    NXR_CAST(nxr_cast_##SN##_i4, S, int32_t)                                                   \
    NXR_CAST(nxr_cast_##SN##_i8, S, int64_t)                                                   \
    NXR_CAST(nxr_cast_##SN##_u1, S, uint8_t)                                                   \
    NXR_CAST(nxr_cast_##SN##_u2, S, uint16_t)                                                  \
    NXR_CAST(nxr_cast_##SN##_u4, S, uint32_t)                                                  \
    NXR_CAST(nxr_cast_##SN##_u8, S, uint64_t)                                                  \
    NXR_CAST(nxr_cast_##SN##_f4, S, float)                                                     \
    NXR_CAST(nxr_cast_##SN##_f8, S, double)                                                    \
    NXR_CAST_COMPLEX(nxr_cast_##SN##_c8, S, float)                                             \
    NXR_CAST_COMPLEX(nxr_cast_##SN##_c16, S, double)

NXR_ROW(b, npy_bool)
NXR_ROW(i1, int8_t)
NXR_ROW(i2, int16_t)
NXR_ROW(i4, int32_t)
NXR_ROW(i8, int64_t)
NXR_ROW(u1, uint8_t)
NXR_ROW(u2, uint16_t)
NXR_ROW(u4, uint32_t)
NXR_ROW(u8, uint64_t)
NXR_ROW(f4, float)
NXR_ROW(f8, double)
NXR_CAST_C2C(nxr_cast_c8_c16, float, double)
NXR_CAST_C2C(nxr_cast_c16_c8, double, float)

#define NXR_TROW(SN) { nxr_cast_##SN##_b, nxr_cast_##SN##_i1, nxr_cast_##SN##_i2,              \
    nxr_cast_##SN##_i4, nxr_cast_##SN##_i8, nxr_cast_##SN##_u1, nxr_cast_##SN##_u2,           \
    nxr_cast_##SN##_u4, nxr_cast_##SN##_u8, nxr_cast_##SN##_f4, nxr_cast_##SN##_f8,           \
    nxr_cast_##SN##_c8, nxr_cast_##SN##_c16 }

static nxr_loop nxr_cast_table[11][13] = {
    NXR_TROW(b), NXR_TROW(i1), NXR_TROW(i2), NXR_TROW(i4), NXR_TROW(i8), NXR_TROW(u1),
    NXR_TROW(u2), NXR_TROW(u4), NXR_TROW(u8), NXR_TROW(f4), NXR_TROW(f8)
};

static nxr_loop nxr_cast_entry(int src, int dst) {
    if (src == 11 && dst == 12) return nxr_cast_c8_c16;
    if (src == 12 && dst == 11) return nxr_cast_c16_c8;
    if (src < 0 || src > 10 || dst < 0 || dst > 12) return NULL;
    return nxr_cast_table[src][dst];
}

/* -- where(cond, x, y): selection of elements of one size ---------------------------------- */

#define NXR_WHERE(NAME, T)                                                                     \
    static void NAME(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {  \
        npy_intp n = dims[0], cs = steps[0], xs = steps[1], ys = steps[2], os = steps[3];    \
        char *c = args[0], *x = args[1], *y = args[2], *o = args[3];                         \
        (void)data;                                                                          \
        for (npy_intp i = 0; i < n; i++, c += cs, x += xs, y += ys, o += os)                 \
            *(T *)o = *(const npy_bool *)c ? *(const T *)x : *(const T *)y;                  \
    }

typedef struct { uint64_t lo, hi; } nxr_u128;
NXR_WHERE(nxr_where_1, uint8_t)
NXR_WHERE(nxr_where_2, uint16_t)
NXR_WHERE(nxr_where_4, uint32_t)
NXR_WHERE(nxr_where_8, uint64_t)
NXR_WHERE(nxr_where_16, nxr_u128)

static nxr_loop nxr_where_entry(int itemsize) {
    switch (itemsize) {
        case 1: return nxr_where_1;
        case 2: return nxr_where_2;
        case 4: return nxr_where_4;
        case 8: return nxr_where_8;
        case 16: return nxr_where_16;
        default: return NULL;
    }
}

/* -- copy n elements of one size (strided) --------------------------------------------------- */

#define NXR_COPY_T(T)                                                                          \
    do {                                                                                     \
        if (ss == 0) {                                                                       \
            T v = *(const T *)src;                                                           \
            for (npy_intp i = 0; i < n; i++, dst += ds) *(T *)dst = v;                       \
        } else {                                                                             \
            for (npy_intp i = 0; i < n; i++, dst += ds, src += ss)                           \
                *(T *)dst = *(const T *)src;                                                 \
        }                                                                                    \
    } while (0)

static void nxr_copy(char *dst, npy_intp ds, const char *src, npy_intp ss, npy_intp n,
                     npy_intp itemsize) {
    if (ds == itemsize && ss == itemsize) {
        memcpy(dst, src, (size_t)(n * itemsize));
        return;
    }
    switch (itemsize) {
        case 1: NXR_COPY_T(uint8_t); return;
        case 2: NXR_COPY_T(uint16_t); return;
        case 4: NXR_COPY_T(uint32_t); return;
        case 8: NXR_COPY_T(uint64_t); return;
        case 16: NXR_COPY_T(nxr_u128); return;
        default:
            for (npy_intp i = 0; i < n; i++, dst += ds, src += ss)
                memcpy(dst, src, (size_t)itemsize);
    }
}

/* -- segmented reductions: nseg runs of seg elements (stride is), each into its own output
 * element (stride os); ``first``: the outputs hold nothing yet (they are set, not combined).
 * Summation is sequential within a segment (short rows: NumPy's pairwise sum only differs
 * beyond 8 elements, by rounding).  max propagates NaN as np.maximum; fmax skips NaN. */

typedef void (*nxr_segloop)(char *out, npy_intp os, const char *in, npy_intp is,
                            npy_intp seg, npy_intp nseg, int first);

#define NXR_SEG(NAME, T, INIT_EXPR, STEP_EXPR)                                                 \
    static void NAME(char *out, npy_intp os, const char *in, npy_intp is, npy_intp seg,       \
                     npy_intp nseg, int first) {                                             \
        for (npy_intp j = 0; j < nseg; j++, out += os) {                                     \
            const char *p = in + j * seg * is;                                               \
            T a = *(const T *)p;                                                             \
            for (npy_intp i = 1; i < seg; i++) {                                             \
                T x = *(const T *)(p + i * is);                                              \
                a = STEP_EXPR;                                                               \
            }                                                                                \
            if (!first) {                                                                    \
                T x = a; a = *(T *)out;                                                      \
                a = STEP_EXPR;                                                               \
            }                                                                                \
            *(T *)out = a;                                                                   \
            (void)INIT_EXPR;                                                                 \
        }                                                                                    \
    }

#define NXR_SEG_TYPES(OP, EXPR)                                                                \
    NXR_SEG(nxr_seg_##OP##_f4, float, 0, EXPR)                                                 \
    NXR_SEG(nxr_seg_##OP##_f8, double, 0, EXPR)                                                \
    NXR_SEG(nxr_seg_##OP##_i4, int32_t, 0, EXPR)                                               \
    NXR_SEG(nxr_seg_##OP##_i8, int64_t, 0, EXPR)

NXR_SEG_TYPES(sum, a + x)
NXR_SEG_TYPES(prod, a * x)
NXR_SEG_TYPES(max, ((a >= x || a != a) ? a : x))
NXR_SEG_TYPES(fmax, ((a >= x || x != x) ? a : x))
NXR_SEG_TYPES(fmin, ((a <= x || x != x) ? a : x))

/* the same reductions across segments: nseg runs of seg elements combined element by element
 * into one row of seg outputs (stride os); ``first``: the row holds nothing yet */
#define NXR_ROW_ACC(NAME, T, STEP_EXPR)                                                        \
    static void NAME(char *out, npy_intp os, const char *in, npy_intp is, npy_intp seg,       \
                     npy_intp nseg, int first) {                                             \
        npy_intp j0 = 0;                                                                     \
        if (first) {                                                                         \
            for (npy_intp i = 0; i < seg; i++)                                               \
                *(T *)(out + i * os) = *(const T *)(in + i * is);                            \
            j0 = 1;                                                                          \
        }                                                                                    \
        if (os == (npy_intp)sizeof(T) && is == (npy_intp)sizeof(T)) {                        \
            T *o = (T *)out;                                                                 \
            for (npy_intp j = j0; j < nseg; j++) {                                           \
                const T *p = (const T *)in + j * seg;                                        \
                for (npy_intp i = 0; i < seg; i++) { T a = o[i]; T x = p[i]; o[i] = STEP_EXPR; } \
            }                                                                                \
            return;                                                                          \
        }                                                                                    \
        for (npy_intp j = j0; j < nseg; j++) {                                               \
            const char *p = in + j * seg * is;                                               \
            for (npy_intp i = 0; i < seg; i++) {                                             \
                T a = *(T *)(out + i * os);                                                  \
                T x = *(const T *)(p + i * is);                                              \
                *(T *)(out + i * os) = STEP_EXPR;                                            \
            }                                                                                \
        }                                                                                    \
    }

#define NXR_ROW_TYPES(OP, EXPR)                                                                \
    NXR_ROW_ACC(nxr_row_##OP##_f4, float, EXPR)                                                \
    NXR_ROW_ACC(nxr_row_##OP##_f8, double, EXPR)                                               \
    NXR_ROW_ACC(nxr_row_##OP##_i4, int32_t, EXPR)                                              \
    NXR_ROW_ACC(nxr_row_##OP##_i8, int64_t, EXPR)

NXR_ROW_TYPES(sum, a + x)
NXR_ROW_TYPES(prod, a * x)
NXR_ROW_TYPES(max, ((a >= x || a != a) ? a : x))
NXR_ROW_TYPES(fmax, ((a >= x || x != x) ? a : x))
NXR_ROW_TYPES(fmin, ((a <= x || x != x) ? a : x))

static nxr_segloop nxr_row_table[5][4] = {
    {nxr_row_sum_f4, nxr_row_sum_f8, nxr_row_sum_i4, nxr_row_sum_i8},
    {nxr_row_prod_f4, nxr_row_prod_f8, nxr_row_prod_i4, nxr_row_prod_i8},
    {nxr_row_max_f4, nxr_row_max_f8, nxr_row_max_i4, nxr_row_max_i8},
    {nxr_row_fmax_f4, nxr_row_fmax_f8, nxr_row_fmax_i4, nxr_row_fmax_i8},
    {nxr_row_fmin_f4, nxr_row_fmin_f8, nxr_row_fmin_i4, nxr_row_fmin_i8},
};

static nxr_segloop nxr_row_entry(int op, int type) {
    if (op < 0 || op > 4 || type < 0 || type > 3) return NULL;
    return nxr_row_table[op][type];
}

/* op: 0 sum, 1 prod, 2 max, 3 fmax, 4 fmin; type: 0 float32, 1 float64, 2 int32, 3 int64 */
static nxr_segloop nxr_seg_table[5][4] = {
    {nxr_seg_sum_f4, nxr_seg_sum_f8, nxr_seg_sum_i4, nxr_seg_sum_i8},
    {nxr_seg_prod_f4, nxr_seg_prod_f8, nxr_seg_prod_i4, nxr_seg_prod_i8},
    {nxr_seg_max_f4, nxr_seg_max_f8, nxr_seg_max_i4, nxr_seg_max_i8},
    {nxr_seg_fmax_f4, nxr_seg_fmax_f8, nxr_seg_fmax_i4, nxr_seg_fmax_i8},
    {nxr_seg_fmin_f4, nxr_seg_fmin_f8, nxr_seg_fmin_i4, nxr_seg_fmin_i8},
};

static nxr_segloop nxr_seg_entry(int op, int type) {
    if (op < 0 || op > 4 || type < 0 || type > 3) return NULL;
    return nxr_seg_table[op][type];
}

#endif
