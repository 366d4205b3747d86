"""Issue 3: the compute front end against NumPy: elementwise, reductions, scans and linear
algebra on random inputs of several shapes and dtypes; broadcasting; dtype promotion (NumPy's
rules between tensors, weak Python scalars as in JAX); nan/inf; empty tensors; integer
division; stability of softmax / log_softmax / logsumexp; error messages."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx
from promotion_ref import result_type as promoted

SETTINGS = settings(deadline=None, max_examples=60)
FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
NUMERIC = [np.bool_] + INTS + FLOATS


def to_float(dt):
    """The front end's float dtype for a dtype (JAX-like: ints and bools -> float32, 64-bit
    ints -> float64)."""
    dt = np.dtype(dt)
    if dt.kind in "fc":
        return dt
    return np.dtype(np.float64 if dt.itemsize == 8 else np.float32)


def sum_dtype(dt):
    dt = np.dtype(dt)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 4):
        return np.dtype(np.int32)
    if dt.kind == "u" and dt.itemsize < 4:
        return np.dtype(np.uint32)
    return dt


def tol(dt):
    dt = np.dtype(dt)
    if dt == np.float16:
        return dict(rtol=2e-3, atol=2e-3)
    if dt in (np.float32, np.complex64):
        return dict(rtol=2e-5, atol=1e-6)
    return dict(rtol=1e-12, atol=1e-13)


def close(got, want, dtype=None):
    got = got.numpy() if isinstance(got, nx.Tensor) else np.asarray(got)
    want = np.asarray(want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want.astype(got.dtype), equal_nan=True, **tol(got.dtype))
    else:
        np.testing.assert_array_equal(got, want)


def rand(shape, dtype, rng, low=-5, high=5):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, max(high, 1), shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(low, high, shape).astype(dt)
    return rng.uniform(low, high, shape).astype(dt)


# broadcastable shape pairs
@st.composite
def shape_pair(draw, max_dims=3):
    out = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=max_dims)))
    def side():
        k = draw(st.integers(0, len(out)))
        return tuple(1 if draw(st.booleans()) else n for n in out[len(out) - k:])
    return side(), side()


seeds = st.integers(0, 2**16)


# -- unary elementwise --------------------------------------------------------------------------

UNARY = {
    # name: (reference in float64, low, high)
    "exp": (np.exp, -5, 5), "exp2": (np.exp2, -5, 5), "log": (np.log, 0.1, 10),
    "log2": (np.log2, 0.1, 10), "log1p": (np.log1p, -0.5, 5), "expm1": (np.expm1, -3, 3),
    "sin": (np.sin, -5, 5), "cos": (np.cos, -5, 5), "tan": (np.tan, -1.2, 1.2),
    "tanh": (np.tanh, -5, 5), "sqrt": (np.sqrt, 0, 10), "reciprocal": (np.reciprocal, 0.5, 5),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), -10, 10),
    "softplus": (lambda x: np.logaddexp(0, x), -10, 10),
}
SAME_DTYPE = {
    "negative": np.negative, "square": np.square, "abs": np.abs, "sign": np.sign,
    "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
}


@SETTINGS
@given(name=st.sampled_from(sorted(UNARY)), dtype=st.sampled_from(NUMERIC),
       shape=st.lists(st.integers(0, 5), max_size=3).map(tuple), seed=seeds)
def test_unary_float_functions(name, dtype, shape, seed):
    ref, lo, hi = UNARY[name]
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iub":
        lo, hi = max(int(np.ceil(lo)), 0 if np.dtype(dtype).kind == "u" else -5), max(int(hi), 1)
        if name in ("log", "log2", "reciprocal"):
            lo = max(lo, 1)
        if name == "reciprocal" and np.dtype(dtype).kind == "b":
            dtype = np.int8
    x = rand(shape, dtype, rng, lo, hi)
    if np.dtype(dtype).kind == "b" and name in ("log", "log2", "reciprocal"):
        x = np.ones(shape, bool)
    out_dt = to_float(x.dtype)
    got = getattr(nx, name)(nx.asarray(x))
    close(got, ref(x.astype(np.float64)), out_dt)


@SETTINGS
@given(name=st.sampled_from(sorted(SAME_DTYPE)),
       dtype=st.sampled_from([np.int8, np.int32, np.int64, np.float16, np.float32, np.float64]),
       shape=st.lists(st.integers(0, 5), max_size=3).map(tuple), seed=seeds)
def test_unary_same_dtype(name, dtype, shape, seed):
    x = rand(shape, dtype, np.random.default_rng(seed))
    close(getattr(nx, name)(nx.asarray(x)), SAME_DTYPE[name](x), dtype)


def test_unary_nan_inf_propagation():
    x = np.array([-np.inf, -2.5, -0.0, 0.0, 1.5, np.inf, np.nan], np.float32)
    t = nx.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["exp", "exp2", "log", "log2", "log1p", "expm1", "sin", "cos", "tanh", "sqrt",
                     "reciprocal", "negative", "square", "abs", "sign"]:
            close(getattr(nx, name)(t), getattr(np, name)(x), np.float32)
        close(nx.relu(t), np.maximum(x, 0), np.float32)
        close(nx.softplus(t), np.logaddexp(0, x), np.float32)
        close(nx.sigmoid(t), [0, 0.07585818, 0.5, 0.5, 0.81757448, 1, np.nan], np.float32)
        close(nx.isnan(t), np.isnan(x), np.bool_)
        close(nx.isfinite(t), np.isfinite(x), np.bool_)
        close(nx.isinf(t), np.isinf(x), np.bool_)
        close(nx.tan(t[1:5]), np.tan(x[1:5]), np.float32)
    i = nx.asarray(np.array([1, 2], np.int32))
    close(nx.isnan(i), [False, False], np.bool_)
    close(nx.isfinite(i), [True, True], np.bool_)


def test_unary_large_inputs_are_stable():
    x = np.array([-1000, -80, 0, 80, 1000], np.float32)
    t = nx.asarray(x)
    close(nx.sigmoid(t), 1 / (1 + np.exp(-x.astype(np.float64))), np.float32)
    close(nx.softplus(t), np.logaddexp(0, x.astype(np.float64)), np.float32)
    assert np.isfinite(nx.softplus(t).numpy()).all()


# -- binary elementwise ---------------------------------------------------------------------------

ARITH = ["add", "subtract", "multiply", "maximum", "minimum"]


@SETTINGS
@given(name=st.sampled_from(ARITH), da=st.sampled_from(NUMERIC), db=st.sampled_from(NUMERIC),
       shapes=shape_pair(), seed=seeds)
def test_binary_arithmetic_promotes_like_numpy(name, da, db, shapes, seed):
    # NumPy's promotion, except integers with floats (JAX's: the float's dtype)
    rng = np.random.default_rng(seed)
    a, b = rand(shapes[0], da, rng), rand(shapes[1], db, rng)
    want_dt = promoted(a.dtype, b.dtype)
    if name == "subtract" and want_dt == np.bool_:
        with pytest.raises(TypeError):
            nx.subtract(nx.asarray(a), nx.asarray(b))
        return
    with np.errstate(over="ignore"):
        want = getattr(np, name)(a, b)
    close(getattr(nx, name)(nx.asarray(a), nx.asarray(b)), want, want_dt)


@SETTINGS
@given(da=st.sampled_from(NUMERIC), db=st.sampled_from(NUMERIC), shapes=shape_pair(), seed=seeds)
def test_divide(da, db, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = rand(shapes[0], da, rng), rand(shapes[1], db, rng, 1, 5)
    want_dt = to_float(promoted(a.dtype, b.dtype))
    close(nx.divide(nx.asarray(a), nx.asarray(b)), a.astype(np.float64) / b, want_dt)
    close(nx.asarray(a) / nx.asarray(b), a.astype(np.float64) / b, want_dt)


@SETTINGS
@given(dtype=st.sampled_from([np.int8, np.int32, np.int64, np.float32, np.float64]),
       shapes=shape_pair(), seed=seeds)
def test_floor_divide_and_mod_negative_operands(dtype, shapes, seed):
    rng = np.random.default_rng(seed)
    a = rand(shapes[0], dtype, rng, -20, 20)
    b = rand(shapes[1], dtype, rng, 1, 6) * np.where(rng.random(shapes[1]) < 0.5, -1,
                                                     1).astype(dtype)
    ta, tb = nx.asarray(a), nx.asarray(b)
    close(nx.floor_divide(ta, tb), np.floor_divide(a, b), dtype)
    close(ta // tb, a // b, dtype)
    close(nx.mod(ta, tb), np.mod(a, b), dtype)
    close(ta % tb, a % b, dtype)
    close(nx.remainder(ta, tb), np.remainder(a, b), dtype)
    # a == (a // b) * b + a % b
    close((ta // tb) * tb + ta % tb, np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)))


def test_floor_divide_and_mod_examples():
    a = nx.asarray(np.array([-7, -7, 7, 7, 0], np.int32))
    b = nx.asarray(np.array([2, -2, 2, -2, -3], np.int32))
    close(a // b, [-4, 3, 3, -4, 0], np.int32)
    close(a % b, [1, -1, 1, -1, 0], np.int32)
    f = nx.asarray(np.array([-7.5, 7.5, -0.5], np.float32))
    close(f // 2, [-4, 3, -1], np.float32)
    close(f % 2, [0.5, 1.5, 1.5], np.float32)
    close(f % -2, [-1.5, -0.5, -0.5], np.float32)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.bool_])
def test_integer_division_by_zero_raises(dtype):
    a = nx.asarray(np.array([3, 4], dtype))
    z = nx.asarray(np.array([1, 0], dtype))
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        nx.floor_divide(a, z)
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        nx.mod(a, z)
    if dtype != np.bool_:
        with pytest.raises(ZeroDivisionError):
            a // 0
        with pytest.raises(ZeroDivisionError):
            a % 0


def test_float_division_by_zero_is_ieee():
    a = nx.asarray(np.array([1.0, -1.0, 0.0], np.float32))
    close(a / 0.0, [np.inf, -np.inf, np.nan], np.float32)
    close(a // 0.0, np.array([1.0, -1.0, 0.0], np.float32) // np.float32(0), np.float32)
    close(nx.asarray([1, 0]) / 0, [np.inf, np.nan], np.float32)
    assert 1 / (nx.ones(2) * -0.0).numpy()[0] == -np.inf  # -0.0 is its own constant


@SETTINGS
@given(dtype=st.sampled_from([np.int32, np.int64, np.uint8, np.float32, np.float64]),
       shapes=shape_pair(), seed=seeds)
def test_power(dtype, shapes, seed):
    rng = np.random.default_rng(seed)
    a = rand(shapes[0], dtype, rng, 0, 4)
    b = rand(shapes[1], dtype, rng, 0, 4)
    close(nx.power(nx.asarray(a), nx.asarray(b)), np.power(a, b), dtype)
    close(nx.asarray(a) ** 2, a ** 2, dtype)


def test_power_errors_and_special_values():
    with pytest.raises(ValueError, match="negative integer powers"):
        nx.asarray([2, 3]) ** nx.asarray([1, -1])
    x = nx.asarray(np.array([0.0, -1.0, np.inf, np.nan], np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(x ** 0.5, np.array([0.0, -1.0, np.inf, np.nan], np.float32) ** 0.5, np.float32)
        close(x ** 0, [1, 1, 1, 1], np.float32)


CMP = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal"]


@SETTINGS
@given(name=st.sampled_from(CMP), da=st.sampled_from(NUMERIC), db=st.sampled_from(NUMERIC),
       shapes=shape_pair(), seed=seeds)
def test_comparisons(name, da, db, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = rand(shapes[0], da, rng, 0, 3), rand(shapes[1], db, rng, 0, 3)
    close(getattr(nx, name)(nx.asarray(a), nx.asarray(b)), getattr(np, name)(a, b), np.bool_)


def test_comparison_operators_and_nan():
    x = np.array([1.0, np.nan, 3.0, -np.inf], np.float32)
    y = np.array([1.0, np.nan, 2.0, np.inf], np.float32)
    tx, ty = nx.asarray(x), nx.asarray(y)
    for op in ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]:
        close(getattr(tx, op)(ty), getattr(x, op)(y), np.bool_)
        close(getattr(tx, op)(2.0), getattr(x, op)(2.0), np.bool_)


@SETTINGS
@given(name=st.sampled_from(["logical_and", "logical_or", "logical_xor"]),
       da=st.sampled_from([np.bool_, np.int32, np.float32]),
       db=st.sampled_from([np.bool_, np.int8, np.float64]), shapes=shape_pair(), seed=seeds)
def test_logical(name, da, db, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = rand(shapes[0], da, rng, 0, 2), rand(shapes[1], db, rng, 0, 2)
    close(getattr(nx, name)(nx.asarray(a), nx.asarray(b)), getattr(np, name)(a, b), np.bool_)
    close(nx.logical_not(nx.asarray(a)), np.logical_not(a), np.bool_)


@SETTINGS
@given(name=st.sampled_from(["bitwise_and", "bitwise_or", "bitwise_xor"]),
       da=st.sampled_from([np.bool_, np.int8, np.int32, np.uint16, np.uint64]),
       shapes=shape_pair(), seed=seeds)
def test_bitwise(name, da, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = rand(shapes[0], da, rng, 0, 100), rand(shapes[1], da, rng, 0, 100)
    close(getattr(nx, name)(nx.asarray(a), nx.asarray(b)), getattr(np, name)(a, b), da)
    close(nx.bitwise_not(nx.asarray(a)), np.bitwise_not(a), da)
    close(~nx.asarray(a), ~a, da)
    with pytest.raises(TypeError, match="integer or bool"):
        getattr(nx, name)(nx.ones(2), nx.ones(2))


def test_clip_where_astype():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (4, 5)).astype(np.float32)
    t = nx.asarray(x)
    close(nx.clip(t, -1, 1.5), np.clip(x, -1, 1.5), np.float32)
    close(nx.clip(t, None, 0), np.clip(x, None, 0), np.float32)
    close(nx.clip(t, 0.5, None), np.clip(x, 0.5, None), np.float32)
    c = x > 0
    close(nx.where(nx.asarray(c), t, 0.0), np.where(c, x, 0), np.float32)
    close(nx.where(c, t, nx.asarray(x[:1] * 2)), np.where(c, x, x[:1] * 2), np.float32)
    close(nx.where(nx.asarray(x), 1, 2), np.where(x, 1, 2), np.int32)      # non-bool condition
    close(nx.where(True, 1, 2.5), np.float32(1.0), np.float32)                # scalars only
    close(nx.astype(t, nx.int32), x.astype(np.int32), np.int32)              # truncation
    close(t.astype(nx.float16), x.astype(np.float16), np.float16)
    close(nx.astype(nx.asarray([0, 2]), nx.bool_), [False, True], np.bool_)
    with pytest.raises(TypeError, match="dtype"):
        nx.astype(t, "U4")


# -- dtype promotion with weak Python scalars ----------------------------------------------------

@pytest.mark.parametrize("dtype,scalar,expected", [
    (np.float32, 2, np.float32), (np.float32, 2.5, np.float32), (np.float16, 2.5, np.float16),
    (np.float64, 2, np.float64), (np.int32, 2, np.int32), (np.int8, 2, np.int8),
    (np.uint8, 3, np.uint8), (np.int32, 2.5, np.float32), (np.int64, 2.5, np.float32),
    (np.bool_, 1, np.int32), (np.bool_, 1.5, np.float32), (np.bool_, True, np.bool_),
    (np.int32, True, np.int32), (np.float32, 1j, np.complex64), (np.float64, 1j, np.complex128),
    (np.complex64, 2.0, np.complex64),
])
def test_weak_python_scalars(dtype, scalar, expected):
    t = nx.asarray(np.ones(3, dtype))
    complex_ = isinstance(scalar, complex) or np.dtype(dtype).kind == "c"
    ops = [nx.add, nx.multiply] + ([] if complex_ else [nx.maximum])
    for op in ops:
        if dtype == np.bool_ and op is nx.maximum and isinstance(scalar, bool):
            continue
        assert op(t, scalar).dtype == expected, op
        assert op(scalar, t).dtype == expected, op
    assert (t * scalar).dtype == expected and (scalar * t).dtype == expected
    assert (t + scalar).dtype == expected
    if not isinstance(scalar, (bool, complex)) and dtype != np.bool_:
        assert (t - scalar).dtype == expected and (scalar - t).dtype == expected


def test_scalar_values_and_only_scalars():
    t = nx.asarray(np.array([1, 2, 3], np.int32))
    close(t * 2.5, [2.5, 5.0, 7.5], np.float32)
    close(2 - t, [1, 0, -1], np.int32)
    close(10 // t, [10, 5, 3], np.int32)
    close(2 ** t, [2, 4, 8], np.int32)
    u = nx.asarray(np.array([1, 2], np.uint8))
    close(u - 1, [0, 1], np.uint8)
    close(u - 2, [255, 0], np.uint8)          # wraps as NumPy does
    # only Python scalars: the default dtype of the highest kind
    assert nx.add(2, 3).dtype == np.int32
    assert nx.add(2, 3.0).dtype == np.float32
    assert nx.add(2, 2**40).dtype == np.int64
    assert nx.maximum(True, 2).dtype == np.int32
    assert nx.multiply(2.0, 1j).dtype == np.complex64
    with pytest.raises(OverflowError):
        nx.asarray(np.ones(2, np.int8)) * 300   # does not fit the tensor's dtype (as NumPy 2)


def test_numpy_scalars_and_arrays_are_strong():
    t = nx.asarray(np.ones(2, np.float16))
    assert (t * np.float32(2)).dtype == np.float32
    assert (t + np.ones(2, np.float64)).dtype == np.float64
    assert (nx.asarray(np.ones(2, np.int8)) + np.int32(1)).dtype == np.int32


# -- reductions ------------------------------------------------------------------------------------

@st.composite
def reduction_case(draw, dtypes=NUMERIC):
    shape = tuple(draw(st.lists(st.integers(1, 4), max_size=3)))
    dtype = draw(st.sampled_from(dtypes))
    nd = len(shape)
    axis = draw(st.one_of(
        st.none(), st.integers(-nd, nd - 1) if nd else st.none(),
        st.lists(st.integers(0, nd - 1), unique=True).map(tuple) if nd else st.none()))
    return shape, dtype, axis, draw(st.booleans()), draw(seeds)


@SETTINGS
@given(case=reduction_case(), name=st.sampled_from(["sum", "prod"]))
def test_sum_prod(case, name):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed), -2, 3)
    dt = sum_dtype(x.dtype)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims, dtype=dt)
    close(getattr(nx, name)(nx.asarray(x), axis, keepdims), want, dt)
    close(getattr(nx.asarray(x), name)(axis=axis, keepdims=keepdims), want, dt)


@SETTINGS
@given(case=reduction_case(dtypes=[np.bool_, np.int8, np.int32, np.uint16, np.int64,
                                   np.float16, np.float32, np.float64]),
       name=st.sampled_from(["max", "min", "all", "any"]))
def test_max_min_all_any(case, name):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed), -3, 3)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    dt = np.bool_ if name in ("all", "any") else dtype
    close(getattr(nx, name)(nx.asarray(x), axis, keepdims), want, dt)
    if name in ("max", "min"):
        close(getattr(nx, "a" + name)(nx.asarray(x), axis, keepdims), want, dt)


@SETTINGS
@given(case=reduction_case(dtypes=[np.int32, np.int64, np.float32, np.float64]),
       name=st.sampled_from(["mean", "var", "std"]))
def test_mean_var_std(case, name):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed))
    dt = to_float(x.dtype)
    want = getattr(np, name)(x.astype(np.float64), axis=axis, keepdims=keepdims)
    close(getattr(nx, name)(nx.asarray(x), axis, keepdims=keepdims), want, dt)
    if name != "mean":
        n = x.size if axis is None else np.prod([x.shape[a] for a in np.atleast_1d(axis)])
        if n > 1:
            want1 = getattr(np, name)(x.astype(np.float64), axis=axis, ddof=1, keepdims=keepdims)
            close(getattr(nx, name)(nx.asarray(x), axis, ddof=1, keepdims=keepdims), want1, dt)


@SETTINGS
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from([np.bool_, np.int8, np.int32, np.uint8, np.float32, np.float64]),
       data=st.data(), seed=seeds)
def test_argmax_argmin(shape, dtype, data, seed):
    x = rand(shape, dtype, np.random.default_rng(seed), -3, 3)  # ties: the first one wins
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    keepdims = data.draw(st.booleans())
    for name in ["argmax", "argmin"]:
        got = getattr(nx, name)(nx.asarray(x), axis, keepdims)
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        close(got, want, np.int32)


def test_reductions_nan_and_inf():
    x = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 2.0], [-1.0, 0.0, 5.0]], np.float32)
    t = nx.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["sum", "prod", "max", "min", "mean"]:
            for axis in [None, 0, 1]:
                close(getattr(nx, name)(t, axis), getattr(np, name)(x, axis=axis), np.float32)
        close(nx.argmax(t, 1), np.argmax(x, 1), np.int32)      # nan counts as the maximum
        close(nx.argmin(t, 1), np.argmin(x, 1), np.int32)
        close(nx.var(t, 1), np.var(x, 1), np.float32)
        close(nx.cumsum(t, 1), np.cumsum(x, 1), np.float32)
        close(nx.cummax(t, 1), np.maximum.accumulate(x, 1), np.float32)


def test_reductions_of_empty_tensors():
    z = nx.zeros((0, 3))
    close(nx.sum(z), 0.0, np.float32)
    close(nx.sum(z, 0), np.zeros(3), np.float32)
    close(nx.sum(nx.zeros((0,), nx.int8)), 0, np.int32)
    close(nx.prod(z), 1.0, np.float32)
    close(nx.prod(z, 0, keepdims=True), np.ones((1, 3)), np.float32)
    close(nx.any(z), False, np.bool_)
    close(nx.all(z), True, np.bool_)
    close(nx.all(z, 0), np.ones(3, bool), np.bool_)
    close(nx.max(z, 1), np.zeros((0,)), np.float32)        # no empty axis reduced: fine
    close(nx.logsumexp(nx.zeros((2, 0)), 1), [-np.inf, -np.inf], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(nx.mean(z), np.nan, np.float32)
        close(nx.mean(z, 0), np.full(3, np.nan), np.float32)
    for name in ["max", "min", "amax", "amin"]:
        with pytest.raises(ValueError, match=name.lstrip("a") + ".*zero-size"):
            getattr(nx, name)(z)
        with pytest.raises(ValueError, match="zero-size"):
            getattr(nx, name)(z, 0)
    for name in ["argmax", "argmin"]:
        with pytest.raises(ValueError, match="empty"):
            getattr(nx, name)(z)
    close(nx.cumsum(nx.zeros((0,))), np.zeros(0), np.float32)
    close(nx.cumsum(z, 1), np.zeros((0, 3)), np.float32)


def test_reduction_axis_forms():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = nx.asarray(x)
    for axis in [0, -1, (0, 2), (-1, -3), [1, 2], ()]:
        close(nx.sum(t, axis), np.sum(x, axis=tuple(axis) if isinstance(axis, list) else axis))
    with pytest.raises(ValueError, match="repeated"):
        nx.sum(t, (0, -3))
    with pytest.raises(ValueError, match="out of range"):
        nx.max(t, 3)


# -- logsumexp / softmax / log_softmax -------------------------------------------------------------

def _lse(x, axis, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@SETTINGS
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from([np.float32, np.float64]), scale=st.sampled_from([1.0, 1e3, 1e30]),
       data=st.data(), seed=seeds)
def test_softmax_family_stable(shape, dtype, scale, data, seed):
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x64 = x.astype(np.float64)
    lse = _lse(x64, axis)
    close(nx.logsumexp(nx.asarray(x), axis), lse, dtype)
    close(nx.logsumexp(nx.asarray(x), axis, keepdims=True), _lse(x64, axis, True), dtype)
    sm = nx.softmax(nx.asarray(x), axis).numpy()
    assert np.isfinite(sm).all()
    close(sm, np.exp(x64 - _lse(x64, axis, True)), dtype)
    np.testing.assert_allclose(sm.sum(axis), 1.0, rtol=1e-5)
    lsm = nx.log_softmax(nx.asarray(x), axis)
    # reference as (x - m) - log(sum(exp(x - m))): x - lse(x) would cancel and lose ~ulp(max|x|)
    m = np.max(x64, axis=axis, keepdims=True)
    close(lsm, (x64 - m) - np.log(np.sum(np.exp(x64 - m), axis=axis, keepdims=True)), dtype)


def test_softmax_family_special_values():
    x = nx.asarray(np.array([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, 0.0]], np.float32))
    close(nx.softmax(x), [[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]], np.float32)
    close(nx.logsumexp(x, 1), [1000 + np.log(2), -1000 + np.log(2), 0.0], np.float32)
    close(nx.log_softmax(x), [[-np.log(2)] * 2, [-np.log(2)] * 2, [-np.inf, 0.0]], np.float32)
    y = nx.asarray(np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0]], np.float32))
    close(nx.logsumexp(y, 1), [-np.inf, np.inf, np.nan], np.float32)
    close(nx.logsumexp(nx.asarray(np.arange(6.0).reshape(2, 3))), _lse(np.arange(6.0), 0))
    close(nx.softmax(nx.asarray([1, 2, 3])), np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(),
          np.float32)   # ints go to float32


# -- scans -----------------------------------------------------------------------------------------

SCANS = {"cumsum": np.cumsum, "cumprod": np.cumprod, "cummax": np.maximum.accumulate,
         "cummin": np.minimum.accumulate}


@SETTINGS
@given(name=st.sampled_from(sorted(SCANS)),
       shape=st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from([np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float32,
                              np.float64]), data=st.data(), seed=seeds)
def test_scans(name, shape, dtype, data, seed):
    x = rand(shape, dtype, np.random.default_rng(seed), -2, 3)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    if name in ("cumsum", "cumprod"):
        dt = sum_dtype(x.dtype)
        want = SCANS[name](x, axis=axis, dtype=dt)
    else:
        dt = x.dtype
        want = SCANS[name](x.reshape(-1) if axis is None else x, axis=0 if axis is None else axis)
    close(getattr(nx, name)(nx.asarray(x), axis), want, dt)


# -- linear algebra --------------------------------------------------------------------------------

@st.composite
def matmul_shapes(draw):
    n, k, m = draw(st.integers(1, 4)), draw(st.integers(0, 4)), draw(st.integers(1, 4))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    ba = tuple(1 if draw(st.booleans()) else d for d in batch)[draw(st.integers(0, len(batch))):]
    bb = tuple(1 if draw(st.booleans()) else d for d in batch)[draw(st.integers(0, len(batch))):]
    sa = ba + (n, k) if draw(st.integers(0, 3)) else (k,)
    sb = bb + (k, m) if draw(st.integers(0, 3)) else (k,)
    return sa, sb


@SETTINGS
@given(shapes=matmul_shapes(), da=st.sampled_from([np.int32, np.float32, np.float64]),
       db=st.sampled_from([np.int64, np.float32]), seed=seeds)
def test_matmul_batch_broadcasting_and_1d(shapes, da, db, seed):
    rng = np.random.default_rng(seed)
    a, b = rand(shapes[0], da, rng, -3, 4), rand(shapes[1], db, rng, -3, 4)
    want = np.matmul(a, b)
    dt = promoted(a.dtype, b.dtype)
    close(nx.matmul(nx.asarray(a), nx.asarray(b)), want, dt)
    close(nx.asarray(a) @ nx.asarray(b), want, dt)


def test_matmul_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\)"):
        nx.matmul(nx.ones((2, 3)), nx.ones((4, 5)))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\) and \(5, 4, 2\)"):
        nx.matmul(nx.ones((2, 3, 4)), nx.ones((5, 4, 2)))
    with pytest.raises(ValueError, match="at least 1-D"):
        nx.matmul(nx.asarray(2.0), nx.ones(3))
    with pytest.raises(ValueError, match=r"\(3,\) and \(4,\)"):
        nx.matmul(nx.ones(3), nx.ones(4))


@pytest.mark.parametrize("sa,sb", [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                   ((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 5)), ((), (2, 3))])
def test_dot_outer_inner(sa, sb):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    close(nx.dot(nx.asarray(a), nx.asarray(b)), np.dot(a, b), np.float64)
    if len(sa) and len(sb):
        close(nx.asarray(a).dot(nx.asarray(b)), np.dot(a, b))
        close(nx.outer(nx.asarray(a), nx.asarray(b)), np.outer(a, b), np.float64)
    c = rng.standard_normal(sb[-1:] if sb else ())
    if sa[-1:] == sb[-1:]:
        close(nx.inner(nx.asarray(a), nx.asarray(b)), np.inner(a, b), np.float64)
    close(nx.inner(nx.asarray(c), nx.asarray(b)), np.inner(c, b), np.float64)
    with pytest.raises(ValueError, match="inner"):
        nx.inner(nx.ones(3), nx.ones(2))


# -- broadcasting and error messages ---------------------------------------------------------------

@pytest.mark.parametrize("fn", [nx.add, nx.subtract, nx.multiply, nx.divide, nx.maximum,
                                nx.minimum, nx.less, nx.equal, nx.power, nx.floor_divide,
                                nx.logical_and])
def test_mismatched_broadcast_names_both_shapes(fn):
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\)"):
        fn(nx.ones((2, 3)), nx.ones((4,)))
    with pytest.raises(ValueError, match=r"\(5, 1, 3\) and \(2, 4\)"):
        fn(np.ones((5, 1, 3)), nx.ones((2, 4)))


def test_where_and_broadcast_shapes_errors():
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        nx.where(nx.ones(2) > 0, nx.ones(3), 0.0)
    assert nx.broadcast_shapes((2, 1), (1, 3), ()) == (2, 3)
    assert nx.broadcast_shapes((0, 1), (1, 5)) == (0, 5)
    with pytest.raises(ValueError, match=r"\(2,\) and \(3,\)"):
        nx.broadcast_shapes((2,), (3,))


def test_type_errors():
    with pytest.raises(TypeError, match="bool"):
        nx.negative(nx.asarray([True]))
    with pytest.raises(TypeError, match="complex"):
        nx.maximum(nx.asarray([1j]), nx.asarray([1j]))
    with pytest.raises(TypeError, match="complex"):
        nx.floor_divide(nx.asarray([1j]), 2)
    with pytest.raises(TypeError):
        nx.add(nx.ones(2), "a")


@SETTINGS
@given(shapes=shape_pair(), seed=seeds)
def test_operators_accept_numpy_and_lists(shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = rand(shapes[0], np.float32, rng), rand(shapes[1], np.float32, rng)
    close(nx.asarray(a) + b, a + b, np.float32)
    close(a + nx.asarray(b), a + b, np.float32)
    close(nx.multiply(a, b), a * b, np.float32)
    close(nx.asarray(a) - (b.tolist() if b.size else b), a - b)


def test_empty_elementwise():
    z = nx.zeros((0, 3))
    assert (z + 1).shape == (0, 3)
    assert nx.exp(z).shape == (0, 3)
    assert (z * nx.ones((1, 3))).shape == (0, 3)
    assert nx.matmul(nx.zeros((2, 0)), nx.zeros((0, 3))).numpy().tolist() == [[0.0] * 3] * 2


def test_aliases_and_methods():
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, (3, 4)).astype(np.float32)
    y = rng.uniform(1, 3, (3, 4)).astype(np.float32)
    i = rng.integers(0, 9, (3, 4)).astype(np.int16)
    t, u, k = nx.asarray(x), nx.asarray(y), nx.asarray(i)
    close(nx.true_divide(t, u), x / y, np.float32)
    close(nx.remainder(t, u), np.remainder(x, y), np.float32)
    close(nx.absolute(t), np.abs(x), np.float32)
    close(abs(t), np.abs(x), np.float32)
    close(-t, -x, np.float32)
    close(+t, x, np.float32)
    close(nx.invert(k), np.invert(i), np.int16)
    close(k & 3, i & 3, np.int16)
    close(3 | k, 3 | i, np.int16)
    close(k ^ k, i ^ i, np.int16)
    for name in ["sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin"]:
        want = getattr(np, name)(x, axis=1)
        close(getattr(t, name)(axis=1), want)
        close(getattr(t, name)(1, True), getattr(np, name)(x, axis=1, keepdims=True))
    close(t.flatten(), x.flatten(), np.float32)
    close(t.ravel(), x.ravel(), np.float32)
    close(t.copy(), x, np.float32)
    close(t.astype(np.float64), x.astype(np.float64), np.float64)
    close(nx.ravel(t), x.ravel())
    assert nx.size(t) == 12 and nx.shape(t) == (3, 4) and nx.ndim(t) == 2
    assert t.size == 12 and t.ndim == 2 and t.strides == (4, 1) and t.T.strides == (1, 4)
