"""Random bits and the samplers on them: the threefry primitive (the Threefry-2x32 hash of
``nx_rune._kernels.threefry``, bit-exact with JAX's), and the concrete code of ``nx.random``:
partitionable bits, splits and fold-ins, JAX's unit floats, uniform with XLA:CPU's fused
multiply-add, Giles' erfinv as XLA evaluates it, normal, truncated normal, gumbel, randint, the
sort-based shuffle, the fused one-pass kernels that give the same values, and the sampler
primitives ``threefry_bits`` and ``threefry_sample``.  ``nx_rune.random`` builds the public
samplers and their traced chains on top of it; the rejection samplers are in
``random_rejection``.

May import: NumPy, ``nx_rune._kernels``, ``nx_rune.tensor`` and ``nx_rune.backend._core``.
"""
import math

import numpy as np

from nx_rune._kernels import threefry as _K
from nx_rune.backend._core import IMPLS, _impl, _out
from nx_rune.tensor import wrap_result as _wrap_result

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}
_SQRT2 = math.sqrt(2.0)


def _size(shape):
    return math.prod(shape)


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
    """``a * b + c`` rounded once to ``dtype`` (float32/64), as XLA:CPU's fused multiply-add
    (the C library's fma, in a kernel); float16 rounded twice, as XLA:CPU computes it."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, dtype) for v in (a, b, c)))
    if dtype == np.float16:
        # XLA widens each float16 operation to float32 on its own and rounds it back: the
        # product and the sum round separately (nothing to contract)
        return a * b + c
    return _K.xla_fma(*(np.ascontiguousarray(v) for v in (a, b, c))).reshape(a.shape)


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
    is the last mask set (row 0 where none is).  Every step ``p * t + c`` is one fused
    multiply-add, as XLA:CPU contracts them.

    ``fused32``: round to float32 after each step. With float32 ``p``, ``t`` and ``c`` the
    product is exact in float64, so each step is float32's fused multiply-add.  Otherwise
    float64's (``_fma64``).
    """
    def coefficient(i):
        c = table[0, i]
        for j, mask in enumerate(masks, start=1):
            c = np.where(mask, table[j, i], c)
        return c

    t = t.astype(np.float64)
    p = coefficient(0) * np.ones_like(t)
    for i in range(1, table.shape[1]):
        if fused32:
            p = (p * t + coefficient(i)).astype(np.float32).astype(np.float64)
        else:
            p = _fma64(p, t, coefficient(i) * np.ones_like(t))
    return p


