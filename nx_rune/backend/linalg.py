"""Linear algebra: matmul and matrix powers, the decompositions and solves (LAPACK through NumPy
and SciPy), the LU factorization and what reads it, the Euclidean norm, and the fused derivative
primitives that the autodiff rules use on concrete values; with the ndarray routines behind them
that nx_rune.frontend.linalg and nx_rune.scipy call directly (``*_values``, ``power_program``,
``tri_read_weights``, ``lu_sign_logabs``).

Every primitive is batched over the leading axes (operands arrive with equal batch shapes; a
right-hand side b is always (..., n, k)).  Failures raise NumPy's LinAlgError (a ValueError):
not positive definite, singular matrix.  Decompositions with several results return them packed,
each flattened, along one last axis (in this order): slogdet (sign, logabsdet), eigh (w, V),
svd (U, S, Vh), qr (Q, R), lstsq (x, s); real parts (eigenvalues, singular values, logabsdet)
take the operand's dtype.

Parameters: matmul(a, b)  matrix_power_parts(a, n)  matrix_power(a, parts, n)
cholesky(a)  triangular_solve(a, b, lower, trans, unit_diagonal)  solve(a, b)  inv(a)
eigh(a, lower)  eigvalsh(a, lower)  svd(a, full_matrices)  svdvals(a)  qr(a, mode)  pinv(a, rtol)
lstsq(a, b, rcond)  cho_solve(c, b, lower)
lu_factor(a)  lu_inverse(a, lu)  slogdet(a, lu)  lu_det(a, lu, part)  norm2(x, axes, keepdims)
cholesky_grad(lmat, g)  det_grad(a, lu, s, adjugate)  norm2_grad(x, ans, g, axes, keepdims)
triangular_solve_grad(ct_b, x, lower, trans, unit_diagonal)  cho_solve_grad(c, x, ct_b, lower)

May import: NumPy, SciPy (on first use), ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune._kernels import gemm as _gemm
from nx_rune._kernels import lapack_loops
from nx_rune._kernels.chol_adjoint import cholesky_adjoint as _cholesky_adjoint
from nx_rune.backend._core import _impl, _out, _wrap

_ROUTINES = {}


def _scipy_routine(family, name, dtype):
    """SciPy's ``family`` ("blas" or "lapack") routine ``name`` for ``dtype`` (cached)."""
    key = (family, name, dtype)
    fn = _ROUTINES.get(key)
    if fn is None:
        if family == "blas":
            from scipy.linalg.blas import get_blas_funcs as get
        else:
            from scipy.linalg.lapack import get_lapack_funcs as get
        fn = _ROUTINES[key] = get(name, dtype=dtype)
    return fn


def _lapack(name, dtype):
    """SciPy's LAPACK routine ``name`` for ``dtype`` (cached)."""
    return _scipy_routine("lapack", name, dtype)


def _blas(name, dtype):
    """SciPy's BLAS routine ``name`` for ``dtype`` (cached)."""
    return _scipy_routine("blas", name, dtype)


def _packed(parts, batch):
    """``parts`` (ndarrays with the leading axes ``batch``) flattened and joined along a last
    axis, in the dtype of the first part."""
    dt = parts[0].dtype
    nb = len(batch)
    flat = [np.asarray(p, dtype=dt).reshape(batch + (int(np.prod(np.shape(p)[nb:])),))
            for p in parts]
    return _out(np.concatenate(flat, axis=-1))


# -- products and matrix powers -------------------------------------------------------------------
# matrix_power_parts(a, n)  matrix_power(a, parts, n)   (n >= 2)
# Binary powering as NumPy's matrix_power does it (n = 2: a a; n = 3: (a a) a; else squares
# z <- z z and, for each set bit of n, result <- result z), as a program of products over the
# values V = [a, products...]: ``power_program(n)`` = (steps (i, j): V.append(V[i] @ V[j]),
# index of a^n in V).  matrix_power_parts stacks the products (..., len(steps), m, m): the
# residual from which matrix_power reads a^n (a copy) and its derivative the intermediate
# products, where the composition of matmuls records one tape entry per product.

@_impl("matmul")
def _matmul(a, b):
    """NumPy's matmul; 2-D float32 and float64 products by the kernels' packed AVX-512 products
    where the CPU has it and the product is large enough (_kernels/gemm.pyx: OpenBLAS runs its
    AVX2 kernels on CPUs it does not know, such as AMD's Zen 5, and its threads wait for each
    other where the pool's claim spans); equal to NumPy's to rounding."""
    return _out(matmul_values(a._np(), b._np()))


