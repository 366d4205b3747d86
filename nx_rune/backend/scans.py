"""Scans: associative_scan(x, axis, op) with op in {"sum", "prod", "max", "min"} (NumPy's
cumulative sum and product in the operand's dtype, its maximum/minimum accumulations).

May import: NumPy and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune.backend._core import _impl, _out

# cumulative sums and products keep the operand's dtype (NumPy would widen small integers)
_SCANS = {"sum": np.cumsum, "prod": np.cumprod,
          "max": np.maximum.accumulate, "min": np.minimum.accumulate}


@_impl("associative_scan")
def _associative_scan(x, *, axis, op):
    if op not in _SCANS:
        raise ValueError(f"op: must be one of {sorted(_SCANS)}, got {op!r}")
    a = x._np()
    if op in ("sum", "prod"):
        return _out(_SCANS[op](a, axis=axis, dtype=a.dtype))
    return _out(_SCANS[op](a, axis=axis))
