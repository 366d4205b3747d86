"""The executor: a Program compiled to one generated Python function over NumPy arrays.

``compile_program(prog)`` returns a function ``run(*arrays) -> tuple of arrays``.  Its body is
generated source, one line per equation (a NumPy ufunc with ``out=``, a view, a fused kernel's
``run``, a typed kernel, or a primitive's implementation), compiled once with ``exec``: running
it costs no interpreter dispatch, no ``bind``, no tracing, no per-op dictionary lookups.

Values are ndarrays.  Movement ops are NumPy views (no data moves), a chain of them folded by
``passes.fold_views`` is one strided view.  ``out=`` buffers come from the buffer-reuse plan
(``passes.plan_buffers``): an operation writes into the memory of an operand that dies there when
shapes and dtypes agree.  Primitives without an emitter run their implementation on Tensors
wrapped around the arrays (still no ``bind``).  A program's outputs are new memory of their
own (``own_outputs``): the optimizations may make a result an input, a view or another result
(``x * 1.0`` is x), which is then copied, as the eager function's result is new memory.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from nx_rune import primitives as P
from nx_rune.compiler import split_matmul
from nx_rune.compiler.ir import Literal, Program
from nx_rune.primitives import Primitive
from nx_rune.tensor import Tensor

__all__ = ["compile_program", "EMITTERS", "UFUNCS", "to_tensor", "as_array", "ufunc_for"]

# elementwise primitives that are one NumPy ufunc (for the dtypes ``ufunc_for`` accepts)
UFUNCS = {
    "neg": np.negative, "log2": np.log2, "exp2": np.exp2, "sin": np.sin, "sqrt": np.sqrt,
    "recip": np.reciprocal, "exp": np.exp, "log": np.log, "cos": np.cos, "tanh": np.tanh,
    "log1p": np.log1p, "expm1": np.expm1,
    "add": np.add, "mul": np.multiply, "fdiv": np.true_divide, "max": np.maximum,
    "cmplt": np.less, "cmpne": np.not_equal, "xor": np.bitwise_xor, "or": np.bitwise_or,
    "and": np.bitwise_and, "pow": np.power, "idiv": np.floor_divide, "mod": np.remainder,
}
# the other elementwise primitives implemented by one NumPy ufunc (backend._unary/_binary)
UFUNCS.update({
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "log10": np.log10, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "floor": np.floor,
    "ceil": np.ceil, "rint": np.rint, "trunc": np.trunc, "conj": np.conjugate,
    "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign,
    "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2, "nextafter": np.nextafter,
})
UFUNCS["sub"] = np.subtract     # the sub primitive (backend._binary): one ufunc, as add
# the predicates (backend._unary: one ufunc each): logsumexp's guard on its max, isfinite then
# where, joins the kernel around it instead of two NumPy calls of their own
UFUNCS.update({"isfinite": np.isfinite, "isnan": np.isnan, "isinf": np.isinf,
               "signbit": np.signbit})
# ufuncs whose implementation checks integer operands (division by zero, negative powers)
_FLOAT_ONLY = {"pow", "idiv", "mod"}
# ufuncs whose implementation handles complex operands itself (expm1: C99's special values)
_REAL_ONLY = {"expm1"}


def ufunc_for(prim, in_dtypes):
    """The NumPy ufunc computing ``prim`` on operands of ``in_dtypes`` exactly as its
    implementation does, or None."""
    uf = UFUNCS.get(prim.name) if isinstance(prim, Primitive) else None
    if uf is None or P.PRIMITIVES.get(prim.name) is not prim:
        return None
    if prim.name in _FLOAT_ONLY and any(np.dtype(d).kind not in "fc" for d in in_dtypes):
        return None
    if prim.name in _REAL_ONLY and any(np.dtype(d).kind == "c" for d in in_dtypes):
        return None
    return uf


def as_array(x) -> np.ndarray:
    """An ndarray of a Tensor's values (zero-copy), or of a NumPy scalar."""
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x)


def to_tensor(arr) -> Tensor:
    """A Tensor of ``arr`` (an ndarray or NumPy scalar) without a copy when it is C-contiguous
    and writeable-owned; a copy otherwise."""
    if not isinstance(arr, np.ndarray):
        return Tensor._wrap(np.asarray(arr))
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    return Tensor._wrap(arr)


def _tensor_arg(x):
    if isinstance(x, np.ndarray):
        if x.flags.c_contiguous:
            return Tensor._wrap(x)
        if x.size and all(s == 0 for s in x.strides):
            return Tensor._broadcast_scalar(x.flat[0].item(), x.dtype, x.shape)
        return Tensor._wrap(np.ascontiguousarray(x))
    return Tensor._wrap(np.asarray(x))


