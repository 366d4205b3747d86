"""Buffer reuse: which result writes into the memory of a value that dies at or before it.

``plan_buffers(prog)`` walks the (final) equation order and returns ``{var: donor var}``: the
executor computes ``var`` with ``out=`` the donor's array.  A donor is a value whose memory the
program owns (a fresh result of a ufunc, a matmul or a fused kernel; a donated input) and whose
every alias (views of it) has been read for the last time; shapes and dtypes must agree.  A
ufunc may write over an operand that dies at that very equation (NumPy handles exact in-place
elementwise operations); a matmul or a fused kernel never writes over its own operands.
Program outputs stay live to the end; inputs are never written unless donated
(``donate``: input positions).
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


def _is_ufunc_eqn(e):
    from nx_rune.compiler.executor import ufunc_for
    return ufunc_for(e.prim, [x.aval.dtype for x in e.ins]) is not None


def plan_buffers(prog: Program, donate=()) -> dict:
    """``{var: donor var}`` for the equations of ``prog`` (see the module doc)."""
    n = len(prog.eqns)
    last = last_uses(prog.eqns)
    for x in prog.outs:
        if isinstance(x, Var):
            last[x] = n
    root = {}
    owned = set()               # roots whose memory the program may overwrite
    members = {}                # root -> vars aliasing it
    for i, v in enumerate(prog.in_vars):
        root[v] = v
        members[v] = [v]
        if i in donate:
            owned.add(v)
    free = {}                   # (shape, dtype) -> [root]
    plan = {}
    for i, e in enumerate(prog.eqns):
        name = e.prim.name
        if name in ALIASING and len(e.outs) == 1:
            src = e.ins[-1] if e.prim is P.assign_p else e.ins[0]
            if isinstance(src, Var):
                r = root.get(src, src)
                root[e.outs[0]] = r
                members.setdefault(r, []).append(e.outs[0])
            else:
                root[e.outs[0]] = e.outs[0]
                members[e.outs[0]] = [e.outs[0]]
        else:
            ufunc = name not in FRESH and len(e.outs) == 1 and _is_ufunc_eqn(e)
            taken = set()
            for o in e.outs:
                root[o] = o
                members[o] = [o]
                # 0-d results may come back as NumPy scalars (no memory to reuse)
                if (name in FRESH or ufunc) and o.aval.shape:
                    key = (o.aval.shape, o.aval.dtype)
                    donor = None
                    spec = e.params.get("kernel") if name == "fused" else None
                    if ufunc or spec is not None:
                        # an operand dying here, with the result's exact layout (not a view);
                        # a fused kernel only when no later instruction reads it
                        for x in e.ins:
                            if (isinstance(x, Var) and root.get(x) is x and x in owned
                                    and last.get(x) == i and (x.aval.shape, x.aval.dtype) == key
                                    and all(last.get(m, -1) <= i for m in members[x])
                                    and (ufunc or spec.can_overwrite(x, o))
                                    and x not in taken):
                                donor = x
                                break
                    if donor is None and free.get(key):
                        donor = free[key].pop()
                    if donor is not None:
                        plan[o] = donor
                        taken.add(donor)
                        # the result now owns the donor's memory
                        members[donor].append(o)
                        root[o] = donor
                    elif not ufunc or all(not isinstance(x, Var) or root.get(x) is x
                                          for x in e.ins):
                        owned.add(o)
        # memory whose every alias is dead after this equation is free for later ones
        for x in set(x for x in e.ins if isinstance(x, Var)):
            r = root.get(x)
            if r is None or r not in owned or last.get(x) != i:
                continue
            if all(last.get(m, -1) <= i for m in members[r]) and not _in_free(free, r):
                free.setdefault((r.aval.shape, r.aval.dtype), []).append(r)
    return plan


def _in_free(free, r):
    return any(r in lst for lst in free.values())


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

