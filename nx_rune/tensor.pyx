# cython: boundscheck=True, wraparound=True, cdivision=False, binding=True
"""Tensor = Buffer + View + dtype, and ``ArrayBase``, the operators shared with tracers.

A Tensor is an n-d value.  Its memory is a :class:`Buffer` (its own, or an ndarray's that it
wraps without copying) seen through a :class:`View`.  Operations never modify their operands;
only ``x[idx] = v``, the in-place operators (``x += y``, ...) and ``nx.assign`` write into a
Tensor's memory, in place, so that every view of it sees the write (as in NumPy).  On an
autodiff tracer these are functional: the tracer object is rebound to the updated value.

Operators and methods all call the front end (the ``nx_rune.frontend`` package, handed over by
``install_frontend`` when it loads: it imports this module, so this module cannot import it),
so the same code runs on Tensors and on autodiff tracers, which subclass :class:`ArrayBase`
too.

Both are Array API array objects (``device``, ``to_device``, ``mT``, ``__array_namespace__``);
the one device is the CPU (:data:`CPU`).  NumPy's functions applied to a concrete Tensor
(``np.sum(t)``, ``np.concatenate([t, a])``) run NumPy on its values and return NumPy results
(``Tensor.__array_function__``).  Tracers do not take that path: NumPy's reductions call their
methods (``np.sum(u)`` is ``u.sum()``, still traced), and a NumPy function given a Tensor and a
tracer together raises TypeError.

The module is this file and the three it includes: ``tensor_device.pxi`` (the device),
``tensor_fastpath.pxi`` (the operators' eager fast path) and ``tensor_bind.pxi`` (``bind``, the
dispatch of every primitive).
"""
import contextvars
import sys
from types import MemberDescriptorType

import numpy as np

cimport numpy as cnp
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.contextvars cimport get_value as _get_value

from libc.string cimport strchr
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM


cdef extern from "Python.h":
    object PyObject_Call(object callable, object args, PyObject* kwargs)
    Py_ssize_t PyDict_GET_SIZE(object d)
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    ctypedef struct PyTypeObject:
        void* tp_getattro
    void* PyObject_GenericGetAttr

cnp.import_array()

from nx_rune import dtypes
from nx_rune._kernels.buffer import Buffer, buffer_from_ndarray
from nx_rune._kernels.buffer cimport _addressable
from nx_rune._kernels.quiet import call1 as _call1, call2 as _call2
from nx_rune._kernels.ufdirect cimport direct1, direct2, direct_scalar
from nx_rune._kernels.view import View, c_strides, materialize
from nx_rune.writes import EPOCH

__all__ = ["ArrayBase", "Tensor", "Device", "CPU", "check_device", "is_array",
           "install_frontend", "SUPPORTED_API_VERSIONS", "bind", "unary_op", "binary_op_fast",
           "ALIAS_HOOK", "DISPATCH", "fast_transpose", "fast_reshape",
           "install_operator_primitives", "call_impl", "RealUfunc", "install_placement"]

# versions of the Array API standard that ``x.__array_namespace__(api_version=...)`` accepts
# (each later one extends the earlier ones; nx_rune implements the newest)
SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


# the Device class, CPU and check_device, in a file of their own (a textual include)
include "tensor_device.pxi"


def _no_out(out, method, keepdims=False):
    if not isinstance(keepdims, (bool, np.bool_, int)):
        # x.sum(0, np.float64): NumPy's second positional argument is dtype, nx_rune's keepdims
        raise TypeError(f"{method}: keepdims must be a bool, got {keepdims!r} (dtype and out "
                        f"are keyword arguments: x.{method}(axis, dtype=...))")
    if out is not None:
        raise TypeError(f"{method}: out= must be None (nx_rune returns a new tensor; assign "
                        f"the result instead), got {type(out).__name__}")


def _check_method_dtype(dtype, method):
    if isinstance(dtype, (bool, np.bool_)):
        raise TypeError(f"{method}: dtype must be a dtype, got {dtype!r}")
    return dtypes.check_dtype(dtype)


