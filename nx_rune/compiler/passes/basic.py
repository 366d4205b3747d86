"""Dead-code elimination, common-subexpression elimination, constant folding, simplification."""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.effects import has_effects
from nx_rune.compiler.executor import ufunc_for
from nx_rune.compiler.ir import AbstractValue, Eqn, Literal, Program, Var
from nx_rune.primitives import Primitive
from nx_rune.tensor import Tensor

__all__ = ["dce", "cse", "fold_constants", "simplify", "substitute", "freeze"]

# primitives never merged or folded: their result is fresh memory to be written in place
_NO_CSE = {"buffer"}


def substitute(prog, mapping, eqns=None):
    """``prog`` with every use of a Var in ``mapping`` replaced by its image (followed
    transitively); ``eqns`` replaces the equation list."""
    def sub(x):
        while isinstance(x, Var) and x in mapping:
            x = mapping[x]
        return x
    eqns = prog.eqns if eqns is None else eqns
    out = []
    for e in eqns:
        ins = [sub(x) for x in e.ins]
        out.append(e if all(a is b for a, b in zip(ins, e.ins)) else e.replace(ins=ins))
    return Program(prog.in_vars, out, [sub(x) for x in prog.outs])


def dce(prog: Program) -> Program:
    """``prog`` without the equations whose outputs are unused; an equation run for its effect
    (``nx.debug.print``, or a control-flow operation whose body has one) is always kept."""
    live = {x for x in prog.outs if isinstance(x, Var)}
    kept = []
    for e in reversed(prog.eqns):
        if any(o in live for o in e.outs) or has_effects(e):
            kept.append(e)
            live.update(x for x in e.ins if isinstance(x, Var))
    kept.reverse()
    if len(kept) == len(prog.eqns):
        return prog
    return Program(prog.in_vars, kept, prog.outs)


def freeze(v):
    """A hashable stand-in for a parameter value."""
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(freeze(x) for x in v)
    if isinstance(v, dict):
        return ("dict",) + tuple(sorted((k, freeze(x)) for k, x in v.items()))
    if isinstance(v, np.ndarray):
        return ("ndarray", v.shape, v.dtype.str, v.tobytes())
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if isinstance(v, float) and v != v:
        return ("nan",)
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


def _literal_key(lit):
    """Equal keys for literals of equal shape, dtype and one repeated value (a broadcast
    constant), else the literal's identity."""
    arr = lit.array()
    if arr.size == 1 or (arr.size and not any(arr.strides)):
        first = arr.reshape(-1)[:1] if arr.flags.c_contiguous else arr[(0,) * arr.ndim]
        return ("lit", arr.shape, arr.dtype.str, first.tobytes())
    return ("litid", id(lit.value))


def _broadcast(lit):
    arr = lit.array()
    return arr.size > 0 and all(s == 0 for s in arr.strides)


def cse(prog: Program) -> Program:
    """``prog`` with repeated computations merged: an equation with the same operation,
    parameters and operands as an earlier one is dropped and its outputs replaced."""
    seen = {}
    mapping = {}
    kept = []
    lits = {}
    lit_keys = {}

    def lit_key(x):
        k = lit_keys.get(id(x))
        if k is None:
            k = lit_keys[id(x)] = (_literal_key(x), x)
        return k[0]

    def key_of(x):
        if isinstance(x, Var):
            while x in mapping:
                x = mapping[x]
            return ("var", x.id)
        return lit_key(x)

    def canon(x):
        if isinstance(x, Var):
            while x in mapping:
                x = mapping[x]
            return x
        return lits.setdefault(lit_key(x), x)

    for e in prog.eqns:
        ins = [canon(x) for x in e.ins]
        if any(a is not b for a, b in zip(ins, e.ins)):
            e = e.replace(ins=ins)
        if e.prim.name in _NO_CSE or not isinstance(e.prim, Primitive) and \
                getattr(e.prim, "pure", True) is False:
            kept.append(e)
            continue
        try:
            key = (e.prim, freeze(e.params), tuple(key_of(x) for x in e.ins))
            hash(key)
        except TypeError:
            kept.append(e)
            continue
        prev = seen.get(key)
        if prev is not None:
            for a, b in zip(e.outs, prev.outs):
                mapping[a] = b
            continue
        seen[key] = e
        kept.append(e)
    outs = [canon(x) for x in prog.outs]
    return Program(prog.in_vars, kept, outs)


