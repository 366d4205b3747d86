"""unfold / fold / conv2d and einsum against NumPy (and scipy) references."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_rune as nx

SETTINGS = settings(deadline=None, max_examples=50)
seeds = st.integers(0, 2**16)


# -- NumPy references ----------------------------------------------------------------------------

def ref_unfold(x, k, s, d, p):
    """im2col by loops over kernel offsets: (N, C, *sp) -> (N, C*K, L)."""
    N, C, *sp = x.shape
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    counts = [(n + 2 * q - dd * (kk - 1) - 1) // ss + 1 for n, kk, ss, dd, q in zip(sp, k, s, d, p)]
    cols = np.zeros((N, C, math.prod(k), math.prod(counts)), x.dtype)
    for ki, off in enumerate(itertools.product(*[range(kk) for kk in k])):
        sl = tuple(slice(o * dd, o * dd + (c - 1) * ss + 1, ss)
                   for o, dd, c, ss in zip(off, d, counts, s))
        cols[:, :, ki, :] = xp[(slice(None), slice(None)) + sl].reshape(N, C, -1)
    return cols.reshape(N, C * math.prod(k), -1)


def ref_fold(cols, out_size, k, s, d, p):
    """col2im with np.add.at: the adjoint of ref_unfold."""
    N, CK, L = cols.shape
    K = math.prod(k)
    C = CK // K
    counts = [(n + 2 * q - dd * (kk - 1) - 1) // ss + 1
              for n, kk, ss, dd, q in zip(out_size, k, s, d, p)]
    img = np.zeros((N, C) + tuple(n + 2 * q for n, q in zip(out_size, p)), cols.dtype)
    c4 = cols.reshape(N, C, K, *counts)
    for ki, off in enumerate(itertools.product(*[range(kk) for kk in k])):
        for pos in itertools.product(*[range(c) for c in counts]):
            where = tuple(o * dd + q * ss for o, dd, q, ss in zip(off, d, pos, s))
            np.add.at(img, (slice(None), slice(None)) + where, c4[(slice(None), slice(None), ki)
                                                                  + pos])
    return img[(slice(None), slice(None)) + tuple(slice(q, q + n) for q, n in zip(p, out_size))]


def ref_conv2d(x, w, s, p, d):
    """Cross-correlation through sliding windows and einsum."""
    kh, kw = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    span = (d[0] * (kh - 1) + 1, d[1] * (kw - 1) + 1)
    win = np.lib.stride_tricks.sliding_window_view(xp, span, axis=(2, 3))
    win = win[:, :, ::s[0], ::s[1], ::d[0], ::d[1]]
    return np.einsum("nchwij,ocij->nohw", win, w)


@st.composite
def window_case(draw, max_spatial=3):
    s = draw(st.integers(1, max_spatial))
    k = tuple(draw(st.integers(1, 3)) for _ in range(s))
    st_ = tuple(draw(st.integers(1, 3)) for _ in range(s))
    dl = tuple(draw(st.integers(1, 2)) for _ in range(s))
    pd = tuple(draw(st.integers(0, 2)) for _ in range(s))
    sizes = tuple(max(draw(st.integers(1, 6 if s < 3 else 4)), dd * (kk - 1) + 1 - 2 * q)
                  for kk, dd, q in zip(k, dl, pd))
    N, C = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    return (N, C) + sizes, k, st_, dl, pd


def _arg(values, as_int):
    return values[0] if as_int and len(set(values)) == 1 else values


@SETTINGS
@given(case=window_case(), dtype=st.sampled_from([np.float32, np.float64, np.int32]),
       ints=st.booleans(), seed=seeds)
def test_unfold_matches_reference(case, dtype, ints, seed):
    shape, k, s, d, p = case
    x = np.random.default_rng(seed).integers(-5, 5, shape).astype(dtype)
    got = nx.unfold(nx.asarray(x), _arg(k, ints), _arg(s, ints), _arg(d, ints), _arg(p, ints))
    want = ref_unfold(x, k, s, d, p)
    assert got.dtype == x.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@SETTINGS
@given(case=window_case(), dtype=st.sampled_from([np.float32, np.float64, np.int64]),
       seed=seeds)
def test_fold_matches_add_at_reference(case, dtype, seed):
    shape, k, s, d, p = case
    cols_shape = ref_unfold(np.zeros(shape), k, s, d, p).shape
    cols = np.random.default_rng(seed).integers(-5, 5, cols_shape).astype(dtype)
    got = nx.fold(nx.asarray(cols), shape[2:], k, s, d, p)
    want = ref_fold(cols, shape[2:], k, s, d, p)
    assert got.dtype == cols.dtype and got.shape == shape
    np.testing.assert_array_equal(got.numpy(), want)


@SETTINGS
@given(case=window_case(), seed=seeds)
def test_fold_is_the_adjoint_of_unfold(case, seed):
    shape, k, s, d, p = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    u = nx.unfold(nx.asarray(x), k, s, d, p)
    c = rng.standard_normal(u.shape)
    lhs = float(np.sum(u.numpy() * c))
    rhs = float(np.sum(x * nx.fold(nx.asarray(c), shape[2:], k, s, d, p).numpy()))
    assert math.isclose(lhs, rhs, rel_tol=1e-9, abs_tol=1e-9)


def test_unfold_of_views():
    x = np.arange(2 * 3 * 5 * 6, dtype=np.float32).reshape(2, 3, 5, 6)
    t = nx.flip(nx.transpose(nx.asarray(np.ascontiguousarray(x.transpose(0, 1, 3, 2))),
                             (0, 1, 3, 2)), 3)
    want = ref_unfold(x[..., ::-1], (2, 3), (1, 2), (2, 1), (1, 0))
    np.testing.assert_array_equal(nx.unfold(t, (2, 3), (1, 2), (2, 1), (1, 0)).numpy(), want)
    p = nx.pad(nx.asarray(x), ((0, 0), (0, 0), (1, 0), (0, 2)), constant_values=3.0)
    np.testing.assert_array_equal(nx.unfold(p, 3).numpy(), ref_unfold(
        np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 2)), constant_values=3.0), (3, 3), (1, 1),
        (1, 1), (0, 0)))


def test_fold_int_output_size():
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5)
    cols = nx.unfold(nx.asarray(x), 2)
    np.testing.assert_array_equal(nx.fold(cols, 5, 2).numpy(),
                                  ref_fold(cols.numpy(), (5, 5), (2, 2), (1, 1), (1, 1), (0, 0)))
    cols1 = nx.unfold(nx.asarray(x[:, :, 0]), (3,))
    assert nx.fold(cols1, 5, (3,)).shape == (2, 3, 5)


def test_window_argument_errors():
    x = nx.zeros((1, 2, 5, 5))
    for name, kw in [("kernel_size", dict(kernel_size=0)), ("kernel_size", dict(kernel_size=(2,))),
                     ("kernel_size", dict(kernel_size=(2, 2, 2))), ("stride", dict(stride=0)),
                     ("stride", dict(stride=(1, -1))), ("dilation", dict(dilation=0)),
                     ("padding", dict(padding=-1)), ("padding", dict(padding=(1, 2, 3)))]:
        args = dict(kernel_size=2)
        args.update(kw)
        with pytest.raises(ValueError, match=name):
            nx.unfold(x, **args)
    with pytest.raises(ValueError, match="kernel_size.*spans"):
        nx.unfold(x, 6)
    with pytest.raises(ValueError, match="kernel_size.*spans"):
        nx.unfold(x, 3, dilation=3)
    with pytest.raises(TypeError, match="kernel_size"):
        nx.unfold(x, 2.5)
    with pytest.raises(TypeError, match="stride"):
        nx.unfold(x, 2, stride=True)
    with pytest.raises(ValueError, match=r"x: .*\(2, 5\)"):
        nx.unfold(nx.zeros((2, 5)), 2)
    cols = nx.unfold(x, 2)                       # (1, 8, 16)
    with pytest.raises(ValueError, match="cols.*L = 16"):
        nx.fold(cols, (6, 6), 2)
    with pytest.raises(ValueError, match="cols.*multiple"):
        nx.fold(cols, (5, 5), 3)
    with pytest.raises(ValueError, match="cols"):
        nx.fold(nx.zeros((8, 16)), (5, 5), 2)
    with pytest.raises(ValueError, match="output_size"):
        nx.fold(cols, (0, 5), 2)
    with pytest.raises(ValueError, match="output_size"):
        nx.fold(cols, (), 2)
    with pytest.raises(TypeError, match="output_size"):
        nx.fold(cols, 4.5, 2)
    with pytest.raises(TypeError, match="bool"):
        nx.fold(nx.zeros((1, 8, 16), nx.bool_), (5, 5), 2)


@SETTINGS
@given(N=st.integers(1, 2), C=st.integers(1, 3), O=st.integers(1, 3), H=st.integers(3, 7),
       W=st.integers(3, 7), kh=st.integers(1, 3), kw=st.integers(1, 3),
       s=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       p=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       d=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       dtype=st.sampled_from([np.float32, np.float64]), seed=seeds)
def test_conv2d_matches_reference(N, C, O, H, W, kh, kw, s, p, d, dtype, seed):
    if d[0] * (kh - 1) + 1 > H + 2 * p[0] or d[1] * (kw - 1) + 1 > W + 2 * p[1]:
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C, kh, kw)).astype(dtype)
    got = nx.conv2d(nx.asarray(x), nx.asarray(w), stride=s, padding=p, dilation=d)
    want = ref_conv2d(x.astype(np.float64), w.astype(np.float64), s, p, d)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-4 if dtype == np.float32 else 1e-10)


def test_conv2d_against_scipy_and_errors():
    signal = pytest.importorskip("scipy.signal")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8, 9))
    w = rng.standard_normal((4, 3, 3, 2))
    got = nx.conv2d(x, w, padding=(1, 0)).numpy()
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (0, 0)])
    want = np.stack([np.stack([sum(signal.correlate(xp[n, c], w[o, c], mode="valid")
                                   for c in range(3)) for o in range(4)]) for n in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    assert nx.conv2d(nx.ones((1, 1, 4, 4), nx.int32), nx.ones((1, 1, 2, 2), nx.int32)).dtype \
        == np.int32
    assert nx.conv2d(nx.ones((1, 1, 4, 4)), np.ones((1, 1, 2, 2))).dtype == np.float64
    with pytest.raises(ValueError, match=r"channels.*\(1, 2, 4, 4\).*\(1, 3, 2, 2\)"):
        nx.conv2d(nx.ones((1, 2, 4, 4)), nx.ones((1, 3, 2, 2)))
    with pytest.raises(ValueError, match="x: expected shape"):
        nx.conv2d(nx.ones((2, 4, 4)), nx.ones((1, 2, 2, 2)))
    with pytest.raises(ValueError, match="w: expected shape"):
        nx.conv2d(nx.ones((1, 2, 4, 4)), nx.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="stride"):
        nx.conv2d(nx.ones((1, 2, 4, 4)), nx.ones((1, 2, 2, 2)), stride=0)
    with pytest.raises(ValueError, match="kernel_size.*spans"):
        nx.conv2d(nx.ones((1, 2, 4, 4)), nx.ones((1, 2, 5, 2)))


# -- einsum --------------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]), ("i,i->", [(4,), (4,)]), ("i,i", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(3, 4)]), ("ij", [(3, 4)]), ("ji", [(3, 4)]),
    ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]),
    ("ii->", [(4, 4)]), ("bii->bi", [(2, 3, 3)]), ("iij->ij", [(3, 3, 2)]), ("iji->j", [(3, 2, 3)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]), ("ij,ij->", [(3, 4), (3, 4)]), ("ij,j->i", [(3, 4), (4,)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,i,i->i", [(4,), (4,), (4,)]), ("ab,bc,ca->", [(2, 3), (3, 4), (4, 2)]),
    ("i...,i", [(4, 2), (4,)]), ("...ii->...i", [(2, 3, 3)]), ("ij,jk->ik", [(3, 1), (4, 5)]),
    ("Ba,aC", [(2, 3), (3, 4)]), ("bA,Ac", [(2, 3), (3, 4)]), ("i j, j k -> i k", [(2, 3), (3, 4)]),
    ("ij,jk->ik", [(0, 4), (4, 5)]), ("ij,jk->ik", [(3, 0), (0, 5)]), ("", [()]), (",->", [(), ()]),
    ("i,->i", [(3,), ()]), ("ijk,jil->kl", [(3, 4, 2), (4, 3, 5)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_einsum_matches_numpy(spec, shapes, dtype):
    rng = np.random.default_rng(len(spec))
    ops_ = [rng.integers(-3, 4, s).astype(dtype) for s in shapes]
    want = np.einsum(spec, *ops_)
    got = nx.einsum(spec, *[nx.asarray(o) for o in ops_])
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


@SETTINGS
@given(b=st.integers(1, 3), n=st.integers(0, 4), k=st.integers(1, 4), m=st.integers(1, 4),
       seed=seeds)
def test_einsum_random_batch_matmul(b, n, k, m, seed):
    rng = np.random.default_rng(seed)
    a, c = rng.standard_normal((b, n, k)), rng.standard_normal((b, k, m))
    for spec in ["bnk,bkm->bnm", "bnk,bkm->bmn", "bnk,bkm->nm", "bnk,bkm->b", "bnk,bkm"]:
        np.testing.assert_allclose(nx.einsum(spec, a, c).numpy(), np.einsum(spec, a, c),
                                   rtol=1e-10, atol=1e-12)


def test_einsum_promotes_and_bool():
    a = np.ones((2, 3), np.int32)
    b = np.ones((3,), np.float32)
    assert nx.einsum("ij,j->i", a, b).dtype == np.float32   # jnp.einsum's (NumPy: float64)
    x = np.array([True, False, True])
    y = np.array([True, True, False])
    assert nx.einsum("i,i", x, y).dtype == np.bool_
    assert nx.einsum("i,i", x, y).item() == np.einsum("i,i", x, y)
    assert nx.einsum("i,j->ij", x, y).numpy().tolist() == np.einsum("i,j->ij", x, y).tolist()


def test_einsum_errors():
    a = nx.ones((2, 3))
    with pytest.raises(ValueError, match="2 operands but 1"):
        nx.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="2 labels but 3 dimensions"):
        nx.einsum("ij", nx.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"label 'j' has sizes 3 and 4.*\(2, 3\), \(4, 5\)"):
        nx.einsum("ij,jk->ik", a, nx.ones((4, 5)))
    with pytest.raises(ValueError, match="not in any operand"):
        nx.einsum("ij->k", a)
    with pytest.raises(ValueError, match="repeated"):
        nx.einsum("ij->ii", a)
    with pytest.raises(ValueError, match="label 'i' has sizes 2 and 3"):
        nx.einsum("ii->i", a)
    with pytest.raises(ValueError, match="equal sizes"):
        nx.einsum("ii->i", nx.ones((1, 3)))
    with pytest.raises(ValueError, match="invalid label"):
        nx.einsum("i1", a)
    with pytest.raises(ValueError, match="ellipsis"):
        nx.einsum("i..j", a)
    with pytest.raises(ValueError, match=r"'\.\.\.'"):
        nx.einsum("...j->j", a)
    with pytest.raises(TypeError, match="subscripts"):
        nx.einsum(3, a)
    with pytest.raises(ValueError, match="at least one operand"):
        nx.einsum("ij")


# -- derivatives through the windows ---------------------------------------------------------------

@pytest.mark.skipif(not hasattr(nx, "grad"), reason="autodiff not available")
def test_grads_through_unfold_conv_einsum():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 4))
    c = rng.standard_normal(nx.unfold(nx.asarray(x), 2, padding=1).shape)
    g = nx.grad(lambda v: nx.sum(nx.unfold(v, 2, padding=1) * c))(nx.asarray(x)).numpy()
    np.testing.assert_allclose(g, ref_fold(c, (5, 4), (2, 2), (1, 1), (1, 1), (1, 1)), rtol=1e-10)
    w = rng.standard_normal((3, 2, 2, 2))
    gw = nx.grad(lambda w_: nx.sum(nx.conv2d(nx.asarray(x), w_)))(nx.asarray(w)).numpy()
    win = np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 3))
    np.testing.assert_allclose(gw, np.broadcast_to(win.sum(axis=(0, 2, 3)), w.shape), rtol=1e-10)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    ga = nx.grad(lambda a_: nx.sum(nx.einsum("ij,jk->ik", a_, b)))(nx.asarray(a)).numpy()
    np.testing.assert_allclose(ga, np.broadcast_to(b.sum(1), (3, 4)), rtol=1e-10)
    m = rng.standard_normal((4, 4))
    gm = nx.grad(lambda m_: nx.einsum("ii", m_))(nx.asarray(m)).numpy()
    np.testing.assert_allclose(gm, np.eye(4))
