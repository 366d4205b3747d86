"""Issue 2: Buffer (every dtype, alignment, zero-copy, lifetime) and the View algebra (O(1)
movement ops, exact composition laws, every error path)."""
import gc
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from nx_rune._kernels.buffer import Buffer, buffer_from_ndarray, check_dtype
from nx_rune._kernels.view import View, c_strides, materialize

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
SETTINGS = settings(deadline=None, max_examples=60)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0, 100, shape).astype(dt)
    vals = rng.standard_normal(shape)
    if dt.kind == "c":
        vals = vals + 1j * rng.standard_normal(shape)
    return vals.astype(dt)


# -- Buffer ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_buffer_every_dtype(dtype):
    dt = np.dtype(dtype)
    buf = Buffer(37, dt, True)
    assert buf.size == 37 and buf.dtype == dt and buf.itemsize == dt.itemsize
    assert buf.nbytes == 37 * dt.itemsize
    arr = buf.as_ndarray((37,), (1,), 0)
    assert arr.dtype == dt and arr.shape == (37,)
    assert not arr.any()                     # zero=True gives zeros
    vals = sample((37,), dt)
    arr[...] = vals
    np.testing.assert_array_equal(buf.as_ndarray((37,), (1,), 0), vals)
    # a strided window of the same memory
    np.testing.assert_array_equal(buf.as_ndarray((12,), (3,), 1), vals[1::3])


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_roundtrip_every_dtype(dtype):
    vals = sample((3, 5), dtype)
    t = nx.asarray(vals)
    assert t.dtype == np.dtype(dtype) and t.shape == (3, 5)
    np.testing.assert_array_equal(t.numpy(), vals)
    np.testing.assert_array_equal(nx.copy(t).numpy(), vals)
    np.testing.assert_array_equal(nx.flip(t, 1).numpy(), vals[:, ::-1])
    np.testing.assert_array_equal(nx.contiguous(t.T).numpy(), vals.T)
    np.testing.assert_array_equal(nx.pad(t, 1).numpy(), np.pad(vals, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [0, 1, 3, 64, 1001])
def test_alignment_of_own_allocations(dtype, size):
    assert Buffer(size, dtype).address % 64 == 0
    assert Buffer(size, dtype, True).address % 64 == 0
    for t in (nx.zeros((size,), dtype), nx.empty((size,), dtype)):
        assert t.buffer.address % 64 == 0
    src = nx.asarray(sample((size, 2), dtype))
    assert nx.copy(src.T).buffer.address % 64 == 0
    if size:
        assert np.asarray(nx.zeros((size,), dtype)).ctypes.data % 64 == 0


def test_buffer_rejects_bad_arguments():
    with pytest.raises(ValueError, match="size"):
        Buffer(-1, np.float32)
    with pytest.raises(TypeError, match="dtype"):
        Buffer(3, np.dtype("U3"))
    with pytest.raises(TypeError, match="dtype"):
        check_dtype(object)
    with pytest.raises(MemoryError, match="size"):
        Buffer(2**62, np.float64)
    with pytest.raises(ValueError, match="C-contiguous"):
        buffer_from_ndarray(np.zeros((4, 4))[:, ::2])
    with pytest.raises(TypeError, match="arr"):
        buffer_from_ndarray([1, 2, 3])


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_copy_from_numpy(dtype):
    arr = sample((4, 6), dtype)
    t = nx.asarray(arr)
    assert np.shares_memory(np.asarray(t), arr)
    assert np.shares_memory(t.numpy(), arr)
    assert t.buffer.address == arr.ctypes.data
    # a C-contiguous slice is wrapped without copying too
    sub = arr[1:3]
    assert np.shares_memory(np.asarray(nx.asarray(sub)), sub)


def test_asarray_copies_when_it_must():
    arr = np.arange(12.0).reshape(3, 4)
    assert not np.shares_memory(np.asarray(nx.asarray(arr.T)), arr)  # not C-contiguous
    assert not np.shares_memory(np.asarray(nx.array(arr)), arr)      # array always copies
    big_endian = arr.astype(">f8")
    t = nx.asarray(big_endian)
    assert t.dtype == np.float64 and t.dtype.isnative
    np.testing.assert_array_equal(t.numpy(), arr)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_copy_to_numpy(dtype):
    t = nx.copy(nx.asarray(sample((5, 3), dtype)))     # our own, aligned buffer
    a1, a2 = np.asarray(t), np.asarray(t)
    assert np.shares_memory(a1, a2)
    assert a1.ctypes.data == t.buffer.address
    raw = np.frombuffer(t.buffer, dtype=np.uint8)       # the buffer protocol: same bytes
    assert np.shares_memory(raw, a1)
    # views of a tensor are ndarray views of the same memory
    assert np.shares_memory(np.asarray(t.T), a1)
    assert np.shares_memory(np.asarray(t[::-1, 1:]), a1)


def test_lifetime_ndarray_outlives_tensor():
    t = nx.copy(nx.arange(1000, dtype=nx.float64))
    arr = np.asarray(t)
    view = np.asarray(t[10:20])
    del t
    gc.collect()
    junk = [np.ones(1000) for _ in range(50)]  # reuse freed memory, if it were freed
    gc.collect()
    np.testing.assert_array_equal(arr, np.arange(1000.0))
    np.testing.assert_array_equal(view, np.arange(10.0, 20.0))
    del junk


def test_lifetime_tensor_outlives_ndarray():
    arr = np.arange(500, dtype=np.int64)
    t = nx.asarray(arr)
    v = t[100:200:3]
    del arr
    gc.collect()
    _ = [np.zeros(500, np.int64) for _ in range(50)]
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), np.arange(500))
    np.testing.assert_array_equal(v.numpy(), np.arange(100, 200, 3))


