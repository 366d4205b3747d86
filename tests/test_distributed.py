"""nx.distributed.DataParallel on a local Ray cluster and a local Dask cluster (both started here,
module-scoped, and shut down at the end), plus Tensors through Ray's object store and Dask's
transport.

Reference values: NumPy's closed-form gradient of a least-squares loss (float64), and the
single-process nx.value_and_grad on the whole batch.  The distributed result differs from the
latter only by the reassociation of the batch mean into shard means; the tolerance checked here
(`assert_reassociation_close`) is the one docs/distributed.md states: the loss within 8 eps
relative, each gradient leaf within 64 eps times the leaf's largest magnitude (eps of the dtype).
"""
import importlib.util
import os
import pathlib
import subprocess
import sys
import time
import typing

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.distributed import DataParallel, WorkerError, sharding

# declared test dependencies (the test extra includes nx_rune[ray] and nx_rune[dask]); the local
# Ray cluster listens on the loopback address only (read when ray is imported)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
import distributed  # noqa: E402
import ray  # noqa: E402
from distributed.protocol import deserialize, serialize

ROOT = pathlib.Path(__file__).resolve().parent.parent
BACKENDS = ["ray", "dask"]
RAY_MEMORY_MONITOR = "RAY_memory_monitor_refresh_ms"


# -- the two local clusters ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def ray_cluster():
    assert not ray.is_initialized(), "another test left Ray running"
    # these workers use little memory: other processes on a shared machine must not get them
    # killed by Ray's memory monitor (the raylet reads this when ray.init starts it)
    saved = os.environ.get(RAY_MEMORY_MONITOR)
    os.environ[RAY_MEMORY_MONITOR] = "0"
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    finally:
        if saved is None:
            del os.environ[RAY_MEMORY_MONITOR]
        else:
            os.environ[RAY_MEMORY_MONITOR] = saved
    # Ray's workers do not have tests/ on their path: send this module's functions by value
    # (as a script's own functions are sent)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")   # loopback only
    yield ray
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ray.shutdown()


@pytest.fixture(scope="module")
def dask_client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(params=BACKENDS)
def make_dp(request):
    """``make_dp(fun, **kwargs)``: a DataParallel on the module's cluster of the parametrized
    backend; every one made is closed after the test."""
    backend = request.param
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
        extra = {}
    else:
        extra = {"client": request.getfixturevalue("dask_client")}
    made = []

    def make(fun, num_workers=2, **kwargs):
        dp = DataParallel(fun, num_workers, backend, **extra, **kwargs)
        made.append(dp)
        return dp

    make.backend = backend
    yield make
    for dp in made:
        dp.close()


# -- losses (Ray's workers get them by value, see ray_cluster; Dask's worker processes inherit
#    this process's sys.path, tests/ included, and import them by reference) -----------------

def least_squares(params, batch):
    """Mean over rows of (x @ w + b - y)**2."""
    x, y = batch
    r = x @ params["w"] + params["b"] - y
    return nx.mean(r * r)


def least_squares_numpy(w, b, x, y):
    """Value and closed-form gradient of least_squares, in NumPy."""
    r = x @ w + b - y
    n = len(y)
    return np.mean(r * r), 2.0 / n * x.T @ r, 2.0 / n * np.sum(r)


def mlp_loss(params, batch):
    """Mean cross-entropy of a 2-layer MLP; params a list of (w, b) layers."""
    x, onehot = batch["x"], batch["y"]
    (w0, b0), (w1, b1) = params
    h = nx.tanh(x @ w0 + b0)
    logp = nx.log_softmax(h @ w1 + b1, axis=-1)
    return -nx.mean(nx.sum(onehot * logp, axis=-1))


