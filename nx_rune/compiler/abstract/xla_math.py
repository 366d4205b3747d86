"""Abstract rules of XLA's elementwise math (``nx_rune.backend.xla_math``): xla_math(x, op) and
xla_pow(x, y), elementwise, in the operand's dtype (float16, float32 or float64).

May import: NumPy, ``nx_rune.primitives``, ``nx_rune.compiler.ir`` and
``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.abstract._core import register_elementwise


def _float_dtype(avals, **params):
    for a in avals:
        if np.dtype(a.dtype) not in (np.float16, np.float32, np.float64):
            raise TypeError(f"xla math: operands must be float32 or float64 (or float16), "
                            f"got {a.dtype}")
    if any(a.dtype != avals[0].dtype for a in avals[1:]):
        raise TypeError("xla_pow: x and y must have one dtype, got "
                        f"{avals[0].dtype} and {avals[1].dtype}")
    return avals[0].dtype


register_elementwise(P.xla_math_p, _float_dtype)
register_elementwise(P.xla_pow_p, _float_dtype)
