"""The compiler's intermediate representation: typed variables, equations, programs.

A :class:`Program` is what tracing a function gives (``nx.make_jaxpr`` prints one)::

    { lambda ; a:f64[10]. let
        b:f64[10] = sin a
        c:f64[10] = mul b 0.9:f64[10]
        d:f64[] = reduce_sum[axes=(0,) keepdims=False] c
      in (d,) }

* :class:`AbstractValue` (an "aval"): shape, dtype and weak type of a value, no data.
* :class:`Var`: a typed variable, defined once (an input or an equation's output).
* :class:`Literal`: a constant (a concrete Tensor) used as an operand.
* :class:`Eqn`: ``outs = prim[params](ins)``; ``prim`` is a primitive (``nx.primitives``), a
  control-flow operation (``nx_rune.compiler.control``) or an operation that a compiler pass
  introduced (a folded view, a fused kernel: :class:`InternalOp`).
* :class:`Program`: input variables, equations in an order where every operand is defined
  before its use, and outputs (variables or literals).

Programs are treated as immutable by the passes: each pass returns a new Program (equations
and variables may be shared with its input).
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = ["AbstractValue", "Var", "Literal", "Eqn", "Program", "InternalOp", "short_dtype",
           "aval_of", "pp_program"]

_SHORT = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
          "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}


def short_dtype(dtype) -> str:
    """JAX's short spelling of a dtype (``f32``, ``i64``, ``bool``)."""
    name = np.dtype(dtype).name
    return _SHORT.get(name, name)


class AbstractValue:
    """Shape (a tuple of ints), dtype (a NumPy dtype) and weak type (a bool: the value came from
    a Python scalar, so it takes the other operand's dtype in a binary op, as in JAX)."""
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __eq__(self, other):
        return (isinstance(other, AbstractValue) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def same_type(self, other):
        """Equal shape and dtype (weak type ignored)."""
        return self.shape == other.shape and self.dtype == other.dtype

    def str_short(self):
        return f"{short_dtype(self.dtype)}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"AbstractValue({self.str_short()}{weak})"


def aval_of(x, weak_type=False) -> AbstractValue:
    """The abstract value of an array-like ``x`` (a Tensor, a tracer, an ndarray)."""
    aval = getattr(x, "aval", None)
    if isinstance(aval, AbstractValue):
        return aval
    return AbstractValue(x.shape, x.dtype, weak_type)


_ids = itertools.count()


class Var:
    """A typed variable of a program; compared by identity."""
    __slots__ = ("aval", "id")

    def __init__(self, aval):
        self.aval = aval
        self.id = next(_ids)

    def __repr__(self):
        return f"Var({self.id}:{self.aval.str_short()})"


_UNSET = object()


class Literal:
    """A constant operand: ``value`` is a concrete Tensor (its values are baked into the
    program)."""
    __slots__ = ("value", "aval", "_scalar")

    def __init__(self, value, aval=None):
        self.value = value
        self.aval = aval if aval is not None else AbstractValue(value.shape, value.dtype)
        self._scalar = _UNSET

    def array(self) -> np.ndarray:
        """The values as an ndarray (a zero-copy view of the Tensor)."""
        return self.value._np()

    def scalar(self):
        """The one value of a literal whose elements are all equal, bit for bit (a Python
        scalar), or None (arrays of more than 4096 distinct-memory elements are not checked)."""
        if self._scalar is _UNSET:
            self._scalar = self._find_scalar()
        return self._scalar

    def _find_scalar(self):
        arr = self.array()
        if arr.size == 0:
            return None
        first = arr.flat[0]
        if arr.size == 1 or all(s == 0 for s in arr.strides):
            return first.item()
        if arr.size > 4096:
            return None
        raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8).reshape(arr.size, -1)
        if (raw == raw[0]).all():
            return first.item()
        return None

    def __repr__(self):
        return f"Literal({self.aval.str_short()})"


