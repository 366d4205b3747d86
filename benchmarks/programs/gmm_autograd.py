"""A Gaussian mixture's negative log-likelihood, its gradient and Hessian-vector products
(power iteration for the top curvature), with HIPS autograd."""
import autograd.numpy as np
from autograd import grad, hessian_vector_product
from autograd.scipy.special import logsumexp

K, D = 4, 3


def unpack(params):
    """The flat parameter vector as (log-weights (K,), means (K, D), log_stds (K, D))."""
    logw = params[:K]
    means = np.reshape(params[K:K + K * D], (K, D))
    log_stds = np.reshape(params[K + K * D:], (K, D))
    return logw, means, log_stds


def neg_log_likelihood(params, x):
    """Negative log-likelihood of the data ``x`` (n, D) under the diagonal-covariance mixture."""
    logw, means, log_stds = unpack(params)
    log_pi = logw - logsumexp(logw)
    z = (x[:, None, :] - means[None, :, :]) / np.exp(log_stds)[None, :, :]
    comp = (-0.5 * np.sum(z ** 2, axis=2) - np.sum(log_stds, axis=1)
            - 0.5 * D * np.log(2.0 * np.pi))
    return -np.sum(logsumexp(log_pi + comp, axis=1))


nll_grad = grad(neg_log_likelihood)
nll_hvp = hessian_vector_product(neg_log_likelihood)


def curvature(params, x, vec, iters=4):
    """The gradient and ``iters`` power iterations with Hessian-vector products from ``vec``:
    returns (gradient, Rayleigh quotient estimate of the top eigenvalue, last direction)."""
    g = nll_grad(params, x)
    v = vec / np.sqrt(np.sum(vec * vec))
    for _ in range(iters):
        hv = nll_hvp(params, x, v)
        eig = np.sum(v * hv)
        v = hv / np.sqrt(np.sum(hv * hv))
    return g, eig, v
