"""Every primitive's batching rule against a Python loop over the examples.

Driven by the op-spec table (tests/autodiff_specs.py: every spec, every case) plus a table of
the non-differentiable primitives and of integer/bool operands (indices, masks, keys) below.
For each spec the examples are drawn independently; ``vmap`` with every argument batched
along each position (positive and negative ``in_axes``) or shared (``None``) must give the
stacked results of calling the function on each example.  Derivatives: ``vmap`` of ``vjp`` and
``jvp`` (per-example derivatives, the rules run on batched values) and ``vjp``/``jvp`` of
``vmap`` (the batching rules recorded by the tape) against the per-example results.
"""
import zlib

import numpy as np
import pytest

import nx_rune as nx
from autodiff_specs import NONDIFF_PRIMS, SPECS
from nx_rune import primitives as P
from nx_rune.autodiff import BATCH_RULES
from nx_rune.primitives import bind

B = 3   # examples


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _examples(make, case, key):
    """``(fn, [args of example 0], [args of example 1], ...)``: the function of the first
    draw (its captured constants are shared), the arguments of B independent draws."""
    fn, first = make(_rng(key, 0), case)
    return fn, [first] + [make(_rng(key, k), case)[1] for k in range(1, B)]


def _tol(out):
    return dict(rtol=2e-6, atol=1e-6) if np.asarray(out).dtype in (np.float32, np.complex64) \
        else dict(rtol=1e-10, atol=1e-12)


