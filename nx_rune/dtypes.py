"""Dtypes of nx_rune (aliases of NumPy's) and the promotion rules of the front end.

Promotion between tensors follows NumPy (``numpy.result_type``).  Python scalars are *weakly
typed*, as in JAX: ``x * 2`` keeps ``x``'s dtype; a Python float meeting an integer or bool
tensor gives the default float dtype (float32); a Python int meeting a bool tensor gives int32;
a Python complex gives the complex dtype matching the tensor's float precision.
"""
import numpy as np

from nx_rune._kernels.buffer import SUPPORTED_DTYPES, check_dtype

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

DEFAULT_FLOAT = float32
DEFAULT_INT = int32

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", "SUPPORTED_DTYPES",
           "check_dtype", "is_float", "is_complex", "is_inexact", "is_integer", "is_bool",
           "result_type", "scalar_dtype", "weak_result_type"]


def _kind(dt):
    """The NumPy kind letter of ``dt`` (a dtype, or anything np.dtype accepts)."""
    return dt.kind if isinstance(dt, np.dtype) else np.dtype(dt).kind


def is_float(dt):
    return _kind(dt) == "f"


def is_complex(dt):
    return _kind(dt) == "c"


def is_inexact(dt):
    return _kind(dt) in "fc"


def is_integer(dt):
    return _kind(dt) in "iu"


def is_bool(dt):
    return _kind(dt) == "b"


def scalar_dtype(value):
    """The dtype a Python scalar gets when it stands alone (JAX's x32 defaults)."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, int):
        return DEFAULT_INT if -2**31 <= value < 2**31 else int64
    if isinstance(value, float):
        return DEFAULT_FLOAT
    if isinstance(value, complex):
        return complex64
    if isinstance(value, np.generic):
        return check_dtype(value.dtype)
    raise TypeError(f"cannot make a tensor from {type(value).__name__}")


def result_type(*dtypes):
    """NumPy's promotion of tensor dtypes."""
    return check_dtype(np.result_type(*dtypes))


def weak_result_type(dtype, value):
    """The dtype of ``tensor(dtype) op value`` where ``value`` is a Python scalar (weak)."""
    dt = np.dtype(dtype)
    if isinstance(value, (bool, np.bool_)):
        return dt
    if isinstance(value, int):
        return DEFAULT_INT if dt.kind == "b" else dt
    if isinstance(value, float):
        return dt if dt.kind in "fc" else DEFAULT_FLOAT
    if isinstance(value, complex):
        if dt.kind == "c":
            return dt
        return complex128 if dt == float64 else complex64
    raise TypeError(f"cannot combine a tensor with {type(value).__name__}")
