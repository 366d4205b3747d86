"""A 2-D fluid on a periodic grid: advection, diffusion and a pressure projection through a
conjugate-gradient solve, differentiated end to end with HIPS autograd."""
import autograd.numpy as np
from autograd import value_and_grad


def laplacian(f):
    return (np.roll(f, 1, axis=0) + np.roll(f, -1, axis=0) + np.roll(f, 1, axis=1)
            + np.roll(f, -1, axis=1) - 4.0 * f)


def ddx(f):
    return 0.5 * (np.roll(f, -1, axis=0) - np.roll(f, 1, axis=0))


def ddy(f):
    return 0.5 * (np.roll(f, -1, axis=1) - np.roll(f, 1, axis=1))


def advect(f, u, v, dt):
    return f - dt * (u * ddx(f) + v * ddy(f))


def cg(apply_a, b, iters):
    """``iters`` conjugate-gradient iterations for ``apply_a(x) = b`` from x = 0."""
    x = np.zeros(b.shape)
    r = p = b
    rr = np.sum(r * r)
    for _ in range(iters):
        ap = apply_a(p)
        alpha = rr / np.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = np.sum(r * r)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def project(u, v, iters):
    """The velocity made (nearly) divergence-free: solve -lap(p) = -div(u, v), subtract grad p."""
    div = ddx(u) + ddy(v)
    p = cg(lambda q: -laplacian(q), -div, iters)
    return u - ddx(p), v - ddy(p)


def simulate(u, v, rho, steps=3, dt=0.2, nu=0.05, iters=8):
    """The density ``rho`` carried ``steps`` time steps by the velocity (u, v)."""
    for _ in range(steps):
        u, v = (advect(u, u, v, dt) + nu * dt * laplacian(u),
                advect(v, u, v, dt) + nu * dt * laplacian(v))
        u, v = project(u, v, iters)
        rho = advect(rho, u, v, dt)
    return rho


def loss(velocity, rho, target):
    """Squared distance of the final density from ``target``; ``velocity`` = (u, v)."""
    u, v = velocity
    return np.sum((simulate(u, v, rho) - target) ** 2)


loss_and_grad = value_and_grad(loss)
