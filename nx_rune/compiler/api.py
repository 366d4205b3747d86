"""``nx.jit`` and ``nx.make_jaxpr``.

``jit(fun)`` traces ``fun`` once per distinct signature (argument tree structure; each array
leaf's shape, dtype and weak type; the static arguments' values) into a Program, optimizes it
(``passes.optimize``) and compiles it (``executor``); later calls with that signature run the
compiled program.  Python side effects in ``fun`` happen while tracing only.

How a call runs depends on the transformations active around it (the innermost one that
matters decides, see :func:`call_traced`):

* none: the compiled program runs on the arrays;
* an enclosing trace (``jit`` inside ``jit``, ``make_jaxpr``, the body of a ``lax`` loop): the
  traced program is evaluated through ``bind`` into the enclosing trace (inlined);
* ``grad``/``vjp``/``linearize`` (a tape owning an argument): the primal runs compiled one level
  down and the tape records one entry whose VJP is another jitted function, the program's VJP
  (traced once per signature; it is jitted, so differentiating it again works the same way);
* ``jvp`` (forward mode owning an argument): the program's JVP, jitted, runs one level down;
* ``vmap`` (a batch interpreter owning an argument): ``CALL_RULES[BatchInterpreter]``
  (``compiler/batching.py``): the program's batched form, traced once per (program, batched
  inputs, batch size) and jitted, runs one level down on the whole batch;
* any other transformation owning an argument: a rule registered in
  ``CALL_RULES[type(interpreter)]``, else the program is evaluated through ``bind`` under it
  (correct, not compiled).

``CALL_RULES[type] = rule(interp, traced, values) -> outputs`` where ``values`` are the
program's inputs (explicit leaves, then ``traced.captured``) and the rule returns one value per
``traced.program.outs``.  The ``lax`` operations take ``CONTROL_RULES[(op name,
type(interp))]`` the same way (for vmap: a batched scan is a scan of the batched body; a cond
with a batched predicate runs both branches and a ``where``; see ``compiler/batching.py``).
"""
from __future__ import annotations

import functools
import inspect
import operator
import sys
from typing import Any, Callable, Sequence

import numpy as np

from nx_rune import primitives as P
from nx_rune._kernels.quiet import QUIET_ERRORS, rerun_quietly
from nx_rune._kernels.view import View
from nx_rune.autodiff.api import jvp as _jvp
from nx_rune.autodiff.api import vjp as _vjp
from nx_rune.autodiff.batching import AXIS_KEY
from nx_rune.autodiff.core import (
    _GETITEM,
    JVPInterpreter,
    JVPTracer,
    NoGradInterpreter,
    Tape,
    Tracer,
    alias_error,
    concrete,
    is_inexact,
    write_back,
    written_alias,
)
from nx_rune.compiler.dispatch import find_owner
from nx_rune.compiler.dispatch import under as _under
from nx_rune.compiler.effects import strip_effects
from nx_rune.compiler.interpret import eval_program
from nx_rune.compiler.ir import AbstractValue
from nx_rune.compiler.passes.outputs import rebuild, written_views
from nx_rune.compiler.stages import Lowered, ShapeDtypeStruct
from nx_rune.compiler.tracing import (
    JitTracer,
    Traced,
    TraceInterpreter,
    flat_function,
    mark_batch_size_choice,
    trace,
)
from nx_rune.config import numpy_promotion, x64_enabled
from nx_rune.dtypes import scalar_dtype
from nx_rune.errors import DonatedArrayError, UnexpectedTracerError
from nx_rune.frontend import asarray, zeros_like_t
from nx_rune.frontend.indexing import getitem as _getitem
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["jit", "make_jaxpr", "eval_shape", "JitFunction", "CALL_RULES", "call_traced",
           "find_owner"]

_var = P._interpreter
_SCALARS = (bool, int, float, complex)
# interpreter type -> rule(interp, traced, values) -> list of output values (see module doc)
CALL_RULES: dict = {}


# -- arguments -------------------------------------------------------------------------------------

def _norm_nums(nums, what, fname):
    if nums is None:
        return ()
    if isinstance(nums, (int, np.integer)) and not isinstance(nums, (bool, np.bool_)):
        nums = (nums,)
    try:
        out = tuple(operator.index(n) for n in nums)
        if any(isinstance(n, (bool, np.bool_)) for n in nums):
            raise TypeError
    except TypeError:
        raise TypeError(f"jit({fname}): {what} must be an int or a sequence of ints, got "
                        f"{nums!r}") from None
    return out


def _norm_names(names, fname, what="static_argnames"):
    if names is None:
        return ()
    if isinstance(names, str):
        return (names,)
    try:
        out = tuple(names)
    except TypeError:
        out = (names,)
    for n in out:
        if not isinstance(n, str):
            raise TypeError(f"jit({fname}): {what} must be a str or a sequence of "
                            f"str, got {names!r}")
    return out


# the dtype a weakly typed value is carried in (what a Python number holds exactly)
_WIDE = {"f": np.dtype(np.float64), "c": np.dtype(np.complex128), "i": np.dtype(np.int64)}


