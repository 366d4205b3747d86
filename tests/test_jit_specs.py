"""jit on the op-spec table (every primitive): jit(f) equals f; jit(grad(f)), grad(jit(f)),
both orders of jvp, and (where the spec is smooth) hessians under jit equal the eager results;
abstract evaluation covers every primitive."""
import numpy as np
import pytest

import nx_rune as nx
from autodiff_specs import NONDIFF_PRIMS, SPECS
from nx_rune import primitives as P
from nx_rune.compiler import abstract
from nx_rune.compiler.abstract import ABSTRACT_RULES, abstract_eval
from nx_rune.compiler.ir import AbstractValue, Literal
from nx_rune.primitives import Primitive, bind

CASES = [(s, c) for s in SPECS for c in range(len(s.cases))]
IDS = [f"{s.name}-{c}" for s, c in CASES]

# Primitives whose output type comes from the documented fallback (their implementation run once
# on dummy operands of the operand types: zeros, ones or identity matrices, cached per operand
# types).  Every primitive of the package has a rule at present; a primitive added without one
# and not named here makes test_every_primitive_has_an_abstract_rule fail: write a rule
# (nx_rune.compiler.abstract) or list it here.
FALLBACK: set = set()


def _make(spec, case, seed=0):
    rng = np.random.default_rng(seed)
    fn, args = spec.make(rng, spec.cases[case])
    return fn, [nx.asarray(a) for a in args], rng


