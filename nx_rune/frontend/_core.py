"""Operand coercion, promotion and broadcasting: the core every front-end module imports.

``asarray`` makes a Tensor of Python/NumPy data with JAX's defaults (x64 off: Python floats
become float32, ints int32 (int64 when they do not fit), complex numbers complex64; x64 on, see
``nx_rune.config``: float64, int64, complex128); NumPy arrays keep their dtype, and a
C-contiguous ndarray is shared, not copied.  ``promote`` gives operands one
dtype with NumPy's rules and Python scalars weakly typed as in JAX (``x * 2`` keeps x's dtype);
``binary_op`` binds a binary primitive on promoted, broadcast operands.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.config import x64_enabled
from nx_rune.errors import ShapeError
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

__all__ = ["asarray", "broadcast_shapes", "broadcast_to", "astype"]

_NARROW = {np.dtype(np.float64): dtypes.float32, np.dtype(np.complex128): dtypes.complex64}


def normalize_shape(shape, name="shape"):
    """``shape`` (an int or a sequence of ints) as a tuple of non-negative ints."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    elif getattr(shape, "ndim", None) == 0:  # a 0-d tensor or ndarray: one dimension
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: expected an int or a sequence of ints, got {shape!r}") from None
    if builtins.any(s < 0 for s in out):
        raise ValueError(f"{name}: negative dimension in {out}")
    count = 1
    for s in out:  # the product of the nonzero sizes must fit a Py_ssize_t (NumPy's limit too)
        count *= s or 1
        if count > _MAX_SIZE:
            raise ValueError(f"{name}: {out} has too many elements (more than 2**63 - 1, "
                             f"counting the nonzero sizes)")
    return out


_MAX_SIZE = 2**63 - 1


def _python_data_to_ndarray(obj, dtype):
    if dtype is not None:
        return np.asarray(obj, dtype=dtypes.check_dtype(dtype))
    try:
        arr = np.asarray(obj)
    except (ValueError, TypeError) as e:
        raise TypeError(f"obj: cannot make a tensor from {type(obj).__name__}: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"obj: cannot make a tensor from {type(obj).__name__} (ragged or "
                        f"non-numeric data)")
    if arr.dtype.kind in "US":
        raise TypeError(f"obj: cannot make a tensor from strings ({arr.dtype})")
    if x64_enabled():  # NumPy's own defaults are x64's: float64, int64, complex128
        return arr
    if arr.dtype in _NARROW:
        return arr.astype(_NARROW[arr.dtype])
    if arr.dtype == np.int64 and (arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)):
        return arr.astype(np.int32)
    return arr


def _holds_arrays(obj):
    """True when the nested list/tuple ``obj`` holds arrays (tensors, tracers, ndarrays)."""
    for o in obj:
        if isinstance(o, (list, tuple)):
            if _holds_arrays(o):
                return True
        elif isinstance(o, (ArrayBase, np.ndarray)):
            return True
    return False


def _stack_nested(obj):
    """A nested list/tuple holding arrays as one array stacked from them along new leading
    axes: the arrays' dtypes promote, Python numbers weakly (as in ``add``), and derivatives
    flow through traced elements (NumPy would read their values)."""
    leaves = []
    _nested_leaves(obj, leaves)
    arrays = [operand(x) for x in leaves if not _weak(x)]
    dt = dtypes.result_type(*[a.dtype for a in arrays])
    for x in leaves:
        if _weak(x):
            dt = dtypes.weak_result_type(dt, x)
    return _stack_in(obj, dt)


def _nested_leaves(obj, out):
    for o in obj:
        if isinstance(o, (list, tuple)):
            _nested_leaves(o, out)
        else:
            out.append(o)


