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
from nx_rune.compiler.tracing import mark_batch_size_choice
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
    if int(elements) * examples() >= YNN_MIN_ELEMENTS:
        return True
    # under a trace that a vmap may batch later, the answer could change with its size
    mark_batch_size_choice()
    return False


def flush_denormals(x):
    """``x`` with its denormal elements flushed to (signed) zero, as XLA's arithmetic (and
    YNNPACK's, in XLA's threads) flushes a denormal result."""
    if np.dtype(x.dtype) == np.float16:
        return x        # float16 results are float32 ones rounded: their denormals stay
    tiny = np.finfo(np.dtype(x.dtype)).tiny
    if _traced(x):
        return _F.where(_F.abs(x) < tiny, x * np.dtype(x.dtype).type(0), x)
    a = np.asarray(_F.asarray(x).numpy())
    small = np.abs(a) < tiny
    if not small.any():
        return x
    return _F.asarray(np.where(small, a * a.dtype.type(0), a))


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


def _add(a, b):
    """a + b, None standing for an exact zero."""
    return b if a is None else a if b is None else a + b


def _chunk_sum_ops(x, dt):
    """One tile's sums (k at most a tile), the kernel's steps in nx operations.  The kernel's
    additions of an exact zero (its padding, its accumulators' starts) are left out (None
    stands for such a zero): they change no sum but the sign of a zero, and the result's
    zero is made +0 at the end, as the kernel's last addition to zero makes it."""
    lanes = 64 // dt.itemsize
    block = 4 * lanes
    k = x.shape[-1]
    lead = tuple(x.shape[:-1])
    zero = dt.type(0)
    if k <= lanes:
        t = x                                   # one chunk: its lanes, the rest zeros
    else:
        chunks = -(-k // lanes)
        if chunks * lanes != k:
            x = _F.concatenate([x, _F.zeros(lead + (chunks * lanes - k,), dt)], axis=-1)
        c = _F.reshape(x, lead + (chunks, lanes))
        full = k // block                       # the full blocks (of 4 chunks)
        local = None                            # the full blocks' lane sums (..., full, lanes)
        if full:
            b = _F.reshape(c[..., :4 * full, :], lead + (full, 4, lanes))
            local = ((b[..., 0, :] + b[..., 1, :]) + b[..., 2, :]) + b[..., 3, :]
        rest = None
        for j in range(4 * full, chunks):
            rest = _add(rest, c[..., j, :])
        t = _clocked(local, full, rest, k, lanes, block, lead, dt)
    width = t.shape[-1]
    w = 1
    while w < width:
        w *= 2
    if w > width:
        t = _F.concatenate([t, _F.zeros(lead + (w - width,), dt)], axis=-1)
    while w > 1:                                # the lanes summed in halves
        w //= 2
        t = t[..., :w] + t[..., w:2 * w]
    return zero + t[..., 0]


def _clocked(local, full, rest, k, lanes, block, lead, dt):
    """The kernel's three accumulators over the lane sums of the ``full`` full blocks
    (``local``, (..., full, lanes)) and of the last, partial block (``rest``, or None)."""
    acc = {0: None, 1: None, 2: None, "err": None}

    def tick(clock):
        if clock & 15:
            return
        acc[1], acc[0] = _add(acc[1], acc[0]), None
        if clock & 255 or (acc[1] is None and acc["err"] is None):
            return
        if acc["err"] is None:
            y = acc[1]
        else:
            y = -acc["err"] if acc[1] is None else acc[1] - acc["err"]
        if acc[2] is None:                      # Kahan's step from zero: exact, no error
            acc[2] = y
        else:
            t = acc[2] + y
            e = (t - acc[2]) - y
            acc["err"] = _F.where(_F.isfinite(e), e, dt.type(0))
            acc[2] = t
        acc[1] = None

    # the unrolled groups of 4 blocks (acc0 is cleared at each of their ticks): their sums at
    # once, then the groups between two Kahan steps at once
    groups = k // (4 * block)
    clock = 0
    if groups:
        g4 = _F.reshape(local[..., :4 * groups, :], lead + (groups, 4, lanes))
        g = ((g4[..., 0, :] + g4[..., 1, :]) + g4[..., 2, :]) + g4[..., 3, :]
        per = 256 // (4 * lanes)                # groups per Kahan step
        steps = groups // per
        if steps:
            h4 = _F.reshape(g[..., :per * steps, :], lead + (steps, per, lanes))
            h = h4[..., 0, :]
            for c in range(1, per):
                h = h + h4[..., c, :]
            for s in range(steps):
                acc[1] = h[..., s, :]
                tick(0)
        for u in range(per * steps, groups):
            acc[1] = _add(acc[1], g[..., u, :])
        clock = groups * 4 * lanes
    for j in range(4 * groups, full):           # the full blocks after the groups
        acc[0] = _add(acc[0], local[..., j, :])
        clock += lanes
        tick(clock)
    acc[0] = _add(acc[0], rest)                 # the partial block: no tick
    tick(0)
    return acc[2] if acc[2] is not None else _F.zeros(lead + (lanes,), dt)
