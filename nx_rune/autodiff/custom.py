"""``custom_vjp`` and ``custom_jvp``: user-defined derivative rules for Python functions (JAX
style).

::

    @nx.custom_vjp
    def clip_gradient(x):
        return x
    def fwd(x):
        return x, None                       # (output, residuals)
    def bwd(res, g):
        return (nx.clip(g, -1.0, 1.0),)      # one cotangent per positional argument
    clip_gradient.defvjp(fwd, bwd)

    @nx.custom_jvp
    def log1pexp(x):
        return nx.log1p(nx.exp(x))
    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * nx.sigmoid(x)

The call is handled by the innermost transformation that owns one of the arguments.  Under
reverse mode a ``custom_vjp`` records ``bwd``; under forward mode it uses the transpose of
``bwd`` (``bwd`` must be linear in the cotangent, as a VJP is).  A ``custom_jvp`` rule is used
as it is in forward mode and transposed (its tangent output must be linear in the tangents)
in reverse mode.  ``fwd``, ``bwd`` and the rules run under the enclosing transformations, so
they are differentiated in turn: custom rules nest (grad of grad, jvp of grad, hessians).
Keyword arguments are passed to the function and to ``fwd`` as non-differentiable constants
(``bwd`` and JVP rules do not receive them).
"""
import functools

from nx_rune import primitives as P
from nx_rune.autodiff.core import (
    JVPInterpreter,
    JVPTracer,
    NoGradInterpreter,
    Tape,
    TapeTracer,
    Tracer,
    call_in,
    is_inexact,
)
from nx_rune.autodiff.pytree import tree_flatten_up_to
from nx_rune.frontend import zeros
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_vjp", "custom_jvp"]

_var = P._interpreter


def _owner(leaves):
    """The innermost active interpreter that owns one of ``leaves`` (None: none does)."""
    interp = _var.get()
    while interp is not None:
        if isinstance(interp, NoGradInterpreter):
            return None
        if getattr(interp, "custom_call", None) is not None:
            return interp       # a tracing interpreter (jit) records the call with its rules
        for x in leaves:
            if isinstance(x, Tracer) and x._interp is interp:
                return interp
        interp = interp.parent
    return None


def _split(interp, leaves, tracer_cls):
    primals, handles = [], []
    for x in leaves:
        if x.__class__ is tracer_cls and x._interp is interp:
            primals.append(x.primal)
            handles.append(x)
        else:
            primals.append(x)
            handles.append(None)
    return primals, handles


def _zeros_like(x):
    if isinstance(x, ArrayBase):
        return zeros(x.shape, x.dtype)
    return 0.0 if isinstance(x, float) else x


def _diff(x):
    return isinstance(x, ArrayBase) and is_inexact(x.dtype)


def _check_ct(ct, like, name):
    if ct is None or not _diff(like):
        return None
    if not isinstance(ct, ArrayBase):
        from nx_rune.frontend import asarray
        ct = asarray(ct, like.dtype)
    if ct.shape != like.shape:
        raise ValueError(f"{name}: a rule returned shape {ct.shape} for an operand of shape "
                         f"{like.shape}")
    if ct.dtype != like.dtype:
        from nx_rune.frontend import astype
        ct = astype(ct, like.dtype)
    return ct


class _Entry:
    """A multi-output tape entry (see Tape.record_multi): ``vjp(gs)`` and ``jvp(ts)``."""
    __slots__ = ("cf", "primals", "in_td", "outs", "out_td", "kwargs", "res", "idxs")

    def __init__(self, cf, primals, in_td, outs, out_td, kwargs, res=None):
        self.cf, self.primals, self.in_td = cf, primals, in_td
        self.outs, self.out_td, self.kwargs, self.res = outs, out_td, kwargs, res
        self.idxs = None


class _VJPEntry(_Entry):
    __slots__ = ()

    def vjp(self, gs):
        gs = [g if g is not None else _zeros_like(o) for g, o in zip(gs, self.outs)]
        ct = self.cf.bwd(self.res, tree_unflatten(self.out_td, gs))
        if not isinstance(ct, (tuple, list)):
            raise TypeError(f"custom_vjp {self.cf.__name__}: bwd must return a tuple with one "
                            f"cotangent per positional argument, got {type(ct).__name__}")
        try:
            leaves = tree_flatten_up_to(self.in_td, tuple(ct))
        except ValueError as e:
            raise ValueError(f"custom_vjp {self.cf.__name__}: bwd's output does not match the "
                             f"arguments' structure: {e}") from None
        return [_check_ct(c, p, f"custom_vjp {self.cf.__name__}")
                for c, p in zip(leaves, self.primals)]

    def jvp(self, ts):
        # the tangent map is the transpose of bwd: differentiate bwd in its cotangent
        tape = Tape("custom_vjp transpose", _var.get())
        ins = [tape.new_input(_zeros_like(o)) if _diff(o) else _zeros_like(o) for o in self.outs]
        pos = [g._idx if g.__class__ is TapeTracer else None for g in ins]   # before bwd runs
        try:
            ct = call_in(tape, self.cf.bwd, self.res, tree_unflatten(self.out_td, ins))
        finally:
            tape.done = True
        leaves = tree_flatten_up_to(self.in_td, tuple(ct))
        seeds = [(c._idx, t) for c, t in zip(leaves, ts)
                 if t is not None and c.__class__ is TapeTracer and c._interp is tape]
        acc = tape.backward(seeds)
        return [acc[p] if p is not None else None for p in pos]


