"""``flatten(value) -> (vector, unflatten)`` for nested lists, tuples and dicts of arrays and
scalars, as autograd's: dict items in sorted key order, the vector float64 (NumPy's promotion of
the leaves), ``unflatten`` differentiable."""
from __future__ import annotations

import nx_rune as _nx
from nx_rune.autograd._wrap import in_x64

__all__ = ["flatten", "flatten_func"]


def _leaves(value, out):
    t = type(value)
    if t in (list, tuple):
        for v in value:
            _leaves(v, out)
    elif t is dict:
        for k in sorted(value):
            _leaves(value[k], out)
    else:
        out.append(value)
    return out


def _rebuild(value, it):
    t = type(value)
    if t in (list, tuple):
        return t(_rebuild(v, it) for v in value)
    if t is dict:
        return {k: _rebuild(value[k], it) for k in sorted(value)}
    return next(it)


@in_x64
def flatten(value):
    """``(flat, unflatten)``: the leaves of ``value`` raveled and concatenated into one vector,
    and the function that rebuilds ``value``'s structure from such a vector."""
    leaves = [_nx.asarray(v) for v in _leaves(value, [])]
    shapes = [tuple(v.shape) for v in leaves]
    flat = _nx.concatenate([_nx.ravel(v) for v in leaves]) if leaves else _nx.zeros((0,))

    @in_x64
    def unflatten(vector):
        parts, start = [], 0
        for shape in shapes:
            size = 1
            for s in shape:
                size *= s
            parts.append(_nx.reshape(vector[start:start + size], shape))
            start += size
        return _rebuild(value, iter(parts))
    return flat, unflatten


def flatten_func(func, example):
    """``(flat_func, unflatten, flat_example)``: ``func`` as a function of a flat vector."""
    _ex, unflatten = flatten(example)

    def _func(_x, *args):
        return flatten(func(unflatten(_x), *args))[0]
    return _func, unflatten, _ex
