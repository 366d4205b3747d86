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

from nx_rune.backend import IMPLS
from nx_rune.backend.views import chained_view as _chained_view
from nx_rune.tensor import ALIAS_HOOK, DISPATCH  # noqa: F401 (ALIAS_HOOK: set by the autodiff layer)
from nx_rune.tensor import bind as _bind

__all__ = ["Primitive", "bind", "PRIMITIVES", "current_interpreter", "interpreter_scope"]

PRIMITIVES = {}

# the innermost active interpreter: a ContextVar of the tensor module, whose operators skip the
# front end when none is active (Tensor's eager fast path)
_interpreter = DISPATCH


class Primitive:
    """One backend operation.  ``impl`` computes it on concrete Tensors.  ``aliases``: its
    result is a view of its first operand's memory on concrete Tensors (movement ops), so an
    in-place write into one shows in the other."""
    # ufunc: the NumPy ufunc that implementation _ufunc_of is (a backend implementation marked
    # with a ``ufunc`` attribute), which bind then calls itself on concrete operands; it is
    # used only while impl is still that implementation
    __slots__ = ("name", "impl", "aliases", "ufunc", "_ufunc_of")

    def __init__(self, name):
        if name in PRIMITIVES:
            raise ValueError(f"name: a primitive named {name!r} already exists")
        self.name = name
        self.impl = None
        self.aliases = False
        self.ufunc = self._ufunc_of = None
        PRIMITIVES[name] = self

    def def_impl(self, fn):
        """Register ``fn(*args, **params) -> Tensor`` as the implementation (decorator)."""
        self.impl = fn
        self.ufunc, self._ufunc_of = getattr(fn, "ufunc", None), fn
        return fn

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def __repr__(self):
        return f"{self.name}_p"

    def __reduce__(self):
        return (PRIMITIVES.__getitem__, (self.name,))


# bind runs in C (nx_rune.tensor.bind): every operation of every transformation passes through
# it.  Its contract: apply ``prim`` to ``args`` under the active transformations (if any).
# Operands that are all concrete Tensors are constants to every transformation (each
# interpreter hands such a call down to its parent, and the last one to the implementation),
# so the implementation computes them at once, as with no transformation active; except under
# an interpreter that records a program (``stages``: jit's trace records them too).  After an
# aliasing primitive ran under a transformation it calls ``ALIAS_HOOK[0](prim, operand,
# params, view)`` (set by the autodiff layer).
bind = _bind


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
    """Primitives named ``names``, each with the backend's implementation of that name."""
    prims = {}
    for n in names:
        prim = prims[n] = Primitive(n)
        prim.def_impl(IMPLS[n])
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
for _p in (reshape_p, expand_p, permute_p, pad_p, shrink_p, flip_p, as_strided_p):
    _p.aliases = True
# reductions and scans
reduce_sum_p, reduce_max_p, reduce_prod_p, associative_scan_p, argmax_p = _declare(
    ["reduce_sum", "reduce_max", "reduce_prod", "associative_scan", "argmax"]).values()
# indexing, linear algebra, windows, random
gather_p, scatter_p, matmul_p, unfold_p, fold_p, threefry_p = _declare(
    ["gather", "scatter", "matmul", "unfold", "fold", "threefry"]).values()
# random draws as one kernel call each (the eager samplers' own fast paths), so that a traced
# key (jit, vmap inside jit) draws as fast as a concrete one: threefry_bits(key, nbits, shape)
# gives the unsigned bits of nx.random.bits; threefry_sample(key, dist, shape, dtype, params)
# gives uniform / normal / truncated_normal / gumbel samples with static scalar parameters.  A
# key of shape (*batch, 2) draws for each of its keys (vmap over keys).  Their implementations
# are nx.random's eager NumPy samplers (nx_rune.backend.random)
threefry_bits_p, threefry_sample_p = _declare(["threefry_bits", "threefry_sample"]).values()
# the rejection samplers, JAX's loops element for element on concrete keys
# (nx_rune.backend.random_rejection):
# random_gamma(key, a, log_space) draws a gamma (or log-gamma) sample per element of a, element
# i on split(key, a.size)[i]; random_poisson(key, lam, dtype) and random_binomial(key, count,
# prob) draw JAX's whole-array loops.  A key of shape (*batch, 2) with parameters of shape
# (*batch, *shape) draws for each key (vmap).  Their derivatives (gamma's implicit
# reparameterisation) are nx_rune.random's
random_gamma_p, random_poisson_p, random_binomial_p = _declare(
    ["random_gamma", "random_poisson", "random_binomial"]).values()
