"""Helpers shared by the distributions: argument promotion, masks and safe substitutes.

Conventions (SciPy's values): a parameter outside its domain (scale <= 0, a shape <= 0, a
probability outside [0, 1], ...) gives nan; a point outside the support gives logpdf -inf and
pdf 0 (logpmf -inf for a non-integer or out-of-range k).  Branches not taken are computed on
safe substitute values ("double where"), so derivatives stay finite (0 outside the support).
"""
from __future__ import annotations

import math

from nx_rune import frontend as F
from nx_rune.frontend._core import broadcast_shapes
from nx_rune.scipy._args import real_operands, real_promoted

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)

__all__ = ["args", "promoted", "nan_where", "outside", "safe", "is_integer", "log1mexp",
           "LOG_SQRT_2PI", "LOG_PI"]


def args(name, **kw):
    """The operands promoted to one real float dtype and broadcast (see ``real_operands``)."""
    return real_operands(name, **kw)


def promoted(name, **kw):
    """The operands promoted to one real float dtype as ``args``, but not broadcast: a
    function whose parameters enter a costly term alone (truncnorm's normalising mass)
    computes it at the parameters' shape, and the elementwise operations broadcast the rest."""
    out = real_promoted(name, **kw)
    # the shapes must still broadcast together (the error names them, as ``args``'s)
    broadcast_shapes(*(v.shape for v in out))
    return out


def nan_where(bad, x):
    """x with nan where ``bad``."""
    return F.where(bad, float("nan"), x)


def outside(mask, x, value, point):
    """x with ``value`` where ``mask`` (outside the support), and nan where the evaluation
    ``point`` is nan (comparisons with nan put it outside every support)."""
    return F.where(F.isnan(point), float("nan"), F.where(mask, value, x))


def safe(ok, x, value):
    """x where ``ok``, else the Python number ``value`` (a point where the formula is finite)."""
    return F.where(ok, x, value)


def is_integer(k):
    """True where k is a finite integer value."""
    return F.equal(F.mod(k, 1.0), 0.0)


def log1mexp(u):
    """log(1 - exp(u)) for u <= 0 without cancellation: log(-expm1(u)) for u > -log 2,
    log1p(-exp(u)) below (Maechler's choice); each branch sees a safe value where it is not
    taken, so derivatives stay finite."""
    near = F.greater(u, -math.log(2.0))
    return F.where(near, F.log(F.negative(F.expm1(safe(near, u, -1.0)))),
                   F.log1p(F.negative(F.exp(safe(near, -1.0, u)))))
