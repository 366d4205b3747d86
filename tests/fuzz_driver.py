"""Fuzz driver: throws random, mostly bad, arguments at every kernel, primitive and many front-end
functions of nx_rune, and checks each call against NumPy (or a small reference model).

Pass criterion, per call: the call either returns the reference's answer, or raises one of
``ACCEPTED`` with a non-empty message.  A crash (the process dies), a hang (a call running past
``--call-timeout`` seconds: faulthandler kills the process) or a wrong result is a failure.

One target (``threefry threads+signals``) stresses the threaded kernel instead: large draws
while a SIGALRM handler raises in the middle of them, while other threads draw, or while
``set_num_threads`` changes the count (every completed draw must give the reference values).

Run it in its own process, so that a segfault shows up as a failure instead of killing pytest::

    python -X faulthandler tests/fuzz_driver.py --calls 100000 --seed 1 --json report.json

Reproduce one call: ``--start I --calls 1 --verbose`` (call I draws from the generator seeded
with ``[seed, I]``, so every call is independent of the ones before it).  ``tests/test_fuzz.py``
runs this driver (a short run in the default suite, a long one under ``pytest -m fuzz``).

OverflowError is accepted: a Python int that does not fit in a C ``Py_ssize_t`` (a shape of
2**64, an offset of 10**30) is refused by Cython's argument conversion with
``OverflowError: Python int too large to convert to C ssize_t``, the same exception NumPy raises
for such sizes.  MemoryError is accepted for sizes that fit in 64 bits but not in memory.
"""
import argparse
import faulthandler
import functools
import json
import math
import os
import signal
import sys
import threading
import time
import traceback
import warnings
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

import nx_rune as nx  # noqa: E402
from nx_rune import primitives as P  # noqa: E402
from nx_rune._kernels import buffer as KB  # noqa: E402
from nx_rune._kernels import fold as KF  # noqa: E402
from nx_rune._kernels import gather as KG  # noqa: E402
from nx_rune._kernels import strided as KS  # noqa: E402
from nx_rune._kernels import threefry as KT  # noqa: E402
from nx_rune._kernels import view as KV  # noqa: E402

ACCEPTED = (TypeError, ValueError, IndexError, ZeroDivisionError, MemoryError, OverflowError)
UNKNOWN = object()          # a reference that cannot tell (the call may return or raise)
MAX_REF = 20000             # elements: larger results are checked by shape only

GOOD_DTYPES = [np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")]
BAD_DTYPES = [np.dtype(object), np.dtype("U3"), np.dtype("M8[s]"), np.dtype("m8[s]"),
              np.dtype(np.longdouble), np.dtype(np.clongdouble), np.dtype("V8"),
              np.dtype([("a", "i4"), ("b", "f4")])]
SWAPPED = [np.dtype(">f4"), np.dtype(">i8"), np.dtype(">c16"), np.dtype(">u2")]
HUGE_INTS = [2**31 - 1, 2**31, 2**32, 2**32 + 1, 2**62, 2**63 - 1, 2**63, 2**64, 10**30,
             -2**31, -2**63, -2**63 - 1, -10**30]
WEIRD = [None, 1.5, float("nan"), float("inf"), "3", b"x", [1], (), object(), True, 2j]


def _known(dt):
    """A dtype whose items the kernels handle (nx_rune's dtypes, any byte order)."""
    return f"{dt.kind}{dt.itemsize}" in {"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
                                         "f2", "f4", "f8", "c8", "c16"}


class BadReference(Exception):
    """The reference itself refuses the input (the call must raise too)."""


class Mismatch(AssertionError):
    pass


# ---------------------------------------------------------------------------------------------
# random inputs
# ---------------------------------------------------------------------------------------------

class Gen:
    def __init__(self, rng):
        self.r = rng

    def p(self, prob):
        return self.r.random() < prob

    def pick(self, seq):
        return seq[int(self.r.integers(len(seq)))]

    def small(self, lo=0, hi=4):
        return int(self.r.integers(lo, hi + 1))

    def int_like(self, lo=-3, hi=6, bad=0.15, weird=0.04):
        """Mostly a small int; sometimes huge (both signs) or not an int at all."""
        u = self.r.random()
        if u < weird:
            return self.pick(WEIRD)
        if u < weird + bad:
            return self.pick(HUGE_INTS)
        v = self.small(lo, hi)
        if self.p(0.1):
            return self.pick([np.int64, np.int32, np.uint8, np.intp])(max(v, 0)) \
                if v >= 0 else np.int64(v)
        return v

    def dtype(self, bad=0.05):
        u = self.r.random()
        if u < bad:
            return self.pick(BAD_DTYPES + SWAPPED)
        return self.pick(GOOD_DTYPES)

    def dtype_spec(self, bad=0.1):
        """What a user passes as ``dtype``: a dtype, its name, a scalar type, or junk."""
        u = self.r.random()
        if u < bad / 2:
            return self.pick(["float128x", None, 3, "object", np.dtype("U2"), str, "M8[s]"])
        dt = self.dtype(bad / 2)
        form = self.small(0, 2)
        return dt if form == 0 else (dt.name if dt.isbuiltin else dt) if form == 1 else dt.type

    def shape(self, max_ndim=4, max_dim=4, bad=0.0):
        nd = self.small(0, max_ndim)
        if bad and self.p(bad):
            dims = [self.int_like(-2, max_dim) for _ in range(nd)] or [self.int_like(-2, 3)]
            return tuple(dims) if self.p(0.8) else dims
        return tuple(self.small(0 if self.p(0.85) else 0, max_dim) for _ in range(nd))

    def values(self, shape, dtype):
        dt = np.dtype(dtype)
        if not dt.isnative:
            return self.values(shape, dt.newbyteorder("=")).astype(dt)
        n = math.prod(shape)
        if dt.kind == "b":
            return (self.r.random(n) < 0.5).reshape(shape)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if self.p(0.5):
                v = self.r.integers(-5, 6, n)
                return np.where(v < info.min, 0, v).astype(dt).reshape(shape)
            return self.r.integers(info.min, int(info.max) + 1, n, dtype=dt).reshape(shape)
        base = self.r.standard_normal(n) * self.pick([1.0, 1.0, 100.0, 1e-3])
        if dt.kind == "f" or dt.kind == "c":
            special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e38, -1e-45, 65504.0])
            mask = self.r.random(n) < 0.15
            base = np.where(mask, special[self.r.integers(0, len(special), n)], base)
        if dt.kind == "c":
            im = self.r.standard_normal(n)
            if self.p(0.2):
                im[self.r.random(n) < 0.2] = np.nan
            with np.errstate(all="ignore"):
                return (base + 1j * im).astype(dt).reshape(shape)
        with np.errstate(all="ignore"):
            return base.astype(dt).reshape(shape)

    def layout(self, a):
        """a with a random memory layout (same values unless 'broadcast')."""
        kind = self.pick(["c", "c", "f", "reversed", "strided", "broadcast", "unaligned",
                          "swapped", "readonly"])
        if a.ndim == 0 or a.size == 0:
            kind = "c" if kind in ("f", "reversed", "strided", "broadcast") else kind
        if kind == "f":
            return np.asfortranarray(a), kind
        if kind == "reversed":
            return np.flip(np.flip(a, -1).copy(), -1), kind
        if kind == "strided":
            big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
            big[..., ::2] = a
            return big[..., ::2], kind
        if kind == "broadcast":
            return np.broadcast_to(a[..., :1], a.shape), kind
        if kind == "unaligned" and a.dtype.itemsize > 1:
            raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
            u = raw[1:].view(a.dtype).reshape(a.shape)
            u[...] = a
            return u, kind
        if kind == "swapped" and a.dtype.itemsize > 1 and a.dtype.kind != "b":
            return a.astype(a.dtype.newbyteorder()), kind
        if kind == "readonly":
            b = a.copy()
            b.flags.writeable = False
            return b, kind
        return a, "c"

    def array(self, shape=None, dtype=None, layout=True, bad_dtype=0.0):
        if shape is None:
            shape = self.shape()
        if dtype is None:
            if bad_dtype and self.p(bad_dtype):
                bd = self.pick(BAD_DTYPES)
                if bd.kind == "O":
                    return np.array([1, "a", None][:1] * math.prod(shape), dtype=object).reshape(
                        shape) if math.prod(shape) else np.empty(shape, object)
                return np.zeros(shape, dtype=bd)
            dtype = self.dtype(0)
        a = self.values(shape, dtype)
        return self.layout(a)[0] if layout else a

    def tensor(self, shape=None, dtype=None):
        """(tensor, reference ndarray): a contiguous tensor or one of its views."""
        a = self.array(shape, dtype, layout=False)
        t = nx.asarray(a)
        kind = self.small(0, 6)
        if kind == 1 and a.ndim:
            t, a = nx.flip(t), np.flip(a)
        elif kind == 2 and a.ndim:
            t, a = t.T, a.T
        elif kind == 3 and a.ndim:
            t, a = t[..., ::2], a[..., ::2]
        elif kind == 4 and a.ndim:
            fill = a.dtype.type(self.pick([0, 1, True])) if a.dtype.kind != "f" else \
                a.dtype.type(self.pick([0.0, np.nan, -np.inf]))
            t, a = nx.pad(t, 1, constant_values=fill), np.pad(a, 1, constant_values=fill)
        elif kind == 5 and a.ndim:
            t = nx.broadcast_to(t[..., :1], a.shape)
            a = np.broadcast_to(a[..., :1], a.shape)
        return t, a


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------

def as_ndarray(x):
    if isinstance(x, nx.Tensor):
        return np.asarray(x)
    return np.asarray(x)


def same(got, ref, what, rtol=0.0, check_dtype=True):
    g = as_ndarray(got)
    r = np.asarray(ref)
    if g.shape != r.shape:
        raise Mismatch(f"{what}: shape {g.shape} != reference {r.shape}")
    if check_dtype and g.dtype.newbyteorder("=") != r.dtype.newbyteorder("="):
        raise Mismatch(f"{what}: dtype {g.dtype} != reference {r.dtype}")
    if g.size > MAX_REF:
        return
    if rtol:
        gc, rc = g.astype(np.complex128 if g.dtype.kind == "c" else np.float64), \
            r.astype(np.complex128 if r.dtype.kind == "c" else np.float64)
        ok = np.isclose(gc, rc, rtol=rtol, atol=rtol, equal_nan=True)
        if not ok.all():
            raise Mismatch(f"{what}: values differ at {np.argwhere(~ok)[:3].tolist()}: "
                           f"{gc[~ok][:3]} vs {rc[~ok][:3]}")
        return
    if g.dtype.kind in "fc":
        eq = (g == r) | ((g != g) & (r != r))
        if g.dtype.kind == "c":
            eq = eq | ((g.real == r.real) | np.isnan(g.real) & np.isnan(r.real)) & \
                ((g.imag == r.imag) | np.isnan(g.imag) & np.isnan(r.imag))
    else:
        eq = g == r
    if not np.all(eq):
        bad = np.argwhere(~np.asarray(eq))[:3].tolist()
        raise Mismatch(f"{what}: values differ at {bad}")


# ---------------------------------------------------------------------------------------------
# reference models
# ---------------------------------------------------------------------------------------------

def view_reference(flat, shape, strides, offset, mask=None, fill=0):
    """The elements a View reads from ``flat``; BadReference if a valid one is outside."""
    shape = tuple(int(n) for n in shape)
    strides = [int(v) for v in strides]     # Python ints: no overflow below
    offset = int(offset)
    n = math.prod(shape)
    if any(d < 0 for d in shape):
        raise BadReference("negative dimension")
    box = mask if mask is not None else tuple((0, d) for d in shape)
    if n == 0:
        try:
            return np.empty(shape, flat.dtype)
        except (ValueError, MemoryError):
            return UNKNOWN
    lo = hi = offset
    empty = any(b <= a for a, b in box)
    if not empty:
        for (a, b), s in zip(box, strides):
            lo += min(a * s, (b - 1) * s)
            hi += max(a * s, (b - 1) * s)
        if lo < 0 or hi >= flat.size:
            raise BadReference("outside the buffer")
    if n > MAX_REF:
        return UNKNOWN
    grid = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    valid = np.ones(grid.shape[1], bool)
    for d, (a, b) in enumerate(box):
        valid &= (grid[d] >= a) & (grid[d] < b)
    pos = np.full(grid.shape[1], offset, dtype=object)
    for d, s in enumerate(strides):
        pos = pos + grid[d].astype(object) * int(s)
    out = np.empty(grid.shape[1], flat.dtype)
    if fill is not None and (~valid).any():
        out[~valid] = np.asarray(fill).astype(flat.dtype)
    if valid.any():
        out[valid] = flat[pos[valid].astype(np.int64)]
    return out.reshape(shape)


ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def threefry_reference(k0, k1, x0, x1, rounds):
    k0, k1 = np.uint32(k0), np.uint32(k1)
    ks = [k0, k1, np.uint32(k0 ^ k1 ^ np.uint32(0x1BD11BDA))]
    y0 = (x0.astype(np.uint32) + ks[0]).astype(np.uint32)
    y1 = (x1.astype(np.uint32) + ks[1]).astype(np.uint32)
    for r in range(rounds):
        y0 = y0 + y1
        t = ROT[r % 8]
        y1 = ((y1 << np.uint32(t)) | (y1 >> np.uint32(32 - t))) ^ y0
        if r % 4 == 3:
            inj = r // 4 + 1
            y0 = y0 + ks[inj % 3]
            y1 = y1 + ks[(inj + 1) % 3] + np.uint32(inj)
    return y0, y1


