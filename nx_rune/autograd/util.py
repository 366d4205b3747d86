"""autograd's small helpers (``autograd.util``): ``subvals``, ``subval``, ``func``."""

__all__ = ["subvals", "subval", "func"]


def subvals(x, ivs):
    """``x`` (a sequence) as a tuple with ``x[i] = v`` for each ``(i, v)`` of ``ivs``."""
    x_ = list(x)
    for i, v in ivs:
        x_[i] = v
    return tuple(x_)


def subval(x, i, v):
    """``x`` (a sequence) as a tuple with ``x[i] = v``."""
    x_ = list(x)
    x_[i] = v
    return tuple(x_)


def func(f):
    """``f`` itself (autograd's identity helper)."""
    return f
