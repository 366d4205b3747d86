"""Comparing results: bit for bit, within a float tolerance, or against finite differences."""
import numpy as np

import nx_rune as nx

TOL = {"float32": (2e-4, 2e-5), "float64": (1e-9, 1e-11)}


class Mismatch(Exception):
    """A check failed: ``kind`` names the failure class, ``detail`` says what differs."""

    def __init__(self, kind, detail):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def to_numpy(tree):
    if isinstance(tree, (tuple, list)):
        return [to_numpy(t) for t in tree]
    if isinstance(tree, nx.Tensor):
        return np.array(np.asarray(tree), copy=True)
    if isinstance(tree, (bool, int, float, complex)):
        return tree
    return np.array(tree, copy=True)


def _leaves(tree, path=""):
    if isinstance(tree, (tuple, list)):
        for i, t in enumerate(tree):
            yield from _leaves(t, f"{path}[{i}]")
    else:
        yield path, tree


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype.kind not in "fc":
        return np.array_equal(a, b)
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    return np.array_equal(a[~nan].view(np.uint8), b[~nan].view(np.uint8))


def close(a, b, rtol, atol):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    fin = np.isfinite(b)
    if not np.array_equal(a[~fin & ~np.isnan(b)], b[~fin & ~np.isnan(b)]):
        return False
    if not np.array_equal(np.isfinite(a), fin):
        return False
    if not fin.any():
        return True
    scale = 1.0 + np.max(np.abs(b[fin]))
    return bool(np.all(np.abs(a[fin] - b[fin]) <= atol * scale + rtol * np.abs(b[fin])))


def compare(got, want, *, exact, dtype, what="value"):
    """Raise Mismatch unless got equals want (structure, dtypes, shapes, values)."""
    gl, wl = list(_leaves(got)), list(_leaves(want))
    if len(gl) != len(wl):
        raise Mismatch("structure", f"{len(gl)} results, eager gives {len(wl)}")
    rtol, atol = TOL[dtype]
    for (path, g), (_, w) in zip(gl, wl):
        g = np.asarray(g)
        w = np.asarray(w)
        if g.dtype != w.dtype:
            raise Mismatch("dtype", f"{what}{path}: {g.dtype}, eager {w.dtype}")
        if g.shape != w.shape:
            raise Mismatch("shape", f"{what}{path}: {g.shape}, eager {w.shape}")
        if exact:
            if not same_bits(g, w):
                raise Mismatch("bits", f"{what}{path}: not bit-exact, max |diff| "
                               f"{_maxdiff(g, w)}\n got  {g!r}\n want {w!r}")
        else:
            t = "float32" if w.dtype == np.float32 else dtype
            r, a = TOL.get(t, (rtol, atol))
            if not close(g, w, r, a):
                raise Mismatch("value", f"{what}{path}: max |diff| {_maxdiff(g, w)}"
                               f"\n got  {g!r}\n want {w!r}")


def _maxdiff(g, w):
    try:
        with np.errstate(all="ignore"):
            d = np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64))
        d = d[~np.isnan(d)]
        return float(np.max(d)) if d.size else "nan"
    except (TypeError, ValueError):
        return "n/a"


F64_EPS = float(np.finfo(np.float64).eps)


def fd_check(got, fd_fn, h, what, eps=F64_EPS, skip_nan=False):
    """Compare a directional derivative (an array) with central differences of ``fd_fn``
    (float64 -> array) along the direction, elementwise; elements where the function has a
    kink (one-sided differences disagree at two step sizes) or is not finite are skipped.
    ``eps``: the relative rounding of the function's values (float64's, or float32's where
    the function rounds through float32 on the way); ``skip_nan``: elements where ``got`` is
    NaN are skipped too (the caller knows why they are)."""
    f0 = np.asarray(fd_fn(0.0), np.float64)
    fp, fm = np.asarray(fd_fn(h), np.float64), np.asarray(fd_fn(-h), np.float64)
    fp2, fm2 = np.asarray(fd_fn(h / 2), np.float64), np.asarray(fd_fn(-h / 2), np.float64)
    c1 = (fp - fm) / (2 * h)
    c2 = (fp2 - fm2) / h
    d1 = (fp - f0) / h - (f0 - fm) / h
    d2 = (fp2 - f0) / (h / 2) - (f0 - fm2) / (h / 2)
    got = np.asarray(got, np.float64)
    if got.shape != c2.shape:
        raise Mismatch("fd-shape", f"{what}: shape {got.shape}, function {c2.shape}")
    with np.errstate(all="ignore"):
        scale = 1.0 + np.abs(c2)
        # differences cannot be more accurate than the rounding of the values they subtract:
        # a huge constant term in the output (log_ndtr far in its tail) leaves ulp(f) / h
        noise = 8 * eps * np.maximum(np.abs(fp2), np.abs(fm2)) / h
        ok = (np.isfinite(c1) & np.isfinite(c2) & np.isfinite(f0)
              & (np.abs(c1 - c2) <= 1e-4 * scale + 2 * noise)
              & ~((np.abs(d2) > 0.6 * np.abs(d1)) & (np.abs(d1) > 1e-5 * scale)))
        if skip_nan:
            ok &= ~np.isnan(got)
        bad = ok & ~(np.abs(got - c2) <= 1e-4 * scale + noise)
    if np.any(bad):
        i = np.flatnonzero(bad.reshape(-1))[0]
        raise Mismatch("fd", f"{what}: derivative {got.reshape(-1)[i]!r}, central differences "
                       f"{c2.reshape(-1)[i]!r} (element {i})")
