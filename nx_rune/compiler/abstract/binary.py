"""Abstract rules of the elementwise primitives of several operands (``nx_rune.backend.binary``):
operands of one shape, which the output has; its dtype is the first operand's (NumPy's promotion
when a derivative rule mixes real and complex operands), bool for the comparisons, NumPy's
ufunc's (``register_ufunc``), or the rule's own (where, complex).

May import: NumPy, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import (
    ABSTRACT_RULES,
    _weak,
    register_elementwise,
    register_ufunc,
)
from nx_rune.compiler.ir import AbstractValue

_BOOL = np.dtype(bool)

for _p in (P.add_p, P.sub_p, P.mul_p, P.fdiv_p, P.pow_p, P.max_p, P.idiv_p, P.mod_p, P.xor_p,
           P.or_p, P.and_p):
    register_elementwise(_p)
for _p in (P.cmplt_p, P.cmpne_p):
    register_elementwise(_p, _BOOL)
# the primitives that are one NumPy ufunc (the lists of nx_rune.backend.binary): the ufunc's own
# type resolution
for _name, _uf in [("atan2", np.arctan2), ("hypot", np.hypot), ("copysign", np.copysign),
                   ("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2),
                   ("nextafter", np.nextafter), ("lshift", np.left_shift),
                   ("rshift", np.right_shift)]:
    register_ufunc(getattr(P, _name + "_p"), _uf)


# where: the shape check of every elementwise rule, the dtype and weak type of x and y
register_elementwise(P.where_p, lambda avals: avals[1].dtype)
_where_checked = ABSTRACT_RULES[P.where_p]
ABSTRACT_RULES[P.where_p] = lambda avals: AbstractValue(_where_checked(avals).shape,
                                                        avals[1].dtype, _weak(avals[1:]))
register_elementwise(P.complex_p, lambda avals: np.result_type(avals[0].dtype, np.complex64))
