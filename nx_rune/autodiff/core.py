"""Interpreters and tracers: one interpreter per transformation call, tagged tracers.

Each transformation call makes a fresh interpreter whose ``parent`` is the interpreter active
at that time (``current_interpreter()``); the interpreter object is the tag of its tracers.
A value is *ours* at a level only when its tag is that interpreter: Tensors and tracers of
other interpreters are constants there, which is what keeps nested perturbations apart.

``process(prim, args, params)`` (called by ``bind``): with no argument ours, the op is handed
to the parent unchanged (the fast path).  Otherwise the primal is computed by the parent (so
outer levels see it) and the derivative rule runs with the parent active (so outer levels see
and differentiate the rule too).

* ``Tape`` (reverse mode; also behind ``linearize`` and ``jacfwd``): records one entry per op,
  (prim, params, primal operands, tape positions of our operands, primal output);
  ``backward`` walks the entries in reverse calling ``VJP_RULES`` with whatever interpreter is
  active when it runs, ``forward`` replays them with ``JVP_RULES``.  Zero cotangents/tangents
  are None.
* ``JVPInterpreter`` (forward mode): tracers carry (primal, tangent).
* ``NoGradInterpreter``: every op sees concrete values; results are constants at every level.

A finished interpreter marks itself ``done``: a tracer that leaks out of its transformation
raises ``UnexpectedTracerError`` when used in a computation.

In-place updates.  ``x[idx] = v`` and ``x += y`` on a tracer rebind the tracer object to the
updated value (``Tracer._rebind``).  A tape saves the values its rules will read; an in-place
write into one of them after it was recorded (into a Tensor's memory, or the rebinding of an
outer-level tracer that an inner tape saved as a constant) makes ``backward``/``forward`` raise
``ModifiedInPlaceError`` when they reach that entry, instead of computing a wrong derivative.
Tapes receive the writes made during their life (``nx_rune.writes``); with none, checking costs
one test per backward pass.

Views of tracers.  On concrete Tensors a movement op (``x.T``, ``x[0]``, ``reshape``) gives a
view: a write into it shows in ``x`` and the reverse.  Tracers follow that: the tracers a view
op links share an alias group (``_alias``, weak references) and each view remembers how it was
made (``_recipe``).  A write into a view is written back into its source (inverse permute,
reshape, flip, ``at[...].set``), level by level, and the other live views of that memory are
remade from their sources, so ``x[i][j] = v``, ``row = x[i]; row *= 2`` and ``x.T[j, i] = v``
under ``grad``/``jvp``/``vmap`` give what they give on arrays.  A tracer that cannot be remade
(its source is a broadcast or padded view, which refuse writes on arrays) goes stale: its
interpreter becomes a finished ``_StaleLevel``, so any later use raises ``ModifiedInPlaceError``
through the leak check every interpreter already makes.
"""
import bisect
import weakref

import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune import writes
from nx_rune.autodiff import _tape
from nx_rune.autodiff.pytree import tree_flatten
from nx_rune.autodiff.pytree import tree_unflatten as _tree_unflatten
from nx_rune.autodiff.rules import JVP_RULES, NONDIFF, VJP_RULES, JVPRule, Steps, VJPRule
from nx_rune.errors import (
    DerivativeConversionError,
    ModifiedInPlaceError,
    TracerArrayConversionError,
    UnexpectedTracerError,
)
from nx_rune.frontend.indexing import add_window, getitem, index_update
from nx_rune.tensor import ArrayBase, Tensor, call_impl

__all__ = ["Tracer", "TapeTracer", "JVPTracer", "Tape", "JVPInterpreter", "NoGradInterpreter",
           "UnexpectedTracerError", "ModifiedInPlaceError", "concrete", "is_inexact", "bind_at",
           "VALUES_UNUSED", "write_back", "written_alias", "alias_error"]

_var = P._interpreter
_INEXACT = frozenset(np.dtype(t) for t in ("float16", "float32", "float64", "complex64",
                                           "complex128"))


def is_inexact(dtype):
    return dtype in _INEXACT


def concrete(x):
    """The concrete Tensor under any number of tracer levels (x itself when not a tracer).

    A value batched by ``vmap`` has no single concrete Tensor: for it the result is a batch
    tracer (``batching.BatchTracer``) whose value has every differentiating level stripped, so
    that ``stop_gradient`` and ``no_grad`` keep the batch and drop only the derivatives."""
    while isinstance(x, Tracer):
        if x._batched:
            return x._stopped()
        x = x.primal
    return x


def bind_at(interp, prim, args, params):
    """Apply ``prim`` at level ``interp`` (None: the implementation)."""
    if interp is None:
        return call_impl(prim, args, params)
    return interp.process(prim, args, params)


