"""Rules of the rejection samplers' primitives (random_gamma, random_poisson,
random_binomial): their jit abstract rules and vmap batching rules, registered into the tables
from here.  Their values are not differentiable through the primitives (the key is integer,
the samples of poisson and binomial are counts); gamma's derivative in its shape parameter is
attached around the primitive by ``nx_rune.random._gamma`` (a custom JVP)."""
import numpy as np

from nx_rune import primitives as P
from nx_rune.autodiff.batch_rules import BATCH_RULES
from nx_rune.autodiff.rules import defnondiff
from nx_rune.compiler.abstract import AbstractValue, def_abstract
from nx_rune.frontend import broadcast_to, moveaxis

_PRIMS = (P.random_gamma_p, P.random_poisson_p, P.random_binomial_p)


def _key_batch(prim, key):
    if key.dtype != np.uint32 or not key.shape or key.shape[-1] != 2:
        raise TypeError(f"{prim.name}: key must be a uint32 array of shape (*batch, 2), got "
                        f"{key.dtype} of shape {key.shape}")
    return tuple(key.shape[:-1])


def _abstract(prim, dtype_of):
    def rule(avals, **params):
        _key_batch(prim, avals[0])
        return AbstractValue(tuple(avals[1].shape), dtype_of(avals, params))
    def_abstract(prim, rule)


_abstract(P.random_gamma_p, lambda avals, params: avals[1].dtype)
_abstract(P.random_poisson_p, lambda avals, params: np.dtype(params["dtype"]))
_abstract(P.random_binomial_p, lambda avals, params: avals[2].dtype)


def _batch(prim):
    """Every operand's batch axis first (an unbatched one broadcast along it): the key of
    shape (size, ..., 2) then draws for each of its keys, as JAX's batching of these
    primitives."""
    def rule(size, args, dims, **params):
        moved = []
        for x, d in zip(args, dims):
            if d is None:
                x = broadcast_to(x, (size,) + tuple(x.shape))
            else:
                x = moveaxis(x, d, 0)
            moved.append(x)
        return P.bind(prim, *moved, **params), 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule


for _p in _PRIMS:
    _batch(_p)
    defnondiff(_p)
del _p
