"""``while_loop`` (the ``while`` operation) and ``fori_loop`` (a scan when its bounds are static,
a while loop otherwise).
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.autodiff.api import _arr  # a pytree leaf as an array, or TypeError naming it
from nx_rune.autodiff.core import JVPTracer, Tracer, is_inexact
from nx_rune.compiler.control._core import (
    ControlOp,
    _aval,
    _batched,
    _cached,
    _carry_avals,
    _check_same,
    _check_unrun_body,
    _diff_mask,
    _fill,
    _jvp_part,
    _new_memory,
    _ours,
    _pretrace_carry,
    _promote_weak_init,
    _reaches,
    _reorder,
    _trace,
    _trace_flat,
    _weak_value,
    _with_inputs,
    control_bind,
    trace_active,
)
from nx_rune.compiler.control._scan import _check_carry, _scan
from nx_rune.compiler.dispatch import under as _under
from nx_rune.compiler.ir import AbstractValue
from nx_rune.compiler.pipeline import sub_executable
from nx_rune.compiler.tracing import JitTracer
from nx_rune.frontend import astype
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tree_util import tree_flatten, tree_unflatten

# -- while_loop ------------------------------------------------------------------------------------

class _While(ControlOp):
    """``while[cond=... body=... n_cond_consts=... n_body_consts=...] *cconsts *bconsts *init``."""
    __slots__ = ()

    def out_avals(self, params, avals):
        return params["body"].out_avals

    def runner(self, params):
        cf = sub_executable(params["cond"])
        bf = sub_executable(params["body"])
        ncc, nbc = params["n_cond_consts"], params["n_body_consts"]

        def run(ops):
            cc, bc, carry = ops[:ncc], ops[ncc:ncc + nbc], list(ops[ncc + nbc:])
            while bool(cf(*cc, *carry)[0]):
                carry = list(bf(*bc, *carry))
            return carry
        return run

    def _jvp_progs(self, params, mask):
        body, cnd = params["body"], params["cond"]
        nbc = params["n_body_consts"]

        def build_body():
            avals = body.in_avals
            idx = [k for k, m in enumerate(mask) if m]

            def f(*xs):
                it = iter(xs)
                consts = [next(it) for _ in range(nbc)]
                tk = [next(it) if m else None for m in mask[:nbc]]
                carry = [next(it) for _ in range(len(avals) - nbc)]
                tc = [next(it) if m else None for m in mask[nbc:]]
                prim, tans = consts + carry, tk + tc
                # the operands without a tangent are constants (symbolic zeros, as eagerly)
                outs, touts = _jvp_part(body, prim, idx, [tans[k] for k in idx])
                return list(outs) + [t for t, m in zip(touts, mask[nbc:]) if m]
            ins = (avals[:nbc] + [a for a, m in zip(avals[:nbc], mask[:nbc]) if m]
                   + avals[nbc:] + [a for a, m in zip(avals[nbc:], mask[nbc:]) if m])
            return _trace_flat(f, ins, "lax.while_loop (jvp)").program

        def build_cond():
            n_tc = sum(mask[nbc:])
            return _with_inputs(cnd, [], [a for a, m in zip(body.in_avals[nbc:], mask[nbc:])
                                          if m][:n_tc])
        return (_cached(body, ("jvp", tuple(mask)), build_body),
                _cached(cnd, ("jvp", tuple(mask)), build_cond))

    def _jvp_call(self, params, primals, tangents):
        ncc, nbc = params["n_cond_consts"], params["n_body_consts"]
        body = params["body"]
        # only the operands with a tangent are differentiated; a carry has one if its initial
        # value has one or if the body gives it one (a fixpoint over the carries, as in JAX)
        mask = [m and t is not None
                for m, t in zip(_diff_mask(primals[ncc:]), tangents[ncc:])]
        while True:
            r = _reaches(body, mask)
            cm = [m or o for m, o in zip(mask[nbc:], r)]
            if cm == mask[nbc:]:
                break
            mask[nbc:] = cm
        bj, cnd = self._jvp_progs(params, mask)
        tl = _fill(tangents, primals)[ncc:]
        bconsts, carry = primals[ncc:ncc + nbc], primals[ncc + nbc:]
        ops = (list(primals[:ncc]) + list(bconsts)
               + [t for t, m in zip(tl[:nbc], mask[:nbc]) if m]
               + list(carry) + [t for t, m in zip(tl[nbc:], mask[nbc:]) if m])
        p2 = dict(params, body=bj, cond=cnd, n_body_consts=nbc + sum(mask[:nbc]))
        outs = control_bind(self, p2, ops)
        n = len(carry)
        tc = iter(outs[n:])
        return outs[:n], [next(tc) if m else None for m in mask[nbc:]]

    def jvp_rule(self, interp, params, values):
        primals = [v.primal if _ours(v, interp) else v for v in values]
        tans = [v.tangent if _ours(v, interp) else None for v in values]
        outs, touts = _under(interp.parent, self._jvp_call, params, primals, tans)
        return [JVPTracer(interp, o, t) if t is not None else o for o, t in zip(outs, touts)]

    def tape_rule(self, tape, params, values):
        ncc = params["n_cond_consts"]
        if any(_ours(v, tape) and is_inexact(v.dtype) for v in values[ncc:]):
            raise TypeError(
                "lax.while_loop is not reverse-mode differentiable (as in JAX: its number of "
                "steps is only known at run time, so the steps cannot be stored); use "
                "lax.scan, or lax.fori_loop with static (Python int) bounds, or forward mode "
                "(nx.jvp, nx.jacfwd)")
        primals = [v.primal if _ours(v, tape) else v for v in values]
        return _under(tape.parent, control_bind, self, params, primals)

    def fallback(self, interp, params, values):
        raise NotImplementedError(
            f"lax.while_loop under the {interp.name} transformation needs a rule: register one "
            f"in nx_rune.compiler.control.CONTROL_RULES[('while', {type(interp).__name__})]")


while_op = _While("while")



def _cond_bool(x, where="while_loop"):
    x = _arr(x, f"lax.{where}: cond_fun's output")
    if x.shape != () or x.dtype.kind != "b":
        raise TypeError(f"lax.{where}: cond_fun must return a boolean scalar, got "
                        f"{x.dtype} of shape {x.shape}")
    return x


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = init_val; while cond_fun(val): val = body_fun(val)``; returns val.

    cond_fun returns a boolean scalar; body_fun returns a value of init_val's structure, shapes
    and dtypes.  Eager: a Python loop.  Under a trace: one ``while`` equation.  Under ``vmap``
    with a per-example predicate, the loop runs until every example's predicate is false, an
    example that is done keeping its value (as in JAX).  Differentiable in forward mode;
    reverse mode raises TypeError (as JAX).
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun must be callable")
    return _while_loop(cond_fun, body_fun, init_val, "while_loop")


def _while_loop(cond_fun, body_fun, init_val, where):
    """``while_loop``; ``where``: the lax function the user called (``"fori_loop"`` with traced
    bounds runs as a while loop), named in errors about the carry."""
    raw, tree = tree_flatten(init_val)
    leaves = [_arr(x, f"lax.{where}: init_val") for x in raw]
    weak = [_weak_value(x) for x in raw]
    eager = not trace_active(leaves)
    if any(weak):
        def trace_body():
            avals = _carry_avals(leaves, weak)
            return _trace(body_fun, avals, tree_flatten((tree_unflatten(tree, avals),))[1],
                          f"lax.{where}")
        tb = _pretrace_carry(trace_body) if eager else trace_body()
        if tb is not None:
            leaves, changed = _promote_weak_init(raw, leaves, weak, tb.program.out_avals)
            if changed:
                init_val = tree_unflatten(tree, leaves)
    avals = [_aval(x) for x in leaves]
    if eager:
        val = init_val
        while True:
            c = _cond_bool(cond_fun(val), where)
            if _batched(c):
                # vmap in eager mode, one predicate per example: from here on one while
                # equation (see compiler/batching.py: it runs until every example is done)
                leaves = [_arr(x, f"lax.{where}: init_val") for x in tree_flatten(val)[0]]
                return _while_traced(cond_fun, body_fun, tree, leaves, where)
            if not bool(c):
                if val is init_val and not any(weak):
                    _check_unrun_body(lambda: _trace(
                        body_fun, avals, tree_flatten((tree_unflatten(tree, avals),))[1],
                        f"lax.{where}"), tree, avals, where, "init_val")
                return _new_memory(val, init_val)
            val = body_fun(val)
            val = tree_unflatten(tree, _check_carry(val, tree, avals, where, "init_val"))
    return _while_traced(cond_fun, body_fun, tree, leaves, where)


def _while_traced(cond_fun, body_fun, tree, leaves, where="while_loop"):
    """``while_loop`` as one ``while`` equation (its functions traced)."""
    avals = [_aval(x) for x in leaves]
    tc = _trace(lambda v: _cond_bool(cond_fun(v), where), avals, tree_flatten((tree_unflatten(
        tree, avals),))[1], f"lax.{where}")
    if tc.program.out_avals[0].shape != () or tc.program.out_avals[0].dtype.kind != "b":
        raise TypeError(f"lax.{where}: cond_fun must return a boolean scalar")
    tb = _trace(body_fun, avals, tree_flatten((tree_unflatten(tree, avals),))[1],
                f"lax.{where}")
    _check_same(f"lax.{where}", tree, avals, tb.out_tree, tb.program.out_avals,
                "init_val", "body_fun's output")
    params = {"cond": _reorder(tc.program, tc.n_explicit, True),
              "body": _reorder(tb.program, tb.n_explicit, True),
              "n_cond_consts": len(tc.captured), "n_body_consts": len(tb.captured)}
    outs = control_bind(while_op, params, list(tc.captured) + list(tb.captured) + leaves)
    return tree_unflatten(tree, outs)


# -- fori_loop ------------------------------------------------------------------------------------

# The loop index of fori_loop is weakly typed, as JAX's: an integer scalar that promotes as a
# Python int would (``v + i`` keeps a float32 or int8 ``v``'s dtype, where NumPy's promotion of
# an int32 array would widen it and break the carry's dtype), and arithmetic on it with Python
# numbers stays weak (``v + i * 0.5``).  Eagerly it is a _WeakIndex; under a trace a weak
# traced value carrying its int64 form (as a jit argument that was a Python int).

_PY_NUMBERS = (int, float, complex)


def _weak_number(r):
    """Python number ``r`` (arithmetic on weak indices) as a weakly typed concrete scalar of
    its kind's default dtype, as under jit; None when it does not fit (the caller then computes
    the ordinary way)."""
    kind = type(r)
    dt = (dtypes.default_int() if kind is int else dtypes.default_float() if kind is float
          else dtypes.default_complex())
    if kind is int and not np.iinfo(dt).min <= r <= np.iinfo(dt).max:
        return None
    return _WeakIndex._of(np.array(r, dt))


def _weak_op(op, reflected=False):
    tensor_op = getattr(Tensor, f"__{'r' if reflected else ''}{op.__name__.strip('_')}__")

    def method(self, o):
        c = o.__class__
        if c in _PY_NUMBERS or c is _WeakIndex:
            a, b = self.item(), (o.item() if c is _WeakIndex else o)
            try:
                r = op(b, a) if reflected else op(a, b)
            except (ZeroDivisionError, OverflowError):
                r = None    # (the array operation gives NumPy's inf, nan or wrapped result)
            if r is not None and r.__class__ in _PY_NUMBERS:
                w = _weak_number(r)
                if w is not None:
                    return w
        return tensor_op(self, o)
    method.__name__ = tensor_op.__name__
    return method


class _WeakIndex(Tensor):
    """The index of an eager ``lax.fori_loop``: a concrete integer scalar, weakly typed (see
    above): the front end's promotion reads ``weak_type`` and treats it as a Python int of its
    value; ``+ - * / // % **``, negation and ``abs`` with Python numbers (or another index)
    give weak results, as on a traced weak value under jit."""
    weak_type = True

    @classmethod
    def _of(cls, arr):
        w = cls.__new__(cls)    # (what Tensor._wrap makes, of this class: a fresh 0-d value)
        w._arr = arr
        return w

    __add__, __radd__ = _weak_op(operator.add), _weak_op(operator.add, True)
    __sub__, __rsub__ = _weak_op(operator.sub), _weak_op(operator.sub, True)
    __mul__, __rmul__ = _weak_op(operator.mul), _weak_op(operator.mul, True)
    __truediv__ = _weak_op(operator.truediv)
    __rtruediv__ = _weak_op(operator.truediv, True)
    __floordiv__ = _weak_op(operator.floordiv)
    __rfloordiv__ = _weak_op(operator.floordiv, True)
    __mod__, __rmod__ = _weak_op(operator.mod), _weak_op(operator.mod, True)
    __pow__, __rpow__ = _weak_op(operator.pow), _weak_op(operator.pow, True)

    def __neg__(self):
        w = _weak_number(-self.item())
        return Tensor.__neg__(self) if w is None else w

    def __abs__(self):
        w = _weak_number(abs(self.item()))
        return Tensor.__abs__(self) if w is None else w


_I64 = np.dtype(np.int64)


def _weak_index(i):
    """The loop index ``i`` (an integer scalar: concrete, or traced by the loop's body trace)
    as the body sees it: weakly typed (see above).  Other values (an index batched by an eager
    vmap of traced bounds) are passed as they are."""
    if i.__class__ is Tensor:
        return _WeakIndex._of(i._np())
    if i.__class__ is JitTracer and not i.weak_type:
        interp = i._interp
        wide = i if i.dtype == _I64 else interp.add_eqn(
            P.cast_p, {"dtype": _I64}, [i], [AbstractValue((), _I64, True)])[0]
        out = interp.add_eqn(P.cast_p, {"dtype": i.dtype}, [wide],
                             [AbstractValue((), i.dtype, True)])[0]
        out._wide = wide
        return out
    return i


def _static_int(x):
    """x as a Python int when it is concrete (a Python/NumPy int or a concrete integer
    scalar), else None."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError("lax.fori_loop: lower and upper must be integers, got a bool")
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, ArrayBase):
        if x.dtype.kind not in "iu" or x.shape != ():
            raise TypeError(f"lax.fori_loop: lower and upper must be integer scalars, got "
                            f"{x.dtype} of shape {x.shape}")
        t = x._concrete_tensor()
        return None if t is None or isinstance(x, Tracer) else int(t.item())
    raise TypeError(f"lax.fori_loop: lower and upper must be integers, got "
                    f"{type(x).__name__}")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any],
              init_val: Any) -> Any:
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``; returns val.

    i is an int32 scalar array (int64 when a bound needs it), weakly typed as in JAX: it
    promotes as a Python int would, so ``v + i`` keeps a float32 (or int8) ``v``'s dtype, and
    arithmetic on it with Python numbers stays weak (``v + 0.5 * i``).  With concrete bounds (Python
    ints) the loop is a ``scan`` under a trace (differentiable in both modes); with traced bounds
    a ``while_loop`` (forward mode only).  Eager: a Python loop.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun must be callable")
    lo, hi = _static_int(lower), _static_int(upper)
    dt: Any = np.int32
    for b in (lower, upper):
        if isinstance(b, ArrayBase):
            dt = np.result_type(dt, b.dtype)
        elif isinstance(b, (int, np.integer)) and not -2**31 <= int(b) < 2**31:
            dt = np.int64
    dt = np.dtype(dt)
    raw, tree = tree_flatten(init_val)
    leaves = [_arr(x, "lax.fori_loop: init_val") for x in raw]

    def indexed(i, v):      # body_fun as traced: its index weakly typed, as eagerly
        return body_fun(_weak_index(i), v)
    indexed.__name__ = getattr(body_fun, "__name__", repr(body_fun))
    if lo is not None and hi is not None:
        if not trace_active(leaves):
            weak = [_weak_value(x) for x in raw]
            first = lo
            val = init_val
            if any(weak) and hi > lo:
                # a weakly typed carry takes the promotion of its value and the body's result
                # (JAX's rule).  The first step, run on the carry as given, says whether it
                # must: if not, its result stands and the body runs once a step, as written
                # (a body with side effects, an iterator, sees one call a step); if so the
                # step runs again on the promoted carry (JAX traces twice then too).
                out = body_fun(_WeakIndex._of(np.array(lo, dt)), init_val)
                out_leaves, out_tree = tree_flatten(out)
                if out_tree == tree:
                    out_avals = [_aval(_arr(x, "lax.fori_loop: carry")) for x in out_leaves]
                    leaves, changed = _promote_weak_init(raw, leaves, weak, out_avals)
                    if changed:
                        init_val = val = tree_unflatten(tree, leaves)
                    else:
                        val, first = out, lo + 1
            avals = [_aval(x) for x in leaves]
            if hi <= lo and not any(_weak_value(x) for x in raw):
                _check_unrun_body(lambda: _trace(
                    indexed, [AbstractValue((), dt)] + avals,
                    tree_flatten((0, tree_unflatten(tree, avals)))[1], "lax.fori_loop"),
                    tree, avals, "fori_loop", "init_val")
            if first > lo:
                val = tree_unflatten(tree, _check_carry(val, tree, avals, "fori_loop",
                                                        "init_val"))
            for i in range(first, hi):
                val = body_fun(_WeakIndex._of(np.array(i, dt)), val)
                val = tree_unflatten(tree, _check_carry(val, tree, avals, "fori_loop",
                                                        "init_val"))
            return _new_memory(val, init_val)

        def step(carry, _):
            i, v = carry
            return (i + 1, indexed(i, v)), None
        n = max(hi - lo, 0)
        (_, val), _ = _scan(step, (Tensor._wrap(np.array(lo, dt)), init_val), None, n, False,
                            "fori_loop", "init_val")
        return val
    lo_t = astype(_arr(lower, "lax.fori_loop: lower"), dt)
    hi_t = astype(_arr(upper, "lax.fori_loop: upper"), dt)
    _, _, val = _while_loop(lambda c: c[0] < c[1],
                            lambda c: (c[0] + 1, c[1], indexed(c[0], c[2])),
                            (lo_t, hi_t, init_val), "fori_loop")
    return val
