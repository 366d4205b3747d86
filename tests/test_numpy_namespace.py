"""JAX's module names on nx_rune: nx_rune.numpy (``import jax.numpy as jnp`` ->
``import nx_rune.numpy as jnp``), nx_rune.tree (``jax.tree``), nx.ndarray, and the submodules as
attributes of the package (``nx.nn``, ``nx.numpy``, ``nx.tree``, ``nx.example_libraries``)."""
import collections
import subprocess
import sys
import types

import numpy as np
import pytest

import nx_rune as nx
import nx_rune.numpy as jnp

# -- nx_rune.numpy -----------------------------------------------------------------------------

def test_the_array_names_are_the_package_s():
    for name in ("sum", "exp", "matmul", "where", "asarray", "zeros", "float32", "pi", "inf",
                 "newaxis", "einsum", "softmax", "argsort", "concatenate", "linspace"):
        assert getattr(jnp, name) is getattr(nx, name), name
    assert jnp.linalg.norm is nx.linalg.norm and jnp.fft.fft is nx.fft.fft


def test_every_array_name_of_the_package_is_there():
    missing = [n for n in dir(nx) if n in nx.frontend.__all__ and n not in dir(jnp)]
    assert not missing
    assert len(dir(jnp)) > 250


@pytest.mark.parametrize("name", ["grad", "jit", "vmap", "value_and_grad", "jacfwd", "vjp",
                                  "custom_jvp", "checkpoint", "make_jaxpr", "enable_x64",
                                  "random", "lax", "config", "nn", "tree", "numpy",
                                  "stop_gradient", "check_grads"])
def test_the_transformations_and_submodules_are_not(name):
    assert name not in dir(jnp)
    with pytest.raises(AttributeError, match=name):
        getattr(jnp, name)


def test_names_added_to_the_package_appear(monkeypatch):
    # follows the package namespace, not a copied list: a function added to nx later is in
    # nx.numpy too (and a transformation added later is not)
    def sinc2(x):
        """A new array function."""
        return x
    sinc2.__module__ = "nx_rune.frontend.elementwise"

    def new_transform(f):
        """A new transformation."""
        return f
    new_transform.__module__ = "nx_rune.compiler.api"
    monkeypatch.setattr(nx, "sinc2", sinc2, raising=False)
    monkeypatch.setattr(nx, "new_transform", new_transform, raising=False)
    assert jnp.sinc2 is sinc2 and "sinc2" in dir(jnp) and "sinc2" in jnp.__all__
    assert "new_transform" not in dir(jnp)
    with pytest.raises(AttributeError):
        jnp.new_transform
    vars(jnp).pop("sinc2", None)     # (the module keeps a name once used)


def test_star_import():
    ns = {}
    exec("from nx_rune.numpy import *", ns)
    assert ns["sum"] is nx.sum and ns["ndarray"] is nx.ndarray and ns["dtype"] is np.dtype
    assert "grad" not in ns and "jit" not in ns


def test_submodule_imports():
    import nx_rune.numpy.fft as jfft
    import nx_rune.numpy.linalg as jla
    assert jla.solve is nx.linalg.solve and jfft.rfft is nx.fft.rfft


def test_dtype_names():
    assert jnp.dtype is np.dtype
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.issubdtype(nx.ones(2, dtype=jnp.int32).dtype, jnp.integer)
    assert not jnp.issubdtype(jnp.float64, jnp.complexfloating)
    assert jnp.dtype("float32") == jnp.float32


# -- ndarray -------------------------------------------------------------------------------------

def test_ndarray_isinstance():
    assert nx.ndarray is jnp.ndarray
    assert isinstance(nx.ones(3), jnp.ndarray)
    assert isinstance(jnp.asarray(2.0), jnp.ndarray)
    assert not isinstance(np.ones(3), jnp.ndarray)
    assert not isinstance(1.0, jnp.ndarray) and not isinstance([1.0], jnp.ndarray)


