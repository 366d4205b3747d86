"""Autodiff benchmarks (pytest-benchmark), nx_rune against NumPy and, when installed, HIPS
autograd, PyTorch (eager autograd and torch.func) and JAX (eager: no jit).

Run:  python -m pytest benchmarks/bench_autodiff.py --benchmark-group-by=group
Each group's table gives the ratios (the number in parentheses is relative to the fastest).
On a shared or small machine, pin the math libraries to one thread for stable numbers (a
multi-threaded BLAS that shares its cores with other work slows down by an order of
magnitude): OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1".

* elementwise50: grad of a 51-op elementwise chain on shape (10,) float64: per-op overhead.
* vjp_one_mul: ``nx.vjp(lambda a: a * 2.0, x)[1](ct)`` on shape (10,) float64 (and its backward
  pass alone): the fixed cost of reverse mode around one op.
* recorded_op_10, recorded_op_60: what one recorded ``a * 1.0001`` adds to a grad (its
  recording and its backward step) against what one NumPy multiply costs: grads of chains of
  10 and 60 such ops and the NumPy chains' forward calls; the marginal cost of an op is
  (t60 - t10) / 50 on each side (the grad's fixed cost, which vjp_one_mul shows, cancels out).
* mlp_grad: gradient of a 784-256-10 MLP cross-entropy loss at batch 128 (float32).
* hessian: hessian of sum(sin(x) * x**2) for x of shape (20,) (float64).
* mlp_jvp: a jvp of the MLP loss along a random direction in parameter space (float32).
"""
import numpy as np
import pytest

import nx_rune as nx

ROUNDS = 10  # 5 primitives a round, plus the final sum: 51 ops
N_OPS = 5 * ROUNDS + 1


def _chain(lib, x, sin, tanh, exp, total):
    y = x
    for _ in range(ROUNDS):
        y = sin(y)
        y = y * 0.9
        y = y + x
        y = tanh(y)
        y = exp(y)
    return total(y)


X10 = np.linspace(0.1, 1.0, 10)


def _record_per_op(benchmark):
    benchmark.extra_info["ops"] = N_OPS


# -- elementwise chain --------------------------------------------------------------------------

@pytest.mark.benchmark(group="elementwise50")
def test_elementwise50_numpy_forward(benchmark):
    _record_per_op(benchmark)
    benchmark(lambda: _chain(np, X10, np.sin, np.tanh, np.exp, np.sum))


@pytest.mark.benchmark(group="elementwise50")
def test_elementwise50_nx_forward(benchmark):
    _record_per_op(benchmark)
    x = nx.asarray(X10)
    benchmark(lambda: _chain(nx, x, nx.sin, nx.tanh, nx.exp, nx.sum))


@pytest.mark.benchmark(group="elementwise50")
def test_elementwise50_nx_grad(benchmark):
    _record_per_op(benchmark)
    x = nx.asarray(X10)
    g = nx.grad(lambda x: _chain(nx, x, nx.sin, nx.tanh, nx.exp, nx.sum))
    out = benchmark(g, x)
    assert out.shape == (10,)


@pytest.mark.benchmark(group="elementwise50")
def test_elementwise50_autograd_grad(benchmark):
    agnp = pytest.importorskip("autograd.numpy")
    autograd = pytest.importorskip("autograd")
    _record_per_op(benchmark)
    g = autograd.grad(lambda x: _chain(agnp, x, agnp.sin, agnp.tanh, agnp.exp, agnp.sum))
    out = benchmark(g, X10)
    nxg = nx.grad(lambda x: _chain(nx, x, nx.sin, nx.tanh, nx.exp, nx.sum))(nx.asarray(X10))
    np.testing.assert_allclose(out, np.asarray(nxg), rtol=1e-10)


