"""``nx_rune.autograd.scipy.linalg``: ``scipy.linalg``'s names on ``nx_rune.scipy.linalg`` and
``nx_rune.linalg`` (the rest SciPy's on concrete values); ``sqrtm`` and ``solve_sylvester`` as
primitives over SciPy with autograd's derivative rules."""
import types as _types

import scipy.linalg as _spl

import nx_rune.linalg as _nxl
import nx_rune.scipy.linalg as _nxsl
from nx_rune.autograd import numpy as _np
from nx_rune.autograd._namespace import populate as _populate
from nx_rune.autograd.extend import defjvp as _defjvp
from nx_rune.autograd.extend import defjvp_argnums as _defjvp_argnums
from nx_rune.autograd.extend import defvjp as _defvjp
from nx_rune.autograd.extend import defvjp_argnums as _defvjp_argnums
from nx_rune.autograd.scipy._util import scipy_primitive as _prim

_both = _types.SimpleNamespace(**{n: getattr(_nxl, n) for n in dir(_nxl) if not n.startswith("_")})
_both.__dict__.update({n: getattr(_nxsl, n) for n in dir(_nxsl) if not n.startswith("_")})
__all__ = _populate(globals(), _spl, _both, "nx_rune.autograd.scipy.linalg")

sqrtm = _prim(_spl.sqrtm)
solve_sylvester = _prim(_spl.solve_sylvester)


def _vjp_sqrtm(ans, A, disp=True, blocksize=64):
    ans_t = _np.transpose(ans)
    return lambda g: _np.real(solve_sylvester(ans_t, ans_t, g))


_defvjp(sqrtm, _vjp_sqrtm)
_defjvp(sqrtm, lambda dA, ans, A, disp=True, blocksize=64: solve_sylvester(ans, ans, dA))


def _jvp_sylvester(argnums, dms, ans, args, _):
    # A X + X B = Q: A dX + dX B = dQ - dA X - X dB
    a, b, q = args
    d = dict(zip(argnums, dms))
    rhs = d.get(2, 0) - _np.dot(d.get(0, 0 * a), ans) - _np.dot(ans, d.get(1, 0 * b))
    return solve_sylvester(a, b, rhs)


def _vjp_sylvester(argnums, ans, args, _):
    a, b, q = args

    def vjp(g):
        q_vjp = solve_sylvester(_np.transpose(a), _np.transpose(b), g)
        out = {0: lambda: -_np.dot(q_vjp, _np.transpose(ans)),
               1: lambda: -_np.dot(_np.transpose(ans), q_vjp), 2: lambda: q_vjp}
        return tuple(out[i]() for i in argnums)
    return vjp


_defjvp_argnums(solve_sylvester, _jvp_sylvester)
_defvjp_argnums(solve_sylvester, _vjp_sylvester)
