"""``solve_banded``: SciPy's banded solve, differentiable: the band storage expanded to the
dense matrix (a gather, so the cotangent lands back on the band) and a dense LU solve."""
from __future__ import annotations

import functools
import operator

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend._core import promote
from nx_rune.frontend.linalg import solve as _la_solve
from nx_rune.typing import Array, ArrayLike

__all__ = ["solve_banded"]


@functools.lru_cache(maxsize=64)
def _dense_index(lower, upper, n):
    """For the dense (n, n) matrix, the flat index into the band storage (lower + upper + 1, n)
    of each entry, or the index one past its end (a zero) off the band:
    a[i, j] = ab[upper + i - j, j] (SciPy's layout)."""
    i, j = np.indices((n, n))
    r = upper + i - j
    inside = (r >= 0) & (r <= lower + upper)
    return np.where(inside, r * n + j, (lower + upper + 1) * n).ravel()


def solve_banded(l_and_u: tuple[int, int], ab: ArrayLike, b: ArrayLike, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """x solving a x = b for the banded matrix a given by its diagonals ``ab`` (shape
    (lower + upper + 1, n), ``l_and_u = (lower, upper)``: ab[upper + i - j, j] = a[i, j], SciPy's
    layout); b (n,) or (n, k...).  Computed as a dense solve (O(n^3): for small and moderate n);
    differentiable in ab and b.  ``overwrite_*`` and ``check_finite`` are accepted for SciPy's
    signature (nothing is overwritten)."""
    try:
        lower, upper = (operator.index(v) for v in l_and_u)
    except TypeError:
        raise TypeError(f"l_and_u: expected two ints (lower, upper), got {l_and_u!r}") from None
    if lower < 0 or upper < 0:
        raise ValueError(f"l_and_u: the band widths must be >= 0, got {(lower, upper)}")
    ab, b = promote(ab, b)
    if ab.dtype.kind not in "fc":
        ab, b = F.astype(ab, np.float64), F.astype(b, np.float64)
    if ab.ndim != 2 or ab.shape[0] != lower + upper + 1:
        raise ValueError(f"ab: expected shape ({lower + upper + 1}, n) for l_and_u = "
                         f"{(lower, upper)}, got {ab.shape}")
    n = ab.shape[1]
    if b.ndim < 1 or b.shape[0] != n:
        raise ValueError(f"b: expected a first axis of length {n} (ab's columns), got shape "
                         f"{b.shape}")
    flat = F.concatenate([F.reshape(ab, (-1,)), F.zeros((1,), ab.dtype)])
    a = F.reshape(F.take(flat, F.asarray(_dense_index(lower, upper, n))), (n, n))
    rhs = F.reshape(b, (n, -1))
    return F.reshape(_la_solve(a, rhs), b.shape)
