"""The rejection samplers' primitives (random_gamma, random_poisson, random_binomial): JAX's
while loops, element for element, on concrete keys (NumPy over the Threefry kernel).

May import: NumPy, ``nx_rune._kernels``, ``nx_rune.tensor`` and ``nx_rune.backend`` (its
``_core`` and ``random``).
"""
import numpy as np

from nx_rune._kernels import threefry as _K
from nx_rune.backend._core import IMPLS
from nx_rune.backend.random import (
    _F16,
    _F32,
    _F64,
    _U32,
    _UINT,
    _fma,
    _fused_erfinv,
    _normal_from_bits,
    _normal_lo,
    _random_bits,
    _size,
    _unit_floats_from_bits,
    _xla_math,
)
from nx_rune.tensor import wrap_result as _wrap_result

# ---------------------------------------------------------------------------------------------
# rejection samplers (gamma, poisson, binomial): JAX's loops, element for element
# ---------------------------------------------------------------------------------------------
#
# JAX draws these with while loops whose every iteration splits keys and draws scalars (gamma:
# one loop per element, on its own key) or whole arrays (poisson, binomial: one loop over the
# whole array, every iteration drawing for every element).  The same draws, in the same order,
# run here in lockstep over all elements still looping (NumPy over the Threefry kernel), so the
# accept/reject decisions, and with them the samples, are JAX's.

def _blocks(keys, count):
    """Threefry blocks of counters (0, j), j < count, under each key of ``keys`` (m, 2): the
    words (y0, y1), each (m, count)."""
    m = keys.shape[0]
    ctr = np.empty((m, 2 * count), _U32)
    ctr[:, :count] = 0
    ctr[:, count:] = np.arange(count, dtype=_U32)
    out = _K.threefry_2x32_keys(np.ascontiguousarray(keys, _U32), ctr)
    return out[:, :count], out[:, count:]


def _split_keys(keys, count):
    """``split(key, count)`` of each key of ``keys`` (m, 2): ``count`` arrays of keys (m, 2)."""
    y0, y1 = _blocks(keys, count)
    return [np.stack([y0[:, j], y1[:, j]], axis=-1) for j in range(count)]


def _scalar_bits(keys, dtype):
    """The bits of a scalar draw of ``dtype``'s width under each key (counter (0, 0))."""
    y0, y1 = _blocks(keys, 1)
    y0, y1 = y0[:, 0], y1[:, 0]
    width = np.dtype(dtype).itemsize
    if width == 8:
        return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
    # narrower draws keep the low bits of the 32-bit word (XLA's convert)
    return y0 ^ y1 if width == 4 else (y0 ^ y1).astype(_UINT[8 * width])


def _normal_of_bits(b, dtype):
    """``_normal_from_bits`` of the 1-D bits ``b``; float32 through the fused kernel (the same
    values, without the NumPy reference's temporaries)."""
    if dtype == _F32:
        out = _fused_erfinv(b, b.shape, dtype, _normal_lo(dtype), dtype.type(1))
        if out is not None:
            return out
    return _normal_from_bits(b, dtype)


def _log_as(x, dtype):
    """log in ``dtype`` as JAX computes it on CPU (``_xla_math``)."""
    return _xla_math("log", np.asarray(x, dtype))


