"""``nx.lax``'s elementwise names with JAX's semantics, composed from the front end.

Where ``lax`` differs from NumPy's name of the same operation, the difference is kept: ``div``
of integers rounds toward zero and ``rem`` takes the dividend's sign (C's ``/`` and ``%``),
``round`` rounds half away from zero by default, ``convert_element_type`` from a float to an
integer saturates (NaN gives 0), shifts by the bit width or more give 0 (or the sign for the
arithmetic right shift), ``sign(-0.0)`` is -0.0.

Binary operations take operands of one dtype, as JAX's ``lax`` does: two arrays of different
dtypes raise TypeError (a Python scalar takes the array's dtype).  Shapes broadcast as the
front end's do (JAX's ``lax`` asks for equal shapes, or scalars).
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as F
from nx_rune.frontend._core import as_inexact, promote
from nx_rune.frontend._core import operand as _arr
from nx_rune.scipy import special as _special
from nx_rune.tensor import ArrayBase
from nx_rune.typing import Array, ArrayLike, DTypeLike

__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bessel_i0e",
    "bessel_i1e", "betainc", "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "broadcasted_iota", "cbrt", "ceil", "clamp", "complex", "conj",
    "convert_element_type", "cos", "cosh", "digamma", "div", "eq", "erf", "erf_inv", "erfc",
    "exp", "exp2", "expm1", "floor", "full", "full_like", "ge", "gt", "igamma", "igammac",
    "imag", "integer_pow", "iota", "is_finite", "le", "lgamma", "log", "log1p", "logistic", "lt",
    "max", "min", "mul", "ne", "neg", "nextafter", "polygamma", "pow", "real", "reciprocal",
    "rem", "round", "RoundingMethod", "rsqrt", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh",
    "zeros_like_array",
]

_ARRAYS = (ArrayBase, np.ndarray, np.generic)


def _same_dtype(name, x, y):
    """x and y as arrays of one dtype; TypeError naming ``name`` when both are arrays of
    different dtypes (JAX's ``lax`` does not promote; Python scalars take the other's dtype)."""
    if isinstance(x, _ARRAYS) and isinstance(y, _ARRAYS) and not isinstance(x, (float, int)) \
            and not isinstance(y, (float, int)):
        dx, dy = np.dtype(x.dtype), np.dtype(y.dtype)
        if dx != dy:
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {dx} "
                            f"and {dy} (nx.{name} style front-end functions promote)")
    return x, y


def _binary(fn, name):
    def op(x: ArrayLike, y: ArrayLike) -> Array:
        x, y = _same_dtype(name, x, y)
        return fn(x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"JAX's ``lax.{name}(x, y)``: elementwise, operands of one dtype."
    return op


def _unary(fn, name, doc=None):
    def op(x: ArrayLike, *, accuracy: Any = None) -> Array:
        return fn(x)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc or (f"JAX's ``lax.{name}(x)``, elementwise (``accuracy`` is accepted and "
                         f"ignored).")
    return op


add = _binary(F.add, "add")
sub = _binary(F.subtract, "sub")
max = _binary(F.maximum, "max")
min = _binary(F.minimum, "min")
atan2 = _binary(F.arctan2, "atan2")
bitwise_and = _binary(F.bitwise_and, "bitwise_and")
bitwise_or = _binary(F.bitwise_or, "bitwise_or")
bitwise_xor = _binary(F.bitwise_xor, "bitwise_xor")
eq = _binary(F.equal, "eq")
ne = _binary(F.not_equal, "ne")
lt = _binary(F.less, "lt")
le = _binary(F.less_equal, "le")
gt = _binary(F.greater, "gt")
ge = _binary(F.greater_equal, "ge")


def mul(x: ArrayLike, y: ArrayLike, *, out_dtype: DTypeLike = None) -> Array:
    """JAX's ``lax.mul(x, y)``: elementwise product of one dtype (``out_dtype``: the result's
    dtype, the operands converted to it first)."""
    x, y = _same_dtype("mul", x, y)
    if out_dtype is not None:
        x, y = F.astype(_arr(x), out_dtype), F.astype(_arr(y), out_dtype)
    return F.multiply(x, y)


def pow(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.pow(x, y)``: x ** y; y may be an integer array for a float or complex x."""
    x = _arr(x)
    if isinstance(y, _ARRAYS) and np.dtype(y.dtype).kind in "iu" and x.dtype.kind in "fc":
        y = F.astype(_arr(y), x.dtype)
    return F.power(x, y)


