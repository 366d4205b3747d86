"""The NumPy-like front end, one module per family, all composed from primitives.

Every function takes Tensors, tracers, NumPy arrays or Python scalars and returns a Tensor (or a
tracer under a transformation).  Because only primitives are bound, every function is
differentiable to any order wherever its primitives are.

Modules (each imports only ``_core`` and the ones before it in this list):
``_core`` (operand coercion, promotion, broadcasting), ``movement``, ``elementwise``,
``creation``, ``reductions``, ``products``, ``indexing``, ``contraction`` (einsum), ``nn``.
"""
from nx_rune import tensor as _tensor
from nx_rune.frontend import _core
from nx_rune.frontend import contraction as _contraction
from nx_rune.frontend import creation as _creation
from nx_rune.frontend import elementwise as _elementwise
from nx_rune.frontend import movement as _movement
from nx_rune.frontend import nn as _nn
from nx_rune.frontend import products as _products
from nx_rune.frontend import reductions as _reductions
from nx_rune.frontend._core import *  # noqa: F401,F403
from nx_rune.frontend._core import zeros_like_t  # noqa: F401  (for the rules: a broadcast zero)
from nx_rune.frontend.contraction import *  # noqa: F401,F403
from nx_rune.frontend.creation import *  # noqa: F401,F403
from nx_rune.frontend.elementwise import *  # noqa: F401,F403
from nx_rune.frontend.indexing import (IndexUpdateHelper, getitem, nonzero,  # noqa: F401
                                       put_along_axis, take, take_along_axis)
from nx_rune.frontend.movement import *  # noqa: F401,F403
from nx_rune.frontend.nn import *  # noqa: F401,F403
from nx_rune.frontend.products import *  # noqa: F401,F403
from nx_rune.frontend.reductions import *  # noqa: F401,F403

__all__ = [n for m in (_core, _movement, _elementwise, _creation, _reductions, _products,
                      _contraction, _nn) for n in m.__all__]
__all__ += ["IndexUpdateHelper", "take", "take_along_axis", "put_along_axis", "nonzero"]

# Tensor and tracer operators (``x + y``, ``x[i]``, ``x.sum()``) call the functions of this
# package; tensor.py cannot import it (the front end imports tensor.py), so it is handed over.
_tensor.install_frontend(__import__("sys").modules[__name__])

# WP-setitem: x[idx] = v and the in-place operators reach the front end through these
from nx_rune.frontend.indexing import inplace_op, setitem  # noqa: F401,E402
