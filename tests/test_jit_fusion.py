"""The fused-kernel VM (nx_rune._kernels.fusion) and the fusion pass: random elementwise chains
over views, broadcasts and reductions (every layout the VM stages or segments), compared with
eager results; the kernel's own argument checks."""
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from nx_rune._kernels import fusion as F


def t(a):
    return nx.asarray(np.ascontiguousarray(a))


UNARY = [nx.sin, nx.exp, nx.tanh, nx.abs, lambda v: v * 0.5, lambda v: -v,
         lambda v: nx.where(v > 0.1, v, v * 2.0), nx.square]
BINARY = [nx.add, nx.multiply, nx.maximum, nx.subtract, lambda a, b: a / (nx.abs(b) + 1.0)]
REDUCE = [nx.sum, nx.max, nx.min, nx.prod, nx.mean]


@st.composite
def programs(draw):
    nd = draw(st.integers(1, 3))
    big = draw(st.booleans())
    shape = tuple(draw(st.integers(1, 5 if not big else 40)) for _ in range(nd))
    if big and draw(st.booleans()):
        shape = shape[:-1] + (draw(st.sampled_from([300, 700, 1500])),)
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    n_ops = draw(st.integers(1, 6))
    ops = [(draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, len(BINARY) - 1)),
            draw(st.booleans())) for _ in range(n_ops)]
    # the second operand's layout: plain, transposed, flipped, broadcast from a size-1 axis
    layout = draw(st.sampled_from(["plain", "transposed", "flipped", "row", "column", "scalar"]))
    red = draw(st.sampled_from([None] + list(range(len(REDUCE)))))
    axis = None
    if red is not None and draw(st.booleans()):
        axis = tuple(sorted(draw(st.sets(st.integers(0, nd - 1), min_size=1))))
    keep = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    return shape, dtype, ops, layout, red, axis, keep, seed


def _operand(y, layout, shape):
    if layout == "transposed":
        return nx.transpose(y)
    if layout == "flipped":
        return nx.flip(y, 0)
    if layout == "row":
        return nx.broadcast_to(y[..., :1], shape) if len(shape) else y
    if layout == "column":
        return nx.broadcast_to(y[:1], shape)
    if layout == "scalar":
        return nx.broadcast_to(nx.sum(y) * 0.1, shape)
    return y


@settings(max_examples=120, deadline=None)
@given(programs())
def test_random_fused_programs_match_eager(prog):
    shape, dtype, ops, layout, red, axis, keep, seed = prog
    rng = np.random.default_rng(seed)
    x = t(rng.uniform(-1, 1, shape).astype(dtype))
    yshape = tuple(reversed(shape)) if layout == "transposed" else shape
    y = t(rng.uniform(-1, 1, yshape).astype(dtype))

    def f(x, y):
        b = _operand(y, layout, shape)
        v = x
        for u, k, use_b in ops:
            v = UNARY[u](v)
            if use_b:
                v = BINARY[k](v, b)
        if red is not None:
            if REDUCE[red] is nx.prod:
                v = nx.tanh(v) * 0.5 + 1.0         # keep products in range
            v = REDUCE[red](v, axis=axis, keepdims=keep)
        return v, v * 2.0

    want = f(x, y)
    got = nx.jit(f)(x, y)
    tol = 2e-5 if dtype == np.float32 else 1e-11
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_, np.complex64,
                                   np.complex128, np.float16])
def test_other_dtypes_fuse_or_fall_back_correctly(dtype):
    rng = np.random.default_rng(1)
    if np.dtype(dtype).kind == "c":
        a = rng.normal(size=(6, 7)) + 1j * rng.normal(size=(6, 7))
    elif dtype == np.bool_:
        a = rng.random((6, 7)) > 0.5
    else:
        a = rng.integers(0, 5, (6, 7))
    x = t(a.astype(dtype))

    def f(x):
        if dtype == np.bool_:
            return x & (~x | x), nx.sum(nx.astype(x, nx.int32), axis=1)
        y = x * x + x
        wide = nx.complex128 if np.dtype(dtype).kind == "c" else nx.float64
        return y, nx.sum(y, axis=0), nx.astype(y, wide) * 0.5
    for g, w in zip(nx.jit(f)(x), f(x)):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-3)


