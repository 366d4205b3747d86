"""Sorting, searching, set functions and order statistics (frontend/sorting.py) against NumPy.

sort/argsort: NumPy's order (NaNs last, -0.0 == 0.0, complex lexicographic) and stability,
ascending and descending, checked bit for bit (signed zeros, NaN payloads) against references
that do not use nx_rune: Python's ``sorted`` (stable, also with ``reverse=True``) for small
inputs, NumPy's stable sort for large ones.  Derivatives of sort, median and the quantiles
against float64 central differences, and against pinned hand-derived values on ties.
"""
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from autodiff_specs import f64_tensor, fd_jacobians
from nx_rune.tensor import ArrayBase

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
REAL = [np.bool_] + INTS + FLOATS
ALL = REAL + COMPLEX
SPECIAL = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 2.5, -2.5]


def bits(a):
    """An ndarray's raw bytes per element (compares signed zeros and NaN payloads too)."""
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"V{a.dtype.itemsize}")) if a.ndim else a.reshape(1).view(
        np.dtype(f"V{a.dtype.itemsize}"))


def assert_same_bits(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    assert (bits(got) == bits(expected)).all(), (got, expected)


def sample(rng, dt, shape, ties=True):
    """Values of dtype dt with many ties and, for floats, every special value (NaNs with
    several payloads and both signs)."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if ties:
            lo = max(info.min, -3)
            return rng.integers(lo, lo + 6, shape).astype(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    if dt.kind == "c":
        part = np.dtype(np.float32 if dt == np.complex64 else np.float64)
        re, im = sample(rng, part, shape), sample(rng, part, shape)
        out = np.empty(shape, dt)
        out.real, out.imag = re, im
        return out
    a = rng.choice(np.array(SPECIAL, dtype=dt), shape)
    if dt != np.float16:
        nan = np.isnan(a)
        u = a.view(np.dtype(f"u{dt.itemsize}"))
        u[nan] |= rng.integers(0, 4, shape).astype(u.dtype)[nan]   # NaN payloads
    return a


def _py_key(v, dt):
    # NumPy's real order as a Python sort key: NaNs last
    v = v.item() if hasattr(v, "item") else v
    if dt.kind == "f":
        return (math.isnan(v), 0.0 if math.isnan(v) else v)
    return (False, v)


def ref_argsort(a, axis, descending):
    """The stable sorting permutation of a along axis, without nx_rune: Python's sorted
    (stable with reverse=True too) on each 1-D slice for real dtypes; NumPy's stable argsort
    (of the reversed slice, for descending) for complex ones."""
    a = np.asarray(a)
    moved = np.moveaxis(a, axis, -1)
    out = np.empty(moved.shape, np.int64)
    n = moved.shape[-1]
    for idx in np.ndindex(moved.shape[:-1]):
        row = moved[idx]
        if a.dtype.kind == "c":
            if descending:
                out[idx] = (n - 1) - np.argsort(row[::-1], kind="stable")[::-1]
            else:
                out[idx] = np.argsort(row, kind="stable")
        else:
            out[idx] = sorted(range(n), key=lambda i: _py_key(row[i], a.dtype),
                              reverse=descending)
    return np.moveaxis(out, -1, axis)


def quiet(fn, *args, **kwargs):
    """NumPy's result without its warnings (empty or all-NaN slices)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def ref_sort(a, axis, descending):
    return np.take_along_axis(a, ref_argsort(a, axis, descending), axis)


# -- sort and argsort: values, order, stability -----------------------------------------------

@pytest.mark.parametrize("dt", ALL, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_match_a_stable_reference(dt, descending):
    rng = np.random.default_rng(0)
    for shape in [(9,), (4, 7), (2, 3, 5), (1, 12)]:
        a = sample(rng, dt, shape)
        for axis in range(-len(shape), len(shape)):
            expected_idx = ref_argsort(a, axis, descending)
            idx = nx.argsort(nx.asarray(a), axis=axis, descending=descending)
            assert idx.dtype == np.int32 and idx.shape == a.shape
            np.testing.assert_array_equal(np.asarray(idx), expected_idx)
            s = nx.sort(nx.asarray(a), axis=axis, descending=descending)
            assert_same_bits(s, ref_sort(a, axis, descending))


@pytest.mark.parametrize("dt", [np.int16, np.int64, np.uint64, np.float16, np.float32,
                                np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,axis", [((6000,), 0), ((40, 700), 1), ((700, 40), 0),
                                        ((5, 300, 7), 1)])
def test_sort_large_inputs_bit_identical_to_numpys_stable_sort(dt, shape, axis):
    """Large enough for NumPy's SIMD sorts (which alone reorder -0.0/0.0 and rewrite NaNs):
    ascending against np.sort(kind='stable'), descending against the stable sort of the
    reversed axis, reversed."""
    rng = np.random.default_rng(1)
    for ties in (True, False):
        a = sample(rng, dt, shape, ties=ties)
        exp_asc = np.argsort(a, axis=axis, kind="stable")
        n = shape[axis]
        exp_desc = (n - 1) - np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"),
                                     axis)
        t = nx.asarray(a)
        np.testing.assert_array_equal(np.asarray(nx.argsort(t, axis=axis)), exp_asc)
        np.testing.assert_array_equal(np.asarray(nx.argsort(t, axis=axis, descending=True)),
                                      exp_desc)
        assert_same_bits(nx.sort(t, axis=axis), np.take_along_axis(a, exp_asc, axis))
        assert_same_bits(nx.sort(t, axis=axis, descending=True),
                         np.take_along_axis(a, exp_desc, axis))


def test_sort_rows_with_zeros_of_both_signs_in_some_rows_only():
    # rows: negative start with zeros inside, zero start, positive only, NaNs with zeros
    a = np.array([[-1.0, 0.0, 2.0, -0.0, 0.0, -3.0, -0.0, 1.0],
                  [0.0, -0.0, 0.0, 1.0, 2.0, -0.0, 3.0, 4.0],
                  [5.0, 1.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0],
                  [np.nan, -0.0, -np.nan, 0.0, -1.0, np.nan, 0.0, -0.0]], dtype=np.float32)
    a = np.tile(a, (1, 40))
    for desc in (False, True):
        for arr, axis in ((a, 1), (np.ascontiguousarray(a.T), 0)):
            assert_same_bits(nx.sort(nx.asarray(arr), axis=axis, descending=desc),
                             ref_sort(arr, axis, desc))


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), dt=st.sampled_from(REAL),
       shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data())
