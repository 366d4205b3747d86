"""``lax`` control flow: ``cond``, ``scan``, ``fori_loop``, ``while_loop`` (JAX's semantics).

Eager mode (no trace active): plain Python (an ``if``, a ``for`` loop stacking the ``ys``, a
``while`` loop), so every transformation sees the operations as they run (``grad`` of a Python
loop just works, ``while_loop`` included).

Under a trace (``jit``, ``make_jaxpr``, the body of another loop): the functions are traced once
into sub-programs and the operation is one equation (``cond[branches=...]``, ``scan[body=...]``,
``while[cond=... body=...]``); scan's body is traced once, not unrolled.  Values the bodies close
over are captured and passed as extra operands ("consts").  The equation then dispatches like a
primitive (``control_bind``):

* the trace records it;
* reverse mode (a tape owning an operand): cond records the branch chosen at run time through a
  cond of the branches' VJPs; scan runs forward keeping each step's carry, and its VJP is a
  reverse scan of the body's VJP; while_loop is not reverse-differentiable (as in JAX: use scan
  or fori_loop with static bounds);
* forward mode: the same operation over (primal, tangent) bodies (all four);
* vmap: the same operation over batched bodies (``compiler/batching.py``; a cond with a
  per-example predicate runs both branches and selects, a while loop with one runs until every
  example is done).  In eager mode the Python loop runs under vmap as it is, except where the
  predicate is per example (cond: both branches and a select; while_loop: from then on one
  ``while`` equation);
* no transformation (a program evaluated on concrete values): the compiled sub-programs run.

The executor runs these equations as a Python ``if``/``for``/``while`` around the compiled
sub-programs (one generated function call per iteration).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nx_rune import primitives as P
from nx_rune.autodiff.api import _arr  # a pytree leaf as an array, or TypeError naming it
from nx_rune.autodiff.api import jvp as _jvp
from nx_rune.autodiff.api import stop_gradient as _stop_gradient
from nx_rune.autodiff.api import vjp as _vjp
from nx_rune.autodiff.core import (JVPInterpreter, JVPTracer, NoGradInterpreter, Tape, Tracer,
                                   concrete, is_inexact)
from nx_rune.compiler.dispatch import find_owner
from nx_rune.compiler.dispatch import under as _under
from nx_rune.compiler.interpret import eval_program
from nx_rune.compiler.pipeline import sub_executable
from nx_rune.compiler.ir import AbstractValue, InternalOp, Program, Var
from nx_rune.compiler.tracing import JitTracer, TraceInterpreter, trace
from nx_rune import dtypes
from nx_rune.errors import ConcretizationTypeError, TracerArrayConversionError
from nx_rune.frontend import copy as _copy
from nx_rune.frontend import astype, concatenate, logical_not, not_equal, stack, where, zeros, zeros_like_t
from nx_rune.frontend._core import _WEAK_PROXY, _weak, const
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["cond", "scan", "fori_loop", "while_loop", "ControlOp", "control_bind",
           "CONTROL_RULES", "trace_active"]

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


# -- the operations ---------------------------------------------------------------------------------

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


# -- cond ---------------------------------------------------------------------------------------

class _Cond(ControlOp):
    """``cond[branches=(false_prog, true_prog)] pred *operands``."""
    __slots__ = ()

    def out_avals(self, params, avals):
        return params["branches"][0].out_avals

    def runner(self, params):
        fs = [sub_executable(p) for p in params["branches"]]

        def run(ops):
            return fs[1 if bool(ops[0]) else 0](*ops[1:])
        return run

    def _jvp_branches(self, params, mask):
        def make(b):
            def build():
                avals = b.in_avals
                tav = [a for a, m in zip(avals, mask) if m]

                idx = [k for k, m in enumerate(mask) if m]

                def f(*xs):
                    n = len(avals)
                    prim, tans = list(xs[:n]), xs[n:]

                    def part(*d):
                        # the operands without a tangent are constants: symbolic zeros
                        a = list(prim)
                        for k, v in zip(idx, d):
                            a[k] = v
                        return eval_program(b, a)
                    if idx:
                        outs, touts = _jvp(part, tuple(prim[k] for k in idx), tuple(tans))
                    else:
                        outs = part()
                        touts = [_zeros(o) for o in outs]
                    return list(outs) + [t for t, o in zip(touts, outs) if is_inexact(o.dtype)]
                return _trace_flat(f, list(avals) + tav, "lax.cond (jvp)").program
            return _cached(b, ("jvp", tuple(mask)), build)
        return tuple(make(b) for b in params["branches"])

    def _jvp_call(self, params, pred, primals, tangents):
        # an operand without a tangent stays a symbolic zero in the branches (as eagerly: no
        # ``0 * inf``)
        mask = [m and t is not None for m, t in zip(_diff_mask(primals), tangents)]
        branches = self._jvp_branches(params, mask)
        tl = [t for t, m in zip(_fill(tangents, primals), mask) if m]
        outs = control_bind(self, {"branches": branches}, [pred] + list(primals) + tl)
        n = len(params["branches"][0].outs)
        prim_out, touts = outs[:n], iter(outs[n:])
        return prim_out, [next(touts) if is_inexact(o.dtype) else None for o in prim_out]

    def jvp_rule(self, interp, params, values):
        primals = [v.primal if _ours(v, interp) else v for v in values]
        tans = [v.tangent if _ours(v, interp) else None for v in values]
        outs, touts = _under(interp.parent, self._jvp_call, params, primals[0], primals[1:],
                             tans[1:])
        return [JVPTracer(interp, o, t) if t is not None else o for o, t in zip(outs, touts)]

    def _vjp_branches(self, params, mask, out_mask):
        def make(b):
            def build():
                avals = b.in_avals
                cav = [a for a, m in zip(b.out_avals, out_mask) if m]

                def f(*xs):
                    n = len(avals)
                    prim, cts = list(xs[:n]), iter(xs[n:])
                    _, pull = _vjp(lambda *a: eval_program(b, list(a)), *prim)
                    full = [next(cts) if m else None for m in out_mask]
                    res = pull(full)
                    return [r if r is not None else _zeros(p)
                            for r, p, m in zip(res, prim, mask) if m]
                return _trace_flat(f, list(avals) + cav, "lax.cond (vjp)").program
            return _cached(b, ("vjp", tuple(mask), tuple(out_mask)), build)
        # an operand that no branch reads keeps a symbolic zero cotangent (None), as eagerly:
        # its zero is never multiplied by its own partials (``0 * inf``)
        used = [_used_inputs(b) for b in params["branches"]]
        nonzero = [any(u[k] for u in used) for k in range(len(used[0]))]
        return tuple(make(b) for b in params["branches"]), nonzero

    def tape_rule(self, tape, params, values):
        primals, idxs = _split_owned(tape, values)
        outs = _under(tape.parent, control_bind, self, params, primals)
        pred, ops = primals[0], primals[1:]
        mask = _diff_mask(ops)
        out_mask = _diff_mask(outs)

        def vjp_fn(gs):
            branches, nonzero = self._vjp_branches(params, mask, out_mask)
            cts = [g if g is not None else _zeros(o)
                   for g, o, m in zip(gs, outs, out_mask) if m]
            res = iter(control_bind(self, {"branches": branches}, [pred] + list(ops) + cts))
            out = [None]
            for m, nz in zip(mask, nonzero):
                r = next(res) if m else None
                out.append(r if nz else None)
            return out

        def jvp_fn(ts):
            return self._jvp_call(params, pred, ops, ts[1:])[1]
        return tape.record_multi(_MultiEntry(outs, vjp_fn, jvp_fn, primals), idxs, outs)

    def fallback(self, interp, params, values):
        raise NotImplementedError(
            f"lax.cond under the {interp.name} transformation needs a rule: register one in "
            f"nx_rune.compiler.control.CONTROL_RULES[('cond', {type(interp).__name__})]")


cond_op = _Cond("cond")


def _branch_operands(pred, operands, taken):
    """The operands of one branch of a ``cond`` whose predicate is per example (under vmap
    both branches run on every example): for the examples that do not take the branch
    (``pred != taken``) their derivatives are stopped, so nothing flows back (or forward)
    through the branch there.  Selecting the outputs alone is not enough: a branch not taken
    may have an infinite or NaN derivative there (``sqrt``, ``log`` or ``1 / x`` of a value
    outside its domain), and its zero cotangent times that is NaN.  JAX's rule (jax#1052)."""
    keep = pred if taken else logical_not(pred)
    out = []
    for x in operands:
        if isinstance(x, ArrayBase) and is_inexact(x.dtype):
            s = _stop_gradient(x)
            if s is not x:
                x = where(keep, x, s)
        out.append(x)
    return out


