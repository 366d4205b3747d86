"""The transformations: grad, vjp, jvp, linearize and gradient stopping (the jacobians and
hessians build on them in ``jacobians``).

All accept pytrees (``nx.tree_util``: tuples, lists, dicts, None, registered classes) of arrays
as inputs and outputs.  Inputs may be Tensors, tracers, NumPy arrays or Python numbers
(converted with ``nx.asarray``: Python floats become float32, float64 in x64 mode, as in JAX;
float64 ndarrays stay float64).  Transformations nest to any depth and in any order; each call
is its own level, so perturbations never mix.

Complex numbers follow JAX.  Cotangents are transposes without conjugation, so ``grad`` of a
real-valued ``f`` of complex ``z = x + iy`` is ``df/dx - i df/dy`` (the conjugate of the
steepest-ascent direction: ``grad(lambda z: abs(z)**2)(z) == 2 * conj(z)``; step with
``z - lr * conj(g)``).  ``holomorphic=True`` (grad, value_and_grad, jacfwd, jacrev, hessian)
differentiates complex-valued ``f`` of complex inputs: the result is the complex derivative
``f'(z)``.  Complex outputs without it are refused (TypeError naming the fix), as in JAX.
"""
from __future__ import annotations

import contextvars
import functools
import inspect
import operator
from typing import Any, Callable, Sequence

import numpy as np

from nx_rune import backend, writes
from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.api_vjp import VJP, VJP_OF
from nx_rune.autodiff.batching import vmap  # noqa: F401 (re-exported)
from nx_rune.autodiff.core import (
    JVPInterpreter,
    NoGradInterpreter,
    Tape,
    Tracer,
    alias_error,
    call_finishing,
    concrete,
    is_inexact,
    write_back,
    written_alias,
)
from nx_rune.autodiff.pytree import tree_flatten_up_to
from nx_rune.frontend import asarray, zeros
from nx_rune.tensor import ArrayBase, Tensor
from nx_rune.tree_util import tree_flatten, tree_map, tree_unflatten
from nx_rune.typing import PyTree

__all__ = ["grad", "value_and_grad", "grads", "value_and_grads", "vjp", "jvp", "jvp_aux", "jvps",
           "linearize", "stop_gradient", "detach", "no_grad"]

_var = P._interpreter


# -- helpers -------------------------------------------------------------------------------

def _arr(x, what):
    if isinstance(x, ArrayBase):
        return x
    try:
        return asarray(x)
    except TypeError as e:
        raise TypeError(f"{what}: expected arrays (or numbers) as pytree leaves, got "
                        f"{type(x).__name__}: {e}") from None


def _argnums(argnums, nargs, fname):
    """``argnums`` (an int, NumPy integer, or a sequence of them) as a tuple of distinct
    non-negative positions, and whether it was a single int."""
    single = not isinstance(argnums, (tuple, list))
    try:
        nums = (argnums,) if single else tuple(argnums)
        nums = tuple(_argnum(a) for a in nums)
    except TypeError:
        raise TypeError(f"{fname}: argnums must be an int or a tuple of ints, got "
                        f"{argnums!r}") from None
    if not nums:
        raise ValueError(f"{fname}: argnums must not be empty")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums {a} is out of range for a function called with "
                             f"{nargs} positional arguments")
        if a % nargs in out:
            raise ValueError(f"{fname}: argnums {tuple(argnums)} names argument {a % nargs} "
                             f"twice")
        out.append(a % nargs)
    return tuple(out), single


def _argnums_cache(argnums, fname="grad"):
    """``nargs -> _argnums(argnums, nargs, fname)``, remembered per number of arguments when
    ``argnums`` is immutable (an int or a tuple: the common case, checked once per arity)."""
    if not (type(argnums) is int or type(argnums) is tuple):
        return lambda nargs: _argnums(argnums, nargs, fname)
    cache = {}

    def argnums_for(nargs):
        got = cache.get(nargs)
        if got is None:
            got = cache[nargs] = _argnums(argnums, nargs, fname)
        return got
    return argnums_for


def _argnum(a):
    if isinstance(a, (bool, np.bool_)):  # an int to operator.index, but never meant as one
        raise TypeError(a)
    return operator.index(a)


