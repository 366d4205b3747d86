"""autograd's differential operators on nx_rune's reverse and forward modes.

Each takes ``(fun, argnum=0)`` and returns a function of ``fun``'s arguments, as autograd's
(``argnum`` a tuple differentiates several arguments at once: the result is a tuple).  They run in
x64 mode (Python numbers and lists are float64 and the function's NumPy calls get NumPy's
defaults), and accept arrays, Python numbers and lists/tuples/dicts of them.
"""
from __future__ import annotations

import inspect
import warnings
from collections import OrderedDict

import nx_rune as _nx
from nx_rune.autograd import numpy as np
from nx_rune.autograd._wrap import in_x64
from nx_rune.autograd.core import make_jvp as _make_jvp
from nx_rune.autograd.core import make_vjp as _make_vjp
from nx_rune.autograd.core import vspace
from nx_rune.autograd.wrap_util import unary_to_nary

__all__ = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian", "hessian",
           "make_vjp", "make_jvp", "holomorphic_grad", "make_hvp", "hessian_tensor_product",
           "hessian_vector_product", "tensor_jacobian_product", "vector_jacobian_product",
           "make_ggnvp", "deriv", "checkpoint", "grad_named", "multigrad_dict",
           "make_jvp_reversemode"]

make_vjp = unary_to_nary(_make_vjp)
make_jvp = unary_to_nary(_make_jvp)


def _scalar_check(ans, fname):
    vs = vspace(ans)
    if getattr(vs, "dtype", None) is not None and vs.dtype.kind not in "fc":
        # autograd has no vector space for ints and bools: a function whose output is one
        # (np.allclose, a count) is not differentiable
        raise TypeError(f"{fname}: the output {ans!r} has dtype {vs.dtype}; {fname} needs a "
                        f"float output")
    if vs.size != 1:
        raise TypeError(f"{fname} only applies to real scalar-output functions. Try jacobian, "
                        f"elementwise_grad or holomorphic_grad.")
    return vs


@unary_to_nary
@in_x64
def grad(fun, x):
    """
    Returns a function which computes the gradient of scalar-valued ``fun`` with respect to
    positional argument number ``argnum``: it takes ``fun``'s arguments and returns the gradient,
    shaped like that argument (TypeError for an output of size other than 1, or complex)."""
    vjp, ans = _make_vjp(fun, x)
    return vjp(_scalar_check(ans, "grad").ones())


@unary_to_nary
@in_x64
def elementwise_grad(fun, x):
    """The sum of each column of the Jacobian of ``fun`` in one reverse pass (the diagonal of a
    diagonal Jacobian): the VJP of ones."""
    vjp, ans = _make_vjp(fun, x)
    vs = vspace(ans)
    if vs.iscomplex:
        raise TypeError("Elementwise_grad only applies to real-output functions.")
    return vjp(vs.ones())


@unary_to_nary
@in_x64
def deriv(fun, x):
    """The derivative of ``fun`` along ones (forward mode): ``f'(x)`` for scalar ``x``."""
    return _make_jvp(fun, x)(vspace(x).ones())[1]


@unary_to_nary
@in_x64
def jacobian(fun, x):
    """The Jacobian of ``fun`` at array ``x``: shape ``out.shape + x.shape``."""
    vjp, ans = _make_vjp(fun, x)
    ans_vs, x_vs = vspace(ans), vspace(x)
    shape = ans_vs.shape + x_vs.shape
    if ans_vs.size == 0 or x_vs.size == 0:
        return _nx.zeros(shape, x_vs.dtype)
    if ans_vs.iscomplex:
        grads = [vjp(b) for b in ans_vs.standard_basis()]
        return np.reshape(np.stack(grads), shape)
    # the rows are the VJPs of the standard basis: one batched backward pass
    eye = _nx.eye(ans_vs.size, dtype=ans_vs.dtype)
    rows = _nx.vmap(lambda e: vjp(_nx.reshape(e, ans_vs.shape)))(eye)
    return np.reshape(rows, shape)


@unary_to_nary
@in_x64
def holomorphic_grad(fun, x):
    """The complex derivative ``f'(z)`` of holomorphic ``fun`` (warns for a real input)."""
    if not vspace(x).iscomplex:
        warnings.warn("Input to holomorphic_grad is not complex", stacklevel=2)
    return grad(lambda x: np.real(fun(x)))(x)


