"""Fusion: elementwise equations and the reductions that end them become fused kernels.

A fusion group is a set of equations over one iteration shape S: elementwise operations (every
primitive that is one NumPy ufunc loop for its dtypes, ``where``, ``cast``, ``clip``) computing
values of shape S, and reductions (``reduce_sum``/``max``/``prod``/``nanmax``/``nanmin``) of
such values.  Its inputs are values computed elsewhere, read through strides: a ``view``
equation (``fold_views``) feeding the group is absorbed (a broadcast bias, a transposed operand
cost nothing).  The group becomes one ``fused`` equation run by ``nx_rune._kernels.fusion``'s
VM in blocks that stay in cache: intermediate values never exist as whole arrays; only the
values used outside the group (and the reductions) are written to memory.

Grouping is greedy in program order: an equation joins the group of one of its operands'
producers when the iteration shapes agree, it does not read a reduction of that group, and
joining creates no cycle (no operand of it depends on the group through an equation outside
it).  Equations are then ordered topologically again.  Groups of a single equation stay plain
NumPy calls.
"""
from __future__ import annotations

import heapq

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler.effects import has_effects
from nx_rune.compiler.executor import ufunc_for
from nx_rune.compiler.ir import Eqn, InternalOp, Literal, Program, Var, last_uses
from nx_rune.primitives import Primitive

__all__ = ["fuse", "absorb_concat", "FusedOp", "fused_op", "FusedSpec", "REDUCERS", "BLOCK"]

# reduction primitive -> the ufunc whose reduce loop it is
REDUCERS = {P.reduce_sum_p: np.add, P.reduce_prod_p: np.multiply, P.reduce_max_p: np.maximum,
            P.reduce_nanmax_p: np.fmax, P.reduce_nanmin_p: np.fmin}
_SEG_NAMES = {P.reduce_sum_p: "sum", P.reduce_prod_p: "prod", P.reduce_max_p: "max",
              P.reduce_nanmax_p: "fmax", P.reduce_nanmin_p: "fmin"}
BLOCK = 1024
# unsegmented kernels take blocks of this many bytes of their widest value: 2048 float32
# elements or 1024 float64 ones (fewer instruction dispatches per element; the blocks still sit
# in L1/L2: measured ~5% faster than 1024 float32 elements on the tanh GELU, 512 ~8% slower)
BLOCK_BYTES = 8192
MAX_DIMS = 8
_VIEW = "view"


def _kernels():
    from nx_rune._kernels import fusion
    return fusion


def _scalar_bytes(lit):
    """The bytes of a literal's one repeated value (a broadcast constant), else None."""
    arr = lit.array()
    if arr.size == 0 or arr.dtype.itemsize > 16:
        return None
    if arr.size == 1 or all(s == 0 for s in arr.strides):
        return arr.reshape(-1)[:1].tobytes() if arr.flags.c_contiguous else \
            np.ascontiguousarray(arr.flat[0]).tobytes()
    return None


_LOOPS = {}
# the four float operations with loops of the kernels' own (fusion_arith.h), by primitive: the
# same values as NumPy's loops, with less fixed cost per block
USE_ARITH_LOOPS = True
_ARITH_PRIMS = {"add": "add", "sub": "subtract", "mul": "multiply", "fdiv": "divide"}
_CHAIN_STEPS = 16


def _loop_of(e):
    """``(loop address, data)`` running equation ``e`` in the VM, or None if it cannot."""
    prim = e.prim
    if not isinstance(prim, Primitive) or len(e.outs) != 1:
        return None
    key = (prim, tuple(x.aval.dtype for x in e.ins), e.outs[0].aval.dtype,
           e.params.get("dtype") if prim is P.cast_p else None)
    try:
        return _LOOPS[key]
    except KeyError:
        loop = _LOOPS[key] = _find_loop(prim, list(key[1]), key[2])
        return loop


