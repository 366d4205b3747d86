"""``nx.scipy.cluster.vq``: ``vq``, the nearest code of each observation, as
``jax.scipy.cluster.vq`` (and ``scipy.cluster.vq.vq``)."""
from __future__ import annotations

import numpy as np

from nx_rune import frontend as F
from nx_rune.typing import Array, ArrayLike

__all__ = ["vq"]


def vq(obs: ArrayLike, code_book: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:
    """For each observation (row of ``obs``, shape ``(M, N)``, or ``(M,)`` for scalars) the
    index of the nearest code (row of ``code_book``, ``(K, N)`` or ``(K,)``) by Euclidean
    distance, the first on ties, and that distance: ``(code, dist)``, both of shape ``(M,)``.
    ``check_finite`` is accepted and unused (as in JAX).  ``dist`` is differentiable."""
    del check_finite
    obs, code_book = F.asarray(obs), F.asarray(code_book)
    dt = np.result_type(obs.dtype, code_book.dtype)
    if dt.kind not in "fc":
        dt = F.asarray(1.0).dtype
    obs, code_book = F.astype(obs, dt), F.astype(code_book, dt)
    if obs.ndim != code_book.ndim:
        raise ValueError(f"vq: obs and code_book should have the same rank, got shapes "
                         f"{obs.shape} and {code_book.shape}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError(f"vq: obs and code_book must be 1-D or 2-D, got {obs.ndim}-D")
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: obs and code_book must have the same number of features, got "
                         f"shapes {obs.shape} and {code_book.shape}")
    if code_book.shape[0] == 0:
        raise ValueError("vq: code_book must hold at least one code")
    dist = F.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = F.argmin(dist, axis=-1)
    return code, F.take_along_axis(dist, code[:, None], axis=-1)[:, 0]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