def test_sort_property_against_reference(seed, dt, shape, data):
    rng = np.random.default_rng(seed)
    a = sample(rng, dt, tuple(shape))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    desc = data.draw(st.booleans())
    assert_same_bits(nx.sort(nx.asarray(a), axis=axis, descending=desc), ref_sort(a, axis, desc))
    np.testing.assert_array_equal(np.asarray(nx.argsort(nx.asarray(a), axis=axis,
                                                         descending=desc)),
                                  ref_argsort(a, axis, desc))


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint64, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_unstable_argsort_is_a_sorting_permutation(dt):
    rng = np.random.default_rng(2)
    a = sample(rng, dt, (3, 500))
    for desc in (False, True):
        p = np.asarray(nx.argsort(nx.asarray(a), axis=1, descending=desc, stable=False))
        assert (np.sort(p, axis=1) == np.arange(500)).all()
        # the same values in the same order as the stable sort (NaNs equal, -0.0 == 0.0)
        np.testing.assert_array_equal(np.take_along_axis(a, p, 1), ref_sort(a, 1, desc))


def test_sort_axis_none_kind_and_views():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 5))
    np.testing.assert_array_equal(np.asarray(nx.sort(nx.asarray(a), axis=None)),
                                  np.sort(a, axis=None))
    np.testing.assert_array_equal(np.asarray(nx.argsort(nx.asarray(a), axis=None)),
                                  np.argsort(a, axis=None, kind="stable"))
    for kind in ("quicksort", "mergesort", "heapsort", "stable"):
        np.testing.assert_array_equal(np.asarray(nx.sort(nx.asarray(a), kind=kind)),
                                      np.sort(a, kind=kind))
    # strided, flipped and padded views sort as their values
    t = nx.asarray(a)
    np.testing.assert_array_equal(np.asarray(nx.sort(t.T[::-1], axis=0)),
                                  np.sort(a.T[::-1], axis=0))
    np.testing.assert_array_equal(np.asarray(nx.sort(nx.pad(t, 1), axis=1)),
                                  np.sort(np.pad(a, 1), axis=1))
    # lists and Python scalars as input; axis positional as NumPy
    np.testing.assert_array_equal(np.asarray(nx.sort([3, 1, 2])), [1, 2, 3])
    assert nx.sort([3.0, 1.0]).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(nx.sort(nx.asarray(a), 0)), np.sort(a, 0))


