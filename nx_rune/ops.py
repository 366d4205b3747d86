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
import builtins
import math

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.creation import asarray, normalize_shape
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor

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
]

_SCALARS = (int, float, complex, bool, np.bool_)


# -- argument handling ---------------------------------------------------------------------

def _arr(x):
    return x if isinstance(x, ArrayBase) else asarray(x)


def _const(value, dtype):
    return Tensor._wrap(np.array(value, dtype=dtype))


def broadcast_shapes(*shapes):
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


def broadcast_to(x, shape):
    """``x`` viewed with ``shape`` (size-1 and missing leading axes repeat; stride 0, no copy)."""
    x = _arr(x)
    shape = normalize_shape(shape)
    if x.shape == shape:
        return x
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"shape: cannot broadcast a tensor of shape {x.shape} to {shape}")
    return bind(P.expand_p, x, shape=shape)


def astype(x, dtype):
    """``x`` converted to ``dtype`` (NumPy's casting: floats to ints truncate toward zero)."""
    x = _arr(x)
    dt = dtypes.check_dtype(dtype)
    if x.dtype == dt:
        return x
    return bind(P.cast_p, x, dtype=dt)


def _promote(*xs):
    """Tensors of one dtype from arrays and weakly typed Python scalars."""
    arrays = [x for x in xs if not isinstance(x, _SCALARS)]
    if not arrays:
        return [asarray(x) for x in xs]
    arrays = [_arr(x) for x in arrays]
    dt = arrays[0].dtype if len(arrays) == 1 else dtypes.result_type(*[a.dtype for a in arrays])
    for x in xs:
        if isinstance(x, _SCALARS):
            dt = dtypes.weak_result_type(dt, x)
    out, it = [], iter(arrays)
    for x in xs:
        out.append(_const(x, dt) if isinstance(x, _SCALARS) else astype(next(it), dt))
    return out


def _broadcast(*xs):
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


_PY_NUMBERS = (float, int)


def _binary(prim, a, b):
    # fast paths: equal shapes and dtypes, or an array and a Python number of its dtype
    if isinstance(a, ArrayBase):
        if isinstance(b, ArrayBase):
            if a.dtype == b.dtype and a.shape == b.shape:
                return bind(prim, a, b)
        elif type(b) in _PY_NUMBERS and dtypes.weak_result_type(a.dtype, b) == a.dtype:
            return bind(prim, a, Tensor._broadcast_scalar(b, a.dtype, a.shape))
    elif type(a) in _PY_NUMBERS and isinstance(b, ArrayBase) \
            and dtypes.weak_result_type(b.dtype, a) == b.dtype:
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

def add(a, b):
    """a + b, broadcast.  Shapes (...) and (...) -> broadcast shape."""
    return _binary(P.add_p, a, b)


def subtract(a, b):
    """a - b, broadcast."""
    a, b = _promote(a, b)
    return add(a, negative(b))


def multiply(a, b):
    """a * b, broadcast."""
    return _binary(P.mul_p, a, b)


def divide(a, b):
    """True division a / b, broadcast; integer operands give float32 (float64 for 64-bit)."""
    a, b = _promote(a, b)
    if not dtypes.is_inexact(a.dtype):
        a, b = _inexact(a), _inexact(b)
    return _binary(P.fdiv_p, a, b)


true_divide = divide


def floor_divide(a, b):
    """a // b rounded toward minus infinity (NumPy's semantics, not C's truncation).

    Integer division by zero raises ZeroDivisionError.
    """
    a, b = _promote(a, b)
    _real_check(a, "floor_divide")
    return _binary(P.idiv_p, a, b)


def mod(a, b):
    """a % b with the sign of the divisor (floored, as NumPy's ``%``).

    ``a == floor_divide(a, b) * b + mod(a, b)``.  Integer modulo by zero raises
    ZeroDivisionError.
    """
    a, b = _promote(a, b)
    _real_check(a, "mod")
    return _binary(P.mod_p, a, b)


