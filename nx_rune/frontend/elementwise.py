"""Elementwise functions: arithmetic, powers and transcendental functions, comparisons,
logic and bit operations.

Each takes arrays or Python scalars; binary functions broadcast (stride-0 views, no copy) and
promote with NumPy's rules, Python scalars weak as in JAX.  Transcendental functions of ints
and bools give float32 (float64 for 64-bit ints).  Differentiable wherever the math is:
``maximum``/``minimum`` split the derivative equally on ties; ``floor_divide``/``mod`` floor
like NumPy.
"""
from __future__ import annotations

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.frontend._core import (as_inexact, astype, binary_op, broadcast_shapes, broadcast_to,
                                    check_int, check_real, const, operand, promote)
from nx_rune.primitives import bind
from nx_rune.typing import Array, ArrayLike

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod",
           "remainder", "power", "negative", "reciprocal", "square", "sqrt", "exp", "exp2", "log",
           "log2", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sign", "abs", "absolute",
           "maximum", "minimum", "clip", "where", "less", "greater", "not_equal", "equal",
           "less_equal", "greater_equal", "logical_and", "logical_or", "logical_not",
           "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
           "isnan", "isfinite", "isinf"]


# -- elementwise arithmetic ----------------------------------------------------------------------

def add(a: ArrayLike, b: ArrayLike) -> Array:
    """a + b.  Shapes broadcast to their NumPy broadcast; dtype: NumPy promotion of the operands
    (a Python scalar is weak: ``x + 1`` keeps x's dtype, int + 2.5 gives float32)."""
    return binary_op(P.add_p, a, b)


def subtract(a: ArrayLike, b: ArrayLike) -> Array:
    """a - b (as a + (-b)): broadcast shape, promoted dtype as ``add``; bool raises TypeError."""
    a, b = promote(a, b)
    return add(a, negative(b))


def multiply(a: ArrayLike, b: ArrayLike) -> Array:
    """a * b: broadcast shape, promoted dtype as ``add``."""
    return binary_op(P.mul_p, a, b)


def divide(a: ArrayLike, b: ArrayLike) -> Array:
    """True division a / b: broadcast shape; the promoted dtype when it is float or complex,
    else float32 (float64 when the promoted integer dtype is 64-bit).  x / 0 is inf or nan."""
    a, b = promote(a, b)
    if not dtypes.is_inexact(a.dtype):
        a, b = as_inexact(a), as_inexact(b)
    return binary_op(P.fdiv_p, a, b)


true_divide = divide


def floor_divide(a: ArrayLike, b: ArrayLike) -> Array:
    """a // b rounded toward minus infinity (NumPy's semantics, not C's truncation).

    Broadcast shape, promoted dtype (real only).  Integer division by zero raises
    ZeroDivisionError; float division by zero gives inf or nan.
    """
    a, b = promote(a, b)
    check_real(a, "floor_divide")
    return binary_op(P.idiv_p, a, b)


def mod(a: ArrayLike, b: ArrayLike) -> Array:
    """a % b with the sign of the divisor (floored, as NumPy's ``%``).

    ``a == floor_divide(a, b) * b + mod(a, b)``.  Broadcast shape, promoted dtype (real only).
    Integer modulo by zero raises ZeroDivisionError.
    """
    a, b = promote(a, b)
    check_real(a, "mod")
    return binary_op(P.mod_p, a, b)


remainder = mod


def power(a: ArrayLike, b: ArrayLike) -> Array:
    """a ** b: broadcast shape, promoted dtype as ``add``.  Integer bases to negative integer
    powers raise ValueError."""
    return binary_op(P.pow_p, a, b)


def negative(x: ArrayLike) -> Array:
    """-x, same shape and dtype (unsigned ints wrap); TypeError for bool."""
    x = operand(x)
    if dtypes.is_bool(x.dtype):
        raise TypeError("negative: not defined for bool tensors; use logical_not")
    return bind(P.neg_p, x)


def reciprocal(x: ArrayLike) -> Array:
    """1 / x, same shape; float dtype (ints and bools give float32, 64-bit ints float64)."""
    return bind(P.recip_p, as_inexact(x))


def square(x: ArrayLike) -> Array:
    """x * x, same shape and dtype."""
    x = operand(x)
    return bind(P.mul_p, x, x)


