"""Creation functions per the Array API standard and NumPy.

Forward values against NumPy; the differentiable builders (tril, triu, diag, diagflat,
meshgrid) against float64 central finite differences in both modes; every bad-input path.
"""
import array as pyarray

import numpy as np
import pytest

import nx_rune as nx
from autodiff_specs import f64_tensor, fd_jacobians

CPU = nx.__array_namespace_info__().default_device()
SHAPE_FORMS = [3, (3,), [2, 3], (2, 0, 4), (), np.int64(4), (np.int32(2), np.uint8(3)),
               nx.asarray(3), (nx.asarray(2), 3), nx.asarray([2, 3]), np.array(2)]


def np_shape(shape):
    if isinstance(shape, nx.Tensor):
        shape = shape.numpy()
    if isinstance(shape, np.ndarray):
        return (int(shape),) if shape.ndim == 0 else tuple(int(s) for s in shape)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) if not isinstance(s, nx.Tensor) else int(s.item()) for s in shape)


def check_jacobians(fn, *args, eps=1e-6):
    out, jacs = fd_jacobians(fn, args, eps)
    for i, want in enumerate(jacs):
        tensors = [f64_tensor(a) for a in args]
        for mode in (nx.jacrev, nx.jacfwd):
            got = np.asarray(mode(fn, argnums=i)(*tensors), dtype=np.float64)
            np.testing.assert_allclose(got.reshape(out.size, -1), want, rtol=1e-6, atol=1e-8)


def assert_same(got, want, dtype=None):
    got_arr = got.numpy()
    want = np.asarray(want)
    assert got_arr.dtype == (want.dtype if dtype is None else np.dtype(dtype)), \
        (got_arr.dtype, want.dtype, dtype)
    assert got_arr.shape == want.shape, (got_arr.shape, want.shape)
    np.testing.assert_array_equal(got_arr, want)


# -- asarray / array ---------------------------------------------------------------------------

def test_asarray_python_data_dtypes():
    assert nx.asarray(True).dtype == np.bool_
    assert nx.asarray([1, True]).dtype == np.int32
    assert nx.asarray(1.0).dtype == np.float32
    assert nx.asarray([1, 2.5]).dtype == np.float32
    assert nx.asarray(1j).dtype == np.complex64
    assert nx.asarray(2**40).dtype == np.int64
    assert nx.asarray([[1, 2], [3, 4]], dtype=nx.uint8).dtype == np.uint8


def test_asarray_nested_sequences_of_tensors():
    got = nx.asarray([nx.ones(2), nx.zeros(2)])
    assert_same(got, np.array([[1, 1], [0, 0]], np.float32))
    got = nx.asarray([[nx.asarray(1.5), 2.0], [3.0, nx.asarray(4.0)]])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), [[1.5, 2.0], [3.0, 4.0]])
    got = nx.asarray((nx.arange(3), np.arange(3)), dtype=nx.int16)
    assert_same(got, np.array([[0, 1, 2], [0, 1, 2]], np.int16))


def test_asarray_copy_none_shares_when_it_can():
    a = np.arange(6.0).reshape(2, 3)
    t = nx.asarray(a)
    assert np.shares_memory(t.numpy(), a)
    assert nx.asarray(t) is t and nx.asarray(t, copy=None) is t
    assert nx.asarray(t, nx.float64) is t
    u = nx.asarray(a.T)   # not contiguous: copied
    assert not np.shares_memory(u.numpy(), a)
    np.testing.assert_array_equal(u.numpy(), a.T)


def test_asarray_copy_true_always_copies():
    a = np.arange(6.0)
    t = nx.asarray(a, copy=True)
    assert not np.shares_memory(t.numpy(), a)
    np.testing.assert_array_equal(t.numpy(), a)
    x = nx.asarray(a)
    y = nx.asarray(x, copy=True)
    assert y is not x and not nx.shares_memory(x, y)
    np.testing.assert_array_equal(y.numpy(), a)
    z = nx.asarray(x, dtype=nx.float32, copy=True)
    assert z.dtype == np.float32 and not nx.shares_memory(x, z)
    buf = bytearray(np.arange(4, dtype=np.uint8).tobytes())
    m = nx.asarray(memoryview(buf), copy=True)
    buf[0] = 9
    assert m.numpy()[0] == 0
    src = pyarray.array("f", [1.0, 2.0])
    c = nx.asarray(src, copy=True)
    src[0] = 5.0
    assert c.numpy()[0] == 1.0 and c.dtype == np.float32
    assert not nx.shares_memory(nx.array(x), x)     # array copies by default
    assert not np.shares_memory(nx.array(a).numpy(), a)


