# Scatter walks that combine updates (add, mul; max, min) (included by gather.pyx).
#
# A textual include, not a module of its own: it compiles into nx_rune._kernels.gather, so its
# inline kernels stay inline in their callers.  It uses the imports and cimports of gather.pyx
# (all kept there, where the layering test reads them).

# ----------------------------------------------------------------------------------------
# nogil kernels: scatter that combines (add, mul, max, min)
# ----------------------------------------------------------------------------------------

cdef inline void _accum_one(numeric_t* p, numeric_t u, int mode) noexcept nogil:
    if mode == MODE_ADD:
        p[0] = p[0] + u
    else:
        p[0] = p[0] * u


cdef inline int _accum_row(numeric_t* out, const index_t* idx, const numeric_t* upd,
                           Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                           Py_ssize_t sa, Py_ssize_t sd, int mode, int64_t* bad) noexcept nogil:
    # One at a time: a read-modify-write may hit the element the one before it wrote, so
    # grouping them (as gather does) only delays the loads.  The first loop is for
    # non-negative indices (one comparison each); a negative one takes a side branch, and
    # after NEGATIVE_SWITCH of them the rest of the row goes to the loop that wraps every
    # index without a branch (random signs would mispredict the side branch half the time).
    cdef Py_ssize_t j = 0, k, negatives = 0
    while j < m:
        k = idx[j * si]
        if <size_t>k >= <size_t>n:
            if k >= 0 or k < -n:
                bad[0] = k
                return 1
            k += n
            negatives += 1
            if negatives > NEGATIVE_SWITCH:
                _accum_one(out + j * sa + k * ax, upd[j * sd], mode)
                j += 1
                break
        _accum_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    while j < m:
        k = _wrap(idx[j * si], n)
        if <size_t>k >= <size_t>n:
            bad[0] = idx[j * si]
            return 1
        _accum_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    return 0


cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define NX_GATHER_LE 1
    #else
    #define NX_GATHER_LE 0
    #endif
    """
    int NX_GATHER_LE     # 1 where the low half of an 8-byte word is the first int32


cdef bint _unroll_on = True


def _set_unroll(bint on):
    """For the tests: whether contiguous add / mul rows take _accum_row4 (else _accum_row).
    Returns the previous setting."""
    global _unroll_on
    old = _unroll_on
    _unroll_on = on
    return old


cdef inline Py_ssize_t _accum4(numeric_t* out, const index_t* idx, const numeric_t* upd,
                               Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa,
                               int mode) noexcept nogil:
    """Four contiguous updates in order, their indices loaded first (int32 ones as two
    8-byte words), each then checked: the count applied before the first index outside
    [0, n) (4: all; the caller wraps or reports that one)."""
    cdef Py_ssize_t k0, k1, k2, k3
    cdef uint64_t p0, p1
    if index_t is int32_t and NX_GATHER_LE:
        memcpy(&p0, idx, 8)
        memcpy(&p1, idx + 2, 8)
        k0 = <int32_t>(<uint32_t>p0)
        k1 = <int32_t>(<uint32_t>(p0 >> 32))
        k2 = <int32_t>(<uint32_t>p1)
        k3 = <int32_t>(<uint32_t>(p1 >> 32))
    else:
        k0 = idx[0]
        k1 = idx[1]
        k2 = idx[2]
        k3 = idx[3]
    if <size_t>k0 >= <size_t>n:
        return 0
    _accum_one(out + k0 * ax, upd[0], mode)
    if <size_t>k1 >= <size_t>n:
        return 1
    _accum_one(out + sa + k1 * ax, upd[1], mode)
    if <size_t>k2 >= <size_t>n:
        return 2
    _accum_one(out + 2 * sa + k2 * ax, upd[2], mode)
    if <size_t>k3 >= <size_t>n:
        return 3
    _accum_one(out + 3 * sa + k3 * ax, upd[3], mode)
    return 4


cdef inline int _accum_row4(numeric_t* out, const index_t* idx, const numeric_t* upd,
                            Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t sa,
                            int mode, int64_t* bad) noexcept nogil:
    """_accum_row for contiguous indices and updates, four at a time by _accum4 while the
    indices are non-negative; from the first negative or bad one the rest of the row goes
    to _accum_row, which wraps and names the first bad.  Same order, same result.
    (Measured, 1e6 float64 updates, one thread: into 1000 bins 522-534 us against 826-837
    us one at a time, into (1000, 100) along axis 1 493-607 against 610-901 us; the one at
    a time loop's time moves by 25% with where it lands in the code.)"""
    cdef Py_ssize_t j = 0, c
    while j + 4 <= m:
        c = _accum4(out + j * sa, idx + j, upd + j, n, ax, sa, mode)
        j += c
        if c < 4:
            break
    return _accum_row(out + j * sa, idx + j, upd + j, m - j, n, ax, 1, sa, 1, mode, bad)


cdef extern from *:
    """
    #define nx_gather_prefetch_nta(p) __builtin_prefetch((p), 0, 0)
    """
    void nx_gather_prefetch_nta(const void* p) noexcept nogil


# Measured (1e6 float64 updates into 1e5 bins, one thread, min of 60 calls, pairs run
# alternately in one process on the loaded 2-core machine): plain 1126-1362 us, with the
# non-temporal fetches 750-1068 us; into 4e5 bins no difference.  (A prefetch of the target
# element 24 updates ahead showed no gain, and was dropped.)
cdef enum:
    FAR_BYTES = 1 << 17     # 1-D targets larger than this stream their updates past the caches
    FAR_AHEAD = 512         # bytes ahead that the streams are fetched


cdef int _accum_far(numeric_t* out, const index_t* idx, const numeric_t* upd, Py_ssize_t m,
                    Py_ssize_t n, int mode, int64_t* bad) noexcept nogil:
    """_accum_row for a contiguous 1-D walk into a large target: the indices and updates,
    read once, are fetched ahead as non-temporal, so that they do not push the (randomly
    hit) target out of the caches.  Eight at a time by _accum4 (when _unroll_on), an index
    outside [0, n) then wrapped or reported on its own."""
    cdef Py_ssize_t j = 0, k, e, c
    cdef Py_ssize_t ia = FAR_AHEAD // sizeof(index_t), ua = FAR_AHEAD // sizeof(numeric_t)
    while j < m:
        e = j + 8 if j + 8 < m else m
        nx_gather_prefetch_nta(idx + j + ia)
        nx_gather_prefetch_nta(upd + j + ua)
        if sizeof(numeric_t) > 8:
            nx_gather_prefetch_nta(upd + j + ua + 4)
        if _unroll_on and e == j + 8:
            c = _accum4(out, idx + j, upd + j, n, 1, 0, mode)
            if c == 4:
                c += _accum4(out, idx + j + 4, upd + j + 4, n, 1, 0, mode)
            j += c
        while j < e:
            k = idx[j]
            if <size_t>k >= <size_t>n:
                if k >= 0 or k < -n:
                    bad[0] = k
                    return 1
                k += n
            _accum_one(out + k, upd[j], mode)
            j += 1
    return 0


cdef inline int _accum_row_dispatch(numeric_t* out, const index_t* idx, const numeric_t* upd,
                                    Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                                    Py_ssize_t sa, Py_ssize_t sd, bint contiguous, int mode,
                                    int64_t* bad) noexcept nogil:
    # Literal modes and strides so that each call site is compiled to its own tight loop.
    if contiguous and sa == 0 and ax == 1:
        if _far_on and n * <Py_ssize_t>sizeof(numeric_t) > FAR_BYTES:
            if mode == MODE_ADD:
                return _accum_far(out, idx, upd, m, n, MODE_ADD, bad)
            return _accum_far(out, idx, upd, m, n, MODE_MUL, bad)
        if _unroll_on:
            if mode == MODE_ADD:
                return _accum_row4(out, idx, upd, m, n, 1, 0, MODE_ADD, bad)
            return _accum_row4(out, idx, upd, m, n, 1, 0, MODE_MUL, bad)
        if mode == MODE_ADD:
            return _accum_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_ADD, bad)
        return _accum_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_MUL, bad)
    if contiguous and sa == 1:
        if mode == MODE_ADD:
            return _accum_row(out, idx, upd, m, n, ax, 1, 1, 1, MODE_ADD, bad)
        return _accum_row(out, idx, upd, m, n, ax, 1, 1, 1, MODE_MUL, bad)
    if contiguous:
        if mode == MODE_ADD:
            return _accum_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_ADD, bad)
        return _accum_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_MUL, bad)
    if mode == MODE_ADD:
        return _accum_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_ADD, bad)
    return _accum_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_MUL, bad)


