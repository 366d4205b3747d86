/* YNNPACK's arithmetic as XLA:CPU (jax 0.10.2) runs it for the fusions it hands to YNNPACK.
 *
 * XLA:CPU gives YNNPACK every float32 or float64 reduction (add, max, min) whose operand has at
 * least 4,096 elements, fused with the elementwise operations of 4,096 elements or more that
 * produce it and those that consume it (exp, log, log1p, pow, abs, add, multiply ...).
 * YNNPACK's exp, log and log1p are its own vectorised approximations, and its sums have an order of their own: the functions here
 * reproduce both, element for element (nx_rune.random's ball, dirichlet and maxwell).
 *
 * Included by threefry_samplers.pxi's C block (after its helpers: nx_rt_f, the flush-to-zero
 * switches).  Compiled without floating-point contraction (the elementwise functions inline
 * into the block's NX_RT_EXACT loops, which vectorise them; the sums carry the attribute
 * themselves): every fused multiply-add below is YNNPACK's own (its multiply_add is an fma
 * wherever it runs: a hardware one or its emulation).
 */
#ifndef NX_RUNE_XLA_MATH_YNN_H
#define NX_RUNE_XLA_MATH_YNN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef NX_RT_EXACT
#define NX_RT_EXACT
#endif

static inline double nx_ynn_d(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }

/* exp: x clamped, b = round(x log2(e)) (by the 1.5 * 2**mantissa_bits trick), r = x - b ln(2)
   in two steps, exp(r) - 1 = r + r**2 P(r) (P's even and odd powers as two Horner chains in
   r**2), then 2**b (r + r**2 P(r)) + 2**b; 2**b from the exponent bits, 0 at the lowest b and
   inf at the highest.  Results below the smallest normal are flushed to zero, as XLA's
   arithmetic flushes them. */
static inline float nx_ynn_exp32(float x) {
    if (x != x)
        return x;
    float xc = x > -88.02969360351562f ? x : -88.02969360351562f;
    xc = xc < 88.72283935546875f ? xc : 88.72283935546875f;
    const float magic = 12582912.0f;                 /* 1.5 * 2**23 */
    float t = xc * 1.4426950408889634f;
    float b = (magic + t) - magic;
    float r = fmaf(b, -6.9314575195e-01f, xc);
    r = fmaf(b, -1.4286067653e-06f, r);
    float e2b = nx_rt_f((uint32_t)((int32_t)b + 127) << 23);
    float r2 = r * r;
    float y0 = -4.9866619520e-05f, y1 = 2.2773783712e-04f;
    y0 = fmaf(r2, y0, 1.4132461511e-03f);
    y1 = fmaf(r2, y1, 8.3242934197e-03f);
    y0 = fmaf(r2, y0, 4.1665628552e-02f);
    y1 = fmaf(r2, y1, 1.6666725278e-01f);
    y0 = fmaf(r2, y0, 4.9999994040e-01f);
    float p = fmaf(r, y1, y0);
    float e2r = fmaf(r2, p, r);
    float out = isinf(e2b) ? e2b : fmaf(e2b, e2r, e2b);
    return fabsf(out) < 0x1p-126f ? 0.0f * out : out;
}

static inline double nx_ynn_exp64(double x) {
    if (x != x)
        return x;
    double xc = x > -709.0895657128241 ? x : -709.0895657128241;
    xc = xc < 709.782712893384 ? xc : 709.782712893384;
    const double magic = 6755399441055744.0;         /* 1.5 * 2**52 */
    double t = xc * 1.4426950408889634;
    double b = (magic + t) - magic;
    double r = fma(b, -6.93147180369123816490e-01, xc);
    r = fma(b, -1.90821492927058770002e-10, r);
    double e2b = nx_ynn_d((uint64_t)((int64_t)b + 1023) << 52);
    double r2 = r * r;
    double y0 = 2.119890244143296032e-09, y1 = 2.521079371356939368e-08;
    y0 = fma(r2, y0, 2.755585399809175769e-07);
    y1 = fma(r2, y1, 2.755675838881680360e-06);
    y0 = fma(r2, y0, 2.480158976814372031e-05);
    y1 = fma(r2, y1, 1.984127071808468106e-04);
    y0 = fma(r2, y0, 1.388888888680978647e-03);
    y1 = fma(r2, y1, 8.333333332743943569e-03);
    y0 = fma(r2, y0, 4.166666666668113195e-02);
    y1 = fma(r2, y1, 1.666666666666796748e-01);
    y0 = fma(r2, y0, 4.999999999999995559e-01);
    double p = fma(r, y1, y0);
    double e2r = fma(r2, p, r);
    double out = isinf(e2b) ? e2b : fma(e2b, e2r, e2b);
    return fabs(out) < 0x1p-1022 ? 0.0 * out : out;
}

