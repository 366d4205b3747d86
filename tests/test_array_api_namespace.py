"""nx_rune as an Array API 2024.12 namespace, the array object's
attributes and methods, and the data type functions.

Expected values come from NumPy (the peer for dtypes, promotion, limits and reductions), from
the standard's text (written out below), or from float64 central finite differences.
"""
import math
import operator
import pickle

import numpy as np
import pytest

import nx_rune as nx
from autodiff_specs import f64_tensor, fd_jacobians
from promotion_ref import result_type as promoted

ALL_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128"]
NX_DTYPES = [np.dtype(n) for n in ALL_NAMES] + [np.dtype("float16")]
# the standard's kinds, written out by name
KIND_NAMES = {
    "bool": {"bool"},
    "signed integer": {"int8", "int16", "int32", "int64"},
    "unsigned integer": {"uint8", "uint16", "uint32", "uint64"},
    "integral": {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"},
    "real floating": {"float32", "float64"},
    "complex floating": {"complex64", "complex128"},
    "numeric": {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float32", "float64", "complex64", "complex128"},
}


def check_jacobians(fn, *args, eps=1e-6):
    """Reverse and forward mode Jacobians of ``fn`` against float64 central differences."""
    out, jacs = fd_jacobians(fn, args, eps)
    for i, want in enumerate(jacs):
        tensors = [f64_tensor(a) for a in args]
        for mode in (nx.jacrev, nx.jacfwd):
            got = np.asarray(mode(fn, argnums=i)(*tensors), dtype=np.float64)
            np.testing.assert_allclose(got.reshape(out.size, -1), want, rtol=1e-6, atol=1e-8)


# -- the namespace -----------------------------------------------------------------------------

def test_version_and_namespace_of_arrays():
    assert nx.__array_api_version__ == "2024.12"
    x = nx.ones(3)
    assert x.__array_namespace__() is nx
    for v in ("2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=v) is nx
    for bad in ("2025.12", "2024", "latest", 2024.12):
        with pytest.raises(ValueError, match="api_version"):
            x.__array_namespace__(api_version=bad)


def test_namespace_of_a_tracer():
    seen = []

    def f(x):
        seen.append(x.__array_namespace__())
        return nx.sum(x * x)

    nx.grad(f)(f64_tensor([1.0, 2.0]))
    assert seen == [nx]


def test_constants():
    assert nx.e == math.e and nx.pi == math.pi
    assert isinstance(nx.e, float) and isinstance(nx.pi, float)
    assert nx.inf == float("inf") and math.isnan(nx.nan)
    assert nx.newaxis is None
    x = nx.arange(3)
    assert x[nx.newaxis].shape == (1, 3) and x[:, nx.newaxis].shape == (3, 1)
    assert nx.asarray(nx.pi).dtype == np.float32
    assert bool(nx.isinf(nx.asarray(nx.inf))) and bool(nx.isnan(nx.asarray(nx.nan)))


def test_bool_dtype_name():
    assert nx.bool == np.dtype(np.bool_) and nx.bool is nx.bool_
    assert nx.zeros(2, dtype=nx.bool).dtype == np.bool_
    assert nx.asarray([True]).dtype == nx.bool
    assert bool(True) is True  # the builtin is untouched outside the namespace


# -- inspection --------------------------------------------------------------------------------

def test_info_capabilities_and_devices():
    info = nx.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True,
                                   "max dimensions": None}
    devices = info.devices()
    assert isinstance(devices, list) and len(devices) == 1
    assert info.default_device() in devices
    assert info.default_device() == nx.ones(2).device


def test_info_default_dtypes():
    info = nx.__array_namespace_info__()
    want = {"real floating": np.float32, "complex floating": np.complex64,
            "integral": np.int32, "indexing": np.int32}
    for device in (None, "cpu", info.default_device()):
        got = info.default_dtypes(device=device)
        assert got == {k: np.dtype(v) for k, v in want.items()}
    # the defaults are what the library really uses
    assert nx.asarray(1.0).dtype == want["real floating"]
    assert nx.asarray(1j).dtype == want["complex floating"]
    assert nx.asarray(1).dtype == want["integral"]
    assert nx.argmax(nx.ones(3)).dtype == want["indexing"]
    assert nx.nonzero(nx.ones(3))[0].dtype == want["indexing"]
    with pytest.raises(ValueError, match="device"):
        info.default_dtypes(device="cuda")


def test_info_dtypes():
    info = nx.__array_namespace_info__()
    every = info.dtypes()
    assert list(every) == ALL_NAMES
    assert all(every[n] == np.dtype(n) for n in ALL_NAMES)
    assert "float16" not in every  # supported by nx_rune, but not an Array API dtype
    for kind, names in KIND_NAMES.items():
        assert set(info.dtypes(kind=kind)) == names
        assert set(info.dtypes(kind=kind, device="cpu")) == names
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64",
                                                                   "complex128"}
    assert set(info.dtypes(kind=("signed integer", "integral"))) == KIND_NAMES["integral"]
    for dt in every.values():   # each one makes arrays
        assert nx.empty(1, dtype=dt, device=info.default_device()).dtype == dt
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind=("bool", 3))
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="gpu")


