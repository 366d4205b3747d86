"""Regression tests for what the differential program fuzzer (tests/program_fuzz/) found on the
merged issue-26 code: each shrunk reproducer, compared with the eager function (memory
sharing), with the analytic derivative, or with the harness's own classification."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import lax
from program_fuzz import runner as R
from program_fuzz.campaign import parse_skip, program
from program_fuzz.generator import generate
from program_fuzz.source import ReplaySource

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def _f32(*v):
    return nx.asarray(np.array(v, np.float32))


# -- jit's outputs keep eager's memory -------------------------------------------------------------

def test_loop_of_no_step_then_copy_is_new_memory():
    # fuzzer: v11 = fori_loop(0, 0, body, x0); return copy(v11): the loop returns its operand,
    # the copy was folded away, and jit returned x0's memory itself
    def f(x0, x1):
        v = lax.fori_loop(0, 0, lambda i, c: c * 0.9 + nx.tanh(x1), x0)
        return (nx.copy(v),)

    x0 = nx.asarray(np.ones((1, 3), np.float32))
    x1 = _f32(1, 2, 3)
    (eager,) = f(x0, x1)
    (got,) = nx.jit(f)(x0, x1)
    assert not np.shares_memory(np.asarray(eager), np.asarray(x0))
    assert not np.shares_memory(np.asarray(got), np.asarray(x0))
    got += 1
    np.testing.assert_array_equal(np.asarray(x0), np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(got), np.full((1, 3), 2, np.float32))


LOOPS = {
    "fori": lambda body, x: lax.fori_loop(0, 0, lambda i, c: body(c), x),
    "fori_identity_body": lambda body, x: lax.fori_loop(0, 2, lambda i, c: c, x),
    "fori_traced_bounds": lambda body, x: lax.fori_loop(0, nx.asarray(0), lambda i, c: body(c),
                                                        x),
    "while": lambda body, x: lax.while_loop(lambda c: False, body, x),
    "scan": lambda body, x: lax.scan(lambda c, _: (body(c), None), x, None, length=0)[0],
    "cond_array_pred": lambda body, x: lax.cond(nx.asarray(True), lambda c: c, body, x),
}


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_lax_result_that_is_its_operand_is_new_memory(loop):
    # fuzzer (seed 1, programs 437, 1775): v1 = fori_loop(0, 0, body, x0); v1 += x0;
    # return x0: eagerly the loop returned x0 itself, so the write doubled x0, while under jit
    # the loop is one equation with a new value.  Both now give new memory (JAX's values)
    def f(x0):
        v1 = LOOPS[loop](lambda c: nx.sin(c), x0)
        v1 += x0
        return x0, v1

    for fn in (f, nx.jit(f)):
        x0 = _f32(1, 2, 3)
        a, b = fn(x0)
        np.testing.assert_array_equal(np.asarray(x0), [1, 2, 3])
        np.testing.assert_array_equal(np.asarray(a), [1, 2, 3])
        np.testing.assert_array_equal(np.asarray(b), [2, 4, 6])
        assert not np.shares_memory(np.asarray(b), np.asarray(x0))


def test_grad_of_an_offset_slice_under_jit():
    # fuzzer (seed 1, programs 374, 466): jit(grad) of sum(x[1:]) gave 1 at the element the
    # slice drops: the gradient pad(broadcast(1.0)) was returned as a view of the broadcast
    # constant, reading its padding as the constant itself
    x = nx.asarray(np.arange(4.0, dtype=np.float32))
    L = lambda x: nx.sum(x[1:])    # noqa: E731
    want = np.array([0, 1, 1, 1], np.float32)
    for g in (nx.grad(L), nx.jit(nx.grad(L)), nx.grad(nx.jit(L))):
        np.testing.assert_array_equal(np.asarray(g(x)), want)
    L2 = lambda x0, x1: nx.sum((x0 + x1[2:]) * 2.0)   # noqa: E731
    x0, x1 = _f32(1, 2, 3), nx.asarray(np.arange(5.0, dtype=np.float32))
    got = nx.jit(nx.grad(L2, argnums=(0, 1)))(x0, x1)
    np.testing.assert_array_equal(np.asarray(got[0]), [2, 2, 2])
    np.testing.assert_array_equal(np.asarray(got[1]), [0, 0, 2, 2, 2])


@pytest.mark.parametrize("fold", [
    lambda v: v * 1.0,
    lambda v: v + 0.0,
    lambda v: v.astype(np.float32),
    lambda v: nx.concatenate([v]),
    lambda v: nx.where(True, v, 0.0),
    lambda v: nx.copy(v),
], ids=["mul_1", "add_0", "astype_same", "concatenate_one", "where_true", "copy"])
def test_folded_result_and_its_operand_are_distinct_outputs(fold):
    # fuzzer: v6 = cumsum(x0); v7 = v6 * 1.0; return v7, v6: the simplification makes both
    # outputs one value, which jit returned twice (eagerly two arrays)
    def f(x0):
        v6 = nx.cumsum(x0, axis=-1)
        return fold(v6), v6

    x0 = _f32(1, 2, 3)
    e0, e1 = f(x0)
    assert not np.shares_memory(np.asarray(e0), np.asarray(e1))
    g0, g1 = nx.jit(f)(x0)
    assert not np.shares_memory(np.asarray(g0), np.asarray(g1))
    np.testing.assert_array_equal(np.asarray(g0), np.cumsum([1, 2, 3]).astype(np.float32))
    g0 += 1
    np.testing.assert_array_equal(np.asarray(g1), np.cumsum([1, 2, 3]).astype(np.float32))


def test_same_value_returned_twice_is_two_arrays():
    def f(x0):
        v = nx.cumsum(x0)
        return v, v

    g0, g1 = nx.jit(f)(_f32(1, 2, 3))
    # eagerly the same tensor twice: returning it twice is eager's sharing; jit's two
    # outputs may not share with the argument, and each holds the values
    np.testing.assert_array_equal(np.asarray(g0), [1, 3, 6])
    np.testing.assert_array_equal(np.asarray(g1), [1, 3, 6])


# -- symbolic zero tangents through a jitted call --------------------------------------------------

W = np.array([0.5, -0.3, 0.2], np.float32)


def _hvp(L, x, t):
    return np.asarray(nx.jvp(nx.grad(L), (x,), (t,))[1])


@pytest.mark.parametrize("jit_outer", [False, True])
def test_hvp_of_jit_keeps_symbolic_zero_tangents(jit_outer):
    # fuzzer: f(x0) = x0 * 1e300 * 1e-300 in float32 (the primal is inf): the Hessian is 0
    # analytically and eagerly; hvp(jit(f)) multiplied an instantiated zero tangent by inf
    def L(x):
        return nx.sum(x * 1e300 * 1e-300 * nx.asarray(W))

    x = _f32(1, 2, 3)
    t = _f32(1, 1, 1)
    h = (lambda x: _hvp(nx.jit(L), x, t))
    got = np.asarray(nx.jit(lambda x: nx.jvp(nx.grad(nx.jit(L)), (x,), (t,))[1])(x)) \
        if jit_outer else h(x)
    np.testing.assert_array_equal(got, np.zeros(3, np.float32))
    np.testing.assert_array_equal(_hvp(L, x, t), np.zeros(3, np.float32))


def test_hvp_of_jit_with_python_scalar_argument():
    # fuzzer: f(x0, a) = x0 * a with a = 1e300 (a weak float32 scalar: inf)
    def L(x, a):
        return nx.sum(x * a * nx.asarray(W))

    x = _f32(1, 2, 3)
    t = _f32(1, -1, 1)
    for fn in (L, nx.jit(L)):
        got = np.asarray(nx.jvp(lambda u: nx.grad(fn)(u, 1e300), (x,), (t,))[1])
        np.testing.assert_array_equal(got, np.zeros(3, np.float32))


def test_grad_of_jit_with_an_unused_infinite_output():
    # the output the loss does not use has no cotangent (eagerly: a symbolic zero); an
    # instantiated zero times its inf partial was NaN
    def f(x):
        return x * np.float32(np.inf), x * 2.0

    x = _f32(1, 2, 3)
    want = np.full(3, 2, np.float32)     # d/dx sum(2 x)
    np.testing.assert_array_equal(np.asarray(nx.grad(lambda x: nx.sum(f(x)[1]))(x)), want)
    Lj = lambda x: nx.sum(nx.jit(f)(x)[1])   # noqa: E731
    np.testing.assert_array_equal(np.asarray(nx.grad(Lj)(x)), want)
    np.testing.assert_array_equal(np.asarray(nx.jit(nx.grad(Lj))(x)), want)


def test_jvp_of_jit_with_a_constant_infinite_operand():
    # an argument that carries no tangent (here c) stays a symbolic zero in the jitted JVP
    def f(x, c):
        return x * 2.0 + c * 3.0

    x = _f32(1, 2, 3)
    c = _f32(np.inf, 1, 1)
    t = _f32(1, 1, 1)
    want = np.full(3, 2, np.float32)
    got = nx.jvp(lambda x: nx.jit(f)(x, c) * 1.0, (x,), (t,))[1]
    np.testing.assert_array_equal(np.asarray(got)[1:], want[1:])
    # the first element's primal is inf, its tangent 2 (eager) not NaN
    eager = nx.jvp(lambda x: f(x, c), (x,), (t,))[1]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(eager))


# -- the harness: a program nx_rune refuses eagerly is invalid, not a failure ----------------------

def test_eager_library_refusal_is_an_invalid_program():
    # program 189 of seed 0: under x64 nx.full((4, 3), 1) is int64, and float32 + int64 is
    # float64 (NumPy's promotion; JAX's gives float32), so the while_loop's float32 carry meets
    # a float64 body: eager raises a clear TypeError, as must jit and vmap
    # (replayed from its recorded choices: the op table has grown since, at its end)
    prog = generate(ReplaySource(_PROGRAM_0_189), parse_skip([]).gen_skip)
    assert any("while_loop" in ln for ln in prog.body)
    fails, invalid = R.run_program(prog, ["jit", "vmap", "grad"])
    assert fails == []
    assert invalid and "while_loop" in invalid


_PROGRAM_0_189 = [61, 17, 8, 2, 2, 10, 10, 1, 11, 0, 3, 11, 3, 34, 98, 1, 65, 0, 10, 12, 58,
    44, 1, 22, 53, 1, 0, 67, 0, 19, 38, 21, 23, 4, 20, 96, 2, 1, 10, 2, 10, 5, 21, 2, 91, 22,
    81, 0, 2, 24, 4, 1, 1, 98, 0, 1, 25, 23, 5, 46, 1, 3, 73, 16, 16, 19, 8, 0, 34, 11, 41, 1,
    7, 65, 49, 2, 6, 18, 94, 2, 84, 46, 78, 92, 8, 1006843]


def test_library_refusal_classification():
    try:
        lax.while_loop(lambda c: c < 2, lambda c: c * 1.0, nx.asarray(np.int32(0)))
    except TypeError as e:
        clear = e
    else:
        pytest.fail("lax.while_loop accepted a carry whose dtype the body changes")
    assert R._library_refusal(clear)

    def crash():
        return {}["x"]
    try:
        crash()
    except KeyError as e:
        assert not R._library_refusal(e)
    try:
        int("x")        # raised outside nx_rune's code: not the library's refusal
    except ValueError as e:
        assert not R._library_refusal(e)


# -- derivatives at ties and kinks: the traced (jit) branches of the rules agree with eager ------

TIES = {
    "maximum": nx.maximum,
    "minimum": nx.minimum,
    "max_reduce": lambda a, b: nx.max(nx.stack([a, b])),
    "min_reduce": lambda a, b: nx.min(nx.stack([a, b])),
    "clip": lambda a, b: nx.clip(a, b, b),
    "sort": lambda a, b: nx.sort(nx.stack([a, b]))[1],
    "abs_kink": lambda a, b: nx.abs(a - b) + a,
    "relu_kink": lambda a, b: nx.relu(a - b) + b,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tie", sorted(TIES))
def test_tie_derivative_same_under_jit(tie, dtype):
    # an earlier fuzzer survey: jit(grad) of logaddexp2(max(s, s), max(s, s)), s = sum(x), gave
    # 0.5 where eager gave 1.  f(x) = logaddexp2(m, m) = m + 1 with m = s at the tie: every
    # composition must give the analytic gradient 1 and second derivative 0
    op = TIES[tie]

    def L(x):
        s = nx.sum(x)
        m = op(s, s)
        return nx.logaddexp2(m, m)

    with nx.enable_x64():
        x = nx.asarray(np.array([0.3, -0.2, 0.5], dtype))
        t = nx.asarray(np.ones(3, dtype))
        for g in (nx.grad(L), nx.jit(nx.grad(L)), nx.grad(nx.jit(L)),
                  nx.jit(nx.grad(nx.jit(L)))):
            np.testing.assert_allclose(np.asarray(g(x)), np.ones(3), rtol=0, atol=1e-6)
        xb = nx.asarray(np.array([[0.3, -0.2, 0.5], [1.0, 2.0, -4.0]], dtype))
        for g in (nx.vmap(nx.grad(L)), nx.jit(nx.vmap(nx.grad(L))), nx.vmap(nx.grad(nx.jit(L)))):
            np.testing.assert_allclose(np.asarray(g(xb)), np.ones((2, 3)), rtol=0, atol=1e-6)
        for g in (nx.grad(L), nx.grad(nx.jit(L))):
            h = nx.jvp(g, (x,), (t,))[1]
            np.testing.assert_allclose(np.asarray(h), np.zeros(3), rtol=0, atol=1e-6)


def test_cond_operand_no_branch_reads_has_no_cotangent_under_jit():
    # fuzzer (seed 2, program 328): an operand q = x * 1e300 (inf in float32) that neither
    # branch reads got an instantiated zero cotangent under jit, and 0 * inf made the gradient
    # NaN; eagerly (and in JAX 0.10.2) it is cos(x)
    def L(x, a):
        q = x * a
        v = lax.cond(nx.sum(x) > 0, lambda p, q: nx.sin(p), lambda p, q: nx.sin(p), x, q)
        return nx.sum(v)

    xv = np.array([0.3, -0.2, 0.5], np.float32)
    x = nx.asarray(xv)
    t = _f32(1, 1, 1)
    want = np.cos(xv)
    for g in (nx.grad(L), nx.jit(nx.grad(L)), nx.grad(nx.jit(L)), nx.jit(nx.grad(nx.jit(L)))):
        np.testing.assert_allclose(np.asarray(g(x, 1e300)), want, rtol=1e-6)
    for g in (nx.grad(L), nx.grad(nx.jit(L)), nx.jit(nx.grad(L))):
        h = nx.jvp(lambda u: g(u, 1e300), (x,), (t,))[1]
        np.testing.assert_allclose(np.asarray(h), -np.sin(xv), rtol=1e-6)


@pytest.mark.parametrize("index", [1539, 2212])
def test_harness_no_finite_differences_at_a_cond_predicate_tie(index):
    # seed 2's programs 1539 and 2212: lax.cond's predicate sits exactly on a tie input
    # (min(x1) > 0 with x1 holding 0), so the derivative follows the rules' tie convention
    # (JAX's), which central differences across the branch switch cannot reproduce: such
    # programs are compared between transformations only
    prog = program(2, index, parse_skip([]))
    assert any(t.startswith("control:cond") for t in prog.tags)
    fails, invalid = R.run_program(prog, ["grad", "jvp", "hvp", "jit(grad)", "hvp(jit)"])
    assert fails == [] and invalid is None


def test_hvp_through_cond_of_infinite_values_under_jit():
    # fuzzer (seed 3, program 232): v1 = x * 1e300 (inf in float32); cond(min(v1) > 0, log,
    # p * p): eagerly the second derivative is 2 * W * a * a * t = +inf; under jit the
    # branch's JVP multiplied the cotangent's instantiated zero tangent by p = inf (NaN)
    W = np.array([0.5, -0.3, 0.2], np.float32)

    def L(x0, a):
        v1 = x0 * a
        v3 = lax.cond(nx.min(v1) > 0, lambda p: nx.log(p), lambda p: p * p, v1)
        return nx.sum(v3 * nx.asarray(W))

    x = _f32(0.3, -0.2, 0.5)
    t = _f32(1, -1, 0.5)          # W * t > 0 everywhere: the exact value is +inf
    for g in (nx.grad(L), nx.grad(nx.jit(L)), nx.jit(nx.grad(L))):
        h = nx.jvp(lambda u: g(u, 1e300), (x,), (t,))[1]
        np.testing.assert_array_equal(np.asarray(h), np.full(3, np.inf, np.float32))


@pytest.mark.parametrize("loop", ["fori", "while", "scan"])
def test_loop_of_no_step_checks_its_body_carry_eagerly(loop):
    # fuzzer (seed 3, program 1096): fori_loop(0, 0, body, x0) with a body returning float64
    # for a float32 carry ran eagerly (no step) but raised under jit (and in JAX, which
    # traces the body whatever the trip count): eager raises the same TypeError now
    x = _f32(1, 2, 3)
    widen = lambda c: c.astype(np.float64)     # noqa: E731
    f = {"fori": lambda x: lax.fori_loop(0, 0, lambda i, c: widen(c), x),
         "while": lambda x: lax.while_loop(lambda c: False, widen, x),
         "scan": lambda x: lax.scan(lambda c, _: (widen(c), None), x, None, length=0)}[loop]
    for fn in (f, nx.jit(f)):
        with pytest.raises(TypeError, match=r"lax\.\w+: .*identical shapes and dtypes"):
            fn(x)
    ok = lax.fori_loop(0, 0, lambda i, c: c * 2.0, x)     # a valid body still runs no step
    np.testing.assert_array_equal(np.asarray(ok), [1, 2, 3])


# -- loops' derivatives keep symbolic zeros (no ``0 * inf`` where eager gives a number) ---------

def test_hvp_through_fori_loop_of_a_constant_sum_under_jit():
    # fuzzer (seed 4, program 2877): v5 = x0 * 1e300 * 1e-300 (inf * 0 in float32), a loop
    # adding sum(v5) twice: linear in x0, so the second derivative is exactly 0 (eager);
    # the loop's derivatives instantiated the zero tangents and cotangents (0 * inf: NaN)
    def f(x0):
        v5 = x0 * 1e300 * 1e-300
        return lax.fori_loop(0, 2, lambda i, c: c + nx.sum(v5), 0.0)

    x, t = _f32(0.3, -0.2, 0.5), _f32(1, 1, 1)
    for g in (nx.grad(f), nx.grad(nx.jit(f)), nx.jit(nx.grad(f))):
        h = nx.jvp(g, (x,), (t,))[1]
        np.testing.assert_array_equal(np.asarray(h), np.zeros(3, np.float32))


def test_hvp_through_fori_loop_of_maximum_with_a_python_number_under_jit():
    # fuzzer (seed 4, program 2352): fori_loop(0, 2, c -> maximum(c, x0 * a), x0), a = 1e300:
    # piecewise linear in x0, so the second derivative is 0; the reverse scan's cotangent
    # carry had an instantiated zero tangent, multiplied by a = inf (NaN)
    def f(x0, a):
        return nx.sum(lax.fori_loop(0, 2, lambda i, c: nx.maximum(c, x0 * a), x0))

    x, t = _f32(0.3, -0.2, 0.5), _f32(1, 1, 1)

    def hvp(u, v):
        return nx.jvp(nx.grad(lambda w: f(w, 1e300)), (u,), (v,))[1]
    for h in (hvp(x, t), nx.jit(hvp)(x, t),
              nx.jvp(nx.grad(nx.jit(lambda w: f(w, 1e300))), (x,), (t,))[1]):
        np.testing.assert_array_equal(np.asarray(h), np.zeros(3, np.float32))


def test_grad_through_scan_with_an_unused_final_carry_under_jit():
    # fuzzer (seed 4, program 2073): scan(lambda c, r: (sin(c), c * r), v2[0], v2), one step,
    # v2 = x0 * 1e300 (inf in float32), only the ys used: sum(v2[0] ** 2), whose gradient is
    # 2 * x0 * a * a = +-inf.  The unused final carry's cotangent was an instantiated zero
    # times cos(inf) (NaN); eagerly it is a symbolic zero
    def f(x0, a):
        v2 = x0 * a
        _, v7 = lax.scan(lambda c, r: (nx.sin(c), c * r), v2[0], v2)
        return nx.sum(v7)

    x = nx.asarray(np.array([[0.3, -0.2, 0.5]], np.float32))
    want = np.array([[np.inf, -np.inf, np.inf]], np.float32)
    for g in (nx.grad(f), nx.grad(nx.jit(f)), nx.jit(nx.grad(f))):
        np.testing.assert_array_equal(np.asarray(g(x, 1e300)), want)


@pytest.mark.parametrize("bounds", ["static", "traced"])
def test_jvp_through_loop_with_a_carry_that_has_no_tangent(bounds):
    # the second carry has no tangent and the body never gives it one: it is a constant
    # (sqrt's partial at 0 is inf; an instantiated zero tangent gave 0 * inf = NaN under jit);
    # d/dx sum(4 x) . t = 4 * sum(t) = 12
    n = 2 if bounds == "static" else nx.asarray(2)

    def f(x0):
        out = lax.fori_loop(0, n, lambda i, c: (c[0] * 2 + nx.sqrt(c[1]), c[1]),
                            (x0, nx.zeros(3)))
        return nx.sum(out[0])

    x, t = _f32(0.3, -0.2, 0.5), _f32(1, 1, 1)
    for got in (nx.jvp(f, (x,), (t,))[1], nx.jvp(nx.jit(f), (x,), (t,))[1],
                nx.jit(lambda u, v: nx.jvp(f, (u,), (v,))[1])(x, t)):
        assert float(got) == 12.0


def _fd_grad(L, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        g.flat[i] = (float(L(nx.asarray(x + d))) - float(L(nx.asarray(x - d)))) / (2 * eps)
    return g


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("length", [0, 1, 2, 4])
def test_scan_derivatives_of_ordinary_loops_match_finite_differences(length, reverse):
    # the carries' (co)tangents start as symbolic zeros and become nonzero step by step (the
    # final carries are unused, the ys read only the first carry, which reads the second):
    # the reverse pass peels steps until its cotangent mask is stable; float64 finite
    # differences of every mode
    rng = np.random.default_rng(length)
    x = rng.normal(size=(length + 1, 3))
    w = rng.normal(size=3)

    def L(x):
        k = nx.tanh(x[length])

        def body(c, r):
            a, b, z = c
            return (nx.sin(b) * k, b + r, z * 2.0), a * r + nx.cos(a) * z
        _, ys = lax.scan(body, (x[0] * 0.5, x[0], nx.ones(3)), x[:length], reverse=reverse)
        return nx.sum(ys * nx.asarray(w))

    want = _fd_grad(L, x)
    for g in (nx.grad(L), nx.grad(nx.jit(L)), nx.jit(nx.grad(L))):
        np.testing.assert_allclose(np.asarray(g(nx.asarray(x))), want, rtol=1e-6, atol=1e-7)
    t = rng.normal(size=x.shape)
    for fn in (L, nx.jit(L)):
        jv = nx.jvp(fn, (nx.asarray(x),), (nx.asarray(t),))[1]
        np.testing.assert_allclose(float(jv), float(np.sum(want * t)), rtol=1e-6, atol=1e-7)
    # second order: forward over reverse against finite differences of the gradient
    h = nx.jvp(nx.grad(nx.jit(L)), (nx.asarray(x),), (nx.asarray(t),))[1]
    gl = nx.grad(L)
    eps = 1e-6
    fd = (np.asarray(gl(nx.asarray(x + eps * t))) - np.asarray(gl(nx.asarray(x - eps * t)))) \
        / (2 * eps)
    np.testing.assert_allclose(np.asarray(h), fd, rtol=1e-5, atol=1e-6)


# -- the op table reaches issue 26's log_ndtr tail, NumPy's 0-d shapes, empty key batches -------

def test_generator_reaches_the_tail_shape_and_empty_batch_ops():
    opts = parse_skip([])
    seen = set()
    for i in range(300):
        for tags in program(4, i, opts).line_tags:
            seen |= set(tags)
    assert {"log_ndtr_tail", "matrix_rank", "norm_complex", "vmap_empty_keys"} <= seen


def test_harness_reports_a_0d_result_with_a_shape_numpy_does_not_give(monkeypatch):
    # a matrix_rank that returned shape (1,) (issue 26) is caught eagerly by the program's own
    # NumPy shape reference (eager is the reference of every other comparison)
    opts = parse_skip([])
    idx = next(i for i in range(300)
               if any("matrix_rank" in t for t in program(4, i, opts).line_tags))
    prog = program(4, idx, opts)
    assert R.run_program(prog, ["jit", "grad"]) == ([], None)
    real = nx.linalg.matrix_rank
    monkeypatch.setattr(nx.linalg, "matrix_rank", lambda *a, **k: real(*a, **k).reshape(1))
    fails, invalid = R.run_program(prog, ["jit", "grad"])
    assert invalid is None
    assert [(f.mode, f.kind) for f in fails] == [("eager", "exception:ShapeMismatch")]


# -- views between outputs, and 0-d written arguments (2,000-program survey, seed 11) ----------

def _outputs_share(f, args, write_to, read_from):
    """Write 99 into output ``write_to``'s first element; return output ``read_from``."""
    outs = f(*args)
    w = outs[write_to]
    w[(0,) * w.ndim] = 99.0
    return np.asarray(outs[read_from]).copy()


