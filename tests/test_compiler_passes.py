"""Each compiler pass on small programs: the program printed before and after, checked line by
line, and the result computing the same values."""
import textwrap

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.compiler import passes
from nx_rune.compiler.executor import compile_program
from nx_rune.compiler.interpret import eval_program

X = nx.asarray(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
C = nx.asarray(np.arange(3.0, dtype=np.float32))


def program(f, *args):
    return nx.make_jaxpr(f)(*args).program


def text(s):
    return textwrap.dedent(s).strip("\n")


def run(prog, *args):
    """Run a program (after any pass) through the executor."""
    plan = passes.plan_buffers(prog)
    return [np.asarray(o) for o in compile_program(prog, plan)(*[a._np() for a in args])]


def same_values(before, after, *args, rtol=1e-6, atol=1e-7):
    want = [np.asarray(o) for o in eval_program(before, list(args))]
    for a, b in zip(run(after, *args), want):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_dce_removes_unused_equations():
    before = program(lambda x: (nx.sin(x), nx.cos(x))[0], X)
    assert str(before) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2,3] = sin a
            c:f32[2,3] = cos a
          in (b,) }""")
    after = passes.dce(before)
    assert str(after) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2,3] = sin a
          in (b,) }""")
    same_values(before, after, X)
    assert passes.dce(after) is after          # nothing left to remove


def test_cse_merges_repeated_computations():
    before = program(lambda x: nx.sin(x) * nx.sin(x) + nx.exp(x), X)
    assert str(before).count("sin a") == 2
    after = passes.cse(before)
    assert str(after) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2,3] = sin a
            c:f32[2,3] = mul b b
            d:f32[2,3] = exp a
            e:f32[2,3] = add c d
          in (e,) }""")
    same_values(before, after, X)


def test_cse_keeps_different_params_and_merges_equal_constants():
    before = program(lambda x: (nx.sum(x, axis=0), nx.sum(x, axis=1), x * 2.0 + x * 2.0), X)
    after = passes.cse(before)
    s = str(after)
    assert s.count("reduce_sum") == 2 and s.count("mul a 2.0") == 1
    same_values(before, after, X)


def test_fold_constants_computes_literal_only_equations():
    before = program(lambda x: x + nx.exp(C * 2), X)
    assert str(before) == text("""
        { lambda a:f32[3]; b:f32[2,3]. let
            c:f32[3] = mul a 2.0:f32[3]
            d:f32[3] = exp c
            e:f32[2,3] = expand[shape=(2, 3)] d
            f:f32[2,3] = add b e
          in (f,) }""")
    after = passes.fold_constants(before)
    assert str(after) == text("""
        { lambda a:f32[2,3]; b:f32[2,3]. let
            c:f32[2,3] = add b a
          in (c,) }""")
    lit = after.eqns[0].ins[1]
    np.testing.assert_allclose(lit.array(), np.broadcast_to(np.exp(np.arange(3.0) * 2),
                                                            (2, 3)), rtol=1e-6)
    same_values(before, after, X)


def test_fold_constants_leaves_errors_to_run_time():
    z = nx.asarray(np.array([1, 0], np.int32))
    before = program(lambda x: x + z // z, nx.asarray(np.array([1, 2], np.int32)))
    after = passes.fold_constants(before)
    assert "idiv" in str(after)             # division by zero raises when the program runs
    with pytest.raises(ZeroDivisionError):
        nx.jit(lambda x: x + z // z)(nx.asarray(np.array([1, 2], np.int32)))


def test_simplify_applies_exact_identities():
    before = program(lambda x: -(-(x * 1.0)) ** 2, X)
    assert str(before) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2,3] = mul a 1.0:f32[2,3]
            c:f32[2,3] = neg b
            d:f32[2,3] = pow c 2.0:f32[2,3]
            e:f32[2,3] = neg d
          in (e,) }""")
    after = passes.simplify(before)
    assert str(after) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2,3] = neg a
            c:f32[2,3] = mul b b
            d:f32[2,3] = neg c
          in (d,) }""")
    same_values(before, after, X)
    two = passes.simplify(program(lambda x: nx.where(x > 0, x, x) + nx.negative(-x), X))
    assert str(passes.dce(two)) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2,3] = add a a
          in (b,) }""")


def test_simplify_keeps_plus_zero_and_cubes_by_products():
    before = program(lambda x: x + 0.0, X)
    assert "add a 0.0" in str(passes.simplify(before))        # -0.0 + 0.0 is +0.0
    cube = passes.simplify(program(lambda x: x ** 3, X))
    assert [e.prim.name for e in cube.eqns] == ["mul", "mul"]
    same_values(program(lambda x: x ** 3, X), cube, X, rtol=4e-7)


