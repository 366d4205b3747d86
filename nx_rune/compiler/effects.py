"""Operations run for an effect (``nx.debug.print``, ``nx.debug.callback``): equations with no
outputs that the compiler keeps, in program order, and runs on every call.

An :class:`EffectOp` equation ``effect_op[params] ins`` has no outputs; ``params["_callback"]``
is called with the operands' values (concrete Tensors) when it runs.  How a call dispatches
(:func:`effect_bind`):

* no transformation: the callback runs now, on the values;
* a trace (``jit``, ``make_jaxpr``, a ``lax`` body): the trace records the equation; the
  executor emits one call of the callback (on copies of the arrays: the program's buffers may
  be reused after it), so it runs at run time with the call's values, on every call;
* a differentiating transformation (``grad``/``vjp``/``jvp``/``linearize``, and any other that
  carries a ``primal``): the operation applies to the primal values one level down (nothing
  to differentiate: it has no outputs);
* ``vmap``: unrolled over the batch, one operation per example (JAX's batching rule for its
  debug callbacks), in example order.

The compiler keeps effects where a pure equation would go: ``passes.dce`` never removes an
equation that :func:`has_effects` (an effect, or a control-flow operation with one in a
sub-program), CSE and constant folding skip them (``pure = False``; they are not primitives),
and the fusion pass's reordering keeps effects in program order relative to each other.
The VJP program of a jitted call (``compiler.api.derived``) recomputes the primal with the
effects removed (:func:`strip_effects`): the primal call already ran them once, as JAX's
``grad`` of a ``jit`` prints once.
"""
from __future__ import annotations

import numpy as np

from nx_rune.compiler.ir import Eqn, InternalOp, Program

__all__ = ["EffectOp", "effect_bind", "has_effects", "strip_effects", "debug_print_op",
           "debug_callback_op"]


class EffectOp(InternalOp):
    """An operation with no outputs whose ``params["_callback"]`` is called with the operands'
    values (Tensors) when it runs (see the module doc)."""
    __slots__ = ()
    pure = False            # never merged with an equal one (passes.cse)
    effectful = True        # never removed (passes.dce)

    def bind_eqn(self, params, ins):
        return effect_bind(self, params, ins)

    def emit(self, cg, e, ins, plan):
        f = cg.const(_runner(e.params["_callback"]), self.name)
        cg.emit(f"{f}({''.join(a + ', ' for a in ins)})")


def _runner(callback):
    from nx_rune.tensor import Tensor

    def run(*arrays):
        # copies: the callback may keep its arguments, and the program may reuse the memory
        # of a value whose last reader this is
        callback(*[Tensor._wrap(np.array(a, copy=True)) for a in arrays])
    return run


debug_print_op = EffectOp("debug_print")
debug_callback_op = EffectOp("debug_callback")


# -- dispatch ------------------------------------------------------------------------------------

def effect_bind(op, params, values):
    """Apply effect operation ``op`` to ``values`` under the active transformations (see the
    module doc); returns ``[]`` (no outputs)."""
    from nx_rune.autodiff.batching import BatchInterpreter
    from nx_rune.autodiff.core import NoGradInterpreter, Tracer, concrete
    from nx_rune.compiler.dispatch import find_owner, under
    from nx_rune.compiler.tracing import JitTracer, TraceInterpreter
    values = list(values)
    owner = find_owner(values)
    if owner is None or isinstance(owner, NoGradInterpreter):
        values = [concrete(v) for v in values]
        for v in values:
            if isinstance(v, JitTracer) and not v._interp.done:
                return under(v._interp, effect_bind, op, params, values)
            if isinstance(v, Tracer):       # a value batched by an enclosing vmap
                return under(v._interp, effect_bind, op, params, values)
        params["_callback"](*values)
        return []
    if isinstance(owner, TraceInterpreter):
        owner.add_eqn(op, params, values, [])
        return []
    if isinstance(owner, BatchInterpreter):
        _unrolled(owner, op, params, values)
        return []
    # a differentiating level (tape, forward mode, ...): the effect sees the primal values
    primals = [v.primal if isinstance(v, Tracer) and v._interp is owner else v for v in values]
    under(owner.parent, effect_bind, op, params, primals)
    return []


def _unrolled(interp, op, params, values):
    """The effect once per example of vmap level ``interp``, in order."""
    from nx_rune.autodiff.core import Tracer
    from nx_rune.compiler.dispatch import under
    ours = [isinstance(v, Tracer) and v._interp is interp for v in values]

    def example(i):
        out = []
        for v, mine in zip(values, ours):
            if mine:
                idx = (slice(None),) * v.bdim + (i,)
                out.append(v.primal[idx])
            else:
                out.append(v)
        return out

    for i in range(interp.axis_size):
        vals = under(interp.parent, example, i)
        under(interp.parent, effect_bind, op, params, vals)


# -- what the passes ask -------------------------------------------------------------------------

def _sub_programs(e):
    for v in e.params.values():
        if isinstance(v, Program):
            yield v
        elif isinstance(v, (tuple, list)):
            for x in v:
                if isinstance(x, Program):
                    yield x


def program_has_effects(prog: Program) -> bool:
    """Whether ``prog`` (or a sub-program of one of its equations) has an effect."""
    got = prog.cache.get("has_effects")
    if got is None:
        got = prog.cache["has_effects"] = any(has_effects(e) for e in prog.eqns)
    return got


def has_effects(e: Eqn) -> bool:
    """Whether equation ``e`` must run for its effect: an effect operation, or an operation
    with a sub-program that has one (a ``lax.cond``/``scan``/``while_loop`` printing)."""
    if getattr(e.prim, "effectful", False):
        return True
    return any(program_has_effects(p) for p in _sub_programs(e))


def strip_effects(prog: Program) -> Program:
    """``prog`` without its effects (sub-programs' included); ``prog`` itself when it has
    none."""
    if not program_has_effects(prog):
        return prog
    got = prog.cache.get("stripped")
    if got is not None:
        return got
    eqns = []
    for e in prog.eqns:
        if getattr(e.prim, "effectful", False):
            continue
        if has_effects(e):
            params = {}
            for k, v in e.params.items():
                if isinstance(v, Program):
                    v = strip_effects(v)
                elif isinstance(v, (tuple, list)) and any(isinstance(x, Program) for x in v):
                    v = type(v)(strip_effects(x) if isinstance(x, Program) else x for x in v)
                params[k] = v
            e = Eqn(e.prim, params, e.ins, e.outs)
        eqns.append(e)
    out = prog.cache["stripped"] = Program(prog.in_vars, eqns, prog.outs)
    return out
