"""Issue 12, statistics: the standard's reduction keywords (sum/prod dtype=, var/std correction=,
cumulative_sum/cumulative_prod, keepdims and tuple axes everywhere, clip's min=/max=) and NumPy's
average, nan-reductions, ptp, count_nonzero, cov and corrcoef.

Forward values against NumPy over dtypes, axes, keepdims and empty shapes; derivatives (VJP and
JVP) against float64 central finite differences; bad input raising a clear exception."""
import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import nx_rune as nx
from autodiff_specs import f64_tensor, fd_jacobians

SETTINGS = settings(deadline=None, max_examples=40)
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
NUMERIC = [np.bool_] + INTS + FLOATS
seeds = st.integers(0, 2**16)


def tol(dt):
    dt = np.dtype(dt)
    if dt == np.float16:
        return dict(rtol=3e-3, atol=3e-3)
    if dt in (np.float32, np.complex64):
        return dict(rtol=3e-5, atol=3e-6)
    return dict(rtol=1e-11, atol=1e-12)


def close(got, want, dtype=None):
    got = got.numpy() if isinstance(got, nx.Tensor) else np.asarray(got)
    want = np.asarray(want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, np.dtype(dtype))
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want.astype(got.dtype), equal_nan=True, **tol(got.dtype))
    else:
        np.testing.assert_array_equal(got, want)


def rand(shape, dtype, rng, low=-3, high=4):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, high, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(low, high, shape).astype(dt)
    return rng.uniform(low, high, shape).astype(dt)


def with_nans(x, rng, frac=0.3):
    x = np.array(x, copy=True)
    x[rng.uniform(size=x.shape) < frac] = np.nan
    return x


def accumulation(dt):
    """The standard's accumulation dtype with nx's default int32."""
    dt = np.dtype(dt)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 4):
        return np.dtype(np.int32)
    if dt.kind == "u" and dt.itemsize < 4:
        return np.dtype(np.uint32)
    return dt


def float_of(dt):
    dt = np.dtype(dt)
    if dt.kind in "fc":
        return dt
    return np.dtype(np.float64 if dt.itemsize == 8 else np.float32)


@st.composite
def reduction_case(draw, dtypes=NUMERIC, min_side=0):
    shape = tuple(draw(st.lists(st.integers(min_side, 4), max_size=3)))
    nd = len(shape)
    axis = draw(st.one_of(
        st.none(), st.integers(-nd, nd - 1) if nd else st.none(),
        st.lists(st.integers(-nd, nd - 1), unique_by=lambda a: a % nd, max_size=nd).map(tuple)
        if nd else st.none()))
    return shape, draw(st.sampled_from(dtypes)), axis, draw(st.booleans()), draw(seeds)


@contextlib.contextmanager
def quiet():
    """NumPy's reference values warn on purpose (all-nan slices, 0 degrees of freedom)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# -- derivative checks ---------------------------------------------------------------------------

def check_derivatives(fn, args, eps=1e-6, rtol=1e-6, atol=1e-7, seed=0):
    """VJP and JVP of ``fn`` (float64 tensors in, one tensor out) against central differences."""
    rng = np.random.default_rng(seed)
    out, jacs = fd_jacobians(fn, args, eps)
    targs = [f64_tensor(a) for a in args]
    y, vjp_fn = nx.vjp(fn, *targs)
    np.testing.assert_allclose(np.asarray(y, dtype=np.float64), out, rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    u = rng.standard_normal(out.shape)
    cts = vjp_fn(nx.asarray(u))
    for ct, a, J in zip(cts, args, jacs):
        assert ct.shape == np.shape(a) and ct.dtype == np.float64
        np.testing.assert_allclose(np.asarray(ct).reshape(-1), J.T @ u.reshape(-1),
                                   rtol=rtol, atol=atol)
    vs = [rng.standard_normal(np.shape(a)) for a in args]
    y2, t = nx.jvp(fn, targs, [f64_tensor(v) for v in vs])
    assert t.shape == out.shape
    np.testing.assert_allclose(np.asarray(t).reshape(-1),
                               sum(J @ v.reshape(-1) for J, v in zip(jacs, vs)),
                               rtol=rtol, atol=atol)


def distinct(rng, shape, scale=0.3):
    """Values at least ~0.2 apart (no ties: max/min/clip are smooth around them)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n).reshape(shape) - n / 2) * scale + rng.uniform(-0.05, 0.05, shape)


# == sum / prod: dtype= and the standard's accumulation dtypes =====================================

@SETTINGS
@given(case=reduction_case(), name=st.sampled_from(["sum", "prod"]))
def test_sum_prod_default_dtype(case, name):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed), -2, 3)
    dt = accumulation(dtype)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims, dtype=dt)
    close(getattr(nx, name)(nx.asarray(x), axis, keepdims), want, dt)   # positional keepdims
    close(getattr(nx, name)(x, axis=axis, keepdims=keepdims), want, dt)


@SETTINGS
@given(case=reduction_case(), name=st.sampled_from(["sum", "prod"]),
       out_dtype=st.sampled_from([np.int8, np.int64, np.uint64, np.float32, np.float64,
                                  np.complex128]))
def test_sum_prod_dtype_keyword(case, name, out_dtype):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed), -2, 3)
    with quiet():
        # dtype= too: NumPy alone accumulates small ints in int64 (prod of int8 128 stays 128)
        want = getattr(np, name)(x.astype(out_dtype), axis=axis, keepdims=keepdims,
                                 dtype=out_dtype)
    close(getattr(nx, name)(nx.asarray(x), axis, keepdims, dtype=out_dtype), want, out_dtype)


def test_accumulation_dtypes_table():
    table = {np.bool_: np.int32, np.int8: np.int32, np.int16: np.int32, np.int32: np.int32,
             np.int64: np.int64, np.uint8: np.uint32, np.uint16: np.uint32, np.uint32: np.uint32,
             np.uint64: np.uint64, np.float16: np.float16, np.float32: np.float32,
             np.float64: np.float64, np.complex64: np.complex64}
    for src, dst in table.items():
        x = nx.ones((3,), src)
        for f in (nx.sum, nx.prod, nx.cumsum, nx.cumprod):
            assert f(x).dtype == np.dtype(dst), (f.__name__, src)
        assert nx.cumulative_sum(x).dtype == np.dtype(dst)
        assert nx.cumulative_prod(x).dtype == np.dtype(dst)


