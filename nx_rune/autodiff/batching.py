"""Batching: ``vmap`` and its interpreter, in the style of the other transformations.

Each ``vmap`` call makes a ``BatchInterpreter`` (the tag of its tracers) whose parent is the
interpreter active at the call.  A ``BatchTracer`` carries the batched value of the level below
(a Tensor or a tracer of an enclosing transformation) and its batch axis ``bdim``; its
``shape`` is one example's.  A value that is the same for every example is simply not a tracer
of that level (the rules see its batch axis as None).

``process(prim, args, params)``: with no operand ours, the op goes to the parent unchanged;
otherwise ``BATCH_RULES[prim]`` (see ``batch_rules``) binds the primitive once on the whole
batch, with the parent active, so enclosing transformations see and differentiate it.

Composition: inside ``vmap``, ``grad``/``jvp``/... record or push the batched values (their
derivative rules run on batch tracers; rules that read values get one array per example, see
``batched_values``); around ``vmap``, they see the batched primitives.  ``custom_vjp`` and
``custom_jvp`` functions called on batched values are re-issued one level down with their
function and rules batched (``process_custom``).  Functions that only work on concrete values
(``nx.random``'s samplers) are mapped over the examples (``map_concrete``).
"""
from __future__ import annotations

import contextvars
import functools
import operator
from typing import Any, Callable

import numpy as np

from nx_rune import primitives as P
from nx_rune.autodiff.batch_rules import BATCH_RULES, BroadcastRule, batch_at, moveaxis
from nx_rune.autodiff.core import (
    Interpreter,
    Tracer,
    _leaked,
    alias_error,
    bind_at,
    call_finishing,
    concrete,
    write_back,
    written_alias,
)
from nx_rune.autodiff.custom import custom_jvp, custom_vjp
from nx_rune.autodiff.pytree import tree_flatten_up_to
from nx_rune.errors import ConcretizationTypeError, TracerArrayConversionError
from nx_rune.frontend import asarray
from nx_rune.primitives import bind
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_structure, tree_unflatten

__all__ = ["vmap", "BatchTracer", "BatchInterpreter", "call_rule", "map_concrete",
           "batch_level", "axis_frames", "AXIS_KEY"]

_var = P._interpreter

# The named axes of the active vmaps (``vmap(..., axis_name=...)``), innermost last: one
# ``(name, size, interpreter)`` frame each.  Kept apart from the interpreter chain because a
# trace (``jit`` inside the vmap) starts a chain of its own, yet its collectives must find the
# names around it.  AXIS_KEY holds the ``(name, size)`` pairs alone: jit's cache key includes
# it, since a program's collectives take their shapes from the sizes.
_AXIS_FRAMES: contextvars.ContextVar = contextvars.ContextVar("nx_rune_axis_frames", default=())
AXIS_KEY: contextvars.ContextVar = contextvars.ContextVar("nx_rune_axis_key", default=())


def axis_frames():
    """The ``(name, size, interpreter)`` frames of the named vmap axes, innermost last."""
    return _AXIS_FRAMES.get()


def _call_named(interp, fn, *args, **kwargs):
    """``call_finishing(interp, fn, ...)`` with ``interp``'s axis name (if any) bound."""
    name = interp.axis_name
    if name is None:
        return call_finishing(interp, fn, *args, **kwargs)
    t1 = _AXIS_FRAMES.set(_AXIS_FRAMES.get() + ((name, interp.axis_size, interp),))
    t2 = AXIS_KEY.set(AXIS_KEY.get() + ((name, interp.axis_size),))
    try:
        return call_finishing(interp, fn, *args, **kwargs)
    finally:
        AXIS_KEY.reset(t2)
        _AXIS_FRAMES.reset(t1)


