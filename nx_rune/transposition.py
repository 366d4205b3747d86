"""JAX's ``jax.linear_transpose`` (the transpose of a linear function) and
``jax.fwd_and_bwd`` (a function's forward and backward passes as two functions).

The transpose of a linear ``fun`` maps a cotangent of its output to cotangents of its inputs:
``<transpose(ct), v> == <ct, fun(v)>``.  For a linear function that is its vector-Jacobian
product at any point, so nx_rune computes it as ``vjp(fun, *zeros)`` with zeros of the
primals' shapes and dtypes (the point does not matter; zeros keep affine constants out of
the values read).  ``fun`` must be linear in its inputs: for a function that is not, this is
the transpose of its derivative at zero (JAX refuses such functions when it traces them).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from nx_rune import frontend
from nx_rune.autodiff.api import vjp
from nx_rune.autodiff.core import is_inexact
from nx_rune.compiler.api import eval_shape, jit
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["linear_transpose", "fwd_and_bwd"]


def linear_transpose(fun: Callable[..., Any], *primals: Any,
                     reduce_axes: Any = ()) -> Callable[[Any], tuple[Any, ...]]:
    """The transpose of the linear function ``fun`` at arguments shaped like ``primals``
    (arrays or ``ShapeDtypeStruct``s; only their shapes and dtypes are used), as JAX's
    ``jax.linear_transpose``: a function of one output cotangent (a pytree like ``fun``'s
    output, same shapes and dtypes) returning a tuple of input cotangents, one per primal.
    Inputs and outputs must be floating or complex.  ``reduce_axes``: only ``()``.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.linear_transpose(lambda x: 2.0 * x, nx.ones(3))(nx.ones(3))
    (Tensor([2., 2., 2.], dtype=float32),)
    """
    if not callable(fun):
        raise TypeError(f"linear_transpose: fun must be callable, got {type(fun).__name__}")
    if reduce_axes != ():
        raise ValueError(f"linear_transpose: reduce_axes must be () (JAX removed it), got "
                         f"{reduce_axes!r}")
    in_leaves, in_tree = tree_flatten(primals)
    in_avals = [(tuple(np.shape(x)), np.dtype(x.dtype) if hasattr(x, "dtype") else
                 frontend.asarray(x).dtype) for x in in_leaves]
    for i, (_, dt) in enumerate(in_avals):
        if not is_inexact(dt):
            raise TypeError(f"linear_transpose: primal leaf {i} has dtype {dt}; only floating "
                            f"and complex inputs are supported (as JAX's)")
    zeros = [frontend.zeros(s, dt) for s, dt in in_avals]
    out_info = eval_shape(fun, *tree_unflatten(in_tree, zeros))
    out_leaves, out_tree = tree_flatten(out_info)
    for i, o in enumerate(out_leaves):
        if not is_inexact(o.dtype):
            raise TypeError(f"linear_transpose: output leaf {i} has dtype {o.dtype}; only "
                            f"floating and complex outputs are supported (as JAX's)")

    def transposed(out_cotangent: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(f"linear_transpose: the cotangent's structure {ct_tree} does not "
                            f"match the function's output {out_tree}")
        for i, (c, o) in enumerate(zip(ct_leaves, out_leaves)):
            shape = tuple(np.shape(c))
            dt = c.dtype if hasattr(c, "dtype") else frontend.asarray(c).dtype
            if shape != tuple(o.shape) or np.dtype(dt) != np.dtype(o.dtype):
                raise TypeError(f"linear_transpose: cotangent leaf {i} has shape {shape} and "
                                f"dtype {dt}; the output's is {tuple(o.shape)}, {o.dtype}")
        _, fn = vjp(fun, *tree_unflatten(in_tree, [frontend.zeros(s, dt)
                                                  for s, dt in in_avals]))
        return tuple(fn(out_cotangent))

    transposed.__name__ = f"transpose({getattr(fun, '__name__', 'fun')})"
    return transposed




def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(fwd, bwd)``, the forward and backward passes of ``fun`` as two functions (JAX's
    ``jax.fwd_and_bwd``): ``fwd(*args)`` is ``(fun(*args), residuals)`` (with ``has_aux``,
    ``(out, residuals, aux)``), ``bwd(residuals, cotangent)`` the cotangents of the arguments
    ``argnums`` names (one array for an int ``argnums``, a tuple for a sequence).  With
    ``jitted`` (the default) ``fun`` runs compiled, its backward pass too, each compiled once
    per argument shapes.  ``residuals`` is the backward function of :func:`nx_rune.vjp` (JAX:
    a pytree of arrays), so it is passed to ``bwd`` outside ``jit``.

    Examples
    --------
    >>> import nx_rune as nx
    >>> fwd, bwd = nx.fwd_and_bwd(nx.sin, argnums=0)
    >>> y, res = fwd(nx.zeros(2))        # y: (2,), sin(0)
    >>> print(y, bwd(res, nx.ones(2)))   # the cotangent of x: cos(0) * 1
    [0. 0.] [1. 1.]
    """
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd: fun must be callable, got {type(fun).__name__}")
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums):
        raise TypeError(f"fwd_and_bwd: argnums must be an int or a non-empty sequence of "
                        f"ints, got {argnums!r}")
    run = jit(fun) if jitted else fun

    def fwd(*args: Any) -> tuple[Any, ...]:
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"fwd_and_bwd: argnums {i} is out of range for "
                                 f"{len(args)} positional arguments")
        pos = [i % len(args) for i in nums]

        def partial(*dyn: Any) -> Any:
            full = list(args)
            for i, d in zip(pos, dyn):
                full[i] = d
            return run(*full)
        return vjp(partial, *[args[i] for i in pos], has_aux=has_aux)

    def bwd(residuals: Callable[[Any], tuple[Any, ...]], cotangent: Any) -> Any:
        if not callable(residuals):
            raise TypeError(f"fwd_and_bwd: bwd takes the residuals fwd returned, got "
                            f"{type(residuals).__name__}")
        g = residuals(cotangent)
        return g[0] if isinstance(argnums, int) else g

    return fwd, bwd
