"""Slices of traced values: how they are recorded and how their cotangents are summed.

* The front end's getitem of a traced value with ints, unit-step slices and None (``x[k]``,
  ``x[1:3, 0]``, ``x[:, None]``) hands the same shrink and reshape as its general composition to the
  interpreter at once (frontend/indexing.py ``_traced_block``): checked against the general
  path (switched off) for the programs recorded (tape entries, jaxprs), values and gradients,
  and the view links that writes through views need.
* The backward pass adds the cotangents of slices (shrink's windows) into one buffer: with no
  transformation active, the cotangent of ``x[idx]`` (a basic index: shrinks) is added
  straight into that window of x's accumulated cotangent, which the pass owns and writes in
  place (nx_rune/autodiff/_tape.pyx, backend.views.add_window), instead of padding it to x's
  full size and summing full-size arrays.  Checked: gradients of functions of many slices
  (overlapping, stepped, reversed, with None/Ellipsis, interleaved with whole-array uses)
  against NumPy's analytic values and bit for bit against the padding path (the window
  switched off); the gradients returned are writable and share memory with nothing; a reused
  ``vjp_fn`` gives independent results; second order (the rules under an enclosing
  transformation) against float64 central differences; no padded array is made on the way.
"""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune.autodiff import VJP_RULES
from test_tree_util import fd_grad  # central differences of a NumPy function

RNG = np.random.default_rng(30)
X = RNG.uniform(-1.0, 1.0, (6, 5))
W = RNG.uniform(-1.0, 1.0, (6, 5))

# (index, NumPy weight shape): every index a basic one (a view on arrays)
INDICES = [
    (np.s_[1:4], (3, 5)),
    (np.s_[2], (5,)),
    (np.s_[2:5, 1:3], (3, 2)),      # overlaps the two above
    (np.s_[::2, ::-2], (3, 3)),     # stepped and reversed
    (np.s_[..., 4], (6,)),
    (np.s_[None, 3, :], (1, 5)),
    (np.s_[-1, -2], ()),
]
WEIGHTS = [RNG.uniform(-1.0, 1.0, shape) for _, shape in INDICES]


def _f(lib, x, w):
    """Sum over the slices of weight * slice ** 2, with x itself used in between (a dense
    cotangent arrives between the windows)."""
    total = lib.sum(x * w)
    for k, ((idx, _), v) in enumerate(zip(INDICES, WEIGHTS)):
        total = total + lib.sum(v * x[idx] ** 2)
        if k == 3:
            total = total + lib.sum(lib.sin(x))
    return total


def _want_grad(x):
    g = W + np.cos(x)
    for (idx, _), v in zip(INDICES, WEIGHTS):
        g[idx] += 2 * v * x[idx]    # (NumPy's basic index: a view, added into in place)
    return g


@pytest.fixture
def padding_path(monkeypatch):
    """The backward pass without the window (the shrink rule's padded cotangent, summed)."""
    def switch_off():
        monkeypatch.setattr(VJP_RULES[P.shrink_p], "window", None)
    return switch_off


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_of_many_slices_equals_numpy_and_the_padding_path(dtype, padding_path):
    x = nx.asarray(X.astype(dtype))
    w = nx.asarray(W.astype(dtype))
    g = nx.grad(lambda t: _f(nx, t, w))(x)
    assert g.dtype == dtype and g.shape == X.shape
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(np.asarray(g), _want_grad(X), rtol=tol, atol=tol)
    padding_path()
    g_pad = nx.grad(lambda t: _f(nx, t, w))(x)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(g_pad))


def test_slices_of_slices_and_of_reshapes():
    # the GMM program's unpacking: windows of a flat vector, reshaped, then rows of those
    p = RNG.uniform(-1.0, 1.0, 4 + 4 * 3 + 4 * 3 * 3)

    def f(lib, params):
        logw = params[:4]
        means = lib.reshape(params[4:16], (4, 3))
        mats = lib.reshape(params[16:], (4, 3, 3))
        total = lib.sum(logw * logw)
        for k in range(4):
            total = total + logw[k] * lib.sum(means[k] * means[k]) \
                + lib.sum(lib.dot(mats[k].T, mats[k]))
        return total

    g = np.asarray(nx.grad(lambda t: f(nx, t))(nx.asarray(p)))
    np.testing.assert_allclose(g, fd_grad(lambda v: f(np, v), p), rtol=1e-7, atol=1e-8)


