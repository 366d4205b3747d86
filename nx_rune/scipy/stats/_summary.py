"""Summary statistics of ``nx.scipy.stats`` beside the distributions: ``sem``, as
``jax.scipy.stats.sem`` (SciPy's values)."""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.typing import Array, ArrayLike

__all__ = ["sem"]


def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """The standard error of the mean, std(a, ddof) / sqrt(n), along ``axis`` (None: of the
    flattened array), as ``scipy.stats.sem``.  ``nan_policy``: "propagate" (nan where the
    slice holds one) or "omit" (the nans left out, n their count; "raise" is not supported,
    as in JAX: it would need the values).  The inexact dtype of a; differentiable in a."""
    if nan_policy not in ("propagate", "omit"):
        raise ValueError(f"nan_policy: must be 'propagate' or 'omit', got {nan_policy!r}")
    x = _as_inexact(F.asarray(a))
    if axis is None:
        x, axis = F.reshape(x, (-1,)), 0
    if nan_policy == "omit":
        n = F.sum(F.astype(F.logical_not(F.isnan(x)), x.dtype), axis=axis, keepdims=keepdims)
        sd = F.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims)
    else:
        n = x.shape[axis]
        sd = F.std(x, axis=axis, ddof=ddof, keepdims=keepdims)
    return F.divide(sd, F.sqrt(n) if not isinstance(n, int) else n ** 0.5)
