"""Evaluate a Program through ``bind``: every equation is applied under the active interpreters.

This is how a traced program composes with the transformations: evaluated under ``grad``'s tape
each equation is recorded (so the program is differentiated), under an enclosing trace each is
recorded again (a nested ``jit`` is inlined), with no interpreter active each runs its
implementation.  Control-flow equations call their operation's ``bind_eqn``, which dispatches the
same way.  (The executor, not this module, runs compiled programs fast.)
"""
from __future__ import annotations

from nx_rune.compiler.ir import Literal, Program
from nx_rune.primitives import Primitive, bind

__all__ = ["eval_program"]


def eval_program(prog: Program, args) -> list:
    """The program's outputs for input values ``args`` (one per input variable)."""
    if len(args) != len(prog.in_vars):
        raise ValueError(f"eval_program: {len(prog.in_vars)} inputs expected, got {len(args)}")
    env = dict(zip(prog.in_vars, args))

    def read(x):
        return x.value if isinstance(x, Literal) else env[x]

    for e in prog.eqns:
        ins = [read(x) for x in e.ins]
        if isinstance(e.prim, Primitive):
            env[e.outs[0]] = bind(e.prim, *ins, **e.params)
        else:
            outs = e.prim.bind_eqn(e.params, ins)
            for v, o in zip(e.outs, outs):
                env[v] = o
    return [read(x) for x in prog.outs]
