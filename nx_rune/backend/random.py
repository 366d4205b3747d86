"""Random bits: threefry(key, counter), the Threefry-2x32 hash of ``nx_rune._kernels.threefry``
(bit-exact with JAX's).  The samplers built on it are registered by ``nx_rune.random``.

May import: ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
from nx_rune.backend._core import _impl, _out


@_impl("threefry")
def _threefry(key, counter):
    from nx_rune._kernels import threefry as K
    # a batch of keys (*batch, 2) hashes each its own block of the count (vmap over keys)
    fn = K.threefry_2x32 if key.ndim == 1 else K.threefry_2x32_keys
    return _out(fn(key._np(), counter._np()))
