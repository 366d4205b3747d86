"""How ``checkify`` runs a function: trace it to a program, then evaluate the program through
``bind`` (so under the active transformations) equation by equation, adding the enabled checks
around each and carrying the error state as values.  Public API: ``checkify``."""
from __future__ import annotations

import numpy as np

from nx_rune import frontend as F
from nx_rune import primitives as P
from nx_rune.config_nans import NO_NAN_CHECK, jax_name
from nx_rune.experimental._checkify_core import (
    EVALUATING,
    TRACING,
    DivisionByZeroError,
    Error,
    FailedCheckError,
    NaNError,
    OOBError,
    _Embedded,
    _Site,
    check_op,
)
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["run_checkified"]

_INEXACT = frozenset("fc")
_USER_KINDS = (FailedCheckError, _Embedded)


class _State:
    """The error state of one evaluation: per lane, whether a check failed and the number of
    the first that failed; the checks met (``sites``) and each one's payload values.  Lane 0
    holds the user's checks (``check``, ``check_error``), lane 1 the automatic ones, and a
    failed user check wins over an automatic one whatever their order, as in JAX (it numbers
    the user's checks while tracing, the automatic ones afterwards, and reports the smallest
    number).  ``flags``: ``[failed0, code0, failed1, code1]``.  Checks of a loop body are
    numbered from ``base`` and, given ``prev`` (their payloads carried from the last
    iteration), keep the payload of the iteration that failed first."""
    __slots__ = ("errors", "flags", "sites", "payload", "base", "prev")

    def __init__(self, errors, flags=None, base=0, prev=None):
        self.errors = errors
        if flags is None:
            no, none = F.asarray(False), F.asarray(np.int32(-1))
            flags = [no, none, no, none]
        self.flags = list(flags)
        self.sites, self.payload = [], []
        self.base, self.prev = base, prev

    def add(self, failed, site, payload=()):
        """One check: ``failed`` a boolean scalar (True: it failed)."""
        k = self.base + len(self.sites)
        lane = 0 if site.kind in _USER_KINDS else 2
        pred, code = self.flags[lane], self.flags[lane + 1]
        first = F.logical_and(failed, F.logical_not(pred))
        payload = list(payload)
        if self.prev is not None:
            prev = self.prev[len(self.sites)]
            payload = [F.where(first, F.astype(v, p.dtype), p) for v, p in zip(payload, prev)]
        self.flags[lane + 1] = F.where(first, F.asarray(np.int32(k)), code)
        self.flags[lane] = F.logical_or(pred, failed)
        self.sites.append(site)
        self.payload.append(tuple(payload))

    def error(self):
        """The :class:`Error` value: the user's first failed check, else the first automatic
        one."""
        p0, c0, p1, c1 = self.flags
        return Error(F.logical_or(p0, p1), F.where(p0, c0, c1), tuple(self.payload),
                     tuple(self.sites))


def _dynamic(x):
    return isinstance(x, (ArrayBase, np.ndarray, np.generic, bool, int, float, complex))


def run_checkified(f, errors, args, kwargs):
    """``(Error, f(*args, **kwargs))`` (``checkify``'s call)."""
    from nx_rune.compiler.api import _leaf_value
    from nx_rune.compiler.ir import AbstractValue
    from nx_rune.compiler.tracing import trace
    leaves, tree = tree_flatten((tuple(args), dict(kwargs)))
    dyn, keys, static = [], [], {}
    for i, x in enumerate(leaves):
        if _dynamic(x):
            # as jit takes them: a Python number weakly typed and carried at full precision
            # (float64 array - 1e300 must not see 1e300 rounded to float32 first)
            value, key = _leaf_value(x, "checkify: an argument")
            dyn.append(value)
            keys.append(key)
        else:
            static[i] = x

    def flat(*values):
        it = iter(values)
        full = [static[i] if i in static else next(it) for i in range(len(leaves))]
        a, kw = tree_unflatten(tree, full)
        return f(*a, **kw)

    avals = [AbstractValue(k[0], k[3] if len(k) > 3 else k[1], k[2]) for k in keys]
    narrow = {j: k[1] for j, k in enumerate(keys) if len(k) > 3}
    _, flat_tree = tree_flatten((tuple(range(len(dyn))), {}))
    token = TRACING.set(TRACING.get() + 1)
    try:
        traced = trace(flat, avals, flat_tree, name="checkify",
                       fname=getattr(f, "__name__", "<function>"), narrow=narrow)
    finally:
        TRACING.reset(token)
    state = _State(errors)
    outs = evaluate(traced.program, dyn + list(traced.captured), state)
    return state.error(), tree_unflatten(traced.out_tree, outs)


