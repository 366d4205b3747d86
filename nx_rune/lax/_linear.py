"""``nx.lax``'s products and windows: ``dot_general``/``dot``, ``conv_general_dilated`` and
its wrappers, ``reduce_window``; ``Precision`` (accepted and ignored: nx_rune computes in the
operands' own precision, float32 as float32, on the CPU's BLAS).

A convolution runs channels-last: the operand as (N, *spatial, C) and the kernel as
(*window, I, O) (transposes only where the dimension numbers ask for another layout), the input
dilation as interior padding and the padding as a (masked) pad or a crop, then the windows as
one strided view copied into columns (N * positions, K * I) and one matrix product with the
kernel (one batched product per feature group).  The columns' derivative is their adjoint (the
cotangent columns added back, window offset by window offset: K shifted pads), given through
``custom_vjp``; everything else is front-end ops, so every derivative (any order, both modes),
``vmap`` and ``jit`` follow.
"""
from __future__ import annotations

import enum
import itertools
import math
import operator
from collections import namedtuple
from typing import Any, Callable, Sequence

import numpy as np

from nx_rune import dtypes
from nx_rune import frontend as F
from nx_rune.autodiff.custom import custom_vjp
from nx_rune.frontend._core import operand as _arr
from nx_rune.frontend._core import promote
from nx_rune.frontend.indexing import concrete_value
from nx_rune.lax import _elementwise as E
from nx_rune.lax._structural import pad_view as _lax_pad
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten
from nx_rune.typing import Array, ArrayLike, PyTree

__all__ = ["ConvDimensionNumbers",
           "Precision", "batch_matmul", "conv", "conv_dimension_numbers",
           "conv_general_dilated", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose", "conv_transpose_shape_tuple", "conv_with_general_padding", "dot",
           "dot_general", "padtype_to_pads", "reduce_window", "reduce_window_shape_tuple"]


