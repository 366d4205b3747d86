/* Packed AVX-512 float64 matrix product C = A @ B (gemm.pyx): gemm_avx512.h's scheme in double
   precision, for the eager and compiled float64 products.

   B is packed once into K blocks of NR-column panels (zero-padded), each thread packs the rows
   of A it owns into MR-row micro-panels per K block, and a register kernel computes MR x NR
   tiles of C (16 accumulators of 8 doubles), the first K block storing and the others
   accumulating.  Edges use AVX-512's masked loads and stores.  One element's sum runs over k in
   increasing order within a K block, blocks in order, whatever the threads: the result differs
   from a BLAS's only by rounding.

   OpenBLAS picks its AVX2 (Haswell) kernels on CPUs it does not know (AMD's Zen 5 among them);
   this one uses the 512-bit FMAs, and runs on the kernels' pool, whose threads claim spans
   dynamically (a core taken by another process costs its share, not the whole call).

   Compiled for avx512f through a target attribute and chosen at run time
   (gemm_avx512.h's nx_sgemm512_supported); elsewhere the functions exist but are never called. */
#ifndef NX_GEMM_AVX512_F64_H
#define NX_GEMM_AVX512_F64_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NX_DG_MR 8          /* rows of a register tile */
#define NX_DG_NR 16         /* columns of a register tile: two 8-double vectors */
#define NX_DG_KC 128        /* most k per block: a KC x NR panel of B is 16 KiB, an A micro-panel 8 KiB (L1) */
#define NX_DG_MB 8          /* micro-panels of A packed at a time (64 rows) */

typedef struct {
    const double *a; ptrdiff_t a_rs, a_cs;   /* A (m, k), strides in elements */
    const double *b; ptrdiff_t b_rs, b_cs;   /* B (k, n) */
    double *c; ptrdiff_t ldc;                /* C (m, n), unit column stride */
    ptrdiff_t m, n, k;
    ptrdiff_t kc, nkb, npanels;             /* k per block, blocks, NR-panels of B */
    double *bpack;                           /* nkb blocks of npanels panels of kc x NR */
    int failed;                             /* set (never cleared) when a buffer was refused */
} nx_dgemm_job;

static ptrdiff_t nx_dg_kblock(const nx_dgemm_job *j, ptrdiff_t kb, ptrdiff_t *k0) {
    *k0 = kb * j->kc;
    ptrdiff_t left = j->k - *k0;
    return left < j->kc ? left : j->kc;
}

/* Panels [lo, hi) of B, every K block (scalar: B's packing is k*n work against m*k*n). */
static void nx_dgemm_pack_b(const nx_dgemm_job *j, ptrdiff_t lo, ptrdiff_t hi) {
    for (ptrdiff_t kb = 0; kb < j->nkb; kb++) {
        ptrdiff_t k0, kcb = nx_dg_kblock(j, kb, &k0);
        for (ptrdiff_t p = lo; p < hi; p++) {
            double *dst = j->bpack + kb * j->kc * j->npanels * NX_DG_NR + p * kcb * NX_DG_NR;
            ptrdiff_t c0 = p * NX_DG_NR;
            ptrdiff_t cols = j->n - c0 < NX_DG_NR ? j->n - c0 : NX_DG_NR;
            if (j->b_rs == 1 && j->b_cs != 1) {
                /* a transposed B (g @ W^T): a column's k are adjacent, so the panel is
                   built in blocks of 8 k (a cache line of each column), each column's line
                   read once; row by row, the reads would stride by whole rows through the
                   same few cache sets */
                for (ptrdiff_t kb0 = 0; kb0 < kcb; kb0 += 8) {
                    ptrdiff_t kn = kcb - kb0 < 8 ? kcb - kb0 : 8;
                    for (ptrdiff_t jj = 0; jj < cols; jj++) {
                        const double *src = j->b + k0 + kb0 + (c0 + jj) * j->b_cs;
                        double *col = dst + kb0 * NX_DG_NR + jj;
                        for (ptrdiff_t kk = 0; kk < kn; kk++) col[kk * NX_DG_NR] = src[kk];
                    }
                }
                for (ptrdiff_t kk = 0; kk < kcb; kk++)
                    for (ptrdiff_t jj = cols; jj < NX_DG_NR; jj++) dst[kk * NX_DG_NR + jj] = 0.0;
                continue;
            }
            for (ptrdiff_t kk = 0; kk < kcb; kk++) {
                const double *src = j->b + (k0 + kk) * j->b_rs + c0 * j->b_cs;
                double *row = dst + kk * NX_DG_NR;
                if (j->b_cs == 1) {
                    memcpy(row, src, (size_t)cols * sizeof(double));
                } else {
                    for (ptrdiff_t jj = 0; jj < cols; jj++) row[jj] = src[jj * j->b_cs];
                }
                for (ptrdiff_t jj = cols; jj < NX_DG_NR; jj++) row[jj] = 0.0;
            }
        }
    }
}

