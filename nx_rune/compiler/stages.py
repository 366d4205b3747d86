"""JAX's ahead-of-time stages and abstract evaluation: ``jit(f).lower(*args)``,
``Lowered.compile()``, ``nx.eval_shape`` and ``nx.ShapeDtypeStruct``.

``jit(f).lower(*args)`` traces ``f`` for the arguments' signature (arrays, Python numbers, or
:class:`ShapeDtypeStruct` placeholders: only shapes and dtypes are read) and returns a
:class:`Lowered`: ``as_text()`` is the traced program (``make_jaxpr``'s text).
``compile()`` builds the executable (the optimized program and its generated code) and returns
a :class:`Compiled`, called with the dynamic arguments only (static ones were fixed when
lowering, as in JAX); ``Compiled.as_text()`` is the optimized program.

``eval_shape(f, *args)`` traces ``f`` on abstract values and returns the outputs' shapes and
dtypes as a pytree of :class:`ShapeDtypeStruct`; no kernel runs (operations on constants are
recorded by the trace, not computed).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from nx_rune import primitives as P
from nx_rune.tree_util import tree_unflatten

__all__ = ["ShapeDtypeStruct", "ShapedArray", "typeof", "Lowered", "Compiled"]


class ShapeDtypeStruct:
    """A placeholder for an array: ``shape`` (a tuple of ints), ``dtype`` (a NumPy dtype) and
    ``weak_type``, no values (JAX's ``jax.ShapeDtypeStruct``).  ``eval_shape`` returns these;
    ``eval_shape`` and ``jit(f).lower`` accept them in place of arrays.  ``sharding`` is
    accepted and kept (there is one device)."""
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        try:
            shape = tuple(int(_index(d)) for d in shape)
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: shape must be a sequence of ints, got "
                            f"{shape!r}") from None
        if any(d < 0 for d in shape):
            raise ValueError(f"ShapeDtypeStruct: shape must not have negative sizes, got "
                             f"{shape}")
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified (a dtype), got None")
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: dtype must be a dtype, got {dtype!r}") from None
        self.shape = shape
        self.dtype = dtype
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    __str__ = __repr__

    @classmethod
    def like(cls, x: Any) -> "ShapeDtypeStruct":
        """The placeholder of ``x`` (an array, a tracer, a Python number or another
        placeholder): its shape, dtype and weak type."""
        a = typeof(x)
        return cls(a.shape, a.dtype, weak_type=a.weak_type)


class ShapedArray(ShapeDtypeStruct):
    """The abstract value of an array, as ``jax.typeof`` returns it: ``shape``, ``dtype`` and
    ``weak_type``; prints as JAX's (``float32[3]``)."""
    __slots__ = ()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self}{weak})"

    def __str__(self):
        return f"{self.dtype.name}[{','.join(str(d) for d in self.shape)}]"