def test_lifetime_views_keep_buffer():
    t = nx.copy(nx.arange(60, dtype=nx.int32).reshape(3, 4, 5))
    views = [nx.transpose(t), nx.flip(t, 1), nx.pad(t, 1), t[1:, ::2],
             nx.broadcast_to(t[:1], (4, 4, 5))]
    expected = [np.asarray(v).copy() for v in views]
    del t
    gc.collect()
    for v, e in zip(views, expected):
        np.testing.assert_array_equal(v.numpy(), e)


# -- View ops are O(1): no data moves ----------------------------------------------------------

def _movement_results(t):
    return {
        "reshape": nx.reshape(t, (4, 3, 5)),
        "reshape_-1": nx.reshape(t, (-1,)),
        "broadcast_to": nx.broadcast_to(t[:, :1], (3, 4, 5)),
        "expand_dims": nx.expand_dims(t, 1),
        "squeeze": nx.squeeze(nx.expand_dims(t, 0)),
        "transpose": nx.transpose(t),
        "permute": nx.permute(t, (1, 2, 0)),
        "moveaxis": nx.moveaxis(t, 0, -1),
        "swapaxes": nx.swapaxes(t, 0, 2),
        "shrink": nx.shrink(t, ((1, 3), (0, 2), (2, 5))),
        "flip": nx.flip(t),
        "flip_axis": nx.flip(t, 1),
        "as_strided": nx.as_strided(t, (5, 3), (2, 7), 1),
        "slice": t[1:, ::-2, 1::2],
        "index": t[1, :, None, 3],
        "split": nx.split(t, 2, axis=1)[1],
        "contiguous": nx.contiguous(t),
    }


def test_movement_ops_move_no_data():
    t = nx.copy(nx.arange(60, dtype=nx.float32).reshape(3, 4, 5))
    for name, r in _movement_results(t).items():
        assert r.buffer is t.buffer, name
        assert nx.shares_memory(r, t), name
        assert np.shares_memory(np.asarray(r), np.asarray(t)), name