def _scalar_leaf(x):
    """``(value, key)`` of a Python number argument.  It is weakly typed, as eagerly: its key
    has the dtype it gets alone (``asarray``'s: float32 with x64 off), but its value is passed
    at full precision (float64, complex128, int64: what Python holds) and the program narrows
    it where it stands alone (``trace``'s ``narrow``), so that where it meets a wider array
    (``float64 array * 0.1``, ``* 1e300``) it is not rounded first, exactly as eagerly."""
    c = x.__class__
    if c is float or c is complex or (c is int and -2**63 <= x < 2**63):
        dt = scalar_dtype(x)            # (asarray's dtype, without its overflow warning)
        wide = _WIDE[dt.kind]
        if wide != dt:
            return Tensor._wrap(np.array(x, dtype=wide)), ((), dt, True, wide)
    t = asarray(x)
    return t, ((), t.dtype, True)


def _leaf_value(x, what):
    """``(value, key)`` of one dynamic leaf: the value passed on (an array) and its signature
    (shape, dtype, weak type; for a weak value carried wider, the carrier's dtype)."""
    if isinstance(x, ArrayBase):
        weak = bool(getattr(x, "weak_type", False))
        if weak:
            wide = getattr(x, "_wide", None)     # a traced weak value of an enclosing trace
            if wide is not None:
                return wide, (x.shape, x.dtype, True, wide.dtype)
        return x, (x.shape, x.dtype, weak)
    if isinstance(x, _SCALARS):
        return _scalar_leaf(x)
    if isinstance(x, (np.ndarray, np.generic)):
        t = asarray(x)
        return t, (t.shape, t.dtype, False)
    raise TypeError(f"{what} has type {type(x).__name__}, which is not an array (a Tensor, a "
                    f"NumPy array or a Python number): mark the argument static "
                    f"(static_argnums / static_argnames) if it is a Python value the function "
                    f"branches on")


_FAST_TREE = object()     # tags the cache keys of _fast_signature


def _fast_signature(x, leaves):
    """The cache key of a call's positional arguments ``x`` when they are tuples, lists and
    dicts (sortable keys) of Tensors and Python floats and ints, appending the leaves' values to
    ``leaves`` in tree_flatten's order (a number as asarray makes it, as the general path does);
    None for anything else (the general path then decides).  No PyTreeDef is built: a call
    that hits the cache never needs one."""
    c = x.__class__
    if c is Tensor:
        leaves.append(x)
        return (x.shape, x.dtype)
    if c is tuple or c is list:
        out = [c]
        for v in x:
            sig = _fast_signature(v, leaves)
            if sig is None:
                return None
            out.append(sig)
        return tuple(out)
    if c is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            return None
        out = [dict, keys]
        for k in keys:
            sig = _fast_signature(x[k], leaves)
            if sig is None:
                return None
            out.append(sig)
        return tuple(out)
    if c is float or c is int:
        t, key = _scalar_leaf(x)
        leaves.append(t)
        return key
    return None


def _typed(v):
    """A static value as a cache key: the value with its type (``1`` and ``1.0`` are equal and
    hash alike, yet a function may make an int32 or a float32 of them), the elements of tuples
    and lists too."""
    c = v.__class__
    if c is tuple or c is list:
        return (c, tuple(_typed(e) for e in v))
    return (c, v)


def _concrete_arrays(values):
    out = []
    for v in values:
        if isinstance(v, Tracer):
            if v._interp.done:
                raise UnexpectedTracerError(
                    f"a tracer of a finished {v._interp.name} transformation was passed to a "
                    f"jitted function (shape {v.shape}, dtype {v.dtype}): it escaped its "
                    f"transformation")
            v = concrete(v)
        if isinstance(v, JitTracer):
            raise UnexpectedTracerError(v._interp.leak_message(v) if v._interp.done else
                                        f"a value traced by {v._interp.name} was passed to a "
                                        f"jitted function outside its trace")
        out.append(v)
    return out


# -- running a traced program ----------------------------------------------------------------------

def call_traced(traced: Traced, values, executable=None):
    """The outputs (a flat list) of ``traced``'s program on ``values`` (explicit inputs then the
    captured ones) under the active transformations."""
    owner = find_owner(values)
    if owner is None:
        if AXIS_KEY.get():
            # collectives over a named vmap that batches none of the values: that level
            # runs the program (batched), so they see its axis
            from nx_rune.compiler.collectives import binding_level
            level = binding_level(traced.program)
            if level is not None:
                return CALL_RULES[type(level)](level, traced, values)
        exe = executable() if executable is not None else compiled(traced)
        return exe(values)
    if traced.cache.get("batch_size_choice"):
        mark_batch_size_choice()   # an enclosing trace inherits it (not on the concrete path)
    if isinstance(owner, TraceInterpreter):
        return eval_program(traced.program, values)
    if isinstance(owner, NoGradInterpreter):
        exe = executable() if executable is not None else compiled(traced)
        return exe(_concrete_arrays(values))
    if isinstance(owner, Tape):
        return _tape_rule(owner, traced, values)
    if isinstance(owner, JVPInterpreter):
        return _jvp_rule(owner, traced, values)
    rule = CALL_RULES.get(type(owner))
    if rule is not None:
        return rule(owner, traced, values)
    return eval_program(traced.program, values)


