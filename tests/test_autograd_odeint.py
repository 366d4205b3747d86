"""nx_rune.autograd.scipy.integrate.odeint: SciPy's LSODA forward (autograd's numbers bit for
bit), the adjoint method backwards, to second order; clear errors where it cannot run."""
import numpy as onp
import pytest
import scipy.integrate

import nx_rune as nx
import nx_rune.autograd.numpy as np
from nx_rune.autograd import grad
from nx_rune.autograd.scipy import integrate
from nx_rune.autograd.test_util import check_grads

Y0 = onp.array([1.0, 2.0, 3.0])
T = onp.linspace(0.1, 0.2, 4)
ARGS = (onp.array([0.1, 0.2, 0.3]), onp.array([0.5, -0.2, 0.1]))


def rhs(y, t, a1, a2):
    return -np.sqrt(t) - y + a1 - np.mean((y + a2) ** 2)


def rhs_numpy(y, t, a1, a2):
    return -onp.sqrt(t) - y + a1 - onp.mean((y + a2) ** 2)


def loss(y0, t, a1, a2, **kwargs):
    return np.sum(np.sin(integrate.odeint(rhs, y0, t, (a1, a2), **kwargs)))


def test_forward_is_scipys_odeint_bit_for_bit():
    want = scipy.integrate.odeint(rhs_numpy, Y0, T, ARGS)
    got = integrate.odeint(rhs, Y0, T, ARGS)
    onp.testing.assert_array_equal(onp.asarray(got), want)
    # SciPy's keywords reach it
    want = scipy.integrate.odeint(rhs_numpy, Y0, T, ARGS, rtol=1e-4, atol=1e-4)
    got = integrate.odeint(rhs, Y0, T, ARGS, rtol=1e-4, atol=1e-4)
    onp.testing.assert_array_equal(onp.asarray(got), want)


def test_gradients_are_autograds():
    # autograd 1.9.1's grad of the same loss (autograd.builtins.tuple for its args)
    want = ([2.7331617584599766, -0.5185114823264, -3.2976696082442816],
            [-5.603241060265436, 4.093194538383911, 1.6173755868325386, -0.11564579440241429],
            [0.15590141257966458, 0.004069346002566633, -0.15155303018757246],
            [-0.005043336934081094, -0.00614733315287092, -0.012863148301433192])
    got = grad(loss, (0, 1, 2, 3))(Y0, T, *ARGS)
    for g, w in zip(got, want):
        onp.testing.assert_allclose(onp.asarray(g), w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("argnum", [0, 1, 2, 3])
def test_gradients_match_finite_differences(argnum):
    tight = {"rtol": 1e-12, "atol": 1e-12}
    args = [Y0, T, *ARGS]
    got = onp.asarray(grad(lambda *a: loss(*a, **tight), argnum)(*args))
    h = 1e-5
    fd = onp.zeros_like(args[argnum])
    for k in range(fd.size):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[argnum][k] += h
        down[argnum][k] -= h
        fd[k] = (float(loss(*up, **tight)) - float(loss(*down, **tight))) / (2 * h)
    onp.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_second_order_reverse_mode():
    # autograd's own check (its test_scipy.py::test_odeint): reverse mode, order 2
    check_grads(lambda y0, t, a1, a2: integrate.odeint(rhs, y0, t, (a1, a2)), modes=["rev"],
                order=2)(Y0, T, *ARGS)


def test_cannot_be_traced_by_jit_and_says_what_to_use():
    f = nx.jit(lambda y0: integrate.odeint(rhs, y0, T, ARGS))
    with pytest.raises(TypeError, match="nx_rune.scipy.integrate.odeint"):
        f(Y0)


@pytest.mark.parametrize("call, match", [
    (lambda: integrate.odeint("f", Y0, T), "func must be callable"),
    (lambda: integrate.odeint(rhs, Y0, T, ARGS[0]), "args must be a tuple"),
    (lambda: integrate.odeint(rhs, onp.ones((2, 2)), T, ARGS), "y0 must be a vector"),
    (lambda: integrate.odeint(rhs, Y0, onp.ones((2, 2)), ARGS), "t must be a vector"),
    (lambda: integrate.odeint(rhs, Y0, T, ARGS, full_output=True), "full_output"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def test_forward_mode_transposes_the_adjoint():
    tight = {"rtol": 1e-12, "atol": 1e-12}
    direction = onp.array([0.3, -1.0, 0.5])
    _, tangent = nx.jvp(lambda y0: integrate.odeint(rhs, y0, T, ARGS, **tight), (Y0,),
                        (direction,))
    h = 1e-6
    fd = (scipy.integrate.odeint(rhs_numpy, Y0 + h * direction, T, ARGS, **tight)
          - scipy.integrate.odeint(rhs_numpy, Y0 - h * direction, T, ARGS, **tight)) / (2 * h)
    onp.testing.assert_allclose(onp.asarray(tangent), fd, rtol=1e-6, atol=1e-8)
