"""nx.fft: values against NumPy's, dtypes, derivatives against float64 finite differences (and
JAX's transposes, pinned), the Hermitian weighting of the real transforms, bad input."""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune.frontend.fft import real_part

RNG = np.random.default_rng(0)


def _cplx(shape, dtype=np.complex128, rng=RNG):
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return z.astype(dtype)


def _tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def _close(ours, ref, dtype):
    ours = np.asarray(ours)
    scale = max(1.0, float(np.abs(ref).max())) if np.size(ref) else 1.0
    np.testing.assert_allclose(ours, ref, rtol=_tol(dtype), atol=_tol(dtype) * scale)


def _input(dtype, shape):
    if np.dtype(dtype).kind == "c":
        return _cplx(shape, dtype)
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-5, 5, shape).astype(dtype)


COMPLEX_OUT = {np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128,
               np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
               np.dtype(np.int32): np.complex64, np.dtype(np.float16): np.complex64}


# -- forward values and dtypes ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.float32, np.float64,
                                   np.int32])
@pytest.mark.parametrize("n", [None, 3, 8])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_fft_ifft_match_numpy(name, dtype, n, axis, norm):
    a = _input(dtype, (5, 6))
    out = getattr(nx.fft, name)(a, n=n, axis=axis, norm=norm)
    ref = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
    assert out.dtype == COMPLEX_OUT[np.dtype(dtype)]
    assert out.shape == ref.shape
    _close(out, ref, out.dtype)


@pytest.mark.parametrize("name", ["fftn", "ifftn"])
@pytest.mark.parametrize("s, axes", [(None, None), (None, (0, 2)), ((3, 5), (2, 0)),
                                     ((4, -1), (1, 2)), ((2, 7), None), (None, (1,)),
                                     ((6,), (-1,))])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fftn_ifftn_match_numpy(name, s, axes, norm):
    a = _cplx((3, 4, 5))
    out = getattr(nx.fft, name)(a, s=s, axes=axes, norm=norm)
    s_np = None if s is None else [a.shape[ax] if v == -1 else v
                                   for v, ax in zip(s, axes or range(3 - len(s), 3))]
    np_axes = axes if axes is not None or s is None else tuple(range(3 - len(s), 3))
    ref = getattr(np.fft, name)(a, s=s_np, axes=np_axes, norm=norm)
    assert out.shape == ref.shape and out.dtype == np.complex128
    _close(out, ref, np.complex128)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("n", [None, 4, 5, 9])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_rfft_and_ihfft_match_numpy(dtype, n, norm):
    a = _input(dtype, (3, 7))
    for name in ("rfft", "ihfft"):
        out = getattr(nx.fft, name)(a, n=n, axis=-1, norm=norm)
        ref = getattr(np.fft, name)(a.astype(np.float64), n=n, axis=-1, norm=norm)
        assert out.dtype == COMPLEX_OUT[np.dtype(dtype)] and out.shape == ref.shape
        _close(out, ref, out.dtype)
    out = nx.fft.rfft(a, n=n, axis=0, norm=norm)
    _close(out, np.fft.rfft(a.astype(np.float64), n=n, axis=0, norm=norm), out.dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [None, 1, 4, 7, 12])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_irfft_and_hfft_match_numpy(dtype, n, axis, norm):
    a = _cplx((5, 4), dtype)
    for name in ("irfft", "hfft"):
        out = getattr(nx.fft, name)(a, n=n, axis=axis, norm=norm)
        ref = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
        assert out.dtype == (np.float32 if dtype == np.complex64 else np.float64)
        assert out.shape == ref.shape
        _close(out, ref, dtype)


def test_irfft_ignores_imaginary_parts_of_zero_and_nyquist_bins():
    a = _cplx((5,))
    b = a.copy()
    b[0] += 3j
    b[-1] += 2j     # Nyquist bin of the even length 8
    np.testing.assert_allclose(np.asarray(nx.fft.irfft(b)), np.fft.irfft(a), atol=1e-14)
    np.testing.assert_allclose(np.asarray(nx.fft.irfft(b)), np.fft.irfft(b), atol=1e-14)


