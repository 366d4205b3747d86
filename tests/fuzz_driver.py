"""Fuzz driver: throws random, mostly bad, arguments at every kernel, primitive and many front-end
functions of nx_rune, and checks each call against NumPy (or a small reference model).

Pass criterion, per call: the call either returns the reference's answer, or raises one of
``ACCEPTED`` with a non-empty message.  A crash (the process dies), a hang (a call running past
``--call-timeout`` seconds: faulthandler kills the process) or a wrong result is a failure.

One target (``threefry threads+signals``) stresses the threaded kernel instead: large draws
while a SIGALRM handler raises in the middle of them, while other threads draw, or while
``set_num_threads`` changes the count (every completed draw must give the reference values).

Five targets cover the paths of issue 13 (see their docstrings): ``containers of tracers``
and ``NumPy on tracers`` (values against NumPy, derivatives under grad/jvp/vjp/hvp against
float64 central finite differences of a NumPy mirror of the function), ``huge sizes`` (sizes,
steps, offsets near and beyond 2**31 .. 2**64 against NumPy or a model of the result's
shape; errors must name the argument), ``in-place writes`` (``x[idx] = v`` and ``x op= v`` on
views against NumPy on copies; writes after recording: ModifiedInPlaceError) and ``Array API
functions``.  In these, some exceptions NumPy would not raise are failures too (a
TracerArrayConversionError for a container, a TypeError that does not name the
transformation, an error message that does not name the argument).

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
import operator
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
from nx_rune.errors import (  # noqa: E402
    DerivativeConversionError,
    ModifiedInPlaceError,
    TracerArrayConversionError,
)
from nx_rune.tensor import ArrayBase  # noqa: E402

ACCEPTED = (TypeError, ValueError, IndexError, ZeroDivisionError, MemoryError, OverflowError)
UNKNOWN = object()          # a reference that cannot tell (the call may return or raise)
MAX_REF = 20000             # elements: larger results are checked by shape only

# the other spelling of a 64-bit integer: NumPy has two chars for them ('l'/'q', 'L'/'Q' on
# LP64; np.asarray([2**63]) is a 'Q'), equal dtypes that a table keyed by dtype.char tells apart
ALT_SPELLINGS = [d for d in (np.dtype("q"), np.dtype("Q"), np.dtype("l"), np.dtype("L"))
                 if d.char not in (np.dtype(np.int64).char, np.dtype(np.uint64).char)]
GOOD_DTYPES = [np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")] + ALT_SPELLINGS
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
        if 2**26 < math.prod(v.shape) * dt.itemsize < 2**35:
            # gigabytes that fit in memory: filling them takes a minute and tells nothing
            # (larger ones must fail at once, and are materialized)
            return "not materialized"
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
        if meth == "check_within" or isinstance(got, str):
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


# -- primitives through bind -----------------------------------------------------------------------

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
        def ref():
            r = _np_ref(lambda: a.reshape(tuple(_ints(shape))) if all(
                int(v) >= 0 for v in shape) else _raise("neg"))
            try:
                return r()
            except BadReference:
                sh = tuple(_ints(shape))
                if a.size == 0 and math.prod(sh) == 0 and -1 not in sh and all(
                        v >= 0 for v in sh) and math.prod(v or 1 for v in sh) < 2**63:
                    return UNKNOWN      # a huge empty shape NumPy refuses (nx_rune allows)
                raise
        return (f"reshape_p({a.shape}, {shape})", _prim_call(name, t, shape=shape), ref,
                _exact(name))
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
    if isinstance(axis, bool) and idx.ndim == a.ndim and -a.ndim <= axis < a.ndim:
        return UNKNOWN          # the kernels take True as 1 (operator.index)
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
        if a.dtype.kind == "c" and name in ("argmax", "argmin"):
            raise BadReference("complex")     # (max and min of complex values: NumPy's order)
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
# transformations (issue 13): containers of tracers, NumPy on tracers, huge sizes, in-place
# writes, and the Array API functions.  Derivatives are checked against float64 central finite
# differences of a NumPy mirror of the function (never against nx_rune itself).
# ---------------------------------------------------------------------------------------------

MODES = ("grad", "jvp", "vjp", "hvp", "eager")


def _f64(a):
    """A float64 tensor with its own copy of ``a``."""
    return nx.asarray(np.array(a, dtype=np.float64))


def _smooth_values(g, shape):
    """float64 values of ``shape``: distinct, at least 0.3 apart and 0.1 away from 0 and +-1,
    so that no kink (abs, max, sort, clip at +-1) or tie is within a finite-difference step."""
    n = math.prod(shape)
    k = g.r.permutation(np.arange(-n - 2, n + 2))[:n]
    vals = k * 0.37 + 0.17 + g.r.uniform(0.0, 0.05, n)
    return vals.reshape(shape)


def _fd(fn, x, eps=1e-6):
    """Central differences of the NumPy function ``fn`` (float64 array -> array) at ``x``:
    the Jacobian, of shape ``fn(x).shape + x.shape``."""
    flat = x.reshape(-1)
    cols = []
    for k in range(flat.size):
        e = np.zeros_like(flat)
        e[k] = eps
        hi = np.asarray(fn((flat + e).reshape(x.shape)), dtype=np.float64)
        lo = np.asarray(fn((flat - e).reshape(x.shape)), dtype=np.float64)
        cols.append((hi - lo) / (2 * eps))
    if not cols:
        return np.zeros(np.shape(fn(x)) + x.shape)
    return np.stack(cols, axis=-1).reshape(cols[0].shape + x.shape)


def _fd_hvp(loss, x, t, h=1e-4):
    """H t of the scalar NumPy function ``loss`` at ``x`` by mixed central differences."""
    flat, tf = x.reshape(-1), t.reshape(-1)
    out = np.zeros(flat.size)
    for k in range(flat.size):
        e = np.zeros_like(flat)
        e[k] = h
        s = 0.0
        for a, b in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            s += a * b * float(loss((flat + a * h * tf + b * e).reshape(x.shape)))
        out[k] = s / (4 * h * h)
    return out.reshape(x.shape)


def _derivative_ref(mode, mirror, x, w, t):
    """The expected derivative of ``mode`` for the function whose NumPy mirror is ``mirror``
    at ``x`` (cotangent / loss weights ``w``, tangent ``t``): a float64 ndarray, or None for
    "eager" (no derivative)."""
    if mode == "eager":
        return None
    if mode == "hvp":
        return _fd_hvp(lambda z: np.sum(w * np.asarray(mirror(z), np.float64)), x, t)
    J = _fd(mirror, x)
    out_nd = J.ndim - x.ndim
    if mode == "jvp":
        return np.tensordot(J, t, axes=x.ndim) if x.ndim else J * t
    return np.tensordot(w, J, axes=out_nd) if out_nd else w * J


def _run_mode(mode, f, x, w, t):
    """Run ``f`` (tensor -> tensor) at the float64 tensor ``x`` under ``mode``: returns
    (f's value, the derivative), as for :func:`_derivative_ref` (the value read from the
    finished tracer).  An output whose shape is not ``w``'s is a Mismatch (not the error the
    derivative of a wrong shape would raise)."""
    seen = []
    w = np.asarray(w)

    def f_(a):
        out = f(a)
        if tuple(out.shape) != w.shape:
            raise Mismatch(f"output shape {tuple(out.shape)} != reference {w.shape}")
        seen.append(out)
        return out

    def loss(a):
        return nx.sum(nx.asarray(w) * f_(a))
    if mode == "eager":
        return f_(x), None
    if mode == "grad":
        d = nx.grad(loss)(x)
    elif mode == "vjp":
        _, fn = nx.vjp(f_, x)
        (d,) = fn(nx.asarray(w))
    elif mode == "jvp":
        _, d = nx.jvp(f_, (x,), (nx.asarray(t),))
    else:
        _, d = nx.jvp(nx.grad(loss), (x,), (nx.asarray(t),))
    return seen[0], d


def _value_tol(dtype):
    dtype = np.dtype(dtype)
    return 1e-6 if dtype in (np.float32, np.complex64) else 2e-3 if dtype == np.float16 else 1e-9


def _compare_value_and_derivative(got, ref, what, expect=None):
    """``got`` = (value, derivative) from :func:`_run_mode`, ``ref`` = (float64 value,
    derivative); ``expect``: the dtype the value must have (None: not checked)."""
    (val, der), (rval, rder) = got, ref
    v = as_ndarray(val)
    if expect is not None and v.dtype != np.dtype(expect):
        raise Mismatch(f"{what}: dtype {v.dtype}, expected {np.dtype(expect)}")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = np.asarray(rval).astype(v.dtype) if v.dtype.kind in "iub" else np.asarray(rval)
    same(v, r, f"{what} value", rtol=_value_tol(v.dtype) if v.dtype.kind in "fc" else 0.0,
         check_dtype=False)
    if rder is None:
        return
    d = as_ndarray(der).astype(np.float64)
    if d.shape != rder.shape:
        raise Mismatch(f"{what}: derivative of shape {d.shape}, finite differences {rder.shape}")
    tol = 2e-4 if v.dtype in (np.float32, np.complex64) else 2e-5
    scale = max(1.0, float(np.max(np.abs(rder), initial=0.0)))
    bad = ~np.isclose(d, rder, rtol=tol, atol=tol * scale)
    if bad.any():
        raise Mismatch(f"{what}: derivative {d[bad][:4]} != finite differences {rder[bad][:4]} "
                       f"at {np.argwhere(bad)[:4].tolist()}")


# -- containers of tracers ----------------------------------------------------------------------

def _c_scalar(g, n, traced):
    """One 0-d element of a container: (text, nx maker, NumPy maker), each a function of the
    input (a tensor, or its float64 ndarray)."""
    kind = g.pick(["trace", "trace", "trace", "tensor", "ndarray", "py", "npscalar"]
                  if traced else ["tensor", "ndarray", "py", "npscalar"])
    if kind == "trace":
        i, c = g.small(0, n - 1), g.pick([1.0, -2.0, 0.5, 3])
        return f"a[{i}]*{c}", (lambda a: a[i] * c), (lambda a: a[i] * c)
    if kind == "tensor":
        v = g.pick([np.float64(1.5), np.float32(-0.75), np.int32(3), np.bool_(True),
                    np.float64(-2.25)])
        return f"T({v!r})", (lambda a: nx.asarray(np.asarray(v))), (lambda a: np.asarray(v))
    if kind == "ndarray":
        v = np.asarray(g.pick([1.25, -3.0, 2.0]), dtype=g.pick([np.float64, np.float32,
                                                               np.int64]))
        return f"nd({v!r})", (lambda a: v), (lambda a: v)
    if kind == "py":
        v = g.pick([1, -2, 0.5, 2.75, True])
        return repr(v), (lambda a: v), (lambda a: v)
    v = g.pick([np.float64(0.75), np.float32(1.5), np.int64(-3), np.int8(2)])
    return f"{type(v).__name__}({v})", (lambda a: v), (lambda a: v)


def _c_vector(g, n, k, traced):
    """One 1-d element of length k (a slice of the traced input, a tensor, an ndarray, or a
    nested list of scalar elements)."""
    kind = g.pick(["trace", "trace", "tensor", "ndarray", "list"] if traced and k <= n else
                  ["tensor", "ndarray", "list"])
    if kind == "trace":
        s, c = g.small(0, n - k), g.pick([1.0, -1.5, 2])
        rev = g.p(0.3)
        sl = slice(s + k - 1, s - 1 if s else None, -1) if rev else slice(s, s + k)
        return f"a[{sl.start}:{sl.stop}:{sl.step}]*{c}", (lambda a: a[sl] * c), \
            (lambda a: a[sl] * c)
    if kind in ("tensor", "ndarray"):
        arr = ((np.arange(k) + 1) * 1.25 * (-1.0) ** np.arange(k)).astype(
            g.pick([np.float64, np.float32, np.int32]))
        if kind == "tensor":
            return f"T{arr.tolist()}", (lambda a: nx.asarray(arr)), (lambda a: arr)
        return f"nd{arr.tolist()}", (lambda a: arr), (lambda a: arr)
    items = [_c_scalar(g, n, traced) for _ in range(k)]
    seq = list if g.p(0.7) else tuple
    return ("[" + ", ".join(d for d, _, _ in items) + "]",
            lambda a: seq(m(a) for _, m, _ in items), lambda a: [m(a) for _, _, m in items])


def _c_nested(g, n, traced, dims, k, ragged):
    """A nested list/tuple of shape ``dims`` whose elements are scalars (k None) or vectors of
    length k; ``ragged``: one element of another shape (NumPy refuses such a sequence)."""
    if not dims:
        kk = k
        if ragged:
            kk = g.pick([None, 1, 2, 3]) if k is None else g.pick([None, k + 1])
        return _c_scalar(g, n, traced) if kk is None else _c_vector(g, n, kk, traced)
    bad = g.small(0, dims[0] - 1) if ragged else -1
    parts = [_c_nested(g, n, traced, dims[1:], k, i == bad) for i in range(dims[0])]
    seq = list if g.p(0.7) else tuple
    return ("[" + ", ".join(d for d, _, _ in parts) + "]",
            lambda a: seq(m(a) for _, m, _ in parts), lambda a: [m(a) for _, _, m in parts])


def _container(g, n, traced, max_depth=2):
    dims = [g.small(1, 3) for _ in range(g.small(1, max_depth))]
    k = None if g.p(0.6) else g.small(1, 3)
    return _c_nested(g, n, traced, dims, k, g.p(0.06))


def _np_mirror(fn):
    """A NumPy reference computed in float64 (the refusal of NumPy means the input is bad)."""
    def ref(a):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = fn(a)
            except (TypeError, ValueError, IndexError, OverflowError) as e:
                raise BadReference(str(e)) from None
        return np.asarray(out)
    return ref


CONTAINER_OPS = ("asarray", "array", "asarray_dtype", "binary", "rbinary", "nx_binary",
                 "concatenate", "stack", "full", "full_like", "pad", "where")


@target("containers of tracers", 4)
def t_containers(g):
    """Nested lists/tuples mixing traced values (under grad/jvp/vjp/hvp), tensors, ndarrays and
    Python/NumPy scalars, given to asarray/array, binary operators, concatenate/stack, full,
    full_like, pad and where: values against NumPy on the concrete values, derivatives against
    float64 finite differences, or an exception where NumPy refuses (a traced value must
    never be refused with TracerArrayConversionError: nothing here asks NumPy for it)."""
    mode = g.pick(MODES)
    n = g.small(2, 5)
    x = _smooth_values(g, (n,))
    traced = True
    op = g.pick(CONTAINER_OPS)
    desc, make, mirror_obj = _container(g, n, traced)
    dt = None
    if op == "asarray_dtype":
        dt = g.pick([np.float64, "float64", nx.float32, np.int32, None])
    if op in ("asarray", "array", "asarray_dtype"):
        fn = nx.asarray if op != "array" else nx.array
        nx_f = (lambda a: fn(make(a), dtype=dt)) if dt is not None else (lambda a: fn(make(a)))

        def np_f(a):
            return np.asarray(mirror_obj(a), dtype=np.float64)
        text = f"nx.{'array' if op == 'array' else 'asarray'}({desc}, dtype={dt!r})"
        out_dtype = np.dtype(dt) if dt is not None else \
            np.dtype(np.float64) if "a[" in desc else None
    elif op in ("binary", "rbinary", "nx_binary"):
        sym = g.pick(["+", "-", "*", "/"])
        pyop = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                "/": operator.truediv}[sym]
        nxop = {"+": nx.add, "-": nx.subtract, "*": nx.multiply, "/": nx.divide}[sym]
        lead = g.p(0.5)
        tshape = (n,) if lead else ()

        def left(a):
            return a * 1.5 if lead else a[0] + 0.05
        if op == "binary":
            nx_f = lambda a: pyop(left(a), make(a))               # noqa: E731
            np_f = lambda a: pyop(left(a), np.asarray(mirror_obj(a), np.float64))  # noqa: E731
        elif op == "rbinary":
            nx_f = lambda a: pyop(make(a), left(a))               # noqa: E731
            np_f = lambda a: pyop(np.asarray(mirror_obj(a), np.float64), left(a))  # noqa: E731
        else:
            nx_f = lambda a: nxop(make(a), left(a))               # noqa: E731
            np_f = lambda a: pyop(np.asarray(mirror_obj(a), np.float64), left(a))  # noqa: E731
        text = f"{op} {sym}: {'a*1.5' if lead else 'a[0]+0.05'}{tshape} with {desc}"
        out_dtype = np.dtype(np.float64)
    elif op in ("concatenate", "stack"):
        items = []
        for _ in range(g.small(1, 3)):
            u = g.small(0, 3)
            if u == 0:
                s = g.small(0, n - 1)
                items.append((f"a[{s}:]", (lambda a, s=s: a[s:]), (lambda a, s=s: a[s:])))
            elif u == 1:
                items.append(_c_vector(g, n, g.small(1, 3), traced))
            else:
                items.append(_container(g, n, traced))
        axis = g.pick([0, 0, -1, 1, None])
        fn, npfn = (nx.concatenate, np.concatenate) if op == "concatenate" else \
            (nx.stack, np.stack)
        seq = list if g.p(0.8) else tuple
        nx_f = lambda a: fn(seq(m(a) for _, m, _ in items), axis=axis)  # noqa: E731

        def np_f(a):
            if axis is None and op == "stack":
                raise TypeError("stack: axis None")
            return npfn([np.asarray(m(a), np.float64) for _, _, m in items], axis=axis)
        text = f"nx.{op}([{', '.join(d for d, _, _ in items)}], axis={axis})"
        out_dtype = np.dtype(np.float64) if any("a[" in d for d, _, _ in items) else None
    elif op in ("full", "full_like"):
        u = g.small(0, 2)
        if u == 0:
            fdesc, fmake, fmirror = _c_scalar(g, n, traced)
        else:
            fdesc, fmake, fmirror = _c_vector(g, n, g.small(1, 3), traced)
        shape = tuple(g.small(0, 3) for _ in range(g.small(0, 2))) + \
            ((g.pick([1, 2, 3]),) if g.p(0.8) else ())
        fdt = g.pick([None, None, np.float64, nx.float32])
        if op == "full":
            nx_f = lambda a: nx.full(shape, fmake(a), fdt)         # noqa: E731
            text = f"nx.full({shape}, {fdesc}, {fdt!r})"
            like = None
        else:
            like = g.pick(["traced", "f32", "f64"])
            like_arr = np.zeros(shape, np.float32 if like == "f32" else np.float64)

            def nx_f(a):
                ref_t = nx.broadcast_to(a[0], shape) if like == "traced" else \
                    nx.asarray(like_arr)
                return nx.full_like(ref_t, fmake(a), fdt)
            text = f"nx.full_like({like}{shape}, {fdesc}, {fdt!r})"

        def np_f(a):
            return np.full(shape, np.asarray(fmirror(a), np.float64), dtype=np.float64)
        out_dtype = np.dtype(fdt) if fdt is not None else \
            np.dtype(np.float32) if like == "f32" else np.dtype(np.float64) if like in (
                "traced", "f64") or "a[" in fdesc else None
    elif op == "pad":
        u = g.small(0, 3)
        if u == 0:
            fdesc, fmake, fmirror = _c_scalar(g, n, traced)
        elif u == 1:
            fdesc, fmake, fmirror = _c_vector(g, n, g.pick([1, 1, 2]), traced)
        else:
            fdesc, fmake, fmirror = _container(g, n, traced)
        width = g.pick([1, (0, 2), ((1, 2),), 0])

        def nx_f(a):
            return nx.pad(a * 2.0, width, constant_values=fmake(a))

        def np_f(a):
            fill = np.asarray(fmirror(a), np.float64)
            if fill.size != 1:
                raise ValueError("nx_rune takes one scalar fill")
            return np.pad(a * 2.0, width, constant_values=fill.reshape(()))
        text = f"nx.pad(a*2, {width}, constant_values={fdesc})"
        out_dtype = np.dtype(np.float64)
    else:   # where
        cond = g.r.random(n) < 0.5
        nx_f = lambda a: nx.where(cond, make(a), a * 0.5)           # noqa: E731
        np_f = lambda a: np.where(cond, np.asarray(mirror_obj(a), np.float64), a * 0.5)  # noqa
        text = f"nx.where(cond{cond.shape}, {desc}, a*0.5)"
        out_dtype = np.dtype(np.float64)

    ref_f = _np_mirror(np_f)
    w_box, t = [], g.r.standard_normal(n)

    def ref():
        val = ref_f(x)
        w = g.r.standard_normal(val.shape)
        w_box.append(w)
        if out_dtype is not None and out_dtype.kind not in "fc":     # no derivative
            return val, (None if mode == "eager" else np.zeros(val.shape) if mode == "jvp"
                         else np.zeros(x.shape))
        return val, _derivative_ref(mode, ref_f, x, w, t)

    def call():
        try:
            return _run_mode(mode, nx_f, _f64(x), w_box[0] if w_box else np.ones(()), t)
        except TracerArrayConversionError as e:
            raise Mismatch(f"a traced value in a container was handed to NumPy: {e}") from None

    def compare(got, r):
        _compare_value_and_derivative(got, r, f"{mode} of {op}", out_dtype)
    return f"{mode}: {text}"[:300], call, ref, compare


# -- NumPy on tracers ---------------------------------------------------------------------------

def _setitem_0d(u):
    b = np.zeros(2)
    b[0] = u[0]          # NumPy reads one element through float(): raises for a differentiated u
    return b


def _fill_0d(u):
    b = np.zeros(2)
    b.fill(u[0])
    return b


def _F32(u):
    """float32 for a tracer, float64 for the NumPy mirror's ndarray."""
    return np.float64 if isinstance(u, np.ndarray) else np.float32


