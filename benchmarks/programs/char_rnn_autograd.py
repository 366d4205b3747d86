"""A character RNN (tanh cell, softmax cross-entropy on the next character), with HIPS
autograd."""
import autograd.numpy as np
from autograd import value_and_grad
from autograd.scipy.special import logsumexp


def loss(params, inputs, targets):
    """Mean cross-entropy of next-character predictions; ``inputs``/``targets`` one-hot
    (seq_len, batch, vocab)."""
    h = params["h0"]
    total = 0.0
    for step in range(inputs.shape[0]):
        h = np.tanh(np.dot(np.concatenate((inputs[step], h), axis=1), params["Wxh"])
                    + params["bh"])
        logits = np.dot(h, params["Why"]) + params["by"]
        logp = logits - logsumexp(logits, axis=1, keepdims=True)
        total = total + np.sum(logp * targets[step])
    return -total / (inputs.shape[0] * inputs.shape[1])


loss_and_grad = value_and_grad(loss)


def sgd_step(params, inputs, targets, lr=0.1):
    """One stochastic-gradient step: returns (loss, new parameters)."""
    value, g = loss_and_grad(params, inputs, targets)
    return value, {name: p - lr * g[name] for name, p in params.items()}
