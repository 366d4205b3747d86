"""The Threefry-2x32 kernel: known answers, JAX's array layout, iota counters, errors."""
import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nx_rune._kernels import threefry as K

# Random123's known-answer vectors (a copy of shared/kat/threefry2x32.json), kept in the repo so
# that these tests always run.
KAT_PATH = pathlib.Path(__file__).resolve().parent / "data" / "threefry2x32.json"

MASK = 0xFFFFFFFF
ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def reference_block(k0, k1, c0, c1, rounds=20):
    """Threefry-2x32-R on Python ints, written from the algorithm's description."""
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0, x1 = (c0 + ks[0]) & MASK, (c1 + ks[1]) & MASK
    for r in range(rounds):
        x0 = (x0 + x1) & MASK
        x1 = ((x1 << ROT[r % 8]) | (x1 >> (32 - ROT[r % 8]))) & MASK
        x1 ^= x0
        if r % 4 == 3:
            n = r // 4 + 1
            x0 = (x0 + ks[n % 3]) & MASK
            x1 = (x1 + ks[(n + 1) % 3] + n) & MASK
    return x0, x1


def u32(*values):
    return np.array(values, dtype=np.uint32)


def load_kat():
    return json.loads(KAT_PATH.read_text())["vectors"]


def kat_params():
    vectors = load_kat()
    return [pytest.param(v, id=f"R{v['rounds']}-{i}") for i, v in enumerate(vectors)]


# --- known answers --------------------------------------------------------------------------

def test_kat_file_covers_every_round_count():
    counts = {}
    for v in load_kat():
        counts[v["rounds"]] = counts.get(v["rounds"], 0) + 1
    assert counts == {13: 30, 20: 30, 32: 3}


@pytest.mark.parametrize("vec", kat_params())
def test_kat_block(vec):
    (k0, k1), (c0, c1) = vec["key"], vec["counter"]
    y0, y1 = K.threefry2x32_block(k0, k1, u32(c0), u32(c1), rounds=vec["rounds"])
    assert [int(y0[0]), int(y1[0])] == vec["expected"]


@pytest.mark.parametrize("vec", kat_params())
def test_kat_jax_layout(vec):
    out = K.threefry_2x32(u32(*vec["key"]), u32(*vec["counter"]), rounds=vec["rounds"])
    assert out.dtype == np.uint32 and out.shape == (2,)
    assert out.tolist() == vec["expected"]


def test_kat_all_vectors_in_one_call_per_key():
    # Many lanes in one call exercise the vectorized loop, not just its scalar tail.
    for v in load_kat():
        x0 = np.full(37, v["counter"][0], np.uint32)
        x1 = np.full(37, v["counter"][1], np.uint32)
        y0, y1 = K.threefry2x32_block(*v["key"], x0, x1, rounds=v["rounds"])
        assert set(y0.tolist()) == {v["expected"][0]}
        assert set(y1.tolist()) == {v["expected"][1]}


@pytest.mark.parametrize("rounds", [0, 1, 3, 4, 5, 8, 12, 13, 19, 20, 21, 32, 40])
def test_any_round_count_matches_reference(rounds):
    rng = np.random.default_rng(rounds)
    k0, k1 = (int(v) for v in rng.integers(0, 2**32, 2))
    x0 = rng.integers(0, 2**32, 2500, dtype=np.uint32)    # crosses the 1024-lane chunks
    x1 = rng.integers(0, 2**32, 2500, dtype=np.uint32)
    y0, y1 = K.threefry2x32_block(k0, k1, x0, x1, rounds=rounds)
    for i in (0, 1, 1023, 1024, 2047, 2499):
        assert (int(y0[i]), int(y1[i])) == reference_block(k0, k1, int(x0[i]), int(x1[i]), rounds)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, MASK), st.integers(0, MASK),
       st.lists(st.tuples(st.integers(0, MASK), st.integers(0, MASK)), min_size=1, max_size=20))
def test_block_matches_reference_property(k0, k1, counters):
    x0 = np.array([c[0] for c in counters], np.uint32)
    x1 = np.array([c[1] for c in counters], np.uint32)
    y0, y1 = K.threefry2x32_block(k0, k1, x0, x1)
    assert list(zip(y0.tolist(), y1.tolist())) == [reference_block(k0, k1, *c) for c in counters]


# --- JAX's threefry_2x32 layout ------------------------------------------------------------

def test_halves_layout():
    key = u32(7, 11)
    count = np.arange(10, dtype=np.uint32) * 977
    out = K.threefry_2x32(key, count)
    for i in range(5):
        y = reference_block(7, 11, int(count[i]), int(count[i + 5]))
        assert (int(out[i]), int(out[i + 5])) == y