def test_ndarray_isinstance_of_traced_values():
    # as JAX's isinstance(x, jnp.ndarray): True for the values jit, grad, vmap and jvp pass in
    seen = []

    def f(x):
        seen.append(isinstance(x, jnp.ndarray))
        return (x * x).sum()
    x = nx.ones(3)
    nx.jit(f)(x)
    nx.grad(f)(x)
    nx.vmap(f)(nx.ones((2, 3)))
    nx.jvp(f, (x,), (x,))
    nx.jit(nx.vmap(nx.grad(f)))(nx.ones((2, 3)))
    assert seen and all(seen)


# -- the package's submodules ----------------------------------------------------------------------

def test_submodules_are_attributes_after_import_nx_rune():
    code = ("import nx_rune as nx; "
            "print(nx.nn.relu.__name__, nx.numpy.sum is nx.sum, nx.tree.map.__name__, "
            "nx.example_libraries.optimizers.adam.__name__, nx.nn.initializers.he_normal.__name__,"
            " nx.example_libraries.stax.Dense.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["relu", "True", "map", "adam", "he_normal", "Dense"]
    for mod in (nx.nn, nx.numpy, nx.tree, nx.example_libraries):
        assert isinstance(mod, types.ModuleType)


def test_a_jax_program_runs_with_the_imports_renamed():
    # JAX's "thinking in JAX" style: jnp, grad, jit, vmap, random, nn, tree; only the imports
    # differ from the JAX program
    import nx_rune.numpy as jnp
    from nx_rune import grad, jit, nn, random, tree, vmap

    def predict(params, x):
        w, b = params
        return nn.tanh(jnp.dot(x, w) + b)

    def loss(params, x, y):
        return jnp.mean((predict(params, x) - y) ** 2)

    k1, k2 = random.split(random.PRNGKey(0))
    params = (nn.initializers.glorot_normal()(k1, (3, 2)), jnp.zeros(2))
    x = random.normal(k2, (8, 3))
    y = jnp.ones((8, 2))
    step = jit(lambda p: tree.map(lambda a, g: a - 0.1 * g, p, grad(loss)(p, x, y)))
    before = float(loss(params, x, y))
    for _ in range(5):
        params = step(params)
    assert float(loss(params, x, y)) < before
    per_example = vmap(lambda xi: predict(params, xi))(x)
    np.testing.assert_allclose(per_example, predict(params, x), rtol=1e-6)
    assert isinstance(per_example, jnp.ndarray)


# -- nx_rune.tree ----------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])
TREE = {"a": [1, 2], "b": (3, {"c": 4}), "d": None, "e": Point(5, 6)}


def test_tree_functions_are_tree_util_s():
    assert nx.tree.leaves(TREE) == [1, 2, 3, 4, 5, 6]
    leaves, td = nx.tree.flatten(TREE)
    assert td == nx.tree.structure(TREE) == nx.tree_util.tree_structure(TREE)
    assert nx.tree.unflatten(td, [x * 10 for x in leaves])["e"] == Point(50, 60)
    assert nx.tree.map(lambda a, b: a + b, TREE, TREE)["b"] == (6, {"c": 8})
    assert nx.tree.reduce(lambda a, b: a + b, TREE) == 21
    assert nx.tree.reduce(lambda a, b: a + b, TREE, 100) == 121
    assert nx.tree.all(TREE) and not nx.tree.all([1, 0])
    assert nx.tree.leaves([1, (2, 3)], is_leaf=lambda t: isinstance(t, tuple)) == [1, (2, 3)]


def test_tree_transpose():
    outer = nx.tree.structure([0, 0, 0])
    inner = nx.tree.structure({"m": 0, "v": 0})
    t = [{"m": 1, "v": 2}, {"m": 3, "v": 4}, {"m": 5, "v": 6}]
    assert nx.tree.transpose(outer, inner, t) == {"m": [1, 3, 5], "v": [2, 4, 6]}
    assert nx.tree.transpose(outer, None, t) == {"m": [1, 3, 5], "v": [2, 4, 6]}
    with pytest.raises(ValueError, match="outer leaf 1"):
        nx.tree.transpose(outer, inner, [{"m": 1, "v": 2}, (3, 4), {"m": 5, "v": 6}])
    with pytest.raises(ValueError, match="outer_treedef"):
        nx.tree.transpose(outer, inner, t[:2])
    with pytest.raises(TypeError, match="PyTreeDef"):
        nx.tree.transpose([0], inner, t)


def test_tree_key_paths():
    pairs = nx.tree.leaves_with_path(TREE)
    paths = [nx.tree.keystr(p) for p, _ in pairs]
    assert paths == ["['a'][0]", "['a'][1]", "['b'][0]", "['b'][1]['c']", "['e'].x", "['e'].y"]
    assert [v for _, v in pairs] == nx.tree.leaves(TREE)
    p0 = pairs[0][0]
    assert p0 == (nx.tree.DictKey("a"), nx.tree.SequenceKey(0))
    flat, td = nx.tree.flatten_with_path(TREE)
    assert flat == pairs and td == nx.tree.structure(TREE)
    out = nx.tree.map_with_path(lambda p, v, w: (nx.tree.keystr(p), v + w), TREE, TREE)
    assert out["b"][1]["c"] == ("['b'][1]['c']", 8)

    @nx.tree_util.register_pytree_node_class
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)
    keys = [p for p, _ in nx.tree.leaves_with_path([Box(1, 2)])]
    assert keys == [(nx.tree.SequenceKey(0), nx.tree.FlattenedIndexKey(0)),
                    (nx.tree.SequenceKey(0), nx.tree.FlattenedIndexKey(1))]


