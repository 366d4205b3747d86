"""BFGS (Nocedal & Wright, "Numerical Optimization", 1999, algorithm 6.1) and limited-memory
BFGS (algorithm 7.5, with Sorber et al.'s complex form) as ``jax.scipy.optimize`` runs them:
the same iterates, one ``lax.while_loop`` over a NamedTuple state, so that ``minimize`` runs
eagerly, under ``jit`` and under ``vmap``."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from nx_rune import frontend as F
from nx_rune.autodiff import value_and_grad
from nx_rune.compiler.control import fori_loop, while_loop
from nx_rune.scipy.optimize._line_search import _count, line_search


def _norm(g, ord):
    return F.linalg.norm(g, ord=ord)


class _BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """BFGS from ``x0`` until the ``norm`` of the gradient is below ``gtol`` or ``maxiter``
    iterations (default 200 per variable) are done.  Returns the final ``_BFGSState``; its
    ``status``: 0 converged, 1 out of iterations, 2 + the line search's status when the line
    search failed, -1 otherwise."""
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSState(converged=_norm(g_0, norm) < gtol, failed=F.asarray(False),
                       k=_count(0), nfev=_count(1), ngev=_count(1), nhev=_count(0), x_k=x0,
                       f_k=f_0, g_k=g_0, H_k=F.eye(n, dtype=x0.dtype),
                       old_old_fval=f_0 + _norm(g_0, None) / 2, status=_count(0),
                       line_search_status=_count(0))

    def step(s):
        p_k = -F.dot(s.H_k, s.g_k)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                         gfk=s.g_k, maxiter=line_search_maxiter)
        s = s._replace(nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed,
                       line_search_status=ls.status)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - s.g_k
        rho = F.reciprocal(F.dot(y_k, s_k))
        # H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T; a step with y.s = 0 (rho not
        # finite) leaves H as it was
        w = F.eye(n, dtype=rho.dtype) - rho * (s_k[:, None] * y_k[None, :])
        h_new = F.einsum("ij,jk,lk", w, s.H_k, w) + rho * s_k[:, None] * s_k[None, :]
        h_new = F.where(F.isfinite(rho), h_new, s.H_k)
        return s._replace(converged=_norm(ls.g_k, norm) < gtol, k=s.k + 1, x_k=s.x_k + s_k,
                          f_k=ls.f_k, g_k=ls.g_k, H_k=h_new, old_old_fval=s.f_k)

    s = while_loop(lambda s: (~s.converged) & (~s.failed) & (s.k < maxiter), step, state)
    status = F.where(s.converged, 0, F.where(s.k == maxiter, 1,
                                              F.where(s.failed, 2 + s.line_search_status, -1)))
    return s._replace(status=status)


class _LBFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _shift_in(history, new):
    """``history`` with its oldest row dropped and ``new`` appended as the last."""
    return F.concatenate([history[1:], F.astype(new, history.dtype)[None]], axis=0)


def _two_loop_direction(s):
    """The L-BFGS search direction -H g from the stored pairs (the two-loop recursion; the
    newest pairs are the last rows, only the last min(k, m) are filled)."""
    m = s.rho_history.shape[0]
    dt = s.rho_history.dtype
    used = F.where(s.k < m, s.k, m)
    q = -F.conj(s.g_k)

    def backward(j, carry):
        q, alphas = carry
        i = m - 1 - j
        a_i = F.astype(s.rho_history[i] * F.real(F.dot(F.conj(s.s_history[i]), q)), dt)
        alphas = F.where(F.arange(m) == i, a_i, alphas)
        return q - a_i * F.conj(s.y_history[i]), alphas

    q, alphas = fori_loop(0, used, backward, (q, F.zeros_like(s.rho_history)))
    q = s.gamma * q

    def forward(j, q):
        i = m - used + j
        b_i = F.astype(s.rho_history[i] * F.real(F.dot(s.y_history[i], q)), dt)
        return q + (alphas[i] - b_i) * s.s_history[i]

    return fori_loop(0, used, forward, q)


def minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
                   gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
    """Limited-memory BFGS keeping ``maxcor`` correction pairs.  Stops when the gradient's
    ``norm`` is below ``gtol`` (status 0), or on failure: ``maxiter`` (1), ``maxfun`` (2),
    ``maxgrad`` (3) reached, a decrease below ``ftol`` (4), a failed line search (5)."""
    n = x0.shape[0]
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = n * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _LBFGSState(converged=F.asarray(False), failed=F.asarray(False), k=_count(0),
                        nfev=_count(1), ngev=_count(1), x_k=x0, f_k=f_0, g_k=g_0,
                        s_history=F.zeros((maxcor, n), dtype=x0.dtype),
                        y_history=F.zeros((maxcor, n), dtype=x0.dtype),
                        rho_history=F.zeros((maxcor,), dtype=x0.dtype),
                        gamma=F.ones((), x0.dtype), status=_count(0),
                        ls_status=_count(0))

    def step(s):
        p_k = _two_loop_direction(s)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        s_k = F.astype(F.asarray(ls.a_k), p_k.dtype) * p_k
        y_k = ls.g_k - s.g_k
        curv = F.real(F.dot(y_k, s_k))
        rho = F.astype(F.reciprocal(curv), y_k.dtype)
        gamma = curv / F.real(F.dot(F.conj(y_k), y_k))
        status = F.where(s.f_k - ls.f_k < ftol, 4, 0)
        status = F.where(s.ngev >= maxgrad, 3, status)
        status = F.where(s.nfev >= maxfun, 2, status)
        status = F.where(s.k >= maxiter, 1, status)
        status = F.where(ls.failed, 5, status)
        converged = _norm(ls.g_k, norm) < gtol
        return s._replace(converged=converged, failed=(status > 0) & (~converged),
                          k=s.k + 1, nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev,
                          x_k=F.astype(s.x_k + s_k, s.x_k.dtype),
                          f_k=F.astype(ls.f_k, F.asarray(s.f_k).dtype),
                          g_k=F.astype(ls.g_k, s.g_k.dtype),
                          s_history=_shift_in(s.s_history, s_k),
                          y_history=_shift_in(s.y_history, y_k),
                          rho_history=_shift_in(s.rho_history, rho),
                          gamma=F.astype(gamma, s.g_k.dtype),
                          status=F.where(converged, 0, status), ls_status=ls.status)

    return while_loop(lambda s: (~s.converged) & (~s.failed), step, state)
