"""nx.jit against jax.jit (installed locally for the comparison; not a dependency), same run.

Run:  python benchmarks/bench_jit.py          (pytest-benchmark, then a table of nx / jax)
      python -m pytest benchmarks/bench_jit.py --benchmark-only --benchmark-group-by=group
Pin both libraries to one thread for a per-thread comparison on a shared machine:
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 NX_RUNE_NUM_THREADS=1
XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
(the table's script sets these when they are unset; ``python -m benchmarks`` leaves both
libraries their own threads: XLA's pool, and nx_rune's kernel pool, which also splits a
compiled program's large products when the BLAS is pinned to one thread).

Groups (each with an nx_rune and a JAX row; "numpy" rows where a NumPy baseline exists):
* jit_chain50_grad: jit(grad) of a 51-op elementwise chain on (10,) float64 (per-op overhead).
* jit_mlp_sgd_step: one SGD step of a 784-256-10 tanh MLP, batch 128, float32.
* jit_hessian20: jit(hessian) of sum(sin(x) * x**2), x of shape (20,) float64.
* jit_gelu: the tanh GELU on 2**20 float32.
* jit_arith_chain: ``((x * 0.5 + 0.25) * x - 1.0) / 3.0 + x`` on 2**20 float32 (one chain of
  the VM's own AVX-512 loops; NumPy's values bit for bit) against NumPy's six passes.
* jit_digits_epoch: one epoch (23 steps of 64) of examples/train_mlp.py's model and Adam,
  the train step jitted, end to end from NumPy batches.
* jit_vmap_per_example_grad: per-example gradients of a 32-64-1 tanh MLP's squared error,
  batch 128, float32: jit(vmap(grad)) and vmap(jit(grad)), eager vmap(grad), and JAX's
  jit(vmap(grad)).
* jit_compile_*: tracing + optimizing + compiling a fresh jitted function (a new Python
  function each round, so no cache applies), first call included, for both libraries.
* stop_gradient_bind: the stop_gradient primitive's eager cost (it only records under a trace).
"""
import math
import os
import pathlib
import sys

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# -- 50-op chain ----------------------------------------------------------------------------------

def _chain(sin, tanh, exp, total):
    def f(x):
        y = x
        for _ in range(10):
            y = sin(y)
            y = y * 0.9
            y = y + x
            y = tanh(y)
            y = exp(y)
        return total(y)
    return f


X10 = np.linspace(0.1, 1.0, 10)
NX_CHAIN = _chain(nx.sin, nx.tanh, nx.exp, nx.sum)


@pytest.mark.benchmark(group="jit_chain50_grad")
def test_chain50_grad_nx_jit(benchmark):
    g = nx.jit(nx.grad(NX_CHAIN))
    x = nx.asarray(X10)
    out = benchmark(g, x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(nx.grad(NX_CHAIN)(x)), rtol=1e-12)


@pytest.mark.benchmark(group="jit_chain50_grad")
def test_chain50_grad_jax_jit(benchmark):
    jax = _jax()
    jnp = jax.numpy
    g = jax.jit(jax.grad(_chain(jnp.sin, jnp.tanh, jnp.exp, jnp.sum)))
    x = jnp.asarray(X10)
    out = benchmark(lambda: g(x).block_until_ready())
    ref = nx.grad(NX_CHAIN)(nx.asarray(X10))
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-12)


@pytest.mark.benchmark(group="jit_chain50_grad")
def test_chain50_grad_nx_eager(benchmark):
    benchmark(nx.grad(NX_CHAIN), nx.asarray(X10))


# -- MLP SGD step ----------------------------------------------------------------------------------

def _mlp_data():
    rng = np.random.default_rng(0)
    params = {"W1": (rng.standard_normal((784, 256)) / 28).astype(np.float32),
              "b1": np.zeros(256, np.float32),
              "W2": (rng.standard_normal((256, 10)) / 16).astype(np.float32),
              "b2": np.zeros(10, np.float32)}
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, x, y