def compiled(traced: Traced, donate=()):
    """The compiled executable of ``traced`` (built once; ``donate``: input positions whose
    buffers the program may overwrite)."""
    key = ("exe", tuple(donate))
    exe = traced.cache.get(key)
    if exe is None:
        from nx_rune.compiler.pipeline import Executable
        exe = traced.cache[key] = Executable(traced, donate)
    return exe


def _ours(v, interp):
    return isinstance(v, Tracer) and v._interp is interp


def _zeros_for(x):
    return zeros_like_t(x)


def derived(traced: Traced, kind, given=None, effects=True):
    """The jitted VJP (``kind="vjp"``: ``f(primals, cotangents) -> cotangents``) or JVP
    (``"jvp"``: ``f(primals, tangents) -> (outputs, tangents)``) of ``traced``'s program.

    ``given`` (a tuple of bools, one per output for ``"vjp"``, per input for ``"jvp"``) says
    which cotangents/tangents are passed; the others are symbolic zeros, as eagerly: a zero
    tangent is never instantiated and multiplied (``0 * inf`` would be NaN where eager
    differentiation gives 0).

    ``effects=False``: the program's effects (``nx.debug.print``) are left out, for a
    derivative computed after the primal call already ran them (a VJP recomputes the primal:
    it must not print again)."""
    key = kind if given is None else (kind, given)
    if not effects:
        key = (key, "no effects")
    fn = traced.cache.get(key)
    if fn is None:
        prog = traced.program if effects else strip_effects(traced.program)

        def body(*xs):
            return eval_program(prog, list(xs))

        if kind == "vjp":
            def vjp_of_program(primals, cts):
                _, pull = _vjp(body, *primals)
                if given is not None:
                    it = iter(cts)
                    cts = [next(it) if g else None for g in given]
                return list(pull(list(cts)))
            fn = JitFunction(vjp_of_program, name=f"vjp of {_fname(traced)}")
        else:
            def jvp_of_program(primals, tangents):
                if given is None:
                    return _jvp(body, tuple(primals), tuple(tangents))
                idx = [i for i, g in enumerate(given) if g]

                def part(*d):
                    xs = list(primals)
                    for i, v in zip(idx, d):
                        xs[i] = v
                    return body(*xs)
                return _jvp(part, tuple(primals[i] for i in idx), tuple(tangents))
            fn = JitFunction(jvp_of_program, name=f"jvp of {_fname(traced)}")
        traced.cache[key] = fn
    return fn


def _fname(traced):
    return traced.cache.get("name", "a jitted function")


class _JitTapeEntry:
    """A tape entry for one call of a jitted program (``Tape.record_multi``); like a custom
    rule's entry it keeps the operands (``primals``) and has no user function (``cf``)."""
    __slots__ = ("traced", "primals", "outs", "idxs")
    cf = None

    def __init__(self, traced, primals, outs):
        self.traced, self.primals, self.outs = traced, primals, outs
        self.idxs = None

    def vjp(self, gs):
        given = tuple(g is not None for g in gs)
        if not any(given):
            return [None] * len(self.primals)
        res = derived(self.traced, "vjp", given, effects=False)(list(self.primals),
                                                 [g for g in gs if g is not None])
        return [c if c is not None and is_inexact(p.dtype) else None
                for c, p in zip(res, self.primals)]

    def jvp(self, ts):
        given = tuple(t is not None for t in ts)
        if not any(given):
            return [_zeros_for(o) for o in self.outs]
        _, touts = derived(self.traced, "jvp", given, effects=False)(list(self.primals),
                                                      [t for t in ts if t is not None])
        return list(touts)


def _tape_rule(tape, traced, values):
    primals = [v.primal if _ours(v, tape) else v for v in values]
    idxs = [v._idx if _ours(v, tape) else 0 for v in values]
    outs = _under(tape.parent, call_traced, traced, primals)
    return tape.record_multi(_JitTapeEntry(traced, primals, outs), idxs, outs)


def _jvp_rule(interp, traced, values):
    primals = [v.primal if _ours(v, interp) else v for v in values]
    given = tuple(_ours(v, interp) for v in values)
    tans = [v.tangent for v in values if _ours(v, interp)]
    outs, touts = _under(interp.parent, derived(traced, "jvp", given), primals, tans)
    return [JVPTracer(interp, o, t) if is_inexact(o.dtype) else o for o, t in zip(outs, touts)]


# -- jit -------------------------------------------------------------------------------------------

class CacheInfo(tuple):
    """``(hits, misses, size)`` of a jitted function's cache (misses: traces)."""
    __slots__ = ()

    def __new__(cls, hits, misses, size):
        return tuple.__new__(cls, (hits, misses, size))

    hits = property(lambda self: self[0])
    misses = property(lambda self: self[1])
    size = property(lambda self: self[2])

    def __repr__(self):
        return f"CacheInfo(hits={self[0]}, misses={self[1]}, size={self[2]})"


