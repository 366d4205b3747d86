"""``cond``: the operation and ``lax.cond``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nx_rune.autodiff.api import _arr  # a pytree leaf as an array, or TypeError naming it
from nx_rune.autodiff.api import jvp as _jvp
from nx_rune.autodiff.api import stop_gradient as _stop_gradient
from nx_rune.autodiff.api import vjp as _vjp
from nx_rune.autodiff.core import JVPTracer, is_inexact
from nx_rune.compiler.control._core import (
    ControlOp,
    _aval,
    _batched,
    _cached,
    _check_same,
    _diff_mask,
    _fill,
    _MultiEntry,
    _new_memory,
    _ours,
    _split_owned,
    _trace,
    _trace_flat,
    _used_inputs,
    _with_inputs,
    _zeros,
    control_bind,
    trace_active,
)
from nx_rune.compiler.dispatch import under as _under
from nx_rune.compiler.effects import strip_effects
from nx_rune.compiler.interpret import eval_program
from nx_rune.compiler.ir import Program, Var
from nx_rune.compiler.pipeline import sub_executable
from nx_rune.frontend import logical_not, not_equal, where
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten

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
                    # the backward pass recomputes the branch: its debug effects ran forward
                    _, pull = _vjp(lambda *a: eval_program(strip_effects(b), list(a)), *prim)
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
