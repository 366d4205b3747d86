"""Abstract rule of associative_scan (``nx_rune.backend.scans``): the operand's aval.

May import: ``nx_rune.primitives`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract

def_abstract(P.associative_scan_p, lambda avals, *, axis, op: avals[0])
