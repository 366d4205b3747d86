"""DataParallel's Dask engine: one Dask actor per worker process, each holding the function.

Imported only when a DataParallel with ``backend="dask"`` is made, so nx_rune imports without
Dask.  The cluster is the given ``dask.distributed.Client``'s (local, or a scheduler serving
many machines); without one, the backend starts a ``LocalCluster`` of ``num_workers``
single-threaded worker processes and closes it on close.  An actor call's arguments are pickled
with protocol 5, their buffers sent as separate frames (no copy into a pickle stream); the call
goes straight to the worker when the client was made with ``direct_to_workers=True`` (as the
backend's own client is), else through the scheduler.

What the actors are sent (the function, pytree registrations, params and shards) is pickled by
``_shipping`` with the ``cloudpickle`` package, Dask's own pickler for what plain pickle cannot
do: Dask tries plain pickle first, which would send a class of a module the workers lack by
reference.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from nx_rune.distributed._shipping import MissingModule, Shipper
from nx_rune.distributed._worker import ShardWorker
from nx_rune.distributed.errors import WorkerError


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as e:
        raise ImportError("DataParallel(backend='dask') needs Dask's distributed scheduler: "
                          "pip install 'nx_rune[dask]'") from e
    return distributed


def _lost_worker(exc: BaseException) -> bool:
    """Whether an actor call failed because its worker is gone (Dask reports that as an
    OSError of its own; CommClosedError is an OSError too) rather than in the user's code."""
    from distributed.comm.core import CommClosedError

    return isinstance(exc, CommClosedError) or (
        type(exc) is OSError and "Actor's worker" in str(exc))