def test_no_padded_array_is_made(monkeypatch):
    calls = []
    impl = P.pad_p.impl

    def counting(*args, **params):
        calls.append(params)
        return impl(*args, **params)
    monkeypatch.setattr(P.pad_p, "impl", counting)
    x, w = nx.asarray(X), nx.asarray(W)
    out, f_vjp = nx.vjp(lambda t: _f(nx, t, w), x)
    del calls[:]    # (the stepped slice past x's end pads in the forward pass: a copy)
    (g,) = f_vjp(nx.ones_like(out))
    assert calls == []
    np.testing.assert_allclose(np.asarray(g), _want_grad(X), rtol=1e-12, atol=1e-12)


def test_gradients_are_writable_and_share_no_memory():
    x = nx.asarray(X)
    a = nx.asarray(X[0].copy())

    def f(t, u):
        return nx.sum(t[1:3] * t[0:2]) + nx.sum(t[0] * u) + nx.sum(u[1:])
    gx, gu = nx.grad(f, argnums=(0, 1))(x, a)
    for g in (gx, gu):
        arr = np.asarray(g)
        assert arr.flags.writeable
    want_x = np.zeros_like(X)
    want_x[1:3] += X[0:2]
    want_x[0:2] += X[1:3]
    want_x[0] += X[0]
    np.testing.assert_array_equal(np.asarray(gx), want_x)
    gx[...] = 7.0
    want_u = X[0].copy()
    want_u[1:] += 1.0
    np.testing.assert_array_equal(np.asarray(gu), want_u)
    np.testing.assert_array_equal(np.asarray(x), X)


def test_a_reused_vjp_function_gives_independent_results():
    x = nx.asarray(X)
    _, f = nx.vjp(lambda t: t[1:4] * 2.0 + t[0:3], x)
    ct1 = nx.asarray(np.ones((3, 5)))
    (g1,) = f(ct1)
    first = np.asarray(g1).copy()
    (g2,) = f(nx.asarray(np.full((3, 5), 3.0)))
    np.testing.assert_array_equal(np.asarray(g1), first)
    np.testing.assert_array_equal(np.asarray(g2), 3.0 * first)
    want = np.zeros_like(X)
    want[1:4] += 2.0
    want[0:3] += 1.0
    np.testing.assert_array_equal(first, want)


def test_second_order_through_slices_equals_central_differences():
    # under an enclosing transformation the rules run as before (the padded cotangent, bound
    # under the outer level): Hessian-vector products of the sliced function
    x0 = X.ravel()[:12].reshape(3, 4)
    v = RNG.uniform(-1.0, 1.0, (3, 4))

    def f(lib, t):
        return lib.sum(lib.sin(t[1:]) * t[:2]) + lib.sum(t[:, 1] ** 3) + lib.sum(t[0] * t[2])

    grad_np = lambda t: np.asarray(nx.grad(lambda u: f(nx, u))(nx.asarray(t)))   # noqa: E731
    want = fd_grad(lambda t: float(np.sum(grad_np(t) * v)), x0)
    _, hvp = nx.jvp(nx.grad(lambda u: f(nx, u)), (nx.asarray(x0),), (nx.asarray(v),))
    np.testing.assert_allclose(np.asarray(hvp), want, rtol=1e-6, atol=1e-7)
    rev = nx.grad(lambda u: nx.sum(nx.grad(lambda s: f(nx, s))(u) * nx.asarray(v)))(
        nx.asarray(x0))
    np.testing.assert_allclose(np.asarray(rev), want, rtol=1e-6, atol=1e-7)


def test_complex_slices_equal_the_padding_path(padding_path):
    z = nx.asarray(X + 1j * W)

    def f(t):
        return nx.sum(nx.abs(t[1:4] * t[0:3]) ** 2) + nx.real(nx.sum(t[2] * t[3]))
    g = np.asarray(nx.grad(f)(z))
    padding_path()
    np.testing.assert_array_equal(g, np.asarray(nx.grad(f)(z)))


# -- getitem of a traced value: the block fast path against the general composition ------------

