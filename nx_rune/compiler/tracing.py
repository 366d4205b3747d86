"""The tracing interpreter: run a Python function on abstract values and record a Program.

``trace(fn, args_avals, ...)`` calls ``fn`` with :class:`JitTracer` arguments (an abstract value
each: shape, dtype, weak type; no data).  Every primitive bound while the
:class:`TraceInterpreter` is the innermost interpreter becomes an equation (its output type from
``abstract.abstract_eval``).  Operands the trace does not own become part of the program:

* concrete Tensors become :class:`Literal` constants (their values are baked in);
* values of other transformations (an enclosing ``grad``'s tracers, the tracers of an enclosing
  trace) are *captured*: each becomes an extra input variable of the program, and the caller
  passes the value (``Traced.captured``).  A trace that captured values is not reused by
  ``jit``'s cache (the values belong to one call).

A traced value has no concrete value: Python branching on it (``bool``, ``int``, ``float``,
``item``, ``__index__``) raises ``ConcretizationTypeError`` naming the function, the line, the
argument the value depends on and ``static_argnums`` as the fix; conversion to NumPy raises
``TracerArrayConversionError``; a tracer used after its trace finished raises
``UnexpectedTracerError``.  Library code that needs values asks ``x._concrete_tensor()``, which
is None here.
"""
from __future__ import annotations

import contextvars
import operator
import os
import sys
import weakref
from typing import Any

import numpy as np

from nx_rune import primitives as P
from nx_rune.autodiff.core import (
    _GETITEM,
    Interpreter,
    Tracer,
    _link_view,
    _stale,
    _StaleLevel,
    _write_through,
    call_finishing,
)
from nx_rune.compiler.abstract import abstract_eval
from nx_rune.compiler.ir import AbstractValue, Eqn, Literal, Program, Var
from nx_rune.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    UnexpectedTracerError,
)
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tree_util import tree_flatten, tree_unflatten
from nx_rune.writes import EPOCH

__all__ = ["JitTracer", "TraceInterpreter", "Traced", "trace", "user_frame"]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STORAGE = frozenset(["_np", "_arr", "_buf", "_view", "view", "buffer", "strides"])


def user_frame():
    """``"file:line (function)"`` of the innermost frame outside nx_rune (the user's line)."""
    f = sys._getframe(1)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(_PKG + os.sep):
            return f"{f.f_code.co_filename}:{f.f_lineno} (in {f.f_code.co_name})"
        f = f.f_back
    return "<unknown>"


