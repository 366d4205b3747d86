"""Type stub of the compiled module nx_rune.autodiff._tape (see _tape.pyx)."""
from typing import Any

def configure(*, tracer: Any, tape_tracer: Any, leaked_fn: Any, bind_at_fn: Any, nondiff: Any,
              inexact: Any, vjp_rules: Any, vjp_rule: Any, user_vjp_fn: Any, proj: Any,
              add_prim: Any, bind_fn: Any, call_impl_fn: Any,
              tape_cls: Any = None, steps_cls: Any = None, scalar_fn: Any = None,
              interp_var_: Any = None) -> None: ...
def process(self: Any, prim: Any, args: Any, params: dict[str, Any]) -> Any: ...
def backward(self: Any, seeds: Any) -> list[Any]: ...
