"""nx_rune._kernels.gather: gather / scatter against NumPy's along-axis functions."""
import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nx_rune._kernels.gather import gather, scatter

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
INDEX_DTYPES = [np.int32, np.int64]
MODES = ["set", "add", "mul", "max", "min"]
NUMPY_AT = {"add": np.add.at, "mul": np.multiply.at, "max": np.maximum.at, "min": np.minimum.at}
LAYOUTS = ["c", "f", "reversed", "strided", "broadcast"]


# ---------------------------------------------------------------------------------------
# Case generation
# ---------------------------------------------------------------------------------------

def with_layout(arr, layout):
    """An array of arr's shape with the given memory layout.  "broadcast" changes the values
    (a zero-stride repeat of the first slice of the last axis), so references must be computed
    from the returned array, not from arr."""
    if arr.ndim == 0 or arr.size == 0 or layout == "c":
        return arr
    if layout == "f":
        return np.asfortranarray(arr)
    if layout == "reversed":
        out = np.flip(np.flip(arr, -1).copy(), -1)
        assert out.strides[-1] < 0
        return out
    if layout == "strided":
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), dtype=arr.dtype)
        big[..., ::2] = arr
        return big[..., ::2]
    return np.broadcast_to(arr[..., :1], arr.shape)


def random_values(rng, shape, dtype, mode=None):
    """Small exact values: sums and products stay exact in every dtype, float16 included."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    low, high = (-1, 2) if mode == "mul" else (-3, 4)
    if dtype.kind == "u":
        low = 0
    vals = rng.integers(low, high, shape)
    if dtype.kind == "c":
        return (vals + 1j * rng.integers(low, high, shape)).astype(dtype)
    out = vals.astype(dtype)
    if dtype.kind == "f" and mode in ("max", "min", None) and out.size:
        out[rng.random(shape) < 0.1] = np.nan
    return out


@st.composite
def along_shapes(draw):
    """(data shape, indices shape, axis) that np.take_along_axis accepts."""
    ndim = draw(st.integers(1, 4))
    axis = draw(st.integers(-ndim, ndim - 1))
    data_shape, idx_shape = [], []
    for d in range(ndim):
        if d == axis % ndim:
            n = draw(st.integers(0, 5))
            data_shape.append(n)
            idx_shape.append(draw(st.integers(0, 6)) if n else 0)
        else:
            size = draw(st.integers(0, 4))
            pair = draw(st.sampled_from([(size, size), (1, size), (size, 1)]))
            data_shape.append(pair[0])
            idx_shape.append(pair[1])
    return tuple(data_shape), tuple(idx_shape), axis


@st.composite
def along_cases(draw):
    data_shape, idx_shape, axis = draw(along_shapes())
    return dict(data_shape=data_shape, idx_shape=idx_shape, axis=axis,
                dtype=draw(st.sampled_from(DTYPES)),
                index_dtype=draw(st.sampled_from(INDEX_DTYPES)),
                data_layout=draw(st.sampled_from(LAYOUTS)),
                index_layout=draw(st.sampled_from(LAYOUTS)),
                seed=draw(st.integers(0, 2**32 - 1)))


def make_indices(rng, case):
    n = case["data_shape"][case["axis"]]
    idx = rng.integers(-n, n, case["idx_shape"]) if n else np.zeros(case["idx_shape"], int)
    return with_layout(idx.astype(case["index_dtype"]), case["index_layout"])


def broadcast_shape(data_shape, idx_shape, axis):
    axis %= len(data_shape)
    return tuple(i if d == axis else max(a, i) if 0 not in (a, i) else 0
                 for d, (a, i) in enumerate(zip(data_shape, idx_shape)))


def along_index(shape, indices, axis):
    """The fancy index np.take_along_axis builds: aranges on the other axes, indices on axis."""
    axis %= len(shape)
    ones = (1,) * indices.ndim
    return tuple(indices if d == axis else
                 np.arange(n).reshape(ones[:d] + (-1,) + ones[d + 1:])
                 for d, n in enumerate(shape))


def scatter_reference(template, indices, updates, axis, mode):
    out = template.copy()
    index = along_index(template.shape, indices, axis)
    if mode == "set":
        # Duplicates: the last update in C order wins, element by element.
        shape = np.broadcast_shapes(*(i.shape for i in index))
        updates = np.broadcast_to(updates, shape)
        full = [np.broadcast_to(i, shape) for i in index]
        for pos in itertools.product(*map(range, shape)):
            out[tuple(int(f[pos]) for f in full)] = updates[pos]
        return out
    with np.errstate(invalid="ignore"):
        NUMPY_AT[mode](out, index, updates)
    return out


def assert_same(actual, expected):
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


# ---------------------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(along_cases())
def test_gather_matches_take_along_axis(case):
    rng = np.random.default_rng(case["seed"])
    data = with_layout(random_values(rng, case["data_shape"], case["dtype"]),
                       case["data_layout"])
    indices = make_indices(rng, case)
    expected = np.take_along_axis(data, indices, case["axis"])
    actual = gather(data, indices, case["axis"])
    assert_same(actual, expected)
    assert actual.flags.c_contiguous


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_moves_bit_patterns(dtype):
    # NaN payloads and -0.0 survive: items move as bits, never through arithmetic.
    rng = np.random.default_rng(0)
    size = np.dtype(dtype).itemsize
    raw = rng.integers(0, 2 if dtype is np.bool_ else 256, 40 * size, dtype=np.uint8)
    data = raw.view(dtype).reshape(4, 10)
    indices = rng.integers(-10, 10, (4, 7))
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[size]
    actual = gather(data, indices, 1).view(bits)
    expected = np.take_along_axis(data, indices, 1).view(bits)
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("index_dtype", [np.int8, np.int16, np.uint8, np.uint16, np.uint32,
                                         np.uint64, np.dtype(">i8"), np.dtype(">i4")])
def test_gather_other_index_dtypes(index_dtype):
    data = np.arange(24.0).reshape(4, 6)
    indices = np.array([[5, 0, 3]] * 4).astype(index_dtype)
    assert_same(gather(data, indices, 1), np.take_along_axis(data, indices, 1))


def test_gather_negative_indices():
    data = np.arange(10, 20)
    assert_same(gather(data, np.array([-1, -10, 0, 9], np.int32), 0), np.array([19, 10, 10, 19]))


def test_gather_axis_none_flattens():
    data = np.arange(12).reshape(3, 4)[:, ::-1]
    indices = np.array([0, 11, -1, 5])
    assert_same(gather(data, indices, None), np.take_along_axis(data, indices, None))


def test_gather_2d_both_axes_and_broadcast():
    rng = np.random.default_rng(1)
    data = rng.random((5, 7))
    for axis, shape in [(0, (9, 7)), (1, (5, 3)), (0, (4, 1)), (1, (1, 8)), (-1, (5, 7))]:
        indices = rng.integers(0, data.shape[axis], shape)
        assert_same(gather(data, indices, axis), np.take_along_axis(data, indices, axis))


def test_gather_zero_stride_and_negative_stride_views():
    base = np.arange(30.0).reshape(5, 6)
    views = [base[::-1, ::-2], base.T, np.broadcast_to(base[:1], (5, 6)), base[1:4, 2:]]
    for data in views:
        indices = np.indices(data.shape)[1][:, ::-1] % data.shape[1]
        assert_same(gather(data, indices, 1), np.take_along_axis(data, indices, 1))


def test_gather_unaligned_fields_are_copied_correctly():
    rec = np.zeros(6, dtype=np.dtype([("a", "u1"), ("b", "<f8")], align=False))
    rec["b"] = np.arange(6) * 1.5
    data = rec["b"]
    assert data.strides[0] % data.itemsize
    indices = np.array([5, 0, 2])
    assert_same(gather(data, indices, 0), np.take_along_axis(data, indices, 0))


def test_gather_large_1d_and_2d():
    rng = np.random.default_rng(2)
    x = rng.random(10**5)
    i = rng.integers(-10**5, 10**5, 10**5)
    assert_same(gather(x, i, 0), np.take_along_axis(x, i, 0))
    x2 = rng.random((300, 400)).astype(np.float32)
    i2 = rng.integers(0, 400, (300, 500)).astype(np.int32)
    assert_same(gather(x2, i2, 1), np.take_along_axis(x2, i2, 1))


def test_gather_empty():
    data = np.zeros((3, 0))
    assert gather(data, np.zeros((3, 0), int), 1).shape == (3, 0)
    assert gather(np.zeros((1, 4)), np.zeros((0, 2), int), 1).shape == (0, 2)
    assert gather(np.zeros((3, 4)), np.zeros((3, 0), int), 1).shape == (3, 0)


# ---------------------------------------------------------------------------------------
# scatter
# ---------------------------------------------------------------------------------------

def scatter_case(case, mode):
    rng = np.random.default_rng(case["seed"])
    template = with_layout(random_values(rng, case["data_shape"], case["dtype"], mode),
                           case["data_layout"])
    indices = make_indices(rng, case)
    shape = broadcast_shape(case["data_shape"], case["idx_shape"], case["axis"])
    updates = with_layout(random_values(rng, shape, case["dtype"], mode), case["index_layout"])
    return template, indices, updates


@settings(max_examples=300, deadline=None)
@given(along_cases(), st.sampled_from(MODES))
def test_scatter_matches_numpy(case, mode):
    if mode in ("max", "min") and np.dtype(case["dtype"]).kind == "c":
        return
    template, indices, updates = scatter_case(case, mode)
    before = template.copy()
    expected = scatter_reference(template, indices, updates, case["axis"], mode)
    actual = scatter(template, indices, updates, case["axis"], mode)
    assert_same(actual, expected)
    assert_same(template, before)


@settings(max_examples=100, deadline=None)
@given(along_cases())
def test_scatter_set_matches_put_along_axis_without_duplicates(case):
    n = case["data_shape"][case["axis"]]
    axis = case["axis"] % len(case["data_shape"])
    rng = np.random.default_rng(case["seed"])
    template = random_values(rng, case["data_shape"], case["dtype"])
    # Distinct indices along the axis: a permutation prefix per position.
    k = min(n, case["idx_shape"][axis])
    idx_shape = case["data_shape"][:axis] + (k,) + case["data_shape"][axis + 1:]
    indices = np.argsort(rng.random(case["data_shape"]), axis=axis)
    indices = np.take(indices, np.arange(k), axis=axis).astype(case["index_dtype"])
    updates = random_values(rng, idx_shape, case["dtype"])
    expected = template.copy()
    np.put_along_axis(expected, indices, updates, axis)
    assert_same(scatter(template, indices, updates, axis, "set"), expected)


def test_scatter_set_last_duplicate_in_c_order_wins():
    out = scatter(np.zeros(4), np.array([1, 1, 3, 1]), np.array([5.0, 6.0, 7.0, 8.0]), 0)
    assert_same(out, np.array([0.0, 8.0, 0.0, 7.0]))
    out = scatter(np.zeros((2, 3)), np.array([[0, 0], [2, 2]]), np.array([[1, 2], [3, 4]]),
                  1, "set")
    assert_same(out, np.array([[2.0, 0, 0], [0, 0, 4.0]]))
    # Indices broadcast over a size-1 template axis: rows write the same row, the last wins.
    out = scatter(np.zeros((1, 3)), np.array([[1], [1]]), np.array([[5.0], [9.0]]), 1, "set")
    assert_same(out, np.array([[0.0, 9.0, 0.0]]))


def test_scatter_add_accumulates_duplicates():
    out = scatter(np.ones(3), np.array([0, 0, 2, 0], np.int32), np.array([1.0, 2.0, 3.0, 4.0]),
                  0, "add")
    assert_same(out, np.array([8.0, 1.0, 4.0]))


@pytest.mark.parametrize("mode", ["add", "mul", "max", "min"])
def test_scatter_bool_is_logical(mode):
    template = np.array([False, True, False, True])
    indices = np.array([0, 0, 1, 2, 3])
    updates = np.array([True, True, False, False, True])
    assert_same(scatter(template, indices, updates, 0, mode),
                scatter_reference(template, indices, updates, 0, mode))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
def test_scatter_integer_add_mul_wrap_like_numpy(dtype):
    info = np.iinfo(dtype)
    template = np.array([info.max, info.min, 3], dtype)
    indices = np.array([0, 0, 1, 2, 2, 2])
    updates = np.array([info.max, 1, info.max, 100, 100, 7], dtype)
    for mode in ("add", "mul"):
        assert_same(scatter(template, indices, updates, 0, mode),
                    scatter_reference(template, indices, updates, 0, mode))


def test_scatter_nan_propagates_in_max_min():
    template = np.array([1.0, np.nan, 3.0, 0.0])
    indices = np.array([0, 0, 1, 2, 3])
    updates = np.array([np.nan, 5.0, 2.0, np.nan, -0.0])
    for mode in ("max", "min"):
        assert_same(scatter(template, indices, updates, 0, mode),
                    scatter_reference(template, indices, updates, 0, mode))


def test_scatter_float16_add_with_duplicates_is_close():
    rng = np.random.default_rng(3)
    template = rng.random(10).astype(np.float16)
    indices = rng.integers(0, 10, 1000)
    updates = rng.random(1000).astype(np.float16)
    out = scatter(template, indices, updates, 0, "add")
    assert out.dtype == np.float16
    exact = template.astype(np.float64)
    np.add.at(exact, indices, updates.astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), exact, rtol=1e-3)


def test_scatter_negative_stride_and_broadcast_updates():
    template = np.arange(12.0).reshape(3, 4)[::-1, ::-1]
    indices = np.array([[3, -1], [0, 1], [-4, 2]])[:, ::-1]
    for mode in MODES:
        for updates in (np.float64(2.5), np.array([[1.0, 2.0]]), np.arange(6.0).reshape(3, 2)):
            before = template.copy()
            assert_same(scatter(template, indices, updates, 1, mode),
                        scatter_reference(template, indices, updates, 1, mode))
            assert_same(template, before)


def test_scatter_python_scalar_updates_take_template_dtype():
    out = scatter(np.zeros(3, np.uint8), np.array([1, 1]), 7, 0, "add")
    assert_same(out, np.array([0, 14, 0], np.uint8))
    out = scatter(np.zeros(3, np.float32), np.array([2]), 1.5, 0, "set")
    assert_same(out, np.array([0, 0, 1.5], np.float32))


def test_scatter_axis_none_keeps_template_shape():
    template = np.arange(6.0).reshape(2, 3)
    out = scatter(template, np.array([5, 0, -1]), np.array([1.0, 2.0, 3.0]), None, "add")
    expected = template.copy()
    np.add.at(expected.reshape(-1), np.array([5, 0, -1]), np.array([1.0, 2.0, 3.0]))
    assert_same(out, expected)


def test_scatter_returns_new_array_for_empty_indices():
    template = np.arange(3.0)
    out = scatter(template, np.zeros(0, int), np.zeros(0), 0, "add")
    assert_same(out, template)
    assert not np.shares_memory(out, template)


def test_scatter_large_add_matches_add_at():
    rng = np.random.default_rng(4)
    template = np.zeros((50, 100))
    indices = rng.integers(-100, 100, (50, 2000)).astype(np.int32)
    updates = rng.random((50, 2000))
    assert_same(scatter(template, indices, updates, 1, "add"),
                scatter_reference(template, indices, updates, 1, "add"))


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------

def test_wrong_rank_names_both_shapes():
    with pytest.raises(ValueError, match=r"data shape \(3, 4\) and indices shape \(4,\)"):
        gather(np.zeros((3, 4)), np.zeros(4, int), 0)
    with pytest.raises(ValueError, match=r"template shape \(3, 4\) and indices shape"):
        scatter(np.zeros((3, 4)), np.zeros(4, int), 1.0, 0, "set")


def test_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"indices shape \(2, 2\).*data shape \(3, 4\)"):
        gather(np.zeros((3, 4)), np.zeros((2, 2), int), 1)
    with pytest.raises(ValueError, match=r"updates shape \(3,\)"):
        scatter(np.zeros((3, 4)), np.zeros((3, 2), int), np.zeros(3), 1, "set")


@pytest.mark.parametrize("bad", [np.zeros(2), np.zeros(2, bool), np.array(["a", "b"])])
def test_non_integer_indices(bad):
    with pytest.raises(TypeError, match="indices"):
        gather(np.zeros(3), bad, 0)
    with pytest.raises(TypeError, match="indices"):
        scatter(np.zeros(3), bad, 0.0, 0, "set")


@pytest.mark.parametrize("index", [3, 7, -4, -100])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_out_of_range_index(index, index_dtype):
    indices = np.array([[0, index]], index_dtype)
    message = rf"index {index} is out of bounds for axis 1 with size 3"
    with pytest.raises(IndexError, match=message):
        gather(np.zeros((1, 3)), indices, 1)
    for mode in MODES:
        with pytest.raises(IndexError, match=message):
            scatter(np.zeros((1, 3)), indices, 1.0, 1, mode)


def test_out_of_range_uint64_index_does_not_wrap():
    indices = np.array([2**64 - 1], np.uint64)
    with pytest.raises(IndexError, match=r"index 18446744073709551615 .* axis 0 with size 3"):
        gather(np.zeros(3), indices, 0)


def test_index_into_empty_axis():
    with pytest.raises(IndexError, match="axis 0 with size 0"):
        gather(np.zeros(0), np.array([0]), 0)


@pytest.mark.parametrize("axis", [2, -3, 10])
def test_axis_out_of_range(axis):
    with pytest.raises(ValueError, match="axis"):
        gather(np.zeros((2, 2)), np.zeros((2, 2), int), axis)
    with pytest.raises(ValueError, match="axis"):
        scatter(np.zeros((2, 2)), np.zeros((2, 2), int), 0.0, axis, "add")


def test_axis_must_be_integer():
    with pytest.raises(TypeError, match="axis"):
        gather(np.zeros(2), np.zeros(2, int), 0.5)


@pytest.mark.parametrize("mode", ["sub", "", None, "ADD"])
def test_unknown_mode(mode):
    with pytest.raises(ValueError, match="mode"):
        scatter(np.zeros(2), np.zeros(1, int), 1.0, 0, mode)


@pytest.mark.parametrize("mode", ["max", "min"])
def test_complex_max_min_rejected(mode):
    with pytest.raises(TypeError, match=f"mode '{mode}'.*complex"):
        scatter(np.zeros(2, complex), np.zeros(1, int), 1.0, 0, mode)


def test_non_numeric_data():
    with pytest.raises(TypeError, match="data"):
        gather(np.array(["a", "b"]), np.zeros(1, int), 0)
    with pytest.raises(TypeError, match="template"):
        scatter(np.array([None, None]), np.zeros(1, int), 1.0, 0, "set")


def test_updates_that_do_not_cast():
    with pytest.raises(TypeError, match="updates"):
        scatter(np.zeros(2, np.int32), np.zeros(1, int), np.array([1.5]), 0, "set")
    with pytest.raises(TypeError, match="updates"):
        scatter(np.zeros(2, np.int32), np.zeros(1, int), 1.5, 0, "add")


def test_axis_none_needs_1d_indices():
    with pytest.raises(ValueError, match="indices must be 1-D"):
        gather(np.zeros((2, 2)), np.zeros((2, 2), int), None)


# ---------------------------------------------------------------------------------------
# The fast paths: groups of four with one check, next-row prefetch, literal strides
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 3, 4, 5, 8, 9, 1001])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_first_bad_index_is_reported_wherever_it_falls(m, index_dtype):
    # a bad index at every position of a row (inside a group of four or in the tail), with
    # other bad ones after it: the message names the first one in C order
    rng = np.random.default_rng(m)
    data = rng.random((3, 10))
    for pos in range(min(m, 9)):
        idx = rng.integers(-10, 10, (3, m)).astype(index_dtype)
        idx[1, pos] = 10 + pos
        idx[1, pos + 1:] = -11
        idx[2, :] = 99
        msg = rf"index {10 + pos} is out of bounds for axis 1 with size 10"
        with pytest.raises(IndexError, match=msg):
            gather(data, idx, 1)
        for mode in MODES:
            with pytest.raises(IndexError, match=msg):
                scatter(np.zeros((3, 10)), idx, 1.0, 1, mode)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_gather_rows_with_mixed_signs_and_lengths(dtype, index_dtype):
    rng = np.random.default_rng(1)
    for rows, n, m in [(40, 37, 1), (40, 37, 6), (300, 513, 1030), (2, 20000, 4099)]:
        data = random_values(rng, (rows, n), dtype)
        idx = rng.integers(-n, n, (rows, m)).astype(index_dtype)
        idx[::3] %= n                            # some rows all non-negative
        want = np.take_along_axis(data, idx, 1)
        np.testing.assert_array_equal(gather(data, idx, 1), want)
        # the other axis, where the inner loop runs along contiguous columns
        idx0 = rng.integers(-rows, rows, (min(m, 64), n)).astype(index_dtype)
        np.testing.assert_array_equal(gather(data, idx0, 0), np.take_along_axis(data, idx0, 0))


def test_gather_from_a_broadcast_table_and_repeated_rows():
    # every row of the indices reads the same source row (the prefetch skips it)
    table = np.arange(50.0)
    idx = np.random.default_rng(2).integers(-50, 50, (64, 30))
    src = np.broadcast_to(table, (64, 50))
    np.testing.assert_array_equal(gather(src, idx, 1), table[idx % 50])
    np.testing.assert_array_equal(gather(table[None, :], idx, 1), table[idx % 50])


@pytest.mark.parametrize("mode", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_scatter_accumulating_rows_match_numpy(mode, index_dtype):
    rng = np.random.default_rng(4)
    for dtype in (np.float64, np.float32, np.int32, np.uint8):
        t = random_values(rng, (50, 20), dtype, mode)
        u = random_values(rng, (50, 300), dtype, mode)
        idx = rng.integers(-20, 20, (50, 300)).astype(index_dtype)
        want = t.copy()
        with np.errstate(invalid="ignore"):          # NaN among the float values
            NUMPY_AT[mode](want, (np.arange(50)[:, None], idx), u)
        np.testing.assert_array_equal(scatter(t, idx, u, 1, mode), want)
        # 1-D: every update into one array (the contiguous, zero-stride fast path)
        t1 = random_values(rng, (20,), dtype, mode)
        u1, i1 = u.ravel()[:5001], idx.ravel()[:5001]
        want1 = t1.copy()
        with np.errstate(invalid="ignore"):
            NUMPY_AT[mode](want1, i1, u1)
        np.testing.assert_array_equal(scatter(t1, i1, u1, 0, mode), want1)


# ---------------------------------------------------------------------------------------
# Threads: a walk cut into spans on the kernels' pool
# ---------------------------------------------------------------------------------------

import concurrent.futures  # noqa: E402
import contextlib  # noqa: E402

from nx_rune._kernels import gather as gather_module  # noqa: E402
from nx_rune._kernels import pool  # noqa: E402


@contextlib.contextmanager
def threaded(threads, size=1, histogram_ratio=None):
    """Run the kernels on `threads` threads from walks of `size` elements on (every walk
    by default); histogram_ratio=0 lets a 1-D "add" take private targets at any size."""
    old = (pool.get_num_threads(), gather_module.THREADED_SIZE, gather_module.HISTOGRAM_RATIO)
    pool.set_num_threads(threads)
    gather_module.THREADED_SIZE = size
    if histogram_ratio is not None:
        gather_module.HISTOGRAM_RATIO = histogram_ratio
    try:
        yield
    finally:
        pool.set_num_threads(old[0])
        gather_module.THREADED_SIZE, gather_module.HISTOGRAM_RATIO = old[1:]


def one_thread(fn, *args):
    with threaded(1, size=1 << 62):
        return fn(*args)


@settings(max_examples=200, deadline=None)
@given(along_cases(), st.sampled_from([2, 3, 4]))
def test_threaded_gather_is_the_one_thread_gather(case, threads):
    # every dtype and layout (strided, reversed, broadcast), empty shapes included
    rng = np.random.default_rng(case["seed"])
    data = with_layout(random_values(rng, case["data_shape"], case["dtype"]),
                       case["data_layout"])
    indices = make_indices(rng, case)
    want = one_thread(gather, data, indices, case["axis"])
    with threaded(threads):
        got = gather(data, indices, case["axis"])
    assert_same(got, want)
    assert_same(got, np.take_along_axis(data, indices, case["axis"]))


@settings(max_examples=300, deadline=None)
@given(along_cases(), st.sampled_from(MODES), st.sampled_from([2, 3, 4]), st.booleans())
def test_threaded_scatter_is_the_one_thread_scatter(case, mode, threads, histogram):
    # Small integer values: sums are exact in every dtype, so even "add" with private
    # targets (histogram=True lets any 1-D add take them) equals one thread bit for bit.
    if mode in ("max", "min") and np.dtype(case["dtype"]).kind == "c":
        return
    template, indices, updates = scatter_case(case, mode)
    want = one_thread(scatter, template, indices, updates, case["axis"], mode)
    with threaded(threads, histogram_ratio=0 if histogram else None):
        got = scatter(template, indices, updates, case["axis"], mode)
    assert_same(got, want)
    assert_same(got, scatter_reference(template, indices, updates, case["axis"], mode))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_threaded_large_cases_every_dtype(dtype, index_dtype):
    # the sizes of the benchmarks, at the default threshold: rows cut (axis 1), columns cut
    # (axis 0 scatter), the 1-D gather cut, and the 1-D add with private targets
    rng = np.random.default_rng(7)
    size = gather_module.THREADED_SIZE
    rows = size // 400 + 1
    data = random_values(rng, (rows, 400), dtype)
    idx = rng.integers(-400, 400, (rows, 400)).astype(index_dtype)
    idx0 = rng.integers(-rows, rows, (rows, 400)).astype(index_dtype)
    flat = random_values(rng, (size,), dtype)
    iflat = rng.integers(-size, size, size).astype(index_dtype)
    for threads in (2, 4):
        with threaded(threads, size=gather_module.THREADED_SIZE):
            assert_same(gather(data, idx, 1), np.take_along_axis(data, idx, 1))
            assert_same(gather(data, idx0, 0), np.take_along_axis(data, idx0, 0))
            assert_same(gather(flat, iflat, 0), np.take_along_axis(flat, iflat, 0))
            for mode in ("add", "max") if np.dtype(dtype).kind != "c" else ("add",):
                u = random_values(rng, (rows, 400), dtype, mode)
                t = random_values(rng, (rows, 400), dtype, mode)
                assert_same(scatter(t, idx, u, 1, mode), scatter_reference(t, idx, u, 1, mode))
                t0 = random_values(rng, (rows, 400), dtype, mode)
                assert_same(scatter(t0, idx0, u, 0, mode),
                            scatter_reference(t0, idx0, u, 0, mode))
            bins = random_values(rng, (1000,), dtype, "add")
            ib = rng.integers(-1000, 1000, size).astype(index_dtype)
            ub = random_values(rng, (size,), dtype, "add")
            assert_same(scatter(bins, ib, ub, 0, "add"), scatter_reference(bins, ib, ub, 0, "add"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("threads", [2, 3, 4])
def test_threaded_float_add_with_private_targets_is_close_and_repeatable(dtype, threads):
    # Private targets change the order of the sums (one per span, added in span order), so
    # float results may differ from one thread in the last places.  The tolerance: a bin that
    # receives k updates is a sum of k + 1 terms in some order, within k * eps * sum(|terms|)
    # of the exact sum (the float64 np.add.at reference, far more exact than float32).
    rng = np.random.default_rng(threads)
    n_upd, bins = gather_module.THREADED_SIZE, 300
    template = (rng.standard_normal(bins) * 10).astype(dtype)
    upd = rng.standard_normal(n_upd).astype(dtype)
    if np.dtype(dtype).kind == "c":
        upd = (upd + 1j * rng.standard_normal(n_upd)).astype(dtype)
    idx = rng.integers(-bins, bins, n_upd)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    exact = template.astype(wide)
    np.add.at(exact, idx, upd.astype(wide))
    total_abs = np.abs(template).astype(np.float64)
    np.add.at(total_abs, idx, np.abs(upd).astype(np.float64))
    hits = np.bincount(idx % bins, minlength=bins)
    eps = np.finfo(dtype).eps
    with threaded(threads, size=gather_module.THREADED_SIZE):
        got = scatter(template, idx, upd, 0, "add")
        again = scatter(template, idx, upd, 0, "add")
    assert_same(got, again)                      # the same every run at a given thread count
    assert got.dtype == template.dtype
    assert np.all(np.abs(got.astype(wide) - exact) <= hits * eps * total_abs * 1.01 + 1e-300)
    # one thread: np.add.at's order exactly
    assert_same(one_thread(scatter, template, idx, upd, 0, "add"),
                scatter_reference(template, idx, upd, 0, "add"))


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint64, np.bool_])
def test_threaded_integer_add_with_private_targets_is_exact(dtype):
    # integers wrap the same way in any order
    rng = np.random.default_rng(3)
    template = rng.integers(0, 100, 50).astype(dtype)
    idx = rng.integers(-50, 50, 1 << 17)
    upd = rng.integers(0, 1 << 40, 1 << 17).astype(dtype)
    with threaded(4, size=gather_module.THREADED_SIZE, histogram_ratio=0):
        assert_same(scatter(template, idx, upd, 0, "add"),
                    scatter_reference(template, idx, upd, 0, "add"))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("mode", ["gather"] + MODES)
def test_threaded_bad_index_reports_the_first_in_c_order(mode, index_dtype):
    # Bad indices in several spans: whichever span meets one first, the message names the
    # first in C order.  Scatter cuts the columns here (every row writes every column),
    # so the first bad one (row 5, column 3000) lies in a later span than a bad one of an
    # earlier column (row 10, column 3).
    rng = np.random.default_rng(0)
    idx = rng.integers(-100, 100, (64, 4096)).astype(index_dtype)
    idx[5, 3000] = 100 + 7
    idx[10, 3] = -101 - 8
    idx[63, 0] = 10**6
    with threaded(4):
        for axis, data in ((0, np.zeros((100, 4096))), (1, np.zeros((64, 100)))):
            with pytest.raises(IndexError, match=rf"index 107 is out of bounds for axis {axis} "
                                                 rf"with size 100"):
                if mode == "gather":
                    gather(data, idx, axis)
                else:
                    scatter(data, idx, 1.0, axis, mode)
        # 1-D with private targets: the first bad one lies in the last span
        flat = rng.integers(-100, 100, 1 << 17).astype(index_dtype)
        flat[-5] = 100 + 3
        flat[-1] = -1000
        with pytest.raises(IndexError, match=r"index 103 is out of bounds for axis 0 "
                                             r"with size 100"):
            if mode == "gather":
                gather(np.zeros(100), flat, 0)
            else:
                scatter(np.zeros(100), flat, 1.0, 0, mode)


@pytest.mark.parametrize("bins", [1 << 13, 1 << 14, 1 << 15, 1 << 16])
def test_threaded_add_takes_the_private_targets_the_updates_pay_for(bins):
    # 2**17 updates with 4 threads: 4, 2, 1 or no private targets (HISTOGRAM_RATIO = 4);
    # small integer values, so every count gives NumPy's sums exactly
    rng = np.random.default_rng(bins)
    size = gather_module.THREADED_SIZE
    template = random_values(rng, (bins,), np.float64, "add")
    idx = rng.integers(-bins, bins, size)
    upd = random_values(rng, (size,), np.float64, "add")
    with threaded(4, size=size):
        assert_same(scatter(template, idx, upd, 0, "add"),
                    scatter_reference(template, idx, upd, 0, "add"))


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threaded_add_cuts_the_updates_into_more_chunks_than_threads(dtype, threads):
    # The 1-D add's chunks are fixed (SPANS_PER_THREAD a thread, as many as the target pays
    # for), claimed by whichever thread is free, each summed into its own target (the first
    # into the result) and the targets added in chunk order: the result is NumPy's np.add.at
    # over each chunk, added up in that order, bit for bit, whichever thread ran which chunk
    # (with one chunk a thread, a thread the scheduler held up kept half the work).
    rng = np.random.default_rng(threads)
    bins, n = 100, 1 << 17
    template = rng.standard_normal(bins).astype(dtype)
    idx = rng.integers(0, bins, n)
    upd = rng.standard_normal(n).astype(dtype)
    parts = min(4 * threads, 1 + n // (bins * gather_module.HISTOGRAM_RATIO))
    step = -(-n // parts)
    step = -(-step // 16) * 16                  # no cache line of output split between chunks
    want = template.copy()
    np.add.at(want, idx[:step], upd[:step])
    privates = []
    for lo in range(step, n, step):
        p = np.zeros(bins, dtype)
        np.add.at(p, idx[lo:lo + step], upd[lo:lo + step])
        privates.append(p)
    for p in privates:
        want = want + p
    assert len(privates) + 1 == 4 * threads
    with threaded(threads, size=gather_module.THREADED_SIZE):
        for _ in range(5):
            assert_same(scatter(template, idx, upd, 0, "add"), want)



def _chunked_add_at(template, idx, upd, parts):
    """NumPy's np.add.at over ``parts`` chunks of the updates (cut as the kernel cuts them),
    the first into a copy of ``template``, each other into zeros, added in chunk order."""
    n = len(idx)
    step = -(-n // parts)
    step = -(-step // 16) * 16
    want = template.copy()
    np.add.at(want, idx[:step], upd[:step])
    for lo in range(step, n, step):
        p = np.zeros_like(template)
        np.add.at(p, idx[lo:lo + step], upd[lo:lo + step])
        want = want + p
    return want


@pytest.mark.parametrize("bins, parts", [(12000, 2), (6000, 6)])
def test_threaded_add_rounds_its_chunks_down_to_a_whole_number_a_thread(bins, parts):
    # 2**17 updates: 1 + n // (bins * 4) is 3 for 12000 bins and 6 for 6000; on 2 threads 3
    # becomes 2 (every chunk past the first costs a private target), 6 stays 6
    rng = np.random.default_rng(bins)
    n = gather_module.THREADED_SIZE
    template = rng.standard_normal(bins).astype(np.float32)
    idx = rng.integers(0, bins, n)
    upd = rng.standard_normal(n).astype(np.float32)
    assert 1 + n // (bins * gather_module.HISTOGRAM_RATIO) in (3, 6)
    want = _chunked_add_at(template, idx, upd, parts)
    assert not np.array_equal(want, _chunked_add_at(template, idx, upd, parts + 2))
    with threaded(2, size=n):
        assert_same(scatter(template, idx, upd, 0, "add"), want)

def test_threaded_calls_from_many_python_threads():
    # One call owns the pool at a time; the others run their spans in their own thread (the
    # same spans, so the same private targets and the same float sums).
    rng = np.random.default_rng(5)
    size = gather_module.THREADED_SIZE
    bins, u, i = np.zeros(1000), rng.standard_normal(size), rng.integers(0, 1000, size)
    x, ix = rng.random((size // 512, 512)), rng.integers(0, 512, (size // 512, 512))
    with threaded(2, size=gather_module.THREADED_SIZE):
        want_add, want_g = scatter(bins, i, u, 0, "add"), gather(x, ix, 1)

        def work(_):
            return scatter(bins, i, u, 0, "add"), gather(x, ix, 1)
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            for got_add, got_g in ex.map(work, range(16)):
                assert_same(got_add, want_add)
                assert_same(got_g, want_g)


# ---------------------------------------------------------------------------------------
# The AVX2 rows of gather: the same values and errors as the scalar rows
# ---------------------------------------------------------------------------------------

@contextlib.contextmanager
def _switch(setter, on):
    """One of the kernels' private switches set to ``on`` for a block (restored after)."""
    old = setter(on)
    try:
        yield
    finally:
        setter(old)


