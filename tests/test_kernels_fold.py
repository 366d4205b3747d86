"""nx_rune._kernels.fold: unfold (im2col) against a loop reference, fold as its adjoint."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nx_rune._kernels.fold import fold, unfold

# ---------------------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------------------

def window_counts(sizes, k, st_, dil, pad):
    return [(n + 2 * p - d * (kk - 1) - 1) // s + 1
            for n, kk, s, d, p in zip(sizes, k, st_, dil, pad)]


def unfold_reference(x, k, st_, dil, pad):
    """Element-by-element im2col with PyTorch's (N, C*K, L) layout."""
    sizes = x.shape[2:]
    counts = window_counts(sizes, k, st_, dil, pad)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    K, L = math.prod(k), math.prod(counts)
    cols = np.zeros((x.shape[0], x.shape[1] * K, L), dtype=x.dtype)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for ki, kpos in enumerate(itertools.product(*map(range, k))):
            for li, opos in enumerate(itertools.product(*map(range, counts))):
                where = tuple(o * s + j * d for o, j, s, d in zip(opos, kpos, st_, dil))
                cols[n, c * K + ki, li] = xp[(n, c) + where]
    return cols


def window_positions(sizes, k, st_, dil, pad):
    """Padded image coordinates, one (K, L) array per spatial axis."""
    counts = window_counts(sizes, k, st_, dil, pad)
    kgrid = np.indices(k).reshape(len(k), -1)        # (s, K)
    ogrid = np.indices(counts).reshape(len(k), -1)   # (s, L)
    return tuple(ogrid[d][None, :] * st_[d] + kgrid[d][:, None] * dil[d] for d in range(len(k)))


