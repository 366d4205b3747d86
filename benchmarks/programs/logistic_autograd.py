"""Logistic regression trained by gradient descent, with HIPS autograd."""
import autograd.numpy as np
from autograd import grad


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def loss(w, x, t, lam=1e-3):
    """Mean negative log-likelihood of labels ``t`` (n,) under weights ``w`` (d,) for inputs
    ``x`` (n, d), plus an L2 penalty."""
    p = sigmoid(np.dot(x, w))
    label_probs = p * t + (1.0 - p) * (1.0 - t)
    return -np.mean(np.log(label_probs)) + lam * np.sum(w ** 2)


loss_grad = grad(loss)


def train(w, x, t, steps=10, lr=0.5):
    """``steps`` gradient-descent steps from ``w``; returns the final weights."""
    for _ in range(steps):
        w = w - lr * loss_grad(w, x, t)
    return w
