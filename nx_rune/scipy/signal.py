"""``nx.scipy.signal``: ``convolve``, ``correlate``, ``convolve2d``, ``correlate2d``,
``fftconvolve`` and ``detrend``, as ``scipy.signal``'s (and ``jax.scipy.signal``'s), and
``convolve_general``, autograd's generalisation over chosen axes, with axes contracted
(``dot_axes``) and the other axes kept as outer products.

The convolutions and correlations are computed directly (the sum over a strided window view of
the padded larger operand), in the operands' promoted dtype (ints stay ints, as SciPy's);
``fftconvolve`` through real (or complex) FFTs, in the promoted inexact dtype.  All are
differentiable in both operands, batchable and jittable.  The spectral estimates ``stft``,
``csd`` and ``welch`` are SciPy's (windowed segments, FFTs, SciPy's scalings), differentiable
in the signals; ``istft`` inverts ``stft`` by SciPy's weighted overlap-add.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nx_rune import dtypes
from nx_rune import fft as _fft
from nx_rune import frontend as F
from nx_rune.frontend._core import as_inexact as _as_inexact
from nx_rune.frontend._core import promote as _promote
from nx_rune.frontend.indexing import concrete_value as _concrete
from nx_rune.frontend.indexing import getitem as _getitem
from nx_rune.typing import Array, ArrayLike

__all__ = ["convolve", "convolve_general", "correlate", "fftconvolve", "convolve2d",
           "correlate2d", "detrend", "stft", "istft", "csd", "welch"]

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


def _flip_conj(x):
    """x reversed along every axis and conjugated (the kernel of a correlation), as a
    contiguous copy: the convolution flips its kernel again, and a product over a view
    flipped twice costs three times one over contiguous memory."""
    if x.ndim:
        x = F.flip(x, tuple(range(x.ndim)))
    x = F.conj(x) if dtypes.is_complex(x.dtype) else x
    return F.contiguous(x)


def correlate(in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto") -> Array:
    """The N-dimensional cross-correlation of ``in1`` and ``in2`` (same number of axes), as
    ``scipy.signal.correlate``: z[k] = sum_n in1[n + k] conj(in2[n]), that is ``convolve(in1,
    flip(conj(in2)), mode)``; ``mode`` "full", "valid" or "same" as ``convolve``'s, ``method``
    accepted for SciPy's signature.  The operands' promoted dtype; differentiable in both."""
    if mode not in _MODES:
        raise ValueError(f"mode: must be one of 'full', 'valid', 'same', got {mode!r}")
    a, b = _promote(in1, in2)
    return convolve(a, _flip_conj(b), mode, method)


def _swap_needed(s1, s2):
    """SciPy's rule for 'valid': in2 larger than in1 along every axis swaps them."""
    return all(x <= y for x, y in zip(s1, s2)) and any(x < y for x, y in zip(s1, s2))


def fftconvolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
                axes: int | tuple | list | None = None) -> Array:
    """The N-dimensional convolution of ``in1`` and ``in2`` through FFTs, as
    ``scipy.signal.fftconvolve``: ``mode`` "full", "valid" or "same" as ``convolve``'s, over
    ``axes`` (default: every axis; the other axes broadcast, an elementwise product).  Real
    operands take real FFTs (padded to a fast length).  Returns the promoted inexact dtype
    (ints: the default float); differentiable in both operands."""
    if mode not in _MODES:
        raise ValueError(f"mode: must be one of 'full', 'valid', 'same', got {mode!r}")
    a, b = _promote(in1, in2)
    a, b = _as_inexact(a), _as_inexact(b)
    if a.ndim != b.ndim:
        raise ValueError(f"in1 and in2: must have the same number of axes, got shapes "
                         f"{a.shape} and {b.shape}")
    if a.ndim == 0:
        return F.multiply(a, b)
    if axes is None:
        axes = list(range(a.ndim))
    else:
        axes = sorted(set(_axis_list([axes] if isinstance(axes, (int, np.integer))
                                     and not isinstance(axes, bool) else axes, a.ndim, "axes")))
    for ax in range(a.ndim):
        if ax not in axes and a.shape[ax] != b.shape[ax] and 1 not in (a.shape[ax], b.shape[ax]):
            raise ValueError(f"in1 and in2: axis {ax} is not convolved, so its sizes must "
                             f"broadcast, got {a.shape[ax]} and {b.shape[ax]}")
    if a.size == 0 or b.size == 0:
        raise ValueError("in1 and in2: fftconvolve needs non-empty operands")
    s1 = [a.shape[ax] for ax in axes]
    s2 = [b.shape[ax] for ax in axes]
    if mode == "valid":
        if _swap_needed(s1, s2):
            a, b, s1, s2 = b, a, s2, s1
        elif not all(x >= y for x, y in zip(s1, s2)):
            raise ValueError(f"in1 and in2: for mode 'valid' one must be at least as large as "
                             f"the other along every axis, got shapes {a.shape} and {b.shape}")
    full = [x + y - 1 for x, y in zip(s1, s2)]
    real = not dtypes.is_complex(a.dtype)
    # (SciPy is imported on first use, not with nx_rune)
    import scipy.fft as _sfft

    fshape = [_sfft.next_fast_len(n, real) for n in full]
    if real:
        prod = F.multiply(_fft.rfftn(a, fshape, axes), _fft.rfftn(b, fshape, axes))
        out = _fft.irfftn(prod, fshape, axes)
    else:
        out = _fft.ifftn(F.multiply(_fft.fftn(a, fshape, axes), _fft.fftn(b, fshape, axes)),
                         fshape, axes)
    if out.dtype != a.dtype:
        out = F.astype(out, a.dtype)
    if mode == "full":
        keep = full
        start = [0] * len(axes)
    else:
        keep = s1 if mode == "same" else [x - y + 1 for x, y in zip(s1, s2)]
        start = [(f - k) // 2 for f, k in zip(full, keep)]
    index = [slice(None)] * out.ndim
    for ax, st, k in zip(axes, start, keep):
        index[ax] = slice(st, st + k)
    return _getitem(out, tuple(index))


_BOUNDARIES = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap",
               "symm": "symmetric", "symmetric": "symmetric"}


def _two_d(name, in1, in2, mode, boundary, fillvalue):
    if mode not in _MODES:
        raise ValueError(f"mode: must be one of 'full', 'valid', 'same', got {mode!r}")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"boundary: must be 'fill', 'wrap' or 'symm', got {boundary!r}")
    a, b = _promote(in1, in2)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"in1 and in2: {name} takes 2-D arrays, got shapes {a.shape} and "
                         f"{b.shape}")
    fv = F.asarray(fillvalue)
    if fv.ndim != 0:
        raise ValueError(f"fillvalue: must be a scalar, got shape {fv.shape}")
    if mode == "valid" and not (all(x >= y for x, y in zip(a.shape, b.shape))
                                or all(x <= y for x, y in zip(a.shape, b.shape))):
        raise ValueError(f"in1 and in2: for mode 'valid' one must be at least as large as the "
                         f"other along every axis, got shapes {a.shape} and {b.shape}")
    return a, b, fv


