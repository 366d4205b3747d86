"""Rules of the statistics family's primitives: the nan-ignoring reductions (nanmax, nanmin)
and the fused ``clip``.

May import: the front end, primitives, tensor, this package's ``_common``/``_batch_common`` and
``reductions`` (the weighted-reduction maker and the max share).
"""
import numpy as np

from nx_rune import frontend as ops
from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import defbroadcast, defreduction
from nx_rune.autodiff.rules._common import _add, _c, _known, _mul, _register, _share, _tmask, _val
from nx_rune.autodiff.rules.reductions import _def_weighted_reduction, _max_share
from nx_rune.primitives import bind

# -- statistics family --------------------------------------------------------------------------
# nanmax/nanmin: the share of max (ties split; a nan entry never equals the result, so it gets 0,
# and an all-nan group gives zeros everywhere)
_def_weighted_reduction(P.reduce_nanmax_p, _max_share)
_def_weighted_reduction(P.reduce_nanmin_p, _max_share)
defreduction(P.reduce_nanmax_p)
defreduction(P.reduce_nanmin_p)


def _clip_shares(x, lo, hi, lower, upper):
    """Shares of clip's derivative going to (x, lo, hi): those of max(x, lo) then min(., hi),
    ties split equally (as ``max``); a bound that was not given takes nothing.  Returns
    ndarrays, or traced tensors in x's dtype when the values are traced."""
    if not _known(x, lo, hi):
        return _clip_shares_traced(x, lo, hi, lower, upper)
    xv = _val(x)
    one = np.ones(xv.shape)
    if lower:
        lov = _val(lo)
        v = (xv > lov) + 0.5 * (xv == lov)
        y1 = np.maximum(xv, lov)
    else:
        v, y1 = one, xv
    if upper:
        hiv = _val(hi)
        u = (y1 < hiv) + 0.5 * (y1 == hiv)
    else:
        u = one
    return u * v, u * (1 - v), 1 - u


def _clip_shares_traced(x, lo, hi, lower, upper):
    one = _c(1, x)
    half = _c(0.5, x)
    if lower:
        v = _add(_tmask(ops.greater(x, lo), x), _mul(half, _tmask(ops.equal(x, lo), x)))
        y1 = ops.maximum(x, lo)
    else:
        v, y1 = one, x
    if upper:
        u = _add(_tmask(ops.less(y1, hi), x), _mul(half, _tmask(ops.equal(y1, hi), x)))
    else:
        u = one
    neg = lambda a: bind(P.neg_p, a)  # noqa: E731
    return _mul(u, v), _mul(u, _add(one, neg(v))), _add(one, neg(u))


def _vjp_clip(g, ans, args, params, need):
    shares = _clip_shares(*args, params["lower"], params["upper"])
    return tuple(_mul(g, _share(w, g)) if n else None for w, n in zip(shares, need))


def _jvp_clip(tangents, ans, args, params):
    shares = _clip_shares(*args, params["lower"], params["upper"])
    out = None
    for t, w in zip(tangents, shares):
        if t is not None:
            term = _mul(t, _share(w, t))
            out = term if out is None else _add(out, term)
    return out


_register(P.clip_p, _vjp_clip, _jvp_clip)
defbroadcast(P.clip_p)