def _check_callable(f, fname):
    if not callable(f):
        raise TypeError(f"{fname}: expected a function, got {type(f).__name__}")


def _ours(x, interp):
    return isinstance(x, Tracer) and x._interp is interp


def _strip(tree, interp):
    """Our tracers in ``tree`` replaced by their primal values (aux outputs, values)."""
    return tree_map(lambda x: x.primal if _ours(x, interp) else x, tree)


def _split_aux(out, fname):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{fname}: with has_aux=True the function must return a pair "
                        f"(output, aux), got {type(out).__name__}")
    return out[0], out[1]


def _zeros_for(x):
    return zeros(x.shape, x.dtype)


def _same_aval(v, like):
    """Whether ``v`` is an array of ``like``'s shape and dtype (``_cast_like`` returns it as
    it is: the common case, checked without its call)."""
    return isinstance(v, ArrayBase) and v.shape == like.shape and v.dtype == like.dtype


def _cast_like(v, like, what):
    """``v`` as an array of ``like``'s shape and dtype (ValueError on a shape mismatch)."""
    v = _arr(v, what)
    if v.shape != like.shape:
        raise ValueError(f"{what}: shape {v.shape} does not match the primal's shape "
                         f"{like.shape}")
    if v.dtype != like.dtype:
        if v.dtype.kind == "c" and like.dtype.kind != "c":
            raise TypeError(f"{what}: a complex value ({v.dtype}) for a real primal of dtype "
                            f"{like.dtype}: its imaginary part would be lost; pass a real "
                            f"value (nx.real(v)) or make the primal complex")
        v = ops.astype(v, like.dtype)
    return v


# the treedef of a single leaf: an argument that is an array needs no flattening
_LEAF_TD = tree_flatten(0)[1]


def _flatten(x):
    """tree_flatten, at once for an array (the common argument)."""
    if isinstance(x, ArrayBase):
        return [x], _LEAF_TD
    return tree_flatten(x)


def _unflatten(td, leaves):
    """tree_unflatten, at once for a single leaf."""
    if td is _LEAF_TD:
        return leaves[0]
    return tree_unflatten(td, leaves)


def _trace_inputs(interp, args, nums, fname, make, require_float=True, holomorphic=False,
                  made=None):
    """Replace the leaves of args[i] (i in nums) by tracers from ``make(x)``; returns the new
    args and, per argnum, (tracers or None per leaf, treedef).  ``made`` (a list) receives
    ``(x, tracer, description)`` per tracer, for ``_write_back``."""
    args = list(args)
    inputs = []
    for i in nums:
        a = args[i]
        if isinstance(a, ArrayBase) and is_inexact(a.dtype) and \
                not (holomorphic and a.dtype.kind != "c"):
            # one float array (the common argument): what the loop below does for it
            t = args[i] = make(a)
            if made is not None:
                made.append((a, t, f"argument {i}"))
            inputs.append(([_Input(t)], _LEAF_TD))
            continue
        leaves, td = _flatten(a)
        tracers = []
        for leaf in leaves:
            x = _arr(leaf, fname)
            if holomorphic and x.dtype.kind != "c":
                raise TypeError(f"{fname} with holomorphic=True requires inputs with complex "
                                f"dtype, but argument {i} has a leaf of dtype {x.dtype}")
            if not is_inexact(x.dtype):
                if require_float:
                    raise TypeError(
                        f"{fname} requires float (or complex) inputs, but argument {i} has a "
                        f"leaf of dtype {x.dtype}; differentiate only float arguments (argnums), "
                        f"convert with .astype(nx.float32), or pass allow_int=True (its "
                        f"gradient is float0 zeros, as JAX's)")
                tracers.append(None)
                continue
            t = make(x)
            if made is not None:
                made.append((x, t, f"argument {i}" if td is _LEAF_TD else
                             f"argument {i} (leaf {len(tracers)})"))
            tracers.append(t)
        args[i] = _unflatten(td, [t if t is not None else leaf
                                  for t, leaf in zip(tracers, leaves)])
        # the inputs as they are now: f may rebind a tracer (x[idx] = v), not its input
        inputs.append(([_Input(t) if t is not None else None for t in tracers], td))
    return args, inputs


