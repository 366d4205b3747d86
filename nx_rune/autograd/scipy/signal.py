"""``nx_rune.autograd.scipy.signal``: autograd's ``convolve(A, B, axes=None, dot_axes=[(), ()],
mode="full")`` (``nx_rune.scipy.signal.convolve_general``, differentiable in both operands);
``scipy.signal``'s other names SciPy's, on concrete values."""
import scipy.signal as _sig

import nx_rune.scipy.signal as _nxsig
from nx_rune.autograd._namespace import populate as _populate
from nx_rune.autograd._wrap import in_x64 as _in_x64

__all__ = _populate(globals(), _sig, None, "nx_rune.autograd.scipy.signal")


@_in_x64
def convolve(A, B, axes=None, dot_axes=[(), ()], mode="full"):  # noqa: B006 (autograd's)
    """``A`` convolved with ``B`` along ``axes`` (A's, B's), contracted over ``dot_axes``, an
    outer product over the other axes (result: A's other axes, B's, the convolved ones), in
    ``mode`` "full", "valid" or "same" (see ``nx_rune.scipy.signal.convolve_general``)."""
    return _nxsig.convolve_general(A, B, axes=axes, dot_axes=dot_axes, mode=mode)