def _pred_scalar(pred):
    p = _arr(pred, "lax.cond: pred")
    if p.shape != ():
        raise TypeError(f"lax.cond: pred must be a scalar (shape ()), got shape {p.shape}")
    if p.dtype.kind not in "biuf":
        raise TypeError(f"lax.cond: pred must be a boolean or a number, got dtype {p.dtype}")
    return p if p.dtype.kind == "b" else not_equal(p, 0)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    pred: a scalar (bool or number; nonzero is true).  Eager: a Python ``if`` (only the chosen
    branch runs).  Under a trace both branches are traced (their outputs must have the same
    structure, shapes and dtypes) and the choice is one ``cond`` equation.  Under ``vmap``
    with a per-example ``pred``, both branches run and each example takes its branch's result
    (as in JAX).  Differentiable in both modes (through the branch taken).
    """
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("lax.cond: true_fun and false_fun must be callable")
    if isinstance(pred, (bool, np.bool_)) or not isinstance(pred, ArrayBase) \
            and isinstance(pred, (int, float, np.number)):
        return true_fun(*operands) if pred else false_fun(*operands)
    p = _pred_scalar(pred)
    leaves, tree = tree_flatten(tuple(operands))
    leaves = [_arr(x, "lax.cond: operands") for x in leaves]
    if not trace_active(leaves + [p]):
        if _batched(p):
            # vmap in eager mode, one predicate per example: both branches, then each
            # example's result (JAX's semantics for a batched predicate)
            given = tree_flatten(tuple(operands))[0]
            t_out = true_fun(*tree_unflatten(tree, _branch_operands(p, given, True)))
            f_out = false_fun(*tree_unflatten(tree, _branch_operands(p, given, False)))
            t_leaves, t_tree = tree_flatten(t_out)
            f_leaves, f_tree = tree_flatten(f_out)
            _check_same("lax.cond", t_tree, [_aval(_arr(x, "lax.cond: output"))
                                             for x in t_leaves],
                        f_tree, [_aval(_arr(x, "lax.cond: output")) for x in f_leaves],
                        "true_fun's output", "false_fun's output")
            return tree_unflatten(t_tree, [where(p, a, b) for a, b in zip(t_leaves, f_leaves)])
        return _new_memory(true_fun(*operands) if bool(p) else false_fun(*operands),
                           operands)
    avals = [_aval(x) for x in leaves]
    tt = _trace(true_fun, avals, tree, "lax.cond")
    tf = _trace(false_fun, avals, tree, "lax.cond")
    _check_same("lax.cond", tt.out_tree, tt.program.out_avals, tf.out_tree,
                tf.program.out_avals, "true_fun's output", "false_fun's output")
    n = len(leaves)
    cf, ct = [_aval(c) for c in tf.captured], [_aval(c) for c in tt.captured]
    pf = _with_inputs(tf.program, [], ct)          # (operands, consts_f, consts_t)
    pt = Program(tt.program.in_vars[:n] + [Var(a) for a in cf] + tt.program.in_vars[n:],
                 tt.program.eqns, tt.program.outs)
    outs = control_bind(cond_op, {"branches": (pf, pt)}, [p] + leaves + tf.captured + tt.captured)
    return tree_unflatten(tt.out_tree, outs)


# -- scan ---------------------------------------------------------------------------------------

class _Scan(ControlOp):
    """``scan[body=... length=... reverse=... n_consts=... n_carry=...] *consts *init *xs``;
    the body maps (consts, carry, x slices) to (carry, y slices); the outputs are the final
    carry and the stacked ys."""
    __slots__ = ()

    def out_avals(self, params, avals):
        body, nc = params["body"], params["n_carry"]
        outs = body.out_avals
        return outs[:nc] + [AbstractValue((params["length"],) + a.shape, a.dtype)
                            for a in outs[nc:]]

    def runner(self, params):
        body = sub_executable(params["body"])
        length, reverse = params["length"], params["reverse"]
        nk, nc = params["n_consts"], params["n_carry"]
        y_avals = params["body"].out_avals[nc:]

        def run(ops):
            consts, carry, xs = ops[:nk], list(ops[nk:nk + nc]), ops[nk + nc:]
            ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
            order = range(length - 1, -1, -1) if reverse else range(length)
            for i in order:
                outs = body(*consts, *carry, *[x[i] for x in xs])
                carry = list(outs[:nc])
                for y, o in zip(ys, outs[nc:]):
                    y[i] = o
            return carry + ys
        return run

    # forward mode: a scan over (primal, tangent) pairs
    def _jvp_body(self, params, mask, ymask):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]

        def build():
            avals = body.in_avals
            groups = [(0, nk), (nk, nk + nc), (nk + nc, len(avals))]
            idx = [k for k, m in enumerate(mask) if m]

            def f(*xs):
                # inputs: consts, tconsts, carry, tcarry, x, tx (the tangents in mask)
                it = iter(xs)
                prim, tans = [None] * len(avals), [None] * len(avals)
                for lo, hi in groups:
                    for j in range(lo, hi):
                        prim[j] = next(it)
                    for j in range(lo, hi):
                        if mask[j]:
                            tans[j] = next(it)
                outs, touts = _jvp_part(body, prim, idx, [tans[k] for k in idx])
                carry, ys = outs[:nc], outs[nc:]
                tc = [t for t, m in zip(touts[:nc], mask[nk:nk + nc]) if m]
                ty = [t for t, m in zip(touts[nc:], ymask) if m]
                return carry + tc + ys + ty
            ins = []
            for lo, hi in groups:
                ins += avals[lo:hi] + [a for a, m in zip(avals[lo:hi], mask[lo:hi]) if m]
            return _trace_flat(f, ins, "lax.scan (jvp)").program
        return _cached(body, ("jvp", tuple(mask), tuple(ymask)), build)

    def _jvp_call(self, params, primals, tangents):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]
        # only the operands with a tangent are differentiated (the others are symbolic zeros,
        # as eagerly); a carry has a tangent if its initial value has one or if the body gives
        # it one from the nonzero tangents (JAX's fixpoint over the carries)
        mask = [m and t is not None for m, t in zip(_diff_mask(primals), tangents)]
        inexact_out = [is_inexact(a.dtype) for a in body.out_avals]
        while True:
            r = _reaches(body, mask)
            cm = [m or (o and ie) for m, o, ie in zip(mask[nk:nk + nc], r[:nc], inexact_out)]
            if cm == mask[nk:nk + nc]:
                break
            mask[nk:nk + nc] = cm
        ymask = [o and ie for o, ie in zip(r[nc:], inexact_out[nc:])]
        jb = self._jvp_body(params, mask, ymask)
        tl = _fill(tangents, primals)
        ops = []
        for lo, hi in ((0, nk), (nk, nk + nc), (nk + nc, len(primals))):
            ops += list(primals[lo:hi]) + [t for t, m in zip(tl[lo:hi], mask[lo:hi]) if m]
        n_tc = sum(mask[nk:nk + nc])
        p2 = dict(params, body=jb, n_consts=nk + sum(mask[:nk]), n_carry=nc + n_tc)
        outs = control_bind(self, p2, ops)
        n_y = len(ymask)
        carry, tcarry = outs[:nc], iter(outs[nc:nc + n_tc])
        rest = outs[nc + n_tc:]
        ys, tys = rest[:n_y], iter(rest[n_y:])
        tc = [next(tcarry) if m else None for m in mask[nk:nk + nc]]
        ty = [next(tys) if m else None for m in ymask]
        return list(carry) + list(ys), tc + ty

    def jvp_rule(self, interp, params, values):
        primals = [v.primal if _ours(v, interp) else v for v in values]
        tans = [v.tangent if _ours(v, interp) else None for v in values]
        outs, touts = _under(interp.parent, self._jvp_call, params, primals, tans)
        return [JVPTracer(interp, o, t) if t is not None else o for o, t in zip(outs, touts)]

    # reverse mode: forward keeping every step's carry, then a reverse scan of the body's VJP
    def _res_body(self, params):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]

        def build():
            # outputs: carry, ys, then the carry the step started from (the residuals)
            return Program(body.in_vars, body.eqns, body.outs + body.in_vars[nk:nk + nc])
        return _cached(body, "res", build)

    def _bwd_body(self, params, kmask, cin, cout, xmask, ymask):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]
        avals = body.in_avals
        out_avals = body.out_avals

        def build():
            nx_ = len(avals) - nk - nc

            def f(*xs):
                # inputs: consts | ct_carry (cin), acc (kmask) |
                #         x slices, carry slices (residuals), ct_y slices (ymask);
                # a cotangent outside the masks is a symbolic zero (None), as eagerly
                it = iter(xs)
                consts = [next(it) for _ in range(nk)]
                ct_c = [next(it) if m else None for m in cin]
                acc = [next(it) if m else None for m in kmask]
                x = [next(it) for _ in range(nx_)]
                c = [next(it) for _ in range(nc)]
                ct_y = [next(it) if m else None for m in ymask]
                _, pull = _vjp(lambda *a: eval_program(body, list(a)), *(consts + c + x))
                res = pull(ct_c + ct_y)
                rk, rc, rx = res[:nk], res[nk:nk + nc], res[nk + nc:]
                new_ct = [r if r is not None else _zeros(p)
                          for r, p, m in zip(rc, c, cout) if m]
                new_acc = [a if r is None else a + r
                           for a, r, m in zip(acc, rk, kmask) if m]
                ct_x = [r if r is not None else _zeros(p) for r, p, m in zip(rx, x, xmask) if m]
                return new_ct + new_acc + ct_x
            ins = (list(avals[:nk]) + [a for a, m in zip(avals[nk:nk + nc], cin) if m]
                   + [a for a, m in zip(avals[:nk], kmask) if m] + list(avals[nk + nc:])
                   + list(avals[nk:nk + nc])
                   + [a for a, m in zip(out_avals[nc:], ymask) if m])
            return _trace_flat(f, ins, "lax.scan (vjp)").program
        key = ("bwd", tuple(kmask), tuple(cin), tuple(cout), tuple(xmask), tuple(ymask))
        return _cached(body, key, build)

    def _bwd_plan(self, params, cin, ymask):
        """The reverse pass's segments: ``[(steps, cin, cout)]`` in the order it runs them.
        While the carries' nonzero cotangents change from one step to the next (an unused
        final carry's cotangent is a symbolic zero until a step gives it one), single steps
        are peeled off, so a zero cotangent is never multiplied by the body's partials
        (``0 * cos(inf)``), as eagerly; the remaining steps share the fixpoint mask."""
        body = params["body"]
        nk, nc, length = params["n_consts"], params["n_carry"], params["length"]
        ie = [is_inexact(a.dtype) for a in body.in_avals[nk:nk + nc]]

        def step(m):
            rd = _read_by(body, list(m) + list(ymask))
            return [r and i for r, i in zip(rd[nk:nk + nc], ie)]
        plan, m, done = [], list(cin), 0
        while done < length and len(plan) <= nc:
            nxt = step(m)
            if nxt == m:
                break
            plan.append((1, m, nxt))
            m, done = nxt, done + 1
        if done < length:
            fix = list(m)
            while True:
                new = [a or b for a, b in zip(fix, step(fix))]
                if new == fix:
                    break
                fix = new
            plan.append((length - done, fix, fix))
        return plan

    def tape_rule(self, tape, params, values):
        primals, idxs = _split_owned(tape, values)
        nk, nc = params["n_consts"], params["n_carry"]
        length = params["length"]
        res_params = dict(params, body=self._res_body(params))
        all_outs = _under(tape.parent, control_bind, self, res_params, primals)
        n_y = len(params["body"].outs) - nc
        outs = all_outs[:nc + n_y]
        carries = all_outs[nc + n_y:]
        mask = _diff_mask(primals)
        for j in range(nk, nk + nc):
            mask[j] = is_inexact(primals[j].dtype)
        out_mask = _diff_mask(outs)
        consts, xs = primals[:nk], primals[nk + nc:]

        def vjp_fn(gs):
            body = params["body"]
            cin = [m and g is not None for m, g in zip(mask[nk:nk + nc], gs[:nc])]
            ymask = [m and g is not None for m, g in zip(out_mask[nc:], gs[nc:])]
            plan = self._bwd_plan(params, cin, ymask)
            # the consts and xs that a nonzero cotangent reaches; the others' stay None
            reach = [False] * len(primals)
            for _, m, _ in plan:
                reach = [a or b for a, b in zip(reach, _read_by(body, list(m) + ymask))]
            kmask = [m and r for m, r in zip(mask[:nk], reach[:nk])]
            xmask = [m and r for m, r in zip(mask[nk + nc:], reach[nk + nc:])]
            ct = list(gs[:nc])
            acc = [_zeros(k) for k, m in zip(consts, kmask) if m]
            ct_y_all = [g for g, m in zip(gs[nc:], ymask) if m]
            whole = len(plan) == 1
            pieces = []            # (first step index, ct_x slices)
            hi, lo = length, 0
            for steps, m_in, m_out in plan:
                if params["reverse"]:
                    a, b = lo, lo + steps
                    lo = b
                else:
                    a, b = hi - steps, hi
                    hi = a

                def cut(v):
                    return v if whole else v[a:b]
                ct_c = [c if c is not None else _zeros(p)
                        for c, p, m in zip(ct, primals[nk:nk + nc], m_in) if m]
                ops = (list(consts) + ct_c + acc + [cut(x) for x in xs]
                       + [cut(c) for c in carries] + [cut(g) for g in ct_y_all])
                n_out = sum(m_out)
                p2 = {"body": self._bwd_body(params, kmask, m_in, m_out, xmask, ymask),
                      "length": steps, "reverse": not params["reverse"],
                      "n_consts": nk, "n_carry": n_out + len(acc)}
                res = control_bind(self, p2, ops)
                itc = iter(res[:n_out])
                ct = [next(itc) if m else None for m in m_out]
                acc = list(res[n_out:n_out + len(acc)])
                pieces.append((a, res[n_out + len(acc):]))

            pieces.sort(key=lambda p: p[0])
            if len(pieces) == 1:
                ct_x = list(pieces[0][1])
            else:
                ct_x = [concatenate([p[1][k] for p in pieces])
                        for k in range(sum(xmask))]
            itk, itx = iter(acc), iter(ct_x)
            return ([next(itk) if m else None for m in kmask]
                    + [c if m else None for c, m in zip(ct, mask[nk:nk + nc])]
                    + [next(itx) if m else None for m in xmask])

        def jvp_fn(ts):
            return self._jvp_call(params, primals, ts)[1]
        return tape.record_multi(_MultiEntry(outs, vjp_fn, jvp_fn, primals), idxs, outs)

    def fallback(self, interp, params, values):
        # unrolled: one evaluation of the body per step under the interpreter
        body, nk, nc = params["body"], params["n_consts"], params["n_carry"]
        consts, carry, xs = values[:nk], list(values[nk:nk + nc]), values[nk + nc:]
        ys = []
        order = range(params["length"] - 1, -1, -1) if params["reverse"] else \
            range(params["length"])
        for i in order:
            outs = eval_program(body, list(consts) + carry + [x[i] for x in xs])
            carry = outs[:nc]
            ys.append(outs[nc:])
        if params["reverse"]:
            ys.reverse()
        y_avals = body.out_avals[nc:]
        stacked = [stack([y[k] for y in ys]) if ys else zeros((0,) + a.shape, a.dtype)
                   for k, a in enumerate(y_avals)]
        return list(carry) + stacked


scan_op = _Scan("scan")


def _scan_length(xs_leaves, length):
    n = None
    for x in xs_leaves:
        if x.ndim == 0:
            raise ValueError("lax.scan: every leaf of xs must have a leading axis to scan "
                             "over, got a scalar")
        if n is None:
            n = x.shape[0]
        elif x.shape[0] != n:
            raise ValueError(f"lax.scan: the leaves of xs must share their leading axis "
                             f"length, got {n} and {x.shape[0]}")
    if length is not None:
        try:
            length = int(length)
        except TypeError:
            raise TypeError(f"lax.scan: length must be an int, got {length!r}") from None
        if length < 0:
            raise ValueError(f"lax.scan: length must be >= 0, got {length}")
        if n is not None and n != length:
            raise ValueError(f"lax.scan: length {length} differs from the leading axis of xs "
                             f"({n})")
        return length
    if n is None:
        raise ValueError("lax.scan: length must be given when xs is None (or has no leaves)")
    return n


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


def _check_carry(carry, init_tree, init_avals, where, init_name="init"):
    leaves, tree = tree_flatten(carry)
    leaves = [_arr(x, f"lax.{where}: carry") for x in leaves]
    _check_same(f"lax.{where}", init_tree, init_avals, tree, [_aval(x) for x in leaves],
                f"the carry passed in ({init_name})", "the carry returned by the body")
    return leaves


def _split_body_out(out, where):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"lax.{where}: the body must return a pair (carry, y), got "
                        f"{type(out).__name__}")
    return out[0], out[1]


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the ys stacked along a new leading axis (JAX's ``lax.scan``).

    init: a pytree of arrays (the carry; f must return a carry of the same structure, shapes and
    dtypes); xs: a pytree of arrays sharing their leading axis length (or None with
    ``length``); reverse: iterate from the end (ys stay in the order of xs).  Eager: a Python
    loop.  Under a trace: f is traced once and the loop is one ``scan`` equation.
    Differentiable in forward and reverse mode.
    """
    if not callable(f):
        raise TypeError(f"lax.scan: f must be callable, got {type(f).__name__}")
    return _scan(f, init, xs, length, reverse, "scan", "init")


