# cython: boundscheck=False, wraparound=False
"""The fused-kernel VM: one pass over an iteration space running a short register program of
strided inner loops (numexpr's design), block by block.

A :class:`Kernel` holds a program built once by the compiler (``nx_rune.compiler.fusion``):

* an iteration shape (1 to 8 dims; the last one is cut into blocks of ``block`` elements);
* inputs: C-contiguous arrays, each read through byte strides per iteration dim (0 where it
  broadcasts) from a byte offset: folded views (transpose, slices, flips, broadcasts) cost
  nothing;
* constants: scalars (broadcast, stride 0);
* temporaries: one block of memory each (reused by values whose lives do not overlap);
* outputs: arrays written through strides, either element by element by the instruction that
  computes them, or accumulated: a reduction output has stride 0 on its reduced dims and
  combines each block into the output (NumPy's loop of the reducing ufunc in its reduce mode:
  pairwise summation for sums), the first block of each output element copied in;
* code: instructions ``loop(args, n, steps, data)`` over registers: NumPy's own ufunc inner
  loops (its SIMD loops: what ``np.sin`` runs), and the casts and selections of
  fusion_loops.h.

Memory use is the inputs, the outputs and the temporaries' blocks: intermediate values never
exist as whole arrays.  ``run`` checks every array against the extent the program reads or
writes (a stale or wrong array raises ValueError, never a stray access) and releases the GIL
for large iteration spaces.

Also here: ``ufunc_loop`` (the address of a NumPy ufunc's inner loop for given dtypes),
``cast_loop``, ``where_loop``, ``strided_view`` (a fast ndarray view constructor for the
executor's folded views) and ``view_of`` (a view of an array of any layout: outputs that are
eagerly views).
"""
import numpy as np

cimport numpy as cnp
from cpython.object cimport PyTypeObject
from cpython.ref cimport PyObject, Py_INCREF
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cnp.import_array()
cnp.import_ufunc()

ctypedef cnp.npy_intp intp

cdef extern from "fusion_loops.h":
    ctypedef void (*nxr_loop)(char **args, const intp *dims, const intp *steps, void *data) noexcept nogil
    nxr_loop nxr_cast_entry(int src, int dst) noexcept nogil
    nxr_loop nxr_where_entry(int itemsize) noexcept nogil
    void nxr_copy(char *dst, intp ds, const char *src, intp ss, intp n, intp itemsize) noexcept nogil
    ctypedef void (*nxr_segloop)(char *out, intp os, const char *inp, intp is_, intp seg,
                                 intp nseg, int first) noexcept nogil
    nxr_segloop nxr_seg_entry(int op, int type) noexcept nogil
    nxr_segloop nxr_row_entry(int op, int type) noexcept nogil
    intp nxr_next_chunk(intp *counter) noexcept nogil

cdef extern from "fusion_arith.h":
    nxr_loop nxr_arith_entry(int op, int type) noexcept nogil
    nxr_loop nxr_chain_entry(int type) noexcept nogil
    enum: NXR_CHAIN_MAX
    ctypedef struct nxr_chain:
        int nargs
        int nsteps
        int op[NXR_CHAIN_MAX]
        int arg[NXR_CHAIN_MAX]
        int swap[NXR_CHAIN_MAX]

cdef extern from *:
    int __atomic_fetch_or(int *ptr, int val, int order) noexcept nogil
    int __ATOMIC_RELAXED

from nx_rune._kernels.pool cimport num_threads, run_spans

cdef extern from "numpy/arrayobject.h":
    object _new_from_descr "PyArray_NewFromDescr" (
        PyTypeObject *subtype, cnp.dtype descr, int nd, intp *dims, intp *strides, void *data,
        int flags, object obj)

from nx_rune._kernels.ufunc_object cimport PyUFuncGenericFunction, PyUFuncObject

DEF MAXD = 8
DEF MAXARGS = 18     # a chain (fusion_arith.h): up to 16 steps, its start and its output

cdef struct Instr:
    nxr_loop fn
    void *data
    int nargs
    int regs[MAXARGS]


def ufunc_loop(uf, dtypes):
    """``(loop address, data address)`` of NumPy ufunc ``uf``'s inner loop whose operand dtypes
    (inputs then outputs) are exactly ``dtypes``, or None."""
    if not isinstance(uf, np.ufunc):
        raise TypeError(f"uf: expected a NumPy ufunc, got {type(uf).__name__}")
    cdef PyUFuncObject *u = <PyUFuncObject *> <PyObject *> uf
    nums = [np.dtype(d).num for d in dtypes]
    if len(nums) != u.nargs:
        raise ValueError(f"dtypes: {uf.__name__} takes {u.nargs} operands, got {len(nums)}")
    cdef int i, j
    for i in range(u.ntypes):
        for j in range(u.nargs):
            if u.types[i * u.nargs + j] != nums[j]:
                break
        else:
            if u.functions[i] == NULL:
                return None
            return (<size_t> u.functions[i], <size_t> u.data[i])
    return None


_CAST_INDEX = {np.dtype(t): i for i, t in enumerate(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
     "float32", "float64", "complex64", "complex128"])}


def cast_loop(src, dst):
    """``(loop address, 0)`` of the C conversion from dtype ``src`` to ``dst``, or None where
    it is not provided (float16, complex to real, float to unsigned: NumPy does these)."""
    s, d = np.dtype(src), np.dtype(dst)
    if s not in _CAST_INDEX or d not in _CAST_INDEX:
        return None
    if s.kind == "f" and d.kind == "u":
        return None
    cdef nxr_loop f = nxr_cast_entry(_CAST_INDEX[s], _CAST_INDEX[d])
    if f == NULL:
        return None
    return (<size_t> f, 0)