class Precision(enum.Enum):
    """JAX's ``lax.Precision`` (``DEFAULT``, ``HIGH``, ``HIGHEST``, or their names and JAX's
    aliases as strings).  Accepted by every product and ignored: nx_rune's products compute in
    the operands' precision."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __str__(self):
        return self.name


def _check_precision(precision):
    """``precision`` validated as JAX's PrecisionLike (None, a Precision or its name, or a pair
    of them); the value is not used."""
    if precision is None:
        return
    items = precision if isinstance(precision, (tuple, list)) else (precision,)
    if isinstance(precision, (tuple, list)) and len(items) != 2:
        raise ValueError(f"precision: expected a Precision or a pair of them, got {precision!r}")
    for p in items:
        if p is None or isinstance(p, Precision):
            continue
        try:
            Precision(p)
        except ValueError:
            raise ValueError(f"precision: expected None, a lax.Precision or one of 'default', "
                             f"'high', 'highest', 'bfloat16', 'tensorfloat32', 'float32', got "
                             f"{p!r}") from None


def _preferred(x, y, preferred_element_type):
    if preferred_element_type is None:
        return promote(x, y)
    dt = dtypes.check_dtype(preferred_element_type)
    return F.astype(x, dt), F.astype(y, dt)


def dot_general(lhs: ArrayLike, rhs: ArrayLike, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Array:
    """JAX's ``lax.dot_general(lhs, rhs, dimension_numbers, precision=None,
    preferred_element_type=None)``.  dimension_numbers ``((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))``: the result's axes are the batch axes, then lhs's free axes, then
    rhs's free axes (each in its operand's order).  ``preferred_element_type``: the operands
    are converted to it before the product (so int8 products accumulate in int32 when asked).
    One matrix product (batched when there are batch axes)."""
    _check_precision(precision)
    x, y = _arr(lhs), _arr(rhs)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        lc, rc, lb, rb = (tuple(operator.index(a) for a in v) for v in (lc, rc, lb, rb))
    except (TypeError, ValueError):
        raise TypeError(f"dimension_numbers: expected ((lhs_contracting, rhs_contracting), "
                        f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None
    for name, axes, arr in (("lhs contracting", lc, x), ("rhs contracting", rc, y),
                            ("lhs batch", lb, x), ("rhs batch", rb, y)):
        if any(not 0 <= a < arr.ndim for a in axes):
            raise ValueError(f"dimension_numbers: {name} axes {axes} out of range for shape "
                             f"{arr.shape}")
    if len(set(lc + lb)) != len(lc + lb) or len(set(rc + rb)) != len(rc + rb):
        raise ValueError(f"dimension_numbers: an axis is repeated in {dimension_numbers!r}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dimension_numbers: lhs and rhs need as many contracting and batch "
                        f"axes, got {dimension_numbers!r}")
    for a, b in zip(lc, rc):
        if x.shape[a] != y.shape[b]:
            raise TypeError(f"dimension_numbers: contracting axes differ in size: lhs shape "
                            f"{x.shape} axis {a}, rhs shape {y.shape} axis {b}")
    for a, b in zip(lb, rb):
        if x.shape[a] != y.shape[b]:
            raise TypeError(f"dimension_numbers: batch axes differ in size: lhs shape {x.shape} "
                            f"axis {a}, rhs shape {y.shape} axis {b}")
    x, y = _preferred(x, y, preferred_element_type)
    lf = tuple(a for a in range(x.ndim) if a not in lc and a not in lb)
    rf = tuple(a for a in range(y.ndim) if a not in rc and a not in rb)
    bshape = tuple(x.shape[a] for a in lb)
    lfs = tuple(x.shape[a] for a in lf)
    rfs = tuple(y.shape[a] for a in rf)
    B, M, N = math.prod(bshape), math.prod(lfs), math.prod(rfs)
    K = math.prod(x.shape[a] for a in lc)
    xt = F.permute_dims(x, lb + lf + lc) if lb + lf + lc != tuple(range(x.ndim)) else x
    yt = F.permute_dims(y, rb + rc + rf) if rb + rc + rf != tuple(range(y.ndim)) else y
    if dtypes.is_bool(xt.dtype):
        xt, yt = F.astype(xt, dtypes.int32), F.astype(yt, dtypes.int32)
    if lb:
        out = F.matmul(F.reshape(xt, (B, M, K)), F.reshape(yt, (B, K, N)))
    else:
        out = F.matmul(F.reshape(xt, (M, K)), F.reshape(yt, (K, N)))
    if dtypes.is_bool(x.dtype):
        out = F.not_equal(out, 0)
    return F.reshape(out, bshape + lfs + rfs)


def dot(lhs: ArrayLike, rhs: ArrayLike, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None, out_sharding: Any = None) -> Array:
    """JAX's ``lax.dot(lhs, rhs)``: vector-vector, matrix-vector or matrix-matrix product
    (operands of rank 1 or 2), or ``dot_general`` with ``dimension_numbers``."""
    x, y = _arr(lhs), _arr(rhs)
    if dimension_numbers is not None:
        return dot_general(x, y, dimension_numbers, precision, preferred_element_type)
    if not (1 <= x.ndim <= 2 and 1 <= y.ndim <= 2):
        raise TypeError(f"lhs, rhs: lax.dot needs operands of rank 1 or 2, got shapes {x.shape} "
                        f"and {y.shape} (use dot_general)")
    if x.shape[-1] != y.shape[0]:
        raise TypeError(f"lhs, rhs: incompatible shapes for dot: {x.shape} and {y.shape}")
    return dot_general(x, y, (((x.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs: ArrayLike, rhs: ArrayLike, precision: Any = None) -> Array:
    """JAX's ``lax.batch_matmul(lhs, rhs)``: matmul over equal leading batch axes."""
    x, y = _arr(lhs), _arr(rhs)
    if x.ndim < 2 or x.ndim != y.ndim or x.shape[:-2] != y.shape[:-2]:
        raise ValueError(f"lhs, rhs: batch_matmul needs equal batch shapes and rank >= 2, got "
                         f"{x.shape} and {y.shape}")
    nb = x.ndim - 2
    return dot_general(x, y, (((x.ndim - 1,), (y.ndim - 2,)),
                              (tuple(range(nb)), tuple(range(nb)))), precision)


# -- convolutions ---------------------------------------------------------------------------------

