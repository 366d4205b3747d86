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

static void nxr_copy(char *dst, npy_intp ds, const char *src, npy_intp ss, npy_intp n,
                     npy_intp itemsize) {
    if (ds == itemsize && ss == itemsize) {
        memcpy(dst, src, (size_t)(n * itemsize));
        return;
    }
    for (npy_intp i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, (size_t)itemsize);
}

#endif