def typeof(x: Any) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of ``x``: an array, a tracer under a
    transformation, a Python number (weakly typed, the default dtype of its kind) or a NumPy
    value; ``jax.typeof``.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.typeof(nx.ones((2, 3)))
    ShapedArray(float32[2,3])
    >>> print(nx.typeof(1.0).weak_type)
    True
    """
    from nx_rune import frontend
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)
    weak = isinstance(x, (int, float, complex)) and not isinstance(x, bool)
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = frontend.asarray(x)
    return ShapedArray(tuple(x.shape), x.dtype,
                       weak_type=weak or bool(getattr(x, "weak_type", False)))


def _index(d):
    import operator
    if isinstance(d, (bool, np.bool_)):
        raise TypeError(d)
    return operator.index(d)


def _structs(avals, tree):
    return tree_unflatten(tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                                 for a in avals])


def out_info(traced):
    """The outputs of a traced function (``Traced``) as a pytree of ShapeDtypeStruct (the
    written arguments' final values, after the outputs, left out)."""
    n = traced.out_tree.num_leaves
    return _structs([x.aval for x in traced.program.outs[:n]], traced.out_tree)


class Lowered:
    """A function traced for one signature (``jit(f).lower(*args)``): ``as_text()`` is its
    program, ``compile()`` builds it."""

    def __init__(self, jitted, entry, keys, treedef, statics, skw, descs):
        self._jitted = jitted
        self._descs = descs
        self._entry = entry
        self._keys = keys
        self._treedef = treedef
        self._statics = statics
        self._skw = skw

    @property
    def in_tree(self):
        """The tree structure of the dynamic arguments ``((args...), {kwargs})``."""
        return self._treedef

    @property
    def out_tree(self):
        return self._entry.traced.out_tree

    @property
    def out_info(self):
        """The outputs' shapes and dtypes (a pytree of ShapeDtypeStruct)."""
        return out_info(self._entry.traced)

    @property
    def args_info(self):
        """The dynamic arguments' shapes and dtypes (a pytree of ShapeDtypeStruct)."""
        return _structs([_aval_of_key(k) for k in self._keys], self._treedef)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The traced program as text (``make_jaxpr``'s form: one equation per line)."""
        return str(self._entry.traced.program)

    def compile(self, compiler_options: dict | None = None) -> "Compiled":
        """The compiled program (its executable built now)."""
        self._entry.executable()
        return Compiled(self)

    def cost_analysis(self):
        """None: nx_rune does not estimate costs (JAX's returns a backend's estimate)."""
        return None

    def __repr__(self):
        return f"<Lowered {self._jitted._name}>"


def _aval_of_key(k):
    from nx_rune.compiler.ir import AbstractValue
    return AbstractValue(k[0], k[1], k[2])


class Compiled:
    """A compiled program for one signature (``jit(f).lower(*args).compile()``): call it with
    the dynamic arguments (the static ones were fixed when lowering); other shapes, dtypes or
    tree structures raise TypeError.  ``as_text()`` is the optimized program."""

    def __init__(self, lowered):
        self._lowered = lowered

    @property
    def in_tree(self):
        return self._lowered.in_tree

    @property
    def out_tree(self):
        return self._lowered.out_tree

    @property
    def out_info(self):
        return self._lowered.out_info

    @property
    def args_info(self):
        return self._lowered.args_info

    def as_text(self) -> str:
        """The program after the compiler's passes (what the executable runs)."""
        return str(self._lowered._entry.executable().program)

    def cost_analysis(self):
        return None

    def memory_analysis(self):
        return None

    def __call__(self, *args, **kwargs):
        low = self._lowered
        jf = low._jitted
        name = jf._name
        spos = {i for i, _ in low._statics}
        snames = {k for k, _ in low._skw}
        for k in kwargs:
            if k in snames:
                raise TypeError(f"jit({name}) compiled: {k!r} is a static argument, fixed when "
                                f"the function was lowered; call the compiled function with "
                                f"the dynamic arguments only")
        values, keys, treedef = jf._flatten(list(args), dict(kwargs), spos)
        if treedef != low._treedef:
            raise TypeError(f"jit({name}) compiled: the arguments' tree structure {treedef} "
                            f"differs from the one it was compiled for, {low._treedef} (call "
                            f"it with the dynamic arguments only: the static ones were fixed "
                            f"by lower)")
        for j, (k, c) in enumerate(zip(keys, low._keys)):
            if k[:3] != c[:3]:
                desc = low._descs[j] if j < len(low._descs) else f"leaf {j}"
                raise TypeError(f"jit({name}) compiled: argument types differ from those it "
                                f"was compiled for: {desc} compiled with "
                                f"{_key_str(c)} and called with {_key_str(k)}")
        entry = low._entry
        if P._interpreter.get() is None and not entry.traced.captured:
            return entry.run(values)
        return entry.call(values)

    def __repr__(self):
        return f"<Compiled {self._lowered._jitted._name}>"


def _key_str(k):
    from nx_rune.compiler.ir import short_dtype
    weak = " (weakly typed)" if k[2] else ""
    return f"{short_dtype(k[1])}[{','.join(str(d) for d in k[0])}]{weak}"