# name: (function of u (a tracer, or its ndarray for the reference), flags, input shapes)
#   flags: "py" Python scalars of the values are the documented result (int(), bool(): read
#   the value, as control flow may; piecewise constant, no derivative); "const": piecewise
#   constant (derivative 0); "raise": must raise (a TypeError naming the transformation:
#   TracerArrayConversionError, or DerivativeConversionError for a float or complex Python
#   number of a differentiated value (float(), .item(), .tolist(), math.sin, np.float64());
#   or "te": any TypeError, as for a concrete tensor); shapes: the shapes u may take ("v": (3,)
#   or (4,), "m": (2, 3), "s": (2, 2)).
NP_ON_TRACER = {
    "np.asarray": (np.asarray, "", "vm"),
    "np.array": (np.array, "", "vm"),
    "np.asanyarray": (np.asanyarray, "", "vm"),
    "np.ascontiguousarray": (np.ascontiguousarray, "", "vm"),
    "np.asarray(float32)": (lambda u: np.asarray(u, dtype=np.float32), "", "v"),
    "np.asarray(object)": (lambda u: np.asarray(u, dtype=object).astype(float), "", "v"),
    "np.copy": (np.copy, "", "vm"),
    "np.array([u0, u1])": (lambda u: np.array([u[0], u[1]]), "", "v"),
    "np.array([u0, 1.0])": (lambda u: np.array([u[0], 1.0]), "", "v"),
    "np.array(list(u))": (lambda u: np.array(list(u)), "", "vm"),
    "np.stack": (lambda u: np.stack([u, u]), "", "vm"),
    "np.concatenate": (lambda u: np.concatenate([u, u]), "", "vm"),
    "np.vstack": (lambda u: np.vstack([u, u]), "", "v"),
    "np.atleast_2d": (np.atleast_2d, "", "v"),
    "np.expand_dims": (lambda u: np.expand_dims(u, 0), "", "vm"),
    "np.ravel": (np.ravel, "", "vm"),
    "np.broadcast_to": (lambda u: np.broadcast_to(u, (2,) + u.shape), "", "v"),
    "np.tile": (lambda u: np.tile(u, 2), "", "v"),
    "np.pad": (lambda u: np.pad(u, 1), "", "v"),
    "np.roll": (lambda u: np.roll(u, 1), "", "v"),
    "np.sort": (np.sort, "", "vm"),
    "np.argsort": (np.argsort, "", "v"),
    "np.unique": (np.unique, "", "v"),
    "np.searchsorted": (lambda u: np.searchsorted(np.sort(u), 0.5), "", "v"),
    "np.diff": (np.diff, "", "vm"),
    "np.outer": (lambda u: np.outer(u, u), "", "v"),
    "np.dot": (lambda u: np.dot(u, u), "", "v"),
    "np.matmul": (lambda u: np.matmul(u, u.T), "", "vm"),
    "np.einsum": (lambda u: np.einsum("i,i", u, u), "", "v"),
    "np.cross": (lambda u: np.cross(u, u[::-1]), "", "3"),
    "np.linalg.norm": (np.linalg.norm, "", "vm"),
    "np.linalg.det": (np.linalg.det, "", "s"),
    "np.median": (np.median, "", "v"),
    "np.average": (np.average, "", "vm"),
    "np.ptp": (np.ptp, "", "v"),
    "np.nansum": (np.nansum, "", "v"),
    "np.percentile": (lambda u: np.percentile(u, 30), "", "v"),
    "np.allclose": (lambda u: np.allclose(u, 0), "", "v"),
    "np.isclose": (lambda u: np.isclose(u, 0), "", "v"),
    "np.isnan": (np.isnan, "", "v"),
    "np.sin": (np.sin, "", "vm"),
    "np.exp": (np.exp, "", "vm"),
    "np.abs": (np.abs, "", "v"),
    "np.add(u, 1)": (lambda u: np.add(u, 1), "", "v"),
    "np.multiply(u, u)": (lambda u: np.multiply(u, u), "", "v"),
    "np.maximum": (lambda u: np.maximum(u, 0), "", "v"),
    "np.where": (lambda u: np.where(u > 0, u, 0), "", "v"),
    "np.fft.fft": (lambda u: np.fft.fft(u).real, "", "v"),
    "np.from_dlpack": (np.from_dlpack, "", "vm"),
    "np.fromiter": (lambda u: np.fromiter(u, float), "raise", "v"),
    "ndarray[0] = u[0]": (_setitem_0d, "raise", "v"),
    "ndarray.fill(u[0])": (_fill_0d, "raise", "v"),
    "ndarray[:] = u": (lambda u: np.zeros(u.shape).__setitem__(slice(None), u), "raise", "v"),
    "memoryview": (memoryview, "raise te", "v"),
    "np.frombuffer": (np.frombuffer, "raise te", "v"),
    "u.numpy()": (lambda u: u.numpy() if not isinstance(u, np.ndarray) else u.copy(), "", "v"),
    "u.__array__()": (lambda u: u.__array__(), "", "v"),
    "u.__array_interface__": (lambda u: u.__array_interface__, "raise", "v"),
    "u.__dlpack__()": (lambda u: u.__dlpack__(), "raise", "v"),
    # NumPy calls the tracer's own method (or operator): a traced result
    "np.sum": (np.sum, "", "vm"),
    "np.sum(axis=0)": (lambda u: np.sum(u, axis=0), "", "vm"),
    "np.sum(keepdims)": (lambda u: np.sum(u, keepdims=True), "", "vm"),
    "np.sum(dtype=float64)": (lambda u: np.sum(u, dtype=np.float64), "", "v"),
    "np.mean": (np.mean, "", "vm"),
    "np.mean(axis=-1)": (lambda u: np.mean(u, axis=-1), "", "vm"),
    "np.max": (np.max, "", "vm"),
    "np.min(axis=0)": (lambda u: np.min(u, axis=0), "", "vm"),
    "np.amax": (np.amax, "", "v"),
    "np.prod": (np.prod, "", "vm"),
    "np.std": (np.std, "", "vm"),
    "np.var(ddof=1)": (lambda u: np.var(u, ddof=1), "", "v"),
    "np.cumsum": (np.cumsum, "", "vm"),
    "np.cumprod": (lambda u: np.cumprod(u, axis=0), "", "vm"),
    "np.clip": (lambda u: np.clip(u, -1, 1), "", "vm"),
    "np.transpose": (np.transpose, "", "vm"),
    "np.squeeze": (np.squeeze, "", "v"),
    "np.moveaxis": (lambda u: np.moveaxis(u, 0, -1), "", "m"),
    "np.flip": (np.flip, "", "vm"),
    "np.repeat": (lambda u: np.repeat(u, 2), "", "v"),
    "np.split": (lambda u: np.split(u, u.shape[0]), "", "vm"),
    "np.real": (np.real, "", "v"),
    "np.imag": (np.imag, "", "v"),
    "np.round": (lambda u: np.round(u, 1), "const", "v"),
    "np.argmax": (np.argmax, "const", "vm"),
    "np.any": (lambda u: np.any(u > 0), "const", "v"),
    "np.nonzero": (lambda u: np.nonzero(u > 0), "const", "v"),
    "np.shape": (np.shape, "const", "vm"),
    "np.ndim": (np.ndim, "const", "vm"),
    "np.float64(u[0])": (lambda u: np.float64(u[0]), "raise", "v"),
    "ndarray + u": (lambda u: np.ones(u.shape) + u, "", "vm"),
    "ndarray * u": (lambda u: np.arange(1.0, 1.0 + u.size).reshape(u.shape) * u, "", "vm"),
    "ndarray - u": (lambda u: np.ones(u.shape) - u, "", "v"),
    "ndarray / u": (lambda u: np.ones(u.shape) / u, "", "v"),
    "u ** ndarray": (lambda u: u ** np.full(u.shape, 2.0), "", "v"),
    "ndarray @ u": (lambda u: np.ones(u.shape) @ u, "", "v"),
    "u @ ndarray": (lambda u: u @ np.ones(u.shape[-1]), "", "vm"),
    "ndarray < u": (lambda u: np.zeros(u.shape) < u, "const", "v"),
    "np.float64 * u": (lambda u: np.float64(2.5) * u, "", "v"),
    "np.float32 + u": (lambda u: np.float32(0.5) + u, "", "v"),
    "np.int64 * u": (lambda u: np.int64(3) * u, "", "v"),
    "sum(u)": (sum, "", "v"),
    "max(u)": (max, "", "v"),
    "sorted(u)": (sorted, "", "v"),
    "abs(u)": (abs, "", "v"),
    "math.prod(u)": (math.prod, "", "v"),
    "float(u[0])": (lambda u: float(u[0]), "raise", "v"),
    "int(u[0])": (lambda u: int(u[0]), "py", "v"),
    "bool(u[0] > 0)": (lambda u: bool(u[0] > 0), "py", "v"),
    "u[0].item()": (lambda u: u[0].item(), "raise", "v"),
    "u.tolist()": (lambda u: u.tolist(), "raise", "vm"),
    "math.sin(u[0])": (lambda u: math.sin(u[0]), "raise", "v"),
    "math.fsum(u)": (math.fsum, "raise", "v"),
    "float(u[:1])": (lambda u: float(u[:1].reshape(())) if isinstance(u, np.ndarray) else
                     float(u[:1]), "raise", "v"),
    "np.sum(list of tracers)": (lambda u: np.sum([u[0], u[1]]), "", "v"),
    # (the NumPy mirror stays in float64: finite differences of float32 values are noise)
    "np.mean(dtype=float32)": (lambda u: np.mean(u, dtype=_F32(u)), "", "vm"),
    "np.cumsum(dtype=float32)": (lambda u: np.cumsum(u, dtype=_F32(u)), "", "v"),
    "np.std(ddof=1, keepdims)": (lambda u: np.std(u, ddof=1, keepdims=True), "", "vm"),
    "np.sum(axis=(0,))": (lambda u: np.sum(u, axis=(0,)), "", "vm"),
    "np.clip(a_min, a_max)": (lambda u: np.clip(u, a_min=-1, a_max=1), "", "v"),
    "np.repeat(axis=0)": (lambda u: np.repeat(u, 2, axis=0), "", "vm"),
    "np.squeeze(axis=0)": (lambda u: np.squeeze(u[None], axis=0), "", "vm"),
    "np.transpose(axes)": (lambda u: np.transpose(u[None], (1, 0) if u.ndim == 1 else
                                                  (2, 1, 0)), "", "vm"),
    "np.take(axis=0)": (lambda u: np.take(u, [0, 1], axis=0), "", "v"),
    "u.dot(ndarray)": (lambda u: u.dot(np.ones(u.shape[-1])), "", "vm"),
    "u.astype(float32)": (lambda u: u.astype(_F32(u)), "", "v"),
    "u.copy()": (lambda u: u.copy(), "", "vm"),
}

