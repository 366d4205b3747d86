"""The primitive set and ``bind``, the one entry point through which every op runs.

Each primitive is one object (``add_p``, ``reshape_p``, ...).  Positional arguments of a bind
are the array operands (the values derivatives flow through); keyword parameters are static
(shapes, axes, dtypes).  Each built-in primitive runs its implementation from
``nx_rune.backend.IMPLS``; a user-defined one gets its own with ``def_impl``.

With no transformation active, ``bind`` calls the implementation directly (the fast path).
Otherwise it hands the call to the innermost interpreter (``process(prim, args, params)``),
which computes the primal by binding again under its parent interpreter, so that outer
transformations see that computation too.  The interpreter stack lives in a ContextVar, so
threads and asyncio tasks each have their own.
"""
import contextlib
import contextvars

from nx_rune.backend import IMPLS

__all__ = ["Primitive", "bind", "PRIMITIVES", "current_interpreter", "interpreter_scope"]

PRIMITIVES = {}

_interpreter = contextvars.ContextVar("nx_rune_interpreter", default=None)


class Primitive:
    """One backend operation.  ``impl`` computes it on concrete Tensors."""
    __slots__ = ("name", "impl")

    def __init__(self, name):
        if name in PRIMITIVES:
            raise ValueError(f"name: a primitive named {name!r} already exists")
        self.name = name
        self.impl = None
        PRIMITIVES[name] = self

    def def_impl(self, fn):
        """Register ``fn(*args, **params) -> Tensor`` as the implementation (decorator)."""
        self.impl = fn
        return fn

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def __repr__(self):
        return f"{self.name}_p"

    def __reduce__(self):
        return (PRIMITIVES.__getitem__, (self.name,))


def bind(prim, *args, **params):
    """Apply ``prim`` to ``args`` under the active transformations (if any)."""
    interp = _interpreter.get()
    if interp is None:
        impl = prim.impl
        if impl is None:
            raise NotImplementedError(f"primitive {prim.name} has no implementation")
        return impl(*args, **params)
    return interp.process(prim, args, params)


def current_interpreter():
    """The innermost active interpreter, or None when no transformation is active."""
    return _interpreter.get()


@contextlib.contextmanager
def interpreter_scope(interp):
    """Make ``interp`` (or None: no transformation) the innermost interpreter in this block."""
    token = _interpreter.set(interp)
    try:
        yield interp
    finally:
        _interpreter.reset(token)


def _declare(names):
    prims = {}
    for n in names:
        prim = prims[n] = Primitive(n)
        prim.impl = IMPLS[n]
    return prims


# memory and constants
buffer_p, const_scalar_p, const_array_p, contiguous_p, copy_p, assign_p = _declare(
    ["buffer", "const_scalar", "const_array", "contiguous", "copy", "assign"]).values()
# unary elementwise (exp, log, cos, tanh, log1p, expm1 are ours, beyond the seed's set: each is
# one accurate NumPy loop where the composition through exp2/log2/sin costs precision and passes)
(neg_p, log2_p, exp2_p, sin_p, sqrt_p, recip_p,
 exp_p, log_p, cos_p, tanh_p, log1p_p, expm1_p) = _declare(
    ["neg", "log2", "exp2", "sin", "sqrt", "recip",
     "exp", "log", "cos", "tanh", "log1p", "expm1"]).values()
# binary elementwise (operands of equal shape and dtype)
add_p, mul_p, fdiv_p, pow_p, max_p, idiv_p, mod_p = _declare(
    ["add", "mul", "fdiv", "pow", "max", "idiv", "mod"]).values()
cmplt_p, cmpne_p, xor_p, or_p, and_p = _declare(["cmplt", "cmpne", "xor", "or", "and"]).values()
where_p, cast_p = _declare(["where", "cast"]).values()
# movement
reshape_p, expand_p, permute_p, pad_p, shrink_p, flip_p, as_strided_p, cat_p = _declare(
    ["reshape", "expand", "permute", "pad", "shrink", "flip", "as_strided", "cat"]).values()
# reductions and scans
reduce_sum_p, reduce_max_p, reduce_prod_p, associative_scan_p, argmax_p = _declare(
    ["reduce_sum", "reduce_max", "reduce_prod", "associative_scan", "argmax"]).values()
# indexing, linear algebra, windows, random
gather_p, scatter_p, matmul_p, unfold_p, fold_p, threefry_p = _declare(
    ["gather", "scatter", "matmul", "unfold", "fold", "threefry"]).values()
# sorting and searching (WP-sorting)
sort_p, argsort_p, searchsorted_p = _declare(["sort", "argsort", "searchsorted"]).values()


# -- statistics family (WP-statistics): nan-ignoring max/min reductions, fused clip
reduce_nanmax_p, reduce_nanmin_p, clip_p = _declare(
    ["reduce_nanmax", "reduce_nanmin", "clip"]).values()


# -- WP-jit: stop_gradient, the identity with a zero derivative (so that a traced program keeps
# the stop: nx.stop_gradient on a value traced by jit binds it; on other values it is free)
stop_gradient_p, = _declare(["stop_gradient"]).values()
