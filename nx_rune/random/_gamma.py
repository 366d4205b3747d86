"""The gamma family: gamma, loggamma, beta, chisquare, f, t, generalized_normal; and the
counting samplers drawn by rejection loops, poisson and binomial.

gamma draws through the primitive ``random_gamma`` (JAX's Marsaglia-Tsang loop per element,
on the element's own split key, in ``nx_rune.backend.random``), with JAX's implicit
reparameterisation derivative in the shape parameter: d sample / d a = -(dF/da) / (dF/dx) for
F(a, x) the regularized lower incomplete gamma function (``random_gamma_grad``).  The samplers
built on it (beta, dirichlet, chisquare, f, t, generalized_normal, ball) inherit it.
"""
from __future__ import annotations

import numpy as np

from nx_rune import frontend as _F
from nx_rune import primitives as _P
from nx_rune.autodiff.custom import custom_jvp as _custom_jvp
from nx_rune.dtypes import default_float, default_int
from nx_rune.random._bits import normal
from nx_rune.random._common import (
    _check_param_shape,
    _dtype,
    _dtype_of,
    _float_dtype_of,
    _key_arg,
    _shape,
    _traced,
    _val,
)
from nx_rune.random._continuous import _reciprocal_param, _split_pair
from nx_rune.random._discrete import rademacher
from nx_rune.random._xla_math import exp_f, xla_pow
from nx_rune.typing import Array, ArrayLike, DTypeLike, ShapeLike

_F64 = np.dtype(np.float64)


def _gamma_grad(a, x):
    """JAX's ``random_gamma_grad(a, x)``: the derivative of the gamma sample x in a at fixed
    CDF value, -(d gammainc / da) / (x**(a - 1) exp(-x) / Gamma(a)), in float64."""
    from nx_rune.scipy.special import gammaln
    a64, x64 = a.astype(_F64), x.astype(_F64)
    da = _P.bind(_P.gammainc_da_p, a64, x64)
    log_pdf = (a64 - 1.0) * _F.log(x64) - x64 - gammaln(a64)
    return (-da * _F.exp(-log_pdf)).astype(_dtype_of(a))


@_custom_jvp
def _gamma_sample(key, a):
    return _P.bind(_P.random_gamma_p, key, a, log_space=False)


@_gamma_sample.defjvp
def _gamma_sample_jvp(primals, tangents):
    (key, a), (_, ta) = primals, tangents
    x = _gamma_sample(key, a)
    return x, ta * _gamma_grad(a, x)


@_custom_jvp
def _loggamma_sample(key, a):
    return _P.bind(_P.random_gamma_p, key, a, log_space=True)


def _loggamma_tangent(lx, a, ta):
    x = _F.exp(lx.astype(_F64))
    x = _F.where(x == 0, np.finfo(_dtype_of(a)).tiny, x)
    grad = _gamma_grad(a.astype(_F64), x) / x
    return lx, ta * grad.astype(_dtype_of(a))


@_loggamma_sample.defjvp
def _loggamma_sample_jvp(primals, tangents):
    (key, a), (_, ta) = primals, tangents
    return _loggamma_tangent(_loggamma_sample(key, a), a, ta)


@_custom_jvp
def _loggamma_ynn_sample(key, a):
    # log-gamma draws whose last logs are YNNPACK's: where XLA:CPU fuses them into a reduction
    # it hands to YNNPACK (dirichlet from 4,096 values)
    return _P.bind(_P.random_gamma_p, key, a, log_space="ynn")


@_loggamma_ynn_sample.defjvp
def _loggamma_ynn_sample_jvp(primals, tangents):
    (key, a), (_, ta) = primals, tangents
    return _loggamma_tangent(_loggamma_ynn_sample(key, a), a, ta)


def _key_tensor(k):
    if isinstance(k, tuple):
        return _F.asarray(np.array(k, np.uint32))
    return k if _traced(k) else _F.asarray(k)


def _gamma_of(k, a, shape, dt, log_space=False):
    """Gamma (log-gamma; "ynn": with YNNPACK's logs) samples of ``a`` (cast to ``dt``,
    broadcast to ``shape``)."""
    a = _F.broadcast_to(a.astype(dt), shape)
    if not _traced(a):
        a = _F.asarray(np.array(a.numpy(), order="C"))   # (ascontiguousarray makes 0-d 1-d)
    key = _key_tensor(k)
    sample = {False: _gamma_sample, True: _loggamma_sample, "ynn": _loggamma_ynn_sample}
    return sample[log_space](key, a)


