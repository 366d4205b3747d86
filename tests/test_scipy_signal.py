"""nx.scipy.signal: convolve against scipy.signal.convolve, convolve_general (autograd's
generalisation over axes) against per-slice SciPy convolutions and tensordot, derivatives
against finite differences, jit and vmap, bad input."""
import numpy as np
import pytest
import scipy.signal as ss

import nx_rune as nx
from nx_rune.scipy import signal as S

RNG = np.random.default_rng(0)

SHAPES = [((4,), (2,)), ((5,), (7,)), ((1,), (3,)), ((4, 3), (2, 2)), ((6, 7), (4, 1)),
          ((3, 5), (5, 2)), ((2, 3), (4, 5)), ((3, 4, 2), (2, 2, 2))]


def _valid_ok(sa, sb):
    return all(a >= b for a, b in zip(sa, sb)) or all(a <= b for a, b in zip(sa, sb))


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("sa, sb", SHAPES)
def test_convolve_matches_scipy(sa, sb, mode):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    if mode == "valid" and not _valid_ok(sa, sb):
        with pytest.raises(ValueError, match="valid"):
            S.convolve(a, b, mode)
        return
    want = ss.convolve(a, b, mode, method="direct")
    got = S.convolve(a, b, mode)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_convolve_dtypes():
    a, b = RNG.standard_normal((5, 3)), RNG.standard_normal((2, 2))
    got = S.convolve(a.astype(np.float32), b.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), ss.convolve(a, b), rtol=1e-5, atol=1e-5)
    ac = a + 1j * RNG.standard_normal(a.shape)
    got = S.convolve(ac, b, "same")
    assert got.dtype == np.complex128
    np.testing.assert_allclose(np.asarray(got), ss.convolve(ac, b, "same"), rtol=1e-12)
    got = S.convolve(np.arange(4), np.arange(3))    # ints stay ints, as SciPy's
    np.testing.assert_array_equal(np.asarray(got), ss.convolve(np.arange(4), np.arange(3)))


def test_convolve_general_axes_and_dot_axes():
    a35, a34 = RNG.standard_normal((3, 5)), RNG.standard_normal((3, 4))
    a342, a2543 = RNG.standard_normal((3, 4, 2)), RNG.standard_normal((2, 5, 4, 3))
    a24232 = RNG.standard_normal((2, 4, 2, 3, 2))
    for mode in ("valid", "full"):
        out = np.asarray(S.convolve_general(a35, a34, axes=([1], [0]), mode=mode))
        np.testing.assert_allclose(out[1, 2], ss.convolve(a35[1, :], a34[:, 2], mode),
                                   rtol=1e-12)
        out = np.asarray(S.convolve_general(a35, a34, axes=([], []), dot_axes=([0], [0]),
                                            mode=mode))
        np.testing.assert_allclose(out, np.tensordot(a35, a34, axes=([0], [0])), rtol=1e-12)
        out = np.asarray(S.convolve_general(a35, a342, axes=([1], [2]), dot_axes=([0], [0]),
                                            mode=mode))
        want = sum(ss.convolve(a35[i, :], a342[i, 2, :], mode) for i in range(3))
        np.testing.assert_allclose(out[2], want, rtol=1e-12)
        out = np.asarray(S.convolve_general(a2543, a24232, axes=([1, 2], [2, 4]),
                                            dot_axes=([0, 3], [0, 3]), mode=mode))
        want = sum(sum(ss.convolve(a2543[i, :, :, j], a24232[i, 2, :, j, :], mode)
                       for i in range(2)) for j in range(3))
        np.testing.assert_allclose(out[2], want, rtol=1e-12)
    # 'same' over one axis pair keeps A's size there, centred as SciPy's
    a, b = RNG.standard_normal((4, 6)), RNG.standard_normal((3, 2))
    out = np.asarray(S.convolve_general(a, b, axes=([1], [0]), mode="same"))
    assert out.shape == (4, 2, 6)
    np.testing.assert_allclose(out[1, 0], ss.convolve(a[1], b[:, 0], "same"), rtol=1e-12)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_convolve_derivatives(mode):
    for sa, sb in [((4,), (2,)), ((5, 4), (3, 2)), ((2, 3), (4, 5))]:
        a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
        nx.check_grads(lambda a, b: S.convolve(a, b, mode), (a, b), order=2)
    a, b = RNG.standard_normal((3, 3, 2)), RNG.standard_normal((3, 2, 3))
    nx.check_grads(lambda a, b: S.convolve_general(a, b, axes=([1], [1]),
                                                   dot_axes=([0], [2]), mode=mode), (a, b),
                   order=2)


