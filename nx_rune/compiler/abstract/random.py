"""Abstract rules of the random primitives: threefry (``nx_rune.backend.random``) and the
samplers threefry_bits and threefry_sample (implemented by ``nx_rune.random``), whose keys are
uint32 arrays of shape (*batch, 2).

May import: NumPy, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue

def_abstract(P.threefry_p, lambda avals: AbstractValue(avals[1].shape, np.uint32))


def _random_key(prim, key):
    if key.dtype != np.uint32 or not key.shape or key.shape[-1] != 2:
        raise TypeError(f"{prim.name}: key must be a uint32 array of shape (*batch, 2), got "
                        f"{key.dtype} of shape {key.shape}")
    return key.shape[:-1]


@def_abstract(P.threefry_bits_p)
def _threefry_bits(avals, *, nbits, shape):
    return AbstractValue(_random_key(P.threefry_bits_p, avals[0]) + tuple(shape),
                         np.dtype(f"uint{nbits}"))


@def_abstract(P.threefry_sample_p)
def _threefry_sample(avals, *, dist, shape, dtype, params):
    return AbstractValue(_random_key(P.threefry_sample_p, avals[0]) + tuple(shape),
                         np.dtype(dtype))