def _unaliased(per, seeds=()):
    """The gradient leaves (lists, one per argument), each a writable Tensor with memory of
    its own: a leaf that cannot be written (a broadcast, padded or read-only constant, as the
    rules of sum or of slicing give) or that shares memory with another leaf or with a
    cotangent seed (add's rule hands one cotangent to both operands) is replaced by a copy,
    so that ``gx *= lr`` works and leaves ``gy`` and the caller's cotangent alone.  (The
    lists of ``per`` are updated in place and returned.)"""
    if len(per) == 1 and len(per[0]) == 1 and type(per[0][0]) is Tensor and len(seeds) < 2:
        # one gradient leaf and at most one seed (the common case), without the lists below
        g = per[0][0]
        if not _writable(g):
            per[0][0] = ops.copy(g)
            return per
        if not seeds or not isinstance(seeds[0][1], Tensor) or \
                _distinct_owners((g, seeds[0][1])):
            return per
    found = []
    for i, leaves in enumerate(per):
        for j, g in enumerate(leaves):
            if type(g) is Tensor or isinstance(g, Tensor):
                if _writable(g):
                    found.append((i, j))
                else:
                    leaves[j] = ops.copy(g)
    seeds = [c for _, c in seeds if isinstance(c, Tensor)]
    if len(found) + len(seeds) < 2 or _distinct_owners([per[i][j] for i, j in found] + seeds):
        return per
    seeded = [(r.lo, r.hi) for r in map(writes.region_of, seeds) if r is not None]
    spans = []
    for i, j in found:
        r = writes.region_of(per[i][j])
        if r is None:
            continue
        if any(r.lo < hi and lo < r.hi for lo, hi in seeded):
            per[i][j] = ops.copy(per[i][j])
        else:
            spans.append((r.lo, r.hi, i, j))
    spans.sort()
    reach = None
    for lo, hi, i, j in spans:
        if reach is not None and lo < reach:    # overlaps memory of an earlier leaf
            per[i][j] = ops.copy(per[i][j])
            continue
        reach = hi if reach is None else max(reach, hi)
    return per


def _distinct_owners(tensors):
    """Whether the Tensors certainly share no memory: each wraps an ndarray whose memory belongs
    to an ndarray without a base (a fresh result: the ndarray itself, or its ``base`` when that
    is such an ndarray, as for ``nx.asarray`` of a NumPy array or a view of a result), and no
    two have the same owner.  (The memory of two such owners never overlaps; anything else
    takes the byte-range comparison.)"""
    owners = []
    for t in tensors:
        arr = t._arr
        if t._view is not None or arr is None:
            return False
        base = arr.base
        if base is not None:
            # NumPy collapses a view's base to the ndarray that owns the memory
            if type(base) is not np.ndarray or base.base is not None:
                return False
            arr = base
        for other in owners:
            if other is arr:
                return False
        owners.append(arr)
    return True


def _writable(t):
    arr = t._arr
    if t._view is None:   # wraps an ndarray: a result, or a stride-0 constant (read-only)
        flags = arr.flags
        return flags.writeable and flags.c_contiguous
    try:
        backend.check_writable(t)
    except ValueError:
        return False
    return True


def _write_back(made, fname, tape=None):
    """After the transformed call: each argument whose tracer the function rebound (wrote in
    place: ``x += 1``, ``x[i] = v``, through a view) gets its final primal value written
    back (``core.write_back``), as the eager call leaves it.  ``tape``: a tape whose backward
    pass runs later (vjp, linearize): the values its entries saved that share the argument's
    memory are copied first (``Tape.keep_saved``), so that the write-back does not invalidate
    them.  Returns None, or ``{id(final value): (final value, argument)}`` for
    ``_as_written``."""
    changed = [k for k, (x, t, _) in enumerate(made) if t.primal is not x]
    if not changed:
        return None
    found = written_alias(changed, [x for x, _, _ in made])
    if found is not None:
        raise alias_error(fname, made[found[0]][2], made[found[1]][2])
    written = None
    for x, t, what in made:
        final = t.primal
        if final is x:
            continue
        if tape is not None:
            tape.keep_saved(x)
        write_back(x, final, f"{fname}: {what}")
        if written is None:
            written = {}
        written[id(final)] = (final, x)
    return written


