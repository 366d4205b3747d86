# cython: binding=True, boundscheck=True, wraparound=True
"""The reverse-mode tape's two hot loops, in C: recording one op (``Tape.process``) and the
backward pass (``Tape.backward``); and forward mode's one (``JVPInterpreter.process``).  See
nx_rune/autodiff/core.py for the interpreters' design; this module holds only these loops
(every op under ``grad`` runs the first, every tape entry the second, every op under ``jvp`` --
a Hessian-vector product's backward pass too -- the third, and their Python frames and list
handling were most of an op's cost there).

The names they use (the tracer classes, the rule tables, ...) are handed over by core.py when
it loads (``configure``): core imports this module, so this module cannot import core.
"""
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF

cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    object PyType_GenericAlloc(object tp, Py_ssize_t nitems)

from types import MemberDescriptorType, SimpleNamespace

from nx_rune.tensor import Tensor, call_impl as _tensor_call_impl
from nx_rune.tensor cimport _call_impl as _c_call_impl, _scalar_tensor as _c_scalar_tensor
from nx_rune.tensor cimport _dtype_of, _shape_of

cdef object Tracer = None, TapeTracer = None, leaked = None, bind_at = None
cdef set NONDIFF = None
cdef object INEXACT = None
cdef object VJP_RULES = None, VJPRule = None, user_vjp = None, Proj = None
cdef object add_p = None, bind = None, call_impl = None
cdef object Steps = None, scalar = None, interp_var = None
# backend.views.add_window: a shrink's cotangent added into a window of its operand's
# accumulated cotangent (the backward pass with no transformation active)
cdef object add_window = None
# call_impl and scalar are nx_rune.tensor's call_impl and Tensor._broadcast_scalar (as core.py
# configures them): their C functions are called directly, without a Python call each
cdef bint C_IMPL = False, C_SCALAR = False
# the parameters of a primitive applied by the backward pass itself (never written: the
# implementations get their keyword arguments as a dict of their own)
cdef dict NO_PARAMS = {}
cdef object ZERO = 0


# the byte offsets of the slots of TapeTracer that its __init__ sets, set by configure when its
# layout is the expected one (slots only): TapeTracers are then made here without a Python
# frame; else (-1) by calling the class
cdef Py_ssize_t OFF[7]
OFF[0] = -1
_SLOTS = ("_interp", "primal", "shape", "dtype", "_idx", "_alias", "_recipe")

# the same for JVPTracer: the slots its __init__ sets, in this order
cdef object JVPTracer = None
cdef Py_ssize_t JOFF[7]
JOFF[0] = -1
_JVP_SLOTS = ("_interp", "primal", "shape", "dtype", "tangent", "_alias", "_recipe")
# forward mode's rule table, its rule class (``fn`` read at its offset) and the general call
cdef object JVP_RULES = None, JVPRule = None, apply_jvp = None, JVPCls = None
cdef Py_ssize_t JRULE_FN = -1, JVP_PARENT = -1

# the byte offsets of the Tape slots ``parent`` and ``tape`` (-1: read them as attributes), so
# that process reads them without an attribute lookup on an object of exactly that class
cdef object TapeCls = None
cdef Py_ssize_t TAPE_PARENT = -1, TAPE_TAPE = -1

# the byte offsets of VJPRule's slots ``unary``, ``operands`` and ``window`` and of Steps'
# ``code``, read by the backward pass once per entry (-1: read them as attributes)
cdef Py_ssize_t RULE_UNARY = -1, RULE_OPERANDS = -1, RULE_WINDOW = -1, STEPS_CODE = -1


cdef Py_ssize_t _slot_offset(cls, str name) except -2:
    for klass in cls.__mro__:
        d = klass.__dict__.get(name)
        if d is not None:
            if type(d) is not MemberDescriptorType:
                return -1
            return (<PyMemberDescrObject*>d).d_member.offset
    return -1


cdef inline object _get(object o, Py_ssize_t off):
    """The slot at byte offset ``off`` of ``o`` (one that its class's __init__ always sets)."""
    cdef PyObject* p = (<PyObject**>((<char*><PyObject*>o) + off))[0]
    if p == NULL:
        raise AttributeError("slot not set")
    return <object>p


cdef inline void _put(object o, Py_ssize_t off, object v):
    Py_INCREF(v)
    (<PyObject**>((<char*><PyObject*>o) + off))[0] = <PyObject*>v


