"""Train a 64-32-10 MLP on scikit-learn's bundled digits with nx.value_and_grad and Adam.
======================================================================================

    python examples/train_mlp.py [--epochs 30] [--plot loss.png] [--no-progress]

The weights are initialised with nx.random and updated by nx.optimizers.adam.  One progress bar
counts the steps of the whole run (23 per epoch), then a final line gives the last epoch's mean
training loss and the accuracy on the 360 held-out digits: with the defaults,
"final training loss 0.0205; test accuracy 98.3 %" (96.4-98.3 % for seeds 0-4, which
also choose the split).
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


def accuracy(params, x, y):
    """Fraction of rows of x (n, 64) whose arg-max logit equals the label y (n,)."""
    return float(np.mean(nx.argmax(forward(params, nx.asarray(x)), axis=-1).numpy() == y))


def train(epochs=30, batch_size=64, lr=1e-2, seed=0, progress=True):
    """Train with Adam and return (params, mean training loss per epoch, test accuracy).

    One progress bar counts every step of the run; it shows the latest batch loss and the mean
    loss of the last epoch completed.
    """
    from tqdm import tqdm

    (x_train, y_train), (x_test, y_test) = load_data(seed)
    onehot = np.eye(10, dtype=np.float32)[y_train]
    params = init_params(nx.random.key(seed))
    opt = nx.optimizers.adam(lr)
    state = opt.init(params)
    step = nx.value_and_grad(loss_fn)
    rng = np.random.default_rng(seed)
    steps_per_epoch = math.ceil(len(x_train) / batch_size)
    losses = []
    shown = {}
    # The bar is updated by hand: set_postfix on a bar that wraps an iterable redraws the count
    # the iterator last published, which lags behind (it stayed at 0/23 for whole epochs).
    with tqdm(total=epochs * steps_per_epoch, unit="step", disable=not progress) as bar:
        for epoch in range(epochs):
            order = rng.permutation(len(x_train))
            total = 0.0
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                loss, grads = step(params, nx.asarray(x_train[idx]), nx.asarray(onehot[idx]))
                updates, state = opt.update(grads, state, params)
                params = nx.optimizers.apply_updates(params, updates)
                total += float(loss) * len(idx)
                shown.update(epoch=f"{epoch + 1}/{epochs}", loss=f"{float(loss):.4f}")
                bar.set_postfix(shown, refresh=False)
                bar.update(1)
            losses.append(total / len(x_train))
            shown["epoch_mean"] = f"{losses[-1]:.4f}"
            bar.set_postfix(shown)  # redraws: one line per finished epoch in a captured log
    return params, losses, accuracy(params, x_test, y_test)


def plot_losses(losses, path):
    """Save the mean training loss per epoch (log scale) to path."""
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


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv=None):
    """Parse argv, train, print the final line and optionally plot; returns (losses, accuracy)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--epochs", type=_positive_int, default=30)
    parser.add_argument("--batch-size", type=_positive_int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", metavar="PATH", help="save the loss curve to PATH (png)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    _, losses, acc = train(args.epochs, args.batch_size, args.lr, args.seed,
                           progress=not args.no_progress)
    print(f"final training loss {losses[-1]:.4f}; test accuracy {acc * 100:.1f} %")
    if args.plot:
        plot_losses(losses, args.plot)
        print(f"loss curve saved to {args.plot}")
    return losses, acc


if __name__ == "__main__":
    main()