/* Rows [r0, r0 + rows) of A, K block (k0, kcb), as MR-row micro-panels of kcb x MR. */
static void nx_dgemm_pack_a(const nx_dgemm_job *j, ptrdiff_t r0, ptrdiff_t rows, ptrdiff_t k0,
                            ptrdiff_t kcb, double *dst) {
    if (j->a_rs == 1 && j->a_cs != 1 && rows % NX_DG_MR == 0) {
        /* a transposed A (the backward products' x^T @ g): one k's rows are adjacent, so the
           block is built a k at a time, each cache line of A read once; row by row (or one
           micro-panel at a time), the reads stride by whole columns through the same few
           cache sets and come back from L2 */
        const double *src = j->a + r0 + k0 * j->a_cs;
        for (ptrdiff_t kk = 0; kk < kcb; kk++) {
            const double *col = src + kk * j->a_cs;
            for (ptrdiff_t i0 = 0; i0 < rows; i0 += NX_DG_MR) {
                double *dst_k = dst + (i0 / NX_DG_MR) * kcb * NX_DG_MR + kk * NX_DG_MR;
                for (ptrdiff_t ii = 0; ii < NX_DG_MR; ii++) dst_k[ii] = col[i0 + ii];
            }
        }
        return;
    }
    for (ptrdiff_t i0 = 0; i0 < rows; i0 += NX_DG_MR) {
        ptrdiff_t mr = rows - i0 < NX_DG_MR ? rows - i0 : NX_DG_MR;
        double *panel = dst + (i0 / NX_DG_MR) * kcb * NX_DG_MR;
        const double *src = j->a + (r0 + i0) * j->a_rs + k0 * j->a_cs;
        if (j->a_cs == 1) {
            for (ptrdiff_t ii = 0; ii < mr; ii++)
                for (ptrdiff_t kk = 0; kk < kcb; kk++)
                    panel[kk * NX_DG_MR + ii] = src[ii * j->a_rs + kk];
        } else if (j->a_rs == 1) {
            for (ptrdiff_t kk = 0; kk < kcb; kk++)
                for (ptrdiff_t ii = 0; ii < mr; ii++)
                    panel[kk * NX_DG_MR + ii] = src[kk * j->a_cs + ii];
        } else {
            for (ptrdiff_t kk = 0; kk < kcb; kk++)
                for (ptrdiff_t ii = 0; ii < mr; ii++)
                    panel[kk * NX_DG_MR + ii] = src[kk * j->a_cs + ii * j->a_rs];
        }
        for (ptrdiff_t ii = mr; ii < NX_DG_MR; ii++)
            for (ptrdiff_t kk = 0; kk < kcb; kk++) panel[kk * NX_DG_MR + ii] = 0.0;
    }
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define NX_DG_SIMD 1
#define NX_DG_TARGET __attribute__((target("avx512f")))

/* One MR x NR tile: C[0:mr, 0:nr] (=, or += when accumulate) A @ B-panel, A's row i at
   arow[i][kk * kstep] (a packed micro-panel: arow[i] = panel + i, kstep = MR; A's own rows when
   they are contiguous: kstep = 1). */
NX_DG_TARGET static inline void nx_dg_tile(const double *const *arow, ptrdiff_t kstep,
                                           const double *bp, ptrdiff_t kcb,
                                           double *c, ptrdiff_t ldc, ptrdiff_t mr, ptrdiff_t nr,
                                           int accumulate) {
    __m512d c00 = _mm512_setzero_pd(), c01 = _mm512_setzero_pd();
    __m512d c10 = _mm512_setzero_pd(), c11 = _mm512_setzero_pd();
    __m512d c20 = _mm512_setzero_pd(), c21 = _mm512_setzero_pd();
    __m512d c30 = _mm512_setzero_pd(), c31 = _mm512_setzero_pd();
    __m512d c40 = _mm512_setzero_pd(), c41 = _mm512_setzero_pd();
    __m512d c50 = _mm512_setzero_pd(), c51 = _mm512_setzero_pd();
    __m512d c60 = _mm512_setzero_pd(), c61 = _mm512_setzero_pd();
    __m512d c70 = _mm512_setzero_pd(), c71 = _mm512_setzero_pd();
    ptrdiff_t o = 0;
    for (ptrdiff_t kk = 0; kk < kcb; kk++) {
        __m512d b0 = _mm512_load_pd(bp), b1 = _mm512_load_pd(bp + 8);
        __m512d a;
#define NX_DG_ROW(i)                                                  \
        a = _mm512_set1_pd(arow[i][o]);                                 \
        c##i##0 = _mm512_fmadd_pd(a, b0, c##i##0);                    \
        c##i##1 = _mm512_fmadd_pd(a, b1, c##i##1);
        NX_DG_ROW(0) NX_DG_ROW(1) NX_DG_ROW(2) NX_DG_ROW(3)
        NX_DG_ROW(4) NX_DG_ROW(5) NX_DG_ROW(6) NX_DG_ROW(7)
#undef NX_DG_ROW
        o += kstep;
        bp += NX_DG_NR;
    }
    __m512d acc[NX_DG_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                               {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
    if (nr == NX_DG_NR) {
        for (ptrdiff_t i = 0; i < mr; i++) {
            double *row = c + i * ldc;
            __m512d v0 = acc[i][0], v1 = acc[i][1];
            if (accumulate) {
                v0 = _mm512_add_pd(v0, _mm512_loadu_pd(row));
                v1 = _mm512_add_pd(v1, _mm512_loadu_pd(row + 8));
            }
            _mm512_storeu_pd(row, v0);
            _mm512_storeu_pd(row + 8, v1);
        }
    } else {
        __mmask8 m0 = nr >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << nr) - 1u);
        __mmask8 m1 = nr <= 8 ? (__mmask8)0 : (__mmask8)((1u << (nr - 8)) - 1u);
        for (ptrdiff_t i = 0; i < mr; i++) {
            double *row = c + i * ldc;
            __m512d v0 = acc[i][0], v1 = acc[i][1];
            if (accumulate) {
                v0 = _mm512_add_pd(v0, _mm512_maskz_loadu_pd(m0, row));
                v1 = _mm512_add_pd(v1, _mm512_maskz_loadu_pd(m1, row + 8));
            }
            _mm512_mask_storeu_pd(row, m0, v0);
            _mm512_mask_storeu_pd(row + 8, m1, v1);
        }
    }
}

/* The last panel of a narrow B (nr <= 8 columns: one vector): a 2 MR x 8 tile, 16 rows of A
   (arow as in nx_dg_tile) against the panel's first 8 columns, so the padding columns cost
   nothing. */
NX_DG_TARGET static inline void nx_dg_tile_narrow(const double *const *arow, ptrdiff_t kstep,
                                                  const double *bp, ptrdiff_t kcb, double *c,
                                                  ptrdiff_t ldc, ptrdiff_t mr, ptrdiff_t nr,
                                                  int accumulate) {
    __m512d acc[2 * NX_DG_MR];
    for (int i = 0; i < 2 * NX_DG_MR; i++) acc[i] = _mm512_setzero_pd();
    ptrdiff_t o = 0;
    for (ptrdiff_t kk = 0; kk < kcb; kk++) {
        __m512d b0 = _mm512_load_pd(bp);
        for (int i = 0; i < 2 * NX_DG_MR; i++)
            acc[i] = _mm512_fmadd_pd(_mm512_set1_pd(arow[i][o]), b0, acc[i]);
        o += kstep;
        bp += NX_DG_NR;
    }
    __mmask8 m0 = nr >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << nr) - 1u);
    for (ptrdiff_t i = 0; i < mr; i++) {
        double *row = c + i * ldc;
        __m512d v = acc[i];
        if (accumulate) v = _mm512_add_pd(v, _mm512_maskz_loadu_pd(m0, row));
        _mm512_mask_storeu_pd(row, m0, v);
    }
}