_ARITH_OPS = {"add": 0, "subtract": 1, "multiply": 2, "divide": 3}
_ARITH_TYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1}


def arith_loop(op, dtype):
    """``(loop address, 0)`` of the AVX-512 loop (fusion_arith.h) of ``op`` ("add",
    "subtract", "multiply" or "divide") on two operands and a result of float ``dtype``
    (float32 or float64): NumPy's values bit for bit, with less fixed cost per block.  None
    where the CPU lacks AVX-512 or for another op or dtype (the VM then runs NumPy's loop)."""
    k, t = _ARITH_OPS.get(op), _ARITH_TYPES.get(np.dtype(dtype))
    if k is None or t is None:
        return None
    cdef nxr_loop f = nxr_arith_entry(k, t)
    if f == NULL:
        return None
    return (<size_t> f, 0)


CHAIN_MAX = NXR_CHAIN_MAX


cdef class _ChainProgram:
    """The steps of one chain (fusion_arith.h ``nxr_chain``), at a fixed address."""
    cdef nxr_chain c


_CHAINS = {}     # (dtype, nargs, steps) -> _ChainProgram: few distinct ones, kept for good


def chain_loop(dtype, Py_ssize_t nargs, steps):
    """``(loop address, data address)`` of a chain on float ``dtype``: ``v = args[0]``, then
    per step ``(op, arg, swapped)``: ``v = v op args[arg]`` (``args[arg] op v`` when
    swapped), op one of "add", "subtract", "multiply", "divide", arg in [0, nargs); the result
    is written to the operand after the ``nargs`` inputs.  The values are those of the single
    operations' loops bit for bit (each step rounds).  None where the CPU lacks AVX-512, for
    another dtype, or for more than CHAIN_MAX steps."""
    t = _ARITH_TYPES.get(np.dtype(dtype))
    steps = tuple((str(op), int(arg), bool(sw)) for op, arg, sw in steps)
    if t is None or not 1 <= len(steps) <= NXR_CHAIN_MAX:
        return None
    if nargs < 1:
        raise ValueError(f"nargs: a chain has at least 1 operand, got {nargs}")
    for op, arg, sw in steps:
        if op not in _ARITH_OPS:
            raise ValueError(f"steps: unknown op {op!r}")
        if not 0 <= arg < nargs:
            raise ValueError(f"steps: operand index {arg} outside [0, {nargs})")
    cdef nxr_loop f = nxr_chain_entry(t)
    if f == NULL:
        return None
    key = (t, nargs, steps)
    cdef _ChainProgram prog = _CHAINS.get(key)
    cdef int k
    if prog is None:
        prog = _ChainProgram()
        prog.c.nargs = nargs
        prog.c.nsteps = len(steps)
        for k, (op, arg, sw) in enumerate(steps):
            prog.c.op[k] = _ARITH_OPS[op]
            prog.c.arg[k] = arg
            prog.c.swap[k] = sw
        _CHAINS[key] = prog
    return (<size_t> f, <size_t> &prog.c)


def where_loop(itemsize):
    """``(loop address, 0)`` of the selection loop for elements of ``itemsize`` bytes."""
    cdef nxr_loop f = nxr_where_entry(itemsize)
    if f == NULL:
        return None
    return (<size_t> f, 0)


_SEG_OPS = {"sum": 0, "prod": 1, "max": 2, "fmax": 3, "fmin": 4}
_SEG_TYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.int32): 2,
              np.dtype(np.int64): 3}


def segment_loop(op, dtype):
    """``(address of the segmented reduction, address of the across-segments one)`` for ``op``
    ("sum", "prod", "max", "fmax", "fmin") and ``dtype`` (float32/64, int32/64), or None."""
    d = np.dtype(dtype)
    if op not in _SEG_OPS or d not in _SEG_TYPES:
        return None
    return (<size_t> nxr_seg_entry(_SEG_OPS[op], _SEG_TYPES[d]),
            <size_t> nxr_row_entry(_SEG_OPS[op], _SEG_TYPES[d]))


def strided_view(obj, shape, strides, Py_ssize_t offset):
    """A read-only ndarray over ``obj``'s memory (made C-contiguous first if it is not) with
    ``shape``, byte ``strides`` and byte ``offset``; ValueError if any element would lie
    outside it."""
    cdef int nd = len(shape), d
    cdef intp dims[MAXD]
    cdef intp st[MAXD]
    cdef cnp.ndarray base
    if nd > MAXD or len(strides) != nd:
        raise ValueError("shape/strides: at most 8 dims, one stride per dim")
    if type(obj) is not np.ndarray or not cnp.PyArray_IS_C_CONTIGUOUS(obj):
        obj = np.ascontiguousarray(obj) if np.ndim(obj) else np.array(obj)
    base = obj
    cdef intp lo = offset, hi = offset, itemsize = base.itemsize, n = 1
    for d in range(nd):
        dims[d] = shape[d]
        st[d] = strides[d]
        n *= dims[d]
        if dims[d] > 0:
            if st[d] >= 0:
                hi += st[d] * (dims[d] - 1)
            else:
                lo += st[d] * (dims[d] - 1)
    if n > 0 and (lo < 0 or hi + itemsize > base.nbytes):
        raise ValueError(f"strided_view: the view (shape {tuple(shape)}, strides "
                         f"{tuple(strides)}, offset {offset}) reaches outside its base of "
                         f"{base.nbytes} bytes")
    cdef cnp.dtype descr = base.descr
    Py_INCREF(descr)
    arr = _new_from_descr(<PyTypeObject *> cnp.ndarray, descr, nd, dims, st,
                          <char *> cnp.PyArray_DATA(base) + offset, cnp.NPY_ARRAY_ALIGNED, None)
    Py_INCREF(base)
    cnp.PyArray_SetBaseObject(arr, base)
    return arr


