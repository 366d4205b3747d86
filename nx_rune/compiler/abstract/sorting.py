"""Abstract rules of sort, argsort and searchsorted (``nx_rune.backend.sorting``).

May import: ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue

def_abstract(P.sort_p, lambda avals, *, axis, descending: AbstractValue(avals[0].shape,
                                                                        avals[0].dtype))
def_abstract(P.argsort_p, lambda avals, *, axis, descending, stable, dtype: AbstractValue(
    avals[0].shape, dtype))
def_abstract(P.searchsorted_p, lambda avals, *, side, dtype: AbstractValue(avals[1].shape, dtype))