def test_sum_wide_accumulation_avoids_overflow():
    x = np.full(1000, 100, np.int8)
    assert int(nx.sum(x)) == 100000                      # int32 accumulation
    assert int(nx.sum(x, dtype=nx.int8)) == int(np.sum(x, dtype=np.int8))  # wraps as NumPy
    close(nx.prod(np.full(3, 2**20, np.int32), dtype=nx.int64), 2**60, np.int64)


def test_sum_prod_special_cases():
    close(nx.sum(nx.zeros((0,))), 0.0, np.float32)
    close(nx.prod(nx.zeros((2, 0)), 1), [1.0, 1.0], np.float32)
    close(nx.prod(np.zeros((0,), np.int8)), 1, np.int32)
    x = np.array([np.inf, -np.inf, 1.0])
    with quiet():  # the backend's np.sum warns from NumPy's frame, which its filter misses
        close(nx.sum(x), np.nan, np.float64)
        close(nx.prod(np.array([np.inf, 0.0])), np.nan, np.float64)
    close(nx.sum(np.array([1 + 2j, 3 - 1j], np.complex64)), 4 + 1j, np.complex64)


def test_keepdims_rejects_a_positional_dtype():
    x = nx.ones((2, 3))
    for f in (nx.sum, nx.prod, nx.max, nx.min, nx.mean, nx.all, nx.any, nx.argmax, nx.argmin):
        with pytest.raises(TypeError, match="keepdims"):
            f(x, 0, np.float64)
        with pytest.raises(TypeError, match="keepdims"):
            f(x, 0, "yes")
    close(nx.sum(x, 0, 1), np.ones((1, 3)) * 2, np.float32)   # 0/1 are fine


def test_dtype_keyword_errors():
    with pytest.raises(TypeError, match="sum: .*dtype"):
        nx.sum(nx.ones(3), dtype="not a dtype")
    with pytest.raises(TypeError, match="prod"):
        nx.prod(nx.ones(3), dtype=object)
    with pytest.raises(TypeError, match="mean: dtype must be a float"):
        nx.mean(nx.ones(3), dtype=nx.int32)


def test_signatures_are_the_standards():
    import inspect
    for f in (nx.sum, nx.prod):
        p = inspect.signature(f).parameters
        assert p["x"].kind is inspect.Parameter.POSITIONAL_ONLY
        assert p["dtype"].kind is inspect.Parameter.KEYWORD_ONLY
    for f in (nx.var, nx.std):
        assert inspect.signature(f).parameters["correction"].kind is \
            inspect.Parameter.KEYWORD_ONLY
    for f in (nx.cumulative_sum, nx.cumulative_prod):
        p = inspect.signature(f).parameters
        assert [k.kind for k in p.values()][1:] == [inspect.Parameter.KEYWORD_ONLY] * 3
    p = inspect.signature(nx.clip).parameters
    assert list(p)[:3] == ["x", "min", "max"]
    assert p["min"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


# == mean / var / std ==============================================================================

@SETTINGS
@given(case=reduction_case(dtypes=[np.bool_, np.int8, np.int32, np.int64, np.uint16,
                                   np.float16, np.float32, np.float64]))
def test_mean_against_numpy(case):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed))
    with quiet():
        want = np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims)
    close(nx.mean(x, axis, keepdims), want, float_of(dtype))
    with quiet():
        want = np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims)
    close(nx.mean(x, axis=axis, keepdims=keepdims, dtype=nx.float64), want, np.float64)


def test_mean_special_cases():
    close(nx.mean(nx.zeros((0, 2)), 0), [np.nan, np.nan], np.float32)
    close(nx.mean(np.array([1.0, np.nan])), np.nan, np.float64)
    z = nx.mean(np.zeros((0,), np.complex64))
    assert z.dtype == np.complex64 and np.isnan(z.numpy().real) and np.isnan(z.numpy().imag)
    close(nx.mean(np.array([1 + 1j, 3 - 3j], np.complex128)), 2 - 1j, np.complex128)


@SETTINGS
@given(case=reduction_case(dtypes=[np.int32, np.int64, np.float16, np.float32, np.float64]),
       name=st.sampled_from(["var", "std"]),
       correction=st.sampled_from([0, 1, 2, 0.5, 1.5]))
def test_var_std_correction(case, name, correction):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed))
    ax = tuple(a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)) \
        if axis is not None else tuple(range(len(shape)))
    n = int(np.prod([shape[a] for a in ax]))
    with quiet():
        want = getattr(np, name)(x.astype(np.float64), axis=axis, keepdims=keepdims,
                                 ddof=correction)
    if n - correction <= 0:  # the standard: nan (NumPy gives inf for a nonzero sum of squares)
        want = np.full(np.shape(want), np.nan)
    f = getattr(nx, name)
    close(f(x, axis, keepdims=keepdims, correction=correction), want, float_of(dtype))
    close(f(x, axis, correction, keepdims), want, float_of(dtype))        # ddof positionally
    close(f(x, axis=axis, ddof=correction, keepdims=keepdims), want, float_of(dtype))


def test_var_special_cases():
    close(nx.var(np.array([1.0, np.nan, 3.0])), np.nan, np.float64)
    close(nx.var(np.array([1.0, 2.0]), correction=2), np.nan, np.float64)
    close(nx.std(np.array([5.0]), correction=1), np.nan, np.float64)
    close(nx.var(nx.zeros((0,))), np.nan, np.float32)
    close(nx.var(np.array([3.0, 3.0])), 0.0, np.float64)


def test_var_std_bad_arguments():
    x = nx.ones(4)
    with pytest.raises(ValueError, match="ddof or correction"):
        nx.var(x, ddof=1, correction=1)
    with pytest.raises(ValueError, match="ddof or correction"):
        nx.std(x, None, 1, correction=0)
    with pytest.raises(TypeError, match="ddof must be a real number"):
        nx.var(x, None, np.float64)        # NumPy's positional dtype lands on ddof here
    with pytest.raises(TypeError, match="correction must be a real number"):
        nx.std(x, correction="1")
    # (complex var is NumPy's real variance: test_complex_max_min_var_std_match_numpy)


