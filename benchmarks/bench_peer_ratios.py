"""nx_rune against its peers (JAX 0.10.2 installed locally for the comparison, PyTorch where
installed; neither is a dependency) on three cases, timed interleaved in one run.

Run:  python benchmarks/bench_peer_ratios.py        (pytest-benchmark, then the interleaved
                                                      table: min / median / max of 9 rounds of
                                                      each side, and the ratio of medians)
      python benchmarks/bench_peer_ratios.py --busy (the same with one other busy process, a
                                                      ``while True: pass`` started before and
                                                      killed after: the loaded machine's rows)
      python -m pytest benchmarks/bench_peer_ratios.py --benchmark-only --benchmark-group-by=group

The machine may be shared: each ``*_interleaved`` row alternates nx_rune and the peer round by
round (so both see the same load) and records, in ``extra_info``, every side's min / median /
max of 9 rounds and ``ratio`` = the peer's median / nx_rune's median (above 1: nx_rune faster).
Nothing here asserts a time.

Groups:
* hessian_matvec: the eager hessian of f(x) = sum(tanh(W @ x)) + x @ A @ x, x of shape (20,),
  W (30, 20), A (20, 20), float32: nx.hessian against jax.hessian (eager and jitted) and
  torch.autograd.functional.hessian(vectorize=True) where torch is installed.
* jit_mlp_relu_sgd_step: one SGD step of a 784-256-10 relu MLP with a softmax cross-entropy
  loss, batch 128, float32: nx.jit against jax.jit of the same step.
* jit_grad_square: ``jit(grad(lambda y: sum(y ** 2)))`` on (8, 32, 32, 32) float32, against
  the eager grad and jax.jit (the compiled program is one multiply: ``2 * y``).
"""
import os
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # as a script
import nx_rune as nx  # noqa: E402

ROUNDS = 9


def _jax():
    return pytest.importorskip("jax")


