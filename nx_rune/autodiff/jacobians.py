"""Jacobians and hessians: jacfwd (one jvp per input direction, batched by vmap), jacrev (one vjp
per output direction), jacobian (JAX's name for jacrev), hessian (jacfwd of jacrev) and hvp,
built on the transformations of ``api``.  Pytrees in and out, as there.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from nx_rune import frontend as ops
from nx_rune.autodiff.api import (
    _argnums,
    _arr,
    _as_args,
    _check_callable,
    _check_flag,
    _split_aux,
    grad,
    jvp,
    vjp,
)
from nx_rune.autodiff.batching import batched_call, vmap
from nx_rune.autodiff.core import is_inexact
from nx_rune.autodiff.pytree import tree_flatten_up_to
from nx_rune.frontend import zeros
from nx_rune.tensor import Tensor
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian", "hvp"]


def _with_args(f, args, nums, kwargs=None):
    """f as a function of the arguments in nums only (the others, and ``kwargs``, fixed)."""
    kwargs = kwargs or {}

    def g(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return f(*full, **kwargs)
    return g


def _diff_leaves(args, nums, fname, holomorphic, real_only, allow_int=False):
    """The leaves of the differentiated arguments, checked as JAX checks them: complex with
    ``holomorphic``; real floats when ``real_only`` (jacfwd); else real or complex floats
    (integers and bools too with ``allow_int``)."""
    per = []
    for i in nums:
        leaves, td = tree_flatten(args[i])
        xs = [_arr(x, fname) for x in leaves]
        for x in xs:
            if holomorphic:
                if x.dtype.kind != "c":
                    raise TypeError(f"{fname} with holomorphic=True requires inputs with "
                                    f"complex dtype, but argument {i} has a leaf of dtype "
                                    f"{x.dtype}")
            elif real_only and x.dtype.kind == "c":
                raise TypeError(f"{fname} requires real-valued inputs (a float dtype), but "
                                f"argument {i} has a leaf of dtype {x.dtype}. For holomorphic "
                                f"differentiation, pass holomorphic=True. For differentiation "
                                f"of non-holomorphic functions with complex inputs, use nx.jvp "
                                f"directly, or nx.jacrev of a real-valued function")
            elif not is_inexact(x.dtype) and not allow_int:
                hint = " (or pass allow_int=True)" if fname == "jacrev" else ""
                raise TypeError(f"{fname} requires float inputs, but argument {i} has a leaf "
                                f"of dtype {x.dtype}{hint}")
        per.append((xs, td))
    return per


def _check_jac_outputs(outs, fname, holomorphic, real_only):
    """JAX's checks of a Jacobian's outputs: complex with ``holomorphic``; real floats when
    ``real_only`` (jacrev)."""
    for o in outs:
        if holomorphic:
            if o.dtype.kind != "c":
                raise TypeError(f"{fname} with holomorphic=True requires outputs with complex "
                                f"dtype, but the function returned dtype {o.dtype}")
        elif real_only and o.dtype.kind == "c":
            raise TypeError(f"{fname} requires real-valued outputs (a float dtype), but the "
                            f"function returned dtype {o.dtype}. For holomorphic "
                            f"differentiation, pass holomorphic=True. For differentiation of "
                            f"non-holomorphic functions with complex outputs, use nx.vjp "
                            f"directly, or nx.jacfwd")
        elif not is_inexact(o.dtype):
            raise TypeError(f"{fname} requires float outputs, got dtype {o.dtype}")


def _basis(xs, n):
    """The n unit tangents of the leaves ``xs`` (n = their total size), stacked: one array per
    leaf, of shape ``(n,) + x.shape`` and x's dtype (row k is the k-th unit vector)."""
    out, off = [], 0
    for x in xs:
        e = np.zeros((n, x.size), x.dtype)
        e[np.arange(off, off + x.size), np.arange(x.size)] = 1
        out.append(Tensor._wrap(e.reshape((n,) + x.shape)))
        off += x.size
    return out


def _blocks(rows, outs, per):
    """The Jacobian blocks from ``rows``: for each output leaf o and input leaf x, an array of
    shape ``o.shape + x.shape`` from ``rows[i][j]`` (input leaf j's entries for output leaf i,
    shaped ``o.shape + (x.size,)``)."""
    res = []
    for o, row in zip(outs, rows):
        parts, j = [], 0
        for xs, td in per:
            leaves = []
            for x in xs:
                leaves.append(_reshaped(row[j], o.shape + x.shape))
                j += 1
            parts.append(tree_unflatten(td, leaves))
        res.append(parts)
    return res


