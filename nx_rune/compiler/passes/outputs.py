"""What memory each output of a traced program has when the function runs eagerly.

nx_rune's arrays are mutable, so a compiled function must return outputs that share memory
exactly where the eager function's do: a write through a result reaches an argument (or
another result) under ``jit`` only when it does eagerly.  Eagerly, the movement primitives
return views of their operand (``reshape`` where the strides allow, ``expand``, ``permute``,
``shrink``, ``flip``, ``as_strided``, ``pad``), ``stop_gradient`` returns its operand and
``contiguous`` returns it when it is already contiguous; every other primitive returns new
memory.

``eager_views(prog)`` follows each output back through those primitives to its *root*: an
input of the program, or a value computed (or a constant).  The executable computes the
computed roots (each once, in new memory that nothing else holds:
``compile_program(own_outputs=True)``) and then makes each output from its root as eager code
does (``rebuild``): the argument tensor itself, or a view of the root's memory.

The chain of movements is composed once, when the program is compiled, into one strided map
from the output's index to the root's (``ViewMap``): per output axis a step in each root axis
(``index`` maps, valid for a root of any strides), or a step in the root's C order (``flat``
maps, for merging reshapes and ``as_strided``: valid for a C-contiguous root).  A slice with a
step, which the front end traces as ``pad``/``reshape``/``shrink`` (``x[::2]`` of an odd
length), composes to the plain strided view the eager slice is.  A chain that reads padding,
or a root that is itself padded or laid out so that the map does not apply, runs the
primitives' implementations instead, as the eager front end does.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune._kernels.fusion import view_of as _view_of
from nx_rune.compiler.ir import Program, Var
from nx_rune.compiler.passes.fusion import _c_strides
from nx_rune.tensor import Tensor as _Tensor

__all__ = ["EAGER_VIEWS", "eager_views", "written_views", "ViewMap", "compose_views",
           "rebuild"]

# primitives whose eager implementation returns its (first) operand's memory, or may
EAGER_VIEWS = {P.reshape_p, P.expand_p, P.permute_p, P.shrink_p, P.flip_p, P.as_strided_p,
               P.pad_p, P.stop_gradient_p, P.contiguous_p}


def eager_views(prog: Program):
    """``(outputs, roots)``: ``roots`` are the distinct computed roots of ``prog``'s outputs
    (Vars or Literals, in order of first use); ``outputs`` has one ``(source, chain, map,
    steps)`` per output: ``source`` ``("in", i)`` for input i or ``("val", j)`` for
    ``roots[j]``, ``chain`` the ``(primitive, params)`` to apply to it, first to last, ``map``
    their composition (a ViewMap, or None), ``steps`` the traced value each step gives (two
    outputs through the same one share it, as eagerly: see ``rebuild``)."""
    producer = {}
    for e in prog.eqns:
        if e.prim in EAGER_VIEWS and len(e.outs) == 1:
            producer[e.outs[0]] = e
    position = {v: i for i, v in enumerate(prog.in_vars)}
    roots, index, outputs = [], {}, []
    for x in prog.outs:
        chain, steps = [], []
        while isinstance(x, Var) and x in producer:
            e = producer[x]
            if e.prim is not P.stop_gradient_p:     # eagerly the operand itself
                chain.append((e.prim, e.params))
                steps.append(x)
            x = e.ins[0]
        chain.reverse()
        steps.reverse()
        vmap = compose_views(x.aval.shape, chain) if chain else None
        if isinstance(x, Var) and x in position:
            outputs.append((("in", position[x]), tuple(chain), vmap, tuple(steps)))
            continue
        key = id(x.value) if not isinstance(x, Var) else x
        j = index.get(key)
        if j is None:
            j = index[key] = len(roots)
            roots.append(x)
        outputs.append((("val", j), tuple(chain), vmap, tuple(steps)))
    return outputs, roots


def written_views(prog: Program, n_out, finals):
    """Which of the first ``n_out`` outputs of ``prog`` are, eagerly, an argument that the
    function wrote in place, or a view of it: ``finals`` maps the final value (a Var) of each
    written argument to that argument's input position.  Returns ``[(i, j, chain, map)]``:
    output ``i`` is ``chain`` (``map`` composed, or None) applied to written input ``j``.
    After the write-back that argument holds that final value, so the output is made from it
    as eager code makes it (the argument itself, or a view of it), not as new memory."""
    if not finals:
        return []
    producer = {}
    for e in prog.eqns:
        if e.prim in EAGER_VIEWS and len(e.outs) == 1:
            producer[e.outs[0]] = e
    found = []
    for i, x in enumerate(prog.outs[:n_out]):
        chain = []
        # stop at the first final value: it may itself be a movement of a computed value (a
        # 0-d argument written through ``x[None]`` ends as a reshape)
        while isinstance(x, Var) and x in producer and x not in finals:
            e = producer[x]
            if e.prim is not P.stop_gradient_p:
                chain.append((e.prim, e.params))
            x = e.ins[0]
        if isinstance(x, Var) and x in finals:
            chain.reverse()
            vmap = compose_views(x.aval.shape, chain) if chain else None
            found.append((i, finals[x], tuple(chain), vmap))
    return found


# -- composing a chain of movements into one strided map -------------------------------------------

def _add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def _scale(a, k):
    return tuple(x * k for x in a)


class ViewMap:
    """The composition of a chain of movements: output element ``i`` is the root's element at
    ``offset + sum(i[d] * strides[d])``, where offset and strides are vectors over the root's
    axes (``kind == "index"``) or over its C order (``"flat"``, one entry)."""
    __slots__ = ("kind", "shape", "strides", "offset", "_bytes")

    def __init__(self, kind, shape, strides, offset):
        self.kind, self.shape, self.strides, self.offset = kind, shape, strides, offset
        self._bytes = {}    # (root's byte strides, itemsize) -> (byte strides, offset) or False

    def array_view(self, arr):
        """The output as a view of ``arr`` (the root's values, any strides), or None where
        this map needs a C-contiguous root and ``arr`` is not."""
        key = (arr.strides, arr.itemsize)
        spec = self._bytes.get(key)
        if spec is None:
            spec = self._bytes[key] = self._byte_map(arr)
        return _view_of(arr, self.shape, spec[0], spec[1]) if spec else None

    def _byte_map(self, arr):
        """(byte strides, byte offset) over an array of ``arr``'s strides, or False."""
        item = arr.itemsize
        if self.kind == "flat":
            if not arr.flags.c_contiguous:
                return False
            return tuple(s[0] * item for s in self.strides), self.offset[0] * item
        rs = arr.strides
        return (tuple(sum(a * b for a, b in zip(vec, rs)) for vec in self.strides),
                sum(a * b for a, b in zip(self.offset, rs)))


def compose_views(shape, chain):
    """The ViewMap of ``chain`` applied to a root of ``shape`` (an index map when one exists,
    else a flat one), or None (a copy, padding read, ``contiguous``, an empty result)."""
    return _compose(shape, chain, "index") or _compose(shape, chain, "flat")


def _reshape(shape, strides, new_shape, zero):
    """Strides (vectors) of a no-copy reshape, NumPy's algorithm, or None."""
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new_nz = [n for n in new_shape if n != 1]
    out_nz = []
    oi = ni = 0
    while oi < len(old) and ni < len(new_nz):
        op, np_ = old[oi][0], new_nz[ni]
        oj, nj = oi + 1, ni + 1
        while op != np_:
            if np_ < op:
                np_ *= new_nz[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != _scale(old[k + 1][1], old[k + 1][0]):
                return None
        st = old[oj - 1][1]
        chunk = []
        for k in range(nj - 1, ni - 1, -1):
            chunk.append(st)
            st = _scale(st, new_nz[k])
        out_nz.extend(reversed(chunk))
        oi, ni = oj, nj
    it = iter(out_nz)
    return [zero if n == 1 else next(it) for n in new_shape]


def _compose(root_shape, chain, kind):
    root_shape = tuple(root_shape)
    n = len(root_shape)
    if kind == "index":
        r = n
        strides = [tuple(int(k == d) for k in range(n)) for d in range(n)]
    else:
        r = 1
        strides = [(c,) for c in _c_strides(root_shape)]
    zero = (0,) * r
    offset = zero
    shape = list(root_shape)
    if 0 in shape:
        return None
    chain = list(chain)
    at = 0
    while at < len(chain):
        prim, p = chain[at]
        at += 1
        step = _step_slice(shape, chain, at - 1) if prim is P.pad_p else None
        if step is not None:
            # x[::k] along an axis, as the front end traces it: a stride k times longer
            d, k, m, used = step
            strides[d] = _scale(strides[d], k)
            shape[d] = m
            at += used
            continue
        if prim is P.permute_p:
            axes = tuple(p["axes"])
            shape = [shape[a] for a in axes]
            strides = [strides[a] for a in axes]
        elif prim is P.flip_p:
            for a in p["axes"]:
                offset = _add(offset, _scale(strides[a], shape[a] - 1))
                strides[a] = _scale(strides[a], -1)
        elif prim is P.shrink_p:
            for d, (lo, hi) in enumerate(p["limits"]):
                offset = _add(offset, _scale(strides[d], lo))
                shape[d] = hi - lo
        elif prim is P.pad_p:
            if kind != "index":
                return None     # C order has no room for padding: checked per root axis
            for d, (before, after) in enumerate(p["config"]):
                if (before or after) and not any(strides[d]):
                    # a broadcast axis: its padding would map onto the element itself, and
                    # the bounds check below cannot see it (grad of ``sum(x[1:])``)
                    return None
                offset = _add(offset, _scale(strides[d], -before))
                shape[d] += before + after
        elif prim is P.expand_p:
            new = tuple(p["shape"])
            lead = len(new) - len(shape)
            strides = [zero] * lead + [zero if shape[d] == 1 and new[lead + d] != 1
                                       else strides[d] for d in range(len(shape))]
            shape = list(new)
        elif prim is P.reshape_p:
            new = tuple(p["shape"])
            st = _reshape(shape, strides, new, zero)
            if st is None:
                return None
            shape, strides = list(new), st
        elif prim is P.as_strided_p:
            # as_strided addresses its operand's elements in C order
            if kind != "flat" or any(s != (c,) for s, c, m in
                                     zip(strides, _c_strides(shape), shape) if m != 1):
                return None
            shape = list(p["shape"])
            strides = [(int(s),) for s in p["strides"]]
            offset = _add(offset, (int(p["offset"]),))
        else:
            return None         # contiguous: a copy or not by the root's layout
        if 0 in shape:
            return None
    # every element of the output must be one of the root's (no padding read)
    bounds = root_shape if kind == "index" else (_prod(root_shape),)
    for k, size in enumerate(bounds):
        lo = hi = offset[k]
        for d, s in enumerate(strides):
            step = s[k] * (shape[d] - 1)
            if step < 0:
                lo += step
            else:
                hi += step
        if lo < 0 or hi >= size:
            return None
    return ViewMap(kind, tuple(shape), tuple(strides), offset)


def _step_slice(shape, chain, at):
    """Where ``chain[at:]`` starts with the front end's strided slice ``x[::k]`` along one
    axis d (pad its end to m * k, reshape the axis to (m, k), keep index 0 of the k axis,
    reshape it away), ``(d, k, m, 3)``: the steps it spans after the pad; else None.  Composed
    as a step it needs no padding read, so the flat (C order) maps can hold it too."""
    if at + 3 >= len(chain):
        return None
    (_, pad), (p1, r1), (p2, sh), (p3, r2) = chain[at:at + 4]
    if p1 is not P.reshape_p or p2 is not P.shrink_p or p3 is not P.reshape_p:
        return None
    config = pad["config"]
    padded = [d for d, (lo, hi) in enumerate(config) if lo or hi]
    if len(padded) != 1 or config[padded[0]][0] != 0:
        return None
    d = padded[0]
    n, extra = shape[d], config[d][1]
    split = tuple(r1["shape"])
    if len(split) != len(shape) + 1 or split[:d] != tuple(shape[:d]) \
            or split[d + 2:] != tuple(shape[d + 1:]):
        return None
    m, k = split[d], split[d + 1]
    if m * k != n + extra or (m - 1) * k >= n:
        return None
    want = [(0, size) for size in split]
    want[d + 1] = (0, 1)
    if tuple(tuple(x) for x in sh["limits"]) != tuple(want):
        return None
    if tuple(r2["shape"]) != tuple(shape[:d]) + (m,) + tuple(shape[d + 1:]):
        return None
    return d, k, m, 3


def _prod(shape):
    out = 1
    for d in shape:
        out *= d
    return out


def rebuild(root, chain, vmap, steps=None, made=None):
    """An output made from its root tensor (an argument, or a computed value) as eager code
    makes it: the root itself for an empty chain, a view of its memory by ``vmap`` (writeable
    unless the root is read-only or the view broadcasts, as a tensor's views), else the
    chain's implementations (a padded root or view, a copy where the strides need one).
    ``steps``/``made``: the traced value of each step, and the tensors the other outputs of
    the call already made for them: an output through a step another one went through
    continues from that tensor (eagerly both saw the one copy a reshape made), not from a
    copy of its own."""
    if not chain:
        return root
    if vmap is not None:
        view = root._view
        if view is None or view.mask is None:
            out = vmap.array_view(root._np())
            if out is not None:
                return _Tensor._wrap(out)
    for k, (prim, params) in enumerate(chain):
        known = made.get(steps[k]) if made is not None else None
        if known is not None:
            root = known
            continue
        root = prim.impl(root, **params)
        if made is not None:
            made[steps[k]] = root
    return root