VIEW_AFTER_WRITE = {
    # v6 views v1 and was written (so traced as a computed value): eagerly still a view
    "reversed_step": lambda x0, a: (lambda v1: (v1, _iadd(v1[..., ::-2])))(x0 + a),
    "where_then_reversed": lambda x0, a: (lambda v2: (v2, _set0(v2[::-1])))(
        nx.where(True, x0, 0)),
    "view_of_a_view_output": lambda x0, a: (lambda y: (lambda v: (v, _iadd(v[::2])))(y[1:]))(
        x0 * a),
    "three_outputs": lambda x0, a: (lambda y: (lambda v: (y, v, _iadd(v[::2])))(y[1:]))(
        x0 * a),
}


def _iadd(v):
    v += v
    return v


def _set0(v):
    v[0] = 0.25
    return v


@pytest.mark.parametrize("case", sorted(VIEW_AFTER_WRITE))
def test_output_that_views_another_output_after_a_write_shares_its_memory(case):
    f = VIEW_AFTER_WRITE[case]

    def args():
        return (nx.asarray(np.arange(6, dtype=np.float32)),
                nx.asarray(np.full(6, 2, np.float32)))

    n = len(f(*args()))
    for w in range(n):
        for r in range(n):
            eager = _outputs_share(f, args(), w, r)
            got = _outputs_share(nx.jit(f), args(), w, r)
            np.testing.assert_array_equal(got, eager, err_msg=f"{case}: write {w}, read {r}")