class JitTracer(ArrayBase):
    """A value traced abstractly: shape, dtype and weak type are known, values are not."""
    __slots__ = ("_interp", "var", "shape", "dtype", "_alias", "_recipe", "_wide",
                 "__weakref__")
    _links_views = True     # views follow writes as on arrays (autodiff.core, "Views of tracers")

    def __init__(self, interp, var):
        self._interp = interp
        self.var = var
        self.shape = var.aval.shape
        self.dtype = var.aval.dtype
        # a weakly typed value that stands for a Python number (a jit argument, or arithmetic
        # on those and on Python numbers) keeps it at full precision here, a tracer of the wide
        # dtype (float64, complex128, int64) whose narrowing this one is: the front end's
        # promotion and astype read it, so that the number meets a wider array unrounded,
        # as the Python number does eagerly
        self._wide = None
        self._alias = self._recipe = None

    @property
    def aval(self) -> AbstractValue:
        return self.var.aval

    @property
    def weak_type(self) -> bool:
        return self.var.aval.weak_type

    # -- no concrete value ----------------------------------------------------------------------
    def _concretization(self, what):
        raise ConcretizationTypeError(self._interp.concretization_message(self, what))

    def __bool__(self):
        self._concretization("bool() (an if, while, and/or or assert on a traced value)")

    def __int__(self):
        self._concretization("int()")

    def __float__(self):
        self._concretization("float()")

    def __complex__(self):
        self._concretization("complex()")

    def __index__(self):
        self._concretization("__index__ (a traced value used as a Python index or size)")

    def item(self):
        self._concretization("item()")

    def tolist(self):
        self._concretization("tolist()")

    def _to_numpy(self, what):
        raise TracerArrayConversionError(
            f"{what} of a value traced by {self._interp.name} (shape {self.shape}, dtype "
            f"{self.dtype}): a traced value has no data while the function is being traced. "
            f"Use nx operations (nx.sin, nx.sum, ...) instead of NumPy's, or mark the argument "
            f"static (static_argnums)")

    def numpy(self):
        return self._to_numpy("conversion to a NumPy array (x.numpy())")

    def __array__(self, dtype=None, copy=None):
        return self._to_numpy("conversion to a NumPy array (np.asarray(x), a NumPy function)")

    @property
    def __array_interface__(self):
        return self._to_numpy("conversion to a NumPy array (__array_interface__)")

    def __dlpack__(self, *args, **kwargs):
        return self._to_numpy("DLPack export")

    def __dlpack_device__(self):
        return self._to_numpy("DLPack export")

    def __repr__(self):
        # JAX's form, so that programs printing a tracer print what JAX's do:
        # JitTracer(int32[5]), JitTracer(~float32[]) for a weakly typed one; a tracer that
        # escaped its finished trace says so
        aval = self.var.aval
        state = ", finished" if self._interp.done else ""
        return (f"JitTracer({'~' if self.weak_type else ''}{np.dtype(aval.dtype).name}"
                f"[{','.join(map(str, aval.shape))}]{state})")

    __str__ = __repr__

    def __format__(self, spec):
        if spec:
            self._concretization(f"format(x, {spec!r})")
        return repr(self)

    def __reduce__(self):
        raise TypeError(f"cannot pickle a value traced by {self._interp.name}")

    # -- arithmetic on weak values carried wide -------------------------------------------------
    # Eagerly, arithmetic among Python numbers happens in Python (float64, exact ints): a jit
    # argument that was a Python number computes the same way, on its wide form, and narrows
    # the result (what asarray would make of the Python result) where it stands alone.
    def __add__(self, o):
        r = _weak_arith(self, o, operator.add)
        return ArrayBase.__add__(self, o) if r is None else r

    def __radd__(self, o):
        r = _weak_arith(self, o, _flipped(operator.add))
        return ArrayBase.__radd__(self, o) if r is None else r

    def __sub__(self, o):
        r = _weak_arith(self, o, operator.sub)
        return ArrayBase.__sub__(self, o) if r is None else r

    def __rsub__(self, o):
        r = _weak_arith(self, o, _flipped(operator.sub))
        return ArrayBase.__rsub__(self, o) if r is None else r

    def __mul__(self, o):
        r = _weak_arith(self, o, operator.mul)
        return ArrayBase.__mul__(self, o) if r is None else r

    def __rmul__(self, o):
        r = _weak_arith(self, o, _flipped(operator.mul))
        return ArrayBase.__rmul__(self, o) if r is None else r

    def __truediv__(self, o):
        r = _weak_arith(self, o, operator.truediv, True)
        return ArrayBase.__truediv__(self, o) if r is None else r

    def __rtruediv__(self, o):
        r = _weak_arith(self, o, _flipped(operator.truediv), True)
        return ArrayBase.__rtruediv__(self, o) if r is None else r

    def __pow__(self, o):
        r = _weak_arith(self, o, operator.pow)
        return ArrayBase.__pow__(self, o) if r is None else r

    def __rpow__(self, o):
        r = _weak_arith(self, o, _flipped(operator.pow))
        return ArrayBase.__rpow__(self, o) if r is None else r

    def __floordiv__(self, o):
        r = _weak_arith(self, o, operator.floordiv)
        return ArrayBase.__floordiv__(self, o) if r is None else r

    def __rfloordiv__(self, o):
        r = _weak_arith(self, o, _flipped(operator.floordiv))
        return ArrayBase.__rfloordiv__(self, o) if r is None else r

    def __mod__(self, o):
        r = _weak_arith(self, o, operator.mod)
        return ArrayBase.__mod__(self, o) if r is None else r

    def __rmod__(self, o):
        r = _weak_arith(self, o, _flipped(operator.mod))
        return ArrayBase.__rmod__(self, o) if r is None else r

    def __neg__(self):
        w = self._wide
        if w is not None and not self._interp.done:
            r = _narrowed(self._interp, -w)
            if r is not None:
                return r
        return ArrayBase.__neg__(self)

    def __abs__(self):
        w = self._wide
        if w is not None and not self._interp.done:
            r = _narrowed(self._interp, abs(w))
            if r is not None:
                return r
        return ArrayBase.__abs__(self)

    # comparisons of weak values compare the Python numbers (a bool: nothing to narrow)
    def __lt__(self, o):
        r = _weak_arith(self, o, operator.lt, compare=True)
        return ArrayBase.__lt__(self, o) if r is None else r

    def __le__(self, o):
        r = _weak_arith(self, o, operator.le, compare=True)
        return ArrayBase.__le__(self, o) if r is None else r

    def __gt__(self, o):
        r = _weak_arith(self, o, operator.gt, compare=True)
        return ArrayBase.__gt__(self, o) if r is None else r

    def __ge__(self, o):
        r = _weak_arith(self, o, operator.ge, compare=True)
        return ArrayBase.__ge__(self, o) if r is None else r

    def _weak_inplace(self, o, op, symbol, div=False):
        r = _weak_arith(self, o, op, div)
        if r is None or r.dtype != self.dtype:
            return None
        self._rebind(r, f"x {symbol} y")
        return self

    def __iadd__(self, o):
        r = self._weak_inplace(o, operator.add, "+=")
        return ArrayBase.__iadd__(self, o) if r is None else r

    def __isub__(self, o):
        r = self._weak_inplace(o, operator.sub, "-=")
        return ArrayBase.__isub__(self, o) if r is None else r

    def __imul__(self, o):
        r = self._weak_inplace(o, operator.mul, "*=")
        return ArrayBase.__imul__(self, o) if r is None else r

    def __itruediv__(self, o):
        r = self._weak_inplace(o, operator.truediv, "/=", True)
        return ArrayBase.__itruediv__(self, o) if r is None else r

    def _rebind(self, new, what="x[idx] = v"):
        """Make this tracer stand for ``new`` (same shape and dtype): ``x[idx] = v`` and
        ``x += y`` on a traced value update it functionally (the front end's in-place hook)."""
        interp = self._interp
        if interp.done:
            if isinstance(interp, _StaleLevel):
                _stale(self)
            raise UnexpectedTracerError(interp.leak_message(self))
        if new.shape != self.shape or new.dtype != self.dtype:
            raise ValueError(f"{what}: the new value has shape {new.shape} and dtype "
                             f"{new.dtype}, the traced value {self.shape} and {self.dtype}")
        self._assume(new, what)
        _write_through(self, what)

    def _assume(self, new, what):
        """Stand for ``new`` from now on."""
        interp = self._interp
        interp.wrote = True
        if not (new.__class__ is JitTracer and new._interp is interp):
            new = interp.process(P.copy_p, [new], {})
        self.var = new.var
        self._wide = new._wide if new.weak_type else None

    def _note_index(self, base, index):
        """This tracer is ``base[index]`` (the front end's basic getitem, a view on arrays)."""
        _link_view(_GETITEM, base, index, self)

    def __getattr__(self, name):
        # reached only for attributes a tracer lacks: a backend implementation reading storage
        # means the tracer escaped its trace (or its thread/context)
        try:
            interp = object.__getattribute__(self, "_interp")
        except AttributeError:
            raise AttributeError(name) from None
        if name in _STORAGE:
            if interp.done:
                raise UnexpectedTracerError(interp.leak_message(self))
            raise UnexpectedTracerError(
                f"a value traced by {interp.name} (shape {self.shape}, dtype {self.dtype}) was "
                f"used where that trace is not active (another thread or context, or a "
                f"computation outside the traced function)")
        raise AttributeError(f"JitTracer (a value traced by {interp.name}) has no attribute "
                             f"{name!r}")