def mlp_problem(n, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    params = [(nx.asarray(rng.normal(size=(16, 32)).astype(dtype) / 4),
               nx.asarray(rng.normal(size=32).astype(dtype) / 10)),
              (nx.asarray(rng.normal(size=(32, 10)).astype(dtype) / 6),
               nx.asarray(np.zeros(10, dtype)))]
    batch = {"x": nx.asarray(rng.normal(size=(n, 16)).astype(dtype)),
             "y": np.eye(10, dtype=dtype)[rng.integers(0, 10, n)]}
    return params, batch


def die_on_marker(params, batch):
    """Kills its worker process when the shard's first value is negative."""
    if float(batch[0, 0]) < 0:
        os._exit(7)
    return nx.mean((batch @ params) ** 2)


def sleep_on_marker(params, batch):
    """Sleeps 3 s when the shard's first value exceeds 100."""
    if float(batch[0, 0]) > 100:
        time.sleep(3.0)
    return nx.mean((batch @ params) ** 2)


def raise_on_marker(params, batch):
    if float(batch[0, 0]) > 100:
        raise ValueError("bad shard")
    return nx.mean((batch @ params) ** 2)


class WeightedL2:
    """A callable object: its configuration travels to the workers with it."""

    def __init__(self, l2):
        self.l2 = l2

    def __call__(self, params, batch):
        return least_squares(params, batch) + self.l2 * nx.sum(params["w"] ** 2)


def assert_reassociation_close(distributed_result, single_result):
    """The documented tolerance between DataParallel's (loss, grads) and the single-process
    value_and_grad's: same structure and dtypes; |loss difference| <= 8 eps |loss|; per gradient
    leaf, max |difference| <= 64 eps max |leaf| (eps of the leaf's dtype)."""
    (loss, grads), (ref_loss, ref_grads) = distributed_result, single_result
    assert loss.dtype == ref_loss.dtype and loss.shape == ()
    eps = np.finfo(np.dtype(str(ref_loss.dtype))).eps
    assert abs(float(loss) - float(ref_loss)) <= 8 * eps * abs(float(ref_loss))
    leaves, td = nx.tree_util.tree_flatten(grads)
    ref_leaves, ref_td = nx.tree_util.tree_flatten(ref_grads)
    assert td == ref_td
    for g, r in zip(leaves, ref_leaves):
        g, r = np.asarray(g), np.asarray(r)
        assert g.dtype == r.dtype and g.shape == r.shape
        scale = np.max(np.abs(r)) if r.size else 0.0
        err = np.max(np.abs(g.astype(np.float64) - r.astype(np.float64))) if r.size else 0.0
        assert err <= 64 * np.finfo(r.dtype).eps * scale, (err, scale)


def _tree_bits_equal(a, b):
    la, ta = nx.tree_util.tree_flatten(a)
    lb, tb = nx.tree_util.tree_flatten(b)
    assert ta == tb
    for u, v in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v), strict=True)


# -- sharding (no engine) -----------------------------------------------------------------------

@pytest.mark.parametrize("n,k", [(10, 2), (11, 2), (7, 3), (1, 2), (3, 8), (100, 1), (2, 2)])
def test_shard_sizes_are_array_split_without_empty_shards(n, k):
    expected = [len(part) for part in np.array_split(np.arange(n), k) if len(part)]
    assert sharding.shard_sizes(n, k) == expected


def test_shard_sizes_bad_input():
    with pytest.raises(ValueError, match="n:"):
        sharding.shard_sizes(0, 2)
    with pytest.raises(ValueError, match="num_shards"):
        sharding.shard_sizes(5, 0)


