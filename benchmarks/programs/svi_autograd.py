"""Black-box stochastic variational inference (reparameterization trick) for a Bayesian
logistic regression, with HIPS autograd; the noise from NumPy's generator."""
import autograd.numpy as np
from autograd import grad

PRIOR_VAR = 4.0


def log_density(z, x, y):
    """Unnormalised log posterior of each weight sample ``z`` (samples, d): a Gaussian prior
    and the logistic likelihood of labels ``y`` (n,) in {-1, 1} for inputs ``x`` (n, d)."""
    prior = -0.5 * np.sum(z ** 2, axis=1) / PRIOR_VAR
    margins = np.dot(z, x.T) * y
    return prior - np.sum(np.logaddexp(0.0, -margins), axis=1)


def neg_elbo(params, x, y, eps):
    """Monte-Carlo estimate of the negative ELBO of the diagonal Gaussian ``params`` = (mean,
    log_std), from the standard normal draws ``eps`` (samples, d)."""
    mean, log_std = params
    z = mean + eps * np.exp(log_std)
    d = mean.shape[0]
    entropy = np.sum(log_std) + 0.5 * d * (1.0 + np.log(2.0 * np.pi))
    return -(entropy + np.mean(log_density(z, x, y)))


neg_elbo_grad = grad(neg_elbo)


def fit(params, x, y, rng, steps=5, samples=32, lr=0.01):
    """``steps`` gradient steps on the ELBO, each from fresh noise of ``rng``
    (a ``numpy.random.Generator``)."""
    mean, log_std = params
    for _ in range(steps):
        eps = rng.standard_normal((samples, mean.shape[0]))
        g_mean, g_log_std = neg_elbo_grad((mean, log_std), x, y, eps)
        mean, log_std = mean - lr * g_mean, log_std - lr * g_log_std
    return mean, log_std
