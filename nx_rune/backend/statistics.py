"""The statistics family: the NaN-skipping extremum reductions and clip.

reduce_nanmax/reduce_nanmin(x, axes, keepdims): NumPy's fmax/fmin reductions (nan is skipped; an
all-nan group gives nan; an empty group raises).  clip(x, lo, hi, lower, upper): operands of
equal shape and dtype, min(max(x, lo), hi) with nan propagating; a bound the caller did not give
arrives as the dtype's extreme with ``lower``/``upper`` False (read by the derivative rules).

May import: NumPy and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune.backend._core import IMPLS, _impl, _out


def _nan_extremum(name, ufunc):
    def impl(x, *, axes, keepdims):
        a = x._np()
        axes = tuple(axes)
        if a.size == 0 and (not axes or any(a.shape[i] == 0 for i in axes)):
            raise ValueError(f"{name}: reduction over an empty axis of shape {a.shape} has no "
                             f"identity")
        return _out(ufunc.reduce(a, axis=axes, keepdims=keepdims))
    impl.__name__ = f"_reduce_{name}"
    IMPLS[f"reduce_{name}"] = impl


_nan_extremum("nanmax", np.fmax)
_nan_extremum("nanmin", np.fmin)


def _one_value(arr):
    """A broadcast bound holding one value (stride 0 everywhere) as that value: NumPy's clip
    takes its scalar loop then instead of reading a million copies."""
    return arr.flat[0] if arr.size and not any(arr.strides) else arr


def _zero_kept(out, xn):
    """``out`` with x's own zero where x is a zero that clip kept (x == bound): NumPy's loop
    answers -0.0 clipped to [0.0, 1.0] with x (scalar bounds) or with the bound (array bounds),
    so a vmap (array bounds) or a jit would change the sign of zero that eager code gives."""
    if out.dtype.kind != "f" or not out.size:
        return out
    zero = out == 0
    if not zero.any():
        return out
    return np.where(zero & (xn == 0), xn, out)


@_impl("clip")
def _clip(x, lo, hi, *, lower, upper):
    xn = x._np()
    lo_n, hi_n = _one_value(lo._np()), _one_value(hi._np())
    if np.ndim(lo_n) == 0 and np.ndim(hi_n) == 0 and xn.shape != ():
        return _out(_zero_kept(np.clip(xn, lo_n, hi_n), xn))
    return _out(_zero_kept(np.asarray(np.clip(xn, lo._np(), hi._np())), xn))