def test_sort_returns_a_new_tensor():
    x = nx.asarray(np.array([1.0, 2.0, 3.0]))
    s = nx.sort(x)
    nx.assign(s, nx.asarray(np.array([7.0, 8.0, 9.0])))
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0, 3.0])


def test_empty_and_length_one_axes():
    for shape, axis in (((0,), 0), ((3, 0), 1), ((3, 0), 0), ((1,), 0), ((2, 1), 1)):
        a = np.ones(shape, np.float32)
        assert nx.sort(nx.asarray(a), axis=axis).shape == shape
        idx = nx.argsort(nx.asarray(a), axis=axis)
        assert idx.shape == shape and idx.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(idx), np.argsort(a, axis=axis))


def test_sort_errors():
    x = nx.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match="axis"):
        nx.sort(x, axis=2)
    with pytest.raises(IndexError, match="axis"):
        nx.argsort(x, axis=-3)
    with pytest.raises(IndexError, match="axis"):
        nx.sort(nx.asarray(np.float32(1.0)))        # 0-d: no axis -1 (as NumPy)
    with pytest.raises(TypeError, match="axis"):
        nx.sort(x, axis=1.0)
    with pytest.raises(TypeError, match="descending"):
        nx.sort(x, descending="yes")
    with pytest.raises(TypeError, match="stable"):
        nx.argsort(x, stable=None)
    with pytest.raises(ValueError, match="kind"):
        nx.sort(x, kind="bubble")
    with pytest.raises(TypeError, match="obj"):
        nx.sort("abc")


# -- derivatives of sort -------------------------------------------------------------------------

def _distinct(rng, shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 + rng.uniform(-0.05, 0.05, n)).reshape(shape) - 0.2 * n