class BatchTracer(Tracer):
    """A value batched by ``vmap``: ``primal`` holds every example's value, stacked along
    axis ``bdim``; ``shape`` is one example's shape."""
    # example_strides: for an argument of the vmapped function, one example's element
    # strides in the caller's array (vmap(f)(x)[i] is f(x[i]), a view of x with them), which
    # a reshape's view-or-copy decision starts from; None for computed values (C order)
    __slots__ = ("bdim", "example_strides")
    _batched = True

    def __init__(self, interp, val, bdim):
        self._interp = interp
        self.primal = val
        self.bdim = bdim
        self.example_strides = None
        self._alias = self._recipe = None
        s = val.shape
        self.shape = s[1:] if bdim == 0 else s[:bdim] + s[bdim + 1:]
        self.dtype = val.dtype

    def _take_state(self, other):
        self.bdim = other.bdim

    def _stopped(self):
        """This value with every differentiating level below it removed (stop_gradient)."""
        p = concrete(self.primal)
        return self if p is self.primal else BatchTracer(self._interp, p, self.bdim)

    def _batched_np(self):
        """Every example's values, the batch axis first (nested vmaps: outermost first)."""
        v = concrete(self.primal)
        arr = v._batched_np() if isinstance(v, Tracer) else v._np()
        outer = arr.ndim - v.ndim   # leading axes of enclosing vmap levels
        return np.moveaxis(arr, outer + self.bdim, outer)

    def _concrete(self):
        raise ConcretizationTypeError(
            f"Python needed one concrete value (bool(), float(), int(), item(), an index) of a "
            f"value batched by vmap (shape {self.shape} per example, {self._interp.axis_size} "
            f"examples): it has one value per example.  Use nx.where (or nx.select) instead "
            f"of Python control flow on it, or compute the Python value outside the vmapped "
            f"function")

    def _to_numpy(self, what):
        raise TracerArrayConversionError(
            f"{what} of a value batched by vmap (shape {self.shape} per example, "
            f"{self._interp.axis_size} examples): NumPy would compute outside the "
            f"transformation, on one array that is no example's value.  Use nx operations, "
            f"or return the value from the vmapped function")

    def __repr__(self):
        interp = self._interp
        state = ", finished" if interp.done else ""
        return (f"BatchTracer({interp.name}{state}, shape={self.shape}, dtype={self.dtype}, "
                f"axis_size={interp.axis_size}, batched values="
                f"{np.array2string(self._batched_np())})")

    __str__ = __repr__