def _scan(f, init, xs, length, reverse, where, init_name):
    """``scan``; ``where``: the lax function the user called (``"fori_loop"`` runs as a
    scan), named in errors about the carry; ``init_name``: its initial carry argument's
    name."""
    init_raw, init_tree = tree_flatten(init)
    init_leaves = [_arr(x, f"lax.{where}: {init_name}") for x in init_raw]
    weak = [_weak_value(x) for x in init_raw]
    xs_leaves, xs_tree = tree_flatten(xs)
    xs_leaves = [_arr(x, "lax.scan: xs") for x in xs_leaves]
    n = _scan_length(xs_leaves, length)
    reverse = bool(reverse)
    nc = len(init_leaves)
    x_avals = [AbstractValue(x.shape[1:], x.dtype) for x in xs_leaves]

    def body(c, x):
        out = f(c, x)
        return _split_body_out(out, where)

    def trace_body():
        avals = _carry_avals(init_leaves, weak)
        args_tree = tree_flatten((tree_unflatten(init_tree, avals),
                                  tree_unflatten(xs_tree, x_avals)))[1]
        return _trace(body, avals + x_avals, args_tree, f"lax.{where}")

    eager = not trace_active(init_leaves + xs_leaves)
    t = None
    if any(weak):
        t = _pretrace_carry(trace_body) if eager else trace_body()
        if t is not None:
            init_leaves, changed = _promote_weak_init(init_raw, init_leaves, weak,
                                                      t.program.out_avals[:nc])
            if changed:
                t = None if eager else trace_body()
    init_avals = [_aval(x) for x in init_leaves]
    if eager:
        carry = tree_unflatten(init_tree, init_leaves)
        ys = []
        for i in (range(n - 1, -1, -1) if reverse else range(n)):
            x = tree_unflatten(xs_tree, [a[i] for a in xs_leaves])
            carry, y = _split_body_out(f(carry, x), where)
            carry = tree_unflatten(init_tree, _check_carry(carry, init_tree, init_avals, where,
                                                           init_name))
            ys.append(y)
        if reverse:
            ys.reverse()
        if ys:
            y_leaves = [tree_flatten(y)[0] for y in ys]
            y_tree = tree_flatten(ys[0])[1]
            stacked = [stack([_arr(y[k], "lax.scan: y") for y in y_leaves])
                       for k in range(len(y_leaves[0]))]
        else:   # no step ran: the ys' shapes come from tracing f
            t = _trace(lambda c, x: f(c, x), init_avals + x_avals,
                       tree_flatten((tree_unflatten(init_tree, init_avals),
                                     tree_unflatten(xs_tree, x_avals)))[1], "lax.scan")
            if not any(weak):
                _check_same(f"lax.{where}", init_tree, init_avals, t.out_tree.children()[0],
                            t.program.out_avals[:len(init_avals)],
                            f"the carry passed in ({init_name})", "the carry returned by the body")
            y_tree = t.out_tree.children()[1]
            y_avals = t.program.out_avals[len(init_avals):]
            stacked = [zeros((0,) + a.shape, a.dtype) for a in y_avals]
        return _new_memory(carry, (init, xs)), tree_unflatten(y_tree, stacked)
    # traced: one scan equation
    if t is None:
        t = trace_body()
    carry_tree, y_tree = t.out_tree.children()
    _check_same(f"lax.{where}", init_tree, init_avals, carry_tree, t.program.out_avals[:nc],
                f"the carry passed in ({init_name})", "the carry returned by the body")
    prog = _reorder(t.program, t.n_explicit, front=True)
    params = {"body": prog, "length": n, "reverse": reverse, "n_consts": len(t.captured),
              "n_carry": nc}
    outs = control_bind(scan_op, params, list(t.captured) + init_leaves + xs_leaves)
    return tree_unflatten(carry_tree, outs[:nc]), tree_unflatten(y_tree, outs[nc:])