def _flipped(op):
    return lambda a, b: op(b, a)


_INT64 = (-2**63, 2**63)
_F64, _C128, _I64 = np.dtype(np.float64), np.dtype(np.complex128), np.dtype(np.int64)
_PY_KIND = {int: "i", float: "f", complex: "c"}


def _weak_arith(t, o, op, div=False, compare=False):
    """``op(t, o)`` computed as Python computes it (in float64, complex128 or int64) on the wide
    forms, when ``t`` is a weak tracer carried wide and ``o`` a Python number or another such
    tracer of the same trace; None otherwise (the ordinary operator then runs).  ``div``: a
    true division (of ints too, a float); ``compare``: a comparison (its bool result as it
    is)."""
    w = t._wide
    if w is None or t._interp.done:
        return None
    c = o.__class__
    if c is JitTracer:
        if o._interp is not t._interp or o._wide is None:
            return None
        o = o._wide
        kind = o.dtype.kind
    else:
        kind = _PY_KIND.get(c)
        if kind is None or (c is int and not _INT64[0] <= o < _INT64[1]):
            return None
    kinds = (w.dtype.kind, kind)
    dt = _C128 if "c" in kinds else _F64 if ("f" in kinds or div) else _I64
    from nx_rune.frontend._core import astype, const  # (the front end imports this module)
    b = astype(o, dt) if c is JitTracer else const(o, dt)
    r = op(astype(w, dt), b)
    if compare:
        return r if r.__class__ is JitTracer and r._interp is t._interp else None
    return _narrowed(t._interp, r)


