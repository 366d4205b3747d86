"""``x[idx] = v``, the in-place operators, and write tracking.

Concrete tensors are written in place and compared with NumPy doing the same write; tracers
are rebound to ``x.at[idx].set(v)`` and differentiated (checked against float64 central
finite differences of the same function run eagerly on fresh copies); a value that a recorded
operation needs and that is overwritten afterwards makes the backward pass raise.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from nx_rune import writes
from nx_rune.autodiff import ModifiedInPlaceError
from nx_rune.frontend.indexing import ValueOverflowError


def t64(a):
    """A fresh float64 tensor with its own memory."""
    return nx.asarray(np.array(a, dtype=np.float64))


def fresh(a):
    """A tensor with its own copy of ``a``'s values (a write never reaches ``a``)."""
    return nx.asarray(np.array(a, copy=True))


def fd_grad(f, x, eps=1e-6):
    """Central differences of scalar f at the float64 ndarray x; each call gets a fresh copy
    (f may write into its argument)."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros(x.size)
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        hi = float(f(t64((x.reshape(-1) + e).reshape(x.shape))))
        lo = float(f(t64((x.reshape(-1) - e).reshape(x.shape))))
        g[k] = (hi - lo) / (2 * eps)
    return g.reshape(x.shape)


def fd_hessian(f, x, eps=1e-4):
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    H = np.zeros((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = eps
        gp = np.asarray(nx.grad(f)(t64((x.reshape(-1) + e).reshape(x.shape)))).reshape(-1)
        gm = np.asarray(nx.grad(f)(t64((x.reshape(-1) - e).reshape(x.shape)))).reshape(-1)
        H[:, k] = (gp - gm) / (2 * eps)
    return H


# -- concrete tensors: the same writes as NumPy --------------------------------------------------

A = np.arange(24).reshape(2, 3, 4)

# (index, value) pairs, value broadcastable to A[index]
CASES = [
    (1, 7),
    (-1, 5),
    ((0, 2), [1, 2, 3, 4]),
    ((1, -1, -2), 9),
    (slice(None), 3),
    (slice(None, None, -1), A[::-1] * 2),
    ((slice(None), slice(None, None, 2)), 4),
    ((slice(None), slice(2, None, -2), slice(1, 4, 2)), [[8], [9]]),
    ((slice(None), slice(None, None, 7)), 6),          # a step longer than the axis
    ((Ellipsis, 1), [[1, 2, 3], [4, 5, 6]]),
    ((0, Ellipsis), 0),
    ((None, 1, None), 2),
    ((), A + 100),
    (Ellipsis, [1, 2, 3, 4]),
    ([1, 0], 7),
    (np.array([[1], [0]]), 3),
    ((slice(None), [2, 0, 2]), [[1, 2, 3, 4]]),         # duplicates: the last write wins
    ((0, [0, 2], [3, 1]), [10, 20]),
    (([0, 1, 1], slice(None), [3, 0, 2]), 5),            # advanced indices not adjacent
    ((slice(None), [[0], [2]], [1, 3]), -1),             # index arrays broadcast together
    ((1, slice(None), [-1, -4]), [[1], [2]]),            # int + array apart: S comes first
    (A % 3 == 0, -5),
    ((A[:, :, 0] > 5), np.arange(4)),                     # a 2-d mask over the first axes
    ((slice(None), np.array([True, False, True])), 1),
    ((1, np.array([True, False, True]), slice(1, 3)), [[7, 8], [9, 10]]),
    (True, A[None] * 3),
    (False, 1),
    (np.array([], dtype=np.int64), 1),
    ((np.int64(1), np.int32(2)), 4),
    ((nx.asarray(np.array([1, 0])), 1), 9),
    ((nx.asarray(np.array(1, dtype=np.int32)),), 8),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "int64", "uint8",
                                   "complex64", "bool"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_setitem_matches_numpy(case, dtype):
    index, value = CASES[case]
    want = A.astype(dtype)
    x = fresh(want)
    np_index = tuple(np.asarray(i) if isinstance(i, nx.Tensor) else i
                     for i in (index if isinstance(index, tuple) else (index,)))
    try:
        want[np_index] = value
    except OverflowError:          # -1 into uint8: NumPy refuses the Python integer, as we do
        with pytest.raises(OverflowError):
            x[index] = value
        return
    x[index] = value
    np.testing.assert_array_equal(np.asarray(x), want)
    assert x.dtype == want.dtype


VIEW_CASES = [
    (0, 1.5),
    ((slice(None), slice(None, None, -2)), [[1, 2, 3, 4]]),
    ((Ellipsis, [3, 0, 3]), 7),
    (([1, 0], [2, 3]), [[5], [6]]),
    ((slice(None), 1, [0, 2]), -2),
    (np.arange(32).reshape(2, 4, 4) % 5 == 0, 9),
]


@pytest.mark.parametrize("case", range(len(VIEW_CASES)))
def test_setitem_through_a_view_writes_the_base(case):
    """A transposed, flipped, strided view of a larger buffer: the write lands in the base,
    where NumPy's does."""
    base = np.arange(4 * 6 * 2 * 2, dtype=np.float64).reshape(4, 6, 2, 2)
    want = base.copy()
    t = fresh(base)
    view_np = want.transpose(2, 0, 1, 3)[..., 0][:, ::-1, 1:5]          # shape (2, 4, 4)
    view_nx = nx.transpose(t, (2, 0, 1, 3))[..., 0][:, ::-1, 1:5]
    index, value = VIEW_CASES[case]
    view_np[index] = value
    view_nx[index] = value
    np.testing.assert_array_equal(np.asarray(t), want)
    np.testing.assert_array_equal(np.asarray(view_nx), view_np)