def div(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.div(x, y)``: true division for inexact dtypes; integer division rounding
    toward zero (C's ``/``, not NumPy's floor division) for integers."""
    x, y = _same_dtype("div", x, y)
    x, y = promote(_arr(x) if isinstance(x, _ARRAYS) else x,
                     _arr(y) if isinstance(y, _ARRAYS) else y)
    if x.dtype.kind not in "iu":
        return F.divide(x, y)
    q = F.floor_divide(x, y)
    if x.dtype.kind == "u":
        return q
    # floor and truncation differ where the quotient is negative and inexact
    inexact = F.logical_and(F.not_equal(F.multiply(q, y), x),
                            F.not_equal(F.less(x, 0), F.less(y, 0)))
    return F.where(inexact, F.add(q, F.astype(1, q.dtype)), q)


def rem(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.rem(x, y)``: the remainder with the sign of the dividend x (C's ``fmod``;
    NumPy's ``mod``/``%`` take the divisor's sign).  Differentiable in x (derivative 1) and y
    (``-trunc(x / y)``)."""
    x, y = _same_dtype("rem", x, y)
    x, y = promote(_arr(x) if isinstance(x, _ARRAYS) else x,
                     _arr(y) if isinstance(y, _ARRAYS) else y)
    if x.dtype.kind == "u":
        return F.mod(x, y)
    if x.dtype.kind in "iu":
        return F.subtract(x, F.multiply(div(x, y), y))
    r = F.mod(x, y)
    # NumPy's mod adds y to fmod's result where the signs differ: take it back off
    fix = F.logical_and(F.not_equal(r, 0), F.not_equal(F.signbit(r), F.signbit(x)))
    r = F.where(fix, F.subtract(r, y), r)
    # a zero remainder keeps the dividend's sign, as fmod's: -(0 - r) is -0.0 and 0 + r is
    # +0.0 for either zero r, and both keep r's derivative (copysign would flip it)
    zero = F.equal(r, 0)
    signed = F.where(F.signbit(x), F.negative(F.subtract(0.0, r)), F.add(0.0, r))
    return F.where(zero, signed, r)


neg = _unary(F.negative, "neg")
abs = _unary(F.abs, "abs")
exp = _unary(F.exp, "exp")
exp2 = _unary(F.exp2, "exp2")
log = _unary(F.log, "log")
log1p = _unary(F.log1p, "log1p")
expm1 = _unary(F.expm1, "expm1")
tanh = _unary(F.tanh, "tanh")
sin = _unary(F.sin, "sin")
cos = _unary(F.cos, "cos")
tan = _unary(F.tan, "tan")
sqrt = _unary(F.sqrt, "sqrt")
floor = _unary(F.floor, "floor")
ceil = _unary(F.ceil, "ceil")
asin = _unary(F.arcsin, "asin")
acos = _unary(F.arccos, "acos")
atan = _unary(F.arctan, "atan")
sinh = _unary(F.sinh, "sinh")
cosh = _unary(F.cosh, "cosh")
asinh = _unary(F.arcsinh, "asinh")
acosh = _unary(F.arccosh, "acosh")
atanh = _unary(F.arctanh, "atanh")
is_finite = _unary(F.isfinite, "is_finite")
real = _unary(F.real, "real")
imag = _unary(F.imag, "imag")
conj = _unary(F.conj, "conj")
square = _unary(F.square, "square")
reciprocal = _unary(F.reciprocal, "reciprocal")
bitwise_not = _unary(F.bitwise_not, "bitwise_not")
logistic = _unary(F.sigmoid, "logistic", "JAX's ``lax.logistic(x)``: 1 / (1 + exp(-x)).")
erf = _unary(_special.erf, "erf")
erfc = _unary(_special.erfc, "erfc")
erf_inv = _unary(_special.erfinv, "erf_inv", "JAX's ``lax.erf_inv(x)``: the inverse error "
                 "function on (-1, 1) (+-inf at +-1, NaN outside).")
lgamma = _unary(_special.gammaln, "lgamma")
digamma = _unary(_special.digamma, "digamma")
bessel_i0e = _unary(_special.i0e, "bessel_i0e")
bessel_i1e = _unary(_special.i1e, "bessel_i1e")


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Array:
    """JAX's ``lax.nextafter(x1, x2)``: the next float after x1 toward x2 (operands of one
    dtype)."""
    x1, x2 = _same_dtype("nextafter", x1, x2)
    return F.nextafter(x1, x2)


def polygamma(m: ArrayLike, x: ArrayLike) -> Array:
    """JAX's ``lax.polygamma(m, x)``: the m-th derivative of digamma."""
    return _special.polygamma(m, x)


def igamma(a: ArrayLike, x: ArrayLike) -> Array:
    """JAX's ``lax.igamma(a, x)``: the regularized lower incomplete gamma function P(a, x)."""
    return _special.gammainc(a, x)


def igammac(a: ArrayLike, x: ArrayLike) -> Array:
    """JAX's ``lax.igammac(a, x)``: the regularized upper incomplete gamma function Q(a, x)."""
    return _special.gammaincc(a, x)


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """JAX's ``lax.betainc(a, b, x)``: the regularized incomplete beta function."""
    return _special.betainc(a, b, x)


def complex(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.complex(x, y)``: x + 1j * y from real operands of one dtype (float32 gives
    complex64, float64 complex128)."""
    x, y = _same_dtype("complex", x, y)
    x, y = promote(_arr(x) if isinstance(x, _ARRAYS) else x,
                     _arr(y) if isinstance(y, _ARRAYS) else y)
    if x.dtype.kind not in "f":
        raise TypeError(f"lax.complex: x and y must be real floating point, got {x.dtype}")
    cdt = dtypes.complex128 if x.dtype == np.float64 else dtypes.complex64
    return F.add(F.astype(x, cdt), F.multiply(F.astype(y, cdt), 1j))


def rsqrt(x: ArrayLike, *, accuracy: Any = None) -> Array:
    """JAX's ``lax.rsqrt(x)``: 1 / sqrt(x)."""
    return F.reciprocal(F.sqrt(x))


def cbrt(x: ArrayLike, *, accuracy: Any = None) -> Array:
    """JAX's ``lax.cbrt(x)``: the real cube root (negative for negative x)."""
    x = as_inexact(_arr(x))
    mag = F.power(F.abs(x), 1.0 / 3.0)
    return F.where(F.less(x, 0), F.negative(mag), mag)


def sign(x: ArrayLike) -> Array:
    """JAX's ``lax.sign(x)``: -1, 0 or 1 (x / |x| for complex); -0.0 stays -0.0, NaN stays NaN."""
    x = _arr(x)
    s = F.sign(x)
    if x.dtype.kind == "f":
        return F.where(F.equal(x, 0), x, s)
    return s


def integer_pow(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.integer_pow(x, y)``: x ** y for a static Python int y (negative: 1 / x ** -y);
    x's dtype.  Its derivative is y * x ** (y - 1) (1 for y = 1, also at x = 0)."""
    if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, np.integer)):
        raise TypeError(f"lax.integer_pow: y must be a Python int, got {y!r}")
    x = _arr(x)
    y = int(y)
    if y == 0:
        return F.ones_like(x)
    if x.dtype.kind in "iu" and y < 0:
        raise TypeError(f"lax.integer_pow: a negative power {y} needs an inexact x, got "
                        f"{x.dtype}")
    # binary powering: each multiply is exact in its derivative (no pow at 0 ** negative)
    base, n, acc = x, -y if y < 0 else y, None
    while n:
        if n & 1:
            acc = base if acc is None else F.multiply(acc, base)
        n >>= 1
        if n:
            base = F.multiply(base, base)
    return F.reciprocal(acc) if y < 0 else acc


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Array:
    """JAX's ``lax.clamp(min, x, max)``: x limited to [min, max] (min and max scalars or of x's
    shape).  The derivative flows to x where min < x < max (and at the bounds to the bound)."""
    x = _arr(x)
    lo = F.astype(_arr(min), x.dtype) if not isinstance(min, (int, float)) else min
    hi = F.astype(_arr(max), x.dtype) if not isinstance(max, (int, float)) else max
    return F.minimum(F.maximum(x, lo), hi)


class RoundingMethod(enum.IntEnum):
    """JAX's ``lax.RoundingMethod``: halves away from zero (0) or to the nearest even (1)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: ArrayLike, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Array:
    """JAX's ``lax.round(x, rounding_method)``: to the nearest integer, halves away from zero
    (default) or to the nearest even (``RoundingMethod.TO_NEAREST_EVEN`` or 1)."""
    x = _arr(x)
    method = RoundingMethod(int(rounding_method))
    if x.dtype.kind not in "fc":
        raise TypeError(f"lax.round: x must be floating point, got {x.dtype}")
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return F.rint(x)
    t = F.trunc(x)
    # x - trunc(x) is exact: no rounding of x + 0.5 can move a value below one half up
    up = F.greater_equal(F.abs(F.subtract(x, t)), 0.5)
    return F.where(up, F.add(t, F.sign(x)), t)


def _int_bits(x, name):
    x = _arr(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"lax.{name}: x must be an integer array, got {x.dtype}")
    return x, x.dtype.itemsize * 8


def shift_left(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.shift_left(x, y)``: x << y; a shift of the bit width or more (or negative)
    gives 0."""
    x, y = _same_dtype("shift_left", x, y)
    x, bits = _int_bits(x, "shift_left")
    y = F.astype(_arr(y), x.dtype)
    ok = F.logical_and(F.greater_equal(y, 0), F.less(y, bits))
    safe = F.where(ok, y, F.zeros_like(y))
    return F.where(ok, F.bitwise_left_shift(x, safe), F.zeros_like(x))


def shift_right_arithmetic(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.shift_right_arithmetic(x, y)``: x >> y filling with the sign bit; a shift of
    the bit width or more gives 0 or -1 (the sign)."""
    x, y = _same_dtype("shift_right_arithmetic", x, y)
    x, bits = _int_bits(x, "shift_right_arithmetic")
    y = F.astype(_arr(y), x.dtype)
    ok = F.logical_and(F.greater_equal(y, 0), F.less(y, bits))
    if x.dtype.kind == "u":
        sx = F.astype(x, np.dtype(f"int{bits}"))
        r = F.bitwise_right_shift(sx, F.astype(F.where(ok, y, F.full_like(y, bits - 1)),
                                               sx.dtype))
        return F.astype(r, x.dtype)
    return F.bitwise_right_shift(x, F.where(ok, y, F.full_like(y, bits - 1)))


def shift_right_logical(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's ``lax.shift_right_logical(x, y)``: x >> y filling with zeros (signed x read as
    unsigned); a shift of the bit width or more gives 0."""
    x, y = _same_dtype("shift_right_logical", x, y)
    x, bits = _int_bits(x, "shift_right_logical")
    y = F.astype(_arr(y), x.dtype)
    ok = F.logical_and(F.greater_equal(y, 0), F.less(y, bits))
    udt = np.dtype(f"uint{bits}")
    ux = F.astype(x, udt) if x.dtype.kind == "i" else x
    r = F.bitwise_right_shift(ux, F.astype(F.where(ok, y, F.zeros_like(y)), udt))
    r = F.where(ok, r, F.zeros_like(r))
    return F.astype(r, x.dtype)


def convert_element_type(operand: ArrayLike, new_dtype: DTypeLike) -> Array:
    """JAX's ``lax.convert_element_type(operand, new_dtype)``.  Float to integer truncates
    toward zero and saturates at the integer type's range (NaN gives 0), as XLA does; complex
    to real keeps the real part; anything to bool is ``!= 0``.  Differentiable between inexact
    types (the derivative is converted back)."""
    x = _arr(operand)
    dt = dtypes.check_dtype(new_dtype)
    if x.dtype == dt:
        return x
    if dt.kind == "b":
        return F.not_equal(x, 0)
    if x.dtype.kind == "c" and dt.kind != "c":
        x = F.real(x)
    if x.dtype.kind == "f" and dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = float(info.min), float(info.max)
        t = F.trunc(x)
        # saturate: bounds compared in x's precision (hi may round up to 2**bits there)
        big = F.greater_equal(t, hi)
        small = F.less_equal(t, lo)
        mid = F.where(F.logical_or(F.logical_or(big, small), F.isnan(x)), F.zeros_like(t), t)
        out = F.astype(mid, dt)
        out = F.where(big, F.full_like(out, info.max), out)
        return F.where(small, F.full_like(out, info.min), out)
    return F.astype(x, dt)


def bitcast_convert_type(operand: ArrayLike, new_dtype: DTypeLike) -> Array:
    """JAX's ``lax.bitcast_convert_type(operand, new_dtype)``: the same bytes read as
    ``new_dtype`` (a wider type consumes the last axis, a narrower one adds one).  Not
    differentiable; needs a concrete operand (not under jit or vmap)."""
    x = _arr(operand)
    dt = dtypes.check_dtype(new_dtype)
    from nx_rune.frontend.indexing import concrete_value
    v = concrete_value(x)
    if v is None:
        raise NotImplementedError("lax.bitcast_convert_type: operand must be concrete (it is "
                                  "not supported under jit or vmap)")
    a = np.ascontiguousarray(v)
    src, dst = a.dtype.itemsize, dt.itemsize
    if src == dst:
        out = a.view(dt)
    elif src > dst:
        out = a.view(dt).reshape(a.shape + (src // dst,))
    else:
        if not a.shape or a.shape[-1] != dst // src:
            raise ValueError(f"operand: bitcasting {a.dtype} to {dt} needs a last axis of "
                             f"{dst // src}, got shape {a.shape}")
        out = a.view(dt).reshape(a.shape[:-1])
    return F.asarray(out.copy())


def iota(dtype: DTypeLike, size: int) -> Array:
    """JAX's ``lax.iota(dtype, size)``: 0, 1, ..., size - 1."""
    return F.arange(size, dtype=dtype)


def broadcasted_iota(dtype: DTypeLike, shape: Sequence[int], dimension: int, *,
                     out_sharding: Any = None) -> Array:
    """JAX's ``lax.broadcasted_iota(dtype, shape, dimension)``: the index along ``dimension``
    at each position of ``shape``."""
    shape = tuple(int(s) for s in shape)
    if not -len(shape) <= dimension < len(shape):
        raise ValueError(f"dimension: {dimension} is out of range for shape {shape}")
    d = dimension % len(shape)
    r = F.arange(shape[d], dtype=dtype)
    r = F.reshape(r, tuple(shape[d] if i == d else 1 for i in range(len(shape))))
    return F.broadcast_to(r, shape)


def full(shape: Sequence[int], fill_value: ArrayLike, dtype: DTypeLike = None, *,
          sharding: Any = None) -> Array:
    """JAX's ``lax.full(shape, fill_value, dtype)``; ``sharding`` accepted and ignored."""
    if isinstance(fill_value, ArrayBase) and F.ndim(fill_value) != 0:
        raise TypeError(f"fill_value: must be a scalar, got shape {fill_value.shape}")
    return F.full(shape, fill_value, dtype=dtype)


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike = None,
              shape: Sequence[int] | None = None,
              sharding: Any = None) -> Array:
    """JAX's ``lax.full_like(x, fill_value, dtype, shape)``: x's shape and dtype unless given."""
    x = _arr(x)
    return F.full(x.shape if shape is None else shape, fill_value,
                  dtype=x.dtype if dtype is None else dtype)


def zeros_like_array(x: ArrayLike) -> Array:
    """Zeros of x's shape and dtype (older JAX's ``lax.zeros_like_array``)."""
    return F.zeros_like(x)