def call_in(interp, fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)`` with ``interp`` (None: no transformation) as the innermost
    interpreter of this context."""
    token = _var.set(interp)
    try:
        return fn(*args, **kwargs)
    finally:
        _var.reset(token)


def call_finishing(interp, fn, /, *args, **kwargs):
    """``call_in``, then ``interp`` is finished: a tracer of it used later is a leak."""
    token = _var.set(interp)
    try:
        return fn(*args, **kwargs)
    finally:
        _var.reset(token)
        interp.done = True


def _leaked(t):
    if isinstance(t._interp, _StaleLevel):
        _stale(t)
    raise UnexpectedTracerError(
        f"a tracer of a finished {t._interp.name} transformation was used (shape {t.shape}, "
        f"dtype {t.dtype}): a value computed inside a transformed function escaped it (stored "
        f"in a global, a closure or an aux output); return it from the function instead, or "
        f"use nx.stop_gradient on it")


def _active(interp):
    """Whether ``interp`` is on this context's stack of active transformations."""
    cur = _var.get()
    while cur is not None:
        if cur is interp:
            return True
        cur = cur.parent
    return False


def _in_no_grad():
    """Whether this context runs inside a ``no_grad`` block (its interpreter, or one that a
    transformation started inside the block stands on)."""
    cur = _var.get()
    while cur is not None:
        if cur.__class__ is NoGradInterpreter:
            return True
        cur = cur.parent
    return False


def _foreign(t):
    raise UnexpectedTracerError(
        f"a tracer of a {t._interp.name} transformation that is still running was used where "
        f"that transformation is not active (shape {t.shape}, dtype {t.dtype}): most likely in "
        f"another thread, which does not inherit the transformation (it lives in a "
        f"contextvars.ContextVar, per thread and per asyncio task).  Run the thread's work in "
        f"a copy of the transformed function's context: ctx = contextvars.copy_context() "
        f"inside the transformed function, then ctx.run(fn, *args) in the thread (one copy "
        f"per thread); or return the values to the transformed function and compute there")


class Interpreter:
    """``stages``: this interpreter or one below it records a program (jit's trace), so that
    operations on constants are recorded too, not computed at once by ``bind``."""
    __slots__ = ("parent", "done", "name", "stages")

    def __init__(self, name, parent=None):
        self.parent = parent
        self.done = False
        self.name = name
        self.stages = parent is not None and parent.stages

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}{' (done)' if self.done else ''}>"


class _StaleLevel(Interpreter):
    """The interpreter of a tracer that shares memory with one written in place since (a view
    of it, or the value it views): finished, so any use of the tracer raises.  ``orig``: the
    tracer's own interpreter."""
    __slots__ = ("what", "orig")

    def __init__(self, interp, what):
        super().__init__(interp.name, getattr(interp, "parent", None))
        self.done = True
        self.what = what
        self.orig = interp

    def leak_message(self, t):
        return _stale_message(t)


def _stale(t):
    raise ModifiedInPlaceError(_stale_message(t))


def _stale_message(t):
    level = t._interp
    return (
        f"a value traced by {level.name} (shape {t.shape}, dtype {t.dtype}) shares memory with "
        f"one written in place afterwards by {level.what}: it is a view of the written value "
        f"(x.T, x[i], x.reshape(...)), or the written value was such a view of it.  On plain "
        f"arrays the write would show in both; a transformation cannot follow a write through a "
        f"view.  Write into the array itself with one index (x[i, j] = v rather than "
        f"x[i][j] = v or x.T[j, i] = v), take views after the write, or update functionally "
        f"(x = x.at[idx].set(v))")


def _note_layout(t):
    """Tell the jit trace under ``t`` (if any) that a reshape's view-or-copy decision assumed
    t's value C-contiguous (``note_layout_assumed``; through the derivative levels above it)."""
    while t is not None:
        note = getattr(getattr(t, "_interp", None), "note_layout_assumed", None)
        if note is not None:
            note(t)
            return
        t = getattr(t, "primal", None)


def _reshape_is_view(x, params):
    """Whether ``reshape(x, **params)`` is a view when ``x`` has no single value to look at (a
    jit tracer, a value batched by vmap, a derivative level over either): x's movements are
    followed back to the value they start from, assumed C-contiguous (a computed value is, as
    each example of a batched one; an argument of vmap has its example's strides in the
    caller's array), and the View algebra decides as it does on arrays.  Where
    that value is an input of a jit trace, the answer depends on the input's layout: the
    trace is told (``note_layout_assumed``), so the call can check it."""
    chain, t = [(P.reshape_p, params)], x
    while True:
        rec = getattr(t, "_recipe", None)
        if rec is None:
            break
        kind, p, src = rec
        if src._interp is not x._interp:
            break
        if kind is _GETITEM:
            chain.append(("getitem", p))
        elif getattr(kind, "aliases", False):
            chain.append((kind, p))
        else:
            break
        t = src
    chain.reverse()
    strides = getattr(t, "example_strides", None)
    _note_layout(t)         # a jit trace under a vmap argument: its strides assumed C order
    try:
        return P.view_after(t.shape, chain, strides) is not None
    except LookupError:
        return True             # an index the view algebra does not decide alone: a view


