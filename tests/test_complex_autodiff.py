"""Complex autodiff with JAX's conventions: grad of real-valued functions of complex inputs,
``holomorphic=True`` for grad/value_and_grad/jacfwd/jacrev/hessian, JAX's errors (each naming
its fix), abs/sign/angle on complex inputs, and check_grads on complex functions.

Golden values were produced by JAX 0.10.2 in x64 mode (``jax.grad``, ``jax.jacrev``, ...,
complex128) on the same functions, not by nx_rune; each is also checked independently, against
central finite differences in float64 (real functions: ``df/dx - i df/dy``) or the analytic
derivative (holomorphic functions).
"""
import numpy as np
import pytest

import nx_rune as nx

Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1.5j])
W = np.array([0.3 - 1j, 2 + 0.5j, -1 + 1j])
MODES = [False, True]

# real-valued functions of complex z, with jax.grad(f)(Z)
REAL = {
    "sum abs(z)**2": (lambda z: nx.sum(nx.abs(z) ** 2),
                      [2 - 4j, -1 - 0.6j, 4 + 3j]),
    "sum abs(z)": (lambda z: nx.sum(nx.abs(z)),
                   [0.4472135954999579 - 0.8944271909999159j,
                    -0.8574929257125443 - 0.5144957554275266j, 0.8 + 0.6j]),
    "sum angle(z)": (lambda z: nx.sum(nx.angle(z)),
                     [-0.4 - 0.2j, -0.8823529411764707 + 1.4705882352941178j, 0.24 - 0.32j]),
    "sum imag(z**3)": (lambda z: nx.sum(nx.imag(z ** 3)),
                       [12 + 9j, -0.8999999999999999 - 0.48j, -18 - 5.25j]),
    "sum log(abs(z))": (lambda z: nx.sum(nx.log(nx.abs(z))),
                        [0.2 - 0.4j, -1.4705882352941182 - 0.8823529411764708j, 0.32 + 0.24j]),
    "sum abs(exp(z))": (lambda z: nx.sum(nx.abs(nx.exp(z))),
                        [2.7182818284590455, 0.6065306597126334, 7.389056098930651]),
    "sum real(z)*imag(z)": (lambda z: nx.sum(nx.real(z) * nx.imag(z)),
                            [2 - 1j, 0.3 + 0.5j, -1.5 - 2j]),
    "sum abs(sin(z))**2": (lambda z: nx.sum(nx.abs(nx.sin(z)) ** 2),
                           [0.9092974268256788 - 27.289917197127753j,
                            -0.8414709848078965 - 0.6366535821482412j,
                            -0.7568024953079286 + 10.017874927409903j]),
    "sum real(conj(z)*z*(1+2j))": (lambda z: nx.sum(nx.real(nx.conj(z) * z * (1 + 2j))),
                                   [2 - 4j, -1 - 0.6j, 4 + 3j]),
}

# holomorphic functions, with jax.grad(f, holomorphic=True)(Z) and f'(z) analytically
HOLO = {
    "sum z**3": (lambda z: nx.sum(z ** 3), lambda z: 3 * z ** 2,
                 [-9 + 12j, 0.48 - 0.9j, 5.25 - 18j]),
    "sum sin(z)*z": (lambda z: nx.sum(nx.sin(z) * z), lambda z: np.cos(z) * z + np.sin(z),
                     [11.302297118539434 + 2.9731492563091373j,
                      -1.0036458475064287 + 0.46945555180161264j,
                      3.085366864953322 + 6.2268112978533825j]),
    "sum exp(z)/z": (lambda z: nx.sum(nx.exp(z) / z), lambda z: np.exp(z) * (z - 1) / z ** 2,
                     [0.23122899847897627 + 1.0624415871431774j,
                      -1.0307973783328959 - 2.526687819111696j,
                      0.7806570630722276 - 1.983214721766921j]),
    "sum log(z)": (lambda z: nx.sum(nx.log(z)), lambda z: 1 / z,
                   [0.2 - 0.4j, -1.4705882352941178 - 0.8823529411764707j, 0.32 + 0.24j]),
    "sum z*(1-2j)+z*z": (lambda z: nx.sum(z * (1 - 2j) + z * z), lambda z: (1 - 2j) + 2 * z,
                         [3 + 2j, -1.4j, 5 - 5j]),
}


def _fd_grad(f, z, eps=1e-6):
    """JAX's gradient of real f at complex z by central differences: df/dx - i df/dy."""
    z = np.asarray(z, np.complex128)
    out = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e[k] = 1
        dx = (float(f(nx.asarray(z + eps * e))) - float(f(nx.asarray(z - eps * e)))) / (2 * eps)
        dy = (float(f(nx.asarray(z + 1j * eps * e)))
              - float(f(nx.asarray(z - 1j * eps * e)))) / (2 * eps)
        out[k] = dx - 1j * dy
    return out