def matmul_values(x, y):
    """``np.matmul(x, y)`` for ndarrays, 2-D float32/float64 products by the packed kernels
    where ``_matmul`` takes them (on the pool's threads, which claim spans: a core taken by
    another process costs its share, where OpenBLAS's threads wait for each other)."""
    if x.ndim == 2 and y.ndim == 2 and x.dtype == y.dtype:
        if x.dtype == np.float32:
            r = _gemm.matmul_f32(x, y)
        elif x.dtype == np.float64:
            r = _gemm.matmul_f64(x, y)
        else:
            r = None
        if r is not None:
            return r
    return np.matmul(x, y)


_POWER_PROGRAMS = {}


def power_program(n):
    """(steps, result index) of binary powering for the exponent n >= 2 (see above)."""
    prog = _POWER_PROGRAMS.get(n)
    if prog is not None:
        return prog
    if n == 2:
        prog = (((0, 0),), 1)
    elif n == 3:
        prog = (((0, 0), (1, 0)), 2)
    else:
        steps, z, result, k = [], None, None, n
        while k > 0:
            if z is None:
                z = 0
            else:
                steps.append((z, z))
                z = len(steps)
            k, bit = divmod(k, 2)
            if bit:
                if result is None:
                    result = z
                else:
                    steps.append((result, z))
                    result = len(steps)
        prog = (tuple(steps), result)
    _POWER_PROGRAMS[n] = prog
    return prog


@_impl("matrix_power_parts")
def _matrix_power_parts(a, *, n):
    an = a._np()
    steps, _ = power_program(n)
    m = an.shape[-1]
    out = np.empty(an.shape[:-2] + (len(steps), m, m), an.dtype)
    vals = [an]
    for k, (i, j) in enumerate(steps):
        vals.append(np.matmul(vals[i], vals[j], out=out[..., k, :, :]))
    return _out(out)


@_impl("matrix_power")
def _matrix_power(a, parts, *, n):
    _, res = power_program(n)
    return _out(np.array(parts._np()[..., res - 1, :, :]))


# -- decompositions and solves --------------------------------------------------------------------
# LAPACK through NumPy (SciPy for the triangular and Cholesky solves) on zero-copy views.

@_impl("cholesky")
def _cholesky(a, *, jaxlib_call=False):
    """NumPy's cholesky for small matrices; from n = 32 on, LAPACK potrf per matrix on a's
    C-ordered memory read as the Fortran matrix a^T, whose upper triangle is a's lower one: the
    factor U = L^T comes back in Fortran order, which is L in C order (no copy of a; about 3x
    faster than NumPy's cholesky at n = 256).  With ``jaxlib_call`` a finite float64 matrix
    goes through the call jaxlib makes instead, SciPy's dpotrf's lower variant on a copy in
    Fortran order: JAX's bits, where the upper variant rounds otherwise from n = 32, but about
    2x slower from n = 256 (multivariate_normal asks for it)."""
    an = a._np()
    if jaxlib_call and an.dtype == np.float64 and np.isfinite(an).all():
        return _out(_potrf_lower_lapack(an, True))
    return _out(cho_factor_values(an, True))


@_impl("triangular_solve")
def _triangular_solve(a, b, *, lower, trans, unit_diagonal, check_singular=True):
    """BLAS trsm per matrix, in place on a C-ordered copy of b: the C-ordered x is the
    Fortran-ordered x^T, which solves x^T op(a)^T = b^T from the right, with a's C-ordered
    memory read as the Fortran matrix a^T (no copy of a either).  A zero on the diagonal
    raises LinAlgError as SciPy's solve_triangular (trsm itself would divide by it); with
    ``check_singular=False`` trsm divides by it (+-inf and NaN, as SciPy's lu_solve)."""
    return _out(triangular_solve_values(a._np(), b._np(), lower, trans, unit_diagonal,
                                        check_singular))


