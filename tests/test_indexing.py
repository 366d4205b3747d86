"""Advanced indexing (integer arrays, bool masks, mixed with basic indices), take /
take_along_axis / put_along_axis and ``x.at[...]`` against NumPy: duplicates, negative indices,
errors; and the derivative of indexing (gather's VJP is a scatter-add)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx

SETTINGS = settings(deadline=None, max_examples=80)
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint16, np.float16, np.float32,
          np.float64, np.complex64]
INDEX_KINDS = ["list", "ndarray", "tensor", "int64", "uint8"]
seeds = st.integers(0, 2**16)


def values(shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind == "c":
        return (rng.integers(-9, 9, shape) + 1j * rng.integers(-9, 9, shape)).astype(dt)
    return rng.integers(0 if dt.kind == "u" else -9, 9, shape).astype(dt)


def as_kind(idx, kind):
    idx = np.asarray(idx)
    if kind == "list" and idx.size:   # (an empty list would lose the shape)
        return idx.tolist()
    if kind == "tensor":
        return nx.asarray(idx)
    if kind == "int64":
        return idx.astype(np.int64)
    if kind == "uint8" and idx.size and idx.min() >= 0 and idx.max() < 256:
        return idx.astype(np.uint8)
    return idx.astype(np.int32)


def check(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


# -- advanced indexing: strategies ---------------------------------------------------------------

@st.composite
def arrays(draw, min_dims=1, max_dims=4):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=min_dims, max_size=max_dims)))
    dtype = draw(st.sampled_from(DTYPES))
    arr = values(shape, dtype, np.random.default_rng(draw(seeds)))
    layout = draw(st.sampled_from(["c", "T", "flip", "pad"]))
    if layout == "T":
        t = nx.transpose(nx.asarray(np.ascontiguousarray(arr.T)))
    elif layout == "flip":
        t = nx.flip(nx.asarray(np.ascontiguousarray(np.flip(arr))))
    elif layout == "pad":
        t = nx.shrink(nx.pad(nx.asarray(arr), 1), [(1, 1 + n) for n in arr.shape])
        t = nx.pad(t, 0)
    else:
        t = nx.asarray(arr)
    return t, arr


def int_index(draw, n, shape, allow_oob=False):
    lo, hi = (-n - 1, n) if allow_oob else (-n, n - 1)
    return np.array(draw(st.lists(st.integers(lo, hi), min_size=int(np.prod(shape)),
                                  max_size=int(np.prod(shape))))).reshape(shape).astype(np.int64)


@st.composite
def mixed_index(draw, shape):
    """An index tuple with 1-3 integer arrays (broadcasting shapes), maybe a bool mask, ints,
    slices, None and Ellipsis, valid for ``shape``."""
    nd = len(shape)
    n_arr = draw(st.integers(1, min(3, nd)))
    bshape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    arr_axes = sorted(draw(st.lists(st.integers(0, nd - 1), min_size=n_arr, max_size=n_arr,
                                    unique=True)))
    items = []
    kind = draw(st.sampled_from(INDEX_KINDS))
    for ax in range(nd):
        n = shape[ax]
        if ax in arr_axes:
            s = tuple(1 if draw(st.booleans()) else d for d in bshape)[draw(st.integers(
                0, len(bshape))):]
            items.append(as_kind(int_index(draw, n, s), kind))
        else:
            c = draw(st.sampled_from(["slice", "int", "full", "mask"]))
            if c == "slice":
                items.append(slice(draw(st.integers(-n, n)), None,
                                   draw(st.sampled_from([1, -1, 2]))))
            elif c == "int":
                items.append(draw(st.integers(-n, n - 1)))
            elif c == "mask":
                m = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
                items.append(nx.asarray(m) if draw(st.booleans()) else m)
            else:
                items.append(slice(None))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    # trailing full slices may be dropped or replaced by an Ellipsis
    while (items and isinstance(items[-1], slice) and items[-1] == slice(None)
           and draw(st.booleans())):
        items.pop()
    if draw(st.booleans()):
        k = draw(st.integers(0, len(items)))
        if all(i is None or (isinstance(i, slice) and i == slice(None)) for i in items[k:k + 1]):
            items[k:k + 1] = [Ellipsis]
    return tuple(items)


def np_index(idx):
    return tuple(i.numpy() if isinstance(i, nx.Tensor) else i for i in idx)


@SETTINGS
@given(c=arrays(), data=st.data())
def test_single_integer_array_with_basic_indices(c, data):
    t, arr = c
    nd = arr.ndim
    ax = data.draw(st.integers(0, nd - 1))
    ishape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    idx_arr = as_kind(int_index(data.draw, arr.shape[ax], ishape), data.draw(st.sampled_from(
        INDEX_KINDS)))
    items = [slice(None)] * nd
    items[ax] = idx_arr
    for j in range(nd):
        if j != ax and data.draw(st.booleans()):
            items[j] = data.draw(st.sampled_from([slice(1, None), slice(None, None, -1),
                                                  0, -1, slice(None, None, 2)]))
    idx = tuple(items)
    want = arr[np_index(idx)]
    check(t[idx], want)
    check(t.at[idx].get(), want)


@SETTINGS
@given(c=arrays(), data=st.data())
def test_mixed_advanced_indices_follow_numpy(c, data):
    t, arr = c
    idx = data.draw(mixed_index(arr.shape))
    try:
        want = arr[np_index(idx)]
    except IndexError:
        with pytest.raises(IndexError):
            t[idx]
        return
    check(t[idx], want)


@pytest.mark.parametrize("idx", [
    ([0, 1],), (slice(None), [0, 2]), (0, slice(None), [1, 2]), (slice(None), 0, [1, 2]),
    ([0, 1], Ellipsis, [0, 1]), (slice(None), [0], Ellipsis, [1]), (slice(None), [0], None, [1]),
    (slice(None), True, [1]), (True,), (False,), (Ellipsis, True), (np.array(1),),
    (slice(None), [[0, 1]], slice(None)), ([-1, 0], [[1], [2]]), ([],), ([[]],),
    (np.array([[1, 0], [0, 1]]), slice(None, None, -1), np.array([3, -4])), ((0, 1),),
    (1, [2, 0], [[3], [1]]), (slice(1, None), [True, False, True]),
])
def test_placement_rules(idx):
    a = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    t = nx.asarray(a)
    check(t[idx], a[idx])
    check(t[tuple(nx.asarray(i) if isinstance(i, np.ndarray) else i for i in idx)], a[idx])


def test_bool_masks():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    t = nx.asarray(a)
    for m in [a > 0, a[:, 0, 0] > 0, a[:, :, 0] > 0, np.zeros((3, 4, 5), bool), np.ones(3, bool)]:
        check(t[m], a[m])
        check(t[nx.asarray(m)], a[m])
    m = a[0, 0] > 0
    check(t[..., m], a[..., m])
    check(t[1, :, m], a[1, :, m])
    check(t[a > 0.5], a[a > 0.5])
    check(t[t > 0.5], a[a > 0.5])       # a tensor mask
    with pytest.raises(IndexError, match=r"mask of shape \(4,\).*axis 0 of size 3"):
        t[np.ones(4, bool)]
    with pytest.raises(IndexError, match="mask"):
        t[:, np.ones((4, 4), bool)]


def test_index_errors():
    t = nx.asarray(np.arange(12).reshape(3, 4))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        t[[0, 3]]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        t[:, [0, -5]]
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 4"):
        t[[0, 1], [1, 9]]
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        t[None, 1, [4]]
    with pytest.raises(TypeError, match="integer or bool"):
        t[np.array([0.0, 1.0])]
    with pytest.raises(IndexError, match="integer or bool"):   # also an IndexError, as NumPy's
        t[[1.5]]
    with pytest.raises(TypeError, match="integer or bool"):
        t[nx.asarray([0.5])]
    with pytest.raises(IndexError, match="shape mismatch"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices"):
        t[[0], [0], [0]]
    with pytest.raises(IndexError):
        t[["a"]]


@SETTINGS
@given(c=arrays(min_dims=2, max_dims=3), data=st.data())
def test_advanced_index_of_empty_axes(c, data):
    t, arr = c
    empty = nx.shrink(t, [(0, 0)] + [(0, n) for n in arr.shape[1:]])
    ref = arr[:0]
    check(empty[:, [0, -1]], ref[:, [0, -1]])
    check(empty[[], 0], ref[[], 0])
    with pytest.raises(IndexError, match="axis 0 with size 0"):
        empty[[0]]


# -- take / take_along_axis ----------------------------------------------------------------------

@SETTINGS
@given(c=arrays(), data=st.data())
def test_take(c, data):
    t, arr = c
    axis = data.draw(st.one_of(st.none(), st.integers(-arr.ndim, arr.ndim - 1)))
    n = arr.size if axis is None else arr.shape[axis]
    ishape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=3)))
    idx = int_index(data.draw, n, ishape)
    kind = data.draw(st.sampled_from(INDEX_KINDS))
    check(nx.take(t, as_kind(idx, kind), axis=axis), np.take(arr, idx, axis=axis))


@SETTINGS
@given(c=arrays(), data=st.data())
def test_take_along_axis(c, data):
    t, arr = c
    axis = data.draw(st.integers(-arr.ndim, arr.ndim - 1))
    ax = axis % arr.ndim
    ishape = tuple(data.draw(st.integers(0, 4)) if d == ax else
                   (1 if data.draw(st.booleans()) else n) for d, n in enumerate(arr.shape))
    idx = int_index(data.draw, arr.shape[ax], ishape)
    kind = data.draw(st.sampled_from(["ndarray", "tensor", "int64", "list"]))
    check(nx.take_along_axis(t, as_kind(idx, kind), axis), np.take_along_axis(arr, idx, axis))
    flat = int_index(data.draw, arr.size, (data.draw(st.integers(0, 5)),))
    check(nx.take_along_axis(t, flat, None), np.take_along_axis(arr, flat, None))


def test_take_along_axis_with_argsort_and_argmax():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    t = nx.asarray(a)
    order = np.argsort(a, axis=1)
    check(nx.take_along_axis(t, order, 1), np.sort(a, axis=1))
    am = nx.argmax(t, axis=1, keepdims=True)
    check(nx.take_along_axis(t, am, 1), np.max(a, axis=1, keepdims=True))


def test_take_and_along_errors():
    t = nx.asarray(np.arange(12).reshape(3, 4))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        nx.take(t, [0, 4], axis=1)
    with pytest.raises(IndexError, match="index -13 is out of bounds for axis 0 with size 12"):
        nx.take(t, [-13])
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        nx.take_along_axis(t, np.array([[3, 0, 0, 0]]), 0)
    with pytest.raises(TypeError, match="integer"):
        nx.take(t, [0.5], axis=0)
    with pytest.raises(TypeError, match="integer"):
        nx.take_along_axis(t, np.zeros((3, 1), np.float32), 1)
    with pytest.raises(TypeError, match="integer"):
        nx.take(t, np.array([True, False]))
    with pytest.raises(ValueError, match=r"same number of dimensions.*\(3, 4\).*\(2,\)"):
        nx.take_along_axis(t, np.array([0, 1]), 1)
    with pytest.raises(ValueError, match="broadcast"):
        nx.take_along_axis(t, np.zeros((2, 1), np.int32), 1)
    with pytest.raises(ValueError, match="1-D"):
        nx.take_along_axis(t, np.zeros((2, 1), np.int32), None)
    with pytest.raises(ValueError, match="out of range"):
        nx.take(t, [0], axis=2)


# -- put_along_axis / at[] -------------------------------------------------------------------------

NP_AT = {"add": np.add.at, "mul": np.multiply.at, "max": np.maximum.at, "min": np.minimum.at}


def np_put_along(arr, idx, vals, axis, mode):
    out = arr.copy()
    if mode == "set":
        np.put_along_axis(out, idx, vals, axis)
        return out
    if axis is None:
        flat = out.reshape(-1)
        NP_AT[mode](flat, idx, np.broadcast_to(vals, idx.shape))
        return out
    # the explicit index tuple of each (broadcast) position of idx
    vals = np.broadcast_to(vals, idx.shape)
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    NP_AT[mode](out, tuple(grids), vals)
    return out


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from([np.int32, np.int64, np.float32, np.float64, np.uint8]),
       mode=st.sampled_from(["set", "add", "mul", "max", "min"]), data=st.data(), seed=seeds)
def test_put_along_axis_modes(shape, dtype, mode, data, seed):
    rng = np.random.default_rng(seed)
    arr = values(shape, dtype, rng)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ax = axis % len(shape)
    ishape = tuple(data.draw(st.integers(0, 4)) if d == ax else n for d, n in enumerate(shape))
    if mode == "set":  # distinct along the axis: NumPy's result is then well defined
        k = min(ishape[ax], shape[ax])
        ishape = ishape[:ax] + (k,) + ishape[ax + 1:]
        idx = np.argsort(rng.random(ishape[:ax] + (shape[ax],) + ishape[ax + 1:]), axis=ax)
        idx = np.take(idx, np.arange(k), axis=ax)
    else:
        idx = rng.integers(-shape[ax], shape[ax], ishape)
    vals = values(ishape if data.draw(st.booleans()) else (), dtype, rng)
    got = nx.put_along_axis(nx.asarray(arr), idx, nx.asarray(vals), axis, mode=mode)
    check(got, np_put_along(arr, idx, vals, ax, mode))


def test_put_along_axis_duplicates_last_wins_and_flat():
    a = np.zeros(5, np.float32)
    got = nx.put_along_axis(nx.asarray(a), [1, 3, 1, 1], nx.asarray([1.0, 2.0, 3.0, 4.0]), 0)
    check(got, np.array([0, 4, 0, 2, 0], np.float32))
    got = nx.put_along_axis(nx.asarray(a), [1, 3, 1], 1.0, 0, mode="add")
    check(got, np.array([0, 2, 0, 1, 0], np.float32))
    b = np.arange(6.0).reshape(2, 3)
    got = nx.put_along_axis(nx.asarray(b), np.array([0, 5, -1]), 9.0, None)
    want = b.copy().reshape(-1)
    want[[0, 5]] = 9
    check(got, want.reshape(2, 3))
    with pytest.raises(ValueError, match="mode"):
        nx.put_along_axis(nx.asarray(a), [0], 1.0, 0, mode="avg")
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        nx.put_along_axis(nx.asarray(a), [5], 1.0, 0)
    with pytest.raises(ValueError, match="values"):
        nx.put_along_axis(nx.asarray(a), [0, 1], nx.ones(3), 0)


@st.composite
def update_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dtype = draw(st.sampled_from([np.int32, np.int64, np.float32, np.float64]))
    rng = np.random.default_rng(draw(seeds))
    arr = values(shape, dtype, rng)
    kind = draw(st.sampled_from(["basic", "array", "arrays", "mask"]))
    nd = len(shape)
    if kind == "basic":
        items = [slice(None), slice(1, None), 0, -1, slice(None, None, -2)]
        idx = tuple(draw(st.sampled_from(items)) for _ in range(draw(st.integers(1, nd))))
    elif kind == "array":
        idx = (rng.integers(-shape[0], shape[0], draw(st.integers(0, 5))),)
    elif kind == "arrays" and nd >= 2:
        k = draw(st.integers(0, 4))
        idx = (rng.integers(0, shape[0], k), rng.integers(-shape[1], shape[1], k))
    else:
        idx = (arr > 0,)
    return arr, idx, rng


@SETTINGS
@given(case=update_case(), mode=st.sampled_from(["set", "add", "multiply", "max", "min"]),
       scalar=st.booleans())
def test_at_updates(case, mode, scalar):
    arr, idx, rng = case
    sel = arr[idx]
    vals = np.asarray(3, arr.dtype) if scalar else values(sel.shape, arr.dtype, rng)
    t = nx.asarray(arr)
    got = getattr(t.at[idx], mode)(vals if scalar else nx.asarray(vals))
    want = arr.copy()
    if mode == "set":
        want[idx] = vals   # NumPy: with duplicates the last assignment wins, as ours
    else:
        {"add": np.add.at, "multiply": np.multiply.at, "max": np.maximum.at,
         "min": np.minimum.at}[mode](want, idx, vals)
    check(got, want)
    np.testing.assert_array_equal(t.numpy(), arr)       # x itself is unchanged
    check(t.at[idx].get(), sel)


def test_at_examples():
    x = nx.zeros((3, 4), nx.int32)
    check(x.at[0, [1, 1, 2]].add(5), np.array([[0, 10, 5, 0], [0] * 4, [0] * 4], np.int32))
    check(x.at[:, 1].set(nx.asarray([1, 2, 3])), np.array([[0, 1, 0, 0], [0, 2, 0, 0],
                                                            [0, 3, 0, 0]], np.int32))
    check(x.at[[0, 0], [1, 1]].set(nx.asarray([7, 8])), np.array([[0, 8, 0, 0], [0] * 4,
                                                                   [0] * 4], np.int32))
    check(x.at[1].mul(3), np.zeros((3, 4), np.int32))
    check(x.at[...].max(2), np.full((3, 4), 2, np.int32))
    check(x.at[1:, ::2].min(-1), np.array([[0] * 4, [-1, 0, -1, 0], [-1, 0, -1, 0]], np.int32))
    check(x.at[1].set(2.7), np.array([[0] * 4, [2] * 4, [0] * 4], np.int32))  # cast as JAX
    f = nx.zeros(3)
    check(f.at[nx.asarray([True, False, True])].set(1.0), np.array([1, 0, 1], np.float32))
    with pytest.raises(ValueError, match=r"values: shape \(3,\).*indexed shape \(2,\)"):
        f.at[[0, 1]].set(nx.ones(3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        f.at[[3]].set(1.0)


# -- derivatives of indexing (gather's VJP is a scatter-add) ---------------------------------------

@pytest.mark.skipif(not hasattr(nx, "grad"), reason="autodiff not available")
def test_grad_of_indexing_accumulates_duplicates():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x = nx.asarray(a)
    idx = np.array([0, 2, 0, 0])
    g = nx.grad(lambda v: nx.sum(v[idx] * 2.0))(x).numpy()
    want = np.zeros_like(a)
    np.add.at(want, idx, 2.0)
    np.testing.assert_allclose(g, want)
    g = nx.grad(lambda v: nx.sum(v[[0, 1, 1], [3, 0, 0]]))(x).numpy()
    want = np.zeros_like(a)
    np.add.at(want, ([0, 1, 1], [3, 0, 0]), 1.0)
    np.testing.assert_allclose(g, want)
    g = nx.grad(lambda v: nx.sum(v[v > 0] ** 2))(x).numpy()
    np.testing.assert_allclose(g, np.where(a > 0, 2 * a, 0), rtol=1e-6)
    g = nx.grad(lambda v: nx.sum(nx.take_along_axis(v, np.argsort(a, 1)[:, :2], 1)))(x).numpy()
    want = np.zeros_like(a)
    np.put_along_axis(want, np.argsort(a, 1)[:, :2], 1.0, 1)
    np.testing.assert_allclose(g, want)
    g = nx.grad(lambda v: nx.sum(v.at[0, [1, 1]].add(v[1, :2] * 3.0)))(x).numpy()
    want = np.ones_like(a)
    want[1, :2] += 3.0
    np.testing.assert_allclose(g, want)


# -- JAX's out-of-bounds modes: take(mode=, fill_value=), x.at[i].get/set/...(mode=) ---------
# (nx_rune raises on out-of-bounds indices by default; these keywords give JAX's behaviours.)
# Expected values: jax 0.10.2.

OOB = np.array([-7, -1, 0, 4, 5, 9], np.int32)


def test_take_modes_as_jax():
    x = nx.asarray(np.arange(5, dtype=np.float32) * 10)
    i = nx.asarray(OOB)
    for run in (lambda f: f(x, i), lambda f: nx.jit(f)(x, i)):
        np.testing.assert_array_equal(np.asarray(run(lambda a, b: nx.take(a, b, mode="clip"))),
                                      [0, 0, 0, 40, 40, 40])
        np.testing.assert_array_equal(np.asarray(run(lambda a, b: nx.take(a, b, mode="wrap"))),
                                      [30, 40, 0, 40, 0, 40])
        np.testing.assert_array_equal(np.asarray(run(lambda a, b: nx.take(a, b, mode="fill"))),
                                      [np.nan, 40, 0, 40, np.nan, np.nan])
        np.testing.assert_array_equal(
            np.asarray(run(lambda a, b: nx.take(a, b, mode="fill", fill_value=-1))),
            [-1, 40, 0, 40, -1, -1])
    got = nx.take(nx.arange(5), i, mode="fill")
    assert got.dtype == np.int32 and np.asarray(got).tolist() == [-2**31, 4, 0, 4, -2**31, -2**31]
    assert np.asarray(nx.take(nx.asarray([True, False]), nx.asarray([0, 2]), mode="fill")
                      ).tolist() == [True, True]
    assert np.asarray(nx.take(nx.arange(3, dtype=nx.uint8), nx.asarray([3]), mode="fill")
                      ).tolist() == [255]
    np.testing.assert_array_equal(
        np.asarray(nx.take(nx.arange(6).reshape(2, 3), nx.asarray([[0, 3], [-1, 2]]), axis=1,
                           mode="fill", fill_value=-9)),
        [[[0, -9], [2, 2]], [[3, -9], [5, 5]]])
    # the gradient flows to the entries read (fill: none for the filled ones)
    g = nx.grad(lambda a: nx.sum(nx.take(a, nx.asarray([-7, -1, 0, 4, 5, 9, 4]), mode="fill",
                                         fill_value=0.0)))(nx.arange(5.0))
    np.testing.assert_array_equal(np.asarray(g), [1, 0, 0, 0, 3])
    # the method, eager and traced
    np.testing.assert_array_equal(np.asarray(x.take(i, mode="clip")), [0, 0, 0, 40, 40, 40])
    np.testing.assert_array_equal(np.asarray(nx.jit(lambda a: a.take(i, mode="wrap"))(x)),
                                  [30, 40, 0, 40, 0, 40])
    with pytest.raises(IndexError, match="out of bounds"):
        nx.take(x, i)
    with pytest.raises(ValueError, match="take: mode must be one of"):
        nx.take(x, i, mode="nearest")
    with pytest.raises(ValueError, match="fill_value applies with mode='fill' only"):
        nx.take(x, i, mode="clip", fill_value=0)


def test_at_modes_as_jax():
    x = nx.asarray(np.arange(5, dtype=np.float32) * 10)
    i = nx.asarray(OOB)
    for run in (lambda f: f(x, i), lambda f: nx.jit(f)(x, i)):
        np.testing.assert_array_equal(
            np.asarray(run(lambda a, b: a.at[b].get(mode="fill", fill_value=-1))),
            [-1, 40, 0, 40, -1, -1])
        np.testing.assert_array_equal(np.asarray(run(lambda a, b: a.at[b].get(mode="clip"))),
                                      [0, 40, 0, 40, 40, 40])
        np.testing.assert_array_equal(
            np.asarray(run(lambda a, b: a.at[b].set(1.0, mode="drop"))), [1, 10, 20, 30, 1])
        np.testing.assert_array_equal(
            np.asarray(run(lambda a, b: a.at[b].add(1.0, mode="clip"))), [2, 10, 20, 30, 44])
    y = nx.arange(12.0).reshape(3, 4)
    a = nx.asarray
    np.testing.assert_array_equal(np.asarray(y.at[a([0, 5]), 1:].get(mode="fill")),
                                  [[1, 2, 3], [np.nan] * 3])
    np.testing.assert_array_equal(np.asarray(y.at[..., a([-1, 9])].set(-5.0, mode="drop")),
                                  [[0, 1, 2, -5], [4, 5, 6, -5], [8, 9, 10, -5]])
    np.testing.assert_array_equal(np.asarray(y.at[7].get(mode="clip")), [8, 9, 10, 11])
    np.testing.assert_array_equal(np.asarray(y.at[1, 7].add(100.0, mode="drop")), np.asarray(y))
    np.testing.assert_array_equal(
        np.asarray(y.at[a([2, -4]), a([0, 3])].get(mode="fill", fill_value=7.0)), [8, 7])
    np.testing.assert_array_equal(np.asarray(y.at[:, a([3, 4])].multiply(2.0, mode="drop")),
                                  [[0, 1, 2, 6], [4, 5, 6, 14], [8, 9, 10, 22]])
    np.testing.assert_array_equal(np.asarray(y.at[a([5, 0])].max(100.0, mode="clip")),
                                  [[100] * 4, [4, 5, 6, 7], [100] * 4])
    # promise_in_bounds: checked here (an IndexError), JAX's keywords accepted
    np.testing.assert_array_equal(
        np.asarray(x.at[a([1])].get(mode="promise_in_bounds", indices_are_sorted=True,
                                    unique_indices=True)), [10])
    # derivatives and vmap
    g = nx.grad(lambda v: nx.sum(v.at[i].set(0.0, mode="drop") ** 2))(nx.arange(5.0))
    np.testing.assert_array_equal(np.asarray(g), [0, 2, 4, 6, 0])
    np.testing.assert_array_equal(
        np.asarray(nx.vmap(lambda r: r.at[i].get(mode="fill", fill_value=-1.0))(
            nx.stack([nx.arange(5.0), 2 * nx.arange(5.0)]))),
        [[-1, 4, 0, 4, -1, -1], [-1, 8, 0, 8, -1, -1]])
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[i].get()
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[i].set(1.0, mode="promise_in_bounds")
    with pytest.raises(ValueError, match="mode: must be one of"):
        x.at[i].get(mode="wrap")
    with pytest.raises(ValueError, match="fill_value applies with mode='fill' only"):
        x.at[i].get(mode="clip", fill_value=0.0)