def test_pad_is_a_masked_view_until_read():
    t = nx.copy(nx.arange(12, dtype=nx.float32).reshape(3, 4))
    p = nx.pad(t, ((1, 2), (0, 3)), constant_values=7)
    assert p.buffer is t.buffer and p.view.mask is not None
    assert not nx.is_contiguous(p)
    back = nx.shrink(p, ((1, 4), (0, 4)))
    assert back.buffer is t.buffer and back.view.mask is None and nx.is_contiguous(back)
    np.testing.assert_array_equal(p.numpy(), np.pad(np.arange(12.0).reshape(3, 4),
                                                    ((1, 2), (0, 3)), constant_values=7))


def test_view_ops_are_constant_time():
    """A movement op on a 64 MiB tensor costs what it costs on a tiny one (no copy)."""
    import time
    big = nx.zeros((4096, 4096), nx.float32)
    small = nx.zeros((2, 2), nx.float32)

    def cost(t):
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20):
                nx.flip(nx.pad(nx.transpose(t), 1), 0)
            best = min(best, time.perf_counter() - t0)
        return best
    assert cost(big) < 20 * cost(small) + 1e-3


# -- exact composition laws ------------------------------------------------------------------------

shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)


def _exact(v):
    return (v.shape, v.strides, v.offset, v.mask)


@st.composite
def views(draw):
    """A view over a buffer: contiguous, then some of permute / flip / shrink / expand."""
    shape = draw(shapes)
    v = View.contiguous(shape, draw(st.integers(0, 3)))
    if v.ndim and draw(st.booleans()):
        v = v.permute(draw(st.permutations(range(v.ndim))))
    if v.ndim and draw(st.booleans()):
        v = v.flip(draw(st.lists(st.integers(0, v.ndim - 1), unique=True)))
    if v.ndim and draw(st.booleans()):
        lim = []
        for n in v.shape:
            a = draw(st.integers(0, n))
            lim.append((a, draw(st.integers(a, n))))
        v = v.shrink(lim)
    return v


@SETTINGS
@given(v=views(), data=st.data())
def test_law_shrink_undoes_pad(v, data):
    cfg = [(data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))) for _ in v.shape]
    p = v.pad(cfg, 0.5)
    inverse = [(b, b + n) for (b, _), n in zip(cfg, v.shape)]
    back = p.shrink(inverse)
    assert back.mask is None
    assert back.shape == v.shape and back.offset == v.offset
    assert back.strides == v.strides
    assert back == v


@SETTINGS
@given(v=views(), data=st.data())
def test_law_flip_twice_and_inverse_permutation(v, data):
    axes = data.draw(st.lists(st.integers(0, max(v.ndim - 1, 0)), unique=True)) if v.ndim else []
    assert _exact(v.flip(axes).flip(axes)) == _exact(v)
    assert _exact(v.flip(range(v.ndim)).flip(range(v.ndim))) == _exact(v)
    p = data.draw(st.permutations(range(v.ndim)))
    inv = list(np.argsort(p))
    assert _exact(v.permute(p).permute(inv)) == _exact(v)


@SETTINGS
@given(v=views(), data=st.data())
def test_law_masked_views_compose(v, data):
    """pad then flip/permute then the inverse moves gives the padded view back, and reading any
    of them matches NumPy's pad."""
    size = max((v.extent() or (0, 0))[1] + 1, 1)
    buf = Buffer(size, np.float64)
    buf.as_ndarray((size,), (1,), 0)[...] = np.arange(size)
    base = materialize(buf, v)
    ref = base.as_ndarray(v.shape, c_strides(v.shape), 0)
    cfg = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in v.shape]
    p = v.pad(cfg, -1.0)
    got = materialize(buf, p).as_ndarray(p.shape, c_strides(p.shape), 0)
    np.testing.assert_array_equal(got, np.pad(ref, cfg, constant_values=-1) if cfg else ref)
    q = p.flip(range(p.ndim)).flip(range(p.ndim))
    assert _exact(q) == _exact(p)


# -- error paths: at the View level and through the front end --------------------------------------