cdef object _tape_tracer(object interp, object out, Py_ssize_t i, object dtype=None):
    """TapeTracer(interp, out, i): the slots its __init__ sets, set directly (``dtype``:
    out.dtype when the caller has it)."""
    if OFF[0] < 0:
        return TapeTracer(interp, out, i)
    t = PyType_GenericAlloc(TapeTracer, 0)
    _put(t, OFF[0], interp)
    _put(t, OFF[1], out)
    _put(t, OFF[2], _shape_of(out))
    _put(t, OFF[3], _dtype_of(out) if dtype is None else dtype)
    _put(t, OFF[4], i)
    _put(t, OFF[5], None)
    _put(t, OFF[6], None)
    return t


cdef object _jvp_tracer(object interp, object out, object tangent, object dtype):
    """JVPTracer(interp, out, tangent), its slots set directly (as _tape_tracer)."""
    if JOFF[0] < 0:
        return JVPTracer(interp, out, tangent)
    t = PyType_GenericAlloc(JVPTracer, 0)
    _put(t, JOFF[0], interp)
    _put(t, JOFF[1], out)
    _put(t, JOFF[2], _shape_of(out))
    _put(t, JOFF[3], dtype)
    _put(t, JOFF[4], tangent)
    _put(t, JOFF[5], None)
    _put(t, JOFF[6], None)
    return t


def configure_forward(*, jvp_tracer, jvp_rules, jvp_rule, apply_jvp_fn, jvp_cls):
    """Hand over forward mode's names (called once by nx_rune.autodiff.core, after
    ``configure``)."""
    global JVPTracer, JVP_RULES, JVPRule, apply_jvp, JVPCls, JRULE_FN, JVP_PARENT
    JVPTracer, JVP_RULES, JVPRule, apply_jvp = jvp_tracer, jvp_rules, jvp_rule, apply_jvp_fn
    JVPCls = jvp_cls
    JOFF[0] = -1
    if jvp_tracer.__dictoffset__ == 0:
        offs = [_slot_offset(jvp_tracer, n) for n in _JVP_SLOTS]
        if min(offs) > 0:
            for k in range(7):
                JOFF[k] = offs[k]
            if not _same_slots(jvp_tracer, lambda i, p: jvp_tracer(i, p, 5),
                               lambda i, p: _jvp_tracer(i, p, 5, p.dtype)):
                JOFF[0] = -1
    JRULE_FN = -1
    if jvp_rule.__dictoffset__ == 0:
        JRULE_FN = max(_slot_offset(jvp_rule, "fn"), -1)
    JVP_PARENT = -1
    if jvp_cls.__dictoffset__ == 0:
        JVP_PARENT = max(_slot_offset(jvp_cls, "parent"), -1)


def configure(*, tracer, tape_tracer, leaked_fn, bind_at_fn, nondiff, inexact, vjp_rules,
              vjp_rule, user_vjp_fn, proj, add_prim, bind_fn, call_impl_fn, tape_cls=None,
              steps_cls=None, scalar_fn=None, interp_var_=None, add_window_fn=None):
    """Hand over the names the loops use (called once by nx_rune.autodiff.core)."""
    global Tracer, TapeTracer, leaked, bind_at, NONDIFF, INEXACT, VJP_RULES, VJPRule
    global user_vjp, Proj, add_p, bind, call_impl, TapeCls, TAPE_PARENT, TAPE_TAPE
    global Steps, scalar, interp_var, C_IMPL, C_SCALAR, RULE_UNARY, RULE_OPERANDS, STEPS_CODE
    global RULE_WINDOW, add_window
    Steps, scalar, interp_var, add_window = steps_cls, scalar_fn, interp_var_, add_window_fn
    C_IMPL = call_impl_fn is _tensor_call_impl
    C_SCALAR = scalar_fn is Tensor._broadcast_scalar
    Tracer, TapeTracer, leaked, bind_at = tracer, tape_tracer, leaked_fn, bind_at_fn
    NONDIFF, INEXACT, VJP_RULES, VJPRule = nondiff, inexact, vjp_rules, vjp_rule
    user_vjp, Proj, add_p, bind, call_impl = user_vjp_fn, proj, add_prim, bind_fn, call_impl_fn
    OFF[0] = -1
    if tape_tracer.__dictoffset__ == 0:
        offs = [_slot_offset(tape_tracer, n) for n in _SLOTS]
        if min(offs) > 0:
            for k in range(7):
                OFF[k] = offs[k]
            if not _same_as_init(tape_tracer):
                OFF[0] = -1
    TapeCls, TAPE_PARENT, TAPE_TAPE = tape_cls, -1, -1
    RULE_UNARY = RULE_OPERANDS = RULE_WINDOW = STEPS_CODE = -1
    if vjp_rule.__dictoffset__ == 0:
        RULE_UNARY = _slot_offset(vjp_rule, "unary")
        RULE_OPERANDS = _slot_offset(vjp_rule, "operands")
        RULE_WINDOW = _slot_offset(vjp_rule, "window")
        if RULE_UNARY <= 0 or RULE_OPERANDS <= 0 or RULE_WINDOW <= 0:
            RULE_UNARY = RULE_OPERANDS = RULE_WINDOW = -1
    if steps_cls is not None and steps_cls.__dictoffset__ == 0:
        STEPS_CODE = max(_slot_offset(steps_cls, "code"), -1)
    if tape_cls is not None and tape_cls.__dictoffset__ == 0:
        parent, tape = _slot_offset(tape_cls, "parent"), _slot_offset(tape_cls, "tape")
        if parent > 0 and tape > 0:
            TAPE_PARENT, TAPE_TAPE = parent, tape


