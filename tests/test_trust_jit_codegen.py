"""jit's code generation keeps the eager function's values and memory.

* Register allocation of the fused kernels: a value read twice by the instruction that reads
  it last (``d * d``) frees its temporary once, so no two live values share one.
* Buffer planning: a result is written into memory only when nothing read later needs its old
  value (in the kernel's own instruction order, through any alias, including the results of
  ``lax`` loops and implementations that may return their operand) and the memory is
  C-contiguous (a transposed argument makes NumPy's results Fortran-ordered).
* Outputs: an output shares memory with an argument or with another output exactly when the
  eager function's does, and is writeable exactly when the eager one is.
* View folding: views at offsets, with negative strides and ``as_strided`` equal eager views
  inside compiled programs.

Elementwise programs run NumPy's own inner loops (and, for + - * /, the VM's own loops that
give NumPy's values bit for bit: tests/test_jit_arith_chains.py), so they are compared with eager
bit for bit; programs with products and reductions, whose sums may be ordered differently,
within float tolerance.
"""
import itertools

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.compiler import pipeline

DTYPES = [np.float32, np.float64]


def t(a):
    return nx.asarray(a)


def _tuple(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep].view(np.uint8), want[keep].view(np.uint8))


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 2e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def jit_equals_eager(f, *args, exact=True):
    """jit(f)(*args) equals f(*args) (bit for bit when ``exact``), and leaves the arguments
    unchanged."""
    before = [np.array(a) for a in args]
    want = _tuple(f(*args))
    got = _tuple(nx.jit(f)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        (_same_bits if exact else _close)(g, w)
    for a, b in zip(args, before):
        _same_bits(a, b)
    return got


def _rng_args(dtype, n, k=2, seed=0):
    rng = np.random.default_rng(seed)
    return [t(rng.uniform(-2, 2, n).astype(dtype)) for _ in range(k)]


# -- register allocation: values read more than once by their last reader --------------------------

@pytest.mark.parametrize("n", [7, 1000, 4099])
@pytest.mark.parametrize("dtype", DTYPES)
def test_square_at_last_use_leaves_later_values_their_own_registers(dtype, n):
    # the repro: d's temporary was freed twice (once per operand of d * d), so sin(x)
    # and cos(y) got the same one and the product came out cos(y) * cos(y)
    x, y = _rng_args(dtype, n)

    def f(x, y):
        d = x - y
        sq = d * d
        return sq, nx.sin(x) * nx.cos(y)

    jit_equals_eager(f, x, y)


@pytest.mark.parametrize("dtype", DTYPES)
def test_minimum_after_a_square_read_twice(dtype):
    x, y = _rng_args(dtype, 1000)
    jit_equals_eager(lambda x, y: (lambda d: (d * d, nx.minimum(d * d, x)))(x - y), x, y)
    jit_equals_eager(lambda x, y: (lambda sq: (sq, nx.minimum(sq, x * y), nx.sin(x)))(
        (x - y) * (x - y)), x, y)


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (nx.abs(b) + 1.0), "max": nx.maximum, "min": nx.minimum,
    "where": lambda a, b: nx.where(a > b, a, b), "hypot": nx.hypot,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op1,op2", list(itertools.product(sorted(BINARY), repeat=2)))
def test_every_pair_of_ops_with_a_repeated_operand(op1, op2, dtype):
    # op2 reads d twice where d dies; then values that need two registers at once
    f1, f2 = BINARY[op1], BINARY[op2]
    x, y = _rng_args(dtype, 777, seed=len(op1) * 7 + len(op2))

    def f(x, y):
        d = f1(x, y)
        s = f2(d, d)
        return s, nx.sin(x) * nx.cos(y), f1(s, x) - nx.exp(y * 0.5)

    jit_equals_eager(f, x, y)


@pytest.mark.parametrize("dtype", DTYPES)
def test_three_operand_ops_and_chains_with_repeated_operands(dtype):
    x, y, z = _rng_args(dtype, 1500, 3)

    def f(x, y, z):
        d = x * y
        c = nx.clip(d, d, d)                # three operands, one value
        w = nx.where(d > 0, d, d)
        e = d * d * d - d                   # a chain reading d at every step
        g = (x - x) * z + (y / y)
        return c, w, e, g, nx.tanh(x) + nx.sin(z) * nx.cos(y)

    jit_equals_eager(f, x, y, z)


UNARY = [nx.sin, nx.cos, nx.tanh, nx.exp, lambda v: v * 0.5 + 1.0, nx.negative, nx.abs,
         lambda v: nx.sqrt(nx.abs(v))]


def _random_program(seed):
    """A random elementwise DAG over two inputs: values reused, read twice by one operation,
    several outputs (the values' indices)."""
    rng = np.random.default_rng(seed)
    steps = []
    n_values = 2
    for _ in range(int(rng.integers(4, 12))):
        if rng.random() < 0.35:
            steps.append(("u", int(rng.integers(len(UNARY))), int(rng.integers(n_values))))
        else:
            a = int(rng.integers(n_values))
            b = a if rng.random() < 0.4 else int(rng.integers(n_values))
            steps.append(("b", sorted(BINARY)[int(rng.integers(len(BINARY)))], a, b))
        n_values += 1
    outs = sorted(set(int(i) for i in rng.integers(2, n_values, int(rng.integers(1, 4)))))
    return steps, outs


def _run_program(steps, outs, x, y):
    vals = [x, y]
    for s in steps:
        if s[0] == "u":
            vals.append(UNARY[s[1]](vals[s[2]]))
        else:
            v = BINARY[s[1]](vals[s[2]], vals[s[3]])
            # keep magnitudes bounded so that exp and products stay finite
            vals.append(nx.tanh(v) if s[1] in ("mul", "hypot") else v)
    return tuple(vals[i] for i in outs) + (nx.sin(x) * nx.cos(y),)


@pytest.mark.parametrize("seed", range(60))
def test_random_elementwise_programs_with_reused_values(seed):
    steps, outs = _random_program(seed)
    dtype = DTYPES[seed % 2]
    x, y = _rng_args(dtype, [5, 1000, 3000][seed % 3], seed=seed)
    jit_equals_eager(lambda x, y: _run_program(steps, outs, x, y), x, y)


# -- buffer planning: in-place writes -------------------------------------------------------------

def _mm_args(dtype, m=8, k=16, n=32, seed=0):
    rng = np.random.default_rng(seed)
    return (t(rng.standard_normal((m, k)).astype(dtype)),
            t((rng.standard_normal((k, n)) / 4).astype(dtype)),
            t(rng.standard_normal(n).astype(dtype)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_chain_reads_the_product_before_another_output_overwrites_it(dtype):
    # the repro: tanh(h) was written over h (its last reader in program order) while
    # the chain (h + b) * 2 (run where its last step was) still had to read h
    def f(x, w, b):
        h = x @ w
        s = h + b
        act = nx.tanh(h)
        return act, s * 2

    jit_equals_eager(f, *_mm_args(dtype), exact=False)


FIRST = {"add": lambda h, b: h + b, "mul": lambda h, b: h * 0.5, "sub": lambda h, b: b - h,
         "div": lambda h, b: h / 3.0}
MIDDLE = {
    "tanh": lambda h, b: nx.tanh(h), "scale": lambda h, b: h * 3.0, "exp": lambda h, b: nx.exp(h),
    "square": lambda h, b: h * h, "max": lambda h, b: nx.maximum(h, b),
    "where": lambda h, b: nx.where(h > 0, h, b), "shift": lambda h, b: h + 1.0,
}
FINISH = {"double": lambda s, b: s * 2.0, "affine": lambda s, b: s * 2.0 - 1.0,
          "bias": lambda s, b: s / 3.0 + b}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("first,middle,finish",
                         list(itertools.product(sorted(FIRST), sorted(MIDDLE), sorted(FINISH))))
def test_chains_interleaved_with_the_last_reader_of_a_product(first, middle, finish, dtype):
    # a chain's first step reads h before another output's equation (h's last reader in
    # program order) and its last step comes after it: the chain runs there, so that output
    # must not be written over h
    def f(x, w, b):
        h = x @ w
        s = FIRST[first](h, b)
        a = MIDDLE[middle](h, b)
        return a, FINISH[finish](s, b)

    jit_equals_eager(f, *_mm_args(dtype), exact=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_products_and_chains_reusing_dead_memory(dtype):
    x, w, b = _mm_args(dtype, 32, 32, 32)

    def f(x, w, b):
        h1 = nx.tanh(x @ w + b)
        h2 = h1 @ w
        s = h2 * 2.0 + h1
        r = nx.exp(h2 * 0.1) - s
        h3 = r @ w
        return s, r, h3 * h3 + r, nx.sum(h3 * s, axis=0)

    jit_equals_eager(f, x, w, b, exact=False)


def _loop_programs():
    def while_zero(F):
        return nx.lax.while_loop(lambda c: nx.sum(c) > 1e30, lambda c: c * 2, F)

    def cond_identity(F):
        return nx.lax.cond(nx.sum(F) > -1e30, lambda a: a, lambda a: a * 2, F)

    def fori_zero(F):
        return nx.lax.fori_loop(0, 0, lambda i, a: a * 2, F)

    return {"while": while_zero, "cond": cond_identity, "fori": fori_zero}


@pytest.mark.parametrize("kind", sorted(_loop_programs()))
def test_a_loop_returning_its_operand_keeps_that_memory_alive(kind):
    # a loop that runs no iteration (or a branch that returns its operand) returns the
    # operand's array itself: the planner must not hand that memory to a later result
    loop = _loop_programs()[kind]
    x = t(np.linspace(0, 1, 64).astype(np.float32))

    def f(x):
        F = nx.sin(x) * 2.0
        c = loop(F)
        G = x * nx.sum(c) + 1.0
        return c, G

    jit_equals_eager(f, x, exact=False)


def _layouts(base):
    """Arguments of every layout, each with the shape it has."""
    b = t(base)
    ro = base.copy()
    ro.flags.writeable = False
    return {
        "transposed": b.T, "steps": b[::2, ::3], "negative": b[::-1, ::-2],
        "offset": b[3:, 1:], "broadcast": nx.broadcast_to(b[0], (5,) + base.shape[1:]),
        "padded": nx.pad(b, 1), "zero_d": b[1, 2], "empty": b[:0], "row": b[2],
        "numpy_fortran": np.asfortranarray(base), "numpy_steps": base[1::2, ::-1],
        "numpy_readonly": ro, "contiguous": b,
    }


LAYOUT_FUNCTIONS = {
    "affine": (lambda a: a * 2 + 1, True),
    "tanh": (lambda a: nx.tanh(a * 2 + 1), True),
    "two": (lambda a: (a + 1, a * 3, nx.exp(a) - a), True),
    "self": (lambda a: a - a * 0.5, True),
    "sum": (lambda a: (nx.sum(a * a), a * a), False),
    "square": (lambda a: nx.exp(a) * a if a.ndim != 2 else
               (lambda m: (nx.tanh(m) + 1, m))(nx.exp(a) @ nx.exp(a).T), False),
}


@pytest.mark.parametrize("fname", sorted(LAYOUT_FUNCTIONS))
@pytest.mark.parametrize("layout", sorted(_layouts(np.zeros((12, 10)))))
def test_arguments_of_every_layout(layout, fname):
    base = np.random.default_rng(3).standard_normal((12, 10)).astype(np.float32)
    arg = _layouts(base)[layout]
    f, exact = LAYOUT_FUNCTIONS[fname]
    jit_equals_eager(f, arg if not isinstance(arg, np.ndarray) else t(arg), exact=exact)


def test_results_of_transposed_arguments_reused_by_a_kernel():
    # exp of a transposed argument is Fortran-ordered in NumPy; the kernel writing tanh(m) + 1
    # was given that memory and refused it ("output must be a writeable C-contiguous array")
    w = t(np.random.default_rng(0).random((16, 16)).astype(np.float32))

    def f(a):
        b = nx.exp(a)
        m = b @ b
        return nx.tanh(m) + 1, m

    jit_equals_eager(f, w.T, exact=False)
    jit_equals_eager(f, w[::-1], exact=False)


def test_large_kernels_writing_in_place_between_threads():
    x, w, b = _mm_args(np.float32, 512, 64, 512, seed=5)

    def f(x, w, b):
        h = x @ w
        return nx.tanh(h), (h + b) * 2, h * h

    jit_equals_eager(f, x, w, b, exact=False)


# -- outputs keep eager memory ------------------------------------------------------------------

def _memory_profile(f, make_args):
    """What can be observed of f's outputs' memory: which arguments and which other outputs
    each shares memory with, whether it is writeable, the object identity with an argument,
    and what a write through each output does to the arguments and the other outputs."""
    args = make_args()
    outs = _tuple(f(*args))
    arrs = [np.asarray(a._np() if isinstance(a, nx.Tensor) else a) for a in args]
    prof = []
    for k, o in enumerate(outs):
        oa = o.numpy()
        prof.append(("args", tuple(bool(np.shares_memory(oa, a)) for a in arrs)))
        prof.append(("outs", tuple(bool(np.shares_memory(oa, p.numpy()))
                                   for j, p in enumerate(outs) if j != k)))
        prof.append(("writeable", bool(oa.flags.writeable)))
        prof.append(("is_arg", tuple(o is a for a in args)))
    for k in range(len(outs)):
        args = make_args()
        outs = _tuple(f(*args))
        try:
            outs[k][...] = -7.0
            what = "written"
        except (ValueError, TypeError) as e:
            what = type(e).__name__
        prof.append((k, what, tuple(np.array(a).tobytes() for a in args),
                     tuple(np.array(p).tobytes() for p in outs)))
    return prof


def _args_fn(*shapes, layout=None):
    def make():
        out = []
        for i, s in enumerate(shapes):
            base = np.arange(np.prod(s), dtype=np.float32).reshape(s) * 0.25 + i
            if layout == "readonly":
                base.flags.writeable = False
            a = t(base)
            out.append(a.T if layout == "T" else a[1:] if layout == "offset" else
                       nx.broadcast_to(a[1], s) if layout == "broadcast" else
                       nx.pad(a, 1) if layout == "padded" else a)
        return out
    return make


ALIAS_FUNCTIONS = {
    # eagerly new memory
    "copy": lambda x: nx.copy(x),
    "method_copy": lambda x: x.copy(),
    "astype_same": lambda x: x.astype(x.dtype),
    "concatenate_one": lambda x: nx.concatenate([x]),
    "times_one": lambda x: x * 1.0,
    "one_times": lambda x: 1.0 * x,
    "divide_one": lambda x: x / 1.0,
    "plus_zero": lambda x: x + 0.0,
    "where_true": lambda x: nx.where(True, x, 0.0),
    "where_same": lambda x: nx.where(x > 0, x, x),
    "neg_neg": lambda x: -(-x),
    "max_self": lambda x: nx.maximum(x, x),
    "copy_of_view": lambda x: nx.copy(x.T),
    "flatten": lambda x: x.flatten(),
    "at_set": lambda x: x.at[0].set(5.0),
    "sum": lambda x: nx.sum(x, axis=0),
    "zeros": lambda x: nx.zeros_like(x),
    # eagerly views of the argument (writes reach it) or the argument itself
    "identity": lambda x: x,
    "transpose": lambda x: x.T,
    "reshape": lambda x: x.reshape(-1),
    "ravel": lambda x: x.ravel(),
    "slice": lambda x: x[1:],
    "steps": lambda x: x[::2, ::-1],
    "index": lambda x: x[1],
    "newaxis": lambda x: x[None],
    "broadcast": lambda x: nx.broadcast_to(x[0], (3,) + x.shape[1:]),
    "pad": lambda x: nx.pad(x, 1),
    "stop_gradient": lambda x: nx.stop_gradient(x),
    "as_strided": lambda x: nx.as_strided(x, (2, 2), (1, 1), 1),
    "moveaxis": lambda x: nx.moveaxis(x, 0, 1),
    # views of computed values
    "view_of_result": lambda x: (x * 2).T,
    "broadcast_result": lambda x: nx.broadcast_to(nx.sum(x, 0), (2,) + x.shape[1:]),
    "reshape_of_copy": lambda x: nx.copy(x).reshape(-1),
    # several outputs
    "same_twice": lambda x: (x, x),
    "arg_and_view": lambda x: (x, x.T),
    "two_copies": lambda x: (x.copy(), x.copy()),
    "two_equal_results": lambda x: (nx.sin(x), nx.sin(x)),
    "result_and_view": lambda x: (lambda a: (a, a.T, a[1:]))(x * 2),
    "result_twice": lambda x: (lambda a: (a, a))(nx.exp(x)),
    "folded_and_arg": lambda x: (x * 1.0, x),
    "arg_and_folded": lambda x: (x, x + 0.0, nx.where(True, x, 1.0)),
    "astype_and_copy": lambda x: (x.astype(x.dtype), x.copy(), x),
}


@pytest.mark.parametrize("layout", [None, "T", "offset", "readonly", "broadcast", "padded"])
@pytest.mark.parametrize("name", sorted(ALIAS_FUNCTIONS))
def test_outputs_share_memory_exactly_where_eager_outputs_do(name, layout):
    f = ALIAS_FUNCTIONS[name]
    make = _args_fn((4, 6), layout=layout)
    want = _memory_profile(f, make)
    got = _memory_profile(nx.jit(f), make)
    assert got == want


def test_writes_through_copies_do_not_reach_the_argument():
    # the list: each of these returned x's memory under jit, so y += 1 changed x
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    for f in (nx.copy, lambda x: x.astype(nx.float32), lambda x: nx.concatenate([x]),
              lambda x: x * 1.0, lambda x: nx.where(True, x, 0.0)):
        x = t(x0.copy())
        y = nx.jit(f)(x)
        assert not np.shares_memory(y.numpy(), x.numpy())
        y += 1
        _same_bits(x, x0)
        _same_bits(y, x0 + 1)


def test_two_outputs_of_one_value_are_not_made_one():
    x = t(np.ones((3, 3), np.float32))
    a, b = nx.jit(lambda x: (nx.sin(x), nx.sin(x)))(x)
    assert not np.shares_memory(a.numpy(), b.numpy())
    a += 1
    _same_bits(b, np.sin(np.ones((3, 3), np.float32)))


def test_views_of_arguments_are_eager_views():
    x = t(np.arange(12, dtype=np.float32).reshape(3, 4))
    v = nx.jit(lambda x: x.T)(x)
    v[0, 1] = 100.0                      # eagerly x.T[0, 1] is x[1, 0]
    assert float(x[1, 0]) == 100.0
    r = nx.jit(lambda x: x[1:].reshape(-1))(x)
    r[0] = -1.0
    assert float(x[1, 0]) == -1.0
    with pytest.raises(ValueError):
        nx.jit(lambda x: nx.broadcast_to(x[0], (2, 4)))(x)[0, 0] = 1.0


# -- view folding, traced --------------------------------------------------------------------------

VIEW_FUNCTIONS = {
    "as_strided_offset_source": lambda x: nx.as_strided(x.reshape(-1)[4:], (3, 4), (2, 1), 1) * 2,
    "as_strided_overlapping": lambda x: nx.as_strided(x.reshape(-1)[5:], (4, 3), (1, 1), 0) + 1,
    "as_strided_of_rows": lambda x: nx.sum(nx.as_strided(x[2:], (2, 3), (4, 2), 3), axis=1),
    "as_strided_of_flipped": lambda x: nx.as_strided(x[::-1], (3, 3), (3, 1), 2) - 1,
    "as_strided_of_transposed": lambda x: nx.as_strided(x.T, (2, 5), (5, 1), 1) * 3,
    "negative_steps": lambda x: x[::-1, ::-2] * 2 + x[::-1, 1::2],
    "flip_transpose_offset": lambda x: (x[2:, ::-1].T + 1.0) * x[1:7, :].T[::-1],
    "offset_rows_into_reduction": lambda x: nx.sum(x[3:, 1:] * x[3:, :-1], axis=0),
    "broadcast_row_at_offset": lambda x: x + x[4:5, :],
    "views_as_outputs": lambda x: (x[1:, ::-1] * 1.0, nx.flip(x, 0)[2:], x[::2].T),
    "reshape_of_slice": lambda x: (x[2:6].reshape(8, 4) * 2.0).reshape(4, 8)[1:, ::-1],
    "nested_offsets": lambda x: x[1:][1:][:, 1:][::-1][1:] * 5,
    "diagonal": lambda x: nx.diagonal(x[1:5]) + nx.diagonal(x[::-1][:4, ::-1]),
}


@pytest.mark.parametrize("name", sorted(VIEW_FUNCTIONS))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "offset"])
def test_folded_views_equal_eager(name, layout):
    base = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
    x = {"contiguous": t(base), "transposed": t(base.T.copy()).T,
         "offset": t(np.pad(base, ((2, 0), (0, 0))))[2:]}[layout]
    f = VIEW_FUNCTIONS[name]
    jit_equals_eager(f, x, exact="reduction" not in name and "rows" not in name)


def _folded_views(f, x):
    """(element strides, element offset) of every folded view in f's optimized program: the
    ``view`` equations and the views a fused kernel reads its inputs through."""
    prog = pipeline.optimize(nx.make_jaxpr(f)(x).program)
    out = []
    for e in prog.eqns:
        if e.prim.name == "view":
            out.append((tuple(e.params["strides"]), e.params["offset"]))
        elif e.prim.name == "fused":
            out.extend((tuple(st), off) for _, st, off in e.params["kernel"].inputs)
    return out


def test_view_folding_runs_in_the_traced_programs():
    # the programs above really are lowered to folded views, at offsets and with negative
    # strides (not left to NumPy's views or to copies)
    x = t(np.ones((8, 8), np.float32))
    assert ((2, 1), 5) in _folded_views(VIEW_FUNCTIONS["as_strided_offset_source"], x)
    assert any(min(st) < 0 for st, _ in _folded_views(VIEW_FUNCTIONS["negative_steps"], x))
    assert any(off > 0 and min(st) < 0
               for st, off in _folded_views(VIEW_FUNCTIONS["flip_transpose_offset"], x))
    assert any(off == 8 * 3 + 1 for _, off in
               _folded_views(VIEW_FUNCTIONS["offset_rows_into_reduction"], x))


def test_view_of_checks_bounds_and_follows_the_tensor_rules():
    from nx_rune._kernels.fusion import view_of
    a = np.arange(12.0).reshape(3, 4)[:, ::-1]         # negative strides
    v = view_of(a, (2, 2), (32, -16), -8)              # a[0:2, 1::2] as a view
    np.testing.assert_array_equal(v, a[0:2, 1::2])
    assert v.flags.writeable and np.shares_memory(v, a)
    v[0, 0] = -1.0
    assert a[0, 1] == -1.0
    assert not view_of(a, (3, 4), (32, 0), 0).flags.writeable     # a broadcast
    ro = a.copy()
    ro.flags.writeable = False
    assert not view_of(ro, (2,), (8,), 0).flags.writeable
    for shape, strides, offset in [((2,), (-8,), 0), ((4,), (32,), 0), ((2, 2), (32, 8), 64),
                                   ((1,), (8,), -8)]:
        with pytest.raises(ValueError, match="outside"):
            view_of(np.ascontiguousarray(a), shape, strides, offset)
    assert view_of(a, (0, 5), (8, 8), 10 ** 6).shape == (0, 5)      # no elements: no reach
