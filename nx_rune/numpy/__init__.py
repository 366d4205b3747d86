"""``nx_rune.numpy``: nx_rune's array namespace under JAX's module name, so that a JAX program
ports by renaming its import (``import jax.numpy as jnp`` -> ``import nx_rune.numpy as jnp``).

The module holds no functions of its own: every array name of the package namespace
(``nx_rune.<name>``) is looked up there when first asked for (and kept), so names added to
``nx_rune`` later appear here too.  Left out are the package's submodules other than the
array namespaces ``fft`` and ``linalg`` (``nx_rune.numpy.random`` is not ``nx_rune.random``, as
in JAX) and its non-array API: the transformations, the compiler and the run-time settings
(``grad``, ``jit``, ``vmap``, ``config``, ...), which live in ``nx_rune`` as they live in
``jax``.

Added beside them, as JAX's ``jax.numpy`` has them: ``ndarray`` (the class of nx_rune's arrays,
for ``isinstance``: True for Tensors and for the traced values that ``jit``, ``grad`` and
``vmap`` pass to a function, False for NumPy arrays and Python scalars), ``dtype`` (NumPy's),
``issubdtype`` and NumPy's abstract scalar types (``floating``, ``integer``, ...) for dtype tests.
"""
from __future__ import annotations

import sys as _sys
import types as _types

import numpy as _np

from nx_rune.numpy import fft, linalg  # noqa: F401
from nx_rune.tensor import ArrayBase as ndarray  # noqa: F401

dtype = _np.dtype
issubdtype = _np.issubdtype
generic = _np.generic
number = _np.number
inexact = _np.inexact
floating = _np.floating
complexfloating = _np.complexfloating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger

_OWN = ("ndarray", "dtype", "issubdtype", "generic", "number", "inexact", "floating",
        "complexfloating", "integer", "signedinteger", "unsignedinteger", "fft", "linalg")

# where the package's non-array API is defined: a public name of nx_rune whose object comes from
# one of these modules is a transformation or a setting, not an array function
_NOT_ARRAY_API = ("nx_rune.autodiff", "nx_rune.compiler", "nx_rune.config",
                  "nx_rune.distributed", "nx_rune.debug", "nx_rune.parallel",
                  "nx_rune.callbacks", "nx_rune.ad_checkpoint")


def _package():
    # the package namespace, finished importing before anyone can ask this module for a name
    # (importing nx_rune.numpy imports nx_rune first); looked up, not imported, since the
    # package imports this module
    return _sys.modules["nx_rune"]


def _is_array_name(name, obj):
    if name.startswith("_"):
        return False
    if isinstance(obj, _types.ModuleType):
        return False                        # fft and linalg are this module's own
    return not str(getattr(obj, "__module__", "") or "").startswith(_NOT_ARRAY_API)


def _names():
    pkg = _package()
    return sorted({n for n in dir(pkg) if _is_array_name(n, getattr(pkg, n))} | set(_OWN))


def __getattr__(name):
    """The array name ``name`` of the package namespace (``nx_rune.<name>``)."""
    if name == "__all__":
        return [n for n in _names() if n not in ("fft", "linalg")]
    if not name.startswith("__"):
        pkg = _package()
        try:
            obj = getattr(pkg, name)
        except AttributeError:
            pass
        else:
            if _is_array_name(name, obj):
                # kept here, so that later uses are plain attribute reads (a program calls
                # jnp.<name> in its inner loops)
                globals()[name] = obj
                return obj
    raise AttributeError(f"module 'nx_rune.numpy' has no attribute {name!r}")


def __dir__():
    """The array names of the package namespace plus this module's own (ndarray, dtype, ...)."""
    return _names()
