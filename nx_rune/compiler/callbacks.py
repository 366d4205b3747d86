"""Host callbacks with results (``nx.pure_callback``, ``nx.experimental.io_callback``): an
equation whose outputs a Python function computes from the operands' values when it runs.

A :class:`CallbackOp` call dispatches (:func:`callback_bind`) as the effect operations do:

* no transformation: the function runs now, on NumPy arrays;
* a trace (``jit``, ``make_jaxpr``, a ``lax`` body): one equation whose outputs have the
  declared shapes and dtypes; the compiled program calls the function at run time, on every
  call, with that call's values;
* ``vmap``: by ``vmap_method``, JAX's: ``"sequential"`` (once per example, results stacked),
  ``"expand_dims"`` (once, the batched operands with the batch axis first, the others with a
  new axis of size 1), ``"broadcast_all"`` (once, every operand batched), ``"legacy_vectorized"``
  (once, the unbatched operands as they are); None raises JAX's NotImplementedError;
* a differentiating level owning an operand: JAX's ValueError (a callback has no derivative;
  ``custom_jvp``/``custom_vjp`` around it give one).

The function's results are checked against the declared shapes (a mismatch raises, naming
both) and cast to the declared dtypes, as JAX does.
"""
from __future__ import annotations

import numpy as np

from nx_rune import primitives as P
from nx_rune.autodiff.batching import BatchInterpreter, BatchTracer
from nx_rune.autodiff.core import NoGradInterpreter, Tracer, _leaked, concrete
from nx_rune.compiler.dispatch import under
from nx_rune.compiler.ir import AbstractValue, InternalOp
from nx_rune.compiler.tracing import TraceInterpreter

__all__ = ["CallbackOp", "callback_bind", "checked", "pure_callback_op", "io_callback_op"]

_var = P._interpreter

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


class CallbackOp(InternalOp):
    """``outs = callback[_callback, out_avals, vmap_method, what] *operands``; ``_callback``
    takes NumPy arrays and returns the flat list of result arrays (checked and cast, see
    :func:`checked`; ``_user`` is the unchecked function, for the batched forms)."""
    __slots__ = ("pure", "effectful")

    def __init__(self, name, pure):
        InternalOp.__init__(self, name)
        self.pure = pure                # pure_callback may be merged or removed when unused
        self.effectful = not pure       # io_callback always runs, in program order

    def bind_eqn(self, params, ins):
        return callback_bind(self, params, ins)

    def emit(self, cg, e, ins, plan):
        outs = [cg.bind_out(v) for v in e.outs]
        f = cg.const(e.params["_callback"], self.name)
        call = f"{f}({''.join(a + ', ' for a in ins)})"
        if not outs:
            cg.emit(call)
            return
        cg.emit(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")


pure_callback_op = CallbackOp("pure_callback", True)
io_callback_op = CallbackOp("io_callback", False)


def _np_value(v):
    v = concrete(v)
    return np.asarray(v._np() if hasattr(v, "_np") else v)


def callback_bind(op, params, values):
    """Apply callback operation ``op`` under the active interpreters (see the module doc);
    returns one value per declared result."""
    values = list(values)
    interp = _var.get()
    while interp is not None:
        if isinstance(interp, TraceInterpreter):
            avals = [AbstractValue(s, d, False) for s, d in params["out_avals"]]
            return interp.add_eqn(op, params, values, avals)
        if isinstance(interp, BatchInterpreter):
            if any(_ours(v, interp) for v in values):
                return _batched(op, interp, params, values)
        elif not isinstance(interp, NoGradInterpreter):
            if any(_ours(v, interp) for v in values):
                raise ValueError(f"{params['what']}: callbacks do not support differentiation "
                                 f"(JAX's 'Pure callbacks do not support JVP'); wrap the "
                                 f"function in nx.custom_jvp or nx.custom_vjp to give it a "
                                 f"derivative")
        interp = interp.parent
    for v in values:
        if isinstance(v, Tracer) and v._interp.done:
            _leaked(v)
    from nx_rune.tensor import Tensor
    outs = params["_callback"](*[_np_value(v) for v in values])
    return [Tensor._wrap(o) for o in outs]


def _ours(v, interp):
    return isinstance(v, Tracer) and v._interp is interp


def _batched(op, interp, params, values):
    from nx_rune import frontend as F
    from nx_rune.autodiff.batch_rules import batch_at, moveaxis
    method = params["vmap_method"]
    n = interp.axis_size
    what = params["what"]
    if method is None:
        raise NotImplementedError(
            f"{what}: vmap is only supported when vmap_method is one of "
            f"{', '.join(repr(m) for m in VMAP_METHODS)}; got vmap_method=None")
    ours = [_ours(v, interp) for v in values]
    if method in ("sequential", "sequential_unrolled"):
        def down():
            per = []
            for i in range(n):
                ex = [v.primal[(slice(None),) * v.bdim + (i,)] if m else v
                      for v, m in zip(values, ours)]
                per.append(callback_bind(op, params, ex))
            k = len(params["out_avals"])
            if n == 0:
                return [F.zeros((0,) + tuple(s), d) for s, d in params["out_avals"]]
            return [F.stack([p[j] for p in per], axis=0) for j in range(k)]
        outs = under(interp.parent, down)
        return [BatchTracer(interp, o, 0) for o in outs]

    def down_vec():
        args = []
        for v, m in zip(values, ours):
            if m:
                args.append(moveaxis(v.primal, v.bdim, 0))
            elif method == "broadcast_all":
                args.append(batch_at(v, None, n, 0))
            elif method == "expand_dims":
                args.append(F.expand_dims(v, 0))
            else:                       # legacy_vectorized: as they are
                args.append(v)
        avals = tuple(((n,) + tuple(s), d) for s, d in params["out_avals"])
        p = dict(params, out_avals=avals, _callback=checked(params["_user"], avals, what))
        return callback_bind(op, p, args)
    outs = under(interp.parent, down_vec)
    return [BatchTracer(interp, o, 0) for o in outs]


def checked(user, out_avals, what):
    """The run-time function of a callback equation: ``user`` (NumPy arrays in, the flat
    list of results out) with its results checked against ``out_avals`` (shapes; a mismatch
    raises naming both) and cast to their dtypes, as fresh C-contiguous arrays."""
    def run(*arrays):
        got = user(*[np.array(a, copy=True) for a in arrays])
        if len(got) != len(out_avals):
            raise ValueError(f"{what}: the callback returned {len(got)} results, "
                             f"result_shape_dtypes declares {len(out_avals)}")
        outs = []
        for k, (r, (shape, dtype)) in enumerate(zip(got, out_avals)):
            r = np.asarray(r)
            if r.shape != tuple(shape):
                raise ValueError(f"{what}: result {k} of the callback has shape {r.shape}, "
                                 f"result_shape_dtypes declares {tuple(shape)}")
            outs.append(np.array(r, dtype=dtype, order="C", copy=True))
        return outs
    return run