def _same_as_init(cls):
    """Whether a tracer made here has every slot as one made by ``cls.__init__`` (checked once:
    a slot that __init__ sets and this module does not switches the direct path off)."""
    return _same_slots(cls, lambda i, p: cls(i, p, 7), lambda i, p: _tape_tracer(i, p, 7))


def _same_slots(cls, by_init, made_here):
    primal = SimpleNamespace(shape=(2,), dtype=object())
    interp = object()
    a, b = by_init(interp, primal), made_here(interp, primal)
    missing = object()
    for klass in cls.__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name != "__weakref__" and \
                    getattr(a, name, missing) is not getattr(b, name, missing):
                return False
    return True


cdef inline list _nones(Py_ssize_t n, object fill):
    cdef list out = PyList_New(n)
    cdef Py_ssize_t k
    for k in range(n):
        Py_INCREF(fill)
        PyList_SET_ITEM(out, k, fill)
    return out


def process(self, prim, args, params):
    """Tape.process: ``prim`` on ``args``; with an operand ours, the primal is computed by the
    parent level and the op recorded: (prim, params, primal operands, tape positions of our
    operands (0: not ours), primal output).  Integer outputs and non-differentiable
    primitives are not recorded (their results are constants)."""
    cdef tuple targs = args if type(args) is tuple else tuple(args)
    cdef Py_ssize_t n = len(targs), k, i
    cdef bint ours = False, direct = OFF[0] >= 0
    cdef tuple primals = PyTuple_New(n)
    cdef tuple idxs = PyTuple_New(n)
    cdef list tape
    for k in range(n):
        a = targs[k]
        v, pos = a, ZERO
        if direct and type(a) is TapeTracer:
            # (a TapeTracer's slots read at their offsets: no attribute lookup)
            interp = _get(a, OFF[0])
            if interp is self:
                ours = True
                v, pos = _get(a, OFF[1]), _get(a, OFF[4])
            elif interp.done:
                leaked(a)
        elif type(a) is Tensor:
            pass
        elif isinstance(a, Tracer):
            interp = a._interp
            if interp is self:
                ours = True
                v, pos = a.primal, a._idx
            elif interp.done:
                leaked(a)
        Py_INCREF(v)
        PyTuple_SET_ITEM(primals, k, v)
        Py_INCREF(pos)
        PyTuple_SET_ITEM(idxs, k, pos)
    exact = TAPE_PARENT >= 0 and type(self) is TapeCls
    parent = _get(self, TAPE_PARENT) if exact else self.parent
    if not ours:
        return bind_at(parent, prim, args, params)
    if parent is None:
        out = _c_call_impl(prim, primals, params) if C_IMPL and type(params) is dict else \
            call_impl(prim, primals, params)
    else:
        out = parent.process(prim, primals, params)
    if prim in NONDIFF:
        return out
    dtype = _dtype_of(out)
    if dtype not in INEXACT:
        return out
    entry = (prim, params, primals, idxs, out)
    tape = _get(self, TAPE_TAPE) if exact else self.tape
    tape.append(entry)
    # threads running in copies of one context may record on one tape at once: the position
    # is looked up after the append
    i = len(tape) - 1
    while tape[i] is not entry:
        i -= 1
    return _tape_tracer(self, out, i, dtype)