@pytest.mark.parametrize("s, axes", [(None, None), ((4, 6), (0, 1)), ((3, 5), (1, 0)),
                                     (None, (0, 2)), ((5,), (1,)), ((2, 3, 4), None)])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_rfftn_irfftn_match_numpy(s, axes, norm):
    x = RNG.standard_normal((3, 4, 5))
    out = nx.fft.rfftn(x, s=s, axes=axes, norm=norm)
    np_axes = axes if axes is not None or s is None else tuple(range(3 - len(s), 3))
    ref = np.fft.rfftn(x, s=s, axes=np_axes, norm=norm)
    assert out.shape == ref.shape and out.dtype == np.complex128
    _close(out, ref, np.complex128)
    z = _cplx((3, 4, 5))
    out = nx.fft.irfftn(z, s=s, axes=axes, norm=norm)
    ref = np.fft.irfftn(z, s=s, axes=np_axes, norm=norm)
    assert out.shape == ref.shape and out.dtype == np.float64
    _close(out, ref, np.float64)


def test_2d_variants_match_numpy():
    z = _cplx((2, 4, 6), np.complex64)
    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    _close(nx.fft.fft2(z), np.fft.fft2(z), np.complex64)
    _close(nx.fft.ifft2(z, s=(3, 8)), np.fft.ifft2(z, s=(3, 8)), np.complex64)
    _close(nx.fft.fft2(z, axes=(0, 2), norm="ortho"), np.fft.fft2(z, axes=(0, 2), norm="ortho"),
           np.complex64)
    _close(nx.fft.rfft2(x), np.fft.rfft2(x), np.complex64)
    out = nx.fft.irfft2(z, s=(4, 9))
    assert out.dtype == np.float32
    _close(out, np.fft.irfft2(z, s=(4, 9)), np.complex64)


def test_round_trips():
    x = RNG.standard_normal((3, 8))
    for norm in ("backward", "ortho", "forward"):
        np.testing.assert_allclose(np.asarray(nx.fft.ifft(nx.fft.fft(x, norm=norm), norm=norm)),
                                   x, atol=1e-14)
        np.testing.assert_allclose(np.asarray(nx.fft.irfft(nx.fft.rfft(x, norm=norm), n=8,
                                                           norm=norm)), x, atol=1e-14)
        np.testing.assert_allclose(np.asarray(nx.fft.hfft(nx.fft.ihfft(x, norm=norm), n=8,
                                                          norm=norm)), x, atol=1e-14)


def test_empty_axes_and_empty_batch():
    z = _cplx((2, 3))
    out = nx.fft.fftn(z, axes=())
    np.testing.assert_array_equal(np.asarray(out), z)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    assert nx.fft.fftn(x, axes=()).dtype == np.complex64
    e = np.zeros((0, 4), np.complex64)
    assert nx.fft.fft(e).shape == (0, 4)
    assert nx.fft.rfft(np.zeros((0, 4))).shape == (0, 3)


# -- frequencies and shifts ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 8])
@pytest.mark.parametrize("d", [1.0, 0.25, 3])
def test_fftfreq_rfftfreq_match_numpy(n, d):
    out = nx.fft.fftfreq(n, d)
    assert out.dtype == np.float32 and out.shape == (n,)
    np.testing.assert_allclose(np.asarray(out), np.fft.fftfreq(n, d), rtol=1e-6)
    out = nx.fft.rfftfreq(n, d=d, dtype=nx.float64)
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), np.fft.rfftfreq(n, d), rtol=1e-15)


