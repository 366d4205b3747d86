"""Abstract rules of the rejection samplers' primitives (``nx_rune.backend.random_rejection``):
random_gamma(key, a), random_poisson(key, lam) and random_binomial(key, count, prob), whose keys
are uint32 arrays of shape (*batch, 2) and whose parameters have the result's shape.

May import: NumPy, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue


def _check_key(prim, key):
    if key.dtype != np.uint32 or not key.shape or key.shape[-1] != 2:
        raise TypeError(f"{prim.name}: key must be a uint32 array of shape (*batch, 2), got "
                        f"{key.dtype} of shape {key.shape}")


@def_abstract(P.random_gamma_p)
def _random_gamma(avals, **params):
    _check_key(P.random_gamma_p, avals[0])
    return AbstractValue(tuple(avals[1].shape), avals[1].dtype)


@def_abstract(P.random_poisson_p)
def _random_poisson(avals, *, dtype, **params):
    _check_key(P.random_poisson_p, avals[0])
    return AbstractValue(tuple(avals[1].shape), np.dtype(dtype))


@def_abstract(P.random_binomial_p)
def _random_binomial(avals, **params):
    _check_key(P.random_binomial_p, avals[0])
    return AbstractValue(tuple(avals[1].shape), avals[2].dtype)