def window_reference(x_shape, ks, st, dl, pd):
    """unfold by index arithmetic on Python ints (no padding allocated): cols, counts."""
    N, C = x_shape[:2]
    sizes = x_shape[2:]
    s = len(sizes)
    counts = []
    for d in range(s):
        span = dl[d] * (ks[d] - 1) + 1
        room = sizes[d] + 2 * pd[d]
        if span > room:
            raise BadReference("window does not fit")
        counts.append((room - span) // st[d] + 1)
    K, L = math.prod(ks), math.prod(counts)
    if N * C * K * L > MAX_REF or K > MAX_REF or L > MAX_REF:
        return UNKNOWN, counts
    tabs, valid = [], []
    for d in range(s):
        v = np.zeros((ks[d], counts[d]), dtype=bool)
        ti = np.zeros((ks[d], counts[d]), dtype=np.int64)
        for j in range(ks[d]):
            for o in range(counts[d]):
                e = o * st[d] + j * dl[d] - pd[d]      # Python ints: no overflow
                if 0 <= e < sizes[d]:
                    v[j, o], ti[j, o] = True, e
        shp = [1] * (2 * s)
        shp[d], shp[s + d] = ks[d], counts[d]
        tabs.append(ti.reshape(shp))
        valid.append(v.reshape(shp))
    V = functools.reduce(np.logical_and, valid)
    return (tabs, V, N, C, K, L), counts


def unfold_reference(x, ks, st, dl, pd):
    geo, counts = window_reference(x.shape, ks, st, dl, pd)
    if geo is UNKNOWN:
        return UNKNOWN
    tabs, V, N, C, K, L = geo
    if x.size == 0 or N * C * K * L == 0:
        return np.zeros((N, C * K, L), x.dtype)
    vals = x[(slice(None), slice(None)) + tuple(tabs)]
    out = np.zeros(vals.shape, x.dtype)
    Vb = np.broadcast_to(V, vals.shape)
    out[Vb] = vals[Vb]
    return out.reshape(N, C * K, L)


def fold_reference(cols, sizes, ks, st, dl, pd):
    if max(sizes) > 2**40:            # an image that cannot exist (unless it is empty)
        if cols.ndim == 3 and cols.shape[0] * cols.shape[1] == 0:
            return UNKNOWN
        raise BadReference("image too big")
    shape = (1, 1) + tuple(sizes)
    geo, counts = window_reference(shape, ks, st, dl, pd)
    if geo is UNKNOWN:
        return UNKNOWN
    tabs, V, _, _, K, L = geo
    if cols.ndim != 3 or cols.shape[1] % K or cols.shape[2] != L:
        raise BadReference("cols shape")
    N, C = cols.shape[0], cols.shape[1] // K
    dt = cols.dtype.newbyteorder("=")
    work = np.float32 if dt == np.float16 else dt
    if N * C * math.prod(sizes) > MAX_REF or max(sizes) > 2**40:
        if N * C * math.prod(sizes) * dt.itemsize > 2**40:
            raise BadReference("image too big")
        return UNKNOWN
    img = np.zeros((N, C) + tuple(sizes), dtype=work)
    if img.size == 0 or cols.size == 0:
        return img.astype(dt)
    src = cols.astype(work).reshape((N, C) + tuple(ks) + tuple(counts))
    src = np.where(np.broadcast_to(V, src.shape), src, 0).astype(work)
    idx = tuple(np.broadcast_to(t, V.shape) for t in tabs)
    with np.errstate(all="ignore"):
        for n in range(N):
            for c in range(C):
                np.add.at(img[n, c], idx, src[n, c])
    return img.astype(dt)


def scatter_reference(template, indices, updates, axis, mode):
    """scatter by a loop in C order over the indexed shape (BadReference where invalid)."""
    t = np.asarray(template)
    if not _known(t.dtype):
        raise BadReference("template dtype")
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise BadReference("indices dtype")
    if mode not in ("set", "add", "mul", "max", "min"):
        raise BadReference("mode")
    if t.dtype.kind == "c" and mode in ("max", "min"):
        raise BadReference("complex max")
    shape_out = t.shape
    if axis is None:
        if idx.ndim != 1:
            raise BadReference("axis None needs 1-D indices")
        t = t.reshape(-1)
        axis = 0
    if isinstance(axis, (bool, np.bool_)):
        return UNKNOWN        # the kernels take True as 1 (operator.index)
    if not isinstance(axis, (int, np.integer)):
        raise BadReference("axis type")
    if t.ndim != idx.ndim or not -t.ndim <= axis < t.ndim:
        raise BadReference("rank/axis")
    ax = int(axis) % t.ndim
    n = t.shape[ax]
    B = []
    for d in range(t.ndim):
        a, b = t.shape[d], idx.shape[d]
        if d == ax or a == 1:
            B.append(b)
        elif b == 1 or a == b:
            B.append(a)
        else:
            raise BadReference("broadcast")
    B = tuple(B)
    if math.prod(B) > 4000:
        return UNKNOWN
    if math.prod(B) and idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
        raise BadReference("index out of range")
    dt = t.dtype.newbyteorder("=")
    upd = np.asarray(updates)
    if type(updates) in (bool, int, float, complex):
        kinds = {bool: "b", int: "i", float: "f", complex: "c"}
        rank = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
        if rank[kinds[type(updates)]] > rank[dt.kind]:
            raise BadReference("scalar cast")
        try:
            upd = np.asarray(updates, dtype=dt)
        except (OverflowError, ValueError):
            return UNKNOWN
    else:
        if upd.dtype.kind not in "biufc" or not np.can_cast(upd.dtype, dt, "same_kind"):
            raise BadReference("updates cast")
        upd = upd.astype(dt)
    try:
        ub = np.broadcast_to(upd, B)
    except ValueError:
        raise BadReference("updates broadcast") from None
    work = np.float32 if dt == np.float16 and mode in ("add", "mul") else dt
    out = np.array(t, dtype=work, copy=True)
    ib = np.broadcast_to(idx, B)
    with np.errstate(all="ignore"):
        for p in np.ndindex(*B):
            k = int(ib[p])
            k = k + n if k < 0 else k
            q = tuple(k if d == ax else (p[d] if t.shape[d] != 1 else 0) for d in range(t.ndim))
            u = ub[p]
            if mode == "set":
                out[q] = u
            elif dt.kind == "b":
                out[q] = (out[q] or u) if mode in ("add", "max") else (out[q] and u)
            elif mode == "add":
                out[q] = out[q] + work.type(u) if hasattr(work, "type") else out[q] + u
            elif mode == "mul":
                out[q] = out[q] * u
            elif mode == "max":
                out[q] = np.maximum(out[q], u)
            else:
                out[q] = np.minimum(out[q], u)
    return out.astype(dt).reshape(shape_out)


# ---------------------------------------------------------------------------------------------
# targets: each returns (description, call, reference, compare)
#   reference() returns the expected value, UNKNOWN, or raises BadReference (the call must
#   raise too); compare(got, ref) raises Mismatch.
# ---------------------------------------------------------------------------------------------

TARGETS = {}


def target(name, weight=1):
    def deco(fn):
        TARGETS[name] = (fn, weight)
        return fn
    return deco


def _exact(what):
    return lambda got, ref: same(got, ref, what)


def _np_ref(fn):
    """A reference from NumPy: its exceptions mean the input is invalid."""
    def ref():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return fn()
            except (TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError,
                    MemoryError) as e:
                raise BadReference(str(e)) from None
    return ref


def _loose_np_ref(fn):
    """A reference from NumPy where nx may be stricter: NumPy's refusal says nothing."""
    def ref():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return fn()
            except Exception:
                return UNKNOWN
    return ref


# -- buffer ------------------------------------------------------------------------------------

@target("Buffer")
def t_buffer(g):
    size = g.int_like(-2, 64, bad=0.3)
    dtype = g.dtype_spec(0.2)
    zero = g.p(0.5)

    def call():
        b = KB.Buffer(size, dtype, zero)
        if b.size != int(size) or b.nbytes != int(size) * b.itemsize:
            raise Mismatch(f"Buffer size {b.size}, nbytes {b.nbytes}")
        if zero and size:
            arr = b.as_ndarray((size,), (1,), 0)
            if arr.view(np.uint8).any():
                raise Mismatch("zeroed Buffer is not zero")
        return b.size

    def ref():
        if not isinstance(size, (int, np.integer)) or size < 0:     # bool: Py_ssize_t 0/1
            raise BadReference("size")
        try:
            dt = KB.check_dtype(dtype)
        except TypeError:
            raise BadReference("dtype") from None
        if size * dt.itemsize > 2**40:
            raise BadReference("too big")
        return size
    return f"Buffer({size!r}, {dtype!r}, {zero})", call, ref, lambda got, r: None


@target("Buffer.as_ndarray", 2)
def t_as_ndarray(g):
    dt = g.dtype(0)
    n = g.small(0, 30)
    flat = g.values((n,), dt)
    buf = KB.buffer_from_ndarray(flat) if g.p(0.5) else KB.Buffer(n, dt)
    if not isinstance(buf.owner, np.ndarray) and n:
        buf.as_ndarray((n,), (1,), 0)[...] = flat
    nd = g.small(0, 3)
    shape = tuple(g.int_like(0, 4, bad=0.05) for _ in range(nd))
    strides = tuple(g.int_like(-4, 4, bad=0.05) for _ in range(nd))
    offset = g.int_like(-2, n + 2, bad=0.05)

    def call():
        return buf.as_ndarray(shape, strides, offset)

    def ref():
        try:
            sh = tuple(int(s) for s in shape)
            sd = tuple(int(s) for s in strides)
            off = int(offset)
        except (TypeError, ValueError, OverflowError):
            raise BadReference("conversion") from None
        if any(not isinstance(v, (int, np.integer)) or isinstance(v, bool)
               for v in shape + strides + (offset,)):
            return UNKNOWN
        return view_reference(flat, sh, sd, off)
    return (f"Buffer({n}, {dt}).as_ndarray({shape}, {strides}, {offset})", call, ref,
            _exact("as_ndarray"))


@target("buffer_from_ndarray")
def t_from_ndarray(g):
    a = g.array(bad_dtype=0.2)
    obj = a if g.p(0.9) else g.pick([[1, 2], 3, None, memoryview(b"ab")])

    def call():
        b = KB.buffer_from_ndarray(obj)
        return b.as_ndarray(obj.shape, KV.c_strides(obj.shape), 0)

    def ref():
        if not isinstance(obj, np.ndarray) or not obj.flags.c_contiguous:
            raise BadReference("not a C-contiguous ndarray")
        try:
            KB.check_dtype(obj.dtype)
        except TypeError:
            raise BadReference("dtype") from None
        return obj.astype(obj.dtype.newbyteorder("="))
    return f"buffer_from_ndarray({type(obj).__name__})", call, ref, _exact("from_ndarray")


# -- views and the strided copy -------------------------------------------------------------

def random_view(g, n, allow_bad=True):
    """A View over a buffer of n elements: in bounds mostly, out of bounds sometimes."""
    nd = g.small(0, 4)
    shape = tuple(g.small(0, 4) for _ in range(nd))
    strides = tuple(g.small(-4, 4) for _ in range(nd))
    if allow_bad and g.p(0.15):
        strides = tuple(g.int_like(-5, 5, bad=0.3, weird=0) for _ in range(nd))
    lo = sum(min(0, (d - 1) * int(s)) for d, s in zip(shape, strides) if d)
    offset = -lo + (g.small(0, max(n - 1, 0)) if n else 0)
    if allow_bad and g.p(0.2):
        offset = g.int_like(-4, n + 4, bad=0.3, weird=0)
    mask, fill = None, 0
    if g.p(0.3) and nd:
        mask = []
        for d in shape:
            a = g.small(0, d)
            mask.append((a, g.small(a, d)))
        if allow_bad and g.p(0.1):
            mask[0] = (g.small(-2, 6), g.small(-2, 6))
        fill = g.pick([0, 1, -1.5, float("nan"), True])
    return shape, strides, offset, mask, fill


@target("View+materialize", 3)
def t_materialize(g):
    dt = g.dtype(0)
    n = g.small(0, 40)
    flat = g.values((n,), dt)
    buf = KB.buffer_from_ndarray(flat)
    shape, strides, offset, mask, fill = random_view(g, n)

    def call():
        v = KV.View(shape, strides, offset, mask, fill)
        out = KV.materialize(buf, v)
        return out.as_ndarray(v.shape, KV.c_strides(v.shape), 0)

    def ref():
        if mask is not None:
            for (a, b), d in zip(mask, shape):
                if not (0 <= a <= d and 0 <= b <= d):
                    raise BadReference("mask")
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            canon = None if mask is None or all(
                a == 0 and b == d for (a, b), d in zip(mask, shape)) else mask
            try:
                np.asarray(fill).astype(dt)
            except (TypeError, ValueError, OverflowError):
                if canon is not None:
                    raise BadReference("fill") from None
            return view_reference(flat, shape, strides, offset, canon,
                                  fill if canon is not None else 0)
    return (f"materialize({n} x {dt}, View({shape}, {strides}, {offset}, {mask}, {fill!r}))",
            call, ref, _exact("materialize"))


@target("copy_strided", 3)
def t_copy_strided(g):
    dt = g.dtype(0)
    n, m = g.small(0, 40), g.small(0, 40)
    src_flat = g.values((n,), dt)
    dst_flat = g.values((m,), dt if g.p(0.9) else g.dtype(0))
    src, dst = KB.buffer_from_ndarray(src_flat), KB.buffer_from_ndarray(dst_flat.copy())
    shape, ss, so, _, _ = random_view(g, n)
    _, ds, do, _, _ = random_view(g, m)
    ds = tuple(ds[:len(shape)]) + tuple(g.small(-3, 3) for _ in range(len(shape) - len(ds)))
    if g.p(0.05):
        ds = ds + (1,)

    def call():
        KS.copy_strided(src, so, shape, ss, dst, do, ds)
        return dst.as_ndarray((m,), (1,), 0).copy()

    def ref():
        if dst_flat.dtype.itemsize != src_flat.dtype.itemsize:
            raise BadReference("item size")
        if len(ds) != len(shape):
            raise BadReference("rank")
        vals = view_reference(src_flat, shape, ss, so)
        if math.prod(shape) == 0:
            return dst_flat
        # the destination positions, checked the same way
        view_reference(np.zeros(m, np.int8), shape, ds, do)
        if vals is UNKNOWN:
            return UNKNOWN
        grid = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), int)
        pos = do + sum(grid[d].astype(object) * int(s) for d, s in enumerate(ds)) \
            if shape else np.array([do], dtype=object)
        out = dst_flat.copy()
        out.view(np.uint8).reshape(m, -1)[np.asarray(pos, dtype=np.int64)] = \
            vals.reshape(-1).view(np.uint8).reshape(-1, dt.itemsize)
        return out
    return (f"copy_strided({n}->{m} {dt}, shape {shape}, src {ss}@{so}, dst {ds}@{do})", call,
            ref, lambda got, r: same(np.asarray(got).view(np.uint8), np.asarray(r).view(np.uint8),
                                     "copy_strided bits"))


