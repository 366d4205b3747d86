"""The NumPy-like front end, one module per family, all composed from primitives.

Every function takes Tensors, tracers, NumPy arrays or Python scalars and returns a Tensor (or a
tracer under a transformation).  Because only primitives are bound, every function is
differentiable to any order wherever its primitives are.

Modules (each imports only ``_core`` and the ones before it in this list):
``_core`` (operand coercion, promotion, broadcasting), ``movement``, ``elementwise``,
``creation``, ``reductions``, ``products``, ``indexing``, ``contraction`` (einsum), ``nn``,
``arrangement`` (tile, repeat, roll, stacks, diagonal, diff, interp, ...).
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
from nx_rune.frontend.indexing import (  # noqa: F401
                                       IndexUpdateHelper,
                                       getitem,
                                       nonzero,
                                       put_along_axis,
                                       take,
                                       take_along_axis,
)
from nx_rune.frontend.movement import *  # noqa: F401,F403
from nx_rune.frontend.nn import *  # noqa: F401,F403
from nx_rune.frontend.products import *  # noqa: F401,F403
from nx_rune.frontend.reductions import *  # noqa: F401,F403

__all__ = [n for m in (_core, _movement, _elementwise, _creation, _reductions, _products,
                      _contraction, _nn) for n in m.__all__]
__all__ += ["IndexUpdateHelper", "take", "take_along_axis", "put_along_axis", "nonzero"]

# the arrangement family (Array API manipulation names, NumPy arrangement names)
from nx_rune.frontend import arrangement as _arrangement  # noqa: E402
from nx_rune.frontend.arrangement import *  # noqa: F401,F403,E402

__all__ += _arrangement.__all__


# -- statistics family: average, nan-reductions, ptp, count_nonzero, cov, corrcoef
from nx_rune.frontend import statistics as _statistics  # noqa: E402
from nx_rune.frontend.statistics import *  # noqa: F401,F403,E402

__all__ += _statistics.__all__


# -- namespace family (Array API data type functions): after _core, whose astype it extends
from nx_rune.frontend import dtype_functions as _dtype_functions  # noqa: E402
from nx_rune.frontend.dtype_functions import *  # noqa: F401,F403,E402

__all__ += [n for n in _dtype_functions.__all__ if n not in __all__]

# Tensor and tracer operators (``x + y``, ``x[i]``, ``x.sum()``) call the functions of this
# package; tensor.py cannot import it (the front end imports tensor.py), so it is handed over.
_tensor.install_frontend(__import__("sys").modules[__name__])

# sorting, searching, set functions and order statistics
from nx_rune.frontend import sorting as _sorting  # noqa: E402
from nx_rune.frontend.sorting import *  # noqa: F401,F403,E402

__all__ += _sorting.__all__


# x[idx] = v and the in-place operators reach the front end through these
from nx_rune.frontend.indexing import inplace_op, setitem  # noqa: F401,E402,I001

# NumPy names beyond the Array API (append, r_, c_, fmax, gradient, partition, vsplit, ...)
from nx_rune.frontend import numpy_names as _numpy_names  # noqa: E402
from nx_rune.frontend.numpy_names import *  # noqa: F401,F403,E402

__all__ += _numpy_names.__all__
