"""``nx.scipy.integrate``: ``odeint``, the solution of an ODE system at given times, as
``scipy.integrate.odeint`` (``func(y, t, *args)``) and ``jax.experimental.ode.odeint``; and the
trapezoidal rule over samples, ``trapezoid`` and ``cumulative_trapezoid`` (SciPy's; written with
nx_rune's ops, so differentiable in y and x, jittable and batchable).

The integrator is Dormand & Prince's embedded Runge-Kutta 5(4) pair with the usual step-size
control (Hairer, Norsett & Wanner, "Solving ODEs I", II.4: the initial step from the first
derivatives, the error measured as the RMS of err / (atol + rtol max(|y|, |y_new|)), the step
scaled by 0.9 ratio^(-1/5) within [0.2, 10]), stepping exactly onto each requested time.  The
steps are written with nx_rune's ops, so the solution is differentiable to any order in y0, t
and ``args`` (discretize-then-differentiate: the derivative of the computed solution; the step
sizes are chosen from the values, as constants).  Choosing steps needs concrete values: under
``jit`` or ``vmap`` (abstract or batched values) ``odeint`` raises NotImplementedError.
"""
from __future__ import annotations

import math

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.frontend._core import operand as _operand
from nx_rune.frontend._core import promote as _promote
from nx_rune.frontend.indexing import concrete_value as _concrete
from nx_rune.typing import Array, ArrayLike

__all__ = ["odeint", "trapezoid", "cumulative_trapezoid"]