@target("strided.fill")
def t_fill(g):
    dt = g.dtype(0)
    n = g.small(0, 20)
    buf = KB.Buffer(n, dt)
    value = g.pick([0, 1, -1, 2**70, -2**70, 1.5, float("nan"), float("inf"), 1e300, True,
                    3 + 4j, "x", None, [1, 2], np.int64(7), np.float16(2.5)])

    def call():
        KS.fill(buf, value)
        return buf.as_ndarray((n,), (1,), 0)

    def ref():
        if n == 0:
            return np.empty(0, dt)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                v = np.asarray(value).astype(dt)
            except Exception:
                raise BadReference("value") from None
            if v.size != 1:
                raise BadReference("not a scalar")
            return np.full(n, v.reshape(()), dt)
    return f"fill({n} x {dt}, {value!r})", call, ref, _exact("fill")


VIEW_METHODS = [m for m in ("reshape", "expand", "permute", "shrink", "flip", "pad", "as_strided",
                            "check_within", "index_basic") if hasattr(KV.View, m)]


@target("View methods", 4)
def t_view_methods(g):
    dt = g.dtype(0)
    a = g.values(g.shape(), dt)
    flat = a.reshape(-1)
    buf = KB.buffer_from_ndarray(np.ascontiguousarray(flat))
    base = KV.View.contiguous(a.shape)
    # start from a valid derived view sometimes (flipped / transposed)
    ref_arr = a
    if a.ndim and g.p(0.3):
        base = base.flip(range(a.ndim))
        ref_arr = np.flip(a)
    elif a.ndim > 1 and g.p(0.3):
        base = base.permute(tuple(reversed(range(a.ndim))))
        ref_arr = a.T
    meth = g.pick(VIEW_METHODS)
    nd = a.ndim
    if meth == "reshape":
        arg = g.shape(bad=0.2) if g.p(0.5) else tuple(reversed(a.shape))
        args = (arg,)
    elif meth == "expand":
        arg = tuple(g.small(0, 3) if d == 1 else d for d in a.shape)
        if g.p(0.3):
            arg = (g.int_like(0, 3),) + arg
        if g.p(0.2):
            arg = g.shape(bad=0.3)
        args = (arg,)
    elif meth == "permute":
        perm = list(g.r.permutation(nd))
        if g.p(0.3):
            perm = [g.int_like(-nd - 1, nd) for _ in range(max(nd + g.small(-1, 1), 0))]
        args = (perm,)
    elif meth == "shrink":
        lim = []
        for d in a.shape:
            lo = g.small(0, d)
            lim.append((lo, g.small(lo, d)))
        if g.p(0.3) and lim:
            lim[g.small(0, nd - 1)] = (g.int_like(-2, 6), g.int_like(-2, 6))
        if g.p(0.1):
            lim = lim[:-1]
        args = (lim,)
    elif meth == "flip":
        axes = [g.int_like(-nd - 1, nd, bad=0.05) for _ in range(g.small(0, nd + 1))]
        args = (axes,)
    elif meth == "pad":
        cfg = [(g.small(0, 2), g.small(0, 2)) for _ in range(nd)]
        if g.p(0.3) and cfg:
            cfg[0] = (g.int_like(-2, 3), g.int_like(-2, 3))
        fill = g.pick([0, 1.5, float("nan"), True, -3])
        args = (cfg, fill)
    elif meth == "as_strided":
        shape, strides, offset, _, _ = random_view(g, a.size)
        args = (shape, strides, offset, a.size)
    elif meth == "check_within":
        args = (g.int_like(0, a.size + 2),)
    else:
        items = []
        for _ in range(g.small(0, nd + 2)):
            k = g.small(0, 4)
            items.append(None if k == 0 else Ellipsis if k == 1 else
                         slice(g.int_like(-5, 5), g.int_like(-5, 5), g.pick([None, 1, 2, -1, -3]))
                         if k == 2 else g.int_like(-5, 5))
        args = (tuple(items),)

    def call():
        if meth == "as_strided":
            v = KV.View.as_strided(*args)
        else:
            v = getattr(base, meth)(*args)
        if meth == "check_within":
            return "checked"
        if v is None:
            return None
        if meth == "as_strided":
            out = KV.materialize(buf, v)
        else:
            out = KV.materialize(buf, v)
        return out.as_ndarray(v.shape, KV.c_strides(v.shape), 0)

    def ref():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _view_method_ref(meth, args, a, ref_arr, flat, base)

    def compare(got, r):
        if got is None:          # "cannot express as one view": allowed for reshape / pad
            if meth not in ("reshape", "pad"):
                raise Mismatch(f"{meth} returned None")
            return
        if meth == "check_within":
            return
        same(got, r, f"View.{meth}")
    return f"View{a.shape}[{dt}].{meth}{args!r}"[:300], call, ref, compare


def _ints(seq):
    """Each entry as operator.index sees it (bools are ints), else BadReference."""
    out = []
    for v in seq:
        if not isinstance(v, (int, np.integer, np.bool_)):
            raise BadReference("not an int")
        out.append(int(v))
    return out


def _view_method_ref(meth, args, a, ref_arr, flat, base):
    nd = ref_arr.ndim
    if meth == "reshape":
        shape = _ints(args[0]) if not isinstance(args[0], (int, np.integer)) else None
        if shape is None or any(d < 0 for d in shape) or math.prod(shape) != ref_arr.size:
            raise BadReference("reshape")
        return _np_ref(lambda: ref_arr.reshape(shape))()
    if meth == "expand":
        shape = _ints(args[0])
        if len(shape) < nd or any(d < 0 for d in shape):
            raise BadReference("expand")
        for old, new in zip(ref_arr.shape, shape[len(shape) - nd:]):
            if old != new and old != 1:
                raise BadReference("expand")
        if math.prod(shape) > MAX_REF or max(shape, default=0) > 2**40:
            return UNKNOWN
        return np.broadcast_to(ref_arr, shape)
    if meth == "permute":
        perm = _ints(args[0])
        if sorted(p + nd if p < 0 else p for p in perm) != list(range(nd)):
            raise BadReference("permute")
        return np.transpose(ref_arr, [p % nd if nd else p for p in perm])
    if meth == "shrink":
        lim = [tuple(_ints(p)) for p in args[0]]
        if len(lim) != nd or any(len(p) != 2 for p in lim):
            raise BadReference("shrink")
        for (lo, hi), d in zip(lim, ref_arr.shape):
            if not 0 <= lo <= hi <= d:
                raise BadReference("shrink")
        return ref_arr[tuple(slice(lo, hi) for lo, hi in lim)]
    if meth == "flip":
        axes = _ints(args[0])
        for ax in axes:
            if not -nd <= ax < nd:
                raise BadReference("flip axis")
        return np.flip(ref_arr, tuple(sorted({ax % nd for ax in axes}))) if axes else ref_arr
    if meth == "pad":
        cfg = [tuple(_ints(p)) for p in args[0]]
        if len(cfg) != nd or any(b < 0 or c < 0 for b, c in cfg):
            raise BadReference("pad")
        if math.prod(d + b + c for d, (b, c) in zip(ref_arr.shape, cfg)) > MAX_REF:
            return UNKNOWN
        try:
            fill = np.asarray(args[1]).astype(ref_arr.dtype)
        except (TypeError, ValueError, OverflowError):
            raise BadReference("fill") from None
        if not nd:
            return ref_arr
        try:
            return np.pad(ref_arr, cfg, constant_values=fill)
        except (ValueError, TypeError, MemoryError, OverflowError):
            if math.prod(d + b + c for d, (b, c) in zip(ref_arr.shape, cfg)) == 0:
                return UNKNOWN      # an empty result NumPy refuses to shape (huge widths)
            raise BadReference("NumPy refuses") from None
    if meth == "as_strided":
        shape, strides, offset, size = args
        shape, strides = _ints(shape), _ints(strides)
        offset = _ints([offset])[0]
        if len(shape) != len(strides) or any(d < 0 for d in shape) or offset < 0:
            raise BadReference("as_strided")
        if math.prod(shape) and offset >= size:
            raise BadReference("offset")
        return view_reference(flat, shape, strides, offset)
    if meth == "check_within":
        size = _ints(args)[0]
        ext = base.extent()
        if ext is not None and (ext[0] < 0 or ext[1] >= size):
            raise BadReference("outside")
        return "checked"
    # index_basic: NumPy's basic indexing (None from the kernel means "not handled here")
    index = args[0]
    for it in index:
        if it is not None and it is not Ellipsis and not isinstance(it, (slice, int, np.integer)):
            return UNKNOWN
        if isinstance(it, slice) and any(
                v is not None and not isinstance(v, (int, np.integer)) for v in
                (it.start, it.stop, it.step)):
            return UNKNOWN
        if isinstance(it, bool):
            return UNKNOWN
    try:
        return np.asarray(ref_arr[index])
    except (IndexError, OverflowError, TypeError, ValueError) as e:
        raise BadReference(str(e)) from None


# -- gather / scatter ---------------------------------------------------------------------------

def _indices_for(g, shape, axis):
    """Index array of shape's rank, sized to broadcast; values in range mostly."""
    nd = len(shape)
    ax = axis % nd if isinstance(axis, int) and nd and not isinstance(axis, bool) \
        and -nd <= axis < nd else 0
    ishape = []
    for d, m in enumerate(shape):
        if d == ax:
            ishape.append(g.small(0, 4))
        elif g.p(0.1):
            ishape.append(g.small(0, 4))          # maybe not broadcastable
        else:
            ishape.append(g.pick([m, 1]) if m != 1 else g.small(1, 3))
    if g.p(0.08):
        ishape = ishape + [2]                     # wrong rank
    n = shape[ax] if nd else 1
    u = g.r.random()
    if u < 0.7:
        vals = g.r.integers(-n, max(n, 1), size=ishape) if n else np.zeros(ishape, np.int64)
    elif u < 0.9:
        vals = g.r.integers(-n - 3, n + 3, size=ishape)
    else:
        vals = np.full(ishape, g.pick([2**31 - 1, -2**31, 2**40, -2**62, 2**63 - 1, -2**63]))
    idt = g.pick(["int32", "int64", "int64", "int8", "uint8", "int16", "uint32", "uint64",
                  "float64", "bool", ">i4", ">i8"])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if idt == "uint64" and g.p(0.3):
            idx = np.full(ishape, 2**64 - 1 - g.small(0, 3), dtype=np.uint64)
        else:
            idx = vals.astype(idt)
    if g.p(0.3):
        idx = g.layout(idx)[0]
    return idx


@target("gather", 4)
def t_gather(g):
    data = g.array(shape=g.shape(max_ndim=3), bad_dtype=0.05)
    axis = g.pick([0, 1, -1, 2, None, g.int_like(-4, 4), 1.0, True]) if data.ndim else \
        g.pick([0, None])
    idx = _indices_for(g, data.shape, axis if axis is not None else 0)
    if axis is None:
        idx = idx.reshape(-1)[:5] if g.p(0.8) else idx

    def ref():
        if not _known(data.dtype) or idx.dtype.kind not in "iu":
            raise BadReference("dtype")
        if axis is not None and not isinstance(axis, (int, np.integer)):
            raise BadReference("axis")
        if isinstance(axis, bool):
            return UNKNOWN          # the kernel takes True as 1, as operator.index does
        d = data.reshape(-1) if axis is None else data
        if axis is None and idx.ndim != 1:
            raise BadReference("axis None")
        if d.ndim != idx.ndim:
            raise BadReference("rank")
        if not -d.ndim <= (axis or 0) < d.ndim:
            raise BadReference("axis")
        if idx.size and idx.dtype == np.uint64 and int(idx.max()) >= 2**63:
            raise BadReference("uint64 index")
        return _np_ref(lambda: np.take_along_axis(d, idx.astype(np.int64), 0 if axis is None
                                                  else axis))()
    return (f"gather({data.dtype}{data.shape}, {idx.dtype}{idx.shape}, axis={axis!r})",
            lambda: KG.gather(data, idx, axis), ref, _exact("gather"))


