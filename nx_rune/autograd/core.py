"""The core of ``nx_rune.autograd``: ``make_vjp``, ``make_jvp`` and vector spaces.

autograd's tracer (boxes, nodes, a backward pass) is nx_rune's own reverse and forward modes
here: ``make_vjp`` is ``nx_rune.vjp``, ``make_jvp`` is ``nx_rune.jvp``, both run in x64 mode so
that Python numbers and lists are float64 as in autograd.  ``vspace(x)`` gives the vector space
of a value (arrays and scalars; lists, tuples, named tuples and dicts of them) with autograd's
methods (``zeros``, ``ones``, ``randn``, ``standard_basis``, ``add``, ``scalar_mul``,
``inner_prod``, ``covector``, ``size``, ``shape``, ``dtype``, ``iscomplex``), its values nx
Tensors; ``randn`` draws from NumPy's global random state, as autograd's.
"""
from __future__ import annotations

import warnings

import numpy as _onp

import nx_rune as _nx
from nx_rune.autograd._wrap import in_x64
from nx_rune.tensor import ArrayBase

__all__ = ["make_vjp", "make_jvp", "vspace", "VSpace", "ArrayVSpace", "ComplexArrayVSpace",
           "ContainerVSpace", "SequenceVSpace", "ListVSpace", "TupleVSpace", "DictVSpace",
           "primitive_vjps", "primitive_jvps"]

# autograd keeps its derivative rules in these tables (function -> rule maker); nx_rune.autograd
# keeps a primitive's rules on the primitive (see extend.primitive) and lists them here too
primitive_vjps: dict = {}
primitive_jvps: dict = {}


def _independent(out, x):
    warnings.warn("Output seems independent of input.", stacklevel=2)


@in_x64
def make_vjp(fun, x):
    """``(vjp, ans)``: ``ans = fun(x)`` and ``vjp(g)``, the vector-Jacobian product of ``g``
    (shaped like ``ans``) with ``fun`` at ``x`` (shaped like ``x``).  ``x`` may be an array, a
    Python number or a list/tuple/dict of them."""
    ans, vjp_fn = _nx.vjp(fun, x)

    @in_x64
    def vjp(g):
        return vjp_fn(g)[0]
    return vjp, ans


def make_jvp(fun, x):
    """``jvp(g) -> (fun(x), J(x) @ g)``: forward mode at ``x`` for a tangent ``g`` shaped like
    ``x``."""
    @in_x64
    def jvp(g):
        return _nx.jvp(fun, (x,), (g,))
    return jvp


# -- vector spaces -----------------------------------------------------------------------------

def _np_dtype(value):
    if isinstance(value, (ArrayBase, _onp.ndarray, _onp.generic)):
        return value.dtype
    if isinstance(value, bool):
        return _onp.dtype(_onp.bool_)
    if isinstance(value, int):
        return _onp.dtype(_onp.int64)
    if isinstance(value, float):
        return _onp.dtype(_onp.float64)
    if isinstance(value, complex):
        return _onp.dtype(_onp.complex128)
    return _onp.asarray(value).dtype


class VSpace:
    """A vector space of values (autograd's ``VSpace``): subclasses give ``zeros``, ``ones``,
    ``randn``, ``standard_basis`` and the ``_add``/``_scalar_mul``/``_inner_prod``/``_covector``
    arithmetic; ``register(type, maker)`` maps a value type to its space."""
    __slots__ = []
    mappings: dict = {}
    iscomplex = False

    def __init__(self, value):
        pass

    def zeros(self):
        raise NotImplementedError(repr(self))

    def ones(self):
        raise NotImplementedError(repr(self))

    def standard_basis(self):
        raise NotImplementedError(repr(self))

    def randn(self):
        raise NotImplementedError(repr(self))

    def mut_add(self, x_prev, x_new):
        x_prev = x_prev if x_prev is not None else self.zeros()
        return self._mut_add(x_prev, x_new)

    def add(self, x_prev, x_new):
        return self._add(x_prev, x_new)

    def scalar_mul(self, x, a):
        return self._scalar_mul(x, a)

    def inner_prod(self, x, y):
        return self._inner_prod(x, y)

    def covector(self, x):
        return self._covector(x)

    def _add(self, x, y):
        return x + y

    def _mut_add(self, x, y):
        return x + y

    def _scalar_mul(self, x, a):
        return x * a

    def _inner_prod(self, x, y):
        raise NotImplementedError(repr(self))

    def _covector(self, x):
        return x

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return id(type(self))

    def __repr__(self):
        return f"{type(self).__name__}_{self.__dict__}"

    @classmethod
    def register(cls, value_type, vspace_maker=None):
        VSpace.mappings[value_type] = vspace_maker if vspace_maker else cls