remainder = mod


def power(a, b):
    """a ** b, broadcast.  Integer bases to negative integer powers raise ValueError."""
    return _binary(P.pow_p, a, b)


def negative(x):
    """-x."""
    x = _arr(x)
    if dtypes.is_bool(x.dtype):
        raise TypeError("negative: not defined for bool tensors; use logical_not")
    return bind(P.neg_p, x)


def reciprocal(x):
    """1 / x (float result for integer input)."""
    return bind(P.recip_p, _inexact(x))


def square(x):
    """x * x."""
    x = _arr(x)
    return bind(P.mul_p, x, x)


def sqrt(x):
    """Square root (nan below 0 for real input)."""
    return bind(P.sqrt_p, _inexact(x))


def exp(x):
    """e ** x."""
    return bind(P.exp_p, _inexact(x))


def exp2(x):
    """2 ** x."""
    return bind(P.exp2_p, _inexact(x))


def log(x):
    """Natural logarithm."""
    return bind(P.log_p, _inexact(x))


def log2(x):
    """Base-2 logarithm."""
    return bind(P.log2_p, _inexact(x))


def log1p(x):
    """log(1 + x), accurate near 0."""
    return bind(P.log1p_p, _inexact(x))


def expm1(x):
    """exp(x) - 1, accurate near 0."""
    return bind(P.expm1_p, _inexact(x))


def sin(x):
    """Sine (radians)."""
    return bind(P.sin_p, _inexact(x))


def cos(x):
    """Cosine (radians)."""
    return bind(P.cos_p, _inexact(x))


def tan(x):
    """Tangent, as sin(x) / cos(x)."""
    x = _inexact(x)
    return bind(P.fdiv_p, bind(P.sin_p, x), bind(P.cos_p, x))


def tanh(x):
    """Hyperbolic tangent."""
    return bind(P.tanh_p, _inexact(x))


def relu(x):
    """max(x, 0); its derivative at 0 is 0 (as in JAX and PyTorch)."""
    x = _arr(x)
    return where(greater(x, 0), x, zeros_like_t(x))


def softplus(x):
    """log(1 + exp(x)), stable for large |x|; its derivative is sigmoid(x) everywhere."""
    x = _inexact(x)
    pos = relu(x)
    abs_x = subtract(multiply(pos, 2), x)  # |x| written so the kinks of the two terms cancel
    return add(log1p(exp(negative(abs_x))), pos)


def sigmoid(x):
    """1 / (1 + exp(-x)), as exp(-softplus(-x)): no overflow, finite derivatives."""
    x = _inexact(x)
    return exp(negative(softplus(negative(x))))


def sign(x):
    """-1, 0 or 1 by the sign of x (nan for nan); non-differentiable (zero derivative)."""
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


def abs(x):
    """|x| for real tensors, as x * sign(x): the derivative at 0 is 0, like JAX's."""
    x = _arr(x)
    _real_check(x, "abs")
    if dtypes.is_bool(x.dtype) or x.dtype.kind == "u":
        return x
    return where(less(x, 0), negative(x), x)


absolute = abs


def maximum(a, b):
    """Elementwise max (nan propagates).  On ties the derivative is split equally."""
    a, b = _promote(a, b)
    _real_check(a, "maximum")
    return _binary(P.max_p, a, b)


def minimum(a, b):
    """Elementwise min (nan propagates).  On ties the derivative is split equally."""
    a, b = _promote(a, b)
    _real_check(a, "minimum")
    if dtypes.is_inexact(a.dtype):
        return negative(maximum(negative(a), negative(b)))
    if dtypes.is_bool(a.dtype):
        return logical_and(a, b)
    return bitwise_not(maximum(bitwise_not(a), bitwise_not(b)))


def clip(x, a_min=None, a_max=None):
    """x limited to [a_min, a_max] (either may be None)."""
    x = _arr(x)
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x


