"""The Array API standard's data type functions: ``astype``, ``can_cast``, ``finfo``, ``iinfo``,
``isdtype``, ``result_type``.

Promotion is the front end's: NumPy's rules between arrays and dtypes (which contain the
standard's promotion table; for the pairs the standard leaves unspecified, such as int32 with
float32 or int64 with uint64, NumPy's answer), with Python scalars weakly typed as in JAX
(``result_type(int8, 1) == int8``; ``result_type(int8, 1.0)`` is the default float dtype:
float32, or float64 in x64 mode, see ``nx_rune.config``).
Kinds (``isdtype``): float16 counts as ``'real floating'`` (an extension the standard allows).
"""
from __future__ import annotations

import builtins

import numpy as np

from nx_rune import dtypes
from nx_rune.frontend._core import SCALARS, operand
from nx_rune.frontend._core import astype as _astype
from nx_rune.frontend.movement import copy as _copy
from nx_rune.tensor import ArrayBase, check_device
from nx_rune.typing import Array, ArrayLike, DTypeLike

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "promote_types", "result_type"]

_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True,
           device: object = None) -> Array:
    """``x`` converted to ``dtype``, same shape (NumPy's casting: floats to ints truncate
    toward zero, nonzero to bool is True).

    ``copy``: True (default, as NumPy and the Array API) always returns a new tensor; False
    returns ``x`` itself when it already has ``dtype``.  ``device``: None or the CPU.
    Differentiable (a cast; the derivative is cast back).
    """
    check_device(device)
    _check_bool(copy, "copy")
    x = operand(x)
    dt = dtypes.check_dtype(dtype)
    if x.dtype == dt:
        return _copy(x) if copy else x
    return _astype(x, dt)


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {value!r}")


def _dtype_arg(value, name, arrays=True):
    """The dtype named by ``value``: a dtype, a NumPy scalar type, a dtype name, or (when
    ``arrays``) a tensor, ndarray or NumPy scalar (its dtype); TypeError naming ``name``
    otherwise."""
    if isinstance(value, (ArrayBase, np.ndarray, np.generic)):
        if arrays:
            return value.dtype
        raise TypeError(f"{name}: expected a dtype (such as nx.float32), got an array; pass "
                        f"its .dtype")
    if value is None or isinstance(value, (bool, int, float, complex, np.generic)) or (
            isinstance(value, type) and value in (bool, int, float, complex)):
        # np.dtype(None) is float64 and np.dtype(float) float64: not nx_rune's defaults, so
        # refuse them rather than answer for a dtype the caller did not mean
        raise TypeError(f"{name}: expected a dtype{' or an array' if arrays else ''} (such as "
                        f"nx.float32), got {value!r}")
    try:
        return np.dtype(value)
    except TypeError:
        raise TypeError(f"{name}: expected a dtype{' or an array' if arrays else ''} (such as "
                        f"nx.float32), got {value!r}") from None


class finfo_object:
    """Machine limits of a floating-point dtype (``nx.finfo``): ``bits``, ``eps``, ``max``,
    ``min``, ``smallest_normal`` (= ``tiny``), ``resolution`` (Python floats) and ``dtype``."""
    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "tiny", "resolution", "dtype")

    def __init__(self, dtype):
        info = np.finfo(dtype)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.tiny = self.smallest_normal
        self.resolution = float(info.resolution)
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, min={self.min!r}, "
                f"smallest_normal={self.smallest_normal!r}, dtype={self.dtype})")


class iinfo_object:
    """Limits of an integer dtype (``nx.iinfo``): ``bits``, ``max``, ``min`` (Python ints) and
    ``dtype``."""
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, dtype):
        info = np.iinfo(dtype)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type: DTypeLike | ArrayLike, /) -> finfo_object:
    """Limits of the floating-point dtype ``type`` (a dtype or an array of it); for a complex
    dtype, those of its real component (complex64 -> float32).  ValueError for a dtype that is
    not floating-point."""
    dt = dtypes.check_dtype(_dtype_arg(type, "type"), "type")
    if dt.kind == "c":
        dt = np.dtype(np.float32 if dt == np.complex64 else np.float64)
    if dt.kind != "f":
        raise ValueError(f"type: finfo needs a floating-point dtype, got {dt} (use nx.iinfo "
                         f"for integers)")
    return finfo_object(dt)


def iinfo(type: DTypeLike | ArrayLike, /) -> iinfo_object:
    """Limits of the integer dtype ``type`` (a dtype or an array of it).  ValueError for a
    dtype that is not an integer dtype (bool included)."""
    dt = dtypes.check_dtype(_dtype_arg(type, "type"), "type")
    if dt.kind not in "iu":
        raise ValueError(f"type: iinfo needs an integer dtype, got {dt} (use nx.finfo for "
                         f"floating-point dtypes)")
    return iinfo_object(dt)


