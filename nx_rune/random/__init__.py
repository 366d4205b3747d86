"""Counter-based random numbers with JAX semantics: ``nx.random``.

The streams are bit-for-bit those of **JAX 0.10.2** ``jax.random`` in its default
configuration: the ``threefry2x32`` implementation, ``jax_threefry_partitionable=True``
(the default since JAX 0.5.0) and legacy raw ``uint32[2]`` keys, in both of JAX's modes, as
nx_rune's x64 setting (``nx_rune.config``) selects: with x64 off (the default) seeds are
canonicalised to 32 bits and the default dtypes are float32 / int32 / uint32, as JAX's x32
mode; with x64 on seeds keep 64 bits and the defaults are float64 / int64 / uint64, as JAX's
x64 mode (so ``choice`` and ``randint`` draw 64-bit words there).  Asking explicitly for
float64, int64 or uint64 with x64 off gives the values JAX computes for those dtypes in x64
mode.

Exact with JAX: ``key``/``PRNGKey``, ``split``, ``fold_in``, ``bits``, ``uniform`` (including
XLA:CPU's fused multiply-add for a non-default range), ``randint``, ``bernoulli``,
``permutation``, ``choice`` and ``threefry_2x32``, and in float32 and float64 every continuous
sampler but those named below: ``normal`` (JAX's erfinv polynomial, fused as XLA fuses it),
``truncated_normal``, ``gumbel``, ``exponential``, ``laplace``, ``logistic``, ``cauchy``,
``pareto``, ``lognormal``, ``rayleigh``, ``wald``, ``maxwell``, ``gamma``, ``loggamma``,
``beta``, ``chisquare``, ``f``, ``t``, ``dirichlet``, ``weibull_min``, ``generalized_normal``,
``ball``, ``orthogonal``, ``multivariate_normal`` (every method, size and batch of covariance
matrices, n = 1 included, but for the factors named below): their values go through XLA:CPU's
own ``exp``, ``log1p``, float32 ``log`` and ``erf`` and its scalar ``rsqrt`` (what ``a /
sqrt(b)`` becomes), the C library's ``log``, ``tan``, ``pow`` and float64 ``erf`` it calls, its
contractions into fused multiply-adds (and the sqrt(2) its simplifier moves onto a 1 x 1
factor) and its reduction orders (multivariate_normal's dots, a batch of them factor by factor,
as the kernel XLA runs: YNNPACK's, with its tiles, kernel choices and chunks of the sum, its
matrix-vector loop, its own loop or Eigen's float64 contraction, built without fused
multiply-adds; long row sums as its tree reduction splits them), computed here exactly as XLA
does (``_xla_math``, the kernels' ``xla_math``, traced as the primitives ``xla_math`` and
``xla_pow``); float32 eigh, svd, qr and cholesky, float64 svd, and multivariate_normal's
float64 Cholesky factor (dpotrf's lower variant, where nx.linalg.cholesky takes the faster
upper one), are SciPy's LAPACK as jaxlib calls it. From 4,096 elements of a reduction
(``ball``'s row sums, ``dirichlet``'s softmax, ``maxwell``'s norm; under ``vmap`` the whole
batch's) XLA hands it with the elementwise operations around it to YNNPACK, whose exp, log,
log1p and order of summation are reproduced too (``_ynn_math``). The LAPACK calls run with
flush-to-zero on, as XLA runs jaxlib's (a covariance's subnormal entries read as zero). Under
``vmap(jit(f))`` a function that chose by that size is traced again under the vmap, with the
whole batch in view. XLA's rsqrt starts from the processor's estimate, so JAX's gamma draws
differ between processor makers; nx reads the same estimate on the processor it runs on.

float16 draws are JAX's as XLA:CPU computes float16 on a processor without float16 arithmetic
(it widens every operation to float32 and rounds the result back: no fused multiply-adds; its
log, exp, tan and pow are the C library's logf, expf, tanf and powf, log1p, erf and rsqrt its
own float32 ones; JAX sums float16 in float32), bit for bit in ``uniform``, ``normal``,
``truncated_normal``, ``gumbel``, ``exponential``, ``laplace``, ``logistic``, ``cauchy``,
``rayleigh``, ``pareto``, ``lognormal``, ``weibull_min``, ``wald``, ``triangular``, ``maxwell``,
``double_sided_maxwell``, ``gamma``, ``loggamma``, ``beta``, ``chisquare``, ``f``, ``t``,
``generalized_normal``, ``dirichlet`` and ``ball`` (their row sums in float32, rounded once);
``1 / p`` of weibull_min, generalized_normal and ball is rounded in the parameter's own
precision first, as JAX computes it (float32 for a Python float with x64 off); a broadcast
``sigma`` of lognormal multiplies erf_inv(u) as ``sigma * sqrt(2)``, the one factor XLA folds
the two into (every float dtype).  On a processor with AVX512-FP16 XLA computes float16
natively (and contracts its multiply-adds), which nx does not reproduce.

``categorical`` and ``choice(p=..., replace=False)`` take an argmax/top-k of Gumbel noise and
have given JAX's indices in every case checked.

The values are defined by the NumPy chains below (``*_from_bits``); ``uniform``, ``normal``,
``truncated_normal`` and ``gumbel`` in float32/float64 with scalar parameters run instead as
one fused kernel pass from counter to float (``_kernels/threefry``, threaded like the bits),
which gives the same values bit for bit (tests/test_random.py checks every float32 mantissa).

A key is a uint32 Tensor of shape (2,). Every function takes Tensors or NumPy arrays and
returns Tensors.  Every function also takes traced values (under ``jit``, ``vmap``, ``grad``
and their compositions): a traced key draws through the primitives ``threefry_bits`` (the
bits) and ``threefry_sample`` (``uniform``, ``normal``, ``truncated_normal`` and ``gumbel``
with static scalar parameters; ``exponential``, ``laplace``, ``logistic``, ``cauchy`` and
``rayleigh``'s sqrt(-2 log u)), whose implementation is the eager kernels above (a batch of
keys under vmap: one kernel call for all of them), and the rest of each chain runs as nx
operations, with the same values bit for bit; the samples are differentiable in their
parameters (``uniform``'s bounds, ``truncated_normal``'s bounds, the entries ``permutation``
and ``choice`` pick), never in the key.  Shapes, dtypes and population sizes stay static.
"""
from __future__ import annotations

