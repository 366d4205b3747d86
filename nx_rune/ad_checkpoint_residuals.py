"""JAX's ``jax.ad_checkpoint.print_saved_residuals`` and ``saved_residuals``: the values reverse
mode keeps from the forward pass for the backward pass, with where each comes from.

JAX reads them off the jaxpr of ``vjp``.  nx_rune's reverse mode is an eager tape: the function
runs once on a tape that notes where each operation was called from, then the tape's backward
pass runs once (on cotangents of ones) under an interpreter that notes every array its
operations read.  The values it read that the forward pass made or was given are the
residuals, exactly: what the backward pass needs (a jitted call's entry reads its operands in
its compiled backward pass: they count too).  Each is named as JAX names it: ``from the
argument x`` (a leaf of an argument, by its path), ``output of sin from
file:line:column (function)`` (an operation ``f`` ran, at the line that called it), ``from a
constant`` (an array ``f`` closed over), ``from a literal`` (a Python number ``f`` used).  Which
values an operation saves is nx_rune's rule's choice, not JAX's: ``sin`` saves its operand
(JAX: its cosine), a product its operands; and a checkpoint's policy is not consulted
(everything inside is recomputed: only its inputs are saved).
"""
from __future__ import annotations

import inspect
import itertools
import os
import sys
from typing import Any, Callable

import numpy as np

from nx_rune import frontend
from nx_rune import primitives as P
from nx_rune.autodiff.core import (
    Interpreter,
    Tape,
    TapeTracer,
    bind_at,
    call_finishing,
    call_in,
    is_inexact,
)
from nx_rune.compiler.stages import ShapeDtypeStruct
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import keystr, tree_flatten, tree_flatten_with_path

__all__ = ["saved_residuals", "print_saved_residuals"]