def vspace(value):
    """The vector space of ``value`` (TypeError for values without one)."""
    maker = VSpace.mappings.get(type(value))
    if maker is not None:
        return maker(value)
    if isinstance(value, ArrayBase):
        return _array_vspace(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return NamedTupleVSpace(value)
    for t, m in list(VSpace.mappings.items()):
        if isinstance(t, type) and isinstance(value, t):
            return m(value)
    raise TypeError(f"Can't find vector space for value {value!r} of type {type(value)}. "
                    f"Valid types are {list(VSpace.mappings)}")


class ArrayVSpace(VSpace):
    """Real arrays and scalars of one shape and dtype."""

    def __init__(self, value):
        self.shape = tuple(_onp.shape(value)) if not isinstance(value, ArrayBase) \
            else tuple(value.shape)
        self.dtype = _onp.dtype(_np_dtype(value))

    @property
    def size(self):
        return int(_onp.prod(self.shape))

    @property
    def ndim(self):
        return len(self.shape)

    @in_x64
    def zeros(self):
        return _nx.zeros(self.shape, self.dtype)

    @in_x64
    def ones(self):
        return _nx.ones(self.shape, self.dtype)

    @in_x64
    def standard_basis(self):
        for idxs in _onp.ndindex(*self.shape):
            vect = _onp.zeros(self.shape, dtype=self.dtype)
            vect[idxs] = 1
            yield _nx.asarray(vect)

    @in_x64
    def randn(self):
        return _nx.asarray(_onp.array(_onp.random.randn(*self.shape)).astype(self.dtype))

    @in_x64
    def _inner_prod(self, x, y):
        return _nx.dot(_nx.ravel(x), _nx.ravel(y))

    @in_x64
    def _add(self, x, y):
        return _nx.add(x, y)

    _mut_add = _add

    @in_x64
    def _scalar_mul(self, x, a):
        return _nx.multiply(x, a)


class ComplexArrayVSpace(ArrayVSpace):
    """Complex arrays and scalars (a real vector space of twice the size)."""
    iscomplex = True

    @property
    def size(self):
        return int(_onp.prod(self.shape)) * 2

    @in_x64
    def ones(self):
        return _nx.asarray(_onp.ones(self.shape, self.dtype) * (1 + 1j))

    @in_x64
    def standard_basis(self):
        for idxs in _onp.ndindex(*self.shape):
            for v in (1.0, 1.0j):
                vect = _onp.zeros(self.shape, dtype=self.dtype)
                vect[idxs] = v
                yield _nx.asarray(vect)

    @in_x64
    def randn(self):
        re = _onp.array(_onp.random.randn(*self.shape)).astype(self.dtype)
        im = _onp.array(_onp.random.randn(*self.shape)).astype(self.dtype)
        return _nx.asarray(re + 1.0j * im)

    @in_x64
    def _inner_prod(self, x, y):
        return _nx.real(_nx.dot(_nx.conj(_nx.ravel(x)), _nx.ravel(y)))

    @in_x64
    def _covector(self, x):
        return _nx.conj(x)


def _array_vspace(value):
    return ComplexArrayVSpace(value) if _np_dtype(value).kind == "c" else ArrayVSpace(value)


for _t in (float, int, bool, _onp.ndarray, _onp.float64, _onp.float32, _onp.float16,
           _onp.longdouble, _onp.int64, _onp.int32):
    VSpace.register(_t, _array_vspace)
for _t in (complex, _onp.complex64, _onp.complex128, _onp.clongdouble):
    VSpace.register(_t, ComplexArrayVSpace)


class ContainerVSpace(VSpace):
    """The product of the spaces of a container's items."""

    def __init__(self, value):
        self.shape = value
        self.shape = self._map(vspace)

    @property
    def size(self):
        return sum(self._values(self._map(lambda vs: vs.size)))

    def zeros(self):
        return self._map(lambda vs: vs.zeros())

    def ones(self):
        return self._map(lambda vs: vs.ones())

    def randn(self):
        return self._map(lambda vs: vs.randn())

    def standard_basis(self):
        zero = self.zeros()
        for i, vs in self._kv_pairs(self.shape):
            for x in vs.standard_basis():
                yield self._subval(zero, i, x)

    def _add(self, xs, ys):
        return self._map(lambda vs, x, y: vs._add(x, y), xs, ys)

    def _mut_add(self, xs, ys):
        return self._map(lambda vs, x, y: vs._mut_add(x, y), xs, ys)

    def _scalar_mul(self, xs, a):
        return self._map(lambda vs, x: vs._scalar_mul(x, a), xs)

    def _inner_prod(self, xs, ys):
        return sum(self._values(self._map(lambda vs, x, y: vs._inner_prod(x, y), xs, ys)))

    def _covector(self, xs):
        return self._map(lambda vs, x: vs._covector(x), xs)


class SequenceVSpace(ContainerVSpace):
    def _values(self, x):
        return x

    def _kv_pairs(self, x):
        return enumerate(x)

    def _map(self, f, *args):
        return self.seq_type(map(f, self.shape, *args))

    def _subval(self, xs, idx, x):
        items = list(xs)
        items[idx] = x
        return self.seq_type(items)


class ListVSpace(SequenceVSpace):
    seq_type = list


class TupleVSpace(SequenceVSpace):
    seq_type = tuple


class NamedTupleVSpace(SequenceVSpace):
    """Named tuples (``EighResult``, ``SVDResult``, ...): a tuple space that keeps the type."""

    def __init__(self, value):
        self._type = type(value)
        super().__init__(value)

    def seq_type(self, items):
        return self._type(*items)


class DictVSpace(ContainerVSpace):
    def _values(self, x):
        return x.values()

    def _kv_pairs(self, x):
        return x.items()

    def _map(self, f, *args):
        return {k: f(vs, *[x[k] for x in args]) for k, vs in self.shape.items()}

    def _subval(self, xs, idx, x):
        d = dict(xs.items())
        d[idx] = x
        return d


ListVSpace.register(list)
TupleVSpace.register(tuple)
DictVSpace.register(dict)