def _check_vjp_jvp(fn, args, eps=1e-6, tol=1e-6, seed=0):
    rng = np.random.default_rng(seed)
    out, jacs = fd_jacobians(fn, args, eps)
    targs = [f64_tensor(a) for a in args]
    y, vjp_fn = nx.vjp(fn, *targs)
    np.testing.assert_allclose(np.asarray(y), out, rtol=1e-12, atol=1e-12)
    u = rng.standard_normal(out.shape)
    for ct, J in zip(vjp_fn(f64_tensor(u)), jacs):
        np.testing.assert_allclose(np.asarray(ct).reshape(-1), J.T @ u.reshape(-1),
                                   rtol=tol, atol=tol)
    vs = [rng.standard_normal(np.shape(a)) for a in args]
    _, t = nx.jvp(fn, targs, [f64_tensor(v) for v in vs])
    np.testing.assert_allclose(np.asarray(t).reshape(-1),
                               sum(J @ v.reshape(-1) for J, v in zip(jacs, vs)),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("shape,axis,desc", [((7,), 0, False), ((7,), -1, True),
                                             ((3, 4), 0, True), ((2, 3, 4), 1, False),
                                             ((2, 3, 4), None, True)])
def test_sort_derivatives_match_finite_differences(shape, axis, desc):
    rng = np.random.default_rng(4)
    w = rng.standard_normal(shape if axis is not None else (int(np.prod(shape)),))
    fn = lambda x: nx.sort(x, axis=axis, descending=desc) * w  # noqa: E731
    _check_vjp_jvp(fn, [_distinct(rng, shape)])


def test_sort_second_order():
    rng = np.random.default_rng(5)
    x = f64_tensor(_distinct(rng, (3, 5)))
    nx.check_grads(lambda x: nx.sort(x * x, axis=1, descending=True), [x], order=2,
                   eps=1e-5, atol=1e-5, rtol=1e-5)


def test_sort_gradient_on_ties_follows_the_stable_permutation():
    # pinned by hand: ascending [2, 1, 2, 0] sorts by positions [3, 1, 0, 2] (the first 2
    # before the second), descending by [0, 2, 1, 3]
    w = f64_tensor([1.0, 10.0, 100.0, 1000.0])
    x = f64_tensor([2.0, 1.0, 2.0, 0.0])
    g = nx.grad(lambda x: nx.sum(nx.sort(x) * w))(x)
    np.testing.assert_array_equal(np.asarray(g), [100.0, 10.0, 1000.0, 1.0])
    g = nx.grad(lambda x: nx.sum(nx.sort(x, descending=True) * w))(x)
    np.testing.assert_array_equal(np.asarray(g), [1.0, 100.0, 10.0, 1000.0])
    _, t = nx.jvp(lambda x: nx.sort(x), (x,), (f64_tensor([1.0, 2.0, 3.0, 4.0]),))
    np.testing.assert_array_equal(np.asarray(t), [4.0, 2.0, 1.0, 3.0])


def test_sort_of_integers_has_no_gradient_path_and_argsort_is_constant():
    x = f64_tensor([0.3, -1.0, 2.0])
    g = nx.grad(lambda x: nx.sum(x * nx.astype(nx.argsort(x), nx.float64)))(x)
    np.testing.assert_array_equal(np.asarray(g), np.argsort([0.3, -1.0, 2.0]))


# -- searchsorted ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", REAL + COMPLEX, ids=lambda d: np.dtype(d).name)
def test_searchsorted_matches_numpy(dt):
    rng = np.random.default_rng(6)
    x1 = np.sort(sample(rng, dt, (40,)))
    x2 = sample(rng, dt, (3, 5))
    for side in ("left", "right"):
        out = nx.searchsorted(nx.asarray(x1), nx.asarray(x2), side=side)
        assert out.dtype == np.int32 and out.shape == x2.shape
        np.testing.assert_array_equal(np.asarray(out), np.searchsorted(x1, x2, side=side))


def test_searchsorted_sorter_scalars_and_promotion():
    rng = np.random.default_rng(7)
    x1 = rng.standard_normal(50)
    order = np.argsort(x1)
    x2 = rng.standard_normal(9)
    out = nx.searchsorted(nx.asarray(x1), nx.asarray(x2), sorter=nx.asarray(order))
    np.testing.assert_array_equal(np.asarray(out), np.searchsorted(x1, x2, sorter=order))
    out = nx.searchsorted(nx.asarray(np.sort(x1)), 0.25, side="right")
    assert out.shape == () and out.dtype == np.int32
    assert int(out) == np.searchsorted(np.sort(x1), 0.25, side="right")
    # integers meeting a float are compared exactly (float32 would round 2**24 + 1 down)
    big = nx.asarray(np.array([2**24, 2**24 + 1, 2**24 + 2], np.int32))
    assert int(nx.searchsorted(big, 16777216.5)) == 1
    assert int(nx.searchsorted(big, nx.asarray(np.float32(3.0)))) == 0
    # NaN queries go after every number, as sort puts them
    s = nx.asarray(np.array([0.0, 1.0, np.nan]))
    np.testing.assert_array_equal(np.asarray(nx.searchsorted(s, nx.asarray([np.nan, 2.0, -0.0]))),
                                  np.searchsorted([0.0, 1.0, np.nan], [np.nan, 2.0, -0.0]))
    # positions into an empty x1 are 0
    assert np.asarray(nx.searchsorted(nx.asarray(np.zeros(0)), nx.asarray([1.0]))).tolist() == [0]


def test_searchsorted_under_grad_is_constant():
    edges = f64_tensor([0.0, 1.0, 2.0, 3.0])

    def f(x):
        i = nx.searchsorted(edges, x)
        return nx.sum(x * nx.astype(i, nx.float64))
    g = nx.grad(f)(f64_tensor([0.5, 2.5]))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 3.0])


def test_searchsorted_errors():
    x1 = nx.asarray(np.arange(4.0))
    with pytest.raises(ValueError, match="x1"):
        nx.searchsorted(nx.asarray(np.zeros((2, 2))), 1.0)
    with pytest.raises(ValueError, match="side"):
        nx.searchsorted(x1, 1.0, side="middle")
    with pytest.raises(TypeError, match="sorter"):
        nx.searchsorted(x1, 1.0, sorter=nx.asarray(np.arange(4.0)))
    with pytest.raises(ValueError, match="sorter"):
        nx.searchsorted(x1, 1.0, sorter=nx.asarray(np.arange(3)))
    with pytest.raises(IndexError):
        nx.searchsorted(x1, 1.0, sorter=nx.asarray(np.array([0, 1, 2, 4])))


# -- count_nonzero, nonzero, argwhere, flatnonzero ------------------------------------------------

