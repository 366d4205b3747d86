"""Collective operations over named vmap axes (``lax.psum``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``ppermute``, ``axis_index``), as JAX's ``vmap(..., axis_name=...)`` and
``pmap`` (one device: a pmap is a vmap) define them.

A collective reads every example of a named axis at once, so no single interpreter level can
compute it: the level that binds the name does.  A :class:`CollectiveOp` call (one operand, or
none for ``axis_index``) is handled by the innermost interpreter that has something to do with
it (:func:`collective_bind`):

* a vmap level whose ``axis_name`` is one the call reduces over: the operation on the whole
  batch, with that level's parent active (a sum / max / min / gather / permutation along the
  batch axis, written with front-end ops, so that enclosing transformations see ordinary
  primitives); an operand that level does not batch is the same for every example (psum of it
  is ``size * x``);
* another vmap level batching the operand: the operation one level down on the batched value
  (the batch axis moved first, axis parameters shifted past it), then re-wrapped;
* a differentiating level (``grad``, ``jvp``, ...) owning the operand: the collective as a
  ``custom_vjp`` whose backward pass is the transposed collective (psum's is psum,
  all_gather's is psum_scatter and back, ppermute's the inverse permutation), as JAX's rules;
  ``pmax``/``pmin`` are not differentiable (JAX's NotImplementedError);
* a trace (``jit`` inside the vmap): one equation of the program, whose batching later finds
  the vmap level by its name (``compiler.batching`` passes the name on).

A name bound by no enclosing vmap raises JAX's ``NameError``.  ``axis_frames()`` (the names of
the active vmaps, kept apart from the interpreter chain: a trace starts a chain of its own)
gives the sizes; jit's cache key holds the bound names and sizes.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.autodiff.batching import BatchInterpreter, BatchTracer, axis_frames
from nx_rune.autodiff.core import NoGradInterpreter, Tracer, _leaked, concrete
from nx_rune.compiler.dispatch import under
from nx_rune.compiler.ir import AbstractValue, InternalOp
from nx_rune.compiler.tracing import TraceInterpreter

__all__ = ["CollectiveOp", "collective_bind", "axis_size_of", "unbound_axis_error",
           "binding_level",
           "psum_op", "pmax_op", "pmin_op", "all_gather_op", "psum_scatter_op", "ppermute_op",
           "axis_index_op"]

_var = P._interpreter


def unbound_axis_error(name, what):
    """JAX's error for a collective naming an axis no enclosing vmap/pmap binds."""
    bound = [f[0] for f in axis_frames()]
    where = (f"the axis names bound here are {bound}" if bound else
             "no vmap/pmap with an axis_name encloses the call")
    return NameError(f"unbound axis name: {name!r} ({what}; {where}).  Call it inside "
                     f"nx.vmap(f, axis_name={name!r}) or nx.pmap(f, axis_name={name!r})")


def axis_size_of(name, what):
    """The size of the innermost vmap axis named ``name`` (NameError when none is)."""
    for n, size, _ in reversed(axis_frames()):
        if n == name:
            return size
    raise unbound_axis_error(name, what)