def view_of(cnp.ndarray arr, shape, strides, Py_ssize_t offset):
    """An ndarray over ``arr``'s memory (any layout; its base is ``arr``) with ``shape``, byte
    ``strides`` and a byte ``offset`` from ``arr``'s first element; ValueError if any element
    would lie outside the bytes ``arr``'s elements span.  Writeable when ``arr`` is and no
    axis longer than 1 has stride 0 (the rule of a tensor's own views: broadcasts are
    read-only)."""
    cdef int nd = len(shape), d, flags
    cdef intp dims[MAXD]
    cdef intp st[MAXD]
    if nd > MAXD or len(strides) != nd:
        raise ValueError("shape/strides: at most 8 dims, one stride per dim")
    cdef intp itemsize = arr.itemsize, n = 1, alo = 0, ahi = 0, lo = offset, hi = offset
    cdef bint broadcast = False
    for d in range(arr.ndim):
        if arr.shape[d] == 0:
            alo = ahi = 0
            break
        if arr.strides[d] >= 0:
            ahi += arr.strides[d] * (arr.shape[d] - 1)
        else:
            alo += arr.strides[d] * (arr.shape[d] - 1)
    for d in range(nd):
        dims[d] = shape[d]
        st[d] = strides[d]
        if dims[d] < 0:
            raise ValueError(f"shape: negative dimension in {tuple(shape)}")
        n *= dims[d]
        if dims[d] > 0:
            if st[d] >= 0:
                hi += st[d] * (dims[d] - 1)
            else:
                lo += st[d] * (dims[d] - 1)
        if dims[d] > 1 and st[d] == 0:
            broadcast = True
    if n > 0 and (arr.size == 0 or lo < alo or hi > ahi):
        raise ValueError(f"view_of: the view (shape {tuple(shape)}, strides {tuple(strides)}, "
                         f"offset {offset}) reaches outside its base (shape "
                         f"{(<object> arr).shape}, strides {(<object> arr).strides})")
    flags = cnp.NPY_ARRAY_ALIGNED if cnp.PyArray_ISALIGNED(arr) else 0
    if cnp.PyArray_ISWRITEABLE(arr) and not broadcast:
        flags |= cnp.NPY_ARRAY_WRITEABLE
    cdef cnp.dtype descr = arr.descr
    Py_INCREF(descr)
    out = _new_from_descr(<PyTypeObject *> cnp.ndarray, descr, nd, dims, st,
                          <char *> cnp.PyArray_DATA(arr) + (offset if n > 0 else 0), flags, None)
    Py_INCREF(arr)
    cnp.PyArray_SetBaseObject(out, arr)
    return out


cdef enum:
    IN_DIRECT = 0     # read in place (unit or zero inner stride, contiguous across segments)
    IN_TILED = 1      # the same row for every segment: a tiled copy made once per row
    IN_GATHER = 2     # copied into a staging block (strided, or repeated per segment)
    OUT_DIRECT = 0
    OUT_SCATTER = 1   # written to a staging block, then copied out segment by segment


cdef struct KData:
    int nd, n_in, n_const, n_temp, n_out, n_code, n_reg
    intp shape[MAXD]
    intp block, seg, nseg, kseg
    bint segmented
    intp *in_strides      # n_in * nd
    intp *in_seg
    intp *in_offsets
    intp *in_need         # bytes each input array must hold
    intp *in_item
    int *in_mode
    intp *out_strides     # n_out * nd
    intp *out_seg
    intp *out_need
    intp *out_offset
    intp *out_itemsize
    int *out_kind         # 0: written by an instruction, 1: reduction
    int *out_mode
    int *out_reg          # reductions: the register reduced
    nxr_loop *out_fn
    void **out_data
    nxr_segloop *out_segfn    # reductions: a loop over whole segments, or NULL
    nxr_segloop *out_rowfn    # reductions: a loop across segments into a row, or NULL
    unsigned *out_rmask   # reductions: bit d set when outer dim d is reduced
    intp *temp_itemsize
    char *consts
    Instr *code
    intp size


cdef struct Job:
    KData *kd
    char **base
    intp scale          # rows of dim 0 per unit of work (the block, for one dim)
    intp total          # rows of dim 0
    int result          # the OR of the spans' results (set atomically)


cdef void _run_span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """The units [lo, hi) of one run (a span of the pool's, see ``_run_threads``)."""
    cdef Job *j = <Job *> ctx
    cdef intp a = min(lo * j.scale, j.total)
    cdef intp b = min(hi * j.scale, j.total)
    cdef int rc
    if a < b:
        rc = _exec(j.kd, j.base, a, b)
        if rc:
            __atomic_fetch_or(&j.result, rc, __ATOMIC_RELAXED)