def _find_loop(prim, ins, out):
    F = _kernels()
    if any(d.kind in "OUSV" or d == np.float16 for d in ins + [out]):
        return None
    if prim is P.where_p:
        if ins[0] != np.bool_ or ins[1] != out or ins[2] != out:
            return None
        return F.where_loop(out.itemsize)
    if prim is P.cast_p:
        return F.cast_loop(ins[0], out)
    if prim is P.clip_p:
        # not fused: NumPy's clip loop answers a signed zero by the bounds' strides (array
        # bounds give the bound 0.0 for x = -0.0, scalar bounds x itself), so only the eager
        # implementation, which passes one-value bounds as scalars, gives eager's bits
        return None
    uf = ufunc_for(prim, ins)
    if uf is None:
        return None
    if USE_ARITH_LOOPS and prim.name in _ARITH_PRIMS and ins[0] == ins[1] == out:
        own = F.arith_loop(_ARITH_PRIMS[prim.name], out)
        if own is not None:
            return own
    return F.ufunc_loop(uf, ins + [out])


def _reduce_loop(e):
    uf = REDUCERS.get(e.prim)
    if uf is None or not isinstance(e.ins[0], Var):
        return None
    x = e.ins[0].aval
    if x.dtype.kind not in "iufc" or x.dtype == np.float16 or x.size == 0:
        return None
    if e.prim is not P.reduce_sum_p and x.dtype.kind == "c":
        return None
    return _kernels().ufunc_loop(uf, [x.dtype] * 3)


class FusedSpec:
    """What one fused equation computes: the iteration shape, its inputs (source and element
    strides/offset per dim of ``shape``), its equations, its outputs (elementwise values of
    ``shape``, and reductions), and the compiled Kernel once built."""
    __slots__ = ("shape", "inputs", "operands", "eqns", "outputs", "reductions", "kernel",
                 "placement", "_order")

    def __init__(self, shape, inputs, operands, eqns, outputs, reductions):
        self.shape = tuple(shape)
        self.inputs = inputs            # [(source Var/Literal, strides, offset)]
        self.operands = operands        # the operand each input stands for in the equations
        self.eqns = eqns
        self.outputs = outputs          # [Var] written elementwise
        self.reductions = reductions    # [(Eqn, loop)]
        self.kernel = None
        # written outputs stored into part of another array: var -> (array var, element
        # strides per dim of shape, element offset) (absorb_concat)
        self.placement = {}
        self._order = None

    def order(self):
        """The instructions in the order the VM runs them: ``eqns`` with runs of arithmetic
        merged into chains, each placed where its run's last equation was (so the reads of
        the run's earlier equations happen there)."""
        if self._order is None:
            self._order = _chained(self)
        return self._order

    def target(self, v):
        """(array var, element strides, element offset) where written output v goes."""
        return self.placement.get(v, (v, _c_strides(self.shape), 0))

    def arrays(self):
        """The output arrays, in the fused equation's order: the written outputs' arrays (each
        once), then the reductions."""
        out = []
        for v in self.outputs:
            a = self.target(v)[0]
            if a not in out:
                out.append(a)
        return out + [e.outs[0] for e, _ in self.reductions]

    def pp(self):
        names = " ".join(e.prim.name for e in self.eqns)
        reds = " ".join(e.prim.name for e, _ in self.reductions)
        return (f"{{shape={self.shape} ops=[{names}]"
                + (f" reduce=[{reds}]" if reds else "") + "}")

    __repr__ = pp

    def can_overwrite(self, source, out):
        """Whether output ``out`` may be written into the memory of input ``source`` (dying
        here): same layout (C-contiguous of the iteration shape), and no instruction or
        reduction reads that input after the instruction computing ``out``, in the order the
        VM runs them (a chain reads its operands where it runs, which may be after equations
        that came later in the group)."""
        if out not in self.outputs or not isinstance(source, Var) or out in self.placement:
            return False
        c = _c_strides(self.shape)
        ops = [op for (src, st, off), op in zip(self.inputs, self.operands)
               if src is source]
        if not ops or any(st != c or off for (src, st, off) in self.inputs if src is source):
            return False
        if source.aval.dtype.itemsize != out.aval.dtype.itemsize:
            return False
        order = self.order()
        write = next(i for i, e in enumerate(order) if e.outs[0] is out)
        for i, e in enumerate(order):
            if i > write and any(x is op for x in e.ins for op in ops):
                return False
        return not any(e.ins[0] is op for e, _ in self.reductions for op in ops)

    # -- building the VM program --------------------------------------------------------
    def build(self):
        """The Kernel of this group (built once)."""
        if self.kernel is None:
            self.kernel = _build_kernel(self)
        return self.kernel


