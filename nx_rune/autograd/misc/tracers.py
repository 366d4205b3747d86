"""``const_graph(fun, *args, **kwargs)``: ``fun`` with some arguments fixed, traced once and
replayed (``nx_rune.jit``) on later calls, as autograd's ``const_graph``."""
import functools

import nx_rune as _nx
from nx_rune.autograd._wrap import in_x64

__all__ = ["const_graph"]


def const_graph(fun, *args, **kwargs):
    """``fun`` of its remaining positional arguments (``args`` and ``kwargs`` fixed), compiled on
    its first call and replayed without running Python on later calls."""
    partial_fun = functools.partial(fun, *args, **kwargs)
    compiled = _nx.jit(partial_fun)
    return in_x64(compiled)
