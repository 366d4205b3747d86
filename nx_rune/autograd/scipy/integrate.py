"""``nx_rune.autograd.scipy.integrate``: autograd's ``odeint(func, y0, t, args=(), **kwargs)``
on ``nx_rune.scipy.integrate.odeint`` (differentiable in y0, t and args, to any order);
``scipy.integrate``'s other names SciPy's, on concrete values."""
import scipy.integrate as _si

import nx_rune.scipy.integrate as _nxi
from nx_rune.autograd._namespace import populate as _populate
from nx_rune.autograd._wrap import in_x64 as _in_x64

__all__ = _populate(globals(), _si, None, "nx_rune.autograd.scipy.integrate")

# SciPy's keywords that nx_rune's integrator takes (the rest, LSODA's own, are ignored)
_KEYS = {"rtol": "rtol", "atol": "atol", "mxstep": "mxstep", "hmax": "hmax"}


@_in_x64
def odeint(func, y0, t, args=(), **kwargs):
    """y at the times ``t`` of dy/dt = func(y, t, *args), y(t[0]) = y0, as SciPy's (default
    tolerances 1.49012e-8); see ``nx_rune.scipy.integrate.odeint``."""
    opts = {"rtol": 1.49012e-8, "atol": 1.49012e-8}
    opts.update({_KEYS[k]: v for k, v in kwargs.items() if k in _KEYS and v is not None
                 and (k != "hmax" or v > 0) and (k != "mxstep" or v > 0)})
    return _nxi.odeint(func, y0, t, *tuple(args), **opts)
