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
from nx_rune import primitives as _P
from nx_rune._kernels import threefry as _K
from nx_rune.autodiff.custom import custom_jvp as _custom_jvp
from nx_rune.backend.random import (
    _XLA_ERF_P,
    _XLA_ERF_Q,
    _XLA_LOG1P_P,
    _XLA_LOG1P_Q,
    _XLA_LOG_P,
    _two_prod,
    _two_sum,
)
from nx_rune.random._common import _traced

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
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
        return xla_unary(x.astype(_F32), "log1p")
    return _F.asarray(_K.xla_log_f32(np.asarray(_F.asarray(x).numpy(), _F32), True))


def log_f32(x):
    """XLA's float32 log of a float32 array (see ``log1p_f32``)."""
    if _traced(x):
        return xla_unary(x.astype(_F32), "log")
    return _F.asarray(_K.xla_log_f32(np.asarray(_F.asarray(x).numpy(), _F32)))


def _add_round_odd64(a, b):
    """``a + b`` rounded to odd (of the two neighbours of an inexact sum, the odd one): the
    parity of |s|'s last significand bit is that of |s| / u, u the gap below |s|."""
    s, e = _two_sum(a, b)
    m = _F.abs(s)
    gap = m - _F.nextafter(m, _F.zeros_like(m))
    q = _F.where(gap > 0, m / _F.where(gap > 0, gap, 1.0), 0.0)
    fix = _F.logical_and(e != 0, _F.remainder(q, 2.0) != 1)
    return _F.where(fix, _F.nextafter(s, _F.where(e > 0, np.inf, -np.inf).astype(_F64)), s)


def _fma_value64(a, b, c):
    """Boldo and Melquiond's float64 fma: the exact product and sum, the error rounded to odd."""
    ph, pl = _two_prod(a, b)
    th, tl = _two_sum(c, ph)
    return th + _add_round_odd64(tl, pl)


def _fma64(a, b, c):
    """float64 ``a * b + c`` rounded once, in nx operations."""
    # (Python floats as float64 first: in x32 mode asarray would round them to float32)
    a, b, c = (_F.asarray(np.float64(v) if isinstance(v, float) else v).astype(_F64)
               for v in (a, b, c))
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape), tuple(c.shape))
    return _fma_value64(*(_F.broadcast_to(v, shape) for v in (a, b, c)))


def _bits32(v):
    return np.array([v], np.uint32).view(np.float32)[0]


# XLA:CPU's float32 exp (see ``nx_rt_xla_exp32``): its constants, by their bits.
_EXP32_LOG2E = _bits32(0x3FB8AA3B)
_EXP32_C2 = _bits32(0xB95E8083)
_EXP32_P = [_bits32(v) for v in (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA)]


def _xla_exp32_value(x):
    x = _F.asarray(x).astype(_F32)
    nan = _F.isnan(x)
    xc = _F.where((x >= np.float32(-87.8)) | nan, x, np.float32(-87.8))
    xc = _F.where((xc <= np.float32(88.8)) | nan, xc, np.float32(88.8))
    n = _F.floor(_fma32(xc, _EXP32_LOG2E, np.float32(0.5)))
    n = _F.where(nan, n, _F.clip(n, np.float32(-127), np.float32(127)))
    r = _fma32(-n, np.float32(0.693359375), xc)
    r = _fma32(-n, _EXP32_C2, r)
    y = _fma32(r, _EXP32_P[0], _EXP32_P[1])
    for c in _EXP32_P[2:] + [np.float32(0.5)]:
        y = _fma32(y, r, c)
    y = _fma32(y, r * r, r) + np.float32(1)
    # 2**n from the exponent bits: n = -127 gives the bits of 0
    scale = _F.where(n <= np.float32(-127), 0.0,
                     _F.exp2(_F.where(nan, 0.0, n.astype(_F64)))).astype(_F32)
    out = y * _F.where(nan, np.float32(1), scale)
    return _F.where(_F.abs(out) < _TINY32, out * np.float32(0), out)   # flushed denormals


_EXP64_LO, _EXP64_HI = -708.3964185322641, 709.782712893384


def _xla_exp64_value(x):
    x = _F.asarray(x).astype(_F64)
    nan = _F.isnan(x)
    xc = _F.where(nan, x, _F.clip(x, _EXP64_LO, _EXP64_HI))
    n = _F.floor(_fma64(xc, 1.4426950408889634073599, 0.5))
    n = _F.where(nan, 0.0, n)
    g = _fma64(-n, 0.693145751953125, xc)
    g = _fma64(-n, 1.42860682030941723212e-6, g)
    g2 = g * g
    p = _fma64(_fma64(1.26177193074810590878e-4, g2, 3.02994407707441961300e-2), g2,
               9.99999999999999999910e-1) * g
    q = _fma64(_fma64(_fma64(3.00198505138664455042e-6 * _F.ones_like(g2), g2,
                             2.52448340349684104192e-3), g2, 2.27265548208155028766e-1), g2, 2.0)
    e = (p / (q - p)) * 2.0 + 1.0                     # fma(t, 2, 1): 2t is exact
    half = _F.floor(n * 0.5)                          # 2**n in two exact factors (n <= 1024)
    r = (e * _F.exp2(half)) * _F.exp2(n - half)
    r = _F.where(x < _EXP64_LO, 0.0, r)
    return _F.where(x > _EXP64_HI, np.inf, r)


