"""Property tests: random chains of movement ops and gather/scatter, checked against NumPy.

Each chain starts from a tensor (contiguous, copied, or itself a strided view) and applies a
random sequence of reshape, broadcast_to/expand_dims/squeeze, transpose/moveaxis/swapaxes, pad,
shrink, flip, as_strided, basic indexing (steps, negative steps, None, Ellipsis), copy and
contiguous, tracking the same sequence on an ndarray.  After every step the tensor is compared
with NumPy's result three ways: its zero-copy ndarray (``np.asarray``), a materialized copy
(``nx.copy``/``nx.contiguous``: the strided-copy kernel, masks included) and the result of
elementwise ops computed on the view.
"""
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nx_rune as nx

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                        HealthCheck.data_too_large])

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
MAX_SIZE = 720          # elements per intermediate (keeps each example fast)
# NX_RUNE_PROPERTY_SCALE=k runs k times as many examples (a longer soak, outside the suite)
SCALE = max(1, int(os.environ.get("NX_RUNE_PROPERTY_SCALE", "1")))


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def values(shape, dtype, seed=0):
    """Distinct-ish values of ``dtype`` (so misplaced elements show), no nan."""
    n = math.prod(shape)
    base = (np.arange(n, dtype=np.int64) * 7 + 3 + seed) % 97
    dt = np.dtype(dtype)
    if dt.kind == "b":
        arr = (base % 3) == 0
    elif dt.kind == "c":
        arr = (base + 1j * (base % 5)).astype(dt)
    elif dt.kind == "f":
        arr = (base / 4 - 5).astype(dt)
    elif dt.kind == "i":
        arr = (base - 40).astype(dt)
    else:
        arr = base.astype(dt)
    return arr.reshape(shape)


def assert_same(t, ref, what=""):
    """t (a Tensor) has ref's shape, dtype and values (nan == nan), three ways."""
    ref = np.asarray(ref)
    assert isinstance(t, nx.Tensor), what
    assert t.shape == ref.shape, (what, t.shape, ref.shape)
    assert t.dtype == ref.dtype, (what, t.dtype, ref.dtype)
    assert t.ndim == ref.ndim and t.size == ref.size, what
    got = np.asarray(t)
    assert got.shape == ref.shape and got.dtype == ref.dtype, what
    np.testing.assert_array_equal(got, ref, err_msg=f"np.asarray after {what}")
    c = nx.copy(t)
    assert nx.is_contiguous(c), what
    np.testing.assert_array_equal(c.numpy(), ref, err_msg=f"nx.copy after {what}")
    np.testing.assert_array_equal(nx.contiguous(t).numpy(), ref,
                                  err_msg=f"nx.contiguous after {what}")
    # elementwise ops read the view through NumPy's strided loops
    dt = ref.dtype
    if dt.kind == "b":
        np.testing.assert_array_equal(nx.logical_not(t).numpy(), ~ref, err_msg=what)
        np.testing.assert_array_equal(nx.logical_xor(t, c).numpy(), ref ^ ref, err_msg=what)
    else:
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(nx.add(t, t).numpy(), ref + ref, err_msg=what)
            np.testing.assert_array_equal((t * 3).numpy(), ref * dt.type(3), err_msg=what)
            np.testing.assert_array_equal(nx.subtract(t, c).numpy(), ref - ref, err_msg=what)
        if dt.kind in "fc":
            s = nx.sum(t.astype(np.complex128 if dt.kind == "c" else np.float64)).item()
            np.testing.assert_allclose(s, ref.astype(np.complex128).sum(), rtol=1e-9,
                                       atol=1e-9, err_msg=what)
    if ref.size:
        flat_first = ref.reshape(-1)[0]
        np.testing.assert_array_equal(np.asarray(nx.reshape(t, (-1,))[0]), flat_first,
                                      err_msg=what)


def shape_with_size(data, n, max_ndim=4):
    """A random shape with ``n`` elements (one with a 0 when n == 0)."""
    ndim = data.draw(st.integers(0 if n == 1 else 1, max_ndim), label="ndim")
    if n == 0:
        dims = [data.draw(st.integers(0, 3)) for _ in range(ndim)]
        dims[data.draw(st.integers(0, ndim - 1))] = 0
        return tuple(dims)
    primes, m, p = [], n, 2
    while m > 1:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    dims = [1] * ndim
    for q in primes:
        dims[data.draw(st.integers(0, ndim - 1))] *= q
    return tuple(dims)