# sorting and searching
sort_p, argsort_p, searchsorted_p = _declare(["sort", "argsort", "searchsorted"]).values()


# -- statistics family: nan-ignoring max/min reductions, fused clip
reduce_nanmax_p, reduce_nanmin_p, clip_p = _declare(
    ["reduce_nanmax", "reduce_nanmin", "clip"]).values()


# -- trigonometric/hyperbolic, rounding, complex parts, tests, bit shifts ------
(tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, log10_p,
 abs_p, real_p, imag_p, conj_p, deg2rad_p, rad2deg_p, sinc_taylor_p) = _declare(
    ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log10",
     "abs", "real", "imag", "conj", "deg2rad", "rad2deg", "sinc_taylor"]).values()
(floor_p, ceil_p, rint_p, trunc_p, sign_p, signbit_p, isnan_p, isinf_p, isfinite_p) = _declare(
    ["floor", "ceil", "rint", "trunc", "sign", "signbit", "isnan", "isinf", "isfinite"]).values()
(atan2_p, hypot_p, copysign_p, logaddexp_p, logaddexp2_p, nextafter_p, complex_p, lshift_p,
 rshift_p) = _declare(["atan2", "hypot", "copysign", "logaddexp", "logaddexp2", "nextafter",
                       "complex", "lshift", "rshift"]).values()


# FFTs and special functions
fft_p, rfft_p, irfft_p = _declare(["fft", "rfft", "irfft"]).values()
(lgamma_p, digamma_p, polygamma_p, gamma_p, betaln_p, erf_p, erfc_p, erfinv_p, ndtr_p,
 ndtri_p, log_ndtr_p, expit_p, logit_p, xlogy_p, xlog1py_p, i0_p, i0e_p, i1_p, i1e_p) = _declare(
    ["lgamma", "digamma", "polygamma", "gamma", "betaln", "erf", "erfc", "erfinv", "ndtr",
     "ndtri", "log_ndtr", "expit", "logit", "xlogy", "xlog1py", "i0", "i0e", "i1",
     "i1e"]).values()


# linear algebra: decompositions and solves
(cholesky_p, triangular_solve_p, solve_p, inv_p, slogdet_p, eigh_p, eigvalsh_p, svd_p,
 svdvals_p, qr_p, pinv_p, lstsq_p) = _declare(
    ["cholesky", "triangular_solve", "solve", "inv", "slogdet", "eigh", "eigvalsh", "svd",
     "svdvals", "qr", "pinv", "lstsq"]).values()


# -- stop_gradient, the identity with a zero derivative (so that a traced program keeps
# the stop: nx.stop_gradient on a value traced by jit binds it; on other values it is free)
stop_gradient_p, = _declare(["stop_gradient"]).values()


# the fused Euclidean norm, and the LU factorization that slogdet reuses
norm2_p, lu_factor_p, lu_inverse_p = _declare(["norm2", "lu_factor", "lu_inverse"]).values()

# the regularized incomplete gamma and beta functions and their derivatives in
# the shape parameters
(gammainc_p, gammaincc_p, gammainc_da_p, betainc_p, betainc_da_p, betainc_db_p) = _declare(
    ["gammainc", "gammaincc", "gammainc_da", "betainc", "betainc_da", "betainc_db"]).values()

# the Cholesky derivative as one primitive (blocked, on concrete values)
cholesky_grad_p = _declare(["cholesky_grad"])["cholesky_grad"]