def _as_written(values, written):
    """``values`` (output primals) where an output is the final value of a written argument:
    that argument itself, which now holds it (eagerly ``return x`` after ``x += 1`` gives
    x)."""
    if not written:
        return values
    return [written.get(id(v), (None, v))[1] for v in values]


class _Input:
    """An input tracer's tape position, shape and dtype, taken before f runs."""
    __slots__ = ("_idx", "shape", "dtype")

    def __init__(self, t):
        self._idx, self.shape, self.dtype = getattr(t, "_idx", None), t.shape, t.dtype


# -- reverse mode ----------------------------------------------------------------------------

# JAX's dtype of the gradient of an integer input (grad with allow_int=True): no values
float0 = np.dtype([("float0", np.void, 0)])


def _check_reduce_axes(reduce_axes, fname):
    if reduce_axes:
        raise NotImplementedError(f"reduce_axes argument to {fname} is deprecated (JAX "
                                  f"removed it; nx_rune has no named axes): pass ()")


def _check_flag(value, name, fname):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fname}: {name} must be True or False, got {value!r}")
    return bool(value)


def _scalar_hint(shape):
    """The fix for a grad of a size-1 non-scalar output (autograd accepts those, JAX not)."""
    if len(shape) == 1 and shape[0] == 1:
        return "return out[0] or out.sum() from f (autograd accepts shape (1,); nx, as JAX, not)"
    return "return out.sum() (or out.reshape(())) from f"


def _check_grad_output(out, holomorphic, fname="grad"):
    """JAX's rules for the output of a function given to grad: a scalar; real float unless
    holomorphic, complex with it."""
    if out.shape != ():
        if out.size == 1:
            raise TypeError(f"{fname} requires a scalar output (shape ()), but the function "
                            f"returned shape {out.shape}: {_scalar_hint(out.shape)}")
        raise TypeError(f"{fname} requires a scalar output (shape ()), but the function "
                        f"returned shape {out.shape}; use nx.vjp or nx.jacrev for "
                        f"non-scalar outputs (or reduce it: out.sum())")
    kind = out.dtype.kind
    if holomorphic:
        if kind != "c":
            raise TypeError(f"{fname} with holomorphic=True requires outputs with complex "
                            f"dtype, but the function returned dtype {out.dtype}")
    elif kind == "c":
        raise TypeError(f"{fname} requires real-valued outputs (a float dtype), but the function "
                        f"returned dtype {out.dtype}. For holomorphic differentiation, pass "
                        f"holomorphic=True. For differentiation of non-holomorphic functions "
                        f"with complex outputs, use nx.vjp directly (or differentiate a real "
                        f"part: nx.real(out), nx.abs(out))")
    elif kind != "f":
        raise TypeError(f"{fname} requires a real float output, but the function returned "
                        f"dtype {out.dtype}; for integer outputs use nx.vjp directly")