@pytest.mark.parametrize("dt", ALL, ids=lambda d: np.dtype(d).name)
def test_count_nonzero_matches_numpy(dt):
    rng = np.random.default_rng(8)
    a = sample(rng, dt, (3, 4, 5))
    if np.dtype(dt).kind == "c":
        a[0, 0, :2] = [1j, 0j]                     # imaginary part only counts
    t = nx.asarray(a)
    for axis in (None, 0, -1, (0, 2), (), [1, 2]):
        for keepdims in (False, True):
            out = nx.count_nonzero(t, axis=axis, keepdims=keepdims)
            ax = tuple(axis) if isinstance(axis, list) else axis
            exp = np.count_nonzero(a, axis=ax, keepdims=keepdims)
            assert out.dtype == np.int32
            np.testing.assert_array_equal(np.asarray(out), exp)
            assert out.shape == np.shape(exp)
    with pytest.raises(IndexError):
        nx.count_nonzero(t, axis=3)
    with pytest.raises(ValueError, match="repeated"):
        nx.count_nonzero(t, axis=(0, 0))
    with pytest.raises(TypeError, match="keepdims"):
        nx.count_nonzero(t, keepdims=None)


@pytest.mark.parametrize("dt", ALL, ids=lambda d: np.dtype(d).name)
def test_nonzero_argwhere_flatnonzero_match_numpy(dt):
    rng = np.random.default_rng(9)
    for shape in ((7,), (3, 4), (2, 3, 2), (0, 3)):
        a = sample(rng, dt, shape)
        t = nx.asarray(a)
        for got, exp in zip(nx.nonzero(t), np.nonzero(a)):
            assert got.dtype in (np.int32, np.int64)
            np.testing.assert_array_equal(np.asarray(got), exp)
        w = nx.argwhere(t)
        assert w.dtype == np.int32 and w.shape == np.argwhere(a).shape
        np.testing.assert_array_equal(np.asarray(w), np.argwhere(a))
        f = nx.flatnonzero(t)
        assert f.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(f), np.flatnonzero(a))
    for v in (0.0, 3.0):
        assert nx.argwhere(nx.asarray(np.float32(v))).shape == np.argwhere(np.float32(v)).shape
        np.testing.assert_array_equal(np.asarray(nx.flatnonzero(v)), np.flatnonzero(v))


class Opaque(ArrayBase):
    """A traced value whose values are unknown (as under a tracing transformation)."""
    __slots__ = ()
    shape = (4,)
    dtype = np.dtype(np.float32)

    def __nx_concrete__(self):
        raise TypeError("values unknown while tracing")


@pytest.mark.parametrize("fn", [nx.unique_values, nx.unique_counts, nx.unique_inverse,
                                nx.unique_all, nx.unique, nx.argwhere, nx.flatnonzero,
                                lambda x: nx.nanmedian(x), lambda x: nx.quantile([1.0, 2.0], x)],
                         ids=["unique_values", "unique_counts", "unique_inverse", "unique_all",
                              "unique", "argwhere", "flatnonzero", "nanmedian", "quantile_q"])
def test_value_dependent_functions_refuse_unknown_values(fn):
    with pytest.raises(TypeError, match="concrete"):
        fn(Opaque())


# -- set functions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL, ids=lambda d: np.dtype(d).name)
def test_unique_family_matches_numpy_with_distinct_nans(dt):
    rng = np.random.default_rng(10)
    a = sample(rng, dt, (4, 6))
    t = nx.asarray(a)
    vals, first, inv, counts = np.unique(a, return_index=True, return_inverse=True,
                                         return_counts=True, equal_nan=False)
    res = nx.unique_all(t)
    assert res._fields == ("values", "indices", "inverse_indices", "counts")
    assert res.values.dtype == a.dtype and res.values.ndim == 1
    np.testing.assert_array_equal(np.asarray(res.values), vals)
    np.testing.assert_array_equal(np.asarray(res.indices), first)
    assert res.inverse_indices.shape == a.shape
    np.testing.assert_array_equal(np.asarray(res.inverse_indices), inv.reshape(a.shape))
    np.testing.assert_array_equal(np.asarray(res.counts), counts)
    for field in (res.indices, res.inverse_indices, res.counts):
        assert field.dtype == np.int32
    # the standard's rules: each NaN its own value with count 1, values[inverse] == x
    if a.dtype.kind in "fc":
        assert np.isnan(np.asarray(res.values)).sum() == np.isnan(a).sum()
        assert (np.asarray(res.counts)[np.isnan(np.asarray(res.values))] == 1).all()
    back = np.asarray(res.values)[np.asarray(res.inverse_indices)]
    np.testing.assert_array_equal(back, a)
    uc = nx.unique_counts(t)
    assert uc._fields == ("values", "counts")
    np.testing.assert_array_equal(np.asarray(uc.counts), counts)
    ui = nx.unique_inverse(t)
    assert ui._fields == ("values", "inverse_indices")
    np.testing.assert_array_equal(np.asarray(ui.inverse_indices), inv.reshape(a.shape))
    np.testing.assert_array_equal(np.asarray(nx.unique_values(t)), vals)


