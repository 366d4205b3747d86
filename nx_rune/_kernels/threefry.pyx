"""Threefry-2x32-R counter-based hash (Salmon et al., SC11), bit-exact with Random123.

Kernel layer: NumPy arrays in, NumPy arrays out. The wrappers here validate every argument
(setup.py compiles without bounds checks); the nogil cores below them trust their inputs.

All arithmetic is on ``uint32_t``, so it wraps modulo 2**32 as the algorithm requires.
"""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from nx_rune._kernels.pool cimport num_threads as _pool_threads
from nx_rune._kernels.pool cimport pool_acquire as nx_tf_pool_acquire
from nx_rune._kernels.pool cimport pool_has_threads
from nx_rune._kernels.pool cimport pool_release as nx_tf_pool_release
from nx_rune._kernels.pool cimport pool_run as nx_tf_pool_run
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
# Threads: large inputs are cut into one contiguous span per core, each hashed without the GIL
# on the kernels' pool (nx_rune/_kernels/pool.pyx: how it waits, signals, fork).
# ---------------------------------------------------------------------------------------------


cdef enum:
    MIN_LANES_PER_THREAD = 1 << 16   # below this, waking a thread costs more than it saves
    MAX_THREADS = 1024


cdef (Py_ssize_t, Py_ssize_t) _plan(Py_ssize_t n, Py_ssize_t threads):
    """(step, count): [0, n) cut into ``count`` spans of ``step`` lanes (the last one ragged),
    at most ``threads`` of them, each a multiple of CHUNK lanes long."""
    cdef Py_ssize_t t = min(threads, n // MIN_LANES_PER_THREAD, <Py_ssize_t>MAX_THREADS)
    if t <= 1 or not pool_has_threads():
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
    """``fn(job, lo, hi)`` over [0, n), without the GIL, on up to ``get_num_threads()`` threads;
    returns when every span is done.  The caller keeps the arrays behind ``job`` alive."""
    cdef Py_ssize_t step, count
    step, count = _plan(n, _pool_threads())
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
    y0 = np.empty((b, h), dtype=np.uint32)
    y1 = np.empty((b, h), dtype=np.uint32)
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


def _iota_keys(key, n, rounds, IotaMode mode, dtype):
    _check_u32_array(key, "key")
    if key.ndim == 0 or key.shape[key.ndim - 1] != 2:
        raise ValueError(f"key must have shape (*batch, 2), got {key.shape}")
    cdef Py_ssize_t m = _check_count(n)
    cdef int r = _check_rounds(rounds)
    batch = key.shape[:key.ndim - 1]
    keys = np.ascontiguousarray(key).reshape(-1, 2)
    cdef Py_ssize_t b = keys.shape[0], i
    out = np.empty((b, m), dtype=dtype)
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
