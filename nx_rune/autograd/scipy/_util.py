"""Helpers of ``nx_rune.autograd.scipy``: SciPy functions as primitives, ``unbroadcast``."""
from __future__ import annotations

import functools

import nx_rune as _nx
from nx_rune.autograd._wrap import in_x64, to_nx
from nx_rune.autograd.extend import primitive

__all__ = ["scipy_primitive", "unbroadcast", "unbroadcast_f"]


def scipy_primitive(f):
    """SciPy's ``f`` as a primitive (its array results as Tensors); rules are added with
    ``defvjp``."""
    @functools.wraps(f)
    def run(*args, **kwargs):
        return to_nx(f(*args, **kwargs))
    return primitive(run)


@in_x64
def unbroadcast(target, g):
    """``g`` summed down to the shape of ``target`` (the VJP of broadcasting)."""
    shape = _nx.shape(target) if not hasattr(target, "shape") else tuple(target.shape)
    while _nx.ndim(g) > len(shape):
        g = _nx.sum(g, axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = _nx.sum(g, axis=axis, keepdims=True)
    return g


def unbroadcast_f(target, f):
    """``g -> unbroadcast(target, f(g))``."""
    return lambda g: unbroadcast(target, f(g))