# ---------------------------------------------------------------------------------------------
# starting tensors
# ---------------------------------------------------------------------------------------------

@st.composite
def start(draw):
    """(tensor, ndarray, description): a contiguous tensor or a strided view of one."""
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    kind = draw(st.sampled_from(["asarray", "array", "zeros+assign", "fortran", "view"]))
    a = values(shape, dtype, draw(st.integers(0, 50)))
    if kind == "asarray":
        return nx.asarray(a), a, kind
    if kind == "array":
        return nx.array(a), a, kind
    if kind == "zeros+assign":
        t = nx.zeros(shape, dtype)
        nx.assign(t, a)
        return t, a, kind
    if kind == "fortran":        # non-contiguous ndarray in: nx copies it
        f = np.asfortranarray(a)
        return nx.asarray(f), f, kind
    # a view of a bigger tensor: x[::2, ::-1]-like, so the chain starts strided
    big_shape = tuple(2 * n + 1 for n in shape)
    b = values(big_shape, dtype, 1)
    idx = tuple(slice(None, None, -2) if i % 2 else slice(1, None, 2) for i in range(ndim))
    return nx.asarray(b)[idx], b[idx], kind


# ---------------------------------------------------------------------------------------------
# one movement op
# ---------------------------------------------------------------------------------------------

def op_reshape(data, t, a):
    shape = shape_with_size(data, a.size)
    if shape and a.size and data.draw(st.booleans(), label="use -1"):
        k = data.draw(st.integers(0, len(shape) - 1))
        arg = shape[:k] + (-1,) + shape[k + 1:]
    else:
        arg = shape
    return nx.reshape(t, arg), a.reshape(arg), f"reshape({arg})"


def op_broadcast(data, t, a):
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2), label="lead")
    shape = tuple(lead) + tuple(data.draw(st.integers(0, 3)) if n == 1 else n for n in a.shape)
    ref = np.broadcast_to(a, shape)
    return nx.broadcast_to(t, shape), ref, f"broadcast_to({shape})"


def op_expand_dims(data, t, a):
    ax = data.draw(st.integers(-a.ndim - 1, a.ndim))
    return nx.expand_dims(t, ax), np.expand_dims(a, ax), f"expand_dims({ax})"


def op_squeeze(data, t, a):
    ones = [i for i, n in enumerate(a.shape) if n == 1]
    if ones and data.draw(st.booleans()):
        ax = data.draw(st.sampled_from(ones))
        return nx.squeeze(t, ax), np.squeeze(a, ax), f"squeeze({ax})"
    return nx.squeeze(t), np.squeeze(a), "squeeze()"


def op_transpose(data, t, a):
    how = data.draw(st.sampled_from(["perm", "T", "moveaxis", "swapaxes"]))
    if how == "T" or a.ndim < 2:
        return t.T, a.T, ".T"
    if how == "perm":
        perm = tuple(data.draw(st.permutations(range(a.ndim))))
        return nx.transpose(t, perm), np.transpose(a, perm), f"transpose({perm})"
    i = data.draw(st.integers(-a.ndim, a.ndim - 1))
    j = data.draw(st.integers(-a.ndim, a.ndim - 1))
    if how == "moveaxis":
        return nx.moveaxis(t, i, j), np.moveaxis(a, i, j), f"moveaxis({i}, {j})"
    return nx.swapaxes(t, i, j), np.swapaxes(a, i, j), f"swapaxes({i}, {j})"


def _fill_value(data, dt):
    if dt.kind == "b":
        return data.draw(st.booleans())
    if dt.kind == "u":
        return data.draw(st.integers(0, 9))
    if dt.kind == "i":
        return data.draw(st.integers(-9, 9))
    return data.draw(st.sampled_from([0.0, -1.5, 2.0, float("inf"), float("nan")]))


