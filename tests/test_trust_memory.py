"""Memory trust (issue 26, "Memory").

* Memory that a View cannot address as whole items (a byte offset inside another tensor's memory
  that is not a multiple of the item size, misaligned data, byte strides that are not whole
  items, byte-swapped data) is either addressed exactly (zero-copy, writes reach the source) or
  copied (nx.asarray's documented rule: misaligned memory is copied, copy=False raises); never
  addressed at a neighbouring element.
* 0-d results that NumPy returns as scalars (reductions, x[i], dot, det, norm, ...) are values:
  the in-place operators rebind them (``n += 4`` leaves ``keep = n`` alone), while 0-d arrays
  made explicitly (asarray, array, zeros, full, copy) and 0-d views keep NumPy's in-place
  meaning.
* set_num_threads(k) bounds the threads that work on a call, whatever count ran before.
* Sizes and offsets that overflow a machine integer raise ValueError naming the argument.

Expected values come from NumPy.
"""
import operator
import pickle

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import pool
from nx_rune._kernels.buffer import addressable, buffer_from_ndarray
from nx_rune._kernels.view import View
from nx_rune.tensor import Tensor


def _addr(a):
    return a.__array_interface__["data"][0]


# -- 1. memory at odd byte offsets, misaligned, odd strides, byte-swapped ----------------------

@pytest.mark.parametrize("dtype, byte_offset", [
    (np.complex128, 8),    # aligned for complex128 (8), half an item into the buffer
    (np.complex64, 4),
    (np.complex128, 24),
])
def test_aligned_view_at_a_partial_item_offset_of_tensor_memory_is_addressed_exactly(
        dtype, byte_offset):
    isz = np.dtype(dtype).itemsize
    x = nx.zeros(8, dtype)                       # memory of one of our Buffers
    raw = x.numpy().view(np.uint8)
    b = raw[byte_offset:byte_offset + 5 * isz].view(dtype)
    b[...] = np.arange(1, 6) * (1 + 2j)          # written through NumPy, in x's memory
    want = b.copy()
    t = nx.asarray(b)
    assert np.shares_memory(t.numpy(), b)        # zero-copy: NumPy's asarray semantics
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(nx.pad(t, 2).numpy(), np.pad(want, 2))
    np.testing.assert_array_equal(nx.flip(t, 0).numpy(), want[::-1])
    np.testing.assert_array_equal(nx.contiguous(t[::2]).numpy(), want[::2])
    assert t.buffer.address + t.view.offset * isz == _addr(b)
    t[1] = 100 - 7j                              # lands on b[1], nowhere else
    want[1] = 100 - 7j
    np.testing.assert_array_equal(b, want)
    before = raw.copy()
    t[3:] += 1
    want[3:] += 1
    np.testing.assert_array_equal(b, want)
    changed = np.nonzero(raw != before)[0]
    assert changed.min() >= byte_offset + 3 * isz and changed.max() < byte_offset + 5 * isz


def test_misaligned_view_inside_tensor_memory_is_copied_and_writes_stay_in_the_copy():
    x = nx.zeros(8, nx.float32)
    raw = x.numpy().view(np.uint8)
    b = raw[2:30].view(np.float32)               # 7 float32 starting 2 bytes in
    b[...] = np.arange(7, dtype=np.float32) + 0.5
    want = b.copy()
    assert not addressable(b)
    t = nx.asarray(b)
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(nx.pad(t, 1).numpy(), np.pad(want, 1))
    np.testing.assert_array_equal(nx.pad(t, 1, constant_values=-1.0).numpy(),
                                  np.pad(want, 1, constant_values=-1.0))
    before = raw.copy()
    t[0] = 1.0
    t += 2.0
    np.testing.assert_array_equal(raw, before)   # neither x nor b is written
    np.testing.assert_array_equal(t.numpy(), np.concatenate([[1.0], want[1:]]) + 2.0)
    with pytest.raises(ValueError, match="misaligned"):
        nx.asarray(b, copy=False)


