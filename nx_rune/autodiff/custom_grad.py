"""``nx.custom_gradient``: JAX's (and TensorFlow's) form of a custom derivative, a function that
returns its value together with its VJP."""
from __future__ import annotations

import functools
from typing import Any, Callable

from nx_rune.autodiff.custom import custom_vjp

__all__ = ["custom_gradient"]


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """A function with the derivative ``fun`` gives: ``fun(*args)`` returns ``(value,
    vjp_fn)`` where ``vjp_fn(g)`` maps the output's cotangent ``g`` (``value``'s structure) to
    a tuple with one cotangent per positional argument (a single array is accepted when there
    is one argument).  The decorated function returns ``value`` alone.

    Built on ``custom_vjp``, so it composes with every transformation (grad of grad uses
    ``vjp_fn``'s own derivative; forward mode its transpose).  The residual kept for the
    backward pass is the arguments: the backward pass calls ``fun`` again to get ``vjp_fn``
    (``vjp_fn`` may close over values of the forward pass, which another transformation such
    as ``vmap`` may have finished by then).

    Examples
    --------
    >>> import nx_rune as nx
    >>> @nx.custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: (g * 10.0,)
    >>> nx.grad(f)(3.0)
    Tensor(10., dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"custom_gradient: expected a function, got {type(fun).__name__}")
    name = getattr(fun, "__name__", "custom_gradient")

    def split(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2 and callable(out[1])):
            raise TypeError(f"custom_gradient {name}: the function must return a pair (value, "
                            f"vjp_fn) with vjp_fn callable, got {type(out).__name__}")
        return out

    def value(*args):
        return split(fun(*args))[0]

    def fwd(*args):
        return split(fun(*args))[0], args

    def bwd(args, g):
        ct = split(fun(*args))[1](g)
        if len(args) == 1 and not isinstance(ct, tuple):
            ct = (ct,)
        if not isinstance(ct, tuple) or len(ct) != len(args):
            raise TypeError(f"custom_gradient {name}: vjp_fn must return a tuple with one "
                            f"cotangent per positional argument ({len(args)}), got "
                            f"{ct if not isinstance(ct, tuple) else f'{len(ct)} entries'!r}")
        return ct

    cf = custom_vjp(value)
    cf.__name__ = name  # type: ignore[attr-defined]
    cf.defvjp(fwd, bwd)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if kwargs:
            raise TypeError(f"custom_gradient {name}: keyword arguments are not supported "
                            f"(pass them positionally, or close over them)")
        return cf(*args)
    return wrapped