def _loggamma_of(k, a, shape, dt, ynn=False):
    return _gamma_of(k, a, shape, dt, log_space="ynn" if ynn else True)


def _shape_param(a, name, dt):
    v = _val(a, name)
    if not _traced(v) and _dtype_of(v).kind not in "biuf":
        raise TypeError(f"{name} must be a real number or array, got {v.dtype}")
    v = v.astype(dt)
    return v if _traced(v) else _F.asarray(v)


def _out_shape(fn, shape, *params):
    shapes = [tuple(p.shape) for p in params]
    if shape is None:
        return np.broadcast_shapes(*shapes)
    shape = _shape(shape)
    _check_param_shape(fn, shape, *shapes)
    return shape


def gamma(key: ArrayLike, a: ArrayLike, shape: ShapeLike | None = None,
          dtype: DTypeLike = None) -> Array:
    """Standard gamma samples of shape parameter ``a`` (density proportional to
    x**(a - 1) exp(-x)): Tensor of ``shape`` (default a's), float ``dtype`` (default float32,
    float64 in x64 mode).

    Differentiable in ``a`` by JAX's implicit reparameterisation gradient.
    """
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "gamma")
    av = _shape_param(a, "a", dt)
    shape = _out_shape("gamma", shape, av)
    return _gamma_of(k, av, shape, dt)


