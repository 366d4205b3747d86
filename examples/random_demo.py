"""Counter-based random numbers: keys, splits and samplers (bit-exact with JAX's threefry).
========================================================================================

    python examples/random_demo.py
"""
import numpy as np

import nx_rune as nx


def main(argv=None):
    key = nx.random.key(42)
    k1, k2, k3 = nx.random.split(key, 3)
    u = nx.random.uniform(k1, (100_000,))
    z = nx.random.normal(k2, (100_000,))
    print(f"uniform: mean {float(nx.mean(u)):.4f} (0.5), var {float(nx.var(u)):.4f} (0.0833)")
    print(f"normal:  mean {float(nx.mean(z)):.4f} (0), var {float(nx.var(z)):.4f} (1)")
    print("randint(0, 6, (10,)):", nx.random.randint(k3, (10,), 0, 6).numpy())
    print("permutation(10):", nx.random.permutation(k3, 10).numpy())
    again = nx.random.normal(k2, (100_000,))
    print("same key, same numbers:", np.array_equal(again.numpy(), z.numpy()))
    return u.numpy(), z.numpy()


if __name__ == "__main__":
    main()