def impl_caller(prim, params):
    """``f(*arrays) -> array`` running ``prim``'s implementation on Tensors of the arrays."""
    impl = prim.impl

    def call(*xs):
        return impl(*[_tensor_arg(x) for x in xs], **params)._np()
    call.__name__ = f"impl_{prim.name}"
    return call


# -- code generation --------------------------------------------------------------------------

# The generated functions' module: NumPy attributes its IEEE warnings (overflow, invalid,
# divide by zero) to the frame that called the ufunc, a generated one here; these are silenced
# as in eager mode (nx_rune._kernels.quiet), so that jit(f) warns where f does: never.  A filter
# the user puts in front makes them errors: the Executable then runs the call again under
# np.errstate(all="ignore").
RUN_MODULE = "nx_rune.compiler.jit_run"
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"nx_rune\.compiler\.jit_run$")

class Codegen:
    """Names, constants and lines of one generated function.

    What each name holds, for the outputs' ownership (see ``compile_program``):
    ``fresh_arrays``: new C-contiguous arrays of this call (ufunc, matmul and fused-kernel
    results); ``new_memory``: new memory of any layout (those, and ``astype``, ``np.where``,
    ``np.concatenate``, reductions: possibly NumPy scalars); ``base``: name -> the name whose
    memory a view or alias sees (movement views, ``copy``/``contiguous`` run as aliases); a
    name in none of these (an implementation's or a ``lax`` loop's result) may be anything,
    its operands included."""

    def __init__(self):
        self.ns = {"np": np, "_arr": as_array, "__name__": RUN_MODULE}
        self.lines = []
        self.names = {}
        self.fresh_arrays = set()   # names holding new C-contiguous arrays of this call
        self.new_memory = set()     # names holding new memory of this call (any layout)
        self.base = {}              # name -> the name whose memory it sees
        self.inputs = set()         # names of the program's inputs
        self.literals = set()       # names of constants
        self._n = 0

    def const(self, value, hint="k"):
        name = f"_{hint}{len(self.ns)}"
        self.ns[name] = value
        return name

    def fresh(self, hint="v"):
        self._n += 1
        return f"{hint}{self._n}"

    def name(self, x):
        if isinstance(x, Literal):
            n = self.names.get(("lit", id(x.value)))
            if n is None:
                # read-only: no result of the program can give a way to write into it
                arr = x.array().view()
                arr.flags.writeable = False
                n = self.names[("lit", id(x.value))] = self.const(arr, "c")
                self.literals.add(n)
            return n
        return self.names[x]

    def bind_out(self, var, name=None):
        name = name or self.fresh()
        self.names[var] = name
        return name

    def emit(self, line):
        self.lines.append(line)

    def new_array(self, name, c_contiguous=True):
        """``name`` holds new memory of this call (C-contiguous: an ndarray, never a scalar)."""
        self.new_memory.add(name)
        if c_contiguous:
            self.fresh_arrays.add(name)

    def view_of(self, name, src):
        """``name`` sees the memory of ``src`` (a view, or the same array)."""
        self.base[name] = self.base.get(src, src)

    def c_ordered(self, x):
        """Whether operand ``x`` (a Var or Literal) is known, when the code runs, to be
        C-contiguous or a broadcast of memory in C order (its strides where it does not
        broadcast decreasing): operands that all are give NumPy's results C order."""
        if isinstance(x, Literal):
            arr = x.array()
            steps = [s for n, s in zip(arr.shape, arr.strides) if n > 1 and s != 0]
            return all(a > b > 0 for a, b in zip(steps, steps[1:])) and \
                all(s > 0 for s in steps)
        return self.names.get(x) in self.fresh_arrays


def _emit_ufunc(cg, e, ins, plan):
    uf = ufunc_for(e.prim, [x.aval.dtype for x in e.ins])
    if uf is None:
        return False
    f = cg.const(uf, "u")
    buf = plan.get(e.outs[0]) if plan else None
    shape = e.outs[0].aval.shape
    # NumPy lays a result out like its operands (order "K": a transposed operand gives a
    # Fortran-ordered result); results are made C-contiguous, the layout the buffer plan and
    # the fused kernels count on, unless every operand is known to be
    order = "" if len(shape) <= 1 or all(cg.c_ordered(x) for x in e.ins) else \
        ", order='C'"
    out = cg.bind_out(e.outs[0])
    if buf is not None:
        cg.emit(f"{out} = {f}({', '.join(ins)}, out={cg.name(buf)})")
    else:
        cg.emit(f"{out} = {f}({', '.join(ins)}{order})")
    if shape:
        cg.new_array(out)
    else:
        cg.new_memory.add(out)           # a NumPy scalar
    return True