def _narrowed(interp, r):
    """The weak tracer standing for the wide result ``r`` of arithmetic on Python numbers (a
    tracer of ``interp``): ``r`` narrowed to the default dtype of its kind, weakly typed,
    carrying ``r``.  None when ``r`` is no such value (the caller then computes the narrow
    way)."""
    if not (r.__class__ is JitTracer and r._interp is interp):
        return None
    from nx_rune import dtypes
    kind = r.dtype.kind
    narrow = (dtypes.default_float() if kind == "f" else dtypes.default_complex() if kind == "c"
              else dtypes.default_int() if kind == "i" else None)
    if narrow is None:
        return None
    out = interp.add_eqn(P.cast_p, {"dtype": narrow}, [r],
                         [AbstractValue(r.shape, narrow, True)])[0]
    out._wide = r
    return out


def _copying_custom(cf, written):
    """``cf`` (a custom_vjp or custom_jvp function) applied to copies of the argument leaves
    ``written`` (the leaves its function writes in place).  The equation that records a call
    of ``cf`` is a pure operation: the trace records the writes themselves (the written
    values, inlined after it); a later evaluation of the equation (differentiation,
    batching, inlining into another trace) must not write its operands a second time."""
    from nx_rune.autodiff.custom import custom_jvp, custom_vjp
    from nx_rune.frontend import copy
    written = frozenset(written)

    def on_copies(fn):
        def run(*args, **kwargs):
            leaves, td = tree_flatten(tuple(args))
            leaves = [copy(x) if k in written else x for k, x in enumerate(leaves)]
            return fn(*tree_unflatten(td, leaves), **kwargs)
        return run

    if isinstance(cf, custom_vjp):
        new = custom_vjp(on_copies(cf.fun))
        new.defvjp(on_copies(cf.fwd), cf.bwd)
    else:
        new = custom_jvp(on_copies(cf.fun))
        rule = cf.jvp_rule

        def jvp_rule(primals, tangents):
            return rule(*on_copies(lambda *p: (p,))(*primals), tangents)
        new.defjvp(jvp_rule)
    new.__name__ = getattr(cf, "__name__", "custom")
    return new


# id -> Tensor of the copies _snapshot made (read-only memory of their own: a program that is
# inlined into another trace passes its constants on without a second copy)
_SNAPSHOTS = weakref.WeakValueDictionary()


def _snapshot(t):
    """A read-only copy of concrete Tensor ``t``'s values; an axis of stride 0 (a broadcast,
    a Python scalar the front end made a constant of) keeps stride 0: one copy of what it
    repeats."""
    if _SNAPSHOTS.get(id(t)) is t:
        return t
    arr = t._np()
    if arr.size and any(s == 0 and n > 1 for n, s in zip(arr.shape, arr.strides)):
        part = arr[tuple(slice(0, 1) if s == 0 else slice(None)
                         for n, s in zip(arr.shape, arr.strides))]
        snap = np.broadcast_to(np.array(part, copy=True, order="C"), arr.shape)
    else:
        snap = np.array(arr, copy=True, order="C")
        snap.flags.writeable = False
    out = Tensor._wrap(snap)
    _SNAPSHOTS[id(out)] = out
    return out


