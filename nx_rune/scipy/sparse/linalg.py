"""``nx.scipy.sparse.linalg``: Krylov solvers of A x = b, as ``jax.scipy.sparse.linalg``.

``cg`` (conjugate gradients, A Hermitian positive definite), ``bicgstab`` (biconjugate
gradients stabilized) and ``gmres`` (restarted GMRES) take ``A`` as a square matrix, a function
``A(x)`` or an object with ``@``, and ``b`` (and ``x0``) as an array or a pytree of arrays of
any shapes (a vector of their concatenated entries).  They return ``(x, info)`` as JAX's
(``info`` None for cg and bicgstab; for gmres 0, or -1 when the answer holds NaN).

The iterations are ``lax.while_loop`` loops, so the solvers run eagerly, under ``jit`` and under
``vmap``.  Derivatives are implicit, as JAX's ``custom_linear_solve``: the derivative of the
solution comes from one more solve (with A for tangents, A^T for cotangents), in ``b`` and in
every array A depends on (a matrix, or the arrays a function closes over), never through the
iterations; they are accurate as far as both solves converge.  ``x0`` receives no derivative.
Tolerances: the iterations stop when ``norm(residual) <= max(tol * norm(b), atol)`` (SciPy's
non-legacy rule).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from nx_rune import frontend as F
from nx_rune.compiler.control import fori_loop, while_loop
from nx_rune.frontend.linalg import solve_triangular
from nx_rune.scipy.sparse._implicit import linear_solve
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["bicgstab", "cg", "gmres"]


# -- vectors as pytrees -----------------------------------------------------------------------

def _vdot_real(x, y):
    """Re(x^H y) without the cross terms: the real part of a Hermitian form's value."""
    out = F.vdot(F.real(x), F.real(y))
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        out = out + F.vdot(F.imag(x), F.imag(y))
    return out


def _tree_vdot_real(x, y):
    return sum(tree_leaves(tree_map(_vdot_real, x, y)))


def _tree_vdot(x, y):
    return sum(tree_leaves(tree_map(F.vdot, x, y)))


def _tree_norm(x):
    return F.sqrt(sum(_vdot_real(v, v) for v in tree_leaves(x)))


def _scale(a, x):
    return tree_map(lambda v: a * v, x)


def _add(x, y):
    return tree_map(operator.add, x, y)


def _sub(x, y):
    return tree_map(operator.sub, x, y)


def _identity(x):
    return x


def _count(n):
    # a typed loop counter: a weakly typed carry would be traced once more to promote it
    return F.asarray(n)


def _as_operator(op, name):
    """``op`` (a function, a square matrix or an object with ``@``) as a function."""
    if callable(op) and not isinstance(op, ArrayBase):
        return op
    if isinstance(op, (np.ndarray, ArrayBase)):
        op = F.asarray(op)
        if op.ndim != 2 or op.shape[0] != op.shape[1]:
            raise ValueError(f"{name}: the linear operator must be a square matrix, got shape "
                             f"{op.shape}")
        return functools.partial(F.dot, op)
    if hasattr(op, "__matmul__"):
        shape = getattr(op, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"{name}: the linear operator must be a square matrix, got shape "
                             f"{tuple(shape)}")
        return functools.partial(operator.matmul, op)
    raise TypeError(f"{name}: the linear operator must be a function, an array or an object "
                    f"with @, got {type(op).__name__}")


