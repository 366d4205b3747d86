"""JAX's signatures of ``cond``, ``scan`` and ``fori_loop`` over nx_rune's control flow
(``nx_rune.compiler.control``): the keywords JAX programs pass that change nothing here
(``unroll``: nx_rune's executor runs the traced body once per step whatever the unrolling;
``cond``'s older ``operand=``) are accepted, the rest is passed on unchanged."""
from __future__ import annotations

from typing import Any, Callable

from nx_rune.compiler import control as _control

__all__ = ["cond", "fori_loop", "scan", "while_loop"]

_NONE = object()
while_loop = _control.while_loop


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any,
         operand: Any = _NONE) -> Any:
    """JAX's ``lax.cond(pred, true_fun, false_fun, *operands)``: ``true_fun(*operands)`` if
    ``pred`` else ``false_fun(*operands)`` (see ``nx_rune.compiler.control.cond``).  JAX's
    older single ``operand=`` keyword is accepted too."""
    if operand is not _NONE:
        if operands:
            raise TypeError("cond: pass either operands or operand=, not both")
        operands = (operand,)
    return _control.cond(pred, true_fun, false_fun, *operands)


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1,
         _split_transpose: bool = False) -> tuple[Any, Any]:
    """JAX's ``lax.scan(f, init, xs=None, length=None, reverse=False, unroll=1)``: loop
    ``carry, y = f(carry, x)`` over the leading axis of ``xs`` (see
    ``nx_rune.compiler.control.scan``).  ``unroll`` is accepted (a positive int or a bool)
    and changes nothing: the values are the same whatever the unrolling."""
    if not isinstance(unroll, (bool, int)) or (not isinstance(unroll, bool) and unroll < 1):
        raise ValueError(f"unroll: expected an int >= 1 or a bool, got {unroll!r}")
    return _control.scan(f, init, xs, length, reverse)


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """JAX's ``lax.fori_loop(lower, upper, body_fun, init_val, unroll=None)`` (see
    ``nx_rune.compiler.control.fori_loop``); ``unroll`` is accepted and changes nothing."""
    if unroll is not None and not isinstance(unroll, (bool, int)):
        raise ValueError(f"unroll: expected an int, a bool or None, got {unroll!r}")
    return _control.fori_loop(lower, upper, body_fun, init_val)