/* Micro-panels [lo, hi) of C's rows (MR rows each) against B's panels [plo, phi), NX_DG_MB
   micro-panels at a time: pack those rows of A, then every tile.  A tile's sums do not depend
   on the ranges (K blocks in order, the first storing), so any cut gives the same bits.  The bounded A buffer (at most MB x MR x KC elements) stays
   in the allocator's heap: a larger one is mapped afresh by each call (128 KiB is glibc's
   threshold), and its page faults cost as much as a small product's arithmetic. */
NX_DG_TARGET static void nx_dgemm_tiles(nx_dgemm_job *j, ptrdiff_t lo, ptrdiff_t hi,
                                    ptrdiff_t plo, ptrdiff_t phi) {
    if (hi <= lo || phi <= plo) return;
    /* A with contiguous rows is read in place (its packing costs as much as the arithmetic
       when B has few columns); other layouts are packed */
    int direct = j->a_cs == 1;
    ptrdiff_t span = direct ? 1 : (hi - lo < NX_DG_MB ? hi - lo : NX_DG_MB);
    size_t bytes = (size_t)(span * NX_DG_MR * j->kc) * sizeof(double);
    double *apack = (double *)aligned_alloc(64, (bytes + 63) / 64 * 64);  /* C11: a multiple */
    if (apack == NULL) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (ptrdiff_t g = lo; g < hi; g += NX_DG_MB) {
        ptrdiff_t r0 = g * NX_DG_MR;
        ptrdiff_t g1 = g + NX_DG_MB < hi ? g + NX_DG_MB : hi;
        ptrdiff_t r1 = g1 * NX_DG_MR < j->m ? g1 * NX_DG_MR : j->m;
        ptrdiff_t rows = r1 - r0;
        if (rows <= 0) break;
        for (ptrdiff_t kb = 0; kb < j->nkb; kb++) {
            ptrdiff_t k0, kcb = nx_dg_kblock(j, kb, &k0);
            if (!direct) nx_dgemm_pack_a(j, r0, rows, k0, kcb, apack);
            const double *bblock = j->bpack + kb * j->kc * j->npanels * NX_DG_NR;
            for (ptrdiff_t p = plo; p < phi; p++) {
                ptrdiff_t c0 = p * NX_DG_NR;
                ptrdiff_t nr = j->n - c0 < NX_DG_NR ? j->n - c0 : NX_DG_NR;
                const double *bp = bblock + p * kcb * NX_DG_NR;
                if (nr <= 8) {
                    for (ptrdiff_t i0 = 0; i0 < rows; i0 += 2 * NX_DG_MR) {
                        ptrdiff_t mr = rows - i0 < 2 * NX_DG_MR ? rows - i0 : 2 * NX_DG_MR;
                        const double *arow[2 * NX_DG_MR];
                        for (ptrdiff_t ii = 0; ii < 2 * NX_DG_MR; ii++) {
                            /* rows past the edge read a valid row again (never stored) */
                            ptrdiff_t r = ii < mr ? ii : mr - 1;
                            if (direct)
                                arow[ii] = j->a + (r0 + i0 + r) * j->a_rs + k0;
                            else
                                arow[ii] = apack + ((i0 + r) / NX_DG_MR) * kcb * NX_DG_MR
                                           + (i0 + r) % NX_DG_MR;
                        }
                        nx_dg_tile_narrow(arow, direct ? 1 : NX_DG_MR, bp, kcb,
                                          j->c + (r0 + i0) * j->ldc + c0, j->ldc, mr, nr,
                                          kb > 0);
                    }
                    continue;
                }
                for (ptrdiff_t i0 = 0; i0 < rows; i0 += NX_DG_MR) {
                    ptrdiff_t mr = rows - i0 < NX_DG_MR ? rows - i0 : NX_DG_MR;
                    const double *arow[NX_DG_MR];
                    if (direct) {
                        /* rows past the edge read the last row again (never stored) */
                        for (ptrdiff_t ii = 0; ii < NX_DG_MR; ii++)
                            arow[ii] = j->a + (r0 + i0 + (ii < mr ? ii : mr - 1)) * j->a_rs + k0;
                    } else {
                        const double *panel = apack + (i0 / NX_DG_MR) * kcb * NX_DG_MR;
                        for (ptrdiff_t ii = 0; ii < NX_DG_MR; ii++) arow[ii] = panel + ii;
                    }
                    nx_dg_tile(arow, direct ? 1 : NX_DG_MR, bp, kcb,
                                  j->c + (r0 + i0) * j->ldc + c0, j->ldc, mr, nr, kb > 0);
                }
            }
        }
    }
    free(apack);
}