def simd(on):
    return _switch(gather_module._set_simd, on)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint64, np.complex64,
                                   np.int16, np.complex128])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_simd_rows_are_the_scalar_rows(dtype, index_dtype):
    # row lengths around the 4- and 8-lane groups, both axes, broadcast and reversed sources
    rng = np.random.default_rng(11)
    for shape, m, axis in [((37, 41), 41, 1), ((37, 41), 29, 0), ((3, 1000), 1003, 1),
                           ((1000,), 999, 0), ((5, 7), 8, 1), ((9, 3), 7, 0), ((2, 1), 17, 1)]:
        data = random_values(rng, shape, dtype)
        n = shape[axis]
        ishape = shape[:axis] + (m,) + shape[axis + 1:]
        idx = rng.integers(-n, n, ishape).astype(index_dtype)
        for src in (data, data[::-1], np.flip(data, -1), np.broadcast_to(data[:1], data.shape)):
            want = np.take_along_axis(src, idx, axis)
            with simd(False):
                scalar = gather(src, idx, axis)
            with simd(True):
                vector = gather(src, idx, axis)
            assert_same(scalar, want)
            assert_same(vector, want)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_simd_rows_check_every_index(dtype, index_dtype):
    # bad indices at every lane of the vector groups and in the tail, extremes of the index
    # type included: the message names the first one in C order either way
    info = np.iinfo(index_dtype)
    data = np.arange(50, dtype=dtype).reshape(5, 10)
    for bad in (10, -11, int(info.max), int(info.min), 11, -1000):
        for pos in range(0, 21):
            idx = np.zeros((5, 21), index_dtype)
            idx[2, pos] = bad
            idx[3, :] = 10                              # later bad ones
            for on in (False, True):
                with simd(on), pytest.raises(
                        IndexError, match=rf"index {bad} is out of bounds for axis 1 "
                                          rf"with size 10"):
                    gather(data, idx, 1)
        idx0 = np.zeros((3, 10), index_dtype)
        idx0[1, 7] = bad if bad not in (10, 11) else 5 + bad
        with simd(True), pytest.raises(IndexError, match=rf"index {idx0[1, 7]} is out of "
                                                           rf"bounds for axis 0 with size 5"):
            gather(data, idx0, 0)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8, np.complex128])
