# The parts of NumPy's ufunc object that the kernels read to call its inner loops directly
# (fusion.pyx's VM, ufdirect.pyx's eager fast path): the loop table and its dtype signatures.
from numpy cimport npy_intp

cdef extern from "numpy/ufuncobject.h":
    ctypedef void (*PyUFuncGenericFunction)(char **, npy_intp *, npy_intp *, void *) noexcept nogil
    ctypedef struct PyUFuncObject:
        int nin
        int nout
        int nargs
        int ntypes
        PyUFuncGenericFunction *functions
        void **data
        const char *types
