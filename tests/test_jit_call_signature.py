"""The jitted call's fast signature (nx_rune/compiler/api.py ``_fast_signature``): arguments
that are tuples, lists and dicts of Tensors and Python numbers hit the cache without building a
PyTreeDef, with exactly the cache entries the general path would use."""
import collections

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.compiler.api import _fast_signature


def _step(p, x, lr):
    return {k: v - lr * x * v for k, v in p.items()}, lr * 2


def _params():
    return {"w": nx.asarray(np.arange(3.0, dtype=np.float32)),
            "b": nx.asarray(np.ones(3, np.float32))}


def test_dicts_and_python_floats_hit_the_cache_and_equal_eager():
    f = nx.jit(_step)
    p, x = _params(), nx.asarray(np.float32(0.5))
    for lr in (0.1, 0.2, 0.3):
        got, twice = f(p, x, lr)
        want, want2 = _step(p, x, lr)
        for k in p:
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(twice), want2, rtol=1e-6)
    info = f.cache_info()
    assert (info.hits, info.misses) == (2, 1)


def test_a_python_int_a_float_and_a_0d_tensor_are_different_signatures():
    f = nx.jit(lambda a, s: a * s)
    a = nx.asarray(np.ones(2, np.float32))
    r_float = f(a, 2.5)
    r_int = f(a, 3)
    r_tensor = f(a, nx.asarray(np.float32(2.0)))
    assert f.cache_info().misses == 3
    np.testing.assert_array_equal(np.asarray(r_float), [2.5, 2.5])
    np.testing.assert_array_equal(np.asarray(r_int), [3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(r_tensor), [2.0, 2.0])
    f(a, 7.0), f(a, 8), f(a, nx.asarray(np.float32(9.0)))
    assert f.cache_info().misses == 3 and f.cache_info().hits == 3
    assert r_float.dtype == np.float32 and r_int.dtype == np.float32


def test_x64_mode_gives_a_python_float_its_own_entry():
    f = nx.jit(lambda s: s * 2)
    assert f(1.5).dtype == np.float32
    with nx.enable_x64():
        r = f(1.5)
        assert r.dtype == np.float64
    assert f.cache_info().misses == 2
    assert f(2.5).dtype == np.float32
    assert f.cache_info().hits == 1


def test_structure_and_keys_are_part_of_the_signature():
    f = nx.jit(lambda t: sum(nx.sum(v) for v in nx.tree_util.tree_leaves(t)))
    a = nx.asarray(np.ones(2, np.float32))
    f({"a": a, "b": a})
    f({"a": a, "c": a})            # other keys: a new entry
    f([a, a])
    f((a, a))                      # a tuple is not a list
    f([a, [a]])
    assert f.cache_info().misses == 5
    f({"b": a, "a": a})            # insertion order does not matter: sorted keys
    assert f.cache_info().hits == 1


def test_what_the_fast_signature_declines_takes_the_general_path():
    leaves = []
    assert _fast_signature((True,), leaves) is None                     # bool
    assert _fast_signature(({1: 1.0, "a": 2.0},), []) is None           # unsortable keys
    assert _fast_signature((collections.OrderedDict(a=1.0),), []) is None
    assert _fast_signature((np.ones(2),), []) is None                    # a NumPy array
    assert _fast_signature((None,), []) is None
    f = nx.jit(lambda d, flag, arr: d["a"] * arr.sum() + flag)
    od = collections.OrderedDict(a=nx.asarray(np.float32(2.0)))
    out = f(od, True, np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(out), 7.0)
    f(od, False, np.ones(3, np.float32))
    assert f.cache_info().hits == 1 and f.cache_info().misses == 1
    with pytest.raises(ValueError, match="sortable"):
        f({1: nx.asarray(1.0), "a": nx.asarray(2.0)}, True, np.ones(3, np.float32))


def test_leaves_come_in_tree_flatten_order():
    a, b, c = (nx.asarray(np.full(2, v, np.float32)) for v in (1.0, 2.0, 3.0))
    tree = ({"z": a, "b": [b, 1.5]}, (c,))
    leaves = []
    assert _fast_signature(tree, leaves) is not None
    want = nx.tree_util.tree_leaves(tree)
    assert [np.asarray(v).tolist() for v in leaves] == \
        [np.asarray(v).tolist() for v in want]
