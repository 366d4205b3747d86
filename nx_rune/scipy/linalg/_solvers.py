"""SciPy's matrix equation solvers: solve_sylvester, solve_continuous_lyapunov and
solve_discrete_lyapunov.

solve_sylvester is the ``sylvester`` primitive (SciPy's Bartels-Stewart per matrix, batched,
jittable), whose derivative is another Sylvester solve (JAX's solve_sylvester has none); the
Lyapunov solvers are compositions over it and the dense solves.
"""
from __future__ import annotations

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as nx
from nx_rune import primitives as P
from nx_rune.frontend import linalg as la
from nx_rune.frontend.linalg._common import _matrix, mT
from nx_rune.frontend.linalg.decompositions import _check_finite
from nx_rune.primitives import bind
from nx_rune.typing import Array, ArrayLike

__all__ = ["solve_sylvester", "solve_continuous_lyapunov", "solve_discrete_lyapunov"]


def _mH(x):
    return mT(nx.conj(x)) if dtypes.is_complex(x.dtype) else mT(x)


def _common(arrays, names):
    """The operands in one float dtype, broadcast to one batch shape."""
    dt = dtypes.inexact_result_type(*[x.dtype for x in arrays])
    if dt == np.float16:
        dt = np.dtype(np.float32)
    arrays = [nx.astype(x, dt) if x.dtype != dt else x for x in arrays]
    if all(x.ndim == 2 for x in arrays):
        return arrays
    try:
        batch = np.broadcast_shapes(*[x.shape[:-2] for x in arrays])
    except ValueError:
        raise ValueError(f"{', '.join(names)}: batch dimensions of shapes "
                         f"{[x.shape for x in arrays]} cannot be broadcast together") from None
    return [nx.broadcast_to(x, batch + x.shape[-2:]) for x in arrays]


def solve_sylvester(a: ArrayLike, b: ArrayLike, q: ArrayLike) -> Array:
    """x solving a x + x b = q for a (..., m, m), b (..., n, n), q (..., m, n) (batches
    broadcast), SciPy's Bartels-Stewart.  Where a and -b share an eigenvalue (a singular
    equation) the values are SciPy's, huge or non-finite.  Differentiable in a, b and q
    (dx solves a dx + dx b = dq - da x - x db), any order; jittable and batched."""
    am = _matrix(a, "a", square=True)
    bm = _matrix(b, "b", square=True)
    qm = _matrix(q, "q")
    if qm.shape[-2:] != (am.shape[-1], bm.shape[-1]):
        raise ValueError(f"q: expected shape (..., {am.shape[-1]}, {bm.shape[-1]}) for a of "
                         f"shape {am.shape} and b of shape {bm.shape}, got {qm.shape}")
    for x, name in ((am, "a"), (bm, "b"), (qm, "q")):
        _check_finite(x, name)
    am, bm, qm = _common([am, bm, qm], ["a", "b", "q"])
    if qm.size == 0:
        return qm
    return bind(P.sylvester_p, am, bm, qm)


def solve_continuous_lyapunov(a: ArrayLike, q: ArrayLike) -> Array:
    """x solving a x + x a^H = q (``solve_sylvester(a, a^H, q)``); differentiable."""
    am = _matrix(a, "a", square=True)
    qm = _matrix(q, "q", square=True)
    if qm.shape[-1] != am.shape[-1]:
        raise ValueError(f"q: shape {qm.shape} does not match a's {am.shape}")
    am, qm = _common([am, qm], ["a", "q"])
    return solve_sylvester(am, _mH(am), qm)


def solve_discrete_lyapunov(a: ArrayLike, q: ArrayLike, method: str | None = None) -> Array:
    """x solving a x a^H - x + q = 0.  ``method``: 'direct' (the n^2 x n^2 Kronecker system,
    SciPy's default below n = 10) or 'bilinear' (the continuous equation of the bilinear
    transform, SciPy's default from n = 10).  Differentiable (compositions)."""
    am = _matrix(a, "a", square=True)
    qm = _matrix(q, "q", square=True)
    if qm.shape[-1] != am.shape[-1]:
        raise ValueError(f"q: shape {qm.shape} does not match a's {am.shape}")
    if method not in (None, "direct", "bilinear"):
        raise ValueError(f"method: must be None, 'direct' or 'bilinear', got {method!r}")
    am, qm = _common([am, qm], ["a", "q"])
    n = am.shape[-1]
    if method is None:
        method = "direct" if n < 10 else "bilinear"
    if method == "direct":
        ca = nx.conj(am) if dtypes.is_complex(am.dtype) else am
        # vec(a x a^H) = kron(a, conj(a)) vec(x) with row-major vec
        outer = nx.multiply(nx.reshape(am, am.shape[:-2] + (n, 1, n, 1)),
                            nx.reshape(ca, ca.shape[:-2] + (1, n, 1, n)))
        kron = nx.reshape(outer, am.shape[:-2] + (n * n, n * n))
        lhs = nx.subtract(la.eye_like(n * n, am.dtype), kron)
        x = la.solve(lhs, nx.reshape(qm, qm.shape[:-2] + (n * n, 1)))
        return nx.reshape(x, qm.shape)
    eye = la.eye_like(n, am.dtype)
    ah = _mH(am)
    ahi_inv = la.inv(nx.add(ah, eye))
    b = nx.matmul(nx.subtract(ah, eye), ahi_inv)
    c = nx.multiply(nx.matmul(nx.matmul(la.inv(nx.add(am, eye)), qm), ahi_inv), 2.0)
    return solve_continuous_lyapunov(_mH(b), nx.negative(c))