def _stack_in(obj, dt):
    if not isinstance(obj, (list, tuple)):
        return const(obj, dt) if isinstance(obj, SCALARS) else astype(operand(obj), dt)
    if not obj:
        raise ValueError("obj: an empty sequence next to arrays has no shape to stack")
    parts = [_stack_in(o, dt) for o in obj]
    shape = parts[0].shape
    for p in parts[1:]:
        if p.shape != shape:
            raise ValueError(f"obj: a ragged nested sequence (elements of shapes {shape} and "
                             f"{p.shape}) cannot make an array")
    return bind(P.cat_p, *[bind(P.reshape_p, p, shape=(1,) + shape) for p in parts], axis=0)


def asarray(obj: ArrayLike, dtype: DTypeLike = None) -> Array:
    """A tensor of ``obj``; zero-copy for a C-contiguous ndarray of a supported dtype.

    ``obj``: a Tensor, ndarray, Python scalar or nested sequence, or anything with
    ``__array__``; a nested sequence holding arrays is stacked from them (dtypes promote as
    in ``add``; traced elements stay differentiable).  ``dtype``: converts when given.
    """
    if isinstance(obj, ArrayBase):
        if dtype is None or np.dtype(dtype) == obj.dtype:
            return obj
        return astype(obj, dtype)
    if isinstance(obj, np.ndarray):
        if isinstance(obj, np.ma.MaskedArray):
            raise TypeError("obj: masked arrays are not supported (their mask would be ignored); "
                            "pass obj.data for the raw values or obj.filled(value)")
        # a new ndarray object of the base class over the same memory: the caller changing its
        # own object afterwards (a.shape = ...) cannot change the tensor, and a subclass
        # (np.matrix) cannot bring its own arithmetic
        arr = obj.view(np.ndarray)
        if dtype is not None:
            arr = arr.astype(dtypes.check_dtype(dtype), copy=False)
        else:
            dtypes.check_dtype(arr.dtype, "obj")
            if not arr.dtype.isnative:
                arr = arr.astype(arr.dtype.newbyteorder("="))
    elif isinstance(obj, np.generic):
        arr = np.asarray(obj, dtype=None if dtype is None else dtypes.check_dtype(dtype))
    elif isinstance(obj, (list, tuple)) and _holds_arrays(obj):
        out = _stack_nested(obj)
        return out if dtype is None else astype(out, dtype)
    else:
        arr = _python_data_to_ndarray(obj, dtype)
    dtypes.check_dtype(arr.dtype, "obj")
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    return Tensor._wrap(arr)


SCALARS = (int, float, complex, bool, np.bool_)


def _weak(x):
    """Whether ``x`` is weakly typed: a Python scalar, and NumPy's float64 and complex128
    scalars (subclasses of float and complex) except in x64 mode, where those are strong, as
    in JAX's x64 mode (and NumPy 2): ``float32 tensor + np.float64(1)`` is float64 there and
    float32 with x64 off (JAX's x32 mode narrows the scalar to float32)."""
    return isinstance(x, SCALARS) and not (isinstance(x, np.generic) and x64_enabled()
                                           and not isinstance(x, np.bool_))


# -- argument handling ---------------------------------------------------------------------

def operand(x: ArrayLike) -> Array:
    return x if isinstance(x, ArrayBase) else asarray(x)


def const(value, dtype):
    """The Python or NumPy scalar ``value`` as a 0-d tensor of ``dtype``.  A float beyond a
    narrow float dtype's range rounds to inf silently (as the operators give it), without
    NumPy's cast warning."""
    if type(value) is float and dtype.kind in "fc" and dtype.itemsize < 8 \
            and not -_NARROW_MAX[dtype] <= value <= _NARROW_MAX[dtype]:
        with np.errstate(over="ignore"):
            return Tensor._wrap(np.array(value, dtype=dtype))
    return Tensor._wrap(np.array(value, dtype=dtype))


_NARROW_MAX = {np.dtype(t): float(np.finfo(t).max) for t in (np.float16, np.float32)}
_NARROW_MAX[np.dtype(np.complex64)] = _NARROW_MAX[np.dtype(np.float32)]