class BatchInterpreter(Interpreter):
    """The interpreter of one ``vmap`` call over ``axis_size`` examples; ``axis_name``: the
    name its collectives (``lax.psum`` & co.) refer to it by, or None."""
    __slots__ = ("axis_size", "axis_name")

    def __init__(self, axis_size, name="vmap", parent=None, axis_name=None):
        Interpreter.__init__(self, name, parent)
        self.axis_size = axis_size
        self.axis_name = axis_name

    def new_tracer(self, val, bdim):
        """A tracer of this level for ``val`` (a value of the parent level) batched along
        ``bdim``."""
        return BatchTracer(self, val, bdim)

    def lift(self, x):
        """``x`` (the same for every example) as a tracer: broadcast along a new axis 0."""
        token = _var.set(self.parent)
        try:
            return BatchTracer(self, batch_at(x, None, self.axis_size, 0), 0)
        finally:
            _var.reset(token)

    def process(self, prim, args, params):
        ours = False
        vals = []
        dims = []
        for a in args:
            if a.__class__ is BatchTracer and a._interp is self:
                ours = True
                vals.append(a.primal)
                dims.append(a.bdim)
                continue
            if isinstance(a, Tracer) and a._interp.done:
                _leaked(a)
            vals.append(a)
            dims.append(None)
        if not ours:
            return bind_at(self.parent, prim, args, params)
        rule = BATCH_RULES.get(prim)
        if rule.__class__ is BroadcastRule and self.parent is None:
            # the common case inline: an elementwise op with every operand batched along one
            # axis, computed by the implementation
            d = dims[0]
            for k in dims:
                if k != d:
                    break
            else:
                impl = prim.impl
                if impl is not None:
                    return BatchTracer(self, impl(*vals, **params), d)
        if rule is None:
            raise NotImplementedError(
                f"vmap: no batching rule for primitive {prim.name}; register one in "
                f"nx_rune.autodiff.BATCH_RULES (see nx_rune.autodiff.batch_rules), or opt "
                f"into applying it once per example: nx_rune.autodiff.batch_rules.defloop("
                f"{prim.name}_p)")
        token = _var.set(self.parent)
        try:
            out, d = rule(self.axis_size, vals, dims, **params)
        finally:
            _var.reset(token)
        if d.__class__ is int:
            return BatchTracer(self, out, d)
        if d is None:
            return out
        return [o if k is None else BatchTracer(self, o, k) for o, k in zip(out, d)]

    def process_custom(self, cf, args, kwargs):
        """A ``custom_vjp``/``custom_jvp`` function applied to values of this level: the
        function and its rules batched, applied one level down (JAX's approach)."""
        leaves, td = tree_flatten((args, kwargs))
        vals, dims = self._unwrap_front(leaves)
        batched = _batched_custom(cf, dims, self.axis_size, tree_structure(args),
                                  self.axis_name)
        b_args, b_kwargs = tree_unflatten(td, vals)
        token = _var.set(self.parent)
        try:
            out = batched(*b_args, **b_kwargs)
        finally:
            _var.reset(token)
        o_leaves, o_td = tree_flatten(out)
        return tree_unflatten(o_td, [BatchTracer(self, o, 0) if isinstance(o, ArrayBase) else o
                                     for o in o_leaves])

    def _unwrap_front(self, leaves):
        """Our tracers among ``leaves`` as values with the batch axis first (dims 0), the rest
        as they are (dims None)."""
        vals, dims = [], []
        token = _var.set(self.parent)
        try:
            for x in leaves:
                if isinstance(x, Tracer) and x._interp is self:
                    vals.append(moveaxis(x.primal, x.bdim, 0))
                    dims.append(0)
                else:
                    vals.append(x)
                    dims.append(None)
        finally:
            _var.reset(token)
        return vals, dims


# -- running a function on a batch -----------------------------------------------------------------