def test_shrink_errors():
    v = View.contiguous((3, 4))
    with pytest.raises(ValueError, match="limits"):
        v.shrink([(-1, 2), (0, 4)])
    with pytest.raises(ValueError, match="limits"):
        v.shrink([(0, 4), (0, 4)])
    with pytest.raises(ValueError, match="limits"):
        v.shrink([(2, 1), (0, 4)])
    with pytest.raises(ValueError, match="limits"):
        v.shrink([(0, 3)])
    t = nx.zeros((3, 4))
    with pytest.raises(ValueError, match=r"limits: \(-1, 2\) for axis 0"):
        nx.shrink(t, [(-1, 2), (0, 4)])
    with pytest.raises(ValueError, match=r"limits: \(0, 5\) for axis 1"):
        nx.shrink(t, [(0, 3), (0, 5)])
    with pytest.raises(ValueError, match="limits"):
        nx.shrink(t, [(0, 3)])


def test_pad_errors():
    v = View.contiguous((3, 4))
    with pytest.raises(ValueError, match="pad_width"):
        v.pad([(0, -1), (0, 0)], 0)
    with pytest.raises(ValueError, match="pad_width"):
        v.pad([(0, 1)], 0)
    t = nx.zeros((3, 4))
    with pytest.raises(ValueError, match="pad_width: negative"):
        nx.pad(t, -1)
    with pytest.raises(ValueError, match="pad_width: negative"):
        nx.pad(t, ((0, 0), (2, -3)))
    with pytest.raises(ValueError, match="pad_width"):
        nx.pad(t, ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(TypeError, match="pad_width"):
        nx.pad(t, 1.5)
    with pytest.raises(ValueError, match="constant_values"):
        nx.pad(t, 1, constant_values=(1, 2))


def test_permute_errors():
    v = View.contiguous((2, 3, 4))
    for bad in [(0, 1), (0, 1, 1), (0, 1, 3), (0, 1, 2, 3)]:
        with pytest.raises(ValueError, match="axes.*not a permutation"):
            v.permute(bad)
    t = nx.zeros((2, 3, 4))
    for bad in [(0, 1), (0, 0, 1), (2, 1, 5)]:
        with pytest.raises(ValueError, match="axes"):
            nx.transpose(t, bad)
    with pytest.raises(ValueError, match="axes"):
        nx.permute(t, (0, 1, 1))


def test_expand_errors():
    v = View.contiguous((2, 3))
    with pytest.raises(ValueError, match="only size-1 axes expand"):
        v.expand((2, 4))
    with pytest.raises(ValueError, match="fewer dimensions"):
        v.expand((3,))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 3\)"):
        nx.broadcast_to(nx.zeros((2, 3)), (4, 3))
    with pytest.raises(ValueError, match="shape"):
        nx.broadcast_to(nx.zeros((2, 3)), (3,))


def test_reshape_errors():
    v = View.contiguous((2, 3))
    with pytest.raises(ValueError, match="shape.*6 elements"):
        v.reshape((4, 2))
    with pytest.raises(ValueError, match="negative"):
        v.reshape((-2, -3))
    t = nx.zeros((2, 3))
    with pytest.raises(ValueError, match=r"shape: cannot reshape a tensor of shape \(2, 3\)"):
        nx.reshape(t, (5,))
    with pytest.raises(ValueError, match="shape"):
        nx.reshape(t, (4, -1))
    with pytest.raises(ValueError, match="only one -1"):
        nx.reshape(t, (-1, -1))


