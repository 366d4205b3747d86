# bind, the dispatch of every primitive, and the reads of an array's shape and dtype (included
# by tensor.pyx).
#
# A textual include, not a module of its own: this code compiles into nx_rune.tensor, so its
# inline helpers stay inline in the operators and its calls cost no cross-module lookup.  It
# uses tensor.pyx's imports and cimports (all of them are there, where the layering test
# reads them).

# -- bind: the dispatch of every primitive (nx_rune.primitives.bind is this function) ------------
# Here in C because every operation of every transformation passes through it: with no
# transformation active it calls the primitive's implementation; otherwise the innermost
# interpreter's ``process``, unless every operand is a concrete Tensor and no interpreter records
# a program (constants to every transformation: computed at once).  The primitive and the
# interpreter are duck-typed (``impl``/``aliases``, ``process``/``stages``): this layer knows
# nothing of the transformations.

# ALIAS_HOOK[0](prim, operand, params, view): set by the autodiff layer, called after an aliasing
# primitive (a movement op: its result is a view of its first operand) ran under a transformation
ALIAS_HOOK = [lambda prim, x, params, view: None]


# The primitive's attributes that bind reads on every call (impl, ufunc, _ufunc_of, aliases),
# read at their byte offsets when the primitive's class keeps them in plain __slots__ (as
# nx_rune.primitives.Primitive does): no attribute lookup per call.  The class is learnt from
# the first primitive bound (_PRIM_CLS; any other class is read by attribute).
cdef object _PRIM_CLS = None
cdef Py_ssize_t _P_IMPL = 0, _P_UFUNC = 0, _P_UFUNC_OF = 0, _P_ALIASES = 0
cdef bint _prim_tried = False


cdef Py_ssize_t _member_offset(object cls, str name) except -2:
    """The byte offset of slot ``name`` of instances of ``cls``, or -1 when ``name`` is not a
    plain slot there."""
    for klass in cls.__mro__:
        d = klass.__dict__.get(name)
        if d is not None:
            if type(d) is not MemberDescriptorType:
                return -1
            return (<PyMemberDescrObject*><PyObject*>d).d_member.offset
    return -1


cdef bint _prim_slots(object prim) except -1:
    """Whether prim's attributes can be read at the learnt offsets (learning them from the
    first primitive's class)."""
    global _PRIM_CLS, _P_IMPL, _P_UFUNC, _P_UFUNC_OF, _P_ALIASES, _prim_tried
    cls = type(prim)
    if cls is _PRIM_CLS:
        return True
    if _prim_tried:
        return False
    _prim_tried = True
    if (<PyTypeObject*>cls).tp_getattro != PyObject_GenericGetAttr or \
            getattr(cls, "__dictoffset__", 1) != 0:
        return False
    offs = [_member_offset(cls, n) for n in ("impl", "ufunc", "_ufunc_of", "aliases")]
    if min(offs) <= 0:
        return False
    _P_IMPL, _P_UFUNC, _P_UFUNC_OF, _P_ALIASES = offs
    _PRIM_CLS = cls
    return True


cdef inline object _slot(object o, Py_ssize_t off, str name):
    cdef PyObject* p = _slot_ptr(o, off)
    if p == NULL:
        raise AttributeError(f"'{type(o).__name__}' object has no attribute '{name}'")
    return <object>p


cdef object _bind(object prim, tuple args, dict params):
    interp = _get_value(DISPATCH)
    if interp is not None:
        for a in args:
            if type(a) is not Tensor or interp.stages:
                out = interp.process(prim, args, params)
                if (_slot(prim, _P_ALIASES, "aliases") if _prim_slots(prim) else prim.aliases):
                    # a view of a traced value: the transformation links the two, so that a
                    # write into either (x[idx] = v rebinds a tracer) cannot leave the other
                    # silently stale
                    ALIAS_HOOK[0](prim, args[0], params, out)
                return out
    return _call_impl(prim, args, params)


