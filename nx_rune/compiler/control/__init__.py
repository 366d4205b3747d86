"""``lax`` control flow: ``cond``, ``scan``, ``fori_loop``, ``while_loop`` (JAX's semantics).

Eager mode (no trace active): plain Python (an ``if``, a ``for`` loop stacking the ``ys``, a
``while`` loop), so every transformation sees the operations as they run (``grad`` of a Python
loop just works, ``while_loop`` included).

Under a trace (``jit``, ``make_jaxpr``, the body of another loop): the functions are traced once
into sub-programs and the operation is one equation (``cond[branches=...]``, ``scan[body=...]``,
``while[cond=... body=...]``); scan's body is traced once, not unrolled.  Values the bodies close
over are captured and passed as extra operands ("consts").  The equation then dispatches like a
primitive (``control_bind``):

* the trace records it;
* reverse mode (a tape owning an operand): cond records the branch chosen at run time through a
  cond of the branches' VJPs; scan runs forward keeping each step's carry, and its VJP is a
  reverse scan of the body's VJP; while_loop is not reverse-differentiable (as in JAX: use scan
  or fori_loop with static bounds);
* forward mode: the same operation over (primal, tangent) bodies (all four);
* vmap: the same operation over batched bodies (``compiler/batching.py``; a cond with a
  per-example predicate runs both branches and selects, a while loop with one runs until every
  example is done).  In eager mode the Python loop runs under vmap as it is, except where the
  predicate is per example (cond: both branches and a select; while_loop: from then on one
  ``while`` equation);
* no transformation (a program evaluated on concrete values): the compiled sub-programs run.

The executor runs these equations as a Python ``if``/``for``/``while`` around the compiled
sub-programs (one generated function call per iteration).

The package: ``_core`` (tracing the functions into sub-programs, :class:`ControlOp`,
``control_bind`` and what the operations share), one module per operation (``_cond``,
``_scan``, ``_loops``: while_loop and fori_loop) and ``_custom`` (the recording of
``custom_vjp``/``custom_jvp`` calls).  Their names are imported here: this package is the
namespace the rest of nx_rune and users import from.
"""
from __future__ import annotations

from nx_rune.autodiff.rules import _control as _rules_control
from nx_rune.compiler.control._cond import _branch_operands, _Cond, _pred_scalar, cond, cond_op  # noqa: F401
from nx_rune.compiler.control._core import (  # noqa: F401
    CONTROL_RULES,
    ControlOp,
    _aval,
    _batched,
    _cached,
    _carry_avals,
    _check_same,
    _check_unrun_body,
    _concrete_np,
    _deps,
    _diff_mask,
    _fill,
    _jvp_part,
    _MultiEntry,
    _new_memory,
    _ours,
    _pretrace_carry,
    _promote_weak_init,
    _reaches,
    _read_by,
    _reorder,
    _split_owned,
    _to_arrays,
    _trace,
    _trace_flat,
    _used_inputs,
    _var,
    _weak_value,
    _with_inputs,
    _zeros,
    control_bind,
    trace_active,
)
from nx_rune.compiler.control._custom import _CustomCall, custom_call_op  # noqa: F401
from nx_rune.compiler.control._loops import (  # noqa: F401
    _cond_bool,
    _static_int,
    _While,
    _while_loop,
    _while_traced,
    fori_loop,
    while_loop,
    while_op,
)
from nx_rune.compiler.control._scan import (  # noqa: F401
    _check_carry,
    _Scan,
    _scan,
    _scan_length,
    _split_body_out,
    scan,
    scan_op,
)

__all__ = ["cond", "scan", "fori_loop", "while_loop", "ControlOp", "control_bind",
           "CONTROL_RULES", "trace_active"]

# the derivative rules that choose a formula on traced values use this cond (they sit below
# the compiler and cannot import it)
_rules_control.install_cond(cond)
