"""JAX's ``jax_debug_nans`` / ``jax_debug_infs``: with the option on, a primitive whose output
holds a NaN (an infinity) raises ``FloatingPointError("invalid value (nan) encountered in
log")``, naming the primitive as JAX does.

* Eagerly (and under ``grad``/``vjp``/``jvp``/``vmap``, whose values are computed eagerly) every
  primitive's output is checked as it is made: an interpreter at the bottom of this context's
  stack (:class:`_FPCheck`) runs each operation's implementation and looks at the result.
* A ``jit`` call's outputs are checked; on a bad value the message "Invalid nan value
  encountered in the output of a jax.jit function. Calling the de-optimized version." is
  printed and the function runs again without ``jit``, op by op, so that the error names the
  primitive (JAX's behaviour).  If that run makes no bad value, FloatingPointError says so.

When both options are off nothing is installed: the eager operations and the jitted calls run
exactly the code they run without this module.  The process-wide setting
(``nx.config.update``, or the environment variables ``JAX_DEBUG_NANS``/``JAX_DEBUG_INFS`` at
import) checks the eager operations of the context that set it (the main thread's, at the
top of a program) and the jitted calls of every thread; ``with nx.debug_nans(True):`` covers
a block of the current thread or task.
"""
from __future__ import annotations

import contextvars
import functools
import inspect
import threading
from typing import Any, Callable, Literal

import numpy as np

from nx_rune import config as _config
from nx_rune import primitives as P
from nx_rune.autodiff.core import Interpreter
from nx_rune.compiler import api as _jit_api
from nx_rune.tensor import Tensor, call_impl

__all__ = ["debug_nans", "debug_infs", "NO_NAN_CHECK", "jax_name"]

# primitives whose output is not checked (here and by checkify's nan_checks): they move,
# select, compare or convert values, so a NaN they hand on was made before them (JAX's list of
# NaN-generating primitives leaves these out too).  A NaN the library puts in on purpose (a
# fill value, broadcast and selected where a result is undefined) is not reported here; one
# from data is, at the first arithmetic primitive that meets it.
NO_NAN_CHECK = frozenset([
    "reshape", "expand", "permute", "pad", "shrink", "flip", "as_strided", "cat", "copy",
    "contiguous", "assign", "buffer", "const_scalar", "const_array", "cast", "where", "gather",
    "scatter", "stop_gradient", "roll", "sort", "argsort", "argmax", "max", "reduce_max",
    "reduce_nanmax", "reduce_nanmin", "clip", "abs", "neg", "sign", "real", "imag", "conj",
    "complex", "floor", "ceil", "rint", "trunc", "isnan", "isinf", "isfinite", "cmplt", "cmpne",
    "and", "or", "xor", "lshift", "rshift", "threefry", "threefry_bits", "searchsorted",
    "unfold", "fold", "signbit", "copysign", "nextafter"])
# nx_rune's primitive name -> JAX's, for the messages
_JAX_NAME = {"fdiv": "div", "idiv": "div", "recip": "div", "matmul": "dot_general",
             "expit": "logistic"}


def jax_name(prim, params):
    """The name JAX gives the operation of primitive ``prim`` (for messages)."""
    name = prim.name
    if name == "associative_scan":
        return {"sum": "cumsum", "prod": "cumprod", "max": "cummax",
                "min": "cummin"}.get(params.get("op"), name)
    return _JAX_NAME.get(name, name)


def _bad(arr, nans, infs):
    """``"nan"``/``"inf"`` when ndarray ``arr`` holds what the options look for, else None."""
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return None
    if nans and np.isnan(arr).any():
        return "nan"
    if infs and np.isinf(arr).any():
        return "inf"
    return None


def _check_value(v, where, nans, infs):
    if type(v) is Tensor:
        kind = _bad(v._np(), nans, infs)
        if kind is not None:
            raise FloatingPointError(f"invalid value ({kind}) encountered in {where}")
    elif isinstance(v, (tuple, list)):
        for x in v:
            _check_value(x, where, nans, infs)


