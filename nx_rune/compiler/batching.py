"""``vmap`` of the compiler's operations: a jitted call and the ``lax`` control equations.

A jitted function called on values batched by ``vmap`` (``vmap(jit(f))``) and a control
equation reached by batched values (``vmap`` of ``lax.scan``, ``cond``, ``while_loop``,
``fori_loop``; under ``jit`` or evaluated eagerly) are handled by the rules registered here in
``api.CALL_RULES`` and ``control.CONTROL_RULES`` for :class:`BatchInterpreter`.  Each rule
works as ``vmap``'s primitive rules do: the batched operands (their batch axis moved first) and
the shared ones go one level down (``interp.parent``) to one operation on the whole batch whose
function is the *batched program*: the original program evaluated under a new ``vmap`` level
and traced once (per program, batched-operand mask and batch size; cached on the program), so
it is compiled and optimized like any program.  The results come back as batch tracers.

* jit call: the batched program is itself a jitted function (``JitFunction``), so the call one
  level down runs compiled, or is differentiated / recorded by the level below.
* ``cond``: with a shared predicate, one ``cond`` of the batched branches; with a batched
  predicate (a choice per example), both branches run and a ``where`` picks each example's
  result (JAX's semantics: both branches' operations are executed); each branch's operands
  have their derivatives stopped for the examples that do not take it, so a branch not taken
  contributes an exact 0 to every derivative, never the NaN of 0 * inf.
* ``scan``: one ``scan`` of the batched body; every carry is batched (a shared carry is
  broadcast, so the carry's type does not change between steps), ``xs`` keep the scan axis
  first and the batch axis second (the body's slices are batched along axis 0), and the ``ys``
  come back batched along axis 1.
* ``while_loop`` (and ``fori_loop`` with traced bounds): one ``while`` that runs as long as
  any example's predicate holds; an example whose predicate is false keeps its carry (a
  ``where`` in the batched body), as in JAX.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.autodiff.batch_rules import batch_at, moveaxis
from nx_rune.autodiff.batching import BatchInterpreter, BatchTracer, batched_call
from nx_rune.autodiff.core import Tracer, _leaked
from nx_rune.compiler import api, control
from nx_rune.compiler.dispatch import under
from nx_rune.compiler.interpret import eval_program
from nx_rune.compiler.ir import AbstractValue
from nx_rune.frontend import any as _any
from nx_rune.frontend import reshape, where
from nx_rune.tree_util import tree_flatten

__all__ = ["call_rule", "cond_rule", "scan_rule", "while_rule"]

_var = P._interpreter


def _split(interp, values, force=()):
    """``values`` as values of ``interp``'s parent level with their batch axis first, and the
    mask of the batched ones; positions in ``force`` are batched (a shared value broadcast)."""
    vals, mask = [], []
    token = _var.set(interp.parent)
    try:
        for i, v in enumerate(values):
            if isinstance(v, Tracer) and v._interp is interp:
                vals.append(moveaxis(v.primal, v.bdim, 0))
                mask.append(True)
                continue
            if isinstance(v, Tracer) and v._interp.done:
                _leaked(v)
            if i in force:
                vals.append(batch_at(v, None, interp.axis_size, 0))
                mask.append(True)
            else:
                vals.append(v)
                mask.append(False)
    finally:
        _var.reset(token)
    return vals, mask


def _batched_avals(avals, mask, size):
    return [AbstractValue((size,) + tuple(a.shape), a.dtype, a.weak_type) if m else a
            for a, m in zip(avals, mask)]


def _per_example(prog, mask, size, axis_name=None):
    """A function of the operands of ``prog`` (batched along axis 0 where ``mask`` says so)
    returning ``prog``'s outputs for every example, each batched along axis 0; the batch axis
    keeps the vmap's ``axis_name`` (the program's collectives refer to it)."""
    return _per_example_of(lambda *ys: eval_program(prog, list(ys)), mask, size, axis_name)


def _per_example_of(fn, mask, size, axis_name=None):
    """_per_example of a function of flat operands returning a flat list of outputs."""
    dims = [0 if m else None for m in mask]

    def run(*xs):
        leaves, td = tree_flatten((tuple(xs), {}))
        outs = batched_call(fn, leaves, td, dims, size, "vmap (compiled)", axis_name)
        return list(outs)
    return run


def _traced_program(fn, avals, name):
    t = control._trace_flat(fn, avals, name)
    if t.captured:      # the functions built here close over programs only
        raise AssertionError(f"{name}: a batched program captured values")
    return t.program


def batched_program(prog, mask, size, axis_name=None):
    """``prog`` mapped over a batch of ``size`` (operands batched along axis 0 where ``mask``
    says so; every output batched along axis 0), traced once and cached on ``prog``."""
    key = ("vmap", tuple(mask), size, axis_name)
    out = prog.cache.get(key)
    if out is None:
        out = prog.cache[key] = _traced_program(
            _per_example(prog, mask, size, axis_name),
            _batched_avals(prog.in_avals, mask, size),
            "vmap")
    return out


def _wrap(interp, outs, axis=0):
    return [BatchTracer(interp, o, axis) for o in outs]


# -- a jitted call -------------------------------------------------------------------------------

def call_rule(interp, traced, values):
    """``api.CALL_RULES[BatchInterpreter]``: the jitted program called on batched values."""
    vals, mask = _split(interp, values)
    size = interp.axis_size
    key = ("vmap", tuple(mask), size, interp.axis_name)
    fn = traced.cache.get(key)
    if fn is None:
        retrace = traced.cache.get("retrace")
        # a function that chose by a vmap batch's size it could not see (tracing.py's
        # mark_batch_size_choice) is traced again under this vmap; any other program is batched
        per_example = (_per_example_of(retrace, mask, size, interp.axis_name)
                       if retrace is not None
                       else _per_example(traced.program, mask, size, interp.axis_name))
        fn = traced.cache[key] = api.JitFunction(per_example,
                                                 name=f"vmap of {api._fname(traced)}")
    return _wrap(interp, under(interp.parent, fn, *vals))


# -- lax.cond --------------------------------------------------------------------------------------

def cond_rule(op, interp, params, values):
    """``cond[branches] pred *operands`` on batched values."""
    if isinstance(values[0], Tracer) and values[0]._interp is interp:
        # one predicate per example: both branches, then each example's result
        pred = values[0]

        def both():
            ops = list(values[1:])
            f = eval_program(params["branches"][0], control._branch_operands(pred, ops, False))
            t = eval_program(params["branches"][1], control._branch_operands(pred, ops, True))
            return [where(pred, a, b) for a, b in zip(t, f)]
        return under(interp, both)
    vals, mask = _split(interp, values)
    size = interp.axis_size
    branches = tuple(batched_program(b, mask[1:], size, interp.axis_name)
                     for b in params["branches"])
    outs = under(interp.parent, control.control_bind, op, dict(params, branches=branches),
                 vals)
    return _wrap(interp, outs)


# -- lax.scan --------------------------------------------------------------------------------------

def scan_rule(op, interp, params, values):
    """``scan[body] *consts *init *xs`` on batched values (see the module doc)."""
    nk, nc = params["n_consts"], params["n_carry"]
    vals, mask = _split(interp, values, force=range(nk, nk + nc))
    size = interp.axis_size
    token = _var.set(interp.parent)
    try:    # xs: the scan axis first, then the batch axis
        vals = vals[:nk + nc] + [moveaxis(v, 0, 1) if m else v
                                 for v, m in zip(vals[nk + nc:], mask[nk + nc:])]
    finally:
        _var.reset(token)
    body = batched_program(params["body"], mask, size, interp.axis_name)
    outs = under(interp.parent, control.control_bind, op, dict(params, body=body), vals)
    return _wrap(interp, outs[:nc]) + _wrap(interp, outs[nc:], 1)


# -- lax.while_loop --------------------------------------------------------------------------------

def _while_programs(params, mask, size, axis_name=None):
    cnd, body = params["cond"], params["body"]
    ncc, nbc = params["n_cond_consts"], params["n_body_consts"]
    cc_mask, bc_mask, carry_mask = mask[:ncc], mask[ncc:ncc + nbc], mask[ncc + nbc:]
    key = ("vmap-while", tuple(mask), size, axis_name)
    cached = body.cache.get(key)
    if cached is not None:
        return cached
    pred = _per_example(cnd, cc_mask + carry_mask, size, axis_name)
    step = _per_example(body, bc_mask + carry_mask, size, axis_name)

    def new_cond(*xs):
        return [_any(pred(*xs)[0])]

    def new_body(*xs):
        cc, bc, carry = xs[:ncc], xs[ncc:ncc + nbc], list(xs[ncc + nbc:])
        p = pred(*cc, *carry)[0]
        new = step(*bc, *carry)
        return [where(reshape(p, (size,) + (1,) * (o.ndim - 1)), n, o)
                for n, o in zip(new, carry)]

    cav = _batched_avals(cnd.in_avals, cc_mask + carry_mask, size)
    bav = _batched_avals(body.in_avals, bc_mask + carry_mask, size)
    out = (_traced_program(new_cond, cav, "lax.while_loop (vmap)"),
           _traced_program(new_body, cav[:ncc] + bav, "lax.while_loop (vmap)"))
    body.cache[key] = out
    return out


def while_rule(op, interp, params, values):
    """``while[cond body] *cond_consts *body_consts *init`` on batched values: runs while any
    example's predicate holds; the others keep their carry."""
    ncc, nbc = params["n_cond_consts"], params["n_body_consts"]
    n = len(values)
    vals, mask = _split(interp, values, force=range(ncc + nbc, n))
    newc, newb = _while_programs(params, mask, interp.axis_size, interp.axis_name)
    p2 = dict(params, cond=newc, body=newb, n_body_consts=ncc + nbc)
    ops = vals[:ncc] + vals[:ncc] + vals[ncc:]
    outs = under(interp.parent, control.control_bind, op, p2, ops)
    return _wrap(interp, outs)


api.CALL_RULES[BatchInterpreter] = call_rule
control.CONTROL_RULES[("cond", BatchInterpreter)] = cond_rule
control.CONTROL_RULES[("scan", BatchInterpreter)] = scan_rule
control.CONTROL_RULES[("while", BatchInterpreter)] = while_rule