def _emit_reduce(np_fn):
    def emit(cg, e, ins, plan):
        x = e.ins[0].aval
        axes = tuple(e.params["axes"])
        if x.size == 0 and np_fn is np.max and (not axes or any(x.shape[i] == 0
                                                                for i in axes)):
            return False            # the implementation raises the error
        f = cg.const(np_fn, "r")
        out = cg.bind_out(e.outs[0])
        kw = f"axis={axes!r}, keepdims={bool(e.params['keepdims'])}"
        if np_fn is not np.max:
            kw += f", dtype={cg.const(x.dtype, 'd')}"
        cg.emit(f"{out} = {f}({ins[0]}, {kw})")
        cg.new_memory.add(out)
        return True
    return emit


def _emit_alias(cg, e, ins, plan):
    # copy and contiguous too: nothing in a program writes into memory that a live value
    # sees (passes.plan_buffers), so their values are their operand's; an output that is
    # one gets its own memory at the end (compile_program's ``own_outputs``)
    cg.names[e.outs[0]] = ins[-1] if e.prim is P.assign_p else ins[0]
    return True


def _emit_reshape(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    cg.emit(f"{out} = {ins[0]}.reshape({e.outs[0].aval.shape!r})")
    cg.view_of(out, ins[0])
    return True


def _emit_permute(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    cg.emit(f"{out} = {ins[0]}.transpose({tuple(e.params['axes'])!r})")
    cg.view_of(out, ins[0])
    return True


def _emit_expand(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    f = cg.const(np.broadcast_to, "b")
    cg.emit(f"{out} = {f}({ins[0]}, {e.outs[0].aval.shape!r})")
    cg.view_of(out, ins[0])
    return True


def _emit_shrink(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    idx = tuple(slice(a, b) for a, b in e.params["limits"])
    cg.emit(f"{out} = {ins[0]}[{cg.const(idx, 'i')}]")
    cg.view_of(out, ins[0])
    return True


def _emit_flip(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    axes = set(e.params["axes"])
    idx = tuple(slice(None, None, -1) if i in axes else slice(None)
                for i in range(e.ins[0].aval.ndim))
    cg.emit(f"{out} = {ins[0]}[{cg.const(idx, 'i')}]")
    cg.view_of(out, ins[0])
    return True


def _emit_matmul(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    a, b = (v.aval for v in e.ins)
    big = (a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype
           and split_matmul.worth_routing(a.shape[0], a.shape[1], b.shape[1], a.dtype))
    f = cg.const(split_matmul.matmul if big else np.matmul, "m")
    buf = plan.get(e.outs[0]) if plan else None
    if buf is not None:
        cg.emit(f"{out} = {f}({ins[0]}, {ins[1]}, out={cg.name(buf)})")
    else:
        cg.emit(f"{out} = {f}({ins[0]}, {ins[1]})")
    if e.outs[0].aval.shape:
        cg.new_array(out)
    else:
        cg.new_memory.add(out)
    return True


def _emit_cast(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    src = e.ins[0].aval.dtype
    dst = np.dtype(e.params["dtype"])
    if src.kind == "c" and dst.kind != "c":
        return False    # the implementation shows NumPy's ComplexWarning
    cg.emit(f"{out} = {ins[0]}.astype({cg.const(dst, 'd')})")
    cg.new_memory.add(out)
    return True


def _emit_where(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    cg.emit(f"{out} = np.where({', '.join(ins)})")
    cg.new_memory.add(out)
    return True


def _emit_cat(cg, e, ins, plan):
    out = cg.bind_out(e.outs[0])
    cg.emit(f"{out} = np.concatenate(({', '.join(ins)},), axis={e.params['axis']})")
    cg.new_memory.add(out)
    return True


EMITTERS = {
    P.reduce_sum_p: _emit_reduce(np.sum), P.reduce_prod_p: _emit_reduce(np.prod),
    P.reduce_max_p: _emit_reduce(np.max),
    P.contiguous_p: _emit_alias, P.copy_p: _emit_alias, P.assign_p: _emit_alias,
    P.reshape_p: _emit_reshape, P.permute_p: _emit_permute, P.expand_p: _emit_expand,
    P.shrink_p: _emit_shrink, P.flip_p: _emit_flip, P.matmul_p: _emit_matmul,
    P.cast_p: _emit_cast, P.where_p: _emit_where, P.cat_p: _emit_cat,
}


def _emit_generic(cg, e, ins, plan):
    f = cg.const(impl_caller(e.prim, e.params), "p")
    out = cg.bind_out(e.outs[0])
    cg.emit(f"{out} = {f}({', '.join(ins)})")


def emit_eqn(cg, e, plan=None):
    ins = [cg.name(x) for x in e.ins]
    prim = e.prim
    if isinstance(prim, Primitive):
        em = EMITTERS.get(prim)
        if em is not None and em(cg, e, ins, plan):
            return
        if _emit_ufunc(cg, e, ins, plan):
            return
        _emit_generic(cg, e, ins, plan)
        return
    # control flow and the passes' internal ops know how to emit themselves
    prim.emit(cg, e, ins, plan)


def _own_copy(x):
    """A new C-contiguous, writeable array of ``x``'s values (0-d for a NumPy scalar)."""
    return np.array(x, order="C")


def _owned(x, others):
    """``x`` when it is a writeable array sharing no memory with ``others`` (the program's
    inputs, its other outputs), else a copy of it.  ``x`` may be one of ``others`` itself (a
    ``lax`` loop of no step returns its operand's array; eagerly its result is new memory)."""
    if x.__class__ is np.ndarray and x.flags.writeable:
        for o in others:
            if np.may_share_memory(x, o):
                break
        else:
            return x
    return _own_copy(x)


def compile_program(prog: Program, plan=None, name="run", tensors=False, own_outputs=False):
    """``run(*arrays) -> tuple of arrays`` for ``prog`` (``plan``: var -> var whose buffer
    receives its value, from ``passes.plan_buffers``); with ``tensors``, ``run(*tensors) ->
    tuple of Tensors`` (the conversions generated inline).

    With ``own_outputs`` every output is new, writeable memory that no input, constant or
    other output shares (what an eager function computing it returns): an output that the
    optimizations made an input, a view, or the same value as another output (``x * 1.0``,
    ``copy(x)``, CSE of two equal results) is copied; one whose memory the compiler cannot
    know (an implementation's or a ``lax`` loop's result) is checked when the code runs."""
    cg = Codegen()
    args = []
    prologue = []
    for i, v in enumerate(prog.in_vars):
        name_i = cg.bind_out(v, f"a{i}")
        cg.inputs.add(name_i)
        if tensors:
            args.append(f"t{i}")
            prologue.append(f"{name_i} = t{i}._np()")
        else:
            args.append(name_i)
    cg.lines.extend(prologue)
    for e in prog.eqns:
        emit_eqn(cg, e, plan)
    outs = []
    wrap = cg.const(Tensor._wrap, "W")
    conv = cg.const(to_tensor, "T")
    names: list[Any] = [None if isinstance(x, Literal) else cg.name(x) for x in prog.outs]
    seen = set()
    for k, x in enumerate(prog.outs):
        if isinstance(x, Literal):
            # a fresh copy each call: returned constants must not share memory with the program
            o = f"{cg.name(x)}.copy()"
            outs.append(f"{conv}({o})" if tensors else o)
            continue
        o = names[k]
        if own_outputs:
            base = cg.base.get(o, o)
            if o in cg.new_memory and base == o and o not in seen:
                pass                    # a result of this call that only this output holds
            elif (base in cg.inputs or base in cg.literals or base in cg.new_memory
                  or o in seen):
                # an output that an earlier one already returns (``(x * 1.0, x)``) is a copy
                o = f"{cg.const(_own_copy, 'C')}({o})"
            else:
                others = sorted(cg.inputs) + [n for n in names if n is not None and n != o]
                o = f"{cg.const(_owned, 'O')}({o}, ({''.join(n + ', ' for n in others)}))"
            seen.add(names[k])
            if tensors:
                o = f"{wrap}({o})" if o in cg.fresh_arrays or o != names[k] else f"{conv}({o})"
        elif tensors:
            o = f"{wrap}({o})" if o in cg.fresh_arrays else f"{conv}({o})"
        outs.append(o)
    body = "\n".join("    " + line for line in cg.lines) or "    pass"
    src = (f"def {name}({', '.join(args)}):\n{body}\n"
           f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})\n")
    code = compile(src, f"<nx_rune.jit {name}>", "exec")
    exec(code, cg.ns)
    fn = cg.ns[name]
    fn.source = src
    return fn
