"""From a traced program to something that runs: passes, then the executor.

``optimize(program)`` applies the passes (``nx_rune.compiler.passes``) in order; an
:class:`Executable` holds the optimized program and its generated function, and converts
Tensors to arrays on the way in and arrays to Tensors on the way out.
"""
from __future__ import annotations

import time

import numpy as np

from nx_rune._kernels.quiet import QUIET_ERRORS, rerun_quietly
from nx_rune.compiler import passes
from nx_rune.compiler.executor import compile_program, to_tensor
from nx_rune.compiler.ir import Program
from nx_rune.compiler.passes.outputs import rebuild
from nx_rune.tensor import Tensor

__all__ = ["optimize", "Executable", "PASSES", "sub_executable"]

# the pass pipeline, in order (each a function Program -> Program)
PASSES = [passes.simplify, passes.cse, passes.fold_constants, passes.dce]


def optimize(prog, donated=()):
    """``prog`` after the passes of ``PASSES``, repeated while they shrink it (folding makes
    constants that simplify again), at most 3 times; then the lowering passes (views,
    fusion)."""
    for _ in range(3):
        n = len(prog.eqns)
        for p in PASSES:
            prog = p(prog)
        if len(prog.eqns) == n:
            break
    return passes.lower(prog)


def _input_array(x):
    return x._np() if x.__class__ is Tensor else np.asarray(x)


class Executable:
    """The compiled form of a traced program: ``exe(tensors) -> list of Tensors``; ``fn``
    takes and returns Tensors (conversions generated inline).

    The outputs keep the eager function's memory (``passes.eager_views``): ``fn`` computes
    the values that are not, eagerly, views (each in new memory of its own), and an output
    that eagerly is a view of an argument or of such a value is made by the same movement
    primitives' implementations on that tensor."""

    def __init__(self, traced, donate=()):
        t0 = time.perf_counter()
        prog = traced.program
        outputs, roots = passes.eager_views(prog)
        if len(roots) == len(outputs) and all(src == ("val", k) and not chain
                                              for k, (src, chain, _, _) in enumerate(outputs)):
            self.outputs = None         # every output is its own computed value
        else:
            self.outputs = outputs
            prog = Program(prog.in_vars, prog.eqns, roots)
        self.program = optimize(prog, donate)
        self.plan = passes.plan_buffers(self.program)
        self.fn = self._compile(self.plan)
        self.donate = tuple(donate)
        self.fn_donating = None
        if self.donate:
            plan = passes.plan_buffers(self.program, self.donate)
            self.fn_donating = self._compile(plan) if plan != self.plan else self.fn
        self.compile_seconds = time.perf_counter() - t0

    def _compile(self, plan):
        """``fn(*tensors) -> outputs`` running the program with buffer plan ``plan``, the
        outputs that are eagerly views made from their arguments or computed values."""
        raw = compile_program(self.program, plan, tensors=True, own_outputs=True)
        outputs = self.outputs
        if outputs is None:
            return raw

        def fn(*values):
            computed = raw(*values)
            made = {}
            return [rebuild(values[src[1]] if src[0] == "in" else computed[src[1]], chain, vmap,
                            steps, made)
                    for src, chain, vmap, steps in outputs]
        fn.source = raw.source
        return fn

    def __call__(self, values):
        values = [v if v.__class__ is Tensor else _as_tensor(v) for v in values]
        if self.fn_donating is not None and passes.check_donation(
                [v._np() for v in values], self.donate):
            # the donated buffers change as it runs: no second run, so no IEEE error either
            with np.errstate(all="ignore"):
                out = self.fn_donating(*values)
        else:
            try:
                out = self.fn(*values)
            except QUIET_ERRORS:
                # the user made NumPy's IEEE warnings errors (see executor.RUN_MODULE): the
                # program has no side effects on its inputs, so it runs again, silently
                out = rerun_quietly(self.fn, *values)
        return list(out)


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    c = x._concrete_tensor() if hasattr(x, "_concrete_tensor") else None
    if c is not None:
        return c
    return to_tensor(np.asarray(x))


def sub_executable(prog):
    """The compiled function of a sub-program, over arrays (built once per program)."""
    fn = prog.cache.get("exe")
    if fn is None:
        opt = optimize(prog)
        raw = compile_program(opt, passes.plan_buffers(opt), name="body")

        def fn(*xs):
            return raw(*[x if x.__class__ is np.ndarray and x.flags.c_contiguous
                         else _contiguous(x) for x in xs])
        prog.cache["exe"] = fn
    return fn


def _contiguous(x):
    x = np.asarray(x)
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)
