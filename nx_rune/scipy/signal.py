"""``nx.scipy.signal``: ``convolve``, as ``scipy.signal.convolve`` (and ``jax.scipy.signal``),
and ``convolve_general``, autograd's generalisation over chosen axes, with axes contracted
(``dot_axes``) and the other axes kept as outer products.

Computed directly (the sum over a strided window view of the padded larger operand: no FFT),
in the operands' promoted dtype; differentiable in both operands (the view, the flip and the
contraction are all differentiable), batchable and jittable.
"""
from __future__ import annotations

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend._core import promote as _promote
from nx_rune.typing import Array, ArrayLike

__all__ = ["convolve", "convolve_general"]

_MODES = ("full", "valid", "same")


def convolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto") -> Array:
    """The N-dimensional convolution of ``in1`` and ``in2`` (same number of axes), as
    ``scipy.signal.convolve``: ``mode`` "full" (every overlap: n1 + n2 - 1 per axis), "valid"
    (complete overlaps only: |n1 - n2| + 1; one operand must be at least as large as the other
    along every axis) or "same" (``in1``'s shape, centred as SciPy's).  ``method`` is accepted
    for SciPy's signature ("auto", "direct", "fft"); the sum is computed directly."""
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"method: must be 'auto', 'direct' or 'fft', got {method!r}")
    a, b = _promote(in1, in2)
    if a.ndim != b.ndim:
        raise ValueError(f"in1 and in2: must have the same number of axes, got shapes "
                         f"{a.shape} and {b.shape}")
    if a.ndim == 0:
        return F.multiply(a, b)
    if mode == "valid":
        ge = all(x >= y for x, y in zip(a.shape, b.shape))
        le = all(x <= y for x, y in zip(a.shape, b.shape))
        if not (ge or le):
            raise ValueError(f"in1 and in2: for mode 'valid' one must be at least as large as "
                             f"the other along every axis, got shapes {a.shape} and {b.shape}")
    axes = tuple(range(a.ndim))
    return convolve_general(a, b, axes=(axes, axes), mode=mode)


def _axis_list(axes, ndim, name):
    out = []
    for ax in axes:
        if isinstance(ax, bool) or not isinstance(ax, (int, np.integer)):
            raise TypeError(f"{name}: axes must be ints, got {ax!r}")
        if not -ndim <= ax < ndim:
            raise ValueError(f"{name}: axis {ax} is out of range for {ndim} axes")
        out.append(int(ax) % ndim)
    return out


def convolve_general(A: ArrayLike, B: ArrayLike, axes=None, dot_axes=((), ()),
                     mode: str = "full") -> Array:
    """autograd's ``convolve``: ``A`` convolved with ``B`` along the paired axes
    ``axes = (A's, B's)`` (default: every axis of A with the same of B), summed over the paired
    ``dot_axes`` (a tensordot), and an outer product over the remaining axes.  The result's axes:
    A's remaining ones, then B's, then the convolved ones (sizes as ``convolve``'s ``mode``:
    "full", "valid" or "same"; "same" keeps A's sizes)."""
    if mode not in _MODES:
        raise ValueError(f"mode: must be one of 'full', 'valid', 'same', got {mode!r}")
    A, B = _promote(A, B)
    if axes is None:
        axes = (list(range(A.ndim)), list(range(A.ndim)))
    if len(axes) != 2 or len(dot_axes) != 2:
        raise ValueError(f"axes and dot_axes: each a pair (A's axes, B's axes), got {axes!r} "
                         f"and {dot_axes!r}")
    axes = (_axis_list(axes[0], A.ndim, "axes"), _axis_list(axes[1], B.ndim, "axes"))
    dot_axes = (_axis_list(dot_axes[0], A.ndim, "dot_axes"),
                _axis_list(dot_axes[1], B.ndim, "dot_axes"))
    if len(axes[0]) != len(axes[1]) or len(dot_axes[0]) != len(dot_axes[1]):
        raise ValueError(f"axes and dot_axes: A's and B's lists must pair up, got {axes!r} and "
                         f"{dot_axes!r}")
    for (ia, ib) in zip(*dot_axes):
        if A.shape[ia] != B.shape[ib]:
            raise ValueError(f"dot_axes: A's axis {ia} (size {A.shape[ia]}) and B's axis {ib} "
                             f"(size {B.shape[ib]}) differ in size")
    return _convolve(A, B, axes, dot_axes, mode)


def _convolve(A, B, axes, dot_axes, mode):
    # the larger operand along the convolved axes slides (B here): swap when A is larger,
    # and put the result's axes back in A-first order
    if any(B.shape[ib] < A.shape[ia] for ia, ib in zip(*axes)):
        if mode == "valid" and not all(B.shape[ib] <= A.shape[ia] for ia, ib in zip(*axes)):
            raise ValueError("A and B: for mode 'valid' one must be at least as large as the "
                             "other along every convolved axis")
        if mode == "valid" or (mode == "full" and B.size <= A.size):
            i1 = B.ndim - len(dot_axes[1]) - len(axes[1])
            i2 = i1 + A.ndim - len(dot_axes[0]) - len(axes[0])
            i3 = i2 + len(axes[0])
            out = _convolve(B, A, axes[::-1], dot_axes[::-1], mode)
            return F.transpose(out, list(range(i1, i2)) + list(range(i1)) + list(range(i2, i3)))
    same = mode == "same"
    if same:
        # 'same' keeps the first operand's sizes: it is the one padded and slid over
        A, B, axes, dot_axes = B, A, axes[::-1], dot_axes[::-1]
    if mode != "valid":
        pads = [(0, 0)] * B.ndim
        for ia, ib in zip(*axes):
            k = A.shape[ia] - 1
            pads[ib] = (k, k) if mode == "full" else (k - k // 2, k // 2)
        B = F.pad(B, pads)
    # windows of B: B's convolved axes become window axes of A's sizes, new trailing axes the
    # window positions (strides in elements of the C-ordered B)
    strides = [int(s) for s in np.cumprod((1,) + B.shape[:0:-1])[::-1]]
    view_shape, view_strides = list(B.shape), list(strides)
    for ia, ib in zip(*axes):
        view_shape.append(abs(B.shape[ib] - A.shape[ia]) + 1)
        view_strides.append(strides[ib])
        view_shape[ib] = A.shape[ia]
    B_view = F.as_strided(B, view_shape, view_strides)
    A_flip = F.flip(A, tuple(axes[0])) if axes[0] else A
    contract = (list(axes[0]) + list(dot_axes[0]), list(axes[1]) + list(dot_axes[1]))
    if same:
        i1 = B.ndim - len(dot_axes[1]) - len(axes[1])
        i2 = i1 + len(axes[0])
        i3 = i2 + A.ndim - len(dot_axes[0]) - len(axes[0])
        out = F.tensordot(B_view, A_flip, (contract[1], contract[0]))
        return F.transpose(out, list(range(i1)) + list(range(i2, i3)) + list(range(i1, i2)))
    return F.tensordot(A_flip, B_view, contract)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
