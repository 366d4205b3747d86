"""Gaussian-process regression in float64 mode, hyperparameters fitted by gradient.
================================================================================

    python examples/gp_regression.py [--feature s5] [--steps 150] [--plot gp.png] [--no-progress]

Data: scikit-learn's bundled diabetes set (442 patients), disease progression after one year
against one baseline measurement (default "s5", the log of the serum triglycerides level; any
of age bmi bp s1 ... s6), targets centred on their mean.  Model: a zero-mean GP with the squared
exponential kernel k(a, b) = sf2 exp(-(a - b)^2 / (2 ls^2)) plus white noise of variance sn2.
The log marginal likelihood (through nx.linalg.cholesky and nx.scipy.linalg.solve_triangular)
is maximised over theta = (log ls, log sf2, log sn2) by nx.value_and_grad and
nx.optimizers.adam, everything computed in float64 (`with nx.enable_x64():`).  A progress bar
counts the steps; the last lines give the log marginal likelihood and the hyperparameters,
with the defaults "log marginal likelihood -2462.549" and "length scale 0.9876, signal variance
3511, noise variance 3920".  scikit-learn's GaussianProcessRegressor (the same kernel, fitted by
L-BFGS-B from the same start) finds -2462.549 at 0.9875, 3511 and 3920.  --plot draws the
data, the posterior mean and 2-sigma bands.
"""
import argparse
import math

import numpy as np

import nx_rune as nx

# The diabetes set's columns (scikit-learn's DESCR) but "sex", which has two values.
FEATURES = {"age": "age (years)", "bmi": "body mass index", "bp": "average blood pressure",
            "s1": "total serum cholesterol", "s2": "low-density lipoproteins",
            "s3": "high-density lipoproteins", "s4": "total cholesterol / HDL",
            "s5": "log of the serum triglycerides level", "s6": "blood sugar level"}


def load_data(feature="s5"):
    """The diabetes set's column `feature` (442,) and the centred targets (442,), float64.

    Returns (x, y, y_mean) as NumPy arrays; y = target - y_mean.
    """
    from sklearn.datasets import load_diabetes

    if feature not in FEATURES:
        raise ValueError(f"feature: expected one of {', '.join(FEATURES)}, got {feature!r}")
    data = load_diabetes(scaled=False)
    x = data.data[:, data.feature_names.index(feature)].astype(np.float64)
    target = data.target.astype(np.float64)
    return x, target - target.mean(), float(target.mean())


def initial_theta(x, y):
    """A start from the data's scales: ls = std(x), sf2 = sn2 = var(y) / 2, as log values (3,)."""
    return np.log([x.std(), y.var() / 2, y.var() / 2])


def kernel(theta, a, b):
    """Squared-exponential covariances (m, n) between points a (m,) and b (n,)."""
    length_scale, signal_var = nx.exp(theta[0]), nx.exp(theta[1])
    d2 = (a[:, None] - b[None, :]) ** 2
    return signal_var * nx.exp(-0.5 * d2 / length_scale ** 2)


def log_marginal_likelihood(theta, x, y):
    """log N(y | 0, K + sn2 I) for log-hyperparameters theta (3,), inputs x (n,), targets y (n,).

    With K + sn2 I = L L^T: -|L^-1 y|^2 / 2 - sum(log diag L) - n log(2 pi) / 2.  A 0-d value.
    """
    n = x.shape[0]
    cov = kernel(theta, x, x) + nx.exp(theta[2]) * nx.eye(n)
    chol = nx.linalg.cholesky(cov)
    z = nx.scipy.linalg.solve_triangular(chol, y, lower=True)
    return (-0.5 * nx.sum(z ** 2) - nx.sum(nx.log(nx.linalg.diagonal(chol)))
            - 0.5 * n * math.log(2 * math.pi))


def posterior(theta, x, y, x_new):
    """Posterior mean (m,), latent variance (m,) and predictive variance (m,) at x_new (m,).

    The latent variance is that of f(x_new); the predictive one adds the noise variance sn2.
    """
    n = x.shape[0]
    chol = nx.linalg.cholesky(kernel(theta, x, x) + nx.exp(theta[2]) * nx.eye(n))
    alpha = nx.scipy.linalg.cho_solve((chol, True), y)
    cross = kernel(theta, x_new, x)
    mean = cross @ alpha
    v = nx.scipy.linalg.solve_triangular(chol, cross.T, lower=True)
    latent_var = nx.exp(theta[1]) - nx.sum(v ** 2, axis=0)
    return mean, latent_var, latent_var + nx.exp(theta[2])