cdef int scatter_accum_walk(numeric_t* out, const index_t* idx, const numeric_t* upd,
                            const Walk* w, int mode, int64_t* bad) noexcept nogil:
    cdef Cursor c
    cdef Py_ssize_t r
    cdef int last = w.ndim - 1
    cdef bint contiguous = _inner_contiguous(w)
    memset(&c, 0, sizeof(Cursor))
    for r in range(w.rows):
        if _accum_row_dispatch(out + c.off[OP_ALONG], idx + c.off[OP_INDEX],
                               upd + c.off[OP_DENSE], w.shape[last], w.n, w.axis_stride,
                               w.strides[OP_INDEX][last], w.strides[OP_ALONG][last],
                               w.strides[OP_DENSE][last], contiguous, mode, bad):
            return 1
        _advance(&c, w)
    return 0


cdef inline void _order_one(real_t* p, real_t u, int mode) noexcept nogil:
    cdef real_t cur = p[0], r
    # np.maximum / np.minimum exactly: a NaN on either side wins, and ties keep the update.
    # Written as selects that GCC makes maxsd / minsd (whose NaN and tie rules are those of
    # `cur > u ? cur : u`) and conditional moves, the store always done: whether an update
    # wins is data, which a branch mispredicts often on random values.  (Measured, 1e6
    # float64 max updates into (1000, 100) along axis 1, one thread: 3.2-3.9 ms with the
    # branch, 0.63-0.67 ms without; torch's scatter_reduce_ 3.2 ms.)
    if mode == MODE_MAX:
        r = cur if cur > u else u
    else:
        r = cur if cur < u else u
    if real_t is float or real_t is double:
        r = cur if cur != cur else r
    p[0] = r


cdef inline int _order_row(real_t* out, const index_t* idx, const real_t* upd,
                           Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                           Py_ssize_t sa, Py_ssize_t sd, int mode, int64_t* bad) noexcept nogil:
    # One at a time: a read-modify-write may hit the element the one before it wrote, so
    # grouping them (as gather does) only delays the loads.  The first loop is for
    # non-negative indices (one comparison each); a negative one takes a side branch, and
    # after NEGATIVE_SWITCH of them the rest of the row goes to the loop that wraps every
    # index without a branch (random signs would mispredict the side branch half the time).
    cdef Py_ssize_t j = 0, k, negatives = 0
    while j < m:
        k = idx[j * si]
        if <size_t>k >= <size_t>n:
            if k >= 0 or k < -n:
                bad[0] = k
                return 1
            k += n
            negatives += 1
            if negatives > NEGATIVE_SWITCH:
                _order_one(out + j * sa + k * ax, upd[j * sd], mode)
                j += 1
                break
        _order_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    while j < m:
        k = _wrap(idx[j * si], n)
        if <size_t>k >= <size_t>n:
            bad[0] = idx[j * si]
            return 1
        _order_one(out + j * sa + k * ax, upd[j * sd], mode)
        j += 1
    return 0


cdef inline int _order_row_dispatch(real_t* out, const index_t* idx, const real_t* upd,
                                    Py_ssize_t m, Py_ssize_t n, Py_ssize_t ax, Py_ssize_t si,
                                    Py_ssize_t sa, Py_ssize_t sd, bint contiguous, int mode,
                                    int64_t* bad) noexcept nogil:
    if contiguous and sa == 0 and ax == 1:
        if mode == MODE_MAX:
            return _order_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_MAX, bad)
        return _order_row(out, idx, upd, m, n, 1, 1, 0, 1, MODE_MIN, bad)
    if contiguous:
        if mode == MODE_MAX:
            return _order_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_MAX, bad)
        return _order_row(out, idx, upd, m, n, ax, 1, sa, 1, MODE_MIN, bad)
    if mode == MODE_MAX:
        return _order_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_MAX, bad)
    return _order_row(out, idx, upd, m, n, ax, si, sa, sd, MODE_MIN, bad)


cdef int scatter_order_walk(real_t* out, const index_t* idx, const real_t* upd,
                            const Walk* w, int mode, int64_t* bad) noexcept nogil:
    cdef Cursor c
    cdef Py_ssize_t r
    cdef int last = w.ndim - 1
    cdef bint contiguous = _inner_contiguous(w)
    memset(&c, 0, sizeof(Cursor))
    for r in range(w.rows):
        if _order_row_dispatch(out + c.off[OP_ALONG], idx + c.off[OP_INDEX],
                               upd + c.off[OP_DENSE], w.shape[last], w.n, w.axis_stride,
                               w.strides[OP_INDEX][last], w.strides[OP_ALONG][last],
                               w.strides[OP_DENSE][last], contiguous, mode, bad):
            return 1
        _advance(&c, w)
    return 0
