"""Arguments of nx.random's samplers: conversions at the boundary and their checks."""
from __future__ import annotations

import math
import operator

import numpy as np

from nx_rune.backend.random import _U32, _size  # noqa: F401 (re-exported)
from nx_rune.config import x64_enabled
from nx_rune.frontend import asarray
from nx_rune.tensor import ArrayBase, Tensor

# ---------------------------------------------------------------------------------------------
# conversions at the boundary
# ---------------------------------------------------------------------------------------------

def _out(arr):
    """Wrap a NumPy result as a Tensor (no copy when it is C-contiguous)."""
    return asarray(np.asarray(arr))


def _np(x, name):
    """Concrete NumPy values of ``x``: a Tensor, ndarray, scalar or nested sequence.

    Python scalars keep full precision (JAX's weak types: cast later to the dtype in use);
    nested sequences follow ``nx.asarray`` (the mode's defaults).
    """
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, ArrayBase):
        raise TypeError(f"{name}: nx.random needs concrete values, got a traced "
                        f"{type(x).__name__}")
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        return np.asarray(x)
    try:
        return asarray(x).numpy()
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def _check_key(dtype, shape, name):
    """Raise naming ``name`` unless (dtype, shape) is a single raw key's: uint32, (2,)."""
    if dtype != _U32:
        raise TypeError(f"{name} must be a PRNG key: a uint32 array of shape (2,), "
                        f"got dtype {dtype}")
    if len(shape) == 0 or shape[-1] != 2:
        raise TypeError(f"{name} must be a PRNG key: a uint32 array of shape (2,), "
                        f"got shape {shape}")
    if len(shape) > 1:
        raise ValueError(f"{name} must be a single key of shape (2,), got a batch of keys "
                         f"of shape {shape}")


def _key_words(k, name="key"):
    """The two uint32 words of a single raw key, as Python ints; raise naming ``name``."""
    arr = _np(k, name)
    _check_key(arr.dtype, arr.shape, name)
    return int(arr[0]), int(arr[1])


def _shape(shape, name="shape"):
    """A shape tuple of non-negative ints (a bare int means a 1-D shape)."""
    if isinstance(shape, ArrayBase) and not isinstance(shape, Tensor) or (
            isinstance(shape, (tuple, list))
            and any(isinstance(d, ArrayBase) and not isinstance(d, Tensor) for d in shape)):
        raise TypeError(f"{name} must be static (Python ints): nx.random cannot draw a traced "
                        f"number of values; under jit pass it as a static argument "
                        f"(static_argnums)")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    elif getattr(shape, "ndim", None) == 0:  # a 0-d integer tensor or ndarray
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name} must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{name} must have non-negative sizes, got {shape}")
    if math.prod(d or 1 for d in shape) * 8 > 2**63 - 1:    # NumPy's limit, 8-byte items
        raise ValueError(f"{name} {shape} is too large to address (counting the nonzero "
                         f"sizes)")
    return shape


_KIND_NAMES = {"u": "an unsigned integer dtype", "f": "a float dtype",
               "fc": "a float or complex dtype"}


def _dtype(dtype, default, kinds, fn):
    """``dtype`` (None: ``default``) checked to be of one of ``kinds``; ValueError otherwise."""
    dt = np.dtype(default if dtype is None else dtype)
    if dt.kind not in kinds:
        raise ValueError(f"dtype of {fn} must be {_KIND_NAMES[kinds]}, got {dt}")
    return dt


def _check_param_shape(fn, shape, *param_shapes):
    """JAX's rule: the parameters broadcast to ``shape`` and broadcasting leaves it unchanged."""
    try:
        out = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        out = None
    if out != shape:
        raise ValueError(f"{fn}: parameter shapes {list(param_shapes)} must broadcast to "
                         f"the shape argument {shape}")


def _int_param(x, name):
    """An integer array of ``x``'s values (floats truncate, as ``astype(int)``); a traced
    value stays traced."""
    arr = _val(x, name)
    if _dtype_of(arr).kind in "bf":
        return arr.astype(np.int64)
    if _dtype_of(arr).kind not in "iu":
        raise TypeError(f"{name} must be an integer, got {arr.dtype}")
    return arr


def _axis(axis, ndim, name="axis"):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def _float_dtype_of(arr):
    """JAX's promote_dtypes_inexact for a concrete array: ints and bools give float32 (64-bit
    ints float64 in x64 mode, where JAX has them)."""
    if arr.dtype.kind in "fc":
        return arr.dtype
    if arr.dtype.itemsize == 8 and x64_enabled():
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def _traced(x):
    return isinstance(x, ArrayBase) and not isinstance(x, Tensor)


def _val(x, name):
    """A traced value as it is, anything else as its NumPy array (as ``_np``)."""
    return x if _traced(x) else _np(x, name)


def _dtype_of(x):
    return np.dtype(x.dtype)


def _key_arg(k, name="key"):
    """The key as a pair of ints (concrete) or a checked traced uint32 (2,) array."""
    if not _traced(k):
        return _key_words(k, name)
    _check_key(_dtype_of(k), tuple(k.shape), name)
    return k


def _static_int(x, name):
    if _traced(x):
        raise TypeError(f"{name}: a traced integer cannot set the size of a random draw "
                        f"(sizes are static: pass it as a static argument of jit, or an "
                        f"array to sample from)")


def _out_any(x):
    """A result of the traced chains: NumPy arrays (concrete key) as Tensors, others as they
    are."""
    return _out(x) if isinstance(x, np.ndarray) else x