@pytest.mark.parametrize("mode", ["add", "mul"])
def test_large_1d_target_streams_are_the_plain_row(mode, dtype, index_dtype):
    # a 1-D target above FAR_BYTES (the non-temporal fetch path) against the plain row and
    # NumPy: negative indices, odd lengths, a bad index near the end
    rng = np.random.default_rng(9)
    n = 70001
    template = random_values(rng, (n,), dtype, mode)
    for m in (1, 7, 8, 9, 4099, 50001):
        idx = rng.integers(-n, n, m).astype(index_dtype)
        upd = random_values(rng, (m,), dtype, mode)
        old = gather_module._set_far(False)
        try:
            plain = scatter(template, idx, upd, 0, mode)
        finally:
            gather_module._set_far(old)
        with threaded(1, size=1 << 62):
            far = scatter(template, idx, upd, 0, mode)
        assert_same(far, plain)
        assert_same(far, scatter_reference(template, idx, upd, 0, mode))
    idx[-3] = n
    idx[-1] = -n - 1
    with pytest.raises(IndexError, match=rf"index {n} is out of bounds for axis 0 with size {n}"):
        scatter(template, idx, upd, 0, mode)


def test_pool_thread_count_is_shared_with_threefry_and_checked():
    from nx_rune._kernels import threefry
    old = pool.get_num_threads()
    try:
        threefry.set_num_threads(3)
        assert pool.get_num_threads() == 3
        pool.set_num_threads(2)
        assert threefry.get_num_threads() == 2
        for bad, exc in ((0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError),
                         ("2", TypeError)):
            with pytest.raises(exc, match="n must"):
                pool.set_num_threads(bad)
        assert pool.get_num_threads() == 2
    finally:
        pool.set_num_threads(old)


