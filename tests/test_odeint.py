"""odeint as jax.experimental.ode.odeint: JAX's values (its algorithm, followed step for step),
eagerly, under jit and under vmap (per-example steps); derivatives by the adjoint method against
JAX's and against float64 central differences, to second order and in forward mode; pytree and
complex states; mxstep exceeded; bad input.  The golden values come from jax 0.10.2 (x64, CPU);
the tests never import jax."""
import numpy as np
import pytest

import nx_rune as nx
import nx_rune.experimental.ode
import nx_rune.scipy.integrate
from nx_rune.experimental.ode import odeint

# jax 0.10.2, x64: jax.experimental.ode.odeint on the systems below (cplx: real, imaginary parts)
JAX = {'cplx': [[[1.0, -0.0], [0.09789302730155729, 0.223340916819212],
           [-0.5837117116803321, -0.1521899424086146]],
          [[0.5, -0.3], [0.9101192289545463, 0.10221366013991964],
           [0.47004451021668664, 0.13144511702526332]]],
 'grad_lin': [[0.5286385765563345, -0.12878743881652255, 0.003530820996134743],
              [-1.2710615521586281, 0.13663430921475936, -0.0025092893519615325],
              [-0.025546954399672837, 0.0, 0.0, 0.0, 0.0, 0.32180903930888016]],
 'grad_lotka': [[17.36984717324179, 2.326386596130849],
                [94.48981747939904, -199.3340936530087, 226.22130565787296, -475.08465494393823]],
 'hess_lotka': [[2.2806015020920776, -15.336747084042818, 2.198000013922268, -11.425705759055422],
                [-15.336747098107484, 100.18401016448544, -3.9234346532607693, 3.3178353331934645],
                [2.198000057543819, -3.9234346665081947, 6.055245278065852, -31.324566368862154],
                [-11.425705958523745, 3.3178358627751976, -31.324566145864804,
                 142.58440547229074]],
 'lin': [[1.0, 2.0, -0.5], [0.8570655426399593, 1.2742443273356272, -0.21749257456889873],
         [0.7733316461058307, 0.673309653589186, -0.06786805181626793],
         [0.7293414501744137, 0.18599786948981964, 0.0147827781348234],
         [0.7054018751160803, -0.18445525072024793, 0.05947487930195821],
         [0.6834529372502635, -0.43052961798872585, 0.07891596760898652]],
 'lin_f32': [[1.0, 2.0, -0.5], [0.8570654988288879, 1.2742443084716797, -0.21749255061149597],
             [0.7733314037322998, 0.6733095645904541, -0.06786800175905228],
             [0.7293416857719421, 0.18599770963191986, 0.014782793819904327],
             [0.7054018378257751, -0.18445523083209991, 0.0594748891890049],
             [0.6834529638290405, -0.43052971363067627, 0.07891596108675003]],
 'lin_hmax': [[1.0, 2.0, -0.5], [0.8570655427173369, 1.274244327147256, -0.21749257334652872],
              [0.7733316460357071, 0.6733096539093416, -0.06786804853507859],
              [0.7293414500547569, 0.18599786952282707, 0.014782782952924999],
              [0.7054018753013992, -0.18445525057101378, 0.05947488235685825],
              [0.6834529371295702, -0.4305296196263776, 0.07891597393773882]],
 'lotka': [[10.0, 5.0], [0.6830336438776962, 4.099104837500517],
           [0.6826686087843343, 1.7361664418852998], [3.1098065069310574, 0.9305111018159071],
           [13.633639871174985, 2.551950918381306], [1.2474908580976525, 5.230745099566409],
           [0.5370239577929985, 2.2705354179674315]],
 'lotka_loose': [[10.0, 5.0], [0.6826995462238008, 4.099036917829163],
                 [0.6824013324882172, 1.7360243457384446],
                 [3.1089561594051984, 0.9303621288793825],
                 [13.636173393043977, 2.5513166903166327], [1.2464336380334928, 5.231597835395219],
                 [0.5363185227921415, 2.270482349379003]],
 'osc_v': [[0.0, 1.0], [-0.896138568900712, 0.7193506492546224],
           [1.0845905665546487, -0.3645292326772119]],
 'osc_x': [[1.0, 0.0], [0.7641575776996571, 0.44806928445035593],
           [-0.4187587610049439, -0.5422952832773232]]}


def _lin(y, t, a, b):
    return -a * y + b * nx.sin(t)


def _lotka(y, t, p):
    return nx.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def _osc(s, t, k):
    return {"x": s["v"], "v": -k * s["x"] - 0.1 * s["v"]}


