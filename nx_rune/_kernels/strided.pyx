"""Strided copy: the one kernel that moves data for every movement op.

``copy_strided`` copies an n-d strided block of items from one Buffer into another (any strides,
negative and zero included, in elements).  Axes are coalesced where both sides allow it;
a unit-stride inner axis becomes a memcpy per row, and when the destination's inner axis is the
source's long-stride axis (a transpose) the copy is done in square tiles that stay in cache.
The loops run without the GIL.  ``materialize`` builds a fresh contiguous Buffer from a View,
masks and fill included.  ``copy_strided`` checks every block against its buffer (O(ndim))
before copying, so a bad view raises ValueError instead of reading out of bounds.
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from nx_rune._kernels._types cimport item16_t
from nx_rune._kernels.buffer cimport Buffer

import numpy as np

DEF MAX_NDIM = 64
DEF TILE = 32


cdef inline void _row_copy(const char* s, Py_ssize_t ss, char* d, Py_ssize_t ds,
                           Py_ssize_t n, Py_ssize_t isz) noexcept nogil:
    """Copy n items; strides in bytes.  Dispatches on the item size outside the loop
    (a memcpy of constant size compiles to one move, and is safe on unaligned memory)."""
    cdef Py_ssize_t i
    if ss == isz and ds == isz:
        memcpy(d, s, n * isz)
    elif ss == -isz and ds == isz and (isz == 4 or isz == 8):
        _reversed_row(s - (n - 1) * isz, d, n, isz)
    elif isz == 4:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, 4)
    elif isz == 8:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, 8)
    elif isz == 2:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, 2)
    elif isz == 1:
        for i in range(n):
            d[i * ds] = s[i * ss]
    else:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, isz)


cdef inline void _reversed_row(const char* s, char* d, Py_ssize_t n,
                               Py_ssize_t isz) noexcept nogil:
    """d[i] = s[n - 1 - i] with constant strides, which gcc vectorizes (a flip's inner axis)."""
    cdef Py_ssize_t i
    cdef uint32_t w4
    cdef uint64_t w8
    if isz == 4:
        for i in range(n):
            memcpy(&w4, s + (n - 1 - i) * 4, 4)
            memcpy(d + i * 4, &w4, 4)
    else:
        for i in range(n):
            memcpy(&w8, s + (n - 1 - i) * 8, 8)
            memcpy(d + i * 8, &w8, 8)


cdef void _tile_copy(const char* s, Py_ssize_t sa, Py_ssize_t sb,
                     char* d, Py_ssize_t da, Py_ssize_t db,
                     Py_ssize_t na, Py_ssize_t nb, Py_ssize_t isz) noexcept nogil:
    """2-d copy where s is unit-stride along a and d is unit-stride along b (a transpose)."""
    cdef Py_ssize_t a0, b0, a, b, ae, be
    for a0 in range(0, na, TILE):
        ae = a0 + TILE if a0 + TILE < na else na
        for b0 in range(0, nb, TILE):
            be = b0 + TILE if b0 + TILE < nb else nb
            for a in range(a0, ae):
                _row_copy(s + a * sa + b0 * sb, sb, d + a * da + b0 * db, db, be - b0, isz)


cdef void _copy_nd(const char* src, char* dst, int nd, const Py_ssize_t* shape,
                   const Py_ssize_t* ss, const Py_ssize_t* ds, Py_ssize_t isz) noexcept nogil:
    """Odometer over all axes but the inner one (or two, for a tiled transpose)."""
    cdef Py_ssize_t idx[MAX_NDIM]
    cdef int k, tiled = 0, a_ax = -1, outer
    cdef Py_ssize_t n_inner
    cdef const char* s
    cdef char* d
    if nd == 0:
        memcpy(dst, src, isz)
        return
    # a transpose: the inner destination axis is strided in the source, and some other axis is
    # unit-stride in the source; tile those two axes.
    if nd >= 2 and ss[nd - 1] != isz and shape[nd - 1] >= 8:
        for k in range(nd - 1):
            if (ss[k] == isz or ss[k] == -isz) and shape[k] >= 8:
                a_ax = k
        if a_ax >= 0:
            tiled = 1
    outer = nd - 1
    for k in range(nd):
        idx[k] = 0
    n_inner = shape[nd - 1]
    while True:
        s = src
        d = dst
        for k in range(outer):
            if tiled and k == a_ax:
                continue
            s += idx[k] * ss[k]
            d += idx[k] * ds[k]
        if tiled:
            _tile_copy(s, ss[a_ax], ss[nd - 1], d, ds[a_ax], ds[nd - 1],
                       shape[a_ax], n_inner, isz)
        else:
            _row_copy(s, ss[nd - 1], d, ds[nd - 1], n_inner, isz)
        # advance the odometer over the outer axes
        k = outer - 1
        while k >= 0:
            if tiled and k == a_ax:
                k -= 1
                continue
            idx[k] += 1
            if idx[k] < shape[k]:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            return


cdef int _coalesce(int nd, Py_ssize_t* shape, Py_ssize_t* ss, Py_ssize_t* ds) noexcept nogil:
    """Drop size-1 axes and merge neighbours that are contiguous on both sides; new ndim."""
    cdef int i, m = 0
    for i in range(nd):
        if shape[i] == 1:
            continue
        if m > 0 and ss[m - 1] == ss[i] * shape[i] and ds[m - 1] == ds[i] * shape[i]:
            shape[m - 1] *= shape[i]
            ss[m - 1] = ss[i]
            ds[m - 1] = ds[i]
            continue
        shape[m] = shape[i]
        ss[m] = ss[i]
        ds[m] = ds[i]
        m += 1
    return m


cdef bint _within(Py_ssize_t off, int nd, const Py_ssize_t* shape, const Py_ssize_t* strides,
                  Py_ssize_t size) noexcept nogil:
    """True when every element ``off + sum(i[k] * strides[k])``, 0 <= i[k] < shape[k] (all
    shape[k] >= 1), lies in [0, size).  Exact: no intermediate value can overflow."""
    cdef Py_ssize_t lo = off, hi = off, n1, s
    cdef int k
    if off < 0 or off >= size:
        return False
    for k in range(nd):
        n1 = shape[k] - 1
        s = strides[k]
        if n1 == 0 or s == 0:
            continue
        if s > 0:
            if n1 > (size - 1 - hi) // s:
                return False
            hi += n1 * s
        else:
            if s < -size or n1 > lo // (-s):
                return False
            lo += n1 * s
    return True


def copy_strided(Buffer src, Py_ssize_t src_offset, shape, src_strides,
                 Buffer dst, Py_ssize_t dst_offset, dst_strides):
    """Copy ``shape`` items from ``src`` to ``dst`` (offsets and strides in elements).

    Item sizes must match.  Every address is checked against both buffers first (O(ndim)):
    ValueError, never an out-of-bounds access, when a block would leave its buffer.
    """
    cdef int nd = len(shape), k
    cdef Py_ssize_t c_shape[MAX_NDIM]
    cdef Py_ssize_t c_ss[MAX_NDIM]
    cdef Py_ssize_t c_ds[MAX_NDIM]
    cdef Py_ssize_t isz = src.itemsize
    if nd > MAX_NDIM:
        raise ValueError(f"shape: at most {MAX_NDIM} axes are supported, got {nd}")
    if dst.itemsize != isz:
        raise TypeError(f"dst: item size {dst.itemsize} differs from src's {isz}")
    if len(src_strides) != nd or len(dst_strides) != nd:
        raise ValueError("src_strides, dst_strides: need one stride per axis of shape")
    if dst.readonly:
        raise ValueError("dst: buffer is read-only")
    for k in range(nd):
        c_shape[k] = shape[k]
        if c_shape[k] < 0:
            raise ValueError(f"shape: negative dimension in {tuple(shape)}")
        c_ss[k] = src_strides[k]
        c_ds[k] = dst_strides[k]
    for k in range(nd):
        if c_shape[k] == 0:
            return
    if not _within(src_offset, nd, c_shape, c_ss, src.size):
        raise ValueError(f"src: shape {tuple(shape)} with strides {tuple(src_strides)} and offset "
                         f"{src_offset} reaches outside the buffer of {src.size} elements")
    if not _within(dst_offset, nd, c_shape, c_ds, dst.size):
        raise ValueError(f"dst: shape {tuple(shape)} with strides {tuple(dst_strides)} and offset "
                         f"{dst_offset} reaches outside the buffer of {dst.size} elements")
    for k in range(nd):   # in bytes (no overflow: each span fits in its buffer)
        if c_shape[k] == 1:   # any stride is valid on a size-1 axis; coalescing drops it
            c_ss[k] = 0
            c_ds[k] = 0
        c_ss[k] *= isz
        c_ds[k] *= isz
    cdef const char* s = src.data + src_offset * isz
    cdef char* d = dst.data + dst_offset * isz
    with nogil:
        nd = _coalesce(nd, c_shape, c_ss, c_ds)
        _copy_nd(s, d, nd, c_shape, c_ss, c_ds, isz)


def fill(Buffer dst, value):
    """Set every item of ``dst`` to ``value`` (converted to dst's dtype)."""
    cdef Py_ssize_t n = dst.size, isz = dst.itemsize, i
    if n == 0:
        return
    if dst.readonly:
        raise ValueError("dst: buffer is read-only")
    pattern = np.asarray(value).astype(dst.dtype).reshape(1).view(np.uint8).tobytes()
    cdef const unsigned char[:] pat = pattern
    cdef char* d = dst.data
    cdef uint32_t p4
    cdef uint64_t p8
    cdef uint16_t p2
    with nogil:
        if isz == 1:
            memset(d, pat[0], n)
        elif isz == 2:
            memcpy(&p2, &pat[0], 2)
            for i in range(n):
                (<uint16_t*>d)[i] = p2
        elif isz == 4:
            memcpy(&p4, &pat[0], 4)
            for i in range(n):
                (<uint32_t*>d)[i] = p4
        elif isz == 8:
            memcpy(&p8, &pat[0], 8)
            for i in range(n):
                (<uint64_t*>d)[i] = p8
        else:
            for i in range(n):
                memcpy(d + i * isz, &pat[0], isz)
