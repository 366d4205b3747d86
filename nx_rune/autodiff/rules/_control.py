"""``cond`` for the rules that choose between two formulas on traced values (det's second
derivatives: the closed form through inv(a) where every matrix is invertible, an SVD form at
singular ones), so that a compiled program runs one formula, not both.

The rules sit below the compiler that traces a branch into a sub-program, so they cannot import
``lax.cond``; ``nx_rune.compiler.control`` installs its ``cond`` here when it is imported (every
``import nx_rune`` does).  Until then, and for concrete predicates, the choice is a Python
``if``.
"""
from __future__ import annotations

from typing import Any, Callable

_cond: Callable[..., Any] | None = None


def install_cond(fn: Callable[..., Any]) -> None:
    """Make ``fn(pred, true_fun, false_fun, *operands)`` (``lax.cond``) the rules' cond."""
    global _cond
    _cond = fn


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, by ``lax.cond``."""
    if _cond is None:
        raise RuntimeError("the rules' cond is installed by nx_rune.compiler.control, which "
                           "`import nx_rune` imports")
    return _cond(pred, true_fun, false_fun, *operands)
