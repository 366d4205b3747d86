"""The fast paths of nx.linalg / nx.scipy.linalg agree with the general ones.

- The blocked Cholesky derivative (backend.cholesky_vjp_values, used by the VJP rule on
  concrete values) against the symbolic formula computed here with SciPy, across block
  boundaries, batched, float32/float64; gradients through it against central differences;
  traced cotangents (vmap, second order) still take the differentiable formula.
- The direct NumPy path of concrete Tensors (det, slogdet, eigh, svd, qr, matrix_power,
  norms, expm, cho_factor, cho_solve) gives the general path's values (the forward pass of
  nx.vjp runs the general path), and inputs it does not take (lists, ints, float16, shapes
  the call would reject, non-finite values with check_finite) still give the general
  path's results and errors.
- norm2, lu_factor, lu_inverse (the primitives behind the 2-norms and slogdet's derivative).
"""
import numpy as np
import pytest
import scipy.linalg

import nx_rune as nx
from nx_rune import backend as B
from nx_rune import primitives as P
from nx_rune.primitives import bind

L = nx.linalg
SL = nx.scipy.linalg
LinAlgError = np.linalg.LinAlgError


def spd(rng, batch, n, dtype=np.float64):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def symbolic_cholesky_vjp(lmat, g):
    """Murray's symbolic result, with SciPy: the lower triangle (weights 1 below, 1/2 on the
    diagonal) of L^-T (P + P^T) L^-1, P = Phi(L^T tril(g))."""
    out = np.empty(lmat.shape, np.float64)
    for idx in np.ndindex(lmat.shape[:-2]):
        lm, gm = lmat[idx].astype(np.float64), np.tril(g[idx]).astype(np.float64)
        p = np.tril(lm.T @ gm)
        p[np.diag_indices_from(p)] *= 0.5
        left = scipy.linalg.solve_triangular(lm, p + p.T, lower=True, trans=1)
        s = scipy.linalg.solve_triangular(lm, left.T, lower=True, trans=1).T
        w = np.tril(s)
        w[np.diag_indices_from(w)] *= 0.5
        out[idx] = w
    return out


# -- the blocked Cholesky derivative ------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch, n", [((), 1), ((3,), 5), ((), 64), ((2,), 65), ((2, 1), 130),
                                      ((), 200), ((0,), 4), ((2,), 0)])
def test_blocked_cholesky_vjp_is_the_symbolic_result(batch, n, dtype):
    rng = np.random.default_rng(n)
    lmat = np.linalg.cholesky(spd(rng, batch, n)).astype(dtype)
    g = rng.standard_normal(batch + (n, n)).astype(dtype)
    got = B.cholesky_vjp_values(lmat, g)
    assert got.dtype == dtype and got.shape == lmat.shape
    want = symbolic_cholesky_vjp(lmat, g)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0,
                               atol=(1e-12 if dtype == np.float64 else 1e-4) * scale)
    assert not np.triu(got, 1).any()


def test_blocked_cholesky_vjp_reads_lower_triangles_only():
    rng = np.random.default_rng(1)
    lmat = np.linalg.cholesky(spd(rng, (), 150))
    g = rng.standard_normal((150, 150))
    junk = np.triu(rng.standard_normal((150, 150)), 1)
    want = B.cholesky_vjp_values(lmat, np.tril(g))
    np.testing.assert_allclose(B.cholesky_vjp_values(lmat + junk, g), want, rtol=0,
                               atol=1e-13 * np.abs(want).max())


def test_cholesky_gradient_across_blocks_matches_finite_differences():
    rng = np.random.default_rng(2)
    n = 130
    a = spd(rng, (), n)
    w = rng.standard_normal((n, n))

    def f(x):
        return nx.sum(nx.multiply(L.cholesky(x), nx.asarray(w)))

    g = np.asarray(nx.grad(f)(nx.asarray(a)))
    for seed in range(3):
        v = np.random.default_rng(10 + seed).standard_normal((n, n))
        v = v + v.T                  # a symmetric direction: a stays symmetric
        h = 1e-5

        def fn(x):
            return float(np.sum(np.linalg.cholesky(x) * w))
        fd = (fn(a + h * v) - fn(a - h * v)) / (2 * h)
        # cholesky symmetrizes its input: the directional derivative is <g, v>
        np.testing.assert_allclose(np.sum(g * v), fd, rtol=1e-7)


def test_traced_cotangents_take_the_formula_and_agree():
    rng = np.random.default_rng(3)
    a = spd(rng, (4,), 70)
    w = rng.standard_normal((70, 70))

    def f(x):
        return nx.sum(nx.multiply(L.cholesky(x), nx.asarray(w)))

    per_example = np.stack([np.asarray(nx.grad(f)(nx.asarray(x))) for x in a])
    batched = np.asarray(nx.vmap(nx.grad(f))(nx.asarray(a)))   # batched tracers: the formula
    np.testing.assert_allclose(batched, per_example, rtol=1e-11, atol=1e-13)
    # a second derivative differentiates the rule itself (a JVP of the VJP)
    v = rng.standard_normal((70, 70))
    v = nx.asarray(v + v.T)
    _, hv = nx.jvp(nx.grad(f), (nx.asarray(a[0]),), (v,))
    h = 1e-5
    fd = (np.asarray(nx.grad(f)(nx.asarray(a[0] + h * np.asarray(v))))
          - np.asarray(nx.grad(f)(nx.asarray(a[0] - h * np.asarray(v))))) / (2 * h)
    np.testing.assert_allclose(np.asarray(hv), fd, rtol=1e-6, atol=1e-8)


