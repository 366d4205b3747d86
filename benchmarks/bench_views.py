"""Views and the strided copy: nx_rune against NumPy and PyTorch (pytest-benchmark).

Each group holds one case as ``nx_rune``, ``numpy`` and, where PyTorch has the same operation,
``torch_1t`` / ``torch_2t`` (``torch.set_num_threads(1 or 2)``); ``python -m benchmarks``
prints the medians and their ratio to NumPy's.  Run alone with

    python -m pytest benchmarks/bench_views.py --benchmark-only --benchmark-group-by=group

Copies of a 4096x4096 float32 (64 MiB) tensor: contiguous, transposed (the register-blocked
kernel), flipped, and a materialized pad; the ``*_into`` cases copy into a preallocated
destination (torch's ``copy_``), which leaves out the page faults of a fresh 64 MiB (the GB/s
of a case: 2 * 64 MiB / median).  Broadcast copies (``repeat``, ``tile``: a stride-0 inner
axis).  And the per-call overhead of small ops on an (8, 8) float64 tensor (µs; the
``overhead_*`` groups): ``t + u``, ``t + 1.0``, ``t * 2.0``, ``nx.sin``, ``t.reshape`` and
``nx.reshape``, ``t.T`` and ``nx.transpose``, ``t[1:3]``, ``t[1:5, ::-1]``, ``nx.flip``.
"""
import functools

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import strided as _strided
from nx_rune._kernels.buffer import Buffer, buffer_from_ndarray

try:
    import torch
except ImportError:                 # the torch columns need it; the others do not
    torch = None

N = 4096


@functools.cache
def _big():
    a = np.random.default_rng(0).random((N, N), dtype=np.float32)
    return a, nx.asarray(a)


@functools.cache
def _small():
    # (8, 8) float64: issue 17's dispatch goal (each op within 1.5x of NumPy's call)
    a = np.random.default_rng(1).random((8, 8))
    b = np.random.default_rng(2).random((8, 8))
    return a, b, nx.asarray(a), nx.asarray(b)


def copy_contiguous():
    a, t = _big()
    return lambda: nx.copy(t), lambda: np.copy(a)


def copy_transposed():
    a, t = _big()
    ta = None if torch is None else _torch(a)
    return (lambda: nx.contiguous(t.T), lambda: np.ascontiguousarray(a.T),
            lambda: ta.T.contiguous())


def _torch(a):
    return torch.from_numpy(a)              # zero-copy, about a microsecond


def _into(src_strides):
    """The strided-copy kernel into a preallocated Buffer, NumPy's copyto and torch's copy_
    into preallocated arrays: a copy of the (N, N) float32 view with src_strides."""
    a, _ = _big()
    src, dst = buffer_from_ndarray(a.reshape(-1)), Buffer(N * N, np.float32)
    view = np.lib.stride_tricks.as_strided(a, (N, N), tuple(s * 4 for s in src_strides))
    out = np.empty((N, N), np.float32)

    def ours():
        _strided.copy_strided(src, 0, (N, N), src_strides, dst, 0, (N, 1))
        return dst.as_ndarray((N, N), (N, 1), 0)

    t_out, t_view = (None, None) if torch is None else \
        (_torch(out), torch.as_strided(_torch(a), (N, N), src_strides))

    def torch_copy():
        t_out.copy_(t_view)
        return out
    return ours, lambda: np.copyto(out, view) or out, torch_copy


def copy_transposed_into():
    return _into((1, N))


def copy_plain_into():
    return _into((N, 1))


def repeat_8_interleaved():
    a = np.random.default_rng(3).random((1000, 1000), dtype=np.float32)
    t = nx.asarray(a)
    ta = None if torch is None else _torch(a)
    return (lambda: nx.repeat(t, 8), lambda: np.repeat(a, 8), lambda: ta.repeat_interleave(8))


def tile_1_8():
    a = np.random.default_rng(4).random((1000, 1000), dtype=np.float32)
    t = nx.asarray(a)
    ta = None if torch is None else _torch(a)
    return (lambda: nx.tile(t, (1, 8)), lambda: np.tile(a, (1, 8)), lambda: ta.repeat(1, 8))


