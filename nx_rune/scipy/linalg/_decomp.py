"""SciPy's decompositions and solves with SciPy's keywords: cholesky, det, inv, solve, lu,
lu_factor, lu_solve, qr, svd, eigh, eigh_tridiagonal, eig, eigvals, hessenberg, and the special
matrices block_diag, toeplitz and hilbert; built on ``nx_rune.frontend.linalg`` (differentiable,
batched over leading axes, jittable)."""
from __future__ import annotations

import builtins

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as nx
from nx_rune import primitives as P
from nx_rune.autodiff import custom_jvp
from nx_rune.frontend import linalg as la
from nx_rune.frontend.linalg._common import _concrete, _direct, _matrix, mT
from nx_rune.frontend.linalg.decompositions import (
    _TRANS,
    _check_finite,
    _read_symmetric,
    _rhs,
)
from nx_rune.frontend.linalg.eig import eig as _la_eig
from nx_rune.primitives import bind
from nx_rune.scipy.linalg._schur import _not_differentiable, _split_pair
from nx_rune.tensor import Tensor, wrap_result
from nx_rune.typing import Array, ArrayLike

__all__ = ["cholesky", "det", "inv", "solve", "lu", "lu_factor", "lu_solve", "qr", "svd",
           "eigh", "eigh_tridiagonal", "eig", "eigvals", "hessenberg", "block_diag",
           "toeplitz", "hilbert"]


def _finite(check_finite, **arrays):
    if check_finite:
        for name, x in arrays.items():
            _check_finite(x, name)