def _median_time(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def _settled_time(fn, reps, settle):
    """``_median_time`` after ``settle`` seconds of sleep and 3 untimed calls: the other
    side's threads, still spinning after its last call, have gone to sleep, and this side's
    woken up again."""
    if settle:
        time.sleep(settle)
        _median_time(fn, 3)
    return _median_time(fn, reps)


def interleaved(mine, peer, rounds=ROUNDS, target=0.02, settle=0.0):
    """Alternate ``mine`` and ``peer`` round by round (each round: as many calls as fill
    ``target`` seconds, the mean per call): ``{"nx": (min, median, max), "peer": (...),
    "ratio": peer median / nx median}``.  ``settle`` > 0: each side's round starts after that
    many seconds of sleep (untimed), so that neither side's round meets the other's threads
    still spinning after its last call (OpenBLAS's spin for ~0.1 s, XLA's and OpenMP's a
    while too): each side as a program that calls only it sees it."""
    mine(), peer()                    # warm: compile, caches
    reps = max(1, int(target / max(_median_time(mine, 3), 1e-7)))
    preps = max(1, int(target / max(_median_time(peer, 3), 1e-7)))
    ts, tp = [], []
    for _ in range(rounds):
        ts.append(_settled_time(mine, reps, settle))
        tp.append(_settled_time(peer, preps, settle))
    stats = lambda v: (min(v), float(np.median(v)), max(v))  # noqa: E731
    return {"nx": stats(ts), "peer": stats(tp), "ratio": float(np.median(tp) / np.median(ts))}


def _record(benchmark, res):
    benchmark.extra_info.update({"nx_min_med_max_s": res["nx"],
                                 "peer_min_med_max_s": res["peer"],
                                 "ratio_peer_over_nx": res["ratio"]})


# -- hessian of a (20,) function ------------------------------------------------------------------

def _hess_data():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((30, 20)).astype(np.float32)
    A = rng.standard_normal((20, 20)).astype(np.float32)
    x = rng.standard_normal(20).astype(np.float32)
    th = np.tanh(W.astype(np.float64) @ x)
    want = (W.T.astype(np.float64) @ np.diag(-2 * th * (1 - th ** 2)) @ W + A + A.T)
    return W, A, x, want


def _nx_hessian():
    W, A, x, want = _hess_data()
    Wn, An = nx.asarray(W), nx.asarray(A)
    h = nx.hessian(lambda x: nx.sum(nx.tanh(Wn @ x)) + x @ An @ x)
    return h, nx.asarray(x), want


def _jax_hessian(jit):
    jax = _jax()
    jnp = jax.numpy
    W, A, x, want = _hess_data()
    Wj, Aj = jnp.asarray(W), jnp.asarray(A)
    h = jax.hessian(lambda x: jnp.sum(jnp.tanh(Wj @ x)) + x @ Aj @ x)
    if jit:
        h = jax.jit(h)
    xj = jnp.asarray(x)
    return (lambda: h(xj).block_until_ready()), want


@pytest.mark.benchmark(group="hessian_matvec")
def test_hessian_matvec_nx(benchmark):
    h, x, want = _nx_hessian()
    H = benchmark(h, x)
    np.testing.assert_allclose(np.asarray(H), want, rtol=1e-4, atol=1e-4)


@pytest.mark.benchmark(group="hessian_matvec")
def test_hessian_matvec_jax_eager(benchmark):
    run, want = _jax_hessian(False)
    np.testing.assert_allclose(np.asarray(benchmark(run)), want, rtol=1e-4, atol=1e-4)


@pytest.mark.benchmark(group="hessian_matvec")
def test_hessian_matvec_jax_jit(benchmark):
    run, want = _jax_hessian(True)
    np.testing.assert_allclose(np.asarray(benchmark(run)), want, rtol=1e-4, atol=1e-4)


def _torch_hessian():
    torch = pytest.importorskip("torch")
    from torch.autograd.functional import hessian
    W, A, x, want = _hess_data()
    Wt, At, xt = torch.tensor(W), torch.tensor(A), torch.tensor(x)
    return (lambda: hessian(lambda x: torch.sum(torch.tanh(Wt @ x)) + x @ At @ x, xt,
                            vectorize=True)), want


@pytest.mark.benchmark(group="hessian_matvec")
def test_hessian_matvec_torch_vectorized(benchmark):
    run, want = _torch_hessian()
    np.testing.assert_allclose(benchmark(run).numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.benchmark(group="hessian_matvec")
def test_hessian_matvec_interleaved_jax_jit(benchmark):
    h, x, _ = _nx_hessian()
    run, _ = _jax_hessian(True)
    _record(benchmark, interleaved(lambda: h(x), run))
    benchmark(h, x)


@pytest.mark.benchmark(group="hessian_matvec")
def test_hessian_matvec_interleaved_torch_vectorized(benchmark):
    run, _ = _torch_hessian()
    h, x, _ = _nx_hessian()
    _record(benchmark, interleaved(lambda: h(x), run))
    benchmark(h, x)


# -- jit MLP SGD step (relu, softmax cross-entropy) ----------------------------------------------

def _mlp_data():
    rng = np.random.default_rng(0)
    params = {"W1": (rng.standard_normal((784, 256)) / 28).astype(np.float32),
              "b1": np.zeros(256, np.float32),
              "W2": (rng.standard_normal((256, 10)) / 16).astype(np.float32),
              "b2": np.zeros(10, np.float32)}
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, x, y


def _mlp_step(lib, logsumexp, grad):
    def loss(p, x, y):
        h = lib.maximum(x @ p["W1"] + p["b1"], 0.0)
        logits = h @ p["W2"] + p["b2"]
        return -lib.mean(lib.sum((logits - logsumexp(logits, -1, keepdims=True)) * y, -1))

    def step(p, x, y):
        g = grad(loss)(p, x, y)
        return {k: p[k] - 0.1 * g[k] for k in p}
    return step


def _nx_mlp():
    params, x, y = _mlp_data()
    step = nx.jit(_mlp_step(nx, nx.logsumexp, nx.grad))
    args = ({k: nx.asarray(v) for k, v in params.items()}, nx.asarray(x), nx.asarray(y))
    return step, args


def _jax_mlp():
    jax = _jax()
    params, x, y = _mlp_data()
    step = jax.jit(_mlp_step(jax.numpy, jax.scipy.special.logsumexp, jax.grad))
    args = ({k: jax.numpy.asarray(v) for k, v in params.items()}, jax.numpy.asarray(x),
            jax.numpy.asarray(y))
    return (lambda: jax.block_until_ready(step(*args))), args


@pytest.mark.benchmark(group="jit_mlp_relu_sgd_step")
def test_mlp_relu_sgd_step_nx_jit(benchmark):
    step, args = _nx_mlp()
    out = benchmark(step, *args)
    want = _mlp_step(nx, nx.logsumexp, nx.grad)(*args)
    for k in out:
        np.testing.assert_allclose(np.asarray(out[k]), np.asarray(want[k]), rtol=1e-4,
                                   atol=1e-6)


@pytest.mark.benchmark(group="jit_mlp_relu_sgd_step")
def test_mlp_relu_sgd_step_jax_jit(benchmark):
    run, _ = _jax_mlp()
    out = benchmark(run)
    step, args = _nx_mlp()
    want = step(*args)
    for k in out:
        np.testing.assert_allclose(np.asarray(out[k]), np.asarray(want[k]), rtol=1e-4,
                                   atol=1e-6)


@pytest.mark.benchmark(group="jit_mlp_relu_sgd_step")
def test_mlp_relu_sgd_step_interleaved_jax_jit(benchmark):
    step, args = _nx_mlp()
    run, _ = _jax_mlp()
    _record(benchmark, interleaved(lambda: step(*args), run))
    benchmark(step, *args)


# -- jit(grad) of sum(y ** 2) ---------------------------------------------------------------------

Y4 = np.random.default_rng(1).standard_normal((8, 32, 32, 32)).astype(np.float32)


def _square_grad(lib, grad):
    return grad(lambda y: lib.sum(y ** 2))


@pytest.mark.benchmark(group="jit_grad_square")
def test_grad_square_nx_jit(benchmark):
    g = nx.jit(_square_grad(nx, nx.grad))
    np.testing.assert_allclose(np.asarray(benchmark(g, nx.asarray(Y4))), 2 * Y4, rtol=1e-6)


@pytest.mark.benchmark(group="jit_grad_square")
def test_grad_square_nx_eager(benchmark):
    g = _square_grad(nx, nx.grad)
    np.testing.assert_allclose(np.asarray(benchmark(g, nx.asarray(Y4))), 2 * Y4, rtol=1e-6)


@pytest.mark.benchmark(group="jit_grad_square")
def test_grad_square_jax_jit(benchmark):
    jax = _jax()
    g = jax.jit(_square_grad(jax.numpy, jax.grad))
    y = jax.numpy.asarray(Y4)
    out = benchmark(lambda: g(y).block_until_ready())
    np.testing.assert_allclose(np.asarray(out), 2 * Y4, rtol=1e-6)


@pytest.mark.benchmark(group="jit_grad_square")
def test_grad_square_interleaved_jax_jit(benchmark):
    jax = _jax()
    g = nx.jit(_square_grad(nx, nx.grad))
    gj = jax.jit(_square_grad(jax.numpy, jax.grad))
    y, yj = nx.asarray(Y4), jax.numpy.asarray(Y4)
    _record(benchmark, interleaved(lambda: g(y), lambda: gj(yj).block_until_ready()))
    benchmark(g, y)


def _table(data):
    lines = [f"{'group':24s} {'case':44s} {'nx min/med/max':>26s} {'peer min/med/max':>26s} "
             f"{'peer/nx':>8s}"]
    fmt = lambda v: "/".join(f"{x * 1e6:.0f}" for x in v) + " us"  # noqa: E731
    for b in data["benchmarks"]:
        info = b.get("extra_info") or {}
        if "ratio_peer_over_nx" in info:
            lines.append(f"{b['group']:24s} {b['name']:44s} "
                         f"{fmt(info['nx_min_med_max_s']):>26s} "
                         f"{fmt(info['peer_min_med_max_s']):>26s} "
                         f"{info['ratio_peer_over_nx']:7.2f}x")
    return "\n".join(lines)


def run_as_script(path, args):
    """Run the benchmarks of the file at ``path`` (pytest-benchmark, ``args`` passed on) and print
    the interleaved rows' table: each benchmark file's ``python benchmarks/<file>.py``."""
    import json
    import subprocess
    import tempfile
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        subprocess.call([sys.executable, "-m", "pytest", path, "--benchmark-only", "-q",
                         "-p", "no:cacheprovider", f"--benchmark-json={out}", *args], cwd=root)
        with open(out) as f:
            print(_table(json.load(f)))
    finally:
        os.unlink(out)


class busy_process:
    """``with busy_process(on):`` one other process spinning (``while True: pass``) while the
    block runs, when ``on`` (the scripts' ``--busy``: the loaded machine's rows)."""

    def __init__(self, on=True):
        self.on = on
        self.proc = None

    def __enter__(self):
        if self.on:
            import subprocess
            self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        return False


def main_with_busy(path, argv):
    """A benchmark file's script entry: ``run_as_script`` with its arguments, under
    ``busy_process`` when ``--busy`` is among them."""
    args = [a for a in argv if a != "--busy"]
    with busy_process(len(args) < len(argv)):
        run_as_script(path, args)


if __name__ == "__main__":
    main_with_busy(__file__, sys.argv[1:])
