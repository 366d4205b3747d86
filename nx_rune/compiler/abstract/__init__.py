"""Shape and dtype inference: one abstract-evaluation rule per primitive.

``ABSTRACT_RULES[prim](avals, **params) -> AbstractValue`` gives the output's shape, dtype and
weak type from the operands' (``avals``: a list of :class:`AbstractValue`) without computing
anything.  ``abstract_eval(prim, avals, params)`` applies the rule.

Fallback: a primitive without a rule (one added by a user, or by a package that has not written
its rule yet) is evaluated once on dummy operands of the operands' shapes and dtypes (zeros,
else ones, else identity matrices: ``impl`` on concrete Tensors) and the result's shape and
dtype are taken; the answer is cached per (primitive, operand types, parameters).
``FALLBACK_USED`` records which primitives needed it; the coverage test
(tests/test_jit_specs.py::test_every_primitive_has_an_abstract_rule) lists the primitives of
the package that rely on it (none at present: every declared primitive has a rule).

Weak types (values from Python scalars, as in JAX): an elementwise result is weakly typed when
every operand is, movement ops and reductions keep their operand's; every other result is
strongly typed.

The rules are kept by family, one module each, named as the modules of ``nx_rune.backend`` that
hold the implementations (memory, views, movement, elementwise, binary, reductions, scans,
statistics, indexing, windows, random, sorting, fft, special, linalg, xla_math); the table and the
registration helpers are in ``_core``.  The output types are those of the implementations
(checked against them by tests/test_jit_specs.py::test_abstract_rules_match_the_implementations).
Adding a primitive: its rule goes into the module of its family, registered with
``def_abstract`` (or ``register_elementwise`` / ``register_ufunc``).

This package belongs to the compiler: it may import ``nx_rune.primitives``, ``nx_rune.backend``,
``nx_rune.tensor`` and ``nx_rune.compiler.ir``.  The backend cannot hold these rules itself: they
are keyed by the primitive objects and return the compiler's AbstractValue, both of layers above
it.
"""
from nx_rune.compiler.abstract import (  # noqa: F401
                                       binary,
                                       elementwise,
                                       fft,
                                       indexing,
                                       linalg,
                                       linalg_schur,
                                       memory,
                                       movement,
                                       random,
                                       random_rejection,
                                       reductions,
                                       scans,
                                       sorting,
                                       special,
                                       statistics,
                                       views,
                                       windows,
                                       xla_math,
)
from nx_rune.compiler.abstract._core import (
                                       ABSTRACT_RULES,
                                       ELEMENTWISE,
                                       FALLBACK_USED,
                                       abstract_eval,
                                       def_abstract,
                                       register_elementwise,
                                       register_ufunc,
)

__all__ = ["ABSTRACT_RULES", "abstract_eval", "FALLBACK_USED", "ELEMENTWISE", "def_abstract",
           "register_elementwise", "register_ufunc"]
