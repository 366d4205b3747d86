# Fused samplers on Threefry bits (included by threefry.pyx).
#
# A textual include, not a module of its own: it compiles into nx_rune._kernels.threefry, so its
# inline kernels stay inline in their callers.  It uses the imports and cimports of threefry.pyx
# (all kept there, where the layering test reads them).

# ---------------------------------------------------------------------------------------------
# Fused samplers: counter -> bits -> float -> transform in one pass over cache-sized chunks
#
# nx_rune.random defines its values by a chain of NumPy operations (see random.py); these
# kernels compute the same values in C, rounding step for step as NumPy does: float32 steps in
# float32, the fused multiply-adds of the reference as one rounding (float32: an exact float64
# product and sum, then float32; float64: fma()), the float32 erfinv Horner steps through float64
# and back.  Everything is compiled without floating-point contraction, so every target clone
# rounds alike.  The float32 log and log1p are not NumPy's (nor a correctly rounded one) but
# XLA:CPU's own float32 arithmetic (nx_rt_xla_log32/log1p32 below, their fused multiply-adds
# as fmaf), so that normal, truncated_normal and gumbel equal JAX's bit for bit.  No element
# is "hard" any more; the flag stays for transforms that may need NumPy again.
# The float64 samplers take XLA's float64 log1p (nx_rt_xla_log1p64) between two fused passes.
# ---------------------------------------------------------------------------------------------

