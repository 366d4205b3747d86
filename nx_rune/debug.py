"""Printing and callbacks that work inside transformed functions (JAX's ``jax.debug``).

``nx.debug.print("x={x}", x=x)`` prints with ``str.format`` when the computation runs: eagerly
at once; under ``jit`` on every call of the compiled function, with that call's values (not
once while tracing, as Python's ``print`` would); under ``grad``/``jvp`` the primal values;
under ``vmap`` once per example, as JAX does.  ``nx.debug.callback(fn, *args, **kwargs)``
calls ``fn`` the same way, with the array arguments as Tensors.  Both keep program order
among themselves and are never removed by the compiler (``nx_rune.compiler.effects``).
``nx.debug.breakpoint()`` opens a debugger on the caller's values the same way
(``nx_rune.debugger``).
"""
from __future__ import annotations

import builtins
import string
import sys
from typing import Any, Callable

import numpy as np

from nx_rune.compiler.effects import debug_callback_op, debug_print_op, effect_bind
from nx_rune.debugger import session
from nx_rune.tensor import ArrayBase
from nx_rune.tree_util import tree_flatten, tree_unflatten

__all__ = ["print", "callback", "breakpoint"]


def _dynamic(x):
    """Whether pytree leaf ``x`` is an array argument (passed as a value: traced under jit),
    as JAX's abstractification decides: arrays, NumPy arrays and scalars, Python numbers."""
    return isinstance(x, (ArrayBase, np.ndarray, np.generic, builtins.bool, int, float,
                          complex))


def _split(args, kwargs):
    """(treedef, array leaves as arrays, {position: static leaf})."""
    from nx_rune.frontend import asarray
    leaves, tree = tree_flatten((tuple(args), dict(kwargs)))
    dyn, static = [], {}
    for i, x in enumerate(leaves):
        if _dynamic(x):
            dyn.append(x if isinstance(x, ArrayBase) else asarray(x))
        else:
            static[i] = x
    return tree, dyn, static


def _merge(tree, values, static):
    it = iter(values)
    leaves = [static[i] if i in static else next(it)
              for i in range(len(static) + len(values))]
    return tree_unflatten(tree, leaves)


class _Named:
    """A parameter printed by the program printer as a name (a callback function)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def pp(self):
        return self.name

    def __repr__(self):
        return self.name


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting (JAX's checks: a
    missing field raises KeyError/IndexError, an unused argument ValueError)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `nx.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(f"Unused keyword arguments to `nx.debug.print`: {unused_kw}. You "
                             f"may be passing an f-string (f\"{{x}}\") into nx.debug.print, "
                             f"which formats when it runs: pass a plain string and the "
                             f"values (\"{{x}}\", x=x)")


_CHECKER = _FormatChecker()


class _Shown:
    """An array argument as ``debug.print`` formats it, as JAX's arrays format: a 0-d array
    as its NumPy scalar (``"{}"`` of a float32 0.1 is ``0.10000000149011612``, a format spec
    applies to the number), others as NumPy arrays (``str``); ``!r`` is the Tensor's repr;
    indexing (``{x[0]}``) and attributes (``{x.shape}``) read the Tensor."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __format__(self, spec):
        arr = np.asarray(self.value)
        return format(arr[()] if arr.ndim == 0 else arr, spec)

    def __str__(self):
        return str(self.value)

    def __repr__(self):
        return repr(self.value)

    def __getitem__(self, index):
        return _Shown(self.value[index])

    def __getattr__(self, name):
        return getattr(self.value, name)


class _Printer:
    """The callback of one ``debug.print``: formats and writes a line to ``sys.stdout``."""
    __slots__ = ("fmt", "tree", "static", "printoptions", "placeholders")

    def __init__(self, fmt, tree, static, printoptions, placeholders):
        self.fmt, self.tree, self.static = fmt, tree, static
        self.printoptions, self.placeholders = printoptions, placeholders

    def __call__(self, *values):
        args, kwargs = _merge(self.tree, [_Shown(v) for v in values], self.static)
        if self.placeholders:
            with np.printoptions(**self.printoptions):
                msg = self.fmt.format(*args, **kwargs)
        else:
            msg = " ".join((self.fmt, *(str(a) for a in args)))
        sys.stdout.write(msg + "\n")


