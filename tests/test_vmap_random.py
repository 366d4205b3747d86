"""nx.random under vmap: a batch of keys (or of bounds, probabilities, logits) gives, key by
key, what JAX's vmap of the sampler gives.

The golden values were produced by JAX 0.10.2 (``jax.vmap`` of ``jax.random`` samplers, default
configuration), not by nx_rune.  Samplers that are bit-exact with JAX unbatched are checked for
equality; those that go through XLA's own log/erf (normal, gumbel, truncated_normal) agree to
a few ulps, as in tests/test_random.py.
"""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import random as nxr

K = nxr.key
LOGITS = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 1.5, -3.0, 0.25], [0.0, 0.0, 0.0, 0.0]],
                  np.float32)

EXACT = {
    "uniform": (lambda: nx.vmap(lambda k: nxr.uniform(k, (3,)))(nxr.split(K(0), 4)),
                'float32', (4, 3),
                [0.8423141241073608, 0.1823786497116089, 0.22717809677124023,
                 0.007293820381164551, 0.020891189575195312, 0.5814265012741089,
                 0.9024494886398315, 0.9122928380966187, 0.34104764461517334,
                 0.26698946952819824, 0.733950138092041, 0.9537230730056763]),
    "uniform_bounds": (lambda: nx.vmap(lambda k, lo: nxr.uniform(k, (2,), minval=lo,
                                                                 maxval=lo + 2.0))(
        nxr.split(K(3), 3), nx.asarray(np.array([-1.0, 0.5, 4.0], np.float32))),
        'float32', (3, 2),
        [-0.9826092720031738, -0.9120230674743652, 0.5519893169403076, 1.5834782123565674,
         4.556678771972656, 4.014082908630371]),
    "uniform_shared_key": (lambda: nx.vmap(lambda lo: nxr.uniform(K(5), (2,), minval=lo,
                                                                  maxval=10.0))(
        nx.asarray(np.array([-1.0, 0.5, 4.0], np.float32))),
        'float32', (3, 2),
        [4.130178451538086, 9.129691123962402, 4.930608749389648, 9.248370170593262,
         6.798279285430908, 9.525285720825195]),
    "split": (lambda: nx.vmap(nxr.split)(nxr.split(K(0), 3)), 'uint32', (3, 2, 2),
              [4165894930, 804218099, 1353695780, 2116000888, 346279018, 360566543,
               3968330031, 3923691647, 2799984767, 1105366846, 3777617834, 145086855]),
    "split3": (lambda: nx.vmap(lambda k: nxr.split(k, 3))(nxr.split(K(7), 2)), 'uint32',
               (2, 3, 2),
               [2737751932, 2099591257, 533473832, 2443621858, 2068379011, 934402480,
                1294055386, 3790878917, 1610437339, 2357010365, 3281109246, 2806878594]),
    "fold_in": (lambda: nx.vmap(lambda k: nxr.fold_in(k, 3))(nxr.split(K(0), 3)), 'uint32',
                (3, 2), [4257973933, 3811338087, 2488719848, 3371676629, 2061185276,
                         1116525886]),
    "fold_in_data": (lambda: nx.vmap(nxr.fold_in, in_axes=(None, 0))(
        K(9), nx.asarray(np.array([0, 1, 2, 3], np.uint32))), 'uint32', (4, 2),
        [2822284597, 2722679661, 143080583, 4281670255, 2676565412, 4109519897, 1877436067,
         1979300842]),
    "bits": (lambda: nx.vmap(lambda k: nxr.bits(k, (2,)))(nxr.split(K(4), 3)), 'uint32',
             (3, 2), [2348632451, 3490385714, 2739478358, 2489000802, 3523521663, 1417219090]),
    "randint": (lambda: nx.vmap(lambda k: nxr.randint(k, (4,), 0, 10))(nxr.split(K(0), 3)),
                'int32', (3, 4), [1, 1, 7, 7, 2, 2, 6, 5, 9, 4, 3, 5]),
    "randint_bounds": (lambda: nx.vmap(lambda k, hi: nxr.randint(k, (3,), 0, hi))(
        nxr.split(K(11), 3), nx.asarray(np.array([5, 100, 7], np.int32))), 'int32', (3, 3),
        [3, 0, 0, 40, 8, 38, 0, 2, 5]),
    "bernoulli": (lambda: nx.vmap(lambda k, p: nxr.bernoulli(k, p, (5,)))(
        nxr.split(K(2), 3), nx.asarray(np.array([0.1, 0.5, 0.9], np.float32))), 'bool', (3, 5),
        [False, False, True, False, False, False, False, True, False, True, True, True, True,
         True, True]),
    "permutation": (lambda: nx.vmap(lambda k: nxr.permutation(k, 6))(nxr.split(K(0), 3)),
                    'int32', (3, 6),
                    [0, 2, 4, 1, 5, 3, 0, 3, 5, 1, 4, 2, 4, 3, 1, 0, 2, 5]),
    "choice": (lambda: nx.vmap(lambda k: nxr.choice(k, 10, (3,), replace=False))(
        nxr.split(K(1), 3)), 'int32', (3, 3), [6, 1, 2, 3, 2, 0, 7, 1, 2]),
    "categorical": (lambda: nx.vmap(lambda k, lg: nxr.categorical(k, lg))(
        nxr.split(K(6), 3), nx.asarray(LOGITS)), 'int32', (3,), [3, 1, 3]),
    "nested_bits": (lambda: nx.vmap(nx.vmap(lambda k: nxr.bits(k, (2,))))(
        nxr.split(K(2), (2, 3))), 'uint32', (2, 3, 2),
        [2732858102, 2760943434, 4276425807, 2184892028, 2627571465, 271346348, 1266029147,
         1414847477, 36226637, 2270642596, 2734336992, 1246013995]),
    "key": (lambda: nx.vmap(nxr.key)(nx.asarray(np.array([0, 1, 42], np.int32))), 'uint32',
            (3, 2), [0, 0, 0, 1, 0, 42]),
    "in_axes1_uniform": (lambda: nx.vmap(lambda k: nxr.uniform(k, (2,)), in_axes=1)(
        nx.transpose(nxr.split(K(8), 3))), 'float32', (3, 2),
        [0.9317672252655029, 0.534011960029602, 0.9837933778762817, 0.6027227640151978,
         0.06641614437103271, 0.9543479681015015]),
}

