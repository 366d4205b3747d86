"""Large matrix products of compiled programs shared between the kernels' threads.

NumPy's matmul runs one BLAS call.  When that BLAS is pinned to one thread
(``OPENBLAS_NUM_THREADS=1``, ``OMP_NUM_THREADS=1`` or ``MKL_NUM_THREADS=1`` in the environment
at import, the usual setting on shared machines and under process-level parallelism), the
other cores stay idle during the products that dominate an MLP step, while the program's
fused kernels use ``nx.set_num_threads``'s threads.  A compiled program then cuts a large
product's output into row (or column) bands and runs the bands' BLAS calls on up to that many
threads: the calling thread and persistent helper threads, each band one ``np.matmul`` with
``out=`` (NumPy releases the GIL inside BLAS).  The bands are taken in turn, so a helper the
OS runs late leaves its share to the caller, which waits only for bands a helper has taken.
Each band is the BLAS's product for those rows (or columns): values equal the single call's
to rounding (a BLAS may order one element's sum differently in a band than in the whole).

With a multi-threaded BLAS (the default) nothing is split: the BLAS's threads do the work.
"""
from __future__ import annotations

import os
import queue
import threading

import numpy as np

from nx_rune._kernels import pool as _threads

# a product of at least this many multiply-adds is split (about 100 us on one core: below
# it, waking a helper costs more than it saves)
MIN_MACS = 1 << 22
_PINNED_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _blas_single_threaded(environ=os.environ) -> bool:
    """Whether the environment pins NumPy's BLAS to one thread (read once, at import: the BLAS
    reads it when it loads)."""
    for name in _PINNED_VARS:
        value = environ.get(name)
        if value is not None and value.strip():
            return value.strip() == "1"
    return False


BLAS_SINGLE_THREADED = _blas_single_threaded()


class _Helper:
    """One persistent daemon thread that takes bands from the jobs it is handed (a job it
    reaches late has none left: it goes back to waiting)."""

    def __init__(self):
        self.jobs = queue.SimpleQueue()
        thread = threading.Thread(target=self._loop, name="nx_rune-matmul", daemon=True)
        thread.start()

    def _loop(self):
        while True:
            self.jobs.get().work()


class _Job:
    """The bands of one product: ``work`` takes bands until none is left."""

    def __init__(self, a, b, out, bands, axis):
        self.a, self.b, self.out, self.bands, self.axis = a, b, out, bands, axis
        self.lock = threading.Lock()
        self.next = 0
        self.running = 0
        self.idle = threading.Condition(self.lock)
        self.error = None

    def _claim(self):
        with self.lock:
            k = self.next
            if k >= len(self.bands):
                return None
            self.next = k + 1
            self.running += 1
            return self.bands[k]

    def work(self):
        while True:
            band = self._claim()
            if band is None:
                return
            lo, hi = band
            try:
                if self.axis == 0:
                    np.matmul(self.a[lo:hi], self.b, out=self.out[lo:hi])
                else:
                    np.matmul(self.a, self.b[:, lo:hi], out=self.out[:, lo:hi])
            except BaseException as e:    # noqa: BLE001 - re-raised by the caller
                with self.lock:
                    self.error = self.error or e
            finally:
                with self.lock:
                    self.running -= 1
                    if self.running == 0:
                        self.idle.notify_all()

    def wait(self):
        with self.lock:
            while self.running:
                self.idle.wait()
        if self.error is not None:
            raise self.error


_helpers: list[_Helper] = []
_helpers_lock = threading.Lock()
_busy = threading.Lock()     # one split product at a time; a concurrent one runs unsplit


def _forget_helpers():
    """In a forked child: the parent's helper threads do not exist here."""
    global _helpers_lock, _busy
    _helpers.clear()
    _helpers_lock = threading.Lock()
    _busy = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def _get_helpers(n):
    with _helpers_lock:
        while len(_helpers) < n:
            _helpers.append(_Helper())
        return _helpers[:n]


def _bands(size, count):
    step = -(-size // count)
    return [(lo, min(lo + step, size)) for lo in range(0, size, step)]


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(a, b[, out])`` for 2-D float operands, split into bands between the kernels'
    threads when the product is large and NumPy's BLAS is single-threaded (see the module)."""
    threads = _threads.get_num_threads()
    if (not BLAS_SINGLE_THREADED or threads < 2 or a.ndim != 2 or b.ndim != 2
            or a.dtype != b.dtype or a.dtype.kind != "f"):
        return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)
    m, k = a.shape
    n = b.shape[1]
    if m * n * k < MIN_MACS or not _busy.acquire(blocking=False):
        return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)
    try:
        if out is None:
            out = np.empty((m, n), a.dtype)
        threads = min(threads, 8)
        axis = 0 if m >= n else 1
        size = m if axis == 0 else n
        count = min(2 * threads, max(1, size // 16))
        if count < 2:
            np.matmul(a, b, out=out)
            return out
        job = _Job(a, b, out, _bands(size, count), axis)
        for h in _get_helpers(threads - 1):
            h.jobs.put(job)
        job.work()
        job.wait()
        return out
    finally:
        _busy.release()