Y0 = np.array([1.0, 2.0, -0.5])
T = np.linspace(0.1, 2.0, 6)
A, B = np.array([0.5, 1.0, 2.0]), np.array([0.3, -1.0, 0.2])
P = np.array([1.1, 0.4, 0.4, 0.1])
TL = np.linspace(0.0, 15.0, 7)
LV0 = np.array([10.0, 5.0])
# following JAX's algorithm exactly, only the rounding of the sums differs: a few ulps
RTOL = 1e-12


def _close(got, want, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def test_same_function_in_both_namespaces():
    assert nx_rune.experimental.ode.odeint is nx_rune.scipy.integrate.odeint
    assert nx_rune.experimental.ode.__all__ == ["odeint"]


@pytest.mark.parametrize("jit", [False, True])
def test_values_match_jax(jit):
    wrap = nx.jit if jit else (lambda f: f)
    got = wrap(lambda y0, a: odeint(_lin, y0, T, a, B))(Y0, A)
    assert got.shape == (6, 3) and got.dtype == np.float64
    _close(got, JAX["lin"], atol=1e-15)
    _close(wrap(lambda p: odeint(_lotka, LV0, TL, p))(P), JAX["lotka"])
    _close(wrap(lambda p: odeint(_lotka, LV0, TL, p, rtol=1e-5, atol=1e-5))(P),
           JAX["lotka_loose"])
    _close(wrap(lambda y0: odeint(_lin, y0, T, A, B, hmax=0.05))(Y0), JAX["lin_hmax"],
           atol=1e-15)
    # a pytree state and a Python scalar argument
    out = wrap(lambda s: odeint(_osc, s, np.array([0.0, 0.5, 3.0]), 2.0))(
        {"x": np.array([1.0, 0.0]), "v": np.array([0.0, 1.0])})
    assert set(out) == {"x", "v"} and out["x"].shape == (3, 2)
    _close(out["x"], JAX["osc_x"], atol=1e-15)
    _close(out["v"], JAX["osc_v"], atol=1e-15)
    # a complex state
    got = wrap(lambda y0: odeint(lambda y, t, w: 1j * w * y - 0.2 * y, y0,
                                 np.linspace(0.0, 2.0, 3), np.array([1.0, 2.0])))(
        np.array([1.0 + 0.5j, -0.3j]))
    assert got.dtype == np.complex128
    _close(got, np.array(JAX["cplx"][0]) + 1j * np.array(JAX["cplx"][1]), atol=1e-15)


def test_float32_matches_jax_to_rounding():
    f32 = np.float32
    got = odeint(_lin, Y0.astype(f32), T.astype(f32), A.astype(f32), B.astype(f32))
    assert got.dtype == np.float32
    _close(got, JAX["lin_f32"], rtol=1e-6, atol=1e-7)


def test_equal_times_and_one_time():
    # a repeated time gives the same state again (JAX's interpolation divides 0 by 0 there)
    got = np.asarray(odeint(_lin, Y0, np.array([0.0, 0.0, 0.5, 0.5]), A, B))
    np.testing.assert_array_equal(got[1], Y0)
    np.testing.assert_array_equal(got[3], got[2])
    np.testing.assert_array_equal(np.asarray(odeint(_lin, Y0, T[:1], A, B)), Y0[None])
    assert np.isfinite(got).all()


def test_vmap_steps_each_example_alone():
    ys = np.stack([Y0, 2 * Y0, -Y0])
    as_ = np.stack([A, 30 * A, 0.1 * A])     # stiffness 100x apart: different step sizes
    want = np.stack([np.asarray(odeint(_lin, y, T, a, B)) for y, a in zip(ys, as_)])
    f = nx.vmap(lambda y0, a: odeint(_lin, y0, T, a, B))
    # (an eager call runs compiled, whose sums may round differently in the last bit)
    np.testing.assert_allclose(np.asarray(f(ys, as_)), want, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(np.asarray(nx.jit(f)(ys, as_)), want, rtol=1e-14, atol=1e-15)
    # batched times too
    ts = np.stack([T, 2 * T, T + 1.0])
    want = np.stack([np.asarray(odeint(_lin, Y0, t, A, B)) for t in ts])
    got = nx.vmap(lambda t: odeint(_lin, Y0, t, A, B))(ts)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14, atol=1e-15)


def _loss_lin(y0, a, t):
    return nx.sum(odeint(_lin, y0, t, a, B)[-1] ** 2)


def _loss_lotka(y0, p):
    return nx.sum(odeint(_lotka, y0, TL[:4], p) ** 2)


@pytest.mark.parametrize("jit", [False, True])
def test_adjoint_gradients_match_jax(jit):
    wrap = nx.jit if jit else (lambda f: f)
    g = wrap(nx.grad(_loss_lin, argnums=(0, 1, 2)))(Y0, A, T)
    for got, want in zip(g, JAX["grad_lin"]):
        _close(got, want, rtol=1e-11, atol=1e-15)
    g = wrap(nx.grad(_loss_lotka, argnums=(0, 1)))(LV0, P)
    for got, want in zip(g, JAX["grad_lotka"]):
        _close(got, want, rtol=1e-11)


def test_gradients_match_central_differences():
    # the adjoint gives the derivative of the exact solution, to the solver's tolerance: at
    # tight tolerances it meets float64 central differences of the solution closely
    def loss(y0, a, t, tol):
        return nx.sum(odeint(_lin, y0, t, a, B, rtol=tol, atol=tol) ** 2)

    fine = nx.jit(lambda y0, a, t: loss(y0, a, t, 1e-13))

    def loss_np(y0, a, t):
        return float(fine(y0, a, t))
    eps = 1e-5
    g = nx.grad(loss, argnums=(0, 1, 2))(Y0, A, T, 1e-12)
    for k, x in enumerate((Y0, A, T)):
        want = []
        for e in np.eye(x.size):
            hi = [Y0, A, T]
            lo = [Y0, A, T]
            hi[k], lo[k] = x + eps * e, x - eps * e
            want.append((loss_np(*hi) - loss_np(*lo)) / (2 * eps))
        np.testing.assert_allclose(np.asarray(g[k]), want, rtol=1e-7, atol=1e-9)


def test_vmap_of_grad_and_grad_of_vmap():
    ys, as_ = np.stack([Y0, 2 * Y0]), np.stack([A, 5 * A])
    want = [nx.grad(_loss_lin, argnums=(0, 1))(y, a, T) for y, a in zip(ys, as_)]
    for f in (nx.vmap(nx.grad(_loss_lin, argnums=(0, 1)), in_axes=(0, 0, None)),
              nx.jit(nx.vmap(nx.grad(_loss_lin, argnums=(0, 1)), in_axes=(0, 0, None)))):
        got = f(ys, as_, T)
        for k in range(2):
            np.testing.assert_allclose(np.asarray(got[k]), np.stack([np.asarray(w[k])
                                                                     for w in want]),
                                       rtol=1e-13, atol=1e-15)
    # the gradient of a batched solve is the sum of the per-example gradients
    total = nx.grad(lambda y: nx.sum(nx.vmap(lambda y0: odeint(_lin, y0, T, A, B))(y) ** 2))(ys)
    each = [nx.grad(lambda y0: nx.sum(odeint(_lin, y0, T, A, B) ** 2))(y) for y in ys]
    np.testing.assert_allclose(np.asarray(total), np.stack([np.asarray(e) for e in each]),
                               rtol=1e-13)


def test_second_order_matches_jax_and_forward_mode():
    def loss(p):
        return nx.sum(odeint(_lotka, LV0, np.array([0.0, 1.0]), p)[-1])
    _close(nx.jacrev(nx.grad(loss))(P), JAX["hess_lotka"], rtol=1e-10)
    # forward mode (the transpose of the adjoint, itself solved by an adjoint; JAX has none):
    # against the reverse mode, to the solver's tolerance
    jf = nx.jacfwd(lambda p: odeint(_lotka, LV0, np.array([0.0, 1.0]), p))(P)
    jr = nx.jacrev(lambda p: odeint(_lotka, LV0, np.array([0.0, 1.0]), p))(P)
    np.testing.assert_allclose(np.asarray(jf), np.asarray(jr), rtol=1e-6, atol=1e-8)
    # and against central differences of the solution
    eps = 1e-6
    fd = np.stack([(np.asarray(odeint(_lotka, LV0, np.array([0.0, 1.0]), P + eps * e)) -
                    np.asarray(odeint(_lotka, LV0, np.array([0.0, 1.0]), P - eps * e)))
                   / (2 * eps) for e in np.eye(4)], axis=-1)
    np.testing.assert_allclose(np.asarray(jf), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_mxstep_exceeded_gives_nan_and_ends(jit):
    wrap = nx.jit if jit else (lambda f: f)
    t = np.array([0.0, 0.1, 1e6, 2e6])
    out = np.asarray(wrap(lambda y0: odeint(_lin, y0, t, A, B, mxstep=5))(Y0))
    assert np.isfinite(out[:2]).all() and np.isnan(out[2:]).all()
    # the times reached within mxstep steps keep their values
    np.testing.assert_array_equal(out[1], np.asarray(odeint(_lin, Y0, t[:2], A, B))[1])
    # a step size that underflows to zero ends the loop too
    out = np.asarray(wrap(lambda y0: odeint(_lin, y0, np.array([0.0, 1.0]), A, B,
                                            hmax=0.0))(Y0))
    np.testing.assert_array_equal(out[0], Y0)
    assert np.isnan(out[1]).all()


def test_bad_input():
    with pytest.raises(TypeError, match="func"):
        odeint("f", Y0, T)
    with pytest.raises(ValueError, match="t:"):
        odeint(_lin, Y0, np.ones((2, 2)), A, B)
    with pytest.raises(ValueError, match="t:"):
        odeint(_lin, Y0, np.ones(0), A, B)
    with pytest.raises(ValueError, match="non-decreasing"):
        odeint(_lin, Y0, np.array([1.0, 0.5]), A, B)
    with pytest.raises(TypeError, match="t:"):
        odeint(_lin, Y0, np.array([1j, 2j]), A, B)
    with pytest.raises(ValueError, match="func"):
        odeint(lambda y, t: nx.ones(2), Y0, T)
    with pytest.raises(ValueError, match="func"):
        odeint(lambda y, t: {"x": y["x"]}, {"x": Y0, "v": Y0}, T)
    with pytest.raises(ValueError, match="rtol"):
        odeint(_lin, Y0, T, A, B, rtol=-1.0)
    with pytest.raises(ValueError, match="atol"):
        odeint(_lin, Y0, T, A, B, atol=-1.0)
    with pytest.raises(ValueError, match="mxstep"):
        odeint(_lin, Y0, T, A, B, mxstep=0)
    with pytest.raises(TypeError, match="args"):
        odeint(_lin, Y0, T, object(), B)
    with pytest.raises(ValueError, match="y0"):
        odeint(_lin, {}, T, A, B)


def test_closed_over_values_are_differentiated():
    # a neural ODE's parameters closed over by func (JAX's closure_convert): eagerly, with an
    # argument that is differentiated too, under jit and under vmap
    def solve(a, scale):
        return odeint(lambda y, t: -a * y + B * nx.sin(t), Y0 * scale, T)

    def by_args(a, scale):     # B a constant both ways: the same adjoint state, same steps
        return odeint(lambda y, t, a: -a * y + B * nx.sin(t), Y0 * scale, T, a)

    want = nx.grad(lambda a, s: nx.sum(by_args(a, s) ** 2), argnums=(0, 1))(A, 1.5)
    for wrap in (lambda f: f, nx.jit):
        got = wrap(nx.grad(lambda a, s: nx.sum(solve(a, s) ** 2), argnums=(0, 1)))(A, 1.5)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13)
    # JAX's adjoint carries B's cotangent too, so its steps differ: equal to the tolerance
    _close(nx.grad(lambda a: nx.sum(solve(a, 1.0)[-1] ** 2))(A), JAX["grad_lin"][1],
           rtol=1e-7)
    as_ = np.stack([A, 3 * A])
    got = nx.vmap(lambda a: solve(a, 1.0))(as_)
    np.testing.assert_allclose(np.asarray(got), np.stack([np.asarray(by_args(a, 1.0))
                                                          for a in as_]), rtol=1e-14)


def test_python_branches_in_func_run_eagerly():
    # an eager call runs compiled; a func that branches on values in Python cannot be traced
    # and runs eagerly instead (JAX's raises there)
    def kinked(y, t, a):
        return -a * y if float(t) < 0.5 else -2.0 * a * y
    ts = np.array([0.0, 0.25, 1.0])
    got = np.asarray(odeint(kinked, Y0, ts, A, rtol=1e-10, atol=1e-10))
    want = np.stack([Y0, Y0 * np.exp(-A * 0.25), Y0 * np.exp(-A * 0.5) * np.exp(-2 * A * 0.5)])
    np.testing.assert_allclose(got, want, rtol=1e-7)


@pytest.mark.parametrize("t_dtype,y_dtype", [(np.float32, np.float64), (np.float64, np.float32)])
def test_mixed_time_and_state_dtypes(t_dtype, y_dtype):
    # y' = -y: y = exp(-(t - t0)) y0; d/dt_k sum(y) and d/dt_0 = -sum_k d/dt_k
    ts = np.array([0.0, 0.5, 1.0], t_dtype)

    def f(y, t):
        return -y
    got = odeint(f, np.ones(2, y_dtype), ts)
    assert got.dtype == y_dtype
    np.testing.assert_allclose(np.asarray(got), np.exp(-ts.astype(np.float64))[:, None] *
                               np.ones(2), rtol=1e-5)
    # listed times (the default float) with a float64 state
    np.testing.assert_allclose(np.asarray(odeint(f, np.ones(2), [0.0, 1.0]))[1], np.exp(-1.0),
                               rtol=1e-7)
    want = -2 * np.exp(-ts[1:].astype(np.float64))
    want = np.concatenate([[-want.sum()], want])
    for wrap in (lambda g: g, nx.jit):
        g = wrap(nx.grad(lambda t: nx.sum(odeint(f, np.ones(2, y_dtype), t))))(ts)
        assert g.dtype == t_dtype
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)
