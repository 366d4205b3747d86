"""nx.tree_util (pytrees, registered node classes), pytrees through every transformation, and
nx.flatten_util.ravel_pytree.

Structures' reprs, leaf orders and node counts are pinned to what jax.tree_util 0.10.2 gives for
the same trees (JAX was run once to get them; it is not needed here).  Derivatives are checked
against float64 central differences of NumPy code.
"""
import collections
import inspect
import pickle
import typing

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import flatten_util
from nx_rune import tree_util as tu

rng = np.random.default_rng(0)


def f64(a):
    return nx.asarray(np.asarray(a, dtype=np.float64))


def npv(x):
    return np.asarray(x)


def fd_grad(f, x, eps=1e-6):
    """Central differences of scalar NumPy function f at float64 array x."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


Pair = collections.namedtuple("Pair", "w b")


class Linear:
    """A registered node class with static data (its name) and two array children."""

    def __init__(self, w, b, name="lin"):
        self.w, self.b, self.name = w, b, name


tu.register_pytree_node(Linear, lambda m: ((m.w, m.b), m.name),
                        lambda name, children: Linear(*children, name=name))


@tu.register_pytree_node_class
class Scaled:
    """Registered through the class decorator; ``scale`` is static data."""

    def __init__(self, x, scale):
        self.x, self.scale = x, scale

    def tree_flatten(self):
        return (self.x,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        return cls(children[0], scale)


# -- flatten / unflatten ------------------------------------------------------------------------

# (tree, leaves in flatten order, repr of the structure, num_leaves, num_nodes): JAX's answers
JAX_CASES = [
    ({"b": (1, None), "a": [2, 3]}, [2, 3, 1], "PyTreeDef({'a': [*, *], 'b': (*, None)})", 3, 7),
    (Pair(1, 2), [1, 2], "PyTreeDef(CustomNode(namedtuple[Pair], [*, *]))", 2, 3),
    (collections.OrderedDict([("z", 1), ("a", 2)]), [1, 2],
     "PyTreeDef(CustomNode(OrderedDict[('z', 'a')], [*, *]))", 2, 3),
    (collections.defaultdict(list, {"z": 1, "a": 2}), [2, 1],
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'z'))], [*, *]))", 2, 3),
    (None, [], "PyTreeDef(None)", 0, 1),
    (1, [1], "PyTreeDef(*)", 1, 1),
    ((1,), [1], "PyTreeDef((*,))", 1, 2),
    ((), [], "PyTreeDef(())", 0, 1),
    ([1, None, 2], [1, 2], "PyTreeDef([*, None, *])", 2, 4),
    (Linear(1, [2, 3], "hi"), [1, 2, 3], "PyTreeDef(CustomNode(Linear[hi], [*, [*, *]]))", 3, 5),
]


@pytest.mark.parametrize("tree,leaves,text,n_leaves,n_nodes", JAX_CASES)
def test_flatten_matches_jax(tree, leaves, text, n_leaves, n_nodes):
    got, td = tu.tree_flatten(tree)
    assert got == leaves
    assert repr(td) == text
    assert (td.num_leaves, td.num_nodes) == (n_leaves, n_nodes)
    assert tu.tree_leaves(tree) == leaves and tu.tree_structure(tree) == td


class Mark:
    def __init__(self, v):
        self.v = v


@pytest.mark.parametrize("tree", [c[0] for c in JAX_CASES], ids=[c[2] for c in JAX_CASES])
def test_unflatten_rebuilds_the_same_types(tree):
    leaves, td = tu.tree_flatten(tree)
    new = tu.tree_unflatten(td, [Mark(x) for x in leaves])
    assert type(new) is (Mark if td.node_data() is None else type(tree))
    assert tu.tree_structure(new) == td
    assert [m.v for m in tu.tree_leaves(new)] == leaves
    assert type(td.unflatten(leaves)) is type(tree)


def test_unflatten_keeps_node_data():
    od = tu.tree_unflatten(tu.tree_structure(collections.OrderedDict([("z", 1), ("a", 2)])),
                           [10, 20])
    assert list(od.items()) == [("z", 10), ("a", 20)]
    dd = tu.tree_unflatten(tu.tree_structure(collections.defaultdict(list, {"k": 1})), [5])
    assert dd.default_factory is list and dd["k"] == 5 and dd["missing"] == []
    m = tu.tree_unflatten(tu.tree_structure(Linear(0, 0, "enc")), [7, 8])
    assert isinstance(m, Linear) and (m.w, m.b, m.name) == (7, 8, "enc")
    s = tu.tree_unflatten(tu.tree_structure(Scaled(1.0, 3)), [4.0])
    assert isinstance(s, Scaled) and (s.x, s.scale) == (4.0, 3)
    assert tu.tree_unflatten(tu.tree_structure(Pair(1, 2)), [3, 4]) == Pair(3, 4)


def test_children_and_node_data():
    td = tu.tree_structure({"b": (1, None), "a": [2, 3]})
    assert [repr(c) for c in td.children()] == ["PyTreeDef([*, *])", "PyTreeDef((*, None))"]
    assert tu.treedef_children(td) == td.children()
    assert td.node_data() == (dict, ("a", "b"))
    assert tu.tree_structure(5).node_data() is None
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), (dict, ("a", "b")))
    assert tu.flatten_one_level(Linear(1, 2, "n")) == ((1, 2), (Linear, "n"))
    assert tu.flatten_one_level(nx.ones(2)) is None


def test_leaves_are_what_is_not_a_node():
    x = nx.ones(3)
    arr = np.ones(2)

    class MyDict(dict):          # an unregistered subclass is a leaf, as in JAX
        pass
    leaves = tu.tree_leaves([x, arr, "s", 2.5, MyDict(a=1)])
    assert len(leaves) == 5 and leaves[0] is x and leaves[1] is arr
    assert isinstance(leaves[4], MyDict)


def test_is_leaf_stops_the_descent():
    tree = [1, (2, 3), {"a": (4,)}]
    assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)) == [1, (2, 3), (4,)]
    leaves, td = tu.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert repr(td) == "PyTreeDef([*, *, {'a': *}])"
    out = tu.tree_map(lambda t: sum(t) if isinstance(t, tuple) else t, tree,
                      is_leaf=lambda x: isinstance(x, tuple))
    assert out == [1, 5, {"a": 4}]


def test_dict_keys_sorted_and_unsortable_keys_raise():
    assert tu.tree_leaves({"b": 1, "a": 2, "c": 3}) == [2, 1, 3]
    assert tu.tree_leaves({2: "x", 1: "y"}) == ["y", "x"]
    with pytest.raises(ValueError, match="sortable"):
        tu.tree_flatten({1: 1, "a": 2})


def test_unflatten_errors():
    td = tu.tree_structure({"b": (1, None), "a": [2, 3]})
    with pytest.raises(ValueError, match=r"leaves: expected 3 leaves.*got 2"):
        tu.tree_unflatten(td, [1, 2])
    with pytest.raises(TypeError, match="treedef"):
        tu.tree_unflatten([1, 2], [1, 2])


# -- treedef equality, hashing, pickling ----------------------------------------------------------

def test_treedef_equality_and_hash():
    s = tu.tree_structure
    assert s({"a": 1, "b": [2]}) == s({"b": [5], "a": nx.ones(3)})
    assert hash(s({"a": 1, "b": [2]})) == hash(s({"b": [5], "a": 0}))
    different = [s([1, 2]), s((1, 2)), s(Pair(1, 2)), s({"a": 1, "b": 2}), s({"a": 1, "c": 2}),
                 s(collections.OrderedDict([("a", 1), ("b", 2)])),
                 s(collections.OrderedDict([("b", 1), ("a", 2)])), s([1, None]), s([1, [2]]),
                 s(Linear(1, 2, "x")), s(Linear(1, 2, "y")), s([1, 2, 3]), s(None), s(1)]
    for i, a in enumerate(different):
        for j, b in enumerate(different):
            assert (a == b) == (i == j), (a, b)
    table = {d: i for i, d in enumerate(different)}
    assert len(table) == len(different)
    assert table[s(Linear(5, 6, "y"))] == different.index(s(Linear(1, 2, "y")))
    assert s([1, 2]) != "PyTreeDef([*, *])"


def test_treedef_pickles():
    for tree in [{"b": (1, None), "a": [2, 3]}, Pair(1, 2), collections.OrderedDict(z=1),
                 Linear(1, 2, "p"), 7, None]:
        td = tu.tree_structure(tree)
        back = pickle.loads(pickle.dumps(td))
        assert back == td and hash(back) == hash(td)
        assert back.unflatten(tu.tree_leaves(tree)).__class__ is type(tree)


# -- tree_map, tree_reduce, tree_all ------------------------------------------------------------

def test_tree_map_values():
    t1 = {"w": [1, 2], "b": (3, None)}
    t2 = {"w": [10, 20], "b": (30, None)}
    assert tu.tree_map(lambda x: x * 2, t1) == {"w": [2, 4], "b": (6, None)}
    assert tu.tree_map(lambda x, y: x + y, t1, t2) == {"w": [11, 22], "b": (33, None)}
    assert tu.tree_map(lambda x, y, z: x + y + z, [1], [2], [3]) == [6]
    m = tu.tree_map(lambda x: x + 1, Linear(1, 2, "k"))
    assert isinstance(m, Linear) and (m.w, m.b, m.name) == (2, 3, "k")
    # the rest may be deeper (tree is a prefix of them): their subtrees are passed whole (JAX)
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [(1, 2), 3]) == [(1, (1, 2)), (2, 3)]
    assert tu.tree_map(lambda x, y: (x, y), [1, 1], [None, 3]) == [(1, None), (1, 3)]


@pytest.mark.parametrize("a,b,msg", [
    ([1, 2], (1, 2), r"PyTreeDef\(\(\*, \*\)\).*PyTreeDef\(\[\*, \*\]\).*expected a list, got a "
                     r"tuple"),
    ({"a": 1}, {"b": 1}, r"PyTreeDef\(\{'b': \*\}\).*PyTreeDef\(\{'a': \*\}\).*keys differ"),
    ([1, 2], [1, 2, 3], r"PyTreeDef\(\[\*, \*, \*\]\).*PyTreeDef\(\[\*, \*\]\).*length 2, got "
                        r"length 3"),
    ([None, 1], [2, 3], r"at \[0\]: expected None, got a leaf of type int"),
    ({"a": [1, 2]}, {"a": 5}, r"at \['a'\]: expected a list, got a leaf of type int"),
    (Linear(1, 2, "x"), Linear(1, 2, "y"), r"Linear\[y\].*Linear\[x\].*node data differ"),
    (Pair(1, 2), (1, 2), r"expected a Pair, got a tuple"),
])
def test_tree_map_structure_mismatch_names_both(a, b, msg):
    with pytest.raises(ValueError, match=msg):
        tu.tree_map(lambda x, y: x, a, b)


def test_tree_reduce_and_all():
    assert tu.tree_reduce(lambda a, b: a + b, {"x": [1, 2], "y": 3}) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 10) == 10
    assert tu.tree_reduce(lambda a, b: a * b, [2, (3,)], 5) == 30
    with pytest.raises(TypeError, match="no leaves"):
        tu.tree_reduce(lambda a, b: a + b, [None, ()])
    assert tu.tree_all([True, (1, {"a": "s"})]) is True
    assert tu.tree_all([True, (0,)]) is False
    assert tu.tree_all([]) is True and tu.tree_all(None) is True


# -- registration ---------------------------------------------------------------------------------

def test_registration_errors():
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node(Linear, lambda m: ((), None), lambda a, c: None)
    for builtin in (tuple, list, dict, type(None), collections.OrderedDict):
        with pytest.raises(ValueError, match="already registered"):
            tu.register_pytree_node(builtin, lambda m: ((), None), lambda a, c: None)
    with pytest.raises(TypeError, match="nodetype"):
        tu.register_pytree_node("Linear", lambda m: ((), None), lambda a, c: None)

    class Fresh:
        pass
    with pytest.raises(TypeError, match="flatten_func"):
        tu.register_pytree_node(Fresh, None, lambda a, c: None)
    with pytest.raises(TypeError, match="unflatten_func"):
        tu.register_pytree_node(Fresh, lambda m: ((), None), 3)

    class NoMethods:
        pass
    with pytest.raises(TypeError, match="tree_flatten"):
        tu.register_pytree_node_class(NoMethods)


def test_bad_flatten_function_raises_type_error():
    class Bad:
        pass
    tu.register_pytree_node(Bad, lambda b: [1, 2, 3], lambda a, c: Bad())

    class Bad2:
        pass
    tu.register_pytree_node(Bad2, lambda b: (5, None), lambda a, c: Bad2())
    with pytest.raises(TypeError, match=r"Bad must return \(children, aux_data\)"):
        tu.tree_flatten([Bad()])
    with pytest.raises(TypeError, match="Bad2 returned children of type int"):
        tu.tree_flatten(Bad2())


def test_a_type_seen_as_leaf_becomes_a_node_once_registered():
    class Late:
        def __init__(self, v):
            self.v = v
    assert len(tu.tree_leaves([Late(1)])) == 1 and isinstance(tu.tree_leaves([Late(1)])[0], Late)
    tu.register_pytree_node(Late, lambda x: ((x.v,), None), lambda a, c: Late(c[0]))
    assert tu.tree_leaves([Late(1), Late([2, 3])]) == [1, 2, 3]


# -- pytrees through the transformations (registered classes included) ---------------------------

X = rng.normal(size=(4, 3))
W0, B0 = rng.normal(size=(3, 2)), rng.normal(size=(2,))


def _np_loss(w, b):
    return np.sum(np.sin(X @ w + b) ** 2)


def _loss(m):
    return nx.sum(nx.sin(f64(X) @ m.w + m.b) ** 2)


def test_grad_of_registered_class_matches_finite_differences():
    m = Linear(f64(W0), f64(B0), "enc")
    g = nx.grad(_loss)(m)
    assert isinstance(g, Linear) and g.name == "enc"
    np.testing.assert_allclose(npv(g.w), fd_grad(lambda w: _np_loss(w, B0), W0), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(npv(g.b), fd_grad(lambda b: _np_loss(W0, b), B0), rtol=1e-6,
                               atol=1e-8)
    (v, aux), g2 = nx.value_and_grad(lambda m: (_loss(m), Scaled(m.w, 2)), has_aux=True)(m)
    assert isinstance(aux, Scaled) and aux.scale == 2 and isinstance(aux.x, nx.Tensor)
    np.testing.assert_allclose(float(v), _np_loss(W0, B0), rtol=1e-12)
    np.testing.assert_allclose(npv(g2.w), npv(g.w), rtol=1e-12)


def test_namedtuple_ordereddict_and_decorated_class_inputs():
    p = collections.OrderedDict([("w", f64(W0)), ("b", f64(B0))])
    g = nx.grad(lambda p: _loss(Linear(p["w"], p["b"])))(p)
    assert isinstance(g, collections.OrderedDict) and list(g) == ["w", "b"]
    np.testing.assert_allclose(npv(g["b"]), fd_grad(lambda b: _np_loss(W0, b), B0), rtol=1e-6)
    g = nx.grad(lambda p: _loss(Linear(p.w, p.b)))(Pair(f64(W0), f64(B0)))
    assert isinstance(g, Pair)
    np.testing.assert_allclose(npv(g.w), fd_grad(lambda w: _np_loss(w, B0), W0), rtol=1e-6)
    s = Scaled(f64([1.0, 2.0]), 3.0)
    g = nx.grad(lambda s: nx.sum(s.x ** 3) * s.scale)(s)
    assert isinstance(g, Scaled) and g.scale == 3.0
    np.testing.assert_allclose(npv(g.x), 9.0 * np.array([1.0, 4.0]), rtol=1e-12)


def test_vjp_and_jvp_with_registered_inputs_and_outputs():
    m = Linear(f64(W0), f64(B0), "enc")

    def f(m):
        return Scaled(nx.tanh(f64(X) @ m.w + m.b), 0.5)

    def f_np(w, b):
        return np.tanh(X @ w + b)
    out, vjp_fn = nx.vjp(f, m)
    assert isinstance(out, Scaled) and out.scale == 0.5
    np.testing.assert_allclose(npv(out.x), f_np(W0, B0), rtol=1e-12)
    u = rng.normal(size=(4, 2))
    (ct,) = vjp_fn(Scaled(f64(u), 0.5))
    assert isinstance(ct, Linear) and ct.name == "enc"
    np.testing.assert_allclose(npv(ct.w), fd_grad(lambda w: np.sum(u * f_np(w, B0)), W0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(npv(ct.b), fd_grad(lambda b: np.sum(u * f_np(W0, b)), B0),
                               rtol=1e-6, atol=1e-8)
    (ct0,) = vjp_fn(Scaled(None, 0.5))              # None: a zero cotangent
    np.testing.assert_array_equal(npv(ct0.w), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="structure"):
        vjp_fn(Scaled(f64(u), 0.25))                 # different static data
    with pytest.raises(ValueError, match="structure"):
        vjp_fn(f64(u))
    tw, tb = rng.normal(size=(3, 2)), rng.normal(size=(2,))
    out, tout = nx.jvp(f, (m,), (Linear(f64(tw), f64(tb), "enc"),))
    assert isinstance(tout, Scaled)
    eps = 1e-6
    fd = (f_np(W0 + eps * tw, B0 + eps * tb) - f_np(W0 - eps * tw, B0 - eps * tb)) / (2 * eps)
    np.testing.assert_allclose(npv(tout.x), fd, rtol=1e-6, atol=1e-9)


def test_jacobians_and_hessian_of_registered_class():
    m = Linear(f64(W0), f64(B0), "enc")

    def f(m):
        return nx.tanh(f64(X) @ m.w + m.b)
    jw_fd = np.stack([fd_grad(lambda w: np.tanh(X @ w + B0)[i], W0)
                      for i in np.ndindex(4, 2)]).reshape(4, 2, 3, 2)
    for jac in (nx.jacfwd, nx.jacrev):
        J = jac(f)(m)
        assert isinstance(J, Linear) and J.name == "enc"
        assert J.w.shape == (4, 2, 3, 2) and J.b.shape == (4, 2, 2)
        np.testing.assert_allclose(npv(J.w), jw_fd, rtol=1e-6, atol=1e-8)
    H = nx.hessian(_loss)(m)
    assert isinstance(H, Linear) and isinstance(H.w, Linear) and isinstance(H.b, Linear)
    # d/dw of the exact gradient, by finite differences of the AD gradient's NumPy formula
    def grad_b(w):
        z = X @ w + B0
        return np.sum(2 * np.sin(z) * np.cos(z), axis=0)
    hbw_fd = np.stack([fd_grad(lambda w: grad_b(w)[j], W0) for j in range(2)])
    np.testing.assert_allclose(npv(H.b.w), hbw_fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(npv(H.w.b), np.transpose(hbw_fd, (1, 2, 0)), rtol=1e-6,
                               atol=1e-8)


def test_custom_vjp_with_registered_class():
    @nx.custom_vjp
    def scaled_norm(s):
        return Scaled(nx.sum(s.x * s.x) * s.scale, s.scale)

    def fwd(s):
        return scaled_norm(s), (s.x, s.scale)

    def bwd(res, ct):
        x, scale = res
        return (Scaled(ct.x * 2.0 * scale * x * 10.0, scale),)   # 10x: seen only via bwd
    scaled_norm.defvjp(fwd, bwd)
    s = Scaled(f64([1.0, -2.0]), 3.0)
    g = nx.grad(lambda s: scaled_norm(s).x)(s)
    assert isinstance(g, Scaled) and g.scale == 3.0
    np.testing.assert_allclose(npv(g.x), [60.0, -120.0], rtol=1e-12)


# -- ravel_pytree -------------------------------------------------------------------------------

def test_ravel_pytree_values_and_round_trip():
    a = rng.normal(size=(2, 3)).astype(np.float32)
    b = rng.normal(size=(4,)).astype(np.float32)
    c = np.float32(1.5)
    tree = {"layer": Linear(nx.asarray(a), nx.asarray(b), "L"), "c": [nx.asarray(c), None]}
    flat, unravel = flatten_util.ravel_pytree(tree)
    assert flat.shape == (11,) and flat.dtype == np.float32
    # flatten order: dict keys sorted -> "c" before "layer"
    np.testing.assert_array_equal(npv(flat), np.concatenate([[c], a.ravel(), b]))
    back = unravel(flat)
    assert tu.tree_structure(back) == tu.tree_structure(tree) and back["layer"].name == "L"
    np.testing.assert_array_equal(npv(back["layer"].w), a)
    assert back["layer"].w.shape == (2, 3) and back["c"][0].shape == ()
    np.testing.assert_array_equal(npv(unravel(np.arange(11.0, dtype=np.float32))["layer"].b),
                                  [7, 8, 9, 10])


@pytest.mark.parametrize("leaves,dtype", [
    ([np.ones(2, np.float32), np.ones(3, np.float32)], np.float32),
    ([np.ones(2, np.float32), np.ones(3, np.float64)], np.float64),
    ([np.ones(2, np.float32), 2.0], np.float32),                  # Python floats are weak
    ([np.ones(2, np.int32), 2.0], np.float32),
    ([np.ones(2, np.int32), np.ones(1, np.int8)], np.int32),
    ([np.ones(2, np.float32), np.ones(1, np.complex64)], np.complex64),
    ([1.0, 2], np.float32),
    ([1, 2], np.int32),
    ([np.ones(2, np.int32), np.ones(2, np.float32)], np.float32),  # as JAX's ravel_pytree
])
def test_ravel_pytree_promotes_dtypes(leaves, dtype):
    flat, unravel = flatten_util.ravel_pytree(leaves)
    assert flat.dtype == dtype
    ref = np.concatenate([np.ravel(np.asarray(x)) for x in leaves]).astype(dtype)
    np.testing.assert_array_equal(npv(flat), ref)
    if dtype == np.complex64:        # the real leaf comes back through a complex -> real cast
        with pytest.warns(np.exceptions.ComplexWarning):
            back = unravel(flat)
    else:
        back = unravel(flat)
    for orig, got in zip(leaves, back):
        want = np.asarray(orig).dtype if isinstance(orig, np.ndarray) else \
            (np.float32 if isinstance(orig, float) else np.int32)
        assert got.dtype == want and got.shape == np.shape(orig)
        np.testing.assert_array_equal(npv(got), np.asarray(orig, dtype=want))


def test_ravel_pytree_edge_cases_and_errors():
    flat, unravel = flatten_util.ravel_pytree({"a": None, "b": []})
    assert flat.shape == (0,) and flat.dtype == np.float32
    assert unravel(flat) == {"a": None, "b": []}
    # one dtype: unravel keeps the vector's dtype (JAX's rule)
    flat, unravel = flatten_util.ravel_pytree([nx.ones((2,)), nx.ones((1, 1))])
    back = unravel(f64([1.0, 2.0, 3.0]))
    assert back[0].dtype == np.float64 and back[1].shape == (1, 1)
    with pytest.raises(ValueError, match=r"flat: .*shape \(3,\), got shape \(4,\)"):
        unravel(f64([1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(ValueError, match="flat"):
        unravel(f64([[1.0, 2.0, 3.0]]))
    # several dtypes: the vector must have the promoted dtype
    flat, unravel = flatten_util.ravel_pytree([nx.ones(2), f64([1.0])])
    with pytest.raises(TypeError, match="float64.*got float32"):
        unravel(nx.ones(3))
    with pytest.raises(TypeError, match="pytree"):
        flatten_util.ravel_pytree([nx.ones(2), "text"])


def test_ravel_pytree_is_differentiable():
    tree = {"w": f64(W0), "b": f64(B0)}

    def loss_of_flat(flat):
        p = unravel(flat)
        return _loss(Linear(p["w"], p["b"]))

    flat, unravel = flatten_util.ravel_pytree(tree)
    flat0 = npv(flat).copy()

    def np_loss_of_flat(v):
        return _np_loss(v[2:].reshape(3, 2), v[:2])
    g = nx.grad(loss_of_flat)(flat)
    assert g.shape == (8,)
    np.testing.assert_allclose(npv(g), fd_grad(np_loss_of_flat, flat0), rtol=1e-6, atol=1e-8)
    # through ravel: the gradient of a function of the flat vector comes back as the tree
    gt = nx.grad(lambda t: nx.sum(nx.sin(flatten_util.ravel_pytree(t)[0]) ** 3))(tree)
    np.testing.assert_allclose(npv(gt["w"]), 3 * np.sin(W0) ** 2 * np.cos(W0), rtol=1e-12)
    np.testing.assert_allclose(npv(gt["b"]), 3 * np.sin(B0) ** 2 * np.cos(B0), rtol=1e-12)
    # forward mode and second order through unravel
    t = rng.normal(size=8)
    _, tout = nx.jvp(loss_of_flat, (flat,), (f64(t),))
    eps = 1e-6
    fd = (np_loss_of_flat(flat0 + eps * t) - np_loss_of_flat(flat0 - eps * t)) / (2 * eps)
    np.testing.assert_allclose(float(tout), fd, rtol=1e-6)
    H = nx.hessian(loss_of_flat)(flat)
    H_fd = np.stack([fd_grad(lambda v: np.asarray(nx.grad(loss_of_flat)(f64(v)))[i], flat0)
                     for i in range(8)])
    np.testing.assert_allclose(npv(H), H_fd, rtol=1e-5, atol=1e-7)


def test_mixed_dtype_unravel_casts_back_differentiably():
    tree = [nx.ones(2), f64([3.0])]               # float32 and float64: the vector is float64
    flat, unravel = flatten_util.ravel_pytree(tree)
    g = nx.grad(lambda v: nx.sum(unravel(v)[0] * 2.0) + nx.sum(unravel(v)[1] ** 2))(flat)
    assert g.dtype == np.float64
    np.testing.assert_allclose(npv(g), [2.0, 2.0, 6.0])
    assert [x.dtype for x in unravel(flat)] == [np.float32, np.float64]


# -- the public surface -------------------------------------------------------------------------

def test_namespaces_and_annotations():
    assert nx.tree_util is tu and nx.flatten_util is flatten_util
    for mod in (tu, flatten_util):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                assert obj.__doc__, f"{mod.__name__}.{name} has no docstring"
                hints = typing.get_type_hints(obj)
                params = inspect.signature(obj).parameters
                assert "return" in hints and set(params) <= set(hints), name
    # autodiff flattens with the same module (one implementation, one registry)
    from nx_rune.autodiff import pytree
    assert pytree.tree_flatten is tu.tree_flatten and pytree.tree_unflatten is tu.tree_unflatten


# -- Partial (jax.tree_util.Partial) ------------------------------------------------------------

def test_partial_is_a_pytree_of_its_bound_arguments():
    f = lambda a, b, c=1.0: a * b + c
    p = tu.Partial(f, nx.ones(2), c=3.0)
    np.testing.assert_array_equal(np.asarray(p(2.0)), [5.0, 5.0])
    leaves = tu.tree_leaves(p)
    assert len(leaves) == 2 and leaves[1] == 3.0
    doubled = tu.tree_map(lambda v: v * 2, p)
    assert isinstance(doubled, tu.Partial) and doubled.func is f
    np.testing.assert_array_equal(np.asarray(doubled(2.0)), [10.0, 10.0])
    # a Partial of a Partial (or of functools.partial): every bound argument is a leaf
    q = tu.Partial(p, 4.0)
    assert q.func is f and len(tu.tree_leaves(q)) == 3
    np.testing.assert_array_equal(np.asarray(q()), [7.0, 7.0])
    with pytest.raises(TypeError, match="func must be callable"):
        tu.Partial(3.0)


def test_partial_crosses_transformations():
    p = tu.Partial(lambda a, b: a * b, nx.arange(3.0))
    np.testing.assert_array_equal(np.asarray(nx.jit(lambda g, y: g(y))(p, 2.0)), [0.0, 2.0, 4.0])
    made = nx.jit(lambda x: tu.Partial(lambda a, b: a + b, x))(nx.ones(2))
    assert isinstance(made, tu.Partial)
    np.testing.assert_array_equal(np.asarray(made(5.0)), [6.0, 6.0])
    g = nx.grad(lambda h: nx.sum(h(2.0)))(p)
    assert isinstance(g, tu.Partial)
    np.testing.assert_array_equal(np.asarray(g.args[0]), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(nx.vmap(lambda h: h(2.0))(p)), [0.0, 2.0, 4.0])


def test_key_path_functions_under_their_tree_util_names():
    # jax.tree_util's names for the key-path functions (expected: jax 0.10.2's keystr texts)
    P = collections.namedtuple("P", ["mu", "sigma"])
    tree = {"w": [1.0, (2.0, None)], "b": P(3.0, 4.0),
            "o": collections.OrderedDict(z=5.0, a=6.0), "p": tu.Partial(max, 7.0)}
    pairs, td = tu.tree_flatten_with_path(tree)
    assert td == tu.tree_structure(tree)
    assert [(tu.keystr(p), v) for p, v in pairs] == [
        ("['b'].mu", 3.0), ("['b'].sigma", 4.0), ("['o']['z']", 5.0), ("['o']['a']", 6.0),
        ("['p'][<flat index 0>][0]", 7.0), ("['w'][0]", 1.0), ("['w'][1][0]", 2.0)]
    assert tu.tree_map_with_path(lambda p, x, y: tu.keystr(p) + str(x + y), {"a": [1, 2]},
                                 {"a": [10, 20]}) == {"a": ["['a'][0]11", "['a'][1]22"]}
    assert tu.tree_leaves_with_path([1, {"k": 2}]) == [
        ((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1), tu.DictKey("k")), 2)]
    assert tu.GetAttrKey is nx.tree.GetAttrKey and tu.FlattenedIndexKey is nx.tree.FlattenedIndexKey
    with pytest.raises(ValueError, match="tree_map_with_path: argument 2"):
        tu.tree_map_with_path(lambda p, x, y: x, [1, 2], [1])
    with pytest.raises(ValueError, match="map_with_path: argument 2"):
        nx.tree.map_with_path(lambda p, x, y: x, [1, 2], [1])