# results larger than this are not computed at compile time (memory in the program)
FOLD_LIMIT_BYTES = 1 << 24


def _fold_repeated(e, ins, aval):
    """An elementwise equation on broadcast constants (one repeated value each, the shape of
    the output) computed on the one value and broadcast (stride 0), or None.  Computing the
    whole array would make a literal of distinct memory, whose repeated value ``simplify``
    no longer sees (``x ** (2 - 1)`` would stay a ``pow`` by an array of ones)."""
    if aval.size <= 1 or not (e.prim.name in ("where", "cast") or
                              ufunc_for(e.prim, [x.aval.dtype for x in ins]) is not None):
        return None
    one = []
    for x in ins:
        if x.aval.shape != aval.shape or x.scalar() is None:
            return None
        one.append(Tensor._wrap(np.array(x.array().flat[0])))
    v = e.prim.impl(*one, **e.params)
    if v.shape != () or v.dtype != aval.dtype:
        return None
    return Tensor._broadcast_scalar(v._np().item(), v.dtype, aval.shape)


def fold_constants(prog: Program) -> Program:
    """``prog`` with every primitive equation whose operands are all literals computed now
    (its implementation, once) and replaced by a literal."""
    mapping = {}
    kept = []
    for e in prog.eqns:
        ins = [mapping.get(x, x) if isinstance(x, Var) else x for x in e.ins]
        if (isinstance(e.prim, Primitive) and e.prim.name not in _NO_CSE
                and all(isinstance(x, Literal) for x in ins) and len(e.outs) == 1
                and e.outs[0].aval.size * e.outs[0].aval.dtype.itemsize <= FOLD_LIMIT_BYTES
                and e.prim.impl is not None):
            aval = e.outs[0].aval
            try:
                val = _fold_repeated(e, ins, aval)
                if val is None:
                    val = e.prim.impl(*[x.value for x in ins if isinstance(x, Literal)],
                                      **e.params)
            except Exception:   # noqa: BLE001 - the error belongs to run time (it raises there)
                kept.append(e.replace(ins=ins))
                continue
            mapping[e.outs[0]] = Literal(val, AbstractValue(val.shape, val.dtype,
                                                            aval.weak_type))
            continue
        kept.append(e.replace(ins=ins) if any(a is not b for a, b in zip(ins, e.ins)) else e)
    outs = [mapping.get(x, x) if isinstance(x, Var) else x for x in prog.outs]
    return Program(prog.in_vars, kept, outs)


# -- simplification --------------------------------------------------------------------------------

def _scalar_of(x):
    """The repeated value of a literal whose elements are all equal, else None."""
    if isinstance(x, Literal):
        return x.scalar()
    return None


def _is_bool(x, value):
    s = _scalar_of(x)
    return isinstance(s, bool) and s is value


def _const_like(value, aval):
    """A literal of ``aval``'s shape and dtype holding ``value`` everywhere (stride 0)."""
    from nx_rune.tensor import Tensor
    return Literal(Tensor._broadcast_scalar(np.array(value, aval.dtype).item(), aval.dtype,
                                            aval.shape), aval)


def _is(x, value):
    s = _scalar_of(x)
    return s is not None and not isinstance(s, bool) and s == value and \
        not (isinstance(s, float) and value == 0 and np.signbit(s))