# kernels over at least this many elements split their work between threads (each thread
# then has at least half of it); the count is the kernels' setting (NX_RUNE_NUM_THREADS,
# nx_rune._kernels.pool.set_num_threads)
THREADED_SIZE = 1 << 17


cdef class Kernel:
    """One fused kernel (see the module doc for the program's parts).

    The last iteration dim may be cut into segments of ``seg`` elements (a short last axis of
    the original shape, merged with the one before it): a block then holds whole segments, and
    every operand has a stride between segments (``segstride``) besides its stride within
    one.  Operands that are not contiguous over the block are staged: copied into a contiguous
    block (strided or repeated reads), or tiled once per row (a row broadcast over the
    segments, such as a bias); reductions then run per segment."""
    cdef KData kd
    cdef intp units             # parts the work may be split into between threads (1: none)
    cdef readonly object description

    def __cinit__(self):
        self.kd.in_strides = self.kd.in_seg = self.kd.in_offsets = self.kd.in_need = self.kd.in_item = NULL
        self.kd.in_mode = NULL
        self.kd.out_strides = self.kd.out_seg = self.kd.out_need = self.kd.out_itemsize = NULL
        self.kd.out_offset = NULL
        self.kd.out_kind = self.kd.out_reg = self.kd.out_mode = NULL
        self.kd.out_fn = NULL
        self.kd.out_data = NULL
        self.kd.out_segfn = NULL
        self.kd.out_rowfn = NULL
        self.kd.out_rmask = NULL
        self.kd.temp_itemsize = NULL
        self.kd.consts = NULL
        self.kd.code = NULL

    def __dealloc__(self):
        free(self.kd.in_strides); free(self.kd.in_seg); free(self.kd.in_offsets); free(self.kd.in_need)
        free(self.kd.in_item); free(self.kd.in_mode)
        free(self.kd.out_strides); free(self.kd.out_seg); free(self.kd.out_need)
        free(self.kd.out_itemsize); free(self.kd.out_offset)
        free(self.kd.out_kind); free(self.kd.out_reg); free(self.kd.out_mode); free(self.kd.out_fn)
        free(self.kd.out_data); free(self.kd.out_segfn); free(self.kd.out_rowfn); free(self.kd.out_rmask)
        free(self.kd.temp_itemsize)
        free(self.kd.consts)
        free(self.kd.code)

    def __init__(self, shape, Py_ssize_t seg, inputs, consts, temps, outputs, code,
                 Py_ssize_t block=1024):
        """shape: the iteration shape; seg: the segment length of the last dim (it divides
        it; 0: no segments); inputs: ``(byte strides per dim, byte stride between segments,
        byte offset, itemsize)``; consts: one ``bytes`` (<= 16) per scalar; temps: an
        itemsize each; outputs: ``(byte strides per dim, byte stride between segments,
        itemsize, kind, reg, (loop, data) or None[, (segment loops) or None[, byte
        offset]])``; code: ``((loop, data), regs)`` with
        registers numbered inputs, consts, temps, outputs.  Every value is checked here; ``run``
        trusts them."""
        cdef int d, k, j
        self.description = (tuple(shape), seg, len(inputs), len(consts), len(temps),
                            len(outputs), len(code))
        self.kd.nd = len(shape)
        if not 1 <= self.kd.nd <= MAXD:
            raise ValueError(f"shape: 1 to {MAXD} dims, got {tuple(shape)}")
        if block < 1:
            raise ValueError("block: must be >= 1")
        self.kd.size = 1
        for d in range(self.kd.nd):
            if shape[d] < 1:
                raise ValueError(f"shape: dims must be >= 1, got {tuple(shape)}")
            self.kd.shape[d] = shape[d]
            self.kd.size *= shape[d]
        last = self.kd.shape[self.kd.nd - 1]
        if seg < 0 or (seg and last % seg):
            raise ValueError(f"seg: must divide the last dim {last}, got {seg}")
        self.kd.segmented = 0 < seg < last and seg <= block
        if self.kd.segmented:
            self.kd.seg = seg
            self.kd.nseg = last // seg
            self.kd.kseg = block // seg
            self.kd.block = self.kd.kseg * seg
        else:
            self.kd.seg = last
            self.kd.nseg = 1
            self.kd.kseg = 1
            self.kd.block = block if block < last else last
        self.kd.n_in, self.kd.n_const = len(inputs), len(consts)
        self.kd.n_temp, self.kd.n_out = len(temps), len(outputs)
        self.kd.n_reg = self.kd.n_in + self.kd.n_const + self.kd.n_temp + self.kd.n_out
        n = max(1, self.kd.n_in)
        self.kd.in_strides = <intp *> malloc(n * self.kd.nd * sizeof(intp))
        self.kd.in_seg = <intp *> malloc(n * sizeof(intp))
        self.kd.in_offsets = <intp *> malloc(n * sizeof(intp))
        self.kd.in_need = <intp *> malloc(n * sizeof(intp))
        self.kd.in_item = <intp *> malloc(n * sizeof(intp))
        self.kd.in_mode = <int *> malloc(n * sizeof(int))
        for k in range(self.kd.n_in):
            strides, segstride, offset, itemsize = inputs[k]
            if not 1 <= itemsize <= 16:
                raise ValueError("inputs: itemsizes from 1 to 16 bytes")
            self.kd.in_offsets[k] = offset
            self.kd.in_item[k] = itemsize
            self.kd.in_seg[k] = segstride if self.kd.segmented else 0
            self.kd.in_need[k] = self._extent(strides, segstride, offset, itemsize)
            for d in range(self.kd.nd):
                self.kd.in_strides[k * self.kd.nd + d] = strides[d]
            self.kd.in_mode[k] = self._in_mode(strides[self.kd.nd - 1], self.kd.in_seg[k], itemsize)
        self.kd.consts = <char *> malloc(max(1, self.kd.n_const) * 16)
        for k in range(self.kd.n_const):
            b = bytes(consts[k])
            if len(b) > 16:
                raise ValueError("consts: at most 16 bytes each")
            memcpy(self.kd.consts + 16 * k, <char *> b, len(b))
        self.kd.temp_itemsize = <intp *> malloc(max(1, self.kd.n_temp) * sizeof(intp))
        for k in range(self.kd.n_temp):
            if not 1 <= temps[k] <= 16:
                raise ValueError("temps: itemsizes from 1 to 16 bytes")
            self.kd.temp_itemsize[k] = temps[k]
        n = max(1, self.kd.n_out)
        self.kd.out_strides = <intp *> malloc(n * self.kd.nd * sizeof(intp))
        self.kd.out_seg = <intp *> malloc(n * sizeof(intp))
        self.kd.out_need = <intp *> malloc(n * sizeof(intp))
        self.kd.out_offset = <intp *> malloc(n * sizeof(intp))
        self.kd.out_itemsize = <intp *> malloc(n * sizeof(intp))
        self.kd.out_kind = <int *> malloc(n * sizeof(int))
        self.kd.out_mode = <int *> malloc(n * sizeof(int))
        self.kd.out_reg = <int *> malloc(n * sizeof(int))
        self.kd.out_fn = <nxr_loop *> malloc(n * sizeof(nxr_loop))
        self.kd.out_data = <void **> malloc(n * sizeof(void *))
        self.kd.out_segfn = <nxr_segloop *> malloc(n * sizeof(nxr_segloop))
        self.kd.out_rowfn = <nxr_segloop *> malloc(n * sizeof(nxr_segloop))
        self.kd.out_rmask = <unsigned *> malloc(n * sizeof(unsigned))
        for k in range(self.kd.n_out):
            strides, segstride, itemsize, kind, reg, loop = outputs[k][:6]
            segloops = outputs[k][6] if len(outputs[k]) > 6 else None
            self.kd.out_offset[k] = outputs[k][7] if len(outputs[k]) > 7 else 0
            self.kd.out_segfn[k] = <nxr_segloop> <size_t> segloops[0] if segloops else NULL
            self.kd.out_rowfn[k] = <nxr_segloop> <size_t> segloops[1] if segloops else NULL
            if not 1 <= itemsize <= 16:
                raise ValueError("outputs: itemsizes from 1 to 16 bytes")
            self.kd.out_itemsize[k] = itemsize
            self.kd.out_kind[k] = kind
            self.kd.out_seg[k] = segstride if self.kd.segmented else 0
            self.kd.out_need[k] = self._extent(strides, segstride, self.kd.out_offset[k],
                                               itemsize)
            self.kd.out_rmask[k] = 0
            for d in range(self.kd.nd):
                self.kd.out_strides[k * self.kd.nd + d] = strides[d]
                if d < self.kd.nd - 1 and strides[d] == 0 and self.kd.shape[d] > 1:
                    self.kd.out_rmask[k] |= 1u << d
            inner = strides[self.kd.nd - 1]
            if kind == 1:
                if not 0 <= reg < self.kd.n_reg or loop is None:
                    raise ValueError("outputs: a reduction needs a register and a loop")
                self.kd.out_reg[k] = reg
                self.kd.out_fn[k] = <nxr_loop> <size_t> loop[0]
                self.kd.out_data[k] = <void *> <size_t> loop[1]
                self.kd.out_mode[k] = OUT_DIRECT
            elif kind == 0:
                self.kd.out_reg[k] = -1
                self.kd.out_fn[k] = NULL
                self.kd.out_data[k] = NULL
                if self.kd.out_rmask[k] or (inner == 0 and self.kd.seg > 1) or (
                        self.kd.segmented and self.kd.out_seg[k] == 0 and self.kd.nseg > 1):
                    raise ValueError("outputs: a written output cannot have stride 0 on a dim "
                                     "longer than 1 (only reductions do)")
                flat = not self.kd.segmented or self.kd.out_seg[k] == inner * self.kd.seg
                self.kd.out_mode[k] = OUT_DIRECT if flat and inner == itemsize else OUT_SCATTER
            else:
                raise ValueError(f"outputs: kind must be 0 or 1, got {kind}")
        self.kd.n_code = len(code)
        self.kd.code = <Instr *> malloc(max(1, self.kd.n_code) * sizeof(Instr))
        for k in range(self.kd.n_code):
            loop, regs = code[k]
            if not 2 <= len(regs) <= MAXARGS:
                raise ValueError("code: 2 to 4 operands per instruction")
            self.kd.code[k].fn = <nxr_loop> <size_t> loop[0]
            self.kd.code[k].data = <void *> <size_t> loop[1]
            self.kd.code[k].nargs = len(regs)
            for j in range(len(regs)):
                if not 0 <= regs[j] < self.kd.n_reg:
                    raise ValueError(f"code: register {regs[j]} out of range")
                self.kd.code[k].regs[j] = regs[j]
            out_reg = regs[len(regs) - 1]
            if out_reg < self.kd.n_in + self.kd.n_const:
                raise ValueError("code: an instruction cannot write an input or a constant")
        self.units = self._split_units()

    cdef intp _split_units(self):
        """How many parts the work splits into with every output element computed by one part
        (dim 0's indices, or with one dim its blocks); 1 when a reduction combines across."""
        cdef int k, last = self.kd.nd - 1
        for k in range(self.kd.n_out):
            if self.kd.out_kind[k] != 1:
                continue
            if self.kd.nd >= 2:
                if self.kd.out_rmask[k] & 1:
                    return 1
            elif not (self.kd.segmented and self.kd.out_seg[k] != 0
                      and self.kd.out_strides[k * self.kd.nd + last] == 0):
                return 1
        if self.kd.nd >= 2:
            return self.kd.shape[0]
        return (self.kd.shape[0] + self.kd.block - 1) // self.kd.block

    cdef int _in_mode(self, intp inner, intp segstride, intp itemsize):
        if not self.kd.segmented:
            return IN_DIRECT if inner == 0 or inner == itemsize else IN_GATHER
        if segstride == 0 and inner != 0:
            return IN_TILED
        if segstride == 0 and inner == 0:
            return IN_DIRECT          # one value for the whole block (stride 0)
        if inner == itemsize and segstride == itemsize * self.kd.seg:
            return IN_DIRECT
        return IN_GATHER

    cdef intp _extent(self, strides, intp segstride, intp offset, intp itemsize) except -1:
        """Bytes an array must hold for these strides from ``offset`` (ValueError when an
        element would lie before the array's start)."""
        cdef intp hi = offset, lo = offset, s
        cdef int d
        for d in range(self.kd.nd):
            s = strides[d]
            if d == self.kd.nd - 1 and self.kd.segmented:
                # the last dim is (segments, within a segment)
                if segstride < 0:
                    lo += segstride * (self.kd.nseg - 1)
                else:
                    hi += segstride * (self.kd.nseg - 1)
                if s < 0:
                    lo += s * (self.kd.seg - 1)
                else:
                    hi += s * (self.kd.seg - 1)
                continue
            if s < 0:
                lo += s * (self.kd.shape[d] - 1)
            else:
                hi += s * (self.kd.shape[d] - 1)
        if lo < 0:
            raise ValueError(f"strides {tuple(strides)} from offset {offset} reach before the "
                             f"array's start")
        return hi + itemsize

    cdef int _run_threads(self, char **base, intp nt) except -1:
        """Share dim 0 (or the blocks of the one dim) between this thread and up to nt - 1 of
        the kernels' pool workers (pool.run_spans): the work is cut into 4 spans per
        thread that the threads take in turn, so that a thread the OS runs late (a busy
        machine) leaves its share to the others; the caller waits only for spans a worker
        has taken, never for a worker that has not woken."""
        cdef intp per, nspans, total = self.kd.shape[0]
        cdef int rc
        cdef Job job
        if nt <= 1:
            with nogil:
                rc = _exec(&self.kd, base, 0, total)
            return rc
        job.kd = &self.kd
        job.base = base
        job.scale = 1 if self.kd.nd >= 2 else self.kd.block
        job.total = total
        job.result = 0
        nspans = min(self.units, 4 * nt)
        per = (self.units + nspans - 1) // nspans
        run_spans(_run_span, &job, self.units, per, (self.units + per - 1) // per, nt)
        return job.result

    def run(self, tuple ins, tuple outs):
        """Run on input arrays ``ins`` and output arrays ``outs`` (C-contiguous, large enough
        for the strides; checked)."""
        cdef int k
        if len(ins) != self.kd.n_in or len(outs) != self.kd.n_out:
            raise ValueError(f"run: {self.kd.n_in} inputs and {self.kd.n_out} outputs expected, got "
                             f"{len(ins)} and {len(outs)}")
        cdef char **base = <char **> malloc((self.kd.n_in + self.kd.n_out + 1) * sizeof(char *))
        if base == NULL:
            raise MemoryError()
        keep = []
        cdef cnp.ndarray a
        try:
            for k in range(self.kd.n_in):
                obj = ins[k]
                if type(obj) is not np.ndarray:
                    obj = np.asarray(obj)
                    keep.append(obj)
                a = obj
                if not cnp.PyArray_IS_C_CONTIGUOUS(a):
                    a = np.ascontiguousarray(a)
                    keep.append(a)
                if a.nbytes < self.kd.in_need[k]:
                    raise ValueError(f"run: input {k} holds {a.nbytes} bytes, the kernel reads "
                                     f"{self.kd.in_need[k]}")
                base[k] = <char *> cnp.PyArray_DATA(a)
            for k in range(self.kd.n_out):
                a = outs[k]
                if not cnp.PyArray_IS_C_CONTIGUOUS(a) or not cnp.PyArray_ISWRITEABLE(a):
                    raise ValueError(f"run: output {k} must be a writeable C-contiguous array")
                if a.nbytes < self.kd.out_need[k]:
                    raise ValueError(f"run: output {k} holds {a.nbytes} bytes, the kernel "
                                     f"writes {self.kd.out_need[k]}")
                base[self.kd.n_in + k] = <char *> cnp.PyArray_DATA(a) + self.kd.out_offset[k]
            if self.kd.size >= THREADED_SIZE and self.units > 1:
                k = self._run_threads(base, min(num_threads(), self.units, 8,
                                                self.kd.size // (THREADED_SIZE // 2)))
            elif self.kd.size >= 65536:
                with nogil:
                    k = _exec(&self.kd, base, 0, self.kd.shape[0])
            else:
                k = _exec(&self.kd, base, 0, self.kd.shape[0])
            if k:
                raise MemoryError()
        finally:
            free(base)


cdef void _reduce(KData *kd, int k, char *optr, intp ostep, char *rptr, intp rstep, intp n,
                  bint first) noexcept nogil:
    """Combine n values (rptr, rstep) into the output at optr: into one element when ostep
    is 0, element by element otherwise; the first visit copies instead of combining."""
    cdef char *args[3]
    cdef intp steps[3]
    cdef intp m
    if ostep == 0:
        if first:
            memcpy(optr, rptr, kd.out_itemsize[k])
            if n <= 1:
                return
            rptr += rstep
            n -= 1
        args[0] = optr; args[1] = rptr; args[2] = optr
        steps[0] = 0; steps[1] = rstep; steps[2] = 0
        m = n
        kd.out_fn[k](args, &m, steps, kd.out_data[k])
    elif first:
        nxr_copy(optr, ostep, rptr, rstep, n, kd.out_itemsize[k])
    else:
        args[0] = optr; args[1] = rptr; args[2] = optr
        steps[0] = ostep; steps[1] = rstep; steps[2] = ostep
        m = n
        kd.out_fn[k](args, &m, steps, kd.out_data[k])


cdef inline intp _lines(intp nbytes) noexcept nogil:
    """nbytes rounded up to whole 64-byte cache lines."""
    return (nbytes + 63) & ~(<intp> 63)


cdef int _exec(KData *kd, char **base, intp lo, intp hi) noexcept nogil:
    cdef int nd = kd.nd, n_in = kd.n_in, n_out = kd.n_out, nreg = kd.n_reg
    cdef int t0 = kd.n_in + kd.n_const, o0 = t0 + kd.n_temp
    cdef int last = nd - 1, d, k, j, r
    cdef intp B = kd.block, seg = kd.seg, L = kd.shape[last]
    cdef intp n, start, rows, row, ks, sg0, item, istep, ostep, rstep, oseg
    cdef intp idx[MAXD]
    cdef char **ptr = <char **> malloc(nreg * sizeof(char *))
    cdef intp *step = <intp *> malloc(nreg * sizeof(intp))
    cdef intp *off = <intp *> malloc((n_in + n_out + 1) * sizeof(intp))
    cdef char **stage = <char **> malloc((n_in + n_out + 1) * sizeof(char *))
    cdef char *tmem = NULL
    cdef intp tbytes = 0
    cdef char *args[MAXARGS]
    cdef intp steps[MAXARGS]
    cdef Instr *ins
    cdef bint first
    cdef char *optr
    cdef char *rptr
    if ptr == NULL or step == NULL or off == NULL or stage == NULL:
        free(ptr); free(step); free(off); free(stage)
        return 1
    # temporaries and staging blocks start on 64-byte lines: a vector load or store that
    # straddles two lines costs more than one that does not, and where malloc put the block
    # made a large kernel's speed vary by up to 1.7x between processes
    for k in range(kd.n_temp):
        tbytes += _lines(kd.temp_itemsize[k] * B)
    for k in range(n_in):
        if kd.in_mode[k] != IN_DIRECT:
            tbytes += _lines(kd.in_item[k] * B)
    for k in range(n_out):
        if kd.out_mode[k] == OUT_SCATTER:
            tbytes += _lines(kd.out_itemsize[k] * B)
    tmem = <char *> malloc(tbytes + 64)
    if tmem == NULL:
        free(ptr); free(step); free(off); free(stage)
        return 1
    cdef char *tbase = <char *> ((<size_t> tmem + 63) & ~(<size_t> 63))
    # constants, temporaries and staging blocks sit still
    for k in range(kd.n_const):
        ptr[n_in + k] = kd.consts + 16 * k
        step[n_in + k] = 0
    tbytes = 0
    for k in range(kd.n_temp):
        ptr[t0 + k] = tbase + tbytes
        step[t0 + k] = kd.temp_itemsize[k]
        tbytes += _lines(kd.temp_itemsize[k] * B)
    for k in range(n_in):
        off[k] = kd.in_offsets[k]
        stage[k] = NULL
        if kd.in_mode[k] != IN_DIRECT:
            stage[k] = tbase + tbytes
            tbytes += _lines(kd.in_item[k] * B)
            ptr[k] = stage[k]
            step[k] = kd.in_item[k]
        else:
            step[k] = kd.in_strides[k * nd + last]
    for k in range(n_out):
        off[n_in + k] = 0
        stage[n_in + k] = NULL
        if kd.out_mode[k] == OUT_SCATTER:
            stage[n_in + k] = tbase + tbytes
            tbytes += _lines(kd.out_itemsize[k] * B)
            ptr[o0 + k] = stage[n_in + k]
            step[o0 + k] = kd.out_itemsize[k]
        else:
            step[o0 + k] = kd.out_strides[k * nd + last]
    for d in range(nd):
        idx[d] = 0
    # this call's part: dims-0 indices [lo, hi) (with one dim: elements [lo, hi) of it)
    cdef intp row_lo = 0, row_hi = kd.size // L, end = L
    if nd >= 2:
        rows = row_hi // kd.shape[0]
        row_lo, row_hi = lo * rows, hi * rows
        idx[0] = lo
        for k in range(n_in):
            off[k] += lo * kd.in_strides[k * nd]
        for k in range(n_out):
            off[n_in + k] += lo * kd.out_strides[k * nd]
    else:
        end = hi
    for row in range(row_lo, row_hi):
        # a row broadcast over the segments: tiled once per row
        for k in range(n_in):
            if kd.in_mode[k] == IN_TILED:
                item = kd.in_item[k]
                istep = kd.in_strides[k * nd + last]
                for j in range(kd.kseg):
                    nxr_copy(stage[k] + j * seg * item, item, base[k] + off[k], istep, seg,
                             item)
        start = lo if nd == 1 else 0
        sg0 = start // seg
        while start < end:
            if kd.segmented:
                ks = (end - start) // seg
                if ks > kd.kseg:
                    ks = kd.kseg
                n = ks * seg
            else:
                ks = 1
                n = end - start if end - start < B else B
            for k in range(n_in):
                if kd.in_mode[k] == IN_DIRECT:
                    if kd.segmented:
                        ptr[k] = base[k] + off[k] + sg0 * kd.in_seg[k]
                    else:
                        ptr[k] = base[k] + off[k] + start * step[k]
                elif kd.in_mode[k] == IN_GATHER:
                    item = kd.in_item[k]
                    istep = kd.in_strides[k * nd + last]
                    if kd.segmented:
                        for j in range(ks):
                            nxr_copy(stage[k] + j * seg * item, item,
                                     base[k] + off[k] + (sg0 + j) * kd.in_seg[k],
                                     istep, seg, item)
                    else:
                        nxr_copy(stage[k], item, base[k] + off[k] + start * istep, istep,
                                 n, item)
            for k in range(n_out):
                if kd.out_mode[k] == OUT_DIRECT:
                    if kd.segmented:
                        ptr[o0 + k] = base[n_in + k] + off[n_in + k] + sg0 * kd.out_seg[k]
                    else:
                        ptr[o0 + k] = base[n_in + k] + off[n_in + k] + start * step[o0 + k]
            for k in range(kd.n_code):
                ins = &kd.code[k]
                for j in range(ins.nargs):
                    r = ins.regs[j]
                    args[j] = ptr[r]
                    steps[j] = step[r]
                ins.fn(args, &n, steps, ins.data)
            for k in range(n_out):
                if kd.out_kind[k] == 0:
                    if kd.out_mode[k] == OUT_SCATTER:
                        item = kd.out_itemsize[k]
                        ostep = kd.out_strides[k * nd + last]
                        if kd.segmented:
                            for j in range(ks):
                                nxr_copy(base[n_in + k] + off[n_in + k]
                                         + (sg0 + j) * kd.out_seg[k], ostep,
                                         stage[n_in + k] + j * seg * item, item, seg, item)
                        else:
                            nxr_copy(base[n_in + k] + off[n_in + k] + start * ostep, ostep,
                                     stage[n_in + k], item, n, item)
                    continue
                # a reduction: first visit of its output elements?
                first = True
                for d in range(last):
                    if (kd.out_rmask[k] >> d) & 1 and idx[d] != 0:
                        first = False
                        break
                ostep = kd.out_strides[k * nd + last]
                rptr = ptr[kd.out_reg[k]]
                rstep = step[kd.out_reg[k]]
                optr = base[n_in + k] + off[n_in + k]
                if not kd.segmented:
                    if ostep == 0:
                        _reduce(kd, k, optr, 0, rptr, rstep, n, first and start == 0)
                    else:
                        _reduce(kd, k, optr + start * ostep, ostep, rptr, rstep, n, first)
                    continue
                oseg = kd.out_seg[k]
                if oseg == 0 and ostep == 0:
                    # the whole block into one element
                    _reduce(kd, k, optr, 0, rptr, rstep, n, first and sg0 == 0)
                elif oseg == 0:
                    # every segment into the same row
                    if kd.out_rowfn[k] != NULL:
                        kd.out_rowfn[k](optr, ostep, rptr, rstep, seg, ks,
                                          first and sg0 == 0)
                        continue
                    for j in range(ks):
                        _reduce(kd, k, optr, ostep, rptr + j * seg * rstep, rstep, seg,
                                     first and sg0 + j == 0)
                elif ostep == 0:
                    # each segment into its own element
                    if kd.out_segfn[k] != NULL:
                        kd.out_segfn[k](optr + sg0 * oseg, oseg, rptr, rstep, seg, ks,
                                          first)
                    else:
                        for j in range(ks):
                            _reduce(kd, k, optr + (sg0 + j) * oseg, 0,
                                         rptr + j * seg * rstep, rstep, seg, first)
                else:
                    for j in range(ks):
                        _reduce(kd, k, optr + (sg0 + j) * oseg, ostep,
                                     rptr + j * seg * rstep, rstep, seg, first)
            start += n
            sg0 += ks
        # next row: the odometer over the outer dims
        d = last - 1
        while d >= 0:
            idx[d] += 1
            for k in range(n_in):
                off[k] += kd.in_strides[k * nd + d]
            for k in range(n_out):
                off[n_in + k] += kd.out_strides[k * nd + d]
            if idx[d] < kd.shape[d]:
                break
            for k in range(n_in):
                off[k] -= kd.in_strides[k * nd + d] * kd.shape[d]
            for k in range(n_out):
                off[n_in + k] -= kd.out_strides[k * nd + d] * kd.shape[d]
            idx[d] = 0
            d -= 1
    free(ptr); free(step); free(off); free(stage); free(tmem)
    return 0