def test_frombuffer_at_odd_offset_values_and_copy_rule():
    data = bytearray(np.arange(6, dtype=np.float32).tobytes() + b"\0\0")
    src = np.frombuffer(data, np.float32, offset=2, count=5)
    src_vals = src.copy()
    t = nx.asarray(src)
    np.testing.assert_array_equal(t.numpy(), src_vals)
    np.testing.assert_array_equal(nx.sum(t), np.sum(src_vals))
    np.testing.assert_array_equal(nx.pad(t, (1, 2)).numpy(), np.pad(src_vals, (1, 2)))
    t[2] = 42.0
    np.testing.assert_array_equal(src, src_vals)   # copied (documented): the source keeps its
    with pytest.raises(ValueError, match="copy=False"):
        nx.asarray(src, copy=False)
    with pytest.raises(ValueError, match="misaligned"):
        nx.from_dlpack(src, copy=False)
    np.testing.assert_array_equal(nx.from_dlpack(src).numpy(), src_vals)


def test_structured_fields_and_odd_byte_strides():
    packed = np.zeros(5, dtype=[("a", "u1"), ("f", "<f4"), ("c", "<c8")])   # itemsize 13
    packed["f"] = np.arange(5) * 1.25
    packed["c"] = np.arange(5) * (1 - 1j)
    for field in ("f", "c"):
        a = packed[field]
        want = a.copy()
        t = nx.asarray(a)
        np.testing.assert_array_equal(t.numpy(), want)
        np.testing.assert_array_equal(nx.pad(t, 1).numpy(), np.pad(want, 1))
        np.testing.assert_array_equal((t * 2).numpy(), want * 2)
    aligned = np.zeros(4, dtype=np.dtype([("a", "u1"), ("f", "<f4")], align=True))
    aligned["f"] = [1, 2, 3, 4]
    np.testing.assert_array_equal(nx.asarray(aligned["f"]).numpy(), [1, 2, 3, 4])
    # a byte view reinterpreted at an odd start with odd row strides
    bytes2d = np.arange(4 * 7, dtype=np.uint8).reshape(4, 7)
    odd = bytes2d[:, 1:5].view(np.float32)       # shape (4, 1), strides (7, 4)
    np.testing.assert_array_equal(nx.asarray(odd).numpy(), odd)
    np.testing.assert_array_equal(nx.pad(nx.asarray(odd), 1).numpy(), np.pad(odd, 1))
    # strides of whole bytes but not whole items (as_strided over a float32 array)
    base = np.arange(12, dtype=np.float32)
    weird = np.lib.stride_tricks.as_strided(base, (3,), (6,))
    want = weird.copy()
    t = nx.asarray(weird)
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(nx.pad(t, 1).numpy(), np.pad(want, 1))


def test_internal_wrap_of_unaddressable_memory_copies():
    base = np.arange(12, dtype=np.float32)
    weird = np.lib.stride_tricks.as_strided(base, (3,), (6,))
    want = weird.copy()
    t = Tensor._wrap(weird)
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(nx.pad(t, 1).numpy(), np.pad(want, 1))
    assert t.view.strides == (1,)
    t[0] = -1.0
    np.testing.assert_array_equal(base, np.arange(12, dtype=np.float32))


def test_size_one_axes_with_odd_strides_stay_shared():
    base = np.zeros(8, np.float32)
    a = np.lib.stride_tricks.as_strided(base, (1, 4), (3, 4))   # C-contiguous, aligned
    t = nx.asarray(a)
    assert np.shares_memory(t.numpy(), base)
    t[0, 2] = 7.0
    assert base[2] == 7.0
    np.testing.assert_array_equal(nx.pad(t, 1).numpy(), np.pad(a, 1))


def test_byte_swapped_memory_is_converted():
    be = (np.arange(5) * 1.5).astype(">f8")
    assert not be.dtype.isnative
    t = nx.asarray(be)
    assert t.dtype == np.float64 and t.dtype.isnative
    np.testing.assert_array_equal(t.numpy(), be.astype("<f8"))
    np.testing.assert_array_equal(nx.pad(t, 1).numpy(), np.pad(be.astype("<f8"), 1))
    with pytest.raises(ValueError, match="copy=False"):
        nx.asarray(be, copy=False)


