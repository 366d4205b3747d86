"""Declarative op specs for the autodiff tests: one entry per differentiable primitive (several
for some), each making a function of float64 tensors and inputs in its domain.

``Spec.make(rng, case)`` -> ``(fn, args)``: ``fn`` takes nx tensors and returns one tensor,
``args`` are float64 ndarrays (the differentiated inputs).  ``cases`` are the shape variants
hypothesis draws from.  Helpers compute finite-difference Jacobians in float64.
"""
import dataclasses

import numpy as np

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune.primitives import bind


@dataclasses.dataclass
class Spec:
    name: str
    prim: object
    make: object
    cases: list
    eps: float = 1e-6
    tol: float = 1e-6
    second_order: bool = True


def anyv(rng, shape):
    return rng.uniform(-2.0, 2.0, shape)


def pos(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def distinct(rng, shape):
    """Values at least 0.1 apart (no ties, so max-like ops are smooth around them)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n).reshape(shape) * 0.3 - 0.15 * n
            + rng.uniform(-0.05, 0.05, shape))


def with_zeros(rng, shape):
    x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    flat = x.reshape(-1)
    k = rng.integers(1, max(2, flat.size // 2 + 1))
    flat[rng.choice(flat.size, size=min(k, flat.size), replace=False)] = 0.0
    return x


ELEMENTWISE = [(), (4,), (2, 3), (2, 1, 3)]


def unary(prim, dom):
    def make(rng, shape):
        return (lambda x: bind(prim, x)), [dom(rng, shape)]
    return make


def binary(prim, dom_a, dom_b):
    def make(rng, shape):
        return (lambda a, b: bind(prim, a, b)), [dom_a(rng, shape), dom_b(rng, shape)]
    return make


def c(arr, dtype=None):
    return nx.asarray(np.asarray(arr) if dtype is None else np.asarray(arr, dtype=dtype))


def _pow_negbase(rng, shape):
    b = c(rng.integers(1, 4, shape).astype(np.float64))
    return (lambda a: bind(P.pow_p, a, b)), [rng.uniform(-2.0, -0.5, shape)]


def _mod(rng, shape):
    """b in [0.5, 2], a / b at least 0.1 away from an integer (mod jumps there)."""
    b = rng.uniform(0.5, 2.0, shape)
    a = b * (rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.9, shape))
    return (lambda x, y: bind(P.mod_p, x, y)), [a, b]


def _where(rng, shape):
    cond = c(rng.random(shape) < 0.5)
    return (lambda x, y: bind(P.where_p, cond, x, y)), [anyv(rng, shape), anyv(rng, shape)]


def _cast(rng, shape):
    return (lambda x: bind(P.cast_p, x, dtype=np.dtype(np.float32))), [anyv(rng, shape)]


def _reshape(rng, case):
    src, dst = case
    return (lambda x: bind(P.reshape_p, x, shape=dst)), [anyv(rng, src)]


def _expand(rng, case):
    src, dst = case
    return (lambda x: bind(P.expand_p, x, shape=dst)), [anyv(rng, src)]


def _permute(rng, case):
    shape, axes = case
    return (lambda x: bind(P.permute_p, x, axes=axes)), [anyv(rng, shape)]


def _pad(rng, case):
    shape, cfg, fill = case
    return (lambda x: bind(P.pad_p, x, config=cfg, fill=fill)), [anyv(rng, shape)]


def _shrink(rng, case):
    shape, limits = case
    return (lambda x: bind(P.shrink_p, x, limits=limits)), [anyv(rng, shape)]


def _flip(rng, case):
    shape, axes = case
    return (lambda x: bind(P.flip_p, x, axes=axes)), [anyv(rng, shape)]


def _as_strided(rng, case):
    src, shape, strides, offset, transposed = case

    def fn(x):
        if transposed:
            x = nx.transpose(x)
        return bind(P.as_strided_p, x, shape=shape, strides=strides, offset=offset)
    return fn, [anyv(rng, src)]


def _cat(rng, case):
    shapes, axis = case
    return (lambda *xs: bind(P.cat_p, *xs, axis=axis)), [anyv(rng, s) for s in shapes]


def _reduce(prim, dom):
    def make(rng, case):
        shape, axes, keepdims = case
        return (lambda x: bind(prim, x, axes=axes, keepdims=keepdims)), [dom(rng, shape)]
    return make


def _scan(op, dom):
    def make(rng, case):
        shape, axis = case
        return (lambda x: bind(P.associative_scan_p, x, axis=axis, op=op)), [dom(rng, shape)]
    return make


def _matmul(rng, case):
    sa, sb = case
    return (lambda a, b: bind(P.matmul_p, a, b)), [anyv(rng, sa), anyv(rng, sb)]


def _gather(rng, case):
    dshape, ishape, axis = case
    idx = c(rng.integers(-dshape[axis], dshape[axis], ishape), np.int64)
    return (lambda d: bind(P.gather_p, d, idx, axis=axis)), [anyv(rng, dshape)]


def _scatter(mode, dom_u):
    def make(rng, case):
        tshape, ishape, axis = case
        idx = c(rng.integers(0, tshape[axis], ishape), np.int64)
        B = tuple(b if (d == axis or a == 1) else a
                  for d, (a, b) in enumerate(zip(tshape, ishape)))
        dom_t = distinct if mode in ("max", "min") else anyv

        def fn(t, u):
            return bind(P.scatter_p, t, idx, u, axis=axis, mode=mode)
        if mode in ("max", "min"):
            vals = distinct(rng, (int(np.prod(tshape)) + int(np.prod(B)),)).reshape(-1)
            return fn, [vals[:int(np.prod(tshape))].reshape(tshape),
                        vals[int(np.prod(tshape)):].reshape(B)]
        return fn, [dom_t(rng, tshape), dom_u(rng, B)]
    return make


def _unfold(rng, case):
    shape, k, s, d, p = case
    return (lambda x: bind(P.unfold_p, x, kernel_size=k, stride=s, dilation=d, padding=p)), \
        [anyv(rng, shape)]


def _fold(rng, case):
    shape, k, s, d, p = case
    cols = np.asarray(bind(P.unfold_p, c(np.zeros(shape)), kernel_size=k, stride=s, dilation=d,
                           padding=p)).shape
    return (lambda x: bind(P.fold_p, x, output_size=shape[2:], kernel_size=k, stride=s,
                           dilation=d, padding=p)), [anyv(rng, cols)]


def _contiguous(rng, shape):
    return (lambda x: bind(P.contiguous_p, nx.transpose(x))), [anyv(rng, shape)]


def _copy(rng, shape):
    return (lambda x: bind(P.copy_p, x)), [anyv(rng, shape)]


def _assign(rng, shape):
    def fn(d, s):
        dst = bind(P.copy_p, d)
        return bind(P.add_p, bind(P.assign_p, dst, s), bind(P.mul_p, d, d))
    return fn, [anyv(rng, shape), anyv(rng, shape)]


WINDOWS = [((1, 2, 4, 4), (2, 2), (1, 1), (1, 1), (0, 0)),
           ((2, 1, 5, 4), (3, 2), (2, 1), (1, 1), (1, 0)),
           ((1, 1, 6), (2,), (1,), (2,), (1,))]

SPECS = [
    Spec("neg", P.neg_p, unary(P.neg_p, anyv), ELEMENTWISE),
    Spec("log2", P.log2_p, unary(P.log2_p, pos), ELEMENTWISE),
    Spec("exp2", P.exp2_p, unary(P.exp2_p, anyv), ELEMENTWISE),
    Spec("sin", P.sin_p, unary(P.sin_p, anyv), ELEMENTWISE),
    Spec("cos", P.cos_p, unary(P.cos_p, anyv), ELEMENTWISE),
    Spec("sqrt", P.sqrt_p, unary(P.sqrt_p, pos), ELEMENTWISE),
    Spec("recip", P.recip_p, unary(P.recip_p, pos), ELEMENTWISE),
    Spec("exp", P.exp_p, unary(P.exp_p, anyv), ELEMENTWISE),
    Spec("log", P.log_p, unary(P.log_p, pos), ELEMENTWISE),
    Spec("tanh", P.tanh_p, unary(P.tanh_p, anyv), ELEMENTWISE),
    Spec("log1p", P.log1p_p, unary(P.log1p_p, pos), ELEMENTWISE),
    Spec("expm1", P.expm1_p, unary(P.expm1_p, anyv), ELEMENTWISE),
    Spec("add", P.add_p, binary(P.add_p, anyv, anyv), ELEMENTWISE),
    Spec("mul", P.mul_p, binary(P.mul_p, anyv, anyv), ELEMENTWISE),
    Spec("fdiv", P.fdiv_p, binary(P.fdiv_p, anyv, pos), ELEMENTWISE),
    Spec("pow", P.pow_p, binary(P.pow_p, pos, anyv), ELEMENTWISE),
    Spec("pow_negative_base", P.pow_p, _pow_negbase, ELEMENTWISE),
    Spec("max", P.max_p, lambda rng, s: ((lambda a, b: bind(P.max_p, a, b)),
                                         list(distinct(rng, (2,) + s))), ELEMENTWISE),
    Spec("mod", P.mod_p, _mod, ELEMENTWISE),
    Spec("where", P.where_p, _where, ELEMENTWISE),
    Spec("cast", P.cast_p, _cast, ELEMENTWISE, eps=1e-2, tol=1e-4),
    Spec("contiguous", P.contiguous_p, _contiguous, [(2, 3), (3, 1, 2)]),
    Spec("copy", P.copy_p, _copy, ELEMENTWISE),
    Spec("assign", P.assign_p, _assign, ELEMENTWISE),
    Spec("reshape", P.reshape_p, _reshape, [((2, 3), (3, 2)), ((2, 3, 1), (6,)), ((4,), (2, 1, 2))]),
    Spec("expand", P.expand_p, _expand, [((3,), (2, 3)), ((2, 1), (2, 4)), ((), (3,)),
                                         ((1, 3), (2, 2, 3))]),
    Spec("permute", P.permute_p, _permute, [((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0))]),
    Spec("pad", P.pad_p, _pad, [((3, 4), ((1, 0), (2, 1)), 1.5), ((2,), ((0, 3),), -2.0)]),
    Spec("shrink", P.shrink_p, _shrink, [((4, 5), ((1, 3), (0, 4))), ((5,), ((2, 5),))]),
    Spec("flip", P.flip_p, _flip, [((3, 4), (0, 1)), ((3, 4), (1,)), ((2, 2, 2), (0, 2))]),
    Spec("as_strided", P.as_strided_p, _as_strided,
         [((6,), (4, 3), (1, 1), 0, False), ((3, 4), (2, 2), (4, 2), 1, False),
          ((2, 3), (3, 2), (2, 1), 0, True), ((5,), (3,), (0,), 2, False)]),
    Spec("cat", P.cat_p, _cat, [([(2, 3), (2, 1), (2, 2)], 1), ([(1, 2), (3, 2)], 0)]),
    Spec("reduce_sum", P.reduce_sum_p, _reduce(P.reduce_sum_p, anyv),
         [((2, 3, 4), (0, 2), False), ((2, 3, 4), (1,), True), ((3,), (0,), False)]),
    Spec("reduce_max", P.reduce_max_p, _reduce(P.reduce_max_p, distinct),
         [((2, 3, 4), (1,), False), ((2, 3, 4), (0, 2), True), ((5,), (0,), False)]),
    Spec("reduce_prod", P.reduce_prod_p, _reduce(P.reduce_prod_p, anyv),
         [((2, 3, 4), (1,), False), ((2, 3), (0, 1), True), ((4,), (0,), False)]),
    Spec("reduce_prod_zeros", P.reduce_prod_p, _reduce(P.reduce_prod_p, with_zeros),
         [((2, 3, 4), (1,), False), ((2, 3), (0, 1), True), ((4,), (0,), False)]),
    Spec("cumsum", P.associative_scan_p, _scan("sum", anyv), [((5,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cumprod", P.associative_scan_p, _scan("prod", anyv), [((5,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cumprod_zeros", P.associative_scan_p, _scan("prod", with_zeros),
         [((5,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cummax", P.associative_scan_p, _scan("max", distinct), [((6,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cummin", P.associative_scan_p, _scan("min", distinct), [((6,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("matmul", P.matmul_p, _matmul, [((3, 4), (4, 2)), ((4,), (4, 3)), ((2, 3, 4), (4,)),
                                         ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4,)),
                                         ((3, 4), (2, 4, 1))]),
    Spec("gather", P.gather_p, _gather, [((4, 5), (4, 3), 1), ((1, 5), (3, 2), 1),
                                         ((4, 3), (6, 3), 0)]),
    Spec("scatter_set", P.scatter_p, _scatter("set", anyv), [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_add", P.scatter_p, _scatter("add", anyv), [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_mul", P.scatter_p, _scatter("mul", anyv), [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_mul_zeros", P.scatter_p, _scatter("mul", with_zeros),
         [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)], second_order=False),
    Spec("scatter_max", P.scatter_p, _scatter("max", anyv), [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_min", P.scatter_p, _scatter("min", anyv), [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("unfold", P.unfold_p, _unfold, WINDOWS),
    Spec("fold", P.fold_p, _fold, WINDOWS),
]

# Primitives whose derivative is zero by definition (or whose outputs are not float).
NONDIFF_PRIMS = [P.idiv_p, P.cmplt_p, P.cmpne_p, P.xor_p, P.or_p, P.and_p, P.argmax_p,
                 P.threefry_p, P.buffer_p, P.const_scalar_p, P.const_array_p]


# -- finite differences -----------------------------------------------------------------------

def evaluate(fn, args):
    return np.asarray(fn(*[nx.asarray(a) for a in args]), dtype=np.float64)


def fd_jacobians(fn, args, eps):
    """Central-difference Jacobians, one (out.size, arg.size) matrix per argument."""
    out = evaluate(fn, args)
    jacs = []
    for i, a in enumerate(args):
        J = np.zeros((out.size, a.size))
        for k in range(a.size):
            shifted = []
            for sgn in (1.0, -1.0):
                ak = np.array(a, dtype=np.float64).reshape(-1)
                ak[k] += sgn * eps
                new = list(args)
                new[i] = ak.reshape(a.shape)
                shifted.append(evaluate(fn, new).reshape(-1))
            J[:, k] = (shifted[0] - shifted[1]) / (2 * eps)
        jacs.append(J)
    return out, jacs


def f64_tensor(a):
    """``a`` as a float64 nx tensor."""
    return nx.asarray(np.asarray(a, dtype=np.float64))


# -- sorting and searching (WP-sorting) ----------------------------------------------------------

def _sort(rng, case):
    shape, axis, descending = case
    return (lambda x: bind(P.sort_p, x, axis=axis, descending=descending)), [distinct(rng, shape)]


SPECS += [
    Spec("sort", P.sort_p, _sort, [((6,), 0, False), ((3, 4), 1, True), ((4, 3), 0, False),
                                   ((2, 3, 4), 1, True)]),
]
NONDIFF_PRIMS += [P.argsort_p, P.searchsorted_p]


# -- statistics family (WP-statistics): nan-ignoring reductions and the fused clip --------------

def _distinct_one_nan(rng, shape):
    """``distinct`` values with a nan first: no group of a reduction over >1 element is all nan."""
    x = distinct(rng, shape)
    x.reshape(-1)[0] = np.nan
    return x


def _clip_spec(rng, case):
    """x, lo and hi at least 0.05 apart (no ties), x below, inside and above its range; a bound
    may be missing (then it is not an argument)."""
    shape, lower, upper = case
    x = anyv(rng, shape)
    lo = x + rng.choice([-1.0, 1.0], shape) * rng.uniform(0.05, 0.5, shape)
    hi = np.maximum(x, lo) + rng.choice([-1.0, 1.0], shape) * rng.uniform(0.05, 0.5, shape)
    hi = np.where(np.abs(hi - lo) < 0.05, hi + 0.1, hi)
    inf = c(np.full(shape, np.inf))

    def fn(x, *bounds):
        b = list(bounds)
        lo_t = b.pop(0) if lower else -inf
        hi_t = b.pop(0) if upper else inf
        return bind(P.clip_p, x, lo_t, hi_t, lower=lower, upper=upper)
    return fn, [x] + ([lo] if lower else []) + ([hi] if upper else [])


SPECS += [
    Spec("reduce_nanmax", P.reduce_nanmax_p, _reduce(P.reduce_nanmax_p, _distinct_one_nan),
         [((2, 3, 4), (1,), False), ((2, 3, 4), (0, 2), True), ((5,), (0,), False)]),
    Spec("reduce_nanmin", P.reduce_nanmin_p, _reduce(P.reduce_nanmin_p, _distinct_one_nan),
         [((2, 3, 4), (1,), False), ((2, 3, 4), (0, 2), True), ((5,), (0,), False)]),
    Spec("clip", P.clip_p, _clip_spec, [(s, lower, upper) for s in ELEMENTWISE
                                        for lower, upper in ((True, True), (True, False),
                                                             (False, True))]),
]


# -- WP-jit: stop_gradient (identity, zero derivative) ----------------------------------------------
NONDIFF_PRIMS += [P.stop_gradient_p]
