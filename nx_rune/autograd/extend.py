"""autograd's ``autograd.extend`` on nx_rune's custom derivative rules.

``primitive(f)`` makes a function whose derivatives are given by rules instead of by tracing
its body (the body may call NumPy or SciPy on concrete values).  Its rules are autograd's:

- ``defvjp(f, maker_0, maker_1, ..., argnums=...)``: ``maker_i(ans, *args, **kwargs)`` returns
  ``g -> `` the cotangent of argument ``i`` (None: zero);
- ``defvjp_argnum(f, maker)``: ``maker(argnum, ans, args, kwargs)`` returns ``g -> ...``;
- ``defjvp(f, jvp_0, ..., argnums=...)``: ``jvp_i(g, ans, *args, **kwargs)`` is the tangent
  of the output for tangent ``g`` of argument ``i`` (``"same"``: ``f`` itself, for linear
  arguments; None: zero); ``defjvp_argnum(f, jvp)``: ``jvp(argnum, g, ans, args, kwargs)``;
- ``def_linear(f)``: ``f`` is linear in each argument.

A call with traced arguments becomes one ``nx_rune.custom_vjp`` (or ``custom_jvp``) call over
the traced arguments: the VJP rule serves reverse mode and, transposed, forward mode; a JVP rule
serves forward mode (and reverse mode, transposed, when there is no VJP rule).  The rules run
under the enclosing transformations, so rules written with ``nx_rune.autograd.numpy`` are
differentiated in turn (second derivatives, hessians), as in autograd.  Differentiating a
primitive without the needed rule raises NotImplementedError naming it.
"""
from __future__ import annotations

import functools
import warnings
from itertools import count

from nx_rune.autodiff.core import JVPInterpreter, Tape, Tracer
from nx_rune.autodiff.custom import _owner, custom_jvp, custom_vjp
from nx_rune.autograd import core as _core
from nx_rune.autograd._wrap import to_nx
from nx_rune.autograd.core import VSpace, primitive_jvps, primitive_vjps, vspace
from nx_rune.autograd.util import subval, subvals
from nx_rune.tensor import ArrayBase, Tensor

__all__ = ["primitive", "notrace_primitive", "defvjp", "defvjp_argnum", "defvjp_argnums",
           "defjvp", "defjvp_argnum", "defjvp_argnums", "def_linear", "vspace", "VSpace",
           "Box", "SparseObject", "getval", "isbox"]


def _traced(a):
    return isinstance(a, ArrayBase) and not isinstance(a, Tensor)


def isbox(x) -> bool:
    """Whether ``x`` is a traced value (autograd's box: a value under grad, jvp, vmap or jit)."""
    return _traced(x)


def getval(x):
    """The value under a traced ``x`` (its primal, through every level of reverse and forward
    mode); ``x`` itself for anything else."""
    while isinstance(x, Tracer) and hasattr(x, "primal"):
        x = x.primal
    return x


class _BoxMeta(type):
    def __instancecheck__(cls, obj):
        return _traced(obj)


class Box(metaclass=_BoxMeta):
    """For ``isinstance(x, Box)``: true for traced values (nx_rune's tracers), as autograd's
    boxes are the values its tracer sees."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("nx_rune.autograd.extend.Box is for isinstance checks only: nx_rune "
                        "traces values itself")


class SparseObject:
    """autograd's sparse cotangent (a vector space and a ``mut_add`` function)."""
    __slots__ = ["vs", "mut_add"]

    def __init__(self, vs, mut_add):
        self.vs = vs
        self.mut_add = mut_add