def test_casts_between_dtypes_in_one_kernel():
    x = t(np.linspace(-3, 3, 13))

    def f(x):
        i = nx.astype(x * 2.5, nx.int32)
        return nx.astype(i, nx.float32) * 0.5 + nx.astype(x > 0, nx.float32), nx.astype(
            x, nx.complex128) * 2
    for g, w in zip(nx.jit(f)(x), f(x)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_long_rows_and_many_blocks():
    rng = np.random.default_rng(2)
    x = t(rng.normal(size=(3, 5000)).astype(np.float32))
    b = t(rng.normal(size=(5000,)).astype(np.float32))
    f = lambda x, b: nx.softmax(x * 2.0 + b, axis=-1).sum(0)  # noqa: E731
    np.testing.assert_allclose(np.asarray(nx.jit(f)(x, b)), np.asarray(f(x, b)), rtol=1e-5,
                               atol=1e-7)
    g = lambda x: nx.sum(nx.exp(nx.sin(x)), axis=0)  # noqa: E731
    np.testing.assert_allclose(np.asarray(nx.jit(g)(x)), np.asarray(g(x)), rtol=1e-5)


def test_nan_and_inf_propagate_like_numpy():
    x = t(np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0]]))
    f = lambda x: (nx.max(x * 1.0, axis=1), nx.sum(x * 2.0, axis=0), nx.nanmax(x + 0.0, axis=1))  # noqa: E731
    for g, w in zip(nx.jit(f)(x), f(x)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


# -- the kernel API --------------------------------------------------------------------------------

def _loops():
    add = F.ufunc_loop(np.add, ["f8"] * 3)
    sin = F.ufunc_loop(np.sin, ["f8", "f8"])
    return add, sin


def test_kernel_runs_a_hand_written_program():
    add, sin = _loops()
    mul = F.ufunc_loop(np.multiply, ["f8"] * 3)
    # out = sin(x) * 0.5 + y, and its sum; registers: x 0, y 1, const 2, temp 3, outs 4, 5
    k = F.Kernel((10,), 0, [((8,), 0, 0, 8), ((8,), 0, 0, 8)], [struct.pack("d", 0.5)], [8],
                 [((8,), 0, 8, 0, -1, None), ((0,), 0, 8, 1, 4, add)],
                 [(sin, (0, 3)), (mul, (3, 2, 3)), (add, (3, 1, 4))])
    x, y = np.linspace(0, 1, 10), np.linspace(1, 2, 10)
    o, s = np.empty(10), np.empty(())
    k.run((x, y), (o, s))
    np.testing.assert_allclose(o, np.sin(x) * 0.5 + y, rtol=1e-15)
    np.testing.assert_allclose(s, o.sum(), rtol=1e-14)


def test_kernel_checks_its_program_and_arrays():
    add, sin = _loops()
    ok_in = [((8,), 0, 0, 8)]
    with pytest.raises(ValueError, match="1 to 8 dims"):
        F.Kernel((), 0, ok_in, [], [], [], [])
    with pytest.raises(ValueError, match="dims must be >= 1"):
        F.Kernel((0,), 0, ok_in, [], [], [], [])
    with pytest.raises(ValueError, match="seg"):
        F.Kernel((2, 6), 4, ok_in, [], [], [], [])
    with pytest.raises(ValueError, match="register 7 out of range"):
        F.Kernel((4,), 0, ok_in, [], [], [((8,), 0, 8, 0, -1, None)], [(sin, (0, 7))])
    with pytest.raises(ValueError, match="cannot write an input"):
        F.Kernel((4,), 0, ok_in, [], [], [((8,), 0, 8, 0, -1, None)], [(sin, (1, 0))])
    with pytest.raises(ValueError, match="reach before"):
        F.Kernel((4,), 0, [((-8,), 0, 0, 8)], [], [], [((8,), 0, 8, 0, -1, None)],
                 [(sin, (0, 1))])
    with pytest.raises(ValueError, match="stride 0"):
        F.Kernel((4,), 0, ok_in, [], [], [((0,), 0, 8, 0, -1, None)], [(sin, (0, 1))])
    k = F.Kernel((4,), 0, ok_in, [], [], [((8,), 0, 8, 0, -1, None)], [(sin, (0, 1))])
    with pytest.raises(ValueError, match="1 inputs and 1 outputs"):
        k.run((), ())
    with pytest.raises(ValueError, match="input 0 holds 16 bytes"):
        k.run((np.zeros(2),), (np.zeros(4),))
    with pytest.raises(ValueError, match="output 0 holds"):
        k.run((np.zeros(4),), (np.zeros(3),))
    ro = np.zeros(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        k.run((np.zeros(4),), (ro,))
    out = np.zeros(4)
    k.run((np.arange(8.0)[::2],), (out,))        # a strided input is made contiguous
    np.testing.assert_allclose(out, np.sin(np.arange(8.0)[::2]))


def test_loop_lookups():
    assert F.ufunc_loop(np.add, ["f4"] * 3) is not None
    assert F.ufunc_loop(np.negative, ["?", "?"]) is None        # NumPy has no such loop
    with pytest.raises(ValueError, match="takes 3 operands"):
        F.ufunc_loop(np.add, ["f4"])
    with pytest.raises(TypeError, match="ufunc"):
        F.ufunc_loop(np.sum, ["f4"])
    assert F.cast_loop(np.float64, np.int32) is not None
    assert F.cast_loop(np.float64, np.uint8) is None            # NumPy's rules, not C's
    assert F.cast_loop(np.complex64, np.float32) is None
    assert F.cast_loop(np.float16, np.float32) is None
    assert F.where_loop(8) is not None and F.where_loop(3) is None
    assert F.segment_loop("sum", np.float32) is not None
    assert F.segment_loop("sum", np.float16) is None


def test_strided_view_checks_bounds():
    a = np.arange(12.0)
    v = F.strided_view(a, (3, 2), (32, -8), 8)
    np.testing.assert_array_equal(v, [[1, 0], [5, 4], [9, 8]])
    assert not v.flags.writeable and np.shares_memory(v, a)
    with pytest.raises(ValueError, match="reaches outside"):
        F.strided_view(a, (3, 2), (32, 8), 40)
    with pytest.raises(ValueError, match="reaches outside"):
        F.strided_view(a, (2,), (-8,), 0)
    np.testing.assert_array_equal(F.strided_view(a[::2], (2,), (8,), 0), [0, 2])


@pytest.mark.parametrize("shape,axis", [((1 << 19,), None), ((512, 1024), 1),
                                        ((1 << 18, 10), 1), ((700, 600), 0)])
def test_threaded_kernels_give_the_single_threaded_bits(shape, axis):
    from nx_rune._kernels import threefry as KT
    rng = np.random.default_rng(3)
    x = t(rng.normal(size=shape).astype(np.float32))

    def f(x):
        y = nx.tanh(x * 0.8 + 0.1) * x
        return y, (nx.sum(y, axis=axis) if axis is not None else nx.exp(y))
    old = KT.get_num_threads()
    try:
        outs = []
        for n in (1, 2, 3):
            KT.set_num_threads(n)
            outs.append([np.asarray(o) for o in nx.jit(f)(x)])
    finally:
        KT.set_num_threads(old)
    for other in outs[1:]:
        for a, b in zip(outs[0], other):
            np.testing.assert_array_equal(a, b)
    want = f(x)
    np.testing.assert_allclose(outs[0][0], np.asarray(want[0]), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], np.asarray(want[1]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (1, 6), (2000,)])
def test_stacks_and_concatenations_of_kernel_results(shape):
    rng = np.random.default_rng(4)
    x = t(rng.normal(size=shape))
    for axis in range(-len(shape) - 1, len(shape) + 1):
        def f(x):
            parts = [nx.sin(x) * 2, nx.exp(x) - 1, x * x]
            out = [nx.stack(parts, axis=axis)]
            if -len(shape) <= axis < len(shape):
                out.append(nx.concatenate(parts, axis=axis))
            return out
        for g, w in zip(nx.jit(f)(x), f(x)):
            assert g.shape == w.shape
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_family_fuses_into_one_kernel_with_numpy_values(dtype):
    """The Array API elementwise functions that are one NumPy ufunc run in the
    fused VM: a chain of them is one kernel, with NumPy's values."""
    rng = np.random.default_rng(4)
    a = rng.uniform(-0.9, 0.9, (64, 33)).astype(dtype)
    b = rng.uniform(0.5, 2.0, (64, 33)).astype(dtype)

    def f(x, y):
        u = nx.tan(x) + nx.arcsin(x) * nx.arccos(x) - nx.arctan(y)
        u = nx.sinh(u * 0.1) + nx.cosh(x) + nx.arcsinh(y) + nx.arccosh(y + 1.0)
        u = u + nx.arctanh(x) + nx.log10(y) + nx.deg2rad(x) - nx.rad2deg(x) * 0.01
        u = u + nx.floor(y * 3) - nx.ceil(x * 3) + nx.round(y * 3) + nx.trunc(x * 5)
        u = u + nx.arctan2(x, y) + nx.hypot(x, y) + nx.copysign(y, x)
        return nx.logaddexp(u, x) + nx.logaddexp2(y, u) + nx.nextafter(x, y)

    def ref(x, y):
        u = np.tan(x) + np.arcsin(x) * np.arccos(x) - np.arctan(y)
        u = np.sinh(u * dtype(0.1)) + np.cosh(x) + np.arcsinh(y) + np.arccosh(y + dtype(1))
        u = u + np.arctanh(x) + np.log10(y) + np.deg2rad(x) - np.rad2deg(x) * dtype(0.01)
        u = u + np.floor(y * 3) - np.ceil(x * 3) + np.rint(y * 3) + np.trunc(x * 5)
        u = u + np.arctan2(x, y) + np.hypot(x, y) + np.copysign(y, x)
        return np.logaddexp(u, x) + np.logaddexp2(y, u) + np.nextafter(x, y)

    from nx_rune.compiler.pipeline import optimize
    prog = optimize(nx.make_jaxpr(f)(t(a), t(b)).program)
    assert [e.prim.name for e in prog.eqns] == ["fused"], str(prog)
    got = nx.jit(f)(t(a), t(b))
    assert got.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(np.asarray(got), ref(a, b), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(got), np.asarray(f(t(a), t(b))), rtol=tol, atol=tol)


def test_complex_expm1_is_not_fused_as_numpys_loop():
    """expm1's implementation gives C99's values at complex zeros and non-finite values, where
    NumPy's complex loop gives nan parts: under jit the implementation runs."""
    z = t(np.array([0j, complex(-0.0, 0.0), complex(np.inf, 0.0), complex(0.5, 0.25)]))
    f = lambda z: nx.expm1(nx.conj(nx.conj(z)))  # noqa: E731
    got, want = np.asarray(nx.jit(f)(z)), np.asarray(f(z))
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.expm1(z.numpy())[2].imag) and want[2] == complex(np.inf, 0.0)
    np.testing.assert_array_equal(got.real, want.real)
    np.testing.assert_array_equal(got.imag, want.imag)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape", [(2 ** 20 + 37,), (1031, 517), (3, 5, 40000)])