def _argument(interp, x, d):
    """The BatchTracer of argument ``x`` batched along axis ``d``, with one example's strides
    in x's memory (C order when x has no array of its own: a jit trace assumes and checks
    that of its inputs)."""
    t = BatchTracer(interp, x, d)
    c = x._concrete_tensor() if hasattr(x, "_concrete_tensor") else None
    arr = c._np() if c is not None else None
    if arr is not None and arr.ndim == len(x.shape) and all(s % arr.itemsize == 0
                                                               for s in arr.strides):
        st = [s // arr.itemsize for s in arr.strides]
    else:
        st, acc = [], 1
        for n in reversed(x.shape):
            st.insert(0, acc)
            acc *= n
    t.example_strides = tuple(s for i, s in enumerate(st) if i != d)
    return t


def batched_call(fn, leaves, treedef, dims, size, name="vmap", axis_name=None):
    """``fn(*args, **kwargs)`` for every example, once: ``(args, kwargs)`` is
    ``tree_unflatten(treedef, leaves)`` with leaf i batched along ``dims[i]`` (None: shared).
    Returns the output with every array leaf batched along axis 0 (shared ones broadcast);
    other leaves (None, Python objects) are returned as they are.  ``axis_name``: the name
    the batch axis is bound to for collectives (the vmap level this call re-issues)."""
    interp = BatchInterpreter(size, name, _var.get(), axis_name)
    wrapped = [x if d is None else _argument(interp, x, d) for x, d in zip(leaves, dims)]
    args, kwargs = tree_unflatten(treedef, wrapped)
    out = _call_named(interp, fn, *args, **kwargs)
    o_leaves, o_td = tree_flatten(out)
    res = tree_unflatten(o_td, [_out_leaf(interp, o, 0) if isinstance(o, ArrayBase) else o
                                for o in o_leaves])
    for k, (t, x, d) in enumerate(zip(wrapped, leaves, dims)):
        if d is not None and (t.primal is not x or t.bdim != d):
            _write_back_batched(interp, t, (x, d), f"{name}: argument leaf {k}")
    return res


def _out_leaf(interp, o, axis):
    """Output ``o`` of ``interp``'s function as a value of the parent level with its batch at
    ``axis`` (an unbatched output is broadcast along it)."""
    if isinstance(o, Tracer) and o._interp is interp:
        return moveaxis(o.primal, o.bdim, axis)
    return batch_at(o, None, interp.axis_size, axis)


def call_rule(make_fn: Callable[..., Callable[..., Any]]) -> Callable[..., Any]:
    """The batching rule of a primitive that calls a function (a traced program): the function
    ``make_fn(**params)`` (taking the primitive's operands, returning one array or a list of
    them) runs once under a new vmap level.  For a jit's call primitive::

        BATCH_RULES[call_p] = call_rule(lambda *, program, **_: program.evaluate)
    """
    def rule(size, args, dims, **params):
        fn = make_fn(**params)
        leaves, td = tree_flatten((tuple(args), {}))
        out = batched_call(fn, leaves, td, dims, size)
        if isinstance(out, (list, tuple)):
            return list(out), [0] * len(out)
        return out, 0
    return rule


def _batched_custom(cf, dims, size, args_td, axis_name=None):
    """``cf`` (a custom_vjp or custom_jvp) with its function and rules mapped over a batch of
    ``size``: the leaves of ``(args, kwargs)`` batched along axis 0 where ``dims`` says 0;
    every array leaf of the outputs, residuals and cotangents batched along axis 0."""
    n_args = args_td.num_leaves
    arg_dims = dims[:n_args]

    def mapped(fn):
        def run(*args, **kwargs):
            leaves, td = tree_flatten((args, kwargs))
            return batched_call(fn, leaves, td, dims, size, f"vmap of {cf.__name__}",
                                axis_name)
        return run

    def at0(leaves):
        return [0 if isinstance(x, ArrayBase) else None for x in leaves]

    if isinstance(cf, custom_vjp):
        new = custom_vjp(mapped(cf.fun))

        def bwd(res, g):
            leaves, td = tree_flatten(((res, g), {}))
            ct = batched_call(cf.bwd, leaves, td, at0(leaves), size, f"vmap of {cf.__name__}",
                              axis_name)
            if not isinstance(ct, (tuple, list)):
                return ct      # custom's own check names the mistake
            cts = tree_flatten_up_to(args_td, tuple(ct))
            # an argument shared by the examples gets the sum of their cotangents
            cts = [c if d is not None or not isinstance(c, ArrayBase) else
                   bind(P.reduce_sum_p, c, axes=(0,), keepdims=False)
                   for c, d in zip(cts, arg_dims)]
            return tuple(tree_unflatten(args_td, cts))
        new.defvjp(mapped(cf.fwd), bwd)
    elif isinstance(cf, custom_jvp):
        new = custom_jvp(mapped(cf.fun))

        def rule(primals, tangents):
            leaves, td = tree_flatten(((primals, tangents), {}))
            return batched_call(cf.jvp_rule, leaves, td, list(arg_dims) * 2, size,
                                f"vmap of {cf.__name__}", axis_name)
        new.defjvp(rule)
    else:
        raise TypeError(f"vmap: unsupported custom function {cf!r}")
    new.__name__ = cf.__name__
    return new


# -- functions of concrete values ------------------------------------------------------------------

def batch_level(x):
    """The innermost vmap level batching ``x`` (under any differentiating levels), or None."""
    if not isinstance(x, Tracer):
        return None
    c = concrete(x)
    return c._interp if isinstance(c, Tracer) else None


def map_concrete(fn, args, kwargs):
    """``fn(*args, **kwargs)`` for a function that needs concrete values (nx.random's
    samplers), called with some arguments batched by vmap: ``fn`` is applied example by
    example (a batched argument sliced, the others shared) and the results are stacked into a
    value batched along axis 0.  Nested vmaps are mapped level by level, innermost first."""
    names = list(range(len(args))) + list(kwargs)
    values = list(args) + list(kwargs.values())
    level = None
    for v in values:
        lv = batch_level(v)
        if lv is not None and (level is None or _deeper(lv, level)):
            level = lv
    if level is None:
        return fn(*args, **kwargs)
    if level.done:
        _leaked(next(v for v in values if batch_level(v) is level))
    stripped = []
    for v in values:
        c = concrete(v) if isinstance(v, Tracer) else v
        stripped.append(c)
    outs = []
    token = _var.set(level.parent)
    try:
        for i in range(level.axis_size):
            vals = [_example(c, level, i) for c in stripped]
            a = vals[:len(args)]
            kw = dict(zip(names[len(args):], vals[len(args):]))
            outs.append(map_concrete(fn, a, kw))
        if level.axis_size == 0:
            raise ValueError("vmap over 0 examples of a function of concrete values (nx.random): "
                             "there is no example to compute the output's shape from")
        stacked = bind(P.cat_p, *[bind(P.reshape_p, asarray(o), shape=(1,) + o.shape)
                                  for o in outs], axis=0)
    finally:
        _var.reset(token)
    return BatchTracer(level, stacked, 0)


def _example(c, level, i):
    """Example ``i`` at ``level`` of ``c`` (a concrete value, or a stripped batch tracer)."""
    if not (isinstance(c, Tracer) and c._interp is level):
        return c
    v, d = c.primal, c.bdim
    lim = [(0, n) for n in v.shape]
    lim[d] = (i, i + 1)
    v = bind(P.shrink_p, v, limits=tuple(lim))
    return bind(P.reshape_p, v, shape=v.shape[:d] + v.shape[d + 1:])


def _deeper(a, b):
    """True when interpreter ``a`` is nested inside ``b``."""
    p = a.parent
    while p is not None:
        if p is b:
            return True
        p = p.parent
    return False


# -- vmap ------------------------------------------------------------------------------------------

def _is_axis_leaf(x):
    return x is None


def _check_spec(spec, name):
    """in_axes/out_axes: a pytree whose leaves are ints or None."""
    leaves, _ = tree_flatten(spec, _is_axis_leaf)
    for a in leaves:
        if a is not None and (isinstance(a, (bool, np.bool_)) or not _is_int(a)):
            raise TypeError(f"vmap: {name} must be an int, None, or a pytree of them (a "
                            f"prefix of the {'arguments' if name == 'in_axes' else 'outputs'}),"
                            f" got {a!r} in {spec!r}")


def _is_int(a):
    try:
        operator.index(a)
    except TypeError:
        return False
    return True


def _leaf_axes(spec, tree, what):
    """The axis (or None) of every leaf of ``tree``, from ``spec``, a prefix of it."""
    spec_td = tree_structure(spec, _is_axis_leaf)
    spec_leaves = tree_flatten(spec, _is_axis_leaf)[0]
    try:
        subtrees = spec_td.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"vmap: {what} does not match its axes spec {spec!r} (the spec must "
                         f"be a prefix of its structure {_structure(tree)}): {e}") from None
    out = []
    for ax, sub in zip(spec_leaves, subtrees):
        n = len(tree_flatten(sub)[0])
        out.extend([None if ax is None else operator.index(ax)] * n)
    return out


