"""Data-parallel training on Ray and Dask workers
==============================================

Train the digits MLP of train_mlp.py data-parallel on Ray and on Dask workers, beside the
single-process run, and print each run's time per step and its speedup.

    python examples/train_mlp_distributed.py [--epochs 5] [--batch-size 256] [--hidden 32]
                                             [--workers 2] [--backends ray dask]

Every run starts from the same weights and sees the same batches, so the losses agree (to
float32 rounding: the distributed gradient sums shard means instead of one batch mean).  Each
backend starts a local cluster of its own (Ray: ``ray.init()``; Dask: a ``LocalCluster``) unless
one is already running; on a multi-machine cluster the code is the same after
``ray.init(address=...)`` or with ``client=dask.distributed.Client(scheduler_address)``.
The speedup is the single-process time per step over the distributed one; worker start-up is
timed apart.  Needs ``pip install 'nx_rune[ray,dask,examples]'``.
"""
import argparse
import importlib.util
import pathlib
import time

import numpy as np

import nx_rune as nx


def _load_train_mlp():
    """examples/train_mlp.py as a module, whether this file runs as a script or is imported."""
    # the sphinx-gallery runs this file without __file__, from the examples directory
    here = pathlib.Path(globals().get("__file__", "train_mlp_distributed.py")).resolve()
    path = here.with_name("train_mlp.py")
    spec = importlib.util.spec_from_file_location("_train_mlp_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TM = _load_train_mlp()


def loss_fn(params, batch):
    """Mean cross-entropy of the MLP's softmax over ``batch = (x (n, 64), onehot (n, 10))``;
    the model of train_mlp.py, written as ``fun(params, batch)`` for DataParallel."""
    x, onehot = batch
    h = nx.relu(x @ params["w0"] + params["b0"])
    logp = nx.log_softmax(h @ params["w1"] + params["b1"], axis=-1)
    return -nx.mean(nx.sum(onehot * logp, axis=-1))


def train(backend=None, epochs=5, batch_size=256, hidden=32, lr=1e-2, seed=0, workers=2,
          client=None):
    """Train with Adam; backend None runs in this process, "ray"/"dask" on ``workers`` workers
    (Dask: on ``client``'s cluster if given).  Returns a dict: losses (mean training loss per
    epoch), accuracy (test), step_s (mean seconds per step), start_s (worker start-up)."""
    (x_train, y_train), (x_test, y_test) = TM.load_data(seed)
    onehot = np.eye(10, dtype=np.float32)[y_train]
    params = TM.init_params(nx.random.key(seed), (64, hidden, 10))
    opt = nx.optimizers.adam(lr)
    state = opt.init(params)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    if backend is None:
        dp = None
        step = nx.value_and_grad(loss_fn)
    else:
        extra = {"client": client} if client is not None else {}
        dp = nx.distributed.DataParallel(loss_fn, workers, backend, **extra)
        step = dp.value_and_grad
    start_s = time.perf_counter() - t0
    losses, step_time, steps = [], 0.0, 0
    try:
        for _ in range(epochs):
            order = rng.permutation(len(x_train))
            total = 0.0
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                batch = (x_train[idx], onehot[idx])
                t = time.perf_counter()
                loss, grads = step(params, batch)
                step_time += time.perf_counter() - t
                steps += 1
                updates, state = opt.update(grads, state, params)
                params = nx.optimizers.apply_updates(params, updates)
                total += float(loss) * len(idx)
            losses.append(total / len(x_train))
    finally:
        if dp is not None:
            dp.close()
    return {"losses": losses, "accuracy": TM.accuracy(params, x_test, y_test),
            "step_s": step_time / steps, "start_s": start_s}


def main(argv=None, client=None):
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=32, help="hidden layer width")
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backends", nargs="+", default=["ray", "dask"],
                        choices=["ray", "dask"])
    args = parser.parse_args(argv)
    common = dict(epochs=args.epochs, batch_size=args.batch_size, hidden=args.hidden,
                  lr=args.lr, seed=args.seed)
    runs = {"single process": train(None, **common)}
    for backend in args.backends:
        runs[f"{backend}, {args.workers} workers"] = train(
            backend, workers=args.workers, client=client if backend == "dask" else None,
            **common)
    base = runs["single process"]["step_s"]
    print(f"64-{args.hidden}-10 MLP on digits, batch {args.batch_size}, {args.epochs} epochs")
    print(f"{'run':<18} {'final loss':>10} {'test acc':>9} {'ms/step':>9} {'speedup':>8} "
          f"{'start-up':>9}")
    for name, r in runs.items():
        print(f"{name:<18} {r['losses'][-1]:>10.4f} {r['accuracy'] * 100:>8.1f}% "
              f"{r['step_s'] * 1e3:>9.2f} {base / r['step_s']:>7.2f}x {r['start_s']:>8.2f}s")
    return runs


if __name__ == "__main__":
    main()
