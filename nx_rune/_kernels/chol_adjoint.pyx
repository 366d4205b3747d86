# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The adjoint of the Cholesky factorization: given the lower factor L of A = L L^T and a
cotangent Lbar of L, the cotangent Abar of the lower triangle of A that the factorization reads
(reverse-mode differentiation of the factorization, Murray (2016), "Differentiation of the
Cholesky decomposition"), per matrix of a stack, in C without the GIL.

The recursion follows the recursive factorization (A11 = L11 L11^T, L21 = A21 L11^-T,
L22 = chol(A22 - L21 L21^T)) backwards, in the cotangent's own buffer W (Lbar on entry):

    W22 <- adjoint(L22, W22)          (Sigma22: the symmetric cotangent, see below)
    W21 -= Sigma22 L21                (symm)
    W21 <- W21 L11^-1                 (trsm: Abar21)
    W11 -= W21^T L21                  (gemm, on W11's lower triangle only)
    W11 <- adjoint(L11, W11)

and below _BASE columns by Murray's unblocked reverse loop (level 2, in C).  Inside the
recursion a diagonal block holds Sigma = Abar + Abar^T's lower triangle (Abar's diagonal
doubled), which the symm reads as it is; the diagonal is halved once at the end, and the strict
upper triangle (the gemm writes there) is zeroed.  About twice the factorization's flops, all
but the small diagonal blocks in level-3 BLAS.

BLAS: SciPy's (``scipy.linalg.cython_blas``'s C entry points, Fortran order).  A C-ordered
matrix is the Fortran transpose, so both layouts are one algorithm: the calls' side / uplo /
trans flags are chosen per layout instead of copying (``up``: W's storage rows are the
logical rows, C order; else they are its columns, the transposed view of C-ordered memory).
W takes Lbar's layout (its lower triangle loaded per matrix, any strides); L is read in place
when its storage has W's orientation, else its lower triangle is loaded per matrix into a
scratch copy.  Only lower triangles of L and Lbar are read.  A stack runs one matrix per span
of the kernels' pool (pool.pyx); each matrix's values do not depend on the thread count.
"""
import numpy as np

cimport numpy as cnp
from cython cimport floating
from libc.stdlib cimport free, malloc

from nx_rune._kernels.pool cimport num_threads, run_spans
from nx_rune._kernels.scipy_blas cimport blas_entry, gemm_d, gemm_s

cnp.import_array()

ctypedef void (*symm_d)(char *side, char *uplo, int *m, int *n, double *alpha, double *a,
                        int *lda, double *b, int *ldb, double *beta, double *c,
                        int *ldc) noexcept nogil
ctypedef void (*symm_s)(char *side, char *uplo, int *m, int *n, float *alpha, float *a,
                        int *lda, float *b, int *ldb, float *beta, float *c,
                        int *ldc) noexcept nogil
ctypedef void (*trsm_d)(char *side, char *uplo, char *ta, char *diag, int *m, int *n,
                        double *alpha, double *a, int *lda, double *b, int *ldb) noexcept nogil
ctypedef void (*trsm_s)(char *side, char *uplo, char *ta, char *diag, int *m, int *n,
                        float *alpha, float *a, int *lda, float *b, int *ldb) noexcept nogil

cdef gemm_d _dgemm = NULL
cdef gemm_s _sgemm = NULL
cdef symm_d _dsymm = NULL
cdef symm_s _ssymm = NULL
cdef trsm_d _dtrsm = NULL
cdef trsm_s _strsm = NULL
cdef bint _loaded = False
cdef bint _found = False            # every entry point above was found

# the unblocked loop's size: below it the level-3 calls' fixed costs outweigh their speed
cdef int _BASE = 16
# below this size the lower triangle of a product is computed with the square (one BLAS call)
cdef int _GEMM_LOWER_MIN = 48
# the tiles of a transposing copy
cdef int _TILE = 16
# stacks at least this large (matrices x n^3) are spread over the kernels' pool, one matrix
# per span (each matrix's result is the same whichever thread computes it)
cdef double _THREADED_WORK = 4.0e6


def available():
    """Whether SciPy's BLAS entry points (gemm, symm, trsm) were found (loaded on first use)."""
    global _dgemm, _sgemm, _dsymm, _ssymm, _dtrsm, _strsm, _loaded, _found
    if not _loaded:
        _loaded = True
        try:
            from scipy.linalg import cython_blas
            capi = cython_blas.__pyx_capi__
            _dgemm = <gemm_d> blas_entry(capi, "dgemm")
            _sgemm = <gemm_s> blas_entry(capi, "sgemm")
            _dsymm = <symm_d> blas_entry(capi, "dsymm")
            _ssymm = <symm_s> blas_entry(capi, "ssymm")
            _dtrsm = <trsm_d> blas_entry(capi, "dtrsm")
            _strsm = <trsm_s> blas_entry(capi, "strsm")
        except (ImportError, AttributeError, ValueError):
            _dgemm = NULL
        _found = (_dgemm != NULL and _sgemm != NULL and _dsymm != NULL and _ssymm != NULL
                  and _dtrsm != NULL and _strsm != NULL)
    return _found