# == max / min / all / any / argmax / argmin =======================================================

@SETTINGS
@given(case=reduction_case(dtypes=[np.bool_, np.int8, np.uint32, np.int64, np.float16,
                                   np.float32, np.float64], min_side=1),
       name=st.sampled_from(["max", "min", "all", "any"]))
def test_max_min_all_any_tuple_axes_and_nan(case, name):
    shape, dtype, axis, keepdims, seed = case
    rng = np.random.default_rng(seed)
    x = rand(shape, dtype, rng)
    if x.dtype.kind == "f" and x.size:
        x = with_nans(x, rng, 0.2)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    dt = np.bool_ if name in ("all", "any") else dtype
    close(getattr(nx, name)(x, axis, keepdims), want, dt)


def test_max_min_empty_axis_raises():
    for f in (nx.max, nx.min, nx.nanmax, nx.nanmin, nx.ptp):
        with pytest.raises(ValueError, match="zero-size"):
            f(nx.zeros((3, 0)), 1)
        with pytest.raises(ValueError, match="zero-size"):
            f(nx.zeros((0,)))
    close(nx.max(nx.zeros((0, 3)), 1), np.zeros((0,)), np.float32)   # nothing empty reduced


def test_all_any_special_cases():
    x = np.array([[np.nan, 0.0], [0.0, 0.0]])
    close(nx.all(x, (0, 1)), False, np.bool_)
    close(nx.any(x, (1,)), [True, False], np.bool_)
    close(nx.all(nx.zeros((2, 0)), (0, 1), keepdims=True), [[True]], np.bool_)
    close(nx.any(np.array([0j, 1j])), True, np.bool_)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from([np.bool_, np.int8, np.uint16, np.int64, np.float32, np.float64]),
       data=st.data(), seed=seeds)
def test_argmax_argmin_keepdims(shape, dtype, data, seed):
    rng = np.random.default_rng(seed)
    x = rand(shape, dtype, rng)
    if x.dtype.kind == "f" and x.size > 1:
        x = with_nans(x, rng, 0.1)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1))
                     if shape else st.none())
    for name in ("argmax", "argmin"):
        got = getattr(nx, name)(x, axis=axis, keepdims=True)
        close(got, getattr(np, name)(x, axis=axis, keepdims=True), np.int32)
        close(getattr(nx, name)(x, axis), getattr(np, name)(x, axis=axis), np.int32)


def test_argmax_bad_input():
    with pytest.raises(ValueError, match="empty"):
        nx.argmax(nx.zeros((0,)))
    with pytest.raises(IndexError):
        nx.argmin(nx.zeros((2, 2)), 2)
    with pytest.raises(TypeError, match="argmax"):
        nx.argmax(np.ones(2, np.complex64))


def test_axis_errors():
    x = nx.ones((2, 3))
    for f in (nx.sum, nx.prod, nx.mean, nx.var, nx.max, nx.all, nx.nansum, nx.nanmax,
              nx.count_nonzero, nx.ptp):
        with pytest.raises(IndexError):
            f(x, 2)
        with pytest.raises(IndexError):
            f(x, (0, -3))
        with pytest.raises(ValueError, match="repeated"):
            f(x, (1, -1))
        with pytest.raises(TypeError):
            f(x, 1.0)


# == cumulative_sum / cumulative_prod ==============================================================

@SETTINGS
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(NUMERIC + [np.complex64]), data=st.data(), seed=seeds,
       name=st.sampled_from(["sum", "prod"]))
def test_cumulative_against_numpy(shape, dtype, data, seed, name):
    x = rand(shape, dtype, np.random.default_rng(seed), -2, 3)
    if np.dtype(dtype).kind == "c":
        x = (x + 1j * rand(shape, np.float32, np.random.default_rng(seed + 1))).astype(dtype)
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1) if nd > 1 else
                     st.one_of(st.none(), st.integers(-1, 0)))
    include_initial = data.draw(st.booleans())
    out_dtype = data.draw(st.sampled_from([None, np.int64, np.float64]))
    ref = getattr(np, "cumulative_" + name)
    kw = dict(axis=axis, include_initial=include_initial)
    with quiet():
        want = ref(x.astype(out_dtype or accumulation(dtype)), **kw)
    got = getattr(nx, "cumulative_" + name)(x, dtype=out_dtype, **kw)
    close(got, want, out_dtype or accumulation(dtype))


def test_cumulative_edge_cases():
    close(nx.cumulative_sum(nx.asarray(3.0), include_initial=True), [0.0, 3.0], np.float32)
    close(nx.cumulative_prod(nx.zeros((2, 0)), axis=1, include_initial=True),
          np.ones((2, 1)), np.float32)
    with quiet():
        close(nx.cumulative_sum(np.array([1.0, np.inf, -np.inf])), [1.0, np.inf, np.nan],
              np.float64)
    close(nx.cumulative_prod(np.array([2, 3, 4], np.uint8), include_initial=True),
          [1, 2, 6, 24], np.uint32)
    # cumsum/cumprod keep NumPy's (axis, dtype) positions
    close(nx.cumsum(np.ones((2, 2), np.int8), 1, np.float64), [[1, 2], [1, 2]], np.float64)
    close(nx.cumprod(np.full(3, 2.0), None, nx.float16), [2, 4, 8], np.float16)


def test_cumulative_bad_input():
    x = nx.ones((2, 3))
    for f in (nx.cumulative_sum, nx.cumulative_prod):
        with pytest.raises(ValueError, match="axis is required"):
            f(x)
        with pytest.raises(IndexError):
            f(x, axis=2)
        with pytest.raises(TypeError, match="axis"):
            f(x, axis=(0,))
        with pytest.raises(TypeError, match="include_initial must be a bool"):
            f(x, axis=0, include_initial=1)
        with pytest.raises(TypeError, match="dtype"):
            f(x, axis=0, dtype="nope")
        with pytest.raises(TypeError):
            f(x, 0)                          # axis is keyword-only


