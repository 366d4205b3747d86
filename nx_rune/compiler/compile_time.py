"""``nx.ensure_compile_time_eval``: compute operations on concrete values at once, even while
``jit`` traces (JAX's ``jax.ensure_compile_time_eval``)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from nx_rune import primitives as P
from nx_rune.autodiff.core import Interpreter, bind_at

__all__ = ["ensure_compile_time_eval"]

_var = P._interpreter


class _CompileTimeEval(Interpreter):
    """A level that records nothing: an operation whose operands are all concrete runs its
    implementation at once (``stages`` off: ``bind`` computes it); one with a traced operand
    goes to the levels below unchanged."""
    __slots__ = ()

    def __init__(self, parent):
        Interpreter.__init__(self, "ensure_compile_time_eval", parent)
        self.stages = False

    def process(self, prim, args, params):
        return bind_at(self.parent, prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """A block in which operations on concrete values are computed when they run, also while
    ``jit`` traces the function (they would otherwise be recorded into the program, and their
    results be tracers): ``int(nx.arange(3).sum())`` inside a jitted function works in it.
    Operations on traced values are traced as usual.

    Examples
    --------
    >>> import nx_rune as nx
    >>> @nx.jit
    ... def f(x):
    ...     with nx.ensure_compile_time_eval():
    ...         n = int(nx.sum(nx.arange(4)))    # a Python int at trace time
    ...     return x * n
    >>> f(1.0)
    Tensor(6., dtype=float32)
    """
    interp = _CompileTimeEval(_var.get())
    token = _var.set(interp)
    try:
        yield
    finally:
        _var.reset(token)
        interp.done = True