def evaluate(prog, args, state):
    """The program's outputs for ``args``, each equation bound under the active
    transformations with the enabled checks around it (recorded in ``state``)."""
    from nx_rune.compiler.control import cond_op
    from nx_rune.compiler.control._custom import custom_call_op
    from nx_rune.compiler.control._loops import while_op
    from nx_rune.compiler.control._scan import scan_op
    from nx_rune.compiler.ir import Literal
    env = dict(zip(prog.in_vars, args))

    def read(x):
        return x.value if isinstance(x, Literal) else env[x]

    for e in prog.eqns:
        ins = [read(x) for x in e.ins]
        prim = e.prim
        if prim is check_op:
            state.add(F.logical_not(ins[0]), e.params["site"], ins[1:])
            continue
        if isinstance(prim, P.Primitive):
            env[e.outs[0]] = _checked_bind(state, prim, ins, e.params)
            continue
        if prim is custom_call_op and _has_check(e.params["primal"]):
            # a custom_jvp/custom_vjp function that calls check: its primal program is
            # evaluated here, so that the check is functionalized (derivatives taken through
            # the checkified function then follow the primal's operations, not the rule)
            outs = evaluate(e.params["primal"], ins, state)
        elif prim is cond_op:
            outs = _cond(state, e.params, ins)
        elif prim is while_op:
            outs = _while(state, e.params, ins)
        elif prim is scan_op:
            outs = _scan(state, e.params, ins)
        else:
            # other operations (a custom_vjp/custom_jvp call, callbacks) bind as they are; a
            # check made by a function they call again updates the state
            token = EVALUATING.set((state, P.current_interpreter()))
            try:
                outs = prim.bind_eqn(e.params, ins)
            finally:
                EVALUATING.reset(token)
        for v, o in zip(e.outs, outs):
            env[v] = o
    return [read(x) for x in prog.outs]


def _has_check(prog):
    """Whether ``prog`` (or a sub-program of one of its equations) holds a check."""
    from nx_rune.compiler.ir import Program
    for e in prog.eqns:
        if e.prim is check_op:
            return True
        for v in e.params.values():
            subs = v if isinstance(v, (tuple, list)) else (v,)
            if any(isinstance(x, Program) and _has_check(x) for x in subs):
                return True
    return False


def _checked_bind(state, prim, ins, params):
    name = prim.name
    errors = state.errors
    if DivisionByZeroError in errors and name in ("fdiv", "idiv"):
        zero = F.equal(ins[1], 0)
        state.add(F.any(zero), _Site(DivisionByZeroError))
        if name == "idiv":
            # integer division by zero raises (nx_rune's kernels); the checked program goes
            # on as JAX's does, with some value there (the dividend's: divided by 1)
            ins = [ins[0], F.where(zero, F.ones((), ins[1].dtype), ins[1])]
    if OOBError in errors and name in ("gather", "scatter") and ins[1].size:
        data, idx = ins[0], ins[1]
        axis = params["axis"]
        n = data.shape[axis]
        oob = F.logical_or(F.less(idx, -n), F.greater_equal(idx, n))
        norm = F.where(F.less(idx, 0), F.add(idx, n), idx)
        first = F.argmax(F.reshape(oob, (-1,)))
        bad = F.reshape(norm, (-1,))[first]
        payload = F.stack([F.astype(bad, np.int32), F.asarray(np.int32(axis)),
                           F.asarray(np.int32(n))])
        state.add(F.any(oob), _Site(OOBError, (name, tuple(data.shape))), [payload])
        if name == "gather":
            # JAX's gather reads the clamped index
            ins = [data, F.clip(norm, 0, n - 1)]
        else:
            # JAX's scatter drops an out-of-bounds update: it goes to one extra slot, cut off
            pad = [(0, 0)] * data.ndim
            pad[axis] = (0, 1)
            ext = F.pad(data, pad)
            out = P.bind(prim, ext, F.where(oob, n, norm), ins[2], **params)
            return F.take(out, F.arange(n), axis=axis)
    out = P.bind(prim, *ins, **params)
    if NaNError in errors and name not in NO_NAN_CHECK and out.dtype.kind in _INEXACT:
        state.add(F.any(F.isnan(out)), _Site(NaNError, (jax_name(prim, params),)))
    return out


# -- control flow --------------------------------------------------------------------------------

