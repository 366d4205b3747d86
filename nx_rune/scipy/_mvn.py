"""The multivariate normal distribution (``logpdf``, ``pdf``) with ``jax.scipy.stats``'s
argument names, meant to be ``nx.scipy.stats.multivariate_normal``.

The log-density goes through a Cholesky factor of ``cov`` and one triangular solve of all the
points at once, so it is differentiable to any order in x, mean and cov.  As JAX's, ``cov`` is
taken as symmetric: the factor is that of (cov + cov^T) / 2 (``nx.linalg.cholesky``'s
``symmetrize_input``), so that cov's derivative is a symmetric matrix (a gradient step keeps a
covariance symmetric).
"""
from __future__ import annotations

import math

import numpy as np

from nx_rune import dtypes
from nx_rune.backend import cho_factor_values as _cho_factor_values
from nx_rune.backend import triangular_solve_values as _triangular_solve_values
from nx_rune.backend.linalg import matmul_values as _matmul_values
from nx_rune.frontend import _core, arrangement, elementwise, movement, reductions
from nx_rune.frontend import linalg as _la
from nx_rune.frontend.indexing import concrete_value as _concrete_value
from nx_rune.frontend.products import matmul as _matmul
from nx_rune.tensor import ArrayBase
from nx_rune.tensor import wrap_result as _wrap_result
from nx_rune.typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def _operands(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> tuple[Array, Array, Array]:
    """x, mean and cov in one float dtype (Python scalars weakly typed)."""
    if isinstance(x, ArrayBase) and isinstance(mean, ArrayBase) and isinstance(cov, ArrayBase) \
            and x.dtype == mean.dtype == cov.dtype and x.dtype.char in "fd" \
            and not (getattr(x, "weak_type", False) or getattr(mean, "weak_type", False)
                     or getattr(cov, "weak_type", False)):
        return x, mean, cov     # (what promotion gives them: arrays of one real float dtype)
    x, mean, cov = (_core.as_inexact(v) for v in _core.promote(x, mean, cov))
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"x, mean, cov: the multivariate normal takes real values, got {x.dtype}")
    return x, mean, cov


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike,
           allow_singular: bool | None = None) -> Array:
    """log N(x; mean, cov).  ``mean`` () with scalar ``cov``: the univariate normal of each
    element of x.  ``mean`` (..., n): x (..., n) with ``cov`` a scalar (cov * I) or (..., n, n)
    symmetric positive definite; leading axes broadcast.  Shape: the broadcast of the leading
    axes; promoted float dtype.  A cov that is not positive definite raises LinAlgError.

    ``allow_singular=True`` (SciPy's): cov may be positive semi-definite: the density on the
    subspace its eigenvectors of non-negligible eigenvalue span (eigenvalues <= 1e6 eps max|w|
    count as zero, SciPy's cutoff): -(rank log 2 pi + log pdet(cov) + d^T pinv(cov) d) / 2,
    and -inf for x off that subspace; a cov with a negative eigenvalue beyond the cutoff raises
    ValueError.  Differentiable in x and mean, and in cov where its eigenvalues are distinct.
    (None or False: the positive definite density, as JAX's.)"""
    if allow_singular:
        return _singular_logpdf(x, mean, cov)
    out = _direct_logpdf(x, mean, cov)
    if out is not None:
        return out
    x, mean, cov = _operands(x, mean, cov)
    if mean.ndim == 0:
        if cov.ndim != 0:
            raise ValueError(f"cov: a scalar mean needs a scalar cov, got shape {cov.shape}")
        d = elementwise.subtract(x, mean)
        return elementwise.subtract(
            elementwise.multiply(elementwise.divide(elementwise.multiply(d, d), cov), -0.5),
            elementwise.multiply(elementwise.add(elementwise.log(cov), _LOG_2PI), 0.5))
    n = mean.shape[-1]
    if x.ndim == 0 or x.shape[-1] != n:
        raise ValueError(f"x: the last axis must have the mean's length {n}, got shape {x.shape}")
    if cov.ndim == 0:
        d = elementwise.subtract(x, mean)
        quad = elementwise.divide(reductions.sum(elementwise.multiply(d, d), -1), cov)
        logdet = elementwise.multiply(elementwise.log(cov), n)
    else:
        if cov.ndim < 2 or cov.shape[-2:] != (n, n):
            raise ValueError(f"cov: expected shape (..., {n}, {n}) for a mean of length {n}, got "
                             f"{cov.shape}")
        if cov.ndim == 2 and mean.ndim == 1:
            # (the rule computes x - mean itself: none recorded here)
            return _logpdf_one_cov()(x, mean, cov)
        d = elementwise.subtract(x, mean)
        lo = _la.cholesky(cov)
        if cov.ndim == 2:
            # one covariance: one triangular solve with every point as a column of d^T (n, N)
            batch = d.shape[:-1]
            cols = _la.mT(movement.reshape(d, (math.prod(batch), n)))
            y = _la.solve_triangular(lo, cols, lower=True, check_finite=False)
            quad = movement.reshape(reductions.sum(elementwise.multiply(y, y), 0), batch)
        else:
            # d as (..., n, 1) columns: the batch axes of d and cov broadcast
            y = _la.solve_triangular(lo, movement.reshape(d, d.shape + (1,)), lower=True,
                                     check_finite=False)
            quad = reductions.sum(elementwise.multiply(y, y), (-2, -1))
        logdet = elementwise.multiply(
            reductions.sum(elementwise.log(arrangement.diagonal(lo, 0, -2, -1)), -1), 2.0)
    return elementwise.multiply(
        elementwise.add(elementwise.add(quad, logdet), n * _LOG_2PI), -0.5)