def test_0d_argument_written_through_a_view_comes_back_as_itself():
    # x0[None][0] = 5; return x0: the written 0-d argument's final value is a reshape of the
    # scattered one, and jit returned another array instead of x0
    def f(x0):
        x0[None][0] = 5.0
        return x0, x0[None]

    x0 = nx.asarray(np.float32(1))
    a, b = nx.jit(f)(x0)
    assert a is x0
    b[0] = 7.0
    assert float(x0) == 7.0


def test_strided_slice_of_as_strided_windows_is_a_view_under_jit():
    # as_strided(ravel(x0)[2:], (9, 2), (1, 1)).T[..., ::-2]: the step slice (traced as
    # pad/reshape/shrink) after as_strided (a C-order map) was not composed, so jit returned
    # a copy where eagerly the result views x0
    def f(x0):
        return nx.as_strided(nx.ravel(x0)[2:], (9, 2), (1, 1), 0).T[..., ::-2]

    for g in (f, nx.jit(f)):
        x0 = nx.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
        v = g(x0)
        np.testing.assert_array_equal(np.asarray(v), [[10, 8, 6, 4, 2], [11, 9, 7, 5, 3]])
        v[0, 0] = 99.0
        assert np.asarray(x0)[2, 2] == 99.0


def _cond_after_inf_partial(x):
    y = x * 1e300 * 1e-300      # float32: x * inf * 0, a NaN whose partial derivative is NaN
    return nx.sum(lax.cond(nx.sum(x) > 0, lambda a, b: a * a, lambda a, b: b * a, x, y))


