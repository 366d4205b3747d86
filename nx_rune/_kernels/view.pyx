"""View algebra: shape, strides (in elements), offset and an optional per-axis validity mask.

Every movement op here is O(ndim) metadata work; no data moves.  A View is immutable: each
operation returns a new View (or ``None`` from ``reshape``/``pad`` when the result cannot be
expressed as one view, in which case the caller materializes first and retries).

Masks.  ``mask`` is ``None`` or one ``(lo, hi)`` pair per axis: index ``i`` along that axis is
valid when ``lo <= i < hi``.  An element is read from memory only when it is valid on every
axis, otherwise it equals ``fill``.  ``pad`` produces such a view (its offset may point before
the buffer: the padded positions are never read), and ``shrink`` of a padded view gives back the
unpadded view exactly.
"""
import operator

import numpy as np

from nx_rune._kernels.buffer cimport Buffer
from nx_rune._kernels import strided


class AxisError(ValueError, IndexError):
    """An axis out of range: an IndexError (as the Array API standard requires) that is also a
    ValueError (as NumPy's AxisError is both)."""


def normalize_axis(axis, Py_ssize_t ndim, name="axis"):
    """``axis`` as an int in [0, ndim); AxisError (an IndexError and a ValueError) naming
    ``name`` when out of range."""
    if type(axis) is int:
        ax = axis
    else:
        try:
            ax = operator.index(axis)
        except TypeError:
            raise TypeError(f"{name}: expected an integer axis, got {axis!r}") from None
        if isinstance(axis, (bool, np.bool_)):
            raise TypeError(f"{name}: expected an integer axis, got {axis!r}")
    if ax < -ndim or ax >= ndim:
        raise AxisError(f"{name}: axis {axis} is out of range for a tensor of {ndim} dimensions")
    return ax + ndim if ax < 0 else ax


def _as_int_tuple(values, name):
    if type(values) is tuple:  # the common case: already a tuple of ints
        for v in values:
            if type(v) is not int:
                break
        else:
            return values
    try:   # operator.index: 1.5 or "3" is refused (as NumPy does), not truncated/parsed
        out = tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{name}: expected a sequence of integers, got {values!r}") from None
    return out


def _index_int(v, name):
    """``v`` as an int that a signed 64-bit index holds; TypeError / ValueError naming
    ``name`` (not a C conversion's OverflowError)."""
    if type(v) is not int:
        try:
            v = operator.index(v)
        except TypeError:
            raise TypeError(f"{name}: expected an integer, got {v!r}") from None
    if not _SSIZE_MIN <= v <= _SSIZE_MAX:
        raise ValueError(f"{name}: {v} is beyond what a 64-bit index can address")
    return v


def c_strides(shape):
    """C-order strides, in elements, of a contiguous ``shape``."""
    strides = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= max(shape[i], 1)
    return tuple(strides)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


cdef View _mk(tuple shape, tuple strides, Py_ssize_t offset, object mask, object fill):
    """A View from trusted parts (tuples of ints of equal length, non-negative sizes): the
    movement ops' fast constructor, skipping ``__init__``'s conversions."""
    cdef View v = View.__new__(View)
    v.shape = shape
    v.strides = strides
    v.offset = offset
    v.mask = None if mask is None else _canonical_mask(shape, mask)
    v.fill = fill if v.mask is not None else 0
    return v