# -- devices -----------------------------------------------------------------------------------

def test_device_and_to_device():
    x = nx.arange(4)
    cpu = nx.__array_namespace_info__().default_device()
    assert x.device == cpu and str(x.device) == "cpu" and "cpu" in repr(x.device)
    assert pickle.loads(pickle.dumps(x.device)) == cpu
    assert x.to_device(cpu) is x and x.to_device("cpu") is x
    with pytest.raises(ValueError, match="device"):
        x.to_device("cuda:0")
    with pytest.raises(ValueError, match="device"):
        x.to_device(object())
    with pytest.raises(ValueError, match="stream"):
        x.to_device(cpu, stream=1)


def test_device_of_a_tracer():
    def f(x):
        assert x.device == nx.ones(1).device
        return nx.sum(x.to_device("cpu") ** 2)

    g = nx.grad(f)(f64_tensor([1.0, -3.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, -6.0])


# -- mT ----------------------------------------------------------------------------------------

def test_mT():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(nx.asarray(a).mT.numpy(), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(nx.asarray(a[0]).mT.numpy(), a[0].T)
    for bad in (np.ones(3), np.array(1.0)):
        with pytest.raises(ValueError, match="mT"):
            nx.asarray(bad).mT
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 4, 3))
    check_jacobians(lambda x: x.mT * nx.asarray(w), rng.standard_normal((2, 3, 4)))


# -- format, scalar conversions ----------------------------------------------------------------

def test_format_of_0d_tensors():
    assert format(nx.asarray(3.14159), ".3f") == "3.142"
    assert f"{nx.asarray(2.5, dtype=nx.float64):8.2f}" == "    2.50"
    assert format(nx.asarray(7), "04d") == "0007"
    assert format(nx.asarray(1e-5), ".2e") == "1.00e-05"
    assert format(nx.asarray([1.0, 2.0]), "") == str(nx.asarray([1.0, 2.0]))
    assert f"{nx.asarray(1.5)}" == str(np.float32(1.5))
    for bad in (nx.asarray([1.0]), nx.ones((2, 2))):
        with pytest.raises(TypeError, match="format"):
            format(bad, ".3f")


def test_complex_conversion_special_cases():
    z = complex(nx.asarray(float("nan")))
    assert math.isnan(z.real) and math.isnan(z.imag)   # the standard: NaN + NaN j
    assert complex(nx.asarray(float("inf"))) == complex(float("inf"), 0.0)
    assert complex(nx.asarray(-float("inf"))) == complex(-float("inf"), 0.0)
    assert complex(nx.asarray(True)) == 1 + 0j and complex(nx.asarray(False)) == 0j
    assert complex(nx.asarray(2.5)) == 2.5 + 0j
    assert complex(nx.asarray(np.complex64(1 - 2j))) == 1 - 2j
    assert complex(nx.asarray(3)) == 3 + 0j