_VALUE_TYPES = (bool, int, float, np.bool_, np.number)


def _value_leaves(r, out):
    """The numeric values inside a result (nested lists/tuples): arrays, tracers, numbers."""
    if isinstance(r, (list, tuple)):
        for v in r:
            _value_leaves(v, out)
    elif isinstance(r, nx.Tensor) or (isinstance(r, np.ndarray) and r.dtype.kind in "biuf"):
        out.append(r)
    elif isinstance(r, ArrayBase) or isinstance(r, _VALUE_TYPES):
        out.append(r)
    return out


@target("NumPy on tracers", 3)
def t_numpy_on_tracers(g):
    """NumPy functions, ufuncs, conversions and protocols applied to traced values inside
    grad/jvp/vjp/hvp: TracerArrayConversionError (a TypeError) naming the transformation and
    the shape, or, where NumPy calls the tracer's own method or operator, a traced result
    whose value matches NumPy's and whose derivative matches finite differences.  A NumPy
    result computed from traced values (a silently zero derivative) fails."""
    mode = g.pick(MODES[:4])
    name = g.pick(sorted(NP_ON_TRACER))
    fn, flags, shapes = NP_ON_TRACER[name]
    kind = g.pick(shapes)
    shape = {"v": (g.small(3, 4),), "m": (2, 3), "s": (2, 2), "3": (3,)}[kind]
    x = _smooth_values(g, shape)
    c = g.pick([1.0, -1.0, 0.5])
    t = g.r.standard_normal(shape)
    names = {"grad": ("grad",), "vjp": ("vjp",), "jvp": ("jvp",), "hvp": ("grad", "jvp")}[mode]
    must_raise = "raise" in flags
    zero_derivative = "py" in flags or "const" in flags

    def mirror_leaves(z):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _value_leaves(fn(z * c), [])

    def mirror(z):
        parts = [np.asarray(v, np.float64).reshape(-1) for v in mirror_leaves(z)]
        return np.concatenate(parts) if parts else np.zeros(0)

    low = []           # a float32 result: compared with float32's precision

    def nx_f(a):
        r = fn(a * c)
        parts = []
        for v in _value_leaves(r, []):
            # a float computed by NumPy, or a Python float, from traced values has lost its
            # derivative (integers and bools carry none)
            if "py" not in flags and (isinstance(v, float) or isinstance(
                    v, (np.ndarray, np.generic)) and v.dtype.kind in "fc"):
                raise Mismatch(f"{name} returned a {type(v).__name__} computed from a traced "
                               f"value: its derivative would silently be zero")
            if getattr(v, "dtype", None) == np.float32:
                low.append(True)
            v = nx.astype(v, nx.float64) if isinstance(v, ArrayBase) else \
                nx.asarray(np.asarray(v, dtype=np.float64))
            parts.append(nx.reshape(v, (-1,)))
        return nx.concatenate(parts) if parts else nx.zeros((0,), nx.float64)

    w_box = []

    def ref():
        if must_raise:
            return UNKNOWN
        try:
            val = mirror(x)
        except (TypeError, ValueError) as e:
            raise BadReference(str(e)) from None
        w = g.r.standard_normal(val.shape)
        w_box.append(w)
        if zero_derivative:
            der = np.zeros(val.shape if mode == "jvp" else shape)
        else:
            der = _derivative_ref(mode, mirror, x, w, t)
        return val, der

    def call():
        w = w_box[0] if w_box else np.zeros(0)
        try:
            got = _run_mode(mode, nx_f, _f64(x), w, t)
        except (TracerArrayConversionError, DerivativeConversionError) as e:
            msg = str(e)
            if not any(nm in msg for nm in names) or "shape" not in msg:
                raise Mismatch(f"{name}: the message does not name the transformation "
                               f"({'/'.join(names)}) and the shape: {msg}") from None
            raise
        except TypeError as e:
            if "te" in flags:
                with np.errstate(all="ignore"):
                    try:                        # a concrete tensor must refuse it too
                        fn(nx.asarray(x))
                    except TypeError:
                        raise e from None
                raise Mismatch(f"{name}: TypeError for a tracer, none for a tensor: {e}") \
                    from None
            raise Mismatch(f"{name}: TypeError that is not TracerArrayConversionError: "
                           f"{type(e).__name__}: {e}") from None
        except Mismatch:
            raise
        except Exception as e:
            if must_raise and isinstance(e, ValueError) and isinstance(
                    e.__cause__, DerivativeConversionError):
                # NumPy's element assignment turns the refused float() into "setting an
                # array element with a sequence" (JAX's tracers give the same), caused by it
                raise
            raise Mismatch(f"{name}: {type(e).__name__} where NumPy answers: {e}") from None
        if must_raise:
            raise Mismatch(f"{name} returned for a traced value (it must raise)")
        return (as_ndarray(got[0]).astype(np.float32), got[1]) if low else got

    def compare(got, r):
        _compare_value_and_derivative(got, r, f"{mode} of {name}")
    return f"{mode}: {name} on a traced {shape} (x {c})", call, ref, compare


# -- huge sizes -----------------------------------------------------------------------------------

