"""Threefry-2x32-R counter-based hash (Salmon et al., SC11), bit-exact with Random123.

Kernel layer: NumPy arrays in, NumPy arrays out. The wrappers here validate every argument
(setup.py compiles without bounds checks); the nogil cores below them trust their inputs.

All arithmetic is on ``uint32_t``, so it wraps modulo 2**32 as the algorithm requires.
"""
import numpy as np

from nx_rune._kernels.buffer import empty as _empty

cimport numpy as cnp
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from nx_rune._kernels.pool cimport num_threads as _pool_threads
from nx_rune._kernels.pool cimport pool_has_threads
from nx_rune._kernels.pool cimport run_spans as nx_tf_run_spans
from nx_rune._kernels.pool cimport span_fn as nx_tf_span_fn
from nx_rune._kernels.pool import get_num_threads, set_num_threads  # noqa: F401

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
# Threads: large inputs are cut into a few contiguous spans per core, each hashed without the
# GIL on the kernels' pool, whose threads claim them one at a time (nx_rune/_kernels/pool.pyx:
# how it waits, signals, fork).  Several spans per thread let the other threads take over the
# share of a core the scheduler gives to another process.  Every lane's value depends only on
# its counter, and the span bounds are multiples of CHUNK, so any plan gives the same bits.
# ---------------------------------------------------------------------------------------------


cdef enum:
    MIN_LANES_PER_THREAD = 1 << 16   # below this, waking a thread costs more than it saves
    MAX_THREADS = 1024
    SPANS_PER_THREAD = 4
    MIN_LANES_PER_SPAN = 1 << 14     # a claim costs well under a microsecond: ~1% of a span


