"""NumPy names and forms added to the front end: values against NumPy over dtypes and edge
values, derivatives against float64 finite differences, jit and vmap equal to eager, bad input."""
import numpy as np
import pytest

import nx_rune as nx

DTYPES = [np.float32, np.float64, np.int32, np.int64]


def fd(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def check_grad(f, x, rtol=1e-6):
    x64 = np.asarray(x, np.float64)
    g = nx.grad(lambda v: nx.sum(f(v)))(nx.asarray(x64))
    np.testing.assert_allclose(np.asarray(g), fd(lambda v: np.sum(np.asarray(f(nx.asarray(v)))),
                                                 x64), rtol=rtol, atol=1e-8)


def check_transforms(f, x):
    eager = np.asarray(f(x))
    np.testing.assert_array_equal(np.asarray(nx.jit(f)(x)), eager)
    batched = nx.vmap(f)(nx.stack([x, x * 2]))
    np.testing.assert_array_equal(np.asarray(batched[1]), np.asarray(f(x * 2)))


A = np.arange(12.0).reshape(3, 4) - 5.5


@pytest.mark.parametrize("dt", DTYPES)
def test_append(dt):
    a = A.astype(dt)
    np.testing.assert_array_equal(nx.append(a, [1, 2]), np.append(a, [1, 2]))
    np.testing.assert_array_equal(nx.append(a, a[:1], axis=0), np.append(a, a[:1], axis=0))
    assert nx.append(a, a, axis=1).dtype == np.append(a, a, axis=1).dtype
    np.testing.assert_array_equal(nx.append([], [1.0]), np.append([], [1.0]))
    with pytest.raises(ValueError):
        nx.append(a, np.ones(3), axis=0)


def test_append_grad_jit_vmap():
    check_grad(lambda x: nx.append(x, x[:2] * 3), A[0])
    check_transforms(lambda x: nx.append(x, x[:1]), nx.asarray(A[0]))


def test_r_c():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_array_equal(nx.r_[a, b], np.r_[a, b])
    np.testing.assert_array_equal(nx.r_[a, 0:3, 5.0], np.r_[a, 0:3, 5.0])
    np.testing.assert_allclose(nx.r_[0:1:5j], np.r_[0:1:5j])
    np.testing.assert_array_equal(nx.r_["0,2", a, b], np.r_["0,2", a, b])
    np.testing.assert_array_equal(nx.r_["1,2,0", a, b], np.r_["1,2,0", a, b])
    np.testing.assert_array_equal(nx.c_[a, b], np.c_[a, b])
    np.testing.assert_array_equal(nx.c_[A, A], np.c_[A, A])
    np.testing.assert_array_equal(nx.c_[a, 1:3], np.c_[a, 1:3])
    check_grad(lambda x: nx.r_[x, x[::-1] * 2.0], a)
    check_grad(lambda x: nx.c_[x, x ** 2], a)
    with pytest.raises(ValueError, match="directive"):
        nx.r_["r", a]


def test_dtype_predicates_and_complex():
    z = np.array([1 + 1e-20j, 2 + 0j])
    assert nx.iscomplexobj(z) and not nx.isrealobj(z) and nx.isrealobj(A)
    np.testing.assert_array_equal(nx.iscomplex(np.array([1 + 1j, 2])), [True, False])
    np.testing.assert_array_equal(nx.iscomplex(A), np.iscomplex(A))
    r = nx.real_if_close(z)
    assert r.dtype == np.real_if_close(z).dtype == np.float64
    w = np.array([1 + 1e-3j])
    assert nx.real_if_close(w).dtype == np.real_if_close(w).dtype
    assert nx.real_if_close(w, tol=0.1).dtype == np.real_if_close(w, tol=0.1).dtype
    with pytest.raises(TypeError, match="real_if_close"):
        nx.jit(nx.real_if_close)(nx.asarray(z))


@pytest.mark.parametrize("dt", DTYPES)
def test_fabs_fmax_fmin(dt):
    a = A.astype(dt)
    np.testing.assert_array_equal(nx.fabs(a), np.fabs(a))
    assert nx.fabs(a).dtype == np.fabs(a).dtype
    b = a[::-1].copy()
    np.testing.assert_array_equal(nx.fmax(a, b), np.fmax(a, b))
    np.testing.assert_array_equal(nx.fmin(a, b), np.fmin(a, b))


def test_fmax_fmin_nan_and_grad():
    a = np.array([np.nan, 1.0, np.nan, -np.inf, 0.0])
    b = np.array([2.0, np.nan, np.nan, 3.0, -0.0])
    np.testing.assert_array_equal(nx.fmax(a, b), np.fmax(a, b))
    np.testing.assert_array_equal(nx.fmin(a, b), np.fmin(a, b))
    x, y = np.array([0.3, -1.2, 2.0]), np.array([1.0, -2.0, 0.5])
    check_grad(lambda v: nx.fmax(v, y), x)
    check_grad(lambda v: nx.fmin(v, y), x)
    check_transforms(lambda v: nx.fmax(v, 0.5), nx.asarray(x))
    with pytest.raises(TypeError, match="complex"):
        nx.fabs(np.array([1j]))


@pytest.mark.parametrize("kth", [0, 3, -1, [1, 5]])
def test_partition(kth):
    x = np.array([5.0, -1.0, 3.0, 3.5, 8.0, 0.5, 2.0])
    p = np.asarray(nx.partition(x, kth))
    ref = np.partition(x, kth)
    for k in np.atleast_1d(kth):
        assert p[k] == ref[k]
        assert np.all(p[:k] <= p[k]) and np.all(p[k + 1 if k >= 0 else len(x) + k + 1:] >= p[k])
    ip = np.asarray(nx.argpartition(x, kth))
    np.testing.assert_array_equal(x[ip], p)
    check_grad(lambda v: nx.partition(v, kth) * np.arange(7.0), x)
    with pytest.raises(ValueError, match="kth"):
        nx.partition(x, 7)
    with pytest.raises(TypeError, match="kth"):
        nx.partition(x, 1.5)


def test_rollaxis_and_splits():
    x = np.arange(24.0).reshape(2, 3, 4)
    for axis, start in [(2, 0), (0, 3), (1, 1), (-1, 1), (0, -1)]:
        np.testing.assert_array_equal(nx.rollaxis(x, axis, start), np.rollaxis(x, axis, start))
    with pytest.raises(ValueError, match="start"):
        nx.rollaxis(x, 0, 5)
    for f, g, arg in [(nx.vsplit, np.vsplit, 2), (nx.hsplit, np.hsplit, [1]),
                      (nx.dsplit, np.dsplit, 2), (nx.hsplit, np.hsplit, 3)]:
        for a, b in zip(f(x, arg), g(x, arg)):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(nx.hsplit(np.arange(6.0), 3), np.hsplit(np.arange(6.0), 3)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="dsplit"):
        nx.dsplit(np.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="vsplit"):
        nx.vsplit(np.ones(4), 2)
    check_grad(lambda v: nx.vsplit(v, 2)[1] * 3.0, x)


def test_stack_forms():
    np.testing.assert_array_equal(nx.row_stack([A[0], A[1]]), np.vstack([A[0], A[1]]))
    for f, g in [(nx.vstack, np.vstack), (nx.hstack, np.hstack),
                 (nx.column_stack, np.column_stack), (nx.dstack, np.dstack)]:
        np.testing.assert_array_equal(f(A), g(A))
        np.testing.assert_array_equal(f(A[0]), g(A[0]))
    check_grad(lambda v: nx.hstack(v) * np.arange(12.0), A)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(edge_order):
    f = np.array([1.0, 2.0, 4.0, 7.0, 11.0, 16.0])
    np.testing.assert_allclose(nx.gradient(f, edge_order=edge_order),
                               np.gradient(f, edge_order=edge_order))
    np.testing.assert_allclose(nx.gradient(f, 0.5, edge_order=edge_order),
                               np.gradient(f, 0.5, edge_order=edge_order))
    xs = np.array([0.0, 0.5, 1.5, 1.75, 3.0, 4.0])
    np.testing.assert_allclose(nx.gradient(f, xs, edge_order=edge_order),
                               np.gradient(f, xs, edge_order=edge_order))
    m = np.arange(20.0).reshape(4, 5) ** 2
    for a, b in zip(nx.gradient(m, 2.0, edge_order=edge_order),
                    np.gradient(m, 2.0, edge_order=edge_order)):
        np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(nx.gradient(m, axis=1, edge_order=edge_order),
                               np.gradient(m, axis=1, edge_order=edge_order))
    gi = nx.gradient(np.array([1, 4, 9, 16]))
    assert gi.dtype == np.float64
    check_grad(lambda v: nx.gradient(v, edge_order=edge_order) * np.arange(6.0), f)
    check_transforms(lambda v: nx.gradient(v, edge_order=edge_order), nx.asarray(f))
    with pytest.raises(ValueError, match="samples"):
        nx.gradient(np.array([1.0]))
    with pytest.raises(ValueError, match="edge_order"):
        nx.gradient(f, edge_order=3)


def test_keyword_forms():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(nx.swapaxes(x, axis1=0, axis2=1), np.swapaxes(x, 0, 1))
    np.testing.assert_array_equal(nx.tile(x, reps=(2, 1)), np.tile(x, (2, 1)))
    np.testing.assert_array_equal(nx.repeat(x, repeats=2, axis=1), np.repeat(x, 2, axis=1))
    np.testing.assert_array_equal(nx.where(x > 2)[1], np.where(x > 2)[1])
    assert len(nx.where(x > 2)) == 2
    with pytest.raises(TypeError, match="swapaxes"):
        nx.swapaxes(x, 0, 1, axis1=0)
    with pytest.raises(TypeError, match="tile"):
        nx.tile(x)
    with pytest.raises(ValueError, match="where"):
        nx.where(x > 2, x)


PAD_MODES = ["edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum", "minimum",
             "mean", "median"]


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64])
def test_pad_modes(mode, dt):
    x = (np.arange(12).reshape(3, 4) * 3 % 7).astype(dt)
    for width in [((1, 2), (3, 1)), 2, ((0, 0), (5, 6)), ((4, 0), (0, 0))]:
        got = nx.pad(x, width, mode=mode)
        want = np.pad(x, width, mode=mode)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_array_equal(nx.pad(x, 1, mode), np.pad(x, 1, mode))


