"""The abstract-evaluation table and its machinery: ``ABSTRACT_RULES``, ``def_abstract``, the
registration helpers the family modules share (``register_elementwise``, ``register_ufunc``, the
reduction rule ``_reduced``), ``abstract_eval`` and the fallback that runs a primitive's
implementation on dummy operands.

May import: NumPy, ``nx_rune.tensor`` and ``nx_rune.compiler.ir``; never the family modules of
this package (they import this one).
"""
from __future__ import annotations

import warnings

import numpy as np

from nx_rune.compiler.ir import AbstractValue
from nx_rune.tensor import Tensor

ABSTRACT_RULES = {}
FALLBACK_USED = set()
# primitives that map equal-shaped operands to an output of that shape, element by element
ELEMENTWISE = set()


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


# -- dtypes and shapes several families compute --------------------------------------------------

def _real_of(dt):
    dt = np.dtype(dt)
    return np.dtype(dt.char.lower()) if dt.kind == "c" else dt


def _complex_of(dt):
    return np.result_type(dt, np.complex64)


def _reduced(avals, *, axes, keepdims):
    a = avals[0]
    axes = set(axes)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    else:
        shape = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    return AbstractValue(shape, a.dtype, a.weak_type)
