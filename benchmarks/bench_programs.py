"""Five research programs (benchmarks/programs/), each written with HIPS autograd and with
nx_rune, timed in the same run (pytest-benchmark; groups ``program_*``, impl ``nx`` and
``autograd``; the autograd rows skip when it is not installed).

Run:  OPENBLAS_NUM_THREADS=1 python -m pytest benchmarks/bench_programs.py \
          --benchmark-only --benchmark-group-by=group
      OPENBLAS_NUM_THREADS=1 python benchmarks/bench_programs.py   (then the interleaved table;
                                                              --busy: next to one busy process)
(one BLAS thread: these programs are dominated by per-operation costs, which a shared
multi-threaded BLAS only blurs).  Each group also has an ``interleaved_autograd`` row: nx_rune
and autograd alternated round by round (both see the same load), min / median / max of 9
rounds of each and ``ratio`` = autograd's median / nx_rune's (above 1: nx_rune faster), in
``extra_info`` (bench_peer_ratios.interleaved).

* logistic: 10 gradient-descent steps of logistic regression, 500 x 300 float64 features.
* char_rnn: one value_and_grad + SGD step of a tanh RNN over 20 steps, batch 8, hidden 64.
* svi: 5 steps of black-box SVI (32 reparameterized samples of a 20-d diagonal Gaussian;
  noise from nx.random against NumPy's Generator).
* fluid: value_and_grad of a 3-step 32 x 32 fluid simulation with 8 CG iterations a step.
* gmm: the gradient and 4 Hessian-vector products (power iteration) of a 4-component
  Gaussian mixture's log-likelihood on 200 points in 3-d.
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # as a script
import nx_rune as nx  # noqa: E402
from benchmarks.bench_peer_ratios import _record, interleaved, main_with_busy  # noqa: E402
from benchmarks.programs import data  # noqa: E402

IMPLS = ["nx", "autograd"]


def _module(name, impl):
    if impl == "autograd":
        pytest.importorskip("autograd")
    return __import__(f"benchmarks.programs.{name}_{impl}", fromlist=["_"])


def _arrays(impl, *values):
    return [nx.asarray(v) for v in values] if impl == "nx" else list(values)


@pytest.mark.benchmark(group="program_logistic")
@pytest.mark.parametrize("impl", IMPLS)
def test_logistic(benchmark, impl):
    mod = _module("logistic", impl)
    x, t, w = _arrays(impl, *data.logistic())
    out = benchmark(mod.train, w, x, t)
    assert out.shape == (300,)


@pytest.mark.benchmark(group="program_char_rnn")
@pytest.mark.parametrize("impl", IMPLS)
def test_char_rnn(benchmark, impl):
    mod = _module("char_rnn", impl)
    inputs, targets, params = data.char_rnn()
    inputs, targets = _arrays(impl, inputs, targets)
    params = {k: _arrays(impl, v)[0] for k, v in params.items()}
    value, _ = benchmark(mod.sgd_step, params, inputs, targets)
    assert np.isfinite(float(value))


@pytest.mark.benchmark(group="program_svi")
@pytest.mark.parametrize("impl", IMPLS)
def test_svi(benchmark, impl):
    mod = _module("svi", impl)
    x, y, mean, log_std, _ = _arrays(impl, *data.svi())
    if impl == "nx":
        run = lambda: mod.fit((mean, log_std), x, y, nx.random.key(0))  # noqa: E731
    else:
        run = lambda: mod.fit((mean, log_std), x, y, np.random.default_rng(0))  # noqa: E731
    mean_out, _ = benchmark(run)
    assert mean_out.shape == (20,)


@pytest.mark.benchmark(group="program_fluid")
@pytest.mark.parametrize("impl", IMPLS)
def test_fluid(benchmark, impl):
    mod = _module("fluid", impl)
    u, v, rho, target = _arrays(impl, *data.fluid())
    value, _ = benchmark(mod.loss_and_grad, (u, v), rho, target)
    assert np.isfinite(float(value))


@pytest.mark.benchmark(group="program_gmm")
@pytest.mark.parametrize("impl", IMPLS)
def test_gmm(benchmark, impl):
    mod = _module("gmm", impl)
    x, params, vec = _arrays(impl, *data.gmm())
    _, eig, _ = benchmark(mod.curvature, params, x, vec)
    assert float(eig) > 0


# -- each program, nx_rune and autograd interleaved round by round -------------------------------

def _run(name, impl):
    """A call of program ``name`` with ``impl`` on its data, as the rows above time it."""
    mod = _module(name, impl)
    if name == "logistic":
        x, t, w = _arrays(impl, *data.logistic())
        return lambda: mod.train(w, x, t)
    if name == "char_rnn":
        inputs, targets, params = data.char_rnn()
        inputs, targets = _arrays(impl, inputs, targets)
        params = {k: _arrays(impl, v)[0] for k, v in params.items()}
        return lambda: mod.sgd_step(params, inputs, targets)
    if name == "svi":
        x, y, mean, log_std, _ = _arrays(impl, *data.svi())
        if impl == "nx":
            return lambda: mod.fit((mean, log_std), x, y, nx.random.key(0))
        return lambda: mod.fit((mean, log_std), x, y, np.random.default_rng(0))
    if name == "fluid":
        u, v, rho, target = _arrays(impl, *data.fluid())
        return lambda: mod.loss_and_grad((u, v), rho, target)
    x, params, vec = _arrays(impl, *data.gmm())
    return lambda: mod.curvature(params, x, vec)


@pytest.mark.parametrize("name", ["logistic", "char_rnn", "svi", "fluid", "gmm"])
def test_interleaved_autograd(benchmark, name):
    benchmark.group = f"program_{name}"
    mine, peer = _run(name, "nx"), _run(name, "autograd")
    _record(benchmark, interleaved(mine, peer))
    benchmark(mine)


if __name__ == "__main__":
    main_with_busy(__file__, sys.argv[1:])