cdef object _call_impl(object prim, tuple args, dict params):
    cdef bint slots = _prim_slots(prim)
    impl = _slot(prim, _P_IMPL, "impl") if slots else prim.impl
    if impl is None:
        raise NotImplementedError(f"primitive {prim.name} has no implementation")
    if PyDict_GET_SIZE(params) == 0:
        ufunc = _slot(prim, _P_UFUNC, "ufunc") if slots else prim.ufunc
        if ufunc is not None and \
                (_slot(prim, _P_UFUNC_OF, "_ufunc_of") if slots else prim._ufunc_of) is impl:
            # an implementation that is one NumPy ufunc: called here on the operands' values
            # (what it does, without its Python frame), warnings off as on the fast path
            r = _ufunc_on_values(ufunc, args)
            if r is not None:
                return r
        r = PyObject_Call(impl, args, NULL)
    else:
        # (no copy of params: the implementation's keyword arguments are a dict of its own)
        r = PyObject_Call(impl, args, <PyObject*>params)
    if type(r) is Tensor and (<Tensor>r)._arr is not None and \
            cnp.PyArray_NDIM(<cnp.ndarray>(<Tensor>r)._arr) == 0 and \
            (_slot(prim, _P_ALIASES, "aliases") if slots else prim.aliases) and \
            r is not args[0]:
        # a 0-d view of an operand (a reshape, a shrink): an array, as NumPy's views are (an
        # operand given back as it is keeps its own kind)
        (<Tensor>r)._array0d = True
    return r


cdef object _inplace(Tensor x, object o, object fn, str symbol):
    """``x <symbol>= o``: written into x's memory (the front end's inplace_op), except for a
    0-d value (not ``_array0d``: a reduction's result, x[i]), which is rebound to
    ``fn(x, o)`` as a NumPy scalar is, so that no other name of it changes."""
    if not x._array0d:
        a = x._arr
        if (cnp.PyArray_NDIM(<cnp.ndarray>a) if a is not None else len(x._view.shape)) == 0:
            return fn(x, o)
    return _fe.inplace_op(x, o, fn, symbol)


cdef bint _int_index(object index):
    """Whether ``index`` is one integer (not a bool) or a tuple of them (() included): the
    indices from which NumPy returns a scalar, not a view, when they select one element."""
    if type(index) is tuple:
        for item in <tuple>index:
            if not _is_int(item):
                return False
        return True
    return _is_int(index)


cdef inline bint _is_int(object item):
    if type(item) is int:
        return True
    return isinstance(item, np.integer) and not isinstance(item, np.bool_)


cdef object _ufunc_on_values(object ufunc, tuple args):
    """``ufunc`` on the ndarrays of concrete Tensors ``args`` (one or two) as a Tensor, or None
    when an operand is not a Tensor wrapping an ndarray."""
    cdef Py_ssize_t n = len(args)
    a = args[0]
    if type(a) is not Tensor or (<Tensor>a)._arr is None:
        return None
    av = (<Tensor>a)._arr
    if type(ufunc) is RealUfunc:
        # a ufunc that is the implementation on real operands only (see RealUfunc)
        if _kind_in((<cnp.ndarray>av).descr.kind, b"c"):
            return None
        ufunc = (<RealUfunc>ufunc).ufunc
    if n == 1:
        # (small operands: NumPy's inner loop called directly, see ufdirect)
        r = direct1(ufunc, <cnp.ndarray>av)
        return wrap(r) if r is not None else _as_result(_call1(ufunc, av))
    if n != 2:
        return None
    b = args[1]
    if type(b) is not Tensor or (<Tensor>b)._arr is None:
        return None
    bv = (<Tensor>b)._arr
    r = direct2(ufunc, <cnp.ndarray>av, <cnp.ndarray>bv)
    return wrap(r) if r is not None else _as_result(_call2(ufunc, av, bv))


cdef class RealUfunc:
    """The ``ufunc`` attribute of a backend implementation that is NumPy ufunc ``ufunc`` on
    real (and integer, bool) operands only: bind calls the ufunc itself there and the
    implementation for complex ones (tanh: its complex special case)."""
    cdef readonly object ufunc

    def __init__(self, ufunc):
        if not isinstance(ufunc, np.ufunc):
            raise TypeError(f"ufunc: expected a NumPy ufunc, got {type(ufunc).__name__}")
        self.ufunc = ufunc

    def __repr__(self):
        return f"RealUfunc({self.ufunc!r})"


def call_impl(prim, args, params):
    """``prim``'s implementation on the concrete operands ``args`` (a tuple or list) with the
    parameters ``params`` (a dict), as bind calls it with no transformation active."""
    return _call_impl(prim, args if type(args) is tuple else tuple(args), params)


def bind(prim, *args, **params):
    """Apply ``prim`` to ``args`` under the active transformations (if any); see
    nx_rune.primitives."""
    return _bind(prim, args, params)