def _reshaped(x, shape):
    """``x`` reshaped to ``shape``; ``x`` itself when it has that shape already (inside
    transformations each op is a step of every level: the no-ops are worth skipping)."""
    return x if tuple(x.shape) == shape else ops.reshape(x, shape)


def _span(c, off, size, axis):
    """Entries ``[off, off + size)`` of axis ``axis`` of ``c`` (the other axes whole); ``c``
    itself when that is all of it."""
    if off == 0 and size == c.shape[axis]:
        return c
    limits = [(0, d) for d in c.shape]
    limits[axis] = (off, off + size)
    return ops.shrink(c, limits)


class _Shape:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


def jacfwd(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian by forward mode: for each output leaf of shape So and input leaf of shape
    Si, an array of shape So + Si, in a pytree (output structure outside, the argument's
    structure, a tuple for tuple argnums, inside).  One batched pass: ``vmap`` of ``jvp`` over
    the n unit tangents of the inputs (n = their total size).  Inputs must be real floats
    (outputs may be complex), or, with ``holomorphic=True``, inputs and outputs complex (the
    result is ``f'(z)``), as in JAX.  With has_aux, ``f`` returns ``(out, aux)`` and the
    result is ``(jacobian, aux)`` (aux computed once, at the primals).  Keyword arguments are
    passed to ``f`` as they are (not differentiated)."""
    _check_callable(f, "jacfwd")
    holomorphic = _check_flag(holomorphic, "holomorphic", "jacfwd")
    has_aux = _check_flag(has_aux, "has_aux", "jacfwd")

    def jacfwd_f(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), "jacfwd")
        per = _diff_leaves(args, nums, "jacfwd", holomorphic, real_only=True)
        g = _with_args(f, args, nums, kwargs)
        flat = [x for xs, _ in per for x in xs]
        n = sum(x.size for x in flat)
        primals = tuple(tree_unflatten(td, xs) for xs, td in per)
        aux = None
        if n == 0:     # no direction to push: the Jacobian is empty
            out = g(*primals)
            if has_aux:
                out, aux = _split_aux(out, "jacfwd")
            ol, out_td = tree_flatten(out)
            outs = [_arr(o, "jacfwd") for o in ol]
            _check_jac_outputs(outs, "jacfwd", holomorphic, real_only=False)
            cols = [zeros(o.shape + (0,), o.dtype) for o in outs]
        else:
            basis = iter(_basis(flat, n))
            tans = tuple(tree_unflatten(td, [next(basis) for _ in xs]) for xs, td in per)
            if has_aux:
                # the aux output does not depend on the tangents: computed once (out_axes None)
                push = vmap(lambda *t: jvp(g, primals, t, has_aux=True)[1:], out_axes=(0, None))
                pushed, aux = push(*tans)
            else:
                # the batched call itself (vmap's argument checks and wrapper are for users'
                # calls: the basis is well formed by construction)
                leaves, td = tree_flatten((tans, {}))
                pushed = batched_call(lambda *t: jvp(g, primals, t)[1], leaves, td,
                                      [0] * len(leaves), n, "jacfwd")
            ol, out_td = tree_flatten(pushed)
            # (n,) + So -> So + (n,)
            cols = [ops.moveaxis(_arr(c, "jacfwd"), 0, -1) for c in ol]
            outs = [_Shape(c.shape[:-1], c.dtype) for c in cols]
            _check_jac_outputs(outs, "jacfwd", holomorphic, real_only=False)
        rows = []
        for c, o in zip(cols, outs):
            row, off = [], 0
            for x in flat:
                row.append(_span(c, off, x.size, len(o.shape)))
                off += x.size
            rows.append(row)
        res = [parts[0] if single else tuple(parts) for parts in _blocks(rows, outs, per)]
        jac = tree_unflatten(out_td, res)
        return (jac, aux) if has_aux else jac

    return jacfwd_f


def jacrev(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one forward pass, then one batched backward pass
    (``vmap`` of the VJP over the m unit cotangents of the outputs); same layout as
    ``jacfwd``.  Outputs must be real floats (inputs may be complex: rows are ``grad``'s, JAX's
    convention), or, with ``holomorphic=True``, inputs and outputs complex (the result is
    ``f'(z)``), as in JAX.  With has_aux, ``f`` returns ``(out, aux)`` and the result is
    ``(jacobian, aux)``.  Keyword arguments are passed to ``f`` as they are.  With
    ``allow_int=True`` integer and bool inputs are accepted: their blocks are zeros of the
    input's dtype (JAX's)."""
    _check_callable(f, "jacrev")
    holomorphic = _check_flag(holomorphic, "holomorphic", "jacrev")
    has_aux = _check_flag(has_aux, "has_aux", "jacrev")
    allow_int = _check_flag(allow_int, "allow_int", "jacrev")

    def jacrev_f(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), "jacrev")
        per = _diff_leaves(args, nums, "jacrev", holomorphic, real_only=False,
                           allow_int=allow_int)
        g = _with_args(f, args, nums, kwargs)
        primals = tuple(tree_unflatten(td, xs) for xs, td in per)
        if has_aux:
            out, vjp_fn, aux = vjp(g, *primals, has_aux=True)
        else:
            out, vjp_fn = vjp(g, *primals)
        ol, out_td = tree_flatten(out)
        outs = [_arr(o, "jacrev") for o in ol]
        _check_jac_outputs(outs, "jacrev", holomorphic, real_only=True)
        m = sum(o.size for o in outs)
        flat = [x for xs, _ in per for x in xs]
        if m == 0:
            grads = [zeros((0,) + x.shape, x.dtype) for x in flat]
        elif m == 1 and len(outs) == 1:
            # one output entry (a scalar f, and so every hessian): one plain VJP with the unit
            # cotangent, no batching level over a single direction (vmap of size 1 costs a
            # batch interpreter step per op of the backward pass and gains nothing)
            o = outs[0]
            ct = tree_unflatten(out_td, [Tensor._wrap(np.ones(o.shape, o.dtype))])
            grads = []
            for tree, (xs, td) in zip(vjp_fn(ct), per):
                leaves = tree_flatten_up_to(td, tree)
                grads += [zeros(x.shape, x.dtype) if g is None else g
                          for g, x in zip(leaves, xs)]
        else:
            cts = tree_unflatten(out_td, _basis(outs, m))
            grads = []
            for tree, (xs, td) in zip(vmap(vjp_fn)(cts), per):
                # an integer leaf (allow_int) has no cotangent (None): its rows are zeros
                leaves = tree_flatten_up_to(td, tree)
                grads += [zeros((m,) + x.shape, x.dtype) if g is None else g
                          for g, x in zip(leaves, xs)]
        # (m,) + Si: the rows of output leaf i are m's slice [off, off + size)
        rows, off = [], 0
        for o in outs:
            if m == 1 and len(outs) == 1:
                # one unbatched VJP: each gradient (of x's shape) is the whole row
                rows.append(grads)
                break
            rows.append([_reshaped(_span(gx, off, o.size, 0), (o.size, x.size))
                         for gx, x in zip(grads, flat)])
            off += o.size
        res = [parts[0] if single else tuple(parts) for parts in _blocks(rows, outs, per)]
        jac = tree_unflatten(out_td, res)
        return (jac, aux) if has_aux else jac

    return jacrev_f


def jacobian(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
             holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """Alias of :func:`jacrev` (JAX's ``jax.jacobian``)."""
    return jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """The Hessian of scalar ``f``: ``jacfwd(jacrev(f, argnums), argnums)``; for x of shape S,
    shape S + S.  ``holomorphic=True``: complex ``f`` of complex inputs (``f''(z)``).  With
    has_aux, ``f`` returns ``(out, aux)`` and the result is ``(hessian, aux)``."""
    has_aux = _check_flag(has_aux, "has_aux", "hessian")
    return jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


def hvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """Hessian-vector product of scalar ``f`` at ``primals`` along ``tangents`` (forward over
    reverse): ``(grad, hvp)``, i.e. ``jvp(grad(f), primals, tangents)``; each a pytree like the
    primals (the single array for one primal, a tuple for several)."""
    primals = _as_args(primals, "primals")
    tangents = _as_args(tangents, "tangents")
    nums = 0 if len(primals) == 1 else tuple(range(len(primals)))
    return jvp(grad(f, argnums=nums), primals, tangents)
