"""``python -m nx_rune``: a short tour of views, derivatives and random numbers."""
import numpy as np

import nx_rune as nx


def main():
    x = nx.arange(12, dtype=nx.float32).reshape(3, 4)
    print("x =\n", x)
    print("x.T (a view, strides", x.T.strides, ") shares memory:", nx.shares_memory(x, x.T))
    print("x[::-1, 1:3] =\n", x[::-1, 1:3])
    padded = nx.pad(x, 1)
    print("nx.pad(x, 1) is a masked view until read:\n", padded)
    if hasattr(nx, "grad"):
        f = lambda v: nx.sum(nx.sin(v) * v ** 2)  # noqa: E731
        v = nx.asarray(np.linspace(0.0, 1.0, 4))
        print("grad of sum(sin(v) v^2) at", v.numpy(), "=", nx.grad(f)(v))
    if hasattr(nx, "random"):
        key = nx.random.key(0)
        print("nx.random.normal(key(0), (3,)) =", nx.random.normal(key, (3,)))


if __name__ == "__main__":
    main()
