"""``nx.scipy.optimize``: ``minimize`` (BFGS, and JAX's experimental L-BFGS) returning
``OptimizeResults``, as ``jax.scipy.optimize``.

The minimizers are loops of nx_rune's ops (``lax.while_loop`` around a strong-Wolfe line
search), so ``minimize`` runs eagerly, under ``jit`` and under ``vmap`` (each example iterating
until it has converged), with the same iterates as JAX's.  JAX does not differentiate
``minimize``; here forward mode goes through the iterations (the derivative of the computed
iterates, not an implicit one), and so does reverse mode eagerly, where the loops are Python
loops; under ``jit`` reverse mode raises, as for every ``lax.while_loop``.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from nx_rune import frontend as F
from nx_rune.scipy.optimize._bfgs import minimize_bfgs, minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of ``minimize``.

    ``x``: the solution; ``success``: whether it converged; ``status``: 0 converged, 1 out of
    iterations, 3 the line search's zoom failed, 4 a saddle point, 5 the line search ran out of
    iterations, -1 undefined (L-BFGS: 2 ``maxfun``, 3 ``maxgrad``, 4 too little decrease, 5
    the line search failed); ``fun``, ``jac``: the objective and its gradient at ``x``;
    ``hess_inv``: the inverse Hessian estimate (None for L-BFGS); ``nfev``, ``njev``: the
    counts of objective and gradient evaluations; ``nit``: the iterations.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


_OPTIONS = {
    "bfgs": ("maxiter", "norm", "gtol", "line_search_maxiter"),
    "l-bfgs-experimental-do-not-rely-on-this": ("maxiter", "norm", "maxcor", "ftol", "gtol",
                                                "maxfun", "maxgrad", "maxls"),
}


def minimize(fun: Callable, x0: Any, args: tuple = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """The minimum of ``fun(x, *args)`` (a real scalar) over the 1-D array ``x``, from ``x0``.

    ``method``: ``"BFGS"`` (options ``maxiter`` (default 200 per variable), ``norm`` (of the
    gradient in the convergence test, default inf), ``gtol`` (default 1e-5),
    ``line_search_maxiter`` (default 10)) or ``"l-bfgs-experimental-do-not-rely-on-this"``
    (options ``maxiter``, ``norm``, ``maxcor`` (10), ``ftol``, ``gtol``, ``maxfun``,
    ``maxgrad``, ``maxls`` (20)); case does not matter.  ``tol`` is accepted and, as in JAX,
    not used: set ``options["gtol"]``.  Gradients come from nx_rune's autodiff.  An integer
    ``x0`` is taken as the default float dtype.  Returns ``OptimizeResults``; usable under
    ``jit`` and ``vmap``.
    """
    if not callable(fun):
        raise TypeError(f"minimize: fun must be callable, got {type(fun).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to minimize must be a tuple, got "
                        f"{type(args).__name__}")
    if not isinstance(method, str):
        raise TypeError(f"minimize: method must be a string, got {type(method).__name__}")
    name = method.lower()
    if name not in _OPTIONS:
        raise ValueError(f"minimize: method {method!r} not recognized (supported: 'BFGS', "
                         f"'l-bfgs-experimental-do-not-rely-on-this')")
    options = {} if options is None else dict(options)
    unknown = sorted(set(options) - set(_OPTIONS[name]))
    if unknown:
        raise TypeError(f"minimize: options {unknown} are not options of method {method!r} "
                        f"(it takes {list(_OPTIONS[name])})")
    x0 = F.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be a 1-D array, got shape {x0.shape}")
    if x0.dtype.kind not in "fc":
        x0 = F.astype(x0, F.asarray(1.0).dtype)

    def objective(x):
        return fun(x, *args)

    if name == "bfgs":
        r = minimize_bfgs(objective, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & F.logical_not(r.failed),
                               status=r.status, fun=r.f_k, jac=r.g_k, hess_inv=r.H_k,
                               nfev=r.nfev, njev=r.ngev, nit=r.k)
    r = minimize_lbfgs(objective, x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & F.logical_not(r.failed),
                           status=r.status, fun=r.f_k, jac=r.g_k, hess_inv=None, nfev=r.nfev,
                           njev=r.ngev, nit=r.k)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
