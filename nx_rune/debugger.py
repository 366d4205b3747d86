"""The debugger of ``nx.debug.breakpoint`` (JAX's ``jax.debug.breakpoint``).

``breakpoint()`` notes the calling frame's local variables; when the computation runs (eagerly
at once; under ``jit`` on every call that reaches it, with that call's values; in a ``cond``
branch only when the branch runs; under ``vmap`` once per example) it opens a small debugger on
them, as JAX's ``jdb``: the prompt ``(jdb)`` reads ``p expr`` / ``pp expr`` (print an
expression of the locals), ``l`` (the source around the breakpoint), ``w`` (where), ``c`` or
``q`` (continue), or any Python statement or expression, until ``c``, ``q`` or the end of input.
"""
from __future__ import annotations

import builtins
import linecache
import pprint
import sys

__all__ = ["session"]


def session(filename, lineno, funcname, env):
    """The ``(jdb)`` loop on ``env`` (the frame's locals with their values)."""
    out = sys.stdout
    out.write(f"Entering jdb:\n> {filename}({lineno}){funcname}()\n")
    while True:
        try:
            line = builtins.input("(jdb) ")
        except EOFError:
            return
        cmd, _, rest = line.strip().partition(" ")
        try:
            if cmd in ("c", "continue", "q", "quit", "exit"):
                return
            if cmd in ("p", "pp"):
                value = eval(rest, {}, env)
                out.write((pprint.pformat(value) if cmd == "pp" else repr(value)) + "\n")
            elif cmd in ("l", "list"):
                for n in range(max(1, lineno - 5), lineno + 6):
                    text = linecache.getline(filename, n)
                    if text:
                        out.write(f"{n:4d}{' ->' if n == lineno else '   '} {text}")
            elif cmd in ("w", "where", "bt"):
                out.write(f"> {filename}({lineno}){funcname}()\n")
            elif line.strip():
                try:
                    code = compile(line, "<jdb>", "eval")
                except SyntaxError:
                    exec(compile(line, "<jdb>", "exec"), {}, env)
                else:
                    value = eval(code, {}, env)
                    if value is not None:
                        out.write(repr(value) + "\n")
        except Exception as e:        # a mistake typed at the prompt: say so, keep going
            out.write(f"*** {type(e).__name__}: {e}\n")


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
