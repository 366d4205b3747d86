"""The fused derivative paths of nx.linalg / nx.scipy.linalg agree with the
formulas that traced values take, and with NumPy/SciPy.

The VJP rules of det/slogdet (lu_det), the 2-norms (norm2), solve_triangular, cho_solve and
cholesky compute the cotangent with one fused primitive (det_grad, norm2_grad,
triangular_solve_grad, cho_solve_grad, cholesky_grad) when every value is concrete, and with a
composition of primitives otherwise.  Here the backward pass of ``nx.vjp`` on concrete values
(the fused path) is compared with the same backward pass under ``nx.jit`` (every value a tracer:
the formula) and with a reference computed by NumPy/SciPy, batched, in float32 and float64, in
complex128 where the function differentiates complex inputs (solve_triangular); the fused
primitives' own implementations are compared with NumPy formulas.  matrix_power's rule reads
the products of binary powering from its residual on concrete values and recomputes them
otherwise: both against the closed form sum_k (a^T)^k g (a^T)^(n-1-k).  Also: the determinant's
primitive (lu_det) against NumPy, singular inputs, the errors of the new general path of
cho_solve, and norm's scalar fast path.
"""
import numpy as np
import pytest
import scipy.linalg

import nx_rune as nx
from nx_rune import backend as B
from test_linalg import well  # well-conditioned matrices, either sign of det

L = nx.linalg
SL = nx.scipy.linalg
LinAlgError = np.linalg.LinAlgError
DTYPES = [np.float32, np.float64]
BATCHES = [(), (3,), (2, 2)]


def spd(rng, batch, n, dtype=np.float64):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def tol(dtype):
    if np.dtype(dtype) in (np.float32, np.complex64):
        return dict(rtol=2e-4, atol=2e-4)
    return dict(rtol=1e-10, atol=1e-10)