def op_pad(data, t, a):
    widths = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
                   for _ in range(a.ndim))
    if not widths:
        widths = data.draw(st.sampled_from([1, (1, 2)]))   # () is a TypeError in NumPy too
    fill = _fill_value(data, a.dtype)
    ref = np.pad(a, widths, constant_values=fill)
    return nx.pad(t, widths, constant_values=fill), ref, f"pad({widths}, {fill})"


def op_shrink(data, t, a):
    limits = []
    for n in a.shape:
        lo = data.draw(st.integers(0, n))
        limits.append((lo, data.draw(st.integers(lo, n))))
    ref = a[tuple(slice(lo, hi) for lo, hi in limits)]
    return nx.shrink(t, limits), ref, f"shrink({limits})"


def op_flip(data, t, a):
    if a.ndim == 0 or data.draw(st.booleans()):
        return nx.flip(t), np.flip(a), "flip()"
    axes = tuple(data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1,
                                    max_size=a.ndim, unique_by=lambda v: v % a.ndim)))
    arg = axes[0] if len(axes) == 1 else axes
    return nx.flip(t, arg), np.flip(a, arg), f"flip({arg})"


def op_getitem(data, t, a):
    kinds = data.draw(st.lists(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]),
                               max_size=a.ndim + 2), label="index kinds")
    picked, used, ell = [], 0, False
    for k in kinds:                      # at most one Ellipsis, at most ndim ints/slices
        if k == "ellipsis":
            if ell:
                continue
            ell = True
        elif k in ("int", "slice"):
            if used == a.ndim:
                continue
            used += 1
        picked.append(k)
    axis, index = 0, []
    for k in picked:
        if k == "ellipsis":
            axis += a.ndim - used
            index.append(Ellipsis)
        elif k == "none":
            index.append(None)
        else:
            n = a.shape[axis]
            if k == "int" and n:
                index.append(data.draw(st.integers(-n, n - 1)))
            else:
                step = data.draw(st.sampled_from([None, 1, 2, 3, -1, -2, -3]))
                bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
                index.append(slice(data.draw(bound), data.draw(bound), step))
            axis += 1
    index = tuple(index)
    if len(index) == 1 and data.draw(st.booleans()):
        index = index[0]
    return t[index], np.asarray(a[index]), f"[{index!r}]"


def op_as_strided(data, t, a):
    flat = np.ascontiguousarray(a).reshape(-1)
    ndim = data.draw(st.integers(0, 3))
    shape = tuple(data.draw(st.integers(0, 4)) for _ in range(ndim))
    strides = tuple(data.draw(st.integers(-3, 3)) for _ in range(ndim))
    offset = data.draw(st.integers(0, max(flat.size - 1, 0)))
    n = math.prod(shape)
    lo = offset + sum(min(0, (d - 1) * s) for d, s in zip(shape, strides))
    hi = offset + sum(max(0, (d - 1) * s) for d, s in zip(shape, strides))
    if n and (lo < 0 or hi >= flat.size):
        with pytest.raises(ValueError):
            nx.as_strided(t, shape, strides, offset)
        return None
    if n:
        grid = np.indices(shape).reshape(ndim, -1) if ndim else np.zeros((0, 1), int)
        pos = offset + (np.asarray(strides, dtype=np.int64).reshape(-1, 1) * grid).sum(axis=0)
        ref = flat[pos].reshape(shape)
    else:
        ref = np.empty(shape, a.dtype)
    return (nx.as_strided(t, shape, strides, offset), ref,
            f"as_strided({shape}, {strides}, {offset})")


def op_copy(data, t, a):
    if data.draw(st.booleans()):
        c = nx.copy(t)
        assert not nx.shares_memory(c, t) or t.size == 0
        return c, a.copy(), "copy"
    return nx.contiguous(t), a, "contiguous"


OPS = [op_reshape, op_broadcast, op_expand_dims, op_squeeze, op_transpose, op_pad, op_shrink,
       op_flip, op_getitem, op_as_strided, op_copy]
VIEW_OPS = {op_transpose, op_flip, op_shrink, op_broadcast, op_expand_dims, op_squeeze}
RESHAPES = {op_expand_dims, op_squeeze}


