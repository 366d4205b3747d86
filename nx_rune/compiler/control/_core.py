"""What the control operations share: tracing their functions into sub-programs, weakly typed
initial carries, :class:`ControlOp` and ``control_bind`` (their dispatch), the tape entry of
an operation and which inputs reach which outputs of a sub-program.
"""
from __future__ import annotations

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.autodiff.api import jvp as _jvp
from nx_rune.autodiff.core import (
    JVPInterpreter,
    NoGradInterpreter,
    Tape,
    Tracer,
    concrete,
    is_inexact,
)
from nx_rune.compiler.dispatch import find_owner
from nx_rune.compiler.dispatch import under as _under
from nx_rune.compiler.interpret import eval_program
from nx_rune.compiler.ir import AbstractValue, InternalOp, Program, Var
from nx_rune.compiler.tracing import JitTracer, TraceInterpreter, trace
from nx_rune.errors import ConcretizationTypeError, TracerArrayConversionError
from nx_rune.frontend import astype, zeros_like_t
from nx_rune.frontend import copy as _copy
from nx_rune.frontend._core import _WEAK_PROXY, _weak, const
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tree_util import tree_flatten, tree_unflatten

_var = P._interpreter
# (op name, interpreter type) -> rule(op, interp, params, values) -> outputs (for vmap & co.)
CONTROL_RULES: dict = {}


def trace_active(values=()) -> bool:
    """Whether a trace is among the active interpreters (or owns one of ``values``)."""
    interp = _var.get()
    while interp is not None:
        if isinstance(interp, TraceInterpreter):
            return True
        interp = interp.parent
    for v in values:
        c = concrete(v)
        if isinstance(c, JitTracer) and not c._interp.done:
            return True
    return False


def _ours(v, interp):
    return isinstance(v, Tracer) and v._interp is interp


def _aval(x):
    return AbstractValue(x.shape, x.dtype, getattr(x, "weak_type", False))


def _trace(fn, avals, tree, name):
    """Trace ``fn(*tree_unflatten(tree, leaves))`` (tree: of the positional args tuple)."""
    _, full = tree_flatten((tree_unflatten(tree, [0] * len(avals)), {}))
    hint = (f"inside {name} the loop values are traced: use nx.where, lax.cond or "
            f"lax.while_loop instead of Python branches on them")
    return trace(fn, avals, full, name=name, fname=getattr(fn, "__name__", repr(fn)),
                 hint=hint)


def _trace_flat(fn, avals, name):
    """Trace ``fn(*leaves) -> list of arrays`` on flat arguments; returns the Traced."""
    return _trace(fn, avals, tree_flatten(tuple(range(len(avals))))[1], name)


def _reorder(prog, n_explicit, front):
    """``prog`` with its captured inputs (after the first ``n_explicit``) moved to the front
    when ``front`` (consts first, as the control equations take them)."""
    ins = prog.in_vars
    if not front:
        return prog
    new = Program(ins[n_explicit:] + ins[:n_explicit], prog.eqns, prog.outs)
    return new


def _with_inputs(prog, before, after):
    """``prog`` with unused input variables of ``before``/``after`` avals around its own."""
    return Program([Var(a) for a in before] + prog.in_vars + [Var(a) for a in after],
                   prog.eqns, prog.outs)


def _check_same(what, a_tree, a_avals, b_tree, b_avals, a_name, b_name):
    if a_tree != b_tree:
        raise TypeError(f"{what}: {a_name} and {b_name} must have the same structure, got "
                        f"{a_tree} and {b_tree}")
    for i, (x, y) in enumerate(zip(a_avals, b_avals)):
        if not x.same_type(y):
            raise TypeError(f"{what}: {a_name} and {b_name} must have identical shapes and "
                            f"dtypes, got {x.str_short()} and {y.str_short()} at leaf {i} of "
                            f"{a_tree}")


# -- weakly typed initial carries (JAX's _promote_weak_typed_inputs) ------------------------------

def _weak_value(x):
    """Whether pytree leaf ``x`` is weakly typed: a Python number (not a bool), or a traced
    weak value (a jit argument that was a Python number)."""
    if isinstance(x, ArrayBase):
        return x.__class__ is not Tensor and bool(getattr(x, "weak_type", False))
    return _weak(x) and not isinstance(x, (bool, np.bool_))


def _carry_avals(leaves, weak):
    return [AbstractValue(x.shape, x.dtype, w or getattr(x, "weak_type", False))
            for x, w in zip(leaves, weak)]