def scaled_close(got, want, dtype):
    """Entries equal up to the dtype's tolerance relative to the largest entry."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype), (got.shape, got.dtype)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=tol(dtype)["atol"] * scale)


def backward_both_ways(fn, args, ct):
    """(eager VJP: concrete values, the fused rules; the VJP under jit: tracers, the formulas)
    of ``fn`` at ``args`` (ndarrays) for the output cotangent ``ct``."""
    targs = [nx.asarray(a) for a in args]
    tct = nx.asarray(ct)

    def pullback(*xs_and_ct):
        *xs, c = xs_and_ct
        return nx.vjp(fn, *xs)[1](c)
    eager = pullback(*targs, tct)
    traced = nx.jit(pullback)(*targs, tct)
    return [np.asarray(e) for e in eager], [np.asarray(t) for t in traced]


def cotangent(rng, shape, dtype):
    return np.asarray(rng.standard_normal(shape)).astype(dtype)


# -- det and slogdet -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("which", ["det", "logabsdet"])
def test_det_and_logabsdet_fused_backward_is_the_formula(which, batch, dtype):
    rng = np.random.default_rng(len(batch))
    n = 5
    a = well(rng, batch, n, dtype)
    fn = L.det if which == "det" else (lambda x: L.slogdet(x).logabsdet)
    ct = cotangent(rng, batch, dtype)
    (eager,), (traced,) = backward_both_ways(fn, [a], ct)
    a64 = a.astype(np.float64)
    inv_t = np.swapaxes(np.linalg.inv(a64), -1, -2)
    s = ct * (np.linalg.det(a64) if which == "det" else 1.0)
    want = s[..., None, None] * inv_t
    scaled_close(eager, want, dtype)
    scaled_close(traced, want, dtype)
    scaled_close(eager, traced, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_det_values_are_numpys(dtype):
    rng = np.random.default_rng(3)
    a = well(rng, (3, 2), 6, dtype)
    a[0, 0] *= -1.0
    tx = nx.asarray(a)

    def general(x):                       # under a transformation: the lu_det primitive
        return L.det(x), L.slogdet(x).sign, L.slogdet(x).logabsdet
    det, sign, logabs = nx.jit(general)(tx)
    want_sign, want_logabs = np.linalg.slogdet(a)
    scaled_close(det, np.linalg.det(a), dtype)
    np.testing.assert_array_equal(np.asarray(sign), want_sign)
    scaled_close(logabs, want_logabs, dtype)
    # the sign has no derivative (a real matrix's sign is piecewise constant)
    g = nx.grad(lambda x: nx.sum(L.slogdet(x).sign))(tx)
    np.testing.assert_array_equal(np.asarray(g), 0.0)


def test_det_grad_implementation_is_numpys_formula():
    rng = np.random.default_rng(4)
    for dtype in DTYPES:
        a = well(rng, (2, 3), 7, dtype)
        s = rng.standard_normal((2, 3)).astype(dtype)
        lu = B.IMPLS["lu_factor"](nx.asarray(a))
        got = B.IMPLS["det_grad"](nx.asarray(a), lu, nx.asarray(s))
        want = s[..., None, None] * np.swapaxes(np.linalg.inv(a.astype(np.float64)), -1, -2)
        scaled_close(got, want, dtype)


def test_det_gradient_of_a_singular_matrix_is_the_cofactor_matrix():
    a = nx.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert float(L.det(a)) == 0.0
    np.testing.assert_allclose(np.asarray(nx.grad(L.det)(a)), [[4.0, -2.0], [-2.0, 1.0]],
                               atol=1e-12)
    with np.errstate(divide="ignore"):     # log|det|'s: adj / +0, +-inf as JAX 0.10.2's
        g = np.asarray(nx.grad(lambda x: L.slogdet(x).logabsdet)(a))
    np.testing.assert_array_equal(g, [[np.inf, -np.inf], [-np.inf, np.inf]])


def test_det_second_order_still_differentiates_the_formula():
    # hessian-vector product of det (the rule's formula differentiated) against central
    # differences of the gradient
    rng = np.random.default_rng(5)
    a = well(rng, (), 4)
    v = rng.standard_normal((4, 4))
    _, hv = nx.jvp(nx.grad(L.det), (nx.asarray(a),), (nx.asarray(v),))
    h = 1e-5
    fd = (np.asarray(nx.grad(L.det)(nx.asarray(a + h * v)))
          - np.asarray(nx.grad(L.det)(nx.asarray(a - h * v)))) / (2 * h)
    np.testing.assert_allclose(np.asarray(hv), fd, rtol=1e-6, atol=1e-8)


# -- norms -----------------------------------------------------------------------------------

NORMS = [
    ("vector_norm", lambda x: L.vector_norm(x), lambda a: None),
    ("vector_norm_axis", lambda x: L.vector_norm(x, axis=-1), lambda a: -1),
    ("vector_norm_axes_keepdims", lambda x: L.vector_norm(x, axis=(0, -1), keepdims=True),
     lambda a: (0, a.ndim - 1)),
    ("matrix_norm_fro", lambda x: L.matrix_norm(x), lambda a: (a.ndim - 2, a.ndim - 1)),
    ("norm", lambda x: L.norm(x), lambda a: None),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,axes", NORMS, ids=[n[0] for n in NORMS])
def test_norm_fused_backward_is_the_formula(name, fn, axes, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4, 5)).astype(dtype)
    x[1] = 0.0                       # a zero slice: the derivative there is 0 (a subgradient)
    out = np.asarray(fn(nx.asarray(x)))
    ct = cotangent(rng, out.shape, dtype)
    (eager,), (traced,) = backward_both_ways(fn, [x], ct)
    ax = axes(x)
    x64 = x.astype(np.float64)
    nrm = np.sqrt(np.sum(x64 * x64, axis=ax, keepdims=True))
    g = ct.reshape(nrm.shape).astype(np.float64)
    want = x64 * g / np.where(nrm == 0, 1.0, nrm)
    scaled_close(eager, want, dtype)
    scaled_close(traced, want, dtype)
    assert np.isfinite(eager).all()


def test_norm2_grad_implementation_is_numpys_formula():
    rng = np.random.default_rng(7)
    for dtype in DTYPES:
        x = rng.standard_normal((2, 3, 4)).astype(dtype)
        for axes, keepdims in [((0, 1, 2), False), ((1, 2), True), ((0, 2), False)]:
            nrm = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdims)).astype(dtype)
            nrm.reshape(-1)[0] = 0.0           # the guard: 1 in place of a zero norm
            g = rng.standard_normal(nrm.shape).astype(dtype)
            got = B.IMPLS["norm2_grad"](nx.asarray(x), nx.asarray(nrm), nx.asarray(g),
                                        axes=axes, keepdims=keepdims)
            safe = np.where(nrm == 0, 1, nrm)
            scale = g / safe if keepdims else np.expand_dims(g / safe, axes)
            scaled_close(got, x * scale, dtype)


def test_norm_scalar_fast_path_is_numpys():
    rng = np.random.default_rng(8)
    for shape in [(64, 64), (7,), (2, 3, 4), (0,)]:
        a = rng.standard_normal(shape)
        got = L.norm(nx.asarray(a))
        assert got.dtype == np.float64 and got.shape == ()
        assert float(got) == np.linalg.norm(a)
        # the general path (under a transformation) gives the same value
        np.testing.assert_allclose(float(nx.jit(L.norm)(nx.asarray(a))), np.linalg.norm(a),
                                   rtol=1e-15)
    a32 = rng.standard_normal((5, 5)).astype(np.float32)
    got = L.norm(nx.asarray(a32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(float(got), np.linalg.norm(a32), rtol=1e-6)
    for special in (np.nan, np.inf):
        a = np.ones((3, 3))
        a[1, 1] = special
        got = float(L.norm(nx.asarray(a)))
        assert np.isnan(got) if np.isnan(special) else got == np.inf


# -- solve_triangular ------------------------------------------------------------------------

TRI_CASES = [(lower, trans, unit) for lower in (True, False) for trans in (0, 1, 2)
             for unit in (False, True)]


# complex: the transpose convention (trans 2, conjugation, is not differentiable: test_linalg)
TRI_RUNS = [(dt, *case) for dt in DTYPES + [np.complex128] for case in TRI_CASES
            if not (dt == np.complex128 and case[1] == 2)]


@pytest.mark.parametrize("dtype,lower,trans,unit", TRI_RUNS)
def test_solve_triangular_fused_backward_is_the_formula(dtype, lower, trans, unit):
    rng = np.random.default_rng(9)
    batch, n, k = (3,), 5, 2
    a = rng.uniform(-1, 1, batch + (n, n)) + 3 * np.eye(n)
    b = rng.standard_normal(batch + (n, k))
    if dtype == np.complex128:
        a = a + 0.3j * rng.uniform(-1, 1, a.shape)
        b = b + 1j * rng.standard_normal(b.shape)
    a, b = a.astype(dtype), b.astype(dtype)

    def fn(x, y):
        return SL.solve_triangular(x, y, trans=trans, lower=lower, unit_diagonal=unit)
    ct = cotangent(rng, b.shape, np.float64).astype(dtype)
    eager, traced = backward_both_ways(fn, [a, b], ct)
    # reference: x = op(m)^-1 b with m the triangle read; ct_b = op(m)^-T g, ct_a = the
    # triangle of -ct_b x^T (transposed for op = transpose); transpose convention for complex
    tri = np.tril if lower else np.triu
    k0 = (-1 if lower else 1) if unit else 0
    m = tri(a.astype(np.complex128), k0) + (np.eye(n) if unit else 0)
    op = m if trans == 0 else np.swapaxes(m, -1, -2)
    x = np.linalg.solve(op, b)
    ct_b = np.linalg.solve(np.swapaxes(op, -1, -2), ct)
    full = -ct_b @ np.swapaxes(x, -1, -2) if trans == 0 else -x @ np.swapaxes(ct_b, -1, -2)
    ct_a = tri(full, k0)
    if not np.iscomplexobj(a):
        ct_a, ct_b = ct_a.real, ct_b.real
    for got in (eager, traced):
        scaled_close(got[0], ct_a, dtype)
        scaled_close(got[1], ct_b, dtype)


def test_triangular_solve_grad_implementation_is_numpys_formula():
    rng = np.random.default_rng(10)
    for dtype in DTYPES + [np.complex128]:
        u = rng.standard_normal((2, 4, 3)).astype(dtype)
        v = rng.standard_normal((2, 4, 3)).astype(dtype)
        for lower, trans, unit in TRI_CASES:
            if trans == 2:
                continue
            got = B.IMPLS["triangular_solve_grad"](nx.asarray(u), nx.asarray(v), lower=lower,
                                                   trans=trans, unit_diagonal=unit)
            full = -(u @ np.swapaxes(v, -1, -2) if trans == 0 else v @ np.swapaxes(u, -1, -2))
            tri = np.tril if lower else np.triu
            scaled_close(got, tri(full, (-1 if lower else 1) if unit else 0), dtype)


# -- cho_solve -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("vector", [False, True])
def test_cho_solve_fused_backward_is_the_formula(vector, lower, batch, dtype):
    rng = np.random.default_rng(11)
    n, k = 6, 3
    a = spd(rng, batch, n)
    c = np.linalg.cholesky(a)
    if not lower:
        c = np.swapaxes(c, -1, -2)
    # junk in the other triangle: cho_solve reads the factor's triangle only
    junk = rng.standard_normal(c.shape)
    c_in = c + (np.triu(junk, 1) if lower else np.tril(junk, -1))
    b = rng.standard_normal(batch + ((n,) if vector else (n, k)))
    c_in, b = c_in.astype(dtype), b.astype(dtype)

    def fn(cc, bb):
        return SL.cho_solve((cc, lower), bb)
    ct = cotangent(rng, b.shape, dtype)
    eager, traced = backward_both_ways(fn, [c_in, b], ct)
    # reference: x = a^-1 b, ct_b = a^-1 g, ct_c = tri(-(ct_b x^T + x ct_b^T) c) (lower) or
    # tri(-c (...)) (upper), from a = c c^T / c^T c
    b2, g2 = (b[..., None], ct[..., None]) if vector else (b, ct)
    x = np.linalg.solve(a, b2.astype(np.float64))
    ct_b = np.linalg.solve(a, g2.astype(np.float64))
    s = ct_b @ np.swapaxes(x, -1, -2)
    s = s + np.swapaxes(s, -1, -2)
    ct_c = np.tril(-s @ c) if lower else np.triu(-c @ s)
    for got in (eager, traced):
        scaled_close(got[0], ct_c, dtype)
        scaled_close(got[1], ct_b[..., 0] if vector else ct_b, dtype)


def test_cho_solve_gradient_matches_finite_differences():
    rng = np.random.default_rng(12)
    n = 5
    c = np.linalg.cholesky(spd(rng, (2,), n))
    b = rng.standard_normal((2, n, 2))
    w = rng.standard_normal((2, n, 2))

    def f(cc, bb):
        return nx.sum(nx.multiply(SL.cho_solve((cc, True), bb), nx.asarray(w)))

    def fnp(cc, bb):
        return float(np.sum(scipy.linalg.cho_solve((cc[0], True), bb[0]) * w[0])
                     + np.sum(scipy.linalg.cho_solve((cc[1], True), bb[1]) * w[1]))
    gc, gb = nx.grad(f, (0, 1))(nx.asarray(c), nx.asarray(b))
    h = 1e-6
    for _ in range(3):
        dc = np.tril(rng.standard_normal(c.shape))
        db = rng.standard_normal(b.shape)
        fd = (fnp(c + h * dc, b + h * db) - fnp(c - h * dc, b - h * db)) / (2 * h)
        got = np.sum(np.asarray(gc) * dc) + np.sum(np.asarray(gb) * db)
        np.testing.assert_allclose(got, fd, rtol=1e-7)


def test_cho_solve_grad_implementation_is_numpys_formula():
    rng = np.random.default_rng(13)
    for dtype in DTYPES:
        for lower in (True, False):
            c = rng.standard_normal((2, 5, 5)).astype(dtype)       # any values: one triangle
            x = rng.standard_normal((2, 5, 3)).astype(dtype)       # is read
            u = rng.standard_normal((2, 5, 3)).astype(dtype)
            got = B.IMPLS["cho_solve_grad"](nx.asarray(c), nx.asarray(x), nx.asarray(u),
                                            lower=lower)
            s = u @ np.swapaxes(x, -1, -2)
            s = s + np.swapaxes(s, -1, -2)
            want = np.tril(-s @ np.tril(c)) if lower else np.triu(-np.triu(c) @ s)
            scaled_close(got, want, dtype)


def test_cho_solve_general_path_checks_its_input():
    c = np.linalg.cholesky(spd(np.random.default_rng(14), (), 3))
    jitted = nx.jit(lambda cc, bb: SL.cho_solve((cc, True), bb))
    with pytest.raises(LinAlgError, match="c"):
        jitted(nx.asarray(np.ones((3, 2))), nx.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="b"):
        jitted(nx.asarray(c), nx.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="c, b"):
        jitted(nx.asarray(np.stack([c, c])), nx.asarray(np.ones((3, 3, 1))))
    # a zero on the factor's diagonal: singular, as SciPy's triangular solves say
    singular = c.copy()
    singular[1, 1] = 0.0
    with pytest.raises(LinAlgError, match="singular"):
        nx.grad(lambda cc: nx.sum(SL.cho_solve((cc, True), nx.asarray(np.ones(3)))))(
            nx.asarray(singular))
    # non-finite input with check_finite (the default) names the argument
    bad = c.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="c"):
        nx.grad(lambda cc: nx.sum(SL.cho_solve((cc, True), nx.asarray(np.ones(3)))))(
            nx.asarray(bad))


# -- cholesky and cho_factor -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch,n", [((), 5), ((3,), 64), ((2,), 70)])
@pytest.mark.parametrize("which", ["cholesky", "cho_factor_upper", "cho_factor_lower"])
def test_cholesky_fused_backward_is_the_formula(which, batch, n, dtype):
    rng = np.random.default_rng(n)
    a = spd(rng, batch, n, dtype)
    fn = {"cholesky": L.cholesky,
          "cho_factor_upper": lambda x: SL.cho_factor(x)[0],
          "cho_factor_lower": lambda x: SL.cho_factor(x, lower=True)[0]}[which]
    ct = cotangent(rng, a.shape, dtype)
    (eager,), (traced,) = backward_both_ways(fn, [a], ct)
    # reference (Murray 2016, symbolic): for L = chol(a), Lbar = tril(g): the lower triangle
    # (1/2 on the diagonal) of L^-T (P + P^T) L^-1, P = Phi(L^T Lbar); for the upper factor
    # U = L^T of a's upper triangle, transposed
    upper = which == "cho_factor_upper"
    lm = np.linalg.cholesky(a.astype(np.float64))
    g = np.swapaxes(ct, -1, -2) if upper else ct
    want = np.empty(a.shape)
    for idx in np.ndindex(batch):
        p = np.tril(lm[idx].T @ np.tril(g[idx]))
        p[np.diag_indices(n)] *= 0.5
        left = scipy.linalg.solve_triangular(lm[idx], p + p.T, lower=True, trans=1)
        s = scipy.linalg.solve_triangular(lm[idx], left.T, lower=True, trans=1).T
        w = np.tril(s)
        w[np.diag_indices(n)] *= 0.5
        # the input symmetrized (cholesky) or read as symmetric (cho_factor): the symmetric
        # part of that triangle's cotangent
        want[idx] = 0.5 * (w + w.T)
    scaled_close(eager, want, dtype)
    scaled_close(traced, want, dtype)


# -- which path runs ---------------------------------------------------------------------------

PATHS = [
    ("det_grad", lambda x: L.det(x), "square"),
    ("det_grad", lambda x: L.slogdet(x).logabsdet, "square"),
    ("norm2_grad", lambda x: L.norm(x), "square"),
    ("triangular_solve_grad", lambda x: SL.solve_triangular(x, x[..., :1], lower=True),
     "square"),
    ("cho_solve_grad", lambda x: SL.cho_solve((x, True), x[..., :2]), "factor"),
    ("cholesky_grad", lambda x: L.cholesky(x), "spd"),
]


@pytest.mark.parametrize("prim_name,fn,kind", PATHS, ids=[f"{p[0]}-{i}" for i, p in
                                                           enumerate(PATHS)])
def test_fused_primitive_runs_on_concrete_values_only(prim_name, fn, kind, monkeypatch):
    from nx_rune import primitives as P
    prim = P.PRIMITIVES[prim_name]
    calls = []
    impl = prim.impl
    monkeypatch.setattr(prim, "impl", lambda *a, **k: calls.append(1) or impl(*a, **k))
    rng = np.random.default_rng(15)
    a = spd(rng, (2,), 4)
    if kind == "square":
        a = well(rng, (2,), 4)
    elif kind == "factor":
        a = np.linalg.cholesky(a)
    out = fn(nx.asarray(a))
    ct = nx.asarray(np.ones(out.shape))
    nx.vjp(fn, nx.asarray(a))[1](ct)
    assert len(calls) == 1
    nx.jit(lambda x, c: nx.vjp(fn, x)[1](c))(nx.asarray(a), ct)
    if prim_name == "det_grad":
        # det's and log|det|'s derivative is det_grad whatever the values (its kernel handles
        # singular matrices, its own rules give the higher orders): the compiled program too
        assert len(calls) == 2
    else:
        assert len(calls) == 1      # traced values: the formula, not the fused primitive


# -- matrix_power ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES + [np.complex128])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 13])
def test_matrix_power_backward_from_the_residual_is_the_formula(n, dtype):
    rng = np.random.default_rng(16)
    m = 4
    a = rng.uniform(-1, 1, (3, m, m)) * (1.5 / m)
    ct = rng.standard_normal((3, m, m))
    if dtype == np.complex128:
        a = a + 1j * rng.uniform(-1, 1, a.shape) * (1.0 / m)
        ct = ct + 1j * rng.standard_normal(ct.shape)
    a, ct = a.astype(dtype), ct.astype(dtype)
    fn = lambda x: L.matrix_power(x, n)          # noqa: E731
    (eager,), (traced,) = backward_both_ways(fn, [a], ct)
    # reference: d(a^n) = sum_k a^k da a^(n-1-k), so a's cotangent is
    # sum_k (a^T)^k ct (a^T)^(n-1-k) (the transpose convention for complex, as matmul's)
    at = np.swapaxes(a.astype(np.complex128), -1, -2)
    powers = [np.broadcast_to(np.eye(m), at.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ at)
    want = sum(powers[k] @ ct @ powers[n - 1 - k] for k in range(n))
    if not np.iscomplexobj(a):
        want = want.real
    scaled_close(eager, want, dtype)
    scaled_close(traced, want, dtype)


def test_matrix_power_values_and_second_order():
    rng = np.random.default_rng(17)
    a = rng.uniform(-1, 1, (2, 3, 3)) * 0.5
    for n in (2, 3, 5, 7, -3):
        got = nx.jit(lambda x: L.matrix_power(x, n))(nx.asarray(a))   # the primitives' path
        np.testing.assert_array_equal(np.asarray(got), np.linalg.matrix_power(a, n))
    # hessian-vector product against central differences of the gradient
    w = rng.standard_normal((2, 3, 3))

    def f(x):
        return nx.sum(nx.multiply(L.matrix_power(x, 7), nx.asarray(w)))
    v = rng.standard_normal(a.shape)
    _, hv = nx.jvp(nx.grad(f), (nx.asarray(a),), (nx.asarray(v),))
    h = 1e-5
    fd = (np.asarray(nx.grad(f)(nx.asarray(a + h * v)))
          - np.asarray(nx.grad(f)(nx.asarray(a - h * v)))) / (2 * h)
    np.testing.assert_allclose(np.asarray(hv), fd, rtol=1e-6, atol=1e-8)
    # integer matrices keep the matmul composition (and their dtype)
    ints = nx.asarray(np.array([[1, 2], [3, 4]], np.int64))
    got = nx.jit(lambda x: L.matrix_power(x, 5))(ints)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(got), np.linalg.matrix_power([[1, 2], [3, 4]], 5))
