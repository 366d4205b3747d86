"""``check_grads``: derivatives by AD against central finite differences in float64."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from nx_rune.autodiff.api import jvp, vjp
from nx_rune.autodiff.core import concrete
from nx_rune.frontend import asarray
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["check_grads", "check_jvp", "check_vjp"]


def _to64(x):
    """Float leaves (arrays, Python floats) as float64 (complex128); other leaves unchanged."""
    if isinstance(x, float):
        return asarray(np.float64(x))
    if isinstance(x, complex):
        return asarray(np.complex128(x))
    if isinstance(x, (ArrayBase, np.ndarray)):
        arr = np.asarray(concrete(x)) if isinstance(x, ArrayBase) else x
        if arr.dtype.kind == "f":
            return asarray(arr.astype(np.float64))
        if arr.dtype.kind == "c":
            return asarray(arr.astype(np.complex128))
    return x


def _float(x):
    return isinstance(x, ArrayBase) and x.dtype.kind in "fc"


def _leaves(tree):
    return [np.asarray(concrete(x)) if isinstance(x, ArrayBase) else np.asarray(x)
            for x in tree_flatten(tree)[0]]


def _shift(args, dirs, eps):
    out = []
    for a, d in zip(args, dirs):
        leaves, td = tree_flatten(a)
        new = [asarray(np.asarray(x) + eps * dv) if dv is not None else x
               for x, dv in zip(leaves, d)]
        out.append(tree_unflatten(td, new))
    return tuple(out)


def _fd_jvp(f, args, dirs, eps):
    plus = _leaves(f(*_shift(args, dirs, eps)))
    minus = _leaves(f(*_shift(args, dirs, -eps)))
    return [(p.astype(np.result_type(p, np.float64)) - m) / (2 * eps) for p, m in zip(plus, minus)]


def _fail(mode, order, what, ad, fd, atol, rtol):
    ad, fd = np.asarray(ad), np.asarray(fd)
    err = np.abs(ad - fd)
    raise AssertionError(
        f"check_grads: {mode}-mode derivative of order {order} differs from central finite "
        f"differences ({what}): max |AD - FD| = {err.max() if err.size else 0:.3g} "
        f"(atol={atol:.1g}, rtol={rtol:.1g})\n  AD: {np.array2string(ad, precision=8)}\n"
        f"  FD: {np.array2string(fd, precision=8)}")


def _close(ad, fd, atol, rtol):
    ad, fd = np.asarray(ad), np.asarray(fd)
    return ad.shape == fd.shape and bool(np.all(np.abs(ad - fd) <= atol + rtol * np.abs(fd)))


def _pair(a, b):
    return float(np.sum(np.multiply(a, b)).real)


def _random_like(leaf, rng):
    arr = np.asarray(concrete(leaf))
    v = rng.standard_normal(arr.shape)
    if arr.dtype.kind == "c":
        v = v + 1j * rng.standard_normal(arr.shape)
    return v.astype(arr.dtype)


def _check(f, args, order, modes, atol, rtol, eps, rng, level):
    dirs = []
    for a in args:
        leaves, _ = tree_flatten(a)
        dirs.append([_random_like(x, rng) if _float(x) else None for x in leaves])
    tangents = []
    for a, d in zip(args, dirs):
        leaves, td = tree_flatten(a)
        tangents.append(tree_unflatten(td, [asarray(dv) if dv is not None else None
                                            for dv in d]))
    fd = _fd_jvp(f, args, dirs, eps)
    if "fwd" in modes:
        _, tout = jvp(f, args, tuple(tangents))
        ad = _leaves(tout)
        for k, (a, b) in enumerate(zip(ad, fd)):
            if not _close(a, b, atol, rtol):
                _fail("forward", level, f"output leaf {k}", a, b, atol, rtol)
    if "rev" in modes:
        out, vjp_fn = vjp(f, *args)
        outs, out_td = tree_flatten(out)
        us = [_random_like(o, rng) if _float(o) else None for o in outs]
        cts = vjp_fn(tree_unflatten(out_td, [asarray(u) if u is not None else None
                                             for u in us]))
        # the pairing of the transpose convention, Re(sum(a * b)) without conjugation (JAX's and
        # the rules'): <vjp(u), v> = <u, jvp(v)> for real and complex values alike
        lhs = 0.0
        for ct, d in zip(cts, dirs):
            for c, dv in zip(tree_flatten(ct)[0] if ct is not None else [], d):
                if c is not None and dv is not None:
                    lhs += _pair(np.asarray(dv), np.asarray(concrete(c)))
        rhs = sum(_pair(u, v) for u, v in zip(us, fd) if u is not None)
        if not _close(lhs, rhs, atol, rtol):
            _fail("reverse", level, "<vjp(u), v> against <u, FD jvp(v)>", lhs, rhs, atol, rtol)
    if order > 1:
        if "fwd" in modes:
            tan = tuple(tangents)
            _check(lambda *a: jvp(f, a, tan)[1], args, order - 1, modes, atol, rtol, eps, rng,
                   level + 1)
        if "rev" in modes:
            outs, out_td = tree_flatten(f(*args))
            outs = [o if isinstance(o, ArrayBase) else asarray(o) for o in outs]
            u = tree_unflatten(out_td, [asarray(_random_like(o, rng)) if _float(o) else None
                                        for o in outs])
            _check(lambda *a: vjp(f, *a)[1](u), args, order - 1, modes, atol, rtol, eps, rng,
                   level + 1)


def check_grads(f: Callable[..., Any], args: Sequence[Any] | None = None, order: int = 1,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check ``f``'s derivatives up to ``order`` (1 or 2) against central finite differences.

    ``args``: a tuple (or list) of positional arguments (pytrees of arrays; a single array is
    taken as one argument); float leaves are converted to float64.  ``modes``: "fwd" compares
    ``jvp`` along random tangents with ``(f(x + eps v) - f(x - eps v)) / 2 eps``; "rev" compares
    ``<vjp(u), v>`` with ``<u, FD(v)>`` for random u, v.  Order 2 checks the derivative
    functions (jvp along a fixed v, vjp with a fixed u) the same way.  Defaults: eps=1e-5,
    atol=rtol=1e-5.  Raises AssertionError with both values on a mismatch.  ``args`` is
    required: without it (autograd's ``check_grads(f)(x)``) TypeError shows the nx form.
    """
    if args is None:
        raise TypeError(f"check_grads: args is missing; nx takes the function and its arguments "
                        f"in one call, as JAX: nx.check_grads(f, (x,), order={order!r}) (not "
                        f"autograd's check_grads(f)(x))")
    if isinstance(modes, str):
        modes = (modes,)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"modes: expected 'fwd' and/or 'rev', got {m!r}")
    if order not in (1, 2, 3):
        raise ValueError(f"order: expected 1 or 2, got {order}")
    if not isinstance(args, (tuple, list)):
        args = (args,)
    args = tuple(tree_unflatten(td, [_to64(x) for x in leaves])
                 for leaves, td in (tree_flatten(a) for a in args))
    eps = 1e-5 if eps is None else eps
    atol = 1e-5 if atol is None else atol
    rtol = 1e-5 if rtol is None else rtol
    _check(f, args, order, tuple(modes), atol, rtol, eps, np.random.default_rng(0), 1)