# -- while_loop -------------------------------------------------------------------------------------

class _While(ControlOp):
    """``while[cond=... body=... n_cond_consts=... n_body_consts=...] *cconsts *bconsts *init``."""
    __slots__ = ()

    def out_avals(self, params, avals):
        return params["body"].out_avals

    def runner(self, params):
        cf = sub_executable(params["cond"])
        bf = sub_executable(params["body"])
        ncc, nbc = params["n_cond_consts"], params["n_body_consts"]

        def run(ops):
            cc, bc, carry = ops[:ncc], ops[ncc:ncc + nbc], list(ops[ncc + nbc:])
            while bool(cf(*cc, *carry)[0]):
                carry = list(bf(*bc, *carry))
            return carry
        return run

    def _jvp_progs(self, params, mask):
        body, cnd = params["body"], params["cond"]
        nbc = params["n_body_consts"]

        def build_body():
            avals = body.in_avals
            idx = [k for k, m in enumerate(mask) if m]

            def f(*xs):
                it = iter(xs)
                consts = [next(it) for _ in range(nbc)]
                tk = [next(it) if m else None for m in mask[:nbc]]
                carry = [next(it) for _ in range(len(avals) - nbc)]
                tc = [next(it) if m else None for m in mask[nbc:]]
                prim, tans = consts + carry, tk + tc
                # the operands without a tangent are constants (symbolic zeros, as eagerly)
                outs, touts = _jvp_part(body, prim, idx, [tans[k] for k in idx])
                return list(outs) + [t for t, m in zip(touts, mask[nbc:]) if m]
            ins = (avals[:nbc] + [a for a, m in zip(avals[:nbc], mask[:nbc]) if m]
                   + avals[nbc:] + [a for a, m in zip(avals[nbc:], mask[nbc:]) if m])
            return _trace_flat(f, ins, "lax.while_loop (jvp)").program

        def build_cond():
            n_tc = sum(mask[nbc:])
            return _with_inputs(cnd, [], [a for a, m in zip(body.in_avals[nbc:], mask[nbc:])
                                          if m][:n_tc])
        return (_cached(body, ("jvp", tuple(mask)), build_body),
                _cached(cnd, ("jvp", tuple(mask)), build_cond))

    def _jvp_call(self, params, primals, tangents):
        ncc, nbc = params["n_cond_consts"], params["n_body_consts"]
        body = params["body"]
        # only the operands with a tangent are differentiated; a carry has one if its initial
        # value has one or if the body gives it one (a fixpoint over the carries, as in JAX)
        mask = [m and t is not None
                for m, t in zip(_diff_mask(primals[ncc:]), tangents[ncc:])]
        while True:
            r = _reaches(body, mask)
            cm = [m or o for m, o in zip(mask[nbc:], r)]
            if cm == mask[nbc:]:
                break
            mask[nbc:] = cm
        bj, cnd = self._jvp_progs(params, mask)
        tl = _fill(tangents, primals)[ncc:]
        bconsts, carry = primals[ncc:ncc + nbc], primals[ncc + nbc:]
        ops = (list(primals[:ncc]) + list(bconsts)
               + [t for t, m in zip(tl[:nbc], mask[:nbc]) if m]
               + list(carry) + [t for t, m in zip(tl[nbc:], mask[nbc:]) if m])
        p2 = dict(params, body=bj, cond=cnd, n_body_consts=nbc + sum(mask[:nbc]))
        outs = control_bind(self, p2, ops)
        n = len(carry)
        tc = iter(outs[n:])
        return outs[:n], [next(tc) if m else None for m in mask[nbc:]]

    def jvp_rule(self, interp, params, values):
        primals = [v.primal if _ours(v, interp) else v for v in values]
        tans = [v.tangent if _ours(v, interp) else None for v in values]
        outs, touts = _under(interp.parent, self._jvp_call, params, primals, tans)
        return [JVPTracer(interp, o, t) if t is not None else o for o, t in zip(outs, touts)]

    def tape_rule(self, tape, params, values):
        ncc = params["n_cond_consts"]
        if any(_ours(v, tape) and is_inexact(v.dtype) for v in values[ncc:]):
            raise TypeError(
                "lax.while_loop is not reverse-mode differentiable (as in JAX: its number of "
                "steps is only known at run time, so the steps cannot be stored); use "
                "lax.scan, or lax.fori_loop with static (Python int) bounds, or forward mode "
                "(nx.jvp, nx.jacfwd)")
        primals = [v.primal if _ours(v, tape) else v for v in values]
        return _under(tape.parent, control_bind, self, params, primals)

    def fallback(self, interp, params, values):
        raise NotImplementedError(
            f"lax.while_loop under the {interp.name} transformation needs a rule: register one "
            f"in nx_rune.compiler.control.CONTROL_RULES[('while', {type(interp).__name__})]")