@target("scatter", 4)
def t_scatter(g):
    tmpl = g.array(shape=g.shape(max_ndim=3), bad_dtype=0.05)
    axis = g.pick([0, 1, -1, None, g.int_like(-4, 4), 1.0]) if tmpl.ndim else g.pick([0, None])
    idx = _indices_for(g, tmpl.shape, axis if axis is not None else 0)
    if axis is None:
        idx = idx.reshape(-1)[:5] if g.p(0.8) else idx
    mode = g.pick(["set", "add", "mul", "max", "min", "set", "add", "bogus", None, 3])
    # updates: an array of the indexed shape (or broadcastable, or not), or a scalar
    u = g.r.random()
    if u < 0.2:
        upd = g.pick([0, 1, -1, 2.5, True, 1j, float("nan"), 2**70])
    else:
        B = idx.shape
        if tmpl.ndim == idx.ndim:
            B = tuple(b if (d == (axis if isinstance(axis, int) and not isinstance(axis, bool)
                                  else 0) % max(tmpl.ndim, 1) or a == 1) else a
                      for d, (a, b) in enumerate(zip(tmpl.shape, idx.shape)))
        if g.p(0.2):
            B = tuple(1 if g.p(0.5) else b for b in B)
        ud = tmpl.dtype if tmpl.dtype.kind in "biufc" and g.p(0.8) else g.dtype(0.05)
        upd = g.array(shape=B, dtype=ud) if np.dtype(ud).kind in "biufc" else np.zeros(B, ud)

    def call():
        return KG.scatter(tmpl, idx, upd, axis, mode)

    def ref():
        if isinstance(axis, float):
            raise BadReference("axis")
        r = scatter_reference(tmpl, idx, upd, axis, mode)
        return r

    def compare(got, r):
        if mode == "mul" and tmpl.dtype.kind == "c":
            # C's complex product (C99 Annex G: inf * nan can give an inf) vs NumPy's plain
            # formula: compare where both are finite
            g_, r_ = np.asarray(got), np.asarray(r)
            fin = np.isfinite(g_) & np.isfinite(r_) if g_.shape == r_.shape else True
            same(np.where(fin, g_, 0), np.where(fin, r_, 0), "scatter mul complex", rtol=1e-4)
        elif mode in ("add", "mul") and tmpl.dtype == np.float16:
            same(got, r, "scatter float16", rtol=2e-3)
        else:
            same(got, r, f"scatter {mode}")
    return (f"scatter({tmpl.dtype}{tmpl.shape}, {idx.dtype}{idx.shape}, "
            f"{type(upd).__name__}{np.shape(upd)}, axis={axis!r}, mode={mode!r})", call, ref,
            compare)


# -- fold / unfold ------------------------------------------------------------------------------

def _window_args(g, s):
    def one(lo, hi):
        return g.int_like(lo, hi, bad=0.1, weird=0.03)

    def param(lo, hi):
        if g.p(0.7):
            return one(lo, hi)
        return tuple(one(lo, hi) for _ in range(s + (g.small(-1, 1) if g.p(0.1) else 0)))
    return param(1, 3), param(1, 3), param(1, 2), param(0, 2)


def _expand_param(v, s, minimum):
    if isinstance(v, (int, np.integer)):      # bool included: the kernels use operator.index
        vals = (int(v),) * s
    elif isinstance(v, (tuple, list, bytes)):   # bytes: a sequence of ints to the kernels
        vals = tuple(_ints(v))
    else:
        raise BadReference("type")
    if len(vals) != s or any(x < minimum for x in vals):
        raise BadReference("range")
    return vals


@target("unfold", 3)
def t_unfold(g):
    s = g.pick([1, 1, 2, 2, 3, 0])
    shape = (g.small(0, 2), g.small(0, 3)) + tuple(g.small(0, 5) for _ in range(s))
    x = g.array(shape=shape, bad_dtype=0.03)
    ks, st, dl, pd = _window_args(g, s)

    def ref():
        if not _known(x.dtype) or x.ndim < 3:
            raise BadReference("x")
        p = (_expand_param(ks, s, 1), _expand_param(st, s, 1), _expand_param(dl, s, 1),
             _expand_param(pd, s, 0))
        return unfold_reference(x.astype(x.dtype.newbyteorder("=")), *p)
    return (f"unfold({x.dtype}{x.shape}, k={ks!r}, s={st!r}, d={dl!r}, p={pd!r})",
            lambda: KF.unfold(x, ks, st, dl, pd), ref, _exact("unfold"))


@target("fold", 3)
def t_fold(g):
    s = g.pick([1, 1, 2, 2, 3])
    sizes = tuple(g.small(1, 5) for _ in range(s))
    if g.p(0.1):
        sizes = tuple(g.int_like(-1, 5) for _ in range(s + g.small(-1, 1)))
    ks, st, dl, pd = _window_args(g, s)
    # cols of the right shape mostly
    try:
        p = (_expand_param(ks, s, 1), _expand_param(st, s, 1), _expand_param(dl, s, 1),
             _expand_param(pd, s, 0))
        counts = [(n + 2 * pp - d * (k - 1) - 1) // t + 1 for n, k, t, d, pp in
                  zip(sizes, *p)]
        K, L = math.prod(p[0]), math.prod(counts)
    except Exception:
        K, L = 1, 1
    if not (isinstance(K, int) and isinstance(L, int) and 0 < K <= 64 and 0 <= L <= 64):
        K, L = 1, g.small(0, 4)
    C = g.small(0, 2)
    cshape = (g.small(0, 2), C * K + (1 if g.p(0.05) else 0), L + (1 if g.p(0.05) else 0))
    cols = g.array(shape=cshape, bad_dtype=0.03)

    def ref():
        if not _known(cols.dtype) or cols.dtype.kind == "b":
            raise BadReference("dtype")
        sz = tuple(_ints(sizes))
        if not sz or any(v < 1 for v in sz):
            raise BadReference("sizes")
        q = (_expand_param(ks, len(sz), 1), _expand_param(st, len(sz), 1),
             _expand_param(dl, len(sz), 1), _expand_param(pd, len(sz), 0))
        return fold_reference(cols, sz, *q)

    def compare(got, r):
        same(got, r, "fold", rtol=2e-3 if cols.dtype == np.float16 else 0.0)
    return (f"fold({cols.dtype}{cols.shape}, {sizes!r}, k={ks!r}, s={st!r}, d={dl!r}, p={pd!r})",
            lambda: KF.fold(cols, sizes, ks, st, dl, pd), ref, compare)


# -- threefry --------------------------------------------------------------------------------------

def _word(g):
    return g.pick([0, 1, 0xFFFFFFFF, 0x12345678, g.small(0, 100)] + [g.int_like(0, 9)])


@target("threefry", 3)
def t_threefry(g):
    fn = g.pick(["block", "2x32", "bits32", "bits64", "pairs"])
    rounds = g.pick([20, 20, 20, 13, 0, 1, 5, 8, -1, 2**31, 1.5, True])
    k0, k1 = _word(g), _word(g)
    n = g.pick([0, 1, 2, 3, 7, 1000, -1, 2**62, 2**63 - 1, 2**64, 1.5, None])
    start = g.pick([0, 1, 2**32 - 3, 2**32, 2**64 - 2, 2**64 - 1, 2**64, -1])
    shape = g.shape(max_ndim=3)

    def rounds_ok():
        if isinstance(rounds, bool) or not isinstance(rounds, int) or not 0 <= rounds < 2**31:
            raise BadReference("rounds")

    def words_ok():
        for w in (k0, k1):
            if isinstance(w, bool) or not isinstance(w, (int, np.integer)) \
                    or not 0 <= w < 2**32:
                raise BadReference("word")

    if fn == "block":
        x0 = g.array(shape=shape, dtype=np.uint32 if g.p(0.9) else g.dtype(0))
        x1 = g.array(shape=shape if g.p(0.9) else g.shape(), dtype=np.uint32)

        def ref():
            words_ok()
            rounds_ok()
            if x0.dtype != np.uint32 or x1.dtype != np.uint32 or x0.shape != x1.shape:
                raise BadReference("x")
            return threefry_reference(k0, k1, x0, x1, rounds)
        return (f"threefry2x32_block({k0}, {k1}, {x0.dtype}{x0.shape}, r={rounds!r})",
                lambda: KT.threefry2x32_block(k0, k1, x0, x1, rounds), ref,
                lambda got, r: (same(got[0], r[0], "y0"), same(got[1], r[1], "y1")))
    if fn == "2x32":
        key = g.array(shape=(2,) if g.p(0.9) else g.shape(), dtype=np.uint32 if g.p(0.9)
                      else g.dtype(0))
        count = g.array(shape=shape, dtype=np.uint32 if g.p(0.9) else g.dtype(0))

        def ref():
            rounds_ok()
            if key.dtype != np.uint32 or key.shape != (2,) or count.dtype != np.uint32:
                raise BadReference("key/count")
            flat = count.reshape(-1).astype(np.uint32)
            odd = flat.size % 2
            if odd:
                flat = np.concatenate([flat, np.zeros(1, np.uint32)])
            h = flat.size // 2
            y0, y1 = threefry_reference(int(key[0]), int(key[1]), flat[:h], flat[h:], rounds)
            out = np.concatenate([y0, y1])
            return out[:out.size - odd].reshape(count.shape)
        return (f"threefry_2x32({key.dtype}{key.shape}, {count.dtype}{count.shape}, "
                f"r={rounds!r})", lambda: KT.threefry_2x32(key, count, rounds), ref,
                _exact("threefry_2x32"))
    call = {"bits32": KT.iota_bits32, "bits64": KT.iota_bits64, "pairs": KT.iota_pairs}[fn]

    def ref():
        words_ok()
        rounds_ok()
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise BadReference("n")
        if start + n > 2**64 or start < 0:
            raise BadReference("start")
        if n > 4096:
            if n > 2**40:
                raise BadReference("too big")
            return UNKNOWN
        i = np.arange(n, dtype=object) + start
        hi = np.array([int(v) >> 32 for v in i], dtype=np.uint32)
        lo = np.array([int(v) & 0xFFFFFFFF for v in i], dtype=np.uint32)
        y0, y1 = threefry_reference(k0, k1, hi, lo, rounds)
        if fn == "bits32":
            return y0 ^ y1
        if fn == "bits64":
            return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
        return np.stack([y0, y1], axis=1).reshape(n, 2)
    return (f"{fn}({k0}, {k1}, n={n!r}, start={start}, r={rounds!r})",
            lambda: call(k0, k1, n, start, rounds), ref, _exact(fn))


# --- wp-kernels: the fused sampler kernels (threefry.sample_f32 / transform_f32 / uniform_f64
# / erfinv_f64) under hostile arguments: bad ops, non-finite or non-numeric parameters, bad
# arrays.  Exact references for the unit and uniform transforms; for the others the values'
# shape, dtype, finiteness where it must hold, and the hard list's form.
_SAMPLER_OPS = ["unit", "uniform", "normal", "truncated_normal", "gumbel"]


def _param(g):
    return g.pick([0.0, 1.0, -2.0, 0.5, 1e-30, 3e38, -0.0, float("inf"), float("-inf"),
                   float("nan"), 2, np.float32(0.25), "1", None, True])


def _sampler_values_ok(op, n):
    def check(got, ref):
        out, hard = got
        if not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.shape != (n,):
            raise Mismatch(f"out: {type(out).__name__} {getattr(out, 'shape', '')}")
        if hard is not None and (hard.dtype != np.int64 or hard.ndim != 1
                                 or np.any(np.diff(hard) <= 0) or np.any(hard < 0)
                                 or np.any(hard >= max(n, 1))):
            raise Mismatch(f"hard list malformed: {hard[:5]}")
        if ref is not UNKNOWN:
            same(out, ref, f"sample_f32 {op}")
    return check


