"""``checkpoint`` (alias ``remat``): reverse mode keeps a function's inputs, not its inside.

``checkpoint(f)(*args)`` runs ``f`` as usual.  When a reverse-mode tape is recording (the
innermost one active), the entries ``f`` added to it are then replaced by one entry that keeps
only what the inside needs from outside: the values of the tape positions it read (its inputs,
closures included), the constants its operations were given, and for each operation its
primitive and parameters.  The intermediate values are dropped.  On the backward pass that
entry recomputes them (binding the recorded primitives again, under the interpreter active
then, so higher-order derivatives differentiate the recomputation too) and runs the backward
pass of the inside; ``linearize`` replays it forward the same way.

The recomputation replays the operations ``f`` recorded (Python control flow is not run
again), as a jaxpr is replayed.  Operations that recorded nothing on the tape
(non-differentiable results, integer results) are kept as constants.  ``custom_vjp`` and
``custom_jvp`` calls and nested checkpoints inside ``f`` keep their own residuals.  With
several reverse-mode levels active (grad of grad), the innermost tape is the one that saves.
A value computed inside ``f`` that escapes other than as an output (a closure, a global)
makes the backward pass raise ``UnexpectedTracerError`` if a derivative reaches it (a forward
replay by ``linearize`` gives such a value no tangent: return it from ``f`` instead).  An in-place
write inside ``f`` into a value one of its operations saved raises
``ModifiedInPlaceError`` on the backward pass, as without checkpoint.  Other threads must not
record on the same tape while ``f`` runs (their entries would be taken for ``f``'s).
"""
from __future__ import annotations

import copy
import functools
from typing import Any, Callable

from nx_rune import primitives as P
from nx_rune.autodiff.core import (
    JVPTracer,
    NoGradInterpreter,
    Tape,
    TapeTracer,
    Tracer,
    _Proj,
    _saved_values,
    keep_entry,
)
from nx_rune.errors import ModifiedInPlaceError, UnexpectedTracerError
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "remat"]

_var = P._interpreter


def _innermost_tape():
    interp = _var.get()
    while interp is not None:
        if isinstance(interp, NoGradInterpreter):
            return None
        if isinstance(interp, Tape):
            return interp
        interp = interp.parent
    return None


def checkpoint(fun: Callable[..., Any], *, prevent_cse: Any = True, policy: Any = None,
               static_argnums: Any = (), static_argnames: Any = ()) -> Callable[..., Any]:
    """``fun`` (any function of arrays and pytrees of them, returning such) whose inside is
    recomputed on the backward pass instead of stored: reverse mode keeps only the values
    ``fun`` reads from outside.  Same outputs (shapes, dtypes, values) and the same derivatives
    at any order as ``fun``; it trades memory for one more forward computation of ``fun``'s
    operations per backward pass.

    JAX's keywords are accepted: ``policy`` (a function of ``nx.checkpoint_policies``, or any
    callable; nx_rune recomputes everything inside ``fun`` whatever the policy says may be
    saved, which changes memory and time only, never values), ``prevent_cse`` (nx_rune's
    compiler never merges the recomputation with the forward pass: nothing to prevent),
    ``static_argnums``/``static_argnames`` (arguments passed to ``fun`` as they are; eager
    checkpointing traces nothing, so any Python value already passes through)."""
    if not callable(fun):
        raise TypeError(f"checkpoint: expected a function, got {type(fun).__name__}")
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be None or a callable (see "
                        f"nx.checkpoint_policies), got {type(policy).__name__}")
    for n in ((static_argnums,) if isinstance(static_argnums, int) else static_argnums):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"checkpoint: static_argnums must be ints, got {static_argnums!r}")
    for n in ((static_argnames,) if isinstance(static_argnames, str) else static_argnames):
        if not isinstance(n, str):
            raise TypeError(f"checkpoint: static_argnames must be strings, got "
                            f"{static_argnames!r}")

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        tape = _innermost_tape()
        if tape is None:
            return fun(*args, **kwargs)
        start = len(tape.tape)
        ins = [(x, x._idx) for x in tree_flatten((args, kwargs))[0]
               if x.__class__ is TapeTracer and x._interp is tape]
        out = fun(*args, **kwargs)
        # an argument that fun wrote in place (its tracer rebound to a value computed inside)
        # is one more output of the region: its tracer is moved to the kept position
        written = [x for x, i in ins if x._idx != i]
        if not written:
            return _compress(tape, start, out, getattr(fun, "__name__", "checkpoint"))
        out, kept = _compress(tape, start, (out, written), getattr(fun, "__name__",
                                                                   "checkpoint"))
        for x, k in zip(written, kept):
            if k is not x:
                x._idx = k._idx
        return out

    return checkpointed