# -- one covariance, one mean: the log-density with its own derivative -------------------------
# With d = x - mean, S = cov^-1 (cov taken as symmetric) and z = S d for each point, logpdf =
# -(d^T z + log det cov + n log 2 pi) / 2 and, for a cotangent g per point,
#   x: -g z,   mean: sum g z,   cov: (sum g z z^T - (sum g) S) / 2  (symmetric),
# the cotangents of a handful of operations on the residuals (z, S), where differentiating the
# composition (the Cholesky factor, the triangular solve, the diagonal's log, their views)
# recorded some 20 operations per call (the GMM program's gradient: ~2x autograd's time).
# The rule runs under the enclosing transformations and is linear in g, so forward mode
# (its transpose) and higher orders differentiate it in turn; the residuals are then computed
# by the front end's operations (differentiable), on plain concrete values by LAPACK directly.

_ONE_COV = []


def _logpdf_one_cov():
    """The custom_vjp function logpdf(x (..., n), mean (n,), cov (n, n)) (see above), made on
    first use."""
    if not _ONE_COV:
        from nx_rune.autodiff.custom import custom_vjp

        def value(x, mean, cov):
            return _one_cov_fwd(x, mean, cov)[0]
        fn = custom_vjp(value)
        fn.defvjp(_one_cov_fwd, _one_cov_bwd)
        _ONE_COV.append(fn)
    return _ONE_COV[0]


def _one_cov_fwd(x, mean, cov):
    """(logpdf, (z as (..., n), S)): one Cholesky factor, the triangular solves of all points."""
    n = mean.shape[-1]
    batch = x.shape[:-1]
    xa, ma, ca = _la._direct(x), _la._direct(mean), _la._direct(cov)
    if xa is not None and ma is not None and ca is not None:
        # one factorization and one triangular solve (of the identity): S = L^-T L^-1, z = d S
        d = (xa - ma).reshape(-1, n)
        lo = _cho_factor_values((ca + ca.T) * 0.5, True)
        w = _triangular_solve_values(lo, np.eye(n, dtype=lo.dtype), True, 0, False)
        sinv = _matmul_values(np.ascontiguousarray(w.T), w)
        z = _matmul_values(d, sinv)
        quad = np.einsum("ij,ij->i", d, z)
        logdet = 2.0 * np.log(np.diagonal(lo)).sum()
        out = -0.5 * (quad + (logdet + n * _LOG_2PI))
        return (_wrap_result(np.asarray(out.reshape(batch), xa.dtype)),
                (_wrap_result(z.reshape(batch + (n,))), _wrap_result(sinv)))
    d = movement.reshape(elementwise.subtract(x, mean), (math.prod(batch), n))
    lo = _la.cholesky(cov)
    y = _la.solve_triangular(lo, _la.mT(d), lower=True, check_finite=False)
    z = _la.solve_triangular(lo, y, trans=1, lower=True, check_finite=False)
    w = _la.solve_triangular(lo, _la.eye_like(n, lo.dtype), lower=True, check_finite=False)
    quad = movement.reshape(reductions.sum(elementwise.multiply(y, y), 0), batch)
    logdet = elementwise.multiply(
        reductions.sum(elementwise.log(arrangement.diagonal(lo, 0, -2, -1)), -1), 2.0)
    out = elementwise.multiply(elementwise.add(elementwise.add(quad, logdet), n * _LOG_2PI),
                               -0.5)
    return out, (movement.reshape(_la.mT(z), batch + (n,)), _matmul(_la.mT(w), w))


def _one_cov_bwd(res, g):
    z, sinv = res
    n = sinv.shape[-1]
    za, sa, ga = _la._direct(z), _la._direct(sinv), _la._direct(g)
    if za is not None and sa is not None and ga is not None:
        # nothing differentiates this call: the same arithmetic on the values
        gz = ga[..., None] * za
        zf, gzf = za.reshape(-1, n), gz.reshape(-1, n)
        m = _matmul_values(zf.T, gzf) - sa * ga.sum()
        return (_wrap_result(-gz), _wrap_result(gzf.sum(0)),
                _wrap_result((m + m.T) * 0.25))
    gz = elementwise.multiply(movement.reshape(g, g.shape + (1,)), z)
    zf = movement.reshape(z, (-1, n))
    gzf = movement.reshape(gz, (-1, n))
    m = elementwise.subtract(_matmul(_la.mT(zf), gzf),
                             elementwise.multiply(sinv, reductions.sum(g)))
    # (m + m^T) / 4: symmetric to the last bit (the products' rounding is not), so that a
    # gradient step keeps a covariance exactly symmetric
    ct_cov = elementwise.multiply(elementwise.add(m, _la.mT(m)), 0.25)
    return elementwise.negative(gz), reductions.sum(gzf, 0), ct_cov