def value_and_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """``f``'s value and gradient w.r.t. ``argnums`` (int or tuple); ``f`` returns a scalar.

    Returns a function giving ``(value, grad)`` (``((value, aux), grad)`` with has_aux); grad
    has the structure of the argument (a tuple of them for a tuple argnums), its shapes and
    dtypes.  ``f``'s output must be a real float scalar; its inputs real or complex floats (for
    complex inputs, JAX's convention: ``df/dx - i df/dy``).  With ``holomorphic=True`` inputs
    and output must be complex and the gradient is ``f'(z)``.  With ``allow_int=True``
    integer and bool inputs are accepted and get JAX's trivial gradient: a NumPy array of
    dtype ``float0`` of their shape.  ``reduce_axes`` is JAX's removed option: only ``()``
    is accepted (NotImplementedError otherwise, as in JAX).
    """
    _check_callable(f, "value_and_grad")
    holomorphic = _check_flag(holomorphic, "holomorphic", "value_and_grad")
    allow_int = _check_flag(allow_int, "allow_int", "value_and_grad")
    _check_reduce_axes(reduce_axes, "grad")

    argnums_for = _argnums_cache(argnums)

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        nums, single = argnums_for(len(args))
        tape = Tape("grad", _var.get())
        made = []
        shapes = [[np.shape(x) for x in _flatten(args[i])[0]] for i in nums] if allow_int \
            else None
        args, inputs = _trace_inputs(tape, args, nums, "grad", tape.new_input,
                                     require_float=not allow_int, holomorphic=holomorphic,
                                     made=made)
        out = call_finishing(tape, f, *args, **kwargs)
        try:
            return _value_and_grad_of(tape, out, inputs, single, has_aux, holomorphic, shapes)
        finally:
            _write_back(made, "grad")

    def _value_and_grad_of(tape, out, inputs, single, has_aux, holomorphic, shapes):
        aux = None
        if has_aux:
            out, aux = _split_aux(out, "grad")
            aux = _strip(aux, tape)
        if not isinstance(out, ArrayBase):
            if isinstance(out, (tuple, list, dict)) or out is None:
                raise TypeError(f"grad requires a function returning a scalar array, got "
                                f"{type(out).__name__}")
            out = _arr(out, "grad")
        _check_grad_output(out, holomorphic)
        if _ours(out, tape):
            # the seed: a cached read-only 1 (a gradient leaf that is the seed itself is
            # copied by _unaliased, as every read-only one)
            acc = tape.backward([(out._idx, Tensor._broadcast_scalar(1, out.dtype, ()))])
            value = out.primal
        else:
            acc, value = None, out
        if single and inputs[0][1] is _LEAF_TD and inputs[0][0][0] is not None:
            # one array argument (the common case): what the loops below do for one leaf
            t = inputs[0][0][0]
            g = acc[t._idx] if acc is not None else None
            if g is None:
                g = _zeros_for(t)
            elif not _same_aval(g, t):
                g = _cast_like(g, t, "grad")
            if type(g) is Tensor and not _writable(g):
                g = ops.copy(g)
            return ((value, aux) if has_aux else value), g
        per = []
        for k, (tracers, td) in enumerate(inputs):
            leaves = []
            for j, t in enumerate(tracers):
                if t is None:       # an integer input (allow_int): JAX's float0 gradient
                    leaves.append(np.zeros(shapes[k][j], float0))
                    continue
                g = acc[t._idx] if acc is not None else None
                if g is None:
                    g = _zeros_for(t)
                elif not _same_aval(g, t):
                    g = _cast_like(g, t, "grad")
                leaves.append(g)
            per.append(leaves)
        gs = [_unflatten(td, leaves) for (_, td), leaves in zip(inputs, _unaliased(per))]
        g = gs[0] if single else tuple(gs)
        return ((value, aux) if has_aux else value), g

    return value_and_grad_f


