"""jit and vmap composed both ways: vmap(jit(f)) and jit(vmap(f)) equal f applied example by
example (eager, stacked) on the op-spec table (every primitive) and on lax bodies (scan, cond
with a shared and a per-example predicate, while_loop, fori_loop with static and traced
bounds), in eager vmap, under jit and inside jit; gradients through them; the batched programs
are traced once."""
import numpy as np
import pytest

import nx_rune as nx
from autodiff_specs import SPECS
from nx_rune import lax

CASES = [(s, c) for s in SPECS for c in range(len(s.cases))]
IDS = [f"{s.name}-{c}" for s, c in CASES]
B = 3   # examples per batch


def _batch(spec, case):
    """The spec's function and a batch of B argument sets (one per seed), stacked."""
    fn, first = spec.make(np.random.default_rng(0), spec.cases[case])
    sets = [first] + [spec.make(np.random.default_rng(seed), spec.cases[case])[1]
                      for seed in range(1, B)]
    return fn, [np.stack([np.asarray(s[i]) for s in sets]) for i in range(len(first))]


def _per_example(fn, batch):
    """fn applied example by example (eager), the outputs stacked: the reference."""
    outs = [np.asarray(fn(*[nx.asarray(a[k]) for a in batch])) for k in range(B)]
    return np.stack(outs)


def close(got, want, rtol=1e-12, atol=1e-14):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("spec,case", CASES, ids=IDS)
def test_vmap_of_jit_and_jit_of_vmap_equal_per_example(spec, case):
    fn, batch = _batch(spec, case)
    want = _per_example(fn, batch)
    xs = [nx.asarray(a) for a in batch]
    close(nx.vmap(nx.jit(fn))(*xs), want)
    close(nx.jit(nx.vmap(fn))(*xs), want)


# one spec per family: per-example gradients through jit, both orders
GRAD_SPECS = ["add", "mul", "exp", "tanh", "max", "reduce_sum", "reduce_max", "matmul", "gather",
              "scatter_add", "scatter_max", "sort", "cumsum", "cummax", "cat", "pad", "unfold",
              "where", "clip", "reduce_prod_zeros",
              "atan2", "erf", "fft", "solve", "cholesky"]


@pytest.mark.parametrize("name", GRAD_SPECS)
def test_per_example_gradients_through_jit_both_orders(name):
    spec = next(s for s in SPECS if s.name == name)
    fn, batch = _batch(spec, 0)

    def loss(*a):
        return nx.sum(nx.sin(fn(*a)))
    argnums = tuple(range(len(batch)))
    want = [np.stack(g) for g in zip(*[
        [np.asarray(t) for t in nx.grad(loss, argnums)(*[nx.asarray(a[k]) for a in batch])]
        for k in range(B)])]
    xs = [nx.asarray(a) for a in batch]
    for f in (nx.vmap(nx.jit(nx.grad(loss, argnums))), nx.jit(nx.vmap(nx.grad(loss, argnums))),
              nx.vmap(nx.grad(nx.jit(loss), argnums))):
        for g, w in zip(f(*xs), want):
            close(g, w, rtol=1e-10, atol=1e-12)


def test_spec_names_for_gradients_exist():
    names = {s.name for s in SPECS}
    assert set(GRAD_SPECS) <= names, sorted(set(GRAD_SPECS) - names)


# -- lax bodies ------------------------------------------------------------------------------------

X = np.linspace(-1.0, 1.5, 12).reshape(3, 4)


def _modes(f):
    """f under eager vmap, jit of vmap, vmap of jit."""
    return {"vmap": nx.vmap(f), "jit(vmap)": nx.jit(nx.vmap(f)), "vmap(jit)": nx.vmap(nx.jit(f))}


def _scan_ref(v):
    c, ys = 1.0, []
    for a in v:
        ys.append(np.sin(c) * a)
        c = c * np.cos(a) + a * v[0]
    return c, np.array(ys)


def _scan_f(v):
    return lax.scan(lambda c, a: (c * nx.cos(a) + a * v[0], nx.sin(c) * a),
                    nx.ones((), v.dtype), v)


@pytest.mark.parametrize("mode", ["vmap", "jit(vmap)", "vmap(jit)"])
def test_vmap_of_scan(mode):
    c, ys = _modes(_scan_f)[mode](nx.asarray(X))
    refs = [_scan_ref(v) for v in X]
    np.testing.assert_allclose(np.asarray(c), [r[0] for r in refs], rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ys), np.stack([r[1] for r in refs]), rtol=1e-13)


