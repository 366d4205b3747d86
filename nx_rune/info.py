"""The Array API standard's inspection API: ``nx.__array_namespace_info__()``.

nx_rune has one device, the CPU, and JAX's default dtypes: float32, complex64 and int32 (int32
is also the dtype of the indices ``argmax`` and ``nonzero`` return); float64, complex128 and
int64 in x64 mode (``nx_rune.config``).
``dtypes()`` lists the standard's dtypes only (float16, which nx_rune also supports, is not one
of them).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from nx_rune import dtypes as _dtypes
from nx_rune.tensor import CPU, Device, check_device

__all__ = ["__array_namespace_info__", "Info"]

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "integral": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
    "numeric": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float32", "float64", "complex64", "complex128"),
}
_ALL = ("bool",) + _KINDS["numeric"]


class Info:
    """The inspection namespace (``nx.__array_namespace_info__()``): ``capabilities()``,
    ``default_device()``, ``devices()``, ``default_dtypes(device=None)``,
    ``dtypes(device=None, kind=None)``."""
    __slots__ = ()

    def capabilities(self) -> dict:
        """What the library supports: boolean indexing and data-dependent output shapes
        (``nonzero``, ``unique_*``, ``x[mask]``) yes; no limit on the number of dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": None}

    def default_device(self) -> Device:
        """The CPU, the only device."""
        return CPU

    def devices(self) -> list[Device]:
        """``[CPU]``: the devices arrays can live on."""
        return [CPU]

    def default_dtypes(self, *, device: object = None) -> dict[str, np.dtype]:
        """The default dtypes: ``'real floating'`` float32, ``'complex floating'`` complex64,
        ``'integral'`` int32, ``'indexing'`` int32 (what ``argmax`` and ``nonzero`` return);
        in x64 mode float64, complex128, int64 and int64."""
        check_device(device)
        return {"real floating": _dtypes.DEFAULT_FLOAT,
                "complex floating": _dtypes.DEFAULT_COMPLEX,
                "integral": _dtypes.DEFAULT_INT, "indexing": _dtypes.DEFAULT_INT}

    def dtypes(self, *, device: object = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype]:
        """The Array API dtypes nx_rune supports, by canonical name: all of them (``kind``
        None), those of one kind (``'bool'``, ``'signed integer'``, ``'unsigned integer'``,
        ``'integral'``, ``'real floating'``, ``'complex floating'``, ``'numeric'``), or of any
        kind of a tuple.  ValueError for an unknown kind."""
        check_device(device)
        names: Sequence[str] = _ALL
        if kind is not None:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            chosen: list[str] = []
            for k in kinds:
                if not isinstance(k, str) or k not in _KINDS:
                    raise ValueError(f"kind: unknown dtype kind {k!r}; the kinds are "
                                     f"{', '.join(map(repr, _KINDS))}")
                chosen += [n for n in _KINDS[k] if n not in chosen]
            names = chosen
        return {n: np.dtype(n) for n in names}

    def __repr__(self):
        return "nx_rune.__array_namespace_info__()"


_INFO = Info()


def __array_namespace_info__() -> Info:
    """The Array API inspection namespace of nx_rune (an ``Info`` object)."""
    return _INFO