def test_odd_length_pads_one_zero_at_the_end():
    key = u32(3, 5)
    count = u32(10, 20, 30, 40, 50)
    out = K.threefry_2x32(key, count)
    padded = K.threefry_2x32(key, u32(10, 20, 30, 40, 50, 0))
    assert out.tolist() == padded[:-1].tolist()
    # Halves of the padded [10, 20, 30 | 40, 50, 0]: out[2] is y0 of the block (30, 0).
    assert int(out[2]) == reference_block(3, 5, 30, 0)[0]


def test_single_element_is_y0_of_the_padded_block():
    out = K.threefry_2x32(u32(0, 0), u32(5))
    assert out.shape == (1,) and int(out[0]) == reference_block(0, 0, 5, 0)[0]


def test_shape_is_kept_and_layout_is_over_the_flat_array():
    key = u32(1, 2)
    count = np.arange(12, dtype=np.uint32).reshape(3, 4)
    out = K.threefry_2x32(key, count)
    assert out.shape == (3, 4)
    assert out.ravel().tolist() == K.threefry_2x32(key, count.ravel()).tolist()


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 5)])
def test_empty_counts(shape):
    out = K.threefry_2x32(u32(1, 2), np.zeros(shape, np.uint32))
    assert out.shape == shape and out.dtype == np.uint32
    y0, y1 = K.threefry2x32_block(1, 2, np.zeros(shape, np.uint32), np.zeros(shape, np.uint32))
    assert y0.shape == y1.shape == shape


def test_scalar_count():
    out = K.threefry_2x32(u32(0, 0), np.array(9, np.uint32))
    assert out.shape == () and int(out) == reference_block(0, 0, 9, 0)[0]


def test_strided_and_multidimensional_inputs():
    base = np.arange(40, dtype=np.uint32).reshape(5, 8)
    x0, x1 = base[:, ::2], base.T[::2, :5].T           # non-contiguous views of shape (5, 4)
    y0, y1 = K.threefry2x32_block(9, 10, x0, x1)
    z0, z1 = K.threefry2x32_block(9, 10, x0.copy(), x1.copy())
    assert y0.shape == (5, 4) and np.array_equal(y0, z0) and np.array_equal(y1, z1)


def test_inputs_are_not_modified():
    x0, x1 = np.arange(5, dtype=np.uint32), np.arange(5, dtype=np.uint32)
    K.threefry2x32_block(1, 2, x0, x1, rounds=13)
    assert x0.tolist() == list(range(5)) and x1.tolist() == list(range(5))


# --- iota counters (JAX's partitionable random_bits and split) -----------------------------

def test_iota_bits_and_pairs_match_blocks_of_the_64bit_iota():
    n = 3000
    lo = np.arange(n, dtype=np.uint32)
    y0, y1 = K.threefry2x32_block(0, 42, np.zeros(n, np.uint32), lo)
    assert np.array_equal(K.iota_bits32(0, 42, n), y0 ^ y1)
    want64 = (y0.astype(np.uint64) << np.uint64(32)) | y1
    assert np.array_equal(K.iota_bits64(0, 42, n), want64)
    assert np.array_equal(K.iota_pairs(0, 42, n), np.stack([y0, y1], axis=-1))


def test_jax_scalar_bits_of_key_zero():
    # jax.random.bits(PRNGKey(0)) == 4070199207 (shared/reference/jax_random.md, section 4a).
    assert int(K.iota_bits32(0, 0, 1)[0]) == 4070199207


@pytest.mark.parametrize("fn", [K.iota_bits32, K.iota_bits64, K.iota_pairs])
def test_iota_start_crossing_the_low_word(fn):
    start = 2**32 - 3
    out = fn(5, 6, 6, start=start)
    for j in range(6):
        i = start + j
        y0, y1 = reference_block(5, 6, i >> 32, i & MASK)
        want = {K.iota_bits32: y0 ^ y1, K.iota_bits64: (y0 << 32) | y1,
                K.iota_pairs: [y0, y1]}[fn]
        got = out[j].tolist()
        assert got == want


@pytest.mark.parametrize("rounds", [13, 20])
def test_iota_generic_rounds_path(rounds):
    y0, y1 = K.threefry2x32_block(1, 2, np.zeros(2100, np.uint32),
                                  np.arange(2100, dtype=np.uint32), rounds=rounds)
    assert np.array_equal(K.iota_bits32(1, 2, 2100, rounds=rounds), y0 ^ y1)
    assert np.array_equal(K.iota_pairs(1, 2, 2100, rounds=rounds), np.stack([y0, y1], -1))