def test_fold_views_makes_one_view_per_chain():
    before = program(lambda x: nx.flip(x.T, 0)[1:].reshape(4), X)
    assert [e.prim.name for e in before.eqns] == ["permute", "flip", "shrink", "reshape"]
    after = passes.dce(passes.fold_views(before))
    assert str(after) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2,2] = view[shape=(2, 2) strides=(-1, 3) offset=1] a
            c:f32[4] = reshape[shape=(4,)] b
          in (c,) }""")
    same_values(before, after, X)
    # a reshape that strides can express joins the chain
    more = passes.dce(passes.fold_views(program(lambda x: x[:, 1:].T.reshape(2, 2, 1), X)))
    assert [e.prim.name for e in more.eqns] == ["view"]
    same_values(program(lambda x: x[:, 1:].T.reshape(2, 2, 1), X), more, X)


def test_fuse_makes_one_kernel_of_an_elementwise_chain_and_its_reduction():
    before = program(lambda x: nx.sum(nx.exp(nx.sin(x) * 2.0), axis=1), X)
    after = passes.fuse(before)
    assert str(after) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[2] = fused[kernel={shape=(2, 3) ops=[sin mul exp] reduce=[reduce_sum]}] a
          in (b,) }""")
    same_values(before, after, X)


def test_fuse_reads_views_and_broadcasts_through_strides():
    f = lambda x, c: nx.tanh(x.T * 3.0 + c[:2])  # noqa: E731
    before = passes.fold_views(program(f, X, C))
    after = passes.dce(passes.fuse(before))
    assert [e.prim.name for e in after.eqns] == ["fused"]
    assert "ops=[mul add tanh]" in str(after)
    same_values(program(f, X, C), after, X, C)


def test_fuse_stops_at_non_elementwise_ops_and_reductions_it_reads():
    f = lambda x: nx.softmax(nx.exp(x) @ nx.ones((3, 3)) * 2.0, axis=1)  # noqa: E731
    before = passes.fold_views(passes.simplify(program(f, X)))
    after = passes.dce(passes.fuse(before))
    names = [e.prim.name for e in after.eqns]
    assert names.count("matmul") == 1 and names.count("fused") >= 2
    # no equation reads a value defined after it (the order is topological)
    defined = set(after.in_vars)
    for e in after.eqns:
        assert all(not hasattr(x, "id") or x in defined for x in e.ins)
        defined.update(e.outs)
    same_values(program(f, X), after, X, rtol=1e-5)


def test_fuse_leaves_single_operations_alone():
    before = program(lambda x: x @ nx.sin(nx.ones((3, 2))), X)
    assert "fused" not in str(passes.fuse(before))


def test_plan_buffers_reuses_dead_memory_of_equal_type():
    big = nx.asarray(np.ones((64, 64), np.float32))
    f = lambda a: (a @ a) @ a + 1.0  # noqa: E731
    prog = passes.lower(passes.simplify(program(f, big)))
    assert [e.prim.name for e in prog.eqns] == ["matmul", "matmul", "add"]
    plan = passes.plan_buffers(prog)
    m1, m2, add = prog.eqns
    assert plan.get(m2.outs[0]) is None             # a matmul never writes over its operand
    assert plan.get(add.outs[0]) is m2.outs[0]      # the add writes over the dead product
    assert m1.outs[0] not in plan
    np.testing.assert_allclose(run(prog, big)[0], np.asarray(f(big)), rtol=1e-6)


def test_plan_buffers_never_writes_over_inputs_unless_donated():
    prog = passes.lower(program(lambda a: nx.sin(a) * 2.0 + 1.0, X))
    assert passes.plan_buffers(prog) == {}
    donated = passes.plan_buffers(prog, donate=(0,))
    assert list(donated.values()) == [prog.in_vars[0]]
    arr = X._np().copy()
    out = compile_program(prog, donated)(arr)[0]
    assert np.shares_memory(out, arr)
    np.testing.assert_allclose(out, np.sin(X._np()) * 2 + 1, rtol=1e-6)


def test_pipeline_optimize_is_the_passes_in_order():
    from nx_rune.compiler.pipeline import PASSES, optimize
    assert PASSES == [passes.simplify, passes.cse, passes.fold_constants, passes.dce]
    f = lambda x: nx.sum(nx.sin(x) * 1.0 + nx.sin(x) * (C * 0 + 2))  # noqa: E731
    out = optimize(program(f, X))
    # x * 1 is gone, the two sin merged, C * 0 + 2 computed: one repeated value, broadcast
    # (stride 0), so the kernel holds it as a constant instead of reading an array
    assert str(out) == text("""
        { lambda ; a:f32[2,3]. let
            b:f32[] = fused[kernel={shape=(2, 3) ops=[sin mul add] reduce=[reduce_sum]}] a
          in (b,) }""")
    same_values(program(f, X), out, X, atol=1e-6)


def test_simplify_uses_uniform_constants_and_boolean_identities():
    from nx_rune import primitives as P
    from nx_rune.primitives import bind
    zeros = nx.asarray(np.zeros(3, bool))
    ones = nx.asarray(np.ones(3, bool))

    def f(x):
        m = x > 0.0
        a = nx.where(bind(P.and_p, m, zeros), 1.0, x)      # where(False, ...) -> x
        b = nx.where(bind(P.or_p, m, ones), a, -x)          # where(True, ...) -> a
        c = bind(P.xor_p, m, zeros)                          # m
        return nx.where(c, b ** nx.asarray(np.zeros(3)), b) + (-0.0)
    x = nx.asarray(np.array([-1.0, 0.5, 2.0]))
    before = program(f, x)
    after = passes.dce(passes.simplify(passes.fold_constants(before)))
    assert str(after) == text("""
        { lambda ; a:f64[3]. let
            b:bool[3] = cmplt 0.0:f64[3] a
            c:f64[3] = where b 1.0:f64[3] a
          in (c,) }""")
    same_values(before, after, x)


