"""``nx.scipy.integrate``: ``odeint``, the solution of an ODE system at given times, as
``jax.experimental.ode.odeint`` (``func(y, t, *args)``, y a pytree); and the trapezoidal rule over
samples, ``trapezoid`` and ``cumulative_trapezoid`` (SciPy's; written with nx_rune's ops, so
differentiable in y and x, jittable and batchable).

``odeint`` follows JAX's algorithm: Dormand & Prince's embedded Runge-Kutta 5(4) pair with
Hairer, Norsett & Wanner's step-size control (Solving ODEs I, II.4: the starting step from the
first derivatives, the error as the RMS of err / (atol + rtol max(|y|, |y_new|)), the step
scaled by 0.9 ratio^(-1/5) within [0.2, 10], never shrunk after an accepted step), an outer
loop over the requested times and an inner ``lax.while_loop`` of steps, each output
interpolated with the Dormand-Prince dense output (a 4th-order polynomial through the last
step) rather than stepped onto.  Being control flow of nx_rune's ops, it runs eagerly, under
``jit`` and under ``vmap`` (per-example step sizes: the loop runs until every example is done).
Derivatives come from the adjoint method (a ``custom_vjp`` whose backward pass integrates the
augmented system backward in time with this same ``odeint``), so they compose: grad of grad,
and forward mode through the transpose of the backward pass.
"""
from __future__ import annotations

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.frontend._core import operand as _operand
from nx_rune.frontend._core import promote as _promote
from nx_rune.frontend.indexing import concrete_value as _concrete
from nx_rune.scipy._odeint import odeint
from nx_rune.typing import Array, ArrayLike

__all__ = ["odeint", "trapezoid", "cumulative_trapezoid"]


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