def test_buffer_level_checks():
    good = np.zeros(4, np.float64)
    assert addressable(good)
    mis = np.frombuffer(bytearray(40), np.float64, offset=4, count=4)
    assert not addressable(mis)
    with pytest.raises(ValueError, match="arr: .*not aligned"):
        buffer_from_ndarray(mis)
    assert not addressable(np.lib.stride_tricks.as_strided(good, (2,), (12,)))
    assert not addressable(np.zeros(3, ">f4"))
    with pytest.raises(TypeError, match="arr"):
        addressable([1.0])


def test_unpickled_tensor_of_misaligned_memory_reads_its_values():
    src = np.frombuffer(bytearray(36), np.float32, offset=2, count=8)
    t = nx.asarray(src) + 1.0
    back = pickle.loads(pickle.dumps(t, protocol=5))
    np.testing.assert_array_equal(back.numpy(), np.ones(8, np.float32))
    np.testing.assert_array_equal(nx.pad(back, 1).numpy(), np.pad(np.ones(8, np.float32), 1))


# -- 2. 0-d values and 0-d arrays under the in-place operators -------------------------------

A = np.array([1.5, -2.0, 3.25, 4.0])
M = np.array([[2.0, 1.0], [0.5, 3.0]])
I = np.array([3, 5, 7, 9], dtype=np.int32)

VALUES = [   # (name, nx result, NumPy's scalar)
    ("prod", lambda: nx.prod(nx.asarray(A)), lambda: np.prod(A)),
    ("sum", lambda: nx.sum(nx.asarray(A)), lambda: np.sum(A)),
    ("method sum", lambda: nx.asarray(A).sum(), lambda: A.sum()),
    ("mean", lambda: nx.mean(nx.asarray(A)), lambda: np.mean(A)),
    ("max", lambda: nx.max(nx.asarray(A)), lambda: np.max(A)),
    ("min", lambda: nx.asarray(A).min(), lambda: A.min()),
    ("var", lambda: nx.var(nx.asarray(A)), lambda: np.var(A)),
    ("x[i]", lambda: nx.asarray(A)[2], lambda: A[2]),
    ("x[np.int64]", lambda: nx.asarray(A)[np.int64(-1)], lambda: A[np.int64(-1)]),
    ("m[i, j]", lambda: nx.asarray(M)[1, 0], lambda: M[1, 0]),
    ("m[i][j]", lambda: nx.asarray(M)[1][0], lambda: M[1][0]),
    ("dot", lambda: nx.dot(nx.asarray(A), nx.asarray(A)), lambda: np.dot(A, A)),
    ("matmul", lambda: nx.asarray(A) @ nx.asarray(A), lambda: A @ A),
    ("vdot", lambda: nx.vdot(nx.asarray(A), nx.asarray(A)), lambda: np.vdot(A, A)),
    ("det", lambda: nx.linalg.det(nx.asarray(M)), lambda: np.linalg.det(M)),
    ("norm", lambda: nx.linalg.norm(nx.asarray(A)), lambda: np.linalg.norm(A)),
    ("trace", lambda: nx.trace(nx.asarray(M)), lambda: np.trace(M)),
    ("value + value", lambda: nx.sum(nx.asarray(A)) * nx.max(nx.asarray(A)),
     lambda: np.sum(A) * np.max(A)),
    ("ufunc of a 0-d array", lambda: nx.exp(nx.asarray(np.array(0.5))),
     lambda: np.exp(np.array(0.5))),
    ("0-d[()]", lambda: nx.asarray(np.array(2.5))[()], lambda: np.array(2.5)[()]),
]


