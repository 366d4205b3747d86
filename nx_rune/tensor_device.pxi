# Included by tensor.pyx: the device arrays live on (the Array API's ``x.device``, with JAX's
# device attributes) and the hook that gives arrays JAX's placement attributes.

class Device:
    """The device arrays live on.  nx_rune computes on the CPU only, so there is one device,
    ``CPU`` (``x.device``); wherever a ``device=`` is accepted, it or the string ``"cpu"`` may
    be given."""
    __slots__ = ()
    # JAX's device attributes (``jax.Device``): the one CPU device, id 0
    id = 0
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    host_id = 0
    local_hardware_id = 0

    def __repr__(self):
        return "Device('cpu')"

    def __eq__(self, other):
        # JAX's device object (``nx.devices()[0]``) is the same device
        return other is self or (not isinstance(other, ArrayBase) and
                                 getattr(other, "platform", None) == "cpu" and
                                 getattr(other, "id", None) == 0)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash("nx_rune cpu device")

    def __str__(self):
        return "cpu"

    def __reduce__(self):
        return (_cpu_device, ())


def _cpu_device():
    return CPU


CPU = object.__new__(Device)


def check_device(device, name="device"):
    """``device`` as the CPU device (None means the CPU too); ValueError naming ``name`` for
    any other device."""
    if device is None or device is CPU or (isinstance(device, str) and device == "cpu"):
        return CPU
    if not isinstance(device, ArrayBase) and (
            getattr(device, "platform", None) == "cpu" or
            [getattr(d, "platform", None) for d in getattr(device, "device_set", ())] == ["cpu"]):
        return CPU      # JAX's device object (nx.devices()[0]) or a one-device sharding
    raise ValueError(f"{name}: nx_rune arrays live on the CPU only (device 'cpu', as "
                     f"x.device and nx.__array_namespace_info__().devices() give it), got "
                     f"{device!r}")


# the module giving arrays their placement attributes (nx_rune.sharding, a layer above: it
# installs itself when it loads)
_placement = None


def install_placement(module):
    """Make ``module`` answer ``x.sharding``, ``x.devices()`` and ``x.addressable_shards``."""
    global _placement
    _placement = module
