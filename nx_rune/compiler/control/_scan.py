"""``scan``: the operation (one traced body, its VJP a reverse scan of the body's VJP) and
``lax.scan``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from nx_rune.autodiff.api import _arr  # a pytree leaf as an array, or TypeError naming it
from nx_rune.autodiff.api import vjp as _vjp
from nx_rune.autodiff.core import JVPTracer, is_inexact
from nx_rune.compiler.control._core import (
    ControlOp,
    _aval,
    _cached,
    _carry_avals,
    _check_same,
    _diff_mask,
    _fill,
    _jvp_part,
    _MultiEntry,
    _new_memory,
    _ours,
    _pretrace_carry,
    _promote_weak_init,
    _reaches,
    _read_by,
    _reorder,
    _split_owned,
    _trace,
    _trace_flat,
    _weak_value,
    _zeros,
    control_bind,
    trace_active,
)
from nx_rune.compiler.dispatch import under as _under
from nx_rune.compiler.effects import strip_effects
from nx_rune.compiler.interpret import eval_program
from nx_rune.compiler.ir import AbstractValue, Program
from nx_rune.compiler.pipeline import sub_executable
from nx_rune.frontend import concatenate, stack, zeros
from nx_rune.tree_util import tree_flatten, tree_unflatten

# -- scan ---------------------------------------------------------------------------------------

class _Scan(ControlOp):
    """``scan[body=... length=... reverse=... n_consts=... n_carry=...] *consts *init *xs``;
    the body maps (consts, carry, x slices) to (carry, y slices); the outputs are the final
    carry and the stacked ys."""
    __slots__ = ()

    def out_avals(self, params, avals):
        body, nc = params["body"], params["n_carry"]
        outs = body.out_avals
        return outs[:nc] + [AbstractValue((params["length"],) + a.shape, a.dtype)
                            for a in outs[nc:]]

    def runner(self, params):
        body = sub_executable(params["body"])
        length, reverse = params["length"], params["reverse"]
        nk, nc = params["n_consts"], params["n_carry"]
        y_avals = params["body"].out_avals[nc:]

        def run(ops):
            consts, carry, xs = ops[:nk], list(ops[nk:nk + nc]), ops[nk + nc:]
            ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
            order = range(length - 1, -1, -1) if reverse else range(length)
            for i in order:
                outs = body(*consts, *carry, *[x[i] for x in xs])
                carry = list(outs[:nc])
                for y, o in zip(ys, outs[nc:]):
                    y[i] = o
            return carry + ys
        return run

    # forward mode: a scan over (primal, tangent) pairs
    def _jvp_body(self, params, mask, ymask):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]

        def build():
            avals = body.in_avals
            groups = [(0, nk), (nk, nk + nc), (nk + nc, len(avals))]
            idx = [k for k, m in enumerate(mask) if m]

            def f(*xs):
                # inputs: consts, tconsts, carry, tcarry, x, tx (the tangents in mask)
                it = iter(xs)
                prim, tans = [None] * len(avals), [None] * len(avals)
                for lo, hi in groups:
                    for j in range(lo, hi):
                        prim[j] = next(it)
                    for j in range(lo, hi):
                        if mask[j]:
                            tans[j] = next(it)
                outs, touts = _jvp_part(body, prim, idx, [tans[k] for k in idx])
                carry, ys = outs[:nc], outs[nc:]
                tc = [t for t, m in zip(touts[:nc], mask[nk:nk + nc]) if m]
                ty = [t for t, m in zip(touts[nc:], ymask) if m]
                return carry + tc + ys + ty
            ins = []
            for lo, hi in groups:
                ins += avals[lo:hi] + [a for a, m in zip(avals[lo:hi], mask[lo:hi]) if m]
            return _trace_flat(f, ins, "lax.scan (jvp)").program
        return _cached(body, ("jvp", tuple(mask), tuple(ymask)), build)

    def _jvp_call(self, params, primals, tangents):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]
        # only the operands with a tangent are differentiated (the others are symbolic zeros,
        # as eagerly); a carry has a tangent if its initial value has one or if the body gives
        # it one from the nonzero tangents (JAX's fixpoint over the carries)
        mask = [m and t is not None for m, t in zip(_diff_mask(primals), tangents)]
        inexact_out = [is_inexact(a.dtype) for a in body.out_avals]
        while True:
            r = _reaches(body, mask)
            cm = [m or (o and ie) for m, o, ie in zip(mask[nk:nk + nc], r[:nc], inexact_out)]
            if cm == mask[nk:nk + nc]:
                break
            mask[nk:nk + nc] = cm
        ymask = [o and ie for o, ie in zip(r[nc:], inexact_out[nc:])]
        jb = self._jvp_body(params, mask, ymask)
        tl = _fill(tangents, primals)
        ops = []
        for lo, hi in ((0, nk), (nk, nk + nc), (nk + nc, len(primals))):
            ops += list(primals[lo:hi]) + [t for t, m in zip(tl[lo:hi], mask[lo:hi]) if m]
        n_tc = sum(mask[nk:nk + nc])
        p2 = dict(params, body=jb, n_consts=nk + sum(mask[:nk]), n_carry=nc + n_tc)
        outs = control_bind(self, p2, ops)
        n_y = len(ymask)
        carry, tcarry = outs[:nc], iter(outs[nc:nc + n_tc])
        rest = outs[nc + n_tc:]
        ys, tys = rest[:n_y], iter(rest[n_y:])
        tc = [next(tcarry) if m else None for m in mask[nk:nk + nc]]
        ty = [next(tys) if m else None for m in ymask]
        return list(carry) + list(ys), tc + ty

    def jvp_rule(self, interp, params, values):
        primals = [v.primal if _ours(v, interp) else v for v in values]
        tans = [v.tangent if _ours(v, interp) else None for v in values]
        outs, touts = _under(interp.parent, self._jvp_call, params, primals, tans)
        return [JVPTracer(interp, o, t) if t is not None else o for o, t in zip(outs, touts)]

    # reverse mode: forward keeping every step's carry, then a reverse scan of the body's VJP
    def _res_body(self, params):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]

        def build():
            # outputs: carry, ys, then the carry the step started from (the residuals)
            return Program(body.in_vars, body.eqns, body.outs + body.in_vars[nk:nk + nc])
        return _cached(body, "res", build)

    def _bwd_body(self, params, kmask, cin, cout, xmask, ymask):
        body = params["body"]
        nk, nc = params["n_consts"], params["n_carry"]
        avals = body.in_avals
        out_avals = body.out_avals

        def build():
            nx_ = len(avals) - nk - nc

            def f(*xs):
                # inputs: consts | ct_carry (cin), acc (kmask) |
                #         x slices, carry slices (residuals), ct_y slices (ymask);
                # a cotangent outside the masks is a symbolic zero (None), as eagerly
                it = iter(xs)
                consts = [next(it) for _ in range(nk)]
                ct_c = [next(it) if m else None for m in cin]
                acc = [next(it) if m else None for m in kmask]
                x = [next(it) for _ in range(nx_)]
                c = [next(it) for _ in range(nc)]
                ct_y = [next(it) if m else None for m in ymask]
                # the backward pass recomputes the body: its debug effects ran forward
                _, pull = _vjp(lambda *a: eval_program(strip_effects(body), list(a)),
                               *(consts + c + x))
                res = pull(ct_c + ct_y)
                rk, rc, rx = res[:nk], res[nk:nk + nc], res[nk + nc:]
                new_ct = [r if r is not None else _zeros(p)
                          for r, p, m in zip(rc, c, cout) if m]
                new_acc = [a if r is None else a + r
                           for a, r, m in zip(acc, rk, kmask) if m]
                ct_x = [r if r is not None else _zeros(p) for r, p, m in zip(rx, x, xmask) if m]
                return new_ct + new_acc + ct_x
            ins = (list(avals[:nk]) + [a for a, m in zip(avals[nk:nk + nc], cin) if m]
                   + [a for a, m in zip(avals[:nk], kmask) if m] + list(avals[nk + nc:])
                   + list(avals[nk:nk + nc])
                   + [a for a, m in zip(out_avals[nc:], ymask) if m])
            return _trace_flat(f, ins, "lax.scan (vjp)").program
        key = ("bwd", tuple(kmask), tuple(cin), tuple(cout), tuple(xmask), tuple(ymask))
        return _cached(body, key, build)

    def _bwd_plan(self, params, cin, ymask):
        """The reverse pass's segments: ``[(steps, cin, cout)]`` in the order it runs them.
        While the carries' nonzero cotangents change from one step to the next (an unused
        final carry's cotangent is a symbolic zero until a step gives it one), single steps
        are peeled off, so a zero cotangent is never multiplied by the body's partials
        (``0 * cos(inf)``), as eagerly; the remaining steps share the fixpoint mask."""
        body = params["body"]
        nk, nc, length = params["n_consts"], params["n_carry"], params["length"]
        ie = [is_inexact(a.dtype) for a in body.in_avals[nk:nk + nc]]

        def step(m):
            rd = _read_by(body, list(m) + list(ymask))
            return [r and i for r, i in zip(rd[nk:nk + nc], ie)]
        plan, m, done = [], list(cin), 0
        while done < length and len(plan) <= nc:
            nxt = step(m)
            if nxt == m:
                break
            plan.append((1, m, nxt))
            m, done = nxt, done + 1
        if done < length:
            fix = list(m)
            while True:
                new = [a or b for a, b in zip(fix, step(fix))]
                if new == fix:
                    break
                fix = new
            plan.append((length - done, fix, fix))
        return plan

    def tape_rule(self, tape, params, values):
        primals, idxs = _split_owned(tape, values)
        nk, nc = params["n_consts"], params["n_carry"]
        length = params["length"]
        res_params = dict(params, body=self._res_body(params))
        all_outs = _under(tape.parent, control_bind, self, res_params, primals)
        n_y = len(params["body"].outs) - nc
        outs = all_outs[:nc + n_y]
        carries = all_outs[nc + n_y:]
        mask = _diff_mask(primals)
        for j in range(nk, nk + nc):
            mask[j] = is_inexact(primals[j].dtype)
        out_mask = _diff_mask(outs)
        consts, xs = primals[:nk], primals[nk + nc:]

        def vjp_fn(gs):
            body = params["body"]
            cin = [m and g is not None for m, g in zip(mask[nk:nk + nc], gs[:nc])]
            ymask = [m and g is not None for m, g in zip(out_mask[nc:], gs[nc:])]
            plan = self._bwd_plan(params, cin, ymask)
            # the consts and xs that a nonzero cotangent reaches; the others' stay None
            reach = [False] * len(primals)
            for _, m, _ in plan:
                reach = [a or b for a, b in zip(reach, _read_by(body, list(m) + ymask))]
            kmask = [m and r for m, r in zip(mask[:nk], reach[:nk])]
            xmask = [m and r for m, r in zip(mask[nk + nc:], reach[nk + nc:])]
            ct = list(gs[:nc])
            acc = [_zeros(k) for k, m in zip(consts, kmask) if m]
            ct_y_all = [g for g, m in zip(gs[nc:], ymask) if m]
            whole = len(plan) == 1
            pieces = []            # (first step index, ct_x slices)
            hi, lo = length, 0
            for steps, m_in, m_out in plan:
                if params["reverse"]:
                    a, b = lo, lo + steps
                    lo = b
                else:
                    a, b = hi - steps, hi
                    hi = a

                def cut(v):
                    return v if whole else v[a:b]
                ct_c = [c if c is not None else _zeros(p)
                        for c, p, m in zip(ct, primals[nk:nk + nc], m_in) if m]
                ops = (list(consts) + ct_c + acc + [cut(x) for x in xs]
                       + [cut(c) for c in carries] + [cut(g) for g in ct_y_all])
                n_out = sum(m_out)
                p2 = {"body": self._bwd_body(params, kmask, m_in, m_out, xmask, ymask),
                      "length": steps, "reverse": not params["reverse"],
                      "n_consts": nk, "n_carry": n_out + len(acc)}
                res = control_bind(self, p2, ops)
                itc = iter(res[:n_out])
                ct = [next(itc) if m else None for m in m_out]
                acc = list(res[n_out:n_out + len(acc)])
                pieces.append((a, res[n_out + len(acc):]))

            pieces.sort(key=lambda p: p[0])
            if len(pieces) == 1:
                ct_x = list(pieces[0][1])
            else:
                ct_x = [concatenate([p[1][k] for p in pieces])
                        for k in range(sum(xmask))]
            itk, itx = iter(acc), iter(ct_x)
            return ([next(itk) if m else None for m in kmask]
                    + [c if m else None for c, m in zip(ct, mask[nk:nk + nc])]
                    + [next(itx) if m else None for m in xmask])

        def jvp_fn(ts):
            return self._jvp_call(params, primals, ts)[1]
        return tape.record_multi(_MultiEntry(outs, vjp_fn, jvp_fn, primals), idxs, outs)

    def fallback(self, interp, params, values):
        # unrolled: one evaluation of the body per step under the interpreter
        body, nk, nc = params["body"], params["n_consts"], params["n_carry"]
        consts, carry, xs = values[:nk], list(values[nk:nk + nc]), values[nk + nc:]
        ys = []
        order = range(params["length"] - 1, -1, -1) if params["reverse"] else \
            range(params["length"])
        for i in order:
            outs = eval_program(body, list(consts) + carry + [x[i] for x in xs])
            carry = outs[:nc]
            ys.append(outs[nc:])
        if params["reverse"]:
            ys.reverse()
        y_avals = body.out_avals[nc:]
        stacked = [stack([y[k] for y in ys]) if ys else zeros((0,) + a.shape, a.dtype)
                   for k, a in enumerate(y_avals)]
        return list(carry) + stacked


scan_op = _Scan("scan")


def _scan_length(xs_leaves, length):
    n = None
    for x in xs_leaves:
        if x.ndim == 0:
            raise ValueError("lax.scan: every leaf of xs must have a leading axis to scan "
                             "over, got a scalar")
        if n is None:
            n = x.shape[0]
        elif x.shape[0] != n:
            raise ValueError(f"lax.scan: the leaves of xs must share their leading axis "
                             f"length, got {n} and {x.shape[0]}")
    if length is not None:
        try:
            length = int(length)
        except TypeError:
            raise TypeError(f"lax.scan: length must be an int, got {length!r}") from None
        if length < 0:
            raise ValueError(f"lax.scan: length must be >= 0, got {length}")
        if n is not None and n != length:
            raise ValueError(f"lax.scan: length {length} differs from the leading axis of xs "
                             f"({n})")
        return length
    if n is None:
        raise ValueError("lax.scan: length must be given when xs is None (or has no leaves)")
    return n



def _check_carry(carry, init_tree, init_avals, where, init_name="init"):
    leaves, tree = tree_flatten(carry)
    leaves = [_arr(x, f"lax.{where}: carry") for x in leaves]
    _check_same(f"lax.{where}", init_tree, init_avals, tree, [_aval(x) for x in leaves],
                f"the carry passed in ({init_name})", "the carry returned by the body")
    return leaves


def _split_body_out(out, where):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"lax.{where}: the body must return a pair (carry, y), got "
                        f"{type(out).__name__}")
    return out[0], out[1]


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the ys stacked along a new leading axis (JAX's ``lax.scan``).

    init: a pytree of arrays (the carry; f must return a carry of the same structure, shapes and
    dtypes); xs: a pytree of arrays sharing their leading axis length (or None with
    ``length``); reverse: iterate from the end (ys stay in the order of xs).  Eager: a Python
    loop.  Under a trace: f is traced once and the loop is one ``scan`` equation.
    Differentiable in forward and reverse mode.
    """
    if not callable(f):
        raise TypeError(f"lax.scan: f must be callable, got {type(f).__name__}")
    return _scan(f, init, xs, length, reverse, "scan", "init")