def where(condition, x, y):
    """x where condition is true, else y (all three broadcast; x, y promoted)."""
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

def less(a, b):
    """a < b (bool)."""
    return _binary(P.cmplt_p, a, b)


def greater(a, b):
    """a > b (bool)."""
    return less(b, a)


def not_equal(a, b):
    """a != b (bool; true where either is nan)."""
    return _binary(P.cmpne_p, a, b)


def equal(a, b):
    """a == b (bool)."""
    return logical_not(not_equal(a, b))


def less_equal(a, b):
    """a <= b (bool; false where either is nan)."""
    a, b = _promote(a, b)
    return logical_or(less(a, b), equal(a, b))


def greater_equal(a, b):
    """a >= b (bool)."""
    return less_equal(b, a)


def _as_bool(x):
    x = _arr(x)
    return x if dtypes.is_bool(x.dtype) else not_equal(x, 0)


def logical_and(a, b):
    """a and b, elementwise (bool)."""
    return _binary(P.and_p, _as_bool(a), _as_bool(b))


def logical_or(a, b):
    """a or b, elementwise (bool)."""
    return _binary(P.or_p, _as_bool(a), _as_bool(b))


def logical_not(x):
    """not x, elementwise (bool)."""
    x = _as_bool(x)
    return bind(P.xor_p, x, broadcast_to(_const(True, dtypes.bool_), x.shape))


def logical_xor(a, b):
    """a xor b, elementwise (bool)."""
    return _binary(P.xor_p, _as_bool(a), _as_bool(b))


def bitwise_and(a, b):
    """a & b for integer or bool tensors."""
    a, b = _promote(a, b)
    _int_check(a, "bitwise_and")
    return _binary(P.and_p, a, b)


def bitwise_or(a, b):
    """a | b for integer or bool tensors."""
    a, b = _promote(a, b)
    _int_check(a, "bitwise_or")
    return _binary(P.or_p, a, b)


def bitwise_xor(a, b):
    """a ^ b for integer or bool tensors."""
    a, b = _promote(a, b)
    _int_check(a, "bitwise_xor")
    return _binary(P.xor_p, a, b)


def bitwise_not(x):
    """~x for integer or bool tensors (x ^ all-ones)."""
    x = _arr(x)
    _int_check(x, "bitwise_not")
    ones = True if dtypes.is_bool(x.dtype) else np.array(-1).astype(x.dtype)
    return bind(P.xor_p, x, broadcast_to(_const(ones, x.dtype), x.shape))


invert = bitwise_not


def isnan(x):
    """True where x is nan."""
    x = _arr(x)
    if not dtypes.is_inexact(x.dtype):
        return broadcast_to(_const(False, dtypes.bool_), x.shape)
    return not_equal(x, x)


def isfinite(x):
    """True where x is neither inf nor nan."""
    x = _arr(x)
    if not dtypes.is_inexact(x.dtype):
        return broadcast_to(_const(True, dtypes.bool_), x.shape)
    return equal(subtract(x, x), 0)


def isinf(x):
    """True where x is +inf or -inf."""
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


def sum(x, axis=None, keepdims=False):
    """Sum over ``axis`` (int, tuple or None for all); bool and small ints sum in int32."""
    x = _arr(x)
    axes = _axes(x, axis)
    x = astype(x, _sum_dtype(x.dtype))
    if not axes:
        return x
    return bind(P.reduce_sum_p, x, axes=axes, keepdims=bool(keepdims))


def prod(x, axis=None, keepdims=False):
    """Product over ``axis``; the product of nothing is 1."""
    x = _arr(x)
    axes = _axes(x, axis)
    x = astype(x, _sum_dtype(x.dtype))
    if not axes:
        return x
    return bind(P.reduce_prod_p, x, axes=axes, keepdims=bool(keepdims))