def close(a, b, rtol, atol):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("spec,case", CASES, ids=IDS)
def test_jit_equals_eager(spec, case):
    fn, xs, _ = _make(spec, case)
    close(nx.jit(fn)(*xs), fn(*xs), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("spec,case", CASES, ids=IDS)
def test_grad_under_jit_both_orders(spec, case):
    fn, xs, _ = _make(spec, case)
    argnums = tuple(range(len(xs)))

    def loss(*a):
        return nx.sum(nx.sin(fn(*a)))
    want = nx.grad(loss, argnums)(*xs)
    for got in (nx.jit(nx.grad(loss, argnums))(*xs), nx.grad(nx.jit(loss), argnums)(*xs)):
        for g, w in zip(got, want):
            close(g, w, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("spec,case", CASES, ids=IDS)
def test_jvp_under_jit_both_orders(spec, case):
    fn, xs, rng = _make(spec, case)
    ts = tuple(nx.asarray(rng.standard_normal(x.shape)) for x in xs)
    want = nx.jvp(fn, tuple(xs), ts)
    for got in (nx.jvp(nx.jit(fn), tuple(xs), ts),
                nx.jit(lambda *a: nx.jvp(fn, a, ts))(*xs)):
        close(got[0], want[0], rtol=1e-13, atol=1e-15)
        close(got[1], want[1], rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("spec,case", [(s, c) for s, c in CASES if s.second_order],
                         ids=[i for (s, _), i in zip(CASES, IDS) if s.second_order])
def test_hessian_under_jit(spec, case):
    fn, xs, _ = _make(spec, case)

    def loss(a):
        return nx.sum(nx.sin(fn(a, *xs[1:])))
    want = nx.hessian(loss)(xs[0])
    close(nx.jit(nx.hessian(loss))(xs[0]), want, rtol=1e-9, atol=1e-11)
    close(nx.hessian(nx.jit(loss))(xs[0]), want, rtol=1e-9, atol=1e-11)


# -- the primitives without a spec (zero derivatives, integer outputs) -----------------------------

def _ints(a):
    return nx.asarray(np.asarray(a, np.int32))


NONDIFF_CASES = {
    "idiv": lambda: (lambda a, b: bind(P.idiv_p, a, b), [_ints([7, -7, 9]), _ints([2, 3, -4])]),
    "cmplt": lambda: (lambda a, b: bind(P.cmplt_p, a, b), [nx.asarray([1.0, 2.0]),
                                                          nx.asarray([2.0, 1.0])]),
    "cmpne": lambda: (lambda a, b: bind(P.cmpne_p, a, b), [_ints([1, 2]), _ints([1, 3])]),
    "xor": lambda: (lambda a, b: bind(P.xor_p, a, b), [_ints([5, 6]), _ints([3, 3])]),
    "or": lambda: (lambda a, b: bind(P.or_p, a, b), [_ints([5, 6]), _ints([3, 3])]),
    "and": lambda: (lambda a, b: bind(P.and_p, a, b), [_ints([5, 6]), _ints([3, 3])]),
    "argmax": lambda: (lambda x: bind(P.argmax_p, x, axis=1, keepdims=True),
                       [nx.asarray(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 1.0]]))]),
    "threefry": lambda: (lambda k, c: bind(P.threefry_p, k, c),
                         [nx.asarray(np.array([0, 42], np.uint32)),
                          nx.asarray(np.arange(6, dtype=np.uint32))]),
    "threefry_bits": lambda: (lambda k: bind(P.threefry_bits_p, k, nbits=64, shape=(2, 3)),
                              [nx.asarray(np.array([0, 42], np.uint32))]),
    "threefry_sample": lambda: (
        lambda k: bind(P.threefry_sample_p, k, dist="truncated_normal", shape=(4, 5),
                       dtype=np.dtype(np.float32), params=(-1.5, 0.5)),
        [nx.asarray(np.array([[0, 42], [7, 9]], np.uint32))]),
    "random_gamma": lambda: (lambda k, a: bind(P.random_gamma_p, k, a, log_space=False),
                             [nx.asarray(np.array([0, 42], np.uint32)),
                              nx.asarray(np.array([[0.3, 1.0], [2.5, 7.0]], np.float32))]),
    "random_poisson": lambda: (lambda k, lam: bind(P.random_poisson_p, k, lam,
                                                   dtype=np.dtype(np.int32)),
                               [nx.asarray(np.array([[0, 42], [1, 2]], np.uint32)),
                                nx.asarray(np.array([[0.5, 30.0], [3.0, 0.0]], np.float32))]),
    "random_binomial": lambda: (lambda k, n, p: bind(P.random_binomial_p, k, n, p),
                                [nx.asarray(np.array([0, 42], np.uint32)),
                                 nx.asarray(np.array([5.0, 300.0, 0.0])),
                                 nx.asarray(np.array([0.3, 0.6, 0.5]))]),
    "buffer": lambda: (lambda x: x + nx.zeros_like(bind(P.buffer_p, shape=(3,),
                                                        dtype=np.dtype(np.float64))) * 0,
                       [nx.asarray(np.ones(3))]),
    "const_scalar": lambda: (lambda x: x + bind(P.const_scalar_p, value=2.5,
                                                dtype=np.dtype(np.float64)),
                             [nx.asarray(np.ones(3))]),
    "const_array": lambda: (lambda x: x + bind(P.const_array_p, array=np.arange(3.0)),
                            [nx.asarray(np.ones(3))]),
    "argsort": lambda: (lambda x: bind(P.argsort_p, x, axis=0, descending=True, stable=True,
                                       dtype=np.dtype(np.int64)),
                        [nx.asarray(np.array([3.0, 1.0, 3.0, 2.0]))]),
    "searchsorted": lambda: (lambda a, v: bind(P.searchsorted_p, a, v, side="right",
                                               dtype=np.dtype(np.int32)),
                             [nx.asarray(np.array([1.0, 2.0, 2.0, 5.0])),
                              nx.asarray(np.array([[2.0, 0.0], [6.0, 1.5]]))]),
    "stop_gradient": lambda: (lambda x: bind(P.stop_gradient_p, x) * x,
                              [nx.asarray(np.array([1.0, -2.0]))]),
    "lu_factor": lambda: (lambda a: bind(P.lu_factor_p, a),
                          [nx.asarray(np.array([[[4.0, 1.0], [2.0, 3.0]], [[1.0, 2.0],
                                                                         [3.0, 4.0]]]))]),
}

# the elementwise primitives with zero derivatives (rounding, tests, bit shifts), on values that
# hit their special cases (halves, signed zeros, nan, inf)
_SPECIAL_FLOATS = np.array([-2.5, -0.5, -0.0, 0.0, 0.5, 1.5, np.nan, np.inf, -np.inf, 3.7])
for _name in ("ceil", "floor", "rint", "trunc", "sign", "signbit", "isnan", "isinf",
              "isfinite"):
    NONDIFF_CASES[_name] = (lambda p: lambda: (lambda x: bind(p, x),
                                               [nx.asarray(_SPECIAL_FLOATS)]))(
        getattr(P, _name + "_p"))
NONDIFF_CASES["nextafter"] = lambda: (lambda a, b: bind(P.nextafter_p, a, b),
                                      [nx.asarray(_SPECIAL_FLOATS),
                                       nx.asarray(np.full(10, 1.0))])
for _name in ("lshift", "rshift"):
    NONDIFF_CASES[_name] = (lambda p: lambda: (lambda a, b: bind(p, a, b),
                                               [_ints([5, -6, 7, 1]), _ints([0, 1, 3, 31])]))(
        getattr(P, _name + "_p"))

