"""Sorting and searching: sort, argsort, searchsorted.

sort(x, axis, descending)  argsort(x, axis, descending, stable, dtype)
searchsorted(x1, x2, side, dtype)
Sorts are stable (equal elements keep their order, with descending=True too; argsort with
stable=False may take NumPy's unstable order) and follow NumPy's order: NaNs after every number
(first when descending), -0.0 equal to 0.0, complex numbers lexicographic (real part, then
imaginary part).  searchsorted is np.searchsorted (x1 1-D, operands of one dtype).

May import: NumPy and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune.backend._core import _impl, _out


def _last_axis(a, axis):
    return a if axis == a.ndim - 1 else np.moveaxis(a, axis, -1)


def _rows_hold_zero(s):
    """Whether some row of ``s`` (sorted ascending along its last axis, NaNs last) holds a
    zero: a branchless binary search of all rows at once for their first element >= 0,
    O(rows * log n), skipped when every row starts above 0."""
    n = s.shape[-1]
    if s.flags.c_contiguous:
        flat, offsets = s.reshape(-1), np.arange(0, s.size, n)
        at = lambda col: flat[offsets + col]  # noqa: E731
    else:
        at = lambda col: np.take_along_axis(s, col.reshape(s.shape[:-1] + (1,)), -1)  # noqa
    lowest = at(np.zeros(s.size // n, np.intp)).reshape(-1)
    if (lowest == 0).any():
        return True
    if not (lowest < 0).any():
        return False
    base = np.zeros(s.size // n, np.intp)
    left = n
    while left > 1:
        half = left // 2
        base += half * (at(base + half).reshape(-1) < 0)
        left -= half
    base += at(base).reshape(-1) < 0
    return bool((at(np.minimum(base, n - 1)) == 0).any())


def _class_members(a, cls, count):
    """The elements of float ``a`` in class ``cls`` (zeros or NaNs; ``count`` of them), in C
    order: one value (a scalar) when they all share one bit pattern (+0.0 or -0.0; the
    default NaN or its negative), checked in one pass, instead of a slow masked gather."""
    bits = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    if cls is np.isnan:
        for v in (np.array(np.nan, a.dtype), -np.array(np.nan, a.dtype)):
            if np.count_nonzero(bits == v.view(bits.dtype)) == count:
                return v
    else:
        plus = a.size - np.count_nonzero(bits)    # +0.0 is the one all-zero bit pattern
        if plus in (0, count):
            return np.array(0.0 if plus else -0.0, a.dtype)
    return a[cls(a)]


def _restore_equal_runs(s, a, descending):
    """Make the unstable ascending sort ``s`` of float ``a`` (both with the sorted axis last)
    bit-identical to the stable sort, reversed when descending (returns that view of s).

    Only elements that compare equal yet differ in bits can be out of order: zeros (-0.0 ==
    0.0) and NaNs (sorted last, any sign or payload).  NumPy's SIMD sorts may even rewrite them
    (zeros of both signs come out as -0.0, float16 NaN payloads change).  Each class forms one
    run per row, with as many elements per row in s as in a, so writing a's elements of the
    class in C order onto s's restores each run as the stable sort has it.  Finding the runs
    costs O(rows * log n); restoring a class that is present one or two passes over a (a
    masked gather when its members differ in bits)."""
    t = np.flip(s, -1) if descending else s
    n = s.shape[-1]
    is_zero = lambda v: v == 0  # noqa: E731
    row = s.reshape(n) if s.size == n else None
    if row is not None and np.may_share_memory(row, s):   # one row: the runs are slices
        nan, zero = row.dtype.type(np.nan), row.dtype.type(0)   # (a Python float would
        nan0 = int(np.searchsorted(row, nan))                      # make NumPy cast the row)
        runs = ((nan0, n, np.isnan), (int(np.searchsorted(row[:nan0], zero, side="left")),
                                      int(np.searchsorted(row[:nan0], zero, side="right")),
                                      is_zero))
        for lo, hi, cls in runs:
            if hi > lo:
                run = row[lo:hi]
                (run[::-1] if descending else run)[...] = _class_members(a, cls, hi - lo)
        return t
    has_nan = bool(np.isnan(s[..., -1]).any())
    for present, cls in ((has_nan, np.isnan), (_rows_hold_zero(s), is_zero)):
        if present:
            where = cls(t)
            t[where] = _class_members(a, cls, np.count_nonzero(where))
    return t


def _sorted_values(a, axis, descending):
    """``a`` sorted along ``axis`` (stable, NumPy's order; NaNs first when descending)."""
    if a.dtype.kind == "c":
        # complex ties with different bits (0j, -0j, ...) form many runs: sort stably
        if descending:
            return np.flip(np.sort(np.flip(a, axis), axis=axis, kind="stable"), axis)
        return np.sort(a, axis=axis, kind="stable")
    # NumPy's default kind (SIMD quicksort) is ~60x faster than its stable merge sort and gives
    # the same values; only the order of equal floats of different bits needs restoring.
    # float16 sorts as float32 (exact both ways): NumPy 2.4's float16 sort is slower and, on
    # some inputs of thousands of elements mixing -0.0, -inf and negatives, leaves them unsorted
    if a.dtype == np.float16:
        s = np.sort(a.astype(np.float32), axis=axis).astype(np.float16)
    else:
        s = np.sort(a, axis=axis)
    if a.dtype.kind == "f" and a.size:
        t = _restore_equal_runs(_last_axis(s, axis), _last_axis(a, axis), descending)
        return t if axis == a.ndim - 1 else np.moveaxis(t, -1, axis)
    return np.flip(s, axis) if descending else s


@_impl("sort")
def _sort(x, *, axis, descending):
    return _out(_sorted_values(x._np(), axis, descending))


def _order_key(a):
    """Unsigned keys (uint32 for <= 32-bit dtypes, else uint64) whose order is NumPy's sort
    order of real ``a``: -0.0 and 0.0 get one key, every NaN the largest."""
    wide = a.dtype.itemsize > 4
    u, i, f = (np.uint64, np.int64, np.float64) if wide else (np.uint32, np.int32, np.float32)
    sign = u(1) << u(8 * np.dtype(u).itemsize - 1)
    kind = a.dtype.kind
    if kind in "bu":
        return a.astype(u)
    if kind == "i":
        k = a.astype(i).view(u)
        k ^= sign
        return k
    x = np.add(a, 0, dtype=f)                    # float16 widens exactly; -0.0 + 0 is +0.0
    nan = np.isnan(x)
    bits = x.view(u)                             # x's memory becomes the keys from here on
    flip = x.view(i) >> (8 * np.dtype(i).itemsize - 1)   # all ones for negatives, else 0
    flip |= sign.view(i)
    bits ^= flip.view(u)                         # negatives: all bits flipped; others: sign set
    if nan.any():
        bits[nan] = np.iinfo(u).max
    return bits


def _packed_order(key):
    """Stable argsort (uint32, last axis, rows shorter than 2**32) of uint32 ``key``: one
    unstable sort of uint64 ``key << 32 | position``, which never tie."""
    packed = np.empty(key.shape, np.uint64)
    halves = packed.view(np.uint32).reshape(key.shape + (2,))
    hi, lo = (1, 0) if np.little_endian else (0, 1)
    halves[..., hi] = key
    halves[..., lo] = np.arange(key.shape[-1], dtype=np.uint32)
    packed.sort(axis=-1)
    return halves[..., lo]


def _stable_order_last(a, descending):
    """Stable argsort of real ``a`` along its last axis (shorter than 2**32) from NumPy's fast
    unstable sort of packed keys: ~10x faster than its stable argsort.  64-bit keys take two
    passes, least significant half first (an LSD radix sort with 32-bit digits)."""
    key = _order_key(a)
    if descending:
        np.invert(key, out=key)
    if key.dtype.itemsize == 4:
        return _packed_order(key)
    lo_key, hi_key = key.min(), key.max()
    if hi_key - lo_key < 2**32:                   # one 32-bit digit suffices (small ints)
        key -= lo_key
        return _packed_order(key.astype(np.uint32))
    low = _packed_order(key.astype(np.uint32))
    high = np.take_along_axis((key >> np.uint64(32)).astype(np.uint32), low, -1)
    return np.take_along_axis(low, _packed_order(high), -1)


def _sort_order(a, axis, descending, stable=True):
    """The permutation sorting ``a`` along ``axis`` (NumPy's order, see ``_sort``): stable,
    or when ``stable`` is False NumPy's faster unstable one for 64-bit reals."""
    n = a.shape[axis]
    if a.size == 0:
        return np.zeros(a.shape, np.int64)
    if not stable and a.dtype.itemsize == 8 and a.dtype.kind != "c":
        order = np.argsort(a, axis=axis)
        return np.flip(order, axis) if descending else order
    if a.dtype.kind == "c" or n >= 2**32:
        if not descending:
            return np.argsort(a, axis=axis, kind="stable")
        # stable descending: equal elements in original order (reversed twice)
        p = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
        return (n - 1) - np.flip(p, axis)
    order = _stable_order_last(_last_axis(a, axis), descending)
    return order if axis == a.ndim - 1 else np.moveaxis(order, -1, axis)


@_impl("argsort")
def _argsort(x, *, axis, descending, stable, dtype):
    return _out(_sort_order(x._np(), axis, descending, stable).astype(dtype, copy=False))


@_impl("searchsorted")
def _searchsorted(x1, x2, *, side, dtype):
    return _out(np.searchsorted(x1._np(), x2._np(), side=side).astype(dtype, copy=False))