def sqrt(x: ArrayLike) -> Array:
    """Square root (nan below 0 for real input).  Same shape; float dtype (ints and bools give
    float32, 64-bit ints float64), as every transcendental function here."""
    return bind(P.sqrt_p, as_inexact(x))


def exp(x: ArrayLike) -> Array:
    """e ** x, same shape; float dtype (see ``sqrt``)."""
    return bind(P.exp_p, as_inexact(x))


def exp2(x: ArrayLike) -> Array:
    """2 ** x, same shape; float dtype."""
    return bind(P.exp2_p, as_inexact(x))


def log(x: ArrayLike) -> Array:
    """Natural logarithm (-inf at 0, nan below), same shape; float dtype."""
    return bind(P.log_p, as_inexact(x))


def log2(x: ArrayLike) -> Array:
    """Base-2 logarithm, same shape; float dtype."""
    return bind(P.log2_p, as_inexact(x))


def log1p(x: ArrayLike) -> Array:
    """log(1 + x), accurate near 0; same shape, float dtype."""
    return bind(P.log1p_p, as_inexact(x))


def expm1(x: ArrayLike) -> Array:
    """exp(x) - 1, accurate near 0; same shape, float dtype."""
    return bind(P.expm1_p, as_inexact(x))


def sin(x: ArrayLike) -> Array:
    """Sine (radians), same shape; float dtype."""
    return bind(P.sin_p, as_inexact(x))


def cos(x: ArrayLike) -> Array:
    """Cosine (radians), same shape; float dtype."""
    return bind(P.cos_p, as_inexact(x))


def tan(x: ArrayLike) -> Array:
    """Tangent, as sin(x) / cos(x); same shape, float dtype."""
    x = as_inexact(x)
    return bind(P.fdiv_p, bind(P.sin_p, x), bind(P.cos_p, x))


def tanh(x: ArrayLike) -> Array:
    """Hyperbolic tangent, same shape; float dtype."""
    return bind(P.tanh_p, as_inexact(x))


def sign(x: ArrayLike) -> Array:
    """-1, 0 or 1 by the sign of x (nan for nan), same shape and dtype; zero derivative."""
    x = operand(x)
    check_real(x, "sign")
    if dtypes.is_bool(x.dtype):
        return x
    pos = astype(greater(x, 0), x.dtype)
    neg = astype(less(x, 0), x.dtype)
    s = subtract(pos, neg)
    if dtypes.is_inexact(x.dtype):
        s = where(isnan(x), x, s)
    return s


def abs(x: ArrayLike) -> Array:
    """|x| for real tensors (same shape and dtype; ints wrap like NumPy's at the minimum).

    Computed as where(x < 0, -x, x): the derivative at 0 is 1, like JAX's."""
    x = operand(x)
    check_real(x, "abs")
    if dtypes.is_bool(x.dtype) or x.dtype.kind == "u":
        return x
    return where(less(x, 0), negative(x), x)


absolute = abs


def maximum(a: ArrayLike, b: ArrayLike) -> Array:
    """Elementwise max (nan propagates): broadcast shape, promoted dtype; real dtypes only.  On
    ties the derivative is split equally."""
    a, b = promote(a, b)
    check_real(a, "maximum")
    return binary_op(P.max_p, a, b)


def minimum(a: ArrayLike, b: ArrayLike) -> Array:
    """Elementwise min (nan propagates): broadcast shape, promoted dtype; real dtypes only.  On
    ties the derivative is split equally."""
    a, b = promote(a, b)
    check_real(a, "minimum")
    if dtypes.is_inexact(a.dtype):
        return negative(maximum(negative(a), negative(b)))
    if dtypes.is_bool(a.dtype):
        return logical_and(a, b)
    return bitwise_not(maximum(bitwise_not(a), bitwise_not(b)))