while_op = _While("while")


def _batched(x):
    """Whether ``x`` is batched by an active ``vmap`` (one value per example)."""
    return isinstance(x, Tracer) and isinstance(concrete(x), Tracer)


def _cond_bool(x, where="while_loop"):
    x = _arr(x, f"lax.{where}: cond_fun's output")
    if x.shape != () or x.dtype.kind != "b":
        raise TypeError(f"lax.{where}: cond_fun must return a boolean scalar, got "
                        f"{x.dtype} of shape {x.shape}")
    return x


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = init_val; while cond_fun(val): val = body_fun(val)``; returns val.

    cond_fun returns a boolean scalar; body_fun returns a value of init_val's structure, shapes
    and dtypes.  Eager: a Python loop.  Under a trace: one ``while`` equation.  Under ``vmap``
    with a per-example predicate, the loop runs until every example's predicate is false, an
    example that is done keeping its value (as in JAX).  Differentiable in forward mode;
    reverse mode raises TypeError (as JAX).
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun must be callable")
    return _while_loop(cond_fun, body_fun, init_val, "while_loop")


def _while_loop(cond_fun, body_fun, init_val, where):
    """``while_loop``; ``where``: the lax function the user called (``"fori_loop"`` with traced
    bounds runs as a while loop), named in errors about the carry."""
    raw, tree = tree_flatten(init_val)
    leaves = [_arr(x, f"lax.{where}: init_val") for x in raw]
    weak = [_weak_value(x) for x in raw]
    eager = not trace_active(leaves)
    if any(weak):
        def trace_body():
            avals = _carry_avals(leaves, weak)
            return _trace(body_fun, avals, tree_flatten((tree_unflatten(tree, avals),))[1],
                          f"lax.{where}")
        tb = _pretrace_carry(trace_body) if eager else trace_body()
        if tb is not None:
            leaves, changed = _promote_weak_init(raw, leaves, weak, tb.program.out_avals)
            if changed:
                init_val = tree_unflatten(tree, leaves)
    avals = [_aval(x) for x in leaves]
    if eager:
        val = init_val
        while True:
            c = _cond_bool(cond_fun(val), where)
            if _batched(c):
                # vmap in eager mode, one predicate per example: from here on one while
                # equation (see compiler/batching.py: it runs until every example is done)
                leaves = [_arr(x, f"lax.{where}: init_val") for x in tree_flatten(val)[0]]
                return _while_traced(cond_fun, body_fun, tree, leaves, where)
            if not bool(c):
                if val is init_val and not any(weak):
                    _check_unrun_body(lambda: _trace(
                        body_fun, avals, tree_flatten((tree_unflatten(tree, avals),))[1],
                        f"lax.{where}"), tree, avals, where, "init_val")
                return _new_memory(val, init_val)
            val = body_fun(val)
            val = tree_unflatten(tree, _check_carry(val, tree, avals, where, "init_val"))
    return _while_traced(cond_fun, body_fun, tree, leaves, where)


