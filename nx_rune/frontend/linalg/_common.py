"""What the linear-algebra functions share: ``LinAlgError``, the result types, operand checks,
packed results (``unpack``) and the direct path (LAPACK straight on concrete float operands)."""
from __future__ import annotations

import functools
import math
import warnings
from typing import NamedTuple

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune import tensor as _tensor_module
from nx_rune.frontend import elementwise
from nx_rune.frontend._core import (
    as_inexact,
    astype,
    broadcast_shapes,
    broadcast_to,
    operand,
    promote,
)
from nx_rune.frontend.elementwise import add, multiply, sqrt
from nx_rune.frontend.movement import swapaxes
from nx_rune.primitives import bind
from nx_rune.tensor import DISPATCH, Tensor
from nx_rune.typing import Array, ArrayLike

LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    """``eigh``'s result: eigenvalues (..., n), ascending, and eigenvectors (..., n, n), one per
    column."""
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """``qr``'s result: Q with orthonormal columns and upper-triangular R."""
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """``slogdet``'s result: the sign (x's dtype) and log|det| (real dtype)."""
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    """``svd``'s result: U, the singular values S (descending, real) and Vh."""
    U: Array
    S: Array
    Vh: Array


class LstsqResult(NamedTuple):
    """``lstsq``'s result, as NumPy's: the solution, the residual sums of squares, the rank of
    a and a's singular values."""
    x: Array
    residuals: Array
    rank: Array
    s: Array


# -- helpers ---------------------------------------------------------------------------------

def _inexact(x: ArrayLike, name: str) -> Array:
    """``x`` as a float or complex tensor that LAPACK takes (float16 refused)."""
    x = operand(x)
    if x.dtype == dtypes.float16:
        raise TypeError(f"{name}: float16 is not supported in linear algebra (LAPACK has no half "
                        f"precision); convert to float32")
    return as_inexact(x)


def _matrix(x: ArrayLike, name: str, square: bool = False) -> Array:
    """``x`` as a float stack of matrices (at least 2-D; square when asked)."""
    x = _inexact(x, name)
    if x.ndim < 2:
        raise LinAlgError(f"{name}: expected a matrix or a stack of matrices (at least 2-D), "
                          f"got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError(f"{name}: the last two dimensions must be square, got shape {x.shape}")
    return x


def _matrices(a: ArrayLike, b: ArrayLike, name_a: str, name_b: str) -> tuple[Array, Array]:
    """Two operands promoted to one float dtype (``a`` a square stack)."""
    a = _matrix(a, name_a, square=True)
    b = _inexact(b, name_b)
    if a.dtype != b.dtype:
        a, b = promote(a, b)
    return a, b


def real_dtype(dt):
    """The real dtype of the same precision (float32 for complex64)."""
    return {np.dtype(np.complex64): dtypes.float32,
            np.dtype(np.complex128): dtypes.float64}.get(np.dtype(dt), np.dtype(dt))


def _real(x):
    """The real part of ``x`` (x itself when real)."""
    if not dtypes.is_complex(x.dtype):
        return x
    fn = getattr(elementwise, "real", None)
    if fn is not None:
        return fn(x)
    with warnings.catch_warnings():  # the imaginary part is dropped on purpose
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return astype(x, real_dtype(x.dtype))


def _abs(x):
    """|x| (the modulus for complex x), in x's real dtype."""
    if not dtypes.is_complex(x.dtype):
        return elementwise.abs(x)
    fn = getattr(elementwise, "real", None)
    if fn is not None and getattr(elementwise, "imag", None) is not None:
        re, im = fn(x), elementwise.imag(x)
    else:
        re, im = _real(x), _real(multiply(x, -1j))   # Im(x) = Re(-i x)
    return sqrt(add(multiply(re, re), multiply(im, im)))


def mT(x):
    """The transpose of each matrix of a stack (a view)."""
    return swapaxes(x, -1, -2)


def unpack(packed, shapes):
    """Split a primitive's packed result (results flattened along its last axis) into views of
    the leading axes followed by each of ``shapes``."""
    batch = packed.shape[:-1]
    whole = tuple((0, d) for d in batch)
    out, start = [], 0
    for shp in shapes:
        size = math.prod(shp)
        part = bind(P.shrink_p, packed, limits=whole + ((start, start + size),))
        out.append(bind(P.reshape_p, part, shape=batch + tuple(shp)))
        start += size
    return out


@functools.lru_cache(maxsize=64)
def eye_like(n, dtype):
    """The (n, n) identity in ``dtype`` (a constant, shared: tensors are immutable)."""
    return Tensor._wrap(np.eye(n, dtype=dtype))


def _batch_broadcast(a, b, a_core, b_core, name_a, name_b):
    """``a`` and ``b`` broadcast to one batch shape (their axes before the last a_core and
    b_core ones)."""
    ba, bb = a.shape[:a.ndim - a_core], b.shape[:b.ndim - b_core]
    if ba == bb:
        return a, b
    try:
        batch = broadcast_shapes(ba, bb)
    except ValueError:
        raise ValueError(f"{name_a}, {name_b}: batch dimensions of shapes {a.shape} and "
                         f"{b.shape} cannot be broadcast together") from None
    return (broadcast_to(a, batch + a.shape[a.ndim - a_core:]),
            broadcast_to(b, batch + b.shape[b.ndim - b_core:]))


def _concrete(x):
    """x's values as an ndarray, or None when they are not known (abstract tracing)."""
    t = x._concrete_tensor()
    return None if t is None else t._np()


def _eps(dt):
    return float(np.finfo(real_dtype(dt)).eps)


# -- the direct path -------------------------------------------------------------------------
# With no transformation active, nothing records a call on concrete Tensors, so a function
# whose work is one NumPy/SciPy call (det, slogdet, qr, eigh, svd, norms, matrix_power, the
# Cholesky solves) may make that call on the values and wrap its results, skipping the front
# end's checks, the primitive's packing and the unpacking views: on (64, 64) matrices those
# cost as much as the LAPACK call.  The values are those of the primitives (the same LAPACK
# routine on the same data; det is NumPy's, equal to sign * exp(logabsdet) to an ulp or two).
# Anything else (a tracer, an ndarray or a list, float16, ints, a shape the call would reject)
# takes the general path, which checks and raises as documented.

_DIRECT_DTYPES = "fdFD"           # float32, float64, complex64, complex128
_QUIET_VAR, _QUIET = _tensor_module._np_errstate_var, _tensor_module._NP_QUIET


def _direct(x):
    """x's ndarray when x is a concrete Tensor of a LAPACK dtype and no transformation is
    active (the direct path), else None."""
    if type(x) is Tensor and DISPATCH.get() is None:
        arr = x._np()
        if arr.dtype.char in _DIRECT_DTYPES:
            return arr
    return None


def _direct_square(x):
    """``_direct(x)`` when it is a stack of square matrices, else None."""
    arr = _direct(x)
    if arr is not None and arr.ndim >= 2 and arr.shape[-1] == arr.shape[-2]:
        return arr
    return None


def _quiet(fn, *args):
    """fn(*args) with NumPy's floating-point warnings off (a NaN input gives NaN, silently, as
    in the backend), through NumPy's error-state ContextVar (cheaper than np.errstate)."""
    if _QUIET_VAR is None:    # pragma: no cover (another NumPy layout)
        with np.errstate(all="ignore"):
            return fn(*args)
    token = _QUIET_VAR.set(_QUIET)
    try:
        return fn(*args)
    finally:
        _QUIET_VAR.reset(token)