@pytest.mark.parametrize("name, make, ref", VALUES, ids=[v[0] for v in VALUES])
def test_scalar_results_are_rebound_by_inplace_operators(name, make, ref):
    want = ref()
    assert np.ndim(want) == 0 and not isinstance(want, np.ndarray)   # NumPy gives a scalar
    n = make()
    keep = n
    n += 4
    assert float(keep) == pytest.approx(float(want), rel=1e-12)   # keep is unchanged
    assert float(n) == pytest.approx(float(want + 4), rel=1e-12)
    n *= 2
    assert float(keep) == pytest.approx(float(want), rel=1e-12)
    assert float(n) == pytest.approx(float((want + 4) * 2), rel=1e-12)


OPS = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
       operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor,
       operator.ilshift, operator.irshift]


@pytest.mark.parametrize("op", OPS, ids=[o.__name__ for o in OPS])
def test_every_inplace_operator_rebinds_an_integer_reduction(op):
    x = nx.asarray(I)
    n = nx.sum(x)
    keep = n
    r = op(n, 3)
    assert int(keep) == int(np.sum(I))
    assert r is not keep
    np.testing.assert_allclose(np.asarray(r), op(np.sum(I), 3))
    np.testing.assert_array_equal(x.numpy(), I)


def test_scalar_index_is_not_a_write_alias_but_setitem_still_writes():
    x = nx.asarray(A.copy())
    v = x[1]
    v += 10
    np.testing.assert_array_equal(x.numpy(), A)         # x[1] is a value, as NumPy's scalar
    assert float(v) == A[1] + 10
    x[1] += 10                                         # one increment: setitem of x[1] + 10
    want = A.copy()
    want[1] += 10
    np.testing.assert_array_equal(x.numpy(), want)


ARRAYS = [   # (name, maker of (0-d tensor, a reader of the memory that must see the write))
    ("asarray(ndarray)", lambda: (lambda a: (nx.asarray(a), lambda: a[()]))(np.array(5.0))),
    ("asarray(float)", lambda: (lambda t: (t, lambda: float(t)))(nx.asarray(5.0))),
    ("array", lambda: (lambda t: (t, lambda: float(t)))(nx.array(5.0))),
    ("zeros", lambda: (lambda t: (t, lambda: float(t)))(nx.zeros(()))),
    ("full", lambda: (lambda t: (t, lambda: float(t)))(nx.full((), 5.0))),
    ("copy", lambda: (lambda t: (t, lambda: float(t)))(nx.copy(nx.sum(nx.asarray(A))))),
    ("reshape view", lambda: (lambda x: (x.reshape(()), lambda: float(x[0])))(nx.zeros(1))),
    ("nx.reshape view", lambda: (lambda x: (nx.reshape(x, ()), lambda: float(x[0])))(
        nx.zeros(1))),
    ("squeeze view", lambda: (lambda x: (nx.squeeze(x), lambda: float(x[0, 0])))(
        nx.zeros((1, 1)))),
    ("ellipsis view", lambda: (lambda z: (z[...], lambda: float(z)))(nx.zeros(()))),
]


@pytest.mark.parametrize("name, make", ARRAYS, ids=[a[0] for a in ARRAYS])
def test_explicit_zero_d_arrays_and_views_are_written_in_place(name, make):
    t, read = make()
    before = read()
    keep = t
    t += 3
    assert t is keep                                   # written in place, as NumPy's 0-d arrays
    assert read() == before + 3


def test_numpy_zero_d_array_is_shared_and_written():
    a = np.array(2.0)
    t = nx.asarray(a)
    t += 1.5
    assert a[()] == 3.5                                # np.asarray(a) is a: += writes into a


# -- 3. set_num_threads lowers the number of threads that work --------------------------------

def test_set_num_threads_bounds_the_working_threads_after_a_larger_count():
    saved = pool.get_num_threads()
    try:
        pool.set_num_threads(6)
        started = pool._probe_threads(96, sleep_us=2000)
        assert started >= 3                          # workers exist beyond the lower count
        for k in (2, 1, 3):
            pool.set_num_threads(k)
            for _ in range(3):
                assert pool._probe_threads(48, sleep_us=2000) <= k
        pool.set_num_threads(1)
        assert pool._probe_threads(16, sleep_us=0) == 1
    finally:
        pool.set_num_threads(saved)


