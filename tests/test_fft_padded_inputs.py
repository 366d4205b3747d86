"""nx.fft on lengthened and shortened inputs (``n=`` / ``s=``): NumPy's values to the last bit,
and the zero padding handed to NumPy's transforms (which pad each line themselves) instead of
being materialized first."""
import numpy as np
import pytest

import nx_rune as nx


def _resized(a, s, axes):
    """a trimmed or zero-padded (at the end) to s along axes, in NumPy."""
    for ax, n in zip(axes, s):
        m = a.shape[ax]
        if n < m:
            a = np.take(a, np.arange(n), axis=ax)
        elif n > m:
            width = [(0, 0)] * a.ndim
            width[ax] = (0, n - m)
            a = np.pad(a, width)
    return a


def _data(dtype, shape=(6, 10, 9), seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape).astype(dtype)
    z = (x + 1j * r.standard_normal(shape)).astype(np.result_type(dtype, np.complex64))
    return x, z


def _assert_bitwise(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))


AXES_AND_GROWTH = [((0, 1, 2), (3, 3, 3)), ((2, 0), (4, -2)), ((1,), (5,)), ((0, 2), (-2, 3)),
                   ((2, 1, 0), (2, -3, 0)), ((1, 2), (0, 0))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("axes, growth", AXES_AND_GROWTH)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_nd_transforms_of_resized_inputs_are_numpys_bit_for_bit(dtype, axes, growth, norm):
    x, z = _data(dtype)
    s = [x.shape[a] + g for a, g in zip(axes, growth)]
    xp, zp = _resized(x, s, axes), _resized(z, s, axes)
    _assert_bitwise(nx.fft.fftn(nx.asarray(z), s, axes, norm),
                    np.fft.fftn(zp, axes=axes, norm=norm))
    _assert_bitwise(nx.fft.ifftn(nx.asarray(z), s, axes, norm),
                    np.fft.ifftn(zp, axes=axes, norm=norm))
    _assert_bitwise(nx.fft.fftn(nx.asarray(x), s, axes, norm),
                    np.fft.fftn(xp.astype(z.dtype), axes=axes, norm=norm))
    _assert_bitwise(nx.fft.rfftn(nx.asarray(x), s, axes, norm),
                    np.fft.rfftn(xp, axes=axes, norm=norm))
    spec = np.fft.rfftn(x, axes=axes)
    half = _resized(spec, s[:-1] + [s[-1] // 2 + 1], axes)
    _assert_bitwise(nx.fft.irfftn(nx.asarray(spec), s, axes, norm),
                    np.fft.irfftn(half, s, axes=axes, norm=norm))


@pytest.mark.parametrize("n", [5, 9, 14, 20])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_1d_transforms_of_resized_inputs_are_numpys_bit_for_bit(n, axis):
    x, z = _data(np.float64)
    for ours, theirs, a in [(nx.fft.fft, np.fft.fft, z), (nx.fft.ifft, np.fft.ifft, z),
                            (nx.fft.rfft, np.fft.rfft, x), (nx.fft.irfft, np.fft.irfft, z),
                            (nx.fft.hfft, np.fft.hfft, z), (nx.fft.ihfft, np.fft.ihfft, x)]:
        _assert_bitwise(ours(nx.asarray(a), n, axis, "ortho"), theirs(a, n, axis, "ortho"))


def test_zero_padding_reaches_numpy_unmaterialized(monkeypatch):
    """rfftn(x (12, 10), s=(16, 16)): NumPy's rfft sees the 12 x 10 values with n=16 (it pads
    each line itself), and the fft along axis 0 runs on an array this module owns."""
    seen = []
    real_rfft, real_fft = np.fft.rfft, np.fft.fft

    def rfft(a, n=None, axis=-1, norm=None, out=None):
        seen.append(("rfft", np.shape(a), n, axis))
        return real_rfft(a, n=n, axis=axis, norm=norm, out=out)

    def fft(a, n=None, axis=-1, norm=None, out=None):
        seen.append(("fft", np.shape(a), n, axis))
        return real_fft(a, n=n, axis=axis, norm=norm, out=out)

    x = np.random.default_rng(2).standard_normal((12, 10))
    want = np.fft.rfftn(_resized(x, (16, 16), (0, 1)))
    monkeypatch.setattr(np.fft, "rfft", rfft)
    monkeypatch.setattr(np.fft, "fft", fft)
    got = nx.fft.rfftn(nx.asarray(x), (16, 16))
    _assert_bitwise(got, want)
    assert seen[:1] == [("rfft", (12, 10), 16, 1)]
    assert all(shape[0] != 16 or name != "rfft" for name, shape, _, _ in seen)


@pytest.mark.parametrize("fill", [1.5, -0.0])
def test_padding_that_is_not_plain_zeros_is_transformed_as_given(fill):
    """A padded view whose fill is not +0 (or that pads at the front) is materialized as it
    is: -0.0 padding can change the sign of a zero result."""
    x = np.zeros((4, 6))
    x[1, 2] = 1.0
    t = nx.pad(nx.asarray(x), ((0, 2), (1, 2)), constant_values=fill)
    want = np.pad(x, ((0, 2), (1, 2)), constant_values=fill)
    _assert_bitwise(nx.fft.rfftn(t), np.fft.rfftn(want))
    _assert_bitwise(nx.fft.fft2(t), np.fft.fft2(want.astype(complex)))
    t2 = nx.pad(nx.asarray(x), ((0, 3), (0, 0)), constant_values=fill)
    _assert_bitwise(nx.fft.fft(t2, axis=0), np.fft.fft(np.pad(x, ((0, 3), (0, 0)),
                                                              constant_values=fill), axis=0))


def test_gradient_through_the_padded_path_matches_the_transposed_transform():
    """The VJP of rfftn at s=(8, 8) of a (5, 6) input: the cotangent through the transposed
    real FFT, cropped to the input (by hand in NumPy)."""
    r = np.random.default_rng(4)
    x = r.standard_normal((5, 6))
    w = r.standard_normal((8, 5))
    g = nx.grad(lambda t: nx.sum(nx.real(nx.fft.rfftn(t, (8, 8))) * nx.asarray(w)))(
        nx.asarray(x))
    # d/dx sum(w * Re(rfftn(pad(x)))): the real part of the forward DFT is linear in x
    eye = np.eye(x.size).reshape(x.size, *x.shape)
    jac = np.stack([np.fft.rfftn(_resized(e, (8, 8), (0, 1))).real for e in eye])
    np.testing.assert_allclose(np.asarray(g), np.tensordot(jac, w, axes=2).reshape(x.shape),
                               rtol=1e-12, atol=1e-12)