def test_iota_empty():
    assert K.iota_bits32(0, 0, 0).shape == (0,)
    assert K.iota_bits64(0, 0, 0).dtype == np.uint64
    assert K.iota_pairs(0, 0, 0).shape == (0, 2)


def test_threads_do_not_change_results():
    n = (1 << 18) + 12345                       # several spans, ragged end
    old = K.get_num_threads()
    try:
        K.set_num_threads(1)
        one = (K.iota_bits32(3, 4, n), K.iota_pairs(3, 4, n),
               K.threefry2x32_block(3, 4, np.arange(n, dtype=np.uint32),
                                    np.arange(n, dtype=np.uint32)[::-1]))
        K.set_num_threads(3)
        three = (K.iota_bits32(3, 4, n), K.iota_pairs(3, 4, n),
                 K.threefry2x32_block(3, 4, np.arange(n, dtype=np.uint32),
                                      np.arange(n, dtype=np.uint32)[::-1]))
    finally:
        K.set_num_threads(old)
    assert np.array_equal(one[0], three[0]) and np.array_equal(one[1], three[1])
    assert all(np.array_equal(a, b) for a, b in zip(one[2], three[2]))


# --- errors ------------------------------------------------------------------------------------

def test_block_rejects_wrong_dtype():
    with pytest.raises(TypeError, match="x0 must have dtype uint32, got int64"):
        K.threefry2x32_block(0, 0, np.arange(3), u32(1, 2, 3))
    with pytest.raises(TypeError, match="x1 must be a numpy.ndarray"):
        K.threefry2x32_block(0, 0, u32(1), [1])


def test_block_rejects_shape_mismatch():
    msg = r"x0 and x1 must have the same shape, got \(2,\) and \(3,\)"
    with pytest.raises(ValueError, match=msg):
        K.threefry2x32_block(0, 0, u32(1, 2), u32(1, 2, 3))


@pytest.mark.parametrize("k0, err, msg", [(-1, ValueError, "k0 must be in"),
                                          (2**32, ValueError, "k0 must be in"),
                                          (1.0, TypeError, "k0 must be an integer"),
                                          (True, TypeError, "k0 must be an integer")])
def test_block_rejects_bad_key_words(k0, err, msg):
    with pytest.raises(err, match=msg):
        K.threefry2x32_block(k0, 0, u32(1), u32(1))


@pytest.mark.parametrize("rounds, err", [(-1, ValueError), (2.0, TypeError), (None, TypeError)])
def test_rejects_bad_rounds(rounds, err):
    with pytest.raises(err, match="rounds"):
        K.threefry2x32_block(0, 0, u32(1), u32(1), rounds=rounds)
    with pytest.raises(err, match="rounds"):
        K.threefry_2x32(u32(0, 0), u32(1), rounds=rounds)


def test_threefry_2x32_rejects_bad_key():
    with pytest.raises(ValueError, match=r"key must have shape \(2,\), got \(3,\)"):
        K.threefry_2x32(u32(1, 2, 3), u32(1))
    with pytest.raises(ValueError, match=r"key must have shape \(2,\), got \(1, 2\)"):
        K.threefry_2x32(np.zeros((1, 2), np.uint32), u32(1))
    with pytest.raises(TypeError, match="key must have dtype uint32, got int32"):
        K.threefry_2x32(np.zeros(2, np.int32), u32(1))


def test_threefry_2x32_rejects_bad_count():
    with pytest.raises(TypeError, match="count must have dtype uint32, got float32"):
        K.threefry_2x32(u32(1, 2), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="count must be a numpy.ndarray"):
        K.threefry_2x32(u32(1, 2), [1, 2])


def test_iota_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n must be >= 0"):
        K.iota_bits32(0, 0, -1)
    with pytest.raises(ValueError, match="start \\+ n must be at most 2\\*\\*64"):
        K.iota_bits32(0, 0, 2, start=2**64 - 1)
    with pytest.raises(TypeError, match="n must be an int"):
        K.iota_pairs(0, 0, 2.0)


def test_set_num_threads_rejects_zero():
    with pytest.raises(ValueError, match="n must be >= 1"):
        K.set_num_threads(0)


# --- fused sampler kernels ---------------------------------------------------------------------
# (their values against nx_rune.random's NumPy reference: tests/test_random.py)

