"""The fuzzer's op table: front-end functions and primitives (through their front-end names)
as expression templates over program values.

Each entry: ``Op(tag, family, arity, build, exact, smooth)``.  ``build(g, *vals)`` returns
``(expr, shape)`` or ``(expr, shape, view_of)`` (``view_of``: the operand whose memory the
result shares eagerly), or None when the op does not apply to these operands' shapes.
``exact``: under jit the op's values are NumPy's bit for bit (elementwise ufunc loops, README:
"each step is the one IEEE operation, so the values are NumPy's bit for bit"); a program made
only of exact ops and views must give the eager values bit for bit under jit.  ``smooth``: no
kink anywhere (finite differences are valid at every point); kinks are detected at run time
anyway (one-sided differences), so the flag only steers the generator's hard-point inputs.

The families (``--skip-class family:<name>`` turns one off): unary, scalar, binary, tie,
reduce, view, matmul, identity, creation, random, concrete, const, control, inplace, shape.

Eager is the reference of every comparison, so where eager itself could be wrong the program
carries its own reference: ``np_shape(result, numpy_result)`` (in the programs' namespace and
in the reproducer) raises ``ShapeMismatch`` unless the result has NumPy's shape (a function
whose 0-d result NumPy defines: ``matrix_rank``, the norm of a complex vector); the far lower
tail of ``log_ndtr`` (to about -1e5) is checked by the finite differences of every derivative
mode.
"""
import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Op:
    tag: str
    family: str
    arity: int
    build: object
    exact: bool = True
    smooth: bool = True


def _same(shape):
    return shape


