"""The backend's registry: ``IMPLS`` (primitive name -> implementation), the ``_impl``
decorator that fills it, and the two ways a family module turns a result into a Tensor.

May import: NumPy and ``nx_rune.tensor`` (the layer below every family module).  Every module of
``nx_rune.backend`` imports this one, so the warning filters set here are in place before any
implementation runs.
"""
import warnings

import numpy as np

from nx_rune.tensor import Tensor, wrap_result

IMPLS = {}

# an ndarray (C-contiguous or not: its strides are kept) wrapped as a Tensor without a copy
_wrap = Tensor._wrap
# a NumPy result (an ndarray or a NumPy scalar) as a C-contiguous Tensor
_out = wrap_result


def _impl(name):
    """Register the decorated function as the implementation of primitive ``name``."""
    def register(fn):
        IMPLS[name] = fn
        return fn
    return register


# NumPy's floating-point warnings (overflow to inf, log of 0, ...) are attributed to the frame
# that called the ufunc, i.e. a module of this package: silence them there only (results are
# IEEE, as in JAX) without paying for an np.errstate on every call.  The module pattern is a
# prefix, so it covers every module of nx_rune.backend.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"nx_rune\.backend")
# ... except ComplexWarning (a RuntimeWarning too): a cast that drops imaginary parts must show
warnings.filterwarnings("default", category=np.exceptions.ComplexWarning,
                        module=r"nx_rune\.backend")
