"""Shape and dtype inference: one abstract-evaluation rule per primitive.

``ABSTRACT_RULES[prim](avals, **params) -> AbstractValue`` gives the output's shape, dtype and
weak type from the operands' (``avals``: a list of :class:`AbstractValue`) without computing
anything.  ``abstract_eval(prim, avals, params)`` applies the rule.

Fallback: a primitive without a rule (one added by a user, or by a package that has not written
its rule yet) is evaluated once on zeros of the operands' shapes and dtypes (``impl`` on
concrete Tensors) and the result's shape and dtype are taken; the answer is cached per
(primitive, operand types, parameters).  ``FALLBACK_USED`` records which primitives needed it;
the coverage test (tests/test_jit_coverage.py) lists the primitives that rely on it.

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


def register_elementwise(prim, out_dtype=None):
    """``prim`` maps operands of one shape to that shape, element by element; the result has
    ``out_dtype`` (a dtype, or a function of the operands' avals), or the first operand's
    dtype."""
    def rule(avals, **params):
        a = avals[0]
        for b in avals[1:]:
            if b.shape != a.shape:
                raise ValueError(f"{prim.name}: operands must have equal shapes, got "
                                 f"{', '.join(str(x.shape) for x in avals)}")
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

# -- sorting and searching ------------------------------------------------------------------------------

def_abstract(P.sort_p, lambda avals, *, axis, descending: AbstractValue(avals[0].shape,
                                                                        avals[0].dtype))
def_abstract(P.argsort_p, lambda avals, *, axis, descending, stable, dtype: AbstractValue(
    avals[0].shape, dtype))
def_abstract(P.searchsorted_p, lambda avals, *, side, dtype: AbstractValue(avals[1].shape, dtype))
