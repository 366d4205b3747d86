"""The VJP object returned by nx.vjp (JAX's first-class VJPs, docs/new_docs/301/vjp-objects.md)
by the import rename.  Numbers pinned from jax 0.10.2 running the page's cells."""
import numpy as np
import pytest

import nx_rune as jax
import nx_rune.numpy as jnp
from nx_rune import grad, jit


def layer(W, x):
    return jnp.tanh(x @ W)


# jax 0.10.2: the cotangents of layer at W1 = ones((3, 3)), x0 = ones((2, 3)), y_bar = ones
# (printed to 6 digits)
DW1 = np.full((3, 3), 0.0197322, np.float32)
DX0 = np.full((2, 3), 0.0295983, np.float32)


def _fwd_and_bwd(f):
    def fwd(*args):
        return jax.vjp(f, *args)

    def bwd(f_vjp, y_bar):
        return f_vjp(y_bar)
    return jit(fwd), jit(bwd)


def test_split_forward_and_backward_through_jit():
    fwd, bwd = _fwd_and_bwd(layer)
    W1, W2 = jnp.ones((3, 3)), 2. * jnp.ones((3, 3))
    x0 = jnp.ones((2, 3))
    x1, res1 = fwd(W1, x0)
    x2, res2 = fwd(W2, x1)
    dW2, dx1 = bwd(res2, jnp.ones_like(x2))
    dW1, dx0 = bwd(res1, dx1)

    def two_layers(W1, W2, x):
        return jnp.sum(layer(W2, layer(W1, x)))
    dW1_ref, dW2_ref = grad(two_layers, argnums=(0, 1))(W1, W2, x0)
    # jax 0.10.2 prints: True True
    assert bool(jnp.allclose(dW1, dW1_ref)) and bool(jnp.allclose(dW2, dW2_ref))
    # each compiled once
    assert fwd.cache_info().misses == 1 and bwd.cache_info().misses == 1
    # one layer's cotangents: jax 0.10.2's values
    _, res = fwd(W1, x0)
    dW, dx = bwd(res, jnp.ones((2, 3)))
    np.testing.assert_allclose(np.asarray(dW), DW1, rtol=5e-5)
    np.testing.assert_allclose(np.asarray(dx), DX0, rtol=5e-5)


def test_fwd_and_bwd_agrees():
    W1, x0 = jnp.ones((3, 3)), jnp.ones((2, 3))
    fwd, bwd = jax.fwd_and_bwd(layer, argnums=(0, 1))
    y, residuals = fwd(W1, x0)
    dW1, dx0 = bwd(residuals, jnp.ones_like(y))
    assert (dW1.shape, dx0.shape) == ((3, 3), (2, 3))
    np.testing.assert_allclose(np.asarray(dW1), DW1, rtol=5e-5)
    np.testing.assert_allclose(np.asarray(dx0), DX0, rtol=5e-5)


def test_what_the_object_saves():
    W1, x0 = jnp.ones((3, 3)), jnp.ones((2, 3))
    y, f_vjp = jax.vjp(layer, W1, x0)
    # jax 0.10.2: args_res holds W1 and x0 as they were
    assert [a is b for a, b in zip(f_vjp.args_res, (W1, x0))] == [True, True]
    # nx_rune keeps no computed residuals (it recomputes them from args_res: see the module
    # doc of nx_rune.autodiff.api_vjp); jax 0.10.2 has 2 here, so 4 leaves, not 2
    assert f_vjp.opaque_residuals == []
    assert [leaf.shape for leaf in jax.tree.leaves(f_vjp)] == [(3, 3), (2, 3)]
    assert f_vjp.fun is layer and callable(f_vjp)


def test_restoring_and_replacing_args_res():
    W1, W2, x0 = jnp.ones((3, 3)), 2. * jnp.ones((3, 3)), jnp.ones((2, 3))
    y, f_vjp = jax.vjp(layer, W1, x0)
    ct = jnp.ones_like(y)
    ref2 = jax.vjp(layer, W2, x0)[1](ct)
    g = f_vjp.replace(args_res=[W2, x0])
    for a, b in zip(g(ct), ref2):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    for a, b in zip(f_vjp(ct), (DW1, DX0)):       # the original is unchanged
        np.testing.assert_allclose(np.asarray(a), b, rtol=5e-5)
    f_vjp.args_res[0] = W2
    for a, b in zip(f_vjp(ct), ref2):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    with pytest.raises(TypeError, match="unknown fields"):
        f_vjp.replace(saved=[])


def test_dict_argument_restored_with_its_structure():
    def g(d):
        return d['bye'] @ d['hi']
    d = {'hi': jnp.ones((4, 5)), 'bye': jnp.ones((3, 4))}
    _, g_vjp = jax.vjp(g, d)
    g_vjp.args_res = [d]
    d_grad, = g_vjp(jnp.ones((3, 5)))
    # jax 0.10.2: {'bye': (3, 4), 'hi': (4, 5)}
    assert jax.tree.map(lambda a: a.shape, d_grad) == {'bye': (3, 4), 'hi': (4, 5)}


def test_rebuilt_object_matches_the_tape_and_has_aux():
    x = jnp.array([0.3, -1.2, 2.0])
    y, f, aux = jax.vjp(lambda x: (jnp.sin(x) * x, x.sum()), x, has_aux=True)
    leaves, tree = jax.tree_util.tree_flatten(f)
    rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
    ct = jnp.array([1., 2., 3.])
    np.testing.assert_allclose(np.asarray(rebuilt(ct)[0]), np.asarray(f(ct)[0]), rtol=1e-6)
    # float64 finite differences of sum(ct * sin(x) * x)
    xs = np.asarray(x, np.float64)
    expected = np.asarray(ct, np.float64) * (np.cos(xs) * xs + np.sin(xs))
    np.testing.assert_allclose(np.asarray(rebuilt(ct)[0]), expected, rtol=1e-5)


def test_vmap_over_vjp_objects():
    ys, fs = jax.vmap(lambda x: jax.vjp(jnp.sin, x))(jnp.arange(3.))
    out, = jax.vmap(lambda f, c: f(c))(fs, jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), np.cos(np.arange(3.)), rtol=1e-6)


def test_function_writing_its_arguments():
    def f(x):
        x += 1
        return x * 2
    x = jnp.ones(2)
    _, f_vjp = jax.vjp(f, x)
    np.testing.assert_array_equal(np.asarray(f_vjp(jnp.ones(2))[0]), [2., 2.])
    rebuilt = jax.tree_util.tree_unflatten(*reversed(jax.tree_util.tree_flatten(f_vjp)))
    with pytest.raises(ValueError, match="wrote into its arguments in place"):
        rebuilt(jnp.ones(2))


def test_replace_after_an_edit_uses_the_edited_arguments():
    W1, W2, x0 = jnp.ones((3, 3)), 2. * jnp.ones((3, 3)), jnp.ones((2, 3))
    y, f_vjp = jax.vjp(layer, W1, x0)
    ct = jnp.ones_like(y)
    f_vjp.args_res[0] = W2
    g = f_vjp.replace(opaque_residuals=[])
    ref2 = jax.vjp(layer, W2, x0)[1](ct)
    for a, b in zip(g(ct), ref2):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
