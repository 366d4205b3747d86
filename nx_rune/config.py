"""Run-time settings: ``nx.config`` and the float64 mode (``enable_x64``).

One option today, ``"enable_x64"`` (JAX's ``jax_enable_x64``, also accepted under that name):
off (the default), Python floats and default float dtypes are float32, ints int32, complex
numbers complex64; on, they are float64, int64 and complex128, and ``nx.random`` draws as JAX
does in x64 mode.  nx_rune keeps every dtype in both modes (a float64 array stays float64 with
x64 off, unlike JAX, which narrows it): the mode changes defaults only.

The setting is per context (``contextvars``): a thread or asyncio task that changes it changes
nothing for the others.  Where a context has not set it, the process-wide value applies:

- the process-wide value: read from the environment variable ``NX_RUNE_ENABLE_X64`` when
  nx_rune is imported (``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``, any
  case; unset is off), and set by ``nx.config.update("enable_x64", True)`` made at the top of
  the program (the main thread, outside a running asyncio task), as ``jax.config.update``: it
  then reaches worker threads, which start with an empty context, and every notebook cell;
- ``nx.config.update`` made inside a worker thread or an asyncio task sets the value of that
  thread or task only (its context, and the tasks it starts);
- ``with nx.enable_x64():`` (``nx.enable_x64(False)`` turns it off) sets it for a block of the
  current thread or task; blocks nest.
"""
from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import os
import threading
from typing import Any, Callable, Literal

import numpy as np

from nx_rune._kernels import pool as _pool

__all__ = ["update", "read", "x64_enabled", "numpy_promotion", "enable_x64", "ENV_VAR", "OPTIONS",
           "PROMOTION_OPTIONS",
           "NO_EFFECT_OPTIONS", "set_num_threads", "get_num_threads", "DEBUG_OPTIONS",
           "debug_flags"]

ENV_VAR = "NX_RUNE_ENABLE_X64"
# option name -> canonical name (JAX's spelling is accepted, so ported code runs unchanged)
OPTIONS = {"enable_x64": "enable_x64", "jax_enable_x64": "enable_x64"}

_TRUE = ("1", "true", "yes", "on", "y", "t")
_FALSE = ("0", "false", "no", "off", "n", "f", "")


def _env_flag(name: str, value: str | None) -> bool:
    if value is None:
        return False
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ValueError(f"{name}: expected 1/0, true/false, yes/no or on/off, got {value!r}")


# the process-wide value, a one-element list so that readers need no ``global`` statement
_GLOBAL_X64 = [_env_flag(ENV_VAR, os.environ.get(ENV_VAR))]
# this context's setting (its innermost ``enable_x64`` block, or an update made in a worker
# thread or task): True/False, or None where the context has not set it
_SCOPED_X64: contextvars.ContextVar[bool | None] = contextvars.ContextVar("nx_rune_x64",
                                                                         default=None)
# per context, the blocks entered and not yet exited, innermost last: (instance, token)
_BLOCKS: contextvars.ContextVar[tuple] = contextvars.ContextVar("nx_rune_x64_blocks",
                                                                default=())


# dtype promotion between tensors: JAX's by kind (False, the default) or NumPy's throughout
# (True): the process-wide value, and this context's (nx_rune.autograd's calls set it)
_GLOBAL_NUMPY_PROMOTION = [False]
_SCOPED_NUMPY_PROMOTION: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "nx_rune_numpy_promotion", default=None)
PROMOTION_OPTIONS = ("dtype_promotion", "nx_rune_dtype_promotion")


def numpy_promotion() -> bool:
    """Whether tensors promote as NumPy's (``"dtype_promotion"`` is ``"numpy"`` here), rather
    than JAX's by kind (an integer meeting a float takes the float's dtype).

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.config.numpy_promotion(), nx.config.read("dtype_promotion")
    (False, 'jax')
    """
    v = _SCOPED_NUMPY_PROMOTION.get()
    return _GLOBAL_NUMPY_PROMOTION[0] if v is None else v


def _promotion(value: Any) -> bool:
    if value not in ("jax", "numpy"):
        raise ValueError(f"value: dtype_promotion is 'jax' or 'numpy', got {value!r}")
    return value == "numpy"


def x64_enabled() -> bool:
    """Whether x64 mode is on here: the innermost ``enable_x64`` block of this thread/task,
    else the process-wide value."""
    v = _SCOPED_X64.get()
    return _GLOBAL_X64[0] if v is None else v


def _option(name: Any, argname: str = "name") -> str:
    if not isinstance(name, str):
        raise TypeError(f"{argname}: expected an option name (a str), got {name!r}")
    canonical = OPTIONS.get(name)
    if canonical is None:
        raise ValueError(f"{argname}: unknown config option {name!r}; the options are "
                         f"{', '.join(repr(o) for o in OPTIONS)}")
    return canonical