cdef class View:
    """Immutable strided view: ``View(shape, strides, offset=0, mask=None, fill=0)``."""
    cdef readonly tuple shape
    cdef readonly tuple strides
    cdef readonly Py_ssize_t offset
    cdef readonly object mask
    cdef readonly object fill

    def __init__(self, shape, strides, offset=0, mask=None, fill=0):
        offset = _index_int(offset, "offset")
        shape = _as_int_tuple(shape, "shape")
        strides = _as_int_tuple(strides, "strides")
        if len(strides) != len(shape):
            raise ValueError(f"strides: {strides} has {len(strides)} entries for shape {shape}")
        for n in shape:
            if n < 0:
                raise ValueError(f"shape: negative dimension in {shape}")
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.mask = _canonical_mask(shape, mask)
        self.fill = fill if self.mask is not None else 0

    @staticmethod
    def contiguous(shape, offset=0):
        """The C-contiguous view of ``shape`` starting at ``offset``."""
        offset = _index_int(offset, "offset")
        shape = _as_int_tuple(shape, "shape")
        for n in shape:
            if n < 0:
                raise ValueError(f"shape: negative dimension in {shape}")
        return _mk(shape, c_strides(shape), offset, None, 0)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return _prod(self.shape)

    @property
    def has_mask(self):
        return self.mask is not None

    @property
    def is_contiguous(self):
        """True when the valid elements are C-contiguous in memory and nothing is masked."""
        if self.mask is not None:
            return False
        if 0 in self.shape:  # no elements: any strides will do (as NumPy's flags say)
            return True
        acc = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n == 0:
                return True
            if n != 1 and s != acc:
                return False
            acc *= n
        return True

    def __eq__(self, other):
        if not isinstance(other, View):
            return NotImplemented
        o = <View>other
        return (self.shape == o.shape and self.offset == o.offset and self.mask == o.mask
                and self.fill == o.fill
                and all(n <= 1 or a == b for n, a, b in zip(self.shape, self.strides, o.strides)))

    def __hash__(self):
        return hash((self.shape, self.offset, self.mask))

    def __repr__(self):
        extra = "" if self.mask is None else f", mask={self.mask}, fill={self.fill!r}"
        return f"View(shape={self.shape}, strides={self.strides}, offset={self.offset}{extra})"

    # -- extent checks -------------------------------------------------------------------
    def valid_box(self):
        """The (lo, hi) index ranges of the valid elements, one per axis."""
        if self.mask is None:
            return tuple((0, n) for n in self.shape)
        return self.mask

    def extent(self):
        """(first, last) element index touched by the valid elements, or None if none are."""
        lo = hi = self.offset
        for (a, b), s in zip(self.valid_box(), self.strides):
            if b <= a:
                return None
            lo += min(a * s, (b - 1) * s)
            hi += max(a * s, (b - 1) * s)
        return lo, hi

    def check_within(self, Py_ssize_t buffer_size, name="view"):
        """Raise ValueError unless every valid element lies inside a buffer of ``buffer_size``."""
        ext = self.extent()
        if ext is not None and (ext[0] < 0 or ext[1] >= buffer_size):
            raise ValueError(
                f"{name}: shape {self.shape} with strides {self.strides} and offset {self.offset} "
                f"reaches elements {ext[0]}..{ext[1]}, outside the buffer of {buffer_size} elements")

    # -- movement ops ----------------------------------------------------------------------
    def index_basic(self, tuple index):
        """The view ``x[index]`` for an index tuple of ints, slices (any step), None and one
        Ellipsis, in one step; None when the view is masked or ``index`` holds anything else
        (arrays, bools, 0-d tensors: the caller's general path handles those).

        IndexError for too many indices, two ellipses or an int out of range (naming the axis).
        """
        if self.mask is not None:
            return None
        cdef Py_ssize_t nd = len(self.shape), used = 0, n_ell = 0, axis = 0, k
        cdef Py_ssize_t n, s, start, stop, step, m, off = self.offset
        for item in index:
            if item is None:
                continue
            if item is Ellipsis:
                n_ell += 1
            elif type(item) is slice or type(item) is int or (
                    isinstance(item, np.integer) and not isinstance(item, np.bool_)):
                used += 1
            else:
                return None
        if n_ell > 1:
            raise IndexError("index: an index can only have a single ellipsis ('...')")
        if used > nd:
            raise IndexError(f"index: too many indices for a tensor of {nd} dimensions "
                             f"({used} given)")
        shape, strides = [], []
        for item in index:
            if item is None:
                shape.append(1)
                strides.append(0)
            elif item is Ellipsis:
                for k in range(nd - used):
                    shape.append(self.shape[axis])
                    strides.append(self.strides[axis])
                    axis += 1
            elif type(item) is slice:
                n = self.shape[axis]
                s = self.strides[axis]
                # Python ints: a step may exceed Py_ssize_t (x[::2**64]) and must not wrap
                py_start, py_stop, py_step = item.indices(n)
                m = len(range(py_start, py_stop, py_step))
                if m:
                    off += <Py_ssize_t>py_start * s
                shape.append(m)
                # with one element or none the stride is never used: keep it in range
                strides.append(s * <Py_ssize_t>py_step if m > 1 else s)
                axis += 1
            else:
                i = int(item)
                n = self.shape[axis]
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
                off += (i + n if i < 0 else i) * self.strides[axis]
                axis += 1
        while axis < nd:
            shape.append(self.shape[axis])
            strides.append(self.strides[axis])
            axis += 1
        return _mk(tuple(shape), tuple(strides), off, None, 0)

    def reshape(self, new_shape):
        """Same elements in C order under ``new_shape``; None when strides cannot express it."""
        new_shape = _as_int_tuple(new_shape, "shape")
        if any(n < 0 for n in new_shape):
            raise ValueError(f"shape: negative dimension in {new_shape}")
        if _prod(new_shape) != self.size:
            raise ValueError(f"shape: cannot reshape a tensor of shape {self.shape} "
                             f"({self.size} elements) into shape {new_shape}")
        if new_shape == self.shape:
            return self
        if self.mask is not None:
            return None
        if self.size == 0:
            _check_total(new_shape)
            return _mk(new_shape, c_strides(new_shape), self.offset, None, 0)
        new_strides = _reshape_strides(self.shape, self.strides, new_shape)
        if new_strides is None:
            return None
        return _mk(new_shape, new_strides, self.offset, None, 0)

    def expand(self, new_shape):
        """Broadcast size-1 axes (stride 0) and prepend new axes to reach ``new_shape``."""
        new_shape = _as_int_tuple(new_shape, "shape")
        nd = len(self.shape)
        lead = len(new_shape) - nd
        if lead < 0:
            raise ValueError(f"shape: cannot expand shape {self.shape} to fewer dimensions "
                             f"{new_shape}")
        strides = [0] * lead
        mask = [(0, n) for n in new_shape[:lead]] if self.mask is not None else None
        for i in range(nd):
            old, new = self.shape[i], new_shape[lead + i]
            if new < 0:
                raise ValueError(f"shape: negative dimension in {new_shape}")
            if old == new:
                strides.append(self.strides[i])
                if mask is not None:
                    mask.append(self.mask[i])
            elif old == 1:
                strides.append(0)
                if mask is not None:
                    lo, hi = self.mask[i]
                    mask.append((0, new) if hi > lo else (0, 0))
            else:
                raise ValueError(f"shape: cannot expand axis {i} of size {old} (shape "
                                 f"{self.shape}) to size {new} (shape {new_shape}); only "
                                 f"size-1 axes expand")
        for n in new_shape[:lead]:
            if n < 0:
                raise ValueError(f"shape: negative dimension in {new_shape}")
        _check_total(new_shape)
        return _mk(new_shape, tuple(strides), self.offset, mask, self.fill)

    def permute(self, axes):
        """Reorder axes: result axis i is input axis ``axes[i]``."""
        axes = _as_int_tuple(axes, "axes")
        cdef Py_ssize_t nd = len(self.shape), i, a
        cdef list seen = [False] * nd
        cdef list norm = []
        ok = len(axes) == nd
        if ok:
            for i in range(nd):
                a = axes[i]
                if a < 0:
                    a += nd
                if a < 0 or a >= nd or seen[a]:
                    ok = False
                    break
                seen[a] = True
                norm.append(a)
        if not ok:
            raise ValueError(f"axes: {axes} is not a permutation of the {nd} axes of shape "
                             f"{self.shape}")
        mask = None if self.mask is None else [self.mask[a] for a in norm]
        return _mk(tuple([self.shape[a] for a in norm]), tuple([self.strides[a] for a in norm]),
                   self.offset, mask, self.fill)

    def shrink(self, limits):
        """Keep ``start <= i < stop`` along each axis; ``limits`` is one (start, stop) per axis."""
        nd = len(self.shape)
        limits = _pairs(limits, nd, "limits", self.shape)
        offset = self.offset
        shape, mask = [], []
        for i, ((start, stop), n, s) in enumerate(zip(limits, self.shape, self.strides)):
            if not 0 <= start <= stop <= n:
                raise ValueError(f"limits: ({start}, {stop}) for axis {i} must satisfy "
                                 f"0 <= start <= stop <= {n} (shape {self.shape})")
            shape.append(stop - start)
            offset += start * s
            if self.mask is not None:
                lo, hi = self.mask[i]
                lo, hi = max(lo - start, 0), min(hi - start, stop - start)
                mask.append((lo, hi) if lo < hi else (0, 0))
        return _mk(tuple(shape), self.strides, offset, mask if self.mask is not None else None,
                   self.fill)

    def flip(self, axes):
        """Reverse the given axes (negative strides)."""
        cdef Py_ssize_t nd = len(self.shape)
        flipped = set()
        for a in axes:
            if type(a) is int and 0 <= a < nd:
                flipped.add(a)
            else:
                flipped.add(normalize_axis(a, nd, "axis"))
        strides, mask = list(self.strides), None if self.mask is None else list(self.mask)
        offset = self.offset
        for i in flipped:
            n = self.shape[i]
            if n == 0:
                continue
            offset += (n - 1) * strides[i]
            strides[i] = -strides[i]
            if mask is not None:
                lo, hi = mask[i]
                mask[i] = (n - hi, n - lo) if hi > lo else (0, 0)
        return _mk(self.shape, tuple(strides), offset, mask, self.fill)

    def pad(self, config, fill):
        """Grow each axis by (before, after) positions that read as ``fill`` (a masked view).

        Returns None when this view is already masked with a different fill.
        """
        nd = len(self.shape)
        config = _pairs(config, nd, "pad_width", self.shape)
        for i, (b, a) in enumerate(config):
            if b < 0 or a < 0:
                raise ValueError(f"pad_width: negative width ({b}, {a}) for axis {i} "
                                 f"(shape {self.shape})")
        if all(b == 0 and a == 0 for b, a in config):
            return self
        if self.mask is not None and not _same_fill(self.fill, fill):
            return None
        box = self.valid_box()
        offset = self.offset
        shape, mask = [], []
        for (b, a), n, s, (lo, hi) in zip(config, self.shape, self.strides, box):
            shape.append(n + b + a)
            offset -= b * s
            mask.append((lo + b, hi + b) if hi > lo else (0, 0))
        _check_total(shape, "pad_width")
        # Every position of the padded view (padding included) must have an element index
        # that a signed 64-bit integer holds: its offset, and those that flip and shrink
        # derive from it, are machine integers (a huge stride times a wide pad is not).
        first = last = offset
        for n, s in zip(shape, self.strides):
            if n > 1:
                first += min(0, (n - 1) * s)
                last += max(0, (n - 1) * s)
        if first < _SSIZE_MIN or last > _SSIZE_MAX:
            raise ValueError(f"pad_width: padding shape {self.shape} (strides {self.strides}) by "
                             f"{config} places elements at indices {first}..{last}, beyond what "
                             f"a 64-bit index can address")
        return _mk(tuple(shape), self.strides, offset, mask, fill)

    @staticmethod
    def as_strided(shape, strides, offset, Py_ssize_t buffer_size):
        """A view of any strides over a buffer of ``buffer_size`` elements, bounds-checked.

        Checked with Python ints (no overflow for huge strides or offsets); the strides of
        axes of length <= 1 (and all strides of an empty view), which address nothing, are
        stored as 0."""
        shape = _as_int_tuple(shape, "shape")
        strides = _as_int_tuple(strides, "strides")
        try:
            offset = int(offset)
        except (TypeError, ValueError):
            raise TypeError(f"offset: expected an integer, got {offset!r}") from None
        if len(shape) != len(strides):
            raise ValueError(f"strides: {strides} must have one entry per axis of shape {shape}")
        if any(n < 0 for n in shape):
            raise ValueError(f"shape: negative dimension in {shape}")
        _check_total(shape)
        if offset < 0 or (offset >= buffer_size and _prod(shape) != 0):
            raise ValueError(f"offset: {offset} is outside the buffer of {buffer_size} elements")
        if _prod(shape) == 0:
            return View(shape, (0,) * len(shape), 0)
        strides = tuple(0 if n == 1 else s for n, s in zip(shape, strides))
        # Python ints: no overflow while checking the extent of huge strides.
        lo = hi = offset
        if _prod(shape) != 0:
            for n, s in zip(shape, strides):
                lo += min(0, (n - 1) * s)
                hi += max(0, (n - 1) * s)
            if lo < 0 or hi >= buffer_size:
                raise ValueError(
                    f"strides: shape {shape} with strides {strides} and offset {offset} would "
                    f"reach elements {lo}..{hi}, outside the buffer of {buffer_size} elements")
        return View(shape, strides, offset)


