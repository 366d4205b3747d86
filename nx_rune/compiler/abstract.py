"""Shape and dtype inference: one abstract-evaluation rule per primitive.

``ABSTRACT_RULES[prim](avals, **params) -> AbstractValue`` gives the output's shape, dtype and
weak type from the operands' (``avals``: a list of :class:`AbstractValue`) without computing
anything.  ``abstract_eval(prim, avals, params)`` applies the rule.

Fallback: a primitive without a rule (one added by a user, or by a package that has not written
its rule yet) is evaluated once on dummy operands of the operands' shapes and dtypes (zeros,
else ones, else identity matrices: ``impl`` on concrete Tensors) and the result's shape and
dtype are taken; the answer is cached per (primitive, operand types, parameters).
``FALLBACK_USED`` records which primitives needed it; the coverage test
(tests/test_jit_specs.py::test_every_primitive_has_an_abstract_rule) lists the primitives of
the package that rely on it (none at present: every declared primitive has a rule).

Weak types (values from Python scalars, as in JAX): an elementwise result is weakly typed when
every operand is, movement ops and reductions keep their operand's; every other result is
strongly typed.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.ir import AbstractValue
from nx_rune.tensor import Tensor

__all__ = ["ABSTRACT_RULES", "abstract_eval", "FALLBACK_USED", "ELEMENTWISE", "def_abstract",
           "register_elementwise"]

ABSTRACT_RULES = {}
FALLBACK_USED = set()
# primitives that map equal-shaped operands to an output of that shape, element by element
ELEMENTWISE = set()
_BOOL = np.dtype(bool)


def def_abstract(prim, rule=None):
    """Register ``rule(avals, **params) -> AbstractValue`` for ``prim`` (usable as a
    decorator)."""
    if rule is None:
        return lambda fn: def_abstract(prim, fn)
    ABSTRACT_RULES[prim] = rule
    return rule


def _weak(avals):
    return bool(avals) and all(a.weak_type for a in avals)


def _equal_shapes(prim, avals):
    """The first operand's aval, after checking that every operand has its shape."""
    a = avals[0]
    for b in avals[1:]:
        if b.shape != a.shape:
            raise ValueError(f"{prim.name}: operands must have equal shapes, got "
                             f"{', '.join(str(x.shape) for x in avals)}")
    return a


def register_elementwise(prim, out_dtype=None):
    """``prim`` maps operands of one shape to that shape, element by element; the result has
    ``out_dtype`` (a dtype, or a function of the operands' avals), or the first operand's
    dtype."""
    def rule(avals, **params):
        a = _equal_shapes(prim, avals)
        if out_dtype is None:
            # operands of different dtypes (some derivative rules mix real and complex): the
            # implementation's NumPy promotion
            dt = a.dtype if all(b.dtype == a.dtype for b in avals[1:]) else \
                np.result_type(*[b.dtype for b in avals])
        elif callable(out_dtype):
            dt = out_dtype(avals, **params)
        else:
            dt = out_dtype
        return AbstractValue(a.shape, dt, _weak(avals) and out_dtype is None)
    ABSTRACT_RULES[prim] = rule
    ELEMENTWISE.add(prim)
    return rule


def abstract_eval(prim, avals, params) -> AbstractValue:
    """The abstract output of ``prim`` applied to operands of ``avals`` with ``params``."""
    rule = ABSTRACT_RULES.get(prim)
    if rule is not None:
        return rule(avals, **params)
    return _fallback(prim, avals, params)


_FALLBACK_CACHE = {}


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, np.ndarray):
        return ("ndarray", v.shape, v.dtype.str, v.tobytes())
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return v


def _filled(aval, fill):
    """An array of ``aval``'s shape and dtype: all ``fill``, or identity matrices in its last
    two axes for "eye" (operands of decompositions that reject zeros and ones)."""
    if fill != "eye":
        return np.full(aval.shape, fill, aval.dtype)
    if len(aval.shape) < 2:
        return np.ones(aval.shape, aval.dtype)
    eye = np.eye(aval.shape[-2], aval.shape[-1], dtype=aval.dtype)
    return np.ascontiguousarray(np.broadcast_to(eye, aval.shape))