class TraceInterpreter(Interpreter):
    """Records every primitive bound while it is the innermost interpreter (see module doc).

    ``fname``: the traced function's name (for messages); ``arg_names``: one description per
    input variable (``"argument x"``); ``hint``: what the messages suggest (static_argnums)."""
    __slots__ = ("eqns", "in_vars", "literals", "captured", "captured_vars", "fname",
                 "arg_names", "hint", "layout_roots", "wrote")
    # the operation recording custom_vjp/custom_jvp calls (nx_rune.compiler.control installs
    # it: the control-flow module builds on this one)
    custom_call_op: Any = None

    def __init__(self, name="jit", fname="<function>", hint=None):
        Interpreter.__init__(self, name, None)
        self.stages = True          # operations on constants are recorded too (bind)
        self.eqns = []
        self.in_vars = []
        self.literals = {}
        self.captured = []          # values passed as the extra inputs
        self.captured_vars = {}     # id(value) -> Var
        self.fname = fname
        self.arg_names = {}
        self.hint = hint
        # inputs whose layout a traced reshape's view-or-copy decision assumed (C-contiguous),
        # and whether anything was written in place: see Traced.layout_assumed
        self.layout_roots = set()
        self.wrote = False

    def note_layout_assumed(self, t):
        """A reshape's view-or-copy decision followed movements back to ``t`` and assumed it
        C-contiguous (the autodiff layer's view links ask this)."""
        self.layout_roots.add(id(t))

    def new_input(self, aval, what=None):
        v = Var(aval)
        self.in_vars.append(v)
        if what:
            self.arg_names[v] = what
        return JitTracer(self, v)

    # -- operands ----------------------------------------------------------------------------
    def literal(self, t):
        """The constant operand for concrete Tensor ``t``: a copy of its values as they are
        now (jit's documented semantics, JAX's: a concrete array the function reads is
        captured by value when the function is traced; writes into it afterwards do not reach
        the compiled program, nor its constant folding).  A write into ``t`` during the trace
        (``writes.EPOCH`` moved) gives later uses a new copy, as the eager function would read
        the new values."""
        entry = self.literals.get(id(t))
        epoch = EPOCH[0]
        if entry is not None and entry[0] is t:
            if entry[1] == epoch:
                return entry[2]
            snap = _snapshot(t)
            lit = entry[2]
            if snap._np().tobytes() == lit.array().tobytes():     # (the write was elsewhere)
                self.literals[id(t)] = (t, epoch, lit)
                return lit
        else:
            snap = _snapshot(t)
        # a constant holding one value (0-d, or broadcast with stride 0) is what the front
        # end makes of a Python scalar: weakly typed, so that results of weak operands and
        # such constants stay weak (as JAX's x * 2 for a weak x)
        arr = snap._np()
        weak = arr.ndim == 0 or (arr.size > 0 and not any(arr.strides))
        lit = Literal(snap, AbstractValue(t.shape, t.dtype, weak))
        self.literals[id(t)] = (t, epoch, lit)      # (t kept alive: its id stays unique)
        return lit

    def capture(self, x):
        v = self.captured_vars.get(id(x))
        if v is not None:
            return v
        if isinstance(x, Tracer) and x._interp.done:
            raise UnexpectedTracerError(
                f"a tracer of a finished {x._interp.name} transformation was used (shape "
                f"{x.shape}, dtype {x.dtype}) while tracing {self.fname}: a value computed "
                f"inside a transformed function escaped it")
        if isinstance(x, JitTracer) and x._interp.done:
            if isinstance(x._interp, _StaleLevel):
                _stale(x)
            raise UnexpectedTracerError(x._interp.leak_message(x))
        v = Var(AbstractValue(x.shape, x.dtype, getattr(x, "weak_type", False)))
        self.captured_vars[id(x)] = v
        self.captured.append(x)
        return v

    def operand(self, a):
        if a.__class__ is JitTracer and a._interp is self:
            return a.var
        if isinstance(a, Tensor):
            return self.literal(a)
        if isinstance(a, ArrayBase):
            return self.capture(a)
        raise TypeError(f"{self.fname}: an operand of type {type(a).__name__} reached a "
                        f"primitive (expected an array)")

    def process(self, prim, args, params):
        ins = [self.operand(a) for a in args]
        aval = abstract_eval(prim, [x.aval for x in ins], params)
        out = Var(aval)
        self.eqns.append(Eqn(prim, params, ins, [out]))
        return JitTracer(self, out)

    def add_eqn(self, prim, params, args, out_avals):
        """Record a multi-output equation (control flow); returns one tracer per output."""
        ins = [self.operand(a) for a in args]
        outs = [Var(a) for a in out_avals]
        self.eqns.append(Eqn(prim, params, ins, outs))
        return [JitTracer(self, v) for v in outs]

    def custom_call(self, cf, args, kwargs):
        """Record a call of a ``custom_vjp``/``custom_jvp`` function as one equation that keeps
        the function (so that differentiating the program applies its rules); the primal is
        traced as a sub-program (what the executor runs)."""
        from nx_rune.frontend import asarray
        leaves, in_tree = tree_flatten(tuple(args))
        leaves = [x if isinstance(x, ArrayBase) else asarray(x) for x in leaves]
        avals = [AbstractValue(x.shape, x.dtype, getattr(x, "weak_type", False))
                 for x in leaves]
        _, full = tree_flatten((tree_unflatten(in_tree, [0] * len(leaves)), {}))
        name = getattr(cf, "__name__", "custom")
        t = trace(lambda *a: cf.fun(*a, **kwargs), avals, full, name=self.name, fname=name,
                  hint=self.hint, write_back=True)
        prog = t.program
        n = len(prog.outs) - len(t.writes)
        if t.writes:        # the call's own outputs; the written arguments' values below
            prog = Program(prog.in_vars, prog.eqns, prog.outs[:n])
        params = {"name": name, "primal": prog, "_kwargs": kwargs,
                  "_fun": _copying_custom(cf, t.writes) if t.writes else cf,
                  "_in_tree": in_tree, "_n_args": len(leaves)}
        outs = self.add_eqn(self.custom_call_op, params, leaves + t.captured, prog.out_avals)
        if t.writes:
            # the function wrote into arguments in place: their final values (the primal's
            # computation, inlined) are written into them here, as the eager call does
            from nx_rune.autodiff.core import write_back
            from nx_rune.compiler.interpret import eval_program
            finals = eval_program(Program(t.program.in_vars, t.program.eqns,
                                          t.program.outs[n:]), leaves + t.captured)
            for j, v in zip(t.writes, finals):
                write_back(leaves[j], v, f"{self.name}: custom function {name}: argument "
                                         f"leaf {j}")
        return tree_unflatten(t.out_tree, outs)

    # -- messages ----------------------------------------------------------------------------
    def _depends_on(self, var):
        """Descriptions of the inputs ``var`` depends on."""
        producer = {}
        for e in self.eqns:
            for o in e.outs:
                producer[o] = e
        seen, stack, found = set(), [var], []
        while stack:
            v = stack.pop()
            if v in seen or not isinstance(v, Var):
                continue
            seen.add(v)
            if v in self.arg_names:
                found.append(self.arg_names[v])
            e = producer.get(v)
            if e is not None:
                stack.extend(e.ins)
        return sorted(set(found))

    def concretization_message(self, t, what):
        deps = self._depends_on(t.var)
        dep = f" It depends on {', '.join(deps)}." if deps else ""
        hint = self.hint or ("mark the argument static (jit(f, static_argnums=...) or "
                             "static_argnames=...)")
        return (f"{what} needs the concrete value of a value traced by {self.name} (shape "
                f"{t.shape}, dtype {t.dtype}) while tracing {self.fname}, at "
                f"{user_frame()}.{dep} Under {self.name} only shapes and dtypes are known. "
                f"Fixes: {hint}; or express the branch with nx.where / nx.lax.cond "
                f"(nx.lax.while_loop, nx.lax.fori_loop for loops)")

    def leak_message(self, t):
        return (f"a value traced by {self.name} while tracing {self.fname} (shape {t.shape}, "
                f"dtype {t.dtype}) was used after that trace finished: it leaked out of the "
                f"traced function (stored in a global, a closure, an attribute or a side "
                f"output).  Return it from the function instead")