CLOSE = {
    "normal": (lambda: nx.vmap(lambda k: nxr.normal(k, (3,)))(nxr.split(K(1), 3)), 'float32',
               (3, 3),
               [0.5319373607635498, -0.7230170369148254, 0.9072570204734802,
                -0.24392002820968628, 0.12287012487649918, -0.7633100748062134,
                0.1453534960746765, -0.7585690021514893, 0.6653332114219666]),
    "gumbel": (lambda: nx.vmap(lambda k: nxr.gumbel(k, (2,)))(nxr.split(K(2), 3)), 'float32',
               (3, 2),
               [0.7938606142997742, 0.8167359232902527, 5.443021774291992, 0.39174333214759827,
                0.7105293273925781, -1.0158840417861938]),
    "truncated_normal": (lambda: nx.vmap(lambda k, lo: nxr.truncated_normal(k, lo, 2.0, (2,)))(
        nxr.split(K(3), 3), nx.asarray(np.array([-1.0, 0.0, 1.0], np.float32))), 'float32',
        (3, 2),
        [-0.971003532409668, -0.8608367443084717, 0.03110210783779621, 0.701629638671875,
         1.1708601713180542, 1.0039626359939575]),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_vmap_of_samplers_matches_jax_bit_for_bit(name):
    fn, dtype, shape, values = EXACT[name]
    out = fn()
    assert isinstance(out, nx.Tensor)
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    np.testing.assert_array_equal(out.numpy().reshape(-1), np.array(values, dtype))


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_vmap_of_samplers_matches_jax_closely(name):
    fn, dtype, shape, values = CLOSE[name]
    out = fn()
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    np.testing.assert_allclose(out.numpy().reshape(-1), np.array(values, dtype), rtol=5e-6,
                               atol=2e-6)


def test_batched_keys_give_the_unbatched_samples_key_by_key():
    keys = nxr.split(K(12), 5)
    out = nx.vmap(lambda k: nxr.normal(k, (2, 3), np.float64))(keys)
    for i in range(5):
        np.testing.assert_array_equal(out.numpy()[i],
                                      nxr.normal(keys[i], (2, 3), np.float64).numpy())


def test_samplers_inside_vmapped_and_differentiated_code():
    # dropout-like noise per example inside a per-example gradient
    keys = nxr.split(K(3), 4)
    xs = nx.asarray(np.linspace(-1.0, 1.0, 12).reshape(4, 3))

    def loss(w, x, k):
        mask = nx.astype(nxr.bernoulli(k, 0.5, (3,)), nx.float64)
        return nx.sum(nx.tanh(w * x) * mask)
    w = nx.asarray(np.array([0.3, -0.2, 0.5]))
    g = nx.vmap(nx.grad(loss), in_axes=(None, 0, 0))(w, xs, keys)
    for i in range(4):
        np.testing.assert_allclose(g.numpy()[i], nx.grad(loss)(w, xs[i], keys[i]).numpy(),
                                   rtol=1e-14)


def test_threefry_2x32_under_vmap():
    keys = nxr.split(K(0), 3)
    counts = nx.asarray(np.arange(15, dtype=np.uint32).reshape(3, 5))
    out = nx.vmap(nxr.threefry_2x32)(keys, counts)
    for i in range(3):
        np.testing.assert_array_equal(out.numpy()[i],
                                      nxr.threefry_2x32(keys[i], counts[i]).numpy())
    shared = nx.vmap(nxr.threefry_2x32, in_axes=(None, 0))(keys[0], counts)
    for i in range(3):
        np.testing.assert_array_equal(shared.numpy()[i],
                                      nxr.threefry_2x32(keys[0], counts[i]).numpy())


def test_bad_batched_key_names_the_argument():
    with pytest.raises(TypeError, match="key"):
        nx.vmap(lambda k: nxr.uniform(k, (2,)))(nx.asarray(np.zeros((3, 2), np.float32)))
    with pytest.raises(TypeError, match="key"):
        nx.vmap(lambda k: nxr.uniform(k, (2,)))(nx.asarray(np.zeros((3, 3), np.uint32)))


def test_samplers_keep_their_signatures():
    import inspect
    assert list(inspect.signature(nxr.uniform).parameters) == ["key", "shape", "dtype", "minval",
                                                               "maxval"]
    assert nxr.uniform.__name__ == "uniform" and "Uniform floats" in nxr.uniform.__doc__


def test_leaked_batched_key_is_refused():
    box = []
    nx.vmap(lambda k: box.append(k) or k)(nxr.split(K(0), 2))
    with pytest.raises(nx.errors.UnexpectedTracerError, match="finished vmap"):
        nxr.uniform(box[0], (2,))