def test_asarray_copy_false_never_copies():
    a = np.arange(6.0)
    t = nx.asarray(a, copy=False)
    assert np.shares_memory(t.numpy(), a)
    x = nx.asarray(a)
    assert nx.asarray(x, copy=False) is x
    assert nx.asarray(x, dtype=nx.float64, copy=False) is x
    buf = bytearray(np.arange(4, dtype=np.uint8).tobytes())
    m = nx.asarray(memoryview(buf), copy=False)
    buf[0] = 9
    assert m.numpy()[0] == 9 and m.dtype == np.uint8
    for obj, kw in [(a[::2], {}), (a, {"dtype": nx.float32}), ([1.0, 2.0], {}), (3.0, {}),
                    (np.float64(3.0), {}), (x, {"dtype": nx.int32}),
                    (np.arange(3, dtype=">f8"), {})]:
        with pytest.raises(ValueError, match="copy"):
            nx.asarray(obj, copy=False, **kw)


def test_asarray_device_and_bad_input():
    a = np.arange(3)
    for device in (None, "cpu", CPU, nx.ones(1).device):
        assert_same(nx.asarray(a, device=device), a)
        assert_same(nx.array(a, device=device), a)
    for bad in ("cuda", "gpu:0", 0, object()):
        with pytest.raises(ValueError, match="device"):
            nx.asarray(a, device=bad)
    with pytest.raises(TypeError, match="copy"):
        nx.asarray(a, copy="no")
    with pytest.raises(TypeError, match="obj"):
        nx.asarray(["a", "b"])
    with pytest.raises(TypeError):
        nx.asarray([1.0, 2.0], dtype="not a dtype")


# -- shapes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_shape_functions_defaults_and_shape_forms(fn):
    make = getattr(nx, fn)
    for shape in SHAPE_FORMS:
        t = make(shape)
        assert t.shape == np_shape(shape) and t.dtype == np.float32
    for dt in ("bool", "int8", "uint64", "float16", "float64", "complex128"):
        t = make((2, 3), dtype=dt, device="cpu")
        assert t.dtype == np.dtype(dt) and t.shape == (2, 3)
        if fn != "empty":
            np.testing.assert_array_equal(t.numpy(), getattr(np, fn)((2, 3), dt))
    assert make(2, nx.int32).dtype == np.int32      # dtype by position (API.md)


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_shape_functions_bad_input(fn):
    make = getattr(nx, fn)
    for bad in (-1, (2, -3)):
        with pytest.raises(ValueError, match="shape"):
            make(bad)
    for bad in (2.5, (2, 2.0), "3", nx.asarray(2.0), nx.asarray([1.5]), True, (None, 2)):
        with pytest.raises(TypeError, match="shape"):
            make(bad)
    with pytest.raises(ValueError, match="device"):
        make(3, device="cuda")
    with pytest.raises(TypeError, match="dtype"):
        make(3, dtype="float128x")
    with pytest.raises(TypeError, match="dtype"):
        make(3, True)


def test_reshape_and_broadcast_to_take_tensor_shapes():
    x = nx.arange(6)
    assert nx.reshape(x, nx.asarray([2, 3])).shape == (2, 3)
    assert nx.reshape(x, (nx.asarray(3), np.int8(2))).shape == (3, 2)
    assert nx.broadcast_to(nx.ones(3), (nx.asarray(2), 3)).shape == (2, 3)
    assert nx.reshape(x, nx.asarray(6)).shape == (6,)