def test_traced_cond_gives_the_untaken_operand_a_zero_cotangent_as_jax():
    # the documented difference (docs/reliability.md): eagerly only the taken branch is
    # differentiated (2x); traced, y's zero cotangent meets the inf partial upstream: NaN, as
    # jax 0.10.2 gives under jit and eagerly
    x = nx.asarray(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(nx.grad(_cond_after_inf_partial)(x)), [2.0, 4.0])
    assert np.isnan(np.asarray(nx.jit(nx.grad(_cond_after_inf_partial))(x))).all()


def test_harness_accepts_only_that_nan():
    class Prog:
        tags = {"mul_1e300", "control:cond"}
        dtype = "float32"
        scalar = None

    class Ctx:
        # the program's forward pass (the harness asks it whether it overflows by itself)
        prog = Prog()
        forward = staticmethod(lambda: nx.ones(2))

        def make_fn(self):
            return (lambda: self.forward()), {}

        def args(self):
            return []

        def x64(self):
            return nx.enable_x64(False)

    want = (np.array([2.0, 4.0], np.float32),)
    R._expect("ok", want, (np.array([np.nan, 4.0], np.float32),), Ctx(), derivative=True)
    with pytest.raises(R.Mismatch):
        R._expect("ok", want, (np.array([np.nan, 4.0], np.float32),), Ctx())
    with pytest.raises(R.Mismatch):
        R._expect("ok", want, (np.array([3.0, 4.0], np.float32),), Ctx(), derivative=True)
    Prog.tags = {"control:cond"}
    with pytest.raises(R.Mismatch):
        R._expect("ok", want, (np.array([np.nan, 4.0], np.float32),), Ctx(), derivative=True)
    # a cond whose forward pass overflows by itself (an exp of a large value: seed 277,
    # program 1166): the same 0 * inf, accepted
    Ctx.forward = staticmethod(lambda: nx.exp(nx.asarray(np.array([1000.0], np.float32))))
    R._expect("ok", want, (np.array([np.nan, 4.0], np.float32),), Ctx(), derivative=True)
    with pytest.raises(R.Mismatch):
        R._expect("ok", want, (np.array([np.nan, 5.0], np.float32),), Ctx(), derivative=True)
    # a loop over values scaled by a huge Python number: the same 0 * inf (seed 51, program
    # 40: hvp of fori_loop(c * c) from x * 1e300 is NaN traced, as in JAX, inf eagerly)
    Prog.tags, Prog.scalar = {"control:fori", "scalar_arg"}, 1e300
    R._expect("ok", (np.array([np.inf, -np.inf]),), (np.array([np.nan, np.nan]),), Ctx(),
              derivative=True)