def _scan(f, init, xs, length, reverse, where, init_name):
    """``scan``; ``where``: the lax function the user called (``"fori_loop"`` runs as a
    scan), named in errors about the carry; ``init_name``: its initial carry argument's
    name."""
    init_raw, init_tree = tree_flatten(init)
    init_leaves = [_arr(x, f"lax.{where}: {init_name}") for x in init_raw]
    weak = [_weak_value(x) for x in init_raw]
    xs_leaves, xs_tree = tree_flatten(xs)
    xs_leaves = [_arr(x, "lax.scan: xs") for x in xs_leaves]
    n = _scan_length(xs_leaves, length)
    reverse = bool(reverse)
    nc = len(init_leaves)
    x_avals = [AbstractValue(x.shape[1:], x.dtype) for x in xs_leaves]

    def body(c, x):
        out = f(c, x)
        return _split_body_out(out, where)

    def trace_body():
        avals = _carry_avals(init_leaves, weak)
        args_tree = tree_flatten((tree_unflatten(init_tree, avals),
                                  tree_unflatten(xs_tree, x_avals)))[1]
        return _trace(body, avals + x_avals, args_tree, f"lax.{where}")

    eager = not trace_active(init_leaves + xs_leaves)
    t = None
    if any(weak):
        t = _pretrace_carry(trace_body) if eager else trace_body()
        if t is not None:
            init_leaves, changed = _promote_weak_init(init_raw, init_leaves, weak,
                                                      t.program.out_avals[:nc])
            if changed:
                t = None if eager else trace_body()
    init_avals = [_aval(x) for x in init_leaves]
    if eager:
        carry = tree_unflatten(init_tree, init_leaves)
        ys = []
        for i in (range(n - 1, -1, -1) if reverse else range(n)):
            x = tree_unflatten(xs_tree, [a[i] for a in xs_leaves])
            carry, y = _split_body_out(f(carry, x), where)
            carry = tree_unflatten(init_tree, _check_carry(carry, init_tree, init_avals, where,
                                                           init_name))
            ys.append(y)
        if reverse:
            ys.reverse()
        if ys:
            y_leaves = [tree_flatten(y)[0] for y in ys]
            y_tree = tree_flatten(ys[0])[1]
            stacked = [stack([_arr(y[k], "lax.scan: y") for y in y_leaves])
                       for k in range(len(y_leaves[0]))]
        else:   # no step ran: the ys' shapes come from tracing f
            t = _trace(lambda c, x: f(c, x), init_avals + x_avals,
                       tree_flatten((tree_unflatten(init_tree, init_avals),
                                     tree_unflatten(xs_tree, x_avals)))[1], "lax.scan")
            if not any(weak):
                _check_same(f"lax.{where}", init_tree, init_avals, t.out_tree.children()[0],
                            t.program.out_avals[:len(init_avals)],
                            f"the carry passed in ({init_name})", "the carry returned by the body")
            y_tree = t.out_tree.children()[1]
            y_avals = t.program.out_avals[len(init_avals):]
            stacked = [zeros((0,) + a.shape, a.dtype) for a in y_avals]
        return _new_memory(carry, (init, xs)), tree_unflatten(y_tree, stacked)
    # traced: one scan equation
    if t is None:
        t = trace_body()
    carry_tree, y_tree = t.out_tree.children()
    _check_same(f"lax.{where}", init_tree, init_avals, carry_tree, t.program.out_avals[:nc],
                f"the carry passed in ({init_name})", "the carry returned by the body")
    prog = _reorder(t.program, t.n_explicit, front=True)
    params = {"body": prog, "length": n, "reverse": reverse, "n_consts": len(t.captured),
              "n_carry": nc}
    outs = control_bind(scan_op, params, list(t.captured) + init_leaves + xs_leaves)
    return tree_unflatten(carry_tree, outs[:nc]), tree_unflatten(y_tree, outs[nc:])