def test_optimize_collapses_a_hessian_program():
    from nx_rune.compiler.pipeline import optimize
    f = lambda x: nx.sum(nx.sin(x) * x ** 2)  # noqa: E731
    x = nx.asarray(np.linspace(-1, 1, 3))
    prog = nx.make_jaxpr(nx.hessian(f))(x).program
    out = optimize(prog)
    names = [e.prim.name for e in out.eqns]
    # hessian is one batched pass (vmap of jvp over the gradient): ~90 equations become two
    # fused kernels (elementwise on x, on the (3, 3) products; the pow's exponent 2 - 1 is
    # folded to a broadcast constant, so simplify drops the pow and its zero guard) and a view
    assert len(prog.eqns) > 80 and names.count("fused") == 2 and "pow" not in str(out)
    assert len(out.eqns) == 3
    np.testing.assert_allclose(run(out, x)[0], np.asarray(nx.hessian(f)(x)), rtol=1e-13)


def test_absorb_concat_writes_kernel_results_in_place():
    x = nx.asarray(np.linspace(-1, 1, 5))

    def f(x):
        return nx.stack([nx.sin(x) * 2, nx.exp(x) + 1, x * x], axis=1)
    before = passes.dce(passes.fuse(passes.fold_views(passes.simplify(program(f, x)))))
    assert [e.prim.name for e in before.eqns][-1] == "cat"
    after = passes.absorb_concat(before)
    assert str(passes.dce(after)) == text("""
        { lambda ; a:f64[5]. let
            b:f64[5,3] = fused[kernel={shape=(5,) ops=[sin mul exp add mul]}] a
          in (b,) }""")
    same_values(program(f, x), passes.dce(after), x)
    g = lambda x: nx.concatenate([nx.sin(x) * 2, nx.cos(x) * 3], axis=0)  # noqa: E731
    out = passes.lower(passes.simplify(program(g, x)))
    assert [e.prim.name for e in out.eqns] == ["fused"]
    same_values(program(g, x), out, x)


def test_absorb_concat_leaves_other_concatenations_alone():
    x = nx.asarray(np.linspace(-1, 1, 5))
    cases = [
        lambda x: nx.stack([nx.sin(x) * 2, x], axis=1),                 # an input as a part
        lambda x: (nx.stack([nx.sin(x) * 2, nx.exp(x) + 1]), nx.sin(x) * 2),  # used twice
        lambda x: nx.stack([nx.sin(x) * 2, nx.sin(x) * 2]),             # one value twice
    ]
    for f in cases:
        out = passes.lower(passes.cse(passes.simplify(program(f, x))))
        assert "cat" in str(out)
        same_values(program(f, x), out, x)


def test_fold_constants_keeps_large_broadcast_constants_broadcast():
    # grad(sum(y ** 2)) traces ``pow y (2.0 + -1.0)`` with both constants broadcast to y's
    # (8, 32, 32, 32): folding the add on the whole array made a 262144-element literal whose
    # repeated value simplify could not see, so the jitted gradient ran a float pow per element
    # (powf of a negative base is glibc's slow path: 20-30 ms against 0.2 ms eagerly)
    from nx_rune.compiler.pipeline import optimize
    y = nx.asarray(np.random.default_rng(0).standard_normal((8, 32, 32, 32)).astype(np.float32))
    out = optimize(program(nx.grad(lambda y: nx.sum(y ** 2)), y))
    assert str(out) == text("""
        { lambda ; a:f32[8,32,32,32]. let
            b:f32[8,32,32,32] = mul 2.0:f32[8,32,32,32] a
          in (b,) }""")
    np.testing.assert_array_equal(run(out, y)[0], 2 * y._np())
    # the folded value is one broadcast element, as the operands were
    two = nx.asarray(np.float32(2.0))
    folded = passes.fold_constants(program(
        lambda y: y * (nx.broadcast_to(two, y.shape) + nx.broadcast_to(-two, y.shape)), y))
    lit = [x for e in folded.eqns for x in e.ins if not hasattr(x, "id")]
    assert len(lit) == 1 and lit[0].array().strides == (0, 0, 0, 0) and lit[0].scalar() == 0.0


def test_jit_grad_of_integer_power_matches_eager():
    y = nx.asarray(np.linspace(-2, 2, 8 * 32 * 32 * 32, dtype=np.float32).reshape(8, 32, 32, 32))
    for k in (1, 2, 3, 4):
        f = nx.grad(lambda y, k=k: nx.sum(y ** k))
        np.testing.assert_allclose(np.asarray(nx.jit(f)(y)), k * y._np() ** (k - 1),
                                   rtol=2e-6, atol=0)