def test_fftfreq_differentiable_in_a_tensor_spacing():
    g = nx.grad(lambda d: nx.sum(nx.fft.fftfreq(6, d) ** 2))(nx.asarray(np.float64(0.5)))
    # sum_k (k / (6 d))**2 with k = 0, 1, 2, -3, -2, -1: derivative -2 * 19 / (36 d**3)
    np.testing.assert_allclose(float(g), -2 * 19 / (36 * 0.125), rtol=1e-6)


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 1), (1,), [-1, 0]])
@pytest.mark.parametrize("shape", [(5, 6), (4, 7)])
def test_fftshift_ifftshift_match_numpy(axes, shape):
    x = RNG.standard_normal(shape)
    np.testing.assert_array_equal(np.asarray(nx.fft.fftshift(x, axes)), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(np.asarray(nx.fft.ifftshift(x, axes=axes)),
                                  np.fft.ifftshift(x, axes=axes))
    np.testing.assert_array_equal(
        np.asarray(nx.fft.ifftshift(nx.fft.fftshift(x, axes), axes)), x)


# -- derivatives ----------------------------------------------------------------------------------

def _parts(z):
    """A complex tensor as the concatenation of its real and imaginary parts (real)."""
    return nx.concatenate([real_part(z), real_part(z * (-1j))], axis=-1)


def _c(re, im):
    return re + im * 1j


def _complex_in(name, kw):
    fn = getattr(nx.fft, name)
    if name in ("rfft", "rfftn", "rfft2", "ihfft"):
        return lambda re, im: _parts(fn(re, **kw))
    if name in ("irfft", "irfftn", "irfft2", "hfft"):
        return lambda re, im: fn(_c(re, im), **kw)
    return lambda re, im: _parts(fn(_c(re, im), **kw))


GRAD_CASES = [
    ("fft", {}), ("fft", {"n": 4, "norm": "ortho"}), ("fft", {"n": 9, "axis": 0}),
    ("ifft", {"norm": "forward"}), ("ifft", {"n": 3}),
    ("fftn", {}), ("fftn", {"s": (2, 7), "axes": (1, 0)}), ("ifftn", {"s": (4, 4)}),
    ("fft2", {"norm": "ortho"}), ("ifft2", {}),
    ("rfft", {}), ("rfft", {"n": 8}), ("rfft", {"n": 3, "axis": 0, "norm": "forward"}),
    ("rfftn", {}), ("rfftn", {"axes": (1, 0), "s": (4, 5)}), ("rfft2", {"norm": "ortho"}),
    ("irfft", {}), ("irfft", {"n": 9}), ("irfft", {"n": 4, "axis": 0, "norm": "ortho"}),
    ("irfftn", {}), ("irfftn", {"s": (4, 7), "axes": (1, 0)}), ("irfft2", {"s": (3, 5)}),
    ("hfft", {}), ("hfft", {"n": 7, "norm": "forward"}),
    ("ihfft", {}), ("ihfft", {"n": 6, "norm": "ortho"}),
]


@pytest.mark.parametrize("case", range(len(GRAD_CASES)),
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(GRAD_CASES)])
def test_derivatives_match_finite_differences(case):
    name, kw = GRAD_CASES[case]
    rng = np.random.default_rng(case)
    re, im = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    nx.check_grads(_complex_in(name, kw), (re, im), order=1, atol=1e-7, rtol=1e-7)


@pytest.mark.parametrize("name, kw", [("fft", {"n": 4}), ("rfft", {"n": 7}),
                                      ("irfft", {"n": 6}), ("irfftn", {"s": (3, 5)}),
                                      ("hfft", {}), ("ihfft", {})])
def test_second_order(name, kw):
    rng = np.random.default_rng(7)
    inner = _complex_in(name, kw)

    def f(re, im):   # a nonlinear function of the transform, so second derivatives are nonzero
        y = inner(re, im)
        return nx.sum(y * y * y)
    nx.check_grads(f, (rng.standard_normal((2, 5)), rng.standard_normal((2, 5))), order=2,
                   atol=1e-6, rtol=1e-6)


def test_fft_transpose_is_the_same_fft():
    # the DFT matrix is symmetric: vjp(fft)(ct) = fft(ct) (no conjugation), also with a norm
    z, ct = _cplx((2, 6)), _cplx((2, 6))
    for norm in ("backward", "ortho", "forward"):
        _, f_vjp = nx.vjp(lambda a: nx.fft.fft(a, norm=norm), nx.asarray(z))
        np.testing.assert_allclose(np.asarray(f_vjp(nx.asarray(ct))[0]),
                                   np.fft.fft(ct, norm=norm), atol=1e-12)
        _, f_vjp = nx.vjp(lambda a: nx.fft.ifft(a, norm=norm), nx.asarray(z))
        np.testing.assert_allclose(np.asarray(f_vjp(nx.asarray(ct))[0]),
                                   np.fft.ifft(ct, norm=norm), atol=1e-12)


