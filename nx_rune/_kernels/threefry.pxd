# Threefry-2x32 counter-based hash: nogil cores for other kernel modules.
from libc.stdint cimport uint32_t, uint64_t


# y = Threefry-2x32-R(key=(k0, k1), counter=(x0[i], x1[i])) for i in [0, n).
# Outputs must not overlap the inputs.
cdef void threefry_lanes(uint32_t k0, uint32_t k1,
                         const uint32_t* x0, const uint32_t* x1,
                         uint32_t* y0, uint32_t* y1,
                         Py_ssize_t n, int rounds) noexcept nogil

# Hash of the 64-bit iota counters (x0, x1) = (i >> 32, i & 0xFFFFFFFF) for i in
# [start, start + n), reduced per `mode` (one of the IOTA_* values) into `out`.
cdef enum IotaMode:
    IOTA_XOR32 = 0    # out32[j] = y0 ^ y1
    IOTA_CAT64 = 1    # out64[j] = (y0 << 32) | y1
    IOTA_PAIRS = 2    # out32[2j] = y0, out32[2j + 1] = y1

cdef void threefry_iota(uint32_t k0, uint32_t k1, uint64_t start, Py_ssize_t n,
                        int rounds, IotaMode mode, void* out) noexcept nogil