def _bshape(a, b):
    """NumPy broadcast of two shapes, or None."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def unary(tag, fmt, exact=True, smooth=True, family="unary"):
    return Op(tag, family, 1, lambda g, a: (fmt.format(a.name), a.shape), exact, smooth)


def binary(tag, fmt, exact=True, smooth=True, family="binary"):
    def build(g, a, b):
        s = _bshape(a.shape, b.shape)
        return None if s is None else (fmt.format(a.name, b.name), s)
    return Op(tag, family, 2, build, exact, smooth)


def _axis(g, shape):
    return g.src.below(len(shape)) - len(shape) if shape else None


def reduce_op(tag, fn, exact=False, smooth=True, keep_allowed=True):
    def build(g, a):
        if not a.shape:
            return None
        ax = _axis(g, a.shape)
        keep = keep_allowed and g.src.chance(30)
        shape = list(a.shape)
        if keep:
            shape[ax] = 1
        else:
            del shape[ax]
        kd = ", keepdims=True" if keep else ""
        return f"{fn}({a.name}, axis={ax}{kd})", tuple(shape)
    return Op(tag, "reduce", 1, build, exact, smooth)


def _full_reduce(tag, fn, exact=False, smooth=True):
    return Op(tag, "reduce", 1, lambda g, a: (f"{fn}({a.name})", ()), exact, smooth)


def _axis_same(tag, fmt, exact=False, smooth=True, family="reduce"):
    def build(g, a):
        if not a.shape:
            return None
        ax = _axis(g, a.shape)
        return fmt.format(a.name, ax), a.shape
    return Op(tag, family, 1, build, exact, smooth)


# ----------------------------------------------------------------------------------- views
def _slice0(g, a):
    if not a.shape or a.shape[0] < 2:
        return None
    k = 1 + g.src.below(a.shape[0] - 1)
    return f"{a.name}[{k}:]", (a.shape[0] - k,) + a.shape[1:], a


def _rev0(g, a):
    if not a.shape:
        return None
    return f"{a.name}[::-1]", a.shape, a


def _step_last(g, a):
    if not a.shape or a.shape[-1] < 2:
        return None
    n = (a.shape[-1] + 1) // 2
    return f"{a.name}[..., ::-2]", a.shape[:-1] + (n,), a


def _transpose(g, a):
    if len(a.shape) < 2:
        return None
    return f"{a.name}.T", a.shape[::-1], a


def _ravel(g, a):
    if len(a.shape) < 2:
        return None
    n = 1
    for d in a.shape:
        n *= d
    # reshape is a view exactly when the operand is laid out so; the runner asks eager
    return f"{a.name}.reshape(-1)", (n,), a


def _reshape2(g, a):
    n = 1
    for d in a.shape:
        n *= d
    for r in (2, 3, 4):
        if n % r == 0 and n // r > 1 and (r, n // r) != tuple(a.shape):
            return f"{a.name}.reshape({r}, {n // r})", (r, n // r), a
    return None


def _expand0(g, a):
    return f"{a.name}[None]", (1,) + a.shape, a


def _as_strided(g, a):
    """Sliding windows over the flattened value from an offset: as_strided of x[k:]."""
    n = 1
    for d in a.shape:
        n *= d
    if n < 4:
        return None
    k = 1 + g.src.below(2)
    m = n - k
    w = 2
    rows = m - w + 1
    if rows < 1:
        return None
    src = f"nx.ravel({a.name})[{k}:]"
    return f"nx.as_strided({src}, ({rows}, {w}), (1, 1), 0)", (rows, w)


def _matmul(g, a, b):
    sa, sb = a.shape, b.shape
    if len(sa) != 2 or len(sb) != 2:
        return None
    opts = []
    if sa[1] == sb[0]:
        opts.append((f"{a.name} @ {b.name}", (sa[0], sb[1])))
    if sa[1] == sb[1]:
        opts.append((f"{a.name} @ {b.name}.T", (sa[0], sb[0])))
    if sa[0] == sb[0]:
        opts.append((f"nx.matmul({a.name}.T, {b.name})", (sa[1], sb[1])))
    return g.src.choice(opts) if opts else None


def _sort(g, a):
    if not a.shape:
        return None
    return f"nx.sort({a.name}, axis=-1)", a.shape


def _concat_self(g, a):
    if not a.shape:
        return None
    return f"nx.concatenate([{a.name}])", a.shape


def _reparam(g, a, b):
    s = _bshape(a.shape, b.shape)
    if s is None:
        return None
    sub = g.src.choice(["key", "nx.random.split(key)[1]", "nx.random.fold_in(key, 3)"])
    return f"{a.name} + {b.name} * nx.random.normal({sub}, {s!r}, {g.dtype!r})", s


def _uniform(g, a):
    return f"{a.name} * nx.random.uniform(key, {a.shape!r}, {g.dtype!r})", a.shape


def _sampler(g, a):
    # a continuous sampler of nx.random (a composition of uniform/normal draws) scaling a
    name = g.src.choice(["exponential", "laplace", "logistic", "maxwell", "rayleigh"])
    args = "1.5, " if name == "rayleigh" else ""
    return f"{a.name} * nx.random.{name}(key, {args}{a.shape!r}, {g.dtype!r})", a.shape


def _gamma(g, a):
    # gamma draws differentiable in their shape parameter (implicit reparameterisation)
    return (f"nx.random.gamma(key, 1.0 + {a.name} * {a.name}, {a.shape!r}, {g.dtype!r})",
            a.shape)


def _poisson_binomial(g, a):
    # counts from the rejection samplers' primitives: no derivative, jit/vmap equal to eager
    which = g.src.choice(["poisson", "binomial"])
    if which == "poisson":
        draw = f"nx.random.poisson(key, 3.0 + {a.name} * {a.name}, {a.shape!r})"
    else:
        draw = f"nx.random.binomial(key, 20.0, nx.sigmoid({a.name}), {a.shape!r})"
    return f"{a.name} * nx.astype({draw}, {a.name}.dtype)", a.shape


def _weibull(g, a, b):
    s = _bshape(a.shape, b.shape)
    if s is None:
        return None
    return (f"nx.random.weibull_min(key, 1.0 + {a.name} * {a.name}, 1.0 + {b.name} * {b.name}, "
            f"{s!r}, {g.dtype!r})", s)


def _bern(g, a):
    return f"nx.where(nx.random.bernoulli(key, 0.5, {a.shape!r}), {a.name}, 0.0)", a.shape


def _full(g, a):
    # a creation with a Python float fill: its dtype follows the x64 mode
    return f"{a.name} * nx.full({a.shape!r}, 0.5)", a.shape


def _static_full(g, a):
    if not g.has_static:
        return None
    # the static's Python type decides the dtype of the fill (int32 for 1, float32 for 1.0)
    return f"{a.name} + nx.full({a.shape!r}, s)", a.shape


def _static_out(g, a):
    if not g.has_static:
        return None
    return f"nx.full({a.shape!r}, s) * 2", a.shape


def _static_mul(g, a):
    if not g.has_static:
        return None
    return f"{a.name} * s", a.shape


def _scalar_arg(g, a):
    if not g.has_scalar:
        return None
    return g.src.choice([f"{a.name} * a", f"{a.name} + a", f"a - {a.name}"]), a.shape


def _float_of(g, a, b):
    fn = g.src.choice(["float(nx.sum({1}))", "nx.sum({1}).item()", "float(nx.max({1}))"])
    return f"{a.name} * " + fn.format(a.name, b.name), a.shape


def _const(g, a):
    c = g.new_const(a.shape)
    return g.src.choice([f"{a.name} * {c}", f"{a.name} + {c}",
                         f"nx.maximum({a.name}, {c})"]), a.shape


class ShapeMismatch(AssertionError):
    """A result's shape differs from NumPy's for the same call."""


def np_shape(r, want):
    """``r`` if its shape is ``numpy.shape(want)`` (NumPy's result for the same call), else
    raise ShapeMismatch; under a transformation ``r.shape`` is the per-example shape."""
    if tuple(r.shape) != np.shape(want):
        raise ShapeMismatch(f"result shape {tuple(r.shape)}, NumPy's {np.shape(want)}")
    return r


def _matrix_rank(g, a):
    if len(a.shape) != 2:
        return None
    # of finite values: an SVD of inf or NaN raises LinAlgError (NumPy's too); the class aimed
    # at is the result's shape
    r = (f"np_shape(nx.linalg.matrix_rank(nx.where(nx.isfinite({a.name}), {a.name}, 0.0)), "
         f"np.linalg.matrix_rank(np.ones({a.shape!r})))")
    # its integer dtype would change the program's promotions: back to the program's dtype
    return f"{a.name} * {r}.astype({g.dtype!r})", a.shape


def _norm_complex(g, a):
    n = 1
    for d in a.shape:
        n *= d
    # away from the zero vector (the norm's kink): the class aimed at is the result's shape
    r = (f"np_shape(nx.linalg.norm(({a.name}.reshape(-1) + 3.0) * (1 + 2j)), "
         f"np.linalg.norm(np.ones({n}, complex)))")
    return f"{a.name} * {r}", a.shape


def _sqrtm_spd(g, a):
    # the principal square root (the matfunc primitive) of a positive-definite matrix made of
    # a's values (bounded by tanh, so the matrix stays well conditioned)
    n = 1
    for d in a.shape:
        n *= d
    if n == 0 or n > 16:
        return None
    v = f"nx.tanh({a.name}.reshape(-1))"
    m = f"(nx.eye({n}, dtype={g.dtype!r}) * 3.0 + 0.5 * nx.outer({v}, {v}))"
    return f"{a.name} * nx.trace(nx.scipy.linalg.sqrtm({m}))", a.shape


def _vmap_empty_keys(g, a):
    # vmap of a draw over a zero-size batch of keys: an empty result of the draw's shape
    want = f"np.zeros((0,) + {a.shape!r})"
    r = (f"np_shape(nx.vmap(lambda k: nx.random.normal(k, {a.shape!r}, {g.dtype!r}))"
         f"(nx.random.split(key, 0)), {want})")
    return f"{a.name} + nx.sum({r}, axis=0)", a.shape


def _lax_pad(g, a):
    # interior padding and a negative low edge on the first axis
    if not a.shape or a.shape[0] < 1:
        return None
    rest = ", (0, 0, 0)" * (len(a.shape) - 1)
    n = a.shape[0]
    return (f"nx.lax.pad({a.name}, 0.5, [(1, -2, 1){rest}])",
            (2 * n - 2,) + a.shape[1:]) if n >= 2 else None


def _lax_dynamic_slice(g, a):
    # a start that depends on the data (traced under jit, per example under vmap), clamped
    if not a.shape:
        return None
    k = 1 + g.src.below(a.shape[0])
    start = f"(nx.sum({a.name}) > 0).astype(nx.int32) * 5 - 2"
    return f"nx.lax.dynamic_slice_in_dim({a.name}, {start}, {k}, 0)", (k,) + a.shape[1:]


def _lax_cumlogsumexp(g, a):
    if not a.shape:
        return None
    return f"nx.lax.cumlogsumexp({a.name}, 0, reverse=True)", a.shape


def _lax_max_pool(g, a):
    if not a.shape or a.shape[-1] < 2:
        return None
    nd = len(a.shape)
    window = (1,) * (nd - 1) + (2,)
    return (f"nx.lax.reduce_window({a.name}, -np.inf, nx.lax.max, {window}, {(1,) * nd}, "
            f"'VALID')", a.shape[:-1] + (a.shape[-1] - 1,))


def _lax_conv1d(g, a):
    if len(a.shape) != 2:
        return None
    n, m = a.shape
    w = f"nx.reshape(nx.sin(nx.arange({2 * m * 3}) * 1.0), (2, {m}, 3)).astype({a.name}.dtype)"
    return (f"nx.lax.conv_general_dilated({a.name}[None], {w}, (1,), 'SAME', "
            f"dimension_numbers=('NWC', 'WIO', 'NWC'))[0]", (n, 3))


def _lax_dot_general(g, a):
    if len(a.shape) != 2:
        return None
    return (f"nx.lax.dot_general({a.name}, {a.name}, (((0,), (0,)), ((), ())))",
            (a.shape[1], a.shape[1]))


def _lax_associative_scan(g, a):
    if not a.shape:
        return None
    return f"nx.lax.associative_scan(nx.add, {a.name})", a.shape


# ----------------------------------------------------------------------------- the table
OPS = [
    binary("add", "{0} + {1}"),
    binary("sub", "{0} - {1}"),
    binary("mul", "{0} * {1}"),
    unary("square_self", "{0} * {0}"),
    binary("div", "{0} / ({1} * {1} + 0.5)"),
    unary("sin", "nx.sin({0})"),
    unary("cos", "nx.cos({0})"),
    unary("tanh", "nx.tanh({0})"),
    unary("exp", "nx.exp({0})"),
    unary("log1p_sq", "nx.log1p({0} * {0})"),
    unary("sqrt_sq", "nx.sqrt({0} * {0} + 1.0)"),
    unary("sigmoid", "nx.sigmoid({0})", exact=False),
    unary("softplus", "nx.softplus({0})", exact=False),
    unary("neg", "-{0}"),
    unary("square", "nx.square({0})"),
    unary("abs", "nx.abs({0})", smooth=False, family="tie"),
    unary("relu", "nx.relu({0})", smooth=False, family="tie"),
    unary("sign_mul", "{0} * nx.sign({0})", smooth=False, family="tie"),
    unary("clip", "nx.clip({0}, -0.5, 0.5)", smooth=False, family="tie"),
    unary("max_self", "nx.maximum({0}, {0})", family="tie"),
    unary("min_self", "nx.minimum({0}, {0})", family="tie"),
    unary("min_zero", "nx.minimum({0}, 0.0)", smooth=False, family="tie"),
    unary("lae_self", "nx.logaddexp({0}, {0})", family="tie"),
    unary("lae2_self", "nx.logaddexp2({0}, {0})", family="tie"),
    binary("maximum", "nx.maximum({0}, {1})", smooth=False, family="tie"),
    binary("minimum", "nx.minimum({0}, {1})", smooth=False, family="tie"),
    binary("logaddexp", "nx.logaddexp({0}, {1})"),
    binary("logaddexp2", "nx.logaddexp2({0}, {1})"),
    binary("clip_t", "nx.clip({0}, {1} - 0.5, {1} + 0.5)", smooth=False, family="tie"),
    binary("where_gt", "nx.where({0} > {1}, {0}, {1})", smooth=False, family="tie"),
    Op("sort", "tie", 1, _sort, exact=False, smooth=False),
    unary("mul_0.1", "{0} * 0.1", family="scalar"),
    unary("rmul_0.1", "0.1 * {0}", family="scalar"),
    unary("mul_1e300", "{0} * 1e300 * 1e-300", family="scalar"),
    unary("mul_int", "{0} * 3", family="scalar"),
    unary("add_int", "{0} + 1", family="scalar"),
    unary("rsub_int", "2 - {0}", family="scalar"),
    unary("div_int", "{0} / 3", family="scalar"),
    unary("pow_int", "{0} ** 2", family="scalar"),
    unary("pow_3", "{0} ** 3", exact=False, family="scalar"),   # jit may multiply out: not promised
    reduce_op("sum", "nx.sum"),
    reduce_op("mean", "nx.mean"),
    reduce_op("max", "nx.max", smooth=False),
    reduce_op("min", "nx.min", smooth=False),
    reduce_op("logsumexp", "nx.logsumexp"),
    _full_reduce("sum_all", "nx.sum"),
    _full_reduce("max_all", "nx.max", smooth=False),
    _axis_same("cumsum", "nx.cumsum({0}, axis={1})"),
    _axis_same("softmax", "nx.softmax({0}, axis={1})"),
    Op("slice0", "view", 1, _slice0),
    Op("rev0", "view", 1, _rev0),
    Op("step_last", "view", 1, _step_last),
    Op("transpose", "view", 1, _transpose),
    Op("ravel", "view", 1, _ravel),
    Op("reshape", "view", 1, _reshape2),
    Op("expand0", "view", 1, _expand0),
    Op("as_strided", "view", 1, _as_strided),
    Op("matmul", "matmul", 2, _matmul, exact=False),
    unary("copy", "nx.copy({0})", family="identity"),
    unary("astype_same", "{0}.astype({0}.dtype)", family="identity"),
    Op("concat1", "identity", 1, _concat_self),
    unary("mul_1.0", "{0} * 1.0", family="identity"),
    unary("where_true", "nx.where(True, {0}, 0)", family="identity"),
    Op("full", "creation", 1, _full),
    Op("static_full", "static", 1, _static_full),
    Op("static_out", "static", 1, _static_out),
    Op("static_mul", "static", 1, _static_mul),
    Op("scalar_arg", "scalar_arg", 1, _scalar_arg),
    Op("reparam", "random", 2, _reparam, exact=False),
    Op("uniform", "random", 1, _uniform, exact=False),
    Op("bernoulli", "random", 1, _bern, exact=False),
    Op("sampler", "random", 1, _sampler, exact=False),
    # the implicit gradient is not the pathwise derivative that finite differences see
    Op("gamma", "random", 1, _gamma, exact=False, smooth=False),
    Op("float_of", "concrete", 2, _float_of, exact=False),
    Op("const", "const", 1, _const),
    # appended last: a recorded program (its choices, drawn below the table's former length)
    # replays as it was
    # the lower tail down to about -1e5 (where log_ndtr's second derivative tends to -1)
    unary("log_ndtr_tail", "nx.scipy.special.log_ndtr({0} * 3e4 - 5e4)", exact=False),
    Op("vmap_empty_keys", "random", 1, _vmap_empty_keys, exact=False),
    Op("matrix_rank", "shape", 1, _matrix_rank, exact=False, smooth=False),
    Op("sqrtm_spd", "matmul", 1, _sqrtm_spd, exact=False),
    Op("norm_complex", "shape", 1, _norm_complex, exact=False),
    # nx.lax beyond control flow
    Op("lax_pad", "view", 1, _lax_pad),
    Op("lax_dynamic_slice", "tie", 1, _lax_dynamic_slice, smooth=False),
    Op("lax_cumlogsumexp", "reduce", 1, _lax_cumlogsumexp, exact=False),
    Op("lax_max_pool", "tie", 1, _lax_max_pool, smooth=False),
    Op("lax_conv1d", "matmul", 1, _lax_conv1d, exact=False),
    Op("lax_dot_general", "matmul", 1, _lax_dot_general, exact=False),
    Op("lax_associative_scan", "reduce", 1, _lax_associative_scan, exact=False),
    Op("poisson_binomial", "random", 1, _poisson_binomial, exact=False, smooth=False),
    # scipy.special's families by name (special_unary / binary / ternary), each argument mapped
    # into the function's domain (exp(tanh(.)) in (0.37, 2.7): spence crosses its x = 1)
    unary("sp_j0", "nx.scipy.special.j0(8 * nx.tanh({0}))"),
    unary("sp_j1", "nx.scipy.special.j1(8 * nx.tanh({0}))"),
    unary("sp_y1", "nx.scipy.special.y1(nx.exp(nx.tanh({0})))"),
    unary("sp_jv", "nx.scipy.special.jv(1.5, nx.exp(nx.tanh({0})))"),
    unary("sp_yn", "nx.scipy.special.yn(2, nx.exp(nx.tanh({0})))"),
    unary("sp_iv", "nx.scipy.special.iv(2.5, nx.exp(nx.tanh({0})))"),
    unary("sp_kve", "nx.scipy.special.kve(0.5, nx.exp(nx.tanh({0})))"),
    unary("sp_spence", "nx.scipy.special.spence(nx.exp(nx.tanh({0})))"),
    unary("sp_expn", "nx.scipy.special.expn(2, nx.exp(nx.tanh({0})))"),
    unary("sp_exp1", "nx.scipy.special.exp1(nx.exp(nx.tanh({0})))"),
    unary("sp_expi", "nx.scipy.special.expi(nx.exp(nx.tanh({0})))"),
    unary("sp_rgamma", "nx.scipy.special.rgamma(3 * nx.tanh({0}))"),
    unary("sp_gammasgn", "nx.scipy.special.gammasgn({0})", smooth=False),
    unary("sp_erfcinv", "nx.scipy.special.erfcinv(1 + 0.9 * nx.tanh({0}))"),
    unary("sp_factorial", "nx.scipy.special.factorial(2 + nx.tanh({0}))"),
    unary("sp_hyp1f1", "nx.scipy.special.hyp1f1(0.5, 1.5, 3 * nx.tanh({0}))"),
    binary("sp_zeta", "nx.scipy.special.zeta(2 + nx.exp(nx.tanh({0})), nx.exp(nx.tanh({1})))"),
    binary("sp_beta", "nx.scipy.special.beta(nx.exp(nx.tanh({0})), nx.exp(nx.tanh({1})))"),
    binary("sp_poch", "nx.scipy.special.poch(1 + nx.exp(nx.tanh({0})), nx.tanh({1}))"),
    binary("sp_kl_div", "nx.scipy.special.kl_div(nx.exp(nx.tanh({0})), nx.exp(nx.tanh({1})))"),
    binary("sp_rel_entr",
           "nx.scipy.special.rel_entr(nx.exp(nx.tanh({0})), nx.exp(nx.tanh({1})))"),
    # XLA's own math (the primitive xla_math: the samplers' exp, log, log1p, tan, rsqrt, erf)
    unary("xla_exp", "nx.random._xla_math.xla_unary(nx.tanh({0}), 'exp')"),
    unary("xla_log1p", "nx.random._xla_math.xla_unary(0.9 * nx.tanh({0}), 'log1p')"),
    unary("xla_log", "nx.random._xla_math.xla_unary(1.5 + nx.tanh({0}), 'log')"),
    unary("xla_tan", "nx.random._xla_math.xla_unary(nx.tanh({0}), 'tan')"),
    unary("xla_rsqrt", "nx.random._xla_math.xla_unary(1.5 + nx.tanh({0}), 'rsqrt')"),
    unary("xla_erf", "nx.random._xla_math.xla_unary({0}, 'erf')"),
    # YNNPACK's exp, log and log1p (xla_math's ynn_* ops: XLA's fusions handed to YNNPACK)
    unary("ynn_exp", "nx.random._xla_math.xla_unary(nx.tanh({0}), 'ynn_exp')"),
    unary("ynn_log", "nx.random._xla_math.xla_unary(1.5 + nx.tanh({0}), 'ynn_log')"),
    unary("ynn_log1p", "nx.random._xla_math.xla_unary(0.9 * nx.tanh({0}), 'ynn_log1p')"),
    # XLA's own pow (the primitive xla_pow) and its derivatives in both operands: weibull_min's
    # (-log1p(-u)) ** (1 / concentration) * scale, both parameters from the program's values
    Op("weibull_min", "random", 2, _weibull, exact=False),
]

OPS_BY_TAG = {op.tag: op for op in OPS}
FAMILIES = sorted({op.family for op in OPS} | {"control", "inplace"})
