"""Write tracking: what in-place writes (``x[idx] = v``, ``x += y``, ``nx.assign``) touched.

Two consumers need to know about writes:

* A padded (masked) Tensor caches its materialized copy.  ``EPOCH[0]`` changes at every in-place
  write into memory; a cache made at an older epoch is rebuilt before it is read.
* A reverse-mode tape saves the operands and outputs its derivative rules will read.  A write
  into one of them after it was recorded would make the backward pass silently wrong, so each
  live tape (registered with ``watch``) receives every write as a ``Write`` together with its
  own length at that moment; the backward pass checks an entry against the writes that came
  after it.  With no write during a tape's life the only cost is an empty-list test.

Writes are memory ranges (``Region``: the exact elements written) or, for an autodiff tracer
that ``x[idx] = v`` rebound to a new value, the tracer object itself.
"""
import itertools
import weakref

import numpy as np

__all__ = ["EPOCH", "Region", "Write", "watch", "record_write",
           "record_rebind", "region_of"]

EPOCH = [0]          # one cell, read without a lookup of the module attribute
_epochs = itertools.count(1)   # unique values even when threads write at the same time
_watchers = weakref.WeakSet()
# above this many elements the exact overlap test gives way to the extents (conservative)
_EXACT_LIMIT = 1 << 24


class Region:
    """Elements in memory: element ``i`` (a multi-index over ``shape``) starts at byte
    ``addr + sum(i * strides)`` and spans ``itemsize`` bytes.  ``select`` (an index NumPy
    understands) keeps only some of them (an advanced-index write)."""
    __slots__ = ("addr", "shape", "strides", "itemsize", "select", "lo", "hi", "size")

    def __init__(self, addr, shape, strides, itemsize, select=None):
        self.addr, self.shape, self.strides = addr, tuple(shape), tuple(strides)
        self.itemsize, self.select = itemsize, select
        size = 1
        lo = hi = addr
        for n, s in zip(self.shape, self.strides):
            size *= n
            if n > 1:
                if s > 0:
                    hi += (n - 1) * s
                else:
                    lo += (n - 1) * s
        self.size = size
        self.lo, self.hi = lo, hi + itemsize   # [lo, hi): every byte any element touches

    def _dense(self):
        """True when the elements tile [lo, hi) exactly, each byte once."""
        if self.select is not None:
            return False
        if any(s == 0 and n > 1 for n, s in zip(self.shape, self.strides)):
            return False
        return self.size * self.itemsize == self.hi - self.lo

    def starts(self):
        """The first byte of every (selected) element, as an int64 ndarray."""
        a = np.full(self.shape, self.addr, dtype=np.int64)
        for k, (n, s) in enumerate(zip(self.shape, self.strides)):
            shape = [1] * len(self.shape)
            shape[k] = n
            a = a + (np.arange(n, dtype=np.int64) * s).reshape(shape)
        if self.select is not None:
            a = a[self.select]
        return np.unique(a.reshape(-1))

    def overlaps(self, other):
        """True when some byte belongs to an element of both regions."""
        if not self.size or not other.size or self.hi <= other.lo or other.hi <= self.lo:
            return False
        if self._dense() and other._dense():
            return True
        if max(self.size, other.size) > _EXACT_LIMIT:
            return True     # too large to compare element by element: assume they overlap
        a, b = self.starts(), other.starts()
        if not (a.size and b.size):
            return False
        if self.itemsize == other.itemsize and (self.addr - other.addr) % self.itemsize == 0:
            return bool(np.isin(a, b, assume_unique=True).any())
        # different item sizes or alignments: compare bytes
        a = (a[:, None] + np.arange(self.itemsize)).reshape(-1)
        b = (b[:, None] + np.arange(other.itemsize)).reshape(-1)
        return bool(np.isin(a, b).any())

    def __repr__(self):
        return f"Region(bytes {self.lo:#x}..{self.hi:#x}, shape {self.shape})"


def region_of(t, select=None):
    """The memory a Tensor's values come from (the valid box of a padded view), or None when
    it reads no memory.  ``t`` is a Tensor (duck-typed: this module sits below tensor.py)."""
    view = t._view
    if view is None:
        arr = t._arr
        if arr.size == 0:
            return None
        return Region(arr.__array_interface__["data"][0], arr.shape, arr.strides,
                      arr.itemsize, select)
    buf = t._buf
    isz = buf.itemsize
    offset = view.offset
    shape = view.shape
    if view.mask is not None:   # only the valid box is read from memory
        box = view.mask
        shape = tuple(hi - lo for lo, hi in box)
        offset += sum(lo * s for (lo, _), s in zip(box, view.strides))
        select = None   # a selection indexes the padded shape: keep the whole box
    if 0 in shape or buf.size == 0:
        return None
    return Region(buf.address + offset * isz, shape, tuple(s * isz for s in view.strides),
                  isz, select)


class Write:
    """One in-place write: ``region`` (memory) or ``tracer`` (a rebound tracer), and ``what``
    (how it was written, for error messages)."""
    __slots__ = ("region", "tracer", "what")

    def __init__(self, region=None, tracer=None, what="an in-place write"):
        self.region, self.tracer, self.what = region, tracer, what

    def __repr__(self):
        return f"Write({self.what}, {self.region if self.tracer is None else 'a tracer'})"


def watch(tape):
    """Send every later write to ``tape.note_write(write)`` while ``tape`` is alive."""
    _watchers.add(tape)


def _notify(write):
    for tape in list(_watchers):
        tape.note_write(write)


def record_write(t, what, select=None):
    """Note an in-place write into the memory of Tensor ``t`` (``select``: the advanced index
    that picked the written elements of ``t``, None for all of them)."""
    EPOCH[0] = next(_epochs)
    if _watchers:
        region = region_of(t, select)
        if region is not None:
            _notify(Write(region=region, what=what))


def record_rebind(tracer, what):
    """Note that ``tracer`` now stands for a new value (``x[idx] = v`` on a tracer)."""
    if _watchers:
        _notify(Write(tracer=tracer, what=what))