def test_split_batch_keeps_structure_types_and_rows():
    x = np.arange(33.0).reshape(11, 3)
    t = nx.asarray(np.arange(11, dtype=np.int32))
    batch = {"x": x, "pair": (t, x[:, 0])}
    shards, sizes = sharding.split_batch(batch, 3)
    assert sizes == [4, 4, 3]
    for s, n in zip(shards, sizes):
        assert set(s) == {"x", "pair"} and isinstance(s["pair"], tuple)
        assert type(s["x"]) is np.ndarray and isinstance(s["pair"][0], nx.Tensor)
        assert s["x"].shape == (n, 3) and s["pair"][0].shape == (n,)
        assert np.shares_memory(s["x"], x)           # views: nothing copied on the caller
    np.testing.assert_array_equal(np.concatenate([s["x"] for s in shards]), x)
    np.testing.assert_array_equal(np.concatenate([s["pair"][0].numpy() for s in shards]),
                                  np.arange(11))


def test_split_batch_bad_input():
    with pytest.raises(ValueError, match="batch: every leaf must have the same leading"):
        sharding.split_batch((np.zeros((4, 2)), np.zeros(5)), 2)
    with pytest.raises(ValueError, match="batch: leaf 1 is 0-d"):
        sharding.split_batch((np.zeros(4), np.float64(1.0)), 2)
    with pytest.raises(ValueError, match="batch: leaf 0 is 0-d"):
        sharding.split_batch([1.0, 2.0], 2)             # a list is a node: its floats are leaves
    with pytest.raises(TypeError, match="batch: leaf 0 is a str"):
        sharding.split_batch({"a": "text"}, 2)
    with pytest.raises(ValueError, match="batch: is empty"):
        sharding.split_batch(np.zeros((0, 3)), 2)
    with pytest.raises(ValueError, match="batch: has no array leaves"):
        sharding.split_batch({}, 2)


def test_combine_weights_by_shard_size():
    rng = np.random.default_rng(1)
    losses = [np.float64(v) for v in rng.normal(size=3)]
    grads = [{"a": rng.normal(size=(2, 2)), "b": rng.normal(size=4)} for _ in range(3)]
    sizes = [5, 4, 4]
    results = [(nx.asarray(l), {k: nx.asarray(v) for k, v in g.items()})
               for l, g in zip(losses, grads)]
    loss, g = sharding.combine(results, sizes)
    w = np.array(sizes) / 13
    np.testing.assert_allclose(float(loss), np.dot(w, losses), rtol=1e-15)
    for k in ("a", "b"):
        np.testing.assert_allclose(g[k].numpy(), sum(wi * gi[k] for wi, gi in zip(w, grads)),
                                   rtol=1e-14)
    with pytest.raises(ValueError, match="results: gradient structures differ"):
        sharding.combine([results[0], (results[1][0], {"a": results[1][1]["a"]})], [1, 1])
    with pytest.raises(ValueError, match="results: expected one"):
        sharding.combine(results[:2], sizes)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reassociation_tolerance_holds_over_random_problems(dtype):
    # the arithmetic DataParallel does (split, per-shard value_and_grad, weighted combine), here
    # in one process over many shapes: the documented tolerance holds for each
    vg = nx.value_and_grad(mlp_loss)
    for seed in range(3):
        for n in (7, 64, 257):
            params, batch = mlp_problem(n, seed, dtype)
            single = vg(params, batch)
            for k in (2, 3, 4):
                shards, sizes = sharding.split_batch(batch, k)
                combined = sharding.combine([vg(params, s) for s in shards], sizes)
                assert_reassociation_close(combined, single)


# -- DataParallel: the numbers ------------------------------------------------------------------

