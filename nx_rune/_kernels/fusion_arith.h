/* AVX-512 loops for the fused-kernel VM's float32/float64 add, subtract, multiply and divide
 * (fusion.pyx ``arith_loop``), with NumPy's ufunc loop signature.
 *
 * The VM runs each instruction over a block of about a thousand elements in cache; NumPy's own
 * loops for these four operations spend a large part of such a block in their dispatch (the
 * checks of overlap and strides that a whole-array call needs).  These loops do the one thing
 * the VM asks: a contiguous or broadcast (stride 0) operand, a contiguous output, 16 (float32)
 * or 8 (float64) lanes per instruction with a masked tail; any other strides take a scalar
 * loop.  Each result is the one correctly rounded IEEE operation, as NumPy's: the values are
 * the same bit for bit (one operation per loop: nothing for a compiler to contract).
 *
 * Compiled for avx512f through a target attribute and offered only where the CPU has it
 * (``nxr_arith_entry`` returns NULL otherwise, and the VM keeps NumPy's loops).
 */
#ifndef NX_RUNE_FUSION_ARITH_H
#define NX_RUNE_FUSION_ARITH_H

#include <numpy/npy_common.h>

#include "fusion_loops.h"

/* a chain's program (see "chains" below) */
#define NXR_CHAIN_MAX 16

typedef struct {
    int nargs;                       /* operands before the output (args[0] is the start) */
    int nsteps;
    int op[NXR_CHAIN_MAX];           /* 0 add, 1 subtract, 2 multiply, 3 divide */
    int arg[NXR_CHAIN_MAX];          /* the step's operand: an index into args */
    int swap[NXR_CHAIN_MAX];         /* 1: operand OP value */
} nxr_chain;

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define NXR_AR_TARGET __attribute__((target("avx512f")))

/* the vector loop over o[i..n) of VOP(first, second), the operands' vectors given as
   expressions of i (VA, VB) and, for the masked tail, of i and the mask m (MVA, MVB) */
#define NXR_AR_RUN(LANES, MASK, ST, MST, VOP, VA, MVA, VB, MVB)                                \
    for (; i + LANES <= n; i += LANES) ST(o + i, VOP(VA, VB));                                 \
    if (i < n) {                                                                              \
        MASK m = (MASK)((1u << (n - i)) - 1u);                                                \
        MST(o + i, m, VOP(MVA, MVB));                                                         \
    }

/* NAME: loop of OP (an expression of va, vb) for element type T, vector type V, LANES lanes,
   loads LD / masked loads MLD, stores ST / masked stores MST, broadcast SET1, scalar SOP */