@_custom_jvp
def xla_exp(x):
    """XLA:CPU's exp of a float32 or float64 array (``nx_rt_xla_exp32``/``64``) in nx
    operations, with exp's derivative, as JAX's: the tangent times the value."""
    if _F.asarray(x).dtype == _F64:
        return _xla_exp64_value(x)
    return _xla_exp32_value(x)


@xla_exp.defjvp
def _xla_exp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = xla_exp(x)
    return y, t * y


def _xla_log1p64_value(x):
    """XLA:CPU's float64 log1p (``nx_rt_xla_log1p64``): its rational approximation for
    |x| < sqrt(2) - 1; beyond it log(1 + x) with the C library's log, as XLA calls it (the
    ``xla_math`` primitive: NumPy's log rounds otherwise in about 0.2% of arguments)."""
    x = _F.asarray(x).astype(_F64)
    pn = _F.ones_like(x) * 4.5270000862445199635215E-5
    for c in (4.9854102823193375972212E-1, 6.5787325942061044846969E0,
              2.9911919328553073277375E1, 6.0949667980987787057556E1,
              5.7112963590585538103336E1, 2.0039553499201281259648E1):
        pn = _fma64(pn, x, c)
    pd = _F.ones_like(x)
    for c in (1.5062909083469192043167E1, 8.3047565967967209469434E1,
              2.2176239823732856465394E2, 3.0909872225312059774938E2,
              2.1642788614495947685003E2, 6.0118660497603843919306E1):
        pd = _fma64(pd, x, c)
    x2 = x * x
    small = x + _fma64(x2, -0.5, (x * x2) * (pn / pd))
    return _F.where(_F.abs(x) < 0.41421356237309504880, small, xla_unary(x + 1.0, "log"))


@_custom_jvp
def xla_log1p64(x):
    """XLA:CPU's float64 log1p (``nx_rt_xla_log1p64``, the same values concrete and traced);
    the derivative 1 / (1 + x), as JAX's."""
    return _xla_log1p64_value(x)


@xla_log1p64.defjvp
def _xla_log1p64_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return xla_log1p64(x), t / (1.0 + _F.asarray(x).astype(_F64))


def exp_f(x):
    """JAX's exp of a float array: XLA:CPU's for float16, float32 and float64 (the kernel on a
    concrete array, the ``xla_math`` primitive traced: the same values), else through
    float64."""
    dt = np.dtype(_F.asarray(x).dtype) if not _traced(x) else np.dtype(x.dtype)
    if dt not in (_F16, _F32, _F64):
        return _F.exp(x.astype(_F64)).astype(dt)
    if _traced(x):
        return xla_unary(x, "exp")
    return _F.asarray(_K.xla_math("exp", np.asarray(_F.asarray(x).numpy(), dt)))


def _fma_value(a, b, c):
    dt = np.dtype(a.dtype) if _traced(a) else np.dtype(_F.asarray(a).dtype)
    if dt in (_F32, _F64) and not any(_traced(v) for v in (a, b, c)):
        # concrete: the kernel (the same values as the operations below)
        a, b, c = np.broadcast_arrays(*(np.asarray(_F.asarray(v).numpy(), dt)
                                        for v in (a, b, c)))
        return _F.asarray(_K.xla_fma(*(np.ascontiguousarray(v) for v in (a, b, c)))
                          .reshape(a.shape))
    if dt == _F32:
        return _fma32(a, b, c)
    if dt == _F64:
        return _fma64(a, b, c)
    return a * b + c


@_custom_jvp
def fma(a, b, c):
    """``a * b + c`` rounded once (float32, float64; others two roundings), in nx operations:
    the multiply-adds XLA:CPU's compiler contracts; the derivative is the exact value's."""
    return _fma_value(a, b, c)


@fma.defjvp
def _fma_jvp(primals, tangents):
    (a, b, c), (ta, tb, tc) = primals, tangents
    return fma(a, b, c), ta * b + a * tb + tc


def xla_pow(x, y):
    """JAX's ``x ** y`` of float arrays on CPU: for float32 and float64 the C library's pow with
    XLA's flush-to-zero, float16 its powf of the widened operands rounded back (the primitive
    ``xla_pow``, the same bits eager, under jit and vmap, and differentiable in both operands);
    other float dtypes through float64 rounded once.  ``y`` broadcasts against ``x`` and takes
    its dtype."""
    x = x if _traced(x) else _F.asarray(x)
    dt = np.dtype(x.dtype)
    y = y if _traced(y) else _F.asarray(np.asarray(y) if not hasattr(y, "shape") else y)
    y = y.astype(dt)
    if dt not in (_F16, _F32, _F64):
        return _F.power(x.astype(_F64), y.astype(_F64)).astype(dt)
    shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    if tuple(x.shape) != shape:
        x = _F.broadcast_to(x, shape)
    if tuple(y.shape) != shape:
        y = _F.broadcast_to(y, shape)
    return _P.bind(_P.xla_pow_p, x, y)


def xla_unary(x, op):
    """JAX's ``op`` (exp, log, log1p, tan, rsqrt or erf) of a float16, float32 or float64 array
    on CPU, as the primitive ``xla_math`` (the same bits eager and traced, differentiable)."""
    return _P.bind(_P.xla_math_p, x if _traced(x) else _F.asarray(x), op=op)
