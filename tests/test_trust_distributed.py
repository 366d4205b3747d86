"""nx.distributed.DataParallel with what the workers cannot import or send back: losses and
pytree classes of modules that only the caller has (a module on the caller's sys.path only, this
test file, a script's directory, ``__main__``), pytree classes registered in the caller (before or
after the start), and exceptions that cannot be pickled.  Real local clusters: a Ray instance
(2 CPUs) and a Dask LocalCluster (2 single-threaded worker processes), module-scoped.

Unlike tests/test_distributed.py, this module is NOT registered with cloudpickle by value: Ray's
workers cannot import it, so everything below reaches them only because DataParallel learns that
and sends it by value.  Every call waits at most ``TIMEOUT`` seconds (a hang fails the test as a
TimeoutError instead of stalling the suite).

Reference values: NumPy's closed-form gradient of a least-squares loss, in float64.
"""
import collections
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.distributed import DEFAULT_TIMEOUT, DataParallel, RemoteError, WorkerError

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
import cloudpickle  # noqa: E402
import distributed  # noqa: E402
import ray  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
BACKENDS = ["ray", "dask"]
RAY_MEMORY_MONITOR = "RAY_memory_monitor_refresh_ms"
TIMEOUT = 60.0     # far above any call here (a second or two); a hang becomes a TimeoutError
NO_ARGUMENT = object()


@pytest.fixture(scope="module")
def ray_cluster():
    assert not ray.is_initialized(), "another test left Ray running"
    saved = os.environ.get(RAY_MEMORY_MONITOR)
    os.environ[RAY_MEMORY_MONITOR] = "0"   # other jobs on a shared machine: no OOM kills
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    finally:
        if saved is None:
            del os.environ[RAY_MEMORY_MONITOR]
        else:
            os.environ[RAY_MEMORY_MONITOR] = saved
    yield ray
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
    """``make_dp(fun, **kwargs)``: a 2-worker DataParallel on the module's cluster of the
    parametrized backend, closed after the test."""
    backend = request.param
    extra = ({} if backend == "ray"
             else {"client": request.getfixturevalue("dask_client")})
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    made = []

    def make(fun, **kwargs):
        if kwargs.get("timeout") is NO_ARGUMENT:
            del kwargs["timeout"]
        else:
            kwargs.setdefault("timeout", TIMEOUT)
        kwargs.setdefault("startup_timeout", TIMEOUT)
        dp = DataParallel(fun, 2, backend, **extra, **kwargs)
        made.append(dp)
        return dp

    make.backend = backend
    yield make
    for dp in made:
        dp.close()


def least_squares_problem(seed=0, n=6):
    rng = np.random.default_rng(seed)
    w, b = rng.normal(size=3), np.float64(rng.normal())   # float64 params throughout
    x, y = rng.normal(size=(n, 3)), rng.normal(size=n)
    r = x @ w + b - y
    # NumPy's value and closed-form gradient of mean((x @ w + b - y)**2)
    return (w, b, x, y), (np.mean(r * r), 2.0 / n * x.T @ r, 2.0 / n * np.sum(r))


def write_module(directory, name, source):
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def caller_only_module(tmp_path, request):
    """``load(name, source)``: a module importable in this process only (its directory joins
    sys.path after both clusters started, so no worker has it); removed again afterwards."""
    loaded = []
    sys.path.insert(0, str(tmp_path))

    def load(name, source):
        write_module(tmp_path, name, source)
        module = __import__(name)
        loaded.append(name)
        return module

    yield load
    sys.path.remove(str(tmp_path))
    for name in loaded:
        sys.modules.pop(name, None)


# -- exceptions that cannot be pickled -----------------------------------------------------------

class NeedsTwoArgs(Exception):
    """Pickles, but does not unpickle: ``Exception.__reduce__`` replays only ``str(self)``."""

    def __init__(self, a, b):
        super().__init__(f"needs {a} and {b}")


def raise_by_marker(params, batch):
    """Raises, on the shard starting with a marker, an exception that cannot travel back."""
    marker = float(batch[0, 0])
    if marker == 1001.0:
        e = ValueError("holds a lock")
        e.lock = threading.Lock()
        raise e
    if marker == 1002.0:
        raise NeedsTwoArgs(1, 2)
    if marker == 1003.0:
        raise ArithmeticError("with a traced value", params)   # params are traced by grad
    return nx.mean((batch @ params) ** 2)


