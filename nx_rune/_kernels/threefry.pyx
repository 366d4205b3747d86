"""Threefry-2x32-R counter-based hash (Salmon et al., SC11), bit-exact with Random123.

Kernel layer: NumPy arrays in, NumPy arrays out. The wrappers here validate every argument
(setup.py compiles without bounds checks); the nogil cores below them trust their inputs.

All arithmetic is on ``uint32_t``, so it wraps modulo 2**32 as the algorithm requires.
"""
import os

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint32_t, uint64_t

cnp.import_array()

cdef enum:
    PARITY = 0x1BD11BDA          # Skein key-schedule parity constant
    CHUNK = 1024                 # lanes per block of the generic-rounds path (fits in L1)

cdef int ROTATIONS[8]
ROTATIONS[:] = [13, 15, 26, 6, 17, 29, 16, 24]

_U32_MAX = 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
# nogil cores
# ---------------------------------------------------------------------------------------------

cdef inline uint32_t _rotl(uint32_t x, uint32_t r) noexcept nogil:
    return (x << r) | (x >> (32 - r))


# The 20-round loops are the hot path (every sampler runs them), so they are written in C here
# to carry GCC's `target_clones`: on x86-64 Linux (glibc ifunc) each loop is compiled for
# AVX-512, AVX2 and the SSE2 baseline, and the loader picks the widest the CPU has (about 4x
# over SSE2 on the same -O3 build). Elsewhere they compile once, for the baseline.
cdef extern from *:
    """
    #if defined(__GNUC__) && defined(__x86_64__) && defined(__GLIBC__) && \
        (!defined(__clang__) || __clang_major__ >= 14) && !defined(NX_RUNE_NO_CLONES)
    #define NX_TF_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
    #else
    #define NX_TF_CLONES
    #endif

    #define NX_TF_ROTL(x, r) (((x) << (r)) | ((x) >> (32 - (r))))
    #define NX_TF_MIX(a, b, r) (a) += (b); (b) = NX_TF_ROTL((b), (r)) ^ (a)
    #define NX_TF_MIX4_A(a, b) \
        NX_TF_MIX(a, b, 13); NX_TF_MIX(a, b, 15); NX_TF_MIX(a, b, 26); NX_TF_MIX(a, b, 6)
    #define NX_TF_MIX4_B(a, b) \
        NX_TF_MIX(a, b, 17); NX_TF_MIX(a, b, 29); NX_TF_MIX(a, b, 16); NX_TF_MIX(a, b, 24)
    /* 20 rounds on (a, b), counter already keyed with (k0, k1); k2 is the parity word. */
    #define NX_TF_ROUNDS20(a, b, k0, k1, k2) \
        NX_TF_MIX4_A(a, b); (a) += (k1); (b) += (k2) + 1u; \
        NX_TF_MIX4_B(a, b); (a) += (k2); (b) += (k0) + 2u; \
        NX_TF_MIX4_A(a, b); (a) += (k0); (b) += (k1) + 3u; \
        NX_TF_MIX4_B(a, b); (a) += (k1); (b) += (k2) + 4u; \
        NX_TF_MIX4_A(a, b); (a) += (k2); (b) += (k0) + 5u

    NX_TF_CLONES
    static void nx_tf_lanes20(uint32_t k0, uint32_t k1, const uint32_t *x0,
                              const uint32_t *x1, uint32_t *y0, uint32_t *y1, Py_ssize_t n) {
        const uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;
        for (Py_ssize_t i = 0; i < n; i++) {
            uint32_t a = x0[i] + k0, b = x1[i] + k1;
            NX_TF_ROUNDS20(a, b, k0, k1, k2);
            y0[i] = a;
            y1[i] = b;
        }
    }

    /* Counters (hi, lo + j), j in [0, n), lo + n <= 2**32. mode: 0 = y0 ^ y1 (uint32),
       1 = (y0 << 32) | y1 (uint64), 2 = rows (y0, y1) (uint32 pairs). One loop per mode. */
    NX_TF_CLONES
    static void nx_tf_iota20(uint32_t k0, uint32_t k1, uint32_t hi, uint32_t lo,
                             Py_ssize_t n, int mode, void *out) {
        const uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;
        uint32_t *o32 = (uint32_t *)out;
        uint64_t *o64 = (uint64_t *)out;
        if (mode == 0) {
            for (Py_ssize_t j = 0; j < n; j++) {
                uint32_t a = hi + k0, b = lo + (uint32_t)j + k1;
                NX_TF_ROUNDS20(a, b, k0, k1, k2);
                o32[j] = a ^ b;
            }
        } else if (mode == 1) {
            for (Py_ssize_t j = 0; j < n; j++) {
                uint32_t a = hi + k0, b = lo + (uint32_t)j + k1;
                NX_TF_ROUNDS20(a, b, k0, k1, k2);
                o64[j] = ((uint64_t)a << 32) | b;
            }
        } else {
            for (Py_ssize_t j = 0; j < n; j++) {
                uint32_t a = hi + k0, b = lo + (uint32_t)j + k1;
                NX_TF_ROUNDS20(a, b, k0, k1, k2);
                o32[2 * j] = a;
                o32[2 * j + 1] = b;
            }
        }
    }
    """
    void nx_tf_lanes20(uint32_t k0, uint32_t k1, const uint32_t* x0, const uint32_t* x1,
                       uint32_t* y0, uint32_t* y1, Py_ssize_t n) noexcept nogil
    void nx_tf_iota20(uint32_t k0, uint32_t k1, uint32_t hi, uint32_t lo, Py_ssize_t n,
                      int mode, void* out) noexcept nogil


