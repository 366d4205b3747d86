"""The eager fast path of the Tensor type (nx_rune/tensor.pyx): operators on concrete tensors
run the primitive's NumPy implementation directly, and views wrap NumPy's views.  Each must give
exactly what the front end gives (values, dtype, shape, memory shared), be silent on IEEE
specials as the backend is, and step aside under a transformation."""
import warnings

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.frontend import indexing as fe_indexing
from nx_rune.tensor import Tensor

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float16, np.float32,
          np.float64, np.complex64, np.complex128]

BINARY = {
    "add": (lambda a, b: a + b, nx.add),
    "sub": (lambda a, b: a - b, nx.subtract),
    "mul": (lambda a, b: a * b, nx.multiply),
    "truediv": (lambda a, b: a / b, nx.divide),
    "lt": (lambda a, b: a < b, nx.less),
    "le": (lambda a, b: a <= b, nx.less_equal),
    "gt": (lambda a, b: a > b, nx.greater),
    "ge": (lambda a, b: a >= b, nx.greater_equal),
    "eq": (lambda a, b: a == b, nx.equal),
    "ne": (lambda a, b: a != b, nx.not_equal),
}


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(1, 20, shape).astype(dt)
    x = rng.uniform(-3, 3, shape)
    if dt.kind == "c":
        x = x + 1j * rng.uniform(-3, 3, shape)
    x = x.astype(dt)
    if x.size >= 4:
        x.reshape(-1)[:4] = [0, np.inf, -np.inf, np.nan]
    return x


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def slow(fn, *args):
    """fn under a transformation that changes nothing (no_grad): the front end's path."""
    with nx.no_grad():
        return fn(*args)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_binary_operators_equal_the_front_end(name, dtype):
    op, fn = BINARY[name]
    a, b = values((3, 4), dtype, 1), values((3, 4), dtype, 2)
    x, y = nx.asarray(a), nx.asarray(b)
    try:
        want = fn(x, y)
    except TypeError:
        with pytest.raises(TypeError):
            op(x, y)
        return
    with warnings.catch_warnings():
        # inf - inf, 0/0, overflow: silent, as JAX (appended: the backend's own filter stays)
        warnings.filterwarnings("error", append=True)
        got = op(x, y)
    same(got, want)
    same(slow(op, x, y), want)


@pytest.mark.parametrize("scalar", [2.5, 3, -0.0, 1e300])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_python_scalars_are_weak_on_the_fast_path(scalar, dtype):
    x = nx.asarray(values((5,), dtype))
    for op, fn in [(lambda a, b: a + b, nx.add), (lambda a, b: a * b, nx.multiply),
                   (lambda a, b: b - a, lambda a, b: nx.subtract(b, a)),
                   (lambda a, b: b / a, lambda a, b: nx.divide(b, a))]:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", append=True)
            got = op(x, scalar)
        same(got, fn(x, scalar))


def test_negative():
    for dt in DTYPES[1:]:
        x = nx.asarray(values((2, 3), dt))
        same(-x, nx.negative(x))
    with pytest.raises(TypeError):
        -nx.asarray(np.array([True]))


def test_zero_dim_results_are_tensors():
    x, y = nx.asarray(np.float32(2.0)), nx.asarray(np.float32(3.0))
    r = x * y
    assert type(r) is Tensor and r.shape == () and float(r) == 6.0


def test_mixed_shapes_and_dtypes_take_the_front_end():
    x = nx.asarray(np.ones((2, 3), np.float32))
    same(x + nx.asarray(np.ones(3, np.float64)), np.full((2, 3), 2.0))
    same(x + nx.ones((1, 3)), np.full((2, 3), 2.0, np.float32))
    same(nx.asarray(np.array([1, 2], np.int32)) / 2, np.array([0.5, 1.0], np.float32))


def test_fast_path_steps_aside_under_transformations():
    x = nx.asarray(np.array([1.0, 2.0]))
    g = nx.grad(lambda w: nx.sum(w * w + w / 3.0 - (-w) * 2.0 + w.T * 1.0 + w.reshape(2)[0:2]))(x)
    np.testing.assert_allclose(g.numpy(), 2 * np.array([1.0, 2.0]) + 1 / 3 + 2 + 1 + 1,
                               rtol=1e-15)


# -- views --------------------------------------------------------------------------------------

INDICES = [1, -1, slice(1, 3), slice(None, None, -1), slice(None, None, 2**63 - 1),
           (1, slice(None)), (Ellipsis, 0), (None, 1), (slice(0, 0),), (1, 2),
           (slice(None, None, -2), Ellipsis, None), ()]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_basic_indexing_views(index, monkeypatch):
    a = np.arange(24.0).reshape(4, 6)
    x = nx.asarray(a)
    got = x[index]
    assert nx.shares_memory(got, x) or got.size == 0
    monkeypatch.setattr(fe_indexing, "_VIEW_FAST_PATH", False)
    same(got, a[index])
    same(slow(lambda t: t[index], x), a[index])
    if got.size:   # a write into the source shows in the view (both see one memory)
        x[...] = -1.0
        same(got, np.full(np.shape(a[index]), -1.0))


def test_out_of_range_index_gives_the_front_ends_error():
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 6"):
        nx.asarray(np.zeros((4, 6)))[0, 6]


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (-1,), (2, -1, 3), 24])
def test_reshape_and_transpose(shape):
    a = np.arange(24.0).reshape(4, 6)
    t = nx.asarray(a)
    for src, x in ((a, t), (a.T, t.T), (a[::-1], t[::-1])):
        same(x.reshape(shape), src.reshape(shape))
        same(x.T, src.T)
        same(x.reshape(shape).T, src.reshape(shape).T)
    with pytest.raises(ValueError, match="shape: cannot reshape"):
        nx.asarray(a).reshape(5, 5)


def test_views_of_views_feed_every_primitive():
    a = np.arange(24.0).reshape(4, 6)
    v = nx.asarray(a).T[::-2, 1:3]            # a NumPy view wrapped: any strides
    ref = a.T[::-2, 1:3]
    same(nx.flip(v, 0), ref[::-1])
    same(nx.pad(v, 1), np.pad(ref, 1))
    same(nx.sum(v, 0), ref.sum(0))
    same(nx.take(v, [0, 1], axis=1), ref[:, [0, 1]])
    same(nx.contiguous(v), ref)
    assert nx.is_contiguous(nx.contiguous(v))
    assert nx.shares_memory(v, nx.asarray(a)) and v.strides == (-2, 6)
    same(nx.as_strided(nx.contiguous(v), (2,), (1,)), np.ascontiguousarray(ref).reshape(-1)[:2])
    v[0, 0] = 99.0                               # in place through the derived buffer
    assert a.T[-1, 1] == 99.0