# -- a reshape that copies eagerly, then a write into its source (lax helper's find) -----------

def _reshape_then_write(build):
    def f(x):
        r = build(x)
        x *= 2.0
        return r
    return f


RESHAPE_AFTER = {
    # eagerly each reshape copies (a padded value, a permuted one): the later write is not seen
    "padded": lambda x: nx.reshape(nx.pad(nx.expand_dims(x, 1), ((0, 0), (0, 1))), (-1,)),
    "transposed": lambda x: nx.reshape(x.T, (-1,)),
    "flipped_transposed": lambda x: nx.reshape(nx.flip(x, 0).T, (-1,)),
    # eagerly a view: the write shows
    "plain": lambda x: nx.reshape(x, (-1,)),
    "shrunk_padding": lambda x: nx.reshape(nx.pad(x, ((0, 1), (0, 0)))[:2], (-1,)),
}


@pytest.mark.parametrize("case", sorted(RESHAPE_AFTER))
@pytest.mark.parametrize("layout", ["c", "transposed"])
def test_reshape_before_a_write_is_a_view_exactly_where_eager_is(case, layout):
    f = _reshape_then_write(RESHAPE_AFTER[case])

    def arg():
        if layout == "c":
            return nx.asarray(np.arange(6, dtype=np.float64).reshape(2, 3))
        return nx.asarray(np.arange(6, dtype=np.float64).reshape(3, 2)).T

    if case == "padded":
        def arg():      # noqa: F811 (a 1-D argument)
            return nx.asarray(np.arange(3, dtype=np.float64))
    x_e = arg()
    want = np.asarray(f(x_e)).copy()
    jf = nx.jit(f)
    for _ in range(2):      # the trace, then the cached program
        x_j = arg()
        got = jf(x_j)
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(x_j), np.asarray(x_e))