@pytest.mark.benchmark(group="elementwise50")
def test_elementwise50_torch_grad(benchmark):
    torch = pytest.importorskip("torch")
    _record_per_op(benchmark)
    x = torch.tensor(X10, requires_grad=True)

    def run():
        y = _chain(torch, x, torch.sin, torch.tanh, torch.exp, torch.sum)
        return torch.autograd.grad(y, x)[0]
    benchmark(run)


@pytest.mark.benchmark(group="elementwise50")
def test_elementwise50_jax_eager_grad(benchmark):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    _record_per_op(benchmark)
    x = jnp.asarray(X10)
    g = jax.grad(lambda x: _chain(jnp, x, jnp.sin, jnp.tanh, jnp.exp, jnp.sum))
    benchmark(lambda: g(x).block_until_ready())


# -- the fixed cost of reverse mode: vjp of one mul --------------------------------------------
# nx.vjp(lambda a: a * 2.0, x)[1](ct) on shape (10,) float64: the transformation's own work
# (tracing the input, recording one entry, the backward pass and its result handling) around
# one NumPy multiply each way.

@pytest.mark.benchmark(group="vjp_one_mul")
def test_vjp_one_mul_numpy_forward(benchmark):
    benchmark(lambda: X10 * 2.0)


@pytest.mark.benchmark(group="vjp_one_mul")
def test_vjp_one_mul_nx(benchmark):
    x, ct = nx.asarray(X10), nx.asarray(np.ones(10))
    out = benchmark(lambda: nx.vjp(lambda a: a * 2.0, x)[1](ct))
    np.testing.assert_array_equal(np.asarray(out[0]), np.full(10, 2.0))


@pytest.mark.benchmark(group="vjp_one_mul")
def test_vjp_one_mul_nx_backward_only(benchmark):
    x, ct = nx.asarray(X10), nx.asarray(np.ones(10))
    _, f_vjp = nx.vjp(lambda a: a * 2.0, x)
    out = benchmark(f_vjp, ct)
    np.testing.assert_array_equal(np.asarray(out[0]), np.full(10, 2.0))


@pytest.mark.benchmark(group="vjp_one_mul")
def test_vjp_one_mul_torch(benchmark):
    torch = pytest.importorskip("torch")
    x = torch.tensor(X10, requires_grad=True)
    ct = torch.ones(10, dtype=torch.float64)
    benchmark(lambda: torch.autograd.grad(x * 2.0, x, ct)[0])


# -- the marginal cost of one recorded op -------------------------------------------------------

def _mul_chain(total, n):
    def f(a):
        for _ in range(n):
            a = a * 1.0001
        return total(a)
    return f


@pytest.mark.parametrize("n", [10, 60])
def test_recorded_op_numpy_forward(benchmark, n):
    benchmark.group = f"recorded_op_{n}"
    benchmark(_mul_chain(np.sum, n), X10)


@pytest.mark.parametrize("n", [10, 60])
def test_recorded_op_nx_grad(benchmark, n):
    benchmark.group = f"recorded_op_{n}"
    g = nx.grad(_mul_chain(nx.sum, n))
    out = benchmark(g, nx.asarray(X10))
    np.testing.assert_allclose(np.asarray(out), np.full(10, 1.0001 ** n), rtol=1e-12)


# -- MLP ------------------------------------------------------------------------------------------

def _mlp_data(dtype=np.float32):
    rng = np.random.default_rng(0)
    params = {"W1": (rng.standard_normal((784, 256)) / 28).astype(dtype),
              "b1": np.zeros(256, dtype),
              "W2": (rng.standard_normal((256, 10)) / 16).astype(dtype),
              "b2": np.zeros(10, dtype)}
    x = rng.standard_normal((128, 784)).astype(dtype)
    y = np.eye(10, dtype=dtype)[rng.integers(0, 10, 128)]
    tangents = {k: rng.standard_normal(v.shape).astype(dtype) for k, v in params.items()}
    return params, x, y, tangents


