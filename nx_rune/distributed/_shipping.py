"""Sending the user's code and data to the workers, and errors back from them.

Everything DataParallel sends (``fun``, the pytree registrations, each call's params and batch
shards) is pickled here with the engine's own cloudpickle (``ray.cloudpickle`` for Ray, the
``cloudpickle`` package that Dask uses), so that a class pickled by value keeps one identity
per process: cloudpickle tracks it by an id, and the worker's result comes back as the caller's
own class only when the caller's tracker made that id.

Code travels by reference (module and name) when the workers can import its module, else by
value.  Which modules the workers cannot import is learnt from the workers themselves: a worker
that fails to unpickle what it was sent reports the module it misses (:class:`MissingModule`);
the caller then pickles that module by value (``register_pickle_by_value``, held only while
DataParallel pickles, so the user's own pickling is untouched) and sends again.  A module that
cannot travel by value (a compiled extension, one not loaded in the caller) fails at once with a
``ModuleNotFoundError`` saying what to install.

Worker side: :func:`loads` (reporting missing modules), :func:`portable` (an exception that
cannot make the trip back as itself becomes a :class:`RemoteError`).
"""
from __future__ import annotations

import importlib
import io
import pickle
import sys
import threading
import traceback
from typing import Any, Callable

from nx_rune import tree_util
from nx_rune.distributed.errors import RemoteError

# at most this many modules sent by value for one DataParallel: a bound on the round trips of
# learning them (each round sends at least one more module or stops)
MAX_MODULES = 64

# the by-value registrations of cloudpickle are process-wide: DataParallels pickling in
# several threads take turns
_by_value_lock = threading.Lock()


class MissingModule(Exception):
    """Raised on a worker: what it was sent names a module it cannot import, or a name its copy
    of the module lacks.  Internal: the caller answers by sending that module by value."""

    def __init__(self, module: str, detail: str, what: str = "") -> None:
        super().__init__(module, detail, what)
        self.module, self.detail, self.what = module, detail, what

    def __str__(self) -> str:
        return f"the worker cannot import module {self.module!r} ({self.detail})"


# -- worker side ---------------------------------------------------------------------------------

