"""The solution of a linear system by an iterative solver, differentiated implicitly (JAX's
``lax.custom_linear_solve``): x = A^-1 b gives dx = A^-1 (db - dA x) and, in reverse mode,
b_bar = A^-T x_bar and (parameters of A)_bar = -(d(A x)/d params)^T A^-T x_bar.  The solver's
iterations are never differentiated: only its answer and one more solve (with A, or with A^T
for the cotangents) are used, so the derivatives are as accurate as the solves converge.

The operator ``matvec`` may close over arrays that a transformation traces (a matrix being
differentiated, parameters of the function): it is traced once to a program, the arrays it
captured become explicit arguments of the solve (closure conversion), and the derivative rules
differentiate the program in them.  The two solves (with A and with A^T) are ``custom_vjp``
functions whose VJPs call each other, so derivatives of any order, in both modes, go through
solves only.
"""
from __future__ import annotations

from nx_rune import frontend as F
from nx_rune import primitives as P
from nx_rune.autodiff import custom_vjp, vjp
from nx_rune.autodiff.core import is_inexact
from nx_rune.compiler.control._core import _aval, _trace
from nx_rune.compiler.interpret import eval_program
from nx_rune.tree_util import tree_flatten, tree_unflatten


def _zeros_tree(tree, leaves):
    return tree_unflatten(tree, [F.zeros_like(x) for x in leaves])


def linear_solve(matvec, b, solve, aux, symmetric=False):
    """``solve(matvec, b, aux)`` (an approximation of A^-1 b, A = ``matvec``; ``aux``: the
    solver's other inputs, a pytree of arrays that receives no derivative, such as the initial
    guess) with the implicit derivatives described in the module docstring.  ``symmetric``: A
    is its own transpose (A^-T is then a solve with A)."""
    if P._interpreter.get() is None:
        # nothing is transformed: no derivative can be asked for, solve directly
        return solve(matvec, b, aux)
    b_leaves, b_tree = tree_flatten(b)
    b_leaves = [F.asarray(x) for x in b_leaves]

    def flat_matvec(*xs):
        out = matvec(tree_unflatten(b_tree, list(xs)))
        leaves, tree = tree_flatten(out)
        if tree != b_tree or [F.asarray(x).shape for x in leaves] != [x.shape for x in
                                                                      b_leaves]:
            raise ValueError(f"A: the linear operator must return arrays of b's structure "
                             f"and shapes ({b_tree}, {[x.shape for x in b_leaves]})")
        return leaves

    traced = _trace(flat_matvec, [_aval(x) for x in b_leaves],
                    tree_flatten(tuple(range(len(b_leaves))))[1], "linear operator A")
    prog = traced.program
    consts = list(traced.captured)

    def apply(cs, v):
        """A v with A's captured arrays ``cs``."""
        return tree_unflatten(b_tree, eval_program(prog, tree_flatten(v)[0] + list(cs)))

    def apply_t(cs, v):
        """A^T v (the transpose of the linear map, by its VJP)."""
        if symmetric:
            return apply(cs, v)
        _, pull = vjp(lambda u: apply(cs, u), _zeros_tree(b_tree, b_leaves))
        return pull(v)[0]

    def const_cotangents(cs, x, lam):
        """-(d(A x)/d cs)^T lam: the cotangents of A's captured arrays (None for integer
        ones)."""
        idx = [i for i, c in enumerate(cs) if is_inexact(F.asarray(c).dtype)]
        out = [None] * len(cs)
        if not idx:
            return out

        def of_consts(*sel):
            full = list(cs)
            for i, c in zip(idx, sel):
                full[i] = c
            return apply(full, x)

        _, pull = vjp(of_consts, *[cs[i] for i in idx])
        for i, g in zip(idx, pull(_neg(lam))):
            out[i] = g
        return out

    @custom_vjp
    def forward(rhs, cs, aux):
        return solve(lambda v: apply(cs, v), rhs, aux)

    @custom_vjp
    def transposed(rhs, cs, aux):
        return solve(lambda v: apply_t(cs, v), rhs, aux)

    def forward_fwd(rhs, cs, aux):
        x = solve(lambda v: apply(cs, v), rhs, aux)
        return x, (x, cs, aux)

    def forward_bwd(res, ct):
        x, cs, aux = res
        lam = (forward if symmetric else transposed)(ct, cs, aux)
        return lam, const_cotangents(cs, x, lam), _nones(aux)

    def transposed_fwd(rhs, cs, aux):
        y = solve(lambda v: apply_t(cs, v), rhs, aux)
        return y, (y, cs, aux)

    def transposed_bwd(res, ct):
        y, cs, aux = res
        mu = forward(ct, cs, aux)
        # (A^T y)'s dependence on cs, pulled back along mu: the same as (A mu)'s along y
        return mu, const_cotangents(cs, mu, y), _nones(aux)

    forward.defvjp(forward_fwd, forward_bwd)
    transposed.defvjp(transposed_fwd, transposed_bwd)
    return forward(tree_unflatten(b_tree, b_leaves), consts, aux)


def _neg(tree):
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [F.negative(x) for x in leaves])


def _nones(tree):
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [None] * len(leaves))