_SSIZE_MAX = 0x7FFFFFFFFFFFFFFF
_SSIZE_MIN = -_SSIZE_MAX - 1


def _check_total(shape, name="shape"):
    """ValueError when the nonzero sizes of ``shape`` multiply to more than a 64-bit size can
    count (NumPy's rule, zero sizes aside: it refuses (0, 2**62, 4) too): such a view could never
    be read, and its sizes would overflow the kernels."""
    n = 1
    for d in shape:
        if d:
            n *= d
    if n > 0x7FFFFFFFFFFFFFFF:
        raise ValueError(f"{name}: {tuple(shape)} has too many elements (more than 2**63 - 1)")


def _same_fill(a, b):
    if a is None or b is None:
        return a is b
    try:
        if a != a and b != b:  # both NaN
            return True
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _canonical_mask(shape, mask):
    if mask is None:
        return None
    mask = tuple((operator.index(lo), operator.index(hi)) for lo, hi in mask)
    if len(mask) != len(shape):
        raise ValueError(f"mask: {mask} must have one (lo, hi) pair per axis of shape {shape}")
    if all(lo == 0 and hi == n for (lo, hi), n in zip(mask, shape)):
        return None
    for (lo, hi), n in zip(mask, shape):
        if not (0 <= lo <= n and 0 <= hi <= n):
            raise ValueError(f"mask: {mask} out of range for shape {shape}")
    return mask


