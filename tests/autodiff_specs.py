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


def _roll(rng, case):
    shape, shift, axis = case
    return (lambda x: bind(P.roll_p, x, shift=shift, axis=axis)), [anyv(rng, shape)]


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
    Spec("sub", P.sub_p, binary(P.sub_p, anyv, anyv), ELEMENTWISE),
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
    Spec("reshape", P.reshape_p, _reshape,
         [((2, 3), (3, 2)), ((2, 3, 1), (6,)), ((4,), (2, 1, 2))]),
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
    Spec("roll", P.roll_p, _roll, [((2, 5), 2, 1), ((4, 3), -1, 0), ((3, 2, 4), 7, 2)]),
    Spec("reduce_sum", P.reduce_sum_p, _reduce(P.reduce_sum_p, anyv),
         [((2, 3, 4), (0, 2), False), ((2, 3, 4), (1,), True), ((3,), (0,), False)]),
    Spec("reduce_max", P.reduce_max_p, _reduce(P.reduce_max_p, distinct),
         [((2, 3, 4), (1,), False), ((2, 3, 4), (0, 2), True), ((5,), (0,), False)]),
    Spec("reduce_prod", P.reduce_prod_p, _reduce(P.reduce_prod_p, anyv),
         [((2, 3, 4), (1,), False), ((2, 3), (0, 1), True), ((4,), (0,), False)]),
    Spec("reduce_prod_zeros", P.reduce_prod_p, _reduce(P.reduce_prod_p, with_zeros),
         [((2, 3, 4), (1,), False), ((2, 3), (0, 1), True), ((4,), (0,), False)]),
    Spec("cumsum", P.associative_scan_p, _scan("sum", anyv), [((5,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cumprod", P.associative_scan_p, _scan("prod", anyv),
         [((5,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cumprod_zeros", P.associative_scan_p, _scan("prod", with_zeros),
         [((5,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cummax", P.associative_scan_p, _scan("max", distinct),
         [((6,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("cummin", P.associative_scan_p, _scan("min", distinct),
         [((6,), 0), ((2, 4), 1), ((3, 2), 0)]),
    Spec("matmul", P.matmul_p, _matmul, [((3, 4), (4, 2)), ((4,), (4, 3)), ((2, 3, 4), (4,)),
                                         ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4,)),
                                         ((3, 4), (2, 4, 1))]),
    Spec("gather", P.gather_p, _gather, [((4, 5), (4, 3), 1), ((1, 5), (3, 2), 1),
                                         ((4, 3), (6, 3), 0)]),
    Spec("scatter_set", P.scatter_p, _scatter("set", anyv),
         [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_add", P.scatter_p, _scatter("add", anyv),
         [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_mul", P.scatter_p, _scatter("mul", anyv),
         [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_mul_zeros", P.scatter_p, _scatter("mul", with_zeros),
         [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)], second_order=False),
    Spec("scatter_max", P.scatter_p, _scatter("max", anyv),
         [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("scatter_min", P.scatter_p, _scatter("min", anyv),
         [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0)]),
    Spec("unfold", P.unfold_p, _unfold, WINDOWS),
    Spec("fold", P.fold_p, _fold, WINDOWS),
]

# Primitives whose derivative is zero by definition (or whose outputs are not float).
NONDIFF_PRIMS = [P.idiv_p, P.cmplt_p, P.cmpne_p, P.xor_p, P.or_p, P.and_p, P.argmax_p,
                 P.threefry_p, P.buffer_p, P.const_scalar_p, P.const_array_p,
                 P.threefry_bits_p, P.threefry_sample_p,
                 # rejection samplers: gamma's derivative is a custom JVP around the primitive
                 P.random_gamma_p, P.random_poisson_p, P.random_binomial_p]


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


# -- sorting and searching ----------------------------------------------------------------------

def _sort(rng, case):
    shape, axis, descending = case
    return (lambda x: bind(P.sort_p, x, axis=axis, descending=descending)), [distinct(rng, shape)]


SPECS += [
    Spec("sort", P.sort_p, _sort, [((6,), 0, False), ((3, 4), 1, True), ((4, 3), 0, False),
                                   ((2, 3, 4), 1, True)]),
]
NONDIFF_PRIMS += [P.argsort_p, P.searchsorted_p]


# -- statistics family: nan-ignoring reductions and the fused clip --------------

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


# -- the Array API / NumPy elementwise primitives -------------------------------

def interval(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def away_from_zero(rng, shape):
    """Values with 0.3 <= |x| <= 2 and a random sign."""
    return rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def with_exact_zeros(rng, shape):
    """Values in [-2, 2] with some of them exactly 0 (where sinc's formula is masked)."""
    x = anyv(rng, shape)
    x[rng.random(shape) < 0.4] = 0.0
    return x


def _parts(w):
    """The real and imaginary parts of complex w as one real 1-d tensor."""
    flat = nx.reshape(w, (-1,))
    return bind(P.cat_p, bind(P.real_p, flat), bind(P.imag_p, flat), axis=0)


def complex_unary(fn, dom_re, dom_im):
    """fn on z = complex(x, y), seen through its real and imaginary parts: a real function of
    real arguments, so finite differences check the complex rules and their conventions."""
    def make(rng, shape):
        return (lambda x, y: _parts(fn(bind(P.complex_p, x, y)))), \
            [dom_re(rng, shape), dom_im(rng, shape)]
    return make


def _abs_complex(rng, shape):
    return (lambda x, y: bind(P.abs_p, bind(P.complex_p, x, y))), \
        [away_from_zero(rng, shape), away_from_zero(rng, shape)]


SPECS += [
    Spec("tan", P.tan_p, unary(P.tan_p, interval(-1.2, 1.2)), ELEMENTWISE),
    Spec("asin", P.asin_p, unary(P.asin_p, interval(-0.9, 0.9)), ELEMENTWISE),
    Spec("acos", P.acos_p, unary(P.acos_p, interval(-0.9, 0.9)), ELEMENTWISE),
    Spec("atan", P.atan_p, unary(P.atan_p, anyv), ELEMENTWISE),
    Spec("sinh", P.sinh_p, unary(P.sinh_p, anyv), ELEMENTWISE),
    Spec("cosh", P.cosh_p, unary(P.cosh_p, anyv), ELEMENTWISE),
    Spec("asinh", P.asinh_p, unary(P.asinh_p, anyv), ELEMENTWISE),
    Spec("acosh", P.acosh_p, unary(P.acosh_p, interval(1.2, 3.0)), ELEMENTWISE),
    Spec("atanh", P.atanh_p, unary(P.atanh_p, interval(-0.9, 0.9)), ELEMENTWISE),
    Spec("log10", P.log10_p, unary(P.log10_p, pos), ELEMENTWISE),
    Spec("deg2rad", P.deg2rad_p, unary(P.deg2rad_p, anyv), ELEMENTWISE),
    Spec("rad2deg", P.rad2deg_p, unary(P.rad2deg_p, anyv), ELEMENTWISE),
    Spec("abs", P.abs_p, unary(P.abs_p, away_from_zero), ELEMENTWISE),
    Spec("abs_complex", P.abs_p, _abs_complex, ELEMENTWISE),
    Spec("sinc", P.sinc_taylor_p, lambda rng, s: (nx.sinc, [with_exact_zeros(rng, s)]),
         ELEMENTWISE, eps=1e-5, tol=1e-5),
    Spec("complex_real_imag", P.complex_p, complex_unary(lambda z: z, anyv, anyv), ELEMENTWISE),
    Spec("real", P.real_p, complex_unary(lambda z: bind(P.real_p, z) * z, anyv, anyv),
         ELEMENTWISE),
    Spec("imag", P.imag_p, complex_unary(lambda z: bind(P.imag_p, z) * z, anyv, anyv),
         ELEMENTWISE),
    Spec("conj", P.conj_p, complex_unary(lambda z: bind(P.conj_p, z) * z * (1 + 2j), anyv, anyv),
         ELEMENTWISE),
    Spec("tan_complex", P.tan_p, complex_unary(lambda z: bind(P.tan_p, z), interval(-1, 1),
                                               anyv), ELEMENTWISE),
    Spec("asin_complex", P.asin_p, complex_unary(lambda z: bind(P.asin_p, z), anyv,
                                                 away_from_zero), ELEMENTWISE),
    Spec("acos_complex", P.acos_p, complex_unary(lambda z: bind(P.acos_p, z), anyv,
                                                 away_from_zero), ELEMENTWISE),
    Spec("atan_complex", P.atan_p, complex_unary(lambda z: bind(P.atan_p, z), away_from_zero,
                                                 anyv), ELEMENTWISE),
    Spec("sinh_cosh_complex", P.sinh_p, complex_unary(
        lambda z: bind(P.sinh_p, z) + bind(P.cosh_p, z) * 0.5j, anyv, anyv), ELEMENTWISE),
    Spec("asinh_complex", P.asinh_p, complex_unary(lambda z: bind(P.asinh_p, z),
                                                   away_from_zero, anyv), ELEMENTWISE),
    Spec("acosh_complex", P.acosh_p, complex_unary(lambda z: bind(P.acosh_p, z), anyv,
                                                   away_from_zero), ELEMENTWISE),
    Spec("atanh_complex", P.atanh_p, complex_unary(lambda z: bind(P.atanh_p, z), anyv,
                                                   away_from_zero), ELEMENTWISE),
    Spec("log10_complex", P.log10_p, complex_unary(lambda z: bind(P.log10_p, z), pos, anyv),
         ELEMENTWISE),
    Spec("sinc_complex", P.sinc_taylor_p, complex_unary(nx.sinc, anyv, away_from_zero),
         ELEMENTWISE, eps=1e-5, tol=1e-5),
    Spec("angle_complex", P.atan2_p, complex_unary(nx.angle, away_from_zero, away_from_zero),
         ELEMENTWISE),
    Spec("atan2", P.atan2_p, binary(P.atan2_p, away_from_zero, away_from_zero), ELEMENTWISE),
    Spec("hypot", P.hypot_p, binary(P.hypot_p, away_from_zero, anyv), ELEMENTWISE),
    Spec("copysign", P.copysign_p, binary(P.copysign_p, away_from_zero, away_from_zero),
         ELEMENTWISE),
    Spec("logaddexp", P.logaddexp_p, binary(P.logaddexp_p, anyv, anyv), ELEMENTWISE),
    Spec("logaddexp2", P.logaddexp2_p, binary(P.logaddexp2_p, anyv, anyv), ELEMENTWISE),
]

NONDIFF_PRIMS += [P.floor_p, P.ceil_p, P.rint_p, P.trunc_p, P.sign_p, P.signbit_p, P.isnan_p,
                  P.isinf_p, P.isfinite_p, P.nextafter_p, P.lshift_p, P.rshift_p]


# -- FFTs and special functions --------------------------------------------------------------
# The FFT specs map real float64 inputs to real outputs: complex operands are built as
# re + im * 1j and complex results split into their real and imaginary parts (the autodiff
# tests compare real Jacobians; the transpose convention of complex cotangents is covered by
# the real parts' chain).

def _fs_re(z):
    from nx_rune.frontend.fft import real_part
    return real_part(z)


def _fs_parts(z):
    return nx.concatenate([_fs_re(z), _fs_re(z * (-1j))], axis=-1)


def _fs_fft_make(rng, case):
    """case: (kind, shape, axes, inverse (fft) or n (irfft), norm)."""
    kind, shape, axes, extra, norm = case
    if kind == "fft":
        def fn(re, im):
            return _fs_parts(bind(P.fft_p, re + im * 1j, axes=axes, inverse=extra, norm=norm))
        return fn, [anyv(rng, shape), anyv(rng, shape)]
    if kind == "rfft":
        return (lambda x: _fs_parts(bind(P.rfft_p, x, axes=axes, norm=norm))), [anyv(rng, shape)]

    def fn(re, im):   # irfft: extra is the output length along axes[-1]
        return bind(P.irfft_p, re + im * 1j, axes=axes, n=extra, norm=norm)
    return fn, [anyv(rng, shape), anyv(rng, shape)]


def _fs_unit(rng, shape):
    return rng.uniform(0.05, 0.95, shape)


def _fs_between_poles(rng, shape):
    """Negative values at least 0.2 away from the poles 0, -1, -2, -3."""
    return -(rng.integers(0, 3, shape) + rng.uniform(0.2, 0.8, shape))


def _fs_polygamma(rng, case):
    shape, n = case
    order = nx.asarray(np.full(shape, float(n)))
    return (lambda x: bind(P.polygamma_p, order, x)), [pos(rng, shape)]


def _fs_xlogy_zeros(prim):
    def make(rng, shape):
        x = anyv(rng, shape)
        x.reshape(-1)[0] = 0.0    # x == 0: the derivative in y is 0, in x log(y)
        return (lambda a, b: bind(prim, a, b)), [x, _fs_unit(rng, shape)]
    return make


def _fs_i1_near_zero(prim):
    def make(rng, shape):
        x = anyv(rng, shape)
        x.reshape(-1)[0] = 0.0    # the derivative's 1/2 limit at 0
        return (lambda a: bind(prim, a)), [x]
    return make


SPECS += [
    Spec("fft", P.fft_p, _fs_fft_make,
         [("fft", (6,), (0,), False, "backward"), ("fft", (3, 4), (1,), True, "ortho"),
          ("fft", (2, 3, 4), (0, 2), False, "forward"), ("fft", (3, 4), (1, 0), True,
                                                         "backward")]),
    Spec("rfft", P.rfft_p, _fs_fft_make,
         [("rfft", (6,), (0,), None, "backward"), ("rfft", (3, 5), (1,), None, "ortho"),
          ("rfft", (4, 3), (0,), None, "forward"), ("rfft", (3, 4), (1, 0), None, "backward"),
          ("rfft", (2, 3, 4), (0, 2), None, "ortho")]),
    Spec("irfft", P.irfft_p, _fs_fft_make,
         [("irfft", (4,), (0,), 6, "backward"), ("irfft", (3, 4), (1,), 7, "ortho"),
          ("irfft", (3, 2), (0,), 5, "forward"), ("irfft", (3, 3), (0, 1), 4, "backward"),
          ("irfft", (2, 3, 3), (2, 0, 1), 5, "ortho")]),
    Spec("lgamma", P.lgamma_p, unary(P.lgamma_p, pos), ELEMENTWISE),
    Spec("lgamma_negative", P.lgamma_p, unary(P.lgamma_p, _fs_between_poles), ELEMENTWISE,
         tol=1e-5),
    Spec("digamma", P.digamma_p, unary(P.digamma_p, pos), ELEMENTWISE),
    Spec("polygamma", P.polygamma_p, _fs_polygamma, [((4,), 1), ((2, 3), 2), ((3,), 0)]),
    Spec("gamma", P.gamma_p, unary(P.gamma_p, pos), ELEMENTWISE),
    Spec("betaln", P.betaln_p, binary(P.betaln_p, pos, pos), ELEMENTWISE),
    Spec("erf", P.erf_p, unary(P.erf_p, anyv), ELEMENTWISE),
    Spec("erfc", P.erfc_p, unary(P.erfc_p, anyv), ELEMENTWISE),
    Spec("erfinv", P.erfinv_p, unary(P.erfinv_p, lambda r, s: r.uniform(-0.9, 0.9, s)),
         ELEMENTWISE),
    Spec("ndtr", P.ndtr_p, unary(P.ndtr_p, anyv), ELEMENTWISE),
    Spec("ndtri", P.ndtri_p, unary(P.ndtri_p, _fs_unit), ELEMENTWISE, tol=1e-5),
    Spec("log_ndtr", P.log_ndtr_p, unary(P.log_ndtr_p, lambda r, s: r.uniform(-30, 5, s)),
         ELEMENTWISE),
    Spec("expit", P.expit_p, unary(P.expit_p, anyv), ELEMENTWISE),
    Spec("logit", P.logit_p, unary(P.logit_p, _fs_unit), ELEMENTWISE, tol=1e-5),
    Spec("xlogy", P.xlogy_p, binary(P.xlogy_p, anyv, pos), ELEMENTWISE),
    Spec("xlogy_at_zero", P.xlogy_p, _fs_xlogy_zeros(P.xlogy_p), ELEMENTWISE[1:]),
    Spec("xlog1py", P.xlog1py_p, binary(P.xlog1py_p, anyv, _fs_unit), ELEMENTWISE),
    Spec("xlog1py_at_zero", P.xlog1py_p, _fs_xlogy_zeros(P.xlog1py_p), ELEMENTWISE[1:]),
    Spec("i0", P.i0_p, unary(P.i0_p, anyv), ELEMENTWISE),
    Spec("i0e", P.i0e_p, unary(P.i0e_p, anyv), ELEMENTWISE),
    Spec("i1", P.i1_p, unary(P.i1_p, anyv), ELEMENTWISE),
    Spec("i1_at_zero", P.i1_p, _fs_i1_near_zero(P.i1_p), ELEMENTWISE[1:]),
    Spec("i1e", P.i1e_p, unary(P.i1e_p, anyv), ELEMENTWISE),
    Spec("i1e_at_zero", P.i1e_p, _fs_i1_near_zero(P.i1e_p), ELEMENTWISE[1:]),
]


# -- linear algebra: decompositions and solves ----------------------------------------

def _well_conditioned(rng, batch, n):
    """Random (batch, n, n) matrices with singular values in [0.5, 2.5] (both signs of det)."""
    q1 = np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
    q2 = np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
    s = rng.uniform(0.5, 2.5, batch + (n,))
    return (q1 * s[..., None, :]) @ q2


def _spd(rng, batch, n):
    """Random symmetric positive-definite matrices with eigenvalues in [0.5, 3], distinct."""
    q = np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
    w = np.sort(rng.uniform(0.5, 3.0, batch + (n,)), -1) + np.arange(n) * 0.3
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _la_unary(prim, dom, **params):
    def make(rng, case):
        batch, n = case
        return (lambda a: bind(prim, a, **params)), [dom(rng, batch, n)]
    return make


def _triangular(rng, case):
    batch, n, k, lower, trans, unit = case
    a = rng.uniform(-1.0, 1.0, batch + (n, n)) + np.eye(n) * rng.choice([-3.0, 3.0], batch + (1, n))

    def fn(a, b):
        return bind(P.triangular_solve_p, a, b, lower=lower, trans=trans, unit_diagonal=unit)
    return fn, [a, anyv(rng, batch + (n, k))]


def _solve_spec(rng, case):
    batch, n, k = case
    return (lambda a, b: bind(P.solve_p, a, b)), [_well_conditioned(rng, batch, n),
                                                  anyv(rng, batch + (n, k))]


def _eigh_spec(rng, case):
    batch, n, lower = case

    def fn(a):
        w, v = nx.frontend.linalg.unpack(bind(P.eigh_p, a, lower=lower), [(n,), (n, n)])
        v = v * nx.sign(v[..., :1, :])           # eigenvectors' signs fixed by their first row
        return nx.concatenate([w, nx.reshape(v, batch + (n * n,))], -1)
    return fn, [_spd(rng, batch, n) + rng.uniform(-0.1, 0.1, batch + (n, n))]


def _svd_spec(rng, case):
    batch, m, n = case
    k = min(m, n)

    def fn(a):
        u, s, vt = nx.frontend.linalg.unpack(bind(P.svd_p, a, full_matrices=False),
                                             [(m, k), (k,), (k, n)])
        sg = nx.sign(u[..., :1, :])               # signs of the singular vector pairs fixed
        return nx.concatenate([nx.reshape(u * sg, batch + (m * k,)), s,
                               nx.reshape(vt * nx.matrix_transpose(sg), batch + (k * n,))], -1)
    return fn, [_rect(rng, batch, m, n)]


def _rect(rng, batch, m, n):
    """Random (m, n) matrices with distinct singular values in [0.5, 3]."""
    k = min(m, n)
    u = np.linalg.qr(rng.standard_normal(batch + (m, k)))[0]
    v = np.linalg.qr(rng.standard_normal(batch + (n, k)))[0]
    s = np.sort(rng.uniform(0.5, 2.5, batch + (k,)), -1)[..., ::-1] + np.arange(k)[::-1] * 0.3
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def _rect_unary(prim, **params):
    def make(rng, case):
        batch, m, n = case
        return (lambda a: bind(prim, a, **params)), [_rect(rng, batch, m, n)]
    return make


def _lstsq_spec(rng, case):
    m, n, k = case
    return (lambda a, b: bind(P.lstsq_p, a, b, rcond=1e-10)), [_rect(rng, (), m, n),
                                                                 anyv(rng, (m, k))]


def _eig_spec(rng, case):
    # non-symmetric matrices with distinct real eigenvalues (Q diag(d) Q^-1), so that the
    # outputs are real; each unit eigenvector enters as v v^T, which its sign does not change
    # (fixing the sign by one component made a kink wherever that component was near 0:
    # hypothesis found one at seed 2**31 - 1)
    batch, n = case
    q = rng.uniform(-1.0, 1.0, batch + (n, n)) + np.eye(n) * 2.0
    d = np.arange(n) * 1.5 + rng.uniform(-0.3, 0.3, batch + (n,))
    a = (q * d[..., None, :]) @ np.linalg.inv(q)

    def fn(a):
        w, v = nx.linalg.eig(a)
        v = nx.real(v)
        outer = v[..., :, None, :] * v[..., None, :, :]       # (..., n, n, k): v_k v_k^T
        return nx.concatenate([nx.real(w), nx.reshape(outer, batch + (n * n * n,))], -1)
    return fn, [a]


SQUARE = [((), 3), ((2,), 3), ((), 1), ((2, 1), 2)]
RECT = [((), 3, 3), ((), 4, 2), ((), 2, 4), ((2,), 3, 2)]
SPECS += [
    Spec("cholesky", P.cholesky_p, _la_unary(P.cholesky_p, _spd), SQUARE),
    Spec("triangular_solve", P.triangular_solve_p, _triangular,
         [((), 3, 2, True, 0, False), ((2,), 3, 1, False, 1, False), ((), 3, 2, True, 1, True),
          ((2,), 2, 3, False, 0, True), ((), 3, 1, False, 2, False)]),
    Spec("solve", P.solve_p, _solve_spec, [((), 3, 2), ((2,), 3, 1), ((2, 1), 2, 2)]),
    Spec("inv", P.inv_p, _la_unary(P.inv_p, _well_conditioned), SQUARE),
    Spec("eigh", P.eigh_p, _eigh_spec, [((), 3, True), ((2,), 3, False), ((), 1, True),
                                        ((2,), 2, True)]),
    Spec("eigvalsh", P.eigvalsh_p, _la_unary(P.eigvalsh_p, _spd, lower=True), SQUARE),
    Spec("svd", P.svd_p, _svd_spec, RECT),
    Spec("svdvals", P.svdvals_p, _rect_unary(P.svdvals_p), RECT),
    Spec("qr", P.qr_p, _rect_unary(P.qr_p, mode="reduced"), RECT),
    Spec("pinv", P.pinv_p, _rect_unary(P.pinv_p, rtol=1e-10), RECT),
    Spec("lstsq", P.lstsq_p, _lstsq_spec, [(4, 2, 1), (3, 3, 2), (2, 3, 2)]),
    Spec("eig", P.eig_p, _eig_spec, SQUARE),
]


# -- stop_gradient (identity, zero derivative) ----------------------------------------------
NONDIFF_PRIMS += [P.stop_gradient_p]


# -- the Schur-based primitives: the principal sqrtm and logm (matfunc) of symmetric
# positive-definite and of non-symmetric matrices with positive real eigenvalues, the
# Sylvester solve; schur and hessenberg are residuals without a derivative

def _pos_eig(rng, batch, n):
    """Non-symmetric matrices with distinct positive eigenvalues (Q diag(d) Q^-1)."""
    q = rng.uniform(-1.0, 1.0, batch + (n, n)) + np.eye(n) * 2.0
    d = 1.0 + np.arange(n) * 0.7 + rng.uniform(-0.2, 0.2, batch + (n,))
    return (q * d[..., None, :]) @ np.linalg.inv(q)


def _sylvester_spec(rng, case):
    batch, m, n = case
    a = _pos_eig(rng, batch, m)
    b = _pos_eig(rng, batch, n)
    return (lambda a, b, q: bind(P.sylvester_p, a, b, q)), [a, b, anyv(rng, batch + (m, n))]


NONDIFF_PRIMS += [P.schur_p, P.hessenberg_p]
SPECS += [
    Spec("matfunc_sqrtm", P.matfunc_p, _la_unary(P.matfunc_p, _spd, fn="sqrtm"), SQUARE),
    Spec("matfunc_sqrtm_nonsym", P.matfunc_p, _la_unary(P.matfunc_p, _pos_eig, fn="sqrtm"),
         [((), 3), ((2,), 2)]),
    Spec("matfunc_logm", P.matfunc_p, _la_unary(P.matfunc_p, _spd, fn="logm"), SQUARE),
    Spec("matfunc_logm_nonsym", P.matfunc_p, _la_unary(P.matfunc_p, _pos_eig, fn="logm"),
         [((), 3), ((2,), 2)]),
    Spec("sylvester", P.sylvester_p, _sylvester_spec, [((), 3, 2), ((2,), 2, 2), ((), 1, 3)]),
]


# -- the fused Euclidean norm, the LU factorization reused by slogdet -------------

def _norm2_spec(rng, case):
    shape, axes, keepdims = case
    return (lambda x: bind(P.norm2_p, x, axes=axes, keepdims=keepdims)), [anyv(rng, shape)]


def _with_lu(prim):
    """``prim`` applied to (a, lu_factor(a)): slogdet and lu_inverse take a's factorization as
    a residual operand and differentiate with respect to a."""
    def make(rng, case):
        batch, n = case
        return (lambda a: bind(prim, a, bind(P.lu_factor_p, a))), [_well_conditioned(rng, batch,
                                                                                      n)]
    return make


NONDIFF_PRIMS += [P.lu_factor_p]
SPECS += [
    Spec("norm2", P.norm2_p, _norm2_spec,
         [((2, 3, 4), (0, 1, 2), False), ((2, 3, 4), (1, 2), True), ((3, 4), (1,), False),
          ((2, 3, 4), (0, 2), False), ((5,), (0,), True)]),
    Spec("slogdet", P.slogdet_p, _with_lu(P.slogdet_p), SQUARE),   # now slogdet(a, lu)
    Spec("lu_inverse", P.lu_inverse_p, _with_lu(P.lu_inverse_p), SQUARE),
]


# -- the incomplete gamma and beta functions --------------------------------------
# First order in every operand; second order only in x (a second derivative in a or b raises
# NotImplementedError, see tests/test_incomplete.py), so the shape parameters of the
# derivative primitives are constants here.

def _unit_open(rng, shape):
    return rng.uniform(0.15, 0.85, shape)


def _shape_fixed(prim, n_shape):
    """prim(shape params fixed, x) as a function of x alone."""
    def make(rng, shape):
        params = [c(pos(rng, shape)) for _ in range(n_shape)]
        dom = pos if n_shape == 1 else _unit_open
        return (lambda x: bind(prim, *params, x)), [dom(rng, shape)]
    return make


def _betainc_spec(rng, shape):
    return (lambda a, b, x: bind(P.betainc_p, a, b, x)), [pos(rng, shape), pos(rng, shape),
                                                         _unit_open(rng, shape)]


SPECS += [
    Spec("gammainc", P.gammainc_p, binary(P.gammainc_p, pos, pos), ELEMENTWISE,
         second_order=False),
    Spec("gammaincc", P.gammaincc_p, binary(P.gammaincc_p, pos, pos), ELEMENTWISE,
         second_order=False),
    Spec("betainc", P.betainc_p, _betainc_spec, ELEMENTWISE, second_order=False),
    Spec("gammainc_x", P.gammainc_p, _shape_fixed(P.gammainc_p, 1), ELEMENTWISE),
    Spec("betainc_x", P.betainc_p, _shape_fixed(P.betainc_p, 2), ELEMENTWISE),
    Spec("gammainc_da", P.gammainc_da_p, _shape_fixed(P.gammainc_da_p, 1), ELEMENTWISE),
    Spec("betainc_da", P.betainc_da_p, _shape_fixed(P.betainc_da_p, 2), ELEMENTWISE),
    Spec("betainc_db", P.betainc_db_p, _shape_fixed(P.betainc_db_p, 2), ELEMENTWISE),
]


# -- the Cholesky derivative as a primitive (L from a well-conditioned SPD
# matrix, any cotangent G; both read from their lower triangles) ---------------------------------

def _cholesky_grad_spec(rng, case):
    batch, n = case
    lmat = np.linalg.cholesky(_spd(rng, batch, n))
    return ((lambda l, g: bind(P.cholesky_grad_p, l, g)),
            [lmat, rng.standard_normal(batch + (n, n))])


SPECS += [Spec("cholesky_grad", P.cholesky_grad_p, _cholesky_grad_spec,
               [((), 3), ((2,), 3), ((), 1), ((2, 1), 2), ((), 5)])]


# -- the determinant from the LU factorization and the fused derivative
# primitives (their first-order rules on concrete values are themselves fused; second order and
# jit take the formulas) ---------------------------------------------------------------------------

def _lu_det_spec(part):
    def make(rng, case):
        batch, n = case
        return ((lambda a: bind(P.lu_det_p, a, bind(P.lu_factor_p, a), part=part)),
                [_well_conditioned(rng, batch, n)])
    return make


def _det_grad_spec(rng, case):
    batch, n = case
    return ((lambda a, s: bind(P.det_grad_p, a, bind(P.lu_factor_p, a), s)),
            [_well_conditioned(rng, batch, n), anyv(rng, batch)])


def _norm2_grad_spec(rng, case):
    shape, axes, keepdims = case
    red = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keepdims else \
        tuple(d for i, d in enumerate(shape) if i not in axes)
    return ((lambda x, ans, g: bind(P.norm2_grad_p, x, ans, g, axes=axes, keepdims=keepdims)),
            [anyv(rng, shape), pos(rng, red), anyv(rng, red)])


def _triangular_solve_grad_spec(rng, case):
    batch, n, k, lower, trans, unit = case

    def fn(u, v):
        return bind(P.triangular_solve_grad_p, u, v, lower=lower, trans=trans,
                    unit_diagonal=unit)
    return fn, [anyv(rng, batch + (n, k)), anyv(rng, batch + (n, k))]


SPECS += [
    Spec("lu_det", P.lu_det_p, _lu_det_spec("det"), SQUARE),
    Spec("lu_det_logabsdet", P.lu_det_p, _lu_det_spec("logabsdet"), SQUARE),
    Spec("lu_det_sign", P.lu_det_p, _lu_det_spec("sign"), SQUARE),
    Spec("det_grad", P.det_grad_p, _det_grad_spec, SQUARE),
    Spec("norm2_grad", P.norm2_grad_p, _norm2_grad_spec,
         [((2, 3, 4), (0, 1, 2), False), ((2, 3, 4), (1, 2), True), ((3, 4), (1,), False),
          ((2, 3, 4), (0, 2), False), ((5,), (0,), True)]),
    Spec("triangular_solve_grad", P.triangular_solve_grad_p, _triangular_solve_grad_spec,
         [((), 3, 2, True, 0, False), ((2,), 3, 1, False, 1, False), ((), 3, 2, True, 1, True),
          ((2,), 2, 3, False, 0, True)]),
]


def _cho_factor_of(rng, batch, n, lower):
    c = np.linalg.cholesky(_spd(rng, batch, n))
    return c if lower else np.swapaxes(c, -1, -2).copy()


def _cho_solve_spec(rng, case):
    batch, n, k, lower = case
    return ((lambda c, b: bind(P.cho_solve_p, c, b, lower=lower)),
            [_cho_factor_of(rng, batch, n, lower), anyv(rng, batch + (n, k))])


def _cho_solve_grad_spec(rng, case):
    batch, n, k, lower = case
    return ((lambda c, x, u: bind(P.cho_solve_grad_p, c, x, u, lower=lower)),
            [_cho_factor_of(rng, batch, n, lower), anyv(rng, batch + (n, k)),
             anyv(rng, batch + (n, k))])


CHO_CASES = [((), 3, 2, True), ((2,), 3, 1, False), ((), 1, 1, True), ((2, 1), 2, 3, False)]
SPECS += [Spec("cho_solve", P.cho_solve_p, _cho_solve_spec, CHO_CASES),
          Spec("cho_solve_grad", P.cho_solve_grad_p, _cho_solve_grad_spec, CHO_CASES)]


def _matrix_power_spec(rng, case):
    batch, m, n = case
    a = rng.uniform(-1.0, 1.0, batch + (m, m)) * (1.5 / m)
    return ((lambda x: bind(P.matrix_power_p, x, bind(P.matrix_power_parts_p, x, n=n), n=n)),
            [a])


NONDIFF_PRIMS += [P.matrix_power_parts_p]     # a residual: matrix_power's rules differentiate a
SPECS += [Spec("matrix_power", P.matrix_power_p, _matrix_power_spec,
               [((), 3, 2), ((2,), 3, 3), ((), 2, 7), ((2, 1), 2, 5), ((), 3, 4), ((), 2, 13)])]


# -- the families of special functions by name (special_unary / binary / ternary, fn=...) -------
# Orders (v, n) and hyp1f1's a, b are constants (their derivatives raise); zeta, poch, beta,
# kl_div and rel_entr are differentiated in both operands.

def _family_spec(prim, fn, doms, fixed=()):
    """prim(*operands, fn=fn) with the operands at ``fixed`` (index: value) constant."""
    def make(rng, shape):
        consts = {i: c(np.full(shape, float(v))) for i, v in fixed}
        free = [d(rng, shape) for d in doms]

        def f(*xs):
            it = iter(xs)
            ops_ = [consts[i] if i in consts else next(it) for i in range(len(fixed) + len(doms))]
            return bind(prim, *ops_, fn=fn)
        return f, free
    return make


def _zeta_s(rng, shape):
    return rng.uniform(1.5, 4.0, shape)


_U, _B, _T = P.special_unary_p, P.special_binary_p, P.special_ternary_p
SPECS += [
    Spec("gammasgn", _U, _family_spec(_U, "gammasgn", [pos]), ELEMENTWISE),
    Spec("rgamma", _U, _family_spec(_U, "rgamma", [_fs_between_poles]), ELEMENTWISE, tol=1e-5),
    Spec("rgamma_pos", _U, _family_spec(_U, "rgamma", [pos]), ELEMENTWISE),
    Spec("j0", _U, _family_spec(_U, "j0", [anyv]), ELEMENTWISE),
    Spec("j1", _U, _family_spec(_U, "j1", [anyv]), ELEMENTWISE),
    Spec("y0", _U, _family_spec(_U, "y0", [pos]), ELEMENTWISE),
    Spec("y1", _U, _family_spec(_U, "y1", [pos]), ELEMENTWISE),
    Spec("spence", _U, _family_spec(_U, "spence", [pos]), ELEMENTWISE),
    Spec("erfcinv", _U, _family_spec(_U, "erfcinv", [lambda r, s: r.uniform(0.1, 1.9, s)]),
         ELEMENTWISE),
    Spec("exp1", _U, _family_spec(_U, "exp1", [pos]), ELEMENTWISE),
    Spec("expi", _U, _family_spec(_U, "expi", [pos]), ELEMENTWISE),
    Spec("riemann_zeta", _U, _family_spec(_U, "riemann_zeta", [_zeta_s]), ELEMENTWISE),
    Spec("jv", _B, _family_spec(_B, "jv", [pos], [(0, 1.5)]), ELEMENTWISE),
    Spec("jv_0", _B, _family_spec(_B, "jv", [anyv], [(0, 0)]), ELEMENTWISE),
    Spec("yn", _B, _family_spec(_B, "yn", [pos], [(0, 2)]), ELEMENTWISE),
    Spec("yv", _B, _family_spec(_B, "yv", [pos], [(0, 0.5)]), ELEMENTWISE),
    Spec("iv", _B, _family_spec(_B, "iv", [pos], [(0, 2.5)]), ELEMENTWISE),
    Spec("ive", _B, _family_spec(_B, "ive", [anyv], [(0, 1)]), ELEMENTWISE),
    Spec("kv", _B, _family_spec(_B, "kv", [pos], [(0, 0.5)]), ELEMENTWISE),
    Spec("kve", _B, _family_spec(_B, "kve", [pos], [(0, 1.5)]), ELEMENTWISE),
    Spec("expn", _B, _family_spec(_B, "expn", [pos], [(0, 2)]), ELEMENTWISE),
    Spec("expn_0", _B, _family_spec(_B, "expn", [pos], [(0, 0)]), ELEMENTWISE),
    Spec("zeta", _B, _family_spec(_B, "zeta", [_zeta_s, pos]), ELEMENTWISE),
    Spec("poch", _B, _family_spec(_B, "poch", [pos, pos]), ELEMENTWISE),
    Spec("beta", _B, _family_spec(_B, "beta", [pos, pos]), ELEMENTWISE),
    Spec("kl_div", _B, _family_spec(_B, "kl_div", [pos, pos]), ELEMENTWISE),
    Spec("rel_entr", _B, _family_spec(_B, "rel_entr", [pos, pos]), ELEMENTWISE),
    Spec("hyp1f1", _T, _family_spec(_T, "hyp1f1", [anyv], [(0, 1.5), (1, 2.5)]), ELEMENTWISE),
    Spec("hyp1f1_abx", _T, _family_spec(_T, "hyp1f1", [pos, pos, anyv]), ELEMENTWISE,
         second_order=False),
    Spec("hyp1f1_da", _T, _family_spec(_T, "hyp1f1_da", [anyv], [(0, 1.5), (1, 2.5)]),
         ELEMENTWISE),
    Spec("hyp1f1_db", _T, _family_spec(_T, "hyp1f1_db", [anyv], [(0, 0.5), (1, 1.5)]),
         ELEMENTWISE),
]


# -- XLA's elementwise math (xla_math(x, op=...), xla_pow(x, y)): the exact functions'
# derivatives -----------------------------------------------------------------------------------

def _xla_math_spec(op, dom):
    def make(rng, shape):
        return (lambda x: bind(P.xla_math_p, x, op=op)), [dom(rng, shape)]
    return make


SPECS += [Spec(f"xla_{op}", P.xla_math_p, _xla_math_spec(op, dom), ELEMENTWISE)
          for op, dom in (("exp", anyv), ("log", pos), ("log1p", pos), ("tan", interval(-1.2, 1.2)),
                          ("rsqrt", pos), ("erf", anyv))]
SPECS += [Spec("xla_pow", P.xla_pow_p, binary(P.xla_pow_p, pos, anyv), ELEMENTWISE)]

# -- YNNPACK's exp, log and log1p (xla_math ops ynn_*, where XLA hands a fusion to YNNPACK): the
# exact functions' derivatives
SPECS += [Spec(f"xla_{op}", P.xla_math_p, _xla_math_spec(op, dom), ELEMENTWISE)
          for op, dom in (("ynn_exp", anyv), ("ynn_log", pos), ("ynn_log1p", pos))]
