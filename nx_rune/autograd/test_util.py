"""autograd's ``autograd.test_util``: derivative checks against finite differences.

``check_grads(f, argnum=0, modes=["fwd", "rev"], order=2)(*args)`` compares forward mode
(``make_jvp``) and reverse mode (``make_vjp``) with central differences (step ``EPS``) along
random directions drawn from NumPy's global random state, to ``order`` (derivatives of the
derivative maps, recursively), as autograd's; ``combo_check`` runs it over every combination of
the given argument and keyword values.  Values are float64 (x64 mode), so the default
tolerances (``TOL``, ``RTOL``: 1e-6) are autograd's.
"""
from __future__ import annotations

from itertools import product

from nx_rune.autograd._wrap import in_x64
from nx_rune.autograd.core import make_jvp, make_vjp, vspace
from nx_rune.autograd.wrap_util import get_name, unary_to_nary

__all__ = ["check_grads", "combo_check", "check_vjp", "check_jvp", "check_equivalent",
           "scalar_close", "make_numerical_jvp", "TOL", "RTOL", "EPS"]

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


def scalar_close(a, b):
    """Whether scalars ``a`` and ``b`` agree to ``TOL`` absolutely or ``RTOL`` relatively."""
    a, b = complex(a), complex(b)
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def make_numerical_jvp(f, x):
    """``v -> (f(x + v eps/2) - f(x - v eps/2)) / eps`` (central differences)."""
    y = f(x)
    x_vs, y_vs = vspace(x), vspace(y)

    @in_x64
    def jvp(v):
        f_x_plus = f(x_vs.add(x, x_vs.scalar_mul(v, EPS / 2)))
        f_x_minus = f(x_vs.add(x, x_vs.scalar_mul(v, -EPS / 2)))
        neg_f_x_minus = y_vs.scalar_mul(f_x_minus, -1.0)
        return y_vs.scalar_mul(y_vs.add(f_x_plus, neg_f_x_minus), 1.0 / EPS)
    return jvp


@in_x64
def check_vjp(f, x):
    """Reverse mode of ``f`` at ``x`` against finite differences, along random directions."""
    vjp, y = make_vjp(f, x)
    jvp = make_numerical_jvp(f, x)
    x_vs, y_vs = vspace(x), vspace(y)
    x_v, y_v = x_vs.randn(), y_vs.randn()
    vjp_y = x_vs.covector(vjp(y_vs.covector(y_v)))
    assert vspace(vjp_y) == x_vs, f"VSpace mismatch:\nvjp: {vspace(vjp_y)}\nx:   {x_vs}"
    vjv_exact = x_vs.inner_prod(x_v, vjp_y)
    vjv_numeric = y_vs.inner_prod(y_v, jvp(x_v))
    assert scalar_close(vjv_numeric, vjv_exact), (
        f"Derivative (VJP) check of {get_name(f)} failed with arg {x}:\n"
        f"analytic: {vjv_exact}\nnumeric:  {vjv_numeric}")


@in_x64
def check_jvp(f, x):
    """Forward mode of ``f`` at ``x`` against finite differences, along a random direction."""
    jvp = make_jvp(f, x)
    jvp_numeric = make_numerical_jvp(f, x)
    x_v = vspace(x).randn()
    check_equivalent(jvp(x_v)[1], jvp_numeric(x_v))


@in_x64
def check_equivalent(x, y):
    """Whether ``x`` and ``y`` are in the same space and agree along a random direction."""
    x_vs, y_vs = vspace(x), vspace(y)
    assert x_vs == y_vs, f"VSpace mismatch:\nx: {x_vs}\ny: {y_vs}"
    v = x_vs.randn()
    assert scalar_close(x_vs.inner_prod(x, v), x_vs.inner_prod(y, v)), \
        f"Value mismatch:\nx: {x}\ny: {y}"


@unary_to_nary
@in_x64
def check_grads(f, x, modes=("fwd", "rev"), order=2):
    """Derivative checks of ``f`` at ``x`` in ``modes`` ("fwd", "rev") up to ``order``."""
    if not all(m in ("fwd", "rev") for m in modes):
        raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got {modes!r}")
    if "fwd" in modes:
        check_jvp(f, x)
        if order > 1:
            def grad_f(x, v):
                return make_jvp(f, x)(v)[1]
            grad_f.__name__ = f"jvp_{get_name(f)}"
            v = vspace(x).randn()
            check_grads(grad_f, (0, 1), modes, order=order - 1)(x, v)
    if "rev" in modes:
        check_vjp(f, x)
        if order > 1:
            def grad_f(x, v):
                return make_vjp(f, x)[0](v)
            grad_f.__name__ = f"vjp_{get_name(f)}"
            v = vspace(f(x)).randn()
            check_grads(grad_f, (0, 1), modes, order=order - 1)(x, v)


def combo_check(fun, *args, **kwargs):
    """``combo_check(fun, argnum, modes=..., order=...)(arg_values..., kw=values...)``:
    ``check_grads`` for every combination of the listed argument and keyword values."""
    def _check_grads(f):
        return check_grads(f, *args, **kwargs)

    def _combo_check(*args, **kwargs):
        kwarg_key_vals = [[(k, x) for x in xs] for k, xs in kwargs.items()]
        for _args in product(*args):
            for _kwargs in product(*kwarg_key_vals):
                _check_grads(fun)(*_args, **dict(_kwargs))
    return _combo_check
