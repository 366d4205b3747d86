"""Counter-based random numbers with JAX semantics: ``nx.random``.

The streams are bit-for-bit those of **JAX 0.10.2** ``jax.random`` in its default
configuration: the ``threefry2x32`` implementation, ``jax_threefry_partitionable=True``
(the default since JAX 0.5.0) and legacy raw ``uint32[2]`` keys, in both of JAX's modes, as
nx_rune's x64 setting (``nx_rune.config``) selects: with x64 off (the default) seeds are
canonicalised to 32 bits and the default dtypes are float32 / int32 / uint32, as JAX's x32
mode; with x64 on seeds keep 64 bits and the defaults are float64 / int64 / uint64, as JAX's
x64 mode (so ``choice`` and ``randint`` draw 64-bit words there).  Asking explicitly for
float64, int64 or uint64 with x64 off gives the values JAX computes for those dtypes in x64
mode.

Exact with JAX: ``key``/``PRNGKey``, ``split``, ``fold_in``, ``bits``, ``uniform`` (including
XLA:CPU's fused multiply-add for a non-default range), ``randint``, ``bernoulli``,
``permutation``, ``choice`` and ``threefry_2x32``. Where JAX's values go through XLA's own
``log``/``log1p``/``erf`` we use correctly rounded ones, so ``normal`` (JAX's erfinv
polynomial, fused as XLA fuses it), ``truncated_normal`` and ``gumbel`` agree with JAX to one
or two ulps, not always bit for bit; ``categorical`` and ``choice(p=..., replace=False)``
take an argmax/top-k of Gumbel noise and have given JAX's indices in every case checked.

The values are defined by the NumPy chains below (``*_from_bits``); ``uniform``, ``normal``,
``truncated_normal`` and ``gumbel`` in float32/float64 with scalar parameters run instead as
one fused kernel pass from counter to float (``_kernels/threefry``, threaded like the bits),
which gives the same values bit for bit (tests/test_random.py checks every float32 mantissa).

A key is a uint32 Tensor of shape (2,). Every function takes Tensors or NumPy arrays and
returns Tensors.  Every function also takes traced values (under ``jit``, ``vmap``, ``grad``
and their compositions): a traced key draws through the primitives ``threefry_bits`` (the
bits) and ``threefry_sample`` (``uniform``, ``normal``, ``truncated_normal`` and ``gumbel``
with static scalar parameters), whose implementation is the eager kernels above (a batch of
keys under vmap: one kernel call for all of them), and the rest of each chain runs as nx
operations, with the same values bit for bit; the samples are differentiable in their
parameters (``uniform``'s bounds, ``truncated_normal``'s bounds, the entries ``permutation``
and ``choice`` pick), never in the key.  Shapes, dtypes and population sizes stay static.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Sequence

import numpy as np

from nx_rune import primitives as _P
from nx_rune.config import x64_enabled
from nx_rune.dtypes import default_float, default_int
from nx_rune._kernels import threefry as _K
from nx_rune import frontend as _F
from nx_rune.autodiff import batching as _batching
from nx_rune.autodiff.batching import BatchTracer as _BatchTracer
from nx_rune.autodiff.custom import custom_jvp as _custom_jvp
from nx_rune.frontend import asarray
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tensor import wrap_result as _wrap_result
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal",
           "truncated_normal", "randint", "bernoulli", "categorical", "permutation",
           "choice", "gumbel", "threefry_2x32"]

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}
_SQRT2 = math.sqrt(2.0)


# ---------------------------------------------------------------------------------------------
# conversions at the boundary
# ---------------------------------------------------------------------------------------------

def _out(arr):
    """Wrap a NumPy result as a Tensor (no copy when it is C-contiguous)."""
    return asarray(np.asarray(arr))


def _np(x, name):
    """Concrete NumPy values of ``x``: a Tensor, ndarray, scalar or nested sequence.

    Python scalars keep full precision (JAX's weak types: cast later to the dtype in use);
    nested sequences follow ``nx.asarray`` (the mode's defaults).
    """
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, ArrayBase):
        raise TypeError(f"{name}: nx.random needs concrete values, got a traced "
                        f"{type(x).__name__}")
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        return np.asarray(x)
    try:
        return asarray(x).numpy()
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def _check_key(dtype, shape, name):
    """Raise naming ``name`` unless (dtype, shape) is a single raw key's: uint32, (2,)."""
    if dtype != _U32:
        raise TypeError(f"{name} must be a PRNG key: a uint32 array of shape (2,), "
                        f"got dtype {dtype}")
    if len(shape) == 0 or shape[-1] != 2:
        raise TypeError(f"{name} must be a PRNG key: a uint32 array of shape (2,), "
                        f"got shape {shape}")
    if len(shape) > 1:
        raise ValueError(f"{name} must be a single key of shape (2,), got a batch of keys "
                         f"of shape {shape}")


def _key_words(k, name="key"):
    """The two uint32 words of a single raw key, as Python ints; raise naming ``name``."""
    arr = _np(k, name)
    _check_key(arr.dtype, arr.shape, name)
    return int(arr[0]), int(arr[1])


def _shape(shape, name="shape"):
    """A shape tuple of non-negative ints (a bare int means a 1-D shape)."""
    if isinstance(shape, ArrayBase) and not isinstance(shape, Tensor) or (
            isinstance(shape, (tuple, list))
            and any(isinstance(d, ArrayBase) and not isinstance(d, Tensor) for d in shape)):
        raise TypeError(f"{name} must be static (Python ints): nx.random cannot draw a traced "
                        f"number of values; under jit pass it as a static argument "
                        f"(static_argnums)")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    elif getattr(shape, "ndim", None) == 0:  # a 0-d integer tensor or ndarray
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name} must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{name} must have non-negative sizes, got {shape}")
    if math.prod(d or 1 for d in shape) * 8 > 2**63 - 1:    # NumPy's limit, 8-byte items
        raise ValueError(f"{name} {shape} is too large to address (counting the nonzero "
                         f"sizes)")
    return shape


_KIND_NAMES = {"u": "an unsigned integer dtype", "f": "a float dtype",
               "fc": "a float or complex dtype"}


def _dtype(dtype, default, kinds, fn):
    """``dtype`` (None: ``default``) checked to be of one of ``kinds``; ValueError otherwise."""
    dt = np.dtype(default if dtype is None else dtype)
    if dt.kind not in kinds:
        raise ValueError(f"dtype of {fn} must be {_KIND_NAMES[kinds]}, got {dt}")
    return dt


def _check_param_shape(fn, shape, *param_shapes):
    """JAX's rule: the parameters broadcast to ``shape`` and broadcasting leaves it unchanged."""
    try:
        out = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        out = None
    if out != shape:
        raise ValueError(f"{fn}: parameter shapes {list(param_shapes)} must broadcast to "
                         f"the shape argument {shape}")


def _size(shape):
    return math.prod(shape)


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


def _random_bits(k, nbits, shape):
    """Partitionable ``random_bits``: element i hashes counter (i >> 32, i & 0xFFFFFFFF).

    ``k``: the key words (k0, k1), or the stream itself (see ``_sample_keys``): the uint32
    (nbits <= 32) or uint64 (nbits 64) bits, of which a copy is returned.
    """
    if isinstance(k, np.ndarray):
        return k.astype(_UINT[nbits]).reshape(shape)
    n = _size(shape)
    if nbits == 64:
        out = _K.iota_bits64(k[0], k[1], n)
    else:
        out = _K.iota_bits32(k[0], k[1], n)
        if nbits < 32:
            out = out.astype(_UINT[nbits])      # keeps the low bits, as XLA's convert
    return out.reshape(shape)


def _split(k, shape):
    """Partitionable split: new key i is the block of counter (0, i) = fold_in(key, i)."""
    return _K.iota_pairs(k[0], k[1], _size(shape)).reshape(*shape, 2)


def _split2(k):
    pairs = _K.iota_pairs(k[0], k[1], 2)
    return (int(pairs[0, 0]), int(pairs[0, 1])), (int(pairs[1, 0]), int(pairs[1, 1]))


def _fold_in(k, data):
    y0, y1 = _K.threefry2x32_block(k[0], k[1], np.zeros(1, _U32), np.array([data], _U32))
    return np.array([y0[0], y1[0]], dtype=_U32)


_SPLITTER = 134217729.0      # 2**27 + 1: Veltkamp's split of a float64 into 26 + 27 bits


def _two_sum(a, b):
    """``s + e == a + b`` exactly, ``s = fl(a + b)`` (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    """``p + e == a * b`` exactly, ``p = fl(a * b)`` (Dekker; no overflow assumed)."""
    p = a * b
    ca = _SPLITTER * a
    ah = ca - (ca - a)
    cb = _SPLITTER * b
    bh = cb - (cb - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _add_round_odd(a, b):
    """``a + b`` rounded to odd: when inexact, of the two neighbours take the odd one."""
    s, e = _two_sum(a, b)
    fix = (e != 0) & ((s.view(np.int64) & 1) == 0)
    return np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def _fma64(a, b, c):
    """Correctly rounded float64 ``a * b + c`` (Boldo & Melquiond's emulation via round-to-odd)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    ph, pl = _two_prod(a, b)
    th, tl = _two_sum(c, ph)
    return th + _add_round_odd(tl, pl)


def _fma(a, b, c, dtype):
    """``a * b + c`` rounded once to ``dtype`` (float32/64), as XLA:CPU's fused multiply-add."""
    if dtype == np.float64:
        return _fma64(a, b, c)
    # The product of two float32 is exact in float64; only the sum rounds before float32.
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(dtype)


# The samplers below are defined by NumPy operations on the random bits (the "reference":
# ``*_from_bits``); for float32 and float64 with scalar parameters the fused kernels in
# ``_kernels/threefry`` compute the same values in one pass (see ``_fused_*``).

def _unit_floats_from_bits(b, dtype):
    """Floats in [0, 1) from the top mantissa bits: bitcast((b >> (nbits - nmant)) | 1.0) - 1.

    ``b``: unsigned bits of ``dtype``'s width (modified in place).
    """
    nbits, nmant = np.finfo(dtype).bits, np.finfo(dtype).nmant
    b >>= _UINT[nbits].type(nbits - nmant)
    b |= np.array(1.0, dtype).view(_UINT[nbits])
    f = b.view(dtype)
    f -= dtype.type(1.0)
    return f


def _unit_floats(k, shape, dtype):
    return _unit_floats_from_bits(_random_bits(k, np.finfo(dtype).bits, shape), dtype)


def _is_unit_range(lo, hi):
    return lo.ndim == 0 and hi.ndim == 0 and lo == 0 and hi == 1 and not np.signbit(lo)


def _uniform_from_bits(b, dtype, lo, hi):
    """``max(lo, floats * (hi - lo) + lo)`` with XLA:CPU's fused multiply-add (lo, hi: arrays
    of ``dtype`` broadcasting against ``b``)."""
    floats = _unit_floats_from_bits(b, dtype)
    if _is_unit_range(lo, hi):
        return floats                       # fma(f, 1, 0) == f and f >= 0
    span = hi - lo
    if dtype == np.float16:
        scaled = floats * span + lo         # XLA does not fuse float16 (two roundings)
    else:
        scaled = _fma(floats, span, lo, dtype)
    return np.maximum(lo, scaled)


def _uniform(k, shape, dtype, minval=0.0, maxval=1.0):
    """``max(minval, floats * (maxval - minval) + minval)`` with XLA:CPU's fused multiply-add."""
    lo = np.asarray(minval).astype(dtype)
    hi = np.asarray(maxval).astype(dtype)
    fused = _fused_uniform(k, shape, dtype, lo, hi)
    if fused is not None:
        return fused
    b = _random_bits(k, np.finfo(dtype).bits, shape)
    return _uniform_from_bits(b, dtype, lo, hi).reshape(shape)


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), as XLA evaluates it:
# Horner in t, highest degree first.  float32: t = w - 2.5 if w < 5 else sqrt(w) - 3.
_ERFINV32 = (
    (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941),
    (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
     -0.0076224613, 0.00943887047, 1.00167406, 2.83297682),
)
# float64: t = w - 3.125 if w < 6.25; sqrt(w) - 3.25 if w < 16; else sqrt(w) - 5.
_ERFINV64 = (
    (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
     1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
     6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
     2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
     1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
     4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
     0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
     0.24015818242558961693, 1.6536545626831027356),
    (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
     1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
     2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
     6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
     0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
     -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
     3.0838856104922207635),
    (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
     -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
     2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
     -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
     7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
     1.0103004648645343977, 4.8499064014085844221),
)


def _coefficient_table(branches):
    """Rows of Horner coefficients (highest degree first), left-padded with exact zeros."""
    degree = max(len(c) for c in branches)
    return np.array([(0.0,) * (degree - len(c)) + tuple(c) for c in branches])


_ERFINV32_TABLE = _coefficient_table(
    [[float(np.float32(c)) for c in cs] for cs in _ERFINV32])
_ERFINV64_TABLE = _coefficient_table(_ERFINV64)


def _horner(t, masks, table, fused32):
    """Horner in ``t`` in float64; element i uses row j of ``table`` where ``masks[j - 1][i]``
    is the last mask set (row 0 where none is).

    ``fused32``: round to float32 after each ``p * t + c`` step. With float32 ``p``, ``t`` and
    ``c`` the product is exact in float64, so each step is float32's fused multiply-add.
    """
    def coefficient(i):
        c = table[0, i]
        for j, mask in enumerate(masks, start=1):
            c = np.where(mask, table[j, i], c)
        return c

    t = t.astype(np.float64)
    p = coefficient(0) * np.ones_like(t)
    for i in range(1, table.shape[1]):
        p *= t
        p += coefficient(i)
        if fused32:
            p = p.astype(np.float32).astype(np.float64)
    return p


def _erfinv32(x):
    """Giles' float32 erfinv as XLA:CPU evaluates it (fused Horner steps)."""
    x = np.asarray(x, np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        # log1p correctly rounded (via float64) is nearer XLA's float32 log1p than NumPy's.
        w = (-np.log1p((x * -x).astype(np.float64))).astype(np.float32)
        large = w >= np.float32(5)
        t = np.where(large, np.sqrt(w) - np.float32(3), w - np.float32(2.5))
        p = _horner(t, [large], _ERFINV32_TABLE, True).astype(np.float32)
        return np.where(np.abs(x) == 1, x * np.float32(np.inf), p * x)


def _erfinv64(x):
    """Giles' float64 erfinv (three branches), plain float64 Horner."""
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log1p(x * -x)
        mid, high = w >= 6.25, w >= 16
        root = np.sqrt(w)
        t = np.where(high, root - 5.0, np.where(mid, root - 3.25, w - 3.125))
        p = _horner(t, [mid, high], _ERFINV64_TABLE, False)
        return np.where(np.abs(x) == 1, x * np.inf, p * x)


def _erfinv(x, dtype):
    if dtype == np.float64:
        return _erfinv64(x)
    return _erfinv32(x.astype(np.float32)).astype(dtype)


def _normal_lo(dtype):
    return np.nextafter(dtype.type(-1), dtype.type(0))


def _normal_from_bits(b, dtype):
    u = _uniform_from_bits(b, dtype, np.asarray(_normal_lo(dtype)), np.asarray(dtype.type(1)))
    return (dtype.type(_SQRT2) * _erfinv(u, dtype)).astype(dtype)


def _normal_real(k, shape, dtype):
    fused = _fused_erfinv(k, shape, dtype, _normal_lo(dtype), dtype.type(1))
    if fused is not None:
        return fused
    b = _random_bits(k, np.finfo(dtype).bits, shape)
    return _normal_from_bits(b, dtype)


def _normal(k, shape, dtype):
    if dtype.kind != "c":
        return _normal_real(k, shape, dtype)
    real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    k_re, k_im = _split2(k)
    re = _normal_real(k_re, shape, real).astype(dtype)
    im = _normal_real(k_im, shape, real).astype(dtype)
    return ((re + 1j * im) / dtype.type(_SQRT2)).astype(dtype)


def _log(x):
    """Natural log, correctly rounded to ``x``'s dtype (nearer XLA's than NumPy's float32 log)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x.astype(np.float64)).astype(x.dtype)


def _gumbel_from_bits(b, dtype):
    u = _uniform_from_bits(b, dtype, np.asarray(np.finfo(dtype).tiny), np.asarray(dtype.type(1)))
    return -_log(-_log(u))


def _gumbel(k, shape, dtype):
    fused = _fused_gumbel(k, shape, dtype)
    if fused is not None:
        return fused
    return _gumbel_from_bits(_random_bits(k, np.finfo(dtype).bits, shape), dtype)


def _clip_to(val, dtype):
    """Integer ``val`` clipped (not wrapped) into ``dtype``'s range, converted to ``dtype``."""
    info, src = np.iinfo(dtype), np.iinfo(val.dtype)
    return np.clip(val, max(info.min, src.min), min(info.max, src.max)).astype(dtype)


def _urem(a, n):
    """XLA's unsigned remainder: ``a % 0 == a``."""
    safe = np.where(n == 0, 1, n).astype(n.dtype)
    return np.where(n == 0, a, a % safe)


def _int_param(x, name):
    """An integer array of ``x``'s values (floats truncate, as ``astype(int)``); a traced
    value stays traced."""
    arr = _val(x, name)
    if _dtype_of(arr).kind in "bf":
        return arr.astype(np.int64)
    if _dtype_of(arr).kind not in "iu":
        raise TypeError(f"{name} must be an integer, got {arr.dtype}")
    return arr


def _randint_span(minval, maxval, dtype):
    """(lo, span, mult) of JAX's randint for concrete bounds: the bounds clipped to ``dtype``,
    the span as unsigned (wrapping: 0 is the full range) and (2**(nbits/2) % span)**2 % span."""
    nbits = dtype.itemsize * 8
    udtype = _UINT[nbits]
    out_of_range = maxval > np.iinfo(dtype).max
    lo = _clip_to(minval, dtype)
    hi = _clip_to(maxval, dtype)
    one = udtype.type(1)
    with np.errstate(over="ignore"):        # unsigned arithmetic wraps, as in XLA
        span = np.asarray(hi.astype(udtype) - lo.astype(udtype))
        span = np.where(hi <= lo, one, span)
        span = np.where(out_of_range & (hi > lo), span + one, span).astype(udtype)
        mult = _urem(np.asarray(one << udtype.type(nbits // 2), udtype), span)
        mult = _urem(mult * mult, span)
    return lo, span, mult


def _randint(k, shape, minval, maxval, dtype):
    """JAX's randint: two words of bits per value, reduced modulo the span (biased, as JAX)."""
    nbits = dtype.itemsize * 8
    udtype = _UINT[nbits]
    lo, span, mult = _randint_span(minval, maxval, dtype)
    k1, k2 = _split2(k)
    higher = _random_bits(k1, nbits, shape)
    lower = _random_bits(k2, nbits, shape)
    with np.errstate(over="ignore"):
        offset = _urem(_urem(higher, span) * mult + _urem(lower, span), span)
        out = (np.broadcast_to(lo, shape).astype(udtype) + offset).astype(udtype)
    return out.view(dtype).reshape(shape)


def _shuffle(k, x, axis):
    """Sort by fresh random uint32 keys (stable) for ceil(3 ln(size) / ln(2**32 - 1)) rounds."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        k, sub = _split2(k)
        sort_keys = _random_bits(sub, 32, x.shape)
        order = np.argsort(sort_keys, axis=axis, kind="stable")
        x = np.take_along_axis(x, order, axis=axis)
    return x


def _permutation(k, x, axis, independent):
    if x.ndim == 1 or independent:
        return _shuffle(k, x, axis)
    ind = _shuffle(k, np.arange(x.shape[axis], dtype=np.int32), 0)
    return np.take(x, ind, axis=axis)


def _axis(axis, ndim, name="axis"):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def _float_dtype_of(arr):
    """JAX's promote_dtypes_inexact for a concrete array: ints and bools give float32 (64-bit
    ints float64 in x64 mode, where JAX has them)."""
    if arr.dtype.kind in "fc":
        return arr.dtype
    if arr.dtype.itemsize == 8 and x64_enabled():
        return np.dtype(np.float64)
    return np.dtype(np.float32)


# ---------------------------------------------------------------------------------------------
# fused kernels: the same values as the ``*_from_bits`` references, in one pass
# ---------------------------------------------------------------------------------------------

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_F64_SAFE = 2.0 ** 900       # _fma64's emulation is exact for magnitudes in [1/_F64_SAFE, _F64_SAFE]


def _scalar_params(*arrays):
    return all(np.ndim(a) == 0 for a in arrays)


def _plain_bound(x):
    """A finite bound that is not -0.0 (at -0.0 np.maximum's choice between zeros of opposite
    sign is NumPy's own business: those calls stay on the reference)."""
    return bool(np.isfinite(x)) and not (x == 0 and np.signbit(x))


def _f64_safe(x):
    return x == 0 or 1.0 / _F64_SAFE <= abs(float(x)) <= _F64_SAFE


def _range_params(dtype, lo, hi):
    """(lo, span) for the fused uniform of ``dtype`` over [lo, hi), or None when the
    reference must compute it (non-scalar, non-finite or extreme parameters)."""
    if not _scalar_params(lo, hi):
        return None
    span = hi - lo
    if not (_plain_bound(lo) and np.isfinite(span)):
        return None
    if dtype == _F64 and not (_f64_safe(lo) and _f64_safe(span)):
        return None
    return float(lo), float(span)


def _bits_at(k, nbits, index):
    """The random bits of flat elements ``index`` of the iota stream (uint of nbits)."""
    if isinstance(k, np.ndarray):
        return k[index].astype(_UINT[nbits])
    fn = _K.iota_bits64 if nbits == 64 else _K.iota_bits32
    return np.concatenate([fn(k[0], k[1], 1, int(i)) for i in index]).astype(_UINT[nbits])


def _sample32(k, n, op, **params):
    """``sample_f32`` of key words ``k``, or ``transform_f32`` of the stream ``k`` (an array)."""
    if isinstance(k, np.ndarray):
        return _K.transform_f32(k, op, **params)
    return _K.sample_f32(k[0], k[1], n, op, **params)


def _fused32(k, shape, reference, op, **params):
    """``sample_f32`` over ``shape``, its hard elements redone by ``reference(bits)``."""
    out, hard = _sample32(k, _size(shape), op, **params)
    if hard is None:                        # more than the kernel lists: all by the reference
        return reference(_random_bits(k, 32, shape)).reshape(shape)
    if hard.size:
        out[hard] = reference(_bits_at(k, 32, hard))
    return out.reshape(shape)


def _fused_uniform(k, shape, dtype, lo, hi):
    if dtype == _F32 or dtype == _F64:
        if _is_unit_range(lo, hi):
            prm = (0.0, 1.0)
        else:
            prm = _range_params(dtype, lo, hi)
        if prm is None:
            return None
        ranged = not _is_unit_range(lo, hi)
        if dtype == _F64:
            if isinstance(k, np.ndarray):       # a given stream: the reference
                return None
            return _K.uniform_f64(k[0], k[1], _size(shape), prm[0], prm[1], ranged).reshape(shape)
        if not ranged:
            return _sample32(k, _size(shape), "unit")[0].reshape(shape)
        return _sample32(k, _size(shape), "uniform", lo=prm[0], span=prm[1])[0].reshape(shape)
    return None


def _fused_erfinv(k, shape, dtype, a, b, clip_lo=None, clip_hi=None):
    """sqrt(2) * erfinv of the uniforms on [a, b) (then clipped): ``normal`` (a = -1 + ulp,
    b = 1) and ``truncated_normal``; None where the reference computes it."""
    if dtype != _F32 and (dtype != _F64 or isinstance(k, np.ndarray)):
        return None
    prm = _range_params(dtype, a, b)
    clip = clip_lo is not None
    if prm is None or (clip and not (_scalar_params(clip_lo, clip_hi) and clip_lo != 0
                                     and clip_hi != 0 and not np.isnan(clip_lo)
                                     and not np.isnan(clip_hi))):
        return None
    if dtype == _F32:
        if clip:
            def reference(bits):
                return _truncated_normal_from_bits(bits, dtype, np.asarray(a), np.asarray(b),
                                                   clip_lo, clip_hi)
            return _fused32(k, shape, reference, "truncated_normal", lo=prm[0], span=prm[1],
                            clip_lo=float(clip_lo), clip_hi=float(clip_hi))
        return _fused32(k, shape, lambda bits: _normal_from_bits(bits, dtype), "normal",
                        lo=prm[0], span=prm[1])
    # float64: the uniforms and x * -x fused, NumPy's own log1p, then erfinv fused
    x, sq = _K.uniform_f64(k[0], k[1], _size(shape), prm[0], prm[1], True, square=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log1p(sq, out=sq)
    if clip:
        _K.erfinv_f64(x, sq, float(clip_lo), float(clip_hi))
    else:
        _K.erfinv_f64(x, sq)
    return x.reshape(shape)


def _fused_gumbel(k, shape, dtype):
    tiny = np.finfo(dtype).tiny
    if dtype == _F32:
        return _fused32(k, shape, lambda bits: _gumbel_from_bits(bits, dtype), "gumbel",
                        lo=float(tiny), span=float(dtype.type(1) - tiny))
    if dtype == _F64 and not isinstance(k, np.ndarray):
        u = _K.uniform_f64(k[0], k[1], _size(shape), float(tiny), float(1.0 - tiny), True)
        return (-_log(-_log(u))).reshape(shape)
    return None


# ---------------------------------------------------------------------------------------------
# traced values (jit, grad, vmap inside jit): the same algorithms in nx's own operations
# ---------------------------------------------------------------------------------------------
#
# Under a transformation the key (or a parameter: bounds, probabilities, logits, the array to
# permute) is a tracer, not numbers.  A traced key draws its bits (``threefry_bits``) or, with
# concrete scalar parameters, its whole sample (``threefry_sample``) through one primitive that
# runs the eager kernels; the rest of the chains above runs op for op with ``nx`` operations,
# so jit records them, vmap batches them and grad differentiates them through their
# parameters (never through the key); a concrete key keeps its fast bits.  The
# values are those of the concrete path bit for bit (tests/test_trust_random.py checks
# jit, vmap and grad against eager and JAX).  A key here is either a pair of Python ints
# (concrete) or a traced uint32 array of shape (2,).

_F16 = np.dtype(np.float16)


def _traced(x):
    return isinstance(x, ArrayBase) and not isinstance(x, Tensor)


def _val(x, name):
    """A traced value as it is, anything else as its NumPy array (as ``_np``)."""
    return x if _traced(x) else _np(x, name)


def _dtype_of(x):
    return np.dtype(x.dtype)


def _key_arg(k, name="key"):
    """The key as a pair of ints (concrete) or a checked traced uint32 (2,) array."""
    if not _traced(k):
        return _key_words(k, name)
    _check_key(_dtype_of(k), tuple(k.shape), name)
    return k


def _iota_words(n):
    """The partitionable counters of elements 0..n-1: (i >> 32, i & 0xFFFFFFFF) as uint32."""
    i = np.arange(n, dtype=np.uint64)
    return (i >> np.uint64(32)).astype(_U32), (i & np.uint64(0xFFFFFFFF)).astype(_U32)


def _t_block(k, x0, x1):
    """The Threefry blocks (y0, y1) of counters (x0[i], x1[i]) under traced key ``k``: the
    primitive hashes the halves of its count, so the lanes go in one after the other."""
    n = x0.shape[0]
    y = _P.bind(_P.threefry_p, k, _F.concatenate([x0, x1]))
    return y[:n], y[n:]


def _t_bits(k, nbits, shape):
    """``_random_bits``; a traced key binds ``threefry_bits`` (one kernel call, as eager)."""
    if isinstance(k, tuple):
        return _random_bits(k, nbits, shape)
    return _P.bind(_P.threefry_bits_p, k, nbits=nbits, shape=tuple(shape))


_SAMPLE_DISTS = ("uniform", "normal", "truncated_normal", "gumbel")


def _sample(k, dist, shape, dtype, params):
    """The eager sampler ``dist`` of key words ``k`` with scalar parameters ``params``
    (Python floats, exact values of ``dtype``): the implementation of ``threefry_sample``."""
    dt = np.dtype(dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if dist == "uniform":
            return _uniform(k, shape, dt, *(np.asarray(v).astype(dt) for v in params))
        if dist == "normal":
            return _normal(k, shape, dt)
        if dist == "truncated_normal":
            return _truncated_normal(k, shape, dt, *(np.asarray(v).astype(dt) for v in params))
        return _gumbel(k, shape, dt)


# A batch of keys (vmap over keys): the bits of the keys come from one kernel call
# (iota_bits*_keys) and are transformed together, with ``k`` the stream itself in the samplers
# above.  float32: the fused transform over all of them.  float16 (always the NumPy reference)
# and float64 draws of at most _F64_STREAM values per key (the reference costs less than a
# kernel call per key there): in groups of keys of at most _STREAM_CHUNK values, which the
# reference's temporaries keep in cache.  Larger float64 draws and complex normals draw key by
# key through the fused kernels.
_F64_STREAM = 32
_STREAM_CHUNK = 8192


def _keys_stream(words, nbits, n):
    """The iota bits of each key of ``words`` (b, 2): uint32 (b, n), or uint64 for 64 bits."""
    return (_K.iota_bits64_keys if nbits == 64 else _K.iota_bits32_keys)(words, n)


def _bits_keys(words, nbits, shape):
    """``_random_bits`` of each key of ``words`` (*batch, 2): (*batch, *shape)."""
    out = _keys_stream(words, nbits, _size(shape))
    if nbits < 32:
        out = out.astype(_UINT[nbits])
    return out.reshape(words.shape[:-1] + tuple(shape))


def _sample_keys(words, dist, shape, dtype, params):
    """``_sample`` of each key of ``words`` (*batch, 2): (*batch, *shape)."""
    dt = np.dtype(dtype)
    batch, n = words.shape[:-1], _size(shape)
    flat = words.reshape(-1, 2)
    out = np.empty((flat.shape[0], n), dt)
    if dt.kind == "c" or (dt == _F64 and n > _F64_STREAM):
        for i, (k0, k1) in enumerate(flat.tolist()):
            out[i] = _sample((k0, k1), dist, shape, dt, params).reshape(n)
    else:
        group = max(1, flat.shape[0] if dt == _F32 else _STREAM_CHUNK // max(n, 1))
        for i in range(0, flat.shape[0], group):
            stream = _keys_stream(flat[i:i + group], np.finfo(dt).bits, n).reshape(-1)
            out[i:i + group] = _sample(stream, dist, (stream.size,), dt, params).reshape(-1, n)
    return out.reshape(batch + tuple(shape))



# -- the sampler primitives' implementations (registered on them here, see primitives.py) ------

def _key_batch(key):
    """The uint32 words of a key (2,) or a batch of keys (*batch, 2), as an ndarray."""
    words = key._np()
    if words.dtype != np.uint32 or words.ndim == 0 or words.shape[-1] != 2:
        raise TypeError(f"key must be a uint32 array of shape (*batch, 2), got {words.dtype} "
                        f"of shape {words.shape}")
    return words


def _threefry_bits_impl(key, *, nbits, shape):
    """``threefry_bits``: a key (2,) draws as ``bits``; a batch of keys each its own draw."""
    if nbits not in _UINT:
        raise ValueError(f"nbits must be 8, 16, 32 or 64, got {nbits!r}")
    words = _key_batch(key)
    if words.ndim == 1:
        return _wrap_result(_random_bits((int(words[0]), int(words[1])), nbits, shape))
    return _wrap_result(_bits_keys(words, nbits, shape))


def _threefry_sample_impl(key, *, dist, shape, dtype, params):
    """``threefry_sample``: ``dist``'s draws with static scalar ``params`` for each key."""
    if dist not in _SAMPLE_DISTS:
        raise ValueError(f"dist must be one of {', '.join(_SAMPLE_DISTS)}, got {dist!r}")
    n_params = 2 if dist in ("uniform", "truncated_normal") else 0
    if len(params) != n_params:
        raise ValueError(f"params of {dist} must be {n_params} floats, got {params!r}")
    words = _key_batch(key)
    if words.ndim == 1:
        return _wrap_result(_sample((int(words[0]), int(words[1])), dist, shape, dtype, params))
    return _wrap_result(_sample_keys(words, dist, shape, dtype, params))


_P.threefry_bits_p.def_impl(_threefry_bits_impl)
_P.threefry_sample_p.def_impl(_threefry_sample_impl)

def _static_params(*values):
    """Concrete scalar parameters as Python floats for ``threefry_sample``, or None where they
    must stay arrays: non-scalars, NaNs (whose payloads a float parameter would lose) and
    -0.0 (which a float parameter would merge with 0.0 when jit merges equal operations)."""
    out = []
    for v in values:
        if np.ndim(v) != 0:
            return None
        v = np.asarray(v)
        if np.isnan(v) or (v == 0 and np.signbit(v)):
            return None
        out.append(float(v))
    return tuple(out)


def _bind_sample(k, dist, shape, dtype, params=()):
    return _P.bind(_P.threefry_sample_p, k, dist=dist, shape=tuple(shape), dtype=np.dtype(dtype),
                   params=params)


def _t_split(k, shape):
    if isinstance(k, tuple):
        return _split(k, shape)
    hi, lo = _iota_words(_size(shape))
    y0, y1 = _t_block(k, hi, lo)
    return _F.reshape(_F.stack([y0, y1], axis=-1), (*shape, 2))


def _t_split2(k):
    if isinstance(k, tuple):
        return _split2(k)
    pair = _t_split(k, (2,))
    return pair[0], pair[1]


def _t_unit(b, dtype):
    """``_unit_floats_from_bits``: the top ``nmant`` bits m give m * 2**-nmant, which is the
    value of bitcast(m | 1.0) - 1 exactly."""
    nbits, nmant = np.finfo(dtype).bits, np.finfo(dtype).nmant
    m = _F.bitwise_right_shift(b, _UINT[nbits].type(nbits - nmant))
    return m.astype(dtype) * dtype.type(2.0 ** -nmant)


def _fma_value(a, b, c):
    """``_fma`` in nx operations (float16: two roundings, as XLA)."""
    dt = _dtype_of(a)
    if dt == _F16:
        return a * b + c
    if dt == _F32:
        return (a.astype(_F64) * b.astype(_F64) + c.astype(_F64)).astype(_F32)
    ph, pl = _two_prod(a, b)
    th, tl = _two_sum(c, ph)
    return th + _t_add_round_odd(tl, pl)


def _t_add_round_odd(a, b):
    """``_add_round_odd``: the parity of the last significand bit of |s| is that of |s| / u,
    u the gap to the next float towards zero (exact: |s| is a multiple of u)."""
    s, e = _two_sum(a, b)
    m = _F.abs(s)
    gap = m - _F.nextafter(m, _F.zeros_like(m))
    q = _F.where(gap > 0, m / _F.where(gap > 0, gap, 1.0), 0.0)
    even = _F.remainder(q, 2.0) != 1
    fix = _F.logical_and(e != 0, even)
    toward = _F.where(e > 0, np.inf, -np.inf).astype(_F64)
    return _F.where(fix, _F.nextafter(s, toward), s)


@_custom_jvp
def _fma_t(a, b, c):
    """``a * b + c`` rounded once (``_fma``), whose derivative is that of the exact value."""
    return _fma_value(a, b, c)


@_fma_t.defjvp
def _fma_t_jvp(primals, tangents):
    (a, b, c), (ta, tb, tc) = primals, tangents
    return _fma_t(a, b, c), ta * b + a * tb + tc


def _cast(x, dtype):
    return x.astype(dtype) if _traced(x) else np.asarray(x).astype(dtype)


def _t_uniform_from_bits(b, dtype, lo, hi):
    return _t_uniform_from_unit(_t_unit(b, dtype), dtype, lo, hi)


def _t_uniform_from_unit(f, dtype, lo, hi):
    """``max(lo, f * (hi - lo) + lo)`` rounded once, of unit floats ``f``."""
    if not (_traced(lo) or _traced(hi)):
        if _is_unit_range(lo, hi):
            return f
        # constant bounds: nothing to differentiate, so jit fuses the plain chain
        return _F.maximum(lo, _fma_value(f, hi - lo, lo))
    scaled = _fma_t(f, _F.broadcast_to(hi - lo, f.shape), _F.broadcast_to(lo, f.shape))
    return _F.maximum(lo, scaled)


def _t_uniform(k, shape, dtype, minval=0.0, maxval=1.0):
    lo, hi = _cast(minval, dtype), _cast(maxval, dtype)
    if isinstance(k, tuple):
        f = _t_unit(_t_bits(k, np.finfo(dtype).bits, shape), dtype)
    elif _traced(lo) or _traced(hi):
        # the unit floats from the kernel, the (differentiable) range applied here
        f = _bind_sample(k, "uniform", shape, dtype, (0.0, 1.0))
    else:
        prm = _static_params(lo, hi)
        if prm is not None:
            return _bind_sample(k, "uniform", shape, dtype, prm)
        f = _bind_sample(k, "uniform", shape, dtype, (0.0, 1.0))
    return _F.reshape(_t_uniform_from_unit(f, dtype, lo, hi), shape)


def _t_horner(t, masks, table, fused32):
    """``_horner`` in nx operations (the coefficients chosen elementwise, as there)."""
    def coefficient(i):
        c = np.asarray(table[0, i])                 # 0-d float64: strongly typed
        for j, mask in enumerate(masks, start=1):
            c = _F.where(mask, np.asarray(table[j, i]), c)
        return c

    t = t.astype(_F64)
    p = coefficient(0) * _F.ones_like(t)
    for i in range(1, table.shape[1]):
        p = p * t + coefficient(i)
        if fused32:
            p = p.astype(_F32).astype(_F64)
    return p


def _t_erfinv32(x):
    x = x.astype(_F32)
    w = (-_F.log1p((x * -x).astype(_F64))).astype(_F32)
    large = w >= np.float32(5)
    t = _F.where(large, _F.sqrt(w) - np.float32(3), w - np.float32(2.5))
    p = _t_horner(t, [large], _ERFINV32_TABLE, True).astype(_F32)
    return _F.where(_F.abs(x) == 1, x * np.float32(np.inf), p * x)


def _t_erfinv64(x):
    x = x.astype(_F64)
    w = -_F.log1p(x * -x)
    mid, high = w >= 6.25, w >= 16
    root = _F.sqrt(w)
    t = _F.where(high, root - 5.0, _F.where(mid, root - 3.25, w - 3.125))
    p = _t_horner(t, [mid, high], _ERFINV64_TABLE, False)
    return _F.where(_F.abs(x) == 1, x * np.inf, p * x)


def _t_erfinv_value(x):
    """``_erfinv`` in nx operations (Giles' polynomial, as XLA)."""
    dt = _dtype_of(x)
    if dt == _F64:
        return _t_erfinv64(x)
    return _t_erfinv32(x).astype(dt)


@_custom_jvp
def _t_erfinv(x):
    """``_t_erfinv_value`` with the derivative of the exact erfinv, sqrt(pi)/2 exp(erfinv(x)**2),
    as JAX's ``erf_inv`` (for samples differentiated in their bounds)."""
    return _t_erfinv_value(x)


@_t_erfinv.defjvp
def _t_erfinv_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    z = _t_erfinv(x)
    return z, t * (_F.exp(z * z) * _dtype_of(x).type(math.sqrt(math.pi) / 2))


def _t_normal_real(k, shape, dtype):
    b = _t_bits(k, np.finfo(dtype).bits, shape)
    u = _t_uniform_from_bits(b, dtype, np.asarray(_normal_lo(dtype)),
                             np.asarray(dtype.type(1)))
    return (_t_erfinv_value(u) * dtype.type(_SQRT2)).astype(dtype)


def _t_normal(k, shape, dtype):
    if not isinstance(k, tuple):
        return _bind_sample(k, "normal", shape, dtype)
    if dtype.kind != "c":
        return _F.reshape(_t_normal_real(k, shape, dtype), shape)
    real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    k_re, k_im = _t_split2(k)
    re = _t_normal_real(k_re, shape, real).astype(dtype)
    im = _t_normal_real(k_im, shape, real).astype(dtype)
    return _F.reshape((re + im * 1j) / np.asarray(_SQRT2, dtype), shape)


def _t_log(x):
    return _F.log(x.astype(_F64)).astype(_dtype_of(x))


def _t_gumbel(k, shape, dtype):
    if not isinstance(k, tuple):
        return _bind_sample(k, "gumbel", shape, dtype)
    b = _t_bits(k, np.finfo(dtype).bits, shape)
    u = _t_uniform_from_bits(b, dtype, np.asarray(np.finfo(dtype).tiny),
                             np.asarray(dtype.type(1)))
    return _F.reshape(-_t_log(-_t_log(u)), shape)


def _t_clip_to(val, dtype):
    info, src = np.iinfo(dtype), np.iinfo(_dtype_of(val))
    t = _dtype_of(val).type
    return _F.clip(val, np.asarray(t(max(info.min, src.min))),
                   np.asarray(t(min(info.max, src.max)))).astype(dtype)


def _t_urem(a, n):
    zero = n == 0
    return _F.where(zero, a, _F.remainder(a, _F.where(zero, 1, n).astype(_dtype_of(n))))


def _t_randint_span(minval, maxval, dtype):
    """``_randint_span`` in nx operations, for traced bounds."""
    nbits = dtype.itemsize * 8
    udtype = _UINT[nbits]
    info = np.iinfo(dtype)
    minval, maxval = _F.asarray(minval), _F.asarray(maxval)
    mdt = _dtype_of(maxval)
    out_of_range = maxval > mdt.type(min(info.max, np.iinfo(mdt).max))
    lo = _t_clip_to(minval, dtype)
    hi = _t_clip_to(maxval, dtype)
    one = udtype.type(1)
    span = hi.astype(udtype) - lo.astype(udtype)
    span = _F.where(hi <= lo, one, span).astype(udtype)
    span = _F.where(_F.logical_and(out_of_range, hi > lo), span + one, span).astype(udtype)
    mult = _t_urem(_F.asarray(np.asarray(one << udtype.type(nbits // 2), udtype)), span)
    return lo, span, _t_urem(mult * mult, span)


def _t_randint(k, shape, minval, maxval, dtype):
    """``_randint`` with a traced key or bounds (concrete bounds keep ``_randint_span``)."""
    nbits = dtype.itemsize * 8
    udtype = _UINT[nbits]
    if _traced(minval) or _traced(maxval):
        lo, span, mult = _t_randint_span(minval, maxval, dtype)
    else:
        lo, span, mult = _randint_span(minval, maxval, dtype)
    k1, k2 = _t_split2(k)
    higher = _t_bits(k1, nbits, shape)
    lower = _t_bits(k2, nbits, shape)
    offset = _t_urem(_t_urem(higher, span) * mult + _t_urem(lower, span), span)
    out = (_F.broadcast_to(lo, shape).astype(udtype) + offset).astype(udtype)
    return _F.reshape(out.astype(dtype), shape)


def _t_shuffle(k, x, axis):
    rounds = int(np.ceil(3 * np.log(max(1, _size(x.shape))) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        k, sub = _t_split2(k)
        order = _F.argsort(_t_bits(sub, 32, tuple(x.shape)), axis=axis, stable=True)
        x = _F.take_along_axis(x, order, axis=axis)
    return _F.asarray(x)


def _t_permutation(k, x, axis, independent):
    if x.ndim == 1 or independent:
        return _t_shuffle(k, x, axis)
    ind = _t_shuffle(k, np.arange(x.shape[axis], dtype=np.int32), 0)
    return _F.take(x, ind, axis=axis)


def _t_choice_index(k, p, n_inputs, shape, n_draws, replace):
    p = p.astype(_float_dtype_of(p))
    if tuple(p.shape) != (n_inputs,):
        raise ValueError(f"p must be None or a 1-D array of the same size as a.shape[axis] "
                         f"({n_inputs}), got shape {tuple(p.shape)}")
    dt = _dtype_of(p)
    if replace:
        cdf = _F.cumsum(p, dtype=dt)
        r = cdf[-1] * (dt.type(1) - _t_uniform(k, shape, dt))
        return _F.searchsorted(cdf, r).astype(default_int())
    g = _t_gumbel(k, (n_inputs,), dt) + _F.log(p)
    return _F.argsort(-g, stable=True)[:n_draws].astype(default_int())


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------

def key(seed: ArrayLike) -> Array:
    """A PRNG key from an integer seed: uint32 Tensor of shape (2,).

    As JAX: the seed must fit in int64 (else OverflowError).  With x64 off (JAX's x32 mode) it
    is wrapped to 32 bits, ``[0, seed mod 2**32]``, so ``key(-1)`` is ``[0, 4294967295]``; in
    x64 mode its 64 bits give ``[(seed mod 2**64) >> 32, seed mod 2**32]``, so ``key(-1)`` is
    ``[4294967295, 4294967295]`` (seeds in [0, 2**31) give the same key in both modes).
    A traced integer seed (under jit or vmap) gives the same words.
    """
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


def PRNGKey(seed: ArrayLike) -> Array:
    """The same key as ``key(seed)``: uint32 Tensor of shape (2,)."""
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


def bits(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Uniform random bits: Tensor of ``shape`` and unsigned ``dtype`` (uint8/16/32/64;
    default uint32, uint64 in x64 mode)."""
    k = _key_arg(key)
    dt = _dtype(dtype, np.uint64 if x64_enabled() else np.uint32, "u", "bits")
    return _out_any(_t_bits(k, dt.itemsize * 8, _shape(shape)))


def uniform(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None,
            minval: ArrayLike = 0.0, maxval: ArrayLike = 1.0) -> Array:
    """Uniform floats in [minval, maxval): Tensor of ``shape``, float ``dtype`` (16/32/64;
    default the default float dtype: float32, float64 in x64 mode).

    ``minval``/``maxval`` (scalars or arrays broadcasting to ``shape``) are cast to ``dtype``;
    the samples are differentiable in them (d/dminval = 1 - u, d/dmaxval = u for the unit
    uniform u, as JAX).
    """
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "uniform")
    shape = _shape(shape)
    lo, hi = _val(minval, "minval"), _val(maxval, "maxval")
    _check_param_shape("uniform", shape, tuple(lo.shape), tuple(hi.shape))
    if isinstance(k, tuple) and not (_traced(lo) or _traced(hi)):
        return _out(_uniform(k, shape, dt, lo, hi))
    return _t_uniform(k, shape, dt, lo, hi)


def normal(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard normal samples (inverse CDF): Tensor of ``shape``, float or complex ``dtype``
    (default float32, float64 in x64 mode).

    A complex sample has independent real and imaginary parts of variance 1/2 each.
    """
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "fc", "normal")
    shape = _shape(shape)
    if isinstance(k, tuple):
        return _out(_normal(k, shape, dt))
    return _t_normal(k, shape, dt)


def truncated_normal(key: ArrayLike, lower: ArrayLike, upper: ArrayLike, shape: ShapeLike = (),
                     dtype: DTypeLike = None) -> Array:
    """Standard normal samples truncated to (lower, upper): Tensor of ``shape``, float ``dtype``
    (default float32, float64 in x64 mode).

    ``lower``/``upper`` broadcast to ``shape``; ``shape=None`` means their broadcast shape.
    The samples are differentiable in ``lower`` and ``upper`` (through erf, the uniform and
    erfinv, as JAX's).
    """
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "truncated_normal")
    lo = _cast(_val(lower, "lower"), dt)
    hi = _cast(_val(upper, "upper"), dt)
    if shape is None:
        shape = np.broadcast_shapes(tuple(lo.shape), tuple(hi.shape))
    else:
        shape = _shape(shape)
        _check_param_shape("truncated_normal", shape, tuple(lo.shape), tuple(hi.shape))
    if _traced(lo) or _traced(hi):
        return _t_truncated_normal(k, shape, dt, lo, hi)
    if isinstance(k, tuple):
        return _out(_truncated_normal(k, shape, dt, lo, hi))
    prm = _static_params(lo, hi)
    if prm is not None:
        return _bind_sample(k, "truncated_normal", shape, dt, prm)
    a, b, clip_lo, clip_hi = _truncated_range(dt, lo, hi)
    return _t_truncated_from_unit_range(k, shape, dt, a, b, clip_lo, clip_hi)


def _truncated_range(dt, lo, hi):
    """(erf(lo / sqrt 2), erf(hi / sqrt 2), nextafter(lo, inf), nextafter(hi, -inf)) for
    concrete bounds: the range of the uniforms and the clip."""
    sqrt2 = dt.type(_SQRT2)
    # SciPy's erf: the implementation of the erf primitive, which traced bounds go through
    from scipy.special import erf
    a = erf((lo / sqrt2).astype(np.float64)).astype(dt)
    b = erf((hi / sqrt2).astype(np.float64)).astype(dt)
    clip_lo, clip_hi = np.nextafter(lo, dt.type(np.inf)), np.nextafter(hi, dt.type(-np.inf))
    return a, b, clip_lo, clip_hi


def _truncated_normal(k, shape, dt, lo, hi):
    """truncated_normal of concrete key words and bounds (arrays of ``dt``): a NumPy array."""
    a, b, clip_lo, clip_hi = _truncated_range(dt, lo, hi)
    fused = _fused_erfinv(k, shape, dt, a, b, clip_lo, clip_hi)
    if fused is not None:
        return fused
    return _truncated_normal_from_bits(_random_bits(k, np.finfo(dt).bits, shape), dt, a, b,
                                       clip_lo, clip_hi)


def _truncated_normal_from_bits(bits, dt, a, b, clip_lo, clip_hi):
    u = _uniform_from_bits(bits, dt, a, b)
    out = (dt.type(_SQRT2) * _erfinv(u, dt)).astype(dt)
    return np.clip(out, clip_lo, clip_hi).astype(dt)


def _t_truncated_from_unit_range(k, shape, dt, a, b, clip_lo, clip_hi):
    """``_truncated_normal_from_bits`` in nx operations, from the erf of the bounds."""
    u = _t_uniform_from_bits(_t_bits(k, np.finfo(dt).bits, shape), dt, a, b)
    erfinv = _t_erfinv if _traced(a) or _traced(b) else _t_erfinv_value
    out = (erfinv(u) * dt.type(_SQRT2)).astype(dt)
    return _F.reshape(_F.clip(out, clip_lo, clip_hi).astype(dt), shape)


def _t_truncated_normal(k, shape, dt, lo, hi):
    """Traced bounds: erf and nextafter in nx operations (differentiable in the bounds)."""
    from nx_rune.scipy.special import erf
    sqrt2 = dt.type(_SQRT2)
    a = erf((_F.asarray(lo) / sqrt2).astype(np.float64)).astype(dt)
    b = erf((_F.asarray(hi) / sqrt2).astype(np.float64)).astype(dt)
    clip_lo = _F.nextafter(lo, _F.full_like(lo, np.inf))
    clip_hi = _F.nextafter(hi, _F.full_like(hi, -np.inf))
    return _t_truncated_from_unit_range(k, shape, dt, a, b, clip_lo, clip_hi)


def randint(key: ArrayLike, shape: ShapeLike, minval: ArrayLike, maxval: ArrayLike,
            dtype: DTypeLike = None) -> Array:
    """Uniform integers in [minval, maxval): Tensor of ``shape``, integer ``dtype`` (default
    int32, int64 in x64 mode).

    ``minval``/``maxval`` broadcast to ``shape`` and are clipped to ``dtype``'s range
    (``maxval`` one past it is allowed: ``randint(k, s, 0, 256, uint8)`` covers all bytes).
    """
    k = _key_arg(key)
    dt = np.dtype(default_int() if dtype is None else dtype)
    if dt.kind not in "iu":
        raise TypeError(f"dtype of randint must be an integer dtype, got {dt}")
    shape = _shape(shape)
    lo, hi = _int_param(minval, "minval"), _int_param(maxval, "maxval")
    _check_param_shape("randint", shape, tuple(lo.shape), tuple(hi.shape))
    traced = not isinstance(k, tuple) or _traced(lo) or _traced(hi)
    sample = _t_randint if traced else _randint
    wrap = _out_any if traced else _out
    if dt.itemsize < 4:
        # JAX samples 8- and 16-bit integers as int32 and casts.
        info = np.iinfo(dt)
        clip = _F.clip if traced else np.clip
        lo = clip(lo.astype(np.int32), np.int32(info.min), np.int32(info.max))
        hi = clip(hi.astype(np.int32), np.int32(info.min), np.int32(info.max + 1))
        return wrap(sample(k, shape, lo, hi, np.dtype(np.int32)).astype(dt))
    return wrap(sample(k, shape, lo, hi, dt))


def bernoulli(key: ArrayLike, p: ArrayLike = 0.5, shape: ShapeLike | None = None) -> Array:
    """Booleans that are True with probability ``p``: bool Tensor of ``shape`` (default p's).

    ``p`` must be floating; a Python float is of the default float dtype (float32; float64 in
    x64 mode).
    """
    k = _key_arg(key)
    parr = _val(p, "p")
    if type(p) is float:                # weakly typed (np.float64 is a float too)
        parr = parr.astype(default_float())
    if _dtype_of(parr).kind != "f":
        raise TypeError(f"p of bernoulli must have a floating dtype, got {parr.dtype}")
    if shape is None:
        shape = tuple(parr.shape)
    else:
        shape = _shape(shape)
        _check_param_shape("bernoulli", shape, tuple(parr.shape))
    if isinstance(k, tuple) and not _traced(parr):
        return _out(_uniform(k, shape, parr.dtype) < parr)
    return _t_uniform(k, shape, _dtype_of(parr)) < parr


def gumbel(key: ArrayLike, shape: ShapeLike = (), dtype: DTypeLike = None) -> Array:
    """Standard Gumbel samples ``-log(-log(u))``: Tensor of ``shape``, float ``dtype`` (default
    float32, float64 in x64 mode)."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "gumbel")
    shape = _shape(shape)
    if isinstance(k, tuple):
        return _out(_gumbel(k, shape, dt))
    return _t_gumbel(k, shape, dt)


def categorical(key: ArrayLike, logits: ArrayLike, axis: int = -1,
                shape: ShapeLike | None = None) -> Array:
    """Samples of the categories of ``softmax(logits, axis)`` (Gumbel-max): Tensor of the
    default int dtype (int32; int64 in x64 mode).

    The result has ``shape`` (default: ``logits.shape`` without ``axis``); extra leading
    dimensions in ``shape`` draw that many independent samples per distribution.
    """
    k = _key_arg(key)
    arr = _val(logits, "logits")
    lshape = tuple(arr.shape)
    if _dtype_of(arr).kind != "f":
        raise TypeError(f"logits must have a floating dtype, got {arr.dtype}")
    if not lshape:
        raise ValueError("logits must have at least one dimension")
    ax = _axis(axis, len(lshape))
    batch = lshape[:ax] + lshape[ax + 1:]
    if shape is None:
        shape = batch
    else:
        shape = _shape(shape)
        _check_param_shape("categorical", shape, batch)
    prefix = shape[:len(shape) - len(batch)]
    noise_shape = list(shape[len(prefix):])
    noise_shape.insert(ax, lshape[ax])
    if isinstance(k, tuple) and not _traced(arr):
        scores = _gumbel(k, (*prefix, *noise_shape), arr.dtype) + arr
        return _out(np.argmax(scores, axis=ax - arr.ndim).astype(default_int()))
    scores = _t_gumbel(k, (*prefix, *noise_shape), _dtype_of(arr)) + arr
    return _F.argmax(scores, axis=ax - len(lshape)).astype(default_int())


def _static_int(x, name):
    if _traced(x):
        raise TypeError(f"{name}: a traced integer cannot set the size of a random draw "
                        f"(sizes are static: pass it as a static argument of jit, or an "
                        f"array to sample from)")


def permutation(key: ArrayLike, x: int | ArrayLike, axis: int = 0,
                independent: bool = False) -> Array:
    """A random permutation of ``arange(x)`` (int x) or of ``x`` along ``axis``: Tensor.

    With ``independent=True`` every 1-D slice along ``axis`` is shuffled on its own.  The
    result is differentiable in ``x`` (a gather of its entries).
    """
    k = _key_arg(key)
    if _traced(x) and x.ndim == 0:
        _static_int(x, "x")
    arr = _val(x, "x")
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"x must be an integer or an array, got {arr.dtype}")
        ints = np.arange(int(arr), dtype=default_int())
        if isinstance(k, tuple):
            return _out(_shuffle(k, ints, 0))
        return _t_shuffle(k, ints, 0)
    ax = _axis(axis, arr.ndim)
    if isinstance(k, tuple) and not _traced(arr):
        return _out(_permutation(k, arr, ax, independent))
    return _t_permutation(k, arr, ax, independent)


def choice(key: ArrayLike, a: int | ArrayLike, shape: ShapeLike = (), replace: bool = True,
           p: ArrayLike | None = None, axis: int = 0) -> Array:
    """Random draws from ``a`` (an array, or an int n for ``arange(n)``) along ``axis``.

    Returns a Tensor of ``shape`` (for an array: ``a.shape`` with ``axis`` replaced by
    ``shape``). ``p``: optional probabilities of the entries (1-D, length ``a.shape[axis]``).
    """
    k = _key_arg(key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape of choice must be a sequence, got {shape!r}")
    shape = _shape(shape)
    if _traced(a) and a.ndim == 0:
        _static_int(a, "a")
    arr = _val(a, "a")
    it = default_int()
    if isinstance(a, int):
        info = np.iinfo(it)
        if not info.min <= a <= info.max:  # JAX refuses it too; a wrap would sample a % 2**32
            raise ValueError(f"a: {a} does not fit in {it}, the default integer dtype (x64 "
                             f"mode: int64); pass a smaller population or an array")
        arr = arr.astype(it)
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError(f"a must be an integer or an array, got {arr.dtype}")
        n_inputs = int(arr)
    else:
        axis = _axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = _size(shape)
    if n_draws == 0:
        return _out(np.zeros(shape, dtype=arr.dtype))
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"cannot take a larger sample (size {n_draws}) than the population "
                         f"(size {n_inputs}) when replace=False")
    pv = None if p is None else _val(p, "p")
    traced = not isinstance(k, tuple) or _traced(arr) or _traced(pv)
    if not traced:
        take, perm, randint_, index = np.take, _permutation, _randint, _choice_index
    else:
        take, perm, randint_, index = _F.take, _t_permutation, _t_randint, _t_choice_index
    if pv is not None:
        ind = index(k, pv, n_inputs, shape, n_draws, replace)
        result = ind if arr.ndim == 0 else take(arr, ind, axis=axis)
    elif replace:
        ind = randint_(k, shape, np.asarray(0, it), np.asarray(n_inputs, it), it)
        result = ind if arr.ndim == 0 else take(arr, ind, axis=axis)
    else:
        pool, ax = (arr, axis) if arr.ndim else (np.arange(n_inputs, dtype=it), 0)
        result = take(perm(k, pool, ax, False), np.arange(n_draws), axis=ax)
    if arr.ndim == 0:
        out_shape = shape
    else:
        out_shape = tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:])
    if traced:
        return _F.reshape(result, out_shape)
    return _out(result.reshape(out_shape))


def _choice_index(k, p, n_inputs, shape, n_draws, replace):
    p = p.astype(_float_dtype_of(p))
    if p.shape != (n_inputs,):
        raise ValueError(f"p must be None or a 1-D array of the same size as a.shape[axis] "
                         f"({n_inputs}), got shape {p.shape}")
    if replace:
        cdf = np.cumsum(p, dtype=p.dtype)
        r = cdf[-1] * (p.dtype.type(1) - _uniform(k, shape, p.dtype))
        return np.searchsorted(cdf, r).astype(default_int())
    with np.errstate(divide="ignore"):
        g = _gumbel(k, (n_inputs,), p.dtype) + np.log(p)
    # lax.top_k: largest first, ties to the lower index.
    return np.argsort(-g, kind="stable")[:n_draws].astype(default_int())


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


def _out_any(x):
    """A result of the traced chains: NumPy arrays (concrete key) as Tensors, others as they
    are."""
    return _out(x) if isinstance(x, np.ndarray) else x


# ---------------------------------------------------------------------------------------------
# under nx.vmap of concrete values: one example at a time through the fast path
# ---------------------------------------------------------------------------------------------

def _batched_concrete(v):
    """True when ``v`` is batched by vmap levels only (no derivative, no jit) over a concrete
    Tensor with at least one example per level."""
    while isinstance(v, _BatchTracer):
        if v._interp.axis_size == 0:
            return False
        v = v.primal
    return isinstance(v, Tensor)


def _over_batch(fn):
    """``fn`` (a sampler) that, given values batched by ``nx.vmap`` over concrete values,
    runs the fast concrete path once per example (a batched argument sliced, the others
    shared) and stacks the results: key by key what ``jax.vmap`` of the sampler gives, bit for
    bit.  Other traced values (jit, grad, an empty batch) go to ``fn``'s traced chains, which
    the transformations handle themselves."""
    by_primitive = fn.__name__ in _KEY_BATCHED

    @functools.wraps(fn)
    def sampler(*args, **kwargs):
        batched = False
        for v in (*args, *kwargs.values()):
            if isinstance(v, ArrayBase) and not isinstance(v, Tensor):
                if not _batched_concrete(v):
                    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                        return fn(*args, **kwargs)
                batched = True
        if batched:
            if by_primitive and _only_key_batched(args, kwargs):
                # the batch of keys goes to the sampler primitive in one call
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    return fn(*args, **kwargs)
            return _batching.map_concrete(sampler, args, kwargs)
        return fn(*args, **kwargs)
    return sampler


# The samplers whose traced path binds threefry_bits/threefry_sample directly when only the key
# is batched: vmap over keys of concrete values gives the whole batch to the primitive's batch
# rule (one kernel call), the values of the example-by-example loop bit for bit.
_KEY_BATCHED = {"bits", "uniform", "normal", "truncated_normal", "gumbel", "bernoulli"}


def _only_key_batched(args, kwargs):
    """Whether the key (first argument) is the only batched one."""
    rest = (*args[1:], *(v for n, v in kwargs.items() if n != "key"))
    if "key" not in kwargs and not args:
        return False
    return not any(isinstance(v, ArrayBase) and not isinstance(v, Tensor) for v in rest)


for _name in __all__:
    globals()[_name] = _over_batch(globals()[_name])
del _name


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
