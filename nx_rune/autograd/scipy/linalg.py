"""``nx_rune.autograd.scipy.linalg``: ``scipy.linalg``'s names on ``nx_rune.scipy.linalg`` and
``nx_rune.linalg`` (the rest SciPy's on concrete values), differentiable to any order.
``sqrtm`` of a real matrix whose principal root is not real is complex, as SciPy's
(``nx.scipy.linalg.sqrtm`` keeps the real dtype, NaN there, so that its dtype does not depend
on the values under ``jit``)."""
import types as _types

import scipy.linalg as _spl

import nx_rune as _nx
import nx_rune.linalg as _nxl
import nx_rune.scipy.linalg as _nxsl
from nx_rune.autograd._namespace import populate as _populate
from nx_rune.autograd._wrap import in_x64 as _in_x64

_both = _types.SimpleNamespace(**{n: getattr(_nxl, n) for n in dir(_nxl) if not n.startswith("_")})
_both.__dict__.update({n: getattr(_nxsl, n) for n in dir(_nxsl) if not n.startswith("_")})
__all__ = _populate(globals(), _spl, _both, "nx_rune.autograd.scipy.linalg")


@_in_x64
def sqrtm(A, disp=True, blocksize=64):
    """The principal square root of each square matrix of A (..., n, n), SciPy's: real when it
    is real, complex otherwise (a real A with a negative real eigenvalue); differentiable."""
    A = _nx.asarray(A)
    X = _nxsl.sqrtm(A)
    if A.dtype.kind != "c" and bool(_nx.any(_nx.isnan(X))) and bool(_nx.all(_nx.isfinite(A))):
        X = _nxsl.sqrtm(A.astype(_nx.result_type(A.dtype, _nx.complex64)))
    return X
