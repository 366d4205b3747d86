"""The NumPy-like front end, composed from primitives only.

Every function takes Tensors, tracers, NumPy arrays or Python scalars and returns a Tensor (or a
tracer under a transformation).  Binary functions broadcast with ``expand`` (stride-0 views: no
copy) and promote dtypes with NumPy's rules, with Python scalars weakly typed as in JAX
(``x * 2`` keeps ``x``'s dtype).  Because only primitives are bound, every function here is
differentiable to any order wherever its primitives are.

Semantics that differ from NumPy are stated in the docstrings: ``floor_divide``/``mod`` floor
like NumPy; ``maximum``/``minimum`` split the derivative equally on ties; true division of
integers gives float32 (float64 for 64-bit integers).
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import View, normalize_axis
from nx_rune.creation import asarray, normalize_shape
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.typing import Array, ArrayLike, Axis, DTypeLike, ShapeLike

__all__ = [
    "broadcast_shapes",
    "broadcast_to",
    "astype",
    "add",
    "subtract",
    "multiply",
    "divide",
    "floor_divide",
    "mod",
    "power",
    "negative",
    "reciprocal",
    "square",
    "sqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "tanh",
    "relu",
    "softplus",
    "sigmoid",
    "sign",
    "abs",
    "maximum",
    "minimum",
    "clip",
    "where",
    "less",
    "greater",
    "not_equal",
    "equal",
    "less_equal",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "isnan",
    "isfinite",
    "isinf",
    "sum",
    "prod",
    "max",
    "min",
    "mean",
    "var",
    "std",
    "all",
    "any",
    "argmax",
    "argmin",
    "logsumexp",
    "softmax",
    "log_softmax",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "matmul",
    "dot",
    "outer",
    "inner",
    "reshape",
    "ravel",
    "transpose",
    "permute",
    "moveaxis",
    "swapaxes",
    "expand_dims",
    "squeeze",
    "pad",
    "shrink",
    "flip",
    "as_strided",
    "concatenate",
    "stack",
    "split",
    "copy",
    "contiguous",
    "is_contiguous",
    "shares_memory",
    "assign",
    "true_divide",
    "remainder",
    "absolute",
    "invert",
    "amax",
    "amin",
    "IndexUpdateHelper",
    "take",
    "take_along_axis",
    "put_along_axis",
    "nonzero",
    "einsum",
    "unfold",
    "fold",
    "conv2d",
    "size",
    "shape",
    "ndim",
]

_SCALARS = (int, float, complex, bool, np.bool_)


# -- argument handling ---------------------------------------------------------------------

def _arr(x):
    return x if isinstance(x, ArrayBase) else asarray(x)


def _const(value, dtype):
    return Tensor._wrap(np.array(value, dtype=dtype))


def broadcast_shapes(*shapes: ShapeLike) -> tuple[int, ...]:
    """The NumPy broadcast of ``shapes``; ValueError naming them when incompatible."""
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-nd, 0):
        size = 1
        for s in shapes:
            if len(s) >= -i:
                d = s[i]
                if d != 1:
                    if size != 1 and d != size:
                        raise ValueError("shapes " + " and ".join(str(tuple(t)) for t in shapes)
                                         + " cannot be broadcast together")
                    size = d
        out.append(size)
    return tuple(out)


def broadcast_to(x: ArrayLike, shape: ShapeLike) -> Array:
    """``x`` viewed with ``shape`` (size-1 and missing leading axes repeat; stride 0, no copy)."""
    x = _arr(x)
    shape = normalize_shape(shape)
    if x.shape == shape:
        return x
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"shape: cannot broadcast a tensor of shape {x.shape} to {shape}")
    return bind(P.expand_p, x, shape=shape)


def astype(x: ArrayLike, dtype: DTypeLike) -> Array:
    """``x`` converted to ``dtype``, same shape (NumPy's casting: floats to ints truncate toward
    zero, nonzero to bool is True); ``x`` itself when the dtype already matches."""
    x = _arr(x)
    dt = dtypes.check_dtype(dtype)
    if x.dtype == dt:
        return x
    return bind(P.cast_p, x, dtype=dt)


def _promote(*xs):
    """Tensors of one dtype from arrays and weakly typed Python scalars."""
    arrays = [x for x in xs if not isinstance(x, _SCALARS)]
    if not arrays:  # only Python scalars: the default dtype of the highest kind among them
        dt = dtypes.scalar_dtype(builtins.max(xs, key=_scalar_rank))
        if dt.kind in "iu":
            dt = builtins.max((dtypes.scalar_dtype(x) for x in xs), key=lambda d: d.itemsize)
        return [_const(x, dt) for x in xs]
    arrays = [_arr(x) for x in arrays]
    dt = arrays[0].dtype if len(arrays) == 1 else dtypes.result_type(*[a.dtype for a in arrays])
    for x in xs:
        if isinstance(x, _SCALARS):
            dt = dtypes.weak_result_type(dt, x)
    out, it = [], iter(arrays)
    for x in xs:
        out.append(_const(x, dt) if isinstance(x, _SCALARS) else astype(next(it), dt))
    return out


def _scalar_rank(x):
    return 0 if isinstance(x, (bool, np.bool_)) else 1 if isinstance(x, int) else \
        2 if isinstance(x, float) else 3


def _broadcast(*xs):
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


_PY_NUMBERS = (float, int)
# dtype kinds that keep their dtype when they meet a Python number of the key's type (weak)
_KEEPS_KIND = {float: "fc", int: "iufc"}


def _binary(prim, a, b):
    # fast paths: equal shapes and dtypes, or an array and a Python number of its dtype
    if isinstance(a, ArrayBase):
        if isinstance(b, ArrayBase):
            if a.dtype == b.dtype and a.shape == b.shape:
                return bind(prim, a, b)
        else:
            kinds = _KEEPS_KIND.get(type(b))
            if kinds is not None and a.dtype.kind in kinds:
                return bind(prim, a, Tensor._broadcast_scalar(b, a.dtype, a.shape))
    elif isinstance(b, ArrayBase):
        kinds = _KEEPS_KIND.get(type(a))
        if kinds is not None and b.dtype.kind in kinds:
            return bind(prim, Tensor._broadcast_scalar(a, b.dtype, b.shape), b)
    a, b = _promote(a, b)
    if a.shape != b.shape:
        a, b = _broadcast(a, b)
    return bind(prim, a, b)


def _inexact(x):
    """``x`` as a float tensor (ints and bools go to float32, 64-bit ints to float64)."""
    x = _arr(x)
    if dtypes.is_inexact(x.dtype):
        return x
    return astype(x, dtypes.float64 if x.dtype.itemsize == 8 else dtypes.float32)


def _real_check(x, name):
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"{name}: not defined for complex tensors ({x.dtype})")


def _int_check(x, name):
    if not (dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype)):
        raise TypeError(f"{name}: needs integer or bool tensors, got {x.dtype}")


# -- elementwise arithmetic ----------------------------------------------------------------------

def add(a: ArrayLike, b: ArrayLike) -> Array:
    """a + b.  Shapes broadcast to their NumPy broadcast; dtype: NumPy promotion of the operands
    (a Python scalar is weak: ``x + 1`` keeps x's dtype, int + 2.5 gives float32)."""
    return _binary(P.add_p, a, b)


def subtract(a: ArrayLike, b: ArrayLike) -> Array:
    """a - b (as a + (-b)): broadcast shape, promoted dtype as ``add``; bool raises TypeError."""
    a, b = _promote(a, b)
    return add(a, negative(b))


def multiply(a: ArrayLike, b: ArrayLike) -> Array:
    """a * b: broadcast shape, promoted dtype as ``add``."""
    return _binary(P.mul_p, a, b)


def divide(a: ArrayLike, b: ArrayLike) -> Array:
    """True division a / b: broadcast shape; the promoted dtype when it is float or complex,
    else float32 (float64 when the promoted integer dtype is 64-bit).  x / 0 is inf or nan."""
    a, b = _promote(a, b)
    if not dtypes.is_inexact(a.dtype):
        a, b = _inexact(a), _inexact(b)
    return _binary(P.fdiv_p, a, b)


true_divide = divide


def floor_divide(a: ArrayLike, b: ArrayLike) -> Array:
    """a // b rounded toward minus infinity (NumPy's semantics, not C's truncation).

    Broadcast shape, promoted dtype (real only).  Integer division by zero raises
    ZeroDivisionError; float division by zero gives inf or nan.
    """
    a, b = _promote(a, b)
    _real_check(a, "floor_divide")
    return _binary(P.idiv_p, a, b)


def mod(a: ArrayLike, b: ArrayLike) -> Array:
    """a % b with the sign of the divisor (floored, as NumPy's ``%``).

    ``a == floor_divide(a, b) * b + mod(a, b)``.  Broadcast shape, promoted dtype (real only).
    Integer modulo by zero raises ZeroDivisionError.
    """
    a, b = _promote(a, b)
    _real_check(a, "mod")
    return _binary(P.mod_p, a, b)


remainder = mod


def power(a: ArrayLike, b: ArrayLike) -> Array:
    """a ** b: broadcast shape, promoted dtype as ``add``.  Integer bases to negative integer
    powers raise ValueError."""
    return _binary(P.pow_p, a, b)


def negative(x: ArrayLike) -> Array:
    """-x, same shape and dtype (unsigned ints wrap); TypeError for bool."""
    x = _arr(x)
    if dtypes.is_bool(x.dtype):
        raise TypeError("negative: not defined for bool tensors; use logical_not")
    return bind(P.neg_p, x)


def reciprocal(x: ArrayLike) -> Array:
    """1 / x, same shape; float dtype (ints and bools give float32, 64-bit ints float64)."""
    return bind(P.recip_p, _inexact(x))


def square(x: ArrayLike) -> Array:
    """x * x, same shape and dtype."""
    x = _arr(x)
    return bind(P.mul_p, x, x)


def sqrt(x: ArrayLike) -> Array:
    """Square root (nan below 0 for real input).  Same shape; float dtype (ints and bools give
    float32, 64-bit ints float64), as every transcendental function here."""
    return bind(P.sqrt_p, _inexact(x))


def exp(x: ArrayLike) -> Array:
    """e ** x, same shape; float dtype (see ``sqrt``)."""
    return bind(P.exp_p, _inexact(x))


def exp2(x: ArrayLike) -> Array:
    """2 ** x, same shape; float dtype."""
    return bind(P.exp2_p, _inexact(x))


def log(x: ArrayLike) -> Array:
    """Natural logarithm (-inf at 0, nan below), same shape; float dtype."""
    return bind(P.log_p, _inexact(x))


def log2(x: ArrayLike) -> Array:
    """Base-2 logarithm, same shape; float dtype."""
    return bind(P.log2_p, _inexact(x))


def log1p(x: ArrayLike) -> Array:
    """log(1 + x), accurate near 0; same shape, float dtype."""
    return bind(P.log1p_p, _inexact(x))


def expm1(x: ArrayLike) -> Array:
    """exp(x) - 1, accurate near 0; same shape, float dtype."""
    return bind(P.expm1_p, _inexact(x))


def sin(x: ArrayLike) -> Array:
    """Sine (radians), same shape; float dtype."""
    return bind(P.sin_p, _inexact(x))


def cos(x: ArrayLike) -> Array:
    """Cosine (radians), same shape; float dtype."""
    return bind(P.cos_p, _inexact(x))


def tan(x: ArrayLike) -> Array:
    """Tangent, as sin(x) / cos(x); same shape, float dtype."""
    x = _inexact(x)
    return bind(P.fdiv_p, bind(P.sin_p, x), bind(P.cos_p, x))


def tanh(x: ArrayLike) -> Array:
    """Hyperbolic tangent, same shape; float dtype."""
    return bind(P.tanh_p, _inexact(x))


def relu(x: ArrayLike) -> Array:
    """max(x, 0), same shape and dtype; nan stays nan; its derivative at 0 is 0 (as in JAX and
    PyTorch)."""
    x = _arr(x)
    if dtypes.is_inexact(x.dtype):
        return where(less_equal(x, 0), zeros_like_t(x), x)
    return where(greater(x, 0), x, zeros_like_t(x))


def softplus(x: ArrayLike) -> Array:
    """log(1 + exp(x)), stable for large |x| (softplus(inf) = inf); same shape, float dtype.  Its
    derivative is sigmoid(x) everywhere."""
    x = _inexact(x)
    m = greater(x, 0)
    pos = where(m, x, zeros_like_t(x))
    # |x| selected by the same mask as pos, so the kinks of the two terms cancel at 0 (the
    # derivative there is sigmoid(0) = 0.5) and softplus(inf) = inf
    abs_x = where(m, x, negative(x))
    return add(log1p(exp(negative(abs_x))), pos)


def sigmoid(x: ArrayLike) -> Array:
    """1 / (1 + exp(-x)), as exp(-softplus(-x)): no overflow, finite derivatives; same shape,
    float dtype."""
    x = _inexact(x)
    return exp(negative(softplus(negative(x))))


def sign(x: ArrayLike) -> Array:
    """-1, 0 or 1 by the sign of x (nan for nan), same shape and dtype; zero derivative."""
    x = _arr(x)
    _real_check(x, "sign")
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
    x = _arr(x)
    _real_check(x, "abs")
    if dtypes.is_bool(x.dtype) or x.dtype.kind == "u":
        return x
    return where(less(x, 0), negative(x), x)


absolute = abs


def maximum(a: ArrayLike, b: ArrayLike) -> Array:
    """Elementwise max (nan propagates): broadcast shape, promoted dtype; real dtypes only.  On
    ties the derivative is split equally."""
    a, b = _promote(a, b)
    _real_check(a, "maximum")
    return _binary(P.max_p, a, b)


def minimum(a: ArrayLike, b: ArrayLike) -> Array:
    """Elementwise min (nan propagates): broadcast shape, promoted dtype; real dtypes only.  On
    ties the derivative is split equally."""
    a, b = _promote(a, b)
    _real_check(a, "minimum")
    if dtypes.is_inexact(a.dtype):
        return negative(maximum(negative(a), negative(b)))
    if dtypes.is_bool(a.dtype):
        return logical_and(a, b)
    return bitwise_not(maximum(bitwise_not(a), bitwise_not(b)))


def clip(x: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None) -> Array:
    """x limited to [a_min, a_max] (either may be None; a_min > a_max gives a_max, as NumPy):
    maximum then minimum, so shapes broadcast and dtypes promote as there."""
    x = _arr(x)
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Array:
    """x where condition is true, else y.  The three shapes broadcast; x and y promote (weak
    scalars included); a non-bool condition means ``condition != 0``."""
    c = _arr(condition)
    if not dtypes.is_bool(c.dtype):
        c = not_equal(c, 0)
    x, y = _promote(x, y)
    shape = broadcast_shapes(c.shape, x.shape, y.shape)
    return bind(P.where_p, broadcast_to(c, shape), broadcast_to(x, shape), broadcast_to(y, shape))


def zeros_like_t(x):
    """Zeros of ``x``'s shape and dtype as a broadcast constant (no memory per element)."""
    return Tensor._broadcast_scalar(0, x.dtype, x.shape)


# -- comparisons and logic ---------------------------------------------------------------------

def less(a: ArrayLike, b: ArrayLike) -> Array:
    """a < b: broadcast shape, bool (compared in the promoted dtype; false where either is nan)."""
    return _binary(P.cmplt_p, a, b)


def greater(a: ArrayLike, b: ArrayLike) -> Array:
    """a > b: broadcast shape, bool (false where either is nan)."""
    return less(b, a)


def not_equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a != b: broadcast shape, bool (true where either is nan)."""
    return _binary(P.cmpne_p, a, b)


def equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a == b: broadcast shape, bool (false where either is nan)."""
    return logical_not(not_equal(a, b))


def less_equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a <= b: broadcast shape, bool (false where either is nan)."""
    a, b = _promote(a, b)
    return logical_or(less(a, b), equal(a, b))


def greater_equal(a: ArrayLike, b: ArrayLike) -> Array:
    """a >= b: broadcast shape, bool (false where either is nan)."""
    return less_equal(b, a)


def _as_bool(x):
    x = _arr(x)
    return x if dtypes.is_bool(x.dtype) else not_equal(x, 0)


def logical_and(a: ArrayLike, b: ArrayLike) -> Array:
    """a and b (non-bool operands mean ``!= 0``): broadcast shape, bool."""
    return _binary(P.and_p, _as_bool(a), _as_bool(b))


def logical_or(a: ArrayLike, b: ArrayLike) -> Array:
    """a or b: broadcast shape, bool."""
    return _binary(P.or_p, _as_bool(a), _as_bool(b))


def logical_not(x: ArrayLike) -> Array:
    """not x (``x == 0`` for non-bool x): same shape, bool."""
    x = _as_bool(x)
    return bind(P.xor_p, x, broadcast_to(_const(True, dtypes.bool_), x.shape))


def logical_xor(a: ArrayLike, b: ArrayLike) -> Array:
    """a xor b: broadcast shape, bool."""
    return _binary(P.xor_p, _as_bool(a), _as_bool(b))


def bitwise_and(a: ArrayLike, b: ArrayLike) -> Array:
    """a & b for integer or bool tensors: broadcast shape, promoted dtype."""
    a, b = _promote(a, b)
    _int_check(a, "bitwise_and")
    return _binary(P.and_p, a, b)


def bitwise_or(a: ArrayLike, b: ArrayLike) -> Array:
    """a | b for integer or bool tensors: broadcast shape, promoted dtype."""
    a, b = _promote(a, b)
    _int_check(a, "bitwise_or")
    return _binary(P.or_p, a, b)


def bitwise_xor(a: ArrayLike, b: ArrayLike) -> Array:
    """a ^ b for integer or bool tensors: broadcast shape, promoted dtype."""
    a, b = _promote(a, b)
    _int_check(a, "bitwise_xor")
    return _binary(P.xor_p, a, b)


def bitwise_not(x: ArrayLike) -> Array:
    """~x for integer or bool tensors (x ^ all-ones): same shape and dtype."""
    x = _arr(x)
    _int_check(x, "bitwise_not")
    ones = True if dtypes.is_bool(x.dtype) else np.array(-1).astype(x.dtype)
    return bind(P.xor_p, x, broadcast_to(_const(ones, x.dtype), x.shape))


invert = bitwise_not


def isnan(x: ArrayLike) -> Array:
    """True where x is nan: same shape, bool (all false for integer dtypes)."""
    x = _arr(x)
    if not dtypes.is_inexact(x.dtype):
        return broadcast_to(_const(False, dtypes.bool_), x.shape)
    return not_equal(x, x)


def isfinite(x: ArrayLike) -> Array:
    """True where x is neither inf nor nan: same shape, bool."""
    x = _arr(x)
    if not dtypes.is_inexact(x.dtype):
        return broadcast_to(_const(True, dtypes.bool_), x.shape)
    return equal(subtract(x, x), 0)


def isinf(x: ArrayLike) -> Array:
    """True where x is +inf or -inf: same shape, bool."""
    x = _arr(x)
    return logical_and(logical_not(isfinite(x)), logical_not(isnan(x)))


# -- reductions --------------------------------------------------------------------------------

def _axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, x.ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis: repeated axis in {axis}")
        return tuple(sorted(axes))
    return (normalize_axis(axis, x.ndim),)


def _sum_dtype(dt):
    if dtypes.is_bool(dt) or (dt.kind == "i" and dt.itemsize < 4):
        return dtypes.int32
    if dt.kind == "u" and dt.itemsize < 4:
        return dtypes.uint32
    return dt


def sum(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Sum over ``axis`` (int, tuple or None for all; negative axes count from the end).

    Shape: x's without the reduced axes (kept as 1 with ``keepdims``).  Dtype: x's, except that
    bool and 8/16-bit ints sum in int32 (uint8/16 in uint32), as JAX.  The sum of nothing is 0.
    """
    x = _arr(x)
    axes = _axes(x, axis)
    x = astype(x, _sum_dtype(x.dtype))
    if not axes:
        return x
    return bind(P.reduce_sum_p, x, axes=axes, keepdims=bool(keepdims))


def prod(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Product over ``axis``: shape and dtype as ``sum``; the product of nothing is 1."""
    x = _arr(x)
    axes = _axes(x, axis)
    x = astype(x, _sum_dtype(x.dtype))
    if not axes:
        return x
    return bind(P.reduce_prod_p, x, axes=axes, keepdims=bool(keepdims))


def max(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Maximum over ``axis`` (nan propagates; ValueError on an empty axis).

    Shape as ``sum``; x's dtype (real dtypes only).  Its derivative splits the cotangent equally between tied maxima (as JAX).
    """
    x = _arr(x)
    _real_check(x, "max")
    axes = _axes(x, axis)
    if not axes:
        return x
    _check_nonempty(x, axes, "max")
    return bind(P.reduce_max_p, x, axes=axes, keepdims=bool(keepdims))


def _check_nonempty(x, axes, name):
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"{name}: zero-size reduction over axes {axes} of a tensor of shape "
                         f"{x.shape}; {name} has no identity")


def min(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Minimum over ``axis``: shape as ``sum``, x's dtype (see ``max``)."""
    x = _arr(x)
    _real_check(x, "min")
    _check_nonempty(x, _axes(x, axis), "min")
    if dtypes.is_inexact(x.dtype):
        return negative(max(negative(x), axis, keepdims))
    if dtypes.is_bool(x.dtype):
        return all(x, axis, keepdims)
    return bitwise_not(max(bitwise_not(x), axis, keepdims))


amax, amin = max, min


def _count(x, axes):
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def mean(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis``: shape as ``sum``; float dtype (ints give float32, 64-bit
    ints float64); nan for an empty axis.  float16 accumulates in float32 (as NumPy)."""
    x = _inexact(x)
    axes = _axes(x, axis)
    n = _count(x, axes)
    if x.dtype == dtypes.float16:
        return astype(mean(astype(x, dtypes.float32), axes, keepdims), dtypes.float16)
    return divide(sum(x, axes, keepdims), float(n) if n else float("nan"))


def var(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Array:
    """Variance over ``axis``: sum((x - mean(x))^2) / (n - ddof).  Shape as ``sum``; float dtype
    (real only: TypeError for complex; float16 accumulates in float32)."""
    x = _inexact(x)
    _real_check(x, "var")
    axes = _axes(x, axis)
    if x.dtype == dtypes.float16:
        return astype(var(astype(x, dtypes.float32), axes, ddof, keepdims), dtypes.float16)
    n = _count(x, axes)
    centred = subtract(x, mean(x, axes, keepdims=True))
    return divide(sum(square(centred), axes, keepdims), float(n - ddof) if n > ddof else 0.0)


def std(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Array:
    """Standard deviation, sqrt(var): shape as ``sum``; float dtype."""
    return sqrt(var(x, axis, ddof, keepdims))


def all(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """True where every element over ``axis`` is true (``!= 0``); True for an empty axis.  Shape
    as ``sum``; bool."""
    return logical_not(any(logical_not(x), axis, keepdims))


def any(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """True where some element over ``axis`` is true; False for an empty axis.  Shape as ``sum``;
    bool."""
    x = _as_bool(x)
    axes = _axes(x, axis)
    if not axes:
        return x
    if _count(x, axes) == 0:
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return broadcast_to(_const(False, dtypes.bool_), out_shape)
    return bind(P.reduce_max_p, x, axes=axes, keepdims=bool(keepdims))


def argmax(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of the flattened tensor if None; nan counts as
    the maximum): shape without that axis (1 with keepdims), int32.  ValueError if empty."""
    x = _arr(x)
    _real_check(x, "argmax")
    if axis is None:
        out = bind(P.argmax_p, reshape(x, (-1,)), axis=0, keepdims=False)
        return reshape(out, (1,) * x.ndim) if keepdims else out
    return bind(P.argmax_p, x, axis=normalize_axis(axis, x.ndim), keepdims=bool(keepdims))


def argmin(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis``: shape as ``argmax``, int32."""
    x = _arr(x)
    _real_check(x, "argmin")
    if dtypes.is_inexact(x.dtype):
        return argmax(negative(x), axis, keepdims)
    if dtypes.is_bool(x.dtype):
        return argmax(logical_not(x), axis, keepdims)
    return argmax(bitwise_not(x), axis, keepdims)


def logsumexp(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """log(sum(exp(x))) over ``axis``, computed stably (shifted by the maximum; -inf for an empty
    axis, inf and nan propagate).  Shape as ``sum``; float dtype."""
    x = _inexact(x)
    axes = _axes(x, axis)
    if not axes:
        return x
    if _count(x, axes) == 0:  # log of an empty sum
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return broadcast_to(_const(-np.inf, x.dtype), out_shape)
    m = max(x, axes, keepdims=True)
    m = where(isfinite(m), m, zeros_like_t(m))
    out = add(log(sum(exp(subtract(x, m)), axes, keepdims=True)), m)
    if not keepdims:
        out = reshape(out, tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return out


def _shifted(x, axes):
    """x - max(x) over ``axes`` (the max replaced by 0 where it is not finite)."""
    m = max(x, axes, keepdims=True)
    return subtract(x, where(isfinite(m), m, zeros_like_t(m)))


def softmax(x: ArrayLike, axis: Axis = -1) -> Array:
    """exp(x) / sum(exp(x)) along ``axis`` (int or tuple), computed as e / sum(e) with
    e = exp(x - max(x)): no overflow, and as accurate as the exp.  Same shape as x; float dtype
    (ints and bools give float32).  A row of -inf gives nan, as in JAX."""
    x = _inexact(x)
    axes = _axes(x, axis)
    if not axes or _count(x, axes) == 0:
        return exp(subtract(x, x))  # each element alone (or nothing at all)
    e = exp(_shifted(x, axes))
    return divide(e, sum(e, axes, keepdims=True))


def log_softmax(x: ArrayLike, axis: Axis = -1) -> Array:
    """x - logsumexp(x) along ``axis``, computed as (x - max) - log(sum(exp(x - max))) so that
    large inputs keep their precision.  Same shape as x; float dtype."""
    x = _inexact(x)
    axes = _axes(x, axis)
    if not axes or _count(x, axes) == 0:
        return subtract(x, x)
    s = _shifted(x, axes)
    return subtract(s, log(sum(exp(s), axes, keepdims=True)))


# -- scans ---------------------------------------------------------------------------------------

def _scan(x, axis, op):
    x = _arr(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return bind(P.associative_scan_p, x, axis=normalize_axis(axis, x.ndim), op=op)


def cumsum(x: ArrayLike, axis: int | None = None) -> Array:
    """Running sum along ``axis`` (of the flattened tensor if None): x's shape (1-D for None);
    dtype as ``sum``."""
    x = _arr(x)
    return _scan(astype(x, _sum_dtype(x.dtype)), axis, "sum")


def cumprod(x: ArrayLike, axis: int | None = None) -> Array:
    """Running product along ``axis``: shape as ``cumsum``; dtype as ``sum``."""
    x = _arr(x)
    return _scan(astype(x, _sum_dtype(x.dtype)), axis, "prod")


def cummax(x: ArrayLike, axis: int | None = None) -> Array:
    """Running maximum along ``axis`` (nan propagates): shape as ``cumsum``; x's dtype."""
    x = _arr(x)
    _real_check(x, "cummax")
    return _scan(x, axis, "max")


def cummin(x: ArrayLike, axis: int | None = None) -> Array:
    """Running minimum along ``axis``: shape as ``cumsum``; x's dtype."""
    x = _arr(x)
    _real_check(x, "cummin")
    return _scan(x, axis, "min")


# -- linear algebra ------------------------------------------------------------------------------

def matmul(a: ArrayLike, b: ArrayLike) -> Array:
    """Matrix product with NumPy's rules: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes
    broadcast, 1-D operands promoted and their axis removed.  Promoted dtype (bool operands
    multiply as int32).  ValueError naming both shapes when k differs or batches mismatch."""
    a, b = _promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {a.shape} and "
                         f"{b.shape}")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ValueError(f"matmul: contracted dimensions differ: shapes {a.shape} and {b.shape} "
                         f"({ka} != {kb})")
    try:
        broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} cannot be "
                         f"broadcast together") from None
    if dtypes.is_bool(a.dtype):
        a, b = astype(a, dtypes.int32), astype(b, dtypes.int32)
    return bind(P.matmul_p, a, b)


def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """NumPy's dot: products of scalars, inner product of vectors, matmul of matrices, and for
    N-d, a sum over the last axis of a and the second-to-last of b: shape a.shape[:-1] +
    b.shape[:-2] + b.shape[-1:].  Promoted dtype."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b)
    bm = moveaxis(b, -2, 0)
    n = bm.shape[0]
    out = matmul(reshape(a, (-1, a.shape[-1])), reshape(bm, (n, -1)))
    return reshape(out, a.shape[:-1] + b.shape[:-2] + b.shape[-1:])


def outer(a: ArrayLike, b: ArrayLike) -> Array:
    """Outer product of the flattened a and b: shape (a.size, b.size); promoted dtype."""
    a, b = reshape(_arr(a), (-1, 1)), reshape(_arr(b), (1, -1))
    return multiply(a, b)


def inner(a: ArrayLike, b: ArrayLike) -> Array:
    """Sum over the last axes of a and b (equal sizes): shape a.shape[:-1] + b.shape[:-1];
    promoted dtype (products of scalars for 0-d operands)."""
    a, b = _arr(a), _arr(b)
    if not (a.ndim and b.ndim):
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: last dimensions differ: shapes {a.shape} and {b.shape}")
    if a.ndim == 1 or b.ndim == 1:
        return sum(multiply(a, b), -1) if a.ndim == b.ndim else matmul(a, b) if b.ndim == 1 \
            else matmul(a, swapaxes(b, -1, -2))
    # (..., k) x (..., k) -> a.shape[:-1] + b.shape[:-1]
    out = matmul(reshape(a, (-1, a.shape[-1])), transpose(reshape(b, (-1, b.shape[-1]))))
    return reshape(out, a.shape[:-1] + b.shape[:-1])


# -- movement ------------------------------------------------------------------------------------

def reshape(x: ArrayLike, shape: ShapeLike) -> Array:
    """``x`` with ``shape`` (one entry may be -1), same dtype; a view when strides allow, else a
    copy.  ValueError naming both shapes when the element counts differ."""
    x = _arr(x)
    shape = _resolve_shape(x, shape)
    if shape == x.shape:
        return x
    return bind(P.reshape_p, x, shape=shape)


def _resolve_shape(x, shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"shape: only one -1 allowed, got {shape}")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or x.size % known:
            raise ValueError(f"shape: cannot reshape a tensor of shape {x.shape} ({x.size} "
                             f"elements) into {shape}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"shape: negative dimension in {shape}")
    if math.prod(shape) != x.size:
        raise ValueError(f"shape: cannot reshape a tensor of shape {x.shape} ({x.size} "
                         f"elements) into {shape}")
    return shape


def ravel(x: ArrayLike) -> Array:
    """``x`` flattened in C order: shape (x.size,), same dtype."""
    return reshape(x, (-1,))


def transpose(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Axes permuted: result axis i is x's axis ``axes[i]`` (reversed by default); same dtype; a
    view."""
    x = _arr(x)
    if axes is None:  # reversed: always a valid permutation
        nd = len(x.shape)
        if nd < 2:
            return x
        return bind(P.permute_p, x, axes=tuple(range(nd - 1, -1, -1)))
    axes = tuple(axes)
    if len(axes) != x.ndim:
        raise ValueError(f"axes: {axes} is not a permutation of the {x.ndim} axes of shape "
                         f"{x.shape}")
    axes = tuple(normalize_axis(a, x.ndim, "axes") for a in axes)
    if axes == tuple(range(x.ndim)):
        return x
    return bind(P.permute_p, x, axes=axes)


def permute(x: ArrayLike, axes: Sequence[int]) -> Array:
    """``transpose`` with explicit axes (a permutation of range(ndim)); a view."""
    return transpose(x, axes)


def moveaxis(x: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Move axes ``source`` to positions ``destination`` (ints or sequences); same dtype; a view."""
    x = _arr(x)
    src = [normalize_axis(a, x.ndim, "source") for a in np.atleast_1d(source).tolist()]
    dst = [normalize_axis(a, x.ndim, "destination") for a in np.atleast_1d(destination).tolist()]
    if len(src) != len(dst):
        raise ValueError("source, destination: must have the same number of axes")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(x: ArrayLike, a: int, b: int) -> Array:
    """Exchange axes a and b; same dtype; a view."""
    x = _arr(x)
    a, b = normalize_axis(a, x.ndim, "a"), normalize_axis(b, x.ndim, "b")
    order = list(range(x.ndim))
    order[a], order[b] = order[b], order[a]
    return transpose(x, order)


def expand_dims(x: ArrayLike, axis: int | Sequence[int]) -> Array:
    """Insert size-1 axes at ``axis`` (int or tuple, positions in the result); same dtype; a view."""
    x = _arr(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    axes = sorted(normalize_axis(a, nd) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis: repeated axis in {axis}")
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, shape)


def squeeze(x: ArrayLike, axis: Axis = None) -> Array:
    """Remove size-1 axes (all of them, or those in ``axis``, which must have size 1); a view."""
    x = _arr(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = [normalize_axis(a, x.ndim) for a in (axis if isinstance(axis, (tuple, list))
                                                     else (axis,))]
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis: repeated axis in {axis}")
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"axis: cannot squeeze axis {a} of size {x.shape[a]} "
                                 f"(shape {x.shape})")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def pad(x: ArrayLike, pad_width: int | Sequence[int] | Sequence[Sequence[int]],
        constant_values: ArrayLike = 0) -> Array:
    """Pad with ``constant_values``: pad_width an int, a (before, after) pair or one pair per axis.

    Shape: each axis grows by before + after; same dtype (the fill is cast to it; one scalar
    fill for every axis).  The result is a masked view: no data moves until something reads it.
    """
    x = _arr(x)
    cfg = _pad_config(pad_width, x.ndim)
    if isinstance(constant_values, ArrayBase) or np.ndim(constant_values) != 0:
        if np.size(constant_values) != 1:
            raise ValueError(f"constant_values: must be a scalar (one fill value for every "
                             f"axis), got {constant_values!r}")
        constant_values = np.asarray(constant_values).item() if not isinstance(
            constant_values, ArrayBase) else constant_values.item()
    if builtins.all(b == 0 and a == 0 for b, a in cfg):
        return x
    return bind(P.pad_p, x, config=cfg, fill=constant_values)


def _pad_config(pad_width, nd):
    arr = np.asarray(pad_width)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"pad_width: expected integers, got {pad_width!r}")
    try:
        arr = np.broadcast_to(arr, (nd, 2))
    except ValueError:
        raise ValueError(f"pad_width: {pad_width!r} does not fit a tensor of {nd} axes") from None
    cfg = tuple((int(b), int(a)) for b, a in arr)
    for i, (b, a) in enumerate(cfg):
        if b < 0 or a < 0:
            raise ValueError(f"pad_width: negative width ({b}, {a}) for axis {i}")
    return cfg


def shrink(x: ArrayLike, limits: Sequence[tuple[int, int]]) -> Array:
    """The sub-box ``start <= i < stop`` along each axis; ``limits`` one (start, stop) per axis.
    Shape (stop - start, ...); same dtype; a view (of a padded view: unpadded when it fits)."""
    x = _arr(x)
    # operator.index: a float limit is a TypeError (as in NumPy slicing), not truncated
    limits = tuple((operator.index(a), operator.index(b)) for a, b in limits)
    if len(limits) != x.ndim:
        raise ValueError(f"limits: {len(limits)} pairs given for a tensor of shape {x.shape}")
    for i, ((a, b), n) in enumerate(zip(limits, x.shape)):
        if not 0 <= a <= b <= n:
            raise ValueError(f"limits: ({a}, {b}) for axis {i} must satisfy 0 <= start <= stop "
                             f"<= {n} (shape {x.shape})")
    if builtins.all(a == 0 and b == n for (a, b), n in zip(limits, x.shape)):
        return x
    return bind(P.shrink_p, x, limits=limits)


def flip(x: ArrayLike, axis: Axis = None) -> Array:
    """Reverse the order along ``axis`` (int, tuple, or None for all axes); same shape and dtype;
    a view (negative strides)."""
    x = _arr(x)
    axes = _axes(x, axis)
    if not axes:
        return x
    return bind(P.flip_p, x, axes=axes)


def as_strided(x: ArrayLike, shape: ShapeLike, strides: Sequence[int], offset: int = 0) -> Array:
    """A view of ``x``'s elements in C order (for a contiguous tensor: its buffer) with the given
    ``shape``, ``strides`` and ``offset`` (in elements, from x's first element), x's dtype.
    Raises ValueError when any element would fall outside x (checked without overflow, huge
    strides and offsets included); never reads out of bounds.  A view when x is contiguous."""
    x = _arr(x)
    shape = normalize_shape(shape)
    strides = tuple(operator.index(s) for s in strides)   # 1.5 is a TypeError, not 1
    if len(strides) != len(shape):
        raise ValueError(f"strides: {strides} must have one entry per axis of shape {shape}")
    return bind(P.as_strided_p, x, shape=shape, strides=strides, offset=operator.index(offset))


def concatenate(tensors: Sequence[ArrayLike], axis: int = 0) -> Array:
    """Join tensors along an existing ``axis``: shapes must agree elsewhere (ValueError naming
    both); the result's axis is the sum of theirs; promoted dtype; a new tensor."""
    xs = _promote(*tensors) if len(tensors) else []
    if not xs:
        raise ValueError("tensors: need at least one tensor to concatenate")
    if xs[0].ndim == 0:
        raise ValueError("tensors: cannot concatenate 0-d tensors")
    ax = normalize_axis(axis, xs[0].ndim)
    for t in xs[1:]:
        if t.ndim != xs[0].ndim or builtins.any(
                a != b for i, (a, b) in enumerate(zip(t.shape, xs[0].shape)) if i != ax):
            raise ValueError(f"tensors: shapes {xs[0].shape} and {t.shape} differ outside axis "
                             f"{ax}")
    if len(xs) == 1:
        return xs[0]
    return bind(P.cat_p, *xs, axis=ax)


def stack(tensors: Sequence[ArrayLike], axis: int = 0) -> Array:
    """Join equal-shaped tensors along a new ``axis``: shape with len(tensors) inserted at axis;
    promoted dtype."""
    xs = [_arr(t) for t in tensors]
    if not xs:
        raise ValueError("tensors: need at least one tensor to stack")
    for t in xs[1:]:
        if t.shape != xs[0].shape:
            raise ValueError(f"tensors: all must have the same shape, got {xs[0].shape} and "
                             f"{t.shape}")
    ax = normalize_axis(axis, xs[0].ndim + 1)
    return concatenate([expand_dims(t, ax) for t in xs], ax)


def split(x: ArrayLike, sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """Split into equal ``sections`` (an int that divides the axis) or at the given indices (a
    sequence, as slice bounds: negative ones count from the end); a list of views, x's dtype."""
    x = _arr(x)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(sections, (int, np.integer)):
        if sections <= 0 or n % sections:
            raise ValueError(f"sections: {sections} does not divide axis {ax} of size {n}")
        bounds = [i * (n // sections) for i in range(sections + 1)]
    else:
        # indices as slice bounds: negative ones count from the end, then clamp to [0, n]
        bounds = [0] + [builtins.min(builtins.max(int(i) + n if int(i) < 0 else int(i), 0), n)
                        for i in sections] + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        b = builtins.max(a, b)
        lim = [(0, d) for d in x.shape]
        lim[ax] = (a, b)
        out.append(shrink(x, lim))
    return out


def copy(x: ArrayLike) -> Array:
    """A new tensor with its own contiguous memory: same shape, dtype and values."""
    return bind(P.copy_p, _arr(x))


def contiguous(x: ArrayLike) -> Array:
    """``x`` if already C-contiguous (and unpadded), else a contiguous copy; same shape, dtype."""
    return bind(P.contiguous_p, _arr(x))


def is_contiguous(x: ArrayLike) -> bool:
    """True when x's elements are C-contiguous in memory and unpadded (a Python bool)."""
    x = _arr(x)
    return x.view.is_contiguous if isinstance(x, Tensor) else False


def shares_memory(a: ArrayLike, b: ArrayLike) -> bool:
    """True when a and b are views of the same buffer (or of the same ndarray memory): a bool."""
    a, b = _arr(a), _arr(b)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    return a.buffer is b.buffer or a.buffer.address == b.buffer.address and a.buffer.size > 0


def assign(dst: ArrayLike, src: ArrayLike) -> Array:
    """Write ``src`` (broadcast, cast to dst's dtype) into dst's memory in place; returns dst."""
    dst = _arr(dst)
    src = broadcast_to(astype(_arr(src), dst.dtype), dst.shape)
    return bind(P.assign_p, dst, src)


def size(x: ArrayLike) -> int:
    """The number of elements of ``x`` (a Python int)."""
    return _arr(x).size


def shape(x: ArrayLike) -> tuple[int, ...]:
    """The shape of ``x`` (a tuple of Python ints)."""
    return _arr(x).shape


def ndim(x: ArrayLike) -> int:
    """The number of axes of ``x`` (a Python int)."""
    return _arr(x).ndim


# -- indexing (basic: views) -------------------------------------------------------------------

def getitem(x, index):
    """``x[index]`` with NumPy's rules, x's dtype.  Ints, slices (any step), None and Ellipsis
    give views; integer arrays and bool masks select through gather (see indexing.py: the
    broadcast index shape replaces the indexed axes, or comes first when the advanced indices
    are not adjacent).  IndexError names the axis, the index and the size."""
    if not isinstance(index, tuple):
        index = (index,)
    if _VIEW_FAST_PATH and type(x) is Tensor and P.current_interpreter() is None:
        view = x.view.index_basic(index)  # None unless unmasked and only basic indices
        if view is not None:
            return Tensor(x.buffer, view)
    x = _arr(x)
    if builtins.any(_is_advanced(i) for i in index):
        return _advanced_getitem(x, index)
    return _basic_getitem(x, index)


def _is_advanced(i):
    return isinstance(i, (ArrayBase, np.ndarray, list, tuple, bool, np.bool_))


def _expand_ellipsis(index, ndim):
    n_ell = builtins.sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("index: an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"index: too many indices for a tensor of {ndim} dimensions "
                         f"({used} given)")
    if n_ell:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (ndim - used) + index[k + 1:]
    else:
        index = index + (slice(None),) * (ndim - used)
    return index


def _basic_getitem(x, index):
    """Ints, slices (any step), None and Ellipsis as views: one flip (negative steps), one
    shrink, and for steps k > 1 a reshape that splits each such axis into (m, k) followed by a
    shrink to one column (a view whenever the m * k elements fit in the axis; a padded copy
    otherwise), then one reshape to the result's shape (ints dropped, None inserted)."""
    index = _expand_ellipsis(index, x.ndim)
    shape_in = x.shape
    limits, flips, out_shape = [], [], []
    split = []   # (axis, m, k, column) for steps k > 1
    pads = None
    axis = 0
    for item in index:
        if item is None:
            out_shape.append(1)
            continue
        n = shape_in[axis]
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            if step < 0:  # flipped coordinates: position p becomes n - 1 - p
                flips.append(axis)
                start, stop, step = n - 1 - start, n - 1 - stop, -step
            m = builtins.max(0, (stop - start + step - 1) // step)
            out_shape.append(m)
            if m <= 1 or step == 1:
                limits.append((start, start + m) if m else (0, 0))
            else:
                # a window [s0, s0 + m*step) containing the picks, at column start - s0
                s0 = builtins.min(start, n - m * step)
                if s0 >= 0 and start - s0 < step:
                    limits.append((s0, s0 + m * step))
                    split.append((axis, m, step, start - s0))
                else:  # the axis is shorter than m*step: pad its end (the result copies)
                    limits.append((start, n))
                    if pads is None:
                        pads = [(0, 0)] * x.ndim
                    pads[axis] = (0, start + m * step - n)
                    split.append((axis, m, step, 0))
        else:
            try:
                i = int(item.__index__())
            except (AttributeError, TypeError):
                err = _indexing.IndexTypeError if isinstance(item, (float, complex, np.inexact)) \
                    else IndexError
                raise err(f"index: {item!r} is not a valid index (use ints, slices, None, ..., "
                          f"or integer/bool arrays)") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i = i + n if i < 0 else i
            limits.append((i, i + 1))
        axis += 1
    y = x
    if flips:
        y = flip(y, tuple(flips))
    if builtins.any(a != 0 or b != n for (a, b), n in zip(limits, shape_in)):
        y = bind(P.shrink_p, y, limits=tuple(limits))
    if split:
        if pads is not None:
            y = pad(y, pads)
        shape, lim, j = [], [], 0
        for ax, n in enumerate(y.shape):
            if j < len(split) and split[j][0] == ax:
                _, m, k, c = split[j]
                shape += [m, k]
                lim += [(0, m), (c, c + 1)]
                j += 1
            else:
                shape.append(n)
                lim.append((0, n))
        y = bind(P.shrink_p, bind(P.reshape_p, y, shape=tuple(shape)), limits=tuple(lim))
    return reshape(y, tuple(out_shape))


# Concrete unmasked tensors (no transformation active) get the result's View in one step
# (View.index_basic); under a transformation the composition of _basic_getitem runs, so that
# every step is a primitive.  The tests run both (they switch this off).
_VIEW_FAST_PATH = True


def _advanced_getitem(x, index):
    """Integer-array and bool-mask indexing (NumPy's rules), through gather: see indexing.py."""
    return _indexing.advanced_getitem(x, index)


class IndexUpdateHelper:
    """``x.at[idx]`` -> an object with ``set/add/multiply/max/min/get`` (JAX style)."""
    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index):
        return _IndexUpdateRef(self._x, index)


class _IndexUpdateRef:
    __slots__ = ("_x", "_index")

    def __init__(self, x, index):
        self._x, self._index = x, index

    def get(self):
        return getitem(self._x, self._index)

    def set(self, values):
        return _index_update(self._x, self._index, values, "set")

    def add(self, values):
        return _index_update(self._x, self._index, values, "add")

    def multiply(self, values):
        return _index_update(self._x, self._index, values, "mul")

    mul = multiply

    def max(self, values):
        return _index_update(self._x, self._index, values, "max")

    def min(self, values):
        return _index_update(self._x, self._index, values, "min")


def _index_update(x, index, values, mode):
    """``x.at[index].<mode>(values)`` through one scatter: see indexing.index_update."""
    return _indexing.index_update(x, index, values, mode)


# gather/scatter front ends, einsum and windows live in their own modules (they import this one)
from nx_rune import indexing as _indexing  # noqa: E402
from nx_rune.indexing import nonzero, put_along_axis, take, take_along_axis  # noqa: E402,F401
from nx_rune.einsum import einsum  # noqa: E402,F401
from nx_rune.nn import conv2d, fold, unfold  # noqa: E402,F401