def test_every_view_of_the_memory_sees_the_write():
    base = np.arange(12.0).reshape(3, 4)
    x = nx.asarray(base)                       # shares the ndarray's memory, as np.asarray
    row, col, rev, tr = x[1], x[:, 2], x[::-1, ::-1], x.T
    x[1, 2] = 100.0
    assert base[1, 2] == 100.0
    assert float(row[2]) == 100.0 and float(col[1]) == 100.0
    assert float(rev[1, 1]) == 100.0 and float(tr[2, 1]) == 100.0
    tr[0] = -1.0                               # writing a view writes x (and the ndarray)
    np.testing.assert_array_equal(base[:, 0], [-1.0, -1.0, -1.0])
    np.testing.assert_array_equal(np.asarray(x)[:, 0], [-1.0, -1.0, -1.0])
    r = nx.reshape(x, (2, 6))                  # a reshape that is a view
    r[1, 5] = 7.0
    assert float(x[2, 3]) == 7.0


def test_overlapping_source_reads_before_writing():
    x = t64(np.arange(6.0))
    want = np.arange(6.0)
    x[1:] = x[:-1]
    want[1:] = want[:-1].copy()
    np.testing.assert_array_equal(np.asarray(x), want)
    x[[0, 1, 2]] = x[[2, 1, 0]]
    want[[0, 1, 2]] = want[[2, 1, 0]]
    np.testing.assert_array_equal(np.asarray(x), want)


