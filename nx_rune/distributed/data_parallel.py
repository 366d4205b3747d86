"""``DataParallel``: the loss and gradient of a batch, computed by long-lived worker processes
on Ray or Dask, each taking a contiguous shard of the batch."""
from __future__ import annotations

import importlib
import numbers
from typing import Any, Callable

from nx_rune.distributed import sharding
from nx_rune.distributed.errors import WorkerError

__all__ = ["DataParallel"]

_BACKENDS = {"ray": ("nx_rune.distributed._ray_backend", "RayBackend"),
             "dask": ("nx_rune.distributed._dask_backend", "DaskBackend")}


def _check_seconds(value: Any, name: str, allow_none: bool) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number of seconds"
                        f"{' or None' if allow_none else ''}, got {type(value).__name__}")
    if not value > 0:
        raise ValueError(f"{name}: expected a positive number of seconds, got {value!r}")
    return float(value)


class DataParallel:
    """Data-parallel ``value_and_grad`` of ``fun`` over ``num_workers`` worker processes.

    ``fun(params, batch)`` returns the scalar (0-d float) mean loss of ``batch``; ``params`` and
    ``batch`` are pytrees (nx.tree_util).  The workers are started once, here, and each holds
    ``fun`` (sent pickled with cloudpickle: any picklable callable, an ``nx.jit``-compiled one
    included, works).  ``value_and_grad(params, batch)`` sends params to every worker, cuts every
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
        timeout: seconds one ``value_and_grad`` call may take before TimeoutError (None: no
            limit; a dead worker is reported as soon as the engine notices, either way).  After
            a TimeoutError or a WorkerError every later call raises WorkerError.
        startup_timeout: seconds to wait for the workers to start.

    Usable as a context manager; ``close()`` frees every worker.  Raises
    :class:`~nx_rune.distributed.WorkerError` when a worker dies.
    """

    def __init__(self, fun: Callable[[Any, Any], Any], num_workers: int = 2,
                 backend: str = "ray", *, client: Any = None, timeout: float | None = None,
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
        startup = _check_seconds(startup_timeout, "startup_timeout", allow_none=False)
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
        try:
            results = self._engine.run(params, shards, self._timeout)
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
