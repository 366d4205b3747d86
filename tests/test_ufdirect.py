"""NumPy's ufunc inner loops called directly (nx_rune/_kernels/ufdirect.pyx) give
NumPy's results bit for bit, and the Tensor's fast paths that use them (operators, the front
end's one-ufunc functions, bind with no transformation, the tape's backward steps) give what
NumPy gives on the same operands, silently, whatever the warnings filters and np.errstate say.

The reference is always the ufunc itself, called by NumPy on the same operands (its FP errors
ignored): that is what the general path (nx_rune/_kernels/quiet.py) returns."""
import warnings

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune._kernels import ufdirect as U
from nx_rune.tensor import RealUfunc

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
INEXACT = [np.float32, np.float64, np.complex64, np.complex128]


def values(shape, dtype, seed=0):
    """Random values of ``dtype`` with its special values first: extremes for integers;
    0, -0, inf, -inf, nan, the smallest subnormal, the largest finite for floats."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "b":
        flat = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        flat[:4] = [0, 1, info.max, info.min][:n] if n >= 4 else flat[:4]
    else:
        real = np.finfo(dt).dtype
        x = rng.uniform(-4, 4, n) + (1j * rng.uniform(-4, 4, n) if dt.kind == "c" else 0)
        flat = x.astype(dt)
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(real).smallest_subnormal,
                            np.finfo(real).max, -1.0]).astype(dt)
        k = min(n, len(special))
        flat[:k] = special[:k]
        if dt.kind == "c" and n > 8:
            flat[8] = complex(np.inf, np.nan)
    return flat.reshape(shape)


def numpy_result(ufunc, *args):
    with np.errstate(all="ignore"):
        r = ufunc(*args)
    return np.asarray(r)


def bits(got, want):
    """got equals want bit for bit (NaN payloads and zeros' signs too), same dtype and shape."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)


def has_exact_loop(ufunc, dtype):
    c = np.dtype(dtype).char
    return any(t.split("->")[0] == c * ufunc.nin for t in ufunc.types)


def constant(value_array, shape):
    """A stride-0 array of ``shape`` over the first element of ``value_array`` (what the
    tape's scalar constants are)."""
    base = value_array.reshape(-1)[:1].copy()
    return np.lib.stride_tricks.as_strided(base, shape, (0,) * len(shape))


SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 3, 5)]


# -- the kernel: every registered ufunc on every dtype ------------------------------------------

