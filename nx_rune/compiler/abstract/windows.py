"""Abstract rules of unfold and fold (``nx_rune.backend.windows``).

May import: ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import math

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue


def _window_positions(sizes, kernel_size, stride, dilation, padding):
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, s, d, p in zip(sizes, kernel_size, stride, dilation, padding))


@def_abstract(P.unfold_p)
def _unfold(avals, *, kernel_size, stride, dilation, padding):
    x = avals[0]
    pos = _window_positions(x.shape[2:], kernel_size, stride, dilation, padding)
    return AbstractValue((x.shape[0], x.shape[1] * math.prod(kernel_size), math.prod(pos)),
                         x.dtype)


@def_abstract(P.fold_p)
def _fold(avals, *, output_size, kernel_size, stride, dilation, padding):
    c = avals[0]
    return AbstractValue((c.shape[0], c.shape[1] // math.prod(kernel_size)) + tuple(output_size),
                         c.dtype)
