"""Train a 64-32-10 MLP on scikit-learn's bundled digits with nx.value_and_grad and Adam.

    python examples/train_mlp.py [--epochs 30] [--plot loss.png]

The weights are initialised with nx.random; Adam is written with nx ops.  Prints the test
accuracy at the end (about 95-97 %).
"""
import argparse
import math

import numpy as np

import nx_rune as nx


def load_data(seed=0):
    """Digits as float32 (n, 64) features in [0, 1] and int32 labels, split 80/20."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_train = int(0.8 * len(x))
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def init_params(key, sizes=(64, 32, 10)):
    """He-initialised weights {"w0", "b0", "w1", "b1"} for the layer sizes given."""
    params = {}
    keys = nx.random.split(key, len(sizes) - 1)
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        scale = math.sqrt(2.0 / fan_in)
        params[f"w{i}"] = nx.random.normal(keys[i], (fan_in, fan_out)) * scale
        params[f"b{i}"] = nx.zeros((fan_out,))
    return params


def forward(params, x):
    """Logits (batch, 10) for inputs x (batch, 64)."""
    h = nx.relu(x @ params["w0"] + params["b0"])
    return h @ params["w1"] + params["b1"]


def loss_fn(params, x, onehot):
    """Mean cross-entropy of the softmax of the logits against one-hot labels (batch, 10)."""
    logp = nx.log_softmax(forward(params, x), axis=-1)
    return -nx.mean(nx.sum(onehot * logp, axis=-1))


def adam_init(params):
    zeros = {k: nx.zeros_like(v) for k, v in params.items()}
    return {"m": zeros, "v": dict(zeros), "t": 0}


def adam_step(params, grads, state, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam update; returns (params, state)."""
    t = state["t"] + 1
    m = {k: b1 * state["m"][k] + (1 - b1) * g for k, g in grads.items()}
    v = {k: b2 * state["v"][k] + (1 - b2) * g * g for k, g in grads.items()}
    correction = math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    new = {k: p - lr * correction * m[k] / (nx.sqrt(v[k]) + eps) for k, p in params.items()}
    return new, {"m": m, "v": v, "t": t}


def accuracy(params, x, y):
    return float(np.mean(nx.argmax(forward(params, nx.asarray(x)), axis=-1).numpy() == y))


def train(epochs=30, batch_size=64, lr=1e-2, seed=0, progress=True):
    """Train and return (params, losses per epoch, test accuracy)."""
    from tqdm import tqdm

    (x_train, y_train), (x_test, y_test) = load_data(seed)
    onehot = np.eye(10, dtype=np.float32)[y_train]
    key = nx.random.key(seed)
    params = init_params(key)
    state = adam_init(params)
    step = nx.value_and_grad(loss_fn)
    rng = np.random.default_rng(seed)
    losses = []
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        batches = range(0, len(order), batch_size)
        bar = tqdm(batches, desc=f"epoch {epoch + 1}/{epochs}", leave=False, disable=not progress)
        total = 0.0
        for start in bar:
            idx = order[start:start + batch_size]
            loss, grads = step(params, nx.asarray(x_train[idx]), nx.asarray(onehot[idx]))
            params, state = adam_step(params, grads, state, lr)
            total += float(loss) * len(idx)
            bar.set_postfix(loss=f"{float(loss):.4f}")
        losses.append(total / len(x_train))
    return params, losses, accuracy(params, x_test, y_test)


def plot_losses(losses, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(range(1, len(losses) + 1), losses, marker="o")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.set_yscale("log")
    ax.set_title("64-32-10 MLP on digits (nx_rune)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", metavar="PATH", help="save the loss curve to PATH (png)")
    args = parser.parse_args(argv)
    _, losses, acc = train(args.epochs, args.batch_size, args.lr, args.seed)
    print(f"final training loss {losses[-1]:.4f}; test accuracy {acc * 100:.1f} %")
    if args.plot:
        plot_losses(losses, args.plot)
        print(f"loss curve saved to {args.plot}")
    return losses, acc


if __name__ == "__main__":
    main()
