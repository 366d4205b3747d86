"""nx.lax beyond control flow: JAX's lax names on nx_rune.

Values against JAX's: every case of CASES runs the same code on ``nx_rune.lax`` as on
``jax.lax`` and compares with JAX's results, pinned in tests/data/lax_ops_golden.json (computed
with jax 0.10.2 in x64 mode by running these cases on jax.lax; float32 inputs stay float32
there).  Then: jit and vmap equal to eager, derivatives against float64 finite differences
(first and second order, both modes), traced start indices and switch indices under jit and
vmap, and bad input.
"""
import json
import pathlib

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import lax

GOLDEN = json.loads((pathlib.Path(__file__).parent / "data" / "lax_ops_golden.json").read_text())


def A(*shape, k=1, dtype=np.float64, scale=1.0):
    """A deterministic array of ``shape`` with varied values (no RNG)."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(1, n + 1) * (1.37 + 0.11 * k) + k) * scale).reshape(shape).astype(
        dtype)


I32 = np.array([-7, 7, -8, 5, 0, 9], np.int32)
J32 = np.array([2, -2, 3, -3, 4, -4], np.int32)
F64 = np.array([-7.0, 7.0, -7.5, 1e-20, -0.0, 5.25, 6.0])
G64 = np.array([2.0, -2.0, 2.0, 1.0, 3.0, -0.5, 3.0])
ROUND = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -1.2, 3.7])
CONV_IN = A(2, 5, 4, 4, k=1)          # NHWC
CONV_W = A(3, 2, 4, 3, k=2)           # HWIO
IMG = A(1, 7, 6, 2, k=3)


def _branches(N):
    return [lambda a: a * 2.0, lambda a: a - 1.0, lambda a: N.sin(a)]


# name -> (function of (lax module, numpy-like namespace) returning a function, arguments)
CASES = {
    # -- elementwise: JAX's integer division, remainder, rounding, saturation, shifts --
    "rem_f64": (lambda L, N: L.rem, (F64, G64)),
    "rem_f32": (lambda L, N: L.rem, (F64.astype(np.float32), G64.astype(np.float32))),
    "rem_i32": (lambda L, N: L.rem, (I32, J32)),
    "rem_smooth": (lambda L, N: L.rem, (A(6, k=1, scale=5.0), A(6, k=2) + 2.5)),
    "div_i32": (lambda L, N: L.div, (I32, J32)),
    "div_f64": (lambda L, N: L.div, (F64, G64)),
    "round_away": (lambda L, N: L.round, (ROUND,)),
    "round_even": (lambda L, N: lambda x: L.round(x, L.RoundingMethod.TO_NEAREST_EVEN), (ROUND,)),
    "round_f32": (lambda L, N: L.round, (ROUND.astype(np.float32),)),
    "sign": (lambda L, N: L.sign, (np.array([-0.0, 0.0, -2.0, np.nan, 3.0, -np.inf]),)),
    "cbrt": (lambda L, N: L.cbrt, (np.array([-8.0, 27.0, 0.5, 0.0, -1e-30]),)),
    "rsqrt": (lambda L, N: L.rsqrt, (np.array([4.0, 0.25, 2.0]),)),
    "erf_inv": (lambda L, N: L.erf_inv, (np.array([-0.5, 0.0, 0.9, 1.0, -1.0, 0.999]),)),
    "erf_inv_f32": (lambda L, N: L.erf_inv, (np.array([-0.5, 0.0, 0.9, 0.999], np.float32),)),
    "logistic": (lambda L, N: L.logistic, (np.array([-50.0, 0.0, 3.0, 40.0]),)),
    "bessel_i0e": (lambda L, N: L.bessel_i0e, (np.array([-2.0, 0.5, 30.0]),)),
    "bessel_i1e": (lambda L, N: L.bessel_i1e, (np.array([-2.0, 0.5, 30.0]),)),
    "lgamma": (lambda L, N: L.lgamma, (np.array([0.5, 3.0, 10.5]),)),
    "digamma": (lambda L, N: L.digamma, (np.array([0.5, 3.0, 10.5]),)),
    "erfc": (lambda L, N: L.erfc, (np.array([-1.0, 0.5, 5.0]),)),
    "atan2": (lambda L, N: L.atan2, (A(5, k=1), A(5, k=2))),
    "pow_int_exp": (lambda L, N: L.pow, (np.array([2.0, -3.0, 0.5]), np.array([3, 2, -2],
                                                                           np.int32))),
    "integer_pow3": (lambda L, N: lambda x: L.integer_pow(x, 3), (A(6),)),
    "integer_pow_neg2": (lambda L, N: lambda x: L.integer_pow(x, -2), (A(6),)),
    "integer_pow0": (lambda L, N: lambda x: L.integer_pow(x, 0), (A(3),)),
    "clamp": (lambda L, N: lambda x: L.clamp(-0.5, x, 0.5), (A(8),)),
    "clamp_arrays": (lambda L, N: L.clamp, (A(5, k=1) - 0.3, A(5, k=2), A(5, k=1) + 0.3)),
    "shift_left": (lambda L, N: L.shift_left, (np.array([1, -3, 5, 7], np.int32),
                                               np.array([3, 40, -1, 31], np.int32))),
    "shift_right_logical": (lambda L, N: L.shift_right_logical,
                            (np.array([-8, 64, 5, -1], np.int32),
                             np.array([1, 3, 33, 28], np.int32))),
    "shift_right_arithmetic": (lambda L, N: L.shift_right_arithmetic,
                               (np.array([-8, 64, -5, 3], np.int32),
                                np.array([1, 3, 40, -2], np.int32))),
    "convert_int8": (lambda L, N: lambda x: L.convert_element_type(x, np.int8),
                     (np.array([1.7, -1.7, 300.0, -300.0, np.nan, np.inf, -np.inf, 127.9]),)),
    "convert_uint8": (lambda L, N: lambda x: L.convert_element_type(x, np.uint8),
                      (np.array([1.7, -1.7, 300.0, 255.5, np.nan, np.inf]),)),
    "convert_int32": (lambda L, N: lambda x: L.convert_element_type(x, np.int32),
                      (np.array([2.5e9, -2.5e9, -2.7, np.nan]),)),
    "convert_bool": (lambda L, N: lambda x: L.convert_element_type(x, np.bool_),
                     (np.array([0.0, -0.0, 0.1, np.nan]),)),
    "convert_c2f": (lambda L, N: lambda x: L.convert_element_type(x, np.float64),
                    (np.array([1 + 2j, -3.5 - 1j]),)),
    "complex": (lambda L, N: L.complex, (A(3, k=1), A(3, k=2))),
    "nextafter": (lambda L, N: L.nextafter, (np.array([1.0, 0.0, -2.0]),
                                             np.array([2.0, -1.0, -3.0]))),
    "is_finite": (lambda L, N: L.is_finite, (np.array([1.0, np.inf, np.nan, -np.inf]),)),
    "bitwise": (lambda L, N: lambda a, b: (L.bitwise_and(a, b), L.bitwise_or(a, b),
                                          L.bitwise_xor(a, b), L.bitwise_not(a)), (I32, J32)),
    "compare": (lambda L, N: lambda a, b: (L.eq(a, b), L.ne(a, b), L.lt(a, b), L.le(a, b),
                                          L.gt(a, b), L.ge(a, b)),
                (np.array([1.0, 2.0, np.nan, 3.0]), np.array([1.0, 3.0, np.nan, 2.0]))),
    "max_min_nan": (lambda L, N: lambda a, b: (L.max(a, b), L.min(a, b)),
                    (np.array([np.nan, 1.0, -1.0]), np.array([0.0, np.nan, 2.0]))),
    "iota": (lambda L, N: lambda: L.iota(np.int32, 5), ()),
    "broadcasted_iota": (lambda L, N: lambda: L.broadcasted_iota(np.float32, (2, 3), 1), ()),
    "full": (lambda L, N: lambda: L.full((2, 2), 1.5, np.float32), ()),
    "full_like": (lambda L, N: lambda x: L.full_like(x, 3), (A(2, 3),)),
    # -- shapes and static slices --
    "pad_interior_negative": (lambda L, N: lambda x: L.pad(x, 0.5, [(1, -2, 2), (-1, 3, 1)]),
                              (A(4, 5),)),
    "pad_crop": (lambda L, N: lambda x: L.pad(x, -1.0, [(-3, -1, 0), (2, 0, 0)]), (A(4, 5),)),
    "pad_all_cut": (lambda L, N: lambda x: L.pad(x, 2.0, [(-2, -1, 1)]), (A(3),)),
    "pad_f32": (lambda L, N: lambda x: L.pad(x, np.float32(7), [(0, 1, 3)]),
                (A(3, dtype=np.float32),)),
    "slice": (lambda L, N: lambda x: L.slice(x, (1, 0), (4, 5), (2, 3)), (A(4, 5),)),
    "slice_in_dim": (lambda L, N: lambda x: L.slice_in_dim(x, -3, None, 2, 1), (A(4, 5),)),
    "index_in_dim": (lambda L, N: lambda x: L.index_in_dim(x, -1, 1, False), (A(4, 5),)),
    "concatenate": (lambda L, N: lambda a, b: L.concatenate([a, b, a], 1), (A(2, 3), A(2, 1))),
    "broadcast": (lambda L, N: lambda x: L.broadcast(x, (2,)), (A(3),)),
    "broadcast_in_dim": (lambda L, N: lambda x: L.broadcast_in_dim(x, (2, 4, 3), (1, 2)),
                         (A(4, 1),)),
    "expand_dims": (lambda L, N: lambda x: L.expand_dims(x, (0, -1)), (A(2, 3),)),
    "squeeze": (lambda L, N: lambda x: L.squeeze(x, (0, 2)), (A(1, 3, 1),)),
    "reshape_dims": (lambda L, N: lambda x: L.reshape(x, (5, 4), (1, 0)), (A(4, 5),)),
    "transpose": (lambda L, N: lambda x: L.transpose(x, (2, 0, 1)), (A(2, 3, 4),)),
    "rev": (lambda L, N: lambda x: L.rev(x, (0, 2)), (A(2, 3, 4),)),
    "collapse": (lambda L, N: lambda x: L.collapse(x, 1, 3), (A(2, 3, 4, 2),)),
    "reduces": (lambda L, N: lambda x: (L.reduce_sum(x, (0, 2)), L.reduce_max(x, (1,)),
                                        L.reduce_min(x, (0,)), L.reduce_prod(x, (2,))),
                (A(2, 3, 4),)),
    "reduce_add": (lambda L, N: lambda x: L.reduce(x, 0.0, L.add, (0, 2)), (A(2, 3, 4),)),
    "reduce_max": (lambda L, N: lambda x: L.reduce(x, -np.inf, L.max, (1,)), (A(2, 3, 4),)),
    "reduce_generic_pytree": (lambda L, N: lambda a, b: L.reduce(
        (a, b), (1.0, 0.0), lambda u, v: (u[0] * v[0], N.maximum(u[1], v[1])), (1,)),
        (A(3, 5, k=1), A(3, 5, k=2))),
    "reduce_empty_axis": (lambda L, N: lambda x: L.reduce(x, 0.0, lambda a, b: a + b, (1,)),
                          (np.zeros((3, 0)),)),
    "argmax": (lambda L, N: lambda x: (L.argmax(x, 1, np.int32), L.argmin(x, 0, np.int32)),
               (A(3, 4),)),
    # -- dynamic slices: negative starts count from the end, then starts clamp to fit --
    **{f"dynamic_slice_{a}_{b}": (lambda L, N, a=a, b=b: lambda x: L.dynamic_slice(
        x, (a, b), (2, 3)), (A(4, 5),)) for a, b in [(1, 2), (-1, 4), (10, -10), (3, 3),
                                                      (-5, 0)]},
    "dynamic_slice_array_starts": (lambda L, N: lambda x, s: L.dynamic_slice(x, s, (3, 2)),
                                   (A(4, 5), np.array([2, -1], np.int32))),
    "dynamic_slice_no_negative": (lambda L, N: lambda x, s: L.dynamic_slice(
        x, s, (2, 2), allow_negative_indices=False), (A(4, 5), np.array([-1, 1], np.int32))),
    **{f"dynamic_update_slice_{a}_{b}": (lambda L, N, a=a, b=b: lambda x, u: (
        L.dynamic_update_slice(x, u, (a, b))), (A(4, 5), A(2, 3, k=5)))
       for a, b in [(1, 2), (-1, 4), (10, -10), (0, 0)]},
    "dynamic_slice_in_dim": (lambda L, N: lambda x: L.dynamic_slice_in_dim(x, 3, 2, 1),
                             (A(4, 5),)),
    "dynamic_index_in_dim": (lambda L, N: lambda x: L.dynamic_index_in_dim(x, -1, 1, False),
                             (A(4, 5),)),
    "dynamic_update_slice_in_dim": (lambda L, N: lambda x, u: L.dynamic_update_slice_in_dim(
        x, u, 9, 0), (A(4, 5), A(2, 5, k=6))),
    "dynamic_update_index_in_dim": (lambda L, N: lambda x, u: L.dynamic_update_index_in_dim(
        x, u, -2, 1), (A(4, 5), A(4, k=6))),
    # -- selections, switch, map, scans --
    "select": (lambda L, N: lambda p, a, b: L.select(p, a, b),
               (np.array([True, False, True]), A(3, k=1), A(3, k=2))),
    "select_n": (lambda L, N: lambda w, a, b, c: L.select_n(w, a, b, c),
                 (np.array([0, 1, 2, 1, 0], np.int32), A(5, k=1), A(5, k=2), A(5, k=3))),
    **{f"switch_{i}": (lambda L, N, i=i: lambda x: L.switch(i, _branches(N), x), (A(3),))
       for i in (-1, 0, 1, 2, 5)},
    "map": (lambda L, N: lambda x: L.map(lambda r: N.sum(r ** 2), x), (A(4, 5),)),
    "map_batch_size": (lambda L, N: lambda x: L.map(lambda r: r * 3.0 + 1.0, x, batch_size=3),
                       (A(7, 2),)),
    "map_batch_size_larger_than_n": (lambda L, N: lambda x: L.map(lambda r: r * 2.0, x,
                                                                   batch_size=10), (A(3, 2),)),
    "associative_scan_len2": (lambda L, N: lambda x: L.associative_scan(N.add, x), (A(2, 3),)),
    "associative_scan_len1": (lambda L, N: lambda x: L.associative_scan(N.add, x), (A(1, 3),)),
    "associative_scan_add": (lambda L, N: lambda x: L.associative_scan(N.add, x), (A(7, 3),)),
    "associative_scan_rev_axis": (lambda L, N: lambda x: L.associative_scan(
        N.multiply, x, reverse=True, axis=1), (A(3, 6),)),
    "associative_scan_pytree": (lambda L, N: lambda a, b: L.associative_scan(
        lambda u, v: (u[0] * v[0], u[1] * v[0] + v[1]), (a, b)), (A(6, k=1), A(6, k=2))),
    "cumsum_rev": (lambda L, N: lambda x: L.cumsum(x, 1, True), (A(3, 4),)),
    "cumprod": (lambda L, N: lambda x: L.cumprod(x, 0), (A(3, 4),)),
    "cummax_rev": (lambda L, N: lambda x: L.cummax(x, 1, True), (A(3, 4),)),
    "cummin": (lambda L, N: lambda x: L.cummin(x, 0), (A(3, 4),)),
    "cumlogsumexp": (lambda L, N: lambda x: L.cumlogsumexp(x, 0, True), (A(5, 2, scale=30),)),
    "cumsum_int": (lambda L, N: lambda x: L.cumsum(x), (I32,)),
    "sort_nan": (lambda L, N: L.sort, (np.array([3.0, np.nan, -0.0, 0.0, -np.inf, 1.0]),)),
    "sort_keys2": (lambda L, N: lambda a, b, c: L.sort((a, b, c), num_keys=2),
                   (np.array([3, 1, 2, 1, 3], np.int32), np.array([0, 0, 1, 1, 0], np.int32),
                    A(5))),
    "sort_dim0": (lambda L, N: lambda x: L.sort(x, dimension=0), (A(4, 3),)),
    "sort_key_val": (lambda L, N: lambda k, v: L.sort_key_val(k, v),
                     (np.array([2.0, 1.0, 2.0, 0.0]), A(4))),
    "top_k": (lambda L, N: lambda x: L.top_k(x, 3), (A(3, 5),)),
    "top_k_ties_nan": (lambda L, N: lambda x: L.top_k(x, 4),
                       (np.array([1.0, np.nan, 3.0, 3.0, -np.inf, 3.0]),)),
    "top_k_axis0": (lambda L, N: lambda x: L.top_k(x, 2, axis=0), (A(4, 3),)),
    # -- products --
    "dot_general_batch": (lambda L, N: lambda a, b: L.dot_general(
        a, b, (((3, 1), (0, 3)), ((0,), (1,)))), (A(2, 3, 4, 5, k=1), A(5, 2, 6, 3, k=2))),
    "dot_general_f32": (lambda L, N: lambda a, b: L.dot_general(a, b, (((1,), (0,)), ((), ()))),
                        (A(3, 4, dtype=np.float32), A(4, 2, k=2, dtype=np.float32))),
    "dot_general_outer": (lambda L, N: lambda a, b: L.dot_general(a, b, (((), ()), ((), ()))),
                          (A(2, k=1), A(3, k=2))),
    "dot_mm": (lambda L, N: L.dot, (A(3, 4, k=1), A(4, 2, k=2))),
    "dot_mv": (lambda L, N: L.dot, (A(3, 4, k=1), A(4, k=2))),
    "dot_vv": (lambda L, N: L.dot, (A(4, k=1), A(4, k=2))),
    "dot_int8_preferred": (lambda L, N: lambda a, b: L.dot(a, b,
                                                          preferred_element_type=np.int32),
                           (np.full((2, 3), 100, np.int8), np.full((3, 2), 100, np.int8))),
    "batch_matmul": (lambda L, N: L.batch_matmul, (A(2, 3, 4, k=1), A(2, 4, 2, k=2))),
    # -- convolutions --
    "conv_same": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), (CONV_IN, CONV_W)),
    "conv_same_stride2_even_kernel": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), (CONV_IN, CONV_W)),
    "conv_same_lower": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 2), "SAME_LOWER", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        (CONV_IN, CONV_W)),
    "conv_valid_rhs_dilation": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (2, 1), "VALID", rhs_dilation=(2, 1), dimension_numbers=("NHWC", "HWIO", "NHWC")),
        (CONV_IN, CONV_W)),
    "conv_lhs_dilation_negative_pad": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 2), ((1, -1), (2, 0)), lhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "HWIO", "NHWC")), (CONV_IN, CONV_W)),
    "conv_odd_specs": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 2), "SAME", dimension_numbers=("NWHC", "WHIO", "CNHW")), (CONV_IN, CONV_W)),
    "conv_nchw_default": (lambda L, N: lambda x, w: L.conv(x, w, (1, 1), "SAME"),
                          (A(2, 4, 5, 6, k=4), A(5, 4, 2, 3, k=5))),
    "conv_feature_groups": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 1), "SAME", feature_group_count=2), (A(2, 4, 5, 6, k=4), A(6, 2, 3, 3, k=5))),
    "conv_depthwise": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=4), (CONV_IN, A(3, 3, 1, 8, k=6))),
    "conv_batch_groups": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 1), "VALID", batch_group_count=2), (A(4, 3, 5, 5, k=4), A(4, 3, 3, 3, k=5))),
    "conv_1d": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")), (A(2, 9, 3), A(4, 3, 2))),
    "conv_3d": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 2, 1), "SAME"), (A(1, 2, 4, 5, 3, k=7), A(3, 2, 2, 3, 2, k=8))),
    "conv_1x1_stride2": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        (CONV_IN, A(1, 1, 4, 3, k=3))),
    "conv_f32": (lambda L, N: lambda x, w: L.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        (CONV_IN.astype(np.float32), CONV_W.astype(np.float32))),
    "conv_with_general_padding": (lambda L, N: lambda x, w: L.conv_with_general_padding(
        x, w, (1, 1), ((1, 2), (0, 1)), (1, 2), (2, 1)), (A(1, 2, 4, 4, k=4),
                                                          A(3, 2, 2, 2, k=5))),
    **{f"conv_transpose_{name}": (lambda L, N, p=p: lambda x, w: L.conv_transpose(
        x, w, (2, 2), p), (CONV_IN, CONV_W))
       for name, p in [("same", "SAME"), ("valid", "VALID"), ("pairs", ((1, 0), (0, 2)))]},
    "conv_transpose_kernel": (lambda L, N: lambda x, w: L.conv_transpose(
        x, w, (2, 1), "SAME", transpose_kernel=True), (CONV_IN, A(3, 2, 3, 4, k=9))),
    # -- reduce_window (pooling) --
    **{f"reduce_window_{name}_{tag}": (
        lambda L, N, op=op, init=init, kw=kw: lambda x: L.reduce_window(
            x, init, getattr(L, op), (1, 3, 2, 1), **kw), (IMG,))
       for name, op, init in [("max", "max", -np.inf), ("add", "add", 0.0),
                              ("min", "min", np.inf), ("mul", "mul", 1.0),
                              ("add_init", "add", 1.5), ("max_init", "max", 0.3)]
       for tag, kw in [("same_s2", dict(window_strides=(1, 2, 2, 1), padding="SAME")),
                       ("valid_wdil", dict(window_strides=(1, 1, 1, 1), padding="VALID",
                                           window_dilation=(1, 2, 1, 1))),
                       ("pairs_bdil", dict(window_strides=(1, 2, 1, 1),
                                           padding=((0, 0), (1, 2), (-1, 1), (0, 0)),
                                           base_dilation=(1, 2, 1, 1)))]},
    "reduce_window_1x1_stride2": (lambda L, N: lambda x: L.reduce_window(
        x, 0.0, L.add, (1, 1, 1, 1), (1, 2, 2, 1), "VALID"), (IMG,)),
    "reduce_window_generic": (lambda L, N: lambda x: L.reduce_window(
        x, 0.5, lambda a, b: a + 2.0 * b, (1, 2, 3, 1), (1, 2, 1, 1), "SAME",
        base_dilation=(1, 1, 2, 1)), (IMG,)),
    "reduce_window_int_max": (lambda L, N: lambda x: L.reduce_window(
        x, np.int32(-2 ** 31), L.max, (2, 2), (1, 2), "SAME"),
        (np.array([[3, -1, 4, 1, -5, 9], [2, 6, -5, 3, 5, -8], [9, 7, 9, -3, 2, 3]],
                  np.int32),)),
    "avg_pool_f32": (lambda L, N: lambda x: L.reduce_window(
        x, np.float32(0), L.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
        (IMG.astype(np.float32),)),
}


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _leaves(o)]
    return [out]


def _run(name, L=lax, N=nx, wrap=None):
    make, args = CASES[name]
    f = make(L, N)
    if wrap is not None:
        f = wrap(f)
    return _leaves(f(*[nx.asarray(a) if isinstance(a, np.ndarray) else a for a in args]))


def _compare(name, got, rtol=None):
    want = GOLDEN[name]
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        g = np.asarray(g)
        vals = w["values"]
        if np.dtype(w["dtype"]).kind == "c":    # stored as [real, imag] pairs
            vals = [complex(re, im) for re, im in vals]
        wv = np.array(vals, dtype=w["dtype"]).reshape(w["shape"])
        assert g.shape == wv.shape, f"{name}: shape {g.shape}, JAX {wv.shape}"
        assert g.dtype == wv.dtype, f"{name}: dtype {g.dtype}, JAX {wv.dtype}"
        if wv.dtype.kind in "fc":
            tol = rtol if rtol is not None else (2e-6 if wv.dtype in (np.float32, np.complex64)
                                                 else 1e-12)
            np.testing.assert_allclose(g, wv, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=name)
            # the sign of zeros too (rem, sign, round keep -0.0)
            z = (wv == 0) & ~np.isnan(wv)
            if wv.dtype.kind == "f":
                np.testing.assert_array_equal(np.signbit(g[z]), np.signbit(wv[z]), err_msg=name)
        else:
            np.testing.assert_array_equal(g, wv, err_msg=name)


def test_golden_covers_every_case():
    assert sorted(GOLDEN) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_jax(name):
    with nx.enable_x64(True):
        _compare(name, _run(name))


F32_CASES = sorted(n for n, (_, args) in CASES.items()
                   if args and all(np.asarray(a).dtype != np.float64 for a in args)
                   and any(np.asarray(a).dtype == np.float32 for a in args))


@pytest.mark.parametrize("name", F32_CASES)
def test_float32_values_match_jax_in_x32_mode(name):
    with nx.enable_x64(False):
        _compare(name, _run(name))


# cases that take concrete values only or make nothing to compile
_NOT_JITTABLE = set()


@pytest.mark.parametrize("name", sorted(n for n, (_, a) in CASES.items() if a))
def test_jit_equals_eager(name):
    with nx.enable_x64(True):
        eager = _run(name)
        jitted = _run(name, wrap=nx.jit)
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-13, atol=1e-13,
                                   equal_nan=True, err_msg=name)


VMAP_CASES = sorted(n for n, (_, a) in CASES.items()
                    if a and np.asarray(a[0]).dtype.kind == "f")


@pytest.mark.parametrize("name", VMAP_CASES)
def test_vmap_over_first_operand_equals_eager(name):
    make, args = CASES[name]
    f = make(lax, nx)
    x0 = np.asarray(args[0])
    batch = np.stack([x0, x0 * 0.5 + 0.25, -x0])
    rest = [nx.asarray(a) for a in args[1:]]
    with nx.enable_x64(True):
        out = nx.vmap(lambda x: f(x, *rest))(nx.asarray(batch))
        each = [_leaves(f(nx.asarray(b), *rest)) for b in batch]
    for k, o in enumerate(_leaves(out)):
        want = np.stack([np.asarray(e[k]) for e in each])
        np.testing.assert_allclose(np.asarray(o), want, rtol=1e-12, atol=1e-12, equal_nan=True,
                                   err_msg=name)


# -- derivatives against float64 finite differences ------------------------------------------------

GRAD_CASES = [
    "rem_smooth", "div_f64", "cbrt", "rsqrt", "erf_inv", "logistic", "bessel_i0e", "atan2",
    "integer_pow3", "integer_pow_neg2", "clamp", "clamp_arrays", "complex",
    "pad_interior_negative", "pad_crop", "slice", "slice_in_dim", "index_in_dim", "concatenate",
    "broadcast_in_dim", "reshape_dims", "transpose", "rev", "reduces", "reduce_max",
    "reduce_generic_pytree",
    "dynamic_slice_1_2", "dynamic_slice_10_-10", "dynamic_update_slice_1_2",
    "dynamic_update_slice_-1_4", "dynamic_update_index_in_dim", "select", "select_n",
    "switch_2", "map", "map_batch_size", "associative_scan_add", "associative_scan_rev_axis",
    "associative_scan_pytree", "cumsum_rev", "cumprod", "cummax_rev", "cumlogsumexp",
    "sort_dim0", "sort_key_val", "top_k", "dot_general_batch", "dot_general_outer", "dot_mv",
    "batch_matmul", "conv_same_stride2_even_kernel", "conv_lhs_dilation_negative_pad",
    "conv_odd_specs", "conv_feature_groups", "conv_batch_groups", "conv_1d",
    "conv_transpose_kernel", "conv_1x1_stride2", "reduce_window_max_same_s2",
    "reduce_window_add_pairs_bdil",
    "reduce_window_mul_valid_wdil", "reduce_window_generic", "reduce_window_max_init_same_s2",
]


# arguments away from the kinks and poles of the golden cases (finite differences need them)
GRAD_ARGS = {
    "cbrt": (np.array([-8.0, 27.0, 0.5, -0.3]),),
    "erf_inv": (np.array([-0.5, 0.1, 0.9, -0.95]),),
    "sort_key_val": (np.array([2.0, 1.0, 2.5, 0.0]), A(4)),
}


def _float_args(name):
    make, args = CASES[name]
    args = GRAD_ARGS.get(name, args)
    f = make(lax, nx)
    idx = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]
    return f, args, idx


def _scalar_loss(f, args, idx):
    """A function of the float arguments only, to a pytree of float results."""
    def g(*floats):
        full = list(args)
        for i, v in zip(idx, floats):
            full[i] = v
        full = [nx.asarray(a) if isinstance(a, np.ndarray) else a for a in full]
        out = f(*full)
        return tuple(o for o in _leaves(out) if np.dtype(o.dtype).kind in "fc")
    return g


@pytest.mark.parametrize("name", GRAD_CASES)
def test_derivatives_against_finite_differences(name):
    f, args, idx = _float_args(name)
    g = _scalar_loss(f, args, idx)
    order = 1 if name.startswith(("conv", "reduce_window", "dot_general_batch", "map")) else 2
    with nx.enable_x64(True):
        nx.check_grads(g, tuple(nx.asarray(args[i]) for i in idx), order=order,
                       modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_conv_second_order():
    x, w = A(1, 5, 4, 2, k=1), A(2, 2, 2, 3, k=2)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (2, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    with nx.enable_x64(True):
        nx.check_grads(f, (nx.asarray(x), nx.asarray(w)), order=2, atol=1e-5, rtol=1e-5)


def test_reduce_window_max_gradient_goes_to_the_first_maximum():
    # JAX's select-and-scatter: a tie sends the whole derivative to the window's first maximum
    x = nx.asarray(np.array([[1.0, 3.0, 3.0, 2.0]]))
    g = nx.grad(lambda x: nx.sum(lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 2),
                                                   "VALID")))(x)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 1.0, 1.0, 0.0]])
    g = nx.grad(lambda x: nx.sum(lax.reduce_window(x, -np.inf, lax.max, (1, 3), (1, 1),
                                                   "VALID")))(x)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 2.0, 0.0, 0.0]])


def test_integer_pow_derivative_at_zero():
    for y, want in [(1, 1.0), (2, 0.0), (3, 0.0)]:
        g = nx.grad(lambda x, y=y: lax.integer_pow(x, y))(nx.asarray(0.0))
        assert float(g) == want


# -- traced start indices and switch indices -----------------------------------------------------

X45 = A(4, 5)
STARTS = [(1, 2), (-1, 4), (10, -10), (3, 3), (-5, 0), (0, 2)]


def _np_dynamic_slice(x, starts, sizes):
    out = []
    for s, size, n in zip(starts, sizes, x.shape):
        s = s + n if s < 0 else s
        out.append(min(max(s, 0), n - size))
    return x[tuple(slice(s, s + k) for s, k in zip(out, sizes))], out


@pytest.mark.parametrize("starts", STARTS)
def test_dynamic_slice_traced_starts_under_jit(starts):
    f = nx.jit(lambda x, a, b: lax.dynamic_slice(x, (a, b), (2, 3)))
    got = f(nx.asarray(X45), nx.asarray(np.int32(starts[0])), nx.asarray(np.int32(starts[1])))
    np.testing.assert_array_equal(np.asarray(got), _np_dynamic_slice(X45, starts, (2, 3))[0])


def test_dynamic_slice_vmap_over_starts_and_grad():
    starts = np.array([s for s in STARTS], np.int32)
    xs = nx.asarray(X45)

    def f(s):
        return lax.dynamic_slice(xs, (s[0], s[1]), (2, 3))
    got = nx.vmap(f)(nx.asarray(starts))
    for k, s in enumerate(STARTS):
        np.testing.assert_array_equal(np.asarray(got[k]), _np_dynamic_slice(X45, s, (2, 3))[0])
    got_jit = nx.jit(nx.vmap(f))(nx.asarray(starts))
    np.testing.assert_array_equal(np.asarray(got_jit), np.asarray(got))

    # the derivative reaches exactly the sliced box, per example and under jit
    def loss(x, s):
        return nx.sum(lax.dynamic_slice(x, (s[0], s[1]), (2, 3)) ** 2)
    gs = nx.vmap(nx.grad(loss), in_axes=(None, 0))(xs, nx.asarray(starts))
    gj = nx.jit(nx.vmap(nx.grad(loss), in_axes=(None, 0)))(xs, nx.asarray(starts))
    for k, s in enumerate(STARTS):
        _, (a, b) = _np_dynamic_slice(X45, s, (2, 3))
        want = np.zeros_like(X45)
        want[a:a + 2, b:b + 3] = 2 * X45[a:a + 2, b:b + 3]
        np.testing.assert_allclose(np.asarray(gs[k]), want, rtol=1e-14)
        np.testing.assert_allclose(np.asarray(gj[k]), want, rtol=1e-14)


def test_dynamic_update_slice_vmap_over_starts_and_grad():
    starts = np.array(STARTS, np.int32)
    x, u = nx.asarray(X45), nx.asarray(A(2, 3, k=5))

    def f(x, u, s):
        return lax.dynamic_update_slice(x, u, (s[0], s[1]))
    got = nx.vmap(f, in_axes=(None, None, 0))(x, u, nx.asarray(starts))
    got_jit = nx.jit(nx.vmap(f, in_axes=(None, None, 0)))(x, u, nx.asarray(starts))
    for k, s in enumerate(STARTS):
        _, (a, b) = _np_dynamic_slice(X45, s, (2, 3))
        want = X45.copy()
        want[a:a + 2, b:b + 3] = A(2, 3, k=5)
        np.testing.assert_array_equal(np.asarray(got[k]), want)
        np.testing.assert_array_equal(np.asarray(got_jit[k]), want)
    w = nx.asarray(A(4, 5, k=7))
    for s in STARTS:
        _, (a, b) = _np_dynamic_slice(X45, s, (2, 3))
        st = nx.asarray(np.array(s, np.int32))
        gx, gu = nx.jit(nx.grad(lambda x, u, s: nx.sum(f(x, u, s) * w), argnums=(0, 1)))(x, u,
                                                                                         st)
        want_x = A(4, 5, k=7).copy()
        want_x[a:a + 2, b:b + 3] = 0
        np.testing.assert_array_equal(np.asarray(gx), want_x)
        np.testing.assert_array_equal(np.asarray(gu), A(4, 5, k=7)[a:a + 2, b:b + 3])


def test_dynamic_slices_vmap_over_operand_and_starts():
    xs = nx.asarray(np.stack([A(4, 5, k=k) for k in range(len(STARTS))]))
    us = nx.asarray(np.stack([A(2, 3, k=10 + k) for k in range(len(STARTS))]))
    st = nx.asarray(np.array(STARTS, np.int32))
    ds = nx.vmap(lambda x, s: lax.dynamic_slice(x, s, (2, 3)))(xs, st)
    dus = nx.jit(nx.vmap(lambda x, u, s: lax.dynamic_update_slice(x, u, s)))(xs, us, st)
    for e, s in enumerate(STARTS):
        x = A(4, 5, k=e)
        box, (a, b) = _np_dynamic_slice(x, s, (2, 3))
        np.testing.assert_array_equal(np.asarray(ds[e]), box)
        want = x.copy()
        want[a:a + 2, b:b + 3] = A(2, 3, k=10 + e)
        np.testing.assert_array_equal(np.asarray(dus[e]), want)


def test_dynamic_update_slice_does_not_write_its_operand():
    x = nx.asarray(X45.copy())
    lax.dynamic_update_slice(x, nx.zeros((2, 2), dtype=nx.float64), (1, 1))
    np.testing.assert_array_equal(np.asarray(x), X45)


def test_switch_traced_index_jit_vmap_grad():
    branches = _branches(nx)
    x = nx.asarray(A(3))
    ref = [np.asarray(b(x)) for b in branches]
    f = nx.jit(lambda i, x: lax.switch(i, branches, x))
    for i, k in [(-3, 0), (0, 0), (1, 1), (2, 2), (9, 2)]:
        np.testing.assert_allclose(np.asarray(f(nx.asarray(np.int32(i)), x)), ref[k])
    idx = nx.asarray(np.array([0, 1, 2, 7, -1], np.int32))
    xs = nx.asarray(np.stack([A(3, k=k) for k in range(5)]))
    out = nx.vmap(lambda i, x: lax.switch(i, branches, x))(idx, xs)
    outj = nx.jit(nx.vmap(lambda i, x: lax.switch(i, branches, x)))(idx, xs)
    for e, k in enumerate([0, 1, 2, 2, 0]):
        want = np.asarray(branches[k](xs[e]))
        np.testing.assert_allclose(np.asarray(out[e]), want, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(outj[e]), want, rtol=1e-15)
    # the derivative of the branch taken, per example (cos for sin, 2 for the doubling)
    g = nx.vmap(nx.grad(lambda x, i: nx.sum(lax.switch(i, branches, x))), in_axes=(0, 0))(xs, idx)
    for e, k in enumerate([0, 1, 2, 2, 0]):
        want = [np.full(3, 2.0), np.ones(3), np.cos(np.asarray(xs[e]))][k]
        np.testing.assert_allclose(np.asarray(g[e]), want, rtol=1e-15)


def test_switch_no_nan_from_the_branch_not_taken():
    # under vmap every branch runs; a branch not taken must not poison the derivative
    branches = [lambda x: nx.sqrt(x), lambda x: x * 3.0]
    xs = nx.asarray(np.array([-1.0, 4.0]))
    idx = nx.asarray(np.array([1, 0], np.int32))
    g = nx.vmap(nx.grad(lambda x, i: lax.switch(i, branches, x)))(xs, idx)
    np.testing.assert_allclose(np.asarray(g), [3.0, 0.25])


def test_select_n_vmap_over_which():
    cases = [nx.asarray(A(4, k=k)) for k in range(3)]
    which = nx.asarray(np.array([[0, 1, 2, 1], [2, 2, 0, 0]], np.int32))
    out = nx.vmap(lambda w: lax.select_n(w, *cases))(which)
    stacked = np.stack([np.asarray(c) for c in cases])
    for r in range(2):
        np.testing.assert_array_equal(np.asarray(out[r]),
                                      stacked[np.asarray(which[r]), np.arange(4)])


def test_map_under_jit_is_one_scan():
    def f(x):
        return lax.map(lambda r: nx.sum(nx.sin(r)), x)
    names = [e.prim.name for e in nx.make_jaxpr(f)(nx.asarray(A(6, 3))).program.eqns]
    assert names.count("scan") == 1


# -- precision and preferred_element_type ---------------------------------------------------------

def test_precision_accepted_everywhere():
    a, b = nx.asarray(A(2, 3)), nx.asarray(A(3, 2, k=2))
    want = np.asarray(A(2, 3)) @ np.asarray(A(3, 2, k=2))
    for p in (None, lax.Precision.HIGHEST, "highest", "float32", lax.Precision.DEFAULT,
              (lax.Precision.HIGH, lax.Precision.HIGH)):
        for got in (nx.dot(a, b, precision=p), nx.matmul(a, b, precision=p),
                    nx.einsum("ij,jk->ik", a, b, precision=p), lax.dot(a, b, precision=p),
                    lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision=p)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    x = nx.asarray(A(1, 4, 4, 2))
    w = nx.asarray(A(3, 3, 2, 2))
    lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                             precision=lax.Precision.HIGHEST)
    with pytest.raises(ValueError, match="precision"):
        lax.dot(a, b, precision="bogus")
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT


def test_preferred_element_type_on_front_end_products():
    a = nx.asarray(np.full((2, 3), 100, np.int8))
    for got in (nx.matmul(a, a.T, preferred_element_type=nx.int32),
                nx.dot(a, a.T, preferred_element_type=nx.int32),
                nx.einsum("ij,kj->ik", a, a, preferred_element_type=nx.int32)):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(got), np.full((2, 2), 30000))


# -- bad input -------------------------------------------------------------------------------------

def test_bad_input_names_the_argument():
    x = nx.asarray(A(4, 5))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.add(nx.asarray(np.ones(3, np.float32)), nx.asarray(np.ones(3, np.int32)))
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.dynamic_slice(x, (0, 0), (5, 1))
    with pytest.raises(ValueError, match="start_indices"):
        lax.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(TypeError, match="start_indices"):
        lax.dynamic_slice(x, (0.5, 0), (1, 1))
    with pytest.raises(ValueError, match="allow_negative_indices"):
        lax.dynamic_slice(x, (-1, 0), (1, 1), allow_negative_indices=False)
    with pytest.raises(TypeError, match="update"):
        lax.dynamic_update_slice(x, nx.ones((5, 1), dtype=nx.float64), (0, 0))
    with pytest.raises(TypeError, match="update"):
        lax.dynamic_update_slice(x, nx.ones((1, 1), dtype=nx.float32), (0, 0))
    with pytest.raises(ValueError, match="padding_config"):
        lax.pad(x, 0.0, [(0, 0, -1), (0, 0, 0)])
    with pytest.raises(ValueError, match="padding_config"):
        lax.pad(x, 0.0, [(0, 0, 0)])
    with pytest.raises(ValueError, match="padding_config"):
        lax.pad(x, 0.0, [(-3, -2, 0), (0, 0, 0)])
    with pytest.raises(ValueError, match="start_indices, limit_indices"):
        lax.slice(x, (0, 0), (5, 1))
    with pytest.raises(TypeError, match="dimension_numbers"):
        lax.dot_general(x, x, (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="lhs, rhs"):
        lax.dot(nx.ones((2, 2, 2)), nx.ones((2, 2)))
    with pytest.raises(TypeError, match="dimension_numbers"):
        lax.conv_general_dilated(nx.ones((1, 4, 4, 2)), nx.ones((3, 3, 2, 2)), (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHW"))
    with pytest.raises(ValueError, match="padding"):
        lax.conv_general_dilated(nx.ones((1, 2, 4, 4)), nx.ones((2, 2, 3, 3)), (1, 1), "FULL")
    with pytest.raises(ValueError, match="window_strides"):
        lax.conv_general_dilated(nx.ones((1, 2, 4, 4)), nx.ones((2, 2, 3, 3)), (1,), "SAME")
    with pytest.raises(ValueError, match="feature_group_count"):
        lax.conv_general_dilated(nx.ones((1, 2, 4, 4)), nx.ones((2, 2, 3, 3)), (1, 1), "SAME",
                                 feature_group_count=2)
    with pytest.raises(ValueError, match="rhs"):
        lax.conv_general_dilated(nx.ones((1, 2, 4, 4)), nx.ones((2, 2, 5, 3)), (1, 1), "VALID")
    with pytest.raises(ValueError, match="window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1, 1), "VALID")
    with pytest.raises(ValueError, match="init_value"):
        lax.reduce_window((x, x), 0.0, lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="index"):
        lax.switch(nx.asarray(1.5), _branches(nx), x)
    with pytest.raises(ValueError, match="branches"):
        lax.switch(0, [], x)
    with pytest.raises(TypeError, match="which"):
        lax.select_n(nx.asarray(np.array([True, False])), x[0, :2], x[1, :2], x[2, :2])
    with pytest.raises(TypeError, match="cases"):
        lax.select_n(True, x[0], x[0, :2])
    with pytest.raises(ValueError, match="batch_size"):
        lax.map(lambda r: r, x, batch_size=0)
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((x, x), num_keys=3)
    with pytest.raises(ValueError, match="k"):
        lax.top_k(x, 6)
    with pytest.raises(TypeError, match="y"):
        lax.integer_pow(x, 2.0)
    with pytest.raises(ValueError, match="broadcast_dimensions"):
        lax.broadcast_in_dim(x, (4, 5, 2), (0, 2))
    with pytest.raises(ValueError, match="dimensions"):
        lax.squeeze(x, (0,))
    with pytest.raises(ValueError, match="permutation"):
        lax.transpose(x, (0, 0))
    with pytest.raises(TypeError, match="fn"):
        lax.associative_scan(None, x)


def test_every_name_has_a_docstring_and_is_listed():
    for name in lax.__all__:
        obj = getattr(lax, name)
        assert (getattr(obj, "__doc__", None) or "").strip(), name
    for name in ("switch", "select_n", "map", "associative_scan", "dynamic_slice",
                 "dynamic_update_slice", "dot_general", "conv_general_dilated", "reduce_window",
                 "top_k", "sort", "cumlogsumexp", "stop_gradient", "pad", "Precision", "cond",
                 "scan", "fori_loop", "while_loop"):
        assert name in lax.__all__, name


def test_conv_per_example_gradients_vmap_jit():
    # per-example gradients of a conv layer (vmap of grad), eager and under jit, against the
    # gradient of each example alone
    xs = nx.asarray(A(3, 1, 5, 4, 2, k=1))
    w = nx.asarray(A(3, 2, 2, 3, k=2))

    def loss(w, x):
        y = lax.conv_general_dilated(x, w, (2, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return nx.sum(nx.tanh(y))
    per = nx.vmap(nx.grad(loss), in_axes=(None, 0))(w, xs)
    per_jit = nx.jit(nx.vmap(nx.grad(loss), in_axes=(None, 0)))(w, xs)
    for e in range(3):
        want = np.asarray(nx.grad(loss)(w, xs[e]))
        np.testing.assert_allclose(np.asarray(per[e]), want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np.asarray(per_jit[e]), want, rtol=1e-12, atol=1e-14)
    # forward mode through the convolution's custom derivative (its transpose)
    t = nx.asarray(A(3, 2, 2, 3, k=4))
    _, tan = nx.jvp(lambda w: loss(w, xs[0]), (w,), (t,))
    eps = 1e-6
    fd = (float(loss(w + eps * t, xs[0])) - float(loss(w - eps * t, xs[0]))) / (2 * eps)
    np.testing.assert_allclose(float(tan), fd, rtol=1e-6)


def test_shape_tuples_match_jax():
    # expected shapes from jax 0.10.2's lax.*_shape_tuple
    assert lax.conv_general_shape_tuple((8, 32, 32, 16), (3, 3, 16, 32), (2, 2), "SAME",
                                        ("NHWC", "HWIO", "NHWC")) == (8, 16, 16, 32)
    assert lax.conv_general_shape_tuple((8, 32, 31, 16), (4, 3, 16, 32), (2, 3), "VALID",
                                        ("NHWC", "HWIO", "NCHW")) == (8, 32, 15, 10)
    assert lax.conv_general_shape_tuple((8, 16, 32, 31), (32, 16, 4, 3), (1, 2),
                                        ((1, 2), (0, -1)),
                                        ("NCHW", "OIHW", "NHWC")) == (8, 32, 14, 32)
    assert lax.conv_transpose_shape_tuple((8, 32, 32, 16), (3, 3, 16, 32), (2, 2), "SAME",
                                          ("NHWC", "HWIO", "NHWC")) == (8, 64, 64, 32)
    assert lax.conv_transpose_shape_tuple((8, 7, 5, 16), (4, 3, 16, 32), (2, 3), "VALID",
                                          ("NHWC", "HWIO", "NCHW")) == (8, 32, 16, 15)
    assert lax.reduce_window_shape_tuple((8, 32, 31, 3), (1, 3, 3, 1), (1, 2, 2, 1),
                                         ((0, 0), (1, 1), (0, 2), (0, 0)), (1, 2, 1, 1),
                                         (1, 1, 2, 1)) == (8, 32, 15, 3)
    assert lax.conv_shape_tuple((8, 16, 32, 32), (32, 16, 3, 3), (1, 1), "SAME", 2) == \
        (4, 32, 32, 32)
    # and they agree with what the functions return
    x, w = nx.ones((2, 9, 7, 3)), nx.ones((3, 2, 3, 4))
    out = lax.conv_general_dilated(x, w, (2, 3), "SAME", dimension_numbers=("NHWC", "HWIO",
                                                                          "NCHW"))
    assert out.shape == lax.conv_general_shape_tuple(x.shape, w.shape, (2, 3), "SAME",
                                                     ("NHWC", "HWIO", "NCHW"))


def test_control_flow_accepts_jax_keywords():
    # unroll= (scan, fori_loop) and cond's operand= change nothing in the values
    xs = nx.asarray(A(5))

    def step(c, x):
        return c * 0.5 + x, c
    want = lax.scan(step, 0.0, xs)
    for unroll in (1, 3, True, False):
        got = nx.jit(lambda xs, u=unroll: lax.scan(step, 0.0, xs, unroll=u))(xs)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert float(lax.fori_loop(0, 4, lambda i, v: v * 2.0, 1.0, unroll=2)) == 16.0
    assert float(lax.cond(True, lambda x: x + 1.0, lambda x: x, operand=1.0)) == 2.0
    with pytest.raises(ValueError, match="unroll"):
        lax.scan(step, 0.0, xs, unroll=0)
    with pytest.raises(TypeError, match="operand"):
        lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=1.0)


def test_signatures_follow_jax():
    # parameter names of jax 0.10.2's lax functions (keyword calls work as in JAX)
    import inspect
    names = {
        "dynamic_slice": ["operand", "start_indices", "slice_sizes", "allow_negative_indices"],
        "dynamic_update_slice": ["operand", "update", "start_indices", "allow_negative_indices"],
        "pad": ["operand", "padding_value", "padding_config"],
        "conv_general_dilated": ["lhs", "rhs", "window_strides", "padding", "lhs_dilation",
                                 "rhs_dilation", "dimension_numbers", "feature_group_count",
                                 "batch_group_count", "precision", "preferred_element_type",
                                 "out_sharding"],
        "reduce_window": ["operand", "init_value", "computation", "window_dimensions",
                          "window_strides", "padding", "base_dilation", "window_dilation"],
        "dot_general": ["lhs", "rhs", "dimension_numbers", "precision",
                        "preferred_element_type", "out_sharding"],
        "sort": ["operand", "dimension", "is_stable", "num_keys"],
        "top_k": ["operand", "k", "axis"],
        "associative_scan": ["fn", "elems", "reverse", "axis"],
        "map": ["f", "xs", "batch_size"],
        "nextafter": ["x1", "x2"],
        "scan": ["f", "init", "xs", "length", "reverse", "unroll", "_split_transpose"],
    }
    for name, params in names.items():
        assert list(inspect.signature(getattr(lax, name)).parameters) == params, name
    x = nx.asarray(A(4, 5))
    got = lax.dynamic_slice(operand=x, start_indices=(1, 1), slice_sizes=(2, 2))
    np.testing.assert_array_equal(np.asarray(got), A(4, 5)[1:3, 1:3])