#define NXR_ARITH(NAME, T, V, LANES, MASK, LD, MLD, ST, MST, SET1, VOP, SOP)                    \
    NXR_AR_TARGET static void NAME(char **args, const npy_intp *dims, const npy_intp *steps,  \
                                   void *data) {                                             \
        npy_intp n = dims[0], s0 = steps[0], s1 = steps[1], s2 = steps[2];                   \
        (void)data;                                                                           \
        if (s2 == (npy_intp)sizeof(T) && (s0 == (npy_intp)sizeof(T) || s0 == 0) &&            \
                (s1 == (npy_intp)sizeof(T) || s1 == 0)) {                                    \
            const T *a = (const T *)args[0], *b = (const T *)args[1];                        \
            T *o = (T *)args[2];                                                              \
            npy_intp i = 0;                                                                   \
            if (s0 && s1) {                                                                   \
                NXR_AR_RUN(LANES, MASK, ST, MST, VOP, LD(a + i), MLD(m, a + i),               \
                           LD(b + i), MLD(m, b + i))                                          \
            } else if (s0) {                                                                  \
                const V vb = SET1(*b);                                                        \
                NXR_AR_RUN(LANES, MASK, ST, MST, VOP, LD(a + i), MLD(m, a + i), vb, vb)       \
            } else if (s1) {                                                                  \
                const V va = SET1(*a);                                                        \
                NXR_AR_RUN(LANES, MASK, ST, MST, VOP, va, va, LD(b + i), MLD(m, b + i))       \
            } else {                                                                          \
                const T r = SOP(*a, *b);                                                      \
                for (; i < n; i++) o[i] = r;                                                  \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        char *pa = args[0], *pb = args[1], *po = args[2];                                     \
        for (npy_intp i = 0; i < n; i++, pa += s0, pb += s1, po += s2)                        \
            *(T *)po = SOP(*(const T *)pa, *(const T *)pb);                                   \
    }

#define NXR_SADD(x, y) ((x) + (y))
#define NXR_SSUB(x, y) ((x) - (y))
#define NXR_SMUL(x, y) ((x) * (y))
#define NXR_SDIV(x, y) ((x) / (y))

#define NXR_ARITH_F32(NAME, VOP, SOP)                                                          \
    NXR_ARITH(NAME, float, __m512, 16, __mmask16, _mm512_loadu_ps, _mm512_maskz_loadu_ps,      \
              _mm512_storeu_ps, _mm512_mask_storeu_ps, _mm512_set1_ps, VOP, SOP)
#define NXR_ARITH_F64(NAME, VOP, SOP)                                                          \
    NXR_ARITH(NAME, double, __m512d, 8, __mmask8, _mm512_loadu_pd, _mm512_maskz_loadu_pd,      \
              _mm512_storeu_pd, _mm512_mask_storeu_pd, _mm512_set1_pd, VOP, SOP)

NXR_ARITH_F32(nxr_add_f32, _mm512_add_ps, NXR_SADD)
NXR_ARITH_F32(nxr_sub_f32, _mm512_sub_ps, NXR_SSUB)
NXR_ARITH_F32(nxr_mul_f32, _mm512_mul_ps, NXR_SMUL)
NXR_ARITH_F32(nxr_div_f32, _mm512_div_ps, NXR_SDIV)
NXR_ARITH_F64(nxr_add_f64, _mm512_add_pd, NXR_SADD)
NXR_ARITH_F64(nxr_sub_f64, _mm512_sub_pd, NXR_SSUB)
NXR_ARITH_F64(nxr_mul_f64, _mm512_mul_pd, NXR_SMUL)
NXR_ARITH_F64(nxr_div_f64, _mm512_div_pd, NXR_SDIV)

/* the loop of op (0 add, 1 subtract, 2 multiply, 3 divide) for type (0 float32, 1 float64), or
   NULL (no AVX-512 here, or an unknown op/type) */
static nxr_loop nxr_arith_entry(int op, int type) {
    static const nxr_loop table[2][4] = {
        {nxr_add_f32, nxr_sub_f32, nxr_mul_f32, nxr_div_f32},
        {nxr_add_f64, nxr_sub_f64, nxr_mul_f64, nxr_div_f64}};
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || op < 0 || op > 3 || type < 0 || type > 1)
        return NULL;
    return table[type][op];
}

/* -- chains: a run of these operations on one value, kept in registers ------------------------
 *
 * v = args[0]; then for each step k: v = v OP args[arg_k] (or args[arg_k] OP v when swapped);
 * the result goes to args[nargs] (the output).  Each step is the one IEEE operation of the
 * single loops above, in the same order, so the values are theirs bit for bit; what is saved is
 * the store and reload of every intermediate block.  Operands are contiguous or broadcast
 * (stride 0), the output contiguous; other strides take the scalar loop.  Steps are dispatched
 * once per group of eight vectors. */

/* one step, CODE = op * 2 + swap, on V and W (EACH: a loop header to run it under, or empty) */
#define NXR_STEP(CODE, EACH, V, W, ADD, SUB, MUL, DIV)                                          \
    switch (CODE) {                                                                             \
    case 0: EACH V = ADD(V, W); break;                                                          \
    case 1: EACH V = ADD(W, V); break;                                                          \
    case 2: EACH V = SUB(V, W); break;                                                          \
    case 3: EACH V = SUB(W, V); break;                                                          \
    case 4: EACH V = MUL(V, W); break;                                                          \
    case 5: EACH V = MUL(W, V); break;                                                          \
    case 6: EACH V = DIV(V, W); break;                                                          \
    default: EACH V = DIV(W, V); break;                                                         \
    }

#define NXR_EACH8 for (int u = 0; u < 8; u++)

#define NXR_CHAIN_LOOP(NAME, T, V, LANES, MASK, LD, MLD, ST, MST, SET1, ADD, SUB, MUL, DIV)     \
    NXR_AR_TARGET static inline V NAME##_mget(const char *p, npy_intp s, npy_intp i, MASK m) { \
        return s ? MLD(m, (const T *)p + i) : SET1(*(const T *)p);                              \
    }                                                                                           \
    NXR_AR_TARGET static void NAME(char **args, const npy_intp *dims, const npy_intp *steps,   \
                                   void *data) {                                               \
        const nxr_chain *c = (const nxr_chain *)data;                                           \
        npy_intp n = dims[0], i = 0;                                                            \
        int na = c->nargs, contiguous = steps[na] == (npy_intp)sizeof(T);                       \
        for (int a = 0; a < na; a++)                                                            \
            if (steps[a] != 0 && steps[a] != (npy_intp)sizeof(T)) contiguous = 0;              \
        if (contiguous) {                                                                       \
            T *o = (T *)args[na];                                                               \
            for (; i + 8 * LANES <= n; i += 8 * LANES) {                                        \
                V v[8], w[8];                                                                   \
                const T *p0 = (const T *)args[0];                                               \
                NXR_EACH8 v[u] = steps[0] ? LD(p0 + i + u * LANES) : SET1(*p0);                 \
                for (int k = 0; k < c->nsteps; k++) {                                           \
                    const T *p = (const T *)args[c->arg[k]];                                    \
                    if (steps[c->arg[k]]) {                                                     \
                        NXR_EACH8 w[u] = LD(p + i + u * LANES);                                 \
                    } else {                                                                    \
                        V b = SET1(*p);                                                         \
                        NXR_EACH8 w[u] = b;                                                     \
                    }                                                                           \
                    NXR_STEP(c->op[k] * 2 + c->swap[k], NXR_EACH8, v[u], w[u],                  \
                             ADD, SUB, MUL, DIV)                                                \
                }                                                                               \
                NXR_EACH8 ST(o + i + u * LANES, v[u]);                                          \
            }                                                                                   \
            for (; i < n; i += LANES) {                                                         \
                MASK m = n - i >= LANES ? (MASK)~(MASK)0 : (MASK)((1u << (n - i)) - 1u);        \
                V v = NAME##_mget(args[0], steps[0], i, m);                                     \
                for (int k = 0; k < c->nsteps; k++) {                                           \
                    V w = NAME##_mget(args[c->arg[k]], steps[c->arg[k]], i, m);                 \
                    NXR_STEP(c->op[k] * 2 + c->swap[k], , v, w, ADD, SUB, MUL, DIV)            \
                }                                                                               \
                MST(o + i, m, v);                                                               \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        for (; i < n; i++) {                                                                    \
            T v = *(const T *)(args[0] + i * steps[0]);                                         \
            for (int k = 0; k < c->nsteps; k++) {                                               \
                T w = *(const T *)(args[c->arg[k]] + i * steps[c->arg[k]]);                     \
                NXR_STEP(c->op[k] * 2 + c->swap[k], , v, w,                                     \
                         NXR_SADD, NXR_SSUB, NXR_SMUL, NXR_SDIV)                                \
            }                                                                                   \
            *(T *)(args[na] + i * steps[na]) = v;                                               \
        }                                                                                       \
    }

NXR_CHAIN_LOOP(nxr_chain_f32, float, __m512, 16, __mmask16, _mm512_loadu_ps,
               _mm512_maskz_loadu_ps, _mm512_storeu_ps, _mm512_mask_storeu_ps, _mm512_set1_ps,
               _mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps, _mm512_div_ps)
NXR_CHAIN_LOOP(nxr_chain_f64, double, __m512d, 8, __mmask8, _mm512_loadu_pd,
               _mm512_maskz_loadu_pd, _mm512_storeu_pd, _mm512_mask_storeu_pd, _mm512_set1_pd,
               _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd, _mm512_div_pd)

/* the chain loop for type (0 float32, 1 float64), or NULL (no AVX-512 here) */
static nxr_loop nxr_chain_entry(int type) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || type < 0 || type > 1)
        return NULL;
    return type ? nxr_chain_f64 : nxr_chain_f32;
}
#else
static nxr_loop nxr_arith_entry(int op, int type) { (void)op; (void)type; return NULL; }
static nxr_loop nxr_chain_entry(int type) { (void)type; return NULL; }
#endif

#endif