def test_kernel_results_do_not_depend_on_the_thread_count():
    saved = pool.get_num_threads()
    key = nx.random.key(7)
    try:
        pool.set_num_threads(6)
        wide = np.asarray(nx.random.bits(key, (1 << 18,)))
        pool.set_num_threads(1)
        narrow = np.asarray(nx.random.bits(key, (1 << 18,)))
    finally:
        pool.set_num_threads(saved)
    np.testing.assert_array_equal(wide, narrow)


# -- 4. sizes and offsets beyond a machine integer ----------------------------------------------

def _far_strided():
    return nx.as_strided(nx.zeros(2**20), (2,), (2**19,))


def test_pad_of_huge_stride_view_raises_value_error_naming_pad_width():
    v = _far_strided()
    for width in (2**44, 2**50, (0, 2**45)):
        with pytest.raises(ValueError, match="pad_width"):
            nx.pad(v, width)


def test_large_valid_pad_then_flip_and_shrink_stay_exact():
    v = nx.as_strided(nx.asarray(np.arange(2**20, dtype=np.float32)), (2,), (2**19,))
    p = nx.pad(v, 2**40)                         # positions up to 2**59: addressable
    assert p.shape == (2 + 2**41,)
    f = nx.flip(p, 0)
    back = nx.shrink(f, [(2**40, 2**40 + 2)])
    np.testing.assert_array_equal(back.numpy(), [2.0**19, 0.0])


@pytest.mark.parametrize("name, call", [
    ("start, stop, step", lambda: nx.arange(0, 2**70)),
    ("start, stop, step", lambda: nx.arange(2**70, 0, -1)),
    ("shape", lambda: nx.reshape(nx.zeros((0,), nx.float64), (2, 2**61, 0))),
    ("shape", lambda: nx.reshape(nx.zeros((0,), nx.float32), (4, 2**61, 0))),
    ("shape", lambda: nx.as_strided(nx.zeros((0,)), (2**62, 0), (1, 1))),
    ("pad_width", lambda: nx.pad(nx.zeros((0, 1)), ((0, 0), (2**62, 0)))),
    ("repetitions", lambda: nx.tile(nx.zeros((1,)), (2**63 - 1, 0))),
    ("shape", lambda: nx.broadcast_to(nx.zeros((1,)), (2**64, 2))),
    ("arrays", lambda: nx.concatenate([nx.zeros((2**59, 0), nx.float32)] * 4)),
    ("shape", lambda: nx.zeros((2**62, 4))),
    ("shape", lambda: nx.empty((2**40, 2**40))),
    ("shape", lambda: nx.ones((2**62, 0), nx.float64)),
    ("shape", lambda: nx.full((2**40, 2**40), 1.0)),
    ("repetitions", lambda: nx.tile(nx.arange(10.0), 2**62)),
    ("repeats", lambda: nx.repeat(nx.arange(10.0), 2**62)),
    ("strides", lambda: nx.as_strided(nx.arange(10.0), (2,), (2**64,))),
    ("offset", lambda: nx.as_strided(nx.arange(10.0), (1,), (1,), 2**64)),
    ("pad_width", lambda: nx.pad(nx.arange(10.0), 2**63)),
    ("pad_width", lambda: nx.pad(nx.arange(10.0), ((2**64, 0),))),
    ("pad_width", lambda: nx.pad(nx.arange(10.0), -2**64)),
])
def test_oversized_shapes_raise_value_error_naming_the_argument(name, call):
    with pytest.raises(ValueError, match=f"^{name}:"):
        call()


def test_view_offsets_beyond_a_machine_integer_name_the_offset():
    with pytest.raises(ValueError, match="offset"):
        View((2,), (1,), 2**64)
    with pytest.raises(ValueError, match="offset"):
        View.contiguous((2,), -2**63 - 1)
    with pytest.raises(TypeError, match="offset"):
        View((2,), (1,), 1.5)
