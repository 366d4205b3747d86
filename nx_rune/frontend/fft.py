"""Discrete Fourier transforms (``nx.fft``): NumPy's functions and signatures, the Array API
standard's fft extension.

Three linear primitives do the work: ``fft`` (complex to complex over given axes, either
direction), ``rfft`` (real to the half spectrum) and ``irfft`` (half spectrum to real), each
with NumPy's ``norm`` ("backward": no scaling forward and 1/n inverse; "ortho": 1/sqrt(n) both
ways; "forward": 1/n forward and none inverse).  A requested length ``n`` (or ``s``) pads the
input with zeros or trims it before the primitive, so derivatives flow through that too.
``hfft``/``ihfft`` are ``irfft``/``rfft`` of the conjugate with the opposite norm, as NumPy
defines them.

Dtypes: complex64 stays complex64 and complex128 complex128; real input of fft/ifft becomes
complex of its precision (float16, ints and bools: complex64; float64 and 64-bit ints:
complex128).  rfft/ihfft take real input only (TypeError for complex) and give complex of its
precision; irfft/hfft give the real dtype of the input's precision.
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune._kernels.view import normalize_axis
from nx_rune.frontend import elementwise
from nx_rune.frontend._core import as_inexact, astype, const, operand
from nx_rune.frontend.arrangement import roll
from nx_rune.frontend.elementwise import divide
from nx_rune.frontend.movement import pad, shrink
from nx_rune.frontend.products import conjugated
from nx_rune.primitives import bind
from nx_rune.typing import Array, ArrayLike, DTypeLike

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# -- argument handling ---------------------------------------------------------------------

def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"norm: expected 'backward', 'ortho', 'forward' or None, got {norm!r}")
    return norm


def _int(value, name):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected an int, got {value!r}") from None


def _length(n, name):
    n = _int(n, name)
    if n < 1:
        raise ValueError(f"{name}: invalid number of data points ({n}); it must be >= 1")
    return n


def _complex_dtype(dt):
    return dtypes.complex128 if dt in (dtypes.float64, dtypes.complex128) else dtypes.complex64


def _real_dtype(dt):
    return dtypes.float64 if dt in (dtypes.float64, dtypes.complex128) else dtypes.float32


def _as_complex(a):
    """``a`` as a complex tensor of its precision."""
    x = as_inexact(operand(a))
    return x if dtypes.is_complex(x.dtype) else astype(x, _complex_dtype(x.dtype))


def _as_real(a, name):
    """``a`` as a float32/float64 tensor; TypeError for complex input."""
    x = operand(a)
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"a: {name} needs real input, got dtype {x.dtype} (use fft for complex "
                        f"input)")
    x = as_inexact(x)
    return x if x.dtype in (dtypes.float32, dtypes.float64) else astype(x, dtypes.float32)


def _resized(x, axis, n):
    """``x`` trimmed or zero-padded to length ``n`` along ``axis``."""
    m = x.shape[axis]
    if n == m:
        return x
    if n < m:
        lim = [(0, d) for d in x.shape]
        lim[axis] = (0, n)
        return shrink(x, lim)
    cfg = [(0, 0)] * x.ndim
    cfg[axis] = (0, n - m)
    return pad(x, cfg)


def _one_axis(x, n, axis, name):
    """(axis as a non-negative int, the transform length n: x's length there when None)."""
    ax = normalize_axis(_int(axis, "axis"), x.ndim)
    if n is None:
        n = x.shape[ax]
        if n < 1:
            raise ValueError(f"a: invalid number of data points ({n}) along axis {axis} "
                             f"for {name}")
        return ax, n
    return ax, _length(n, "n")


def _axes_and_sizes(x, s, axes, name, halved_last=False):
    """NumPy's resolution of ``s`` and ``axes`` for the n-d transforms: (axes as a tuple of
    distinct non-negative ints, one length per axis).  axes None: all axes, or the last
    len(s) axes when s is given.  An entry -1 of s means the input's length.  With
    ``halved_last`` (irfftn) the default length of the last axis is 2 * (m - 1)."""
    if s is not None:
        if isinstance(s, (int, np.integer)) or not hasattr(s, "__len__"):
            raise TypeError(f"s: expected a sequence of ints, got {s!r}")
        s = [_int(v, "s") for v in s]
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
        if s is not None and len(s) > x.ndim:
            raise ValueError(f"s: {len(s)} lengths for a {x.ndim}-d input")
    else:
        if isinstance(axes, (int, np.integer)):
            raise TypeError(f"axes: expected a sequence of ints, got {axes!r}")
        axes = tuple(normalize_axis(_int(a, "axes"), x.ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes: repeated axis in {axes} ({name} transforms each axis once)")
    if s is None:
        sizes = [x.shape[a] for a in axes]
        if halved_last and axes:
            sizes[-1] = 2 * (sizes[-1] - 1)
    else:
        if len(s) != len(axes):
            raise ValueError(f"s: {len(s)} lengths for {len(axes)} axes {axes}")
        sizes = []
        for i, (v, a) in enumerate(zip(s, axes)):
            if v == -1:
                v = 2 * (x.shape[a] - 1) if halved_last and i == len(axes) - 1 else x.shape[a]
            sizes.append(v)
    for v in sizes:
        if v < 1:
            raise ValueError(f"s: invalid number of data points ({v}) for {name}; each length "
                             f"must be >= 1")
    return axes, sizes


def real_part(z):
    """The real part of a complex ``z`` (float of its precision), differentiable."""
    return elementwise.real(z)


# -- complex transforms --------------------------------------------------------------------

def _c2c(a, n, axis, norm, inverse, name):
    x = _as_complex(a)
    ax, n = _one_axis(x, n, axis, name)
    return bind(P.fft_p, _resized(x, ax, n), axes=(ax,), inverse=inverse, norm=_norm(norm))


def _c2c_n(a, s, axes, norm, inverse, name):
    x = _as_complex(a)
    axes, sizes = _axes_and_sizes(x, s, axes, name)
    for ax, n in zip(axes, sizes):
        x = _resized(x, ax, n)
    return bind(P.fft_p, x, axes=axes, inverse=inverse, norm=_norm(norm))


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-d discrete Fourier transform along ``axis`` (NumPy's ``fft.fft``).

    a: any shape (ndim >= 1), complex (real input becomes complex of its precision).  n: the
    transform length (a is trimmed or zero-padded along axis; default its length).  norm:
    "backward" (default, also None), "ortho" or "forward".  Returns a's shape with n along
    axis; complex64 or complex128.
    """
    return _c2c(a, n, axis, norm, False, "fft")


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-d inverse discrete Fourier transform along ``axis`` (1/n scaling with the default
    norm "backward").  Arguments, shapes and dtypes as ``fft``."""
    return _c2c(a, n, axis, norm, True, "ifft")


def fftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    """The n-d discrete Fourier transform over ``axes`` (NumPy's ``fft.fftn``).

    s: one length per transformed axis (trim or zero-pad; -1 keeps the input's length).
    axes: distinct axes (ValueError for a repeated one); None: all axes, or the last len(s)
    when s is given.  norm as ``fft`` (the scale uses the product of the lengths).  Returns a's
    shape with s along axes; complex64 or complex128.
    """
    return _c2c_n(a, s, axes, norm, False, "fftn")


def ifftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-d inverse discrete Fourier transform over ``axes``.  Arguments, shapes and dtypes
    as ``fftn``."""
    return _c2c_n(a, s, axes, norm, True, "ifftn")


def fft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Array:
    """``fftn`` over the last two axes by default (a: ndim >= 2)."""
    return _c2c_n(a, s, axes, norm, False, "fft2")


def ifft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """``ifftn`` over the last two axes by default (a: ndim >= 2)."""
    return _c2c_n(a, s, axes, norm, True, "ifft2")


# -- real transforms -----------------------------------------------------------------------

def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-d discrete Fourier transform of real input: its non-negative frequencies.

    a: real (TypeError for complex; ints and float16 become float32), ndim >= 1.  n: the
    input length used (trim or zero-pad; default a's length along axis).  norm as ``fft``.
    Returns a's shape with n // 2 + 1 along axis; complex64 (float32 input) or complex128.
    """
    x = _as_real(a, "rfft")
    ax, n = _one_axis(x, n, axis, "rfft")
    return bind(P.rfft_p, _resized(x, ax, n), axes=(ax,), norm=_norm(norm))


def _c2r(x, n, axis, norm, name):
    ax = normalize_axis(_int(axis, "axis"), x.ndim)
    if n is None:
        n = 2 * (x.shape[ax] - 1)
        if n < 1:
            raise ValueError(f"a: invalid number of data points ({n}) for {name}: a's length "
                             f"along axis {axis} is {x.shape[ax]}; give n")
    else:
        n = _length(n, "n")
    return bind(P.irfft_p, _resized(x, ax, n // 2 + 1), axes=(ax,), n=n, norm=norm)


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``rfft``: a real signal of length n from its half spectrum.

    a: complex (the non-negative frequencies; real input is taken as complex), ndim >= 1.  n:
    the output length along axis (default 2 * (m - 1), m a's length there; a is trimmed or
    zero-padded to n // 2 + 1).  The imaginary parts of the zero-frequency term (and of the
    Nyquist term for even n) are ignored, as NumPy's.  norm as ``ifft``.  Returns a's shape
    with n along axis; float32 (complex64 input) or float64.
    """
    return _c2r(_as_complex(a), n, axis, _norm(norm), "irfft")


def rfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-d discrete Fourier transform of real input: a full transform over every axis of
    ``axes`` but the last, which keeps its non-negative frequencies (length s[-1] // 2 + 1).
    a real (TypeError for complex); s, axes and norm as ``fftn``.  complex64 or complex128."""
    x = _as_real(a, "rfftn")
    axes, sizes = _axes_and_sizes(x, s, axes, "rfftn")
    if not axes:
        return _as_complex(x)
    for ax, n in zip(axes, sizes):
        x = _resized(x, ax, n)
    return bind(P.rfft_p, x, axes=axes, norm=_norm(norm))


def irfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Array:
    """The inverse of ``rfftn``: s gives the output lengths along ``axes`` (default a's lengths,
    and 2 * (m - 1) for the last axis); a is trimmed or zero-padded to s (s[-1] // 2 + 1 on
    the last axis).  a complex; norm as ``ifftn``.  Returns float32 (complex64 input) or
    float64 with s along axes."""
    x = _as_complex(a)
    axes, sizes = _axes_and_sizes(x, s, axes, "irfftn", halved_last=True)
    if not axes:
        return real_part(x)
    for ax, n in zip(axes[:-1], sizes[:-1]):
        x = _resized(x, ax, n)
    n = sizes[-1]
    x = _resized(x, axes[-1], n // 2 + 1)
    return bind(P.irfft_p, x, axes=axes, n=n, norm=_norm(norm))


def rfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """``rfftn`` over the last two axes by default (a: real, ndim >= 2)."""
    return rfftn(a, s, axes, norm)


def irfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Array:
    """``irfftn`` over the last two axes by default (a: complex, ndim >= 2)."""
    return irfftn(a, s, axes, norm)


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The discrete Fourier transform of a Hermitian-symmetric signal given by its first half:
    ``irfft(conj(a), n)`` with the opposite norm (NumPy's definition), so with the default
    norm it is not scaled.  a complex; n the output length (default 2 * (m - 1)).  Returns
    float32 (complex64 input) or float64 with n along axis."""
    return _c2r(conjugated(_as_complex(a)), n, axis, _SWAP[_norm(norm)], "hfft")


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``hfft``: ``conj(rfft(a, n))`` with the opposite norm (1/n scaling with
    the default).  a real (TypeError for complex).  Returns complex64 (float32 input) or
    complex128 with n // 2 + 1 along axis."""
    x = _as_real(a, "ihfft")
    ax, n = _one_axis(x, n, axis, "ihfft")
    return conjugated(bind(P.rfft_p, _resized(x, ax, n), axes=(ax,), norm=_SWAP[_norm(norm)]))


# -- frequencies and shifts ----------------------------------------------------------------

def _freq_dtype(dtype):
    if dtype is None:
        return dtypes.DEFAULT_FLOAT
    dt = dtypes.check_dtype(dtype, "dtype")
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype: must be a real floating dtype, got {dt}")
    return dt


def _freqs(k, n, d, dtype, name):
    """k / (n * d) in ``dtype``: computed in float64 for a Python number d, a differentiable
    division for a tensor d (a scalar)."""
    dt = _freq_dtype(dtype)
    if isinstance(d, (int, float, np.integer, np.floating)) and not isinstance(d, (bool, np.bool_)):
        if d == 0:
            raise ValueError(f"d: the sample spacing of {name} must be nonzero")
        return const(k / (n * float(d)), dt)
    d = operand(d)
    if d.ndim:
        raise ValueError(f"d: expected a scalar sample spacing, got shape {d.shape}")
    return divide(const(k / n, dt), astype(d, dt))


def fftfreq(n: int, d: ArrayLike = 1.0, *, dtype: DTypeLike = None,
            device: object = None) -> Array:
    """The sample frequencies of an n-point ``fft`` with sample spacing d: [0, 1, ...,
    ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n).  n >= 1.  Shape (n,); dtype (a real
    float dtype) default float32.  device: accepted for the Array API (the CPU)."""
    n = _length(n, "n")
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]).astype(np.float64)
    return _freqs(k, n, d, dtype, "fftfreq")


def rfftfreq(n: int, d: ArrayLike = 1.0, *, dtype: DTypeLike = None,
             device: object = None) -> Array:
    """The sample frequencies of an n-point ``rfft``: [0, 1, ..., n // 2] / (d * n).  n >= 1.
    Shape (n // 2 + 1,); dtype default float32."""
    n = _length(n, "n")
    return _freqs(np.arange(n // 2 + 1, dtype=np.float64), n, d, dtype, "rfftfreq")


def _shift(x, axes, sign):
    x = operand(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (normalize_axis(_int(axes, "axes"), x.ndim),)
    else:
        axes = tuple(normalize_axis(_int(a, "axes"), x.ndim) for a in axes)
    if not axes:
        return x
    shifts = [sign * (x.shape[a] // 2) for a in axes]
    return roll(x, shifts, axes)


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """The zero-frequency term moved to the center: x rolled by n // 2 along each of ``axes``
    (an int, a sequence, or None: all axes).  Same shape and dtype."""
    return _shift(x, axes, 1)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of ``fftshift``: x rolled by -(n // 2) along each of ``axes``.  Same shape
    and dtype."""
    return _shift(x, axes, -1)