class _Unpickler(pickle.Unpickler):
    """An Unpickler that names the module behind a failed global lookup."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return super().find_class(module, name)
        except ImportError as e:
            raise MissingModule(e.name or module, f"{type(e).__name__}: {e}") from None
        except AttributeError as e:   # the worker's copy of the module is another version
            raise MissingModule(module, f"{type(e).__name__}: {e}") from None


def loads(payload: bytes, buffers: Any = ()) -> Any:
    """Unpickle ``payload``; MissingModule for a module (or a module's name) the worker lacks,
    whether a global names it or cloudpickle imports it (a module object the code uses)."""
    try:
        return _Unpickler(io.BytesIO(payload), buffers=buffers).load()
    except ImportError as e:
        if e.name is None:
            raise
        raise MissingModule(e.name, f"{type(e).__name__}: {e}") from None


def _qualified_name(cls: type) -> str:
    module = getattr(cls, "__module__", None)
    name = getattr(cls, "__qualname__", cls.__name__)
    return name if module in (None, "builtins") else f"{module}.{name}"


def portable(exc: BaseException, lib: Any) -> BaseException | None:
    """None when ``exc`` survives a pickle round trip with ``lib`` (what the engine sends it
    with), else the RemoteError to raise in its place: its type name, message and this worker's
    traceback text, which always pickle.  An exception that cannot be pickled would otherwise
    never arrive (Dask waits forever) or be mistaken for a lost worker (Ray)."""
    try:
        lib.loads(lib.dumps(exc))
        return None
    except Exception as why:
        try:
            message = str(exc)
        except Exception:  # its __str__ fails too: its type name still says what happened
            message = "<str() of the exception failed>"
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        error = RemoteError(_qualified_name(type(exc)), message, text,
                            f"{type(why).__name__}: {why}")
        for note in getattr(exc, "__notes__", ()):
            if isinstance(note, str):
                error.add_note(note)
        return error


class Received:
    """A :class:`Shipped` value on the worker, unpickled on demand (inside the worker's call,
    where a failure is reported rather than lost in the engine's transport)."""
    __slots__ = ("payload", "buffers")

    def __init__(self, payload: bytes, *buffers: Any) -> None:
        self.payload, self.buffers = payload, buffers

    def open(self) -> Any:
        return loads(self.payload, self.buffers)


def opened(value: Any, what: str) -> Any:
    """The value a worker was sent as argument ``what``: a Received unpickled (MissingModule
    naming ``what``), anything else as it is."""
    if not isinstance(value, Received):
        return value
    try:
        return value.open()
    except MissingModule as m:
        raise MissingModule(m.module, m.detail, what) from None


# -- caller side ---------------------------------------------------------------------------------

class Shipped:
    """A value pickled by a Shipper, its array buffers kept out of band: the engine's protocol-5
    pickling sends them as separate frames (Dask) or object-store buffers (Ray), uncopied."""
    __slots__ = ("payload", "buffers")

    def __init__(self, payload: bytes, buffers: list[Any]) -> None:
        self.payload, self.buffers = payload, buffers

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (Received, (self.payload, *self.buffers))


def _module_origin(module: Any) -> str | None:
    """Why ``module`` cannot be pickled by value, or None when it can (plain Python source)."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
    if origin in ("built-in", "frozen"):
        return f"it is built into the caller's Python ({origin})"
    if isinstance(origin, str) and not origin.endswith(".py"):
        return f"it is a compiled extension module ({origin})"
    return None


class Shipper:
    """Pickles what one DataParallel sends, with the engine's cloudpickle ``lib``, by value for
    the modules its workers were found to lack; learns those modules from the workers."""

    def __init__(self, lib: Any, engine: str) -> None:
        self.lib = lib
        self.engine = engine
        self.by_value: list[str] = []        # module names, in the order they were learnt
        self.registrations_seen = 0          # tree_util's custom registrations handled so far
        self.unsendable: dict[type, str] = {}  # node types whose registration cannot travel

    def dumps(self, obj: Any, buffer_callback: Callable[[Any], None] | None = None) -> bytes:
        """``obj`` pickled (protocol 5) with this DataParallel's modules by value."""
        lib = self.lib
        with _by_value_lock:
            held = set(lib.list_registry_pickle_by_value())
            added = []
            try:
                for name in self.by_value:
                    module = sys.modules.get(name)
                    if name not in held and module is not None:
                        lib.register_pickle_by_value(module)
                        added.append(module)
                return lib.dumps(obj, protocol=5, buffer_callback=buffer_callback)
            finally:
                for module in added:
                    lib.unregister_pickle_by_value(module)

    def ship(self, obj: Any) -> Shipped:
        """``obj`` as a :class:`Shipped` (a worker gets a :class:`Received`).  Plain pickle
        when it can do the job (nothing to send by value: no module learnt, no class of
        ``__main__`` or of a local scope, which plain pickle refuses or would name by
        reference), as it is several times faster than cloudpickle on a tree of arrays."""
        buffers: list[Any] = []
        if not self.by_value:
            try:
                payload = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
            except Exception:
                pass
            else:
                if b"__main__" not in payload:
                    return Shipped(payload, buffers)
            buffers.clear()
        return Shipped(self.dumps(obj, buffers.append), buffers)

    def send_by_value(self, missing: MissingModule, what: str) -> None:
        """From now on pickle ``missing.module`` by value; ModuleNotFoundError naming ``what``
        (the argument that needs it) when that cannot help."""
        name = missing.module
        install = ("install it on every worker (the same Python environment as here), or "
                   "send it with "
                   + ("ray.init(runtime_env={'py_modules': [...]})" if self.engine == "ray"
                      else "client.upload_file(...)"))
        if name in self.by_value:
            raise ModuleNotFoundError(
                f"{what}: the {self.engine} workers cannot load module {name!r} even sent by "
                f"value ({missing.detail}): something it imports must be installed there; "
                f"{install}", name=name)
        module = sys.modules.get(name)
        reason = ("it is not loaded in this process either" if module is None
                  else _module_origin(module))
        if reason is None and len(self.by_value) >= MAX_MODULES:
            reason = f"more than {MAX_MODULES} modules would have to be sent by value"
        if reason is not None:
            raise ModuleNotFoundError(
                f"{what}: needs module {name!r}, which the {self.engine} workers cannot import "
                f"({missing.detail}), and it cannot be sent by value: {reason}; {install}",
                name=name)
        self.by_value.append(name)

    def new_registrations(self) -> list[tuple[type, Any, Any]]:
        """The pytree registrations made (in this process) since the last call."""
        registrations = tree_util._custom_registrations()
        new = registrations[self.registrations_seen:]
        self.registrations_seen = len(registrations)
        return new

    def install(self, fun: Any, call: Callable[[str, tuple[Any, ...]], list[Any]]) -> list[int]:
        """Load ``fun`` (None: none) and the pytree registrations not sent yet on every worker
        through ``call(method, args) -> one reply per worker``, learning the modules to send by
        value on the way; the workers' process ids.

        A registration that cannot travel (it does not pickle, or needs a module that cannot be
        sent) is skipped and remembered in ``unsendable``: only a call whose params or batch
        hold that node type needs it, and raises then (check_sendable)."""
        pending = []
        for registration in self.new_registrations():
            try:
                self.dumps(registration)
            except Exception as e:
                self.unsendable[registration[0]] = (f"its registration cannot be pickled "
                                                    f"({type(e).__name__}: {e})")
            else:
                pending.append(registration)
        while True:
            fun_payload = None if fun is None else self.dumps(fun)
            replies = call("load", (fun_payload, [self.dumps(r) for r in pending]))
            pids = [pid for pid, _, _ in replies]
            fun_missing = next((m for _, m, _ in replies if m is not None), None)
            failed: dict[int, MissingModule | str] = {}
            for _, _, statuses in replies:
                for i, m in enumerate(statuses):
                    if m is not None:
                        failed.setdefault(i, m)
            sent_before = set(self.by_value)

            def learn(missing: MissingModule, what: str) -> None:
                if missing.module not in self.by_value or missing.module in sent_before:
                    self.send_by_value(missing, what)   # (else learnt in this round already)

            if fun_missing is not None:
                learn(fun_missing, "fun")
            still = []
            for i, registration in enumerate(pending):
                if i not in failed:
                    continue            # every worker has it now
                failure = failed[i]
                if isinstance(failure, str):
                    self.unsendable[registration[0]] = (f"the workers cannot unpickle its "
                                                        f"registration ({failure})")
                    continue
                try:
                    learn(failure, f"the pytree registration of "
                                   f"{registration[0].__qualname__}")
                except ModuleNotFoundError as e:
                    self.unsendable[registration[0]] = str(e)
                else:
                    still.append(registration)
            pending = still
            if fun_missing is None and not pending:
                return pids
            fun = fun if fun_missing is not None else None

    def check_sendable(self, tree: Any, name: str) -> None:
        """TypeError naming ``name`` when ``tree`` holds a node type whose registration could
        not be sent to the workers (they would take the node for a leaf)."""
        if not self.unsendable:
            return
        stack = [tree_util.tree_structure(tree)]
        while stack:
            td = stack.pop()
            data = td.node_data()
            if data is not None and data[0] in self.unsendable:
                raise TypeError(f"{name}: holds pytree nodes of type "
                                f"{_qualified_name(data[0])}, which the {self.engine} workers "
                                f"do not know: {self.unsendable[data[0]]}")
            stack.extend(td.children())


def worker_lib(name: str) -> Any:
    """The cloudpickle module a worker pickles with: ``ray.cloudpickle`` or ``cloudpickle``."""
    return importlib.import_module("ray.cloudpickle" if name == "ray.cloudpickle"
                                   else "cloudpickle")