/* Micro-panels [lo, hi) of C's rows against every panel of B (packed beforehand). */
static void nx_dgemm_rows(nx_dgemm_job *j, ptrdiff_t lo, ptrdiff_t hi) {
    nx_dgemm_tiles(j, lo, hi, 0, j->npanels);
}

/* Panels [plo, phi) of C's columns: pack those panels of B, then every row's tiles against
   them.  Cut by columns, each thread reads back only the panels it packed (from its own
   cache); cut by rows, every thread reads every panel, half of them from the other core's. */
static void nx_dgemm_cols(nx_dgemm_job *j, ptrdiff_t plo, ptrdiff_t phi) {
    nx_dgemm_pack_b(j, plo, phi);
    nx_dgemm_tiles(j, 0, (j->m + NX_DG_MR - 1) / NX_DG_MR, plo, phi);
}

#else
#define NX_DG_SIMD 0
static void nx_dgemm_rows(nx_dgemm_job *j, ptrdiff_t lo, ptrdiff_t hi) {
    (void)lo; (void)hi;
    j->failed = 1;
}
static void nx_dgemm_cols(nx_dgemm_job *j, ptrdiff_t plo, ptrdiff_t phi) {
    (void)plo; (void)phi;
    j->failed = 1;
}
#endif

#endif