/* log (and log1p): y = x (1 + x) = 2**e m with m in [1, 2), halved (e + 1) above sqrt(2);
   r = m - 1 (log1p: x itself where e is 0) and log(1 + r) = r + r**2 P(r) / Q(r) (each
   polynomial as two Horner chains in r**2), plus e ln(2) with one fma.  Zero and the
   denormals (read as zero) give -inf, negative numbers NaN, inf inf. */
static inline float nx_ynn_log32(float x, int log1p) {
    /* (branch-free: the loops over arrays vectorise; the special values are selected last) */
    float y = log1p ? x + 1.0f : x;
    uint32_t bits;
    memcpy(&bits, &y, 4);
    float e = (float)((int32_t)((bits >> 23) & 0xffu) - 127);
    float m = nx_rt_f((bits & 0x007fffffu) | 0x3f800000u);
    int large = m > 1.41421356237309504880f;
    e = nx_rt_self(large, e + 1.0f, e);
    m = nx_rt_self(large, m * 0.5f, m);
    float r = nx_rt_self(log1p & (e == 0.0f), x, m - 1.0f), r2 = r * r;
    float p0 = -5.2293352783e-03f, p1 = -3.3127889037e-01f;
    p0 = fmaf(r2, p0, -4.9999964237e-01f);
    float p = fmaf(r, p1, p0);
    float q0 = 3.9658042789e-01f, q1 = 1.3292170763e+00f;
    q0 = fmaf(r2, q0, 1.0f);
    float q = fmaf(r, q1, q0);
    float lr = fmaf(r2, p / q, r);
    float out = fmaf(e, 6.93147180559945309e-01f, lr);
    out = nx_rt_self(y < 0x1p-126f, nx_rt_self(y > -0x1p-126f, -INFINITY, NAN), out);
    return nx_rt_self((y != y) | (y == INFINITY), y, out);
}