cdef void _lanes_rounds(uint32_t k0, uint32_t k1, const uint32_t* x0, const uint32_t* x1,
                        uint32_t* y0, uint32_t* y1, Py_ssize_t n, int rounds) noexcept nogil:
    # Any round count, Random123's schedule: a key injection after every 4th round.
    # One round at a time over the whole (short) block keeps each inner loop vectorizable.
    cdef uint32_t ks[3]
    cdef uint32_t r, inj, ka, kb, t
    cdef Py_ssize_t i
    ks[0] = k0; ks[1] = k1; ks[2] = k0 ^ k1 ^ PARITY
    for i in range(n):
        y0[i] = x0[i] + ks[0]
        y1[i] = x1[i] + ks[1]
    for r in range(<uint32_t>rounds):
        t = ROTATIONS[r % 8]
        for i in range(n):
            y0[i] += y1[i]
            y1[i] = _rotl(y1[i], t) ^ y0[i]
        if r % 4 == 3:
            inj = r // 4 + 1
            ka = ks[inj % 3]
            kb = ks[(inj + 1) % 3] + inj
            for i in range(n):
                y0[i] += ka
                y1[i] += kb


cdef void threefry_lanes(uint32_t k0, uint32_t k1,
                         const uint32_t* x0, const uint32_t* x1,
                         uint32_t* y0, uint32_t* y1,
                         Py_ssize_t n, int rounds) noexcept nogil:
    cdef Py_ssize_t s, m
    if rounds == 20:
        nx_tf_lanes20(k0, k1, x0, x1, y0, y1, n)
        return
    s = 0
    while s < n:
        m = min(CHUNK, n - s)
        _lanes_rounds(k0, k1, x0 + s, x1 + s, y0 + s, y1 + s, m, rounds)
        s += m


cdef void _iota_rounds(uint32_t k0, uint32_t k1, uint32_t hi, uint32_t lo, Py_ssize_t n,
                       int rounds, IotaMode mode, void* out) noexcept nogil:
    cdef uint32_t x0[CHUNK]
    cdef uint32_t x1[CHUNK]
    cdef uint32_t y0[CHUNK]
    cdef uint32_t y1[CHUNK]
    cdef uint32_t* o32 = <uint32_t*>out
    cdef uint64_t* o64 = <uint64_t*>out
    cdef Py_ssize_t s = 0, m, j
    while s < n:
        m = min(CHUNK, n - s)
        for j in range(m):
            x0[j] = hi
            x1[j] = lo + <uint32_t>(s + j)
        _lanes_rounds(k0, k1, x0, x1, y0, y1, m, rounds)
        for j in range(m):
            if mode == IOTA_XOR32:
                o32[s + j] = y0[j] ^ y1[j]
            elif mode == IOTA_CAT64:
                o64[s + j] = (<uint64_t>y0[j] << 32) | y1[j]
            else:
                o32[2 * (s + j)] = y0[j]
                o32[2 * (s + j) + 1] = y1[j]
        s += m