@pytest.mark.parametrize("n", [101, 1, 2])
def test_least_squares_float64_matches_numpy_and_single_process(make_dp, n):
    rng = np.random.default_rng(n)
    x, y = rng.normal(size=(n, 5)), rng.normal(size=n)
    w, b = rng.normal(size=5), 0.25
    params = {"w": nx.asarray(w), "b": nx.asarray(np.float64(b))}
    dp = make_dp(least_squares)
    loss, grads = dp.value_and_grad(params, (x, y))
    ref_loss, ref_w, ref_b = least_squares_numpy(w, b, x, y)
    assert loss.shape == () and loss.dtype == nx.float64
    np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-12)
    np.testing.assert_allclose(grads["w"].numpy(), ref_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(float(grads["b"]), ref_b, rtol=1e-12, atol=1e-14)
    assert_reassociation_close((loss, grads),
                               nx.value_and_grad(least_squares)(params, (x, y)))


def test_large_params_match_numpy(make_dp):
    # 160 kB of params: Ray sends them through its object store once, not inline per call
    from nx_rune.distributed import _ray_backend

    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(9, 20000)), rng.normal(size=9)
    w = rng.normal(size=20000) / 100
    params = {"w": nx.asarray(w), "b": nx.asarray(np.float64(-0.5))}
    assert _ray_backend._nbytes(params) > _ray_backend.INLINE_PARAMS_BYTES
    loss, grads = make_dp(least_squares).value_and_grad(params, (x, y))
    ref_loss, ref_w, ref_b = least_squares_numpy(w, -0.5, x, y)
    np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-12)
    np.testing.assert_allclose(grads["w"].numpy(), ref_w, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(float(grads["b"]), ref_b, rtol=1e-12)


def test_float32_mlp_matches_single_process_and_is_deterministic(make_dp):
    params, batch = mlp_problem(257)
    dp = make_dp(mlp_loss)
    loss, grads = dp.value_and_grad(params, batch)
    assert loss.dtype == nx.float32
    assert isinstance(grads, list) and isinstance(grads[0], tuple) and len(grads) == 2
    assert_reassociation_close((loss, grads), nx.value_and_grad(mlp_loss)(params, batch))
    _tree_bits_equal((loss, grads), dp.value_and_grad(params, batch))   # same bits again


def test_jit_compiled_fun_matches_single_process(make_dp):
    # an nx.jit function pickles as the function and its options; each worker compiles it
    params, batch = mlp_problem(77, seed=5, dtype=np.float64)
    fun = nx.jit(mlp_loss)
    loss, grads = make_dp(fun).value_and_grad(params, batch)
    assert_reassociation_close((loss, grads), nx.value_and_grad(mlp_loss)(params, batch))


def power_loss(p, b, k=2):
    return nx.mean((b @ p) ** k)


def test_jit_function_pickles_without_its_compiled_programs():
    import pickle

    loss = power_loss
    fun = nx.jit(loss, static_argnames="k")
    p, b = nx.asarray(np.ones(3)), nx.asarray(np.arange(12.0).reshape(4, 3))
    fun(p, b)
    again = pickle.loads(pickle.dumps(fun))
    assert again.cache_info().size == 0
    np.testing.assert_allclose(float(again(p, b, k=4)), float(loss(p, b, k=4)), rtol=1e-14)
    assert again.cache_info().misses == 1


def test_backends_agree_bit_for_bit(ray_cluster, dask_client):
    # the same shards, the same code, single-threaded workers, the same order of summation
    params, batch = mlp_problem(130, seed=3)
    with DataParallel(mlp_loss, 2, "ray") as a, \
            DataParallel(mlp_loss, 2, "dask", client=dask_client) as b:
        _tree_bits_equal(a.value_and_grad(params, batch), b.value_and_grad(params, batch))


def test_callable_object_and_numpy_params(make_dp):
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(9, 3)), rng.normal(size=9)
    params = {"w": rng.normal(size=3), "b": 0.5}          # ndarray and Python float leaves
    fun = WeightedL2(0.1)
    dp = make_dp(fun)
    loss, grads = dp.value_and_grad(params, (nx.asarray(x), nx.asarray(y)))
    ref_loss, ref_w, ref_b = least_squares_numpy(params["w"], 0.5, x, y)
    np.testing.assert_allclose(float(loss), ref_loss + 0.1 * np.sum(params["w"] ** 2),
                               rtol=1e-12)
    np.testing.assert_allclose(grads["w"].numpy(), ref_w + 0.2 * params["w"], rtol=1e-12)
    # the Python float is weakly typed (float32), as in single-process value_and_grad
    single = nx.value_and_grad(fun)(params, (nx.asarray(x), nx.asarray(y)))
    assert grads["b"].dtype == single[1]["b"].dtype
    np.testing.assert_allclose(float(grads["b"]), ref_b, rtol=1e-6)


