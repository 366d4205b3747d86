"""A character RNN (tanh cell, softmax cross-entropy on the next character), with nx_rune
(char_rnn_autograd.py's program, ported)."""
import nx_rune as nx


def loss(params, inputs, targets):
    """Mean cross-entropy of next-character predictions; ``inputs``/``targets`` one-hot
    (seq_len, batch, vocab)."""
    h = params["h0"]
    total = 0.0
    for step in range(inputs.shape[0]):
        h = nx.tanh(nx.dot(nx.concatenate((inputs[step], h), axis=1), params["Wxh"])
                    + params["bh"])
        logits = nx.dot(h, params["Why"]) + params["by"]
        logp = logits - nx.logsumexp(logits, axis=1, keepdims=True)
        total = total + nx.sum(logp * targets[step])
    return -total / (inputs.shape[0] * inputs.shape[1])


loss_and_grad = nx.value_and_grad(loss)


def sgd_step(params, inputs, targets, lr=0.1):
    """One stochastic-gradient step: returns (loss, new parameters)."""
    value, g = loss_and_grad(params, inputs, targets)
    return value, {name: p - lr * g[name] for name, p in params.items()}
