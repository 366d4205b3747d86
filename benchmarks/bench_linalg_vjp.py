"""Each linalg function's VJP against its own forward, float64, one matrix of 64 x 64 and of
256 x 256 (a right-hand side of 8 columns for the solves):

    python benchmarks/bench_linalg_vjp.py [names ...]    # the table of ratios
    python -m pytest benchmarks/bench_linalg_vjp.py --benchmark-only

``fwd`` is the eager forward call, ``vjp`` the backward pass alone (the function that
``nx.vjp`` returns, applied to a fixed random cotangent), ``vjp/fwd`` their ratio: the goal is
at most 3x.  Forward and backward are interleaved round by round (9 rounds, each as many calls as
fill 20 ms): min and median per call of each.  Run it with ``OPENBLAS_NUM_THREADS=1`` on a
shared machine: one thread's time is what other processes disturb least.
"""
import functools
import os
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]      # nx_rune, when run as a script

import nx_rune as nx  # noqa: E402

L, SL = nx.linalg, nx.scipy.linalg
SIZES = (64, 256)
ROUNDS = 9


@functools.cache
def _data(n):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n))
    spd = a @ a.T + n * np.eye(n)
    tri = np.tril(a) + 2 * np.sqrt(n) * np.eye(n)
    b = rng.standard_normal((n, 8))
    return a, spd, tri, b


def _ops(n):
    """name -> (nx function of tensors, ndarray arguments)."""
    a, spd, tri, b = _data(n)
    return {
        "inv": (L.inv, [a]),
        "solve": (L.solve, [a, b]),
        "det": (L.det, [a]),
        "slogdet": (lambda x: L.slogdet(x).logabsdet, [a]),
        "cholesky": (L.cholesky, [spd]),
        "eigh": (L.eigh, [spd]),
        "svd": (lambda x: L.svd(x, full_matrices=False), [a]),
        "qr": (L.qr, [a]),
        "solve_triangular": (lambda t, y: SL.solve_triangular(t, y, lower=True), [tri, b]),
        "lstsq": (lambda x, y: L.lstsq(x, y)[0], [a, b]),
    }


NAMES = list(_ops(SIZES[0]))


@functools.cache
def _case(name, n):
    fn, args = _ops(n)[name]
    targs = [nx.asarray(x) for x in args]
    out, vjp_fn = nx.vjp(fn, *targs)
    rng = np.random.default_rng(2)
    ct = nx.tree_util.tree_map(
        lambda o: nx.asarray(rng.standard_normal(o.shape).astype(o.dtype)), out)
    return (lambda: fn(*targs)), (lambda: vjp_fn(ct))


def _per_call(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def measure(name, n, rounds=ROUNDS, target=0.02):
    """(forward min, median), (vjp min, median) in seconds, interleaved round by round."""
    fwd, vjp = _case(name, n)
    fwd(), vjp()
    rf = max(1, int(target / max(_per_call(fwd, 2), 1e-7)))
    rv = max(1, int(target / max(_per_call(vjp, 2), 1e-7)))
    tf, tv = [], []
    for _ in range(rounds):
        tf.append(_per_call(fwd, rf))
        tv.append(_per_call(vjp, rv))
    return (min(tf), float(np.median(tf))), (min(tv), float(np.median(tv)))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", NAMES)
def test_vjp(benchmark, name, n):
    benchmark.group = f"vjp {name} {n}"
    (f_min, f_med), (v_min, v_med) = measure(name, n)
    benchmark.extra_info.update({"fwd_min_med_s": (f_min, f_med), "vjp_min_med_s": (v_min, v_med),
                                 "vjp_over_fwd": v_med / f_med})
    benchmark(_case(name, n)[1])


def main(names):
    print(f"{'function':18s} {'n':>4s} {'fwd min/med':>18s} {'vjp min/med':>18s} "
          f"{'vjp/fwd (med)':>14s}")
    for n in SIZES:
        for name in names or NAMES:
            (f_min, f_med), (v_min, v_med) = measure(name, n)
            print(f"{name:18s} {n:4d} {f_min * 1e6:8.1f}/{f_med * 1e6:<8.1f}us "
                  f"{v_min * 1e6:8.1f}/{v_med * 1e6:<8.1f}us {v_med / f_med:13.2f}x", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