def _c_strides(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def _iteration_layout(shape, operand_strides, block=BLOCK):
    """The kernel's iteration space: size-1 dims dropped, neighbouring dims that every operand
    steps through as one collapsed; a short last dim (a row of fewer than block/2 elements)
    becomes segments of a merged last dim, so that blocks hold many rows.  Returns (dims,
    segment length or 0, [(strides, stride between segments)] per operand), in elements."""
    keep = [d for d in range(len(shape)) if shape[d] != 1]
    if not keep:
        return (1,), 0, [((0,), 0) for _ in operand_strides]
    dims = [shape[d] for d in keep]
    strides = [[s[d] for d in keep] for s in operand_strides]
    i = len(dims) - 2
    while i >= 0:
        if all(st[i] == st[i + 1] * dims[i + 1] for st in strides):
            dims[i + 1] *= dims[i]
            del dims[i]
            for st in strides:
                del st[i]
        i -= 1
    seg = 0
    segs = [0] * len(strides)
    if len(dims) >= 2 and dims[-1] < block // 2:
        seg = dims[-1]
        segs = [st[-2] for st in strides]
        dims[-2:] = [dims[-2] * dims[-1]]
        for st in strides:
            del st[-2]
    return tuple(dims), seg, [(tuple(st), sg) for st, sg in zip(strides, segs)]


def _build_kernel(spec):
    F = _kernels()
    shape = spec.shape
    # operand strides (elements) per original dim: inputs, then outputs
    in_strides = [tuple(st) for _, st, _ in spec.inputs]
    out_shapes = []
    out_strides = []
    for v in spec.outputs:
        out_strides.append(tuple(spec.target(v)[1]))
        out_shapes.append(shape)
    for e, _ in spec.reductions:
        axes = set(e.params["axes"])
        kept = [d for d in range(len(shape)) if d not in axes]
        kc = _c_strides(tuple(shape[d] for d in kept))
        st = [0] * len(shape)
        for d, s in zip(kept, kc):
            st[d] = s
        out_strides.append(tuple(st))
    dims, seg, layout = _iteration_layout(shape, in_strides + out_strides)
    n_in = len(spec.inputs)
    in_desc = []
    regs = {}
    for k, ((x, _, off), (st, sg), op) in enumerate(zip(spec.inputs, layout[:n_in],
                                                        spec.operands)):
        item = x.aval.dtype.itemsize
        in_desc.append((tuple(s * item for s in st), sg * item, off * item, item))
        regs[_key(op)] = k
    consts = []
    const_regs = {}
    # literal scalars become constant registers
    for e in spec.eqns:
        for x in e.ins:
            if isinstance(x, Literal) and _key(x) not in regs:
                b = _scalar_bytes(x)
                k = ("c", b, x.aval.dtype.str)
                if k not in const_regs:
                    const_regs[k] = len(consts)
                    consts.append(b)
    n_const = len(consts)
    out_vars = list(spec.outputs)
    eqns = spec.order()
    # temporaries: linear scan over the equations
    last_use = last_uses(eqns)
    for e, _ in spec.reductions:
        last_use[e.ins[0]] = len(eqns)
    outputs_set = set(out_vars)
    temps = []          # itemsize per temp
    free = {}           # itemsize -> [temp index]
    value_reg = {}
    code = []
    t0 = n_in + n_const

    def reg_of(x):
        if isinstance(x, Literal):
            k = _key(x)
            if k in regs:
                return regs[k]
            b = _scalar_bytes(x)
            return n_in + const_regs[("c", b, x.aval.dtype.str)]
        k = _key(x)
        if k in regs:
            return regs[k]
        return value_reg[x]

    for i, e in enumerate(eqns):
        loop = e.loop if isinstance(e, _Chain) else _loop_of(e)
        in_regs = [reg_of(x) for x in e.ins]
        out = e.outs[0]
        item = out.aval.dtype.itemsize
        # free the temps of values whose last use is this equation (reusable as its output
        # when the loop works in place: a ufunc with equal itemsizes); each value once,
        # however many of the operands it is (``d * d``): a temp freed twice would be handed
        # to two later values at once
        dying = list(dict.fromkeys(x for x in e.ins if isinstance(x, Var) and x in value_reg
                                   and last_use.get(x) == i and x not in outputs_set))
        if out in outputs_set:
            value_reg[out] = ("out", out_vars.index(out))
            code.append((loop, in_regs, ("out", out_vars.index(out))))
        else:
            in_place = e.prim not in (P.cast_p, P.where_p)
            r = None
            if in_place:
                for x in dying:
                    rx = value_reg[x]
                    if isinstance(rx, tuple) and rx[0] == "tmp" and temps[rx[1]] == item:
                        r = rx
                        break
            if r is None:
                pool = free.get(item)
                if pool:
                    r = ("tmp", pool.pop())
                else:
                    temps.append(item)
                    r = ("tmp", len(temps) - 1)
            value_reg[out] = r
            code.append((loop, in_regs, r))
        for x in dying:
            rx = value_reg[x]
            if isinstance(rx, tuple) and rx[0] == "tmp" and rx != value_reg[out]:
                free.setdefault(temps[rx[1]], []).append(rx[1])
    o0 = t0 + len(temps)

    def resolve(r):
        if isinstance(r, tuple):
            return t0 + r[1] if r[0] == "tmp" else o0 + r[1]
        return r

    code = [(loop, tuple(resolve(r) for r in ins) + (resolve(o),)) for loop, ins, o in code]
    out_desc = []
    for k, v in enumerate(out_vars):
        item = v.aval.dtype.itemsize
        st, sg = layout[n_in + k]
        out_desc.append((tuple(s * item for s in st), sg * item, item, 0, -1, None, None,
                         spec.target(v)[2] * item))
    for j, (e, loop) in enumerate(spec.reductions):
        x = e.ins[0]
        item = x.aval.dtype.itemsize
        st, sg = layout[n_in + len(out_vars) + j]
        segloop = F.segment_loop(_SEG_NAMES[e.prim], x.aval.dtype) if seg else None
        out_desc.append((tuple(s * item for s in st), sg * item, item, 1,
                         resolve(reg_of(x)), loop, segloop))
    widest = max([x.aval.dtype.itemsize for x, _, _ in spec.inputs] + list(temps) +
                 [d[2] for d in out_desc] + [1])
    block = BLOCK if seg else max(BLOCK, BLOCK_BYTES // widest)
    return F.Kernel(dims, seg, in_desc, consts, temps, out_desc, code, block)


class _Chain:
    """Equations of add/subtract/multiply/divide on one float dtype, each consuming the
    previous one's result (read nowhere else), run as one VM instruction (``chain_loop``):
    ``ins`` are the distinct operands, the first the chain's start."""
    __slots__ = ("ins", "outs", "prim", "loop")

    def __init__(self, ins, out, loop):
        self.ins, self.outs, self.prim, self.loop = ins, [out], None, loop


def _chainable(e):
    """The float dtype of an arithmetic equation the chain loops run, else None."""
    if not USE_ARITH_LOOPS or not isinstance(e.prim, Primitive) or len(e.outs) != 1:
        return None
    uf = _ARITH_PRIMS.get(e.prim.name)
    if uf is None or len(e.ins) != 2 or P.PRIMITIVES.get(e.prim.name) is not e.prim:
        return None
    d = e.outs[0].aval.dtype
    if d not in (np.float32, np.float64) or any(x.aval.dtype != d for x in e.ins):
        return None
    if any(isinstance(x, Literal) and _scalar_bytes(x) is None for x in e.ins):
        return None
    return d


def _chained(spec):
    """spec.eqns with runs of chainable equations (see _Chain) replaced by one _Chain each,
    placed where the run's last equation was (its operands are all computed by then)."""
    eqns = spec.eqns
    uses = {}
    for e in eqns:
        for x in e.ins:
            if isinstance(x, Var):
                uses[x] = uses.get(x, 0) + 1
    for e, _ in spec.reductions:
        uses[e.ins[0]] = uses.get(e.ins[0], 0) + 2
    for v in spec.outputs:
        uses[v] = uses.get(v, 0) + 2
    runs = {}          # value -> [equations] of the open run ending in it
    run_of = {}        # id(equation) -> its run
    for e in eqns:
        d = _chainable(e)
        if d is None:
            continue
        run = None
        for x in e.ins:
            prev = runs.get(x) if isinstance(x, Var) else None
            if prev is not None and uses.get(x) == 1 and \
                    prev[-1].outs[0].aval.dtype == d and len(prev) < _CHAIN_STEPS:
                run = prev
                del runs[x]
                break
        if run is None:
            run = []
        run.append(e)
        run_of[id(e)] = run
        runs[e.outs[0]] = run
    out = []
    for e in eqns:
        run = run_of.get(id(e))
        if run is None or len(run) == 1:
            out.append(e)
        elif run[-1] is e:
            chain = _chain_of(run)
            out.extend(run if chain is None else [chain])
    return out


def _chain_of(run):
    """The _Chain of a run of equations (each reads the previous one's result)."""
    first = run[0]
    operands, index = [first.ins[0]], {_key(first.ins[0]): 0}

    def arg(x):
        k = _key(x)
        if k not in index:
            index[k] = len(operands)
            operands.append(x)
        return index[k]

    steps = [(_ARITH_PRIMS[first.prim.name], arg(first.ins[1]), False)]
    for prev, e in zip(run, run[1:]):
        v = prev.outs[0]
        swapped = e.ins[0] is not v
        other = e.ins[0] if swapped else e.ins[1]
        steps.append((_ARITH_PRIMS[e.prim.name], arg(other), swapped))
    loop = _kernels().chain_loop(run[-1].outs[0].aval.dtype, len(operands), steps)
    if loop is None:
        return None
    return _Chain(operands, run[-1].outs[0], loop)


def _key(x):
    return ("v", x) if isinstance(x, Var) else ("l", id(x.value))


class FusedOp(InternalOp):
    """``fused[kernel] *inputs``: outputs are the group's elementwise results, then its
    reductions."""
    __slots__ = ()
    pure = True

    def emit(self, cg, e, ins, plan):
        spec = e.params["kernel"]
        k = cg.const(spec.build(), "k")
        names = {}
        for v in e.outs:
            name = names[v] = cg.bind_out(v)
            buf = plan.get(v) if plan else None
            if buf is not None:
                cg.emit(f"{name} = {cg.name(buf)}")
            else:
                cg.emit(f"{name} = _empty({v.aval.shape!r}, {cg.const(v.aval.dtype, 'd')})")
            cg.new_array(name)
        outs = [names[spec.target(v)[0]] for v in spec.outputs] + \
            [names[r.outs[0]] for r, _ in spec.reductions]
        cg.ns["_empty"] = np.empty
        cg.emit(f"{k}.run(({''.join(a + ', ' for a in ins)}), "
                f"({''.join(o + ', ' for o in outs)}))")


fused_op = FusedOp("fused")


# -- grouping ---------------------------------------------------------------------------------

class _Group:
    __slots__ = ("id", "shape", "eqns", "reductions", "red_outs", "members", "deps", "first")

    def __init__(self, gid, shape, first):
        self.id = gid
        self.shape = shape
        self.eqns = []
        self.reductions = []
        self.red_outs = set()
        self.members = set()
        self.deps = 0           # bitset of groups this group depends on (transitively)
        self.first = first


def _view_source(producer, x):
    """(source, strides, offset) when x is a ``view`` of a value, else None."""
    e = producer.get(x)
    if e is not None and e.prim.name == _VIEW and isinstance(e.prim, InternalOp):
        p = e.params
        return e.ins[0], tuple(p["strides"]), p["offset"]
    return None


def fuse(prog: Program) -> Program:
    """``prog`` with fusion groups of two or more operations replaced by ``fused`` equations
    (see the module doc)."""
    producer = {}
    for e in prog.eqns:
        for o in e.outs:
            producer[o] = e
    node_of = {}        # var -> group id (for grouped values) or ("e", index)
    deps_of = {}        # var -> bitset of the groups its value depends on
    groups = []
    loops = {}
    for i, e in enumerate(prog.eqns):
        loop = _loop_of(e)
        red = None if loop is not None else _reduce_loop(e)
        in_deps = 0
        for x in e.ins:
            if isinstance(x, Var):
                in_deps |= deps_of.get(x, 0)
                g = node_of.get(x)
                if isinstance(g, int):
                    in_deps |= 1 << g
        target = None
        if loop is not None or red is not None:
            shape = e.outs[0].aval.shape if loop is not None else e.ins[0].aval.shape
            if len(shape) <= MAX_DIMS and all(d > 0 for d in shape):
                for x in e.ins:
                    g = node_of.get(x) if isinstance(x, Var) else None
                    if not isinstance(g, int):
                        continue
                    G = groups[g]
                    if G.shape != shape or _reads_reduction(e, G, producer):
                        continue
                    if _creates_cycle(e, G, node_of, deps_of, groups):
                        continue
                    target = G
                    break
                if target is None and loop is not None:
                    # a sibling: a recent group of this shape that e can join without a cycle
                    for G in reversed(groups[-4:]):
                        if G.shape == shape and not _reads_reduction(e, G, producer) and \
                                not _creates_cycle(e, G, node_of, deps_of, groups):
                            target = G
                            break
                if target is None and (loop is not None or _worth_reducing(e, node_of,
                                                                           producer)):
                    target = _Group(len(groups), shape, i)
                    groups.append(target)
        if target is not None:
            loops[id(e)] = loop if loop is not None else red
            if loop is not None:
                target.eqns.append(e)
                target.members.add(e.outs[0])
            else:
                target.reductions.append((e, red))
                target.red_outs.add(e.outs[0])
            target.deps |= in_deps & ~(1 << target.id)
            for o in e.outs:
                node_of[o] = target.id
                deps_of[o] = 1 << target.id
        else:
            for o in e.outs:
                node_of[o] = ("e", i)
                deps_of[o] = in_deps
    if not groups:
        return prog
    return _rebuild(prog, groups, node_of, producer)


def _reads_reduction(e, G, producer):
    for x in e.ins:
        if isinstance(x, Var) and x in G.red_outs:
            return True
        src = _view_source(producer, x) if isinstance(x, Var) else None
        if src is not None and src[0] in G.red_outs:
            return True
    return False


def _closure(bits, groups):
    """``bits`` (a set of groups, as a bitset) with every group they depend on, transitively,
    by the groups' current dependencies."""
    done = 0
    while bits & ~done:
        todo = bits & ~done
        done |= todo
        g = 0
        while todo:
            if todo & 1:
                bits |= groups[g].deps
            todo >>= 1
            g += 1
    return bits


def _creates_cycle(e, G, node_of, deps_of, groups):
    """Whether an operand of e outside G depends on G (joining would make a cycle)."""
    bit = 1 << G.id
    for x in e.ins:
        if not isinstance(x, Var) or x in G.members:
            continue
        if node_of.get(x) == G.id:      # a reduction of G read directly
            return True
        if _closure(deps_of.get(x, 0), groups) & bit:
            return True
    return False


def _worth_reducing(e, node_of, producer):
    """A reduction starts its own group only when it reads through a view (a plain array is
    reduced as fast by NumPy)."""
    return _view_source(producer, e.ins[0]) is not None


def _rebuild(prog, groups, node_of, producer):
    consumers_outside = {}
    out_set = {x for x in prog.outs if isinstance(x, Var)}
    grouped_eqn = {}
    for G in groups:
        for e in G.eqns:
            grouped_eqn[id(e)] = G
        for e, _ in G.reductions:
            grouped_eqn[id(e)] = G
    # which group values are read outside their group
    for e in prog.eqns:
        G = grouped_eqn.get(id(e))
        for x in e.ins:
            if isinstance(x, Var):
                g = node_of.get(x)
                if isinstance(g, int) and (G is None or G.id != g):
                    consumers_outside.setdefault(g, set()).add(x)
    # the equations of a fused group read views of their inputs through strides
    new_eqns = {}   # index of the group's last equation -> fused Eqn
    singles = set()
    for G in groups:
        if len(G.eqns) + len(G.reductions) < 2 and not (
                G.reductions and _view_source(producer, G.reductions[0][0].ins[0])):
            singles.add(G.id)
            continue
        inputs, operands, seen = [], [], set()

        def add_input(x):
            if isinstance(x, Literal) and _scalar_bytes(x) is not None:
                return
            if isinstance(x, Var) and x in G.members or _key(x) in seen:
                return
            seen.add(_key(x))
            operands.append(x)
            src = _view_source(producer, x) if isinstance(x, Var) else None
            if src is not None and src[0] not in G.members and \
                    src[0] not in G.red_outs and len(src[1]) == len(G.shape):
                inputs.append(src)
            elif x.aval.shape == G.shape:
                inputs.append((x, _c_strides(G.shape), 0))
            else:
                inputs.append((x, _bcast_strides(x.aval.shape, G.shape), 0))

        for e in G.eqns:
            for x in e.ins:
                add_input(x)
        for e, _ in G.reductions:
            add_input(e.ins[0])
        outside = consumers_outside.get(G.id, set())
        outputs = [e.outs[0] for e in G.eqns if e.outs[0] in outside or e.outs[0] in out_set]
        spec = FusedSpec(G.shape, inputs, operands, list(G.eqns), outputs, list(G.reductions))
        fused_ins = [src for src, _, _ in inputs]
        outs = outputs + [e.outs[0] for e, _ in G.reductions]
        new_eqns[G.id] = Eqn(fused_op, {"kernel": spec}, fused_ins, outs)
    # order: the fused equations and the others, topologically, stable by position
    nodes = []
    pos = {}
    for i, e in enumerate(prog.eqns):
        G = grouped_eqn.get(id(e))
        if G is None or G.id in singles:
            nodes.append(("e", i, e))
        else:
            pos[G.id] = max(pos.get(G.id, -1), i)
    for gid, i in pos.items():
        nodes.append(("g", i, new_eqns[gid]))
    return Program(prog.in_vars, _toposort(nodes, prog.in_vars), prog.outs)


def _bcast_strides(src_shape, shape):
    """Element strides reading a C-contiguous ``src_shape`` broadcast to ``shape``."""
    lead = len(shape) - len(src_shape)
    c = _c_strides(src_shape)
    out = [0] * lead
    for d, (n, s) in enumerate(zip(src_shape, c)):
        out.append(0 if n == 1 and shape[lead + d] != 1 else s)
    return tuple(out)


def _toposort(nodes, in_vars):
    produced_by = {}
    for k, (_, i, e) in enumerate(nodes):
        for o in e.outs:
            produced_by[o] = k
    # equations run for an effect (debug.print) stay in program order among themselves: each
    # waits for the one before it
    after = {}
    prev = None
    for k in sorted(range(len(nodes)), key=lambda k: nodes[k][1]):
        if has_effects(nodes[k][2]):
            if prev is not None:
                after[k] = prev
            prev = k
    waiting = {}
    indeg = [0] * len(nodes)
    for k, (_, i, e) in enumerate(nodes):
        need = {produced_by[x] for x in e.ins if isinstance(x, Var) and x in produced_by
                and produced_by[x] != k}
        if k in after:
            need.add(after[k])
        indeg[k] = len(need)
        for n in need:
            waiting.setdefault(n, []).append(k)
    heap = [(nodes[k][1], k) for k in range(len(nodes)) if indeg[k] == 0]
    heapq.heapify(heap)
    out = []
    while heap:
        _, k = heapq.heappop(heap)
        out.append(nodes[k][2])
        for m in waiting.get(k, ()):
            indeg[m] -= 1
            if indeg[m] == 0:
                heapq.heappush(heap, (nodes[m][1], m))
    if len(out) != len(nodes):
        raise AssertionError("fusion made a cycle")    # a bug: _creates_cycle prevents it
    return out


# -- concatenations written in place --------------------------------------------------------------

def _unit_reshape_strides(src_shape, view, dst_strides):
    """Element strides over ``src_shape`` (a kernel's iteration shape) with which a value seen
    through ``view`` (a reshape that only adds or drops size-1 dims: same element order) lands
    in an array of strides ``dst_strides`` (the view's shape's); None for other views."""
    shape, strides, offset = view.params["shape"], view.params["strides"], view.params["offset"]
    if offset:
        return None
    big_src = [d for d in src_shape if d != 1]
    big_dst = [(i, d) for i, d in enumerate(shape) if d != 1]
    if big_src != [d for _, d in big_dst]:
        return None
    c = _c_strides(tuple(d for d in src_shape if d != 1))
    for (i, _), cs in zip(big_dst, c):
        if strides[i] != cs:
            return None
    it = iter(dst_strides[i] for i, _ in big_dst)
    return tuple(next(it) if d != 1 else 0 for d in src_shape)


def absorb_concat(prog: Program) -> Program:
    """A ``cat`` of values written by one fused kernel (each directly or through a view that
    only adds or drops size-1 dims, and used nowhere else) is written by that kernel in place:
    each value goes straight into its part of the concatenation (no views, no copy)."""
    producer, uses = {}, {}
    for e in prog.eqns:
        for o in e.outs:
            producer[o] = e
        for x in e.ins:
            if isinstance(x, Var):
                uses[x] = uses.get(x, 0) + 1
    for x in prog.outs:
        if isinstance(x, Var):
            uses[x] = uses.get(x, 0) + 2
    replaced = {}           # id(fused eqn) -> new eqn
    drop = set()            # ids of equations made dead
    for e in prog.eqns:
        if e.prim is not P.cat_p:
            continue
        out = e.outs[0]
        axis = e.params["axis"]
        c = _c_strides(out.aval.shape)
        fused, placed, pos = None, {}, 0
        for x in e.ins:
            size = x.aval.shape[axis] if isinstance(x, Var) else -1
            v, view = x, None
            p = producer.get(x) if isinstance(x, Var) else None
            if p is not None and p.prim is view_op_ref():
                view, v = p, p.ins[0]
            f = producer.get(v) if isinstance(v, Var) else None
            if f is None or f.prim is not fused_op or uses.get(x) != 1 or \
                    (view is not None and uses.get(v) != 1):
                fused = None
                break
            f = replaced.get(id(f), f)
            spec = f.params["kernel"]
            if fused is None:
                fused = f
            if f is not fused or v not in spec.outputs or v in spec.placement or v in placed:
                fused = None
                break
            strides = _unit_reshape_strides(spec.shape, view, c) if view is not None else \
                (c if len(v.aval.shape) == len(out.aval.shape) else None)
            if strides is None:
                fused = None
                break
            placed[v] = (strides, pos * c[axis], view)
            pos += size
        if fused is None:
            continue
        spec = fused.params["kernel"]
        new = FusedSpec(spec.shape, spec.inputs, spec.operands, spec.eqns, spec.outputs,
                        spec.reductions)
        new.placement = dict(spec.placement)
        for v, (strides, offset, view) in placed.items():
            new.placement[v] = (out, strides, offset)
            if view is not None:
                drop.add(id(view))
        drop.add(id(e))
        neq = Eqn(fused_op, {"kernel": new}, fused.ins, new.arrays())
        replaced[id(fused)] = neq
        # the first fused kernel stays where it was; keep the map pointing at the newest
        for k, v in list(replaced.items()):
            if v is fused:
                replaced[k] = neq
    if not drop:
        return prog
    eqns = []
    for e in prog.eqns:
        if id(e) in drop:
            continue
        eqns.append(replaced.get(id(e), e))
    return Program(prog.in_vars, eqns, prog.outs)


def view_op_ref():
    from nx_rune.compiler.passes.views import view_op
    return view_op