def clip(x: ArrayLike, /, min: ArrayLike | None = None, max: ArrayLike | None = None, *,
         a_min: ArrayLike | None = None, a_max: ArrayLike | None = None) -> Array:
    """x limited to [min, max] (the standard's names; NumPy's ``a_min``/``a_max`` also work,
    positionally or by keyword).  Either bound may be None; min > max gives max (as NumPy).

    Shape: the broadcast of x, min and max.  Dtype: x's (real dtypes); a bound is converted to
    it: Python numbers weakly (an int bound beyond an integer dtype's range is a no-op when it
    cannot bind, ValueError when every result would be out of range; a float bound for an
    integer x is a TypeError), arrays when the cast loses nothing (or float to float).  nan in
    x, min or max gives nan.  The derivative goes to x inside the range and to the bound that
    binds (split equally on ties, as ``maximum``).
    """
    from nx_rune.tensor import ArrayBase, Tensor  # here: this package edits clip only

    x = operand(x)
    check_real(x, "clip")
    lo = _clip_bound(x, _one_of(min, a_min, "min", "a_min"), "min")
    hi = _clip_bound(x, _one_of(max, a_max, "max", "a_max"), "max")
    if lo is None and hi is None:
        return x
    dt = x.dtype
    if dtypes.is_bool(dt):
        x = x if lo is None else logical_or(x, lo)
        return x if hi is None else logical_and(x, hi)
    arrays = [t for t in (lo, hi) if isinstance(t, ArrayBase)]
    shape = broadcast_shapes(x.shape, *[t.shape for t in arrays]) if arrays else x.shape
    # one fused primitive; a missing bound is the dtype's extreme, flagged for the derivative
    low, high = (-np.inf, np.inf) if dtypes.is_float(dt) else (np.iinfo(dt).min, np.iinfo(dt).max)
    lo_t, hi_t = (broadcast_to(b, shape) if isinstance(b, ArrayBase)
                  else Tensor._broadcast_scalar(d if b is None else b, dt, shape)
                  for b, d in ((lo, low), (hi, high)))
    return bind(P.clip_p, broadcast_to(x, shape), lo_t, hi_t, lower=lo is not None,
                upper=hi is not None)


def _one_of(std_value, numpy_value, std_name, numpy_name):
    if numpy_value is None:
        return std_value
    if std_value is not None:
        raise TypeError(f"clip: got both {std_name} and {numpy_name} (they are one argument)")
    return numpy_value


def _clip_bound(x, bound, name):
    """``bound`` converted to x's dtype by the rules of ``clip``: a Python scalar of it, a tensor
    of it, or None when there is no bound (or it cannot bind)."""
    if bound is None:
        return None
    if isinstance(bound, np.generic) and bound.dtype.kind in "biuf":
        bound = bound.item()
    dt = x.dtype
    if isinstance(bound, (bool, int, float, complex, np.bool_)):
        if isinstance(bound, complex):
            raise TypeError(f"clip: {name} is complex ({bound!r}); clip needs real bounds")
        if dtypes.is_bool(dt):
            if not isinstance(bound, (bool, np.bool_)):
                raise TypeError(f"clip: {name} must be a bool for a bool x, got {bound!r}")
            return bool(bound)
        if dtypes.is_integer(dt) and not isinstance(bound, (bool, np.bool_)):
            if isinstance(bound, float):
                raise TypeError(f"clip: {name} is a float ({bound!r}) but x is {dt}; the result "
                                f"keeps x's dtype, so cast x to a float dtype first")
            info = np.iinfo(dt)
            below, above = bound < info.min, bound > info.max
            if (name == "min" and below) or (name == "max" and above):
                return None  # no value of x lies beyond it
            if below or above:
                raise ValueError(f"clip: {name}={bound} is out of the range of {dt} "
                                 f"[{info.min}, {info.max}]: every result would be {bound}, "
                                 f"which {dt} cannot hold")
        return dt.type(bound).item()
    b = operand(bound)
    if b.dtype == dt:
        return b
    if np.can_cast(b.dtype, dt, "safe") or (dtypes.is_float(dt) and b.dtype.kind in "biuf"):
        return astype(b, dt)
    raise TypeError(f"clip: {name} has dtype {b.dtype}, which does not convert to x's dtype {dt} "
                    f"without loss; the result keeps x's dtype, so cast {name} (or x) first")


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Array:
    """x where condition is true, else y.  The three shapes broadcast; x and y promote (weak
    scalars included); a non-bool condition means ``condition != 0``."""
    c = operand(condition)
    if not dtypes.is_bool(c.dtype):
        c = not_equal(c, 0)
    x, y = promote(x, y)
    shape = broadcast_shapes(c.shape, x.shape, y.shape)
    return bind(P.where_p, broadcast_to(c, shape), broadcast_to(x, shape), broadcast_to(y, shape))