def _promote_weak_init(raw, leaves, weak, out_avals):
    """JAX's rule for loop carries: a weakly typed initial value (``0.0``) whose dtype differs
    from what the body returns for it takes the promotion of the two (a float64 body makes the
    carry float64), as if written with that dtype; a strongly typed one must match exactly.
    Returns ``(leaves, changed)``; ``weak`` is updated in place."""
    new, changed = list(leaves), False
    for i, (w, o) in enumerate(zip(weak, out_avals)):
        x = leaves[i]
        if not w or x.dtype == o.dtype or x.shape != o.shape:
            continue
        r = raw[i]
        scalar = not isinstance(r, ArrayBase)
        dt = dtypes.weak_result_type(o.dtype, r if scalar else _WEAK_PROXY[r.dtype.kind])
        if dt == x.dtype:
            continue
        # (a Python number converts from its own value, a weak traced one from its full
        # precision form: astype)
        new[i] = const(r, dt) if scalar else astype(r, dt)
        weak[i] = False
        changed = True
    return new, changed


def _pretrace_carry(trace_fn):
    """The carry avals a body returns (traced once), for ``_promote_weak_init`` in eager mode;
    None when the body cannot be traced (it reads concrete values: an eager loop allows that,
    and then needs the carry to match as given)."""
    try:
        return trace_fn()
    except (ConcretizationTypeError, TracerArrayConversionError):
        return None


def _check_unrun_body(trace_fn, tree, avals, where, init_name, n_lead=0):
    """An eager loop that runs no step still checks that its body returns the carry's
    structure, shapes and dtypes (JAX traces the body whatever the trip count, and so does
    ``jit``): ``trace_fn`` traces the body (its outputs: ``n_lead`` leaves, then the carry);
    a body that reads concrete values cannot be traced and is not checked."""
    t = _pretrace_carry(trace_fn)
    if t is None:
        return
    out_tree = t.out_tree.children()[n_lead] if n_lead else t.out_tree
    outs = t.program.out_avals[n_lead:n_lead + len(avals)] if n_lead else t.program.out_avals
    _check_same(f"lax.{where}", tree, avals, out_tree, outs,
                f"the carry passed in ({init_name})", "the carry returned by the body")


# -- executing sub-programs on arrays ------------------------------------------------------------

def _to_arrays(values):
    out = []
    for v in values:
        v = concrete(v)
        out.append(v._np() if isinstance(v, ArrayBase) else np.asarray(v))
    return out


# -- the operations --------------------------------------------------------------------------------