@pytest.mark.parametrize("name", list(REAL))
def test_grad_of_real_function_of_complex_input(name):
    f, want = REAL[name]
    g = nx.grad(f)(nx.asarray(Z))
    assert g.dtype == np.complex128 and g.shape == Z.shape
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(g.numpy(), _fd_grad(f, Z), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["sum abs(z)**2", "sum angle(z)", "sum imag(z**3)"])
def test_grad_complex64(name):
    f, want = REAL[name]
    g = nx.grad(f)(nx.asarray(Z.astype(np.complex64)))
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g.numpy(), want, rtol=2e-6, atol=1e-6)


def test_grad_of_real_part_of_product_both_arguments():
    gz, gw = nx.grad(lambda z, w: nx.sum(nx.real(z * nx.conj(w))), argnums=(0, 1))(
        nx.asarray(Z), nx.asarray(W))
    # jax.grad(..., argnums=(0, 1)): conj(w) and conj(z)
    np.testing.assert_allclose(gz.numpy(), [0.3 + 1j, 2 - 0.5j, -1 - 1j], rtol=1e-15)
    np.testing.assert_allclose(gw.numpy(), [1 - 2j, -0.5 - 0.3j, 2 + 1.5j], rtol=1e-15)


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_grad_of_python_complex(x64):
    """A Python complex is the default complex dtype (complex64; complex128 in x64 mode), as in
    JAX; jax.grad(lambda z: abs(z)**2)(3+4j) is 6-8j in both modes."""
    with nx.enable_x64(x64):
        g = nx.grad(lambda z: nx.abs(z) ** 2)(3 + 4j)
        v, g2 = nx.value_and_grad(lambda z: nx.real(z * z))(1 + 1j)
    assert g.dtype == g2.dtype == (np.complex128 if x64 else np.complex64)
    tol = 1e-15 if x64 else 1e-7
    np.testing.assert_allclose(complex(g), 6 - 8j, rtol=tol)
    assert float(v) == 0.0 and complex(g2) == 2 + 2j


def test_gradient_descent_uses_the_conjugate():
    """With JAX's convention the steepest-descent step of a real loss is z - lr * conj(g)."""
    c = np.array([1.5 - 0.5j, -2 + 1j])
    loss = lambda z: nx.sum(nx.abs(z - nx.asarray(c)) ** 2)  # noqa: E731
    z = nx.asarray(np.zeros(2, np.complex128))
    for _ in range(60):
        z = z - 0.1 * nx.conj(nx.grad(loss)(z))
    np.testing.assert_allclose(z.numpy(), c, rtol=1e-5)


@pytest.mark.parametrize("name", list(HOLO))
def test_holomorphic_grad(name):
    f, df, want = HOLO[name]
    g = nx.grad(f, holomorphic=True)(nx.asarray(Z))
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(g.numpy(), df(Z), rtol=1e-14)


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_holomorphic_value_and_grad(x64):
    with nx.enable_x64(x64):
        v, g = nx.value_and_grad(lambda z: nx.sum(z ** 3), holomorphic=True)(nx.asarray(Z))
        vs, gs = nx.value_and_grad(lambda z: z * z * (1 + 1j), holomorphic=True)(2 - 1j)
    # jax.value_and_grad(lambda z: jnp.sum(z ** 3), holomorphic=True)(Z)
    np.testing.assert_allclose(complex(v), -16.490000000000002 - 16.427j, rtol=1e-14)
    np.testing.assert_allclose(g.numpy(), [-9 + 12j, 0.48 - 0.9j, 5.25 - 18j], rtol=1e-14)
    assert gs.dtype == (np.complex128 if x64 else np.complex64)
    np.testing.assert_allclose(complex(vs), (2 - 1j) ** 2 * (1 + 1j), rtol=1e-6)
    np.testing.assert_allclose(complex(gs), 2 * (2 - 1j) * (1 + 1j), rtol=1e-6)


def test_holomorphic_jacobians():
    z = nx.asarray(Z)
    want = np.diag(2 * Z)           # jax.jacfwd/jacrev(lambda z: z * z, holomorphic=True)
    for jac in (nx.jacfwd, nx.jacrev):
        j = jac(lambda v: v * v, holomorphic=True)(z)
        assert j.dtype == np.complex128
        np.testing.assert_allclose(j.numpy(), want, rtol=1e-15)
    # jax.hessian(lambda z: jnp.sum(z ** 3 * z[1]), holomorphic=True)(Z)
    h = nx.hessian(lambda v: nx.sum(v ** 3 * v[1]), holomorphic=True)(z)
    np.testing.assert_allclose(h.numpy(), [[-6.6 - 4.2j, -9 + 12j, 0],
                                           [-9 + 12j, 1.92 - 3.6j, 5.25 - 18j],
                                           [0, 5.25 - 18j, -3.3 + 8.1j]], rtol=1e-14, atol=1e-15)