def test_vmap_of_scan_with_xs_batched_along_a_later_axis_and_a_shared_carry():
    xs = nx.asarray(X.T.copy())            # (4, 3): the batch along axis 1

    def f(v):
        return lax.scan(lambda c, a: (c + a, c * a), nx.zeros((), v.dtype), v)
    for g in (nx.vmap(f, in_axes=1), nx.jit(nx.vmap(f, in_axes=1)),
              nx.vmap(nx.jit(f), in_axes=1)):
        c, ys = g(xs)
        np.testing.assert_allclose(np.asarray(c), X.sum(1), rtol=1e-13)
        want = np.stack([np.concatenate([[0.0], np.cumsum(v)[:-1]]) * v for v in X])
        np.testing.assert_allclose(np.asarray(ys), want, rtol=1e-13)


def test_jit_of_vmap_of_scan_is_one_scan_of_the_batched_body():
    text = str(nx.make_jaxpr(nx.vmap(_scan_f))(nx.asarray(X)))
    assert text.count("scan[") == 1 and "length=4" in text
    # the body works on the whole batch: its carry is (3,)
    body = text[text.index("scan["):]
    assert "f64[3]" in body


def _cond_f(v):
    return lax.cond(v[0] > 0, lambda a: a * 2.0, lambda a: nx.exp(a) - v[1], v)


def _cond_ref(v):
    return v * 2.0 if v[0] > 0 else np.exp(v) - v[1]


@pytest.mark.parametrize("mode", ["vmap", "jit(vmap)", "vmap(jit)"])
def test_vmap_of_cond_with_a_per_example_predicate(mode):
    got = _modes(_cond_f)[mode](nx.asarray(X))
    np.testing.assert_allclose(np.asarray(got), np.stack([_cond_ref(v) for v in X]),
                               rtol=1e-13)


@pytest.mark.parametrize("mode", ["vmap", "jit(vmap)", "vmap(jit)"])
def test_vmap_of_cond_with_a_shared_predicate(mode):
    def f(v, q):
        return lax.cond(q, lambda a: a * 2.0, lambda a: a - 1.0, v)
    g = {"vmap": nx.vmap(f, in_axes=(0, None)),
         "jit(vmap)": nx.jit(nx.vmap(f, in_axes=(0, None))),
         "vmap(jit)": nx.vmap(nx.jit(f), in_axes=(0, None))}[mode]
    np.testing.assert_allclose(np.asarray(g(nx.asarray(X), nx.asarray(True))), X * 2.0,
                               rtol=1e-15)
    np.testing.assert_allclose(np.asarray(g(nx.asarray(X), nx.asarray(False))), X - 1.0,
                               rtol=1e-15)


def test_jit_of_vmap_of_cond_shared_predicate_is_one_cond():
    g = nx.vmap(lambda v, q: lax.cond(q, lambda a: a * 2.0, lambda a: a - 1.0, v),
                in_axes=(0, None))
    text = str(nx.make_jaxpr(g)(nx.asarray(X), nx.asarray(True)))
    assert text.count("cond[") == 1 and "where" not in text
    # a per-example predicate: both branches and a select, no cond
    text = str(nx.make_jaxpr(nx.vmap(_cond_f))(nx.asarray(X)))
    assert "cond[" not in text and "where" in text


def _while_f(v):
    return lax.while_loop(lambda c: c[0] < 10.0 * v[1] + 12.0,
                          lambda c: (c[0] + 1.0, c[1] * 1.25), (v[0], v[2]))


def _while_ref(v):
    a, b = v[0], v[2]
    while a < 10.0 * v[1] + 12.0:
        a, b = a + 1.0, b * 1.25
    return a, b


@pytest.mark.parametrize("mode", ["vmap", "jit(vmap)", "vmap(jit)"])
def test_vmap_of_while_loop_runs_each_example_its_own_number_of_steps(mode):
    a, b = _modes(_while_f)[mode](nx.asarray(X))
    refs = [_while_ref(v) for v in X]
    assert len({r[0] - v[0] for r, v in zip(refs, X)}) == 3     # different step counts
    np.testing.assert_allclose(np.asarray(a), [r[0] for r in refs], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(b), [r[1] for r in refs], rtol=1e-14)


def test_vmap_of_while_loop_forward_mode():
    def f(v):
        return _while_f(v)[1]
    t = np.ones_like(X)
    _, tout = nx.jvp(nx.vmap(f), (nx.asarray(X),), (nx.asarray(t),))
    _, tout_j = nx.jvp(nx.jit(nx.vmap(f)), (nx.asarray(X),), (nx.asarray(t),))
    # d b_final / d v[2] = 1.25 ** steps; the step count is piecewise constant in v
    steps = [r[0] - v[0] for r, v in zip([_while_ref(v) for v in X], X)]
    want = [1.25 ** n for n in steps]
    np.testing.assert_allclose(np.asarray(tout), want, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(tout_j), want, rtol=1e-14)