from nx_rune._kernels import threefry as _K  # noqa: F401 (tests patch it)
from nx_rune.backend.random import _ERFINV64  # noqa: F401 (tests read it)
from nx_rune.random._batch import _over_batch
from nx_rune.random._bits import bits, gumbel, normal, truncated_normal, uniform
from nx_rune.random._continuous import (
    cauchy,
    double_sided_maxwell,
    exponential,
    laplace,
    logistic,
    lognormal,
    maxwell,
    pareto,
    rayleigh,
    triangular,
    wald,
    weibull_min,
)
from nx_rune.random._discrete import (
    bernoulli,
    categorical,
    choice,
    geometric,
    permutation,
    rademacher,
    randint,
)
from nx_rune.random._gamma import (
    beta,
    binomial,
    chisquare,
    f,
    gamma,
    generalized_normal,
    loggamma,
    poisson,
    t,
)
from nx_rune.random._keys import (
    PRNGKey,
    fold_in,
    key,
    key_data,
    key_impl,
    split,
    threefry_2x32,
    wrap_key_data,
)
from nx_rune.random._multivariate import ball, dirichlet, multivariate_normal, orthogonal

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal",
           "truncated_normal", "randint", "bernoulli", "categorical", "permutation",
           "choice", "gumbel", "threefry_2x32",
           "key_data", "wrap_key_data", "key_impl",
           "exponential", "laplace", "logistic", "cauchy", "pareto", "weibull_min",
           "lognormal", "rayleigh", "wald", "triangular", "maxwell", "double_sided_maxwell",
           "rademacher", "geometric", "gamma", "loggamma", "beta", "chisquare", "f", "t",
           "generalized_normal", "poisson", "binomial", "dirichlet", "multivariate_normal",
           "orthogonal", "ball"]

for _name in __all__:
    # the public samplers are nx_rune.random's (their docs and doctests are found here)
    globals()[_name] = _over_batch(globals()[_name])
    globals()[_name].__module__ = __name__
del _name


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