def triangular_solve_values(an, bn, lower, trans, unit_diagonal, check_singular=True):
    """The ndarray computation of ``triangular_solve`` (an (..., n, n), bn (..., n, k) of one
    dtype and batch shape); also the direct path of nx.scipy's triangular solves."""
    out = np.array(bn, order="C", copy=True)
    n = an.shape[-1]
    if out.size == 0 or n == 0:
        return out
    if check_singular and not unit_diagonal:
        zero = np.diagonal(an, axis1=-2, axis2=-1) == 0
        if zero.any():
            first = int(np.argmax(zero.reshape(-1, n).any(0)))
            raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal "
                                        f"{first}")
    trsm = _blas("trsm", out.dtype)
    for idx in np.ndindex(out.shape[:-2]):
        xt = out[idx].T
        r = trsm(1.0, an[idx].T, xt, side=1, lower=not lower, trans_a=trans,
                 diag=bool(unit_diagonal), overwrite_b=1)
        if not np.may_share_memory(r, xt):
            xt[...] = r
    return out


@_impl("solve")
def _solve(a, b):
    return _out(np.linalg.solve(a._np(), b._np()))


@_impl("inv")
def _inv(a):
    return _out(np.linalg.inv(a._np()))


def eigh_values(an, lower):
    """(w, v) of each symmetric matrix of ``an`` (..., n, n): NumPy's eigh, but finite float32
    through SciPy's ssyevd with jaxlib's job and work sizes (JAX's bits; NumPy's build rounds
    otherwise).  Also the direct path of nx.linalg.eigh."""
    if an.dtype != np.float32 or an.size == 0 or not np.isfinite(an).all():
        return np.linalg.eigh(an, UPLO="L" if lower else "U")
    n = an.shape[-1]
    stack = np.ascontiguousarray(an).reshape((-1, n, n))
    w = np.empty(stack.shape[:2], np.float32)
    v = np.empty(stack.shape, np.float32)
    if lapack_loops.syevd_f32(stack, w, v, lower):
        raise np.linalg.LinAlgError("Eigenvalues did not converge")
    return w.reshape(an.shape[:-1]), v.reshape(an.shape)


@_impl("eigh")
def _eigh(a, *, lower):
    an = a._np()
    w, v = eigh_values(an, lower)
    return _packed([w.astype(v.dtype), v], an.shape[:-2])


@_impl("eigvalsh")
def _eigvalsh(a, *, lower):
    return _out(np.linalg.eigvalsh(a._np(), UPLO="L" if lower else "U"))


def svd_values(an, full_matrices):
    """(u, s, vh) of each matrix of ``an`` (..., m, n): NumPy's svd, but finite float32 and
    float64 through SciPy's sgesdd / dgesdd with jaxlib's job and work sizes (JAX's bits;
    NumPy's build rounds otherwise).  Also the direct path of nx.linalg.svd."""
    real = an.dtype == np.float32 or an.dtype == np.float64
    if not real or an.size == 0 or not np.isfinite(an).all():
        return np.linalg.svd(an, full_matrices=full_matrices)
    m, n = an.shape[-2:]
    k = min(m, n)
    uc, vr = (m, n) if full_matrices else (k, k)
    stack = np.ascontiguousarray(an).reshape((-1, m, n))
    nb = stack.shape[0]
    u = np.empty((nb, m, uc), an.dtype)
    s = np.empty((nb, k), an.dtype)
    vh = np.empty((nb, vr, n), an.dtype)
    gesdd = lapack_loops.gesdd_f32 if an.dtype == np.float32 else lapack_loops.gesdd_f64
    if gesdd(stack, u, s, vh):
        raise np.linalg.LinAlgError("SVD did not converge")
    batch = an.shape[:-2]
    return u.reshape(batch + (m, uc)), s.reshape(batch + (k,)), vh.reshape(batch + (vr, n))


@_impl("svd")
def _svd(a, *, full_matrices):
    an = a._np()
    u, s, vh = svd_values(an, full_matrices)
    return _packed([u, s, vh], an.shape[:-2])


@_impl("svdvals")
def _svdvals(a):
    return _out(np.linalg.svd(a._np(), compute_uv=False))