class _FPCheck(Interpreter):
    """The bottom interpreter of a context with debug_nans/debug_infs on: every operation on
    concrete values runs its implementation here (``stages``: bind hands it even operations on
    concrete Tensors, and the operators skip their fast path while an interpreter is active),
    and its result is checked."""
    __slots__ = ()

    def __init__(self):
        Interpreter.__init__(self, "debug_nans", None)
        self.stages = True

    def process(self, prim, args, params):
        out = call_impl(prim, tuple(args), params)
        if prim.name not in NO_NAN_CHECK:
            nans, infs = _config.debug_flags()
            if nans or infs:
                _check_value(out, jax_name(prim, params), nans, infs)
        return out


# per context, the checker this module put at the bottom of the interpreter stack (and the
# token that put it there), or None
_INSTALLED: contextvars.ContextVar[Any] = contextvars.ContextVar("nx_rune_fp_check",
                                                                 default=None)
# a jitted call being checked (its own outputs are checked once, by the outermost hook)
_IN_JIT_CHECK: contextvars.ContextVar[bool] = contextvars.ContextVar("nx_rune_fp_jit",
                                                                     default=False)


def _sync():
    """Put the checker at the bottom of this context's stack when an option is on here, take
    it away when both are off; the jit hook is on while any option is on anywhere."""
    nans, infs = _config.debug_flags()
    cur = P._interpreter.get()
    mine = _INSTALLED.get()
    if nans or infs:
        if mine is None and cur is None:
            checker = _FPCheck()
            _INSTALLED.set(checker)
            P._interpreter.set(checker)
    elif mine is not None and cur is mine:
        P._interpreter.set(None)
        _INSTALLED.set(None)
    _set_hook()


# the blocks (of any thread or task) open now that turn an option on: the jit hook stays
# installed while there is one, or while a process-wide option is on
_ON_BLOCKS = [0]
_LOCK = threading.Lock()


def _set_hook():
    g = _config._GLOBAL_DEBUG
    with _LOCK:
        on = bool(g["nans"] or g["infs"] or _ON_BLOCKS[0])
        if on != _jit_api.debug_call_installed():
            _jit_api.set_debug_call(_jit_hook if on else None)


def _jit_hook(jf, args, kwargs):
    """``jf(*args, **kwargs)`` with its outputs checked (see the module doc), or
    ``_jit_api.NOT_HANDLED`` where nothing is to be checked here."""
    nans, infs = _config.debug_flags()
    if not (nans or infs) or _IN_JIT_CHECK.get():
        return _jit_api.NOT_HANDLED
    token = _IN_JIT_CHECK.set(True)
    try:
        out = jf(*args, **kwargs)
    finally:
        _IN_JIT_CHECK.reset(token)
    from nx_rune.autodiff.core import concrete
    from nx_rune.tree_util import tree_leaves
    kind = None
    for v in tree_leaves(out):
        v = concrete(v)     # (the values under grad's or jvp's tracers)
        if type(v) is Tensor:
            kind = _bad(v._np(), nans, infs)
            if kind is not None:
                break
    if kind is None:
        return out
    print("Invalid nan value encountered in the output of a jax.jit function. Calling the "
          "de-optimized version.")
    with _Block(nans, infs):
        jf._fun(*args, **kwargs)
    name = getattr(jf, "_name", "a jitted function")
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in jit({name}). Because jax_debug_nans and/or "
        f"jax_debug_infs is set, the de-optimized function (the function as if the `jit` "
        f"decorator were removed) was called in an attempt to get a more precise error "
        f"message. However, the de-optimized function did not produce invalid values during "
        f"its execution: the invalid value may come from the compiler's optimizations, or "
        f"from nan/inf literals as inputs or outputs")


