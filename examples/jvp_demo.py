"""Forward mode: nx.jvp, nx.jacfwd against nx.jacrev, and a Hessian-vector product.
================================================================================

    python examples/jvp_demo.py
"""
import numpy as np

import nx_rune as nx


def f(x):
    """R^3 -> R^2: (sin(x0) x1, x2^2 + exp(x0))."""
    return nx.stack([nx.sin(x[0]) * x[1], x[2] ** 2 + nx.exp(x[0])])


def main(argv=None):
    x = nx.asarray(np.array([0.5, -1.0, 2.0]))
    v = nx.asarray(np.array([1.0, 0.0, 0.0]))
    y, dy = nx.jvp(f, (x,), (v,))
    print("f(x) =", y.numpy(), " J v =", dy.numpy())
    jf, jr = nx.jacfwd(f)(x), nx.jacrev(f)(x)
    print("jacfwd =\n", jf.numpy())
    print("jacfwd equals jacrev:", np.allclose(jf.numpy(), jr.numpy()))

    def g(x):
        return nx.sum(nx.sin(x) * x ** 2)

    _, hv = nx.hvp(g, (x,), (v,))
    print("H v for sum(sin(x) x^2) =", np.asarray(hv))
    return jf.numpy(), jr.numpy()


if __name__ == "__main__":
    main()
