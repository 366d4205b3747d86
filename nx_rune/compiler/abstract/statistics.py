"""Abstract rules of the statistics family (``nx_rune.backend.statistics``): reduce_nanmax and
reduce_nanmin as the other reductions, clip elementwise.

May import: ``nx_rune.primitives`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import _reduced, def_abstract, register_elementwise

for _p in (P.reduce_nanmax_p, P.reduce_nanmin_p):
    def_abstract(_p, _reduced)
register_elementwise(P.clip_p)