class _JVPEntry(_Entry):
    __slots__ = ()

    def _rule(self, ts):
        ts = [t if t is not None else _zeros_like(p) for t, p in zip(ts, self.primals)]
        out = self.cf.jvp_rule(tree_unflatten(self.in_td, self.primals),
                               tree_unflatten(self.in_td, ts))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"custom_jvp {self.cf.__name__}: the rule must return "
                            f"(primal_out, tangent_out)")
        return tree_flatten_up_to(self.out_td, out[1])

    def jvp(self, ts):
        return [_check_ct(t, o, f"custom_jvp {self.cf.__name__}")
                for t, o in zip(self._rule(ts), self.outs)]

    def vjp(self, gs):
        # transpose the rule's tangent map: differentiate it in the tangents
        tape = Tape("custom_jvp transpose", _var.get())
        ins = [tape.new_input(_zeros_like(p)) if _diff(p) else None for p in self.primals]
        pos = [t._idx if t is not None else None for t in ins]   # before the rule runs
        try:
            touts = call_in(tape, self._rule, ins)
        finally:
            tape.done = True
        seeds = [(t._idx, g) for t, g in zip(touts, gs)
                 if g is not None and t.__class__ is TapeTracer and t._interp is tape]
        acc = tape.backward(seeds)
        return [acc[p] if p is not None else None for p in pos]


class _Custom:
    # the function and its rules live in slots: functools.update_wrapper copies __dict__ (see
    # nx_rune.compiler.api.JitFunction), and a wrapper of this object must not carry them
    __slots__ = ("fun", "__dict__", "__weakref__")

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun

    def _nondiff(self, args):
        """``(static, positions)``: the nondiff_argnums arguments by position, and the positions
        of the others; IndexError-like ValueError for a position past the arguments."""
        nd = self.nondiff_argnums
        for i in nd:
            if not -len(args) <= i < len(args):
                raise ValueError(f"{type(self).__name__} {self.__name__}: nondiff_argnums "
                                 f"position {i} is past the {len(args)} positional arguments")
        nd = sorted({i % len(args) for i in nd})
        return [args[i] for i in nd], [i for i in range(len(args)) if i not in nd], nd

    @staticmethod
    def _merger(args, nd, diff_pos):
        def merge(dargs):
            full = list(args)
            for i, v in zip(diff_pos, dargs):
                full[i] = v
            return full
        return merge

    def _dispatch(self, args, kwargs):
        leaves, in_td = tree_flatten(args)
        interp = _owner(leaves)
        if interp is None:
            return self.fun(*args, **kwargs)
        custom_call = getattr(interp, "custom_call", None)
        if custom_call is not None:
            return custom_call(self, args, kwargs)
        cls = TapeTracer if isinstance(interp, Tape) else JVPTracer
        primals, handles = _split(interp, leaves, cls)
        if isinstance(interp, Tape):
            entry, outs = self._forward(interp, primals, in_td, kwargs)
            idxs = [h._idx if h is not None else 0 for h in handles]
            vals = interp.record_multi(entry, idxs, outs)
            return tree_unflatten(entry.out_td, vals)
        if isinstance(interp, JVPInterpreter):
            ts = [h.tangent if h is not None else None for h in handles]
            entry, outs, touts = self._forward_jvp(interp, primals, in_td, kwargs, ts)
            vals = [JVPTracer(interp, o, t) if t is not None and _diff(o) else o
                    for o, t in zip(outs, touts)]
            return tree_unflatten(entry.out_td, vals)
        batch = getattr(interp, "process_custom", None)   # vmap (autodiff/batching.py)
        if batch is not None:
            return batch(self, args, kwargs)
        raise TypeError(f"{type(self).__name__}: unsupported transformation {interp!r}")

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