remat = checkpoint


class _Owner:
    """What a checkpoint entry names in error messages (as a custom rule's function)."""
    __slots__ = ("__name__",)

    def __init__(self, name):
        self.__name__ = f"checkpoint({name})"


def _compress(tape, s, out, name):
    entries = tape.tape
    e = len(entries)
    if e == s:
        return out
    leaves, td = tree_flatten(out)
    leaves = list(leaves)
    # the region's tape tracers reachable from the outputs, with how to replace each
    found = {}          # position -> list of setters
    values = {}         # position -> primal value

    def visit(x, setter):
        if x.__class__ is TapeTracer and x._interp is tape:
            if x._idx >= s and entries[x._idx] is not None:
                found.setdefault(x._idx, []).append(setter)
                values[x._idx] = x.primal
            return
        if isinstance(x, Tracer):
            visit(x.primal, lambda v, x=x: setattr(x, "primal", v))
            if isinstance(x, JVPTracer):
                visit(x.tangent, lambda v, x=x: setattr(x, "tangent", v))

    for i, leaf in enumerate(leaves):
        visit(leaf, lambda v, i=i: leaves.__setitem__(i, v))
    if not found:
        return out
    entry = _CheckpointEntry(tape, s, e, sorted(found), _Owner(name))
    entry.outs = [values[p] for p in entry.out_pos]
    new = tape.record_multi(entry, entry.ext, entry.outs)
    for p, tracer in zip(entry.out_pos, new):
        for setter in found[p]:
            setter(tracer)
    released = _Released(entry.cf)
    for p in range(s, e):           # the inside's intermediate values are released here
        entries[p] = released
    return tree_unflatten(td, leaves)


class _Released:
    """Tape entry of a position inside a checkpointed call after the call: only a value that
    escaped ``fun`` other than through its outputs (a closure, a global) can still send a
    cotangent here, and it would be lost, so the backward pass raises."""
    __slots__ = ("cf",)
    idxs = ()
    primals = ()

    def __init__(self, cf):
        self.cf = cf

    def vjp(self, gs):
        raise UnexpectedTracerError(
            f"a value computed inside {self.cf.__name__} was used after it returned without "
            f"being one of its outputs (kept in a closure, a global or a list?): the "
            f"checkpoint released it, so its derivative cannot flow back; return it from the "
            f"checkpointed function instead")

    def jvp(self, ts):
        return []