# ---------------------------------------------------------------------------------------
# Scatter: the add / mul rows four at a time, branch-free max / min, gather and set rows
# that wrap only from the first negative index on
# ---------------------------------------------------------------------------------------

def unrolled(on):
    return _switch(gather_module._set_unroll, on)


def bits(arr):
    """arr's items as unsigned integers of their size (NaN payloads and -0.0 compared)."""
    arr = np.ascontiguousarray(arr)
    if arr.dtype.kind == "c":
        arr = arr.view(arr.real.dtype)
    return arr.view(f"u{arr.dtype.itemsize}")


def mixed_sign_indices(rng, n, shape, index_dtype):
    """Indices in [-n, n): rows that start non-negative and turn negative at every position
    of a group of four (and later), plus rows of random signs."""
    idx = rng.integers(0, n, shape)
    flat = idx.reshape(-1, shape[-1])
    for r in range(flat.shape[0]):
        start = r % (shape[-1] + 1)
        if r % 3 == 2:
            flat[r] -= n * rng.integers(0, 2, shape[-1])
        else:
            flat[r, start::5] -= n
    return idx.astype(index_dtype)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64, np.uint8,
                                   np.float16])
@pytest.mark.parametrize("mode", ["add", "mul"])
def test_unrolled_accumulating_rows_are_the_one_at_a_time_rows(mode, dtype, index_dtype):
    # Same order, same bits: float sums of random (inexact) values included.  A 1-D target
    # below and above FAR_BYTES, and rows of a 2-D target along axis 1, of lengths around
    # the groups of four and eight; then exact small values against NumPy.
    rng = np.random.default_rng(21)
    cases = [((1000,), (20011,), 0), ((70001,), (30013,), 0), ((40, 100), (40, 1003), 1),
             ((7, 9), (7, 13), 1), ((5,), (7,), 0), ((3, 5), (3, 1), 1)]
    for tshape, ishape, axis in cases:
        n = tshape[axis]
        idx = mixed_sign_indices(rng, n, ishape, index_dtype)
        template = (rng.random(tshape) * 4).astype(dtype)
        upd = (rng.random(ishape) + 0.5).astype(dtype)
        if mode == "mul":
            upd = (0.5 + rng.random(ishape) / 1e3).astype(dtype)
        with unrolled(False), threaded(1, size=1 << 62):
            plain = scatter(template, idx, upd, axis, mode)
        with unrolled(True), threaded(1, size=1 << 62):
            fast = scatter(template, idx, upd, axis, mode)
        np.testing.assert_array_equal(bits(fast), bits(plain))
        small_t = random_values(rng, tshape, dtype, mode)
        small_u = random_values(rng, ishape, dtype, mode)
        assert_same(scatter(small_t, idx, small_u, axis, mode),
                    scatter_reference(small_t, idx, small_u, axis, mode))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("n", [1000, 70001])