def _fallback(prim, avals, params):
    impl = prim.impl
    if impl is None:
        raise NotImplementedError(f"primitive {prim.name} has neither an implementation nor an "
                                  f"abstract-evaluation rule; register one in "
                                  f"nx_rune.compiler.abstract.ABSTRACT_RULES")
    FALLBACK_USED.add(prim)
    key = (prim, tuple((a.shape, a.dtype) for a in avals), _freeze(params))
    out = _FALLBACK_CACHE.get(key)
    if out is None:
        err = None
        for fill in (0, 1, "eye"):
            args = [Tensor._wrap(_filled(a, fill)) for a in avals]
            try:
                # dummy values: their NumPy warnings (casts, invalid values) mean nothing
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    res = impl(*args, **params)
                break
            except Exception as e:  # noqa: BLE001 - try the next fill where one is invalid
                err = e
        else:
            raise err
        out = AbstractValue(res.shape, res.dtype)
        _FALLBACK_CACHE[key] = out
    return out


# -- memory and constants ------------------------------------------------------------------------

def_abstract(P.buffer_p, lambda avals, *, shape, dtype: AbstractValue(shape, dtype))
def_abstract(P.const_scalar_p, lambda avals, *, value, dtype: AbstractValue((), dtype))
def_abstract(P.const_array_p, lambda avals, *, array: AbstractValue(np.shape(array),
                                                                     np.asarray(array).dtype))
for _p in (P.contiguous_p, P.copy_p):
    def_abstract(_p, lambda avals: avals[0])
def_abstract(P.assign_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.stop_gradient_p, lambda avals: avals[0])

# -- elementwise ----------------------------------------------------------------------------------

for _p in (P.neg_p, P.log2_p, P.exp2_p, P.sin_p, P.sqrt_p, P.recip_p, P.exp_p, P.log_p, P.cos_p,
           P.tanh_p, P.log1p_p, P.expm1_p, P.add_p, P.mul_p, P.fdiv_p, P.pow_p, P.max_p,
           P.idiv_p, P.mod_p, P.xor_p, P.or_p, P.and_p):
    register_elementwise(_p)
for _p in (P.cmplt_p, P.cmpne_p):
    register_elementwise(_p, _BOOL)
register_elementwise(P.where_p, lambda avals: avals[1].dtype)
_where_checked = ABSTRACT_RULES[P.where_p]
ABSTRACT_RULES[P.where_p] = lambda avals: AbstractValue(_where_checked(avals).shape,
                                                        avals[1].dtype, _weak(avals[1:]))
register_elementwise(P.cast_p, lambda avals, *, dtype: np.dtype(dtype))
register_elementwise(P.clip_p)


# -- movement ---------------------------------------------------------------------------------------

def _resolve(shape, size):
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape = tuple(size // known if s == -1 and known else (0 if s == -1 else s)
                      for s in shape)
    return shape


def_abstract(P.reshape_p, lambda avals, *, shape: AbstractValue(
    _resolve(shape, avals[0].size), avals[0].dtype, avals[0].weak_type))
def_abstract(P.expand_p, lambda avals, *, shape: AbstractValue(shape, avals[0].dtype,
                                                               avals[0].weak_type))
def_abstract(P.permute_p, lambda avals, *, axes: AbstractValue(
    tuple(avals[0].shape[a] for a in axes), avals[0].dtype, avals[0].weak_type))
def_abstract(P.pad_p, lambda avals, *, config, fill: AbstractValue(
    tuple(d + b + a for d, (b, a) in zip(avals[0].shape, config)), avals[0].dtype,
    avals[0].weak_type))
def_abstract(P.shrink_p, lambda avals, *, limits: AbstractValue(
    tuple(b - a for a, b in limits), avals[0].dtype, avals[0].weak_type))
def_abstract(P.flip_p, lambda avals, *, axes: avals[0])
def_abstract(P.as_strided_p, lambda avals, *, shape, strides, offset: AbstractValue(
    shape, avals[0].dtype, avals[0].weak_type))


@def_abstract(P.cat_p)
def _cat(avals, *, axis):
    shape = list(avals[0].shape)
    shape[axis] = sum(a.shape[axis] for a in avals)
    return AbstractValue(shape, avals[0].dtype, _weak(avals))


# -- reductions and scans -----------------------------------------------------------------------------

