"""``nx_rune.autograd.numpy``: autograd's ``autograd.numpy`` on nx_rune.

``import nx_rune.autograd.numpy as np`` gives NumPy's names with NumPy's float64 defaults
(``np.array([1., 2.])`` and ``np.ones(3)`` are float64, Python ints int64), each function
nx_rune's own (differentiable under ``nx_rune.autograd.grad`` and every nx_rune transformation).
NumPy functions nx_rune does not implement run in NumPy on concrete values and raise
NotImplementedError when differentiated (autograd's primitives without a derivative rule).
Submodules: ``random`` (NumPy's global random state, as autograd's), ``linalg``, ``fft``.

``np.ndarray`` matches NumPy arrays and nx_rune arrays (Tensors and traced values) in
``isinstance``; arrays are nx_rune Tensors, so ``type(x) is numpy.ndarray`` is False.
"""
import numpy as _onp

import nx_rune as _nx
from nx_rune.autograd._namespace import populate as _populate
from nx_rune.tensor import ArrayBase as _ArrayBase

__all__ = _populate(globals(), _onp, _nx, "nx_rune.autograd.numpy", skip=("ndarray",))


class _NdarrayMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, (_onp.ndarray, _ArrayBase))

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, (_onp.ndarray, _ArrayBase))


class ndarray(metaclass=_NdarrayMeta):
    """The array type for ``isinstance``: NumPy arrays and nx_rune arrays (Tensors and the
    values traced by grad, jvp, vmap and jit) are instances."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("nx_rune.autograd.numpy.ndarray is for isinstance checks; make arrays "
                        "with np.array, np.zeros, np.empty, ...")


__all__.append("ndarray")


def _cast_type(base):
    """``base`` (a NumPy integer type) as autograd's namespace has it: a subclass whose call
    also casts a traced array (``np.int64(W[:, -1])`` under grad: an index array, not
    differentiated); otherwise NumPy's own construction.  ``np.dtype(np.int64)`` and
    ``x.dtype == np.int64`` are NumPy's."""
    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], _ArrayBase):
            return args[0].astype(base)
        return base.__new__(cls, *args, **kwargs)
    return type(base.__name__, (base,), {"__new__": __new__, "__module__": __name__,
                                         "__doc__": base.__doc__})


int8, int16, int32, int64 = (_cast_type(t) for t in (_onp.int8, _onp.int16, _onp.int32,
                                                      _onp.int64))

from nx_rune.autograd.numpy._names import (  # noqa: E402,F401
    abs,
    absolute,
    clongdouble,
    fabs,
    longdouble,
    make_diagonal,
    std,
    where,
)

__version__ = _onp.__version__
__all__ += ["make_diagonal"]

from nx_rune.autograd.numpy import fft, linalg, random  # noqa: E402

__all__ += ["fft", "linalg", "random"]