def test_unrolled_rows_report_the_first_bad_index(n, index_dtype):
    # a bad index at each position of the first groups of four and eight (after negative
    # ones, before later bad ones), the index type's extremes included: the message names it
    info = np.iinfo(index_dtype)
    rng = np.random.default_rng(22)
    for bad in (n, -n - 1, int(info.max), int(info.min)):
        for pos in range(13):
            idx = rng.integers(-n, n, 40).astype(index_dtype)
            idx[pos] = bad
            idx[pos + 1:] = n + 7
            msg = rf"index {bad} is out of bounds for axis 0 with size {n}"
            for on in (False, True):
                with unrolled(on), threaded(1, size=1 << 62):
                    for mode in ("add", "mul"):
                        with pytest.raises(IndexError, match=msg):
                            scatter(np.zeros(n), idx, 1.0, 0, mode)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_int32_indices_at_their_extremes_in_unrolled_groups(index_dtype):
    # int32 indices are loaded two to an 8-byte word and split: the most negative valid
    # index (-n, which sends the rest of the row to the wrapping loop) and n - 1 at every
    # lane of the first two groups, distinct updates (a swapped pair lands in other bins)
    n = 5
    for lane in range(8):
        idx = np.zeros(8, index_dtype)
        idx[lane] = -n
        idx[(lane + 1) % 8] = n - 1
        upd = np.arange(1.0, 9.0)
        want = np.zeros(n)
        np.add.at(want, idx, upd)
        with unrolled(True):
            assert_same(scatter(np.zeros(n), idx, upd, 0, "add"), want)