# the products of binary powering (matrix_power's residual)
NONDIFF_CASES["schur"] = lambda: (
    lambda a: bind(P.schur_p, a, output="complex"),
    [nx.asarray(np.array([[[4.0, 1.0], [2.0, 3.0]], [[1.0, -2.0], [3.0, 4.0]]]))])
NONDIFF_CASES["hessenberg"] = lambda: (
    lambda a: bind(P.hessenberg_p, a),
    [nx.asarray(np.array([[4.0, 1.0, 0.5], [2.0, 3.0, 1.0], [1.0, -1.0, 2.0]]))])
NONDIFF_CASES["matrix_power_parts"] = lambda: (
    lambda a: bind(P.matrix_power_parts_p, a, n=7),
    [nx.asarray(np.array([[[0.5, 0.25], [-0.75, 1.0]], [[0.1, 0.2], [0.3, -0.4]]]))])


def test_every_nondiff_primitive_has_a_case():
    assert {p.name for p in NONDIFF_PRIMS} == set(NONDIFF_CASES)


@pytest.mark.parametrize("name", sorted(NONDIFF_CASES))
def test_jit_of_nondiff_primitives(name):
    fn, xs = NONDIFF_CASES[name]()
    want = np.asarray(fn(*xs))
    got = np.asarray(nx.jit(fn)(*xs))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_stop_gradient_primitive_zero_under_jit():
    fn, xs = NONDIFF_CASES["stop_gradient"]()
    g = nx.jit(nx.grad(lambda x: nx.sum(fn(x))))(xs[0])
    np.testing.assert_array_equal(np.asarray(g), np.asarray(xs[0]))


# -- abstract evaluation ---------------------------------------------------------------------------

def test_every_primitive_has_an_abstract_rule():
    missing = {name for name, p in P.PRIMITIVES.items() if p not in ABSTRACT_RULES}
    assert missing == FALLBACK & set(P.PRIMITIVES), (
        f"primitives without an abstract rule: {sorted(missing - FALLBACK)}; add one in "
        f"nx_rune.compiler.abstract or list them in FALLBACK")
    assert not FALLBACK & {p.name for p in ABSTRACT_RULES}, "a rule exists: unlist it"


@pytest.mark.parametrize("spec,case", CASES, ids=IDS)
def test_abstract_rules_agree_with_the_implementations(spec, case):
    """Every equation of the traced program, run by its implementation on the spec's values,
    gives the shapes and dtypes its abstract rule predicted."""
    fn, xs, _ = _make(spec, case)
    prog = nx.make_jaxpr(fn)(*xs).program
    env = dict(zip(prog.in_vars, xs))

    def read(x):
        return x.value if isinstance(x, Literal) else env[x]
    for e in prog.eqns:
        ins = [read(x) for x in e.ins]
        outs = [e.prim.impl(*ins, **e.params)] if isinstance(e.prim, Primitive) else \
            e.prim.bind_eqn(e.params, ins)
        for v, o in zip(e.outs, outs):
            assert (tuple(o.shape), o.dtype) == (tuple(v.aval.shape), v.aval.dtype), e
            env[v] = o
    out = fn(*xs)
    assert prog.outs[0].aval.shape == out.shape
    assert prog.outs[0].aval.dtype == out.dtype


def test_fallback_evaluates_a_user_primitive_once_on_zeros():
    calls = []
    cube_p = Primitive("cube_for_test_jit_specs")
    try:
        def impl(x):
            calls.append(x.shape)
            return nx.asarray(np.asarray(x) ** 3)
        cube_p.def_impl(impl)
        f = nx.jit(lambda x: bind(cube_p, x) + 1)
        x = nx.asarray(np.array([1.0, 2.0]))
        np.testing.assert_array_equal(np.asarray(f(x)), [2.0, 9.0])
        assert cube_p in abstract.FALLBACK_USED
        a = AbstractValue((2,), np.float64)
        assert abstract_eval(cube_p, [a], {}) == a
        n = len(calls)
        abstract_eval(cube_p, [a], {})
        assert len(calls) == n                 # cached per operand types
    finally:
        del P.PRIMITIVES[cube_p.name]


def test_abstract_rule_checks_equal_shapes():
    with pytest.raises(ValueError, match="add: operands must have equal shapes"):
        abstract_eval(P.add_p, [AbstractValue((2,), np.float32),
                                AbstractValue((3,), np.float32)], {})


def test_primitive_without_implementation_or_rule_is_a_clear_error():
    q = Primitive("no_impl_for_test_jit_specs")
    try:
        with pytest.raises(NotImplementedError, match="no_impl_for_test_jit_specs"):
            nx.jit(lambda x: bind(q, x))(nx.asarray([1.0]))
    finally:
        del P.PRIMITIVES[q.name]
