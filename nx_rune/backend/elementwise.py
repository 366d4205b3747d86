"""Unary elementwise primitives: one NumPy ufunc each (``_unary``: bind calls the ufunc itself
on concrete operands), tanh and expm1 with the standard's complex special values, real, imag,
cast, sinc_taylor, stop_gradient.

Parameters: unary(x)  cast(x, dtype)  sinc_taylor(x, k)  stop_gradient(x)

May import: NumPy, ``nx_rune._kernels.quiet``, ``nx_rune.tensor`` and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune._kernels import quiet as _quiet
from nx_rune.backend._core import IMPLS, _impl, _out
from nx_rune.tensor import RealUfunc, Tensor


def _unary(name, ufunc):
    def impl(x):
        return _out(_quiet.call1(ufunc, x._np()))
    impl.__name__ = f"_{name}"
    impl.ufunc = ufunc   # bind calls the ufunc itself on concrete operands (no Tensor round trip)
    IMPLS[name] = impl


# -- one NumPy ufunc each ----------------------------------------------------------------------
# the seed's set and the accurate loops beyond it (exp, log, cos, log1p: one NumPy loop where the
# composition through exp2/log2/sin costs precision), then the Array API / NumPy functions

for _name, _ufunc in [("neg", np.negative), ("log2", np.log2), ("exp2", np.exp2),
                      ("sin", np.sin), ("sqrt", np.sqrt), ("recip", np.reciprocal),
                      ("exp", np.exp), ("log", np.log), ("cos", np.cos),
                      ("log1p", np.log1p),
                      ("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                      ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                      ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                      ("log10", np.log10), ("abs", np.abs), ("conj", np.conjugate),
                      ("deg2rad", np.deg2rad), ("rad2deg", np.rad2deg),
                      ("floor", np.floor), ("ceil", np.ceil), ("rint", np.rint),
                      ("trunc", np.trunc), ("sign", np.sign), ("signbit", np.signbit),
                      ("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    _unary(_name, _ufunc)


# -- complex special values --------------------------------------------------------------------

@_impl("tanh")
def _tanh(x):
    xn = x._np()
    out = np.tanh(xn)
    if out.dtype.kind == "c":
        # C99 (and NumPy) give tanh(±inf + iy) = ±1 + i·0·sin(2y); the Array API fixes the
        # zero's sign to y's: ±1 ± 0j
        big = np.isinf(xn.real) & np.isfinite(xn.imag)
        if big.any():
            out = np.array(out)     # a 0-d result is a NumPy scalar: make it writable
            out.real[big] = np.copysign(1.0, xn.real[big])
            out.imag[big] = np.copysign(0.0, xn.imag[big])
    return _out(out)


# real operands: bind calls np.tanh itself (the complex special case above is this function's)
_tanh.ufunc = RealUfunc(np.tanh)


@_impl("expm1")
def _expm1(x):
    """NumPy's expm1; for complex x its non-finite and zero elements as exp(x) - 1, which
    follows C99's special cases (the standard's), where NumPy's complex expm1 gives nan parts
    (and -0.0 for expm1(-0 + 0j), where the standard has +0)."""
    a = x._np()
    out = np.asarray(np.expm1(a))
    if a.dtype.kind == "c":
        bad = ~np.isfinite(a) | (a == 0)
        if bad.any():
            out[bad] = np.exp(a[bad]) - 1
    return _out(out)


# -- dtypes and parts -------------------------------------------------------------------------

@_impl("real")
def _real(x):
    return _out(np.array(x._np().real, order="C"))


@_impl("imag")
def _imag(x):
    return _out(np.array(x._np().imag, order="C"))


@_impl("cast")
def _cast(x, *, dtype):
    return _out(x._np().astype(dtype))


# -- constants of x's shape ---------------------------------------------------------------------

@_impl("sinc_taylor")
def _sinc_taylor(x, *, k):
    """The k-th derivative of sinc (sin(pi x) / (pi x)) at 0, broadcast to x's shape: the value
    sinc and its derivatives take where x == 0 (their formulas divide by x)."""
    c = 0.0 if k % 2 else (-1.0) ** (k // 2) * np.pi ** k / (k + 1)
    return Tensor._broadcast_scalar(c, x.dtype, x.shape)


# -- stop_gradient ---------------------------------------------------------------------------------
# The identity: its derivative rules are zero, and jit's trace records it like any primitive.

@_impl("stop_gradient")
def _stop_gradient(x):
    return x