def _pad_2d(a, b, mode, boundary, fillvalue, correlation):
    """in1 extended past its edges by ``boundary`` for the window positions of ``mode``
    ("full" or "same"), so that a 'valid' pass over it is SciPy's result.  SciPy centres
    correlate2d's 'same' window one sample later than convolve2d's for even kernel sizes."""
    pads = []
    for n in b.shape:
        k = n - 1
        if mode == "full":
            pads.append((k, k))
        elif correlation:
            pads.append((k - n // 2, n // 2))
        else:
            pads.append((k - k // 2, k // 2))
    kind = _BOUNDARIES[boundary]
    if kind == "constant":
        return F.pad(a, pads, constant_values=F.astype(fillvalue, a.dtype)
                     if not dtypes.is_complex(fillvalue.dtype) or dtypes.is_complex(a.dtype)
                     else fillvalue)
    return F.pad(a, pads, mode=kind)


def convolve2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill",
               fillvalue: ArrayLike = 0) -> Array:
    """The 2-D convolution of ``in1`` and ``in2``, as ``scipy.signal.convolve2d``: ``mode``
    "full", "valid" or "same" (``convolve``'s), ``boundary`` how in1 extends past its edges
    ("fill" with ``fillvalue``, "wrap" periodic, "symm" mirrored; no effect on "valid").
    The operands' promoted dtype (ints stay ints); differentiable in both operands."""
    a, b, fv = _two_d("convolve2d", in1, in2, mode, boundary, fillvalue)
    if mode == "valid" or (_BOUNDARIES[boundary] == "constant" and _is_zero(fv)):
        return convolve(a, b, mode)
    return convolve(_pad_2d(a, b, mode, boundary, fv, False), b, "valid")


def correlate2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill",
                fillvalue: ArrayLike = 0) -> Array:
    """The 2-D cross-correlation of ``in1`` and ``in2``, as ``scipy.signal.correlate2d``
    (z[k] = sum_n in1[n + k] conj(in2[n])); ``mode`` and ``boundary`` as ``convolve2d``'s, with
    SciPy's placement of the 'same' window (for even kernel sizes one sample later than
    ``correlate``'s) and, for 'valid' with in2 the larger, SciPy's result conj(correlate(in1,
    in2, 'valid')).  The operands' promoted dtype; differentiable in both operands."""
    a, b, fv = _two_d("correlate2d", in1, in2, mode, boundary, fillvalue)
    if mode == "valid":
        out = correlate(a, b, "valid")
        if _swap_needed(a.shape, b.shape) and dtypes.is_complex(out.dtype):
            out = F.conj(out)
        return out
    return convolve(_pad_2d(a, b, mode, boundary, fv, True), _flip_conj(b), "valid")


def _is_zero(v):
    c = _concrete(v)
    return c is not None and np.all(np.asarray(c) == 0)


_DETREND_TYPES = {"linear": "linear", "l": "linear", "constant": "constant", "c": "constant"}


def detrend(data: ArrayLike, axis: int = -1, type: str = "linear", bp: ArrayLike = 0,
            overwrite_data: bool = False) -> Array:
    """``data`` less its least-squares fit along ``axis``, as ``scipy.signal.detrend``:
    ``type`` "linear" (a line fitted to each piece between the breakpoints ``bp``, indices
    into the axis) or "constant" (the mean).  ``overwrite_data`` is accepted for SciPy's
    signature (arrays are immutable here).  The inexact dtype of data (ints: the default
    float); differentiable in data."""
    if type not in _DETREND_TYPES:
        raise ValueError(f"type: must be 'linear' or 'constant', got {type!r}")
    x = _as_inexact(F.asarray(data))
    if x.ndim == 0:
        raise ValueError("data: detrend needs at least one axis, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: must be an int, got {axis!r}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis: {axis} is out of range for data of shape {x.shape}")
    if _DETREND_TYPES[type] == "constant":
        return F.subtract(x, F.mean(x, axis=axis, keepdims=True))
    n = x.shape[axis]
    bpv = np.asarray(bp)
    if not np.issubdtype(bpv.dtype, np.integer) and not (
            np.issubdtype(bpv.dtype, np.floating) and np.all(bpv == np.round(bpv))):
        raise TypeError(f"bp: breakpoints must be integer indices, got {bp!r}")
    bpv = np.sort(np.unique(np.r_[0, bpv.astype(np.int64).ravel(), n]))
    if np.any(bpv > n) or np.any(bpv < 0):
        raise ValueError(f"bp: breakpoints must lie in [0, {n}] (the length of data along "
                         f"axis), got {bp!r}")
    y = F.moveaxis(x, axis, -1)
    pieces = []
    for lo, hi in zip(bpv[:-1], bpv[1:]):
        seg = _getitem(y, (Ellipsis, slice(int(lo), int(hi))))
        m = int(hi - lo)
        # the residual of the least-squares line over the piece: centred t and y, slope
        # sum(t y) / sum(t^2) (a piece of one sample fits exactly: residual 0)
        t = np.arange(m, dtype=np.float64) - (m - 1) / 2.0
        yc = F.subtract(seg, F.mean(seg, axis=-1, keepdims=True))
        tt = float(np.dot(t, t))
        if tt > 0:
            tc = F.astype(F.asarray(t), x.dtype if not dtypes.is_complex(x.dtype)
                          else np.float64 if x.dtype == np.complex128 else np.float32)
            slope = F.divide(F.sum(F.multiply(yc, tc), -1, keepdims=True), tt)
            yc = F.subtract(yc, F.multiply(slope, tc))
        pieces.append(yc)
    out = pieces[0] if len(pieces) == 1 else F.concatenate(pieces, axis=-1)
    return F.moveaxis(out, -1, axis)



# -- spectral estimates: stft, csd, welch --------------------------------------------------------

def _window(window, nperseg, length, dtype):
    """SciPy's _triage_segments: a named window (scipy.signal.get_window, periodic) of
    ``nperseg`` samples (256 by default, at most the signal's length), or a given 1-D window
    (its length is nperseg); the window as a constant of ``dtype``, and nperseg."""
    import scipy.signal as _ss

    if isinstance(window, (str, tuple)):
        nperseg = 256 if nperseg is None else nperseg
        nperseg = min(nperseg, length)
        win = _ss.get_window(window, nperseg)
    else:
        win = _concrete(F.asarray(window))
        if win is None:
            raise ValueError("window: needs concrete values (a name or an array, not a traced "
                             "value)")
        win = np.asarray(win)
        if win.ndim != 1:
            raise ValueError(f"window: must be 1-D, got shape {win.shape}")
        if length < win.shape[0]:
            raise ValueError(f"window: longer ({win.shape[0]}) than the signal ({length})")
        if nperseg is None:
            nperseg = win.shape[0]
        elif nperseg != win.shape[0]:
            raise ValueError(f"nperseg: {nperseg} differs from the window's length "
                             f"{win.shape[0]}")
    real = np.float64 if dtypes.is_complex(dtype) and dtype == np.complex128 else (
        np.float32 if dtypes.is_complex(dtype) else dtype)
    return np.asarray(win, dtype=real), int(nperseg)


def _extend(x, n, boundary):
    """x extended by n samples at both ends of its last axis: SciPy's even_ext (mirror without
    the edge), odd_ext (2 edge - mirror), const_ext (the edge), zero_ext."""
    if n == 0 or boundary is None:
        return x
    if boundary == "zeros":
        return F.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)])
    if boundary == "constant":
        return F.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode="edge")
    even = F.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode="reflect")
    if boundary == "even":
        return even
    # odd: 2 x[0] - x[n:0:-1] before, 2 x[-1] - x[-2:-n-2:-1] after
    edge = F.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode="edge")
    body = F.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)])
    inner = F.pad(F.zeros_like(x), [(0, 0)] * (x.ndim - 1) + [(n, n)], constant_values=1.0)
    return F.add(body, F.multiply(F.subtract(F.multiply(edge, 2.0), even), inner))