def test_duplicate_indices_last_write_wins_like_at_set():
    x = t64(np.zeros(4))
    x[[1, 3, 1, 1]] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(np.asarray(x), [0.0, 4.0, 0.0, 2.0])
    y = nx.zeros(4, nx.float64).at[np.array([1, 3, 1, 1])].set(t64([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


# -- casting ------------------------------------------------------------------------------------

def test_values_are_cast_like_numpy_setitem():
    x = fresh(np.zeros(4, np.int32))
    x[:2] = [1.7, -2.7]                                  # floats truncate toward zero
    x[2] = np.float64(3.9)
    x[3] = True
    np.testing.assert_array_equal(np.asarray(x), [1, -2, 3, 1])
    f = fresh(np.zeros(3, np.float64))
    f[:] = [0.1, 0.2, 0.3]                               # Python floats keep float64 precision
    np.testing.assert_array_equal(np.asarray(f), [0.1, 0.2, 0.3])
    f[0] = nx.asarray(np.array(0.5, np.float32))         # another float dtype casts
    assert float(f[0]) == 0.5
    b = fresh(np.zeros(3, bool))
    b[:] = [0.0, 2.5, -1]
    np.testing.assert_array_equal(np.asarray(b), [False, True, True])
    c = fresh(np.zeros(2, np.complex64))
    c[0] = 1 + 2j
    assert complex(c[0]) == 1 + 2j
    i8 = fresh(np.zeros(2, np.int8))
    i8[:] = nx.asarray(np.array([300, -129], np.int32))  # arrays cast as astype (wrap around)
    np.testing.assert_array_equal(np.asarray(i8), np.array([300, -129]).astype(np.int8))


def test_complex_into_real_raises_type_error():
    f = fresh(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="value: complex 1j cannot be written into a float32"):
        f[0] = 1j
    with pytest.raises(TypeError, match="imaginary part"):
        f[:] = nx.asarray(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="complex"):
        f[:2] = [1 + 0j, 2]
    with pytest.raises(TypeError, match="complex"):
        f += 1j
    with pytest.raises(TypeError, match="values: complex 1j cannot be written into a float32"):
        f.at[0].set(1j)
    with pytest.raises(TypeError, match=r"values: complex values \(complex64\)"):
        f.at[0].set(nx.ones(1) * 1j)
    np.testing.assert_array_equal(np.asarray(f), [0, 0, 0])


def test_values_that_do_not_fit_raise():
    x = fresh(np.zeros(3, np.int8))
    with pytest.raises(ValueOverflowError, match="value: Python integer 300 out of bounds"):
        x[0] = 300
    with pytest.raises(OverflowError):                    # NumPy's class, and ...
        x[0] = -200
    with pytest.raises(ValueError):                       # ... a ValueError too
        x[:] = [1, 2, 1000]
    with pytest.raises(ValueError, match="NaN"):
        x[1] = float("nan")
    np.testing.assert_array_equal(np.asarray(x), [0, 0, 0])


# -- bad input ------------------------------------------------------------------------------------

def test_unwritable_targets_raise_value_error():
    x = nx.broadcast_to(t64([1.0, 2.0]), (3, 2))
    with pytest.raises(ValueError, match="x: cannot write into a broadcast view"):
        x[0, 0] = 5.0
    ro = np.arange(3.0)
    ro.flags.writeable = False
    r = nx.asarray(ro)
    with pytest.raises(ValueError, match="read-only.*at\\[idx\\]"):
        r[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        r += 1.0
    p = nx.pad(t64(np.ones((2, 2))), 1)
    with pytest.raises(ValueError, match="padded view.*at\\[idx\\]"):
        p[1, 1] = 0.0
    s = t64([1.0, 2.0]) * 2.0
    c = nx.asarray(3.0) + 0.0                      # results are fresh memory: writable
    s[0] = 0.0
    c[()] = 1.0
    assert float(s[0]) == 0.0 and float(c) == 1.0


def test_bad_indices_and_values_raise():
    x = t64(np.zeros((2, 3)))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        x[0, 3] = 1.0
    with pytest.raises(IndexError, match="out of bounds for axis 0"):
        x[[0, 2]] = 1.0
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0] = 1.0
    with pytest.raises(IndexError):
        x[0.5] = 1.0
    with pytest.raises(TypeError):
        x[nx.asarray(np.array([0.0, 1.0]))] = 1.0
    with pytest.raises(IndexError, match="bool mask of shape"):
        x[np.array([True, False, True])] = 1.0
    with pytest.raises(ValueError, match=r"value: shape \(2,\) cannot be broadcast to the "
                                         r"indexed shape \(3,\)"):
        x[0] = [1.0, 2.0]
    with pytest.raises(ValueError, match="value: shape"):
        x[[0, 1], [0, 1]] = np.ones(3)
    with pytest.raises(TypeError, match="value: "):
        x[0] = "abc"
    np.testing.assert_array_equal(np.asarray(x), np.zeros((2, 3)))


def test_traced_value_into_concrete_tensor_raises_with_the_fix():
    c = t64(np.zeros(3))

    def f(w):
        c[0] = w[0]
        return nx.sum(c)
    with pytest.raises(TypeError, match=r"x = x\.at\[idx\]\.set\(v\)"):
        nx.grad(f)(t64([1.0, 2.0, 3.0]))

    def g(w):
        c[:2] = [w[0], 1.0]
        return nx.sum(c)
    with pytest.raises(TypeError, match="traced"):
        nx.grad(g)(t64([1.0, 2.0, 3.0]))

    def h(w):
        acc = nx.zeros(3, nx.float64)
        acc += w
        return nx.sum(acc)
    with pytest.raises(TypeError, match=r"x = x \+ y"):
        nx.grad(h)(t64([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(c), np.zeros(3))


def test_concrete_writes_inside_a_transformation_are_in_place():
    c = t64(np.zeros(3))

    def f(w):
        c[1] = 5.0                       # a constant written into a constant
        c[2] += 1.0
        return nx.sum(w * c)
    g = nx.grad(f)(t64([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(c), [0.0, 5.0, 1.0])
    np.testing.assert_array_equal(np.asarray(g), [0.0, 5.0, 1.0])


# -- in-place operators ---------------------------------------------------------------------------

ARITH = [("+=", "__iadd__"), ("-=", "__isub__"), ("*=", "__imul__"), ("/=", "__itruediv__"),
         ("//=", "__ifloordiv__"), ("%=", "__imod__"), ("**=", "__ipow__")]
BITS = [("&=", "__iand__"), ("|=", "__ior__"), ("^=", "__ixor__")]


def _np_inplace(a, method, b):
    out = getattr(a, method)(b)
    assert out is a
    return a


@pytest.mark.parametrize("sym,method", ARITH)
@pytest.mark.parametrize("other", ["array", "broadcast", "scalar"])
def test_arithmetic_inplace_operators_match_numpy(sym, method, other):
    a = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.25]])
    b = {"array": np.array([[2.0, 0.5, -1.5], [3.0, 1.25, 2.0]]),
         "broadcast": np.array([2.0, 0.5, 1.5]), "scalar": 2.0}[other]
    x = fresh(a)
    alias = x
    view = x[1]
    if sym == "**=":
        a, x_np = np.abs(a), np.abs(a)
        x = alias = fresh(a)
        view = x[1]
    else:
        x_np = a.copy()
    y = b if other == "scalar" else fresh(b)
    res = getattr(x, method)(y)
    assert res is alias                                     # the same object, written in place
    want = _np_inplace(x_np, method, b)
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(view), want[1], rtol=1e-15)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool"])
@pytest.mark.parametrize("sym,method", BITS)
def test_bitwise_inplace_operators_match_numpy(sym, method, dtype):
    a = np.array([5, 3, 12, 0]).astype(dtype)
    b = np.array([6, 1, 10, 7]).astype(dtype)
    x = fresh(a)
    assert getattr(x, method)(fresh(b)) is x
    np.testing.assert_array_equal(np.asarray(x), _np_inplace(a.copy(), method, b))


def test_integer_inplace_operators_match_numpy():
    a = np.array([7, -7, 9, 100], np.int32)
    for method, b in [("__iadd__", 3), ("__imul__", -2), ("__ifloordiv__", 2), ("__imod__", 3),
                      ("__ipow__", 2), ("__isub__", np.int8(5))]:
        x = fresh(a)
        getattr(x, method)(b)
        np.testing.assert_array_equal(np.asarray(x), _np_inplace(a.copy(), method, b))
        assert x.dtype == np.int32


def test_matmul_inplace():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([[0.5, -1.0], [2.0, 1.0]])
    x = fresh(a)
    x @= fresh(b)
    np.testing.assert_allclose(np.asarray(x), a @ b)
    with pytest.raises(ValueError, match="keeps x's shape"):
        x @= fresh(np.ones((2, 3)))


def test_shift_inplace_operators_dispatch_to_the_shift_functions(monkeypatch):
    """``<<=``/``>>=`` call the front end's bitwise_left_shift/bitwise_right_shift (stand-ins
    here: those functions belong to the elementwise family) and write in place."""
    monkeypatch.setattr(nx.frontend, "bitwise_left_shift", lambda a, b: a * 2 ** b,
                        raising=False)
    monkeypatch.setattr(nx.frontend, "bitwise_right_shift", lambda a, b: a // 2 ** b,
                        raising=False)
    x = fresh(np.array([1, 2, 3], np.int32))
    v = x[1:]
    x <<= 2
    np.testing.assert_array_equal(np.asarray(x), [4, 8, 12])
    x >>= 1
    np.testing.assert_array_equal(np.asarray(v), [4, 6])


def test_inplace_casting_follows_numpy_same_kind():
    i = fresh(np.array([1, 2, 3], np.int32))
    with pytest.raises(TypeError, match="same_kind"):
        i /= 2                                     # NumPy: UFuncTypeError, a TypeError
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    with pytest.raises(TypeError, match="same_kind"):
        i += fresh(np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(i), [1, 2, 3])
    f = fresh(np.ones(3, np.float32))
    f += fresh(np.full(3, 0.1, np.float64))        # float64 result into float32: same kind
    want = np.ones(3, np.float32)
    want += np.full(3, 0.1)
    np.testing.assert_array_equal(np.asarray(f), want)
    assert f.dtype == np.float32
    i8 = fresh(np.array([1, 2], np.int8))
    i8 += fresh(np.array([100, 200], np.int64))    # int64 into int8: same kind, wraps
    np.testing.assert_array_equal(np.asarray(i8), np.array([101, 202]).astype(np.int8))
    with pytest.raises(OverflowError):
        i8 += 300                                  # as NumPy: the Python int does not fit


def test_inplace_shape_must_not_grow():
    x = fresh(np.ones(3))
    with pytest.raises(ValueError, match=r"the result has shape \(2, 3\), not x's \(3,\)"):
        x += fresh(np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(x), np.ones(3))


# -- tracers: functional updates that rebind the tracer -------------------------------------------

X0 = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.6]])


