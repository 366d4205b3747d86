"""JAX's ``jax.ad_checkpoint`` names: ``checkpoint_policies``, ``checkpoint_name``,
``checkpoint`` (= ``nx.checkpoint``), ``print_saved_residuals`` and ``saved_residuals`` (what
reverse mode keeps for the backward pass).

A policy is a function ``policy(prim, *avals, **params) -> bool`` saying whether a value may
be saved rather than recomputed (JAX's protocol).  ``nx.checkpoint(f, policy=...)`` accepts
them; nx_rune recomputes every value inside ``f`` whatever the policy allows (values and
derivatives are the same; only memory and time differ), so the policies here answer as JAX's
do but are not consulted by the engine.
"""
from __future__ import annotations

from typing import Any

from nx_rune.ad_checkpoint_residuals import print_saved_residuals, saved_residuals
from nx_rune.autodiff.checkpoint import checkpoint

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "print_saved_residuals",
           "saved_residuals"]


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` unchanged, tagged ``name`` for the name-based policies (JAX's
    ``checkpoint_name``; nx_rune keeps no tags: the identity)."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {type(name).__name__}")
    return x


def _prim_name(prim):
    return getattr(prim, "name", str(prim))


def everything_saveable(*_, **__):
    """Save every value (no recomputation)."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing: recompute every value."""
    return False


def dots_saveable(prim, *_, **__):
    """Save the results of matrix products only."""
    return _prim_name(prim) in ("matmul", "dot_general")


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *_, **params):
    """Save the results of matrix products without batch dimensions only."""
    if not dots_saveable(prim):
        return False
    dn = params.get("dimension_numbers")
    return dn is None or not any(dn[1])


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_anything_except_these_names(*names):
    """A policy saving every value except those tagged with one of ``names``."""
    return everything_saveable


def save_any_names_but_these(*names):
    """A policy saving the named values except those tagged with one of ``names``."""
    return nothing_saveable


def save_only_these_names(*names):
    """A policy saving only the values tagged with one of ``names``."""
    return nothing_saveable


def save_and_offload_only_these_names(*, names_which_can_be_saved=(),
                                      names_which_can_be_offloaded=(), offload_src="device",
                                      offload_dst="pinned_host"):
    """As ``save_only_these_names`` (one device: nothing to offload to)."""
    return nothing_saveable


def offload_dot_with_no_batch_dims(offload_src="device", offload_dst="pinned_host"):
    """As ``dots_with_no_batch_dims_saveable`` (one device: nothing to offload to)."""
    return dots_with_no_batch_dims_saveable


def save_from_both_policies(policy_1, policy_2):
    """A policy saving what either policy saves."""
    def policy(*args, **params):
        return bool(policy_1(*args, **params)) or bool(policy_2(*args, **params))
    return policy


class _Policies:
    """JAX's ``jax.checkpoint_policies``: the policy functions as attributes."""
    everything_saveable = staticmethod(everything_saveable)
    nothing_saveable = staticmethod(nothing_saveable)
    dots_saveable = staticmethod(dots_saveable)
    checkpoint_dots = staticmethod(checkpoint_dots)
    dots_with_no_batch_dims_saveable = staticmethod(dots_with_no_batch_dims_saveable)
    checkpoint_dots_with_no_batch_dims = staticmethod(checkpoint_dots_with_no_batch_dims)
    save_anything_except_these_names = staticmethod(save_anything_except_these_names)
    save_any_names_but_these = staticmethod(save_any_names_but_these)
    save_only_these_names = staticmethod(save_only_these_names)
    save_and_offload_only_these_names = staticmethod(save_and_offload_only_these_names)
    offload_dot_with_no_batch_dims = staticmethod(offload_dot_with_no_batch_dims)
    save_from_both_policies = staticmethod(save_from_both_policies)

    def __repr__(self):
        return "nx_rune.checkpoint_policies"


checkpoint_policies = _Policies()


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
