"""The fast paths of reverse mode give what the general paths give.

* ``vjp_fn``/``grad`` with one array in and out: cotangents and gradient leaves of the primal's
  shape and dtype skip ``_cast_like``; one gradient leaf skips the general aliasing lists;
  memory owned through a view's base counts as distinct.  Compared with the same function
  taking its argument inside a pytree (the general path), bit for bit.
* ``rules.Steps``: the commonest rules as steps, run in C by the backward pass; compared with
  calling the Steps in Python (the JVP's and the public form's path), and differentiated twice
  against float64 central differences.
"""
import numpy as np
import pytest

import nx_rune as nx
from autodiff_specs import f64_tensor
from nx_rune import primitives as P
from nx_rune.autodiff import rules as R
from nx_rune.autodiff.core import Tape, call_finishing
from test_tree_util import fd_grad  # central differences of a NumPy function

RNG = np.random.default_rng(17)
X = RNG.uniform(0.2, 0.9, (3, 4))
Z = (RNG.uniform(0.2, 0.9, (3, 4)) + 1j * RNG.uniform(0.2, 0.9, (3, 4))).astype(np.complex128)


def _np(t):
    return np.asarray(t)


def _same(a, b):
    a, b = _np(a), _np(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _chain(x):
    return nx.exp(nx.tanh(nx.sin(x) * 0.9 + x)) - nx.cos(x) / (x + 2.0)


# -- vjp_fn and grad: one array against the same function on a pytree -----------------------

@pytest.mark.parametrize("values", [X, Z, X.astype(np.float32)], ids=["f64", "c128", "f32"])
def test_vjp_single_array_equals_pytree_path(values):
    x = nx.asarray(values)
    ct = nx.asarray(np.cos(np.asarray(values)) + 0.5)
    out1, f1 = nx.vjp(_chain, x)
    out2, f2 = nx.vjp(lambda t: {"o": _chain(t[0])}, (x,))
    _same(out1, out2["o"])
    (g1,) = f1(ct)
    ((g2,),) = f2({"o": ct})
    _same(g1, g2)
    assert g1.dtype == x.dtype and g1.shape == x.shape


def test_vjp_cotangent_cast_like_the_general_path():
    x = f64_tensor(X)
    _, f1 = nx.vjp(_chain, x)
    _, f2 = nx.vjp(lambda t: [_chain(t[0])], [x])
    for ct in (X.astype(np.float32), np.ones((3, 4), np.int64), X.tolist()):
        (g1,) = f1(ct)
        ((g2,),) = f2([ct])
        assert g1.dtype == np.float64
        _same(g1, g2)
    # a Python number for a scalar output
    _, f3 = nx.vjp(lambda t: nx.sum(_chain(t)), x)
    (g3,) = f3(2.0)
    (g4,) = f3(f64_tensor(2.0))
    _same(g3, g4)


def test_vjp_fast_path_errors_name_the_problem():
    x = f64_tensor(X)
    _, f = nx.vjp(_chain, x)
    with pytest.raises(ValueError, match=r"vjp_fn: cotangent: shape \(4,\) does not match the "
                                         r"primal's shape \(3, 4\)"):
        f(f64_tensor(np.ones(4)))
    with pytest.raises(TypeError, match="vjp_fn: cotangent: a complex value"):
        f(nx.asarray(Z))
    with pytest.raises(TypeError, match="expected arrays"):
        f(object())


def test_vjp_integer_input_gets_none_and_has_aux():
    x, i = f64_tensor(X), nx.asarray(np.arange(4))
    out, f, aux = nx.vjp(lambda a, k: (_chain(a) * k, {"k": k}), x, i, has_aux=True)
    gx, gi = f(f64_tensor(np.ones((3, 4))))
    assert gi is None and aux["k"] is i
    _, f2 = nx.vjp(lambda a: _chain(a) * i, x)
    (g2,) = f2(f64_tensor(np.ones((3, 4))))
    _same(gx, g2)
    # an output that does not depend on the input: a zero gradient of the input's dtype
    _, f3 = nx.vjp(lambda a: f64_tensor(X), x)
    (g3,) = f3(f64_tensor(np.ones((3, 4))))
    _same(g3, np.zeros((3, 4)))


@pytest.mark.parametrize("values", [X, X.astype(np.float32)], ids=["f64", "f32"])
def test_grad_single_array_equals_pytree_path(values):
    x = nx.asarray(values)
    g1 = nx.grad(lambda t: nx.sum(_chain(t)))(x)
    g2 = nx.grad(lambda t: nx.sum(_chain(t["x"])))({"x": x})["x"]
    _same(g1, g2)
    (g3, aux) = nx.grad(lambda t: (nx.sum(_chain(t)), 7), has_aux=True)(x)
    _same(g1, g3)
    assert aux == 7


def test_grad_complex_and_holomorphic_equal_pytree_path():
    z = nx.asarray(Z)
    f = lambda t: nx.sum(nx.real(_chain(t) * nx.conj(t)))          # noqa: E731
    _same(nx.grad(f)(z), nx.grad(lambda t: f(t[0]))((z,))[0])
    h = lambda t: nx.sum(_chain(t))                                 # noqa: E731
    _same(nx.grad(h, holomorphic=True)(z),
          nx.grad(lambda t: h(t[0]), holomorphic=True)((z,))[0])
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        nx.grad(h, holomorphic=True)(f64_tensor(X))
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        nx.grad(h)(z)


def test_gradient_leaves_never_share_memory_with_the_cotangent():
    base = np.arange(12.0).reshape(3, 4)
    ct = nx.asarray(base)                   # a Tensor whose ndarray may view `base`
    x = f64_tensor(X)
    cases = [lambda a: a,                   # the seed itself comes back
             lambda a: a.reshape((12,)).reshape((3, 4)),   # views of the seed
             lambda a: a * 1.0,             # a fresh result
             lambda a: a + 0.0]
    for f in cases:
        _, f_vjp = nx.vjp(f, x)
        (g,) = f_vjp(ct)
        _same(g, base)
        assert not np.shares_memory(_np(g), base)
        g[0, 0] = -1.0                      # writable, and the cotangent is left alone
        assert base[0, 0] == 0.0 and _np(ct)[0, 0] == 0.0
    # two leaves handed the same cotangent by add's rule: copies of their own
    _, f_vjp = nx.vjp(lambda a, b: a + b, x, x)
    ga, gb = f_vjp(ct)
    assert not np.shares_memory(_np(ga), _np(gb))
    assert not np.shares_memory(_np(ga), base) and not np.shares_memory(_np(gb), base)


def test_distinct_owners_follows_a_views_base():
    from nx_rune.autodiff.api import _distinct_owners
    a, b = np.zeros(6), np.zeros(6)
    assert _distinct_owners([nx.asarray(a), nx.asarray(b)])
    assert not _distinct_owners([nx.asarray(a), nx.asarray(a[1:])])
    assert not _distinct_owners([nx.asarray(a[:3]), nx.asarray(a[3:])])   # same owner
    assert _distinct_owners([nx.asarray(a[:3]), nx.asarray(b[3:])])
    # memory owned by something other than a base-less ndarray: not decided here
    buf = bytearray(48)
    assert not _distinct_owners([nx.asarray(np.frombuffer(buf)), nx.asarray(b)])


# -- Steps --------------------------------------------------------------------------------------

UNARY = [(P.sin_p, X), (P.cos_p, X), (P.exp_p, X), (P.exp2_p, X), (P.log_p, X),
         (P.log2_p, X), (P.log1p_p, X), (P.expm1_p, X), (P.sqrt_p, X), (P.recip_p, X),
         (P.tanh_p, X)]
BINARY = [P.add_p, P.sub_p, P.mul_p]


def _backward(prim, operands, ct):
    """The cotangents of ``prim`` at ``operands`` through the tape's C backward pass."""
    tape = Tape("vjp", None)
    ts = [tape.new_input(nx.asarray(v)) for v in operands]
    out = call_finishing(tape, lambda *a: P.bind(prim, *a), *ts)
    acc = tape.backward([(out._idx, nx.asarray(ct))])
    return [acc[t._idx] for t in ts], out.primal


@pytest.mark.parametrize("prim,values", UNARY, ids=[p.name for p, _ in UNARY])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_unary_steps_in_c_equal_the_python_call(prim, values, dtype):
    rule = R.VJP_RULES[prim]
    assert type(rule.unary) is R.Steps
    x = values.astype(dtype) * (1 + 0.5j if dtype == np.complex128 else 1)
    ct = np.cos(x) + 2.0
    (g,), ans = _backward(prim, [x], ct)
    _same(g, rule.unary(nx.asarray(ct), ans, nx.asarray(x)))
    (public,) = rule(nx.asarray(ct), nx.asarray(x), ans)       # the public form
    _same(g, public)


@pytest.mark.parametrize("prim", BINARY, ids=[p.name for p in BINARY])
def test_binary_steps_in_c_equal_the_python_call(prim):
    rule = R.VJP_RULES[prim]
    a, b = X, np.flip(X) + 0.3
    ct = np.sin(X) - 0.2
    (ga, gb), ans = _backward(prim, [a, b], ct)
    pa, pb = rule(nx.asarray(ct), nx.asarray(a), nx.asarray(b), ans)
    _same(ga, pa)
    _same(gb, pb)
    # one operand a constant: only the other gets a cotangent
    tape = Tape("vjp", None)
    t = tape.new_input(nx.asarray(a))
    out = call_finishing(tape, lambda u: P.bind(prim, u, nx.asarray(b)), t)
    acc = tape.backward([(out._idx, nx.asarray(ct))])
    _same(acc[t._idx], pa)




@pytest.mark.parametrize("prim,values", UNARY, ids=[p.name for p, _ in UNARY])
def test_unary_steps_are_differentiable(prim, values):
    x = values[0]

    def d1(v):   # the first derivative by reverse mode (the Steps run in C) at v
        return nx.grad(lambda t: nx.sum(P.bind(prim, t)))(v)

    def d1_np(v):
        return _np(d1(f64_tensor(v)))

    hess_diag = nx.grad(lambda t: nx.sum(d1(t)))(f64_tensor(x))
    np.testing.assert_allclose(_np(hess_diag), fd_grad(lambda v: d1_np(v).sum(), x),
                               rtol=1e-6, atol=1e-8)


def test_steps_inside_a_checkpoint_equal_the_plain_gradient():
    x = f64_tensor(X)
    f = lambda t: nx.sum(_chain(t) * t)          # noqa: E731
    _same(nx.grad(nx.checkpoint(f))(x), nx.grad(f)(x))


def test_steps_reject_malformed_steps():
    with pytest.raises(TypeError, match=r"steps: step 0 must be \(primitive, operand"):
        R.Steps(("mul", "v", "x"))
    with pytest.raises(TypeError, match="steps: step 1 must be"):
        R.Steps((P.neg_p, "v"), (P.mul_p,))
    with pytest.raises(ValueError, match="steps: step 0 refers to step 0"):
        R.Steps((P.mul_p, "v", 0))
    with pytest.raises(ValueError, match="steps: step 0 has an unknown operand 'y'"):
        R.Steps((P.mul_p, "v", "y"))
    with pytest.raises(ValueError, match="steps: step 1 refers to step 2, which is not an "):
        R.Steps((P.neg_p, "v"), (P.mul_p, "v", 2))
    with pytest.raises(ValueError, match="unknown operand True"):
        R.Steps((P.mul_p, "v", True))      # a bool is not a step number
    # no step: the cotangent itself
    v = f64_tensor(X)
    assert R.Steps()(v, v, v) is v


def test_one_leaf_paths_zero_and_read_only_results():
    x = f64_tensor(X)
    # a None cotangent: zeros, as on the general path
    _, f1 = nx.vjp(_chain, x)
    _, f2 = nx.vjp(lambda t: (_chain(t[0]),), (x,))
    (g1,) = f1(None)
    ((g2,),) = f2((None,))
    _same(g1, np.zeros((3, 4)))
    _same(g1, g2)
    # the seed itself (read-only) and a broadcast of it (sum's rule) come back as writable
    # copies, from grad and from vjp_fn
    s = f64_tensor(2.0)
    for g in (nx.grad(lambda t: t)(s), nx.grad(lambda t: nx.sum(t))(x),
              nx.vjp(lambda t: nx.sum(t), x)[1](f64_tensor(1.0))[0]):
        arr = _np(g)
        assert arr.flags.writeable and arr.flags.c_contiguous
        np.testing.assert_array_equal(arr, np.ones_like(arr))
        g[...] = 5.0
    assert float(nx.grad(lambda t: t)(s)) == 1.0      # the cached seed is unchanged


def test_backward_under_an_enclosing_transformation_equals_central_differences():
    # the inner backward pass binds under the outer tape (not the implementations at once)
    x = X[0]
    f = lambda t: nx.sum(_chain(t))                                # noqa: E731
    hvp_row = nx.grad(lambda t: nx.sum(nx.grad(f)(t) * f64_tensor(np.ones(4))))(f64_tensor(x))
    d1 = lambda v: _np(nx.grad(f)(f64_tensor(v))).sum()             # noqa: E731
    np.testing.assert_allclose(_np(hvp_row), fd_grad(d1, x), rtol=1e-6, atol=1e-8)