def _shares_memory(x, view):
    cx, cv = concrete(x), concrete(view)
    if not (isinstance(cx, Tensor) and isinstance(cv, Tensor)):
        return True             # abstract (jit) or batched values: as NumPy, a view
    ax, av = cx._arr, cv._arr
    if ax is not None and av is not None:
        return ax.size == 0 or np.may_share_memory(ax, av)
    ex, ev = cx._memory_extent(), cv._memory_extent()
    return ex is None or ev is None or (ev[0] < ex[1] and ex[0] < ev[1])


def _link_view(kind, x, params, view):
    """``view`` = kind(x, **params) ran under a transformation: a movement primitive
    (primitives.ALIAS_HOOK), or ``_GETITEM`` with params the index (the front end's basic
    getitem, whose composition may copy on the way: a padded stepped slice).  Join the two
    tracers in one alias group and remember how ``view`` was made from ``x``, so that a write
    into either reaches the other."""
    if view is x or not getattr(type(view), "_links_views", False) \
            or getattr(x, "_interp", None) is not view._interp:
        return
    if kind is P.reshape_p and not _shares_memory(x, view):
        return                  # a reshape that copied (as on a Tensor): no alias
    if kind is P.reshape_p and not isinstance(concrete(x), Tensor) \
            and not _reshape_is_view(x, params):
        return                  # a traced or batched reshape that copies on arrays (of a
                                # flipped, padded or permuted value): new memory, which later
                                # writes do not reach, as eagerly
    group = getattr(x, "_alias", None)
    if group is None:
        group = x._alias = [weakref.ref(x)]
    elif len(group) % 64 == 0:   # now and then, drop the views that died (a loop taking
        group[:] = [r for r in group if r() is not None]   # x[i - 1] each step)
    theirs = getattr(view, "_alias", None)
    if theirs is None:
        group.append(weakref.ref(view))
        view._alias = group
    elif theirs is not group:   # the view's own group (from the steps of a getitem) joins
        for r in theirs:
            other = r()
            if other is not None:
                other._alias = group
                group.append(r)
    view._recipe = (kind, params, x)


P.ALIAS_HOOK[0] = _link_view


def _inverse_permute(v, src, axes):
    return P.bind(P.permute_p, v, axes=tuple(int(i) for i in np.argsort(axes)))


_GETITEM = "getitem"

# how a write into a view reaches the value it views: the view's new values -> the source's
_WRITE_BACK = {
    _GETITEM: lambda v, src, index: index_update(src, index, v, "set"),
    P.permute_p: lambda v, src, params: _inverse_permute(v, src, params["axes"]),
    P.reshape_p: lambda v, src, params: P.bind(P.reshape_p, v, shape=tuple(src.shape)),
    P.flip_p: lambda v, src, params: P.bind(P.flip_p, v, axes=params["axes"]),
    P.shrink_p: lambda v, src, params: index_update(
        src, tuple(slice(lo, hi) for lo, hi in params["limits"]), v, "set"),
}


def _write_through(t, what):
    """Tracer ``t`` was just rebound by an in-place write.  As on arrays, where a view shares
    memory: write its new values back into the value it views (and on up), then remake the
    other live views of that memory from their sources; a tracer whose source cannot be
    written (a broadcast, a padded view) or remade goes stale."""
    interp = t._interp
    chain = [t]
    while True:
        rec = getattr(t, "_recipe", None)
        if rec is None or rec[0] not in _WRITE_BACK or rec[2]._interp is not interp:
            break
        prim, params, src = rec
        src._assume(_WRITE_BACK[prim](t, src, params), what)
        chain.append(src)
        t = src
    group = getattr(t, "_alias", None)
    if group is None:
        return
    valid = chain
    for r in list(group):
        other = r()
        if other is None or any(other is v for v in chain):
            continue
        level = other._interp
        if level.__class__ is _StaleLevel:
            continue
        rec = getattr(other, "_recipe", None)
        if rec is not None and any(rec[2] is v for v in valid):
            kind, params, src = rec
            other._assume(getitem(src, params) if kind is _GETITEM else
                          P.bind(kind, src, **params), what)
            valid.append(other)
        else:
            other._interp = _StaleLevel(level, what)


def write_back(target, value, what):
    """After a transformed call: ``target``, an argument at the level below the
    transformation (a Tensor, or a tracer of an enclosing one), gets ``value``, the final
    value the function left in it by writing in place (``x += 1``, ``x[i] = v``, a write
    through a view), as ``target[...] = value``: a Tensor's memory is written (a view of a
    bigger array writes into it, a tensor made from a NumPy array writes into that array), a
    tracer is rebound (so that an enclosing transformation writes back in turn).  Memory that
    refuses writes (read-only, broadcast) raises what the eager write raises, with ``what``
    (the transformation and the argument) in front."""
    try:
        target[...] = value
    except (ValueError, TypeError) as e:
        raise type(e)(f"{what}: writing back the value the function wrote into this "
                      f"argument: {e}") from None


