"""Rules of the FFT primitives (fft, rfft, irfft): linear, so each JVP applies the primitive to
the tangent and each VJP is its transpose; batching shifts the ``axes``.

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defaxes
from nx_rune.autodiff.rules._common import _carr, deflinear
from nx_rune.frontend import fft as _fft_fe
from nx_rune.frontend.products import conjugated as _conjugated
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

# -- fft, rfft, irfft ----------------------------------------------------------------------------
# FFTs are linear: each JVP applies the primitive to the tangent.  Their transposes, in the
# transpose (non-conjugated) convention of complex cotangents (a cotangent g of a complex value
# z stands for the real covector (Re g, -Im g) of (Re z, Im z), as JAX's):
# - fft: the DFT matrix (with any norm's scale) is symmetric, so the transpose is the same FFT.
# - rfft = keep bins [0, n//2] . fft . (real -> complex): the transpose zero-pads the cotangent
#   to n bins, applies the same FFT and keeps the real part.
# - irfft(x)_t = Re(sum_k w_k x_k e^{+2 pi i k t / n}) * scale, w_k = 1 for the zero and (even
#   n) Nyquist bins and 2 for the interior bins (each stands for itself and its mirrored
#   conjugate), so the transpose is w * conj(rfft(g)) with the dual norm (the scale moves from
#   the inverse to the forward transform).  Along the other axes of an n-d irfft the transform
#   is a complex inverse FFT, symmetric too, which the same formula covers.  This is not irfft's
#   inverse: without the weights the interior bins' derivatives would be halved.

_DUAL_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}

deflinear(P.fft_p, lambda g, ans, x, axes, inverse, norm: bind(
    P.fft_p, g, axes=axes, inverse=inverse, norm=norm))


def _rfft_transpose(g, ans, x, axes, norm):
    last = axes[-1]
    n = x.shape[last]
    if g.shape[last] != n:
        cfg = [(0, 0)] * g.ndim
        cfg[last] = (0, n - g.shape[last])
        g = ops.pad(g, cfg)
    return _fft_fe.real_part(bind(P.fft_p, g, axes=axes, inverse=False, norm=norm))


def _irfft_transpose(g, ans, x, axes, n, norm):
    m = x.shape[axes[-1]]
    w = np.ones(m)
    w[1:(n + 1) // 2] = 2.0
    shape = [1] * x.ndim
    shape[axes[-1]] = m
    spec = bind(P.rfft_p, g, axes=axes, norm=_DUAL_NORM[norm])
    return ops.multiply(_conjugated(spec), Tensor._wrap(_carr(w.reshape(shape), g.dtype)))


deflinear(P.rfft_p, _rfft_transpose)
deflinear(P.irfft_p, _irfft_transpose)


# -- batching: the ``axes`` shift past the batch axis ------------------------------------------

for _p in (P.fft_p, P.rfft_p, P.irfft_p):
    defaxes(_p)