@settings(max_examples=120 * SCALE, **SETTINGS)
@given(start(), st.data())
def test_movement_chains_match_numpy(first, data):
    t, a, desc = first
    assert_same(t, a, desc)
    trail = [desc]
    for _ in range(data.draw(st.integers(1, 7), label="length")):
        op = data.draw(st.sampled_from(OPS), label="op")
        res = op(data, t, a)
        if res is None:
            continue
        t2, a2, what = res
        trail.append(what)
        assert_same(t2, a2, " -> ".join(trail))
        if op in VIEW_OPS and t2.size and not (op in RESHAPES and t.view.has_mask) and \
                t2._memory_extent() is not None:
            # O(1) metadata ops: no data moved (expand_dims/squeeze are reshapes, which copy
            # a padded view; a view of nothing but padding reads no memory to share)
            assert nx.shares_memory(t2, t), " -> ".join(trail)
        if a2.size > MAX_SIZE:
            break
        t, a = t2, a2


@settings(max_examples=60 * SCALE, **SETTINGS)
@given(start(), st.data())
def test_pad_shrink_roundtrip_is_the_same_view(first, data):
    """shrink of a padded view gives back the unpadded elements (and, for an unmasked input,
    the same buffer: no copy)."""
    t, a, _ = first
    if a.ndim == 0:
        return
    widths = tuple((data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3)))
                   for _ in range(a.ndim))
    fill = _fill_value(data, a.dtype)
    p = nx.pad(t, widths, constant_values=fill)
    back = nx.shrink(p, [(b, b + n) for (b, _), n in zip(widths, a.shape)])
    assert_same(back, a, "pad -> shrink")
    if a.size:
        assert nx.shares_memory(back, t)
    # pad of a padded view with the same fill stays one view
    q = nx.pad(p, 1, constant_values=fill) if a.ndim else p
    ref = np.pad(np.pad(a, widths, constant_values=fill), 1, constant_values=fill) \
        if a.ndim else a
    assert_same(q, ref, "pad -> pad")
    # ... and with a different fill it is materialized first, with both fills right
    if a.ndim and a.dtype.kind not in "b":
        other = 5
        r = nx.pad(p, 1, constant_values=other)
        assert_same(r, np.pad(np.pad(a, widths, constant_values=fill), 1,
                              constant_values=a.dtype.type(other)), "pad -> pad(other fill)")


@settings(max_examples=60 * SCALE, **SETTINGS)
@given(start(), st.data())
def test_assign_into_views_matches_numpy(first, data):
    """assign writes through strided (and overlapping-source) views like NumPy's setitem."""
    t, a, _ = first
    t = nx.copy(t)
    a = a.copy()
    if a.ndim == 0 or a.size == 0:
        return
    view_kind = data.draw(st.sampled_from(["flip", "T", "step", "self-flip", "self-T"]))
    if view_kind == "flip":
        dst, ref_dst = nx.flip(t), np.flip(a)
    elif view_kind == "T" or view_kind == "self-T":
        dst, ref_dst = t.T, a.T
    elif view_kind == "self-flip":
        dst, ref_dst = t, a
    else:
        dst, ref_dst = t[..., ::2], a[..., ::2]
    if view_kind == "self-flip":
        src, ref_src = nx.flip(t), np.flip(a).copy()
    elif view_kind == "self-T":
        if len(set(a.shape)) != 1:
            return
        src, ref_src = t, a.copy()
    else:
        ref_src = values(ref_dst.shape, a.dtype, 11)
        src = nx.asarray(ref_src)
    nx.assign(dst, src)
    ref_dst[...] = ref_src
    assert_same(t, a, f"assign via {view_kind}")


# ---------------------------------------------------------------------------------------------
# gather / scatter
# ---------------------------------------------------------------------------------------------

INDEX_DTYPES = [np.int32, np.int64, np.int8, np.int16, np.uint8, np.uint32]