def test_full_dtype_inference_and_values():
    cases = [(True, np.bool_), (3, np.int32), (2**40, np.int64), (2.5, np.float32),
             (1 - 2j, np.complex64), (np.float64(2.5), np.float64), (np.int8(3), np.int8),
             (nx.asarray(1.5, dtype=nx.float64), np.float64), (nx.asarray(7), np.int32),
             (np.array(4, dtype=np.uint16), np.uint16)]
    for fill, dt in cases:
        t = nx.full((2, 2), fill)
        want = fill.numpy() if isinstance(fill, nx.Tensor) else fill
        assert_same(t, np.full((2, 2), want, dtype=dt))
    assert_same(nx.full(3, 2.7, nx.int16), np.full(3, 2.7, np.int16))
    assert_same(nx.full((), -0.0, dtype=nx.float64), np.array(-0.0))
    assert np.signbit(nx.full((), -0.0).numpy())
    assert_same(nx.full(nx.asarray(2), 1.5, device=CPU), np.full(2, 1.5, np.float32))
    with pytest.raises(ValueError, match="shape"):
        nx.full(-2, 1.0)
    with pytest.raises(ValueError, match="device"):
        nx.full(2, 1.0, device="cuda")


def test_like_functions():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    t = nx.asarray(a)
    for src in (t, a, a.tolist()):
        want_dt = np.int16 if not isinstance(src, list) else np.int32
        assert_same(nx.zeros_like(src), np.zeros((2, 3), want_dt))
        assert_same(nx.ones_like(src), np.ones((2, 3), want_dt))
        assert_same(nx.full_like(src, 7), np.full((2, 3), 7, want_dt))
        e = nx.empty_like(src)
        assert e.shape == (2, 3) and e.dtype == want_dt
    assert_same(nx.zeros_like(t, dtype=nx.float64), np.zeros((2, 3)))
    assert_same(nx.ones_like(t, nx.bool), np.ones((2, 3), bool))
    assert_same(nx.full_like(t, 2.9), np.full_like(a, 2.9))   # cast to x's dtype, as NumPy
    assert_same(nx.full_like(t, 2.5, dtype=nx.float32, device="cpu"), np.full((2, 3), 2.5,
                                                                              np.float32))
    assert nx.empty_like(t, dtype=nx.complex64, device=CPU).dtype == np.complex64
    for fn in (nx.zeros_like, nx.ones_like, nx.empty_like):
        with pytest.raises(ValueError, match="device"):
            fn(t, device="cuda")
        with pytest.raises(TypeError, match="dtype"):
            fn(t, dtype="nope")


def test_full_is_differentiable_in_a_tensor_fill():
    rng = np.random.default_rng(5)
    w = nx.asarray(rng.standard_normal((2, 3)))
    check_jacobians(lambda a: nx.full((2, 3), a) * w, np.array(0.7))
    check_jacobians(lambda a: nx.full((2, 3), a * a), np.array([0.5, -1.0, 2.0]))
    check_jacobians(lambda x, a: nx.full_like(x, a) * x, rng.standard_normal(3), np.array(1.5))
    t = nx.full((2,), nx.asarray([1.0, 2.0]))
    assert_same(t, np.full((2,), np.array([1.0, 2.0], np.float32)))
    with pytest.raises(ValueError, match="broadcast"):
        nx.full((2,), nx.ones(3))


def test_like_functions_of_tracers_are_constants():
    def f(x):
        z = nx.zeros_like(x) + nx.ones_like(x, dtype=nx.float64) * 2.0
        return nx.sum(x * z + nx.full_like(x, 3.0))

    g = nx.grad(f)(f64_tensor([1.0, 2.0]))
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])


# -- arange ------------------------------------------------------------------------------------

ARANGE_INT_CASES = [(5,), (0,), (-3,), (2, 9), (9, 2), (9, 2, -2), (-5, 5, 3), (0, 10, 20),
                    (10, 0, -3), (np.int64(4),), (np.int8(1), np.int16(7), np.uint8(2))]
ARANGE_FLOAT_CASES = [(2.5,), (0.0, 1.0, 0.1), (1, 2.0), (-1.5, 1.5, 0.5), (3.0, 0.0, -0.7),
                      (0, 1, 1 / 3), (np.float64(0.5), 3)]


def test_arange_integers_against_numpy():
    for args in ARANGE_INT_CASES:
        got = nx.arange(*args)
        want = np.arange(*[int(a) for a in args])
        assert_same(got, want.astype(np.int32), np.int32)


def test_arange_floats_against_numpy():
    for args in ARANGE_FLOAT_CASES:
        got = nx.arange(*args)
        want = np.arange(*[float(a) for a in args], dtype=np.float64).astype(np.float32)
        assert_same(got, want, np.float32)