class Traced:
    """A traced function: its ``program``, the input and output tree structures, and the
    values captured from other transformations (passed as the last inputs)."""
    __slots__ = ("program", "in_tree", "out_tree", "captured", "n_explicit", "cache", "writes",
                 "linked", "layout_assumed")

    def __init__(self, program, in_tree, out_tree, captured, n_explicit, writes=()):
        self.program = program
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.captured = captured
        self.n_explicit = n_explicit
        self.cache = {}     # derived functions (executable, vjp, jvp) per use
        # the input leaves the function wrote in place (``trace(write_back=True)``): the
        # program's last ``len(writes)`` outputs are their final values, in this order
        self.writes = writes
        # outputs that are views (by the view links) of written arguments: see _linked_views
        self.linked = ()
        # input leaves assumed C-contiguous by a reshape's view-or-copy decision in a function
        # that writes in place: called with another layout, the eager function decides
        self.layout_assumed = ()

    @property
    def eqns(self):
        """The program's equations."""
        return self.program.eqns

    @property
    def in_avals(self):
        """Abstract values of the inputs (the arguments' leaves, then captured values)."""
        return self.program.in_avals

    @property
    def out_avals(self):
        """Abstract values of the outputs (leaves of ``out_tree``, then the written
        arguments' final values: ``writes``)."""
        return [x.aval for x in self.program.outs]

    @property
    def jaxpr(self):
        """The traced program (JAX's ``Traced.jaxpr``; it prints as ``make_jaxpr``)."""
        return self

    @property
    def out_info(self):
        """The outputs' shapes and dtypes, a pytree of ``nx.ShapeDtypeStruct``."""
        from nx_rune.compiler.stages import out_info
        return out_info(self)

    def lower(self):
        """The ``Lowered`` stage of a trace made by ``jit(f).trace(*args)``."""
        low = self.cache.get("lowered")
        if low is None:
            raise TypeError("lower: only a trace made by jit(f).trace(*args) can be lowered "
                            "(use jit(f).lower(*args))")
        return low

    def __str__(self):
        return str(self.program)

    __repr__ = __str__