BLOCK_INDICES = [0, -1, 3, (1, 2), (-2, slice(1, 4)), slice(1, 4), slice(None, 2),
                 slice(-3, None), slice(4, 2), slice(2, 100), slice(-100, 2), slice(None),
                 (slice(None), 0), (slice(None), slice(0, 5)), (slice(0, 6), slice(0, 5)),
                 (5, 4), (), None, (None, 1), (slice(None), None, slice(1, 3)),
                 (None, slice(None), None, 2, None)]
OTHER_INDICES = [np.int64(2), True, Ellipsis, (Ellipsis, 1), slice(None, None, 2),
                 slice(None, None, -1), [0, 2], (None, Ellipsis)]


@pytest.fixture
def general_getitem(monkeypatch):
    """Switch the block fast path off: every traced getitem takes _basic_getitem."""
    from nx_rune.frontend import indexing

    def switch_off():
        monkeypatch.setattr(indexing, "_traced_block", lambda interp, x, index: None)
    return switch_off


def _tape_entries(fn, x):
    from nx_rune.autodiff.core import Tape, call_finishing
    tape = Tape("grad", None)
    out = call_finishing(tape, fn, tape.new_input(x))
    entries = [(e[0].name, e[1]) for e in tape.tape if e is not None]
    return entries, np.asarray(out.primal)


@pytest.mark.parametrize("index", BLOCK_INDICES + OTHER_INDICES, ids=repr)
def test_traced_getitem_records_what_the_general_path_records(index, general_getitem):
    x = nx.asarray(X)
    fn = lambda t: t[index] * 2.0                      # noqa: E731
    loss = lambda t: nx.sum(fn(t) ** 2)                 # noqa: E731
    fast, value = _tape_entries(fn, x)
    np.testing.assert_array_equal(value, X[index] * 2.0)
    jaxpr = str(nx.make_jaxpr(fn)(x))
    g = np.asarray(nx.grad(loss)(x))
    _, t_out = nx.jvp(fn, (x,), (nx.asarray(W),))
    np.testing.assert_array_equal(np.asarray(t_out), W[index] * 2.0)
    general_getitem()
    assert _tape_entries(fn, x)[0] == fast
    assert str(nx.make_jaxpr(fn)(x)) == jaxpr
    np.testing.assert_array_equal(g, np.asarray(nx.grad(loss)(x)))


@pytest.mark.parametrize("index", [0, -1, slice(1, 4), slice(3, 1), (), slice(None)], ids=repr)
def test_traced_getitem_under_vmap_and_grad(index, general_getitem):
    # rows of a batched value (vmap's tracers), differentiated (tape tracers over them)
    x = nx.asarray(X)
    f = nx.vmap(nx.grad(lambda r: nx.sum(nx.sin(r[index]) * r[index])))
    out = np.asarray(f(x))
    rows = (slice(None),) + (index if isinstance(index, tuple) else (index,))
    want = np.zeros_like(X)
    want[rows] += np.cos(X[rows]) * X[rows] + np.sin(X[rows])
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    general_getitem()
    np.testing.assert_array_equal(out, np.asarray(f(x)))


@pytest.mark.parametrize("index", [7, -7, (0, 5), (1, 2, 3), (None, 1, 2, 3)], ids=repr)
def test_traced_getitem_out_of_range_raises_as_the_general_path(index):
    x = nx.asarray(X)
    with pytest.raises(IndexError, match="index"):
        nx.grad(lambda t: nx.sum(t[index]))(x)


def test_traced_block_is_a_view_that_writes_follow(general_getitem):
    # row = t[1]; row *= 3 writes into t (a view on arrays, linked on the tape): the value and
    # the gradient are those of the eager program, and the write reaches the argument
    def f(t):
        row = t[1]
        row *= 3.0
        block = t[2:4, 1:3]
        block += t[0, :2]
        return nx.sum(t * t)

    def f_np(v):
        v = v.copy()
        v[1] *= 3.0
        v[2:4, 1:3] += v[0, :2]
        return np.sum(v * v), v

    x = nx.asarray(X.copy())
    g = np.asarray(nx.grad(f)(x))
    np.testing.assert_allclose(np.asarray(x), f_np(X)[1], rtol=1e-15)   # written back
    np.testing.assert_allclose(g, fd_grad(lambda v: f_np(v)[0], X), rtol=1e-6, atol=1e-6)
    general_getitem()
    np.testing.assert_array_equal(g, np.asarray(nx.grad(f)(nx.asarray(X.copy()))))