def _mlp_step(lib, tanh, logsumexp, grad):
    def loss(p, x, y):
        h = tanh(x @ p["W1"] + p["b1"])
        logits = h @ p["W2"] + p["b2"]
        logp = logits - logsumexp(logits)
        return -lib.mean(lib.sum(logp * y, -1))

    def step(p, x, y):
        g = grad(loss)(p, x, y)
        return {k: p[k] - 0.1 * g[k] for k in p}
    return step


NX_STEP = _mlp_step(nx, nx.tanh, lambda z: nx.logsumexp(z, -1, keepdims=True), nx.grad)


@pytest.mark.benchmark(group="jit_mlp_sgd_step")
def test_mlp_sgd_step_nx_jit(benchmark):
    params, x, y = _mlp_data()
    p = {k: nx.asarray(v) for k, v in params.items()}
    step = nx.jit(NX_STEP)
    out = benchmark(step, p, nx.asarray(x), nx.asarray(y))
    want = NX_STEP(p, nx.asarray(x), nx.asarray(y))
    for k in p:
        np.testing.assert_allclose(np.asarray(out[k]), np.asarray(want[k]), rtol=1e-4,
                                   atol=1e-6)


@pytest.mark.benchmark(group="jit_mlp_sgd_step")
def test_mlp_sgd_step_jax_jit(benchmark):
    jax = _jax()
    jnp = jax.numpy
    params, x, y = _mlp_data()
    step = jax.jit(_mlp_step(jnp, jnp.tanh,
                             lambda z: jax.scipy.special.logsumexp(z, -1, keepdims=True),
                             jax.grad))
    p = {k: jnp.asarray(v) for k, v in params.items()}
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    out = benchmark(lambda: jax.block_until_ready(step(p, xj, yj)))
    want = NX_STEP({k: nx.asarray(v) for k, v in params.items()}, nx.asarray(x), nx.asarray(y))
    for k in p:
        np.testing.assert_allclose(np.asarray(out[k]), np.asarray(want[k]), rtol=1e-4,
                                   atol=1e-6)


# -- hessian ---------------------------------------------------------------------------------------

X20 = np.linspace(-1.0, 1.0, 20)


@pytest.mark.benchmark(group="jit_hessian20")
def test_hessian20_nx_jit(benchmark):
    h = nx.jit(nx.hessian(lambda x: nx.sum(nx.sin(x) * x ** 2)))
    H = benchmark(h, nx.asarray(X20))
    d2 = -np.sin(X20) * X20 ** 2 + 4 * X20 * np.cos(X20) + 2 * np.sin(X20)
    np.testing.assert_allclose(np.asarray(H), np.diag(d2), atol=1e-12)


@pytest.mark.benchmark(group="jit_hessian20")
def test_hessian20_jax_jit(benchmark):
    jax = _jax()
    jnp = jax.numpy
    h = jax.jit(jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x ** 2)))
    x = jnp.asarray(X20)
    benchmark(lambda: h(x).block_until_ready())


# -- GELU ------------------------------------------------------------------------------------------

XG = np.random.default_rng(0).standard_normal(2 ** 20).astype(np.float32)


def _gelu(lib, tanh):
    return lambda x: 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


@pytest.mark.benchmark(group="jit_gelu")
def test_gelu_nx_jit(benchmark):
    f = nx.jit(_gelu(nx, nx.tanh))
    out = benchmark(f, nx.asarray(XG))
    np.testing.assert_allclose(np.asarray(out), _gelu(np, np.tanh)(XG), rtol=1e-5, atol=1e-6)


@pytest.mark.benchmark(group="jit_gelu")
def test_gelu_jax_jit(benchmark):
    jax = _jax()
    jnp = jax.numpy
    f = jax.jit(_gelu(jnp, jnp.tanh))
    x = jnp.asarray(XG)
    benchmark(lambda: f(x).block_until_ready())


@pytest.mark.benchmark(group="jit_gelu")
def test_gelu_numpy(benchmark):
    benchmark(_gelu(np, np.tanh), XG)


# -- the VM's arithmetic chains: a run of + - * / on one value kept in registers -------------------

