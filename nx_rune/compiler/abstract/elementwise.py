"""Abstract rules of the unary elementwise primitives (``nx_rune.backend.elementwise``): the
output has the operand's shape; its dtype is the operand's, NumPy's ufunc's (``register_ufunc``:
the type resolution of the ufunc the implementation runs) or the rule's own (real, imag, cast).

May import: NumPy, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import (
    ELEMENTWISE,
    _real_of,
    def_abstract,
    register_elementwise,
    register_ufunc,
)
from nx_rune.compiler.ir import AbstractValue

for _p in (P.neg_p, P.log2_p, P.exp2_p, P.sin_p, P.sqrt_p, P.recip_p, P.exp_p, P.log_p, P.cos_p,
           P.tanh_p, P.log1p_p, P.expm1_p):
    register_elementwise(_p)
# the primitives that are one NumPy ufunc (the lists of nx_rune.backend.elementwise): the ufunc's
# own type resolution
for _name, _uf in [("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                   ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                   ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                   ("log10", np.log10), ("abs", np.abs), ("conj", np.conjugate),
                   ("deg2rad", np.deg2rad), ("rad2deg", np.rad2deg), ("floor", np.floor),
                   ("ceil", np.ceil), ("rint", np.rint), ("trunc", np.trunc), ("sign", np.sign),
                   ("signbit", np.signbit), ("isnan", np.isnan), ("isinf", np.isinf),
                   ("isfinite", np.isfinite)]:
    register_ufunc(getattr(P, _name + "_p"), _uf)


for _p in (P.real_p, P.imag_p):
    register_elementwise(_p, lambda avals: _real_of(avals[0].dtype))
register_elementwise(P.cast_p, lambda avals, *, dtype: np.dtype(dtype))


# sinc_taylor(x, k): a constant of x's shape and dtype
def_abstract(P.sinc_taylor_p, lambda avals, *, k: AbstractValue(avals[0].shape, avals[0].dtype))
ELEMENTWISE.add(P.sinc_taylor_p)
# stop_gradient: the identity
def_abstract(P.stop_gradient_p, lambda avals: avals[0])