def hyperparameters(theta):
    """{"length_scale", "signal_variance", "noise_variance"} as Python floats from theta (3,)."""
    ls, sf2, sn2 = np.exp(np.asarray(theta, dtype=np.float64))
    return {"length_scale": float(ls), "signal_variance": float(sf2), "noise_variance": float(sn2)}


def fit(x, y, steps=150, lr=0.1, progress=True):
    """Maximise the log marginal likelihood with Adam on theta; returns (theta (3,), lml per step).

    x, y: float64 (n,) NumPy arrays.  Call inside `nx.enable_x64()`.
    """
    from tqdm import tqdm

    xs, ys = nx.asarray(x), nx.asarray(y)
    theta = nx.asarray(initial_theta(x, y))
    objective = nx.value_and_grad(lambda t: -log_marginal_likelihood(t, xs, ys))
    opt = nx.optimizers.adam(lr)
    state = opt.init(theta)
    history = []
    with tqdm(total=steps, unit="step", disable=not progress) as bar:
        for i in range(steps):
            nll, grad = objective(theta)
            history.append(-float(nll))
            updates, state = opt.update(grad, state, theta)
            theta = nx.optimizers.apply_updates(theta, updates)
            hp = hyperparameters(theta.numpy())
            bar.set_postfix(lml=f"{history[-1]:.3f}", ls=f"{hp['length_scale']:.3g}",
                            sf2=f"{hp['signal_variance']:.4g}", sn2=f"{hp['noise_variance']:.4g}",
                            refresh=False)
            bar.update(1)
            if (i + 1) % 10 == 0:
                # tqdm redraws at most every 0.1 s: a fast run would otherwise show only its
                # first and last counts (a captured log gets a line per 10 steps)
                bar.refresh()
    return theta.numpy(), history


def plot_fit(x, y, y_mean, theta, feature, path):
    """Save the data, the posterior mean and 2-sigma bands (of f and of a new y) to path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(x.min() - 0.1 * np.ptp(x), x.max() + 0.1 * np.ptp(x), 300)
    mean, latent_var, pred_var = (v.numpy() for v in posterior(
        nx.asarray(theta), nx.asarray(x), nx.asarray(y), nx.asarray(grid)))
    mean = mean + y_mean
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.fill_between(grid, mean - 2 * np.sqrt(pred_var), mean + 2 * np.sqrt(pred_var),
                    color="tab:blue", alpha=0.12, label="2σ band of a new observation")
    ax.fill_between(grid, mean - 2 * np.sqrt(latent_var), mean + 2 * np.sqrt(latent_var),
                    color="tab:blue", alpha=0.35, label="2σ band of the mean f")
    ax.scatter(x, y + y_mean, s=8, color="k", alpha=0.6, label="patients")
    ax.plot(grid, mean, color="tab:blue", lw=2, label="posterior mean")
    hp = hyperparameters(theta)
    ax.set_xlabel(f"{feature}: {FEATURES[feature]}")
    ax.set_ylabel("disease progression after one year")
    ax.set_title(f"GP regression (nx_rune, float64): ls={hp['length_scale']:.3g}, "
                 f"sf2={hp['signal_variance']:.4g}, sn2={hp['noise_variance']:.4g}", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
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
    """Parse argv, fit, print the result and optionally plot; returns a dict of the results."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--feature", choices=tuple(FEATURES), default="s5")
    parser.add_argument("--steps", type=_positive_int, default=150)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--plot", metavar="PATH", help="save the fit to PATH (png)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    x, y, y_mean = load_data(args.feature)
    with nx.enable_x64():
        theta, history = fit(x, y, args.steps, args.lr, progress=not args.no_progress)
        lml = float(log_marginal_likelihood(nx.asarray(theta), nx.asarray(x), nx.asarray(y)))
        hp = hyperparameters(theta)
        print(f"log marginal likelihood {lml:.3f} after {args.steps} steps "
              f"(start {history[0]:.3f})")
        print(f"length scale {hp['length_scale']:.4g}, signal variance "
              f"{hp['signal_variance']:.4g}, noise variance {hp['noise_variance']:.4g}")
        if args.plot:
            plot_fit(x, y, y_mean, theta, args.feature, args.plot)
            print(f"plot saved to {args.plot}")
    return {"theta": theta, "history": history, "lml": lml, "x": x, "y": y, **hp}


if __name__ == "__main__":
    main()