def fold_reference(cols, sizes, k, st_, dil, pad):
    """col2im as np.add.at into the padded image, then cropped."""
    N, CK, L = cols.shape
    K = math.prod(k)
    out = np.zeros((N, CK // K) + tuple(n + 2 * p for n, p in zip(sizes, pad)), cols.dtype)
    index = (slice(None), slice(None)) + window_positions(sizes, k, st_, dil, pad)
    np.add.at(out, index, cols.reshape(N, CK // K, K, L))
    crop = tuple(slice(p, p + n) for n, p in zip(sizes, pad))
    return out[(slice(None), slice(None)) + crop]


def assert_same(actual, expected):
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

CASES = [
    # (spatial sizes, kernel, stride, dilation, padding)
    ((7,), (3,), (1,), (1,), (0,)),
    ((10,), (2,), (3,), (2,), (1,)),
    ((5,), (5,), (1,), (1,), (2,)),
    ((1,), (1,), (1,), (1,), (0,)),
    ((6, 5), (3, 2), (1, 1), (1, 1), (0, 0)),
    ((8, 9), (3, 3), (2, 3), (1, 2), (1, 2)),
    ((4, 4), (2, 2), (2, 2), (1, 1), (0, 0)),
    ((3, 7), (1, 3), (1, 2), (1, 1), (3, 0)),
    ((2, 2), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((5, 4, 6), (2, 3, 2), (1, 2, 2), (2, 1, 1), (1, 0, 1)),
    ((3, 3, 3), (3, 1, 2), (1, 1, 1), (1, 1, 2), (0, 1, 1)),
]


@st.composite
def window_cases(draw):
    s = draw(st.integers(1, 3))
    k = tuple(draw(st.integers(1, 3)) for _ in range(s))
    st_ = tuple(draw(st.integers(1, 3)) for _ in range(s))
    dil = tuple(draw(st.integers(1, 2)) for _ in range(s))
    pad = tuple(draw(st.integers(0, 2)) for _ in range(s))
    sizes = tuple(max(1, d * (kk - 1) + 1 - 2 * p + draw(st.integers(0, 4)))
                  for kk, d, p in zip(k, dil, pad))
    batch, channels = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    return (batch, channels) + (sizes, k, st_, dil, pad)


def image(rng, shape, dtype=np.float64):
    return rng.integers(-5, 6, shape).astype(dtype)


# ---------------------------------------------------------------------------------------
# unfold
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("sizes, k, st_, dil, pad", CASES)
def test_unfold_matches_loop_reference(sizes, k, st_, dil, pad):
    x = image(np.random.default_rng(0), (2, 3) + sizes)
    cols = unfold(x, k, st_, dil, pad)
    assert_same(cols, unfold_reference(x, k, st_, dil, pad))
    assert cols.flags.c_contiguous


@settings(max_examples=150, deadline=None)
@given(window_cases(), st.integers(0, 2**32 - 1))
def test_unfold_random_windows(case, seed):
    batch, channels, sizes, k, st_, dil, pad = case
    x = image(np.random.default_rng(seed), (batch, channels) + sizes)
    assert_same(unfold(x, k, st_, dil, pad), unfold_reference(x, k, st_, dil, pad))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16,
                                   np.float32, np.complex64, np.complex128, np.dtype(">f8")])
def test_unfold_every_dtype(dtype):
    x = image(np.random.default_rng(1), (1, 2, 5, 4), dtype)
    args = ((2, 3), (2, 1), (1, 1), (1, 1))
    assert_same(unfold(x, *args), unfold_reference(x, *args))


def test_unfold_non_contiguous_inputs():
    base = image(np.random.default_rng(2), (3, 4, 9, 8))
    args = ((3, 2), (2, 1), (1, 2), (1, 0))
    for x in (base[::-1, :, ::-2, ::-1], base.transpose(1, 0, 3, 2), base[:, 1:3, 2:, ::3],
              np.broadcast_to(base[:1], base.shape), np.asfortranarray(base)):
        assert_same(unfold(x, *args), unfold_reference(x, *args))


def test_unfold_int_parameters_apply_to_every_axis():
    x = image(np.random.default_rng(3), (1, 2, 6, 7))
    assert_same(unfold(x, 3, 2, 1, 1), unfold_reference(x, (3, 3), (2, 2), (1, 1), (1, 1)))
    assert_same(unfold(x, (2, 3)), unfold_reference(x, (2, 3), (1, 1), (1, 1), (0, 0)))


def test_unfold_empty_batch():
    assert unfold(np.zeros((0, 3, 5, 5)), (2, 2)).shape == (0, 12, 16)


# ---------------------------------------------------------------------------------------
# fold
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("sizes, k, st_, dil, pad", CASES)
def test_fold_matches_add_at_reference(sizes, k, st_, dil, pad):
    L = math.prod(window_counts(sizes, k, st_, dil, pad))
    cols = image(np.random.default_rng(4), (2, 3 * math.prod(k), L))
    out = fold(cols, sizes, k, st_, dil, pad)
    assert_same(out, fold_reference(cols, sizes, k, st_, dil, pad))
    assert out.flags.c_contiguous


@settings(max_examples=150, deadline=None)
@given(window_cases(), st.integers(0, 2**32 - 1))
def test_fold_is_the_adjoint_of_unfold(case, seed):
    batch, channels, sizes, k, st_, dil, pad = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, channels) + sizes)
    cols = unfold(x, k, st_, dil, pad)
    y = rng.standard_normal(cols.shape)
    folded = fold(y, sizes, k, st_, dil, pad)
    assert folded.shape == x.shape
    np.testing.assert_allclose(np.vdot(cols, y), np.vdot(x, folded), rtol=1e-12, atol=1e-12)
    assert_same(folded, fold_reference(y, sizes, k, st_, dil, pad))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float32,
                                   np.float64, np.complex64, np.complex128, np.dtype(">i4")])
def test_fold_dtypes(dtype):
    sizes, k, st_, dil, pad = (5, 6), (3, 2), (1, 2), (1, 1), (1, 0)
    L = math.prod(window_counts(sizes, k, st_, dil, pad))
    cols = image(np.random.default_rng(5), (2, 2 * 6, L), dtype)
    out = fold(cols, sizes, k, st_, dil, pad)
    expected = fold_reference(cols.astype(cols.dtype.newbyteorder("=")), sizes, k, st_, dil, pad)
    assert_same(out, expected)


def test_fold_integer_sums_wrap():
    cols = np.full((1, 4, 1), 100, np.int8)
    assert_same(fold(cols, (2, 2), (2, 2)), np.full((1, 1, 2, 2), 100, np.int8))
    overlapping = np.full((1, 2, 3), 100, np.int8)   # kernel 2, stride 1: middle sums twice
    assert_same(fold(overlapping, (4,), (2,)),
                np.array([[[100, -56, -56, 100]]], np.int8))


def test_fold_float16_rounds_once():
    cols = np.full((1, 9, 4), 0.1, np.float16)
    out = fold(cols, (4, 4), (3, 3))
    assert out.dtype == np.float16
    expected = fold_reference(cols.astype(float), (4, 4), (3, 3), (1, 1), (1, 1), (0, 0))
    np.testing.assert_allclose(out.astype(float), expected, rtol=1e-3)