def grad_named(fun, argname):
    """The gradient with respect to the argument named ``argname`` (not ``*args``/``**kw``)."""
    arg_index = inspect.getfullargspec(fun).args.index(argname)
    return grad(fun, arg_index)


@unary_to_nary
@in_x64
def hessian(fun, x):
    """The Hessian of scalar ``fun``: ``jacobian(jacobian(fun))``."""
    return jacobian(jacobian(fun))(x)


@unary_to_nary
@in_x64
def make_hvp(fun, x):
    """``(hvp, grad_x)``: ``hvp(v)`` is the Hessian-vector product at ``x`` (the forward pass
    is shared by every call)."""
    return _make_vjp(grad(fun), x)


def hessian_tensor_product(fun, argnum=0):
    """``f(*args, tensor)``: the Hessian of ``fun`` (in argument ``argnum``) contracted with
    ``tensor`` over the argument's axes."""
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return np.tensordot(fun_grad(*args, **kwargs), vector, np.ndim(vector))
    return grad(vector_dot_grad, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """``f(*args, tensor)``: ``tensor`` contracted with the Jacobian of ``fun`` over the
    output's axes (the Jacobian left-multiplied by ``tensor``)."""
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return np.tensordot(vector, fun(*args, **kwargs), axes=np.ndim(vector))
    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


@unary_to_nary
@in_x64
def make_jvp_reversemode(fun, x):
    """A JVP function built from two reverse passes (the VJP of the VJP, linear in its
    argument)."""
    vjp, y = _make_vjp(fun, x)
    vjp_vjp, _ = _make_vjp(vjp, vspace(y).zeros())
    return vjp_vjp


def make_ggnvp(f, g=lambda x: 1.0 / 2 * np.sum(x ** 2, axis=-1), f_argnum=0):
    """Generalized Gauss-Newton-vector products of ``g(f(x))``: ``make_ggnvp(f, g)(*args)``
    returns ``v -> J_f^T H_g J_f v``."""
    @unary_to_nary
    @in_x64
    def _make_ggnvp(f, x):
        f_vjp, f_x = _make_vjp(f, x)
        g_hvp, grad_g_x = _make_vjp(grad(g), f_x)
        f_jvp, _ = _make_vjp(f_vjp, vspace(grad_g_x).zeros())

        def ggnvp(v):
            return f_vjp(g_hvp(f_jvp(v)))
        return ggnvp
    return _make_ggnvp(f, f_argnum)


@unary_to_nary
@in_x64
def value_and_grad(fun, x):
    """``(fun(x), grad(fun)(x))`` from one forward pass."""
    vjp, ans = _make_vjp(fun, x)
    return ans, vjp(_scalar_check(ans, "value_and_grad").ones())


@unary_to_nary
@in_x64
def grad_and_aux(fun, x):
    """``(gradient of the first output, second output)`` for ``fun`` returning a pair."""
    ans, vjp, aux = _nx.vjp(fun, x, has_aux=True)
    return vjp(vspace(ans).ones())[0], aux


def multigrad_dict(fun):
    """Gradients with respect to every argument at once: an OrderedDict from argument name
    to gradient (defaults included)."""
    sig = inspect.signature(fun)
    params = sig.parameters
    var_pos = [n for n, p in params.items() if p.kind == p.VAR_POSITIONAL]
    var_kwd = [n for n, p in params.items() if p.kind == p.VAR_KEYWORD]
    argnames = [n for n in params if n not in var_pos + var_kwd]

    def gradfun(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        defaults = {n: p.default for n, p in params.items() if p.default is not p.empty}
        argdict = OrderedDict((n, bound.arguments[n] if n in bound.arguments else defaults[n])
                              for n in params)

        def newfun(dct):
            pos = tuple(dct[n] for n in argnames)
            extra = tuple(dct[var_pos[0]]) if var_pos else ()
            kw = dict(dct[var_kwd[0]]) if var_kwd else {}
            return fun(*(pos + extra), **kw)
        grad_dict = grad(newfun)(dict(argdict))
        return OrderedDict((n, grad_dict[n]) for n in argdict)
    return gradfun


def checkpoint(fun):
    """``fun`` whose intermediate values are recomputed in the backward pass instead of
    stored (``nx_rune.checkpoint``): memory traded for time."""
    return _nx.checkpoint(fun)