def copy_flipped():
    a, t = _big()
    return lambda: nx.copy(nx.flip(t)), lambda: np.ascontiguousarray(np.flip(a))


def copy_flipped_rows():
    a, t = _big()
    return lambda: nx.copy(nx.flip(t, 1)), lambda: np.ascontiguousarray(a[:, ::-1])


def pad_materialized():
    a, t = _big()
    return lambda: nx.copy(nx.pad(t, 3)), lambda: np.pad(a, 3)


def overhead_flip_8x8():
    a, _, t, _ = _small()
    return lambda: nx.flip(t), lambda: np.flip(a)


def overhead_slice_8x8():
    a, _, t, _ = _small()
    return lambda: t[1:5, ::-1], lambda: a[1:5, ::-1]


def overhead_transpose_8x8():
    a, _, t, _ = _small()
    return lambda: t.T, lambda: a.T


def overhead_add_8x8():
    a, b, t, u = _small()
    return lambda: t + u, lambda: a + b


def overhead_add_scalar_8x8():
    a, _, t, _ = _small()
    return lambda: t + 1.0, lambda: a + 1.0


def overhead_mul_scalar_8x8():
    a, _, t, _ = _small()
    return lambda: t * 2.0, lambda: a * 2.0


def overhead_sin_8x8():
    a, _, t, _ = _small()
    return lambda: nx.sin(t), lambda: np.sin(a)


def overhead_reshape_method_8x8():
    a, _, t, _ = _small()
    return lambda: t.reshape(4, 16), lambda: a.reshape(4, 16)


def overhead_reshape_8x8():
    a, _, t, _ = _small()
    return lambda: nx.reshape(t, (4, 16)), lambda: np.reshape(a, (4, 16))


def overhead_transpose_fn_8x8():
    a, _, t, _ = _small()
    return lambda: nx.transpose(t), lambda: np.transpose(a)


def overhead_rows_8x8():
    a, _, t, _ = _small()
    return lambda: t[1:3], lambda: a[1:3]


CASES = {f.__name__: f for f in [
    copy_contiguous, copy_transposed, copy_transposed_into, copy_plain_into, copy_flipped,
    copy_flipped_rows, pad_materialized, repeat_8_interleaved, tile_1_8,
    overhead_flip_8x8, overhead_slice_8x8, overhead_transpose_8x8, overhead_add_8x8,
    overhead_add_scalar_8x8, overhead_mul_scalar_8x8, overhead_sin_8x8,
    overhead_reshape_method_8x8, overhead_reshape_8x8, overhead_transpose_fn_8x8,
    overhead_rows_8x8,
]}
WITH_TORCH = ["copy_transposed", "copy_transposed_into", "copy_plain_into",
              "repeat_8_interleaved", "tile_1_8"]


@functools.cache
def _case(name):
    fns = CASES[name]()
    ours, numpy_fn = fns[:2]
    want = np.array(numpy_fn())
    np.testing.assert_array_equal(np.asarray(ours()), want)     # same result, checked once
    impls = {"nx_rune": ours, "numpy": numpy_fn}
    if len(fns) > 2 and torch is not None:
        np.testing.assert_array_equal(np.asarray(fns[2]()), want)
        impls["torch"] = fns[2]
    return impls


PARAMS = [(n, i) for n in CASES for i in ("nx_rune", "numpy")] + \
    ([(n, i) for n in WITH_TORCH for i in ("torch_1t", "torch_2t")] if torch is not None else [])


@pytest.mark.parametrize("name, impl", PARAMS)
def test_bench(benchmark, name, impl):
    benchmark.group = name
    fn = _case(name)[impl.split("_")[0] if impl.startswith("torch") else impl]
    if impl.startswith("torch"):
        old = torch.get_num_threads()
        torch.set_num_threads(int(impl[-2]))
        try:
            benchmark(fn)
        finally:
            torch.set_num_threads(old)
    else:
        benchmark(fn)