def _prepare(args, eps, atol, rtol):
    if not isinstance(args, (tuple, list)):
        args = (args,)
    args = tuple(tree_unflatten(td, [_to64(x) for x in leaves])
                 for leaves, td in (tree_flatten(a) for a in args))
    return (args, 1e-4 if eps is None else eps, 1e-5 if atol is None else atol,
            1e-5 if rtol is None else rtol)


def _random_dirs(args, rng):
    """Random directions for the float leaves of ``args``: (per-argument lists of ndarrays or
    None, the same as pytrees of tensors)."""
    dirs, trees = [], []
    for a in args:
        leaves, td = tree_flatten(a)
        d = [_random_like(x, rng) if _float(x) else None for x in leaves]
        dirs.append(d)
        trees.append(tree_unflatten(td, [asarray(v) if v is not None else None for v in d]))
    return dirs, tuple(trees)


def _check_primal(name, got, f, args, atol, rtol, err_msg):
    for k, (a, b) in enumerate(zip(_leaves(got), _leaves(f(*args)))):
        if not _close(a, b, atol, rtol):
            raise AssertionError(f"{name}: primal output leaf {k} differs from f(*args) "
                                 f"{err_msg}\n  got: {a}\n  f:   {b}")


def check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None, eps: float | None = None,
              err_msg: str = "") -> None:
    """Check ``f_jvp(primals, tangents) -> (out, tangent_out)`` (``partial(nx.jvp, f)`` or a
    hand-written one) against ``f`` and central finite differences along random tangents, as
    ``jax.test_util.check_jvp``.  AssertionError naming the mismatch.

    Examples
    --------
    >>> import functools
    >>> import nx_rune as nx
    >>> from nx_rune.test_util import check_jvp
    >>> check_jvp(nx.sin, functools.partial(nx.jvp, nx.sin), (nx.ones(3),))
    """
    args, eps, atol, rtol = _prepare(args, eps, atol, rtol)
    dirs, tangents = _random_dirs(args, np.random.default_rng(0))
    out, tout = f_jvp(args, tangents)
    _check_primal("check_jvp", out, f, args, atol, rtol, err_msg)
    for k, (a, b) in enumerate(zip(_leaves(tout), _fd_jvp(f, args, dirs, eps))):
        if not _close(a, b, atol, rtol):
            _fail("forward", 1, f"output leaf {k} {err_msg}", a, b, atol, rtol)


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None, eps: float | None = None,
              err_msg: str = "") -> None:
    """Check ``f_vjp(*args) -> (out, vjp_fn)`` (``partial(nx.vjp, f)`` or a hand-written one)
    against ``f`` and finite differences: <vjp_fn(u), v> against <u, (f(x + eps v) -
    f(x - eps v)) / 2 eps> for random u, v, as ``jax.test_util.check_vjp``.

    Examples
    --------
    >>> import functools
    >>> import nx_rune as nx
    >>> from nx_rune.test_util import check_vjp
    >>> check_vjp(nx.tanh, functools.partial(nx.vjp, nx.tanh), (nx.ones(3),))
    """
    args, eps, atol, rtol = _prepare(args, eps, atol, rtol)
    rng = np.random.default_rng(0)
    out, vjp_fn = f_vjp(*args)
    _check_primal("check_vjp", out, f, args, atol, rtol, err_msg)
    dirs, _ = _random_dirs(args, rng)
    outs, out_td = tree_flatten(out)
    us = [_random_like(o, rng) if _float(o) else None for o in outs]
    cts = vjp_fn(tree_unflatten(out_td, [asarray(u) if u is not None else None for u in us]))
    lhs = 0.0
    for ct, d in zip(cts, dirs):
        for c, dv in zip(tree_flatten(ct)[0] if ct is not None else [], d):
            if c is not None and dv is not None:
                lhs += _pair(np.asarray(dv), np.asarray(concrete(c)))
    rhs = sum(_pair(u, v) for u, v in zip(us, _fd_jvp(f, args, dirs, eps)) if u is not None)
    if not _close(lhs, rhs, atol, rtol):
        _fail("reverse", 1, f"<vjp(u), v> against <u, FD jvp(v)> {err_msg}", lhs, rhs, atol,
              rtol)