def test_pad_options_grad_and_errors():
    x = np.array([[1.0, 5.0, 2.0], [0.0, -3.0, 4.0]])
    for rt in ["even", "odd"]:
        for mode in ["reflect", "symmetric"]:
            np.testing.assert_allclose(nx.pad(x, (2, 4), mode=mode, reflect_type=rt),
                                       np.pad(x, (2, 4), mode=mode, reflect_type=rt))
    np.testing.assert_allclose(nx.pad(x, 3, mode="linear_ramp", end_values=(5, -2)),
                               np.pad(x, 3, mode="linear_ramp", end_values=(5, -2)))
    np.testing.assert_allclose(nx.pad(x, 2, mode="mean", stat_length=2),
                               np.pad(x, 2, mode="mean", stat_length=2))
    assert nx.pad(x, 2, mode="empty").shape == np.pad(x, 2, mode="empty").shape
    for mode in PAD_MODES:
        check_grad(lambda v: nx.pad(v, ((1, 2), (2, 1)), mode=mode) *
                   np.arange(30.0).reshape(5, 6), x, rtol=1e-5)
    check_transforms(lambda v: nx.pad(v, 2, mode="reflect"), nx.asarray(x))
    with pytest.raises(ValueError, match="mode"):
        nx.pad(x, 1, mode="bogus")
    with pytest.raises(ValueError, match="reflect_type"):
        nx.pad(x, 1, mode="reflect", reflect_type="bad")
    with pytest.raises(ValueError, match="empty axis"):
        nx.pad(np.ones((0, 2)), 1, mode="edge")


