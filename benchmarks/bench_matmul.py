"""Eager 2-D matmul against NumPy's (OpenBLAS with its default threads), interleaved round by
round in one run (pytest-benchmark):

    python benchmarks/bench_matmul.py            # the table: min/median/max and the ratio
    python benchmarks/bench_matmul.py --busy     # the same next to one busy process
    python -m pytest benchmarks/bench_matmul.py --benchmark-only --benchmark-group-by=group

Shapes: an MLP's forward product (128, 784) @ (784, 256), its weight gradient
(784, 128) @ (128, 256), its output layer (128, 256) @ (256, 10), and 512^3; float32 and
float64.  Where the CPU has AVX-512 both dtypes run the kernels' packed products
(nx_rune/_kernels/gemm_avx512*.h) on the pool's threads; OpenBLAS runs its AVX2 (Haswell)
kernels on CPUs it does not know (AMD's Zen 5).  ``peer/nx`` above 1: nx_rune is faster.
Values are checked against NumPy's before timing.  The ``settled`` groups time the same with
each side's round started 0.15 s after the other side's last call, once its threads sleep.
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]        # bench_peer_ratios, and nx_rune as a script
import nx_rune as nx  # noqa: E402
from bench_peer_ratios import _record, interleaved, main_with_busy  # noqa: E402

SHAPES = {"128x784@784x256": ((128, 784), (784, 256)),
          "784x128@128x256": ((784, 128), (128, 256)),
          "128x256@256x10": ((128, 256), (256, 10)),
          "512^3": ((512, 512), (512, 512))}


def _operands(shape, dtype):
    """NumPy's operands of case ``shape`` and nx_rune's arrays of them."""
    rng = np.random.default_rng(0)
    sa, sb = SHAPES[shape]
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    return a, b, nx.asarray(a), nx.asarray(b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_matmul_interleaved_numpy(benchmark, shape, dtype):
    benchmark.group = f"matmul {shape} {dtype}"
    a, b, ta, tb = _operands(shape, dtype)
    sa = a.shape
    tol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(np.asarray(ta @ tb), a @ b, rtol=tol, atol=tol * sa[1])
    _record(benchmark, interleaved(lambda: ta @ tb, lambda: a @ b))
    benchmark(lambda: ta @ tb)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_matmul_settled_numpy(benchmark, shape, dtype):
    """The same, each side's round started 0.15 s after the other's last call (untimed): in
    the rows above, OpenBLAS's worker spins on the second core for ~0.1 s after NumPy's
    round, so nx_rune's round runs on one core (its pool sees the worker held up and backs
    off to the calling thread)."""
    benchmark.group = f"matmul {shape} {dtype} settled"
    a, b, ta, tb = _operands(shape, dtype)
    _record(benchmark, interleaved(lambda: ta @ tb, lambda: a @ b, settle=0.15))
    benchmark(lambda: ta @ tb)


if __name__ == "__main__":
    main_with_busy(__file__, sys.argv[1:])