ConvDimensionNumbers = namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])
ConvDimensionNumbers.__doc__ = (
    "JAX's ``lax.ConvDimensionNumbers``: for lhs, rhs and out, the axis of (batch or output "
    "feature, feature or input feature, then the spatial axes in the kernel's order).")


def _conv_perms(specs):
    """JAX's conv_general_permutations: the strings ('NHWC', 'HWIO', 'NHWC') as axis tuples."""
    lhs_spec, rhs_spec, out_spec = specs
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        if not specs[i].count(a) == specs[i].count(b) == 1:
            raise TypeError(f"dimension_numbers: element {i} must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {specs[i]!r}")
        if len(specs[i]) != len(set(specs[i])):
            raise TypeError(f"dimension_numbers: element {i} repeats a character: {specs[i]!r}")
    if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
            == set(out_spec) - {"N", "C"}):
        raise TypeError(f"dimension_numbers: the three specs must name the same spatial "
                        f"characters, got {specs!r}")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
    return tuple(perm(s, p) for s, p in zip(specs, pairs))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """JAX's ``lax.conv_dimension_numbers``: ``dimension_numbers`` (None, three strings, or a
    ConvDimensionNumbers) as a ConvDimensionNumbers of axis tuples."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(f"lhs, rhs: convolution needs operands of equal rank, got shapes "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(operator.index(a) for a in s)
                                      for s in dimension_numbers))
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError(f"dimension_numbers: expected 3 specs (lhs, rhs, out), got "
                            f"{dimension_numbers!r}")
        if all(isinstance(s, str) for s in dimension_numbers):
            for s in dimension_numbers:
                if len(s) != nd:
                    raise TypeError(f"dimension_numbers: {s!r} must have one character per "
                                    f"axis of lhs and rhs (shapes {tuple(lhs_shape)}, "
                                    f"{tuple(rhs_shape)})")
            return ConvDimensionNumbers(*_conv_perms(tuple(dimension_numbers)))
        try:
            return ConvDimensionNumbers(*(tuple(operator.index(a) for a in s)
                                          for s in dimension_numbers))
        except TypeError:
            pass
    raise TypeError(f"dimension_numbers: expected None, three strings such as ('NHWC', 'HWIO', "
                    f"'NHWC') or a ConvDimensionNumbers, got {dimension_numbers!r}")


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int] | None, padding: str | Sequence[tuple[int,
                     int]]) -> list[tuple[int, int]]:
    """JAX's ``lax.padtype_to_pads``: 'SAME' (output ceil(n / stride), the odd pad after),
    'SAME_LOWER' (the odd pad before) or 'VALID' as (low, high) pairs."""
    mode = padding.upper() if isinstance(padding, str) else padding
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padding: expected 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs, "
                         f"got {padding!r}")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + w - n, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if mode == "SAME" else (big, small))
    return pads


def _stride_dim(d, window, stride):
    return max((d - window) // stride + 1, 0)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int] | None, pads: str | Sequence[tuple[int, int]],
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """JAX's ``lax.conv_shape_tuple``: the output shape of a convolution in the NCHW / OIHW
    layout (pads: a padding string or (low, high) pairs)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"pads: expected {len(lhs_shape) - 2} (low, high) pairs, got {pads!r}")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"pads: negative padding {pads} is larger than lhs_shape[2:] = "
                         f"{tuple(lhs_shape[2:])}")
    space = tuple(_stride_dim(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int] | None,
                             padding: str | Sequence[tuple[int, int]],
                              dimension_numbers: Any) -> tuple[int, ...]:
    """JAX's ``lax.conv_general_shape_tuple``: the output shape of ``conv_general_dilated``
    (no dilation) for string ``dimension_numbers`` such as ('NHWC', 'HWIO', 'NHWC')."""
    lp, rp, op = _conv_perms(tuple(dimension_numbers))
    out = conv_shape_tuple([lhs_shape[a] for a in lp], [rhs_shape[a] for a in rp],
                           window_strides, padding)
    return tuple(int(out[j]) for j in np.argsort(op))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int] | None,
                               padding: str | Sequence[tuple[int, int]],
                                dimension_numbers: Any) -> tuple[int, ...]:
    """JAX's ``lax.conv_transpose_shape_tuple``: the output shape of ``conv_transpose``."""
    lp, rp, op = _conv_perms(tuple(dimension_numbers))
    lt, rt = [lhs_shape[a] for a in lp], [rhs_shape[a] for a in rp]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rt[2:], window_strides)]
    total = [sum(p) for p in padding]
    space = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lt[2:], rt[2:], window_strides, total)]
    out = (lt[0], rt[0]) + tuple(space)
    return tuple(int(out[j]) for j in np.argsort(op))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int] | None,
                              padding: str | Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """JAX's ``lax.reduce_window_shape_tuple``: the output shape of ``reduce_window`` for
    (low, high) padding pairs."""
    shape = list(operand_shape)
    if base_dilation is not None:
        shape = [0 if n == 0 else 1 + b * (n - 1) for n, b in zip(shape, base_dilation)]
    window = list(window_dimensions)
    if window_dilation is not None:
        window = [0 if k == 0 else 1 + d * (k - 1) for k, d in zip(window, window_dilation)]
    padded = [n + lo + hi for n, (lo, hi) in zip(shape, padding)]
    return tuple(_stride_dim(p, k, s) for p, k, s in zip(padded, window, window_strides))


