# NumPy ufunc inner loops called directly on small arrays (see ufdirect.pyx): the result of
# ``ufunc(a)`` / ``ufunc(a, b)`` as a new C-contiguous ndarray, or None where this path does not
# apply (the caller then calls the ufunc).  With the GIL.
cimport numpy as cnp

# ufunc(a); a: C-contiguous or all strides 0.
cdef object direct1(object ufunc, cnp.ndarray a)
# ufunc(a, b); a and b of one dtype and shape, each C-contiguous or all strides 0.
cdef object direct2(object ufunc, cnp.ndarray a, cnp.ndarray b)
# ufunc(a, s) (ufunc(s, a) when reflected) for a Python float or int s that a's float or
# complex dtype keeps (NumPy's weak scalar: s converted to a's dtype).
cdef object direct_scalar(object ufunc, cnp.ndarray a, object s, bint reflected)
