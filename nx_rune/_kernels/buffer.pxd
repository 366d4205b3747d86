cimport numpy as cnp

cdef class Buffer:
    cdef void* _raw          # what was allocated (NULL when the memory belongs to _owner)
    cdef size_t _raw_bytes   # its length
    cdef char* data          # first byte, 64-byte aligned for our own allocations
    cdef readonly Py_ssize_t size       # number of elements
    cdef readonly Py_ssize_t itemsize
    cdef readonly object dtype          # numpy.dtype
    cdef readonly bint readonly
    cdef readonly object owner          # the ndarray whose memory this wraps, or None


# Whether an ndarray's memory can be seen as items of its dtype (see buffer.addressable).
cdef bint _addressable(cnp.ndarray arr) except -1