@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_max_min_selects_keep_numpys_nan_and_tie_rules_bit_for_bit(mode, dtype):
    # NaN on either side wins (the template's NaN payload kept, an update's NaN taken), a tie
    # takes the update (-0.0 against 0.0 tells which), infinities compare as values.
    # float16 runs in float32, where a tie takes the update, while NumPy's float16 maximum /
    # minimum keep the first operand on a tie: -0.0 is left out of its values (the sign of a
    # zero after such a tie is documented in scatter's docstring).
    rng = np.random.default_rng(23)
    specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.5],
                        dtype=dtype)
    if dtype == np.float16:
        specials = specials[~((specials == 0) & np.signbit(specials))]
    template = rng.choice(specials, 64)
    for rows in range(3):
        idx = rng.integers(-64, 64, 2000)
        upd = rng.choice(specials, 2000)
        want = template.copy()
        with np.errstate(invalid="ignore"):
            NUMPY_AT[mode](want, idx, upd)
        got = scatter(template, idx, upd, 0, mode)
        np.testing.assert_array_equal(bits(got), bits(want))
    # on 2-D rows (axis 1) and columns (axis 0)
    t2 = rng.choice(specials, (6, 9))
    for axis in (0, 1):
        idx = rng.integers(0, t2.shape[axis], (50, 9) if axis == 0 else (6, 50))
        upd = rng.choice(specials, idx.shape)
        want = scatter_reference(t2, idx, upd, axis, mode)
        np.testing.assert_array_equal(bits(scatter(t2, idx, upd, axis, mode)), bits(want))