def _gamma_one(keys, alpha, log_space):
    """JAX's ``_gamma_one`` (Marsaglia and Tsang, with the boost for alpha < 1) for element i
    of ``alpha`` (m,) on key ``keys[i]``, all elements in lockstep."""
    dt = alpha.dtype
    t = dt.type
    one, third = t(1), t(1.0 / 3.0)
    m = alpha.shape[0]
    boost = alpha >= one
    a = np.where(boost, alpha, alpha + one)
    d = a - third
    # XLA rewrites 1/3 / sqrt(d) as 1/3 * rsqrt(d), and its rsqrt is not 1 / sqrt
    c = third * _xla_math("rsqrt", d)
    key, sub = _split_keys(keys, 2)
    X, V, U = np.zeros(m, dt), np.ones(m, dt), np.full(m, 2, dt)
    active = np.ones(m, bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        while True:
            # 1 - 0.0331 X**2 and X / 2 + d ((1 - V) + log V) with the multiply-adds
            # XLA's compiler contracts (the first product of a sum of two)
            lhs1 = _fma(-t(0.0331), X * X, one, dt)
            rhs2 = _fma(X, t(0.5), d * ((one - V) + _log_as(V, dt)), dt)
            cond = (U >= lhs1) & (_log_as(U, dt) >= rhs2)
            active &= cond
            idx = np.flatnonzero(active)
            if not idx.size:
                break
            key_next, x_key, u_key = _split_keys(key[idx], 3)
            key[idx] = key_next
            n = idx.size
            x, v = np.zeros(n, dt), np.full(n, -1, dt)
            pending = np.arange(n)
            kk = x_key
            while pending.size:
                kk_next, s = _split_keys(kk[pending], 2)
                kk[pending] = kk_next
                xs = _normal_of_bits(_scalar_bits(s, dt), dt)
                x[pending] = xs
                # 1 + x * c with one rounding: XLA:CPU contracts it into a fused multiply-add
                v[pending] = _fma(xs, c[idx[pending]], np.full(pending.size, one), dt)
                pending = pending[v[pending] <= 0]
            X[idx], V[idx] = x * x, v * v * v
            U[idx] = _unit_floats_from_bits(_scalar_bits(u_key, dt), dt)
        if log_space:
            u = _unit_floats_from_bits(_scalar_bits(sub, dt), dt)
            log_samples = _xla_math("log1p", -u)
            # log_space "ynn": the logs of a log-gamma draw XLA:CPU fuses into a reduction it
            # hands to YNNPACK (dirichlet from 4,096 values), YNNPACK's log
            log = "ynn_log" if log_space == "ynn" else "log"
            base = _xla_math(log, np.asarray(d, dt)) + _xla_math(log, np.asarray(V, dt))
            # (a select between the product and the sum: not contracted)
            log_boost = np.where(boost | (log_samples == 0), t(0), log_samples * (one / alpha))
            return base + log_boost
        samples = one - _unit_floats_from_bits(_scalar_bits(sub, dt), dt)
        power = _xla_math("pow", samples, one / alpha)
        out = (d * V) * np.where(boost, one, power)
        if dt == _F16:
            # float16 products are float32 ones rounded to float16: its denormals stay
            return out
        # XLA's arithmetic flushes a denormal product to zero
        return np.where(np.abs(out) < np.finfo(dt).tiny, t(0), out)


def _element_keys(words, size):
    """Each key of ``words`` (b, 2) split into ``size`` keys, flattened: (b * size, 2)."""
    if not size:
        return np.zeros((0, 2), _U32)
    return np.concatenate([_K.iota_pairs(int(k0), int(k1), size) for k0, k1 in words.tolist()])


def _random_gamma_impl(key, alpha, *, log_space):
    """``random_gamma``: a gamma (or log-gamma) sample of every element of ``alpha``; ``key``
    (*batch, 2) with ``alpha`` (*batch, *shape): element i of batch b on split(key[b], size)[i],
    as JAX's ``random_gamma_p``."""
    words, a = key._np(), alpha._np()
    if words.dtype != _U32 or words.ndim == 0 or words.shape[-1] != 2:
        raise TypeError(f"key must be a uint32 array of shape (*batch, 2), got {words.dtype} "
                        f"of shape {words.shape}")
    if a.dtype.kind != "f":
        raise TypeError(f"a must be a float array, got {a.dtype}")
    batch = words.shape[:-1]
    if a.shape[:len(batch)] != batch:
        raise ValueError(f"a must start with the key's batch shape {batch}, got {a.shape}")
    flat = words.reshape(-1, 2)
    size = _size(a.shape[len(batch):])
    keys = _element_keys(flat, size)
    out = _gamma_one(keys, np.ascontiguousarray(a).reshape(-1).copy(), log_space)
    return _wrap_result(out.astype(a.dtype).reshape(a.shape))


def _uniform_draw(k, shape, dtype):
    """``uniform(k, shape, dtype)`` in [0, 1) for key words ``k`` (a pair of ints)."""
    return _unit_floats_from_bits(_random_bits(k, np.finfo(dtype).bits, shape), dtype)


def _key_chain_split(k, count):
    pairs = _K.iota_pairs(k[0], k[1], count)
    return [(int(p[0]), int(p[1])) for p in pairs]


def _poisson_knuth(k, lam, shape):
    """JAX's ``_poisson_knuth``: multiply uniforms until their product drops below exp(-lam)."""
    n = np.zeros(shape, np.int64)
    log_prod = np.zeros(shape, np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        while (log_prod > -lam).any():
            k, sub = _key_chain_split(k, 2)
            n = np.where(log_prod > -lam, n + 1, n)
            log_prod = log_prod + _log_as(_uniform_draw(sub, shape, _F32), _F32)
    return n - 1


def _lgamma_as(x, dtype):
    from scipy.special import gammaln
    return gammaln(x.astype(np.float64)).astype(dtype)


def _poisson_rejection(k, lam, shape):
    """JAX's ``_poisson_rejection`` (Hormann's transformed rejection), over the whole array."""
    f = np.float32
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_lam = _log_as(lam, _F32)
        b = f(0.931) + f(2.53) * np.sqrt(lam)
        a = f(-0.059) + f(0.02483) * b
        inv_alpha = f(1.1239) + f(1.1328) / (b - f(3.4))
        v_r = f(0.9277) - f(3.6224) / (b - f(2))
        k_out = np.full(shape, -1, np.float32)
        accepted = np.zeros(shape, bool)
        while not accepted.all():
            k, sk0, sk1 = _key_chain_split(k, 3)
            u = _uniform_draw(sk0, shape, _F32) - f(0.5)
            v = _uniform_draw(sk1, shape, _F32)
            us = f(0.5) - np.abs(u)
            kk = np.floor((f(2) * a / us + b) * u + lam + f(0.43))
            s = _log_as(v * inv_alpha / (a / (us * us) + b), _F32)
            t = -lam + kk * log_lam - _lgamma_as(kk + f(1), _F32)
            accept1 = (us >= f(0.07)) & (v <= v_r)
            reject = (kk < 0) | ((us < f(0.013)) & (v > us))
            accept = accept1 | (~reject & (s <= t))
            k_out = np.where(accept, kk, k_out)
            accepted |= accept
    return k_out


def _poisson_one(k, lam, dtype):
    """JAX's ``_poisson`` of key words ``k`` and float32 ``lam`` (the sample's shape)."""
    shape = lam.shape
    use_knuth = np.isnan(lam) | (lam < 10)
    lam_knuth = np.where(use_knuth, lam, np.float32(0))
    lam_rej = np.where(use_knuth, np.float32(1e5), lam)
    knuth = _poisson_knuth(k, lam_knuth, shape).astype(dtype)
    if use_knuth.all():
        out = knuth
    else:
        rej = _poisson_rejection(k, lam_rej, shape)
        with np.errstate(invalid="ignore"):
            out = np.where(use_knuth, knuth, rej.astype(dtype))
    return np.where(lam == 0, dtype.type(0), out).astype(dtype)


def _per_key(key, params, fn):
    """``fn(words, *params)`` for each key of ``key`` (*batch, 2), the parameters' leading
    dimensions its batch: the results stacked (*batch, *shape)."""
    words = key._np()
    if words.dtype != _U32 or words.ndim == 0 or words.shape[-1] != 2:
        raise TypeError(f"key must be a uint32 array of shape (*batch, 2), got {words.dtype} "
                        f"of shape {words.shape}")
    batch = words.shape[:-1]
    arrays = [p._np() for p in params]
    if not batch:
        return fn((int(words[0]), int(words[1])), *arrays)
    flat = words.reshape(-1, 2)
    rows = [fn((int(k0), int(k1)), *(a.reshape((-1,) + a.shape[len(batch):])[i]
                                     for a in arrays))
            for i, (k0, k1) in enumerate(flat.tolist())]
    return np.stack(rows).reshape(batch + rows[0].shape) if rows else np.zeros(
        batch + arrays[0].shape[len(batch):], rows and rows[0].dtype or np.float32)


def _random_poisson_impl(key, lam, *, dtype):
    """``random_poisson``: JAX's poisson of float32 ``lam`` (*batch, *shape) for each key."""
    dt = np.dtype(dtype)
    return _wrap_result(_per_key(key, [lam], lambda k, l: _poisson_one(
        k, np.asarray(l, np.float32), dt)).astype(dt))


_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])


