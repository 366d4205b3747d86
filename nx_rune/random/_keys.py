"""Keys: seeding, split, fold_in and the raw Threefry hash."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from nx_rune import frontend as _F
from nx_rune import primitives as _P
from nx_rune.backend.random import _U32, _fold_in
from nx_rune.config import x64_enabled
from nx_rune.random._common import _dtype_of, _key_arg, _np, _out, _out_any, _shape, _traced, _val
from nx_rune.random._traced import _t_split
from nx_rune.typing import Array, ArrayLike

# ---------------------------------------------------------------------------------------------
# algorithms on key words (k0, k1): pure NumPy over the Threefry kernel
# ---------------------------------------------------------------------------------------------

def _seed_words(seed):
    """JAX's seeding of int64(seed) as [hi32, lo32]: x32 mode canonicalises the seed to 32 bits
    (hi32 = 0); x64 mode keeps its 64 bits (hi32 = (seed mod 2**64) >> 32)."""
    if isinstance(seed, (bool, np.bool_)):
        seed = int(seed)
    if isinstance(seed, int):
        if not -2**63 <= seed < 2**63:
            raise OverflowError(f"seed must fit in int64, got {seed}")
    else:
        arr = _np(seed, "seed")
        if arr.ndim != 0 or arr.dtype.kind not in "biu":
            raise TypeError(f"seed must be an integer scalar, got {arr.dtype} of shape "
                            f"{arr.shape}")
        seed = int(arr)
    hi = (seed % 2**64) >> 32 if x64_enabled() else 0
    return hi, seed & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------

# JAX's names of the threefry PRNG (its default, the one nx_rune implements)
_IMPLS = (None, "threefry2x32", "threefry")


def _check_impl(impl, fname):
    if impl not in _IMPLS:
        raise ValueError(f"{fname}: impl={impl!r} is not available: nx_rune implements JAX's "
                         f"default PRNG only, impl='threefry2x32'")


def key(seed: ArrayLike, *, impl: str | None = None) -> Array:
    """A PRNG key from an integer seed: uint32 Tensor of shape (2,).

    As JAX: the seed must fit in int64 (else OverflowError).  With x64 off (JAX's x32 mode) it
    is wrapped to 32 bits, ``[0, seed mod 2**32]``, so ``key(-1)`` is ``[0, 4294967295]``; in
    x64 mode its 64 bits give ``[(seed mod 2**64) >> 32, seed mod 2**32]``, so ``key(-1)`` is
    ``[4294967295, 4294967295]`` (seeds in [0, 2**31) give the same key in both modes).
    A traced integer seed (under jit or vmap) gives the same words.  ``impl``: JAX's keyword,
    None or ``"threefry2x32"`` (the only PRNG here; any other raises ValueError).
    """
    _check_impl(impl, "key")
    if _traced(seed):
        dt = _dtype_of(seed)
        if tuple(seed.shape) != () or dt.kind not in "biu":
            raise TypeError(f"seed must be an integer scalar, got {dt} of shape "
                            f"{tuple(seed.shape)}")
        s = seed.astype(np.uint64)
        lo = _F.bitwise_and(s, np.uint64(0xFFFFFFFF)).astype(_U32)
        if x64_enabled():
            hi = _F.bitwise_right_shift(s, np.uint64(32)).astype(_U32)
        else:
            hi = _F.zeros((), _U32)
        return _F.stack([hi, lo])
    return _out(np.array(_seed_words(seed), dtype=_U32))


def PRNGKey(seed: ArrayLike, *, impl: str | None = None) -> Array:
    """The same key as ``key(seed)``: uint32 Tensor of shape (2,)."""
    _check_impl(impl, "PRNGKey")
    return key(seed)


def split(key: ArrayLike, num: int | Sequence[int] = 2) -> Array:
    """Split ``key`` into new keys: uint32 Tensor of shape (num, 2), or ``(*num, 2)`` for a tuple.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.random.split(nx.random.key(0))
    Tensor([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
    """
    k = _key_arg(key)
    return _out_any(_t_split(k, _shape(num, "num")))


def fold_in(key: ArrayLike, data: ArrayLike) -> Array:
    """A new key from ``key`` and a 32-bit integer ``data``: uint32 Tensor of shape (2,)."""
    k = _key_arg(key)
    arr = _val(data, "data")
    if arr.ndim:
        raise TypeError(f"data must be a scalar, got an array of shape {tuple(arr.shape)}")
    if _dtype_of(arr).kind not in "biu":
        raise TypeError(f"data must be an integer, got {arr.dtype}")
    if isinstance(data, int) and not 0 <= data < 2**32:
        raise OverflowError(f"data must be in [0, 2**32) as a Python int, got {data}")
    if isinstance(k, tuple) and not _traced(arr):
        return _out(_fold_in(k, int(arr.astype(np.uint64, casting="unsafe")) & 0xFFFFFFFF))
    if isinstance(k, tuple):
        k = np.array(k, _U32)
    word = _F.reshape(arr.astype(np.uint64).astype(_U32), (1,))
    return _P.bind(_P.threefry_p, _F.asarray(k),
                   _F.concatenate([np.zeros(1, _U32), word]))


def threefry_2x32(key: ArrayLike, count: ArrayLike) -> Array:
    """The raw Threefry-2x32 hash of a uint32 ``count`` array under ``key`` (uint32 (2,)).

    As ``jax.extend.random.threefry_2x32``: returns a uint32 Tensor of ``count``'s shape.
    Runs as the primitive ``threefry_p``.
    """
    karr = _key_arg(key)
    if isinstance(karr, tuple):
        karr = _out(np.array(karr, _U32))
    carr = _val(count, "count")
    if _dtype_of(carr) != _U32:
        raise TypeError(f"count must have dtype uint32, got {carr.dtype}")
    return _P.bind(_P.threefry_p, karr, carr if _traced(carr) else _out(carr))


def _key_array(keys, name):
    """``keys`` checked to be raw keys: a uint32 array of shape (*batch, 2)."""
    arr = _val(keys, name)
    dt, shape = _dtype_of(arr), tuple(arr.shape)
    if dt != _U32 or not shape or shape[-1] != 2:
        raise TypeError(f"{name} must be PRNG key data: a uint32 array of shape (..., 2), got "
                        f"{dt} of shape {shape}")
    return arr


def key_data(keys: ArrayLike) -> Array:
    """The raw uint32 words of ``keys`` (shape ``(..., 2)``).

    nx_rune's keys are JAX's legacy raw keys (uint32 arrays of shape ``(..., 2)``), so this
    returns the keys themselves, as ``jax.random.key_data`` of those keys does.
    """
    arr = _key_array(keys, "keys")
    return arr if _traced(arr) else _out(arr)


def wrap_key_data(key_bits_array: ArrayLike, *, impl: str | None = None) -> Array:
    """Keys from their raw uint32 words (shape ``(..., 2)``), as ``jax.random.wrap_key_data``.

    ``impl`` must be None or ``"threefry2x32"``, the one implementation nx_rune has; the keys
    are returned as raw uint32 arrays (what every sampler here takes).
    """
    if impl is not None and impl != "threefry2x32":
        raise ValueError(f"impl: nx_rune implements only 'threefry2x32', got {impl!r}")
    arr = _key_array(key_bits_array, "key_bits_array")
    return arr if _traced(arr) else _out(arr)


def key_impl(keys: ArrayLike) -> str:
    """The name of the PRNG implementation of ``keys``: always ``"threefry2x32"``."""
    _key_array(keys, "keys")
    return "threefry2x32"