def test_index_only_for_0d_integer_tensors():
    assert operator.index(nx.asarray(2)) == 2
    assert operator.index(nx.asarray(np.uint8(5))) == 5
    assert [10, 20, 30][nx.asarray(1)] == 20
    assert list(range(10))[nx.asarray(1):nx.asarray(7):nx.asarray(3)] == [1, 4]
    for bad in (nx.asarray(2.0), nx.asarray([1]), nx.asarray(True), nx.asarray([[3]])):
        with pytest.raises(TypeError, match="0-d integer"):
            operator.index(bad)


# -- DLPack export -----------------------------------------------------------------------------

def test_dlpack_export_shares_memory_and_keeps_0d_shape():
    a = np.arange(6.0).reshape(2, 3)
    t = nx.asarray(a)
    b = np.from_dlpack(t)
    assert np.shares_memory(a, b) and b.shape == (2, 3)
    np.testing.assert_array_equal(b, a)
    s = np.from_dlpack(nx.asarray(np.array(4.5)))
    assert s.shape == () and s == 4.5
    v = nx.asarray(a).T   # a strided view exports its strides
    np.testing.assert_array_equal(np.from_dlpack(v), a.T)
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_keywords():
    t = nx.asarray(np.arange(3.0))
    for kw in ({}, {"max_version": (1, 0)}, {"dl_device": (1, 0)}, {"copy": None},
               {"copy": True}, {"copy": False}, {"max_version": (0, 8)}):
        t.__dlpack__(**kw)
    with pytest.raises(ValueError, match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))


def test_dlpack_of_a_read_only_tensor():
    base = np.arange(4.0)
    base.flags.writeable = False
    t = nx.asarray(base)
    # DLPack < 1.0 has no read-only flag: a copy is exported, unless copy=False forbids it
    np.testing.assert_array_equal(np.from_dlpack(t), base)
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)
    t.__dlpack__(max_version=(1, 0), copy=False)


@pytest.mark.peers
def test_dlpack_to_torch():
    torch = pytest.importorskip("torch")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = torch.from_dlpack(nx.asarray(a))
    np.testing.assert_array_equal(got.numpy(), a)


# -- NumPy's functions on tensors --------------------------------------------------------------

def _is_numpy_value(v):
    return isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, nx.Tensor)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "std", "var", "any",
                                  "all", "argmax", "argmin", "cumsum", "cumprod", "ptp",
                                  "median"])
def test_numpy_functions_on_concrete_tensors(name):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    t = nx.asarray(a)
    fn = getattr(np, name)
    for kwargs in ({}, {"axis": 0}, {"axis": 1}):
        got = fn(t, **kwargs)
        assert _is_numpy_value(got)
        np.testing.assert_array_equal(got, fn(a, **kwargs))
    if name in ("sum", "mean", "max", "min", "prod", "std", "var", "any", "all"):
        got = fn(t, axis=1, keepdims=True)
        np.testing.assert_array_equal(got, fn(a, axis=1, keepdims=True))


def test_numpy_keywords_on_concrete_tensors():
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    t = nx.asarray(a)
    assert np.sum(t, dtype=np.float64).dtype == np.float64
    np.testing.assert_allclose(np.var(t, axis=0, ddof=1), np.var(a, axis=0, ddof=1))
    np.testing.assert_allclose(np.std(t, correction=1), np.std(a, ddof=1))
    out = np.empty(4)
    np.sum(t, axis=0, out=out)
    np.testing.assert_array_equal(out, a.sum(0))
    with pytest.raises(TypeError, match="out"):
        np.sum(t, axis=0, out=nx.zeros(4))
    np.testing.assert_array_equal(np.concatenate([t, a]), np.concatenate([a, a]))
    assert np.shape(t) == (3, 4) and np.ndim(t) == 2 and np.size(t) == 12


