"""``nx_rune.autograd.misc``: ``flatten``, ``optimizers``, ``const_graph``."""
from nx_rune.autograd.misc import optimizers  # noqa: F401,E402
from nx_rune.autograd.misc.flatten import flatten  # noqa: F401
from nx_rune.autograd.misc.tracers import const_graph  # noqa: F401

__all__ = ["flatten", "const_graph", "optimizers"]
