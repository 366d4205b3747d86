"""Special functions: scipy.special's loops in the operand's dtype (gamma and error functions,
Bessel functions, the logistic functions, the regularized incomplete gamma and beta functions)
and the derivatives of the incomplete functions in their shape parameters
(``nx_rune._kernels.incomplete``).

scipy.special's loops (unary: x; binary: a and b, ternary: a, b and x of one shape and dtype)
run in the operand's dtype (a loop that only exists in float64 is cast back).  polygamma(n, x)
takes n as a float tensor of integer values (x's dtype).  gammainc_da(a, x) = dP/da,
betainc_da(a, b, x) and betainc_db(a, b, x) = dI/da, dI/db: forward-mode derivatives of the
series / continued fractions, in float64, cast back to the operands' dtype.  SciPy is imported
on first use: its import costs about half a second.

May import: NumPy, SciPy (on first use), ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune.backend._core import IMPLS, _impl, _out

_SCIPY_SPECIAL = []


def _special():
    """scipy.special, imported on first use."""
    if not _SCIPY_SPECIAL:
        import scipy.special
        _SCIPY_SPECIAL.append(scipy.special)
    return _SCIPY_SPECIAL[0]


def _in_dtype(out, dtype):
    """``out`` as an ndarray of ``dtype`` (cast back when SciPy's loop ran in another)."""
    out = np.asarray(out)
    return out if out.dtype == dtype else out.astype(dtype)


def _special_unary(name, fname):
    def impl(x):
        a = x._np()
        return _out(_in_dtype(getattr(_special(), fname)(a), a.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


def _special_binary(name, fname):
    def impl(a, b):
        an = a._np()
        return _out(_in_dtype(getattr(_special(), fname)(an, b._np()), an.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


def _special_ternary(name, fname):
    def impl(a, b, x):
        an = a._np()
        return _out(_in_dtype(getattr(_special(), fname)(an, b._np(), x._np()), an.dtype))
    impl.__name__ = f"_{name}"
    IMPLS[name] = impl


# -- scipy.special's loops -----------------------------------------------------------------------

for _name, _fname in [("lgamma", "gammaln"), ("digamma", "psi"), ("gamma", "gamma"),
                      ("erf", "erf"), ("erfc", "erfc"), ("erfinv", "erfinv"), ("ndtr", "ndtr"),
                      ("ndtri", "ndtri"), ("log_ndtr", "log_ndtr"), ("expit", "expit"),
                      ("logit", "logit"), ("i0", "i0"), ("i0e", "i0e"), ("i1", "i1"),
                      ("i1e", "i1e")]:
    _special_unary(_name, _fname)

for _name, _fname in [("polygamma", "polygamma"), ("betaln", "betaln"), ("xlogy", "xlogy"),
                      ("xlog1py", "xlog1py")]:
    _special_binary(_name, _fname)

# the regularized incomplete gamma and beta functions
_special_binary("gammainc", "gammainc")
_special_binary("gammaincc", "gammaincc")
_special_ternary("betainc", "betainc")


# -- derivatives of the incomplete functions in their shape parameters --------------------------

@_impl("gammainc_da")
def _gammainc_da(a, x):
    from nx_rune._kernels.incomplete import gammainc_da
    an = a._np()
    return _out(_in_dtype(gammainc_da(an, x._np()), an.dtype))


def _betainc_part(which):
    def impl(a, b, x):
        from nx_rune._kernels.incomplete import betainc_dab
        an = a._np()
        return _out(_in_dtype(betainc_dab(an, b._np(), x._np())[which], an.dtype))
    return impl


IMPLS["betainc_da"], IMPLS["betainc_db"] = _betainc_part(0), _betainc_part(1)