def max(x, axis=None, keepdims=False):
    """Maximum over ``axis`` (nan propagates; ValueError on an empty axis).

    Its derivative splits the cotangent equally between tied maxima (as JAX).
    """
    x = _arr(x)
    _real_check(x, "max")
    axes = _axes(x, axis)
    if not axes:
        return x
    return bind(P.reduce_max_p, x, axes=axes, keepdims=bool(keepdims))


def min(x, axis=None, keepdims=False):
    """Minimum over ``axis`` (see ``max``)."""
    x = _arr(x)
    _real_check(x, "min")
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


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean over ``axis`` (float result; nan for an empty axis)."""
    x = _inexact(x)
    axes = _axes(x, axis)
    n = _count(x, axes)
    return divide(sum(x, axes, keepdims), float(n) if n else float("nan"))


def var(x, axis=None, ddof=0, keepdims=False):
    """Variance over ``axis``: mean(|x - mean(x)|^2) * n / (n - ddof)."""
    x = _inexact(x)
    axes = _axes(x, axis)
    n = _count(x, axes)
    centred = subtract(x, mean(x, axes, keepdims=True))
    return divide(sum(square(centred), axes, keepdims), float(n - ddof) if n > ddof else 0.0)


def std(x, axis=None, ddof=0, keepdims=False):
    """Standard deviation: sqrt(var)."""
    return sqrt(var(x, axis, ddof, keepdims))


def all(x, axis=None, keepdims=False):
    """True where every element over ``axis`` is true (True for an empty axis)."""
    return logical_not(any(logical_not(x), axis, keepdims))


def any(x, axis=None, keepdims=False):
    """True where some element over ``axis`` is true (False for an empty axis)."""
    x = _as_bool(x)
    axes = _axes(x, axis)
    if not axes:
        return x
    if _count(x, axes) == 0:
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
            else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return broadcast_to(_const(False, dtypes.bool_), out_shape)
    return bind(P.reduce_max_p, x, axes=axes, keepdims=bool(keepdims))


def argmax(x, axis=None, keepdims=False):
    """Index (int32) of the first maximum along ``axis`` (of the flattened tensor if None)."""
    x = _arr(x)
    _real_check(x, "argmax")
    if axis is None:
        out = bind(P.argmax_p, reshape(x, (-1,)), axis=0, keepdims=False)
        return reshape(out, (1,) * x.ndim) if keepdims else out
    return bind(P.argmax_p, x, axis=normalize_axis(axis, x.ndim), keepdims=bool(keepdims))


def argmin(x, axis=None, keepdims=False):
    """Index (int32) of the first minimum along ``axis``."""
    x = _arr(x)
    _real_check(x, "argmin")
    if dtypes.is_inexact(x.dtype):
        return argmax(negative(x), axis, keepdims)
    if dtypes.is_bool(x.dtype):
        return argmax(logical_not(x), axis, keepdims)
    return argmax(bitwise_not(x), axis, keepdims)


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over ``axis``, computed stably (shifted by the maximum)."""
    x = _inexact(x)
    axes = _axes(x, axis)
    if not axes:
        return x
    m = max(x, axes, keepdims=True)
    m = where(isfinite(m), m, zeros_like_t(m))
    out = add(log(sum(exp(subtract(x, m)), axes, keepdims=True)), m)
    if not keepdims:
        out = reshape(out, tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return out


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis``, stable."""
    x = _inexact(x)
    return exp(subtract(x, logsumexp(x, axis, keepdims=True)))


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along ``axis``."""
    x = _inexact(x)
    return subtract(x, logsumexp(x, axis, keepdims=True))


# -- scans ---------------------------------------------------------------------------------------

def _scan(x, axis, op):
    x = _arr(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return bind(P.associative_scan_p, x, axis=normalize_axis(axis, x.ndim), op=op)


def cumsum(x, axis=None):
    """Running sum along ``axis`` (of the flattened tensor if None)."""
    x = _arr(x)
    return _scan(astype(x, _sum_dtype(x.dtype)), axis, "sum")


def cumprod(x, axis=None):
    """Running product along ``axis``."""
    x = _arr(x)
    return _scan(astype(x, _sum_dtype(x.dtype)), axis, "prod")


def cummax(x, axis=None):
    """Running maximum along ``axis``."""
    x = _arr(x)
    _real_check(x, "cummax")
    return _scan(x, axis, "max")


def cummin(x, axis=None):
    """Running minimum along ``axis``."""
    x = _arr(x)
    _real_check(x, "cummin")
    return _scan(x, axis, "min")


# -- linear algebra ------------------------------------------------------------------------------

def matmul(a, b):
    """Matrix product with NumPy's rules: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes
    broadcast, 1-D operands promoted and their axis removed."""
    a, b = _promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {a.shape} and "
                         f"{b.shape}")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ValueError(f"matmul: contracted dimensions differ: shapes {a.shape} and {b.shape} "
                         f"({ka} != {kb})")
    broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if dtypes.is_bool(a.dtype):
        a, b = astype(a, dtypes.int32), astype(b, dtypes.int32)
    return bind(P.matmul_p, a, b)


def dot(a, b):
    """NumPy's dot: products of scalars, inner product of vectors, matmul of matrices, and for
    N-d, a sum over the last axis of a and the second-to-last of b."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b)
    bm = moveaxis(b, -2, 0)
    n = bm.shape[0]
    out = matmul(reshape(a, (-1, a.shape[-1])), reshape(bm, (n, -1)))
    return reshape(out, a.shape[:-1] + b.shape[:-2] + b.shape[-1:])


def outer(a, b):
    """Outer product of the flattened a and b: shape (a.size, b.size)."""
    a, b = reshape(_arr(a), (-1, 1)), reshape(_arr(b), (1, -1))
    return multiply(a, b)


def inner(a, b):
    """Sum over the last axes of a and b."""
    a, b = _arr(a), _arr(b)
    return sum(multiply(a, b), -1) if a.ndim and b.ndim else multiply(a, b)


# -- movement ------------------------------------------------------------------------------------

def reshape(x, shape):
    """``x`` with ``shape`` (one entry may be -1); a view when strides allow, else a copy."""
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


def ravel(x):
    """``x`` flattened in C order."""
    return reshape(x, (-1,))


def transpose(x, axes=None):
    """Axes permuted (reversed by default); a view."""
    x = _arr(x)
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    axes = tuple(axes)
    if len(axes) != x.ndim:
        raise ValueError(f"axes: {axes} is not a permutation of the {x.ndim} axes of shape "
                         f"{x.shape}")
    axes = tuple(normalize_axis(a, x.ndim, "axes") for a in axes)
    if axes == tuple(range(x.ndim)):
        return x
    return bind(P.permute_p, x, axes=axes)


def permute(x, axes):
    """``transpose`` with explicit axes."""
    return transpose(x, axes)


def moveaxis(x, source, destination):
    """Move axes ``source`` to positions ``destination`` (ints or sequences)."""
    x = _arr(x)
    src = [normalize_axis(a, x.ndim, "source") for a in np.atleast_1d(source).tolist()]
    dst = [normalize_axis(a, x.ndim, "destination") for a in np.atleast_1d(destination).tolist()]
    if len(src) != len(dst):
        raise ValueError("source, destination: must have the same number of axes")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(x, a, b):
    """Exchange axes a and b."""
    x = _arr(x)
    a, b = normalize_axis(a, x.ndim, "a"), normalize_axis(b, x.ndim, "b")
    order = list(range(x.ndim))
    order[a], order[b] = order[b], order[a]
    return transpose(x, order)


def expand_dims(x, axis):
    """Insert size-1 axes at ``axis`` (int or tuple) of the result."""
    x = _arr(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    axes = sorted(normalize_axis(a, nd) for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, shape)


def squeeze(x, axis=None):
    """Remove size-1 axes (all of them, or those in ``axis``, which must have size 1)."""
    x = _arr(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = [normalize_axis(a, x.ndim) for a in (axis if isinstance(axis, (tuple, list))
                                                     else (axis,))]
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"axis: cannot squeeze axis {a} of size {x.shape[a]} "
                                 f"(shape {x.shape})")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def pad(x, pad_width, constant_values=0):
    """Pad with ``constant_values``: pad_width an int, a (before, after) pair or one pair per axis.

    The result is a masked view: no data moves until something reads it.
    """
    x = _arr(x)
    cfg = _pad_config(pad_width, x.ndim)
    if isinstance(constant_values, ArrayBase):
        constant_values = constant_values.item()
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


def shrink(x, limits):
    """The sub-box ``start <= i < stop`` along each axis; ``limits`` one (start, stop) per axis."""
    x = _arr(x)
    limits = tuple((int(a), int(b)) for a, b in limits)
    if len(limits) != x.ndim:
        raise ValueError(f"limits: {len(limits)} pairs given for a tensor of shape {x.shape}")
    for i, ((a, b), n) in enumerate(zip(limits, x.shape)):
        if not 0 <= a <= b <= n:
            raise ValueError(f"limits: ({a}, {b}) for axis {i} must satisfy 0 <= start <= stop "
                             f"<= {n} (shape {x.shape})")
    if builtins.all(a == 0 and b == n for (a, b), n in zip(limits, x.shape)):
        return x
    return bind(P.shrink_p, x, limits=limits)


def flip(x, axis=None):
    """Reverse the order along ``axis`` (int, tuple, or None for all axes); a view."""
    x = _arr(x)
    axes = _axes(x, axis)
    if not axes:
        return x
    return bind(P.flip_p, x, axes=axes)


def as_strided(x, shape, strides, offset=0):
    """A view of ``x``'s elements in C order (for a contiguous tensor: its buffer) with the given
    ``shape``, ``strides`` and ``offset`` (in elements).  Raises ValueError when any element
    would fall outside x; never reads out of bounds."""
    x = _arr(x)
    shape = normalize_shape(shape)
    strides = tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise ValueError(f"strides: {strides} must have one entry per axis of shape {shape}")
    return bind(P.as_strided_p, x, shape=shape, strides=strides, offset=int(offset))


def concatenate(tensors, axis=0):
    """Join tensors along an existing ``axis``; shapes must agree elsewhere."""
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


def stack(tensors, axis=0):
    """Join equal-shaped tensors along a new ``axis``."""
    xs = [_arr(t) for t in tensors]
    if not xs:
        raise ValueError("tensors: need at least one tensor to stack")
    for t in xs[1:]:
        if t.shape != xs[0].shape:
            raise ValueError(f"tensors: all must have the same shape, got {xs[0].shape} and "
                             f"{t.shape}")
    ax = normalize_axis(axis, xs[0].ndim + 1)
    return concatenate([expand_dims(t, ax) for t in xs], ax)


def split(x, sections, axis=0):
    """Split into equal ``sections`` (an int) or at the given indices (a sequence); views."""
    x = _arr(x)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(sections, (int, np.integer)):
        if sections <= 0 or n % sections:
            raise ValueError(f"sections: {sections} does not divide axis {ax} of size {n}")
        bounds = [i * (n // sections) for i in range(sections + 1)]
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), n) for i in sections] + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        b = builtins.max(a, b)
        lim = [(0, d) for d in x.shape]
        lim[ax] = (a, b)
        out.append(shrink(x, lim))
    return out


def copy(x):
    """A new tensor with its own contiguous memory."""
    return bind(P.copy_p, _arr(x))


def contiguous(x):
    """``x`` if already C-contiguous (and unpadded), else a contiguous copy."""
    return bind(P.contiguous_p, _arr(x))


def is_contiguous(x):
    """True when x's elements are C-contiguous in memory."""
    x = _arr(x)
    return x.view.is_contiguous if isinstance(x, Tensor) else False


def shares_memory(a, b):
    """True when a and b are views of the same buffer (or of the same ndarray memory)."""
    a, b = _arr(a), _arr(b)
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    return a.buffer is b.buffer or a.buffer.address == b.buffer.address and a.buffer.size > 0


def assign(dst, src):
    """Write ``src`` (broadcast, cast to dst's dtype) into dst's memory in place; returns dst."""
    dst = _arr(dst)
    src = broadcast_to(astype(_arr(src), dst.dtype), dst.shape)
    return bind(P.assign_p, dst, src)


def size(x):
    return _arr(x).size


def shape(x):
    return _arr(x).shape


def ndim(x):
    return _arr(x).ndim


# -- indexing (basic: views) -------------------------------------------------------------------

def getitem(x, index):
    """``x[index]``: ints, slices (any step), None and Ellipsis give views; integer and bool
    arrays select through gather (see ``_advanced_getitem``)."""
    x = _arr(x)
    if not isinstance(index, tuple):
        index = (index,)
    if builtins.any(_is_advanced(i) for i in index):
        return _advanced_getitem(x, index)
    return _basic_getitem(x, index)


def _is_advanced(i):
    if isinstance(i, (ArrayBase, np.ndarray)):
        return True
    return isinstance(i, (list,))


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
    index = _expand_ellipsis(index, x.ndim)
    limits, flips, steps, out_shape_ops = [], [], [], []
    axis = 0
    for item in index:
        if item is None:
            out_shape_ops.append(("new",))
            continue
        n = x.shape[axis]
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            if step > 0:
                m = builtins.max(0, (stop - start + step - 1) // step)
                lo = start
            else:
                m = builtins.max(0, (start - stop - step - 1) // (-step))
                lo = start + (m - 1) * step if m else 0
            limits.append((lo, lo + (m - 1) * builtins.abs(step) + 1 if m else lo))
            if step < 0:
                flips.append(axis)
            steps.append(builtins.abs(step))
            out_shape_ops.append(("keep", axis))
        else:
            try:
                i = int(item.__index__())
            except (AttributeError, TypeError):
                raise IndexError(f"index: {item!r} is not a valid index (use ints, slices, None, "
                                 f"..., or integer/bool arrays)") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i = i + n if i < 0 else i
            limits.append((i, i + 1))
            steps.append(1)
            out_shape_ops.append(("drop", axis))
        axis += 1
    y = shrink(x, limits)
    if flips:
        y = flip(y, tuple(flips))
    for ax, k in enumerate(steps):
        if k > 1:
            y = _subsample(y, ax, k)
    shape = []
    for op in out_shape_ops:
        if op[0] == "new":
            shape.append(1)
        elif op[0] == "keep":
            shape.append(y.shape[op[1]])
    return reshape(y, tuple(shape))


def _subsample(y, axis, k):
    """Every k-th element along ``axis`` (starting at 0), through reshapes: split the axis into
    (m, k), keep column 0.  A view unless the axis needs padding to a multiple of k."""
    n = y.shape[axis]
    m = -(-n // k)
    extra = m * k - n
    if extra:
        cfg = [(0, 0)] * y.ndim
        cfg[axis] = (0, extra)
        y = pad(y, cfg)
    shape = y.shape[:axis] + (m, k) + y.shape[axis + 1:]
    y = reshape(y, shape)
    lim = [(0, d) for d in shape]
    lim[axis + 1] = (0, 1)
    y = shrink(y, lim)
    return reshape(y, shape[:axis] + (m,) + shape[axis + 2:])


def _advanced_getitem(x, index):
    raise NotImplementedError("integer-array indexing is not implemented yet")


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
    raise NotImplementedError("x.at[...] updates are not implemented yet")
