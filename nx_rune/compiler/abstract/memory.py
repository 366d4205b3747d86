"""Abstract rules of the memory primitives (``nx_rune.backend.memory``): buffer, const_scalar,
const_array, contiguous, copy, assign.

May import: NumPy, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue

def_abstract(P.buffer_p, lambda avals, *, shape, dtype: AbstractValue(shape, dtype))
def_abstract(P.const_scalar_p, lambda avals, *, value, dtype: AbstractValue((), dtype))
def_abstract(P.const_array_p, lambda avals, *, array: AbstractValue(np.shape(array),
                                                                     np.asarray(array).dtype))
for _p in (P.contiguous_p, P.copy_p):
    def_abstract(_p, lambda avals: avals[0])
def_abstract(P.assign_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