def test_more_workers_than_rows_leaves_some_idle(make_dp):
    x, y = np.array([[1.0, 2.0]]), np.array([0.5])
    params = {"w": nx.asarray(np.array([0.3, -0.1])), "b": nx.asarray(np.float64(0.0))}
    dp = make_dp(least_squares)
    loss, grads = dp.value_and_grad(params, (x, y))
    ref_loss, ref_w, _ = least_squares_numpy(params["w"].numpy(), 0.0, x, y)
    np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-15)
    np.testing.assert_allclose(grads["w"].numpy(), ref_w, rtol=1e-15)


# -- DataParallel: failures ---------------------------------------------------------------------

def test_error_in_fun_reaches_the_caller_as_itself(make_dp):
    dp = make_dp(raise_on_marker)
    x = np.ones((4, 3))
    x[2, 0] = 1000.0                                   # shard 1 starts with the marker
    with pytest.raises(ValueError, match="bad shard") as info:
        dp.value_and_grad(nx.ones(3), x)
    assert any(f"worker 1 of 2, a {'Ray' if make_dp.backend == 'ray' else 'Dask'} actor" in note
               for note in info.value.__notes__)
    # the workers survive an exception in the user's code
    assert float(dp.value_and_grad(nx.ones(3), np.ones((4, 3)))[0]) == 9.0


def test_dead_worker_raises_worker_error(make_dp):
    # a timeout far beyond the engines' failure detection: a TimeoutError would mean a hang
    dp = make_dp(die_on_marker, timeout=120)
    x = np.ones((4, 3))
    assert float(dp.value_and_grad(nx.ones(3), x)[0]) == 9.0
    x[2, 0] = -1.0                                     # worker 1 dies
    with pytest.raises(WorkerError, match="worker 1 of 2 died or became unreachable"):
        dp.value_and_grad(nx.ones(3), x)
    with pytest.raises(WorkerError, match="close\\(\\) this DataParallel and make a new one"):
        dp.value_and_grad(nx.ones(3), np.ones((4, 3)))
    assert "broken" in repr(dp)
    dp.close()
    assert dp.closed


def test_timeout_raises_and_retires_the_workers(make_dp):
    dp = make_dp(sleep_on_marker, timeout=1.0)
    x = np.ones((4, 3))
    x[2, 0] = 1000.0                                   # worker 1 sleeps 3 s
    with pytest.raises(TimeoutError, match=r"worker\(s\) \[(0, )?1\] did not compute within"):
        dp.value_and_grad(nx.ones(3), x)
    with pytest.raises(WorkerError, match="timed out earlier"):
        dp.value_and_grad(nx.ones(3), np.ones((4, 3)))


def test_too_few_cluster_resources_time_out_at_start(make_dp):
    # 3 workers on a 2-CPU Ray cluster / a 2-worker Dask cluster: never a hang
    with pytest.raises(TimeoutError, match="num_workers|did not start"):
        make_dp(least_squares, num_workers=3, startup_timeout=1.0)


# -- DataParallel: lifetime ---------------------------------------------------------------------

def _wait_gone(pids, seconds=30.0):
    import psutil

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return []
        time.sleep(0.1)
    return alive


def test_context_exit_frees_ray_workers(ray_cluster):
    with DataParallel(least_squares, 2, "ray") as dp:
        pids = dp.worker_pids
        assert len(set(pids)) == 2 and os.getpid() not in pids
    assert dp.closed
    assert _wait_gone(pids) == []                       # the actors' processes exited
    with pytest.raises(ValueError, match="freed by close"):
        dp.value_and_grad({"w": nx.ones(2), "b": 0.0}, (np.ones((2, 2)), np.ones(2)))
    dp.close()                                          # idempotent