cdef inline Py_ssize_t _at(int up, int ld, int i, int k) noexcept nogil:
    """Offset of the logical entry (i, k): row-major storage (up) or column-major."""
    return <Py_ssize_t> i * ld + k if up else <Py_ssize_t> k * ld + i


cdef void _unblocked(int n, const floating *l, int ldl, floating *w, int ldw,
                     int up) noexcept nogil:
    """Murray's unblocked reverse loop on one small block (Sigma on the diagonal, see the
    module docstring): for j from last to first, with r = L[j, :j], d = L[j, j],
    c = L[j+1:, j], B = L[j+1:, :j] and W's same parts (rbar, dbar, cbar, Bbar):
    dbar = (dbar - c.cbar / d) / d, cbar /= d, rbar -= dbar r + B^T cbar, Bbar -= cbar r^T."""
    cdef int i, j, k
    cdef floating d, db, ci, t, rk, t0, t1, t2, t3
    cdef floating *cj
    cdef floating *wk
    cdef const floating *lk
    for j in range(n - 1, -1, -1):
        d = l[_at(up, ldl, j, j)]
        t = 0
        for i in range(j + 1, n):
            t = t + l[_at(up, ldl, i, j)] * w[_at(up, ldw, i, j)]
        db = (w[_at(up, ldw, j, j)] - t / d) / d
        w[_at(up, ldw, j, j)] = db
        for i in range(j + 1, n):
            w[_at(up, ldw, i, j)] = w[_at(up, ldw, i, j)] / d
        if j == 0:
            continue
        if up:
            # rows are contiguous: row j of W, then each row i below, updated along k < j
            for k in range(j):
                w[<Py_ssize_t> j * ldw + k] -= db * l[<Py_ssize_t> j * ldl + k]
            for i in range(j + 1, n):
                ci = w[<Py_ssize_t> i * ldw + j]
                for k in range(j):
                    w[<Py_ssize_t> j * ldw + k] -= ci * l[<Py_ssize_t> i * ldl + k]
                    w[<Py_ssize_t> i * ldw + k] -= ci * l[<Py_ssize_t> j * ldl + k]
        else:
            # columns are contiguous: per column k < j, an update (vectorized) and a dot
            # product (four partial sums: one running sum would wait on each addition)
            cj = w + <Py_ssize_t> j * ldw
            for k in range(j):
                lk = l + <Py_ssize_t> k * ldl
                wk = w + <Py_ssize_t> k * ldw
                rk = lk[j]
                for i in range(j + 1, n):
                    wk[i] -= cj[i] * rk
                t0 = t1 = t2 = t3 = 0
                i = j + 1
                while i + 4 <= n:
                    t0 = t0 + cj[i] * lk[i]
                    t1 = t1 + cj[i + 1] * lk[i + 1]
                    t2 = t2 + cj[i + 2] * lk[i + 2]
                    t3 = t3 + cj[i + 3] * lk[i + 3]
                    i += 4
                while i < n:
                    t0 = t0 + cj[i] * lk[i]
                    i += 1
                wk[j] -= db * rk + ((t0 + t1) + (t2 + t3))


cdef void _gemm_xty(int p, int q, int k, const floating *x, int ldx, const floating *y,
                    int ldy, floating *c, int ldc, int up) noexcept nogil:
    """C -= X^T Y for logical X (k, p), Y (k, q), C (p, q) (up: Fortran sees C^T -= Y^T X)."""
    cdef floating one = 1, mone = -1
    cdef char ta = b'T', tb = b'N'
    cdef int rows = p, cols = q, lda = ldx, ldb = ldy
    cdef floating *a = <floating *> x
    cdef floating *b = <floating *> y
    if up:
        ta, tb, rows, cols, lda, ldb = b'N', b'T', q, p, ldy, ldx
        a, b = <floating *> y, <floating *> x
    if floating is double:
        _dgemm(&ta, &tb, &rows, &cols, &k, &mone, a, &lda, b, &ldb, &one, c, &ldc)
    else:
        _sgemm(&ta, &tb, &rows, &cols, &k, &mone, a, &lda, b, &ldb, &one, c, &ldc)