cdef class ArrayBase:
    """Operators and methods of every array-like value (Tensor and autodiff tracers).

    Subclasses provide ``shape`` and ``dtype``.
    """
    __array_priority__ = 1000

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__name__}' (arrays compare "
                        f"elementwise)")

    @property
    def ndim(self):
        return len(self.shape)

    def block_until_ready(self):
        """``self``: nx_rune computes on the CPU synchronously, so a value is ready when it
        exists (JAX's ``Array.block_until_ready``, kept for code that times or syncs)."""
        return self

    def _concrete_tensor(self):
        """The concrete Tensor holding this value, or None when it is not known (a value traced
        abstractly).  Internal code that needs values (indices, masks) asks here, explicitly:
        ``__array__`` of a traced value refuses."""
        return None

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def T(self):
        return _fe.transpose(self)

    @property
    def at(self):
        """JAX-style functional updates: ``x.at[idx].set(v)``, ``.add``, ``.multiply``, ..."""
        return _fe.IndexUpdateHelper(self)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index):
        return _fe.getitem(self, index)

    def __setitem__(self, index, value):
        """``x[index] = value`` (every index ``x[index]`` accepts; value broadcast to the
        indexed shape and cast to x's dtype as NumPy's setitem does, complex into real
        refused).  In place on a Tensor; on a tracer the tracer is rebound to
        ``x.at[index].set(value)``."""
        _fe.setitem(self, index, value)

    # in-place operators: in place on a Tensor (the result must cast to x's dtype with NumPy's
    # same_kind rule and keep x's shape), rebinding on a tracer
    def __iadd__(self, o): return _fe.inplace_op(self, o, _fe.add, "+=")
    def __isub__(self, o): return _fe.inplace_op(self, o, _fe.subtract, "-=")
    def __imul__(self, o): return _fe.inplace_op(self, o, _fe.multiply, "*=")
    def __itruediv__(self, o): return _fe.inplace_op(self, o, _fe.divide, "/=")
    def __ifloordiv__(self, o): return _fe.inplace_op(self, o, _fe.floor_divide, "//=")
    def __imod__(self, o): return _fe.inplace_op(self, o, _fe.mod, "%=")
    def __ipow__(self, o): return _fe.inplace_op(self, o, _fe.power, "**=")
    def __imatmul__(self, o): return _fe.inplace_op(self, o, _fe.matmul, "@=")
    def __iand__(self, o): return _fe.inplace_op(self, o, _fe.bitwise_and, "&=")
    def __ior__(self, o): return _fe.inplace_op(self, o, _fe.bitwise_or, "|=")
    def __ixor__(self, o): return _fe.inplace_op(self, o, _fe.bitwise_xor, "^=")
    def __ilshift__(self, o): return _fe.inplace_op(self, o, _fe.bitwise_left_shift, "<<=")
    def __irshift__(self, o): return _fe.inplace_op(self, o, _fe.bitwise_right_shift, ">>=")

    # arithmetic (+ - * /: the primitive at once when the operands need no promotion or
    # broadcasting, see binary_op_fast; else the front end)
    def __add__(self, o):
        r = _binary_any(self, o, _np_add, _ADD_P, _ALL_KINDS)
        return _fe.add(self, o) if r is None else r

    def __radd__(self, o):
        r = _binary_any(o, self, _np_add, _ADD_P, _ALL_KINDS)
        return _fe.add(o, self) if r is None else r

    def __sub__(self, o):
        r = _binary_any(self, o, _np_subtract, _SUB_P, _NUMBER_KINDS)
        return _fe.subtract(self, o) if r is None else r

    def __rsub__(self, o):
        r = _binary_any(o, self, _np_subtract, _SUB_P, _NUMBER_KINDS)
        return _fe.subtract(o, self) if r is None else r

    def __mul__(self, o):
        r = _binary_any(self, o, _np_multiply, _MUL_P, _ALL_KINDS)
        return _fe.multiply(self, o) if r is None else r

    def __rmul__(self, o):
        r = _binary_any(o, self, _np_multiply, _MUL_P, _ALL_KINDS)
        return _fe.multiply(o, self) if r is None else r

    def __truediv__(self, o):
        r = _binary_any(self, o, _np_divide, _DIV_P, _INEXACT_KINDS)
        return _fe.divide(self, o) if r is None else r

    def __rtruediv__(self, o):
        r = _binary_any(o, self, _np_divide, _DIV_P, _INEXACT_KINDS)
        return _fe.divide(o, self) if r is None else r

    def __floordiv__(self, o): return _fe.floor_divide(self, o)
    def __rfloordiv__(self, o): return _fe.floor_divide(o, self)
    def __mod__(self, o): return _fe.mod(self, o)
    def __rmod__(self, o): return _fe.mod(o, self)
    def __pow__(self, o): return _fe.power(self, o)
    def __rpow__(self, o): return _fe.power(o, self)
    def __matmul__(self, o): return _fe.matmul(self, o)
    def __rmatmul__(self, o): return _fe.matmul(o, self)
    def __neg__(self): return _fe.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _fe.abs(self)
    def __invert__(self): return _fe.bitwise_not(self)
    def __and__(self, o): return _fe.bitwise_and(self, o)
    def __rand__(self, o): return _fe.bitwise_and(o, self)
    def __or__(self, o): return _fe.bitwise_or(self, o)
    def __ror__(self, o): return _fe.bitwise_or(o, self)
    def __xor__(self, o): return _fe.bitwise_xor(self, o)
    def __rxor__(self, o): return _fe.bitwise_xor(o, self)
    def __lshift__(self, o): return _fe.bitwise_left_shift(self, o)
    def __rlshift__(self, o): return _fe.bitwise_left_shift(o, self)
    def __rshift__(self, o): return _fe.bitwise_right_shift(self, o)
    def __rrshift__(self, o): return _fe.bitwise_right_shift(o, self)
    # comparisons
    def __lt__(self, o): return _fe.less(self, o)
    def __le__(self, o): return _fe.less_equal(self, o)
    def __gt__(self, o): return _fe.greater(self, o)
    def __ge__(self, o): return _fe.greater_equal(self, o)
    def __eq__(self, o): return _fe.equal(self, o)
    def __ne__(self, o): return _fe.not_equal(self, o)

    # methods mirroring functions
    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return _fe.reshape(self, shape)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return _fe.transpose(self, axes or None)

    def astype(self, dtype, *, copy=True, device=None):
        """``self`` as ``dtype`` (a new tensor even when the dtype matches, unless
        ``copy=False``), as ``nx.astype``."""
        return _fe.astype(self, dtype, copy=copy, device=device)

    def _as(self, dtype, method):
        """``self`` cast for a reduction's ``dtype=`` (None: as it is)."""
        if dtype is None:
            return self
        dt = _check_method_dtype(dtype, method)
        return self if dt == self.dtype else _fe.astype(self, dt, copy=False)

    # Reductions: (axis, keepdims) by position, as nx_rune has always had them, and NumPy's
    # other arguments by keyword, which is how NumPy's own functions (np.sum(x),
    # np.mean(x, axis=0), np.var(x, ddof=1), ...) pass them to an array's methods;
    # ``dtype=`` casts before reducing (the Array API standard's rule), out= must be None.
    def sum(self, axis=None, keepdims=False, *, dtype=None, out=None):
        _no_out(out, "sum", keepdims)
        x = self._as(dtype, "sum")   # and accumulate in that dtype, as NumPy
        dt = None if dtype is None else x.dtype
        return _fe.sum(x, axis=axis, keepdims=keepdims, dtype=dt)

    def prod(self, axis=None, keepdims=False, *, dtype=None, out=None):
        _no_out(out, "prod", keepdims)
        x = self._as(dtype, "prod")   # and accumulate in that dtype, as NumPy
        dt = None if dtype is None else x.dtype
        return _fe.prod(x, axis=axis, keepdims=keepdims, dtype=dt)

    def mean(self, axis=None, keepdims=False, *, dtype=None, out=None):
        _no_out(out, "mean", keepdims)
        return _fe.mean(self._as(dtype, "mean"), axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False, *, out=None):
        _no_out(out, "max", keepdims)
        return _fe.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False, *, out=None):
        _no_out(out, "min", keepdims)
        return _fe.min(self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, keepdims=False, *, ddof=0, correction=None, dtype=None, out=None):
        _no_out(out, "var", keepdims)
        return _fe.var(self._as(dtype, "var"), axis=axis, ddof=_ddof(ddof, correction, "var"),
                       keepdims=keepdims)

    def std(self, axis=None, keepdims=False, *, ddof=0, correction=None, dtype=None, out=None):
        _no_out(out, "std", keepdims)
        return _fe.std(self._as(dtype, "std"), axis=axis, ddof=_ddof(ddof, correction, "std"),
                       keepdims=keepdims)

    def all(self, axis=None, keepdims=False, *, out=None):
        _no_out(out, "all", keepdims)
        return _fe.all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False, *, out=None):
        _no_out(out, "any", keepdims)
        return _fe.any(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False, *, out=None):
        _no_out(out, "argmax", keepdims)
        return _fe.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False, *, out=None):
        _no_out(out, "argmin", keepdims)
        return _fe.argmin(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        _no_out(out, "cumsum")
        x = self._as(dtype, "cumsum")   # and accumulate in that dtype, as NumPy
        dt = None if dtype is None else x.dtype
        return _fe.cumsum(x, axis=axis, dtype=dt)

    def cumprod(self, axis=None, dtype=None, out=None):
        _no_out(out, "cumprod")
        x = self._as(dtype, "cumprod")   # and accumulate in that dtype, as NumPy
        dt = None if dtype is None else x.dtype
        return _fe.cumprod(x, axis=axis, dtype=dt)

    def clip(self, min=None, max=None, out=None):
        _no_out(out, "clip")
        return _fe.clip(self, min, max)

    def round(self, decimals=0, out=None):
        _no_out(out, "round")
        return _fe.round(self) if decimals == 0 else _fe.round(self, decimals)

    def sort(self, axis=-1, *, descending=False, stable=True):
        """A sorted copy (as JAX's ``x.sort()``; NumPy's sorts in place and returns None)."""
        return _fe.sort(self, axis=axis, descending=descending, stable=stable)

    def argsort(self, axis=-1, *, descending=False, stable=True):
        return _fe.argsort(self, axis=axis, descending=descending, stable=stable)

    def nonzero(self, *, size=None, fill_value=None):
        return _fe.nonzero(self, size=size, fill_value=fill_value)

    def take(self, indices, axis=None, out=None, mode=None, *, fill_value=None):
        return _fe.take(self, indices, axis=axis, out=out, mode=mode, fill_value=fill_value)

    def repeat(self, repeats, axis=None):
        return _fe.repeat(self, repeats, axis=axis)

    def swapaxes(self, axis1, axis2):
        return _fe.swapaxes(self, axis1, axis2)

    def conj(self):
        return _fe.conj(self)

    def conjugate(self):
        return _fe.conj(self)

    @property
    def real(self):
        return _fe.real(self)

    @property
    def imag(self):
        return _fe.imag(self)

    def flatten(self): return _fe.copy(_fe.reshape(self, (-1,)))  # a copy, as NumPy's
    def ravel(self): return _fe.ravel(self)
    def squeeze(self, axis=None): return _fe.squeeze(self, axis)
    def copy(self): return _fe.copy(self)
    def dot(self, o): return _fe.dot(self, o)

    # -- the Array API array object ---------------------------------------------------------
    @property
    def device(self):
        """The device the values live on: always the CPU (``Device('cpu')``)."""
        return CPU

    def to_device(self, device, /, *, stream=None):
        """``self`` on ``device``: the CPU is the only device, so this is ``self``; ValueError
        for another device or a ``stream``."""
        check_device(device)
        if stream is not None:
            raise ValueError(f"stream: CPU arrays have no streams; must be None, got {stream!r}")
        return self

    # -- JAX's placement attributes: one device holds all of the array (nx_rune.sharding) --
    def devices(self):
        """The devices holding the values: ``{CpuDevice(id=0)}`` (JAX's ``Array.devices()``)."""
        return _placement.array_devices(self)

    sharding = property(lambda self: _placement.array_sharding(self), doc="How the values are "
                        "laid out: ``SingleDeviceSharding`` of the CPU (JAX's ``x.sharding``).")
    addressable_shards = global_shards = property(
        lambda self: _placement.array_shards(self), doc="One ``Shard``: the whole array.")
    is_fully_addressable = is_fully_replicated = property(
        lambda self: True, doc="True: one device (of this process) holds all of the array.")

    def addressable_data(self, index):
        """The values of addressable shard ``index`` (only 0: the array itself)."""
        return _placement.array_data(self, index)

    @property
    def mT(self):
        """The matrix transpose: the last two axes swapped (needs ndim >= 2)."""
        if self.ndim < 2:
            raise ValueError(f"mT: needs a tensor of at least 2 dimensions, got shape "
                             f"{self.shape}")
        return _fe.swapaxes(self, -2, -1)

    def __array_namespace__(self, /, *, api_version=None):
        """The Array API namespace of this array: the ``nx_rune`` module."""
        if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
            raise ValueError(f"api_version: nx_rune implements the Array API standard "
                             f"{SUPPORTED_API_VERSIONS[-1]} (accepting "
                             f"{', '.join(SUPPORTED_API_VERSIONS)}), got {api_version!r}")
        return sys.modules["nx_rune"]

    def __format__(self, format_spec):
        if not format_spec:
            return str(self)
        if self.ndim != 0:
            raise TypeError(f"unsupported format string {format_spec!r} for a tensor of shape "
                            f"{self.shape}: only 0-d tensors format as numbers")
        return format(self.item(), format_spec)


def _ddof(ddof, correction, method):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{method}: give ddof or correction, not both")
    return correction


cdef class Tensor(ArrayBase):
    """An n-d array.  Make one with ``nx.asarray``/``nx.array``/``nx.zeros``/..."""
    # _arr: an ndarray of the values (a view of the memory) when the view is not padded;
    # _mat: (write epoch, read-only materialized copy) when it is padded
    cdef public object _buf, _view, _arr, _mat
    cdef object __weakref__
    # Whether a 0-d tensor is an array, which the in-place operators write into (x += 1
    # changes every name and view of it, as for NumPy's 0-d arrays), rather than a value,
    # which they rebind (x = x + 1), as NumPy's immutable scalars: a reduction's result
    # (nx.sum, nx.prod, x.dot(y), nx.linalg.det), x[i] of a 1-d tensor, any computed 0-d
    # result.  Arrays: what nx.asarray / nx.array / nx.zeros / nx.full / nx.copy make, and
    # views (x.reshape(()), x[...], squeeze).  Tensors wrapping a result start as values
    # (False); Tensor(buffer, view), a view of memory, as an array.  Ignored unless 0-d.
    cdef public bint _array0d

    def __init__(self, buffer, view):
        if not isinstance(buffer, Buffer) or not isinstance(view, View):
            raise TypeError("Tensor(buffer, view): use nx.asarray to make a tensor")
        self._buf = buffer
        self._view = view
        self._arr = None
        self._mat = None
        self._array0d = True

    @staticmethod
    def _wrap(arr):
        """Wrap an ndarray of a supported dtype without a copy: any strides (results, views,
        stride-0 constants).  Memory that a View cannot address exactly (misaligned for the
        dtype, strides that are not whole items, byte-swapped: ``np.frombuffer(b, offset=2)``,
        a field of a packed structured array) is copied first, so that a write into the tensor
        can never land on a neighbouring element."""
        return wrap(_addressable_array(arr))

    def _concrete_tensor(self):
        return self

    # -- operators: the eager fast path first (see _binary_fast), else the front end ----------
    def __add__(self, o):
        r = _binary_fast(self, o, _np_add, _ALL_KINDS, False)
        return _fe.add(self, o) if r is None else r

    def __radd__(self, o):
        r = _binary_fast(self, o, _np_add, _ALL_KINDS, True)
        return _fe.add(o, self) if r is None else r

    def __sub__(self, o):
        r = _binary_fast(self, o, _np_subtract, _NUMBER_KINDS, False)
        return _fe.subtract(self, o) if r is None else r

    def __rsub__(self, o):
        r = _binary_fast(self, o, _np_subtract, _NUMBER_KINDS, True)
        return _fe.subtract(o, self) if r is None else r

    def __mul__(self, o):
        r = _binary_fast(self, o, _np_multiply, _ALL_KINDS, False)
        return _fe.multiply(self, o) if r is None else r

    def __rmul__(self, o):
        r = _binary_fast(self, o, _np_multiply, _ALL_KINDS, True)
        return _fe.multiply(o, self) if r is None else r

    def __truediv__(self, o):
        r = _binary_fast(self, o, _np_divide, _INEXACT_KINDS, False)
        return _fe.divide(self, o) if r is None else r

    def __rtruediv__(self, o):
        r = _binary_fast(self, o, _np_divide, _INEXACT_KINDS, True)
        return _fe.divide(o, self) if r is None else r

    def __lt__(self, o):
        r = _binary_fast(self, o, _np_less, _REAL_KINDS, False)
        return _fe.less(self, o) if r is None else r

    def __le__(self, o):
        r = _binary_fast(self, o, _np_less_equal, _REAL_KINDS, False)
        return _fe.less_equal(self, o) if r is None else r

    def __gt__(self, o):
        r = _binary_fast(self, o, _np_greater, _REAL_KINDS, False)
        return _fe.greater(self, o) if r is None else r

    def __ge__(self, o):
        r = _binary_fast(self, o, _np_greater_equal, _REAL_KINDS, False)
        return _fe.greater_equal(self, o) if r is None else r

    def __eq__(self, o):
        r = _binary_fast(self, o, _np_equal, _ALL_KINDS, False)
        return _fe.equal(self, o) if r is None else r

    def __ne__(self, o):
        r = _binary_fast(self, o, _np_not_equal, _ALL_KINDS, False)
        return _fe.not_equal(self, o) if r is None else r

    def __neg__(self):
        r = _unary_fast(self, _np_negative, _NUMBER_KINDS)
        return _fe.negative(self) if r is None else r

    # in place (ArrayBase's), except on a 0-d value (see _array0d): rebound, x = x + o, as
    # NumPy's scalars are
    def __iadd__(self, o): return _inplace(self, o, _fe.add, "+=")
    def __isub__(self, o): return _inplace(self, o, _fe.subtract, "-=")
    def __imul__(self, o): return _inplace(self, o, _fe.multiply, "*=")
    def __itruediv__(self, o): return _inplace(self, o, _fe.divide, "/=")
    def __ifloordiv__(self, o): return _inplace(self, o, _fe.floor_divide, "//=")
    def __imod__(self, o): return _inplace(self, o, _fe.mod, "%=")
    def __ipow__(self, o): return _inplace(self, o, _fe.power, "**=")
    def __imatmul__(self, o): return _inplace(self, o, _fe.matmul, "@=")
    def __iand__(self, o): return _inplace(self, o, _fe.bitwise_and, "&=")
    def __ior__(self, o): return _inplace(self, o, _fe.bitwise_or, "|=")
    def __ixor__(self, o): return _inplace(self, o, _fe.bitwise_xor, "^=")
    def __ilshift__(self, o): return _inplace(self, o, _fe.bitwise_left_shift, "<<=")
    def __irshift__(self, o): return _inplace(self, o, _fe.bitwise_right_shift, ">>=")

    # views: NumPy's view of the values, wrapped (the same elements and memory as the front
    # end's movement primitives give, in one step)
    @property
    def T(self):
        r = _transpose_fast(self)
        return _fe.transpose(self) if r is None else r

    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        r = _reshape_fast(self, shape)
        return _fe.reshape(self, shape) if r is None else r

    def __getitem__(self, index):
        cdef Tensor t
        arr = self._arr
        if arr is not None and _get_value(DISPATCH) is None:
            key = _basic_key(index, (<cnp.ndarray>arr).ndim)
            if key is not None:
                try:
                    t = wrap(arr[key])
                except IndexError:   # out of range: the front end's message
                    pass
                else:
                    if cnp.PyArray_NDIM(<cnp.ndarray>t._arr) == 0:
                        t._array0d = not _int_index(index)
                    return t
        r = _fe.getitem(self, index)
        if type(r) is Tensor and len((<Tensor>r).shape) == 0:
            (<Tensor>r)._array0d = not _int_index(index)
        return r

    # -- storage ---------------------------------------------------------------------------
    @property
    def buffer(self):
        if self._buf is None:
            self._derive_storage()
        elif not isinstance(self._buf, Buffer):
            self._buf.raise_deleted()   # a donated tensor (nx_rune.compiler.api._Donated)
        return self._buf

    @staticmethod
    def _broadcast_scalar(value, dtype, shape):
        """``value`` seen with ``shape`` through stride 0: one element of memory (a constant).

        Constants are immutable, so they are cached by (value, dtype, shape); the key keeps
        -0.0 apart from 0.0 (equal, with equal hashes, but not the same constant)."""
        return _scalar_tensor(value, dtype, shape)

    @property
    def view(self):
        if self._view is None:
            self._derive_storage()
        return self._view

    def _derive_storage(self):
        """The Buffer and View of a Tensor that wraps an ndarray (any strides: a result, a
        NumPy view from the eager fast path, a stride-0 constant).  Memory of one of our
        Buffers is seen through that Buffer; other memory through a Buffer over the bytes the
        ndarray spans (no copy either way)."""
        arr = self._arr
        isz = arr.itemsize
        base = arr.base
        while isinstance(base, np.ndarray):
            base = base.base
        if not _addressable(<cnp.ndarray>arr):
            # (every ndarray a Tensor wraps passed Tensor._wrap's check: never here)
            raise ValueError(f"a tensor's memory must be addressable as items of {arr.dtype} "
                             f"(strides {arr.strides}); this one was wrapped unchecked")
        start = arr.__array_interface__["data"][0]
        # one of our Buffers only when arr starts a whole number of items into it: memory at
        # another byte offset (a .view(dtype) of a byte slice) is its own span of bytes
        if isinstance(base, Buffer) and base.itemsize == isz and \
                (start - base.address) % isz == 0:
            buf = base
        else:
            buf = buffer_from_ndarray(_span(arr))
        offset = (start - buf.address) // isz if arr.size else 0
        self._view = View(arr.shape, tuple(s // isz for s in arr.strides), offset)
        self._buf = buf

    cpdef object _np(self):
        """An ndarray of this tensor's values: a zero-copy view unless the view is masked
        (padded), then a read-only materialized copy."""
        arr = self._arr
        if arr is None:
            view, buf = self._view, self._buf
            if view.mask is not None:
                return self._padded_np()
            arr = buf.as_ndarray(view.shape, view.strides, view.offset)
            if buf.readonly or _overlapping(view):
                arr.flags.writeable = False
            self._arr = arr
        return arr

    def _padded_np(self):
        """The materialized values of a padded view, cached until the next in-place write
        (into any memory: a write into the source must not leave the cache stale).  The
        cache is read-only, so nothing that receives it can make it differ from the source."""
        epoch = EPOCH[0]
        mat = self._mat
        if mat is not None and mat[0] == epoch:
            return mat[1]
        view = self._view
        arr = materialize(self._buf, view).as_ndarray(view.shape, c_strides(view.shape), 0)
        arr.flags.writeable = False
        self._mat = (epoch, arr)
        return arr

    # -- properties --------------------------------------------------------------------------
    @property
    def shape(self):
        return self._arr.shape if self._arr is not None else self._view.shape

    @property
    def dtype(self):
        return self._arr.dtype if self._arr is not None else self._buf.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return self._arr.size if self._arr is not None else self._view.size

    @property
    def strides(self):
        """Strides in elements (0 on broadcast axes, negative on flipped ones)."""
        arr = self._arr
        if arr is not None:
            isz = arr.itemsize
            return tuple(s // isz for s in arr.strides)
        return self._view.strides

    # -- conversion --------------------------------------------------------------------------
    def numpy(self):
        """The values as an ndarray; shares memory unless the view is padded (then a read-only
        copy)."""
        return self._np()

    def __array__(self, dtype=None, copy=None):
        arr = self._np()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        return arr

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the values (CPU memory; shared unless ``copy`` or unless the
        view is padded).  ``stream`` must be None; ``dl_device`` None or ``(1, 0)`` (kDLCPU),
        else BufferError; ``copy=False`` raises BufferError when the export needs a copy."""
        if stream is not None:
            raise ValueError(f"stream: CPU arrays have no streams; must be None, got {stream!r}")
        arr = self._np()
        if self._view is not None and self._view.mask is not None:
            # a padded view's cache never escapes (it is rebuilt after writes): a fresh copy
            if copy is False:
                raise BufferError("copy=False: a padded view has no memory of its own to share")
            arr = arr.copy()
        kwargs = dict(max_version=max_version, dl_device=dl_device, copy=copy)
        try:
            return arr.__dlpack__(**kwargs)
        except BufferError:
            # a read-only array (a broadcast constant, a read-only source) cannot be exported
            # to a consumer of DLPack < 1.0, which has no read-only flag: export a copy
            if copy is False or arr.flags.writeable:
                raise
            return arr.copy().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)

    def item(self):
        if self.size != 1:
            raise ValueError(f"item(): only a tensor of one element converts to a Python "
                             f"scalar, this one has shape {self.shape}")
        return self._np().reshape(()).item()

    def tolist(self):
        return self._np().tolist()

    def __bool__(self):
        if self.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous; "
                             f"use .any() or .all()")
        return bool(self.item())

    def __float__(self): return float(self.item())
    def __int__(self): return int(self.item())

    def __complex__(self):
        v = self.item()
        if isinstance(v, float) and v != v:
            return complex(v, v)  # the Array API standard: complex(NaN) is NaN + NaN j
        return complex(v)

    def __index__(self):
        if not dtypes.is_integer(self.dtype) or self.ndim != 0:
            raise TypeError(f"only 0-d integer tensors can be used as an index, got shape "
                            f"{self.shape} and dtype {self.dtype}")
        return int(self.item())

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's functions on concrete tensors (``np.sum(t)``, ``np.concatenate([t, a])``)
        compute on the values and return NumPy results, as for ndarrays.  A traced value among
        the arguments raises TypeError: NumPy cannot differentiate, use the nx function."""
        if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
            return NotImplemented
        name = getattr(func, "__name__", "function")
        out = kwargs.get("out")
        if out is not None and _contains_array(out):
            raise TypeError(f"numpy.{name}: out= cannot be an nx_rune tensor (NumPy would write "
                            f"into its memory behind nx_rune's back); pass an ndarray or None")
        args = _to_ndarrays(args, name)
        kwargs = {k: _to_ndarrays(v, name) for k, v in kwargs.items()}
        return func(*args, **kwargs)

    def __repr__(self):
        text = np.array_repr(self._np())
        return "Tensor" + text[len("array"):] if text.startswith("array") else f"Tensor({text})"

    def __str__(self):
        return str(self._np())

    def __reduce_ex__(self, protocol):
        # the values as one C-contiguous ndarray argument: pickle protocol 5 sends its memory
        # out of band (no copy through the pickle stream), as NumPy does
        return (_from_ndarray, (_c_order(self._np()),))

    def __copy__(self):
        return _from_ndarray(self._np().copy(order="C"))

    def __deepcopy__(self, memo):
        return self.__copy__()

    def _memory_extent(self):
        """``(first, last)`` byte addresses (last exclusive) that this tensor's elements occupy,
        or None when it reads no memory (no elements, or every element padding)."""
        if self._view is None:
            arr = self._arr
            if arr.size == 0:
                return None
            return np.lib.array_utils.byte_bounds(arr)
        view, buf = self._view, self._buf
        valid = view.mask or tuple((0, n) for n in view.shape)
        lo = hi = view.offset
        for (a, b), s in zip(valid, view.strides):
            if a >= b:
                return None
            lo += s * (a if s >= 0 else b - 1)
            hi += s * (b - 1 if s >= 0 else a)
        item = buf.itemsize
        return buf.address + lo * item, buf.address + (hi + 1) * item


def _contains_array(x):
    if isinstance(x, ArrayBase):
        return True
    return isinstance(x, (list, tuple)) and any(_contains_array(v) for v in x)


def _to_ndarrays(x, fname):
    """``x`` with every Tensor (also inside lists and tuples) replaced by its ndarray."""
    if isinstance(x, Tensor):
        return x._np()
    if isinstance(x, ArrayBase):
        # a traced value: its own conversion raises TracerArrayConversionError naming the
        # transformation (that of a finished transformation gives its values)
        try:
            return np.asarray(x)
        except TypeError as e:
            e.args = (f"numpy.{fname} got a traced value: {e.args[0] if e.args else e}; "
                      f"here: nx.{fname}",)
            raise
    if isinstance(x, (list, tuple)):
        return type(x)(_to_ndarrays(v, fname) for v in x) if type(x) in (list, tuple) else x
    return x


def _c_order(arr):
    """``arr`` if it is C-contiguous, else a C-ordered copy (0-d stays 0-d, unlike
    ``np.ascontiguousarray``)."""
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _from_ndarray(arr):
    # (an unpickled ndarray may lie anywhere in a received message: checked)
    cdef Tensor t = wrap(_addressable_array(_c_order(arr)))
    t._array0d = True
    return t


cdef inline object _addressable_array(object arr):
    """``arr`` when a View can address its memory exactly (see buffer.addressable), else a
    C-ordered copy of its values in native byte order."""
    if not cnp.PyArray_Check(arr):
        return arr
    if cnp.PyArray_CHKFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_C_CONTIGUOUS | cnp.NPY_ARRAY_ALIGNED) \
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>arr):
        return arr        # (the common case, from the flags: whole-item strides, aligned)
    if _addressable(<cnp.ndarray>arr):
        return arr
    out = np.empty(arr.shape, arr.dtype.newbyteorder("="))
    out[...] = arr
    return out


def _span(arr):
    """A C-contiguous 1-D ndarray over the bytes ``arr``'s elements span (arr's memory, no
    copy): the memory a Buffer of arr's values wraps."""
    if arr.size == 0:
        empty = np.empty(0, arr.dtype)
        empty.flags.writeable = arr.flags.writeable   # a read-only empty array stays read-only
        return empty
    # the element at the lowest address: index 0 on every axis once negative strides are flipped
    flipped = arr[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in arr.strides)
                  + (Ellipsis,)]   # (an index of ints alone would give a NumPy scalar: a copy)
    corner = flipped[(0,) * arr.ndim + (Ellipsis,)]
    lo, hi = np.lib.array_utils.byte_bounds(arr)
    return np.lib.stride_tricks.as_strided(corner, ((hi - lo) // arr.itemsize,),
                                           (arr.itemsize,))


cdef inline Tensor wrap(object arr):
    """A Tensor over the ndarray ``arr`` (no copy, no checks; see Tensor._wrap)."""
    cdef Tensor t = Tensor.__new__(Tensor)
    t._arr = arr
    return t


# The eager fast path, bind (the dispatch of every primitive) and the shape and dtype reads,
# in files of their own, compiled into this module (textual includes: same speed)
include "tensor_fastpath.pxi"
include "tensor_bind.pxi"


# the primitives of the operators + - * / (set by the front end: install_operator_primitives)
cdef object _ADD_P = None, _SUB_P = None, _MUL_P = None, _DIV_P = None


def install_operator_primitives(add, sub, mul, fdiv):
    """The primitives that the arithmetic operators of tracers bind at once (see
    ``binary_op_fast``); called by the front end when it loads."""
    global _ADD_P, _SUB_P, _MUL_P, _DIV_P
    _ADD_P, _SUB_P, _MUL_P, _DIV_P = add, sub, mul, fdiv


def binary_op_fast(a, b, ufunc, prim, kinds=b"biufc"):
    """A binary function of the front end on its common cases: ``ufunc(a, b)`` on the eager
    fast path (see ``fast_binary``), else ``prim`` bound on the operands when they need no
    promotion and no broadcasting (what the front end's ``binary_op`` does first): two arrays of
    one dtype and shape, or an array and a Python float (int) that its float (numeric) dtype
    keeps, as a stride-0 constant of the array's dtype and shape.  The array's dtype kind must
    be in ``kinds``.  None otherwise: the caller takes its general path."""
    return _binary_any(a, b, ufunc, prim, kinds)


cdef char _array_kind(object x, const char* kinds):
    """The kind of array x's NumPy dtype when it is one of ``kinds``, else 0."""
    dt = _dtype_of(x)
    if not isinstance(dt, cnp.dtype):
        return 0
    cdef char k = (<cnp.dtype>dt).kind
    return k if _kind_in(k, kinds) else 0


cdef inline bint _scalar_keeps(object v, char k):
    """Whether Python number v keeps dtype kind k (weak typing: a float keeps floats and
    complexes, an int every number kind)."""
    return ((type(v) is float and _kind_in(k, _WEAK_KINDS)) or
            (type(v) is int and _kind_in(k, b"iufc")))


cdef object _binary_any(object a, object b, object ufunc, object prim, const char* kinds):
    cdef char k
    if prim is None:      # (the front end has not installed the operators' primitives yet)
        return None
    if type(a) is Tensor:
        r = _binary_fast(<Tensor>a, b, ufunc, kinds, False)
        if r is not None:
            return r
    if isinstance(a, ArrayBase):
        k = _array_kind(a, kinds)
        if k == 0:
            return None
        if isinstance(b, ArrayBase):
            dt = _dtype_of(a)
            bdt = _dtype_of(b)
            if bdt is dt or bdt == dt:
                shape = _shape_of(a)
                if _shape_of(b) == shape:
                    return _bind(prim, (a, b), {})
            return None
        if _scalar_keeps(b, k):
            return _bind(prim, (a, _scalar_tensor(b, _dtype_of(a), _shape_of(a))), {})
        return None
    if isinstance(b, ArrayBase):
        k = _array_kind(b, kinds)
        if k != 0 and _scalar_keeps(a, k):
            return _bind(prim, (_scalar_tensor(a, _dtype_of(b), _shape_of(b)), b), {})
    return None


def _overlapping(view):
    return any(s == 0 and n > 1 for n, s in zip(view.shape, view.strides))


def is_array(x):
    """True for Tensors and autodiff tracers."""
    return isinstance(x, ArrayBase)


class _FrontendNotLoaded:
    def __getattr__(self, name):
        raise RuntimeError("nx_rune's front end is not loaded: import nx_rune")


_fe = _FrontendNotLoaded()
def install_frontend(namespace):
    """Make ``namespace`` (the front-end package) the target of every operator and method."""
    global _fe
    _fe = namespace
