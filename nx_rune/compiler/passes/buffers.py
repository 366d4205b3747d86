"""Buffer reuse: which result writes into the memory of a value that dies at or before it.

``plan_buffers(prog)`` walks the (final) equation order and returns ``{var: donor var}``: the
executor computes ``var`` with ``out=`` the donor's array.  A donor is a value whose memory the
program owns (a fresh result of a ufunc, a matmul or a fused kernel, all C-contiguous arrays
the executor allocates; a donated input) and whose every alias has been read for the last
time; shapes and dtypes must agree.  The aliases of a value are the results of operations that
return its memory (views, ``copy``/``contiguous``/``assign`` as the executor runs them) and of
every operation the planner cannot see into (a primitive's implementation, a ``lax`` loop: a
loop that runs zero times returns its operand), so memory is reused only once nothing that may
still be read sees it.  A ufunc may write over an operand that dies at that very equation
(NumPy handles exact in-place elementwise operations and copies where operands overlap
otherwise); a fused kernel may write an output over one of its inputs only where the kernel's
own instruction order allows it (``FusedSpec.can_overwrite``) and no other alias of that input
is read by the kernel; a matmul never writes over its own operands.  Program outputs stay live
to the end; inputs are never written unless donated (``donate``: input positions).
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune.compiler.ir import Program, Var, last_uses

__all__ = ["plan_buffers", "check_donation", "ALIASING", "FRESH"]

# ops whose result shares its (first, or for assign its last) operand's memory
ALIASING = {"reshape", "expand", "permute", "shrink", "flip", "view", "contiguous", "copy",
            "assign", "stop_gradient"}
# ops whose emitters allocate a fresh C-contiguous result, or write into a planned buffer
FRESH = {"fused", "matmul"}
# ops whose emitters always return new memory that no planned buffer receives
_NEW = {"cast", "where", "cat", "reduce_sum", "reduce_prod", "reduce_max"}


def _is_ufunc_eqn(e):
    from nx_rune.compiler.executor import ufunc_for
    return ufunc_for(e.prim, [x.aval.dtype for x in e.ins]) is not None


def _new_memory(e):
    """Whether the executor's emitter of ``e`` always returns new memory (``astype``,
    ``np.where``, ``np.concatenate``, NumPy's reductions)."""
    if e.prim.name not in _NEW or len(e.outs) != 1 or not isinstance(e.prim, P.Primitive):
        return False
    if e.prim is P.cast_p:
        # complex to real runs the implementation (NumPy's ComplexWarning)
        return not (e.ins[0].aval.dtype.kind == "c" and e.outs[0].aval.dtype.kind != "c")
    return True


def plan_buffers(prog: Program, donate=()) -> dict:
    """``{var: donor var}`` for the equations of ``prog`` (see the module doc)."""
    n = len(prog.eqns)
    last = last_uses(prog.eqns)
    for x in prog.outs:
        if isinstance(x, Var):
            last[x] = n
    roots: dict = {}            # var -> the roots whose memory it may be (or see)
    owned = set()               # roots whose memory the program may overwrite
    members = {}                # root -> vars that may alias it
    for i, v in enumerate(prog.in_vars):
        roots[v] = (v,)
        members[v] = [v]
        if i in donate:
            owned.add(v)

    def alias(o, srcs):
        rs = []
        for x in srcs:
            if isinstance(x, Var):
                for r in roots.get(x, (x,)):
                    if r not in rs:
                        rs.append(r)
        roots[o] = tuple(rs)
        for r in rs:
            members.setdefault(r, []).append(o)

    free = {}                   # (shape, dtype) -> [root]
    freed = set()
    plan = {}
    for i, e in enumerate(prog.eqns):
        name = e.prim.name
        ufunc = name not in FRESH and len(e.outs) == 1 and _is_ufunc_eqn(e)
        if name in ALIASING and len(e.outs) == 1:
            src = e.ins[-1] if e.prim is P.assign_p else e.ins[0]
            alias(e.outs[0], [src])
            if not roots[e.outs[0]]:            # a view of a literal
                roots[e.outs[0]] = (e.outs[0],)
                members[e.outs[0]] = [e.outs[0]]
        elif name in FRESH or ufunc:
            taken = set()
            spec = e.params.get("kernel") if name == "fused" else None
            for o in e.outs:
                roots[o] = (o,)
                members[o] = [o]
                # 0-d results may come back as NumPy scalars (no memory to reuse)
                if not o.aval.shape:
                    continue
                key = (o.aval.shape, o.aval.dtype)
                donor = None
                if ufunc or spec is not None:
                    # an operand dying here, with the result's exact layout (not a view); a
                    # fused kernel only when no later instruction of it reads that operand
                    # and it reads no other alias of the operand's memory
                    for x in e.ins:
                        if (isinstance(x, Var) and roots.get(x) == (x,) and x in owned
                                and x not in taken and last.get(x) == i
                                and (x.aval.shape, x.aval.dtype) == key
                                and all(last.get(m, -1) < i or (m is x or ufunc)
                                        and last.get(m, -1) <= i for m in members[x])
                                and (ufunc or spec is not None and spec.can_overwrite(x, o))):
                            donor = x
                            break
                if donor is None and free.get(key):
                    donor = free[key].pop()
                    freed.discard(donor)
                if donor is not None:
                    plan[o] = donor
                    taken.add(donor)
                    # the result now owns the donor's memory
                    members[donor].append(o)
                    roots[o] = (donor,)
                else:
                    owned.add(o)
        elif _new_memory(e):
            roots[e.outs[0]] = (e.outs[0],)
            members[e.outs[0]] = [e.outs[0]]
        else:
            # an implementation or a control operation: its results may be (views of) any
            # of its operands
            for o in e.outs:
                alias(o, e.ins)
                roots[o] += (o,)
                members.setdefault(o, []).append(o)
        # memory whose every alias is dead after this equation is free for later ones
        for x in e.ins:
            if not isinstance(x, Var) or last.get(x) != i:
                continue
            for r in roots.get(x, ()):
                if r in owned and r not in freed and \
                        all(last.get(m, -1) <= i for m in members[r]):
                    freed.add(r)
                    free.setdefault((r.aval.shape, r.aval.dtype), []).append(r)
    return plan


def check_donation(arrs, donate):
    """Whether the donated input arrays may be overwritten: writeable, C-contiguous, owning
    distinct memory from every other input."""
    import numpy as np
    for i in donate:
        a = arrs[i]
        if not (a.flags.writeable and a.flags.c_contiguous):
            return False
        for j, b in enumerate(arrs):
            if j != i and np.may_share_memory(a, b):
                return False
    return True
