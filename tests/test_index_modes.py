"""JAX's out-of-bounds index modes: ``x.at[idx].get(mode=..., fill_value=...)``,
``x.at[idx].set/add/...(mode=...)`` and ``take(mode=...)``.  nx_rune raises IndexError by
default (arrays are NumPy's); these modes are the one-line fix the porting guide names.
Expected values are jax 0.10.2's (pinned here)."""
import numpy as np
import pytest

import nx_rune as nx


def _x():
    return nx.arange(3.0)


def _m():
    return nx.arange(6.0).reshape(2, 3)


GETS = [
    # (index, mode, fill_value, jax 0.10.2's result)
    (5, "clip", None, 2.0),
    (5, "fill", None, np.nan),
    (-4, "fill", -1.0, -1.0),
    (-1, "fill", None, 2.0),
    (-1, "clip", None, 2.0),
    (-5, "clip", None, 0.0),
    ([0, 5, -1], "fill", None, [0.0, np.nan, 2.0]),
    ([0, 5, -1], "drop", None, [0.0, np.nan, 2.0]),
]


@pytest.mark.parametrize("index, mode, fill, want", GETS)
def test_get_modes(index, mode, fill, want):
    idx = nx.asarray(index) if isinstance(index, list) else index
    got = _x().at[idx].get(mode=mode, fill_value=fill)
    np.testing.assert_array_equal(np.asarray(got), want)
    jit_got = nx.jit(lambda x, i: x.at[i].get(mode=mode, fill_value=fill))(_x(), nx.asarray(index))
    np.testing.assert_array_equal(np.asarray(jit_got), want)


def test_get_fill_of_a_2d_slice_and_array_index():
    got = _m().at[:, nx.asarray([0, 3])].get(mode="fill")
    np.testing.assert_array_equal(np.asarray(got), [[0.0, np.nan], [3.0, np.nan]])


def test_get_fill_default_for_integers_is_the_extreme_value():
    x = nx.arange(3)
    assert int(x.at[7].get(mode="fill")) == np.iinfo(np.asarray(x).dtype).min


def test_update_modes():
    np.testing.assert_array_equal(
        np.asarray(_x().at[nx.asarray([0, 5])].set(9.0, mode="drop")), [9.0, 1.0, 2.0])
    np.testing.assert_array_equal(
        np.asarray(_x().at[nx.asarray([0, 5])].add(9.0, mode="clip")), [9.0, 1.0, 11.0])
    np.testing.assert_array_equal(np.asarray(_m().at[1, 7].set(1.0, mode="drop")),
                                  np.arange(6.0).reshape(2, 3))
    x = _x()
    x.at[4].set(1.0, mode="drop")      # functional: x unchanged
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


def test_take_modes():
    x = _x()
    np.testing.assert_array_equal(np.asarray(nx.take(x, nx.asarray([4, -5, 1, -1]), mode="clip")),
                                  [2.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(nx.take(x, nx.asarray([4, -5, 1]), mode="wrap")),
                                  [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(nx.take(x, nx.asarray([4, 1]), mode="fill")),
                                  [np.nan, 1.0])
    with pytest.raises(IndexError):
        nx.take(x, nx.asarray([4]))


def test_modes_differentiate_and_batch():
    g = nx.grad(lambda x: nx.sum(x.at[nx.asarray([0, 5, 0])].get(mode="fill", fill_value=0.0)))
    np.testing.assert_array_equal(np.asarray(g(_x())), [2.0, 0.0, 0.0])
    g = nx.grad(lambda x: nx.sum(x.at[nx.asarray([1, 7])].set(0.0, mode="drop")))
    np.testing.assert_array_equal(np.asarray(g(_x())), [1.0, 0.0, 1.0])
    got = nx.vmap(lambda i: _x().at[i].get(mode="clip"))(nx.asarray([0, 9, -9]))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 2.0, 0.0])


def test_bad_modes_name_the_argument():
    with pytest.raises(ValueError, match="mode"):
        _x().at[1].get(mode="wrap")
    with pytest.raises(ValueError, match="mode"):
        nx.take(_x(), 1, mode="nearest")
    with pytest.raises(IndexError):
        _x().at[5].get()
