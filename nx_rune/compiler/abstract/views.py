"""Abstract rules of the view algebra (``nx_rune.backend.views``): reshape, expand, permute, pad,
shrink, flip, as_strided keep their operand's dtype and weak type.

May import: ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import math

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue


def _resolve(shape, size):
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape = tuple(size // known if s == -1 and known else (0 if s == -1 else s)
                      for s in shape)
    return shape


def_abstract(P.reshape_p, lambda avals, *, shape: AbstractValue(
    _resolve(shape, avals[0].size), avals[0].dtype, avals[0].weak_type))
def_abstract(P.expand_p, lambda avals, *, shape: AbstractValue(shape, avals[0].dtype,
                                                               avals[0].weak_type))
def_abstract(P.permute_p, lambda avals, *, axes: AbstractValue(
    tuple(avals[0].shape[a] for a in axes), avals[0].dtype, avals[0].weak_type))
def_abstract(P.pad_p, lambda avals, *, config, fill: AbstractValue(
    tuple(d + b + a for d, (b, a) in zip(avals[0].shape, config)), avals[0].dtype,
    avals[0].weak_type))
def_abstract(P.shrink_p, lambda avals, *, limits: AbstractValue(
    tuple(b - a for a, b in limits), avals[0].dtype, avals[0].weak_type))
def_abstract(P.flip_p, lambda avals, *, axes: avals[0])
def_abstract(P.as_strided_p, lambda avals, *, shape, strides, offset: AbstractValue(
    shape, avals[0].dtype, avals[0].weak_type))