def test_arange_default_dtype_follows_the_values():
    # the range's values decide, not the step: an empty range with a huge step is int32
    assert nx.arange(0, step=-2**31).dtype == np.int32 and nx.arange(0, step=-2**31).size == 0
    assert nx.arange(0, 10, 2**40).dtype == np.int32
    assert_same(nx.arange(-2**31, -2**31 + 3), np.arange(-2**31, -2**31 + 3, dtype=np.int32))
    assert_same(nx.arange(2**31 - 2, 2**31 + 1), np.arange(2**31 - 2, 2**31 + 1,
                                                           dtype=np.int64))
    assert_same(nx.arange(2**63, 2**63 + 2), np.array([2**63, 2**63 + 1], np.uint64))


def test_arange_dtypes_keywords_and_tensor_arguments():
    for dt in ("int8", "uint16", "int64", "float32", "float64"):
        assert_same(nx.arange(1, 7, 2, dtype=dt), np.arange(1, 7, 2, dtype=dt))
        assert_same(nx.arange(1, 7, 2, dt), np.arange(1, 7, 2, dtype=dt))
    assert_same(nx.arange(0.0, 1.0, 0.25, dtype=nx.float16),
                np.arange(0.0, 1.0, 0.25).astype(np.float16))
    assert_same(nx.arange(start=2, stop=5), np.arange(2, 5, dtype=np.int32))
    assert_same(nx.arange(5, step=2), np.arange(0, 5, 2, dtype=np.int32))
    assert_same(nx.arange(nx.asarray(4)), np.arange(4, dtype=np.int32))
    assert_same(nx.arange(nx.asarray(1.0), nx.asarray(3)), np.array([1.0, 2.0], np.float32))
    assert_same(nx.arange(3, device="cpu"), np.arange(3, dtype=np.int32))


def test_arange_bad_input():
    with pytest.raises(ValueError, match="step"):
        nx.arange(0, 5, 0)
    with pytest.raises(ValueError, match="step"):
        nx.arange(0, 5, 0.0)
    for args in [(float("nan"),), (0, float("inf")), (0, 5, float("nan"))]:
        with pytest.raises(ValueError, match="finite"):
            nx.arange(*args)
    for args in [(1j,), ("5",), (0, None, None), (nx.arange(3),)]:
        with pytest.raises(TypeError):
            nx.arange(*args)
    with pytest.raises(ValueError, match="dtype"):
        nx.arange(0, 300, 100, dtype=nx.int8)
    with pytest.raises(ValueError, match="device"):
        nx.arange(3, device="cuda")


# -- linspace ----------------------------------------------------------------------------------

def test_linspace_against_numpy():
    for start, stop in [(0, 1), (-2.5, 7.25), (3, -3), (1e-3, 1e3)]:
        for num in (0, 1, 2, 5, 50):
            for endpoint in (True, False):
                got = nx.linspace(start, stop, num, endpoint=endpoint)
                want = np.linspace(start, stop, num, endpoint=endpoint).astype(np.float32)
                assert_same(got, want, np.float32)
                if num:
                    assert got.numpy()[0] == np.float32(start)
                if num > 1 and endpoint:
                    assert got.numpy()[-1] == np.float32(stop)
    assert_same(nx.linspace(0, 1), np.linspace(0, 1).astype(np.float32))   # num=50
    assert_same(nx.linspace(0, 1, 5, nx.float64), np.linspace(0, 1, 5))
    assert_same(nx.linspace(0, 10, 4, dtype=nx.int32), np.linspace(0, 10, 4, dtype=np.int32))
    assert_same(nx.linspace(nx.asarray(1.0), nx.asarray(2.0), nx.asarray(3)),
                np.linspace(1, 2, 3).astype(np.float32))


def test_linspace_complex():
    got = nx.linspace(0, 1 + 2j, 5)
    assert_same(got, np.linspace(0, 1 + 2j, 5).astype(np.complex64), np.complex64)
    got = nx.linspace(1j, -1, 4, dtype=nx.complex128, endpoint=False)
    assert_same(got, np.linspace(1j, -1, 4, endpoint=False))


