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
"""
import numpy as np

from nx_rune import dtypes
from nx_rune.writes import EPOCH
from nx_rune._kernels.buffer import Buffer, buffer_from_ndarray
from nx_rune._kernels.view import View, c_strides, materialize

__all__ = ["ArrayBase", "Tensor", "is_array", "install_frontend"]


class ArrayBase:
    """Operators and methods of every array-like value (Tensor and autodiff tracers).

    Subclasses provide ``shape`` and ``dtype``.
    """
    __slots__ = ()
    __array_priority__ = 1000
    __hash__ = None

    @property
    def ndim(self):
        return len(self.shape)

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

    # arithmetic
    def __add__(self, o): return _fe.add(self, o)
    def __radd__(self, o): return _fe.add(o, self)
    def __sub__(self, o): return _fe.subtract(self, o)
    def __rsub__(self, o): return _fe.subtract(o, self)
    def __mul__(self, o): return _fe.multiply(self, o)
    def __rmul__(self, o): return _fe.multiply(o, self)
    def __truediv__(self, o): return _fe.divide(self, o)
    def __rtruediv__(self, o): return _fe.divide(o, self)
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

    def astype(self, dtype): return _fe.astype(self, dtype)
    def sum(self, axis=None, keepdims=False): return _fe.sum(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return _fe.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return _fe.max(self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return _fe.min(self, axis, keepdims)
    def prod(self, axis=None, keepdims=False): return _fe.prod(self, axis, keepdims)
    def var(self, axis=None, keepdims=False): return _fe.var(self, axis, keepdims=keepdims)
    def std(self, axis=None, keepdims=False): return _fe.std(self, axis, keepdims=keepdims)
    def argmax(self, axis=None, keepdims=False): return _fe.argmax(self, axis, keepdims)
    def argmin(self, axis=None, keepdims=False): return _fe.argmin(self, axis, keepdims)
    def flatten(self): return _fe.reshape(self, (-1,))
    def ravel(self): return _fe.reshape(self, (-1,))
    def squeeze(self, axis=None): return _fe.squeeze(self, axis)
    def copy(self): return _fe.copy(self)
    def dot(self, o): return _fe.dot(self, o)


class Tensor(ArrayBase):
    """An n-d array.  Make one with ``nx.asarray``/``nx.array``/``nx.zeros``/..."""
    # _arr: an ndarray of the values (a view of the memory) when the view is not padded;
    # _mat: (write epoch, read-only materialized copy) when it is padded
    __slots__ = ("_buf", "_view", "_arr", "_mat", "__weakref__")

    def __init__(self, buffer, view):
        if not isinstance(buffer, Buffer) or not isinstance(view, View):
            raise TypeError("Tensor(buffer, view): use nx.asarray to make a tensor")
        self._buf = buffer
        self._view = view
        self._arr = None
        self._mat = None

    @classmethod
    def _wrap(cls, arr):
        """Wrap a C-contiguous ndarray of a supported dtype without a copy (no checks)."""
        t = cls.__new__(cls)
        t._arr = arr
        t._buf = None
        t._view = None
        return t

    # -- storage ---------------------------------------------------------------------------
    @property
    def buffer(self):
        if self._buf is None:
            arr = self._arr
            # a stride-0 constant keeps its one element in arr.base
            self._buf = buffer_from_ndarray(arr if arr.flags.c_contiguous else arr.base)
        return self._buf

    @classmethod
    def _broadcast_scalar(cls, value, dtype, shape):
        """``value`` seen with ``shape`` through stride 0: one element of memory (a constant).

        Constants are immutable, so they are cached by (value, dtype, shape); the key keeps
        -0.0 apart from 0.0 (equal, with equal hashes, but not the same constant)."""
        key = (type(value), value, dtype, shape)
        if not value:
            key = (type(value), repr(value), dtype, shape)
        t = _SCALAR_TENSORS.get(key)
        if t is not None:
            return t
        base = np.full(1, value, dtype=dtype)
        base.flags.writeable = False
        t = cls.__new__(cls)
        t._arr = np.ndarray(shape, dtype, buffer=base, strides=(0,) * len(shape))
        t._buf = None
        t._view = None
        if len(_SCALAR_TENSORS) >= 4096:
            _SCALAR_TENSORS.clear()
        _SCALAR_TENSORS[key] = t
        return t

    @property
    def view(self):
        if self._view is None:
            arr = self._arr
            if arr.flags.c_contiguous:
                self._view = View.contiguous(arr.shape)
            else:  # a stride-0 constant (_broadcast_scalar): its data pointer is the buffer's
                isz = arr.itemsize
                self._view = View(arr.shape, tuple(s // isz for s in arr.strides), 0)
        return self._view

    def _np(self):
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
        if self._view is None:
            return c_strides(self._arr.shape)
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

    def __dlpack__(self, **kwargs):
        arr = self._np()
        if self._view is not None and self._view.mask is not None:
            arr = arr.copy()   # a padded view's cache never escapes writable: a fresh copy
        return np.ascontiguousarray(arr).__dlpack__(**kwargs)

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
    def __complex__(self): return complex(self.item())

    def __index__(self):
        if not dtypes.is_integer(self.dtype) or self.size != 1 or self.ndim != 0:
            raise TypeError("only 0-d integer tensors can be used as an index")
        return int(self.item())

    def __repr__(self):
        text = np.array_repr(self._np())
        return "Tensor" + text[len("array"):] if text.startswith("array") else f"Tensor({text})"

    def __str__(self):
        return str(self._np())

    def __reduce__(self):
        return (_from_ndarray_copy, (np.array(self._np()),))


def _from_ndarray_copy(arr):
    return Tensor._wrap(np.ascontiguousarray(arr))


_SCALAR_TENSORS = {}


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
