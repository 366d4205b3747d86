"""JAX's ``jax.example_libraries.optimizers`` on nx_rune: optimizers as ``(init_fun,
update_fun, get_params)`` triples, and step-size schedules.

::

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)
    for i in range(num_steps):
        grads = nx.grad(loss)(get_params(opt_state), batch)
        opt_state = opt_update(i, grads, opt_state)

``init_fun(params) -> opt_state``; ``update_fun(step, grads, opt_state) -> opt_state`` (step:
the int index of the update, 0 for the first; grads: a pytree of params' structure);
``get_params(opt_state) -> params``.  params is any pytree of float arrays; the state is an
:class:`OptimizerState`, itself a pytree, so ``nx.jit(opt_update)`` works (the step then is a
traced int, and every schedule here accepts one).  The formulas are JAX's, written with
nx_rune's array functions, so they give JAX's values (to rounding) and are differentiable.

A step size is a number or a schedule, a function of the step index returning a number:
:func:`constant`, :func:`exponential_decay`, :func:`inverse_time_decay`,
:func:`polynomial_decay`, :func:`piecewise_constant`, or any function.
"""
from __future__ import annotations

import functools
import operator
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np

from nx_rune import frontend as F
from nx_rune import tree as _tree
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import register_pytree_node

__all__ = ["OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov", "adagrad",
           "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay", "piecewise_constant",
           "make_schedule", "l2_norm", "clip_grads", "JoinPoint", "unpack_optimizer_state",
           "pack_optimizer_state"]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """The state of a pytree optimizer: ``packed_state`` (the per-leaf
states, flattened), ``tree_def`` (the params' structure) and ``subtree_defs`` (each per-leaf
state's structure).  A pytree whose leaves are the arrays of ``packed_state``."""
register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))

Schedule = Callable[[int], Any]


class Optimizer(NamedTuple):
    """An ``(init_fn, update_fn, params_fn)`` triple."""
    init_fn: Callable[[Any], Any]
    update_fn: Callable[[Any, Any, Any], Any]
    params_fn: Callable[[Any], Any]


