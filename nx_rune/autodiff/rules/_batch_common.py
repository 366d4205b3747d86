"""Shared pieces of the batching rules: ``BATCH_RULES`` and the rule makers.

A rule maps a primitive applied to batched operands to one application on the whole batch::

    BATCH_RULES[prim] = rule
    rule(axis_size, args, dims, **params) -> (out, out_dim)

``args`` are the operands as the level below vmap sees them (each batched operand with its
batch axis in it), ``dims[i]`` is operand i's batch axis (an int) or None for an operand that
is the same for every example; ``params`` are the primitive's.  The rule returns the output
and the axis of the output that is the batch (None when the output is the same for every
example).  Rules run with vmap's parent interpreter active and are written with ``bind`` (or
front-end ops), so the transformations around vmap see what they compute.

Helpers make most rules one line:

* ``defbroadcast(prim)``: elementwise primitives whose operands have one shape (unary, binary,
  ``where``, ``clip``): the batch axes are aligned, unbatched operands broadcast (stride 0).
* ``defreduction(prim)``: ``axes``/``keepdims`` reductions: the axes shift past the batch axis.
* ``defaxis(prim, "axis")``: one ``axis`` parameter (scans, sort, argsort);
  ``defaxes(prim, "axes")``: a tuple of axes, the output of the operand's rank (FFTs).
* ``defleading(prim)``: primitives acting on trailing axes and mapping over leading ones
  (linear algebra): the batch goes first.
* ``defloop(prim)``: the opt-in fallback for a primitive without a vectorized rule: it is
  applied once per example (the operands sliced, the results stacked): correct, as fast as a
  Python loop.  A user-defined primitive without a rule is never looped silently: vmap raises
  ``NotImplementedError`` naming it.
* ``defnoarrays(prim)``: primitives without array operands (constants), never batched.

Primitives taking a function (a call to a traced program, as a jit would add) are batched by
running the function under a new vmap level: ``nx_rune.autodiff.batching.call_rule``.

May import: primitives and tensor only (the batching interpreter, ``autodiff.batching``, and
the compiler import this module).
"""
from nx_rune import primitives as P
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor

__all__ = ["BATCH_RULES", "defbroadcast", "defreduction", "defaxis", "defaxes", "defleading",
           "defloop", "defnoarrays", "moveaxis", "batch_at", "loop_rule", "BroadcastRule"]

BATCH_RULES = {}
_scal = Tensor._broadcast_scalar


# -- helpers ------------------------------------------------------------------------------------

def moveaxis(x, src, dst):
    """``x`` with its axis ``src`` moved to position ``dst`` (a permute view)."""
    if src == dst:
        return x
    perm = list(range(x.ndim))
    perm.pop(src)
    perm.insert(dst, src)
    return bind(P.permute_p, x, axes=tuple(perm))


def batch_at(x, d, size, at):
    """``x`` (batch axis ``d``, or None: unbatched) with its batch axis at position ``at``: a
    moved view, or for an unbatched operand a broadcast view (stride 0) with the new axis."""
    if d is None:
        if at == 0:       # expand adds leading axes itself
            return bind(P.expand_p, x, shape=(size,) + x.shape)
        shape = x.shape[:at] + (1,) + x.shape[at:]
        x = bind(P.reshape_p, x, shape=shape)
        return bind(P.expand_p, x, shape=shape[:at] + (size,) + shape[at + 1:])
    return moveaxis(x, d, at)


def _front(x, d):
    """``x`` with its batch axis first (or unbatched x with a leading axis of size 1, which
    broadcasts against the batch)."""
    if d is None:
        return bind(P.reshape_p, x, shape=(1,) + x.shape)
    return moveaxis(x, d, 0)


def _ndim(x, d):
    """The per-example rank of operand ``x`` with batch axis ``d``."""
    return x.ndim - (d is not None)


def _full_axis(a, d):
    """Per-example axis ``a`` (non-negative) as an axis of the batched operand (axis ``d``)."""
    return a + (a >= d)


def _norm(a, nd):
    return a + nd if a < 0 else a


def _unbatch_one(x, d, i):
    """Example ``i`` of ``x`` (batch axis ``d``)."""
    lim = [(0, n) for n in x.shape]
    lim[d] = (i, i + 1)
    x = bind(P.shrink_p, x, limits=tuple(lim))
    return bind(P.reshape_p, x, shape=x.shape[:d] + x.shape[d + 1:])


def _stack0(outs):
    return bind(P.cat_p, *[bind(P.reshape_p, o, shape=(1,) + o.shape) for o in outs], axis=0)


