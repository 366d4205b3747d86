"""Scale-out: data-parallel gradients on Ray or Dask (``nx.distributed``).

``DataParallel(fun, num_workers=2, backend="ray" | "dask")`` starts long-lived worker processes
holding ``fun(params, batch) -> mean loss``; its ``value_and_grad(params, batch)`` splits the
batch over them and returns the whole batch's loss and gradient.  Ray and Dask are optional
(``pip install 'nx_rune[ray]'`` / ``'nx_rune[dask]'``): their modules are imported only when a
DataParallel of that backend is made.  See docs/distributed.md.
"""
from nx_rune.distributed.data_parallel import DEFAULT_TIMEOUT, DataParallel
from nx_rune.distributed.errors import RemoteError, WorkerError

__all__ = ["DataParallel", "WorkerError", "RemoteError", "DEFAULT_TIMEOUT"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
