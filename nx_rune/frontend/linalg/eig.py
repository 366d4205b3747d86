"""``eig`` and ``eigvals``: eigenvalues and eigenvectors of general (non-symmetric) square
matrices, as ``jnp.linalg.eig``: complex results always (NumPy returns real arrays when every
eigenvalue of a real matrix is real), eigenvectors normalized to unit length (LAPACK geev).

The ``eig`` primitive's implementation is ``nx_rune.backend.linalg``'s (NumPy's
``linalg.eig``); its derivative rules are in ``nx_rune.autodiff.rules.linalg_eig`` (JAX's JVP:
dw = diag(V^-1 dA V),
dV = V (F * (V^-1 dA V)) with F_ij = 1 / (w_j - w_i), projected to keep each column's norm;
the VJP its transpose), differentiable to any order, batched over leading axes, jittable.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.backend.linalg import complex_of
from nx_rune.frontend._core import as_inexact, operand
from nx_rune.primitives import bind
from nx_rune.tensor import wrap_result
from nx_rune.typing import Array, ArrayLike

__all__ = ["EigResult", "eig", "eigvals", "complex_of", "unpack_eig"]


class EigResult(NamedTuple):
    """``eig``'s result: eigenvalues (..., n) and eigenvectors (columns, (..., n, n))."""
    eigenvalues: Array
    eigenvectors: Array


def unpack_eig(packed, n):
    """(w (..., n), v (..., n, n)) from the eig primitive's packed result (views)."""
    batch = packed.shape[:-1]
    whole = tuple((0, d) for d in batch)
    w = bind(P.shrink_p, packed, limits=whole + ((0, n),))
    v = bind(P.shrink_p, packed, limits=whole + ((n, n + n * n),))
    return (bind(P.reshape_p, w, shape=batch + (n,)),
            bind(P.reshape_p, v, shape=batch + (n, n)))


def _square(x, name):
    x = operand(x)
    if dtypes.is_bool(x.dtype) or x.dtype.kind in "iu":
        x = as_inexact(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError(f"{name}: expected a square matrix or a stack of them "
                                    f"(..., n, n), got shape {x.shape}")
    return x


def eig(x: ArrayLike) -> EigResult:
    """Eigenvalues w (..., n) and right eigenvectors v (columns, (..., n, n); A v = v diag(w),
    each column of unit length) of each square matrix of x, complex (the complex dtype of x's
    precision; ints as float).  The order is LAPACK's (not sorted).

    Derivative: JAX's (distinct eigenvalues; eigenvectors fixed up to a phase per column: the
    derivative of v keeps each column's length, and its phase part is the one with
    Re(v_j^H dv_j) = 0).  For real x the cotangent is real.  Repeated eigenvalues give inf/nan
    derivatives of the eigenvectors, as in JAX."""
    a = _square(x, "x")
    n = a.shape[-1]
    if math.prod(a.shape[:-2]) * n == 0:
        dt = complex_of(a.dtype)
        return EigResult(wrap_result(np.zeros(a.shape[:-1], dt)),
                         wrap_result(np.zeros(a.shape, dt)))
    w, v = unpack_eig(bind(P.eig_p, a), n)
    return EigResult(w, v)


def eigvals(x: ArrayLike) -> Array:
    """The eigenvalues (..., n) of each square matrix of x, complex (see ``eig``)."""
    return eig(x).eigenvalues
