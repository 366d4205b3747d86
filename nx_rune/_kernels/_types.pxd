# Fused types shared by every kernel module of nx_rune.
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t)

# Every dtype whose arithmetic a kernel does in C (float16 is widened by the Python wrapper).
ctypedef fused numeric_t:
    int8_t
    int16_t
    int32_t
    int64_t
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    float
    double
    float complex
    double complex

# Dtypes with a total order (max/min reductions and scatter modes).
ctypedef fused real_t:
    int8_t
    int16_t
    int32_t
    int64_t
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    float
    double

ctypedef fused index_t:
    int32_t
    int64_t

# Plain bit patterns of each item size: movement kernels copy bits, not values.
ctypedef struct item16_t:
    uint64_t lo
    uint64_t hi

ctypedef fused item_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    item16_t