def test_einsum_sublist():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(nx.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                               np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    np.testing.assert_allclose(nx.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))
    c = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(nx.einsum(c, [Ellipsis, 1], [Ellipsis]),
                               np.einsum(c, [Ellipsis, 1], [Ellipsis]))
    check_grad(lambda v: nx.einsum(v, [0, 1], b, [1, 2], [0, 2]), a)
    with pytest.raises(ValueError, match="sublist"):
        nx.einsum(a, [0, -1])


def test_scalar_types():
    v = nx.float64(3)
    assert v.dtype == np.float64 and v.shape == () and float(v) == 3.0
    np.testing.assert_array_equal(nx.int64(nx.asarray([1.5, -2.5])), [1, -2])
    assert nx.int64(nx.asarray([1.5])).dtype == np.int64
    assert nx.float32([1, 2]).dtype == np.float32
    assert nx.zeros(2, nx.float64).dtype == np.float64
    assert nx.ones(2).dtype == nx.float32 and nx.float32 == np.dtype("float32")
    assert np.dtype(nx.int16) == np.int16 and {np.dtype("f8"): 1}[nx.float64] == 1
    assert isinstance(np.float64(1), nx.float64) and not isinstance(1.0, nx.int64)
    assert repr(nx.float32) == "dtype('float32')"
    g = nx.grad(lambda x: nx.float64(x) * 2.0)(nx.asarray(3.0, nx.float64))
    assert float(g) == 2.0
    np.testing.assert_array_equal(nx.jit(lambda x: nx.int32(x))(nx.asarray([1.7, 2.2])), [1, 2])


