"""The abstract-evaluation rule of the ``eig`` primitive (packed (w, V): (..., n + n * n), the
complex dtype of the operand's precision)."""
from nx_rune import primitives as P
from nx_rune.compiler.abstract import def_abstract
from nx_rune.compiler.ir import AbstractValue
from nx_rune.frontend.linalg_eig import complex_of

__all__ = []


@def_abstract(P.eig_p)
def _eig(avals):
    a = avals[0]
    n = a.shape[-1]
    return AbstractValue(a.shape[:-2] + (n + n * n,), complex_of(a.dtype))
