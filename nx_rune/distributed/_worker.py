"""What runs inside each worker process: one object per worker (a Ray actor, a Dask actor)
holding the user's function for the worker's whole life."""
from __future__ import annotations

import os
from typing import Any, Callable

from nx_rune.autodiff.api import value_and_grad


class ShardWorker:
    """Holds ``fun(params, batch) -> scalar mean loss`` and its ``value_and_grad``."""

    def __init__(self, fun: Callable[[Any, Any], Any]) -> None:
        self._fun = fun
        self._value_and_grad = value_and_grad(fun)

    def ping(self) -> int:
        """The worker's process id (also proves the worker started and imported nx_rune)."""
        return os.getpid()

    def value_and_grad(self, params: Any, shard: Any) -> tuple[Any, Any]:
        """``(mean loss of the shard, its gradient w.r.t. params)``, as nx.value_and_grad."""
        return self._value_and_grad(params, shard)