# -- the direct path ----------------------------------------------------------------------------

def _a(rng, batch=(2,), n=5, dtype=np.float64):
    return rng.standard_normal(batch + (n, n)).astype(dtype)


DIRECT = {   # name: (function, argument maker)
    "det": (L.det, lambda r: [_a(r)]),
    "slogdet": (L.slogdet, lambda r: [_a(r)]),
    "eigh": (L.eigh, lambda r: [spd(r, (2,), 4)]),
    "svd": (lambda x: L.svd(x, full_matrices=False), lambda r: [_a(r)]),
    "svd_full": (L.svd, lambda r: [r.standard_normal((2, 5, 3))]),
    "qr": (L.qr, lambda r: [r.standard_normal((2, 5, 3))]),
    "qr_complete": (lambda x: L.qr(x, mode="complete"), lambda r: [r.standard_normal((5, 3))]),
    "matrix_power_5": (lambda x: L.matrix_power(x, 5), lambda r: [_a(r) / 3]),
    "matrix_power_-2": (lambda x: L.matrix_power(x, -2), lambda r: [_a(r) + 4 * np.eye(5)]),
    "vector_norm": (L.vector_norm, lambda r: [_a(r)]),
    "vector_norm_keepdims": (lambda x: L.vector_norm(x, keepdims=True), lambda r: [_a(r)]),
    "matrix_norm": (L.matrix_norm, lambda r: [_a(r)]),
    "matrix_norm_keepdims": (lambda x: L.matrix_norm(x, keepdims=True), lambda r: [_a(r)]),
    "norm": (L.norm, lambda r: [_a(r)]),
    "norm_1d": (L.norm, lambda r: [r.standard_normal(7)]),
    "expm": (SL.expm, lambda r: [_a(r)]),
    "expm_big": (SL.expm, lambda r: [_a(r) * 4]),          # scaling and squaring
    "cho_factor_upper": (lambda x: SL.cho_factor(x)[0], lambda r: [spd(r, (2,), 4)]),
    "cho_factor_lower": (lambda x: SL.cho_factor(x, lower=True)[0], lambda r: [spd(r, (2,), 4)]),
    # from n = 32 on: LAPACK potrf directly (one matrix: no copy; a batch: one per matrix)
    "cho_factor_upper_40": (lambda x: SL.cho_factor(x)[0], lambda r: [spd(r, (), 40)]),
    "cho_factor_lower_40": (lambda x: SL.cho_factor(x, lower=True)[0],
                            lambda r: [spd(r, (2,), 40)]),
    "cho_factor_upper_40_batch": (lambda x: SL.cho_factor(x)[0], lambda r: [spd(r, (2,), 40)]),
    "cho_solve_lower": (lambda c, b: SL.cho_solve((c, True), b),
                        lambda r: [np.linalg.cholesky(spd(r, (2,), 4)),
                                   r.standard_normal((2, 4, 3))]),
    "cho_solve_upper_vec": (lambda c, b: SL.cho_solve((c, False), b),
                            lambda r: [np.swapaxes(np.linalg.cholesky(spd(r, (), 4)), -1, -2)
                                       .copy(), r.standard_normal(4)]),
}


def _leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(DIRECT))
def test_direct_path_matches_the_general_path(name, dtype):
    fn, make = DIRECT[name]
    args = [nx.asarray(np.asarray(x, dtype)) for x in make(np.random.default_rng(4))]
    direct = _leaves(fn(*args))
    general = _leaves(nx.vjp(fn, *args)[0])     # the forward pass under a transformation
    assert len(direct) == len(general)
    for d, g in zip(direct, general):
        assert d.shape == g.shape and d.dtype == g.dtype, (d.shape, g.shape, d.dtype, g.dtype)
        np.testing.assert_allclose(d, g, rtol=1e-12 if dtype == np.float64 else 2e-5,
                                   atol=1e-12 if dtype == np.float64 else 2e-5)


@pytest.mark.parametrize("name", sorted(DIRECT))
def test_inputs_off_the_direct_path_give_the_same_values(name):
    fn, make = DIRECT[name]
    raw = make(np.random.default_rng(5))
    # ndarrays keep float64; nested lists of Python floats are float32 (the default dtype)
    for conv, dtype, tol in ((lambda x: x, np.float64, 1e-12),
                             (lambda x: x.tolist(), np.float32, 2e-5)):
        ref = _leaves(fn(*[nx.asarray(np.asarray(x, dtype)) for x in raw]))
        got = _leaves(fn(*[conv(x) for x in raw]))
        for g, r in zip(got, ref):
            assert g.dtype == r.dtype
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol)