def test_tree_broadcast_and_reduce_associative():
    assert nx.tree.broadcast([1, {"a": 2}], [(0, 0), {"a": [0, 0, 0]}]) == \
        [(1, 1), {"a": [2, 2, 2]}]
    assert nx.tree.broadcast(5, {"x": (0, 0)}) == {"x": (5, 5)}
    with pytest.raises(ValueError, match="prefix"):
        nx.tree.broadcast([1, 2], [0, 0, 0])
    calls = []

    def add(a, b):
        calls.append((a, b))
        return a + b
    assert nx.tree.reduce_associative(add, [1, 2, 3, 4, 5]) == 15
    assert calls == [(1, 2), (4, 5), (3, 9), (3, 12)]     # halves first: ((1+2)+(3+(4+5)))
    assert nx.tree.reduce_associative(add, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        nx.tree.reduce_associative(add, [])


# -- jax.Array and jax.named_scope -------------------------------------------------------------

def test_array_is_the_type_of_arrays_and_traced_values():
    assert isinstance(nx.ones(2), nx.Array) and nx.Array is nx.ndarray
    assert not isinstance(np.ones(2), nx.Array)
    seen = []
    nx.jit(lambda x: seen.append(isinstance(x, nx.Array)) or x)(nx.ones(2))
    nx.grad(lambda x: seen.append(isinstance(x, nx.Array)) or nx.sum(x))(nx.ones(2))
    nx.vmap(lambda x: seen.append(isinstance(x, nx.Array)) or x)(nx.ones(2))
    assert seen == [True, True, True]


def test_named_scope_is_a_context_manager_and_a_decorator():
    with nx.named_scope("block"):
        y = nx.ones(2) * 2

    @nx.named_scope("layer")
    def f(x):
        return x + 1
    np.testing.assert_array_equal(np.asarray(nx.jit(f)(y)), [3.0, 3.0])
    with pytest.raises(TypeError, match="named_scope: name must be a string"):
        with nx.named_scope(3):
            pass
