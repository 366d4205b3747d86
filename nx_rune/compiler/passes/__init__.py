"""Compiler passes: each a plain function Program -> Program (tests print before and after).

* ``dce``: dead-code elimination (equations whose outputs nobody uses).
* ``cse``: common-subexpression elimination (one equation per distinct (op, params, operands)).
* ``fold_constants``: equations on literals only are computed at compile time.
* ``simplify``: algebraic identities that are exact in IEEE arithmetic (``x * 1``,
  ``neg(neg(x))``, ``where(c, x, x)``, integer powers by repeated multiplication, ...).
* ``fold_views``: chains of movement ops (reshape, expand, permute, shrink, flip) become one
  strided ``view`` of a materialized array.
* ``fuse``: elementwise ops and the reductions that end them become fused kernels, one pass over
  memory each (run by the bytecode VM of ``nx_rune._kernels.fusion``).
* ``absorb_concat``: a concatenation of a kernel's results is written by the kernel in place.
* ``plan_buffers``: not a rewrite but a plan: which result writes into the memory of an operand
  that dies there (``out=``).
* ``eager_views``: not a rewrite but an analysis: which outputs are, eagerly, views of an input
  or of another value (the executable rebuilds those views as eager code does).

``lower`` applies the two lowering passes (views, fusion) after the optimizations.
"""
from nx_rune.compiler.passes.basic import cse, dce, fold_constants, simplify
from nx_rune.compiler.passes.buffers import check_donation, plan_buffers
from nx_rune.compiler.passes.fusion import absorb_concat, fuse
from nx_rune.compiler.passes.outputs import eager_views
from nx_rune.compiler.passes.views import fold_views

__all__ = ["dce", "cse", "fold_constants", "simplify", "fold_views", "fuse", "absorb_concat",
           "plan_buffers", "check_donation", "eager_views", "lower"]


def lower(prog):
    """The lowering passes: movement chains to views, fusion, concatenations written in place
    by the kernels that compute their parts."""
    return dce(absorb_concat(dce(fuse(fold_views(prog)))))