def _actor_count(dask_worker):
    return len(dask_worker.state.actors)


def test_context_exit_frees_dask_actors(dask_client):
    with DataParallel(least_squares, 2, "dask", client=dask_client) as dp:
        pids = dp.worker_pids
        assert len(set(pids)) == 2 and os.getpid() not in pids
        assert sum(dask_client.run(_actor_count).values()) >= 2
    assert dp.closed
    deadline = time.monotonic() + 30
    while sum(dask_client.run(_actor_count).values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sum(dask_client.run(_actor_count).values()) == 0
    with pytest.raises(ValueError, match="freed by close"):
        dp.worker_pids


OWNED_CLUSTERS = """
import numpy as np, sys
import nx_rune as nx
assert "ray" not in sys.modules and "distributed" not in sys.modules, "imported eagerly"

def loss(p, b):
    return nx.mean((b @ p) ** 2)

if __name__ == "__main__":
    import ray
    for backend in ("ray", "dask"):
        with nx.distributed.DataParallel(loss, 2, backend) as dp:
            pids = dp.worker_pids
            assert float(dp.value_and_grad(nx.ones(2), np.ones((3, 2)))[0]) == 4.0
            if backend == "dask":
                cluster = dp._engine._cluster
        if backend == "ray":
            assert not ray.is_initialized(), "the Ray instance it started is still up"
        else:
            assert cluster.status.name == "closed", cluster.status
    print("ok")
"""


def test_owned_local_clusters_start_and_stop(tmp_path):
    # in a fresh interpreter: no cluster up, so each backend starts (and then stops) its own
    script = tmp_path / "owned.py"
    script.write_text(OWNED_CLUSTERS)
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{RAY_MEMORY_MONITOR: "0"})
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       cwd=str(ROOT), timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


def test_imports_without_ray_or_dask():
    code = ("import sys\n"
            "for m in ('ray', 'dask', 'distributed'): sys.modules[m] = None  # not installed\n"
            "import nx_rune as nx\n"
            "for backend, extra in (('ray', 'nx_rune[ray]'), ('dask', 'nx_rune[dask]')):\n"
            "    try:\n"
            "        nx.distributed.DataParallel(lambda p, b: p, 2, backend)\n"
            "    except ImportError as e:\n"
            "        assert extra in str(e), e\n"
            "    else:\n"
            "        raise AssertionError('no ImportError')\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=str(ROOT), timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,exc,match", [
    ({"fun": 3}, TypeError, "fun: expected a callable"),
    ({"num_workers": 0}, ValueError, "num_workers: expected at least 1"),
    ({"num_workers": 2.0}, TypeError, "num_workers: expected an int"),
    ({"num_workers": True}, TypeError, "num_workers: expected an int"),
    ({"backend": "spark"}, ValueError, "backend: expected 'ray' or 'dask'"),
    ({"backend": None}, TypeError, "backend: expected 'ray' or 'dask'"),
    ({"timeout": -1.0}, ValueError, "timeout: expected a positive"),
    ({"timeout": "5"}, TypeError, "timeout: expected a number of seconds or None"),
    ({"startup_timeout": 0}, ValueError, "startup_timeout: expected a positive"),
    ({"startup_timeout": None}, TypeError, "startup_timeout: expected a number of seconds"),
])
def test_constructor_bad_input(kwargs, exc, match):
    args = {"fun": least_squares, "num_workers": 2, "backend": "ray"} | kwargs
    with pytest.raises(exc, match=match):
        DataParallel(args.pop("fun"), **args)