def test_linspace_bad_input():
    with pytest.raises(ValueError, match="num"):
        nx.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="num"):
        nx.linspace(0, 1, 2.5)
    with pytest.raises(TypeError, match="endpoint"):
        nx.linspace(0, 1, 5, endpoint="no")
    with pytest.raises(TypeError, match="dtype"):
        nx.linspace(0, 1, 5, False)     # NumPy's positional endpoint is nx's dtype
    with pytest.raises(TypeError, match="dtype"):
        nx.linspace(0, 1j, 5, dtype=nx.float32)
    with pytest.raises(ValueError, match="device"):
        nx.linspace(0, 1, 5, device="cuda")


# -- eye, identity, tri ------------------------------------------------------------------------

def test_eye_against_numpy():
    for n, m in [(0, None), (1, None), (3, None), (3, 5), (5, 2), (0, 4)]:
        for k in (-6, -2, -1, 0, 1, 3, 7, 2**70, -2**70):
            got = nx.eye(n, m, k=k)
            want = np.eye(n, m, k=k if abs(k) < 100 else 100, dtype=np.float32)
            assert_same(got, want, np.float32)
    for dt in ("bool", "int64", "complex64"):
        assert_same(nx.eye(3, 2, k=-1, dtype=dt), np.eye(3, 2, k=-1, dtype=dt))
    assert_same(nx.eye(n=2, m=3), np.eye(2, 3, dtype=np.float32))          # API.md keywords
    assert_same(nx.eye(2, 3, nx.int8), np.eye(2, 3, dtype=np.int8))         # dtype by position
    assert_same(nx.eye(nx.asarray(2), np.int64(2), device="cpu"), np.eye(2, dtype=np.float32))


def test_eye_bad_input():
    with pytest.raises(ValueError, match="n"):
        nx.eye(-1)
    with pytest.raises(ValueError, match="m"):
        nx.eye(2, -3)
    with pytest.raises(TypeError, match="n"):
        nx.eye(2.0)
    with pytest.raises(TypeError, match="k"):
        nx.eye(3, k=0.5)
    with pytest.raises(TypeError, match="dtype"):
        nx.eye(3, 3, 1)          # NumPy's positional k is nx's dtype
    with pytest.raises(ValueError, match="device"):
        nx.eye(3, device="cuda")


def test_identity_and_tri():
    assert_same(nx.identity(3), np.identity(3, dtype=np.float32))
    assert_same(nx.identity(2, nx.int16), np.identity(2, dtype=np.int16))
    for N, M, k in [(3, None, 0), (3, 5, 1), (4, 2, -1), (2, 2, 10), (3, 3, -10), (0, 3, 0)]:
        assert_same(nx.tri(N, M, k), np.tri(N, M, k, dtype=np.float32))
    assert_same(nx.tri(3, dtype=nx.bool), np.tri(3, dtype=bool))
    with pytest.raises(ValueError, match="N"):
        nx.tri(-1)
    with pytest.raises(ValueError, match="n"):
        nx.identity(-2)


# -- tril, triu --------------------------------------------------------------------------------

def test_tril_triu_against_numpy():
    rng = np.random.default_rng(0)
    for shape in [(3, 3), (3, 5), (5, 2), (2, 3, 4), (2, 1, 3, 3), (0, 3), (3, 0)]:
        a = rng.standard_normal(shape).astype(np.float32)
        for k in (-7, -1, 0, 1, 2, 9, 2**65):
            assert_same(nx.tril(nx.asarray(a), k=k), np.tril(a, k=k if abs(k) < 99 else 99))
            assert_same(nx.triu(nx.asarray(a), k=k), np.triu(a, k=k if abs(k) < 99 else 99))
    b = rng.integers(0, 2, (4, 4)).astype(bool)
    assert_same(nx.tril(b), np.tril(b))
    i = rng.integers(-9, 9, (3, 4)).astype(np.int8)
    assert_same(nx.triu(i, 1), np.triu(i, 1))


def test_tril_triu_derivatives():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4))
    check_jacobians(lambda u: nx.tril(u, k=1) * 2.0, x)
    check_jacobians(lambda u: nx.triu(u * u, k=-1), x)


def test_tril_triu_bad_input():
    for fn in (nx.tril, nx.triu):
        with pytest.raises(ValueError, match="2 dimensions"):
            fn(nx.ones(3))
        with pytest.raises(ValueError, match="2 dimensions"):
            fn(nx.asarray(1.0))
        with pytest.raises(TypeError, match="k"):
            fn(nx.ones((2, 2)), k=1.5)