# == clip ==========================================================================================

@SETTINGS
@given(shape=st.lists(st.integers(0, 4), max_size=3).map(tuple),
       dtype=st.sampled_from([np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32,
                              np.float64]), data=st.data(), seed=seeds)
def test_clip_against_numpy(shape, dtype, data, seed):
    rng = np.random.default_rng(seed)
    x = rand(shape, dtype, rng, -5, 6)

    def bound():
        kind = data.draw(st.sampled_from(["none", "scalar", "array"]))
        if kind == "none":
            return None
        if kind == "scalar":
            v = data.draw(st.integers(0 if np.dtype(dtype).kind == "u" else -4, 4))
            return float(v) + 0.5 if np.dtype(dtype).kind == "f" else v
        sub = shape[len(shape) - data.draw(st.integers(0, len(shape))):]
        return rand(sub, dtype, rng, -4, 5)

    lo, hi = bound(), bound()
    want_lo = None if lo is None else np.asarray(lo, dtype)
    want_hi = None if hi is None else np.asarray(hi, dtype)
    want = x if lo is None and hi is None else np.clip(x, want_lo, want_hi)
    close(nx.clip(x, min=lo, max=hi), want.astype(dtype), dtype)      # the standard's names
    close(nx.clip(nx.asarray(x), lo, hi), want.astype(dtype), dtype)  # NumPy's positions
    close(nx.clip(x, a_min=lo, a_max=hi), want.astype(dtype), dtype)


def test_clip_dtype_rules_and_special_cases():
    f32 = np.array([-2.0, 0.5, np.nan, 7.0], np.float32)
    close(nx.clip(f32, 0, 1), np.clip(f32, 0, 1), np.float32)            # int scalars: weak
    close(nx.clip(f32, np.float64(0.25)), np.clip(f32, np.float32(0.25), None),
          np.float32)
    close(nx.clip(f32, np.zeros(4, np.float64), np.ones(4, np.int32)),
          np.clip(f32, 0, 1), np.float32)
    close(nx.clip(f32, min=np.nan), [np.nan] * 4, np.float32)           # nan bound gives nan
    close(nx.clip(f32, max=np.array([np.nan, 9, 9, 9], np.float32)),
          [np.nan, 0.5, np.nan, 7.0], np.float32)
    close(nx.clip(f32, 2, 1), [1.0, 1.0, np.nan, 1.0], np.float32)       # min > max: max
    i8 = np.array([-100, 0, 100], np.int8)
    close(nx.clip(i8, -1000, 1000), i8, np.int8)                          # cannot bind: no-op
    close(nx.clip(i8, np.int64(-5), np.uint8(5)), [-5, 0, 5], np.int8)
    close(nx.clip(np.array([0, 200], np.uint8), -1, 300), [0, 200], np.uint8)
    close(nx.clip(np.array([True, False]), False, False), [False, False], np.bool_)
    close(nx.clip(i8), i8, np.int8)
    x = nx.asarray(np.arange(6.0).reshape(2, 3))
    close(nx.clip(x, np.array([[1.0], [4.0]]), np.array([2.0, 3.0, 4.5])),
          np.clip(np.arange(6.0).reshape(2, 3), [[1.0], [4.0]], [2.0, 3.0, 4.5]), np.float64)


def test_clip_bad_input():
    i8 = np.array([1, 2], np.int8)
    with pytest.raises(TypeError, match="min is a float"):
        nx.clip(i8, 0.5)
    with pytest.raises(ValueError, match="min=200 is out of the range of int8"):
        nx.clip(i8, 200)
    with pytest.raises(ValueError, match="max=-129"):
        nx.clip(i8, None, -129)
    with pytest.raises(TypeError, match="both min and a_min"):
        nx.clip(i8, 0, a_min=1)
    with pytest.raises(TypeError, match="max has dtype int64"):
        nx.clip(i8, max=np.array([3], np.int64))
    with pytest.raises(TypeError, match="min has dtype float32"):
        nx.clip(i8, np.array([0.5], np.float32))
    with pytest.raises(TypeError, match="complex"):
        nx.clip(np.ones(2, np.complex64), 0, 1)
    with pytest.raises(TypeError, match="complex"):
        nx.clip(np.ones(2), 1j)
    with pytest.raises(TypeError, match="bool"):
        nx.clip(np.array([True]), 0, 1)
    with pytest.raises(ValueError, match="broadcast"):
        nx.clip(np.ones(3), np.zeros(2))


# == average =======================================================================================

@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from([np.int32, np.float32, np.float64]), data=st.data(), seed=seeds)
def test_average_against_numpy(shape, dtype, data, seed):
    rng = np.random.default_rng(seed)
    a = rand(shape, dtype, rng)
    nd = len(shape)
    axis = data.draw(st.one_of(
        st.none(), st.integers(-nd, nd - 1),
        st.lists(st.integers(0, nd - 1), unique=True, min_size=1).map(tuple)))
    form = data.draw(st.sampled_from(["none", "full", "along"] if axis is not None
                                     else ["none", "full"]))
    keepdims = data.draw(st.booleans())
    if form == "none":
        w = None
    elif form == "full":
        w = rng.uniform(0.1, 2.0, shape)
    else:
        ax = (axis,) if isinstance(axis, int) else axis
        w = rng.uniform(0.1, 2.0, tuple(shape[i] for i in ax))
    want, want_sum = np.average(a.astype(np.float64), axis=axis, weights=w, returned=True,
                                keepdims=keepdims)
    dt = np.float64 if (w is not None or dtype == np.float64) else np.float32
    got, got_sum = nx.average(a, axis, w, True, keepdims)
    close(got, want, dt)
    close(got_sum, np.broadcast_to(want_sum, np.shape(want)), dt)
    close(nx.average(a, axis=axis, weights=w, keepdims=keepdims), want, dt)