def print(fmt: str | None = None, *args: Any, ordered: bool = False,  # noqa: A001
          partitioned: bool = False, skip_format_check: bool = False,
          **kwargs: Any) -> Callable[..., None] | None:
    """Print ``fmt.format(*args, **kwargs)`` (and a newline, to ``sys.stdout``) when the
    computation runs: eagerly now; under ``jit`` on every call with its values; under
    ``grad``/``jvp`` the primal values; under ``vmap`` once per example (JAX's behaviour).

    Use a plain string, not an f-string: ``nx.debug.print("x={x}", x=x)``.  Array arguments
    are formatted as Tensors (``str`` as NumPy's, under the NumPy print options in effect at
    the call); a format string without fields prints the arguments after it, separated by
    spaces.  An argument the format does not use raises ValueError, a field without an
    argument KeyError/IndexError (``skip_format_check=True`` skips these checks).  Without
    ``fmt``, returns the printing function (JAX's two-call form:
    ``nx.debug.print(ordered=True)("{}", x)``).  ``ordered`` and ``partitioned`` are accepted:
    every effect runs in program order on the one device."""
    def _print(fmt, *c_args, **c_kwargs):
        if not isinstance(fmt, str):
            raise TypeError(f"debug.print: fmt must be a str (a format string), got "
                            f"{type(fmt).__name__}")
        if not skip_format_check:
            _CHECKER.format(fmt, *c_args, **c_kwargs)
        placeholders = any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))
        tree, dyn, static = _split(c_args, c_kwargs)
        printer = _Printer(fmt, tree, static, dict(np.get_printoptions()), placeholders)
        effect_bind(debug_print_op, {"fmt": fmt, "_callback": printer}, dyn)

    if fmt is not None:
        _print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug.print received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return _print


def callback(callback: Callable[..., Any] | None = None, *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Call ``callback(*args, **kwargs)`` when the computation runs (JAX's
    ``jax.debug.callback``): eagerly now; under ``jit`` on every call, with that call's values;
    under ``grad``/``jvp`` with the primal values; under ``vmap`` once per example.  Array
    leaves of the arguments arrive as Tensors (copies, under ``jit``), other leaves as given.
    Its return value is ignored.  Without ``callback``, returns the calling function (JAX's
    two-call form).  ``ordered`` and ``partitioned`` are accepted: every effect runs in program
    order on the one device."""
    def _callback(fn, *c_args, **c_kwargs):
        if not callable(fn):
            raise TypeError(f"debug.callback: callback must be callable, got an object of "
                            f"type {type(fn).__name__}")
        tree, dyn, static = _split(c_args, c_kwargs)

        def flat(*values):
            a, kw = _merge(tree, values, static)
            fn(*a, **kw)

        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        effect_bind(debug_callback_op, {"callback": _Named(name), "_callback": flat}, dyn)

    if callback is not None:
        _callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug.callback received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return _callback


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> Any:
    """Open a debugger on the calling frame's local variables when the computation runs
    (JAX's ``jax.debug.breakpoint``): eagerly now, under ``jit`` at run time with the call's
    values (arrays as Tensors), in a ``cond``/``switch`` branch only when it is taken.
    ``backend`` must be None or ``'cpu'``; ``filter_frames``, ``num_frames``, ``ordered`` and
    ``token`` are accepted (one frame is shown: the caller's).  Returns ``token``."""
    if backend not in (None, "cpu"):
        raise ValueError(f"debug.breakpoint: backend must be None or 'cpu', got {backend!r}")
    frame = sys._getframe(1)
    names, values, static = [], [], {}
    for name, v in frame.f_locals.items():
        if isinstance(v, (ArrayBase, np.ndarray, np.generic)):
            names.append(name)
            values.append(v)
        else:
            static[name] = v
    where = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    del frame

    def open_debugger(*arrays):
        env = dict(static)
        env.update(zip(names, arrays))
        session(*where, env)

    callback(open_debugger, *values, ordered=ordered)
    return token


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