def test_scipy_stats_submodule_imports():
    import importlib
    import types
    for name in nx.scipy.stats.__all__:
        if not isinstance(getattr(nx.scipy.stats, name), types.ModuleType):
            continue    # gaussian_kde (a class) and sem (a function)
        mod = importlib.import_module(f"nx_rune.scipy.stats.{name}")
        assert hasattr(mod, "logpdf") or hasattr(mod, "logpmf")
    import scipy.stats

    import nx_rune.scipy.stats.multivariate_normal as mvn
    x, m, c = np.array([0.2, -0.1]), np.zeros(2), np.array([[1.0, 0.2], [0.2, 2.0]])
    np.testing.assert_allclose(mvn.logpdf(nx.asarray(x, nx.float64), m, c),
                               scipy.stats.multivariate_normal(m, c).logpdf(x), rtol=1e-6)


def test_einsum_accepts_the_optimize_keyword():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 5)))
    want = np.einsum("ij,jk,kl->il", a, b, c)
    for optimize in (False, True, "greedy", "optimal", "auto",
                     ["einsum_path", (0, 1), (0, 1)]):
        np.testing.assert_allclose(nx.einsum("ij,jk,kl->il", a, b, c, optimize=optimize), want,
                                   rtol=1e-12)
    with pytest.raises(TypeError, match="optimize"):
        nx.einsum("ij,jk->ik", a, b, optimize=3)


# -- nonzero / where / argwhere / flatnonzero with JAX's size= and fill_value= -----------------
# (a shape known in advance, so that they run under jit and vmap); expected: jax 0.10.2

SIZED_X = np.array([[0, 3, 0], [4, 0, 5]], np.int32)


def test_nonzero_with_size_and_fill_value_as_jax():
    def check(got, want):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == np.int32
            np.testing.assert_array_equal(np.asarray(g), w)
    x = nx.asarray(SIZED_X)
    for run in (lambda f: f(x), lambda f: nx.jit(f)(x)):
        check(run(lambda v: nx.nonzero(v, size=4, fill_value=-1)), [[0, 1, 1, -1], [1, 0, 2, -1]])
        check(run(lambda v: nx.nonzero(v, size=2)), [[0, 1], [1, 0]])
        check(run(lambda v: nx.nonzero(v, size=5, fill_value=(7, 8))),
              [[0, 1, 1, 7, 7], [1, 0, 2, 8, 8]])
        check(run(lambda v: nx.where(v > 0, size=4)), [[0, 1, 1, 0], [1, 0, 2, 0]])
        check([run(lambda v: nx.flatnonzero(v, size=4, fill_value=9))], [[1, 3, 5, 9]])
        check([run(lambda v: nx.argwhere(v, size=4, fill_value=-1))],
              [[[0, 1], [1, 0], [1, 2], [-1, -1]]])
    # a traced fill value; vmap; NaN and -0.0 (nan is non-zero, -0.0 is zero)
    check(nx.jit(lambda v, f: nx.nonzero(v, size=3, fill_value=f))(x, -2),
          [[0, 1, 1], [1, 0, 2]])
    check([nx.vmap(lambda v: nx.flatnonzero(v, size=3, fill_value=-1))(x)],
          [[[1, -1, -1], [0, 2, -1]]])
    check(nx.nonzero(nx.asarray(np.array([0.0, np.nan, -0.0, 2.0], np.float32)), size=3),
          [[1, 3, 0]])
    # without size, fill_value is ignored (JAX's behaviour); values index as they should
    check(nx.nonzero(x, fill_value=1), [[0, 1, 1], [1, 0, 2]])
    np.testing.assert_array_equal(
        np.asarray(nx.jit(lambda v: v[nx.nonzero(v, size=3)])(x)), [3, 4, 5])
    assert nx.argwhere(nx.asarray(3), size=2).shape == (2, 0)
    check(x.nonzero(size=2), [[0, 1], [1, 0]])     # the method, eager and traced
    check(nx.jit(lambda v: v.nonzero(size=4, fill_value=-1))(x), [[0, 1, 1, -1], [1, 0, 2, -1]])