def _arith_chain(x):
    return ((x * 0.5 + 0.25) * x - 1.0) / 3.0 + x


@pytest.mark.benchmark(group="jit_arith_chain")
def test_arith_chain_nx_jit(benchmark):
    f = nx.jit(_arith_chain)
    out = benchmark(f, nx.asarray(XG))
    np.testing.assert_array_equal(np.asarray(out), _arith_chain(XG))   # each step rounds once


@pytest.mark.benchmark(group="jit_arith_chain")
def test_arith_chain_numpy(benchmark):
    benchmark(_arith_chain, XG)


# -- the digits MLP example, one epoch -------------------------------------------------------------

def _digits():
    pytest.importorskip("sklearn")
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import train_mlp
    finally:
        sys.path.pop(0)
    (x, y), _ = train_mlp.load_data(0)
    onehot = np.eye(10, dtype=np.float32)[y]
    order = np.random.default_rng(0).permutation(len(x))
    batches = [(x[order[i:i + 64]], onehot[order[i:i + 64]]) for i in range(0, len(x), 64)]
    return train_mlp, batches


def _adam(lib, sqrt):
    def update(params, grads, m, v, correction, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
        m = {k: b1 * m[k] + (1 - b1) * g for k, g in grads.items()}
        v = {k: b2 * v[k] + (1 - b2) * g * g for k, g in grads.items()}
        new = {k: p - lr * correction * m[k] / (sqrt(v[k]) + eps) for k, p in params.items()}
        return new, m, v
    return update


def _epoch(step, params, batches, asarray, zeros_like):
    m = {k: zeros_like(v) for k, v in params.items()}
    v = dict(m)
    loss = None
    for t, (x, y) in enumerate(batches, 1):
        corr = math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        loss, params, m, v = step(params, m, v, asarray(x), asarray(y), corr)
    return float(loss)


@pytest.mark.benchmark(group="jit_digits_epoch")
def test_digits_epoch_nx_jit(benchmark):
    mod, batches = _digits()
    params = mod.init_params(nx.random.key(0))
    adam = _adam(nx, nx.sqrt)

    @nx.jit
    def step(p, m, v, x, y, corr):
        loss, g = nx.value_and_grad(mod.loss_fn)(p, x, y)
        p, m, v = adam(p, g, m, v, corr)
        return loss, p, m, v
    loss = benchmark(_epoch, step, params, batches, nx.asarray, nx.zeros_like)
    assert loss < 1.0


@pytest.mark.benchmark(group="jit_digits_epoch")
def test_digits_epoch_nx_eager(benchmark):
    mod, batches = _digits()
    params = mod.init_params(nx.random.key(0))
    adam = _adam(nx, nx.sqrt)

    def step(p, m, v, x, y, corr):
        loss, g = nx.value_and_grad(mod.loss_fn)(p, x, y)
        p, m, v = adam(p, g, m, v, corr)
        return loss, p, m, v
    benchmark(_epoch, step, params, batches, nx.asarray, nx.zeros_like)


@pytest.mark.benchmark(group="jit_digits_epoch")
def test_digits_epoch_jax_jit(benchmark):
    jax = _jax()
    jnp = jax.numpy
    _, batches = _digits()
    key = np.random.default_rng(0)
    params = {"w0": jnp.asarray(key.standard_normal((64, 32)).astype(np.float32) * 0.25),
              "b0": jnp.zeros(32, jnp.float32),
              "w1": jnp.asarray(key.standard_normal((32, 10)).astype(np.float32) * 0.25),
              "b1": jnp.zeros(10, jnp.float32)}

    def loss_fn(p, x, onehot):
        h = jax.nn.relu(x @ p["w0"] + p["b0"])
        logp = jax.nn.log_softmax(h @ p["w1"] + p["b1"], axis=-1)
        return -jnp.mean(jnp.sum(onehot * logp, axis=-1))
    adam = _adam(jnp, jnp.sqrt)

    @jax.jit
    def step(p, m, v, x, y, corr):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        p, m, v = adam(p, g, m, v, corr)
        return loss, p, m, v
    loss = benchmark(_epoch, step, params, batches, jnp.asarray, jnp.zeros_like)
    assert loss < 1.0


# -- compile time ----------------------------------------------------------------------------------

def _fresh_chain_nx():
    return nx.jit(nx.grad(_chain(nx.sin, nx.tanh, nx.exp, nx.sum)))


@pytest.mark.benchmark(group="jit_compile_chain50_grad")
def test_compile_chain50_grad_nx(benchmark):
    x = nx.asarray(X10)
    benchmark.pedantic(lambda: _fresh_chain_nx()(x), rounds=10, iterations=1)


@pytest.mark.benchmark(group="jit_compile_chain50_grad")
def test_compile_chain50_grad_jax(benchmark):
    jax = _jax()
    jnp = jax.numpy
    x = jnp.asarray(X10)

    def run():
        jax.jit(jax.grad(_chain(jnp.sin, jnp.tanh, jnp.exp, jnp.sum)))(x).block_until_ready()
    benchmark.pedantic(run, rounds=10, iterations=1)


@pytest.mark.benchmark(group="jit_compile_hessian20")
def test_compile_hessian20_nx(benchmark):
    x = nx.asarray(X20)
    benchmark.pedantic(lambda: nx.jit(nx.hessian(lambda a: nx.sum(nx.sin(a) * a ** 2)))(x),
                       rounds=10, iterations=1)


@pytest.mark.benchmark(group="jit_compile_hessian20")
def test_compile_hessian20_jax(benchmark):
    jax = _jax()
    jnp = jax.numpy
    x = jnp.asarray(X20)

    def run():
        jax.jit(jax.hessian(lambda a: jnp.sum(jnp.sin(a) * a ** 2)))(x).block_until_ready()
    benchmark.pedantic(run, rounds=10, iterations=1)


@pytest.mark.benchmark(group="jit_compile_mlp_sgd_step")
def test_compile_mlp_sgd_step_nx(benchmark):
    params, x, y = _mlp_data()
    p = {k: nx.asarray(v) for k, v in params.items()}
    xs, ys = nx.asarray(x), nx.asarray(y)
    benchmark.pedantic(lambda: nx.jit(_mlp_step(nx, nx.tanh, lambda z: nx.logsumexp(
        z, -1, keepdims=True), nx.grad))(p, xs, ys), rounds=10, iterations=1)


@pytest.mark.benchmark(group="jit_compile_mlp_sgd_step")
def test_compile_mlp_sgd_step_jax(benchmark):
    jax = _jax()
    jnp = jax.numpy
    params, x, y = _mlp_data()
    p = {k: jnp.asarray(v) for k, v in params.items()}
    xj, yj = jnp.asarray(x), jnp.asarray(y)

    def run():
        step = jax.jit(_mlp_step(jnp, jnp.tanh, lambda z: jax.scipy.special.logsumexp(
            z, -1, keepdims=True), jax.grad))
        jax.block_until_ready(step(p, xj, yj))
    benchmark.pedantic(run, rounds=10, iterations=1)


# -- the stop_gradient primitive -------------------------------------------------------------------

@pytest.mark.benchmark(group="stop_gradient_bind")
def test_stop_gradient_bind_nx(benchmark):
    x = nx.asarray(X10)
    benchmark(P.bind, P.stop_gradient_p, x)


@pytest.mark.benchmark(group="stop_gradient_bind")
def test_stop_gradient_bind_numpy(benchmark):
    benchmark(np.asarray, X10)


# -- the table -------------------------------------------------------------------------------------

# -- vmap composed with jit: per-example gradients -----------------------------------------------
# grad of a 32-64-1 tanh MLP's squared error per example, batch 128, float32: jit(vmap(grad))
# and vmap(jit(grad)) (the batched program of the jitted gradient) against jax.jit(jax.vmap(...))

def _per_example_data():
    rng = np.random.default_rng(3)
    params = ((rng.standard_normal((32, 64)) / 6).astype(np.float32),
              np.zeros(64, np.float32), (rng.standard_normal((64,)) / 8).astype(np.float32))
    x = rng.standard_normal((128, 32)).astype(np.float32)
    y = rng.standard_normal(128).astype(np.float32)
    return params, x, y


def _example_loss(tanh):
    def loss(p, x, y):
        w1, b1, w2 = p
        return (tanh(x @ w1 + b1) @ w2 - y) ** 2
    return loss


def _per_example_reference():
    params, x, y = _per_example_data()
    w1, b1, w2 = (a.astype(np.float64) for a in params)
    h = np.tanh(x @ w1 + b1)
    r = 2 * (h @ w2 - y)                                   # (128,)
    gh = r[:, None] * w2 * (1 - h ** 2)                     # (128, 64)
    return (x[:, :, None] * gh[:, None, :], gh, r[:, None] * h)


def _check_per_example(out):
    for g, w in zip(out, _per_example_reference()):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-5)