def _stirling_tail(k):
    t = k.dtype.type
    use_table = k <= 9
    kc = np.clip(k, t(0), t(9))
    kp1sq = (kc + t(1)) * (kc + t(1))
    approx = (t(1.0 / 12) - (t(1.0 / 360) - t(1.0 / 1260) / kp1sq) / kp1sq) / (kc + t(1))
    table = _STIRLING_TAIL.astype(k.dtype)[np.nan_to_num(np.floor(kc)).astype(np.int32)]
    return np.where(use_table, table, approx)


def _binomial_inversion(k, count, prob, shape):
    t = prob.dtype.type
    with np.errstate(divide="ignore", invalid="ignore"):
        log1m = np.log1p(-prob) if prob.dtype == _F64 else np.log1p(
            (-prob).astype(np.float64)).astype(prob.dtype)
        num = np.zeros(shape, prob.dtype)
        total = np.zeros(shape, prob.dtype)
        while (total <= count).any():
            sub, k = _key_chain_split(k, 2)
            num = np.where(total <= count, num + t(1), num)
            u = _uniform_draw(sub, shape, prob.dtype)
            total = total + np.ceil(_log_as(u, prob.dtype) / log1m)
    return num - t(1)


def _btrs(k, count, prob, shape):
    dt = prob.dtype
    t = dt.type
    lg = lambda x: _log_as(x, dt)     # noqa: E731
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        stddev = np.sqrt(count * prob * (t(1) - prob))
        b = t(1.15) + t(2.53) * stddev
        a = t(-0.0873) + t(0.0248) * b + t(0.01) * prob
        c = count * prob + t(0.5)
        v_r = t(0.92) - t(4.2) / b
        r = prob / (t(1) - prob)
        alpha = (t(2.83) + t(5.1) / b) * stddev
        m = np.floor((count + t(1)) * prob)
        k_out = np.full(shape, -1, dt)
        accepted = np.zeros(shape, bool)
        while not accepted.all():
            k, sk0, sk1 = _key_chain_split(k, 3)
            u = _uniform_draw(sk0, shape, dt)
            v = _uniform_draw(sk1, shape, dt)
            u = u - t(0.5)
            us = t(0.5) - np.abs(u)
            accept1 = (us >= t(0.07)) & (v <= v_r)
            kk = np.floor((t(2) * a / us + b) * u + c)
            reject = (kk < 0) | (kk > count)
            v = lg(v * alpha / (a / (us * us) + b))
            ub = ((m + t(0.5)) * lg((m + t(1)) / (r * (count - m + t(1))))
                  + (count + t(1)) * lg((count - m + t(1)) / (count - kk + t(1)))
                  + (kk + t(0.5)) * lg(r * (count - kk + t(1)) / (kk + t(1)))
                  + _stirling_tail(m) + _stirling_tail(count - m)
                  - _stirling_tail(kk) - _stirling_tail(count - kk))
            accept = accept1 | (~reject & (v <= ub))
            k_out = np.where(accept, kk, k_out)
            accepted |= accept
    return k_out


