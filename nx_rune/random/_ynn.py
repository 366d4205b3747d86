"""The summation order of XLA:CPU's float32 dot, for multivariate_normal's ``factor @ z``.

XLA:CPU (jax 0.10.2) hands a float32 dot to YNNPACK when neither its m nor its n is 1 and one
of m, k, n is at least 8; smaller ones it emits as a loop that sums left to right with fused
multiply-adds.  YNNPACK picks a kernel by a cost model while building its graph, where m is not
known yet (taken as 2048); the kernel's ``tile_k`` fixes the order in which a row of the dot is
summed, and the kernel chosen again at run time keeps that ``tile_k`` (the packed B's layout):

- ``tile_k`` accumulators, the k-th product going into accumulator ``k % tile_k`` with a fused
  multiply-add (each starting from zero); then a pairwise tree: (a0 + a1) for 2,
  (a0 + a1) + (a2 + a3) for 4, ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) for 8;
- k not a multiple of ``tile_k``: the first ``k - k % tile_k`` products so, then the rest padded
  with zeros through the same kernel, whose sum is added to the first part's.

The kernels (their block and tile shapes) are those YNNPACK's generators make for x86; which of
them exist depends on the processor's features, as in XLA.

May import: NumPy.
"""
from __future__ import annotations

import functools

# (arch, block_m, block_n, block_k, tile_m, tile_n, tile_k) of YNNPACK's float32 x86 dot
# kernels, in the order its kernel table lists them (a tie in cost keeps the first)
_AVX512 = ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")
_KERNELS = (
    [(_AVX512, m, 64, 1, 1, 16, 1) for m in (1, 2, 3, 4, 5)]
    + [(_AVX512, m, 32, 1, 1, 16, 1) for m in (1, 2, 3, 4, 5)]
    + [(_AVX512, 5, 16, 1, 1, 16, 1)]
    + [(_AVX512, m, 32, 2, 1, 8, 2) for m in (1, 2, 3, 4, 5)]
    + [(_AVX512, m, n, 2, 1, 8, 2) for m, n in ((1, 16), (4, 16), (4, 8), (8, 8))]
    + [(_AVX512, m, n, 4, 1, 4, 4) for m, n in ((1, 32), (2, 32), (1, 16), (3, 16), (4, 16),
                                                 (5, 16), (2, 8), (4, 8), (6, 8), (4, 4),
                                                 (8, 4))]
    + [(("FMA3",), m, n, 1, 1, 8, 1) for m, n in ((1, 32), (2, 32), (1, 16), (2, 16), (3, 16),
                                                   (4, 16), (5, 16), (6, 16), (8, 8))]
    + [(("AVX2", "FMA3"), m, 1, 8, 1, 1, 8) for m in (1, 2, 4, 8)]
    + [(("AVX2", "FMA3"), m, n, 2, 1, 4, 2) for m, n in ((1, 16), (2, 16), (1, 8), (3, 8),
                                                          (4, 8), (5, 8), (6, 8), (4, 4),
                                                          (5, 4), (6, 4), (8, 4))]
    + [(("AVX",), m, n, 1, 1, 8, 1) for m, n in ((1, 32), (2, 32), (1, 16), (2, 16), (3, 16),
                                                  (4, 16), (4, 8), (6, 8), (8, 8))]
    + [(("AVX2",), m, n, 2, 1, 4, 2) for m, n in ((1, 16), (2, 16), (1, 8), (3, 8), (4, 8),
                                                   (5, 8), (6, 8), (4, 4), (5, 4), (6, 4),
                                                   (8, 4))]
    + [(("SSE2",), m, n, 1, 1, 4, 1) for m, n in ((1, 16), (2, 16), (3, 16), (1, 8), (2, 8),
                                                   (3, 8), (4, 8), (4, 4), (6, 4), (8, 4))]
)
_UNKNOWN_M = 2048


def _cpu_features():
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:            # pragma: no cover - older NumPy
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as feats
        except ImportError:
            return frozenset()
    return frozenset(k for k, v in feats.items() if v)


def _cost(m, n, k, bm, bn, bk, tm, tn, tk):
    """YNNPACK's estimate of a kernel's cost (loads of B twice as dear as loads of A)."""
    blocks = -(-m // bm) * -(-n // bn) * -(-k // bk)
    loads_a = bm * bk // (tm * tk)
    loads_b = bn * bk // (tn * tk)
    return blocks * (loads_a * 5 + loads_b * 11 + 9 + tm * tn * tk * 1e-4)


@functools.lru_cache(maxsize=256)
def dot_tile_k(m: int, n: int, k: int) -> int:
    """How XLA:CPU sums each of the k products of a float32 dot of an (m, k) and a (k, n)
    matrix: 0 for its own loop (left to right, fused multiply-adds), else the ``tile_k`` of the
    YNNPACK kernel it runs (see the module docstring)."""
    if m == 1 or n == 1 or max(m, n, k) < 8:
        return 0
    feats = _cpu_features()
    best, tile_k = float("inf"), 1
    for arch, bm, bn, bk, tm, tn, tk in _KERNELS:
        if not all(f in feats for f in arch):
            continue
        c = _cost(_UNKNOWN_M, n, k, bm, bn, bk, tm, tn, tk)
        if c < best:
            best, tile_k = c, tk
    return tile_k