def _out_operand(interp, x, fname, i):
    if isinstance(x, ArrayBase):
        return interp.operand(x)
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        from nx_rune.frontend import asarray
        return interp.literal(asarray(x))
    raise TypeError(f"{fname}: output leaf {i} has type {type(x).__name__}, which is not an "
                    f"array; return arrays (or numbers) in tuples, lists and dicts")


# Whether the function being traced made a choice by the size of a vmap batch it cannot see
# (nx.random's samplers follow XLA:CPU, which hands a reduction to YNNPACK from 4,096 elements
# of the whole batch): a jitted call of it under vmap then traces the function again under the
# vmap (compiler/batching.py) instead of batching the program traced for one example.
_SIZE_CHOICE: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "nx_rune_size_choice", default=None)


def mark_batch_size_choice() -> None:
    """Record that the function being traced (if any) chose by the vmap batch's size."""
    flag = _SIZE_CHOICE.get()
    if flag is not None:
        flag[0] = True


def flat_function(fn, in_tree):
    """``fn`` as a function of the leaves of its arguments (``in_tree``: their structure,
    ``(args, kwargs)``) returning the leaves of its outputs (compiler/batching.py's call rule
    traces it again under a vmap)."""
    def flat(*leaves):
        args, kwargs = tree_unflatten(in_tree, list(leaves))
        return tree_flatten(fn(*args, **kwargs))[0]
    return flat