class _CheckpointEntry:
    """A multi-output tape entry (see Tape.record_multi) standing for the region [s, e) of a
    tape: ``stubs`` replay it, ``vjp``/``jvp`` differentiate the replay."""
    __slots__ = ("cf", "ext", "out_pos", "out_local", "stubs", "tainted", "primals", "outs",
                 "idxs", "n_ext")

    def __init__(self, tape, s, e, out_pos, owner):
        entries = tape.tape
        self.cf = owner
        self.out_pos = out_pos
        ext = set()
        for p in range(s, e):
            ent = entries[p]
            idxs = ent[3] if ent.__class__ is tuple else getattr(ent, "idxs", None)
            if idxs:
                ext.update(j for j in idxs if 0 < j < s)
        self.ext = sorted(ext)
        n_ext = self.n_ext = len(self.ext)
        where = {j: 1 + k for k, j in enumerate(self.ext)}

        def local(j):
            if j == 0:
                return 0
            return where[j] if j < s else 1 + n_ext + (j - s)

        stubs, tainted, kept_values = [], {}, []
        for p in range(s, e):
            ent = entries[p]
            lp = local(p)
            if ent is None or ent.__class__ is _Released:   # a lifted constant; released
                stubs.append(ent)
                continue
            try:                                  # written in place inside fun after recording
                tape._check_entry(p, ent)
            except ModifiedInPlaceError as err:
                tainted[lp] = str(err)
            if ent.__class__ is _Proj:
                stubs.append(_Proj(local(ent.src), ent.k))
            elif ent.__class__ is tuple:
                prim, params, primals, idxs, _ = ent
                kept = []
                for v, j in zip(primals, idxs):
                    if j == 0 or j < s or entries[j] is None or \
                            entries[j].__class__ is _Released:
                        kept.append(v)
                        kept_values.append(v)
                    else:                         # recomputed from the replay
                        kept.append(None)
                stubs.append((prim, params, kept, [local(j) for j in idxs]))
            else:                                 # custom rules, nested checkpoints: kept whole
                c = copy.copy(ent)
                c.idxs = [local(j) for j in ent.idxs]
                stubs.append(c)
                kept_values.extend(v for _, v in _saved_values(ent))
        self.stubs = stubs
        self.tainted = tainted
        self.out_local = [local(p) for p in out_pos]
        self.primals = kept_values                # for the tape's check of later writes
        self.outs = None                          # the outputs' values, set by _compress
        self.idxs = None                          # the outside positions, set by record_multi

    def _replay(self):
        """A tape holding the region recomputed: leaves 1..n_ext (the outside values), then
        every entry with its primal operands and output."""
        n_ext = self.n_ext
        tape = [None] * (1 + n_ext + len(self.stubs))

        def value(li):
            ent = tape[li]
            if ent.__class__ is tuple:
                return ent[4]
            return tape[ent.src].outs[ent.k]      # an output of a multi-output entry

        for q, stub in enumerate(self.stubs):
            lp = 1 + n_ext + q
            if stub is None or stub.__class__ is not tuple:
                tape[lp] = stub
                continue
            prim, params, kept, lidxs = stub
            primals = [v if v is not None else value(li) for v, li in zip(kept, lidxs)]
            tape[lp] = (prim, params, primals, lidxs, P.bind(prim, *primals, **params))
        return _Replay(tape, self.tainted)

    def keep_saved(self, keep):
        """Pass every value this entry keeps through ``keep`` (``Tape.keep_saved``: a write
        into them comes after the call)."""
        self.primals = [keep(v) for v in self.primals]
        self.stubs = [keep_entry(st, keep) for st in self.stubs]

    def vjp(self, gs):
        replay = self._replay()
        acc = replay.backward([(p, g) for p, g in zip(self.out_local, gs) if g is not None])
        return [acc[1 + k] for k in range(self.n_ext)]

    def jvp(self, ts):
        replay = self._replay()
        tan = replay.forward([(1 + k, t) for k, t in enumerate(ts) if t is not None])
        return [tan[p] for p in self.out_local]


class _Replay(Tape):
    """The recomputed region as a tape, for its backward/forward pass only."""
    __slots__ = ("_tainted",)

    def __init__(self, entries, tainted):
        Tape.__init__(self, "checkpoint", None)
        self.tape = entries
        self._tainted = tainted
        if tainted:
            self._wpos = [0]     # makes the passes call _check_entry

    def _check_entry(self, i, e):
        msg = self._tainted.get(i)
        if msg is not None:
            raise ModifiedInPlaceError(msg)