def qr_values(an, mode):
    """(Q, R) of each matrix of ``an`` (..., m, n), ``mode`` "reduced" or "complete": NumPy's
    qr, but float32 through SciPy's LAPACK (sgeqrf + sorgqr per matrix with the optimal work
    size, as scipy.linalg.qr calls them): JAX's bits (jaxlib calls SciPy's build, which NumPy's
    rounds otherwise), and at n = 256 several times faster than NumPy's.  Also the direct path
    of nx.linalg.qr."""
    if an.dtype != np.float32 or an.size == 0:
        return np.linalg.qr(an, mode=mode)
    m, n = an.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    batch = an.shape[:-2]
    stack = np.ascontiguousarray(an).reshape((-1, m, n))
    q = np.empty((stack.shape[0], m, k), np.float32)
    r = np.empty((stack.shape[0], k, n), np.float32)
    # one C loop over the stack (SciPy's sgeqrf + sorgqr with the optimal work sizes: the
    # blocked algorithms' rounding, as scipy.linalg.qr)
    info = lapack_loops.qr_f32(stack, q, r)
    if info:
        raise np.linalg.LinAlgError(f"qr: LAPACK failed (info {info})")
    q, r = q.reshape(batch + (m, k)), r.reshape(batch + (k, n))
    return q, r


@_impl("qr")
def _qr(a, *, mode):
    an = a._np()
    q, r = qr_values(an, mode)
    return _packed([q, r], an.shape[:-2])


@_impl("pinv")
def _pinv(a, *, rtol):
    return _out(np.linalg.pinv(a._np(), rcond=rtol))


@_impl("lstsq")
def _lstsq(a, b, *, rcond):
    x, _, _, s = np.linalg.lstsq(a._np(), b._np(), rcond=rcond)
    return _packed([x, s], ())


@_impl("cho_solve")
def _cho_solve(c, b, *, lower):
    return _out(cho_solve_values(c._np(), b._np(), lower))


def cho_solve_values(carr, barr, lower):
    """x solving (c c^T) x = b (``lower``) or (c^T c) x = b for real Cholesky factors carr
    (..., n, n) and barr (..., n, k) of one dtype and batch shape: LAPACK potrs per matrix (both
    triangular solves in one call, as SciPy's cho_solve), reading only c's triangle; c's
    C-ordered memory is the Fortran c^T, the factor of the other triangle.  A zero on the
    diagonal raises LinAlgError, as the two triangular solves do (the direct path of
    nx.scipy.linalg.cho_solve)."""
    n = carr.shape[-1]
    out = np.empty(barr.shape, barr.dtype)
    if out.size == 0 or n == 0:
        out[...] = barr
        return out
    zero = np.diagonal(carr, axis1=-2, axis2=-1) == 0
    if zero.any():
        first = int(np.argmax(zero.reshape(-1, n).any(0)))
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {first}")
    potrs = _lapack("potrs", carr.dtype)
    for idx in np.ndindex(carr.shape[:-2]):
        x, _ = potrs(carr[idx].T, barr[idx], lower=0 if lower else 1)
        out[idx] = x
    return out


def _potrf_lower_lapack(arr, lower):
    """float32 or float64 Cholesky factors as JAX computes them: SciPy's spotrf or dpotrf,
    lower variant, per matrix (jaxlib calls those routines of SciPy's build; NumPy's build, and
    the upper variant on the transpose, round otherwise): L from arr's lower triangle, or for
    ``lower`` False U = L'^T with L' the factor of arr^T (from arr's upper triangle)."""
    if arr.size == 0:
        return np.zeros(arr.shape, arr.dtype)
    n = arr.shape[-1]
    stack = np.ascontiguousarray(arr if lower else np.swapaxes(arr, -1, -2)).reshape((-1, n, n))
    out = np.empty(stack.shape, arr.dtype)
    potrf = lapack_loops.potrf_lower_f32 if arr.dtype == np.float32 else \
        lapack_loops.potrf_lower_f64
    if potrf(stack, out) >= 0:
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    out = out.reshape(arr.shape)
    return out if lower else np.swapaxes(out, -1, -2)


