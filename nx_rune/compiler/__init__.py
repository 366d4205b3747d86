"""The compiler: tracing to a program (IR), passes, the executor, and ``jit``/``make_jaxpr``.

Modules: ``ir`` (the program representation and its printer), ``abstract`` (shape and dtype
inference per primitive), ``tracing`` (the tracing interpreter), ``interpret`` (evaluating a
program through ``bind``), ``passes`` (program-to-program optimizations), ``executor``
(generated code over NumPy arrays), ``pipeline`` (passes + executor), ``control`` (``lax``
control flow), ``api`` (``jit``, ``make_jaxpr``).  The compiler sits above the autodiff layer
(it differentiates traced programs) and below the package namespace.
"""
from nx_rune.compiler.api import jit, make_jaxpr

__all__ = ["jit", "make_jaxpr"]