cdef extern from *:
    """
    #include <math.h>
    #if defined(__GNUC__) && defined(__x86_64__) && defined(__GLIBC__) && \\
        (!defined(__clang__) || __clang_major__ >= 14) && !defined(NX_RUNE_NO_CLONES)
    #define NX_RT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \\
                                                       "default")))
    #else
    #define NX_RT_CLONES
    #endif
    /* No contraction of a * b + c into an fma: the reference rounds the product first. */
    #if defined(__GNUC__) && !defined(__clang__)
    #define NX_RT_EXACT __attribute__((optimize("fp-contract=off")))
    #else
    #define NX_RT_EXACT
    #endif
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif

    #define NX_RT_FLAG_HARD 1
    #define NX_RT_FLAG_LARGE 2

    enum { NX_RT_UNIT = 0, NX_RT_UNIFORM = 1, NX_RT_NORMAL = 2, NX_RT_TRUNCNORM = 3,
           NX_RT_GUMBEL = 4 };

    typedef struct {
        int op;
        float lo, span;              /* u = max(lo, float32(f * span + lo)) */
        float clip_lo, clip_hi;      /* truncated normal: the final clip */
        float scale;                 /* normal: scale * erfinv(u) (sqrt(2); 1: erfinv alone) */
    } nx_rt_params32;

    typedef struct {
        double lo, span;             /* u = max(lo, fma(f, span, lo)) */
        int ranged;
    } nx_rt_params64;

    static inline double nx_rt_d(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
    static inline uint64_t nx_rt_u64(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }
    static inline float nx_rt_f(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
    /* c ? a : b through the bits: GCC keeps a plain ?: of doubles as a branch in some loops
       (and then does not vectorize them) */
    static inline double nx_rt_sel(int c, double a, double b) {
        uint64_t m = -(uint64_t)(c != 0);
        return nx_rt_d((nx_rt_u64(a) & m) | (nx_rt_u64(b) & ~m));
    }
    static inline float nx_rt_self(int c, float a, float b) {
        uint32_t m = -(uint32_t)(c != 0), ua, ub;
        memcpy(&ua, &a, 4);
        memcpy(&ub, &b, 4);
        return nx_rt_f((ua & m) | (ub & ~m));
    }

    /* XLA:CPU's float32 log, the arithmetic its compiled code performs for a log (Cephes'
       logf as Eigen writes it, the multiply-adds XLA's LLVM contracts as fmaf): the mantissa
       m in [sqrt(1/2), sqrt(2)) and the exponent e, then log(1 + z) for z = m - 1 by a
       polynomial.  Denormal inputs count as zero, as XLA flushes them. */
    static inline float nx_rt_xla_log32(float x) {
        const float p0 = 7.0376836292E-2f, p1 = -1.1514610310E-1f, p2 = 1.1676998740E-1f,
                    p3 = -1.2420140846E-1f, p4 = 1.4249322787E-1f, p5 = -1.6668057665E-1f,
                    p6 = 2.0000714765E-1f, p7 = -2.4999993993E-1f, p8 = 3.3333331174E-1f;
        float t = nx_rt_self(x > 0x1p-126f, x, 0x1p-126f);
        uint32_t b;
        memcpy(&b, &t, 4);
        float e = 1.0f + (float)((int32_t)(b >> 23) - 127);
        float m = nx_rt_f((b & 0x807fffffu) | 0x3f000000u);      /* in [1/2, 1) */
        int lt = m < 0.707106781186547524f;
        float z = (m - 1.0f) + nx_rt_self(lt, m, 0.0f);           /* 2m - 1 or m - 1 */
        e = e - (float)lt;
        float z2 = z * z, z3 = z2 * z;
        float y = fmaf(z, p0, p1), y1 = fmaf(z, p3, p4), y2 = fmaf(z, p6, p7);
        y = fmaf(y, z, p2);
        y1 = fmaf(y1, z, p5);
        y2 = fmaf(y2, z, p8);
        y = fmaf(y, z3, y1);
        y = fmaf(y, z3, y2);
        y = fmaf(y, z3, -2.12194440e-4f * e);
        float r = fmaf(-0.5f, z2, z) + y;
        r = fmaf(0.693359375f, e, r);
        r = nx_rt_self(fabsf(x) < 0x1p-126f, -INFINITY, r);   /* zero (or denormal) */
        r = nx_rt_self(x == INFINITY, INFINITY, r);
        return nx_rt_self((x <= -0x1p-126f) | (x != x), NAN, r);
    }

    /* XLA:CPU's float32 log1p: for |x| < sqrt(2) - 1 Cephes' rational approximation
       x - x^2/2 + x^3 P(x)/Q(x) (Horner steps as fmaf), else log(1 + x) by the log above. */
    static inline float nx_rt_xla_log1p32(float x) {
        float x2 = x * x;
        float pn = fmaf(4.5270000862445199635215E-5f, x, 4.9854102823193375972212E-1f);
        pn = fmaf(pn, x, 6.5787325942061044846969E0f);
        pn = fmaf(pn, x, 2.9911919328553073277375E1f);
        pn = fmaf(pn, x, 6.0949667980987787057556E1f);
        pn = fmaf(pn, x, 5.7112963590585538103336E1f);
        pn = fmaf(pn, x, 2.0039553499201281259648E1f);
        float pd = x + 1.5062909083469192043167E1f;          /* fmaf(1, x, c) */
        pd = fmaf(pd, x, 8.3047565967967209469434E1f);
        pd = fmaf(pd, x, 2.2176239823732856465394E2f);
        pd = fmaf(pd, x, 3.0909872225312059774938E2f);
        pd = fmaf(pd, x, 2.1642788614495947685003E2f);
        pd = fmaf(pd, x, 6.0118660497603843919306E1f);
        float small = x + fmaf(-0.5f, x2, (x * x2) * (pn / pd));
        small = nx_rt_self(fabsf(x) < 0x1p-126f, x * 0.0f, small);   /* denormal: flushed */
        float large = nx_rt_xla_log32(x + 1.0f);
        return nx_rt_self(fabsf(x) < 0.41421356237309504880f, small, large);
    }

    /* XLA:CPU's float32 exp (Cephes' expf as its compiled code evaluates it, the
       multiply-adds its LLVM contracts as fmaf): x clamped to [-87.8, 88.8], n = floor(x log2(e)
       + 1/2) clamped to [-127, 127], r = x - n ln(2) in two steps, a degree-7 polynomial in r,
       and 2**n from the exponent bits (n = -127 gives 0: no denormal results). */
    static inline float nx_rt_xla_exp32(float x) {
        float xc = (x >= -87.8f || x != x) ? x : -87.8f;        /* a NaN stays a NaN */
        xc = (xc <= 88.8f || xc != xc) ? xc : 88.8f;
        float n = floorf(fmaf(xc, nx_rt_f(0x3fb8aa3bu), 0.5f));
        n = (n >= -127.0f || n != n) ? n : -127.0f;
        n = (n <= 127.0f || n != n) ? n : 127.0f;
        float r = fmaf(-n, 0.693359375f, xc);
        r = fmaf(-n, nx_rt_f(0xb95e8083u), r);
        float y = fmaf(r, nx_rt_f(0x39506967u), nx_rt_f(0x3ab743ceu));
        y = fmaf(y, r, nx_rt_f(0x3c088908u));
        y = fmaf(y, r, nx_rt_f(0x3d2aa9c1u));
        y = fmaf(y, r, nx_rt_f(0x3e2aaaaau));
        y = fmaf(y, r, 0.5f);
        y = fmaf(y, r * r, r) + 1.0f;
        /* (a NaN n converts to INT32_MIN, as cvttps2dq answers; y is NaN then anyway) */
        uint32_t ni = n == n ? (uint32_t)(int32_t)n : 0x80000000u;
        return y * nx_rt_f((ni + 127u) << 23);
    }

    /* XLA:CPU's float64 exp (its own intrinsic: Cephes' rational approximation
       1 + 2 g P(g^2) / (Q(g^2) - g P(g^2)) after x = n ln(2) + g, the multiply-adds contracted
       as fma), 0 below -708.396..., inf above 709.782... */
    static inline double nx_rt_xla_exp64(double x) {
        const double lo = -708.3964185322641, hi = 709.782712893384;
        double xc = x != x ? x : (x < hi ? x : hi);
        xc = xc != xc ? xc : (xc > lo ? xc : lo);
        double n = floor(fma(xc, 1.4426950408889634073599, 0.5));
        double g = fma(-n, 0.693145751953125, xc);
        g = fma(-n, 1.42860682030941723212e-6, g);
        double g2 = g * g;
        double p = fma(fma(1.26177193074810590878e-4, g2, 3.02994407707441961300e-2), g2,
                       9.99999999999999999910e-1) * g;
        double q = fma(fma(fma(3.00198505138664455042e-6, g2, 2.52448340349684104192e-3), g2,
                           2.27265548208155028766e-1), g2, 2.0);
        double e = fma(p / (q - p), 2.0, 1.0);
        double r = n == n ? ldexp(e, (int)n) : e;
        r = x < lo ? 0.0 : r;
        return x > hi ? INFINITY : r;
    }

    /* XLA:CPU's float64 log1p: for |x| < sqrt(2) - 1 the rational approximation of the float32
       one in float64 coefficients (Horner steps as fma, the leading x * 0 + c unfused), else
       the C library's log(1 + x), which XLA calls. */
    static inline double nx_rt_xla_log1p64(double x) {
        double x0 = x * 0.0;
        double pn = x0 + 4.5270000862445199635215E-5;
        pn = fma(pn, x, 4.9854102823193375972212E-1);
        pn = fma(pn, x, 6.5787325942061044846969E0);
        pn = fma(pn, x, 2.9911919328553073277375E1);
        pn = fma(pn, x, 6.0949667980987787057556E1);
        pn = fma(pn, x, 5.7112963590585538103336E1);
        pn = fma(pn, x, 2.0039553499201281259648E1);
        double pd = x0 + 1.0;
        pd = fma(pd, x, 1.5062909083469192043167E1);
        pd = fma(pd, x, 8.3047565967967209469434E1);
        pd = fma(pd, x, 2.2176239823732856465394E2);
        pd = fma(pd, x, 3.0909872225312059774938E2);
        pd = fma(pd, x, 2.1642788614495947685003E2);
        pd = fma(pd, x, 6.0118660497603843919306E1);
        double x2 = x * x;
        double small = x + fma(x2, -0.5, (x * x2) * (pn / pd));
        return fabs(x) < 0.41421356237309504880 ? small : log(x + 1.0);
    }

    /* XLA's compiled code runs with the SSE control register's flush-to-zero and
       denormals-are-zero bits set, the C library's pow and tan with it: the same bits here
       for those calls (restored after). */
    #if defined(__x86_64__) || defined(__SSE2__)
    #include <xmmintrin.h>
    #define NX_RT_MXCSR_FLUSH 0x8040u
    static inline unsigned int nx_rt_flush_on(void) {
        unsigned int old = _mm_getcsr();
        _mm_setcsr(old | NX_RT_MXCSR_FLUSH);
        return old;
    }
    static inline void nx_rt_flush_off(unsigned int old) { _mm_setcsr(old); }
    #else
    static inline unsigned int nx_rt_flush_on(void) { return 0; }
    static inline void nx_rt_flush_off(unsigned int old) { (void)old; }
    #endif

    /* A denormal float32 flushed to (signed) zero, as XLA's arithmetic does. */
    static inline float nx_rt_ftz32(float x) {
        return fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x;
    }

    /* XLA:CPU's scalar rsqrt (what a / sqrt(b) becomes in its algebraic simplifier): the
       processor's own estimate (rsqrtss for float32, AVX-512's vrsqrt14pd for float64), then
       Newton steps y += (-y/2) ((x y) y - 1) with the multiply-adds contracted; one step for
       float32 on AMD processors (their estimate is finer), two otherwise; the estimate itself
       below the smallest normal and at inf.  The estimates differ between processor makers, so
       JAX's own values do; these are the ones of the processor this runs on, as JAX's are. */
    #if defined(__x86_64__) && defined(__GNUC__)
    #include <immintrin.h>
    static int nx_rt_rsqrt_steps32 = -1;
    static inline float nx_rt_xla_rsqrt32(float x) {
        if (nx_rt_rsqrt_steps32 < 0) {
            __builtin_cpu_init();
            nx_rt_rsqrt_steps32 = __builtin_cpu_is("amd") ? 1 : 2;
        }
        float y = _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x)));
        if (x < 0x1p-126f || x == INFINITY)
            return y;
        for (int i = 0; i < nx_rt_rsqrt_steps32; i++) {
            float half = y * -0.5f;
            float h = fmaf(x * y, y, -1.0f);
            y = fmaf(half, h, y);
        }
        return y;
    }
    __attribute__((target("avx512f,avx512vl")))
    static double nx_rt_rsqrt14_64(double x) {
        return _mm_cvtsd_f64(_mm_rsqrt14_pd(_mm_set_sd(x)));
    }
    static inline double nx_rt_xla_rsqrt64(double x) {
        if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl"))
            return 1.0 / sqrt(x);
        double y = nx_rt_rsqrt14_64(x);
        if (x < 0x1p-1022 || x == INFINITY)
            return y;
        for (int i = 0; i < 2; i++) {
            double half = y * -0.5;
            double h = fma(x * y, y, -1.0);
            y = fma(half, h, y);
        }
        return y;
    }
    #else
    static inline float nx_rt_xla_rsqrt32(float x) { return 1.0f / sqrtf(x); }
    static inline double nx_rt_xla_rsqrt64(double x) { return 1.0 / sqrt(x); }
    #endif

    enum { NX_XM_EXP = 0, NX_XM_LOG = 1, NX_XM_LOG1P = 2, NX_XM_TAN = 3, NX_XM_POW = 4,
           NX_XM_RSQRT = 5, NX_XM_ERF = 6, NX_XM_YNN_EXP = 7, NX_XM_YNN_LOG = 8,
           NX_XM_YNN_LOG1P = 9 };

    /* YNNPACK's exp, log and sums, for the fusions XLA:CPU hands to it */
    #include "xla_math_ynn.h"

    /* XLA:CPU's float32 erf: x P(x^2) / Q(x^2), each Horner step one fma, +-1 from
       |x| >= 3.832506856900711 (where it rounds to 1); nx_rune.backend.random._xla_erf32. */
    static const float nx_rt_xla_erf32_p[5] = {
        0.00022905065861350646f, 0.0034082910107109506f, 0.050955695062380861f,
        0.18520832239976145f, 1.128379143519084f};
    static const float nx_rt_xla_erf32_q[7] = {
        -1.1791602954361697e-7f, 0.000023547966471313185f, 0.0010179625278914885f,
        0.014070470171167667f, 0.11098505178285362f, 0.49746925110067538f, 1.0f};
    NX_RT_EXACT
    static inline float nx_rt_xla_erf32(float x) {
        float x2 = x * x, p = nx_rt_xla_erf32_p[0], q = nx_rt_xla_erf32_q[0];
        int i;
        if (fabsf(x) >= 3.832506856900711f) return copysignf(1.0f, x);
        for (i = 1; i < 5; i++) p = fmaf(x2, p, nx_rt_xla_erf32_p[i]);
        for (i = 1; i < 7; i++) q = fmaf(x2, q, nx_rt_xla_erf32_q[i]);
        return (x * p) / q;
    }

    /* out[j] = op(x[j]) (op(x[j], y[j]) for pow) as JAX computes it on CPU, float32. */
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_xla_math32(int op, const float *x, const float *y, float *out,
                                 Py_ssize_t n) {
        Py_ssize_t j;
        unsigned int mxcsr = nx_rt_flush_on();
        switch (op) {
        case NX_XM_EXP: for (j = 0; j < n; j++) out[j] = nx_rt_ftz32(nx_rt_xla_exp32(x[j])); break;
        case NX_XM_LOG: for (j = 0; j < n; j++) out[j] = nx_rt_xla_log32(x[j]); break;
        case NX_XM_LOG1P: for (j = 0; j < n; j++) out[j] = nx_rt_xla_log1p32(x[j]); break;
        case NX_XM_TAN: for (j = 0; j < n; j++) out[j] = tanf(x[j]); break;
        case NX_XM_RSQRT: for (j = 0; j < n; j++) out[j] = nx_rt_xla_rsqrt32(x[j]); break;
        case NX_XM_ERF: for (j = 0; j < n; j++) out[j] = nx_rt_xla_erf32(x[j]); break;
        case NX_XM_YNN_EXP: for (j = 0; j < n; j++) out[j] = nx_ynn_exp32(x[j]); break;
        case NX_XM_YNN_LOG: for (j = 0; j < n; j++) out[j] = nx_ynn_log32(x[j], 0); break;
        case NX_XM_YNN_LOG1P: for (j = 0; j < n; j++) out[j] = nx_ynn_log32(x[j], 1); break;
        default:
            for (j = 0; j < n; j++)
                out[j] = powf(x[j], y[j]);
            break;
        }
        nx_rt_flush_off(mxcsr);
    }

    /* The same in float64 (exp and log1p XLA's own; log, tan, pow and erf the C library's:
       XLA:CPU's compiled code calls erf for a float64 erf). */
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_xla_math64(int op, const double *x, const double *y, double *out,
                                 Py_ssize_t n) {
        Py_ssize_t j;
        unsigned int mxcsr = nx_rt_flush_on();
        switch (op) {
        case NX_XM_EXP: for (j = 0; j < n; j++) out[j] = nx_rt_xla_exp64(x[j]); break;
        case NX_XM_LOG: for (j = 0; j < n; j++) out[j] = log(x[j]); break;
        case NX_XM_LOG1P: for (j = 0; j < n; j++) out[j] = nx_rt_xla_log1p64(x[j]); break;
        case NX_XM_TAN: for (j = 0; j < n; j++) out[j] = tan(x[j]); break;
        case NX_XM_RSQRT: for (j = 0; j < n; j++) out[j] = nx_rt_xla_rsqrt64(x[j]); break;
        case NX_XM_ERF: for (j = 0; j < n; j++) out[j] = erf(x[j]); break;
        case NX_XM_YNN_EXP: for (j = 0; j < n; j++) out[j] = nx_ynn_exp64(x[j]); break;
        case NX_XM_YNN_LOG: for (j = 0; j < n; j++) out[j] = nx_ynn_log64(x[j], 0); break;
        case NX_XM_YNN_LOG1P: for (j = 0; j < n; j++) out[j] = nx_ynn_log64(x[j], 1); break;
        default:
            for (j = 0; j < n; j++)
                out[j] = pow(x[j], y[j]);
            break;
        }
        nx_rt_flush_off(mxcsr);
    }

    /* out[j] = a[j] * b[j] + c[j] rounded once (the multiply-adds XLA contracts). */
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_fma32(const float *a, const float *b, const float *c, float *out,
                            Py_ssize_t n) {
        for (Py_ssize_t j = 0; j < n; j++)
            out[j] = fmaf(a[j], b[j], c[j]);
    }
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_fma64(const double *a, const double *b, const double *c, double *out,
                            Py_ssize_t n) {
        for (Py_ssize_t j = 0; j < n; j++)
            out[j] = fma(a[j], b[j], c[j]);
    }

    /* Giles' float32 erfinv, rows for w < 5 and w >= 5, highest degree first. */
    static const float nx_rt_erfinv32_c[2][9] = {
        {2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
         -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f},
        {-0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
         -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f}};

    /* -log1p(v) for erfinv's v = x * -x, as XLA computes it (no element is hard). */
    static inline float nx_rt_neglog1p32(float v, int *hard) {
        *hard = 0;
        return -nx_rt_xla_log1p32(v);
    }

    /* Horner in t, each step p * t + c in float64 (the product is exact) rounded to float32. */
    static inline float nx_rt_horner32(float t, const float *c) {
        double td = (double)t, p = (double)c[0];
        for (int i = 1; i < 9; i++)
            p = (double)(float)(p * td + (double)c[i]);
        return (float)p;
    }

    /* scale * erfinv(x) in float32 (scale sqrt(2): the normal), every branch (the loops take
       w < 5 and fix the rest). */
    NX_RT_EXACT
    static float nx_rt_sqrt2_erfinv32(float x, int *hard, float scale) {
        float w = nx_rt_neglog1p32(x * -x, hard);
        int large = w >= 5.0f;
        float t = large ? sqrtf(w) - 3.0f : w - 2.5f;
        float p = nx_rt_horner32(t, nx_rt_erfinv32_c[large]);
        float e = fabsf(x) == 1.0f ? x * INFINITY : p * x;
        return scale * e;
    }

    static inline float nx_rt_unit32(uint32_t b) {
        return nx_rt_f((b >> 9) | 0x3f800000u) - 1.0f;
    }

    /* np.maximum(lo, float32(f * span + lo)); lo and span finite and lo not -0 (else the
       caller uses NumPy), so neither side is NaN and a tie is one value. */
    static inline float nx_rt_scale32(float f, float lo, float span) {
        float r = (float)((double)f * (double)span + (double)lo);
        return nx_rt_self(lo > r, lo, r);
    }

    /* One chunk: out[j] = transform(bits[j]).  flags[j]: NX_RT_FLAG_HARD (the caller redoes
       it with NumPy), NX_RT_FLAG_LARGE (erfinv's w >= 5 branch, done by the caller with
       nx_rt_sqrt2_erfinv32).  Returns how many flags are set. */
    NX_RT_CLONES NX_RT_EXACT
    static Py_ssize_t nx_rt_chunk32(const nx_rt_params32 *prm, const uint32_t *bits, float *out,
                                    Py_ssize_t n, uint8_t *flags) {
        const float lo = prm->lo, span = prm->span, scale = prm->scale;
        Py_ssize_t j, nf = 0;
        switch (prm->op) {
        case NX_RT_UNIT:
            for (j = 0; j < n; j++)
                out[j] = nx_rt_unit32(bits[j]);
            return 0;
        case NX_RT_UNIFORM:
            for (j = 0; j < n; j++)
                out[j] = nx_rt_scale32(nx_rt_unit32(bits[j]), lo, span);
            return 0;
        case NX_RT_NORMAL:
        case NX_RT_TRUNCNORM:
            for (j = 0; j < n; j++) {
                float x = nx_rt_scale32(nx_rt_unit32(bits[j]), lo, span);
                int hard;
                float w = nx_rt_neglog1p32(x * -x, &hard);
                int large = w >= 5.0f;
                float p = nx_rt_horner32(w - 2.5f, nx_rt_erfinv32_c[0]);
                float e1 = x * INFINITY, e0 = p * x;
                float e = nx_rt_self(fabsf(x) == 1.0f, e1, e0);
                out[j] = scale * e;
                flags[j] = (uint8_t)(hard | (large << 1));
                nf += hard | large;
            }
            return nf;
        default:  /* NX_RT_GUMBEL: -log(-log(u)), XLA's float32 log */
            for (j = 0; j < n; j++) {
                float u = nx_rt_scale32(nx_rt_unit32(bits[j]), lo, span);
                out[j] = -nx_rt_xla_log32(-nx_rt_xla_log32(u));
                flags[j] = 0;
            }
            return 0;
        }
    }

    /* The truncated normal's last step: np.clip(z, clip_lo, clip_hi) (z never NaN; bounds
       nonzero and finite, so ties are one value). */
    static inline float nx_rt_clip32(float z, float a, float b) {
        z = z > a ? z : a;
        return z < b ? z : b;
    }

    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_clip_chunk32(float *out, Py_ssize_t n, float a, float b) {
        for (Py_ssize_t j = 0; j < n; j++)
            out[j] = nx_rt_clip32(out[j], a, b);
    }

    /* ---- float64 ---- */

    static inline double nx_rt_unit64(uint64_t b) {
        return nx_rt_d((b >> 12) | 0x3ff0000000000000ULL) - 1.0;
    }

    /* out[j] = unit float of bits[j], or max(lo, fma(f, span, lo)) when ranged; and, when
       sq is not NULL, sq[j] = out[j] * -out[j] (erfinv's log1p argument). */
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_uniform64(const nx_rt_params64 *prm, const uint64_t *bits, double *out,
                                double *sq, Py_ssize_t n) {
        const double lo = prm->lo, span = prm->span;
        Py_ssize_t j;
        if (!prm->ranged) {
            for (j = 0; j < n; j++)
                out[j] = nx_rt_unit64(bits[j]);
        } else {
            for (j = 0; j < n; j++) {
                double r = fma(nx_rt_unit64(bits[j]), span, lo);
                out[j] = lo > r ? lo : r;
            }
        }
        if (sq)
            for (j = 0; j < n; j++)
                sq[j] = out[j] * -out[j];
    }

    /* Giles' float64 erfinv: rows for w < 6.25, w < 16, else; highest degree first, the
       shorter rows left-padded with zeros as the reference pads them (23 steps each). */
    static const double nx_rt_erfinv64_c[3][23] = {
        {-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
         1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
         6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
         2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
         1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
         4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
         0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
         0.24015818242558961693, 1.6536545626831027356},
        {0.0, 0.0, 0.0, 0.0,
         2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
         1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
         2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
         6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
         0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
         -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
         3.0838856104922207635},
        {0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
         -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
         -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
         2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
         -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
         7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
         1.0103004648645343977, 4.8499064014085844221}};

    /* Horner in t, each step one fma (XLA:CPU contracts erf_inv's multiply-adds); written
       out, since GCC does not unroll 22 steps itself and then does not vectorize the loops.
       (The zero padding is exact: fma(0, t, c) is c.) */
    #define NX_RT_H(i) p = fma(p, t, c[i]);
    static inline double nx_rt_horner64(double t, const double *c) {
        double p = c[0];
        NX_RT_H(1) NX_RT_H(2) NX_RT_H(3) NX_RT_H(4) NX_RT_H(5) NX_RT_H(6) NX_RT_H(7)
        NX_RT_H(8) NX_RT_H(9) NX_RT_H(10) NX_RT_H(11) NX_RT_H(12) NX_RT_H(13) NX_RT_H(14)
        NX_RT_H(15) NX_RT_H(16) NX_RT_H(17) NX_RT_H(18) NX_RT_H(19) NX_RT_H(20) NX_RT_H(21)
        NX_RT_H(22)
        return p;
    }
    #undef NX_RT_H

    static inline double nx_rt_clip64(double z, double a, double b) {
        z = z > a ? z : a;
        return z < b ? z : b;
    }

    /* scale * erfinv(x) in float64 from x and l = log1p(x * -x), every branch. */
    NX_RT_EXACT
    static double nx_rt_sqrt2_erfinv64(double x, double l, double scale) {
        double w = -l;
        int row = (w >= 6.25) + (w >= 16.0);
        double root = sqrt(w);
        double t = row == 2 ? root - 5.0 : row == 1 ? root - 3.25 : w - 3.125;
        double p = nx_rt_horner64(t, nx_rt_erfinv64_c[row]);
        double e = fabs(x) == 1.0 ? x * INFINITY : p * x;
        return scale * e;
    }

    /* x[j] <- scale * erfinv(x[j]) given l[j] = log1p(x[j] * -x[j]), for n <= 1024; the
       rows with w >= 6.25 (need a sqrt; rare) are done one by one after the loop, which
       vectorizes. */
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_erfinv64(double *x, const double *l, Py_ssize_t n, double scale) {
        uint8_t large[1024];
        Py_ssize_t j, nlarge = 0;
        for (j = 0; j < n; j++) {
            double w = -l[j], xj = x[j];
            double p = nx_rt_horner64(w - 3.125, nx_rt_erfinv64_c[0]);
            double e1 = xj * INFINITY, e0 = p * xj;
            double r = scale * nx_rt_sel(fabs(xj) == 1.0, e1, e0);
            uint8_t big = w >= 6.25;
            large[j] = big;
            nlarge += big;
            x[j] = nx_rt_sel(big, xj, r);
        }
        if (nlarge)
            for (j = 0; j < n; j++)
                if (large[j])
                    x[j] = nx_rt_sqrt2_erfinv64(x[j], l[j], scale);
    }

    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_clip_chunk64(double *out, Py_ssize_t n, double a, double b) {
        for (Py_ssize_t j = 0; j < n; j++)
            out[j] = nx_rt_clip64(out[j], a, b);
    }

    /* out[j] = XLA's float32 log1p(x[j]) (log1p set) or log(x[j]). */
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_xla_log_array32(const float *x, float *out, Py_ssize_t n, int log1p) {
        Py_ssize_t j;
        if (log1p)
            for (j = 0; j < n; j++)
                out[j] = nx_rt_xla_log1p32(x[j]);
        else
            for (j = 0; j < n; j++)
                out[j] = nx_rt_xla_log32(x[j]);
    }

    /* Append i to the list of hard elements (any thread); past cap only the count grows. */
    static inline void nx_rt_record(int64_t *list, Py_ssize_t cap, Py_ssize_t *count,
                                    int64_t i) {
        Py_ssize_t pos = __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
        if (pos < cap)
            list[pos] = i;
    }
    """
    int NX_RT_FLAG_HARD, NX_RT_FLAG_LARGE
    int NX_RT_UNIT, NX_RT_UNIFORM, NX_RT_NORMAL, NX_RT_TRUNCNORM, NX_RT_GUMBEL
    ctypedef struct nx_rt_params32:
        int op
        float lo, span, clip_lo, clip_hi, scale
    ctypedef struct nx_rt_params64:
        double lo, span
        int ranged
    float nx_rt_sqrt2_erfinv32(float x, int* hard, float scale) noexcept nogil
    Py_ssize_t nx_rt_chunk32(const nx_rt_params32* prm, const uint32_t* bits, float* out,
                             Py_ssize_t n, uint8_t* flags) noexcept nogil
    void nx_rt_clip_chunk32(float* out, Py_ssize_t n, float a, float b) noexcept nogil
    float nx_rt_scale32(float f, float lo, float span) noexcept nogil
    float nx_rt_unit32(uint32_t b) noexcept nogil
    void nx_rt_uniform64(const nx_rt_params64* prm, const uint64_t* bits, double* out,
                         double* sq, Py_ssize_t n) noexcept nogil
    void nx_rt_erfinv64(double* x, const double* l, Py_ssize_t n, double scale) noexcept nogil
    void nx_rt_clip_chunk64(double* out, Py_ssize_t n, double a, double b) noexcept nogil
    void nx_rt_record(int64_t* lst, Py_ssize_t cap, Py_ssize_t* count, int64_t i) noexcept nogil
    void nx_rt_xla_log_array32(const float* x, float* out, Py_ssize_t n, int log1p) noexcept nogil
    void nx_rt_fma32(const float* a, const float* b, const float* c, float* out,
                     Py_ssize_t n) noexcept nogil
    void nx_rt_fma64(const double* a, const double* b, const double* c, double* out,
                     Py_ssize_t n) noexcept nogil
    void nx_rt_xla_math32(int op, const float* x, const float* y, float* out,
                          Py_ssize_t n) noexcept nogil
    void nx_rt_xla_math64(int op, const double* x, const double* y, double* out,
                          Py_ssize_t n) noexcept nogil
    float nx_ynn_sum_row32(const float* a, Py_ssize_t k) noexcept nogil
    double nx_ynn_sum_row64(const double* a, Py_ssize_t k) noexcept nogil
    unsigned int nx_rt_flush_on() noexcept nogil
    void nx_rt_flush_off(unsigned int old) noexcept nogil


