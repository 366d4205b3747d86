"""Fast Fourier transforms: fft, rfft, irfft (NumPy's pocketfft).

fft(x, axes, inverse, norm)  rfft(x, axes, norm)  irfft(x, axes, n, norm)
NumPy's pocketfft over ``axes`` (distinct non-negative axes, in order; the front end has already
padded or trimmed every transformed axis to its length): fft takes and gives complex (inverse
selects the +i exponent), rfft takes real float32/float64 and halves axes[-1] to length // 2 + 1,
irfft takes complex with axes[-1] of length n // 2 + 1 and gives real with length n there.  norm
is NumPy's: "backward", "ortho" or "forward".  float32 stays in single precision (complex64), as
NumPy >= 2 computes it.

The n-d transforms run one axis at a time in the order of NumPy's ``fftn``/``rfftn``/``irfftn``
(so the values are NumPy's to the last bit), with two savings over materializing the input and
calling those:

- an input whose only padding is zeros appended along transformed axes (what the front end's
  longer ``n``/``s`` binds: a padded view, not yet memory) is not materialized; NumPy's
  transform takes the unpadded values and the length and pads each line itself, and the later
  axes of an n-d transform then run over the lines that hold data first;
- every axis after the first transforms the previous axis's result in place (it is this
  function's own array) instead of allocating a new one per axis.

May import: NumPy, ``nx_rune.tensor`` and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune.backend._core import _impl, _out
from nx_rune.tensor import Tensor


def _source(x, axes):
    """The ndarray to transform: x's values, or, when x is a padded view whose padding is zeros
    appended (at the high end) along ``axes`` only, the unpadded values (each transform is then
    given its length and zero-pads the lines itself)."""
    view = x.view
    box = view.mask
    fill = view.fill   # (+0 only: a padding of -0.0 could change the sign of a zero result)
    if box is None or fill != 0 or np.signbit(np.real(fill)) or np.signbit(np.imag(fill)):
        return x._np()
    for d, (lo, hi) in enumerate(box):
        if lo != 0 or hi <= 0 or (hi != view.shape[d] and d not in axes):
            return x._np()
    return Tensor(x.buffer, view.shrink(box))._np()


def _step(fn, a, axis, n, norm, owned):
    """``fn`` (a 1-d NumPy transform keeping the length) along ``axis`` at length n: in place
    when ``a`` is an array this module made (zero-padded into a new one first when shorter
    than n), else into a new array."""
    m = a.shape[axis]
    if not owned:
        return fn(a, n=n, axis=axis, norm=norm)
    if m < n:
        shape = list(a.shape)
        shape[axis] = n
        b = np.zeros(shape, a.dtype)
        b[(slice(None),) * axis + (slice(0, m),)] = a
        a = b
    return fn(a, axis=axis, norm=norm, out=a)


@_impl("fft")
def _fft(x, *, axes, inverse, norm):
    if not axes:
        return _out(x._np().copy())
    fn = np.fft.ifft if inverse else np.fft.fft
    a = _source(x, axes)
    if a.dtype not in (np.complex64, np.complex128):   # (the front end binds complex only)
        a = a.astype(np.result_type(a.dtype, np.complex64))
    shape = x.shape
    owned = False
    for ax in reversed(axes):   # NumPy's fftn: the last axis first
        a = _step(fn, a, ax, shape[ax], norm, owned)
        owned = True
    return _out(a)


@_impl("rfft")
def _rfft(x, *, axes, norm):
    a = _source(x, axes)
    shape = x.shape
    a = np.fft.rfft(a, n=shape[axes[-1]], axis=axes[-1], norm=norm)
    for ax in reversed(axes[:-1]):   # NumPy's rfftn: then the other axes, last first
        a = _step(np.fft.fft, a, ax, shape[ax], norm, True)
    return _out(a)


@_impl("irfft")
def _irfft(x, *, axes, n, norm):
    shape = x.shape
    if shape[axes[-1]] != n // 2 + 1:
        raise ValueError(f"x: irfft of length {n} takes {n // 2 + 1} bins along axis "
                         f"{axes[-1]}, got {shape[axes[-1]]}")
    a = _source(x, axes)
    owned = False
    for ax in axes[:-1]:   # NumPy's irfftn: the other axes first, in order
        a = _step(np.fft.ifft, a, ax, shape[ax], norm, owned)
        owned = True
    return _out(np.fft.irfft(a, n=n, axis=axes[-1], norm=norm))
