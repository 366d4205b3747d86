"""nx_rune against PyTorch (CPU) on the speed issue's rows, interleaved round by round.

PyTorch is not a dependency; install its CPU build beside nx_rune to run this (in a separate
virtual environment if you like: ``python -m venv --system-site-packages v; v/bin/pip install
torch``).  Each row alternates nx_rune and torch round by round (so both see the same load) and
prints min / median / max of 9 rounds of each side and the ratio of the medians (torch's
median over nx_rune's: above 1, nx_rune is faster).  Nothing here asserts a time.

    python benchmarks/bench_torch_rows.py              # the table, torch with 1 thread and
                                                       # with its default threads
    python benchmarks/bench_torch_rows.py --busy       # the same next to one busy process
    python -m pytest benchmarks/bench_torch_rows.py --benchmark-only   # pytest-benchmark form

Rows (float32 unless named):
* mlp_sgd_step: one eager SGD step (forward, backward, update) of a 784-256-10 relu MLP with a
  softmax cross-entropy loss at batch 128; torch with ``loss.backward()``.
* matmul: (128,784)@(784,256), (784,128)@(128,256), (128,256)@(256,10), 512^3.
* hessian: the eager hessian of sum(tanh(W @ x)) + x @ A @ x, x of shape (20,);
  ``torch.autograd.functional.hessian(vectorize=True)``.
* gather: take_along_axis on 1000 x 1000 float64 along axis 1; ``torch.gather``.
* transpose_copy: a transposed copy of 4096 x 4096; ``torch.empty(...).copy_(a.T)``.
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]        # bench_peer_ratios, and nx_rune as a script
import nx_rune as nx  # noqa: E402
from bench_peer_ratios import ROUNDS, busy_process, interleaved  # noqa: E402


def _torch():
    return pytest.importorskip("torch")


# -- the cases: each returns (nx_fn, torch_fn) --------------------------------------------------

def mlp_sgd_step(torch):
    rng = np.random.default_rng(0)
    W1 = (rng.standard_normal((784, 256)) / 28).astype(np.float32)
    W2 = (rng.standard_normal((256, 10)) / 16).astype(np.float32)
    b1, b2 = np.zeros(256, np.float32), np.zeros(10, np.float32)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    labels = rng.integers(0, 10, 128)
    y = np.eye(10, dtype=np.float32)[labels]
    lr = 1e-3

    def nx_loss(p, x, y):
        h = nx.maximum(x @ p[0] + p[1], 0.0)
        logits = h @ p[2] + p[3]
        logp = logits - nx.logsumexp(logits, -1, keepdims=True)
        return -nx.mean(nx.sum(logp * y, -1))

    nx_grad = nx.grad(nx_loss)
    nx_params = [nx.asarray(a) for a in (W1, b1, W2, b2)]
    nx_x, nx_y = nx.asarray(x), nx.asarray(y)

    def nx_step():
        g = nx_grad(nx_params, nx_x, nx_y)
        for p, gp in zip(nx_params, g):
            p -= lr * gp

    t_params = [torch.tensor(a, requires_grad=True) for a in (W1, b1, W2, b2)]
    t_x, t_labels = torch.tensor(x), torch.tensor(labels)

    def torch_step():
        h = torch.relu(t_x @ t_params[0] + t_params[1])
        logits = h @ t_params[2] + t_params[3]
        loss = torch.nn.functional.cross_entropy(logits, t_labels)
        loss.backward()
        with torch.no_grad():
            for p in t_params:
                p -= lr * p.grad
                p.grad = None

    return nx_step, torch_step


MATMUL_SHAPES = [((128, 784), (784, 256)), ((784, 128), (128, 256)), ((128, 256), (256, 10)),
                 ((512, 512), (512, 512))]


def matmul(torch, shapes):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    na, nb, ta, tb = nx.asarray(a), nx.asarray(b), torch.tensor(a), torch.tensor(b)
    return (lambda: na @ nb), (lambda: ta @ tb)


def hessian(torch):
    rng = np.random.default_rng(2)
    W = rng.standard_normal((30, 20)).astype(np.float32)
    A = rng.standard_normal((20, 20)).astype(np.float32)
    x = rng.standard_normal(20).astype(np.float32)
    nW, nA, nxx = nx.asarray(W), nx.asarray(A), nx.asarray(x)
    tW, tA, tx = torch.tensor(W), torch.tensor(A), torch.tensor(x)
    nx_h = nx.hessian(lambda v: nx.sum(nx.tanh(nW @ v)) + v @ nA @ v)

    def torch_f(v):
        return torch.tanh(tW @ v).sum() + v @ tA @ v

    return (lambda: nx_h(nxx)), (lambda: torch.autograd.functional.hessian(
        torch_f, tx, vectorize=True))


def gather(torch):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1000, 1000))
    idx = rng.integers(0, 1000, (1000, 1000))
    na, ni, ta, ti = nx.asarray(a), nx.asarray(idx), torch.tensor(a), torch.tensor(idx)
    return (lambda: nx.take_along_axis(na, ni, axis=1)), (lambda: torch.gather(ta, 1, ti))


def transpose_copy(torch):
    a = np.random.default_rng(4).standard_normal((4096, 4096)).astype(np.float32)
    na, ta = nx.asarray(a), torch.tensor(a)

    def torch_copy():
        return torch.empty((4096, 4096), dtype=torch.float32).copy_(ta.T)

    return (lambda: nx.asarray(na.T, copy=True)), torch_copy


def _cases(torch):
    yield "mlp_sgd_step", lambda: mlp_sgd_step(torch)
    for sa, sb in MATMUL_SHAPES:
        yield f"matmul {sa}@{sb}", lambda sa=sa, sb=sb: matmul(torch, (sa, sb))
    yield "hessian (20,)", lambda: hessian(torch)
    yield "gather 1000^2 axis 1 f64", lambda: gather(torch)
    yield "transpose_copy 4096^2", lambda: transpose_copy(torch)


def _check_same_values(torch):
    """The pairs compute the same thing (a wrong pair would make a meaningless ratio)."""
    nf, tf = matmul(torch, MATMUL_SHAPES[0])
    np.testing.assert_allclose(np.asarray(nf()), tf().numpy(), rtol=1e-4, atol=1e-4)
    nf, tf = hessian(torch)
    np.testing.assert_allclose(np.asarray(nf()), tf().numpy(), rtol=1e-4, atol=1e-4)
    nf, tf = gather(torch)
    np.testing.assert_array_equal(np.asarray(nf()), tf().numpy())
    nf, tf = transpose_copy(torch)
    np.testing.assert_array_equal(np.asarray(nf()), tf().numpy())


@pytest.mark.parametrize("threads", [1, None], ids=["torch_1t", "torch_default"])
@pytest.mark.parametrize("case", ["mlp_sgd_step", "hessian (20,)", "gather 1000^2 axis 1 f64",
                                  "transpose_copy 4096^2"])
def test_torch_interleaved(benchmark, case, threads):
    torch = _torch()
    if threads:
        torch.set_num_threads(threads)
    make = dict(_cases(torch))[case]
    mine, peer = make()
    benchmark.group = case
    benchmark.extra_info.update(interleaved(mine, peer))
    benchmark(mine)


def main():
    import torch
    default_threads = torch.get_num_threads()
    _check_same_values(torch)
    print(f"torch {torch.__version__}, nx_rune {nx.__version__}; ratio = torch median / "
          f"nx_rune median (above 1: nx_rune faster); times in ms, min/median/max of {ROUNDS}")
    for threads in (1, default_threads):
        torch.set_num_threads(threads)
        print(f"\n-- torch with {threads} thread(s)")
        for name, make in _cases(torch):
            mine, peer = make()
            r = interleaved(mine, peer)
            fmt = lambda s: "/".join(f"{v * 1e3:.3f}" for v in s)  # noqa: E731
            print(f"{name:34s} nx {fmt(r['nx']):26s} torch {fmt(r['peer']):26s} "
                  f"ratio {r['ratio']:.2f}")


if __name__ == "__main__":
    with busy_process("--busy" in sys.argv[1:]):
        main()
