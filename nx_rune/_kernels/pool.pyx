"""The kernels' thread pool: large inputs are cut into spans, each run without the GIL.

Kernel layer, shared by the threaded kernels (threefry, gather).  A Cython module cimports
``run_spans`` (or the acquire / run / release triple) from pool.pxd; Python code reads and
sets the thread count with ``get_num_threads`` / ``set_num_threads`` (env
``NX_RUNE_NUM_THREADS``; default: the cores this process may run on).
"""
import os

import numpy as np

# ---------------------------------------------------------------------------------------------
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
# runs its spans in its own thread.  ``set_num_threads`` only sets the count the next calls
# use.  A forked child starts a new pool.  When no worker can be started, the caller does
# every span.
# ---------------------------------------------------------------------------------------------

cdef extern from *:
    """
    #include <stdint.h>
    typedef void (*nx_pool_span_fn)(const void *ctx, Py_ssize_t lo, Py_ssize_t hi);

    #if defined(__unix__) || defined(__APPLE__)
    #include <pthread.h>
    #include <signal.h>
    #include <unistd.h>
    #include <time.h>
    #include <sched.h>
    #define NX_POOL_HAVE_THREADS 1

    typedef struct {
        pthread_mutex_t mu;
        pthread_cond_t work;          /* a job has spans left to claim */
        pthread_cond_t done;          /* the job's last span finished */
        int workers;                  /* threads started (never stopped) */
        /* the job: spans [k * step, min((k + 1) * step, n)) for k in [0, count) */
        nx_pool_span_fn fn;
        const void *ctx;
        Py_ssize_t n, step, count;
        /* The claim word: (job generation << 32) | next span to claim.  Spans are claimed by
           a compare-and-swap on it, without the lock, by the caller and by each worker that
           took a seat; a worker that saw an earlier job's generation cannot claim from a
           later job, so a thread the scheduler held up anywhere holds at most the one span
           it claimed, and the others claim the rest. */
        uint64_t claim;
        Py_ssize_t finished;          /* spans of the job finished (atomic) */
        Py_ssize_t seats;             /* workers that may still join the job: the thread count
                                         of the call less its own thread (workers started by an
                                         earlier, larger count must stay out) */
        Py_ssize_t joined;            /* workers that joined jobs so far (a test counter) */
        unsigned long gen;            /* jobs posted so far (read without mu while spinning) */
        int sleepers;                 /* workers asleep on `work` (mu held) */
        int caller_cpu;               /* the CPU the caller last ran on, and the one a worker */
        int worker_cpu;               /* last ran on when it joined a job (-1: unknown): a
                                         spinning thread yields only to a thread of the pool
                                         that shares its core (see nx_pool_share_core) */
    } nx_pool_state;

    /* A thread that has just finished spins this long (polling, without the lock) before it
       sleeps on a condition variable: the next kernel of a compiled program, or the other
       threads' last spans, usually come within that time, and waking a sleeping thread costs
       tens of microseconds (more on a virtual machine whose idle CPU the host descheduled). */
    #define NX_POOL_SPIN_NS 200000L
    #define NX_POOL_MAX_COUNT ((Py_ssize_t)0x7FFFFFFF)
    /* A worker the scheduler holds up (another process on its core) keeps the span it claimed
       until it runs again, a time slice later: the caller, done with every other span, waits.
       When that wait is longer than NX_POOL_LATE_NS and twice the caller's own work, the
       following jobs run on the caller alone for a while (the same spans in the same order, so
       the same results), then the workers are tried again.  That while is NX_POOL_BACKOFF_NS,
       doubled (up to NX_POOL_BACKOFF_MAX_NS) each time a worker is late again within
       NX_POOL_BACKOFF_NS of the last back-off's end: a core that stays busy (another process
       running all along) then costs one stall per NX_POOL_BACKOFF_MAX_NS, not one per
       NX_POOL_BACKOFF_NS (each stall is a whole time slice of the scheduler, milliseconds, the
       time of ten compiled steps of a small MLP), while a passing one costs one short back-off
       (the first is short: a worker late on an idle machine, a wake-up the host delayed,
       costs 25 ms at one thread's speed). */
    #define NX_POOL_LATE_NS 200000L
    #define NX_POOL_BACKOFF_NS 25000000L
    #define NX_POOL_BACKOFF_MAX_NS 200000000L

    static long nx_pool_now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
    }

    static void nx_pool_relax(void) {
    #if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
    #elif defined(__aarch64__)
        __asm__ __volatile__("yield");
    #endif
    }

    /* Whether this thread runs on the CPU *other (a pool thread's last one) was seen on.  A
       spinning thread that shares its core with the thread it waits for (the caller, when
       another process holds the other core) would take that core's time slices from it for
       nothing, the whole of a compiled step (its jobs come every few microseconds): half again
       as slow as the caller alone.  So it yields the core between its polls, but only then:
       yielding on every poll also slowed the jobs on an idle machine (a threaded scatter-add
       1.5x), the scheduler then packing the yielding threads onto fewer cores. */
    static int nx_pool_share_core(const int *other) {
        int mine = sched_getcpu();
        return mine >= 0 && mine == __atomic_load_n(other, __ATOMIC_RELAXED);
    }

    /* Spin until *word differs from `seen` or the spin time is over (called without mu),
       yielding the core between polls while it shares it with the thread at *other_cpu. */
    static void nx_pool_spin_while_equal(unsigned long *word, unsigned long seen,
                                         const int *other_cpu) {
        long start = nx_pool_now_ns();
        int i;
        for (;;) {
            for (i = 0; i < 64; i++) {
                if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
                    return;
                nx_pool_relax();
            }
            if (nx_pool_now_ns() - start > NX_POOL_SPIN_NS)
                return;
            if (nx_pool_share_core(other_cpu))
                sched_yield();
        }
    }

    static nx_pool_state nx_pool_the_pool;
    static pid_t nx_pool_pid = 0;  /* the process whose threads the pool holds */
    static int nx_pool_busy = 0;   /* a call owns the pool (read and set under the GIL) */

    /* Whether a worker may join the posted job: spans are left and a seat is free (mu held). */
    static int nx_pool_open(nx_pool_state *p) {
        uint64_t c = __atomic_load_n(&p->claim, __ATOMIC_ACQUIRE);
        return p->seats > 0 && (c >> 32) == (uint32_t)p->gen
               && (Py_ssize_t)(c & 0xFFFFFFFFu) < p->count;
    }

    /* Claim and run spans of job `gen` (whose fn, ctx, n, step, count the arguments are) until
       none is left; called without mu.  The thread that finishes the job's last span wakes the
       caller if it sleeps. */
    static void nx_pool_claim_spans(nx_pool_state *p, uint32_t gen, nx_pool_span_fn fn,
                                    const void *ctx, Py_ssize_t n, Py_ssize_t step,
                                    Py_ssize_t count) {
        uint64_t c = __atomic_load_n(&p->claim, __ATOMIC_ACQUIRE);
        for (;;) {
            Py_ssize_t k, lo, hi;
            if ((uint32_t)(c >> 32) != gen || (Py_ssize_t)(c & 0xFFFFFFFFu) >= count)
                return;
            if (!__atomic_compare_exchange_n(&p->claim, &c, c + 1, 1, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
                continue;             /* c now holds the current word */
            k = (Py_ssize_t)(c & 0xFFFFFFFFu);
            lo = k * step;
            hi = lo + step < n ? lo + step : n;
            fn(ctx, lo, hi);
            if (__atomic_add_fetch(&p->finished, 1, __ATOMIC_ACQ_REL) == count) {
                pthread_mutex_lock(&p->mu);
                pthread_cond_broadcast(&p->done);
                pthread_mutex_unlock(&p->mu);
            }
            c = __atomic_load_n(&p->claim, __ATOMIC_ACQUIRE);
        }
    }

    static void *nx_pool_worker(void *arg) {
        nx_pool_state *p = (nx_pool_state *)arg;
        /* Asynchronous signals stay with the Python threads; faults remain deliverable here
           (so faulthandler reports them). */
        sigset_t block;
        sigfillset(&block);
        sigdelset(&block, SIGSEGV); sigdelset(&block, SIGBUS); sigdelset(&block, SIGFPE);
        sigdelset(&block, SIGILL); sigdelset(&block, SIGABRT); sigdelset(&block, SIGTRAP);
        pthread_sigmask(SIG_BLOCK, &block, NULL);
        pthread_mutex_lock(&p->mu);
        for (;;) {
            nx_pool_span_fn fn;
            const void *ctx;
            Py_ssize_t n, step, count;
            uint32_t gen;
            if (!nx_pool_open(p)) {
                unsigned long seen = p->gen;
                pthread_mutex_unlock(&p->mu);
                nx_pool_spin_while_equal(&p->gen, seen, &p->caller_cpu);
                pthread_mutex_lock(&p->mu);
            }
            while (!nx_pool_open(p)) {
                p->sleepers++;
                pthread_cond_wait(&p->work, &p->mu);
                p->sleepers--;
            }
            p->seats--;               /* this worker's seat in this job */
            p->joined++;
            fn = p->fn; ctx = p->ctx; n = p->n; step = p->step; count = p->count;
            gen = (uint32_t)p->gen;
            __atomic_store_n(&p->worker_cpu, sched_getcpu(), __ATOMIC_RELAXED);
            pthread_mutex_unlock(&p->mu);
            nx_pool_claim_spans(p, gen, fn, ctx, n, step, count);
            pthread_mutex_lock(&p->mu);
        }
        return NULL;
    }

    /* Called with the GIL held: 1 if this call now owns the pool, 0 if another call does. */
    static int nx_pool_acquire(void) {
        pid_t pid = getpid();
        if (nx_pool_pid != pid) {
            /* First use, or a forked child: the parent's workers do not exist here. */
            nx_pool_state *p = &nx_pool_the_pool;
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
            p->count = p->finished = p->seats = p->joined = 0;
            p->gen = 0;
            p->claim = 0;
            p->caller_cpu = p->worker_cpu = -1;
            p->sleepers = 0;
            nx_pool_pid = pid;
            nx_pool_busy = 0;
        }
        if (nx_pool_busy)
            return 0;
        nx_pool_busy = 1;
        return 1;
    }

    /* Called with the GIL held, by the owner once its run has returned. */
    static void nx_pool_release(void) {
        nx_pool_busy = 0;
    }

    /* The owner's run (without the GIL): fn over the `count` spans of [0, n), on up to
       min(count, threads) - 1 workers and this thread.  Every thread claims spans one at a
       time until none is left (no fixed share per thread), so a thread the scheduler holds up
       delays the job by at most the one span it holds, and this thread runs spans for as long
       as any is left: it sleeps only once all are claimed.  Returns when every span is done.
       Only that many workers take a seat in the job, however many an earlier call started. */
    static long nx_pool_backoff_until = 0;   /* run jobs on the caller alone until then */
    static long nx_pool_backoffs = 0;        /* how often that began (a test counter) */
    static long nx_pool_backoff_len = NX_POOL_BACKOFF_NS;   /* the last back-off's length */

    static void nx_pool_run_on(nx_pool_span_fn fn, const void *ctx, Py_ssize_t n,
                               Py_ssize_t step, Py_ssize_t count, Py_ssize_t threads) {
        nx_pool_state *p = &nx_pool_the_pool;
        uint32_t gen;
        long t_start, t_own, t_waited;
        int woke;
        long until = __atomic_load_n(&nx_pool_backoff_until, __ATOMIC_RELAXED);
        if (until != 0 && nx_pool_now_ns() < until)
            threads = 1;
        if (count > NX_POOL_MAX_COUNT || threads <= 1) {
            /* more spans than the claim word counts, or one thread (backing off): this thread
               runs them in order */
            Py_ssize_t k, lo, hi;
            for (k = 0; k < count; k++) {
                lo = k * step;
                hi = lo + step < n ? lo + step : n;
                fn(ctx, lo, hi);
            }
            return;
        }
        pthread_mutex_lock(&p->mu);
        if (threads > count)
            threads = count;
        while (p->workers < threads - 1) {
            pthread_t tid;
            pthread_attr_t attr;
            int ok;
            if (pthread_attr_init(&attr) != 0)
                break;
            /* the span functions need ~20 KiB */
            pthread_attr_setstacksize(&attr, (size_t)1 << 18);
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            ok = pthread_create(&tid, &attr, nx_pool_worker, p) == 0;
            pthread_attr_destroy(&attr);
            if (!ok)
                break;                /* fewer workers: this thread claims more spans */
            p->workers++;
        }
        p->fn = fn;
        p->ctx = ctx;
        p->n = n;
        p->step = step;
        p->count = count;
        p->seats = threads - 1;
        __atomic_store_n(&p->finished, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&p->caller_cpu, sched_getcpu(), __ATOMIC_RELAXED);
        gen = (uint32_t)(p->gen + 1);
        __atomic_store_n(&p->claim, (uint64_t)gen << 32, __ATOMIC_RELEASE);
        __atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
        /* fewer workers awake than seats: one asleep has a wake-up to pay (long on a virtual
           machine whose idle CPU the host descheduled, as after every back-off), and its
           lateness says nothing of a busy core */
        woke = p->workers - p->sleepers < threads - 1;
        if (threads > 1)
            pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        t_start = nx_pool_now_ns();
        nx_pool_claim_spans(p, gen, fn, ctx, n, step, count);
        t_own = nx_pool_now_ns();
        if (__atomic_load_n(&p->finished, __ATOMIC_ACQUIRE) < count) {
            /* the workers' last spans: spin for them before sleeping (yielding the core
               between polls while a worker last ran on this core: see nx_pool_share_core) */
            long start = nx_pool_now_ns();
            while (__atomic_load_n(&p->finished, __ATOMIC_ACQUIRE) < count
                   && nx_pool_now_ns() - start < NX_POOL_SPIN_NS) {
                int i;
                for (i = 0; i < 64; i++)
                    nx_pool_relax();
                if (__atomic_load_n(&p->finished, __ATOMIC_ACQUIRE) < count
                        && nx_pool_share_core(&p->worker_cpu))
                    sched_yield();
            }
        }
        pthread_mutex_lock(&p->mu);
        while (__atomic_load_n(&p->finished, __ATOMIC_ACQUIRE) < count)
            pthread_cond_wait(&p->done, &p->mu);
        p->fn = NULL;
        p->ctx = NULL;
        pthread_mutex_unlock(&p->mu);
        t_waited = nx_pool_now_ns() - t_own;
        /* twice the caller's own work: a job of as many spans as threads plus one (three
           equal spans on two threads) makes the caller wait one span's time for the worker's
           second span, which is not lateness; a held-up worker costs a scheduler time slice,
           milliseconds, far more */
        if (!woke && t_waited > NX_POOL_LATE_NS && t_waited > 2 * (t_own - t_start)) {
            long len = NX_POOL_BACKOFF_NS;
            if (until != 0 && t_start - until < NX_POOL_BACKOFF_NS) {
                /* late again soon after the last back-off: the core is still busy */
                len = nx_pool_backoff_len < NX_POOL_BACKOFF_MAX_NS / 2
                      ? 2 * nx_pool_backoff_len : NX_POOL_BACKOFF_MAX_NS;
            }
            nx_pool_backoff_len = len;
            __atomic_store_n(&nx_pool_backoff_until, t_own + t_waited + len, __ATOMIC_RELAXED);
            nx_pool_backoffs++;
        }
    }

    static void nx_pool_run(nx_pool_span_fn fn, const void *ctx, Py_ssize_t n,
                            Py_ssize_t step, Py_ssize_t count) {
        nx_pool_run_on(fn, ctx, n, step, count, count);
    }

    /* The test probe's span: record which thread ran each index, taking `ctx[0]` us each. */
    static void nx_pool_probe_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) {
        const unsigned long long *c = (const unsigned long long *)ctx;
        unsigned long long *ids = (unsigned long long *)(uintptr_t)c[1];
        struct timespec ts;
        Py_ssize_t k;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)c[0] * 1000L;
        for (k = lo; k < hi; k++) {
            ids[k] = (unsigned long long)(uintptr_t)pthread_self();
            nanosleep(&ts, NULL);
        }
    }

    /* The stall probe's span: ctx = {caller thread, stall us, the stalled flag, ids, span us};
       every span sleeps `span us`, and the first span a worker (not the caller) claims sleeps
       `stall us` more (a core the scheduler gave to another process); each records its
       thread. */
    static void nx_pool_stall_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) {
        const unsigned long long *c = (const unsigned long long *)ctx;
        unsigned long long self = (unsigned long long)(uintptr_t)pthread_self();
        unsigned long long *flag = (unsigned long long *)(uintptr_t)c[2];
        unsigned long long *ids = (unsigned long long *)(uintptr_t)c[3];
        Py_ssize_t k;
        if (self != c[0] && __atomic_fetch_add(flag, 1, __ATOMIC_ACQ_REL) == 0) {
            struct timespec ts;
            ts.tv_sec = (time_t)(c[1] / 1000000ULL);
            ts.tv_nsec = (long)(c[1] % 1000000ULL) * 1000L;
            nanosleep(&ts, NULL);
        }
        for (k = lo; k < hi; k++) {
            struct timespec ts;
            ts.tv_sec = (time_t)(c[4] / 1000000ULL);
            ts.tv_nsec = (long)(c[4] % 1000000ULL) * 1000L;
            nanosleep(&ts, NULL);
            ids[k] = self;
        }
    }
    static unsigned long long nx_pool_self(void) {
        return (unsigned long long)(uintptr_t)pthread_self();
    }
    #else
    #define NX_POOL_HAVE_THREADS 0
    static long nx_pool_backoff_until = 0;
    static long nx_pool_backoffs = 0;
    static long nx_pool_backoff_len = 0;
    #define NX_POOL_BACKOFF_NS 0L
    static long nx_pool_now_ns(void) { return 0; }
    static void nx_pool_stall_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) {
        const unsigned long long *c = (const unsigned long long *)ctx;
        unsigned long long *ids = (unsigned long long *)(uintptr_t)c[3];
        Py_ssize_t k;
        for (k = lo; k < hi; k++)
            ids[k] = c[0];
    }
    static unsigned long long nx_pool_self(void) { return 1; }
    static int nx_pool_acquire(void) { return 0; }
    static void nx_pool_release(void) {}
    static void nx_pool_run_on(nx_pool_span_fn fn, const void *ctx, Py_ssize_t n,
                               Py_ssize_t step, Py_ssize_t count, Py_ssize_t threads) {
        (void)step; (void)count; (void)threads;
        fn(ctx, 0, n);                /* no thread API known here: one span, this thread */
    }
    static void nx_pool_run(nx_pool_span_fn fn, const void *ctx, Py_ssize_t n,
                            Py_ssize_t step, Py_ssize_t count) {
        nx_pool_run_on(fn, ctx, n, step, count, count);
    }
    static void nx_pool_probe_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) {
        const unsigned long long *c = (const unsigned long long *)ctx;
        unsigned long long *ids = (unsigned long long *)(uintptr_t)c[1];
        Py_ssize_t k;
        for (k = lo; k < hi; k++)
            ids[k] = 1;
    }
    #endif
    """
    ctypedef void (*nx_pool_span_fn)(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil
    int nx_pool_acquire() noexcept
    void nx_pool_release() noexcept
    void nx_pool_run(nx_pool_span_fn fn, const void* ctx, Py_ssize_t n, Py_ssize_t step,
                     Py_ssize_t count) noexcept nogil
    void nx_pool_run_on(nx_pool_span_fn fn, const void* ctx, Py_ssize_t n, Py_ssize_t step,
                        Py_ssize_t count, Py_ssize_t threads) noexcept nogil
    int NX_POOL_HAVE_THREADS
    void nx_pool_probe_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil
    void nx_pool_stall_span(const void* ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil
    unsigned long long nx_pool_self() noexcept nogil
    long nx_pool_backoff_until
    long nx_pool_backoffs
    long nx_pool_backoff_len
    long NX_POOL_BACKOFF_NS
    long nx_pool_now_ns() noexcept nogil


cdef int pool_acquire() noexcept:
    return nx_pool_acquire()


cdef void pool_release() noexcept:
    nx_pool_release()


cdef void pool_run(span_fn fn, const void* ctx, Py_ssize_t n, Py_ssize_t step,
                   Py_ssize_t count) noexcept nogil:
    nx_pool_run(<nx_pool_span_fn>fn, ctx, n, step, count)


cdef bint pool_has_threads() noexcept:
    return NX_POOL_HAVE_THREADS


cdef void run_spans(span_fn fn, const void* ctx, Py_ssize_t n, Py_ssize_t step,
                    Py_ssize_t count, Py_ssize_t threads) noexcept:
    """``fn(ctx, lo, hi)`` for each of the ``count`` spans ``[k * step, min((k + 1) * step,
    n))``, on up to ``threads`` threads of the pool when it is free (in this thread otherwise,
    span after span); returns when every span is done.  Called with the GIL, which it
    releases meanwhile."""
    cdef Py_ssize_t k, lo, hi
    if count > 1 and threads > 1 and NX_POOL_HAVE_THREADS and nx_pool_acquire():
        with nogil:
            nx_pool_run_on(<nx_pool_span_fn>fn, ctx, n, step, count, threads)
        nx_pool_release()
        return
    with nogil:
        for k in range(count):
            lo = k * step
            hi = lo + step if lo + step < n else n
            fn(ctx, lo, hi)


# ---------------------------------------------------------------------------------------------
# The thread count
# ---------------------------------------------------------------------------------------------

def _default_num_threads():
    env = os.environ.get("NX_RUNE_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:           # not on Linux
        return os.cpu_count() or 1


cdef Py_ssize_t _num_threads = _default_num_threads()


cdef Py_ssize_t num_threads() noexcept:
    return _num_threads


def get_num_threads():
    """Number of threads the kernels use for large inputs (env ``NX_RUNE_NUM_THREADS``)."""
    return _num_threads


def set_num_threads(n):
    """Set the number of threads used for large inputs (``n >= 1``).

    The calls that start afterwards use it; safe while other threads run kernels.
    """
    global _num_threads
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    _num_threads = int(n)



def _backoffs():
    """Test hook: how many times a held-up worker has made the pool run jobs on the caller
    alone for a while (see NX_POOL_LATE_NS), and whether it does now."""
    return nx_pool_backoffs, nx_pool_backoff_until != 0


def _backoff_ns():
    """Test hook: ``(remaining, length)``: nanoseconds left of the back-off now running (0 if
    none) and the length of the last one begun."""
    cdef long left = nx_pool_backoff_until - nx_pool_now_ns() if nx_pool_backoff_until else 0
    return max(0, left), nx_pool_backoff_len


def _end_backoff():
    """Test hook: give the next jobs their workers again, the next back-off its first length
    (the probes below call it first, unless told not to)."""
    global nx_pool_backoff_until, nx_pool_backoff_len
    nx_pool_backoff_until = 0
    nx_pool_backoff_len = NX_POOL_BACKOFF_NS


def _probe_threads(Py_ssize_t spans, threads=None, Py_ssize_t sleep_us=1000):
    """Test hook: ``spans`` one-item spans run as the kernels run theirs (``run_spans`` on
    ``threads`` threads, by default the count ``get_num_threads`` gives), each sleeping
    ``sleep_us`` microseconds (long enough for every seated worker to claim one); returns the
    number of distinct threads that ran a span."""
    cdef Py_ssize_t nt = _num_threads if threads is None else threads
    if spans < 1 or nt < 1 or not 0 <= sleep_us <= 100000:
        raise ValueError(f"spans, threads: must be >= 1, sleep_us in [0, 100000]; got "
                         f"{spans}, {threads}, {sleep_us}")
    _end_backoff()
    ids = np.zeros(spans, np.uint64)
    cdef unsigned long long ctx[2]
    cdef unsigned long long[::1] view = ids
    ctx[0] = <unsigned long long>sleep_us
    ctx[1] = <unsigned long long><size_t>&view[0]
    run_spans(<span_fn>nx_pool_probe_span, <const void*>ctx, spans, 1, spans, nt)
    return len(set(ids.tolist()))


def _probe_stall(Py_ssize_t spans, threads=None, Py_ssize_t stall_us=50000,
                 Py_ssize_t span_us=1000, end_backoff=True):
    """Test hook: ``spans`` one-item spans run as the kernels run theirs, each sleeping
    ``span_us`` microseconds, the first one a worker claims ``stall_us`` more (a core held up
    by the scheduler);
    returns the number of spans the calling thread ran (the others can take over every span
    but the held-up one).  ``end_backoff=False`` leaves the pool's back-off state as it is."""
    cdef Py_ssize_t nt = _num_threads if threads is None else threads
    if spans < 1 or nt < 1 or not 0 <= stall_us <= 1000000 or not 0 <= span_us <= 100000:
        raise ValueError(f"spans, threads: must be >= 1, stall_us in [0, 1000000], span_us in "
                         f"[0, 100000]; got {spans}, {threads}, {stall_us}, {span_us}")
    if end_backoff:
        _end_backoff()
    # first a short job that wakes the workers: a worker held up while it was awake, spinning
    # for the next job, is what the back-off answers (a sleeping one's wake-up is not counted)
    warm = np.zeros(4 * nt, np.uint64)
    cdef unsigned long long wflag = 0
    cdef unsigned long long wctx[5]
    cdef unsigned long long[::1] wview = warm
    wctx[0] = nx_pool_self()
    wctx[1] = 0
    wctx[2] = <unsigned long long><size_t>&wflag
    wctx[3] = <unsigned long long><size_t>&wview[0]
    wctx[4] = 200
    run_spans(<span_fn>nx_pool_stall_span, <const void*>wctx, 4 * nt, 1, 4 * nt, nt)
    ids = np.zeros(spans, np.uint64)
    cdef unsigned long long flag = 0
    cdef unsigned long long ctx[5]
    cdef unsigned long long[::1] view = ids
    ctx[0] = nx_pool_self()
    ctx[1] = <unsigned long long>stall_us
    ctx[2] = <unsigned long long><size_t>&flag
    ctx[3] = <unsigned long long><size_t>&view[0]
    ctx[4] = <unsigned long long>span_us
    run_spans(<span_fn>nx_pool_stall_span, <const void*>ctx, spans, 1, spans, nt)
    return int((ids == ctx[0]).sum())
