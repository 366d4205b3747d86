"""``nx_rune.nn``: JAX's ``jax.nn`` on nx_rune (``import jax.nn`` -> ``import nx_rune.nn``).

Activations (``relu``, ``relu6``, ``gelu``, ``silu``/``swish``, ``elu``, ``selu``, ``celu``,
``leaky_relu``, ``softplus``, ``soft_sign``, ``sigmoid``, ``log_sigmoid``, ``hard_tanh``,
``hard_sigmoid``, ``hard_silu``/``hard_swish``, ``mish``, ``squareplus``, ``sparse_plus``,
``sparse_sigmoid``, ``glu``, ``identity``, ``tanh``), ``softmax``, ``log_softmax``,
``logsumexp``, ``logmeanexp``, ``log1mexp``, ``one_hot``, ``standardize``,
``dot_product_attention`` (JAX's "xla" implementation), and the weight initializers in
:mod:`nx_rune.nn.initializers`.  See :mod:`nx_rune.nn.functions`.
"""
from nx_rune.nn import functions, initializers  # noqa: F401
from nx_rune.nn.functions import *  # noqa: F401,F403
from nx_rune.nn.functions import __all__ as _functions_all

__all__ = list(_functions_all) + ["initializers"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