def test_jacrev_of_real_function_of_complex_input():
    # jax.jacrev(lambda z: jnp.abs(z) ** 2 * jnp.real(z[0]))(Z)
    j = nx.jacrev(lambda v: nx.abs(v) ** 2 * nx.real(v[0]))(nx.asarray(Z))
    np.testing.assert_allclose(j.numpy(), [[7 - 4j, 0, 0], [0.34, -1 - 0.6j, 0],
                                           [6.25, 0, 4 + 3j]], rtol=1e-14, atol=1e-15)


def test_jacfwd_of_complex_function_of_real_input():
    # jax.jacfwd(lambda x: jnp.exp(1j * x) * x[0])([0.5, -1.0])
    j = nx.jacfwd(lambda x: nx.exp(1j * x) * x[0])(nx.asarray(np.array([0.5, -1.0])))
    np.testing.assert_allclose(j.numpy(), [
        [0.6378697925882713 + 0.9182168195493894j, 0],
        [0.5403023058681398 - 0.8414709848078965j, 0.42073549240394825 + 0.2701511529340699j]],
        rtol=1e-14, atol=1e-15)


# -- abs, sign, angle on complex inputs --------------------------------------------------------

def test_abs_sign_angle_forward_mode():
    z = nx.asarray(Z)
    v = np.array([0.3 + 0.1j, -1 + 2j, 0.5 - 0.5j])
    _, t_abs = nx.jvp(nx.abs, (z,), (nx.asarray(v),))
    _, t_angle = nx.jvp(nx.angle, (z,), (nx.asarray(v),))
    _, t_sign = nx.jvp(nx.sign, (z,), (nx.asarray(v),))
    np.testing.assert_allclose(t_abs.numpy(), np.real(np.conj(Z) * v) / np.abs(Z), rtol=1e-14)
    np.testing.assert_allclose(t_angle.numpy(), np.imag(np.conj(Z) * v) / np.abs(Z) ** 2,
                               rtol=1e-14)
    assert t_sign.dtype == np.complex128 and not np.any(t_sign.numpy())  # zero, as JAX's
    np.testing.assert_allclose(nx.sign(z).numpy(), Z / np.abs(Z), rtol=1e-15)


def test_abs_and_angle_second_order():
    z = nx.asarray(Z)
    for f in (nx.abs, nx.angle, lambda v: nx.abs(v) ** 3, lambda v: nx.angle(v * v + 1)):
        nx.check_grads(f, (z,), order=2)
    # d/dz of grad: hessian of abs(z)**2 as a function of (x, y) is 2 I
    def g(x, y):
        z = nx.astype(x, np.complex128) + 1j * nx.astype(y, np.complex128)
        return nx.grad(lambda v: nx.sum(nx.abs(v) ** 2))(z)

    gx = nx.jacfwd(lambda x: nx.real(g(x, nx.asarray(Z.imag))))(nx.asarray(Z.real))
    np.testing.assert_allclose(gx.numpy(), 2 * np.eye(3), atol=1e-15)


def test_abs_at_zero_has_zero_gradient():
    g = nx.grad(lambda v: nx.sum(nx.abs(v)))(nx.asarray(np.array([0j, 3 + 4j])))
    np.testing.assert_allclose(g.numpy(), [0, 0.6 - 0.8j])   # jax.grad gives 0 at 0 too


# -- check_grads on complex functions ----------------------------------------------------------

def test_check_grads_complex_functions():
    z = nx.asarray(Z)
    for f in (lambda v: v * v, nx.conj, nx.real, nx.imag, lambda v: nx.exp(v) * nx.conj(v),
              lambda v: nx.sum(nx.abs(v) ** 2)):
        nx.check_grads(f, (z,), order=2)
    nx.check_grads(lambda x: nx.exp(1j * x), (nx.asarray(np.array([0.5, -1.0])),), order=2)


def test_check_grads_catches_a_conjugated_rule():
    """A VJP that conjugates (the other convention) must fail the reverse-mode check."""
    @nx.custom_vjp
    def square(z):
        return z * z

    square.defvjp(lambda z: (z * z, z), lambda z, g: (nx.conj(2 * z) * g,))
    with pytest.raises(AssertionError, match="reverse-mode"):
        nx.check_grads(square, (nx.asarray(Z),), order=1, modes=("rev",))

    @nx.custom_vjp
    def square_ok(z):
        return z * z

    square_ok.defvjp(lambda z: (z * z, z), lambda z, g: (2 * z * g,))
    nx.check_grads(square_ok, (nx.asarray(Z),), order=1, modes=("rev",))


# -- errors, as JAX's, each naming the fix ------------------------------------------------------

