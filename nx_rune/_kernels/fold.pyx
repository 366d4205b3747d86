# The Python-level validation below indexes tuples and lists with computed integers; these
# directives keep that code safe.  The nogil kernels use raw pointers only, which no directive
# checks, so they run at full speed either way.
# cython: boundscheck=True, wraparound=True
"""unfold (im2col) and its adjoint fold (col2im) over any number of spatial dimensions.

Layout, as in PyTorch's ``nn.functional.unfold`` / ``fold``: an image x of shape
(N, C, *spatial) and columns of shape (N, C * prod(kernel_size), L).  Row ``c * K + k`` of
the columns (K = prod(kernel_size), kernel offsets k in C order) holds, for each of the L
window positions (in C order), the value of channel c under kernel offset k.  Along spatial
dimension d, window position o and kernel offset j read the (zero-)padded image at
``o * stride[d] + j * dilation[d]``, that is x at ``o * stride[d] + j * dilation[d] -
padding[d]``; the number of window positions is
``(size[d] + 2 * padding[d] - dilation[d] * (kernel_size[d] - 1) - 1) // stride[d] + 1``.
"""
import math
import operator

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from nx_rune._kernels._types cimport item16_t, item_t

# The dtypes fold accumulates in: signed integers run on their unsigned twins.
ctypedef fused accum_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    float
    double
    float complex
    double complex

cnp.import_array()

cdef enum:
    MAX_SPATIAL = 62        # NumPy's 64 dimensions less batch and channel


cdef struct Window:
    int s                                   # number of spatial dimensions
    Py_ssize_t batch, channels, kernel_count
    Py_ssize_t size[MAX_SPATIAL]            # spatial sizes of the image
    Py_ssize_t xstride[MAX_SPATIAL]         # element strides of the image's spatial axes
    Py_ssize_t kernel[MAX_SPATIAL]
    Py_ssize_t stride[MAX_SPATIAL]
    Py_ssize_t dilation[MAX_SPATIAL]
    Py_ssize_t padding[MAX_SPATIAL]
    Py_ssize_t count[MAX_SPATIAL]           # window positions along each spatial axis
    Py_ssize_t block[MAX_SPATIAL]           # positions per step along d: prod(count[d+1:])
    Py_ssize_t x_n, x_c                     # element strides of the image's batch, channel
    Py_ssize_t c_n, c_row, c_l              # element strides of the columns' three axes


# ----------------------------------------------------------------------------------------
# nogil kernels
# ----------------------------------------------------------------------------------------