@target("fused samplers", 2)
def t_fused_samplers(g):
    fn = g.pick(["sample", "sample", "transform", "uniform64", "erfinv64"])
    k0, k1 = _word(g), _word(g)
    n = g.pick([0, 1, 2, 5, 1023, 1025, 3000, -1, 2**62, 1.5, None])
    op = g.pick(_SAMPLER_OPS + ["poisson", 3, None])
    lo, span, clip_lo, clip_hi = _param(g), _param(g), _param(g), _param(g)

    def real(x):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.floating)):
            raise BadReference("param")
        return float(x)

    def common():
        for w in (k0, k1):
            if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 0 <= w < 2**32:
                raise BadReference("word")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise BadReference("n")
        if n > 2**40:
            raise BadReference("too big")

    def unit_and_uniform(bits, o, a, b):
        f = ((bits >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
        if o == "unit":
            return f
        if o == "uniform":
            with np.errstate(all="ignore"):
                r = (f.astype(np.float64) * np.float64(np.float32(b))
                     + np.float64(np.float32(a))).astype(np.float32)
                lo32 = np.float32(a)
                return np.where(np.isnan(lo32) | (lo32 > r), lo32, r).astype(np.float32)
        return UNKNOWN

    if fn in ("sample", "transform"):
        bits = None
        if fn == "transform":
            bits = g.array(shape=g.pick([(n if isinstance(n, int) and 0 <= n < 5000 else 3,),
                                         g.shape()]),
                           dtype=np.uint32 if g.p(0.8) else g.dtype(0))

        def ref():
            if fn == "sample":
                common()
            elif bits.dtype != np.uint32 or bits.ndim != 1:
                raise BadReference("bits")
            if op not in _SAMPLER_OPS:
                raise BadReference("op")
            a, b, c, d = real(lo), real(span), real(clip_lo), real(clip_hi)
            m = n if fn == "sample" else bits.shape[0]
            if m > 4096:
                return UNKNOWN
            src = KT.iota_bits32(k0, k1, m) if fn == "sample" else bits
            return unit_and_uniform(src, op, a, b), a, b, c, d, m

        def call():
            if fn == "sample":
                return KT.sample_f32(k0, k1, n, op, lo=lo, span=span, clip_lo=clip_lo,
                                     clip_hi=clip_hi)
            return KT.transform_f32(bits, op, lo=lo, span=span, clip_lo=clip_lo,
                                    clip_hi=clip_hi)

        def check(got, r):
            if r is UNKNOWN:
                return
            want, a, b, c, d, m = r
            _sampler_values_ok(op, m)(got, want)
        return (f"{fn}_f32({op!r}, n={n!r}, lo={lo!r}, span={span!r}, clip={clip_lo!r},"
                f"{clip_hi!r})", call, ref, check)

    if fn == "uniform64":
        ranged, square = g.p(0.5), g.p(0.5)

        def ref():
            common()
            a, b = real(lo), real(span)
            if n > 4096:
                return UNKNOWN
            f = (KT.iota_bits64(k0, k1, n) >> np.uint64(12)).astype(np.float64) / 2.0**52
            if not ranged:
                return f
            return UNKNOWN if not (np.isfinite(a) and np.isfinite(b)) else \
                np.array([max(a, float(Fraction(x) * Fraction(b) + Fraction(a))) for x in f])

        def check(got, r):
            out = got[0] if square else got
            if r is not UNKNOWN:
                same(out, r, "uniform_f64")
            if square:
                same(got[1], out * -out, "uniform_f64 square")
        return (f"uniform_f64(n={n!r}, lo={lo!r}, span={span!r}, ranged={ranged})",
                lambda: KT.uniform_f64(k0, k1, n, lo, span, ranged, square=square), ref, check)

    x = g.array(shape=g.pick([(7,), (0,), (1000,), g.shape()]),
                dtype=np.float64 if g.p(0.8) else g.dtype(0))
    l_arr = g.array(shape=x.shape if g.p(0.8) else g.shape(), dtype=np.float64 if g.p(0.8)
                    else g.dtype(0))
    clip = g.p(0.5)
    x = np.clip(x, -1, 1) if x.dtype == np.float64 else x

    def ref():
        for name, a in (("x", x), ("l", l_arr)):
            if a.dtype != np.float64 or a.ndim != 1 or not a.flags.c_contiguous:
                raise BadReference(name)
        if x.shape != l_arr.shape or not x.flags.writeable:
            raise BadReference("shape")
        if clip and (clip_lo is None) != (clip_hi is None):
            raise BadReference("clip pair")
        if clip and clip_lo is not None:
            real(clip_lo), real(clip_hi)
        return UNKNOWN

    def call():
        if clip:
            return KT.erfinv_f64(x, l_arr, clip_lo, clip_hi)
        return KT.erfinv_f64(x, l_arr)
    return (f"erfinv_f64({x.dtype}{x.shape}, {l_arr.dtype}{l_arr.shape}, clip={clip})", call,
            ref, lambda got, r: None)


class _Interrupt(Exception):
    """Raised by the SIGALRM handler of the threads+signals target; never leaves the target."""


_ALARM = {"armed": False, "installed": False}


def _on_alarm(signum, frame):
    if _ALARM["armed"]:            # a signal handled late (after its block) is ignored
        _ALARM["armed"] = False
        raise _Interrupt()


def _draws_under_alarms(draw, delays):
    """``draw()`` twice after arming a SIGALRM timer of each delay; the handler raises
    _Interrupt (usually in the middle of a threaded draw).  Returns the completed draws."""
    if not _ALARM["installed"]:
        signal.signal(signal.SIGALRM, _on_alarm)
        _ALARM["installed"] = True
    done = []
    for d in delays:
        try:
            _ALARM["armed"] = True
            signal.setitimer(signal.ITIMER_REAL, d)
            try:
                for _ in range(2):     # bounded: the signal may be handled late
                    done.append(draw())
            finally:
                _ALARM["armed"] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Interrupt:
            pass
    return done


def _in_threads(fns):
    """Run each fn in its own thread; their results, or the first exception re-raised."""
    out, errors = [None] * len(fns), []

    def run(k):
        try:
            out[k] = fns[k]()
        except BaseException as e:         # noqa: BLE001 (re-raised below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(fns))]
    for t in threads:
        t.start()
    return threads, out, errors


def _iota_counters(start, idx):
    i = [start + int(j) for j in idx]
    return (np.array([v >> 32 for v in i], np.uint32),
            np.array([v & 0xFFFFFFFF for v in i], np.uint32))


@target("threefry threads+signals")
def t_threefry_threads(g):
    """Large threefry draws on several kernel threads while a SIGALRM handler raises in the
    middle of them, while other Python threads draw, or while set_num_threads changes the
    count; every completed draw must equal the reference (checked at the span boundaries and
    at random lanes) and all of them each other."""
    kind = g.pick(["alarm", "alarm", "concurrent", "resize"])
    fn = g.pick(["bits32", "bits64", "pairs", "block"])
    n = g.pick([1000, 1 << 16, (1 << 17) + g.small(0, 2000), (1 << 18) + 7, (1 << 19) - 3])
    threads = g.pick([1, 2, 3, 4, 6])
    k0, k1 = (g.pick([0, 1, 0xFFFFFFFF, 0x12345678, g.small(0, 100)]) for _ in range(2))
    start = g.pick([0, 2**32 - 3000, 2**40 + 5])
    delays = [float(d) for d in g.r.uniform(1e-4, 4e-3, size=3)]
    resizes = [g.small(1, 6) for _ in range(12)]
    x0 = np.arange(n, dtype=np.uint32)
    x1 = x0[::-1].copy()
    bounds = [b for lo, hi in KT._span_plan(n, threads) for b in (lo, hi - 1)]
    idx = np.unique(np.concatenate([bounds, g.r.integers(0, n, 256)])).astype(np.int64)

    def draw():
        if fn == "bits32":
            return KT.iota_bits32(k0, k1, n, start)
        if fn == "bits64":
            return KT.iota_bits64(k0, k1, n, start)
        if fn == "pairs":
            return KT.iota_pairs(k0, k1, n, start)
        return np.stack(KT.threefry2x32_block(k0, k1, x0, x1))

    def call():
        old = KT.get_num_threads()
        KT.set_num_threads(threads)
        try:
            if kind == "alarm":
                done = _draws_under_alarms(draw, delays)
            elif kind == "concurrent":
                ts, out, errors = _in_threads([lambda: [draw(), draw()]] * 2)
                done = [draw(), draw()]
                for t in ts:
                    t.join()
                if errors:
                    raise errors[0]
                done += out[0] + out[1]
            else:
                ts, out, errors = _in_threads([lambda: [draw() for _ in range(3)]])
                for r in resizes:
                    KT.set_num_threads(r)
                    time.sleep(2e-4)
                ts[0].join()
                if errors:
                    raise errors[0]
                done = out[0]
            return done + [draw()]               # and one fresh draw after it all
        finally:
            KT.set_num_threads(old)

    def ref():
        if fn == "block":
            y0, y1 = threefry_reference(k0, k1, x0[idx], x1[idx], 20)
            return np.stack([y0, y1])
        y0, y1 = threefry_reference(k0, k1, *_iota_counters(start, idx), 20)
        if fn == "bits32":
            return y0 ^ y1
        if fn == "bits64":
            return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
        return np.stack([y0, y1], axis=1)

    def compare(got, r):
        first = got[-1]
        for k, a in enumerate(got):
            sample = a[:, idx] if fn == "block" else a[idx]
            same(sample, r, f"draw {k} at lanes {idx[:4].tolist()}...")
            if not np.array_equal(a, first):
                raise Mismatch(f"draw {k} differs from the fresh draw at "
                               f"{np.argwhere(a != first)[:3].tolist()}")

    return (f"{kind}: {fn}({k0}, {k1}, n={n}, start={start}) on {threads} threads",
            call, ref, compare)


# -- primitives through bind ------------------------------------------------------------------------

def _expm1_c99(a):
    """np.expm1, but exp(z) - 1 for non-finite or zero complex z: C99's (the standard's) special
    cases, where NumPy's complex expm1 gives nan parts (expm1(inf + 0j) is inf + 0j)."""
    out = np.asarray(np.expm1(a))
    if a.dtype.kind == "c":
        bad = ~np.isfinite(a) | (a == 0)
        out[bad] = np.exp(a[bad]) - 1
    return out


UNARY = {"neg": np.negative, "log2": np.log2, "exp2": np.exp2, "sin": np.sin, "sqrt": np.sqrt,
         "recip": np.reciprocal, "exp": np.exp, "log": np.log, "cos": np.cos, "tanh": np.tanh,
         "log1p": np.log1p, "expm1": _expm1_c99}
BINARY = {"add": np.add, "mul": np.multiply, "fdiv": np.true_divide, "max": np.maximum,
          "cmplt": np.less, "cmpne": np.not_equal, "xor": np.bitwise_xor, "or": np.bitwise_or,
          "and": np.bitwise_and, "pow": np.power, "idiv": np.floor_divide, "mod": np.remainder}


def _prim_call(prim, *args, **params):
    return lambda: P.PRIMITIVES[prim].bind(*args, **params)


@target("prim elementwise", 3)
def t_prim_elementwise(g):
    if g.p(0.4):
        name = g.pick(sorted(UNARY))
        t, a = g.tensor()

        def ref():
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    return UNARY[name](a)
                except TypeError:
                    raise BadReference("ufunc") from None
        return (f"{name}_p({a.dtype}{a.shape})", _prim_call(name, t), ref,
                lambda got, r: same(got, r, name, rtol=1e-5 if a.dtype.kind == "c" else 0.0))
    name = g.pick(sorted(BINARY))
    shape = g.shape()
    t1, a1 = g.tensor(shape=shape)
    dt2 = a1.dtype if g.p(0.8) else None
    t2, a2 = g.tensor(shape=shape if g.p(0.8) else g.shape(), dtype=dt2)

    def ref():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name in ("idiv", "mod") and a2.dtype.kind in "iub" and a1.dtype.kind in "iub" \
                    and not np.all(a2):
                return UNKNOWN
            if name == "pow" and a1.dtype.kind in "iu" and a2.dtype.kind == "i" and \
                    (a2 < 0).any():
                return UNKNOWN
            try:
                return BINARY[name](a1, a2)
            except (TypeError, ValueError) as e:
                raise BadReference(str(e)) from None
    return (f"{name}_p({a1.dtype}{a1.shape}, {a2.dtype}{a2.shape})", _prim_call(name, t1, t2),
            ref, lambda got, r: same(got, r, name, rtol=1e-5 if a1.dtype.kind == "c" else 0.0))


@target("prim movement", 4)
def t_prim_movement(g):
    t, a = g.tensor()
    nd = a.ndim
    name = g.pick(["reshape", "expand", "permute", "pad", "shrink", "flip", "as_strided", "cat",
                   "contiguous", "copy", "cast", "where", "assign"])
    if name == "reshape":
        shape = g.shape(bad=0.2) if g.p(0.6) else tuple(reversed(a.shape))
        return (f"reshape_p({a.shape}, {shape})", _prim_call(name, t, shape=shape),
                _np_ref(lambda: a.reshape(tuple(_ints(shape))) if all(
                    int(v) >= 0 for v in shape) else _raise("neg")), _exact(name))
    if name == "expand":
        shape = tuple(g.small(0, 3) if d == 1 else d for d in a.shape)
        if g.p(0.3):
            shape = g.shape(bad=0.2)

        def ref():
            sh = _ints(shape)
            if any(v < 0 for v in sh) or len(sh) < nd:
                raise BadReference("shape")
            for o, n_ in zip(a.shape, sh[len(sh) - nd:]):
                if o != n_ and o != 1:
                    raise BadReference("expand")
            return np.broadcast_to(a, sh) if math.prod(sh) <= MAX_REF and max(
                sh, default=0) < 2**40 else UNKNOWN
        return f"expand_p({a.shape}, {shape})", _prim_call(name, t, shape=shape), ref, \
            _exact(name)
    if name == "permute":
        axes = tuple(g.r.permutation(nd)) if g.p(0.7) else tuple(
            g.int_like(-nd - 1, nd) for _ in range(nd + g.small(-1, 1)))
        return (f"permute_p({a.shape}, {axes})", _prim_call(name, t, axes=axes),
                lambda: _view_method_ref("permute", (axes,), None, a, None, None),
                _exact(name))
    if name == "pad":
        cfg = tuple((g.small(0, 2), g.small(0, 2)) for _ in range(nd))
        if g.p(0.3) and nd:
            cfg = ((g.int_like(-2, 3), g.int_like(-2, 3)),) + cfg[1:]
        fill = g.pick([0, 1, -2.5, float("nan"), True, 2**70, None, "x"])

        def ref():
            try:
                f = np.array(fill, dtype=a.dtype)
            except Exception:
                raise BadReference("fill") from None
            return _view_method_ref("pad", (cfg, f), None, a, None, None)
        return (f"pad_p({a.dtype}{a.shape}, {cfg}, {fill!r})",
                _prim_call(name, t, config=cfg, fill=fill), _guard(ref), _exact(name))
    if name == "shrink":
        lim = []
        for d in a.shape:
            lo = g.small(0, d)
            lim.append((lo, g.small(lo, d)))
        if g.p(0.3) and lim:
            lim[0] = (g.int_like(-2, 6), g.int_like(-2, 6))
        return (f"shrink_p({a.shape}, {lim})", _prim_call(name, t, limits=tuple(lim)),
                lambda: _view_method_ref("shrink", (lim,), None, a, None, None), _exact(name))
    if name == "flip":
        axes = tuple(g.int_like(-nd - 1, nd, bad=0.05) for _ in range(g.small(0, nd + 1)))
        return (f"flip_p({a.shape}, {axes})", _prim_call(name, t, axes=axes),
                lambda: _view_method_ref("flip", (axes,), None, a, None, None), _exact(name))
    if name == "as_strided":
        shape, strides, offset, _, _ = random_view(g, a.size)
        flat = np.ascontiguousarray(a).reshape(-1)

        def ref():
            sh, sd, off = _ints(shape), _ints(strides), _ints([offset])[0]
            if off < 0 or (math.prod(sh) and off >= flat.size):
                raise BadReference("offset")
            return view_reference(flat, sh, sd, off)
        return (f"as_strided_p({a.shape}, {shape}, {strides}, {offset})",
                _prim_call(name, t, shape=shape, strides=strides, offset=offset), ref,
                _exact(name))
    if name == "cat":
        others = [g.tensor(shape=a.shape if g.p(0.7) else g.shape(), dtype=a.dtype
                           if g.p(0.8) else None) for _ in range(g.small(0, 2))]
        axis = g.int_like(-nd - 1, nd)
        return (f"cat_p({a.shape}, +{len(others)}, axis={axis!r})",
                _prim_call(name, t, *[o[0] for o in others], axis=axis),
                _np_ref(lambda: np.concatenate([a] + [o[1] for o in others], axis=axis)),
                _exact(name))
    if name in ("contiguous", "copy"):
        return f"{name}_p({a.shape})", _prim_call(name, t), lambda: a, _exact(name)
    if name == "cast":
        dt = g.dtype_spec(0.1)

        def ref():
            try:
                d = KB.check_dtype(dt)
            except TypeError:
                return UNKNOWN
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return a.astype(d)

        def compare(got, r):
            d = np.asarray(got)
            if a.dtype.kind in "fc" and r.dtype.kind in "iub":
                # float -> int of nan/inf/out of range is undefined in C and NumPy alike
                fin = np.isfinite(a) if a.dtype.kind == "f" else np.isfinite(a.real)
                same(d.shape, r.shape, "cast shape")
                return np.testing.assert_array_equal(d[fin & (np.abs(a) < 100)],
                                                     r[fin & (np.abs(a) < 100)])
            same(d, r, "cast")
        return f"cast_p({a.dtype}{a.shape}, {dt!r})", _prim_call(name, t, dtype=dt), ref, compare
    if name == "where":
        c, ca = g.tensor(shape=a.shape, dtype=np.bool_ if g.p(0.8) else None)
        y, ya = g.tensor(shape=a.shape if g.p(0.8) else g.shape(), dtype=a.dtype)
        return (f"where_p({ca.dtype}, {a.shape}, {ya.shape})", _prim_call(name, c, t, y),
                _np_ref(lambda: np.where(ca, a, ya)), _exact(name))
    # assign: into a fresh copy, or into a view of one
    dst_base = nx.copy(t)
    dst, dref = dst_base, np.array(a, copy=True)
    if nd and g.p(0.4):
        dst, dview = nx.flip(dst_base), np.flip(dref)
    else:
        dview = dref
    if g.p(0.3):
        src, sa = dst_base if g.p(0.5) else nx.flip(dst_base), None   # overlapping
        sa = np.array(dref if src is dst_base else np.flip(dref), copy=True)
    else:
        src, sa = g.tensor(shape=a.shape if g.p(0.8) else g.shape(), dtype=a.dtype
                           if g.p(0.8) else None)

    def call():
        P.assign_p.bind(dst, src)
        return dst_base

    def ref():
        if sa.dtype != dview.dtype or sa.shape != dview.shape:
            raise BadReference("assign")
        if any(s == 0 and n > 1 for n, s in zip(dst.shape, dst.strides)):
            raise BadReference("broadcast dst")
        out = dref.copy()
        (np.flip(out) if dview is not dref else out)[...] = sa
        return out
    return f"assign_p({a.dtype}{a.shape} <- {sa.dtype}{sa.shape})", call, ref, _exact("assign")


def _raise(msg):
    raise BadReference(msg)


def _guard(fn):
    def ref():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    return ref


@target("prim reduce/scan/matmul", 3)
def t_prim_reduce(g):
    t, a = g.tensor()
    nd = a.ndim
    name = g.pick(["reduce_sum", "reduce_max", "reduce_prod", "argmax", "associative_scan",
                   "matmul", "buffer", "const_scalar", "const_array"])
    if name in ("reduce_sum", "reduce_max", "reduce_prod"):
        axes = tuple(sorted(set(int(v) for v in g.r.integers(0, max(nd, 1), g.small(0, nd)))))\
            if nd and g.p(0.8) else tuple(g.int_like(-3, 4) for _ in range(g.small(0, 2)))
        keep = g.p(0.3)
        npfn = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_prod": np.prod}[name]

        def ref():
            ax = tuple(_ints(axes))
            if name == "reduce_max":
                if a.dtype.kind == "c":
                    return UNKNOWN
                if a.size == 0 and (not ax or any(a.shape[i] == 0 for i in ax
                                                  if -nd <= i < nd)):
                    raise BadReference("empty max")
                return _np_ref(lambda: npfn(a, axis=ax, keepdims=keep))()
            return _np_ref(lambda: npfn(a, axis=ax, keepdims=keep, dtype=a.dtype))()
        tol = 1e-3 if a.dtype == np.float16 else 1e-5 if a.dtype.kind in "fc" else 0.0
        return (f"{name}_p({a.dtype}{a.shape}, {axes}, {keep})",
                _prim_call(name, t, axes=axes, keepdims=keep), ref,
                lambda got, r: same(got, r, name, rtol=tol if name != "reduce_max" else 0.0))
    if name == "argmax":
        axis = g.int_like(-nd - 1, nd) if nd else 0
        keep = g.p(0.3)

        def ref():
            if a.size == 0 or a.dtype.kind == "c":
                raise BadReference("empty") if a.size == 0 else BadReference("complex?")
            return _np_ref(lambda: np.asarray(np.argmax(a, axis=axis, keepdims=keep),
                                              dtype=np.int32))()
        return (f"argmax_p({a.dtype}{a.shape}, {axis!r})",
                _prim_call(name, t, axis=axis, keepdims=keep), _loose(ref), _exact(name))
    if name == "associative_scan":
        axis = g.int_like(-nd - 1, nd) if nd else g.pick([0, None])
        op = g.pick(["sum", "prod", "max", "min", "bogus", None])

        def ref():
            if op not in ("sum", "prod", "max", "min"):
                raise BadReference("op")
            f = {"sum": lambda: np.cumsum(a, axis=axis, dtype=a.dtype),
                 "prod": lambda: np.cumprod(a, axis=axis, dtype=a.dtype),
                 "max": lambda: np.maximum.accumulate(a, axis=axis),
                 "min": lambda: np.minimum.accumulate(a, axis=axis)}[op]
            return _np_ref(f)()
        tol = 1e-3 if a.dtype == np.float16 else 1e-5 if a.dtype.kind in "fc" else 0.0
        return (f"associative_scan_p({a.dtype}{a.shape}, {axis!r}, {op!r})",
                _prim_call(name, t, axis=axis, op=op), ref,
                lambda got, r: same(got, r, name, rtol=tol))
    if name == "matmul":
        b_shape = tuple(reversed(a.shape)) if g.p(0.6) else g.shape()
        t2, a2 = g.tensor(shape=b_shape, dtype=a.dtype if g.p(0.8) else None)

        def ref():
            if a.dtype.kind == "b" or a2.dtype.kind == "b":
                return _loose_np_ref(lambda: np.matmul(a, a2))()
            return _np_ref(lambda: np.matmul(a, a2))()
        tol = 5e-2 if np.float16 in (a.dtype, a2.dtype) else 1e-4
        return (f"matmul_p({a.dtype}{a.shape}, {a2.dtype}{a2.shape})", _prim_call(name, t, t2),
                ref, lambda got, r: same(got, r, name, rtol=tol if np.asarray(r).dtype.kind
                                         in "fc" else 0.0))
    if name == "buffer":
        shape = g.shape(bad=0.3)
        dt = g.dtype_spec(0.1)

        def ref():
            sh = _ints(shape) if not isinstance(shape, (int, np.integer)) else _raise("int")
            d = _check(dt)
            if any(v < 0 for v in sh) or math.prod(sh) * d.itemsize > 2**40:
                raise BadReference("shape")
            try:
                return np.broadcast_to(np.empty((), d), sh)     # shape and dtype only
            except ValueError:
                return UNKNOWN          # NumPy refuses the shape (a huge 0-size one)
        return (f"buffer_p({shape}, {dt!r})", _prim_call(name, shape=shape, dtype=dt), ref,
                lambda got, r: same(np.asarray(got).shape, r.shape, "buffer shape") or (
                    np.asarray(got).dtype == r.dtype or _fail("buffer dtype")))
    if name == "const_scalar":
        value = g.pick([0, 1.5, float("nan"), 2**70, -1, True, 1j, "x", None])
        dt = g.dtype_spec(0.1)
        return (f"const_scalar_p({value!r}, {dt!r})", _prim_call(name, value=value, dtype=dt),
                _loose_np_ref(lambda: np.array(value, dtype=_check(dt)) if dt is not None
                              else UNKNOWN), _exact(name))
    arr = g.array(bad_dtype=0.1)
    return (f"const_array_p({arr.dtype}{arr.shape})", _prim_call(name, array=arr),
            _loose_np_ref(lambda: np.array(arr, order="C", copy=True)), _exact(name))


def _check(dt):
    try:
        return KB.check_dtype(dt)
    except TypeError:
        raise BadReference("dtype") from None


def _fail(msg):
    raise Mismatch(msg)


def _loose(ref):
    def r():
        try:
            return ref()
        except BadReference:
            return UNKNOWN
    return r


@target("prim gather/scatter/windows/threefry", 3)
def t_prim_kernels(g):
    name = g.pick(["gather", "scatter", "unfold", "fold", "threefry"])
    if name in ("gather", "scatter"):
        t, a = g.tensor(shape=g.shape(max_ndim=3))
        axis = g.int_like(-2, 3) if a.ndim else 0
        idx = _indices_for(g, a.shape, axis)
        it = nx.asarray(idx.astype(idx.dtype.newbyteorder("="))) \
            if idx.dtype.kind in "iub" else nx.asarray(idx)
        if name == "gather":
            return (f"gather_p({a.dtype}{a.shape}, {idx.dtype}{idx.shape}, {axis!r})",
                    _prim_call(name, t, it, axis=axis),
                    lambda: _gather_ref(a, idx, axis), _exact(name))
        mode = g.pick(["set", "add", "mul", "max", "min", "nope"])
        ut, ua = g.tensor(shape=idx.shape, dtype=a.dtype)
        return (f"scatter_p({a.dtype}{a.shape}, {idx.dtype}{idx.shape}, {axis!r}, {mode})",
                _prim_call(name, t, it, ut, axis=axis, mode=mode),
                lambda: scatter_reference(a, idx, ua, axis, mode),
                lambda got, r: same(got, r, "scatter_p", rtol=1e-4 if a.dtype.kind == "c" or
                                    a.dtype == np.float16 else 0.0))
    if name == "unfold":
        s = g.pick([1, 2])
        shape = (g.small(0, 2), g.small(0, 2)) + tuple(g.small(0, 4) for _ in range(s))
        t, a = g.tensor(shape=shape)
        ks, st, dl, pd = _window_args(g, s)

        def ref():
            p = (_expand_param(ks, s, 1), _expand_param(st, s, 1), _expand_param(dl, s, 1),
                 _expand_param(pd, s, 0))
            return unfold_reference(a, *p)
        return (f"unfold_p({a.dtype}{a.shape}, {ks}, {st}, {dl}, {pd})",
                _prim_call(name, t, kernel_size=ks, stride=st, dilation=dl, padding=pd), ref,
                _exact(name))
    if name == "fold":
        t, a = g.tensor(shape=(g.small(0, 2), g.small(1, 4), g.small(0, 6)))
        sizes = (g.int_like(1, 6),)
        ks, st, dl, pd = _window_args(g, 1)

        def ref():
            if a.dtype.kind == "b":
                raise BadReference("bool")
            sz = tuple(_ints(sizes))
            if any(v < 1 for v in sz):
                raise BadReference("sizes")
            return fold_reference(a, sz, _expand_param(ks, 1, 1), _expand_param(st, 1, 1),
                                  _expand_param(dl, 1, 1), _expand_param(pd, 1, 0))
        return (f"fold_p({a.dtype}{a.shape}, {sizes}, {ks}, {st}, {dl}, {pd})",
                _prim_call(name, t, output_size=sizes, kernel_size=ks, stride=st, dilation=dl,
                           padding=pd), ref,
                lambda got, r: same(got, r, "fold_p", rtol=2e-3 if a.dtype == np.float16
                                    else 0.0))
    kt, ka = g.tensor(shape=(2,) if g.p(0.8) else g.shape(),
                      dtype=np.uint32 if g.p(0.8) else None)
    ct, ca = g.tensor(shape=g.shape(), dtype=np.uint32 if g.p(0.8) else None)

    def ref():
        if ka.dtype != np.uint32 or ka.shape != (2,) or ca.dtype != np.uint32:
            raise BadReference("key/count")
        flat = ca.reshape(-1)
        odd = flat.size % 2
        if odd:
            flat = np.concatenate([flat, np.zeros(1, np.uint32)])
        h = flat.size // 2
        y0, y1 = threefry_reference(int(ka[0]), int(ka[1]), flat[:h], flat[h:], 20)
        out = np.concatenate([y0, y1])
        return out[:out.size - odd].reshape(ca.shape)
    return (f"threefry_p({ka.dtype}{ka.shape}, {ca.dtype}{ca.shape})",
            _prim_call(name, kt, ct), ref, _exact(name))


def _gather_ref(a, idx, axis):
    if idx.dtype.kind not in "iu":
        raise BadReference("indices dtype")
    if axis is None:                  # the kernel's flattened form
        if idx.ndim != 1:
            raise BadReference("axis None needs 1-D indices")
        a, axis = a.reshape(-1), 0
    if idx.ndim != a.ndim or isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) \
            or not -a.ndim <= axis < a.ndim:
        raise BadReference("rank/axis")
    if idx.size and idx.dtype == np.uint64 and int(idx.max()) >= 2**63:
        raise BadReference("uint64 index")
    return _np_ref(lambda: np.take_along_axis(a, idx.astype(np.int64), axis))()


# -- the front end ------------------------------------------------------------------------------

@target("front end", 6)
def t_front_end(g):
    t, a = g.tensor()
    nd = a.ndim
    axis = g.pick([None, 0, -1, 1, nd, -nd - 1, 1.0, True, (0, 0), (0, -1), "0"]) if nd else \
        g.pick([None, 0, ()])
    name = g.pick(["reshape", "transpose", "broadcast_to", "pad", "flip", "squeeze",
                   "expand_dims", "moveaxis", "swapaxes", "getitem", "take", "take_along_axis",
                   "concatenate", "stack", "split", "sum", "max", "min", "argmax", "argmin",
                   "cumsum", "mean", "clip", "where", "zeros", "full", "arange", "as_strided",
                   "put_along_axis", "at", "astype", "asarray", "eye", "linspace"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _front(g, name, t, a, nd, axis)


def _axis_ok(axis, nd, allow_none=True, allow_tuple=False):
    if axis is None:
        return allow_none
    if isinstance(axis, tuple):
        return allow_tuple and all(_axis_ok(x, nd, False) for x in axis) and \
            len({int(x) % nd for x in axis}) == len(axis)
    return isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_)) \
        and -nd <= axis < nd


def _cast_or_unknown(value, dtype):
    """value cast as the front end casts it (NumPy's conversion), or BadReference."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return np.asarray(value, dtype=dtype)
    except Exception:
        raise BadReference("cast") from None


def _front(g, name, t, a, nd, axis):
    F = getattr(nx, name, None)
    strict = _np_ref
    if name == "reshape":
        shape = g.shape(bad=0.2) if g.p(0.5) else (-1,) if g.p(0.5) else \
            tuple(reversed(a.shape))
        return (f"nx.reshape({a.shape}, {shape})", lambda: nx.reshape(t, shape),
                strict(lambda: a.reshape(shape)), _exact(name))
    if name == "transpose":
        axes = None if g.p(0.3) else tuple(g.r.permutation(nd)) if g.p(0.7) else \
            tuple(g.int_like(-nd - 1, nd) for _ in range(nd))
        return (f"nx.transpose({a.shape}, {axes})", lambda: nx.transpose(t, axes),
                strict(lambda: np.transpose(a, axes)), _exact(name))
    if name == "broadcast_to":
        shape = tuple(g.small(0, 3) if d == 1 else d for d in a.shape)
        if g.p(0.3):
            shape = g.shape(bad=0.3)

        def ref():
            if math.prod(_ints(shape)) > MAX_REF if isinstance(shape, tuple) else False:
                return UNKNOWN
            return strict(lambda: np.broadcast_to(a, shape))()
        return f"nx.broadcast_to({a.shape}, {shape})", lambda: nx.broadcast_to(t, shape), \
            _guard(ref), _exact(name)
    if name == "pad":
        w = g.pick([1, (1, 2), ((0, 1),) * nd, -1, ((1, 1),) * (nd + 1), 1.5, 2**62, None])
        fill = g.pick([0, 1, float("nan"), -3, True])

        def ref():
            if isinstance(w, float) or w is None:
                raise BadReference("type")
            if nd == 0:
                return a
            if w == 2**62:
                raise BadReference("huge")
            if a.dtype.kind in "iu" and isinstance(fill, float):
                return UNKNOWN
            return strict(lambda: np.pad(a, w, constant_values=np.asarray(fill).astype(
                a.dtype)))()
        return f"nx.pad({a.dtype}{a.shape}, {w}, {fill})", \
            lambda: nx.pad(t, w, constant_values=fill), _guard(ref), _exact(name)
    if name == "flip":
        def ref():
            if not _axis_ok(axis, nd, True, True):
                raise BadReference("axis")
            return np.flip(a, axis)
        return f"nx.flip({a.shape}, {axis!r})", lambda: nx.flip(t, axis), ref, _exact(name)
    if name == "squeeze":
        return (f"nx.squeeze({a.shape}, {axis!r})", lambda: nx.squeeze(t, axis),
                _axis_guard(axis, nd, lambda: np.squeeze(a, axis), tuple_ok=True), _exact(name))
    if name == "expand_dims":
        return (f"nx.expand_dims({a.shape}, {axis!r})", lambda: nx.expand_dims(t, axis),
                _axis_guard(axis, nd + 1, lambda: np.expand_dims(a, axis), none_ok=False,
                            tuple_ok=True), _exact(name))
    if name == "moveaxis":
        src, dst = g.int_like(-nd, nd), g.int_like(-nd, nd)
        return (f"nx.moveaxis({a.shape}, {src!r}, {dst!r})", lambda: nx.moveaxis(t, src, dst),
                _np_ref(lambda: np.moveaxis(a, src, dst)), _exact(name))
    if name == "swapaxes":
        i, j = g.int_like(-nd, nd), g.int_like(-nd, nd)
        return (f"nx.swapaxes({a.shape}, {i!r}, {j!r})", lambda: nx.swapaxes(t, i, j),
                _axis_guard2(i, j, nd, lambda: np.swapaxes(a, i, j)), _exact(name))
    if name == "getitem":
        index = _random_index(g, a)
        return f"x{a.shape}[{index!r}]"[:300], lambda: t[index], \
            _index_ref(a, index), _exact(name)
    if name == "take":
        idx = g.r.integers(-5, 6, g.small(1, 4))
        if g.p(0.1):
            idx = idx.astype(np.float64)

        def ref():
            if not _axis_ok(axis, nd):
                raise BadReference("axis")
            if nd == 0 and axis is not None:
                raise BadReference("0-d")
            return strict(lambda: np.take(a, idx, axis=axis))()
        return f"nx.take({a.shape}, {idx.tolist()}, {axis!r})", lambda: nx.take(t, idx, axis), \
            ref, _exact(name)
    if name in ("take_along_axis", "put_along_axis"):
        ax = axis if g.p(0.7) else 0
        idx = _indices_for(g, a.shape, ax if isinstance(ax, int) and not isinstance(
            ax, bool) else 0)
        if ax is None:
            idx = idx.reshape(-1)[:4]
        if name == "take_along_axis":
            return (f"nx.take_along_axis({a.dtype}{a.shape}, {idx.dtype}{idx.shape}, {ax!r})",
                    lambda: nx.take_along_axis(t, idx, ax),
                    _loose(lambda: _gather_ref(a.reshape(-1) if ax is None else a, idx,
                                               0 if ax is None else ax)), _exact(name))
        mode = g.pick(["set", "add", "max", "mul", "min", "bad"])
        vals = g.pick([0, 1, 2.5, -1])
        return (f"nx.put_along_axis({a.dtype}{a.shape}, {idx.dtype}{idx.shape}, {vals}, {ax!r},"
                f" {mode})", lambda: nx.put_along_axis(t, idx, vals, ax, mode=mode),
                _loose(lambda: scatter_reference(a, idx, _cast_or_unknown(vals, a.dtype), ax,
                                                 mode)),
                lambda got, r: same(got, r, name, rtol=1e-4 if a.dtype.kind == "c" or
                                    a.dtype == np.float16 else 0.0))
    if name == "at":
        n0 = a.shape[0] if nd else 0
        idx = g.r.integers(-n0 - 1, n0 + 1, g.small(0, 4)) if n0 else np.zeros(0, np.int64)
        mode = g.pick(["set", "add", "multiply", "max", "min"])
        v = g.pick([1, 0, 2])

        def ref():
            if nd == 0:
                raise BadReference("0-d")
            if idx.size and (idx.min() < -n0 or idx.max() >= n0):
                raise BadReference("oob")
            if a.dtype.kind == "c" and mode in ("max", "min"):
                raise BadReference("complex")
            out = np.array(a, copy=True)
            if out.dtype == np.float16 and mode in ("add", "multiply"):
                out = out.astype(np.float32)
            vv = np.asarray(v).astype(a.dtype)
            with np.errstate(all="ignore"):
                if mode == "set":
                    for i in idx:
                        out[i] = vv
                elif a.dtype.kind == "b":
                    (np.logical_or if mode in ("add", "max") else np.logical_and).at(
                        out, idx, vv)
                else:
                    {"add": np.add, "multiply": np.multiply, "max": np.maximum,
                     "min": np.minimum}[mode].at(out, idx, vv)
            return out.astype(a.dtype)
        return f"x{a.shape}.at[{idx.tolist()}].{mode}({v})", \
            lambda: getattr(t.at[idx], mode)(v), ref, _exact(name)
    if name in ("concatenate", "stack"):
        others = [g.tensor(shape=a.shape if g.p(0.8) else g.shape(), dtype=a.dtype)
                  for _ in range(g.small(0, 2))]
        ax = axis if not isinstance(axis, tuple) else 0
        npfn = np.concatenate if name == "concatenate" else np.stack

        def ref():
            # concatenate(axis=None) joins the flattened tensors, as NumPy's
            if (ax is None and name == "stack") or isinstance(ax, (bool, float, str)):
                raise BadReference("axis")
            return strict(lambda: npfn([a] + [o[1] for o in others], axis=ax))()
        return (f"nx.{name}({a.shape} + {len(others)}, {ax!r})",
                lambda: F([t] + [o[0] for o in others], axis=ax), ref, _exact(name))
    if name == "split":
        sec = g.pick([1, 2, 3, [1], [1, 3], 0, -1, [-1, 10]])
        ax = 0 if not nd or g.p(0.5) else g.int_like(-nd, nd)

        def ref():
            if not _axis_ok(ax, nd, False):
                raise BadReference("axis")
            if isinstance(sec, int) and (sec <= 0 or a.shape[ax] % sec):
                raise BadReference("sections")
            return strict(lambda: np.split(a, sec, axis=ax))()

        def compare(got, r):
            if len(got) != len(r):
                raise Mismatch("split count")
            for x, y in zip(got, r):
                same(x, y, "split")
        return f"nx.split({a.shape}, {sec}, {ax!r})", lambda: nx.split(t, sec, ax), ref, compare
    if name in ("sum", "max", "min", "mean", "argmax", "argmin", "cumsum"):
        return _front_reduce(g, name, t, a, nd, axis)
    if name == "clip":
        lo, hi = g.pick([None, 0, -1.5, float("nan")]), g.pick([None, 1, 2.5])

        def ref():
            if lo is None and hi is None:
                return UNKNOWN        # nothing to clip (NumPy's answer varies by version)
            if a.dtype.kind == "c":
                raise BadReference("complex")
            if a.dtype.kind == "b" or a.dtype.kind in "iu" and any(
                    isinstance(v, float) for v in (lo, hi)):
                return UNKNOWN    # weak typing: bool with an int gives int32, int with a float32
            out = a
            if lo is not None:
                out = np.maximum(out, np.asarray(lo).astype(a.dtype))
            if hi is not None:
                out = np.minimum(out, np.asarray(hi).astype(a.dtype))
            return out
        return f"nx.clip({a.dtype}{a.shape}, {lo}, {hi})", lambda: nx.clip(t, lo, hi), \
            _guard(ref), _exact(name)
    if name == "where":
        c = a if a.dtype.kind == "b" else (np.asarray(a) != 0)
        y = True if a.dtype.kind == "b" else g.pick([0, 1])     # weakly typed: keeps a's dtype
        return (f"nx.where({a.shape}, x, {y})", lambda: nx.where(nx.asarray(c), t, y),
                _loose_np_ref(lambda: np.where(c, a, a.dtype.type(y))), _exact(name))
    if name in ("zeros", "full"):
        shape = g.shape(bad=0.4)
        dt = g.dtype_spec(0.1)
        fill = g.pick([0, 1.5, float("nan"), 2**70])

        def ref():
            d = _check(dt)
            sh = (shape,) if isinstance(shape, (int, np.integer)) else shape
            sh = tuple(_ints(sh))
            if any(v < 0 for v in sh) or math.prod(sh) * d.itemsize > 2**40:
                raise BadReference("shape")
            if math.prod(sh) * d.itemsize > 2**28 or max(sh, default=0) > 2**40:
                return UNKNOWN
            if math.prod(sh) == 0:
                return UNKNOWN      # NumPy refuses some huge empty shapes; nx allows them
            if name == "zeros":
                return np.zeros(sh, d)
            with np.errstate(all="ignore"):
                if d.kind in "iub" and isinstance(fill, float) or fill == 2**70:
                    return UNKNOWN
                return np.full(sh, fill, d)
        if dt is None:
            dt = np.float32      # (None means "infer from the fill value", x32 rules)
        call = (lambda: nx.zeros(shape, dt)) if name == "zeros" else \
            (lambda: nx.full(shape, fill, dt))
        return f"nx.{name}({shape}, {dt!r})", call, _guard(ref), _exact(name)
    if name == "arange":
        args = tuple(g.pick([0, 1, 5, -3, 2.5, 0.0, 2**40, float("nan"), float("inf")])
                     for _ in range(g.small(1, 3)))

        def ref():
            vals = list(args) + [None] * (3 - len(args))
            start, stop, step = vals if len(args) > 1 else (0, args[0], 1)
            step = 1 if step is None else step
            if step == 0:
                raise BadReference("step")
            n = math.ceil((stop - start) / step) if all(
                math.isfinite(v) for v in (start, stop, step)) else None
            if n is None:
                raise BadReference("non-finite")
            if n > 10**6:
                raise BadReference("huge")
            return UNKNOWN
        return f"nx.arange{args}", lambda: nx.arange(*args), _loose(_guard(ref)), \
            lambda got, r: None
    if name == "as_strided":
        shape, strides, offset, _, _ = random_view(g, a.size)
        flat = np.ascontiguousarray(a).reshape(-1)

        def ref():
            sh, sd, off = _ints(shape), _ints(strides), _ints([offset])[0]
            if any(v < 0 for v in sh) or off < 0 or (math.prod(sh) and off >= flat.size):
                raise BadReference("offset")
            return view_reference(flat, sh, sd, off)
        return (f"nx.as_strided({a.shape}, {shape}, {strides}, {offset})",
                lambda: nx.as_strided(t, shape, strides, offset), ref, _exact(name))
    if name == "astype":
        dt = g.dtype_spec(0.15)

        def ref():
            d = _check(dt)
            if a.dtype.kind in "fc" and d.kind in "iub":
                return UNKNOWN
            with np.errstate(all="ignore"):
                return a.astype(d)
        return f"nx.astype({a.dtype}, {dt!r})", lambda: nx.astype(t, dt), _guard(ref), \
            _exact(name)
    if name == "asarray":
        obj = g.pick([g.array(bad_dtype=0.3), [1, [2, 3]], "abc", None, 3.5, [[1, 2], [3, 4]],
                      {"a": 1}, b"xy", [1.5, 2], np.float64(2.0), range(3)])
        return f"nx.asarray({type(obj).__name__})", lambda: nx.asarray(obj), \
            lambda: UNKNOWN, lambda got, r: None
    if name == "eye":
        n, m = g.int_like(0, 4), g.pick([None, g.int_like(0, 4)])
        return f"nx.eye({n!r}, {m!r})", lambda: nx.eye(n, m), \
            _loose_np_ref(lambda: np.eye(n, m, dtype=np.float32) if (
                isinstance(n, int) and n < 1000 and (m is None or isinstance(m, int) and
                                                      m < 1000)) else UNKNOWN), _exact(name)
    num = g.int_like(0, 6)
    return f"nx.linspace(0, 1, {num!r})", lambda: nx.linspace(0, 1, num), \
        _loose_np_ref(lambda: np.linspace(0, 1, num, dtype=np.float32) if isinstance(
            num, int) and num < 1000 else UNKNOWN), _exact("linspace")


def _axis_guard(axis, nd, fn, none_ok=True, tuple_ok=False):
    def ref():
        if not _axis_ok(axis, nd, none_ok, tuple_ok):
            raise BadReference("axis")
        return _np_ref(fn)()
    return ref


def _axis_guard2(i, j, nd, fn):
    def ref():
        if not (_axis_ok(i, nd, False) and _axis_ok(j, nd, False)):
            raise BadReference("axis")
        return _np_ref(fn)()
    return ref


def _random_index(g, a):
    items = []
    for _ in range(g.small(0, a.ndim + 2)):
        k = g.small(0, 7)
        if k == 0:
            items.append(None)
        elif k == 1:
            items.append(Ellipsis)
        elif k == 2:
            items.append(slice(g.int_like(-6, 6, bad=0.05), g.int_like(-6, 6, bad=0.05),
                               g.pick([None, 1, 2, -1, -2, 0])))
        elif k == 3:
            items.append(g.int_like(-5, 5, bad=0.05))
        elif k == 4:
            items.append(g.r.integers(-4, 4, g.small(0, 3)))
        elif k == 5:
            n = a.shape[len(items)] if len(items) < a.ndim else 2
            items.append(g.r.random(n) < 0.5)
        else:
            items.append(g.pick([1.5, "a", [1, 2], True, np.array(2), [[0], [1]]]))
    return tuple(items) if g.p(0.7) else (items[0] if items else ())


def _index_ref(a, index):
    def ref():
        idx = index if isinstance(index, tuple) else (index,)
        for it in idx:
            if isinstance(it, (float, str, np.floating)):
                raise BadReference("float index")
            if isinstance(it, slice) and it.step == 0:
                raise BadReference("step 0")
            if isinstance(it, int) and not isinstance(it, bool) and abs(it) > 2**62:
                return UNKNOWN
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                r = a[index]
        except (IndexError, TypeError, ValueError) as e:
            raise BadReference(str(e)) from None
        except Warning:
            return UNKNOWN
        return np.asarray(r) if np.asarray(r).size <= MAX_REF else UNKNOWN
    return ref


def _front_reduce(g, name, t, a, nd, axis):
    keep = g.p(0.3)
    F = getattr(nx, name)
    if name == "cumsum":
        ax = axis if not isinstance(axis, tuple) else 0

        def ref():
            if not _axis_ok(ax, nd):
                raise BadReference("axis")
            if nd == 0 and ax is not None:
                raise BadReference("0-d")
            return UNKNOWN if a.dtype.kind not in "fc" else _np_ref(
                lambda: np.cumsum(a, axis=ax))()
        return f"nx.cumsum({a.dtype}{a.shape}, {ax!r})", lambda: nx.cumsum(t, ax), ref, \
            lambda got, r: same(got, r, "cumsum", rtol=2e-3 if a.dtype == np.float16 else 1e-5,
                                check_dtype=False)
    npfn = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean, "argmax": np.argmax,
            "argmin": np.argmin}[name]

    def ref():
        tuple_ok = name not in ("argmax", "argmin")
        if not _axis_ok(axis, nd, True, tuple_ok):
            raise BadReference("axis")
        if a.dtype.kind == "c" and name in ("max", "min", "argmax", "argmin"):
            raise BadReference("complex")
        if name in ("max", "min", "argmax", "argmin") and a.size == 0:
            if axis is None or (isinstance(axis, int) and a.shape[axis] == 0) or (
                    isinstance(axis, tuple) and any(a.shape[i] == 0 for i in axis)):
                raise BadReference("empty")
        if a.dtype.kind not in "fc" and name in ("sum", "mean"):
            return UNKNOWN      # x32 accumulation dtypes differ from NumPy's by design
        if name == "mean" and (a.size == 0 or a.dtype == np.float16):
            return UNKNOWN
        r = _np_ref(lambda: npfn(a, axis=axis, keepdims=keep))()
        if name in ("argmax", "argmin"):
            r = np.asarray(r, dtype=np.int32)
        return r
    rtol = 0.0 if name in ("max", "min", "argmax", "argmin") else \
        3e-3 if a.dtype == np.float16 else 1e-4

    def compare(got, r):
        same(got, r, name, rtol=rtol, check_dtype=name not in ("mean",))
    return f"nx.{name}({a.dtype}{a.shape}, {axis!r}, {keep})", \
        lambda: F(t, axis, keep), _guard(ref), compare


# ---------------------------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------------------------

def run(calls, seed, start=0, verbose=False, call_timeout=60.0, progress_path=None,
        only=None):
    names = sorted(TARGETS)
    if only:
        names = [n for n in names if any(o in n for o in only)]
    weights = np.array([TARGETS[n][1] for n in names], dtype=float)
    weights /= weights.sum()
    stats = {n: {"calls": 0, "returned": 0, "checked": 0, "raised": {}, "stricter": 0}
             for n in names}
    failures = []
    progress = None
    if progress_path:
        progress = os.open(progress_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    t0 = time.time()
    warnings.simplefilter("ignore")
    for i in range(start, start + calls):
        rng = np.random.default_rng([seed, i])
        name = names[int(rng.choice(len(names), p=weights))]
        g = Gen(rng)
        if progress is not None:
            os.pwrite(progress, f"{i} {name}\n".ljust(64).encode(), 0)
        st = stats[name]
        st["calls"] += 1
        try:
            desc, call, ref, compare = TARGETS[name][0](g)
        except Exception as e:      # a bug of the harness itself: report it, keep going
            failures.append({"call": i, "target": name, "kind": "harness",
                             "error": f"{type(e).__name__}: {e}",
                             "trace": traceback.format_exc(limit=6)})
            continue
        try:
            expected = ref()
            ref_raised = None
        except BadReference as e:
            expected, ref_raised = None, str(e) or "invalid"
        except Exception as e:
            failures.append({"call": i, "target": name, "kind": "harness", "desc": desc,
                             "error": f"reference: {type(e).__name__}: {e}",
                             "trace": traceback.format_exc(limit=6)})
            continue
        faulthandler.dump_traceback_later(call_timeout, exit=True)
        try:
            with np.errstate(all="ignore"):
                got = call()
            raised = None
        except ACCEPTED as e:
            raised = e
        except Mismatch as e:
            faulthandler.cancel_dump_traceback_later()
            failures.append({"call": i, "target": name, "kind": "wrong", "desc": desc,
                             "error": str(e)})
            continue
        except BaseException as e:
            faulthandler.cancel_dump_traceback_later()
            if isinstance(e, KeyboardInterrupt):
                raise
            failures.append({"call": i, "target": name, "kind": "bad exception", "desc": desc,
                             "error": f"{type(e).__name__}: {e}",
                             "trace": traceback.format_exc(limit=8)})
            continue
        faulthandler.cancel_dump_traceback_later()
        if verbose:
            print(f"[{i}] {name}: {desc}\n    ref: {ref_raised or type(expected).__name__}\n"
                  f"    got: {type(raised).__name__ + ': ' + str(raised) if raised else 'value'}")
        if raised is not None:
            msg = str(raised)
            key = type(raised).__name__
            st["raised"][key] = st["raised"].get(key, 0) + 1
            if not msg.strip() and not isinstance(raised, MemoryError):
                failures.append({"call": i, "target": name, "kind": "no message",
                                 "desc": desc, "error": key})
            if ref_raised is None and expected is not UNKNOWN:
                st["stricter"] += 1
                if len(st.setdefault("stricter_examples", [])) < 3:
                    st["stricter_examples"].append(f"[{i}] {desc[:160]}: {key}: {msg[:160]}")
            continue
        st["returned"] += 1
        if ref_raised is not None:
            failures.append({"call": i, "target": name, "kind": "returned where the reference "
                             "refuses", "desc": desc, "error": ref_raised})
            continue
        if expected is UNKNOWN:
            continue
        try:
            with np.errstate(all="ignore"):
                compare(got, expected)
            st["checked"] += 1
        except Mismatch as e:
            failures.append({"call": i, "target": name, "kind": "wrong", "desc": desc,
                             "error": str(e)})
        except Exception as e:
            failures.append({"call": i, "target": name, "kind": "wrong", "desc": desc,
                             "error": f"compare: {type(e).__name__}: {e}",
                             "trace": traceback.format_exc(limit=5)})
    if progress is not None:
        os.close(progress)
    total = sum(s["calls"] for s in stats.values())
    return {"seed": seed, "start": start, "calls": total, "seconds": round(time.time() - t0, 1),
            "returned": sum(s["returned"] for s in stats.values()),
            "checked": sum(s["checked"] for s in stats.values()),
            "raised": _merge([s["raised"] for s in stats.values()]),
            "stricter_than_reference": sum(s["stricter"] for s in stats.values()),
            "failures": failures, "targets": stats}


def _merge(dicts):
    out = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _limit_memory(gib):
    try:
        import resource
        lim = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    except (ImportError, ValueError, OSError):
        pass


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--json", default=None, help="write the report here")
    ap.add_argument("--progress", default=None, help="file holding the current call index")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--only", action="append", help="targets whose name contains this")
    ap.add_argument("--call-timeout", type=float, default=60.0)
    ap.add_argument("--memory-limit-gib", type=float,
                    default=float(os.environ.get("NX_RUNE_FUZZ_MEMORY_LIMIT_GIB", "8")),
                    help="RLIMIT_AS for this process (0: none; ASan needs none and uses "
                         "ASAN_OPTIONS=max_allocation_size_mb instead); default "
                         "$NX_RUNE_FUZZ_MEMORY_LIMIT_GIB or 8")
    args = ap.parse_args(argv)
    faulthandler.enable()
    if args.memory_limit_gib:
        _limit_memory(args.memory_limit_gib)
    report = run(args.calls, args.seed, args.start, args.verbose, args.call_timeout,
                 args.progress, args.only)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    fails = report["failures"]
    print(f"fuzz: {report['calls']} calls in {report['seconds']} s: {report['returned']} "
          f"returned ({report['checked']} checked against the reference), raised "
          f"{report['raised']}; {len(fails)} failures")
    for f in fails[:20]:
        print(f"  FAIL call {f['call']} [{f['target']}] {f['kind']}: {f.get('desc', '')}\n"
              f"       {f['error']}")
        if args.verbose and "trace" in f:
            print(f["trace"])
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
