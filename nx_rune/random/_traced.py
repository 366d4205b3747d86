"""nx.random's chains on traced values (jit, grad, vmap inside jit).

The same algorithms as ``nx_rune.backend.random``'s NumPy code, written with nx's own
operations; a key here is either a pair of Python ints (concrete) or a traced uint32 array of
shape (2,).
"""
from __future__ import annotations

import math

import numpy as np

from nx_rune import frontend as _F
from nx_rune import primitives as _P
from nx_rune.autodiff.custom import custom_jvp as _custom_jvp
from nx_rune.backend.random import (
    _ERFINV32_TABLE,
    _ERFINV64_TABLE,
    _F16,
    _F32,
    _F64,
    _SQRT2,
    _U32,
    _UINT,
    _is_unit_range,
    _normal_lo,
    _randint_span,
    _random_bits,
    _split,
    _split2,
    _two_prod,
    _two_sum,
)
from nx_rune.dtypes import default_int
from nx_rune.random._common import _dtype_of, _float_dtype_of, _size, _traced
from nx_rune.random._xla_math import xla_erf32, xla_log1p32, xla_log1p64, xla_log32, xla_unary

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
        if fused32:
            p = (p * t + coefficient(i)).astype(_F32).astype(_F64)
        else:                   # float64: XLA fuses each step too
            p = _fma_t(p, t, _F.broadcast_to(_F.asarray(coefficient(i)), p.shape))
    return p


def _t_erfinv32(x):
    x = x.astype(_F32)
    w = -xla_log1p32(x * -x)
    large = w >= np.float32(5)
    t = _F.where(large, _F.sqrt(w) - np.float32(3), w - np.float32(2.5))
    p = _t_horner(t, [large], _ERFINV32_TABLE, True).astype(_F32)
    return _F.where(_F.abs(x) == 1, x * np.float32(np.inf), p * x)


def _t_erfinv64(x):
    x = x.astype(_F64)
    w = -xla_log1p64(x * -x)
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
    if _dtype_of(x) == _F32:
        return xla_log32(x)
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


def _t_truncated_from_unit_range(k, shape, dt, a, b, clip_lo, clip_hi):
    """``_truncated_normal_from_bits`` in nx operations, from the erf of the bounds."""
    u = _t_uniform_from_bits(_t_bits(k, np.finfo(dt).bits, shape), dt, a, b)
    erfinv = _t_erfinv if _traced(a) or _traced(b) else _t_erfinv_value
    out = (erfinv(u) * dt.type(_SQRT2)).astype(dt)
    return _F.reshape(_F.clip(out, clip_lo, clip_hi).astype(dt), shape)


def _t_truncated_normal(k, shape, dt, lo, hi):
    """Traced bounds: erf and nextafter in nx operations (differentiable in the bounds)."""
    sqrt2 = dt.type(_SQRT2)
    if dt == _F32:          # as the concrete bounds: XLA's product by 1/sqrt2, XLA's erf
        inv_sqrt2 = np.float32(1) / sqrt2
        a = xla_erf32(_F.asarray(lo).astype(_F32) * inv_sqrt2)
        b = xla_erf32(_F.asarray(hi).astype(_F32) * inv_sqrt2)
    else:                   # float64: XLA's erf is the C library's (the xla_math primitive)
        inv_sqrt2 = np.float64(1) / np.float64(_SQRT2)
        a = xla_unary(_F.asarray(lo).astype(_F64) * inv_sqrt2, "erf").astype(dt)
        b = xla_unary(_F.asarray(hi).astype(_F64) * inv_sqrt2, "erf").astype(dt)
    clip_lo = _F.nextafter(lo, _F.full_like(lo, np.inf))
    clip_hi = _F.nextafter(hi, _F.full_like(hi, -np.inf))
    return _t_truncated_from_unit_range(k, shape, dt, a, b, clip_lo, clip_hi)