class InternalOp:
    """An operation that only compiler passes introduce (a folded view, a fused kernel); it has
    no implementation for ``bind``: the executor runs it."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<internal op {self.name}>"


class Eqn:
    """One equation ``outs = prim[params](ins)``."""
    __slots__ = ("prim", "params", "ins", "outs")

    def __init__(self, prim, params, ins, outs):
        self.prim = prim
        self.params = params
        self.ins = list(ins)
        self.outs = list(outs)

    def replace(self, ins=None, params=None):
        """A copy with new operands and/or params."""
        return Eqn(self.prim, self.params if params is None else params,
                   self.ins if ins is None else ins, self.outs)

    def __repr__(self):
        return f"Eqn({self.prim.name}, {len(self.ins)} -> {len(self.outs)})"


class Program:
    """Inputs (Vars), equations, outputs (Vars or Literals); ``cache`` holds what is derived
    from the program once (its executable, its derivatives' programs)."""
    __slots__ = ("in_vars", "eqns", "outs", "cache")

    def __init__(self, in_vars, eqns, outs):
        self.in_vars = list(in_vars)
        self.eqns = list(eqns)
        self.outs = list(outs)
        self.cache = {}

    @property
    def in_avals(self):
        return [v.aval for v in self.in_vars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outs]

    def __str__(self):
        return pp_program(self)

    __repr__ = __str__


# -- printing -----------------------------------------------------------------------------------

def last_uses(eqns) -> dict:
    """``{var: index of the last equation of eqns that reads it}``."""
    last = {}
    for i, e in enumerate(eqns):
        for x in e.ins:
            if isinstance(x, Var):
                last[x] = i
    return last


def _name(k):
    letters = "abcdefghijklmnopqrstuvwxyz"
    s = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        s = letters[r] + s
    return s


class _Namer:
    def __init__(self):
        self.names = {}

    def __call__(self, v):
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = _name(len(self.names))
        return n


def _fmt_scalar(x):
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        return repr(x)
    return str(x)


def _fmt_param(v, namer, indent):
    if isinstance(v, Program):
        return "\n" + pp_program(v, namer=namer, indent=indent + 4)
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, (tuple, list)) and any(isinstance(x, Program) for x in v):
        inner = ", ".join(_fmt_param(x, namer, indent + 2) for x in v)
        return f"({inner})"
    if isinstance(v, np.ndarray):
        return f"array({short_dtype(v.dtype)}[{','.join(map(str, v.shape))}])"
    if hasattr(v, "pp"):
        return v.pp()
    return repr(v)


def pp_program(prog: Program, namer=None, indent=0) -> str:
    """The program as text: one equation per line (``outs = prim[params] ins``); literals that
    hold one repeated value are written inline (``0.9:f32[10]``), other constants become
    constant variables listed before the ``;``."""
    namer = namer or _Namer()
    const_vars = []
    const_names = {}

    def operand(x):
        if isinstance(x, Var):
            return namer(x)
        s = x.scalar() if x.aval.size <= 1 or _is_broadcast(x) else None
        if s is not None:
            return f"{_fmt_scalar(s)}:{x.aval.str_short()}"
        name = const_names.get(id(x.value))
        if name is None:
            name = const_names[id(x.value)] = namer(("const", id(x.value)))
            const_vars.append(f"{name}:{x.aval.str_short()}")
        return name

    # constants are named first (they come first, before the ";")
    for e in prog.eqns:
        for x in e.ins:
            if isinstance(x, Literal):
                operand(x)
    for x in prog.outs:
        if isinstance(x, Literal):
            operand(x)
    pad = " " * indent
    ins = " ".join(f"{namer(v)}:{v.aval.str_short()}" for v in prog.in_vars)
    lines = []
    for e in prog.eqns:
        args = " ".join(operand(x) for x in e.ins)
        outs = " ".join(f"{namer(v)}:{v.aval.str_short()}" for v in e.outs)
        params = ""
        shown = {k: v for k, v in e.params.items() if not k.startswith("_")}
        if shown:       # parameters named with a leading underscore are not printed
            params = "[" + " ".join(f"{k}={_fmt_param(v, namer, indent + 4)}"
                                    for k, v in shown.items()) + "]"
        lhs = f"{outs} = " if outs else ""     # (an effect has no outputs: debug_print)
        lines.append(f"{pad}    {lhs}{e.prim.name}{params} {args}".rstrip())
    outs = ", ".join(operand(x) for x in prog.outs)
    head = f"{pad}{{ lambda {' '.join(const_vars)}; {ins}. let"
    tail = f"{pad}  in ({outs}{',' if len(prog.outs) == 1 else ''}) }}"
    return "\n".join([head] + lines + [tail])


def _is_broadcast(lit):
    arr = lit.array()
    return arr.size > 0 and all(s == 0 for s in arr.strides)
