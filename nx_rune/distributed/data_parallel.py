"""``DataParallel``: the loss and gradient of a batch, computed by long-lived worker processes
on Ray or Dask, each taking a contiguous shard of the batch."""
from __future__ import annotations

import importlib
import numbers
from typing import Any, Callable

from nx_rune import tree_util
from nx_rune.distributed import sharding
from nx_rune.distributed._shipping import MissingModule
from nx_rune.distributed.errors import WorkerError

__all__ = ["DataParallel", "DEFAULT_TIMEOUT"]

# seconds one value_and_grad call may take unless the DataParallel says otherwise: far above a
# step's usual time, low enough that a worker stuck for good is reported, never waited on forever
DEFAULT_TIMEOUT = 600.0

_BACKENDS = {"ray": ("nx_rune.distributed._ray_backend", "RayBackend"),
             "dask": ("nx_rune.distributed._dask_backend", "DaskBackend")}


def _check_seconds(value: Any, name: str, allow_none: bool) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number of seconds"
                        f"{' or None' if allow_none else ''}, got {type(value).__name__}")
    if not float(value) > 0:
        raise ValueError(f"{name}: expected a positive number of seconds, got {value!r}")
    return float(value)


class DataParallel:
    """Data-parallel ``value_and_grad`` of ``fun`` over ``num_workers`` worker processes.

    ``fun(params, batch)`` returns the scalar (0-d float) mean loss of ``batch``; ``params`` and
    ``batch`` are pytrees (nx.tree_util).  The workers are started once, here, and each holds
    ``fun`` (sent pickled with cloudpickle: any picklable callable, an ``nx.jit``-compiled one
    included, works).  Code travels by reference when the workers can import its module and
    by value when they cannot (a module on this process's ``sys.path`` only, a test file, a
    script's directory, ``__main__``): the workers report what they cannot import and it is
    sent again by value; a module that cannot travel by value (a compiled extension) raises
    ``ModuleNotFoundError`` naming it.  Classes registered as pytree nodes here
    (``nx.tree_util.register_pytree_node``/``register_pytree_node_class``, in ``__main__`` too)
    are registered on the workers as well, also those registered after the start.
    ``value_and_grad(params, batch)`` sends params to every worker, cuts every
    leaf of batch along axis 0 into contiguous shards (uneven sizes allowed), has worker i compute
    ``nx.value_and_grad(fun)(params, shard_i)`` and combines the shards' losses and gradients
    weighted by shard size, in shard order.

    Args:
        fun: ``fun(params, batch) -> 0-d float Tensor``, the mean loss over the batch's rows.
        num_workers: worker processes (>= 1).
        backend: ``"ray"`` (Ray actors on the cluster ``ray.init`` connected to; a local one is
            started, and shut down on close, when Ray is not initialised) or ``"dask"`` (Dask
            actors on ``client``'s cluster; without a client a ``LocalCluster`` of num_workers
            processes is started, and closed on close).
        client: a ``dask.distributed.Client`` (backend "dask" only).
        timeout: seconds one ``value_and_grad`` call may take before TimeoutError (default
            ``DEFAULT_TIMEOUT``, 600 s; None: no limit, at the risk of waiting forever on a
            worker stuck in ``fun``; a dead worker is reported as soon as the engine notices,
            either way).  After a TimeoutError or a WorkerError every later call raises
            WorkerError.
        startup_timeout: seconds to wait for the workers to start and load ``fun`` (and for
            each later round trip that sends new pytree registrations, and for each step of
            ``close()`` on a cluster this DataParallel started).

    Every wait on a worker is bounded by one of these.  Usable as a context manager;
    ``close()`` frees every worker.  Raises :class:`~nx_rune.distributed.WorkerError` when a
    worker dies.  An exception raised by ``fun`` on a worker reaches the caller as itself,
    with a note naming the worker, or, when it cannot be pickled (it holds a lock, a traced
    value, ...) or unpickled, as a :class:`~nx_rune.distributed.RemoteError` carrying its type
    name, message and the worker's traceback text.
    """

    _fun: Callable[[Any, Any], Any]
    _num_workers: int
    _backend_name: str
    _timeout: float | None
    _startup_timeout: float | None

    def __init__(self, fun: Callable[[Any, Any], Any], num_workers: int = 2,
                 backend: str = "ray", *, client: Any = None,
                 timeout: float | None = DEFAULT_TIMEOUT,
                 startup_timeout: float = 120.0) -> None:
        if not callable(fun):
            raise TypeError(f"fun: expected a callable fun(params, batch) -> loss, got "
                            f"{type(fun).__name__}")
        if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral):
            raise TypeError(f"num_workers: expected an int, got {type(num_workers).__name__}")
        if num_workers < 1:
            raise ValueError(f"num_workers: expected at least 1 worker, got {num_workers}")
        if not isinstance(backend, str):
            raise TypeError(f"backend: expected 'ray' or 'dask', got {type(backend).__name__}")
        if backend not in _BACKENDS:
            raise ValueError(f"backend: expected 'ray' or 'dask', got {backend!r}")
        self._timeout = _check_seconds(timeout, "timeout", allow_none=True)
        startup = self._startup_timeout = _check_seconds(startup_timeout, "startup_timeout",
                                                         allow_none=False)
        self._fun = fun
        self._num_workers = int(num_workers)
        self._backend_name = backend
        self._broken: str | None = None
        self._engine: Any = None  # set last: close() must work on a half-made instance
        module, cls = _BACKENDS[backend]
        engine_cls = getattr(importlib.import_module(module), cls)
        self._engine = engine_cls(fun, self._num_workers, startup, client=client)

    # -- properties ---------------------------------------------------------------------------
    @property
    def num_workers(self) -> int:
        """The number of worker processes."""
        return self._num_workers

    @property
    def backend(self) -> str:
        """``"ray"`` or ``"dask"``."""
        return self._backend_name

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran (the workers are freed)."""
        return self._engine is None

    @property
    def worker_pids(self) -> list[int]:
        """The process ids of the workers, in shard order (ValueError when closed)."""
        self._check_open()
        return list(self._engine.pids)

    # -- the computation ----------------------------------------------------------------------
    def value_and_grad(self, params: Any, batch: Any) -> tuple[Any, Any]:
        """``(loss, grads)`` of ``fun`` on the whole batch, as ``nx.value_and_grad(fun)(params,
        batch)``: loss a 0-d Tensor of fun's float dtype, grads a pytree of params' structure.

        params: a pytree of float arrays (Tensors, ndarrays, Python floats), sent to every
        worker once per call.  batch: a pytree whose leaves are Tensors or ndarrays sharing
        their leading dimension N >= 1; worker i gets rows ``[start_i, start_i + n_i)`` with
        ``n_i`` = ``N // k + 1`` for the first ``N % k`` workers and ``N // k`` for the others
        (k = min(num_workers, N); a batch smaller than num_workers leaves some workers idle).
        The result is deterministic (the same bits for the same inputs and num_workers) and
        differs from the single-process value only by the rounding of the reassociated sums:
        the loss within 8 eps relative, each gradient leaf within 64 eps times its largest
        magnitude (eps of the dtype; see docs/distributed.md).
        """
        self._check_open()
        sharding.check_concrete(params, "params")
        shards, sizes = sharding.split_batch(batch, self._num_workers)
        engine = self._engine
        try:
            if len(tree_util._custom_registrations()) != engine.shipper.registrations_seen:
                # classes registered since the start: the workers must know them too
                engine.shipper.install(None, lambda method, args: engine.call(
                    method, args, self._startup_timeout, "start"))
            engine.shipper.check_sendable(params, "params")
            engine.shipper.check_sendable(batch, "batch")
            while True:   # each round sends one more module by value, or raises
                try:
                    results = engine.run(params, shards, self._timeout)
                    break
                except MissingModule as m:
                    # a worker could not unpickle params or its shard: it failed before
                    # computing anything, so the call is sent again with that module by value
                    engine.shipper.send_by_value(m, m.what or "params")
        except (WorkerError, TimeoutError) as e:
            # a worker that timed out is still busy with this call (the next one would queue
            # behind it) or hung: either way it cannot be trusted with more work
            self._broken = f"{type(e).__name__}: {e}"
            raise
        return sharding.combine(results, sizes)

    def _check_open(self) -> None:
        if self._engine is None:
            raise ValueError("DataParallel: the workers were freed by close(); make a new "
                             "DataParallel")
        if self._broken is not None:
            raise WorkerError(f"DataParallel: a worker was lost or timed out earlier "
                              f"({self._broken}); close() this DataParallel and make a new one")

    # -- lifetime -----------------------------------------------------------------------------
    def close(self) -> None:
        """Free every worker (and the local cluster this DataParallel started, if any).
        Idempotent."""
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    def __enter__(self) -> DataParallel:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "broken" if self._broken else "open"
        return (f"DataParallel({getattr(self._fun, '__name__', type(self._fun).__name__)}, "
                f"num_workers={self._num_workers}, backend={self._backend_name!r}, {state})")
