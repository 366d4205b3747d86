"""Builds the NumPy-shaped namespaces of ``nx_rune.autograd`` from nx_rune's.

Every public name of a NumPy module (``numpy``, ``numpy.linalg``, ``numpy.fft``,
``numpy.random``) is looked up in the matching nx_rune module: a function found there is taken
as it is, run in x64 mode (``_wrap.in_x64``); a NumPy function nx_rune lacks is NumPy's, on
concrete values (``_wrap.numpy_fallback``); classes (``finfo``, ``errstate``, ``dtype``), scalar
types and constants are NumPy's unless nx_rune has its own.  No math is implemented here.
"""
from __future__ import annotations

import types

from nx_rune.autograd._wrap import in_x64, numpy_fallback

__all__ = ["populate"]


def _is_function(obj) -> bool:
    return callable(obj) and not isinstance(obj, type) and \
        not getattr(obj, "_nx_scalar_type", False)


def populate(namespace: dict, np_module, nx_module, qualname: str, skip=()) -> list:
    """Fill ``namespace`` with ``np_module``'s public names mapped onto ``nx_module``; returns
    the names set."""
    names = []
    for name in dir(np_module):
        if name.startswith("_") or name in skip:
            continue
        npobj = getattr(np_module, name)
        if isinstance(npobj, types.ModuleType):
            continue
        nxobj = getattr(nx_module, name, None) if nx_module is not None else None
        if getattr(nxobj, "_nx_scalar_type", False):
            # NumPy's scalar types, as autograd's namespace has them (``x.dtype.type is
            # np.float64`` holds; nx accepts them wherever it takes a dtype)
            namespace[name] = npobj
        elif nxobj is not None and not isinstance(nxobj, types.ModuleType):
            namespace[name] = in_x64(nxobj, name) if _is_function(nxobj) else nxobj
        elif isinstance(npobj, type) or not callable(npobj):
            namespace[name] = npobj
        else:
            namespace[name] = numpy_fallback(npobj, f"{qualname}.{name}")
        names.append(name)
    return names