def _discover(prog, args, errors, base):
    """The checks (sites) that evaluating ``prog`` on values like ``args`` meets, and their
    payloads' shapes and dtypes: found by tracing the evaluation once, abstractly."""
    from nx_rune.compiler.ir import AbstractValue
    from nx_rune.compiler.tracing import trace
    found = []

    def run(*a):
        st = _State(errors, None, base)
        evaluate(prog, list(a), st)
        found.append((st.sites, [[AbstractValue(x.shape, x.dtype) for x in p]
                                 for p in st.payload]))
        return []

    avals = [AbstractValue(x.shape, x.dtype, bool(getattr(x, "weak_type", False)))
             for x in args]
    _, tree = tree_flatten((tuple(range(len(args))), {}))
    trace(run, avals, tree, name="checkify", fname="a lax body")
    return found[0]


def _zeros(avals):
    return [F.zeros(a.shape, a.dtype) for a in avals]


def _flat(payloads):
    return [x for p in payloads for x in p]


def _unflat(values, avals):
    it = iter(values)
    return [tuple(next(it) for _ in p) for p in avals]


def _cond(state, params, ins):
    from nx_rune.compiler.control import cond, cond_op
    branches = params["branches"]           # (false, true)
    ops = ins[1:]
    base = state.base + len(state.sites)
    found = []
    for b in branches:
        sites, avals = _discover(b, ops, state.errors, base + sum(len(s) for s, _ in found))
        found.append((sites, avals))
    if not any(s for s, _ in found):
        return cond_op.bind_eqn(params, ins)

    def branch(j):
        def run(flags, *a):
            sub = _State(state.errors, flags, base + sum(len(s) for s, _ in found[:j]))
            outs = evaluate(branches[j], list(a), sub)
            pay = []
            for i, (_, avals) in enumerate(found):
                pay += _flat(sub.payload) if i == j else _flat([_zeros(p) for p in avals])
            return [sub.flags, list(outs), pay]
        return run

    flags, outs, rest = cond(ins[0], branch(1), branch(0), state.flags, *ops)
    state.flags = list(flags)
    for sites, avals in found:
        k = sum(len(p) for p in avals)
        state.sites += sites
        state.payload += _unflat(rest[:k], avals)
        rest = rest[k:]
    return list(outs)


def _loop_state(state, body, args):
    base = state.base + len(state.sites)
    sites, avals = _discover(body, args, state.errors, base)
    return base, sites, avals


def _while(state, params, ins):
    from nx_rune.compiler.control import while_loop
    from nx_rune.compiler.control._loops import while_op
    from nx_rune.compiler.interpret import eval_program
    ncc, nbc = params["n_cond_consts"], params["n_body_consts"]
    cconsts, bconsts, carry = ins[:ncc], ins[ncc:ncc + nbc], ins[ncc + nbc:]
    base, sites, avals = _loop_state(state, params["body"], bconsts + carry)
    if not sites:
        return while_op.bind_eqn(params, ins)
    nc = len(carry)

    def cond_fun(c):
        return eval_program(params["cond"], cconsts + list(c[1]))[0]

    def body_fun(c):
        flags, vals, pay = c
        sub = _State(state.errors, flags, base, _unflat(pay, avals))
        outs = evaluate(params["body"], bconsts + list(vals), sub)
        return (sub.flags, list(outs[:nc]), _flat(sub.payload))

    init = (state.flags, list(carry), _flat([_zeros(p) for p in avals]))
    flags, vals, pay = while_loop(cond_fun, body_fun, init)
    state.flags = list(flags)
    state.sites += sites
    state.payload += _unflat(pay, avals)
    return list(vals)


def _scan(state, params, ins):
    from nx_rune.compiler.control import scan
    from nx_rune.compiler.control._scan import scan_op
    nk, nc = params["n_consts"], params["n_carry"]
    consts, carry, xs = ins[:nk], ins[nk:nk + nc], ins[nk + nc:]
    body = params["body"]
    x_avals = [F.zeros(x.shape[1:], x.dtype) for x in xs]
    base, sites, avals = _loop_state(state, body, consts + carry + x_avals)
    if not sites:
        return scan_op.bind_eqn(params, ins)

    def step(c, x):
        flags, vals, pay = c
        sub = _State(state.errors, flags, base, _unflat(pay, avals))
        outs = evaluate(body, consts + list(vals) + list(x), sub)
        return (sub.flags, list(outs[:nc]), _flat(sub.payload)), list(outs[nc:])

    init = (state.flags, list(carry), _flat([_zeros(p) for p in avals]))
    (flags, vals, pay), ys = scan(step, init, list(xs), length=params["length"],
                                       reverse=params["reverse"])
    state.flags = list(flags)
    state.sites += sites
    state.payload += _unflat(pay, avals)
    return list(vals) + list(ys)
