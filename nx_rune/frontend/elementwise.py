"""Elementwise functions: arithmetic, powers and transcendental functions, rounding, complex
parts, comparisons, logic and bit operations (the Array API standard's and NumPy's names).

Each takes arrays or Python scalars; binary functions broadcast (stride-0 views, no copy) and
promote with NumPy's rules, Python scalars weak as in JAX.  Transcendental functions of ints
and bools give float32 (float64 for 64-bit ints).  Each function is one primitive (one NumPy
loop, so NaN/inf/-0.0 follow NumPy and the standard's special cases) or an exact composition.
Differentiable wherever the math is: ``maximum``/``minimum`` split the derivative equally on
ties; ``floor_divide``/``mod`` floor like NumPy; rounding, sign and tests have zero derivative.
Functions that return their input unchanged (``real`` of a real tensor, ``floor`` of an integer
tensor, ``positive``, ...) return the tensor itself, not a copy.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.frontend._core import (
    as_inexact,
    astype,
    binary_op,
    broadcast_shapes,
    broadcast_to,
    check_int,
    check_real,
    const,
    operand,
    promote,
)
from nx_rune.primitives import bind
from nx_rune.tensor import (
    ArrayBase,
    Tensor,
    binary_op_fast,
    fast_unary,
    install_operator_primitives,
    unary_op,
)
from nx_rune.typing import Array, ArrayLike

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod",
           "remainder", "power", "negative", "reciprocal", "square", "sqrt", "exp", "exp2", "log",
           "log2", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sign", "abs", "absolute",
           "maximum", "minimum", "clip", "where", "less", "greater", "not_equal", "equal",
           "less_equal", "greater_equal", "logical_and", "logical_or", "logical_not",
           "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
           "isnan", "isfinite", "isinf",
           # the Array API standard's names and NumPy's, beyond the seed's set
           "pow", "positive", "acos", "arccos", "asin", "arcsin", "atan", "arctan", "atan2",
           "arctan2", "acosh", "arccosh", "asinh", "arcsinh", "atanh", "arctanh", "sinh", "cosh",
           "log10", "logaddexp", "logaddexp2", "hypot", "copysign", "nextafter", "signbit",
           "floor", "ceil", "trunc", "rint", "round", "fix", "real", "imag", "conj", "conjugate",
           "angle", "deg2rad", "rad2deg", "radians", "degrees", "sinc", "heaviside",
           "nan_to_num", "isneginf", "isposinf", "isclose", "allclose", "array_equal",
           "bitwise_left_shift", "bitwise_right_shift", "bitwise_invert"]


# the operators + - * / of tracers bind these at once when no promotion is needed
install_operator_primitives(P.add_p, P.sub_p, P.mul_p, P.fdiv_p)


# -- elementwise arithmetic ----------------------------------------------------------------------

def add(a: ArrayLike, b: ArrayLike) -> Array:
    """a + b.  Shapes broadcast to their NumPy broadcast; dtype: NumPy promotion of the operands
    (a Python scalar is weak: ``x + 1`` keeps x's dtype, int + 2.5 gives float32)."""
    r = binary_op_fast(a, b, np.add, P.add_p)
    return binary_op(P.add_p, a, b) if r is None else r


def subtract(a: ArrayLike, b: ArrayLike) -> Array:
    """a - b: broadcast shape, promoted dtype as ``add``; bool raises TypeError."""
    r = binary_op_fast(a, b, np.subtract, P.sub_p, b"iufc")
    if r is not None:
        return r
    if not (isinstance(a, ArrayBase) and isinstance(b, ArrayBase) and a.dtype == b.dtype):
        a, b = promote(a, b)
    if dtypes.is_bool(a.dtype):
        raise TypeError("subtract: not defined for bool tensors; use logical_xor")
    return binary_op(P.sub_p, a, b)


def multiply(a: ArrayLike, b: ArrayLike) -> Array:
    """a * b: broadcast shape, promoted dtype as ``add``."""
    r = binary_op_fast(a, b, np.multiply, P.mul_p)
    return binary_op(P.mul_p, a, b) if r is None else r


def divide(a: ArrayLike, b: ArrayLike) -> Array:
    """True division a / b: broadcast shape; the promoted dtype when it is float or complex,
    else float32 (float64 when the promoted integer dtype is 64-bit).  x / 0 is inf or nan."""
    r = binary_op_fast(a, b, np.divide, P.fdiv_p, b"fc")
    if r is not None:
        return r
    if _same_inexact(a, b, "fc"):
        return binary_op(P.fdiv_p, a, b)
    a, b = promote(a, b)
    if not dtypes.is_inexact(a.dtype):
        a, b = as_inexact(a), as_inexact(b)
    return binary_op(P.fdiv_p, a, b)


def _same_inexact(a, b, kinds):
    """Whether a and b need no promotion for a float primitive: an array of a dtype of
    ``kinds`` with an array of the same dtype or a Python float or int (weak: it takes the
    array's dtype, which binary_op gives it)."""
    if isinstance(a, ArrayBase):
        if a.dtype.kind not in kinds:
            return False
        return type(b) is float or type(b) is int or (isinstance(b, ArrayBase)
                                                       and b.dtype == a.dtype)
    return (type(a) is float or type(a) is int) and isinstance(b, ArrayBase) \
        and b.dtype.kind in kinds


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
    r = unary_op(x, np.reciprocal, P.recip_p)
    return bind(P.recip_p, as_inexact(x)) if r is None else r


def square(x: ArrayLike) -> Array:
    """x * x, same shape and dtype."""
    x = operand(x)
    return bind(P.mul_p, x, x)


def sqrt(x: ArrayLike) -> Array:
    """Square root (nan below 0 for real input).  Same shape; float dtype (ints and bools give
    float32, 64-bit ints float64), as every transcendental function here."""
    r = unary_op(x, np.sqrt, P.sqrt_p)
    return bind(P.sqrt_p, as_inexact(x)) if r is None else r


def exp(x: ArrayLike) -> Array:
    """e ** x, same shape; float dtype (see ``sqrt``)."""
    r = unary_op(x, np.exp, P.exp_p)
    return bind(P.exp_p, as_inexact(x)) if r is None else r


def exp2(x: ArrayLike) -> Array:
    """2 ** x, same shape; float dtype."""
    r = unary_op(x, np.exp2, P.exp2_p)
    return bind(P.exp2_p, as_inexact(x)) if r is None else r


def log(x: ArrayLike) -> Array:
    """Natural logarithm (-inf at 0, nan below), same shape; float dtype."""
    r = unary_op(x, np.log, P.log_p)
    return bind(P.log_p, as_inexact(x)) if r is None else r


def log2(x: ArrayLike) -> Array:
    """Base-2 logarithm, same shape; float dtype."""
    r = unary_op(x, np.log2, P.log2_p)
    return bind(P.log2_p, as_inexact(x)) if r is None else r


def log1p(x: ArrayLike) -> Array:
    """log(1 + x), accurate near 0; same shape, float dtype."""
    r = unary_op(x, np.log1p, P.log1p_p)
    return bind(P.log1p_p, as_inexact(x)) if r is None else r


def expm1(x: ArrayLike) -> Array:
    """exp(x) - 1, accurate near 0; same shape, float dtype."""
    r = unary_op(x, np.expm1, P.expm1_p, b"f")
    return bind(P.expm1_p, as_inexact(x)) if r is None else r


def sin(x: ArrayLike) -> Array:
    """Sine (radians), same shape; float dtype."""
    r = unary_op(x, np.sin, P.sin_p)
    return bind(P.sin_p, as_inexact(x)) if r is None else r


def cos(x: ArrayLike) -> Array:
    """Cosine (radians), same shape; float dtype."""
    r = unary_op(x, np.cos, P.cos_p)
    return bind(P.cos_p, as_inexact(x)) if r is None else r


def tan(x: ArrayLike) -> Array:
    """Tangent (radians), same shape; float or complex dtype (one NumPy loop: complex tan does
    not overflow for a large imaginary part, as sin/cos would)."""
    r = unary_op(x, np.tan, P.tan_p)
    return bind(P.tan_p, as_inexact(x)) if r is None else r


def tanh(x: ArrayLike) -> Array:
    """Hyperbolic tangent, same shape; float or complex dtype (complex: tanh(±inf + iy) is
    ±1 with a zero imaginary part of y's sign, as the Array API specifies)."""
    r = unary_op(x, np.tanh, P.tanh_p, b"f")
    return bind(P.tanh_p, as_inexact(x)) if r is None else r


def sign(x: ArrayLike) -> Array:
    """-1, 0 or 1 by the sign of real x (0 for -0.0, nan for nan); x / |x| for complex x (0 at
    0, nan + nan j if a part is nan).  Same shape and dtype; zero derivative (as JAX)."""
    x = operand(x)
    if dtypes.is_bool(x.dtype):
        return x
    return bind(P.sign_p, x)


def abs(x: ArrayLike) -> Array:
    """|x|: same shape; the dtype of x for real x (abs(-0.0) is +0.0; ints wrap like NumPy's at
    the minimum), the float of the same precision for complex x (no undue overflow: inf if a
    part is inf, even with a nan part).

    Derivative: 1 at 0 for real x (like JAX's); conj(x)/|x| (0 at 0) for complex x."""
    x = operand(x)
    if dtypes.is_bool(x.dtype) or x.dtype.kind == "u":
        return x
    return bind(P.abs_p, x)


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


_NONZERO: list = [None]


def where(condition: ArrayLike, x: ArrayLike = None, y: ArrayLike = None, *,
          size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """x where condition is true, else y.  The three shapes broadcast; x and y promote (weak
    scalars included); a non-bool condition means ``condition != 0``.  With the condition
    alone, ``nonzero(condition, size=size, fill_value=fill_value)`` (NumPy's one-argument
    form: a tuple of index arrays; ``size`` and ``fill_value``: JAX's keywords, see
    ``nonzero``)."""
    if x is None and y is None:
        nonzero = _NONZERO[0]     # set by the indexing module, which imports this one
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("where: size and fill_value apply to the one-argument form only")
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
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


def _float_test(prim, x, integer_value):
    x = operand(x)
    if not dtypes.is_inexact(x.dtype):
        return broadcast_to(const(integer_value, dtypes.bool_), x.shape)
    return bind(prim, x)


def isnan(x: ArrayLike) -> Array:
    """True where x is nan (complex: where either part is): same shape, bool (all false for
    integer dtypes)."""
    return _float_test(P.isnan_p, x, False)


def isfinite(x: ArrayLike) -> Array:
    """True where x is neither inf nor nan (complex: where both parts are finite): same shape,
    bool (all true for integer dtypes)."""
    return _float_test(P.isfinite_p, x, True)


def isinf(x: ArrayLike) -> Array:
    """True where x is +inf or -inf (complex: where either part is, even with a nan part): same
    shape, bool."""
    return _float_test(P.isinf_p, x, False)


# -- the Array API standard's and NumPy's names beyond the seed's set ---------------------------

pow = power
bitwise_invert = bitwise_not


def positive(x: ArrayLike) -> Array:
    """+x: x itself (same shape and dtype); TypeError for bool, as ``negative``."""
    x = operand(x)
    if dtypes.is_bool(x.dtype):
        raise TypeError("positive: not defined for bool tensors")
    return x


def _float_unary(prim, x, name=None):
    """``prim`` on x as a float tensor; ``name`` given: real dtypes only."""
    x = as_inexact(x)
    if name is not None:
        check_real(x, name)
    return bind(prim, x)


def _float_binary(prim, a, b, name):
    """``prim`` on a and b promoted, broadcast and made float; real dtypes only."""
    if _same_inexact(a, b, "f"):
        return binary_op(prim, a, b)
    a, b = promote(a, b)
    check_real(a, name)
    if not dtypes.is_inexact(a.dtype):
        a, b = as_inexact(a), as_inexact(b)
    return binary_op(prim, a, b)


def arccos(x: ArrayLike) -> Array:
    """Inverse cosine in [0, pi] (nan outside [-1, 1] for real x; complex x: the principal
    branch, cuts along the real axis beyond +-1, as NumPy).  Same shape, float dtype."""
    return _float_unary(P.acos_p, x)


def arcsin(x: ArrayLike) -> Array:
    """Inverse sine in [-pi/2, pi/2] (nan outside [-1, 1] for real x; complex: the principal
    branch).  Same shape, float dtype."""
    return _float_unary(P.asin_p, x)


def arctan(x: ArrayLike) -> Array:
    """Inverse tangent in [-pi/2, pi/2] (complex: the principal branch, cuts along the
    imaginary axis beyond +-1j).  Same shape, float dtype."""
    return _float_unary(P.atan_p, x)


def arctan2(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The angle of the point (x2, x1) in [-pi, pi], quadrant from both signs (signed zeros
    and infinities as C's atan2).  Broadcast shape; promoted float dtype; real only."""
    return _float_binary(P.atan2_p, x1, x2, "atan2")


def arccosh(x: ArrayLike) -> Array:
    """Inverse hyperbolic cosine (nan below 1 for real x; complex: the principal branch).
    Same shape, float dtype."""
    return _float_unary(P.acosh_p, x)


def arcsinh(x: ArrayLike) -> Array:
    """Inverse hyperbolic sine.  Same shape, float dtype (complex: the principal branch)."""
    return _float_unary(P.asinh_p, x)


def arctanh(x: ArrayLike) -> Array:
    """Inverse hyperbolic tangent (+-inf at +-1, nan beyond for real x; complex: the principal
    branch).  Same shape, float dtype."""
    return _float_unary(P.atanh_p, x)


acos, asin, atan, atan2 = arccos, arcsin, arctan, arctan2
acosh, asinh, atanh = arccosh, arcsinh, arctanh


def sinh(x: ArrayLike) -> Array:
    """Hyperbolic sine, same shape; float or complex dtype."""
    return _float_unary(P.sinh_p, x)


def cosh(x: ArrayLike) -> Array:
    """Hyperbolic cosine, same shape; float or complex dtype."""
    return _float_unary(P.cosh_p, x)


def log10(x: ArrayLike) -> Array:
    """Base-10 logarithm (-inf at 0, nan below for real x), same shape; float dtype."""
    return _float_unary(P.log10_p, x)


def logaddexp(x1: ArrayLike, x2: ArrayLike) -> Array:
    """log(exp(x1) + exp(x2)) without overflow: broadcast shape, promoted float dtype; real
    only.  Derivative: the softmax weights of (x1, x2) (1/2 each where x1 == x2)."""
    return _float_binary(P.logaddexp_p, x1, x2, "logaddexp")


def logaddexp2(x1: ArrayLike, x2: ArrayLike) -> Array:
    """log2(2**x1 + 2**x2) without overflow: broadcast shape, promoted float dtype; real only."""
    return _float_binary(P.logaddexp2_p, x1, x2, "logaddexp2")


def hypot(x1: ArrayLike, x2: ArrayLike) -> Array:
    """sqrt(x1**2 + x2**2) without undue overflow or underflow (inf if either is inf, even with
    a nan): broadcast shape, promoted float dtype; real only.  Derivative 0 at (0, 0)."""
    return _float_binary(P.hypot_p, x1, x2, "hypot")


def copysign(x1: ArrayLike, x2: ArrayLike) -> Array:
    """|x1| with the sign bit of x2 (-0.0 and nan signs count): broadcast shape, promoted float
    dtype; real only.  Derivative: +-1 in x1 (whether the signs agree), 0 in x2."""
    return _float_binary(P.copysign_p, x1, x2, "copysign")


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The next representable value after x1 toward x2 (x2 where they are equal, so -0.0 toward
    +0.0 is +0.0): broadcast shape, promoted float dtype; real only; zero derivative."""
    return _float_binary(P.nextafter_p, x1, x2, "nextafter")


def signbit(x: ArrayLike) -> Array:
    """True where the sign bit of x is set (-0.0, negative numbers, nan with the sign bit):
    same shape, bool; real only (ints: x < 0)."""
    x = operand(x)
    check_real(x, "signbit")
    if not dtypes.is_inexact(x.dtype):
        return less(x, 0)
    return bind(P.signbit_p, x)


def _integral(prim, x, name):
    x = operand(x)
    check_real(x, name)
    if not dtypes.is_inexact(x.dtype):
        return x
    return bind(prim, x)


def floor(x: ArrayLike) -> Array:
    """The largest integer value <= x (inf, nan and -0.0 kept): same shape and dtype (integer
    tensors are returned as they are); real only; zero derivative."""
    return _integral(P.floor_p, x, "floor")


def ceil(x: ArrayLike) -> Array:
    """The smallest integer value >= x (ceil(-0.5) is -0.0): same shape and dtype; real only;
    zero derivative."""
    return _integral(P.ceil_p, x, "ceil")


def trunc(x: ArrayLike) -> Array:
    """x rounded toward zero (trunc(-0.5) is -0.0): same shape and dtype; real only; zero
    derivative."""
    return _integral(P.trunc_p, x, "trunc")


fix = trunc


def rint(x: ArrayLike) -> Array:
    """x rounded to the nearest integer value, halves to even (complex: each part): same shape
    and dtype; zero derivative."""
    x = operand(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    return bind(P.rint_p, x)


def round(x: ArrayLike, decimals: int = 0) -> Array:
    """x rounded to ``decimals`` decimal places, halves to even (complex: each part); NumPy's
    algorithm (rint(x * 10**decimals) / 10**decimals), so the same values as ``np.round``.

    Same shape and dtype; integer tensors with ``decimals < 0`` round exactly in integers
    (``round(25, -1) == 20``).  Zero derivative.
    """
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be an int, got {decimals!r}") from None
    x = operand(x)
    if not dtypes.is_inexact(x.dtype):
        if decimals >= 0 or dtypes.is_bool(x.dtype):
            return x
        return _round_int(x, 10 ** -decimals)
    if decimals == 0:
        return bind(P.rint_p, x)
    if dtypes.is_complex(x.dtype):   # each part on its own (complex arithmetic would mix them)
        return bind(P.complex_p, round(bind(P.real_p, x), decimals),
                    round(bind(P.imag_p, x), decimals))
    if decimals > 0:
        f = float(10 ** decimals)
        return divide(bind(P.rint_p, multiply(x, f)), f)
    f = float(10 ** -decimals)
    return multiply(bind(P.rint_p, divide(x, f)), f)


def _round_int(x, p):
    """Integers rounded to a multiple of p (> 1), halves to the even multiple, in integers."""
    if p > np.iinfo(x.dtype).max:
        return broadcast_to(const(0, x.dtype), x.shape)   # |x| < p / 2 for every value
    q = floor_divide(x, p)
    r = subtract(x, multiply(q, p))                        # 0 <= r < p
    half_up = greater(r, subtract(p, r))
    tie = logical_and(equal(r, subtract(p, r)), not_equal(bitwise_and(q, 1), 0))
    return multiply(add(q, astype(logical_or(half_up, tie), x.dtype)), p)


def real(x: ArrayLike) -> Array:
    """The real part: same shape; float of the same precision for complex x, x itself for real
    x.  Differentiable (its transpose makes g + 0j)."""
    x = operand(x)
    if not dtypes.is_complex(x.dtype):
        return x
    return bind(P.real_p, x)


def imag(x: ArrayLike) -> Array:
    """The imaginary part: same shape; float of the same precision for complex x, zeros of x's
    dtype for real x.  Differentiable (its transpose makes -g j)."""
    x = operand(x)
    if not dtypes.is_complex(x.dtype):
        return broadcast_to(const(0, x.dtype), x.shape)
    return bind(P.imag_p, x)


def conj(x: ArrayLike) -> Array:
    """The complex conjugate: same shape and dtype (x itself for real x)."""
    x = operand(x)
    if not dtypes.is_complex(x.dtype):
        return x
    return bind(P.conj_p, x)


conjugate = conj


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of z in (-pi, pi] (degrees with ``deg``): atan2(imag(z), real(z)), so for
    real z 0 or pi (pi at -0.0, as NumPy).  Same shape, float dtype; differentiable for
    complex z (zero derivative for real z)."""
    z = operand(z)
    if dtypes.is_complex(z.dtype):
        a = bind(P.atan2_p, bind(P.imag_p, z), bind(P.real_p, z))
    else:
        z = as_inexact(z)
        a = bind(P.atan2_p, broadcast_to(const(0, z.dtype), z.shape), z)
    return bind(P.rad2deg_p, a) if deg else a


def deg2rad(x: ArrayLike) -> Array:
    """Degrees to radians (x * pi / 180, NumPy's loop): same shape, float dtype; real only."""
    return _float_unary(P.deg2rad_p, x, "deg2rad")


def rad2deg(x: ArrayLike) -> Array:
    """Radians to degrees (x * 180 / pi, NumPy's loop): same shape, float dtype; real only."""
    return _float_unary(P.rad2deg_p, x, "rad2deg")


radians, degrees = deg2rad, rad2deg


def sinc(x: ArrayLike) -> Array:
    """sin(pi x) / (pi x), 1 at 0 (NumPy's normalized sinc, the same values): same shape, float
    or complex dtype.  Differentiable to any order, also at 0."""
    r = fast_unary(x, np.sinc)    # a concrete float tensor outside transformations: NumPy's
    if r is not None:             # own sinc, the same formula in one call
        return r
    x = as_inexact(x)
    zero = equal(x, 0)
    y = multiply(math.pi, where(zero, 1, x))
    return where(zero, bind(P.sinc_taylor_p, x, k=0), divide(sin(y), y))


def heaviside(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The step function: 0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, nan where x1 is nan.
    Broadcast shape, promoted float dtype; real only.  Derivative: 0 in x1, 1 in x2 at 0."""
    a, b = promote(x1, x2)
    check_real(a, "heaviside")
    a, b = as_inexact(a), as_inexact(b)
    step = where(less(a, 0), 0, where(greater(a, 0), 1, b))
    return where(isnan(a), a, step)


def isposinf(x: ArrayLike) -> Array:
    """True where x is +inf: same shape, bool; real only."""
    x = operand(x)
    check_real(x, "isposinf")
    return logical_and(isinf(x), logical_not(signbit(x)))


def isneginf(x: ArrayLike) -> Array:
    """True where x is -inf: same shape, bool; real only."""
    x = operand(x)
    check_real(x, "isneginf")
    return logical_and(isinf(x), signbit(x))


def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """x with nan replaced by ``nan``, +inf by ``posinf`` (default: the dtype's largest finite
    value) and -inf by ``neginf`` (default: the most negative); complex x: each part.  Same
    shape and dtype; integer tensors unchanged; ``copy`` is accepted for NumPy's signature
    (tensors are values).  Differentiable (the replaced elements are constants)."""
    x = operand(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        re = nan_to_num(bind(P.real_p, x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(bind(P.imag_p, x), nan=nan, posinf=posinf, neginf=neginf)
        return bind(P.complex_p, re, im)
    info = np.finfo(x.dtype)

    def fill(name, v, default):
        # a Python/NumPy real, or a 0-d real array (a traced one too: jit(f)(x, nan_value)),
        # cast to x's dtype
        if v is None:
            return default
        if isinstance(v, (int, float, np.integer, np.floating)):
            return float(v)
        dt = getattr(v, "dtype", None)
        if getattr(v, "shape", None) != () or not (dtypes.is_float(np.dtype(dt))
                                                   or dtypes.is_integer(np.dtype(dt))):
            raise TypeError(f"nan_to_num: {name} must be a real number or a 0-d real array, "
                            f"got {v!r}")
        return astype(operand(v), x.dtype)

    hi = fill("posinf", posinf, float(info.max))
    lo = fill("neginf", neginf, float(info.min))
    out = where(isnan(x), fill("nan", nan, 0.0), x)
    out = where(isposinf(x), hi, out)
    return where(isneginf(x), lo, out)


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Array:
    """|a - b| <= atol + rtol * |b| elementwise, NumPy's (asymmetric) test; equal infinities
    are close; nan is close to nan only with ``equal_nan``.  Broadcast shape, bool."""
    a, b = promote(a, b)
    a, b = as_inexact(a), as_inexact(b)
    if a.shape != b.shape:
        a, b = broadcast_to(a, broadcast_shapes(a.shape, b.shape)), \
            broadcast_to(b, broadcast_shapes(a.shape, b.shape))
    tol = add(atol, multiply(rtol, abs(b)))
    close = logical_and(less_equal(abs(subtract(a, b)), tol), isfinite(b))
    close = logical_or(close, equal(a, b))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def _all(x):
    return bind(P.reduce_prod_p, x, axes=tuple(range(x.ndim)), keepdims=False)


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Array:
    """Whether ``isclose(a, b, rtol, atol, equal_nan)`` holds everywhere: a 0-d bool tensor
    (usable in ``if``).  ValueError when the shapes do not broadcast."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array:
    """Whether a1 and a2 have the same shape and equal elements (nan equal to nan with
    ``equal_nan``): a 0-d bool tensor.  Shapes that differ give False (no broadcasting)."""
    a1, a2 = operand(a1), operand(a2)
    if a1.shape != a2.shape:
        return const(False, dtypes.bool_)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return _all(eq)


def _check_shift_operands(a, b, name):
    for arg, v in (("x1", a), ("x2", b)):
        kind = v.dtype.kind if hasattr(v, "dtype") else None
        if isinstance(v, (bool, float, complex)) or kind not in (None, "i", "u"):
            what = v.dtype if kind is not None else type(v).__name__
            raise TypeError(f"{name}: {arg} must have an integer dtype, got {what}")
    a, b = promote(a, b)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: the dtypes of x1 and x2 promote to {a.dtype}, not an integer")
    return a, b


def bitwise_left_shift(x1: ArrayLike, x2: ArrayLike) -> Array:
    """x1 << x2 (x1 * 2**x2 wrapping, 0 for shifts >= the bit width): broadcast shape, promoted
    integer dtype.  TypeError for float, complex or bool operands; ValueError for x2 < 0."""
    a, b = _check_shift_operands(x1, x2, "bitwise_left_shift")
    return binary_op(P.lshift_p, a, b)


def bitwise_right_shift(x1: ArrayLike, x2: ArrayLike) -> Array:
    """x1 >> x2, arithmetic (floor(x1 / 2**x2); 0 or -1 for shifts >= the bit width):
    broadcast shape, promoted integer dtype.  TypeError for float, complex or bool operands;
    ValueError for x2 < 0."""
    a, b = _check_shift_operands(x1, x2, "bitwise_right_shift")
    return binary_op(P.rshift_p, a, b)