def loggamma(key: ArrayLike, a: ArrayLike, shape: ShapeLike | None = None,
             dtype: DTypeLike = None) -> Array:
    """Logarithms of standard gamma samples of ``a``, drawn in log space (accurate for small
    ``a``): Tensor of ``shape`` (default a's), float ``dtype``; differentiable in ``a``."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "loggamma")
    av = _shape_param(a, "a", dt)
    shape = _out_shape("loggamma", shape, av)
    return _gamma_of(k, av, shape, dt, log_space=True)


def beta(key: ArrayLike, a: ArrayLike, b: ArrayLike, shape: ShapeLike | None = None,
         dtype: DTypeLike = None) -> Array:
    """Beta samples of ``a`` and ``b`` (from two log-gamma draws): Tensor of ``shape``
    (default the parameters' broadcast shape), float ``dtype``; differentiable in ``a`` and
    ``b``."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "beta")
    av, bv = _shape_param(a, "a", dt), _shape_param(b, "b", dt)
    shape = _out_shape("beta", shape, av, bv)
    ka, kb = _split_pair(k)
    log_a = _loggamma_of(ka, av, shape, dt)
    log_b = _loggamma_of(kb, bv, shape, dt)
    log_max = _F.maximum(log_a, log_b)
    ga = exp_f(log_a - log_max)
    gb = exp_f(log_b - log_max)
    return ga / (ga + gb)


def chisquare(key: ArrayLike, df: ArrayLike, shape: ShapeLike | None = None,
              dtype: DTypeLike = None) -> Array:
    """Chi-square samples of ``df`` degrees of freedom (``2 exp(loggamma(df / 2))``): Tensor
    of ``shape`` (default df's), float ``dtype``."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "chisquare")
    df = _shape_param(df, "df", dt)
    shape = _out_shape("chisquare", shape, df)
    log_g = _loggamma_of(k, df / dt.type(2), shape, dt)
    return exp_f(log_g) * dt.type(2)


def f(key: ArrayLike, dfnum: ArrayLike, dfden: ArrayLike, shape: ShapeLike | None = None,
      dtype: DTypeLike = None) -> Array:
    """F-distribution samples of ``dfnum`` and ``dfden`` degrees of freedom: Tensor of
    ``shape`` (default the parameters' broadcast shape), float ``dtype``."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "f")
    dfnum, dfden = _shape_param(dfnum, "dfnum", dt), _shape_param(dfden, "dfden", dt)
    shape = _out_shape("f", shape, dfnum, dfden)
    k_den, k_num = _split_pair(k)
    # JAX's (chi2_num / dfnum) / (chi2_den / dfden), which XLA's simplifier turns into
    # (chi2_num * dfden) / (dfnum * chi2_den): one division, its rounding
    num = chisquare(k_num, dfnum, shape, dt)
    den = chisquare(k_den, dfden, shape, dt)
    return (num * dfden) / (dfnum * den)


def t(key: ArrayLike, df: ArrayLike, shape: ShapeLike | None = None,
      dtype: DTypeLike = None) -> Array:
    """Student's t samples of ``df`` degrees of freedom: Tensor of ``shape`` (default df's),
    float ``dtype``."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "t")
    df = _shape_param(df, "df", dt)
    shape = _out_shape("t", shape, df)
    k_n, k_g = _split_pair(k)
    n = normal(k_n, shape, dt)
    half = df / dt.type(2)
    g = _gamma_of(k_g, half, shape, dt)
    return n * _F.sqrt(half / g)


def generalized_normal(key: ArrayLike, p: float, shape: ShapeLike = (),
                       dtype: DTypeLike = None) -> Array:
    """Generalized normal samples of exponent ``p`` (density proportional to exp(-|x|**p)):
    Tensor of ``shape``, float ``dtype``."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "generalized_normal")
    shape = _shape(shape)
    k1, k2 = _split_pair(k)
    inv_p = _reciprocal_param(p, "p", dt)
    g = _gamma_of(k1, inv_p, shape, dt)
    r = rademacher(k2, shape, dt)
    # XLA calls the C library's pow (p is traced in JAX's sampler: no rewrite into sqrt)
    return r * xla_pow(g, inv_p)


def poisson(key: ArrayLike, lam: ArrayLike, shape: ShapeLike | None = None,
            dtype: DTypeLike = None) -> Array:
    """Poisson samples of rate ``lam`` (cast to float32, as JAX): Tensor of ``shape`` (default
    lam's) and integer ``dtype`` (default int32, int64 in x64 mode).  Knuth's product of
    uniforms below lam = 10, Hormann's transformed rejection above, JAX's loops exactly."""
    k = _key_arg(key)
    dt = np.dtype(default_int() if dtype is None else dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to poisson must be an integer dtype, got {dt}")
    lv = _val(lam, "lam")
    if not _traced(lv) and _dtype_of(lv).kind not in "biuf":
        raise TypeError(f"lam must be a real number or array, got {lv.dtype}")
    shape = tuple(lv.shape) if shape is None else _shape(shape)
    lv = _F.broadcast_to(_F.asarray(lv) if not _traced(lv) else lv, shape).astype(np.float32)
    return _P.bind(_P.random_poisson_p, _key_tensor(k), lv, dtype=dt)


def binomial(key: ArrayLike, n: ArrayLike, p: ArrayLike, shape: ShapeLike | None = None,
             dtype: DTypeLike = None) -> Array:
    """Binomial samples of ``n`` trials with success probability ``p``: Tensor of ``shape``
    (default the parameters' broadcast shape), float ``dtype`` (as JAX).  Inversion where
    n * min(p, 1 - p) <= 10, BTRS rejection otherwise, JAX's loops exactly; NaN for a negative
    or NaN ``n`` or an invalid ``p``, inf for an infinite ``n``."""
    k = _key_arg(key)
    dt = _dtype(dtype, default_float(), "f", "binomial")
    nv, pv = _val(n, "n"), _val(p, "p")
    if type(p) is float:
        pv = pv.astype(default_float())
    for v, name in ((nv, "n"), (pv, "p")):
        if not _traced(v) and _dtype_of(v).kind not in "biuf":
            raise TypeError(f"{name} must be a real number or array, got {v.dtype}")
    pdt = _float_dtype_of(pv) if not _traced(pv) else _float_dtype_of(np.zeros(0, pv.dtype))
    if shape is None:
        shape = np.broadcast_shapes(tuple(nv.shape), tuple(pv.shape))
    else:
        shape = _shape(shape)
        _check_param_shape("binomial", shape, tuple(nv.shape), tuple(pv.shape))
    pv = _F.broadcast_to(_F.asarray(pv) if not _traced(pv) else pv, shape).astype(pdt)
    nv = _F.broadcast_to(_F.asarray(nv) if not _traced(nv) else nv, shape).astype(pdt)
    out = _P.bind(_P.random_binomial_p, _key_tensor(k), nv, pv)
    return out.astype(dt)