def _singular_logpdf(x, mean, cov):
    x, mean, cov = _operands(x, mean, cov)
    if mean.ndim == 0:
        return logpdf(x, mean, cov)
    n = mean.shape[-1]
    if x.ndim == 0 or x.shape[-1] != n:
        raise ValueError(f"x: the last axis must have the mean's length {n}, got shape {x.shape}")
    if cov.ndim == 0:
        cov = elementwise.multiply(_la.eye_like(n, cov.dtype), cov)
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"cov: expected shape (..., {n}, {n}) for a mean of length {n}, got "
                         f"{cov.shape}")
    d = elementwise.subtract(x, mean)
    w, u = _la.eigh(elementwise.multiply(elementwise.add(cov, _la.mT(cov)), 0.5))
    cond = (1e3 if cov.dtype == np.float32 else 1e6) * float(np.finfo(cov.dtype).eps)
    eps = elementwise.multiply(reductions.max(elementwise.abs(w), -1, keepdims=True), cond)
    wv = _concrete_value(w)
    if wv is not None and np.any(wv < -cond * np.max(np.abs(wv), -1, keepdims=True)):
        raise ValueError("cov: must be symmetric positive semi-definite (an eigenvalue is "
                         "negative beyond the cutoff)")
    keep = elementwise.greater(w, eps)
    w_safe = elementwise.where(keep, w, 1.0)
    inv = elementwise.where(keep, elementwise.reciprocal(w_safe), 0.0)
    proj = _project(d, u, n)
    quad = reductions.sum(elementwise.multiply(elementwise.multiply(proj, proj), inv), -1)
    log_pdet = reductions.sum(elementwise.where(keep, elementwise.log(w_safe), 0.0), -1)
    rank = reductions.sum(_core.astype(keep, w.dtype), -1)
    off = elementwise.where(keep, 0.0, proj)
    residual = elementwise.sqrt(reductions.sum(elementwise.multiply(off, off), -1))
    outside = elementwise.greater_equal(residual, elementwise.multiply(eps[..., 0], 1e3))
    out = elementwise.multiply(
        elementwise.add(elementwise.add(elementwise.multiply(rank, _LOG_2PI), log_pdet), quad),
        -0.5)
    return elementwise.where(outside, -float("inf"), out)


def _project(d, u, n):
    """The coordinates of d (..., n) in the eigenvector basis u (..., n, n): d @ u."""
    col = movement.reshape(d, d.shape[:-1] + (1, n))
    p = _matmul(col, u)
    return movement.reshape(p, p.shape[:-2] + (n,))


def _direct_logpdf(x, mean, cov):
    """logpdf on the direct path (concrete tensors of one float dtype, no transformation
    active, one (n, n) covariance), else None: the factorization and the triangular solve
    of the general path as one LAPACK call each on the values, without the front end's
    per-operation cost.  Anything else takes the general path, which checks and raises."""
    xa, ma, ca = _la._direct(x), _la._direct(mean), _la._direct(cov)
    if xa is None or ma is None or ca is None or ca.ndim != 2 or ma.ndim != 1:
        return None
    n = ma.shape[0]
    if (xa.dtype.char not in "fd" or xa.dtype != ma.dtype or xa.dtype != ca.dtype
            or xa.ndim == 0 or xa.shape[-1] != n or ca.shape != (n, n)):
        return None
    d = (xa - ma).reshape(-1, n)
    lo = _cho_factor_values((ca + ca.T) * 0.5, True)
    # y = L^-1 d^T as d (L^-1)^T: the triangular solve of an n x n identity and one product
    # (not a solve with all the points as right-hand sides: OpenBLAS splits that one over
    # threads that wait for each other, 10-100x slower when another process holds a core)
    w = _triangular_solve_values(lo, np.eye(n, dtype=lo.dtype), True, 0, False)
    y = _matmul_values(d, np.ascontiguousarray(w.T))
    quad = np.einsum("ij,ij->i", y, y)
    logdet = 2.0 * np.log(np.diagonal(lo)).sum()
    out = -0.5 * (quad + (logdet + n * _LOG_2PI))
    return _wrap_result(np.asarray(out.reshape(xa.shape[:-1]), xa.dtype))


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike,
        allow_singular: bool | None = None) -> Array:
    """exp(logpdf(x, mean, cov, allow_singular)): the density, same shapes and dtype as
    ``logpdf``."""
    return elementwise.exp(logpdf(x, mean, cov, allow_singular))


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)


# the entropy and samples (nx_rune.scipy._mvn_sampling): SciPy's multivariate_normal.entropy
# and rvs
from nx_rune.scipy._mvn_sampling import mvn_entropy as entropy  # noqa: E402
from nx_rune.scipy._mvn_sampling import mvn_rvs as rvs  # noqa: E402

__all__ += ["entropy", "rvs"]
