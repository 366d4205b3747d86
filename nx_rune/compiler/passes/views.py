"""Folding chains of movement ops into one strided view.

Every movement primitive whose result strides can express (``reshape`` where the layout allows,
``expand``, ``permute``, ``shrink``, ``flip``, ``as_strided``) is composed with the movements
before it, back to the chain's source (a value the program computes or receives: C-contiguous
at run time), with the kernels' View algebra.  Each such op becomes one equation
``view[shape strides offset] source`` (strides and offset in elements of the source), so a chain
of any length costs one view at run time, and the fusion pass reads through it for free.  A
reshape that needs a copy (a reshape of a transposed view), ``pad`` (a masked view) and
movements of literals (folded by ``fold_constants``) are left alone.
"""
from __future__ import annotations

from nx_rune import primitives as P
from nx_rune._kernels.view import View
from nx_rune.compiler.ir import Eqn, InternalOp, Program, Var

__all__ = ["fold_views", "ViewOp", "view_op"]


class ViewOp(InternalOp):
    """``view[shape strides offset] x``: elements of C-contiguous x seen through strides
    (elements) from an offset (elements)."""
    __slots__ = ()
    pure = True

    def emit(self, cg, e, ins, plan):
        from nx_rune._kernels.fusion import strided_view
        p = e.params
        item = e.ins[0].aval.dtype.itemsize
        f = cg.const(strided_view, "sv")
        out = cg.bind_out(e.outs[0])
        strides = tuple(s * item for s in p["strides"])
        cg.emit(f"{out} = {f}({ins[0]}, {p['shape']!r}, {strides!r}, {p['offset'] * item})")
        cg.view_of(out, ins[0])


view_op = ViewOp("view")
_MOVES = {P.reshape_p, P.expand_p, P.permute_p, P.shrink_p, P.flip_p, P.as_strided_p}


def _apply(v, e):
    prim, p = e.prim, e.params
    if prim is P.reshape_p:
        return v.reshape(e.outs[0].aval.shape)
    if prim is P.expand_p:
        return v.expand(tuple(p["shape"]))
    if prim is P.permute_p:
        return v.permute(tuple(p["axes"]))
    if prim is P.shrink_p:
        return v.shrink(tuple(tuple(x) for x in p["limits"]))
    if prim is P.flip_p:
        return v.flip(tuple(p["axes"]))
    if prim is P.as_strided_p:
        # as_strided addresses its operand's elements in C order: composable only when the
        # operand is itself C-contiguous
        if not v.is_contiguous:
            return None
        return View(tuple(p["shape"]), tuple(p["strides"]), v.offset + p["offset"])
    return None


def fold_views(prog: Program) -> Program:
    """``prog`` with movement chains replaced by single ``view`` equations (see module doc)."""
    chain = {}      # var -> (source var, View of the source)
    eqns = []
    changed = False
    for e in prog.eqns:
        if e.prim in _MOVES and isinstance(e.ins[0], Var):
            x = e.ins[0]
            src, v = chain.get(x, (x, None))
            if v is None:
                v = View.contiguous(x.aval.shape)
            try:
                nv = _apply(v, e)
            except (ValueError, TypeError):
                nv = None
            if nv is not None and nv.mask is None:
                out = e.outs[0]
                chain[out] = (src, nv)
                eqns.append(Eqn(view_op, {"shape": tuple(nv.shape),
                                          "strides": tuple(nv.strides),
                                          "offset": int(nv.offset)}, [src], [out]))
                changed = True
                continue
        eqns.append(e)
    if not changed:
        return prog
    return Program(prog.in_vars, eqns, prog.outs)
