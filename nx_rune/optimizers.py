"""Gradient-based optimizers and learning-rate schedules in optax's style.

::

    opt = nx.optimizers.adam(1e-3)
    state = opt.init(params)
    for batch in data:
        grads = nx.grad(loss)(params, batch)
        updates, state = opt.update(grads, state, params)
        params = nx.optimizers.apply_updates(params, updates)

``params``, ``grads`` and ``updates`` are pytrees of float arrays of one structure (dicts, lists,
registered classes, ...).  The states are namedtuples of such pytrees plus a step count (a
Python int; an integer array once a jitted update returned it), so they are pytrees too.  The
update formulas are optax's (``sgd``, ``adam``, ``adamw``, ``rmsprop`` with their default
arguments); they are written with front-end ops, so an update is itself differentiable.  A
learning rate is a number or a schedule: a function of the step count (0 for the first
update) returning a number.

Updates work under ``nx.jit`` (``nx.jit(opt.update)``), with any schedule: there the step
count is a traced integer, and the schedules compute with array operations (``nx.where``,
``nx.minimum``, ...; optax's formulas, in the default float dtype) instead of Python
branches.  Given a Python integer count they compute in Python floats, as before.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, NamedTuple, Union

import numpy as np

from nx_rune import frontend as ops
from nx_rune.frontend import zeros_like
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["GradientTransformation", "sgd", "adam", "adamw", "rmsprop", "apply_updates",
           "SgdState", "AdamState", "RmsPropState", "constant_schedule", "linear_schedule",
           "polynomial_schedule", "exponential_decay", "cosine_decay_schedule",
           "warmup_cosine_decay_schedule", "piecewise_constant_schedule", "join_schedules"]

Schedule = Callable[[int], float]
ScalarOrSchedule = Union[float, Schedule]


class GradientTransformation(NamedTuple):
    """An optimizer: ``init(params) -> state`` and ``update(grads, state, params=None) ->
    (updates, new_state)``."""
    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class SgdState(NamedTuple):
    """``count``: updates done; ``trace``: the momentum buffer (None without momentum)."""
    count: int
    trace: Any


class AdamState(NamedTuple):
    """``count``: updates done; ``mu``, ``nu``: the first and second moment estimates."""
    count: int
    mu: Any
    nu: Any


class RmsPropState(NamedTuple):
    """``count``: updates done; ``nu``: the moving average of squared gradients."""
    count: int
    nu: Any


# -- helpers -------------------------------------------------------------------------------

def _check_number(value, name, low=None, high=None, low_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value) or (low is not None and (value <= low if low_open else value < low)) \
            or (high is not None and value > high):
        lo = "" if low is None else f"{'>' if low_open else '>='} {low}"
        hi = "" if high is None else f"<= {high}"
        raise ValueError(f"{name}: must be {' and '.join(p for p in (lo, hi) if p)}, got "
                         f"{value}")
    return value


def _learning_rate_fn(learning_rate):
    """The learning rate as a function of the step count."""
    if callable(learning_rate):
        return learning_rate
    lr = _check_number(learning_rate, "learning_rate")
    return lambda count: lr


def _step_size(lr_fn, count):
    value = lr_fn(count)
    if isinstance(value, ArrayBase):
        if value.shape != ():
            raise ValueError(f"learning_rate: the schedule returned shape {value.shape} at step "
                             f"{count}; expected a scalar")
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"learning_rate: the schedule returned {type(value).__name__} at step "
                        f"{count}; expected a number")
    return float(value)


def _check_params(params, fname):
    for x in tree_leaves(params):
        dt = getattr(x, "dtype", None)
        if not (isinstance(x, float) or (dt is not None and np.dtype(dt).kind == "f")):
            what = dt if dt is not None else type(x).__name__
            raise TypeError(f"params: {fname} needs arrays of a real float dtype as leaves "
                            f"(an int param would be silently truncated), got {what}")


def _check_structure(tree, reference, name, fname):
    """ValueError unless ``tree`` has the structure of ``reference`` (the params at init)."""
    td, ref = tree_structure(tree), tree_structure(reference)
    if td != ref:
        raise ValueError(f"{name}: {fname} got a tree of structure {td}, which differs from "
                         f"the params' structure {ref}")


def _check_state(state, cls, fname):
    if not isinstance(state, cls):
        raise TypeError(f"state: {fname}.update expects the {cls.__name__} made by its init, "
                        f"got {type(state).__name__}")


def _zeros(params):
    return tree_map(zeros_like, params)


# -- the optimizers ------------------------------------------------------------------------

def sgd(learning_rate: ScalarOrSchedule, momentum: float = 0.0,
        nesterov: bool = False) -> GradientTransformation:
    """Stochastic gradient descent: ``update = -lr * g`` without momentum; with momentum m,
    optax's trace ``t = g + m * t`` and ``update = -lr * t`` (``-lr * (g + m * t)`` with
    nesterov).  State: ``SgdState(count, trace)``."""
    lr_fn = _learning_rate_fn(learning_rate)
    m = _check_number(momentum, "momentum", 0.0)

    def init(params):
        _check_params(params, "sgd")
        return SgdState(0, _zeros(params) if m else None)

    def update(grads, state, params=None):
        _check_state(state, SgdState, "sgd")
        step = _step_size(lr_fn, state.count)
        if m:
            _check_structure(grads, state.trace, "grads", "sgd")
            trace = tree_map(lambda g, t: g + m * t, grads, state.trace)
            direction = tree_map(lambda g, t: g + m * t, grads, trace) if nesterov else trace
        else:
            trace, direction = None, grads
        updates = tree_map(lambda d: -step * d, direction)
        return updates, SgdState(state.count + 1, trace)

    return GradientTransformation(init, update)


def _adam_moments(grads, state, b1, b2, eps):
    """optax's scale_by_adam: the bias-corrected direction and the new moments."""
    mu = tree_map(lambda g, t: (1 - b1) * g + b1 * t, grads, state.mu)
    nu = tree_map(lambda g, t: (1 - b2) * (g * g) + b2 * t, grads, state.nu)
    k = state.count + 1
    c1, c2 = _bias_correction(b1, k), _bias_correction(b2, k)
    direction = tree_map(lambda m, v: (m / c1) / (ops.sqrt(v / c2) + eps), mu, nu)
    return direction, mu, nu