def _structure(tree):
    try:
        return tree_structure(tree)
    except (TypeError, ValueError):
        return type(tree).__name__


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None, *, axis_name: Any = None,
         spmd_axis_name: Any = None) -> Callable[..., Any]:
    """``fun`` mapped over a batch axis of its arguments, as one batched computation.

    ``in_axes``: for each positional argument, the axis its examples are stacked along: an
    int (negative counts from the end of each leaf's shape), None (the argument is shared by
    every example), or a tuple with one entry per positional argument, each an int, None or a
    pytree prefix of that argument.  Keyword arguments are mapped along axis 0.
    ``out_axes``: where the batch axis goes in each output leaf (int, None for an output that
    must not depend on the batch, or a pytree prefix of the output); negative values count in
    the output's rank.  ``axis_size``: the number of examples, needed when no argument is
    mapped.  ``axis_name``: a hashable name for the batch axis, which the collectives inside
    ``fun`` (``lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
    ``ppermute``, ``axis_index``) refer to; as in JAX, a string given in ``axis_size``'s place
    (JAX's fourth positional parameter is ``axis_name``) is taken as the name.
    ``spmd_axis_name`` is accepted for JAX's signature and ignored (one device).  Returns a
    function with ``fun``'s signature whose outputs have the batch axis.

    Shapes: an argument leaf of shape ``S`` mapped along axis ``a`` gives ``fun`` one example
    of shape ``S`` without axis ``a``; dtypes are unchanged.  ValueError (naming the argument
    and both sizes) for mapped axes of different sizes, an axis out of range, an ``in_axes``
    tree that does not match the arguments, or ``out_axes`` that do not fit the outputs.
    Composes with every transformation, in any order and depth: ``vmap(grad(loss),
    in_axes=(None, 0, 0))`` gives per-example gradients.

    Examples
    --------
    >>> import nx_rune as nx
    >>> x = nx.arange(6.0).reshape(2, 3)
    >>> nx.vmap(lambda row: row @ row)(x)
    Tensor([ 5., 50.], dtype=float32)
    >>> nx.vmap(lambda a, b: a * b, in_axes=(0, None))(x, 10.0)
    Tensor([[ 0., 10., 20.],
           [30., 40., 50.]], dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"vmap: expected a function, got {type(fun).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    if isinstance(axis_size, str) and axis_name is None:
        axis_name, axis_size = axis_size, None      # JAX's positional order
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise TypeError(f"vmap: axis_name must be hashable (a string, usually), got "
                            f"{axis_name!r}") from None
    if axis_size is not None:
        if isinstance(axis_size, (bool, np.bool_)) or not _is_int(axis_size):
            raise TypeError(f"vmap: axis_size must be an int or None, got {axis_size!r}")
        axis_size = operator.index(axis_size)
        if axis_size < 0:
            raise ValueError(f"vmap: axis_size must be >= 0, got {axis_size}")

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise ValueError(f"vmap: in_axes has {len(in_axes)} entries (one per positional "
                                 f"argument) but the function was called with {len(args)} "
                                 f"positional arguments")
            specs = in_axes
        else:
            specs = (in_axes,) * len(args)
        # every leaf with its axis and where it came from: (argument, leaf number, count)
        leaves, axes, where, tdefs = [], [], [], []
        for i, (a, spec) in enumerate(zip(args, specs)):
            ls, td = tree_flatten(a)
            tdefs.append(td)
            if spec is None or spec.__class__ is int:
                axes += [spec] * len(ls)
            else:
                axes += _leaf_axes(spec, a, f"argument {i}")
            leaves += ls
            where += [(i, j, len(ls)) for j in range(len(ls))]
        for k in sorted(kwargs):
            ls, td = tree_flatten(kwargs[k])
            tdefs.append(td)
            leaves += ls
            axes += [0] * len(ls)
            where += [(repr(k), j, len(ls)) for j in range(len(ls))]
        size, first = axis_size, None
        vals = []
        for k, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                vals.append(x)
                continue
            if not isinstance(x, ArrayBase):
                x = _as_array(x, _leaf_name(where[k]))
            nd = len(x.shape)
            if nd == 0 or not -nd <= ax < nd:
                raise ValueError(f"vmap: in_axes {ax} is out of range for "
                                 f"{_leaf_name(where[k])} of shape {x.shape} (rank {nd})")
            if ax < 0:
                ax += nd
            n = x.shape[ax]
            if size is None:
                size, first = n, k
            elif n != size:
                other = (f"axis_size is {size}" if first is None else
                         f"{_leaf_name(where[first])} has size {size} along its mapped axis")
                raise ValueError(f"vmap: {_leaf_name(where[k])} has size {n} along its mapped "
                                 f"axis {ax}, but {other}; mapped axes must have one size")
            vals.append((x, ax))
        if size is None:
            raise ValueError("vmap: no argument is mapped (every in_axes entry is None); pass "
                             "axis_size to give the number of examples")
        interp = BatchInterpreter(size, "vmap", _var.get(), axis_name)
        wrapped = [v if ax is None else _argument(interp, v[0], v[1])
                   for v, ax in zip(vals, axes)]
        it = iter(wrapped)
        new_args = [tree_unflatten(td, [next(it) for _ in range(td.num_leaves)])
                    for td in tdefs[:len(args)]]
        new_kwargs = {k: tree_unflatten(td, [next(it) for _ in range(td.num_leaves)])
                      for k, td in zip(sorted(kwargs), tdefs[len(args):])}
        out = _call_named(interp, fun, *new_args, **new_kwargs)
        res = _unbatch_outputs(interp, out, out_axes)
        changed = [k for k, (t, v) in enumerate(zip(wrapped, vals))
                   if t is not v and (t.primal is not v[0] or t.bdim != v[1])]
        if changed:
            found = written_alias(changed, [v if t is v else v[0]
                                            for t, v in zip(wrapped, vals)])
            if found is not None:
                raise alias_error("vmap", _leaf_name(where[found[0]]),
                                  _leaf_name(where[found[1]]))
            for k in changed:
                _write_back_batched(interp, wrapped[k], vals[k],
                                    f"vmap: {_leaf_name(where[k])}")
        return res

    return vmap_f


def _write_back_batched(interp, t, v, what):
    """The function wrote in place into the mapped argument ``v = (stacked array, axis)``
    (its tracer ``t`` was rebound): write every example's final value into it, along its
    mapped axis, as the eager loop over the examples would have left it."""
    x, ax = v
    token = _var.set(interp.parent)
    try:
        final = t.primal if t.bdim == ax else moveaxis(t.primal, t.bdim, ax)
        write_back(x, final, what)
    finally:
        _var.reset(token)


def _leaf_name(w):
    """How an error names a leaf: ``(argument index or repr of a keyword, leaf, count)``."""
    arg, j, n = w
    name = f"argument {arg}" if isinstance(arg, int) else f"keyword argument {arg}"
    return name + (f" (leaf {j})" if n > 1 else "")


def _as_array(x, name):
    try:
        return asarray(x)
    except TypeError as e:
        raise TypeError(f"vmap: {name} is mapped but is not an array: {e}") from None


def _unbatch_outputs(interp, out, out_axes):
    leaves, td = tree_flatten(out)
    if out_axes is None or out_axes.__class__ is int:
        oaxes = [out_axes] * len(leaves)
    else:
        oaxes = _leaf_axes(out_axes, out, "the output")
    res = []
    for k, (o, ax) in enumerate(zip(leaves, oaxes)):
        what = "the output" if len(leaves) == 1 else f"output leaf {k}"
        if not isinstance(o, ArrayBase):
            try:
                o = asarray(o)
            except TypeError:
                raise TypeError(f"vmap: {what} is a {type(o).__name__}, not an array") from None
        ours = isinstance(o, Tracer) and o._interp is interp
        if ax is None:
            if ours:
                raise ValueError(f"vmap: out_axes is None for {what} but it depends on the "
                                 f"mapped arguments (it differs between the "
                                 f"{interp.axis_size} examples); give it an axis")
            res.append(o)
            continue
        nd = o.ndim + 1
        if not -nd <= ax < nd:
            raise ValueError(f"vmap: out_axes {ax} does not fit {what} of shape {o.shape} "
                             f"per example: the batched output has rank {nd}, so out_axes must "
                             f"be in [{-nd}, {nd - 1}]")
        token = _var.set(interp.parent)
        try:
            res.append(_out_leaf(interp, o, ax % nd))
        finally:
            _var.reset(token)
    return tree_unflatten(td, res)