def written_alias(written, leaves):
    """``(i, k)``: the first leaf ``leaves[i]`` (``i`` in ``written``: arguments a transformed
    function wrote in place) that is, or shares memory with, another leaf ``leaves[k]``; None
    when there is none.  Eagerly such a write shows through the other argument; a
    transformation gives each argument its own value, so it cannot write back the eager
    result (the caller raises)."""
    for i in written:
        x = leaves[i]
        rx = writes.region_of(x) if isinstance(x, Tensor) else None
        for k, y in enumerate(leaves):
            if k == i:
                continue
            if y is x:
                return i, k
            if rx is not None and isinstance(y, Tensor):
                ry = writes.region_of(y)
                if ry is not None and ry.overlaps(rx):
                    return i, k
    return None


def alias_error(transformation, what, other):
    """The ValueError for ``written_alias``'s finding."""
    return ValueError(
        f"{transformation}: the function writes into {what} in place, and that array shares "
        f"memory with {other}: eagerly the write shows through {other}, but {transformation} "
        f"gives each argument its own value, so the results and the arrays written would "
        f"differ from the eager call's; pass separate arrays (nx.copy) or call the function "
        f"without {transformation}")


# -- tracers -------------------------------------------------------------------------------

_CONVERSION = ("conversion to a NumPy array (np.asarray(x), a NumPy function such as np.sin(x), "
               "x.numpy())")

_STORAGE = frozenset(["_np", "_arr", "_buf", "_view", "view", "buffer", "strides"])