def test_unique_signed_zeros_are_one_value_and_edge_shapes():
    res = nx.unique_counts(nx.asarray(np.array([0.0, -0.0, 1.0, -0.0])))
    assert np.asarray(res.values).tolist() == [0.0, 1.0]
    assert np.asarray(res.counts).tolist() == [3, 1]
    v = nx.unique_values(nx.asarray(np.float64(2.0)))          # 0-d: flattened
    assert v.shape == (1,) and float(v[0]) == 2.0
    r = nx.unique_all(nx.asarray(np.zeros((0, 3), np.float32)))
    assert r.values.shape == (0,) and r.inverse_indices.shape == (0, 3)
    assert r.values.dtype == np.float32


@pytest.mark.parametrize("kw", [{}, {"return_index": True}, {"return_inverse": True},
                                {"return_counts": True}, {"equal_nan": False},
                                {"return_index": True, "return_inverse": True,
                                 "return_counts": True}])
def test_numpy_unique_matches_numpy(kw):
    rng = np.random.default_rng(11)
    a = sample(rng, np.float64, (5, 6))
    got, exp = nx.unique(nx.asarray(a), **kw), np.unique(a, **kw)
    if isinstance(exp, tuple):
        assert isinstance(got, tuple) and len(got) == len(exp)
        for g, e in zip(got, exp):
            np.testing.assert_array_equal(np.asarray(g), e)
    else:
        np.testing.assert_array_equal(np.asarray(got), exp)
    ints = rng.integers(0, 3, (6, 4))
    for axis in (0, 1, -1):
        for g, e in zip(nx.unique(nx.asarray(ints), True, True, True, axis=axis),
                        np.unique(ints, True, True, True, axis=axis)):
            np.testing.assert_array_equal(np.asarray(g), e)
    with pytest.raises(IndexError):
        nx.unique(nx.asarray(ints), axis=2)
    with pytest.raises(TypeError, match="return_counts"):
        nx.unique(nx.asarray(ints), return_counts="yes")


def test_unique_values_are_differentiable_under_grad():
    x = f64_tensor([3.0, 1.0, 3.0, 2.0])
    # values [1, 2, 3] gathered from the first occurrences: positions 1, 3, 0
    g = nx.grad(lambda x: nx.sum(nx.unique_values(x) * f64_tensor([1.0, 10.0, 100.0])))(x)
    np.testing.assert_array_equal(np.asarray(g), [100.0, 1.0, 0.0, 10.0])
    g = nx.grad(lambda x: nx.sum(nx.unique(x, axis=0)))(f64_tensor([[1.0, 2.0], [1.0, 2.0]]))
    np.testing.assert_array_equal(np.asarray(g), [[1.0, 1.0], [0.0, 0.0]])


def test_unique_results_pickle():
    r = nx.unique_all(nx.asarray(np.array([2, 1, 2])))
    r2 = pickle.loads(pickle.dumps(r))
    assert type(r2) is type(r)
    np.testing.assert_array_equal(np.asarray(r2.counts), [1, 2])


# -- median, quantile, percentile ------------------------------------------------------------------

METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
           "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
           "hazen", "weibull", "median_unbiased", "normal_unbiased"]


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_match_numpy(method):
    rng = np.random.default_rng(12)
    for shape, axis in (((7,), None), ((6, 5), 1), ((4, 3, 5), (0, 2)), ((3, 8), -2),
                        ((1,), 0), ((2, 2), None)):
        a = rng.standard_normal(shape)
        for q in (0.0, 0.3, 0.5, 1.0, [0.1, 0.25, 0.75, 0.9], [[0.05, 0.5], [0.6, 0.99]]):
            exp = np.quantile(a, q, axis=axis, method=method)
            got = nx.quantile(nx.asarray(a), q, axis=axis, method=method)
            assert got.shape == np.shape(exp)
            np.testing.assert_allclose(np.asarray(got), exp, rtol=1e-12, atol=1e-12)
            exp = np.percentile(a, np.multiply(q, 100), axis=axis, method=method,
                                keepdims=True)
            got = nx.percentile(nx.asarray(a), np.multiply(q, 100).tolist()
                                if isinstance(q, list) else q * 100, axis=axis,
                                method=method, keepdims=True)
            assert got.shape == exp.shape
            np.testing.assert_allclose(np.asarray(got), exp, rtol=1e-12, atol=1e-12)