# -- shape and dtype of arrays, read without attribute lookups ---------------------------------
# A Tensor wrapping an ndarray: from the ndarray's struct.  A tracer (a Python subclass of
# ArrayBase keeping ``shape`` and ``dtype`` in plain __slots__, as the autodiff tracers do): at
# the slots' byte offsets, learnt once per class (_META: class -> (shape, dtype) offsets, or
# None when the class keeps them otherwise: then by attribute).  Its attribute lookup goes
# through the class's __getattr__ hook, several times the cost of the read itself.
cdef dict _META = {}
cdef object _meta_cls = None          # the class last read, and its offsets
cdef Py_ssize_t _M_SHAPE = 0, _M_DTYPE = 0


cdef Py_ssize_t _meta_offset(object x, bint dtype) except -2:
    """The byte offset of x's ``dtype`` (else ``shape``) slot, or 0 when x's class keeps it
    otherwise (learnt once per class)."""
    global _meta_cls, _M_SHAPE, _M_DTYPE
    cls = type(x)
    if cls is not _meta_cls:
        offs = _META.get(cls, False)
        if offs is False:
            offs = None
            if cls.__getattribute__ is object.__getattribute__ and \
                    getattr(cls, "__dictoffset__", 1) == 0:
                o = (_member_offset(cls, "shape"), _member_offset(cls, "dtype"))
                if min(o) > 0:
                    offs = o
            if len(_META) >= 64:
                _META.clear()
            _META[cls] = offs
        if offs is None:
            return 0
        _M_SHAPE, _M_DTYPE = offs
        _meta_cls = cls
    return _M_DTYPE if dtype else _M_SHAPE


cdef inline PyObject* _slot_ptr(object o, Py_ssize_t off) noexcept:
    return (<PyObject**>((<char*><PyObject*>o) + off))[0]


cdef PyObject* _meta_slot(object x, bint dtype) except? NULL:
    """x's ``dtype`` (else ``shape``) read from its slot when x is an ArrayBase (a tracer) whose
    class keeps it at a known offset (a borrowed reference), else NULL."""
    cdef Py_ssize_t off
    if not isinstance(x, ArrayBase):
        return NULL
    off = _meta_offset(x, dtype)
    return _slot_ptr(x, off) if off > 0 else NULL


cdef object _shape_of(object x):
    """``x.shape``."""
    cdef cnp.ndarray arr
    cdef Py_ssize_t k, n
    cdef PyObject* p
    cdef object v
    if type(x) is Tensor:
        a = (<Tensor>x)._arr
        if a is not None:
            arr = <cnp.ndarray>a
            n = arr.ndim
            shape = PyTuple_New(n)
            for k in range(n):
                v = <Py_ssize_t>arr.shape[k]     # (a Python int: v is an object)
                Py_INCREF(v)
                PyTuple_SET_ITEM(shape, k, v)
            return shape
    else:
        p = _meta_slot(x, False)
        if p != NULL:
            return <object>p
    return x.shape


cdef object _dtype_of(object x):
    """``x.dtype``."""
    cdef PyObject* p
    if type(x) is Tensor:
        a = (<Tensor>x)._arr
        if a is not None:
            return <object>cnp.PyArray_DESCR(<cnp.ndarray>a)
    else:
        p = _meta_slot(x, True)
        if p != NULL:
            return <object>p
    return x.dtype


cdef inline bint _inexact_kind(object dt):
    """Whether ``dt`` (an array's dtype) is a float or complex dtype."""
    return isinstance(dt, cnp.dtype) and _kind_in((<cnp.dtype>dt).kind, _WEAK_KINDS)


def unary_op(x, ufunc, prim, kinds=b"fc"):
    """A unary float function (``sin``, ``exp``, ...) of the front end on its common cases:
    ``ufunc(x)`` on the eager fast path (see ``fast_unary``), else ``prim`` bound on ``x``
    when x is an array (a Tensor or tracer) of a float or complex dtype, which the front end
    would bind unchanged (``as_inexact`` is the identity there).  None otherwise: the caller
    takes its general path (integer operands, Python data, ``kinds`` excluding the dtype)."""
    if type(x) is Tensor:
        r = _unary_fast(<Tensor>x, ufunc, kinds)
        if r is not None:
            return r
    elif not isinstance(x, ArrayBase):
        return None
    if _inexact_kind(_dtype_of(x)):
        return _bind(prim, (x,), {})
    return None
