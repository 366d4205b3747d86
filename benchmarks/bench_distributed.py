"""Data-parallel gradient steps (nx.distributed.DataParallel, 2 workers) against the
single-process ``nx.value_and_grad`` step, on a local Ray cluster and a local Dask cluster.

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
      python -m pytest benchmarks/bench_distributed.py --benchmark-only --benchmark-group-by=group
Each group is one model and batch; "single" is the step in this process, "ray" and "dask" the
same step on 2 worker processes (params shipped, batch split, gradients combined), and
"ray_1worker"/"dask_1worker" on one worker: the same computation as "single" plus every cost of
distribution, so their difference from "single" is the overhead per step, free of the question
whether two workers found two free cores.  One BLAS thread in this process, as in each worker,
keeps the comparison fair (and a multi-threaded BLAS on a busy 2-core machine degrades badly).

* small: the digits MLP 64-32-10 (float32, 2.4k parameters) at batch 256.
* small_big_batch: the same MLP at batch 16384 (data-bound: 4.6 MiB of inputs a step).
* large: an MLP 784-2048-2048-10 (float32, 5.8M parameters, 23 MiB) at batch 1024.

Workers run single-threaded (Ray and Dask set OMP/OpenBLAS to 1 thread in their worker
processes).  docs/distributed.md has measured figures.
"""
import os
import sys

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.distributed import DataParallel

CASES = {
    "small": ((64, 32, 10), 256),
    "small_big_batch": ((64, 32, 10), 16384),
    "large": ((784, 2048, 2048, 10), 1024),
}
ROUNDS = {"small": 100, "small_big_batch": 30, "large": 8}


def mlp_loss(params, batch):
    """Mean softmax cross-entropy of a tanh MLP; params a list of (w, b)."""
    x, onehot = batch
    h = x
    for w, b in params[:-1]:
        h = nx.tanh(h @ w + b)
    w, b = params[-1]
    logp = nx.log_softmax(h @ w + b, axis=-1)
    return -nx.mean(nx.sum(onehot * logp, axis=-1))


def problem(case, seed=0):
    sizes, n = CASES[case]
    rng = np.random.default_rng(seed)
    params = [(nx.asarray((rng.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32)),
               nx.asarray(np.zeros(b, np.float32))) for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.normal(size=(n, sizes[0])).astype(np.float32)
    onehot = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], n)]
    return params, (x, onehot)


@pytest.fixture(scope="module")
def ray_cluster():
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")   # loopback only
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ray.shutdown()


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1",
                                       dashboard_address=None)
    client = distributed.Client(cluster, direct_to_workers=True)
    yield client
    client.close()
    cluster.close()


@pytest.mark.parametrize("impl", ["single", "ray", "dask", "ray_1worker", "dask_1worker"])
@pytest.mark.parametrize("case", list(CASES))
def test_dp_step(benchmark, request, case, impl):
    benchmark.group = f"dp_{case}"
    params, batch = problem(case)
    benchmark.extra_info["batch"] = CASES[case][1]
    if impl == "single":
        step = nx.value_and_grad(mlp_loss)
        benchmark.pedantic(step, (params, batch), rounds=ROUNDS[case], warmup_rounds=1)
        return
    backend, _, one = impl.partition("_")
    workers = 1 if one else 2
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
        dp = DataParallel(mlp_loss, workers, "ray")
    else:
        dp = DataParallel(mlp_loss, workers, "dask",
                          client=request.getfixturevalue("dask_client"))
    with dp:
        benchmark.pedantic(dp.value_and_grad, (params, batch), rounds=ROUNDS[case],
                           warmup_rounds=1)