@pytest.mark.parametrize("shape,strides,offset,pattern", [
    ((11,), (1,), 0, "strides"),                  # one past the end
    ((2,), (1,), 9, "strides"),
    ((2,), (-1,), 0, "strides"),                  # negative stride before the start
    ((3, 3), (3, -2), 2, "strides"),
    ((2,), (2**62,), 0, "strides"),               # huge stride: Python ints, no overflow
    ((2, 2), (2**63, -2**63), 3, "strides"),      # would overflow int64
    ((3,), (1,), 2**70, "offset"),                 # huge offset
    ((3,), (1,), -1, "offset"),
    ((3,), (1,), 10, "offset"),
    ((2, 2), (1,), 0, "strides"),                 # one stride for two axes
    ((-1,), (1,), 0, "shape"),
])
def test_as_strided_outside_buffer(shape, strides, offset, pattern):
    t = nx.arange(10, dtype=nx.float32)
    with pytest.raises(ValueError, match=pattern):
        nx.as_strided(t, shape, strides, offset)
    if len(shape) == len(strides) and min(shape) >= 0:
        with pytest.raises(ValueError, match=pattern):
            View.as_strided(shape, strides, offset, 10)


def test_as_strided_is_relative_to_the_tensor():
    base = nx.copy(nx.arange(20, dtype=nx.int32))
    sub = base[5:15]
    np.testing.assert_array_equal(nx.as_strided(sub, (3,), (2,)).numpy(), [5, 7, 9])
    assert nx.shares_memory(nx.as_strided(sub, (3,), (2,)), base)
    with pytest.raises(ValueError, match="outside"):   # reaching base's elements past sub
        nx.as_strided(sub, (6,), (2,))
    # huge strides on length-1 axes address nothing: fine
    np.testing.assert_array_equal(nx.as_strided(sub, (1, 2), (2**70, 1), 1).numpy(), [[6, 7]])
    # empty views are fine anywhere
    assert nx.as_strided(sub, (0, 3), (2**70, 1), 0).shape == (0, 3)


def test_axis_out_of_range_errors():
    t = nx.zeros((2, 3))
    for fn in [lambda: nx.flip(t, 2), lambda: nx.sum(t, axis=-3), lambda: nx.squeeze(t, 5),
               lambda: nx.expand_dims(t, 3), lambda: nx.moveaxis(t, 0, 2),
               lambda: nx.concatenate([t, t], axis=2), lambda: nx.stack([t, t], axis=-4),
               lambda: nx.split(t, 1, axis=2), lambda: nx.cumsum(t, axis=2),
               lambda: nx.argmax(t, axis=2), lambda: nx.softmax(t, axis=3)]:
        with pytest.raises(ValueError, match="out of range"):
            fn()
    with pytest.raises(ValueError, match="axis"):
        View.contiguous((2, 3)).flip([2])
    with pytest.raises(TypeError, match="axis"):
        nx.flip(t, 1.0)
    with pytest.raises(ValueError, match="b: axis 3"):
        nx.swapaxes(t, 0, 3)


def test_view_constructor_errors():
    with pytest.raises(ValueError, match="strides"):
        View((2, 3), (1,))
    with pytest.raises(ValueError, match="shape: negative"):
        View((2, -3), (1, 1))
    with pytest.raises(ValueError, match="mask"):
        View((2, 3), (3, 1), 0, mask=((0, 2),))
    with pytest.raises(ValueError, match="mask"):
        View((2, 3), (3, 1), 0, mask=((0, 3), (0, 3)))


def test_materialize_matches_numpy_for_all_layouts():
    arr = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)
    t = nx.asarray(arr)
    for axes in itertools.permutations(range(3)):
        for flips in [(), (0,), (1, 2), (0, 1, 2)]:
            v = nx.flip(nx.transpose(t, axes), flips) if flips else nx.transpose(t, axes)
            ref = np.flip(arr.transpose(axes), flips) if flips else arr.transpose(axes)
            c = nx.copy(v)
            assert nx.is_contiguous(c) and c.buffer is not t.buffer
            np.testing.assert_array_equal(c.numpy(), ref)


# -- strided copy fast paths: register-blocked transposes, broadcast rows ------------------------

from nx_rune._kernels import strided as KS  # noqa: E402