@pytest.mark.parametrize("mode", ["vmap", "jit(vmap)", "vmap(jit)"])
def test_vmap_of_fori_loop_static_and_traced_bounds(mode):
    def static(v):
        return lax.fori_loop(0, 3, lambda i, c: c * v + i, v)

    def traced(v, n):
        return lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, v)
    got = _modes(static)[mode](nx.asarray(X))
    want = []
    for v in X:
        c = v.copy()
        for i in range(3):
            c = c * v + i
        want.append(c)
    np.testing.assert_allclose(np.asarray(got), np.stack(want), rtol=1e-13)

    ns = nx.asarray(np.array([0, 2, 5], np.int32))
    g = {"vmap": nx.vmap(traced), "jit(vmap)": nx.jit(nx.vmap(traced)),
         "vmap(jit)": nx.vmap(nx.jit(traced))}[mode]
    got = g(nx.asarray(X), ns)
    want = []
    for v, n in zip(X, [0, 2, 5]):
        c = v.copy()
        for i in range(n):
            c = c * 0.5 + i
        want.append(c)
    np.testing.assert_allclose(np.asarray(got), np.stack(want), rtol=1e-14)


def test_per_example_gradients_of_scan_and_fori_loop():
    def loss(v):
        c, ys = _scan_f(v)
        return c + nx.sum(ys ** 2) + nx.sum(lax.fori_loop(0, 2, lambda i, u: nx.sin(u) * v, v))
    want = np.stack([np.asarray(nx.grad(loss)(nx.asarray(v))) for v in X])
    for g in (nx.vmap(nx.grad(loss)), nx.jit(nx.vmap(nx.grad(loss))),
              nx.vmap(nx.jit(nx.grad(loss))), nx.vmap(nx.grad(nx.jit(loss)))):
        np.testing.assert_allclose(np.asarray(g(nx.asarray(X))), want, rtol=1e-12)
    # and central finite differences for one example
    eps, v = 1e-6, X[1]
    fd = [(float(loss(nx.asarray(v + eps * e))) - float(loss(nx.asarray(v - eps * e))))
          / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(want[1], fd, rtol=1e-6, atol=1e-8)


def test_grad_of_vmap_of_cond_and_jit():
    def loss(x):
        return nx.sum(nx.vmap(_cond_f)(x) ** 2)
    want = nx.grad(loss)(nx.asarray(X))
    eps = 1e-6
    fd = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        e = np.zeros_like(X)
        e[idx] = eps
        fd[idx] = (float(loss(nx.asarray(X + e))) - float(loss(nx.asarray(X - e)))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(want), fd, rtol=1e-6, atol=1e-8)
    for g in (nx.jit(nx.grad(loss)), nx.grad(nx.jit(loss))):
        np.testing.assert_allclose(np.asarray(g(nx.asarray(X))), np.asarray(want), rtol=1e-13)


def test_nested_vmap_of_jit():
    f = nx.jit(lambda v: nx.sum(nx.tanh(v)) * v)
    x = np.linspace(-1, 1, 24).reshape(2, 3, 4)
    got = nx.vmap(nx.vmap(f))(nx.asarray(x))
    want = np.sum(np.tanh(x), axis=-1, keepdims=True) * x
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    got = nx.vmap(nx.vmap(lambda v: _scan_f(v)[0]))(nx.asarray(x))
    want = [[_scan_ref(v)[0] for v in m] for m in x]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def test_vmap_of_jit_traces_its_batched_program_once_per_batch_signature():
    calls = []

    def f(v):
        calls.append(1)
        return nx.sin(v) * 2.0
    jf = nx.jit(f)
    x = nx.asarray(X)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(nx.vmap(jf)(x)), np.sin(X) * 2.0, rtol=1e-15)
    # one trace of f (per example shape (4,)); the batched program is cached on it
    assert len(calls) == 1
    assert jf.cache_info().misses == 1 and jf.cache_info().hits == 2
    np.testing.assert_allclose(np.asarray(nx.vmap(jf)(nx.asarray(X[:2]))), np.sin(X[:2]) * 2.0,
                               rtol=1e-15)
    assert len(calls) == 1      # another batch size: the same per-example program


def test_vmap_of_jit_errors_name_the_problem():
    with pytest.raises(ValueError, match="in_axes|size"):
        nx.vmap(nx.jit(lambda a, b: a + b))(nx.asarray(X), nx.asarray(X[:2]))
    with pytest.raises(TypeError, match="ConcretizationTypeError|traced|concrete|vmap"):
        nx.vmap(nx.jit(lambda v: v * 2 if v[0] > 0 else v))(nx.asarray(X))
