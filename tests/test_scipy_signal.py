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
