"""Abstract rules of the movements that need new memory (``nx_rune.backend.movement``): cat, roll.

May import: ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import _weak, def_abstract
from nx_rune.compiler.ir import AbstractValue


@def_abstract(P.cat_p)
def _cat(avals, *, axis):
    shape = list(avals[0].shape)
    shape[axis] = sum(a.shape[axis] for a in avals)
    return AbstractValue(shape, avals[0].dtype, _weak(avals))


def_abstract(P.roll_p, lambda avals, *, shift, axis: avals[0])
