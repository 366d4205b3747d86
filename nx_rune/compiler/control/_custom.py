"""The operation that records a call of a ``custom_vjp`` or ``custom_jvp`` function in a traced
program (installed into the tracing interpreter as it loads).
"""
from __future__ import annotations

from nx_rune.compiler.control._core import ControlOp
from nx_rune.compiler.pipeline import sub_executable
from nx_rune.compiler.tracing import TraceInterpreter
from nx_rune.tree_util import tree_flatten, tree_unflatten

# -- custom_vjp / custom_jvp calls -----------------------------------------------------------------

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
