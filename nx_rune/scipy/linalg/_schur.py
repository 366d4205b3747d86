"""SciPy's matrix functions and Schur forms: schur, rsf2csf, sqrtm, logm, funm, polar,
expm_frechet (expm is ``nx_rune.frontend.linalg``'s).

The Schur and Hessenberg reductions are the ``schur`` and ``hessenberg`` primitives (SciPy per
matrix; jittable, batched over leading axes).  Their factors are not unique (any unitary
diagonal rescaling of Z, and the order of the eigenvalues, give another decomposition), so
they have no derivative: differentiating them raises NotImplementedError.  sqrtm and logm are
the ``matfunc`` primitive, whose derivative is exact (the Frechet derivative, see
``nx_rune.autodiff.rules.linalg_schur``).  funm is the Schur-Parlett recurrence written with
front-end ops (SciPy's funm on the direct path), differentiable (Daleckii-Krein in the
eigenbasis).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as nx
from nx_rune import primitives as P
from nx_rune.autodiff import custom_jvp, custom_vjp, jvp
from nx_rune.frontend import linalg as la
from nx_rune.frontend.linalg._common import _concrete, _direct, _matrix, mT
from nx_rune.frontend.linalg.decompositions import _check_finite
from nx_rune.frontend.linalg.eig import eig as la_eig
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor
from nx_rune.typing import Array, ArrayLike

__all__ = ["schur", "rsf2csf", "sqrtm", "logm", "funm", "polar", "expm_frechet"]


def _split_pair(pair, name, what):
    try:
        x, y = pair
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a pair {what}") from None
    return x, y


def _not_differentiable(name, fn, x):
    """fn(x) (a residual primitive), refusing differentiation with a clear error: the
    factors of ``name`` are not unique, so they have no derivative."""
    @custom_jvp
    def f(x):
        return fn(x)

    @f.defjvp
    def _jvp(primals, tangents):
        raise NotImplementedError(
            f"{name}: not differentiable (its factors are not unique); differentiate a "
            f"function of the matrix instead (sqrtm, logm, funm, expm, eig, eigh)")
    return f(x)


def _finite(check_finite, x, name):
    if check_finite:
        _check_finite(x, name)


def schur(a: ArrayLike, output: str = "real", lwork: int | None = None,
          overwrite_a: bool = False, sort: str | Callable | None = None,
          check_finite: bool = True) -> tuple[Array, Array]:
    """Schur decomposition a = z t z^H of each square matrix of a (..., n, n):
    ``output='real'`` for a real a the real Schur form (t quasi-upper-triangular, 2 x 2 blocks
    for complex-conjugate pairs, z orthogonal, a's dtype); ``'complex'`` (or a complex a)
    t upper-triangular and z unitary, complex.  Returns (t, z).  The factors are not unique,
    so not differentiable (NotImplementedError under grad/jvp); ``sort`` raises
    NotImplementedError."""
    if output not in ("real", "complex", "r", "c"):
        raise ValueError(f"output: must be 'real' or 'complex', got {output!r}")
    if sort is not None:
        raise NotImplementedError("schur: sort is not supported")
    x = _matrix(a, "a", square=True)
    _finite(check_finite, x, "a")
    out = "complex" if output in ("complex", "c") or dtypes.is_complex(x.dtype) else "real"
    n = x.shape[-1]
    packed = _not_differentiable("schur", lambda m: bind(P.schur_p, m, output=out), x)
    t = nx.reshape(packed[..., :n * n], x.shape)
    z = nx.reshape(packed[..., n * n:], x.shape)
    return t, z


def rsf2csf(T: ArrayLike, Z: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:
    """The complex Schur form (t, z) from the real one (T, Z) of ``schur`` (SciPy's Givens
    rotations).  Needs known values: under jit or vmap (or a derivative) it raises
    NotImplementedError; ``schur(a, output='complex')`` computes the complex form directly."""
    t, z = _matrix(T, "T", square=True), _matrix(Z, "Z", square=True)
    if t.shape != z.shape:
        raise ValueError(f"T, Z: shapes {t.shape} and {z.shape} differ")
    tv, zv = _concrete(t), _concrete(z)
    if tv is None or zv is None or type(t) is not Tensor or type(z) is not Tensor:
        raise NotImplementedError("rsf2csf: needs concrete values (not under jit, vmap or a "
                                  "derivative); use schur(a, output='complex') instead")
    from scipy.linalg import rsf2csf as sp_rsf2csf
    if tv.ndim == 2:
        tc, zc = sp_rsf2csf(tv, zv, check_finite=check_finite)
    else:
        pairs = [sp_rsf2csf(tv[i], zv[i], check_finite=check_finite)
                 for i in np.ndindex(*tv.shape[:-2])]
        tc = np.stack([p[0] for p in pairs]).reshape(tv.shape)
        zc = np.stack([p[1] for p in pairs]).reshape(tv.shape)
    return nx.asarray(tc), nx.asarray(zc)


def sqrtm(A: ArrayLike, disp: bool = True, blocksize: int = 64) -> Array:
    """The principal square root X (X @ X = A, eigenvalues in the right half-plane) of each
    square matrix of A (..., n, n), SciPy's (blocked Schur method).  A's dtype: for a real A
    whose principal root is not real (a negative real eigenvalue) the result is NaN, as
    ``nx.sqrt`` of a negative float (pass a complex A for the complex root; JAX's sqrtm always
    returns complex).  ``disp`` and ``blocksize`` are accepted and ignored (deprecated in
    SciPy 1.16).

    Derivative: exact, dX solving the Sylvester equation X dX + dX X = dA (JAX does not
    differentiate sqrtm); any order; jittable and batched."""
    x = _matrix(A, "A", square=True)
    if x.shape[-1] == 0:
        return x
    return bind(P.matfunc_p, x, fn="sqrtm")


def logm(A: ArrayLike, disp: bool = True) -> Array:
    """The principal logarithm of each square matrix of A (..., n, n), SciPy's (inverse
    scaling and squaring).  A's dtype: NaN for a real A whose principal logarithm is not real
    (a negative real eigenvalue; pass a complex A).  Derivative: exact (the Frechet derivative,
    the upper-right block of logm([[A, E], [0, A]])), any order."""
    x = _matrix(A, "A", square=True)
    if x.shape[-1] == 0:
        return x
    return bind(P.matfunc_p, x, fn="logm")


def _superdiag(v, n, k):
    """The (..., n, n) matrix with v (..., n - k) on its k-th superdiagonal, zeros elsewhere."""
    vp = nx.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, k)])
    return nx.multiply(nx.expand_dims(vp, -1), nx.asarray(np.eye(n, k=k, dtype=v.dtype)))


def _parlett(t, fdiag):
    """F = f(t) for upper-triangular t (..., n, n) with fdiag = f(diag(t)): Parlett's
    recurrence one superdiagonal at a time, F_ij = (T_ij (F_jj - F_ii) + sum_{i<k<j}
    (T_ik F_kj - F_ik T_kj)) / (T_jj - T_ii); the sum, with the terms k = i and k = j, is the
    (i, j) entry of T F - F T over the entries known so far (later diagonals still zero)."""
    n = t.shape[-1]
    f = nx.multiply(nx.expand_dims(fdiag, -1), la.eye_like(n, t.dtype))
    d = nx.diagonal(t, axis1=-2, axis2=-1)
    for k in range(1, n):
        # entry (i, i + k) of T F - F T: row i of T with column i + k of F, and so on
        tf = nx.sum(nx.multiply(t[..., :n - k, :], mT(f[..., :, k:])), axis=-1)
        ft = nx.sum(nx.multiply(f[..., :n - k, :], mT(t[..., :, k:])), axis=-1)
        gap = nx.subtract(d[..., k:], d[..., :n - k])
        f = nx.add(f, _superdiag(nx.divide(nx.subtract(tf, ft), gap), n, k))
    return f


def _funm(a, func):
    arr = _direct(a)
    if arr is not None:
        # no transformation active: SciPy's funm on the values (real Schur, rsf2csf and its
        # compiled recurrence), func applied to the eigenvalues as a Tensor
        from scipy.linalg import funm as sp_funm

        def f_np(x):
            return np.asarray(func(nx.asarray(x)))
        if not np.isfinite(arr).all():
            return nx.add(a, np.nan)
        with np.errstate(all="ignore"):
            out = np.stack([sp_funm(arr[i], f_np, disp=False)[0]
                            for i in np.ndindex(*arr.shape[:-2])]).reshape(arr.shape)
        if not np.iscomplexobj(arr):
            out = out.real
        return nx.asarray(out.astype(arr.dtype, copy=False))
    t, z = schur(a, output="complex", check_finite=False)
    fd = nx.asarray(func(nx.diagonal(t, axis1=-2, axis2=-1)))
    if fd.dtype != t.dtype:
        fd = nx.astype(fd, t.dtype)
    f = nx.matmul(nx.matmul(z, _parlett(t, fd)), mT(nx.conj(z)))
    return f if dtypes.is_complex(a.dtype) else nx.real(f)


def funm(A: ArrayLike, func: Callable[[Array], ArrayLike],
         disp: bool = True) -> Array | tuple[Array, Array]:
    """f(A) for each square matrix of A (..., n, n), f given by ``func`` applied elementwise to
    the eigenvalues (an nx function of a complex array, e.g. ``nx.exp``): the complex Schur
    form and Parlett's recurrence (SciPy's and JAX's method; accurate for well-separated
    eigenvalues, inf/NaN for repeated ones, as theirs).  A real A gives the real part (f real
    on the reals, as SciPy's real result).  ``disp=False`` returns (F, err) with err the
    relative commutator residual ||A F - F A||_F / ||A F||_F (SciPy returns its own estimate).

    Derivatives: the Frechet derivative by the Daleckii-Krein formula in the eigenbasis
    (distinct eigenvalues; f' from ``func`` by forward differentiation), as a custom VJP
    linear in the cotangent, so that jvp (its transpose), grad and hessians all work (JAX's
    funm has no derivative).
    """
    if not callable(func):
        raise TypeError(f"func: expected a callable, got {func!r}")
    a = _matrix(A, "A", square=True)
    n = a.shape[-1]

    @custom_vjp
    def f(a):
        return _funm(a, func)

    def fwd(a):
        return f(a), a

    def bwd(a, g):
        # Daleckii-Krein in the eigenbasis (distinct eigenvalues, as Parlett's recurrence
        # needs): L(A, E) = V (D * (V^-1 E V)) V^-1 with D the divided differences of f
        # (f' on the diagonal); its transpose under sum(G * L) is V^-T (D * (V^T G V^-T)) V^T
        w, v = la_eig(a)
        cdt = w.dtype
        fw = nx.astype(nx.asarray(func(w)), cdt)
        dfw = nx.astype(jvp(func, (w,), (nx.ones_like(w),))[1], cdt)
        gap = nx.subtract(nx.expand_dims(w, -1), nx.expand_dims(w, -2))
        same = nx.equal(gap, 0)
        dd = nx.divide(nx.subtract(nx.expand_dims(fw, -1), nx.expand_dims(fw, -2)),
                       nx.where(same, 1, gap))
        dd = nx.where(same, nx.expand_dims(dfw, -1), dd)
        vt = mT(v)
        gv = nx.matmul(vt, nx.astype(g, cdt))
        x2 = mT(la.solve(v, mT(gv)))
        ct = la.solve(vt, nx.matmul(nx.multiply(dd, x2), vt))
        if not dtypes.is_complex(a.dtype):
            ct = nx.astype(nx.real(ct), a.dtype)
        return (ct,)
    f.defvjp(fwd, bwd)
    out = f(a) if n else a
    if disp:
        return out
    if not n:
        return out, nx.asarray(0.0)
    err = nx.divide(la.norm(nx.subtract(nx.matmul(a, out), nx.matmul(out, a)), "fro"),
                    la.norm(nx.matmul(a, out), "fro"))
    return out, err


def polar(a: ArrayLike, side: str = "right") -> tuple[Array, Array]:
    """Polar decomposition of each (m, n) matrix of a: (u, p) with a = u p (``side='right'``,
    p (n, n) Hermitian positive semi-definite) or a = p u (``'left'``, p (m, m)); u has
    orthonormal columns (m >= n) or rows.  Through the SVD a = W diag(s) Vh: u = W Vh,
    p = Vh^H diag(s) Vh (right) or W diag(s) W^H (left); differentiable where the singular
    values are distinct and nonzero (JAX's polar differentiates only in forward mode)."""
    if side not in ("right", "left"):
        raise ValueError(f"side: must be 'right' or 'left', got {side!r}")
    x = _matrix(a, "a")
    w, s, vh = la.svd(x, full_matrices=False)  # type: ignore[attr-defined]
    u = nx.matmul(w, vh)
    sc = nx.astype(s, x.dtype) if s.dtype != x.dtype else s
    if side == "right":
        v = mT(nx.conj(vh)) if dtypes.is_complex(x.dtype) else mT(vh)
        p = nx.matmul(nx.multiply(v, nx.expand_dims(sc, -2)), vh)
    else:
        wh = mT(nx.conj(w)) if dtypes.is_complex(x.dtype) else mT(w)
        p = nx.matmul(nx.multiply(w, nx.expand_dims(sc, -2)), wh)
    return u, p


def expm_frechet(A: ArrayLike, E: ArrayLike, method: str | None = None,
                 compute_expm: bool = True,
                 check_finite: bool = True) -> Array | tuple[Array, Array]:
    """The Frechet derivative L(A, E) of expm at each square matrix of A in direction E, and
    expm(A): (expm(A), L) with ``compute_expm``, else L.  The directional derivative of
    ``expm``'s Pade approximant (SciPy's method; equal to the upper-right block of
    expm([[A, E], [0, A]])); differentiable, jittable, batched (A and E broadcast)."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"method: must be None, 'SPS' or 'blockEnlarge', got {method!r}")
    a = _matrix(A, "A", square=True)
    e = _matrix(E, "E", square=True)
    if a.shape[-2:] != e.shape[-2:]:
        raise ValueError(f"A, E: shapes {a.shape} and {e.shape} differ")
    if check_finite:
        _check_finite(a, "A")
        _check_finite(e, "E")
    dt = dtypes.result_type(a.dtype, e.dtype)
    a, e = nx.astype(a, dt), nx.astype(e, dt)
    batch = np.broadcast_shapes(a.shape[:-2], e.shape[:-2])
    a, e = nx.broadcast_to(a, batch + a.shape[-2:]), nx.broadcast_to(e, batch + e.shape[-2:])
    if a.shape[-1] == 0:
        return (a, e) if compute_expm else e
    # the directional derivative of expm's approximant (Pade with scaling and squaring), as
    # SciPy's expm_frechet computes it: about twice expm's cost, where the block matrix
    # [[A, E], [0, A]] costs eight
    expm_a, l_ = jvp(la.expm, (a,), (e,))
    return (expm_a, l_) if compute_expm else l_