def cholesky(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    """The Cholesky factor of each symmetric (Hermitian) positive-definite matrix of a
    (..., n, n): upper-triangular c with a = c^H c (SciPy's default, read from a's upper
    triangle), or lower-triangular with a = c c^H when ``lower`` (read from the lower one); the
    other triangle is zero.  LinAlgError when not positive definite.  The derivative is
    symmetric, as ``cho_factor``'s (that of the matrix the triangle stands for)."""
    return la.cho_factor(a, lower=lower, check_finite=check_finite)[0]


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant of each square matrix of a (..., n, n) (see ``nx.linalg.det``)."""
    x = _matrix(a, "a", square=True)
    _finite(check_finite, a=x)
    return la.det(x)


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse of each square matrix of a (..., n, n); LinAlgError when singular."""
    x = _matrix(a, "a", square=True)
    _finite(check_finite, a=x)
    return la.inv(x)


_ASSUME = {"gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "her",
           "hermitian": "her", "pos": "pos", "positive definite": "pos", "pos def": "pos",
           "diagonal": "diagonal", "tridiagonal": "tridiagonal", "banded": "gen",
           "upper triangular": "upper", "lower triangular": "lower"}


def solve(a: ArrayLike, b: ArrayLike, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: str | None = None,
          transposed: bool = False) -> Array:
    """x solving a x = b (a^T x = b with ``transposed``) for square a (..., n, n).

    b: a vector (n,), else (..., n, k) matrices whose batch broadcasts with a's (SciPy's
    rule, as ``solve_triangular``).  ``assume_a``: 'gen' (default), 'sym' / 'her' (read the
    triangle ``lower`` names), 'pos' (Cholesky of that triangle), 'diagonal', 'upper
    triangular', 'lower triangular', 'tridiagonal' (the band is read); 'banded' solves the
    general system.
    LinAlgError for a singular (or, with 'pos', not positive-definite) a."""
    kind = _ASSUME.get("gen" if assume_a is None else assume_a)
    if kind is None:
        raise ValueError(f"assume_a: must be one of {sorted(_ASSUME)}, got {assume_a!r}")
    am = _matrix(a, "a", square=True)
    bm = nx.asarray(b)
    if not dtypes.is_inexact(bm.dtype) or bm.dtype != am.dtype:
        dt = dtypes.inexact_result_type(am.dtype, bm.dtype)
        am, bm = nx.astype(am, dt), nx.astype(bm, dt)
    _finite(check_finite, a=am, b=bm)
    if transposed:
        am = mT(am)
        lower = not lower
    if kind == "pos":
        return la.cho_solve(la.cho_factor(am, lower=lower, check_finite=False), bm,
                            check_finite=False)
    if kind in ("upper", "lower"):
        return la.solve_triangular(am, bm, lower=(kind == "lower"), check_finite=False)
    a2, b2, vec = _rhs(am, bm, "a", "b")
    if kind == "diagonal":
        x = nx.divide(b2, nx.expand_dims(nx.diagonal(a2, axis1=-2, axis2=-1), -1))
    else:
        if kind == "sym":
            tri = nx.tril(a2) if lower else nx.triu(a2)
            a2 = nx.add(tri, mT(nx.tril(a2, -1) if lower else nx.triu(a2, 1)))
        elif kind == "her":
            a2 = _read_symmetric(a2, bool(lower))
        elif kind == "tridiagonal":      # only the band is read (SciPy's gtsv)
            n = a2.shape[-1]
            band = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 1
            a2 = nx.multiply(a2, nx.asarray(band.astype(a2.dtype)))
        x = bind(P.solve_p, a2, b2)
    return nx.reshape(x, x.shape[:-1]) if vec else x


# -- LU ------------------------------------------------------------------------------------
# lu_factor_p (LAPACK getrf, a residual without a derivative) gives the factors' values and
# the pivots; the factors' derivative is a custom rule: with P^T A = L U and
# M = L^-1 P^T dA U^-1, dL = L strictly_lower(M) and dU = upper(M) U (linear in dA, so the
# reverse mode transposes it).

def _perm_from_swaps(piv, n):
    """The row permutation perm (P^T a = a[perm]) of n rows from LAPACK's swaps (row i with
    piv[i], in order; min(m, n) of them): a NumPy loop on known pivots, else one select per
    swap."""
    v = _concrete(piv)
    if v is not None:
        iv = v.real.astype(np.int64)
        perm = np.broadcast_to(np.arange(n), iv.shape[:-1] + (n,)).copy()
        for idx in np.ndindex(*iv.shape[:-1]):
            p = perm[idx]
            for i in range(iv.shape[-1]):
                j = iv[idx + (i,)]
                p[i], p[j] = p[j], p[i]
        return nx.asarray(perm.astype(np.int32))
    ipiv = nx.astype(nx.real(piv), np.int32)
    perm = nx.broadcast_to(nx.arange(n, dtype=np.int32), ipiv.shape[:-1] + (n,))
    ar = nx.arange(n, dtype=np.int32)
    for i in range(ipiv.shape[-1]):
        j = ipiv[..., i:i + 1]
        pi = perm[..., i:i + 1]
        pj = nx.take_along_axis(perm, j, axis=-1)
        perm = nx.where(ar == i, pj, nx.where(ar == j, pi, perm))
    return perm


def _lu_raw(a):
    """(lu (..., m, n) combined factors, min(m, n) pivots as values) of a, no derivative."""
    m, n = a.shape[-2:]
    packed = bind(P.lu_factor_p, a)
    lu_t = nx.reshape(packed[..., :m * n], a.shape[:-2] + (n, m))
    return mT(lu_t), packed[..., m * n:]


def _const(x, dtype):
    return nx.asarray(np.asarray(x, dtype))


@custom_jvp
def _lu_factors(a):
    """(p, l, u) with a = p l u for a (..., m, n), k = min(m, n): p (m, m) the permutation
    matrix (a's dtype), l (m, k) unit lower, u (k, n) upper."""
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    lu_, piv = _lu_raw(a)
    perm = _perm_from_swaps(piv, m)
    eye = la.eye_like(m, a.dtype)
    l_ = nx.tril(lu_[..., :, :k], -1)
    l_ = nx.add(l_, eye if k == m else _const(np.eye(m, k), a.dtype))
    u_ = nx.triu(lu_[..., :k, :])
    # P^T a = a[perm], so P = I[perm]^T
    p_t = nx.take(eye, perm, axis=0) if perm.ndim == 1 else nx.take_along_axis(
        nx.broadcast_to(eye, a.shape[:-2] + (m, m)), nx.expand_dims(perm, -1), axis=-2)
    return mT(p_t), l_, u_


@_lu_factors.defjvp
def _lu_factors_jvp(primals, tangents):
    # JAX's rule, rectangular too: L and U completed to square unit-lower (m, m) and upper
    # (n, n) factors by identity blocks, M = L^-1 P^T dA U^-1 (m, n), dL = (L tril(M, -1))'s
    # first k columns and dU = (triu(M) U)'s first k rows
    (a,), (da,) = primals, tangents
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    p, l_, u_ = _lu_factors(a)
    l_sq, u_sq = l_, u_
    if m > k:
        l_sq = nx.concatenate([l_, nx.broadcast_to(_const(np.eye(m)[:, k:], a.dtype),
                                                   l_.shape[:-2] + (m, m - k))], axis=-1)
    if n > k:
        u_sq = nx.concatenate([u_, nx.broadcast_to(_const(np.eye(n)[k:], a.dtype),
                                                   u_.shape[:-2] + (n - k, n))], axis=-2)
    pda = nx.matmul(mT(p), da)
    y = la.solve_triangular(l_sq, pda, lower=True, unit_diagonal=True, check_finite=False)
    mm = mT(la.solve_triangular(u_sq, mT(y), trans=1, lower=False, check_finite=False))
    dl = nx.matmul(l_sq, nx.tril(mm, -1))
    du = nx.matmul(nx.triu(mm), u_sq)
    if n > k:       # dL (m, n), dU (m, n): the columns, rows beyond k are zeros
        dl = dl[..., :, :k]
    if m > k:
        du = du[..., :k, :]
    return (p, l_, u_), (nx.zeros_like(p), dl, du)


def _lu_checked(a, check_finite):
    x = _matrix(a, "a")
    _finite(check_finite, a=x)
    return x


def lu(a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True, p_indices: bool = False) -> tuple[Array, ...]:
    """LU decomposition with partial pivoting of each square matrix of a (..., n, n):
    (p, l, u) with a = p @ l @ u (p a permutation matrix, l unit lower-triangular, u upper);
    ``permute_l``: (p @ l, u); ``p_indices``: p as the row indices perm with a = l[perm] @ u
    (SciPy's).  Rectangular a (..., m, n) as SciPy's: p (m, m), l (m, k), u (k, n),
    k = min(m, n).  Differentiable (the pivots are constants of the derivative; JAX's rule,
    rectangular too)."""
    arr = _direct(a)
    if arr is not None and arr.ndim == 2 and arr.size and (
            not check_finite or np.isfinite(arr).all()):
        # no transformation active: SciPy's call on the values (the same getrf)
        from scipy.linalg import lu as sp_lu
        return tuple(wrap_result(r) for r in sp_lu(arr, permute_l=bool(permute_l),
                                                   check_finite=False,
                                                   p_indices=bool(p_indices)))
    x = _lu_checked(a, check_finite)
    p, l_, u_ = _lu_factors(x)
    if permute_l:
        return nx.matmul(p, l_), u_
    if p_indices:
        return nx.astype(nx.argmax(p, axis=-1), np.int32), l_, u_
    return p, l_, u_


def lu_factor(a: ArrayLike, overwrite_a: bool = False,
              check_finite: bool = True) -> tuple[Array, Array]:
    """(lu, piv) for ``lu_solve``: lu holds l's strictly lower part (unit diagonal implied) and
    u, piv the 0-based LAPACK row swaps (row i was swapped with row piv[i]), int32, as
    SciPy's; a (..., m, n) rectangular gives lu (..., m, n) and min(m, n) pivots, as SciPy's.
    Differentiable in lu."""
    arr = _direct(a)
    if arr is not None and arr.ndim == 2 and arr.size and (
            not check_finite or np.isfinite(arr).all()):
        from scipy.linalg import lu_factor as sp_lu_factor
        lu_, piv = sp_lu_factor(arr, check_finite=False)
        # lu wrapped Fortran-ordered as getrf leaves it (no copy; lu_solve hands it back to
        # getrs without one either)
        return Tensor._wrap(lu_), wrap_result(piv.astype(np.int32, copy=False))
    x = _lu_checked(a, check_finite)
    m, n = x.shape[-2:]
    k = builtins.min(m, n)
    p, l_, u_ = _lu_factors(x)
    _, piv = _lu_raw(x)
    del p
    low = nx.tril(l_, -1)
    if n > k:       # l (m, m) and u (m, n): l's strict triangle padded with zero columns
        low = nx.concatenate([low, nx.zeros(low.shape[:-1] + (n - k,), x.dtype)], axis=-1)
    if m > k:       # l (m, n) and u (n, n): u padded with zero rows
        u_ = nx.concatenate([u_, nx.zeros(u_.shape[:-2] + (m - k, n), x.dtype)], axis=-2)
    return nx.add(low, u_), nx.astype(nx.real(piv), np.int32) if k else piv


def _u_solve(lm, b, t):
    """op(U)^-1 b with U lm's upper triangle, as LAPACK getrs: a zero on U's diagonal
    (a singular a) divides by zero (+-inf and NaN, SciPy's values), no LinAlgError."""
    if t == 2 and not dtypes.is_complex(lm.dtype):
        t = 1
    return bind(P.triangular_solve_p, lm, b, lower=False, trans=t, unit_diagonal=False,
                check_singular=False)


def lu_solve(lu_and_piv: tuple[ArrayLike, ArrayLike], b: ArrayLike, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """x solving a x = b (``trans`` 0), a^T x = b (1) or a^H x = b (2) from
    ``lu_factor(a)``; b as in ``solve`` (a vector, else (..., n, k) matrices, batches
    broadcast).  A singular a (a zero on U's diagonal) gives SciPy's +-inf and NaN, eagerly
    and under jit and vmap, instead of raising."""
    lu_, piv = _split_pair(lu_and_piv, "lu_and_piv", "(lu, piv) as lu_factor returns")
    if trans not in _TRANS:
        raise ValueError(f"trans: must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    t = _TRANS[trans]
    la_, ba = _direct(lu_), _direct(b)
    pa = np.asarray(piv) if isinstance(piv, np.ndarray) or type(piv) is Tensor else None
    if (la_ is not None and ba is not None and pa is not None and la_.ndim == 2
            and la_.shape[0] == la_.shape[1] and ba.ndim in (1, 2) and ba.shape[0] == len(la_)
            and pa.shape == (len(la_),) and pa.dtype.kind in "iu" and la_.size
            and (not check_finite or (np.isfinite(la_).all() and np.isfinite(ba).all()))):
        from scipy.linalg import lu_solve as sp_lu_solve
        # getrs's x wrapped as it comes (Fortran-ordered for matrices): a C-ordered copy
        # cost a quarter of the call at n = 256
        return Tensor._wrap(sp_lu_solve((la_, pa), ba, trans=t, check_finite=False))
    lm = _matrix(lu_, "lu", square=True)
    piv = nx.asarray(piv)
    n = lm.shape[-1]
    if piv.shape[-1:] != (n,):
        raise ValueError(f"piv: expected {n} pivots (shape (..., {n})), got shape {piv.shape}")
    bm = nx.asarray(b)
    dt = dtypes.result_type(lm.dtype, bm.dtype)
    lm, bm = nx.astype(lm, dt), nx.astype(bm, dt)
    _finite(check_finite, lu=lm, b=bm)
    lm, b2, vec = _rhs(lm, bm, "lu", "b")
    perm = _perm_from_swaps(piv, n)
    perm = nx.broadcast_to(perm, lm.shape[:-2] + (n,)) if perm.ndim > 1 or lm.ndim > 2 else perm
    if t == 0:
        pb = (nx.take(b2, perm, axis=-2) if perm.ndim == 1
              else nx.take_along_axis(b2, nx.expand_dims(perm, -1), axis=-2))
        y = la.solve_triangular(lm, pb, lower=True, unit_diagonal=True, check_finite=False)
        x = _u_solve(lm, y, 0)
    else:
        y = _u_solve(lm, b2, t)
        w = la.solve_triangular(lm, y, trans=t, lower=True, unit_diagonal=True,
                                check_finite=False)
        inv_perm = nx.argsort(perm, axis=-1)
        x = (nx.take(w, inv_perm, axis=-2) if inv_perm.ndim == 1
             else nx.take_along_axis(w, nx.expand_dims(inv_perm, -1), axis=-2))
    return nx.reshape(x, x.shape[:-1]) if vec else x


# -- QR, SVD, eigenvalues ------------------------------------------------------------------

def qr(a: ArrayLike, overwrite_a: bool = False, lwork: int | None = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Array, ...]:
    """QR decomposition of each (m, n) matrix of a: ``mode='full'`` (Q (m, m), R (m, n)),
    ``'economic'`` (Q (m, k), R (k, n), k = min(m, n)), ``'r'`` ((R,), R (m, n)).
    Differentiable as ``nx.linalg.qr``.  ``pivoting=True`` (known values only, not
    differentiable: the column order depends on the values) appends P, int32, with
    a[..., :, P] = Q R."""
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"mode: must be 'full', 'economic' or 'r', got {mode!r}")
    x = _matrix(a, "a")
    if pivoting:
        return _qr_pivoted(x, mode, check_finite)
    _finite(check_finite, a=x)
    q, r = la.qr(x, mode="reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


def _qr_pivoted(x, mode, check_finite):
    """Column-pivoted QR (LAPACK geqp3, SciPy's call per matrix) of known values: (Q, R, P)
    with a[:, P] = Q R, P int32; the pivots depend on the values, so there is no derivative and
    no traced form (NotImplementedError)."""
    v = _concrete(x)
    if v is None or type(x) is not Tensor:
        raise NotImplementedError("qr: pivoting=True needs known values (not under jit, vmap "
                                  "or a derivative): its column order depends on them")
    _finite(check_finite, a=x)
    from scipy.linalg import qr as sp_qr
    parts = [sp_qr(v[i], mode=mode, pivoting=True, check_finite=False)
             for i in np.ndindex(*v.shape[:-2])]
    out = [np.stack([p[k] for p in parts]).reshape(v.shape[:-2] + parts[0][k].shape)
           for k in range(len(parts[0]))]
    out[-1] = out[-1].astype(np.int32)
    return tuple(wrap_result(o) for o in out)


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Array | tuple[Array, Array, Array]:
    """(U, s, Vh) with a = U diag(s) Vh for each matrix of a, or s alone with
    ``compute_uv=False`` (see ``nx.linalg.svd`` for shapes and derivatives)."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"lapack_driver: must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    x = _matrix(a, "a")
    _finite(check_finite, a=x)
    if not compute_uv:
        return la.svdvals(x)
    return tuple(la.svd(x, full_matrices=full_matrices))


def eigh(a: ArrayLike, b: ArrayLike | None = None, lower: bool = True,
         eigvals_only: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
         type: int = 1, check_finite: bool = True,
         subset_by_index: tuple[int, int] | None = None,
         subset_by_value: tuple[float, float] | None = None,
         driver: str | None = None) -> Array | tuple[Array, Array]:
    """Eigenvalues (ascending) and eigenvectors of each symmetric (Hermitian) matrix of a,
    read from the triangle ``lower`` names (SciPy's values), with a symmetric derivative (as
    ``cho_factor``'s).  With b (symmetric positive definite, ``type=1``): the generalized
    problem a v = w b v, through b's Cholesky factor, eigenvectors b-orthonormal.
    ``eigvals_only`` returns w alone.  ``subset_by_index`` (lo, hi) keeps w[lo:hi + 1]."""
    x = _matrix(a, "a", square=True)
    _finite(check_finite, a=x)
    s = _read_symmetric(x, bool(lower))
    if b is not None:
        if type != 1:
            raise NotImplementedError(f"eigh: type={type} (only type=1, a v = w b v)")
        bm = _matrix(b, "b", square=True)
        if bm.shape[-1] != x.shape[-1]:
            raise ValueError(f"b: shape {bm.shape} does not match a's {x.shape}")
        _finite(check_finite, b=bm)
        c = la.cho_factor(bm, lower=True, check_finite=False)[0]
        y = la.solve_triangular(c, s, lower=True, check_finite=False)
        s = la.solve_triangular(c, mT(nx.conj(y)) if dtypes.is_complex(y.dtype) else mT(y),
                                lower=True, check_finite=False)
    w, v = la.eigh(s, "L" if lower else "U")
    if b is not None:
        v = la.solve_triangular(c, v, trans=2, lower=True, check_finite=False)
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]  # type: ignore[index]
    if subset_by_value is not None or driver is not None:
        raise NotImplementedError("eigh: subset_by_value and driver are not supported")
    return w if eigvals_only else (w, v)


def eigh_tridiagonal(d: ArrayLike, e: ArrayLike, eigvals_only: bool = False,
                     select: str = "a", select_range: tuple[int, int] | None = None,
                     check_finite: bool = True, tol: float = 0.0,
                     lapack_driver: str = "auto") -> Array | tuple[Array, Array]:
    """Eigenvalues (ascending) and eigenvectors of the symmetric tridiagonal matrices with
    diagonal d (..., n) and off-diagonal e (..., n - 1), through the dense matrix (``eigh``;
    differentiable in d and e).  ``select``: 'a' (all) or 'i' (indices ``select_range``
    (lo, hi), inclusive)."""
    dd, ee = nx.asarray(d), nx.asarray(e)
    if dd.ndim < 1:
        raise ValueError(f"d: expected at least 1 dimension, got shape {dd.shape}")
    n = dd.shape[-1]
    if ee.shape[-1:] != (builtins.max(n - 1, 0),):
        raise ValueError(f"e: expected length {n - 1} (d has {n}), got shape {ee.shape}")
    if select not in ("a", "i"):
        raise NotImplementedError(f"select: 'a' or 'i' (by index) only, got {select!r}")
    dt = dtypes.inexact_result_type(dd.dtype, ee.dtype)
    dd, ee = nx.astype(dd, dt), nx.astype(ee, dt)
    _finite(check_finite, d=dd, e=ee)
    mat = nx.multiply(nx.expand_dims(dd, -1), la.eye_like(n, dt))
    if n > 1:
        off = nx.pad(ee, [(0, 0)] * (ee.ndim - 1) + [(0, 1)])        # (..., n)
        sup = nx.multiply(nx.expand_dims(off, -1), nx.asarray(np.eye(n, k=1, dtype=dt)))
        mat = nx.add(nx.add(mat, sup), mT(nx.conj(sup)) if dtypes.is_complex(dt) else mT(sup))
    w, v = la.eigh(mat)
    if select == "i":
        if select_range is None:
            raise ValueError("select_range: (lo, hi) indices are needed with select='i'")
        lo, hi = (int(i) for i in select_range)
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]  # type: ignore[index]
    return w if eigvals_only else (w, v)


def eig(a: ArrayLike, b: ArrayLike | None = None, left: bool = False, right: bool = True,
        overwrite_a: bool = False, overwrite_b: bool = False, check_finite: bool = True,
        homogeneous_eigvals: bool = False) -> Array | tuple[Array, ...]:
    """Eigenvalues w and right eigenvectors (columns, unit length) of each square matrix of a,
    complex always (JAX's convention; SciPy returns real eigenvectors when all are real):
    w, (w, vr), (w, vl) or (w, vl, vr) per ``left``/``right``; vl's columns satisfy
    vl^H a = w vl^H, unit length.  Differentiable (see ``nx.linalg.eig``).  The generalized
    problem (b) raises NotImplementedError."""
    if b is not None:
        raise NotImplementedError("eig: the generalized problem (b) is not supported")
    if homogeneous_eigvals:
        raise NotImplementedError("eig: homogeneous_eigvals=True is not supported")
    x = _matrix(a, "a", square=True)
    _finite(check_finite, a=x)
    w, vr = _la_eig(x)
    out = [w]
    if left:
        vl = mT(nx.conj(la.inv(vr)))
        vl = nx.divide(vl, nx.sqrt(nx.sum(nx.real(nx.multiply(vl, nx.conj(vl))), axis=-2,
                                          keepdims=True)))
        out.append(vl)
    if right:
        out.append(vr)
    return out[0] if len(out) == 1 else tuple(out)


def eigvals(a: ArrayLike, b: ArrayLike | None = None, overwrite_a: bool = False,
            check_finite: bool = True, homogeneous_eigvals: bool = False) -> Array:
    """The eigenvalues (complex) of each square matrix of a (see ``eig``)."""
    w = eig(a, b, right=False, check_finite=check_finite,
            homogeneous_eigvals=homogeneous_eigvals)
    assert not isinstance(w, tuple)
    return w


def hessenberg(a: ArrayLike, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Array | tuple[Array, Array]:
    """The upper Hessenberg form h of each square matrix of a, a = q h q^H (q unitary): h, or
    (h, q) with ``calc_q``.  Not differentiable (NotImplementedError under grad/jvp)."""
    arr = _direct(a)
    if arr is not None and arr.ndim == 2 and arr.shape[0] == arr.shape[1] and arr.size and (
            np.isfinite(arr).all()):
        # no transformation active: SciPy's call (Q only when asked for)
        from scipy.linalg import hessenberg as sp_hessenberg
        r = sp_hessenberg(arr, calc_q=bool(calc_q), check_finite=False)
        return (wrap_result(r[0]), wrap_result(r[1])) if calc_q else wrap_result(r)
    x = _matrix(a, "a", square=True)
    _finite(check_finite, a=x)
    n = x.shape[-1]
    packed = _not_differentiable("hessenberg", lambda m: bind(P.hessenberg_p, m), x)
    h = nx.reshape(packed[..., :n * n], x.shape)
    q = nx.reshape(packed[..., n * n:], x.shape)
    return (h, q) if calc_q else h


# -- special matrices ----------------------------------------------------------------------

def block_diag(*arrs: ArrayLike) -> Array:
    """The block-diagonal matrix of the given arrays (0-d and 1-d ones as 1 x 1 and 1 x n
    blocks), zeros elsewhere, in their promoted dtype."""
    if not arrs:
        return nx.zeros((1, 0))
    mats = []
    for i, x in enumerate(arrs):
        x = nx.asarray(x)
        if x.ndim > 2:
            raise ValueError(f"arrs[{i}]: expected at most 2 dimensions, got shape {x.shape}")
        mats.append(nx.reshape(x, (1, 1)) if x.ndim == 0 else
                    nx.reshape(x, (1, x.shape[0])) if x.ndim == 1 else x)
    dt = dtypes.result_type(*[m.dtype for m in mats])
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        rows.append(nx.concatenate([nx.zeros((r, left), dt), nx.astype(m, dt),
                                    nx.zeros((r, cols - left - c), dt)], axis=1))
        left += c
    return nx.concatenate(rows, axis=0)


def toeplitz(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Toeplitz matrix with first column c and first row r (r[0] ignored; default
    conj(c)), t[i, j] = c[i - j] for i >= j, r[j - i] otherwise; leading axes of c and r are
    batches (SciPy 1.17's rule)."""
    cc = nx.asarray(c)
    if cc.ndim == 0:
        cc = nx.reshape(cc, (1,))
    rr = nx.conj(cc) if r is None else nx.asarray(r)
    if rr.ndim == 0:
        rr = nx.reshape(rr, (1,))
    dt = dtypes.result_type(cc.dtype, rr.dtype)
    cc, rr = nx.astype(cc, dt), nx.astype(rr, dt)
    batch = np.broadcast_shapes(cc.shape[:-1], rr.shape[:-1])
    cc = nx.broadcast_to(cc, batch + cc.shape[-1:])
    rr = nx.broadcast_to(rr, batch + rr.shape[-1:])
    m, n = cc.shape[-1], rr.shape[-1]
    # length m + n - 1
    vals = nx.concatenate([nx.flip(cc, axis=-1), rr[..., 1:]], axis=-1)  # type: ignore[index]
    i, j = np.indices((m, n))
    idx = (m - 1 - i + j).ravel()
    return nx.reshape(nx.take(vals, nx.asarray(idx), axis=-1), batch + (m, n))


def hilbert(n: int) -> Array:
    """The n x n Hilbert matrix, h[i, j] = 1 / (i + j + 1) (float64 as SciPy's under x64, else
    the default float dtype)."""
    try:
        n = int(n)
    except TypeError:
        raise TypeError(f"n: expected an int, got {n!r}") from None
    if n < 0:
        raise ValueError(f"n: must be >= 0, got {n}")
    i = np.arange(n)
    return nx.asarray(1.0 / (i[:, None] + i[None, :] + 1.0), dtype=nx.ones(0).dtype) \
        if n else nx.zeros((0, 0))


