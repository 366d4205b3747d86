"""The backend's movement primitives on Tensors that hold an ndarray (NumPy's views of it) give
the values, shapes, memory sharing and errors of the View algebra's path."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune.primitives import bind


def _plain(shape, dtype=np.float64):
    return nx.asarray(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))


def _padded():
    return nx.pad(_plain((2, 3)), ((1, 0), (0, 2)), constant_values=7.0)


def _shares(a, b):
    return np.shares_memory(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("prim, params, ref", [
    (P.reshape_p, dict(shape=(3, 4)), lambda a: a.reshape(3, 4)),
    (P.reshape_p, dict(shape=(2, 1, 6)), lambda a: a.reshape(2, 1, 6)),
    (P.expand_p, dict(shape=(5, 2, 6)), lambda a: np.broadcast_to(a, (5, 2, 6))),
    (P.permute_p, dict(axes=(1, 0)), lambda a: a.T),
    (P.shrink_p, dict(limits=((1, 2), (2, 5))), lambda a: a[1:2, 2:5]),
    (P.flip_p, dict(axes=(1,)), lambda a: a[:, ::-1]),
    (P.flip_p, dict(axes=(0, 1)), lambda a: a[::-1, ::-1]),
])
def test_movement_of_a_plain_tensor_is_numpys_view(prim, params, ref):
    x = _plain((2, 6))
    out = bind(prim, x, **params)
    want = ref(np.asarray(x))
    assert out.shape == want.shape and out.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(out), want)
    assert _shares(out, x)             # a view: no data moved
    assert out.strides == tuple(s // 8 for s in want.strides)


def test_expand_of_size_one_axes_and_the_result_is_read_only():
    x = _plain((3, 1))
    out = bind(P.expand_p, x, shape=(2, 3, 4))
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.asarray(x), (2, 3, 4)))
    assert out.strides == (0, 1, 0)
    assert not np.asarray(out).flags.writeable   # elements share memory
    with pytest.raises(ValueError, match="broadcast view"):
        out[0, 0, 0] = 1.0


def test_reshape_that_needs_a_copy_still_works():
    x = bind(P.permute_p, _plain((2, 3)), axes=(1, 0))     # not C-contiguous
    out = bind(P.reshape_p, x, shape=(6,))
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0).reshape(2, 3).T.reshape(6))


@pytest.mark.parametrize("prim, params", [
    (P.reshape_p, dict(shape=(5,))),
    (P.expand_p, dict(shape=(3, 3))),
    (P.expand_p, dict(shape=(3,))),
    (P.shrink_p, dict(limits=((0, 3), (0, 2)))),
])
def test_bad_movement_parameters_still_raise(prim, params):
    with pytest.raises((ValueError, TypeError)):
        bind(prim, _plain((2, 3)), **params)


@pytest.mark.parametrize("prim, params", [
    (P.flip_p, dict(axes=())),
    (P.flip_p, dict(axes=(1,))),
    (P.shrink_p, dict(limits=((0, 2), (1, 4)))),
    (P.permute_p, dict(axes=(1, 0))),
    (P.expand_p, dict(shape=(2, 3, 5))),
    (P.reshape_p, dict(shape=(15,))),
])
def test_movement_of_a_padded_view_takes_the_view_algebra(prim, params):
    x = _padded()
    ref = np.asarray(x).copy()
    out = bind(prim, x, **params)
    if prim is P.flip_p:
        want = np.flip(ref, params["axes"]) if params["axes"] else ref
    elif prim is P.shrink_p:
        want = ref[tuple(slice(a, b) for a, b in params["limits"])]
    elif prim is P.permute_p:
        want = ref.transpose(params["axes"])
    elif prim is P.expand_p:
        want = np.broadcast_to(ref, params["shape"])
    else:
        want = ref.reshape(params["shape"])
    np.testing.assert_array_equal(np.asarray(out), want)


def test_gradients_through_the_views_match_numpy():
    a = np.arange(6.0).reshape(2, 3) + 0.5

    def f(x):
        y = nx.flip(nx.transpose(nx.reshape(x, (3, 2))), 1)[:, 1:]
        return nx.sum(nx.broadcast_to(y, (4, 2, 2)) ** 2)
    g = np.asarray(nx.grad(f)(nx.asarray(a)))
    # f = 4 * sum of x^2 over the elements the movements pick: d f / d x = 8 x there, else 0
    picked = np.arange(6).reshape(3, 2).T[:, ::-1][:, 1:].ravel()
    want = np.zeros(6)
    want[picked] = 8.0 * a.ravel()[picked]
    np.testing.assert_allclose(g, want.reshape(2, 3))


def test_expand_without_shared_elements_stays_writable():
    x = nx.zeros(3)
    y = bind(P.expand_p, x, shape=(1, 3))
    y += 1.0                                   # writes through to x (no element shared)
    np.testing.assert_array_equal(np.asarray(x), [1.0, 1.0, 1.0])
    e = bind(P.expand_p, nx.asarray(np.ones(1)), shape=(0, 1))
    e += 1.0                                   # empty: a no-op, not an error
    assert e.shape == (0, 1)


@pytest.mark.parametrize("prim, params", [
    (P.flip_p, dict(axes=())), (P.shrink_p, dict(limits=())), (P.permute_p, dict(axes=())),
    (P.reshape_p, dict(shape=())), (P.expand_p, dict(shape=()))])
def test_movement_of_a_0d_tensor_gives_a_0d_tensor(prim, params):
    out = bind(prim, nx.asarray(2.5), **params)
    assert out.shape == () and isinstance(np.asarray(out), np.ndarray)
    assert float(out) == 2.5


def test_expand_beyond_numpys_size_limit_takes_the_view_algebra():
    assert bind(P.expand_p, nx.zeros(()), shape=(0, 4, 2**60)).shape == (0, 4, 2**60)
    with pytest.raises(ValueError, match="too many elements"):
        bind(P.expand_p, nx.zeros(()), shape=(2**40, 2**40))


@pytest.mark.parametrize("make", [
    lambda: _plain((2, 3)),
    lambda: bind(P.expand_p, _plain((3,)), shape=(2, 3)),
    lambda: bind(P.flip_p, bind(P.permute_p, _plain((3, 2)), axes=(1, 0)), axes=(0,)),
    lambda: nx.asarray(np.float64(3.0)),
    lambda: _padded(),
])
def test_copy_is_a_writable_c_ordered_tensor_of_its_own(make):
    x = make()
    want = np.asarray(x).copy()
    c = bind(P.copy_p, x)
    np.testing.assert_array_equal(np.asarray(c), want)
    assert c.shape == want.shape and c.dtype == want.dtype
    assert np.asarray(c).flags.c_contiguous and not _shares(c, x)
    assert c.buffer.address % 64 == 0          # memory of our own (aligned), its views see it
    assert bind(P.reshape_p, c, shape=(c.size,)).buffer is c.buffer
    c += 1.0                                   # writable, and x keeps its values
    np.testing.assert_array_equal(np.asarray(x), want)


def test_copy_of_an_empty_tensor_has_no_zero_strides_on_long_axes():
    c = bind(P.copy_p, nx.zeros((4, 0)))
    assert c.shape == (4, 0)
    assert not any(s == 0 and n > 1 for n, s in zip(c.shape, c.strides))
