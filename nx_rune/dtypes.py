"""Dtypes of nx_rune (aliases of NumPy's), the default dtypes and the promotion rules.

Default dtypes follow JAX's two modes (``nx_rune.config``): with x64 off (the default) Python
floats and default float dtypes are float32, ints int32 and complex numbers complex64; with
x64 on (``nx.config.update("enable_x64", True)``, ``with nx.enable_x64():`` or
``NX_RUNE_ENABLE_X64=1``) float64, int64 and complex128.  ``default_float()``,
``default_int()`` and ``default_complex()`` read the mode; the module attributes
``DEFAULT_FLOAT``, ``DEFAULT_INT`` and ``DEFAULT_COMPLEX`` are the same values, looked up on
each access.

Promotion between tensors is JAX's where it differs from NumPy's by kind: an integer or bool
tensor meeting a floating or complex one takes that one's dtype (int32 * float32 is float32;
NumPy gives float64).  Within a kind, and between integers, it is NumPy's
(``numpy.result_type``).  ``nx.config.update("dtype_promotion", "numpy")`` (and each call of
``nx_rune.autograd.numpy``, which is NumPy's namespace) promotes as NumPy does throughout.
Python scalars are *weakly typed*, as in JAX: ``x * 2`` keeps ``x``'s dtype; a Python float
meeting an integer or bool tensor gives the default float dtype; a Python int meeting a bool
tensor gives the default int; a Python complex gives the complex dtype of the tensor's float
precision (float64: complex128; float32 and float16: complex64), or the default complex dtype
for integer and bool tensors.
"""
import numpy as np

from nx_rune._kernels.buffer import SUPPORTED_DTYPES, check_dtype
from nx_rune.config import numpy_promotion, x64_enabled

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



def default_float() -> np.dtype:
    """The default float dtype: float32, or float64 in x64 mode."""
    return float64 if x64_enabled() else float32


def default_int() -> np.dtype:
    """The default integer dtype: int32, or int64 in x64 mode."""
    return int64 if x64_enabled() else int32


def default_complex() -> np.dtype:
    """The default complex dtype: complex64, or complex128 in x64 mode."""
    return complex128 if x64_enabled() else complex64


_DEFAULTS = {"DEFAULT_FLOAT": default_float, "DEFAULT_INT": default_int,
             "DEFAULT_COMPLEX": default_complex}


def __getattr__(name):
    # DEFAULT_FLOAT, DEFAULT_INT, DEFAULT_COMPLEX: the mode's defaults, read on each access
    get = _DEFAULTS.get(name)
    if get is None:
        raise AttributeError(f"module 'nx_rune.dtypes' has no attribute {name!r}")
    return get()

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", "SUPPORTED_DTYPES",
           "check_dtype", "is_float", "is_complex", "is_inexact", "is_integer", "is_bool",
           "result_type", "inexact_result_type", "scalar_dtype", "weak_result_type",
           "default_float", "default_int", "default_complex"]


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
    """The dtype a Python scalar gets when it stands alone: bool; an int the default int (with
    x64 off, int64 when it does not fit in int32); a float the default float; a complex the
    default complex; a NumPy scalar its own dtype."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, int):
        if x64_enabled():
            return int64
        return int32 if -2**31 <= value < 2**31 else int64
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return default_complex()
    if isinstance(value, np.generic):
        return check_dtype(value.dtype)
    raise TypeError(f"cannot make a tensor from {type(value).__name__}")


def result_type(*dtypes):
    """The common dtype of tensors of ``dtypes``: NumPy's promotion, except that integers and
    bools meeting inexact dtypes take the inexact ones' (JAX's), unless NumPy promotion is on
    (see the module docstring)."""
    dt = np.result_type(*dtypes)
    if dt.kind not in "fc":     # only an inexact result can come from an integer meeting a float
        return check_dtype(dt)
    for d in dtypes:            # (operands all of the result's dtype: the common case, no work)
        if d is not dt:
            break
    else:
        return check_dtype(dt)
    if not numpy_promotion():
        inexact = [d for d in dtypes if np.dtype(d).kind in "fc"]
        if inexact and len(inexact) < len(dtypes):   # (int8 + uint64 is NumPy's float64)
            dt = np.result_type(*inexact)
    return check_dtype(dt)


def inexact_result_type(*dtypes):
    """``result_type`` made inexact (JAX's ``promote_dtypes_inexact``): integers and bools
    alone give the default float dtype (float64 under NumPy promotion, as NumPy's linear algebra
    does), float16 stays."""
    dt = result_type(*dtypes)
    if dt.kind in "fc":
        return dt
    return float64 if numpy_promotion() else default_float()


def weak_result_type(dtype, value):
    """The dtype of ``tensor(dtype) op value`` where ``value`` is a Python scalar (weak)."""
    dt = np.dtype(dtype)
    if isinstance(value, (bool, np.bool_)):
        return dt
    if isinstance(value, int):
        return default_int() if dt.kind == "b" else dt
    if isinstance(value, float):
        return dt if dt.kind in "fc" else default_float()
    if isinstance(value, complex):
        if dt.kind == "c":
            return dt
        if dt.kind == "f":
            return complex128 if dt == float64 else complex64
        return default_complex()
    raise TypeError(f"cannot combine a tensor with {type(value).__name__}")
