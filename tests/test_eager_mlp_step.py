"""The eager MLP SGD step of benchmarks/bench_torch_rows.py: its gradients against a float64
NumPy backward pass written out by hand (the transposed operands of the backward products, the
relu's weights, the bias sums, logsumexp's backward), and relu's weights at ties."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import pool


def _data(rng, n_in=784, n_hidden=256, n_out=10, batch=128):
    W1 = (rng.standard_normal((n_in, n_hidden)) / 28).astype(np.float32)
    b1 = (rng.standard_normal(n_hidden) * 0.1).astype(np.float32)
    W2 = (rng.standard_normal((n_hidden, n_out)) / 16).astype(np.float32)
    b2 = (rng.standard_normal(n_out) * 0.1).astype(np.float32)
    x = rng.standard_normal((batch, n_in)).astype(np.float32)
    y = np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, batch)]
    return [W1, b1, W2, b2], x, y


def _loss(p, x, y):
    h = nx.maximum(x @ p[0] + p[1], 0.0)
    logits = h @ p[2] + p[3]
    logp = logits - nx.logsumexp(logits, -1, keepdims=True)
    return -nx.mean(nx.sum(logp * y, -1))


def _numpy_grads(p, x, y):
    """The same loss's gradients by hand in float64."""
    W1, b1, W2, b2 = (a.astype(np.float64) for a in p)
    x, y = x.astype(np.float64), y.astype(np.float64)
    pre = x @ W1 + b1
    h = np.maximum(pre, 0.0)
    logits = h @ W2 + b2
    soft = np.exp(logits - logits.max(-1, keepdims=True))
    soft /= soft.sum(-1, keepdims=True)
    g_logits = (soft * y.sum(-1, keepdims=True) - y) / x.shape[0]
    g_h = g_logits @ W2.T
    g_pre = g_h * (pre > 0)
    return [x.T @ g_pre, g_pre.sum(0), h.T @ g_logits, g_logits.sum(0)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(784, 256, 10, 128), (33, 47, 9, 13)])
def test_mlp_step_gradients_match_numpy_float64(shape, threads):
    rng = np.random.default_rng(sum(shape))
    p, x, y = _data(rng, *shape)
    want = _numpy_grads(p, x, y)
    saved = pool.get_num_threads()
    pool.set_num_threads(threads)
    try:
        got = nx.grad(_loss)([nx.asarray(a) for a in p], nx.asarray(x), nx.asarray(y))
    finally:
        pool.set_num_threads(saved)
    for g, w, a in zip(got, want, p):
        assert g.shape == a.shape and g.dtype == nx.float32
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-6)


def test_sgd_update_in_place_matches_numpy():
    rng = np.random.default_rng(7)
    p, x, y = _data(rng, 40, 24, 5, 16)
    params = [nx.asarray(a) for a in p]
    grads = nx.grad(_loss)(params, nx.asarray(x), nx.asarray(y))
    lr = np.float32(1e-2)
    want = [a - lr * np.asarray(g) for a, g in zip(p, grads)]
    for q, g in zip(params, grads):
        q -= lr * g
    for q, w in zip(params, want):
        np.testing.assert_array_equal(np.asarray(q), w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maximum_weights_split_ties_and_broadcast(dtype):
    # maximum's derivative: 1 where a > b, 1/2 on ties, 0 below (NaN compares false: 0), in
    # the operand's dtype, with a broadcast second operand
    a = np.array([[-1.0, 0.0, 2.0, np.nan], [3.0, 0.0, -0.5, 1.0]], dtype)
    b = np.array([0.0, 0.0, 2.0, 0.0], dtype)
    ct = np.arange(1.0, 9.0, dtype=dtype).reshape(2, 4)
    ga, gb = nx.grad(lambda u, v: nx.sum(nx.maximum(u, v) * ct), argnums=(0, 1))(a, b)
    w = np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))
    assert ga.dtype == dtype and gb.dtype == dtype
    np.testing.assert_array_equal(np.asarray(ga), (ct * w).astype(dtype))
    np.testing.assert_array_equal(np.asarray(gb), (ct * (1 - w)).sum(0).astype(dtype))
    # batched by vmap over the rows: the same weights
    gv = nx.vmap(nx.grad(lambda u: nx.sum(nx.maximum(u, 0.0))))(a)
    np.testing.assert_array_equal(np.asarray(gv), np.where(a > 0, 1.0, np.where(a == 0, 0.5,
                                                                                0.0)))