def _dft(n):
    k = np.arange(n)
    return np.exp(-2j * np.pi * np.outer(k, k) / n)


@pytest.mark.parametrize("n", [6, 7])
def test_rfft_gradient_counts_the_half_spectrum_once(n):
    # L(x) = sum_k |rfft(x)_k|**2 over the n // 2 + 1 bins: with the half DFT matrix H,
    # grad L = 2 Re(H^H H x), computed here by NumPy, independently of nx.fft
    x = RNG.standard_normal(n)
    H = _dft(n)[: n // 2 + 1]

    def loss(x):
        y = nx.fft.rfft(x)
        return nx.sum(real_part(y) ** 2 + real_part(y * (-1j)) ** 2)
    want = 2 * np.real(H.conj().T @ (H @ x))
    np.testing.assert_allclose(np.asarray(nx.grad(loss)(nx.asarray(x))), want, atol=1e-12)


@pytest.mark.parametrize("n", [6, 7])
def test_irfft_gradient_weights_the_interior_bins_twice(n):
    # irfft(z)_t = Re(sum_k w_k z_k e^{2 pi i k t / n}) / n with w = 1 at the zero (and even-n
    # Nyquist) bin, 2 elsewhere: for L = sum_t c_t irfft(z)_t, dL/dRe z_k = w_k Re(A^T c)_k
    # and dL/dIm z_k = -w_k Im(A^T c)_k with A_tk = e^{2 pi i k t / n} / n
    m = n // 2 + 1
    re, im = RNG.standard_normal(m), RNG.standard_normal(m)
    c = RNG.standard_normal(n)
    w = np.ones(m)
    w[1:(n + 1) // 2] = 2
    A = np.conj(_dft(n))[:, :m] / n
    u = A.T @ c
    g_re, g_im = nx.grad(lambda a, b: nx.sum(nx.fft.irfft(_c(a, b), n=n) * c),
                         argnums=(0, 1))(nx.asarray(re), nx.asarray(im))
    np.testing.assert_allclose(np.asarray(g_re), w * u.real, atol=1e-12)
    want_im = -w * u.imag
    if n % 2 == 0:
        want_im[-1] = 0.0    # the Nyquist bin's imaginary part is ignored
    want_im[0] = 0.0
    np.testing.assert_allclose(np.asarray(g_im), want_im, atol=1e-12)


def test_vjps_match_jax_pinned():
    # jax.vjp(jnp.fft.rfft / irfft) with JAX 0.10.2 (x64) on these inputs
    x = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75])
    ct = np.array([1.0 + 0.5j, -0.5 + 1.0j, 0.25 - 0.75j, 2.0 + 0.0j])
    _, f = nx.vjp(nx.fft.rfft, nx.asarray(x))
    np.testing.assert_allclose(np.asarray(f(nx.asarray(ct))[0]),
                               [2.75, -1.1584936490538902, 4.6405444566227665, -0.25,
                                1.6094555433772322, -1.5915063509461096], atol=1e-14)
    z = np.array([1.0 + 0.5j, -0.5 + 1.0j, 0.25 - 0.75j, 2.0 + 1.0j])
    _, f = nx.vjp(nx.fft.irfft, nx.asarray(z))
    np.testing.assert_allclose(np.asarray(f(nx.asarray(x))[0]),
                               [0.41666666666666663, -0.7916666666666666 + 0.07216878364870319j,
                                -0.04166666666666666 - 0.21650635094610965j,
                                0.9166666666666666], atol=1e-14)
    _, f = nx.vjp(lambda a: nx.fft.irfft(a, n=7), nx.asarray(z))
    np.testing.assert_allclose(np.asarray(f(nx.asarray(np.append(x, 1.0)))[0]),
                               [0.5, -0.38709905322132176 + 0.1642954627620022j,
                                0.13282744810707423 - 0.6187847868148268j,
                                0.25427160511424757 - 1.2104182700712791j], atol=1e-14)