cdef inline void _valid_positions(const Window* g, int d, Py_ssize_t off,
                                  Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """[lo, hi): the window positions o along d with 0 <= o * stride + off < size."""
    cdef Py_ssize_t st = g.stride[d], top = g.size[d] - 1 - off
    lo[0] = 0 if off >= 0 else (-off + st - 1) / st
    hi[0] = 0 if top < 0 else min(top / st + 1, g.count[d])
    if lo[0] > hi[0]:
        lo[0] = hi[0]


cdef void _kernel_offsets(const Window* g, Py_ssize_t k, Py_ssize_t* off) noexcept nogil:
    """Image offset of kernel position k (C order over the kernel) along each spatial axis."""
    cdef int d
    for d in range(g.s - 1, -1, -1):
        off[d] = (k % g.kernel[d]) * g.dilation[d] - g.padding[d]
        k = k / g.kernel[d]


# The inner loops read every geometry value into a local first: the columns and the image
# are written through pointers that, without strict aliasing (-fno-strict-aliasing), might
# alias the Window, which would force a reload per element and block vectorization.

cdef inline void _unfold_line(const item_t* x, item_t* col, Py_ssize_t lo, Py_ssize_t hi,
                              Py_ssize_t xs) noexcept nogil:
    cdef Py_ssize_t o
    if xs == 1:
        memcpy(col + lo, x + lo, (hi - lo) * sizeof(item_t))
    else:
        for o in range(lo, hi):
            col[o] = x[o * xs]


cdef inline void _zero(item_t* col, Py_ssize_t start, Py_ssize_t stop,
                       Py_ssize_t width) noexcept nogil:
    if stop > start:
        memset(col + start * width, 0, (stop - start) * width * sizeof(item_t))


cdef void _unfold_rec(const item_t* x, item_t* col, const Window* g, const Py_ssize_t* off,
                      int d) noexcept nogil:
    """Window positions along axes d.. of one (channel, kernel offset) row; col is contiguous
    (unfold's own output), so positions outside the image are zeroed here, block by block."""
    cdef Py_ssize_t o, lo, hi
    cdef Py_ssize_t st = g.stride[d] * g.xstride[d], width = g.block[d]
    x += off[d] * g.xstride[d]
    _valid_positions(g, d, off[d], &lo, &hi)
    _zero(col, 0, lo, width)
    _zero(col, hi, g.count[d], width)
    if d == g.s - 1:
        _unfold_line(x, col, lo, hi, st)
    else:
        for o in range(lo, hi):
            _unfold_rec(x + o * st, col + o * width, g, off, d + 1)


cdef inline void _fold_line(accum_t* x, const accum_t* col, Py_ssize_t lo, Py_ssize_t hi,
                            Py_ssize_t xs, Py_ssize_t cs) noexcept nogil:
    cdef Py_ssize_t o
    if xs == 1 and cs == 1:
        for o in range(lo, hi):
            x[o] += col[o]
    else:
        for o in range(lo, hi):
            x[o * xs] += col[o * cs]


cdef void _fold_rec(accum_t* x, const accum_t* col, const Window* g, const Py_ssize_t* off,
                    int d) noexcept nogil:
    cdef Py_ssize_t o, lo, hi
    cdef Py_ssize_t st = g.stride[d] * g.xstride[d], cs = g.c_l, step = g.block[d] * g.c_l
    x += off[d] * g.xstride[d]
    _valid_positions(g, d, off[d], &lo, &hi)
    if d == g.s - 1:
        _fold_line(x, col, lo, hi, st, cs)
    else:
        for o in range(lo, hi):
            _fold_rec(x + o * st, col + o * step, g, off, d + 1)


cdef void unfold_all(const item_t* x, item_t* cols, const Window* g) noexcept nogil:
    """cols[n, c*K + k, :] = the image plane x[n, c] under kernel position k, every window.
    cols must be C-contiguous; every item of it is written (0 where a window is off the image)."""
    cdef Py_ssize_t n, c, k
    cdef Py_ssize_t off[MAX_SPATIAL]
    for n in range(g.batch):
        for c in range(g.channels):
            for k in range(g.kernel_count):
                _kernel_offsets(g, k, off)
                _unfold_rec(x + n * g.x_n + c * g.x_c,
                            cols + n * g.c_n + (c * g.kernel_count + k) * g.c_row, g, off, 0)


cdef void fold_all(accum_t* x, const accum_t* cols, const Window* g) noexcept nogil:
    """x[n, c] += every row cols[n, c*K + k, :] placed under kernel position k (the adjoint)."""
    cdef Py_ssize_t n, c, k
    cdef Py_ssize_t off[MAX_SPATIAL]
    for n in range(g.batch):
        for c in range(g.channels):
            for k in range(g.kernel_count):
                _kernel_offsets(g, k, off)
                _fold_rec(x + n * g.x_n + c * g.x_c,
                          cols + n * g.c_n + (c * g.kernel_count + k) * g.c_row, g, off, 0)


cdef void _unfold_items(const char* x, char* cols, int itemsize, const Window* g) noexcept nogil:
    if itemsize == 1:
        unfold_all(<const uint8_t*>x, <uint8_t*>cols, g)
    elif itemsize == 2:
        unfold_all(<const uint16_t*>x, <uint16_t*>cols, g)
    elif itemsize == 4:
        unfold_all(<const uint32_t*>x, <uint32_t*>cols, g)
    elif itemsize == 8:
        unfold_all(<const uint64_t*>x, <uint64_t*>cols, g)
    else:
        unfold_all(<const item16_t*>x, <item16_t*>cols, g)


cdef enum:
    T_U8, T_U16, T_U32, T_U64, T_F32, T_F64, T_C64, T_C128

_FOLD_CODES = {"u1": T_U8, "u2": T_U16, "u4": T_U32, "u8": T_U64,
               "f4": T_F32, "f8": T_F64, "c8": T_C64, "c16": T_C128}


cdef void _fold_typed(char* x, const char* cols, int code, const Window* g) noexcept nogil:
    if code == T_U8:
        fold_all(<uint8_t*>x, <const uint8_t*>cols, g)
    elif code == T_U16:
        fold_all(<uint16_t*>x, <const uint16_t*>cols, g)
    elif code == T_U32:
        fold_all(<uint32_t*>x, <const uint32_t*>cols, g)
    elif code == T_U64:
        fold_all(<uint64_t*>x, <const uint64_t*>cols, g)
    elif code == T_F32:
        fold_all(<float*>x, <const float*>cols, g)
    elif code == T_F64:
        fold_all(<double*>x, <const double*>cols, g)
    elif code == T_C64:
        fold_all(<float complex*>x, <const float complex*>cols, g)
    else:
        fold_all(<double complex*>x, <const double complex*>cols, g)


# ----------------------------------------------------------------------------------------
# Validation and planning (Python level)
# ----------------------------------------------------------------------------------------

def _expand(value, s, name, fn, minimum):
    """value (an int, or one int per spatial dimension) as a tuple of s ints >= minimum."""
    try:
        if isinstance(value, (int, np.integer)):
            values = (operator.index(value),) * s
        else:
            values = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be an int or a tuple of ints, got {value!r}") from None
    if len(values) != s:
        raise ValueError(f"{fn}: {name} must have {s} entries (one per spatial dimension), "
                         f"got {value!r}")
    if any(v < minimum for v in values):
        raise ValueError(f"{fn}: {name} entries must be >= {minimum}, got {values}")
    return values


def _window_params(s, kernel_size, stride, dilation, padding, fn):
    return (_expand(kernel_size, s, "kernel_size", fn, 1), _expand(stride, s, "stride", fn, 1),
            _expand(dilation, s, "dilation", fn, 1), _expand(padding, s, "padding", fn, 0))


def _window_counts(sizes, kernel, stride, dilation, padding, fn, what):
    """Window positions along each spatial axis; ValueError when a window does not fit."""
    counts = []
    for d in range(len(sizes)):
        span = dilation[d] * (kernel[d] - 1) + 1
        room = sizes[d] + 2 * padding[d]
        if span > room:
            raise ValueError(f"{fn}: kernel_size {kernel} with dilation {dilation} spans {span} "
                             f"along spatial axis {d}, more than {what} {tuple(sizes)} plus "
                             f"padding {padding} allows ({room})")
        counts.append((room - span) // stride[d] + 1)
    return counts


def _kernel_ready(arr):
    """arr itself when its strides are whole, aligned items, else a contiguous copy."""
    if arr.flags.aligned and all(s % arr.itemsize == 0
                                 for s, n in zip(arr.strides, arr.shape) if n > 1):
        return arr
    return np.ascontiguousarray(arr)


def _elem(arr, axis):
    return arr.strides[axis] // arr.itemsize


_MAX_SPAN = 1 << 62


cdef int _fill_window(Window* g, image, cols, sizes, params, counts) except -1:
    """Fill g for an image of shape (N, C, *sizes) and columns (N, C*K, L), both kernel-ready."""
    kernel, stride, dilation, padding = params
    cdef int d, s = len(sizes)
    if s > MAX_SPATIAL:
        raise ValueError(f"at most {MAX_SPATIAL} spatial dimensions, got {s}")
    g.s = s
    g.batch, g.channels = image.shape[0], image.shape[1]
    g.kernel_count = 1
    block = 1
    for d in range(s - 1, -1, -1):
        # A size-1 axis is only ever read at index 0, so its stride (which NumPy leaves
        # arbitrary) does not matter: 0 keeps it out of the overflow check below.
        xs = _elem(image, d + 2) if sizes[d] > 1 else 0
        # With one window position the stride is never used (position 0 only): 1 keeps a
        # huge one out of the arithmetic.
        st = stride[d] if counts[d] > 1 else 1
        # Every offset the kernels form along d is bounded by room * |xs| (room = size +
        # 2 * padding, and (count - 1) * stride <= room), the window bounds by room + stride:
        # refuse geometries where those would not fit in 63 bits.
        room = sizes[d] + 2 * padding[d]
        if room * max(abs(xs), 1) > _MAX_SPAN or room + st > _MAX_SPAN:
            raise ValueError(f"padding {padding} and stride {stride} are too large for spatial "
                             f"size {tuple(sizes)} (offsets along spatial axis {d} would "
                             f"overflow 64-bit integers)")
        g.size[d], g.xstride[d] = sizes[d], xs
        g.kernel[d], g.stride[d] = kernel[d], st
        g.dilation[d], g.padding[d] = dilation[d], padding[d]
        g.count[d], g.block[d] = counts[d], block
        block *= counts[d]
        g.kernel_count *= kernel[d]
    g.x_n, g.x_c = _elem(image, 0), _elem(image, 1)
    g.c_n, g.c_row, g.c_l = _elem(cols, 0), _elem(cols, 1), _elem(cols, 2)
    return 0


cdef char* _ptr(arr):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>arr)


# Items the kernels know: up to 16 bytes (long double and its complex are not nx dtypes; a
# 32-byte complex would be copied as half an item).
_KNOWN_ITEMS = frozenset(["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
                          "c8", "c16"])


def _numeric(x, name, fn):
    arr = np.asarray(x)
    if f"{arr.dtype.kind}{arr.dtype.itemsize}" not in _KNOWN_ITEMS:
        raise TypeError(f"{fn}: {name} must have a numeric dtype of nx_rune, got {arr.dtype}")
    return arr


# ----------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------

def unfold(x, kernel_size, stride=1, dilation=1, padding=0):
    """Sliding windows of an image as columns (im2col).

    x: ndarray of shape (N, C, *spatial), s = x.ndim - 2 >= 1 spatial axes, any dtype kind
    among bool and numbers, any strides.
    kernel_size, stride, dilation (>= 1) and padding (>= 0): an int or one int per spatial axis.
    Returns a new C-contiguous array of x's dtype and shape (N, C * prod(kernel_size), L),
    L = prod of the window counts (see the module docstring); padded positions read 0.
    """
    cdef Window g
    cdef const char* x_p
    cdef char* c_p
    cdef int itemsize
    x = _numeric(x, "x", "unfold")
    if x.ndim < 3:
        raise ValueError(f"unfold: x must have shape (N, C, *spatial) with at least one spatial "
                         f"axis, got shape {x.shape}")
    sizes = x.shape[2:]
    params = _window_params(len(sizes), kernel_size, stride, dilation, padding, "unfold")
    counts = _window_counts(sizes, *params, "unfold", "x's spatial shape")
    K, L = math.prod(params[0]), math.prod(counts)
    cols = np.empty((x.shape[0], x.shape[1] * K, L), dtype=x.dtype)
    if cols.size == 0:
        return cols
    x = _kernel_ready(x)
    _fill_window(&g, x, cols, sizes, params, counts)
    x_p, c_p, itemsize = _ptr(x), _ptr(cols), x.itemsize
    with nogil:
        _unfold_items(x_p, c_p, itemsize, &g)
    return cols


def _fold_work_dtype(dtype):
    """Accumulation dtype: signed integers on their unsigned twin (same wrap-around, no C
    undefined behaviour), float16 widened to float32."""
    dt = dtype.newbyteorder("=")
    if dt.kind == "b":
        raise TypeError("fold: cols must have a numeric dtype, got bool (a sum of windows)")
    if dt.kind == "i":
        return np.dtype(f"u{dt.itemsize}")
    if dt.kind == "f" and dt.itemsize == 2:
        return np.dtype(np.float32)
    return dt


def _convert(arr, dtype):
    """arr reinterpreted (signed <-> unsigned twin) or converted (float16 <-> float32)."""
    if arr.dtype == dtype:
        return arr
    if arr.dtype.itemsize == dtype.itemsize:
        return arr.view(dtype)
    return arr.astype(dtype)


def _check_cols(cols, K, L, output_size):
    if cols.ndim != 3:
        raise ValueError(f"fold: cols must have shape (N, C * prod(kernel_size), L), got shape "
                         f"{cols.shape}")
    if cols.shape[1] % K:
        raise ValueError(f"fold: cols.shape[1] = {cols.shape[1]} (cols shape {cols.shape}) is "
                         f"not a multiple of prod(kernel_size) = {K}")
    if cols.shape[2] != L:
        raise ValueError(f"fold: cols has L = {cols.shape[2]} (cols shape {cols.shape}) but "
                         f"output_size {output_size} gives {L} window positions")


def fold(cols, output_size, kernel_size, stride=1, dilation=1, padding=0):
    """Sum columns back into an image (col2im): the adjoint of unfold.

    cols: ndarray of shape (N, C * prod(kernel_size), L), numeric (not bool), any strides.
    output_size: the image's spatial shape, one int per spatial axis (s = len(output_size)).
    kernel_size, stride, dilation (>= 1) and padding (>= 0): an int or s ints.
    L must be the number of window positions that unfold gives for output_size.
    Returns a new C-contiguous array of shape (N, C, *output_size) and cols' dtype (native
    byte order): each window's values summed at the positions it covers, padding dropped.
    Integers wrap; float16 accumulates in float32 and is rounded once.
    """
    cdef Window g
    cdef const char* c_p
    cdef char* x_p
    cdef int code
    cols = _numeric(cols, "cols", "fold")
    try:
        sizes = tuple(operator.index(v) for v in output_size)
    except TypeError:
        raise TypeError(f"fold: output_size must be a tuple of ints, got {output_size!r}") from None
    if not sizes or any(v < 1 for v in sizes):
        raise ValueError(f"fold: output_size must be one or more sizes >= 1, got {output_size!r}")
    params = _window_params(len(sizes), kernel_size, stride, dilation, padding, "fold")
    counts = _window_counts(sizes, *params, "fold", "output_size")
    K, L = math.prod(params[0]), math.prod(counts)
    _check_cols(cols, K, L, sizes)
    dtype = cols.dtype.newbyteorder("=")
    work = _fold_work_dtype(cols.dtype)
    image = np.zeros((cols.shape[0], cols.shape[1] // K) + sizes, dtype=work)
    if image.size:
        cols = _kernel_ready(_convert(cols.astype(dtype, copy=False), work))
        _fill_window(&g, image, cols, sizes, params, counts)
        code = _FOLD_CODES[f"{work.kind}{work.itemsize}"]
        x_p, c_p = _ptr(image), _ptr(cols)
        with nogil:
            _fold_typed(x_p, c_p, code, &g)
    return _convert(image, dtype)
