"""Forward mode: every JVP rule against finite differences, JVP/VJP agreement, linearize."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from autodiff_specs import SPECS, f64_tensor, fd_jacobians
from nx_rune import primitives as P
from nx_rune.primitives import bind

SETTINGS = settings(max_examples=25, deadline=None)




@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_jvp_matches_finite_differences(spec, seed, data):
    rng = np.random.default_rng(seed)
    case = data.draw(st.sampled_from(spec.cases))
    fn, args = spec.make(rng, case)
    out, jacs = fd_jacobians(fn, args, spec.eps)
    vs = [rng.standard_normal(np.shape(a)) for a in args]
    y, t = nx.jvp(fn, [f64_tensor(a) for a in args], [f64_tensor(v) for v in vs])
    np.testing.assert_allclose(np.asarray(y, dtype=np.float64), out, rtol=1e-12, atol=1e-12)
    assert t.shape == out.shape and t.dtype == y.dtype
    expect = sum(J @ v.reshape(-1) for J, v in zip(jacs, vs))
    np.testing.assert_allclose(np.asarray(t, dtype=np.float64).reshape(-1), expect,
                               rtol=spec.tol, atol=spec.tol)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_jvp_and_vjp_agree(spec, seed, data):
    """<u, J v> computed by jvp equals <J^T u, v> computed by vjp."""
    rng = np.random.default_rng(seed)
    case = data.draw(st.sampled_from(spec.cases))
    fn, args = spec.make(rng, case)
    targs = [f64_tensor(a) for a in args]
    vs = [rng.standard_normal(np.shape(a)) for a in args]
    y, t = nx.jvp(fn, targs, [f64_tensor(v) for v in vs])
    u = rng.standard_normal(y.shape).astype(y.dtype)
    _, vjp_fn = nx.vjp(fn, *targs)
    cts = vjp_fn(nx.asarray(u))
    lhs = float(np.vdot(u, np.asarray(t)))
    rhs = float(sum(np.vdot(np.asarray(c), v) for c, v in zip(cts, vs)))
    tol = 1e-5 if np.asarray(y).dtype == np.float32 else 1e-9
    assert abs(lhs - rhs) <= tol * (1 + abs(lhs)), (lhs, rhs)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.name in
                                  ("sin", "pow", "matmul", "reduce_max", "cumprod_zeros",
                                   "scatter_mul", "as_strided", "cummax", "pad")],
                         ids=lambda s: s.name)
def test_linearize_matches_jvp(spec):
    rng = np.random.default_rng(1)
    fn, args = spec.make(rng, spec.cases[-1])
    targs = [f64_tensor(a) for a in args]
    y, f_jvp = nx.linearize(fn, *targs)
    for _ in range(2):
        vs = [f64_tensor(rng.standard_normal(np.shape(a))) for a in args]
        _, t = nx.jvp(fn, targs, vs)
        np.testing.assert_allclose(np.asarray(f_jvp(*vs)), np.asarray(t), rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(np.asarray(y), np.asarray(fn(*targs)))


# -- edge cases the seed's forward handler raised on or got wrong -------------------------------

def test_jvp_reduce_prod_with_zeros():
    x = f64_tensor([2.0, 0.0, 3.0])
    _, t = nx.jvp(lambda x: nx.prod(x), (x,), (f64_tensor([1.0, 1.0, 1.0]),))
    assert float(t) == 6.0  # only the zero's own perturbation counts: 2 * 3


def test_jvp_as_strided():
    x = f64_tensor(np.arange(5.0))
    _, t = nx.jvp(lambda x: nx.as_strided(x, (3, 2), (1, 2)), (x,),
                  (f64_tensor([1, 10, 100, 1e3, 1e4]),))
    np.testing.assert_allclose(np.asarray(t), [[1, 100], [10, 1e3], [100, 1e4]])


def test_jvp_cummax_cummin():
    x = f64_tensor([1.0, 3.0, 2.0, 5.0])
    _, t = nx.jvp(lambda x: nx.cummax(x), (x,), (f64_tensor([1.0, 2.0, 3.0, 4.0]),))
    np.testing.assert_allclose(np.asarray(t), [1, 2, 2, 4])
    _, t = nx.jvp(lambda x: nx.cummin(x), (x,), (f64_tensor([1.0, 2.0, 3.0, 4.0]),))
    np.testing.assert_allclose(np.asarray(t), [1, 1, 1, 1])


def test_jvp_pad_tangent_is_zero_padded():
    _, t = nx.jvp(lambda x: nx.pad(x, 1, constant_values=5.0), (f64_tensor([1.0]),),
                  (f64_tensor([2.0]),))
    np.testing.assert_allclose(np.asarray(t), [0, 2, 0])


def test_jvp_of_constant_function_is_zero():
    y, t = nx.jvp(lambda x: f64_tensor([1.0, 2.0]), (f64_tensor([3.0]),), (f64_tensor([1.0]),))
    np.testing.assert_allclose(np.asarray(t), [0, 0])


def test_jvp_keeps_dtype_float32():
    x = nx.asarray(np.array([0.5, 1.0], dtype=np.float32))
    _, t = nx.jvp(lambda x: nx.exp2(x) * nx.sqrt(x), (x,), (nx.ones_like(x),))
    assert t.dtype == np.float32


def test_jvp_pytrees_and_multiple_outputs():
    def f(p):
        return {"a": p["w"] * p["b"], "b": (nx.sin(p["w"]), None)}
    p = {"w": f64_tensor([1.0, 2.0]), "b": f64_tensor([3.0, 4.0])}
    tp = {"w": f64_tensor([1.0, 0.0]), "b": f64_tensor([0.0, 1.0])}
    y, t = nx.jvp(f, (p,), (tp,))
    np.testing.assert_allclose(np.asarray(t["a"]), [3.0, 2.0])
    np.testing.assert_allclose(np.asarray(t["b"][0]), [np.cos(1.0), 0.0])
    assert t["b"][1] is None


def test_jvp_aux_and_jvps():
    y, t, aux = nx.jvp_aux(lambda x: (x * x, {"n": 3}), (f64_tensor(2.0),), (f64_tensor(1.0),))
    assert float(t) == 4.0 and aux == {"n": 3}
    y, t = nx.jvps(lambda xs: xs[0] * xs[1], [f64_tensor(2.0), f64_tensor(5.0)],
                   [f64_tensor(1.0), f64_tensor(0.0)])
    assert float(y) == 10.0 and float(t) == 5.0


def test_jvp_single_array_primals():
    y, t = nx.jvp(nx.sin, f64_tensor(0.5), f64_tensor(2.0))
    np.testing.assert_allclose(float(t), 2 * np.cos(0.5))


def test_jvp_integer_primal_gets_no_tangent():
    idx = nx.asarray(np.array([[2, 0]], dtype=np.int64))
    y, t = nx.jvp(lambda x, i: bind(P.gather_p, x, i, axis=1),
                  (f64_tensor([[1.0, 2.0, 3.0]]), idx), (f64_tensor([[1.0, 10.0, 100.0]]), None))
    np.testing.assert_allclose(np.asarray(t), [[100.0, 1.0]])


def test_jvp_shape_mismatch_raises():
    with pytest.raises(ValueError, match="shape"):
        nx.jvp(nx.sin, (f64_tensor([1.0, 2.0]),), (f64_tensor([1.0]),))


def test_jvp_tracers_made_in_c_are_whole():
    # forward mode's process runs in C and makes its tracers without __init__: every slot is
    # set (a view link, a later write, repr and the leak check read them)
    from nx_rune.autodiff import _tape
    from nx_rune.autodiff.core import JVPTracer
    seen = []

    def f(x):
        y = nx.sin(x) * x
        seen.append(y)
        assert type(y) is JVPTracer and y.shape == (3,) and y.dtype == np.float64
        assert y._alias is None and y._recipe is None
        row = y[1:]
        row *= 2.0                              # a write through a view of y reaches y
        return y
    x = f64_tensor(np.array([0.1, 0.5, 0.9]))
    out, t = nx.jvp(f, (x,), (f64_tensor(np.ones(3)),))
    xv = np.array([0.1, 0.5, 0.9])
    want_t = np.cos(xv) * xv + np.sin(xv)
    want_t[1:] *= 2.0
    np.testing.assert_allclose(np.asarray(t), want_t, rtol=1e-14)
    with pytest.raises(nx.errors.UnexpectedTracerError):
        nx.jvp(lambda v: v + seen[0], (x,), (f64_tensor(np.ones(3)),))
    assert _tape.jvp_process is type(nx.autodiff.core.JVPInterpreter("t")).process