cdef enum:
    HARD_CAP = 4096          # hard elements listed per call (about one per 2**25 is expected)

_OPS32 = {"unit": NX_RT_UNIT, "uniform": NX_RT_UNIFORM, "normal": NX_RT_NORMAL,
          "truncated_normal": NX_RT_TRUNCNORM, "gumbel": NX_RT_GUMBEL}


ctypedef struct Sample32Job:
    uint32_t k0, k1
    uint64_t start
    const uint32_t* bits          # given bits (transform_f32), or NULL: the iota stream
    nx_rt_params32 prm
    float* out
    int64_t* hard
    Py_ssize_t hard_n


ctypedef struct Sample64Job:
    uint32_t k0, k1
    nx_rt_params64 prm
    double* out
    double* sq                    # NULL, or where x * -x goes
    const double* l               # erfinv pass: log1p(x * -x)
    double scale                  # erfinv pass: x <- scale * erfinv(x)
    int clip
    double clip_lo, clip_hi


cdef void _sample32_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Sample32Job* job = <Sample32Job*>ctx
    cdef uint32_t buf[CHUNK]
    cdef uint8_t flags[CHUNK]
    cdef const uint32_t* b
    cdef Py_ssize_t s = lo, m, j, nf
    cdef int hard
    cdef float x
    while s < hi:
        m = min(<Py_ssize_t>CHUNK, hi - s)
        if job.bits != NULL:
            b = job.bits + s
        else:
            threefry_iota(job.k0, job.k1, job.start + <uint64_t>s, m, 20, IOTA_XOR32, buf)
            b = buf
        nf = nx_rt_chunk32(&job.prm, b, job.out + s, m, flags)
        if nf:
            for j in range(m):
                if flags[j] & NX_RT_FLAG_LARGE:
                    x = nx_rt_scale32(nx_rt_unit32(b[j]), job.prm.lo, job.prm.span)
                    job.out[s + j] = nx_rt_sqrt2_erfinv32(x, &hard, job.prm.scale)
                if flags[j] & NX_RT_FLAG_HARD:
                    nx_rt_record(job.hard, HARD_CAP, &job.hard_n, s + j)
        if job.prm.op == NX_RT_TRUNCNORM:
            nx_rt_clip_chunk32(job.out + s, m, job.prm.clip_lo, job.prm.clip_hi)
        s += m