def test_average_weights_promote_and_zero_sum():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    close(nx.average(a, weights=np.array([1, 1, 2], np.int32)), 2.25, np.float32)
    close(nx.average(a, weights=np.array([1.0, 1.0, 2.0])), 2.25, np.float64)
    close(nx.average(a, weights=np.zeros(3, np.float32)), np.nan, np.float32)  # 0/0 (as JAX)


def test_average_bad_input():
    a = nx.ones((2, 3))
    with pytest.raises(TypeError, match="axis must be given"):
        nx.average(a, weights=np.ones(3))
    with pytest.raises(ValueError, match="weights of shape"):
        nx.average(a, 1, weights=np.ones(2))
    with pytest.raises(ValueError, match="weights of shape"):
        nx.average(a, (0, 1), weights=np.ones((3, 2)))
    with pytest.raises(TypeError, match="returned must be a bool"):
        nx.average(a, returned="yes")
    with pytest.raises(IndexError):
        nx.average(a, 2, weights=np.ones(3))


# == nan-aware reductions ==========================================================================

NAN_FUNCS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"]


@SETTINGS
@given(case=reduction_case(dtypes=[np.int8, np.int32, np.int64, np.float16, np.float32,
                                   np.float64]),
       name=st.sampled_from(NAN_FUNCS), frac=st.sampled_from([0.0, 0.3, 1.0]))
def test_nan_reductions_against_numpy(case, name, frac):
    shape, dtype, axis, keepdims, seed = case
    rng = np.random.default_rng(seed)
    x = rand(shape, dtype, rng, -2, 3)
    if x.dtype.kind == "f":
        x = with_nans(x, rng, frac)
    ref = getattr(np, name)
    xn = x.astype(np.float64) if name in ("nanmean", "nanvar", "nanstd") else x
    try:
        with quiet():
            want = ref(xn, axis=axis, keepdims=keepdims)
    except ValueError:  # zero-size reduction of nanmax/nanmin
        with pytest.raises(ValueError, match="zero-size"):
            getattr(nx, name)(x, axis, keepdims=keepdims)
        return
    if name in ("nansum", "nanprod"):
        dt = accumulation(dtype)
        with quiet():
            want = ref(x.astype(dt), axis=axis, keepdims=keepdims)
    elif name in ("nanmax", "nanmin"):
        dt = dtype
    else:
        dt = float_of(dtype)
    close(getattr(nx, name)(x, axis, keepdims=keepdims), want, dt)


@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_nanvar_nanstd_correction(correction):
    rng = np.random.default_rng(3)
    x = with_nans(rng.normal(size=(4, 6)), rng, 0.4)
    x[0] = np.nan          # an all-nan row: nan
    x[1, :5] = np.nan      # one value: nan for correction >= 1
    for name in ("nanvar", "nanstd"):
        with quiet():
            want = getattr(np, name)(x, axis=1, ddof=correction)
        want = np.where(np.sum(~np.isnan(x), 1) - correction > 0, want, np.nan)
        close(getattr(nx, name)(x, 1, ddof=correction), want, np.float64)
        close(getattr(nx, name)(x, 1, correction=correction), want, np.float64)


def test_nan_reductions_special_cases():
    allnan = np.full((2, 3), np.nan, np.float32)
    close(nx.nansum(allnan, 1), [0, 0], np.float32)
    close(nx.nanprod(allnan), 1, np.float32)
    close(nx.nanmean(allnan, 0), [np.nan] * 3, np.float32)
    close(nx.nanmax(allnan, 1), [np.nan] * 2, np.float32)
    close(nx.nanmin(allnan), np.nan, np.float32)
    close(nx.nanmean(nx.zeros((0,))), np.nan, np.float32)
    close(nx.nansum(nx.zeros((0, 2)), 0), [0, 0], np.float32)
    x = np.array([-np.inf, np.nan, np.inf])
    close(nx.nanmax(x), np.inf, np.float64)
    close(nx.nanmin(x), -np.inf, np.float64)
    close(nx.nanmax(np.array([np.nan, -np.inf])), -np.inf, np.float64)
    close(nx.nansum(np.array([1 + 1j, complex(np.nan, 0)], np.complex64)), 1 + 1j,
          np.complex64)
    close(nx.nanmean(np.array([1 + 1j, complex(0, np.nan), 3 + 3j], np.complex128)), 2 + 2j,
          np.complex128)
    close(nx.nansum(np.array([1, 2], np.int8), dtype=nx.float64), 3.0, np.float64)
    close(nx.nanmean(np.array([1, 2], np.int8), dtype=nx.float64), 1.5, np.float64)


def test_nan_reductions_bad_input():
    x = nx.ones(3)
    for name in NAN_FUNCS + ["ptp"]:
        with pytest.raises(TypeError, match=f"{name}: out must be None"):
            getattr(nx, name)(x, None, *([None] if name not in ("nanmax", "nanmin", "ptp")
                                          else []), x)
    with pytest.raises(ValueError, match="ddof or correction"):
        nx.nanvar(x, ddof=1, correction=1)
    with pytest.raises(TypeError, match="nanmean: dtype must be a float"):
        nx.nanmean(x, dtype=nx.int32)
    with pytest.raises(TypeError, match="nanvar"):
        nx.nanvar(np.ones(2, np.complex64))
    with pytest.raises(TypeError, match="nanmax"):
        nx.nanmax(np.ones(2, np.complex64))


# == ptp / count_nonzero ===========================================================================

@SETTINGS
@given(case=reduction_case(dtypes=[np.int8, np.uint8, np.int32, np.float32, np.float64],
                           min_side=1))
def test_ptp_against_numpy(case):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, dtype, np.random.default_rng(seed), -100, 100)
    with quiet():
        want = np.ptp(x, axis=axis, keepdims=keepdims)
    close(nx.ptp(x, axis, keepdims=keepdims), want, dtype)


@SETTINGS
@given(case=reduction_case(dtypes=[np.bool_, np.int8, np.uint16, np.float32, np.complex64]))
def test_count_nonzero_against_numpy(case):
    shape, dtype, axis, keepdims, seed = case
    x = rand(shape, np.int8 if dtype == np.complex64 else dtype,
             np.random.default_rng(seed), -1, 2).astype(dtype)
    want = np.count_nonzero(x, axis=axis, keepdims=keepdims)
    close(nx.count_nonzero(x, axis, keepdims=keepdims), np.asarray(want), np.int32)


