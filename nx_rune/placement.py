"""Devices and data placement with JAX's names and return conventions.

nx_rune computes on one device, the CPU, synchronously, in the process's own memory: these
functions let code written for JAX run unchanged.  ``devices()`` lists that device,
``device_put`` makes arrays (it copies NumPy arrays, as JAX's copy to the device does),
``device_get`` gives NumPy arrays back, ``block_until_ready`` returns its argument.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from nx_rune.tensor import ArrayBase
from nx_rune.tensor import Device as ArrayDevice
from nx_rune.tree_util import tree_map

__all__ = ["Device", "devices", "local_devices", "device_count", "local_device_count",
           "default_backend", "process_index", "process_count", "device_put", "device_get",
           "block_until_ready", "named_scope", "effects_barrier"]


class Device:
    """The CPU (JAX's ``CpuDevice``): ``id`` 0, ``platform`` and ``device_kind`` ``"cpu"``."""
    __slots__ = ()
    id = 0
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    host_id = 0
    client = None

    def __repr__(self):
        return "CpuDevice(id=0)"

    def __str__(self):
        return "cpu:0"

    def __eq__(self, other):
        # x.device (the Array API's device object) is the same device
        return isinstance(other, (Device, ArrayDevice))

    def __hash__(self):
        return hash("nx_rune cpu device")

    def __reduce__(self):
        return (Device, ())


CPU = Device()


def _check_backend(backend, fname):
    if backend is not None and backend != "cpu":
        raise ValueError(f"{fname}: backend must be None or 'cpu' (nx_rune runs on the CPU), "
                         f"got {backend!r}")


def devices(backend: str | None = None) -> list[Device]:
    """The devices: ``[CpuDevice(id=0)]``."""
    _check_backend(backend, "devices")
    return [CPU]


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list[Device]:
    """The devices of this process: ``[CpuDevice(id=0)]``."""
    _check_backend(backend, "local_devices")
    for name, v in (("process_index", process_index), ("host_id", host_id)):
        if v not in (None, 0):
            raise ValueError(f"local_devices: {name} must be 0 (one process), got {v!r}")
    return [CPU]


def device_count(backend: str | None = None) -> int:
    """1."""
    _check_backend(backend, "device_count")
    return 1


def local_device_count(backend: str | None = None) -> int:
    """1."""
    _check_backend(backend, "local_device_count")
    return 1


def default_backend() -> str:
    """``"cpu"``."""
    return "cpu"


def process_index(backend: str | None = None) -> int:
    """0 (one process)."""
    return 0


def process_count(backend: str | None = None) -> int:
    """1."""
    return 1


def _check_device(device, what):
    if device is None or isinstance(device, (Device, ArrayDevice)) or device == "cpu":
        return
    if hasattr(device, "memory_kind") or hasattr(device, "device_set") or \
            type(device).__name__ in ("PartitionSpec", "Format"):
        return      # a sharding or layout: one device, nothing to place
    raise TypeError(f"device_put: {what} must be None or a device (nx.devices()[0]), got "
                    f"{type(device).__name__}")


def _put(x):
    if isinstance(x, ArrayBase):
        return x
    from nx_rune import frontend
    if isinstance(x, (np.ndarray, np.generic)):
        return frontend.array(x)            # a copy: the result does not see the ndarray
    if isinstance(x, (bool, int, float, complex)):
        return frontend.asarray(x)
    raise TypeError(f"device_put: expected arrays, NumPy arrays or Python numbers as the "
                    f"pytree's leaves, got {type(x).__name__}")


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """``x`` (a pytree) with its leaves as arrays on the device: arrays as they are (the
    same objects, as JAX returns an array already on its device), NumPy arrays copied, Python
    numbers made arrays (weakly typed, as ``nx.asarray`` makes them).  ``device``/``src``:
    None, the device, or a sharding (there is one device); ``donate``/``may_alias`` are
    accepted."""
    _check_device(device, "device")
    _check_device(src, "src")
    return tree_map(_put, x)


def _get(x):
    if isinstance(x, ArrayBase):
        c = x._concrete_tensor()
        if c is None:
            raise TypeError(f"device_get: a traced value (shape {x.shape}, dtype {x.dtype}) "
                            f"has no values while a function is being traced")
        return c.numpy()
    return x


def device_get(x: Any) -> Any:
    """``x`` (a pytree) with its arrays as NumPy arrays (other leaves as they are), as JAX's
    ``device_get``."""
    return tree_map(_get, x)


def block_until_ready(x: Any) -> Any:
    """``x`` itself: computations are synchronous, so every array is ready (JAX's
    ``block_until_ready`` of a pytree)."""
    return x


def effects_barrier() -> None:
    """Wait until every effect (``debug.print``, callbacks) started so far has run (JAX's
    ``jax.effects_barrier``): computations and their effects run synchronously, so they all
    have: returns at once."""


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """JAX's ``jax.named_scope(name)``: a context manager (or, through contextlib, a decorator)
    that names the operations of its block.  JAX writes the name into the compiled program's
    metadata for profilers; nx_rune's programs carry no names, so it only checks ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a string, got {type(name).__name__}")
    yield