class Tracer(ArrayBase):
    """A value carried by a transformation.  Operators and methods work as on Tensors.  Python
    scalars of its value (``bool()``, ``int()``, ``__index__``) read the concrete value, so
    Python control flow on values works inside transformed functions; ``float()``,
    ``complex()``, ``item()`` and ``tolist()`` of a differentiated inexact value raise
    ``DerivativeConversionError`` (the derivative through the number would be lost); conversion to a
    NumPy array (``__array__``, ``numpy()``, DLPack, NumPy functions applied to it) raises
    ``TracerArrayConversionError``: NumPy would compute outside the transformation, and a
    derivative through its result would silently be zero."""
    __slots__ = ("_interp", "primal", "shape", "dtype", "_alias", "_recipe", "__weakref__")
    _batched = False   # True for the tracers of vmap (batching.BatchTracer)
    _links_views = True   # movement ops link it to its views (see "Views of tracers")
    # not a weakly typed value (only jit's tracers of Python scalars are): read by the front
    # end's promotion on every operand, where a missing attribute would take __getattr__'s
    # error path each time
    weak_type = False

    def _concrete(self):
        if self._interp.__class__ is _StaleLevel:
            _stale(self)
        c = concrete(self)
        if isinstance(c, Tracer):   # batched by vmap: one value per example
            return c._concrete()    # raises ConcretizationTypeError
        return c

    def _concrete_tensor(self):
        if self._interp.__class__ is _StaleLevel:
            _stale(self)
        c = concrete(self)
        # None when batched by vmap (a value per example) or abstract (traced by jit)
        return None if isinstance(c, Tracer) else c._concrete_tensor()

    def _to_numpy(self, what):
        """The values as an ndarray once the transformation has finished (a leaked tracer: no
        derivative can be lost any more); TracerArrayConversionError while it runs."""
        if self._interp.__class__ is _StaleLevel:
            _stale(self)
        c = concrete(self)
        if isinstance(c, Tracer):   # batched by vmap: never one array of this shape
            return c._to_numpy(what)
        if self._interp.done:
            return c._np()
        raise TracerArrayConversionError(
            f"{what} of a value traced by {self._interp.name} (shape {self.shape}, dtype "
            f"{self.dtype}): NumPy would compute outside the transformation, so derivatives "
            f"through the result would silently be zero.  Use nx operations (nx.sin, nx.sum, "
            f"...) instead of NumPy's, wrap NumPy code in nx.custom_vjp / nx.custom_jvp with "
            f"its derivative, or apply nx.stop_gradient(x) first if no derivative should flow")

    def numpy(self):
        return self._to_numpy(_CONVERSION)

    def __array__(self, dtype=None, copy=None):
        arr = self._to_numpy(_CONVERSION)
        return arr if dtype is None else arr.astype(dtype)

    @property
    def __array_interface__(self):
        return self._to_numpy(_CONVERSION).__array_interface__

    def __dlpack__(self, *args, **kwargs):
        return self._to_numpy("DLPack export").__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        self._to_numpy("DLPack export")
        return (1, 0)

    def _differentiating_level(self):
        """The innermost active transformation that differentiates this value (a tape or a
        forward-mode level whose tracer carries it), or None: then the Python value of ``x``
        loses no derivative.  Inside a ``no_grad`` block no enclosing level is active: there
        values are constants by request, their Python numbers too."""
        x = self
        while isinstance(x, Tracer):
            if not x._batched and not x._interp.done and (_active(x._interp) or
                                                          not _in_no_grad()):
                return x._interp
            x = x.primal
        return None

    def _python_number(self, what):
        """The concrete value for ``float()``, ``complex()``, ``item()``, ``tolist()``: Python
        numbers that carry no derivative.  For a value of an inexact dtype that a running
        grad/jvp/vjp differentiates, the derivative through the number would silently be
        lost, so this raises (as JAX does).  Integer and bool values are piecewise constant
        (their derivative is 0 wherever it exists): they convert, as do values of a finished
        transformation."""
        c = self._concrete()
        # (a value traced abstractly by jit has no number at all: jit's own error, raised by
        # the conversion of c, says so)
        if is_inexact(self.dtype) and c.__class__ is Tensor:
            level = self._differentiating_level()
            if level is not None:
                raise DerivativeConversionError(
                    f"{what} of a value differentiated by {level.name} (shape {self.shape}, "
                    f"dtype {self.dtype}): a Python number carries no derivative, so the "
                    f"derivative through it would silently be lost.  Keep the value as a "
                    f"tensor (use it in nx operations), apply nx.stop_gradient(x) first if no "
                    f"derivative should flow through it, or compute the number outside the "
                    f"differentiated function")
        return c

    def item(self):
        return self._python_number("item()").item()

    def tolist(self):
        return self._python_number("tolist()").tolist()

    def __bool__(self):
        # as in JAX: Python control flow on the concrete value of a differentiated value works
        # (a branch taken loses no derivative); bool() of a batched value raises
        return bool(self._concrete())

    def __float__(self):
        return float(self._python_number("float()"))

    def __int__(self):
        # as in JAX: int() truncates, a piecewise constant function whose derivative is 0
        # wherever it exists, so nothing is lost
        return int(self._concrete())

    def __complex__(self):
        return complex(self._python_number("complex()"))

    def __index__(self):
        return self._concrete().__index__()

    def __format__(self, spec):
        # printing a value (f"{loss:.3f}") is display, not a computation: no derivative is lost
        c = self._concrete()
        return format(c, spec) if spec else str(self)

    def __repr__(self):
        interp = self._interp
        state = ", finished" if interp.done else ""
        c = concrete(self)
        if isinstance(c, Tracer):   # batched by vmap: the values of every example
            value = f"batched values={np.array2string(c._batched_np())}"
        elif c._concrete_tensor() is None:   # abstract (traced by jit)
            value = f"value={c!r}"
        else:
            value = f"value={np.array2string(c._np())}"
        return (f"{type(self).__name__}({interp.name}{state}, shape={self.shape}, "
                f"dtype={self.dtype}, {value})")

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError(f"cannot pickle a tracer of {self._interp.name}; use nx.stop_gradient")

    def _note_index(self, base, index):
        """This tracer is ``base[index]`` (the front end's basic getitem, a view on arrays)."""
        _link_view(_GETITEM, base, index, self)

    def _rebind(self, new, what="x[idx] = v"):
        """Make this tracer object stand for ``new`` (same shape and dtype): ``x[idx] = v`` and
        ``x += y`` on a tracer.  ``new`` is a tracer of the same transformation, or a value of
        an enclosing level (then a constant here: no derivative flows back through it)."""
        interp = self._interp
        if interp.done:
            _leaked(self)
        if new.shape != self.shape or new.dtype != self.dtype:
            raise ValueError(f"{what}: the new value has shape {new.shape} and dtype "
                             f"{new.dtype}, the tracer {self.shape} and {self.dtype}")
        if not (isinstance(new, Tracer) and new._interp is interp):
            if isinstance(new, Tracer) and not _encloses(new._interp, interp):
                raise TypeError(
                    f"{what}: x is a value of the enclosing {interp.name} transformation and "
                    f"the new value depends on the inputs of an inner one "
                    f"({new._interp.name}); x cannot hold it in place. Update functionally "
                    f"instead: x2 = x.at[idx].set(v) (or x2 = x + y)")
            new = interp.lift(new)
        what = f"{what} on a tracer of {interp.name}"
        self._assume(new, what)
        _write_through(self, what)

    def _assume(self, new, what):
        """Stand for ``new``, a tracer of this one's transformation, from now on."""
        writes.record_rebind(self, what)
        self.primal = new.primal
        self._take_state(new)

    def __getattr__(self, name):
        # only reached for attributes a tracer lacks: a backend implementation reading a
        # Tensor's storage means a tracer escaped its transformation or its context (the
        # check costs nothing on bind's fast path: it runs only on this failure path)
        try:
            interp = object.__getattribute__(self, "_interp")
        except AttributeError:
            raise AttributeError(name) from None
        if name in _STORAGE:
            # a backend implementation reached a tracer: bind found none of the tracer's
            # interpreters active, so the tracer came from outside this context
            if interp.done:
                _leaked(self)
            if not _active(interp):
                _foreign(self)
        raise AttributeError(f"{type(self).__name__} (a tracer of {interp.name}) has no "
                             f"attribute {name!r}")