# Dormand-Prince 5(4): nodes, stage weights, the 5th-order weights (also the last stage's row:
# first same as last) and the difference to the embedded 4th-order ones
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = ((),
      (1 / 5,),
      (3 / 40, 9 / 40),
      (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
      (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_B = _A[6] + (0.0,)
_E = tuple(b - bs for b, bs in zip(_B, (5179 / 57600, 0.0, 7571 / 16695, 393 / 640,
                                        -92097 / 339200, 187 / 2100, 1 / 40)))


def _value(x, what):
    v = _concrete(x)
    if v is None:
        raise NotImplementedError(f"odeint: {what} has no concrete value here (under jit or "
                                  f"vmap): the adaptive step sizes are chosen from the values")
    return np.asarray(v, dtype=np.float64)


def _rms(x):
    return float(np.sqrt(np.mean(np.square(x)))) if x.size else 0.0


def odeint(func, y0: ArrayLike, t: ArrayLike, *args, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = math.inf,
           hmax: float = math.inf) -> Array:
    """The solution of dy/dt = func(y, t, *args), y(t[0]) = y0, at the times ``t`` (a 1-D
    increasing sequence): shape ``(len(t),) + y0.shape``, the first row y0.  ``rtol``, ``atol``:
    the local error tolerances; ``mxstep``: the most steps between two output times (a
    RuntimeError beyond); ``hmax``: the largest step.  Differentiable in ``y0``, ``t`` and
    ``args`` (see the module docstring)."""
    y0 = F.asarray(y0)
    if y0.dtype.kind not in "fc":
        y0 = F.astype(y0, np.float64 if y0.dtype.itemsize >= 8 else F.asarray(1.0).dtype)
    t = F.asarray(t)
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(f"t: expected a 1-D sequence of at least one time, got shape "
                         f"{t.shape}")
    tv = _value(t, "t")
    if np.any(np.diff(tv) < 0):
        raise ValueError("t: the times must be non-decreasing")
    if not (rtol > 0 and atol >= 0):
        raise ValueError(f"rtol and atol: need rtol > 0 and atol >= 0, got {rtol}, {atol}")

    def f(y, s):
        dy = F.asarray(func(y, s, *args))
        if dy.shape != y0.shape:
            raise ValueError(f"func: returned shape {dy.shape}, expected y0's {y0.shape}")
        return dy if dy.dtype == y0.dtype else F.astype(dy, y0.dtype)

    y, s = y0, t[0]
    k1 = f(y, s)
    h = _initial_step(f, y, s, k1, rtol, atol, float(tv[-1] - tv[0]), hmax)
    out = [y0]
    for i in range(1, tv.shape[0]):
        target = float(tv[i])
        steps = 0
        while float(_value(s, "t")) < target:
            now = float(_value(s, "t"))
            last = h >= target - now
            step = F.subtract(t[i], s) if last else h
            y_new, k7, err = _dopri_step(f, y, s, k1, step)
            scale = atol + rtol * np.maximum(np.abs(_value(y, "y")), np.abs(_value(y_new, "y")))
            ratio = _rms(_value(err, "y") / scale)
            hv = (target - now) if last else h
            if ratio <= 1.0:
                y, k1 = y_new, k7
                s = t[i] if last else F.add(s, step)
            steps += 1
            if steps > mxstep:
                raise RuntimeError(f"odeint: more than mxstep={mxstep} steps between t = "
                                   f"{tv[i - 1]} and {tv[i]}")
            factor = 10.0 if ratio == 0 else min(10.0, max(0.2, 0.9 * ratio ** -0.2))
            h = min(hv * factor, hmax)
            if h <= 1e-14 * max(1.0, abs(now)):
                raise RuntimeError(f"odeint: the step size underflowed at t = {now}")
        out.append(y)
    return F.stack(out)


def _dopri_step(f, y, s, k1, h):
    # the last stage is evaluated at the 5th-order solution itself (first same as last)
    ks, y_stage = [k1], None
    for i in range(1, 7):
        y_stage = F.add(y, F.multiply(_comb(ks, _A[i]), h))
        if y_stage.dtype != y.dtype:      # a float64 time step keeps float32 states float32
            y_stage = F.astype(y_stage, y.dtype)
        node = F.add(s, F.multiply(h, _C[i])) if not isinstance(h, float) else \
            F.add(s, h * _C[i])
        ks.append(f(y_stage, node))
    err = F.multiply(_comb(ks, _E), h)
    return y_stage, ks[6], err


def _comb(ks, weights):
    total = None
    for w, k in zip(weights, ks):
        if w:
            term = F.multiply(k, w)
            total = term if total is None else F.add(total, term)
    return total


def _initial_step(f, y0, s0, k1, rtol, atol, span, hmax):
    """Hairer, Norsett & Wanner's starting step for a 5th-order method (II.4)."""
    y, dy = _value(y0, "y0"), _value(k1, "y0")
    scale = atol + rtol * np.abs(y)
    d0, d1 = _rms(y / scale), _rms(dy / scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span) if span > 0 else h0
    y1 = F.add(y0, F.multiply(k1, h0))
    dy1 = _value(f(y1, F.add(s0, h0)), "y0")
    d2 = _rms((dy1 - dy) / scale) / h0
    h1 = max(1e-6, h0 * 1e-3) if max(d1, d2) <= 1e-15 else (0.01 / max(d1, d2)) ** 0.2
    return min(100 * h0, h1, hmax)


# -- the trapezoidal rule --------------------------------------------------------------------------

def _trapezoid_terms(y, x, dx, axis, name):
    """The areas d_i (y_i + y_(i+1)) / 2 of the trapezoids along ``axis``, moved to the last
    axis, in the promoted inexact dtype of y and x (or dx), and the axis as a non-negative
    int."""
    y = _operand(y)
    if y.ndim == 0:
        raise ValueError(f"y: {name} needs at least one axis, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: must be an int, got {axis!r}")
    if not -y.ndim <= axis < y.ndim:
        raise ValueError(f"axis: {axis} is out of range for y of shape {y.shape}")
    axis = int(axis) % y.ndim
    n = y.shape[axis]
    # y inexact before promoting with a Python float dx (64-bit ints integrate in float64, as
    # NumPy's, not in the default float a weak float would give)
    y = _as_inexact(y)
    if x is None:
        # dx, a scalar or an array, multiplies the sums as they lie (NumPy's broadcasting)
        y, d = _promote(y, dx)
        y, d = _as_inexact(y), _as_inexact(d)
    else:
        y, x = _promote(y, x if isinstance(x, (int, float, complex)) else _as_inexact(_operand(x)))
        y, x = _as_inexact(y), _as_inexact(x)
        if x.ndim == 1:
            if x.shape[0] != n:
                raise ValueError(f"x: its length {x.shape[0]} must be y's length {n} along "
                                 f"axis {axis}")
            d = F.reshape(F.diff(x), (1,) * axis + (max(n - 1, 0),) + (1,) * (y.ndim - axis - 1))
        elif x.ndim == y.ndim:
            if x.shape[axis] != n:
                raise ValueError(f"x: its length {x.shape[axis]} along axis {axis} must be "
                                 f"y's {n}")
            d = F.diff(x, axis=axis)
        else:
            raise ValueError(f"x: must be 1-D or have y's number of axes ({y.ndim}), got shape "
                             f"{x.shape}")
    hi = tuple(slice(1, None) if i == axis else slice(None) for i in range(y.ndim))
    lo = tuple(slice(None, -1) if i == axis else slice(None) for i in range(y.ndim))
    terms = F.divide(F.multiply(d, F.add(y[hi], y[lo])), 2.0)
    return F.moveaxis(terms, axis, -1), axis


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0,
              axis: int = -1) -> Array:
    """The integral of the samples ``y`` along ``axis`` by the trapezoidal rule, as
    ``scipy.integrate.trapezoid`` (and ``numpy.trapezoid``): at the points ``x`` (1-D of y's
    length along ``axis``, or y's shape) or spaced ``dx`` apart.  Returns y's shape without
    ``axis`` (0 for fewer than two samples), in the promoted inexact dtype (ints: the default
    float).  Differentiable in y, x and dx."""
    terms, _ = _trapezoid_terms(y, x, dx, axis, "trapezoid")
    return F.sum(terms, -1)


def cumulative_trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0,
                         axis: int = -1, initial: ArrayLike | None = None) -> Array:
    """The running integral of ``y`` along ``axis`` by the trapezoidal rule, as
    ``scipy.integrate.cumulative_trapezoid``: one value per interval (length n - 1 along
    ``axis``), or, with ``initial`` (SciPy accepts 0 only; a ValueError otherwise), that value
    inserted first (length n).  ``x`` and ``dx`` as ``trapezoid``'s.  Differentiable in y, x
    and dx."""
    if initial is not None:
        iv = _concrete(F.asarray(initial))
        if iv is None or np.ndim(iv) != 0 or iv != 0:
            raise ValueError(f"initial: must be None or 0 (SciPy's rule), got {initial!r}")
    terms, ax = _trapezoid_terms(y, x, dx, axis, "cumulative_trapezoid")
    out = F.cumsum(terms, -1)
    if initial is not None:
        out = F.concatenate([F.zeros_like(out[..., :1]), out], axis=-1) if out.shape[-1] \
            else F.zeros(out.shape[:-1] + (1,), out.dtype)
    return F.moveaxis(out, -1, ax)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