def jvp_process(self, prim, args, params):
    """JVPInterpreter.process: ``prim`` on ``args``; with an operand ours (a JVPTracer of this
    interpreter), the primal is computed by the parent level and the tangent by the JVP rule,
    run with the parent active (so outer levels see and differentiate both).  Integer outputs
    and non-differentiable primitives give plain values; so does a rule's None tangent."""
    cdef tuple targs = args if type(args) is tuple else tuple(args)
    cdef Py_ssize_t n = len(targs), k
    cdef bint ours = False, direct = JOFF[0] >= 0
    cdef list primals = PyList_New(n)
    cdef list tangents = PyList_New(n)
    for k in range(n):
        a = targs[k]
        v, t = a, None
        if direct and type(a) is JVPTracer:
            interp = _get(a, JOFF[0])
            if interp is self:
                ours = True
                v, t = _get(a, JOFF[1]), _get(a, JOFF[4])
            elif interp.done:
                leaked(a)
        elif type(a) is Tensor:
            pass
        elif isinstance(a, Tracer):
            interp = a._interp
            if interp is self:
                ours = True
                v, t = a.primal, a.tangent
            elif interp.done:
                leaked(a)
        Py_INCREF(v)
        PyList_SET_ITEM(primals, k, v)
        Py_INCREF(t)
        PyList_SET_ITEM(tangents, k, t)
    parent = _get(self, JVP_PARENT) if JVP_PARENT >= 0 and type(self) is JVPCls else \
        self.parent
    if not ours:
        return bind_at(parent, prim, args, params)
    if parent is None:
        out = _c_call_impl(prim, tuple(primals), params) \
            if C_IMPL and type(params) is dict else call_impl(prim, primals, params)
    else:
        out = parent.process(prim, primals, params)
    if prim in NONDIFF:
        return out
    dtype = _dtype_of(out)
    if dtype not in INEXACT:
        return out
    token = interp_var.set(parent)
    try:
        found = PyDict_GetItem(JVP_RULES, prim)
        rule = <object>found if found != NULL else None
        if type(rule) is JVPRule:
            fn = _get(rule, JRULE_FN) if JRULE_FN > 0 else rule.fn
            t = fn(tangents, out, primals, params)
        else:
            t = apply_jvp(rule, prim, tangents, out, primals, params)
    finally:
        interp_var.reset(token)
    if t is None:
        return out
    return _jvp_tracer(self, out, t, dtype)


cdef inline object _step_operand(object o, list res, object v, object ans, tuple primals):
    """An operand of a step of rules.Steps: an earlier step's result (k >= 0), v (-1), ans
    (-2), the first (-3) or second (-4) primal operand, or a float constant in ans's dtype and
    shape."""
    cdef Py_ssize_t k
    if type(o) is int:
        k = o
        if k >= 0:
            return res[k]
        if k == -1:
            return v
        if k == -2:
            return ans
        return primals[-3 - k]
    if C_SCALAR:
        return _c_scalar_tensor(o, _dtype_of(ans), _shape_of(ans))
    return scalar(o, ans.dtype, ans.shape)


cdef inline object _apply(bint top, object prim, tuple args):
    """``bind(prim, *args)``; ``top``: no transformation is active, where bind calls the
    implementation (so it is called here at once, without bind's argument packing)."""
    if top:
        return _c_call_impl(prim, args, NO_PARAMS) if C_IMPL else call_impl(prim, args, NO_PARAMS)
    return bind(prim, *args)


cdef object _run_steps(bint top, tuple code, object v, object ans, tuple primals):
    """rules.Steps.__call__(v, ans, *primals) without its Python frame: the steps bound in
    order (v itself when there is none)."""
    cdef list res = []
    cdef tuple step
    cdef Py_ssize_t k
    r = v
    for k in range(len(code)):
        step = <tuple>code[k]
        if len(step) == 2:
            r = _apply(top, step[0], (_step_operand(step[1], res, v, ans, primals),))
        else:
            r = _apply(top, step[0], (_step_operand(step[1], res, v, ans, primals),
                                      _step_operand(step[2], res, v, ans, primals)))
        res.append(r)
    return r


cdef inline object _steps_code(object steps):
    return _get(steps, STEPS_CODE) if STEPS_CODE > 0 and type(steps) is Steps else steps.code