def test_quantile_linear_is_bit_identical_to_numpy_for_scalar_q():
    rng = np.random.default_rng(13)
    for dt in (np.float32, np.float64):
        a = rng.standard_normal((5, 9)).astype(dt)
        for q in (0.1, 0.37, 0.5, 0.8):
            got = nx.quantile(nx.asarray(a), q, axis=1)
            assert got.dtype == dt
            assert_same_bits(got, np.quantile(a, q, axis=1))


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_median_matches_numpy(dt):
    rng = np.random.default_rng(14)
    for shape, axis in (((7,), None), ((8,), 0), ((6, 5), 1), ((6, 5), 0), ((4, 3, 6), (0, 2)),
                        ((4, 3, 6), -1), ((), None)):
        a = rng.standard_normal(shape).astype(dt)
        for keepdims in (False, True):
            exp = np.median(a, axis=axis, keepdims=keepdims)
            got = nx.median(nx.asarray(a), axis=axis, keepdims=keepdims)
            assert got.dtype == dt and got.shape == np.shape(exp)
            np.testing.assert_array_equal(np.asarray(got), exp)


def test_median_and_quantile_nan_and_empty():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0], [np.nan, np.nan, np.nan]])
    np.testing.assert_array_equal(np.asarray(nx.median(nx.asarray(a), axis=1)),
                                  quiet(np.median, a, axis=1))
    np.testing.assert_array_equal(np.asarray(nx.quantile(nx.asarray(a), [0.2, 0.9], axis=1)),
                                  quiet(np.quantile, a, [0.2, 0.9], axis=1))
    assert np.isnan(float(nx.median(nx.asarray(np.zeros(0)))))
    np.testing.assert_array_equal(np.asarray(nx.median(nx.asarray(np.zeros((2, 0))), axis=1)),
                                  quiet(np.median, np.zeros((2, 0)), axis=1))
    # an empty axis has no quantile: NaN (as the median and as JAX; NumPy raises IndexError)
    out = nx.quantile(nx.asarray(np.zeros((2, 0))), [0.5, 0.7], axis=1)
    assert out.shape == (2, 2) and np.isnan(np.asarray(out)).all()
    # the other axis empty: an empty result
    assert nx.median(nx.asarray(np.zeros((0, 3))), axis=1).shape == (0,)


