"""JAX's ``jax.sharding`` for one device: how an array's values are laid out over devices.

nx_rune computes on one device, the CPU, so every array is on it whole: ``x.sharding`` is a
:class:`SingleDeviceSharding` of ``nx.devices()[0]``, ``x.addressable_shards`` one
:class:`Shard` holding the whole array, ``x.devices()`` ``{CpuDevice(id=0)}``, and
``x.is_fully_addressable`` / ``x.is_fully_replicated`` are True, as JAX's arrays on one CPU
device report.  ``nx.device_put(x, sharding)`` and ``device=sharding`` accept them.
"""
from __future__ import annotations

import sys
from typing import Any

from nx_rune.placement import CPU, Device
from nx_rune.tensor import install_placement

__all__ = ["Sharding", "SingleDeviceSharding", "Shard", "make_single_device_sharding"]


def _check_shape(global_shape, fname):
    try:
        shape = tuple(int(d) for d in global_shape)
    except TypeError:
        raise TypeError(f"{fname}: global_shape must be a tuple of ints, got "
                        f"{global_shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{fname}: global_shape must not have negative sizes, got {shape}")
    return shape


class Sharding:
    """The base class of shardings (JAX's ``jax.sharding.Sharding``)."""
    __slots__ = ()


class SingleDeviceSharding(Sharding):
    """All of an array on one device (JAX's ``SingleDeviceSharding``): ``device_set``,
    ``addressable_devices`` ``{device}``, ``memory_kind`` ``'device'``, ``num_devices`` 1,
    ``is_fully_addressable`` and ``is_fully_replicated`` True; ``shard_shape(shape)`` is the
    shape, ``devices_indices_map(shape)`` maps the device to the whole array's index.

    Examples
    --------
    >>> import nx_rune as nx
    >>> s = nx.ones(2).sharding
    >>> s.num_devices, s.shard_shape((2,)), s.is_fully_replicated
    (1, (2,), True)
    """
    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device: Any, *, memory_kind: str | None = None):
        if not isinstance(device, Device) and getattr(device, "platform", None) != "cpu":
            raise TypeError(f"SingleDeviceSharding: device must be a device "
                            f"(nx.devices()[0]), got {type(device).__name__}")
        if memory_kind not in (None, "device"):
            raise ValueError(f"SingleDeviceSharding: memory_kind must be None or 'device' (the "
                             f"CPU's one memory), got {memory_kind!r}")
        self._device = CPU
        self._memory_kind = "device"

    @property
    def device_set(self) -> set[Device]:
        """``{device}``."""
        return {self._device}

    @property
    def addressable_devices(self) -> set[Device]:
        """``{device}``: this process sees every device."""
        return {self._device}

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def memory_kind(self) -> str:
        """``'device'``."""
        return self._memory_kind

    @property
    def num_devices(self) -> int:
        """1."""
        return 1

    @property
    def is_fully_addressable(self) -> bool:
        """True: one process."""
        return True

    @property
    def is_fully_replicated(self) -> bool:
        """True: the one device holds all of the array."""
        return True

    @property
    def has_addressable_devices(self) -> bool:
        """True."""
        return True

    def shard_shape(self, global_shape: Any) -> tuple[int, ...]:
        """The shape of each shard: ``global_shape`` itself."""
        return _check_shape(global_shape, "shard_shape")

    def devices_indices_map(self, global_shape: Any) -> dict[Device, tuple[slice, ...]]:
        """``{device: index}``, the index of the whole array (``slice(None)`` per axis)."""
        shape = _check_shape(global_shape, "devices_indices_map")
        return {self._device: (slice(None),) * len(shape)}

    def addressable_devices_indices_map(self, global_shape: Any) -> dict[Device,
                                                                         tuple[slice, ...]]:
        """As :meth:`devices_indices_map` (every device is addressable)."""
        shape = _check_shape(global_shape, "addressable_devices_indices_map")
        return {self._device: (slice(None),) * len(shape)}

    def is_equivalent_to(self, other: Any, ndim: int) -> bool:
        """Whether ``other`` places an array of ``ndim`` dimensions the same way."""
        return isinstance(other, SingleDeviceSharding)

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        """This sharding with memory kind ``kind`` (only ``'device'``)."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding)

    def __hash__(self) -> int:
        return hash((SingleDeviceSharding, self._device))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    def __reduce__(self):
        return (SingleDeviceSharding, (self._device,))


ONE = SingleDeviceSharding(CPU)


def make_single_device_sharding(device: Any) -> SingleDeviceSharding:
    """``SingleDeviceSharding(device)`` (JAX's ``make_single_device_sharding``)."""
    return SingleDeviceSharding(device)


class Shard:
    """One shard of an array (JAX's ``jax.Shard``): its ``device``, its ``index`` in the
    global array, its ``replica_id`` and its values, ``data`` (an array)."""
    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device: Device, index: tuple[slice, ...], replica_id: int, data: Any):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


# -- the array attributes (ArrayBase reads them here: the Tensor is below this layer) -------

def array_sharding(x: Any) -> SingleDeviceSharding:
    """``x.sharding``."""
    return ONE


def array_devices(x: Any) -> set[Device]:
    """``x.devices()``."""
    return {CPU}


def array_shards(x: Any) -> list[Shard]:
    """``x.addressable_shards`` (and ``x.global_shards``): one shard, the whole array."""
    return [Shard(CPU, (slice(None),) * x.ndim, 0, x)]


def array_data(x: Any, index: int) -> Any:
    """``x.addressable_data(index)``: ``x`` itself for shard 0 (the only one)."""
    if index not in (0, -1):
        raise IndexError(f"addressable_data: index {index!r} out of range: the array has one "
                         f"shard (index 0)")
    return x


install_placement(sys.modules[__name__])


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