class ControlOp(InternalOp):
    """A control-flow operation: an equation with sub-programs in its params."""
    __slots__ = ()
    pure = True

    def bind_eqn(self, params, ins):
        return control_bind(self, params, ins)

    def emit(self, cg, e, ins, plan):
        args = ", ".join(ins)
        outs = [cg.bind_out(v) for v in e.outs]
        f = cg.const(self.runner(e.params), self.name)
        call = f"{f}(({args}{',' if len(ins) == 1 else ''}))"
        if not outs:
            cg.emit(call)
            return
        cg.emit(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")


def control_bind(op, params, values):
    """Apply the control operation under the active interpreters (see the module doc)."""
    values = list(values)
    owner = find_owner(values)
    if owner is None or isinstance(owner, NoGradInterpreter):
        if owner is not None:
            values = [concrete(v) for v in values]
            for v in values:
                if isinstance(v, JitTracer) and not v._interp.done:
                    return _under(v._interp, control_bind, op, params, values)
        outs = op.runner(params)(_to_arrays(values))
        from nx_rune.compiler.executor import to_tensor
        return [to_tensor(o) for o in outs]
    if isinstance(owner, TraceInterpreter):
        return owner.add_eqn(op, params, values, op.out_avals(params, [_aval(v) for v in values]))
    if isinstance(owner, Tape):
        return op.tape_rule(owner, params, values)
    if isinstance(owner, JVPInterpreter):
        return op.jvp_rule(owner, params, values)
    rule = CONTROL_RULES.get((op.name, type(owner)))
    if rule is not None:
        return rule(op, owner, params, values)
    return op.fallback(owner, params, values)


class _MultiEntry:
    """A tape entry of a control operation (``Tape.record_multi``): ``vjp(gs)``, ``jvp(ts)``;
    ``primals`` are the operands its rules read (no user function: ``cf`` is None)."""
    __slots__ = ("outs", "idxs", "vjp_fn", "jvp_fn", "primals")
    cf = None

    def __init__(self, outs, vjp_fn, jvp_fn, primals=()):
        self.outs, self.vjp_fn, self.jvp_fn = outs, vjp_fn, jvp_fn
        self.primals = list(primals)
        self.idxs = None

    def vjp(self, gs):
        return self.vjp_fn(gs)

    def jvp(self, ts):
        return self.jvp_fn(ts)


def _zeros(x):
    return zeros_like_t(x)


def _fill(ts, like):
    return [t if t is not None else _zeros(x) for t, x in zip(ts, like)]


def _split_owned(interp, values):
    primals = [v.primal if _ours(v, interp) else v for v in values]
    idxs = [v._idx if _ours(v, interp) else 0 for v in values]
    return primals, idxs


def _diff_mask(values):
    return [is_inexact(v.dtype) for v in values]


def _cached(prog, key, make):
    val = prog.cache.get(key)
    if val is None:
        val = prog.cache[key] = make()
    return val


def _used_inputs(prog):
    """Per input of ``prog``: whether an equation or an output reads it."""
    def build():
        seen = {id(x) for e in prog.eqns for x in e.ins}
        seen |= {id(x) for x in prog.outs}
        return [id(v) in seen for v in prog.in_vars]
    return _cached(prog, "used_inputs", build)


def _deps(prog):
    """Per output of ``prog``: the set of input positions whose tangent can reach it.  Only
    inexact values carry a tangent (a comparison's or an integer's is zero, as eagerly), and
    ``stop_gradient`` cuts the path."""
    def build():
        empty = frozenset()

        def diff(v):
            return is_inexact(v.aval.dtype)
        pos = {id(v): frozenset((k,)) for k, v in enumerate(prog.in_vars) if diff(v)}
        for e in prog.eqns:
            if e.prim is P.stop_gradient_p:
                continue
            d = empty.union(*(pos.get(id(x), empty) for x in e.ins))
            for o in e.outs:
                if d and diff(o):
                    pos[id(o)] = d
        return [pos.get(id(o), empty) for o in prog.outs]
    return _cached(prog, "deps", build)


def _reaches(prog, in_mask):
    """Per output of ``prog``: whether it reads an input whose ``in_mask`` entry is true (a
    nonzero tangent can reach it; the others' tangents are symbolic zeros)."""
    nz = {k for k, m in enumerate(in_mask) if m}
    return [bool(d & nz) for d in _deps(prog)]


def _read_by(prog, out_mask):
    """Per input of ``prog``: whether an output whose ``out_mask`` entry is true reads it (a
    nonzero cotangent can reach it)."""
    rd = set()
    for d, m in zip(_deps(prog), out_mask):
        if m:
            rd |= d
    return [k in rd for k in range(len(prog.in_vars))]


def _jvp_part(prog, prim, idx, tans):
    """``eval_program(prog, prim)`` and its tangents, differentiating only the inputs at
    positions ``idx`` (tangents ``tans``): the others are constants, symbolic zeros, so their
    zero tangent is never multiplied by an infinite partial (``0 * inf``), as eagerly."""
    def part(*d):
        a = list(prim)
        for k, v in zip(idx, d):
            a[k] = v
        return eval_program(prog, a)
    if idx:
        outs, touts = _jvp(part, tuple(prim[k] for k in idx), tuple(tans))
        return list(outs), list(touts)
    outs = part()
    return list(outs), [_zeros(o) for o in outs]


# -- eager runs: results that are operands get new memory, as under jit ---------------------------

def _new_memory(out, operands):
    """``out`` (a pytree) with every leaf that is one of ``operands`` (or shares its memory)
    copied: eagerly a loop that runs no step, or whose body returns its carry, and a branch
    that returns its operand, give new memory as under ``jit`` (where they are one equation
    whose result is a new value), so an in-place write into the result never reaches the
    operand."""
    leaves, tree = tree_flatten(out)
    ops = [x for x in tree_flatten(operands)[0] if isinstance(x, ArrayBase)]
    arrays = [_concrete_np(x) for x in ops]
    changed = False
    for k, x in enumerate(leaves):
        if not isinstance(x, ArrayBase):
            continue
        a = _concrete_np(x)
        if any(x is o for o in ops) or a is not None and any(
                b is not None and np.may_share_memory(a, b) for b in arrays):
            leaves[k] = _copy(x)
            changed = True
    return tree_unflatten(tree, leaves) if changed else out


def _concrete_np(x):
    t = x if x.__class__ is Tensor else (
        x._concrete_tensor() if hasattr(x, "_concrete_tensor") else None)
    return t._np() if t is not None else None


def _batched(x):
    """Whether ``x`` is batched by an active ``vmap`` (one value per example)."""
    return isinstance(x, Tracer) and isinstance(concrete(x), Tracer)
