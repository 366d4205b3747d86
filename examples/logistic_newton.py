"""Logistic regression fitted by Newton's method, with the Hessian from nx.hessian.
================================================================================

    python examples/logistic_newton.py [--steps 8]

Each step solves H d = g for the full Hessian of the mean negative log-likelihood (plus a small
L2 term), so the loss falls quadratically near the optimum.
"""
import argparse

import numpy as np

import nx_rune as nx


def make_data(n=400, d=5, seed=0):
    """Separable-ish synthetic data: x (n, d) float64, y (n,) in {0, 1}."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    w_true = rng.normal(size=d)
    p = 1 / (1 + np.exp(-(x @ w_true)))
    y = (rng.random(n) < p).astype(np.float64)
    return x, y


def loss_fn(w, x, y, l2=1e-3):
    """Mean logistic loss of weights w (d,) plus l2/2 |w|^2."""
    z = x @ w
    return nx.mean(nx.softplus(z) - y * z) + 0.5 * l2 * nx.sum(w * w)


def fit(steps=8, seed=0):
    """Newton iterations; returns the list of losses (one per iterate)."""
    x, y = make_data(seed=seed)
    x, y = nx.asarray(x), nx.asarray(y)
    w = nx.zeros((x.shape[1],), dtype=nx.float64)
    grad = nx.grad(loss_fn)
    hess = nx.hessian(loss_fn)
    losses = [float(loss_fn(w, x, y))]
    for _ in range(steps):
        g = grad(w, x, y).numpy()
        h = hess(w, x, y).numpy()
        w = w - nx.asarray(np.linalg.solve(h, g))
        losses.append(float(loss_fn(w, x, y)))
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args(argv)
    losses = fit(args.steps)
    for i, loss in enumerate(losses):
        print(f"newton step {i}: loss {loss:.10f}")
    return losses


if __name__ == "__main__":
    main()
