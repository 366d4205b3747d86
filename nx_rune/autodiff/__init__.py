"""Automatic differentiation: interpreters, the VJP/JVP rule tables and the transform API.

``nx.grad``, ``nx.vjp``, ``nx.jvp``, ``nx.jacfwd``, ... (see ``api``); ``VJP_RULES`` and
``JVP_RULES`` map each primitive (``nx.primitives.<name>_p``) to its rule (see ``rules`` for
the rule signatures and how to register rules for a new primitive); ``BATCH_RULES`` does the
same for ``nx.vmap`` (see ``batch_rules``).
"""
from nx_rune.autodiff.api import (
    detach,
    grad,
    grads,
    jvp,
    jvp_aux,
    jvps,
    linearize,
    no_grad,
    stop_gradient,
    value_and_grad,
    value_and_grads,
    vjp,
)
from nx_rune.autodiff.check import check_grads
from nx_rune.autodiff.custom import custom_jvp, custom_vjp
from nx_rune.autodiff.jacobians import hessian, hvp, jacfwd, jacobian, jacrev
from nx_rune.autodiff.rules import (  # noqa: F401
    JVP_RULES,
    NONDIFF,
    VJP_RULES,
    defelementwise,
    defjvp,
    deflinear,
    defnondiff,
    defvjp,
)
from nx_rune.errors import ModifiedInPlaceError, UnexpectedTracerError  # noqa: F401
from nx_rune.tree_util import tree_flatten, tree_map, tree_unflatten  # noqa: F401

__all__ = ["grad", "value_and_grad", "grads", "value_and_grads", "vjp", "jvp", "jvp_aux", "jvps",
           "linearize", "jacfwd", "jacrev", "hessian", "hvp", "stop_gradient", "detach",
           "no_grad", "custom_vjp", "custom_jvp", "check_grads"]

# -- batching (vmap, BATCH_RULES) and checkpointing (checkpoint, remat) ----------------------
from nx_rune.autodiff.batch_rules import BATCH_RULES  # noqa: F401,E402
from nx_rune.autodiff.batching import vmap  # noqa: E402
from nx_rune.autodiff.checkpoint import checkpoint, remat  # noqa: E402

__all__ += ["vmap", "checkpoint", "remat"]

# -- primitives declared after core.py whose rules read only shapes and parameters
from nx_rune import primitives as _P  # noqa: E402
from nx_rune.autodiff.core import VALUES_UNUSED as _VALUES_UNUSED  # noqa: E402

_VALUES_UNUSED.update({_P.roll_p, _P.sub_p})


def __dir__():
    """The public names: the transformations (``__all__``) and the rule tables."""
    return sorted(__all__ + ["BATCH_RULES", "JVP_RULES", "VJP_RULES"])
