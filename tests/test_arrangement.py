"""The arrangement family and the products (nx_rune.frontend.arrangement, .products): values
against NumPy over dtypes, shapes and input layouts (empty and 0-d where allowed), views where
NumPy returns views and new memory where it copies, derivatives (jacrev and jacfwd) against
float64 central differences, and bad input."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from autodiff_specs import f64_tensor, fd_jacobians
from nx_rune.tensor import ArrayBase

SETTINGS = settings(deadline=None, max_examples=40)
DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64,
          np.complex64]
NUMERIC = [d for d in DTYPES if d is not np.bool_]
LAYOUTS = ["contiguous", "transposed", "strided", "padded"]


def values(shape, dtype, seed=0):
    """An ndarray (0-d ones too: NumPy scalars would be weak Python floats) of ``shape``."""
    return np.asarray(_values(shape, dtype, seed))


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0, 60, shape).astype(dt)
    v = rng.integers(-40, 40, shape) / 4
    if dt.kind == "c":
        v = v + 1j * rng.integers(-4, 4, shape)
    return v.astype(dt)


def layout(arr, kind):
    """A tensor equal to ``arr`` laid out as ``kind`` (the reference stays ``arr``)."""
    if kind == "contiguous" or arr.ndim == 0:
        return nx.asarray(arr.copy())
    if kind == "transposed":
        return nx.transpose(nx.asarray(np.ascontiguousarray(arr.T)))
    if kind == "strided":
        big = np.zeros(tuple(2 * n for n in arr.shape), arr.dtype)
        big[tuple(slice(None, None, 2) for _ in arr.shape)] = arr
        return nx.asarray(big)[tuple(slice(None, None, 2) for _ in arr.shape)]
    # padded: a masked view whose border is the fill value
    if arr.size == 0 or min(arr.shape) < 3:
        return nx.pad(nx.asarray(arr.copy()), 0)
    inner = arr[tuple(slice(1, -1) for _ in arr.shape)]
    arr[...] = np.pad(inner, 1, constant_values=arr.flat[0])
    return nx.pad(nx.asarray(inner.copy()), 1, constant_values=arr.flat[0])


def same(result, expected):
    """Equal values, shape and dtype."""
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    np.testing.assert_array_equal(np.asarray(result), expected)


def close(result, expected, rtol=1e-6, atol=1e-6):
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    np.testing.assert_allclose(np.asarray(result), expected, rtol=rtol, atol=atol)


def check_derivatives(fn, *args, eps=1e-6, tol=1e-6):
    """jacrev and jacfwd of fn (nx tensors -> one tensor) with respect to every argument,
    against float64 central finite differences."""
    out, jacs = fd_jacobians(fn, [np.asarray(a, np.float64) for a in args], eps)
    nums = tuple(range(len(args)))
    tensors = [f64_tensor(a) for a in args]
    for jac in (nx.jacrev, nx.jacfwd):
        got = jac(fn, argnums=nums)(*tensors)
        for i, fd in enumerate(jacs):
            ad = np.asarray(got[i], dtype=np.float64).reshape(out.size, -1)
            np.testing.assert_allclose(ad, fd, rtol=tol, atol=tol,
                                       err_msg=f"{jac.__name__}, argument {i}")


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


# -- the standard's manipulation functions -----------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_matches_numpy_and_copies(dtype):
    a, b = values((2, 3), dtype, 1), values((1, 3), dtype, 2)
    same(nx.concat([a, b]), np.concatenate([a, b]))
    same(nx.concat((a, values((2, 1), dtype)), axis=-1),
         np.concatenate([a, values((2, 1), dtype)], axis=-1))
    same(nx.concat([a, values((4,), dtype), values((), dtype)], axis=None),
         np.concatenate([a.ravel(), values((4,), dtype), values((1,), dtype)]))
    t = nx.asarray(a)
    one = nx.concat([t])
    same(one, a)
    assert not nx.shares_memory(one, t)       # NumPy copies a single array too
    assert not nx.shares_memory(nx.concatenate([t]), t)
    assert not nx.shares_memory(nx.stack([t]), t)


def test_concat_promotes_and_accepts_empty_pieces():
    same(nx.concat([np.zeros((0, 2), np.int8), np.ones((1, 2), np.float32)]),
         np.concatenate([np.zeros((0, 2), np.int8), np.ones((1, 2), np.float32)]))
    same(nx.concat([np.arange(3, dtype=np.int16), np.arange(2, dtype=np.int64)]),
         np.concatenate([np.arange(3, dtype=np.int16), np.arange(2, dtype=np.int64)]))


@SETTINGS
@given(shape=shapes, dtype=st.sampled_from(DTYPES), kind=st.sampled_from(LAYOUTS),
       data=st.data())
def test_permute_dims_matrix_transpose_unstack_are_views(shape, dtype, kind, data):
    arr = values(shape, dtype)
    t = layout(arr, kind)
    axes = data.draw(st.permutations(list(range(len(shape)))))
    axes = [a - len(shape) if data.draw(st.booleans()) else a for a in axes]
    out = nx.permute_dims(t, tuple(axes))
    same(out, np.transpose(arr, axes))
    if kind == "contiguous":
        assert nx.shares_memory(out, t) or arr.size == 0
    if len(shape) >= 2:
        same(nx.matrix_transpose(t), np.swapaxes(arr, -1, -2))
    if len(shape) >= 1:
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))
        pieces = nx.unstack(t, axis=axis)
        assert isinstance(pieces, tuple) and len(pieces) == shape[axis]
        for p, q in zip(pieces, np.moveaxis(arr, axis, 0)):
            same(p, q)
            if kind == "contiguous" and q.size:
                assert nx.shares_memory(p, t)


def test_broadcast_arrays():
    a, b, c = np.arange(3.0), np.ones((2, 1), np.int32), np.float32(2)
    out = nx.broadcast_arrays(a, b, c)
    assert isinstance(out, list) and len(out) == 3
    for got, want in zip(out, np.broadcast_arrays(a, b, c)):
        same(got, want)
    t = nx.asarray(a)
    assert nx.shares_memory(nx.broadcast_arrays(t, b)[0], t)   # a view
    assert nx.broadcast_arrays() == []
    same(nx.broadcast_arrays(np.zeros((0, 1)), np.ones(3))[1], np.ones((0, 3)))


def test_expand_dims_squeeze_flip_moveaxis_keywords():
    x = np.arange(6.0).reshape(2, 3)
    same(nx.expand_dims(x), x[None])                     # the standard's default axis=0
    same(nx.expand_dims(x, axis=-1), x[..., None])
    same(nx.expand_dims(x, (0, 3)), np.expand_dims(x, (0, 3)))
    same(nx.squeeze(x[:, None], axis=1), x)
    same(nx.squeeze(x[None, :, None], (0, 2)), x)
    same(nx.flip(x, axis=(0, 1)), x[::-1, ::-1])
    same(nx.moveaxis(np.zeros((2, 3, 4)), (0, 1), (2, 0)), np.moveaxis(np.zeros((2, 3, 4)),
                                                                         (0, 1), (2, 0)))


def test_reshape_copy_keyword():
    x = nx.asarray(np.arange(6.0).reshape(2, 3))
    assert nx.shares_memory(nx.reshape(x, (3, 2)), x)
    assert nx.shares_memory(nx.reshape(x, (3, 2), copy=False), x)
    for shape in [(3, 2), (2, 3), (-1,)]:
        out = nx.reshape(x, shape, copy=True)
        same(out, np.arange(6.0).reshape(shape))
        assert not nx.shares_memory(out, x)
    same(nx.reshape(x.T, (6,), copy=True), np.arange(6.0).reshape(2, 3).T.ravel())
    with pytest.raises(ValueError, match="copy"):
        nx.reshape(x.T, (6,), copy=False)        # a transposed view cannot be merged
    same(nx.reshape(x.T, (3, 2), copy=False), np.arange(6.0).reshape(2, 3).T)
    check_derivatives(lambda a: nx.reshape(a, (3, 2), copy=True) * 2, rnd(2, 3))


@SETTINGS
@given(shape=shapes, dtype=st.sampled_from(DTYPES), kind=st.sampled_from(LAYOUTS),
       reps=st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), max_size=4).map(tuple)))
def test_tile(shape, dtype, kind, reps):
    arr = values(shape, dtype)
    t = layout(arr, kind)
    out = nx.tile(t, reps)
    same(out, np.tile(arr, reps))
    if out.size:
        assert not nx.shares_memory(out, t)


def test_tile_always_copies():
    t = nx.asarray(np.arange(6.0).reshape(2, 3))
    for reps in [1, (1, 1), (), (1, 1, 1)]:
        out = nx.tile(t, reps)
        same(out, np.tile(np.arange(6.0).reshape(2, 3), reps))
        assert not nx.shares_memory(out, t)
    b = nx.broadcast_to(nx.asarray(np.arange(3.0)), (4, 3))   # stride-0 input
    out = nx.tile(b, (2, 1))
    same(out, np.tile(np.broadcast_to(np.arange(3.0), (4, 3)), (2, 1)))
    assert not nx.shares_memory(out, b)


@SETTINGS
@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES), kind=st.sampled_from(LAYOUTS),
       data=st.data())
def test_repeat(shape, dtype, kind, data):
    arr = values(shape, dtype)
    t = layout(arr, kind)
    r = data.draw(st.integers(0, 6))    # up to 4: interleaved copies; beyond: a broadcast
    same(nx.repeat(t, r), np.repeat(arr, r))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    same(nx.repeat(t, r, axis=axis), np.repeat(arr, r, axis=axis))
    counts = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=shape[axis],
                                           max_size=shape[axis])), dtype=np.int64)
    same(nx.repeat(t, counts, axis=axis), np.repeat(arr, counts, axis=axis))
    same(nx.repeat(t, nx.asarray(counts.astype(np.int32)), axis=axis),
         np.repeat(arr, counts, axis=axis))
    same(nx.repeat(t, nx.asarray([2]), axis=axis), np.repeat(arr, [2], axis=axis))
    flat = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=arr.size,
                                         max_size=arr.size)), dtype=np.int32)
    same(nx.repeat(t, flat), np.repeat(arr, flat))


def test_repeat_copies_and_scalars():
    t = nx.asarray(np.arange(4.0))
    out = nx.repeat(t, 1)
    same(out, np.arange(4.0))
    assert not nx.shares_memory(out, t)
    same(nx.repeat(np.float32(3), 2), np.repeat(np.float32(3), 2))
    same(nx.repeat(5, 3), np.repeat(np.int32(5), 3))
    same(nx.repeat(np.zeros((2, 0)), 3, axis=1), np.zeros((2, 0)))
    same(nx.repeat(np.zeros((2, 0)), [], axis=1), np.zeros((2, 0)))


@SETTINGS
@given(shape=shapes, dtype=st.sampled_from(DTYPES), kind=st.sampled_from(LAYOUTS),
       data=st.data())
def test_roll(shape, dtype, kind, data):
    arr = values(shape, dtype)
    t = layout(arr, kind)
    shift = data.draw(st.integers(-7, 7))
    same(nx.roll(t, shift), np.roll(arr, shift))
    same(nx.roll(t, (shift, 2)), np.roll(arr, (shift, 2)))
    if shape:
        k = data.draw(st.integers(1, 3))
        axes = tuple(data.draw(st.integers(-len(shape), len(shape) - 1)) for _ in range(k))
        shifts = tuple(data.draw(st.integers(-6, 6)) for _ in range(k))
        same(nx.roll(t, shifts, axis=axes), np.roll(arr, shifts, axis=axes))
        same(nx.roll(t, shift, axis=axes), np.roll(arr, shift, axis=axes))
        same(nx.roll(t, shifts, axis=axes[0]), np.roll(arr, shifts, axis=axes[0]))
    out = nx.roll(t, 0)
    if arr.size:
        assert not nx.shares_memory(out, t)       # NumPy copies even for a zero shift


# -- NumPy's arrangement names -------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (0,), (2, 0, 1)])
def test_atleast(shape):
    arr = values(shape, np.float32)
    t = nx.asarray(arr)
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        got, want = getattr(nx, name)(t), getattr(np, name)(arr)
        same(got, want)
        if arr.size:
            assert nx.shares_memory(got, t)
        pair = getattr(nx, name)(t, arr[..., None] if arr.ndim else 1.0)
        assert isinstance(pair, tuple) and len(pair) == 2
        for g, w in zip(pair, getattr(np, name)(arr, arr[..., None] if arr.ndim else 1.0)):
            np.testing.assert_array_equal(np.asarray(g), w)
            assert g.shape == w.shape


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32, np.complex64])
def test_hstack_vstack_dstack_column_stack(dtype):
    cases = [
        [values((3,), dtype), values((2,), dtype)],
        [values((2, 3), dtype), values((2, 1), dtype)],
        [values((), dtype), values((2,), dtype)],
        [values((2, 3, 2), dtype), values((2, 4, 2), dtype)],
    ]
    for arrs in cases:
        same(nx.hstack(arrs), np.hstack(arrs))
    for arrs in ([values((3,), dtype), values((3,), dtype)], [values((2, 3), dtype),
                                                              values((3,), dtype)],
                 [values((), dtype), values((1,), dtype)]):
        same(nx.vstack(arrs), np.vstack(arrs))
    for arrs in ([values((3,), dtype), values((3,), dtype)], [values((2, 3), dtype),
                                                              values((2, 3, 2), dtype)],
                 [values((), dtype), values((1,), dtype)]):
        same(nx.dstack(arrs), np.dstack(arrs))
    for arrs in ([values((3,), dtype), values((3, 2), dtype)], [values((), dtype)],
                 [values((2, 2, 2), dtype), values((2, 1, 2), dtype)]):
        same(nx.column_stack(arrs), np.column_stack(arrs))
    same(nx.hstack([np.ones(2, np.int8), np.ones(2, np.float32)]),
         np.hstack([np.ones(2, np.int8), np.ones(2, np.float32)]))
    same(nx.vstack([np.ones(2, np.int8)], dtype=np.float64), np.ones((1, 2)))
    t = nx.asarray(values((2, 3), dtype))
    assert not nx.shares_memory(nx.vstack([t]), t)


@SETTINGS
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=4).map(tuple),
       dtype=st.sampled_from(DTYPES), kind=st.sampled_from(LAYOUTS), k=st.integers(-5, 5),
       data=st.data())
def test_rot90_fliplr_flipud(shape, dtype, kind, k, data):
    arr = values(shape, dtype)
    t = layout(arr, kind)
    axes = tuple(data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=2,
                                    max_size=2, unique_by=lambda a: a % len(shape))))
    out = nx.rot90(t, k, axes)
    same(out, np.rot90(arr, k, axes))
    same(nx.rot90(t, k=k), np.rot90(arr, k=k))
    same(nx.fliplr(t), np.fliplr(arr))
    same(nx.flipud(t), np.flipud(arr))
    if kind == "contiguous" and arr.size:
        assert nx.shares_memory(out, t) and nx.shares_memory(nx.fliplr(t), t)


@SETTINGS
@given(shape=st.lists(st.integers(0, 5), min_size=2, max_size=4).map(tuple),
       dtype=st.sampled_from(DTYPES), kind=st.sampled_from(LAYOUTS), data=st.data())
def test_diagonal_and_trace(shape, dtype, kind, data):
    arr = values(shape, dtype)
    t = layout(arr, kind)
    nd = len(shape)
    a1, a2 = data.draw(st.lists(st.integers(-nd, nd - 1), min_size=2, max_size=2,
                                unique_by=lambda a: a % nd))
    offset = data.draw(st.integers(-6, 6))
    d = nx.diagonal(t, offset, a1, a2)
    same(d, np.diagonal(arr, offset, a1, a2))
    if kind == "contiguous" and d.size:
        assert nx.shares_memory(d, t)            # a view, as NumPy's
    want = np.trace(arr, offset, a1, a2)
    got = nx.trace(t, offset, a1, a2)
    if np.dtype(dtype).kind in "biu":            # nx sums small ints in int32 (as JAX)
        assert got.dtype == nx.sum(nx.asarray(arr)).dtype
        np.testing.assert_array_equal(np.asarray(got), want.astype(got.dtype))
    elif dtype is np.float16:
        close(got, want.astype(np.float32), rtol=1e-2, atol=1e-1)
    else:
        close(got, want)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    close(nx.trace(t, offset, a1, a2, dtype=wide), np.trace(arr, offset, a1, a2, dtype=wide))
    assert nx.trace(t, offset, a1, a2, dtype=wide).dtype == wide


@SETTINGS
@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES), data=st.data())
def test_split_and_array_split(shape, dtype, data):
    arr = values(shape, dtype)
    t = nx.asarray(arr)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    k = data.draw(st.integers(1, 5))
    for got, want in zip(nx.array_split(t, k, axis=axis), np.array_split(arr, k, axis=axis)):
        same(got, want)
    assert len(nx.array_split(t, k, axis)) == k
    idx = data.draw(st.lists(st.integers(-n - 2, n + 2), max_size=4))
    for fn in ("split", "array_split"):
        pieces = getattr(nx, fn)(t, idx, axis)
        want = getattr(np, fn)(arr, idx, axis)
        assert len(pieces) == len(want)
        for got, w in zip(pieces, want):
            same(got, w)
            if w.size:
                assert nx.shares_memory(got, t)
    if n % k == 0:
        for got, want in zip(nx.split(t, np.int64(k), axis), np.split(arr, k, axis)):
            same(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_diff(dtype, n):
    arr = values((3, 4), dtype)
    for axis in (-1, 0, 1):
        same(nx.diff(arr, n, axis), np.diff(arr, n, axis))
        same(nx.diff(arr, n=n, axis=axis), np.diff(arr, n=n, axis=axis))
    pre, app = values((3, 1), dtype, 5), values((3, 2), dtype, 6)
    same(nx.diff(arr, n, prepend=pre, append=app), np.diff(arr, n, prepend=pre, append=app))
    scalar = values((), dtype, 7)
    same(nx.diff(arr, n, axis=0, prepend=scalar), np.diff(arr, n, axis=0, prepend=scalar))
    same(nx.diff(values((0,), dtype), n), np.diff(values((0,), dtype), n))


def test_diff_keeps_a_and_weak_scalars():
    t = nx.asarray(np.arange(4.0, dtype=np.float32))
    assert nx.diff(t, 0) is t
    out = nx.diff(t, prepend=0.0, append=10)          # Python numbers are weak: float32 stays
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.diff(np.arange(4.0), prepend=0,
                                                           append=10))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_ediff1d(dtype):
    arr = values((2, 3), dtype)
    same(nx.ediff1d(arr), np.ediff1d(arr))
    begin, end = values((2,), dtype, 3), values((1, 2), dtype, 4)
    same(nx.ediff1d(arr, to_end=end, to_begin=begin), np.ediff1d(arr, to_end=end,
                                                                  to_begin=begin))
    same(nx.ediff1d(values((1,), dtype)), np.ediff1d(values((1,), dtype)))
    same(nx.ediff1d(values((0,), dtype), to_begin=begin), np.ediff1d(values((0,), dtype),
                                                                     to_begin=begin))
    out = nx.ediff1d(arr, to_begin=2)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out)[0], 2)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float64, np.complex64])
def test_select(dtype):
    x = values((3, 4), dtype)
    conds = [np.arange(4) < 1, values((3, 4), np.bool_, 1), np.asarray(True)]
    choices = [x, values((3, 4), dtype, 2) * 2, values((4,), dtype, 3)]
    same(nx.select(conds, choices), np.select(conds, choices))
    same(nx.select(conds[:2], choices[:2], default=values((), dtype, 4)),
         np.select(conds[:2], choices[:2], default=values((), dtype, 4)))
    out = nx.select(conds[:1], choices[:1], default=3)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), np.select(conds[:1], choices[:1], 3))
    same(nx.select([np.ones(3, bool)], [np.arange(3, dtype=np.int8)], np.float32(1)),
         np.select([np.ones(3, bool)], [np.arange(3, dtype=np.int8)], np.float32(1)))


def test_interp_matches_numpy():
    rng = np.random.default_rng(0)
    xp = np.sort(rng.uniform(-3, 3, 7))
    fp = rng.normal(size=7)
    x = np.concatenate([rng.uniform(-4, 4, 30), xp, [np.nan, -np.inf, np.inf]]).reshape(4, -1)
    close(nx.interp(x, xp, fp), np.interp(x, xp, fp), rtol=1e-12, atol=1e-12)
    close(nx.interp(x, xp, fp, left=-10.0, right=10.0),
          np.interp(x, xp, fp, left=-10.0, right=10.0), rtol=1e-12, atol=1e-12)
    # repeated sample points, a single one, and infinite values (NumPy's rules)
    close(nx.interp([0, 1, 1.5, 2], [0, 1, 1, 2], [0.0, 1, 5, 6]),
          np.interp([0, 1, 1.5, 2], [0, 1, 1, 2], [0, 1, 5, 6]))
    close(nx.interp([-1, 0, 1], [0.0], [3.0]), np.interp([-1, 0, 1], [0.0], [3.0]))
    close(nx.interp([-1, 0, 1], [0.0], [3.0], left=1, right=2),
          np.interp([-1, 0, 1], [0.0], [3.0], left=1, right=2))
    for fpv in ([np.inf, np.inf], [0, np.inf], [-np.inf, np.inf]):
        close(nx.interp([0.5, 0.0, 1.0], [0.0, 1.0], fpv),
              np.interp([0.5, 0.0, 1.0], [0.0, 1.0], fpv))
    # dtypes: float32 stays float32, complex fp gives complex, scalars give 0-d
    out = nx.interp(np.float32(0.5), np.array([0, 1], np.float32), np.array([0, 2], np.float32))
    assert out.shape == () and out.dtype == np.float32 and float(out) == 1.0
    c = nx.interp([0.25, 0.5], [0.0, 1.0], np.array([1 + 1j, 3 - 1j]))
    close(c, np.interp([0.25, 0.5], [0.0, 1.0], np.array([1 + 1j, 3 - 1j])))
    assert c.dtype == np.complex128


def test_interp_traced_segments_match():
    # under a transformation the segments come from comparisons when values are not concrete;
    # the comparison path gives the same values
    from nx_rune.frontend import arrangement
    rng = np.random.default_rng(1)
    xp, fp = np.sort(rng.uniform(-3, 3, 6)), rng.normal(size=6)
    x = np.concatenate([rng.uniform(-4, 4, 20), xp])
    orig = arrangement.concrete_value
    arrangement.concrete_value = lambda v: None
    try:
        close(nx.interp(x, xp, fp), np.interp(x, xp, fp), rtol=1e-12, atol=1e-12)
    finally:
        arrangement.concrete_value = orig


# -- products ---------------------------------------------------------------------------------

@SETTINGS
@given(sa=st.lists(st.integers(0, 3), max_size=4).map(tuple),
       dtype=st.sampled_from([np.int32, np.float32, np.float64, np.complex64]), data=st.data())
def test_tensordot(sa, dtype, data):
    a = values(sa, dtype)
    n = data.draw(st.integers(0, len(sa)))
    extra = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    b = values(sa[len(sa) - n:] + extra, dtype, 1)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    close(nx.tensordot(a, b, axes=n), np.tensordot(a, b, axes=n), rtol=tol, atol=tol)
    close(nx.tensordot(a, b, n), np.tensordot(a, b, n), rtol=tol, atol=tol)
    # explicit axes, in any order and negative
    perm = data.draw(st.permutations(list(range(n))))
    ax_a = [len(sa) - n + p - (len(sa) if data.draw(st.booleans()) else 0) for p in perm]
    ax_b = list(perm)
    close(nx.tensordot(a, b, axes=(ax_a, ax_b)), np.tensordot(a, b, axes=(ax_a, ax_b)),
          rtol=tol, atol=tol)
    assert nx.tensordot(a, b, n).dtype == np.tensordot(a, b, n).dtype


def test_tensordot_int_axes_pairs_and_promotion():
    a, b = values((2, 3, 4), np.int8), values((4, 3), np.float32)
    same(nx.tensordot(a, b, axes=(2, 0)), np.tensordot(a, b, axes=(2, 0)))
    close(nx.tensordot(a, b, axes=([1, 2], [1, 0])), np.tensordot(a, b, axes=([1, 2], [1, 0])))
    close(nx.tensordot(a, b, axes=0), np.tensordot(a, b, axes=0))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_vecdot_vdot_inner_outer_kron(dtype):
    a, b = values((2, 1, 3), dtype), values((4, 3), dtype, 1)
    tol = 1e-5
    close(nx.vecdot(a, b), np.vecdot(a, b), tol, tol)
    close(nx.vecdot(a, b, axis=-1), np.vecdot(a, b, axis=-1), tol, tol)
    c, d = values((3, 2), dtype, 2), values((3, 2), dtype, 3)
    close(nx.vecdot(c, d, axis=0), np.vecdot(c, d, axis=0), tol, tol)
    close(nx.vecdot(c, d, axis=-2), np.vecdot(c, d, axis=0), tol, tol)
    assert nx.vecdot(c, d).dtype == np.vecdot(c, d).dtype
    close(nx.vdot(a, values((3, 2), dtype, 4)), np.vdot(a, values((3, 2), dtype, 4)), tol, tol)
    close(nx.inner(c, d), np.inner(c, d), tol, tol)
    close(nx.outer(c, d), np.outer(c, d), tol, tol)
    for x, y in [(c, d), (a, c), (values((), dtype), c), (values((3,), dtype), c)]:
        close(nx.kron(x, y), np.kron(x, y), tol, tol)
        assert nx.kron(x, y).dtype == np.kron(x, y).dtype


def test_vecdot_and_tensordot_keep_small_int_and_bool_dtypes():
    a, b = values((3, 4), np.uint8), values((3, 4), np.uint8, 1)
    same(nx.vecdot(a, b), np.vecdot(a, b))                # uint8 accumulation wraps, as NumPy
    same(nx.vecdot(a.astype(np.int8), b.astype(np.int8)),
         np.vecdot(a.astype(np.int8), b.astype(np.int8)))
    p, q = values((2, 3), np.bool_), values((3, 2), np.bool_, 1)
    same(nx.tensordot(p, q, 1), np.tensordot(p, q, 1))
    same(nx.vecdot(p, q.T), np.vecdot(p, q.T))


def test_vdot_of_bools():
    a, b = np.array([True, False, True]), np.array([False, False, True])
    same(nx.vdot(a, b), np.vdot(a, b))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_cross(dtype):
    a, b = values((4, 3), dtype), values((4, 3), dtype, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # NumPy deprecates 2-vectors
        for x, y in [(a, b), (a[:, :2], b), (a, b[:, :2]), (a[:, :2], b[:, :2]),
                     (a[0], b), (a[:1, :2], b[0])]:
            close(nx.cross(x, y), np.cross(x, y))
            assert nx.cross(x, y).dtype == np.cross(x, y).dtype
        at = values((3, 2, 4), dtype)         # vectors along axis 0, other axes (2, 4)
        for bt, kw in [(values((2, 1, 3), dtype, 2), dict(axisa=0, axisb=-1, axisc=1)),
                       (values((2, 3, 1), dtype, 3), dict(axisa=0, axisb=1, axisc=0)),
                       (values((2, 2, 4), dtype, 4), dict(axisa=-3, axisb=1, axisc=-1))]:
            close(nx.cross(at, bt, **kw), np.cross(at, bt, **kw))
        close(nx.cross(np.swapaxes(a, 0, 1), np.swapaxes(b, 0, 1), axis=0),
              np.cross(np.swapaxes(a, 0, 1), np.swapaxes(b, 0, 1), axis=0))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64])
def test_polyval(dtype):
    p = values((4,), dtype)
    x = values((2, 3), dtype, 1)
    close(nx.polyval(p, x), np.polyval(p, x), rtol=1e-5)
    assert nx.polyval(p, x).dtype == np.polyval(p, x).dtype
    close(nx.polyval([1.0, -2.0, 0.5], 1.5), np.polyval([1.0, -2.0, 0.5], 1.5))
    same(nx.polyval(np.zeros(0, np.float32), np.ones(3, np.float32)), np.zeros(3, np.float32))
    with np.errstate(invalid="ignore"):
        close(nx.polyval(np.ones(1), np.inf), np.polyval(np.ones(1), np.inf))   # nan, as NumPy


def test_matmul_follows_the_standard():
    cases = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((3,), (5, 3, 4)),
             ((5, 2, 3), (3,)), ((2, 1, 2, 3), (4, 3, 5)), ((2, 3), (4, 3, 2)), ((0, 3), (3, 2)),
             ((2, 0), (0, 2))]
    for sa, sb in cases:
        a, b = values(sa, np.float64), values(sb, np.float64, 1)
        close(nx.matmul(a, b), np.matmul(a, b), 1e-12, 1e-12)
        close(nx.asarray(a) @ nx.asarray(b), a @ b, 1e-12, 1e-12)
    same(nx.matmul(values((2, 3), np.int8), values((3, 2), np.int8, 1)),
         np.matmul(values((2, 3), np.int8), values((3, 2), np.int8, 1)))
    assert nx.matmul(values((2, 3), np.int8), values((3,), np.float32)).dtype == np.float32
    z = values((2, 2), np.complex64)
    close(nx.matmul(z, z), z @ z)     # no conjugation
    for sa, sb in [((), (3,)), ((3,), ()), ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 2)),
                   ((2, 3, 4), (3, 4, 2)), ((2, 2, 3), (3, 3, 2))]:
        with pytest.raises(ValueError, match="matmul"):
            nx.matmul(np.ones(sa), np.ones(sb))


# -- derivatives ------------------------------------------------------------------------------

R = np.random.default_rng(42)


def rnd(*shape):
    return R.uniform(-2, 2, shape)


DERIVATIVE_CASES = {
    "concat": (lambda a, b: nx.concat([a, b], axis=1), rnd(2, 3), rnd(2, 2)),
    "concat_none": (lambda a, b: nx.concat([a, b], axis=None), rnd(2, 3), rnd(3)),
    "permute_dims": (lambda a: nx.permute_dims(a, (2, 0, 1)), rnd(2, 3, 2)),
    "matrix_transpose": (lambda a: nx.matrix_transpose(a) * 2, rnd(2, 2, 3)),
    "broadcast_arrays": (lambda a, b: nx.stack(nx.broadcast_arrays(a, b)), rnd(3, 1), rnd(2)),
    "unstack": (lambda a: nx.unstack(a, axis=1)[1] * nx.unstack(a, axis=1)[2], rnd(2, 3)),
    "tile": (lambda a: nx.tile(a, (2, 1, 2)), rnd(2, 3)),
    "repeat_int": (lambda a: nx.repeat(a, 3, axis=1), rnd(2, 3)),
    "repeat_broadcast": (lambda a: nx.repeat(a, 5, axis=0), rnd(2, 3)),
    "repeat_counts": (lambda a: nx.repeat(a, [2, 0, 3], axis=-1), rnd(2, 3)),
    "repeat_flat": (lambda a: nx.repeat(a, 2), rnd(2, 2)),
    "roll": (lambda a: nx.roll(a, (1, -2), axis=(0, 1)), rnd(3, 4)),
    "roll_flat": (lambda a: nx.roll(a, 5), rnd(2, 3)),
    "atleast_3d": (lambda a: nx.atleast_3d(a) * 3, rnd(4)),
    "atleast_1d_2d": (lambda a, b: nx.atleast_1d(a) * nx.atleast_2d(b), np.array(1.5), rnd(3)),
    "hstack": (lambda a, b: nx.hstack([a, b]), rnd(2, 2), rnd(2, 1)),
    "vstack": (lambda a, b: nx.vstack([a, b]), rnd(3), rnd(2, 3)),
    "dstack": (lambda a, b: nx.dstack([a, b]), rnd(2, 2), rnd(2, 2)),
    "column_stack": (lambda a, b: nx.column_stack([a, b]), rnd(3), rnd(3, 2)),
    "rot90": (lambda a: nx.rot90(a, 1) * nx.rot90(a, -1), rnd(3, 3)),
    "rot90_axes": (lambda a: nx.rot90(a, 3, axes=(2, 0)), rnd(2, 3, 2)),
    "fliplr_flipud": (lambda a: nx.fliplr(a) + 2 * nx.flipud(a), rnd(3, 3)),
    "diagonal": (lambda a: nx.diagonal(a, 1, 0, 2), rnd(3, 2, 4)),
    "diagonal_neg": (lambda a: nx.diagonal(a, -1) ** 2, rnd(4, 3)),
    "diagonal_strided": (lambda a: nx.diagonal(a[::-1].T), rnd(3, 4)),
    "trace": (lambda a: nx.trace(a * a, 0, -1, -2), rnd(2, 3, 3)),
    "array_split": (lambda a: nx.array_split(a, 3, axis=1)[0] * 2, rnd(2, 5)),
    "diff": (lambda a: nx.diff(a, 2, axis=0), rnd(4, 2)),
    "diff_prepend": (lambda a, p, q: nx.diff(a, prepend=p, append=q), rnd(2, 3), rnd(2, 1),
                     rnd(2, 2)),
    "ediff1d": (lambda a, b: nx.ediff1d(a, to_begin=b), rnd(2, 3), rnd(2)),
    "select": (lambda a, b, d: nx.select([np.array([True, False, False]),
                                          np.array([True, True, False])], [a, b], d),
               rnd(3), rnd(3), rnd(3)),
    "tensordot": (lambda a, b: nx.tensordot(a, b, axes=([0, 2], [1, 0])), rnd(2, 3, 2),
                  rnd(2, 2, 2)),
    "tensordot_int": (lambda a, b: nx.tensordot(a, b, 1), rnd(2, 3), rnd(3, 2)),
    "vecdot": (lambda a, b: nx.vecdot(a, b, axis=-2), rnd(3, 2), rnd(2, 3, 2)),
    "vdot": (lambda a, b: nx.vdot(a, b), rnd(2, 3), rnd(6)),
    "kron": (lambda a, b: nx.kron(a, b), rnd(2, 2), rnd(3)),
    "cross33": (lambda a, b: nx.cross(a, b), rnd(2, 3), rnd(3)),
    "cross23": (lambda a, b: nx.cross(a, b, axisc=0), rnd(2, 2), rnd(2, 3)),
    "cross22": (lambda a, b: nx.cross(a, b), rnd(3, 2), rnd(3, 2)),
    "polyval": (lambda p, x: nx.polyval(p, x), rnd(4), rnd(2, 3)),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVE_CASES))
def test_derivatives_against_finite_differences(name):
    fn, *args = DERIVATIVE_CASES[name]
    check_derivatives(fn, *args)


def test_interp_derivatives():
    xp = np.array([-1.0, 0.0, 0.5, 2.0])
    fp = rnd(4)
    x = np.array([-1.5, -0.7, 0.2, 0.45, 1.3, 2.5])      # away from the knots
    check_derivatives(lambda x, xp, fp: nx.interp(x, xp, fp), x, xp, fp)
    check_derivatives(lambda x, fp, l, r: nx.interp(x, xp, fp, left=l, right=r), x, fp,
                      np.array(3.0), np.array(-2.0))
    # second order: d2/dx2 of interp is 0 and d2/dfp dx the slopes' weights
    h = nx.hessian(lambda v: nx.sum(nx.interp(v, xp, fp) ** 2))(f64_tensor(x))
    slope = np.interp(x + 1e-7, xp, fp) - np.interp(x - 1e-7, xp, fp)
    want = np.diag(2 * (slope / 2e-7) ** 2)
    np.testing.assert_allclose(np.asarray(h), want, rtol=1e-5, atol=1e-5)


def test_polyval_second_derivative():
    p = np.array([2.0, -1.0, 0.5, 3.0])
    x = np.array([0.3, -1.2])
    h = nx.hessian(lambda v: nx.sum(nx.polyval(p, v)))(f64_tensor(x))
    np.testing.assert_allclose(np.asarray(h), np.diag(np.polyval(np.polyder(p, 2), x)),
                               rtol=1e-12)


def test_complex_vecdot_derivatives_follow_the_conjugated_definition():
    # out = sum(conj(a) * b): d out = conj(da) * b + conj(a) * db; the VJP (JAX's convention,
    # cotangents not conjugated) is conj(ct * b) for a and ct * conj(a) for b
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    b = rng.normal(size=3) + 1j * rng.normal(size=3)
    ta = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    tb = rng.normal(size=3) + 1j * rng.normal(size=3)
    ct = rng.normal(size=2) + 1j * rng.normal(size=2)
    A, B = nx.asarray(a), nx.asarray(b)
    out, tout = nx.jvp(lambda u, v: nx.vecdot(u, v), (A, B), (nx.asarray(ta), nx.asarray(tb)))
    close(out, np.sum(np.conj(a) * b, -1), 1e-12, 1e-12)
    close(tout, np.sum(np.conj(ta) * b + np.conj(a) * tb, -1), 1e-12, 1e-12)
    _, vjp_fn = nx.vjp(lambda u, v: nx.vecdot(u, v), A, B)
    ga, gb = vjp_fn(nx.asarray(ct))
    close(ga, np.conj(ct[:, None] * b), 1e-12, 1e-12)
    close(gb, np.sum(ct[:, None] * np.conj(a), 0), 1e-12, 1e-12)
    _, vjp_fn = nx.vjp(nx.vdot, A, nx.asarray(a * 2))
    ga, gb = vjp_fn(nx.asarray(np.complex128(ct[0])))
    close(gb, ct[0] * np.conj(a), 1e-12, 1e-12)
    close(ga, np.conj(ct[0] * a * 2), 1e-12, 1e-12)


# -- bad input ------------------------------------------------------------------------------

X = np.arange(6.0).reshape(2, 3)

BAD = [
    (lambda: nx.concat([]), ValueError, "arrays|tensors"),
    (lambda: nx.concat([X, np.ones((2, 2))]), ValueError, "tensors"),
    (lambda: nx.concat([X, X], axis=2), IndexError, "axis"),
    (lambda: nx.concat([np.float32(1), np.float32(2)]), ValueError, "0-d"),
    (lambda: nx.permute_dims(X, (0, 0)), ValueError, "axes"),
    (lambda: nx.permute_dims(X, (0,)), ValueError, "axes"),
    (lambda: nx.permute_dims(X, (0, 2)), IndexError, "axes"),
    (lambda: nx.matrix_transpose(np.ones(3)), ValueError, "x"),
    (lambda: nx.broadcast_arrays(np.ones(2), np.ones(3)), ValueError, "broadcast"),
    (lambda: nx.unstack(np.float32(1)), IndexError, "axis"),
    (lambda: nx.unstack(X, axis=2), IndexError, "axis"),
    (lambda: nx.expand_dims(X, 3), IndexError, "axis"),
    (lambda: nx.squeeze(X, 0), ValueError, "axis"),
    (lambda: nx.moveaxis(X, (0, 0), (0, 1)), ValueError, "source"),
    (lambda: nx.tile(X, -1), ValueError, "repetitions"),
    (lambda: nx.tile(X, (1.5, 2)), TypeError, "repetitions"),
    (lambda: nx.repeat(X, -1), ValueError, "repeats"),
    (lambda: nx.repeat(X, 1.5), TypeError, "repeats"),
    (lambda: nx.repeat(X, [1, 2], axis=1), ValueError, "repeats"),
    (lambda: nx.repeat(X, [1, -1, 1], axis=1), ValueError, "repeats"),
    (lambda: nx.repeat(X, [[1, 2, 3]], axis=1), TypeError, "repeats"),
    (lambda: nx.repeat(X, 2, axis=2), IndexError, "axis"),
    (lambda: nx.roll(X, 1.5), TypeError, "shift"),
    (lambda: nx.roll(X, (1, 2, 3), axis=(0, 1)), ValueError, "shift"),
    (lambda: nx.roll(X, 1, axis=2), IndexError, "axis"),
    (lambda: nx.hstack(nx.asarray(1.0)), TypeError, "tup"),
    (lambda: nx.vstack([]), ValueError, "tup"),
    (lambda: nx.column_stack(5), TypeError, "tup"),
    (lambda: nx.rot90(np.ones(3)), ValueError, "m"),
    (lambda: nx.rot90(X, axes=(0, 0)), ValueError, "axes"),
    (lambda: nx.rot90(X, axes=(0, -2)), ValueError, "axes"),
    (lambda: nx.rot90(X, axes=(0,)), ValueError, "axes"),
    (lambda: nx.rot90(X, axes=(0, 2)), IndexError, "axes"),
    (lambda: nx.rot90(X, 1.5), TypeError, "k"),
    (lambda: nx.fliplr(np.ones(3)), ValueError, "m"),
    (lambda: nx.flipud(np.float32(1)), ValueError, "m"),
    (lambda: nx.diagonal(np.ones(3)), ValueError, "a"),
    (lambda: nx.diagonal(X, 0, 1, -1), ValueError, "axis1"),
    (lambda: nx.diagonal(X, 0, 0, 2), IndexError, "axis2"),
    (lambda: nx.diagonal(X, 0.5), TypeError, "offset"),
    (lambda: nx.trace(np.ones(3)), ValueError, "a"),
    (lambda: nx.array_split(X, 0), ValueError, "indices_or_sections"),
    (lambda: nx.array_split(X, 1.5), TypeError, "indices_or_sections"),
    (lambda: nx.array_split(X, [1.5]), TypeError, "indices_or_sections"),
    (lambda: nx.split(X, 1.5), TypeError, "sections"),
    (lambda: nx.split(X, 4), ValueError, "sections"),
    (lambda: nx.split(X, True), TypeError, "sections"),
    (lambda: nx.diff(X, -1), ValueError, "n"),
    (lambda: nx.diff(np.float32(1)), ValueError, "a"),
    (lambda: nx.diff(X, prepend=np.ones((3, 1))), ValueError, "tensors"),
    (lambda: nx.diff(X, axis=2), IndexError, "axis"),
    (lambda: nx.diff(X, 1.5), TypeError, "n"),
    (lambda: nx.vecdot(X, X, axis=1.0), TypeError, "axis"),
    (lambda: nx.ediff1d(np.ones(3, bool)), TypeError, "ary"),
    (lambda: nx.ediff1d(np.ones(3, np.int32), to_begin=1.5), TypeError, "to_begin"),
    (lambda: nx.ediff1d(np.ones(3, np.int32), to_end=np.ones(1)), TypeError, "to_end"),
    (lambda: nx.select([X > 1], [X, X]), ValueError, "condlist"),
    (lambda: nx.select([], []), ValueError, "condlist"),
    (lambda: nx.select([X], [X]), TypeError, "condlist"),
    (lambda: nx.select([X > 1], [np.ones(4)]), ValueError, "broadcast"),
    (lambda: nx.interp(1.0, [], []), ValueError, "xp"),
    (lambda: nx.interp(1.0, [0.0, 1.0], [1.0]), ValueError, "xp, fp"),
    (lambda: nx.interp(1.0, X, X), ValueError, "xp, fp"),
    (lambda: nx.interp(1j, [0.0, 1.0], [1.0, 2.0]), TypeError, "x, xp"),
    (lambda: nx.polyval(X, 1.0), ValueError, "p"),
    (lambda: nx.tensordot(X, X, 1), ValueError, "axes"),
    (lambda: nx.tensordot(X, X.T, axes=-1), ValueError, "axes"),
    (lambda: nx.tensordot(X, X.T, axes=3), ValueError, "axes"),
    (lambda: nx.tensordot(X, X.T, axes=1.0), TypeError, "axes"),
    (lambda: nx.tensordot(X, X.T, axes=([0, 1], [1])), ValueError, "axes"),
    (lambda: nx.tensordot(X, X.T, axes=([0, 0], [1, 1])), ValueError, "axes"),
    (lambda: nx.tensordot(X, X.T, axes=([0], [1], [2])), ValueError, "axes"),
    (lambda: nx.tensordot(X, X.T, axes=([2], [0])), IndexError, "axes"),
    (lambda: nx.vecdot(X, np.ones((2, 4))), ValueError, "axis"),
    (lambda: nx.vecdot(np.ones(3), np.ones((3, 1))), ValueError, "axis"),
    (lambda: nx.vecdot(np.float32(1), np.ones(3)), ValueError, "vecdot"),
    (lambda: nx.vecdot(X, np.ones(3), axis=1), IndexError, "axis"),
    (lambda: nx.vecdot(X, np.ones(3), axis=-2), IndexError, "axis"),
    (lambda: nx.vdot(X, np.ones(5)), ValueError, "vdot"),
    (lambda: nx.cross(np.ones(4), np.ones(3)), ValueError, "cross"),
    (lambda: nx.cross(np.ones(3, bool), np.ones(3, bool)), TypeError, "cross"),
    (lambda: nx.cross(np.ones((2, 3)), np.ones((4, 3))), ValueError, "broadcast"),
    (lambda: nx.cross(X, X, axisa=3), IndexError, "axisa"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_input(case):
    fn, exc, match = BAD[case]
    with pytest.raises(exc, match=match):
        fn()


def test_repeat_refuses_traced_counts():
    class Opaque(ArrayBase):   # an array value that does not reveal its values
        shape, dtype = (2,), np.dtype(np.int32)

    with pytest.raises(TypeError, match="repeats"):
        nx.repeat(np.ones(2), Opaque())


@pytest.mark.parametrize("repeats", [2**64, [1, 2**70, 1], -2**64])
def test_repeat_counts_past_64_bits_raise_value_error(repeats):
    with pytest.raises(ValueError, match="repeats: .* does not fit in a 64-bit integer"):
        nx.repeat(nx.arange(3.0), repeats)