@pytest.mark.parametrize("ufunc", U.UFUNCS, ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_direct_loop_is_numpys_loop_bit_for_bit(ufunc, dtype):
    exact = has_exact_loop(ufunc, dtype)
    for k, shape in enumerate(SHAPES):
        a = values(shape, dtype, seed=k)
        if ufunc.nin == 1:
            cases = [(a,)]
            if a.size:
                cases.append((constant(a, shape),))
        else:
            b = values(shape, dtype, seed=k + 10)[::-1].copy() if shape else values(shape, dtype, 9)
            cases = [(a, b), (b, a), (a, a)]
            if a.size:
                cases += [(a, constant(b, shape)), (constant(b, shape), a)]
        for args in cases:
            got = U.call(ufunc, *args)
            if not exact:
                assert got is None      # NumPy casts first: its path
                continue
            assert got is not None and got.flags.c_contiguous and type(got) is np.ndarray
            bits(got, numpy_result(ufunc, *args))


@pytest.mark.parametrize("dtype", INEXACT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("scalar", [0.9, -0.0, 1e-40, np.inf, -np.inf, np.nan, 3, -7, 2 ** 53,
                                    -(2 ** 53), 1e38, 3.4028234663852886e38])
def test_python_scalars_convert_as_numpys_weak_scalars(dtype, scalar):
    a = values((9,), dtype, seed=3)
    for ufunc in (np.add, np.subtract, np.multiply, np.true_divide, np.less, np.maximum):
        got = U.call(ufunc, a, scalar=scalar)
        assert got is not None
        bits(got, numpy_result(ufunc, a, scalar))
        got = U.call(ufunc, a, scalar=scalar, reflected=True)
        bits(got, numpy_result(ufunc, scalar, a))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_scalars_beyond_float32_take_numpys_path(dtype):
    """A float beyond float32's range, or an int beyond 2**53 (NumPy may round it twice), is
    left to NumPy (None), which decides about the overflow."""
    a = values((4,), dtype)
    for s in (1e39, -1e300, 3.4028235677973366e38, 2 ** 53 + 1, -(2 ** 60), 2 ** 70):
        assert U.call(np.multiply, a, scalar=s) is None
    assert U.call(np.multiply, a, scalar=np.float64(2.0)) is None   # not a Python number
    assert U.call(np.multiply, a, scalar=True) is None


def test_operands_the_direct_path_refuses():
    a = values((6,), np.float64)
    b = values((6,), np.float64, seed=1)
    assert U.call(np.add, a[::2], b[::2]) is None                    # not contiguous
    assert U.call(np.add, a[::-1], b) is None                        # negative stride
    assert U.call(np.sin, values((3, 4), np.float64).T) is None     # Fortran order
    assert U.call(np.add, a, b.astype(np.float32)) is None           # two dtypes
    assert U.call(np.add, a, b[:5].copy()) is None                   # two shapes
    assert U.call(np.add, a.reshape(2, 3), b) is None
    assert U.call(np.sin, a.astype(">f8")) is None                   # byte-swapped
    raw = np.zeros(6 * 8 + 1, np.uint8)[1:].view(np.float64)         # unaligned
    assert not raw.flags.aligned
    assert U.call(np.sin, raw) is None
    big = np.ones(U.MAX_SIZE + 1)
    assert U.call(np.sin, big) is None
    bits(U.call(np.sin, big[:U.MAX_SIZE]), np.sin(big[:U.MAX_SIZE]))
    assert U.call(np.arctan2, a, b) is None                          # not registered
    assert U.call(np.sinc, a) is None                                # not a ufunc
    assert U.call(np.sin, a, b) is None                              # wrong arity
    assert U.call(np.add, a) is None
    class Sub(np.ndarray):
        pass
    assert U.call(np.sin, a.view(Sub)) is None                       # a subclass
    assert U.call(np.add, np.array(["a"]), np.array(["b"])) is None  # no builtin loop
    assert U.call(np.add, np.array([1], object), np.array([2], object)) is None
    with pytest.raises(TypeError, match="a: expected an ndarray"):
        U.call(np.sin, [1.0, 2.0])
    with pytest.raises(TypeError, match="b: expected an ndarray"):
        U.call(np.add, a, 2.0)


def test_ufdirect_results_are_new_memory():
    a = values((5,), np.float64)
    r = U.call(np.negative, a)
    assert not np.shares_memory(r, a) and r.flags.writeable and r.flags.owndata


# -- the Tensor's paths ------------------------------------------------------------------------

OPERATORS = {
    "add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply), "div": (lambda a, b: a / b, np.true_divide),
    "lt": (lambda a, b: a < b, np.less), "ne": (lambda a, b: a != b, np.not_equal),
}
FUNCTIONS = {"sin": (nx.sin, np.sin), "cos": (nx.cos, np.cos), "exp": (nx.exp, np.exp),
             "log": (nx.log, np.log), "sqrt": (nx.sqrt, np.sqrt), "tanh": (nx.tanh, np.tanh),
             "log1p": (nx.log1p, np.log1p), "expm1": (nx.expm1, np.expm1),
             "reciprocal": (nx.reciprocal, np.reciprocal), "negative": (nx.negative, np.negative)}


def _layouts(dtype):
    """(name, ndarray) operands: contiguous of several ranks, 0-d, non-contiguous views, a
    broadcast constant, and one beyond the direct path's size."""
    a = values((4, 6), dtype, seed=5)
    return [("c2d", a), ("0d", values((), dtype, seed=6)), ("1d", values((11,), dtype, seed=7)),
            ("T", a.T), ("step", a[:, ::2]), ("flip", a[::-1]),
            ("const", constant(a, (4, 6))), ("big", values((U.MAX_SIZE + 3,), dtype, seed=8))]


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.uint8] + INEXACT,
                         ids=lambda d: np.dtype(d).name)
def test_operators_equal_numpy_on_every_layout(name, dtype):
    op, ufunc = OPERATORS[name]
    for label, arr in _layouts(dtype):
        other = values(arr.shape, dtype, seed=11)
        x, y = nx.Tensor._wrap(arr), nx.asarray(other)
        for got_fn, want in ((lambda: op(x, y), lambda: numpy_result(ufunc, arr, other)),
                             (lambda: op(y, x), lambda: numpy_result(ufunc, other, arr))):
            try:
                want_v = want()
            except TypeError:       # NumPy refuses (bool subtract): nx_rune's front end too
                with pytest.raises(TypeError):
                    got_fn()
                continue
            if name == "div" and np.dtype(dtype).kind in "biu":
                continue      # the front end's own division of integers (float32 results)
            bits(got_fn(), want_v)


@pytest.mark.parametrize("dtype", INEXACT, ids=lambda d: np.dtype(d).name)
def test_operators_with_python_scalars_equal_numpy(dtype):
    for label, arr in _layouts(dtype):
        x = nx.Tensor._wrap(arr)
        for s in (0.9, 2, -0.0, np.inf, 1e39, 2 ** 60):
            with np.errstate(all="ignore"):
                bits(x * s, numpy_result(np.multiply, arr, s))
                bits(s - x, numpy_result(np.subtract, s, arr))
                bits(x / s, numpy_result(np.true_divide, arr, s))