def _bias_correction(b, k):
    """``1 - b ** k`` (k >= 1).  A Python count, or a weakly typed one (a Python int passed to
    a jitted update: arithmetic with Python numbers is exact there), computes it as Python
    does.  An integer array count (the count a jitted update returned) computes
    ``-expm1(k log b)``: in float32, ``1 - 0.999 ** k`` loses about five digits to
    cancellation at small k, this form none."""
    if _concrete_count(k) or getattr(k, "weak_type", False):
        return 1 - b ** k
    if b == 0:
        return 1.0
    return -ops.expm1(k * math.log(b))


def _adam_checks(b1, b2, eps):
    return (_check_number(b1, "b1", 0.0, 1.0), _check_number(b2, "b2", 0.0, 1.0),
            _check_number(eps, "eps", 0.0))


def adam(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> GradientTransformation:
    """Adam (optax's): ``mu = b1 mu + (1-b1) g``, ``nu = b2 nu + (1-b2) g^2``, at step k
    (1-based) ``update = -lr * mu_hat / (sqrt(nu_hat) + eps)`` with ``mu_hat = mu / (1 -
    b1^k)``, ``nu_hat = nu / (1 - b2^k)``.  State: ``AdamState(count, mu, nu)``."""
    lr_fn = _learning_rate_fn(learning_rate)
    b1, b2, eps = _adam_checks(b1, b2, eps)

    def init(params):
        _check_params(params, "adam")
        return AdamState(0, _zeros(params), _zeros(params))

    def update(grads, state, params=None):
        _check_state(state, AdamState, "adam")
        _check_structure(grads, state.mu, "grads", "adam")
        step = _step_size(lr_fn, state.count)
        direction, mu, nu = _adam_moments(grads, state, b1, b2, eps)
        updates = tree_map(lambda d: -step * d, direction)
        return updates, AdamState(state.count + 1, mu, nu)

    return GradientTransformation(init, update)


def adamw(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          weight_decay: float = 1e-4) -> GradientTransformation:
    """AdamW (optax's): Adam's direction plus the decoupled decay ``weight_decay * params``,
    both scaled by the learning rate: ``update = -lr * (adam_direction + weight_decay * p)``.
    ``update`` needs ``params`` (ValueError without them).  State: ``AdamState``."""
    lr_fn = _learning_rate_fn(learning_rate)
    b1, b2, eps = _adam_checks(b1, b2, eps)
    wd = _check_number(weight_decay, "weight_decay")

    def init(params):
        _check_params(params, "adamw")
        return AdamState(0, _zeros(params), _zeros(params))

    def update(grads, state, params=None):
        if params is None:
            raise ValueError("params: adamw.update(grads, state, params) needs the current "
                             "params for the weight decay; got params=None")
        _check_state(state, AdamState, "adamw")
        _check_structure(grads, state.mu, "grads", "adamw")
        _check_structure(params, state.mu, "params", "adamw")
        step = _step_size(lr_fn, state.count)
        direction, mu, nu = _adam_moments(grads, state, b1, b2, eps)
        updates = tree_map(lambda d, p: -step * (d + wd * p), direction, params)
        return updates, AdamState(state.count + 1, mu, nu)

    return GradientTransformation(init, update)


def rmsprop(learning_rate: ScalarOrSchedule, decay: float = 0.9,
            eps: float = 1e-8) -> GradientTransformation:
    """RMSprop (optax's, uncentered, no momentum): ``nu = decay nu + (1-decay) g^2``,
    ``update = -lr * g / sqrt(nu + eps)`` (eps inside the square root, as optax).  State:
    ``RmsPropState(count, nu)``."""
    lr_fn = _learning_rate_fn(learning_rate)
    decay = _check_number(decay, "decay", 0.0, 1.0)
    eps = _check_number(eps, "eps", 0.0)

    def init(params):
        _check_params(params, "rmsprop")
        return RmsPropState(0, _zeros(params))

    def update(grads, state, params=None):
        _check_state(state, RmsPropState, "rmsprop")
        _check_structure(grads, state.nu, "grads", "rmsprop")
        step = _step_size(lr_fn, state.count)
        nu = tree_map(lambda g, t: (1 - decay) * (g * g) + decay * t, grads, state.nu)
        updates = tree_map(lambda g, v: -step * g / ops.sqrt(v + eps), grads, nu)
        return updates, RmsPropState(state.count + 1, nu)

    return GradientTransformation(init, update)


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates`` leafwise, each result in its param's dtype (as optax); the trees
    must have one structure (ValueError naming both otherwise)."""
    def add(p, u):
        out = ops.add(p, u)
        dt = getattr(p, "dtype", None)
        return ops.astype(out, dt) if dt is not None and out.dtype != dt else out
    _check_structure(updates, params, "updates", "apply_updates")
    return tree_map(add, params, updates)


# -- schedules (optax's names and formulas; count is the 0-based step) ---------------------
# A count is a Python (or NumPy) integer, computed with in Python floats, or an array (a traced
# count under jit, or the count a jitted update returned), computed with front-end operations
# so that no Python branch reads its value.

def _concrete_count(count):
    return isinstance(count, numbers.Real) and not isinstance(count, ArrayBase)


def _as_count(count, fname):
    """An array count as a scalar array (TypeError for anything that is not a number)."""
    if isinstance(count, ArrayBase):
        if count.shape != ():
            raise ValueError(f"count: {fname} takes a scalar step count, got shape "
                             f"{count.shape}")
        return count
    raise TypeError(f"count: {fname} takes an integer step count, got "
                    f"{type(count).__name__}")


def constant_schedule(value: float) -> Schedule:
    """``count -> value``."""
    value = _check_number(value, "value")
    return lambda count: value


def polynomial_schedule(init_value: float, end_value: float, power: float,
                        transition_steps: int, transition_begin: int = 0) -> Schedule:
    """From init_value to end_value over transition_steps steps starting at transition_begin:
    ``(init - end) * (1 - c / transition_steps) ** power + end`` with ``c = clip(count -
    transition_begin, 0, transition_steps)``; constant init_value if transition_steps <= 0."""
    init_value = _check_number(init_value, "init_value")
    end_value = _check_number(end_value, "end_value")
    power = _check_number(power, "power")
    transition_steps, transition_begin = int(transition_steps), max(int(transition_begin), 0)
    if transition_steps <= 0:
        return lambda count: init_value

    def schedule(count):
        if not _concrete_count(count):
            c = ops.clip(_as_count(count, "polynomial_schedule") - transition_begin, 0,
                         transition_steps)
            return (init_value - end_value) * (1 - c / transition_steps) ** power + end_value
        c = min(max(count - transition_begin, 0), transition_steps)
        return (init_value - end_value) * (1 - c / transition_steps) ** power + end_value
    return schedule


def linear_schedule(init_value: float, end_value: float, transition_steps: int,
                    transition_begin: int = 0) -> Schedule:
    """``polynomial_schedule`` with power 1."""
    return polynomial_schedule(init_value, end_value, 1.0, transition_steps, transition_begin)


def exponential_decay(init_value: float, transition_steps: int, decay_rate: float,
                      transition_begin: int = 0, staircase: bool = False,
                      end_value: float | None = None) -> Schedule:
    """``init_value * decay_rate ** (c / transition_steps)`` with ``c = count -
    transition_begin`` (the exponent floored with staircase); init_value while ``c <= 0``;
    clipped at end_value (a lower bound when decay_rate < 1, else an upper bound).  Constant
    init_value when transition_steps <= 0 or decay_rate == 0 (as optax)."""
    init_value = _check_number(init_value, "init_value")
    decay_rate = _check_number(decay_rate, "decay_rate", 0.0)
    if end_value is not None:
        end_value = _check_number(end_value, "end_value")
    transition_steps, transition_begin = int(transition_steps), max(int(transition_begin), 0)
    if transition_steps <= 0 or decay_rate == 0:
        return lambda count: init_value

    def schedule(count):
        if not _concrete_count(count):
            c = _as_count(count, "exponential_decay") - transition_begin
            p = c / transition_steps
            if staircase:
                p = ops.floor(p)
            value = ops.where(c <= 0, init_value, init_value * decay_rate ** p)
            if end_value is not None:
                value = ops.maximum(value, end_value) if decay_rate < 1 else \
                    ops.minimum(value, end_value)
            return value
        c = count - transition_begin
        if c <= 0:
            value = init_value
        else:
            p = c / transition_steps
            value = init_value * decay_rate ** (math.floor(p) if staircase else p)
        if end_value is not None:
            value = max(value, end_value) if decay_rate < 1 else min(value, end_value)
        return value
    return schedule


def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0,
                          exponent: float = 1.0) -> Schedule:
    """``init_value * ((1 - alpha) * (0.5 (1 + cos(pi c / decay_steps))) ** exponent + alpha)``
    with ``c = min(count, decay_steps)``; ValueError unless decay_steps > 0."""
    init_value = _check_number(init_value, "init_value")
    alpha = _check_number(alpha, "alpha")
    exponent = _check_number(exponent, "exponent")
    if int(decay_steps) <= 0:
        raise ValueError(f"decay_steps: cosine_decay_schedule needs a positive number of steps, "
                         f"got {decay_steps}")
    decay_steps = int(decay_steps)

    def schedule(count):
        if not _concrete_count(count):
            c = ops.minimum(_as_count(count, "cosine_decay_schedule"), decay_steps)
            cosine = 0.5 * (1 + ops.cos(math.pi * c / decay_steps))
            return init_value * ((1 - alpha) * cosine ** exponent + alpha)
        c = min(count, decay_steps)
        cosine = 0.5 * (1 + math.cos(math.pi * c / decay_steps))
        return init_value * ((1 - alpha) * cosine ** exponent + alpha)
    return schedule


def join_schedules(schedules: list[Schedule], boundaries: list[int]) -> Schedule:
    """``schedules[i]`` from ``boundaries[i-1]`` on, each given the count since its boundary."""
    schedules, boundaries = list(schedules), [int(b) for b in boundaries]
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(f"boundaries: need one fewer boundary than schedules, got "
                         f"{len(boundaries)} boundaries for {len(schedules)} schedules")

    def schedule(count):
        if not _concrete_count(count):
            # optax's fold: each boundary reached switches to the next schedule, given the
            # count since that boundary
            count = _as_count(count, "join_schedules")
            value = schedules[0](count)
            for b, sched in zip(boundaries, schedules[1:]):
                value = ops.where(count < b, value, sched(count - b))
            return value
        which, start = 0, 0
        for i, b in enumerate(boundaries):     # the last boundary reached wins (optax's fold)
            if count >= b:
                which, start = i + 1, b
        return schedules[which](count - start)
    return schedule


def warmup_cosine_decay_schedule(init_value: float, peak_value: float, warmup_steps: int,
                                 decay_steps: int, end_value: float = 0.0,
                                 exponent: float = 1.0) -> Schedule:
    """Linear warmup from init_value to peak_value over warmup_steps, then a cosine decay to
    end_value until decay_steps (which counts the warmup, as optax)."""
    peak_value = _check_number(peak_value, "peak_value")
    end_value = _check_number(end_value, "end_value")
    alpha = 0.0 if peak_value == 0 else end_value / peak_value
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         cosine_decay_schedule(peak_value, int(decay_steps) - int(warmup_steps), alpha,
                               exponent)],
        [warmup_steps])


def piecewise_constant_schedule(init_value: float,
                                boundaries_and_scales: dict[int, float] | None = None
                                ) -> Schedule:
    """init_value times the product of the scales whose boundary the count has reached
    (``count >= boundary``, optax's rule); ValueError for a negative scale."""
    init_value = _check_number(init_value, "init_value")
    items = sorted((int(b), _check_number(s, "boundaries_and_scales", 0.0))
                   for b, s in (boundaries_and_scales or {}).items())

    def schedule(count):
        if not _concrete_count(count):
            count = _as_count(count, "piecewise_constant_schedule")
            value = init_value
            for boundary, scale in items:
                value = value * ops.where(count < boundary, 1.0, scale)
            return value
        value = init_value
        for boundary, scale in items:
            if count >= boundary:
                value *= scale
        return value
    return schedule


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
