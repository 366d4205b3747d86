"""DataParallel's Ray engine: one Ray actor per worker, each holding the function.

Imported only when a DataParallel with ``backend="ray"`` is made, so nx_rune imports without
Ray.  The cluster is the one ``ray.init`` connected this process to (a local one, or a
multi-machine one with ``ray.init(address=...)``); without one, the backend starts a local
cluster and shuts it down on close.  What the actors are sent (the function, pytree
registrations, params and shards) is pickled by ``_shipping`` with ``ray.cloudpickle``, Ray's own
pickler, so that classes sent by value keep their identity on the way back.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable

import numpy as np

from nx_rune import tree_util
from nx_rune.distributed._shipping import MissingModule, Shipper
from nx_rune.distributed._worker import ShardWorker
from nx_rune.distributed.errors import WorkerError
from nx_rune.tensor import Tensor

# params up to this size go inline in each call (Ray's own inlining limit for arguments)
INLINE_PARAMS_BYTES = 100 * 1024


def _nbytes(tree: Any) -> int:
    """The bytes of the array leaves of a pytree (other leaves count as nothing)."""
    total = 0
    for leaf in tree_util.tree_leaves(tree):
        if isinstance(leaf, (Tensor, np.ndarray)):
            total += leaf.size * leaf.dtype.itemsize
    return total


# A local Ray cluster serves this machine only, so its services should listen on the loopback
# address; on Linux Ray takes the machine's network address instead unless this setting (read
# when ray is imported) is "0", which makes it use 127.0.0.1 as on a single laptop.
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _import_ray() -> Any:
    if "ray" not in sys.modules:
        # not imported yet, so not connected to a cluster: the backend will start a local one
        os.environ.setdefault(LOOPBACK_ENV, "0")
    try:
        import ray
    except ImportError as e:
        raise ImportError("DataParallel(backend='ray') needs Ray: "
                          "pip install 'nx_rune[ray]'") from e
    return ray


class RayBackend:
    """``num_workers`` Ray actors holding ``fun``; see DataParallel for the contract."""
    name = "ray"

    def __init__(self, fun: Callable[[Any, Any], Any], num_workers: int,
                 startup_timeout: float, client: Any = None) -> None:
        ray = self._ray = _import_ray()
        if client is not None:
            raise ValueError("client: only backend='dask' takes a client; for Ray, connect "
                             "with ray.init(address=...) before making the DataParallel")
        self.shipper = Shipper(ray.cloudpickle, "ray")
        try:
            self.shipper.dumps(fun)
        except Exception as e:
            raise TypeError(f"fun: cannot be pickled to send it to the Ray workers "
                            f"({type(e).__name__}: {e})") from e
        self._actors: list[Any] = []
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            ray.init(include_dashboard=False)
        try:
            # one CPU each: a worker computes with one core, so two never share one; no
            # restarts or retries, a dead worker is reported rather than silently replaced
            actor_cls = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(ShardWorker)
            self._actors = [actor_cls.remote("ray.cloudpickle") for _ in range(num_workers)]
            self.pids = self.shipper.install(
                fun, lambda method, args: self.call(method, args, startup_timeout, "start"))
        except BaseException:
            self.close()
            raise

    def run(self, params: Any, shards: list[Any], timeout: float | None) -> list[Any]:
        """``[(loss_i, grads_i)]`` of each shard, shard i on worker i.  Large params are put
        in the object store once and read there by every worker; small ones travel inside each
        call's message (Ray inlines arguments that small, and a put would cost more than it
        saves: measured 3.4 ms against 1.9 ms a step for 10 kB of params)."""
        big = _nbytes(params) > INLINE_PARAMS_BYTES
        params = self.shipper.ship(params)
        if big:
            params = self._ray.put(params)
        refs = [actor.value_and_grad.remote(params, self.shipper.ship(shard))
                for actor, shard in zip(self._actors, shards)]
        return self.gather(refs, timeout, "compute")

    def call(self, method: str, args: tuple[Any, ...], timeout: float | None,
             what: str) -> list[Any]:
        """``method(*args)`` on every actor; their results in worker order (see gather)."""
        return self.gather([getattr(actor, method).remote(*args) for actor in self._actors],
                           timeout, what)

    def gather(self, refs: list[Any], timeout: float | None, what: str) -> list[Any]:
        """The values of ``refs`` (ref i from worker i) in order, raising as soon as any one
        fails: WorkerError for a lost worker, the user's exception for one raised in fun,
        TimeoutError past ``timeout`` seconds."""
        ray = self._ray
        deadline = None if timeout is None else time.monotonic() + timeout
        index = {ref: i for i, ref in enumerate(refs)}
        out: list[Any] = [None] * len(refs)
        pending = list(refs)
        while pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, pending = ray.wait(pending, num_returns=1, timeout=left)
            if not ready:
                busy = sorted(index[r] for r in pending)
                raise TimeoutError(f"DataParallel (ray): worker(s) {busy} did not {what} within "
                                   f"the timeout of {timeout} s; close() this DataParallel and "
                                   f"make a new one")
            for ref in ready:
                out[index[ref]] = self._get(ref, index[ref], len(refs), what)
        return out

    def _get(self, ref: Any, i: int, k: int, what: str) -> Any:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, MissingModule):   # the caller sends the module and retries
                raise cause from None
            if what == "compute" and isinstance(cause, Exception):
                cause.add_note(f"(raised by the function on worker {i} of {k}, a Ray actor)")
                raise cause from None
            raise WorkerError(f"DataParallel (ray): worker {i} of {k} failed to {what}: "
                              f"{e}") from e
        except ray.exceptions.RayError as e:
            if what == "start":
                raise WorkerError(f"DataParallel (ray): worker {i} of {k} failed to start (can "
                                  f"it import nx_rune and what fun needs?).  Ray says: "
                                  f"{e}") from e
            raise WorkerError(f"DataParallel (ray): worker {i} of {k} died or became "
                              f"unreachable ({type(e).__name__}); close() this DataParallel "
                              f"and make a new one.  Ray says: {e}") from e

    def close(self) -> None:
        """Kill every actor; shut Ray down if this backend started it."""
        ray = self._ray
        actors, self._actors = self._actors, []
        for actor in actors:
            try:
                ray.kill(actor)
            except Exception:  # already dead, or the cluster is gone: nothing left to free
                pass
        if self._owns_ray and ray.is_initialized():
            self._owns_ray = False
            ray.shutdown()
