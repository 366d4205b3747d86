"""autograd's optimizers (``autograd.misc.optimizers``): ``sgd``, ``rmsprop``, ``adam``.

Each is ``opt(grad, x0, callback=None, num_iters=..., step_size=..., ...)``: ``grad(x, i)``
gives the gradient at iteration ``i``; ``callback(x, i, g)`` is called before each step; ``x0``
may be an array or a nested list/tuple/dict of arrays (flattened with ``misc.flatten``).  The
arithmetic is autograd's, in float64.
"""
from __future__ import annotations

import functools

import nx_rune as _nx
from nx_rune.autograd._wrap import in_x64
from nx_rune.autograd.misc.flatten import flatten

__all__ = ["sgd", "rmsprop", "adam", "unflatten_optimizer"]


def unflatten_optimizer(optimize):
    """An optimizer of flat vectors made into one of nested containers of arrays."""
    @functools.wraps(optimize)
    @in_x64
    def _optimize(grad, x0, callback=None, *args, **kwargs):
        _x0, unflatten = flatten(x0)

        def _grad(x, i):
            return flatten(grad(unflatten(x), i))[0]
        if callback:
            def _callback(x, i, g):
                return callback(unflatten(x), i, unflatten(g))
        else:
            _callback = None
        return unflatten(optimize(_grad, _x0, _callback, *args, **kwargs))
    return _optimize


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum ``mass``."""
    velocity = _nx.zeros(len(x), x.dtype)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10 ** -8):
    """Root-mean-square propagation."""
    avg_sq_grad = _nx.ones(len(x), x.dtype)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g ** 2 * (1 - gamma)
        x = x - step_size * g / (_nx.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999,
         eps=10 ** -8):
    """Adam (Kingma and Ba, arXiv:1412.6980): RMSprop with momentum and bias correction."""
    m = _nx.zeros(len(x), x.dtype)
    v = _nx.zeros(len(x), x.dtype)
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g ** 2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (_nx.sqrt(vhat) + eps)
    return x
