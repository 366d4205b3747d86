# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Stacks of factorizations through SciPy's LAPACK in one C loop (typed Cython module).

The float32 Cholesky (spotrf, lower), QR (sgeqrf + sorgqr), symmetric eigendecomposition
(ssyevd) and SVD (sgesdd) factors jaxlib computes, and its float64 Cholesky (dpotrf, lower)
and SVD (dgesdd),
come from SciPy's LAPACK build; NumPy's build (and the upper variant on the transpose)
rounds differently.  Calling SciPy's routines once per
matrix through their Python wrappers costs microseconds a matrix, which a stack of small
matrices pays many times: these loops call the Fortran entry points directly (the
``scipy.linalg.cython_lapack`` capsules), each matrix transposed into a Fortran-order scratch
buffer and back, with the GIL released.
"""
cimport numpy as cnp
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from nx_rune._kernels.scipy_blas cimport blas_entry

cnp.import_array()

ctypedef void (*potrf_t)(char *uplo, int *n, float *a, int *lda, int *info) noexcept nogil
ctypedef void (*dpotrf_t)(char *uplo, int *n, double *a, int *lda, int *info) noexcept nogil
ctypedef void (*geqrf_t)(int *m, int *n, float *a, int *lda, float *tau, float *work,
                         int *lwork, int *info) noexcept nogil
ctypedef void (*orgqr_t)(int *m, int *n, int *k, float *a, int *lda, float *tau, float *work,
                         int *lwork, int *info) noexcept nogil
ctypedef void (*syevd_t)(char *jobz, char *uplo, int *n, float *a, int *lda, float *w,
                         float *work, int *lwork, int *iwork, int *liwork,
                         int *info) noexcept nogil
ctypedef void (*gesdd_t)(char *jobz, int *m, int *n, float *a, int *lda, float *s, float *u,
                         int *ldu, float *vt, int *ldvt, float *work, int *lwork, int *iwork,
                         int *info) noexcept nogil
ctypedef void (*dgesdd_t)(char *jobz, int *m, int *n, double *a, int *lda, double *s,
                          double *u, int *ldu, double *vt, int *ldvt, double *work, int *lwork,
                          int *iwork, int *info) noexcept nogil

cdef potrf_t _spotrf = NULL
cdef dpotrf_t _dpotrf = NULL
cdef geqrf_t _sgeqrf = NULL
cdef orgqr_t _sorgqr = NULL
cdef syevd_t _ssyevd = NULL
cdef gesdd_t _sgesdd = NULL
cdef dgesdd_t _dgesdd = NULL
cdef bint _loaded = False


def available():
    """Whether SciPy's spotrf, dpotrf, sgeqrf, sorgqr, ssyevd, sgesdd and dgesdd entry points
    were found (loaded on first use)."""
    global _spotrf, _dpotrf, _sgeqrf, _sorgqr, _ssyevd, _sgesdd, _dgesdd, _loaded
    if not _loaded:
        _loaded = True
        try:
            from scipy.linalg import cython_lapack
            capi = cython_lapack.__pyx_capi__
            _spotrf = <potrf_t> blas_entry(capi, "spotrf")
            _dpotrf = <dpotrf_t> blas_entry(capi, "dpotrf")
            _sgeqrf = <geqrf_t> blas_entry(capi, "sgeqrf")
            _sorgqr = <orgqr_t> blas_entry(capi, "sorgqr")
            _ssyevd = <syevd_t> blas_entry(capi, "ssyevd")
            _sgesdd = <gesdd_t> blas_entry(capi, "sgesdd")
            _dgesdd = <dgesdd_t> blas_entry(capi, "dgesdd")
        except (ImportError, AttributeError, ValueError):
            _spotrf = NULL
            _dpotrf = NULL
            _sgeqrf = NULL
            _sorgqr = NULL
            _ssyevd = NULL
            _sgesdd = NULL
            _dgesdd = NULL
    return _spotrf != NULL and _dpotrf != NULL and _sgeqrf != NULL and _sorgqr != NULL \
        and _ssyevd != NULL and _sgesdd != NULL and _dgesdd != NULL



ctypedef fused real_t:
    float
    double


cdef extern from *:
    """
    #if defined(__x86_64__) || defined(__SSE2__)
    #include <xmmintrin.h>
    static inline unsigned int nx_lapack_enter(int keep_subnormals) {
        unsigned int old = _mm_getcsr();
        if (!keep_subnormals) _mm_setcsr(old | 0x8040u);   /* flush-to-zero | denormals-are-zero */
        return old;
    }
    static inline void nx_lapack_leave(unsigned int old) { _mm_setcsr(old); }
    #else
    static inline unsigned int nx_lapack_enter(int keep_subnormals) { (void)keep_subnormals; return 0; }
    static inline void nx_lapack_leave(unsigned int old) { (void)old; }
    #endif
    """
    # XLA:CPU runs its custom calls (jaxlib's LAPACK kernels among them) with the processor's
    # flush-to-zero and denormals-are-zero modes on: a subnormal intermediate is zero there,
    # which changes the factors' last bits (float32 eigh of a 600 x 600 covariance: 359,418 of
    # 360,000 eigenvector entries).  The loops call LAPACK the same way, except for a matrix
    # so small that its subnormal entries carry its significant bits, whose factors are then
    # computed in full (JAX flushes such a matrix to zero: a wrong answer nx does not copy).
    unsigned int nx_lapack_enter(int keep_subnormals) noexcept nogil
    void nx_lapack_leave(unsigned int old) noexcept nogil


cdef inline bint _to_fortran(const real_t *src, real_t *f, Py_ssize_t m,
                             Py_ssize_t n) noexcept nogil:
    """The (m, n) C-order matrix at ``src`` into ``f`` in Fortran order (LAPACK's); whether its
    subnormal entries matter: it holds one and its largest entry is within the dtype's
    precision of them (flushing them to zero would change the matrix by more than an ulp of
    that entry)."""
    cdef Py_ssize_t i, j
    cdef real_t x, top = 0, tiny = 1.1754943508222875e-38 if real_t is float \
        else 2.2250738585072014e-308
    cdef real_t wide = tiny * (16777216.0 if real_t is float else 9007199254740992.0)
    cdef bint subnormal = False
    for i in range(m):
        for j in range(n):
            x = src[i * n + j]
            f[i + j * m] = x
            if x < 0:
                x = -x
            if x > top:
                top = x
            if x != 0 and x < tiny:
                subnormal = True
    return subnormal and top < wide


cdef inline void _from_fortran(const real_t *f, Py_ssize_t ld, real_t *dst, Py_ssize_t m,
                               Py_ssize_t n) noexcept nogil:
    """The leading (m, n) block of the Fortran-order matrix at ``f`` (leading dimension ``ld``)
    into ``dst`` in C order."""
    cdef Py_ssize_t i, j
    for i in range(m):
        for j in range(n):
            dst[i * n + j] = f[i + j * ld]


def potrf_lower_f32(cnp.ndarray a, cnp.ndarray out):
    """``out[b] = L`` with ``L L^T`` the Cholesky factorization of the lower triangle of each
    matrix ``a[b]`` (a and out: C-contiguous float32 (B, n, n)); the strict upper triangle of
    L is zero.  Returns the index of the first matrix that is not positive definite, or -1."""
    _check_potrf(a, out, cnp.NPY_FLOAT32, "potrf_lower_f32", "float32")
    return _potrf(<const float *> cnp.PyArray_DATA(a), <float *> cnp.PyArray_DATA(out),
                  a.shape[0], a.shape[1])


def potrf_lower_f64(cnp.ndarray a, cnp.ndarray out):
    """``potrf_lower_f32`` for float64 (dpotrf, lower, on each matrix copied into Fortran
    order: the call jaxlib makes)."""
    _check_potrf(a, out, cnp.NPY_FLOAT64, "potrf_lower_f64", "float64")
    return _potrf(<const double *> cnp.PyArray_DATA(a), <double *> cnp.PyArray_DATA(out),
                  a.shape[0], a.shape[1])


cdef _check_potrf(cnp.ndarray a, cnp.ndarray out, int typenum, str name, str dtype):
    if not available():
        raise RuntimeError("SciPy's LAPACK entry points are not available")
    if cnp.PyArray_TYPE(a) != typenum or cnp.PyArray_TYPE(out) != typenum \
            or a.ndim != 3 or out.ndim != 3 or not cnp.PyArray_IS_C_CONTIGUOUS(a) \
            or not cnp.PyArray_IS_C_CONTIGUOUS(out) or a.shape[1] != a.shape[2] \
            or out.shape[0] != a.shape[0] or out.shape[1] != a.shape[1] \
            or out.shape[2] != a.shape[2]:
        raise ValueError(f"{name}: a and out must be C-contiguous {dtype} (B, n, n)")


cdef inline void _potrf_call(char *uplo, int *n, real_t *a, int *lda,
                             int *info) noexcept nogil:
    if real_t is float:
        _spotrf(uplo, n, a, lda, info)
    else:
        _dpotrf(uplo, n, a, lda, info)


cdef Py_ssize_t _potrf(const real_t *src, real_t *dst, Py_ssize_t nb,
                       Py_ssize_t n) except -2:
    """The loop of potrf_lower_f32 / potrf_lower_f64 over arrays they checked."""
    cdef Py_ssize_t b, i, j, bad = -1
    cdef int ni = <int> n, info = 0
    cdef char uplo = b'L'
    cdef unsigned int csr
    cdef real_t *f = <real_t *> malloc(max(n * n, 1) * sizeof(real_t))
    if f == NULL:
        raise MemoryError()
    try:
        with nogil:
            for b in range(nb):
                csr = nx_lapack_enter(_to_fortran(&src[b * n * n], f, n, n))
                _potrf_call(&uplo, &ni, f, &ni, &info)
                nx_lapack_leave(csr)
                if info != 0:
                    bad = b
                    break
                for i in range(n):
                    for j in range(n):
                        dst[b * n * n + i * n + j] = f[i + j * n] if j <= i else 0.0
    finally:
        free(f)
    return bad


def _query_work(int m, int n, int k):
    """The optimal work sizes of sgeqrf on (m, n) and sorgqr on (m, k) with min(m, n)
    reflectors (LAPACK's workspace queries)."""
    cdef int info = 0, lwork = -1, r = min(m, n)
    cdef float w1 = 0, w2 = 0, dummy = 0
    cdef int lda = max(m, 1)
    _sgeqrf(&m, &n, &dummy, &lda, &dummy, &w1, &lwork, &info)
    _sorgqr(&m, &k, &r, &dummy, &lda, &dummy, &w2, &lwork, &info)
    return max(1, <int> w1), max(1, <int> w2)


def qr_f32(cnp.ndarray a, cnp.ndarray q, cnp.ndarray r):
    """``q[b], r[b]`` = the QR factors of each matrix ``a[b]`` (C-contiguous float32 (B, m, n);
    q (B, m, k), r (B, k, n) with k = m ("complete") or min(m, n) ("reduced")), as
    scipy.linalg.qr computes them (sgeqrf, then sorgqr with the optimal work sizes).
    Returns the LAPACK info of the first failure, or 0."""
    if not available():
        raise RuntimeError("SciPy's LAPACK entry points are not available")
    for arr in (a, q, r):
        if cnp.PyArray_TYPE(arr) != cnp.NPY_FLOAT32 or arr.ndim != 3 \
                or not cnp.PyArray_IS_C_CONTIGUOUS(arr):
            raise ValueError("qr_f32: a, q and r must be C-contiguous float32 (B, ., .)")
    cdef Py_ssize_t nb = a.shape[0], m = a.shape[1], n = a.shape[2], k = q.shape[2]
    if q.shape[0] != nb or q.shape[1] != m or r.shape[0] != nb or r.shape[1] != k \
            or r.shape[2] != n or not (k == m or k == min(m, n)):
        raise ValueError("qr_f32: q must be (B, m, k) and r (B, k, n), k = m or min(m, n)")
    if m == 0 or n == 0 or nb == 0:
        return 0
    cdef int mi = <int> m, ni = <int> n, ki = <int> k, rk = <int> min(m, n), info = 0
    cdef int lda = mi
    lw1, lw2 = _query_work(mi, ni, ki)
    cdef int lwork1 = lw1, lwork2 = lw2
    cdef Py_ssize_t cols = max(n, k), b, i, j
    cdef const float *src = <const float *> cnp.PyArray_DATA(a)
    cdef float *qd = <float *> cnp.PyArray_DATA(q)
    cdef float *rd = <float *> cnp.PyArray_DATA(r)
    cdef float *f = <float *> malloc(m * cols * sizeof(float))
    cdef float *tau = <float *> malloc(max(rk, 1) * sizeof(float))
    cdef float *work = <float *> malloc(max(lwork1, lwork2) * sizeof(float))
    if f == NULL or tau == NULL or work == NULL:
        free(f)
        free(tau)
        free(work)
        raise MemoryError()
    cdef unsigned int csr
    try:
        with nogil:
            for b in range(nb):
                csr = nx_lapack_enter(_to_fortran(&src[b * m * n], f, m, n))
                _sgeqrf(&mi, &ni, f, &lda, tau, work, &lwork1, &info)
                if info == 0:
                    for i in range(k):
                        for j in range(n):
                            rd[b * k * n + i * n + j] = f[i + j * m] if j >= i else 0.0
                    if k > n:     # a complete Q of a tall matrix: the reflectors padded with 0
                        memset(&f[n * m], 0, (k - n) * m * sizeof(float))
                    _sorgqr(&mi, &ki, &rk, f, &lda, tau, work, &lwork2, &info)
                nx_lapack_leave(csr)
                if info != 0:
                    break
                _from_fortran(f, m, &qd[b * m * k], m, k)
    finally:
        free(f)
        free(tau)
        free(work)
    return info


def syevd_f32(cnp.ndarray a, cnp.ndarray w, cnp.ndarray v, bint lower):
    """``w[b], v[b]`` = the eigenvalues (ascending) and eigenvectors (columns) of each real
    symmetric matrix ``a[b]`` (C-contiguous float32: a and v (B, n, n), w (B, n)), from its
    lower (``lower``) or upper triangle, by ssyevd with jobz "V" and jaxlib's work sizes
    (1 + 6 n + 2 n^2 and 3 + 5 n: the minimal ones, not the queried optimum).  Returns the
    LAPACK info of the first failure, or 0."""
    if not available():
        raise RuntimeError("SciPy's LAPACK entry points are not available")
    for arr in (a, w, v):
        if cnp.PyArray_TYPE(arr) != cnp.NPY_FLOAT32 or not cnp.PyArray_IS_C_CONTIGUOUS(arr):
            raise ValueError("syevd_f32: a, w and v must be C-contiguous float32")
    if a.ndim != 3 or v.ndim != 3 or w.ndim != 2 or a.shape[1] != a.shape[2] \
            or v.shape[0] != a.shape[0] or v.shape[1] != a.shape[1] \
            or v.shape[2] != a.shape[2] or w.shape[0] != a.shape[0] or w.shape[1] != a.shape[1]:
        raise ValueError("syevd_f32: a and v must be (B, n, n) and w (B, n)")
    cdef Py_ssize_t nb = a.shape[0], n = a.shape[1], b, i, j
    if n == 0 or nb == 0:
        return 0
    cdef int ni = <int> n, info = 0
    cdef int lwork = <int> (1 + 6 * n + 2 * n * n), liwork = <int> (3 + 5 * n)
    cdef char jobz = b'V'
    cdef char uplo = b'L' if lower else b'U'
    cdef const float *src = <const float *> cnp.PyArray_DATA(a)
    cdef float *wd = <float *> cnp.PyArray_DATA(w)
    cdef float *vd = <float *> cnp.PyArray_DATA(v)
    cdef float *f = <float *> malloc(n * n * sizeof(float))
    cdef float *work = <float *> malloc(lwork * sizeof(float))
    cdef int *iwork = <int *> malloc(liwork * sizeof(int))
    if f == NULL or work == NULL or iwork == NULL:
        free(f)
        free(work)
        free(iwork)
        raise MemoryError()
    cdef unsigned int csr
    try:
        with nogil:
            for b in range(nb):
                csr = nx_lapack_enter(_to_fortran(&src[b * n * n], f, n, n))
                _ssyevd(&jobz, &uplo, &ni, f, &ni, &wd[b * n], work, &lwork, iwork, &liwork,
                        &info)
                nx_lapack_leave(csr)
                if info != 0:
                    break
                _from_fortran(f, n, &vd[b * n * n], n, n)
    finally:
        free(f)
        free(work)
        free(iwork)
    return info


def gesdd_f32(cnp.ndarray a, cnp.ndarray u, cnp.ndarray s, cnp.ndarray vt):
    """``u[b], s[b], vt[b]`` = the singular value decomposition of each matrix ``a[b]``
    (C-contiguous float32 (B, m, n); u (B, m, m) and vt (B, n, n) for the full factors,
    jobz "A", or (B, m, k) and (B, k, n), k = min(m, n), for the reduced ones, jobz "S";
    s (B, k)), by sgesdd with the queried optimal work size and 8 k integers, as jaxlib calls
    it.  Returns the LAPACK info of the first failure, or 0."""
    _check_gesdd(a, u, s, vt, cnp.NPY_FLOAT32, "gesdd_f32", "float32")
    return _gesdd(<const float *> cnp.PyArray_DATA(a), <float *> cnp.PyArray_DATA(u),
                  <float *> cnp.PyArray_DATA(s), <float *> cnp.PyArray_DATA(vt), a.shape[0],
                  a.shape[1], a.shape[2], u.shape[2], vt.shape[1])


def gesdd_f64(cnp.ndarray a, cnp.ndarray u, cnp.ndarray s, cnp.ndarray vt):
    """gesdd_f32 in float64 (dgesdd, as jaxlib calls it)."""
    _check_gesdd(a, u, s, vt, cnp.NPY_FLOAT64, "gesdd_f64", "float64")
    return _gesdd(<const double *> cnp.PyArray_DATA(a), <double *> cnp.PyArray_DATA(u),
                  <double *> cnp.PyArray_DATA(s), <double *> cnp.PyArray_DATA(vt), a.shape[0],
                  a.shape[1], a.shape[2], u.shape[2], vt.shape[1])


cdef _check_gesdd(cnp.ndarray a, cnp.ndarray u, cnp.ndarray s, cnp.ndarray vt, int typenum,
                  str name, str dtype):
    if not available():
        raise RuntimeError("SciPy's LAPACK entry points are not available")
    for arr in (a, u, s, vt):
        if cnp.PyArray_TYPE(arr) != typenum or not cnp.PyArray_IS_C_CONTIGUOUS(arr):
            raise ValueError(f"{name}: a, u, s and vt must be C-contiguous {dtype}")
    if a.ndim != 3 or u.ndim != 3 or vt.ndim != 3 or s.ndim != 2:
        raise ValueError(f"{name}: a, u and vt must be (B, ., .) and s (B, k)")
    cdef Py_ssize_t nb = a.shape[0], m = a.shape[1], n = a.shape[2], k = min(m, n)
    cdef Py_ssize_t uc = u.shape[2], vr = vt.shape[1]
    full = uc == m and vr == n
    if u.shape[0] != nb or vt.shape[0] != nb or s.shape[0] != nb or u.shape[1] != m \
            or vt.shape[2] != n or s.shape[1] != k or not (full or (uc == k and vr == k)):
        raise ValueError(f"{name}: u must be (B, m, m) and vt (B, n, n), or (B, m, k) and "
                         f"(B, k, n)")


cdef inline void _gesdd_call(char *jobz, int *m, int *n, real_t *a, int *lda, real_t *s,
                             real_t *u, int *ldu, real_t *vt, int *ldvt, real_t *work,
                             int *lwork, int *iwork, int *info) noexcept nogil:
    if real_t is float:
        _sgesdd(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info)
    else:
        _dgesdd(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info)


cdef int _gesdd(const real_t *src, real_t *ud, real_t *sd, real_t *vd, Py_ssize_t nb,
                Py_ssize_t m, Py_ssize_t n, Py_ssize_t uc, Py_ssize_t vr) except -1:
    """The loop of gesdd_f32 / gesdd_f64 over arrays they checked."""
    cdef Py_ssize_t k = min(m, n), b
    if m == 0 or n == 0 or nb == 0:
        return 0
    cdef char jobz = b'A' if (uc == m and vr == n) else b'S'
    cdef int mi = <int> m, ni = <int> n, lda = <int> m, ldu = <int> m, ldvt = <int> vr
    cdef int info = 0, lwork = -1
    cdef real_t wq = 0, dummy = 0
    cdef int idummy = 0
    _gesdd_call(&jobz, &mi, &ni, &dummy, &lda, &dummy, &dummy, &ldu, &dummy, &ldvt, &wq,
                &lwork, &idummy, &info)
    lwork = max(1, <int> wq)
    cdef real_t *f = <real_t *> malloc(m * n * sizeof(real_t))
    cdef real_t *fu = <real_t *> malloc(m * uc * sizeof(real_t))
    cdef real_t *fv = <real_t *> malloc(vr * n * sizeof(real_t))
    cdef real_t *work = <real_t *> malloc(lwork * sizeof(real_t))
    cdef int *iwork = <int *> malloc(8 * k * sizeof(int))
    if f == NULL or fu == NULL or fv == NULL or work == NULL or iwork == NULL:
        free(f)
        free(fu)
        free(fv)
        free(work)
        free(iwork)
        raise MemoryError()
    cdef unsigned int csr
    try:
        with nogil:
            for b in range(nb):
                csr = nx_lapack_enter(_to_fortran(&src[b * m * n], f, m, n))
                _gesdd_call(&jobz, &mi, &ni, f, &lda, &sd[b * k], fu, &ldu, fv, &ldvt, work,
                            &lwork, iwork, &info)
                nx_lapack_leave(csr)
                if info != 0:
                    break
                _from_fortran(fu, m, &ud[b * m * uc], m, uc)
                _from_fortran(fv, vr, &vd[b * vr * n], vr, n)
    finally:
        free(f)
        free(fu)
        free(fv)
        free(work)
        free(iwork)
    return info
