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
# rounds alike.  The one thing NumPy leaves to its platform is the float64 log/log1p that the
# float32 samplers round to float32: here a log of < 1 ulp (fdlibm's method) gives the same
# float32 unless the float64 value lies within a few ulps of a float32 tie; such elements
# ("hard", about one in 2**25) are reported to the caller, which recomputes them with NumPy.
# The float64 samplers keep NumPy's own log1p/log between two fused passes.
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

    /* A float64 within this many ulps of a float32 tie is "hard" (see above). */
    #define NX_RT_TIE_WINDOW 16
    #define NX_RT_FLAG_HARD 1
    #define NX_RT_FLAG_LARGE 2

    enum { NX_RT_UNIT = 0, NX_RT_UNIFORM = 1, NX_RT_NORMAL = 2, NX_RT_TRUNCNORM = 3,
           NX_RT_GUMBEL = 4 };

    typedef struct {
        int op;
        float lo, span;              /* u = max(lo, float32(f * span + lo)) */
        float clip_lo, clip_hi;      /* truncated normal: the final clip */
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

    /* Natural log of a positive normal double: fdlibm's __ieee754_log (< 1 ulp), its four
       cases as selects so that the loops around it vectorize. */
    static inline double nx_rt_log(double x) {
        const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
        const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                     Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                     Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                     Lg7 = 1.479819860511658591e-01;
        uint64_t ix = nx_rt_u64(x);
        uint32_t hx = (uint32_t)(ix >> 32) & 0x000fffffu;
        int32_t k = (int32_t)(ix >> 52) - 1023;
        uint32_t i = (hx + 0x95f64u) & 0x100000u;      /* mantissa >= sqrt(2): halve it */
        double m = nx_rt_d((ix & 0x000fffffffffffffULL) | ((uint64_t)(i ^ 0x3ff00000u) << 32));
        k += (int32_t)(i >> 20);
        double f = m - 1.0;
        double dk = (double)k;
        double s = f / (2.0 + f);
        double z = s * s, w = z * z;
        double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
        double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
        double R = t2 + t1;
        double hfsq = 0.5 * f * f;
        int big = ((int32_t)(hx - 0x6147au) | (int32_t)(0x6b851u - hx)) > 0;
        /* fdlibm's k == 0 forms are these with dk = 0 (the same values, zeros included);
           both computed, then selected: a branch would keep the loops from vectorizing */
        double a = dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
        double b = dk * ln2_hi - ((s * (f - R) - dk * ln2_lo) - f);
        return nx_rt_sel(big, a, b);
    }

    /* Whether float32(r) is in doubt: r (finite, nonzero, of float32's normal range; or 0 or
       inf, never in doubt) within NX_RT_TIE_WINDOW ulps of a float32 tie. */
    static inline int nx_rt_near_tie32(double r) {
        uint64_t low = nx_rt_u64(r) & 0x1fffffffULL;   /* |low - 2**28| <= window: */
        return low - (0x10000000 - NX_RT_TIE_WINDOW) <= 2 * NX_RT_TIE_WINDOW;
    }

    /* Giles' float32 erfinv, rows for w < 5 and w >= 5, highest degree first. */
    static const float nx_rt_erfinv32_c[2][9] = {
        {2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
         -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f},
        {-0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
         -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f}};

    /* float32(-log1p(v)) for a float32 v in [-1, 0], and whether it is hard. */
    static inline float nx_rt_neglog1p32(float v, int *hard) {
        double vd = (double)v;
        double y = 1.0 + vd;                 /* exact when |v| >= 2**-29 */
        double l = nx_rt_log(y + (double)(y == 0.0));   /* y = 0 (v = -1): log(1), then */
        l = nx_rt_sel(y > 0.0, l, -INFINITY);             /* -inf */
        l = nx_rt_sel(v > -0x1p-29f, vd, l);  /* log1p(v) = v (1 - v/2 ...): float32 v */
        *hard = nx_rt_near_tie32(l);
        return (float)(-l);
    }

    /* Horner in t, each step p * t + c in float64 (the product is exact) rounded to float32. */
    static inline float nx_rt_horner32(float t, const float *c) {
        double td = (double)t, p = (double)c[0];
        for (int i = 1; i < 9; i++)
            p = (double)(float)(p * td + (double)c[i]);
        return (float)p;
    }

    /* sqrt(2) * erfinv(x) in float32, every branch (the loops take w < 5 and fix the rest). */
    NX_RT_EXACT
    static float nx_rt_sqrt2_erfinv32(float x, int *hard) {
        float w = nx_rt_neglog1p32(x * -x, hard);
        int large = w >= 5.0f;
        float t = large ? sqrtf(w) - 3.0f : w - 2.5f;
        float p = nx_rt_horner32(t, nx_rt_erfinv32_c[large]);
        float e = fabsf(x) == 1.0f ? x * INFINITY : p * x;
        return 1.41421356f * e;
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
        const float lo = prm->lo, span = prm->span;
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
                out[j] = 1.41421356f * e;
                flags[j] = (uint8_t)(hard | (large << 1));
                nf += hard | large;
            }
            return nf;
        default:  /* NX_RT_GUMBEL: -log(-log(u)), each log rounded to float32 */
            for (j = 0; j < n; j++) {
                float u = nx_rt_scale32(nx_rt_unit32(bits[j]), lo, span);
                double a = nx_rt_log((double)u);
                float na = -(float)a;
                double c = nx_rt_log((double)na);
                int hard = nx_rt_near_tie32(a) | nx_rt_near_tie32(c);
                out[j] = -(float)c;
                flags[j] = (uint8_t)hard;
                nf += hard;
            }
            return nf;
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

    /* Horner in t, a product and a sum per step (two roundings, as the reference); written
       out, since GCC does not unroll 22 steps itself and then does not vectorize the loops. */
    #define NX_RT_H(i) p = p * t; p = p + c[i];
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

    /* sqrt(2) * erfinv(x) in float64 from x and l = log1p(x * -x), every branch. */
    NX_RT_EXACT
    static double nx_rt_sqrt2_erfinv64(double x, double l) {
        double w = -l;
        int row = (w >= 6.25) + (w >= 16.0);
        double root = sqrt(w);
        double t = row == 2 ? root - 5.0 : row == 1 ? root - 3.25 : w - 3.125;
        double p = nx_rt_horner64(t, nx_rt_erfinv64_c[row]);
        double e = fabs(x) == 1.0 ? x * INFINITY : p * x;
        return 1.4142135623730951 * e;
    }

    /* x[j] <- sqrt(2) * erfinv(x[j]) given l[j] = log1p(x[j] * -x[j]), for n <= 1024; the
       rows with w >= 6.25 (need a sqrt; rare) are done one by one after the loop, which
       vectorizes. */
    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_erfinv64(double *x, const double *l, Py_ssize_t n) {
        uint8_t large[1024];
        Py_ssize_t j, nlarge = 0;
        for (j = 0; j < n; j++) {
            double w = -l[j], xj = x[j];
            double p = nx_rt_horner64(w - 3.125, nx_rt_erfinv64_c[0]);
            double e1 = xj * INFINITY, e0 = p * xj;
            double r = 1.4142135623730951 * nx_rt_sel(fabs(xj) == 1.0, e1, e0);
            uint8_t big = w >= 6.25;
            large[j] = big;
            nlarge += big;
            x[j] = nx_rt_sel(big, xj, r);
        }
        if (nlarge)
            for (j = 0; j < n; j++)
                if (large[j])
                    x[j] = nx_rt_sqrt2_erfinv64(x[j], l[j]);
    }

    NX_RT_CLONES NX_RT_EXACT
    static void nx_rt_clip_chunk64(double *out, Py_ssize_t n, double a, double b) {
        for (Py_ssize_t j = 0; j < n; j++)
            out[j] = nx_rt_clip64(out[j], a, b);
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
        float lo, span, clip_lo, clip_hi
    ctypedef struct nx_rt_params64:
        double lo, span
        int ranged
    float nx_rt_sqrt2_erfinv32(float x, int* hard) noexcept nogil
    Py_ssize_t nx_rt_chunk32(const nx_rt_params32* prm, const uint32_t* bits, float* out,
                             Py_ssize_t n, uint8_t* flags) noexcept nogil
    void nx_rt_clip_chunk32(float* out, Py_ssize_t n, float a, float b) noexcept nogil
    float nx_rt_scale32(float f, float lo, float span) noexcept nogil
    float nx_rt_unit32(uint32_t b) noexcept nogil
    void nx_rt_uniform64(const nx_rt_params64* prm, const uint64_t* bits, double* out,
                         double* sq, Py_ssize_t n) noexcept nogil
    void nx_rt_erfinv64(double* x, const double* l, Py_ssize_t n) noexcept nogil
    void nx_rt_clip_chunk64(double* out, Py_ssize_t n, double a, double b) noexcept nogil
    void nx_rt_record(int64_t* lst, Py_ssize_t cap, Py_ssize_t* count, int64_t i) noexcept nogil


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
                    job.out[s + j] = nx_rt_sqrt2_erfinv32(x, &hard)
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
        nx_rt_erfinv64(job.out + s, job.l + s, m)
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


cdef object _run32(Sample32Job* job, Py_ssize_t n, op, lo, span, clip_lo, clip_hi):
    """Run the float32 sampler job over n elements: (out, hard indices or None)."""
    job.prm.op = _check_op32(op)
    job.prm.lo = _check_float(lo, "lo")
    job.prm.span = _check_float(span, "span")
    job.prm.clip_lo = _check_float(clip_lo, "clip_lo")
    job.prm.clip_hi = _check_float(clip_hi, "clip_hi")
    out = np.empty(n, dtype=np.float32)
    hard = np.empty(HARD_CAP, dtype=np.int64)
    job.out = <float*>cnp.PyArray_DATA(out)
    job.hard = <int64_t*>cnp.PyArray_DATA(hard)
    job.hard_n = 0
    _run(_sample32_span, job, n)
    if job.hard_n > HARD_CAP:
        return out, None
    return out, np.sort(hard[:job.hard_n])


def sample_f32(k0, k1, n, op, lo=0.0, span=0.0, clip_lo=0.0, clip_hi=0.0):
    """float32 samples of the iota stream (see ``iota_bits32``) in one pass: (out, hard).

    Element i: f = the unit float of bits i (``(b >> 9) | 1.0`` less 1); ``op`` "unit": f;
    "uniform": ``max(lo, float32(f * span + lo))``; "normal" / "truncated_normal":
    ``sqrt(2) * erfinv(u)`` of that u (then clipped to [clip_lo, clip_hi]); "gumbel":
    ``-log(-log(u))``.  Every step rounds as nx_rune.random's NumPy reference does, except
    the float64 logs: ``hard`` (int64, sorted) lists the elements whose float64 log came within
    a few ulps of a float32 tie, for the caller to recompute; None when there were more than
    4096.  lo, span must be finite and lo not -0.0 (the caller's rule).  out: float32 (n,).
    """
    cdef Sample32Job job
    job.k0 = _check_word(k0, "k0")
    job.k1 = _check_word(k1, "k1")
    n = _check_count(n)
    job.start = 0
    job.bits = NULL
    return _run32(&job, n, op, lo, span, clip_lo, clip_hi)


def transform_f32(bits, op, lo=0.0, span=0.0, clip_lo=0.0, clip_hi=0.0):
    """``sample_f32``'s transform applied to given bits: a 1-D uint32 array.  (out, hard)."""
    _check_u32_array(bits, "bits")
    if bits.ndim != 1:
        raise ValueError(f"bits must be 1-D, got shape {bits.shape}")
    bits = np.ascontiguousarray(bits)
    cdef Sample32Job job
    job.k0 = job.k1 = 0
    job.start = 0
    job.bits = <const uint32_t*>cnp.PyArray_DATA(bits)
    return _run32(&job, bits.shape[0], op, lo, span, clip_lo, clip_hi)


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
    out = np.empty(n, dtype=np.float64)
    sq = np.empty(n if square else 0, dtype=np.float64)
    job.out = <double*>cnp.PyArray_DATA(out)
    job.sq = <double*>cnp.PyArray_DATA(sq) if square else NULL
    _run(_uniform64_span, &job, n)
    return (out, sq) if square else out


def _check_f64_vector(x, name):
    if not isinstance(x, np.ndarray) or x.dtype != np.float64 or x.ndim != 1 \
            or not x.flags.c_contiguous:
        raise TypeError(f"{name} must be a 1-D C-contiguous float64 numpy.ndarray")


def erfinv_f64(x, l, clip_lo=None, clip_hi=None):
    """In place: ``x <- sqrt(2) * erfinv(x)`` in float64 given ``l = log1p(x * -x)`` (Giles'
    three branches, as nx_rune.random evaluates them), then clipped to [clip_lo, clip_hi] when
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
    job.clip_lo = _check_float(clip_lo, "clip_lo") if job.clip else 0.0
    job.clip_hi = _check_float(clip_hi, "clip_hi") if job.clip else 0.0
    job.out = <double*>cnp.PyArray_DATA(x)
    job.l = <const double*>cnp.PyArray_DATA(l)
    _run(_erfinv64_span, &job, x.shape[0])