@pytest.mark.parametrize("marker,type_name,message", [
    (1001.0, "ValueError", "holds a lock"),
    (1002.0, f"{__name__}.NeedsTwoArgs", "needs 1 and 2"),
    (1003.0, "ArithmeticError", "with a traced value"),
])
def test_unpicklable_exception_arrives_as_remote_error(make_dp, marker, type_name, message):
    dp = make_dp(raise_by_marker)
    x = np.ones((4, 3))
    x[2, 0] = marker                                    # shard 1 (rows 2, 3) raises
    start = time.monotonic()
    with pytest.raises(RemoteError) as info:
        dp.value_and_grad(nx.ones(3), x)
    assert time.monotonic() - start < TIMEOUT / 2       # it arrived, nothing timed out
    e = info.value
    assert e.type_name == type_name and message in e.message
    # the worker's traceback, down to the line that raised in the user's function
    assert "raise_by_marker" in e.remote_traceback and type_name.split(".")[-1] in \
        e.remote_traceback
    assert type_name in str(e) and "could not be sent here as itself" in str(e)
    assert any(f"worker 1 of 2, a {'Ray' if make_dp.backend == 'ray' else 'Dask'} actor" in n
               for n in e.__notes__)
    # an exception of the user's code leaves the workers usable
    assert float(dp.value_and_grad(nx.ones(3), np.ones((4, 3)))[0]) == 9.0


def test_remote_error_pickles_with_its_fields():
    e = RemoteError("pkg.Error", "boom", "Traceback ...\npkg.Error: boom\n", "TypeError: no")
    e.add_note("(raised by the function on worker 0 of 2)")
    back = cloudpickle.loads(cloudpickle.dumps(e))
    assert (back.type_name, back.message, back.remote_traceback, back.reason) == \
        ("pkg.Error", "boom", "Traceback ...\npkg.Error: boom\n", "TypeError: no")
    assert back.__notes__ == e.__notes__ and str(back) == str(e)


# -- code the workers cannot import --------------------------------------------------------------

LOSS_MODULE = """
import nx_rune as nx

SCALE = 1.0          # a module global the loss reads

@nx.tree_util.register_pytree_node_class
class Affine:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten(self):
        return (self.w, self.b), "affine"

    @classmethod
    def tree_unflatten(cls, aux, children):
        assert aux == "affine", aux
        return cls(*children)

class BadBatch(Exception):
    pass

def loss(params, batch):
    x, y = batch
    if x.shape[1] != 3:
        raise BadBatch(f"expected 3 features, got {x.shape[1]}")
    r = x @ params.w + params.b - y
    return SCALE * nx.mean(r * r)
"""


def test_loss_and_pytree_class_from_a_module_only_the_caller_has(make_dp, caller_only_module):
    name = f"caller_only_losses_{make_dp.backend}"
    mod = caller_only_module(name, LOSS_MODULE)
    (w, b, x, y), (ref_loss, ref_w, ref_b) = least_squares_problem()
    dp = make_dp(mod.loss)
    # learnt from the workers (with the modules of other tests' pytree registrations, if any)
    assert name in dp._engine.shipper.by_value
    loss, grads = dp.value_and_grad(mod.Affine(nx.asarray(w), nx.asarray(b)), (x, y))
    assert type(grads) is mod.Affine                    # the caller's own class comes back
    np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-13)
    np.testing.assert_allclose(grads.w.numpy(), ref_w, rtol=1e-12)
    np.testing.assert_allclose(float(grads.b), ref_b, rtol=1e-12)
    # the module's own exception class comes back as itself too
    with pytest.raises(mod.BadBatch, match="expected 3 features, got 2"):
        dp.value_and_grad(mod.Affine(nx.asarray(w), nx.asarray(b)), (x[:, :2], y))
    # the by-value registration was DataParallel's while it pickled, not left to the user
    lib = ray.cloudpickle if make_dp.backend == "ray" else cloudpickle
    assert name not in lib.list_registry_pickle_by_value()


Pair = collections.namedtuple("Pair", "w b")     # a pytree node by being a namedtuple


def pair_loss(params, batch):
    x, y = batch
    r = x @ params[0] + params[1] - y
    return nx.mean(r * r)