def _configs(args):
    """(argument, stacking position, in_axes value) for every argument: the first, middle and
    last positions, each given as a non-negative and as a negative axis, and None."""
    for p, a in enumerate(args):
        r = np.ndim(a)
        for pos in sorted({0, r // 2, r}):
            yield p, pos, pos
            yield p, pos, pos - (r + 1)
        yield p, None, None


def _batched_args(examples, p, pos):
    """Argument lists for vmap: argument p stacked at ``pos`` (None: example 0's, shared), the
    others stacked at 0; and the in_axes tuple (without the value for p)."""
    args = []
    for i in range(len(examples[0])):
        if i == p:
            args.append(examples[0][i] if pos is None else
                        np.stack([ex[i] for ex in examples], axis=pos))
        else:
            args.append(np.stack([ex[i] for ex in examples], axis=0))
    return args


def _loop(fn, examples, p=None, shared=False):
    outs = []
    for ex in examples:
        ex = list(ex)
        if shared:
            ex[p] = examples[0][p]
        outs.append(np.asarray(fn(*[nx.asarray(a) for a in ex])))
    return np.stack(outs)


# configurations that must fail: nx.assign writes in place, and a destination shared by every
# example cannot hold a value that differs between them
REFUSED = {("assign", 0, None): (ValueError, "assign: the destination")}


def check_forward(fn, examples, name=""):
    for p, pos, ax in _configs(examples[0]):
        args = _batched_args(examples, p, pos)
        in_axes = tuple(ax if i == p else 0 for i in range(len(args)))
        refused = REFUSED.get((name, p, pos))
        if refused is not None:
            with pytest.raises(refused[0], match=refused[1]):
                nx.vmap(fn, in_axes=in_axes)(*[nx.asarray(a) for a in args])
            continue
        got = nx.vmap(fn, in_axes=in_axes, axis_size=B)(*[nx.asarray(a) for a in args])
        want = _loop(fn, examples, p, shared=pos is None)
        assert got.shape == want.shape, (in_axes, got.shape, want.shape)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, **_tol(want),
                                   err_msg=f"in_axes={in_axes}")
    # every argument batched along its last axis, the output's batch axis last
    args = [np.stack([ex[i] for ex in examples], axis=-1) for i in range(len(examples[0]))]
    got = nx.vmap(fn, in_axes=-1, out_axes=-1)(*[nx.asarray(a) for a in args])
    want = np.moveaxis(_loop(fn, examples), 0, -1)
    np.testing.assert_allclose(np.asarray(got), want, **_tol(want))


def _out_like(fn, args, rng):
    out = np.asarray(fn(*[nx.asarray(a) for a in args]))
    return rng.standard_normal(out.shape).astype(out.dtype)


def check_derivatives(fn, examples, key, name=""):
    rng = _rng(key, "ct")
    n = len(examples[0])
    cts = [_out_like(fn, ex, rng) for ex in examples]
    tans = [[rng.standard_normal(np.shape(a)) for a in ex] for ex in examples]
    per_vjp = [nx.vjp(fn, *[nx.asarray(a) for a in ex])[1](nx.asarray(c))
               for ex, c in zip(examples, cts)]
    per_jvp = [nx.jvp(fn, tuple(nx.asarray(a) for a in ex), tuple(nx.asarray(t) for t in ts))[1]
               for ex, ts in zip(examples, tans)]
    stack = lambda xs, axis=0: nx.asarray(np.stack([np.asarray(x) for x in xs], axis))  # noqa
    args = [stack([ex[i] for ex in examples]) for i in range(n)]
    ct = stack(cts)
    tan = [stack([t[i] for t in tans]) for i in range(n)]
    want_vjp = [np.stack([np.asarray(v[i]) for v in per_vjp]) for i in range(n)]
    want_jvp = np.stack([np.asarray(t) for t in per_jvp])

    # vmap of the derivative: the rules run on batched values
    got = nx.vmap(lambda c, *a: nx.vjp(fn, *a)[1](c))(ct, *args)
    for g, w in zip(got, want_vjp):
        np.testing.assert_allclose(np.asarray(g), w, **_tol(w), err_msg="vmap(vjp)")
    got = nx.vmap(lambda a, t: nx.jvp(fn, tuple(a), tuple(t))[1])(args, tan)
    np.testing.assert_allclose(np.asarray(got), want_jvp, **_tol(want_jvp), err_msg="vmap(jvp)")

    # the derivative of vmap: the tape records the batched primitives
    _, vjp_fn = nx.vjp(nx.vmap(fn), *args)
    for g, w in zip(vjp_fn(ct), want_vjp):
        np.testing.assert_allclose(np.asarray(g), w, **_tol(w), err_msg="vjp(vmap)")
    got = nx.jvp(nx.vmap(fn), tuple(args), tuple(tan))[1]
    np.testing.assert_allclose(np.asarray(got), want_jvp, **_tol(want_jvp), err_msg="jvp(vmap)")

    # a shared argument: its per-example cotangents are not summed by vmap(vjp)
    if n > 1 and (name, 0, None) not in REFUSED:
        shared = [examples[0][0]] * B
        ex1 = [[shared[k]] + list(examples[k][1:]) for k in range(B)]
        want = np.stack([np.asarray(nx.vjp(fn, *[nx.asarray(a) for a in ex])[1](
            nx.asarray(c))[0]) for ex, c in zip(ex1, cts)])
        got = nx.vmap(lambda c, a0, *a: nx.vjp(fn, a0, *a)[1](c)[0],
                      in_axes=(0, None) + (0,) * (n - 1))(ct, nx.asarray(examples[0][0]),
                                                          *args[1:])
        np.testing.assert_allclose(np.asarray(got), want, **_tol(want), err_msg="shared")


SPEC_CASES = [(s, i) for s in SPECS for i in range(len(s.cases))]


def _id(sc):
    return f"{sc[0].name}-{sc[1]}"


@pytest.mark.parametrize("spec_case", SPEC_CASES, ids=_id)
def test_batching_rule_matches_loop(spec_case):
    spec, i = spec_case
    fn, examples = _examples(spec.make, spec.cases[i], (spec.name, i))
    check_forward(fn, examples, spec.name)


@pytest.mark.parametrize("spec_case", SPEC_CASES, ids=_id)
def test_batched_derivatives_match_loop(spec_case):
    spec, i = spec_case
    fn, examples = _examples(spec.make, spec.cases[i], (spec.name, i))
    check_derivatives(fn, examples, (spec.name, i), spec.name)


# -- non-differentiable primitives, and integer/bool operands of the others ---------------------

def _ints(rng, shape, lo=-9, hi=10, dtype=np.int32):
    return rng.integers(lo, hi, shape).astype(dtype)


def _divisors(rng, shape):
    return (rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)).astype(np.int32)


def _un(prim, dom, **params):
    return lambda rng, shape: ((lambda x: bind(prim, x, **params)), [dom(rng, shape)])


def _bin(prim, dom_a, dom_b, **params):
    return lambda rng, shape: ((lambda a, b: bind(prim, a, b, **params)),
                               [dom_a(rng, shape), dom_b(rng, shape)])