def _fma32(a, b, c):
    """float32 ``a * b + c`` with one rounding (float32's fused multiply-add).

    The product is exact in float64 and the sum's error is recovered exactly (TwoSum); where the
    float64 sum lies on a float32 tie and is not exact, it is nudged toward the exact value, so
    the final rounding to float32 is that of the exact result (no double rounding). For
    float32 results of the normal range.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.asarray(a, np.float32).astype(np.float64) * np.asarray(b, np.float32)
        c = np.asarray(c, np.float32).astype(np.float64)
        s = p + c
        bv = s - p
        err = (p - (s - bv)) + (c - bv)             # s + err == p + c exactly (s finite)
        tie = (np.asarray(s).view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)
        nudge = tie & (err != 0)                    # never for inf or NaN (not a tie)
        if np.any(nudge):
            s = np.where(nudge, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32)


# XLA:CPU's float32 log: Cephes' logf as Eigen writes it, highest degree first.
_XLA_LOG_P = np.array([7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                       1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                       3.3333331174E-1], np.float32)
# XLA:CPU's float32 log1p for |x| < sqrt(2) - 1: Cephes' x - x**2/2 + x**3 P(x)/Q(x).
_XLA_LOG1P_P = np.array([4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
                         6.5787325942061044846969E0, 2.9911919328553073277375E1,
                         6.0949667980987787057556E1, 5.7112963590585538103336E1,
                         2.0039553499201281259648E1], np.float32)
_XLA_LOG1P_Q = np.array([1.0, 1.5062909083469192043167E1, 8.3047565967967209469434E1,
                         2.2176239823732856465394E2, 3.0909872225312059774938E2,
                         2.1642788614495947685003E2, 6.0118660497603843919306E1], np.float32)
_F32_TINY = np.float32(np.finfo(np.float32).tiny)


def _xla_log32(x):
    """Natural log of float32 ``x`` exactly as XLA:CPU (so JAX on CPU) computes it.

    The mantissa m in [sqrt(1/2), sqrt(2)) and exponent e, then log(1 + z), z = m - 1, by
    Cephes' polynomial, with the multiply-adds XLA's compiler contracts done as fused ones.
    Differs from a correctly rounded log by an ulp in about 7% of inputs; denormals count as
    zero (XLA flushes them).
    """
    x = np.asarray(x, np.float32)
    t = np.maximum(x, _F32_TINY)
    b = t.view(np.uint32)
    e = np.float32(1) + ((b >> 23).astype(np.int32) - 127).astype(np.float32)
    m = ((b & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)   # [1/2, 1)
    below = m < np.float32(0.707106781186547524)
    z = (m - np.float32(1)) + np.where(below, m, np.float32(0))
    e = e - below.astype(np.float32)
    z2 = z * z
    z3 = z2 * z
    c = _XLA_LOG_P
    y = _fma32(_fma32(z, c[0], c[1]), z, c[2])
    y1 = _fma32(_fma32(z, c[3], c[4]), z, c[5])
    y2 = _fma32(_fma32(z, c[6], c[7]), z, c[8])
    y = _fma32(_fma32(y, z3, y1), z3, y2)
    y = _fma32(y, z3, np.float32(-2.12194440e-4) * e)
    r = _fma32(np.float32(-0.5), z2, z) + y
    r = _fma32(np.float32(0.693359375), e, r)
    r = np.where(np.abs(x) < _F32_TINY, np.float32(-np.inf), r)
    r = np.where(x == np.inf, np.float32(np.inf), r)
    with np.errstate(invalid="ignore"):
        return np.where((x <= -_F32_TINY) | np.isnan(x), np.float32(np.nan), r)


def _xla_math(op, x, y=None):
    """``op`` (an op of ``nx_rune._kernels.threefry.xla_math``: "exp", "log", "log1p", "tan",
    "rsqrt", "erf", "ynn_*", or "pow" with exponent ``y``) of a float16, float32 or float64
    array as JAX computes it on CPU (XLA's own exp and log1p, float32 log, the C library's
    tan, pow and float64 log, with XLA's flushing of denormals; float16 through float32, as
    XLA widens it)."""
    x = np.asarray(x)
    if x.dtype != _F16 and x.dtype != _F32 and x.dtype != _F64:
        raise TypeError(f"x must be a float16, float32 or float64 array, got {x.dtype}")
    if y is not None:
        x, y = np.broadcast_arrays(x, np.asarray(y, x.dtype))
        y = np.ascontiguousarray(y)
    return _K.xla_math(op, np.ascontiguousarray(x), y).reshape(x.shape)


def _xla_log1p32(x):
    """log1p of float32 ``x`` exactly as XLA:CPU computes it: Cephes' rational approximation
    (fused Horner steps) for |x| < sqrt(2) - 1, else ``_xla_log32(x + 1)``; denormals count as
    (signed) zero."""
    x = np.asarray(x, np.float32)
    x2 = x * x
    pn = np.full(x.shape, _XLA_LOG1P_P[0])
    pq = np.full(x.shape, _XLA_LOG1P_Q[0])
    for i in range(1, 7):
        pn = _fma32(pn, x, _XLA_LOG1P_P[i])
        pq = _fma32(pq, x, _XLA_LOG1P_Q[i])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = x + _fma32(np.float32(-0.5), x2, (x * x2) * (pn / pq))
        small = np.where(np.abs(x) < _F32_TINY, x * np.float32(0), small)   # flushed denormal
        return np.where(np.abs(x) < np.float32(0.41421356237309504880), small,
                        _xla_log32(x + np.float32(1)))


# XLA:CPU's float32 erf: x P(x**2) / Q(x**2), P and Q in monomial form, highest degree first.
_XLA_ERF_P = np.array([0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
                       0.18520832239976145, 1.128379143519084], np.float32)
_XLA_ERF_Q = np.array([-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
                       0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0],
                      np.float32)


def _xla_erf32(x):
    """erf of float32 ``x`` exactly as XLA:CPU computes it (a rational approximation with
    fused Horner steps; +-1 from |x| >= 3.832506856900711, where it rounds to 1)."""
    x = np.asarray(x, np.float32)
    x2 = x * x
    p = np.full(x.shape, _XLA_ERF_P[0])
    for c in _XLA_ERF_P[1:]:
        p = _fma32(x2, p, c)
    q = np.full(x.shape, _XLA_ERF_Q[0])
    for c in _XLA_ERF_Q[1:]:
        q = _fma32(x2, q, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (x * p) / q
        return np.where(np.abs(x) >= np.float32(3.832506856900711),
                        np.copysign(np.float32(1), x), r).astype(np.float32)


def _erfinv32(x):
    """Giles' float32 erfinv as XLA:CPU evaluates it (its own log1p, fused Horner steps)."""
    x = np.asarray(x, np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -_xla_log1p32(x * -x)
        large = w >= np.float32(5)
        t = np.where(large, np.sqrt(w) - np.float32(3), w - np.float32(2.5))
        p = _horner(t, [large], _ERFINV32_TABLE, True).astype(np.float32)
        return np.where(np.abs(x) == 1, x * np.float32(np.inf), p * x)


def _log1p64_traceable(x):
    """XLA's float64 log1p (the C library's log beyond sqrt(2) - 1, as XLA calls it), which the
    truncated normal's traced erfinv also computes (``_xla_math.xla_log1p64``: its log is the
    ``xla_math`` primitive)."""
    return _K.xla_math("log1p", np.asarray(x, np.float64))


def _erfinv64(x, log1p=None):
    """Giles' float64 erfinv (three branches) as XLA:CPU evaluates it (its own log1p, fused
    Horner steps)."""
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -(log1p or (lambda v: _xla_math("log1p", v)))(x * -x)
        mid, high = w >= 6.25, w >= 16
        root = np.sqrt(w)
        t = np.where(high, root - 5.0, np.where(mid, root - 3.25, w - 3.125))
        p = _horner(t, [mid, high], _ERFINV64_TABLE, False)
        return np.where(np.abs(x) == 1, x * np.inf, p * x)


def _erfinv(x, dtype, log1p=None):
    if dtype == np.float64:
        return _erfinv64(x, log1p)
    return _erfinv32(x.astype(np.float32)).astype(dtype)


def _normal_lo(dtype):
    return np.nextafter(dtype.type(-1), dtype.type(0))


def _normal_from_bits(b, dtype):
    u = _uniform_from_bits(b, dtype, np.asarray(_normal_lo(dtype)), np.asarray(dtype.type(1)))
    if dtype == _F64 and u.ndim == 1:
        # the fused kernel's float64 erfinv (the same steps as _erfinv64, much faster)
        x = np.ascontiguousarray(u, np.float64).copy()
        _K.erfinv_f64(x, _K.xla_math("log1p", x * -x))
        return x
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
    """Natural log as XLA:CPU computes it: its own for float32 (``_xla_log32``), the C
    library's for float64; other dtypes: through float64, rounded once."""
    if x.dtype == np.float32:
        return _xla_log32(x)
    return _xla_math("log", x)


def _tiny_unit_from_bits(b, dtype):
    """JAX's ``uniform(minval=tiny, maxval=1)`` (gumbel's, logistic's) of bits ``b``.  Its
    bounds are constants of the compiled sampler: XLA folds ``f * (1 - tiny)`` with a span
    that rounds to 1 into ``f`` and reassociates ``(bitcast - 1) + tiny`` into
    ``bitcast + (tiny - 1)``, which in float16 is ``bitcast - 1``: the unit float itself (not
    ``f + tiny``, which float16's coarse tiny moves in about 6% of draws); float32 and float64
    give the same values either way."""
    tiny = np.asarray(np.finfo(dtype).tiny)
    if dtype == _F16:
        return np.maximum(tiny, _unit_floats_from_bits(b, dtype))
    return _uniform_from_bits(b, dtype, tiny, np.asarray(dtype.type(1)))


def _gumbel_from_bits(b, dtype):
    u = _tiny_unit_from_bits(b, dtype)
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


# ---------------------------------------------------------------------------------------------
# fused kernels: the same values as the ``*_from_bits`` references, in one pass
# ---------------------------------------------------------------------------------------------

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
# _fma64's emulation is exact for magnitudes in [1/_F64_SAFE, _F64_SAFE]
_F64_SAFE = 2.0 ** 900


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
    # float64: the uniforms and x * -x fused, XLA's log1p, then erfinv fused
    x, sq = _K.uniform_f64(k[0], k[1], _size(shape), prm[0], prm[1], True, square=True)
    sq = _log1p64_traceable(sq) if clip else _K.xla_math("log1p", sq)
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


def _exponential(k, shape, dtype):
    """JAX's exponential: ``-log1p(-u)``, XLA's log1p."""
    return -_xla_math("log1p", -_uniform(k, shape, dtype))


def _laplace(k, shape, dtype):
    """JAX's laplace: ``sign(u) log1p(-|u|)`` of u uniform on [-1 + epsneg, 1)."""
    lo = np.asarray(dtype.type(-1) + np.finfo(dtype).epsneg)
    u = _uniform(k, shape, dtype, lo, np.asarray(dtype.type(1)))
    return np.sign(u) * _xla_math("log1p", -np.abs(u))


def _logistic(k, shape, dtype):
    """JAX's logistic: ``log(u) - log1p(-u)`` of u uniform on [tiny, 1)."""
    if dtype == _F16:
        u = _tiny_unit_from_bits(_random_bits(k, 16, shape), dtype)
    else:
        u = _uniform(k, shape, dtype, np.asarray(np.finfo(dtype).tiny), np.asarray(dtype.type(1)))
    return _xla_math("log", u) - _xla_math("log1p", -u)


def _cauchy(k, shape, dtype):
    """JAX's cauchy: ``tan(pi (u - 1/2))`` of u uniform on [eps, 1), the C library's tan."""
    u = _uniform(k, shape, dtype, np.asarray(np.finfo(dtype).eps), np.asarray(dtype.type(1)))
    return _xla_math("tan", dtype.type(np.pi) * (u - dtype.type(0.5)))


def _rayleigh(k, shape, dtype):
    """JAX's rayleigh of scale 1: ``sqrt(log(u) * -2)``."""
    return np.sqrt(_xla_math("log", _uniform(k, shape, dtype)) * dtype.type(-2))


def _erfinv_draws(k, shape, dtype):
    """JAX's normal draws before their factor sqrt(2): erf_inv of the uniforms on
    [nextafter(-1, 0), 1) (lognormal's: XLA folds its sigma into that factor).  float32 and
    float64 in the fused kernels with the factor 1 (exact), float16 in float32 rounded back."""
    lo, one = np.asarray(_normal_lo(dtype)), np.asarray(dtype.type(1))

    def reference(bits):
        return _erfinv(_uniform_from_bits(bits, dtype, lo, one), dtype).astype(dtype)

    prm = _range_params(dtype, lo, one)
    if dtype == _F32:
        return _fused32(k, shape, reference, "normal", lo=prm[0], span=prm[1], scale=1.0)
    if dtype == _F64 and not isinstance(k, np.ndarray):
        x, sq = _K.uniform_f64(k[0], k[1], _size(shape), prm[0], prm[1], True, square=True)
        _K.erfinv_f64(x, _K.xla_math("log1p", sq), scale=1.0)
        return x.reshape(shape)
    return reference(_random_bits(k, np.finfo(dtype).bits, shape)).reshape(shape)


# The samplers of threefry_sample by name; the last six take no parameters and are the
# transcendental part of JAX's samplers of those names (erfinv: lognormal's normal before its
# factor), whose XLA functions (log1p, log, tan, erf_inv) only a kernel reproduces fast (so a
# traced key draws them through the primitive as well).
_SAMPLE_DISTS = ("uniform", "normal", "truncated_normal", "gumbel", "exponential", "laplace",
                 "logistic", "cauchy", "rayleigh", "erfinv")
_PLAIN_DISTS = {"exponential": _exponential, "laplace": _laplace, "logistic": _logistic,
                "cauchy": _cauchy, "rayleigh": _rayleigh, "erfinv": _erfinv_draws}


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
        if dist in _PLAIN_DISTS:
            return _PLAIN_DISTS[dist](k, shape, dt).astype(dt, copy=False)
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


def _truncated_range(dt, lo, hi):
    """(erf(lo / sqrt 2), erf(hi / sqrt 2), nextafter(lo, inf), nextafter(hi, -inf)) for
    concrete bounds: the range of the uniforms and the clip."""
    sqrt2 = dt.type(_SQRT2)
    if dt == np.float32:
        # As XLA:CPU compiles JAX's erf(lo / sqrt2): the division by a constant as a product
        # with its float32 reciprocal, then XLA's own erf (either can be an ulp from NumPy's
        # and SciPy's; an ulp in a bound moves every uniform drawn between them).
        inv_sqrt2 = np.float32(1) / sqrt2
        a = _xla_erf32(lo * inv_sqrt2)
        b = _xla_erf32(hi * inv_sqrt2)
    else:
        # float64 likewise: the product with the reciprocal, then XLA's erf, which is the C
        # library's (SciPy's rounds otherwise)
        inv_sqrt2 = np.float64(1) / np.float64(_SQRT2)
        a = _K.xla_math("erf", np.asarray(np.asarray(lo, np.float64) * inv_sqrt2))
        b = _K.xla_math("erf", np.asarray(np.asarray(hi, np.float64) * inv_sqrt2))
        a, b = a.astype(dt), b.astype(dt)
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
    out = (dt.type(_SQRT2) * _erfinv(u, dt, _log1p64_traceable)).astype(dt)
    return np.clip(out, clip_lo, clip_hi).astype(dt)


IMPLS["threefry_bits"] = _threefry_bits_impl
IMPLS["threefry_sample"] = _threefry_sample_impl


@_impl("threefry")
def _threefry(key, counter):
    # a batch of keys (*batch, 2) hashes each its own block of the count (vmap over keys)
    fn = _K.threefry_2x32 if key.ndim == 1 else _K.threefry_2x32_keys
    return _out(fn(key._np(), counter._np()))