def _pairs(config, nd, name, shape):
    """One (int, int) pair per axis."""
    try:
        pairs = tuple((operator.index(a), operator.index(b)) for a, b in config)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected one (int, int) pair per axis, got {config!r}") from None
    if len(pairs) != nd:
        raise ValueError(f"{name}: {len(pairs)} pairs given for a tensor of shape {shape} "
                         f"({nd} axes)")
    return pairs


def _reshape_strides(old_shape, old_strides, new_shape):
    """Strides for a no-copy reshape (NumPy's algorithm), or None when a copy is needed."""
    old = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    new_nz = [n for n in new_shape if n != 1]
    new_strides_nz = []
    oi = ni = 0
    while oi < len(old) and ni < len(new_nz):
        op, np_ = old[oi][0], new_nz[ni]
        oj, nj = oi + 1, ni + 1
        while op != np_:
            if np_ < op:
                np_ *= new_nz[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        st = old[oj - 1][1]
        chunk = []
        for k in range(nj - 1, ni - 1, -1):
            chunk.append(st)
            st *= new_nz[k]
        new_strides_nz.extend(reversed(chunk))
        oi, ni = oj, nj
    it = iter(new_strides_nz)
    out = []
    for n in new_shape:
        out.append(0 if n == 1 else next(it))
    return tuple(out)


def materialize(Buffer buf, View view):
    """A new C-contiguous Buffer holding the elements of ``view`` over ``buf`` (fill included)."""
    n = view.size
    out = Buffer(n, buf.dtype, False)
    if n == 0:
        return out
    dst_strides = c_strides(view.shape)
    if view.mask is None:
        strided.copy_strided(buf, view.offset, view.shape, view.strides, out, 0, dst_strides)
        return out
    box = view.mask
    if any(hi <= lo for lo, hi in box):
        strided.fill(out, view.fill)
        return out
    _fill_outside(out, view.shape, dst_strides, box, view.fill)
    src_off = view.offset + sum(lo * s for (lo, _), s in zip(box, view.strides))
    dst_off = sum(lo * s for (lo, _), s in zip(box, dst_strides))
    strided.copy_strided(buf, src_off, [hi - lo for lo, hi in box], view.strides,
                         out, dst_off, dst_strides)
    return out


def _fill_outside(Buffer out, shape, strides, box, fill):
    """Write ``fill`` wherever the contiguous ``out`` lies outside ``box`` (one (lo, hi) per
    axis): for each axis d, the slabs before lo and after hi along d, restricted to the box on
    the axes before d.  Only the border is written, not the whole buffer."""
    cdef Py_ssize_t nd = len(shape), d, k
    one = Buffer(1, out.dtype, False)
    strided.fill(one, fill)
    zeros = (0,) * nd
    for d in range(nd):
        lo, hi = box[d]
        for a, b in ((0, lo), (hi, shape[d])):
            if b <= a:
                continue
            sub = [box[k][1] - box[k][0] for k in range(d)] + [b - a] + list(shape[d + 1:])
            off = a * strides[d]
            for k in range(d):
                off += box[k][0] * strides[k]
            strided.copy_strided(one, 0, sub, zeros, out, off, strides)


def copy_into(Buffer src, View src_view, Buffer dst, View dst_view):
    """Write the elements of ``src_view`` into the (unmasked) ``dst_view`` of ``dst``."""
    if dst_view.mask is not None:
        raise ValueError("dst: cannot write into a padded (masked) view")
    if src_view.shape != dst_view.shape:
        raise ValueError(f"src: shape {src_view.shape} differs from dst's {dst_view.shape}")
    if src_view.mask is not None:
        tmp = materialize(src, src_view)
        src, src_view = tmp, View.contiguous(src_view.shape)
    strided.copy_strided(src, src_view.offset, src_view.shape, src_view.strides,
                         dst, dst_view.offset, dst_view.strides)