@st.composite
def along_case(draw):
    """(arr tensor, arr ndarray, indices ndarray, axis, layout) for take/put_along_axis."""
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    a = values(shape, dtype, draw(st.integers(0, 20)))
    layout = draw(st.sampled_from(["c", "flip", "T", "step", "broadcast", "pad"]))
    t = nx.asarray(a)
    if layout == "flip":
        t, a = nx.flip(t), np.flip(a)
    elif layout == "T":
        t, a = t.T, a.T
    elif layout == "step":
        t, a = t[..., ::2], a[..., ::2]
    elif layout == "broadcast":
        t = nx.broadcast_to(t[..., :1], a.shape)
        a = np.broadcast_to(a[..., :1], a.shape)
    elif layout == "pad":
        t, a = nx.pad(t, 1, constant_values=0), np.pad(a, 1)
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    ax = axis % a.ndim
    n = a.shape[ax]
    ishape = []
    for d, m in enumerate(a.shape):
        if d == ax:
            ishape.append(draw(st.integers(0, 5)))
        elif m == 1:
            ishape.append(draw(st.integers(1, 3)))
        else:
            ishape.append(draw(st.sampled_from([m, 1])))
    idt = np.dtype(draw(st.sampled_from(INDEX_DTYPES)))
    low = 0 if idt.kind == "u" else -n
    raw = draw(st.lists(st.integers(low, n - 1), min_size=math.prod(ishape),
                        max_size=math.prod(ishape)))
    idx = np.asarray(raw, dtype=idt).reshape(ishape)
    if draw(st.booleans()) and idx.ndim > 1:      # non-contiguous indices
        idx = np.asfortranarray(idx)
    return t, a, idx, axis, layout


def along_reference(a, idx, values_b, axis, mode):
    """put_along_axis by a loop in C order over the indexed shape (duplicates: later wins for
    "set", accumulate otherwise)."""
    ax = axis % a.ndim
    n = a.shape[ax]
    B = tuple(idx.shape[d] if d == ax else max(a.shape[d], idx.shape[d]) for d in range(a.ndim))
    out = np.array(a, copy=True)
    if out.dtype == np.float16 and mode in ("add", "mul"):
        out = out.astype(np.float32)      # nx accumulates float16 in float32, rounds once
    ib = np.broadcast_to(idx, B)
    vb = np.broadcast_to(values_b, B)
    seen = set()
    for p in np.ndindex(*B):
        k = int(ib[p])
        k = k + n if k < 0 else k
        q = tuple(k if d == ax else (p[d] if a.shape[d] != 1 else 0) for d in range(a.ndim))
        if q in seen:
            along_reference.duplicates = True
        seen.add(q)
        u = vb[p]
        if mode == "set":
            out[q] = u
        elif out.dtype.kind == "b":
            out[q] = (out[q] or u) if mode in ("add", "max") else (out[q] and u)
        elif mode == "add":
            out[q] = out[q] + u
        elif mode == "mul":
            out[q] = out[q] * u
        elif mode == "max":
            out[q] = np.maximum(out[q], u)
        else:
            out[q] = np.minimum(out[q], u)
    return out.astype(a.dtype)


@settings(max_examples=100 * SCALE, **SETTINGS)
@given(along_case())
def test_take_along_axis_matches_numpy(case):
    t, a, idx, axis, layout = case
    ref = np.take_along_axis(a, idx.astype(np.int64), axis)
    got = nx.take_along_axis(t, idx, axis)
    assert_same(got, ref, f"take_along_axis({layout}, axis={axis}, idx {idx.dtype})")
    # the same through a tensor of indices that is itself a strided view
    idx_t = nx.flip(nx.flip(nx.asarray(np.ascontiguousarray(idx)), 0), 0)
    assert_same(nx.take_along_axis(t, idx_t, axis), ref, "take_along_axis(tensor indices)")


@settings(max_examples=100 * SCALE, **SETTINGS)
@given(along_case(), st.sampled_from(["set", "add", "mul", "max", "min"]), st.data())
def test_put_along_axis_matches_reference(case, mode, data):
    t, a, idx, axis, layout = case
    if a.dtype.kind == "c" and mode in ("max", "min"):
        with pytest.raises(TypeError):
            nx.put_along_axis(t, idx, 1, axis, mode=mode)
        return
    ax = axis % a.ndim
    B = tuple(idx.shape[d] if d == ax else max(a.shape[d], idx.shape[d]) for d in range(a.ndim))
    vshape = data.draw(st.sampled_from([B, (), tuple(1 if i % 2 else b for i, b in
                                                        enumerate(B))]))
    vals = small_values(vshape, a.dtype)
    along_reference.duplicates = False
    with np.errstate(all="ignore"):
        ref = along_reference(a, idx, vals, axis, mode)
    got = nx.put_along_axis(t, idx, vals, axis, mode=mode)
    assert_same(got, ref, f"put_along_axis({layout}, axis={axis}, mode={mode})")
    np.testing.assert_array_equal(np.asarray(t), a)          # the input is not modified
    if mode == "set" and not along_reference.duplicates:
        # NumPy's own put_along_axis agrees (with duplicate targets, NumPy's write order is
        # unspecified; ours is C order, checked above)
        a2 = np.array(a, copy=True)
        np.put_along_axis(a2, idx.astype(np.int64), vals, axis)
        np.testing.assert_array_equal(got.numpy(), a2)


