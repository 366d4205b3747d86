"""The reductions XLA:CPU hands to YNNPACK: their exp, log and sums (ball, dirichlet, maxwell).

XLA:CPU (jax 0.10.2) gives YNNPACK every float32 and float64 reduction (sum, max, min) whose
operand has at least 4,096 elements, fused with the elementwise operations of at least 4,096
elements that produce its operand (where the fusion takes all their users) and those that
consume its result; in a vmap the whole batch's elements count, as JAX compiles one batched
program.  Inside such a fusion exp, log and log1p are YNNPACK's own vectorised approximations
(``ynn_exp``, ``ynn_log``, ``ynn_log1p``: the kernels' ``xla_math`` ops of those names), pow is
the C library's (as XLA's own), products and sums are not contracted into fused multiply-adds,
and a sum has YNNPACK's order (``ynn_row_sum``):

- each tile of a row (128 KiB: 32,768 float32 or 16,384 float64 elements) on its own: L lanes
  (64 bytes of them: 16 float32, 8 float64), blocks of 4 L elements (the last padded with zeros)
  summed lane by lane from zero into the first of three accumulators; a clock that ticks by 4 L
  per 4 blocks while 16 L elements remain, then by L per block, moves the first accumulator into
  the second where it is a multiple of 16 and the second into the third (by Kahan's summation)
  where it is a multiple of 256; at the end the three are flushed in that order and the lanes
  summed in halves (lane i + lane i + L/2, down to one);
- a row of several tiles: the tiles' sums, then those as a row of their own.

The samplers ask ``offloaded(elements)`` with their own reduction's size; under nx.vmap
(``_batch._over_batch``) the number of examples of the vmap levels is set around the call
(``vmap_examples``), so the rule counts what JAX's batched program reduces.

May import: NumPy, the front end, ``nx_rune._kernels`` and ``nx_rune.random``'s ``_common`` and
``_xla_math``.
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from nx_rune import frontend as _F
from nx_rune._kernels import threefry as _K
from nx_rune.random._common import _traced
from nx_rune.random._xla_math import xla_unary

# XLA:CPU hands a float reduction of at least this many operand elements to YNNPACK
YNN_MIN_ELEMENTS = 4096

_EXAMPLES: contextvars.ContextVar = contextvars.ContextVar("nx_random_vmap_examples",
                                                           default=None)


@contextlib.contextmanager
def vmap_examples(count):
    """Within: ``count`` examples (the product of the sizes of the vmap levels batching a
    sampler's arguments), unless an enclosing call set it already (nested vmaps mapped level
    by level re-enter the sampler)."""
    if _EXAMPLES.get() is not None:
        yield
        return
    token = _EXAMPLES.set(int(count))
    try:
        yield
    finally:
        _EXAMPLES.reset(token)


def examples() -> int:
    """The number of examples the current sampler call draws for (1 outside nx.vmap)."""
    n = _EXAMPLES.get()
    return 1 if n is None else n


def offloaded(elements) -> bool:
    """Whether XLA:CPU hands a float reduction of ``elements`` operand elements per example to
    YNNPACK (with this call's vmap examples)."""
    return int(elements) * examples() >= YNN_MIN_ELEMENTS


def flush_denormals(x):
    """``x`` with its denormal elements flushed to (signed) zero, as XLA's arithmetic (and
    YNNPACK's, in XLA's threads) flushes a denormal result."""
    tiny = np.finfo(np.dtype(x.dtype)).tiny
    return _F.where(_F.abs(x) < tiny, x * np.dtype(x.dtype).type(0), x)


def _unary(x, op):
    if _traced(x):
        return xla_unary(x, op)
    return _F.asarray(_K.xla_math(op, np.asarray(_F.asarray(x).numpy())))


def ynn_exp(x):
    """YNNPACK's exp of a float32 or float64 array (the same values concrete and traced;
    differentiable: the tangent times the value)."""
    return _unary(x, "ynn_exp")


def ynn_log(x):
    """YNNPACK's log of a float32 or float64 array (the same values concrete and traced;
    differentiable: the tangent over x)."""
    return _unary(x, "ynn_log")


def ynn_log1p(x):
    """YNNPACK's log1p of a float32 or float64 array (the same values concrete and traced;
    differentiable: the tangent over 1 + x)."""
    return _unary(x, "ynn_log1p")


def ynn_row_sum(x):
    """The sums over the last axis of a float32 or float64 array in YNNPACK's order (see the
    module docstring): the kernel on a concrete array, nx operations on a traced one (the same
    values; differentiable, a sum's derivative)."""
    if _traced(x):
        return _row_sum_ops(x)
    return _F.asarray(_K.ynn_row_sum(np.asarray(_F.asarray(x).numpy())))


def _row_sum_ops(x):
    """``ynn_row_sum`` in nx operations: x (..., k) to (...)."""
    dt = np.dtype(x.dtype)
    k = x.shape[-1]
    tile = 131072 // dt.itemsize
    if k <= tile:
        return _chunk_sum_ops(x, dt)
    full, rest = divmod(k, tile)
    lead = tuple(x.shape[:-1])
    parts = [_chunk_sum_ops(_F.reshape(x[..., :full * tile], lead + (full, tile)), dt)]
    if rest:
        parts.append(_chunk_sum_ops(x[..., full * tile:], dt)[..., None])
    return _row_sum_ops(_F.concatenate(parts, axis=-1) if rest else parts[0])


def _chunk_sum_ops(x, dt):
    """One tile's sums (k at most a tile), the kernel's steps in nx operations."""
    lanes = 64 // dt.itemsize
    block = 4 * lanes
    k = x.shape[-1]
    lead = tuple(x.shape[:-1])
    zero = dt.type(0)
    blocks = -(-k // block)
    if blocks * block != k:
        x = _F.concatenate([x, _F.zeros(lead + (blocks * block - k,), dt)], axis=-1)
    b = _F.reshape(x, lead + (blocks, 4, lanes))
    local = zero + b[..., 0, :]
    for c in range(1, 4):
        local = local + b[..., c, :]                     # (..., blocks, lanes)
    acc = {0: _F.zeros(lead + (lanes,), dt), 1: None, 2: None, "err": None}
    acc[1] = acc[2] = acc["err"] = acc[0]

    def tick(clock):
        if clock & 15:
            return
        acc[1], acc[0] = acc[1] + acc[0], _F.zeros(lead + (lanes,), dt)
        if clock & 255:
            return
        y = acc[1] - acc["err"]
        t = acc[2] + y
        e = (t - acc[2]) - y
        acc["err"] = _F.where(_F.isfinite(e), e, zero)
        acc[2], acc[1] = t, _F.zeros(lead + (lanes,), dt)

    # the unrolled groups of 4 blocks (acc0 is cleared at each of their ticks): their sums at
    # once, then the groups between two Kahan steps at once
    groups = k // (4 * block)
    clock = 0
    if groups:
        g4 = _F.reshape(local[..., :4 * groups, :], lead + (groups, 4, lanes))
        g = zero + g4[..., 0, :]
        for c in range(1, 4):
            g = g + g4[..., c, :]                        # (..., groups, lanes)
        per = 256 // (4 * lanes)                         # groups per Kahan step
        steps = groups // per
        if steps:
            h4 = _F.reshape(g[..., :per * steps, :], lead + (steps, per, lanes))
            h = zero + h4[..., 0, :]
            for c in range(1, per):
                h = h + h4[..., c, :]
            for s in range(steps):
                acc[1] = h[..., s, :]
                tick(0)
        for u in range(per * steps, groups):
            acc[1] = acc[1] + g[..., u, :]
        clock = groups * 4 * lanes
    for j in range(4 * groups, blocks):
        acc[0] = acc[0] + local[..., j, :]
        if (j + 1) * block <= k:                         # a full block ticks, the rest does not
            clock += lanes
            tick(clock)
    tick(0)
    t = zero + acc[2]
    w = lanes // 2
    while w:
        t = t[..., :w] + t[..., w:2 * w]
        w //= 2
    return zero + t[..., 0]
