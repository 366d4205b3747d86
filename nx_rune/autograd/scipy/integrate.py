"""``nx_rune.autograd.scipy.integrate``: autograd's ``odeint(func, y0, t, args=(), **kwargs)``
and ``scipy.integrate``'s other names (SciPy's, on concrete values).

``odeint`` is SciPy's ``odeint`` (LSODA) itself, as in autograd, so an autograd program gets
autograd's numbers; its reverse-mode derivative in ``y0``, ``t`` and ``args`` is the adjoint
method: between consecutive output times the augmented system (y, the cotangent of y, of t and
of the flattened ``args``) runs backwards by the same ``odeint``, whose own derivative is the
same construction, so second and higher reverse-mode derivatives work (forward mode transposes
that rule).  ``jit`` and ``vmap`` need a traceable integrator: ``nx_rune.scipy.integrate.odeint``
(JAX's Dormand-Prince, differentiable in every mode).
"""
import numpy as _np
import scipy.integrate as _si

import nx_rune as _nx
from nx_rune.autograd._namespace import populate as _populate
from nx_rune.autograd._wrap import in_x64 as _in_x64
from nx_rune.autograd.extend import defvjp_argnums as _defvjp_argnums
from nx_rune.autograd.extend import isbox as _isbox
from nx_rune.autograd.extend import primitive as _primitive
from nx_rune.autograd.misc.flatten import flatten as _flatten

__all__ = _populate(globals(), _si, None, "nx_rune.autograd.scipy.integrate")


def _lsoda(y0, t, flat_args, func, unflatten, options):
    """SciPy's odeint of ``func(y, t, *unflatten(flat_args))`` on concrete values."""
    if _isbox(y0) or _isbox(t) or _isbox(flat_args):
        raise TypeError("odeint (nx_rune.autograd.scipy.integrate) runs SciPy's LSODA on "
                        "concrete values, as autograd's does: it cannot be traced by jit or "
                        "vmap; use nx_rune.scipy.integrate.odeint there")
    args = unflatten(_nx.asarray(flat_args))

    def rhs(y, s):
        return _np.asarray(func(_nx.asarray(y), s, *args), dtype=_np.float64)
    return _nx.asarray(_si.odeint(rhs, _np.asarray(y0, _np.float64), _np.asarray(t, _np.float64),
                                  **dict(options)))


_lsoda_primitive = _primitive(_lsoda)


def _adjoint_vjp(argnums, yt, args, kwargs):
    """The cotangents of (y0, t, flat_args) selected by argnums, for a cotangent g of the
    solution yt (shape (T, D)): the adjoint system run backwards over each interval."""
    y0, t, flat_args, func, unflatten, options = args
    n_times, dim = yt.shape

    def rhs(y, s, flat):
        return func(y, s, *unflatten(flat))

    def augmented(state, s, flat):
        # state = (y, a_y, a_t, a_args): dy/ds = f; d(a)/ds = -(a_y . df/d(y, s, args))
        y, a_y = state[:dim], state[dim:2 * dim]
        s = _nx.asarray(s, dtype=_nx.float64)
        dy, pullback = _nx.vjp(rhs, y, s, flat)
        c_y, c_s, c_args = pullback(-a_y)
        return _nx.concatenate([dy, c_y, _nx.reshape(c_s, (1,)), c_args])

    def vjp(g):
        a_y = g[n_times - 1]
        a_t0 = _nx.zeros((), _nx.float64)
        a_args = _nx.zeros_like(flat_args)
        t_cotangents = []
        for i in range(n_times - 1, 0, -1):
            # moving the output time t[i] moves y(t[i]) along f
            a_ti = _nx.dot(rhs(yt[i], t[i], flat_args), g[i])
            t_cotangents.append(a_ti)
            a_t0 = a_t0 - a_ti
            start = _nx.concatenate([yt[i], a_y, _nx.reshape(a_t0, (1,)), a_args])
            end = _lsoda_primitive(start, _nx.stack([t[i], t[i - 1]]), flat_args,
                                   augmented, lambda flat: (flat,), options)[1]
            a_y = end[dim:2 * dim] + g[i - 1]
            a_t0, a_args = end[2 * dim], end[2 * dim + 1:]
        t_cotangents.append(a_t0)
        by_arg = {0: a_y, 1: _nx.stack(t_cotangents[::-1]), 2: a_args}
        return tuple(by_arg[k] for k in argnums)
    return vjp


_defvjp_argnums(_lsoda_primitive, _adjoint_vjp)


@_in_x64
def odeint(func, y0, t, args=(), **kwargs):
    """y at the times ``t`` (shape (T,)) of dy/dt = func(y, t, *args), y(t[0]) = y0 (shape
    (D,)): SciPy's ``odeint`` (LSODA, its keywords and default tolerances 1.49012e-8), shape
    (T, D), differentiable in reverse mode in ``y0``, ``t`` and the arrays in ``args`` (to
    any order), as autograd's.

    >>> import nx_rune.autograd.numpy as np
    >>> from nx_rune.autograd import grad
    >>> from nx_rune.autograd.scipy.integrate import odeint
    >>> decay = lambda y, t, k: -k * y
    >>> y = odeint(decay, np.array([1.0]), np.array([0.0, 1.0]), (np.array(2.0),))
    >>> round(float(y[1, 0]), 6)            # exp(-2)
    0.135335
    >>> dk = grad(lambda k: odeint(decay, np.array([1.0]), np.array([0.0, 1.0]), (k,))[1, 0])
    >>> round(float(dk(np.array(2.0))), 5)  # d/dk exp(-k) = -exp(-2)
    -0.13534
    """
    if not callable(func):
        raise TypeError(f"odeint: func must be callable, got {type(func).__name__}")
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"odeint: args must be a tuple, got {type(args).__name__}")
    for key in ("full_output", "tfirst"):
        if kwargs.get(key):
            raise ValueError(f"odeint: {key}=True is not supported (autograd's odeint neither)")
    flat_args, unflatten = _flatten(tuple(args))
    y0 = _nx.asarray(y0, dtype=_nx.float64)
    t = _nx.asarray(t, dtype=_nx.float64)
    if y0.ndim != 1:
        raise ValueError(f"odeint: y0 must be a vector (shape (D,)), got shape {tuple(y0.shape)}")
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a vector of times, got shape {tuple(t.shape)}")
    return _lsoda_primitive(y0, t, flat_args, func, unflatten, tuple(sorted(kwargs.items())))