cdef void _gemm_lower(int m, int k, const floating *x, int ldx, const floating *y, int ldy,
                      floating *c, int ldc, int up) noexcept nogil:
    """The lower triangle (with the diagonal) of C -= X^T Y, X and Y (k, m), C (m, m): halves
    split recursively down to _GEMM_LOWER_MIN columns, where one product does the square."""
    cdef int h
    if m <= _GEMM_LOWER_MIN:
        _gemm_xty(m, m, k, x, ldx, y, ldy, c, ldc, up)
        return
    h = (m // 2 + 4) // 8 * 8
    _gemm_lower(h, k, x, ldx, y, ldy, c, ldc, up)
    _gemm_xty(m - h, h, k, x + _at(up, ldx, 0, h), ldx, y, ldy, c + _at(up, ldc, h, 0), ldc, up)
    _gemm_lower(m - h, k, x + _at(up, ldx, 0, h), ldx, y + _at(up, ldy, 0, h), ldy,
                c + _at(up, ldc, h, h), ldc, up)


cdef void _adjoint(int n, const floating *l, int ldl, floating *w, int ldw,
                   int up) noexcept nogil:
    """The recursion of the module docstring on the n x n block at l / w (Sigma convention)."""
    cdef int n1, n2, rows, cols
    cdef floating one = 1, mone = -1
    cdef char side, uplo, ta, diag = b'N'
    cdef floating *w21
    cdef floating *l21
    if n <= _BASE:
        _unblocked(n, l, ldl, w, ldw, up)
        return
    n1 = n // 2
    if n1 > 8:
        n1 = (n1 + 4) // 8 * 8          # whole multiples of 8 columns: aligned panels
    n2 = n - n1
    l21 = <floating *> l + _at(up, ldl, n1, 0)
    w21 = w + _at(up, ldw, n1, 0)
    _adjoint(n2, l + _at(up, ldl, n1, n1), ldl, w + _at(up, ldw, n1, n1), ldw, up)
    # Fortran's view of W21 is (rows, cols): (n1, n2) when up (it sees W21^T), else (n2, n1)
    rows = n1 if up else n2
    cols = n2 if up else n1
    # W21 -= Sigma22 L21 (Sigma22: W22's lower triangle as a symmetric matrix; up: Fortran sees
    # W21^T -= L21^T Sigma22, Sigma22's lower being its upper there)
    side = b'R' if up else b'L'
    uplo = b'U' if up else b'L'
    if floating is double:
        _dsymm(&side, &uplo, &rows, &cols, &mone, w + _at(up, ldw, n1, n1), &ldw, l21, &ldl,
               &one, w21, &ldw)
    else:
        _ssymm(&side, &uplo, &rows, &cols, &mone, w + _at(up, ldw, n1, n1), &ldw, l21, &ldl,
               &one, w21, &ldw)
    # W21 <- W21 L11^-1 (up: W21^T <- L11^-T W21^T, L11's storage being the upper L11^T)
    ta = b'N'
    side = b'L' if up else b'R'
    uplo = b'U' if up else b'L'
    if floating is double:
        _dtrsm(&side, &uplo, &ta, &diag, &rows, &cols, &one, <floating *> l, &ldl, w21, &ldw)
    else:
        _strsm(&side, &uplo, &ta, &diag, &rows, &cols, &one, <floating *> l, &ldl, w21, &ldw)
    # W11 -= W21^T L21, its lower triangle (the adjoint reads no other entry of W11)
    _gemm_lower(n1, n2, w21, ldw, l21, ldl, w, ldw, up)
    _adjoint(n1, l, ldl, w, ldw, up)


cdef void _one(int n, const floating *l, int ldl, floating *w, int ldw, int up) noexcept nogil:
    """One matrix: the recursion, then Sigma's diagonal halved and the strict upper triangle
    zeroed."""
    cdef int r, c
    cdef floating *row
    _adjoint(n, l, ldl, w, ldw, up)
    for r in range(n):          # storage rows, each along its contiguous entries
        row = w + <Py_ssize_t> r * ldw
        row[r] *= <floating> 0.5
        if up:                  # logical row r: the entries right of the diagonal
            for c in range(r + 1, n):
                row[c] = 0
        else:                   # logical column r: the entries above the diagonal
            for c in range(r):
                row[c] = 0


cdef void _load(int n, const char *g, Py_ssize_t gr, Py_ssize_t gc, floating *w, int ldw,
                int up) noexcept nogil:
    """W's lower triangle = g's (g: a matrix of any strides, in bytes), in tiles of _TILE
    rows and columns along W's storage rows, so that a transposing copy stays in cache (a
    tile's strided side spans _TILE cache lines: few enough for the ways of a set when the
    stride is a power of two)."""
    cdef int i0 = 0, k0, i, k, ihi, khi
    while i0 < n:
        ihi = min(i0 + _TILE, n)
        k0 = 0
        while k0 <= i0:
            khi = min(k0 + _TILE, ihi)
            if up:          # storage row i: entries k of the tile, k <= i
                for i in range(i0, ihi):
                    for k in range(k0, min(khi, i + 1)):
                        w[<Py_ssize_t> i * ldw + k] = \
                            (<const floating *> (g + i * gr + k * gc))[0]
            else:           # storage row k: entries i of the tile, i >= k
                for k in range(k0, khi):
                    for i in range(max(i0, k), ihi):
                        w[<Py_ssize_t> k * ldw + i] = \
                            (<const floating *> (g + i * gr + k * gc))[0]
            k0 += _TILE
        i0 += _TILE


cdef struct Job:
    int dbl, up, n, ldl, ldw
    int copy_l                       # l's storage is the other orientation: loaded per matrix
    int failed                       # a span could not allocate its copy of l
    const char *l
    const char *g
    char *w
    Py_ssize_t l_step, w_step        # bytes from one matrix to the next
    Py_ssize_t l_row, l_col          # l's strides in bytes (read when copy_l)
    Py_ssize_t g_step, g_row, g_col  # g's strides in bytes


cdef void _span_typed(const Job *j, Py_ssize_t lo, Py_ssize_t hi, floating *scratch) noexcept nogil:
    cdef Py_ssize_t b
    cdef floating *w
    cdef const floating *l
    cdef int ldl = j.ldl
    for b in range(lo, hi):
        w = <floating *> (j.w + b * j.w_step)
        _load(j.n, j.g + b * j.g_step, j.g_row, j.g_col, w, j.ldw, j.up)
        if j.copy_l:
            _load(j.n, j.l + b * j.l_step, j.l_row, j.l_col, scratch, j.n, j.up)
            l = scratch
            ldl = j.n
        else:
            l = <const floating *> (j.l + b * j.l_step)
        _one(j.n, l, ldl, w, j.ldw, j.up)


cdef void _span(const void *ctx, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    cdef Job *j = <Job *> ctx
    cdef void *scratch = NULL
    if j.copy_l:
        scratch = malloc(<size_t> j.n * j.n * (8 if j.dbl else 4))
        if scratch == NULL:
            j.failed = 1
            return
    if j.dbl:
        _span_typed(j, lo, hi, <double *> scratch)
    else:
        _span_typed(j, lo, hi, <float *> scratch)
    free(scratch)


cdef bint _rows(cnp.ndarray s, Py_ssize_t n):
    """Whether the stack s (count, n, n) is row-major storage the BLAS reads: unit column
    stride, a row stride of at least n elements (fitting an int), whole elements apart."""
    cdef Py_ssize_t item = s.itemsize
    cdef Py_ssize_t rs = s.strides[1]
    return (s.strides[2] == item and rs % item == 0 and rs // item >= n and rs // item < 2 ** 31
            and s.strides[0] % item == 0)


cdef bint _transposed_layout(cnp.ndarray x):
    """Whether the stack x is the transposed view of C-ordered memory (and not C-ordered)."""
    return (not cnp.PyArray_IS_C_CONTIGUOUS(x)
            and cnp.PyArray_IS_C_CONTIGUOUS(cnp.PyArray_SwapAxes(x, x.ndim - 1, x.ndim - 2)))


def cholesky_adjoint(l, lbar, threads=None):
    """Abar (..., n, n), lower triangular, the cotangent of the lower triangle of A that the
    Cholesky factorization A = L L^T reads, for the lower factor ``l`` (..., n, n) and L's
    cotangent ``lbar`` (same shape and dtype: float32 or float64, any strides); only their
    lower triangles are read.  The result has lbar's layout: C-ordered matrices, or the
    transposed view of C-ordered memory when lbar is one (the cotangent of an upper factor
    U = L^T: the result's transpose, U's input's cotangent, is then C-contiguous).  l is read in
    place when its matrices have that layout, else through a copy of each (its lower triangle,
    in C).  ``threads``: pool threads for a large stack (default: the kernels' count); the
    values do not depend on it.  NaN in l or lbar gives NaN."""
    cdef Job job
    cdef Py_ssize_t n, count, t, nt
    cdef int typ
    cdef cnp.ndarray la, ga, ls, gs, ws, ws3
    if not isinstance(l, np.ndarray):
        raise TypeError(f"cholesky_adjoint: l must be a numpy.ndarray, got {type(l).__name__}")
    if not isinstance(lbar, np.ndarray):
        raise TypeError(
            f"cholesky_adjoint: lbar must be a numpy.ndarray, got {type(lbar).__name__}")
    la, ga = l, lbar
    typ = cnp.PyArray_TYPE(la)
    if (typ != cnp.NPY_FLOAT32 and typ != cnp.NPY_FLOAT64) or not cnp.PyArray_ISNOTSWAPPED(la):
        raise TypeError(f"cholesky_adjoint: l must be float32 or float64, got {la.dtype}")
    if cnp.PyArray_TYPE(ga) != typ or not cnp.PyArray_ISNOTSWAPPED(ga):
        raise TypeError(
            f"cholesky_adjoint: lbar must have l's dtype {la.dtype}, got {ga.dtype}")
    # (explicit indices: wraparound is off in this module)
    if la.ndim < 2 or la.shape[la.ndim - 1] != la.shape[la.ndim - 2]:
        raise ValueError(
            f"cholesky_adjoint: l must be a stack of square matrices (..., n, n), got shape "
            f"{l.shape}")
    if lbar.shape != l.shape:
        raise ValueError(
            f"cholesky_adjoint: lbar must have l's shape {l.shape}, got {lbar.shape}")
    n = la.shape[la.ndim - 1]
    if n >= 2 ** 31:
        raise ValueError(f"cholesky_adjoint: l's matrices are too large ({n} x {n})")
    if threads is None:
        nt = num_threads()
    else:
        nt = int(threads)
        if nt < 1:
            raise ValueError(f"cholesky_adjoint: threads must be at least 1, got {threads}")
    if not _found and not available():
        raise RuntimeError("cholesky_adjoint: SciPy's BLAS entry points were not found")
    # up: W is row-major storage of the logical matrices (C-ordered lbar); else of their
    # transposes (lbar the transposed view of C-ordered memory): the BLAS's flags follow
    tr = _transposed_layout(ga)
    ws = np.empty(l.shape, l.dtype)
    out = cnp.PyArray_SwapAxes(ws, ws.ndim - 1, ws.ndim - 2) if tr else ws
    if cnp.PyArray_SIZE(ws) == 0:
        return out
    if la.ndim == 2:
        ls = la[None]
        gs = ga[None]
        ws3 = ws[None]
    else:
        ls = la.reshape((-1, n, n))
        gs = ga.reshape((-1, n, n))
        ws3 = ws.reshape((-1, n, n))
    count = ls.shape[0]
    # l in place when its storage has W's orientation, else loaded per matrix (any strides)
    lstore = cnp.PyArray_SwapAxes(ls, 1, 2) if tr else ls
    job.copy_l = 0 if _rows(lstore, n) else 1
    if not job.copy_l:
        ls = lstore
    job.dbl = typ == cnp.NPY_FLOAT64
    job.up = 0 if tr else 1
    job.n = <int> n
    job.ldl = <int> (ls.strides[1] // ls.itemsize)
    job.ldw = <int> n
    job.failed = 0
    job.l = <const char *> cnp.PyArray_DATA(ls)
    job.w = <char *> cnp.PyArray_DATA(ws3)
    job.g = <const char *> cnp.PyArray_DATA(gs)
    job.l_step, job.l_row, job.l_col = ls.strides[0], ls.strides[1], ls.strides[2]
    job.w_step = ws3.strides[0]
    job.g_step, job.g_row, job.g_col = gs.strides[0], gs.strides[1], gs.strides[2]
    t = 1
    if count > 1 and <double> count * n * n * n >= _THREADED_WORK:
        t = min(nt, count)
    if t > 1:
        run_spans(_span, &job, count, 1, count, t)
    else:
        with nogil:
            _span(&job, 0, count)
    if job.failed:
        raise MemoryError(f"cholesky_adjoint: no memory for a copy of an {n} x {n} matrix")
    return out