@pytest.mark.parametrize("case", sorted(RESHAPE_AFTER))
def test_reshape_before_a_write_under_vmap_and_grad_is_a_view_where_eager_is(case):
    """Fuzzer seed 243, program 2667: ``v = cumlogsumexp(x, reverse=True)`` is eagerly a
    flipped view, so ``v.reshape(-1)`` copies and a later ``v += x`` does not reach it.  Under
    vmap, and under a derivative inside jit, the reshape was taken for a view (their values
    have no single array to look at), so the write reached it.  They now follow the movements
    back as jit's trace does."""
    build = RESHAPE_AFTER[case]
    if case == "padded":
        xs = np.arange(6, dtype=np.float64).reshape(2, 3)
    else:
        xs = np.arange(12, dtype=np.float64).reshape(2, 2, 3)
    f = _reshape_then_write(build)
    want = np.stack([np.asarray(f(nx.asarray(x.copy()))) for x in xs])
    np.testing.assert_array_equal(np.asarray(nx.vmap(f)(nx.asarray(xs.copy()))), want)
    np.testing.assert_array_equal(np.asarray(nx.jit(nx.vmap(f))(nx.asarray(xs.copy()))), want)

    def loss(x):
        return nx.sum(f(x) * nx.arange(f(x).size, dtype=x.dtype))
    x0 = nx.asarray(xs[0].copy())
    g_eager = np.asarray(nx.grad(loss)(x0))
    np.testing.assert_array_equal(np.asarray(nx.jit(nx.grad(loss))(nx.asarray(xs[0].copy()))),
                                  g_eager)



