"""Abstract rules of the special functions (``nx_rune.backend.special``): elementwise, in the
(first) operand's dtype as scipy.special's loops cast back; the incomplete gamma and beta
functions and their derivatives in the operands' promoted dtype.

May import: NumPy, ``nx_rune.primitives`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import register_elementwise

for _name in ("lgamma", "digamma", "gamma", "erf", "erfc", "erfinv", "ndtr", "ndtri",
              "log_ndtr", "expit", "logit", "i0", "i0e", "i1", "i1e", "polygamma", "betaln",
              "xlogy", "xlog1py"):
    register_elementwise(getattr(P, _name + "_p"), lambda avals: avals[0].dtype)


for _p in (P.gammainc_p, P.gammaincc_p, P.gammainc_da_p, P.betainc_p, P.betainc_da_p,
           P.betainc_db_p):
    register_elementwise(_p, lambda avals: np.result_type(*[a.dtype for a in avals]))

# the families by name (special_unary/binary/ternary): the last operand's dtype, which the front
# end has promoted the others to
for _p in (P.special_unary_p, P.special_binary_p, P.special_ternary_p):
    register_elementwise(_p, lambda avals, **params: avals[-1].dtype)
