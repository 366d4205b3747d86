"""The strong-Wolfe line search (Nocedal & Wright, "Numerical Optimization", 1999, algorithms
3.5 and 3.6) that ``minimize``'s BFGS and L-BFGS steps take, as ``jax.scipy.optimize`` runs it.

Both the bracketing phase and the zoom are ``lax.while_loop`` loops whose states are
NamedTuples of scalars, so the search runs eagerly, under ``jit`` and under ``vmap`` (each
example searching until it is done).  A state update never branches on a value: each candidate
update is computed and kept or dropped with ``where``; this is what lets one program serve
every example of a batch, and it gives the same iterates as JAX's search step for step.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from nx_rune import frontend as F
from nx_rune.autodiff import value_and_grad
from nx_rune.compiler.control import while_loop
from nx_rune.frontend.indexing import concrete_value


def _count(n):
    """A loop counter: a typed (not weakly typed) integer of the default dtype, so that the
    loops' carries need no weak-type promotion (which traces the body once more)."""
    return F.asarray(n)


def _keep_or_take(take, state, **new):
    """``state`` with each named field replaced by ``new``'s value where ``take`` is true."""
    return state._replace(**{k: F.where(take, v, getattr(state, k)) for k, v in new.items()})


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc);
    NaN when it has none (the caller then rejects it by its bounds check)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    ca = (dc ** 2 * rb + (-db ** 2) * rc) / denom
    cb = ((-dc ** 3) * rb + db ** 3 * rc) / denom
    return a + (-cb + F.sqrt(cb * cb - 3.0 * ca * fpa)) / (3.0 * ca)


