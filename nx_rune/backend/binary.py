"""Elementwise primitives of several operands (of equal shape: the front end broadcasts them,
and promotes a binary op's operands to one dtype): one NumPy ufunc each (``_binary``: bind
calls the ufunc itself on concrete operands), pow, idiv and mod with their integer checks, the
bit shifts with their count check, where, complex.

Parameters: binary(a, b)  where(cond, x, y)  complex(re, im)

May import: NumPy, ``nx_rune._kernels.quiet`` and ``nx_rune.backend._core``.
"""
import numpy as np

from nx_rune._kernels import quiet as _quiet
from nx_rune.backend._core import IMPLS, _impl, _out


def _binary(name, ufunc):
    def impl(a, b):
        return _out(_quiet.call2(ufunc, a._np(), b._np()))
    impl.__name__ = f"_{name}"
    impl.ufunc = ufunc   # bind calls the ufunc itself on concrete operands (no Tensor round trip)
    IMPLS[name] = impl


# -- one NumPy ufunc each -------------------------------------------------------------------------

for _name, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("fdiv", np.true_divide), ("max", np.maximum), ("cmplt", np.less),
                      ("cmpne", np.not_equal), ("xor", np.bitwise_xor), ("or", np.bitwise_or),
                      ("and", np.bitwise_and),
                      ("atan2", np.arctan2), ("hypot", np.hypot), ("copysign", np.copysign),
                      ("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2),
                      ("nextafter", np.nextafter)]:
    _binary(_name, _ufunc)


# -- operands checked first: integer powers, divisors, shift counts -------------------------------

@_impl("pow")
def _pow(a, b):
    an, bn = a._np(), b._np()
    if an.dtype.kind in "iu" and bn.dtype.kind == "i" and (bn < 0).any():
        raise ValueError("power: integers to negative integer powers are not allowed")
    return _out(np.power(an, bn))


def _check_int_divisor(b, name):
    bn = b._np()
    if bn.dtype.kind in "iub" and not bn.all():
        raise ZeroDivisionError(f"{name}: integer division by zero")


@_impl("idiv")
def _idiv(a, b):
    """Floor division (NumPy's ``//``): rounds toward minus infinity."""
    _check_int_divisor(b, "floor_divide")
    return _out(np.floor_divide(a._np(), b._np()))


@_impl("mod")
def _mod(a, b):
    """Floored modulo (NumPy's ``%``): the result has the sign of the divisor."""
    _check_int_divisor(b, "mod")
    return _out(np.remainder(a._np(), b._np()))


def _check_shift(b, name):
    bn = b._np()
    if bn.dtype.kind != "i" or not bn.size:
        return bn
    # a broadcast count (x << 3) has one value: check it, not its million stride-0 copies
    smallest = bn.flat[0] if not any(bn.strides) else np.minimum.reduce(bn, axis=None)
    if smallest < 0:
        raise ValueError(f"{name}: x2 (the shift counts) must be >= 0")
    return bn


@_impl("lshift")
def _lshift(a, b):
    # NumPy gives 0 for counts >= the bit width (C would be undefined)
    return _out(np.left_shift(a._np(), _check_shift(b, "bitwise_left_shift")))


@_impl("rshift")
def _rshift(a, b):
    # arithmetic shift (floor division by 2**b): 0 or -1 for counts >= the bit width
    return _out(np.right_shift(a._np(), _check_shift(b, "bitwise_right_shift")))


# -- selection and construction -------------------------------------------------------------------

@_impl("where")
def _where(cond, x, y):
    return _out(np.where(cond._np(), x._np(), y._np()))


@_impl("complex")
def _complex(re, im):
    """re + im * 1j built exactly (no arithmetic: inf and -0.0 parts stay as they are)."""
    a = re._np()
    out = np.empty(a.shape, np.result_type(a.dtype, np.complex64))
    out.real = a
    out.imag = im._np()
    return _out(out)