def broadcast_shapes(*shapes: ShapeLike) -> tuple[int, ...]:
    """The NumPy broadcast of ``shapes``; ValueError naming them when incompatible."""
    if len(shapes) == 2:
        a, b = shapes
        if len(a) == len(b):   # (the common case, without the general loop)
            out = []
            for m, n in zip(a, b):
                if m == n or n == 1:
                    out.append(m)
                elif m == 1:
                    out.append(n)
                else:
                    break
            else:
                return tuple(out)
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-nd, 0):
        size = 1
        for s in shapes:
            if len(s) >= -i:
                d = s[i]
                if d != 1:
                    if size != 1 and d != size:
                        raise ShapeError("shapes " + " and ".join(str(tuple(t)) for t in shapes)
                                         + " cannot be broadcast together")
                    size = d
        out.append(size)
    return tuple(out)


_MAX_BYTES = np.iinfo(np.intp).max


def check_addressable(shape, dtype, name="shape"):
    """ValueError naming ``name`` unless a tensor of ``shape`` and ``dtype`` can be read as an
    ndarray: its nonzero sizes times the item size fit in a signed machine word (NumPy's
    rule, empty shapes included; the view algebra, which knows no item size, allows more)."""
    n = 1
    for d in shape:
        if d > 1:
            n *= d
    if n > _MAX_BYTES:
        raise ValueError(f"{name}: {tuple(shape)} has too many elements (more than 2**63 - 1, "
                         f"counting the nonzero sizes)")
    if n * np.dtype(dtype).itemsize > _MAX_BYTES:
        raise ValueError(f"{name}: {tuple(shape)} of {dtype} is too large to address "
                         f"({n * np.dtype(dtype).itemsize} bytes ignoring the zero axes)")


def broadcast_to(x: ArrayLike, shape: ShapeLike) -> Array:
    """``x`` viewed with ``shape`` (size-1 and missing leading axes repeat; stride 0, no copy)."""
    x = operand(x)
    shape = normalize_shape(shape)
    if x.shape == shape:
        return x
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"shape: cannot broadcast a tensor of shape {x.shape} to {shape}")
    check_addressable(shape, x.dtype)
    return bind(P.expand_p, x, shape=shape)


def astype(x: ArrayLike, dtype: DTypeLike) -> Array:
    """``x`` converted to ``dtype``, same shape (NumPy's casting: floats to ints truncate toward
    zero, nonzero to bool is True); ``x`` itself when the dtype already matches."""
    x = operand(x)
    dt = dtypes.check_dtype(dtype)
    if x.dtype == dt:
        return x
    return bind(P.cast_p, _wide(x), dtype=dt)


def _wide(x):
    """A weakly typed traced value that stands for a Python number (a jit argument) carries
    the number at full precision (``JitTracer._wide``): converting that one rounds the number
    once, as converting the Python number does eagerly."""
    if x.__class__ is Tensor:
        return x
    w = getattr(x, "_wide", None)
    return x if w is None else w


def promote(*xs: ArrayLike) -> list[Array]:
    """Tensors of one dtype from arrays and weakly typed Python scalars."""
    for x in xs:
        if x.__class__ is not Tensor and getattr(x, "weak_type", False):
            return _promote_weak(xs)
    arrays = [x for x in xs if not _weak(x)]
    if not arrays:  # only Python scalars: the default dtype of the highest kind among them
        dt = dtypes.scalar_dtype(builtins.max(xs, key=_scalar_rank))
        if dt.kind in "iu":
            dt = builtins.max((dtypes.scalar_dtype(x) for x in xs), key=lambda d: d.itemsize)
        return [const(x, dt) for x in xs]
    arrays = [operand(x) for x in arrays]
    dt = arrays[0].dtype if len(arrays) == 1 else dtypes.result_type(*[a.dtype for a in arrays])
    for x in xs:
        if _weak(x):
            dt = dtypes.weak_result_type(dt, x)
    out, it = [], iter(arrays)
    for x in xs:
        out.append(const(x, dt) if _weak(x) else astype(next(it), dt))
    return out