def test_numpy_reductions_of_tracers_stay_differentiable():
    # np.sum(u) of a traced u calls u.sum(...): the tracer's own method, not a conversion
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4))
    check_jacobians(lambda u: np.sum(u * u, axis=0), x)
    check_jacobians(lambda u: np.mean(u, axis=1, keepdims=True), x)
    check_jacobians(lambda u: np.var(u, axis=0, ddof=1), x)
    check_jacobians(lambda u: np.std(u), x)
    check_jacobians(lambda u: np.max(u, axis=1) + np.min(u, axis=0).sum(), x)
    check_jacobians(lambda u: np.prod(u, axis=0), x)


def test_numpy_function_mixing_a_tracer_and_a_tensor_raises():
    c = nx.asarray(np.ones(2))

    def f(u):
        return nx.asarray(np.concatenate([u, c])).sum()

    with pytest.raises(TypeError, match="traced value"):
        nx.grad(f)(f64_tensor([1.0, 2.0]))


# -- methods -----------------------------------------------------------------------------------

def test_reduction_methods_take_numpy_keywords():
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    i = rng.integers(-5, 5, (3, 4)).astype(np.int8)
    t, k = nx.asarray(a), nx.asarray(i)
    got = k.sum(axis=0, dtype=nx.float64)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), i.sum(0, dtype=np.float64))
    got = k.prod(axis=1, dtype=nx.int64, keepdims=True)
    assert got.dtype == np.int64 and got.shape == (3, 1)
    np.testing.assert_array_equal(got.numpy(), i.prod(1, dtype=np.int64, keepdims=True))
    got = k.mean(dtype=nx.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), i.mean(dtype=np.float64))
    for name in ("var", "std"):
        np.testing.assert_allclose(getattr(t, name)(axis=0, ddof=1).numpy(),
                                   getattr(a, name)(axis=0, ddof=1), rtol=1e-5)
        np.testing.assert_allclose(getattr(t, name)(correction=1).numpy(),
                                   getattr(a, name)(ddof=1), rtol=1e-5)
        with pytest.raises(ValueError, match="ddof or correction"):
            getattr(t, name)(ddof=1, correction=1)
    np.testing.assert_array_equal(t.max(1, True).numpy(), a.max(1, keepdims=True))
    np.testing.assert_array_equal(t.argmin(axis=0, keepdims=True).numpy(),
                                  a.argmin(0, keepdims=True))
    np.testing.assert_array_equal(t.any(axis=1).numpy(), a.any(1))
    np.testing.assert_array_equal((t > 0).all(axis=0, keepdims=True).numpy(),
                                  (a > 0).all(0, keepdims=True))


def test_reduction_methods_reject_out_and_misplaced_dtypes():
    t = nx.ones((2, 3))
    for name in ("sum", "prod", "mean", "max", "min", "var", "std", "all", "any", "argmax",
                 "argmin", "cumsum", "cumprod", "clip"):
        with pytest.raises(TypeError, match="out"):
            getattr(t, name)(out=np.empty(3))
    with pytest.raises(TypeError, match="keepdims"):
        t.sum(0, np.float64)        # NumPy's positional dtype: a keyword here
    with pytest.raises(TypeError, match="dtype"):
        t.sum(dtype=True)
    with pytest.raises(TypeError, match="dtype"):
        t.mean(dtype="not a dtype")


