"""Abstract rules of the Schur-based linear algebra (``nx_rune.backend.linalg_schur``): batched
over the leading axes; schur and hessenberg packed (T, Z) along a last axis (..., 2 n n).

May import: NumPy, ``nx_rune.backend``, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.backend.linalg import complex_of
from nx_rune.compiler.abstract._core import def_abstract
from nx_rune.compiler.ir import AbstractValue


@def_abstract(P.schur_p)
def _schur(avals, *, output):
    a = avals[0]
    n = a.shape[-1]
    dt = complex_of(a.dtype) if output == "complex" else a.dtype
    return AbstractValue(a.shape[:-2] + (2 * n * n,), dt)


@def_abstract(P.hessenberg_p)
def _hessenberg(avals):
    a = avals[0]
    n = a.shape[-1]
    return AbstractValue(a.shape[:-2] + (2 * n * n,), a.dtype)


def_abstract(P.matfunc_p, lambda avals, *, fn: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.sylvester_p, lambda avals: AbstractValue(avals[2].shape, avals[2].dtype))
