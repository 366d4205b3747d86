"""``nx.pure_callback`` and ``nx.experimental.io_callback``: call a Python (NumPy) function from
inside transformed code, with JAX's signatures.  How the calls run under ``jit``/``vmap``/
``grad``: ``nx_rune.compiler.callbacks``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nx_rune.compiler.callbacks import (
    VMAP_METHODS,
    callback_bind,
    checked,
    io_callback_op,
    pure_callback_op,
)
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["pure_callback", "io_callback"]


def _out_avals(result_shape_dtypes, what):
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for k, r in enumerate(leaves):
        try:
            shape = tuple(int(n) for n in r.shape)
            dtype = np.dtype(r.dtype)
        except (AttributeError, TypeError):
            raise TypeError(f"{what}: result_shape_dtypes must be a pytree of objects with "
                            f"shape and dtype (nx.ShapeDtypeStruct, arrays), got "
                            f"{type(r).__name__} at leaf {k}") from None
        avals.append((shape, dtype))
    return tuple(avals), tree


def _call(op, what, callback, result_shape_dtypes, args, kwargs, vmap_method):
    from nx_rune.frontend import asarray
    if not callable(callback):
        raise TypeError(f"{what}: callback must be callable, got {type(callback).__name__}")
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(f"{what}: vmap_method must be None or one of "
                         f"{', '.join(repr(m) for m in VMAP_METHODS)}, got {vmap_method!r}")
    out_avals, out_tree = _out_avals(result_shape_dtypes, what)
    leaves, in_tree = tree_flatten((tuple(args), dict(kwargs)))
    arrays = []
    for k, x in enumerate(leaves):
        try:
            arrays.append(x if isinstance(x, ArrayBase) else asarray(x))
        except TypeError:
            raise TypeError(f"{what}: the arguments must be arrays (in pytrees), got "
                            f"{type(x).__name__} at leaf {k}; close over other values") \
                from None

    def user(*arrs):
        a, kw = tree_unflatten(in_tree, list(arrs))
        out = callback(*a, **kw)
        flat, tree = tree_flatten(out)
        if tree != out_tree:
            raise TypeError(f"{what}: the callback returned the structure {tree}, "
                            f"result_shape_dtypes declares {out_tree}")
        return flat

    params = {"_user": user, "_callback": checked(user, out_avals, what),
              "out_avals": out_avals, "vmap_method": vmap_method, "what": what}
    outs = callback_bind(op, params, arrays)
    return tree_unflatten(out_tree, list(outs))


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """``callback(*args, **kwargs)`` computed by Python on NumPy arrays, callable from inside
    ``jit``, ``vmap`` and the other transformations (JAX's ``jax.pure_callback``).

    ``result_shape_dtypes``: a pytree of ``nx.ShapeDtypeStruct`` (or arrays) giving the
    results' shapes and dtypes; the callback must return that structure (its arrays are cast
    to the dtypes; a wrong shape raises).  Eagerly the callback runs at once; under ``jit`` it
    runs each time the compiled function runs, with that call's values (the compiler may skip
    a call whose results are unused, or merge equal calls: the function must be pure).
    ``vmap_method``: how ``vmap`` calls it, as in JAX: ``"sequential"`` (once per example),
    ``"expand_dims"`` (once on the batch; unbatched arguments get a leading axis of size 1),
    ``"broadcast_all"`` (once, every argument batched), ``"legacy_vectorized"`` (unbatched
    arguments as they are); None: vmap raises NotImplementedError.  Not differentiable (a
    ValueError under ``grad``/``jvp``; give it a rule with ``custom_jvp``/``custom_vjp``).
    ``sharding`` is accepted for JAX's signature (one device).

    Examples
    --------
    >>> import numpy as np, nx_rune as nx
    >>> f = nx.jit(lambda x: nx.pure_callback(np.sin, nx.ShapeDtypeStruct(x.shape, x.dtype), x))
    >>> f(nx.zeros(2))
    Tensor([0., 0.], dtype=float32)
    """
    return _call(pure_callback_op, "pure_callback", callback, result_shape_dtypes, args,
                 kwargs, vmap_method)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """``callback(*args, **kwargs)`` run for its effect (and results), JAX's
    ``jax.experimental.io_callback``: as :func:`pure_callback`, but never skipped or merged by
    the compiler, and kept in program order with the other effects (``ordered`` is accepted:
    nx_rune keeps every effect in order).  Under ``vmap`` it runs once per example, in order.
    ``result_shape_dtypes`` may be None for a callback that returns None."""
    return _call(io_callback_op, "io_callback", callback, result_shape_dtypes, args, kwargs,
                 "sequential")
