"""Rules of every primitive (``VJP_RULES``, ``JVP_RULES``, ``BATCH_RULES``), one module per family.

The public form of a rule (what you assign into the tables for a new primitive)::

    VJP_RULES[prim] = lambda ct, *primals, out, **params: (ct_0, ct_1, ...)
    JVP_RULES[prim] = lambda primals, tangents, out, **params: tangent_out

(in practice ``lambda ct, x, out, **params: ...`` for a unary primitive).  A VJP rule gets the
output cotangent, the primal operands, the primal output and the keyword parameters, and
returns one cotangent per operand, each of that operand's shape and dtype, or None for a zero
or non-differentiable one.  A JVP rule gets the primal operands, their tangents (zeros where an
operand carries no perturbation), the output and the parameters, and returns the output's
tangent.  Write rules with front-end ops (``nx.sin``, ``*``, ...) or ``bind``: the interpreters
then see what a rule computes, so rules are differentiable themselves (grad of grad, jvp of
grad, hessians of the new primitive work too).  Example::

    cube_p = Primitive("cube")
    cube_p.def_impl(lambda x: nx.asarray(x.numpy() ** 3))
    VJP_RULES[cube_p] = lambda ct, x, out, **params: (ct * 3 * x * x,)
    JVP_RULES[cube_p] = lambda primals, tangents, out, **params: 3 * primals[0] ** 2 * tangents[0]

The built-in rules are ``VJPRule``/``JVPRule`` objects: callable in the public form, and with
a faster form that the interpreters use (``fn(g, ans, args, params, need)`` where ``need[i]``
is truthy when operand i wants a cotangent, so that e.g. ``x * 2.0`` costs one product, and
``fn(tangents, ans, args, params)`` with None for zero tangents).  The helpers below make them:
``defelementwise(prim, apply)`` fills both tables of a unary elementwise primitive from
``apply(v, ans, x) = v * f'(x)``; ``defvjp``/``defjvp`` take one function per operand;
``deflinear`` a linear primitive's transpose; ``defnondiff`` a zero derivative.

Masks and indices that are piecewise constant in the inputs (comparisons, tie counts, which
scatter update wins) are computed with NumPy from the concrete values, as constants.

Conventions: ties of ``max`` (elementwise, reduce_max, cummax/cummin, scatter max/min) split the
derivative equally between the tied operands, as JAX's ``reduce_max``; ``pow``'s derivative in
the exponent is 0 at a base of 0 and nan for a negative base (real pow is not differentiable
there); ``mod`` has derivatives 1 and -floor(a / b); ``idiv``, comparisons, bit ops, argmax and
threefry have zero derivatives; ``assign(dst, src)`` passes the cotangent to ``src`` only (dst's
old values are overwritten; overwriting a value that recorded ops still need makes the backward
pass raise ``ModifiedInPlaceError``, see autodiff/core.py); complex values get the transpose
(non-conjugated) convention.

Layout: one module per family, mirroring ``nx_rune/frontend`` (memory, elementwise, binary,
movement, reductions, scans, products, indexing, windows, random, sorting, statistics, fft,
special, linalg, linalg_fused, xla_math), each holding the VJP, JVP and batching rule of each of its
primitives side by side; ``_common`` holds the derivative tables and makers, ``_batch_common``
the batching table and makers (see its docstring for the batching rules' form).  Importing this
package registers every rule.  A module here may import the front end, primitives, dtypes,
tensor, ``autodiff.batched_values`` and this package's modules, never an interpreter
(``autodiff.core``, ``api``, ``batching``, the compiler): they import the tables from here
(tests/test_layering.py checks it).
"""
# The families, imported (so registered) in the order of the sections of the single module they
# were split from.  No primitive is registered twice, so the order decides nothing but the
# tables' iteration order.
from nx_rune.autodiff.rules import (
                                                  binary,  # noqa: F401,E402
                                                  elementwise,  # noqa: F401,E402
                                                  fft,  # noqa: F401,E402
                                                  indexing,  # noqa: F401,E402
                                                  linalg,  # noqa: F401,E402
                                                  linalg_eig,  # noqa: F401,E402
                                                  linalg_fused,  # noqa: F401,E402
                                                  linalg_schur,  # noqa: F401,E402
                                                  memory,  # noqa: F401,E402,I001
                                                  movement,  # noqa: F401,E402
                                                  products,  # noqa: F401,E402
                                                  random,  # noqa: F401,E402
                                                  reductions,  # noqa: F401,E402
                                                  scans,  # noqa: F401,E402
                                                  sorting,  # noqa: F401,E402
                                                  special,  # noqa: F401,E402
                                                  statistics,  # noqa: F401,E402
                                                  windows,  # noqa: F401,E402
                                                  xla_math,  # noqa: F401,E402
)
from nx_rune.autodiff.rules._batch_common import (  # noqa: F401
                                                  BATCH_RULES,
                                                  BroadcastRule,
                                                  batch_at,
                                                  defaxes,
                                                  defaxis,
                                                  defbroadcast,
                                                  defleading,
                                                  defloop,
                                                  defnoarrays,
                                                  defreduction,
                                                  loop_rule,
                                                  moveaxis,
)
from nx_rune.autodiff.rules._common import (  # noqa: F401
                                                  JVP_RULES,
                                                  LN2,
                                                  NONDIFF,
                                                  VJP_RULES,
                                                  JVPRule,
                                                  Steps,
                                                  VJPRule,
                                                  _add,
                                                  _c,
                                                  _carr,
                                                  _const,
                                                  _cv,
                                                  _div,
                                                  _eval,
                                                  _exclusive_cumprod,
                                                  _exp,
                                                  _fill,
                                                  _gather,
                                                  _inverse_perm,
                                                  _keep_shape,
                                                  _known,
                                                  _mask,
                                                  _moveaxis_back,
                                                  _moveaxis_last,
                                                  _mul,
                                                  _neg,
                                                  _register,
                                                  _register_steps,
                                                  _revcumsum,
                                                  _safe_nonzero,
                                                  _scal,
                                                  _scan,
                                                  _scatter,
                                                  _share,
                                                  _sqrt,
                                                  _sub,
                                                  _tmask,
                                                  _unreduce,
                                                  _val,
                                                  _where_const,
                                                  _zeros,
                                                  defelementwise,
                                                  defjvp,
                                                  deflinear,
                                                  defnondiff,
                                                  defvjp,
                                                  unbroadcast,
)
from nx_rune.autodiff.rules.elementwise import LN10  # noqa: F401,E402

__all__ = ["VJP_RULES", "JVP_RULES", "NONDIFF", "VJPRule", "JVPRule", "defvjp", "defjvp",
           "defelementwise", "deflinear", "defnondiff", "unbroadcast",
           "BATCH_RULES", "defbroadcast", "defreduction", "defaxis", "defaxes", "defleading",
           "defloop", "defnoarrays", "moveaxis", "batch_at", "loop_rule", "BroadcastRule"]