def test_params_of_a_module_only_the_caller_has(make_dp, caller_only_module):
    # fun never mentions the module: only the params of a call need it
    name = f"caller_only_params_{make_dp.backend}"
    mod = caller_only_module(name, """
        import collections
        Pair = collections.namedtuple("Pair", "w b")
    """)
    (w, b, x, y), (ref_loss, ref_w, ref_b) = least_squares_problem(seed=1)
    dp = make_dp(pair_loss)
    assert name not in dp._engine.shipper.by_value
    loss, grads = dp.value_and_grad(mod.Pair(nx.asarray(w), nx.asarray(b)), (x, y))
    assert type(grads) is mod.Pair and name in dp._engine.shipper.by_value
    np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-13)
    np.testing.assert_allclose(grads.w.numpy(), ref_w, rtol=1e-12)
    np.testing.assert_allclose(float(grads.b), ref_b, rtol=1e-12)


def test_module_that_cannot_travel_fails_fast_naming_it(make_dp, caller_only_module):
    name = f"caller_only_compiled_{make_dp.backend}"
    mod = caller_only_module(name, LOSS_MODULE)
    # as a compiled extension would be: pickling by value cannot send its code
    mod.__spec__.origin = mod.__file__ = str(pathlib.Path(mod.__file__).with_suffix(".so"))
    start = time.monotonic()
    with pytest.raises(ModuleNotFoundError, match=f"fun: needs module '{name}', which the "
                                                  f"{make_dp.backend} workers cannot import.*"
                                                  f"compiled extension.*install it on every "
                                                  f"worker") as info:
        make_dp(mod.loss)
    assert info.value.name == name and time.monotonic() - start < TIMEOUT / 2


# -- pytree classes registered in the caller -----------------------------------------------------

def test_class_registered_after_the_start_is_known_to_the_workers(make_dp):
    class Scaled:                     # a local class: sent by value on both engines
        def __init__(self, w, b):
            self.w, self.b = w, b

        def __getitem__(self, i):     # what pair_loss reads
            return (self.w, self.b)[i]

    dp = make_dp(pair_loss)
    nx.tree_util.register_pytree_node(Scaled, lambda s: ((s.w, s.b), None),
                                      lambda aux, children: Scaled(*children))
    (w, b, x, y), (ref_loss, ref_w, ref_b) = least_squares_problem(seed=2)
    loss, grads = dp.value_and_grad(Scaled(nx.asarray(w), nx.asarray(b)), (x, y))
    assert type(grads) is Scaled
    np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-13)
    np.testing.assert_allclose(grads.w.numpy(), ref_w, rtol=1e-12)
    np.testing.assert_allclose(float(grads.b), ref_b, rtol=1e-12)


def _fails_outside(pid):
    """Unpickles in process ``pid`` only (as code whose import fails on the workers would)."""
    if os.getpid() != pid:
        raise RuntimeError("cannot be rebuilt in this process")
    return pair_flatten


def pair_flatten(s):
    return (s.w, s.b), None


class FlattenThatFailsOnWorkers:
    def __call__(self, s):
        return pair_flatten(s)

    def __reduce__(self):
        return (_fails_outside, (os.getpid(),))


def test_registration_that_cannot_be_sent_is_named_when_used(make_dp):
    # registrations made for other uses never stop a DataParallel from starting; only a call
    # whose params hold such a class fails, naming it
    class Locked:
        def __init__(self, w, b):
            self.w, self.b = w, b

    class Unrebuildable(Locked):
        pass

    lock = threading.Lock()

    def flatten(s):
        with lock:                    # the registration holds a lock: it cannot be pickled
            return (s.w, s.b), None

    nx.tree_util.register_pytree_node(Locked, flatten, lambda aux, ch: Locked(*ch))
    nx.tree_util.register_pytree_node(Unrebuildable, FlattenThatFailsOnWorkers(),
                                      lambda aux, ch: Unrebuildable(*ch))
    dp = make_dp(pair_loss)
    (w, b, x, y), (ref_loss, _, _) = least_squares_problem(seed=3)
    with pytest.raises(TypeError, match=r"params: holds pytree nodes of type .*Locked, which "
                                        r"the (ray|dask) workers do not know: its registration "
                                        r"cannot be pickled"):
        dp.value_and_grad(Locked(nx.asarray(w), nx.asarray(b)), (x, y))
    with pytest.raises(TypeError, match=r"batch: holds pytree nodes of type .*Unrebuildable, "
                                        r"which the (ray|dask) workers do not know: the workers "
                                        r"cannot unpickle its registration \(RuntimeError: "
                                        r"cannot be rebuilt in this process\)"):
        dp.value_and_grad(Pair(nx.asarray(w), nx.asarray(b)),
                          Unrebuildable(x, y))
    loss, _ = dp.value_and_grad(Pair(nx.asarray(w), nx.asarray(b)), (x, y))   # the rest works
    np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-13)