def _specials(rng, shape):
    """Floats with some nan, inf and -0.0 among them."""
    x = rng.uniform(-3, 3, shape)
    flat = x.reshape(-1)
    pick = rng.random(flat.shape)
    flat[pick < 0.15] = np.nan
    flat[(pick >= 0.15) & (pick < 0.3)] = np.inf * rng.choice([-1, 1])
    flat[(pick >= 0.3) & (pick < 0.4)] = -0.0
    return x


def _anyf(rng, shape):
    return rng.uniform(-3, 3, shape)


def _bools(rng, shape):
    return rng.random(shape) < 0.5


def _argmax(rng, case):
    shape, axis, keepdims = case
    return (lambda x: bind(P.argmax_p, x, axis=axis, keepdims=keepdims)), \
        [rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)]


def _argsort(rng, case):
    shape, axis, descending = case
    return (lambda x: bind(P.argsort_p, x, axis=axis, descending=descending, stable=True,
                           dtype=np.dtype(np.int64))), [rng.integers(0, 3, shape) * 1.0]


def _searchsorted(rng, case):
    n, m, side = case
    return (lambda a, v: bind(P.searchsorted_p, a, v, side=side, dtype=np.dtype(np.int64))), \
        [np.sort(rng.integers(0, 6, n) * 1.0), rng.integers(-1, 7, m) * 1.0]


def _threefry(rng, shape):
    return (lambda k, c: bind(P.threefry_p, k, c)), \
        [rng.integers(0, 2**32, (2,), dtype=np.uint64).astype(np.uint32),
         rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)]


def _threefry_bits(rng, case):
    nbits, shape = case
    return (lambda k: bind(P.threefry_bits_p, k, nbits=nbits, shape=shape)), \
        [rng.integers(0, 2**32, (2,), dtype=np.uint64).astype(np.uint32)]


def _random_gamma(rng, case):
    shape, dtype = case
    return (lambda k, a: bind(P.random_gamma_p, k, a, log_space=False)), \
        [rng.integers(0, 2**32, (2,), dtype=np.uint64).astype(np.uint32),
         rng.uniform(0.2, 5.0, shape).astype(dtype)]


def _random_poisson(rng, case):
    return (lambda k, lam: bind(P.random_poisson_p, k, lam, dtype=np.dtype(np.int32))), \
        [rng.integers(0, 2**32, (2,), dtype=np.uint64).astype(np.uint32),
         rng.uniform(0.0, 40.0, case).astype(np.float32)]


def _random_binomial(rng, case):
    return (lambda k, n, p: bind(P.random_binomial_p, k, n, p)), \
        [rng.integers(0, 2**32, (2,), dtype=np.uint64).astype(np.uint32),
         np.floor(rng.uniform(0.0, 200.0, case)), rng.uniform(0.0, 1.0, case)]


def _threefry_sample(rng, case):
    dist, dtype, params = case
    return (lambda k: bind(P.threefry_sample_p, k, dist=dist, shape=(2, 3),
                           dtype=np.dtype(dtype), params=params)), \
        [rng.integers(0, 2**32, (2,), dtype=np.uint64).astype(np.uint32)]


def _constants(rng, shape):
    """The primitives without operands, inside a batched computation."""
    def fn(x):
        c = bind(P.const_array_p, array=np.arange(x.size, dtype=np.float64).reshape(x.shape))
        s = bind(P.const_scalar_p, value=2.0, dtype=np.dtype(np.float64))
        b = bind(P.buffer_p, shape=(), dtype=np.dtype(np.float64))
        return bind(P.add_p, bind(P.mul_p, x, c),
                    bind(P.expand_p, bind(P.mul_p, s, bind(P.mul_p, b, s * 0)), shape=x.shape))
    return fn, [_anyf(rng, shape)]


def _gather_idx(rng, case):
    dshape, ishape, axis = case
    n = int(np.prod(dshape)) if axis is None else dshape[axis]
    return (lambda d, i: bind(P.gather_p, d, i, axis=axis)), \
        [_anyf(rng, dshape), rng.integers(-n, n, ishape).astype(np.int64)]