def _int_tuple(v, n, name, minimum=1, default=1):
    if v is None:
        return (default,) * n
    try:
        t = tuple(operator.index(a) for a in v)
    except TypeError:
        raise TypeError(f"{name}: expected a sequence of {n} ints, got {v!r}") from None
    if len(t) != n:
        raise ValueError(f"{name}: expected {n} entries (one per spatial axis), got {v!r}")
    if any(a < minimum for a in t):
        raise ValueError(f"{name}: entries must be >= {minimum}, got {v!r}")
    return t


def _pairs(padding, n, name="padding"):
    try:
        p = tuple((operator.index(a), operator.index(b)) for a, b in padding)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a string or a sequence of (low, high) int pairs, got "
                         f"{padding!r}") from None
    if len(p) != n:
        raise ValueError(f"{name}: expected {n} (low, high) pairs, got {padding!r}")
    return p


def _permuted(x, perm):
    """x with its axes in ``perm`` order (x itself when that is its order already)."""
    return x if tuple(perm) == tuple(range(x.ndim)) else F.permute_dims(x, perm)


def _window_counts(sizes, window, strides, dilation):
    return tuple(max((n - (d * (w - 1) + 1)) // s + 1, 0)
                 for n, w, s, d in zip(sizes, window, strides, dilation))


def _im2col(x, window, strides, dilation, counts):
    """The columns of a channels-last x (N, *spatial, C): row (n, position) holds the window
    there, (K * C) values in window-offset-major order.  One strided view and one copy; its
    derivative is the adjoint (each column's values added back to the positions they were
    read from: K shifted, interior-padded cotangents), not as_strided's general scatter."""
    N, C = x.shape[0], x.shape[-1]
    sizes = x.shape[1:-1]
    P, K = math.prod(counts), math.prod(window)
    if K == 1:      # one strided slice: its own derivative is the cheap one
        view = _windows(x, tuple(range(1, x.ndim - 1)), window, strides, dilation)[0][0]
        return F.reshape(view, (N * P, C))

    @custom_vjp
    def cols(x):
        # element strides of x in C order: the window view reads each position's window
        el = [1] * x.ndim
        for a in range(x.ndim - 2, -1, -1):
            el[a] = el[a + 1] * x.shape[a + 1]
        sp = el[1:-1]
        view = F.as_strided(x, (N,) + tuple(counts) + tuple(window) + (C,),
                            [el[0]] + [e * s for e, s in zip(sp, strides)]
                            + [e * d for e, d in zip(sp, dilation)] + [1])
        return F.reshape(view, (N * P, K * C))

    def fwd(x):
        return cols(x), None

    def bwd(_, g):
        g = F.reshape(g, (N,) + tuple(counts) + (K, C))
        acc = None
        for k, offs in enumerate(itertools.product(*(range(w) for w in window))):
            part = g[(slice(None),) * (1 + len(counts)) + (k,)]
            cfg = [(0, 0, 0)]
            for o, d, s, n, c in zip(offs, dilation, strides, sizes, counts):
                lo = o * d
                cfg.append((lo, n - lo - ((c - 1) * s + 1), s - 1))
            cfg.append((0, 0, 0))
            part = _lax_pad(part, 0, cfg)
            acc = part if acc is None else F.add(acc, part)
        return (acc,)
    cols.defvjp(fwd, bwd)
    return cols(x)


def _windows(x, axes, window, strides, dilation):
    """The strided slices of x, one per window offset (C order over ``axes``), each the shape
    of the result: along axis ``axes[j]``, offset k reads ``k * dilation + i * stride``."""
    counts = []
    for a, w, s, d in zip(axes, window, strides, dilation):
        span = d * (w - 1) + 1
        if span > x.shape[a]:
            counts.append(0)
        else:
            counts.append((x.shape[a] - span) // s + 1)
    out = []
    for ks in itertools.product(*(range(w) for w in window)):
        idx = [slice(None)] * x.ndim
        for a, k, s, d, c in zip(axes, ks, strides, dilation, counts):
            start = k * d
            idx[a] = slice(start, start + (c - 1) * s + 1 if c else start, s)
        out.append(x[tuple(idx)])
    return out, counts


def conv_general_dilated(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int] | None,
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: Any = None,
                         preferred_element_type: Any = None, out_sharding: Any = None) -> Array:
    """JAX's ``lax.conv_general_dilated``: a cross-correlation of ``lhs`` (batch, feature,
    spatial axes) with the kernel ``rhs`` (output feature, input feature, spatial axes), in
    the layouts ``dimension_numbers`` names (None: ('NCHW', 'OIHW', 'NCHW') and its N-d
    analogues; three strings such as ('NHWC', 'HWIO', 'NHWC'); or a ConvDimensionNumbers).
    window_strides, lhs_dilation (fractional strides: zeros between input elements),
    rhs_dilation (atrous): one int per spatial axis, in the kernel spec's spatial order.
    padding: 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs (negative crops).
    feature_group_count splits the features into groups convolved apart (depthwise: as many
    groups as input features); batch_group_count splits the batch likewise (the kernel's
    output features in as many groups).  Differentiable (any order), batchable, jittable."""
    _check_precision(precision)
    x, w = _arr(lhs), _arr(rhs)
    if x.ndim < 2 or x.ndim != w.ndim:
        raise TypeError(f"lhs, rhs: convolution needs operands of one rank >= 2, got shapes "
                        f"{x.shape} and {w.shape}")
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    lp, rp, op = dn
    s = x.ndim - 2
    strides = _int_tuple(window_strides, s, "window_strides")
    ldil = _int_tuple(lhs_dilation, s, "lhs_dilation")
    rdil = _int_tuple(rhs_dilation, s, "rhs_dilation")
    G = operator.index(feature_group_count)
    BG = operator.index(batch_group_count)
    if G < 1 or BG < 1:
        raise ValueError("feature_group_count, batch_group_count: must be >= 1")
    if G > 1 and BG > 1:
        raise ValueError("feature_group_count, batch_group_count: at most one may exceed 1")
    N, C = x.shape[lp[0]], x.shape[lp[1]]
    O, I = w.shape[rp[0]], w.shape[rp[1]]
    ksz = tuple(w.shape[a] for a in rp[2:])
    if C != I * G:
        raise ValueError(f"lhs, rhs: lhs has {C} features, which must equal rhs's input "
                         f"features ({I}) times feature_group_count ({G}) (shapes {x.shape}, "
                         f"{w.shape})")
    if O % G or O % BG:
        raise ValueError(f"rhs: its {O} output features must be a multiple of "
                         f"feature_group_count ({G}) and batch_group_count ({BG})")
    if N % BG:
        raise ValueError(f"lhs: its batch {N} must be a multiple of batch_group_count ({BG})")
    if isinstance(padding, str):
        if any(d != 1 for d in ldil):
            raise ValueError("padding: a padding string is not supported with lhs_dilation "
                             "(give (low, high) pairs, or use conv_transpose)")
        eff = [rd * (k - 1) + 1 for k, rd in zip(ksz, rdil)]
        pads = padtype_to_pads([x.shape[a] for a in lp[2:]], eff, strides, padding)
    else:
        pads = _pairs(padding, s)
    x, w = _preferred(x, w, preferred_element_type)
    if dtypes.is_bool(x.dtype):
        raise TypeError("lhs: convolution needs numeric operands, got bool")
    # channels-last: (N, *spatial, C) and (*window, I, O)
    xl = _permuted(x, (lp[0],) + lp[2:] + (lp[1],))
    wl = _permuted(w, rp[2:] + (rp[1], rp[0]))
    cfg = [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, ldil)] + [(0, 0, 0)]
    if any(c != (0, 0, 0) for c in cfg):
        xl = _lax_pad(xl, 0, cfg)
    for j, (n, k, rd) in enumerate(zip(xl.shape[1:-1], ksz, rdil)):
        if rd * (k - 1) + 1 > n and k > 0:
            raise ValueError(f"rhs: the (dilated) window {rd * (k - 1) + 1} along spatial axis "
                             f"{j} is larger than the padded input {n} (lhs shape {x.shape}, "
                             f"padding {pads})")
    counts = _window_counts(xl.shape[1:-1], ksz, strides, rdil)
    P = math.prod(counts)
    K = math.prod(ksz)
    Nb = N // BG
    stacked = _im2col(xl, ksz, strides, rdil, counts)       # (N * P, K * C)
    if BG > 1:
        # batch groups: lhs batch b * Nb + n with kernel outputs of group b (XLA's order)
        Ob = O // BG
        c4 = F.reshape(stacked, (BG, Nb * P, K * C))
        w4 = F.permute_dims(F.reshape(wl, (K * I, BG, Ob)), (1, 0, 2))
        out = F.matmul(c4, w4)                                   # (BG, Nb*P, Ob)
        out = F.reshape(F.permute_dims(out, (1, 0, 2)), (Nb * P, O))
    elif G > 1:
        Og = O // G
        c4 = F.permute_dims(F.reshape(stacked, (N * P, K, G, I)), (2, 0, 1, 3))
        w4 = F.permute_dims(F.reshape(wl, (K, I, G, Og)), (2, 0, 1, 3))
        out = F.matmul(F.reshape(c4, (G, N * P, K * I)), F.reshape(w4, (G, K * I, Og)))
        out = F.reshape(F.permute_dims(out, (1, 0, 2)), (N * P, O))
    else:
        out = F.matmul(stacked, F.reshape(wl, (K * I, O)))
    out = F.reshape(out, (Nb,) + tuple(counts) + (O,))
    # (N, *spatial, O) -> the out spec: canonical (N, O, *spatial) at axes op
    canon = (0, s + 1) + tuple(range(1, s + 1))
    inv = [0] * (s + 2)
    for j, a in enumerate(op):
        inv[a] = canon[j]
    return F.permute_dims(out, tuple(inv)) if tuple(inv) != tuple(range(s + 2)) else out