cdef inline object _accumulate(object prev, object ct, bint top):
    return ct if prev is None else _apply(top, add_p, (prev, ct))


cdef inline void _add_to(list acc, unsigned char* owned, Py_ssize_t j, object ct,
                         bint top) except *:
    """acc[j] += ct (a new value: acc[j] is then no longer memory of the pass's own)."""
    acc[j] = _accumulate(acc[j], ct, top)
    owned[j] = 0


def backward(self, seeds):
    """Tape.backward: cotangents of every tape position from ``seeds`` [(position,
    cotangent)]; rules run under the interpreter active now (so an enclosing transformation
    differentiates them).  Returns the list of accumulated cotangents (None: zero); leaves
    keep theirs.

    With no transformation active, the cotangent of a window of an operand (shrink: a slice,
    x[i]) is added into that window of the operand's accumulated cotangent, which the pass then
    owns (``owned[j]``: acc[j] is memory made here that nothing else reads) and adds the next
    windows into in place, as HIPS autograd accumulates its slices' cotangents: no padded
    array per slice, no sum of full-size arrays."""
    cdef list tape = self.tape
    cdef Py_ssize_t n = len(tape), i, top = -1, j, k, m
    cdef list acc = _nones(n, None)
    cdef bytearray owned_flags = bytearray(n)
    cdef unsigned char* owned = owned_flags
    cdef dict rules = VJP_RULES
    cdef PyObject* found
    # no transformation active: the loop's own binds (Steps, sums of cotangents) call the
    # implementations at once
    cdef bint plain = interp_var is not None and interp_var.get() is None
    for i, ct in seeds:
        acc[i] = _accumulate(acc[i], ct, plain)
        if i > top:
            top = i
    check = self._check_entry if self._wpos else None
    for i in range(top, 0, -1):
        g = acc[i]
        if g is None:
            continue
        e = tape[i]
        if e is None:
            continue
        if check is not None:
            check(i, e)
        acc[i] = None
        if type(e) is tuple:
            prim, params, primals, idxs, out = <tuple>e
            if type(primals) is not tuple:     # (a checkpoint's replay records lists)
                primals = tuple(primals)
            found = PyDict_GetItem(rules, prim)
            rule = <object>found if found != NULL else None
            if type(rule) is VJPRule:
                if plain and add_window is not None:
                    window = _get(rule, RULE_WINDOW) if RULE_WINDOW > 0 else rule.window
                    if window is not None and len(idxs) == 1 and primals[0] is not None:
                        j = idxs[0]
                        if not j:
                            continue
                        r = add_window(acc[j], owned[j], g, window(params),
                                       _shape_of(primals[0]))
                        if r is not None:
                            acc[j] = r
                            owned[j] = 1
                            continue
                unary = _get(rule, RULE_UNARY) if RULE_UNARY > 0 else rule.unary
                if unary is not None:
                    # one operand: its cotangent, and its position
                    j = idxs[0]
                    if j:
                        if type(unary) is Steps:
                            ct = _run_steps(plain, <tuple>_steps_code(unary), g, out,
                                            <tuple>primals)
                        else:
                            ct = unary(g, out, primals[0])
                        if ct is not None:
                            _add_to(acc, owned, j, ct, plain)
                    continue
                per = _get(rule, RULE_OPERANDS) if RULE_OPERANDS > 0 else rule.operands
                if per is not None:
                    # one Steps per operand (None: no cotangent), run here
                    m = min(len(idxs), len(per))
                    for k in range(m):
                        j = idxs[k]
                        steps = per[k]
                        if j and steps is not None:
                            ct = _run_steps(plain, <tuple>_steps_code(steps), g, out,
                                            <tuple>primals)
                            _add_to(acc, owned, j, ct, plain)
                    continue
                cts = rule.fn(g, out, primals, params, idxs)
            else:
                cts = user_vjp(rule, prim, g, out, primals, params)
        elif type(e) is Proj:
            src = acc[e.src]
            if src is None:
                src = acc[e.src] = [None] * len(tape[e.src].outs)
            src[e.k] = _accumulate(src[e.k], g, plain)
            continue
        else:
            idxs = e.idxs
            cts = e.vjp(g)
        if type(cts) is not tuple and type(cts) is not list:
            cts = tuple(cts)
        m = min(len(idxs), len(cts))
        for k in range(m):
            ct = cts[k]
            if ct is not None:
                j = idxs[k]
                if j:
                    _add_to(acc, owned, j, ct, plain)
    return acc
