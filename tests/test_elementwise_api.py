"""The Array API standard's and NumPy's elementwise functions: values against NumPy for every
dtype over special values (nan, +-inf, +-0.0, huge, tiny, subnormal, complex branch cuts), the
standard's special cases pinned, dtype rules, the ``<<``/``>>`` operators against Python's
integers, derivatives at special points (JAX's values pinned) and bad input."""
import math

import numpy as np
import pytest

import nx_rune as nx

FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
INTS = SIGNED + UNSIGNED


def special_floats(dtype):
    """Every special value class of a float dtype, as a 1-d array."""
    info = np.finfo(dtype)
    vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5,
            2.5, -2.5, 0.9999, -0.9999, 1.0001, 3.0, -3.7, 10.0, 100.0, 0.1, 1e4, -1e4, 7.25,
            float(info.max), -float(info.max), float(info.tiny), -float(info.tiny),
            float(info.smallest_subnormal), -float(info.smallest_subnormal),
            float(info.eps), 2.0 ** (info.nmant + 1) + 2.0]
    return np.array(vals, dtype=dtype)


def special_complex(dtype):
    """All pairs of special real and imaginary parts (branch cuts: +-0.0 next to |x| > 1)."""
    part = np.finfo(dtype).dtype.type
    big = 1e30 if dtype == np.complex64 else 1e300
    comps = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 2.5, big, 1e-30]
    re, im = np.meshgrid(np.array(comps, part), np.array(comps, part))
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out.reshape(-1)


def ints(dtype):
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 3, 7, 100, int(info.max), int(info.max) - 1, int(info.min), int(info.min) + 1]
    if info.min < 0:
        vals += [-1, -2, -7, -100]
    return np.array(vals, dtype=dtype)