class ShapeOnly:
    """A reference that knows the result's shape only (too big to compare, or one NumPy
    refuses to make): the call returns a result of this shape, or raises."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __repr__(self):
        return f"ShapeOnly{self.shape}"


_MAX_BYTES = 2**40          # nothing this big can be allocated: the call must raise


def _size_ref(shape, itemsize, make, view=False):
    """The reference for a result of ``shape`` (Python ints): BadReference when no array can
    have it (a negative size, more than 2**63 - 1 elements counting the nonzero sizes, or,
    unless ``view``, more bytes than can exist), the shape only when it is too big to compare,
    else ``make()`` (NumPy's answer; shape only where NumPy refuses a huge empty shape)."""
    if any(d < 0 for d in shape):
        raise BadReference("negative size")
    if math.prod(d or 1 for d in shape) > 2**63 - 1:
        raise BadReference("more than 2**63 - 1 elements")
    n = math.prod(shape)
    if not view and n * itemsize > _MAX_BYTES:
        raise BadReference("too big for memory")
    if n > MAX_REF or max(shape, default=0) > 2**40:
        return ShapeOnly(shape)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return make()
        except (ValueError, MemoryError, OverflowError, TypeError):
            if n == 0:
                return ShapeOnly(shape)
            raise


def _big(g, small=(0, 1, 2, 3)):
    """A size: a huge one (both signs) half of the time, else a small one."""
    return g.pick(HUGE_INTS) if g.p(0.5) else g.pick(small)


def _tame(dims, itemsize):
    """``dims`` with a huge size replaced by 0 where the result would fit in memory but be
    large (2**22 .. 2**35 bytes): such a call would allocate gigabytes, slowly, before the
    reference could tell anything."""
    dims = list(dims)
    n = math.prod(dims) if all(isinstance(d, int) and d >= 0 for d in dims) else 0
    if dims and 2**22 < n * itemsize < 2**35:
        dims[int(np.argmax(dims))] = 0
    return tuple(dims)


HUGE_CASES = ("zeros", "full", "reshape", "broadcast_to", "slice", "index", "pad", "repeat",
              "tile", "as_strided", "linspace", "arange", "eye", "roll", "diag", "tri_k",
              "split", "random", "diff", "rot90", "pieces")


@target("huge sizes", 3)
def t_huge(g):
    """Shapes, slice starts/stops/steps, pad widths, reshape targets, broadcast shapes, repeat
    counts, tile reps, as_strided strides/offsets, linspace num, arange spans, eye/tri/diag
    offsets, roll shifts, random shapes near and beyond 2**31, 2**32, 2**62, 2**63, 2**64: the
    result NumPy gives (or one of the right shape, where it is too big to compare or NumPy
    refuses a huge empty shape), or ValueError/TypeError/IndexError naming the argument (or
    MemoryError/OverflowError); never a crash or a wrong shape."""
    case = g.pick(HUGE_CASES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        desc, call, ref, names = _huge_case(g, case)

    def checked():
        try:
            return call()
        except (ValueError, TypeError, IndexError) as e:
            msg = str(e).lower()
            if names and not any(nm.lower() in msg for nm in names):
                raise Mismatch(f"{type(e).__name__} does not name the argument "
                               f"({' / '.join(names)}): {e}") from None
            raise

    def compare(got, r):
        if isinstance(r, ShapeOnly):
            if tuple(got.shape) != r.shape:
                raise Mismatch(f"{case}: shape {tuple(got.shape)} != {r.shape}")
            return
        if isinstance(r, list):
            if len(got) != len(r):
                raise Mismatch(f"{case}: {len(got)} parts != {len(r)}")
            for a, b in zip(got, r):
                same(a, b, case, check_dtype=False)
            return
        gv = as_ndarray(got)
        if gv.dtype.kind in "iu" and np.asarray(r).dtype == object:
            if gv.tolist() != np.asarray(r).tolist():
                raise Mismatch(f"{case}: values {gv.tolist()[:4]} != {np.asarray(r).tolist()[:4]}")
            return
        same(gv, r, case, rtol=1e-6 if gv.dtype.kind == "f" else 0.0, check_dtype=False)
    return f"{case}: {desc}"[:300], checked, _guard(ref), compare


def _huge_case(g, case):
    """(description, call, reference, argument names an error must mention)."""
    if case in ("zeros", "full"):
        dt = np.dtype(g.pick(["float32", "float64", "int8", "bool", "complex128"]))
        as_int = g.p(0.1)                      # the shape as an int
        shape = _tame([_big(g) for _ in range(1 if as_int else g.small(1, 3))], dt.itemsize)
        if as_int:
            shape = shape[0]
        fill = g.pick([1, 2.5, -3])
        sh = (shape,) if isinstance(shape, int) else shape
        if case == "zeros":
            fn = g.pick([nx.zeros, nx.ones, nx.empty])
            make = {nx.zeros: lambda: np.zeros(sh, dt), nx.ones: lambda: np.ones(sh, dt),
                    nx.empty: lambda: None}[fn]

            def ref():
                r = _size_ref(sh, dt.itemsize, make)
                return ShapeOnly(sh) if fn is nx.empty else r
            return f"nx.{fn.__name__}({shape}, {dt})", lambda: fn(shape, dt), ref, ["shape"]
        return (f"nx.full({shape}, {fill}, {dt})", lambda: nx.full(shape, fill, dt),
                lambda: _size_ref(sh, dt.itemsize, lambda: np.full(sh, fill, dt)), ["shape"])
    if case == "reshape":
        n0 = g.pick([0, 0, 1, 6])
        x = np.arange(n0, dtype=np.float32).reshape(g.pick([(n0,), (n0, 1)]) if n0 else
                                                     g.pick([(0,), (0, 3), (2, 0)]))
        target_ = [g.pick([-1, 0, 1, 2, 3, 6] + HUGE_INTS) for _ in range(g.small(1, 3))]

        def ref():
            if sum(d == -1 for d in target_) > 1 or any(d < -1 for d in target_):
                raise BadReference("shape")
            known = math.prod(d for d in target_ if d != -1)
            if -1 in target_:
                if known == 0 or x.size % known:
                    raise BadReference("-1 cannot be inferred")
                shape = [x.size // known if d == -1 else d for d in target_]
            else:
                shape = target_
                if math.prod(shape) != x.size:
                    raise BadReference("size")
            return _size_ref(shape, 4, lambda: x.reshape(shape), view=True)
        return (f"nx.reshape({x.shape}, {tuple(target_)})",
                lambda: nx.reshape(nx.asarray(x), tuple(target_)), ref, ["shape"])
    if case == "broadcast_to":
        x = np.arange(g.pick([1, 1, 3]), dtype=np.float32).reshape(g.pick([(-1,), (1, -1)]))
        shape = [_big(g, (0, 1, 2, 3)) for _ in range(g.small(1, 3))] + \
            ([x.shape[-1]] if g.p(0.7) else [])

        def ref():
            if any(d < 0 for d in shape) or len(shape) < x.ndim:
                raise BadReference("shape")
            for have, want in zip(x.shape[::-1], shape[::-1]):
                if have != 1 and have != want:
                    raise BadReference("broadcast")
            return _size_ref(shape, 4, lambda: np.broadcast_to(x, shape), view=True)
        return (f"nx.broadcast_to({x.shape}, {tuple(shape)})",
                lambda: nx.broadcast_to(nx.asarray(x), tuple(shape)), ref, ["shape"])
    if case in ("slice", "index"):
        a = np.arange(g.pick([0, 1, 5, 6]), dtype=np.int16)
        if case == "slice":
            parts = tuple(_big(g, (None, 0, 1, -1, 3, -4)) for _ in range(3))
            if parts[2] == 0:
                parts = parts[:2] + (None,)
            sl = slice(*parts)
            traced = g.p(0.3) and a.size > 0

            def call():
                if not traced:
                    return nx.asarray(a)[sl]
                af = a.astype(np.float64)
                grad = nx.grad(lambda z: nx.sum(z[sl] * 2.0))(_f64(af))
                want = np.zeros(a.size)
                want[sl] = 2.0
                same(grad, want, "grad through the slice")
                return nx.asarray(a)[sl]
            return f"x{a.shape}[{sl}] (traced: {traced})", call, lambda: a[sl], []
        idx = _big(g, (0, -1, 2))
        if g.p(0.3):
            idx = [idx]

        def ref():
            try:
                return a[idx]
            except (IndexError, ValueError, OverflowError, TypeError) as e:
                raise BadReference(str(e)) from None
        return f"x{a.shape}[{idx!r}]", lambda: nx.asarray(a)[idx], ref, ["index"]
    if case == "pad":
        x = np.ones(g.pick([(0,), (2,), (0, 2), (2, 0), (1, 1)]), np.float32)
        widths = [[_big(g, (0, 1, 2)), _big(g, (0, 1, 2))] for _ in range(x.ndim)]
        out = [d + b + c for d, (b, c) in zip(x.shape, widths)]
        if all(v >= 0 for v in out) and 2**22 < math.prod(out) * 4 < 2**35:
            widths[int(np.argmax(out))] = [0, 0]
        widths = [tuple(w) for w in widths]

        def ref():
            if any(b < 0 or c < 0 for b, c in widths):
                raise BadReference("negative width")
            shape = [d + b + c for d, (b, c) in zip(x.shape, widths)]
            return _size_ref(shape, 4, lambda: np.pad(x, widths), view=True)   # a padded view
        return (f"nx.pad({x.shape}, {widths})", lambda: nx.pad(nx.asarray(x), widths), ref,
                ["pad_width"])
    if case == "repeat":
        x = np.arange(g.pick([0, 1, 3]), dtype=np.float32)
        reps = _big(g, (0, 1, 2))
        if g.p(0.3) and x.size:
            reps = [_big(g, (0, 1, 2)) for _ in range(x.size)]
        total = sum(reps) if isinstance(reps, list) else reps * x.size
        if total > 0 and 2**22 < total * 4 < 2**35:
            reps = [0] * x.size if isinstance(reps, list) else 0

        def ref():
            r = reps if isinstance(reps, list) else [reps] * x.size
            if any(v < 0 for v in r) or (not isinstance(reps, list) and reps < 0):
                raise BadReference("negative")
            if any(v > 2**63 - 1 for v in r) or (not isinstance(reps, list) and
                                                  reps > 2**63 - 1):
                raise BadReference("not an int64")
            return _size_ref([sum(r)], 4, lambda: np.repeat(x, reps))
        return (f"nx.repeat({x.shape}, {reps})", lambda: nx.repeat(nx.asarray(x), reps), ref,
                ["repeats"])
    if case == "tile":
        x = np.arange(g.pick([0, 1, 3]), dtype=np.float32)
        reps = _tame([_big(g, (0, 1, 2)) for _ in range(g.small(1, 2))], 4 * max(x.size, 1))

        def ref():
            if any(v < 0 for v in reps):
                raise BadReference("negative")
            xs = (1,) * (len(reps) - x.ndim) + x.shape
            rs = (1,) * (x.ndim - len(reps)) + tuple(reps)
            return _size_ref([a * b for a, b in zip(xs, rs)], 4, lambda: np.tile(x, reps))
        return (f"nx.tile({x.shape}, {reps})", lambda: nx.tile(nx.asarray(x), tuple(reps)), ref,
                ["repetitions", "reps"])
    if case == "as_strided":
        x = np.arange(6, dtype=np.float32)
        shape = _tame([g.pick([0, 1, 2, 3]) if g.p(0.7) else _big(g) for _ in
                       range(g.small(1, 2))], 4)
        strides = [_big(g, (0, 1, -1, 2)) for _ in shape]
        offset = _big(g, (0, 1, 5))

        def ref():
            _size_ref(shape, 4, lambda: None, view=True)     # sizes that no view can have
            if math.prod(shape) == 0:
                return UNKNOWN if offset < 0 or offset > 2**63 - 1 else _size_ref(
                    shape, 4, lambda: np.empty(shape, np.float32), view=True)
            return view_reference(x, shape, strides, offset)
        return (f"nx.as_strided(6, {shape}, {strides}, {offset})",
                lambda: nx.as_strided(nx.asarray(x), tuple(shape), tuple(strides), offset), ref,
                ["shape", "strides", "offset"])
    if case == "linspace":
        num = _big(g, (0, 1, 2, 5))
        lo, hi = g.pick([0, -2**63, 2**62, 1.5]), g.pick([1, 2**64, -2**31, 10**30])
        num = _tame([num], 8)[0]

        def ref():
            if num < 0:
                raise BadReference("num")
            return _size_ref([num], 4, lambda: np.linspace(float(lo), float(hi), num))
        return (f"nx.linspace({lo}, {hi}, {num})", lambda: nx.linspace(lo, hi, num), ref,
                ["num"])
    if case == "arange":
        start = _big(g, (0, 1, -3))
        step = g.pick([1, -1, 3, 2**31, 2**62, -2**62, 2**63 - 1, 2**64, 2**40 + 1])
        span = g.pick([0, 3, 7, -5]) * abs(step) + g.small(0, 2) if g.p(0.8) else _big(g)
        stop = start + span
        if 2**22 < max(0, -(-(stop - start) // step)) * 8 < 2**35:
            stop = start                         # (gigabytes: slow, and tells nothing)

        def ref():
            n = max(0, -(-(stop - start) // step))
            if n * 4 > _MAX_BYTES:
                raise BadReference("too long")
            if n > MAX_REF:
                return ShapeOnly((n,))
            vals = [start + k * step for k in range(n)]
            if vals and (min(vals) < -2**63 or max(vals) > 2**64 - 1 or
                         (min(vals) < 0 and max(vals) > 2**63 - 1)):
                raise BadReference("no integer dtype holds the values")
            return np.array(vals, dtype=object)
        return (f"nx.arange({start}, {stop}, {step})", lambda: nx.arange(start, stop, step),
                ref, ["arange", "start", "stop", "step"])
    if case == "eye":
        n, m, k = _big(g, (0, 1, 3)), g.pick([None, 0, 2] + HUGE_INTS), _big(g, (0, 1, -1))
        if n > 0 and 2**22 < n * (n if m is None else m) * 4 < 2**35:
            n = 0

        def ref():
            mm = n if m is None else m
            if n < 0 or mm < 0:
                raise BadReference("negative")
            return _size_ref([n, mm], 4, lambda: np.eye(n, mm, k=k, dtype=np.float32))
        return f"nx.eye({n}, {m}, k={k})", lambda: nx.eye(n, m, k=k), ref, ["n", "m", "k"]
    if case == "roll":
        x = np.arange(g.pick([0, 1, 5, 6]), dtype=np.int32)
        shift = _big(g, (0, 1, -2))
        return (f"nx.roll({x.shape}, {shift})", lambda: nx.roll(nx.asarray(x), shift),
                lambda: np.roll(x, shift % x.size if x.size else 0), ["shift"])
    if case == "diag":
        k = _big(g, (0, 1, -2))
        if g.p(0.5):
            x = np.arange(1, g.pick([1, 3, 4]), dtype=np.float32)

            def ref():
                return _size_ref([x.size + abs(k)] * 2, 4, lambda: np.diag(x, k))
        else:
            x = np.arange(6, dtype=np.float32).reshape(2, 3)

            def ref():          # (NumPy's own offset overflows for k = -2**31)
                return np.diag(x, max(min(k, 5), -5))
        return f"nx.diag({x.shape}, {k})", lambda: nx.diag(nx.asarray(x), k), ref, ["k"]
    if case == "tri_k":
        x = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
        k = _big(g, (0, 1, -1))
        fn = g.pick(["triu", "tril"])
        npfn = np.triu if fn == "triu" else np.tril
        kk = max(min(k, 10), -10)
        return (f"nx.{fn}({x.shape}, {k})", lambda: getattr(nx, fn)(nx.asarray(x), k),
                lambda: npfn(x, kk), ["k"])
    if case == "split":
        x = np.arange(g.pick([0, 4, 6]), dtype=np.float32)
        idx = sorted(_big(g, (0, 1, 2, 3)) for _ in range(g.small(1, 2)))
        clipped = [min(max(v, -x.size - 1), x.size + 1) for v in idx]

        def ref():
            return np.split(x, clipped)
        return (f"nx.split({x.shape}, {idx})", lambda: nx.split(nx.asarray(x), idx), ref,
                ["sections", "indices"])
    if case == "random":
        key = nx.random.key(g.small(0, 3))
        shape = _tame([_big(g, (0, 1, 2)) for _ in range(g.small(1, 2))], 4)
        fn = g.pick(["uniform", "normal", "bits", "randint", "bernoulli"])

        def call():
            if fn == "randint":
                return nx.random.randint(key, tuple(shape), 0, 10)
            if fn == "bernoulli":
                return nx.random.bernoulli(key, 0.5, tuple(shape))
            return getattr(nx.random, fn)(key, tuple(shape))

        def ref():
            _size_ref(shape, 4, lambda: None)       # raises where no result can exist
            return ShapeOnly(shape)
        return f"nx.random.{fn}(key, {tuple(shape)})", call, ref, ["shape"]
    if case == "diff":
        x = np.arange(g.pick([0, 3, 5]), dtype=np.float64) ** 2
        n = _big(g, (0, 1, 2))

        def ref():
            if n < 0:
                raise BadReference("n")
            return np.diff(x, min(n, x.size + 1)) if x.size or n == 0 else np.zeros(0)
        return f"nx.diff({x.shape}, {n})", lambda: nx.diff(nx.asarray(x), n), ref, ["n"]
    if case == "pieces":        # calls that return one tensor per piece
        k = _big(g, (0, 1, 2, 3))
        fn = g.pick(["array_split", "split", "unstack"])
        x = np.arange(g.pick([0, 6]), dtype=np.float32)

        def ref():
            if k < 0 or (k == 0 and fn != "unstack"):
                raise BadReference("no pieces")
            if k > 2**26:
                raise BadReference("more tensors than memory holds")
            if fn == "array_split":
                return np.array_split(x, k)
            if fn == "split":
                return np.split(x[:0], k)
            return list(np.zeros((k, 0), np.float32))

        def call():
            if fn == "array_split":
                return nx.array_split(nx.asarray(x), k)
            if fn == "split":
                return nx.split(nx.asarray(x[:0]), k)
            return list(nx.unstack(nx.zeros((k, 0))))
        return (f"nx.{fn}({x.shape if fn == 'array_split' else (0,)}, {k})", call, ref,
                ["indices_or_sections", "sections", "axis", "shape"])
    x = np.arange(6, dtype=np.int16).reshape(2, 3)          # rot90
    k = _big(g, (0, 1, -1, 3))
    return (f"nx.rot90({x.shape}, {k})", lambda: nx.rot90(nx.asarray(x), k),
            lambda: np.rot90(x, k % 4), ["k"])


# -- in-place writes -----------------------------------------------------------------------------

def _write_views(g, shape):
    """A chain of views to apply to a base of ``shape`` (the same on a tensor and an ndarray):
    a list of (name, nx function, NumPy function); NumPy None: the view is read-only in
    nx_rune (padded or broadcast)."""
    chain = []
    nd = len(shape)
    for _ in range(g.small(0, 2)):
        kind = g.pick(["flip", "T", "step", "slice", "moveaxis", "newaxis", "unpad"])
        if nd == 0 and kind in ("flip", "T", "step", "slice", "moveaxis", "unpad"):
            kind = "newaxis"
        if kind == "flip":
            ax = g.small(0, nd - 1)
            chain.append((f"flip({ax})", lambda t, ax=ax: nx.flip(t, ax),
                          lambda a, ax=ax: np.flip(a, ax)))
        elif kind == "T":
            chain.append(("T", lambda t: t.T, lambda a: a.T))
        elif kind == "step":
            chain.append(("[..., ::-2]", lambda t: t[..., ::-2], lambda a: a[..., ::-2]))
        elif kind == "slice":
            chain.append(("[1:]", lambda t: t[1:], lambda a: a[1:]))
        elif kind == "moveaxis":
            chain.append(("moveaxis(0, -1)", lambda t: nx.moveaxis(t, 0, -1),
                          lambda a: np.moveaxis(a, 0, -1)))
        elif kind == "newaxis":
            chain.append(("[None]", lambda t: t[None], lambda a: a[None]))
            nd += 1
        else:       # a padded view cut back to its data: a plain (writable) view again
            chain.append(("pad(1)[1:-1]", lambda t: nx.pad(t, 1)[(slice(1, -1),) * t.ndim],
                          lambda a: a[...]))
    final = np.empty(shape, np.int8)
    for _, _, npf in chain:
        final = npf(final)
    u = g.r.random()
    if u < 0.1 and final.ndim:
        chain.append(("pad(1)", lambda t: nx.pad(t, 1), None))
    elif u < 0.17 and final.ndim and final.shape[-1] > 1:
        # an empty broadcast view has no elements sharing memory: writes into it are no-ops
        chain.append(("broadcast", lambda t: nx.broadcast_to(t[..., :1], t.shape),
                      (lambda a: a) if final.size == 0 else None))
    elif u < 0.2 and final.ndim:
        chain.append(("pad(1)[:-1]", lambda t: nx.pad(t, 1)[:-1], None))
    return chain


def _write_value(g, shape, dt):
    """A value to write: a Python scalar, an ndarray or tensor of a shape that (mostly)
    broadcasts to ``shape``, a list."""
    u = g.r.random()
    if u < 0.35:
        return g.pick([0, 1, -1, 7, 300, -2**40, 2.5, -0.5, float("nan"), float("inf"), True,
                       1j, 2 + 0j, np.float32(1.5), np.int8(-3), np.uint8(200)])
    vshape = tuple(d if g.p(0.7) else 1 for d in shape)[g.small(0, len(shape)):] \
        if g.p(0.9) else g.shape(max_ndim=2)
    vdt = dt if g.p(0.6) else g.dtype(0)
    v = g.values(vshape, vdt)
    if u < 0.55:
        return nx.asarray(v)
    if u < 0.65 and v.ndim:
        return v.tolist()
    return v


def _as_np(v):
    """The ndarray nx_rune makes of a value: a tensor's own; Python data with JAX's x32
    defaults (float64 -> float32, complex128 -> complex64, int64 -> int32 where it fits)."""
    if isinstance(v, nx.Tensor):
        return np.asarray(v)
    if isinstance(v, list):
        a = np.asarray(v)
        if a.dtype == np.float64:
            return a.astype(np.float32)
        if a.dtype == np.complex128:
            return a.astype(np.complex64)
        if a.dtype == np.int64 and (a.size == 0 or (a.min() >= -2**31 and a.max() < 2**31)):
            return a.astype(np.int32)
        return a
    return v


IOPS = [("+=", operator.iadd), ("-=", operator.isub), ("*=", operator.imul),
        ("/=", operator.itruediv), ("//=", operator.ifloordiv), ("%=", operator.imod),
        ("**=", operator.ipow), ("&=", operator.iand), ("|=", operator.ior),
        ("^=", operator.ixor), ("<<=", operator.ilshift), (">>=", operator.irshift),
        ("@=", operator.imatmul)]


@target("in-place writes", 3)
def t_inplace(g):
    """``x[idx] = v`` and ``x op= v`` on views (flipped, transposed, stepped, sliced, moved,
    a padded view cut back to its data; padded, broadcast and read-only ones must raise
    ValueError) against NumPy doing the same on copies: the whole base must match afterwards.
    A third of the calls write, under grad/vjp/linearize, into memory a recorded operation
    needs: ModifiedInPlaceError when the write touches it after the recording, else the
    gradient of finite differences (with the values the operation saw); some write into a
    traced value itself (it is rebound), under grad/jvp/vjp/hvp, against finite differences
    of NumPy doing the same writes on copies."""
    u = g.r.random()
    if u < 0.3:
        return _inplace_recorded(g)
    if u < 0.45:
        return _inplace_traced(g)
    dt = np.dtype(g.pick(["float64", "float32", "int32", "int8", "uint8", "bool", "complex64",
                          "int64", "float16", "uint32"]))
    shape = g.shape(max_ndim=3, max_dim=3)
    vals = g.values(shape, dt)
    readonly = g.p(0.07)
    src = vals.copy()
    if readonly:
        src.flags.writeable = False
    base, ref_base = nx.asarray(src), vals.copy()
    chain = _write_views(g, shape)
    x, rx = base, ref_base
    for _, f, npf in chain:
        x = f(x)
        rx = npf(rx) if npf is not None and rx is not None else None
    unwritable = readonly or rx is None
    if g.p(0.5):
        index = _random_index(g, np.empty(x.shape, np.int8))
        value = _write_value(g, _np_index_shape(x.shape, index), dt)
        what = f"x[{index!r}] = {_short(value)}"

        def write(t, v):
            t[index] = v
        np_write = write
        setitem = True       # (Python data keeps its precision: cast as NumPy's setitem)
    else:
        sym, op = g.pick(IOPS)
        value = _write_value(g, x.shape, dt)
        if sym == "@=" and x.ndim == 2 and x.shape[0] == x.shape[1] and g.p(0.7):
            value = g.values(x.shape, dt if g.p(0.8) else g.dtype(0))
        if g.p(0.12) and not unwritable:
            value = "overlap"          # the operand is a view of the same memory
        what = f"x {sym} {_short(value)}"

        def write(t, v):
            r = op(t, v)
            if r is not t:
                raise Mismatch(f"{sym} returned a new object, not x")

        def np_write(a, v):
            op(a, v)
        setitem = False      # (Python data is an operand: JAX's x32 defaults)
    desc = (f"{dt}{shape} {'read-only ' if readonly else ''}view "
            f"{'.'.join(n for n, _, _ in chain) or 'x'}{x.shape}: {what}")

    def operand_for(t, arr):
        if isinstance(value, str):
            return (nx.flip(t) if t.ndim else t) if isinstance(t, nx.Tensor) else \
                (np.flip(arr) if arr.ndim else arr)
        if isinstance(t, nx.Tensor):
            return value
        return value.numpy() if isinstance(value, nx.Tensor) else value if setitem else \
            _as_np(value)

    def ref():
        if unwritable:
            raise BadReference("a read-only view")
        a = ref_base.copy()
        v = a                   # the chain again, on a copy of the base

        for _, _, npf in chain:
            v = npf(v)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                np_write(v, operand_for(None, v))
            except (TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError) as e:
                if v.ndim == 0 and np.size(operand_for(None, v)) == 1 and setitem:
                    return UNKNOWN    # NumPy refuses one value of shape (1,) into a 0-d array
                raise BadReference(f"{type(e).__name__}: {e}") from None
            except np.exceptions.ComplexWarning:
                raise BadReference("NumPy discards the imaginary part") from None
            except Warning:
                return UNKNOWN
        return a

    def call():
        before = np.array(np.asarray(base), copy=True)
        try:
            write(x, operand_for(x, None))
        except ACCEPTED as e:
            if not np.array_equal(np.asarray(base), before, equal_nan=True):
                raise Mismatch(f"{type(e).__name__} raised after writing into the base: "
                               f"{e}") from None
            raise
        return base

    def compare(got, r):
        # a few ulps for floats (the complex power may round differently from NumPy's)
        tol = 2e-3 if dt == np.float16 else 4 * np.finfo(dt).eps if dt.kind in "fc" else 0.0
        same(got, r, "the base after the write", rtol=tol)
    return desc[:300], call, ref, compare


def _short(v):
    if isinstance(v, (np.ndarray, nx.Tensor)):
        return f"{type(v).__name__}{v.dtype}{v.shape}"
    if isinstance(v, list):
        return f"list{np.shape(v)}"
    return repr(v)


def _np_index_shape(shape, index):
    """The shape ``np.empty(shape)[index]`` has (the shape of x itself where NumPy refuses)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.empty(shape, np.int8)[index].shape
    except Exception:
        return shape


TRACED_VIEWS = {
    # name: (view of x, ndim of x it needs); the same expression on a tracer and an ndarray
    "x": (lambda x: x, 1),
    "x[::-1]": (lambda x: x[::-1], 1),
    "x[1:]": (lambda x: x[1:], 1),
    "x[..., ::2]": (lambda x: x[..., ::2], 1),
    "x.T": (lambda x: x.T, 2),
    "x[0]": (lambda x: x[0], 2),
    "x.reshape(-1)": (lambda x: x.reshape(-1), 2),
    "x[:, ::-1].T": (lambda x: x[:, ::-1].T, 2),
}


def _inplace_traced(g):
    """``v[idx] = val`` then ``v op= y`` on a view v of a traced x (or x itself), with another
    view of x taken before the writes: on arrays both views share x's memory, so x and the
    earlier view see every write; under grad/jvp/vjp/hvp the tracers must follow the same."""
    mode = g.pick(MODES[:4])
    n = g.small(2, 4)
    shape = g.pick([(n,), (2, n)])
    names = sorted(k for k, (_, nd) in TRACED_VIEWS.items() if nd <= len(shape))
    vname, pname = g.pick(names), g.pick(names)
    view, pre_view = TRACED_VIEWS[vname][0], TRACED_VIEWS[pname][0]
    vshape = view(np.empty(shape)).shape
    w0 = _smooth_values(g, shape)
    index = _random_index(g, np.empty(vshape, np.int8))
    ishape = _np_index_shape(vshape, index)
    vkind = g.pick(["const", "scalar", "traced scalar", "traced"])
    vc = g.r.standard_normal(ishape[g.small(0, len(ishape)):])
    sym, op = g.pick(IOPS[:4])

    def value(w, lib):
        if vkind == "const":
            return vc
        if vkind == "scalar":
            return 0.75
        s = (nx.sum(w) if lib is nx else np.sum(w)) * 0.3
        if vkind == "traced scalar" or tuple(ishape) != tuple(vshape):
            return s
        return view(w)[::-1] * -2.0 + s

    def f(w):
        x = w * 1.5
        pre = pre_view(x)
        v = view(x)
        v[index] = value(w, nx)
        r = op(v, view(w) * 0.5 + 2.0)
        if r is not v:
            raise Mismatch(f"{sym} on a tracer returned a new object")
        return nx.concatenate([x.reshape(-1), pre.reshape(-1) * 0.5])

    def mirror(w):
        x = w * 1.5
        pre = pre_view(x)
        v = view(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            v[index] = value(w, np)
        op(v, view(w) * 0.5 + 2.0)
        return np.concatenate([x.reshape(-1), pre.reshape(-1) * 0.5])
    ref_f = _np_mirror(mirror)
    t = g.r.standard_normal(shape)
    w_box = []

    def ref():
        try:
            val = ref_f(w0)
        except Warning:
            return UNKNOWN
        w = g.r.standard_normal(val.shape)
        w_box.append(w)
        return val, _derivative_ref(mode, ref_f, w0, w, t)

    def call():
        return _run_mode(mode, f, _f64(w0), w_box[0] if w_box else np.ones(shape), t)

    def compare(got, r):
        _compare_value_and_derivative(got, r, f"{mode} of traced writes", np.float64)
    return (f"{mode}: x = w{shape} * 1.5; pre = {pname}; v = {vname}; v[{index!r}] = {vkind}; "
            f"v {sym} w*0.5+2"[:300],
            call, ref, compare)


RECORD_OPS = {
    # name: (nx function of (w, c), NumPy mirror, whether its derivative reads c)
    "w * c": (lambda w, c: w * c, lambda w, c: w * c, True),
    "sin(w * c)": (lambda w, c: nx.sin(w * c), lambda w, c: np.sin(w * c), True),
    "w / c": (lambda w, c: w / c, lambda w, c: w / c, True),
    "w + c": (lambda w, c: w + c, lambda w, c: w + c, False),
    "exp(c) * w": (lambda w, c: nx.exp(c) * w, lambda w, c: np.exp(c) * w, False),
    "c[::-1] * w": (lambda w, c: c[::-1] * w, lambda w, c: c[::-1] * w, True),
    "sum(w * c) * w": (lambda w, c: nx.sum(w * c) * w, lambda w, c: np.sum(w * c) * w, True),
}


def _inplace_recorded(g):
    n = g.small(2, 5)
    base_np = np.round(_smooth_values(g, (2 * n,)), 3) + 0.0
    off = g.small(0, n)
    c_sl = slice(off, off + n) if g.p(0.7) else slice(off + n - 1 if off else n - 1,
                                                     off - 1 if off else None, -1)
    c_ids = np.arange(2 * n)[c_sl]
    opname = g.pick(sorted(RECORD_OPS))
    nx_op, np_op, needs_c = RECORD_OPS[opname]
    when = g.pick(["after", "after", "after", "before"])
    how = g.pick(["grad", "vjp", "linearize"]) if when == "after" else "grad"
    kind = g.small(0, 3)
    if kind == 0:
        idx = g.small(0, 2 * n - 1)
        write_ids = np.array([idx])
        wdesc = f"base[{idx}] = 0.5"

        def do_write(b):
            b[idx] = 0.5
    elif kind == 1:
        st = g.pick([2, 3, -1, -2])
        start = g.small(0, 2 * n - 1)
        sl = slice(start, None, st)
        write_ids = np.arange(2 * n)[sl]
        wdesc = f"base[{start}::{st}] *= 2"

        def do_write(b):
            b[sl] *= 2.0
    elif kind == 2:
        k = g.small(0, n)
        write_ids = np.arange(2 * n)[:k] if g.p(0.5) else np.arange(2 * n)[2 * n - k:]
        ids = write_ids.copy()
        wdesc = f"base[{ids.tolist()}] += 1"

        def do_write(b):
            b[ids] += 1.0
    else:
        mask = g.r.random(2 * n) < 0.3
        write_ids = np.flatnonzero(mask)
        wdesc = f"base[mask {write_ids.tolist()}] = -1"

        def do_write(b):
            b[mask] = -1.0
    touched = bool(np.intersect1d(write_ids, c_ids).size)
    after_vals = base_np.copy()
    for_np = after_vals
    if kind == 0:
        for_np[write_ids] = 0.5
    elif kind == 1:
        for_np[write_ids] *= 2.0
    elif kind == 2:
        for_np[write_ids] += 1.0
    else:
        for_np[write_ids] = -1.0
    c_seen = (base_np if when == "after" else after_vals)[c_sl]
    w0 = g.r.standard_normal(n)
    cot = g.r.standard_normal(n)
    expect_error = when == "after" and touched and needs_c
    desc = (f"{how}: y = {opname} (c = base[{c_sl.start}:{c_sl.stop}:{c_sl.step}]); "
            f"{wdesc} {when} the recording")

    def call():
        base = _f64(base_np)
        c = base[c_sl]
        try:
            if how == "grad":
                def f(w):
                    if when == "before":
                        do_write(base)
                    y = nx_op(w, c)
                    if when == "after":
                        do_write(base)
                    return nx.sum(y * nx.asarray(cot))
                return nx.grad(f)(_f64(w0))
            if how == "vjp":
                _, fn = nx.vjp(lambda w: nx_op(w, c), _f64(w0))
                do_write(base)
                return fn(nx.asarray(cot))[0]
            _, fjvp = nx.linearize(lambda w: nx.sum(nx_op(w, c) * nx.asarray(cot)), _f64(w0))
            do_write(base)
            return nx.stack([fjvp(nx.asarray(np.eye(n)[i])) for i in range(n)])
        except ModifiedInPlaceError as e:
            if "after" not in desc or not str(e):
                raise Mismatch(f"ModifiedInPlaceError for a write before the recording: {e}") \
                    from None
            return e

    def ref():
        J = _fd(lambda w: np_op(w, c_seen), w0)
        return cot @ J

    def compare(got, r):
        if isinstance(got, ModifiedInPlaceError):
            if not expect_error:
                raise Mismatch(f"ModifiedInPlaceError although the write "
                               f"{'misses c' if not touched else 'is of a value not needed'}"
                               f": {got}")
            return
        if expect_error:
            raise Mismatch("a write into a recorded value after the recording gave a gradient "
                           "instead of ModifiedInPlaceError")
        d = as_ndarray(got).astype(np.float64)
        if not np.allclose(d, r, rtol=2e-5, atol=2e-5):
            raise Mismatch(f"gradient {d} != finite differences {r}")
    return desc, call, ref, compare


# -- the Array API functions ----------------------------------------------------------------------

API_DTYPES = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                    "uint32", "uint64", "float16", "float32", "float64",
                                    "complex64", "complex128")] + ALT_SPELLINGS


def _api_values(g, shape, dt, special=True, small_ints=True):
    """Values for the Array API functions: moderate floats (NaN/inf sometimes), small ints
    (sums and products stay exact), ties (for sorting and unique) often."""
    n = math.prod(shape)
    if dt.kind == "b":
        return g.r.random(n).reshape(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = (max(info.min, -9), min(info.max, 9)) if small_ints or g.p(0.7) else \
            (info.min, info.max)
        return g.r.integers(lo, int(hi) + 1, n, dtype=dt if lo < 0 or dt.kind == "u" else
                            np.int64).astype(dt).reshape(shape)
    scale = 1.0 if dt == np.float16 else g.pick([1.0, 1.0, 10.0])
    v = g.r.standard_normal(n) * scale
    if g.p(0.4):
        v = np.round(v * 2) / 2          # ties
    if special and g.p(0.3):
        m = g.r.random(n)
        v = np.where(m < 0.1, np.nan, np.where(m < 0.15, np.inf, np.where(m < 0.2, -np.inf, v)))
    if dt.kind == "c":
        w = g.r.standard_normal(n) * scale
        if g.p(0.4):
            w = np.round(w)
        v = v + 1j * w
    with np.errstate(all="ignore"):
        return v.astype(dt).reshape(shape)


def _api_operand(g, dt=None, shape=None, kinds="biufc", special=True, small_ints=True):
    """(tensor, ndarray): random values of a dtype of ``kinds``, as a contiguous tensor or a
    flipped / transposed / stepped / padded (fill inside the values' range) view."""
    if dt is None:
        dt = g.pick([d for d in API_DTYPES if d.kind in kinds])
    if shape is None:
        shape = g.shape(max_ndim=3, max_dim=4)
    a = _api_values(g, shape, dt, special, small_ints)
    t = nx.asarray(a.copy())
    kind = g.small(0, 5)
    if kind == 1 and a.ndim:
        t, a = nx.flip(t), np.flip(a)
    elif kind == 2 and a.ndim:
        t, a = t.T, a.T
    elif kind == 3 and a.ndim:
        t, a = t[..., ::-2], a[..., ::-2]
    elif kind == 4 and a.ndim:
        fill = a.reshape(-1)[0] if a.size else dt.type(0)
        t, a = nx.pad(t, 1, constant_values=fill), np.pad(a, 1, constant_values=fill)
    return t, a


def _api_axis(g, nd, tuple_ok=True, none_ok=True):
    u = g.r.random()
    if u < 0.2 and none_ok:
        return None
    if u < 0.3 and tuple_ok and nd:
        return tuple(sorted(set(int(v) for v in g.r.integers(-nd, nd, g.small(1, nd)))))
    if u < 0.36:
        return g.pick([nd, -nd - 1, 1.0, True, "0", (0, 0) if nd else 5, 2**63])
    return g.small(-nd, nd - 1) if nd else g.pick([None, 0, -1])


def _acc_dtype(dt):
    """The accumulator dtype of nx_rune's integer sums and products (JAX's x32 rules)."""
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize <= 4):
        return np.dtype(np.int32)
    if dt.kind == "u" and dt.itemsize <= 4:
        return np.dtype(np.uint32)
    return dt


def _kinds_agree(got, ref):
    """Integers of any signedness agree, bools with integers (nx_rune keeps a bool dtype
    where NumPy computes in int8), integer results with NumPy's float ones (rint/round of
    integers: the standard keeps the integer dtype)."""
    gk, rk = got.dtype.kind, ref.dtype.kind
    return gk == rk or {gk, rk} <= set("biu") or (gk in "biu" and rk == "f")


def _api_same(got, ref, what, tol, scale=1.0, mask=None):
    """One result against NumPy's: the shape exactly, the kind of dtype, the values (floats
    within ``tol`` relative, ``tol * scale`` absolute; NaN where NumPy has NaN)."""
    g_ = as_ndarray(got)
    r = np.asarray(ref)
    if g_.shape != r.shape:
        raise Mismatch(f"{what}: shape {g_.shape} != NumPy's {r.shape}")
    if not _kinds_agree(g_, r) and not (r.dtype.kind == "f" and g_.dtype.kind == "c"):
        raise Mismatch(f"{what}: dtype {g_.dtype} where NumPy gives {r.dtype}")
    if g_.size > MAX_REF:
        return
    if mask is not None:
        g_, r = g_[np.broadcast_to(mask, g_.shape)], r[np.broadcast_to(mask, r.shape)]
    if r.dtype.kind in "fc" or g_.dtype.kind in "fc":
        wide = np.complex128 if "c" in (r.dtype.kind, g_.dtype.kind) else np.float64
        gc, rc = g_.astype(wide), r.astype(wide)
        with np.errstate(all="ignore"):
            ok = np.isclose(gc, rc, rtol=tol, atol=tol * scale, equal_nan=True) | (gc == rc)
            if wide is np.complex128:        # NaN in one part only: compare the parts
                ok |= (np.isclose(gc.real, rc.real, rtol=tol, atol=tol * scale,
                                  equal_nan=True) &
                       np.isclose(gc.imag, rc.imag, rtol=tol, atol=tol * scale,
                                  equal_nan=True))
        if not ok.all():
            raise Mismatch(f"{what}: values differ at {np.argwhere(~ok)[:3].tolist()}: "
                           f"{gc[~ok][:3]} vs NumPy {rc[~ok][:3]}")
        return
    if g_.astype(object).tolist() != r.astype(object).tolist():
        bad = np.argwhere(g_.astype(object) != r.astype(object))[:3].tolist()
        raise Mismatch(f"{what}: values differ at {bad}: {g_.reshape(-1)[:4]} vs NumPy "
                       f"{r.reshape(-1)[:4]}")


def _tol(dt):
    dt = np.dtype(dt)
    return 3e-3 if dt == np.float16 else 2e-6 if dt in (np.float32, np.complex64) else 1e-12


API_UNARY = {
    "tan": np.tan, "arcsin": np.arcsin, "acos": np.arccos, "arctan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "arccosh": np.arccosh,
    "atanh": np.arctanh, "log10": np.log10, "log2": np.log2, "exp2": np.exp2,
    "sinc": np.sinc, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "angle": np.angle,
    "rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "fix": np.fix,
    "sign": np.sign, "signbit": np.signbit, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "isposinf": np.isposinf, "isneginf": np.isneginf,
    "abs": np.abs, "real": np.real, "imag": np.imag, "conj": np.conj, "square": np.square,
    "nan_to_num": np.nan_to_num, "round": np.round, "positive": np.positive,
}
# these keep an integer (or bool) input's dtype: NumPy in the same dtype is the reference
_KEEPS_INT = {"rint", "floor", "ceil", "trunc", "fix", "sign", "abs", "real", "conj", "square",
              "nan_to_num", "round", "positive", "isnan", "isinf", "isfinite", "signbit",
              "isposinf", "isneginf", "imag"}
API_BINARY = {
    "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2, "nextafter": np.nextafter, "heaviside": np.heaviside,
    "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "isclose": np.isclose,
}


def _api_unary(g):
    name = g.pick(sorted(API_UNARY))
    npfn = API_UNARY[name]
    t, a = _api_operand(g)
    args = {}
    if name == "round" and g.p(0.5):
        args = {"decimals": g.pick([1, 2, -1])}
    fn = getattr(nx, name)

    def ref():
        if a.dtype.kind in "biu" and name in _KEEPS_INT:
            if name == "round" and args.get("decimals", 0) < 0 and a.dtype.kind != "b":
                return UNKNOWN      # rounding to tens in a small integer dtype may overflow
            if a.dtype.kind == "b" and name in ("round", "rint", "sign", "square", "conj", "abs",
                                                "positive", "fix", "floor", "ceil", "trunc",
                                                "real", "imag", "nan_to_num"):
                # NumPy computes these on bools as int8 (or refuses); nx_rune keeps bool
                return UNKNOWN if name == "round" and args else np.asarray(npfn(a.astype(
                    np.int8), **args)).astype(np.int64)
            # rint/round of integers: NumPy gives floats, nx_rune (the standard) the integers
            return _np_ref(lambda: npfn(a, **args))()
        wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        if name == "nan_to_num" and a.dtype.kind in "fc":
            big = np.finfo(a.dtype)
            r = np.nan_to_num(wide, posinf=float(big.max), neginf=float(big.min))
            return r
        return _np_ref(lambda: npfn(wide, **args))()

    def compare(got, r):
        gd = as_ndarray(got).dtype
        mask = None
        if a.dtype.kind == "c" and name not in ("isnan", "isinf", "isfinite", "abs", "real",
                                                "imag", "conj", "positive", "square"):
            mask = np.isfinite(a)              # C99's special cases are not NumPy's
        _api_same(got, r, name, _tol(gd) * (8 if name in ("round", "sinc") else 1),
                  mask=mask, scale=1.0 if name != "round" else 10.0)
    return f"nx.{name}({a.dtype}{a.shape}, {args})", lambda: fn(t, **args), _guard(ref), compare


def _api_binary(g):
    name = g.pick(sorted(API_BINARY))
    npfn = API_BINARY[name]
    kinds = "iu" if name.startswith("bitwise") else "fc" if name == "isclose" else \
        "iuf" if name in ("floor_divide", "remainder") else "f"
    t1, a1 = _api_operand(g, kinds=kinds)
    shape2 = a1.shape if g.p(0.7) else a1.shape[g.small(0, a1.ndim):] if g.p(0.7) else \
        g.shape(max_ndim=2, max_dim=3)
    t2, a2 = _api_operand(g, dt=a1.dtype if g.p(0.7) else None, shape=shape2, kinds=kinds)
    if name.startswith("bitwise") and g.p(0.8):
        a2 = np.abs(a2.astype(np.int64)) % 8
        t2 = nx.asarray(a2.astype(a1.dtype))
        a2 = a2.astype(a1.dtype)
    fn = getattr(nx, name)

    def ref():
        if name.startswith("bitwise") and (a2.astype(np.int64) < 0).any():
            return UNKNOWN          # negative counts: nx_rune refuses them
        if name in ("floor_divide", "remainder") and a1.dtype.kind in "iu" and \
                a2.dtype.kind in "iu" and not np.all(a2):
            return UNKNOWN          # integer division by zero: nx_rune raises
        if name == "heaviside" and (a1.dtype == np.float16 or a2.dtype == np.float16):
            return UNKNOWN
        if name == "nextafter":
            out = np.result_type(a1.dtype, a2.dtype)
            return _np_ref(lambda: np.nextafter(a1.astype(out), a2.astype(out)))()
        if name.startswith("bitwise") or name in ("floor_divide", "remainder"):
            return _np_ref(lambda: npfn(a1, a2))()
        wide = np.complex128 if "c" in (a1.dtype.kind, a2.dtype.kind) else np.float64
        return _np_ref(lambda: npfn(a1.astype(wide), a2.astype(wide)))()

    def compare(got, r):
        gd = as_ndarray(got).dtype
        tol = 0.0 if name == "nextafter" else _tol(gd) if gd.kind in "fc" else 0.0
        if name in ("floor_divide", "remainder") and gd.kind == "f":
            # NumPy's float floor division and remainder, in the operands' own precision
            with np.errstate(all="ignore"):
                r = npfn(a1.astype(gd), a2.astype(gd))
            _api_same(got, r, name, tol, scale=max(1.0, float(np.nanmax(np.abs(
                np.where(np.isfinite(a1), a1, 0)).astype(np.float64), initial=1.0))))
            return
        _api_same(got, r, name, tol)
    return (f"nx.{name}({a1.dtype}{a1.shape}, {a2.dtype}{a2.shape})", lambda: fn(t1, t2),
            _guard(ref), compare)


API_NAN_REDUCTIONS = {"nansum": np.nansum, "nanmean": np.nanmean, "nanmax": np.nanmax,
                      "nanmin": np.nanmin, "nanprod": np.nanprod, "nanstd": np.nanstd,
                      "nanvar": np.nanvar, "nanmedian": np.nanmedian,
                      "nanquantile": np.nanquantile, "nanpercentile": np.nanpercentile,
                      "count_nonzero": np.count_nonzero, "median": np.median,
                      "quantile": np.quantile, "ptp": np.ptp}


def _api_reduction(g):
    name = g.pick(sorted(API_NAN_REDUCTIONS))
    npfn = API_NAN_REDUCTIONS[name]
    kinds = "biuf" if name not in ("nanmax", "nanmin", "nanmedian", "nanquantile",
                                   "nanpercentile", "median", "quantile", "ptp") else "iuf"
    t, a = _api_operand(g, kinds=kinds)
    axis = _api_axis(g, a.ndim)
    keep = g.p(0.3)
    kw = {"axis": axis, "keepdims": keep}
    pos = ()
    if name in ("nanquantile", "quantile"):
        pos = (g.pick([0.3, 0.0, 1.0, 0.5, [0.1, 0.9], 1.5]),)
    elif name == "nanpercentile":
        pos = (g.pick([30, 0, 100, [10, 90], -5]),)
    if name in ("nanstd", "nanvar") and g.p(0.4):
        kw["ddof"] = g.pick([1, 2])
    fn = getattr(nx, name)

    def ref():
        if isinstance(axis, (bool, float, str)) or (isinstance(axis, int) and abs(axis) > 64):
            raise BadReference("axis")
        if isinstance(axis, tuple) and len(set(v % max(a.ndim, 1) for v in axis)) != len(axis):
            raise BadReference("repeated axis")
        kwargs = dict(kw)
        if name in ("nansum", "nanprod") and a.dtype.kind in "biu":
            kwargs["dtype"] = _acc_dtype(a.dtype)
        if name == "count_nonzero" and axis is None and keep:
            kwargs.pop("keepdims")
            return _np_ref(lambda: np.reshape(npfn(a), (1,) * a.ndim))()
        if name in ("median", "quantile") and a.dtype.kind == "f" and np.isnan(a).any():
            return UNKNOWN            # NaN propagation through median: not specified here
        if a.size == 0 and ("quantile" in name or "percentile" in name or "median" in name):
            return UNKNOWN            # NumPy's quantiles of nothing: IndexError, wrong shapes
        return _np_ref(lambda: npfn(a, *pos, **kwargs))()

    def compare(got, r):
        gd = as_ndarray(got).dtype
        fin = np.abs(np.where(np.isfinite(a.astype(np.float64)), a.astype(np.float64), 0))
        scale = max(1.0, float(fin.sum()) if a.size else 1.0)
        if name in ("nanstd", "nanvar"):
            scale = max(1.0, float(fin.max(initial=0.0)) ** 2 * max(a.size, 1))
        tol = _tol(gd) if gd.kind == "f" else 0.0
        if name == "nanprod" and gd.kind == "f":
            tol, scale = 50 * _tol(gd), 1e-30
        # no degrees of freedom left: NumPy gives inf or NaN, the standard NaN; NumPy's
        # quantile interpolates inf - inf = NaN even for one element (nx_rune: that element)
        mask = np.isfinite(r) if "ddof" in kw or "quantile" in name or "percentile" in name \
            or "median" in name else None
        _api_same(got, r, name, tol * 4, scale=scale, mask=mask)
    return (f"nx.{name}({a.dtype}{a.shape}, {', '.join(map(repr, pos))} {kw})",
            lambda: fn(t, *pos, **kw), _guard(ref), compare)


def _api_sorting(g):
    name = g.pick(["sort", "argsort", "searchsorted", "unique_values", "unique_counts",
                   "unique_inverse", "unique_all"])
    if name in ("sort", "argsort"):
        t, a = _api_operand(g, kinds="biuf")
        axis = _api_axis(g, a.ndim, tuple_ok=False)
        desc_, stable = g.p(0.4), g.p(0.7)
        fn = getattr(nx, name)

        def ref():
            if axis is not None and not _axis_ok(axis, a.ndim, False):
                raise BadReference("axis")
            b = a.reshape(-1) if axis is None else a
            ax = -1 if axis is None else axis
            if b.ndim == 0:
                raise BadReference("0-d")
            idx = np.argsort(np.flip(b, ax), axis=ax, kind="stable") if desc_ else \
                np.argsort(b, axis=ax, kind="stable")
            if desc_:
                idx = np.flip(b.shape[ax] - 1 - idx, ax)
            return idx, np.take_along_axis(b, idx, ax)

        def compare(got, r):
            idx, vals = r
            if name == "sort":
                _api_same(got, vals, "sort", 0.0)
                return
            gi = as_ndarray(got)
            b = a.reshape(-1) if axis is None else a
            ax = -1 if axis is None else axis
            if gi.shape != idx.shape:
                raise Mismatch(f"argsort: shape {gi.shape} != {idx.shape}")
            if stable:
                _api_same(gi, idx, "argsort (stable)", 0.0)
            else:             # any order of ties: the values it sorts by must match
                _api_same(np.take_along_axis(b, gi.astype(np.int64), ax), vals,
                          "values in argsort's order", 0.0)
        return (f"nx.{name}({a.dtype}{a.shape}, axis={axis!r}, descending={desc_}, "
                f"stable={stable})", lambda: fn(t, axis=axis, descending=desc_, stable=stable),
                _guard(ref), compare)
    if name == "searchsorted":
        dt = g.pick([d for d in API_DTYPES if d.kind in "iuf"])
        x1 = np.sort(_api_values(g, (g.small(0, 6),), dt))
        _, a2 = _api_operand(g, dt=dt if g.p(0.8) else None, kinds="iuf")
        t2 = nx.asarray(a2)
        side = g.pick(["left", "right", "left", "middle"])
        use_sorter = g.p(0.3)
        perm = g.r.permutation(x1.size)
        x1u = x1[perm] if use_sorter else x1
        sorter = np.argsort(x1u, kind="stable") if use_sorter else None

        def ref():
            if a2.dtype != x1.dtype and np.result_type(a2.dtype, x1.dtype).kind != \
                    x1.dtype.kind:
                return UNKNOWN       # promotion differs from NumPy's (weak types)
            return _np_ref(lambda: np.searchsorted(x1u, a2, side=side, sorter=sorter))()
        return (f"nx.searchsorted({dt}{x1.shape}, {a2.dtype}{a2.shape}, {side}, "
                f"sorter={use_sorter})",
                lambda: nx.searchsorted(nx.asarray(x1u), t2, side=side,
                                        sorter=None if sorter is None else nx.asarray(sorter)),
                _guard(ref), lambda got, r: _api_same(got, r, "searchsorted", 0.0))
    t, a = _api_operand(g, kinds="biuf")
    fn, npfn = getattr(nx, name), getattr(np, name)
    if name == "unique_values":     # (NumPy's order is not specified; nx_rune's is sorted)
        npfn = lambda v: np.sort(np.unique_values(v))          # noqa: E731

    def compare(got, r):
        got = tuple(got) if isinstance(got, tuple) else (got,)
        r = tuple(r) if isinstance(r, tuple) else (r,)
        if len(got) != len(r):
            raise Mismatch(f"{name}: {len(got)} results, NumPy {len(r)}")
        fields = {"unique_values": "v", "unique_counts": "vc", "unique_inverse": "vi",
                  "unique_all": "vxic"}[name]
        vals = as_ndarray(got[0])
        for k, (x, y, f) in enumerate(zip(got, r, fields)):
            if f in "vc":
                _api_same(x, y, f"{name}[{k}]", 0.0)
                continue
            # every NaN is its own unique value, and which NaN takes which slot is not
            # specified: check the defining property instead of NumPy's numbers
            xi = as_ndarray(x)
            if xi.shape != np.shape(y) or xi.dtype.kind not in "iu":
                raise Mismatch(f"{name}[{k}]: {xi.dtype}{xi.shape}, NumPy {np.shape(y)}")
            if f == "x":
                _api_same(a.reshape(-1)[xi.astype(np.int64)], vals, f"x[{name} indices]", 0.0)
            else:
                _api_same(vals[xi.astype(np.int64)], a, f"values[{name} inverse]", 0.0)
                nan_slots = np.flatnonzero(vals != vals)
                used = np.sort(xi.reshape(-1)[np.isin(xi.reshape(-1), nan_slots)])
                if not np.array_equal(used, nan_slots):
                    raise Mismatch(f"{name}: the NaN slots {nan_slots} are used {used}")
    return (f"nx.{name}({a.dtype}{a.shape})", lambda: fn(t), _np_ref(lambda: npfn(a)),
            compare)


def _api_arrangement(g):
    name = g.pick(["tile", "repeat", "roll", "flip", "rot90", "diff", "tril", "triu", "unstack",
                   "array_split", "cumulative_sum", "cumulative_prod", "clip"])
    t, a = _api_operand(g, kinds="biuf" if name != "clip" else "iuf")
    nd = a.ndim
    if name == "tile":
        reps = g.pick([2, (2, 1), (1, 0, 2), (3,), -1, 1.5, ()])
        call, npcall = (lambda: nx.tile(t, reps)), (lambda: np.tile(a, reps))
        args = reps
    elif name == "repeat":
        axis = _api_axis(g, nd, tuple_ok=False)
        n = a.reshape(-1).size if axis is None else a.shape[axis] if \
            isinstance(axis, int) and not isinstance(axis, bool) and -nd <= axis < nd else 2
        reps = g.pick([0, 2, 3, [1], -1, "many"])
        if reps == "many":
            reps = [int(v) for v in g.r.integers(0, 3, n)]
        call = lambda: nx.repeat(t, reps, axis=axis)        # noqa: E731
        npcall = lambda: np.repeat(a, reps, axis=axis)      # noqa: E731
        args = (reps, axis)
    elif name == "roll":
        axis = _api_axis(g, nd)
        shift = g.pick([1, -2, 5, (1, 2), 0, 2**40])
        call, npcall = (lambda: nx.roll(t, shift, axis)), (lambda: np.roll(a, shift, axis))
        args = (shift, axis)
    elif name == "flip":
        axis = _api_axis(g, nd)
        call, npcall = (lambda: nx.flip(t, axis)), (lambda: np.flip(a, axis))
        args = axis
    elif name == "rot90":
        k = g.pick([1, 2, 3, -1, 5, 0])
        axes = g.pick([(0, 1), (1, 0), (-1, 0), (0, 0), (0, 2)])
        call, npcall = (lambda: nx.rot90(t, k, axes)), (lambda: np.rot90(a, k, axes))
        args = (k, axes)
    elif name == "diff":
        n = g.pick([1, 2, 0, 3])
        axis = g.pick([-1, 0, 1])
        pre = g.pick([None, 0, np.zeros(a.shape[:-1] + (1,), a.dtype) if nd else None])
        if a.dtype.kind == "b" and pre is not None and not isinstance(pre, np.ndarray):
            pre = None        # (bool with a weak int promotes to int32, as in JAX)
        call = lambda: nx.diff(t, n, axis, prepend=pre)       # noqa: E731
        # (a Python 0 is weakly typed: a's dtype, where NumPy's concatenation promotes)
        npcall = lambda: np.diff(a, n, axis, prepend=np.asarray(pre, a.dtype)) \
            if pre is not None else np.diff(a, n, axis)        # noqa: E731
        args = (n, axis, None if pre is None else np.shape(pre))
    elif name in ("tril", "triu"):
        k = g.pick([0, 1, -1, 5, -5])
        call, npcall = (lambda: getattr(nx, name)(t, k)), (lambda: getattr(np, name)(a, k))
        args = k
    elif name == "unstack":
        axis = g.pick([0, -1, 1, nd])

        def npcall():
            if nd == 0:
                raise ValueError("0-d")
            return list(np.moveaxis(a, axis, 0))
        call = lambda: list(nx.unstack(t, axis=axis))         # noqa: E731
        args = axis
    elif name == "array_split":
        sec = g.pick([1, 2, 3, [1, 3], [3, 1], 0, [-1]])
        axis = g.pick([0, -1, 1])
        call = lambda: nx.array_split(t, sec, axis)           # noqa: E731
        npcall = lambda: np.array_split(a, sec, axis)         # noqa: E731
        args = (sec, axis)
    elif name in ("cumulative_sum", "cumulative_prod"):
        axis = g.pick([None, 0, -1, 1, 5])
        init = g.p(0.4)
        dt = _acc_dtype(a.dtype) if a.dtype.kind in "biu" else None
        npfn = getattr(np, name)
        call = lambda: getattr(nx, name)(t, axis=axis, include_initial=init)  # noqa: E731

        def npcall():
            if axis is None and nd > 1:
                raise ValueError("axis required")
            if nd == 0:
                return UNKNOWN          # (the standard asks for at least one axis)
            return npfn(a, axis=axis, include_initial=init, dtype=dt)
        args = (axis, init)
    else:                                                       # clip
        lo = g.pick([None, 0, -1, 2, "array"])
        hi = g.pick([None, 1, 3, 0, "array"])

        def bound(v):
            if v != "array":
                return v, v
            b = _api_values(g, a.shape[g.small(0, nd):], a.dtype, special=False)
            return nx.asarray(b), b
        (lo_t, lo_a), (hi_t, hi_a) = bound(lo), bound(hi)
        call = lambda: nx.clip(t, lo_t, hi_t)                  # noqa: E731

        def npcall():
            if lo_a is None and hi_a is None:
                raise ValueError("nothing to clip")
            # in exact arithmetic (a Python -1 is below every uint8), then back to a's dtype
            wide = object if a.dtype.kind in "iu" else np.float64
            out = a.astype(wide)
            if lo_a is not None:
                out = np.maximum(out, np.asarray(lo_a).astype(wide))
            if hi_a is not None:
                out = np.minimum(out, np.asarray(hi_a).astype(wide))
            out = np.asarray(out, dtype=wide)
            if a.dtype.kind in "iu" and out.size:
                info = np.iinfo(a.dtype)
                if min(out.reshape(-1)) < info.min or max(out.reshape(-1)) > info.max:
                    raise ValueError("a bound outside the dtype's range")
            return out.astype(a.dtype)
        args = (_short(lo_t), _short(hi_t))

    def ref():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name == "clip" and args == ("None", "None"):
                return UNKNOWN
            r = _np_ref(npcall)()
        return r

    def compare(got, r):
        if isinstance(r, (list, tuple)) or isinstance(got, (list, tuple)):
            if len(got) != len(r):
                raise Mismatch(f"{name}: {len(got)} parts, NumPy {len(r)}")
            for k, (x, y) in enumerate(zip(got, r)):
                _api_same(x, y, f"{name}[{k}]", 0.0)
            return
        gd = as_ndarray(got).dtype
        fin = np.abs(np.where(np.isfinite(a.astype(np.float64)), a.astype(np.float64), 0))
        tol = 4 * _tol(gd) if gd.kind == "f" and name.startswith("cumulative") else 0.0
        if name == "cumulative_prod" and gd.kind == "f":
            tol *= 10
            fin = np.zeros(1)
        _api_same(got, r, name, tol, scale=max(1.0, float(fin.sum())))
    return (f"nx.{name}({a.dtype}{a.shape}, {args!r})", call, ref, compare)


@target("Array API functions", 5)
def t_array_api(g):
    """The functions the Array API standard added (sort/argsort/searchsorted, unique_*,
    tan/asin/.../sinc/heaviside/nextafter/shifts..., clip, nan-reductions and quantiles,
    cumulative_sum/prod, tile/repeat/roll/flip/rot90/diff/tril/triu/unstack/array_split)
    with random dtypes, shapes, views, axes and bad arguments, against NumPy (values within a
    few ulps of the result's dtype; integer sums in nx_rune's int32/uint32 accumulators)."""
    family = g.pick(["unary", "unary", "binary", "reduction", "reduction", "sorting",
                     "sorting", "arrangement", "arrangement"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"unary": _api_unary, "binary": _api_binary, "reduction": _api_reduction,
                "sorting": _api_sorting, "arrangement": _api_arrangement}[family](g)


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