def test_ptp_count_nonzero_special_cases():
    close(nx.ptp(np.array([1.0, np.nan])), np.nan, np.float64)
    close(nx.ptp(np.array([-100, 100], np.int8)), np.ptp(np.array([-100, 100], np.int8)),
          np.int8)   # wraps, as NumPy
    close(nx.count_nonzero(np.array([np.nan, 0.0, -0.0])), 1, np.int32)
    with pytest.raises(TypeError, match="ptp: not defined for bool"):
        nx.ptp(np.array([True]))
    with pytest.raises(TypeError, match="positional"):
        nx.count_nonzero(np.ones(2), 0, True)   # keepdims is keyword-only, as NumPy


# == cov / corrcoef ================================================================================

@SETTINGS
@given(vars_=st.integers(1, 4), obs=st.integers(2, 6), rowvar=st.booleans(),
       bias=st.booleans(), ddof=st.sampled_from([None, 0, 1, 2]),
       weights=st.sampled_from(["none", "f", "a", "fa"]), with_y=st.booleans(),
       dtype=st.sampled_from([np.int32, np.float32, np.float64]), seed=seeds)
@example(vars_=3, obs=2, rowvar=False, bias=False, ddof=None, weights="fa", with_y=True,
         dtype=np.int32, seed=2)    # one observation weighted, ddof 1: the divisor is v1 - v1
@example(vars_=1, obs=2, rowvar=False, bias=False, ddof=2, weights="fa", with_y=True,
         dtype=np.int32, seed=2)    # two observations, ddof 2: a finite divisor
@example(vars_=1, obs=3, rowvar=False, bias=False, ddof=2, weights="a", with_y=False,
         dtype=np.float32, seed=30659)    # a cancelling divisor in float32 (CI's find)
def test_cov_against_numpy(vars_, obs, rowvar, bias, ddof, weights, with_y, dtype, seed):
    rng = np.random.default_rng(seed)
    shape = (vars_, obs) if rowvar else (obs, vars_)
    m = rand(shape, dtype, rng)
    y = rand(shape, dtype, rng) if with_y else None
    fw = rng.integers(0, 4, obs) if "f" in weights else None
    if fw is not None:
        fw[0] = 1
    aw = rng.uniform(0.1, 2.0, obs) if "a" in weights else None
    with quiet():
        want = np.cov(m.astype(np.float64), None if y is None else y.astype(np.float64),
                      rowvar, bias, ddof, fw, aw)
    got = nx.cov(m, y, rowvar, bias, ddof, fw, aw)
    used = obs if fw is None else np.count_nonzero(fw)
    if (aw is not None and used == (1 if ddof is None and not bias else ddof)
            and np.isnan(got.numpy()).all()):
        # weighted, with as many observations as ddof: with one, the divisor is v1 - v1, 0 here
        # and a rounding residue of 0 in NumPy, whose 0 * (1 / residue) is then 0, not nan
        return
    if not np.isfinite(want).all():
        # no degrees of freedom left (divisor <= 0): the values are 0/0 or x/0, and whether a
        # centred sum is exactly 0 (nan) or a rounding residue (inf) depends on the precision
        np.testing.assert_array_equal(np.isfinite(got.numpy()), np.isfinite(want))
        return
    if aw is not None and float_of(dtype) == np.float32:
        # NumPy's divisor v1 - ddof * v2 / v1 cancels for few observations: float32 rounding of
        # the weights' sums is amplified by v1 / |divisor| (3 observations, ddof 2: 4.6e-5)
        w = aw * (fw if fw is not None else 1)
        v1, v2 = w.sum(), (w * aw).sum()
        d = (0 if bias else 1) if ddof is None else ddof
        amplify = max(1.0, v1 / abs(v1 - d * v2 / v1))
        assert got.numpy().dtype == np.float32
        np.testing.assert_allclose(got.numpy(), want.astype(np.float32), equal_nan=True,
                                   rtol=3e-5 * amplify, atol=3e-6 * amplify)
        return
    close(got, want, float_of(dtype))       # weights are converted to the data's dtype


def test_cov_shapes_and_special_cases():
    x = np.array([1.0, 2.0, 4.0])
    close(nx.cov(x), np.cov(x), np.float64)                               # 0-d
    close(nx.cov(x, x[::-1]), np.cov(x, x[::-1]), np.float64)
    close(nx.cov(x[None]), np.cov(x[None]), np.float64)
    close(nx.cov(np.ones((0, 3))), np.zeros((0, 0)), np.float64)
    close(nx.cov(np.ones((3, 2)), rowvar=False, dtype=nx.float32),
          np.cov(np.ones((3, 2)), rowvar=False), np.float32)
    with quiet():
        want = np.cov(np.array([[1.0, 2.0]]), ddof=2)                    # N - ddof = 0: inf/nan
    close(nx.cov(np.array([[1.0, 2.0]]), ddof=2), want, np.float64)
    close(nx.cov(np.array([[1.0, 2.0, 4.0]]), aweights=np.array([1.0, 2.0, 0.0])),
          np.cov(np.array([[1.0, 2.0, 4.0]]), aweights=np.array([1.0, 2.0, 0.0])), np.float64)


def test_cov_bad_input():
    with pytest.raises(ValueError, match="m has more than 2 dimensions"):
        nx.cov(nx.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="y has more than 2 dimensions"):
        nx.cov(nx.ones((2, 2)), nx.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="ddof must be an integer"):
        nx.cov(nx.ones((2, 3)), ddof=0.5)
    with pytest.raises(TypeError, match="fweights must be integer"):
        nx.cov(nx.ones((2, 3)), fweights=np.array([1.0, 1.5, 1.0]))
    with pytest.raises(ValueError, match="fweights cannot be negative"):
        nx.cov(nx.ones((2, 3)), fweights=np.array([1, -1, 1]))
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        nx.cov(nx.ones((2, 3)), aweights=np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="aweights has 2 entries for 3 observations"):
        nx.cov(nx.ones((2, 3)), aweights=np.ones(2))
    with pytest.raises(ValueError, match="fweights must be 1-D"):
        nx.cov(nx.ones((2, 3)), fweights=np.ones((1, 3), np.int32))
    with pytest.raises(ValueError, match="different numbers of observations"):
        nx.cov(nx.ones((2, 3)), nx.ones((2, 4)))
    with pytest.raises(TypeError, match="complex"):
        nx.cov(np.ones((2, 3), np.complex64))
    with pytest.raises(TypeError, match="cov: dtype must be a float"):
        nx.cov(nx.ones((2, 3)), dtype=nx.int32)


