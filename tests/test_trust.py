"""Regression tests for the paths users take that used to give silent wrong answers (issue 13):
values leaving a transformation through NumPy, containers of traced values, derivative
conventions, views and memory, huge sizes, and the errors that must name the problem."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import nx_rune as nx
from nx_rune.errors import TracerArrayConversionError


def f64(x):
    return nx.asarray(np.asarray(x, dtype=np.float64))


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of the scalar function f at the float64 vector x."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (float(f(f64(x + e))) - float(f(f64(x - e)))) / (2 * eps)
    return g


# -- NumPy applied to a traced value -----------------------------------------------------------

CONVERSIONS = {
    "asarray": lambda u: np.asarray(u),
    "array": lambda u: np.array(u),
    "ufunc": lambda u: np.sin(u),
    "numpy_method": lambda u: u.numpy(),
    "dlpack": lambda u: np.from_dlpack(u),
    "helper": lambda u: np.linalg.norm(u),
}


@pytest.mark.parametrize("how", sorted(CONVERSIONS))
@pytest.mark.parametrize("transform", ["grad", "jvp", "hessian"])
def test_numpy_on_a_tracer_raises(how, transform):
    convert = CONVERSIONS[how]

    def f(x):
        convert(x)
        return nx.sum(x * x)
    x = f64([1.0, 2.0])
    with pytest.raises(TracerArrayConversionError) as info:
        if transform == "grad":
            nx.grad(f)(x)
        elif transform == "jvp":
            nx.jvp(f, (x,), (f64([1.0, 0.0]),))
        else:
            nx.hessian(f)(x)
    msg = str(info.value)
    assert isinstance(info.value, TypeError)
    assert "shape (2,)" in msg and "nx.custom_vjp" in msg and "nx.stop_gradient" in msg
    assert ("grad" in msg) if transform == "grad" else ("jvp" in msg or "jacfwd" in msg
                                                       or "grad" in msg)


def test_python_scalars_of_traced_values_stay_allowed():
    def f(x):
        s = 0.0
        # float(x[0]) and x[0].item() would lose the derivative: they raise (test_trust_values)
        if x[0] > 0 and bool(x[1] > 0) and int(x[1]) == 2 and (x[0] == 1.0).item():
            s = nx.sum(x * x)
        return s
    np.testing.assert_allclose(nx.grad(f)(f64([1.0, 2.0])).numpy(), [2.0, 4.0])


def test_stop_gradient_then_numpy_works():
    def f(x):
        w = np.asarray(nx.stop_gradient(x)) * 2.0   # a constant: no derivative flows
        return nx.sum(x * nx.asarray(w))
    np.testing.assert_allclose(nx.grad(f)(f64([1.0, 3.0])).numpy(), [2.0, 6.0])


def test_a_finished_tracer_reads_as_numpy():
    leak = []
    nx.grad(lambda x: (leak.append(x * 2.0), nx.sum(x))[1])(f64([1.0]))
    np.testing.assert_allclose(np.asarray(leak[0]), [2.0])


def test_custom_vjp_whose_rule_calls_numpy_is_refused_under_higher_order():
    @nx.custom_vjp
    def cube(x):
        return x * x * x

    def fwd(x):
        return x * x * x, x

    def bwd(x, g):
        return (g * nx.asarray(3.0 * np.asarray(x) ** 2),)  # NumPy on a traced value
    cube.defvjp(fwd, bwd)
    assert float(nx.grad(cube)(f64(2.0))) == 12.0          # first order: x is concrete
    with pytest.raises(TracerArrayConversionError):
        nx.grad(nx.grad(cube))(f64(2.0))                     # second order: x is traced


def test_custom_vjp_with_nx_ops_has_right_second_derivative():
    @nx.custom_vjp
    def cube(x):
        return x * x * x
    cube.defvjp(lambda x: (x * x * x, x), lambda x, g: (g * 3.0 * x * x,))
    assert float(nx.grad(nx.grad(cube))(f64(2.0))) == 12.0


def test_jvp_of_custom_vjp_is_correct():
    @nx.custom_vjp
    def f(x):
        return nx.sin(x) * x

    f.defvjp(lambda x: (nx.sin(x) * x, x), lambda x, g: (g * (nx.cos(x) * x + nx.sin(x)),))
    x = np.array([0.3, -1.2, 2.0])
    _, t = nx.jvp(f, (f64(x),), (f64(np.ones(3)),))
    np.testing.assert_allclose(t.numpy(), np.cos(x) * x + np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(nx.jacfwd(f)(f64(x)).numpy(), np.diag(np.cos(x) * x + np.sin(x)),
                               rtol=1e-12)


# -- containers holding traced values ------------------------------------------------------------

CONTAINERS = {
    "asarray_list": lambda a: nx.sum(nx.asarray([a[0] * 2, a[1]])),
    "array_nested": lambda a: nx.sum(nx.array([[a[0], 1.0], [a[1], a[2] * a[2]]])),
    "binary_with_list": lambda a: nx.sum(a * [a[0], 1, 1]),
    "concatenate_list": lambda a: nx.sum(nx.concatenate([[a[0]], a]) ** 2),
    "full_like": lambda a: nx.sum(nx.full_like(a, a[1]) * a),
    "full": lambda a: nx.sum(nx.full((2, 2), a[0]) * 3.0),
    "pad_traced_fill": lambda a: nx.sum(nx.pad(a, (1, 2), constant_values=a[0] * a[2])),
    "stack_of_list": lambda a: nx.sum(nx.stack([a, [a[2], a[1], a[0]]]) ** 2),
}


@pytest.mark.parametrize("name", sorted(CONTAINERS))
def test_containers_of_tracers_are_differentiable(name):
    f = CONTAINERS[name]
    x = np.array([0.7, -1.3, 2.1])
    np.testing.assert_allclose(nx.grad(f)(f64(x)).numpy(), fd_grad(f, x), rtol=1e-6, atol=1e-7)
    hess = nx.hessian(f)(f64(x)).numpy()
    fd_h = np.stack([fd_grad(lambda y, i=i: nx.grad(f)(y)[i], x) for i in range(3)])
    np.testing.assert_allclose(hess, fd_h, rtol=1e-5, atol=1e-6)


def test_container_dtype_promotes_like_add():
    assert nx.asarray([nx.ones(2), [1, 2]]).dtype == np.float32     # Python ints are weak
    assert nx.asarray([np.ones(2), np.ones(2)]).dtype == np.float64  # arrays keep float64
    assert nx.asarray([nx.ones((), nx.int32), 2.5]).dtype == np.float32
    with pytest.raises(ValueError, match="ragged"):
        nx.asarray([nx.ones(2), [1.0]])


# -- derivative conventions ----------------------------------------------------------------------

def test_mod_derivatives():
    a, b = np.array([5.5, -5.5, 3.2]), np.array([2.0, 2.0, -1.5])
    _, ta = nx.jvp(lambda a: nx.remainder(a, f64(b)), (f64(a),), (f64(np.ones(3)),))
    _, tb = nx.jvp(lambda b: nx.remainder(f64(a), b), (f64(b),), (f64(np.ones(3)),))
    np.testing.assert_array_equal(ta.numpy(), 1.0)
    np.testing.assert_array_equal(tb.numpy(), -np.floor(a / b))


def test_complex_tangent_or_cotangent_for_a_real_primal_raises():
    f = lambda x: x * 2.0  # noqa: E731
    with pytest.raises(TypeError, match="imaginary part would be lost"):
        nx.jvp(f, (nx.ones(2),), (nx.ones(2) * 1j,))
    _, vjp_fn = nx.vjp(f, nx.ones(2))
    with pytest.raises(TypeError, match="imaginary part would be lost"):
        vjp_fn(nx.ones(2) * 1j)


def test_complex_to_real_cast_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        nx.astype(nx.asarray(np.array([1 + 2j])), nx.float32)
    assert any(issubclass(w.category, np.exceptions.ComplexWarning) for w in caught)


# -- views and memory ------------------------------------------------------------------------------

def test_asarray_does_not_keep_the_callers_ndarray_object():
    a = np.arange(6.0)
    t = nx.asarray(a)
    a.shape = (2, 3)
    assert t.shape == (6,)
    a[0, 0] = 7.0                      # still zero-copy: the memory is shared
    assert float(t[0]) == 7.0


def test_ndarray_subclasses():
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    t = nx.asarray(m)
    assert type(t.numpy()) is np.ndarray
    np.testing.assert_allclose((t * t).numpy(), np.asarray(m) ** 2)   # elementwise, not matrix
    assert float(nx.sum(t)) == 10.0
    with pytest.raises(TypeError, match="masked arrays"):
        nx.asarray(np.ma.masked_array([1.0, 2.0], mask=[0, 1]))


@pytest.mark.parametrize("roundtrip", ["pickle", "pickle5", "copy", "deepcopy", "dlpack"])
@pytest.mark.parametrize("value", [np.float32(3.5), np.arange(6.0).reshape(2, 3), np.int8(-2)])
def test_roundtrips_keep_shape_and_values(roundtrip, value):
    t = nx.asarray(np.asarray(value))
    if roundtrip == "pickle":
        out = pickle.loads(pickle.dumps(t))
    elif roundtrip == "pickle5":
        bufs = []
        data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
        out = pickle.loads(data, buffers=bufs)
        assert len(bufs) == 1           # the values travel out of band
    elif roundtrip == "copy":
        out = copy.copy(t)
    elif roundtrip == "deepcopy":
        out = copy.deepcopy(t)
    else:
        out = nx.asarray(np.from_dlpack(t))
    assert out.shape == t.shape and out.dtype == t.dtype
    np.testing.assert_array_equal(np.asarray(out), np.asarray(value))
    if roundtrip in ("copy", "deepcopy"):
        assert not nx.shares_memory(out, t) or t.size == 0


def test_views_and_padded_views_pickle():
    x = nx.asarray(np.arange(12.0).reshape(3, 4))
    for t in (x.T[::-1, 1:3], nx.pad(x, 1, constant_values=-1.0)):
        out = pickle.loads(pickle.dumps(t, protocol=5))
        np.testing.assert_array_equal(out.numpy(), t.numpy())


def test_tracers_refuse_to_pickle():
    def f(x):
        pickle.dumps(x)
        return nx.sum(x)
    with pytest.raises(TypeError, match="pickle"):
        nx.grad(f)(f64([1.0]))


def test_shares_memory_compares_byte_ranges():
    a = nx.arange(10)
    assert nx.shares_memory(a[2:5], a[4:8])
    assert not nx.shares_memory(a[2:5], a[5:8])
    assert nx.shares_memory(a[::-1], a[:1])
    assert not nx.shares_memory(a[0::2], nx.arange(10))
    assert not nx.shares_memory(a[:0], a)                    # no elements
    p = nx.pad(a[3:5], 2)
    assert nx.shares_memory(p, a[4:]) and not nx.shares_memory(p, a[5:])
    assert not nx.shares_memory(p[:2], a)                    # only padding
    b = np.arange(10.0)
    assert nx.shares_memory(nx.asarray(b[2:6]), nx.asarray(b[5:]))


# -- huge sizes and steps --------------------------------------------------------------------------

@pytest.mark.parametrize("step", [2**63 - 1, 2**62, -2**63, 2**64, -2**64, 2**100])
@pytest.mark.parametrize("start", [None, 1, -1])
def test_huge_slice_steps(step, start):
    ref = np.arange(10.0)
    x = nx.asarray(ref)
    np.testing.assert_array_equal(x[start::step].numpy(), ref[start::step])
    g = nx.grad(lambda x: nx.sum(x[start::step] * 2.0))(x)  # the composed (traced) path
    want = np.zeros(10)
    want[start::step] = 2.0
    np.testing.assert_array_equal(g.numpy(), want)


@pytest.mark.parametrize("make", [
    lambda: nx.zeros((2**40, 2**40)), lambda: nx.zeros((0, 2**64)),
    lambda: nx.zeros((2**31, 2**31, 4)), lambda: nx.ones((0, 2**63)),
    lambda: nx.empty((3, 2**62, 4)), lambda: nx.full((2**40, 2**40), 1.0),
    lambda: nx.zeros((0, 4, 2**62)),
], ids=["zeros", "zeros_2_64", "zeros_3d", "ones_2_63", "empty", "full", "zeros_empty_product"])
def test_huge_shapes_raise_value_error_naming_shape(make):
    with pytest.raises(ValueError, match="shape: .*too many elements"):
        make()


def test_huge_pad_names_pad_width():
    with pytest.raises(ValueError, match="pad_width: .*too many elements"):
        nx.pad(nx.ones(2), 2**62)


# -- errors that name the problem ------------------------------------------------------------------

def test_pad_fill_values_must_fit():
    with pytest.raises(ValueError, match="constant_values: 300 is out of range for int8"):
        nx.pad(nx.ones(2, nx.int8), 1, constant_values=300)
    with pytest.raises(ValueError, match="constant_values"):
        nx.pad(nx.ones(2, nx.int32), 1, constant_values=float("nan"))
    with pytest.raises(TypeError, match="constant_values: complex"):
        nx.pad(nx.ones(2), 1, constant_values=1 + 2j)
    with pytest.raises(TypeError, match="constant_values: expected a number, got None"):
        nx.pad(nx.ones(2), 1, constant_values=None)
    np.testing.assert_array_equal(nx.pad(nx.ones(2, nx.int32), 1, constant_values=2.7).numpy(),
                                  np.pad(np.ones(2, np.int32), 1, constant_values=2.7))


def test_grad_argnums_errors():
    f = lambda a, b: nx.sum(a * b)  # noqa: E731
    x = f64([1.0, 2.0])
    with pytest.raises(ValueError, match="names argument 0 twice"):
        nx.grad(f, argnums=(0, 0))(x, x)
    with pytest.raises(ValueError, match="names argument 0 twice"):
        nx.grad(f, argnums=(0, -2))(x, x)
    np.testing.assert_array_equal(nx.grad(f, argnums=np.int64(1))(x, x).numpy(), [1.0, 2.0])
    for bad in (True, 1.5, "0"):
        with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
            nx.grad(f, argnums=bad)(x, x)


def test_bad_shapes_sections_offsets_and_values():
    x = nx.ones(12)
    with pytest.raises(TypeError, match=r"shape: .*\(3.7, 4\)"):
        nx.reshape(x, (3.7, 4))
    with pytest.raises(TypeError, match="shape: .*'12'"):
        nx.reshape(x, "12")
    assert nx.reshape(x, (nx.asarray(3), np.int64(4))).shape == (3, 4)
    with pytest.raises(TypeError, match="sections: .*1.5"):
        nx.split(x, 1.5)
    with pytest.raises(TypeError, match="offset: expected an int, got True"):
        nx.as_strided(x, (2,), (1,), offset=True)
    with pytest.raises(TypeError, match="values: complex 1j cannot be written into a float32"):
        x.at[0].set(1j)
    with pytest.raises(TypeError, match="values: complex values"):
        x.at[0].set(nx.ones(1) * 1j)
    np.testing.assert_array_equal(nx.ones(3, nx.int32).at[0].set(2.7).numpy(), [2, 1, 1])


@pytest.mark.parametrize("n", [2**31, 2**32 + 5, 2**40])
def test_random_choice_population_must_fit_int32(n):
    with pytest.raises(ValueError, match=f"a: {n} does not fit in int32"):
        nx.random.choice(nx.random.key(0), n, (3,))


def test_softmax_of_infinities_follows_jax():
    # jax.nn.softmax / log_softmax 0.10.2: [inf, 1] -> [nan, nan]; [-inf, -inf] -> [nan, nan];
    # [-inf, 1] -> [0, 1] (log_softmax: [-inf, 0])
    for x, sm, lsm in (([np.inf, 1.0], [np.nan, np.nan], [np.nan, np.nan]),
                       ([-np.inf, -np.inf], [np.nan, np.nan], [np.nan, np.nan]),
                       ([-np.inf, 1.0], [0.0, 1.0], [-np.inf, 0.0])):
        np.testing.assert_array_equal(nx.softmax(nx.asarray(x)).numpy(), sm)
        np.testing.assert_array_equal(nx.log_softmax(nx.asarray(x)).numpy(), lsm)


@pytest.mark.parametrize("make", [lambda x: nx.concatenate([x]), lambda x: nx.stack([x]),
                                  lambda x: x.flatten(), lambda x: nx.copy(x)],
                         ids=["concatenate", "stack", "flatten", "copy"])
def test_functions_that_copy_in_numpy_copy(make):
    x = nx.asarray(np.arange(6.0).reshape(2, 3))
    y = make(x)
    assert not nx.shares_memory(y, x)
    nx.assign(y, nx.zeros_like(y))
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))


# -- found by the fuzzer's issue-13 targets (tests/fuzz_driver.py) --------------------------------

FILL_CONTAINERS = {
    "full_list": lambda a: nx.sum(nx.full((2, 3), [a[0], 1.0, a[2] * 2.0]) * a),
    "full_nested_extra_axis": lambda a: nx.sum(nx.full((), [[a[1] * 3.0]])),
    "full_like_list": lambda a: nx.sum(nx.full_like(a, [a[2], a[0], 0.5]) * a),
    "pad_list_fill": lambda a: nx.sum(nx.pad(a, (1, 2), constant_values=[a[0] * a[1]]) ** 2),
    "pad_nested_fill": lambda a: nx.sum(nx.pad(a, 1, constant_values=((a[2],),)) * 2.0),
}


@pytest.mark.parametrize("name", sorted(FILL_CONTAINERS))
def test_fill_containers_holding_tracers_are_differentiable(name):
    # was: TracerArrayConversionError (the container went to NumPy, which read the values)
    f = FILL_CONTAINERS[name]
    x = np.array([0.7, -1.3, 2.1])
    np.testing.assert_allclose(nx.grad(f)(f64(x)).numpy(), fd_grad(f, x), rtol=1e-6, atol=1e-7)


def test_fill_containers_of_tensors_keep_their_values():
    np.testing.assert_array_equal(nx.full((2,), [nx.asarray(1.5), 2]).numpy(), [1.5, 2.0])
    np.testing.assert_array_equal(nx.full((), [nx.asarray(2.5)]).numpy(), np.full((), [2.5]))
    np.testing.assert_array_equal(nx.pad(nx.ones(1), 1, constant_values=[nx.asarray(4.0)]).numpy(),
                                  [4.0, 1.0, 4.0])
    with pytest.raises(ValueError, match="constant_values: must be a scalar"):
        nx.pad(nx.ones(1), 1, constant_values=[nx.asarray(4.0), 5.0])


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_numpy_function_given_a_tracer_and_a_tensor_names_the_transformation(transform):
    # was: a plain TypeError "inside a transformation" (Tensor.__array_function__)
    def f(u):
        return nx.asarray(np.where(u > 0, u, nx.zeros(2, nx.float64))).sum()
    x = f64([1.0, -2.0])
    with pytest.raises(TracerArrayConversionError, match=f"numpy.where got a traced value.*"
                                                         f"traced by {transform}.*shape \\(2,\\)"):
        nx.grad(f)(x) if transform == "grad" else nx.jvp(f, (x,), (x,))


@pytest.mark.parametrize("start,stop,step", [
    (2**31, 13835058057429647362, 2**62), (2**63, 2**64, 2**63 - 1),
    (-2**63, 2**62 + 1, 2**62), (1, 13835058055282163715, 2**62), (2**64 - 1, -1, -2**62),
    (5, -3, -3), (0, 7, 2)])
def test_arange_of_huge_integer_spans_has_the_exact_length(start, stop, step):
    # was: one value short (NumPy computes the length in double precision), silently
    got = nx.arange(start, stop, step)
    assert got.tolist() == list(range(start, stop, step))


def test_arange_empty_range_with_a_huge_stop():
    # was: ValueError "Maximum allowed size exceeded" for a range with no values
    assert nx.arange(2**31 - 1, 2**64 + 2**31, -1).shape == (0,)


def test_linspace_takes_python_ints_beyond_int64():
    # was: UFuncTypeError (NumPy made an object array of them)
    np.testing.assert_allclose(nx.linspace(0, 10**30, 3).numpy(), [0.0, 5e29, 1e30], rtol=1e-6)
    np.testing.assert_allclose(nx.linspace(-2**63, 2**64, 2, dtype=nx.float64).numpy(),
                               [-2.0**63, 2.0**64])
    with pytest.raises(ValueError, match="stop: .* too large for a float"):
        nx.linspace(0, 10**400, 3)


def test_huge_sizes_name_their_argument():
    # were: errors naming "pad_width" or "shape" (an inner step), or NumPy's own messages
    with pytest.raises(ValueError, match="^k: "):
        nx.diag(nx.ones(2), 2**63)
    with pytest.raises(ValueError, match="^k: "):
        nx.diag(nx.ones(2), -2**40)
    with pytest.raises(ValueError, match="^repetitions: "):
        nx.tile(nx.ones(2), (2**62, 2**62))
    with pytest.raises(ValueError, match="^repeats: "):
        nx.repeat(nx.ones(3), 2**63 - 1)
    with pytest.raises(ValueError, match="^repeats: "):
        nx.repeat(nx.zeros(0), 2**63)
    with pytest.raises(ValueError, match="^repeats: "):        # the int64 sum would wrap
        nx.repeat(nx.ones(3), [0, 2**63 - 1, 1])
    with pytest.raises(ValueError, match="^repeats: "):
        nx.repeat(nx.ones(3), [2**31 - 1, 2**62, 2**32])
    for shape in [(2**32, 2**64), (0, 2**63 - 1), (0, 10**30)]:
        with pytest.raises(ValueError, match="^shape "):
            nx.random.normal(nx.random.key(0), shape)
    assert nx.random.uniform(nx.random.key(0), (0, 2**40)).shape == (0, 2**40)
    np.testing.assert_array_equal(nx.diag(nx.ones(2), -3).numpy(), np.diag(np.ones(2), -3))


def test_empty_tensors_of_every_dtype_spelling_read_back():
    # was: KeyError 'Q' (np.asarray([2**63]) makes a uint64 of char 'Q'; a table keyed by
    # dtype.char knew only 'L'), from any empty view of such a tensor, e.g. x += [2**63]
    for ch in "qQlLiIhHbB?efdFD":
        t = nx.asarray(np.empty((3, 0), np.dtype(ch)))
        for v in (t[1:], nx.broadcast_to(t, (2, 3, 0)), t.T):
            arr = np.asarray(v)
            assert arr.size == 0 and arr.dtype == np.dtype(ch), ch
    y = nx.asarray(np.zeros((3, 0), np.uint32))
    y += [2**63]
    assert y.shape == (3, 0) and y.dtype == np.uint32


def test_huge_numbers_of_pieces_are_refused_at_once():
    # was: minutes building tensors (2**31 sections of 6 elements, or of an empty axis), then
    # a MemoryError without a message
    x = nx.arange(6.0)
    with pytest.raises(MemoryError, match="^indices_or_sections: 2147483647 pieces"):
        nx.array_split(x, 2**31 - 1)
    with pytest.raises(MemoryError, match="^sections: "):
        nx.split(x[:0], 2**40)
    with pytest.raises(MemoryError, match="^axis: "):
        nx.unstack(nx.zeros((2**40, 0)))
    assert [p.shape for p in nx.array_split(x, 8)] == [a.shape for a in
                                                       np.array_split(np.arange(6.0), 8)]
    assert len(nx.split(x[:0], 1000)) == 1000


def test_empty_read_only_array_stays_read_only():
    # an empty read-only ndarray wrapped by asarray refuses writes like a non-empty one
    a = np.zeros((0, 1), np.float16)
    a.flags.writeable = False
    t = nx.asarray(a)
    with pytest.raises(ValueError, match="read-only"):
        t[()] = [1]
    with pytest.raises(ValueError, match="read-only"):
        t += 1


def test_movement_of_views_beyond_numpys_size_limit():
    # broadcast views NumPy cannot express as ndarrays (more than 2**63 bytes of elements, none
    # of them stored) go through the View algebra: empty results, or errors naming the argument
    assert nx.tile(nx.zeros((0,)), (2**62,)).shape == (0,)
    # (NumPy's limit counts bytes, the zero axes aside: such a tensor could never be read)
    with pytest.raises(ValueError, match="too large to address"):
        nx.tile(nx.zeros((1,)), (2**63 - 1, 0))
    with pytest.raises((ValueError, MemoryError), match="repeats|size"):
        nx.repeat(nx.zeros((1,)), 2**63 - 1)
