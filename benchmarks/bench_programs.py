"""Five research programs (benchmarks/programs/), each written with HIPS autograd and with
nx_rune, timed in the same run (pytest-benchmark; groups ``program_*``, impl ``nx`` and
``autograd``; the autograd rows skip when it is not installed).

Run:  OPENBLAS_NUM_THREADS=1 python -m pytest benchmarks/bench_programs.py \
          --benchmark-only --benchmark-group-by=group
(one BLAS thread: these programs are dominated by per-operation costs, which a shared
multi-threaded BLAS only blurs).

* logistic: 10 gradient-descent steps of logistic regression, 500 x 300 float64 features.
* char_rnn: one value_and_grad + SGD step of a tanh RNN over 20 steps, batch 8, hidden 64.
* svi: 5 steps of black-box SVI (32 reparameterized samples of a 20-d diagonal Gaussian;
  noise from nx.random against NumPy's Generator).
* fluid: value_and_grad of a 3-step 32 x 32 fluid simulation with 8 CG iterations a step.
* gmm: the gradient and 4 Hessian-vector products (power iteration) of a 4-component
  Gaussian mixture's log-likelihood on 200 points in 3-d.
"""
import numpy as np
import pytest

import nx_rune as nx
from benchmarks.programs import data

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
