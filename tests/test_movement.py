"""Movement ops against NumPy over random shapes, dtypes and input layouts (contiguous, views,
padded), read both as zero-copy views and materialized; chains of them; basic slicing."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided as np_as_strided

import nx_rune as nx
from nx_rune.frontend import indexing

SETTINGS = settings(deadline=None, max_examples=80)
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint16, np.float16, np.float32, np.float64,
          np.complex64]
LAYOUTS = ["contiguous", "transposed", "flipped", "sliced", "padded", "broadcast"]


def values(shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0, 50, shape).astype(dt)
    v = rng.integers(-50, 50, shape).astype(np.float64) / 4
    if dt.kind == "c":
        v = v + 1j * rng.integers(-5, 5, shape)
    return v.astype(dt)


def make(arr, layout):
    """A tensor equal to arr with the given layout (arr is the reference)."""
    if layout == "contiguous" or arr.ndim == 0:
        return nx.asarray(arr.copy())
    if layout == "transposed":
        return nx.transpose(nx.asarray(np.ascontiguousarray(arr.T)))
    if layout == "flipped":
        return nx.flip(nx.asarray(np.ascontiguousarray(np.flip(arr))))
    if layout == "sliced":
        big = np.zeros(tuple(2 * n + 1 for n in arr.shape), arr.dtype)
        big[tuple(slice(1, None, 2) for _ in arr.shape)] = arr
        return nx.asarray(big)[tuple(slice(1, None, 2) for _ in arr.shape)]
    if layout == "padded":  # interior from memory, a border of fill from the mask
        if arr.size == 0 or min(arr.shape) < 3:
            return nx.pad(nx.asarray(arr.copy()), 0)
        inner = arr[tuple(slice(1, -1) for _ in arr.shape)]
        t = nx.pad(nx.asarray(inner.copy()), 1, constant_values=arr.flat[0])
        # the reference must then have the fill on its border
        return t
    # broadcast: a stride-0 view repeating the first row
    return nx.broadcast_to(nx.asarray(arr[:1].copy()), arr.shape)


def reference(arr, layout):
    if layout == "padded" and arr.ndim and arr.size and min(arr.shape) >= 3:
        inner = arr[tuple(slice(1, -1) for _ in arr.shape)]
        return np.pad(inner, 1, constant_values=arr.flat[0])
    if layout == "broadcast" and arr.ndim:
        return np.broadcast_to(arr[:1], arr.shape)
    return arr


@st.composite
def cases(draw, min_dims=0, max_dims=4, max_side=5):
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=min_dims, max_size=max_dims)))
    dtype = draw(st.sampled_from(DTYPES))
    layout = draw(st.sampled_from(LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    arr = values(shape, dtype, rng)
    t = make(arr, layout)
    ref = reference(arr, layout)
    assert t.shape == ref.shape and t.dtype == ref.dtype
    return t, ref


def check(result, expected):
    """Equal to NumPy read as a view, materialized with copy(), and contiguous()."""
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    np.testing.assert_array_equal(result.numpy(), expected)
    np.testing.assert_array_equal(nx.copy(result).numpy(), expected)
    c = nx.contiguous(result)
    assert nx.is_contiguous(c)
    np.testing.assert_array_equal(np.asarray(c), expected)


@pytest.fixture(params=[True, False], ids=["fast-views", "composed"])
def view_path(request):
    """Run basic indexing both through View.index_basic and through the primitive composition
    that transformations see."""
    old = indexing._VIEW_FAST_PATH
    indexing._VIEW_FAST_PATH = request.param
    yield request.param
    indexing._VIEW_FAST_PATH = old


# -- single ops ------------------------------------------------------------------------------

@SETTINGS
@given(c=cases(), data=st.data())
def test_reshape(c, data):
    t, ref = c
    n = ref.size
    # a random factorization of n (or shapes with zeros for empty tensors)
    dims = []
    rest = n
    for _ in range(data.draw(st.integers(0, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1, 2]
        d = data.draw(st.sampled_from(divisors))
        dims.append(d)
        rest = rest // d if d else rest
    if n:
        dims.append(rest)
    elif 0 not in dims:
        dims.append(0)
    shape = tuple(data.draw(st.permutations(dims)))
    check(nx.reshape(t, shape), ref.reshape(shape))
    check(t.reshape(*shape) if shape else t.reshape(()), ref.reshape(shape))
    if n and shape:
        k = data.draw(st.integers(0, len(shape) - 1))
        minus = shape[:k] + (-1,) + shape[k + 1:]
        check(nx.reshape(t, minus), ref.reshape(minus))
    check(nx.ravel(t), ref.ravel())
    check(t.flatten(), ref.flatten())


@SETTINGS
@given(c=cases(max_dims=3), data=st.data())
def test_broadcast_to_and_expand_dims(c, data):
    t, ref = c
    lead = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    shape = lead + tuple(data.draw(st.integers(2, 3)) if n == 1 and data.draw(st.booleans())
                         else n for n in ref.shape)
    check(nx.broadcast_to(t, shape), np.broadcast_to(ref, shape))
    axis = data.draw(st.integers(-ref.ndim - 1, ref.ndim))
    check(nx.expand_dims(t, axis), np.expand_dims(ref, axis))
    if ref.ndim >= 1:
        axes = (0, ref.ndim + 1)
        check(nx.expand_dims(t, axes), np.expand_dims(ref, axes))


@SETTINGS
@given(c=cases(), data=st.data())
def test_squeeze(c, data):
    t, ref = c
    u = nx.expand_dims(t, 0)
    check(nx.squeeze(u), np.squeeze(ref[None]))
    check(nx.squeeze(u, 0), ref)
    ones = tuple(i for i, n in enumerate(ref.shape) if n == 1)
    if ones:
        check(nx.squeeze(t, ones), np.squeeze(ref, ones))
        check(t.squeeze(ones[-1] - ref.ndim), np.squeeze(ref, ones[-1] - ref.ndim))
    big = [i for i, n in enumerate(ref.shape) if n != 1]
    if big:
        with pytest.raises(ValueError, match="squeeze"):
            nx.squeeze(t, big[0])


@SETTINGS
@given(c=cases(), data=st.data())
def test_transpose_permute_moveaxis_swapaxes(c, data):
    t, ref = c
    nd = ref.ndim
    check(nx.transpose(t), ref.T)
    check(t.T, ref.T)
    perm = data.draw(st.permutations(range(nd)))
    neg = [p - nd if data.draw(st.booleans()) else p for p in perm]
    check(nx.transpose(t, neg), np.transpose(ref, perm))
    check(nx.permute(t, perm), np.transpose(ref, perm))
    check(t.transpose(*perm) if perm else t.transpose(), np.transpose(ref, perm))
    if nd:
        a = data.draw(st.integers(-nd, nd - 1))
        b = data.draw(st.integers(-nd, nd - 1))
        check(nx.swapaxes(t, a, b), np.swapaxes(ref, a, b))
        check(nx.moveaxis(t, a, b), np.moveaxis(ref, a, b))
        k = data.draw(st.integers(1, nd))
        src = data.draw(st.permutations(range(nd)))[:k]
        dst = data.draw(st.permutations(range(nd)))[:k]
        check(nx.moveaxis(t, src, dst), np.moveaxis(ref, src, dst))


@SETTINGS
@given(c=cases(), data=st.data())
def test_pad_all_forms(c, data):
    t, ref = c
    nd = ref.ndim
    w = st.integers(0, 3)
    fill = data.draw(st.sampled_from([0, 1, 7]))
    if ref.dtype.kind == "b":
        fill = bool(fill)
    forms = [data.draw(w), (data.draw(w), data.draw(w)), ((data.draw(w), data.draw(w)),),
             tuple((data.draw(w), data.draw(w)) for _ in range(nd)), [[data.draw(w)]]]
    for pw in forms:
        if nd == 0:
            continue
        check(nx.pad(t, pw, constant_values=fill), np.pad(ref, pw, constant_values=fill))
    if nd:
        # pad of a pad (same fill: one masked view) and of a different fill (materializes)
        p2 = nx.pad(nx.pad(t, 1, constant_values=fill), 2, constant_values=fill)
        check(p2, np.pad(np.pad(ref, 1, constant_values=fill), 2, constant_values=fill))
        other = not fill if ref.dtype.kind == "b" else fill + 2
        p3 = nx.pad(nx.pad(t, 1, constant_values=fill), (0, 1), constant_values=other)
        check(p3, np.pad(np.pad(ref, 1, constant_values=fill), (0, 1), constant_values=other))


@SETTINGS
@given(c=cases(), data=st.data())
def test_shrink_flip(c, data):
    t, ref = c
    lim = []
    for n in ref.shape:
        a = data.draw(st.integers(0, n))
        lim.append((a, data.draw(st.integers(a, n))))
    check(nx.shrink(t, lim), ref[tuple(slice(a, b) for a, b in lim)])
    check(nx.flip(t), np.flip(ref))
    if ref.ndim:
        axes = tuple(data.draw(st.lists(st.integers(-ref.ndim, ref.ndim - 1), min_size=1,
                                        max_size=ref.ndim, unique_by=lambda a: a % ref.ndim)))
        check(nx.flip(t, axes), np.flip(ref, axes))
        check(nx.flip(t, axes[0]), np.flip(ref, axes[0]))


@SETTINGS
@given(c=cases(max_dims=3), data=st.data())
def test_as_strided(c, data):
    t, ref = c
    assume(ref.size > 0)
    flat = np.ascontiguousarray(ref).reshape(-1)
    n = flat.size
    nd = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 4)) for _ in range(nd))
    strides = tuple(data.draw(st.integers(-3, 3)) for _ in range(nd))
    lo = sum(min(0, (k - 1) * s) for k, s in zip(shape, strides))
    hi = sum(max(0, (k - 1) * s) for k, s in zip(shape, strides))
    assume(hi - lo < n)
    offset = data.draw(st.integers(-lo, n - 1 - hi))
    isz = flat.itemsize
    base = np_as_strided(flat[offset:], shape, tuple(s * isz for s in strides)) if \
        min(strides) >= 0 else None
    expected = np.empty(shape, flat.dtype)
    for idx in np.ndindex(*shape):
        expected[idx] = flat[offset + sum(i * s for i, s in zip(idx, strides))]
    if base is not None:
        np.testing.assert_array_equal(base, expected)
    check(nx.as_strided(t, shape, strides, offset), expected)


@SETTINGS
@given(c=cases(min_dims=1), data=st.data())
def test_concatenate_stack_split(c, data):
    t, ref = c
    nd = ref.ndim
    axis = data.draw(st.integers(-nd, nd - 1))
    other = ref.copy()
    check(nx.concatenate([t, nx.asarray(other)], axis), np.concatenate([ref, other], axis))
    check(nx.concatenate([t], axis), ref)
    check(nx.concatenate((t, t, t), axis=axis), np.concatenate((ref, ref, ref), axis))
    sax = data.draw(st.integers(-nd - 1, nd))
    check(nx.stack([t, t], sax), np.stack([ref, ref], sax))
    n = ref.shape[axis]
    divisors = [d for d in range(1, n + 1) if n % d == 0] or [1]
    k = data.draw(st.sampled_from(divisors))
    for got, want in zip(nx.split(t, k, axis), np.split(ref, k, axis)):
        check(got, want)
    cuts = sorted(data.draw(st.lists(st.integers(-n - 2, n + 2), max_size=3)))
    got, want = nx.split(t, cuts, axis), np.split(ref, cuts, axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w)


def test_concatenate_promotes_and_checks():
    a = nx.asarray(np.ones((2, 3), np.int32))
    b = nx.asarray(np.ones((1, 3), np.float32))
    r = nx.concatenate([a, b])
    assert r.dtype == np.float32 and r.shape == (3, 3)   # int32 with float32: float32 (JAX's)
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(2, 4\)"):
        nx.concatenate([a, nx.zeros((2, 4))])
    with pytest.raises(ValueError, match="at least one"):
        nx.concatenate([])
    with pytest.raises(ValueError, match="0-d"):
        nx.concatenate([nx.asarray(1.0), nx.asarray(2.0)])
    with pytest.raises(ValueError, match="same shape"):
        nx.stack([a, nx.zeros((3, 2))])
    with pytest.raises(ValueError, match="sections"):
        nx.split(a, 2, axis=1)


@SETTINGS
@given(c=cases())
def test_copy_contiguous_is_contiguous_shares_memory(c):
    t, ref = c
    cp = nx.copy(t)
    check(cp, ref)
    assert nx.is_contiguous(cp) and not nx.shares_memory(cp, t)
    ct = nx.contiguous(t)
    if nx.is_contiguous(t):
        assert ct is t
    else:
        assert nx.is_contiguous(ct)
    flags_c = np.asarray(t).flags.c_contiguous or ref.size <= 1
    if t.view.mask is None:
        assert nx.is_contiguous(t) == (flags_c or np.asarray(t).flags.c_contiguous)
    if ref.size and t.view.mask is None:  # as NumPy: no elements, no memory shared
        assert nx.shares_memory(t, t.T) and nx.shares_memory(t, nx.flip(t))
    assert not nx.shares_memory(t, nx.asarray(ref.copy()))


# -- basic slicing ------------------------------------------------------------------------------

slice_part = st.one_of(st.none(), st.integers(-7, 7))
slices = st.builds(slice, slice_part, slice_part, st.one_of(st.none(), st.sampled_from(
    [1, 2, 3, -1, -2, -3, 5])))


@st.composite
def basic_indices(draw, ndim):
    items = []
    used = 0
    for _ in range(draw(st.integers(0, ndim + 1))):
        kind = draw(st.sampled_from(["slice", "slice", "int", "none"]))
        if kind == "none":
            items.append(None)
        elif used < ndim:
            used += 1
            items.append(draw(slices) if kind == "slice" else draw(st.integers(-6, 6)))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return tuple(items)


@settings(deadline=None, max_examples=150,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(c=cases(), data=st.data())
def test_basic_slicing(view_path, c, data):
    t, ref = c
    idx = data.draw(basic_indices(ref.ndim))
    try:
        want = ref[idx]
    except IndexError:
        with pytest.raises(IndexError):
            t[idx]
        return
    got = t[idx]
    check(got, want)
    if t.view.mask is None:  # views of unmasked tensors stay views when the steps fit
        steps_fit = all(not isinstance(i, slice) or i.step in (None, 1, -1) for i in idx)
        if steps_fit and want.size:
            assert nx.shares_memory(got, t)


def test_slicing_examples(view_path):
    a = np.arange(80, dtype=np.float32).reshape(10, 8)
    t = nx.asarray(a)
    for idx in [(slice(1, 5), slice(None, None, -1)), (Ellipsis, 0), (None, 3), (-1,),
                (slice(None, None, 3), slice(1, None, 2)), (slice(None, None, -3),),
                (Ellipsis, None, slice(2, 3)), (slice(8, 2, -2), Ellipsis, slice(7, 0, -3)),
                (slice(100, 200),), (slice(-100, 100, 4),), ()]:
        np.testing.assert_array_equal(t[idx].numpy(), a[idx])
    assert nx.shares_memory(t[1:5, ::-1], t)
    assert nx.shares_memory(t[::2, 1::2], t)
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 10"):
        t[10]
    with pytest.raises(IndexError, match="axis 1 with size 8"):
        t[0, -9]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., 0, ...]
    with pytest.raises(IndexError):
        t["a"]
    with pytest.raises(TypeError):
        t[1.5]


def test_iteration_len_and_item():
    a = np.arange(6).reshape(3, 2)
    t = nx.asarray(a)
    assert len(t) == 3
    for row, want in zip(t, a):
        np.testing.assert_array_equal(row.numpy(), want)
    assert t[2, 1].item() == 5 and int(t[1, 1]) == 3
    with pytest.raises(TypeError, match="0-d"):
        len(t[0, 0])
    with pytest.raises(ValueError, match="one element"):
        t.item()


# -- chains --------------------------------------------------------------------------------------

OPS = ["transpose", "flip", "pad", "shrink", "reshape", "expand_dims", "squeeze", "slice",
       "broadcast", "moveaxis"]


@settings(deadline=None, max_examples=100,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(c=cases(max_dims=3, max_side=4), data=st.data())
def test_chains_of_movement_ops(view_path, c, data):
    t, ref = c
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(OPS))
        nd = ref.ndim
        if op == "transpose":
            p = data.draw(st.permutations(range(nd)))
            t, ref = nx.transpose(t, p), np.transpose(ref, p)
        elif op == "flip" and nd:
            ax = data.draw(st.integers(0, nd - 1))
            t, ref = nx.flip(t, ax), np.flip(ref, ax)
        elif op == "pad" and nd and ref.size < 200:
            pw = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(nd)]
            t, ref = nx.pad(t, pw), np.pad(ref, pw)
        elif op == "shrink":
            lim = []
            for n in ref.shape:
                a = data.draw(st.integers(0, n))
                lim.append((a, data.draw(st.integers(a, n))))
            t, ref = nx.shrink(t, lim), ref[tuple(slice(a, b) for a, b in lim)]
        elif op == "reshape":
            t, ref = nx.reshape(t, (-1,) if ref.size else (0,)), ref.reshape(-1)
            if ref.size and ref.size % 2 == 0:
                t, ref = nx.reshape(t, (2, -1)), ref.reshape(2, -1)
        elif op == "expand_dims" and nd < 4:
            ax = data.draw(st.integers(0, nd))
            t, ref = nx.expand_dims(t, ax), np.expand_dims(ref, ax)
        elif op == "squeeze":
            t, ref = nx.squeeze(t), np.squeeze(ref)
        elif op == "slice" and nd:
            idx = data.draw(basic_indices(nd))
            try:
                want = ref[idx]
            except IndexError:
                continue
            t, ref = t[idx], want
        elif op == "broadcast" and nd < 4 and ref.size < 100:
            t, ref = nx.broadcast_to(t, (2,) + ref.shape), np.broadcast_to(ref, (2,) + ref.shape)
        elif op == "moveaxis" and nd:
            a, b = data.draw(st.integers(0, nd - 1)), data.draw(st.integers(0, nd - 1))
            t, ref = nx.moveaxis(t, a, b), np.moveaxis(ref, a, b)
        check(t, ref)


def test_reshape_of_non_contiguous_copies_only_when_needed():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    t = nx.asarray(a)
    tt = nx.transpose(t, (1, 0, 2))          # (3, 2, 4): last axis still contiguous
    r = nx.reshape(tt, (3, 8))               # merging axes 1, 2 of the transpose: needs a copy
    np.testing.assert_array_equal(r.numpy(), a.transpose(1, 0, 2).reshape(3, 8))
    r2 = nx.reshape(tt, (3, 2, 2, 2))        # splitting the contiguous axis: a view
    assert nx.shares_memory(r2, t)
    np.testing.assert_array_equal(r2.numpy(), a.transpose(1, 0, 2).reshape(3, 2, 2, 2))
    f = nx.flip(t, 2)
    np.testing.assert_array_equal(nx.reshape(f, (6, 4)).numpy(), a[:, :, ::-1].reshape(6, 4))
    assert nx.shares_memory(nx.reshape(f, (6, 4)), t)
    p = nx.pad(t, 1)
    np.testing.assert_array_equal(nx.reshape(p, (-1,)).numpy(), np.pad(a, 1).reshape(-1))


def test_reshape_empty_and_scalar():
    z = nx.zeros((0, 3))
    assert nx.reshape(z, (3, 0, 5)).shape == (3, 0, 5)
    assert nx.reshape(z, (-1, 3)).shape == (0, 3)
    s = nx.asarray(5.0)
    assert nx.reshape(s, (1, 1)).shape == (1, 1)
    assert nx.reshape(nx.reshape(s, (1,)), ()).item() == 5.0
    assert math.prod(nx.broadcast_to(s, (2, 0)).shape) == 0