cdef void _uniform64_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Sample64Job* job = <Sample64Job*>ctx
    cdef uint64_t buf[CHUNK]
    cdef Py_ssize_t s = lo, m
    while s < hi:
        m = min(<Py_ssize_t>CHUNK, hi - s)
        threefry_iota(job.k0, job.k1, <uint64_t>s, m, 20, IOTA_CAT64, buf)
        nx_rt_uniform64(&job.prm, buf, job.out + s, job.sq + s if job.sq != NULL else NULL, m)
        s += m


cdef void _erfinv64_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Sample64Job* job = <Sample64Job*>ctx
    cdef Py_ssize_t s = lo, m
    while s < hi:
        m = min(<Py_ssize_t>CHUNK, hi - s)
        nx_rt_erfinv64(job.out + s, job.l + s, m, job.scale)
        if job.clip:
            nx_rt_clip_chunk64(job.out + s, m, job.clip_lo, job.clip_hi)
        s += m


def _check_op32(op):
    if not isinstance(op, str) or op not in _OPS32:
        raise ValueError(f"op must be one of {sorted(_OPS32)}, got {op!r}")
    return _OPS32[op]


def _check_float(x, name):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    return float(x)


cdef object _run32(Sample32Job* job, Py_ssize_t n, op, lo, span, clip_lo, clip_hi, scale):
    """Run the float32 sampler job over n elements: (out, hard indices or None)."""
    job.prm.op = _check_op32(op)
    job.prm.scale = _check_float(scale, "scale")
    job.prm.lo = _check_float(lo, "lo")
    job.prm.span = _check_float(span, "span")
    job.prm.clip_lo = _check_float(clip_lo, "clip_lo")
    job.prm.clip_hi = _check_float(clip_hi, "clip_hi")
    out = _empty(n, dtype=np.float32)
    hard = np.empty(HARD_CAP, dtype=np.int64)
    job.out = <float*>cnp.PyArray_DATA(out)
    job.hard = <int64_t*>cnp.PyArray_DATA(hard)
    job.hard_n = 0
    _run(_sample32_span, job, n)
    if job.hard_n > HARD_CAP:
        return out, None
    return out, np.sort(hard[:job.hard_n])


