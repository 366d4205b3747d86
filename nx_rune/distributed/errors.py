"""The exceptions of ``nx.distributed``."""

__all__ = ["WorkerError", "RemoteError"]


class WorkerError(RuntimeError):
    """A worker of a :class:`~nx_rune.distributed.DataParallel` died, could not start or could
    not be reached (its process crashed or was killed, its machine left the cluster).  The
    DataParallel is then unusable: ``close()`` it and make a new one.  An exception raised by the
    user's function on a worker is not a WorkerError: it reaches the caller as itself, with a
    note naming the worker (or as a :class:`RemoteError` when it cannot be pickled)."""


class RemoteError(Exception):
    """An exception raised by the user's function on a worker that cannot travel back as itself
    (it, or something it holds, cannot be pickled, or cannot be unpickled again).  It carries
    what can: ``type_name`` (the exception's module-qualified class name), ``message`` (its
    ``str()``), ``remote_traceback`` (the worker's formatted traceback) and ``reason`` (why it
    could not be pickled).  The workers stay usable, as after any exception of the function."""

    def __init__(self, type_name: str, message: str, remote_traceback: str = "",
                 reason: str = "") -> None:
        super().__init__(type_name, message, remote_traceback, reason)
        self.type_name = type_name
        self.message = message
        self.remote_traceback = remote_traceback
        self.reason = reason

    def __str__(self) -> str:
        text = f"{self.type_name}: {self.message}"
        if self.reason:
            text += f"\n(raised on a worker; it could not be sent here as itself: {self.reason})"
        if self.remote_traceback:
            text += f"\nRemote traceback:\n{self.remote_traceback.rstrip()}"
        return text