def _while_traced(cond_fun, body_fun, tree, leaves, where="while_loop"):
    """``while_loop`` as one ``while`` equation (its functions traced)."""
    avals = [_aval(x) for x in leaves]
    tc = _trace(lambda v: _cond_bool(cond_fun(v), where), avals, tree_flatten((tree_unflatten(
        tree, avals),))[1], f"lax.{where}")
    if tc.program.out_avals[0].shape != () or tc.program.out_avals[0].dtype.kind != "b":
        raise TypeError(f"lax.{where}: cond_fun must return a boolean scalar")
    tb = _trace(body_fun, avals, tree_flatten((tree_unflatten(tree, avals),))[1],
                f"lax.{where}")
    _check_same(f"lax.{where}", tree, avals, tb.out_tree, tb.program.out_avals,
                "init_val", "body_fun's output")
    params = {"cond": _reorder(tc.program, tc.n_explicit, True),
              "body": _reorder(tb.program, tb.n_explicit, True),
              "n_cond_consts": len(tc.captured), "n_body_consts": len(tb.captured)}
    outs = control_bind(while_op, params, list(tc.captured) + list(tb.captured) + leaves)
    return tree_unflatten(tree, outs)


# -- fori_loop ------------------------------------------------------------------------------------

def _static_int(x):
    """x as a Python int when it is concrete (a Python/NumPy int or a concrete integer
    scalar), else None."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError("lax.fori_loop: lower and upper must be integers, got a bool")
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, ArrayBase):
        if x.dtype.kind not in "iu" or x.shape != ():
            raise TypeError(f"lax.fori_loop: lower and upper must be integer scalars, got "
                            f"{x.dtype} of shape {x.shape}")
        t = x._concrete_tensor()
        return None if t is None or isinstance(x, Tracer) else int(t.item())
    raise TypeError(f"lax.fori_loop: lower and upper must be integers, got "
                    f"{type(x).__name__}")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any],
              init_val: Any) -> Any:
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``; returns val.

    i is an int32 scalar array (int64 when a bound needs it).  With concrete bounds (Python
    ints) the loop is a ``scan`` under a trace (differentiable in both modes); with traced bounds
    a ``while_loop`` (forward mode only).  Eager: a Python loop.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun must be callable")
    lo, hi = _static_int(lower), _static_int(upper)
    dt = np.int32
    for b in (lower, upper):
        if isinstance(b, ArrayBase):
            dt = np.result_type(dt, b.dtype)
        elif isinstance(b, (int, np.integer)) and not -2**31 <= int(b) < 2**31:
            dt = np.int64
    dt = np.dtype(dt)
    raw, tree = tree_flatten(init_val)
    leaves = [_arr(x, "lax.fori_loop: init_val") for x in raw]
    if lo is not None and hi is not None:
        if not trace_active(leaves):
            weak = [_weak_value(x) for x in raw]
            if any(weak) and hi > lo:
                def trace_body():
                    avals = _carry_avals(leaves, weak)
                    return _trace(body_fun, [AbstractValue((), dt)] + avals, tree_flatten(
                        (0, tree_unflatten(tree, avals)))[1], "lax.fori_loop")
                tb = _pretrace_carry(trace_body)
                if tb is not None:
                    leaves, changed = _promote_weak_init(raw, leaves, weak,
                                                         tb.program.out_avals)
                    if changed:
                        init_val = tree_unflatten(tree, leaves)
            val = init_val
            avals = [_aval(x) for x in leaves]
            if hi <= lo and not any(_weak_value(x) for x in raw):
                _check_unrun_body(lambda: _trace(
                    body_fun, [AbstractValue((), dt)] + avals,
                    tree_flatten((0, tree_unflatten(tree, avals)))[1], "lax.fori_loop"),
                    tree, avals, "fori_loop", "init_val")
            for i in range(lo, hi):
                val = body_fun(Tensor._wrap(np.array(i, dt)), val)
                val = tree_unflatten(tree, _check_carry(val, tree, avals, "fori_loop",
                                                        "init_val"))
            return _new_memory(val, init_val)

        def step(carry, _):
            i, v = carry
            return (i + 1, body_fun(i, v)), None
        n = max(hi - lo, 0)
        (_, val), _ = _scan(step, (Tensor._wrap(np.array(lo, dt)), init_val), None, n, False,
                            "fori_loop", "init_val")
        return val
    lo_t = astype(_arr(lower, "lax.fori_loop: lower"), dt)
    hi_t = astype(_arr(upper, "lax.fori_loop: upper"), dt)
    _, _, val = _while_loop(lambda c: c[0] < c[1],
                            lambda c: (c[0] + 1, c[1], body_fun(c[0], c[2])),
                            (lo_t, hi_t, init_val), "fori_loop")
    return val



# -- custom_vjp / custom_jvp calls ------------------------------------------------------------------

class _CustomCall(ControlOp):
    """``custom_call[name primal fun ...] *args *captured``: a call of a ``custom_vjp`` or
    ``custom_jvp`` function.  Run, it is its primal sub-program; evaluated through ``bind``
    (when the program is differentiated), it calls the function again, so that the active
    transformations apply its rules."""
    __slots__ = ()

    def out_avals(self, params, avals):
        return params["primal"].out_avals

    def runner(self, params):
        f = sub_executable(params["primal"])
        return lambda ops: list(f(*ops))

    def bind_eqn(self, params, ins):
        args = tree_unflatten(params["_in_tree"], ins[:params["_n_args"]])
        return tree_flatten(params["_fun"](*args, **params["_kwargs"]))[0]

    def fallback(self, interp, params, values):
        return self.bind_eqn(params, values)

    tape_rule = jvp_rule = None


custom_call_op = _CustomCall("custom_call")
TraceInterpreter.custom_call_op = custom_call_op
