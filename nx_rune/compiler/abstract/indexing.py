"""Abstract rules of gather and scatter (``nx_rune.backend.indexing``).

May import: ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue


@def_abstract(P.gather_p)
def _gather(avals, *, axis):
    data, idx = avals
    if axis is None:
        return AbstractValue(idx.shape, data.dtype)
    shape = tuple(i if d == axis else (a if i == 1 else i)
                  for d, (a, i) in enumerate(zip(data.shape, idx.shape)))
    return AbstractValue(shape, data.dtype)


def_abstract(P.scatter_p, lambda avals, *, axis, mode: AbstractValue(avals[0].shape,
                                                                     avals[0].dtype))