NX_EX_GRAD = nx.grad(_example_loss(nx.tanh))


@pytest.mark.benchmark(group="jit_vmap_per_example_grad")
def test_per_example_grad_nx_jit_of_vmap(benchmark):
    params, x, y = _per_example_data()
    f = nx.jit(nx.vmap(NX_EX_GRAD, in_axes=(None, 0, 0)))
    p = tuple(nx.asarray(a) for a in params)
    _check_per_example(benchmark(f, p, nx.asarray(x), nx.asarray(y)))


@pytest.mark.benchmark(group="jit_vmap_per_example_grad")
def test_per_example_grad_nx_vmap_of_jit(benchmark):
    params, x, y = _per_example_data()
    f = nx.vmap(nx.jit(NX_EX_GRAD), in_axes=(None, 0, 0))
    p = tuple(nx.asarray(a) for a in params)
    _check_per_example(benchmark(f, p, nx.asarray(x), nx.asarray(y)))


@pytest.mark.benchmark(group="jit_vmap_per_example_grad")
def test_per_example_grad_nx_eager(benchmark):
    params, x, y = _per_example_data()
    f = nx.vmap(NX_EX_GRAD, in_axes=(None, 0, 0))
    p = tuple(nx.asarray(a) for a in params)
    _check_per_example(benchmark(f, p, nx.asarray(x), nx.asarray(y)))