# (nx.expm1 of a complex operand is the front end's own, not NumPy's: not here)
FUNCTION_CASES = [(name, dt) for name in sorted(FUNCTIONS) for dt in INEXACT
                  if not (name == "expm1" and np.dtype(dt).kind == "c")]


@pytest.mark.parametrize("name,dtype", FUNCTION_CASES,
                         ids=[f"{n}-{np.dtype(d).name}" for n, d in FUNCTION_CASES])
def test_functions_and_bind_equal_numpy_on_every_layout(name, dtype):
    fn, ufunc = FUNCTIONS[name]
    prim = {"sin": P.sin_p, "cos": P.cos_p, "exp": P.exp_p, "log": P.log_p, "sqrt": P.sqrt_p,
            "tanh": P.tanh_p, "log1p": P.log1p_p, "expm1": P.expm1_p, "reciprocal": P.recip_p,
            "negative": P.neg_p}[name]
    for label, arr in _layouts(dtype):
        x = nx.Tensor._wrap(arr)
        want = numpy_result(ufunc, arr)
        bits(fn(x), want)                  # the front end's fast path
        bits(prim.bind(x), want)           # bind, no transformation: the implementation's ufunc


def test_bind_tanh_keeps_its_complex_special_case():
    """tanh's implementation is np.tanh on real operands only (RealUfunc): complex operands
    take the implementation, whose tanh(±inf + iy) is ±1 with a zero of y's sign."""
    z = np.array([complex(np.inf, 2.0), complex(-np.inf, -1.0), 0.5 + 0.25j])
    got = np.asarray(P.tanh_p.bind(nx.asarray(z)))
    bits(got[:2], np.array([1 + 0j, complex(-1.0, -0.0)]))
    np.testing.assert_allclose(got[2], np.tanh(z[2]), rtol=1e-15)
    assert np.signbit(got[1].imag) and not np.signbit(got[0].imag)
    assert isinstance(P.tanh_p.ufunc, RealUfunc) and P.tanh_p.ufunc.ufunc is np.tanh
    with pytest.raises(TypeError, match="ufunc: expected a NumPy ufunc"):
        RealUfunc(np.sinc)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_grad_of_the_chain_equals_numpys_steps(dtype):
    """The tape's forward ops and backward steps (bind with no transformation, through the
    direct loops) compute exactly NumPy's chain and its hand-written backward pass."""
    x0 = np.linspace(0.1, 1.0, 10).astype(dtype)

    def f(x):
        y = x
        for _ in range(3):
            y = nx.exp(nx.tanh(nx.sin(y) * 0.9 + x))
        return nx.sum(y)

    ys, y = [], x0
    with np.errstate(all="ignore"):
        for _ in range(3):
            s = np.sin(y)
            t = np.tanh(s * dtype(0.9) + x0)
            e = np.exp(t)
            ys.append((y, t, e))
            y = e
        g = np.ones_like(x0)
        gx = None
        for y_in, t, e in reversed(ys):
            g = g * e                                   # exp: v * ans
            g = g * (dtype(1.0) - t * t)                # tanh: v * (1 - ans * ans)
            gx = g if gx is None else gx + g            # the add's x operand
            g = g * dtype(0.9)                          # mul by the constant
            g = g * np.cos(y_in)                        # sin: v * cos(x)
        gx = gx + g
    bits(nx.grad(f)(nx.asarray(x0)), gx)


@pytest.mark.parametrize("errstate", ["ignore", "warn", "raise", "call"])
def test_direct_path_is_silent_under_every_errstate_and_filter(errstate):
    calls = []
    a = np.array([1.0, 0.0, -1.0, np.inf])
    x = nx.asarray(a)
    x32 = nx.asarray(np.array([3e38, 0.0], np.float32))
    with np.errstate(all="ignore"):
        want = [a / 0.0, np.log(a), a * np.inf - np.inf,
                np.array([3e38, 0.0], np.float32) * np.float32(10.0)]
    old = np.seterrcall(lambda kind, flag: calls.append(kind))
    try:
        with warnings.catch_warnings(record=True) as log:
            warnings.simplefilter("error")
            with np.errstate(all=errstate):
                bits(x / 0.0, want[0])
                bits(nx.log(x), want[1])
                bits(x * np.inf - np.inf, want[2])
                bits(x32 * 10.0, want[3])
                g = nx.grad(lambda v: nx.sum(nx.log(v)))(x)
                bits(g, np.array([1.0, np.inf, -1.0, 0.0]))
        assert not log and not calls
    finally:
        np.seterrcall(old)


