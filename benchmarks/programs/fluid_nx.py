"""A 2-D fluid on a periodic grid: advection, diffusion and a pressure projection through a
conjugate-gradient solve, differentiated end to end with nx_rune (fluid_autograd.py's program,
ported)."""
import nx_rune as nx


def laplacian(f):
    return (nx.roll(f, 1, axis=0) + nx.roll(f, -1, axis=0) + nx.roll(f, 1, axis=1)
            + nx.roll(f, -1, axis=1) - 4.0 * f)


def ddx(f):
    return 0.5 * (nx.roll(f, -1, axis=0) - nx.roll(f, 1, axis=0))


def ddy(f):
    return 0.5 * (nx.roll(f, -1, axis=1) - nx.roll(f, 1, axis=1))


def advect(f, u, v, dt):
    return f - dt * (u * ddx(f) + v * ddy(f))


def cg(apply_a, b, iters):
    """``iters`` conjugate-gradient iterations for ``apply_a(x) = b`` from x = 0."""
    x = nx.zeros(b.shape, dtype=b.dtype)
    r = p = b
    rr = nx.sum(r * r)
    for _ in range(iters):
        ap = apply_a(p)
        alpha = rr / nx.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = nx.sum(r * r)
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
    return nx.sum((simulate(u, v, rho) - target) ** 2)


loss_and_grad = nx.value_and_grad(loss)