def _loss_factory(lib, tanh, logsumexp, mean, sum_):
    def loss(params, x, y):
        h = tanh(x @ params["W1"] + params["b1"])
        logits = h @ params["W2"] + params["b2"]
        logp = logits - logsumexp(logits)
        return -mean(sum_(logp * y, -1))
    return loss


def _np_logsumexp(z):
    m = z.max(-1, keepdims=True)
    return np.log(np.exp(z - m).sum(-1, keepdims=True)) + m


NP_LOSS = _loss_factory(np, np.tanh, _np_logsumexp, np.mean, lambda a, ax: a.sum(ax))
NX_LOSS = _loss_factory(nx, nx.tanh, lambda z: nx.logsumexp(z, -1, keepdims=True), nx.mean,
                        lambda a, ax: nx.sum(a, ax))


@pytest.mark.benchmark(group="mlp_grad")
def test_mlp_numpy_forward(benchmark):
    params, x, y, _ = _mlp_data()
    benchmark(NP_LOSS, params, x, y)


@pytest.mark.benchmark(group="mlp_grad")
def test_mlp_nx_forward(benchmark):
    params, x, y, _ = _mlp_data()
    p = {k: nx.asarray(v) for k, v in params.items()}
    benchmark(NX_LOSS, p, nx.asarray(x), nx.asarray(y))


@pytest.mark.benchmark(group="mlp_grad")
def test_mlp_nx_grad(benchmark):
    params, x, y, _ = _mlp_data()
    p = {k: nx.asarray(v) for k, v in params.items()}
    g = nx.grad(NX_LOSS)
    out = benchmark(g, p, nx.asarray(x), nx.asarray(y))
    assert out["W1"].shape == (784, 256) and out["W1"].dtype == np.float32


@pytest.mark.benchmark(group="mlp_grad")
def test_mlp_autograd_grad(benchmark):
    agnp = pytest.importorskip("autograd.numpy")
    autograd = pytest.importorskip("autograd")
    from autograd.scipy.special import logsumexp
    params, x, y, _ = _mlp_data()
    loss = _loss_factory(agnp, agnp.tanh, lambda z: logsumexp(z, -1, keepdims=True), agnp.mean,
                         lambda a, ax: agnp.sum(a, ax))
    out = benchmark(autograd.grad(loss), params, x, y)
    ref = nx.grad(NX_LOSS)({k: nx.asarray(v) for k, v in params.items()}, nx.asarray(x),
                           nx.asarray(y))
    np.testing.assert_allclose(out["W1"], np.asarray(ref["W1"]), rtol=1e-3, atol=1e-6)


def _torch_mlp(torch):
    params, x, y, tangents = _mlp_data()
    tp = {k: torch.tensor(v) for k, v in params.items()}
    loss = _loss_factory(torch, torch.tanh, lambda z: torch.logsumexp(z, -1, keepdim=True),
                         torch.mean, lambda a, ax: torch.sum(a, ax))
    return tp, torch.tensor(x), torch.tensor(y), {k: torch.tensor(v) for k, v in
                                                  tangents.items()}, loss


@pytest.mark.benchmark(group="mlp_grad")
def test_mlp_torch_grad(benchmark):
    torch = pytest.importorskip("torch")
    tp, x, y, _, loss = _torch_mlp(torch)
    leaves = {k: v.requires_grad_(True) for k, v in tp.items()}

    def run():
        return torch.autograd.grad(loss(leaves, x, y), list(leaves.values()))
    benchmark(run)


def _jax_mlp(jax):
    jnp = jax.numpy
    params, x, y, tangents = _mlp_data()
    loss = _loss_factory(jnp, jnp.tanh,
                         lambda z: jax.scipy.special.logsumexp(z, -1, keepdims=True),
                         jnp.mean, lambda a, ax: jnp.sum(a, ax))
    j = lambda d: {k: jnp.asarray(v) for k, v in d.items()}  # noqa: E731
    return j(params), jnp.asarray(x), jnp.asarray(y), j(tangents), loss