class _Block:
    """The options set to ``(nans, infs)`` (None: left as they are) for a block of this
    thread or task; the checker installed for it when this context had none.  (One object
    per entry: see _Option.)"""
    __slots__ = ("new", "saved", "on")

    def __init__(self, nans, infs):
        self.new = (nans, infs)
        self.saved = None
        self.on = any(self.new)

    def __enter__(self):
        old = _config.SCOPED_DEBUG.get()
        new = tuple(o if n is None else n for n, o in zip(self.new, old))
        t1 = _config.SCOPED_DEBUG.set(new)
        t2 = _INSTALLED.set(_INSTALLED.get())
        t3 = P._interpreter.set(P._interpreter.get())
        self.saved = (t1, t2, t3)
        if self.on:
            with _LOCK:
                _ON_BLOCKS[0] += 1
        _sync()
        return self

    def __exit__(self, *exc):
        t1, t2, t3 = self.saved
        P._interpreter.reset(t3)
        _INSTALLED.reset(t2)
        _config.SCOPED_DEBUG.reset(t1)
        if self.on:
            with _LOCK:
                _ON_BLOCKS[0] -= 1
        _set_hook()
        return False


# per context, the option blocks entered and not yet exited, innermost last: (instance, block),
# so that one instance may be entered by several threads or tasks at once
_OPEN: contextvars.ContextVar[tuple] = contextvars.ContextVar("nx_rune_debug_blocks", default=())


class _Option:
    """``with nx.debug_nans(True): ...`` or ``@nx.debug_nans(True)``."""
    _which = "nans"

    def __init__(self, new_val: bool = True) -> None:
        self.new_val = _config._check_bool(new_val, "new_val")

    def __enter__(self):
        flags = (self.new_val, None) if self._which == "nans" else (None, self.new_val)
        block = _Block(*flags)
        block.__enter__()
        _OPEN.set(_OPEN.get() + ((self, block),))
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        blocks = _OPEN.get()
        for i in range(len(blocks) - 1, -1, -1):
            if blocks[i][0] is self:
                break
        else:
            raise RuntimeError(f"{type(self).__name__}.__exit__ without a matching __enter__ "
                               f"in this thread or task")
        _OPEN.set(blocks[:i] + blocks[i + 1:])
        blocks[i][1].__exit__(*exc)
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(func):
            raise TypeError(f"{type(self).__name__}: expected a function to decorate, got "
                            f"{type(func).__name__}")
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def run_async(*args, **kwargs):
                with type(self)(self.new_val):
                    return await func(*args, **kwargs)
            return run_async

        @functools.wraps(func)
        def run(*args, **kwargs):
            with type(self)(self.new_val):
                return func(*args, **kwargs)
        return run

    def __repr__(self) -> str:
        return f"nx_rune.{type(self).__name__}({self.new_val})"


class debug_nans(_Option):
    """JAX's ``jax.debug_nans``: the ``jax_debug_nans`` option on (``new_val=True``) or off
    for a block of the current thread or task (``with nx.debug_nans(): ...``, or as a
    decorator).  While on, a primitive whose output holds a NaN raises FloatingPointError
    naming it (see ``nx_rune.config_nans``).

    Examples
    --------
    >>> import nx_rune as nx
    >>> with nx.debug_nans(True):
    ...     try:
    ...         nx.log(nx.asarray(-1.0))
    ...     except FloatingPointError as e:
    ...         print(e)
    invalid value (nan) encountered in log
    """
    _which = "nans"


class debug_infs(_Option):
    """JAX's ``jax.debug_infs``: the ``jax_debug_infs`` option on or off for a block (as
    :class:`debug_nans`, for infinities).

    Examples
    --------
    >>> import nx_rune as nx
    >>> with nx.debug_infs(True):
    ...     try:
    ...         nx.exp(nx.asarray(1000.0))
    ...     except FloatingPointError as e:
    ...         print(e)
    invalid value (inf) encountered in exp
    """
    _which = "infs"


_config.DEBUG_HOOK[0] = _sync
_sync()     # the environment variables' values


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
