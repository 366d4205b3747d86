# SciPy's BLAS as C function pointers (scipy.linalg.cython_blas's exported entry points:
# Fortran calling convention, column-major), for the kernels that call level-3 BLAS without the
# GIL (gemm.pyx, chol_adjoint.pyx).
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer

ctypedef void (*gemm_s)(char *ta, char *tb, int *m, int *n, int *k, float *alpha, float *a,
                        int *lda, float *b, int *ldb, float *beta, float *c,
                        int *ldc) noexcept nogil
ctypedef void (*gemm_d)(char *ta, char *tb, int *m, int *n, int *k, double *alpha, double *a,
                        int *lda, double *b, int *ldb, double *beta, double *c,
                        int *ldc) noexcept nogil


cdef inline void *blas_entry(dict capi, str name) except? NULL:
    """The function pointer SciPy's cython_blas exports as ``name`` (its ``__pyx_capi__``
    capsules), or NULL when it has none."""
    cap = capi.get(name)
    if cap is None:
        return NULL
    return PyCapsule_GetPointer(cap, PyCapsule_GetName(cap))