def _check_bool(value: Any, argname: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{argname}: expected True or False, got {value!r}")
    return bool(value)


# JAX's platform options: nx_rune runs on the CPU, so "cpu" is the one value they accept
# (``jax.config.update("jax_platform_name", "cpu")`` in ported programs runs as it is)
PLATFORM_OPTIONS = ("jax_platform_name", "jax_platforms")


def _platform(name: str, value: Any) -> None:
    if value is None or (isinstance(value, str) and value.lower() in ("cpu", "")):
        return
    raise ValueError(f"value: nx_rune runs on the CPU: {name} accepts only 'cpu', got "
                     f"{value!r}")


# JAX's options that change only what JAX logs or how it carries out a transformation inside,
# never the values computed: accepted (with a value of their type) and read back, so that ported
# programs run unchanged; nx_rune has nothing for them to switch.  name -> (type, default)
NO_EFFECT_OPTIONS: dict[str, tuple[type, Any]] = {
    "jax_explain_cache_misses": (bool, False),
    "jax_log_compiles": (bool, False),
    "jax_remat3": (bool, False),
    "jax_traceback_filtering": (str, "auto"),
}
_NO_EFFECT_VALUES = {k: v[1] for k, v in NO_EFFECT_OPTIONS.items()}


def _no_effect(name: str, value: Any) -> None:
    kind = NO_EFFECT_OPTIONS[name][0]
    if kind is bool:
        value = _check_bool(value, "value")
    elif not isinstance(value, kind):
        raise TypeError(f"value: {name} takes a {kind.__name__}, got {value!r}")
    _NO_EFFECT_VALUES[name] = value


# JAX's ``jax_debug_nans`` / ``jax_debug_infs``: a primitive whose output holds a NaN (an
# infinity) raises FloatingPointError naming it.  The values live here (read by everything);
# the checking itself is nx_rune.config_nans (above the transformations), which installs
# DEBUG_HOOK[0](name, value), called by update on every change.  Process-wide values (read from
# the environment variables JAX_DEBUG_NANS / NX_RUNE_DEBUG_NANS and ..._INFS at import), and a
# per-context override for ``with nx.debug_nans(...)`` blocks.
DEBUG_OPTIONS = {"jax_debug_nans": "nans", "debug_nans": "nans",
                 "jax_debug_infs": "infs", "debug_infs": "infs"}
_GLOBAL_DEBUG = {
    "nans": _env_flag("JAX_DEBUG_NANS", os.environ.get("JAX_DEBUG_NANS")) or
    _env_flag("NX_RUNE_DEBUG_NANS", os.environ.get("NX_RUNE_DEBUG_NANS")),
    "infs": _env_flag("JAX_DEBUG_INFS", os.environ.get("JAX_DEBUG_INFS")) or
    _env_flag("NX_RUNE_DEBUG_INFS", os.environ.get("NX_RUNE_DEBUG_INFS")),
}
SCOPED_DEBUG: contextvars.ContextVar[tuple] = contextvars.ContextVar("nx_rune_debug_nans",
                                                                    default=(None, None))
DEBUG_HOOK: list = [None]


def debug_flags() -> tuple[bool, bool]:
    """``(debug_nans, debug_infs)`` in effect here: this context's block, else the
    process-wide values."""
    n, i = SCOPED_DEBUG.get()
    return (_GLOBAL_DEBUG["nans"] if n is None else n,
            _GLOBAL_DEBUG["infs"] if i is None else i)


def update(name: str, value: Any) -> None:
    """Set option ``name`` (``"enable_x64"``, or JAX's ``"jax_enable_x64"``) to ``value`` (a
    bool).  JAX's ``"jax_platform_name"`` and ``"jax_platforms"`` accept ``"cpu"`` (nothing to
    change: the CPU is the one device); JAX's ``"jax_explain_cache_misses"``,
    ``"jax_log_compiles"``, ``"jax_remat3"`` and ``"jax_traceback_filtering"`` are accepted and
    read back (they change only JAX's logging and inner workings, never values).
    ``"jax_debug_nans"`` / ``"jax_debug_infs"`` (also without ``jax_``): True makes a
    primitive whose output holds a NaN (an infinity) raise FloatingPointError naming it
    (eagerly at once; a jitted call's outputs are checked and, on a NaN, the function runs
    again op by op to name the primitive), as JAX's; process-wide (also read from
    ``JAX_DEBUG_NANS``/``JAX_DEBUG_INFS`` at import); ``nx.debug_nans(True)`` for a block.
    ``"dtype_promotion"``: ``"jax"`` (the default: an integer tensor meeting a float one takes
    its dtype) or ``"numpy"`` (NumPy's promotion: int32 with float32 is float64).  At the top
    of the program (the main thread, outside a running asyncio task) it sets the process-wide
    value, as ``jax.config.update``: every thread and task that has not set its own sees it.
    In a worker thread or an asyncio task it sets that thread's or task's value only (per
    context: nothing leaks into the others).
    ValueError naming an unknown option; TypeError for a value of the wrong type."""
    if name in PLATFORM_OPTIONS:
        _platform(name, value)
        return
    if name in NO_EFFECT_OPTIONS:
        _no_effect(name, value)
        return
    if name in DEBUG_OPTIONS:
        _GLOBAL_DEBUG[DEBUG_OPTIONS[name]] = _check_bool(value, "value")
        if DEBUG_HOOK[0] is not None:
            DEBUG_HOOK[0]()
        return
    if name in PROMOTION_OPTIONS:
        flag = _promotion(value)
        if threading.current_thread() is threading.main_thread() and not _in_task():
            _GLOBAL_NUMPY_PROMOTION[0] = flag
        else:
            _SCOPED_NUMPY_PROMOTION.set(flag)
        return
    _option(name)
    value = _check_bool(value, "value")
    if threading.current_thread() is threading.main_thread() and not _in_task():
        _GLOBAL_X64[0] = value
    else:
        _SCOPED_X64.set(value)


def _in_task() -> bool:
    try:
        return asyncio.current_task() is not None
    except RuntimeError:   # no running event loop
        return False


def read(name: str) -> Any:
    """The value of option ``name`` in effect here (for ``"enable_x64"``: a bool, the
    innermost ``enable_x64`` block's setting, else the process-wide value; for JAX's platform
    options ``"cpu"``)."""
    if name in PLATFORM_OPTIONS:
        return "cpu"
    if name in NO_EFFECT_OPTIONS:
        return _NO_EFFECT_VALUES[name]
    if name in PROMOTION_OPTIONS:
        return "numpy" if numpy_promotion() else "jax"
    if name in DEBUG_OPTIONS:
        return debug_flags()[0 if DEBUG_OPTIONS[name] == "nans" else 1]
    _option(name)
    return x64_enabled()


class enable_x64:
    """x64 mode on (``new_val=True``, the default) or off for a block: ``with
    nx.enable_x64(): ...``, or as a decorator (``@nx.enable_x64()``, also on ``async def``).

    The block's setting belongs to the current thread or asyncio task only (a ContextVar):
    other threads and tasks keep theirs.  Blocks nest; leaving one restores the setting that
    was in effect when it was entered.  One instance may be entered by several threads or
    tasks at once."""

    def __init__(self, new_val: bool = True) -> None:
        self.new_val = _check_bool(new_val, "new_val")

    def __enter__(self) -> enable_x64:
        token = _SCOPED_X64.set(self.new_val)
        _BLOCKS.set(_BLOCKS.get() + ((self, token),))
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        blocks = _BLOCKS.get()
        for i in range(len(blocks) - 1, -1, -1):
            if blocks[i][0] is self:
                break
        else:
            raise RuntimeError("enable_x64.__exit__ without a matching __enter__ in this thread "
                               "or task (a block entered in one context cannot be exited in "
                               "another)")
        _BLOCKS.set(blocks[:i] + blocks[i + 1:])
        _SCOPED_X64.reset(blocks[i][1])
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(func):
            raise TypeError(f"enable_x64: expected a function to decorate, got "
                            f"{type(func).__name__}")
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def run_async(*args, **kwargs):
                # every step of the coroutine runs in its task's context: the block covers
                # the whole body, and ends in the context that entered it
                with self:
                    return await func(*args, **kwargs)
            return run_async

        @functools.wraps(func)
        def run(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return run

    def __repr__(self) -> str:
        return f"nx_rune.enable_x64({self.new_val})"


def set_num_threads(n: int) -> None:
    """Use ``n >= 1`` threads in the kernels that split large inputs (random draws, gather and
    scatter, fused and matrix-product kernels of compiled programs), from the next call on; the
    process-wide value, read first from the environment variable ``NX_RUNE_NUM_THREADS``
    (default: the machine's cores).  Raises TypeError for a non-integer ``n``, ValueError for
    ``n < 1``."""
    _pool.set_num_threads(n)


def get_num_threads() -> int:
    """The number of threads the kernels use (see ``set_num_threads``)."""
    return _pool.get_num_threads()


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    # JAX's attribute reads of an option (``jax.config.jax_enable_x64``)
    if name in OPTIONS or name in PLATFORM_OPTIONS or name in NO_EFFECT_OPTIONS or \
            name in DEBUG_OPTIONS:
        return read(name)
    raise AttributeError(f"module 'nx_rune.config' has no attribute {name!r}")