def test_nan_skipping_statistics_match_numpy():
    rng = np.random.default_rng(15)
    a = rng.standard_normal((5, 7))
    a[rng.random(a.shape) < 0.3] = np.nan
    a[2] = np.nan                                   # an all-NaN row
    a[3, :6] = np.nan                               # one value left
    t = nx.asarray(a)
    np.testing.assert_allclose(np.asarray(nx.nanmedian(t, axis=1)),
                               quiet(np.nanmedian, a, axis=1), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(nx.nanmedian(t, axis=0, keepdims=True)),
                               quiet(np.nanmedian, a, axis=0, keepdims=True))
    for method in METHODS:
        exp = quiet(np.nanquantile, a, [0.1, 0.5, 0.95], axis=1, method=method)
        np.testing.assert_allclose(np.asarray(nx.nanquantile(t, [0.1, 0.5, 0.95], axis=1,
                                                             method=method)), exp,
                                   rtol=1e-12, atol=1e-12)
        exp = quiet(np.nanpercentile, a, 40, axis=1, method=method)
        np.testing.assert_allclose(np.asarray(nx.nanpercentile(t, 40, axis=1, method=method)),
                                   exp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(float(nx.nanmedian(t)), np.nanmedian(a))


def test_order_statistic_dtypes():
    i = nx.asarray(np.array([3, 1, 2, 4], np.int32))
    assert nx.median(i).dtype == np.float32 and float(nx.median(i)) == 2.5
    assert nx.median(nx.asarray(np.array([3, 1], np.int64))).dtype == np.float64
    assert nx.median(nx.asarray(np.array([True, False, True]))).dtype == np.float32
    f32 = nx.asarray(np.arange(5, dtype=np.float32))
    assert nx.quantile(f32, 0.5).dtype == np.float32               # weak Python q
    assert nx.quantile(f32, [0.5]).dtype == np.float32             # a list is float32
    assert nx.quantile(f32, np.array([0.5])).dtype == np.float64   # as NumPy
    assert nx.percentile(f32, 50).dtype == np.float32
    h = np.array([1.0, 65504.0, 65504.0, 2.0], np.float16)        # mean of two in float32
    np.testing.assert_array_equal(np.asarray(nx.median(nx.asarray(h))), np.median(h))


def test_order_statistics_errors():
    a = nx.asarray(np.arange(6.0))
    with pytest.raises(ValueError, match="q"):
        nx.quantile(a, 1.5)
    with pytest.raises(ValueError, match="q"):
        nx.quantile(a, [0.5, -0.1])
    with pytest.raises(ValueError, match="q"):
        nx.quantile(a, float("nan"))
    with pytest.raises(ValueError, match=r"q.*100"):
        nx.percentile(a, 101)
    with pytest.raises(ValueError, match="method"):
        nx.quantile(a, 0.5, method="cubic")
    with pytest.raises(TypeError, match="q"):
        nx.quantile(a, 0.5j)
    with pytest.raises(TypeError, match="complex"):
        nx.median(nx.asarray(np.array([1 + 1j, 2])))
    with pytest.raises(TypeError, match="complex"):
        nx.quantile(nx.asarray(np.array([1 + 1j, 2])), 0.5)
    with pytest.raises(IndexError):
        nx.median(a, axis=1)
    with pytest.raises(ValueError, match="repeated"):
        nx.median(nx.asarray(np.zeros((2, 2))), axis=(0, 0))
    with pytest.raises(TypeError, match="keepdims"):
        nx.median(a, keepdims="no")


def test_median_and_quantile_derivatives_match_finite_differences():
    rng = np.random.default_rng(16)
    x = _distinct(rng, (4, 6))
    _check_vjp_jvp(lambda x: nx.median(x, axis=1), [x])
    _check_vjp_jvp(lambda x: nx.median(x, axis=0, keepdims=True), [x])
    _check_vjp_jvp(lambda x: nx.median(x), [x])
    for method in ("linear", "hazen", "midpoint", "nearest", "averaged_inverted_cdf"):
        _check_vjp_jvp(lambda x: nx.quantile(x, [0.15, 0.5, 0.83], axis=1, method=method), [x])
    _check_vjp_jvp(lambda x: nx.percentile(x, 37.0, axis=(0, 1)), [x])
    x[1, 2] = np.nan
    _check_vjp_jvp(lambda x: nx.nanmedian(x, axis=1), [x])
    _check_vjp_jvp(lambda x: nx.nanquantile(x, 0.3, axis=1), [x])


def test_quantile_derivative_in_q():
    a = f64_tensor([4.0, 1.0, 3.0, 2.0, 8.0])
    for method in ("linear", "weibull", "hazen", "normal_unbiased"):
        fn = lambda q: nx.quantile(a, q, method=method)  # noqa: E731
        _check_vjp_jvp(fn, [np.array([0.13, 0.45, 0.81])])   # off the kinks of every method
    _check_vjp_jvp(lambda q: nx.percentile(a, q), [np.array(33.0)])
    # discrete methods: piecewise constant in q
    g = nx.grad(lambda q: nx.quantile(a, q, method="lower"))(f64_tensor(0.3))
    assert float(g) == 0.0


def test_median_gradient_on_ties_pinned():
    # [1, 3, 3, 5]: the mean of the two middle values, both 3s
    g = nx.grad(nx.median)(f64_tensor([1.0, 3.0, 3.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.5, 0.5, 0.0])
    # [3, 1, 3]: the middle of the stable order [1, 3 (first), 3 (second)] is the first 3
    g = nx.grad(nx.median)(f64_tensor([3.0, 1.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 0.0, 0.0])
    # a NaN slice has a NaN median and no gradient into it
    g = nx.grad(lambda x: nx.sum(nx.where(nx.isnan(nx.median(x, axis=1)), 0.0,
                                          nx.median(x, axis=1))))(
        f64_tensor([[1.0, 2.0, 4.0], [1.0, np.nan, 2.0]]))
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])


def test_median_second_order():
    rng = np.random.default_rng(17)
    x = f64_tensor(_distinct(rng, (6,)))
    nx.check_grads(lambda x: nx.median(nx.sin(x)) + nx.quantile(x * x, 0.3), [x], order=2,
                   eps=1e-5, atol=1e-5, rtol=1e-5)