def test_engine_specific_bad_input(ray_cluster, dask_client):
    with pytest.raises(ValueError, match="client: only backend='dask'"):
        DataParallel(least_squares, 2, "ray", client=dask_client)
    with pytest.raises(TypeError, match="client: expected a dask.distributed.Client"):
        DataParallel(least_squares, 2, "dask", client="tcp://127.0.0.1:8786")
    unpicklable = WeightedL2(0.0)
    unpicklable.lock = __import__("threading").Lock()
    for backend, extra in (("ray", {}), ("dask", {"client": dask_client})):
        with pytest.raises(TypeError, match=f"fun: cannot be pickled to send it to the "
                                            f"{backend.capitalize()} workers"):
            DataParallel(unpicklable, 2, backend, **extra)


def test_value_and_grad_bad_input(make_dp):
    dp = make_dp(least_squares)
    params = {"w": nx.ones(2), "b": 0.0}
    with pytest.raises(ValueError, match="batch: every leaf must have the same leading"):
        dp.value_and_grad(params, (np.ones((3, 2)), np.ones(4)))
    with pytest.raises(TypeError, match="batch: leaf 1 is a str"):
        dp.value_and_grad(params, (np.ones((3, 2)), "labels"))

    def traced(w):
        return dp.value_and_grad({"w": w, "b": 0.0}, (np.ones((3, 2)), np.ones(3)))[0]
    with pytest.raises(TypeError, match="params: leaf 1 is a value traced"):
        nx.grad(traced)(nx.ones(2))

    def traced_batch(x):
        return dp.value_and_grad(params, (x, np.ones(3)))[0]
    with pytest.raises(TypeError, match="batch: leaf 0 is a value traced"):
        nx.grad(traced_batch)(nx.ones((3, 2)))


def test_public_api_is_annotated():
    for fn in (DataParallel.__init__, DataParallel.value_and_grad, DataParallel.close,
               DataParallel.__enter__, DataParallel.__exit__):
        hints = typing.get_type_hints(fn)
        assert "return" in hints
        params = [p for p in fn.__code__.co_varnames[:fn.__code__.co_argcount +
                                                       fn.__code__.co_kwonlyargcount]
                  if p != "self"]
        assert all(p in hints for p in params), fn.__qualname__
        assert fn.__doc__ or fn.__name__.startswith("__")
    for prop in ("num_workers", "backend", "closed", "worker_pids"):
        assert "return" in typing.get_type_hints(getattr(DataParallel, prop).fget)
    assert nx.distributed.DataParallel is DataParallel and issubclass(WorkerError, RuntimeError)


# -- Tensors through the engines' transports ----------------------------------------------------

def _values():
    x = nx.asarray(np.arange(12.0).reshape(3, 4))
    return {"0-d": nx.asarray(np.float32(2.5)),
            "view": x.T[::-1, 1:3],
            "padded": nx.pad(x, 1, constant_values=-1.0),
            **{str(dt): nx.asarray((np.arange(6) % 3).astype(dt).reshape(2, 3))
               for dt in (np.float16, np.float32, np.float64, np.int8, np.uint16, np.int64,
                          np.uint64, np.bool_, np.complex64, np.complex128)}}


def _describe(tree):
    """What arrived, per key: (type name, shape, dtype name, the values' bytes)."""
    return {k: (type(t).__name__, t.shape, str(t.dtype), t.numpy().tobytes())
            for k, t in tree.items()}


def _check_arrived(sent, got):
    assert set(got) == set(sent)
    for k, t in sent.items():
        assert got[k] == ("Tensor", t.shape, str(t.dtype), t.numpy().tobytes()), k


def _mapping_of(address):
    """The /proc/self/maps line of the mapping holding ``address`` (Linux)."""
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(v, 16) for v in line.split()[0].split("-"))
            if lo <= address < hi:
                return line
    return ""


