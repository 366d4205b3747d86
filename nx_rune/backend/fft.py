"""Fast Fourier transforms: fft, rfft, irfft (NumPy's pocketfft).

fft(x, axes, inverse, norm)  rfft(x, axes, norm)  irfft(x, axes, n, norm)
NumPy's pocketfft over ``axes`` (distinct non-negative axes, in order; the front end has already
padded or trimmed every transformed axis to its length): fft takes and gives complex (inverse
selects the +i exponent), rfft takes real float32/float64 and halves axes[-1] to length // 2 + 1,
irfft takes complex with axes[-1] of length n // 2 + 1 and gives real with length n there.  norm
is NumPy's: "backward", "ortho" or "forward".  float32 stays in single precision (complex64), as
NumPy >= 2 computes it.

May import: NumPy and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune.backend._core import _impl, _out


def _axes_fft(fn_1d, fn_nd, a, axes, **kw):
    if len(axes) == 1:
        return fn_1d(a, axis=axes[0], **kw)
    return fn_nd(a, axes=axes, **kw)


@_impl("fft")
def _fft(x, *, axes, inverse, norm):
    a = x._np()
    if not axes:
        return _out(a.copy())
    if inverse:
        return _out(_axes_fft(np.fft.ifft, np.fft.ifftn, a, axes, norm=norm))
    return _out(_axes_fft(np.fft.fft, np.fft.fftn, a, axes, norm=norm))


@_impl("rfft")
def _rfft(x, *, axes, norm):
    return _out(_axes_fft(np.fft.rfft, np.fft.rfftn, x._np(), axes, norm=norm))


@_impl("irfft")
def _irfft(x, *, axes, n, norm):
    a = x._np()
    if a.shape[axes[-1]] != n // 2 + 1:
        raise ValueError(f"x: irfft of length {n} takes {n // 2 + 1} bins along axis "
                         f"{axes[-1]}, got {a.shape[axes[-1]]}")
    if len(axes) == 1:
        return _out(np.fft.irfft(a, n=n, axis=axes[0], norm=norm))
    s = [a.shape[ax] for ax in axes[:-1]] + [n]
    return _out(np.fft.irfftn(a, s=s, axes=axes, norm=norm))