# -- diag, diagflat ----------------------------------------------------------------------------

def test_diag_against_numpy():
    rng = np.random.default_rng(2)
    v = rng.standard_normal(4).astype(np.float32)
    for k in (-5, -2, -1, 0, 1, 3):
        assert_same(nx.diag(nx.asarray(v), k), np.diag(v, k))
        assert_same(nx.diag(v, k=k), np.diag(v, k))
    assert_same(nx.diag(nx.zeros(0)), np.diag(np.zeros(0, np.float32)))
    for shape in [(3, 5), (5, 3), (4, 4), (1, 6), (0, 3)]:
        a = rng.standard_normal(shape).astype(np.float32)
        for k in range(-7, 8):
            assert_same(nx.diag(nx.asarray(a), k), np.diag(a, k))
    a = rng.standard_normal((4, 5)).astype(np.float32)
    assert_same(nx.diag(nx.asarray(a).T, 1), np.diag(a.T, 1))      # a strided input
    i = np.arange(9, dtype=np.int16).reshape(3, 3)
    assert_same(nx.diag(i), np.diag(i))
    assert_same(nx.diag(np.array([True, False])), np.diag([True, False]))


def test_diagflat_against_numpy():
    a = np.arange(6.0).reshape(2, 3)
    for k in (-2, 0, 1):
        assert_same(nx.diagflat(a, k), np.diagflat(a, k))
    assert_same(nx.diagflat(nx.asarray([1, 2])), np.diagflat(np.array([1, 2], np.int32)))


def test_diag_derivatives():
    rng = np.random.default_rng(3)
    check_jacobians(lambda v: nx.diag(v * v), rng.standard_normal(3))
    check_jacobians(lambda v: nx.diag(v, k=2), rng.standard_normal(3))
    check_jacobians(lambda v: nx.diag(v, k=-1) * 3.0, rng.standard_normal(2))
    check_jacobians(lambda a: nx.diag(a, 1) * 2.0, rng.standard_normal((3, 4)))
    check_jacobians(lambda a: nx.diag(a, -2), rng.standard_normal((4, 3)))
    check_jacobians(lambda a: nx.diagflat(a, 1), rng.standard_normal((2, 2)))


def test_diag_bad_input():
    for bad in (nx.asarray(1.0), nx.ones((2, 2, 2))):
        with pytest.raises(ValueError, match="1-d or 2-d"):
            nx.diag(bad)
    with pytest.raises(TypeError, match="k"):
        nx.diag(nx.ones(3), k=1.0)


# -- indices, meshgrid -------------------------------------------------------------------------

def test_indices_against_numpy():
    for dims in [(2, 3), (4,), (2, 0, 3), ()]:
        assert_same(nx.indices(dims), np.indices(dims).astype(np.int32))
        for got, want in zip(nx.indices(dims, sparse=True), np.indices(dims, sparse=True)):
            assert_same(got, want.astype(np.int32))
    assert_same(nx.indices((2, 2), dtype=nx.int64), np.indices((2, 2)))
    assert_same(nx.indices(nx.asarray([2, 1])), np.indices((2, 1)).astype(np.int32))
    with pytest.raises(ValueError, match="dimensions"):
        nx.indices((2, -1))
    with pytest.raises(TypeError, match="dimensions"):
        nx.indices((2.5,))


def test_meshgrid_against_numpy():
    a = np.arange(3.0, dtype=np.float32)
    b = np.array([10, 20], dtype=np.int16)
    c = np.array([0.5, 1.5, 2.5, 3.5])
    for arrays in [(a,), (a, b), (a, b, c), ()]:
        for indexing in ("xy", "ij"):
            got = nx.meshgrid(*arrays, indexing=indexing)
            want = np.meshgrid(*arrays, indexing=indexing)
            assert isinstance(got, list) and len(got) == len(want)
            for g, w in zip(got, want):
                assert_same(g, w)
            sparse = nx.meshgrid(*arrays, indexing=indexing, sparse=True)
            for g, w in zip(sparse, np.meshgrid(*arrays, indexing=indexing, sparse=True)):
                assert_same(g, w)
    assert_same(nx.meshgrid(np.ones((2, 2)))[0], np.meshgrid(np.ones((2, 2)))[0])   # flattened