@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64, np.bool_])
def test_max_min_selects_on_integers_at_their_extremes(mode, dtype):
    rng = np.random.default_rng(24)
    if np.dtype(dtype).kind == "b":
        values = np.array([False, True])
    else:
        info = np.iinfo(dtype)
        values = np.array([info.min, info.min + 1, 0, 1, info.max - 1, info.max], dtype=dtype)
    template = rng.choice(values, 30)
    idx = rng.integers(-30, 30, 3000)
    upd = rng.choice(values, 3000)
    want = template.copy()
    NUMPY_AT[mode](want, idx, upd)
    assert_same(scatter(template, idx, upd, 0, mode), want)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.complex128])
def test_gather_and_set_rows_turning_negative_at_every_position(dtype, index_dtype):
    # rows whose first negative index falls at each position of a group (the switch from
    # unwrapped to wrapped indices), the scalar and AVX2 gather rows and both axes
    rng = np.random.default_rng(25)
    for n, m in [(256, 37), (1000, 1003), (9, 8)]:
        data = random_values(rng, (24, n), dtype)
        idx = mixed_sign_indices(rng, n, (24, m), index_dtype)
        want = np.take_along_axis(data, idx, 1)
        for on in (False, True):
            with simd(on):
                assert_same(gather(data, idx, 1), want)
        upd = random_values(rng, (24, m), dtype)
        assert_same(scatter(data, idx, upd, 1, "set"), scatter_reference(data, idx, upd, 1, "set"))
        idx0 = mixed_sign_indices(rng, 24, (30, n), index_dtype)
        assert_same(gather(data, idx0, 0), np.take_along_axis(data, idx0, 0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.bool_, np.complex64])