@SETTINGS
@given(vars_=st.integers(1, 4), obs=st.integers(2, 6), rowvar=st.booleans(),
       with_y=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]), seed=seeds)
def test_corrcoef_against_numpy(vars_, obs, rowvar, with_y, dtype, seed):
    rng = np.random.default_rng(seed)
    shape = (vars_, obs) if rowvar else (obs, vars_)
    x = rand(shape, dtype, rng)
    y = rand(shape, dtype, rng) if with_y else None
    want = np.corrcoef(x.astype(np.float64), None if y is None else y.astype(np.float64),
                       rowvar)
    got = nx.corrcoef(x, y, rowvar)
    close(got, want, dtype)
    assert np.all(np.abs(got.numpy()) <= 1)


def test_corrcoef_special_cases():
    close(nx.corrcoef(np.array([1.0, 2.0, 3.0])), 1.0, np.float64)
    with quiet():
        close(nx.corrcoef(np.array([2.0, 2.0])), np.nan, np.float64)
        close(nx.corrcoef(np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])),
              np.corrcoef(np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])), np.float64)
    x = np.array([1.0, 2.0, 3.0])
    close(nx.corrcoef(x, -2 * x), [[1.0, -1.0], [-1.0, 1.0]], np.float64)


# == derivatives against finite differences ========================================================

def test_derivatives_of_standard_reductions():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4))
    check_derivatives(lambda t: nx.sum(t, (0, 1), keepdims=True, dtype=nx.float64), [x])
    check_derivatives(lambda t: nx.prod(t, 1, dtype=nx.float64), [x])
    check_derivatives(lambda t: nx.mean(t, (1, 0)), [x])
    check_derivatives(lambda t: nx.var(t, 1, correction=1.5), [x])
    check_derivatives(lambda t: nx.std(t, (0,), ddof=1, keepdims=True), [x])
    check_derivatives(lambda t: nx.max(t, (0, 1)), [distinct(rng, (3, 4))])
    check_derivatives(lambda t: nx.min(t, 0, keepdims=True), [distinct(rng, (3, 4))])


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("include_initial", [False, True])
def test_derivatives_of_cumulative(name, include_initial):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 1.5, (3, 4))
    f = getattr(nx, name)
    check_derivatives(lambda t: f(t, axis=1, include_initial=include_initial), [x])
    check_derivatives(lambda t: f(t, axis=-2, include_initial=include_initial), [x])


def test_derivatives_of_clip():
    rng = np.random.default_rng(2)
    x = distinct(rng, (3, 4))
    lo = np.full((1, 4), -0.41)    # no ties with x (its values are ~k*0.3 +- 0.05)
    hi = np.array([0.52, 0.81, 1.12, 2.0])
    check_derivatives(lambda t: nx.clip(t, -0.5, 0.55), [x])
    check_derivatives(lambda t, a, b: nx.clip(t, a, b), [x, lo, hi])
    check_derivatives(lambda t, b: nx.clip(t, max=b), [x, hi])


def test_clip_derivative_at_ties_splits_like_maximum():
    g = nx.grad(lambda t: nx.sum(nx.clip(t, 0.0, 1.0)))(nx.asarray([0.0, 0.5, 1.0, 2.0]))
    close(g, [0.5, 1.0, 0.5, 0.0], np.float32)


def test_derivatives_of_average():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 4))
    w = rng.uniform(0.5, 2.0, (3, 4))
    w1 = rng.uniform(0.5, 2.0, 4)
    check_derivatives(lambda t, v: nx.average(t, weights=v), [a, w])
    check_derivatives(lambda t, v: nx.average(t, 1, v, keepdims=True), [a, w1])
    check_derivatives(lambda t, v: nx.average(t, (1, 0), weights=v), [a, w.T])
    check_derivatives(lambda t, v: nx.average(t, 0, v, returned=True)[1], [a, w[:, :1].ravel()])
    check_derivatives(lambda t: nx.average(t, 0), [a])


@pytest.mark.parametrize("name", NAN_FUNCS)
def test_derivatives_of_nan_reductions(name):
    rng = np.random.default_rng(4)
    x = distinct(rng, (4, 5)) if name in ("nanmax", "nanmin") else rng.uniform(0.5, 1.5, (4, 5))
    x[rng.uniform(size=x.shape) < 0.3] = np.nan
    x[0, :] = np.nan                 # an all-nan row
    x[1, :2] = [0.7, -0.4]
    f = getattr(nx, name)
    for axis in (1, None, (0, 1)):
        if axis == 1 and name not in ("nansum", "nanprod"):
            # the all-nan row's value is nan, and so is its finite difference: leave it out
            check_derivatives(lambda t: f(t[1:], axis), [x])
        else:
            check_derivatives(lambda t: f(t, axis), [x])
    # the derivative at nan entries is exactly 0 (not nan)
    g = nx.grad(lambda t: nx.sum(f(t, 1)) if name in ("nansum", "nanprod")
                else nx.sum(f(t[1:], 1)))(f64_tensor(x)).numpy()
    assert np.all(g[np.isnan(x)] == 0) and np.all(np.isfinite(g))


def test_nan_reductions_derivative_with_ddof():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 6))
    x[rng.uniform(size=x.shape) < 0.3] = np.nan
    x[:, 0] = [1.0, 2.0, 4.0]
    x[:, 1] = [0.5, -1.0, 3.0]
    check_derivatives(lambda t: nx.nanvar(t, 1, ddof=1), [x])
    check_derivatives(lambda t: nx.nanstd(t, 0, correction=0.5), [x[:, :2]])