def sample_f32(k0, k1, n, op, lo=0.0, span=0.0, clip_lo=0.0, clip_hi=0.0,
               scale=1.4142135623730951):
    """float32 samples of the iota stream (see ``iota_bits32``) in one pass: (out, hard).

    Element i: f = the unit float of bits i (``(b >> 9) | 1.0`` less 1); ``op`` "unit": f;
    "uniform": ``max(lo, float32(f * span + lo))``; "normal" / "truncated_normal":
    ``scale * erfinv(u)`` of that u (``scale`` float32, sqrt(2) by default; then clipped to
    [clip_lo, clip_hi]); "gumbel":
    ``-log(-log(u))``, the log and log1p XLA:CPU's float32 ones.  Every step rounds as
    nx_rune.random's NumPy reference does.  ``hard`` (int64, sorted) lists elements for the
    caller to recompute (none with these transforms); None when there were more than 4096.
    lo, span must be finite and lo not -0.0 (the caller's rule).  out: float32 (n,).
    """
    cdef Sample32Job job
    job.k0 = _check_word(k0, "k0")
    job.k1 = _check_word(k1, "k1")
    n = _check_count(n)
    job.start = 0
    job.bits = NULL
    return _run32(&job, n, op, lo, span, clip_lo, clip_hi, scale)