def _unzip2(pairs):
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Decorator: from a maker of ``(init, update, get_params)`` for one array, a maker of the
    triple for pytrees of arrays (each leaf handled on its own, its state kept flattened in an
    :class:`OptimizerState`).  update_fun raises TypeError when the grads' structure is not the
    params'."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = _tree.flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = _unzip2(map(_tree.flatten, initial_states))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = _tree.flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(f"optimizer update function was passed a gradient tree that "
                                f"did not match the parameter tree structure with which it was "
                                f"initialized: parameter tree {tree} and grad tree {tree2}.")
            states = map(_tree.unflatten, subtrees, states_flat)
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            new_states_flat, subtrees2 = _unzip2(map(_tree.flatten, new_states))
            for subtree, subtree2 in zip(subtrees, subtrees2):
                if subtree2 != subtree:
                    raise TypeError(f"optimizer update function produced an output structure "
                                    f"that did not match its input structure: input {subtree} "
                                    f"and output {subtree2}.")
            return OptimizerState(new_states_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = map(_tree.unflatten, subtrees, states_flat)
            return _tree.unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _decay_power(b, i, dtype):
    """b ** (i + 1) in ``dtype``: the bias correction of step i.  A Python int step gives JAX's
    eager value (its integer power: squaring and multiplying in dtype); a traced one (under
    jit) a power whose exponent is taken in dtype, so that the result stays in dtype."""
    e = i + 1
    if isinstance(e, (ArrayBase, np.ndarray)):
        return F.power(F.asarray(b, dtype), F.astype(e, dtype))
    e = operator.index(e)
    base = np.asarray(b, dtype)
    acc = np.ones((), dtype)
    n = abs(e)
    while n:
        if n & 1:
            acc = acc * base
        n >>= 1
        if n:
            base = base * base
    return F.asarray(np.ones((), dtype) / acc if e < 0 else acc)


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g.  step_size: a positive number or
    a schedule.  Returns an (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return F.subtract(x, F.multiply(step_size(i), g))

    def get_params(x):
        return x
    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """SGD with momentum: v <- mass * v + g, x <- x - step_size(i) * v.  Returns an
    (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, F.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = F.add(F.multiply(mass, velocity), g)
        return F.subtract(x, F.multiply(step_size(i), velocity)), velocity

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """SGD with Nesterov momentum: v <- mass * v + g, x <- x - step_size(i) * (mass * v + g).
    Returns an (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, F.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = F.add(F.multiply(mass, velocity), g)
        x = F.subtract(x, F.multiply(step_size(i), F.add(F.multiply(mass, velocity), g)))
        return x, velocity

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum: G <- G + g**2, m <- (1 - momentum) * g /
    sqrt(G) + momentum * m (0 where G is 0), x <- x - step_size(i) * m.  Returns an
    (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, F.zeros_like(x0), F.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = F.add(g_sq, F.square(g))
        g_sq_inv_sqrt = F.where(F.greater(g_sq, 0), F.divide(1., F.sqrt(g_sq)), 0.0)
        m = F.add(F.multiply(1. - momentum, F.multiply(g, g_sq_inv_sqrt)),
                  F.multiply(momentum, m))
        x = F.subtract(x, F.multiply(step_size(i), m))
        return x, g_sq, m

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a <- gamma * a + (1 - gamma) * g**2, x <- x - step_size(i) * g / sqrt(a + eps).
    Returns an (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, F.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = F.add(F.multiply(avg_sq_grad, gamma), F.multiply(F.square(g), 1. - gamma))
        x = F.subtract(x, F.divide(F.multiply(step_size(i), g),
                                   F.sqrt(F.add(avg_sq_grad, eps))))
        return x, avg_sq_grad

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum: a as in :func:`rmsprop`, m <- momentum * m + step_size(i) * g /
    sqrt(a + eps), x <- x - m.  Returns an (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, F.zeros_like(x0), F.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = F.add(F.multiply(avg_sq_grad, gamma), F.multiply(F.square(g), 1. - gamma))
        mom = F.add(F.multiply(momentum, mom),
                    F.divide(F.multiply(step_size(i), g), F.sqrt(F.add(avg_sq_grad, eps))))
        return F.subtract(x, mom), avg_sq_grad, mom

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2015): m, v the moving averages of g and g**2 (rates b1, b2), bias
    corrected at step i by 1 - b**(i + 1); x <- x - step_size(i) * mhat / (sqrt(vhat) + eps).
    Returns an (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, F.zeros_like(x0), F.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = F.add(F.multiply(1 - b1, g), F.multiply(b1, m))             # first moment
        v = F.add(F.multiply(1 - b2, F.square(g)), F.multiply(b2, v))   # second moment
        mhat = F.divide(m, F.subtract(1, _decay_power(b1, i, m.dtype)))   # bias correction
        vhat = F.divide(v, F.subtract(1, _decay_power(b2, i, m.dtype)))
        x = F.subtract(x, F.divide(F.multiply(step_size(i), mhat), F.add(F.sqrt(vhat), eps)))
        return x, m, v

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Adam with the infinity norm): m as in Adam, u <- max(b2 * u, |g|), x <- x -
    step_size(i) / (1 - b1**(i + 1)) * m / (u + eps).  Returns an (init_fun, update_fun,
    get_params) triple."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, F.zeros_like(x0), F.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = F.add(F.multiply(1 - b1, g), F.multiply(b1, m))
        u = F.maximum(F.multiply(b2, u), F.abs(g))
        rate = F.divide(step_size(i), F.subtract(1, _decay_power(b1, i, m.dtype)))
        x = F.subtract(x, F.divide(F.multiply(rate, m), F.add(u, eps)))
        return x, m, u

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019), memory-efficient adaptive optimization: one accumulator per
    axis, and momentum.  Returns an (init_fun, update_fun, get_params) triple."""
    step_size = make_schedule(step_size)

    def splice(seq, i, x):
        lst = list(seq)
        lst[i:i + 1] = x
        return lst

    def broadcast_into(ndim, x, axis):
        idx = splice([None] * ndim, axis, [slice(None)])
        return x[tuple(idx)]

    def init(x0):
        x_shape = x0.shape
        x0 = F.atleast_1d(x0)
        vs = [F.zeros(sz, dtype=x0.dtype) for sz in x0.shape]
        return x0, F.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        vs = [broadcast_into(g.ndim, v, j) for j, v in enumerate(vs)]
        accum = F.add(functools.reduce(F.minimum, vs), F.square(g))
        accum_inv_sqrt = F.where(F.greater(accum, 0), F.divide(1., F.sqrt(accum)), 0)
        m = F.add(F.multiply(1. - momentum, F.multiply(g, accum_inv_sqrt)),
                  F.multiply(momentum, m))
        x = F.subtract(x, F.multiply(step_size(i), m))
        vs = [F.max(accum, splice(range(x.ndim), j, [])) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return F.reshape(x, x_shape)
    return init, update, get_params


# -- schedules ---------------------------------------------------------------------------------

def constant(step_size) -> Schedule:
    """The schedule i -> step_size."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """The schedule i -> step_size * decay_rate ** (i / decay_steps)."""
    def schedule(i):
        # Python operators, as JAX writes it: a Python int step stays in Python floats, a
        # traced one gives a default-float array
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """The schedule i -> step_size / (1 + decay_rate * i / decay_steps); with ``staircase``
    i / decay_steps is rounded down."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * F.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """The schedule from step_size at i = 0 to final_step_size at i >= decay_steps along
    (1 - i / decay_steps) ** power."""
    def schedule(step_num):
        step_num = F.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """The schedule i -> values[k], k the number of boundaries below i (boundaries: n
    increasing ints, values: n + 1 numbers)."""
    boundaries = F.asarray(boundaries)
    values = F.asarray(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[F.sum(F.greater(i, boundaries))]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule from a schedule (returned as is) or a number (:func:`constant`); TypeError
    for anything else."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# -- utilities -------------------------------------------------------------------------------

def l2_norm(tree: Any) -> Any:
    """The l2 norm of a pytree of arrays: sqrt of the sum of every leaf's squared entries
    (a 0-d array)."""
    leaves, _ = _tree.flatten(tree)
    return F.sqrt(sum(F.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """``grad_tree`` scaled down to l2 norm ``max_norm`` when its norm is larger (a pytree of
    the same structure)."""
    norm = l2_norm(grad_tree)
    return _tree.map(lambda g: F.where(F.less(norm, max_norm), g,
                                       F.multiply(g, F.divide(max_norm, norm))), grad_tree)


class JoinPoint:
    """Marks the boundary between two joined (nested) pytrees."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as a pytree of params' structure whose leaves are :class:`JoinPoint`\\ s
    holding each leaf's state (for serializing); :func:`pack_optimizer_state` inverts it."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(_tree.unflatten, subtree_defs, states_flat)
    return _tree.unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The :class:`OptimizerState` of a pytree made by :func:`unpack_optimizer_state`;
    TypeError when a leaf is not a JoinPoint."""
    sentinels, tree_def = _tree.flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: every leaf of marked_pytree must be a JoinPoint "
                        "(as unpack_optimizer_state makes them)")
    subtrees = [s.subtree for s in sentinels]
    states_flat, subtree_defs = _unzip2(map(_tree.flatten, subtrees))
    return OptimizerState(states_flat, tree_def, subtree_defs)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