def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False,
         reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The gradient of scalar-valued ``f`` w.r.t. ``argnums``: ``grad(f)(x)`` has x's structure,
    shapes and dtypes.  With has_aux, ``f`` returns ``(out, aux)`` and the result is
    ``(grad, aux)``.  Complex inputs of a real ``f`` get JAX's gradient ``df/dx - i df/dy``;
    ``holomorphic=True`` takes complex inputs and a complex output and gives ``f'(z)``.
    TypeError for a non-scalar, integer or (without holomorphic) complex output and for an
    integer input (unless ``allow_int=True``: its gradient is JAX's ``float0`` zeros), each
    naming the fix.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.grad(lambda x: x ** 3)(2.0)
    Tensor(12., dtype=float32)
    >>> nx.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
    (Tensor(5., dtype=float32), Tensor(2., dtype=float32))
    """
    _check_callable(f, "grad")
    vg = value_and_grad(f, argnums, has_aux, _check_flag(holomorphic, "holomorphic", "grad"),
                        _check_flag(allow_int, "allow_int", "grad"), reduce_axes)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def grads(f: Callable[..., Any]) -> Callable[..., Any]:
    """``grads(f)(xs)``: the gradients of scalar ``f(xs)`` w.r.t. each tensor of the list xs."""
    g = grad(f)
    return lambda xs: list(g(list(xs)))


def value_and_grads(f: Callable[..., Any]) -> Callable[..., Any]:
    """``value_and_grads(f)(xs)`` -> ``(f(xs), [the gradient with respect to each tensor of
    xs])``."""
    vg = value_and_grad(f)

    def value_and_grads_f(xs):
        v, g = vg(list(xs))
        return v, list(g)
    return value_and_grads_f


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False,
        reduce_axes: Sequence[Any] = ()) -> tuple[Any, ...]:
    """``(out, vjp_fn)``: ``vjp_fn(cotangent)`` gives a tuple of cotangents, one per primal
    (each with that primal's structure; None for integer leaves).  ``vjp_fn`` may be called
    many times.  With has_aux: ``(out, vjp_fn, aux)``.  ``reduce_axes``: JAX's removed
    option, only ``()``.  ``vjp_fn`` is a VJP object (``nx_rune.autodiff.api_vjp.VJP``): a
    pytree (its leaves ``args_res``, the primals), so it can be returned out of ``jit`` and
    passed into another jitted function."""
    _check_callable(f, "vjp")
    _check_reduce_axes(reduce_axes, "vjp")
    tape = Tape("vjp", _var.get())
    made = []
    args, inputs = _trace_inputs(tape, primals, range(len(primals)), "vjp", tape.new_input,
                                 require_float=False, made=made)
    out = call_finishing(tape, f, *args)
    written = _write_back(made, "vjp", tape)
    aux = None
    if has_aux:
        out, aux = _split_aux(out, "vjp")
        aux = _strip(aux, tape)
    outs, out_td = _flatten(out)
    outs = [_arr(o, "vjp") for o in outs]
    values = [o.primal if _ours(o, tape) else o for o in outs]
    values_out = _as_written(values, written)
    # per output leaf: (tape position, primal value) when it is ours, else None (no seed)
    seeds_of = [(o._idx, v) if _ours(o, tape) else None for o, v in zip(outs, values)]
    # one float array in, one array out that depends on it (the common case): vjp_fn takes
    # the path below, what the general one does for one leaf each way, without its loops
    one = None
    if out_td is _LEAF_TD and seeds_of[0] is not None and len(inputs) == 1 and \
            inputs[0][1] is _LEAF_TD and inputs[0][0][0] is not None:
        one = seeds_of[0] + (inputs[0][0][0],)

    def vjp_fn(cotangent):
        if one is not None:
            idx, v, t = one
            c = cotangent
            if c is None:
                seeds = []
            else:
                if not (isinstance(c, ArrayBase) and c.shape == v.shape and
                        c.dtype == v.dtype):
                    c = _cast_like(c, v, "vjp_fn: cotangent")
                seeds = [(idx, c)]
            g = tape.backward(seeds)[t._idx]
            if g is None:
                return (_zeros_for(t),)
            if not (isinstance(g, ArrayBase) and g.shape == t.shape and g.dtype == t.dtype):
                g = _cast_like(g, t, "vjp")
            if type(g) is Tensor and (not _writable(g) or (
                    seeds and isinstance(c, Tensor) and not _distinct_owners((g, c)))):
                g = _unaliased([[g]], seeds)[0][0]
            return (g,)
        if out_td is _LEAF_TD:
            # one array output: its cotangent is the whole tree given, as tree_flatten_up_to
            # reads a leaf of the structure
            cts = (cotangent,)
        else:
            try:
                cts = tree_flatten_up_to(out_td, cotangent)
            except ValueError as e:
                raise ValueError(f"vjp_fn: the cotangent's structure does not match the "
                                 f"output's {out_td}: {e}") from None
        seeds = []
        for s, c in zip(seeds_of, cts):
            if c is not None and s is not None:
                idx, v = s
                if not _same_aval(c, v):
                    c = _cast_like(c, v, "vjp_fn: cotangent")
                seeds.append((idx, c))
        acc = tape.backward(seeds)
        per = []
        for tracers, td in inputs:
            leaves = []
            for t in tracers:
                if t is None:
                    leaves.append(None)
                    continue
                g = acc[t._idx]
                if g is None:
                    g = _zeros_for(t)
                elif not _same_aval(g, t):
                    g = _cast_like(g, t, "vjp")
                leaves.append(g)
            per.append(leaves)
        per = _unaliased(per, seeds)
        if len(per) == 1:
            return (_unflatten(inputs[0][1], per[0]),)
        return tuple([_unflatten(td, leaves) for (_, td), leaves in zip(inputs, per)])

    value = _unflatten(out_td, values_out)
    # the backward function as a VJP object: a pytree (its leaves the arguments), so that it
    # passes in and out of jit (nx_rune.autodiff.api_vjp)
    f_vjp = VJP(f, primals, None, vjp_fn, has_aux, written is not None)
    return (value, f_vjp, aux) if has_aux else (value, f_vjp)


VJP_OF[0] = vjp


# -- forward mode ------------------------------------------------------------------------------

def _as_args(primals, what):
    if isinstance(primals, (tuple, list)):
        return tuple(primals)
    return (primals,)


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(f(*primals), J(primals) @ tangents)``: ``primals`` and ``tangents`` are tuples (or
    lists) of the positional arguments, tangents with the primals' structure and shapes (a
    single array is taken as a one-argument tuple).  With has_aux: ``(out, tangent_out, aux)``.
    Integer leaves get no tangent; outputs that do not depend on the primals get zeros."""
    _check_callable(f, "jvp")
    primals = _as_args(primals, "primals")
    tangents = _as_args(tangents, "tangents")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    interp = JVPInterpreter("jvp", _var.get())
    args = []
    made = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        leaves, td = tree_flatten(p)
        try:
            tl = tree_flatten_up_to(td, t)
        except ValueError as e:
            raise ValueError(f"jvp: tangent {i} does not match primal {i}'s structure {td}: "
                             f"{e}") from None
        new = []
        for leaf, tleaf in zip(leaves, tl):
            x = _arr(leaf, "jvp")
            if is_inexact(x.dtype) and tleaf is not None:
                new.append(interp.new_input(x, _cast_like(tleaf, x, f"jvp: tangent {i}")))
                made.append((x, new[-1], f"primal {i}" if len(leaves) == 1 else
                             f"primal {i} (leaf {len(new) - 1})"))
            else:
                new.append(x)
        args.append(tree_unflatten(td, new))
    out = call_finishing(interp, f, *args)
    written = _write_back(made, "jvp")
    aux = None
    if has_aux:
        out, aux = _split_aux(out, "jvp")
        aux = _strip(aux, interp)
    outs, out_td = tree_flatten(out)
    values, touts = [], []
    for o in outs:
        o = _arr(o, "jvp")
        if _ours(o, interp):
            values.append(o.primal)
            touts.append(o.tangent)
        else:
            values.append(o)
            touts.append(_zeros_for(o))
    res = (tree_unflatten(out_td, _as_written(values, written)), tree_unflatten(out_td, touts))
    return res + (aux,) if has_aux else res


def jvp_aux(f: Callable[..., Any], primals: Sequence[Any],
            tangents: Sequence[Any]) -> tuple[Any, Any, Any]:
    """``jvp`` of ``f`` returning ``(out, aux)``: gives ``(out, tangent_out, aux)``."""
    return jvp(f, primals, tangents, has_aux=True)


def jvps(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``jvp`` for ``f`` taking one list of tensors (the seed's form): ``(out, tangent_out)``."""
    return jvp(lambda xs: f(xs), (list(primals),), (list(tangents),))


def linearize(f: Callable[..., Any], *primals: Any,
              has_aux: bool = False) -> tuple[Any, ...]:
    """``(f(*primals), f_jvp)``: ``f_jvp(*tangents)`` is the JVP at primals, replayed from one
    recorded evaluation (f is not run again).  With has_aux, ``f`` returns ``(out, aux)`` and
    the result is ``(out, f_jvp, aux)``."""
    _check_callable(f, "linearize")
    has_aux = _check_flag(has_aux, "has_aux", "linearize")
    tape = Tape("linearize", _var.get())
    made = []
    args, inputs = _trace_inputs(tape, primals, range(len(primals)), "linearize",
                                 tape.new_input, require_float=False, made=made)
    out = call_finishing(tape, f, *args)
    written = _write_back(made, "linearize", tape)
    aux = None
    if has_aux:
        out, aux = _split_aux(out, "linearize")
        aux = _strip(aux, tape)
    outs, out_td = tree_flatten(out)
    outs = [_arr(o, "linearize") for o in outs]
    values = [o.primal if _ours(o, tape) else o for o in outs]

    def f_jvp(*tangents):
        if len(tangents) != len(inputs):
            raise ValueError(f"linearize: expected {len(inputs)} tangents, got {len(tangents)}")
        seeds = []
        for i, ((tracers, td), t) in enumerate(zip(inputs, tangents)):
            tl = tree_flatten_up_to(td, t)
            for tr, tleaf in zip(tracers, tl):
                if tr is not None and tleaf is not None:
                    seeds.append((tr._idx, _cast_like(tleaf, tr, f"linearize: tangent {i}")))
        tan = tape.forward(seeds)
        res = []
        for o, v in zip(outs, values):
            t = tan[o._idx] if _ours(o, tape) else None
            res.append(_zeros_for(v) if t is None else t)
        return tree_unflatten(out_td, res)

    res = (tree_unflatten(out_td, _as_written(values, written)), f_jvp)
    return res + (aux,) if has_aux else res


# -- stopping gradients ---------------------------------------------------------------------

def stop_gradient(x: PyTree) -> PyTree:
    """``x``'s values as constants: zero derivative under every transformation (pytrees too)."""
    return tree_map(_stop, x)


def _stop(x):
    c = concrete(x)
    if isinstance(c, ArrayBase) and c._concrete_tensor() is None:
        v = c
        while isinstance(v, Tracer):    # under vmap's levels (batched values)
            v = v.primal
        if not isinstance(v, Tensor):
            # a value traced abstractly (jit): the trace must record the stop for the
            # program's derivatives
            return P.bind(P.stop_gradient_p, c)
    return c


def detach(x: PyTree) -> PyTree:
    """Alias of ``stop_gradient`` (the seed's name)."""
    return stop_gradient(x)


# Per context (thread, asyncio task), the no_grad blocks entered and not yet exited, innermost
# last: (instance, token of the interpreter variable).  Kept per context rather than per
# instance, so one instance (a module-level ``NO_GRAD = nx.no_grad()``, a decorated function)
# can be entered by several threads or tasks at once and re-entered in each.
_no_grad_blocks: contextvars.ContextVar[tuple] = contextvars.ContextVar("nx_rune_no_grad",
                                                                         default=())


class no_grad:
    """Run code with no derivative tracking: ``with nx.no_grad(): ...``, ``@nx.no_grad`` or
    ``@nx.no_grad()``.  Inside, every op computes on concrete values and returns constants, so
    no enclosing transformation differentiates it (a transformation started inside works).

    One instance may be shared by threads and asyncio tasks and nested in itself: each
    thread/task has its own state.  A decorated ``async def`` runs its whole body in no-grad
    mode."""
    # the decorated function lives in a slot: functools.update_wrapper copies __dict__ (see
    # nx_rune.compiler.api.JitFunction), so a dict entry would travel to and from wrappers
    __slots__ = ("_func", "__dict__", "__weakref__")

    def __init__(self, func=None):
        self._func = func
        if func is not None:
            functools.update_wrapper(self, func)
            if inspect.iscoroutinefunction(func) and hasattr(inspect, "markcoroutinefunction"):
                inspect.markcoroutinefunction(self)      # Python 3.12+

    def __enter__(self):
        token = _var.set(NoGradInterpreter())
        _no_grad_blocks.set(_no_grad_blocks.get() + ((self, token),))
        return self

    def __exit__(self, *exc):
        blocks = _no_grad_blocks.get()
        for i in range(len(blocks) - 1, -1, -1):
            if blocks[i][0] is self:
                break
        else:
            raise RuntimeError("no_grad.__exit__ without a matching __enter__ in this thread or "
                               "task (a block entered in one context cannot be exited in "
                               "another)")
        token = blocks[i][1]
        _no_grad_blocks.set(blocks[:i] + blocks[i + 1:])
        _var.reset(token)
        return False

    def __call__(self, *args, **kwargs):
        func = self._func
        if func is None:
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return no_grad(args[0])
            raise TypeError("no_grad() takes a function to decorate")
        if inspect.iscoroutinefunction(func):
            return self._call_async(*args, **kwargs)
        token = _var.set(NoGradInterpreter())
        try:
            return func(*args, **kwargs)
        finally:
            _var.reset(token)

    async def _call_async(self, *args, **kwargs):
        # The coroutine's every step runs in its task's context, so the token resets there.
        token = _var.set(NoGradInterpreter())
        try:
            return await self._func(*args, **kwargs)
        finally:
            _var.reset(token)

    def __get__(self, obj, objtype=None):
        if obj is None or self._func is None:
            return self
        return functools.partial(self, obj)