def _w_int(w):
    w[0, 1] = nx.sin(w[1, 2]) * w[0, 0]
    return nx.sum(w * w * w)


def _w_slice(w):
    w[:, ::-2] = nx.exp(w[::-1, :2])
    return nx.sum(nx.tanh(w) * w)


def _w_advanced(w):
    w[[1, 0, 1], [2, 2, 0]] = w[0] * w[1]
    return nx.sum(w ** 2) + w[1, 2]


def _w_mask(w):
    w[np.array([[True, False, True], [False, True, False]])] = nx.cos(w[0, 1]) * 3.0
    return nx.sum(nx.sin(w) * w[::-1])


def _w_alias(w):
    y = w                     # another name for the same object sees the write (as in NumPy)
    w[1] = w[0] * 2.0
    return nx.sum(y * w) + nx.sum(y[1])


def _w_ops(w):
    w += 1.0
    w *= nx.sin(w)
    w[0] /= 3.0
    w -= w[1]
    w **= 2
    return nx.sum(w)


def _w_loop(w):
    out = nx.zeros_like(w) + 0.0 * w          # a traced start, then filled row by row
    for i in range(w.shape[0]):
        out[i] = nx.cumsum(w[i]) * (i + 1)
    return nx.sum(out ** 2)


def _w_views(w):
    # writes through views, which on arrays reach the viewed memory: a chained index, a row
    # held by name and updated in place, a stepped slice of a slice (padded on the way under a
    # transformation), a transpose, a flip; each later read of a view sees every write
    w[0][1] = nx.sin(w[1, 2])
    row = w[1]
    row *= w[0, 0]
    w[:, ::2][1] += row[:2] * 0.5
    t = w.T
    t[2, 0] = t[0, 1] * 3.0
    f = nx.flip(w, 1)
    f[1] -= w[0, 2]
    b = nx.broadcast_to(w[:1], (4, 3))    # a view read (not written) after the writes
    return nx.sum(w * row[0]) + nx.sum(row * row) + nx.sum(t * t) + nx.sum(f[0] * b)


def _w_reshaped(w):
    flat = w.reshape(-1)                  # a view of contiguous memory
    flat[1:4] = flat[:3] * 2.0
    w.T[1] *= nx.cos(w[0, 0])
    return nx.sum(nx.tanh(flat) * w.reshape(-1))


WRITERS = [_w_int, _w_slice, _w_advanced, _w_mask, _w_alias, _w_ops, _w_loop, _w_views,
           _w_reshaped]


@pytest.mark.parametrize("f", WRITERS, ids=lambda f: f.__name__)
def test_grad_of_a_writing_function_matches_finite_differences(f):
    x = t64(X0)
    g = nx.grad(f)(x)
    np.testing.assert_allclose(np.asarray(g), fd_grad(f, X0), rtol=1e-6, atol=1e-8)
    eager = t64(X0)
    f(eager)            # grad writes back into the caller's tensor what the eager call writes
    np.testing.assert_array_equal(np.asarray(x), np.asarray(eager))
    value = nx.value_and_grad(f)(t64(X0))[0]
    assert float(value) == pytest.approx(float(f(t64(X0))), rel=1e-14)   # eager == traced