cdef (Py_ssize_t, Py_ssize_t, Py_ssize_t) _plan(Py_ssize_t n, Py_ssize_t threads):
    """(step, count, t): [0, n) cut into ``count`` spans of ``step`` lanes (the last one
    ragged), each a multiple of CHUNK lanes long, for ``t`` threads: about SPANS_PER_THREAD
    spans a thread while a span keeps MIN_LANES_PER_SPAN lanes."""
    cdef Py_ssize_t t = min(threads, n // MIN_LANES_PER_THREAD, <Py_ssize_t>MAX_THREADS)
    if t <= 1 or not pool_has_threads():
        return n, 1, 1
    cdef Py_ssize_t spans = max(t, min(t * SPANS_PER_THREAD, n // MIN_LANES_PER_SPAN))
    cdef Py_ssize_t step = (n + spans - 1) // spans
    step = (step + CHUNK - 1) // CHUNK * CHUNK
    return step, (n + step - 1) // step, t


def _span_plan(Py_ssize_t n, Py_ssize_t threads):
    """The spans ``[(lo, hi), ...]`` a call over [0, n) uses with ``threads`` threads."""
    step, count, _ = _plan(n, threads)
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
    """``fn(job, lo, hi)`` over [0, n), without the GIL, on up to ``get_num_threads()`` threads;
    returns when every span is done.  The caller keeps the arrays behind ``job`` alive."""
    cdef Py_ssize_t step, count, t
    step, count, t = _plan(n, _pool_threads())
    nx_tf_run_spans(fn, job, n, step, count, t)


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
    y0 = _empty(x0.shape, dtype=np.uint32)
    y1 = _empty(x0.shape, dtype=np.uint32)
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
    out = _empty(2 * h, dtype=np.uint32)
    _flat_lanes(flat[:h], flat[h:], out[:h], out[h:], int(key[0]), int(key[1]), rounds)
    if odd:
        out = out[:out.shape[0] - 1]
    return out.reshape(count.shape)


def threefry_2x32_keys(key, count, rounds=20):
    """``threefry_2x32`` of a batch of keys: ``key`` of shape ``(*batch, 2)`` hashes ``count``
    of shape ``(*batch, *rest)`` block by block, ``out[b] = threefry_2x32(key[b], count[b])``
    (what vmap of the hash over keys computes, in one call)."""
    _check_u32_array(key, "key")
    if key.ndim == 0 or key.shape[key.ndim - 1] != 2:
        raise ValueError(f"key must have shape (*batch, 2), got {key.shape}")
    _check_u32_array(count, "count")
    rounds = _check_rounds(rounds)
    batch = key.shape[:key.ndim - 1]
    if count.shape[:len(batch)] != batch:
        raise ValueError(f"count must start with the key's batch shape {batch}, got shape "
                         f"{count.shape}")
    cdef Py_ssize_t b = 1, m = 1, h, i
    cdef int r = rounds
    for d in batch:
        b *= d
    for d in count.shape[len(batch):]:
        m *= d
    keys = np.ascontiguousarray(key).reshape(b, 2)
    flat = np.ascontiguousarray(count).reshape(b, m)
    odd = m % 2
    if odd:
        flat = np.concatenate([flat, np.zeros((b, 1), dtype=np.uint32)], axis=1)
    h = (m + odd) // 2
    x0 = np.ascontiguousarray(flat[:, :h])
    x1 = np.ascontiguousarray(flat[:, h:])
    y0 = _empty((b, h), dtype=np.uint32)
    y1 = _empty((b, h), dtype=np.uint32)
    cdef const uint32_t* kp = <const uint32_t*>cnp.PyArray_DATA(keys)
    cdef const uint32_t* x0p = <const uint32_t*>cnp.PyArray_DATA(x0)
    cdef const uint32_t* x1p = <const uint32_t*>cnp.PyArray_DATA(x1)
    cdef uint32_t* y0p = <uint32_t*>cnp.PyArray_DATA(y0)
    cdef uint32_t* y1p = <uint32_t*>cnp.PyArray_DATA(y1)
    if h > 0:
        with nogil:
            for i in range(b):
                threefry_lanes(kp[2 * i], kp[2 * i + 1], x0p + i * h, x1p + i * h,
                               y0p + i * h, y1p + i * h, h, r)
    out = np.concatenate([y0, y1], axis=1)
    if odd:
        out = out[:, :m]
    return np.ascontiguousarray(out).reshape(count.shape)


def _iota(k0, k1, n, start, rounds, IotaMode mode, dtype, width):
    k0 = _check_word(k0, "k0")
    k1 = _check_word(k1, "k1")
    n = _check_count(n)
    start = _check_start(start, n)
    rounds = _check_rounds(rounds)
    out = _empty(n * width, dtype=dtype)
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


def _iota_keys(key, n, rounds, IotaMode mode, dtype):
    _check_u32_array(key, "key")
    if key.ndim == 0 or key.shape[key.ndim - 1] != 2:
        raise ValueError(f"key must have shape (*batch, 2), got {key.shape}")
    cdef Py_ssize_t m = _check_count(n)
    cdef int r = _check_rounds(rounds)
    batch = key.shape[:key.ndim - 1]
    keys = np.ascontiguousarray(key).reshape(-1, 2)
    cdef Py_ssize_t b = keys.shape[0], i
    out = _empty((b, m), dtype=dtype)
    cdef Py_ssize_t row_bytes = m * out.itemsize
    cdef const uint32_t* kp = <const uint32_t*>cnp.PyArray_DATA(keys)
    cdef char* op = <char*>cnp.PyArray_DATA(out)
    if m > 0:
        with nogil:
            for i in range(b):
                threefry_iota(kp[2 * i], kp[2 * i + 1], 0, m, r, mode, op + i * row_bytes)
    return out.reshape(batch + (m,))


def iota_bits32_keys(key, n, rounds=20):
    """``iota_bits32`` of each key of a batch: ``key`` (*batch, 2) gives uint32 (*batch, n),
    ``out[b] = iota_bits32(*key[b], n)`` (vmap of ``random_bits`` over keys, in one call)."""
    return _iota_keys(key, n, rounds, IOTA_XOR32, np.uint32)


def iota_bits64_keys(key, n, rounds=20):
    """``iota_bits64`` of each key of a batch: uint64 (*batch, n) (see ``iota_bits32_keys``)."""
    return _iota_keys(key, n, rounds, IOTA_CAT64, np.uint64)


# The fused samplers, in a file of its own compiled into this module (a textual include: they
# call the hash's inline cores above)
include "threefry_samplers.pxi"