def conv(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int] | None,
         padding: str | Sequence[tuple[int, int]], precision: Any = None,
         preferred_element_type: Any = None) -> Array:
    """JAX's ``lax.conv``: ``conv_general_dilated`` in the NCHW / OIHW layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int] | None,
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Array:
    """JAX's ``lax.conv_with_general_padding``: ``conv_general_dilated`` in the NCHW / OIHW
    layout with dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else -(-pad_len // 2)
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"padding: invalid mode {padding!r}")
    return pad_a, pad_len - pad_a


def conv_transpose(lhs: ArrayLike, rhs: ArrayLike, strides: Sequence[int] | None,
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Array:
    """JAX's ``lax.conv_transpose``: the convolution "transpose" (fractionally strided), as a
    ``conv_general_dilated`` with ``lhs_dilation=strides``.  Default layout ('NHWC', 'HWIO',
    'NHWC') and its N-d analogues; 'SAME'/'VALID' are the forward convolution's padding
    (tuples too with ``use_consistent_padding``); ``transpose_kernel`` flips the window and
    swaps the kernel's feature axes."""
    x, w = _arr(lhs), _arr(rhs)
    nd = x.ndim
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if nd not in defaults:
            raise ValueError(f"lhs: no default dimension_numbers for rank {nd}")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    ksz = [w.shape[a] for a in dn.rhs_spec[2:]]
    s = nd - 2
    rdil = _int_tuple(rhs_dilation, s, "rhs_dilation")
    strides = _int_tuple(strides, s, "strides")
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        eff = [rd * (k - 1) + 1 for k, rd in zip(ksz, rdil)]
        rep = [padding] * s if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(k, st, p) for k, st, p in zip(eff, strides, rep))
    else:
        pads = padding
    if transpose_kernel:
        w = F.flip(w, tuple(dn.rhs_spec[2:]))
        w = F.swapaxes(w, dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(x, w, (1,) * s, pads, strides, rdil, dn, precision=precision,
                                preferred_element_type=preferred_element_type)


# -- reduce_window --------------------------------------------------------------------------------

def _monoid(computation):
    """'add', 'mul', 'max' or 'min' when ``computation`` is one of lax's or nx's functions for
    it, else None (a general computation, folded pairwise)."""
    table = {E.add: "add", F.add: "add", E.mul: "mul", F.multiply: "mul", E.max: "max",
             F.maximum: "max", E.min: "min", F.minimum: "min"}
    try:
        return table.get(computation)
    except TypeError:
        return None


def _is_identity(kind, value, dtype):
    v = concrete_value(value) if isinstance(value, ArrayBase) else value
    if v is None:
        return False
    v = np.asarray(v)
    if v.shape != ():
        return False
    v = v.item()
    if kind == "add":
        return v == 0
    if kind == "mul":
        return v == 1
    if dtype.kind == "f":
        return v == (-np.inf if kind == "max" else np.inf)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return v == (info.min if kind == "max" else info.max)
    if dtype.kind == "b":
        return v == (kind == "min")
    return False


def _identity(kind, dtype):
    """The identity of the monoid ``kind`` in ``dtype`` (what padding holds)."""
    if kind == "add":
        return 0
    if kind == "mul":
        return 1
    if dtype.kind == "b":
        return kind == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min if kind == "max" else info.max)
    return -np.inf if kind == "max" else np.inf