cdef void threefry_iota(uint32_t k0, uint32_t k1, uint64_t start, Py_ssize_t n,
                        int rounds, IotaMode mode, void* out) noexcept nogil:
    cdef Py_ssize_t done = 0, m
    cdef uint64_t i
    cdef uint32_t hi, lo
    # Output bytes per counter: one uint32 (XOR32), one uint64 (CAT64) or two uint32 (PAIRS).
    cdef Py_ssize_t lane_bytes = 4 if mode == IOTA_XOR32 else 8
    cdef char* dst
    while done < n:
        # Split where the low word wraps, so each segment has a constant high word.
        i = start + <uint64_t>done
        hi = <uint32_t>(i >> 32)
        lo = <uint32_t>i
        m = <Py_ssize_t>min(<uint64_t>(n - done), (<uint64_t>1 << 32) - lo)
        dst = <char*>out + done * lane_bytes
        if rounds == 20:
            nx_tf_iota20(k0, k1, hi, lo, m, <int>mode, dst)
        else:
            _iota_rounds(k0, k1, hi, lo, m, rounds, mode, dst)
        done += m


# ---------------------------------------------------------------------------------------------
# Threads: large inputs are cut into one contiguous span per core, each hashed without the GIL
#
# The parallel part of a call is one nogil C function that returns only when every span is
# done, so no Python exception (Ctrl-C's KeyboardInterrupt, a SIGALRM handler's) can interrupt
# it: a signal handler runs after it returns, when no worker touches the arrays any more.
# (Python's ThreadPoolExecutor cannot give that: an exception raised in the waiting thread skips
# the wait, or strands one of its locks.)
#
# The workers are plain OS threads of one process-wide pool, started when first needed and kept
# (they wait on a condition variable).  They block the asynchronous signals, so Ctrl-C and
# timers go to the Python threads: when another thread receives a signal, CPython 3.11 may not
# run its Python handler until a later signal (seen with OpenBLAS's threads, which do not block
# them).  The workers know nothing of Python, so interpreter shutdown
# (atexit handlers, threads still drawing after the main thread ended) does not stop them.
# One call at a time owns the pool (taken and given back under the GIL); a concurrent call
# hashes in its own thread.  ``set_num_threads`` only sets the count the next calls use.  A
# forked child starts a new pool.  When no worker can be started, the caller does every span.
# ---------------------------------------------------------------------------------------------

