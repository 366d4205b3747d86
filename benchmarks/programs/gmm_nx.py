"""A Gaussian mixture's negative log-likelihood, its gradient and Hessian-vector products
(power iteration for the top curvature), with nx_rune (gmm_autograd.py's program, ported)."""
import math

import nx_rune as nx

K, D = 4, 3


def unpack(params):
    """The flat parameter vector as (log-weights (K,), means (K, D), log_stds (K, D))."""
    logw = params[:K]
    means = nx.reshape(params[K:K + K * D], (K, D))
    log_stds = nx.reshape(params[K + K * D:], (K, D))
    return logw, means, log_stds


def neg_log_likelihood(params, x):
    """Negative log-likelihood of the data ``x`` (n, D) under the diagonal-covariance mixture."""
    logw, means, log_stds = unpack(params)
    log_pi = logw - nx.logsumexp(logw)
    z = (x[:, None, :] - means[None, :, :]) / nx.exp(log_stds)[None, :, :]
    comp = (-0.5 * nx.sum(z ** 2, axis=2) - nx.sum(log_stds, axis=1)
            - 0.5 * D * math.log(2.0 * math.pi))
    return -nx.sum(nx.logsumexp(log_pi + comp, axis=1))


nll_grad = nx.grad(neg_log_likelihood)


def nll_hvp(params, x, v):
    """The Hessian of the negative log-likelihood at ``params`` applied to ``v``."""
    return nx.hvp(lambda p: neg_log_likelihood(p, x), (params,), (v,))[1]


def curvature(params, x, vec, iters=4):
    """The gradient and ``iters`` power iterations with Hessian-vector products from ``vec``:
    returns (gradient, Rayleigh quotient estimate of the top eigenvalue, last direction)."""
    g = nll_grad(params, x)
    v = vec / nx.sqrt(nx.sum(vec * vec))
    for _ in range(iters):
        hv = nll_hvp(params, x, v)
        eig = nx.sum(v * hv)
        v = hv / nx.sqrt(nx.sum(hv * hv))
    return g, eig, v