def _spectral(name, x, y, fs, window, nperseg, noverlap, nfft, detrend_, return_onesided,
              scaling, axis, mode, boundary, padded):
    """SciPy's _spectral_helper: (freqs, times, result (..., nfreq, nseg) with the signal's
    axis replaced by the frequencies and the segments last)."""
    if boundary not in (None, "zeros", "even", "odd", "constant"):
        raise ValueError(f"boundary: must be 'even', 'odd', 'constant', 'zeros' or None, got "
                         f"{boundary!r}")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"scaling: must be 'density' or 'spectrum', got {scaling!r}")
    same = y is None
    xs = [_as_inexact(F.asarray(x))] + ([] if same else [_as_inexact(F.asarray(y))])
    xs = list(_promote(*xs))
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError(f"x: {name} needs at least one axis, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: must be an int, got {axis!r}")
    if not -nd <= axis < nd:
        raise ValueError(f"axis: {axis} is out of range for x of shape {xs[0].shape}")
    xs = [F.moveaxis(v, int(axis), -1) for v in xs]
    if not same and xs[0].shape[-1] != xs[1].shape[-1]:
        # the shorter signal padded with zeros, as SciPy's
        n = max(xs[0].shape[-1], xs[1].shape[-1])
        xs = [F.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, n - v.shape[-1])]) for v in xs]
    if nperseg is not None and int(nperseg) < 1:
        raise ValueError(f"nperseg: must be a positive integer, got {nperseg}")
    dtype = xs[0].dtype
    win, nperseg = _window(window, None if nperseg is None else int(nperseg),
                           xs[0].shape[-1], dtype)
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError(f"nfft: must be at least nperseg ({nperseg}), got {nfft}")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"noverlap: must be less than nperseg ({nperseg}), got {noverlap}")
    step = nperseg - noverlap
    xs = [_extend(v, nperseg // 2, boundary) for v in xs]
    if padded:
        extra = (-(xs[0].shape[-1] - nperseg) % step) % nperseg
        xs = [F.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, extra)]) for v in xs]
    length = xs[0].shape[-1]
    nseg = (length - nperseg) // step + 1
    onesided = bool(return_onesided) and not dtypes.is_complex(dtype)
    index = (np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]).astype(np.int32)
    w = F.asarray(win)

    def segments_fft(v):
        seg = F.take(v, F.asarray(index), axis=-1)                  # (..., nseg, nperseg)
        if callable(detrend_):
            seg = detrend_(seg)
        elif detrend_:
            seg = detrend(seg, axis=-1, type=detrend_)
        seg = F.multiply(seg, w)
        return _fft.rfft(seg, nfft, -1) if onesided else _fft.fft(seg, nfft, -1)

    wsum = float(win.sum())
    scale = 1.0 / (float(fs) * float((win * win).sum())) if scaling == "density" \
        else 1.0 / wsum ** 2
    if mode == "stft":
        scale = float(np.sqrt(scale))
    res = segments_fft(xs[0])
    if mode == "psd":
        other = res if same else segments_fft(xs[1])
        res = F.multiply(F.conj(res), other)
    res = F.multiply(res, scale)
    if onesided and mode == "psd":
        nfreq = res.shape[-1]
        factor = np.full(nfreq, 2.0)
        factor[0] = 1.0
        if nfft % 2 == 0:
            factor[-1] = 1.0
        res = F.multiply(res, F.asarray(factor.astype(win.dtype)))
    freqs = np.fft.rfftfreq(nfft, 1.0 / float(fs)) if onesided else \
        np.fft.fftfreq(nfft, 1.0 / float(fs))
    times = np.arange(nperseg / 2, length - nperseg / 2 + 1, step) / float(fs)
    if boundary is not None:
        times = times - (nperseg / 2) / float(fs)
    res = F.moveaxis(res, -1, -2)                                   # (..., nfreq, nseg)
    out_axis = int(axis) % nd
    res = F.moveaxis(res, -2, out_axis) if out_axis != nd - 1 else res
    # the frequencies and times in float64 whatever the data's dtype (SciPy's)
    return freqs.astype(np.float64), times.astype(np.float64), res