def transform_f32(bits, op, lo=0.0, span=0.0, clip_lo=0.0, clip_hi=0.0,
                  scale=1.4142135623730951):
    """``sample_f32``'s transform applied to given bits: a 1-D uint32 array.  (out, hard)."""
    _check_u32_array(bits, "bits")
    if bits.ndim != 1:
        raise ValueError(f"bits must be 1-D, got shape {bits.shape}")
    bits = np.ascontiguousarray(bits)
    cdef Sample32Job job
    job.k0 = job.k1 = 0
    job.start = 0
    job.bits = <const uint32_t*>cnp.PyArray_DATA(bits)
    return _run32(&job, bits.shape[0], op, lo, span, clip_lo, clip_hi, scale)


def uniform_f64(k0, k1, n, lo=0.0, span=1.0, ranged=False, square=False):
    """float64 uniforms of the 64-bit iota stream (see ``iota_bits64``): ``out``, or
    ``(out, sq)`` with ``sq = out * -out`` when ``square``.

    f = the unit float of bits i (``(b >> 12) | 1.0`` less 1); out = f, or
    ``max(lo, fma(f, span, lo))`` when ``ranged`` (one rounding, as XLA:CPU).  float64 (n,).
    """
    cdef Sample64Job job
    job.k0 = _check_word(k0, "k0")
    job.k1 = _check_word(k1, "k1")
    n = _check_count(n)
    job.prm.lo = _check_float(lo, "lo")
    job.prm.span = _check_float(span, "span")
    job.prm.ranged = bool(ranged)
    out = _empty(n, dtype=np.float64)
    sq = _empty(n if square else 0, dtype=np.float64)
    job.out = <double*>cnp.PyArray_DATA(out)
    job.sq = <double*>cnp.PyArray_DATA(sq) if square else NULL
    _run(_uniform64_span, &job, n)
    return (out, sq) if square else out