def cho_factor_values(arr, lower):
    """The Cholesky factor of each real symmetric positive-definite matrix of arr (..., n, n):
    lower (arr = L L^T, from arr's lower triangle) or upper (arr = U^T U, from its upper one),
    the other triangle zero; the ``cholesky`` primitive's routines (NumPy below n = 32, else
    LAPACK potrf).  LinAlgError when not positive definite (the direct path of
    nx.scipy.linalg.cho_factor)."""
    n = arr.shape[-1]
    # float32: JAX's factor, except that NaN and inf spread as in NumPy (the blocked lower
    # variant carries them into a few more entries)
    if arr.dtype == np.float32 and np.isfinite(arr).all():
        return _potrf_lower_lapack(arr, lower)
    if n < 32:
        if lower:
            return np.linalg.cholesky(arr)
        return np.swapaxes(np.linalg.cholesky(np.swapaxes(arr, -1, -2)), -1, -2)
    # potrf's upper variant always (OpenBLAS's lower one is about 2x slower at n = 256): for L
    # on arr^T (arr's C-ordered memory as Fortran, its lower triangle as the upper one), whose
    # factor U' = L^T comes back Fortran-ordered, i.e. L C-ordered; for U on arr itself (a copy
    # into Fortran order), whose factor U is returned Fortran-ordered (a batch: as the
    # transposed view of C-ordered U^T, so that every copy is a plain one)
    potrf = _lapack("potrf", arr.dtype)
    out = None if arr.ndim == 2 else np.empty(arr.shape, arr.dtype)
    for idx in np.ndindex(arr.shape[:-2]):
        c, info = potrf(arr[idx].T if lower else arr[idx], lower=0, clean=1)
        if info:
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        if out is None:
            return c.T if lower else c
        out[idx] = c.T
    return out if lower else np.swapaxes(out, -1, -2)


# -- the LU factorization and what reads it -------------------------------------------------------
# lu_factor packs, per matrix, LAPACK getrf's result for a (m, n) in column-major order (the
# m*n entries of the combined unit-lower L and upper U, column after column) followed by the
# min(m, n) 0-based pivot rows as values of a's dtype.  For square a, slogdet and lu_det read
# the determinant from it and lu_inverse the inverse (getri), so that slogdet's derivative
# costs one getri instead of a second factorization.  NumPy's slogdet and det factor the same
# column-major copy of a.  lu_det reads part "det" (sign * exp(log|det|), as NumPy's det),
# "logabsdet" (real dtype) or "sign" of each matrix.

@_impl("lu_factor")
def _lu_factor(a):
    """Each (m, n) matrix's getrf: packed (..., m * n + min(m, n)), the combined factors
    column-major, then the 0-based pivots (as values of a's dtype)."""
    an = a._np()
    m, n = an.shape[-2:]
    out = np.empty(an.shape[:-2] + (m * n + min(m, n),), an.dtype)
    if m == 0 or n == 0:
        return _out(out)
    getrf = _lapack("getrf", an.dtype)
    for idx in np.ndindex(an.shape[:-2]):
        row = out[idx]
        lu = row[:m * n].reshape(n, m).T      # column-major storage inside the packed row
        lu[...] = an[idx]
        _, piv, _ = getrf(lu, overwrite_a=1)  # in place (a zero pivot leaves U singular)
        row[m * n:] = piv
    return _out(out)


def _lu_parts(packed, n):
    """(column-major LU views (..., n, n) as NumPy sees their transposes, 0-based pivots)."""
    lu_t = packed[..., :n * n].reshape(packed.shape[:-1] + (n, n))
    return lu_t, packed[..., n * n:].real.astype(np.int32)


@_impl("lu_inverse")
def _lu_inverse(a, lu):
    """inv(a) from its packed factorization: getri per matrix, in place in the result's
    memory, which is column-major (the result is a transposed view; no copy)."""
    out_t = lu_inverse_t_values(lu._np(), a.shape[-1])
    return _wrap(np.swapaxes(out_t, -1, -2))


_GETRI_LWORK = {}     # (n, dtype) -> getri's work size


def lu_inverse_t_values(packed, n):
    """inv(a)^T, C-ordered (..., n, n), from a's packed factorization (getri per matrix, in
    place in the result's memory); LinAlgError for a singular matrix."""
    lu_t, piv = _lu_parts(packed, n)
    out_t = np.array(lu_t, order="C", copy=True)   # row-major inv(a)^T = column-major inv(a)
    if n:
        getri = _lapack("getri", out_t.dtype)
        lwork = _GETRI_LWORK.get((n, out_t.dtype))
        if lwork is None:
            lwork = int(_lapack("getri_lwork", out_t.dtype)(n)[0].real)
            _GETRI_LWORK[(n, out_t.dtype)] = lwork
        for idx in np.ndindex(out_t.shape[:-2]):
            w = out_t[idx].T
            r, info = getri(w, piv[idx], lwork=lwork, overwrite_lu=1)
            if info:
                raise np.linalg.LinAlgError("Singular matrix")
            if not np.may_share_memory(r, w):
                w[...] = r
    return out_t


