"""Abstract rules of fft, rfft and irfft (``nx_rune.backend.fft``): NumPy's FFT dtypes (complex of
the operand's precision; irfft real).

May import: ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import _complex_of, _real_of, def_abstract
from nx_rune.compiler.ir import AbstractValue

def_abstract(P.fft_p, lambda avals, *, axes, inverse, norm: AbstractValue(
    avals[0].shape, _complex_of(avals[0].dtype)))


@def_abstract(P.rfft_p)
def _rfft(avals, *, axes, norm):
    shape = list(avals[0].shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return AbstractValue(shape, _complex_of(avals[0].dtype))


@def_abstract(P.irfft_p)
def _irfft(avals, *, axes, n, norm):
    shape = list(avals[0].shape)
    shape[axes[-1]] = n
    return AbstractValue(shape, _real_of(avals[0].dtype))