class DaskBackend:
    """``num_workers`` Dask actors holding ``fun``, one per worker process; see DataParallel."""
    name = "dask"

    def __init__(self, fun: Callable[[Any, Any], Any], num_workers: int,
                 startup_timeout: float, client: Any = None) -> None:
        distributed = _import_distributed()
        import cloudpickle  # what Dask pickles functions with when plain pickle cannot

        if client is not None and not isinstance(client, distributed.Client):
            raise TypeError(f"client: expected a dask.distributed.Client, got "
                            f"{type(client).__name__}")
        self.shipper = Shipper(cloudpickle, "dask")
        self._close_timeout = startup_timeout
        try:
            self.shipper.dumps(fun)
        except Exception as e:
            raise TypeError(f"fun: cannot be pickled to send it to the Dask workers "
                            f"({type(e).__name__}: {e})") from e
        self._cluster = None
        self._owned_client = None
        self._futures: list[Any] = []
        self._actors: list[Any] = []
        if client is None:
            self._cluster = distributed.LocalCluster(
                n_workers=num_workers, threads_per_worker=1, processes=True,
                dashboard_address=None, host="127.0.0.1")
            client = self._owned_client = distributed.Client(self._cluster,
                                                             direct_to_workers=True)
        self._client = client
        try:
            try:
                client.wait_for_workers(num_workers, timeout=startup_timeout)
            except TimeoutError:
                have = len(_workers(client))
                raise TimeoutError(f"num_workers: the Dask cluster has {have} worker(s), fewer "
                                   f"than num_workers={num_workers}, after waiting "
                                   f"{startup_timeout} s") from None
            addresses = sorted(_workers(client))[:num_workers]
            if len(addresses) < num_workers:   # one left between the wait and the listing
                raise WorkerError(f"num_workers: the Dask cluster lists {len(addresses)} "
                                  f"worker(s), fewer than num_workers={num_workers}")
            # each actor pinned to its own worker process: never two on one (they would share
            # its one actor thread) and never moved elsewhere
            self._futures = [client.submit(ShardWorker, "cloudpickle", actor=True,
                                           workers=[address], allow_other_workers=False,
                                           pure=False)
                             for address in addresses]
            self._actors = self._gather_futures(startup_timeout)
            self.pids = self.shipper.install(
                fun, lambda method, args: self.call(method, args, startup_timeout, "start"))
        except BaseException:
            self.close()
            raise

    def _gather_futures(self, timeout: float) -> list[Any]:
        try:
            # the actor proxies attach to the current client: make that this one
            with self._client.as_current():
                return [f.result(timeout=timeout) for f in self._futures]
        except TimeoutError:
            raise TimeoutError(f"DataParallel (dask): the workers did not start within "
                               f"{timeout} s") from None
        except Exception as e:
            raise WorkerError(f"DataParallel (dask): a worker failed to start: "
                              f"{type(e).__name__}: {e}") from e

    def run(self, params: Any, shards: list[Any], timeout: float | None) -> list[Any]:
        """``[(loss_i, grads_i)]`` of each shard, shard i on worker i."""
        params = self.shipper.ship(params)
        futures = [actor.value_and_grad(params, self.shipper.ship(shard))
                   for actor, shard in zip(self._actors, shards)]
        return self.gather(futures, timeout, "compute")

    def call(self, method: str, args: tuple[Any, ...], timeout: float | None,
             what: str) -> list[Any]:
        """``method(*args)`` on every actor; their results in worker order (see gather)."""
        return self.gather([getattr(actor, method)(*args) for actor in self._actors],
                           timeout, what)

    def gather(self, futures: list[Any], timeout: float | None, what: str) -> list[Any]:
        """The results of the actor futures (future i from worker i) in order, raising as soon
        as any one fails: WorkerError for a lost worker, the user's exception for one raised in
        fun, TimeoutError past ``timeout`` seconds."""
        k = len(futures)

        async def first_failure() -> list[Any]:
            tasks = [asyncio.ensure_future(_awaited(f)) for f in futures]
            done, pending = await asyncio.wait(tasks, timeout=timeout,
                                               return_when=asyncio.FIRST_EXCEPTION)
            for t in pending:
                t.cancel()
            return tasks

        # the wait above is bounded by timeout; the sync's own bound (a little later) only
        # matters if the client's event loop itself stopped answering
        tasks = self._client.sync(first_failure,
                                  callback_timeout=None if timeout is None else timeout + 30.0)
        for i, t in enumerate(tasks):  # a failure first: it may be why others never finished
            exc = None if t.cancelled() or not t.done() else t.exception()
            if exc is None:
                continue
            if isinstance(exc, MissingModule):   # the caller sends the module and retries
                raise exc
            if _lost_worker(exc):
                raise WorkerError(f"DataParallel (dask): worker {i} of {k} died or became "
                                  f"unreachable ({exc}); close() this DataParallel and make a "
                                  f"new one") from exc
            if what == "compute" and isinstance(exc, Exception):
                exc.add_note(f"(raised by the function on worker {i} of {k}, a Dask actor)")
                raise exc
            raise WorkerError(f"DataParallel (dask): worker {i} of {k} failed to {what}: "
                              f"{type(exc).__name__}: {exc}") from exc
        busy = [i for i, t in enumerate(tasks) if t.cancelled() or not t.done()]
        if busy:
            raise TimeoutError(f"DataParallel (dask): worker(s) {busy} did not {what} within "
                               f"the timeout of {timeout} s; close() this DataParallel and "
                               f"make a new one")
        return [t.result() for t in tasks]

    def close(self) -> None:
        """Release every actor (Dask deletes it on its worker); close the cluster if this
        backend started it."""
        futures, self._futures, self._actors = self._futures, [], []
        if futures:
            try:
                # cancel, not release: the actor proxies hold futures of their own
                self._client.cancel(futures)
            except Exception:  # the client is already closed: nothing left to free
                pass
        if self._owned_client is not None:
            client, self._owned_client = self._owned_client, None
            client.close(timeout=self._close_timeout)
        if self._cluster is not None:
            cluster, self._cluster = self._cluster, None
            cluster.close(timeout=self._close_timeout)


def _workers(client: Any) -> dict[str, Any]:
    """The cluster's workers by address, every one, asked of the scheduler now.

    Not ``client.scheduler_info()``: that returns the client's cached identity, which its own
    periodic refresh overwrites with one listing no workers (recent Dask), and which it keeps
    silently when the query fails."""
    try:
        info = client.sync(client.scheduler.identity, n_workers=-1)
    except TypeError:  # Dask before 2025: no n_workers argument, every worker listed
        info = client.sync(client.scheduler.identity)
    return dict(info["workers"])


async def _awaited(future: Any) -> Any:
    return await future