def simplify(prog: Program) -> Program:
    """``prog`` with algebraic identities applied: ``x * 1``, ``1 * x``, ``x / 1``, ``x ** 1``
    -> x (exact); ``x ** 2`` -> ``x * x`` (exact: both round the true square once); ``x ** 3``
    and ``x ** 4`` -> products (within 2 ulp of ``power``, as JAX's integer_pow);
    ``neg(neg(x))`` -> x; ``where(c, x, x)`` -> x; a cast to the operand's dtype, a reshape or
    expand to its shape, an identity permutation, ``contiguous``/``copy``/``stop_gradient``
    (values, not memory, in a program) -> x.  ``x + 0`` is kept (-0.0 + 0 is +0.0)."""
    mapping = {}
    producer = {}
    kept = []

    def sub(x):
        while isinstance(x, Var) and x in mapping:
            x = mapping[x]
        return x

    for e in prog.eqns:
        ins = [sub(x) for x in e.ins]
        if any(a is not b for a, b in zip(ins, e.ins)):
            e = e.replace(ins=ins)
        name = e.prim.name if isinstance(e.prim, Primitive) else None
        out = e.outs[0] if e.outs else None
        repl = None
        if name is not None and out is not None and len(e.outs) == 1:
            ins = e.ins
            same = [x for x in ins if isinstance(x, (Var, Literal)) and
                    x.aval.same_type(out.aval)]
            if name == "mul":
                if _is(ins[1], 1) and ins[0] in same:
                    repl = ins[0]
                elif _is(ins[0], 1) and ins[1] in same:
                    repl = ins[1]
            elif name == "fdiv" and _is(ins[1], 1) and ins[0] in same:
                repl = ins[0]
            elif name == "pow" and ins[0] in same and out.aval.dtype.kind in "fc":
                if _is(ins[1], 0) and _scalar_of(ins[1]) == 0:
                    repl = _const_like(1, out.aval)      # x ** 0 is 1, nan and inf included
                elif _is(ins[1], 1):
                    repl = ins[0]
                elif _is(ins[1], 2):
                    e = Eqn(P.mul_p, {}, [ins[0], ins[0]], e.outs)
                elif _is(ins[1], 3) or _is(ins[1], 4):
                    sq = Var(out.aval)
                    kept.append(Eqn(P.mul_p, {}, [ins[0], ins[0]], [sq]))
                    other = ins[0] if _is(ins[1], 3) else sq
                    e = Eqn(P.mul_p, {}, [sq, other], e.outs)
            elif name == "neg":
                p = producer.get(ins[0])
                if p is not None and p.prim is P.neg_p and p.ins[0].aval.same_type(out.aval):
                    repl = p.ins[0]
            elif name == "where" and ins[1] is ins[2] and ins[1] in same:
                repl = ins[1]
            elif name == "where" and _is_bool(ins[0], True) and ins[1] in same:
                repl = ins[1]
            elif name == "where" and _is_bool(ins[0], False) and ins[2] in same:
                repl = ins[2]
            elif name in ("and", "or", "xor") and out.aval.dtype == np.bool_:
                a, b = (ins[1], ins[0]) if isinstance(ins[0], Literal) else (ins[0], ins[1])
                if name == "and" and _is_bool(b, False) or name == "or" and _is_bool(b, True):
                    repl = _const_like(name == "or", out.aval)
                elif (name in ("and",) and _is_bool(b, True) or name in ("or", "xor")
                      and _is_bool(b, False)) and a in same:
                    repl = a
            elif name == "add" and out.aval.dtype.kind in "fc":
                # x + (-0.0) is x for every x (+0.0 is not: -0.0 + 0.0 is +0.0)
                for a, b in ((ins[0], ins[1]), (ins[1], ins[0])):
                    sb = _scalar_of(b)
                    if isinstance(sb, (float, complex)) and sb == 0 and a in same and \
                            np.signbit(np.real(sb)) and (not isinstance(sb, complex)
                                                         or np.signbit(np.imag(sb))):
                        repl = a
                        break
            elif name == "cast" and ins[0].aval.dtype == np.dtype(e.params["dtype"]):
                repl = ins[0]
            elif name in ("reshape", "expand") and ins[0].aval.shape == out.aval.shape:
                repl = ins[0]
            elif name == "permute" and tuple(e.params["axes"]) == tuple(range(out.aval.ndim)):
                repl = ins[0]
            elif name in ("contiguous", "copy", "stop_gradient"):
                repl = ins[0]
        if repl is not None and out is not None and (isinstance(repl, Var)
                                                     or repl.aval.same_type(out.aval)):
            mapping[out] = repl
            continue
        for o in e.outs:
            producer[o] = e
        kept.append(e)
    return Program(prog.in_vars, kept, [sub(x) for x in prog.outs])