def _loop(prim, size, args, dims, params):
    """``prim`` applied example by example, the results stacked along a new axis 0."""
    if size == 0:
        # no example to run: the output's shape and dtype from a probe on zeros
        probe = [a if d is None else _scal(0, a.dtype, a.shape[:d] + a.shape[d + 1:])
                 for a, d in zip(args, dims)]
        return _empty_batch(bind(prim, *probe, **params)), 0
    outs = []
    for i in range(size):
        outs.append(bind(prim, *[a if d is None else _unbatch_one(a, d, i)
                                 for a, d in zip(args, dims)], **params))
    return _stack0(outs), 0


def _empty_batch(out):
    """A batch of zero examples of ``out``'s shape and dtype."""
    return bind(P.shrink_p, bind(P.reshape_p, out, shape=(1,) + out.shape),
                limits=((0, 0),) + tuple((0, n) for n in out.shape))


# -- rule makers --------------------------------------------------------------------------------

class BroadcastRule:
    """The rule ``defbroadcast`` makes (a class, so that vmap's interpreter can run the common
    case, every operand batched along one axis, without calling it)."""
    __slots__ = ("prim", "__name__")

    def __init__(self, prim):
        self.prim = prim
        self.__name__ = f"batch_{prim.name}"

    def __call__(self, size, args, dims, **params):
        prim = self.prim
        d = dims[0]
        if len(dims) > 1:
            if d is None:
                for d in dims:
                    if d is not None:
                        break
            for k in dims:
                if k != d:
                    args = [a if k == d else batch_at(a, k, size, d) for a, k in zip(args, dims)]
                    break
        impl = prim.impl
        if P._interpreter.get() is None and impl is not None:   # the parent is no transformation
            return impl(*args, **params), d
        return bind(prim, *args, **params), d


def defbroadcast(prim):
    """The rule of an elementwise ``prim`` whose operands share one shape: batched operands
    keep the first batched operand's batch axis (others are moved there), unbatched ones are
    broadcast to the batch (a stride-0 view), and the primitive is bound once."""
    BATCH_RULES[prim] = rule = BroadcastRule(prim)
    return rule


def defreduction(prim):
    """The rule of a reduction with parameters ``axes`` (per-example axes) and ``keepdims``."""
    def rule(size, args, dims, *, axes, keepdims, **params):
        x, d = args[0], dims[0]
        nd = x.ndim - 1
        full = tuple(_full_axis(_norm(a, nd), d) for a in axes)
        out = bind(prim, x, axes=full, keepdims=keepdims, **params)
        return out, d if keepdims else d - sum(1 for a in full if a < d)
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def defaxis(prim, name="axis"):
    """The rule of a unary ``prim`` acting along the one axis given by parameter ``name``
    (the output keeps the operand's shape)."""
    def rule(size, args, dims, **params):
        x, d = args[0], dims[0]
        params[name] = _full_axis(_norm(params[name], x.ndim - 1), d)
        return bind(prim, x, **params), d
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def defaxes(prim, name="axes"):
    """The rule of a unary ``prim`` acting along the axes (a tuple) given by parameter
    ``name``, its output of the operand's rank (an FFT over some axes)."""
    def rule(size, args, dims, **params):
        x, d = args[0], dims[0]
        nd = x.ndim - 1
        params[name] = tuple(_full_axis(_norm(a, nd), d) for a in params[name])
        return bind(prim, x, **params), d
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def defleading(prim):
    """The rule of a ``prim`` that acts on its operands' trailing axes and maps over any leading
    axes (NumPy's linalg functions): batch axes go first, unbatched operands are broadcast to
    the batch (a stride-0 view); one output or a list of them, each batched along axis 0.  An
    operand whose rank selects a behaviour (a 1-d right-hand side) needs a rule of its own."""
    def rule(size, args, dims, **params):
        out = bind(prim, *[batch_at(a, d, size, 0) for a, d in zip(args, dims)], **params)
        if isinstance(out, (list, tuple)):
            return list(out), [0] * len(out)
        return out, 0
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule


def loop_rule(prim):
    """The loop fallback for ``prim`` as a rule (see ``defloop``)."""
    def rule(size, args, dims, **params):
        return _loop(prim, size, args, dims, params)
    rule.__name__ = f"batch_{prim.name}_loop"
    return rule


def defloop(prim):
    """Batch ``prim`` by applying it once per example and stacking the results (opt-in: a
    Python loop over the batch, for primitives with no vectorized rule)."""
    BATCH_RULES[prim] = rule = loop_rule(prim)
    return rule


def defnoarrays(prim):
    """A primitive without array operands: its output never depends on a batched value."""
    def rule(size, args, dims, **params):
        return bind(prim, *args, **params), None
    rule.__name__ = f"batch_{prim.name}"
    BATCH_RULES[prim] = rule
    return rule