@pytest.mark.parametrize("shape, axis", [((3, 2, 2), 1), ((2, 3, 2), 2), ((2, 3, 2), 0)])
def test_reshape_of_a_vmap_argument_follows_the_example_layout(shape, axis):
    """vmap(f, in_axes=axis)(x)[i] is f of x's i-th slice, a view with x's strides: a reshape
    of it copies where those strides do not merge (axis 1 of (3, 2, 2)) and is a view where
    they do (axis 2 of (2, 3, 2): every other element), and a later write shows accordingly.
    The argument's batched tracer carries the example's strides; computed values are C order."""
    base = np.arange(12.0).reshape(shape)
    f = _reshape_then_write(lambda x: nx.reshape(x, (-1,)))

    def example(i):
        return nx.asarray(base.copy())[(slice(None),) * axis + (i,)]
    want = np.stack([np.asarray(f(example(i))) for i in range(shape[axis])])
    for g in (nx.vmap(f, in_axes=axis), nx.jit(nx.vmap(f, in_axes=axis))):
        np.testing.assert_array_equal(np.asarray(g(nx.asarray(base.copy()))), want)


def test_jit_of_vmap_checks_the_layout_it_assumed_for_an_argument():
    f = _reshape_then_write(lambda x: nx.reshape(x, (-1,)))
    jf = nx.jit(nx.vmap(f, in_axes=1))
    c = np.arange(12.0).reshape(3, 2, 2)
    jf(nx.asarray(c.copy()))                        # traced for a C-ordered argument

    def transposed():
        return nx.asarray(np.arange(12.0).reshape(2, 2, 3)).transpose(2, 1, 0)
    want = np.stack([np.asarray(f(transposed()[:, i, :])) for i in range(2)])
    np.testing.assert_array_equal(np.asarray(jf(transposed())), want)