def test_methods_mirroring_functions():
    rng = np.random.default_rng(4)
    a = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    t = nx.asarray(a)
    np.testing.assert_array_equal(t.cumsum(axis=1).numpy(), np.cumsum(a, axis=1))
    np.testing.assert_allclose(t.cumprod(axis=0).numpy(), np.cumprod(a, axis=0), rtol=1e-6)
    np.testing.assert_allclose(t.cumsum(axis=0, dtype=nx.float64).numpy(),
                               np.cumsum(a, axis=0, dtype=np.float64))
    np.testing.assert_array_equal(t.clip(-1.0, 0.5).numpy(), np.clip(a, -1.0, 0.5))
    np.testing.assert_array_equal(t.clip(max=0.0).numpy(), np.minimum(a, 0.0))
    np.testing.assert_array_equal(t.swapaxes(0, 1).numpy(), a.swapaxes(0, 1))
    np.testing.assert_array_equal(t.ravel().numpy(), a.ravel())
    np.testing.assert_array_equal(nx.ones((1, 3, 1)).squeeze().numpy(), np.ones(3))
    np.testing.assert_array_equal(nx.ones((1, 3, 1)).squeeze(axis=0).shape, (3, 1))
    np.testing.assert_allclose(t.dot(t.T).numpy(), a @ a.T, rtol=1e-5)
    nz = (t > 0).nonzero()
    for got, want in zip(nz, np.nonzero(a > 0)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(t.argmax(axis=1).numpy(), a.argmax(1))


# -- data type functions -----------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo(dt):
    want = np.finfo(dt)
    for arg in (np.dtype(dt), getattr(nx, dt), nx.zeros(2, dtype=dt), dt):
        f = nx.finfo(arg)
        for field in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(f, field)) is float
            assert getattr(f, field) == float(getattr(want, field))
        assert type(f.bits) is int and f.bits == want.bits
        assert f.dtype == want.dtype and isinstance(f.dtype, np.dtype)
    assert nx.finfo(np.complex64).dtype == np.float32


def test_finfo_bad_input():
    for bad in ("int32", nx.int8, nx.bool, nx.zeros(2, dtype=nx.int32)):
        with pytest.raises(ValueError, match="type"):
            nx.finfo(bad)
    for bad in (None, 1.0, "not a dtype", float):
        with pytest.raises(TypeError, match="type"):
            nx.finfo(bad)


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64"])
def test_iinfo(dt):
    want = np.iinfo(dt)
    for arg in (np.dtype(dt), nx.zeros(1, dtype=dt), dt):
        i = nx.iinfo(arg)
        assert (i.bits, i.min, i.max) == (want.bits, want.min, want.max)
        assert type(i.min) is int and type(i.max) is int and type(i.bits) is int
        assert i.dtype == np.dtype(dt)


def test_iinfo_bad_input():
    for bad in (nx.bool, nx.float32, nx.complex64):
        with pytest.raises(ValueError, match="type"):
            nx.iinfo(bad)
    with pytest.raises(TypeError, match="type"):
        nx.iinfo(int)


def test_isdtype_every_dtype_and_kind():
    for dt in NX_DTYPES:
        for kind, names in KIND_NAMES.items():
            want = dt.name in names or (dt.name == "float16" and kind in ("real floating",
                                                                          "numeric"))
            assert nx.isdtype(dt, kind) is want, (dt, kind)
        assert nx.isdtype(dt, dt) is True
        assert nx.isdtype(dt, np.dtype("int8")) is (dt.name == "int8")
    assert nx.isdtype(nx.int8, ("bool", "real floating")) is False
    assert nx.isdtype(nx.int8, ("bool", nx.int8)) is True
    assert nx.isdtype(nx.float64, ("complex floating", "real floating")) is True
    assert nx.isdtype(nx.uint16, ()) is False


def test_isdtype_bad_input():
    with pytest.raises(ValueError, match="kind"):
        nx.isdtype(nx.int8, "integer")
    with pytest.raises(ValueError, match="kind"):
        nx.isdtype(nx.int8, "float32")   # a dtype name, not a kind
    with pytest.raises(TypeError, match="kind"):
        nx.isdtype(nx.int8, (("bool",),))
    for bad in (nx.ones(2), None, 1.5, float):
        with pytest.raises(TypeError, match="dtype"):
            nx.isdtype(bad, "numeric")