class primitive:
    """``f`` as a primitive: its derivatives come from ``defvjp``/``defjvp`` rules, not from
    tracing its body (see the module docstring)."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<nx_rune.autograd primitive {getattr(self.fun, '__name__', self.fun)!r}>"

    def __call__(self, *args, **kwargs):
        argnums = tuple(i for i, a in enumerate(args) if _traced(a))
        if not argnums:
            return self.fun(*args, **kwargs)
        traced = [args[i] for i in argnums]
        vjp_maker = primitive_vjps.get(self)
        jvp_maker = primitive_jvps.get(self)
        interp = _owner(traced)
        name = getattr(self.fun, "__name__", repr(self.fun))
        forward = isinstance(interp, JVPInterpreter)
        if not (forward or isinstance(interp, Tape)):
            # traced by jit or vmap, not differentiated: the body itself is traced (a body
            # that calls NumPy on the values cannot be).  Not through the rules: their
            # custom_vjp would trace the primal, which calls this again at the same level.
            return self.fun(*args, **kwargs)
        if jvp_maker is not None and (forward or vjp_maker is None):
            return self._via_jvp(args, kwargs, argnums, jvp_maker)(*traced)
        if vjp_maker is not None:
            return self._via_vjp(args, kwargs, argnums, vjp_maker)(*traced)
        mode = "JVP" if forward else "VJP"
        raise NotImplementedError(f"{mode} of {name} wrt argnums {argnums} not defined")

    def _primal(self, args, kwargs, argnums, xs):
        return to_nx(self(*subvals(args, zip(argnums, xs)), **kwargs))

    def _via_vjp(self, args, kwargs, argnums, vjp_maker):
        def f(*xs):
            return self._primal(args, kwargs, argnums, xs)

        def fwd(*xs):
            ans = self._primal(args, kwargs, argnums, xs)
            return ans, (ans, xs)

        def bwd(res, g):
            ans, xs = res
            vjp = vjp_maker(argnums, ans, subvals(args, zip(argnums, xs)), kwargs)
            return tuple(vjp(g))

        f.__name__ = getattr(self.fun, "__name__", "primitive")
        cf = custom_vjp(f)
        cf.defvjp(fwd, bwd)
        return cf

    def _via_jvp(self, args, kwargs, argnums, jvp_maker):
        def f(*xs):
            return self._primal(args, kwargs, argnums, xs)

        f.__name__ = getattr(self.fun, "__name__", "primitive")
        cf = custom_jvp(f)

        def rule(xs, ts):
            ans = self._primal(args, kwargs, argnums, xs)
            full = subvals(args, zip(argnums, xs))
            return ans, jvp_maker(argnums, ts, ans, full, kwargs)

        cf.defjvp(rule)
        return cf


def notrace_primitive(f_raw):
    """``f_raw`` applied to the values under traced arguments (never differentiated)."""
    @functools.wraps(f_raw)
    def f_wrapped(*args, **kwargs):
        return f_raw(*map(getval, args), **kwargs)
    return f_wrapped


# -- reverse mode -----------------------------------------------------------------------------

def defvjp_argnums(fun, vjpmaker):
    """``vjpmaker(argnums, ans, args, kwargs)`` returns ``g -> (cotangent per argnum)``."""
    primitive_vjps[fun] = vjpmaker


def defvjp_argnum(fun, vjpmaker):
    """``vjpmaker(argnum, ans, args, kwargs)`` returns ``g -> cotangent of args[argnum]``."""
    def vjp_argnums(argnums, *args):
        vjps = [vjpmaker(argnum, *args) for argnum in argnums]
        return lambda g: tuple(vjp(g) for vjp in vjps)
    defvjp_argnums(fun, vjp_argnums)


def _translate_vjp(vjpfun, fun, argnum):
    if vjpfun is None:
        return lambda ans, *args, **kwargs: lambda g: vspace(args[argnum]).zeros()
    if callable(vjpfun):
        return vjpfun
    raise TypeError(f"Bad VJP {vjpfun!r} for {getattr(fun, '__name__', fun)!r}")


def defvjp(fun, *vjpmakers, **kwargs):
    """One VJP maker per argument (``argnums`` says which; default 0, 1, ...):
    ``maker(ans, *args, **kwargs)`` returns ``g -> cotangent``."""
    argnums = kwargs.get("argnums", count())
    vjps_dict = {argnum: _translate_vjp(vjpmaker, fun, argnum)
                 for argnum, vjpmaker in zip(argnums, vjpmakers)}

    def vjp_argnums(argnums, ans, args, kwargs):
        try:
            vjps = [vjps_dict[argnum](ans, *args, **kwargs) for argnum in argnums]
        except KeyError:
            raise NotImplementedError(f"VJP of {getattr(fun, '__name__', fun)} wrt argnums "
                                      f"{argnums} not defined") from None
        return lambda g: tuple(vjp(g) for vjp in vjps)
    defvjp_argnums(fun, vjp_argnums)


# -- forward mode -----------------------------------------------------------------------------

def _sum(ts):
    total = None
    for t in ts:
        if t is None:
            continue
        total = t if total is None else total + t
    return total


def defjvp_argnums(fun, jvpmaker):
    """``jvpmaker(argnums, gs, ans, args, kwargs)`` returns the output tangent."""
    primitive_jvps[fun] = jvpmaker


def defjvp_argnum(fun, jvpmaker):
    """``jvpmaker(argnum, g, ans, args, kwargs)`` returns argument ``argnum``'s tangent
    contribution."""
    def jvp_argnums(argnums, gs, ans, args, kwargs):
        return _sum(jvpmaker(argnum, g, ans, args, kwargs) for argnum, g in zip(argnums, gs))
    defjvp_argnums(fun, jvp_argnums)


def _translate_jvp(jvpfun, fun, argnum):
    if jvpfun is None:
        return lambda g, ans, *a, **k: vspace(ans).zeros()
    if isinstance(jvpfun, str) and jvpfun == "same":
        return lambda g, ans, *args, **kwargs: fun(*subval(args, argnum, g), **kwargs)
    if callable(jvpfun):
        return jvpfun
    raise TypeError(f"Bad JVP {jvpfun!r} for {getattr(fun, '__name__', fun)!r}")


def defjvp(fun, *jvpfuns, **kwargs):
    """One JVP per argument (``argnums`` says which): ``jvp(g, ans, *args, **kwargs)``, or
    ``"same"`` for an argument ``fun`` is linear in, or None for zero."""
    argnums = kwargs.get("argnums", count())
    jvps_dict = {argnum: _translate_jvp(jvpfun, fun, argnum)
                 for argnum, jvpfun in zip(argnums, jvpfuns)}

    def jvp_argnums(argnums, gs, ans, args, kwargs):
        try:
            return _sum(jvps_dict[argnum](g, ans, *args, **kwargs)
                        for argnum, g in zip(argnums, gs))
        except KeyError:
            raise NotImplementedError(f"JVP of {getattr(fun, '__name__', fun)} wrt argnums "
                                      f"{argnums} not defined") from None
    defjvp_argnums(fun, jvp_argnums)


def def_linear(fun):
    """Flags ``fun`` as linear in each argument (its JVP is ``fun`` of the tangent)."""
    defjvp_argnum(fun, lambda argnum, g, ans, args, kwargs:
                  fun(*subval(args, argnum, g), **kwargs))


# -- autograd's deprecated rule-defining methods ------------------------------------------------

_DEPRECATED = ("\nThe {} method is deprecated. See the update guide and tutorial:\n"
               "https://github.com/HIPS/autograd/blob/master/docs/updateguide.md\n"
               "https://github.com/HIPS/autograd/blob/master/docs/tutorial.md")


def _deprecated_defvjp(fun):
    vjpfuns = {}

    def defvjp_unstaged(vjpmaker, argnum=0):
        warnings.warn(_DEPRECATED.format("defvjp"), stacklevel=2)

        def staged_vjpmaker(ans, *args, **kwargs):
            def vjp(g):
                return vjpmaker(g, ans, vspace(args[argnum]), vspace(g), *args, **kwargs)
            return vjp

        vjpfuns[argnum] = staged_vjpmaker
        argnums = sorted(vjpfuns)
        defvjp(fun, *[vjpfuns[a] for a in argnums], argnums=argnums)
    return defvjp_unstaged


def _deprecated_defvjp_is_zero(fun):
    zero = set()

    def defvjp_is_zero(argnums=(0,)):
        warnings.warn(_DEPRECATED.format("defvjp_is_zero"), stacklevel=2)
        zero.update(argnums)
        defvjp(fun, *[None] * len(zero), argnums=sorted(zero))
    return defvjp_is_zero


def _deprecated_defgrad(fun):
    gradfuns = {}

    def defgrad(gradfun, argnum=0):
        warnings.warn(_DEPRECATED.format("defgrad"), stacklevel=2)
        gradfuns[argnum] = gradfun
        argnums = sorted(gradfuns)
        defvjp(fun, *[gradfuns[a] for a in argnums], argnums=argnums)
    return defgrad


def primitive_with_deprecation_warnings(f_raw):
    """``primitive(f_raw)`` with autograd's deprecated methods ``defvjp(vjp(g, ans, vs, gvs,
    *args), argnum)``, ``defvjp_is_zero(argnums)`` and ``defgrad(maker, argnum)`` (each warns):
    ``autograd.core.primitive``."""
    f = primitive(f_raw)
    f.defvjp = _deprecated_defvjp(f)
    f.defvjp_is_zero = _deprecated_defvjp_is_zero(f)
    f.defgrad = _deprecated_defgrad(f)
    return f


# autograd.core.primitive is this one (extend imports core, so it is set from here; importing
# nx_rune.autograd imports this module)
_core.primitive = primitive_with_deprecation_warnings
