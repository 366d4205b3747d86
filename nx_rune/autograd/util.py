"""autograd's small helpers (``autograd.util``): ``subvals``, ``subval``, ``func``."""

import warnings

__all__ = ["subvals", "subval", "func", "quick_grad_check"]


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


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=1e-4, rtol=1e-4,
                     atol=1e-6, rs=None):
    """Deprecated (autograd's): ``check_grads(fun, modes=["rev"], order=1)`` at ``arg0`` with
    ``extra_args`` and ``kwargs`` fixed.  Warns."""
    warnings.warn("\nThe quick_grad_check function is deprecated. See the update guide:\n"
                  "https://github.com/HIPS/autograd/blob/master/docs/updateguide.md", stacklevel=2)
    from nx_rune.autograd.test_util import check_grads
    kwargs = kwargs or {}
    check_grads(lambda a: fun(a, *extra_args, **kwargs), modes=["rev"], order=1)(arg0)
