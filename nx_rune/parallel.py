"""``nx.pmap``: JAX's ``jax.pmap`` on one CPU device, as a compiled ``vmap``.

JAX maps the leading axis of the arguments over devices; nx_rune has one device, so the mapped
axis is a batch axis computed at once (any size is accepted, as JAX's CPU users get with
``--xla_force_host_platform_device_count``).  The collectives of ``nx.lax`` (``psum``,
``pmean``, ``all_gather``, ...) work over its ``axis_name`` exactly as under ``vmap``.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

__all__ = ["pmap"]


def _argnums(v, what):
    if v is None:
        return ()
    if isinstance(v, int):
        v = (v,)
    try:
        return tuple(operator.index(i) for i in v)
    except TypeError:
        raise TypeError(f"pmap: {what} must be an int or a sequence of ints, got {v!r}") \
            from None


def pmap(fun: Callable[..., Any], axis_name: Any = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: Any = (), devices: Any = None,
         backend: str | None = None, axis_size: int | None = None,
         donate_argnums: Any = ()) -> Callable[..., Any]:
    """``fun`` mapped over the leading (or ``in_axes``) axis of its arguments, compiled, with
    the mapped axis named ``axis_name`` for the collectives inside: ``jit(vmap(fun, in_axes,
    out_axes, axis_name=axis_name))`` (JAX's ``pmap`` on one device).

    ``static_broadcasted_argnums``: positional arguments passed to ``fun`` as Python values
    (hashable; a new trace per value) and not mapped.  ``in_axes``: as vmap's, with one entry
    per positional argument (the static ones included, as in JAX) when a tuple.  ``devices``,
    ``backend`` and ``donate_argnums`` are accepted for JAX's signature (one device: no
    placement, no donation).  Returns a function whose outputs have the mapped axis at
    ``out_axes``.

    Examples
    --------
    >>> import nx_rune as nx
    >>> from nx_rune import lax
    >>> nx.pmap(lambda x: x / lax.psum(x, 'i'), axis_name='i')(nx.arange(1.0, 4.0))
    Tensor([0.16666667, 0.33333334, 0.5       ], dtype=float32)
    """
    from nx_rune.autodiff.batching import vmap
    from nx_rune.compiler import jit
    if not callable(fun):
        raise TypeError(f"pmap: expected a function, got {type(fun).__name__}")
    static = _argnums(static_broadcasted_argnums, "static_broadcasted_argnums")
    _argnums(donate_argnums, "donate_argnums")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    def mapped(*args, **kwargs):
        n = len(args)
        stat = {i % n for i in static} if n else set()
        dyn = [i for i in range(n) if i not in stat]
        axes = tuple(in_axes[i] for i in dyn) if isinstance(in_axes, tuple) else in_axes

        def per_example(*dargs, **kw):
            full = list(args)
            for i, d in zip(dyn, dargs):
                full[i] = d
            return fun(*full, **kw)
        return vmap(per_example, in_axes=axes, out_axes=out_axes, axis_size=axis_size,
                    axis_name=axis_name)(*[args[i] for i in dyn], **kwargs)

    mapped.__name__ = f"pmap({getattr(fun, '__name__', 'fun')})"
    compiled = jit(mapped, static_argnums=static)

    @functools.wraps(fun)
    def pmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"pmap: in_axes has {len(in_axes)} entries (one per positional "
                             f"argument) but the function was called with {len(args)} "
                             f"positional arguments")
        for i in static:
            if not -len(args) <= i < len(args):
                raise ValueError(f"pmap: static_broadcasted_argnums {i} is out of range for "
                                 f"{len(args)} positional arguments")
        return compiled(*args, **kwargs)
    return pmap_f