static inline double nx_ynn_log64(double x, int log1p) {
    double y = log1p ? x + 1.0 : x;
    uint64_t bits;
    memcpy(&bits, &y, 8);
    double e = (double)((int64_t)((bits >> 52) & 0x7ffu) - 1023);
    double m = nx_ynn_d((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
    int large = m > 1.41421356237309504880;
    e = nx_rt_sel(large, e + 1.0, e);
    m = nx_rt_sel(large, m * 0.5, m);
    double r = nx_rt_sel(log1p & (e == 0.0), x, m - 1.0), r2 = r * r;
    double p0 = -2.956046447212538203e-03, p1 = -6.691314126082094360e-02;
    p0 = fma(r2, p0, -4.289980732181625789e-01);
    p1 = fma(r2, p1, -1.110965361416291097e+00);
    p0 = fma(r2, p0, -1.242991301338429500e+00);
    p1 = fma(r2, p1, -4.999999999999990008e-01);
    double p = fma(r, p0, p1);
    double q0 = 3.009181610003072455e-03, q1 = 7.942469932969810353e-02;
    q0 = fma(r2, q0, 6.369060590899747742e-01);
    q1 = fma(r2, q1, 2.230802780023532605e+00);
    q0 = fma(r2, q0, 3.823696902394678077e+00);
    q1 = fma(r2, q1, 3.152649269343555716e+00);
    q0 = fma(r2, q0, 1.0);
    double q = fma(r, q1, q0);
    double lr = fma(r2, p / q, r);
    double out = fma(e, 6.93147180559945309e-01, lr);
    out = nx_rt_sel(y < 0x1p-1022, nx_rt_sel(y > -0x1p-1022, -INFINITY, NAN), out);
    return nx_rt_sel((y != y) | (y == INFINITY), y, out);
}

/* The sum of one row of k elements as YNNPACK's float reduction kernel sums it (k up to its
   tile, 128 KiB of the row): L lanes (L * sizeof(T) = 64 bytes); blocks of 4 L elements (the
   last one padded with zeros), each summed lane by lane from zero and added into the first
   accumulator; the kernel's clock ticks by 4 L per 4 blocks while 16 L elements remain, then
   by L per block; where it is a multiple of 16 the first accumulator is added into the second
   (and cleared), where a multiple of 256 the second into the third by Kahan's summation; at
   the end all three flushed in that order, and the lanes summed in halves: lane i + lane
   i + L/2, then the halves of that, down to one. */
#define NX_YNN_SUM_CHUNK(NAME, T, L)                                                         \
    NX_RT_EXACT static inline void NAME##_block(const T *a, Py_ssize_t n, T *acc0) {                      \
        T local[L];                                                                           \
        int i, c;                                                                             \
        for (i = 0; i < L; i++) local[i] = (T)0;                                              \
        for (c = 0; c < 4; c++)                                                               \
            for (i = 0; i < L; i++) {                                                         \
                Py_ssize_t j = (Py_ssize_t)c * L + i;                                         \
                local[i] = local[i] + (j < n ? a[j] : (T)0);                                  \
            }                                                                                 \
        for (i = 0; i < L; i++) acc0[i] = acc0[i] + local[i];                                 \
    }                                                                                         \
    NX_RT_EXACT static inline void NAME##_tick(size_t clock, T *acc0, T *acc1, T *acc2, T *err) {         \
        int i;                                                                                \
        if ((clock & 15) != 0) return;                                                        \
        for (i = 0; i < L; i++) {                                                             \
            acc1[i] = acc1[i] + acc0[i];                                                      \
            acc0[i] = (T)0;                                                                   \
        }                                                                                     \
        if ((clock & 255) != 0) return;                                                       \
        for (i = 0; i < L; i++) {                                                             \
            T y = acc1[i] - err[i], t = acc2[i] + y, e = (t - acc2[i]) - y;                   \
            err[i] = isfinite(e) ? e : (T)0;                                                  \
            acc2[i] = t;                                                                      \
            acc1[i] = (T)0;                                                                   \
        }                                                                                     \
    }                                                                                         \
    NX_RT_EXACT static T NAME(const T *a, Py_ssize_t k) {                                     \
        T acc0[L], acc1[L], acc2[L], err[L];                                                  \
        const Py_ssize_t nk4 = 4 * L;                                                         \
        size_t clock = 0;                                                                     \
        int i, u, w;                                                                          \
        if (k <= L) {                                                                         \
            /* one chunk: its lanes (zeros past k: no lane of the halves above the next */    \
            /* power of two is nonzero), the kernel's additions of zero only signing */       \
            /* zeros, which the last one makes +0 */                                          \
            for (w = 1; w < k; w *= 2) {}                                                     \
            for (i = 0; i < w; i++) acc2[i] = i < k ? a[i] : (T)0;                            \
            for (w /= 2; w >= 1; w /= 2)                                                      \
                for (i = 0; i < w; i++) acc2[i] = acc2[i] + acc2[i + w];                      \
            return (T)0 + acc2[0];                                                            \
        }                                                                                     \
        for (i = 0; i < L; i++) acc0[i] = acc1[i] = acc2[i] = err[i] = (T)0;                  \
        while (k >= 4 * nk4) {                                                                \
            for (u = 0; u < 4; u++, a += nk4) NAME##_block(a, nk4, acc0);                     \
            k -= 4 * nk4;                                                                     \
            clock += 4 * L;                                                                   \
            NAME##_tick(clock, acc0, acc1, acc2, err);                                        \
        }                                                                                     \
        while (k >= nk4) {                                                                    \
            NAME##_block(a, nk4, acc0);                                                       \
            a += nk4;                                                                         \
            k -= nk4;                                                                         \
            clock += L;                                                                       \
            NAME##_tick(clock, acc0, acc1, acc2, err);                                        \
        }                                                                                     \
        if (k > 0) NAME##_block(a, k, acc0);                                                  \
        NAME##_tick(0, acc0, acc1, acc2, err);                                                \
        for (i = 0; i < L; i++) acc2[i] = (T)0 + acc2[i];                                     \
        for (w = L / 2; w >= 1; w /= 2)                                                       \
            for (i = 0; i < w; i++) acc2[i] = acc2[i] + acc2[i + w];                          \
        return (T)0 + acc2[0];                                                                \
    }

NX_YNN_SUM_CHUNK(nx_ynn_sum_chunk32, float, 16)
NX_YNN_SUM_CHUNK(nx_ynn_sum_chunk64, double, 8)
#undef NX_YNN_SUM_CHUNK

/* A whole row: up to a tile (32,768 float32 or 16,384 float64 elements) one chunk; a longer
   row as YNNPACK splits it, the tiles' sums (each from zero) then summed as a row of their
   own. */
#define NX_YNN_SUM_ROW(NAME, CHUNK, T)                                                       \
    NX_RT_EXACT static T NAME(const T *a, Py_ssize_t k) {                                     \
        const Py_ssize_t tile = 131072 / (Py_ssize_t)sizeof(T);                               \
        T stack_parts[256] = {0}, *parts = stack_parts, out;                                        \
        Py_ssize_t m, j;                                                                      \
        if (k <= tile) return CHUNK(a, k);                                                    \
        m = (k + tile - 1) / tile;                                                            \
        if (m > 256 && !(parts = (T *)malloc((size_t)m * sizeof(T)))) return (T)NAN;          \
        for (j = 0; j < m; j++)                                                               \
            parts[j] = CHUNK(a + j * tile, k - j * tile < tile ? k - j * tile : tile);        \
        out = NAME(parts, m);                                                                 \
        if (parts != stack_parts) free(parts);                                                \
        return out;                                                                           \
    }

NX_YNN_SUM_ROW(nx_ynn_sum_row32, nx_ynn_sum_chunk32, float)
NX_YNN_SUM_ROW(nx_ynn_sum_row64, nx_ynn_sum_chunk64, double)
#undef NX_YNN_SUM_ROW

#endif