def stft(x: ArrayLike, fs: float = 1.0, window: str | tuple | ArrayLike = "hann",
         nperseg: int = 256, noverlap: int | None = None, nfft: int | None = None,
         detrend: bool | str | Callable[..., Any] = False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1,
         scaling: str = "spectrum") -> tuple[Array, Array, Array]:
    """The short-time Fourier transform, as ``scipy.signal.stft``: (frequencies, segment
    times, Zxx), Zxx with x's ``axis`` replaced by the frequencies and the segments as a new
    last axis.  ``window`` a name (``scipy.signal.get_window``'s, periodic) or a 1-D array;
    ``nperseg`` samples per segment (at most x's length), ``noverlap`` (nperseg // 2),
    ``nfft`` (nperseg); ``detrend`` False, "constant", "linear" or a function of the segments;
    ``boundary`` the extension at both ends ("zeros", "even", "odd", "constant" or None);
    ``padded`` zeros to a whole number of segments; ``scaling`` "spectrum" (1 / sum(window))
    or "psd" (1 / sqrt(fs sum(window**2))).  Complex output (complex64 for float32 input);
    differentiable in x."""
    if scaling not in ("spectrum", "psd"):
        raise ValueError(f"scaling: must be 'spectrum' or 'psd', got {scaling!r}")
    freqs, times, z = _spectral("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                                return_onesided, "density" if scaling == "psd" else "spectrum",
                                axis, "stft", boundary, padded)
    return F.asarray(freqs), F.asarray(times), z


