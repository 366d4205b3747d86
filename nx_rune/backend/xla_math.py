"""XLA:CPU's elementwise math as JAX 0.10.2 computes it on CPU, on concrete float32/float64
arrays (and float16: widened to float32 and rounded back, as XLA:CPU computes it):
``xla_math(x, op)`` with op "exp", "log", "log1p", "tan", "rsqrt" or "erf" (and
"ynn_exp", "ynn_log", "ynn_log1p": YNNPACK's, which XLA runs in the fusions it hands to
YNNPACK), and
``xla_pow(x, y)`` (the C library's pow, with XLA's flush-to-zero and denormals-are-zero), all in
the kernel ``nx_rune._kernels.threefry.xla_math``.  nx.random's samplers use them so that their
eager, jit and vmap values are JAX's bit for bit; NumPy's loops round differently in a fraction
of an ulp's worth of arguments.

xla_pow's operands arrive with one shape and dtype (the caller broadcasts and promotes).

May import: NumPy, ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune._kernels import threefry as _K
from nx_rune.backend._core import _impl, _out

XLA_MATH_OPS = ("exp", "log", "log1p", "tan", "rsqrt", "erf", "ynn_exp", "ynn_log",
                "ynn_log1p")


def _float_array(t, name):
    a = t._np()
    if a.dtype not in (np.float16, np.float32, np.float64):
        raise TypeError(f"{name} must be float32 or float64 (or float16), got {a.dtype}")
    return a


@_impl("xla_math")
def _xla_math(x, *, op):
    if op not in XLA_MATH_OPS:
        raise ValueError(f"op must be one of {list(XLA_MATH_OPS)}, got {op!r}")
    a = _float_array(x, "x")
    return _out(_K.xla_math(op, a))


@_impl("xla_pow")
def _xla_pow(x, y):
    a, b = _float_array(x, "x"), _float_array(y, "y")
    if a.dtype != b.dtype or a.shape != b.shape:
        raise TypeError(f"x and y must have one dtype and shape, got {a.dtype}{a.shape} and "
                        f"{b.dtype}{b.shape}")
    return _out(_K.xla_math("pow", a, b))