# -- comparisons and logic ---------------------------------------------------------------------

def less(a: ArrayLike, b: ArrayLike) -> Array:
    """a < b: broadcast shape, bool (compared in the promoted dtype; false where either is nan)."""
    return binary_op(P.cmplt_p, a, b)


def greater(a: ArrayLike, b: ArrayLike) -> Array:
    """a > b: broadcast shape, bool (false where either is nan)."""
    return less(b, a)


def not_equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a != b: broadcast shape, bool (true where either is nan)."""
    return binary_op(P.cmpne_p, a, b)


def equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a == b: broadcast shape, bool (false where either is nan)."""
    return logical_not(not_equal(a, b))


def less_equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a <= b: broadcast shape, bool (false where either is nan)."""
    a, b = promote(a, b)
    return logical_or(less(a, b), equal(a, b))


def greater_equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a >= b: broadcast shape, bool (false where either is nan)."""
    return less_equal(b, a)


def as_bool(x):
    x = operand(x)
    return x if dtypes.is_bool(x.dtype) else not_equal(x, 0)


def logical_and(a: ArrayLike, b: ArrayLike) -> Array:
    """a and b (non-bool operands mean ``!= 0``): broadcast shape, bool."""
    return binary_op(P.and_p, as_bool(a), as_bool(b))


def logical_or(a: ArrayLike, b: ArrayLike) -> Array:
    """a or b: broadcast shape, bool."""
    return binary_op(P.or_p, as_bool(a), as_bool(b))


def logical_not(x: ArrayLike) -> Array:
    """not x (``x == 0`` for non-bool x): same shape, bool."""
    x = as_bool(x)
    return bind(P.xor_p, x, broadcast_to(const(True, dtypes.bool_), x.shape))


def logical_xor(a: ArrayLike, b: ArrayLike) -> Array:
    """a xor b: broadcast shape, bool."""
    return binary_op(P.xor_p, as_bool(a), as_bool(b))


def bitwise_and(a: ArrayLike, b: ArrayLike) -> Array:
    """a & b for integer or bool tensors: broadcast shape, promoted dtype."""
    a, b = promote(a, b)
    check_int(a, "bitwise_and")
    return binary_op(P.and_p, a, b)


def bitwise_or(a: ArrayLike, b: ArrayLike) -> Array:
    """a | b for integer or bool tensors: broadcast shape, promoted dtype."""
    a, b = promote(a, b)
    check_int(a, "bitwise_or")
    return binary_op(P.or_p, a, b)


def bitwise_xor(a: ArrayLike, b: ArrayLike) -> Array:
    """a ^ b for integer or bool tensors: broadcast shape, promoted dtype."""
    a, b = promote(a, b)
    check_int(a, "bitwise_xor")
    return binary_op(P.xor_p, a, b)


def bitwise_not(x: ArrayLike) -> Array:
    """~x for integer or bool tensors (x ^ all-ones): same shape and dtype."""
    x = operand(x)
    check_int(x, "bitwise_not")
    ones = True if dtypes.is_bool(x.dtype) else np.array(-1).astype(x.dtype)
    return bind(P.xor_p, x, broadcast_to(const(ones, x.dtype), x.shape))


invert = bitwise_not


def isnan(x: ArrayLike) -> Array:
    """True where x is nan: same shape, bool (all false for integer dtypes)."""
    x = operand(x)
    if not dtypes.is_inexact(x.dtype):
        return broadcast_to(const(False, dtypes.bool_), x.shape)
    return not_equal(x, x)


def isfinite(x: ArrayLike) -> Array:
    """True where x is neither inf nor nan: same shape, bool."""
    x = operand(x)
    if not dtypes.is_inexact(x.dtype):
        return broadcast_to(const(True, dtypes.bool_), x.shape)
    return equal(subtract(x, x), 0)


def isinf(x: ArrayLike) -> Array:
    """True where x is +inf or -inf: same shape, bool."""
    x = operand(x)
    return logical_and(logical_not(isfinite(x)), logical_not(isnan(x)))