def test_fold_non_contiguous_cols():
    sizes, k, st_, dil, pad = (6, 7), (2, 3), (2, 1), (1, 2), (1, 1)
    L = math.prod(window_counts(sizes, k, st_, dil, pad))
    base = image(np.random.default_rng(6), (2, 3 * 6, 2 * L))
    for cols in (base[:, :, ::2], base[::-1, ::-1, L:], np.broadcast_to(base[:1, :, :L],
                                                                         (2, 18, L))):
        assert_same(fold(cols, sizes, k, st_, dil, pad),
                    fold_reference(np.ascontiguousarray(cols), sizes, k, st_, dil, pad))


def test_fold_of_unfold_counts_window_coverage():
    x = np.ones((1, 1, 4, 4))
    k, st_ = (2, 2), (1, 1)
    coverage = fold(unfold(x, k, st_), (4, 4), k, st_)
    assert_same(coverage[0, 0], np.array([[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2],
                                          [1, 2, 2, 1]], float))


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------

def test_fold_cols_rank():
    with pytest.raises(ValueError, match=r"cols.*shape \(4, 9\)"):
        fold(np.zeros((4, 9)), (3, 3), (1, 1))


def test_fold_channel_axis_not_divisible():
    with pytest.raises(ValueError, match=r"cols.shape\[1\] = 5 .* prod\(kernel_size\) = 4"):
        fold(np.zeros((1, 5, 9)), (4, 4), (2, 2))


def test_fold_wrong_number_of_windows():
    with pytest.raises(ValueError, match=r"L = 10 .*output_size \(4, 4\) gives 9"):
        fold(np.zeros((1, 4, 10)), (4, 4), (2, 2))


@pytest.mark.parametrize("name, kwargs", [
    ("kernel_size", dict(kernel_size=(0, 2))),
    ("stride", dict(stride=(1, 0))),
    ("dilation", dict(dilation=-1)),
    ("padding", dict(padding=(-1, 0))),
])
def test_bad_window_parameters(name, kwargs):
    params = dict(kernel_size=(2, 2), stride=1, dilation=1, padding=0) | kwargs
    with pytest.raises(ValueError, match=name):
        unfold(np.zeros((1, 1, 4, 4)), **params)
    with pytest.raises(ValueError, match=name):
        fold(np.zeros((1, 4, 9)), (4, 4), **params)


def test_parameter_length_must_match_spatial_rank():
    with pytest.raises(ValueError, match=r"stride must have 2 entries"):
        unfold(np.zeros((1, 1, 4, 4)), (2, 2), stride=(1, 1, 1))
    with pytest.raises(ValueError, match=r"kernel_size must have 1 entries"):
        fold(np.zeros((1, 4, 9)), (4,), (2, 2))


def test_non_integer_parameters():
    with pytest.raises(TypeError, match="kernel_size"):
        unfold(np.zeros((1, 1, 4, 4)), (2.5, 2))
    with pytest.raises(TypeError, match="output_size"):
        fold(np.zeros((1, 4, 9)), 4, (2, 2))


def test_kernel_larger_than_padded_input():
    with pytest.raises(ValueError, match=r"kernel_size \(5, 2\).*spatial shape \(4, 4\)"):
        unfold(np.zeros((1, 1, 4, 4)), (5, 2))
    with pytest.raises(ValueError, match=r"kernel_size \(3,\) with dilation \(3,\)"):
        fold(np.zeros((1, 3, 1)), (5,), (3,), dilation=3)


def test_unfold_needs_spatial_axes():
    with pytest.raises(ValueError, match=r"x must have shape \(N, C, \*spatial\).*\(2, 3\)"):
        unfold(np.zeros((2, 3)), (1,))


def test_bad_output_size():
    with pytest.raises(ValueError, match="output_size"):
        fold(np.zeros((1, 1, 1)), (0,), (1,))
    with pytest.raises(ValueError, match="output_size"):
        fold(np.zeros((1, 1, 1)), (), ())


def test_dtype_errors():
    with pytest.raises(TypeError, match="bool"):
        fold(np.zeros((1, 4, 9), bool), (4, 4), (2, 2))
    with pytest.raises(TypeError, match="x"):
        unfold(np.zeros((1, 1, 3), object), (2,))
    with pytest.raises(TypeError, match="cols"):
        fold(np.array([[["a"]]]), (1,), (1,))
