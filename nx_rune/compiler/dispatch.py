"""Which interpreter handles an operation of the compiler (a jit call, a control-flow
equation): the innermost active trace, or the innermost transformation owning one of its
operands."""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.autodiff.core import NoGradInterpreter, Tracer, call_in, concrete
from nx_rune.compiler.tracing import JitTracer, TraceInterpreter

__all__ = ["find_owner", "under"]

_var = P._interpreter


def find_owner(values):
    """The interpreter that handles an operation on ``values`` (see the module doc): the
    innermost active trace, or the innermost transformation owning one of the values; None
    when the values are concrete and no trace is active."""
    interp = _var.get()
    while interp is not None:
        if isinstance(interp, TraceInterpreter):
            return interp
        if isinstance(interp, NoGradInterpreter):
            for v in values:
                c = concrete(v)
                if isinstance(c, JitTracer) and not c._interp.done:
                    return c._interp
            return interp
        for v in values:
            if isinstance(v, Tracer) and v._interp is interp:
                return interp
        interp = interp.parent
    return None


under = call_in     # ``fn(*args)`` with ``interp`` as the innermost interpreter