# a weakly typed traced value (a jit argument that was a Python scalar) promotes as a
# Python scalar of its kind would, then takes the result's dtype (converted from its full
# precision form where it has one: astype)
_WEAK_PROXY = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _promote_weak(xs):
    weak = [isinstance(x, ArrayBase) and getattr(x, "weak_type", False) for x in xs]
    if builtins.all(weak) and builtins.all(x.dtype == xs[0].dtype for x in xs):
        return list(xs)         # weak values of one dtype stay that dtype (as in JAX)
    out = promote(*[_WEAK_PROXY[x.dtype.kind] if w else x for x, w in zip(xs, weak)])
    dt = out[0].dtype
    return [astype(x, dt) if w else o for x, w, o in zip(xs, weak, out)]


def _scalar_rank(x):
    return 0 if isinstance(x, (bool, np.bool_)) else 1 if isinstance(x, int) else \
        2 if isinstance(x, float) else 3


def broadcast_all(*xs):
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


_PY_NUMBERS = (float, int)
# dtype kinds that keep their dtype when they meet a Python number of the key's type (weak)
_KEEPS_KIND = {float: "fc", int: "iufc"}


def _broadcast_operand(x, shape):
    """x broadcast to ``shape`` for a binary primitive: a concrete 0-d Tensor (a constant under
    every transformation, e.g. a Python scalar that ``promote`` made) as a cached stride-0
    constant, anything else through the expand primitive."""
    if type(x) is Tensor and x.shape == ():
        return Tensor._broadcast_scalar(x._np().item(), x.dtype, shape)
    return bind(P.expand_p, x, shape=shape)


def binary_op(prim, a, b):
    # fast paths: equal shapes and dtypes, or an array and a Python number of its dtype
    if isinstance(a, ArrayBase):
        if isinstance(b, ArrayBase):
            if a.dtype == b.dtype:
                if a.shape != b.shape:   # (no promotion to work out: broadcast only)
                    shape = broadcast_shapes(a.shape, b.shape)
                    if a.shape != shape:
                        a = _broadcast_operand(a, shape)
                    if b.shape != shape:
                        b = _broadcast_operand(b, shape)
                return bind(prim, a, b)
        else:
            kinds = _KEEPS_KIND.get(type(b))
            if kinds is not None and a.dtype.kind in kinds:
                return bind(prim, a, Tensor._broadcast_scalar(b, a.dtype, a.shape))
    elif isinstance(b, ArrayBase):
        kinds = _KEEPS_KIND.get(type(a))
        if kinds is not None and b.dtype.kind in kinds:
            return bind(prim, Tensor._broadcast_scalar(a, b.dtype, b.shape), b)
    a, b = promote(a, b)
    if a.shape != b.shape:
        shape = broadcast_shapes(a.shape, b.shape)
        a = a if a.shape == shape else _broadcast_operand(a, shape)
        b = b if b.shape == shape else _broadcast_operand(b, shape)
    return bind(prim, a, b)


def as_inexact(x: ArrayLike) -> Array:
    """``x`` as a float tensor (ints and bools go to float32, 64-bit ints to float64: JAX's
    rule in both modes)."""
    x = operand(x)
    if dtypes.is_inexact(x.dtype):
        return x
    return astype(x, dtypes.float64 if x.dtype.itemsize == 8 else dtypes.float32)


def check_real(x, name):
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"{name}: not defined for complex tensors ({x.dtype})")


def check_int(x, name):
    if not (dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype)):
        raise TypeError(f"{name}: needs integer or bool tensors, got {x.dtype}")


def zeros_like_t(x):
    """Zeros of ``x``'s shape and dtype as a broadcast constant (no memory per element)."""
    return Tensor._broadcast_scalar(0, x.dtype, x.shape)


def reduction_axes(x, axis):
    """``axis`` (None: all, an int, or a tuple/list) as a sorted tuple of non-negative axes of
    ``x``; ValueError for a repeated axis."""
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, x.ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis: repeated axis in {axis}")
        return tuple(sorted(axes))
    return (normalize_axis(axis, x.ndim),)
