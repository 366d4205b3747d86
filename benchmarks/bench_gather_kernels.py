"""Gather / scatter / fold kernels against NumPy and PyTorch (pytest-benchmark).

Each group holds one case as ``nx_rune`` and ``numpy`` and, for gather and scatter, as
``nx_rune_1t`` (nx_rune on one thread: ``nx_rune._kernels.pool.set_num_threads(1)``; plain
``nx_rune`` uses the kernels' default count, the cores available) and ``torch_1t`` /
``torch_2t`` (``torch.gather`` / ``scatter_`` / ``scatter_add_`` / ``scatter_reduce_`` under
``torch.set_num_threads(1 or 2)``); read the ratio of the medians:

    python -m benchmarks benchmarks/bench_gather_kernels.py

Every side returns a new array (scatter's NumPy and torch sides copy the template first, as
ours does).  torch takes int64 indices only, converted once outside the timing, and no
negative ones (gather_1d's are wrapped for it).
"""
import functools
import math

import numpy as np
import pytest

from numpy_windows import numpy_fold, numpy_fold_plan, numpy_unfold, window_counts
from nx_rune._kernels import pool
from nx_rune._kernels.fold import fold, unfold
from nx_rune._kernels.gather import THREADED_SIZE, gather, scatter

try:
    import torch
except ImportError:                 # the torch columns need it; the others do not
    torch = None

RNG_SEED = 0
CONV = dict(shape=(8, 16, 32, 32), kernel=(3, 3), stride=(1, 1), dilation=(1, 1), padding=(1, 1))


def _rng():
    return np.random.default_rng(RNG_SEED)


def _put_along_axis(template, indices, updates, axis):
    out = template.copy()
    np.put_along_axis(out, indices, updates, axis)
    return out


def _add_at(template, index, updates):
    out = template.copy()
    np.add.at(out, index, updates)
    return out


def _rows(n):
    return np.arange(n)[:, None]


# --- gather / scatter cases: each returns (nx_rune callable, numpy callable) --------------

def _t(a):
    return None if torch is None else torch.from_numpy(np.ascontiguousarray(a))


def _torch_gather(x, i, axis):
    tx, ti = _t(x), _t(np.asarray(i, np.int64) % x.shape[axis])
    return lambda: torch.gather(tx, axis, ti)


def _torch_scatter(t, i, u, axis, mode):
    tt, ti, tu = _t(t), _t(np.asarray(i, np.int64)), _t(np.broadcast_to(u, i.shape))
    if mode == "set":
        return lambda: tt.clone().scatter_(axis, ti, tu)
    if mode == "add":
        return lambda: tt.clone().scatter_add_(axis, ti, tu)
    return lambda: tt.clone().scatter_reduce_(axis, ti, tu, "amax")


def gather_1d():
    x, i = _rng().random(10**6), _rng().integers(-10**6, 10**6, 10**6)
    return lambda: gather(x, i, 0), lambda: np.take_along_axis(x, i, 0), _torch_gather(x, i, 0)


def gather_2d_axis1():
    x, i = _rng().random((1000, 1000)), _rng().integers(0, 1000, (1000, 1000))
    return (lambda: gather(x, i, 1), lambda: np.take_along_axis(x, i, 1),
            _torch_gather(x, i, 1))


def gather_2d_axis1_int32_float32():
    x = _rng().random((1000, 1000)).astype(np.float32)
    i = _rng().integers(0, 1000, (1000, 1000)).astype(np.int32)
    return (lambda: gather(x, i, 1), lambda: np.take_along_axis(x, i, 1),
            _torch_gather(x, i, 1))