class JitFunction:
    """A jitted function (see :func:`jit`)."""
    # The private state lives in slots, not in the instance dict: functools.update_wrapper
    # copies a wrapped function's __dict__ into its wrapper, so state kept there would travel
    # into a jit of a wrapper (grad, vmap, a user's decorator made with functools.wraps around
    # a jitted function) and replace that jit's own function with the inner one.  Slots are
    # neither copied out of this object nor overridden by what is copied into its __dict__.
    __slots__ = ("_fun", "_name", "_static_nums", "_static_names", "_donate", "_params",
                 "_cache", "_hits", "_misses", "_fast", "__dict__", "__weakref__")

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 name=None, donate_argnames=None):
        if not callable(fun):
            raise TypeError(f"jit: fun must be callable, got {type(fun).__name__}")
        self._fun = fun
        self._name = name or getattr(fun, "__name__", None) or repr(fun)
        try:
            functools.update_wrapper(self, fun)
        except AttributeError:
            pass
        self._static_nums = _norm_nums(static_argnums, "static_argnums", self._name)
        self._static_names = _norm_names(static_argnames, self._name)
        self._donate = _norm_nums(donate_argnums, "donate_argnums", self._name)
        donate_names = _norm_names(donate_argnames, self._name, "donate_argnames")
        self._params = None
        try:
            sig = inspect.signature(fun)
            self._params = [p for p in sig.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            pass
        if donate_names and self._params is None:
            raise ValueError(f"jit({self._name}): donate_argnames needs a function whose "
                             f"signature can be read (inspect.signature failed); use "
                             f"donate_argnums")
        if self._params is not None:
            n = len(self._params)
            has_var = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
            for i in self._static_nums + self._donate:
                if not has_var and not -n <= i < n:
                    raise ValueError(f"jit({self._name}): argnum {i} is out of range for a "
                                     f"function of {n} positional parameters")
            names = {p.name: i for i, p in enumerate(self._params)}
            for d in donate_names:
                if d not in names:
                    raise ValueError(f"jit({self._name}): donate_argnames {d!r} is not a "
                                     f"positional parameter of the function (its parameters: "
                                     f"{', '.join(names) or 'none'})")
            self._donate = tuple(set(self._donate) | {names[d] for d in donate_names})
            # a static parameter is static by position and by name alike
            self._static_names = tuple(set(self._static_names) | {
                self._params[i].name for i in self._static_nums if -n <= i < n})
            self._static_nums = tuple(set(i % n if -n <= i < n else i
                                          for i in self._static_nums)
                                      | {names[s] for s in self._static_names if s in names})
            self._donate = tuple(i % n if -n <= i < n else i for i in self._donate)
        if set(self._static_nums) & set(self._donate):
            raise ValueError(f"jit({self._name}): an argument cannot be both static and donated "
                             f"(static_argnums {self._static_nums}, donate_argnums "
                             f"{self._donate})")
        self._cache = {}
        self._hits = 0
        self._misses = 0
        self._fast = not self._static_nums and not self._static_names

    def __reduce__(self):
        # pickled as the function and its options (cloudpickle sends it to worker processes:
        # nx.distributed): compiled programs belong to one process, the receiver traces again
        return (JitFunction, (self._fun, self._static_nums, self._static_names, self._donate,
                              self._name))

    # -- the cache -------------------------------------------------------------------------
    def cache_info(self) -> CacheInfo:
        """Hits, misses (traces) and entries of the signature cache."""
        return CacheInfo(self._hits, self._misses, len({id(e) for e in self._cache.values()}))

    def clear_cache(self) -> None:
        """Forget every trace and compiled program (the counters restart too)."""
        self._cache.clear()
        self._hits = self._misses = 0

    def _arg_desc(self, i):
        if self._params is not None and i < len(self._params):
            return f"argument {self._params[i].name!r} (position {i})"
        return f"argument {i}"

    def _split(self, args, kwargs):
        """(dynamic args, dynamic kwargs, static key, statics by position, by name)."""
        nargs = len(args)
        spos = {i % nargs if -nargs <= i < 0 else i for i in self._static_nums}
        statics = []
        dyn = []
        for i, a in enumerate(args):
            if i in spos:
                statics.append((i, self._check_hashable(a, self._arg_desc(i))))
            else:
                dyn.append(a)
        for i in spos:
            if i >= nargs and (self._params is None or i >= len(self._params)):
                raise ValueError(f"jit({self._name}): static_argnums {i} but the function was "
                                 f"called with {nargs} positional arguments")
        dkw = {}
        skw = []
        for k in sorted(kwargs):
            v = kwargs[k]
            if k in self._static_names:
                skw.append((k, self._check_hashable(v, f"argument {k!r}")))
            else:
                dkw[k] = v
        return dyn, dkw, tuple(statics), tuple(skw)

    def _check_hashable(self, v, desc):
        try:
            hash(v)
        except TypeError as e:
            raise TypeError(f"jit({self._name}): static {desc} must be hashable, got a value of "
                            f"type {type(v).__name__} ({e}); pass a hashable value (a tuple "
                            f"instead of a list, a frozen object) or make the argument "
                            f"dynamic") from None
        return v

    def _descs(self, dyn, dkw, spos):
        """A description per leaf (its argument) and each dynamic argument's position."""
        descs = []
        positions = [i for i in range(len(dyn) + len(spos)) if i not in spos]
        for i, a in zip(positions, dyn):
            descs += [self._arg_desc(i)] * tree_flatten(a)[1].num_leaves
        for k in sorted(dkw):
            descs += [f"argument {k!r}"] * tree_flatten(dkw[k])[1].num_leaves
        return descs, positions

    def _flatten(self, dyn, dkw, spos, abstract=False):
        """Leaves (values), their signature key and the treedef.  ``abstract``: leaves may be
        ShapeDtypeStructs (their value is None: the program is traced, not run)."""
        leaves, treedef = tree_flatten((tuple(dyn), dkw))
        values, keys = [], []
        for j, x in enumerate(leaves):
            if x.__class__ is Tensor:
                values.append(x)
                keys.append((x.shape, x.dtype, False))
                continue
            if x.__class__ is ShapeDtypeStruct:
                if not abstract:
                    descs, _ = self._descs(dyn, dkw, spos)
                    raise TypeError(f"jit({self._name}): {descs[j]} is a ShapeDtypeStruct, "
                                    f"which has no values to compute with; use "
                                    f"jit(f).lower(...), jit(f).eval_shape(...) or "
                                    f"nx.eval_shape for placeholders, arrays to call")
                values.append(None)
                keys.append((x.shape, x.dtype, x.weak_type))
                continue
            try:
                v, k = _leaf_value(x, "")
            except TypeError:
                descs, _ = self._descs(dyn, dkw, spos)
                _leaf_value(x, f"jit({self._name}): {descs[j]}")     # raises, naming it
                raise
            values.append(v)
            keys.append(k)
        return values, tuple(keys), treedef

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        fast_key = None
        if self._fast and not kwargs:
            # fast paths: positional Tensor arguments, or pytrees of Tensors (the keys hold
            # the x64 and promotion modes: they change the dtypes a trace gives)
            key = [x64_enabled(), numpy_promotion(), AXIS_KEY.get()]
            for a in args:
                if a.__class__ is not Tensor:
                    break
                key.append((a.shape, a.dtype))
            else:
                key = tuple(key)
                entry = self._cache.get(key)
                if entry is not None:
                    self._hits += 1
                    if entry.traced.layout_assumed and entry._other_layout(args):
                        return self._fun(*args)
                    if _var.get() is None:
                        return entry.run(args)
                    return entry.call(list(args))
                fast_key = key
            if fast_key is None:
                leaves = []
                sig = _fast_signature(args, leaves)
                if sig is not None:
                    fast_key = (_FAST_TREE, x64_enabled(), numpy_promotion(), AXIS_KEY.get(), sig)
                    entry = self._cache.get(fast_key)
                    if entry is not None:
                        self._hits += 1
                        if entry.traced.layout_assumed and entry._other_layout(leaves):
                            return self._fun(*args)
                        if _var.get() is None:
                            return entry.run(leaves)
                        return entry.call(leaves)
        dyn, dkw, statics, skw = self._split(args, kwargs)
        spos = {i for i, _ in statics}
        values, keys, treedef = self._flatten(dyn, dkw, spos)
        key = (treedef, tuple((i, _typed(v)) for i, v in statics),
               tuple((k, _typed(v)) for k, v in skw), keys, x64_enabled(), numpy_promotion(),
               AXIS_KEY.get())
        entry = self._cache.get(key)
        if entry is None:
            self._misses += 1
            entry = self._trace(values, keys, treedef, statics, skw, spos, dyn, dkw)
            if not entry.traced.captured:
                self._cache[key] = entry
                if fast_key is not None:
                    self._cache[fast_key] = entry
        else:
            self._hits += 1
        if entry.traced.layout_assumed and entry._other_layout(values):
            # the trace assumed a C-contiguous argument where a reshape of it decides view or
            # copy before a write: with another layout the function itself runs
            return self._fun(*args, **kwargs)
        if entry.donate and _var.get() is None and not entry.traced.captured:
            return entry.run(values)        # (donation: run marks the donated deleted)
        return entry.call(values)

    def _trace(self, values, keys, treedef, statics, skw, spos, dyn, dkw):
        fun = self._fun
        descs, positions = self._descs(dyn, dkw, spos)
        static_pos = dict(statics)
        static_kw = dict(skw)

        def with_statics(*dyn, **dkw):
            full = []
            it = iter(dyn)
            for i in range(len(dyn) + len(static_pos)):
                full.append(static_pos[i] if i in static_pos else next(it))
            return fun(*full, **dkw, **static_kw)

        # a weak value carried wider (a Python number, _scalar_leaf) is an input of the
        # carrier's dtype that the trace narrows for the function
        avals = [AbstractValue(k[0], k[3] if len(k) > 3 else k[1], k[2]) for k in keys]
        narrow = {j: k[1] for j, k in enumerate(keys) if len(k) > 3}
        hint = ("mark the argument static (jit(f, static_argnums=...) or static_argnames=...)")
        traced = trace(with_statics, avals, treedef, name="jit", fname=self._name,
                       arg_names=descs, hint=hint, narrow=narrow, write_back=True)
        traced.cache["name"] = self._name
        if traced.cache.get("batch_size_choice") and not (
                narrow or traced.writes or traced.captured or traced.layout_assumed):
            # the function itself, for a vmap to trace again with its batch in view
            traced.cache["retrace"] = flat_function(with_statics, treedef)
        donate = [j for j, p in enumerate(self._leaf_positions(treedef, positions))
                  if p in self._donate]
        return _Entry(traced, donate, descs)

    def _leaf_positions(self, treedef, positions):
        """The argument position of each leaf (None for keyword arguments)."""
        (args_td, kw_td) = treedef.children()
        out = []
        for pos, sub in zip(positions, args_td.children()):
            out += [pos] * sub.num_leaves
        out += [None] * kw_td.num_leaves
        return out

    def trace(self, *args, **kwargs) -> Traced:
        """The traced program for these arguments (traced now, without the cache); leaves may
        be ShapeDtypeStructs.  It prints as ``make_jaxpr`` does; ``.jaxpr`` is itself,
        ``.out_info`` the outputs' shapes and dtypes, ``.lower()`` its :class:`Lowered`."""
        low = self.lower(*args, **kwargs)
        traced = low._entry.traced
        traced.cache["lowered"] = low
        return traced

    def lower(self, *args, **kwargs) -> Lowered:
        """JAX's ahead-of-time lowering: the function traced for these arguments (arrays,
        Python numbers, ShapeDtypeStructs; static arguments by value), as a
        :class:`~nx_rune.compiler.stages.Lowered` (``as_text()``, ``compile()``)."""
        dyn, dkw, statics, skw = self._split(args, kwargs)
        spos = {i for i, _ in statics}
        values, keys, treedef = self._flatten(dyn, dkw, spos, abstract=True)
        entry = self._trace(values, keys, treedef, statics, skw, spos, dyn, dkw)
        descs, _ = self._descs(dyn, dkw, spos)
        return Lowered(self, entry, keys, treedef, statics, skw, descs)

    def eval_shape(self, *args, **kwargs):
        """The outputs' shapes and dtypes for these arguments, a pytree of
        :class:`~nx_rune.compiler.stages.ShapeDtypeStruct` (traced, not computed)."""
        return self.lower(*args, **kwargs).out_info

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jitted {self._name}>"


class _Entry:
    """One cache entry: the traced program, and its executable once compiled.

    Write-back: where the function wrote into an argument in place (``Traced.writes``; the
    program's last outputs are those arguments' final values), every call writes the final
    value into the argument it was given (``core.write_back``: a Tensor's memory, or an
    enclosing transformation's tracer), as the eager call leaves it, and the outputs that are
    eagerly that argument or a view of it are made from it (``passes.outputs.written_views``).
    A donated argument is deleted after the call instead (its memory may hold the results)."""
    __slots__ = ("traced", "donate", "exe", "n_out", "writes", "views", "descs", "linked")

    def __init__(self, traced, donate, descs=None):
        self.traced = traced
        self.donate = tuple(donate)
        self.exe = None
        self.n_out = None       # None: no argument written (nothing to do after a call)
        if traced.writes:
            prog = traced.program
            n = self.n_out = len(prog.outs) - len(traced.writes)
            name = _fname(traced)
            self.descs = descs or [f"leaf {j}" for j in range(traced.n_explicit)]
            self.writes = [(j, k, f"jit({name}): {self.descs[j]}")
                           for k, j in enumerate(traced.writes) if j not in self.donate]
            finals = {prog.outs[n + k]: j for j, k, _ in self.writes}
            self.views = written_views(prog, n, finals)
            kept = {j for j, _, _ in self.writes}
            seen = {i for i, _, _, _ in self.views}
            self.linked = [(i, j, chain) for i, j, chain in traced.linked
                           if j in kept and i not in seen]

    def _check_alias(self, values):
        """ValueError where a written argument is, or shares memory with, another one (the
        program reads them as separate inputs: it cannot give the eager result)."""
        found = written_alias([j for j, _, _ in self.writes], values)
        if found is not None:
            i, k = found
            raise alias_error(f"jit({_fname(self.traced)})", self.descs[i], self.descs[k])

    def _written(self, values, outs):
        """Write the written arguments' final values (``outs[n_out:]``) into ``values``, the
        arguments; the function's outputs, those that are eagerly an argument (or a view of
        it) made from it."""
        n = self.n_out
        finals = outs[n:]
        outs = list(outs[:n])
        for j, k, what in self.writes:
            write_back(values[j], finals[k], what)
        for i, j, chain, vmap in self.views:
            root = values[j]
            if root.__class__ is Tensor:
                outs[i] = rebuild(root, chain, vmap)
            else:
                for prim, params in chain:
                    root = P.bind(prim, root, **params)
                outs[i] = root
        for i, j, chain in self.linked:
            # a view of the argument through which (or into whose base) the function wrote:
            # eagerly still that view, so made from the written argument the same way
            root = values[j]
            for kind, params in chain:
                root = _getitem(root, params) if kind is _GETITEM else \
                    P.bind(kind, root, **params)
            outs[i] = root
        return outs

    def executable(self):
        exe = self.exe
        if exe is None:
            exe = self.exe = compiled(self.traced, self.donate)
        return exe

    def _other_layout(self, values):
        """Whether an argument the trace assumed C-contiguous (a reshape of it copies or not by
        its layout, and the function writes in place) is not."""
        for j in self.traced.layout_assumed:
            v = values[j]
            if v.__class__ is Tensor and not v.view.is_contiguous:
                return True
        return False

    def run(self, args):
        """Run compiled on concrete Tensors (no transformation active)."""
        exe = self.exe or self.executable()
        if self.n_out is not None:
            self._check_alias(args)
        outs = exe.fn(*args) if exe.fn_donating is None else self._run_donating(exe, args)
        if self.n_out is not None:
            outs = self._written(args, outs)
        td = self.traced.out_tree
        if td.num_leaves == 1 and td.node_data() is None:
            return outs[0]
        return tree_unflatten(td, outs)

    def _run_donating(self, exe, args):
        """Run with the donated arguments' memory reusable where the tensor owns it alone
        (``_exclusive``), then mark every donated tensor deleted (``_Donated``)."""
        args = list(args)
        if all(_exclusive(args[i]) for i in self.donate):
            outs = exe(args)
        else:
            # memory another object can read (a NumPy array the tensor was made from, views
            # of it, an ndarray given out by x.numpy()): the program must not write it
            try:
                outs = list(exe.fn(*args))
            except QUIET_ERRORS:
                outs = list(rerun_quietly(exe.fn, *args))
        name = _fname(self.traced)
        for i in self.donate:
            t = args[i]
            if t.__class__ is Tensor and not any(o is t for o in outs):
                _Donated.delete(t, name)
        return outs

    def call(self, values):
        if self.n_out is not None:
            self._check_alias(values)
        if self.donate:
            # under a transformation the donated values may be saved for a derivative (a
            # tape's operands): the program that reuses memory runs only outside them
            outs = call_traced(self.traced, values + self.traced.captured)
        else:
            outs = call_traced(self.traced, values + self.traced.captured, self.executable)
        if self.n_out is not None:
            outs = self._written(values, outs)
        return tree_unflatten(self.traced.out_tree, outs)


def _exclusive(t):
    """Whether the memory of Tensor ``t`` is its own alone, so that a program may overwrite it:
    an ndarray that owns its data, writeable and C-contiguous, that nothing else references
    (no NumPy view of it, no ndarray handed out by ``t.numpy()``, no Buffer derived from it
    that other tensors could share)."""
    if t.__class__ is not Tensor or t._buf is not None or t._mat is not None:
        return False
    arr = t._arr
    if arr is None:
        return False
    # references: t._arr, this frame's ``arr`` and getrefcount's argument (counted before
    # arr.flags, an object that references arr)
    if sys.getrefcount(arr) > 3:
        return False
    flags = arr.flags
    return flags.owndata and flags.writeable and flags.c_contiguous


class _Donated:
    """The storage of a tensor donated to a jitted function: shape, dtype and strides stay
    readable (as on JAX's deleted arrays); its memory does not, every access raises
    :class:`nx_rune.errors.DonatedArrayError`."""
    __slots__ = ("dtype", "itemsize", "message")

    def __init__(self, dtype, message):
        self.dtype, self.itemsize, self.message = dtype, dtype.itemsize, message

    @staticmethod
    def delete(t, fname):
        view = View.contiguous(t.shape)
        msg = (f"this array (shape {t.shape}, dtype {t.dtype}) was donated to jit({fname}) "
               f"(donate_argnums) and its memory may have been reused for the results: it "
               f"cannot be read or written any more; use the function's results, or do not "
               f"donate the argument")
        storage = _Donated(t.dtype, msg)
        t._arr = None
        t._mat = None
        t._view = view
        t._buf = storage

    def raise_deleted(self):
        raise DonatedArrayError(self.message)

    def __getattr__(self, name):
        # any use of the memory (as_ndarray, address, readonly, ...)
        raise DonatedArrayError(object.__getattribute__(self, "message"))


_UNSET = object()


# jax_debug_nans / jax_debug_infs (nx_rune.config_nans): while an option is on, jitted calls
# go through a hook that checks their outputs; installed by swapping JitFunction.__call__, so
# that with both options off a call runs exactly the code above (no test of a flag)
NOT_HANDLED = object()
_PLAIN_CALL = JitFunction.__call__


def set_debug_call(hook: Callable[..., Any] | None) -> None:
    """Route every call of a jitted function through ``hook(jit_function, args, kwargs)``
    (which returns the call's result, or ``NOT_HANDLED``: the call goes on as usual); None
    restores the plain call."""
    if hook is None:
        JitFunction.__call__ = _PLAIN_CALL   # type: ignore[method-assign]
        return

    def __call__(self, *args, **kwargs):
        out = hook(self, args, kwargs)
        return _PLAIN_CALL(self, *args, **kwargs) if out is NOT_HANDLED else out
    JitFunction.__call__ = __call__     # type: ignore[method-assign]


def debug_call_installed() -> bool:
    """Whether a hook of :func:`set_debug_call` is installed."""
    return JitFunction.__call__ is not _PLAIN_CALL


def jit(fun: Callable[..., Any] | None = None,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None, *,
        donate_argnames: str | Sequence[str] | None = None, keep_unused: bool = False,
        device: Any = None, backend: str | None = None, inline: bool = False,
        in_shardings: Any = _UNSET, out_shardings: Any = _UNSET,
        compiler_options: dict | None = None) -> Any:
    """``fun`` compiled: traced once per signature (the tree structure of the arguments, each
    array's shape, dtype and weak type, the static arguments' values), optimized and run as one
    program afterwards.

    static_argnums / static_argnames: arguments passed to ``fun`` as Python values (hashable;
    each distinct value, of each type, traces anew: ``1`` and ``1.0`` are two traces), for the
    values ``fun`` branches on.  The x64 mode (``nx.enable_x64``) is part of the signature too.

    Python numbers passed as arguments are weakly typed, as eagerly (and in JAX): ``jit(f)(x,
    0.1)`` computes what ``f(x, 0.1)`` computes, the number meeting a float64 array at full
    precision and a float32 array as float32; arithmetic among such arguments and Python
    numbers is done as Python does it; alone, a float argument is the default float dtype.

    Concrete arrays that ``fun`` reads without receiving them as arguments (globals, closures)
    are captured by value when ``fun`` is traced, as in JAX: writing into them afterwards
    (``w[0] = 1``, ``w += 1``, or into the NumPy array they were made from) does not change what
    the compiled function computes; pass them as arguments, or ``clear_cache()``, to see new
    values.

    donate_argnums: the arrays of these arguments are given to the call: where an array owns
    its memory alone (not a view of a NumPy array or of another array, no NumPy array handed
    out by ``x.numpy()`` still alive) the program may write its results there.  After a call
    outside any transformation every donated array is deleted: reading or writing it raises
    ``nx.errors.DonatedArrayError`` (its ``shape`` and ``dtype`` stay readable); memory the
    array does not own alone is never written.  Under ``grad``/``vmap``/... donation is ignored.

    donate_argnames: the same, by parameter name.

    Called without ``fun`` (``@jit(static_argnums=1)``, as JAX's documentation writes it) it
    returns the decorator ``lambda fun: jit(fun, ...)``.  JAX's placement and lowering options
    (``device``, ``backend``, ``in_shardings``, ``out_shardings``, ``keep_unused``, ``inline``,
    ``compiler_options``) are accepted and have no effect: there is one device, the CPU, and
    every program is inlined where it is traced inside another.

    Returns a callable with ``cache_info()`` and ``clear_cache()``, and JAX's ahead-of-time
    stages: ``lower(*args)`` (a :class:`~nx_rune.compiler.stages.Lowered`: ``as_text()``,
    ``compile()``), ``trace(*args)`` (the traced program) and ``eval_shape(*args)``.  Python
    side effects of ``fun`` happen only while it is traced (``nx.debug.print`` and
    ``nx.debug.callback`` run on every call).  Branching on a traced value raises
    ``nx.errors.ConcretizationTypeError``.

    Examples
    --------
    >>> import nx_rune as nx
    >>> f = nx.jit(lambda x, n: x ** n, static_argnums=1)
    >>> f(nx.arange(3.0), 2)
    Tensor([0., 1., 4.], dtype=float32)
    >>> f.cache_info()
    CacheInfo(hits=0, misses=1, size=1)
    """
    if backend is not None and backend != "cpu":
        raise ValueError(f"jit: backend must be None or 'cpu' (nx_rune runs on the CPU), got "
                         f"{backend!r}")
    if compiler_options is not None and not isinstance(compiler_options, dict):
        raise TypeError(f"jit: compiler_options must be a dict or None, got "
                        f"{type(compiler_options).__name__}")

    def make(f):
        return JitFunction(f, static_argnums, static_argnames, donate_argnums,
                           donate_argnames=donate_argnames)
    if fun is None:
        return make
    return make(fun)


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of
    :class:`ShapeDtypeStruct`, found by tracing ``fun`` abstractly (as ``jit`` does), without
    computing it.  Argument leaves are arrays, Python numbers or ShapeDtypeStructs; other
    leaves raise TypeError naming the argument (pass them through ``functools.partial``).

    >>> import nx_rune as nx
    >>> nx.eval_shape(lambda x: x.sum(0), nx.ShapeDtypeStruct((3, 4), nx.float32))
    ShapeDtypeStruct(shape=(4,), dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"eval_shape: fun must be callable, got {type(fun).__name__}")
    return JitFunction(fun).eval_shape(*args, **kwargs)


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
               axis_env: Sequence[tuple[Any, int]] | None = None,
               return_shape: bool = False) -> Callable[..., Any]:
    """A function that traces ``fun`` on its arguments and returns the program (printable: one
    equation per line, ``outputs = primitive[params] inputs``; ``.program`` is the IR).
    Arguments may be ShapeDtypeStructs.  With ``return_shape=True`` it returns ``(program,
    shapes)``, the outputs' shapes and dtypes as a pytree of ShapeDtypeStruct (JAX's).
    ``axis_env`` (JAX's named axes for collectives) must be None or empty: nx_rune has no
    collectives."""
    if axis_env:
        raise ValueError(f"make_jaxpr: axis_env must be None or empty (nx_rune has no named "
                         f"axes), got {axis_env!r}")
    jf = JitFunction(fun, static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        traced = jf.trace(*args, **kwargs)
        return (traced, traced.out_info) if return_shape else traced
    return make