def assert_same(got, want):
    """Same dtype, shape and values; nan where NumPy has nan; the sign of zeros too."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "c":
        assert_same(got.real, want.real)
        assert_same(got.imag, want.imag)
        return
    if want.dtype.kind == "f":
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan], want[~nan])
        np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))
    else:
        np.testing.assert_array_equal(got, want)


def reference(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args)


# -- unary functions against NumPy -------------------------------------------------------------

def expm1_standard(z):
    """np.expm1, except for non-finite or zero complex z: exp(z) - 1, whose parts follow C99's
    special cases as the standard requires (NumPy's complex expm1 gives nan parts there, and
    -0.0 for expm1(-0 + 0j) where the standard has +0)."""
    out = np.asarray(np.expm1(z))
    if out.dtype.kind == "c":
        bad = ~np.isfinite(z) | (z == 0)
        out[bad] = np.exp(z[bad]) - 1
    return out


def tanh_standard(z):
    """np.tanh, except for complex z with an infinite real part and a finite imaginary part y:
    +-1 with a zero imaginary part of y's sign, as the standard requires (C99 and NumPy give
    the zero the sign of sin(2y))."""
    out = np.asarray(np.tanh(z))
    if out.dtype.kind == "c":
        big = np.isinf(z.real) & np.isfinite(z.imag)
        out.real[big] = np.copysign(1.0, z.real[big])
        out.imag[big] = np.copysign(0.0, z.imag[big])
    return out


# (nx function, NumPy function, defined for complex)
UNARY = [
    (nx.tan, np.tan, True), (nx.arcsin, np.arcsin, True), (nx.asin, np.arcsin, True),
    (nx.arccos, np.arccos, True), (nx.acos, np.arccos, True), (nx.arctan, np.arctan, True),
    (nx.atan, np.arctan, True), (nx.sinh, np.sinh, True), (nx.cosh, np.cosh, True),
    (nx.arcsinh, np.arcsinh, True), (nx.asinh, np.arcsinh, True),
    (nx.arccosh, np.arccosh, True), (nx.acosh, np.arccosh, True),
    (nx.arctanh, np.arctanh, True), (nx.atanh, np.arctanh, True), (nx.log10, np.log10, True),
    (nx.sqrt, np.sqrt, True), (nx.exp, np.exp, True), (nx.log, np.log, True),
    (nx.sin, np.sin, True), (nx.cos, np.cos, True), (nx.tanh, tanh_standard, True),
    (nx.expm1, expm1_standard, True), (nx.log1p, np.log1p, True), (nx.log2, np.log2, True),
    (nx.exp2, np.exp2, True), (nx.abs, np.abs, True), (nx.absolute, np.abs, True),
    (nx.sign, np.sign, True), (nx.rint, np.rint, True), (nx.round, np.round, True),
    (nx.conj, np.conj, True), (nx.conjugate, np.conjugate, True), (nx.real, np.real, True),
    (nx.imag, np.imag, True), (nx.isnan, np.isnan, True), (nx.isinf, np.isinf, True),
    (nx.isfinite, np.isfinite, True), (nx.angle, np.angle, True), (nx.sinc, np.sinc, True),
    (nx.square, np.square, True), (nx.reciprocal, np.reciprocal, True),
    (nx.positive, np.positive, True), (nx.nan_to_num, np.nan_to_num, True),
    (nx.floor, np.floor, False), (nx.ceil, np.ceil, False), (nx.trunc, np.trunc, False),
    (nx.fix, np.fix, False), (nx.deg2rad, np.deg2rad, False), (nx.radians, np.radians, False),
    (nx.rad2deg, np.rad2deg, False), (nx.degrees, np.degrees, False),
    (nx.signbit, np.signbit, False), (nx.isposinf, np.isposinf, False),
    (nx.isneginf, np.isneginf, False),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn,ref,_", UNARY, ids=lambda v: getattr(v, "__name__", ""))
def test_unary_real_floats_match_numpy(fn, ref, _, dtype):
    x = special_floats(dtype)
    assert_same(fn(nx.asarray(x)), reference(ref, x))


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn,ref", [(f, r) for f, r, c in UNARY if c],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_unary_complex_match_numpy(fn, ref, dtype):
    z = special_complex(dtype)
    assert_same(fn(nx.asarray(z)), reference(ref, z))


@pytest.mark.parametrize("fn,ref", [(nx.floor, np.floor), (nx.ceil, np.ceil),
                                    (nx.trunc, np.trunc), (nx.rint, np.rint),
                                    (nx.round, np.round), (nx.fix, np.fix)])
@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_rounding_integers_keeps_dtype_and_values(fn, ref, dtype):
    x = ints(dtype)
    out = fn(nx.asarray(x))
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), x)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_integer_abs_sign_parts_tests(dtype):
    x = ints(dtype)
    t = nx.asarray(x)
    assert_same(nx.abs(t), np.abs(x))           # wraps at the minimum, as NumPy
    assert_same(nx.sign(t), np.sign(x))
    assert_same(nx.real(t), np.real(x))
    assert_same(nx.imag(t), np.imag(x))
    assert_same(nx.conj(t), np.conj(x))
    assert_same(nx.signbit(t), np.signbit(x))
    assert_same(nx.isnan(t), np.isnan(x))
    assert_same(nx.isinf(t), np.isinf(x))
    assert_same(nx.isfinite(t), np.isfinite(x))
    assert_same(nx.nan_to_num(t), np.nan_to_num(x))
    assert_same(nx.positive(t), x)


@pytest.mark.parametrize("fn,ref", [(nx.tan, np.tan), (nx.arcsinh, np.arcsinh),
                                    (nx.log10, np.log10), (nx.deg2rad, np.deg2rad),
                                    (nx.sinc, np.sinc)])
@pytest.mark.parametrize("dtype,float_dtype", [(np.int32, np.float32), (np.int64, np.float64),
                                               (np.bool_, np.float32), (np.uint8, np.float32)])
def test_transcendental_of_integers_is_float(fn, ref, dtype, float_dtype):
    x = np.array([0, 1, 3], dtype=dtype)
    assert_same(fn(nx.asarray(x)), reference(ref, x.astype(float_dtype)))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")   # 10**5 in float16, as NumPy
@pytest.mark.parametrize("decimals", [-3, -1, 1, 2, 5])
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX, ids=lambda d: np.dtype(d).name)
def test_round_decimals_matches_numpy(decimals, dtype):
    rng = np.random.default_rng(decimals + 10)
    x = (rng.uniform(-500, 500, 64) * rng.choice([1, 1e-3], 64)).astype(dtype)
    x = np.concatenate([x, special_floats(np.float16).astype(dtype)[:12],
                        np.array([0.125, 2.5, -2.5, 1250, 0.005], dtype)])
    if np.dtype(dtype).kind == "c":
        x = reference(lambda x: x + (1j * x[::-1]).astype(dtype), x)
    assert_same(nx.round(nx.asarray(x), decimals), reference(np.round, x, decimals))


@pytest.mark.parametrize("decimals", [-1, -2, -3, -20])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16],
                         ids=lambda d: np.dtype(d).name)
def test_round_integers_negative_decimals_match_numpy(decimals, dtype):
    x = np.array([0, 5, 15, 25, 35, 44, 45, 46, 99, 120, -5, -15, -25, -125], dtype=np.int64)
    info = np.iinfo(dtype)
    x = x[(x >= info.min) & (x <= info.max)].astype(dtype)
    assert_same(nx.round(nx.asarray(x), decimals), np.round(x, decimals))


# -- binary functions against NumPy --------------------------------------------------------------

BINARY = [(nx.atan2, np.arctan2), (nx.arctan2, np.arctan2), (nx.hypot, np.hypot),
          (nx.copysign, np.copysign), (nx.logaddexp, np.logaddexp),
          (nx.logaddexp2, np.logaddexp2), (nx.nextafter, np.nextafter),
          (nx.heaviside, np.heaviside)]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn,ref", BINARY, ids=lambda v: getattr(v, "__name__", ""))
def test_binary_floats_match_numpy_on_all_pairs(fn, ref, dtype):
    x = special_floats(dtype)
    a, b = x[:, None], x[None, :]            # every pair, through broadcasting
    assert_same(fn(nx.asarray(a), nx.asarray(b)), reference(ref, a, b))


@pytest.mark.parametrize("fn,ref", BINARY, ids=lambda v: getattr(v, "__name__", ""))
def test_binary_weak_python_scalars_keep_the_dtype(fn, ref):
    x = special_floats(np.float16)
    assert_same(fn(nx.asarray(x), 1.5), reference(ref, x, np.float16(1.5)))
    assert_same(fn(-2.0, nx.asarray(x)), reference(ref, np.float16(-2.0), x))


def test_binary_integers_and_mixed_dtypes_promote():
    i = np.array([0, 1, -3], np.int32)
    f = np.array([2.0, -0.0, 1.0], np.float64)
    out = nx.hypot(nx.asarray(i), nx.asarray(i))
    assert_same(out, np.hypot(i.astype(np.float32), i.astype(np.float32)))
    assert_same(nx.atan2(nx.asarray(f.astype(np.float32)), nx.asarray(f)),
                np.arctan2(f.astype(np.float32), f))


# -- the standard's special cases, pinned (independent of NumPy) -----------------------------------

def v(t):
    return np.asarray(t).item()


def test_standard_special_cases_pinned():
    def sb(x):
        return math.copysign(1.0, x) < 0
    assert v(nx.abs(nx.asarray(-0.0))) == 0.0 and not sb(v(nx.abs(nx.asarray(-0.0))))
    assert sb(v(nx.tan(nx.asarray(-0.0))))
    assert math.isnan(v(nx.tan(nx.asarray(np.inf))))
    assert sb(v(nx.floor(nx.asarray(-0.0)))) and sb(v(nx.ceil(nx.asarray(-0.5))))
    assert sb(v(nx.trunc(nx.asarray(-0.5)))) and sb(v(nx.round(nx.asarray(-0.5))))
    assert v(nx.round(nx.asarray(2.5))) == 2.0 and v(nx.round(nx.asarray(3.5))) == 4.0
    nz = v(nx.nextafter(nx.asarray(-0.0), nx.asarray(0.0)))
    assert nz == 0.0 and not sb(nz)
    assert sb(v(nx.nextafter(nx.asarray(0.0), nx.asarray(-0.0))))
    assert v(nx.nextafter(nx.asarray(np.float32(1)), 2.0)) == 1 + 2.0 ** -23
    assert v(nx.hypot(nx.asarray(np.inf), nx.asarray(np.nan))) == np.inf
    assert v(nx.hypot(nx.asarray(np.nan), nx.asarray(-np.inf))) == np.inf
    assert v(nx.hypot(nx.asarray(np.float32(3e38)), nx.asarray(np.float32(3e38)))) == np.inf
    assert v(nx.hypot(nx.asarray(np.float32(2e38)), nx.asarray(np.float32(1e38)))) > 2e38
    assert v(nx.hypot(nx.asarray(np.float32(3e-39)), nx.asarray(np.float32(4e-39)))) > 0
    assert v(nx.logaddexp(nx.asarray(np.inf), nx.asarray(-np.inf))) == np.inf
    assert math.isnan(v(nx.logaddexp(nx.asarray(np.inf), nx.asarray(np.nan))))
    assert v(nx.logaddexp(nx.asarray(1000.0), nx.asarray(1000.0))) == pytest.approx(
        1000 + math.log(2))
    assert sb(v(nx.copysign(nx.asarray(np.nan), nx.asarray(-1.0))))
    assert sb(v(nx.copysign(nx.asarray(3.0), nx.asarray(-np.nan))))
    assert not sb(v(nx.copysign(nx.asarray(-3.0), nx.asarray(0.0))))
    assert np.asarray(nx.signbit(nx.asarray([-0.0, 0.0, -np.nan, np.nan, -np.inf]))).tolist() == \
        [True, False, True, False, True]
    assert v(nx.atan2(nx.asarray(0.0), nx.asarray(-0.0))) == np.float32(math.pi)
    assert sb(v(nx.atan2(nx.asarray(-0.0), nx.asarray(0.0))))
    assert v(nx.cosh(nx.asarray(-np.inf))) == np.inf
    assert sb(v(nx.arcsinh(nx.asarray(-0.0))))
    assert v(nx.arccosh(nx.asarray(1.0))) == 0.0 and math.isnan(v(nx.arccosh(nx.asarray(0.5))))
    assert v(nx.arctanh(nx.asarray(-1.0))) == -np.inf
    assert v(nx.log10(nx.asarray(-0.0))) == -np.inf and v(nx.log10(nx.asarray(1.0))) == 0.0


def test_complex_special_cases_pinned():
    def c(re, im, dtype=np.complex128):
        out = np.empty((), dtype)
        out.real, out.imag = re, im
        return nx.asarray(out)
    assert v(nx.isinf(c(np.inf, np.nan))) is True and v(nx.isinf(c(np.nan, -np.inf))) is True
    assert v(nx.isinf(c(np.nan, 1.0))) is False
    assert v(nx.isnan(c(1.0, np.nan))) is True and v(nx.isfinite(c(1.0, np.inf))) is False
    assert v(nx.abs(c(np.nan, np.inf))) == np.inf and v(nx.abs(c(-np.inf, np.nan))) == np.inf
    assert v(nx.abs(c(3e300, 4e300))) == pytest.approx(5e300)    # no overflow of 9e600
    assert v(nx.abs(c(3.0, -4.0, np.complex64))) == 5.0
    assert nx.abs(c(3.0, -4.0, np.complex64)).dtype == np.float32
    assert v(nx.sign(c(3.0, -4.0))) == pytest.approx(0.6 - 0.8j)
    assert v(nx.sign(c(0.0, -0.0))) == 0
    # complex tan does not overflow through sin/cos: tan(x + iy) -> +-i for |y| large
    t = v(nx.tan(c(1.0, 1000.0, np.complex64)))
    assert t.real == pytest.approx(0.0, abs=1e-30) and t.imag == 1.0
    t = v(nx.tan(c(-2.0, -800.0)))
    assert t.real == pytest.approx(0.0, abs=1e-300) and t.imag == -1.0
    # expm1: the standard's (C99's) special cases, where NumPy gives nan parts
    for z, want in (((np.inf, 0.0), (np.inf, 0.0)), ((np.nan, 0.0), (np.nan, 0.0)),
                    ((-0.0, 0.0), (0.0, 0.0)), ((-0.0, -0.0), (0.0, -0.0)),
                    ((-np.inf, np.nan), (-1.0, 0.0)), ((-np.inf, 2.0), (-1.0, 0.0)),
                    ((np.inf, np.nan), (np.inf, np.nan)), ((0.0, np.inf), (np.nan, np.nan))):
        got = v(nx.expm1(c(*z)))
        assert_same(np.array([got.real, got.imag]), np.array(want))
    got = v(nx.expm1(c(-np.inf, np.inf)))
    assert abs(got.real) == 1.0 and got.imag == 0.0
    assert np.asarray(nx.equal(nx.asarray([1 + 2j, np.nan + 0j, 3j]),
                               nx.asarray([1 + 2j, np.nan + 0j, -3j]))).tolist() == \
        [True, False, False]
    assert np.asarray(nx.not_equal(nx.asarray([1 + 2j, np.nan + 0j]), 1 + 2j)).tolist() == \
        [False, True]


def test_sinc_equals_numpy_bitwise_on_many_points():
    for dtype in (np.float32, np.float64):
        x = np.linspace(-7, 7, 2001).astype(dtype)
        assert_same(nx.sinc(nx.asarray(x)), np.sinc(x))


def test_real_imag_dtype_and_zero_imag_of_reals():
    z = np.array([1 - 2j, 0.5j], np.complex64)
    assert nx.real(nx.asarray(z)).dtype == np.float32 and nx.imag(nx.asarray(z)).dtype == np.float32
    x = np.array([1.5, -2.0], np.float64)
    assert_same(nx.imag(nx.asarray(x)), np.zeros(2))
    assert nx.real(nx.asarray(x)).dtype == np.float64


# -- bit shifts against Python's integers ----------------------------------------------------------

def python_shift(x, c, bits, signed, left):
    if left:
        r = (x << c) % (1 << bits)
        return r - (1 << bits) if signed and r >= 1 << (bits - 1) else r
    return x >> c          # Python's >> is arithmetic (floor division by 2**c)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
def test_shifts_match_python_integers_including_counts_past_the_width(dtype, left):
    info = np.iinfo(dtype)
    x = ints(dtype)
    counts = np.arange(0, info.bits + 4, dtype=dtype)
    a, b = x[:, None], counts[None, :]
    fn = nx.bitwise_left_shift if left else nx.bitwise_right_shift
    out = fn(nx.asarray(a), nx.asarray(b))
    assert out.dtype == np.dtype(dtype) and out.shape == (x.size, counts.size)
    want = [[python_shift(int(xi), int(ci), info.bits, info.min < 0, left) for ci in counts]
            for xi in x]
    assert np.asarray(out).tolist() == want


def test_shift_operators_and_promotion():
    t = nx.asarray(np.array([1, -8, 5], np.int16))
    assert_same(t << 3, np.array([8, -64, 40], np.int16))
    assert_same(t >> 2, np.array([0, -2, 1], np.int16))
    assert_same(3 << nx.asarray(np.array([0, 2], np.int8)), np.array([3, 12], np.int8))
    assert_same(1000 >> nx.asarray(np.array([1, 3], np.int32)), np.array([500, 125], np.int32))
    a = nx.asarray(np.array([1, 2], np.int8))
    b = nx.asarray(np.array([9, 1], np.int32))
    assert_same(a << b, np.array([512, 4], np.int32))        # promoted to int32 first
    assert_same(a >> b, np.array([0, 1], np.int32))


# -- NumPy extras: comparisons, nan_to_num, clip, heaviside ---------------------------------------

def _mixed(rng, n, dtype):
    x = rng.standard_normal(n).astype(dtype)
    x[rng.random(n) < 0.15] = np.nan
    x[rng.random(n) < 0.1] = np.inf
    x[rng.random(n) < 0.1] = -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_allclose_array_equal_match_numpy(dtype, equal_nan):
    rng = np.random.default_rng(3)
    a = _mixed(rng, 200, np.float64).astype(dtype)
    b = a.copy()
    b[::3] = reference(np.multiply, a[::3], 1 + rng.uniform(-2e-5, 2e-5, a[::3].shape))
    b[::7] = _mixed(rng, b[::7].size, np.float64)
    if np.dtype(dtype).kind == "c":
        b = reference(lambda b: b + 1e-9j, b)
    for rtol, atol in ((1e-5, 1e-8), (1e-3, 0.0), (0.0, 1e-2)):
        got = nx.isclose(nx.asarray(a), nx.asarray(b), rtol=rtol, atol=atol, equal_nan=equal_nan)
        assert_same(got, np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
        got = nx.allclose(nx.asarray(a[:20]), nx.asarray(b[:20]), rtol, atol, equal_nan)
        assert got.shape == () and bool(got) == np.allclose(a[:20], b[:20], rtol, atol, equal_nan)
    for x, y in ((a, a), (a, b), (a, a.copy())):
        got = nx.array_equal(nx.asarray(x), nx.asarray(y), equal_nan=equal_nan)
        assert got.shape == () and bool(got) == np.array_equal(x, y, equal_nan=equal_nan)


def test_allclose_and_array_equal_shapes():
    a = nx.asarray(np.ones((2, 3)))
    assert bool(nx.allclose(a, 1.0)) and bool(nx.allclose(a, nx.asarray(np.ones(3))))
    assert not bool(nx.array_equal(a, nx.asarray(np.ones(3))))      # no broadcasting
    assert bool(nx.array_equal(nx.asarray(np.zeros((0, 2))), nx.asarray(np.zeros((0, 2)))))
    assert bool(nx.allclose(nx.asarray(np.zeros(0)), nx.asarray(np.zeros(0))))
    assert bool(nx.array_equal(nx.asarray([1, 2]), nx.asarray([1.0, 2.0])))
    with pytest.raises(ValueError, match="broadcast"):
        nx.allclose(a, nx.asarray(np.ones(4)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
def test_nan_to_num_with_fill_values(dtype):
    x = special_floats(np.float16).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = reference(lambda x: x + (1j * x[::-1]).astype(dtype), x)
    for kw in ({}, {"nan": -1.0, "posinf": 7.0, "neginf": -9.5}, {"posinf": 1e3}):
        assert_same(nx.nan_to_num(nx.asarray(x), **kw), np.nan_to_num(x, **kw))


def test_clip_standard_keywords_and_numpy_names():
    x = np.array([-3.0, -0.5, 0.0, 2.0, np.nan, 7.0], np.float32)
    t = nx.asarray(x)
    assert_same(nx.clip(t, min=-1.0, max=1.0), np.clip(x, -1.0, 1.0))
    assert_same(nx.clip(t, -1, 1), np.clip(x, np.float32(-1), np.float32(1)))
    assert_same(nx.clip(t, a_min=0.0), np.clip(x, 0.0, None))
    assert_same(nx.clip(t, max=nx.asarray(np.float32(1.0))), np.clip(x, None, np.float32(1)))
    assert_same(nx.clip(t, min=np.nan), np.full(6, np.nan, np.float32))   # a nan bound gives nan
    assert_same(nx.clip(t), x)
    i = np.array([-128, -5, 0, 100, 127], np.int8)
    # Python int bounds beyond int8's range: the dtype stays int8 and the result is exact
    assert_same(nx.clip(nx.asarray(i), -1000, 1000), i)
    assert_same(nx.clip(nx.asarray(i), -5, 300), np.clip(i, -5, 127))
    lo = np.array([[0.0], [-1.0]], np.float32)
    assert_same(nx.clip(t, min=nx.asarray(lo)), np.clip(x, lo, None))


def test_heaviside_and_angle_values():
    x = np.array([-2.0, -0.0, 0.0, 3.0, np.nan, -np.inf, np.inf])
    assert_same(nx.heaviside(nx.asarray(x), 0.5), np.heaviside(x, 0.5))
    assert_same(nx.heaviside(nx.asarray(x), nx.asarray(x)), np.heaviside(x, x))
    assert_same(nx.angle(nx.asarray(x)), np.angle(x))
    z = special_complex(np.complex128)
    assert_same(nx.angle(nx.asarray(z), deg=True), reference(np.angle, z, True))


# -- derivatives at special points (the op-spec table checks them against finite differences) ----

def f64(x):
    return nx.asarray(np.asarray(x, dtype=np.float64))


def c128(x):
    return nx.asarray(np.asarray(x, dtype=np.complex128))


def test_abs_derivative_is_one_at_both_zeros_as_jax():
    g = nx.grad(lambda x: nx.sum(nx.abs(x)))(f64([0.0, -0.0, -2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0, -1.0, 1.0])


def test_complex_part_and_abs_cotangents_follow_jax():
    """Golden values from jax.vjp (jax 0.10.2, x64) at z = [3+4j, 1-1j] with cotangent 1."""
    z = c128([3 + 4j, 1 - 1j])
    ones = f64([1.0, 1.0])
    golden = {nx.abs: [0.6 - 0.8j, 0.70710678 + 0.70710678j], nx.imag: [-1j, -1j],
              nx.real: [1, 1], nx.angle: [-0.16 - 0.12j, 0.5 - 0.5j]}
    for fn, want in golden.items():
        _, vjp = nx.vjp(fn, z)
        (ct,) = vjp(ones)
        assert ct.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(ct), want, rtol=1e-8)
    _, vjp = nx.vjp(nx.conj, z)
    np.testing.assert_allclose(np.asarray(vjp(c128([1 + 1j, 1 + 1j]))[0]), [1 - 1j, 1 - 1j])
    # the JVP of abs: real(conj(z)/|z| * t), 0 at z == 0
    _, t = nx.jvp(nx.abs, (c128([3 + 4j, 0j]),), (c128([1j, 1 + 1j]),))
    np.testing.assert_allclose(np.asarray(t), [0.8, 0.0])


def test_complex_holomorphic_derivative_values():
    z = c128([0.3 + 0.7j, -1.2 - 0.4j])
    t = c128([1.0, 1.0])
    cases = [(nx.tan, lambda z: 1 / np.cos(z) ** 2), (nx.arcsin, lambda z: 1 / np.sqrt(1 - z * z)),
             (nx.arccosh, lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1))),
             (nx.log10, lambda z: 1 / (z * np.log(10))), (nx.sinh, np.cosh)]
    for fn, d in cases:
        _, out = nx.jvp(fn, (z,), (t,))
        np.testing.assert_allclose(np.asarray(out), d(np.asarray(z)), rtol=1e-12)


def test_sinc_derivatives_at_zero_to_fourth_order():
    d = nx.sinc
    want = [1.0, 0.0, -math.pi ** 2 / 3, 0.0, math.pi ** 4 / 5]
    for k in range(5):
        assert float(d(f64(0.0))) == pytest.approx(want[k], abs=1e-12)
        d = nx.grad(d)
    # and away from 0 the first derivative is (cos(pi x) - sinc(x)) / x
    x = 0.37
    assert float(nx.grad(nx.sinc)(f64(x))) == pytest.approx(
        (math.cos(math.pi * x) - np.sinc(x)) / x, rel=1e-12)


def test_logaddexp_gradients_at_infinities_and_large_values():
    def grads(a, b, fn=nx.logaddexp):
        return [float(g) for g in nx.grad(fn, argnums=(0, 1))(f64(a), f64(b))]
    assert grads(0.0, 0.0) == [0.5, 0.5]
    assert grads(np.inf, 1.0) == [1.0, 0.0]
    assert grads(-np.inf, 1.0) == [0.0, 1.0]
    assert grads(-np.inf, -np.inf) == [0.5, 0.5]
    assert grads(1000.0, 0.0) == [1.0, 0.0]
    assert grads(-1000.0, 1000.0) == [0.0, 1.0]
    g = grads(1.0, 3.0, nx.logaddexp2)
    assert g == pytest.approx([1 / (1 + 4.0), 4 / (1 + 4.0)], rel=1e-14)


def test_hypot_atan2_copysign_gradients():
    g = nx.grad(nx.hypot, argnums=(0, 1))
    assert [float(v) for v in g(f64(3.0), f64(4.0))] == pytest.approx([0.6, 0.8])
    assert [float(v) for v in g(f64(0.0), f64(0.0))] == [0.0, 0.0]
    g = nx.grad(nx.atan2, argnums=(0, 1))(f64(1.0), f64(1.0))
    assert [float(v) for v in g] == pytest.approx([0.5, -0.5])
    g = nx.grad(lambda a, b: nx.sum(nx.copysign(a, b)), argnums=(0, 1))(
        f64([2.0, -2.0, 2.0, -0.0]), f64([1.0, 1.0, -0.0, -3.0]))
    np.testing.assert_array_equal(np.asarray(g[0]), [1.0, -1.0, -1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(g[1]), 0.0)


@pytest.mark.parametrize("fn", [nx.floor, nx.ceil, nx.trunc, nx.rint, nx.round, nx.fix,
                                nx.sign, lambda x: nx.round(x, 2),
                                lambda x: nx.nextafter(x, 5.0),
                                lambda x: nx.astype(nx.signbit(x), nx.float64)],
                         ids=["floor", "ceil", "trunc", "rint", "round", "fix", "sign",
                              "round2", "nextafter", "signbit"])
def test_piecewise_constant_functions_have_zero_gradient(fn):
    x = f64([0.3, -1.7, 2.5, 4.0])
    np.testing.assert_array_equal(np.asarray(nx.grad(lambda x: nx.sum(fn(x)))(x)), 0.0)
    _, t = nx.jvp(fn, (x,), (f64([1.0, 1.0, 1.0, 1.0]),))
    np.testing.assert_array_equal(np.asarray(t), 0.0)


def test_gradients_of_compositions():
    x = f64([-1.0, 0.0, 2.0, np.nan, np.inf])
    g = nx.grad(lambda h: nx.sum(nx.heaviside(x, h)))(f64([0.5] * 5))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 1.0, 0.0, 0.0, 0.0])
    g = nx.grad(lambda x: nx.sum(nx.nan_to_num(x) * 3.0))(x)
    np.testing.assert_array_equal(np.asarray(g), [3.0, 3.0, 3.0, 0.0, 0.0])
    g = nx.grad(lambda x: nx.sum(nx.angle(x)))(f64([-2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(g), 0.0)
    g = nx.grad(lambda x: nx.sum(nx.deg2rad(x) + nx.radians(x) + nx.rad2deg(x)))(f64([1.0]))
    assert float(g[0]) == pytest.approx(2 * math.pi / 180 + 180 / math.pi, rel=1e-15)


def test_float32_gradients_keep_dtype():
    x = nx.asarray(np.array([0.2, 0.5], np.float32))
    for fn in (nx.tan, nx.arcsin, nx.arccosh, nx.sinc, nx.log10, nx.abs,
               lambda x: nx.logaddexp(x, 1.0), lambda x: nx.hypot(x, 2.0)):
        g = nx.grad(lambda x: nx.sum(fn(x + 1.5 if fn is nx.arccosh else x)))(x)
        assert g.dtype == np.float32


# -- bad input -------------------------------------------------------------------------------------

REAL_ONLY = [nx.floor, nx.ceil, nx.trunc, nx.fix, nx.deg2rad, nx.rad2deg, nx.signbit,
             nx.isposinf, nx.isneginf]
REAL_ONLY_BINARY = [nx.atan2, nx.hypot, nx.copysign, nx.logaddexp, nx.logaddexp2,
                    nx.nextafter, nx.heaviside]


@pytest.mark.parametrize("fn", REAL_ONLY, ids=lambda f: f.__name__)
def test_real_only_functions_reject_complex_naming_the_function(fn):
    with pytest.raises(TypeError, match=fn.__name__):
        fn(nx.asarray(np.array([1 + 1j])))


@pytest.mark.parametrize("fn", REAL_ONLY_BINARY, ids=lambda f: f.__name__)
def test_real_only_binary_functions_reject_complex(fn):
    name = {"arctan2": "atan2"}.get(fn.__name__, fn.__name__)
    with pytest.raises(TypeError, match=name):
        fn(nx.asarray(np.array([1 + 1j])), 1.0)
    with pytest.raises(TypeError, match=name):
        fn(1.0, 2j)


@pytest.mark.parametrize("fn", [nx.bitwise_left_shift, nx.bitwise_right_shift],
                         ids=lambda f: f.__name__)
def test_shifts_reject_non_integers_and_negative_counts(fn):
    i = nx.asarray(np.array([1, 2], np.int32))
    for a, b in ((nx.asarray([1.0]), 1), (i, 1.5), (nx.asarray([True]), 1), (i, True),
                 (nx.asarray(np.array([1j])), 1), (i, nx.asarray([1.0, 2.0])),
                 (nx.asarray(np.array([1], np.uint64)), nx.asarray(np.array([1], np.int64)))):
        with pytest.raises(TypeError, match=fn.__name__):
            fn(a, b)
    for counts in (nx.asarray(np.array([1, -1], np.int32)), -1,       # an array, a broadcast
                   nx.asarray(np.array(-3, np.int64))):                # scalar, a 0-d tensor
        with pytest.raises(ValueError, match=r"x2 \(the shift counts\) must be >= 0"):
            fn(i, counts)
    with pytest.raises(TypeError, match=fn.__name__):
        i << 1.0 if fn is nx.bitwise_left_shift else i >> 1.0


def test_other_bad_input():
    with pytest.raises(TypeError, match="positive"):
        nx.positive(nx.asarray([True]))
    with pytest.raises(TypeError, match="decimals"):
        nx.round(nx.asarray([1.5]), 1.5)
    with pytest.raises(TypeError, match="clip: got both min and a_min"):
        nx.clip(nx.asarray([1.0]), 0.0, a_min=1.0)
    with pytest.raises(TypeError, match="nan_to_num: posinf"):
        nx.nan_to_num(nx.asarray([1.0]), posinf="big")
    with pytest.raises(ValueError, match="broadcast"):
        nx.hypot(nx.asarray(np.ones(3)), nx.asarray(np.ones(2)))


def test_names_of_both_spellings_are_the_same_functions():
    pairs = [("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"), ("atan2", "arctan2"),
             ("acosh", "arccosh"), ("asinh", "arcsinh"), ("atanh", "arctanh"),
             ("pow", "power"), ("bitwise_invert", "bitwise_not"), ("conj", "conjugate"),
             ("radians", "deg2rad"), ("degrees", "rad2deg"), ("fix", "trunc")]
    for a, b in pairs:
        assert getattr(nx, a) is getattr(nx, b), (a, b)
    assert_same(nx.pow(nx.asarray(np.float32(2.0)), 10), np.float32(1024.0))


def test_sinc_is_numpys_sinc_bit_for_bit():
    for dt in (np.float32, np.float64, np.complex64):
        a = np.array([0.0, -0.0, 0.5, -2.25, 1e-30, 3.0, np.inf, -np.inf, np.nan]).astype(dt)
        with np.errstate(all="ignore"):
            want = np.sinc(a)
        got = np.asarray(nx.sinc(nx.asarray(a)))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_nan_to_num_takes_0d_arrays_and_traced_fill_values():
    """nan/posinf/neginf as 0-d arrays (JAX's ArrayLike), traced under jit and vmap and
    differentiated through; NumPy's values."""
    a = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    want = np.nan_to_num(a, nan=5.0, posinf=10.0, neginf=-7.0)
    x = nx.asarray(a)
    f = lambda x, n: nx.nan_to_num(x, nan=n, posinf=n * 2, neginf=nx.asarray(-7))  # noqa: E731
    np.testing.assert_array_equal(np.asarray(f(x, nx.asarray(5.0))), want)
    np.testing.assert_array_equal(np.asarray(nx.jit(f)(x, 5.0)), want)
    got = nx.vmap(f, in_axes=(None, 0))(x, nx.asarray([5.0, 1.0]))
    np.testing.assert_array_equal(np.asarray(got)[0], want)
    np.testing.assert_array_equal(np.asarray(got)[1], np.nan_to_num(a, nan=1, posinf=2, neginf=-7))
    assert float(nx.grad(lambda n: nx.sum(f(x, n)))(2.0)) == 3.0    # d(n + 2n)/dn
    for bad in (nx.asarray([1.0, 2.0]), "a", nx.asarray(1 + 2j)):
        with pytest.raises(TypeError, match="nan_to_num: nan must be a real number"):
            nx.nan_to_num(x, nan=bad)