def gather_2d_axis1_small():
    # THREADED_SIZE elements (rows of 256): the size where walks start to use threads
    x = _rng().random((THREADED_SIZE // 256, 256))
    i = _rng().integers(0, 256, (THREADED_SIZE // 256, 256))
    return (lambda: gather(x, i, 1), lambda: np.take_along_axis(x, i, 1),
            _torch_gather(x, i, 1))


def gather_2d_axis1_tiny():
    # (4, 8): the fixed cost of a call (checks, planning, allocation), no kernel time to speak of
    x, i = _rng().random((4, 8)), _rng().integers(0, 8, (4, 8))
    return (lambda: gather(x, i, 1), lambda: np.take_along_axis(x, i, 1),
            _torch_gather(x, i, 1))


def gather_2d_axis0():
    x, i = _rng().random((1000, 1000)), _rng().integers(0, 1000, (1000, 1000))
    return (lambda: gather(x, i, 0), lambda: np.take_along_axis(x, i, 0),
            _torch_gather(x, i, 0))


def scatter_set_1d():
    t, u = np.zeros(10**6), _rng().random(10**6)
    i = _rng().permutation(10**6)
    return (lambda: scatter(t, i, u, 0, "set"), lambda: _put_along_axis(t, i, u, 0),
            _torch_scatter(t, i, u, 0, "set"))


def scatter_set_2d_axis1():
    t, u = np.zeros((1000, 1000)), _rng().random((1000, 1000))
    i = np.argsort(_rng().random((1000, 1000)), axis=1)
    return (lambda: scatter(t, i, u, 1, "set"), lambda: _put_along_axis(t, i, u, 1),
            _torch_scatter(t, i, u, 1, "set"))


def scatter_add_1d_duplicates():
    # 1e6 updates into 1000 bins: every bin is hit about 1000 times.
    t, u = np.zeros(1000), _rng().random(10**6)
    i = _rng().integers(0, 1000, 10**6)
    return (lambda: scatter(t, i, u, 0, "add"), lambda: _add_at(t, i, u),
            _torch_scatter(t, i, u, 0, "add"))


def scatter_add_1d_1e5_bins():
    # 1e6 updates into 1e5 bins (about 10 per bin): issue 17's case
    t, u = np.zeros(10**5), _rng().random(10**6)
    i = _rng().integers(0, 10**5, 10**6)
    return (lambda: scatter(t, i, u, 0, "add"), lambda: _add_at(t, i, u),
            _torch_scatter(t, i, u, 0, "add"))


def scatter_add_1d_small():
    # THREADED_SIZE updates into 1000 bins: the threshold of threads (private targets)
    t, u = np.zeros(1000), _rng().random(THREADED_SIZE)
    i = _rng().integers(0, 1000, THREADED_SIZE)
    return (lambda: scatter(t, i, u, 0, "add"), lambda: _add_at(t, i, u),
            _torch_scatter(t, i, u, 0, "add"))


def scatter_add_1d_tiny():
    # 32 updates into 8 bins: the fixed cost of a call (template copy included on every side)
    t, u = np.zeros(8), _rng().random(32)
    i = _rng().integers(0, 8, 32)
    return (lambda: scatter(t, i, u, 0, "add"), lambda: _add_at(t, i, u),
            _torch_scatter(t, i, u, 0, "add"))


def scatter_add_1d_duplicates_int32():
    t, u = np.zeros(1000), _rng().random(10**6)
    i = _rng().integers(0, 1000, 10**6).astype(np.int32)
    return (lambda: scatter(t, i, u, 0, "add"), lambda: _add_at(t, i, u),
            _torch_scatter(t, i, u, 0, "add"))


def scatter_add_2d_axis1_duplicates():
    # (1000, 1000) updates into (1000, 100): each row's 100 bins hit about 10 times.
    t, u = np.zeros((1000, 100)), _rng().random((1000, 1000))
    i = _rng().integers(0, 100, (1000, 1000))
    return (lambda: scatter(t, i, u, 1, "add"), lambda: _add_at(t, (_rows(1000), i), u),
            _torch_scatter(t, i, u, 1, "add"))


def scatter_add_2d_axis0_duplicates():
    # (1000, 1000) updates into (100, 1000) along axis 0
    t, u = np.zeros((100, 1000)), _rng().random((1000, 1000))
    i = _rng().integers(0, 100, (1000, 1000))
    return (lambda: scatter(t, i, u, 0, "add"),
            lambda: _add_at(t, (i, np.arange(1000)[None, :]), u),
            _torch_scatter(t, i, u, 0, "add"))


def scatter_max_2d_axis1_duplicates():
    t, u = np.zeros((1000, 100)), _rng().random((1000, 1000))
    i = _rng().integers(0, 100, (1000, 1000))

    def numpy_max():
        out = t.copy()
        np.maximum.at(out, (_rows(1000), i), u)
        return out
    return lambda: scatter(t, i, u, 1, "max"), numpy_max, _torch_scatter(t, i, u, 1, "max")


# --- fold / unfold -----------------------------------------------------------------------

def unfold_2d_conv():
    x = _rng().random(CONV["shape"]).astype(np.float32)
    args = CONV["kernel"], CONV["stride"], CONV["dilation"], CONV["padding"]
    return lambda: unfold(x, *args), lambda: numpy_unfold(x, *args)


def unfold_2d_strided_dilated():
    x = _rng().random((8, 16, 64, 64)).astype(np.float32)
    args = (3, 3), (2, 2), (2, 2), (2, 2)
    return lambda: unfold(x, *args), lambda: numpy_unfold(x, *args)


def fold_2d_conv():
    sizes = CONV["shape"][2:]
    args = CONV["kernel"], CONV["stride"], CONV["dilation"], CONV["padding"]
    L = math.prod(window_counts(sizes, *args))
    cols = _rng().random((CONV["shape"][0], CONV["shape"][1] * 9, L)).astype(np.float32)
    plan = numpy_fold_plan(cols.shape, sizes, *args)
    return lambda: fold(cols, sizes, *args), lambda: numpy_fold(cols, plan)


CASES = {f.__name__: f for f in [
    gather_1d, gather_2d_axis1, gather_2d_axis1_int32_float32, gather_2d_axis1_small,
    gather_2d_axis1_tiny, gather_2d_axis0, scatter_set_1d, scatter_set_2d_axis1,
    scatter_add_1d_duplicates, scatter_add_1d_1e5_bins, scatter_add_1d_small,
    scatter_add_1d_tiny, scatter_add_1d_duplicates_int32,
    scatter_add_2d_axis1_duplicates, scatter_add_2d_axis0_duplicates,
    scatter_max_2d_axis1_duplicates, unfold_2d_conv, unfold_2d_strided_dilated, fold_2d_conv,
]}
WITH_TORCH = [n for n in CASES if n.startswith(("gather", "scatter"))]


@functools.cache
def _case(name):
    fns = CASES[name]()
    ours, numpy_fn = fns[:2]
    want = numpy_fn()
    np.testing.assert_allclose(ours(), want, rtol=1e-5)   # same computation, checked once
    impls = {"nx_rune": ours, "numpy": numpy_fn}
    if len(fns) > 2 and torch is not None:
        np.testing.assert_allclose(fns[2]().numpy(), want, rtol=1e-5)
        impls["torch"] = fns[2]
    return impls


PARAMS = [(n, i) for n in CASES for i in ("nx_rune", "numpy")] + \
    [(n, "nx_rune_1t") for n in WITH_TORCH] + \
    ([(n, i) for n in WITH_TORCH for i in ("torch_1t", "torch_2t")] if torch is not None else [])


@pytest.mark.parametrize("name, impl", PARAMS)
def test_bench(benchmark, name, impl):
    benchmark.group = name
    if impl == "nx_rune_1t":
        old = pool.get_num_threads()
        pool.set_num_threads(1)
        try:
            benchmark(_case(name)["nx_rune"])
        finally:
            pool.set_num_threads(old)
        return
    if not impl.startswith("torch"):
        benchmark(_case(name)[impl])
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(impl[-2]))
    try:
        benchmark(_case(name)["torch"])
    finally:
        torch.set_num_threads(old)