def test_result_type_between_dtypes_is_numpys_within_a_kind_jaxs_across():
    for a in NX_DTYPES:
        for b in NX_DTYPES:
            assert nx.result_type(a, b) == promoted(a, b), (a, b)
    # jax 0.10.2's jnp.promote_types across kinds (NumPy: float32, float64, float64,
    # complex128, float64)
    jax_pairs = {("int16", "float16"): "float16", ("int32", "float32"): "float32",
                 ("int64", "float32"): "float32", ("uint64", "complex64"): "complex64",
                 ("bool", "float16"): "float16", ("uint32", "float16"): "float16"}
    for (a, b), want in jax_pairs.items():
        assert nx.result_type(a, b) == np.dtype(want), (a, b)
        assert nx.result_type(b, a) == np.dtype(want), (b, a)
        assert (nx.ones(2, dtype=a) * nx.ones(2, dtype=b)).dtype == np.dtype(want), (a, b)
    # NumPy's throughout where asked for (and in nx_rune.autograd.numpy, NumPy's namespace)
    nx.config.update("dtype_promotion", "numpy")
    try:
        assert nx.config.read("dtype_promotion") == "numpy"
        for a in NX_DTYPES:
            for b in NX_DTYPES:
                assert nx.result_type(a, b) == np.result_type(a, b), (a, b)
    finally:
        nx.config.update("dtype_promotion", "jax")
    assert nx.config.read("dtype_promotion") == "jax"
    import nx_rune.autograd.numpy as anp
    i32, f32 = np.ones(2, np.int32), np.ones(2, np.float32)
    assert anp.add(i32, f32).dtype == np.float64 and anp.dot(i32, f32).dtype == np.float64
    assert nx.add(i32, f32).dtype == np.float32
    with pytest.raises(ValueError, match="dtype_promotion"):
        nx.config.update("dtype_promotion", "standard")
    assert nx.promote_types(nx.int64, nx.float16) == np.float16          # jnp.promote_types
    assert nx.promote_types("uint8", "int8") == np.int16
    for a, b, name in (("foo", nx.float32, "a"), (nx.float32, None, "b")):
        with pytest.raises(TypeError, match=f"^{name}: expected a dtype"):
            nx.promote_types(a, b)
    # the standard's table, mixed signedness included
    table = {("uint8", "int8"): "int16", ("uint16", "int8"): "int32",
             ("uint32", "int16"): "int64", ("uint8", "uint32"): "uint32",
             ("float32", "float64"): "float64", ("complex64", "float64"): "complex128",
             ("bool", "bool"): "bool", ("int8", "int64"): "int64"}
    for (a, b), want in table.items():
        assert nx.result_type(a, b) == np.dtype(want)
        assert nx.result_type(nx.empty(1, dtype=b), a) == np.dtype(want)
    assert nx.result_type(nx.int8, nx.int16, nx.uint8, nx.empty(2, dtype=nx.int32)) == np.int32
    assert nx.result_type(nx.float32) == np.float32


def test_result_type_python_scalars_are_weak():
    cases = [((nx.int8, 1), "int8"), ((nx.uint8, True), "uint8"), ((nx.bool, True), "bool"),
             ((nx.bool, 1), "int32"), ((nx.int16, 1.0), "float32"),
             ((nx.float64, 1), "float64"), ((nx.float16, 2.5), "float16"),
             ((nx.float32, 1j), "complex64"), ((nx.float64, 1j), "complex128"),
             ((nx.complex64, 1.0), "complex64"), ((nx.int8, nx.int16, 1, 1.0), "float32"),
             ((nx.empty(2, dtype=nx.uint16), 3), "uint16")]
    for args, want in cases:
        assert nx.result_type(*args) == np.dtype(want), args
        assert nx.result_type(*args[::-1]) == np.dtype(want), args
    # the same promotion the operators apply
    assert (nx.ones(2, dtype=nx.int16) * 1.0).dtype == nx.result_type(nx.int16, 1.0)
    assert (nx.ones(2, dtype=nx.int8) + 1).dtype == nx.result_type(nx.int8, 1)
    # NumPy scalars carry their dtype (as in NumPy and JAX), although float64 subclasses float
    assert nx.result_type(np.float64(1.0), nx.float32) == np.float64
    assert nx.result_type(np.int8(1), 1.0) == np.float32


