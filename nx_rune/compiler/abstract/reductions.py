"""Abstract rules of the reductions (``nx_rune.backend.reductions``): reduce_sum, reduce_max,
reduce_prod keep their operand's dtype and weak type; argmax gives int32.

May import: NumPy, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import _reduced, def_abstract
from nx_rune.compiler.ir import AbstractValue

for _p in (P.reduce_sum_p, P.reduce_max_p, P.reduce_prod_p):
    def_abstract(_p, _reduced)


@def_abstract(P.argmax_p)
def _argmax(avals, *, axis, keepdims):
    a = avals[0]
    if axis is None:
        shape = (1,) * a.ndim if keepdims else ()
    else:
        ax = axis % a.ndim if a.ndim else 0
        shape = tuple(1 if i == ax else d for i, d in enumerate(a.shape)) if keepdims else \
            tuple(d for i, d in enumerate(a.shape) if i != ax)
    return AbstractValue(shape, np.int32)