def small_values(shape, dtype):
    """Values whose sums and products of a few terms are exact in every dtype (so the order in
    which duplicates accumulate does not matter)."""
    v = values(shape, dtype, 5)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (v % 4).astype(dt)
    if dt.kind == "c":
        return ((v.real % 4) + 1j * (v.imag % 2)).astype(dt)
    return v


@settings(max_examples=80 * SCALE, **SETTINGS)
@given(along_case(), st.data())
def test_take_and_at_updates_match_numpy(case, data):
    t, a, idx, axis, layout = case
    flat_idx = idx.reshape(-1)
    assert_same(nx.take(t, flat_idx, axis=axis), np.take(a, flat_idx.astype(np.int64), axis=axis),
                f"take({layout}, axis={axis})")
    # x[int array] on axis 0 and x.at[int array].<mode>(v)
    n0 = a.shape[0]
    i0 = np.asarray(data.draw(st.lists(st.integers(-n0, n0 - 1), max_size=6)), dtype=np.int64)
    assert_same(t[i0], a[i0], "getitem(int array)")
    mode = data.draw(st.sampled_from(["set", "add", "multiply", "max", "min"]))
    if a.dtype.kind == "c" and mode in ("max", "min"):
        return
    v = small_values(a[i0].shape, a.dtype)
    ref = a.copy()
    if ref.dtype == np.float16 and mode in ("add", "multiply"):
        ref = ref.astype(np.float32)      # nx accumulates float16 in float32, rounds once
    with np.errstate(all="ignore"):
        if mode == "set":
            for k, i in enumerate(i0):          # duplicates: the last in C order wins
                ref[i] = v[k]
        elif ref.dtype.kind == "b":
            fn = np.logical_or if mode in ("add", "max") else np.logical_and
            fn.at(ref, i0, v)
        else:
            {"add": np.add, "multiply": np.multiply, "max": np.maximum,
             "min": np.minimum}[mode].at(ref, i0, v)
    ref = ref.astype(a.dtype)
    got = getattr(t.at[i0], mode)(v)
    assert_same(got, ref, f"at[{i0.tolist()}].{mode}")
    # bool masks select like NumPy
    mask = values(a.shape, np.bool_, 3)
    assert_same(t[mask], a[mask], "getitem(bool mask)")


@settings(max_examples=60 * SCALE, **SETTINGS)
@given(along_case(), st.data())
def test_out_of_range_indices_raise_index_error(case, data):
    t, a, idx, axis, layout = case
    ax = axis % a.ndim
    n = a.shape[ax]
    if idx.size == 0:
        return
    bad = data.draw(st.sampled_from([n, n + 7, -n - 1, 2**31 - 1, -2**31]))
    big = np.array(idx, dtype=np.int64, order="C")
    big.reshape(-1)[data.draw(st.integers(0, idx.size - 1))] = bad
    with pytest.raises(IndexError):
        np.take_along_axis(a, big, axis)
    with pytest.raises(IndexError, match="out of bounds"):
        nx.take_along_axis(t, big, axis)
    with pytest.raises(IndexError, match="out of bounds"):
        nx.put_along_axis(t, big, 0, axis)
    # through the kernel directly (the front end checks first)
    from nx_rune._kernels import gather as K
    with pytest.raises(IndexError, match="out of bounds"):
        K.gather(a, big, axis)
    with pytest.raises(IndexError, match="out of bounds"):
        K.scatter(a, big, a.dtype.type(0), axis, "add" if a.dtype.kind != "b" else "max")