@_impl("slogdet")
def _slogdet(a, lu):
    """From a's packed LU factorization (``lu_factor``): the sign is the
    product of U's diagonal signs and the pivots' parity, log|det| the sum of log|U_ii| (as
    NumPy's slogdet, which factors the same column-major copy of a)."""
    packed = lu._np()
    return _packed(list(lu_sign_logabs(packed, a.shape[-1])), packed.shape[:-1])


def lu_sign_logabs(packed, n):
    """(sign in the packed factorization's dtype, log|det| in its real dtype) of each matrix
    from its ``lu_factor`` result (..., n * n + n)."""
    diag = packed[..., :n * n:n + 1]
    swaps = np.count_nonzero(packed[..., n * n:].real != np.arange(n), axis=-1)
    mag = np.abs(diag)
    unit = diag / np.where(mag == 0, 1, mag)          # sign(d), d / |d| for complex d
    sign = np.prod(unit, axis=-1) * np.where(swaps % 2, -1, 1)
    with np.errstate(divide="ignore"):      # a zero pivot: log|det| = -inf, as NumPy's slogdet
        logabs = np.sum(np.log(mag), axis=-1)
    return np.asarray(sign, packed.dtype), logabs


@_impl("lu_det")
def _lu_det(a, lu, *, part):
    sign, logabs = lu_sign_logabs(lu._np(), a.shape[-1])
    if part == "sign":
        return _out(sign)
    if part == "logabsdet":
        return _out(logabs)
    return _out(sign * np.exp(logabs))


# -- the Euclidean norm ---------------------------------------------------------------------------

def norm2_values(arr, axes, keepdims):
    """sqrt(sum(arr ** 2)) over the sorted ``axes`` of a real float ndarray: one BLAS dot
    product when every axis is reduced, one per matrix (a batched matmul) when the reduced
    axes are the trailing ones, else the squares summed."""
    nd = arr.ndim
    k = len(axes)
    if k == nd:
        flat = arr.reshape(-1)
        out = np.sqrt(np.dot(flat, flat))
        return np.reshape(out, (1,) * nd) if keepdims else out
    if axes == tuple(range(nd - k, nd)):
        lead = arr.shape[:nd - k]
        rows = arr.reshape(lead + (1, -1))
        out = np.sqrt(np.matmul(rows, np.swapaxes(rows, -1, -2)))
        return out.reshape(lead + (1,) * k if keepdims else lead)
    return np.sqrt(np.add.reduce(arr * arr, axis=axes, keepdims=keepdims))


@_impl("norm2")
def _norm2(x, *, axes, keepdims):
    return _out(norm2_values(x._np(), axes, keepdims))


# -- fused derivatives (values only) --------------------------------------------------------------
# Each computes, in one NumPy/LAPACK pass, what a derivative rule would otherwise compose from
# several primitives.  The autodiff rules use them on concrete values only (nothing
# differentiates their results); traced values take the symbolic rules, written with primitives,
# whose values these equal (see nx_rune.autodiff.rules):
#   cholesky_grad: a's cotangent (lower triangular: the cotangent of the lower triangle that
#     cholesky reads) for L = cholesky(a) and L's cotangent g, by reverse-mode differentiation
#     of the Cholesky factorization (Murray (2016), "Differentiation of the Cholesky
#     decomposition"), about twice the forward's flops, where the symbolic rule on the whole
#     matrix costs a matmul and two full triangular solves (~9x the forward's flops); the kernel
#     nx_rune._kernels.chol_adjoint runs it per matrix in C (the recursive factorization
#     reversed, level-3 BLAS calls on L's memory in either layout),
#   det_grad = s * inv(a)^T, or s * adj(a)^T with ``adjugate`` (getri on the saved
#     factorization; s has a's batch shape; the SVD's cofactor for a singular matrix),
#   norm2_grad = x * (g / ans) spread over the reduced ``axes`` (ans = 1 where it is 0),
#   triangular_solve_grad = -ct_b x^T (trans 0) or -x ct_b^T (trans 1) restricted to the part
#     of a that the solve reads (its triangle, strict with unit_diagonal; the rest times 0),
#   cho_solve_grad: the cotangent of c (its triangle ``lower`` names, the factor's) of x =
#     cho_solve(c, b) given x and b's cotangent ct_b: with S = ct_b x^T + x ct_b^T (symmetric),
#     -tril(S c) for lower c (a = c c^T), -triu(c S) for upper c (a = c^T c), computed as the
#     rank-2k product [ct_b | x] [x^T c ; ct_b^T c] (BLAS: ~4 n^2 k flops where S c costs
#     2 n^3); only c's triangle is read.