def isdtype(dtype: DTypeLike, kind: str | DTypeLike | tuple) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype (equality), one of the kind names
    ``'bool'``, ``'signed integer'``, ``'unsigned integer'``, ``'integral'``,
    ``'real floating'`` (float16, float32, float64), ``'complex floating'``, ``'numeric'``,
    or a tuple of these (any of them).  TypeError when ``dtype`` is not a dtype; ValueError
    for an unknown kind name."""
    dt = _dtype_arg(dtype, "dtype", arrays=False)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    out = False
    for k in kinds:
        if isinstance(k, str):
            letters = _KINDS.get(k)
            if letters is None:
                try:
                    np.dtype(k)
                except TypeError:
                    raise ValueError(f"kind: unknown dtype kind {k!r}; the kinds are "
                                     f"{', '.join(map(repr, _KINDS))}") from None
                raise ValueError(f"kind: {k!r} is a dtype name, not a kind; pass the dtype "
                                 f"(nx.{k}) or one of the kinds {', '.join(map(repr, _KINDS))}")
            out = out or dt.kind in letters
        elif isinstance(k, tuple):
            raise TypeError(f"kind: a tuple of kinds cannot nest another tuple, got {kind!r}")
        else:
            out = out or dt == _dtype_arg(k, "kind", arrays=False)
    return out


def result_type(*arrays_and_dtypes: ArrayLike | DTypeLike) -> np.dtype:
    """The dtype of an operation combining ``arrays_and_dtypes`` (arrays, dtypes and Python
    scalars): NumPy's promotion between arrays and dtypes, Python scalars weak (they adopt the
    arrays' dtype within a kind; a float with integers gives the default float dtype, a complex
    with real floats the matching complex dtype, with integers the default complex dtype: as
    JAX, in both of its modes).  The Python types ``bool``, ``int``, ``float`` and ``complex``
    count as weak values of their kind, as in ``jax.numpy.result_type`` (``result_type(float)``
    is the default float dtype, ``result_type(float, nx.float16)`` float16).  At least one
    argument must be an array, a dtype or one of those types (TypeError otherwise)."""
    strong, weak = [], []
    types_only = []
    for i, a in enumerate(arrays_and_dtypes):
        if isinstance(a, SCALARS) and not isinstance(a, np.generic):
            weak.append(a)
        elif isinstance(a, type) and a in _WEAK_TYPES:
            weak.append(_WEAK_TYPES[a])
            types_only.append(a)
        else:
            strong.append(dtypes.check_dtype(_dtype_arg(a, f"arrays_and_dtypes[{i}]"),
                                             f"arrays_and_dtypes[{i}]"))
    if not strong and not types_only:
        raise TypeError("result_type: needs at least one array or dtype (Python scalars alone "
                        "have no dtype to promote to)")
    if not strong:      # Python types alone: the default dtype of the widest kind among them
        widest = max(weak, key=_weak_rank)
        return {0: np.dtype(np.bool_), 1: dtypes.default_int(), 2: dtypes.default_float(),
                3: dtypes.default_complex()}[_weak_rank(widest)]
    dt = strong[0] if len(strong) == 1 else dtypes.result_type(*strong)
    for v in sorted(weak, key=_weak_rank):
        dt = dtypes.weak_result_type(dt, v)
    return dt



def promote_types(a: DTypeLike, b: DTypeLike) -> np.dtype:
    """The dtype two arrays of dtypes ``a`` and ``b`` promote to (``jnp.promote_types``,
    ``np.promote_types``): NumPy's within a kind, an integer or bool with a float or complex
    taking the latter's (JAX's), or NumPy's throughout under ``dtype_promotion="numpy"``.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.promote_types(nx.int32, nx.float32), nx.promote_types(nx.int16, nx.uint8)
    (dtype('float32'), dtype('int16'))
    """
    return dtypes.result_type(dtypes.check_dtype(_dtype_arg(a, "a"), "a"),
                              dtypes.check_dtype(_dtype_arg(b, "b"), "b"))

# the Python types jnp.result_type reads as weak values of their kind
_WEAK_TYPES = {bool: False, int: 0, float: 0.0, complex: 0j}


def _weak_rank(v):
    # apply bools, then ints, floats, complexes: each step can only widen the kind
    return 0 if isinstance(v, (bool, np.bool_)) else 1 if isinstance(v, int) else \
        2 if isinstance(v, float) else 3


def can_cast(from_: DTypeLike | ArrayLike, to: DTypeLike, /) -> bool:
    """Whether ``from_`` (a dtype or an array of it) casts to ``to`` under the promotion rules:
    True when promoting ``from_`` with some dtype can give ``to`` (NumPy's "safe" casting:
    int8 -> int16, uint8 -> int16, int32 -> float64, float32 -> complex64; never a narrowing
    or float -> int)."""
    src = dtypes.check_dtype(_dtype_arg(from_, "from_"), "from_")
    dst = dtypes.check_dtype(_dtype_arg(to, "to", arrays=False), "to")
    return builtins.bool(np.can_cast(src, dst, casting="safe"))
