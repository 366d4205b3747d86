"""The summation order of XLA:CPU's dots in YNNPACK, for multivariate_normal's ``factor @ z``.

XLA:CPU (jax 0.10.2) hands a float32 dot to YNNPACK when neither its m nor its n is 1 and one
of m, k, n is at least 8; smaller ones it emits as a loop that sums left to right with fused
multiply-adds.  YNNPACK picks a kernel by a cost model while building its graph, where m is not
known yet (taken as 2048); the kernel's ``tile_k`` fixes the order in which a row of the dot is
summed, and the kernel chosen again at run time keeps that ``tile_k`` (the packed B's layout):

- ``tile_k`` accumulators, the k-th product going into accumulator ``k % tile_k`` with a fused
  multiply-add (each starting from zero); then a pairwise tree: (a0 + a1) for 2,
  (a0 + a1) + (a2 + a3) for 4, ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) for 8;
- k not a multiple of ``tile_k``: the first ``k - k % tile_k`` products so, then the rest padded
  with zeros through the same kernel, whose sum is added to the first part's;
- the first part in chunks of ``K_CHUNK_TILES`` (512) tiles, one kernel call each (YNNPACK's
  split of k), the chunks' sums added in order.

The kernels (their block and tile shapes) are those YNNPACK's generators make for x86; which of
them exist depends on the processor's features, as in XLA.

A float64 dot (m and n not 1, one of m, n at least 8; m and n below 8 go to Eigen) runs
YNNPACK's float64 kernels, all of ``tile_k`` 1: each output a chain of fused multiply-adds, left
to right, in the chunks of 512 products (each from zero, the chunks' sums added in order).
YNNPACK splits the output into tiles (``_split_factors``, its rule for the task
size) and picks each tile's kernel by the cost model again, with the tile's m and n: a narrow
last tile of few rows can get the AVX kernel, built without fused multiply-adds (its products
rounded before each add): ``dot_f64_unfused_tiles``.

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


# YNNPACK's float64 x86 dot kernels (arch, block_m, block_n, tile_n; block_k and tile_k 1), in
# its kernel table's order: AVX-512 and FMA3 fused, AVX (no FMA) products rounded
_F64_KERNELS = (
    [(_AVX512, m, n, 8) for m, n in ((1, 32), (2, 32), (3, 32), (4, 32), (5, 32), (1, 16),
                                     (2, 16), (3, 16), (4, 16), (5, 16), (5, 8))]
    + [(("FMA3", "AVX"), m, n, 4) for m, n in ((1, 16), (2, 16), (1, 8), (2, 8), (3, 8),
                                               (4, 8), (5, 8), (6, 8), (8, 4))]
    + [(("AVX",), m, n, 4) for m, n in ((1, 16), (2, 16), (1, 8), (2, 8), (3, 8), (4, 8),
                                        (4, 4), (6, 4), (8, 4))]
)
# the tiles of k (of tile_k products) in one kernel call: YNNPACK's split of k
K_CHUNK_TILES = 512


def _f64_kernel(m, n):
    """(fused, block_n) of the float64 kernel YNNPACK's cost model picks for an (m, n) output."""
    feats = _cpu_features()
    best, pick = float("inf"), (True, 1)
    for arch, bm, bn, tn in _F64_KERNELS:
        if not all(f in feats for f in arch):
            continue
        c = _cost(m, n, 1, bm, bn, 1, 1, tn, 1)
        if c < best:
            best, pick = c, ("FMA3" in arch or arch is _AVX512, bn)
    return pick


def _split_factors(m, n, k, block_n):
    """(split_m, split_n): the output tile YNNPACK gives one task, grown from (min(m, 16),
    min(n, block_n)) by doubling until it is big enough (its rule: an area of at least
    max(min(m, 64) min(n, 64), 256), then until (m + n) k reaches 65,536 or the area 65,536;
    n grows while it is under a quarter of m's tile or m is whole)."""
    k = min(k, 1024)
    min_area = max(min(m, 64) * min(n, 64), 256)
    sn, sm = min(n, block_n), min(m, 16)
    while True:
        if sn * sm >= min_area and ((sm + sn) * k >= 65536 or sm * sn >= 65536):
            break
        if (4 * sn <= sm or sm >= m) and sn < n:
            sn *= 2
        elif (sm <= 4 * sn or sn >= n) and sm < m:
            sm *= 2
        else:
            break
    return min(sm, 32768), min(sn, 65536)


@functools.lru_cache(maxsize=256)
def dot_f64_unfused_tiles(m: int, n: int, k: int) -> tuple:
    """The output tiles (m0, m1, n0, n1) of a float64 (m, k) x (k, n) dot in YNNPACK whose
    kernel has no fused multiply-adds (see the module docstring); the rest are fused."""
    block_n = _f64_kernel(_UNKNOWN_M, n)[1]
    sm, sn = _split_factors(m, n, k, block_n)
    return tuple((m0, min(m0 + sm, m), n0, min(n0 + sn, n))
                 for m0 in range(0, m, sm) for n0 in range(0, n, sn)
                 if not _f64_kernel(min(sm, m - m0), min(sn, n - n0))[0])