def _copy_view(src_arr, shape, src_strides, offset=0):
    """copy_strided of a view of src_arr (element strides) into a fresh C-contiguous Buffer,
    returned as an ndarray."""
    src = buffer_from_ndarray(np.ascontiguousarray(src_arr).reshape(-1))
    dst = Buffer(int(np.prod(shape)), src_arr.dtype)
    KS.copy_strided(src, offset, shape, src_strides, dst, 0, c_strides(shape))
    return dst.as_ndarray(tuple(shape), c_strides(shape), 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 8), (16, 16), (7, 9), (9, 7), (17, 33), (100, 37),
                                   (1, 40), (40, 1), (3, 1000)])
def test_transpose_copy_every_dtype_and_ragged_edges(dtype, shape):
    a = sample(shape, dtype, seed=sum(shape))
    np.testing.assert_array_equal(nx.contiguous(nx.asarray(a).T).numpy(), a.T)
    rows, cols = shape
    # the same through the kernel: view (cols, rows) with strides (1, cols) of a's buffer
    np.testing.assert_array_equal(_copy_view(a, (cols, rows), (1, cols)), a.T)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex128])
def test_transposes_of_batches_slices_and_flips(dtype):
    a = sample((3, 24, 40), dtype, seed=5)
    t = nx.asarray(a)
    for axes in [(0, 2, 1), (2, 1, 0), (1, 2, 0), (2, 0, 1)]:
        np.testing.assert_array_equal(nx.copy(nx.transpose(t, axes)).numpy(),
                                      a.transpose(axes))
    # strided and reversed sources take the general tiles
    np.testing.assert_array_equal(nx.copy(t[:, ::2, 1:].T).numpy(), a[:, ::2, 1:].T)
    np.testing.assert_array_equal(nx.copy(nx.flip(t, 2).T).numpy(), a[:, :, ::-1].T)
    np.testing.assert_array_equal(nx.copy(t.T[::-1]).numpy(), a.T[::-1])


def test_large_transpose_spans_several_tiles():
    a = np.random.default_rng(3).random((1031, 1537), dtype=np.float32)   # > one 512-wide tile
    np.testing.assert_array_equal(nx.contiguous(nx.asarray(a).T).numpy(), a.T)
    b = a.astype(np.float64)[:777, :901]
    np.testing.assert_array_equal(nx.contiguous(nx.asarray(b).T).numpy(), b.T)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 8, 16, 17, 100])
def test_broadcast_inner_axis_every_dtype(dtype, k):
    a = sample((6, 7), dtype, seed=k)
    t = nx.asarray(a)
    np.testing.assert_array_equal(nx.repeat(t, k).numpy(), np.repeat(a, k))
    np.testing.assert_array_equal(nx.copy(nx.broadcast_to(t[..., None], (6, 7, k))).numpy(),
                                  np.broadcast_to(a[..., None], (6, 7, k)))
    # a strided, reversed source row by row
    np.testing.assert_array_equal(
        nx.copy(nx.broadcast_to(t[::-2, 1::3, None], (3, 2, k))).numpy(),
        np.broadcast_to(a[::-2, 1::3, None], (3, 2, k)))


def test_broadcast_inner_axis_kernel_cases():
    a = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(_copy_view(a, (10, 4), (1, 0)), np.repeat(a, 4).reshape(10, 4))
    np.testing.assert_array_equal(_copy_view(a, (7,), (0,), offset=3), np.full(7, 3.0))
    np.testing.assert_array_equal(_copy_view(a, (2, 5, 3), (5, 1, 0)),
                                  np.broadcast_to(a.reshape(2, 5, 1), (2, 5, 3)))
    # a broadcast inner axis into a strided destination takes the general rows
    src = buffer_from_ndarray(a)
    dst = Buffer(24, np.float32, True)
    KS.copy_strided(src, 0, (4, 3), (1, 0), dst, 0, (6, 2))
    got = dst.as_ndarray((24,), (1,), 0)
    want = np.zeros(24, np.float32)
    want.reshape(4, 6)[:, ::2] = np.arange(4, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(got, want)