def _reduced(avals, *, axes, keepdims):
    a = avals[0]
    axes = set(axes)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    else:
        shape = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    return AbstractValue(shape, a.dtype, a.weak_type)


for _p in (P.reduce_sum_p, P.reduce_max_p, P.reduce_prod_p, P.reduce_nanmax_p,
           P.reduce_nanmin_p):
    def_abstract(_p, _reduced)


@def_abstract(P.argmax_p)
def _argmax(avals, *, axis, keepdims):
    a = avals[0]
    if axis is None:
        shape = (1,) * a.ndim if keepdims else ()
    else:
        ax = axis % a.ndim if a.ndim else 0
        shape = tuple(1 if i == ax else d for i, d in enumerate(a.shape)) if keepdims else \
            tuple(d for i, d in enumerate(a.shape) if i != ax)
    return AbstractValue(shape, np.int32)


def_abstract(P.associative_scan_p, lambda avals, *, axis, op: avals[0])


# -- indexing, linear algebra, windows, random ------------------------------------------------------

@def_abstract(P.gather_p)
def _gather(avals, *, axis):
    data, idx = avals
    if axis is None:
        return AbstractValue(idx.shape, data.dtype)
    shape = tuple(i if d == axis else (a if i == 1 else i)
                  for d, (a, i) in enumerate(zip(data.shape, idx.shape)))
    return AbstractValue(shape, data.dtype)


def_abstract(P.scatter_p, lambda avals, *, axis, mode: AbstractValue(avals[0].shape,
                                                                     avals[0].dtype))