def test_flags_left_by_a_direct_loop_do_not_leak_into_numpy():
    """A direct loop leaves the FPU's exception flags as it set them (it does not check them);
    NumPy clears them before each of its own loops, so they never surface later."""
    x = nx.asarray(np.array([1e308, 1.0]))
    y = x * 10.0                       # overflow: the flag is set and not cleared
    assert np.isinf(np.asarray(y)[0])
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(np.add(np.ones(3), 1.0), np.full(3, 2.0))
        np.testing.assert_array_equal(np.ones(3).sum(), 3.0)


def test_in_place_operators_with_overlapping_operands_equal_numpy():
    a = np.arange(10.0)
    x = nx.asarray(a.copy())
    v = x[1:]
    v += x[:-1]                        # reads memory the write changes: NumPy's overlap rule
    b = a.copy()
    bv = b[1:]
    bv += b[:-1]
    bits(x, b)
    x = nx.asarray(a.copy())
    x *= x
    bits(x, a * a)
    x = nx.asarray(a.copy())
    w = x[::-1]
    x -= w
    c = a.copy()
    c -= c[::-1]
    bits(x, c)


@pytest.mark.parametrize("shape", [(), (300,), (3, 1000), (20000,), (2, 0, 5)])
def test_shapes_and_dtypes_read_by_the_fast_paths(shape):
    """The tape, the operators and bind read operands' shapes and dtypes from the ndarray or
    the tracer's slots (nx_rune/tensor.pyx _shape_of/_dtype_of): the same tuples and dtypes
    the attributes give, for sizes past NumPy's small-int cache and past the direct loops'
    limit, under grad, jvp and vmap."""
    rng = np.random.default_rng(1)
    a = rng.uniform(0.1, 0.9, shape)
    x = nx.asarray(a)
    f = lambda t: nx.sum(nx.sin(t) * 1.5 + t * t)      # noqa: E731
    g = nx.grad(f)(x)
    assert g.shape == shape and g.dtype == np.float64
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(g), np.cos(a) * 1.5 + 2 * a, rtol=1e-14)
    out, tan = nx.jvp(lambda t: nx.tanh(t) * 2.0, (x,), (nx.ones_like(x),))
    assert out.shape == tan.shape == shape
    np.testing.assert_allclose(np.asarray(tan), 2.0 * (1 - np.tanh(a) ** 2), rtol=1e-14)
    if shape and shape[0]:
        v = nx.vmap(lambda t: nx.exp(t) * 0.5 - t)(x)
        assert v.shape == shape
        np.testing.assert_allclose(np.asarray(v), np.exp(a) * 0.5 - a, rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.int64, np.uint32] + INEXACT,
                         ids=lambda d: np.dtype(d).name)
def test_broadcasting_operands_equal_numpy(dtype):
    """Operands of two shapes broadcast by the front end reach bind as partly-stride-0 views
    (not every stride 0: NumPy's path), and give NumPy's values."""
    pairs = [((3, 1), (1, 4)), ((4,), (3, 4)), ((), (2, 3)), ((2, 1, 3), (5, 1))]
    for sa, sb in pairs:
        a, b = values(sa, dtype, seed=2), values(sb, dtype, seed=3)
        x, y = nx.asarray(a), nx.asarray(b)
        bits(x * y, numpy_result(np.multiply, a, b))
        bits(nx.add(x, y), numpy_result(np.add, a, b))
        bits(x == y, numpy_result(np.equal, a, b))
        if np.dtype(dtype).kind in "fc":
            bits(y / x, numpy_result(np.true_divide, b, a))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.uint16],
                         ids=lambda d: np.dtype(d).name)
def test_bind_on_integers_and_bools_equals_numpy(dtype):
    """bind with no transformation on integer and bool operands (the direct loops of those
    dtypes): wrapping arithmetic and comparisons exactly as NumPy."""
    a, b = values((5, 3), dtype, seed=4), values((5, 3), dtype, seed=5)
    x, y = nx.asarray(a), nx.asarray(b)
    for prim, ufunc in ((P.add_p, np.add), (P.mul_p, np.multiply), (P.max_p, np.maximum),
                        (P.cmplt_p, np.less), (P.cmpne_p, np.not_equal),
                        (P.and_p, np.bitwise_and), (P.xor_p, np.bitwise_xor)):
        bits(prim.bind(x, y), numpy_result(ufunc, a, b))
        bits(prim.bind(x[::2], y[::2]), numpy_result(ufunc, a[::2], b[::2]))   # NumPy's path
    if np.dtype(dtype).kind != "b":
        bits(P.sub_p.bind(x, y), numpy_result(np.subtract, a, b))
        bits(P.neg_p.bind(x), numpy_result(np.negative, a))
