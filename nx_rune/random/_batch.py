"""nx.random's samplers under nx.vmap of concrete values: one example at a time through the
fast path."""
import functools
import math

import numpy as np

from nx_rune.autodiff import batching as _batching
from nx_rune.autodiff.batching import BatchTracer as _BatchTracer
from nx_rune.random._ynn_math import vmap_examples
from nx_rune.tensor import ArrayBase, Tensor

# ---------------------------------------------------------------------------------------------
# under nx.vmap of concrete values: one example at a time through the fast path
# ---------------------------------------------------------------------------------------------

def _batched_concrete(v):
    """True when ``v`` is batched by vmap levels only (no derivative, no jit) over a concrete
    Tensor with at least one example per level."""
    while isinstance(v, _BatchTracer):
        if v._interp.axis_size == 0:
            return False
        v = v.primal
    return isinstance(v, Tensor)


def _over_batch(fn):
    """``fn`` (a sampler) that, given values batched by ``nx.vmap`` over concrete values,
    runs the fast concrete path once per example (a batched argument sliced, the others
    shared) and stacks the results: key by key what ``jax.vmap`` of the sampler gives, bit for
    bit.  Other traced values (jit, grad, an empty batch) go to ``fn``'s traced chains, which
    the transformations handle themselves."""
    by_primitive = fn.__name__ in _KEY_BATCHED

    @functools.wraps(fn)
    def sampler(*args, **kwargs):
        if not any(isinstance(v, ArrayBase) and not isinstance(v, Tensor)
                   for v in (*args, *kwargs.values())):
            return fn(*args, **kwargs)                 # concrete values: no vmap to count
        # XLA:CPU's choices (YNNPACK from 4,096 elements) count the whole vmap batch
        with vmap_examples(_examples(args, kwargs)):
            return _sample(*args, **kwargs)

    def _sample(*args, **kwargs):
        batched = False
        for v in (*args, *kwargs.values()):
            if isinstance(v, ArrayBase) and not isinstance(v, Tensor):
                if not _batched_concrete(v):
                    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                        return fn(*args, **kwargs)
                batched = True
        if batched:
            if by_primitive and _only_key_batched(args, kwargs):
                # the batch of keys goes to the sampler primitive in one call
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    return fn(*args, **kwargs)
            return _batching.map_concrete(sampler, args, kwargs)
        return fn(*args, **kwargs)
    return sampler


def _examples(args, kwargs):
    """The number of examples of the vmap levels batching any argument (1 without vmap): the
    product of the sizes of the distinct levels in the arguments' tracers."""
    sizes = {}
    for v in (*args, *kwargs.values()):
        while isinstance(v, ArrayBase) and not isinstance(v, Tensor):
            c = _batching.concrete(v)           # (below any differentiating levels)
            if not isinstance(c, _BatchTracer):
                break
            sizes[id(c._interp)] = c._interp.axis_size
            v = c.primal
    return math.prod(sizes.values())


# The samplers whose traced path binds threefry_bits/threefry_sample directly when only the key
# is batched: vmap over keys of concrete values gives the whole batch to the primitive's batch
# rule (one kernel call), the values of the example-by-example loop bit for bit.
_KEY_BATCHED = {"bits", "uniform", "normal", "truncated_normal", "gumbel", "bernoulli",
                "exponential", "laplace", "logistic", "cauchy"}


def _only_key_batched(args, kwargs):
    """Whether the key (first argument) is the only batched one."""
    rest = (*args[1:], *(v for n, v in kwargs.items() if n != "key"))
    if "key" not in kwargs and not args:
        return False
    return not any(isinstance(v, ArrayBase) and not isinstance(v, Tensor) for v in rest)