def csd(x: ArrayLike, y: ArrayLike | None, fs: float = 1.0,
        window: str | tuple | ArrayLike = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None,
        detrend: bool | str | Callable[..., Any] = "constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Array, Array]:
    """The cross power spectral density of x and y by Welch's method, as
    ``scipy.signal.csd``: (frequencies, Pxy), the segments' conj(X) Y scaled ("density":
    1 / (fs sum(window**2)), "spectrum": 1 / sum(window)**2; one-sided: doubled but at 0 and
    Nyquist) and averaged ("mean", or "median" with SciPy's bias correction).  ``y`` None: x
    itself (JAX's).  ``nperseg`` defaults to 256 (at most the length), ``noverlap`` to half of
    it, ``detrend`` to "constant"; no boundary extension or padding.  Complex output;
    differentiable in x and y."""
    if average not in ("mean", "median"):
        raise ValueError(f"average: must be 'mean' or 'median', got {average!r}")
    freqs, _, p = _spectral("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling, axis, "psd", None, False)
    # p (..., nfreq, nseg) with the frequencies at x's axis: the segments are last
    if p.shape[-1] > 1:
        if average == "median":
            n = p.shape[-1]
            ii = 2 * np.arange(1.0, (n - 1) // 2 + 1)
            bias = float(1 + np.sum(1.0 / (ii + 1) - 1.0 / ii))
            med = F.median(F.real(p), axis=-1)
            if dtypes.is_complex(p.dtype):
                med = F.add(F.astype(med, p.dtype),
                            F.multiply(F.astype(F.median(F.imag(p), axis=-1), p.dtype), 1j))
            p = F.divide(med, bias)
        else:
            p = F.mean(p, axis=-1)
    else:
        p = F.reshape(p, p.shape[:-1])
    return F.asarray(freqs), p


def welch(x: ArrayLike, fs: float = 1.0, window: str | tuple | ArrayLike = "hann",
          nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None,
          detrend: bool | str | Callable[..., Any] = "constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Array, Array]:
    """The power spectral density of x by Welch's method, as ``scipy.signal.welch``: the real
    part of ``csd(x, x, ...)`` (same arguments).  Real output in x's real dtype;
    differentiable in x."""
    freqs, p = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                   scaling, axis, average)
    return freqs, F.real(p)



def _overlap_add(segments, step):
    """sum over k of segment k (..., nseg, nperseg) placed at offset k step: the segments cut
    into pieces of ``step`` samples, each piece index j a shifted flat sum (no scatter)."""
    nseg, nperseg = segments.shape[-2], segments.shape[-1]
    pieces = -(-nperseg // step)
    lead = [(0, 0)] * (segments.ndim - 1)
    seg = F.pad(segments, lead + [(0, pieces * step - nperseg)])
    seg = F.reshape(seg, segments.shape[:-2] + (nseg, pieces, step))
    total = None
    for j in range(pieces):
        block = F.reshape(F.take(seg, j, axis=-2), segments.shape[:-2] + (nseg * step,))
        block = F.pad(block, lead[1:] + [(j * step, (pieces - 1 - j) * step)])
        total = block if total is None else F.add(total, block)
    assert total is not None
    return _getitem(total, (Ellipsis, slice(0, nperseg + (nseg - 1) * step)))


def istft(Zxx: ArrayLike, fs: float = 1.0, window: str | tuple | ArrayLike = "hann",
          nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None,
          input_onesided: bool = True, boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2, scaling: str = "spectrum") -> tuple[Array, Array]:
    """The inverse short-time Fourier transform, as ``scipy.signal.istft``: (times, x) from
    the segments' spectra ``Zxx`` (frequencies along ``freq_axis``, segments along
    ``time_axis``; one-sided unless ``input_onesided`` is False), by inverse FFTs and the
    window-weighted overlap-add divided by the summed squared window (where above 1e-10).
    ``nperseg`` defaults to the spectra's length (2 (nfreq - 1) one-sided), ``noverlap`` to
    half of it; ``boundary`` drops the nperseg // 2 samples ``stft`` added at each end;
    ``scaling`` as ``stft``'s.  x is real for one-sided input; differentiable in Zxx.  The
    times are SciPy's: arange(x.shape[0]) / fs (the sample times for a 1-D signal; for
    batched signals SciPy counts the first axis, and so does this)."""
    if scaling not in ("spectrum", "psd"):
        raise ValueError(f"scaling: must be 'spectrum' or 'psd', got {scaling!r}")
    z = F.asarray(Zxx)
    z = z if dtypes.is_complex(z.dtype) else F.astype(
        z, np.complex64 if z.dtype == np.float32 else np.complex128)
    if z.ndim < 2:
        raise ValueError(f"Zxx: needs at least two axes (frequencies, segments), got shape "
                         f"{z.shape}")
    fa, ta = int(freq_axis) % z.ndim, int(time_axis) % z.ndim
    if fa == ta:
        raise ValueError("freq_axis and time_axis: must differ")
    outer = [i for i in range(z.ndim) if i not in (fa, ta)]
    z = F.transpose(z, outer + [fa, ta])                  # (..., nfreq, nseg)
    nseg = z.shape[-1]
    n_default = 2 * (z.shape[-2] - 1) if input_onesided else z.shape[-2]
    if nperseg is None:
        nperseg = n_default
    elif int(nperseg) < 1:
        raise ValueError(f"nperseg: must be a positive integer, got {nperseg}")
    nperseg = int(nperseg)
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    elif int(nfft) < nperseg:
        raise ValueError(f"nfft: must be at least nperseg ({nperseg}), got {nfft}")
    nfft = int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"noverlap: must be less than nperseg ({nperseg}), got {noverlap}")
    step = nperseg - noverlap
    real = np.float32 if z.dtype == np.complex64 else np.float64
    win: np.ndarray
    if isinstance(window, (str, tuple)):
        import scipy.signal as _ss
        win = np.asarray(_ss.get_window(window, nperseg), dtype=real)
    else:
        wv = _concrete(F.asarray(window))
        if wv is None:
            raise ValueError("window: needs concrete values (a name or an array)")
        win = np.asarray(wv, dtype=real)
        if win.ndim != 1 or win.shape[0] != nperseg:
            raise ValueError(f"window: must be 1-D of nperseg = {nperseg} samples, got shape "
                             f"{win.shape}")
    segs = _fft.irfft(z, nfft, -2) if input_onesided else _fft.ifft(z, nfft, -2)
    segs = _getitem(segs, (Ellipsis, slice(0, nperseg), slice(None)))
    factor = float(win.sum()) if scaling == "spectrum" else \
        float(np.sqrt(float(fs) * float((win * win).sum())))
    segs = F.multiply(F.moveaxis(segs, -1, -2), F.asarray(win * factor))   # (..., nseg, nperseg)
    x = _overlap_add(segs, step)
    norm = np.zeros(nperseg + (nseg - 1) * step)
    for k in range(nseg):
        norm[k * step:k * step + nperseg] += win.astype(np.float64) ** 2
    if boundary:
        cut = nperseg // 2
        x = _getitem(x, (Ellipsis, slice(cut, x.shape[-1] - cut)))
        norm = norm[cut:len(norm) - cut]
    norm = np.where(norm > 1e-10, norm, 1.0).astype(real)
    x = F.divide(x, F.asarray(norm))
    if input_onesided and dtypes.is_complex(x.dtype):
        x = F.real(x)
    if x.ndim > 1 and ta != z.ndim - 1:
        x = F.moveaxis(x, -1, ta - 1 if fa < ta else ta)
    # SciPy's (and JAX's) times count the output's first axis, the samples only for 1-D x
    times = np.arange(x.shape[0]) / float(fs)
    return F.asarray(times.astype(np.float64)), x


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