def test_result_type_bad_input():
    with pytest.raises(TypeError, match="at least one"):
        nx.result_type()
    with pytest.raises(TypeError, match="at least one"):
        nx.result_type(1, 2.0)
    with pytest.raises(TypeError, match=r"arrays_and_dtypes\[1\]"):
        nx.result_type(nx.int8, "not a dtype")
    with pytest.raises(TypeError, match=r"arrays_and_dtypes\[0\]"):
        nx.result_type(None, nx.int8)


def test_can_cast():
    for a in NX_DTYPES:
        for b in NX_DTYPES:
            assert nx.can_cast(a, b) is bool(np.can_cast(a, b, casting="safe")), (a, b)
    assert nx.can_cast(nx.uint8, nx.int16) and not nx.can_cast(nx.int16, nx.uint8)
    assert nx.can_cast(nx.float32, nx.complex64) and not nx.can_cast(nx.float64, nx.float32)
    assert nx.can_cast(nx.ones(2, dtype=nx.int8), nx.int32)
    with pytest.raises(TypeError, match="to"):
        nx.can_cast(nx.int8, nx.ones(2))
    with pytest.raises(TypeError, match="from_"):
        nx.can_cast("nope", nx.int8)


def test_astype_copy_semantics():
    a = np.arange(4.0, dtype=np.float32)
    x = nx.asarray(a)
    y = nx.astype(x, nx.float32)
    assert y is not x and not nx.shares_memory(x, y)
    np.testing.assert_array_equal(y.numpy(), a)
    assert nx.astype(x, nx.float32, copy=False) is x
    assert x.astype(nx.float32, copy=False) is x
    assert not nx.shares_memory(x.astype(nx.float32), x)
    z = nx.astype(x, nx.int16, copy=False)   # another dtype: always a new tensor
    assert z.dtype == np.int16
    np.testing.assert_array_equal(z.numpy(), a.astype(np.int16))
    np.testing.assert_array_equal(nx.astype(nx.asarray([1.5, -2.7, 0.0]), nx.bool).numpy(),
                                  [True, True, False])
    with pytest.raises(ValueError, match="device"):
        nx.astype(x, nx.float64, device="cuda")
    with pytest.raises(TypeError, match="copy"):
        nx.astype(x, nx.float64, copy="yes")
    with pytest.raises(TypeError, match="dtype"):
        nx.astype(x, "nonsense")


def test_astype_is_differentiable():
    x = np.array([0.5, -1.5, 2.0])
    check_jacobians(lambda u: nx.astype(u, nx.float64) * u, x)          # the copy path
    check_jacobians(lambda u: u.astype(nx.float64, copy=False) * u, x)
    # a cast's derivative is the identity, cast back: d/du sum(2 * float32(u)) = 2
    g = nx.grad(lambda u: nx.sum(nx.astype(u, nx.float32) * 2.0))(f64_tensor(x))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0, 2.0])


def test_jit_traces_again_when_the_promotion_mode_changes():
    f = nx.jit(lambda a, b: a * b)
    i32, f32 = nx.ones(2, dtype=nx.int32), nx.ones(2, dtype=nx.float32)
    assert f(i32, f32).dtype == np.float32
    nx.config.update("dtype_promotion", "numpy")
    try:
        assert f(i32, f32).dtype == np.float64
    finally:
        nx.config.update("dtype_promotion", "jax")
    assert f(i32, f32).dtype == np.float32