def _static_pad(a, cfg):
    """A NumPy array padded as ``lax.pad`` pads (False fill): which positions are real."""
    for d, (lo, hi, interior) in enumerate(cfg):
        n = a.shape[d]
        if interior and n > 1:
            m = n + (n - 1) * interior
            b = np.zeros(a.shape[:d] + (m,) + a.shape[d + 1:], bool)
            idx = [slice(None)] * a.ndim
            idx[d] = slice(0, m, interior + 1)
            b[tuple(idx)] = a
            a = b
        a = np.pad(a, [(max(lo, 0), max(hi, 0)) if k == d else (0, 0) for k in range(a.ndim)])
        idx = [slice(None)] * a.ndim
        idx[d] = slice(-min(lo, 0), a.shape[d] + min(hi, 0))
        a = a[tuple(idx)]
    return a


def reduce_window(operand: ArrayLike, init_value: PyTree, computation: Callable[..., Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = 'VALID',
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> PyTree:
    """JAX's ``lax.reduce_window(operand, init_value, computation, window_dimensions,
    window_strides=None, padding='VALID', base_dilation=None, window_dilation=None)``: each
    window of the padded, base-dilated operand reduced with ``computation`` starting from
    init_value (padding and dilation holes take no part, as in XLA).  One window size, stride
    and dilation per axis of operand;
    padding 'SAME'/'SAME_LOWER'/'VALID' or (low, high) pairs.  ``computation``: lax.add / mul
    / max / min (or nx.add, nx.multiply, nx.maximum, nx.minimum) reduce the stacked windows at
    once (max and min pass the derivative to the first extreme element of each window, as
    JAX's select-and-scatter does); any other associative function of two pytrees is folded
    over the window elements.  Operand and init_value may be matching pytrees."""
    leaves, tree = tree_flatten(operand)
    inits, itree = tree_flatten(init_value)
    if tree != itree:
        raise ValueError(f"init_value: must have operand's tree structure ({tree}), got {itree}")
    if not leaves:
        raise ValueError("operand: reduce_window needs at least one operand")
    if not callable(computation):
        raise TypeError(f"computation: must be callable, got {computation!r}")
    xs = [_arr(v) for v in leaves]
    nd = xs[0].ndim
    for v in xs[1:]:
        if v.shape != xs[0].shape:
            raise ValueError(f"operand: arrays must share one shape, got {xs[0].shape} and "
                             f"{v.shape}")
    window = _int_tuple(window_dimensions, nd, "window_dimensions")
    strides = _int_tuple(window_strides, nd, "window_strides")
    bdil = _int_tuple(base_dilation, nd, "base_dilation")
    wdil = _int_tuple(window_dilation, nd, "window_dilation")
    if isinstance(padding, str):
        eff = [d * (k - 1) + 1 for k, d in zip(window, wdil)]
        pads = padtype_to_pads(xs[0].shape, eff, strides, padding)
    else:
        pads = _pairs(padding, nd)
    init_ops = []
    for x, iv in zip(xs, inits):
        # a Python or NumPy number converts once, at the operand's precision
        iv = _arr(iv) if isinstance(iv, ArrayBase) else F.asarray(iv, dtype=x.dtype)
        if iv.shape != ():
            raise TypeError(f"init_value: must be scalars, got shape {iv.shape}")
        init_ops.append(F.astype(iv, x.dtype))
    cfg = [(lo, hi, d - 1) for (lo, hi), d in zip(pads, bdil)]
    kind = _monoid(computation) if len(xs) == 1 else None
    # XLA reduces only the operand's own elements: padding and dilation holes take no part.  A
    # monoid pads with its identity; a general computation skips them through a static mask
    fills = [_identity(kind, x.dtype) for x in xs] if kind is not None else init_ops
    padded = [_lax_pad(x, f, cfg) if any(c != (0, 0, 0) for c in cfg) else x
              for x, f in zip(xs, fills)]
    for j, (n, k, d) in enumerate(zip(padded[0].shape, window, wdil)):
        if d * (k - 1) + 1 > n:
            raise ValueError(f"window_dimensions: the (dilated) window {d * (k - 1) + 1} along "
                             f"axis {j} is larger than the padded operand {n}")
    axes = tuple(range(nd))
    if kind is not None:
        x = padded[0]
        wins, counts = _windows(x, axes, window, strides, wdil)
        if len(wins) == 1:
            r = F.copy(wins[0])
        else:
            st = F.stack(wins, axis=-1)
            if kind == "add":
                r = F.sum(st, axis=-1, dtype=x.dtype)
            elif kind == "mul":
                r = F.prod(st, axis=-1, dtype=x.dtype)
            else:
                # the first extreme element of each window takes the whole derivative
                pick = F.argmax(st, axis=-1) if kind == "max" else F.argmin(st, axis=-1)
                r = F.take_along_axis(st, F.expand_dims(pick, -1), axis=-1)[..., 0]
        if not _is_identity(kind, init_ops[0], x.dtype):
            r = computation(init_ops[0], r)
        return tree_unflatten(tree, [r])
    wins = [_windows(x, axes, window, strides, wdil) for x in padded]
    counts = wins[0][1]
    real = _static_pad(np.ones(xs[0].shape, bool), cfg)
    masks = _windows(real, axes, window, strides, wdil)[0]
    acc = [F.broadcast_to(iv, tuple(counts)) for iv in init_ops]
    for k in range(len(wins[0][0])):
        if not masks[k].any():
            continue
        out = computation(tree_unflatten(tree, acc),
                          tree_unflatten(tree, [w[0][k] for w in wins]))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"computation: must return operand's structure ({tree}), got "
                            f"{out_tree}")
        out_leaves = [_arr(v) for v in out_leaves]
        if not masks[k].all():
            m = F.asarray(np.ascontiguousarray(masks[k]))
            out_leaves = [F.where(m, v, a) for v, a in zip(out_leaves, acc)]
        acc = out_leaves
    if not wins[0][0]:     # an empty window: init_value at every position
        acc = [F.copy(a) for a in acc]
    return tree_unflatten(tree, acc)