@pytest.mark.parametrize("case", ["same_twice", "two_slices_and_whole", "computed_twice"])
def test_jit_outputs_through_one_copying_reshape_share_it_as_eagerly(case):
    """Fuzzer seed 269, program 569: ``v = ravel(x.T)[2:]; return v, v``.  Eagerly the
    reshape copies once and both outputs are that copy's view; jit rebuilt each output from
    the argument separately, two copies.  Outputs now continue from the step values other
    outputs already made; two reshapes computed apart stay apart."""
    def f(x):
        if case == "same_twice":
            v = nx.ravel(x.T)[2:]
            return v, v
        if case == "two_slices_and_whole":
            v = nx.ravel(x.T)
            return v[1:], v[:3], v
        return nx.ravel(x.T)[2:], nx.ravel(x.T)[2:]

    def arg():
        return nx.asarray(np.arange(6.0).reshape(2, 3))
    eager = f(arg())
    pairs = [(i, k) for i in range(len(eager)) for k in range(i)]
    for outs in (nx.jit(f)(arg()), nx.jit(f)(arg())):           # the trace, then the cache
        for a, b in zip(outs, eager):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert [nx.shares_memory(outs[i], outs[k]) for i, k in pairs] == \
            [nx.shares_memory(eager[i], eager[k]) for i, k in pairs]

def test_reverse_cumlogsumexp_reshaped_then_written_keeps_eager_values():
    x = np.random.default_rng(0).standard_normal((2, 2, 3)).astype(np.float32)

    def f(x0):
        v3 = nx.lax.cumlogsumexp(x0, 0, reverse=True)
        v4 = v3.reshape(-1)
        v3 += x0
        return v4
    want = np.stack([np.asarray(f(nx.asarray(e))) for e in x])
    np.testing.assert_allclose(np.asarray(nx.vmap(f)(nx.asarray(x))), want, rtol=1e-6)

def test_a_trace_that_assumed_a_layout_serves_both_layouts():
    # one cache entry (same shape and dtype), a C-contiguous then a transposed argument: the
    # second call runs the function eagerly, as the trace's view decision does not hold for it
    f = _reshape_then_write(lambda x: nx.reshape(x, (-1,)))
    jf = nx.jit(f)
    c = nx.asarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(jf(c)), [0, 2, 4, 6, 8, 10])
    t = nx.asarray(np.arange(6, dtype=np.float64).reshape(3, 2)).T
    np.testing.assert_array_equal(np.asarray(jf(t)), [0, 2, 4, 1, 3, 5])
    np.testing.assert_array_equal(np.asarray(t), [[0, 4, 8], [2, 6, 10]])


def test_a_call_run_eagerly_for_its_layout_gets_the_python_arguments():
    # fuzzer (seed 41, program 623): the layout fallback ran the function on the flattened
    # leaves, where the Python number 2.5 had become a float64 array (float32 * it: float64)
    seen = []

    def f(x0, x1, a):
        seen.append(type(a))
        x0[0] = 0.25
        return x0 * a, nx.reshape(x1, (-1,))

    def args():
        return (nx.zeros((2, 2)), nx.asarray(np.arange(4, dtype=np.float32).reshape(2, 2)).T, 2.5)

    want = f(*args())
    jf = nx.jit(f)
    for _ in range(2):
        seen.clear()
        got = jf(*args())
        assert seen[-1] is float    # run eagerly (a transposed argument), with the number itself
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_clip_keeps_a_zero_inside_its_bounds_under_every_transformation():
    # fuzzer (seed 41, program 263): clip(-0.0, x1 - 0.5, x1 + 0.5) at x1 = 0.5 is -0.0 eagerly
    # (NumPy's loop with scalar bounds), 0.0 under jit (the fused loop) and vmap (array bounds)
    def f(x0, x1):
        return nx.clip(x0, x1 - 0.5, x1 + 0.5)

    x0 = nx.asarray(np.array([-0.0, 0.0], np.float32))
    x1 = nx.asarray(np.array([0.5, -0.5], np.float32))
    want = np.array([-0.0, 0.0], np.float32)
    for got in (nx.stack([f(x0[0], x1[0]), f(x0[1], x1[1])]), nx.jit(f)(x0[0], x1[0])[None],
                nx.vmap(f)(x0, x1), nx.jit(nx.vmap(f))(x0, x1)):
        got = np.asarray(got)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want[:got.size]))