def test_nonzero_size_bad_input():
    x = nx.asarray(SIZED_X)
    with pytest.raises(TypeError, match="nonzero: size must be an int"):
        nx.nonzero(x, size=2.0)
    with pytest.raises(ValueError, match="nonzero: size must be >= 0"):
        nx.nonzero(x, size=-1)
    with pytest.raises(ValueError, match="fill_value has 3 entries"):
        nx.nonzero(x, size=2, fill_value=(1, 2, 3))
    with pytest.raises(ValueError, match="nonzero: x must be at least 1-D"):
        nx.nonzero(nx.asarray(1), size=2)
    with pytest.raises(ValueError, match="one-argument form only"):
        nx.where(x > 0, x, 0, size=2)
    with pytest.raises(TypeError, match="must be concrete"):
        nx.jit(lambda v: nx.nonzero(v))(x)


def test_unique_with_size_and_fill_value_as_jax():
    # expected: jax 0.10.2
    x = nx.asarray(np.array([3.0, 1.0, 3.0, np.nan, 2.0, np.nan, 1.0], np.float32))

    def same(got, want, dtype=None):
        if dtype is not None:
            assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want, np.float64))
    same(nx.unique(x, size=5), [1, 2, 3, np.nan, 1], np.float32)
    same(nx.unique(x, size=2), [1, 2])
    same(nx.unique(x, size=6, fill_value=-1), [1, 2, 3, np.nan, -1, -1])
    same(nx.unique(x, size=5, equal_nan=False), [1, 2, 3, np.nan, np.nan])
    same(nx.unique(nx.asarray([[3, 1], [3, 2]]), size=4), [1, 2, 3, 1], np.int32)
    v = nx.asarray(np.array([5, 5, 0, 7], np.int32))
    for run in (lambda f: f(v), lambda f: nx.jit(f)(v)):
        same(run(lambda a: nx.unique(a, size=4)), [0, 5, 7, 0])
        vals, counts = run(lambda a: nx.unique(a, size=4, return_counts=True))
        same(vals, [0, 5, 7, 0])
        same(counts, [1, 2, 1, 0], np.int32)
        vals, index, inverse = run(lambda a: nx.unique(a, size=4, return_index=True,
                                                       return_inverse=True))
        same(index, [2, 0, 3, 2], np.int32)
        same(inverse, [1, 1, 0, 2], np.int32)
    same(nx.vmap(lambda a: nx.unique(a, size=3, fill_value=-1))(
        nx.asarray(np.array([[5, 5, 0], [1, 2, 3]], np.int32))), [[0, 5, -1], [1, 2, 3]])
    with pytest.raises(TypeError, match="unique: size must be an int"):
        nx.unique(v, size=2.5)
    with pytest.raises(ValueError, match="axis=None only"):
        nx.unique(v, size=2, axis=0)
    with pytest.raises(ValueError, match="fill_value applies with size= only"):
        nx.unique(v, fill_value=0)
    with pytest.raises(ValueError, match="non-empty"):
        nx.unique(nx.zeros(0), size=2)
