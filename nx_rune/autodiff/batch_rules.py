"""Batching rules of every primitive: ``BATCH_RULES``, the table ``vmap`` reads, and the helpers
that make them (``defbroadcast``, ``defreduction``, ``defaxis``, ``defaxes``, ``defleading``,
``defloop``, ``defnoarrays``).

The rules live beside each primitive's VJP and JVP rules in ``nx_rune.autodiff.rules`` (one
module per family; the rule form and the helpers are described in
``nx_rune.autodiff.rules._batch_common``).  This module keeps the names importable from here.

May import: ``nx_rune.autodiff.rules`` only.
"""
from nx_rune.autodiff.rules import (  # noqa: F401
                                    BATCH_RULES,
                                    BroadcastRule,
                                    batch_at,
                                    defaxes,
                                    defaxis,
                                    defbroadcast,
                                    defleading,
                                    defloop,
                                    defnoarrays,
                                    defreduction,
                                    loop_rule,
                                    moveaxis,
)

__all__ = ["BATCH_RULES", "defbroadcast", "defreduction", "defaxis", "defaxes", "defleading",
           "defloop", "defnoarrays", "moveaxis", "batch_at", "loop_rule", "BroadcastRule"]