def test_float32_derivatives_stay_float32():
    x = RNG.standard_normal(8).astype(np.float32)
    g = nx.grad(lambda x: nx.sum(nx.fft.irfft(nx.fft.rfft(x) * 2.0)))(nx.asarray(x))
    assert g.dtype == np.float32
    np.testing.assert_allclose(np.asarray(g), 2.0, rtol=1e-5)
    _, t = nx.jvp(lambda x: nx.fft.fft(x), (nx.asarray(x),), (nx.asarray(np.ones(8, np.float32)),))
    assert t.dtype == np.complex64


def test_fftshift_gradient_is_the_inverse_shift():
    x = RNG.standard_normal((3, 5))
    w = RNG.standard_normal((3, 5))
    g = nx.grad(lambda x: nx.sum(nx.fft.fftshift(x) * w))(nx.asarray(x))
    np.testing.assert_allclose(np.asarray(g), np.fft.ifftshift(w))


# -- bad input ----------------------------------------------------------------------------------

def test_bad_input_raises_naming_the_argument():
    z = _cplx((3, 4))
    x = RNG.standard_normal((3, 4))
    with pytest.raises(ValueError, match="norm"):
        nx.fft.fft(z, norm="unitary")
    with pytest.raises(ValueError, match="n: invalid number of data points"):
        nx.fft.fft(z, n=0)
    with pytest.raises(TypeError, match="n: expected an int"):
        nx.fft.ifft(z, n=2.5)
    with pytest.raises(TypeError, match="axis"):
        nx.fft.fft(z, axis=1.0)
    with pytest.raises(IndexError):
        nx.fft.fft(z, axis=2)
    with pytest.raises(IndexError):
        nx.fft.fft(np.complex128(1.0))
    with pytest.raises(ValueError, match="invalid number of data points"):
        nx.fft.fft(np.zeros((2, 0), np.complex64))
    with pytest.raises(TypeError, match="a: rfft needs real input"):
        nx.fft.rfft(z)
    with pytest.raises(TypeError, match="a: ihfft needs real input"):
        nx.fft.ihfft(z)
    with pytest.raises(TypeError, match="a: rfftn needs real input"):
        nx.fft.rfftn(z)
    with pytest.raises(ValueError, match="axes: repeated axis"):
        nx.fft.fftn(z, axes=(0, 0))
    with pytest.raises(ValueError, match="s: 1 lengths for 2 axes"):
        nx.fft.fftn(z, s=(3,), axes=(0, 1))
    with pytest.raises(ValueError, match="s: invalid number of data points"):
        nx.fft.rfftn(x, s=(0, 4), axes=(0, 1))
    with pytest.raises(TypeError, match="s: expected a sequence"):
        nx.fft.fftn(z, s=3)
    with pytest.raises(TypeError, match="axes: expected a sequence"):
        nx.fft.ifftn(z, axes=1)
    with pytest.raises(ValueError, match="s: 3 lengths for a 2-d input"):
        nx.fft.fftn(z, s=(2, 2, 2))
    with pytest.raises(ValueError, match="irfft"):
        nx.fft.irfft(np.ones((3, 1), np.complex64))    # default n = 0
    with pytest.raises(ValueError, match="n: invalid"):
        nx.fft.hfft(z, n=-2)
    with pytest.raises(ValueError, match="n: invalid"):
        nx.fft.fftfreq(0)
    with pytest.raises(TypeError, match="n: expected an int"):
        nx.fft.rfftfreq(4.0)
    with pytest.raises(ValueError, match="d: the sample spacing"):
        nx.fft.fftfreq(4, 0.0)
    with pytest.raises(ValueError, match="dtype: must be a real floating dtype"):
        nx.fft.fftfreq(4, dtype=nx.int32)
    with pytest.raises(ValueError, match="d: expected a scalar"):
        nx.fft.rfftfreq(4, nx.asarray(np.ones(2)))
    with pytest.raises(IndexError):
        nx.fft.fftshift(x, axes=3)