def test_sample_f32_unit_is_the_top_23_bits_of_iota_bits32():
    n = 3000
    out, hard = K.sample_f32(5, 6, n, "unit")
    want = (K.iota_bits32(5, 6, n) >> np.uint32(9)).astype(np.float64) / 2**23
    assert out.dtype == np.float32 and out.shape == (n,) and hard.size == 0
    assert np.array_equal(out.astype(np.float64), want)


def test_transform_f32_of_iota_bits_is_sample_f32():
    n = 5000
    bits = K.iota_bits32(7, 8, n)
    for op, kw in [("unit", {}), ("uniform", dict(lo=-2.0, span=5.0)),
                   ("normal", dict(lo=-0.99999994, span=2.0)),
                   ("gumbel", dict(lo=1.1754944e-38, span=1.0)),
                   ("truncated_normal", dict(lo=-0.5, span=1.2, clip_lo=-1.5, clip_hi=2.5))]:
        a, ha = K.sample_f32(7, 8, n, op, **kw)
        b, hb = K.transform_f32(bits, op, **kw)
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32)) and np.array_equal(ha, hb)
        assert np.all(np.isfinite(a)), op
        if op == "truncated_normal":
            assert a.min() >= -1.5 and a.max() <= 2.5
    # non-contiguous bits are read as values
    out, _ = K.transform_f32(bits[::2], "unit")
    assert np.array_equal(out, K.transform_f32(bits[::2].copy(), "unit")[0])


def test_uniform_f64_is_the_top_52_bits_and_one_fma():
    n = 4000
    f = (K.iota_bits64(1, 2, n) >> np.uint64(12)).astype(np.float64) / 2**52   # exact
    assert np.array_equal(K.uniform_f64(1, 2, n), f)
    out, sq = K.uniform_f64(1, 2, n, -2.0, 4.0, True, square=True)
    assert np.array_equal(out, f * 4.0 - 2.0)       # exact here, so any rounding agrees
    assert np.array_equal(sq, out * -out)


def test_erfinv_f64_in_place_with_and_without_clip():
    x = np.array([-1.0, -0.999999, -0.5, 0.0, 0.25, 0.9999999999, 1.0])
    with np.errstate(divide="ignore"):
        l = np.log1p(x * -x)
    y = x.copy()
    K.erfinv_f64(y, l)
    assert y[0] == -np.inf and y[-1] == np.inf and y[3] == 0.0
    from scipy import special
    # Giles' approximation: about 1e-15 in the centre, 1e-12 in the far tails
    np.testing.assert_allclose(y[2:-2], math.sqrt(2) * special.erfinv(x[2:-2]), rtol=1e-14)
    np.testing.assert_allclose(y[1:-1], math.sqrt(2) * special.erfinv(x[1:-1]), rtol=1e-11)
    z = x.copy()
    K.erfinv_f64(z, l, -1.0, 2.0)
    assert np.array_equal(z, np.clip(y, -1.0, 2.0))
    empty = np.empty(0)
    K.erfinv_f64(empty, empty)


def test_fused_kernels_reject_bad_arguments():
    with pytest.raises(ValueError, match="op must be one of"):
        K.sample_f32(0, 0, 3, "poisson")
    with pytest.raises(ValueError, match="op must be one of"):
        K.transform_f32(u32(1), 3)
    with pytest.raises(TypeError, match="lo must be a real number"):
        K.sample_f32(0, 0, 3, "uniform", lo="1")
    with pytest.raises(TypeError, match="span must be a real number"):
        K.uniform_f64(0, 0, 3, 0.0, None, True)
    with pytest.raises(ValueError, match="n must be >= 0"):
        K.sample_f32(0, 0, -1, "unit")
    with pytest.raises(ValueError, match="k1 must be in"):
        K.uniform_f64(0, 2**32, 3)
    with pytest.raises(TypeError, match="bits must have dtype uint32"):
        K.transform_f32(np.zeros(3, np.int32), "unit")
    with pytest.raises(ValueError, match="bits must be 1-D"):
        K.transform_f32(np.zeros((2, 2), np.uint32), "unit")
    with pytest.raises(TypeError, match="x must be a 1-D C-contiguous float64"):
        K.erfinv_f64(np.zeros(4)[::2], np.zeros(2))
    with pytest.raises(TypeError, match="l must be a 1-D C-contiguous float64"):
        K.erfinv_f64(np.zeros(2), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="x and l must have the same shape"):
        K.erfinv_f64(np.zeros(2), np.zeros(3))
    with pytest.raises(TypeError, match="clip_lo and clip_hi must be given together"):
        K.erfinv_f64(np.zeros(2), np.zeros(2), 1.0)
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="x must be writeable"):
        K.erfinv_f64(ro, np.zeros(2))
