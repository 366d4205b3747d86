"""``nx.fft``: discrete Fourier transforms with NumPy's names and signatures (the Array API
standard's fft extension), differentiable to any order.

The transforms are linear primitives (``fft``, ``rfft``, ``irfft``) whose derivative rules
are their transposes: the transpose of a complex FFT is the same FFT (the DFT matrix is
symmetric); the transpose of ``rfft`` zero-pads the cotangent to the full spectrum, applies
the FFT and keeps the real part; the transpose of ``irfft`` weights the half spectrum's
interior bins twice (they stand for their mirrored conjugates).  Cotangents of complex values
follow the transpose (non-conjugated) convention, as JAX's.  See ``nx_rune.frontend.fft``.
"""
from nx_rune.frontend.fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
