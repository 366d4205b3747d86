# Gather / scatter along an axis: the nogil kernels, for other Cython modules.
#
# The kernels take typed pointers with element strides (not bytes) and never validate
# shapes: the Python wrappers in gather.pyx do that.  They do check every index and stop at
# the first bad one, returning 1 with the offending index in ``bad[0]``.
from libc.stdint cimport int64_t

from nx_rune._kernels._types cimport index_t, item_t, numeric_t, real_t

cdef enum:
    MAX_DIMS = 64           # NumPy's NPY_MAXDIMS

cdef enum ScatterMode:
    MODE_SET
    MODE_ADD
    MODE_MUL
    MODE_MAX
    MODE_MIN

# Operands of a walk, by their role.
cdef enum:
    OP_INDEX = 0            # the indices, shape B (broadcast)
    OP_ALONG = 1            # the array indexed along the axis (stride 0 on the axis itself)
    OP_DENSE = 2            # the array of the broadcast shape B (gather's output, scatter's updates)

# Iteration plan over the broadcast shape B, in C order.  Size-1 dimensions are dropped and
# adjacent dimensions merged where every operand allows it; the last dimension is the inner loop.
cdef struct Walk:
    int ndim
    Py_ssize_t rows                     # product of shape[:ndim - 1]
    Py_ssize_t shape[MAX_DIMS]
    Py_ssize_t strides[3][MAX_DIMS]     # element strides, indexed by OP_*
    Py_ssize_t n                        # length of OP_ALONG along the axis
    Py_ssize_t axis_stride              # element stride of OP_ALONG along the axis

cdef int gather_walk(const item_t* src, const index_t* idx, item_t* out,
                     const Walk* w, int64_t* bad) noexcept nogil
cdef int scatter_set_walk(item_t* out, const index_t* idx, const item_t* upd,
                          const Walk* w, int64_t* bad) noexcept nogil
cdef int scatter_accum_walk(numeric_t* out, const index_t* idx, const numeric_t* upd,
                            const Walk* w, int mode, int64_t* bad) noexcept nogil
cdef int scatter_order_walk(real_t* out, const index_t* idx, const real_t* upd,
                            const Walk* w, int mode, int64_t* bad) noexcept nogil