def _prepare(A, b, x0, M, maxiter, where):
    """The common argument handling: operators as functions, ``x0`` (zeros by default) checked
    against ``b``'s structure and shapes, the default ``maxiter`` (10 per unknown, SciPy's)."""
    b = tree_map(F.asarray, b)
    if not tree_leaves(b):
        raise ValueError(f"{where}: b holds no arrays")
    x0 = tree_map(F.zeros_like, b) if x0 is None else tree_map(F.asarray, x0)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"{where}: x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    shapes_x0 = [v.shape for v in tree_leaves(x0)]
    shapes_b = [v.shape for v in tree_leaves(b)]
    if shapes_x0 != shapes_b:
        raise ValueError(f"{where}: arrays in x0 and b must have matching shapes: "
                         f"{shapes_x0} vs {shapes_b}")
    # the solution's dtype: b's, inexact, and promoted with a matrix A's (a function's output
    # dtype is not known before it is called: it must keep b's)
    dts = [v.dtype for v in tree_leaves(b)] + [v.dtype for v in tree_leaves(x0)]
    if isinstance(A, (np.ndarray, ArrayBase)):
        dts.append(F.asarray(A).dtype)
    inexact = [d for d in dts if d.kind in "fc"]
    dt = np.result_type(*inexact) if inexact else F.asarray(1.0).dtype
    b = tree_map(lambda v: F.astype(v, dt) if v.dtype != dt else v, b)
    x0 = tree_map(lambda v: F.astype(v, dt) if v.dtype != dt else v, x0)
    size = sum(int(np.prod(v.shape)) for v in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    elif not isinstance(maxiter, (int, np.integer)) or isinstance(maxiter, bool):
        raise TypeError(f"{where}: maxiter must be an integer, got {maxiter!r}")
    A = _as_operator(A, f"{where}: A")
    M = _identity if M is None else _as_operator(M, f"{where}: M")
    return A, b, x0, M, int(maxiter), size


def _result_dtype(tree):
    return np.result_type(*[v.dtype for v in tree_leaves(tree)])


# -- conjugate gradients ----------------------------------------------------------------------

def _cg_solve(A, b, aux, *, maxiter, M):
    x0, tol, atol = aux
    # stop when |r|^2 <= max(tol^2 |b|^2, atol^2)
    bound = F.maximum(F.square(tol) * _tree_vdot_real(b, b), F.square(atol))
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dt = _result_dtype(z0)
    gamma0 = F.astype(_tree_vdot_real(r0, z0), dt)

    def going(state):
        _, r, gamma, _, k = state
        # without a preconditioner gamma is |r|^2 already
        rs = F.real(gamma) if M is _identity else _tree_vdot_real(r, r)
        return (rs > bound) & (k < maxiter)

    def step(state):
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / F.astype(_tree_vdot_real(p, ap), dt)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, ap))
        z = M(r)
        gamma_new = F.astype(_tree_vdot_real(r, z), dt)
        p = _add(z, _scale(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    return while_loop(going, step, (x0, r0, gamma0, z0, _count(0)))[0]


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by (preconditioned) conjugate gradients; A must be Hermitian positive
    definite.  ``A``, ``M`` (the preconditioner, approximating A^-1): a square matrix, a
    function or an object with ``@``; ``b``, ``x0`` (default zeros): arrays or pytrees of
    arrays; stops when ``norm(r) <= max(tol * norm(b), atol)`` or after ``maxiter`` (default 10
    per unknown) iterations.  Returns ``(x, None)``; derivatives are implicit (a second cg
    solve; see the module docstring)."""
    A, b, x0, M, maxiter, _ = _prepare(A, b, x0, M, maxiter, "cg")
    solve = functools.partial(_cg_solve, maxiter=maxiter, M=M)
    # a real positive definite operator is symmetric: its transpose solve is the same solve
    symmetric = all(v.dtype.kind != "c" for v in tree_leaves(b))
    x = linear_solve(A, b, solve, (x0, tol, atol), symmetric=symmetric)
    return x, None


# -- BiCGSTAB ---------------------------------------------------------------------------------

def _bicgstab_solve(A, b, aux, *, maxiter, M):
    x0, tol, atol = aux
    bound = F.maximum(F.square(tol) * _tree_vdot_real(b, b), F.square(atol))
    r0 = _sub(b, A(x0))
    one = F.ones((), _result_dtype(b))

    def going(state):
        r, k = state[1], state[-1]
        # k < 0 marks a breakdown (rho or omega or alpha vanished)
        return (_tree_vdot_real(r, r) > bound) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_new = _tree_vdot(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _tree_vdot(rhat, q)
        s = _sub(r, _scale(alpha, q))
        # the half step already meets the tolerance: take it and stop
        early = _tree_vdot_real(s, s) < bound
        shat = M(s)
        t = A(shat)
        omega = _tree_vdot(t, s) / _tree_vdot(t, t)
        x_half = _add(x, _scale(alpha, phat))
        x = tree_map(lambda u, v: F.where(early, u, v), x_half, _add(x_half, _scale(omega, shat)))
        r = tree_map(lambda u, v: F.where(early, u, v), s, _sub(s, _scale(omega, t)))
        k = F.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = F.where(rho_new == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    return while_loop(going, step, (x0, r0, r0, one, one, one, r0, r0, _count(0)))[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by the biconjugate gradient stabilized method (A any nonsingular square
    operator).  Arguments as :func:`cg`'s.  Returns ``(x, None)``; derivatives are implicit."""
    A, b, x0, M, maxiter, _ = _prepare(A, b, x0, M, maxiter, "bicgstab")
    solve = functools.partial(_bicgstab_solve, maxiter=maxiter, M=M)
    return linear_solve(A, b, solve, (x0, tol, atol)), None


# -- GMRES ------------------------------------------------------------------------------------

def _normalize(x, thresh=None):
    """(x / |x|, |x|), or (0, 0) when |x| is at most ``thresh`` (default: the dtype's eps)."""
    norm = _tree_norm(x)
    dt = _result_dtype(x)
    if thresh is None:
        thresh = float(np.finfo(norm.dtype).eps)
    thresh = F.real(F.astype(F.asarray(thresh), dt))
    keep = norm > thresh
    norm_dt = F.astype(norm, dt)
    unit = tree_map(lambda v: F.where(keep, v / norm_dt, F.zeros_like(v)), x)
    return unit, F.where(keep, norm, F.zeros_like(norm))


def _column(X, k):
    """``X[..., k]`` for a traced k."""
    return F.take(X, k, axis=-1)


def _set_column(X, k, v):
    """``X`` with ``X[..., k] = v`` (k traced)."""
    return F.where(F.arange(X.shape[-1]) == k, F.astype(v, X.dtype)[..., None], X)


def _set_row(X, k, v):
    """``X`` with ``X[k] = v`` (k traced; v of X's shape without the first axis)."""
    mask = (F.arange(X.shape[0]) == k).reshape((X.shape[0],) + (1,) * (X.ndim - 1))
    return F.where(mask, F.astype(v, X.dtype)[None], X)


def _gram_schmidt(Q, x, xnorm, max_iterations=2):
    """x orthogonalized against Q's columns (classical Gram-Schmidt, repeated while the
    remainder shrank below |x|/sqrt(2), at most twice: "twice is enough"); returns it and its
    overlaps with the columns."""
    Q0 = tree_leaves(Q)[0]
    r = F.zeros(Q0.shape[-1], dtype=Q0.dtype)
    sqrt2 = float(np.sqrt(2.0))

    def project(carry):
        k, q, r, _ = carry
        h = sum(tree_leaves(tree_map(
            lambda X, y: F.tensordot(F.conj(X), y, axes=(list(range(y.ndim)),
                                                          list(range(y.ndim)))), Q, q)))
        q = _sub(q, tree_map(lambda X: F.dot(X, h), Q))
        r = r + h
        qnorm_scaled = _normalize(q)[1] / sqrt2
        return k + 1, q, r, qnorm_scaled

    def again(carry):
        k, _, r, qnorm_scaled = carry
        return (k < max_iterations - 1) & (_normalize(r)[1] < qnorm_scaled)

    carry = project((_count(0), x, r, xnorm / sqrt2))
    _, q, r, _ = while_loop(again, project, carry)
    return q, r


def _arnoldi_step(k, A, M, V, H):
    """The k-th Arnoldi step: V[..., k+1] = the normalized part of M(A(V[..., k])) orthogonal
    to the earlier columns, its overlaps in H[k, :]; breakdown when nothing is left."""
    dt = _result_dtype(V)
    eps = float(np.finfo(dt).eps)
    v = M(A(tree_map(lambda X: _column(X, k), V)))
    _, v_norm0 = _normalize(v)
    v, h = _gram_schmidt(V, v, v_norm0)
    unit, v_norm1 = _normalize(v, thresh=eps * v_norm0)
    V = tree_map(lambda X, y: _set_column(X, k + 1, y), V, unit)
    h = _set_row(h, k + 1, F.astype(v_norm1, dt))
    return V, _set_row(H, k, h), v_norm1 == 0.0


def _rotate(H, i, cs, sn):
    """Rows i and i+1 of the vector H rotated by the Givens rotation (cs, sn)."""
    x1, y1 = F.take(H, i), F.take(H, i + 1)
    H = _set_row(H, i, F.conj(cs) * x1 - F.conj(sn) * y1)
    return _set_row(H, i + 1, sn * x1 + cs * y1)


def _givens(a, b):
    """The rotation (cs, sn) that zeroes b against a."""
    b_zero = F.abs(b) == 0
    a_lt_b = F.abs(a) < F.abs(b)
    t = -F.where(a_lt_b, a, b) / F.where(a_lt_b, b, a)
    r = F.astype(1.0 / F.sqrt(1 + F.abs(t) ** 2), t.dtype)
    cs = F.where(b_zero, F.ones_like(t), F.where(a_lt_b, r * t, r))
    sn = F.where(b_zero, F.zeros_like(t), F.where(a_lt_b, r, r * t))
    return cs, sn


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart cycle, the Krylov basis' QR factorization built by Givens rotations as it
    grows (the residual norm known at each step: it may stop early)."""
    V = tree_map(lambda x: F.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                 unit_residual)
    dt = _result_dtype(b)
    R = F.eye(restart, restart + 1, dtype=dt)     # eye: never singular if it stops early
    givens = F.zeros((restart, 2), dtype=dt)
    beta = _set_row(F.zeros(restart + 1, dtype=dt), 0, F.astype(residual_norm, dt))

    def going(carry):
        k, err = carry[0], carry[1]
        return (k < restart) & (err > ptol)

    def step(carry):
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = fori_loop(0, k, lambda i, h: _rotate(h, i, F.take(givens, i, axis=0)[0],
                                                    F.take(givens, i, axis=0)[1]),
                        F.take(H, k, axis=0))
        cs, sn = _givens(F.take(row, k), F.take(row, k + 1))
        givens = _set_row(givens, k, F.stack([cs, sn]))
        row = _rotate(row, k, cs, sn)
        R = _set_row(R, k, row)
        beta = _rotate(beta, k, cs, sn)
        return k + 1, F.abs(F.take(beta, k + 1)), V, R, beta, givens

    _, _, V, R, beta, _ = while_loop(going, step, (_count(0), residual_norm, V, R, beta,
                                                    givens))
    y = solve_triangular(F.swapaxes(R[:, :-1], 0, 1), beta[:-1])
    x = _add(x0, tree_map(lambda X: F.dot(X[..., :-1], y), V))
    return (x,) + _normalize(M(_sub(b, A(x))))


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart cycle: the whole Krylov basis, then its least-squares problem solved by the
    normal equations (no early stop)."""
    V = tree_map(lambda x: F.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                 unit_residual)
    dt = _result_dtype(b)
    H = F.eye(restart, restart + 1, dtype=dt)

    def going(carry):
        return (carry[3] < restart) & F.logical_not(carry[2])

    def step(carry):
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = while_loop(going, step, (V, H, F.asarray(False), _count(0)))
    beta = _set_row(F.zeros(restart + 1, dtype=dt), 0, F.astype(residual_norm, dt))
    Ht = F.swapaxes(H, 0, 1)
    HtH = F.dot(F.conj(H), Ht)
    y = F.linalg.solve(HtH, F.dot(F.conj(H), beta))
    x = _add(x0, tree_map(lambda X: F.dot(X[..., :-1], y), V))
    return (x,) + _normalize(M(_sub(b, A(x))))


def _gmres_solve(A, b, aux, *, restart, maxiter, M, cycle):
    x0, atol, ptol = aux
    unit_residual, residual_norm = _normalize(M(_sub(b, A(x0))))

    def going(carry):
        return (carry[1] < maxiter) & (carry[3] > atol)

    def step(carry):
        x, k, unit_residual, residual_norm = carry
        x, unit_residual, residual_norm = cycle(A, b, x, unit_residual, residual_norm, ptol,
                                                restart, M)
        return x, k + 1, unit_residual, residual_norm

    return while_loop(going, step, (x0, _count(0), unit_residual, residual_norm))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve A x = b by restarted GMRES (A any nonsingular square operator).  ``restart``: the
    Krylov subspace's dimension per cycle (at most the number of unknowns); ``maxiter``: the most
    cycles (default 10 per unknown); ``solve_method``: ``"batched"`` (the least-squares problem
    solved once per cycle) or ``"incremental"`` (a QR factorization by Givens rotations as the
    basis grows, stopping early in a cycle).  Other arguments as :func:`cg`'s.  Returns
    ``(x, info)``, info 0, or -1 when x holds NaN; derivatives are implicit."""
    if solve_method not in ("incremental", "batched"):
        raise ValueError(f"gmres: invalid solve_method {solve_method!r}, must be either "
                         f"'incremental' or 'batched'")
    if not isinstance(restart, (int, np.integer)) or isinstance(restart, bool) or restart < 1:
        raise ValueError(f"gmres: restart must be a positive integer, got {restart!r}")
    A, b, x0, M, maxiter, size = _prepare(A, b, x0, M, maxiter, "gmres")
    restart = min(int(restart), size)
    b_norm = _tree_norm(b)
    atol = F.maximum(tol * b_norm, atol)
    ptol = _tree_norm(M(b)) * F.minimum(1.0, atol / b_norm)
    cycle = _gmres_incremental if solve_method == "incremental" else _gmres_batched
    solve = functools.partial(_gmres_solve, restart=restart, maxiter=maxiter, M=M,
                              cycle=cycle)
    x = linear_solve(A, b, solve, (x0, atol, ptol))
    info = F.where(F.isnan(_tree_norm(x)), -1, 0)
    return x, info


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