def _scatter_idx(mode):
    def make(rng, case):
        tshape, ishape, axis = case
        if axis is None:
            n, indexed = int(np.prod(tshape)), ishape
        else:
            n = tshape[axis]
            indexed = tuple(b if (d == axis or a == 1) else a
                            for d, (a, b) in enumerate(zip(tshape, ishape)))
        return (lambda t, i, u: bind(P.scatter_p, t, i, u, axis=axis, mode=mode)), \
            [_anyf(rng, tshape), rng.integers(0, n, ishape).astype(np.int32),
             _anyf(rng, indexed)]
    return make


def _where_cond(rng, shape):
    return (lambda c, x, y: bind(P.where_p, c, x, y)), \
        [_bools(rng, shape), _anyf(rng, shape), _anyf(rng, shape)]


def _cast_int(rng, shape):
    return (lambda x: bind(P.cast_p, x, dtype=np.dtype(np.float32))), [_ints(rng, shape)]


def _matmul_int(rng, case):
    sa, sb = case
    return (lambda a, b: bind(P.matmul_p, a, b)), [_ints(rng, sa), _ints(rng, sb)]


def _assign_int(rng, shape):
    def fn(d, s):
        return bind(P.assign_p, bind(P.copy_p, d), s)
    return fn, [_ints(rng, shape), _ints(rng, shape)]


SHAPES = [(), (4,), (2, 3)]
SCATTER_CASES = [((4, 5), (4, 3), 1), ((5, 2), (4, 2), 0), ((6,), (4,), None),
                 ((2, 3), (5,), None)]
OTHER = [
    ("idiv", P.idiv_p, _bin(P.idiv_p, _ints, _divisors), SHAPES),
    ("idiv_float", P.idiv_p, _bin(P.idiv_p, _anyf, lambda r, s: _divisors(r, s) * 0.7), SHAPES),
    ("cmplt", P.cmplt_p, _bin(P.cmplt_p, _specials, _specials), SHAPES),
    ("cmpne", P.cmpne_p, _bin(P.cmpne_p, _ints, _ints), SHAPES),
    ("xor", P.xor_p, _bin(P.xor_p, _ints, _ints), SHAPES),
    ("or", P.or_p, _bin(P.or_p, _bools, _bools), SHAPES),
    ("and", P.and_p, _bin(P.and_p, _ints, _ints), SHAPES),
    ("argmax", P.argmax_p, _argmax, [((5,), 0, False), ((2, 3, 4), 1, True),
                                     ((2, 3, 4), -1, False), ((2, 3), None, False),
                                     ((2, 3), None, True), ((), None, False)]),
    ("threefry", P.threefry_p, _threefry, [(5,), (2, 3)]),
    ("threefry_bits", P.threefry_bits_p, _threefry_bits, [(32, (5,)), (8, (2, 3)),
                                                          (64, ())]),
    ("threefry_sample", P.threefry_sample_p, _threefry_sample,
     [("uniform", np.float32, (-1.0, 2.0)), ("normal", np.complex64, ()),
      ("truncated_normal", np.float64, (0.5, 3.0)), ("gumbel", np.float16, ())]),
    ("random_gamma", P.random_gamma_p, _random_gamma, [((5,), np.float32), ((2, 3), np.float64)]),
    ("random_poisson", P.random_poisson_p, _random_poisson, [(4,), (2, 3)]),
    ("random_binomial", P.random_binomial_p, _random_binomial, [(4,), (2, 3)]),
    ("constants", P.const_array_p, _constants, SHAPES),
    ("argsort", P.argsort_p, _argsort, [((6,), 0, False), ((3, 4), 1, True),
                                        ((4, 3), -2, False)]),
    ("searchsorted", P.searchsorted_p, _searchsorted, [(5, (3,), "left"), (6, (2, 2), "right"),
                                                       (4, (), "left")]),
    ("floor", P.floor_p, _un(P.floor_p, _specials), SHAPES),
    ("ceil", P.ceil_p, _un(P.ceil_p, _specials), SHAPES),
    ("rint", P.rint_p, _un(P.rint_p, _specials), SHAPES),
    ("trunc", P.trunc_p, _un(P.trunc_p, _specials), SHAPES),
    ("sign", P.sign_p, _un(P.sign_p, _specials), SHAPES),
    ("signbit", P.signbit_p, _un(P.signbit_p, _specials), SHAPES),
    ("isnan", P.isnan_p, _un(P.isnan_p, _specials), SHAPES),
    ("isinf", P.isinf_p, _un(P.isinf_p, _specials), SHAPES),
    ("isfinite", P.isfinite_p, _un(P.isfinite_p, _specials), SHAPES),
    ("nextafter", P.nextafter_p, _bin(P.nextafter_p, _specials, _specials), SHAPES),
    ("lshift", P.lshift_p, _bin(P.lshift_p, _ints, lambda r, s: _ints(r, s, 0, 6)), SHAPES),
    ("rshift", P.rshift_p, _bin(P.rshift_p, _ints, lambda r, s: _ints(r, s, 0, 6)), SHAPES),
    # integer and bool operands of differentiable primitives: batched indices, masks, ints
    ("gather_indices", P.gather_p, _gather_idx, [((4, 5), (4, 3), 1), ((1, 5), (3, 2), 1),
                                                 ((4, 3), (6, 3), -2), ((2, 3), (4,), None)]),
    ("scatter_set_indices", P.scatter_p, _scatter_idx("set"), SCATTER_CASES),
    ("scatter_add_indices", P.scatter_p, _scatter_idx("add"), SCATTER_CASES),
    ("scatter_mul_indices", P.scatter_p, _scatter_idx("mul"), SCATTER_CASES),
    ("scatter_max_indices", P.scatter_p, _scatter_idx("max"), SCATTER_CASES),
    ("scatter_min_indices", P.scatter_p, _scatter_idx("min"), SCATTER_CASES),
    ("where_cond", P.where_p, _where_cond, SHAPES),
    ("cast_int", P.cast_p, _cast_int, SHAPES),
    ("matmul_int", P.matmul_p, _matmul_int, [((3, 4), (4, 2)), ((4,), (4,)),
                                             ((2, 1, 3, 4), (5, 4, 2))]),
    ("assign_int", P.assign_p, _assign_int, SHAPES),
    # the LU factorization that slogdet reuses (a residual, not differentiated)
    ("lu_factor", P.lu_factor_p,
     lambda rng, case: ((lambda a: bind(P.lu_factor_p, a)), [_anyf(rng, case)]),
     [(3, 3), (2, 4, 4), (1, 1)]),
]
# the Schur and Hessenberg reductions (residuals, not differentiated)
OTHER += [("schur_real", P.schur_p,
           lambda rng, case: ((lambda a: bind(P.schur_p, a, output="real")), [_anyf(rng, case)]),
           [(3, 3), (2, 4, 4), (1, 1)]),
          ("schur_complex", P.schur_p,
           lambda rng, case: ((lambda a: bind(P.schur_p, a, output="complex")),
                              [_anyf(rng, case)]),
           [(3, 3), (2, 2, 2)]),
          ("hessenberg", P.hessenberg_p,
           lambda rng, case: ((lambda a: bind(P.hessenberg_p, a)), [_anyf(rng, case)]),
           [(3, 3), (2, 4, 4), (1, 1)])]
