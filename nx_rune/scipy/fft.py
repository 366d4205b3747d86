"""``nx.scipy.fft``: the discrete cosine transform ``dct`` / ``dctn`` and its inverse ``idct``
/ ``idctn``, as ``jax.scipy.fft`` (type 2, norms ``None`` / ``"backward"`` and ``"ortho"``;
values as ``scipy.fft``'s), differentiable to any order.

A DCT-II of length N is one complex FFT of the same length (Makhoul, 1980): the input's even
entries followed by its odd entries reversed, transformed, each bin k turned by
exp(-i pi k / 2N), twice the real part.  The inverse undoes the steps in reverse.  Several axes
are transformed one after the other.  Complex input: the real and imaginary parts apart.
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend import fft as _fft
from nx_rune.typing import Array, ArrayLike

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError(f"{name}: only DCT type 2 is implemented, got type={type!r}")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"{name}: norm={norm!r} is not implemented (None, 'backward' or "
                         f"'ortho')")


def _as_real_input(x):
    x = F.asarray(x)
    if x.dtype.kind in "biu":
        x = F.astype(x, F.asarray(1.0).dtype)
    return x


def _axis(axis, ndim, name):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of {ndim} "
                         f"dimensions")
    return axis % ndim


def _resize(x, n, axis, name):
    """``x`` zero-padded or truncated to length ``n`` along ``axis``."""
    if n is None:
        return x
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: n must be an integer, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{name}: n must be at least 1, got {n}")
    m = x.shape[axis]
    if n < m:
        return F.take(x, F.arange(n), axis=axis)
    if n > m:
        pads = [(0, 0)] * x.ndim
        pads[axis] = (0, n - m)
        return F.pad(x, pads)
    return x


def _along(v, axis, ndim):
    """A 1-D array ``v`` shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return F.reshape(v, tuple(shape))


def _ortho_scale(n, dtype):
    """The factors that make the backward DCT-II orthonormal: 1/sqrt(4n), then 1/sqrt(2n)."""
    f = np.full(n, 1.0 / np.sqrt(2.0 * n))
    f[0] = 1.0 / np.sqrt(4.0 * n)
    return F.asarray(f.astype(dtype))


def _dct_axis(x, axis, norm):
    n = x.shape[axis]
    # even entries in order, then the odd ones reversed
    idx = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    v = F.take(x, F.asarray(idx), axis=axis)
    V = _fft.fft(v, axis=axis)
    k = np.arange(n)
    twiddle = np.exp(-0.5j * np.pi * k / n).astype(V.dtype)
    out = 2 * F.real(V * _along(F.asarray(twiddle), axis, x.ndim))
    if norm == "ortho":
        out = out * _along(_ortho_scale(n, out.dtype), axis, x.ndim)
    return out


def _idct_axis(X, axis, norm):
    n = X.shape[axis]
    if norm == "ortho":
        X = X / _along(_ortho_scale(n, X.dtype), axis, X.ndim)
    # V_k = (X_k - i X_{n-k}) e^{i pi k / 2n} / 2  (X_n = 0) is the FFT of the reordered signal
    rev = np.concatenate([[0], np.arange(n - 1, 0, -1)]).astype(np.int64)
    mask = np.ones(n)
    mask[0] = 0.0
    Xrev = F.take(X, F.asarray(rev), axis=axis) * _along(F.asarray(mask.astype(X.dtype)),
                                                          axis, X.ndim)
    k = np.arange(n)
    cdt = np.result_type(X.dtype, np.complex64)
    twiddle = (np.exp(0.5j * np.pi * k / n) / 2).astype(cdt)
    V = (F.astype(X, cdt) - 1j * F.astype(Xrev, cdt)) * _along(F.asarray(twiddle), axis,
                                                                 X.ndim)
    v = F.real(_fft.ifft(V, axis=axis))
    # v holds the even entries, then the odd ones reversed: put each back in its place
    order = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    return F.take(v, F.asarray(np.argsort(order)), axis=axis)


def _complex_parts(fn, x, *args, **kwargs):
    if x.dtype.kind == "c":
        re, im = fn(F.real(x), *args, **kwargs), fn(F.imag(x), *args, **kwargs)
        return re + 1j * F.astype(im, re.dtype) if re.dtype.kind == "f" else re + 1j * im
    return None


def dct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Array:
    """The discrete cosine transform (type 2) of ``x`` along ``axis``, of length ``n``
    (``x`` zero-padded or truncated to it; default its length): y_k = 2 sum_j x_j
    cos(pi k (2j + 1) / 2n); ``norm="ortho"`` scales it to an orthonormal transform.  As
    ``scipy.fft.dct`` (types other than 2 raise NotImplementedError, as in JAX)."""
    _check("dct", type, norm)
    x = _as_real_input(x)
    c = _complex_parts(dct, x, type=type, n=n, axis=axis, norm=norm)
    if c is not None:
        return c
    a = _axis(axis, x.ndim, "dct")
    return _dct_axis(_resize(x, n, a, "dct"), a, norm)


def idct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Array:
    """The inverse of :func:`dct` (type 2) along ``axis``: ``idct(dct(x, norm=m), norm=m)``
    is ``x``.  ``n``: the length (``x`` zero-padded or truncated).  As ``scipy.fft.idct``."""
    _check("idct", type, norm)
    x = _as_real_input(x)
    c = _complex_parts(idct, x, type=type, n=n, axis=axis, norm=norm)
    if c is not None:
        return c
    a = _axis(axis, x.ndim, "idct")
    return _idct_axis(_resize(x, n, a, "idct"), a, norm)


def _axes_and_sizes(x, s, axes, name):
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"{name}: s must have at most x.ndim ({x.ndim}) elements, got "
                             f"{len(s)}")
    if axes is None:
        axes = list(range(x.ndim - len(s), x.ndim)) if s is not None else list(range(x.ndim))
    else:
        axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
        axes = [_axis(a, x.ndim, name) for a in axes]
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: axes must be distinct, got {axes}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got {len(s)} and "
                         f"{len(axes)}")
    return axes, s


def dctn(x: ArrayLike, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The multidimensional :func:`dct` over ``axes`` (default: the last ``len(s)`` axes, or
    all), each resized to ``s`` (default: unchanged).  As ``scipy.fft.dctn``."""
    _check("dctn", type, norm)
    x = _as_real_input(x)
    c = _complex_parts(dctn, x, type=type, s=s, axes=axes, norm=norm)
    if c is not None:
        return c
    axes, s = _axes_and_sizes(x, s, axes, "dctn")
    for i, a in enumerate(axes):
        x = _dct_axis(_resize(x, s[i] if s is not None else None, a, "dctn"), a, norm)
    return x


def idctn(x: ArrayLike, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The inverse of :func:`dctn`; arguments as its.  As ``scipy.fft.idctn``."""
    _check("idctn", type, norm)
    x = _as_real_input(x)
    c = _complex_parts(idctn, x, type=type, s=s, axes=axes, norm=norm)
    if c is not None:
        return c
    axes, s = _axes_and_sizes(x, s, axes, "idctn")
    for i, a in enumerate(axes):
        x = _idct_axis(_resize(x, s[i] if s is not None else None, a, "idctn"), a, norm)
    return x


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