class CollectiveOp(InternalOp):
    """A collective over named axes: an equation ``op[axes, ...] x`` (see the module doc).
    ``params["axes"]``: the names reduced over; ``params["sizes"]``: their sizes when the
    call was made (the output shape of a gather or scatter depends on them)."""
    __slots__ = ("n_in",)
    pure = True

    def __init__(self, name, n_in=1):
        InternalOp.__init__(self, name)
        self.n_in = n_in

    def bind_eqn(self, params, ins):
        return collective_bind(self, params, ins)

    def out_aval(self, params, a):
        """The output's abstract value (one example's) for operand ``a``."""
        name = self.name
        if name == "axis_index":
            return AbstractValue((), np.dtype(np.int32), False)
        shape = tuple(a.shape)
        if name == "all_gather":
            n, ax = params["sizes"][0], params["axis"]
            if params["tiled"]:
                shape = shape[:ax] + (shape[ax] * n,) + shape[ax + 1:]
            else:
                shape = shape[:ax] + (n,) + shape[ax:]
        elif name == "psum_scatter":
            n, sd = params["sizes"][0], params["scatter_dimension"]
            if params["tiled"]:
                shape = shape[:sd] + (shape[sd] // n,) + shape[sd + 1:]
            else:
                shape = shape[:sd] + shape[sd + 1:]
        return AbstractValue(shape, a.dtype, a.weak_type)

    def emit(self, cg, e, ins, plan):
        # reached only when a compiled program runs outside the vmap that bound the name (a
        # program traced inside it, called again outside): JAX's error, at run time
        names = e.params["axes"]
        what = f"lax.{self.name}"

        def run(*_):
            for n in names:
                axis_size_of(n, what)
            raise NameError(f"{what}: the jitted function was traced inside a vmap over the "
                            f"axis {names[0]!r} and runs without one; call it inside that "
                            f"vmap, with an argument it maps")
        outs = [cg.bind_out(v) for v in e.outs]
        f = cg.const(run, self.name)
        cg.emit(f"{outs[0]} = {f}({', '.join(ins)})")


def _program_axes(prog):
    """The axis names the collectives of ``prog`` (sub-programs included) reduce over."""
    from nx_rune.compiler.ir import Program
    got = prog.cache.get("axis_names")
    if got is None:
        names = set()
        for e in prog.eqns:
            if isinstance(e.prim, CollectiveOp):
                names.update(e.params["axes"])
            for v in e.params.values():
                subs = v if isinstance(v, (tuple, list)) else (v,)
                for sub in subs:
                    if isinstance(sub, Program):
                        names |= _program_axes(sub)
        got = prog.cache["axis_names"] = frozenset(names)
    return got


def binding_level(prog):
    """The innermost active vmap level binding an axis that a collective of ``prog`` reduces
    over, or None.  A jitted program traced inside a named vmap and called there on values
    that vmap does not batch (``vmap(lambda x: jit(g)())`` with ``g`` calling
    ``axis_index``) runs batched by that level, which its collectives need."""
    frames = axis_frames()
    if not frames:
        return None
    used = _program_axes(prog)
    if not used:
        return None
    for name, _, interp in reversed(frames):
        if name in used and not interp.done:
            return interp
    return None


psum_op = CollectiveOp("psum")
pmax_op = CollectiveOp("pmax")
pmin_op = CollectiveOp("pmin")
all_gather_op = CollectiveOp("all_gather")
psum_scatter_op = CollectiveOp("psum_scatter")
ppermute_op = CollectiveOp("ppermute")
axis_index_op = CollectiveOp("axis_index", 0)


# -- dispatch ------------------------------------------------------------------------------------

def collective_bind(op, params, values):
    """Apply collective ``op`` to ``values`` (one operand, or none) under the active
    interpreters (see the module doc); returns a one-element list."""
    values = list(values)
    axes = params["axes"]
    interp = _var.get()
    while interp is not None:
        if isinstance(interp, NoGradInterpreter):
            # the levels below the no_grad block, on the values without their derivatives;
            # the result is a constant to every differentiating level
            from nx_rune.autodiff.api import stop_gradient
            token = _var.set(interp.below)
            try:
                out = collective_bind(op, params, [concrete(v) for v in values])
            finally:
                _var.reset(token)
            return [stop_gradient(o) for o in out]
        if isinstance(interp, TraceInterpreter):
            if not values:
                return interp.add_eqn(op, params, [], [op.out_aval(params, None)])
            v = values[0]
            a = AbstractValue(v.shape, v.dtype, getattr(v, "weak_type", False))
            return interp.add_eqn(op, params, values, [op.out_aval(params, a)])
        if isinstance(interp, BatchInterpreter):
            if interp.axis_name is not None and interp.axis_name in axes:
                return [_at_named(op, interp, params, values)]
            if values and _ours(values[0], interp):
                return [_at_batch(op, interp, params, values[0])]
        elif values and _ours(values[0], interp):
            return [_differentiable(op, params)(values[0])]
        interp = interp.parent
    if values and isinstance(values[0], Tracer) and values[0]._interp.done:
        _leaked(values[0])
    raise unbound_axis_error(axes[0], f"lax.{op.name}")


def _ours(v, interp):
    return isinstance(v, Tracer) and v._interp is interp


def _at_batch(op, interp, params, v):
    """``op`` on a value batched by a vmap level that is not one of the op's axes: one level
    down on the whole batch (batch axis first), then batched again along axis 0."""
    from nx_rune.autodiff.batch_rules import moveaxis
    p = dict(params)
    if "axis" in p:
        p["axis"] += 1
    if "scatter_dimension" in p:
        p["scatter_dimension"] += 1

    def down():
        x = moveaxis(v.primal, v.bdim, 0)
        return collective_bind(op, p, [x])[0]
    return BatchTracer(interp, under(interp.parent, down), 0)


def _at_named(op, interp, params, values):
    """``op`` at the vmap level bound to one of its axes: the whole batch at once."""
    from nx_rune import frontend as F
    from nx_rune.autodiff.batch_rules import batch_at, moveaxis
    name = op.name
    n = interp.axis_size
    keep = [k for k, a in enumerate(params["axes"]) if a != interp.axis_name]
    rest = tuple(params["axes"][k] for k in keep)
    rest_sizes = tuple(params["sizes"][k] for k in keep)

    def stacked(v):
        """Every example of ``v`` (a value of this level), stacked along axis 0."""
        if _ours(v, interp):
            return moveaxis(v.primal, v.bdim, 0)
        return batch_at(v, None, n, 0)

    def down():
        if name == "axis_index":
            return BatchTracer(interp, F.arange(n, dtype=np.int32), 0)
        v = values[0]
        if name in ("psum", "pmax", "pmin"):
            if not _ours(v, interp):
                # the same value in every example
                out = F.multiply(v, n) if name == "psum" else v
            else:
                red = {"psum": F.sum, "pmax": F.max, "pmin": F.min}[name]
                out = red(v.primal, axis=v.bdim)
            if out.dtype != v.dtype and v.dtype != np.bool_:
                out = F.astype(out, v.dtype)    # JAX's psum keeps the operand's dtype
            if rest:
                out = collective_bind(op, dict(params, axes=rest, sizes=rest_sizes),
                                      [out])[0]
            return out
        s = stacked(v)                      # (n, *example shape)
        if name == "all_gather":
            ax = params["axis"]
            out = moveaxis(s, 0, ax)
            if params["tiled"]:
                sh = out.shape
                out = F.reshape(out, sh[:ax] + (sh[ax] * sh[ax + 1],) + sh[ax + 2:])
            return out                      # the same for every example
        if name == "psum_scatter":
            sd = params["scatter_dimension"]
            total = F.sum(s, axis=0)
            if params["tiled"]:
                sh = total.shape
                total = F.reshape(total, sh[:sd] + (n, sh[sd] // n) + sh[sd + 1:])
            return BatchTracer(interp, moveaxis(total, sd, 0), 0)
        if name == "ppermute":
            src = np.zeros(n, np.int64)
            hit = np.zeros(n, bool)
            for a, b in params["perm"]:
                src[b], hit[b] = a, True
            got = F.take(s, F.asarray(src), axis=0)
            if not hit.all():
                mask = F.reshape(F.asarray(hit), (n,) + (1,) * (s.ndim - 1))
                got = F.where(mask, got, F.zeros_like(got))
            return BatchTracer(interp, got, 0)
        raise AssertionError(name)
    return under(interp.parent, down)


# -- differentiation -----------------------------------------------------------------------------

def _transpose(op, params, g):
    """The cotangent of a linear collective's operand from its output's (JAX's rules)."""
    def _bind1(o, p, x):
        return collective_bind(o, p, [x])[0]
    name = op.name
    if name == "psum":
        return _bind1(psum_op, params, g)
    if name == "all_gather":
        return _bind1(psum_scatter_op, {"axes": params["axes"], "sizes": params["sizes"],
                                        "scatter_dimension": params["axis"],
                                        "tiled": params["tiled"]}, g)
    if name == "psum_scatter":
        return _bind1(all_gather_op, {"axes": params["axes"], "sizes": params["sizes"],
                                      "axis": params["scatter_dimension"],
                                      "tiled": params["tiled"]}, g)
    if name == "ppermute":
        inv = tuple((b, a) for a, b in params["perm"])
        return _bind1(ppermute_op, dict(params, perm=inv), g)
    raise NotImplementedError(f"Differentiation rule for '{name}' not implemented (as in "
                              f"JAX: lax.{name} has no derivative)")


def _differentiable(op, params):
    """The collective as a function of one operand with its transposed collective as VJP."""
    from nx_rune.autodiff.custom import custom_vjp

    def f(x):
        return collective_bind(op, params, [x])[0]

    def fwd(x):
        return f(x), None

    def bwd(_, g):
        return (_transpose(op, params, g),)

    cf = custom_vjp(f)
    cf.__name__ = f"lax.{op.name}"
    cf.defvjp(fwd, bwd)
    return cf