def _binomial_one(k, count, prob):
    """JAX's ``_binomial`` of key words ``k``, float ``count`` and ``prob`` (equal shapes)."""
    dt = prob.dtype
    t = dt.type
    shape = prob.shape
    with np.errstate(invalid="ignore"):
        p_lt_half = prob < t(0.5)
        q = np.where(p_lt_half, prob, t(1) - prob)
        count_bad = np.isnan(count) | (count < 0)
        count_inf = np.isinf(count)
        q_nan, q_neg = np.isnan(q), q < 0
        q = np.where(q_nan | q_neg, t(0.01), q)
        use_inv = count_bad | (count * q <= t(10))
        count = np.floor(count)
        count_inv = np.where(use_inv, count, t(0))
        count_btrs = np.where(use_inv, t(1e4), count)
        q_btrs = np.where(use_inv, t(0.5), q)
        samples = _binomial_inversion(k, count_inv, q, shape)
        if not use_inv.all():
            samples = np.where(use_inv, samples, _btrs(k, count_btrs, q_btrs, shape))
        invalid = q_neg | q_nan | count_bad
        samples = np.where(invalid, t(np.nan), samples)
        samples = np.where(count_inf & ~invalid, t(np.inf), samples)
        return np.where(p_lt_half | count_bad | q_nan | count_inf, samples,
                        count - samples).astype(dt)


def _random_binomial_impl(key, count, prob):
    """``random_binomial``: JAX's binomial of float ``count`` and ``prob`` (*batch, *shape,
    equal dtypes) for each key."""
    return _wrap_result(_per_key(key, [count, prob], _binomial_one))


IMPLS["random_gamma"] = _random_gamma_impl
IMPLS["random_poisson"] = _random_poisson_impl
IMPLS["random_binomial"] = _random_binomial_impl