class TapeTracer(Tracer):
    """A value recorded on a reverse-mode tape, at tape position ``_idx``."""
    __slots__ = ("_idx",)

    def __init__(self, interp, primal, idx):
        self._interp = interp
        self.primal = primal
        self.shape = primal.shape
        self.dtype = primal.dtype
        self._idx = idx
        self._alias = self._recipe = None

    def _take_state(self, other):
        self._idx = other._idx


class JVPTracer(Tracer):
    """A (primal, tangent) pair of forward mode; the tangent is never None."""
    __slots__ = ("tangent",)

    def __init__(self, interp, primal, tangent):
        self._interp = interp
        self.primal = primal
        self.shape = primal.shape
        self.dtype = primal.dtype
        self.tangent = tangent
        self._alias = self._recipe = None

    def _take_state(self, other):
        self.tangent = other.tangent


def _encloses(outer, interp):
    """True when ``outer`` is ``interp``'s parent, grandparent, ..."""
    p = interp.parent
    while p is not None:
        if p is outer:
            return True
        p = p.parent
    return False


def _rule_missing(table, prim):
    kind = "VJP" if table is VJP_RULES else "JVP"
    raise NotImplementedError(
        f"no {kind} rule for primitive {prim.name}; register one in "
        f"nx_rune.autodiff.{kind}_RULES (see nx_rune.autodiff.rules)")


def _user_vjp(rule, prim, g, out, primals, params):
    """A rule in the public form: ``rule(ct, *primals, out, **params)``."""
    if rule is None:
        _rule_missing(VJP_RULES, prim)
    cts = rule(g, *primals, out, **params)
    if not isinstance(cts, (tuple, list)) or len(cts) != len(primals):
        raise TypeError(f"VJP rule of {prim.name} must return a tuple of {len(primals)} "
                        f"cotangents (None for zero), got {cts!r:.80}")
    return cts


def _apply_jvp(rule, prim, tangents, out, primals, params):
    if rule.__class__ is JVPRule:
        return rule.fn(tangents, out, primals, params)
    if rule is None:
        _rule_missing(JVP_RULES, prim)
    # the public form gets zeros, not None, for operands without a tangent
    ts = [t if t is not None else _zeros_like(p) for t, p in zip(tangents, primals)]
    return rule(primals, ts, out, **params)


def _zeros_like(x):
    return ops.zeros_like_t(x)


# -- reverse mode: the tape --------------------------------------------------------------------

class _Proj:
    """Tape entry of output ``k`` of the multi-output entry at position ``src``."""
    __slots__ = ("src", "k")

    def __init__(self, src, k):
        self.src, self.k = src, k


def _append(tape, entry):
    """Append ``entry`` to ``tape`` and return its position.  Threads running in copies of one
    context (``contextvars.copy_context().run``) may record on one tape at once, so the
    position is looked up after the append instead of taken from the length before it."""
    tape.append(entry)
    i = len(tape) - 1
    while tape[i] is not entry:
        i -= 1
    return i