MAIN_SCRIPT = """
import json, os, sys
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
import numpy as np
import nx_rune as nx
import script_dir_losses          # from this script's directory only

@nx.tree_util.register_pytree_node_class
class Affine:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten(self):
        return (self.w, self.b), "affine"

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

def loss(params, batch):
    x, y = batch
    r = x @ params.w + params.b - y
    return nx.mean(r * r)

if __name__ == "__main__":
    import distributed, ray
    ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)
    client = distributed.Client(sys.argv[2])
    x, y, w, b = (np.asarray(v) for v in json.loads(sys.argv[3]))
    out = {}
    for backend, extra in (("ray", {}), ("dask", {"client": client})):
        for name, fun in (("main", loss), ("script_dir", script_dir_losses.loss)):
            with nx.distributed.DataParallel(fun, 2, backend, timeout=60, startup_timeout=60,
                                             **extra) as dp:
                value, grads = dp.value_and_grad(Affine(nx.asarray(w), nx.asarray(b)), (x, y))
                assert type(grads) is Affine, type(grads)
                out[f"{backend} {name}"] = [float(value), grads.w.numpy().tolist(),
                                            float(grads.b), dp._engine.shipper.by_value]
    client.close()
    print("RESULT " + json.dumps(out))
"""


def test_main_script_class_and_script_directory_loss(ray_cluster, dask_client, tmp_path):
    # a script run as __main__ (its own process, a driver of the module's clusters) with a
    # pytree class registered in __main__ and losses in __main__ and in the script's directory
    import json

    write_module(tmp_path, "script_dir_losses", """
        import nx_rune as nx

        def loss(params, batch):
            x, y = batch
            r = x @ params.w + params.b - y
            return nx.mean(r * r)
    """)
    script = write_module(tmp_path, "main_script", MAIN_SCRIPT)
    (w, b, x, y), (ref_loss, ref_w, ref_b) = least_squares_problem(seed=4)
    data = json.dumps([x.tolist(), y.tolist(), w.tolist(), float(b)])
    # run from the repository root: a Ray job's workers find nx_rune in the driver's directory
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, str(script), ray_cluster.get_runtime_context()
                        .gcs_address, dask_client.scheduler.address, data],
                       capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    [line] = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    results = json.loads(line[len("RESULT "):])
    assert sorted(results) == ["dask main", "dask script_dir", "ray main", "ray script_dir"]
    # Dask's workers (started by this process) lack the script's directory: sent by value
    # (Ray's workers of the script's job have it on their path)
    assert results["dask script_dir"][3] == ["script_dir_losses"]
    for value, gw, gb, _ in results.values():
        np.testing.assert_allclose(value, ref_loss, rtol=1e-13)
        np.testing.assert_allclose(gw, ref_w, rtol=1e-12)
        np.testing.assert_allclose(gb, ref_b, rtol=1e-12)


# -- every wait is bounded -----------------------------------------------------------------------

def test_calls_have_a_default_timeout():
    import inspect

    assert DEFAULT_TIMEOUT == 600.0
    assert inspect.signature(DataParallel).parameters["timeout"].default == DEFAULT_TIMEOUT
    assert inspect.signature(DataParallel).parameters["startup_timeout"].default == 120.0
    assert "DEFAULT_TIMEOUT" in DataParallel.__doc__


def sleeps_forever_on_marker(params, batch):
    if float(batch[0, 0]) > 100:
        time.sleep(3600)
    return nx.mean((batch @ params) ** 2)


def test_stuck_worker_times_out_without_a_timeout_argument(make_dp, monkeypatch):
    # the default bounds a call when the caller gives no timeout (shortened to 1.5 s here)
    monkeypatch.setitem(DataParallel.__init__.__kwdefaults__, "timeout", 1.5)
    dp = make_dp(sleeps_forever_on_marker, timeout=NO_ARGUMENT)
    x = np.ones((4, 3))
    x[2, 0] = 1000.0                                    # worker 1 never returns
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"worker\(s\) \[1\] did not compute within the "
                                           r"timeout of 1.5 s"):
        dp.value_and_grad(nx.ones(3), x)
    assert time.monotonic() - start < TIMEOUT / 2
    with pytest.raises(WorkerError, match="timed out earlier"):
        dp.value_and_grad(nx.ones(3), np.ones((4, 3)))