@pytest.mark.parametrize("f", WRITERS, ids=lambda f: f.__name__)
def test_second_derivatives_of_a_writing_function(f):
    H = nx.hessian(f)(t64(X0))
    np.testing.assert_allclose(np.asarray(H).reshape(6, 6), fd_hessian(f, X0), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("f", [_w_int, _w_advanced, _w_ops, _w_views, _w_reshaped],
                         ids=lambda f: f.__name__)
def test_forward_mode_through_writes(f):
    d = np.array([[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]])
    _, t = nx.jvp(f, (t64(X0),), (t64(d),))
    want = np.sum(fd_grad(f, X0) * d)
    assert float(t) == pytest.approx(want, rel=1e-6)
    _, f_jvp = nx.linearize(f, t64(X0))
    assert float(f_jvp(t64(d))) == pytest.approx(want, rel=1e-6)


def test_vjp_and_jacobians_see_the_inputs_not_their_rebinding():
    def f(x):
        x[0] = x[1] * x[2]
        x[2] += x[0]
        return x                   # the rebound input is the output
    x = np.array([0.5, 2.0, -1.5])
    J = np.array([[0.0, x[2], x[1]], [0.0, 1.0, 0.0], [0.0, x[2], 1.0 + x[1]]])
    np.testing.assert_allclose(np.asarray(nx.jacrev(f)(t64(x))), J, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(nx.jacfwd(f)(t64(x))), J, rtol=1e-14)
    out, f_vjp = nx.vjp(f, t64(x))
    np.testing.assert_allclose(np.asarray(f_vjp(t64([1.0, 0.0, 1.0]))[0]),
                               J[0] + J[2], rtol=1e-14)


def test_grad_of_grad_with_writes_at_both_levels():
    def inner(z, y):
        z[0] = z[0] * y[1]
        return nx.sum(nx.sin(z) * y)

    def outer(y):
        y[0] = y[0] ** 2
        return nx.sum(nx.grad(inner)(y * 1.0, y) ** 2)
    x = np.array([0.4, -0.9, 1.3])
    g = nx.grad(outer)(t64(x))
    np.testing.assert_allclose(np.asarray(g), fd_grad(outer, x), rtol=1e-6, atol=1e-9)


def test_an_inner_traced_value_cannot_be_written_into_an_outer_tracer():
    def outer(y):
        def inner(z):
            y[0] = z[0]           # y belongs to the outer grad, z to the inner one
            return nx.sum(z)
        return nx.sum(nx.grad(inner)(y * 2.0))
    with pytest.raises(TypeError, match=r"enclosing grad transformation.*x\.at\[idx\]"):
        nx.grad(outer)(t64([1.0, 2.0]))


def test_writes_under_no_grad_are_constants():
    """Inside no_grad every result is a constant, the rebound tracer too (as
    ``w = w.at[0].set(v)`` would be there); later ops on it are differentiated again."""
    def f(w):
        with nx.no_grad():
            w[0] = w[1] * 10.0
        return nx.sum(w * w) + nx.sum(w * u)

    u = None

    def g(x):
        nonlocal u
        u = x
        return f(x * 1.0)
    x = np.array([1.0, 2.0, 3.0])
    val, grad = nx.value_and_grad(g)(t64(x))
    assert float(val) == 400.0 + 4.0 + 9.0 + 20.0 + 4.0 + 9.0
    np.testing.assert_allclose(np.asarray(grad), [20.0, 2.0, 3.0])   # d/du of sum(w * u)


def test_tracer_writes_cast_and_check_like_concrete_ones():
    def f(w):
        w[0] = 1                              # a Python int into float64
        w[1:] = np.array([2.0, 3.0], np.float32)
        return nx.sum(w * w)
    assert float(nx.value_and_grad(f)(t64([5.0, 5.0, 5.0]))[0]) == 14.0

    def bad(w):
        w[0] = 1j
        return nx.sum(w)
    with pytest.raises(TypeError, match="complex"):
        nx.grad(bad)(t64([1.0, 2.0]))

    def grows(w):
        w += nx.ones((2, 2), nx.float64)
        return nx.sum(w)
    with pytest.raises(ValueError, match="keeps x's shape"):
        nx.grad(grows)(t64([1.0, 2.0]))

    def int_div(w):
        k = nx.asarray(np.array([1, 2], np.int32))
        k = k + w.astype(nx.int32)            # an integer value: not traced
        k /= 2
        return nx.sum(w)
    with pytest.raises(TypeError, match="same_kind"):
        nx.grad(int_div)(t64([1.0, 2.0]))


def test_custom_rules_that_update_their_arguments():
    @nx.custom_vjp
    def f(x):
        return nx.sin(x)

    def fwd(x):
        return nx.sin(x), (nx.cos(x),)

    def bwd(res, g):
        g *= res[0]               # in place on the cotangent argument (a tracer under jacfwd)
        return (g,)
    f.defvjp(fwd, bwd)
    x = t64([0.3, -0.8])
    want = np.diag(np.cos([0.3, -0.8]))
    np.testing.assert_allclose(np.asarray(nx.jacrev(f)(x)), want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(nx.jacfwd(f)(x)), want, rtol=1e-14)


# -- write tracking: the backward pass refuses values overwritten after they were recorded ---------

def test_write_after_record_raises_in_backward():
    x = t64([0.5, 1.0, 2.0])
    out, f_vjp = nx.vjp(lambda w: nx.sin(w) * 3.0, x)
    x[1] = 7.0
    with pytest.raises(ModifiedInPlaceError, match=r"operand 0 of sin .*x\[idx\] = v"):
        f_vjp(t64([1.0, 1.0, 1.0]))
    assert isinstance(ModifiedInPlaceError("m"), RuntimeError)


def test_write_into_a_view_of_a_saved_value_raises():
    base = t64(np.arange(8.0) / 4.0)
    c = base[2:6]                         # a constant the function closes over, a view of base

    def f(w):
        return nx.sum(nx.exp(w * c))     # mul saves c (its derivative in w is c)
    out, f_vjp = nx.vjp(f, t64(np.ones(4)))
    base[::-3] = 0.0                     # touches base[4], inside the view c
    with pytest.raises(ModifiedInPlaceError, match="operand 1 of mul"):
        f_vjp(t64(1.0))


def test_write_into_a_saved_output_raises():
    out, f_vjp = nx.vjp(nx.exp, t64([0.1, 0.2]))   # exp's derivative reads its output
    out[0] = 0.0                                     # the caller holds that very output
    with pytest.raises(ModifiedInPlaceError, match="the output of exp"):
        f_vjp(t64([1.0, 1.0]))


def test_values_computed_from_an_overwritten_constant_are_not_affected():
    c = t64([0.1, 0.2])
    out, f_vjp = nx.vjp(lambda w: nx.sum(nx.exp(c) * w), t64([1.0, 1.0]))
    c += 1.0                          # mul saved exp(c), a new tensor: still valid
    np.testing.assert_allclose(np.asarray(f_vjp(t64(1.0))[0]), np.exp([0.1, 0.2]), rtol=1e-15)


def test_linearize_replay_checks_too():
    c = t64([0.5, -0.5])
    _, f_jvp = nx.linearize(lambda w: nx.sin(w * c), t64([1.0, 2.0]))
    c *= 2.0
    with pytest.raises(ModifiedInPlaceError, match="mul"):
        f_jvp(t64([1.0, 0.0]))


def test_write_before_record_and_disjoint_writes_are_fine():
    base = t64(np.arange(10.0))
    c = base[:4]

    def g(w):
        base[0] = 3.0                    # before the op that saves c: no error
        y = nx.sum(nx.sin(w * c))
        base[4:] = -1.0                  # after it, into the same buffer but not into c
        base[5] = 2.0
        return y
    x = np.array([0.1, 0.2, 0.3, 0.4])
    grad = nx.grad(g)(t64(x))
    cv = np.array([3.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(grad), np.cos(x * cv) * cv, rtol=1e-14)

    def f(w):
        y = nx.sum(nx.sin(w * c))
        base[1:4:2] = base[1:4:2]        # rewrites c[1] and c[3] (with equal values): a write
        return y
    with pytest.raises(ModifiedInPlaceError, match="operand 1 of mul"):
        nx.grad(f)(t64(x))


def test_strided_disjoint_elements_are_told_apart():
    base = t64(np.arange(1.0, 9.0))
    evens, odds = base[::2], base[1::2]      # interleaved: overlapping extents, no common element
    out, f_vjp = nx.vjp(lambda w: nx.sum(w * evens), t64(np.ones(4)))
    odds[...] = 0.0
    np.testing.assert_allclose(np.asarray(f_vjp(t64(1.0))[0]), [1.0, 3.0, 5.0, 7.0])
    evens[1] = 0.0
    with pytest.raises(ModifiedInPlaceError):
        f_vjp(t64(1.0))


def test_linear_ops_do_not_need_their_values():
    """add's derivative does not read its operands: overwriting them changes nothing."""
    c = t64([1.0, 2.0])
    out, f_vjp = nx.vjp(lambda w: nx.sum(w + c), t64([0.0, 0.0]))
    c[0] = 100.0
    np.testing.assert_array_equal(np.asarray(f_vjp(t64(1.0))[0]), [1.0, 1.0])


def test_rebinding_an_outer_tracer_saved_by_an_inner_tape_raises():
    def outer(y):
        def inner(z):
            r = nx.sum(nx.sin(y * z))    # the inner tape saves y (a constant there)
            y[0] = y[1] * 2.0            # rebinds y: what mul saved has changed
            return r
        return nx.sum(nx.grad(inner)(y * 1.0))
    with pytest.raises(ModifiedInPlaceError, match="rebound|x\\[idx\\] = v"):
        nx.grad(outer)(t64([0.3, 0.6]))


def test_custom_vjp_residuals_are_checked():
    c = t64([2.0, 3.0])

    @nx.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: (x * 2.0, (c,)), lambda res, g: (g * res[0],))
    _, f_vjp = nx.vjp(f, t64([1.0, 1.0]))
    c[1] = 0.0
    with pytest.raises(ModifiedInPlaceError, match="residual 0 of custom rule f"):
        f_vjp(t64([1.0, 1.0]))


def test_forward_mode_saves_nothing_past_an_op():
    """A JVP rule runs when its op does: a constant overwritten later cannot reach it."""
    c = t64([0.5, 2.0])

    def f(w):
        y = nx.sin(w * c)
        c[0] = -3.0                      # after the op that used c
        return nx.sum(y * c)
    x = np.array([0.3, 0.7])
    _, t = nx.jvp(f, (t64(x),), (t64([1.0, 1.0]),))
    c0 = np.array([0.5, 2.0])
    c1 = np.array([-3.0, 2.0])
    want = np.sum(np.cos(x * c0) * c0 * c1)
    assert float(t) == pytest.approx(want, rel=1e-14)


def test_tapes_stop_listening_when_they_are_gone():
    import gc
    gc.collect()
    before = len(writes._watchers)
    nx.grad(lambda w: nx.sum(nx.sin(w)))(t64([1.0]))
    gc.collect()
    assert len(writes._watchers) == before


# -- padded views: their materialized cache is read-only and never stale ---------------------------

def test_padded_cache_is_read_only_and_follows_writes_into_the_source():
    s = t64(np.arange(4.0).reshape(2, 2))
    p = nx.pad(s, 1, constant_values=-1.0)
    a = np.asarray(p)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 5.0
    assert not p.numpy().flags.writeable
    s[0, 0] = 9.0                                  # setitem into the source
    assert float(p[1, 1]) == 9.0 and np.asarray(p)[1, 1] == 9.0
    nx.assign(s, t64([[5.0, 6.0], [7.0, 8.0]]))    # nx.assign into the source
    np.testing.assert_array_equal(np.asarray(p)[1:3, 1:3], [[5.0, 6.0], [7.0, 8.0]])
    s += 1.0                                       # an in-place operator into the source
    assert float(nx.sum(p)) == (6 + 7 + 8 + 9) - 12.0
    d = np.from_dlpack(p)                          # DLPack hands out a fresh copy
    d[0, 0] = 123.0
    assert float(p[0, 0]) == -1.0
    np.testing.assert_array_equal(np.array(p, copy=True)[1:3, 1:3], np.asarray(s))


def test_padded_cache_is_reused_while_nothing_is_written():
    p = nx.pad(t64(np.ones(3)), 2)
    assert np.asarray(p) is np.asarray(p)


def test_inplace_arithmetic_equals_the_out_of_place_operators_bit_for_bit():
    """+=, -=, *=, /= on floats run NumPy's ufunc into x's memory: the same IEEE values as the
    out-of-place operator (weak Python scalars, signed zeros, inf and nan included; a nan's
    sign bit is not a value)."""
    vals = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-45, 3e38], np.float32)
    others = [0.1, -0.0, 3, np.flip(vals).copy(), vals[::-1]]
    for method, op in [("__iadd__", "__add__"), ("__isub__", "__sub__"),
                       ("__imul__", "__mul__"), ("__itruediv__", "__truediv__")]:
        for o in others:
            x = fresh(vals)
            y = nx.asarray(o) if isinstance(o, np.ndarray) else o
            want = np.asarray(getattr(fresh(vals), op)(y))
            getattr(x, method)(y)
            got = np.asarray(x)
            np.testing.assert_array_equal(got, want)            # nan where nan
            ok = ~np.isnan(want)
            np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_inplace_with_an_overlapping_operand(dtype):
    a = np.arange(1, 7).astype(dtype)
    x = fresh(a)
    x += x[::-1]
    a += a[::-1]
    np.testing.assert_array_equal(np.asarray(x), a)
    x *= x[1:2]
    a *= a[1:2]
    np.testing.assert_array_equal(np.asarray(x), a)