class Tape(Interpreter):
    """Reverse-mode interpreter: an eager tape of the ops applied to its tracers."""
    __slots__ = ("tape", "_wpos", "_wlog", "__weakref__")

    def __init__(self, name="grad", parent=None):
        Interpreter.__init__(self, name, parent)
        # position 0 is a sentinel, so an operand's position doubles as its "needs a
        # cotangent" flag (0: not ours)
        self.tape = [None]
        # in-place writes made during this tape's life: the tape's length at each, and what
        self._wpos = []
        self._wlog = []
        writes.watch(self)

    def new_input(self, x):
        """A tracer standing for the parent-level value ``x`` (a leaf of the tape)."""
        t = TapeTracer(self, x, len(self.tape))
        self.tape.append(None)
        return t

    lift = new_input   # a constant here: a leaf that no cotangent leaves

    def note_write(self, write):
        """Called by nx_rune.writes for every in-place write while this tape lives."""
        self._wpos.append(len(self.tape))
        self._wlog.append(write)

    def _check_entry(self, i, e):
        """ModifiedInPlaceError if a value that entry ``i`` saved for its rules was written
        in place after the entry was recorded."""
        k = bisect.bisect_right(self._wpos, i)
        if k == len(self._wpos):
            return
        later = self._wlog[k:]
        for label, v in _saved_values(e):
            w = _written(v, later)
            if w is not None:
                name = e[0].name if e.__class__ is tuple else f"custom rule {e.cf.__name__}"
                raise ModifiedInPlaceError(
                    f"{self.name}: one of the values needed for gradient computation has been "
                    f"modified by an in-place operation: {label} of {name} (shape {v.shape}, "
                    f"dtype {v.dtype}), recorded at tape position {i}, was overwritten "
                    f"afterwards by {w.what}; its derivative would be wrong. Write into a copy "
                    f"(nx.copy(x)) or update functionally (x = x.at[idx].set(v)) instead")

    # process(prim, args, params) and backward(seeds): the loops in C (nx_rune.autodiff._tape,
    # configured at the end of this module).  process records one entry per op on our tracers:
    # (prim, params, primal operands, tape positions of our operands, primal output); backward
    # walks the entries in reverse calling VJP_RULES with whatever interpreter is active when
    # it runs, and returns the accumulated cotangent of every position (None: zero).
    process = _tape.process
    backward = _tape.backward

    def record_multi(self, entry, idxs, outs):
        """Record a multi-output entry (custom rules); returns one value per output leaf."""
        tape = self.tape
        entry.idxs = idxs
        src = _append(tape, entry)
        res = []
        for k, o in enumerate(outs):
            if isinstance(o, ArrayBase) and o.dtype in _INEXACT:
                res.append(TapeTracer(self, o, _append(tape, _Proj(src, k))))
            else:
                res.append(o)
        return res

    def keep_saved(self, x):
        """``x`` (a value of the parent level) is about to be written in place after this
        tape recorded its entries (the write-back of an argument, ``_write_back`` of the API):
        every value an entry saved that shares x's memory (a Tensor) or that is x or one of its
        linked views (a tracer, which the write rebinds) is replaced by a copy of its values
        now, so that the backward and forward passes run later (vjp, linearize) read what the
        function read instead of raising ModifiedInPlaceError."""
        if isinstance(x, Tensor):
            rx = writes.region_of(x)
            if rx is None:
                return

            def hit(v):
                if not isinstance(v, Tensor):
                    return False
                r = writes.region_of(v)
                return r is not None and r.overlaps(rx)
        else:
            group = {id(x)} | {id(r()) for r in (getattr(x, "_alias", None) or ())}

            def hit(v):
                return id(v) in group
        copies = {}

        def keep(v):
            if not isinstance(v, ArrayBase) or not hit(v):
                return v
            c = copies.get(id(v))
            if c is None:
                c = copies[id(v)] = (v, ops.copy(v))    # (v kept alive: its id stays unique)
            return c[1]

        entries = self.tape
        for k, e in enumerate(entries):
            entries[k] = keep_entry(e, keep)

    def forward(self, seeds):
        """Tangents of every tape position from ``seeds`` [(position, tangent)] (linearize)."""
        tape = self.tape
        tan = [None] * len(tape)
        for i, t in seeds:
            tan[i] = t
        rules = JVP_RULES
        check = self._check_entry if self._wpos else None
        for i, e in enumerate(tape):
            if e is None:
                continue
            if e.__class__ is tuple:
                prim, params, primals, idxs, out = e
                ts = [tan[j] if j else None for j in idxs]
                for t in ts:
                    if t is not None:
                        break
                else:
                    continue
                if check is not None:
                    check(i, e)
                tan[i] = _apply_jvp(rules.get(prim), prim, ts, out, primals, params)
            elif e.__class__ is _Proj:
                src = tan[e.src]
                tan[i] = None if src is None else src[e.k]
            else:
                ts = [tan[j] if j else None for j in e.idxs]
                if all(t is None for t in ts):
                    continue
                if check is not None:
                    check(i, e)
                tan[i] = e.jvp(ts)
        return tan


def keep_entry(e, keep):
    """Tape entry ``e`` with every value it saved for its rules passed through ``keep``
    (``Tape.keep_saved``): the entry to store in its place (``e`` itself when it is an
    object, updated in place)."""
    if e is None or e.__class__ is _Proj:
        return e
    if e.__class__ is tuple:    # (prim, params, primals, idxs[, out]); a checkpoint's stub
        primals = e[2]          # has no out and None for the values it recomputes
        new = [None if p is None else keep(p) for p in primals]
        changed = any(a is not b for a, b in zip(new, primals))
        if len(e) > 4:
            out = keep(e[4])
            if out is not e[4]:
                return e[:2] + (type(primals)(new), e[3], out) + e[5:]
        return e[:2] + (type(primals)(new),) + e[3:] if changed else e
    own = getattr(e, "keep_saved", None)
    if own is not None:         # an entry holding entries (a checkpoint)
        own(keep)
        return e
    primals = getattr(e, "primals", None)
    if isinstance(primals, (list, tuple)):
        new = [keep(p) for p in primals]
        if any(a is not b for a, b in zip(new, primals)):
            e.primals = type(primals)(new)
    res = getattr(e, "res", None)
    if res is not None:
        leaves, td = tree_flatten(res)
        new = [keep(v) for v in leaves]
        if any(a is not b for a, b in zip(new, leaves)):
            e.res = _tree_unflatten(td, new)
    return e


