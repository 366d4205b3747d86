"""Schur-based linear algebra (SciPy on concrete arrays): the Schur and Hessenberg reductions,
the principal matrix square root and logarithm, and the Sylvester equation.

Parameters: schur(a, output)  hessenberg(a)  matfunc(a, fn)  sylvester(a, b, q)

- ``schur`` packs (T, Z) with a = Z T Z^H, each flattened, along one last axis (..., 2 n n):
  ``output="real"`` the real Schur form of a real a (quasi-triangular T, 2x2 blocks for complex
  pairs, a's dtype), ``"complex"`` the complex one (triangular T, complex dtype).
- ``hessenberg`` packs (H, Q), a = Q H Q^H, H upper Hessenberg, a's dtype.
- ``matfunc`` is ``fn(a)`` for ``fn`` in ("sqrtm", "logm"): the principal square root and
  logarithm (scipy.linalg.sqrtm, logm).  The result has a's dtype: for a real a whose principal
  root or logarithm is not real (a negative real eigenvalue), that matrix's result is NaN, as
  the elementwise sqrt and log of a negative float.
- ``sylvester`` is x solving a x + x b = q (scipy.linalg.solve_sylvester: Bartels-Stewart),
  all three of one dtype; where a and -b share an eigenvalue (a singular equation) the values
  are SciPy's: huge or non-finite.

Every primitive maps over the leading (batch) axes, one SciPy call per matrix; a matrix with
NaN or inf entries gives NaN results (SciPy refuses them).

May import: NumPy, SciPy (on first use), ``nx_rune._kernels`` and ``nx_rune.backend._core``.
"""
import warnings

import numpy as np

from nx_rune.backend._core import _impl, _out


def _complex_of(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex128) if dt.itemsize >= 8 else np.dtype(np.complex64)


def _each(fn, arrays, out_tail, dtype):
    """``fn`` applied to the matrices of ``arrays`` (ndarrays with the same leading axes), each
    call returning one ndarray of shape ``out_tail``; stacked into (batch..., *out_tail) of
    ``dtype``.  Non-finite operands or a SciPy failure give NaN for that matrix."""
    batch = arrays[0].shape[:-2]
    out = np.empty(batch + tuple(out_tail), dtype)
    for idx in np.ndindex(*batch):
        mats = [x[idx] for x in arrays]
        if not all(np.isfinite(m).all() for m in mats):
            out[idx] = np.nan
            continue
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                r = fn(*mats)
            except (ValueError, np.linalg.LinAlgError, ArithmeticError):
                r = None
        if r is None:
            out[idx] = np.nan
        elif dtype.kind != "c" and np.iscomplexobj(r):
            # a real matrix whose result is not real: NaN (see the module's docstring)
            out[idx] = r.real if not np.any(r.imag) else np.nan
        else:
            out[idx] = r
    return out


@_impl("schur")
def _schur(a, *, output):
    from scipy.linalg import schur as sp_schur
    an = a._np()
    n = an.shape[-1]
    dt = _complex_of(an.dtype) if output == "complex" else an.dtype

    def one(m):
        t, z = sp_schur(m.astype(dt, copy=False), output=output)
        return np.concatenate([t.reshape(-1), z.reshape(-1)])
    return _out(_each(one, [an], (2 * n * n,), dt))


@_impl("hessenberg")
def _hessenberg(a):
    from scipy.linalg import hessenberg as sp_hessenberg
    an = a._np()
    n = an.shape[-1]

    def one(m):
        h, q = sp_hessenberg(m, calc_q=True)
        return np.concatenate([h.reshape(-1), q.reshape(-1)])
    return _out(_each(one, [an], (2 * n * n,), an.dtype))


def _sqrtm_one(m):
    from scipy.linalg import sqrtm
    r = sqrtm(m)
    return r


def _logm_one(m):
    from scipy.linalg import logm
    return logm(m)


_MATFUNCS = {"sqrtm": _sqrtm_one, "logm": _logm_one}


@_impl("matfunc")
def _matfunc(a, *, fn):
    an = a._np()
    one = _MATFUNCS[fn]
    return _out(_each(one, [an], an.shape[-2:], an.dtype))


def _sylvester_one(a, b, q):
    from scipy.linalg import solve_continuous_lyapunov, solve_sylvester
    if a.shape == b.shape and np.array_equal(b, np.conj(a.T)):
        # the continuous Lyapunov equation: one Schur decomposition instead of two
        return solve_continuous_lyapunov(a, q)
    return solve_sylvester(a, b, q)


@_impl("sylvester")
def _sylvester(a, b, q):
    an, bn, qn = a._np(), b._np(), q._np()
    return _out(_each(_sylvester_one, [an, bn, qn], qn.shape[-2:], qn.dtype))