# -- random indices against NumPy ------------------------------------------------------------------

@st.composite
def _index_and_value(draw):
    """A shape, an index mixing every kind NumPy accepts, and a value that broadcasts to
    ``a[index]`` (found with NumPy on a stand-in)."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    k = draw(st.integers(0, len(shape)))
    where = draw(st.sampled_from(["none", "lead", "tail"]))   # where an Ellipsis goes
    axes = range(len(shape) - k, len(shape)) if where == "lead" else range(k)
    entries = []
    for axis in axes:
        n = shape[axis]
        while draw(st.integers(0, 4)) == 0:
            entries.append(None)
        kind = draw(st.sampled_from(["int", "slice", "array", "mask"]))
        if kind == "int":
            entries.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            step = draw(st.none() | st.integers(-3, 3).filter(lambda s: s != 0) | st.just(7))
            entries.append(slice(start, stop, step))
        elif kind == "array":
            m = draw(st.integers(0, 3))
            entries.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=m,
                                                  max_size=m)), dtype=np.int64))
        else:
            entries.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
    if where == "lead":
        entries.insert(0, Ellipsis)
    elif where == "tail":
        entries.append(Ellipsis)
    index = tuple(entries)
    try:
        target = np.zeros(shape)[index].shape
    except IndexError:        # array indices that do not broadcast together
        return shape, index, None
    vshape = list(target[draw(st.integers(0, len(target))):])
    vshape = [1 if draw(st.booleans()) else d for d in vshape]
    return shape, index, tuple(vshape)


@settings(max_examples=300, deadline=None)
@given(_index_and_value(), st.sampled_from(["float32", "int16", "complex128", "bool"]))
def test_random_writes_match_numpy(case, dtype):
    shape, index, vshape = case
    want = np.array(np.arange(int(np.prod(shape))).reshape(shape) % 5, dtype=dtype)
    x = fresh(want)
    if vshape is None:
        with pytest.raises(IndexError):
            want[index] = 0
        with pytest.raises(IndexError):
            x[index] = 0
        return
    v = np.array(np.arange(int(np.prod(vshape))).reshape(vshape) + 7, dtype=dtype)
    want[index] = v
    x[index] = nx.asarray(v) if len(vshape) % 2 else v
    np.testing.assert_array_equal(np.asarray(x), want)


@settings(max_examples=60, deadline=None)
@given(_index_and_value())
def test_random_tracer_writes_match_at_set_and_finite_differences(case):
    shape, index, vshape = case
    if vshape is None:
        return
    x0 = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
    v0 = np.linspace(0.5, 1.5, int(np.prod(vshape))).reshape(vshape)

    def f(x, v):
        x[index] = nx.sin(v) * 2.0
        return nx.sum(x * x * nx.cos(x))

    def g(x, v):
        return nx.sum(nx.sin(x) * x) + f(x, v)     # x's old value is used too
    gx, gv = nx.grad(g, argnums=(0, 1))(t64(x0), t64(v0))
    np.testing.assert_allclose(np.asarray(gx), fd_grad(lambda x: g(x, t64(v0)), x0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gv), fd_grad(lambda v: g(t64(x0), v), v0),
                               rtol=1e-6, atol=1e-8)


def test_returned_gradients_are_writable_and_do_not_share_memory():
    """add's rule hands one cotangent to both operands, sum's is a broadcast, slicing's a
    padded view: the gradients returned own writable memory, so an in-place update of one
    works and leaves the others (and the caller's cotangent) alone."""
    x, y = t64([1.0, 2.0]), t64([3.0, 4.0])
    gx, gy = nx.grad(lambda x, y: nx.sum((x + y) ** 2), argnums=(0, 1))(x, y)
    gx *= 10.0
    np.testing.assert_array_equal(np.asarray(gy), [8.0, 12.0])
    np.testing.assert_array_equal(np.asarray(gx), [80.0, 120.0])
    grads = nx.grad(lambda p: nx.sum(p["a"] + p["b"] * 1.0))({"a": x, "b": y})
    grads["a"] += 1.0                                   # was a broadcast of ones
    np.testing.assert_array_equal(np.asarray(grads["a"]), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(grads["b"]), [1.0, 1.0])
    g = nx.grad(lambda w: nx.sum(w[1:]))(t64([1.0, 2.0, 3.0]))   # was a padded view
    g[0] = 5.0
    np.testing.assert_array_equal(np.asarray(g), [5.0, 1.0, 1.0])
    _, f_vjp = nx.vjp(lambda w: nx.reshape(w, (2, 1)), x)
    ct = t64([[5.0], [6.0]])
    (g,) = f_vjp(ct)
    g[0] = 0.0
    np.testing.assert_array_equal(np.asarray(ct), [[5.0], [6.0]])


@pytest.mark.parametrize("index", [(), Ellipsis, None, (None, Ellipsis), True, False,
                                   np.array(True), nx.asarray(np.array(False))],
                         ids=["()", "...", "None", "None...", "True", "False", "np True",
                              "nx False"])
def test_setitem_on_a_0d_tensor(index):
    want = np.array(1.5)
    x = fresh(want)
    want[np.asarray(index) if isinstance(index, nx.Tensor) else index] = 7.0
    x[index] = 7.0
    assert float(x) == float(want)


@pytest.mark.parametrize("f", [_w_views, _w_reshaped, _w_ops], ids=lambda f: f.__name__)
def test_vmap_of_a_function_writing_through_views(f):
    xs = np.stack([X0, X0[::-1] * 1.5, -X0])
    got = np.asarray(nx.vmap(f)(t64(xs)))
    want = [float(f(t64(x))) for x in xs]
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_views_of_a_traced_value_see_writes_into_it_and_the_reverse():
    def f(w):
        t, row = w.T, w[1]
        w[1, 0] = 10.0 * w[0, 0]          # into the base: both views are remade
        t[0, 0] = -3.0                    # into a view: the base and the other view see it
        return nx.stack([nx.sum(t * t), nx.sum(row), nx.sum(w * w)])
    want = np.asarray(f(t64(X0)))
    np.testing.assert_allclose(np.asarray(nx.jvp(f, (t64(X0),), (t64(X0),))[0]), want)
    jac = np.asarray(nx.jacrev(f)(t64(X0)))
    fd = np.stack([fd_grad(lambda w, i=i: f(w)[i], X0) for i in range(3)])
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-8)