def cholesky_vjp_values(lmat, g):
    """a's cotangent (..., n, n), lower triangular, for L = cholesky(a) (lmat, float32 or
    float64) and L's cotangent g (its shape; cast to lmat's dtype); only their lower triangles
    are read.  The result has g's layout: C-ordered matrices, or the transposed view of
    C-ordered memory when g is one (the cotangent of an upper factor: the transpose of the
    result, that factor's input's cotangent, is then C-contiguous)."""
    dt = getattr(lmat, "dtype", None)
    if dt is None or dt.char not in "fd":
        raise TypeError("cholesky_vjp_values: lmat must be a float32 or float64 ndarray, got "
                        f"{dt if dt is not None else type(lmat).__name__}")
    if not isinstance(g, np.ndarray) or g.dtype != dt:
        g = np.asarray(g, dtype=dt)
    return _cholesky_adjoint(lmat, g)


def _transposed_layout(x):
    """Whether the stack x is the transposed view of C-ordered memory (and not C-ordered)."""
    return (x.ndim >= 2 and not x.flags.c_contiguous
            and np.swapaxes(x, -1, -2).flags.c_contiguous)


@_impl("cholesky_grad")
def _cholesky_grad(lmat, g):
    """cholesky_vjp_values (which reads the lower triangles of lmat and g only); a result in
    the transposed layout (see there) is wrapped as it is."""
    out = cholesky_vjp_values(lmat._np(), g._np())
    return _wrap(out) if _transposed_layout(out) else _out(out)


@_impl("det_grad")
def _det_grad(a, lu, s, *, adjugate=False):
    """s * inv(a)^T, or with ``adjugate`` s * adj(a)^T (det's derivative): getri on the saved
    factorization, times det(a) for the adjugate.  A matrix with an exactly zero pivot (no
    inverse) takes its cofactor matrix from the SVD (``cofactor_values``): s * adj(a)^T, and
    for the inverse s * adj(a)^T / +0 in IEEE arithmetic (log|det|'s derivative there: +-inf
    where the cofactor is not 0, NaN where it is, as JAX's)."""
    packed, n = lu._np(), a.shape[-1]
    sn = s._np()[..., None, None]
    singular = (packed[..., :n * n:n + 1] == 0).any(axis=-1) if n else np.zeros((), bool)
    if not singular.any():
        out = lu_inverse_t_values(packed, n)
        if adjugate:
            sign, logabs = lu_sign_logabs(packed, n)
            out *= (sign * np.exp(logabs))[..., None, None]
        out *= sn
        return _out(out)
    an = a._np()
    out = np.empty(an.shape, an.dtype)
    for idx in np.ndindex(an.shape[:-2]):
        if singular[idx]:
            c = cofactor_values(an[idx])
            if not adjugate:
                with np.errstate(divide="ignore", invalid="ignore"):
                    c = c / 0.0
        else:
            c = lu_inverse_t_values(packed[idx], n)
            if adjugate:
                sign, logabs = lu_sign_logabs(packed[idx], n)
                c = c * (sign * np.exp(logabs))
        out[idx] = c
    with np.errstate(invalid="ignore"):
        out *= sn
    return _out(out)


def cofactor_values(a):
    """adj(a)^T of one square matrix a at any rank: det(U) det(V) U diag(c) V^T from
    a = U diag(s) V^T (conj(U) and conj(V^T) for complex a), c_i the product of the s_j,
    j != i; singular values at rounding level (n eps s_max and below) count as 0, so that a
    rank <= n - 2 matrix gets exactly 0."""
    n = a.shape[-1]
    u, sv, vt = np.linalg.svd(a)
    sv = np.where(sv <= n * np.finfo(a.dtype).eps * (sv.max() if n else 0.0), 0.0, sv)
    others = np.where(np.eye(n, dtype=bool), 1.0, sv[None, :])
    c = np.prod(others, axis=-1)
    if np.iscomplexobj(a):      # adj(a)^T = det(u) det(vt) conj(u) diag(c) conj(vt)
        u, vt = u.conj(), vt.conj()
    return (np.linalg.det(u.conj()) * np.linalg.det(vt.conj())) * (u * c) @ vt