# roll along one axis (one primitive, whose transpose is the opposite roll, where a
# composition of two shrinks and a cat costs five binds and two padded cotangents backward), and
# sub (a - b as one primitive: add(a, neg(b)) took two binds forward and a neg backward)
roll_p, sub_p = _declare(["roll", "sub"]).values()


# the determinant read from a's LU factorization (lu_det(a, lu, part): det,
# log|det| or its sign, one primitive per use, so that its derivative is one rule), and fused
# derivatives that the rules use on concrete values (one LAPACK/BLAS computation each):
# det_grad(a, lu, s) = s * inv(a)^T, norm2_grad(x, ans, g) = g * x / ans (0 at ans = 0),
# triangular_solve_grad(ct_b, x) = a's cotangent of a triangular solve
lu_det_p, det_grad_p, norm2_grad_p, triangular_solve_grad_p = _declare(
    ["lu_det", "det_grad", "norm2_grad", "triangular_solve_grad"]).values()
# cho_solve(c, b, lower): x solving (c c^T) x = b (c^T c for upper c) from a real Cholesky
# factor, LAPACK potrs (both solves in one call, one derivative rule); cho_solve_grad(c, x,
# ct_b, lower): its cotangent of c, fused
cho_solve_p, cho_solve_grad_p = _declare(["cho_solve", "cho_solve_grad"]).values()
# matrix_power_parts(a, n): every product of binary powering (a nondifferentiable residual);
# matrix_power(a, parts, n): a^n read from it, whose derivative reuses the products
matrix_power_parts_p, matrix_power_p = _declare(["matrix_power_parts", "matrix_power"]).values()

# the families of special functions by SciPy's name (Bessel functions, zeta, spence, exp1, ...):
# special_unary(x, fn=...), special_binary(a, x, fn=...), special_ternary(a, b, x, fn=...),
# one primitive per arity, the function a static parameter
special_unary_p, special_binary_p, special_ternary_p = _declare(
    ["special_unary", "special_binary", "special_ternary"]).values()

# XLA:CPU's own elementwise math, as JAX computes it on CPU (the samplers of nx.random reproduce
# JAX's bits with it, eager and traced alike): xla_math(x, op=...) for op in exp, log, log1p,
# tan, rsqrt, and xla_pow(x, y); float32 and float64 (nx_rune.backend.xla_math)
xla_math_p, xla_pow_p = _declare(["xla_math", "xla_pow"]).values()

# eig(a): eigenvalues and right eigenvectors of general square matrices, packed along a last axis
# (..., n + n * n), complex (LAPACK geev)
eig_p = _declare(["eig"])["eig"]

# Schur-based linear algebra (SciPy per matrix, batched over leading axes): schur(a, output)
# and hessenberg(a) pack (T, Z) / (H, Q) with a = Z T Z^H along a last axis (..., 2 n n),
# residuals without a derivative; matfunc(a, fn) the principal sqrtm/logm of a, whose
# derivative is the upper-right block of fn([[a, e], [0, a]]); sylvester(a, b, q) x solving
# a x + x b = q, whose derivative is another sylvester
schur_p, hessenberg_p, matfunc_p, sylvester_p = _declare(
    ["schur", "hessenberg", "matfunc", "sylvester"]).values()


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)


def view_after(shape, chain, strides=None):
    """Whether the movement primitives in ``chain`` (``(primitive, params)`` pairs, first to
    last; ``("getitem", index)`` for a basic index) applied to a C-contiguous value of
    ``shape`` give a view of it, as their implementations do on arrays: the View (metadata
    only), or None where one of them copies.  LookupError where one step alone does not decide
    it (an index of a padded view).  The transformations' tracers ask this to link views as
    arrays share memory, without any memory of their own.  ``strides``: the value's element
    strides when it is not C-contiguous (an argument of vmap: one example of the caller's
    array)."""
    return _chained_view(shape, [(k if isinstance(k, str) else k.name, p) for k, p in chain],
                         strides)
