"""The exception of ``nx.distributed``."""

__all__ = ["WorkerError"]


class WorkerError(RuntimeError):
    """A worker of a :class:`~nx_rune.distributed.DataParallel` died, could not start or could
    not be reached (its process crashed or was killed, its machine left the cluster).  The
    DataParallel is then unusable: ``close()`` it and make a new one.  An exception raised by the
    user's function on a worker is not a WorkerError: it reaches the caller as itself, with a
    note naming the worker."""