@def_abstract(P.matmul_p)
def _matmul(avals):
    a, b = avals
    sa, sb = a.shape, b.shape
    if len(sa) == 1 and len(sb) == 1:
        return AbstractValue((), a.dtype)
    a2 = (1,) + sa if len(sa) == 1 else sa
    b2 = sb + (1,) if len(sb) == 1 else sb
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    shape = tuple(batch) + (a2[-2], b2[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    return AbstractValue(shape, a.dtype)


def _window_positions(sizes, kernel_size, stride, dilation, padding):
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, s, d, p in zip(sizes, kernel_size, stride, dilation, padding))


@def_abstract(P.unfold_p)
def _unfold(avals, *, kernel_size, stride, dilation, padding):
    x = avals[0]
    pos = _window_positions(x.shape[2:], kernel_size, stride, dilation, padding)
    return AbstractValue((x.shape[0], x.shape[1] * math.prod(kernel_size), math.prod(pos)),
                         x.dtype)


@def_abstract(P.fold_p)
def _fold(avals, *, output_size, kernel_size, stride, dilation, padding):
    c = avals[0]
    return AbstractValue((c.shape[0], c.shape[1] // math.prod(kernel_size)) + tuple(output_size),
                         c.dtype)


def_abstract(P.threefry_p, lambda avals: AbstractValue(avals[1].shape, np.uint32))


def _random_key(prim, key):
    if key.dtype != np.uint32 or not key.shape or key.shape[-1] != 2:
        raise TypeError(f"{prim.name}: key must be a uint32 array of shape (*batch, 2), got "
                        f"{key.dtype} of shape {key.shape}")
    return key.shape[:-1]


@def_abstract(P.threefry_bits_p)
def _threefry_bits(avals, *, nbits, shape):
    return AbstractValue(_random_key(P.threefry_bits_p, avals[0]) + tuple(shape),
                         np.dtype(f"uint{nbits}"))


@def_abstract(P.threefry_sample_p)
def _threefry_sample(avals, *, dist, shape, dtype, params):
    return AbstractValue(_random_key(P.threefry_sample_p, avals[0]) + tuple(shape),
                         np.dtype(dtype))

# -- sorting and searching ------------------------------------------------------------------------------

def_abstract(P.sort_p, lambda avals, *, axis, descending: AbstractValue(avals[0].shape,
                                                                        avals[0].dtype))
def_abstract(P.argsort_p, lambda avals, *, axis, descending, stable, dtype: AbstractValue(
    avals[0].shape, dtype))
def_abstract(P.searchsorted_p, lambda avals, *, side, dtype: AbstractValue(avals[1].shape, dtype))


# -- the primitives declared after the compiler (WP-elementwise, WP-fft-special, WP-linalg) ------
# Their implementations are NumPy ufuncs, scipy.special loops cast back to the operand's dtype,
# NumPy's FFTs and LAPACK wrappers: the output types below are those implementations' (checked
# against them by tests/test_jit_specs.py::test_abstract_rules_match_the_implementations).

_UFUNC_DTYPES = {}


def _ufunc_dtype(uf, dts):
    """The output dtype of NumPy ufunc ``uf`` on operands of dtypes ``dts`` (its own type
    resolution, cached)."""
    key = (uf, dts)
    out = _UFUNC_DTYPES.get(key)
    if out is None:
        out = _UFUNC_DTYPES[key] = uf.resolve_dtypes(dts + (None,))[-1]
    return out


def register_ufunc(prim, uf):
    """``prim`` is NumPy ufunc ``uf`` applied to operands of one shape (weakly typed when every
    operand is and the dtype is kept, as the other elementwise operations)."""
    def rule(avals, **params):
        a = _equal_shapes(prim, avals)
        dt = _ufunc_dtype(uf, tuple(x.dtype for x in avals))
        return AbstractValue(a.shape, dt, _weak(avals) and dt == a.dtype)
    ABSTRACT_RULES[prim] = rule
    ELEMENTWISE.add(prim)
    return rule


for _name, _uf in [("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                   ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                   ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                   ("log10", np.log10), ("abs", np.abs), ("conj", np.conjugate),
                   ("deg2rad", np.deg2rad), ("rad2deg", np.rad2deg), ("floor", np.floor),
                   ("ceil", np.ceil), ("rint", np.rint), ("trunc", np.trunc), ("sign", np.sign),
                   ("signbit", np.signbit), ("isnan", np.isnan), ("isinf", np.isinf),
                   ("isfinite", np.isfinite), ("atan2", np.arctan2), ("hypot", np.hypot),
                   ("copysign", np.copysign), ("logaddexp", np.logaddexp),
                   ("logaddexp2", np.logaddexp2), ("nextafter", np.nextafter),
                   ("lshift", np.left_shift), ("rshift", np.right_shift)]:
    register_ufunc(getattr(P, _name + "_p"), _uf)


def _real_of(dt):
    dt = np.dtype(dt)
    return np.dtype(dt.char.lower()) if dt.kind == "c" else dt


for _p in (P.real_p, P.imag_p):
    register_elementwise(_p, lambda avals: _real_of(avals[0].dtype))
register_elementwise(P.complex_p, lambda avals: np.result_type(avals[0].dtype, np.complex64))
# sinc_taylor(x, k): a constant of x's shape and dtype
def_abstract(P.sinc_taylor_p, lambda avals, *, k: AbstractValue(avals[0].shape, avals[0].dtype))
ELEMENTWISE.add(P.sinc_taylor_p)

# scipy.special loops, in the (first) operand's dtype
for _name in ("lgamma", "digamma", "gamma", "erf", "erfc", "erfinv", "ndtr", "ndtri",
              "log_ndtr", "expit", "logit", "i0", "i0e", "i1", "i1e", "polygamma", "betaln",
              "xlogy", "xlog1py"):
    register_elementwise(getattr(P, _name + "_p"), lambda avals: avals[0].dtype)


def _complex_of(dt):
    return np.result_type(dt, np.complex64)


def_abstract(P.fft_p, lambda avals, *, axes, inverse, norm: AbstractValue(
    avals[0].shape, _complex_of(avals[0].dtype)))


@def_abstract(P.rfft_p)
def _rfft(avals, *, axes, norm):
    shape = list(avals[0].shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return AbstractValue(shape, _complex_of(avals[0].dtype))


@def_abstract(P.irfft_p)
def _irfft(avals, *, axes, n, norm):
    shape = list(avals[0].shape)
    shape[axes[-1]] = n
    return AbstractValue(shape, _real_of(avals[0].dtype))


# linear algebra: batched over the leading axes; several results packed along a last axis
def_abstract(P.cholesky_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.inv_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.triangular_solve_p, lambda avals, *, lower, trans, unit_diagonal: AbstractValue(
    avals[1].shape, avals[1].dtype))


@def_abstract(P.solve_p)
def _solve(avals):
    a, b = avals
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return AbstractValue(tuple(batch) + tuple(b.shape[-2:]), np.result_type(a.dtype, b.dtype))


def_abstract(P.slogdet_p, lambda avals: AbstractValue(avals[0].shape[:-2] + (2,),
                                                      avals[0].dtype))


@def_abstract(P.eigh_p)
def _eigh(avals, *, lower):
    a = avals[0]
    n = a.shape[-1]
    return AbstractValue(a.shape[:-2] + (n + n * n,), a.dtype)


def_abstract(P.eigvalsh_p, lambda avals, *, lower: AbstractValue(
    avals[0].shape[:-1], _real_of(avals[0].dtype)))


@def_abstract(P.svd_p)
def _svd(avals, *, full_matrices):
    a = avals[0]
    m, n = a.shape[-2:]
    k = min(m, n)
    u, vh = (m * m, n * n) if full_matrices else (m * k, k * n)
    return AbstractValue(a.shape[:-2] + (u + k + vh,), a.dtype)


def_abstract(P.svdvals_p, lambda avals: AbstractValue(
    avals[0].shape[:-2] + (min(avals[0].shape[-2:]),), _real_of(avals[0].dtype)))


@def_abstract(P.qr_p)
def _qr(avals, *, mode):
    a = avals[0]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "complete":
        size = m * m + m * n
    elif mode == "reduced":
        size = m * k + k * n
    else:
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return AbstractValue(a.shape[:-2] + (size,), a.dtype)


def_abstract(P.pinv_p, lambda avals, *, rtol: AbstractValue(
    avals[0].shape[:-2] + avals[0].shape[-2:][::-1], avals[0].dtype))


@def_abstract(P.lstsq_p)
def _lstsq(avals, *, rcond):
    a, b = avals
    m, n = a.shape
    k = b.shape[1]
    return AbstractValue((n * k + min(m, n),), np.result_type(a.dtype, b.dtype))


# -- WP-linalg-perf's primitives: the fused Euclidean norm, the LU residual and its inverse, the
# Cholesky derivative, the incomplete gamma and beta functions (elementwise in their operands)
def_abstract(P.norm2_p, _reduced)


@def_abstract(P.lu_factor_p)
def _lu_factor(avals):
    a = avals[0]
    n = a.shape[-1]
    return AbstractValue(a.shape[:-2] + (n * n + n,), a.dtype)


def_abstract(P.lu_inverse_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.cholesky_grad_p, lambda avals: AbstractValue(
    avals[0].shape, np.result_type(avals[0].dtype, avals[1].dtype)))
for _p in (P.gammainc_p, P.gammaincc_p, P.gammainc_da_p, P.betainc_p, P.betainc_da_p,
           P.betainc_db_p):
    register_elementwise(_p, lambda avals: np.result_type(*[a.dtype for a in avals]))

# -- WP-programs' primitives: a - b (one ufunc), roll along one axis (same shape and dtype)
register_elementwise(P.sub_p)
def_abstract(P.roll_p, lambda avals, *, shift, axis: avals[0])

# -- WP-linalg-vjp's primitives: the determinant from the LU factorization, fused derivatives
def_abstract(P.lu_det_p, lambda avals, *, part: AbstractValue(
    avals[0].shape[:-2], _real_of(avals[0].dtype) if part == "logabsdet" else avals[0].dtype))
def_abstract(P.det_grad_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.norm2_grad_p, lambda avals, *, axes, keepdims: AbstractValue(avals[0].shape,
                                                                            avals[0].dtype))
def_abstract(P.triangular_solve_grad_p, lambda avals, *, lower, trans, unit_diagonal:
             AbstractValue(avals[0].shape[:-1] + (avals[0].shape[-2],), avals[0].dtype))
def_abstract(P.cho_solve_p, lambda avals, *, lower: AbstractValue(avals[1].shape, avals[1].dtype))
def_abstract(P.cho_solve_grad_p, lambda avals, *, lower: AbstractValue(avals[0].shape,
                                                                       avals[0].dtype))
from nx_rune.backend import power_program  # noqa: E402  (the products of binary powering)

def_abstract(P.matrix_power_parts_p, lambda avals, *, n: AbstractValue(
    avals[0].shape[:-2] + (len(power_program(n)[0]),) + avals[0].shape[-2:], avals[0].dtype))
def_abstract(P.matrix_power_p, lambda avals, *, n: AbstractValue(avals[0].shape,
                                                                 avals[0].dtype))