@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_errors(x64):
    z, x = nx.asarray(Z), nx.asarray(np.array([1.0, 2.0]))
    cases = [
        (lambda: nx.grad(lambda v: nx.sum(v * v))(z),
         r"grad requires real-valued outputs .* complex128\. For holomorphic differentiation, "
         r"pass holomorphic=True\. .* use nx\.vjp"),
        (lambda: nx.grad(lambda v: v * 1j)(2.0),
         r"grad requires real-valued outputs .*pass holomorphic=True"),
        (lambda: nx.grad(lambda v: nx.sum(v), holomorphic=True)(x),
         r"grad with holomorphic=True requires inputs with complex dtype, but argument 0 has "
         r"a leaf of dtype float64"),
        (lambda: nx.grad(lambda v, w: nx.sum(v * w), argnums=(0, 1), holomorphic=True)(z, x),
         r"holomorphic=True requires inputs with complex dtype, but argument 1"),
        (lambda: nx.grad(lambda v: nx.sum(nx.abs(v)), holomorphic=True)(z),
         r"grad with holomorphic=True requires outputs with complex dtype, but the function "
         r"returned dtype float64"),
        (lambda: nx.value_and_grad(lambda v: nx.sum(v * v))(z), r"pass holomorphic=True"),
        (lambda: nx.jacfwd(nx.abs)(z),
         r"jacfwd requires real-valued inputs .* complex128\. For holomorphic "
         r"differentiation, pass holomorphic=True.* nx\.jvp"),
        (lambda: nx.jacfwd(lambda v: v * 1j, holomorphic=True)(x),
         r"jacfwd with holomorphic=True requires inputs with complex dtype"),
        (lambda: nx.jacfwd(nx.abs, holomorphic=True)(z),
         r"jacfwd with holomorphic=True requires outputs with complex dtype"),
        (lambda: nx.jacrev(lambda v: v * v)(z),
         r"jacrev requires real-valued outputs .* complex128\. For holomorphic "
         r"differentiation, pass holomorphic=True.* nx\.vjp"),
        (lambda: nx.jacrev(lambda v: v * 1j, holomorphic=True)(x),
         r"jacrev with holomorphic=True requires inputs with complex dtype"),
        (lambda: nx.jacrev(nx.abs, holomorphic=True)(z),
         r"jacrev with holomorphic=True requires outputs with complex dtype"),
        (lambda: nx.hessian(lambda v: nx.sum(nx.abs(v)))(z), r"jacfwd requires real-valued"),
        (lambda: nx.grad(lambda v: nx.astype(nx.sum(v), nx.int32))(x),
         r"grad requires a real float output, .* int32; for integer outputs use nx\.vjp"),
        (lambda: nx.grad(lambda v: v, holomorphic=1), r"^grad: holomorphic must be True or False"),
        (lambda: nx.value_and_grad(lambda v: v, holomorphic=0.0),
         r"value_and_grad: holomorphic must be True or False"),
        (lambda: nx.jacfwd(nx.sin, holomorphic="yes"),
         r"jacfwd: holomorphic must be True or False"),
        (lambda: nx.jacrev(nx.sin, holomorphic=None),
         r"jacrev: holomorphic must be True or False"),
    ]
    with nx.enable_x64(x64):
        for fn, pattern in cases:
            with pytest.raises(TypeError, match=pattern):
                fn()


def test_vjp_and_jvp_keep_complex_outputs():
    """The fixes the errors name: vjp of a non-holomorphic complex function works."""
    z = nx.asarray(Z)
    out, vjp_fn = nx.vjp(lambda v: nx.conj(v) * v * (1 + 1j), z)
    (ct,) = vjp_fn(nx.asarray(np.ones(3, np.complex128)))
    # the transpose of t -> (1+1j) (conj(z) t + z conj(t)) at cotangent 1:
    # (1+1j) conj(z) + conj((1+1j) z)
    np.testing.assert_allclose(ct.numpy(), (1 + 1j) * np.conj(Z) + np.conj((1 + 1j) * Z),
                               rtol=1e-15)


def test_real_and_imag_of_a_real_operand_have_real_cotangents():
    import warnings

    from nx_rune import primitives as P
    from nx_rune.primitives import bind
    x = nx.asarray(np.array([0.5, -1.2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # no ComplexWarning from a complex cotangent cast
        # the primitives themselves (the front end's real/imag of a real array skip them)
        g_re = nx.grad(lambda x: nx.sum(bind(P.real_p, x) * x))(x)
        g_im = nx.grad(lambda x: nx.sum(bind(P.imag_p, x) + x))(x)
    np.testing.assert_allclose(np.asarray(g_re), 2 * np.array([0.5, -1.2]))
    np.testing.assert_allclose(np.asarray(g_im), np.ones(2))
    assert g_re.dtype == nx.float64 and g_im.dtype == nx.float64