@pytest.mark.benchmark(group="mlp_grad")
def test_mlp_jax_eager_grad(benchmark):
    jax = pytest.importorskip("jax")
    params, x, y, _, loss = _jax_mlp(jax)
    g = jax.grad(loss)
    benchmark(lambda: jax.block_until_ready(g(params, x, y)))


# -- hessian of sum(sin(x) * x**2), x of shape (20,) -----------------------------------------------

X20 = np.linspace(-1.0, 1.0, 20)


@pytest.mark.benchmark(group="hessian")
def test_hessian_nx(benchmark):
    H = benchmark(nx.hessian(lambda x: nx.sum(nx.sin(x) * x ** 2)), nx.asarray(X20))
    d2 = -np.sin(X20) * X20 ** 2 + 4 * X20 * np.cos(X20) + 2 * np.sin(X20)
    np.testing.assert_allclose(np.asarray(H), np.diag(d2), atol=1e-12)


@pytest.mark.benchmark(group="hessian")
def test_hessian_autograd(benchmark):
    agnp = pytest.importorskip("autograd.numpy")
    autograd = pytest.importorskip("autograd")
    benchmark(autograd.hessian(lambda x: agnp.sum(agnp.sin(x) * x ** 2)), X20)


@pytest.mark.benchmark(group="hessian")
def test_hessian_torch_func(benchmark):
    torch = pytest.importorskip("torch")
    from torch.func import hessian
    benchmark(hessian(lambda x: torch.sum(torch.sin(x) * x ** 2)), torch.tensor(X20))


@pytest.mark.benchmark(group="hessian")
def test_hessian_jax_eager(benchmark):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    h = jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x ** 2))
    x = jnp.asarray(X20)
    benchmark(lambda: h(x).block_until_ready())


# -- jvp of the MLP loss ---------------------------------------------------------------------------

@pytest.mark.benchmark(group="mlp_jvp")
def test_mlp_jvp_nx(benchmark):
    params, x, y, tangents = _mlp_data()
    p = {k: nx.asarray(v) for k, v in params.items()}
    t = {k: nx.asarray(v) for k, v in tangents.items()}
    x, y = nx.asarray(x), nx.asarray(y)
    benchmark(lambda: nx.jvp(lambda p: NX_LOSS(p, x, y), (p,), (t,)))


@pytest.mark.benchmark(group="mlp_jvp")
def test_mlp_jvp_numpy_forward(benchmark):
    params, x, y, _ = _mlp_data()
    benchmark(NP_LOSS, params, x, y)


@pytest.mark.benchmark(group="mlp_jvp")
def test_mlp_jvp_autograd(benchmark):
    agnp = pytest.importorskip("autograd.numpy")
    pytest.importorskip("autograd")
    from autograd.differential_operators import make_jvp
    from autograd.scipy.special import logsumexp
    params, x, y, tangents = _mlp_data()
    loss = _loss_factory(agnp, agnp.tanh, lambda z: logsumexp(z, -1, keepdims=True), agnp.mean,
                         lambda a, ax: agnp.sum(a, ax))
    benchmark(lambda: make_jvp(lambda p: loss(p, x, y))(params)(tangents))


@pytest.mark.benchmark(group="mlp_jvp")
def test_mlp_jvp_torch_func(benchmark):
    torch = pytest.importorskip("torch")
    from torch.func import jvp
    tp, x, y, tt, loss = _torch_mlp(torch)
    benchmark(lambda: jvp(lambda p: loss(p, x, y), (tp,), (tt,)))


@pytest.mark.benchmark(group="mlp_jvp")
def test_mlp_jvp_jax_eager(benchmark):
    jax = pytest.importorskip("jax")
    params, x, y, t, loss = _jax_mlp(jax)
    benchmark(lambda: jax.block_until_ready(jax.jvp(lambda p: loss(p, x, y), (params,), (t,))))