def test_scatter_updates_broadcast_by_the_walk(mode, dtype):
    # updates of lower rank or with size-1 dimensions are walked with stride 0 (not copied
    # by np.broadcast_to): the results of the fully broadcast updates
    if mode in ("max", "min") and np.dtype(dtype).kind == "c":
        return
    rng = np.random.default_rng(26)
    template = random_values(rng, (3, 5), dtype, mode)
    idx = rng.integers(-5, 5, (3, 7))
    for ushape in [(), (7,), (1, 7), (3, 1), (1, 1)]:
        upd = random_values(rng, ushape, dtype, mode)
        for u in (upd, upd[..., ::-1]) if upd.ndim else (upd,):
            full = np.broadcast_to(u, (3, 7)).copy()
            assert_same(scatter(template, idx, u, 1, mode),
                        scatter_reference(template, idx, full, 1, mode))
    assert_same(scatter(template, idx, dtype(1) if dtype is not np.bool_ else True, 1, mode),
                scatter(template, idx, np.ones((3, 7), dtype), 1, mode))


@pytest.mark.parametrize("ushape", [(3,), (2, 7), (4, 1), (1, 3, 7), (0,), (3, 7, 1)])
def test_scatter_updates_that_do_not_broadcast_name_both_shapes(ushape):
    idx = np.zeros((3, 7), np.int64)
    with pytest.raises(ValueError, match=rf"scatter: updates shape {re.escape(str(ushape))} "
                                         rf"does not broadcast to the indexed shape "
                                         rf"\(3, 7\)"):
        scatter(np.zeros((3, 5)), idx, np.ones(ushape), 1, "add")


def test_threaded_1d_add_reuses_private_targets_safely_across_python_threads():
    """The 1-D add's private targets are kept from call to call (a fresh mapping each call made
    two threads fault its pages in together): calls from several Python threads at once, of
    different target sizes, each get a buffer of their own and NumPy's sums."""
    import threading

    from nx_rune._kernels import gather as G
    from nx_rune._kernels import pool
    saved = pool.get_num_threads()
    pool.set_num_threads(2)
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        bins = (10**4, 3 * 10**4, 10**5)[seed % 3]
        for _ in range(6):
            idx = rng.integers(0, bins, 6 * 10**5)
            upd = rng.integers(-50, 50, 6 * 10**5).astype(np.float64)   # exact sums
            want = np.zeros(bins)
            np.add.at(want, idx, upd)
            got = G.scatter(np.zeros(bins), idx, upd, 0, "add")
            if not np.array_equal(got, want):
                errors.append(seed)
    try:
        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        pool.set_num_threads(saved)
    assert not errors and len(G._PRIVATE_CACHE) <= 4