_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _site():
    """Where user code called the operation being recorded: ``file:line:column (function)``
    of the innermost frame outside nx_rune (JAX's source summary; the column is the call
    expression's, 0-based)."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    if f is None:
        return "an unknown location"
    line, col = f.f_lineno, 0
    if f.f_lasti >= 0:
        pos = next(itertools.islice(f.f_code.co_positions(), f.f_lasti // 2, None), None)
        if pos is not None and pos[0] is not None:
            line, col = pos[0], pos[2] or 0
    return f"{f.f_code.co_filename}:{line}:{col} ({f.f_code.co_name})"


class _SourceTape(Tape):
    """A tape that also notes each value its operations made: id -> (value, where from), in
    the order they ran (the values kept alive, so that their ids stay unique)."""
    __slots__ = ("made",)

    def __init__(self, parent: Any) -> None:
        Tape.__init__(self, "saved_residuals", parent)
        self.made: dict[int, tuple[Any, str]] = {}

    def process(self, prim, args, params):
        n = len(self.tape)
        out = Tape.process(self, prim, args, params)
        if len(self.tape) > n:
            v = self.tape[n][4]
            self.made.setdefault(id(v), (v, f"output of {prim.name} from {_site()}"))
        return out

    def record_multi(self, entry, idxs, outs):
        res = Tape.record_multi(self, entry, idxs, outs)
        cf = getattr(entry, "cf", None)
        if cf is None:
            what = "jitted function"
        elif hasattr(entry, "stubs"):
            what = "checkpointed function"
        else:
            what = f"custom rule '{getattr(cf, '__name__', '?')}'"
        site = _site()
        for o in outs:
            # a checkpoint's outputs were noted already, as the operations inside made them
            self.made.setdefault(id(o), (o, f"output of {what} from {site}"))
        return res


def _arg_names(f, args, kwargs):
    """The name of each leaf of ``(args, kwargs)`` as JAX's debug info writes it: the
    parameter's name then the leaf's path (``p['a']``, ``args[0]``, a keyword's name); None
    where the signature cannot say."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    names = []
    for i, a in enumerate(args):
        if i < len(positional):
            head = positional[i]
        elif star is not None:
            head = f"{star}[{i - len(positional)}]"
        else:
            return None
        names += [head + keystr(path) for path, _ in tree_flatten_with_path(a)[0]]
    for path, _ in tree_flatten_with_path(kwargs)[0]:
        names.append(str(getattr(path[0], "key", path[0])) + keystr(path[1:]))
    return names


def _short(x):
    """JAX's ``str_short(short_dtypes=True)``: ``f32[3,3]``."""
    dt = np.dtype(x.dtype).name
    for long, short in (("bfloat", "bf"), ("float", "f"), ("complex", "c"), ("uint", "u"),
                        ("int", "i")):
        if dt.startswith(long):
            dt = short + dt[len(long):]
            break
    return f"{dt}[{','.join(map(str, x.shape))}]"


def saved_residuals(f: Callable[..., Any], *args: Any,
                    **kwargs: Any) -> list[tuple[ShapeDtypeStruct, str]]:
    """The residuals of ``vjp(f, *args, **kwargs)``: one ``(ShapeDtypeStruct, description)``
    per value the backward pass reads from the forward pass (JAX's ``saved_residuals``): the
    closed-over constants, then the arguments' leaves in order, then the operations' outputs in
    the order they ran."""
    if not callable(f):
        raise TypeError(f"saved_residuals: f must be callable, got {type(f).__name__}")
    leaves, treedef = tree_flatten((args, kwargs))
    leaves = [frontend.asarray(v) if not isinstance(v, ArrayBase) else v for v in leaves]
    names = _arg_names(f, args, kwargs)
    if names is None or len(names) != len(leaves):
        names = [None] * len(leaves)
    tape = _SourceTape(P._interpreter.get())
    ins = [tape.new_input(v) if is_inexact(v.dtype) else v for v in leaves]

    def run(*xs):
        a, k = treedef.unflatten(xs)
        return f(*a, **k)

    out = call_finishing(tape, run, *ins)
    seeds = [(o._idx, o.primal) for o in tree_flatten(out)[0]
             if isinstance(o, TapeTracer) and o._interp is tape]
    if not seeds:
        return []

    reads = _Reads(tape.parent)
    cts = [(i, frontend.ones_like(v)) for i, v in seeds]
    call_in(reads, tape.backward, cts)
    read = reads.seen
    for e in tape.tape:
        if e is not None and e.__class__ is not tuple and getattr(e, "cf", False) is None:
            # a jitted call's entry: its compiled backward pass reads the operands it kept
            for v in e.primals:
                if isinstance(v, ArrayBase):
                    read.setdefault(id(v), v)
    arg_ids = {id(v) for v in leaves}
    found: list[tuple[Any, str]] = []
    consts: list[tuple[Any, str]] = []
    for e in tape.tape:     # closed-over values an operation saved, in the order they ran
        for v in (e[2] if e.__class__ is tuple else getattr(e, "primals", ()) or ()):
            if isinstance(v, ArrayBase) and read.get(id(v)) is v and id(v) not in arg_ids \
                    and id(v) not in tape.made:
                read.pop(id(v))
                consts.append((v, "from a literal" if _one_value(v) else "from a constant"))
    consts.sort(key=lambda c: c[1] != "from a literal")     # JAX lists the literals first
    for k, v in enumerate(leaves):
        # (one array passed as several arguments is read through each: JAX lists each)
        if read.get(id(v)) is v:
            found.append((v, f"from the argument {names[k]}" if names[k] is not None else
                          f"from the argument at flattened index {k}"))
    for v in leaves:
        read.pop(id(v), None)
    for key, (v, what) in tape.made.items():
        if read.get(key) is v:
            read.pop(key)
            found.append((v, what))
    for e in tape.tape:
        res = getattr(e, "res", None)
        if res is not None and e.__class__ is not tuple:    # a custom_vjp's residuals
            name = getattr(e.cf, "__name__", "?")
            for v in tree_flatten(res)[0]:
                if isinstance(v, ArrayBase) and read.get(id(v)) is v:
                    read.pop(id(v))
                    found.append((v, f"residual of custom_vjp function '{name}'"))
    return [(ShapeDtypeStruct(() if d == "from a literal" else v.shape, v.dtype), d)
            for v, d in consts + found]


class _Reads(Interpreter):
    """Runs operations at the level below, noting every array operand they read (``stages``:
    operations on concrete arrays come here too, not only those on tracers)."""
    __slots__ = ("seen",)

    def __init__(self, parent: Any) -> None:
        Interpreter.__init__(self, "saved_residuals", parent)
        self.stages = True
        self.seen: dict[int, Any] = {}

    def process(self, prim, args, params):
        for a in args:
            if isinstance(a, ArrayBase):
                self.seen.setdefault(id(a), a)
        return bind_at(self.parent, prim, args, params)


def _one_value(v):
    """Whether ``v`` is what the front end makes of a Python number (JAX's literal): 0-d, or
    one value broadcast (every stride 0)."""
    c = v._concrete_tensor()
    if c is None:
        return False
    a = c.numpy()
    return a.ndim == 0 or (a.size > 0 and not any(a.strides))


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print the residuals of ``vjp(f, *args, **kwargs)``, one line each, in JAX's format:
    ``f32[3,3] from the argument W``, ``f32[3] output of sin from file.py:4:11 (f)``, ``f32[3]
    from a constant`` (see :func:`saved_residuals`).

    Examples
    --------
    >>> import nx_rune as nx
    >>> from nx_rune.ad_checkpoint import print_saved_residuals
    >>> print_saved_residuals(lambda x: nx.sum(nx.sin(x)), nx.ones(3))
    f32[3] from the argument x
    """
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{_short(aval)} {src}")
