"""The data and starting points of the programs (NumPy only, float64).

Made with ``np.random.RandomState``, whose streams NumPy keeps fixed across versions, so the
golden values pinned in tests/test_programs.py stay valid.
"""
import numpy as np


def logistic(n=500, d=300, seed=0):
    """Inputs ``x`` (n, d), labels ``t`` in {0, 1} (n,), starting weights ``w`` (d,)."""
    rs = np.random.RandomState(seed)
    x = rs.standard_normal((n, d)) / np.sqrt(d)
    w_true = rs.standard_normal(d)
    t = (x @ w_true + 0.3 * rs.standard_normal(n) > 0).astype(np.float64)
    w = 0.01 * rs.standard_normal(d)
    return x, t, w


def char_rnn(text="the quick brown fox jumps over the lazy dog. " * 4, seq_len=20, batch=8,
             hidden=64, seed=1):
    """One-hot inputs (seq_len, batch, vocab), one-hot targets (the next character, same
    shape) and the parameters (Wxh (vocab + hidden, hidden), bh (hidden,), Why (hidden, vocab),
    by (vocab,), h0 (batch, hidden))."""
    chars = sorted(set(text))
    vocab = len(chars)
    codes = np.array([chars.index(c) for c in text])
    rs = np.random.RandomState(seed)
    starts = rs.randint(0, len(codes) - seq_len - 1, size=batch)
    idx = starts[None, :] + np.arange(seq_len)[:, None]            # (seq_len, batch)
    eye = np.eye(vocab)
    inputs, targets = eye[codes[idx]], eye[codes[idx + 1]]
    scale = 0.1
    params = {
        "Wxh": scale * rs.standard_normal((vocab + hidden, hidden)),
        "bh": np.zeros(hidden),
        "Why": scale * rs.standard_normal((hidden, vocab)),
        "by": np.zeros(vocab),
        "h0": scale * rs.standard_normal((batch, hidden)),
    }
    return inputs, targets, params


def svi(n=100, d=20, samples=32, seed=2):
    """A Bayesian logistic regression posterior to approximate: inputs ``x`` (n, d), labels
    ``y`` in {-1, 1} (n,), the variational parameters (mean (d,), log_std (d,)) and one draw
    of standard normal noise ``eps`` (samples, d)."""
    rs = np.random.RandomState(seed)
    x = rs.standard_normal((n, d))
    w_true = rs.standard_normal(d)
    y = np.where(x @ w_true + rs.standard_normal(n) > 0, 1.0, -1.0)
    mean = 0.1 * rs.standard_normal(d)
    log_std = -1.0 + 0.1 * rs.standard_normal(d)
    eps = rs.standard_normal((samples, d))
    return x, y, mean, log_std, eps


def fluid(n=32, seed=3):
    """A smooth initial velocity (u, v) (n, n) each, a density blob ``rho`` (n, n) and the
    target density the optimisation steers it towards (n, n)."""
    rs = np.random.RandomState(seed)
    g = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    xx, yy = np.meshgrid(g, g, indexing="ij")
    u = np.sin(yy) + 0.1 * rs.standard_normal((n, n))
    v = np.cos(xx) + 0.1 * rs.standard_normal((n, n))
    rho = np.exp(-((xx - np.pi) ** 2 + (yy - np.pi) ** 2))
    target = np.exp(-((xx - 2.0) ** 2 + (yy - 4.0) ** 2) / 0.5)
    return u, v, rho, target


def gmm(n=200, k=4, d=3, seed=4):
    """Data ``x`` (n, d) from ``k`` clusters, the flat parameter vector (k log-weights, k * d
    means, k * d log standard deviations) to evaluate at and a direction ``vec`` of that size."""
    rs = np.random.RandomState(seed)
    centers = 3.0 * rs.standard_normal((k, d))
    labels = rs.randint(0, k, size=n)
    x = centers[labels] + rs.standard_normal((n, d))
    params = np.concatenate([0.1 * rs.standard_normal(k),
                             (centers + 0.5 * rs.standard_normal((k, d))).ravel(),
                             0.1 * rs.standard_normal(k * d)])
    vec = rs.standard_normal(params.size)
    return x, params, vec
