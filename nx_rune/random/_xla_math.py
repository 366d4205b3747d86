"""XLA:CPU's float32 log, log1p and erf in nx operations, for the traced chains.

JAX's float32 samplers go through XLA's own float32 transcendentals, which are an ulp from the
correctly rounded ones in a few percent of inputs; the concrete samplers reproduce them exactly
(``nx_rune.backend.random._xla_log32``, ``_xla_log1p32``, ``_xla_erf32`` and the fused
kernels).  These are the same arithmetic written with nx's own operations, so that jit, vmap and
grad give the concrete values bit for bit.  There is no bitcast under a trace: the exponent
comes from a float64 log2 (exact at powers of two and never off by one for a float32), the
mantissa from a float64 scaling by a power of two.
"""
from __future__ import annotations

import math

import numpy as np

from nx_rune import frontend as _F
from nx_rune._kernels import threefry as _K
from nx_rune.autodiff.custom import custom_jvp as _custom_jvp
from nx_rune.backend.random import (
    _XLA_ERF_P,
    _XLA_ERF_Q,
    _XLA_LOG1P_P,
    _XLA_LOG1P_Q,
    _XLA_LOG_P,
)
from nx_rune.random._common import _traced

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_TINY32 = np.float32(np.finfo(np.float32).tiny)


def _c(v):
    return np.asarray(v, _F32)


def _fma32(a, b, c):
    """float32 ``a * b + c`` rounded once (finite normal-range results), as
    ``nx_rune.backend.random._fma32``: the exact float64 product, the float64 sum and its exact
    error (TwoSum); where the sum rounded to float32 sits on a float32 tie, the error decides."""
    p = _F.asarray(a).astype(_F64) * _F.asarray(b).astype(_F64)
    c = _F.asarray(c).astype(_F64)
    s = p + c
    bv = s - p
    err = (p - (s - bv)) + (c - bv)
    r = s.astype(_F32)
    r64 = r.astype(_F64)
    toward = _F.where(s > r64, np.float32(np.inf), np.float32(-np.inf))
    other = _F.nextafter(r, toward.astype(_F32))
    tie = (s - r64) == (other.astype(_F64) - s)
    pick = _F.where(err > 0, _F.maximum(r, other), _F.minimum(r, other))
    return _F.where(tie & (err != 0) & (s != r64), pick, r)


def xla_log32(x):
    """``_xla_log32`` in nx operations: float32 ``x`` (positive normal, zero, inf or NaN)."""
    x = _F.asarray(x).astype(_F32)
    t = _F.maximum(x, _TINY32).astype(_F64)
    t = _F.where(_F.isfinite(t), t, 1.0)
    e = _F.floor(_F.log2(t)) + 1.0                     # t = m * 2**e, m in [1/2, 1)
    m = t * _F.exp2(-e)
    e = _F.where(m >= 1.0, e + 1.0, _F.where(m < 0.5, e - 1.0, e))
    m = (t * _F.exp2(-e)).astype(_F32)
    e = e.astype(_F32)
    below = m < np.float32(0.707106781186547524)
    z = (m - np.float32(1)) + _F.where(below, m, np.float32(0))
    e = e - below.astype(_F32)
    z2 = z * z
    z3 = z2 * z
    c = [_c(v) for v in _XLA_LOG_P]
    y = _fma32(_fma32(z, c[0], c[1]), z, c[2])
    y1 = _fma32(_fma32(z, c[3], c[4]), z, c[5])
    y2 = _fma32(_fma32(z, c[6], c[7]), z, c[8])
    y = _fma32(_fma32(y, z3, y1), z3, y2)
    y = _fma32(y, z3, np.float32(-2.12194440e-4) * e)
    r = _fma32(np.float32(-0.5), z2, z) + y
    r = _fma32(np.float32(0.693359375), e, r)
    r = _F.where(_F.abs(x) < _TINY32, np.float32(-np.inf), r)
    r = _F.where(x == np.float32(np.inf), np.float32(np.inf), r)
    return _F.where((x <= -_TINY32) | _F.isnan(x), np.float32(np.nan), r)


def xla_log1p32(x):
    """``_xla_log1p32`` in nx operations."""
    x = _F.asarray(x).astype(_F32)
    x2 = x * x
    pn = _c(_XLA_LOG1P_P[0]) * _F.ones_like(x)
    pq = _c(_XLA_LOG1P_Q[0]) * _F.ones_like(x)
    for i in range(1, 7):
        pn = _fma32(pn, x, _c(_XLA_LOG1P_P[i]))
        pq = _fma32(pq, x, _c(_XLA_LOG1P_Q[i]))
    small = x + _fma32(np.float32(-0.5), x2, (x * x2) * (pn / pq))
    small = _F.where(_F.abs(x) < _TINY32, x * np.float32(0), small)
    big = xla_log32(x + np.float32(1))
    return _F.where(_F.abs(x) < np.float32(0.41421356237309504880), small, big)


def _xla_erf32_value(x):
    x = _F.asarray(x).astype(_F32)
    x2 = x * x
    p = _c(_XLA_ERF_P[0]) * _F.ones_like(x)
    for v in _XLA_ERF_P[1:]:
        p = _fma32(x2, p, _c(v))
    q = _c(_XLA_ERF_Q[0]) * _F.ones_like(x)
    for v in _XLA_ERF_Q[1:]:
        q = _fma32(x2, q, _c(v))
    return _F.where(_F.abs(x) >= np.float32(3.832506856900711),
                    _F.copysign(np.float32(1), x), (x * p) / q)


@_custom_jvp
def xla_erf32(x):
    """``_xla_erf32`` in nx operations, with the derivative of the exact erf,
    2/sqrt(pi) exp(-x**2), as JAX's ``erf``."""
    return _xla_erf32_value(x)


@xla_erf32.defjvp
def _xla_erf32_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    x = _F.asarray(x).astype(_F32)
    return xla_erf32(x), t * (_F.exp(-x * x) * np.float32(2 / math.sqrt(math.pi)))


def log1p_f32(x):
    """XLA's float32 log1p of a float32 array: the fused kernel on a concrete one, the nx
    operations above on a traced one (the same values)."""
    if _traced(x):
        return xla_log1p32(x)
    return _F.asarray(_K.xla_log_f32(np.asarray(_F.asarray(x).numpy(), _F32), True))


def log_f32(x):
    """XLA's float32 log of a float32 array (see ``log1p_f32``)."""
    if _traced(x):
        return xla_log32(x)
    return _F.asarray(_K.xla_log_f32(np.asarray(_F.asarray(x).numpy(), _F32)))