@pytest.mark.benchmark(group="jit_vmap_per_example_grad")
def test_per_example_grad_jax_jit(benchmark):
    jax = _jax()
    jnp = jax.numpy
    params, x, y = _per_example_data()
    f = jax.jit(jax.vmap(jax.grad(_example_loss(jnp.tanh)), in_axes=(None, 0, 0)))
    p = tuple(jnp.asarray(a) for a in params)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    _check_per_example(benchmark(lambda: jax.block_until_ready(f(p, xj, yj))))


def _table(data):
    groups = {}
    for b in data["benchmarks"]:
        impl = b["name"].split("[")[0].replace("test_", "")
        groups.setdefault(b["group"], {})[impl] = b["stats"]["median"]
    lines = [f"{'group':28s} {'impl':34s} {'median':>12s} {'vs jax':>8s}"]
    for g, impls in groups.items():
        jax_t = next((v for k, v in impls.items() if k.endswith("_jax_jit") or k.endswith(
            "_jax")), None)
        for k, v in impls.items():
            ratio = f"{v / jax_t:7.2f}x" if jax_t else "       -"
            unit = (v * 1e3, "ms") if v >= 1e-3 else (v * 1e6, "us")
            lines.append(f"{g:28s} {k:34s} {unit[0]:9.2f} {unit[1]} {ratio}")
    return "\n".join(lines)


if __name__ == "__main__":
    import json
    import subprocess
    import tempfile
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("NX_RUNE_NUM_THREADS", "1")
    env.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                "intra_op_parallelism_threads=1")
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        subprocess.call([sys.executable, "-m", "pytest", __file__, "--benchmark-only", "-q",
                         "-p", "no:cacheprovider", f"--benchmark-json={path}", *sys.argv[1:]],
                        cwd=ROOT, env=env)
        with open(path) as f:
            print(_table(json.load(f)))
    finally:
        os.unlink(path)