# stop_gradient (the identity; zero derivative)
OTHER += [("stop_gradient", P.stop_gradient_p, _un(P.stop_gradient_p, _specials), SHAPES)]
# matrix_power's residual (the products of binary powering; not differentiated)
OTHER += [("matrix_power_parts", P.matrix_power_parts_p,
           lambda rng, case: ((lambda a: bind(P.matrix_power_parts_p, a, n=7)),
                              [_anyf(rng, case)]),
           [(3, 3), (2, 4, 4), (1, 1)])]
OTHER_CASES = [(o, i) for o in OTHER for i in range(len(o[3]))]


@pytest.mark.parametrize("other_case", OTHER_CASES, ids=lambda oc: f"{oc[0][0]}-{oc[1]}")
def test_other_batching_rules_match_loop(other_case):
    (name, prim, make, cases), i = other_case
    fn, examples = _examples(make, cases[i], (name, i))
    check_forward(fn, examples, "assign" if name == "assign_int" else name)


def test_every_primitive_has_a_batching_rule_and_a_test():
    covered = {s.prim for s in SPECS} | {o[1] for o in OTHER} | \
        {P.buffer_p, P.const_scalar_p}   # with const_array in "constants"
    for name, prim in P.PRIMITIVES.items():
        assert prim in BATCH_RULES, f"primitive {name} has no batching rule"
        assert prim in covered, f"primitive {name} has no batching test"
    for prim in NONDIFF_PRIMS:
        assert prim in {o[1] for o in OTHER} | {P.buffer_p, P.const_scalar_p}, prim