def test_threaded_kernels_share_the_work_exactly(threads, shape):
    """Kernels over >= 2**18 elements share their rows/blocks between threads (chunks taken in
    turn): every element is computed once, for any thread count and uneven sizes."""
    from nx_rune._kernels import threefry
    rng = np.random.default_rng(5)
    x = t(rng.standard_normal(shape).astype(np.float32))
    f = lambda x: nx.tanh(x * 0.5 + 1.0) * x  # noqa: E731
    jf = nx.jit(f)
    old = threefry.get_num_threads()
    threefry.set_num_threads(threads)
    try:
        got = np.asarray(jf(x))
    finally:
        threefry.set_num_threads(old)
    np.testing.assert_array_equal(got, np.asarray(f(x)))


def test_threaded_kernels_from_concurrent_threads_share_one_pool():
    """Threaded kernels take their workers from the kernels' one pool (the random draws'):
    calls from several Python threads at once, with large draws in between, each get their
    own exact results (a call that finds the pool busy runs in its own thread)."""
    import threading

    from nx_rune._kernels import threefry
    rng = np.random.default_rng(6)
    xs = [t(rng.standard_normal(2 ** 19 + 11 * k).astype(np.float32)) for k in range(4)]
    f = lambda x: nx.tanh(x * 0.5 + 1.0) * x  # noqa: E731
    jf = nx.jit(f)
    want = [np.asarray(f(x)) for x in xs]
    key = nx.random.key(3)
    draw = np.asarray(nx.random.normal(key, (2 ** 19,)))
    bad = []

    def work(k):
        for _ in range(5):
            if not np.array_equal(np.asarray(jf(xs[k])), want[k]):
                bad.append(("kernel", k))
            if not np.array_equal(np.asarray(nx.random.normal(key, (2 ** 19,))), draw):
                bad.append(("draw", k))

    old = threefry.get_num_threads()
    threefry.set_num_threads(2)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        threefry.set_num_threads(old)
    assert bad == []


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_predicates_fuse_with_numpys_values(dtype):
    # isfinite/isnan/isinf/signbit are one ufunc each: they join the kernel around them
    # (logsumexp's guard on its max: isfinite then where)
    x = np.array([0.5, -0.0, 0.0, np.inf, -np.inf, np.nan, -2.0, 3.0] * 40, dtype)

    def f(x):
        return (nx.where(nx.isfinite(x), x * 2, 0), nx.isnan(x * 1), nx.isinf(x + 1),
                nx.signbit(x - 0), nx.logsumexp(nx.reshape(x, (40, 8)), -1))
    jf = nx.jit(f)
    text = jf.lower(nx.asarray(x)).compile().as_text()
    if dtype != np.float16:         # (float16 programs are not fused: NumPy's calls)
        assert "fused" in text and not any(f" = {p} " in text for p in
                                           ("isfinite", "isnan", "isinf", "signbit"))
    with np.errstate(invalid="ignore"):
        for got, want in zip(jf(nx.asarray(x)), f(nx.asarray(x))):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(jf(nx.asarray(x))[0]),
                                  np.where(np.isfinite(x), x * 2, 0).astype(dtype))