def test_a_view_that_cannot_follow_a_write_raises_when_used():
    # a write into a broadcast view (refused on arrays) cannot be written back into the row it
    # repeats: the row and the base go stale, and reading them raises, not a stale value
    def f(w):
        b = nx.broadcast_to(w[0], (2, 3))
        b[0, 0] = 5.0
        return nx.sum(w)
    with pytest.raises(ModifiedInPlaceError, match="shares memory with one written in place"):
        nx.grad(f)(t64(X0))
    with pytest.raises(ValueError, match="broadcast view"):
        f(t64(X0))                        # the eager call refuses the write itself


@pytest.mark.parametrize("f", [_w_views, _w_reshaped, _w_ops, _w_int], ids=lambda f: f.__name__)
def test_jit_of_a_function_writing_through_views(f):
    want = float(f(t64(X0)))
    assert float(nx.jit(f)(t64(X0))) == pytest.approx(want, rel=1e-13)
    g_eager = np.asarray(nx.grad(f)(t64(X0)))
    np.testing.assert_allclose(np.asarray(nx.jit(nx.grad(f))(t64(X0))), g_eager, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(nx.grad(nx.jit(f))(t64(X0))), g_eager, rtol=1e-12)


def test_jit_refuses_a_view_that_cannot_follow_a_write():
    def f(w):
        b = nx.broadcast_to(w[0], (2, 3))
        b[0, 0] = 5.0
        return nx.sum(w)
    with pytest.raises(ModifiedInPlaceError, match="shares memory with one written in place"):
        nx.jit(f)(t64(X0))