def test_derivatives_of_ptp():
    rng = np.random.default_rng(6)
    check_derivatives(lambda t: nx.ptp(t, 1), [distinct(rng, (3, 4))])


@pytest.mark.parametrize("rowvar", [True, False])
def test_derivatives_of_cov_and_corrcoef(rowvar):
    rng = np.random.default_rng(7)
    m = rng.normal(size=(3, 5) if rowvar else (5, 3))
    y = rng.normal(size=(2, 5) if rowvar else (5, 2))
    aw = rng.uniform(0.5, 2.0, 5)
    fw = np.array([1, 2, 1, 3, 1])
    check_derivatives(lambda t: nx.cov(t, rowvar=rowvar), [m])
    check_derivatives(lambda t, u: nx.cov(t, u, rowvar, ddof=0), [m, y])
    check_derivatives(lambda t, w: nx.cov(t, rowvar=rowvar, fweights=fw, aweights=w), [m, aw])
    check_derivatives(lambda t, w: nx.cov(t, rowvar=rowvar, aweights=w, bias=True), [m, aw])
    check_derivatives(lambda t: nx.corrcoef(t, rowvar=rowvar), [m], rtol=1e-5, atol=1e-6)
    check_derivatives(lambda t, u: nx.corrcoef(t, u, rowvar), [m, y], rtol=1e-5, atol=1e-6)


def test_second_order_through_var_and_nanmean():
    rng = np.random.default_rng(8)
    x = rng.normal(size=5)
    # Hessian of var(x) (correction c) is 2/(n - c) (I - 11^T/n)
    n, c = 5, 1
    h = nx.hessian(lambda t: nx.var(t, correction=c))(f64_tensor(x)).numpy()
    np.testing.assert_allclose(h, 2 / (n - c) * (np.eye(n) - np.ones((n, n)) / n), atol=1e-12)
    xn = x.copy()
    xn[2] = np.nan
    h = nx.hessian(lambda t: nx.nanmean(t) ** 2)(f64_tensor(xn)).numpy()
    keep = ~np.isnan(xn)
    want = np.outer(keep, keep) * 2 / keep.sum() ** 2
    np.testing.assert_allclose(h, want, atol=1e-12)


def test_nanmax_nanmin_derivative_ties_and_infinities():
    g = nx.grad(lambda t: nx.nanmax(t))(f64_tensor([np.nan, 1.0, 1.0, 0.0])).numpy()
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 0.0])
    g = nx.grad(lambda t: nx.nanmin(t))(f64_tensor([np.nan, -np.inf, 3.0])).numpy()
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])   # nan entries take no share of a tie
    g = nx.grad(lambda t: nx.sum(nx.nanmax(t, 1)))(f64_tensor([[np.nan, np.nan], [1, 2]]))
    np.testing.assert_array_equal(g.numpy(), [[0.0, 0.0], [0.0, 1.0]])


# -- complex max, min, var, std ----------------------------------------------------------------

def test_complex_max_min_var_std_match_numpy():
    # max/min order complex values lexicographically (NumPy's and JAX's), ties on the real part
    # broken by the imaginary part; var/std are real: the mean of |x - mean|^2
    x = np.array([[1 + 2j, 3 - 1j, 3 + 0.5j, 2 + 9j], [-1 + 5j, -1 + 5j, 0j, -1 - 2j]])
    for dt in (np.complex128, np.complex64):
        xd = x.astype(dt)
        for name in ("max", "min"):
            for axis in (None, 0, 1, (0, 1)):
                for keepdims in (False, True):
                    got = getattr(nx, name)(xd, axis, keepdims)
                    want = getattr(np, name)(xd, axis=axis, keepdims=keepdims)
                    assert got.dtype == dt and got.shape == want.shape
                    np.testing.assert_array_equal(np.asarray(got), want)
        for name in ("var", "std"):
            for axis, ddof in ((None, 0), (0, 0), (1, 1)):
                got = getattr(nx, name)(xd, axis, ddof)
                want = getattr(np, name)(xd, axis=axis, ddof=ddof)
                assert got.dtype == want.dtype
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6 if dt ==
                                           np.complex64 else 1e-14)


def test_complex_max_min_var_derivatives():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    c = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    # max picks one element per column: the cotangent lands there (Re(c * max): conj-free
    # pairing, so the gradient is c at the chosen entry)
    for name, pick in (("max", np.argmax), ("min", np.argmin)):
        g = nx.grad(lambda x: nx.real(nx.sum(getattr(nx, name)(x, 0) * c)))(x)
        want = np.zeros_like(x)
        idx = pick(x.real, axis=0)
        want[idx, np.arange(4)] = c
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-14)
    # an exact tie splits the cotangent
    g = nx.grad(lambda x: nx.real(nx.max(x)))(np.array([1 + 1j, 1 + 1j, 0j]))
    np.testing.assert_allclose(np.asarray(g), [0.5, 0.5, 0])
    # var and std: derivatives along complex directions against central differences, and
    # under vmap / jit
    d = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    for name in ("var", "std"):
        f = getattr(nx, name)
        _, tan = nx.jvp(lambda x: f(x, 1), (x,), (d,))
        eps = 1e-6
        fd = (getattr(np, name)(x + eps * d, axis=1) - getattr(np, name)(x - eps * d, axis=1)) \
            / (2 * eps)
        np.testing.assert_allclose(np.asarray(tan), fd, rtol=1e-6)
        gv = nx.vmap(nx.grad(lambda r: f(r)))(x)
        gj = nx.jit(nx.vmap(nx.grad(lambda r: f(r))))(x)
        np.testing.assert_allclose(np.asarray(gv), np.asarray(gj), rtol=1e-14)
        # Re(conj-free pairing): d var = Re(sum(g * dx))
        for i in range(3):
            ei = (getattr(np, name)(x[i] + eps * d[i]) - getattr(np, name)(x[i] - eps * d[i])) \
                / (2 * eps)
            np.testing.assert_allclose(np.real(np.sum(np.asarray(gv)[i] * d[i])), ei,
                                       rtol=1e-6)