def _quadratic_minimizer(a, fa, fpa, b, fb):
    """The minimizer of the parabola through (a, fa) with slope fpa at a and (b, fb)."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * curv)


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(phi_dphi, sufficient_decrease_fails, curvature_holds, a_lo, phi_lo, dphi_lo, a_hi,
          phi_hi, dphi_hi, g_0, skip):
    """Algorithm 3.6: shrink the bracket [a_lo, a_hi] (in either order) until a step meets the
    strong Wolfe conditions.  Trial steps: the cubic interpolant's minimizer (from the second
    trial on, when it lies well inside the bracket), else the quadratic's, else the midpoint.
    ``skip`` (a boolean) makes it return at once: the caller runs a zoom whose result it may
    not use, so that the program has no value-dependent branch."""
    state = _Zoom(done=F.asarray(False), failed=F.asarray(False), j=_count(0), a_lo=a_lo,
                  phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
                  a_rec=(a_lo + a_hi) / 2.0,
                  phi_rec=(phi_lo + phi_hi) / 2.0,
                  a_star=F.ones((), F.asarray(a_lo).dtype), phi_star=phi_lo,
                  dphi_star=dphi_lo, g_star=g_0, nfev=_count(0), ngev=_count(0))
    known = concrete_value(skip)
    if known is not None and np.shape(known) == () and bool(known):
        # eagerly, a zoom whose result is not used is not run (under jit or vmap the loop
        # below stops at once instead)
        return state

    def step(s):
        width = s.a_hi - s.a_lo
        left, right = F.minimum(s.a_hi, s.a_lo), F.maximum(s.a_hi, s.a_lo)
        # a bracket this narrow cannot be shrunk usefully: the search (and the minimization)
        # stops, the Wolfe conditions unmet
        tiny = 1e-5 if np.finfo(F.asarray(width).dtype).bits < 64 else 1e-10
        s = s._replace(failed=s.failed | (width <= tiny))
        cubic = _cubic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec,
                                 s.phi_rec)
        use_cubic = (s.j > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
        quad = _quadratic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = (~use_cubic) & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
        a_j = F.where(use_cubic, cubic, s.a_rec)
        a_j = F.where(use_quad, quad, a_j)
        a_j = F.where((~use_cubic) & (~use_quad), (s.a_lo + s.a_hi) / 2.0, a_j)

        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j = F.astype(phi_j, F.asarray(s.phi_lo).dtype)
        dphi_j = F.astype(dphi_j, F.asarray(s.dphi_lo).dtype)
        g_j = F.astype(g_j, F.asarray(s.g_star).dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

        # the four outcomes of the trial: it becomes the new high end; it is the answer; the
        # slope says the old low end becomes the high end (and the trial the low end); or it
        # becomes the new low end
        to_hi = sufficient_decrease_fails(a_j, phi_j) | (phi_j >= s.phi_lo)
        found = curvature_holds(dphi_j) & (~to_hi)
        lo_to_hi = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & (~to_hi) & (~found)
        to_lo = (~to_hi) & (~found)

        s = _keep_or_take(to_hi, s, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi,
                          phi_rec=s.phi_hi)
        s = _keep_or_take(found, s._replace(done=found | s.done), a_star=a_j, phi_star=phi_j,
                          dphi_star=dphi_j, g_star=g_j)
        s = _keep_or_take(lo_to_hi, s, a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                          a_rec=s.a_hi, phi_rec=s.phi_hi)
        s = _keep_or_take(to_lo & ~lo_to_hi, s, a_rec=s.a_lo, phi_rec=s.phi_lo)
        s = _keep_or_take(to_lo, s, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        s = s._replace(j=s.j + 1)
        # more trials than SciPy's 10 allow for: the interpolation often needs them
        return s._replace(failed=s.failed | (s.j >= 30))

    return while_loop(lambda s: (~s.done) & (~skip) & (~s.failed), step, state)


class _Search(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class _LineSearchResults(NamedTuple):
    """The line search's answer: ``failed`` (the strong Wolfe conditions were not met),
    ``nit``, ``nfev``, ``ngev``, ``k``, the step ``a_k``, ``f_k`` and ``g_k`` (the value and
    gradient there) and ``status`` (0 found, 1 the zoom failed, 3 out of iterations)."""
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """A step ``a`` along the descent direction ``pk`` from ``xk`` that meets the strong Wolfe
    conditions f(xk + a pk) <= f(xk) + c1 a f'(xk; pk) and |f'(xk + a pk; pk)| <= c2
    |f'(xk; pk)|.  ``old_fval``, ``gfk``: f and its gradient at ``xk`` (computed when
    absent); ``old_old_fval``: f at the previous iterate, which sets the first trial step;
    ``maxiter``: the most bracketing steps (each doubles the step).  Returns a
    ``_LineSearchResults``."""
    xk, pk = F.asarray(xk), F.asarray(pk)
    dt = np.result_type(xk.dtype, pk.dtype)
    if dt.kind not in "fc":
        dt = F.asarray(1.0).dtype
    xk, pk = F.astype(xk, dt), F.astype(pk, dt)

    def phi_dphi(t):
        t = F.astype(F.asarray(t), pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, F.real(F.dot(g, pk)), g

    given = old_fval is not None and gfk is not None
    if given:
        phi_0, dphi_0 = old_fval, F.real(F.dot(gfk, pk))
    else:
        phi_0, dphi_0, gfk = phi_dphi(0)
    # the steps' dtype: the direction's real dtype (typed, not weak, so that every loop's
    # carry keeps one dtype)
    sdt = F.real(F.zeros((), pk.dtype)).dtype
    if old_old_fval is not None:
        guess = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        first_step = F.astype(F.where(guess > 1, 1.0, guess), sdt)
    else:
        first_step = F.ones((), sdt)

    def sufficient_decrease_fails(a, phi):
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_holds(dphi):
        return F.abs(dphi) <= -c2 * dphi_0

    state = _Search(done=F.asarray(False), failed=F.asarray(False), i=_count(1),
                    a_i1=F.zeros((), sdt), phi_i1=phi_0, dphi_i1=dphi_0,
                    nfev=_count(0 if given else 1), ngev=_count(0 if given else 1),
                    a_star=F.zeros((), sdt), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def step(s):
        # the first trial is first_step, each later one doubles the last (SciPy's choice; the
        # count starts at 1 as in Nocedal & Wright)
        a_i = F.where(s.i == 1, first_step, s.a_i1 * 2.0)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        zoom_up = sufficient_decrease_fails(a_i, phi_i) | ((phi_i >= s.phi_i1) & (s.i > 1))
        found = curvature_holds(dphi_i) & (~zoom_up)
        zoom_down = (dphi_i >= 0.0) & (~zoom_up) & (~found)
        z1 = _zoom(phi_dphi, sufficient_decrease_fails, curvature_holds, s.a_i1, s.phi_i1,
                   s.dphi_i1, a_i, phi_i, dphi_i, gfk, ~zoom_up)
        s = s._replace(nfev=s.nfev + z1.nfev, ngev=s.ngev + z1.ngev)
        z2 = _zoom(phi_dphi, sufficient_decrease_fails, curvature_holds, a_i, phi_i, dphi_i,
                   s.a_i1, s.phi_i1, s.dphi_i1, gfk, ~zoom_down)
        s = s._replace(nfev=s.nfev + z2.nfev, ngev=s.ngev + z2.ngev)
        s = _keep_or_take(zoom_up, s._replace(done=zoom_up | s.done,
                                              failed=(zoom_up & z1.failed) | s.failed),
                          a_star=z1.a_star, phi_star=z1.phi_star, dphi_star=z1.dphi_star,
                          g_star=z1.g_star)
        s = _keep_or_take(found, s._replace(done=found | s.done), a_star=a_i, phi_star=phi_i,
                          dphi_star=dphi_i, g_star=g_i)
        s = _keep_or_take(zoom_down, s._replace(done=zoom_down | s.done,
                                                failed=(zoom_down & z2.failed) | s.failed),
                          a_star=z2.a_star, phi_star=z2.phi_star, dphi_star=z2.dphi_star,
                          g_star=z2.g_star)
        return s._replace(i=s.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    s = while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed), step, state)
    status = F.where(s.failed, 1, F.where(s.i > maxiter, 3, 0))
    a_k = F.asarray(s.a_star)
    if np.finfo(a_k.dtype).bits != 64:
        # below 64 bits a vanishing step would stall the minimization on a zero direction
        a_k = F.where(F.abs(a_k) < 1e-8, F.sign(a_k) * 1e-8, a_k)
    return _LineSearchResults(failed=s.failed | (~s.done), nit=s.i - 1, nfev=s.nfev,
                              ngev=s.ngev, k=s.i, a_k=a_k, f_k=s.phi_star, g_k=s.g_star,
                              status=status)