def test_int_and_float16_inputs_take_the_general_path():
    a = np.array([[2, 1], [1, 3]], np.int32)      # 32-bit ints become float32
    np.testing.assert_allclose(np.asarray(L.det(nx.asarray(a))), 5.0, rtol=1e-6)
    assert L.det(nx.asarray(a)).dtype == nx.float32
    h = nx.asarray(a.astype(np.float16))     # the general path's error, not NumPy's result
    for f in (L.norm, L.det, L.vector_norm, L.matrix_norm, SL.expm):
        with pytest.raises(TypeError, match="(x|A): float16"):
            f(h)


def test_direct_path_errors_name_the_argument():
    with pytest.raises(LinAlgError, match="x"):
        L.det(nx.asarray(np.ones((2, 3))))
    with pytest.raises(LinAlgError, match="x"):
        L.slogdet(nx.asarray(np.ones(3)))
    with pytest.raises(LinAlgError, match="x"):
        L.matrix_power(nx.asarray(np.ones((2, 3))), 2)
    with pytest.raises(ValueError, match="UPLO"):
        L.eigh(nx.asarray(np.eye(2)), UPLO="X")
    with pytest.raises(ValueError, match="mode"):
        L.qr(nx.asarray(np.eye(2)), mode="r")
    c = np.linalg.cholesky(spd(np.random.default_rng(6), (), 3))
    with pytest.raises(ValueError, match="b"):
        SL.cho_solve((nx.asarray(c), True), nx.asarray(np.ones((4, 2))))
    bad = c.copy()
    bad[1, 0] = np.inf
    with pytest.raises(ValueError, match="c"):
        SL.cho_solve((nx.asarray(bad), True), nx.asarray(np.ones(3)))
    singular = c.copy()
    singular[2, 2] = 0.0
    for lower in (True, False):
        cs = nx.asarray(singular if lower else singular.T.copy())
        with pytest.raises(LinAlgError, match="singular"):
            SL.cho_solve((cs, lower), nx.asarray(np.ones(3)))
        with pytest.raises(LinAlgError, match="singular"):      # the general path too
            nx.grad(lambda v: nx.sum(SL.cho_solve((cs, lower), v)))(nx.asarray(np.ones(3)))
    nan_a = np.eye(3)
    nan_a[0, 1] = np.nan
    with pytest.raises(ValueError, match="a"):
        SL.cho_factor(nx.asarray(nan_a))
    for n in (3, 40):
        for lower in (False, True):
            with pytest.raises(LinAlgError, match="positive definite"):
                SL.cho_factor(nx.asarray(-np.eye(n)), lower=lower)
            with pytest.raises(LinAlgError, match="positive definite"):
                SL.cho_factor(nx.asarray(-np.ones((2, n, n)) - np.eye(n)), lower=lower)


def test_nan_input_gives_nan_silently():
    a = np.eye(3)
    a[0, 0] = np.nan
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(float(L.det(nx.asarray(a))))
        assert np.isnan(float(L.slogdet(nx.asarray(a)).logabsdet))
        assert np.isnan(float(L.norm(nx.asarray(a))))
        assert np.isnan(np.asarray(SL.expm(nx.asarray(a)))).all()


def test_direct_results_do_not_share_the_input_memory():
    a = nx.asarray(np.eye(3) * 2.0)
    for f in (lambda x: L.matrix_power(x, 2), lambda x: SL.expm(x),
              lambda x: SL.cho_factor(x, lower=True)[0]):
        out = f(a)
        assert not np.shares_memory(np.asarray(out), np.asarray(a))


# -- the primitives behind them -------------------------------------------------------------------

@pytest.mark.parametrize("shape, axes, keepdims", [
    ((3, 4), (0, 1), False), ((2, 3, 4), (1, 2), True), ((2, 3, 4), (0, 2), False),
    ((5,), (0,), True), ((0, 3), (0,), False)])
def test_norm2_values_are_numpys(shape, axes, keepdims):
    x = np.random.default_rng(7).standard_normal(shape)
    got = np.asarray(bind(P.norm2_p, nx.asarray(x), axes=axes, keepdims=keepdims))
    want = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdims))
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_norm2_gradient_at_zero_is_zero():
    g = nx.grad(lambda x: L.vector_norm(x))(nx.asarray(np.zeros(3)))
    np.testing.assert_array_equal(np.asarray(g), np.zeros(3))


def test_lu_factor_slogdet_lu_inverse_are_numpys():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 5, 5))
    t = nx.asarray(a)
    lu = bind(P.lu_factor_p, t)
    sign, logabs = np.asarray(bind(P.slogdet_p, t, lu)).reshape(3, 2).T
    want = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign, want.sign, rtol=1e-15)
    np.testing.assert_allclose(logabs, want.logabsdet, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(bind(P.lu_inverse_p, t, lu)), np.linalg.inv(a),
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(LinAlgError):
        bind(P.lu_inverse_p, nx.asarray(np.zeros((2, 2))),
             bind(P.lu_factor_p, nx.asarray(np.zeros((2, 2)))))