@_impl("norm2_grad")
def _norm2_grad(x, ans, g, *, axes, keepdims):
    an, xn = ans._np(), x._np()
    if an.ndim == 0 and xn.dtype.char == "d":
        # one norm of float64 values: the same IEEE division on Python floats, one product
        d = float(an)
        return _out(xn * (float(g._np()) / (d if d != 0 else 1.0)))
    scale = g._np() / np.where(an == 0, 1, an)
    if not keepdims:
        scale = np.expand_dims(scale, axes)
    return _out(xn * scale)


_TRI_READ = {}


def tri_read_weights(n, lower, unit_diagonal, dtype):
    """(n, n) weights: 1 on the part of a matrix that a triangular solve reads, 0 elsewhere."""
    key = (n, lower, unit_diagonal, np.dtype(dtype))
    w = _TRI_READ.get(key)
    if w is None:
        k = (-1 if lower else 1) if unit_diagonal else 0
        w = np.tri(n, n, k, dtype=dtype) if lower else 1 - np.tri(n, n, k - 1, dtype=dtype)
        w = _TRI_READ[key] = w
    return w


@_impl("triangular_solve_grad")
def _triangular_solve_grad(ct_b, x, *, lower, trans, unit_diagonal):
    u, v = ct_b._np(), x._np()
    if trans:
        u, v = v, u
    out = np.matmul(np.negative(u), np.swapaxes(v, -1, -2))
    out *= tri_read_weights(out.shape[-1], lower, unit_diagonal, out.dtype)
    return _out(out)


@_impl("cho_solve_grad")
def _cho_solve_grad(c, x, ct_b, *, lower):
    cn, xn, gn = c._np(), x._np(), ct_b._np()
    n, k = xn.shape[-2], xn.shape[-1]
    tr = lambda m: np.swapaxes(m, -1, -2)                   # noqa: E731
    # lower: S c = [ct_b | x] R^T, R = c^T [x | ct_b];  upper: c S = R [x | ct_b]^T,
    # R = c [ct_b | x]; R by BLAS trmm per matrix (c's triangle only, half a product's flops),
    # in place in rt = R^T (C-ordered, i.e. the Fortran R)
    first, second = (xn, gn) if lower else (gn, xn)
    rt = np.concatenate([tr(first), tr(second)], axis=-2)     # (..., 2k, n)
    if n and k:
        trmm = _blas("trmm", rt.dtype)
        for idx in np.ndindex(rt.shape[:-2]):
            # cn[idx].T is the Fortran c (lower c: op = transpose for c^T; upper: none);
            # the C-ordered memory of c is the Fortran c^T, triangle flipped
            r = rt[idx].T
            res = trmm(1.0, cn[idx].T, r, side=0, lower=0 if lower else 1,
                       trans_a=0 if lower else 1, overwrite_b=1)
            if not np.may_share_memory(res, r):
                r[...] = res
    if lower:
        out = np.matmul(np.negative(np.concatenate([gn, xn], axis=-1)), rt)
    else:
        out = np.matmul(np.negative(tr(rt)), np.concatenate([tr(xn), tr(gn)], axis=-2))
    out *= tri_read_weights(n, lower, False, out.dtype)
    return _out(out)


def complex_of(dtype):
    """The complex dtype of ``dtype``'s precision (complex64 for float32 and narrower)."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex128) if dt.itemsize >= 8 else np.dtype(np.complex64)


@_impl("eig")
def _eig(a):
    """eig(a): eigenvalues and right eigenvectors (LAPACK geev through NumPy), packed along a
    last axis (..., n + n * n), complex of a's precision."""
    an = a._np()
    dt = complex_of(an.dtype)
    n = an.shape[-1]
    batch = an.shape[:-2]
    if an.size == 0:
        return _out(np.zeros(batch + (n + n * n,), dt))
    w, v = np.linalg.eig(an.astype(np.result_type(an.dtype, np.float32), copy=False))
    return _out(np.concatenate([w.astype(dt).reshape(batch + (n,)),
                                v.astype(dt).reshape(batch + (n * n,))], axis=-1))