def test_meshgrid_outputs_are_separate_copies():
    x = nx.arange(3)
    X, Y = nx.meshgrid(x, x)
    assert not nx.shares_memory(X, Y) and not nx.shares_memory(X, x)
    assert X.strides == (3, 1)     # materialized, not a stride-0 broadcast


def test_meshgrid_derivatives():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((2, 3))

    def f(u, v):
        X, Y = nx.meshgrid(u, v)
        return X * Y * nx.asarray(w)

    check_jacobians(f, rng.standard_normal(3), rng.standard_normal(2))
    check_jacobians(lambda u, v: nx.meshgrid(u, v, indexing="ij")[1] * 1.0,
                    rng.standard_normal(2), rng.standard_normal(3))


def test_meshgrid_bad_input():
    with pytest.raises(ValueError, match="indexing"):
        nx.meshgrid(nx.ones(2), indexing="xyz")


# -- from_dlpack -------------------------------------------------------------------------------

def test_from_dlpack_numpy_and_nx_sources():
    a = np.arange(6.0).reshape(2, 3)
    t = nx.from_dlpack(a)
    assert np.shares_memory(t.numpy(), a)
    np.testing.assert_array_equal(t.numpy(), a)
    c = nx.from_dlpack(a, copy=True)
    assert not np.shares_memory(c.numpy(), a)
    np.testing.assert_array_equal(c.numpy(), a)
    u = nx.from_dlpack(t, device="cpu")
    assert nx.shares_memory(u, t) and u.device == t.device
    s = nx.from_dlpack(nx.asarray(np.array(2.5)))
    assert s.shape == () and s.item() == 2.5
    assert_same(nx.from_dlpack(a.T), a.T)     # strided: copied into a contiguous tensor
    with pytest.raises(ValueError, match="copy=False"):
        nx.from_dlpack(a.T, copy=False)
    with pytest.raises(ValueError, match="device"):
        nx.from_dlpack(a, device="cuda")
    with pytest.raises(TypeError, match="copy"):
        nx.from_dlpack(a, copy=1)
    with pytest.raises((AttributeError, TypeError)):
        nx.from_dlpack([1, 2, 3])


@pytest.mark.peers
def test_from_dlpack_torch_shares_memory():
    torch = pytest.importorskip("torch")
    src = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = nx.from_dlpack(src)
    src[0, 0] = 42.0
    assert t.numpy()[0, 0] == 42.0 and t.dtype == np.float32
    np.testing.assert_array_equal(nx.from_dlpack(src.T).numpy(), src.T.numpy())
    with pytest.raises(ValueError, match="copy=False"):
        nx.from_dlpack(src.T, copy=False)


def test_random_shapes_take_0d_tensors():
    key = nx.random.key(0)
    assert nx.random.normal(key, nx.asarray(3)).shape == (3,)
    assert nx.random.uniform(key, (nx.asarray(2), np.int64(2))).shape == (2, 2)
    np.testing.assert_array_equal(nx.random.normal(key, nx.asarray(3)).numpy(),
                                  nx.random.normal(key, (3,)).numpy())
    with pytest.raises(TypeError, match="shape"):
        nx.random.normal(key, nx.asarray(2.0))


def test_huge_shapes_are_value_errors():
    # every byte count is checked before allocating: a ValueError naming the argument, never
    # a C overflow; empty shapes stay readable (NumPy's rule: nonzero axes must be addressable)
    for make in (lambda: nx.zeros((2**40, 2**40)), lambda: nx.zeros((0, 2**64)),
                 lambda: nx.empty((2**62,), nx.int64), lambda: nx.full((2**62,), 1.0),
                 lambda: nx.ones((0, 2**62))):
        with pytest.raises(ValueError, match="shape"):
            make()
    with pytest.raises(ValueError, match="n, m"):
        nx.eye(2**40)
    with pytest.raises(ValueError, match="N, M"):
        nx.tri(2**40)
    with pytest.raises(ValueError, match="dimensions"):
        nx.indices((2**40, 2**40))
    with pytest.raises(ValueError, match="num"):
        nx.linspace(0, 1, 2**62)
    for args in [(2**62,), (0, 1e30, 1e-30)]:
        with pytest.raises(ValueError, match="start, stop, step"):
            nx.arange(*args)
    t = nx.zeros((0, 2**40))
    assert t.numpy().shape == (0, 2**40) and float(nx.sum(t)) == 0.0
