"""Large matrix products of compiled programs shared between the kernels' threads.

NumPy's matmul runs one BLAS call.  When that BLAS is pinned to one thread
(``OPENBLAS_NUM_THREADS=1``, ``OMP_NUM_THREADS=1`` or ``MKL_NUM_THREADS=1`` in the environment
at import, the usual setting on shared machines and under process-level parallelism), the
other cores stay idle during the products that dominate an MLP step, while the program's
fused kernels use ``nx.set_num_threads``'s threads.  A compiled program then cuts a large
product's output into one band of rows per thread, each band one gemm call on the kernels'
pool without the GIL (nx_rune/_kernels/gemm.pyx: SciPy's BLAS entry points).  Values equal the
single call's to rounding (a BLAS may order one element's sum differently in a band).

With a multi-threaded BLAS (the default) nothing is split: the BLAS's threads do the work.

float32 and float64 products on a CPU with AVX-512 take another road whatever the BLAS's
threads: the packed kernels of nx_rune/_kernels/gemm_avx512.h and gemm_avx512_f64.h, on the
kernels' threads.  OpenBLAS picks its AVX2 (Haswell) kernels on CPUs it does not know (AMD's
Zen 5 among them), where these kernels are 1.7-2x faster per thread (measured in
benchmarks/bench_ops.py and benchmarks/bench_matmul.py).  Their sums run in a different order
than the BLAS's: values equal NumPy's to rounding.
"""
from __future__ import annotations

import os

import numpy as np

from nx_rune._kernels import gemm as _gemm
from nx_rune._kernels import pool as _pool

# a product of at least this many multiply-adds is split (about 100 us on one core: below
# it, waking a worker costs more than it saves)
MIN_MACS = 1 << 22
_PINNED_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _blas_single_threaded(environ=os.environ) -> bool:
    """Whether the environment pins NumPy's BLAS to one thread (read once, at import: the BLAS
    reads it when it loads)."""
    for name in _PINNED_VARS:
        value = environ.get(name)
        if value is not None and value.strip():
            return value.strip() == "1"
    return False


BLAS_SINGLE_THREADED = _blas_single_threaded()


def worth_routing(m: int, k: int, n: int, dtype: np.dtype) -> bool:
    """Whether a 2-D product (m, k) @ (k, n) of ``dtype`` may gain from ``matmul`` rather than
    NumPy's call (decided when a program is compiled)."""
    if np.dtype(dtype) == np.float32 and _gemm.avx512_available():
        return _gemm.packed_worth(m, k, n)
    if np.dtype(dtype) == np.float64 and _gemm.packed_f64_worth(m, k, n):
        return True
    return np.dtype(dtype).kind == "f" and m * k * n >= MIN_MACS


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(a, b[, out])`` for 2-D operands: float32 and float64 by the packed AVX-512
    kernels where the CPU has them (``gemm.packed_worth``, ``gemm.packed_f64_worth``),
    otherwise float32/float64 products of at least ``MIN_MACS`` multiply-adds split into bands
    of rows between the kernels' threads when NumPy's BLAS is single-threaded (see the
    module).  a (m, k), b (k, n), out (m, n) or None."""
    if a.dtype == np.float32 and b.dtype == np.float32:
        r = _gemm.matmul_f32(a, b, out)
        if r is not None:
            return r
    elif a.dtype == np.float64 and b.dtype == np.float64:
        r = _gemm.matmul_f64(a, b, out)
        if r is not None:
            return r
    threads = _pool.get_num_threads()
    if (BLAS_SINGLE_THREADED and threads > 1 and a.ndim == 2 and b.ndim == 2
            and a.shape[0] >= 2 and a.shape[0] * a.shape[1] * b.shape[1] >= MIN_MACS):
        dst = out if out is not None else np.empty((a.shape[0], b.shape[1]), a.dtype)
        if _gemm.matmul_bands(a, b, dst, threads):
            return dst
    return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)
