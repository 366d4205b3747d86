"""NumPy's ``convolve`` and ``correlate`` of two 1-D arrays (``jax.numpy``'s signatures), on
``nx.scipy.signal``'s direct convolution: differentiable in both operands, batchable and
jittable."""
from __future__ import annotations

from typing import Any

from nx_rune import frontend as F
from nx_rune.frontend._core import operand as _operand
from nx_rune.scipy import signal as _signal
from nx_rune.typing import Array, ArrayLike

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")


def _vectors(name: str, a: ArrayLike, v: ArrayLike, mode: str) -> tuple[Array, Array]:
    a, v = _operand(a), _operand(v)
    for arg, x in (("a", a), ("v", v)):
        if x.ndim != 1:
            raise ValueError(f"{arg}: {name} takes 1-D arrays, got shape {x.shape}")
        if x.shape[0] == 0:
            raise ValueError(f"{arg}: {name} of an empty array")
    if mode not in _MODES:
        raise ValueError(f"mode: must be one of {_MODES}, got {mode!r}")
    return a, v


def _cast(out: Array, preferred_element_type: Any) -> Array:
    return out if preferred_element_type is None else F.astype(out, preferred_element_type)


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Array:
    """The discrete linear convolution of the 1-D arrays a (n,) and v (m,), NumPy's: mode
    "full" (n + m - 1 values), "same" (max(n, m), centred as NumPy's) or "valid"
    (max(n, m) - min(n, m) + 1).  The operands' promoted dtype (ints stay ints);
    ``precision`` is accepted and ignored, ``preferred_element_type`` casts the result.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.convolve(nx.asarray([1.0, 2.0, 1.0]), nx.ones(4))
    Tensor([1., 3., 4., 4., 3., 1.], dtype=float32)
    """
    a, v = _vectors("convolve", a, v, mode)
    if v.shape[0] > a.shape[0]:      # NumPy convolves the longer with the shorter
        a, v = v, a
    return _cast(_signal.convolve(a, v, mode=mode), preferred_element_type)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """The cross-correlation of the 1-D arrays a (n,) and v (m,), NumPy's:
    c[k] = sum_n a[n + k] conj(v[n]), in mode "valid" (the default), "same" or "full" (lengths
    as ``convolve``'s).  The operands' promoted dtype; ``precision`` is accepted and ignored,
    ``preferred_element_type`` casts the result.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.correlate(nx.asarray([1.0, 2.0, 3.0]), nx.asarray([0.0, 1.0]))
    Tensor([2., 3.], dtype=float32)
    """
    a, v = _vectors("correlate", a, v, mode)
    if v.shape[0] > a.shape[0]:
        # NumPy's rule for a shorter a: correlate(v, a) reversed and conjugated
        out = F.flip(_signal.correlate(v, a, mode=mode), 0)
        if out.dtype.kind == "c":
            out = F.conj(out)
        return _cast(out, preferred_element_type)
    return _cast(_signal.correlate(a, v, mode=mode), preferred_element_type)
