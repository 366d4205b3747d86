"""Rules of sort, argsort and searchsorted.

sort(x) = gather(x, perm) with perm the stable sorting permutation, a constant computed only
when a derivative is asked; argsort and searchsorted give indices (no derivative).

May import: the front end, primitives, tensor and this package's ``_common``/``_batch_common``.
"""
import numpy as np

from nx_rune import primitives as P
from nx_rune.autodiff.rules._batch_common import BATCH_RULES, _loop, defaxis
from nx_rune.autodiff.rules._common import (
    _cv,
    _eval,
    _gather,
    _known,
    _register,
    _scatter,
    _zeros,
    defnondiff,
)
from nx_rune.primitives import bind

# -- sorting and searching -----------------------------------------------------------------------
# sort(x) = gather(x, perm) with perm the stable sorting permutation (NumPy's order; ties keep
# the order NumPy's stable sort gives them), a constant computed only when a derivative is
# asked: the JVP gathers the tangent, the VJP scatter-adds the cotangent back (the transpose).


def _sort_perm(x, params):
    n = x.shape[params["axis"]]
    dt = np.dtype(np.int32 if n < 2**31 else np.int64)
    if not _known(x):
        return bind(P.argsort_p, x, axis=params["axis"], descending=params["descending"],
                    stable=True, dtype=dt)
    return _eval(P.argsort_p, _cv(x), axis=params["axis"], descending=params["descending"],
                 stable=True, dtype=dt)


def _vjp_sort(g, ans, args, params, need):
    x = args[0]
    return (_scatter(_zeros(x), _sort_perm(x, params), g, params["axis"], "add"),)


def _jvp_sort(tangents, ans, args, params):
    return _gather(tangents[0], _sort_perm(args[0], params), params["axis"])


_register(P.sort_p, _vjp_sort, _jvp_sort)
defaxis(P.sort_p)


defnondiff(P.argsort_p)
defaxis(P.argsort_p)


defnondiff(P.searchsorted_p)


def _batch_searchsorted(size, args, dims, **params):
    (x1, x2), (d1, d2) = args, dims
    if d1 is None:        # one sorted sequence: the queries are independent
        return bind(P.searchsorted_p, x1, x2, **params), d2
    # one sorted sequence per example: searched example by example
    return _loop(P.searchsorted_p, size, args, dims, params)


BATCH_RULES[P.searchsorted_p] = _batch_searchsorted
