"""Abstract rules of the linear algebra (``nx_rune.backend.linalg``): batched over the leading
axes; decompositions with several results packed along a last axis (the sizes below are those
of the packed results the implementations return).

May import: NumPy, ``nx_rune.backend.linalg`` (the program of binary powering),
``nx_rune.primitives``, ``nx_rune.compiler.ir`` and ``nx_rune.compiler.abstract._core``.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.backend.linalg import complex_of, power_program
from nx_rune.compiler.abstract._core import _real_of, _reduced, def_abstract
from nx_rune.compiler.ir import AbstractValue

# -- products and matrix powers -------------------------------------------------------------------


@def_abstract(P.matmul_p)
def _matmul(avals):
    a, b = avals
    sa, sb = a.shape, b.shape
    if len(sa) == 1 and len(sb) == 1:
        return AbstractValue((), a.dtype)
    a2 = (1,) + sa if len(sa) == 1 else sa
    b2 = sb + (1,) if len(sb) == 1 else sb
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    shape = tuple(batch) + (a2[-2], b2[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    return AbstractValue(shape, a.dtype)


def_abstract(P.matrix_power_parts_p, lambda avals, *, n: AbstractValue(
    avals[0].shape[:-2] + (len(power_program(n)[0]),) + avals[0].shape[-2:], avals[0].dtype))
def_abstract(P.matrix_power_p, lambda avals, *, n: AbstractValue(avals[0].shape,
                                                                 avals[0].dtype))


# -- decompositions and solves --------------------------------------------------------------------

def_abstract(P.cholesky_p, lambda avals, *, jaxlib_call=False: AbstractValue(
    avals[0].shape, avals[0].dtype))
def_abstract(P.inv_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.triangular_solve_p,
             lambda avals, *, lower, trans, unit_diagonal, check_singular=True: AbstractValue(
                 avals[1].shape, avals[1].dtype))


@def_abstract(P.solve_p)
def _solve(avals):
    a, b = avals
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return AbstractValue(tuple(batch) + tuple(b.shape[-2:]), np.result_type(a.dtype, b.dtype))


def_abstract(P.slogdet_p, lambda avals: AbstractValue(avals[0].shape[:-2] + (2,),
                                                      avals[0].dtype))


@def_abstract(P.eigh_p)
def _eigh(avals, *, lower):
    a = avals[0]
    n = a.shape[-1]
    return AbstractValue(a.shape[:-2] + (n + n * n,), a.dtype)


def_abstract(P.eigvalsh_p, lambda avals, *, lower: AbstractValue(
    avals[0].shape[:-1], _real_of(avals[0].dtype)))


@def_abstract(P.svd_p)
def _svd(avals, *, full_matrices):
    a = avals[0]
    m, n = a.shape[-2:]
    k = min(m, n)
    u, vh = (m * m, n * n) if full_matrices else (m * k, k * n)
    return AbstractValue(a.shape[:-2] + (u + k + vh,), a.dtype)


def_abstract(P.svdvals_p, lambda avals: AbstractValue(
    avals[0].shape[:-2] + (min(avals[0].shape[-2:]),), _real_of(avals[0].dtype)))


@def_abstract(P.qr_p)
def _qr(avals, *, mode):
    a = avals[0]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "complete":
        size = m * m + m * n
    elif mode == "reduced":
        size = m * k + k * n
    else:
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return AbstractValue(a.shape[:-2] + (size,), a.dtype)


def_abstract(P.pinv_p, lambda avals, *, rtol: AbstractValue(
    avals[0].shape[:-2] + avals[0].shape[-2:][::-1], avals[0].dtype))


@def_abstract(P.lstsq_p)
def _lstsq(avals, *, rcond):
    a, b = avals
    m, n = a.shape
    k = b.shape[1]
    return AbstractValue((n * k + min(m, n),), np.result_type(a.dtype, b.dtype))


def_abstract(P.cho_solve_p, lambda avals, *, lower: AbstractValue(avals[1].shape, avals[1].dtype))
def_abstract(P.cho_solve_grad_p, lambda avals, *, lower: AbstractValue(avals[0].shape,
                                                                       avals[0].dtype))


# -- the LU factorization and what reads it, the Euclidean norm -----------------------------------

def_abstract(P.norm2_p, _reduced)


@def_abstract(P.lu_factor_p)
def _lu_factor(avals):
    a = avals[0]
    m, n = a.shape[-2:]
    return AbstractValue(a.shape[:-2] + (m * n + min(m, n),), a.dtype)


def_abstract(P.lu_inverse_p, lambda avals: AbstractValue(avals[0].shape, avals[0].dtype))
def_abstract(P.lu_det_p, lambda avals, *, part: AbstractValue(
    avals[0].shape[:-2], _real_of(avals[0].dtype) if part == "logabsdet" else avals[0].dtype))


# -- fused derivatives ----------------------------------------------------------------------------

def_abstract(P.cholesky_grad_p, lambda avals: AbstractValue(
    avals[0].shape, np.result_type(avals[0].dtype, avals[1].dtype)))
def_abstract(P.det_grad_p, lambda avals, adjugate=False: AbstractValue(avals[0].shape,
                                                                    avals[0].dtype))
def_abstract(P.norm2_grad_p, lambda avals, *, axes, keepdims: AbstractValue(avals[0].shape,
                                                                            avals[0].dtype))
def_abstract(P.triangular_solve_grad_p, lambda avals, *, lower, trans, unit_diagonal:
             AbstractValue(avals[0].shape[:-1] + (avals[0].shape[-2],), avals[0].dtype))


@def_abstract(P.eig_p)
def _eig(avals):
    # packed (w, V): (..., n + n * n), the complex dtype of the operand's precision
    a = avals[0]
    n = a.shape[-1]
    return AbstractValue(a.shape[:-2] + (n + n * n,), complex_of(a.dtype))