def _check_f64_vector(x, name):
    if not isinstance(x, np.ndarray) or x.dtype != np.float64 or x.ndim != 1 \
            or not x.flags.c_contiguous:
        raise TypeError(f"{name} must be a 1-D C-contiguous float64 numpy.ndarray")


def erfinv_f64(x, l, clip_lo=None, clip_hi=None, scale=1.4142135623730951):
    """In place: ``x <- scale * erfinv(x)`` in float64 given ``l = log1p(x * -x)`` (Giles'
    three branches, as nx_rune.random evaluates them; ``scale`` sqrt(2) by default: the
    normal), then clipped to [clip_lo, clip_hi] when
    both are given (TypeError for one alone).  x, l: 1-D C-contiguous float64 arrays of one
    length; l is not modified.
    """
    _check_f64_vector(x, "x")
    _check_f64_vector(l, "l")
    if x.shape != l.shape:
        raise ValueError(f"x and l must have the same shape, got {x.shape} and {l.shape}")
    if not x.flags.writeable:
        raise ValueError("x must be writeable")
    if (clip_lo is None) != (clip_hi is None):
        raise TypeError("clip_lo and clip_hi must be given together (or neither)")
    cdef Sample64Job job
    job.clip = clip_lo is not None
    job.scale = _check_float(scale, "scale")
    job.clip_lo = _check_float(clip_lo, "clip_lo") if job.clip else 0.0
    job.clip_hi = _check_float(clip_hi, "clip_hi") if job.clip else 0.0
    job.out = <double*>cnp.PyArray_DATA(x)
    job.l = <const double*>cnp.PyArray_DATA(l)
    _run(_erfinv64_span, &job, x.shape[0])


def xla_log_f32(x, log1p=False):
    """XLA:CPU's float32 ``log`` (``log1p`` when set) of a float32 array, elementwise, exactly
    as JAX computes it on CPU (see ``nx_rt_xla_log32``): a new float32 array of x's shape."""
    if not isinstance(x, np.ndarray) or x.dtype != np.float32:
        raise TypeError(f"x must be a float32 NumPy array, got {type(x).__name__}"
                        + (f" of {x.dtype}" if isinstance(x, np.ndarray) else ""))
    a = np.asarray(x, order="C")            # keeps a 0-d array 0-d
    out = np.empty_like(a)
    cdef Py_ssize_t n = a.size
    cdef int lp = 1 if log1p else 0
    cdef const float* src = <const float*>cnp.PyArray_DATA(a)
    cdef float* dst = <float*>cnp.PyArray_DATA(out)
    with nogil:
        nx_rt_xla_log_array32(src, dst, n, lp)
    return out


ctypedef struct XlaMathJob:
    int op, f64
    const void* x
    const void* y
    void* out


cdef void _xla_math_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef const XlaMathJob* job = <const XlaMathJob*>ctx
    if job.f64:
        nx_rt_xla_math64(job.op, <const double*>job.x + lo, <const double*>job.y + lo,
                         <double*>job.out + lo, hi - lo)
    else:
        nx_rt_xla_math32(job.op, <const float*>job.x + lo, <const float*>job.y + lo,
                         <float*>job.out + lo, hi - lo)


_XLA_MATH_OPS = {"exp": 0, "log": 1, "log1p": 2, "tan": 3, "pow": 4, "rsqrt": 5, "erf": 6,
                 "ynn_exp": 7, "ynn_log": 8, "ynn_log1p": 9}