def test_tensors_round_trip_through_ray(ray_cluster):
    values = _values()
    ref = ray.put(values)
    _check_arrived(values, _describe(ray.get(ref)))
    _check_arrived(values, ray.get(ray.remote(_describe).remote(ref)))     # in a worker
    # and back from a worker: a worker's Tensors come home intact
    echoed = ray.get(ray.remote(lambda tree: tree).remote(ref))
    _check_arrived(values, _describe(echoed))


def test_large_tensor_is_read_from_ray_object_store_without_copy(ray_cluster):
    t = nx.asarray(np.arange(1 << 20, dtype=np.float64))                 # 8 MiB
    ref = ray.put(t)
    a, b = ray.get(ref), ray.get(ref)
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    # both gets are the same read-only memory, Ray's shared-memory object: no copy per get
    # (a copy through the pickle stream would give a fresh writable array each time)
    assert not a.numpy().flags.writeable
    assert a.numpy().ctypes.data == b.numpy().ctypes.data != t.numpy().ctypes.data
    if os.path.exists("/proc/self/maps"):
        assert "plasma" in _mapping_of(a.numpy().ctypes.data)


def test_tracers_refuse_ray_and_dask_transport(ray_cluster):
    def f(x):
        with pytest.raises(TypeError):
            ray.put(x)
        with pytest.raises(TypeError) as info:
            serialize(x, serializers=["pickle"], on_error="raise")
        chain, e = [], info.value
        while e is not None:
            chain.append(str(e))
            e = e.__cause__
        assert any("cannot pickle a tracer of grad" in m for m in chain), chain
        return nx.sum(x)
    np.testing.assert_array_equal(nx.grad(f)(nx.ones(3)).numpy(), np.ones(3, np.float32))


def test_tensors_round_trip_through_dask(dask_client):
    values = _values()
    [future] = dask_client.scatter([values], broadcast=True)
    _check_arrived(values, dask_client.submit(_describe, future, pure=False).result())
    _check_arrived(values, _describe(future.result()))
    echoed = dask_client.submit(lambda tree: tree, future, pure=False).result()
    _check_arrived(values, _describe(echoed))


def test_large_tensor_goes_through_dask_transport_without_copy():
    t = nx.asarray(np.arange(1 << 20, dtype=np.float64))                 # 8 MiB
    header, frames = serialize(t)                  # what Dask's comm writes, frame by frame
    assert header["serializer"] == "pickle"
    big = [f for f in frames if memoryview(f).nbytes == t.numpy().nbytes]
    assert len(big) == 1 and sum(memoryview(f).nbytes for f in frames) < t.numpy().nbytes + 1000
    sent = np.frombuffer(big[0], dtype=np.uint8)
    assert np.shares_memory(sent, t.numpy())       # the frame is the tensor's own memory
    u = deserialize(header, frames)
    assert isinstance(u, nx.Tensor) and np.shares_memory(u.numpy(), sent)  # and is used as is
    np.testing.assert_array_equal(u.numpy(), t.numpy())


# -- the example --------------------------------------------------------------------------------

def test_example_trains_alike_on_every_backend(ray_cluster, dask_client, capsys):
    spec = importlib.util.spec_from_file_location(
        "train_mlp_distributed", ROOT / "examples" / "train_mlp_distributed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    runs = mod.main(["--epochs", "2", "--batch-size", "64"], client=dask_client)
    assert list(runs) == ["single process", "ray, 2 workers", "dask, 2 workers"]
    single = runs["single process"]
    assert single["losses"][-1] < 0.6 * single["losses"][0] and single["accuracy"] > 0.8
    for name in ("ray, 2 workers", "dask, 2 workers"):
        # the same weights, batches and updates: only float32 rounding differs
        np.testing.assert_allclose(runs[name]["losses"], single["losses"], rtol=1e-4)
        assert abs(runs[name]["accuracy"] - single["accuracy"]) <= 0.01
    out = capsys.readouterr().out
    assert "speedup" in out and "dask, 2 workers" in out
