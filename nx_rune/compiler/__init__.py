"""The compiler: tracing to a program (IR), passes, the executor, and ``jit``/``make_jaxpr``.

Modules: ``ir`` (the program representation and its printer), ``abstract`` (shape and dtype
inference per primitive), ``tracing`` (the tracing interpreter), ``interpret`` (evaluating a
program through ``bind``), ``dispatch`` (which interpreter handles a compiled call),
``passes`` (program-to-program optimizations), ``executor`` (generated code over NumPy
arrays), ``pipeline`` (passes + executor), ``control`` (``lax`` control flow and
``custom_vjp``/``custom_jvp`` calls under a trace), ``api`` (``jit``, ``make_jaxpr``),
``batching`` (``vmap`` of jitted calls and of the control equations).  The compiler sits above the autodiff layer
(it differentiates traced programs) and below the package namespace.
"""
from nx_rune.compiler.api import jit, make_jaxpr
from nx_rune.compiler import control  # noqa: F401,E402  (installs the custom_call recording)
from nx_rune.compiler import batching  # noqa: F401,E402  (installs the vmap rules)
from nx_rune.compiler import abstract_eig  # noqa: F401,E402  (eig's abstract rule)

__all__ = ["jit", "make_jaxpr"]
