"""vmap benchmarks (pytest-benchmark): Hessians in one batched pass and per-example gradients,
nx_rune against a hand-written NumPy computation of the same result and, when installed,
torch.func (vmap, grad, hessian) and JAX in eager mode (no jit).

Run:  python -m benchmarks benchmarks/bench_vmap.py
On a shared or small machine pin the math libraries to one thread (OPENBLAS_NUM_THREADS=1
OMP_NUM_THREADS=1 MKL_NUM_THREADS=1), as for bench_autodiff.py.

* hessian20, hessian200: hessian of sum(sin(x) * x**2) for x of shape (20,) and (200,),
  float64 (jacfwd of jacrev: vmap of jvp over vmap of vjp).  NumPy: the analytic Hessian.
* per_example_grads: the gradient of a 32-64-10 MLP's cross-entropy for each of 256 examples,
  float32: ``vmap(grad(loss), in_axes=(None, 0, 0))``.  NumPy: backpropagation written out
  for the batch, one gradient per example.
"""
import numpy as np
import pytest

import nx_rune as nx


def _f_nx(x):
    return nx.sum(nx.sin(x) * x ** 2)


def _hess_numpy(x):
    return np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x))


def _x(n):
    return np.linspace(-1.0, 1.0, n)


def _hessian_nx(benchmark, n):
    x = _x(n)
    H = benchmark(nx.hessian(_f_nx), nx.asarray(x))
    np.testing.assert_allclose(np.asarray(H), _hess_numpy(x), atol=1e-12)


def _hessian_torch(benchmark, n):
    torch = pytest.importorskip("torch")
    from torch.func import hessian
    H = benchmark(hessian(lambda x: torch.sum(torch.sin(x) * x ** 2)), torch.tensor(_x(n)))
    np.testing.assert_allclose(H.numpy(), _hess_numpy(_x(n)), atol=1e-12)


def _hessian_jax(benchmark, n):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    h = jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x ** 2))
    x = jnp.asarray(_x(n))
    H = benchmark(lambda: h(x).block_until_ready())
    np.testing.assert_allclose(np.asarray(H), _hess_numpy(_x(n)), atol=1e-12)


@pytest.mark.benchmark(group="hessian20")
def test_hessian20_numpy(benchmark):
    benchmark(_hess_numpy, _x(20))


@pytest.mark.benchmark(group="hessian20")
def test_hessian20_nx(benchmark):
    _hessian_nx(benchmark, 20)


@pytest.mark.benchmark(group="hessian20")
def test_hessian20_torch_func(benchmark):
    _hessian_torch(benchmark, 20)


@pytest.mark.benchmark(group="hessian20")
def test_hessian20_jax_eager(benchmark):
    _hessian_jax(benchmark, 20)


@pytest.mark.benchmark(group="hessian200")
def test_hessian200_numpy(benchmark):
    benchmark(_hess_numpy, _x(200))


@pytest.mark.benchmark(group="hessian200")
def test_hessian200_nx(benchmark):
    _hessian_nx(benchmark, 200)


@pytest.mark.benchmark(group="hessian200")
def test_hessian200_torch_func(benchmark):
    _hessian_torch(benchmark, 200)


@pytest.mark.benchmark(group="hessian200")
def test_hessian200_jax_eager(benchmark):
    _hessian_jax(benchmark, 200)


# -- per-example gradients of a small MLP ----------------------------------------------------------

def _mlp_data():
    rng = np.random.default_rng(0)
    f32 = np.float32
    params = {"W1": (rng.standard_normal((32, 64)) / 6).astype(f32), "b1": np.zeros(64, f32),
              "W2": (rng.standard_normal((64, 10)) / 8).astype(f32), "b2": np.zeros(10, f32)}
    x = rng.standard_normal((256, 32)).astype(f32)
    y = np.eye(10, dtype=f32)[rng.integers(0, 10, 256)]
    return params, x, y


def _loss(lib_tanh, lib_logsumexp, lib_sum):
    def loss(p, x, y):                      # one example: x (32,), y (10,)
        h = lib_tanh(x @ p["W1"] + p["b1"])
        logits = h @ p["W2"] + p["b2"]
        return -lib_sum(y * (logits - lib_logsumexp(logits)))
    return loss


NX_LOSS = _loss(nx.tanh, nx.logsumexp, nx.sum)


def _per_example_numpy(p, x, y):
    """Per-example gradients by hand: backpropagation for the batch, outer products per row."""
    h = np.tanh(x @ p["W1"] + p["b1"])
    logits = h @ p["W2"] + p["b2"]
    z = np.exp(logits - logits.max(1, keepdims=True))
    dlogits = z / z.sum(1, keepdims=True) * y.sum(1, keepdims=True) - y
    dh = (dlogits @ p["W2"].T) * (1 - h * h)
    return {"W1": x[:, :, None] * dh[:, None, :], "b1": dh,
            "W2": h[:, :, None] * dlogits[:, None, :], "b2": dlogits}


@pytest.mark.benchmark(group="per_example_grads")
def test_per_example_grads_numpy(benchmark):
    p, x, y = _mlp_data()
    benchmark(_per_example_numpy, p, x, y)


@pytest.mark.benchmark(group="per_example_grads")
def test_per_example_grads_nx(benchmark):
    p, x, y = _mlp_data()
    g = nx.vmap(nx.grad(NX_LOSS), in_axes=(None, 0, 0))
    out = benchmark(g, {k: nx.asarray(v) for k, v in p.items()}, nx.asarray(x), nx.asarray(y))
    want = _per_example_numpy(p, x, y)
    for k in p:
        assert out[k].shape == (256,) + p[k].shape and out[k].dtype == np.float32
        np.testing.assert_allclose(np.asarray(out[k]), want[k], rtol=1e-4, atol=1e-6)


@pytest.mark.benchmark(group="per_example_grads")
def test_per_example_grads_torch_func(benchmark):
    torch = pytest.importorskip("torch")
    from torch.func import grad, vmap
    p, x, y = _mlp_data()
    loss = _loss(torch.tanh, lambda z: torch.logsumexp(z, -1), torch.sum)
    g = vmap(grad(loss), in_dims=(None, 0, 0))
    out = benchmark(g, {k: torch.tensor(v) for k, v in p.items()}, torch.tensor(x),
                    torch.tensor(y))
    want = _per_example_numpy(p, x, y)
    np.testing.assert_allclose(out["W1"].numpy(), want["W1"], rtol=1e-4, atol=1e-6)


@pytest.mark.benchmark(group="per_example_grads")
def test_per_example_grads_jax_eager(benchmark):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    p, x, y = _mlp_data()
    loss = _loss(jnp.tanh, jax.scipy.special.logsumexp, jnp.sum)
    g = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    jp = {k: jnp.asarray(v) for k, v in p.items()}
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    out = benchmark(lambda: jax.block_until_ready(g(jp, jx, jy)))
    np.testing.assert_allclose(np.asarray(out["W1"]), _per_example_numpy(p, x, y)["W1"],
                               rtol=1e-4, atol=1e-6)