# Primitives whose VJP and JVP rules read only the shapes, dtypes and parameters of the values
# an entry saves (linear maps): overwriting those values cannot change their derivatives.
VALUES_UNUSED = {P.neg_p, P.add_p, P.contiguous_p, P.copy_p, P.assign_p, P.cast_p, P.reshape_p,
                 P.expand_p, P.permute_p, P.pad_p, P.shrink_p, P.flip_p, P.as_strided_p,
                 P.cat_p, P.reduce_sum_p, P.unfold_p, P.fold_p}


def _saved_values(e):
    """(label, value) for each array a tape entry keeps for its rules."""
    if e.__class__ is tuple:
        prim, _, primals, _, out = e
        if prim in VALUES_UNUSED:
            return []
        vals = [(f"operand {k}", p) for k, p in enumerate(primals)]
        return vals + [("the output", out)]
    if e.__class__ is _Proj:
        return []
    if getattr(e.cf, "bwd", None) is not None:   # custom_vjp: bwd reads the residuals
        leaves = tree_flatten(e.res)[0]
        return [(f"residual {k}", r) for k, r in enumerate(leaves)]
    return [(f"operand {k}", p) for k, p in enumerate(e.primals)]   # custom_jvp: the rule


def _written(v, later):
    """The first write of ``later`` that changed ``v`` (a value saved by a tape entry), or
    None: a rebinding of v or of a tracer under it, or a write into its memory."""
    if not isinstance(v, ArrayBase):
        return None
    chain = []
    while isinstance(v, Tracer):
        chain.append(v)
        v = v.primal
    region = None
    for w in later:
        if w.tracer is not None:
            for t in chain:
                if t is w.tracer:
                    return w
        elif isinstance(v, Tensor):
            if region is None:
                region = writes.region_of(v) or False
            if region and region.overlaps(w.region):
                return w
    return None


_tape.configure(tracer=Tracer, tape_tracer=TapeTracer, leaked_fn=_leaked, bind_at_fn=bind_at,
                nondiff=NONDIFF, inexact=_INEXACT, vjp_rules=VJP_RULES, vjp_rule=VJPRule,
                user_vjp_fn=_user_vjp, proj=_Proj, add_prim=P.add_p, bind_fn=P.bind,
                call_impl_fn=call_impl, tape_cls=Tape, steps_cls=Steps,
                scalar_fn=Tensor._broadcast_scalar, interp_var_=_var,
                add_window_fn=add_window)


# -- forward mode ------------------------------------------------------------------------------

class JVPInterpreter(Interpreter):
    """Forward-mode interpreter: tracers carry a tangent alongside the primal."""
    __slots__ = ()

    def __init__(self, name="jvp", parent=None):
        Interpreter.__init__(self, name, parent)

    def new_input(self, x, t):
        return JVPTracer(self, x, t)

    def lift(self, x):
        """``x`` (a value of an enclosing level) as a tracer with a zero tangent."""
        return JVPTracer(self, x, _zeros_like(x))

    # process(prim, args, params): the loop in C (nx_rune.autodiff._tape.jvp_process): with an
    # operand ours, the primal is computed by the parent and the tangent by JVP_RULES with the
    # parent active; integer outputs and non-differentiable primitives give plain values
    process = _tape.jvp_process


_tape.configure_forward(jvp_tracer=JVPTracer, jvp_rules=JVP_RULES, jvp_rule=JVPRule,
                        apply_jvp_fn=_apply_jvp, jvp_cls=JVPInterpreter)


# -- no_grad -----------------------------------------------------------------------------------

class NoGradInterpreter(Interpreter):
    """Every op runs on concrete values: no enclosing transformation sees it.  Values batched
    by an enclosing ``vmap`` stay batched (``below``: the interpreter that was active when the
    block started; only its vmap levels are still used, to batch the ops)."""
    __slots__ = ("below",)

    def __init__(self):
        Interpreter.__init__(self, "no_grad", None)
        self.below = _var.get()
        self.stages = self.below is not None and self.below.stages

    def process(self, prim, args, params):
        args = [concrete(a) for a in args]
        for a in args:
            if isinstance(a, Tracer):
                return _batched_no_grad(prim, args, params)
        impl = prim.impl
        if impl is None:
            raise NotImplementedError(f"primitive {prim.name} has no implementation")
        for a in args:
            # a value traced abstractly (no_grad inside jit): the trace records the op and a
            # stop_gradient on its result, so that derivatives of the program skip it too
            if a.__class__ is not Tensor and a._concrete_tensor() is None and \
                    not getattr(a._interp, "done", True):
                out = a._interp.process(prim, args, params)
                return a._interp.process(P.stop_gradient_p, [out], {})
        return impl(*args, **params)


def _batched_no_grad(prim, args, params):
    """``prim`` under no_grad on operands of which some are batched by vmap (stripped of every
    differentiating level by ``concrete``): the innermost of their vmap levels batches it."""
    inner = None
    for a in args:
        if isinstance(a, Tracer):
            if a._interp.done:
                _leaked(a)
            if inner is None or _encloses(inner, a._interp):
                inner = a._interp
    return inner.process(prim, args, params)
