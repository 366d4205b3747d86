"""``odeint``: JAX's adaptive Dormand-Prince solver (``jax.experimental.ode``) on nx_rune's
ops and control flow, differentiated by the adjoint method.  See ``nx_rune.scipy.integrate``.
"""
from __future__ import annotations

import math
import weakref
from typing import Any, Callable

import numpy as np

from nx_rune import frontend as F
from nx_rune import lax
from nx_rune.autodiff.api import vjp
from nx_rune.autodiff.custom import custom_vjp
from nx_rune.compiler.api import jit
from nx_rune.compiler.control._core import _aval, _trace_flat
from nx_rune.compiler.interpret import eval_program
from nx_rune.errors import ConcretizationTypeError, TracerArrayConversionError
from nx_rune.frontend.indexing import concrete_value as _concrete
from nx_rune.primitives import _interpreter
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["odeint"]

# Dormand-Prince 5(4): the nodes of stages 2..7, the stage weights (row i: stage i + 2), the
# 5th-order weights (the last stage's row: first same as last) and their difference to the
# embedded 4th-order ones
_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_BETA = ((1 / 5,),
         (3 / 40, 9 / 40),
         (44 / 45, -56 / 15, 32 / 9),
         (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
         (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
         (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_C_SOL = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_C_ERR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0)
# the weights of the midpoint value of the dense output (Shampine's, halved: the mid-step)
_C_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _const(values, dtype):
    return F.asarray(np.asarray(values, dtype=np.float64), dtype)


def _abs2(x):
    if x.dtype.kind == "c":
        return F.add(F.square(F.real(x)), F.square(F.imag(x)))
    return F.square(x)


def _norm(x):
    return F.sqrt(F.sum(_abs2(x)))


def _safe(den, ok):
    """``den`` where ``ok``, 1 elsewhere: a denominator whose quotient a ``where`` discards
    must not divide by zero (it would warn, and NaN its derivative)."""
    return F.where(ok, den, F.ones_like(den))


def _initial_step(fy, t0, y0, f0, rtol, atol, order=4):
    """Hairer, Norsett & Wanner's starting step (Solving ODEs I, II.4), with 2-norms as
    JAX's."""
    scale = F.astype(F.add(atol, F.multiply(F.abs(y0), rtol)), y0.dtype)
    d0, d1 = _norm(F.divide(y0, scale)), _norm(F.divide(f0, scale))
    tiny = F.logical_or(F.less(d0, 1e-5), F.less(d1, 1e-5))
    h0 = F.where(tiny, F.full_like(d0, 1e-6), F.divide(F.multiply(d0, 0.01), _safe(d1, ~tiny)))
    y1 = F.add(y0, F.multiply(F.astype(h0, y0.dtype), f0))
    f1 = fy(y1, F.add(t0, h0))
    d2 = F.divide(_norm(F.divide(F.subtract(f1, f0), scale)), h0)
    flat = F.logical_and(F.less_equal(d1, 1e-15), F.less_equal(d2, 1e-15))
    dmax = F.maximum(d1, d2)
    h1 = F.where(flat, F.maximum(F.multiply(h0, 1e-3), 1e-6),
                 F.power(F.divide(0.01, _safe(dmax, ~flat)), 1.0 / (order + 1.0)))
    return F.minimum(F.multiply(h0, 100.0), h1)


def _rk_step(fy, y0, f0, t0, dt):
    """One Dormand-Prince step: the 5th-order solution, its derivative (the last stage), the
    error estimate and the seven stages (rows)."""
    dty = F.astype(dt, f0.dtype)
    ks = [f0]
    for i in range(6):
        ti = F.add(t0, F.multiply(dt, _ALPHA[i]))
        yi = F.add(y0, F.multiply(dty, F.dot(_const(_BETA[i], f0.dtype), F.stack(ks))))
        ks.append(F.astype(fy(yi, ti), f0.dtype))
    k = F.stack(ks)
    y1 = F.add(F.multiply(dty, F.dot(_const(_C_SOL, f0.dtype), k)), y0)
    err = F.multiply(dty, F.dot(_const(_C_ERR, f0.dtype), k))
    return y1, ks[6], err, k


def _interp_fit(y0, y1, k, dt):
    """The coefficients (highest power first) of the 4th-order polynomial in the step's
    fraction through y0, the mid-step value, y1 and the end derivatives."""
    dt = F.astype(dt, y0.dtype)
    y_mid = F.add(y0, F.multiply(dt, F.dot(_const(_C_MID, y0.dtype), k)))
    dy0, dy1 = F.multiply(dt, k[0]), F.multiply(dt, k[6])
    a = (-2.0 * dy0 + 2.0 * dy1) - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = (5.0 * dy0 - 3.0 * dy1) + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = (-4.0 * dy0 + dy1) - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return F.stack([a, b, c, dy0, y0])


def _polyval(coeffs, x):
    out = F.zeros_like(coeffs[0])
    for i in range(coeffs.shape[0]):
        out = F.add(F.multiply(out, x), coeffs[i])
    return out


def _error_ratio(err, rtol, atol, y0, y1):
    tol = F.add(atol, F.multiply(F.maximum(F.abs(y0), F.abs(y1)), rtol))
    return F.sqrt(F.mean(_abs2(F.divide(err, F.astype(tol, err.dtype)))))


def _next_step(last, ratio):
    """The step after one of size ``last`` with error ratio ``ratio``: 0.9 ratio^(-1/5) times
    as long, within [0.2, 10], and never shorter after an accepted step (ratio < 1)."""
    dfactor = F.where(F.less(ratio, 1.0), F.ones_like(ratio), F.full_like(ratio, 0.2))
    zero = F.equal(ratio, 0.0)
    grow = F.multiply(F.power(_safe(ratio, ~zero), -1.0 / 5.0), 0.9)
    factor = F.minimum(F.maximum(grow, dfactor), 10.0)
    return F.where(zero, F.multiply(last, 10.0), F.multiply(last, factor))


def _solve(fy, rtol, atol, mxstep, hmax, y0, ts):
    """The solution of y' = fy(y, t) (y a vector) at the times ``ts``: shape (len(ts), n).
    Where the steps stop short of a time (``mxstep`` steps taken, or the step size gone to
    zero) that output and every later one is NaN."""
    f0 = F.astype(fy(y0, ts[0]), y0.dtype)
    dt0 = F.clip(_initial_step(fy, ts[0], y0, f0, rtol, atol), 0.0, hmax)
    # the time carried in the promoted dtype of the times and the steps (float32 times with a
    # float64 state step in float64)
    tdt = F.result_type(dt0.dtype, ts.dtype)
    t0, dt0 = F.astype(ts[0], tdt), F.astype(dt0, tdt)
    coeff0 = F.stack([y0] * 5)
    nan = F.full_like(y0, math.nan)

    def one_time(carry, target):
        ok, *state = carry

        def cond_fun(s):
            # (once a time was not reached the later ones are NaN: no steps for them)
            i, _, _, t, dt, _, _ = s
            going = F.logical_and(F.less(t, target), F.greater(dt, 0.0))
            return F.logical_and(F.logical_and(going, F.less(i, mxstep)), ok)

        def body_fun(s):
            i, y, f, t, dt, last_t, coeff = s
            y1, f1, err, k = _rk_step(fy, y, f, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_coeff = _interp_fit(y, y1, k, dt)
            dt1 = F.astype(F.clip(_next_step(dt, ratio), 0.0, hmax), dt.dtype)
            accept = F.less_equal(ratio, 1.0)
            new = [y1, f1, F.add(t, dt), dt1, t, new_coeff]
            old = [y, f, t, dt1, last_t, coeff]
            return [i + 1] + [F.where(accept, n, o) for n, o in zip(new, old)]

        i0 = F.zeros((), np.int32)
        _, y, f, t, dt, last_t, coeff = lax.while_loop(cond_fun, body_fun, [i0] + state)
        span = F.subtract(t, last_t)
        moved = F.greater(span, 0.0)
        frac = F.where(moved, F.divide(F.subtract(target, last_t), _safe(span, moved)),
                       F.zeros_like(span))
        ok = F.logical_and(ok, F.greater_equal(t, target))
        out = F.where(ok, _polyval(coeff, F.astype(frac, coeff.dtype)), nan)
        return [ok, y, f, t, dt, last_t, coeff], out

    init = [F.asarray(True), y0, f0, t0, dt0, t0, coeff0]
    _, ys = lax.scan(one_time, init, ts[1:])
    return F.concatenate([y0[None], ys])


def _inexact_array(x):
    return isinstance(x, ArrayBase) and x.dtype.kind in "fc"


def _adjoint_odeint(fun, rtol, atol, mxstep, hmax):
    """``ys = solve(y0, ts, *args)`` for the vector field ``fun(y, t, *args)`` (y a vector,
    args arrays or scalars), with its VJP by the adjoint method (JAX's): the cotangents of
    y0 and args are integrated backward from each output time to the previous one together
    with y, and each time's cotangent is g_i . fun(y_i, t_i)."""

    def run(y0, ts, *args):
        return _solve(lambda y, t: fun(y, t, *args), rtol, atol, mxstep, hmax, y0, ts)

    @custom_vjp
    def solve(y0, ts, *args):
        if _interpreter.get() is None:
            # the forward pass of an eager grad: compiled, as an eager odeint call
            try:
                return jit(run)(y0, ts, *args)
            except (ConcretizationTypeError, TracerArrayConversionError):
                pass
        return run(y0, ts, *args)

    def fwd(y0, ts, *args):
        ys = solve(y0, ts, *args)
        return ys, (ys, ts, args)

    def bwd(res, g):
        ys, ts, args = res
        diff = [i for i, a in enumerate(args) if _inexact_array(a)]

        def with_diff(a, dargs):
            a = list(a)
            for i, d in zip(diff, dargs):
                a[i] = d
            return a

        def aug_dynamics(state, s, *a):
            # s is minus the time: the augmented system runs backward in t, forward in s
            y, y_bar = state[0], state[1]
            y_dot, pullback = vjp(lambda y_, t_, *d: fun(y_, t_, *with_diff(a, d)),
                                  y, F.negative(s), *[a[i] for i in diff])
            cts = pullback(y_bar)
            return (F.negative(y_dot), cts[0], cts[1], tuple(cts[2:]))

        def back_one(carry, i):
            y_bar, t0_bar, args_bar = carry
            t_bar = F.astype(F.real(F.dot(fun(ys[i], ts[i], *args), g[i])), ts.dtype)
            t0_bar = F.subtract(t0_bar, t_bar)
            span = F.stack([F.negative(ts[i]), F.negative(ts[i - 1])])
            _, y_bar, t0_bar, args_bar = odeint(aug_dynamics, (ys[i], y_bar, t0_bar, args_bar),
                                                span, *args, rtol=rtol, atol=atol,
                                                mxstep=mxstep, hmax=hmax)
            y_bar, t0_bar = F.add(y_bar[1], g[i - 1]), t0_bar[1]
            return (y_bar, t0_bar, tuple(a[1] for a in args_bar)), t_bar

        n = ts.shape[0]
        t0_bar = F.zeros((), ts.dtype)
        args_bar = tuple(F.zeros_like(args[i]) for i in diff)
        if n == 1:
            y_bar, ts_bar = g[0], F.zeros_like(ts)
        else:
            (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
                back_one, (g[-1], t0_bar, args_bar), F.arange(n - 1, 0, -1))
            ts_bar = F.concatenate([t0_bar[None], F.astype(rev_ts_bar[::-1], ts.dtype)])
        out_args = [None] * len(args)
        for i, a in zip(diff, args_bar):
            out_args[i] = a
        return (y_bar, ts_bar, *out_args)

    solve.defvjp(fwd, bwd)
    return solve


def _closure_convert(fun, y0, t0, args):
    """``(fun2, consts)``: ``fun2(y, t, *args, *consts)`` computes ``fun(y, t, *args)`` where
    ``consts`` are the values of active transformations (grad, jvp, jit, vmap) that ``fun``
    closes over (a neural ODE's parameters), now explicit arguments, so that the adjoint
    differentiates in them and no transformation's value leaks into the solver's own (as
    JAX's closure_convert).  ``fun`` itself, without consts, when it closes over none, when
    no transformation is active, or when it cannot be traced (Python branches on values: it
    then runs eagerly only, and its closed-over values must be constants)."""
    if _interpreter.get() is None:
        return fun, []
    pos = [i for i, a in enumerate(args) if isinstance(a, ArrayBase)]

    def traced(y, t, *arrays):
        full = list(args)
        for i, a in zip(pos, arrays):
            full[i] = a
        return [fun(y, t, *full)]
    try:
        tr = _trace_flat(traced, [_aval(y0), _aval(t0)] + [_aval(args[i]) for i in pos],
                         "odeint")
    except (ConcretizationTypeError, TracerArrayConversionError):
        return fun, []
    if not tr.captured:
        return fun, []
    n = len(args)
    prog = tr.program

    def fun2(y, t, *rest):
        return eval_program(prog, [y, t] + [rest[i] for i in pos] + list(rest[n:]))[0]
    return fun2, list(tr.captured)


def _check_tolerance(x, name):
    v = _concrete(F.asarray(x))
    if v is not None and not (np.ndim(v) == 0 and v >= 0):
        raise ValueError(f"{name}: must be a non-negative scalar, got {x!r}")


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = math.inf, hmax: float = math.inf) -> Any:
    """The solution of dy/dt = func(y, t, *args), y(t[0]) = y0, at the times ``t``, as
    ``jax.experimental.ode.odeint``.

    ``y0``: an array or a pytree of arrays; ``func`` returns the same structure and shapes.
    ``t``: a 1-D non-decreasing sequence of times.  ``args``: arrays, scalars or pytrees of
    them, passed to ``func``.  ``rtol``, ``atol``: the local error tolerances; ``mxstep``: the
    most steps between two output times; ``hmax``: the largest step.  Returns ``y0``'s
    structure, each leaf with a new leading axis of length ``len(t)`` (the first row ``y0``).
    Where ``mxstep`` steps do not reach a time (or the step size underflows) that output and
    the later ones are NaN (JAX extrapolates the last step's polynomial there instead).

    Works eagerly, under ``jit`` and under ``vmap``.  Differentiable in ``y0``, ``t`` and the
    array leaves of ``args`` by the adjoint method (pass parameters through ``args``: values
    that ``func`` closes over are constants to the derivative), to any order, and in forward
    mode.
    """
    if not callable(func):
        raise TypeError(f"func: must be callable, got {type(func).__name__}")
    t = F.asarray(t)
    if t.dtype.kind not in "f":
        if t.dtype.kind in "biu":
            t = F.astype(t, F.asarray(1.0).dtype)
        else:
            raise TypeError(f"t: must be an array of real times, got dtype {t.dtype}")
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(f"t: expected a 1-D sequence of at least one time, got shape "
                         f"{t.shape}")
    tv = _concrete(t)
    if tv is not None and np.any(np.diff(np.asarray(tv, dtype=np.float64)) < 0):
        raise ValueError("t: the times must be non-decreasing")
    _check_tolerance(atol, "atol")
    _check_tolerance(rtol, "rtol")
    if isinstance(rtol, (int, float)) and not rtol > 0:
        raise ValueError(f"rtol: must be positive, got {rtol}")
    if not isinstance(mxstep, (int, float, np.integer, np.floating)) or not mxstep > 0:
        raise ValueError(f"mxstep: must be a positive number, got {mxstep!r}")

    y_leaves = tree_flatten(y0)[0]
    if not y_leaves:
        raise ValueError("y0: has no arrays")
    for x in y_leaves:
        if F.asarray(x).dtype.kind not in "biufc":
            raise TypeError(f"y0: its leaves must be numeric arrays, got dtype "
                            f"{F.asarray(x).dtype}")
    for a in tree_flatten(args)[0]:
        if not isinstance(a, (ArrayBase, np.ndarray, np.generic, int, float, complex, bool)):
            raise TypeError(f"args: odeint's extra arguments must be arrays or scalars (or "
                            f"pytrees of them), got {type(a).__name__}")

    if _interpreter.get() is None:
        # an eager call runs compiled, as JAX's (its solver is jitted): one trace of the
        # loops instead of every step's operations dispatched one by one
        solver = _compiled(func, rtol, atol, mxstep, hmax)
        if solver is not None:
            try:
                return solver(y0, t, *args)
            except (ConcretizationTypeError, TracerArrayConversionError):
                pass        # func branches on values in Python: it runs eagerly
    return _odeint(func, y0, t, args, rtol, atol, mxstep, hmax)


# compiled solvers of eager calls, per function (held weakly: a lambda made per call goes away)
# and tolerances
_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _compiled(func, rtol, atol, mxstep, hmax):
    key = (rtol, atol, mxstep, hmax)
    try:
        per = _COMPILED.setdefault(func, {})
        solver = per.get(key)
    except TypeError:         # not weakly referable, or tolerances that are not hashable
        return None
    if solver is None:
        ref = weakref.ref(func)

        def solve(y0, t, *args):
            return _odeint(ref(), y0, t, args, rtol, atol, mxstep, hmax)
        solver = per[key] = jit(solve)
    return solver


def _odeint(func, y0, t, args, rtol, atol, mxstep, hmax):
    leaves, y_td = tree_flatten(y0)
    leaves = [F.asarray(x) for x in leaves]
    dtype = F.result_type(*[x.dtype for x in leaves])
    if dtype.kind not in "fc":
        dtype = F.result_type(dtype, F.asarray(1.0).dtype)
    shapes = [x.shape for x in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    flat0 = F.concatenate([F.reshape(F.astype(x, dtype), (-1,)) for x in leaves])

    a_leaves, a_td = tree_flatten(args)
    for j, a in enumerate(a_leaves):
        # NumPy arrays become arrays (differentiable ones, in the adjoint's state as JAX's);
        # Python scalars stay weakly typed constants
        if isinstance(a, (np.ndarray, np.generic)):
            a_leaves[j] = F.asarray(a)

    def unravel(y, lead=()):
        if len(leaves) == 1 and leaves[0].dtype == dtype:    # one array: no slicing
            return tree_unflatten(y_td, [F.reshape(y, lead + shapes[0])])
        parts, start = [], 0
        for shape, size, x in zip(shapes, sizes, leaves):
            part = F.reshape(y[..., start:start + size], lead + shape)
            parts.append(part if x.dtype.kind not in "fc" or x.dtype == dtype
                         else F.astype(part, x.dtype))
            start += size
        return tree_unflatten(y_td, parts)

    n = sum(sizes)

    def fun(y, s, *a):
        # as JAX's, func's value counts by its raveled leaves: y0's structure, or any other
        # of as many values (a list state whose derivative is an array)
        out = func(unravel(y), s, *tree_unflatten(a_td, list(a)))
        o_leaves, o_td = tree_flatten(out)
        o_leaves = [F.asarray(o) for o in o_leaves]
        if o_td == y_td:
            for o, shape in zip(o_leaves, shapes):
                if o.shape != shape:
                    raise ValueError(f"func: returned shape {o.shape}, expected y0's {shape}")
        elif sum(o.size for o in o_leaves) != n:
            raise ValueError(f"func: returned {o_td} ({sum(o.size for o in o_leaves)} values), "
                             f"expected y0's structure {y_td} ({n} values)")
        flat = [F.reshape(F.astype(o, dtype), (-1,)) for o in o_leaves]
        return flat[0] if len(flat) == 1 else F.concatenate(flat)

    fun, consts = _closure_convert(fun, flat0, t[0], a_leaves)
    ys = _adjoint_odeint(fun, rtol, atol, mxstep, hmax)(flat0, t, *a_leaves, *consts)
    return unravel(ys, (t.shape[0],))