def xla_math(op, x, y=None):
    """``op`` of a float32 or float64 NumPy array elementwise exactly as JAX 0.10.2 computes it
    on CPU: "exp" and "log1p" (float32 also "log" and "erf") are XLA's own approximations (see
    ``nx_rt_xla_exp32`` ...), "tan", "pow", float64 "log" and float64 "erf" the C library's,
    which XLA's compiled code calls; "rsqrt" XLA's scalar rsqrt (the processor's estimate refined, see
    ``nx_rt_xla_rsqrt32``); "ynn_exp", "ynn_log" and "ynn_log1p" YNNPACK's, which XLA runs
    in the fusions it hands to YNNPACK (``xla_math_ynn.h``).  ``y``: pow's exponent, an array of x's dtype and shape.  Returns a
    new array of x's dtype and shape.

    float16 as XLA:CPU computes it where the processor has no float16 arithmetic (it widens
    each operation to float32 and rounds the result back): the float32 function of the widened
    value, rounded once.  XLA's compiled code calls the C library's logf, expf, tanf and powf
    there, and its own float32 log1p, erf and rsqrt; the float32 functions here round to the
    same float16 for every float16 argument (XLA's float32 log and exp and the C library's
    agree to the float16 rounding on all 65,536 of them).  A float16 argument widens to a
    normal float32, so the flushing of float32 denormals changes no float16 result."""
    if not isinstance(op, str) or op not in _XLA_MATH_OPS:
        raise ValueError(f"op must be one of {sorted(_XLA_MATH_OPS)}, got {op!r}")
    if not isinstance(x, np.ndarray) or x.dtype not in (np.float16, np.float32, np.float64):
        raise TypeError(f"x must be a float32 or float64 (or float16) NumPy array, got "
                        f"{type(x).__name__}"
                        + (f" of {x.dtype}" if isinstance(x, np.ndarray) else ""))
    if (op == "pow") != (y is not None):
        raise TypeError("y must be given for pow (and only for pow)")
    if x.dtype == np.float16:
        if y is not None and (not isinstance(y, np.ndarray) or y.dtype != x.dtype
                              or y.shape != x.shape):
            raise TypeError(f"y must be a NumPy array of x's dtype {x.dtype} and shape "
                            f"{x.shape}")
        return xla_math(op, x.astype(np.float32),
                        None if y is None else y.astype(np.float32)).astype(np.float16)
    a = np.asarray(x, order="C")
    b = a
    if y is not None:
        if not isinstance(y, np.ndarray) or y.dtype != x.dtype or y.shape != x.shape:
            raise TypeError(f"y must be a NumPy array of x's dtype {x.dtype} and shape "
                            f"{x.shape}")
        b = np.asarray(y, order="C")
    out = np.empty_like(a)
    cdef XlaMathJob job
    job.op = _XLA_MATH_OPS[op]
    job.f64 = a.dtype == np.float64
    job.x = cnp.PyArray_DATA(a)
    job.y = cnp.PyArray_DATA(b)
    job.out = cnp.PyArray_DATA(out)
    _run(_xla_math_span, &job, a.size)
    return out


def xla_fma(a, b, c):
    """``a * b + c`` rounded once, elementwise: three float32 or three float64 NumPy arrays of
    one shape (the multiply-adds XLA:CPU contracts).  A new array of that dtype and shape."""
    for v, name in ((a, "a"), (b, "b"), (c, "c")):
        if not isinstance(v, np.ndarray) or v.dtype not in (np.float32, np.float64):
            raise TypeError(f"{name} must be a float32 or float64 NumPy array")
    if not (a.dtype == b.dtype == c.dtype and a.shape == b.shape == c.shape):
        raise TypeError(f"a, b and c must have one dtype and shape, got {a.dtype}{a.shape}, "
                        f"{b.dtype}{b.shape} and {c.dtype}{c.shape}")
    a, b, c = (np.asarray(v, order="C") for v in (a, b, c))
    out = np.empty_like(a)
    cdef Py_ssize_t n = a.size
    cdef void* pa = cnp.PyArray_DATA(a)
    cdef void* pb = cnp.PyArray_DATA(b)
    cdef void* pc = cnp.PyArray_DATA(c)
    cdef void* po = cnp.PyArray_DATA(out)
    if a.dtype == np.float32:
        with nogil:
            nx_rt_fma32(<const float*>pa, <const float*>pb, <const float*>pc, <float*>po, n)
    else:
        with nogil:
            nx_rt_fma64(<const double*>pa, <const double*>pb, <const double*>pc, <double*>po, n)
    return out


ctypedef struct YnnSumJob:
    int f64
    const void* x
    void* out
    Py_ssize_t k


cdef void _ynn_sum_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef const YnnSumJob* job = <const YnnSumJob*>ctx
    cdef Py_ssize_t i
    cdef unsigned int mxcsr = nx_rt_flush_on()
    for i in range(lo, hi):
        if job.f64:
            (<double*>job.out)[i] = nx_ynn_sum_row64(<const double*>job.x + i * job.k, job.k)
        else:
            (<float*>job.out)[i] = nx_ynn_sum_row32(<const float*>job.x + i * job.k, job.k)
    nx_rt_flush_off(mxcsr)


def ynn_row_sum(x):
    """The sums of the rows of ``x`` (a float32 or float64 NumPy array, summed over its last
    axis) in the order of YNNPACK's reduction kernel, which XLA:CPU runs for a float reduction
    of 4,096 elements or more (``xla_math_ynn.h``).  Returns a new array of x's dtype and
    shape without the last axis."""
    if not isinstance(x, np.ndarray) or x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must be a float32 or float64 NumPy array, got {type(x).__name__}"
                        + (f" of {x.dtype}" if isinstance(x, np.ndarray) else ""))
    if x.ndim < 1:
        raise ValueError("x must have at least one axis (the rows' axis is the last)")
    a = np.ascontiguousarray(x)
    last = a.ndim - 1
    out = np.empty(a.shape[:last], a.dtype)
    cdef YnnSumJob job
    job.f64 = a.dtype == np.float64
    job.x = cnp.PyArray_DATA(a)
    job.out = cnp.PyArray_DATA(out)
    job.k = a.shape[last]
    if out.size:
        _run(_ynn_sum_span, &job, out.size)
    return out