def trace(fn, in_avals, in_tree, *, name="jit", fname=None, arg_names=None, hint=None,
          kwargs_tree=None, narrow=None, write_back=False) -> Traced:
    """Trace ``fn(*args)`` where ``args = tree_unflatten(in_tree, leaves)`` and each leaf is a
    tracer of the matching ``in_avals`` entry (``arg_names``: one description per leaf, for
    messages).  ``narrow``: leaf index -> dtype for weak inputs carried wide (a Python number
    passed at full precision): ``fn`` sees the input cast to that dtype, weakly typed and
    carrying the wide input (``JitTracer._wide``).  ``write_back``: an input leaf that ``fn``
    wrote in place (``x += 1``, ``x[i] = v``, a write through a view of it: its tracer now
    stands for a new value) gets its final value as one more output of the program, after
    ``fn``'s outputs (``Traced.writes`` lists those leaves), so that the caller can write it
    into the argument as the eager call would have; a leaf narrowed from a Python number is
    never written back (a number is immutable).  Returns a :class:`Traced`."""
    fname = fname or getattr(fn, "__name__", repr(fn))
    interp = TraceInterpreter(name, fname, hint)
    names = arg_names or [None] * len(in_avals)
    leaves = [interp.new_input(a, n) for a, n in zip(in_avals, names)]
    if narrow:
        for j, dt in narrow.items():
            wide = leaves[j]
            t = interp.add_eqn(P.cast_p, {"dtype": np.dtype(dt)}, [wide],
                               [AbstractValue(wide.shape, dt, True)])[0]
            t._wide = wide
            if wide.var in interp.arg_names:
                interp.arg_names[t.var] = interp.arg_names[wide.var]
            leaves[j] = t
    first = [t.var for t in leaves]
    args, kwargs = tree_unflatten(in_tree, leaves)

    def run(*args, **kwargs):
        return _relink_output_views(fn(*args, **kwargs), leaves)

    outer_choice = _SIZE_CHOICE.get()
    choice = [False]
    token = _SIZE_CHOICE.set(choice)
    try:
        out = call_finishing(interp, run, *args, **kwargs)
    finally:
        _SIZE_CHOICE.reset(token)
    if choice[0] and outer_choice is not None:
        outer_choice[0] = True
    outs, out_tree = tree_flatten(out)
    out_ops = [_out_operand(interp, o, fname, i) for i, o in enumerate(outs)]
    writes: tuple[int, ...] = ()
    linked = ()
    if write_back:
        writes = tuple(j for j, t in enumerate(leaves)
                       if t.var is not first[j] and not (narrow and j in narrow))
        out_ops += [leaves[j].var for j in writes]
        if writes:
            linked = _linked_views(outs, {id(leaves[j]): j for j in writes})
    in_vars = interp.in_vars + [interp.captured_vars[id(c)] for c in interp.captured]
    prog = Program(in_vars, interp.eqns, out_ops)
    traced = Traced(prog, in_tree, out_tree, list(interp.captured), len(leaves), writes)
    traced.linked = linked
    if choice[0]:
        traced.cache["batch_size_choice"] = True
    if interp.wrote and interp.layout_roots:
        traced.layout_assumed = tuple(j for j, t in enumerate(leaves)
                                      if id(t) in interp.layout_roots)
    return traced


def _relink_output_views(out, leaves):
    """``out`` with each output that is, by the view links, a view of another output remade
    from that output (in the trace, by the same movements).  Eagerly the two share memory;
    after a write through the view (``v = y[::2]; v += 1; return y, v``) the view's traced
    value is a computed one, and the program alone would return it in new memory.  A view of
    an argument is left as it is: an unwritten argument's views are views in the program, and
    a written argument's are rebuilt after the call (``_linked_views``)."""
    flat, tree = tree_flatten(out)
    if not any(getattr(o, "_recipe", None) is not None for o in flat):
        return out
    position = {}
    for i, o in enumerate(flat):
        if isinstance(o, JitTracer):
            position.setdefault(id(o), i)
    inputs = {id(t) for t in leaves}
    done = {}

    def resolve(i):
        if i in done:
            return done[i]
        o = done[i] = flat[i]       # a cycle (none is expected) ends here
        chain, t = [], o
        while True:
            rec = getattr(t, "_recipe", None)
            if rec is None or id(t) in inputs:
                return o
            kind, params, t = rec
            chain.append((kind, params))
            if id(t) in inputs:
                return o
            if id(t) in position:
                break
        from nx_rune.frontend.indexing import getitem
        v = resolve(position[id(t)])
        for kind, params in reversed(chain):
            v = getitem(v, params) if kind is _GETITEM else P.bind(kind, v, **params)
        done[i] = v
        return v

    new = [resolve(i) for i in range(len(flat))]
    if all(a is b for a, b in zip(new, flat)):
        return out
    return tree_unflatten(tree, new)


def _linked_views(outs, written):
    """The outputs that are still views of a written argument's tracer (``written``: id of
    the leaf tracer -> its position), as the view links that followed the writes record them:
    ``((i, j, chain), ...)``, output ``i`` made from argument ``j`` by ``chain`` (``(kind,
    params)`` from the argument on; kind a movement primitive or the front end's getitem).
    Eagerly such an output is a view of the argument, whatever was written through it."""
    found = []
    for i, o in enumerate(outs):
        chain, t = [], o
        while id(t) not in written:
            rec = getattr(t, "_recipe", None)
            if rec is None:
                break
            kind, params, t = rec
            chain.append((kind, params))
        else:
            if chain:
                found.append((i, written[id(t)], tuple(reversed(chain))))
    return tuple(found)