def test_convolve_jit_and_vmap():
    a, b = RNG.standard_normal((3, 6)), RNG.standard_normal((3, 2))
    got = nx.vmap(lambda x, y: S.convolve(x, y, "same"))(a, b)
    want = np.stack([ss.convolve(a[i], b[i], "same") for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    got = nx.jit(lambda x, y: S.convolve(x, y, "valid"))(a, b)
    np.testing.assert_allclose(np.asarray(got), ss.convolve(a, b, "valid"), rtol=1e-12)
    g = nx.jit(nx.grad(lambda x, y: nx.sum(S.convolve(x, y) ** 2)))(a, b)
    eps = 1e-6
    e = np.zeros_like(a)
    e[1, 2] = eps
    fd = (np.sum(ss.convolve(a + e, b) ** 2) - np.sum(ss.convolve(a - e, b) ** 2)) / (2 * eps)
    np.testing.assert_allclose(float(np.asarray(g)[1, 2]), fd, rtol=1e-6)


def test_convolve_bad_input():
    with pytest.raises(ValueError, match="mode"):
        S.convolve(np.ones(3), np.ones(2), "middle")
    with pytest.raises(ValueError, match="method"):
        S.convolve(np.ones(3), np.ones(2), method="slow")
    with pytest.raises(ValueError, match="same number of axes"):
        S.convolve(np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="dot_axes"):
        S.convolve_general(np.ones((3, 2)), np.ones((4, 2)), axes=([1], [1]),
                           dot_axes=([0], [0]))
    with pytest.raises(ValueError, match="axes"):
        S.convolve_general(np.ones((3, 2)), np.ones((4, 2)), axes=([5], [1]))
    with pytest.raises(TypeError, match="axes"):
        S.convolve_general(np.ones((3, 2)), np.ones((4, 2)), axes=([1.5], [1]))


# -- correlate, fftconvolve, convolve2d, correlate2d, detrend ----------------------------------

SHAPES_2D = [((3, 4), (5, 6)), ((5, 6), (3, 4)), ((6, 7), (2, 2)), ((2, 2), (6, 7)),
             ((4, 4), (4, 4)), ((7, 5), (3, 2)), ((1, 5), (1, 2))]


def _pair(sa, sb, complex_):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    if complex_:
        a = a + 1j * RNG.standard_normal(sa)
        b = b + 1j * RNG.standard_normal(sb)
    return a, b


def _same(ours, ref, rtol=1e-12, atol=1e-12):
    ours = np.asarray(ours)
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("sa, sb", SHAPES + SHAPES_2D)
def test_correlate_and_fftconvolve_match_scipy(sa, sb, mode, complex_):
    if len(sa) != len(sb) or (mode == "valid" and not _valid_ok(sa, sb)):
        return
    a, b = _pair(sa, sb, complex_)
    _same(S.correlate(a, b, mode), ss.correlate(a, b, mode))
    _same(S.fftconvolve(a, b, mode), ss.fftconvolve(a, b, mode), rtol=1e-10)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("sa, sb", SHAPES_2D)
def test_convolve2d_and_correlate2d_match_scipy(sa, sb, mode, boundary, complex_):
    # SciPy's window placement ('same' correlate2d sits one sample later than correlate's for
    # even kernels), its valid-mode swap (conj(correlate) when in2 is the larger) and its
    # boundary extensions
    a, b = _pair(sa, sb, complex_)
    for fill in (0.0, 1.5):
        if mode == "valid" and not _valid_ok(sa, sb):
            with pytest.raises(ValueError, match="valid"):
                S.convolve2d(a, b, mode, boundary, fill)
            continue
        _same(S.convolve2d(a, b, mode, boundary, fill), ss.convolve2d(a, b, mode, boundary, fill))
        _same(S.correlate2d(a, b, mode, boundary, fill),
              ss.correlate2d(a, b, mode, boundary, fill))


def test_fftconvolve_axes_and_dtypes():
    a, b = RNG.standard_normal((3, 8, 4)), RNG.standard_normal((3, 3, 1))
    for mode in ("full", "same", "valid"):
        for axes in (1, [1, 2], (-2,)):
            _same(S.fftconvolve(a, b, mode, axes=axes), ss.fftconvolve(a, b, mode, axes=axes),
                  rtol=1e-10)
        c = RNG.standard_normal((1, 8, 3))
        _same(S.fftconvolve(a, c, mode, axes=2), ss.fftconvolve(a, c, mode, axes=2), rtol=1e-10)
    ai, bi = RNG.integers(-5, 5, (6, 5)), RNG.integers(-5, 5, (3, 2))
    # ints: the direct forms keep SciPy's integer dtype; the FFT form is float64 as SciPy's
    for fn in ("convolve2d", "correlate2d", "correlate"):
        out = getattr(S, fn)(ai, bi)
        assert out.dtype == getattr(ss, fn)(ai, bi).dtype == np.int64
        np.testing.assert_array_equal(np.asarray(out), getattr(ss, fn)(ai, bi))
    _same(S.fftconvolve(ai, bi), ss.fftconvolve(ai, bi), rtol=1e-10)
    out = S.fftconvolve(a.astype(np.float32), b.astype(np.float32))
    assert out.dtype == np.float32 == ss.fftconvolve(a.astype(np.float32),
                                                     b.astype(np.float32)).dtype
    with pytest.raises(ValueError, match="axis 0 is not convolved"):
        S.fftconvolve(np.ones((3, 4)), np.ones((2, 4)), axes=1)
    with pytest.raises(ValueError, match="mode"):
        S.fftconvolve(np.ones(3), np.ones(2), "middle")


def test_new_convolutions_derivatives():
    a, b = RNG.standard_normal((5, 4)), RNG.standard_normal((3, 2))
    for mode in ("full", "same", "valid"):
        nx.check_grads(lambda x, y: S.fftconvolve(x, y, mode), (a, b), order=2)
        nx.check_grads(lambda x, y: S.correlate(x, y, mode), (a, b), order=2)
        for boundary in ("fill", "wrap", "symm"):
            nx.check_grads(lambda x, y: S.convolve2d(x, y, mode, boundary, 0.5), (a, b))
            nx.check_grads(lambda x, y: S.correlate2d(x, y, mode, boundary), (a, b))
    # the derivative in the fill value too
    nx.check_grads(lambda f: S.convolve2d(a, b, "full", "fill", f), (np.array(0.7),))


def test_new_convolutions_under_jit_and_vmap():
    a, b = RNG.standard_normal((3, 6, 5)), RNG.standard_normal((3, 3, 2))
    for fn, kw in ((S.fftconvolve, {}), (S.correlate, {}), (S.convolve2d, {"boundary": "symm"}),
                   (S.correlate2d, {"boundary": "wrap"})):
        for mode in ("full", "same", "valid"):
            want = np.stack([np.asarray(fn(a[i], b[i], mode, **kw)) for i in range(3)])
            got = nx.vmap(lambda x, y: fn(x, y, mode, **kw))(a, b)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
            got = nx.jit(lambda x, y: fn(x, y, mode, **kw))(a[0], b[0])
            np.testing.assert_allclose(np.asarray(got), want[0], rtol=1e-12, atol=1e-12)


def test_two_d_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        S.convolve2d(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="boundary"):
        S.correlate2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect")
    with pytest.raises(ValueError, match="fillvalue"):
        S.convolve2d(np.ones((3, 3)), np.ones((2, 2)), fillvalue=np.ones(2))
    with pytest.raises(ValueError, match="valid"):
        S.correlate2d(np.ones((3, 1)), np.ones((1, 3)), "valid")


@pytest.mark.parametrize("type_", ["linear", "constant"])
def test_detrend_matches_scipy(type_):
    x = RNG.standard_normal((3, 20))
    for bp in (0, [5, 12], [1, 19], np.array([7])):
        _same(S.detrend(x, type=type_, bp=bp), ss.detrend(x, type=type_, bp=bp))
    _same(S.detrend(x, axis=0, type=type_), ss.detrend(x, axis=0, type=type_))
    xc = x + 1j * x[::-1]
    _same(S.detrend(xc, type=type_), ss.detrend(xc, type=type_))
    xi = RNG.integers(0, 9, 12)
    _same(S.detrend(xi, type=type_), ss.detrend(xi, type=type_))
    x32 = x.astype(np.float32)
    _same(S.detrend(x32, type=type_), ss.detrend(x32, type=type_), rtol=1e-5, atol=1e-6)
    # derivatives, and jit / vmap equal to eager
    nx.check_grads(lambda v: S.detrend(v, type=type_, bp=[4, 9]), (x,), order=2)
    want = ss.detrend(x, type=type_, bp=[4])
    np.testing.assert_allclose(np.asarray(nx.jit(lambda v: S.detrend(v, type=type_, bp=[4]))(x)),
                               want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(nx.vmap(lambda v: S.detrend(v, type=type_,
                                                                     bp=[4]))(x)),
                               want, rtol=1e-12, atol=1e-14)


def test_detrend_bad_input():
    with pytest.raises(ValueError, match="type"):
        S.detrend(np.ones(4), type="quadratic")
    with pytest.raises(ValueError, match="bp"):
        S.detrend(np.ones(4), bp=[9])
    with pytest.raises(TypeError, match="bp"):
        S.detrend(np.ones(4), bp=[1.5])
    with pytest.raises(ValueError, match="axis"):
        S.detrend(np.ones(4), axis=2)


# -- stft, csd, welch ---------------------------------------------------------------------------

_SIG = RNG.standard_normal((3, 300))
_SIG_Y = RNG.standard_normal((3, 280))


def _same_tuple(ours, ref, rtol=1e-11):
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        _same(o, np.asarray(r), rtol=rtol, atol=1e-13 if r.dtype.itemsize >= 8 else 1e-5)


@pytest.mark.parametrize("kw", [{}, {"nperseg": 64}, {"nperseg": 64, "noverlap": 10, "nfft": 100},
                                {"nperseg": 50, "detrend": "linear"},
                                {"nperseg": 64, "return_onesided": False},
                                {"nperseg": 64, "boundary": "even"},
                                {"nperseg": 64, "boundary": "odd"},
                                {"nperseg": 64, "boundary": "constant"},
                                {"nperseg": 64, "boundary": None, "padded": False},
                                {"nperseg": 64, "window": "hamming"},
                                {"nperseg": 63, "scaling": "psd"}],
                         ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_stft_matches_scipy(kw):
    _same_tuple(S.stft(_SIG, **kw), ss.stft(_SIG, **kw))


@pytest.mark.parametrize("kw", [{}, {"nperseg": 64}, {"nperseg": 64, "noverlap": 10, "nfft": 100},
                                {"nperseg": 50, "detrend": "linear"},
                                {"nperseg": 64, "return_onesided": False},
                                {"nperseg": 64, "scaling": "spectrum"},
                                {"nperseg": 64, "average": "median"},
                                {"nperseg": 64, "window": np.ones(64)},
                                {"nperseg": 65, "detrend": False}],
                         ids=lambda kw: "-".join(
                             f"{k}={'array' if isinstance(v, np.ndarray) else v}"
                             for k, v in kw.items()) or "default")
def test_welch_and_csd_match_scipy(kw):
    _same_tuple(S.welch(_SIG, **kw), ss.welch(_SIG, **kw))
    _same_tuple(S.csd(_SIG, _SIG_Y, **kw), ss.csd(_SIG, _SIG_Y, **kw))


def test_spectral_axes_dtypes_and_complex():
    _same_tuple(S.welch(_SIG.T, nperseg=64, axis=0), ss.welch(_SIG.T, nperseg=64, axis=0))
    _same_tuple(S.stft(_SIG.T, nperseg=64, axis=0), ss.stft(_SIG.T, nperseg=64, axis=0))
    xc = _SIG + 1j * _SIG[::-1]
    _same_tuple(S.csd(xc, _SIG_Y, nperseg=64), ss.csd(xc, _SIG_Y, nperseg=64))
    # float32 data: float32 / complex64 estimates, float64 frequencies and times (SciPy's)
    x32 = _SIG.astype(np.float32)
    _same_tuple(S.welch(x32, nperseg=64), ss.welch(x32, nperseg=64), rtol=1e-4)
    _same_tuple(S.stft(x32, nperseg=64), ss.stft(x32, nperseg=64), rtol=1e-4)
    # csd(x, None) is welch's complex form (JAX's)
    f, p = S.csd(_SIG, None, nperseg=64)
    _same(nx.real(p), ss.welch(_SIG, nperseg=64)[1])


def test_spectral_derivatives_jit_and_vmap():
    x = RNG.standard_normal(300)
    nx.check_grads(lambda v: S.welch(v, nperseg=64)[1], (x,), order=2)
    nx.check_grads(lambda v: nx.abs(S.stft(v, nperseg=64, boundary="odd")[2]), (x,))
    nx.check_grads(lambda v, w: nx.real(S.csd(v, w, nperseg=64, average="median")[1]),
                   (x, x[::-1].copy()))
    want = ss.welch(_SIG, nperseg=64)[1]
    got = nx.vmap(lambda v: S.welch(v, nperseg=64)[1])(_SIG)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-11, atol=1e-14)
    got = nx.jit(lambda v: S.stft(v, nperseg=64)[2])(_SIG)
    np.testing.assert_allclose(np.asarray(got), ss.stft(_SIG, nperseg=64)[2], rtol=1e-11,
                               atol=1e-14)


def test_spectral_bad_input():
    with pytest.raises(ValueError, match="noverlap"):
        S.welch(_SIG, nperseg=32, noverlap=32)
    with pytest.raises(ValueError, match="nfft"):
        S.stft(_SIG, nperseg=64, nfft=32)
    with pytest.raises(ValueError, match="nperseg"):
        S.welch(_SIG, window=np.ones(16), nperseg=32)
    with pytest.raises(ValueError, match="window"):
        S.welch(_SIG, window=np.ones((2, 16)))
    with pytest.raises(ValueError, match="boundary"):
        S.stft(_SIG, boundary="wrap")
    with pytest.raises(ValueError, match="average"):
        S.csd(_SIG, _SIG, average="mode")
    with pytest.raises(ValueError, match="scaling"):
        S.welch(_SIG, scaling="power")
    with pytest.raises(ValueError, match="axis"):
        S.welch(_SIG, axis=2)


@pytest.mark.parametrize("kw", [{}, {"nperseg": 64}, {"nperseg": 64, "noverlap": 40},
                                {"nperseg": 63, "noverlap": 20, "nfft": 80},
                                {"nperseg": 64, "window": "hamming"},
                                {"nperseg": 64, "scaling": "psd"},
                                {"nperseg": 64, "noverlap": 50}],
                         ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_istft_matches_scipy_and_inverts_stft(kw):
    z = ss.stft(_SIG, **kw)[2]
    ours, ref = S.istft(z, **kw), ss.istft(z, **kw)
    _same_tuple(ours, ref)
    np.testing.assert_allclose(np.asarray(ours[1])[:, :300], _SIG, atol=1e-13)


def test_istft_axes_two_sided_and_derivatives():
    z = ss.stft(_SIG, nperseg=64, return_onesided=False)[2]
    _same_tuple(S.istft(z, nperseg=64, input_onesided=False),
                ss.istft(z, nperseg=64, input_onesided=False))
    zt = np.moveaxis(ss.stft(_SIG, nperseg=64)[2], 0, -1)        # (freq, segment, batch)
    _same_tuple(S.istft(zt, nperseg=64, time_axis=1, freq_axis=0),
                ss.istft(zt, nperseg=64, time_axis=1, freq_axis=0))
    z1 = ss.stft(_SIG[0], nperseg=64)[2]
    _same_tuple(S.istft(z1, nperseg=64), ss.istft(z1, nperseg=64))
    z32 = ss.stft(_SIG.astype(np.float32), nperseg=64)[2]
    _same_tuple(S.istft(z32, nperseg=64), ss.istft(z32, nperseg=64), rtol=1e-4)
    # differentiable: the round trip x -> stft -> istft is the identity, so is its derivative
    x = RNG.standard_normal(200)
    nx.check_grads(lambda v: S.istft(S.stft(v, nperseg=32)[2], nperseg=32)[1], (x,))
    g = nx.grad(lambda v: nx.sum(S.istft(S.stft(v, nperseg=32)[2], nperseg=32)[1][:200]
                                 * nx.arange(200.0)))(x)
    np.testing.assert_allclose(np.asarray(g), np.arange(200.0), atol=1e-10)
    with pytest.raises(ValueError, match="Zxx"):
        S.istft(np.ones(5))
    with pytest.raises(ValueError, match="freq_axis and time_axis"):
        S.istft(np.ones((5, 4)), time_axis=0, freq_axis=0)
    with pytest.raises(ValueError, match="window"):
        S.istft(z1, nperseg=64, window=np.ones(10))


def test_importing_nx_rune_leaves_scipy_unimported():
    # SciPy is imported on first use (nx_rune.scipy's promise): fftconvolve's next_fast_len
    # and the spectral windows import it inside the functions
    import subprocess
    import sys
    code = ("import sys, nx_rune; "
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