class custom_vjp(_Custom):
    """A function with a user-defined VJP: ``f.defvjp(fwd, bwd)``; ``fwd(*args) -> (out,
    residuals)``, ``bwd(residuals, cotangent_out) -> tuple`` (one cotangent per positional
    argument; None for a zero)."""
    __slots__ = ("fwd", "bwd", "nondiff_argnums")

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun)
        self.fwd = self.bwd = None
        self.nondiff_argnums = tuple(nondiff_argnums)

    def defvjp(self, fwd, bwd):
        """``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals, g)`` -> one
        cotangent per differentiable positional argument (the nondiff_argnums arguments,
        which are not differentiated, come first, as in JAX)."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"custom_vjp {self.__name__}: no VJP defined; call "
                                 f"{self.__name__}.defvjp(fwd, bwd)")
        if self.nondiff_argnums:
            return self._call_nondiff(args, kwargs)
        return self._dispatch(args, kwargs)

    def _call_nondiff(self, args, kwargs):
        # the nondiff arguments (functions, Python values) are closed over by a custom_vjp of
        # the other arguments: only those are differentiated, and bwd receives them first
        static, diff_pos, nd = self._nondiff(args)
        merge = self._merger(args, nd, diff_pos)
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        inner = custom_vjp(lambda *d, **kw: fun(*merge(d), **kw))
        inner.__name__ = self.__name__
        inner.defvjp(lambda *d, **kw: fwd(*merge(d), **kw),
                     lambda res, g: bwd(*static, res, g))
        return inner(*[args[i] for i in diff_pos], **kwargs)

    def _fwd(self, interp, primals, in_td, kwargs):
        pair = call_in(interp.parent, self.fwd, *tree_unflatten(in_td, primals), **kwargs)
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"custom_vjp {self.__name__}: fwd must return (output, residuals)")
        out, res = pair
        outs, out_td = tree_flatten(out)
        return _VJPEntry(self, primals, in_td, outs, out_td, kwargs, res), outs

    def _forward(self, interp, primals, in_td, kwargs):
        return self._fwd(interp, primals, in_td, kwargs)

    def _forward_jvp(self, interp, primals, in_td, kwargs, ts):
        entry, outs = self._fwd(interp, primals, in_td, kwargs)
        touts = call_in(interp.parent, entry.jvp, ts)
        return entry, outs, touts


class custom_jvp(_Custom):
    """A function with a user-defined JVP: ``@f.defjvp`` on ``rule(primals, tangents) ->
    (primal_out, tangent_out)`` (primals and tangents: tuples of the positional arguments)."""
    __slots__ = ("jvp_rule", "nondiff_argnums")

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun)
        self.jvp_rule = None
        self.nondiff_argnums = tuple(nondiff_argnums)

    def defjvp(self, rule):
        """``rule(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`` (primals and
        tangents: tuples of the differentiable positional arguments); returns ``rule``."""
        self.jvp_rule = rule
        return rule

    def defjvps(self, *jvps):
        """One function per positional argument, ``jvp_i(tangent_i, primal_out, *primals) ->
        its contribution to the output tangent`` (None: the output does not depend on that
        argument); the JVP is their sum, as ``jax.custom_jvp.defjvps``."""
        if self.nondiff_argnums:
            raise TypeError(f"custom_jvp {self.__name__}: defjvps does not take "
                            f"nondiff_argnums (use defjvp)")

        def rule(primals, tangents):
            if len(jvps) != len(primals):
                raise TypeError(f"custom_jvp {self.__name__}: defjvps got {len(jvps)} "
                                f"functions for {len(primals)} positional arguments")
            out = self(*primals)
            total = None
            for fn, t in zip(jvps, tangents):
                if fn is None:
                    continue
                term = fn(t, out, *primals)
                total = term if total is None else tree_map(lambda a, b: a + b, total, term)
            if total is None:
                total = tree_map(_zeros_like, out)
            return out, total
        self.jvp_rule = rule

    def __call__(self, *args, **kwargs):
        if self.jvp_rule is None:
            raise AttributeError(f"custom_jvp {self.__name__}: no JVP defined; decorate a rule "
                                 f"with @{self.__name__}.defjvp")
        if self.nondiff_argnums:
            static, diff_pos, nd = self._nondiff(args)
            merge = self._merger(args, nd, diff_pos)
            fun, rule = self.fun, self.jvp_rule
            inner = custom_jvp(lambda *d, **kw: fun(*merge(d), **kw))
            inner.__name__ = self.__name__
            inner.defjvp(lambda primals, tangents: rule(*static, primals, tangents))
            return inner(*[args[i] for i in diff_pos], **kwargs)
        return self._dispatch(args, kwargs)

    def _forward(self, interp, primals, in_td, kwargs):
        # the primal is this function again one level down, so outer levels use the rule too
        out = call_in(interp.parent, self, *tree_unflatten(in_td, primals), **kwargs)
        outs, out_td = tree_flatten(out)
        return _JVPEntry(self, primals, in_td, outs, out_td, kwargs), outs

    def _forward_jvp(self, interp, primals, in_td, kwargs, ts):
        ts = [t if t is not None else _zeros_like(p) for t, p in zip(ts, primals)]
        args, targs = tree_unflatten(in_td, primals), tree_unflatten(in_td, ts)
        out = call_in(interp.parent, self.jvp_rule, args, targs)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"custom_jvp {self.__name__}: the rule must return "
                            f"(primal_out, tangent_out)")
        outs, out_td = tree_flatten(out[0])
        touts = tree_flatten_up_to(out_td, out[1])
        touts = [_check_ct(t, o, f"custom_jvp {self.__name__}") for t, o in zip(touts, outs)]
        return _JVPEntry(self, primals, in_td, outs, out_td, kwargs), outs, touts