cdef extern from *:
    """
    typedef void (*nx_tf_span_fn)(const void *ctx, Py_ssize_t lo, Py_ssize_t hi);

    #if defined(__unix__) || defined(__APPLE__)
    #include <pthread.h>
    #include <signal.h>
    #include <unistd.h>
    #define NX_TF_HAVE_THREADS 1

    typedef struct {
        pthread_mutex_t mu;
        pthread_cond_t work;          /* a job has spans left to claim */
        pthread_cond_t done;          /* the job's last claimed span finished */
        int workers;                  /* threads started (never stopped) */
        /* the job: spans [k * step, min((k + 1) * step, n)) for k in [0, count) */
        nx_tf_span_fn fn;
        const void *ctx;
        Py_ssize_t n, step, count;
        Py_ssize_t next;              /* next span to claim */
        Py_ssize_t running;           /* claimed spans not finished yet */
    } nx_tf_pool;

    static nx_tf_pool nx_tf_the_pool;
    static pid_t nx_tf_pool_pid = 0;  /* the process whose threads the pool holds */
    static int nx_tf_pool_busy = 0;   /* a call owns the pool (read and set under the GIL) */

    /* Claim and run spans until none is left; called and returns with mu held. */
    static void nx_tf_claim_spans(nx_tf_pool *p) {
        while (p->next < p->count) {
            Py_ssize_t k = p->next++;
            Py_ssize_t lo = k * p->step, hi = lo + p->step < p->n ? lo + p->step : p->n;
            nx_tf_span_fn fn = p->fn;
            const void *ctx = p->ctx;
            p->running++;
            pthread_mutex_unlock(&p->mu);
            fn(ctx, lo, hi);
            pthread_mutex_lock(&p->mu);
            if (--p->running == 0 && p->next >= p->count)
                pthread_cond_broadcast(&p->done);
        }
    }

    static void *nx_tf_worker(void *arg) {
        nx_tf_pool *p = (nx_tf_pool *)arg;
        /* Asynchronous signals stay with the Python threads; faults remain deliverable here
           (so faulthandler reports them). */
        sigset_t block;
        sigfillset(&block);
        sigdelset(&block, SIGSEGV); sigdelset(&block, SIGBUS); sigdelset(&block, SIGFPE);
        sigdelset(&block, SIGILL); sigdelset(&block, SIGABRT); sigdelset(&block, SIGTRAP);
        pthread_sigmask(SIG_BLOCK, &block, NULL);
        pthread_mutex_lock(&p->mu);
        for (;;) {
            while (p->next >= p->count)
                pthread_cond_wait(&p->work, &p->mu);
            nx_tf_claim_spans(p);
        }
        return NULL;
    }

    /* Called with the GIL held: 1 if this call now owns the pool, 0 if another call does. */
    static int nx_tf_pool_acquire(void) {
        pid_t pid = getpid();
        if (nx_tf_pool_pid != pid) {
            /* First use, or a forked child: the parent's workers do not exist here. */
            nx_tf_pool *p = &nx_tf_the_pool;
            if (pthread_mutex_init(&p->mu, NULL) != 0)
                return 0;
            if (pthread_cond_init(&p->work, NULL) != 0) {
                pthread_mutex_destroy(&p->mu);
                return 0;
            }
            if (pthread_cond_init(&p->done, NULL) != 0) {
                pthread_cond_destroy(&p->work);
                pthread_mutex_destroy(&p->mu);
                return 0;
            }
            p->workers = 0;
            p->next = p->count = p->running = 0;
            nx_tf_pool_pid = pid;
            nx_tf_pool_busy = 0;
        }
        if (nx_tf_pool_busy)
            return 0;
        nx_tf_pool_busy = 1;
        return 1;
    }

    /* Called with the GIL held, by the owner once its run has returned. */
    static void nx_tf_pool_release(void) {
        nx_tf_pool_busy = 0;
    }

    /* The owner's run (without the GIL): fn over the `count` spans of [0, n), on up to
       count - 1 workers and this thread; returns when every span is done. */
    static void nx_tf_pool_run(nx_tf_span_fn fn, const void *ctx, Py_ssize_t n,
                               Py_ssize_t step, Py_ssize_t count) {
        nx_tf_pool *p = &nx_tf_the_pool;
        pthread_mutex_lock(&p->mu);
        while (p->workers < count - 1) {
            pthread_t tid;
            pthread_attr_t attr;
            int ok;
            if (pthread_attr_init(&attr) != 0)
                break;
            pthread_attr_setstacksize(&attr, (size_t)1 << 18);   /* the cores need ~20 KiB */
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            ok = pthread_create(&tid, &attr, nx_tf_worker, p) == 0;
            pthread_attr_destroy(&attr);
            if (!ok)
                break;                /* fewer workers: this thread claims more spans */
            p->workers++;
        }
        p->fn = fn;
        p->ctx = ctx;
        p->n = n;
        p->step = step;
        p->running = 0;
        p->next = 0;
        p->count = count;
        pthread_cond_broadcast(&p->work);
        nx_tf_claim_spans(p);
        while (p->running > 0)
            pthread_cond_wait(&p->done, &p->mu);
        p->fn = NULL;
        p->ctx = NULL;
        pthread_mutex_unlock(&p->mu);
    }
    #else
    #define NX_TF_HAVE_THREADS 0
    static int nx_tf_pool_acquire(void) { return 0; }
    static void nx_tf_pool_release(void) {}
    static void nx_tf_pool_run(nx_tf_span_fn fn, const void *ctx, Py_ssize_t n,
                               Py_ssize_t step, Py_ssize_t count) {
        (void)step; (void)count;
        fn(ctx, 0, n);                /* no thread API known here: one span, this thread */
    }
    #endif
    """
    ctypedef void (*nx_tf_span_fn)(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil
    int nx_tf_pool_acquire() noexcept
    void nx_tf_pool_release() noexcept
    void nx_tf_pool_run(nx_tf_span_fn fn, const void* ctx, Py_ssize_t n, Py_ssize_t step,
                        Py_ssize_t count) noexcept nogil
    int NX_TF_HAVE_THREADS


cdef enum:
    MIN_LANES_PER_THREAD = 1 << 16   # below this, waking a thread costs more than it saves
    MAX_THREADS = 1024


def _default_num_threads():
    env = os.environ.get("NX_RUNE_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:           # not on Linux
        return os.cpu_count() or 1


_num_threads = _default_num_threads()


def get_num_threads():
    """Number of threads the kernels use for large inputs (env ``NX_RUNE_NUM_THREADS``)."""
    return _num_threads


def set_num_threads(n):
    """Set the number of threads used for large inputs (``n >= 1``); results do not change.

    The calls that start afterwards use it; safe while other threads draw.
    """
    global _num_threads
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    _num_threads = int(n)


cdef (Py_ssize_t, Py_ssize_t) _plan(Py_ssize_t n, Py_ssize_t threads):
    """(step, count): [0, n) cut into ``count`` spans of ``step`` lanes (the last one ragged),
    at most ``threads`` of them, each a multiple of CHUNK lanes long."""
    cdef Py_ssize_t t = min(threads, n // MIN_LANES_PER_THREAD, <Py_ssize_t>MAX_THREADS)
    if t <= 1 or not NX_TF_HAVE_THREADS:
        return n, 1
    cdef Py_ssize_t step = (n + t - 1) // t
    step = (step + CHUNK - 1) // CHUNK * CHUNK
    return step, (n + step - 1) // step


def _span_plan(Py_ssize_t n, Py_ssize_t threads):
    """The spans ``[(lo, hi), ...]`` a call over [0, n) uses with ``threads`` threads."""
    step, count = _plan(n, threads)
    return [(k * step, min((k + 1) * step, n)) for k in range(count)]


ctypedef struct LanesJob:
    uint32_t k0, k1
    int rounds
    const uint32_t* x0
    const uint32_t* x1
    uint32_t* y0
    uint32_t* y1


ctypedef struct IotaJob:
    uint32_t k0, k1
    uint64_t start
    int rounds
    IotaMode mode
    char* out
    Py_ssize_t lane_bytes


cdef void _lanes_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef const LanesJob* j = <const LanesJob*>ctx
    threefry_lanes(j.k0, j.k1, j.x0 + lo, j.x1 + lo, j.y0 + lo, j.y1 + lo, hi - lo, j.rounds)


cdef void _iota_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef const IotaJob* j = <const IotaJob*>ctx
    threefry_iota(j.k0, j.k1, j.start + <uint64_t>lo, hi - lo, j.rounds, j.mode,
                  j.out + lo * j.lane_bytes)


cdef void _run(nx_tf_span_fn fn, const void* job, Py_ssize_t n) noexcept:
    """``fn(job, lo, hi)`` over [0, n), without the GIL, on up to ``_num_threads`` threads;
    returns when every span is done.  The caller keeps the arrays behind ``job`` alive."""
    cdef Py_ssize_t step, count
    step, count = _plan(n, _num_threads)
    if count > 1 and nx_tf_pool_acquire():
        with nogil:
            nx_tf_pool_run(fn, job, n, step, count)
        nx_tf_pool_release()
    else:
        with nogil:
            fn(job, 0, n)


# ---------------------------------------------------------------------------------------------
# Python wrappers (validation)
# ---------------------------------------------------------------------------------------------

def _check_word(value, name):
    """Return ``value`` as an int in [0, 2**32), or raise naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer in [0, 2**32), got {type(value).__name__}")
    value = int(value)
    if not 0 <= value <= _U32_MAX:
        raise ValueError(f"{name} must be in [0, 2**32), got {value}")
    return value


def _check_rounds(rounds):
    if isinstance(rounds, (bool, np.bool_)) or not isinstance(rounds, (int, np.integer)):
        raise TypeError(f"rounds must be an int, got {type(rounds).__name__}")
    if rounds < 0 or rounds > 0x7FFFFFFF:
        raise ValueError(f"rounds must be >= 0 (and below 2**31), got {rounds}")
    return int(rounds)


def _check_u32_array(x, name):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray of dtype uint32, got {type(x).__name__}")
    if x.dtype != np.uint32:
        raise TypeError(f"{name} must have dtype uint32, got {x.dtype}")


def _check_count(n, name="n"):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return int(n)


def _check_start(start, n):
    start = _check_count(start, "start")
    if start + n > 1 << 64:
        raise ValueError(f"start + n must be at most 2**64, got {start} + {n}")
    return start


def _flat_lanes(x0, x1, y0, y1, uint32_t k0, uint32_t k1, int rounds):
    # All four: validated 1-D C-contiguous uint32 arrays of one length; y0, y1 are written.
    cdef LanesJob job
    job.k0, job.k1, job.rounds = k0, k1, rounds
    job.x0 = <const uint32_t*>cnp.PyArray_DATA(x0)
    job.x1 = <const uint32_t*>cnp.PyArray_DATA(x1)
    job.y0 = <uint32_t*>cnp.PyArray_DATA(y0)
    job.y1 = <uint32_t*>cnp.PyArray_DATA(y1)
    _run(_lanes_span, &job, x0.shape[0])


def threefry2x32_block(k0, k1, x0, x1, rounds=20):
    """Threefry-2x32-``rounds`` of key ``(k0, k1)`` on the counter pairs ``(x0[i], x1[i])``.

    ``k0``, ``k1``: ints in [0, 2**32). ``x0``, ``x1``: uint32 arrays of one shape (any
    strides). Returns ``(y0, y1)``, two new C-contiguous uint32 arrays of that shape.
    """
    k0 = _check_word(k0, "k0")
    k1 = _check_word(k1, "k1")
    _check_u32_array(x0, "x0")
    _check_u32_array(x1, "x1")
    if x0.shape != x1.shape:
        raise ValueError(f"x0 and x1 must have the same shape, got {x0.shape} and {x1.shape}")
    rounds = _check_rounds(rounds)
    y0 = np.empty(x0.shape, dtype=np.uint32)
    y1 = np.empty(x0.shape, dtype=np.uint32)
    _flat_lanes(np.ascontiguousarray(x0).reshape(-1), np.ascontiguousarray(x1).reshape(-1),
                y0.reshape(-1), y1.reshape(-1), k0, k1, rounds)
    return y0, y1


def threefry_2x32(key, count, rounds=20):
    """JAX's ``threefry_2x32(key, count)``: hash a uint32 array of any shape.

    ``key``: uint32 array of shape (2,). ``count``: uint32 array of any shape. The flattened
    count is padded with one zero when its length is odd and split into halves
    ``x0 = flat[:h]``, ``x1 = flat[h:]``; the result is ``concat(y0, y1)`` without the pad
    word, reshaped to ``count.shape`` (uint32).
    """
    _check_u32_array(key, "key")
    if key.shape != (2,):
        raise ValueError(f"key must have shape (2,), got {key.shape}")
    _check_u32_array(count, "count")
    rounds = _check_rounds(rounds)
    flat = np.ascontiguousarray(count).reshape(-1)
    odd = flat.size % 2
    if odd:
        flat = np.concatenate([flat, np.zeros(1, dtype=np.uint32)])
    h = flat.size // 2
    out = np.empty(2 * h, dtype=np.uint32)
    _flat_lanes(flat[:h], flat[h:], out[:h], out[h:], int(key[0]), int(key[1]), rounds)
    if odd:
        out = out[:out.shape[0] - 1]
    return out.reshape(count.shape)


def _iota(k0, k1, n, start, rounds, IotaMode mode, dtype, width):
    k0 = _check_word(k0, "k0")
    k1 = _check_word(k1, "k1")
    n = _check_count(n)
    start = _check_start(start, n)
    rounds = _check_rounds(rounds)
    out = np.empty(n * width, dtype=dtype)
    cdef IotaJob job
    job.k0, job.k1, job.start, job.rounds, job.mode = k0, k1, start, rounds, mode
    job.out = <char*>cnp.PyArray_DATA(out)
    job.lane_bytes = out.itemsize * width
    _run(_iota_span, &job, n)
    return out


def iota_bits32(k0, k1, n, start=0, rounds=20):
    """``y0 ^ y1`` of the blocks at counters ``(i >> 32, i & 0xFFFFFFFF)``, i in [start, start+n).

    This is JAX's partitionable ``random_bits`` for 32 bits. Returns uint32 of shape (n,).
    """
    return _iota(k0, k1, n, start, rounds, IOTA_XOR32, np.uint32, 1)


def iota_bits64(k0, k1, n, start=0, rounds=20):
    """``(y0 << 32) | y1`` of the blocks at the iota counters (see ``iota_bits32``).

    JAX's partitionable ``random_bits`` for 64 bits. Returns uint64 of shape (n,).
    """
    return _iota(k0, k1, n, start, rounds, IOTA_CAT64, np.uint64, 1)


def iota_pairs(k0, k1, n, start=0, rounds=20):
    """The blocks ``(y0, y1)`` at the iota counters as rows: uint32 of shape (n, 2).

    Row i is the block of counter i, JAX's partitionable ``split`` (key i = fold_in(key, i)).
    """
    return _iota(k0, k1, n, start, rounds, IOTA_PAIRS, np.uint32, 2).reshape(n, 2)
