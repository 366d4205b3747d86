"""What runs inside each worker process: one object per worker (a Ray actor, a Dask actor)
holding the user's function for the worker's whole life."""
from __future__ import annotations

import os
from typing import Any, NoReturn

from nx_rune import tree_util
from nx_rune.autodiff.api import value_and_grad
from nx_rune.distributed import _shipping
from nx_rune.distributed._shipping import MissingModule


class ShardWorker:
    """Holds ``fun(params, batch) -> scalar mean loss`` and its ``value_and_grad``.

    Made empty: ``load`` then installs the function and the caller's pytree registrations, sent
    as pickles this worker opens itself, so that a module it cannot import is reported to the
    caller (which sends it by value) instead of failing inside the engine.  ``pickler`` names
    the cloudpickle module the engine sends results and exceptions with."""

    def __init__(self, pickler: str) -> None:
        self._lib = _shipping.worker_lib(pickler)
        self._fun: Any = None
        self._value_and_grad: Any = None

    def ping(self) -> int:
        """The worker's process id (also proves the worker started and imported nx_rune)."""
        return os.getpid()

    def load(self, fun_payload: bytes | None,
             registrations: list[bytes]) -> tuple[int, MissingModule | None,
                                                  list[MissingModule | str | None]]:
        """Install the pickled function (None: keep the current one) and replay the pickled
        pytree registrations ``(type, flatten, unflatten)`` (a type already registered here, by
        its module's import, is left as it is).  Returns ``(pid, missing, [missing_i])``: the
        MissingModule that stopped the function or registration i from unpickling (for a
        registration, the text of any other error that stopped it), else None."""
        fun_missing = None
        if fun_payload is not None:
            fun = self._open(fun_payload)
            if isinstance(fun, MissingModule):
                fun_missing = fun
            else:
                self._fun, self._value_and_grad = fun, value_and_grad(fun)
        statuses: list[MissingModule | str | None] = []
        for payload in registrations:
            try:
                registration = _shipping.loads(payload)
            except MissingModule as m:
                statuses.append(m)
                continue
            except Exception as e:   # a registration the caller made for other uses: not fatal
                statuses.append(f"{type(e).__name__}: {e}")
                continue
            try:
                tree_util.register_pytree_node(*registration)
            except ValueError:   # already a node here: importing its module registered it
                pass
            statuses.append(None)
        return os.getpid(), fun_missing, statuses

    def _open(self, payload: bytes) -> Any:
        """``payload`` unpickled, or the MissingModule that stopped it; any other failure
        raised so that it can reach the caller (see _raise)."""
        failure = None
        try:
            return _shipping.loads(payload)
        except MissingModule as m:
            return m
        except Exception as e:
            failure = e
        self._raise(failure)

    def value_and_grad(self, params: Any, shard: Any) -> tuple[Any, Any]:
        """``(mean loss of the shard, its gradient w.r.t. params)``, as nx.value_and_grad.
        MissingModule when params or the shard name a module this worker lacks; an exception of
        the function that cannot be pickled is raised as a RemoteError."""
        failure = None
        try:
            params = _shipping.opened(params, "params")
            shard = _shipping.opened(shard, "batch")
            return self._value_and_grad(params, shard)
        except MissingModule:
            raise
        except Exception as e:
            failure = e
        self._raise(failure)

    def _raise(self, exc: Exception) -> NoReturn:
        """Raise ``exc`` when it pickles both ways with the engine's pickler, else its
        RemoteError.  Called outside the ``except`` block that caught ``exc``: a RemoteError
        raised inside it would chain ``exc`` as its ``__context__``, and Dask (whose tblib
        support pickles an exception's chain) would fail to send it just the same."""
        replacement = _shipping.portable(exc, self._lib)
        raise exc if replacement is None else replacement
